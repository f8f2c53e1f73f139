/**
 * The normal polish (convex/polish.ts) on overlapping box cores: started 0.005 rad off the
 * direction of least overlap, it returns to it — the least overlap h_a(n) + h_b(−n) over
 * the 15 separating axes, the exact minimum for two boxes (box-pairs.ts) — and never ends
 * worse than where it started.
 */
import { describe, expect, it } from "vitest";
import { RES } from "../../../../src/engine/geometry/convex/gjk";
import { PN, polishNormal } from "../../../../src/engine/geometry/convex/polish";
import { mulberry32 } from "../../../support/random";
import { boxPair, overlap, satAxis, type V3 } from "./box-pairs";

describe("normal polish", () => {
  it("from 0.005 rad off: back to the least separating-axis overlap, never worse", () => {
    const r = mulberry32(81);
    let checked = 0;
    for (let trial = 0; trial < 300; trial++) {
      const dir: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...dir);
      const p = boxPair(r, dir.map((c) => ((0.1 + 0.5 * r()) * c) / l) as V3);
      const { depth, axis } = satAxis(p);
      if (!(depth > 1e-6)) continue;
      // Tilt the axis by 0.005 rad towards a random perpendicular.
      const t: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const ta = t[0] * axis[0] + t[1] * axis[1] + t[2] * axis[2];
      for (let i = 0; i < 3; i++) t[i] -= ta * axis[i];
      const tl = Math.hypot(...t);
      const start = [0, 1, 2].map((i) => Math.cos(0.005) * axis[i] + (Math.sin(0.005) * t[i]) / tl);
      RES.set(start);
      polishNormal(p.a, p.b);
      const n = [PN[0], PN[1], PN[2]];
      expect(Math.hypot(...n)).toBeCloseTo(1, 12);
      expect(PN[3]).toBeCloseTo(overlap(p, n), 12);
      expect(PN[3]).toBeLessThanOrEqual(overlap(p, start) + 1e-15);
      expect(PN[3]).toBeCloseTo(depth, 9);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
  });
});
