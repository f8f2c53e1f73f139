/**
 * The Delassus operators of delassus.ts: SparseBlockDelassus against W = H M⁻¹ Hᵀ assembled
 * densely from an explicit H (scenes.ts particleContacts), its pattern checks and duplicate
 * sums, and DenseDelassus's products against sums written out.
 */
import { describe, expect, it } from "vitest";
import {
  DenseDelassus,
  NonsmoothProblemError,
  SparseBlockDelassus,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { maxAbsDiff, randomSpd } from "./helpers";
import { particleContacts } from "./scenes";

describe("sparse block Delassus operator", () => {
  const { sparse, dense } = particleContacts(40, 60, 11, true);
  const m = 180;

  it("equals W = H M⁻¹ Hᵀ assembled densely (toDense, multiply, rowBlockTimes, diagonalBlock)", () => {
    const W = dense!;
    expect(maxAbsDiff(sparse.toDense(), W)).toBeLessThan(1e-14);
    const x = Float64Array.from({ length: m }, (_, i) => Math.sin(i));
    const y = new Float64Array(m);
    sparse.multiply(x, y);
    const yd = new Float64Array(m);
    new DenseDelassus(W, 60, 3).multiply(x, yd);
    expect(maxAbsDiff(y, yd)).toBeLessThan(1e-13);
    const out = new Float64Array(3);
    const blk = new Float64Array(9);
    for (let i = 0; i < 60; i++) {
      sparse.rowBlockTimes(i, x, out);
      expect(maxAbsDiff(out, yd.subarray(3 * i, 3 * i + 3))).toBeLessThan(1e-13);
      sparse.diagonalBlock(i, blk);
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++)
          expect(blk[3 * a + b]).toBeCloseTo(W[(3 * i + a) * m + 3 * i + b], 14);
    }
    // Symmetric mirroring: W is symmetric, and only pairs sharing a body are stored.
    const D = sparse.toDense();
    let asymmetric = 0;
    for (let i = 0; i < m; i++)
      for (let j = 0; j < i; j++) if (D[i * m + j] !== D[j * m + i]) asymmetric++;
    expect(asymmetric).toBe(0);
    expect(sparse.rowPtr[60]).toBeLessThan(60 * 60);
  });

  it("sums duplicate pairs and rejects malformed patterns", () => {
    const s = SparseBlockDelassus.fromBlockPairs(2, 1, [0, 0, 1, 0], [0, 1, 1, 0], [1, 2, 3, 4], {
      symmetric: true,
    });
    expect(Array.from(s.toDense())).toEqual([5, 2, 2, 3]);
    expect(
      () =>
        new SparseBlockDelassus(
          2,
          1,
          Int32Array.from([0, 2, 2]),
          Int32Array.from([1, 0]),
          new Float64Array(2),
        ),
    ).toThrow(/ascending/);
    expect(() => SparseBlockDelassus.fromBlockPairs(2, 1, [0], [2], [1])).toThrow(/out of range/);
  });
});

describe("DenseDelassus", () => {
  it("products, row blocks and diagonal blocks of a row-major W (sums written out)", () => {
    const nc = 4;
    const m = 3 * nc;
    const W = randomSpd(m, 0.1, mulberry32(8));
    const op = new DenseDelassus(W, nc, 3);
    expect([op.size, op.blocks, op.blockSize]).toEqual([m, nc, 3]);
    expect(op.matrix).toBe(W);
    const r = Float64Array.from({ length: m }, (_, i) => Math.cos(i));
    const y = new Float64Array(m);
    op.multiply(r, y);
    const ref = Array.from({ length: m }, (_, i) => {
      let s = 0;
      for (let j = 0; j < m; j++) s += W[i * m + j] * r[j];
      return s;
    });
    expect(maxAbsDiff(y, ref)).toBe(0); // same order of summation
    const out = new Float64Array(3);
    const blk = new Float64Array(9);
    for (let i = 0; i < nc; i++) {
      op.rowBlockTimes(i, r, out);
      expect(maxAbsDiff(out, ref.slice(3 * i, 3 * i + 3))).toBe(0);
      op.diagonalBlock(i, blk);
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++) expect(blk[3 * a + b]).toBe(W[(3 * i + a) * m + 3 * i + b]);
    }
    // rebinding to the normal rows only (a 1×1-block view of a 4×4 matrix)
    const Wn = Float64Array.from({ length: 16 }, (_, k) => k);
    op.set(Wn, 4, 1);
    op.diagonalBlock(2, blk);
    expect(blk[0]).toBe(10);
  });

  it("refuses a W with fewer than m² entries", () => {
    expect(() => new DenseDelassus(new Float64Array(8), 3, 1)).toThrow(NonsmoothProblemError);
    expect(() => new DenseDelassus(new Float64Array(8), 3, 1)).toThrow(/needs 3×3 = 9/);
  });
});
