/**
 * The mass-weighted Gram matrix of the constraint rows, S = G M⁻¹ Gᵀ (m × m, symmetric
 * positive semidefinite; definite iff G has full row rank), with M = blockdiag(m_b I₃,
 * I_b,world) of the dynamic bodies. It is the Schur complement of the saddle-point
 * matrix [M Gᵀ; G 0] and the matrix of every mass-metric projection onto the
 * constraints (project.ts): the update δq = −M⁻¹Gᵀ S⁻¹ C is the smallest in ½δqᵀMδq
 * that cancels C to first order.
 *
 * Pattern: S_ij ≠ 0 when rows i and j share a dynamic body (block tridiagonal for a
 * chain). It is fixed at construction, both triangles stored, columns ascending.
 * `updateInto` writes S = Σ_bodies G_b M_b⁻¹ G_bᵀ (over each body's rows) from G's current
 * values and the current world inertias straight into a factorization's storage,
 * `updateBlockInverse` S = G W⁻¹ Gᵀ into S.values; both allocation-free.
 */
import { CsrMatrix } from "../math/csr";
import { mat6MulVec } from "../math/small-dense";
import { BodyKind, type BodySystem } from "../model/body-system";
import { type ConstraintSet, ROW_ENTRIES } from "./constraint-set";

export class MassSchurComplement {
  readonly S: CsrMatrix;
  /** Rows touching each dynamic body: bodyRows[bodyStart[b] .. bodyStart[b+1]). */
  private readonly bodyStart: Int32Array;
  private readonly bodyRowSlot: Int32Array;
  private readonly bodyList: Int32Array;
  /** For body k's row pair (i, j) (row-major over its row list): slot in S.values. */
  private readonly pairStart: Int32Array;
  private readonly pairSlot: Int32Array;
  /** pairSlot through the slot map of the last `updateInto` (built when that map changes). */
  private intoSlot = new Int32Array(0);
  private intoMap: Int32Array | null = null;
  private readonly w: Float64Array;

