/**
 * Sparse LDLᵀ factorization P A Pᵀ = L D Lᵀ (L unit lower triangular, D diagonal),
 * up-looking, as T. A. Davis' LDL package ("Algorithm 849: A concise sparse Cholesky
 * factorization package", ACM TOMS 31, 2005) and CSparse (Davis 2006, ch. 4):
 *   symbolic: fill-reducing ordering P (AMD by default), elimination tree of C = P A Pᵀ
 *             and the column counts of L (ldl_symbolic), hence the storage Lp of L;
 *   numeric:  row k of L by a sparse triangular solve L(0:k,0:k) D y = C(0:k,k) whose
 *             pattern is the reach of C(:,k) in the elimination tree (ldl_numeric).
 * The symbolic part is redone only when the sparsity pattern changes (compared by
 * content); a numeric refactor allocates nothing.
 *
 * A is read as a symmetric matrix: where a_ij and a_ji are both stored their mean is
 * used, and a triangle-only storage (upper or lower) is mirrored.
 *
 * Indefinite matrices: no pivoting is done, so the factorization exists when every
 * leading principal minor of P A Pᵀ is nonzero. That holds for every P when A is
 * symmetric positive definite and when A is quasi-definite, [H Bᵀ; B −G] with H and G
 * positive definite (Vanderbei, "Symmetric quasidefinite matrices", SIAM J. Optim. 5,
 * 1995). A saddle-point (KKT) matrix [M Jᵀ; J 0] of a constrained mechanical system has
 * G = 0 and is not quasi-definite: an ordering that eliminates a multiplier before its
 * coordinates meets a zero pivot. Either order the coordinates first ("natural" with
 * the coordinates numbered first: then every pivot is nonzero when M is SPD and J has
 * full row rank), or set `regularization` δ > 0, which factors the quasi-definite
 * A + δ S (S = +1 where a_ii > 0, −1 where a_ii ≤ 0) and then recovers the solution of
 * A itself by iterative refinement (Gill, Saunders & Shinnerl, SIAM J. Matrix Anal.
 * Appl. 17, 1996; as OSQP/QDLDL); 1e-8·max|a_ii| is a typical δ.
 * A zero pivot (d_k = 0 or at rounding level: |d_k| ≤ m·ε·(|c_kk| + Σ|l_ki y_i|) over its
 * m terms, see dense.ts isZeroPivot) makes `solve` report converged = false.
 * With refinement, `solve` reports the refinement steps taken as `iterations` and the
 * measured relative residual ‖b − A x‖/‖b‖.
 */
import type { CsrMatrix } from "../../math/csr";
import { checkDeadline } from "../deadline";
import { isZeroPivot } from "./dense";
import { eliminationTree, reachUpTree, sortByColumn } from "./elimination-tree";
import type {
  LinearSolveInfo,
  LinearSolver,
  LinearSolverOptions,
  OrderingName,
} from "./linear-solver";
import { computeOrdering, invertPermutation } from "./ordering";
import { csrFind, norm2, PatternCache } from "./pattern";

export interface SparseLdltOptions extends LinearSolverOptions {
  /**
   * Per original row, the sign (+1/−1) with which `regularization` is added to the
   * diagonal, overriding the rule "sign of a_ii" (e.g. +1 for coordinates, −1 for
   * multipliers whatever their diagonal).
   */
  regularizationSigns?: ArrayLike<number>;
}

export class SparseLdltSolver implements LinearSolver {
  readonly name = "sparse-ldlt" as const;
  readonly ordering: OrderingName;
  /** Static diagonal regularization δ (absolute, units of A). */
  regularization: number;
  /** Maximum iterative refinement steps per solve. */
  refinementSteps: number;
  private readonly signs: Float64Array | null;
  /** Number of symbolic analyses (ordering, etree, column counts) done so far. */
  symbolicAnalyses = 0;
  /** Number of numeric factorizations done so far. */
  numericFactorizations = 0;

