/**
 * The hull core (hull-core.ts): a hull's support function and support sets against its
 * input points (core-checks.ts; the solid: every face plane n·x ≤ offset), for a small
 * hull (scanned) and a large one (hill-climbed), and its faces' areas.
 */
import { describe, expect, it } from "vitest";
import { HullCore } from "../../../../src/engine/geometry/convex/hull-core";
import { convexHull, HILL_CLIMB_MIN } from "../../../../src/engine/geometry/hull";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { mulberry32 } from "../../../support/random";
import { checkSupport, type V3 } from "./core-checks";

describe("hull core", () => {
  for (const count of [12, 300]) {
    it(`${count} random points: support function and sets against the points`, () => {
      const r = mulberry32(count);
      const pts: V3[] = Array.from({ length: count }, () => [
        r() - 0.5,
        0.6 * (r() - 0.5),
        0.3 * (r() - 0.5),
      ]);
      const hull = convexHull(Float64Array.from(pts.flat()));
      if (count > 100) expect(hull.source.length).toBeGreaterThanOrEqual(HILL_CLIMB_MIN);
      const core = new HullCore().place(new WorldPose(), hull);
      const F = hull.faceOffsets.length;
      const inside = (x: V3) => {
        for (let f = 0; f < F; f++) {
          const n = hull.faceNormals.subarray(3 * f, 3 * f + 3);
          if (n[0] * x[0] + n[1] * x[1] + n[2] * x[2] > hull.faceOffsets[f] + 1e-12) return false;
        }
        return true;
      };
      checkSupport(core, pts, inside, 1e-12);
      const out = new Float64Array(1);
      for (let f = 0; f < F; f++) {
        core.polygonArea(f, out, 0);
        expect(out[0]).toBe(hull.faceAreas[f]);
      }
    });
  }
});
