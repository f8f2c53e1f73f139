/**
 * Sparse LDLᵀ of a symmetric positive SEMIdefinite matrix in its natural order, with
 * dependent rows dropped: the factorization used for S = G M⁻¹ Gᵀ (schur.ts), which is
 * singular whenever constraint rows are redundant (a planar mechanism built from 3-D
 * joints) or a configuration is singular (a slider-crank driven from the slider at a
 * dead centre). The linear-solver library's LDLᵀ stops at such a zero pivot; this one,
 * like the rank-revealing Cholesky of Higham ("Analysis of the Cholesky decomposition of
 * a semi-definite matrix", 1990) without the pivoting, skips it.
 *
 * Supernodal up-looking LDLᵀ. Consecutive rows with the same pattern form a supernode
 * (the rows of one joint: they touch the same bodies), and L is stored as dense blocks
 * L_KJ (rows of supernode K × rows of J) on the block elimination tree, so the numeric
 * work is small dense products with no index per entry (this generalizes the scalar
 * up-looking factorization of T. A. Davis' LDL, ACM TOMS 31, 2005: its elimination tree
 * becomes a tree of blocks; timings of both in bench/README.md, "Joint factorization").
 * S's values are loaded into the blocks by a list of (entry, slot) pairs per block row,
 * and only fill-in slots are cleared (none on a chain), rather than every block. The
 * solves unroll the 3 × 3 blocks of spherical joints' rows. Block row K solves, for
 * J in its pattern P(K) in increasing order (every I ∈ P(K) ∩ P(J) comes before J),
 *     Y_J L_JJᵀ = S_KJ − Σ_{I ∈ P(K) ∩ P(J)} Y_I L_JIᵀ,      Y_J = L_KJ D_J,
 * then L_KJ = Y_J D_J⁻¹ and the diagonal block S_KK − Σ_J L_KJ Y_Jᵀ is factored densely
 * row by row. The result is the scalar natural-order LDLᵀ, entry for entry.
 *
 * For S = A Aᵀ (A = G M^{-1/2}) the pivot d_k is the squared distance of row k of A from
 * the span of rows 0..k−1 (d_k = R_kk² of the QR of Aᵀ without column pivoting), so the
 * relative pivot d_k / s_kk is sin² of the angle between row k and the earlier rows. Row
 * k is DROPPED when d_k ≤ pivotTolerance · s_kk: it is a combination of earlier rows (to
 * that tolerance); `factor` also drops a row whose pivot is round-off for the unit vector
 * of that combination (screenRoundOff: a dependent row with a small share of its own).
 * A dropped row gets zero L entries, row and column (its Schur
 * complement column is zero too, as |s_ik|² ≤ s_ii s_kk for a semidefinite Schur
 * complement), and solve() returns x_k = 0 for it. Hence for b in range(S) the solution
 * is exact, S x = b, with x supported on the kept rows: the natural order makes the
 * LATER row of a dependent set the dropped one (motors, stacked after the joints, are
 * dropped when a joint's rows already determine them).
 *
 * Unsymmetric values on a symmetric pattern (S = G W⁻¹ Gᵀ with a block-diagonal but
 * nonsymmetric W: gyroscopic and damping Jacobians) are factored as S = L D U with U unit
 * upper triangular, U ≠ Lᵀ, on the same structure and without pivoting (the symmetric
 * part of such an S is positive definite for independent rows). U is stored transposed,
 * Uᵀ_KJ = (U_JK)ᵀ beside L_KJ (so Uᵀ = L when symmetric), and comes from the transposed
 * recurrence V_J L_JJᵀ = S_JKᵀ − Σ_I V_I L_JIᵀ, V_J = Uᵀ_KJ D_J, while row K of L uses
 * Uᵀ where the symmetric case uses L: Y_J Uᵀ_JJᵀ = S_KJ − Σ_I Y_I Uᵀ_JIᵀ; the diagonal
 * block is S_KK − Σ_J L_KJ V_Jᵀ, and the same relative pivot test drops dependent rows.
 *
 * The symbolic analysis (supernodes, block elimination tree, block patterns, the update
 * lists of each block) is done once per pattern; numeric factorization and solves
 * allocate nothing.
 */
import type { CsrMatrix } from "../../math/csr";
import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";

/** screenRoundOff looks at the kept rows whose pivot |d_k/s_kk| is at most this. */
const SCREEN_PIVOT = 1e-6;

export class SemidefiniteLdlt {
  /** Relative pivot threshold d_k ≤ tol·s_kk (sin² of the angle to the earlier rows). */
  pivotTolerance: number;
  /** 1 for a dropped (dependent) row. Valid after `factor`. */
  dropped = new Uint8Array(0);
  /**
   * 1 for a row `factor` drops whatever its pivot: one whose pivot the first pass kept
   * although it is round-off along a null vector (screenRoundOff).
   */
  private forced = new Uint8Array(0);
  /** screenRoundOff's column. */
  private column = new Float64Array(0);
  /** Number of kept rows (the numerical rank of S). */
  rank = 0;

  private n = -1;
  private rowPtrRef: Int32Array | null = null;
  private colIdxRef: Int32Array | null = null;
  /** First row of each supernode (numSupernodes + 1 entries). */
  private snStart = new Int32Array(1);
  /**
   * Block row K: the blocks J ∈ P(K), increasing, at patStart[K] .. patStart[K+1]
   * (patBlock: J; patOff: offset of the r_K × r_J row-major block in lx and ux), then
   * its r_K × r_K diagonal block at diagOff[K] (strictly lower part: L_KK, resp. Uᵀ_KK).
   */
  private patStart = new Int32Array(1);
  private patBlock = new Int32Array(0);
  private patOff = new Int32Array(0);
  private diagOff = new Int32Array(0);
  /**
   * For pattern entry q = (K, J): the pairs I ∈ P(K) ∩ P(J) at updStart[q] ..
   * updStart[q+1]: updY the offset of block (K, I), updL of block (J, I), updR = r_I.
   */
  private updStart = new Int32Array(1);
  private updY = new Int32Array(0);
  private updL = new Int32Array(0);
  private updR = new Int32Array(0);
  /**
   * Block row K's entries of S: for i in loadStart[K] .. loadStart[K+1], S's entry
   * loadSrc[i] (lower triangle, c ≤ k) goes to lx[loadDst[i]], and its transposed entry
   * loadSrcT[i] to ux[loadDst[i]]; the slots of L's structure no entry of S reaches
   * (fill-in) at fillSlot[fillStart[K] .. fillStart[K+1]) start from zero.
   */
  private loadStart = new Int32Array(1);
  private loadSrc = new Int32Array(0);
  private loadSrcT = new Int32Array(0);
  private loadDst = new Int32Array(0);
  private fillStart = new Int32Array(1);
  private fillSlot = new Int32Array(0);
  /** Slot in lx of each entry of S (−1 above the diagonal): `loadSlots`. */
  private entrySlot = new Int32Array(0);
  /**
   * Slot of each entry of S in `store` for an unsymmetric fused load: the lower entries
   * (c ≤ k) in L's part, the upper ones in Uᵀ's part at their transposed position
   * (`loadSlotsUnsymmetric`).
   */
  private entrySlotUnsymmetric = new Int32Array(0);
  /** L's storage (lx) followed by Uᵀ's own (uxOwn): one array for a fused load. */
  private store = new Float64Array(0);
  private lx = new Float64Array(0);
  /** Uᵀ on L's structure (ux = lx when symmetric). */
  private ux = new Float64Array(0);
  private uxOwn = new Float64Array(0);
  /** 1/d_k, 0 for a dropped row. */
  private dinv = new Float64Array(0);
  /** A row of the largest supernode (subtractScaledProduct's work). */
  private work = new Float64Array(0);
  /** s_kk of the matrix factored (the pivot test's reference). */
  private sDiag = new Float64Array(0);
  /**
   * 1 for a block row of 3 rows whose pattern blocks all have 3 rows (spherical joints
   * between bodies with such joints): factored by the unrolled `factorRow3`.
   */
  private row3 = new Uint8Array(0);
  /**
   * The selected inverse Z = L⁻ᵀ D⁺ L⁻¹ on L's blocks (selectedInverse), in lx's layout
   * with the diagonal blocks full (both triangles).
   */
  private zx = new Float64Array(0);
  /**
   * Block column J of L: the block rows K with J ∈ P(K), increasing, at colStart[J] ..
   * colStart[J+1] (colBlock: K, colOff: the offset of L_KJ); built by the first
   * selectedInverse after analysis number colAnalysis.
   */
  private colStart = new Int32Array(1);
  private colBlock = new Int32Array(0);
  private colOff = new Int32Array(0);
  private colAnalysis = -1;
  /** Symbolic analyses done (a new pattern each). */
  private analyses = 0;
  /** inverseEntries' blocks (a stack, one or two a level of its recurrence) and budget. */
  private stack = new Float64Array(0);
  private budget = 0;