  private readonly pattern = new PatternCache();
  private n = 0;
  private perm: Int32Array = new Int32Array(0);
  // Upper triangle of C = P A Pᵀ by columns; the value of entry p is
  // values[src1[p]] or the mean of values[src1[p]] and values[src2[p]].
  private cp: Int32Array = new Int32Array(0);
  private ci: Int32Array = new Int32Array(0);
  private src1: Int32Array = new Int32Array(0);
  private src2: Int32Array = new Int32Array(0);
  // L by columns (strictly lower), D, elimination tree.
  private parent: Int32Array = new Int32Array(0);
  private lp: Int32Array = new Int32Array(0);
  private li: Int32Array = new Int32Array(0);
  private lx: Float64Array = new Float64Array(0);
  private d: Float64Array = new Float64Array(0);
  private lnz: Int32Array = new Int32Array(0);
  private flag: Int32Array = new Int32Array(0);
  private patt: Int32Array = new Int32Array(0);
  private y: Float64Array = new Float64Array(0);
  private bp: Float64Array = new Float64Array(0);
  private r: Float64Array = new Float64Array(0);
  private dx: Float64Array = new Float64Array(0);
  private values: Float64Array = new Float64Array(0);
  private ok = false;
  /** Original index of the row/column where a zero pivot stopped the factorization, or −1. */
  zeroPivot = -1;
  /** Number of positive and negative pivots d_k (the inertia of A + δS, Sylvester). */
  positivePivots = 0;
  negativePivots = 0;

  constructor(options: SparseLdltOptions = {}) {
    this.ordering = options.ordering ?? "amd";
    if (this.ordering === "amd-ata") throw new Error("sparse-ldlt: ordering amd-ata is for LU");
    this.regularization = options.regularization ?? 0;
    if (!(this.regularization >= 0)) throw new Error("sparse-ldlt: regularization must be ≥ 0");
    this.refinementSteps = options.refinementSteps ?? (this.regularization > 0 ? 3 : 0);
    this.signs = options.regularizationSigns
      ? Float64Array.from(options.regularizationSigns)
      : null;
  }

  /** Number of stored entries of L (strict lower part). */
  get nnzL(): number {
    return this.lp[this.n] ?? 0;
  }

  /** The fill-reducing permutation in use (perm[k] = original index at position k). */
  get permutation(): Int32Array {
    return this.perm;
  }

  /** Elimination tree of P A Pᵀ: parent[k] (−1 for a root). */
  get eliminationTree(): Int32Array {
    return this.parent;
  }

  factor(a: CsrMatrix): void {
    if (a.rows !== a.cols) throw new Error("sparse-ldlt: matrix must be square");
    if (!this.pattern.matches(a)) {
      this.analyze(a);
      this.pattern.remember(a);
    }
    this.values = a.values;
    this.numeric();
  }

  /** Symbolic analysis: ordering, permuted upper triangle, etree, column counts. */
  private analyze(a: CsrMatrix): void {
    const n = a.rows;
    this.n = n;
    this.perm = computeOrdering(this.ordering, a);
    const pinv = invertPermutation(this.perm);
    const { rowPtr, colIdx } = a;
    const nnz = rowPtr[n];
    // Each stored position of the symmetric matrix once: (r, c) with c ≥ r, plus
    // (r, c) with c < r whose mirror is not stored.
    const colOf = new Int32Array(nnz);
    const rowOf = new Int32Array(nnz);
    const s1 = new Int32Array(nnz);
    const s2 = new Int32Array(nnz);
    const cp = new Int32Array(n + 1);
    let m = 0;
    for (let r = 0; r < n; r++) {
      for (let k = rowPtr[r]; k < rowPtr[r + 1]; k++) {
        const c = colIdx[k];
        let mirror = -1;
        if (c !== r) {
          mirror = csrFind(a, c, r);
          if (c < r && mirror >= 0) continue;
        }
        const i2 = pinv[r];
        const j2 = pinv[c];
        colOf[m] = Math.max(i2, j2);
        rowOf[m] = Math.min(i2, j2);
        s1[m] = k;
        s2[m] = c < r ? -1 : mirror;
        cp[colOf[m] + 1]++;
        m++;
      }
    }
    const upper = sortByColumn(n, m, rowOf, colOf, s1, s2, cp);
    this.ci = upper.ci;
    this.src1 = upper.src1;
    this.src2 = upper.src2;
    this.cp = cp;

    // ldl_symbolic on the columns of the upper triangle (= rows of the lower one)
    const { parent, lnz, lp, flag } = eliminationTree(n, cp, this.ci);
    this.parent = parent;
    this.lp = lp;
    this.lnz = lnz;
    this.flag = flag;
    this.li = new Int32Array(lp[n]);
    this.lx = new Float64Array(lp[n]);
    this.d = new Float64Array(n);
    this.patt = new Int32Array(n);
    this.y = new Float64Array(n);
    this.bp = new Float64Array(n);
    this.r = new Float64Array(n);
    this.dx = new Float64Array(n);
    this.symbolicAnalyses++;
  }

  /** Value of entry p of the permuted upper triangle. */
  private entry(p: number): number {
    const v = this.values;
    const b = this.src2[p];
    return b >= 0 ? 0.5 * (v[this.src1[p]] + v[b]) : v[this.src1[p]];
  }

