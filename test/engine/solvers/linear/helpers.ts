/**
 * Test helpers for the linear solvers: seeded random matrices, the independent dense
 * reference (ml-matrix LU with partial pivoting) and error measures. Nothing here uses
 * the code under test, except solveWith, which only drives a solver given to it.
 */
import { inverse, LuDecomposition, Matrix } from "ml-matrix";
import { expect } from "vitest";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { type CsrMatrix, csrFromTriplets, csrToDense } from "../../../../src/engine/math/csr";
import type { MatrixOrOperator } from "../../../../src/engine/solvers/linear/iterative-base";
import type {
  LinearOperator,
  LinearSolver,
  LinearSolverName,
  LinearSolverOptions,
} from "../../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../../support/random";

export class Triplets {
  ri: number[] = [];
  ci: number[] = [];
  vi: number[] = [];
  add(i: number, j: number, v: number): void {
    this.ri.push(i);
    this.ci.push(j);
    this.vi.push(v);
  }
  toCsr(rows: number, cols: number): CsrMatrix {
    return csrFromTriplets(rows, cols, this.ri, this.ci, this.vi);
  }
}

/**
 * Random sparse symmetric positive definite matrix (full storage): random symmetric
 * off-diagonal entries in [−1, 1] (about `perRow` per row) plus a diagonal
 * (Σ_j |a_ij|)·(1 + margin) + 0.1·(random): strictly diagonally dominant ⇒ SPD with a
 * condition number that grows as the margin shrinks.
 */
export function randomSpd(n: number, perRow: number, seed: number, margin = 0.05): CsrMatrix {
  const r = mulberry32(seed);
  const t = new Triplets();
  const rowAbs = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let e = 0; e < perRow / 2; e++) {
      const j = Math.floor(r() * n);
      if (j === i) continue;
      const v = 2 * r() - 1;
      t.add(i, j, v);
      t.add(j, i, v);
      rowAbs[i] += Math.abs(v);
      rowAbs[j] += Math.abs(v);
    }
  }
  for (let i = 0; i < n; i++) t.add(i, i, rowAbs[i] * (1 + margin) + 0.1 + 0.1 * r());
  return t.toCsr(n, n);
}

/**
 * Random sparse nonsymmetric nonsingular matrix. With `shuffleRows` the rows of a
 * diagonally dominant matrix are randomly permuted, so most diagonal entries are zero
 * or small and the LU must pivot.
 */
export function randomNonsymmetric(
  n: number,
  perRow: number,
  seed: number,
  shuffleRows = false,
): CsrMatrix {
  const r = mulberry32(seed);
  const rowPerm = Array.from({ length: n }, (_, i) => i);
  if (shuffleRows)
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [rowPerm[i], rowPerm[j]] = [rowPerm[j], rowPerm[i]];
    }
  const t = new Triplets();
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let e = 0; e < perRow; e++) {
      const j = Math.floor(r() * n);
      if (j === i) continue;
      const v = 2 * r() - 1;
      t.add(rowPerm[i], j, v);
      s += Math.abs(v);
    }
    t.add(rowPerm[i], i, (s + 0.5) * (r() < 0.5 ? -1 : 1));
  }
  return t.toCsr(n, n);
}

/**
 * Saddle-point matrix K = [M Jᵀ; J 0] (coordinates first, then multipliers): M random
 * sparse SPD (nq×nq), J (nc×nq) random sparse with full row rank (row c has a dominant
 * entry in column 2c). The (2,2) block is structurally empty unless `storeZeroDiagonal`.
 */
