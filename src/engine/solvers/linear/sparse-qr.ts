/**
 * Rank-revealing QR with column pivoting, and minimum-norm least squares.
 *
 * First version: the sparse input is copied to a dense row-major array and factored
 * with Householder reflections (Businger & Golub, "Linear least squares solutions by
 * Householder transformations", Numer. Math. 7, 1965; Golub & Van Loan, "Matrix
 * Computations", 4th ed., §5.4.2), which is fine up to a few thousand columns. The
 * "sparse-qr" solver name is kept for the interface; a multifrontal sparse QR can
 * replace the kernel later without changing the API.
 *
 * A P = Q [R11 R12; 0 R22]: at step k the remaining column of largest norm is pivoted
 * in (column norms downdated as LAPACK dlaqp2, recomputed when cancellation makes the
 * downdate inaccurate). The factorization stops at the numerical rank r, the first k
 * where the largest remaining column norm is ≤ threshold, with
 *
 *     threshold = tol · |R_00|,  tol = 1e-10 by default (relative tolerance),
 *
 * |R_00| being the largest column norm of A (σ_max/√n ≤ |R_00| ≤ σ_max). Everything
 * below the threshold (R22) is treated as zero. 1e-10 is deliberately looser than the
 * roundoff floor max(m,n)·ε: constraint Jacobians are computed from positions carrying
 * roundoff, and a set of constraints whose Jacobian has σ_min/σ_max ≲ 1e-10 would give
 * multipliers amplified by ≳ 1e10, i.e. is redundant for practical purposes. Pass a
 * smaller tol to detect only exact (roundoff-level) dependence.
 *
 * The minimum-norm least-squares solution of min ‖A x − b‖ (R22 taken as 0) uses the
 * complete orthogonal decomposition: with M = [R11 R12] (r×n, full row rank) and the
 * QR factorization Mᵀ = Z [T; 0], the solutions of M y = (Qᵀb)_{1:r} of least norm are
 * y = Z [T⁻ᵀ (Qᵀb)_{1:r}; 0] (Golub & Van Loan §5.5.2), and x = P y. It equals A⁺ b for
 * the rank-r matrix Q [R11 R12; 0 0] Pᵀ.
 */

import type { CsrMatrix } from "../../math/csr";
import { checkDeadline } from "../deadline";
import { csrToDenseInto } from "./dense";
import type { LinearSolveInfo, LinearSolver, LinearSolverOptions } from "./linear-solver";

/** Default relative rank tolerance (see the file comment). */
export const DEFAULT_RANK_TOLERANCE = 1e-10;

export interface RankRevealingQr {
  readonly rows: number;
  readonly cols: number;
  /** Numerical rank r. */
  readonly rank: number;
  /** Relative tolerance used. */
  readonly tolerance: number;
  /** Absolute threshold tol·|R_00| below which a column norm counts as zero. */
  readonly threshold: number;
  /** Column permutation: column k of A P is column perm[k] of A. */
  readonly perm: Int32Array;
  /** |R_kk| for k < rank (non-increasing up to roundoff). */
  readonly rDiag: Float64Array;
  /** Largest remaining column norm when the factorization stopped (0 at full rank min(m, n)). */
  readonly residualNorm: number;
  /** rows×cols row-major: R in the upper part of the first `rank` rows, Householder vectors below. */
  readonly qr: Float64Array;
  /** Householder scalars, length rank: H_k = I − tau_k v_k v_kᵀ, v_k(k) = 1. */
  readonly tau: Float64Array;
  /** cols×rank row-major QR of [R11 R12]ᵀ (only when rank < cols): T upper, vectors below. */
  readonly cod: Float64Array;
  readonly codTau: Float64Array;
  /** Work vectors for qrMinNormSolve (length rows and cols). */
  readonly workRows: Float64Array;
  readonly workCols: Float64Array;
}

/**
 * Householder vector of x = a[off + i·stride], i = 0..len-1 (LAPACK dlarfg): overwrites
 * x with (β, v_1..v_{len-1}) where H x = β e_1, H = I − τ v vᵀ, v_0 = 1; returns τ.
 */
