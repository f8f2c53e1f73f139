import type { CsrMatrix } from "../../math/csr";

/**
 * Remembers the sparsity pattern a direct solver analysed, so that `factor` redoes the
 * symbolic analysis only when the pattern really changes. The comparison is by content
 * (O(nnz), negligible next to a factorization), so a rebuilt matrix with an identical
 * pattern is recognised too, and an in-place edit of the structure arrays is not missed.
 */
export class PatternCache {
  private rows = -1;
  private cols = -1;
  private rowPtr: Int32Array = new Int32Array(0);
  private colIdx: Int32Array = new Int32Array(0);

  /** True when a has the pattern last passed to `remember`. */
  matches(a: CsrMatrix): boolean {
    if (a.rows !== this.rows || a.cols !== this.cols) return false;
    const rp = a.rowPtr;
    const ci = a.colIdx;
    const nnz = rp[a.rows];
    if (rp.length !== this.rowPtr.length || nnz !== this.rowPtr[this.rows]) return false;
    for (let i = 0; i <= a.rows; i++) if (rp[i] !== this.rowPtr[i]) return false;
    for (let k = 0; k < nnz; k++) if (ci[k] !== this.colIdx[k]) return false;
    return true;
  }

  /** Stores a copy of a's pattern. */
  remember(a: CsrMatrix): void {
    this.rows = a.rows;
    this.cols = a.cols;
    this.rowPtr = a.rowPtr.slice();
    this.colIdx = a.colIdx.slice(0, a.rowPtr[a.rows]);
  }
}

/** Index of entry (i, j) in a CSR matrix with sorted columns, or −1 (binary search). */
export function csrFind(a: CsrMatrix, i: number, j: number): number {
  let lo = a.rowPtr[i];
  let hi = a.rowPtr[i + 1] - 1;
  const c = a.colIdx;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = c[mid];
    if (v === j) return mid;
    if (v < j) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Euclidean dot product of the first n entries. */
export function dot(x: Float64Array, y: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

/** Euclidean norm of the first n entries, scaled to avoid overflow and underflow. */
export function norm2(x: Float64Array, n: number): number {
  let scale = 0;
  for (let i = 0; i < n; i++) {
    const a = Math.abs(x[i]);
    if (a > scale) scale = a;
  }
  if (scale === 0 || !Number.isFinite(scale)) return scale;
  let s = 0;
  for (let i = 0; i < n; i++) {
    const t = x[i] / scale;
    s += t * t;
  }
  return scale * Math.sqrt(s);
}
