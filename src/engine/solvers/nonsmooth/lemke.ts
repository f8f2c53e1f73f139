import { grow } from "../../math/grow";
import { lcpResidual } from "./residual";
import type {
  DelassusOperator,
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
} from "./types";
import { NonsmoothProblemError } from "./types";
import { makeResult, ProblemView, ResolvedOptions } from "./workspace";

export const LEMKE_FRICTION_MESSAGE =
  "lemke solves the frictionless LCP only (contactDim 1): the Coulomb cone is not polyhedral, " +
  "so a friction-contact problem is not an LCP; use pgs or pjacobi (exact Coulomb law) or " +
  "apgd / barzilai-borwein (convex CCP relaxation) for friction";

/** Relative pivot tolerance: entries below this fraction of the column's largest are zero. */
const PIVOT_REL = 1e-11;
/** Absolute pivot floor, relative to the entering column's original magnitude. */
const PIVOT_ABS = 1e-14;
/** Relative tolerance under which two ratios (or lexicographic entries) count as tied. */
const TIE_REL = 1e-11;

/**
 * Lemke's complementary pivoting algorithm (Lemke 1965; Cottle, Pang & Stone, The Linear
 * Complementarity Problem, §4.4) with covering vector d = 1, for the frictionless LCP
 *   w = W r + q ≥ 0, r ≥ 0, wᵀr = 0
 * (exact up to round-off, for small problems: O(m²) per pivot on a dense tableau).
 *
 * Tableau: w − W r − d z₀ = q, columns [w (m) | r (m) | z₀ | rhs], starting from the basis
 * w. If q ≥ 0, r = 0 solves. Otherwise z₀ enters and the row of the most negative q_i
 * leaves; then the complement of each leaving variable enters, with the minimum-ratio test,
 * until z₀ leaves (a solution) or the entering column has no positive entry (ray
 * termination: for W positive semidefinite, hence copositive-plus, the LCP is infeasible).
 *
 * Anti-cycling: lexicographic minimum ratio. The tableau's w-columns hold B⁻¹ (they start as
 * the identity), and among rows tied on rhs_i/d_i the row whose (B⁻¹)_i/d_i is
 * lexicographically smallest leaves; this keeps every row of [rhs | B⁻¹] lexicographically
 * positive, so no basis repeats and the method terminates (for the first pivot: the largest
 * index among the tied most negative q_i). When z₀'s row is among the tied rows it leaves
 * at once (termination). Ties and zero pivots are judged with relative tolerances.
 *
 * Polishing: at termination the basic r's form the active set α; W_αα r_α = −q_α is solved
 * again from the original data (Gaussian elimination, partial pivoting) and kept when its
 * residual is not worse, so round-off accumulated over the pivots does not remain.
 *
 * options.maxIterations bounds the pivots, but never below 50(m+1) (a terminating run's pivot
 * count is not the caller's to choose); tolerance, omega and warmStart are not used.
 * On failure (ray termination, pivot limit) r is left as passed in and the result says why.
 */
export class LemkeSolver implements NonsmoothSolver {
  readonly name = "lemke";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private T = new Float64Array(0);
  private basis = new Int32Array(0);
  private cand = new Int32Array(0);
  private wd = new Float64Array(0);
  private col = new Float64Array(0);
  private z = new Float64Array(0);
  private w = new Float64Array(0);
  private zp = new Float64Array(0);
  private a = new Float64Array(0);
  private b = new Float64Array(0);
  private act = new Int32Array(0);
  private colScale = new Float64Array(0);
  private n = 0;
  private cols = 0;
  private rRef = 1;

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    if (problem.contactDim !== 1) throw new NonsmoothProblemError(LEMKE_FRICTION_MESSAGE);
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const n = v.m;
    const q = v.q;
    if (n === 0) return makeResult(0, 0, true, "lcp", "converged");
    this.ensure(n);
    const W = problem.W instanceof Float64Array ? problem.W : this.densify(problem.W, n);

    // r = 0 solves when q ≥ 0. Otherwise the first pivot row: most negative q_i, ties to the
    // largest index (the lexicographic minimum of [q_i, e_iᵀ]).
    let p = -1;
    let qmin = Number.POSITIVE_INFINITY;
    let qScale = 0;
    for (let i = 0; i < n; i++) {
      if (q[i] <= qmin) {
        qmin = q[i];
        p = i;
      }
      qScale = Math.max(qScale, Math.abs(q[i]));
    }
    if (!Number.isFinite(qScale))
      return makeResult(0, Number.NaN, false, "lcp", "diverged", "lemke: q is not finite");
    if (qmin >= 0) {
      r.fill(0, 0, n);
      return makeResult(0, 0, true, "lcp", "converged");
    }