export function randomKkt(
  nq: number,
  nc: number,
  seed: number,
  storeZeroDiagonal = false,
): CsrMatrix {
  const r = mulberry32(seed);
  const m = randomSpd(nq, 4, seed + 1000);
  const t = new Triplets();
  for (let i = 0; i < nq; i++)
    for (let k = m.rowPtr[i]; k < m.rowPtr[i + 1]; k++) t.add(i, m.colIdx[k], m.values[k]);
  for (let c = 0; c < nc; c++) {
    const row = nq + c;
    const lead = (2 * c) % nq;
    const add = (j: number, v: number): void => {
      t.add(row, j, v);
      t.add(j, row, v);
    };
    add(lead, 2 + r());
    for (let e = 0; e < 3; e++) {
      const j = Math.floor(r() * nq);
      if (j !== lead) add(j, 0.5 * (2 * r() - 1));
    }
    if (storeZeroDiagonal) t.add(row, row, 0);
  }
  return t.toCsr(nq + nc, nq + nc);
}

/** Random vector with entries in [−1, 1]. */
export function randomVector(n: number, seed: number): Float64Array {
  const r = mulberry32(seed);
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = 2 * r() - 1;
  return v;
}

/** A x = b solved by ml-matrix's dense LU with partial pivoting. */
export function denseLuSolve(a: Matrix, b: Float64Array): Float64Array {
  const x = new LuDecomposition(a).solve(Matrix.columnVector(Array.from(b)));
  return Float64Array.from(x.getColumn(0));
}

/** Reference solution by ml-matrix dense LU with partial pivoting. */
export function denseLuReference(a: CsrMatrix, b: Float64Array): Float64Array {
  return denseLuSolve(Matrix.from1DArray(a.rows, a.cols, csrToDense(a)), b);
}

/** ‖x − ref‖₂ / ‖ref‖₂. */
export function relativeError(x: Float64Array, ref: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < ref.length; i++) {
    num += (x[i] - ref[i]) ** 2;
    den += ref[i] ** 2;
  }
  return Math.sqrt(num / den);
}

/** ‖b − A x‖₂ / ‖b‖₂ computed densely from the stored entries. */
export function relativeResidual(a: CsrMatrix, x: Float64Array, b: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < a.rows; i++) {
    let s = b[i];
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) s -= a.values[k] * x[a.colIdx[k]];
    num += s * s;
    den += b[i] * b[i];
  }
  return Math.sqrt(num / den);
}

/** Every solver the factory builds by name (LinearSolverName without "auto"). */
export const SOLVER_NAMES: readonly Exclude<LinearSolverName, "auto">[] = [
  "dense-lu",
  "dense-cholesky",
  "sparse-ldlt",
  "sparse-lu",
  "sparse-qr",
  "cg",
  "minres",
  "gmres",
];

/** Sizes of the random systems every direct and Krylov solver is checked on. */
export const TEST_SIZES = [5, 20, 60, 200];

/** factor + solve, expecting success; returns x. */
export function solveWith(s: LinearSolver, a: CsrMatrix, b: Float64Array): Float64Array {
  s.factor(a);
  const x = new Float64Array(a.cols);
  const info = s.solve(b, x);
  expect(info.converged, s.name).toBe(true);
  return x;
}

/** D A D with D = diag(d): a badly scaled copy of a (mixed units). */
export function scaledBothSides(a: CsrMatrix, d: Float64Array): CsrMatrix {
  const values = new Float64Array(a.values.length);
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
      values[k] = d[i] * a.values[k] * d[a.colIdx[k]];
  return { ...a, values };
}

/**
 * The badly scaled SPD system of the direct solvers' scaling tests: A random SPD (n = 50),
 * D from 1e-6 to 1e6 (geometric), the scaled matrix D A D, b, and the reference solution
 * in the scaled variables y = D x: A y = D⁻¹ b by ml-matrix on the unscaled A (van der
 * Sluis: LDLᵀ/Cholesky/LU are accurate in y whatever D).
 */
export function badlyScaledSystem(): {
  scaled: CsrMatrix;
  dscale: Float64Array;
  b: Float64Array;
  yRef: Float64Array;
} {
  const n = 50;
  const a = randomSpd(n, 6, 31);
  const dscale = Float64Array.from({ length: n }, (_, i) => 10 ** (-6 + (12 * i) / (n - 1)));
  const b = randomVector(n, 32);
  const yRef = denseLuReference(
    a,
    b.map((v, i) => v / dscale[i]),
  );
  return { scaled: scaledBothSides(a, dscale), dscale, b, yRef };
}

