/**
 * Sparse LU factorization with partial pivoting, P A Q = L U, left-looking
 * (Gilbert & Peierls, "Sparse partial pivoting in time proportional to arithmetic
 * operations", SIAM J. Sci. Stat. Comput. 9, 1988), following CSparse cs_lu (Davis 2006,
 * ch. 6). Column k of L and U comes from the sparse triangular solve
 * x = L \ A(:, q_k), whose pattern is the reach of A(:, q_k) in the graph of L found by
 * depth-first search; the pivot is then chosen among the not yet pivotal rows of x.
 *
 * Q is a fill-reducing column ordering computed once per sparsity pattern: AMD on the
 * pattern of A + Aᵀ (default, good for the structurally symmetric matrices of mechanics,
 * together with the diagonal preference below) or AMD on AᵀA ("amd-ata", which bounds
 * the fill for any row pivoting; for strongly nonsymmetric patterns). The row pivots P
 * depend on the values and are chosen at every numeric factorization; the storage of L
 * and U is kept between factorizations and grows only when a new pivot sequence needs
 * more room, so refactoring a matrix with an unchanged pattern normally allocates
 * nothing; the first factorization of a pattern gives back what CSparse's guess left
 * unused (fitStorage).
 *
 * Pivot rule (threshold partial pivoting): with amax = max |x_i| over non-pivotal rows,
 * the diagonal row q_k is taken when |x_{q_k}| ≥ pivotTolerance·amax (default 0.1,
 * which bounds each multiplier by 10), else the row of amax. pivotTolerance = 1 is plain
 * partial pivoting. When no candidate is above rounding level relative to the column
 * (|u_kk| ≤ m·ε·max(|A(:,q_k)|, |x|) over the m terms that formed it, see dense.ts
 * isZeroPivot) the matrix is singular to working precision: `solve` reports
 * converged = false.
 */
import type { CsrMatrix } from "../../math/csr";
import { checkDeadline } from "../deadline";
import { isZeroPivot } from "./dense";
import type {
  LinearSolveInfo,
  LinearSolver,
  LinearSolverOptions,
  OrderingName,
} from "./linear-solver";
import { computeOrdering } from "./ordering";
import { norm2, PatternCache } from "./pattern";

export class SparseLuSolver implements LinearSolver {
  readonly name = "sparse-lu" as const;
  readonly ordering: OrderingName;
  pivotTolerance: number;
  /** Maximum iterative refinement steps per solve (default 0). */
  refinementSteps: number;
  /** Number of symbolic analyses (column ordering, column-wise copy of the pattern). */
  symbolicAnalyses = 0;
  numericFactorizations = 0;
  /** Factorizations that reused the last one's pivots and patterns (`refactor`). */
  refactorizations = 0;
  /** Times the L/U storage had to grow (0 after the first factorization of a pattern, normally). */
  storageGrowths = 0;

  private readonly pattern = new PatternCache();
  private n = 0;
  private q: Int32Array = new Int32Array(0);
  // A by columns: column j has rows ai[ap[j]..ap[j+1]) with values values[asrc[..]].
  private ap: Int32Array = new Int32Array(0);
  private ai: Int32Array = new Int32Array(0);
  private asrc: Int32Array = new Int32Array(0);
  private lp: Int32Array = new Int32Array(0);
  private li: Int32Array = new Int32Array(0);
  private lx: Float64Array = new Float64Array(0);
  private up: Int32Array = new Int32Array(0);
  private ui: Int32Array = new Int32Array(0);
  private ux: Float64Array = new Float64Array(0);
  private pinv: Int32Array = new Int32Array(0);
  private x: Float64Array = new Float64Array(0);
  private xi: Int32Array = new Int32Array(0);
  private stack: Int32Array = new Int32Array(0);
  private pstack: Int32Array = new Int32Array(0);
  private mark: Int32Array = new Int32Array(0);
  private stamp = 0;
  private y: Float64Array = new Float64Array(0);
  private r: Float64Array = new Float64Array(0);
  private dx: Float64Array = new Float64Array(0);
  private matrix: CsrMatrix | null = null;
  private ok = false;
  /** Step k (column q_k) where no acceptable pivot was found, or −1. */
  zeroPivot = -1;

