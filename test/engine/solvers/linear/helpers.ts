/**
 * Test helpers for the linear solvers: seeded random matrices, the independent dense
 * reference (ml-matrix LU with partial pivoting) and error measures. Nothing here uses
 * the code under test.
 */
import { LuDecomposition, Matrix } from "ml-matrix";
import { type CsrMatrix, csrFromTriplets, csrToDense } from "../../../../src/engine/math/csr";
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

/** Reference solution by ml-matrix dense LU with partial pivoting. */
export function denseLuReference(a: CsrMatrix, b: Float64Array): Float64Array {
  const d = csrToDense(a);
  const lu = new LuDecomposition(Matrix.from1DArray(a.rows, a.cols, d));
  const x = lu.solve(Matrix.columnVector(Array.from(b)));
  return Float64Array.from(x.getColumn(0));
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
