/**
 * The rank-revealing (column-pivoted Householder) QR of sparse-qr.ts: rank, dependent rows,
 * minimum-norm least squares against ml-matrix's SVD pseudo-inverse, and QrSolver on square
 * systems against ml-matrix dense LU.
 */
import { Matrix, pseudoInverse } from "ml-matrix";
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import {
  dependentRows,
  QrSolver,
  qrMinNormSolve,
  rankRevealingQr,
} from "../../../../src/engine/solvers/linear/sparse-qr";
import { denseSolve } from "../../../support/dense-solve";
import { mulberry32 } from "../../../support/random";
import {
  expectRandomSquareSystemsSolved,
  randomVector,
  relativeError,
  TEST_SIZES,
} from "./helpers";

/** Row-major rows×cols from an array of rows. */
function pack(rowsArr: number[][]): { a: Float64Array; rows: number; cols: number } {
  const rows = rowsArr.length;
  const cols = rowsArr[0].length;
  const a = new Float64Array(rows * cols);
  rowsArr.forEach((r, i) => {
    r.forEach((v, j) => {
      a[i * cols + j] = v;
    });
  });
  return { a, rows, cols };
}

function randomRow(cols: number, r: () => number): number[] {
  return Array.from({ length: cols }, () => 2 * r() - 1);
}

/** x_ref = A⁺ b by ml-matrix's SVD pseudo-inverse (singular values below 1e-10·σ_max·max(m,n) dropped). */
function pinvSolve(a: Float64Array, rows: number, cols: number, b: Float64Array): Float64Array {
  const m = Matrix.from1DArray(rows, cols, a);
  const x = pseudoInverse(m, 1e-10).mmul(Matrix.columnVector(Array.from(b)));
  return Float64Array.from(x.getColumn(0));
}

/**
 * A constraint-Jacobian-like 8×12 matrix: rows 0–4 and 7 random, row 5 duplicates row 1,
 * row 6 = 2·row0 − 3·row3. Rank 6, dependent rows {5, 6}.
 */
function redundantJacobian(seed: number) {
  const r = mulberry32(seed);
  const cols = 12;
  const rr = [0, 1, 2, 3, 4].map(() => randomRow(cols, r));
  rr.push([...rr[1]]);
  rr.push(rr[0].map((v, j) => 2 * v - 3 * rr[3][j]));
  rr.push(randomRow(cols, r));
  return pack(rr);
}