function householder(a: Float64Array, off: number, stride: number, len: number): number {
  const alpha = a[off];
  let s = 0;
  for (let i = 1; i < len; i++) {
    const v = a[off + i * stride];
    s += v * v;
  }
  if (s === 0) return 0; // already e_1 · alpha: H = I
  const nrm = Math.sqrt(alpha * alpha + s);
  const beta = alpha >= 0 ? -nrm : nrm;
  const tau = (beta - alpha) / beta;
  const scale = 1 / (alpha - beta);
  for (let i = 1; i < len; i++) a[off + i * stride] *= scale;
  a[off] = beta;
  return tau;
}

/**
 * Applies H = I − τ v vᵀ (v stored in column k of the row-major `a` (ld columns), rows
 * k..m-1, v_k = 1) to columns j0..ld-1 of rows k..m-1. `s` is a work row of length ld.
 * Loops run along rows for memory locality.
 */
function applyLeft(
  a: Float64Array,
  m: number,
  ld: number,
  k: number,
  tau: number,
  j0: number,
  s: Float64Array,
): void {
  if (tau === 0 || j0 >= ld) return;
  const rowK = k * ld;
  for (let j = j0; j < ld; j++) s[j] = a[rowK + j];
  for (let i = k + 1; i < m; i++) {
    const vi = a[i * ld + k];
    if (vi === 0) continue;
    const row = i * ld;
    for (let j = j0; j < ld; j++) s[j] += vi * a[row + j];
  }
  for (let j = j0; j < ld; j++) {
    s[j] *= tau;
    a[rowK + j] -= s[j];
  }
  for (let i = k + 1; i < m; i++) {
    const vi = a[i * ld + k];
    if (vi === 0) continue;
    const row = i * ld;
    for (let j = j0; j < ld; j++) a[row + j] -= s[j] * vi;
  }
}

/**
 * QR factorization with column pivoting of the dense row-major rows×cols matrix `a`
 * (not modified), stopped at the numerical rank (see the file comment for `tol`).
 */
export function rankRevealingQr(
  a: Float64Array,
  rows: number,
  cols: number,
  tol: number = DEFAULT_RANK_TOLERANCE,
): RankRevealingQr {
  const m = rows;
  const n = cols;
  if (a.length < m * n) throw new Error("rankRevealingQr: array shorter than rows·cols");
  if (!(tol >= 0)) throw new Error("rankRevealingQr: tol must be ≥ 0");
  const qr = a.slice(0, m * n);
  const perm = new Int32Array(n);
  for (let j = 0; j < n; j++) perm[j] = j;
  const kmax = Math.min(m, n);
  const tau = new Float64Array(kmax);
  const rDiag = new Float64Array(kmax);
  const vn1 = new Float64Array(n); // current norm estimates of the trailing columns
  const vn2 = new Float64Array(n); // norms at the last exact computation
  const s = new Float64Array(n);
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) vn1[j] += qr[i * n + j] ** 2;
  for (let j = 0; j < n; j++) {
    vn1[j] = Math.sqrt(vn1[j]);
    vn2[j] = vn1[j];
  }
  const tol3z = Math.sqrt(Number.EPSILON);
  let threshold = 0;
  let rank = kmax;
  let residualNorm = 0;
  for (let k = 0; k < kmax; k++) {
    // O(m n) a column: the host's deadline every 32 (dense-lu.ts)
    if ((k & 31) === 31) checkDeadline();
    let p = k;
    for (let j = k + 1; j < n; j++) if (vn1[j] > vn1[p]) p = j;
    if (k === 0) threshold = tol * vn1[p];
    if (!(vn1[p] > threshold) || vn1[p] === 0) {
      rank = k;
      residualNorm = vn1[p];
      break;
    }
    if (p !== k) {
      for (let i = 0; i < m; i++) {
        const t = qr[i * n + p];
        qr[i * n + p] = qr[i * n + k];
        qr[i * n + k] = t;
      }
      const tp = perm[p];
      perm[p] = perm[k];
      perm[k] = tp;
      vn1[p] = vn1[k];
      vn2[p] = vn2[k];
    }
    tau[k] = householder(qr, k * n + k, n, m - k);
    rDiag[k] = Math.abs(qr[k * n + k]);
    applyLeft(qr, m, n, k, tau[k], k + 1, s);
    // Downdate the trailing column norms (LAPACK dlaqp2 with the LAWN 176 safeguard).
    for (let j = k + 1; j < n; j++) {
      if (vn1[j] === 0) continue;
      let t = Math.abs(qr[k * n + j]) / vn1[j];
      t = Math.max(0, 1 - t * t);
      const t2 = t * (vn1[j] / vn2[j]) ** 2;
      if (t2 <= tol3z) {
        let sq = 0;
        for (let i = k + 1; i < m; i++) sq += qr[i * n + j] ** 2;
        vn1[j] = Math.sqrt(sq);
        vn2[j] = vn1[j];
      } else vn1[j] *= Math.sqrt(t);
    }
  }

  // Complete orthogonal decomposition of [R11 R12] when rank < cols.
  let cod = new Float64Array(0);
  let codTau = new Float64Array(0);
  if (rank < n && rank > 0) {
    const r = rank;
    cod = new Float64Array(n * r);
    codTau = new Float64Array(r);
    for (let i = 0; i < r; i++) for (let j = i; j < n; j++) cod[j * r + i] = qr[i * n + j];
    const w = new Float64Array(r);
    for (let i = 0; i < r; i++) {
      codTau[i] = householder(cod, i * r + i, r, n - i);
      applyLeft(cod, n, r, i, codTau[i], i + 1, w);
    }
  }
  return {
    rows: m,
    cols: n,
    rank,
    tolerance: tol,
    threshold,
    perm,
    rDiag: rDiag.slice(0, rank),
    residualNorm,
    qr,
    tau: tau.slice(0, rank),
    cod,
    codTau,
    workRows: new Float64Array(m),
    workCols: new Float64Array(n),
  };
}

