/**
 * Dense Cholesky A = L Lᵀ (Cholesky–Banachiewicz, row by row, in the order of ml-matrix's
 * `CholeskyDecomposition`, so L is bit-identical to ml-matrix's) for small symmetric
 * positive definite systems, in place on preallocated Float64Arrays: ml-matrix allocates
 * its matrices at each call (see dense-lu.ts). A is read as a symmetric matrix: where both
 * triangles are stored their mean is used, a triangle-only storage is mirrored. Neither
 * `factor` nor `solve` allocates. A matrix that is not positive definite (a pivot
 * d_j = a_jj − Σ l_jk² that is ≤ 0 or at rounding level, see dense.ts isZeroPivot)
 * reports converged = false.
 */
import type { CsrMatrix } from "../../math/csr";
import { checkDeadline } from "../deadline";
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
    const { dense, l } = this;
    symmetricDenseInto(a, dense, this.stored);
    let ok = true;
    for (let j = 0; j < n; j++) {
      // O(n²) a column: the host's deadline every 32 (dense-lu.ts)
      if ((j & 31) === 31) checkDeadline();
      // l_jk = (a_jk − Σ_{i<k} l_ki l_ji) / l_kk, then l_jj = √(a_jj − Σ_k l_jk²)
      let d = 0;
      for (let k = 0; k < j; k++) {
        let s = 0;
        for (let i = 0; i < k; i++) s += l[k * n + i] * l[j * n + i];
        s = (dense[j * n + k] - s) / l[k * n + k];
        l[j * n + k] = s;
        d = d + s * s;
      }
      const pivot = dense[j * n + j] - d;
      const ljj = Math.sqrt(Math.max(pivot, 0));
      l[j * n + j] = ljj;
      // the Cholesky pivot d_j = a_jj − Σ_k l_jk² = l_jj² (see dense.ts isZeroPivot)
      ok &&= pivot > 0 && !isZeroPivot(ljj * ljj, Math.abs(dense[j * n + j]) + d, j + 1);
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
