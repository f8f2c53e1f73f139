/**
 * Block-Jacobi preconditioner against block inverses computed here with ml-matrix, and
 * preconditioned CG / GMRES on a matrix-free operator against a dense LU solve.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { ConjugateGradientSolver } from "../../../../src/engine/solvers/linear/cg";
import { GmresSolver } from "../../../../src/engine/solvers/linear/gmres";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { BlockJacobiPreconditioner } from "../../../../src/engine/solvers/linear/preconditioners";
import { mulberry32 } from "../../../support/random";

/** Block sizes of a mixed particle / rigid-body system. */
const SIZES = [3, 6, 3, 3, 6];

/**
 * A random SPD block matrix with the given block sizes: G Gᵀ + n I for a random dense G,
 * stored with every block reserved, plus its dense copy.
 */
function randomSpdBlocks(seed: number): { m: SparseBlockMatrix; dense: Matrix } {
  const r = mulberry32(seed);
  const m = new SparseBlockMatrix(SIZES);
  for (let i = 0; i < SIZES.length; i++) for (let j = 0; j < SIZES.length; j++) m.addBlock(i, j);
  m.finalize();
  const n = m.size;
  const g = Matrix.zeros(n, n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) g.set(i, j, 2 * r() - 1);
  const dense = g.mmul(g.transpose()).add(Matrix.eye(n).mul(n));
  m.clear();
  for (let bi = 0; bi < SIZES.length; bi++)
    for (let bj = 0; bj < SIZES.length; bj++)
      for (let a = 0; a < SIZES[bi]; a++)
        for (let b = 0; b < SIZES[bj]; b++)
          m.addEntry(bi, bj, a, b, dense.get(m.blockOffset[bi] + a, m.blockOffset[bj] + b));
  return { m, dense };
}

describe("BlockJacobiPreconditioner", () => {
  it("applies the inverse of every diagonal block (3×3 and 6×6)", () => {
    const { m, dense } = randomSpdBlocks(3);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    expect(p.singularBlocks).toBe(0);
    const r = mulberry32(9);
    const x = Float64Array.from({ length: m.size }, () => 2 * r() - 1);
    const z = new Float64Array(m.size);
    p.apply(x, z);
    for (let b = 0; b < SIZES.length; b++) {
      const o = m.blockOffset[b];
      const w = SIZES[b];
      const block = dense.subMatrix(o, o + w - 1, o, o + w - 1);
      const ref = inverse(block).mmul(Matrix.columnVector(Array.from(x.subarray(o, o + w))));
      for (let i = 0; i < w; i++) expect(z[o + i]).toBeCloseTo(ref.get(i, 0), 12);
    }
  });

  it("returns rᵀz with z = M⁻¹r", () => {
    const { m } = randomSpdBlocks(4);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    const r = mulberry32(11);
    const x = Float64Array.from({ length: m.size }, () => 2 * r() - 1);
    const z = new Float64Array(m.size);
    const rz = p.apply(x, z);
    let ref = 0;
    for (let i = 0; i < m.size; i++) ref += x[i] * z[i];
    expect(rz).toBeCloseTo(ref, 13);
  });

  it("falls back to the inverse diagonal for a singular block", () => {
    const m = new SparseBlockMatrix([3]);
    m.finalize();
    // rank 1: u uᵀ with u = (1, 2, 3), diagonal (1, 4, 9)
    const u = [1, 2, 3];
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) m.addEntry(0, 0, i, j, u[i] * u[j]);
    const p = new BlockJacobiPreconditioner();
    p.update(m);
    expect(p.singularBlocks).toBe(1);
    const z = new Float64Array(3);
    p.apply(Float64Array.of(1, 1, 1), z);
    expect(Array.from(z)).toEqual([1, 1 / 4, 1 / 9]);
  });

  for (const solver of ["cg", "gmres"] as const)
    it(`${solver} with block Jacobi on a matrix-free operator matches a dense LU solve`, () => {
      const { m, dense } = randomSpdBlocks(5);
      const n = m.size;
      const op: LinearOperator = {
        n,
        apply: (x, out) => m.multiply(x, out),
        blockDiagonal: () => m,
      };
      const options = { tolerance: 1e-13, preconditioner: "block-jacobi" as const };
      const s =
        solver === "cg" ? new ConjugateGradientSolver(n, options) : new GmresSolver(n, options);
      s.factor(op);
      const r = mulberry32(11);
      const b = Float64Array.from({ length: n }, () => 2 * r() - 1);
      const x = new Float64Array(n);
      const info = s.solve(b, x);
      expect(info.converged).toBe(true);
      const ref = inverse(dense).mmul(Matrix.columnVector(Array.from(b)));
      for (let i = 0; i < n; i++) expect(x[i]).toBeCloseTo(ref.get(i, 0), 10);
    });

  it("is refused by CG on a CSR matrix (it needs the block structure)", () => {
    const { m } = randomSpdBlocks(1);
    const s = new ConjugateGradientSolver(m.size, { preconditioner: "block-jacobi" });
    expect(() => s.factor(m.toCsr())).toThrow(/block-jacobi needs an operator/);
  });
});