    const C = 2 * n + 2;
    const T = this.T;
    const rhs = 2 * n + 1;
    const z0 = 2 * n;
    let wScale = 0;
    T.fill(0, 0, n * C);
    for (let i = 0; i < n; i++) {
      const row = i * C;
      T[row + i] = 1;
      for (let j = 0; j < n; j++) {
        const wij = W[i * n + j];
        T[row + n + j] = -wij;
        wScale = Math.max(wScale, Math.abs(wij));
      }
      T[row + z0] = -1;
      T[row + rhs] = q[i];
      this.basis[i] = i;
    }
    if (!Number.isFinite(wScale))
      return makeResult(0, Number.NaN, false, "lcp", "diverged", "lemke: W is not finite");
    // Original magnitude of each column (w and z₀: 1; r_j: max_i |W_ij|) for the pivot floor.
    for (let j = 0; j < n; j++) {
      this.colScale[j] = 1;
      let s = 0;
      for (let i = 0; i < n; i++) s = Math.max(s, Math.abs(W[i * n + j]));
      this.colScale[n + j] = s;
    }
    this.colScale[z0] = 1;
    this.rRef = wScale > 0 ? qScale / wScale : qScale;

    const limit = Math.max(o.maxIterations, 50 * (n + 1));
    this.pivot(p, z0);
    let pivots = 1;
    let entering = n + p; // the complement of w_p, which just left
    this.basis[p] = z0;
    for (;;) {
      if (pivots >= limit) {
        return this.failure(
          problem,
          r,
          pivots,
          "max-iterations",
          `lemke: pivot limit ${limit} reached`,
        );
      }
      const row = this.ratioTest(entering);
      if (row < 0) {
        const name = entering < n ? `w${entering}` : `r${entering - n}`;
        return this.failure(
          problem,
          r,
          pivots,
          "ray-termination",
          `lemke: ray termination after ${pivots} pivots (entering ${name} has no blocking row): ` +
            "the LCP has no solution (W positive semidefinite ⇒ infeasible), or W is not copositive-plus",
        );
      }
      this.pivot(row, entering);
      pivots++;
      const leaving = this.basis[row];
      this.basis[row] = entering;
      if (leaving === z0) break;
      entering = leaving < n ? leaving + n : leaving - n;
    }

