/**
 * Dense Cholesky A = L Lᵀ (ml-matrix `CholeskyDecomposition`, Cholesky–Banachiewicz) for
 * small symmetric positive definite systems. A is read as a symmetric matrix: where
 * both triangles are stored their mean is used, a triangle-only storage is mirrored.
 * `factor` converts to dense once; `solve` applies L and Lᵀ without allocating.
 * A matrix that is not positive definite (a pivot d_j = a_jj − Σ l_jk² that is ≤ 0 or
 * at rounding level, see dense.ts isZeroPivot) reports converged = false.
 */
import { CholeskyDecomposition, Matrix } from "ml-matrix";
import type { CsrMatrix } from "../../math/csr";
import { isZeroPivot, symmetricDenseInto } from "./dense";
import type { LinearSolveInfo, LinearSolver } from "./linear-solver";

export class DenseCholeskySolver implements LinearSolver {
  readonly name = "dense-cholesky" as const;
  private n = 0;
  private dense: Float64Array = new Float64Array(0);
  private stored: Uint8Array = new Uint8Array(0);
  /** L row-major (lower triangle). */
  private l: Float64Array = new Float64Array(0);
  private work: Float64Array = new Float64Array(0);
  private ok = false;

  factor(a: CsrMatrix): void {
    if (a.rows !== a.cols) throw new Error("dense-cholesky: matrix must be square");
    const n = a.rows;
    if (n !== this.n) {
      this.n = n;
      this.dense = new Float64Array(n * n);
      this.stored = new Uint8Array(n * n);
      this.l = new Float64Array(n * n);
      this.work = new Float64Array(n);
    }
    symmetricDenseInto(a, this.dense, this.stored);
    const dec = new CholeskyDecomposition(Matrix.from1DArray(n, n, this.dense));
    const lm = dec.lowerTriangularMatrix;
    // The Cholesky pivot d_i = a_ii − Σ_j l_ij² = l_ii² (see dense.ts isZeroPivot).
    let ok = dec.isPositiveDefinite();
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let j = 0; j <= i; j++) {
        const v = lm.get(i, j);
        this.l[i * n + j] = v;
        if (j < i) sum += v * v;
      }
      const d = this.l[i * n + i];
      if (isZeroPivot(d * d, Math.abs(this.dense[i * n + i]) + sum, i + 1)) ok = false;
    }
    this.ok = ok;
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const n = this.n;
    if (!this.ok) {
      x.fill(Number.NaN, 0, n);
      return { iterations: 0, residual: Number.NaN, converged: false };
    }
    const l = this.l;
    const y = this.work;
    // L y = b
    for (let i = 0; i < n; i++) {
      let s = b[i];
      const row = i * n;
      for (let j = 0; j < i; j++) s -= l[row + j] * y[j];
      y[i] = s / l[row + i];
    }
    // Lᵀ x = y
    for (let i = n - 1; i >= 0; i--) {
      let s = y[i];
      for (let j = i + 1; j < n; j++) s -= l[j * n + i] * y[j];
      y[i] = s / l[i * n + i];
    }
    for (let i = 0; i < n; i++) x[i] = y[i];
    return { iterations: 0, residual: 0, converged: true };
  }
}
