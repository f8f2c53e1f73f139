/**
 * The support queries on placed cores (convex/support.ts) against the closed form of a
 * box's support function h(n) = n·c + Σ_i h_i |n·e_i| (box-pairs.ts): support() reaches
 * h(±d) for any length of d, overlapAlong is h_a(n) + h_b(−n), separationAlong its
 * negative, minkowski writes s_a(d) − s_b(−d) and moves it by r d̂ under a dilation r of
 * b; localToWorld and toLocal invert each other.
 */
import { describe, expect, it } from "vitest";
import {
  ALONG,
  localToWorld,
  minkowski,
  overlapAlong,
  QUERY,
  SUP,
  separationAlong,
  support,
  toLocal,
} from "../../../../src/engine/geometry/convex/support";
import { mulberry32 } from "../../../support/random";
import { boxPair, boxSupport, overlap, type V3 } from "./box-pairs";

describe("support queries", () => {
  it("support, overlapAlong, separationAlong and minkowski against the boxes' closed forms", () => {
    const r = mulberry32(71);
    const d = new Float64Array(4);
    const W = new Float64Array(6);
    const A = new Float64Array(6);
    const B = new Float64Array(6);
    for (let trial = 0; trial < 200; trial++) {
      const p = boxPair(r, [r() - 0.5, r() - 0.5, r() - 0.5]);
      const n: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...n);
      const u = n.map((c) => c / l) as V3;
      // d at offset 1, of length 3 (support ignores the length).
      d.set([3 * u[0], 3 * u[1], 3 * u[2]], 1);
      for (const sg of [1, -1]) {
        support(p.a, d, 1, sg);
        const su = u.map((c) => sg * c);
        expect(su[0] * SUP[0] + su[1] * SUP[1] + su[2] * SUP[2]).toBeCloseTo(
          boxSupport(p.a, p.ha, su),
          13,
        );
      }
      d.set(u, 1);
      overlapAlong(p.a, p.b, d, 1);
      expect(ALONG[0]).toBeCloseTo(overlap(p, u), 13);
      separationAlong(p.a, p.b, d, 1, 1);
      expect(ALONG[0]).toBeCloseTo(-overlap(p, u), 13);
      separationAlong(p.a, p.b, d, 1, -1);
      expect(ALONG[0]).toBeCloseTo(-overlap(p, [-u[0], -u[1], -u[2]]), 13);
      // minkowski at slot 1: w = s_a(u) − s_b(−u), w·u = the overlap; dilated by 0.1: + 0.1.
      QUERY[3] = 0;
      minkowski(p.a, p.b, d, 1, W, A, B, 1);
      const w = [W[3] - (A[3] - B[3]), W[4] - (A[4] - B[4]), W[5] - (A[5] - B[5])];
      expect(w.every((c) => c === 0)).toBe(true);
      expect(u[0] * W[3] + u[1] * W[4] + u[2] * W[5]).toBeCloseTo(overlap(p, u), 13);
      QUERY[3] = 0.1;
      minkowski(p.a, p.b, d, 1, W, A, B, 1);
      QUERY[3] = 0;
      expect(u[0] * W[3] + u[1] * W[4] + u[2] * W[5]).toBeCloseTo(overlap(p, u) + 0.1, 13);
    }
  });

  it("localToWorld and toLocal: x = p + R l and Rᵀ v invert each other", () => {
    const r = mulberry32(72);
    const p = boxPair(r, [1, 2, 3]);
    const l = new Float64Array([0.3, -0.2, 0.5]);
    const x = new Float64Array(5);
    localToWorld(p.b, l, 0, x, 2);
    const v = new Float64Array([x[2] - 1, x[3] - 2, x[4] - 3]);
    const back = new Float64Array(3);
    toLocal(p.b, v, 0, back);
    for (let i = 0; i < 3; i++) expect(back[i]).toBeCloseTo(l[i], 14);
  });
});
