/**
 * GJK (convex/gjk.ts) between separated box cores at random poses, against a certificate
 * of the distance: its witness points lie on the boxes (within them, and on their support
 * planes along the normal), |p_b − p_a| is the reported distance, and the normal
 * separates the boxes by exactly that distance (h_a(n) + h_b(−n) = −d in closed form):
 * two points at distance d and a direction separating by d prove d the least distance.
 * Overlapping boxes are reported as such; boxes farther than the reach as far, with a
 * normal along which the closed-form support functions separate them by the reach.
 */
import { describe, expect, it } from "vitest";
import {
  GJK_FAR,
  GJK_OVERLAP,
  GJK_SEPARATED,
  gjk,
  RES,
} from "../../../../src/engine/geometry/convex/gjk";
import { mulberry32 } from "../../../support/random";
import { boxPair, boxSupport, overlap, satDepth, setQuery, type V3 } from "./box-pairs";

describe("GJK", () => {
  it("separated boxes: witnesses on the boxes, |p_b − p_a| = d, the normal separating by d", () => {
    const r = mulberry32(51);
    let separated = 0;
    for (let trial = 0; trial < 300; trial++) {
      const dir: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...dir);
      const p = boxPair(r, dir.map((c) => ((0.9 + 0.8 * r()) * c) / l) as V3);
      setQuery(p, 10);
      const status = gjk(p.a, p.b);
      if (satDepth(p) > 1e-9) {
        // Overlapping (by more than rounding): GJK must say so.
        expect(status).toBe(GJK_OVERLAP);
        continue;
      }
      if (satDepth(p) > -1e-9) continue; // touching: either answer
      expect(status).toBe(GJK_SEPARATED);
      separated++;
      const n = [RES[0], RES[1], RES[2]];
      const d = RES[9];
      const pa = [RES[3], RES[4], RES[5]];
      const pb = [RES[6], RES[7], RES[8]];
      expect(Math.hypot(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2])).toBeCloseTo(d, 9);
      expect(-overlap(p, n)).toBeCloseTo(d, 9);
      // p_a on a's support plane along n, p_b on b's along −n.
      expect(n[0] * pa[0] + n[1] * pa[1] + n[2] * pa[2]).toBeCloseTo(boxSupport(p.a, p.ha, n), 9);
      expect(-(n[0] * pb[0] + n[1] * pb[1] + n[2] * pb[2])).toBeCloseTo(
        boxSupport(p.b, p.hb, [-n[0], -n[1], -n[2]]),
        9,
      );
      // And the separating-axis bound: no face or edge axis separates them by more.
      expect(-satDepth(p)).toBeLessThanOrEqual(d + 1e-9);
    }
    expect(separated).toBeGreaterThan(100);
  });

  it("boxes farther apart than the reach: GJK_FAR", () => {
    const p = boxPair(mulberry32(3), [5, 0, 0]);
    setQuery(p, 1);
    expect(gjk(p.a, p.b)).toBe(GJK_FAR);
  });

  it("GJK_FAR: the unit normal in RES[0..2] separates the boxes by at least the reach", () => {
    // The closed-form support functions certify it: h_a(n) + h_b(−n) ≤ −reach.
    const r = mulberry32(8);
    let far = 0;
    for (let trial = 0; trial < 300; trial++) {
      const dir: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...dir);
      const p = boxPair(r, dir.map((c) => ((1 + 2 * r()) * c) / l) as V3);
      const reach = 0.3 * r();
      setQuery(p, reach);
      if (gjk(p.a, p.b) !== GJK_FAR) continue;
      far++;
      const n = [RES[0], RES[1], RES[2]];
      expect(Math.hypot(n[0], n[1], n[2])).toBeCloseTo(1, 14);
      expect(-overlap(p, n)).toBeGreaterThanOrEqual(reach - 1e-12);
    }
    expect(far).toBeGreaterThan(100);
  });
});
