/**
 * Small dense helpers shared by the dense solvers: CSR → dense copies into preallocated
 * row-major buffers and the triangular substitutions of an already computed
 * factorization (they apply the factors without allocating).
 */
import type { CsrMatrix } from "../../math/csr";

/** out (rows·cols, row-major) = A, summing duplicate entries. */
export function csrToDenseInto(a: CsrMatrix, out: Float64Array): void {
  out.fill(0, 0, a.rows * a.cols);
  const { rowPtr, colIdx, values } = a;
  for (let i = 0; i < a.rows; i++)
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) out[i * a.cols + colIdx[k]] += values[k];
}

/**
 * out (n·n, row-major) = the symmetric matrix that A stands for: where both a_ij and
 * a_ji are stored their mean (A + Aᵀ)/2, where only one triangle stores the entry it is
 * mirrored. The result is exactly symmetric in floating point ((x+y)/2 = (y+x)/2).
 * `stored` is an n·n work mask.
 */
export function symmetricDenseInto(a: CsrMatrix, out: Float64Array, stored: Uint8Array): void {
  const n = a.rows;
  out.fill(0, 0, n * n);
  stored.fill(0, 0, n * n);
  const { rowPtr, colIdx, values } = a;
  for (let i = 0; i < n; i++)
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
      out[i * n + colIdx[k]] += values[k];
      stored[i * n + colIdx[k]] = 1;
    }
  for (let i = 0; i < n; i++)
    for (let j = 0; j < i; j++) {
      const ij = i * n + j;
      const ji = j * n + i;
      let v: number;
      if (stored[ij] && stored[ji]) v = 0.5 * (out[ij] + out[ji]);
      else v = stored[ij] ? out[ij] : out[ji];
      out[ij] = v;
      out[ji] = v;
    }
}

/**
 * Zero-pivot test shared by the direct solvers. A pivot is formed as an entry of A minus
 * a sum of update terms; when |pivot| ≤ terms·ε·scale, with `scale` the magnitude of what
 * was combined to form it (|a_kk| + Σ|update| for LDLᵀ and Cholesky; the largest entry of
 * the pivot column, original or updated, for LU) and `terms` the number of terms, the
 * pivot cannot be told from rounding error: it is exactly 0, or what cancellation leaves
 * of a singular matrix. The test is invariant under diagonal scaling (D A D for LDLᵀ,
 * column scaling for LU), so badly scaled but well-posed systems (mixed units: masses
 * and small inertias next to stiff springs) are not rejected.
 */
export function isZeroPivot(pivot: number, scale: number, terms: number): boolean {
  return !(Math.abs(pivot) > terms * Number.EPSILON * scale);
}

/** y ← L⁻¹ y with L unit lower triangular, stored in the strict lower part of lu (n·n). */
export function unitLowerSolveInPlace(lu: Float64Array, n: number, y: Float64Array): void {
  for (let i = 1; i < n; i++) {
    let s = y[i];
    const row = i * n;
    for (let j = 0; j < i; j++) s -= lu[row + j] * y[j];
    y[i] = s;
  }
}

/** y ← U⁻¹ y with U upper triangular (diagonal included) in the upper part of lu (n·n). */
export function upperSolveInPlace(lu: Float64Array, n: number, y: Float64Array): void {
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i];
    const row = i * n;
    for (let j = i + 1; j < n; j++) s -= lu[row + j] * y[j];
    y[i] = s / lu[row + i];
  }
}
