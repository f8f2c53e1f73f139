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
 * `updateBlockInverse` S = G W⁻¹ Gᵀ into S.values, and `updateMixed` generalized-α's
 * mixed G V into a factorization's storage; all allocation-free.
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
  /** The same for `updateMixed`. */
  private mixedSlot = new Int32Array(0);
  private mixedMap: Int32Array | null = null;
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
   * S_ij = g_iᵀ W⁻¹ g_j. `rows` (G's layout): the left factor's rows instead of G's,
   * S = G̃ W⁻¹ Gᵀ (a velocity-level Newton step's G̃ = G + s ∂(G u)/∂q, ConstraintSet
   * velocityRows). Call set.updateJacobian first.
   */
  updateBlockInverse(
    inverse: Float64Array,
    offset: Int32Array,
    decoupled: Uint8Array,
    rows: Float64Array = this.set.G.values,
  ): CsrMatrix {
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
      this.addBodyPairs(k, n, width === 6, false, S, this.pairSlot, rows);
    }
    return this.S;
  }

  /**
   * S = G V for the symmetric joints of generalized-α (constrained-solve.ts, factorMixed),
   * added into out (zeroed by the caller) as `updateInto` does, entry p of S at
   * out[slot[p]] (both triangles: SemidefiniteLdlt.loadSlotsUnsymmetric; S.values is left
   * as it is),
   * with V's columns computed here body by body and written to vCols in G's layout:
   *   v_j,b = scale · M_t,b⁻¹ g_t,j,b                           (`inverse` null: W = s·M)
   *   v_j,b = scale · W_b⁻¹ M_b M_t,b⁻¹ g_t,j,b                 (W block-diagonal)
   * g_t the rows at the step's start (`startG`, G's layout), M_t,b⁻¹ with the world
   * inverse inertia `startInertiaInv` (9 per body), M_b the current mass block, W_b⁻¹ as
   * in updateBlockInverse. Each column entry is the same product, in the same order, as
   * its three matrix-vector products one after the other (mat3MulVec, mat6MulVec), S_ij
   * = Σ_b g_i,bᵀ v_j,b over the bodies b that rows i and j share (nonsymmetric: V's columns
   * from the start configuration, G's rows from the current one), with each body's
   * matrices read once for all its rows and each column used as soon as it is made.
   */
  updateMixed(
    startG: Float64Array,
    startInertiaInv: Float64Array,
    scale: number,
    inverse: Float64Array | null,
    offset: Int32Array,
    decoupled: Uint8Array,
    vCols: Float64Array,
    out: Float64Array,
    slot: Int32Array,
    /** M_b's rotation blocks (9 per body): the world inertias, or a mixed Ī (momentumRows) */
    Iw: Float64Array = this.sys.inertiaWorld,
  ): void {
    if (slot !== this.mixedMap) {
      this.mixedSlot = Int32Array.from(this.pairSlot, (p) => slot[p]);
      this.mixedMap = slot;
    }
    const target = this.mixedSlot;
    const { sys, w, bodyStart, bodyRowSlot, bodyList } = this;
    for (let k = 0; k < bodyList.length; k++) {
      const b = bodyList[k];
      const n = bodyStart[k + 1] - bodyStart[k];
      const rigid = sys.kind[b] === BodyKind.RIGID;
      const m = sys.mass[b];
      const im = 1 / m;
      const t = 9 * b;
      // M_t,b⁻¹'s rotation block and M_b's (zero for a particle: never read)
      const a00 = rigid ? startInertiaInv[t] : 0;
      const a01 = rigid ? startInertiaInv[t + 1] : 0;
      const a02 = rigid ? startInertiaInv[t + 2] : 0;
      const a10 = rigid ? startInertiaInv[t + 3] : 0;
      const a11 = rigid ? startInertiaInv[t + 4] : 0;
      const a12 = rigid ? startInertiaInv[t + 5] : 0;
      const a20 = rigid ? startInertiaInv[t + 6] : 0;
      const a21 = rigid ? startInertiaInv[t + 7] : 0;
      const a22 = rigid ? startInertiaInv[t + 8] : 0;
      const j00 = rigid ? Iw[t] : 0;
      const j01 = rigid ? Iw[t + 1] : 0;
      const j02 = rigid ? Iw[t + 2] : 0;
      const j10 = rigid ? Iw[t + 3] : 0;
      const j11 = rigid ? Iw[t + 4] : 0;
      const j12 = rigid ? Iw[t + 5] : 0;
      const j20 = rigid ? Iw[t + 6] : 0;
      const j21 = rigid ? Iw[t + 7] : 0;
      const j22 = rigid ? Iw[t + 8] : 0;
      const o = inverse === null ? 0 : offset[b];
      const split = rigid && decoupled[b] === 1;
      // a decoupled W_b⁻¹'s two 3 × 3 blocks (split) in locals
      const t00 = split && inverse !== null ? inverse[o + 0] : 0;
      const t01 = split && inverse !== null ? inverse[o + 1] : 0;
      const t02 = split && inverse !== null ? inverse[o + 2] : 0;
      const t10 = split && inverse !== null ? inverse[o + 6] : 0;
      const t11 = split && inverse !== null ? inverse[o + 7] : 0;
      const t12 = split && inverse !== null ? inverse[o + 8] : 0;
      const t20 = split && inverse !== null ? inverse[o + 12] : 0;
      const t21 = split && inverse !== null ? inverse[o + 13] : 0;
      const t22 = split && inverse !== null ? inverse[o + 14] : 0;
      const q00 = split && inverse !== null ? inverse[o + 21] : 0;
      const q01 = split && inverse !== null ? inverse[o + 22] : 0;
      const q02 = split && inverse !== null ? inverse[o + 23] : 0;
      const q10 = split && inverse !== null ? inverse[o + 27] : 0;
      const q11 = split && inverse !== null ? inverse[o + 28] : 0;
      const q12 = split && inverse !== null ? inverse[o + 29] : 0;
      const q20 = split && inverse !== null ? inverse[o + 33] : 0;
      const q21 = split && inverse !== null ? inverse[o + 34] : 0;
      const q22 = split && inverse !== null ? inverse[o + 35] : 0;
      for (let i = 0; i < n; i++) {
        const s = bodyRowSlot[bodyStart[k] + i];
        const wi = 6 * i;
        // u = M_t⁻¹ g_t
        const u0 = im * startG[s];
        const u1 = im * startG[s + 1];
        const u2 = im * startG[s + 2];
        let u3 = 0;
        let u4 = 0;
        let u5 = 0;
        if (rigid) {
          const x = startG[s + 3];
          const y = startG[s + 4];
          const z = startG[s + 5];
          u3 = a00 * x + a01 * y + a02 * z;
          u4 = a10 * x + a11 * y + a12 * z;
          u5 = a20 * x + a21 * y + a22 * z;
        }
        if (inverse === null) {
          w[wi] = scale * u0;
          w[wi + 1] = scale * u1;
          w[wi + 2] = scale * u2;
          w[wi + 3] = rigid ? scale * u3 : 0;
          w[wi + 4] = rigid ? scale * u4 : 0;
          w[wi + 5] = rigid ? scale * u5 : 0;
        } else {
          // W_b⁻¹ M_b u
          const p0 = m * u0;
          const p1 = m * u1;
          const p2 = m * u2;
          if (!rigid) {
            for (let r = 0; r < 3; r++) {
              const q = o + 3 * r;
              // (from 0, as an accumulation loop: the same signed zeros)
              w[wi + r] = scale * (0 + inverse[q] * p0 + inverse[q + 1] * p1 + inverse[q + 2] * p2);
            }
            w[wi + 3] = 0;
            w[wi + 4] = 0;
            w[wi + 5] = 0;
          } else {
            const p3 = j00 * u3 + j01 * u4 + j02 * u5;
            const p4 = j10 * u3 + j11 * u4 + j12 * u5;
            const p5 = j20 * u3 + j21 * u4 + j22 * u5;
            if (split) {
              // the two blocks' sums from locals, the six results stored together (V8
              // re-reads typed arrays after a store to any of them)
              const w0 = scale * (t00 * p0 + t01 * p1 + t02 * p2);
              const w1 = scale * (t10 * p0 + t11 * p1 + t12 * p2);
              const w2 = scale * (t20 * p0 + t21 * p1 + t22 * p2);
              const w3 = scale * (q00 * p3 + q01 * p4 + q02 * p5);
              const w4 = scale * (q10 * p3 + q11 * p4 + q12 * p5);
              const w5 = scale * (q20 * p3 + q21 * p4 + q22 * p5);
              w[wi] = w0;
              w[wi + 1] = w1;
              w[wi + 2] = w2;
              w[wi + 3] = w3;
              w[wi + 4] = w4;
              w[wi + 5] = w5;
            } else
              for (let r = 0; r < 6; r++) {
                const q = o + 6 * r;
                w[wi + r] =
                  scale *
                  (inverse[q] * p0 +
                    inverse[q + 1] * p1 +
                    inverse[q + 2] * p2 +
                    inverse[q + 3] * p3 +
                    inverse[q + 4] * p4 +
                    inverse[q + 5] * p5);
              }
          }
        }
        vCols[s] = w[wi];
        vCols[s + 1] = w[wi + 1];
        vCols[s + 2] = w[wi + 2];
        if (rigid) {
          vCols[s + 3] = w[wi + 3];
          vCols[s + 4] = w[wi + 4];
          vCols[s + 5] = w[wi + 5];
        }
      }
      if (rigid && n === 6) this.addSixRowsPairs(k, out, target);
      else this.addBodyPairs(k, n, rigid, false, out, target, this.set.G.values);
    }
  }

  /**
   * addBodyPairs(k, 6, rigid, nonsymmetric) unrolled (updateMixed on a rigid body with six
   * rows: every inner link of a chain): the 36 sums g_i · w_j with the rows of G and the
   * columns in w read once into locals, the same products and sums in the same order (the
   * same bits); the loop re-read w after every store to out.
   */
  private addSixRowsPairs(k: number, out: Float64Array, target: Int32Array): void {
    const { w, bodyStart, bodyRowSlot, pairStart } = this;
    const g = this.set.G.values;
    const r0 = bodyStart[k];
    const p = pairStart[k];
    const w00 = w[0];
    const w01 = w[1];
    const w02 = w[2];
    const w03 = w[3];
    const w04 = w[4];
    const w05 = w[5];
    const w10 = w[6];
    const w11 = w[7];
    const w12 = w[8];
    const w13 = w[9];
    const w14 = w[10];
    const w15 = w[11];
    const w20 = w[12];
    const w21 = w[13];
    const w22 = w[14];
    const w23 = w[15];
    const w24 = w[16];
    const w25 = w[17];
    const w30 = w[18];
    const w31 = w[19];
    const w32 = w[20];
    const w33 = w[21];
    const w34 = w[22];
    const w35 = w[23];
    const w40 = w[24];
    const w41 = w[25];
    const w42 = w[26];
    const w43 = w[27];
    const w44 = w[28];
    const w45 = w[29];
    const w50 = w[30];
    const w51 = w[31];
    const w52 = w[32];
    const w53 = w[33];
    const w54 = w[34];
    const w55 = w[35];
    const s0 = bodyRowSlot[r0 + 0];
    const g00 = g[s0 + 0];
    const g01 = g[s0 + 1];
    const g02 = g[s0 + 2];
    const g03 = g[s0 + 3];
    const g04 = g[s0 + 4];
    const g05 = g[s0 + 5];
    const s1 = bodyRowSlot[r0 + 1];
    const g10 = g[s1 + 0];
    const g11 = g[s1 + 1];
    const g12 = g[s1 + 2];
    const g13 = g[s1 + 3];
    const g14 = g[s1 + 4];
    const g15 = g[s1 + 5];
    const s2 = bodyRowSlot[r0 + 2];
    const g20 = g[s2 + 0];
    const g21 = g[s2 + 1];
    const g22 = g[s2 + 2];
    const g23 = g[s2 + 3];
    const g24 = g[s2 + 4];
    const g25 = g[s2 + 5];
    const s3 = bodyRowSlot[r0 + 3];
    const g30 = g[s3 + 0];
    const g31 = g[s3 + 1];
    const g32 = g[s3 + 2];
    const g33 = g[s3 + 3];
    const g34 = g[s3 + 4];
    const g35 = g[s3 + 5];
    const s4 = bodyRowSlot[r0 + 4];
    const g40 = g[s4 + 0];
    const g41 = g[s4 + 1];
    const g42 = g[s4 + 2];
    const g43 = g[s4 + 3];
    const g44 = g[s4 + 4];
    const g45 = g[s4 + 5];
    const s5 = bodyRowSlot[r0 + 5];
    const g50 = g[s5 + 0];
    const g51 = g[s5 + 1];
    const g52 = g[s5 + 2];
    const g53 = g[s5 + 3];
    const g54 = g[s5 + 4];
    const g55 = g[s5 + 5];
    out[target[p + 0]] += g00 * w00 + g01 * w01 + g02 * w02 + g03 * w03 + g04 * w04 + g05 * w05;
    out[target[p + 1]] += g00 * w10 + g01 * w11 + g02 * w12 + g03 * w13 + g04 * w14 + g05 * w15;
    out[target[p + 2]] += g00 * w20 + g01 * w21 + g02 * w22 + g03 * w23 + g04 * w24 + g05 * w25;
    out[target[p + 3]] += g00 * w30 + g01 * w31 + g02 * w32 + g03 * w33 + g04 * w34 + g05 * w35;
    out[target[p + 4]] += g00 * w40 + g01 * w41 + g02 * w42 + g03 * w43 + g04 * w44 + g05 * w45;
    out[target[p + 5]] += g00 * w50 + g01 * w51 + g02 * w52 + g03 * w53 + g04 * w54 + g05 * w55;
    out[target[p + 6]] += g10 * w00 + g11 * w01 + g12 * w02 + g13 * w03 + g14 * w04 + g15 * w05;
    out[target[p + 7]] += g10 * w10 + g11 * w11 + g12 * w12 + g13 * w13 + g14 * w14 + g15 * w15;
    out[target[p + 8]] += g10 * w20 + g11 * w21 + g12 * w22 + g13 * w23 + g14 * w24 + g15 * w25;
    out[target[p + 9]] += g10 * w30 + g11 * w31 + g12 * w32 + g13 * w33 + g14 * w34 + g15 * w35;
    out[target[p + 10]] += g10 * w40 + g11 * w41 + g12 * w42 + g13 * w43 + g14 * w44 + g15 * w45;
    out[target[p + 11]] += g10 * w50 + g11 * w51 + g12 * w52 + g13 * w53 + g14 * w54 + g15 * w55;
    out[target[p + 12]] += g20 * w00 + g21 * w01 + g22 * w02 + g23 * w03 + g24 * w04 + g25 * w05;
    out[target[p + 13]] += g20 * w10 + g21 * w11 + g22 * w12 + g23 * w13 + g24 * w14 + g25 * w15;
    out[target[p + 14]] += g20 * w20 + g21 * w21 + g22 * w22 + g23 * w23 + g24 * w24 + g25 * w25;
    out[target[p + 15]] += g20 * w30 + g21 * w31 + g22 * w32 + g23 * w33 + g24 * w34 + g25 * w35;
    out[target[p + 16]] += g20 * w40 + g21 * w41 + g22 * w42 + g23 * w43 + g24 * w44 + g25 * w45;
    out[target[p + 17]] += g20 * w50 + g21 * w51 + g22 * w52 + g23 * w53 + g24 * w54 + g25 * w55;
    out[target[p + 18]] += g30 * w00 + g31 * w01 + g32 * w02 + g33 * w03 + g34 * w04 + g35 * w05;
    out[target[p + 19]] += g30 * w10 + g31 * w11 + g32 * w12 + g33 * w13 + g34 * w14 + g35 * w15;
    out[target[p + 20]] += g30 * w20 + g31 * w21 + g32 * w22 + g33 * w23 + g34 * w24 + g35 * w25;
    out[target[p + 21]] += g30 * w30 + g31 * w31 + g32 * w32 + g33 * w33 + g34 * w34 + g35 * w35;
    out[target[p + 22]] += g30 * w40 + g31 * w41 + g32 * w42 + g33 * w43 + g34 * w44 + g35 * w45;
    out[target[p + 23]] += g30 * w50 + g31 * w51 + g32 * w52 + g33 * w53 + g34 * w54 + g35 * w55;
    out[target[p + 24]] += g40 * w00 + g41 * w01 + g42 * w02 + g43 * w03 + g44 * w04 + g45 * w05;
    out[target[p + 25]] += g40 * w10 + g41 * w11 + g42 * w12 + g43 * w13 + g44 * w14 + g45 * w15;
    out[target[p + 26]] += g40 * w20 + g41 * w21 + g42 * w22 + g43 * w23 + g44 * w24 + g45 * w25;
    out[target[p + 27]] += g40 * w30 + g41 * w31 + g42 * w32 + g43 * w33 + g44 * w34 + g45 * w35;
    out[target[p + 28]] += g40 * w40 + g41 * w41 + g42 * w42 + g43 * w43 + g44 * w44 + g45 * w45;
    out[target[p + 29]] += g40 * w50 + g41 * w51 + g42 * w52 + g43 * w53 + g44 * w54 + g45 * w55;
    out[target[p + 30]] += g50 * w00 + g51 * w01 + g52 * w02 + g53 * w03 + g54 * w04 + g55 * w05;
    out[target[p + 31]] += g50 * w10 + g51 * w11 + g52 * w12 + g53 * w13 + g54 * w14 + g55 * w15;
    out[target[p + 32]] += g50 * w20 + g51 * w21 + g52 * w22 + g53 * w23 + g54 * w24 + g55 * w25;
    out[target[p + 33]] += g50 * w30 + g51 * w31 + g52 * w32 + g53 * w33 + g54 * w34 + g55 * w35;
    out[target[p + 34]] += g50 * w40 + g51 * w41 + g52 * w42 + g53 * w43 + g54 * w44 + g55 * w45;
    out[target[p + 35]] += g50 * w50 + g51 * w51 + g52 * w52 + g53 * w53 + g54 * w54 + g55 * w55;
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
      if (rigid && n === 6) {
        this.addSixRowsSymmetric(k, b, out, target);
        continue;
      }
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
      this.addBodyPairs(k, n, rigid, true, out, target, this.set.G.values);
    }
  }

  /**
   * updateInto's work for a rigid body with six rows (two spherical joints: every inner
   * link of a chain), unrolled: w_j = M_b⁻¹ g_j and the 21 sums g_i · w_j (j ≥ i), every
   * operand in a local. The same products and sums in the same order as the loops, so the
   * same bits; the loops re-read w and G after every store (V8 cannot tell typed arrays
   * apart), which made updateInto twice as slow on the 100-link chain (22 against 11 µs).
   */
  private addSixRowsSymmetric(k: number, b: number, out: Float64Array, target: Int32Array): void {
    const { sys, bodyStart, bodyRowSlot, pairStart } = this;
    const g = this.set.G.values;
    const I = sys.inertiaWorldInv;
    const im = 1 / sys.mass[b];
    const o = 9 * b;
    const i00 = I[o];
    const i01 = I[o + 1];
    const i02 = I[o + 2];
    const i10 = I[o + 3];
    const i11 = I[o + 4];
    const i12 = I[o + 5];
    const i20 = I[o + 6];
    const i21 = I[o + 7];
    const i22 = I[o + 8];
    const r0 = bodyStart[k];
    const p = pairStart[k];
    const s0 = bodyRowSlot[r0 + 0];
    const g00 = g[s0];
    const g01 = g[s0 + 1];
    const g02 = g[s0 + 2];
    const g03 = g[s0 + 3];
    const g04 = g[s0 + 4];
    const g05 = g[s0 + 5];
    const w00 = im * g00;
    const w01 = im * g01;
    const w02 = im * g02;
    const w03 = i00 * g03 + i01 * g04 + i02 * g05;
    const w04 = i10 * g03 + i11 * g04 + i12 * g05;
    const w05 = i20 * g03 + i21 * g04 + i22 * g05;
    const s1 = bodyRowSlot[r0 + 1];
    const g10 = g[s1];
    const g11 = g[s1 + 1];
    const g12 = g[s1 + 2];
    const g13 = g[s1 + 3];
    const g14 = g[s1 + 4];
    const g15 = g[s1 + 5];
    const w10 = im * g10;
    const w11 = im * g11;
    const w12 = im * g12;
    const w13 = i00 * g13 + i01 * g14 + i02 * g15;
    const w14 = i10 * g13 + i11 * g14 + i12 * g15;
    const w15 = i20 * g13 + i21 * g14 + i22 * g15;
    const s2 = bodyRowSlot[r0 + 2];
    const g20 = g[s2];
    const g21 = g[s2 + 1];
    const g22 = g[s2 + 2];
    const g23 = g[s2 + 3];
    const g24 = g[s2 + 4];
    const g25 = g[s2 + 5];
    const w20 = im * g20;
    const w21 = im * g21;
    const w22 = im * g22;
    const w23 = i00 * g23 + i01 * g24 + i02 * g25;
    const w24 = i10 * g23 + i11 * g24 + i12 * g25;
    const w25 = i20 * g23 + i21 * g24 + i22 * g25;
    const s3 = bodyRowSlot[r0 + 3];
    const g30 = g[s3];
    const g31 = g[s3 + 1];
    const g32 = g[s3 + 2];
    const g33 = g[s3 + 3];
    const g34 = g[s3 + 4];
    const g35 = g[s3 + 5];
    const w30 = im * g30;
    const w31 = im * g31;
    const w32 = im * g32;
    const w33 = i00 * g33 + i01 * g34 + i02 * g35;
    const w34 = i10 * g33 + i11 * g34 + i12 * g35;
    const w35 = i20 * g33 + i21 * g34 + i22 * g35;
    const s4 = bodyRowSlot[r0 + 4];
    const g40 = g[s4];
    const g41 = g[s4 + 1];
    const g42 = g[s4 + 2];
    const g43 = g[s4 + 3];
    const g44 = g[s4 + 4];
    const g45 = g[s4 + 5];
    const w40 = im * g40;
    const w41 = im * g41;
    const w42 = im * g42;
    const w43 = i00 * g43 + i01 * g44 + i02 * g45;
    const w44 = i10 * g43 + i11 * g44 + i12 * g45;
    const w45 = i20 * g43 + i21 * g44 + i22 * g45;
    const s5 = bodyRowSlot[r0 + 5];
    const g50 = g[s5];
    const g51 = g[s5 + 1];
    const g52 = g[s5 + 2];
    const g53 = g[s5 + 3];
    const g54 = g[s5 + 4];
    const g55 = g[s5 + 5];
    const w50 = im * g50;
    const w51 = im * g51;
    const w52 = im * g52;
    const w53 = i00 * g53 + i01 * g54 + i02 * g55;
    const w54 = i10 * g53 + i11 * g54 + i12 * g55;
    const w55 = i20 * g53 + i21 * g54 + i22 * g55;
    // S_ij (j ≥ i) at the lower triangle's entry (j, i), as addBodyPairs
    out[target[p + 0]] += g00 * w00 + g01 * w01 + g02 * w02 + g03 * w03 + g04 * w04 + g05 * w05;
    out[target[p + 6]] += g00 * w10 + g01 * w11 + g02 * w12 + g03 * w13 + g04 * w14 + g05 * w15;
    out[target[p + 12]] += g00 * w20 + g01 * w21 + g02 * w22 + g03 * w23 + g04 * w24 + g05 * w25;
    out[target[p + 18]] += g00 * w30 + g01 * w31 + g02 * w32 + g03 * w33 + g04 * w34 + g05 * w35;
    out[target[p + 24]] += g00 * w40 + g01 * w41 + g02 * w42 + g03 * w43 + g04 * w44 + g05 * w45;
    out[target[p + 30]] += g00 * w50 + g01 * w51 + g02 * w52 + g03 * w53 + g04 * w54 + g05 * w55;
    out[target[p + 7]] += g10 * w10 + g11 * w11 + g12 * w12 + g13 * w13 + g14 * w14 + g15 * w15;
    out[target[p + 13]] += g10 * w20 + g11 * w21 + g12 * w22 + g13 * w23 + g14 * w24 + g15 * w25;
    out[target[p + 19]] += g10 * w30 + g11 * w31 + g12 * w32 + g13 * w33 + g14 * w34 + g15 * w35;
    out[target[p + 25]] += g10 * w40 + g11 * w41 + g12 * w42 + g13 * w43 + g14 * w44 + g15 * w45;
    out[target[p + 31]] += g10 * w50 + g11 * w51 + g12 * w52 + g13 * w53 + g14 * w54 + g15 * w55;
    out[target[p + 14]] += g20 * w20 + g21 * w21 + g22 * w22 + g23 * w23 + g24 * w24 + g25 * w25;
    out[target[p + 20]] += g20 * w30 + g21 * w31 + g22 * w32 + g23 * w33 + g24 * w34 + g25 * w35;
    out[target[p + 26]] += g20 * w40 + g21 * w41 + g22 * w42 + g23 * w43 + g24 * w44 + g25 * w45;
    out[target[p + 32]] += g20 * w50 + g21 * w51 + g22 * w52 + g23 * w53 + g24 * w54 + g25 * w55;
    out[target[p + 21]] += g30 * w30 + g31 * w31 + g32 * w32 + g33 * w33 + g34 * w34 + g35 * w35;
    out[target[p + 27]] += g30 * w40 + g31 * w41 + g32 * w42 + g33 * w43 + g34 * w44 + g35 * w45;
    out[target[p + 33]] += g30 * w50 + g31 * w51 + g32 * w52 + g33 * w53 + g34 * w54 + g35 * w55;
    out[target[p + 28]] += g40 * w40 + g41 * w41 + g42 * w42 + g43 * w43 + g44 * w44 + g45 * w45;
    out[target[p + 34]] += g40 * w50 + g41 * w51 + g42 * w52 + g43 * w53 + g44 * w54 + g45 * w55;
    out[target[p + 35]] += g50 * w50 + g51 * w51 + g52 * w52 + g53 * w53 + g54 * w54 + g55 * w55;
  }

  /**
   * S_ij += g_i · w_j for the n rows of body list entry k (w_j = W_b⁻¹ g_j in this.w,
   * 6 apart; a particle's rows have 3 entries; g_i from `g`, G's values or rows in G's
   * layout), S_ij at out[target[pair]] (target:
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
    g: Float64Array,
  ): void {
    const { w, bodyStart, bodyRowSlot, pairStart } = this;
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
