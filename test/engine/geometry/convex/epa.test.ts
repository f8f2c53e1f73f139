/**
 * EPA (convex/epa.ts) on overlapping box cores at random poses, against the closed form of
 * the penetration depth of two boxes: the least overlap h_a(n) + h_b(−n) over the 15
 * separating-axis directions (the face normals of their Minkowski difference). EPA's
 * depth equals it, and its normal overlaps the boxes by exactly that depth.
 */
import { describe, expect, it } from "vitest";
import { EPA_FAILED, epa } from "../../../../src/engine/geometry/convex/epa";
import { GJK_OVERLAP, gjk, RES } from "../../../../src/engine/geometry/convex/gjk";
import { mulberry32 } from "../../../support/random";
import { boxPair, overlap, satDepth, setQuery, type V3 } from "./box-pairs";

describe("EPA", () => {
  it("overlapping boxes: depth = the least separating-axis overlap, the normal overlapping by it", () => {
    const r = mulberry32(61);
    let checked = 0;
    for (let trial = 0; trial < 300; trial++) {
      const dir: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...dir);
      const p = boxPair(r, dir.map((c) => ((0.1 + 0.5 * r()) * c) / l) as V3);
      const depth = satDepth(p);
      if (!(depth > 1e-6)) continue;
      setQuery(p, 10);
      expect(gjk(p.a, p.b)).toBe(GJK_OVERLAP);
      const outcome = epa(p.a, p.b);
      expect(outcome).not.toBe(EPA_FAILED);
      const n = [RES[0], RES[1], RES[2]];
      expect(Math.hypot(...n)).toBeCloseTo(1, 12);
      expect(-RES[9]).toBeCloseTo(depth, 8);
      expect(overlap(p, n)).toBeCloseTo(depth, 8);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});