    // Tableau solution, then the polished one from the original data.
    const z = this.z;
    const w = this.w;
    z.fill(0, 0, n);
    for (let i = 0; i < n; i++) {
      const bv = this.basis[i];
      if (bv >= n && bv < 2 * n) z[bv - n] = T[i * C + rhs];
    }
    for (let i = 0; i < n; i++) if (z[i] < 0) z[i] = 0;
    denseAffine(W, n, z, q, w);
    let res = lcpResidual(n, z, w);
    if (this.polish(W, q, n, wScale)) {
      denseAffine(W, n, this.zp, q, w);
      const resP = lcpResidual(n, this.zp, w);
      if (resP <= res) {
        res = resP;
        for (let i = 0; i < n; i++) z[i] = this.zp[i];
      }
    }
    for (let i = 0; i < n; i++) r[i] = z[i];
    return makeResult(pivots, res, true, "lcp", "converged");
  }

  private ensure(n: number): void {
    const C = 2 * n + 2;
    this.n = n;
    this.cols = C;
    this.T = grow(this.T, n * C);
    this.basis = grow(this.basis, n);
    this.cand = grow(this.cand, n);
    this.act = grow(this.act, n);
    this.col = grow(this.col, n);
    this.z = grow(this.z, n);
    this.zp = grow(this.zp, n);
    this.w = grow(this.w, n);
    this.a = grow(this.a, n * n);
    this.b = grow(this.b, n);
    this.colScale = grow(this.colScale, C);
  }

  /** Dense copy of an operator's W, column by column (W e_j). */
  private densify(op: DelassusOperator, n: number): Float64Array {
    this.wd = grow(this.wd, n * n);
    const e = this.z;
    const out = this.col;
    e.fill(0, 0, n);
    for (let j = 0; j < n; j++) {
      e[j] = 1;
      op.multiply(e, out);
      e[j] = 0;
      for (let i = 0; i < n; i++) this.wd[i * n + j] = out[i];
    }
    return this.wd;
  }

  /** Gauss–Jordan pivot on (p, c): row p scaled to a unit pivot, column c zeroed elsewhere. */
  private pivot(p: number, c: number): void {
    const { T, n, cols: C } = this;
    const rp = p * C;
    const inv = 1 / T[rp + c];
    for (let j = 0; j < C; j++) T[rp + j] *= inv;
    T[rp + c] = 1;
    for (let i = 0; i < n; i++) {
      if (i === p) continue;
      const ri = i * C;
      const f = T[ri + c];
      if (f === 0) continue;
      for (let j = 0; j < C; j++) T[ri + j] -= f * T[rp + j];
      T[ri + c] = 0;
    }
  }

  /**
   * Lexicographic minimum-ratio row for entering column c, or −1 (ray) when no entry of the
   * column is positive beyond the pivot tolerance.
   */
  private ratioTest(c: number): number {
    const { T, n, cols: C, cand } = this;
    const rhs = 2 * n + 1;
    let colMax = 0;
    for (let i = 0; i < n; i++) colMax = Math.max(colMax, Math.abs(T[i * C + c]));
    const tol = Math.max(PIVOT_REL * colMax, PIVOT_ABS * this.colScale[c]);
    let minRatio = Number.POSITIVE_INFINITY;
    let nc = 0;
    for (let i = 0; i < n; i++) {
      const d = T[i * C + c];
      if (d > tol && d > 0) {
        cand[nc++] = i;
        minRatio = Math.min(minRatio, T[i * C + rhs] / d);
      }
    }
    if (nc === 0) return -1;
    // Rows tied on the ratio.
    const tieTol = TIE_REL * Math.max(Math.abs(minRatio), this.rRef);
    let kept = 0;
    for (let k = 0; k < nc; k++) {
      const i = cand[k];
      if (T[i * C + rhs] / T[i * C + c] <= minRatio + tieTol) cand[kept++] = i;
    }
    if (kept === 1) return cand[0];
    for (let k = 0; k < kept; k++) if (this.basis[cand[k]] === 2 * n) return cand[k];
    // Lexicographic tie-break over the columns of B⁻¹ (the w-columns).
    for (let j = 0; j < n && kept > 1; j++) {
      let vmin = Number.POSITIVE_INFINITY;
      let vmax = 0;
      for (let k = 0; k < kept; k++) {
        const i = cand[k];
        const val = T[i * C + j] / T[i * C + c];
        vmin = Math.min(vmin, val);
        vmax = Math.max(vmax, Math.abs(val));
      }
      const t = TIE_REL * vmax;
      let k2 = 0;
      for (let k = 0; k < kept; k++) {
        const i = cand[k];
        if (T[i * C + j] / T[i * C + c] <= vmin + t) cand[k2++] = i;
      }
      kept = k2;
    }
    return cand[0];
  }

  /** Solves W_αα r_α = −q_α on the final active set into zp; false when singular. */
  private polish(W: Float64Array, q: Float64Array, n: number, wScale: number): boolean {
    const { act, a, b, zp } = this;
    let na = 0;
    for (let i = 0; i < n; i++) {
      const bv = this.basis[i];
      if (bv >= n && bv < 2 * n) act[na++] = bv - n;
    }
    zp.fill(0, 0, n);
    if (na === 0) return true;
    for (let r = 0; r < na; r++) {
      for (let c = 0; c < na; c++) a[r * na + c] = W[act[r] * n + act[c]];
      b[r] = -q[act[r]];
    }
    // Gaussian elimination with partial pivoting, in place.
    for (let k = 0; k < na; k++) {
      let p = k;
      let best = Math.abs(a[k * na + k]);
      for (let r = k + 1; r < na; r++) {
        const v = Math.abs(a[r * na + k]);
        if (v > best) {
          best = v;
          p = r;
        }
      }
      if (!(best > 1e-13 * wScale)) return false;
      if (p !== k) {
        for (let c = 0; c < na; c++) {
          const t = a[k * na + c];
          a[k * na + c] = a[p * na + c];
          a[p * na + c] = t;
        }
        const t = b[k];
        b[k] = b[p];
        b[p] = t;
      }
      const inv = 1 / a[k * na + k];
      for (let r = k + 1; r < na; r++) {
        const f = a[r * na + k] * inv;
        if (f === 0) continue;
        for (let c = k; c < na; c++) a[r * na + c] -= f * a[k * na + c];
        b[r] -= f * b[k];
      }
    }
    for (let k = na - 1; k >= 0; k--) {
      let s = b[k];
      for (let c = k + 1; c < na; c++) s -= a[k * na + c] * b[c];
      b[k] = s / a[k * na + k];
    }
    for (let k = 0; k < na; k++) zp[act[k]] = Math.max(b[k], 0);
    return true;
  }

  private failure(
    problem: NonsmoothProblem,
    r: Float64Array,
    pivots: number,
    status: "max-iterations" | "ray-termination",
    message: string,
  ): NonsmoothResult {
    const n = this.n;
    const W = problem.W instanceof Float64Array ? problem.W : this.wd;
    denseAffine(W, n, r, problem.q, this.w);
    return makeResult(pivots, lcpResidual(n, r, this.w), false, "lcp", status, message);
  }
}

/** out = W x + q for a dense row-major n×n W. */
function denseAffine(
  W: Float64Array,
  n: number,
  x: Float64Array,
  q: Float64Array,
  out: Float64Array,
) {
  for (let i = 0; i < n; i++) {
    let s = q[i];
    for (let j = 0; j < n; j++) s += W[i * n + j] * x[j];
    out[i] = s;
  }
}
