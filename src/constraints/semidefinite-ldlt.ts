/**
 * Sparse LDLᵀ of a symmetric positive SEMIdefinite matrix in its natural order, with
 * dependent rows dropped: the factorization used for S = G M⁻¹ Gᵀ (schur.ts), which is
 * singular whenever constraint rows are redundant (a planar mechanism built from 3-D
 * joints) or a configuration is singular (a slider-crank driven from the slider at a
 * dead centre). The linear-solver library's LDLᵀ stops at such a zero pivot; this one,
 * like the rank-revealing Cholesky of Higham ("Analysis of the Cholesky decomposition of
 * a semi-definite matrix", 1990) without the pivoting, skips it.
 *
 * Up-looking LDLᵀ as T. A. Davis' LDL (ACM TOMS 31, 2005): row k of L solves
 * L(0:k,0:k) D y = S(0:k, k) over the reach of S(:, k) in the elimination tree, then
 * d_k = s_kk − Σ l_ki y_i. For S = A Aᵀ (A = G M^{-1/2}) the pivot d_k is the squared
 * distance of row k of A from the span of rows 0..k−1 (d_k = R_kk² of the QR of Aᵀ
 * without column pivoting), so the relative pivot d_k / s_kk is sin² of the angle between
 * row k and the earlier rows. Row k is DROPPED when d_k ≤ pivotTolerance · s_kk: it is a
 * combination of earlier rows (to that tolerance). A dropped row gets zero L entries (its
 * Schur complement column is zero too, as |s_ik|² ≤ s_ii s_kk for a semidefinite Schur
 * complement), and solve() returns x_k = 0 for it. Hence for b in range(S) the solution
 * is exact, S x = b, with x supported on the kept rows: the natural order makes the
 * LATER row of a dependent set the dropped one (motors, stacked after the joints, are
 * dropped when a joint's rows already determine them).
 *
 * Unsymmetric values on a symmetric pattern (S = G W⁻¹ Gᵀ with a block-diagonal but
 * nonsymmetric W: gyroscopic and damping Jacobians) are factored as S = L D U with U unit
 * upper triangular, U ≠ Lᵀ, on the same elimination tree and without pivoting (the
 * symmetric part of such an S is positive definite for independent rows): column k of U
 * comes from L⁻¹ S(0:k, k) as column k of Lᵀ does above, row k of L from U⁻ᵀ S(k, 0:k)ᵀ,
 * and d_k = s_kk − Σ l_ki d_i u_ik; the same relative pivot test drops dependent rows.
 *
 * The symbolic analysis (elimination tree, column counts) is done once per pattern;
 * numeric factorization and solves allocate nothing.
 */
import type { CsrMatrix } from "../math/csr";
import { eliminationTree } from "../solvers/linear/elimination-tree";

export class SemidefiniteLdlt {
  /** Relative pivot threshold d_k ≤ tol·s_kk (sin² of the angle to the earlier rows). */
  pivotTolerance: number;
  /** 1 for a dropped (dependent) row. Valid after `factor`. */
  dropped = new Uint8Array(0);
  /** Number of kept rows (the numerical rank of S). */
  rank = 0;

  private n = -1;
  private rowPtrRef: Int32Array | null = null;
  private colIdxRef: Int32Array | null = null;
  private parent = new Int32Array(0);
  private lp = new Int32Array(0);
  private li = new Int32Array(0);
  private lx = new Float64Array(0);
  /** U's strictly upper entries, by rows, on L's pattern (ux = lx when symmetric). */
  private ux = new Float64Array(0);
  private uxOwn = new Float64Array(0);
  /** For each stored entry p = (i, j) of the pattern: the slot of (j, i). */
  private transposeSlot: Int32Array = new Int32Array(0);
  private x = new Float64Array(0);
  private d = new Float64Array(0);
  private lnz = new Int32Array(0);
  private flag = new Int32Array(0);
  private patt = new Int32Array(0);
  private y = new Float64Array(0);

  constructor(pivotTolerance = 1e-12) {
    this.pivotTolerance = pivotTolerance;
  }

  /**
   * Factors a. symmetric: a is symmetric and only its lower triangle (entries with column
   * ≤ row) is read; otherwise a's pattern must be symmetric (its values need not be) and
   * S = L D U is computed.
   */
  factor(a: CsrMatrix, symmetric = true): void {
    if (a.rowPtr !== this.rowPtrRef || a.colIdx !== this.colIdxRef || a.rows !== this.n)
      this.analyze(a);
    this.ux = symmetric ? this.lx : this.uxOwn;
    this.numeric(a, symmetric);
  }

