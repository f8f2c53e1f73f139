/**
 * Dense LU with partial pivoting for small systems: P A = L U by the left-looking
 * (Crout/Doolittle "jki") form of Golub & Van Loan alg. 3.4.1 as ml-matrix's
 * `LuDecomposition` writes it (JAMA's order: column j updated by the dot products with
 * the columns before it, the largest entry below the diagonal pivoted up, the column below
 * the pivot divided by it), so the factors are bit-identical to ml-matrix's. Written here
 * in place on preallocated Float64Arrays because ml-matrix builds a Matrix of row arrays,
 * its clone and the two triangular factors at each call: on a 15-unknown spring chain
 * stepped by moreau-jean those allocations were 40 % of the step. `factor` copies the
 * CsrMatrix into the factors' buffer and factors it there; neither `factor` nor `solve`
 * allocates: x = U⁻¹ L⁻¹ P b.
 */
import type { CsrMatrix } from "../../math/csr";
import { checkDeadline } from "../deadline";
import { csrToDenseInto, isZeroPivot, unitLowerSolveInPlace, upperSolveInPlace } from "./dense";
import type { LinearSolveInfo, LinearSolver } from "./linear-solver";

export class DenseLuSolver implements LinearSolver {
  readonly name = "dense-lu" as const;
  private n = 0;
  /**
   * max_i |a_ij| of each column j of A, for the zero-pivot test: all factorHeld reads of A
   * once L U overwrites it, so A is not kept (an n × n copy of it doubled what the solver
   * holds: 16 n² bytes where cost.ts counts the factors' 8 n²).
   */
  private columnMax: Float64Array = new Float64Array(0);
  /** L (strict lower, unit diagonal implied) and U (upper) packed row-major. */
  private lu: Float64Array = new Float64Array(0);
  /** Row i of P A is row piv[i] of A. */
  private piv: Int32Array = new Int32Array(0);
  private work: Float64Array = new Float64Array(0);
  private ok = false;
  /** Index of the first (near-)zero pivot of U, or −1. */
  zeroPivot = -1;

  factor(a: CsrMatrix): void {
    if (a.rows !== a.cols) throw new Error("dense-lu: matrix must be square");
    this.reserve(a.rows);
    csrToDenseInto(a, this.lu);
    this.factorHeld();
  }

  /**
   * Factors the row-major n × n matrix `a` (its first n² entries; copied). The buffers grow
   * to the largest n seen and are kept, so that systems of varying small sizes (the
   * unresolved servos' Woodbury matrix, stiff-rates.ts) do not allocate.
   */
  factorDense(a: Float64Array, n: number): void {
    this.reserve(n);
    for (let i = 0; i < n * n; i++) this.lu[i] = a[i];
    this.factorHeld();
  }

  /** Sets the order n, growing the buffers when they are too small. */
  private reserve(n: number): void {
    this.n = n;
    if (this.piv.length >= n) return;
    this.columnMax = new Float64Array(n);
    this.lu = new Float64Array(n * n);
    this.piv = new Int32Array(n);
    this.work = new Float64Array(n);
  }

  /** The LU, in place, of the n × n matrix held in `lu`. */
  private factorHeld(): void {
    const n = this.n;
    const { lu, piv, work: col, columnMax } = this;
    columnMax.fill(0, 0, n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) columnMax[j] = Math.max(columnMax[j], Math.abs(lu[i * n + j]));
    for (let i = 0; i < n; i++) piv[i] = i;
    for (let j = 0; j < n; j++) {
      // O(n²) a column: the host's deadline is checked every 32 (an order-4000 system
      // takes tens of seconds, past a server worker's watchdog)
      if ((j & 31) === 31) checkDeadline();
      // column j of L U: a_ij less the dot product of row i of L with column j of U so far
      for (let i = 0; i < n; i++) col[i] = lu[i * n + j];
      for (let i = 0; i < n; i++) {
        const kmax = Math.min(i, j);
        let s = 0;
        for (let k = 0; k < kmax; k++) s += lu[i * n + k] * col[k];
        col[i] -= s;
        lu[i * n + j] = col[i];
      }
      // the first largest entry at or below the diagonal becomes the pivot
      let p = j;
      for (let i = j + 1; i < n; i++) if (Math.abs(col[i]) > Math.abs(col[p])) p = i;
      if (p !== j) {
        for (let k = 0; k < n; k++) {
          const t = lu[p * n + k];
          lu[p * n + k] = lu[j * n + k];
          lu[j * n + k] = t;
        }
        const v = piv[p];
        piv[p] = piv[j];
        piv[j] = v;
      }
      const pivot = lu[j * n + j];
      if (pivot !== 0) for (let i = j + 1; i < n; i++) lu[i * n + j] /= pivot;
    }
    this.zeroPivot = -1;
    // Pivot u_kk against the largest entry of column k of A and of U (dense.ts isZeroPivot).
    for (let k = 0; k < n && this.zeroPivot < 0; k++) {
      let scale = columnMax[k];
      for (let i = 0; i <= k; i++) scale = Math.max(scale, Math.abs(this.lu[i * n + k]));
      if (isZeroPivot(this.lu[k * n + k], scale, k + 1)) this.zeroPivot = k;
    }
    this.ok = this.zeroPivot < 0;
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const n = this.n;
    if (!this.ok) {
      x.fill(Number.NaN, 0, n);
      return { iterations: 0, residual: Number.NaN, converged: false };
    }
    const y = this.work;
    for (let i = 0; i < n; i++) y[i] = b[this.piv[i]];
    unitLowerSolveInPlace(this.lu, n, y);
    upperSolveInPlace(this.lu, n, y);
    for (let i = 0; i < n; i++) x[i] = y[i];
    return { iterations: 0, residual: 0, converged: true };
  }
}
