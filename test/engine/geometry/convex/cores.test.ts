/**
 * The shared core instances (src/engine/geometry/convex/cores.ts): one of each kind per
 * side of a pair, distinct objects, so placing a's core leaves b's where it was.
 */
import { describe, expect, it } from "vitest";
import { BoxCore } from "../../../../src/engine/geometry/convex/box-core";
import {
  BOX,
  CYLINDER,
  HULL,
  POINT,
  SEGMENT,
  TRIANGLE,
} from "../../../../src/engine/geometry/convex/cores";
import { CylinderCore } from "../../../../src/engine/geometry/convex/cylinder-core";
import { HullCore } from "../../../../src/engine/geometry/convex/hull-core";
import { PointCore } from "../../../../src/engine/geometry/convex/point-core";
import { SegmentCore } from "../../../../src/engine/geometry/convex/segment-core";
import { TriangleCore } from "../../../../src/engine/geometry/convex/triangle-core";
import { WorldPose } from "../../../../src/engine/geometry/pose";

describe("core instances", () => {
  it("two distinct cores of each kind, one per side; a sphere's point and a mesh's triangle", () => {
    for (const [pair, kind] of [
      [BOX, BoxCore],
      [CYLINDER, CylinderCore],
      [HULL, HullCore],
      [SEGMENT, SegmentCore],
    ] as const) {
      expect(pair.length).toBe(2);
      expect(pair[0]).toBeInstanceOf(kind);
      expect(pair[1]).toBeInstanceOf(kind);
      expect(pair[0]).not.toBe(pair[1]);
    }
    expect(POINT).toBeInstanceOf(PointCore);
    expect(TRIANGLE).toBeInstanceOf(TriangleCore);
  });

  it("placing side a's box leaves side b's box in its own pose", () => {
    const at = (x: number) => new WorldPose().set([x, 0, 0], Float64Array.of(1, 0, 0, 0));
    BOX[1].place(at(5), [1, 1, 1]);
    BOX[0].place(at(-2), [0.5, 0.5, 0.5]);
    expect([BOX[0].p[0], BOX[1].p[0]]).toEqual([-2, 5]);
    expect([BOX[0].boundingRadius(), BOX[1].boundingRadius()]).toEqual([
      Math.sqrt(0.75),
      Math.sqrt(3),
    ]);
  });
});