  private analyze(a: CsrMatrix): void {
    const n = a.rows;
    const { rowPtr, colIdx } = a;
    // row k of the lower triangle = column k of the upper triangle (symmetric pattern)
    const { parent, lnz, lp, flag } = eliminationTree(n, rowPtr, colIdx);
    this.n = n;
    this.rowPtrRef = rowPtr;
    this.colIdxRef = colIdx;
    this.parent = parent;
    this.lnz = lnz;
    this.flag = flag;
    this.lp = lp;
    this.li = new Int32Array(lp[n]);
    this.lx = new Float64Array(lp[n]);
    this.uxOwn = new Float64Array(lp[n]);
    this.ux = this.lx;
    this.x = new Float64Array(n);
    this.transposeSlot = transposeSlots(a);
    this.d = new Float64Array(n);
    this.patt = new Int32Array(n);
    this.y = new Float64Array(n);
    this.dropped = new Uint8Array(n);
  }

  /**
   * Row k of L and column k of U by the sparse triangular solves of the header, over the
   * reach of row k's pattern in the elimination tree. Symmetric: y serves as both (ux and
   * lx are the same array, x is unused).
   */
  private numeric(a: CsrMatrix, symmetric: boolean): void {
    const n = this.n;
    const { rowPtr, colIdx, values } = a;
    const { parent, lp, li, lx, ux, d, lnz, flag, patt, y, x, dropped, transposeSlot } = this;
    const tol = this.pivotTolerance;
    let rank = 0;
    for (let k = 0; k < n; k++) {
      // y ← S(0:k, k) (column k, upper part), x ← S(k, 0:k) (row k, lower part)
      y[k] = 0;
      x[k] = 0;
      let top = n;
      flag[k] = k;
      lnz[k] = 0;
      for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) {
        let i = colIdx[p];
        if (i > k) continue;
        if (symmetric) y[i] += values[p];
        else {
          y[i] += values[transposeSlot[p]];
          x[i] += values[p];
        }
        let len = 0;
        while (flag[i] !== k) {
          patt[len++] = i;
          flag[i] = k;
          i = parent[i];
        }
        while (len > 0) patt[--top] = patt[--len];
      }
      const skk = symmetric ? y[k] : x[k];
      let dk = skk;
      y[k] = 0;
      x[k] = 0;
      const top0 = top;
      for (; top < n; top++) {
        const i = patt[top];
        const yi = y[i]; // d_i u_ik
        y[i] = 0;
        const p2 = lp[i] + lnz[i];
        for (let p = lp[i]; p < p2; p++) y[li[p]] -= lx[p] * yi;
        let xi = yi; // d_i l_ki
        if (!symmetric) {
          xi = x[i];
          x[i] = 0;
          for (let p = lp[i]; p < p2; p++) x[li[p]] -= ux[p] * xi;
        }
        const lki = dropped[i] ? 0 : xi / d[i];
        dk -= lki * yi;
        li[p2] = k;
        lx[p2] = lki;
        if (!symmetric) ux[p2] = dropped[i] ? 0 : yi / d[i];
        lnz[i]++;
      }
      if (!(skk > 0) || !(dk > tol * skk)) {
        dropped[k] = 1;
        d[k] = 1;
        // Remove row k from L (and column k from U): the last entries of each column.
        for (let q = top0; q < n; q++) {
          const i = patt[q];
          lx[lp[i] + lnz[i] - 1] = 0;
          ux[lp[i] + lnz[i] - 1] = 0;
        }
      } else {
        dropped[k] = 0;
        d[k] = dk;
        rank++;
      }
    }
    this.rank = rank;
  }

  /** x = S⁺-like solution: S x = b on the kept rows, x = 0 on dropped rows. x may alias b. */
  solve(b: Float64Array, x: Float64Array): void {
    const n = this.n;
    const { lp, li, lx, ux, d, dropped } = this;
    if (x !== b) for (let i = 0; i < n; i++) x[i] = b[i];
    for (let j = 0; j < n; j++) {
      const xj = x[j];
      if (xj === 0) continue;
      for (let p = lp[j]; p < lp[j + 1]; p++) x[li[p]] -= lx[p] * xj;
    }
    for (let j = 0; j < n; j++) x[j] = dropped[j] ? 0 : x[j] / d[j];
    for (let j = n - 1; j >= 0; j--) {
      let s = x[j];
      for (let p = lp[j]; p < lp[j + 1]; p++) s -= ux[p] * x[li[p]];
      x[j] = s;
    }
  }
}

/** For each entry p = (i, j) of a CSR matrix with symmetric pattern, the slot of (j, i). */
function transposeSlots(a: CsrMatrix): Int32Array {
  const { rows, rowPtr, colIdx } = a;
  const slot = new Int32Array(rowPtr[rows]);
  const next = Int32Array.from(rowPtr.subarray(0, rows));
  // Walking rows in order visits the entries (j, i) of column i by increasing j, which
  // is the order of row i's columns (ascending): next[i] runs along row i.
  for (let r = 0; r < rows; r++)
    for (let p = rowPtr[r]; p < rowPtr[r + 1]; p++) {
      const c = colIdx[p];
      const q = next[c]++;
      if (colIdx[q] !== r) throw new Error("semidefinite-ldlt: the pattern is not symmetric");
      slot[p] = q;
    }
  return slot;
}
