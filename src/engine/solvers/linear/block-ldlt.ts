/**
 * Sparse block LDLᵀ factorization P A Pᵀ = L D Lᵀ of a symmetric matrix of 3×3 blocks (a
 * SparseBlockMatrix of particles: cloth, fem nodes), read straight from the block
 * matrix's values, without a CSR copy. L is block unit lower triangular, D block diagonal
 * (symmetric 3×3 blocks, stored inverted). The algorithm is T. A. Davis' up-looking
 * ldl_numeric (as sparse-ldlt.ts: "Algorithm 849", ACM TOMS 31, 2005) with every scalar
 * replaced by a 3×3 block: row k of L solves L(0:k,0:k) u = C(0:k,k) over the reach of
 * C(:,k) in the block elimination tree, then L_ki = u_iᵀ D_i⁻¹ and
 * D_k = C_kk − Σ_i L_ki u_i. Working on node blocks divides the index work and the
 * ordering's graph by 3 (and 9 for the stored indices) and keeps the 27 multiply-adds of a
 * block update in registers: on the fem beam of bench/fem.ts (4 840 nodes) it factors
 * several times faster than the scalar sparse-ldlt.ts on the same AMD-ordered pattern.
 *
 * The ordering is AMD (ordering.ts) on the block graph (the fill of a node-level ordering
 * equals that of the scalar one on the expanded graph up to AMD's tie breaks). Symbolic
 * analysis is redone only when the block matrix's structureVersion changes; a numeric
 * factorization allocates nothing.
 *
 * A is read as symmetric: where blocks (i, j) and (j, i) are both stored their mean
 * ½(A_ij + A_jiᵀ) is used (diagonal blocks: ½(A_ii + A_iiᵀ)), so a matrix whose
 * nonsymmetric part is small (damped springs' velocity Jacobian) is factored by its
 * symmetric part. No pivoting: the factorization exists when every D_k is nonsingular,
 * which holds for symmetric positive definite A; `positiveDefinite` reports whether every
 * D_k was (the factorization is then an SPD preconditioner, see factored-pcg.ts).
 */
import type { SparseBlockMatrix } from "../../math/block-matrix";
import { checkDeadline } from "../deadline";
import { eliminationTree, reachUpTree, sortByColumn } from "./elimination-tree";
import { amdOrder } from "./ordering";

/** Relative size of a D_k determinant below which the pivot block counts as singular. */
const SINGULAR_PIVOT = 1e-13;

/** Outcomes of a numeric factorization (BlockLdlt.factorColumns). */
const SINGULAR = 0;
const INDEFINITE = 1;
const POSITIVE_DEFINITE = 2;

/**
 * The factors of a BlockLdlt as they stand after a factorization, read-only, for sweeps
 * written outside it (the contact Delassus build's sparse forward sweeps,
 * contact/ldlt-delassus.ts). Valid until the next factorization.
 */
export interface BlockLdltFactors {
  /** Number of 3×3 block rows. */
  readonly nb: number;
  /** perm[k] = original block at position k. */
  readonly perm: Int32Array;
  /** Elimination tree: parent[k] > k, −1 at a root (L's column k holds ancestors of k). */
  readonly parent: Int32Array;
  /** L's block columns: column j's rows li[lp[j] .. lp[j + 1]), its blocks lx (9 each, row-major). */
  readonly lp: Int32Array;
  readonly li: Int32Array;
  readonly lx: Float64Array;
  /** D_k⁻¹, 9 a block row (symmetric). */
  readonly dinv: Float64Array;
}

export class BlockLdlt {
  /** Number of 3×3 block rows. */
  nb = 0;
  /** perm[k] = original block at position k (ordering.ts convention). */
  perm: Int32Array = new Int32Array(0);
  /** Whether the last numeric factorization completed (no singular pivot block). */
  ok = false;
  /**
   * The block (of the matrix, before the ordering) whose pivot D_k the last numeric
   * factorization found singular or not finite, −1 when it completed.
   */
  singularBlock = -1;
  /** Whether every pivot block D_k of the last factorization was positive definite. */
  positiveDefinite = false;
  /** Multiply-adds of one numeric factorization (from the symbolic analysis). */
  factorCost = 0;
  /** Multiply-adds of one solve (two triangular sweeps and the D⁻¹ products). */
  solveCost = 0;
  /** Numeric factorizations and symbolic analyses done so far. */
  factorizations = 0;
  analyses = 0;
  /** bᵀx of the last solve (solveInto); −0 before it: a double (see BodySystem on V8). */
  lastDot = -0;