  constructor(pivotTolerance = 1e-10) {
    this.pivotTolerance = pivotTolerance;
  }

  /**
   * Factors a. symmetric: a is symmetric and only its lower triangle (entries with column
   * ≤ row) is read; otherwise a's pattern must be symmetric (its values need not be) and
   * S = L D U is computed.
   */
  factor(a: CsrMatrix, symmetric = true): void {
    this.analyzeIfNew(a);
    this.ux = symmetric ? this.lx : this.uxOwn;
    this.forced.fill(0);
    this.numeric(a.values, symmetric);
    if (this.screenRoundOff()) this.numeric(a.values, symmetric);
  }

  /**
   * Marks (forced) the kept rows whose pivot is round-off along a null vector, and tells
   * whether there is one (then `factor` factors again, dropping them). A row k that is a
   * combination of the earlier rows with a small share c of its own (u = U⁻¹ e_k: 1 at k,
   * the combination's coefficients ~1/c before it) keeps a pivot of the elimination's
   * round-off, ε s_kk |u|² ~ ε s_kk/c², which passes the relative test d_k ≤ tol s_kk once
   * c ≲ 1e-3: it is the same test for the unit vector u/|u|, |d_k| ≤ tol |s_kk| |u|² (for
   * S = A Aᵀ, d_k = |Aᵀ u|²; for L D U, S u = d_k L e_k). Kept, such a row's multiplier
   * is the round-off of the right-hand side over d_k: the self-stress (1, −2, 1) of three
   * equal cranks on one coupler, whose vertical dependent row's share is sin θ, carried
   * 1e3 to 1e11 N within 1e-3 rad of the cranks lying flat, and Newton on the joints'
   * rows at the end configuration (backward Euler's, Newmark's) failed there with the
   * step halved 4 times (test/engine/integrators/long-run/parallelogram-singular.test.ts).
   * Only rows with |d_k| ≤ SCREEN_PIVOT |s_kk| are looked at (one back substitution each).
   * `factor` only: a fused load's storage is the factor's (loadSlots), not kept to factor
   * again, so its callers (the projections' S = G M⁻¹ Gᵀ, the symmetric joints' mixed
   * matrix, whose forces act along the step's start G_t: generalized-α, moreau-jean,
   * symplectic-euler, which ran the parallelogram for 60 s) keep such a row; the
   * reactions they report drop its share (ProjectionWorkspace.minimumNorm). Screened too
   * (the storage copied before the first pass), the parallelogram's 60 s at 1 ms kept the
   * same energy (1.763e-5 of 3 g S, moreau-jean and generalized-alpha), its joints within
   * 6e-12 m both ways and its cranks' rates within 9e-6 rad/s of each other both ways,
   * the reactions at the flat passes moved by < 0.1 N: nothing to gain for the copy.
   */
  private screenRoundOff(): boolean {
    const n = this.n;
    const { dinv, sDiag, forced } = this;
    const col = this.column;
    let found = false;
    for (let k = 0; k < n; k++) {
      if (dinv[k] === 0) continue;
      const pivot = Math.abs(1 / (dinv[k] * sDiag[k]));
      if (pivot > SCREEN_PIVOT) continue;
      col.fill(0, 0, n);
      col[k] = 1;
      this.solveUpper(col);
      let uu = 0;
      for (let r = 0; r < n; r++) uu += col[r] * col[r];
      if (pivot > this.pivotTolerance * uu) continue;
      forced[k] = 1;
      found = true;
    }
    return found;
  }

  /**
   * A fused load, for a caller that computes a symmetric S itself (schur.ts): rather than
   * into a.values, it accumulates S's lower triangle into `beginLoad(a)`'s storage, entry
   * p at slot[p] of this array (−1 for the entries above the diagonal, which are not
   * read), then calls `factorLoaded()`. The factorization is the same, operation for
   * operation, as `factor(a)` with those values; it saves copying S into the factor's
   * storage (most of `numeric`'s own time on a chain). Both analyze a's pattern when it
   * is new.
   */
  loadSlots(a: CsrMatrix): Int32Array {
    this.analyzeIfNew(a);
    return this.entrySlot;
  }

  /** The factor storage for a's pattern, zeroed, for a fused load (see loadSlots). */
  beginLoad(a: CsrMatrix): Float64Array {
    this.analyzeIfNew(a);
    this.lx.fill(0);
    return this.lx;
  }

  /** Factors (symmetric) the values a fused load left in the storage (see loadSlots). */
  factorLoaded(): void {
    this.ux = this.lx;
    this.forced.fill(0);
    this.numeric(null, true);
  }

  /**
   * loadSlots for unsymmetric values: entry p of a (every entry, both triangles) at
   * slot[p] of `beginLoadUnsymmetric`'s storage, then `factorLoadedUnsymmetric()`; the
   * same factorization, operation for operation, as `factor(a, false)` with those values,
   * without its load of both triangles (13 of its 23 µs on the 100-link chain's mixed
   * matrix, constrained-solve.ts factorMixed).
   */
  loadSlotsUnsymmetric(a: CsrMatrix): Int32Array {
    this.analyzeIfNew(a);
    return this.entrySlotUnsymmetric;
  }

  /** The zeroed storage of an unsymmetric fused load (see loadSlotsUnsymmetric). */
  beginLoadUnsymmetric(a: CsrMatrix): Float64Array {
    this.analyzeIfNew(a);
    this.store.fill(0);
    return this.store;
  }

  /** Factors (L D U) the values an unsymmetric fused load left in the storage. */
  factorLoadedUnsymmetric(): void {
    this.ux = this.uxOwn;
    this.forced.fill(0);
    this.numeric(null, false);
  }

  private analyzeIfNew(a: CsrMatrix): void {
    if (a.rowPtr !== this.rowPtrRef || a.colIdx !== this.colIdxRef || a.rows !== this.n)
      this.analyze(a);
  }