/** D [1 1; 1 1] D with D = diag(1e-6, 1e6): singular, however badly scaled. */
export function scaledSingular2x2(): CsrMatrix {
  const d0 = 1e-6;
  const d1 = 1e6;
  return csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [d0 * d0, d0 * d1, d1 * d0, d1 * d1]);
}

/**
 * The badly scaled system (badlyScaledSystem) solved by a fresh solver from make: the
 * solution in the scaled variables y = D x matches the reference to 1e-10 (relative).
 */
export function expectBadlyScaledSolved(make: () => LinearSolver): void {
  const { scaled, dscale, b, yRef } = badlyScaledSystem();
  const x = solveWith(make(), scaled, b);
  expect(
    relativeError(
      x.map((v, i) => v * dscale[i]),
      yRef,
    ),
  ).toBeLessThan(1e-10);
}

/** scaledSingular2x2 is reported as converged = false by a fresh solver from make. */
export function expectScaledSingularRefused(make: () => LinearSolver): void {
  const s = make();
  s.factor(scaledSingular2x2());
  expect(s.solve(Float64Array.of(1, 1), new Float64Array(2)).converged, s.name).toBe(false);
}

/** A singular 3×3 of rank 2 (row 2 = row 0 + row 1), nonsymmetric. */
export function singular3x3(): CsrMatrix {
  return csrFromTriplets(
    3,
    3,
    [0, 0, 0, 1, 1, 2, 2, 2],
    [0, 1, 2, 1, 2, 0, 1, 2],
    [1, 2, 3, 4, 5, 1, 6, 8],
  );
}

/**
 * The random square systems of size n every general direct solver is checked on, each
 * solved by a fresh solver from make against ml-matrix dense LU to 1e-10 (relative): SPD,
 * nonsymmetric with shuffled rows (pivoting needed; also ‖b − A x‖/‖b‖ < 1e-12) and the
 * symmetric indefinite KKT [M Jᵀ; J 0] with n/3 constraints.
 */
export function expectRandomSquareSystemsSolved(make: () => LinearSolver, n: number): void {
  const spd = randomSpd(n, 6, 11 * n);
  const bSpd = randomVector(n, 3 * n);
  expect(relativeError(solveWith(make(), spd, bSpd), denseLuReference(spd, bSpd))).toBeLessThan(
    1e-10,
  );

  const non = randomNonsymmetric(n, 5, 17 * n, true);
  const bNon = randomVector(n, 5 * n);
  const x = solveWith(make(), non, bNon);
  expect(relativeError(x, denseLuReference(non, bNon))).toBeLessThan(1e-10);
  expect(relativeResidual(non, x, bNon)).toBeLessThan(1e-12);

  const kkt = randomKkt(n, Math.ceil(n / 3), 23 * n);
  const bKkt = randomVector(kkt.rows, 7 * n);
  expect(relativeError(solveWith(make(), kkt, bKkt), denseLuReference(kkt, bKkt))).toBeLessThan(
    1e-10,
  );
}

/**
 * A symmetric random SPD matrix (n = 50) stored as its upper triangle, its lower triangle
 * or in full: a fresh solver from make solves each to 1e-10 of the dense LU reference.
 */
export function expectTriangleStorageSolved(make: () => LinearSolver): void {
  const a = randomSpd(50, 6, 99);
  const b = randomVector(50, 100);
  const ref = denseLuReference(a, b);
  for (const m of [keepEntries(a, (i, j) => j >= i), keepEntries(a, (i, j) => j <= i), a]) {
    const x = solveWith(make(), m, b);
    expect(relativeError(x, ref)).toBeLessThan(1e-10);
  }
}

/**
 * After a refactorization of s with new values of a: the solve of A x = b, b random from
 * seed, converges and matches dense LU to 1e-10 (relative).
 */
