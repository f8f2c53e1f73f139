/**
 * The block LDLᵀ factorization (3×3 blocks) against dense solves with ml-matrix (LU with
 * partial pivoting) on random sparse SPD block matrices, a grid Laplacian and an
 * indefinite matrix.
 */
import { describe, expect, it } from "vitest";
import { BlockLdlt } from "../../../../src/engine/solvers/linear/block-ldlt";
import { blockMatrix, fill, gridLaplacian, randomSpdBlocks } from "./block-matrices";
import { denseLuSolve, randomVector, relativeError } from "./helpers";

describe("BlockLdlt", () => {
  it("solves random sparse SPD block systems to 1e-10 of a dense LU solve", () => {
    for (const seed of [1, 2, 3]) {
      const nb = 40;
      const { pairs, dense } = randomSpdBlocks(nb, 3, seed);
      const m = blockMatrix(nb, pairs, dense);
      const f = new BlockLdlt();
      expect(f.factor(m)).toBe(true);
      expect(f.positiveDefinite).toBe(true);
      const b = randomVector(3 * nb, seed + 10);
      const x = new Float64Array(3 * nb);
      const bx = f.solve(b, x);
      const ref = denseLuSolve(dense, b);
      expect(relativeError(x, ref)).toBeLessThan(1e-10);
      // the returned bᵀx
      let dot = 0;
      for (let i = 0; i < b.length; i++) dot += b[i] * ref[i];
      expect(Math.abs(bx - dot)).toBeLessThan(1e-10 * Math.abs(dot));
    }
  });

  it("solves a 12 × 12 grid Laplacian of 3×3 blocks (a cloth's pattern) to 1e-10", () => {
    const k = 12;
    const { pairs, dense } = gridLaplacian(k, 1e-3);
    const m = blockMatrix(k * k, pairs, dense);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    const b = randomVector(3 * k * k, 7);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseLuSolve(dense, b))).toBeLessThan(1e-10);
    // the ordering reduces fill below the natural (banded) order's: a k × k grid with 8
    // neighbours has a band of k + 1 blocks, so the natural order fills ≈ k²(k + 1) blocks
    expect(f.solveCost).toBeLessThan(18 * k * k * (k + 1));
  });

  it("solves right-hand sides with zero blocks (the forward sweep skips their columns)", () => {
    const k = 9;
    const { pairs, dense } = gridLaplacian(k, 1e-2);
    const m = blockMatrix(k * k, pairs, dense);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    for (const nonzero of [[0], [40], [k * k - 1], [3, 17, 60]]) {
      const b = new Float64Array(3 * k * k);
      for (const blk of nonzero) for (let p = 0; p < 3; p++) b[3 * blk + p] = 1 + blk + 0.5 * p;
      const x = new Float64Array(b.length);
      const bx = f.solve(b, x);
      const ref = denseLuSolve(dense, b);
      expect(relativeError(x, ref)).toBeLessThan(1e-10);
      let dot = 0;
      for (let i = 0; i < b.length; i++) dot += b[i] * ref[i];
      expect(Math.abs(bx - dot)).toBeLessThan(1e-10 * Math.abs(dot));
    }
  });

  it("reads a triangle-only storage as the symmetric matrix", () => {
    const nb = 30;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 5);
    const m = blockMatrix(nb, pairs, dense, true);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    const b = randomVector(3 * nb, 6);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseLuSolve(dense, b))).toBeLessThan(1e-10);
  });

  it("factors a symmetric indefinite matrix, reporting it, and still solves it", () => {
    const nb = 30;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 8);
    // flip the sign of a few diagonal blocks' dominance: indefinite but nonsingular
    for (const b of [3, 17, 25])
      for (let p = 0; p < 3; p++) dense.set(3 * b + p, 3 * b + p, -dense.get(3 * b + p, 3 * b + p));
    const m = blockMatrix(nb, pairs, dense);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    expect(f.positiveDefinite).toBe(false);
    const b = randomVector(3 * nb, 9);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseLuSolve(dense, b))).toBeLessThan(1e-10);
  });

  it("reports a singular matrix", () => {
    const nb = 10;
    const { pairs, dense } = randomSpdBlocks(nb, 2, 11);
    // block 4 decoupled and zero: singular
    const kept = pairs.filter(([i, j]) => i !== 4 && j !== 4);
    for (let p = 0; p < 3; p++) for (let q = 0; q < 3; q++) dense.set(12 + p, 12 + q, 0);
    const m = blockMatrix(nb, kept, dense);
    expect(new BlockLdlt().factor(m)).toBe(false);
  });

  it("reuses its symbolic analysis while the pattern is unchanged", () => {
    const nb = 20;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 12);
    const m = blockMatrix(nb, pairs, dense);
    const f = new BlockLdlt();
    f.factor(m);
    f.factor(m);
    expect(f.analyses).toBe(1);
    expect(f.factorizations).toBe(2);
    m.addBlock(0, nb - 1);
    m.addBlock(nb - 1, 0);
    m.finalize();
    fill(m, nb, pairs, dense);
    f.factor(m);
    expect(f.analyses).toBe(2);
  });
});