  private analyze(a: CsrMatrix): void {
    const n = a.rows;
    const { rowPtr, colIdx } = a;
    this.n = n;
    this.analyses++;
    this.rowPtrRef = rowPtr;
    this.colIdxRef = colIdx;
    // Supernodes: runs of rows with identical patterns.
    const starts: number[] = [];
    const sn = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      if (k === 0 || !samePattern(a, k - 1, k)) starts.push(k);
      sn[k] = starts.length - 1;
    }
    const ns = starts.length;
    starts.push(n);
    const snStart = Int32Array.from(starts);
    const size = (K: number) => snStart[K + 1] - snStart[K];
    // Block elimination tree and the block patterns P(K): the reach of K's lower blocks.
    const parent = new Int32Array(ns).fill(-1);
    const mark = new Int32Array(ns).fill(-1);
    const patterns: number[][] = [];
    for (let K = 0; K < ns; K++) {
      mark[K] = K;
      const reach: number[] = [];
      const k = snStart[K];
      for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) {
        let J = sn[colIdx[p]];
        if (J >= K) continue;
        while (mark[J] !== K) {
          if (parent[J] === -1) parent[J] = K;
          mark[J] = K;
          reach.push(J);
          J = parent[J];
        }
      }
      patterns.push(reach.sort((x, y) => x - y));
    }
    // Block offsets, row by row: P(K)'s blocks, then the diagonal block.
    const patStart = new Int32Array(ns + 1);
    for (let K = 0; K < ns; K++) patStart[K + 1] = patStart[K] + patterns[K].length;
    const patBlock = new Int32Array(patStart[ns]);
    const patOff = new Int32Array(patStart[ns]);
    const diagOff = new Int32Array(ns);
    let off = 0;
    for (let K = 0; K < ns; K++) {
      patterns[K].forEach((J, i) => {
        patBlock[patStart[K] + i] = J;
        patOff[patStart[K] + i] = off;
        off += size(K) * size(J);
      });
      diagOff[K] = off;
      off += size(K) ** 2;
    }
    // Update lists: for (K, J), the I in both P(K) and P(J) (sorted merge).
    const updStart = new Int32Array(patStart[ns] + 1);
    const updY: number[] = [];
    const updL: number[] = [];
    const updR: number[] = [];
    for (let K = 0; K < ns; K++)
      for (let q = patStart[K]; q < patStart[K + 1]; q++) {
        const J = patBlock[q];
        let x = patStart[K];
        let y = patStart[J];
        while (x < q && y < patStart[J + 1]) {
          const I = patBlock[x];
          const IJ = patBlock[y];
          if (I < IJ) x++;
          else if (IJ < I) y++;
          else {
            updY.push(patOff[x]);
            updL.push(patOff[y]);
            updR.push(size(I));
            x++;
            y++;
          }
        }
        updStart[q + 1] = updY.length;
      }
    // Where each lower entry of S goes, block row by block row, and the fill-in slots.
    const transpose = transposeSlots(a);
    const loadStart = new Int32Array(ns + 1);
    const loadSrc: number[] = [];
    const loadDst: number[] = [];
    const fillStart = new Int32Array(ns + 1);
    const fillSlot: number[] = [];
    const reached = new Uint8Array(off);
    for (let K = 0; K < ns; K++) {
      for (let k = snStart[K]; k < snStart[K + 1]; k++) {
        const i = k - snStart[K];
        for (let p = rowPtr[k]; p < rowPtr[k + 1]; p++) {
          const c = colIdx[p];
          if (c > k) continue;
          const J = sn[c];
          const j = c - snStart[J];
          let slot: number;
          if (J === K) slot = diagOff[K] + i * size(K) + j;
          else {
            let q = patStart[K];
            while (patBlock[q] !== J) q++;
            slot = patOff[q] + i * size(J) + j;
          }
          loadSrc.push(p);
          loadDst.push(slot);
          reached[slot] = 1;
        }
      }
      loadStart[K + 1] = loadSrc.length;
      // L's structure in block row K: the blocks of P(K), then the diagonal block's lower
      // triangle with its diagonal (its strict upper part is never read)
      const rK = size(K);
      for (let q = patStart[K]; q < patStart[K + 1]; q++)
        for (let e = 0; e < rK * size(patBlock[q]); e++)
          if (!reached[patOff[q] + e]) fillSlot.push(patOff[q] + e);
      for (let r = 0; r < rK; r++)
        for (let c = 0; c <= r; c++)
          if (!reached[diagOff[K] + r * rK + c]) fillSlot.push(diagOff[K] + r * rK + c);
      fillStart[K + 1] = fillSlot.length;
    }
    this.snStart = snStart;
    this.patStart = patStart;
    this.patBlock = patBlock;
    this.patOff = patOff;
    this.diagOff = diagOff;
    this.updStart = updStart;
    this.updY = Int32Array.from(updY);
    this.updL = Int32Array.from(updL);
    this.updR = Int32Array.from(updR);
    this.loadStart = loadStart;
    this.loadSrc = Int32Array.from(loadSrc);
    this.loadSrcT = Int32Array.from(loadSrc, (p) => transpose[p]);
    this.loadDst = Int32Array.from(loadDst);
    this.fillStart = fillStart;
    this.fillSlot = Int32Array.from(fillSlot);
    this.entrySlot = new Int32Array(colIdx.length).fill(-1);
    for (let e = 0; e < loadSrc.length; e++) this.entrySlot[loadSrc[e]] = loadDst[e];
    const rowOf = new Int32Array(colIdx.length);
    for (let k = 0; k < n; k++) rowOf.fill(k, rowPtr[k], rowPtr[k + 1]);
    this.entrySlotUnsymmetric = Int32Array.from(colIdx, (c, p) =>
      c <= rowOf[p] ? this.entrySlot[p] : off + this.entrySlot[transpose[p]],
    );
    this.store = new Float64Array(2 * off);
    this.lx = this.store.subarray(0, off);
    this.uxOwn = this.store.subarray(off);
    this.ux = this.lx;
    this.dinv = new Float64Array(n);
    this.sDiag = new Float64Array(n);
    let widest = 0;
    for (let K = 0; K < ns; K++) widest = Math.max(widest, size(K));
    this.row3 = Uint8Array.from({ length: ns }, (_, K) =>
      size(K) === 3 && patterns[K].every((J) => size(J) === 3) ? 1 : 0,
    );
    this.work = new Float64Array(widest);
    this.dropped = new Uint8Array(n);
    this.forced = new Uint8Array(n);
    this.column = new Float64Array(n);
  }

  /**
   * Block row K of L (and of Uᵀ) by the recurrences of the header, from S's values, or
   * with values null from those a fused load left in lx, every other slot zero (see
   * loadSlots).
   */
  private numeric(values: Float64Array | null, symmetric: boolean): void {
    const { snStart, patStart, patBlock, patOff, diagOff, updStart, updY, updL, updR } = this;
    const { loadStart, loadSrc, loadSrcT, loadDst, fillStart, fillSlot } = this;
    const { lx, ux, dinv, sDiag, dropped, work } = this;
    const ns = snStart.length - 1;
    const tol = this.pivotTolerance;
    let rank = 0;
    for (let K = 0; K < ns; K++) {
      const k0 = snStart[K];
      const rK = snStart[K + 1] - k0;
      const q0 = patStart[K];
      const q1 = patStart[K + 1];
      const dOff = diagOff[K];
      // S's rows of K into the block row (lower part; Uᵀ's from the transposed entries)
      if (values !== null) {
        for (let f = fillStart[K]; f < fillStart[K + 1]; f++) {
          lx[fillSlot[f]] = 0;
          ux[fillSlot[f]] = 0;
        }
        for (let e = loadStart[K]; e < loadStart[K + 1]; e++) lx[loadDst[e]] = values[loadSrc[e]];
        if (!symmetric)
          for (let e = loadStart[K]; e < loadStart[K + 1]; e++)
            ux[loadDst[e]] = values[loadSrcT[e]];
      }
      for (let i = 0; i < rK; i++) sDiag[k0 + i] = lx[dOff + i * rK + i];
      if (this.row3[K] === 1) {
        rank += symmetric
          ? this.factorRow3(k0, q0, q1, dOff)
          : this.factorRow3Unsymmetric(k0, q0, q1, dOff);
        continue;
      }
      // Y_J (in lx) and V_J (in ux), J ∈ P(K) increasing
      for (let q = q0; q < q1; q++) {
        const J = patBlock[q];
        const rJ = snStart[J + 1] - snStart[J];
        const o = patOff[q];
        for (let u = updStart[q]; u < updStart[q + 1]; u++) {
          subtractProduct(lx, o, rK, rJ, lx, updY[u], ux, updL[u], updR[u]);
          if (!symmetric) subtractProduct(ux, o, rK, rJ, ux, updY[u], lx, updL[u], updR[u]);
        }
        solveUnitLowerT(lx, o, rJ, rK, rJ, ux, diagOff[J], rJ);
        if (!symmetric) solveUnitLowerT(ux, o, rJ, rK, rJ, lx, diagOff[J], rJ);
      }
      // diagonal block S_KK − Σ_J Y_J D_J⁻¹ V_Jᵀ, then L_KJ = Y_J D_J⁻¹ (Uᵀ_KJ = V_J D_J⁻¹)
      for (let q = q0; q < q1; q++) {
        const j0 = snStart[patBlock[q]];
        const rJ = snStart[patBlock[q] + 1] - j0;
        const o = patOff[q];
        subtractScaledProduct(lx, dOff, rK, lx, o, ux, o, rJ, dinv, j0, true, work);
        if (!symmetric)
          subtractScaledProduct(ux, dOff, rK, ux, o, lx, o, rJ, dinv, j0, false, work);
        scaleColumns(lx, o, rK, rJ, dinv, j0);
        if (!symmetric) scaleColumns(ux, o, rK, rJ, dinv, j0);
      }
      // the diagonal block, densely, row by row (the scalar recurrence within K)
      for (let r = 0; r < rK; r++) {
        const row = dOff + r * rK;
        solveUnitLowerT(lx, row, rK, 1, r, ux, dOff, rK);
        if (!symmetric) solveUnitLowerT(ux, row, rK, 1, r, lx, dOff, rK);
        let dk = lx[row + r];
        for (let c = 0; c < r; c++) dk -= lx[row + c] * dinv[k0 + c] * ux[row + c];
        scaleColumns(lx, row, 1, r, dinv, k0);
        if (!symmetric) scaleColumns(ux, row, 1, r, dinv, k0);
        const k = k0 + r;
        const skk = sDiag[k];
        // symmetric: S is semidefinite, d_k ≥ 0 is the squared distance to the earlier
        // rows; unsymmetric (G W⁻¹ Gᵀ, or the mixed G M⁻¹ G_tᵀ of acceleration-step.ts'
        // symmetric joints, whose rows and columns may have turned apart), |d_k| against |s_kk|
        const keep =
          this.forced[k] === 0 &&
          (symmetric ? skk > 0 && dk > tol * skk : skk !== 0 && Math.abs(dk) > tol * Math.abs(skk));
        if (!keep) {
          dropped[k] = 1;
          dinv[k] = 0;
          // row k of L (and column k of U) removed
          for (let q = q0; q < q1; q++) {
            const rJ = snStart[patBlock[q] + 1] - snStart[patBlock[q]];
            for (let m = 0; m < rJ; m++) {
              lx[patOff[q] + r * rJ + m] = 0;
              ux[patOff[q] + r * rJ + m] = 0;
            }
          }
          for (let c = 0; c < r; c++) {
            lx[row + c] = 0;
            ux[row + c] = 0;
          }
        } else {
          dropped[k] = 0;
          dinv[k] = 1 / dk;
          rank++;
        }
      }
    }
    this.rank = rank;
  }

  /**
   * Block row K (rows k0..k0+2) of a symmetric factorization when it and every block of
   * its pattern have 3 rows: the recurrences of `numeric` with the 3 × 3 products
   * unrolled: the same operations in the same order, so bit-identical factors, without
   * the general loops' index arithmetic per entry (spherical joints, the common case;
   * bench/README.md, "Joint factorization"). Returns the number of rows kept.
   */
  private factorRow3(k0: number, q0: number, q1: number, dOff: number): number {
    const { lx, dinv, snStart, patBlock, patOff, diagOff, updStart, updY, updL, updR } = this;
    // Y_J = S_KJ − Σ_I Y_I L_JIᵀ, then Y_J L_JJᵀ = that (columns 1 and 2 of each row)
    for (let q = q0; q < q1; q++) {
      const o = patOff[q];
      for (let u = updStart[q]; u < updStart[q + 1]; u++)
        subtractProduct(lx, o, 3, 3, lx, updY[u], lx, updL[u], updR[u]);
      const d = diagOff[patBlock[q]];
      solveUnitLower3T(lx, o, lx[d + 3], lx[d + 6], lx[d + 7]);
    }
    // S_KK − Σ_J Y_J D_J⁻¹ Y_Jᵀ (lower triangle), then L_KJ = Y_J D_J⁻¹
    let s00 = lx[dOff];
    let s10 = lx[dOff + 3];
    let s11 = lx[dOff + 4];
    let s20 = lx[dOff + 6];
    let s21 = lx[dOff + 7];
    let s22 = lx[dOff + 8];
    for (let q = q0; q < q1; q++) {
      const o = patOff[q];
      const j0 = snStart[patBlock[q]];
      const d0 = dinv[j0];
      const d1 = dinv[j0 + 1];
      const d2 = dinv[j0 + 2];
      const y00 = lx[o];
      const y01 = lx[o + 1];
      const y02 = lx[o + 2];
      const y10 = lx[o + 3];
      const y11 = lx[o + 4];
      const y12 = lx[o + 5];
      const y20 = lx[o + 6];
      const y21 = lx[o + 7];
      const y22 = lx[o + 8];
      const l00 = y00 * d0;
      const l01 = y01 * d1;
      const l02 = y02 * d2;
      const l10 = y10 * d0;
      const l11 = y11 * d1;
      const l12 = y12 * d2;
      const l20 = y20 * d0;
      const l21 = y21 * d1;
      const l22 = y22 * d2;
      s00 -= l00 * y00 + l01 * y01 + l02 * y02;
      s10 -= l10 * y00 + l11 * y01 + l12 * y02;
      s11 -= l10 * y10 + l11 * y11 + l12 * y12;
      s20 -= l20 * y00 + l21 * y01 + l22 * y02;
      s21 -= l20 * y10 + l21 * y11 + l22 * y12;
      s22 -= l20 * y20 + l21 * y21 + l22 * y22;
      lx[o] = l00;
      lx[o + 1] = l01;
      lx[o + 2] = l02;
      lx[o + 3] = l10;
      lx[o + 4] = l11;
      lx[o + 5] = l12;
      lx[o + 6] = l20;
      lx[o + 7] = l21;
      lx[o + 8] = l22;
    }
    // the diagonal block row by row, each pivot tested as in `numeric`
    const keep0 = this.pivot(k0, 0, s00, q0, q1, true);
    const keep1 = this.pivot(k0, 1, s11 - s10 * dinv[k0] * s10, q0, q1, true);
    const L10 = keep1 === 1 ? s10 * dinv[k0] : 0;
    s21 -= s20 * L10;
    const dk2 = s22 - s20 * dinv[k0] * s20 - s21 * dinv[k0 + 1] * s21;
    const keep2 = this.pivot(k0, 2, dk2, q0, q1, true);
    lx[dOff] = s00;
    lx[dOff + 3] = L10;
    lx[dOff + 4] = s11;
    lx[dOff + 6] = keep2 === 1 ? s20 * dinv[k0] : 0;
    lx[dOff + 7] = keep2 === 1 ? s21 * dinv[k0 + 1] : 0;
    lx[dOff + 8] = s22;
    return keep0 + keep1 + keep2;
  }

  /**
   * factorRow3 for unsymmetric values (S = L D U; generalized-α's mixed matrix G V of
   * spherical joints, constrained-solve.ts): `numeric`'s recurrences for L (lx) and Uᵀ
   * (ux) with the 3 × 3 products unrolled, in the same order, as factorRow3 does for the
   * symmetric case. Returns the number of rows kept.
   */
  private factorRow3Unsymmetric(k0: number, q0: number, q1: number, dOff: number): number {
    const { lx, ux, dinv, snStart, patBlock, patOff, diagOff, updStart, updY, updL, updR } = this;
    // Y_J = S_KJ − Σ_I Y_I Uᵀ_JIᵀ, V_J = S_JKᵀ − Σ_I V_I L_JIᵀ; then Y_J Uᵀ_JJᵀ = that and
    // V_J L_JJᵀ = that (columns 1 and 2 of each row)
    for (let q = q0; q < q1; q++) {
      const o = patOff[q];
      for (let u = updStart[q]; u < updStart[q + 1]; u++) {
        subtractProduct(lx, o, 3, 3, lx, updY[u], ux, updL[u], updR[u]);
        subtractProduct(ux, o, 3, 3, ux, updY[u], lx, updL[u], updR[u]);
      }
      const d = diagOff[patBlock[q]];
      solveUnitLower3T(lx, o, ux[d + 3], ux[d + 6], ux[d + 7]);
      solveUnitLower3T(ux, o, lx[d + 3], lx[d + 6], lx[d + 7]);
    }
    // S_KK − Σ_J Y_J D_J⁻¹ V_Jᵀ (L's lower triangle, Uᵀ's strictly lower one), then
    // L_KJ = Y_J D_J⁻¹, Uᵀ_KJ = V_J D_J⁻¹
    let s00 = lx[dOff];
    let s10 = lx[dOff + 3];
    let s11 = lx[dOff + 4];
    let s20 = lx[dOff + 6];
    let s21 = lx[dOff + 7];
    let s22 = lx[dOff + 8];
    let t10 = ux[dOff + 3];
    let t20 = ux[dOff + 6];
    let t21 = ux[dOff + 7];
    for (let q = q0; q < q1; q++) {
      const o = patOff[q];
      const j0 = snStart[patBlock[q]];
      const d0 = dinv[j0];
      const d1 = dinv[j0 + 1];
      const d2 = dinv[j0 + 2];
      const y00 = lx[o];
      const y01 = lx[o + 1];
      const y02 = lx[o + 2];
      const y10 = lx[o + 3];
      const y11 = lx[o + 4];
      const y12 = lx[o + 5];
      const y20 = lx[o + 6];
      const y21 = lx[o + 7];
      const y22 = lx[o + 8];
      const v00 = ux[o];
      const v01 = ux[o + 1];
      const v02 = ux[o + 2];
      const v10 = ux[o + 3];
      const v11 = ux[o + 4];
      const v12 = ux[o + 5];
      const v20 = ux[o + 6];
      const v21 = ux[o + 7];
      const v22 = ux[o + 8];
      const l00 = y00 * d0;
      const l01 = y01 * d1;
      const l02 = y02 * d2;
      const l10 = y10 * d0;
      const l11 = y11 * d1;
      const l12 = y12 * d2;
      const l20 = y20 * d0;
      const l21 = y21 * d1;
      const l22 = y22 * d2;
      const u00 = v00 * d0;
      const u01 = v01 * d1;
      const u02 = v02 * d2;
      const u10 = v10 * d0;
      const u11 = v11 * d1;
      const u12 = v12 * d2;
      const u20 = v20 * d0;
      const u21 = v21 * d1;
      const u22 = v22 * d2;
      s00 -= l00 * v00 + l01 * v01 + l02 * v02;
      s10 -= l10 * v00 + l11 * v01 + l12 * v02;
      s11 -= l10 * v10 + l11 * v11 + l12 * v12;
      s20 -= l20 * v00 + l21 * v01 + l22 * v02;
      s21 -= l20 * v10 + l21 * v11 + l22 * v12;
      s22 -= l20 * v20 + l21 * v21 + l22 * v22;
      t10 -= u10 * y00 + u11 * y01 + u12 * y02;
      t20 -= u20 * y00 + u21 * y01 + u22 * y02;
      t21 -= u20 * y10 + u21 * y11 + u22 * y12;
      lx[o] = l00;
      lx[o + 1] = l01;
      lx[o + 2] = l02;
      lx[o + 3] = l10;
      lx[o + 4] = l11;
      lx[o + 5] = l12;
      lx[o + 6] = l20;
      lx[o + 7] = l21;
      lx[o + 8] = l22;
      ux[o] = u00;
      ux[o + 1] = u01;
      ux[o + 2] = u02;
      ux[o + 3] = u10;
      ux[o + 4] = u11;
      ux[o + 5] = u12;
      ux[o + 6] = u20;
      ux[o + 7] = u21;
      ux[o + 8] = u22;
    }
    // the diagonal block row by row, each pivot tested as in `numeric`
    const keep0 = this.pivot(k0, 0, s00, q0, q1, false);
    const keep1 = this.pivot(k0, 1, s11 - s10 * dinv[k0] * t10, q0, q1, false);
    const L10 = keep1 === 1 ? s10 * dinv[k0] : 0;
    const U10 = keep1 === 1 ? t10 * dinv[k0] : 0;
    s21 -= s20 * U10;
    t21 -= t20 * L10;
    const dk2 = s22 - s20 * dinv[k0] * t20 - s21 * dinv[k0 + 1] * t21;
    const keep2 = this.pivot(k0, 2, dk2, q0, q1, false);
    lx[dOff] = s00;
    lx[dOff + 3] = L10;
    lx[dOff + 4] = s11;
    lx[dOff + 6] = keep2 === 1 ? s20 * dinv[k0] : 0;
    lx[dOff + 7] = keep2 === 1 ? s21 * dinv[k0 + 1] : 0;
    lx[dOff + 8] = s22;
    ux[dOff + 3] = U10;
    ux[dOff + 6] = keep2 === 1 ? t20 * dinv[k0] : 0;
    ux[dOff + 7] = keep2 === 1 ? t21 * dinv[k0 + 1] : 0;
    return keep0 + keep1 + keep2;
  }

  /**
   * The pivot test of `numeric` for row r of the 3-row block row at k0 with pivot dk,
   * symmetric (d_k > 0 against s_kk > 0) or not (|d_k| against |s_kk|, U's pattern rows
   * zeroed too): 1 (kept, dinv set) or 0 (dropped: dinv 0, row r of the pattern blocks
   * zeroed).
   */
  private pivot(
    k0: number,
    r: number,
    dk: number,
    q0: number,
    q1: number,
    symmetric: boolean,
  ): number {
    const k = k0 + r;
    const skk = this.sDiag[k];
    const tolerance = this.pivotTolerance;
    const kept =
      this.forced[k] === 0 &&
      (symmetric
        ? skk > 0 && dk > tolerance * skk
        : skk !== 0 && Math.abs(dk) > tolerance * Math.abs(skk));
    if (!kept) {
      this.dropped[k] = 1;
      this.dinv[k] = 0;
      for (let q = q0; q < q1; q++) {
        const o = this.patOff[q] + 3 * r;
        this.lx.fill(0, o, o + 3);
        if (!symmetric) this.ux.fill(0, o, o + 3);
      }
      return 0;
    }
    this.dropped[k] = 0;
    this.dinv[k] = 1 / dk;
    return 1;
  }

  /**
   * d_k / s_kk of row k after `factor` (symmetric S = A Aᵀ: sin² of the angle between row
   * k of A and the earlier rows' span), 0 for a dropped row.
   */
  relativePivot(k: number): number {
    const d = this.dinv[k];
    return d === 0 ? 0 : 1 / (d * this.sDiag[k]);
  }

  /**
   * x = S⁺-like solution: S x = b on the kept rows, x = 0 on dropped rows. x may alias b.
   * Blocks of 3 rows (a spherical joint's, the commonest) take unrolled branches.
   */
  solve(b: Float64Array, x: Float64Array): void {
    const n = this.n;
    const { snStart, patStart, patBlock, patOff, diagOff, lx, dinv, dropped } = this;
    const ns = snStart.length - 1;
    if (x !== b) for (let i = 0; i < n; i++) x[i] = b[i];
    // L y = b by block rows
    for (let K = 0; K < ns; K++) {
      const k0 = snStart[K];
      const rK = snStart[K + 1] - k0;
      for (let q = patStart[K]; q < patStart[K + 1]; q++) {
        const j0 = snStart[patBlock[q]];
        const rJ = snStart[patBlock[q] + 1] - j0;
        const o = patOff[q];
        if (rK === 3 && rJ === 3) {
          const y0 = x[j0];
          const y1 = x[j0 + 1];
          const y2 = x[j0 + 2];
          x[k0] -= lx[o] * y0 + lx[o + 1] * y1 + lx[o + 2] * y2;
          x[k0 + 1] -= lx[o + 3] * y0 + lx[o + 4] * y1 + lx[o + 5] * y2;
          x[k0 + 2] -= lx[o + 6] * y0 + lx[o + 7] * y1 + lx[o + 8] * y2;
          continue;
        }
        for (let r = 0; r < rK; r++) {
          let s = 0;
          for (let c = 0; c < rJ; c++) s += lx[o + r * rJ + c] * x[j0 + c];
          x[k0 + r] -= s;
        }
      }
      const o = diagOff[K];
      if (rK === 3) {
        const x1 = x[k0 + 1] - lx[o + 3] * x[k0];
        x[k0 + 1] = x1;
        x[k0 + 2] -= lx[o + 6] * x[k0] + lx[o + 7] * x1;
        continue;
      }
      for (let r = 1; r < rK; r++) {
        let s = 0;
        for (let c = 0; c < r; c++) s += lx[o + r * rK + c] * x[k0 + c];
        x[k0 + r] -= s;
      }
    }
    for (let k = 0; k < n; k++) x[k] = dropped[k] ? 0 : x[k] * dinv[k];
    this.solveUpper(x);
  }

  /**
   * x ← U⁻¹ x (Lᵀ when symmetric), by block columns, backwards (U_JK = Uᵀ_KJ transposed):
   * solve's last phase. For symmetric S = A Aᵀ, U⁻¹ e_k is 1 at k and zero after it, and
   * its Aᵀ-residual is the pivot: |Aᵀ U⁻¹ e_k|² = eₖᵀ L⁻¹ S L⁻ᵀ e_k = d_k.
   */
  solveUpper(x: Float64Array): void {
    const { snStart, patStart, patBlock, patOff, diagOff, ux } = this;
    const ns = snStart.length - 1;
    for (let K = ns - 1; K >= 0; K--) {
      const k0 = snStart[K];
      const rK = snStart[K + 1] - k0;
      const o = diagOff[K];
      if (rK === 3) {
        const x2 = x[k0 + 2];
        const x1 = x[k0 + 1] - ux[o + 7] * x2;
        x[k0 + 1] = x1;
        x[k0] -= ux[o + 6] * x2 + ux[o + 3] * x1;
      } else
        for (let r = rK - 1; r >= 0; r--) {
          const xr = x[k0 + r];
          for (let c = 0; c < r; c++) x[k0 + c] -= ux[o + r * rK + c] * xr;
        }
      for (let q = patStart[K]; q < patStart[K + 1]; q++) {
        const j0 = snStart[patBlock[q]];
        const rJ = snStart[patBlock[q] + 1] - j0;
        const oq = patOff[q];
        if (rK === 3 && rJ === 3) {
          const y0 = x[k0];
          const y1 = x[k0 + 1];
          const y2 = x[k0 + 2];
          x[j0] -= ux[oq] * y0 + ux[oq + 3] * y1 + ux[oq + 6] * y2;
          x[j0 + 1] -= ux[oq + 1] * y0 + ux[oq + 4] * y1 + ux[oq + 7] * y2;
          x[j0 + 2] -= ux[oq + 2] * y0 + ux[oq + 5] * y1 + ux[oq + 8] * y2;
          continue;
        }
        for (let r = 0; r < rK; r++) {
          const xr = x[k0 + r];
          if (xr === 0) continue;
          for (let c = 0; c < rJ; c++) x[j0 + c] -= ux[oq + r * rJ + c] * xr;
        }
      }
    }
  }
  /**
   * Takahashi's selected inversion (K. Takahashi, J. Fagan & M.-S. Chin, "Formation of a
   * sparse bus impedance matrix and its application to short circuit study", PICA 1973;
   * A. M. Erisman & W. F. Tinney, Comm. ACM 18, 1975): Z = L⁻ᵀ D⁺ L⁻¹ (the inverse S⁻¹ on
   * the kept rows, zero on the dropped ones: the matrix `solve` applies) on L's block
   * structure, the diagonal blocks and the blocks L_KJ, J ∈ P(K), in about the numeric
   * factorization's flops. From Z L = L⁻ᵀ D⁺ (upper triangular: zero below the diagonal)
   * and Lᵀ Z = D⁺ L⁻¹ (diagonal D⁺), column j of L with structure s(j) (the rows after j
   * in its supernode and the rows of the blocks K ∈ C(J), J ∋ j):
   *     Z_ij = −Σ_{k ∈ s(j)} Z_ik l_kj  (i ∈ s(j)),     Z_jj = d⁺_j − Σ_{k ∈ s(j)} l_kj Z_kj,
   * by columns from the last; every Z_ik it reads lies on the structure (s(j) is a clique
   * of L's graph). Symmetric factorizations only (`factor(a)`, `factorLoaded`). Read the
   * entries with `inverseEntries`; allocation-free after the first call on a pattern.
   */
  selectedInverse(): void {
    if (this.ux !== this.lx) throw new Error("semidefinite-ldlt: selected inversion of L D U");
    this.indexColumns();
    const { lx, dinv, snStart, patStart, patBlock, patOff, diagOff, colStart, colBlock, colOff } =
      this;
    const zx = this.zx;
    const ns = snStart.length - 1;
    for (let J = ns - 1; J >= 0; J--) {
      if ((J & 1023) === 1023) checkDeadline();
      const j0 = snStart[J];
      const rJ = snStart[J + 1] - j0;
      const c0 = colStart[J];
      const c1 = colStart[J + 1];
      // W_K = Σ_{K' ∈ C(J)} Z_KK' L_K'J into Z_KJ's slots (K' = K: its diagonal block;
      // K' < K: the block (K, K') of P(K); K' > K: that of (K', K) transposed)
      for (let c = c0; c < c1; c++)
        zx.fill(0, colOff[c], colOff[c] + blockSize(snStart, colBlock[c], rJ));
      for (let c = c0; c < c1; c++) {
        const K = colBlock[c];
        const rK = snStart[K + 1] - snStart[K];
        const o = colOff[c];
        multiplyAdd(zx, o, rK, rJ, zx, diagOff[K], rK, false, lx, o);
        for (let c2 = c0; c2 < c; c2++) {
          const K2 = colBlock[c2];
          const rK2 = snStart[K2 + 1] - snStart[K2];
          const zo = patOff[findBlock(patStart, patBlock, K, K2)];
          multiplyAdd(zx, o, rK, rJ, zx, zo, rK2, false, lx, colOff[c2]);
          multiplyAdd(zx, colOff[c2], rK2, rJ, zx, zo, rK, true, lx, o);
        }
      }
      for (let c = c0; c < c1; c++) {
        const o = colOff[c];
        const e = o + blockSize(snStart, colBlock[c], rJ);
        for (let p = o; p < e; p++) zx[p] = -zx[p];
      }
      // within J, columns from the last: Z_KJ's column, then the diagonal block's
      const d = diagOff[J];
      for (let col = rJ - 1; col >= 0; col--) {
        for (let c = c0; c < c1; c++) {
          const rK = snStart[colBlock[c] + 1] - snStart[colBlock[c]];
          const o = colOff[c];
          for (let i = 0; i < rK; i++) {
            let s = zx[o + i * rJ + col];
            for (let a = col + 1; a < rJ; a++) s -= zx[o + i * rJ + a] * lx[d + a * rJ + col];
            zx[o + i * rJ + col] = s;
          }
        }
        for (let a = col + 1; a < rJ; a++) {
          let s = 0;
          for (let c = c0; c < c1; c++) {
            const rK = snStart[colBlock[c] + 1] - snStart[colBlock[c]];
            const o = colOff[c];
            for (let i = 0; i < rK; i++) s += zx[o + i * rJ + a] * lx[o + i * rJ + col];
          }
          for (let b = col + 1; b < rJ; b++) s += zx[d + a * rJ + b] * lx[d + b * rJ + col];
          zx[d + a * rJ + col] = -s;
          zx[d + col * rJ + a] = -s;
        }
        let s = dinv[j0 + col];
        for (let c = c0; c < c1; c++) {
          const rK = snStart[colBlock[c] + 1] - snStart[colBlock[c]];
          const o = colOff[c];
          for (let i = 0; i < rK; i++) s -= lx[o + i * rJ + col] * zx[o + i * rJ + col];
        }
        for (let a = col + 1; a < rJ; a++) s -= lx[d + a * rJ + col] * zx[d + a * rJ + col];
        zx[d + col * rJ + col] = s;
      }
    }
  }

  /**
   * out[a·count + b] = Z_{rows[a], rows[b]} for the `count` rows given in increasing order,
   * Z = L⁻ᵀ D⁺ L⁻¹ from the last `selectedInverse`: on L's structure read from it, off it
   * by the same recurrence for a block Z_KJ, K > J (Z L = L⁻ᵀ D⁺ vanishes below the
   * diagonal): Z_KJ L_JJ = −Σ_{K' ∈ C(J)} Z_KK' L_K'J, whose Z_KK' are on the structure or
   * computed so again, the lower block index rising each time (to the elimination tree's
   * root at most). Rows of adjacent bodies' joints need one or two such steps; false
   * (out partly written) when more than `budget` blocks were needed.
   */
  inverseEntries(rows: Int32Array, count: number, out: Float64Array, budget = 64): boolean {
    const { snStart } = this;
    const widest = this.work.length;
    this.stack = grow(this.stack, (2 * budget + 4) * widest * widest);
    this.budget = budget;
    for (let a = 0; a < count; ) {
      const K = this.supernodeOf(rows[a]);
      let a1 = a + 1;
      while (a1 < count && rows[a1] < snStart[K + 1]) a1++;
      for (let b = a; b < count; ) {
        const J = this.supernodeOf(rows[b]);
        let b1 = b + 1;
        while (b1 < count && rows[b1] < snStart[J + 1]) b1++;
        if (!this.inverseBlock(J, K, 0)) return false;
        // block Z_JK (J ≥ K) at stack[0], row-major rJ × rK
        const rK = snStart[K + 1] - snStart[K];
        for (let x = a; x < a1; x++)
          for (let y = b; y < b1; y++) {
            const v = this.stack[(rows[y] - snStart[J]) * rK + rows[x] - snStart[K]];
            out[x * count + y] = v;
            out[y * count + x] = v;
          }
        b = b1;
      }
      a = a1;
    }
    return true;
  }

  /** The supernode holding row k (binary search of snStart). */
  private supernodeOf(k: number): number {
    const s = this.snStart;
    let lo = 0;
    let hi = s.length - 2;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= k) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Z_KJ (rK × rJ, row-major) into stack[t..]: inverseEntries' recurrence; false past the budget. */
  private inverseBlock(K: number, J: number, t: number): boolean {
    const { snStart, zx, lx, diagOff, patStart, patBlock, patOff, colStart, colBlock, colOff } =
      this;
    const st = this.stack;
    const rK = snStart[K + 1] - snStart[K];
    const rJ = snStart[J + 1] - snStart[J];
    if (K === J) {
      for (let p = 0; p < rK * rK; p++) st[t + p] = zx[diagOff[K] + p];
      return true;
    }
    if (K < J) {
      const u = t + rK * rJ;
      if (!this.inverseBlock(J, K, u)) return false;
      for (let r = 0; r < rK; r++)
        for (let c = 0; c < rJ; c++) st[t + r * rJ + c] = st[u + c * rK + r];
      return true;
    }
    const q = findBlock(patStart, patBlock, K, J);
    if (q >= 0) {
      for (let p = 0; p < rK * rJ; p++) st[t + p] = zx[patOff[q] + p];
      return true;
    }
    if (--this.budget < 0) return false;
    st.fill(0, t, t + rK * rJ);
    const u = t + rK * rJ;
    for (let c = colStart[J]; c < colStart[J + 1]; c++) {
      const K2 = colBlock[c];
      const rK2 = snStart[K2 + 1] - snStart[K2];
      if (!this.inverseBlock(K, K2, u)) return false;
      // −Σ Z_KK' L_K'J
      for (let r = 0; r < rK; r++)
        for (let col = 0; col < rJ; col++) {
          let s = 0;
          for (let m = 0; m < rK2; m++) s += st[u + r * rK2 + m] * lx[colOff[c] + m * rJ + col];
          st[t + r * rJ + col] -= s;
        }
    }
    // X L_JJ = that, L_JJ unit lower: columns from the last
    const d = diagOff[J];
    for (let col = rJ - 1; col >= 0; col--)
      for (let r = 0; r < rK; r++) {
        let s = st[t + r * rJ + col];
        for (let a = col + 1; a < rJ; a++) s -= st[t + r * rJ + a] * lx[d + a * rJ + col];
        st[t + r * rJ + col] = s;
      }
    return true;
  }

  /**
   * The block columns of L for the selected inversion, once per pattern: C(J), the block
   * rows K with J ∈ P(K), increasing (colBlock), and the offsets of L_KJ (colOff); and
   * Z's storage.
   */
  private indexColumns(): void {
    if (this.colAnalysis === this.analyses) return;
    const { snStart, patStart, patBlock, patOff } = this;
    const ns = snStart.length - 1;
    const colStart = new Int32Array(ns + 1);
    for (let q = 0; q < patBlock.length; q++) colStart[patBlock[q] + 1]++;
    for (let J = 0; J < ns; J++) colStart[J + 1] += colStart[J];
    const next = colStart.slice(0, ns);
    const colBlock = new Int32Array(patBlock.length);
    const colOff = new Int32Array(patBlock.length);
    // block rows in increasing order: each column's list comes out sorted
    for (let K = 0; K < ns; K++)
      for (let q = patStart[K]; q < patStart[K + 1]; q++) {
        const c = next[patBlock[q]]++;
        colBlock[c] = K;
        colOff[c] = patOff[q];
      }
    this.colStart = colStart;
    this.colBlock = colBlock;
    this.colOff = colOff;
    this.zx = new Float64Array(this.lx.length);
    this.colAnalysis = this.analyses;
  }
}