  private version = -1;
  private matrix: SparseBlockMatrix | null = null;
  // permuted upper triangle by block columns: the block C(ci[p], k) for p in cp[k]..cp[k+1]
  // is A(perm row, perm k) at values[src1[p]], or the transpose of values[src2[p]], or
  // their mean when both are stored
  private cp: Int32Array = new Int32Array(0);
  private ci: Int32Array = new Int32Array(0);
  private src1: Int32Array = new Int32Array(0);
  private src2: Int32Array = new Int32Array(0);
  private parent: Int32Array = new Int32Array(0);
  private lp: Int32Array = new Int32Array(0);
  private li: Int32Array = new Int32Array(0);
  /** 3 li[p]: the row's first scalar, for the sweeps (V8 checks a product for overflow). */
  private li3: Int32Array = new Int32Array(0);
  private lnz: Int32Array = new Int32Array(0);
  private flag: Int32Array = new Int32Array(0);
  private patt: Int32Array = new Int32Array(0);
  /** L's blocks, 9 a block (row-major), column by column as li. */
  private lx: Float64Array = new Float64Array(0);
  /** D_k⁻¹, 9 a block row. */
  private dinv: Float64Array = new Float64Array(0);
  /** One block column of the numeric phase (9 per block row). */
  private y: Float64Array = new Float64Array(0);
  /** Permuted right-hand side of `solve` (3 per block row). */
  private z: Float64Array = new Float64Array(0);
  /** What factors() returns, made again when analyze() replaced the arrays. */
  private view: BlockLdltFactors | null = null;
  /** The two sweeps of `solve` on z, over this analysis' arrays (blockSweeps). */
  private sweeps: (z: Float64Array) => void = () => {};

  /**
   * Factors the symmetric part of m (every block 3×3; its pattern analysed when it
   * changed), reading the block values from `values` (m's own by default: a copy with
   * m's layout may be given). Returns `ok`.
   */
  factor(m: SparseBlockMatrix, values: Float64Array = m.values): boolean {
    this.prepare(m);
    this.numeric(values);
    return this.ok;
  }

  /**
   * The symbolic analysis of m's pattern (ordering, elimination tree, storage, the costs),
   * redone only when the pattern changed; true when it was redone (no factorization then).
   */
  prepare(m: SparseBlockMatrix): boolean {
    if (this.matrix === m && this.version === m.structureVersion) return false;
    this.analyze(m);
    this.matrix = m;
    this.version = m.structureVersion;
    this.ok = false;
    return true;
  }