export function expectRefactoredSolve(s: LinearSolver, a: CsrMatrix, seed: number): void {
  s.factor(a);
  const b = randomVector(a.rows, seed);
  const x = new Float64Array(a.rows);
  expect(s.solve(b, x).converged).toBe(true);
  expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
}

/** The entries (i, j) of a for which keep(i, j) holds (e.g. one triangle of a symmetric a). */
export function keepEntries(a: CsrMatrix, keep: (i: number, j: number) => boolean): CsrMatrix {
  const t = new Triplets();
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
      if (keep(i, a.colIdx[k])) t.add(i, a.colIdx[k], a.values[k]);
  return t.toCsr(a.rows, a.cols);
}

/**
 * Shifted 2-D 5-point Laplacian on a k×k grid, c·I − Δ_h (Dirichlet), applied by its
 * stencil without any matrix (`operator`) and assembled from the same stencil (`matrix`,
 * for the dense reference). Nonsymmetric variant (`symmetric` false): a convection term
 * skews the horizontal neighbours (1.4 left, 0.6 right).
 */
export function shiftedLaplacian(
  k: number,
  shift: number,
  symmetric: boolean,
): { operator: LinearOperator; matrix: CsrMatrix } {
  const n = k * k;
  const left = symmetric ? 1 : 1.4;
  const right = symmetric ? 1 : 0.6;
  const operator: LinearOperator = {
    n,
    apply(x, out) {
      for (let i = 0; i < k; i++)
        for (let j = 0; j < k; j++) {
          const p = i * k + j;
          let s = (4 + shift) * x[p];
          if (i > 0) s -= x[p - k];
          if (i < k - 1) s -= x[p + k];
          if (j > 0) s -= left * x[p - 1];
          if (j < k - 1) s -= right * x[p + 1];
          out[p] = s;
        }
    },
    diagonal(out) {
      out.fill(4 + shift);
    },
  };
  const t = new Triplets();
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      const p = i * k + j;
      t.add(p, p, 4 + shift);
      if (i > 0) t.add(p, p - k, -1);
      if (i < k - 1) t.add(p, p + k, -1);
      if (j > 0) t.add(p, p - 1, -left);
      if (j < k - 1) t.add(p, p + 1, -right);
    }
  return { operator, matrix: t.toCsr(n, n) };
}

/** Block sizes of a mixed particle / rigid-body system. */
export const BODY_BLOCK_SIZES = [3, 6, 3, 3, 6];

/**
 * A random SPD block matrix with the block sizes BODY_BLOCK_SIZES: G Gᵀ + n I for a
 * random dense G, stored with every block reserved, plus its dense copy (ml-matrix).
 */
export function randomSpdBodyBlocks(seed: number): { m: SparseBlockMatrix; dense: Matrix } {
  const r = mulberry32(seed);
  const sizes = BODY_BLOCK_SIZES;
  const m = new SparseBlockMatrix(sizes);
  for (let i = 0; i < sizes.length; i++) for (let j = 0; j < sizes.length; j++) m.addBlock(i, j);
  m.finalize();
  const n = m.size;
  const g = Matrix.zeros(n, n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) g.set(i, j, 2 * r() - 1);
  const dense = g.mmul(g.transpose()).add(Matrix.eye(n).mul(n));
  m.clear();
  for (let bi = 0; bi < sizes.length; bi++)
    for (let bj = 0; bj < sizes.length; bj++)
      for (let a = 0; a < sizes[bi]; a++)
        for (let b = 0; b < sizes[bj]; b++)
          m.addEntry(bi, bj, a, b, dense.get(m.blockOffset[bi] + a, m.blockOffset[bj] + b));
  return { m, dense };
}

/** A CSR matrix as an operator that counts its products (A x). */
export function countingOperator(a: CsrMatrix): LinearOperator & { products: number } {
  const op = {
    n: a.rows,
    products: 0,
    apply(x: Float64Array, out: Float64Array) {
      op.products++;
      for (let i = 0; i < a.rows; i++) {
        let s = 0;
        for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) s += a.values[k] * x[a.colIdx[k]];
        out[i] = s;
      }
    },
  };
  return op;
}