/**
 * x = the minimum-norm least-squares solution of A x ≈ b for the rank-revealing
 * factorization f (b has f.rows entries, x f.cols). Returns ‖b − A x‖ as the norm of
 * the part of Qᵀb outside the first `rank` rows (exact for the rank-r matrix). No
 * allocation (uses f's work vectors).
 */
export function qrMinNormSolve(f: RankRevealingQr, b: Float64Array, x: Float64Array): number {
  const { rows: m, cols: n, rank: r, qr, tau, perm } = f;
  const c = f.workRows;
  const y = f.workCols;
  for (let i = 0; i < m; i++) c[i] = b[i];
  // c ← Qᵀ b = H_{r-1} … H_0 b
  for (let k = 0; k < r; k++) {
    const t = tau[k];
    if (t === 0) continue;
    let s = c[k];
    for (let i = k + 1; i < m; i++) s += qr[i * n + k] * c[i];
    s *= t;
    c[k] -= s;
    for (let i = k + 1; i < m; i++) c[i] -= s * qr[i * n + k];
  }
  let res = 0;
  for (let i = r; i < m; i++) res += c[i] * c[i];
  if (r === n) {
    // Full column rank: R11 y = c_1.
    for (let k = n - 1; k >= 0; k--) {
      let s = c[k];
      for (let j = k + 1; j < n; j++) s -= qr[k * n + j] * y[j];
      y[k] = s / qr[k * n + k];
    }
  } else {
    y.fill(0, 0, n);
    if (r > 0) {
      const { cod, codTau } = f;
      // Tᵀ w = c_1 (T upper triangular r×r stored in the first r rows of cod).
      for (let i = 0; i < r; i++) {
        let s = c[i];
        for (let j = 0; j < i; j++) s -= cod[j * r + i] * y[j];
        y[i] = s / cod[i * r + i];
      }
      // y ← Z [w; 0] = H'_0 … H'_{r-1} [w; 0]
      for (let i = r - 1; i >= 0; i--) {
        const t = codTau[i];
        if (t === 0) continue;
        let s = y[i];
        for (let j = i + 1; j < n; j++) s += cod[j * r + i] * y[j];
        s *= t;
        y[i] -= s;
        for (let j = i + 1; j < n; j++) y[j] -= s * cod[j * r + i];
      }
    }
  }
  for (let k = 0; k < n; k++) x[perm[k]] = y[k];
  return Math.sqrt(res);
}

export interface DependentRows {
  /** Numerical rank of A (number of independent rows). */
  rank: number;
  /** Rows kept, ascending. */
  independent: Int32Array;
  /** Rows that are (to the tolerance) combinations of earlier kept rows, ascending. */
  dependent: Int32Array;
  /** Absolute threshold tol·max_i ‖a_i‖ on the distance to the span of earlier rows. */
  threshold: number;
}