/**
 * T ← T L⁻ᵀ for the 3 × 3 block T at t, L unit lower triangular with the strictly lower
 * entries l10, l20, l21 (solveUnitLowerT's order of operations).
 */
function solveUnitLower3T(T: Float64Array, t: number, l10: number, l20: number, l21: number): void {
  for (let r = t; r < t + 9; r += 3) {
    const t1 = T[r + 1] - T[r] * l10;
    T[r + 1] = t1;
    T[r + 2] = T[r + 2] - T[r] * l20 - t1 * l21;
  }
}

/** T ← T − A Bᵀ: T rows × cols at t (row-major), A rows × inner at a, B cols × inner at b. */
function subtractProduct(
  T: Float64Array,
  t: number,
  rows: number,
  cols: number,
  A: Float64Array,
  a: number,
  B: Float64Array,
  b: number,
  inner: number,
): void {
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      let s = 0;
      for (let m = 0; m < inner; m++) s += A[a + r * inner + m] * B[b + c * inner + m];
      T[t + r * cols + c] -= s;
    }
}

/**
 * T ← T L⁻ᵀ for the first `cols` columns of the rows × stride block T at t, L unit lower
 * triangular (its strictly lower part row-major at l with row stride ls).
 */
function solveUnitLowerT(
  T: Float64Array,
  t: number,
  stride: number,
  rows: number,
  cols: number,
  L: Float64Array,
  l: number,
  ls: number,
): void {
  // column by column, each entry of L read once for all rows
  for (let c = 1; c < cols; c++)
    for (let m = 0; m < c; m++) {
      const lcm = L[l + c * ls + m];
      if (lcm === 0) continue;
      for (let r = 0; r < rows; r++) T[t + r * stride + c] -= T[t + r * stride + m] * lcm;
    }
}