/**
 * A Krylov solver of dimension n with the options given (cg.test, minres.test, gmres.test):
 * it factors a matrix or a matrix-free operator.
 */
export type MakeSolver = (
  n: number,
  options?: LinearSolverOptions,
) => Omit<LinearSolver, "factor"> & { factor(a: MatrixOrOperator): void };

/**
 * An initial guess that already solves A x = b (a dense LU solve) costs no iteration, and
 * b = 0 gives x = 0 exactly whatever x held.
 */
export function expectInitialGuessAndZeroRhs(make: MakeSolver): void {
  const n = 60;
  const a = randomSpd(n, 6, 8);
  const b = randomVector(n, 9);
  const s = make(n);
  s.factor(a);
  const x = Float64Array.from(denseLuReference(a, b));
  const info = s.solve(b, x);
  expect(info.iterations).toBe(0);
  expect(info.converged).toBe(true);
  const z = randomVector(n, 10);
  expect(s.solve(new Float64Array(n), z).converged).toBe(true);
  expect(Array.from(z).every((v) => v === 0)).toBe(true);
}

/**
 * Block Jacobi on a matrix-free operator that gives its block diagonal (randomSpdBodyBlocks):
 * the solution matches ml-matrix's dense inverse to 1e-10.
 */
export function expectBlockJacobiMatchesDense(make: MakeSolver): void {
  const { m, dense } = randomSpdBodyBlocks(5);
  const n = m.size;
  const op: LinearOperator = {
    n,
    apply: (x, out) => m.multiply(x, out),
    blockDiagonal: () => m,
  };
  const s = make(n, { tolerance: 1e-13, preconditioner: "block-jacobi" });
  s.factor(op);
  const r = mulberry32(11);
  const b = Float64Array.from({ length: n }, () => 2 * r() - 1);
  const x = new Float64Array(n);
  expect(s.solve(b, x).converged).toBe(true);
  const ref = inverse(dense).mmul(Matrix.columnVector(Array.from(b)));
  for (let i = 0; i < n; i++) expect(x[i]).toBeCloseTo(ref.get(i, 0), 10);
}

/**
 * The symmetric shifted Laplacian stencil as a matrix-free operator: the solve matches a
 * dense LU solve of its matrix to 1e-10 (relative).
 */
export function expectMatrixFreeLaplacian(make: MakeSolver, tolerance: number): void {
  const { operator, matrix } = shiftedLaplacian(14, 0.5, true);
  const b = randomVector(operator.n, 1);
  const s = make(operator.n, { tolerance });
  s.factor(operator);
  const x = new Float64Array(operator.n);
  expect(s.solve(b, x).converged).toBe(true);
  expect(relativeError(x, denseLuReference(matrix, b))).toBeLessThan(1e-10);
}

/**
 * A Krylov solve of A x = b from x = 0 (s given its tolerance): converged, ‖b − A x‖/‖b‖
 * measured here < 2·tolerance, x within 1e-10 of ref (relative), and, when
 * `reportedResidual`, the residual the solver reports ≤ tolerance (GMRES reports its
 * preconditioned estimate, which the callers leave out). `label` names the variant.
 */
export function expectKrylovSolve(
  s: Pick<LinearSolver, "factor" | "solve">,
  a: CsrMatrix,
  b: Float64Array,
  ref: Float64Array,
  tolerance: number,
  label: string,
  reportedResidual = true,
): void {
  s.factor(a);
  const x = new Float64Array(a.rows);
  const info = s.solve(b, x);
  expect(info.converged, label).toBe(true);
  if (reportedResidual) expect(info.residual, label).toBeLessThanOrEqual(tolerance);
  expect(relativeResidual(a, x, b), label).toBeLessThan(2 * tolerance);
  expect(relativeError(x, ref), label).toBeLessThan(1e-10);
}
