/**
 * The segment core (segment-core.ts), a capsule's axis: support function h(d) = L |d_z| and
 * support sets against its ends (core-checks.ts), the capsule's radius as its sweep, and
 * the codes of points on it (0/1 the −z/+z end, 2 between).
 */
import { describe, expect, it } from "vitest";
import { SegmentCore } from "../../../../src/engine/geometry/convex/segment-core";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { checkSupport, type V3 } from "./core-checks";

const L = 0.35;
const core = new SegmentCore().place(new WorldPose(), {
  type: "capsule",
  radius: 0.1,
  halfLength: L,
});

describe("segment core", () => {
  it("support function and sets against its ends; the capsule's radius as its sweep", () => {
    const inside = (x: V3) =>
      Math.abs(x[0]) <= 1e-15 && Math.abs(x[1]) <= 1e-15 && Math.abs(x[2]) <= L;
    checkSupport(
      core,
      [
        [0, 0, -L],
        [0, 0, L],
      ],
      inside,
      1e-15,
    );
    expect(core.sweep[0]).toBe(0.1);
  });

  it("point codes: the ends and the side", () => {
    const q = new Float64Array(4);
    for (const [z, code] of [
      [-L, 0],
      [L, 1],
      [0.1, 2],
    ]) {
      q.set([0, 0, z, 1]);
      expect(core.pointCode(q)).toBe(code);
    }
  });
});
