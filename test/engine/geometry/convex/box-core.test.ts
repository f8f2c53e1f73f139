/**
 * The box core (box-core.ts): its support function h(d) = Σ h_i |d_i| and support sets
 * against the box's 8 corners (core-checks.ts), the region codes Σ c_i 3^i of points
 * around it, and its faces' areas 4 h_k h_l.
 */
import { describe, expect, it } from "vitest";
import { BoxCore } from "../../../../src/engine/geometry/convex/box-core";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { checkSupport, type V3 } from "./core-checks";

const h: V3 = [0.3, 0.2, 0.1];
const core = new BoxCore().place(new WorldPose(), h);

describe("box core", () => {
  it("support function and sets against the corners: h(d) = Σ h_i |d_i|", () => {
    const corners: V3[] = [];
    for (let v = 0; v < 8; v++)
      corners.push([v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]]);
    const inside = (x: V3) => x.every((c, i) => Math.abs(c) <= h[i] + 1e-15);
    checkSupport(core, corners, inside, 1e-15);
    const d = new Float64Array([0.3, -0.5, 0.8]);
    const s = new Float64Array(3);
    core.localSupport(d, s);
    expect(d[0] * s[0] + d[1] * s[1] + d[2] * s[2]).toBeCloseTo(
      0.3 * 0.3 + 0.5 * 0.2 + 0.8 * 0.1,
      15,
    );
  });

  it("region codes Σ c_i 3^i (c_i = 0 below, 1 within, 2 above the slab i) of surface points", () => {
    // q[3]: the pair's size, for the 1e-7 tolerance.
    const q = new Float64Array(4);
    const cases: [V3, number][] = [
      [[0.3, 0, 0], 2 + 3 + 9], // +x face
      [[0, -0.2, 0.05], 1 + 0 + 9], // −y face
      [[0.3, 0.2, 0], 2 + 6 + 9], // +x+y edge
      [[-0.3, -0.2, 0.1], 0 + 0 + 18], // corner (−, −, +)
    ];
    for (const [x, code] of cases) {
      q.set([...x, 1]);
      expect(core.pointCode(q)).toBe(code);
    }
  });

  it("face areas 4 h_k h_l", () => {
    const out = new Float64Array(1);
    for (const [face, area] of [
      [0, 4 * 0.2 * 0.1],
      [3, 4 * 0.1 * 0.3],
      [5, 4 * 0.3 * 0.2],
    ]) {
      core.polygonArea(face, out, 0);
      expect(out[0]).toBeCloseTo(area, 15);
    }
  });
});