  private analyze(m: SparseBlockMatrix): void {
    if (!m.uniform3) throw new Error("block-ldlt: every block must be 3×3 (particles)");
    const nb = m.numBlocks;
    this.nb = nb;
    const { rowStart, colBlock, valueStart } = m.pattern;
    // the block graph of A + Aᵀ without the diagonal: every stored off-diagonal block
    // gives an edge both ways, duplicates removed with a mark per node
    const deg = new Int32Array(nb + 1);
    for (let bi = 0; bi < nb; bi++)
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const bj = colBlock[k];
        if (bj === bi) continue;
        deg[bi + 1]++;
        deg[bj + 1]++;
      }
    for (let i = 0; i < nb; i++) deg[i + 1] += deg[i];
    const raw = new Int32Array(deg[nb]);
    const fill = deg.slice(0, nb);
    for (let bi = 0; bi < nb; bi++)
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const bj = colBlock[k];
        if (bj === bi) continue;
        raw[fill[bi]++] = bj;
        raw[fill[bj]++] = bi;
      }
    const mark = new Int32Array(nb).fill(-1);
    const ptr = new Int32Array(nb + 1);
    const idx = new Int32Array(raw.length);
    let q = 0;
    for (let i = 0; i < nb; i++) {
      mark[i] = i;
      for (let p = deg[i]; p < deg[i + 1]; p++) {
        const j = raw[p];
        if (mark[j] === i) continue;
        mark[j] = i;
        idx[q++] = j;
      }
      ptr[i + 1] = q;
    }
    this.perm = amdOrder({ n: nb, ptr, idx: idx.subarray(0, q) });
    const pinv = new Int32Array(nb);
    for (let k = 0; k < nb; k++) pinv[this.perm[k]] = k;
    // the permuted upper triangle, each stored block or its mirror once
    const nblocks = rowStart[nb];
    const colOf = new Int32Array(nblocks);
    const rowOf = new Int32Array(nblocks);
    const s1 = new Int32Array(nblocks);
    const s2 = new Int32Array(nblocks);
    const cp = new Int32Array(nb + 1);
    let e = 0;
    for (let bi = 0; bi < nb; bi++)
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++) {
        const bj = colBlock[k];
        const r = pinv[bi];
        const c = pinv[bj];
        if (bj === bi) {
          s1[e] = s2[e] = valueStart[k];
        } else if (r < c) {
          s1[e] = valueStart[k];
          s2[e] = m.offsetOf(bj, bi);
        } else {
          // the mirror (bj, bi) sits in the upper triangle; it is taken there when stored
          if (m.offsetOf(bj, bi) >= 0) continue;
          s1[e] = -1;
          s2[e] = valueStart[k];
        }
        rowOf[e] = Math.min(r, c);
        colOf[e] = Math.max(r, c);
        cp[colOf[e] + 1]++;
        e++;
      }
    const upper = sortByColumn(nb, e, rowOf, colOf, s1, s2, cp);
    this.ci = upper.ci;
    this.src1 = upper.src1;
    this.src2 = upper.src2;
    this.cp = cp;
    const { parent, lnz, lp, flag } = eliminationTree(nb, cp, this.ci);
    this.parent = parent;
    this.lp = lp;
    this.lnz = lnz;
    this.flag = flag;
    this.li = new Int32Array(lp[nb]);
    this.li3 = new Int32Array(lp[nb]);
    this.lx = new Float64Array(9 * lp[nb]);
    this.dinv = new Float64Array(9 * nb);
    this.y = new Float64Array(9 * nb);
    this.z = new Float64Array(3 * nb);
    this.sweeps = blockSweeps(nb, lp, this.li3, this.lx, this.dinv);
    this.patt = new Int32Array(nb);
    // column i of L receives one 27-multiply-add update per later entry of its own: row
    // k's solve applies the lnz entries present then, Σ_j<lnz j per column; plus the
    // entry itself (L_ki, D_k's update: 54)
    let cost = 0;
    for (let i = 0; i < nb; i++) cost += 27 * ((lnz[i] * (lnz[i] - 1)) / 2) + 54 * lnz[i] + 27;
    this.factorCost = cost;
    this.solveCost = 18 * lp[nb] + 9 * nb;
    this.analyses++;
  }

  /**
   * The numeric factorization of v (the matrix's values), its outcome in ok and
   * positiveDefinite. The loop is a method of its own (factorColumns), which returns the
   * outcome, so that nothing follows it here that V8 must have seen run: a first
   * factorization long enough for V8 to compile its loop while it runs (on-stack
   * replacement) had the code after the loop compiled before that code had ever run, and
   * that code deoptimized at `this.ok = true` at every factorization after (the stiff
   * cloth's coarse matrix, once a step for the whole run in 4 runs of 10; compiled code
   * taken by on-stack replacement is kept across deoptimizations in Node 20).
   */
  private numeric(v: Float64Array): void {
    this.factorizations++;
    this.ok = false;
    this.singularBlock = -1;
    this.positiveDefinite = true;
    const outcome = this.factorColumns(v);
    this.positiveDefinite = outcome === POSITIVE_DEFINITE;
    this.ok = outcome !== SINGULAR;
  }

  /** numeric's loop: L and D⁻¹ of v, block row by block row; returns the outcome. */
  private factorColumns(v: Float64Array): number {
    const nb = this.nb;
    const { cp, ci, src1, src2, parent, lp, li, li3, lx, lnz, flag, patt, y, dinv } = this;
    let positive = true;
    for (let k = 0; k < nb; k++) {
      if ((k & 1023) === 1023) checkDeadline();
      let top = nb;
      flag[k] = k;
      lnz[k] = 0;
      for (let p = cp[k]; p < cp[k + 1]; p++) {
        const i = ci[p];
        // y_i += C(i, k): A(perm i, perm k), the mirror's transpose, or their mean
        const a = src1[p];
        const b = src2[p];
        const o = 9 * i;
        if (a >= 0 && b >= 0)
          for (let r = 0; r < 3; r++)
            for (let c = 0; c < 3; c++)
              y[o + 3 * r + c] += 0.5 * (v[a + 3 * r + c] + v[b + 3 * c + r]);
        else if (a >= 0) for (let t = 0; t < 9; t++) y[o + t] += v[a + t];
        else
          for (let r = 0; r < 3; r++)
            for (let c = 0; c < 3; c++) y[o + 3 * r + c] += v[b + 3 * c + r];
        top = reachUpTree(i, k, parent, flag, patt, top);
      }
      const ok = 9 * k;
      let d00 = y[ok];
      let d01 = y[ok + 1];
      let d02 = y[ok + 2];
      let d10 = y[ok + 3];
      let d11 = y[ok + 4];
      let d12 = y[ok + 5];
      let d20 = y[ok + 6];
      let d21 = y[ok + 7];
      let d22 = y[ok + 8];
      y.fill(0, ok, ok + 9);
      for (; top < nb; top++) {
        const i = patt[top];
        const oi = 9 * i;
        // u = y_i, the block of L(0:k,0:k)⁻¹ C(0:k, k) at row i
        const u00 = y[oi];
        const u01 = y[oi + 1];
        const u02 = y[oi + 2];
        const u10 = y[oi + 3];
        const u11 = y[oi + 4];
        const u12 = y[oi + 5];
        const u20 = y[oi + 6];
        const u21 = y[oi + 7];
        const u22 = y[oi + 8];
        y.fill(0, oi, oi + 9);
        const p2 = lp[i] + lnz[i];
        // y_r −= L_ri u for the entries of column i so far
        for (let p = lp[i]; p < p2; p++) {
          const o = 9 * li[p];
          const l = 9 * p;
          // the block's three rows written out (V8 runs a loop over them more slowly:
          // bench/README.md, "Factored PCG")
          const a0 = lx[l];
          const a1 = lx[l + 1];
          const a2 = lx[l + 2];
          y[o] -= a0 * u00 + a1 * u10 + a2 * u20;
          y[o + 1] -= a0 * u01 + a1 * u11 + a2 * u21;
          y[o + 2] -= a0 * u02 + a1 * u12 + a2 * u22;
          const b0 = lx[l + 3];
          const b1 = lx[l + 4];
          const b2 = lx[l + 5];
          y[o + 3] -= b0 * u00 + b1 * u10 + b2 * u20;
          y[o + 4] -= b0 * u01 + b1 * u11 + b2 * u21;
          y[o + 5] -= b0 * u02 + b1 * u12 + b2 * u22;
          const c0 = lx[l + 6];
          const c1 = lx[l + 7];
          const c2 = lx[l + 8];
          y[o + 6] -= c0 * u00 + c1 * u10 + c2 * u20;
          y[o + 7] -= c0 * u01 + c1 * u11 + c2 * u21;
          y[o + 8] -= c0 * u02 + c1 * u12 + c2 * u22;
        }
        // L_ki = uᵀ D_i⁻¹ (D_i⁻¹ symmetric)
        const di = 9 * i;
        const e00 = dinv[di];
        const e01 = dinv[di + 1];
        const e02 = dinv[di + 2];
        const e11 = dinv[di + 4];
        const e12 = dinv[di + 5];
        const e22 = dinv[di + 8];
        const l00 = u00 * e00 + u10 * e01 + u20 * e02;
        const l01 = u00 * e01 + u10 * e11 + u20 * e12;
        const l02 = u00 * e02 + u10 * e12 + u20 * e22;
        const l10 = u01 * e00 + u11 * e01 + u21 * e02;
        const l11 = u01 * e01 + u11 * e11 + u21 * e12;
        const l12 = u01 * e02 + u11 * e12 + u21 * e22;
        const l20 = u02 * e00 + u12 * e01 + u22 * e02;
        const l21 = u02 * e01 + u12 * e11 + u22 * e12;
        const l22 = u02 * e02 + u12 * e12 + u22 * e22;
        // D_k −= L_ki u
        d00 -= l00 * u00 + l01 * u10 + l02 * u20;
        d01 -= l00 * u01 + l01 * u11 + l02 * u21;
        d02 -= l00 * u02 + l01 * u12 + l02 * u22;
        d10 -= l10 * u00 + l11 * u10 + l12 * u20;
        d11 -= l10 * u01 + l11 * u11 + l12 * u21;
        d12 -= l10 * u02 + l11 * u12 + l12 * u22;
        d20 -= l20 * u00 + l21 * u10 + l22 * u20;
        d21 -= l20 * u01 + l21 * u11 + l22 * u21;
        d22 -= l20 * u02 + l21 * u12 + l22 * u22;
        li[p2] = k;
        li3[p2] = 3 * k;
        const l = 9 * p2;
        lx[l] = l00;
        lx[l + 1] = l01;
        lx[l + 2] = l02;
        lx[l + 3] = l10;
        lx[l + 4] = l11;
        lx[l + 5] = l12;
        lx[l + 6] = l20;
        lx[l + 7] = l21;
        lx[l + 8] = l22;
        lnz[i]++;
      }
      // D_k is symmetric up to rounding: invert its symmetric part
      const s01 = 0.5 * (d01 + d10);
      const s02 = 0.5 * (d02 + d20);
      const s12 = 0.5 * (d12 + d21);
      const c00 = d11 * d22 - s12 * s12;
      const c01 = s02 * s12 - s01 * d22;
      const c02 = s01 * s12 - d11 * s02;
      const det = d00 * c00 + s01 * c01 + s02 * c02;
      const scale = Math.abs(d00 * d11 * d22) + Math.abs(d00 * s12 * s12);
      const scaleAll = scale + Math.abs(d11 * s02 * s02) + Math.abs(d22 * s01 * s01);
      if (!(Math.abs(det) > SINGULAR_PIVOT * scaleAll)) {
        this.singularBlock = this.perm[k];
        return SINGULAR;
      }
      // Sylvester: positive definite iff the leading minors d00, d00 d11 − s01², det > 0
      if (!(d00 > 0 && d00 * d11 - s01 * s01 > 0 && det > 0)) positive = false;
      const inv = 1 / det;
      dinv[ok] = c00 * inv;
      dinv[ok + 1] = dinv[ok + 3] = c01 * inv;
      dinv[ok + 2] = dinv[ok + 6] = c02 * inv;
      dinv[ok + 4] = (d00 * d22 - s02 * s02) * inv;
      dinv[ok + 5] = dinv[ok + 7] = (s01 * s02 - d00 * s12) * inv;
      dinv[ok + 8] = (d00 * d11 - s01 * s01) * inv;
    }
    return positive ? POSITIVE_DEFINITE : INDEFINITE;
  }

  /** The factors of the last factorization (the same object while the pattern stays). */
  factors(): BlockLdltFactors {
    const view = this.view;
    if (view !== null && view.lx === this.lx && view.perm === this.perm) return view;
    const { nb, perm, parent, lp, li, lx, dinv } = this;
    this.view = { nb, perm, parent, lp, li, lx, dinv };
    return this.view;
  }

  /**
   * x = A⁻¹ b with the last factorization (b and x of length 3·nb, may alias). Returns
   * bᵀx (what preconditioned CG needs next, for free while x is scattered).
   */
  solve(b: Float64Array, x: Float64Array): number {
    this.solveInto(b, x);
    return this.lastDot;
  }

  /**
   * As `solve`, with bᵀx left in lastDot rather than returned: a double returned from a
   * call V8 does not inline (this one, for its size) is a heap number, and the two-level
   * preconditioner's coarse solve runs once a CG iteration (aggregation-multigrid.ts).
   *
   * Both sweeps read L in one direction through memory, the forward one from the first
   * block to the last, the backward one from the last to the first (each column from
   * its last entry), so that the hardware prefetcher streams lx (9 float64 a block, L
   * far larger than the caches: 18 MB on the fem beam of bench/fem.ts); walking the
   * columns backwards but each column forwards breaks the stream at every column.
   */
  solveInto(b: Float64Array, x: Float64Array): void {
    const nb = this.nb;
    const { perm, z } = this;
    for (let k = 0; k < nb; k++) {
      const o = 3 * perm[k];
      z[3 * k] = b[o];
      z[3 * k + 1] = b[o + 1];
      z[3 * k + 2] = b[o + 2];
    }
    this.sweeps(z);
    let bx = 0;
    for (let k = 0; k < nb; k++) {
      const o = 3 * perm[k];
      const x0 = z[3 * k];
      const x1 = z[3 * k + 1];
      const x2 = z[3 * k + 2];
      bx += b[o] * x0 + b[o + 1] * x1 + b[o + 2] * x2;
      x[o] = x0;
      x[o + 1] = x1;
      x[o + 2] = x2;
    }
    this.lastDot = bx;
  }
}