describe("rank-revealing QR", () => {
  test("detects the rank and the dependent rows of a redundant Jacobian", () => {
    const { a, rows, cols } = redundantJacobian(1);
    const f = rankRevealingQr(a, rows, cols);
    expect(f.rank).toBe(6);
    // R's diagonal magnitudes are non-increasing (column pivoting) and above threshold.
    for (let k = 1; k < f.rank; k++)
      expect(f.rDiag[k]).toBeLessThanOrEqual(f.rDiag[k - 1] * (1 + 1e-12));
    expect(f.rDiag[f.rank - 1]).toBeGreaterThan(f.threshold);
    expect(f.residualNorm).toBeLessThanOrEqual(f.threshold);
    // |R_00| is the largest column norm of A.
    let maxCol = 0;
    for (let j = 0; j < cols; j++) {
      let s = 0;
      for (let i = 0; i < rows; i++) s += a[i * cols + j] ** 2;
      maxCol = Math.max(maxCol, Math.sqrt(s));
    }
    expect(f.rDiag[0]).toBeCloseTo(maxCol, 12);
    expect(f.threshold).toBeCloseTo(1e-10 * maxCol, 20);

    const d = dependentRows(a, rows, cols);
    expect(d.rank).toBe(6);
    expect(Array.from(d.dependent)).toEqual([5, 6]);
    expect(Array.from(d.independent)).toEqual([0, 1, 2, 3, 4, 7]);
  });

  test("dependentRows keeps the earlier of duplicated rows, also for scaled copies", () => {
    const r = mulberry32(2);
    const base = [0, 1, 2, 3].map(() => randomRow(6, r));
    // rows: b0, −0.5·b2, b1, b0 (dup), b2, b3, b1 + b3
    const rr = [
      base[0],
      base[2].map((v) => -0.5 * v),
      base[1],
      [...base[0]],
      base[2],
      base[3],
      base[1].map((v, j) => v + base[3][j]),
    ];
    const { a, rows, cols } = pack(rr);
    const d = dependentRows(a, rows, cols);
    expect(d.rank).toBe(4);
    expect(Array.from(d.dependent)).toEqual([3, 4, 6]);
    expect(rankRevealingQr(a, rows, cols).rank).toBe(4);
  });

  test("the tolerance decides about nearly dependent rows", () => {
    const r = mulberry32(3);
    const rr = [0, 1, 2].map(() => randomRow(5, r));
    // row 3 = row 1 + 1e-13 · noise: dependent at the default 1e-10, not at 1e-15.
    rr.push(rr[1].map((v) => v + 1e-13 * (2 * r() - 1)));
    const { a, rows, cols } = pack(rr);
    expect(dependentRows(a, rows, cols).rank).toBe(3);
    expect(rankRevealingQr(a, rows, cols).rank).toBe(3);
    expect(dependentRows(a, rows, cols, 1e-15).rank).toBe(4);
    expect(rankRevealingQr(a, rows, cols, 1e-15).rank).toBe(4);
  });

  test("minimum-norm least squares equals the SVD pseudo-inverse solution (wide, rank-deficient)", () => {
    const { a, rows, cols } = redundantJacobian(4);
    const b = randomVector(rows, 5); // inconsistent: b ∉ range(A)
    const f = rankRevealingQr(a, rows, cols);
    const x = new Float64Array(cols);
    const res = qrMinNormSolve(f, b, x);
    const ref = pinvSolve(a, rows, cols, b);
    expect(relativeError(x, ref)).toBeLessThan(1e-10);
    // The least-squares normal equations Aᵀ(A x − b) = 0 hold, and the reported
    // residual is ‖A x − b‖.
    const rv = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      let s = -b[i];
      for (let j = 0; j < cols; j++) s += a[i * cols + j] * x[j];
      rv[i] = s;
    }
    for (let j = 0; j < cols; j++) {
      let s = 0;
      for (let i = 0; i < rows; i++) s += a[i * cols + j] * rv[i];
      expect(Math.abs(s)).toBeLessThan(1e-12);
    }
    expect(res).toBeCloseTo(Math.hypot(...rv), 12);
  });

  test("minimum-norm solution via normal equations on the full-rank part (consistent system)", () => {
    // For consistent b = A x*, the minimum-norm solution is x = Bᵀ (B Bᵀ)⁻¹ b_B with B the
    // independent rows of A (the dependent rows add no information).
    const { a, rows, cols } = redundantJacobian(6);
    const xs = randomVector(cols, 7);
    const b = new Float64Array(rows);
    for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) b[i] += a[i * cols + j] * xs[j];
    const keep = [0, 1, 2, 3, 4, 7];
    const bm = new Matrix(keep.length, cols);
    keep.forEach((i, r) => {
      for (let j = 0; j < cols; j++) bm.set(r, j, a[i * cols + j]);
    });
    const bb = Matrix.columnVector(keep.map((i) => b[i]));
    const gram = bm.mmul(bm.transpose());
    const ysol = denseSolve(gram.to1DArray(), bb.getColumn(0), keep.length);
    const ref = Float64Array.from(
      bm
        .transpose()
        .mmul(Matrix.columnVector(Array.from(ysol)))
        .getColumn(0),
    );
    const f = rankRevealingQr(a, rows, cols);
    const x = new Float64Array(cols);
    const res = qrMinNormSolve(f, b, x);
    expect(res).toBeLessThan(1e-12);
    expect(relativeError(x, ref)).toBeLessThan(1e-10);
  });

  test("tall matrix with dependent columns: rank and minimum-norm solution", () => {
    const r = mulberry32(8);
    const rowsN = 15;
    const rr: number[][] = [];
    for (let i = 0; i < rowsN; i++) {
      const row = randomRow(7, r);
      row[6] = row[1] + row[2];
      row[5] = 3 * row[0];
      rr.push(row);
    }
    const { a, rows, cols } = pack(rr);
    const f = rankRevealingQr(a, rows, cols);
    expect(f.rank).toBe(5);
    const b = randomVector(rows, 9);
    const x = new Float64Array(cols);
    qrMinNormSolve(f, b, x);
    expect(relativeError(x, pinvSolve(a, rows, cols, b))).toBeLessThan(1e-10);
  });

  test("zero matrix: rank 0 and x = 0", () => {
    const f = rankRevealingQr(new Float64Array(12), 3, 4);
    expect(f.rank).toBe(0);
    const x = Float64Array.of(1, 2, 3, 4);
    qrMinNormSolve(f, Float64Array.of(1, 1, 1), x);
    expect(Array.from(x)).toEqual([0, 0, 0, 0]);
  });

  test("QrSolver on a CsrMatrix: rank and minimum-norm multipliers", () => {
    // Jᵀ λ = f with J redundant (rows 5, 6 dependent): the multipliers are not unique;
    // the solver returns the minimum-norm λ = (Jᵀ)⁺ f.
    const { a, rows, cols } = redundantJacobian(10);
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        ri.push(j);
        ci.push(i);
        vi.push(a[i * cols + j]);
      }
    const jt = csrFromTriplets(cols, rows, ri, ci, vi); // 12×8 = Jᵀ
    const s = new QrSolver();
    s.factor(jt);
    expect(s.rank).toBe(6);
    const f = randomVector(cols, 11);
    const lambda = new Float64Array(rows);
    const info = s.solve(f, lambda);
    expect(info.converged).toBe(true);
    const dense = new Float64Array(cols * rows);
    for (let k = 0; k < ri.length; k++) dense[ri[k] * rows + ci[k]] = vi[k];
    expect(relativeError(lambda, pinvSolve(dense, cols, rows, f))).toBeLessThan(1e-10);
  });
});

describe("QrSolver on square systems against ml-matrix dense LU", () => {
  for (const n of TEST_SIZES)
    test(`random SPD, nonsymmetric with shuffled rows and KKT, n = ${n}`, () =>
      expectRandomSquareSystemsSolved(() => new QrSolver(), n));
});