/**
 * Which rows of the dense row-major rows×cols matrix A are linearly dependent on
 * earlier rows: Householder QR of Aᵀ (a column of Aᵀ is a row of A) with column pivoting
 * by deferral (Heath, SIAM J. Sci. Stat. Comput. 3, 1982; as SuiteSparseQR's rank
 * detection): columns are taken in order, and a column whose norm below the current
 * step (its distance from the span of the columns already accepted) is
 * ≤ tol·max_i ‖a_i‖ is moved to the end (declared dependent) instead of being pivoted.
 * So among duplicated or combined rows the earliest ones are kept and the later ones
 * named, which is what redundant-constraint reporting needs. `tol` as in rankRevealingQr.
 */
export function dependentRows(
  a: Float64Array,
  rows: number,
  cols: number,
  tol: number = DEFAULT_RANK_TOLERANCE,
): DependentRows {
  // t = Aᵀ, cols×rows row-major.
  const t = new Float64Array(rows * cols);
  let maxNorm = 0;
  for (let i = 0; i < rows; i++) {
    let s = 0;
    for (let j = 0; j < cols; j++) {
      const v = a[i * cols + j];
      t[j * rows + i] = v;
      s += v * v;
    }
    maxNorm = Math.max(maxNorm, Math.sqrt(s));
  }
  const threshold = tol * maxNorm;
  const independent: number[] = [];
  const dependent: number[] = [];
  const w = new Float64Array(rows);
  let k = 0;
  for (let j = 0; j < rows; j++) {
    if ((j & 31) === 31) checkDeadline();
    let sq = 0;
    for (let i = k; i < cols; i++) sq += t[i * rows + j] ** 2;
    const nrm = Math.sqrt(sq);
    if (k >= cols || !(nrm > threshold) || nrm === 0) {
      dependent.push(j);
      continue;
    }
    // Move column j to position k (columns k..j-1 are all deferred, never read again).
    if (j !== k) for (let i = 0; i < cols; i++) t[i * rows + k] = t[i * rows + j];
    const tk = householder(t, k * rows + k, rows, cols - k);
    applyLeft(t, cols, rows, k, tk, j + 1, w);
    independent.push(j);
    k++;
  }
  return {
    rank: k,
    independent: Int32Array.from(independent),
    dependent: Int32Array.from(dependent),
    threshold,
  };
}

/**
 * LinearSolver over rankRevealingQr: `solve` returns the minimum-norm least-squares
 * solution (rectangular A allowed: b has A.rows entries, x A.cols). `rank` is the
 * numerical rank of the last factored matrix; `residual` in the solve info is
 * ‖b − A x‖/‖b‖, which is legitimately nonzero for an inconsistent system, so
 * `converged` is always true after a successful factorization.
 */
export class QrSolver implements LinearSolver {
  readonly name = "sparse-qr" as const;
  rankTolerance: number;
  private dense: Float64Array = new Float64Array(0);
  private f: RankRevealingQr | null = null;

  constructor(options: LinearSolverOptions = {}) {
    this.rankTolerance = options.rankTolerance ?? DEFAULT_RANK_TOLERANCE;
  }

  /** Numerical rank of the last factored matrix (−1 before the first factor). */
  get rank(): number {
    return this.f ? this.f.rank : -1;
  }

  /** The last factorization. */
  get factorization(): RankRevealingQr | null {
    return this.f;
  }

  factor(a: CsrMatrix): void {
    if (this.dense.length !== a.rows * a.cols) this.dense = new Float64Array(a.rows * a.cols);
    csrToDenseInto(a, this.dense);
    this.f = rankRevealingQr(this.dense, a.rows, a.cols, this.rankTolerance);
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const f = this.f;
    if (!f) throw new Error("sparse-qr: solve before factor");
    const res = qrMinNormSolve(f, b, x);
    let bn = 0;
    for (let i = 0; i < f.rows; i++) bn += b[i] * b[i];
    bn = Math.sqrt(bn);
    return { iterations: 0, residual: bn > 0 ? res / bn : res, converged: true };
  }
}