/**
 * `solve`'s two sweeps over one analysis' arrays, as a closure that calls them with its
 * captured arrays: V8 specializes a closure made once at its site to what it captured,
 * so that the sweeps, inlined, read L's typed arrays as constants (their data pointers
 * and lengths otherwise loaded again after every store to z). The stiff cloth's coarse
 * matrix (121 block rows, 1 079 blocks of L): both sweeps 13.8 µs with the arrays as
 * arguments, 11.0 µs through the closure (bench/README.md, "Stiff cloth";
 * spring-product-kernel.ts has the same construction).
 */
function blockSweeps(
  nb: number,
  lp: Int32Array,
  li3: Int32Array,
  lx: Float64Array,
  dinv: Float64Array,
): (z: Float64Array) => void {
  return (z: Float64Array): void => {
    forwardSweep(z, nb, lp, li3, lx, dinv);
    backwardSweep(z, nb, lp, li3, lx);
  };
}

/**
 * L w = z (permuted), and w_j ← D_j⁻¹ w_j once column j has been applied, in place. L's
 * blocks are walked with running offsets p (block) and l = 9 p and the rows read
 * premultiplied (li3): V8 checks every integer product for overflow, and the sweeps took
 * 7.4 and 7.9 µs with them against 6.5 and 5.2 µs without on the coarse matrix above.
 */