/**
 * T ← T − A diag(d) Bᵀ on the strictly lower part of the n × n block T at t (and its
 * diagonal when `diagonal`); A, B n × inner at a, b; d = scale[s..s+inner); w a work row.
 */
function subtractScaledProduct(
  T: Float64Array,
  t: number,
  n: number,
  A: Float64Array,
  a: number,
  B: Float64Array,
  b: number,
  inner: number,
  scale: Float64Array,
  s: number,
  diagonal: boolean,
  w: Float64Array,
): void {
  if (n === 3 && inner === 3) {
    subtractScaledProduct3(T, t, A, a, B, b, scale, s, diagonal);
    return;
  }
  // row r of A diag(scale) once (into w, of length ≥ inner), then its dots with B's rows
  for (let r = 0; r < n; r++) {
    for (let m = 0; m < inner; m++) w[m] = A[a + r * inner + m] * scale[s + m];
    const end = diagonal ? r : r - 1;
    for (let c = 0; c <= end; c++) {
      let acc = 0;
      for (let m = 0; m < inner; m++) acc += w[m] * B[b + c * inner + m];
      T[t + r * n + c] -= acc;
    }
  }
}

/** subtractScaledProduct for 3 × 3 blocks (spherical joints' rows), unrolled. */
function subtractScaledProduct3(
  T: Float64Array,
  t: number,
  A: Float64Array,
  a: number,
  B: Float64Array,
  b: number,
  scale: Float64Array,
  s: number,
  diagonal: boolean,
): void {
  const d0 = scale[s];
  const d1 = scale[s + 1];
  const d2 = scale[s + 2];
  for (let r = 0; r < 3; r++) {
    const w0 = A[a + 3 * r] * d0;
    const w1 = A[a + 3 * r + 1] * d1;
    const w2 = A[a + 3 * r + 2] * d2;
    const end = diagonal ? r : r - 1;
    for (let c = 0; c <= end; c++)
      T[t + 3 * r + c] -= w0 * B[b + 3 * c] + w1 * B[b + 3 * c + 1] + w2 * B[b + 3 * c + 2];
  }
}

