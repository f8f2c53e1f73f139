/**
 * The single contact's witnesses (convex/witness.ts) for overlapping box cores at random
 * poses, after GJK, EPA and the normal polish as convex/pair.ts runs them: each witness
 * lies in its box and on its support plane along the normal (n·p_a = h_a(n),
 * −n·p_b = h_b(−n), the boxes' closed-form support functions), and p_b − p_a = g n with g
 * the polished separation −(h_a(n) + h_b(−n)).
 */
import { describe, expect, it } from "vitest";
import { epa } from "../../../../src/engine/geometry/convex/epa";
import { GJK_OVERLAP, gjk, RES } from "../../../../src/engine/geometry/convex/gjk";
import { PN, polishNormal } from "../../../../src/engine/geometry/convex/polish";
import { placeWitnesses } from "../../../../src/engine/geometry/convex/witness";
import { mulberry32 } from "../../../support/random";
import { boxPair, boxSupport, satDepth, setQuery, type V3 } from "./box-pairs";

describe("witnesses", () => {
  it("on the boxes' support planes along the polished normal, p_b − p_a = g n", () => {
    const r = mulberry32(91);
    let checked = 0;
    for (let trial = 0; trial < 300; trial++) {
      const dir: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...dir);
      const p = boxPair(r, dir.map((c) => ((0.1 + 0.5 * r()) * c) / l) as V3);
      if (!(satDepth(p) > 1e-6)) continue;
      setQuery(p, 10);
      expect(gjk(p.a, p.b)).toBe(GJK_OVERLAP);
      epa(p.a, p.b);
      polishNormal(p.a, p.b);
      placeWitnesses(p.a, p.b, PN);
      const n = [PN[0], PN[1], PN[2]];
      const pa = [RES[3], RES[4], RES[5]];
      const pb = [RES[6], RES[7], RES[8]];
      const tol = 1e-12;
      expect(n[0] * pa[0] + n[1] * pa[1] + n[2] * pa[2]).toBeCloseTo(boxSupport(p.a, p.ha, n), 11);
      expect(-(n[0] * pb[0] + n[1] * pb[1] + n[2] * pb[2])).toBeCloseTo(
        boxSupport(p.b, p.hb, [-n[0], -n[1], -n[2]]),
        11,
      );
      const g = -PN[3];
      for (let i = 0; i < 3; i++) expect(pb[i] - pa[i]).toBeCloseTo(g * n[i], 11);
      // Each witness in its box: |Rᵀ (x − c)|_i ≤ h_i.
      for (const [c, h, x] of [
        [p.a, p.ha, pa],
        [p.b, p.hb, pb],
      ] as const) {
        const d = [x[0] - c.p[0], x[1] - c.p[1], x[2] - c.p[2]];
        for (let i = 0; i < 3; i++) {
          const li = c.R[i] * d[0] + c.R[3 + i] * d[1] + c.R[6 + i] * d[2];
          expect(Math.abs(li)).toBeLessThanOrEqual(h[i] + tol);
        }
      }
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});
