/**
 * Dense LU with partial pivoting (ml-matrix `LuDecomposition`, Doolittle/Crout form of
 * Golub & Van Loan alg. 3.4.1) for small systems. `factor` copies the CsrMatrix to a
 * dense buffer once and factors P A = L U; `solve` applies the stored factors without
 * allocating: x = U⁻¹ L⁻¹ P b.
 */
import { LuDecomposition, Matrix } from "ml-matrix";
import type { CsrMatrix } from "../../math/csr";
import { csrToDenseInto, isZeroPivot, unitLowerSolveInPlace, upperSolveInPlace } from "./dense";
import type { LinearSolveInfo, LinearSolver } from "./linear-solver";

export class DenseLuSolver implements LinearSolver {
  readonly name = "dense-lu" as const;
  private n = 0;
  private dense: Float64Array = new Float64Array(0);
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
    const n = a.rows;
    if (n !== this.n) {
      this.n = n;
      this.dense = new Float64Array(n * n);
      this.lu = new Float64Array(n * n);
      this.piv = new Int32Array(n);
      this.work = new Float64Array(n);
    }
    csrToDenseInto(a, this.dense);
    const dec = new LuDecomposition(Matrix.from1DArray(n, n, this.dense));
    const l = dec.lowerTriangularMatrix;
    const u = dec.upperTriangularMatrix;
    const p = dec.pivotPermutationVector;
    this.zeroPivot = -1;
    for (let i = 0; i < n; i++) {
      this.piv[i] = p[i];
      for (let j = 0; j < n; j++) this.lu[i * n + j] = i > j ? l.get(i, j) : u.get(i, j);
    }
    // Pivot u_kk against the largest entry of column k of A and of U (dense.ts isZeroPivot).
    for (let k = 0; k < n && this.zeroPivot < 0; k++) {
      let scale = 0;
      for (let i = 0; i < n; i++) {
        scale = Math.max(scale, Math.abs(this.dense[i * n + k]));
        if (i <= k) scale = Math.max(scale, Math.abs(this.lu[i * n + k]));
      }
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