  constructor(
    readonly set: ConstraintSet,
    readonly sys: BodySystem,
  ) {
    const m = set.numRows;
    const nb = sys.numBodies;
    const rowsOf: { row: number; slot: number }[][] = Array.from({ length: nb }, () => []);
    for (let r = 0; r < m; r++)
      for (let e = ROW_ENTRIES * r; e < ROW_ENTRIES * r + ROW_ENTRIES; e++) {
        const b = set.rowBody[e];
        if (b >= 0) rowsOf[b].push({ row: r, slot: set.rowSlot[e] });
      }
    const bodies = rowsOf.map((l, b) => (l.length > 0 ? b : -1)).filter((b) => b >= 0);
    this.bodyList = Int32Array.from(bodies);
    this.bodyStart = new Int32Array(bodies.length + 1);
    bodies.forEach((b, k) => {
      this.bodyStart[k + 1] = this.bodyStart[k] + rowsOf[b].length;
    });
    const bodyRows = new Int32Array(this.bodyStart[bodies.length]);
    this.bodyRowSlot = new Int32Array(bodyRows.length);
    let maxRows = 0;
    bodies.forEach((b, k) => {
      rowsOf[b].forEach((e, i) => {
        bodyRows[this.bodyStart[k] + i] = e.row;
        this.bodyRowSlot[this.bodyStart[k] + i] = e.slot;
      });
      maxRows = Math.max(maxRows, rowsOf[b].length);
    });
    // Pattern of S.
    const cols: Set<number>[] = Array.from({ length: m }, (_, r) => new Set([r]));
    bodies.forEach((b) => {
      for (const x of rowsOf[b]) for (const y of rowsOf[b]) cols[x.row].add(y.row);
    });
    const rowPtr = new Int32Array(m + 1);
    for (let r = 0; r < m; r++) rowPtr[r + 1] = rowPtr[r] + cols[r].size;
    const colIdx = new Int32Array(rowPtr[m]);
    for (let r = 0; r < m; r++) {
      const sorted = [...cols[r]].sort((x, y) => x - y);
      colIdx.set(sorted, rowPtr[r]);
    }
    this.S = new CsrMatrix(m, m, rowPtr, colIdx, new Float64Array(rowPtr[m]));
    const find = (i: number, j: number) => {
      let lo = rowPtr[i];
      let hi = rowPtr[i + 1] - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        if (colIdx[mid] === j) return mid;
        if (colIdx[mid] < j) lo = mid + 1;
        else hi = mid - 1;
      }
      throw new Error("schur: missing pattern entry");
    };
    this.pairStart = new Int32Array(bodies.length + 1);
    bodies.forEach((b, k) => {
      this.pairStart[k + 1] = this.pairStart[k] + rowsOf[b].length ** 2;
    });
    this.pairSlot = new Int32Array(this.pairStart[bodies.length]);
    bodies.forEach((b, k) => {
      const l = rowsOf[b];
      for (let i = 0; i < l.length; i++)
        for (let j = 0; j < l.length; j++)
          this.pairSlot[this.pairStart[k] + i * l.length + j] = find(l[i].row, l[j].row);
    });
    this.w = new Float64Array(6 * maxRows);
  }

  /**
   * S ← G W⁻¹ Gᵀ for a block-diagonal W given by the inverses of its diagonal blocks:
   * body b's inverse is row-major width×width (width 3 or 6) at inverse[offset[b]..],
   * with zero translation–rotation blocks where decoupled[b] = 1 (mat6MulVec).
   * W may be nonsymmetric (gyroscopic or damping Jacobians), and then so is S:
   * S_ij = g_iᵀ W⁻¹ g_j. Call set.updateJacobian first.
   */
  updateBlockInverse(inverse: Float64Array, offset: Int32Array, decoupled: Uint8Array): CsrMatrix {
    const { sys, set, w, bodyStart, bodyRowSlot, bodyList } = this;
    const S = this.S.values;
    const g = set.G.values;
    S.fill(0);
    for (let k = 0; k < bodyList.length; k++) {
      const b = bodyList[k];
      const n = bodyStart[k + 1] - bodyStart[k];
      const width = sys.kind[b] === BodyKind.RIGID ? 6 : 3;
      const o = offset[b];
      for (let i = 0; i < n; i++) {
        const s = bodyRowSlot[bodyStart[k] + i];
        if (width === 6) mat6MulVec(w, 6 * i, inverse, o, g, s, decoupled[b] === 1);
        else {
          for (let r = 0; r < 3; r++) {
            let acc = 0;
            for (let c = 0; c < 3; c++) acc += inverse[o + r * 3 + c] * g[s + c];
            w[6 * i + r] = acc;
          }
          w.fill(0, 6 * i + 3, 6 * i + 6);
        }
      }
      this.addBodyPairs(k, n, width === 6, false, S, this.pairSlot);
    }
    return this.S;
  }

  /**
   * S ← G V, V's columns in G's own layout: S_ij = Σ_b g_i,bᵀ v_j,b over the bodies b that
   * rows i and j share, v_j,b at vCols[the slot of row j's entry on b] (width 3 or 6, as
   * G's). G is set.G's current values (set.updateJacobian first); S is nonsymmetric in
   * general (the symmetric joints of generalized-α: V = W⁻¹ M M_t⁻¹ G_tᵀ, columns from
   * the step's start configuration, rows from the current one).
   */
  updateProduct(vCols: Float64Array): CsrMatrix {
    const { sys, w, bodyStart, bodyRowSlot, bodyList } = this;
    const S = this.S.values;
    S.fill(0);
    for (let k = 0; k < bodyList.length; k++) {
      const b = bodyList[k];
      const n = bodyStart[k + 1] - bodyStart[k];
      const rigid = sys.kind[b] === BodyKind.RIGID;
      for (let i = 0; i < n; i++) {
        const s = bodyRowSlot[bodyStart[k] + i];
        for (let c = 0; c < 6; c++) w[6 * i + c] = rigid || c < 3 ? vCols[s + c] : 0;
      }
      this.addBodyPairs(k, n, rigid, false, S, this.pairSlot);
    }
    return this.S;
  }

  /**
   * S = G M⁻¹ Gᵀ from set.G's current values (call set.updateJacobian first), added into
   * out (zeroed by the caller): S's entry p at out[slot[p]] (slot[p] ≥ 0 for every entry
   * of the lower triangle), the fused load of a factorization (SemidefiniteLdlt.loadSlots).
   * The lower triangle only (entries with column ≤ row), all that the symmetric
   * factorization reads: half the scattered writes (bench/README.md, "Joint
   * factorization"). S.values is left as it is.
   */
  updateInto(out: Float64Array, slot: Int32Array): void {
    if (slot !== this.intoMap) {
      this.intoSlot = Int32Array.from(this.pairSlot, (p) => slot[p]);
      this.intoMap = slot;
    }
    const target = this.intoSlot;
    const { sys, set, w, bodyStart, bodyRowSlot, bodyList } = this;
    const g = set.G.values;
    for (let k = 0; k < bodyList.length; k++) {
      const b = bodyList[k];
      const n = bodyStart[k + 1] - bodyStart[k];
      const rigid = sys.kind[b] === BodyKind.RIGID;
      const im = 1 / sys.mass[b];
      // I_b,world⁻¹ in locals: V8 would reload it after every store to w (they may alias)
      const I = sys.inertiaWorldInv;
      const o = 9 * b;
      const i00 = rigid ? I[o] : 0;
      const i01 = rigid ? I[o + 1] : 0;
      const i02 = rigid ? I[o + 2] : 0;
      const i10 = rigid ? I[o + 3] : 0;
      const i11 = rigid ? I[o + 4] : 0;
      const i12 = rigid ? I[o + 5] : 0;
      const i20 = rigid ? I[o + 6] : 0;
      const i21 = rigid ? I[o + 7] : 0;
      const i22 = rigid ? I[o + 8] : 0;
      // w_i = M_b⁻¹ g_i for each row i on this body
      for (let i = 0; i < n; i++) {
        const s = bodyRowSlot[bodyStart[k] + i];
        const wi = 6 * i;
        w[wi] = im * g[s];
        w[wi + 1] = im * g[s + 1];
        w[wi + 2] = im * g[s + 2];
        const x = rigid ? g[s + 3] : 0;
        const y = rigid ? g[s + 4] : 0;
        const z = rigid ? g[s + 5] : 0;
        w[wi + 3] = i00 * x + i01 * y + i02 * z;
        w[wi + 4] = i10 * x + i11 * y + i12 * z;
        w[wi + 5] = i20 * x + i21 * y + i22 * z;
      }
      // S is symmetric here (M_b⁻¹ is): each pair once, into the lower triangle
      this.addBodyPairs(k, n, rigid, true, out, target);
    }
  }

  /**
   * S_ij += g_i · w_j for the n rows of body list entry k (w_j = W_b⁻¹ g_j in this.w,
   * 6 apart; a particle's rows have 3 entries), S_ij at out[target[pair]] (target:
   * pairSlot, S's own entries, or a factorization's slots). symmetric: each pair once,
   * written to the lower triangle only.
   */
  private addBodyPairs(
    k: number,
    n: number,
    rigid: boolean,
    symmetric: boolean,
    out: Float64Array,
    target: Int32Array,
  ): void {
    const { w, bodyStart, bodyRowSlot, pairStart } = this;
    const g = this.set.G.values;
    const p = pairStart[k];
    for (let i = 0; i < n; i++) {
      const si = bodyRowSlot[bodyStart[k] + i];
      // row i's entries loaded once for its dots
      const g0 = g[si];
      const g1 = g[si + 1];
      const g2 = g[si + 2];
      const g3 = rigid ? g[si + 3] : 0;
      const g4 = rigid ? g[si + 4] : 0;
      const g5 = rigid ? g[si + 5] : 0;
      for (let j = symmetric ? i : 0; j < n; j++) {
        const o = 6 * j;
        const acc =
          g0 * w[o] + g1 * w[o + 1] + g2 * w[o + 2] + g3 * w[o + 3] + g4 * w[o + 4] + g5 * w[o + 5];
        // the body's rows ascend, so (j, i) with j ≥ i is the lower triangle's entry
        if (symmetric) out[target[p + j * n + i]] += acc;
        else out[target[p + i * n + j]] += acc;
      }
    }
  }
}