  /** ldl_numeric: allocation-free numeric factorization on the stored pattern. */
  private numeric(): void {
    const n = this.n;
    const { cp, ci, parent, lp, li, lx, d, lnz, flag, patt, y, perm } = this;
    const delta = this.regularization;
    const signs = this.signs;
    this.numericFactorizations++;
    this.ok = false;
    this.zeroPivot = -1;
    let pos = 0;
    let neg = 0;
    for (let k = 0; k < n; k++) {
      if ((k & 1023) === 1023) checkDeadline();
      y[k] = 0;
      let top = n;
      flag[k] = k;
      lnz[k] = 0;
      for (let p = cp[k]; p < cp[k + 1]; p++) {
        const i = ci[p];
        y[i] += this.entry(p);
        top = reachUpTree(i, k, parent, flag, patt, top);
      }
      // y[k] now holds c_kk alone: the only entry of column k that lands on row k.
      let dk = y[k];
      if (delta > 0) {
        const s = signs ? signs[perm[k]] : dk > 0 ? 1 : -1;
        dk += s >= 0 ? delta : -delta;
      }
      y[k] = 0;
      let scale = Math.abs(dk);
      const terms = n - top + 1;
      for (; top < n; top++) {
        const i = patt[top];
        const yi = y[i];
        y[i] = 0;
        const p2 = lp[i] + lnz[i];
        for (let p = lp[i]; p < p2; p++) y[li[p]] -= lx[p] * yi;
        const lki = yi / d[i];
        const upd = lki * yi;
        dk -= upd;
        scale += Math.abs(upd);
        li[p2] = k;
        lx[p2] = lki;
        lnz[i]++;
      }
      d[k] = dk;
      if (isZeroPivot(dk, scale, terms)) {
        this.zeroPivot = perm[k];
        this.positivePivots = pos;
        this.negativePivots = neg;
        return;
      }
      if (dk > 0) pos++;
      else neg++;
    }
    this.positivePivots = pos;
    this.negativePivots = neg;
    this.ok = true;
  }

  /** y ← (L D Lᵀ)⁻¹ y in permuted coordinates. */
  private ldlSolveInPlace(y: Float64Array): void {
    const n = this.n;
    const { lp, li, lx, d } = this;
    for (let j = 0; j < n; j++) {
      const yj = y[j];
      for (let p = lp[j]; p < lp[j + 1]; p++) y[li[p]] -= lx[p] * yj;
    }
    for (let j = 0; j < n; j++) y[j] /= d[j];
    for (let j = n - 1; j >= 0; j--) {
      let s = y[j];
      for (let p = lp[j]; p < lp[j + 1]; p++) s -= lx[p] * y[li[p]];
      y[j] = s;
    }
  }

  /** out = bp − C x with C the (unregularized) symmetric permuted matrix. */
  private residual(x: Float64Array, out: Float64Array): void {
    const n = this.n;
    const { cp, ci, bp } = this;
    for (let i = 0; i < n; i++) out[i] = bp[i];
    for (let k = 0; k < n; k++) {
      for (let p = cp[k]; p < cp[k + 1]; p++) {
        const i = ci[p];
        const v = this.entry(p);
        out[i] -= v * x[k];
        if (i !== k) out[k] -= v * x[i];
      }
    }
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const n = this.n;
    if (!this.ok) {
      x.fill(Number.NaN, 0, n);
      return { iterations: 0, residual: Number.NaN, converged: false };
    }
    const { perm, y, bp, r } = this;
    for (let k = 0; k < n; k++) {
      bp[k] = b[perm[k]];
      y[k] = bp[k];
    }
    this.ldlSolveInPlace(y);
    let residual = 0;
    let steps = 0;
    if (this.refinementSteps > 0) {
      const bn = norm2(bp, n);
      this.residual(y, r);
      let rn = norm2(r, n);
      // Refine while it helps: x ← x + F⁻¹(b − A x), F = L D Lᵀ ≈ A + δS.
      // A step that does not reduce the residual is undone and ends the refinement.
      const dx = this.dx;
      while (steps < this.refinementSteps && rn > 2 * Number.EPSILON * bn) {
        for (let i = 0; i < n; i++) dx[i] = r[i];
        this.ldlSolveInPlace(dx);
        for (let i = 0; i < n; i++) y[i] += dx[i];
        steps++;
        this.residual(y, r);
        const rn2 = norm2(r, n);
        if (!(rn2 < rn)) {
          for (let i = 0; i < n; i++) y[i] -= dx[i];
          break;
        }
        rn = rn2;
      }
      residual = bn > 0 ? rn / bn : rn;
    }
    for (let k = 0; k < n; k++) x[perm[k]] = y[k];
    return { iterations: steps, residual, converged: true };
  }
}