  constructor(options: LinearSolverOptions = {}) {
    this.ordering = options.ordering ?? "amd";
    this.pivotTolerance = options.pivotTolerance ?? 0.1;
    if (!(this.pivotTolerance >= 0 && this.pivotTolerance <= 1))
      throw new Error("sparse-lu: pivotTolerance must be in [0, 1]");
    this.refinementSteps = options.refinementSteps ?? 0;
  }

  /** Entries of L (unit diagonal included) and U of the last factorization. */
  get nnzL(): number {
    return this.lp[this.n] ?? 0;
  }
  get nnzU(): number {
    return this.up[this.n] ?? 0;
  }
  /** Column ordering Q (q[k] = original column eliminated at step k). */
  get columnPermutation(): Int32Array {
    return this.q;
  }

  factor(a: CsrMatrix): void {
    if (a.rows !== a.cols) throw new Error("sparse-lu: matrix must be square");
    let same = true;
    if (!this.pattern.matches(a)) {
      this.analyze(a);
      this.pattern.remember(a);
      same = false;
    }
    this.matrix = a;
    if (same && this.ok && this.refactor(a.values)) return;
    this.numeric(a);
  }

  private analyze(a: CsrMatrix): void {
    this.ok = false;
    const n = a.rows;
    this.n = n;
    this.q = computeOrdering(this.ordering, a);
    const { rowPtr, colIdx } = a;
    const nnz = rowPtr[n];
    const ap = new Int32Array(n + 1);
    for (let k = 0; k < nnz; k++) ap[colIdx[k] + 1]++;
    for (let j = 0; j < n; j++) ap[j + 1] += ap[j];
    const next = ap.slice(0, n);
    const ai = new Int32Array(nnz);
    const asrc = new Int32Array(nnz);
    for (let i = 0; i < n; i++)
      for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) {
        const dst = next[colIdx[k]]++;
        ai[dst] = i;
        asrc[dst] = k;
      }
    this.ap = ap;
    this.ai = ai;
    this.asrc = asrc;
    // Initial storage guess of CSparse: 4 nnz(A) + n for each factor.
    const cap = 4 * nnz + n;
    this.lp = new Int32Array(n + 1);
    this.up = new Int32Array(n + 1);
    this.li = new Int32Array(cap);
    this.lx = new Float64Array(cap);
    this.ui = new Int32Array(cap);
    this.ux = new Float64Array(cap);
    this.pinv = new Int32Array(n);
    this.x = new Float64Array(n);
    this.xi = new Int32Array(n);
    this.stack = new Int32Array(n);
    this.pstack = new Int32Array(n);
    this.mark = new Int32Array(n);
    this.stamp = 0;
    this.y = new Float64Array(n);
    this.r = new Float64Array(n);
    this.dx = new Float64Array(n);
    this.symbolicAnalyses++;
  }

  /** Non-recursive DFS from node j in the graph of L (cs_dfs); returns the new top. */
  private dfs(j0: number, top: number): number {
    const { stack, pstack, pinv, lp, li, mark, xi } = this;
    const stamp = this.stamp;
    let head = 0;
    stack[0] = j0;
    while (head >= 0) {
      const j = stack[head];
      const jnew = pinv[j];
      if (mark[j] !== stamp) {
        mark[j] = stamp;
        pstack[head] = jnew < 0 ? 0 : lp[jnew];
      }
      let done = true;
      const p2 = jnew < 0 ? 0 : lp[jnew + 1];
      for (let p = pstack[head]; p < p2; p++) {
        const i = li[p];
        if (mark[i] === stamp) continue;
        pstack[head] = p;
        stack[++head] = i;
        done = false;
        break;
      }
      if (done) {
        head--;
        xi[--top] = j;
      }
    }
    return top;
  }

  /**
   * x = L \ A(:, col) for the columns of L computed so far (cs_spsolve); the nonzero
   * pattern is xi[top..n) in topological order.
   */
  private spsolve(col: number, values: Float64Array): number {
    const n = this.n;
    const { ap, ai, asrc, x, xi, pinv, lp, li, lx } = this;
    this.stamp++;
    let top = n;
    for (let p = ap[col]; p < ap[col + 1]; p++) {
      const i = ai[p];
      if (this.mark[i] !== this.stamp) top = this.dfs(i, top);
    }
    for (let p = top; p < n; p++) x[xi[p]] = 0;
    for (let p = ap[col]; p < ap[col + 1]; p++) x[ai[p]] = values[asrc[p]];
    for (let px = top; px < n; px++) {
      const j = xi[px];
      const jj = pinv[j];
      if (jj < 0) continue;
      const xj = x[j]; // L(j, jj) = 1: no division
      for (let p = lp[jj] + 1; p < lp[jj + 1]; p++) x[li[p]] -= lx[p] * xj;
    }
    return top;
  }

  private growL(need: number): void {
    const cap = Math.max(2 * this.li.length + this.n, need);
    const li = new Int32Array(cap);
    li.set(this.li);
    const lx = new Float64Array(cap);
    lx.set(this.lx);
    this.li = li;
    this.lx = lx;
    this.storageGrowths++;
  }

  private growU(need: number): void {
    const cap = Math.max(2 * this.ui.length + this.n, need);
    const ui = new Int32Array(cap);
    ui.set(this.ui);
    const ux = new Float64Array(cap);
    ux.set(this.ux);
    this.ui = ui;
    this.ux = ux;
    this.storageGrowths++;
  }

  /**
   * The factorization of new values on the last one's pattern with its pivot sequence and the
   * patterns of L and U kept (KLU's refactorization, Davis & Palamadai Natarajan, "Algorithm
   * 907: KLU", ACM TOMS 37, 2010): each column's triangular solve runs over the stored pattern
   * of U(:, k) in the order the depth-first search left it (a topological order of its
   * dependencies), with no search and no pivot choice. A Newton iteration's W changes its
   * values, not its pattern, and rarely enough to want other pivots. Accepted when every
   * kept pivot is the one a fresh factorization would choose (freshChoice; so the
   * multipliers stay bounded by 1/pivotTolerance, and the factors are a fresh
   * factorization's, bit for bit) and is no rounding-level zero; false otherwise, the
   * caller then factoring afresh. Keeping a pivot that only passed the threshold test made
   * the factors depend on the matrices factored before: a snapshot's continuation, which
   * factors afresh, departed by an ulp from the run it was taken from (the imported 6-axis
   * arm with servos, test/reliability/snapshot.test.ts); the rule costs it 0.007 more fresh
   * factorizations a step (1.10 refactorizations a step).
   */
  private refactor(values: Float64Array): boolean {
    const n = this.n;
    const { q, pinv, x, lp, li, lx, up, ui, ux, ap, ai, asrc } = this;
    const ptol = this.pivotTolerance;
    for (let k = 0; k < n; k++) {
      if ((k & 1023) === 1023) checkDeadline();
      const col = q[k];
      // x in pivoted coordinates, on the pattern of U(:, k) and L(:, k)
      for (let p = up[k]; p < up[k + 1]; p++) x[ui[p]] = 0;
      for (let p = lp[k]; p < lp[k + 1]; p++) x[li[p]] = 0;
      let scale = 0;
      for (let p = ap[col]; p < ap[col + 1]; p++) {
        const v = values[asrc[p]];
        x[pinv[ai[p]]] = v;
        scale = Math.max(scale, Math.abs(v));
      }
      const diag = up[k + 1] - 1;
      for (let p = up[k]; p < diag; p++) {
        const j = ui[p];
        const xj = x[j];
        ux[p] = xj;
        scale = Math.max(scale, Math.abs(xj));
        for (let r = lp[j] + 1; r < lp[j + 1]; r++) x[li[r]] -= lx[r] * xj;
      }
      const pivot = x[k];
      let amax = Math.abs(pivot);
      for (let p = lp[k] + 1; p < lp[k + 1]; p++) amax = Math.max(amax, Math.abs(x[li[p]]));
      scale = Math.max(scale, amax);
      if (
        !this.freshChoice(k, col, amax) ||
        Math.abs(pivot) < ptol * amax ||
        isZeroPivot(pivot, scale, diag - up[k] + 1)
      ) {
        // numeric's pivot choice reads x off the reach and expects zeros there
        x.fill(0);
        return false;
      }
      ux[diag] = pivot;
      for (let p = lp[k] + 1; p < lp[k + 1]; p++) lx[p] = x[li[p]] / pivot;
    }
    x.fill(0);
    this.refactorizations++;
    return true;
  }

  /**
   * Whether `numeric`, factoring these values afresh, would choose the kept pivot of column
   * k (row k in pivoted coordinates) among the candidates (row k and L(:, k)'s rows, x as
   * refactor left it; amax their largest |x|): the diagonal row (A's row q_k) when it is a
   * candidate with |x| ≥ pivotTolerance·amax, else the largest, here also required to be
   * the only one that large (numeric takes the first in its own order). A refactorization
   * is then the fresh factorization, bit for bit, so the factors depend on the matrix alone
   * and not on the matrices factored before: a simulation restored from a snapshot, which
   * factors afresh, continues exactly as the one it was taken from.
   */
  private freshChoice(k: number, col: number, amax: number): boolean {
    const { x, lp, li } = this;
    const d = this.pinv[col];
    if (d === k) return true; // numeric's preference test is refactor's threshold test
    if (Math.abs(x[k]) !== amax) return false;
    const preferred = amax * this.pivotTolerance;
    for (let p = lp[k] + 1; p < lp[k + 1]; p++) {
      const i = li[p];
      const t = Math.abs(x[i]);
      // another as large, or the diagonal row a candidate that numeric would prefer
      if (t === amax || (i === d && x[i] !== 0 && t >= preferred)) return false;
    }
    return true;
  }

  private numeric(a: CsrMatrix): void {
    const n = this.n;
    const values = a.values;
    const { q, pinv, x, xi, lp, up } = this;
    const ptol = this.pivotTolerance;
    this.numericFactorizations++;
    this.ok = false;
    this.zeroPivot = -1;
    pinv.fill(-1);
    let lnz = 0;
    let unz = 0;
    for (let k = 0; k < n; k++) {
      if ((k & 1023) === 1023) checkDeadline();
      lp[k] = lnz;
      up[k] = unz;
      if (lnz + n > this.li.length) this.growL(lnz + n);
      if (unz + n > this.ui.length) this.growU(unz + n);
      const { li, lx, ui, ux } = this;
      const col = q[k];
      const top = this.spsolve(col, values);
      let ipiv = -1;
      let amax = -1;
      let scale = 0;
      const unz0 = unz;
      for (let p = top; p < n; p++) {
        const i = xi[p];
        const t = Math.abs(x[i]);
        if (t > scale) scale = t;
        if (pinv[i] < 0) {
          if (t > amax) {
            amax = t;
            ipiv = i;
          }
        } else {
          ui[unz] = pinv[i];
          ux[unz++] = x[i];
        }
      }
      for (let p = this.ap[col]; p < this.ap[col + 1]; p++)
        scale = Math.max(scale, Math.abs(values[this.asrc[p]]));
      if (ipiv === -1 || isZeroPivot(amax, scale, unz - unz0 + 1)) {
        for (let p = top; p < n; p++) x[xi[p]] = 0;
        this.zeroPivot = k;
        return;
      }
      if (pinv[col] < 0 && x[col] !== 0 && Math.abs(x[col]) >= amax * ptol) ipiv = col;
      const pivot = x[ipiv];
      ui[unz] = k;
      ux[unz++] = pivot;
      pinv[ipiv] = k;
      li[lnz] = ipiv;
      lx[lnz++] = 1;
      for (let p = top; p < n; p++) {
        const i = xi[p];
        if (pinv[i] < 0) {
          li[lnz] = i;
          lx[lnz++] = x[i] / pivot;
        }
        x[i] = 0;
      }
    }
    lp[n] = lnz;
    up[n] = unz;
    const li = this.li;
    for (let p = 0; p < lnz; p++) li[p] = pinv[li[p]];
    this.fitStorage(lnz, unz);
    this.ok = true;
  }

  /**
   * Gives back the L and U storage a factorization left unused. CSparse's first guess,
   * 4 nnz(A) + n entries per factor, is 5 to 7 times what a chain's saddle-point matrix
   * fills (80 hinged links with servos: n = 880, nnz(A) = 18 508, L 10 484 and U 14 376
   * entries, 74 912 allotted to each: 1.8 of the 3.9 MB of buffers its simulation held).
   * A factor holding more than 2 (nnz + n) + n entries is cut to nnz + n, the room numeric
   * asks before each column (lnz + n), so a fresh factorization with the same pivots does
   * not grow it again; a growth (to at most 2 cap + n, with cap < nnz + n) never leaves that
   * much, so trimming and growing do not alternate.
   */
  private fitStorage(lnz: number, unz: number): void {
    const n = this.n;
    const cut = (used: number, length: number) => length > 2 * (used + n) + n;
    if (cut(lnz, this.li.length)) {
      this.li = this.li.slice(0, lnz + n);
      this.lx = this.lx.slice(0, lnz + n);
    }
    if (cut(unz, this.ui.length)) {
      this.ui = this.ui.slice(0, unz + n);
      this.ux = this.ux.slice(0, unz + n);
    }
  }

  /** y ← U⁻¹ L⁻¹ y in pivoted coordinates. */
  private luSolveInPlace(y: Float64Array): void {
    const n = this.n;
    const { lp, li, lx, up, ui, ux } = this;
    for (let j = 0; j < n; j++) {
      const yj = y[j];
      for (let p = lp[j] + 1; p < lp[j + 1]; p++) y[li[p]] -= lx[p] * yj;
    }
    for (let j = n - 1; j >= 0; j--) {
      const yj = y[j] / ux[up[j + 1] - 1];
      y[j] = yj;
      for (let p = up[j]; p < up[j + 1] - 1; p++) y[ui[p]] -= ux[p] * yj;
    }
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const n = this.n;
    if (!this.ok || !this.matrix) {
      x.fill(Number.NaN, 0, n);
      return { iterations: 0, residual: Number.NaN, converged: false };
    }
    const { pinv, q, y } = this;
    for (let i = 0; i < n; i++) y[pinv[i]] = b[i];
    this.luSolveInPlace(y);
    for (let k = 0; k < n; k++) x[q[k]] = y[k];
    if (this.refinementSteps === 0) return { iterations: 0, residual: 0, converged: true };
    // Iterative refinement x ← x + (LU)⁻¹ P (b − A x).
    const { r, dx } = this;
    const a = this.matrix;
    const bn = norm2(b, n);
    let rn = residualInto(a, b, x, r);
    let steps = 0;
    while (steps < this.refinementSteps && rn > 2 * Number.EPSILON * bn) {
      for (let i = 0; i < n; i++) y[pinv[i]] = r[i];
      this.luSolveInPlace(y);
      for (let k = 0; k < n; k++) {
        dx[q[k]] = y[k];
        x[q[k]] += y[k];
      }
      steps++;
      const rn2 = residualInto(a, b, x, r);
      if (!(rn2 < rn)) {
        for (let i = 0; i < n; i++) x[i] -= dx[i];
        break;
      }
      rn = rn2;
    }
    return { iterations: steps, residual: bn > 0 ? rn / bn : rn, converged: true };
  }
}

/** r = b − A x; returns ‖r‖₂. */
function residualInto(a: CsrMatrix, b: Float64Array, x: Float64Array, r: Float64Array): number {
  const { rowPtr, colIdx, values } = a;
  for (let i = 0; i < a.rows; i++) {
    let s = b[i];
    for (let k = rowPtr[i]; k < rowPtr[i + 1]; k++) s -= values[k] * x[colIdx[k]];
    r[i] = s;
  }
  return norm2(r, a.rows);
}