/** Columns c of the rows × cols block at t (row stride cols) times scale[s + c]. */
function scaleColumns(
  T: Float64Array,
  t: number,
  rows: number,
  cols: number,
  scale: Float64Array,
  s: number,
): void {
  if (rows === 3 && cols === 3) {
    const d0 = scale[s];
    const d1 = scale[s + 1];
    const d2 = scale[s + 2];
    for (let o = t; o < t + 9; o += 3) {
      T[o] *= d0;
      T[o + 1] *= d1;
      T[o + 2] *= d2;
    }
    return;
  }
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) T[t + r * cols + c] *= scale[s + c];
}

/** True when rows i and j of a have the same columns. */
function samePattern(a: CsrMatrix, i: number, j: number): boolean {
  const { rowPtr, colIdx } = a;
  const len = rowPtr[i + 1] - rowPtr[i];
  if (rowPtr[j + 1] - rowPtr[j] !== len) return false;
  for (let p = 0; p < len; p++) if (colIdx[rowPtr[i] + p] !== colIdx[rowPtr[j] + p]) return false;
  return true;
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

/** Entries of the block of block row K (snStart) with rJ columns. */
function blockSize(snStart: Int32Array, K: number, rJ: number): number {
  return (snStart[K + 1] - snStart[K]) * rJ;
}

/** The pattern entry q of block (K, J), J ∈ P(K) (binary search), or −1 when J ∉ P(K). */
function findBlock(patStart: Int32Array, patBlock: Int32Array, K: number, J: number): number {
  let lo = patStart[K];
  let hi = patStart[K + 1] - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (patBlock[mid] === J) return mid;
    if (patBlock[mid] < J) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * T += op(A) B: T rows × cols at t, op(A) rows × inner (A row-major rows × inner at a, or
 * inner × rows when `transposed`), B inner × cols at b (all row-major).
 */
function multiplyAdd(
  T: Float64Array,
  t: number,
  rows: number,
  cols: number,
  A: Float64Array,
  a: number,
  inner: number,
  transposed: boolean,
  B: Float64Array,
  b: number,
): void {
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      let s = 0;
      for (let m = 0; m < inner; m++)
        s += (transposed ? A[a + m * rows + r] : A[a + r * inner + m]) * B[b + m * cols + c];
      T[t + r * cols + c] += s;
    }
}
