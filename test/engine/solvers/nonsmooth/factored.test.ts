/**
 * FactoredDelassus (W = s·H Y Hᵀ kept factored) against the dense s·H Y Hᵀ formed by
 * dense products from the H and block-diagonal Y of scenes.ts's random multibody sets,
 * its response Δv = Y Hᵀ r and velocities u = s H v against the same dense H and Y, and
 * its refusals of malformed sides.
 */
import { describe, expect, it } from "vitest";
import { FactoredDelassus, NonsmoothProblemError } from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { affine, maxAbsDiff } from "./helpers";
import { denseW, randomSet } from "./scenes";

describe("FactoredDelassus", () => {
  for (const dim of [1, 3] as const)
    it(`matches the dense s·H Y Hᵀ: multiply, diagonal and row blocks (dim ${dim})`, () => {
      const set = randomSet(7 + dim, 6, 14, dim, 0.8);
      const W = denseW(set, dim, 0.8);
      const m = set.nc * dim;
      const rand = mulberry32(99);
      const r = Float64Array.from({ length: m }, () => rand() - 0.3);
      const out = new Float64Array(m);
      set.op.multiply(r, out);
      const ref = affine(W, r, new Float64Array(m), m);
      expect(maxAbsDiff(out, ref)).toBeLessThan(1e-12);
      const blk = new Float64Array(9);
      const row = new Float64Array(3);
      for (let i = 0; i < set.nc; i++) {
        set.op.diagonalBlock(i, blk);
        set.op.rowBlockTimes(i, r, row);
        for (let k = 0; k < dim; k++) {
          expect(row[k]).toBeCloseTo(ref[dim * i + k], 12);
          for (let l = 0; l < dim; l++)
            expect(blk[k * dim + l]).toBeCloseTo(W[(dim * i + k) * m + dim * i + l], 12);
        }
      }
    });
});

describe("FactoredDelassus response and velocities", () => {
  for (const dim of [1, 3] as const)
    it(`addResponse is f·Y Hᵀ r, velocities is s H v, on the dense H and Y (dim ${dim})`, () => {
      const scale = 0.8;
      const set = randomSet(30 + dim, 5, 9, dim, scale);
      const { H, Y, n, nc } = set;
      const m = nc * dim;
      const rand = mulberry32(31);
      const r = Float64Array.from({ length: m }, () => rand() - 0.5);
      // Hᵀ r on the first dim rows of every contact, then Y (Hᵀ r)
      const htr = new Float64Array(n);
      for (let p = 0; p < m; p++) {
        const row = 3 * Math.floor(p / dim) + (p % dim);
        for (let c = 0; c < n; c++) htr[c] += H[row * n + c] * r[p];
      }
      const dvRef = affine(Y, htr, new Float64Array(n), n);
      const dv = Float64Array.from({ length: n }, () => 1);
      set.op.addResponse(r, 2, dv);
      expect(
        maxAbsDiff(
          dv,
          dvRef.map((v) => 1 + 2 * v),
        ),
      ).toBeLessThan(1e-12);
      const v = Float64Array.from({ length: n }, () => rand() - 0.5);
      const u = new Float64Array(m);
      set.op.velocities(v, u);
      for (let p = 0; p < m; p++) {
        const row = 3 * Math.floor(p / dim) + (p % dim);
        let s = 0;
        for (let c = 0; c < n; c++) s += H[row * n + c] * v[c];
        expect(u[p]).toBeCloseTo(scale * s, 12);
      }
    });

  it("refuses too short Jacobian arrays and sides outside the dofs", () => {
    const op = new FactoredDelassus();
    expect(() => op.reset(2, 3, 12, 1, new Float64Array(36), new Float64Array(72))).toThrow(
      NonsmoothProblemError,
    );
    op.reset(2, 3, 12, 1, new Float64Array(72), new Float64Array(72));
    expect(() => op.setSide(0, 1, 9, 6)).toThrow(/dofs 9\.\.15 outside 0\.\.12/);
    expect(() => op.setSide(0, 1, 6, 6)).not.toThrow();
    expect(() => op.setSide(1, 0, -3, 0)).not.toThrow(); // width 0: the world, no dofs
  });
});