function forwardSweep(
  z: Float64Array,
  nb: number,
  lp: Int32Array,
  li3: Int32Array,
  lx: Float64Array,
  dinv: Float64Array,
): void {
  let p = 0;
  let l = 0;
  for (let j = 0; j < nb; j++) {
    const oj = 3 * j;
    const w0 = z[oj];
    const w1 = z[oj + 1];
    const w2 = z[oj + 2];
    const end = lp[j + 1];
    // a zero w_j (a sparse right-hand side) changes nothing below
    if (w0 !== 0 || w1 !== 0 || w2 !== 0)
      for (; p < end; p++, l += 9) {
        const o = li3[p];
        z[o] -= lx[l] * w0 + lx[l + 1] * w1 + lx[l + 2] * w2;
        z[o + 1] -= lx[l + 3] * w0 + lx[l + 4] * w1 + lx[l + 5] * w2;
        z[o + 2] -= lx[l + 6] * w0 + lx[l + 7] * w1 + lx[l + 8] * w2;
      }
    else {
      l += 9 * (end - p);
      p = end;
    }
    const d = 9 * j;
    z[oj] = dinv[d] * w0 + dinv[d + 1] * w1 + dinv[d + 2] * w2;
    z[oj + 1] = dinv[d + 3] * w0 + dinv[d + 4] * w1 + dinv[d + 5] * w2;
    z[oj + 2] = dinv[d + 6] * w0 + dinv[d + 7] * w1 + dinv[d + 8] * w2;
  }
}

/** Lᵀ x = w in place: x_j = w_j − Σ_k L_kjᵀ x_k over column j's rows k, the last first. */
function backwardSweep(
  z: Float64Array,
  nb: number,
  lp: Int32Array,
  li3: Int32Array,
  lx: Float64Array,
): void {
  let p = lp[nb] - 1;
  let l = 9 * p;
  for (let j = nb - 1; j >= 0; j--) {
    const oj = 3 * j;
    let s0 = z[oj];
    let s1 = z[oj + 1];
    let s2 = z[oj + 2];
    const start = lp[j];
    for (; p >= start; p--, l -= 9) {
      const o = li3[p];
      const x0 = z[o];
      const x1 = z[o + 1];
      const x2 = z[o + 2];
      s0 -= lx[l] * x0 + lx[l + 3] * x1 + lx[l + 6] * x2;
      s1 -= lx[l + 1] * x0 + lx[l + 4] * x1 + lx[l + 7] * x2;
      s2 -= lx[l + 2] * x0 + lx[l + 5] * x1 + lx[l + 8] * x2;
    }
    z[oj] = s0;
    z[oj + 1] = s1;
    z[oj + 2] = s2;
  }
}
