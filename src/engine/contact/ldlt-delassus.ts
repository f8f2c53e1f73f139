/**
 * The dense Delassus matrix H W⁻¹ Hᵀ of nonsmooth-contact.ts from W's block LDLᵀ
 * factorization P W Pᵀ = L D Lᵀ (solvers/linear/block-ldlt.ts: fem bodies, whose W factored
 * PCG solves), without a solve per contact row:
 *     H W⁻¹ Hᵀ = Yᵀ D⁻¹ Y,   Y = L⁻¹ P Hᵀ.
 * Column p of Hᵀ (contact row p as a generalized force) is nonzero on the 1–4 particles of
 * its contact, so y_p = L⁻¹ P Hᵀ_p is nonzero only on the reach of those blocks in the
 * elimination tree, their ancestors (Gilbert & Peierls; T. A. Davis, "Direct Methods for
 * Sparse Linear Systems", SIAM 2006, §3.2 and §4.1: L's column j holds ancestors of j
 * only): the forward sweep reads those columns of L alone, and no backward sweep is needed.
 * Entry (p, q) is then y_pᵀ D⁻¹ y_q summed over the shorter of the two reaches (the product
 * vanishes off either). The result is symmetric by construction.
 *
 * The 243-node block on a plane with 81 vertex contacts (bench/README.md, "Nonsmooth
 * contact with fem bodies"): 243 rows, reaches of 41 of the 243 blocks on average, against
 * a PCG solve per row (two full sweeps of L, a product with W and the CG vector updates).
 * Exact up to rounding: the per-row solves with W's own factorization as preconditioner
 * converge in one PCG step to the same W⁻¹ Hᵀ_p.
 */
import { extend, grow } from "../math/grow";
import type { BlockLdltFactors } from "../solvers/linear/block-ldlt";
import { reachUpTree } from "../solvers/linear/elimination-tree";
import type { ContactDim } from "../solvers/nonsmooth/types";
import type { ContactSet } from "./contact-set";

export class LdltDelassus {
  /**
   * D⁻¹ y of contact i's rows at (permuted) block j: 3·dim numbers (row k's 3 at 3k) from
   * 3·dim·(i·nb + j), so that a pair's sum reads one run per block; zero off i's reach.
   */
  private dy = new Float64Array(0);
  /**
   * Contact i's reach (the same for its dim rows: their particles are the contact's), in
   * topological order: its blocks reachBlock[reachStart[i] .. reachStart[i + 1]) and its
   * rows' y there, reachY[3·(dim·e + k) + r] for entry e, row k, component r.
   */
  private reachStart = new Int32Array(0);
  private reachBlock = new Int32Array(0);
  private reachY = new Float64Array(0);
  /** One contact's rows' y during their forward sweep (row k at k·3nb; zero between contacts). */
  private work = new Float64Array(0);
  /** One contact pair's 3 × 3 entries (row-major), on their way to out. */
  private readonly sums = new Float64Array(9);
  /** pinv[b]: the position of original block b (the inverse of perm). */
  private pinv = new Int32Array(0);
  /**
   * The elimination tree with its roots' parent the sentinel nb, whose mark is always the
   * current contact's: reachUpTree's walk stops there (in the factorization it stops at
   * row k itself, an ancestor of every node it starts from; here a reach runs to the roots).
   */
  private up = new Int32Array(0);
  /** The walks' marks (contact i's walks mark with i; nb + 1 with the sentinel), their stack. */
  private mark = new Int32Array(0);
  private patt = new Int32Array(0);

  /**
   * out (m × m, m = set.count·dim rows n, t1, t2 per contact) = scale·H W⁻¹ Hᵀ with W's
   * factors f. `rhs` (3·nb, W's dof order) is scratch (zero on return).
   */
  build(
    f: BlockLdltFactors,
    set: ContactSet,
    dim: ContactDim,
    scale: number,
    rhs: Float64Array,
    out: Float64Array,
  ): void {
    const { nb, perm, parent, lp, li, lx, dinv } = f;
    const nc = set.count;
    const m = nc * dim;
    const n3 = 3 * nb;
    this.dy = grow(this.dy, m * n3);
    this.reachStart = grow(this.reachStart, nc + 1);
    this.work = grow(this.work, dim * n3);
    this.pinv = grow(this.pinv, nb);
    this.up = grow(this.up, nb);
    this.mark = grow(this.mark, nb + 1);
    this.patt = grow(this.patt, nb);
    const { dy, reachStart, work: y, pinv, up, mark, patt } = this;
    dy.fill(0, 0, m * n3);
    rhs.fill(0, 0, n3);
    mark.fill(-1, 0, nb);
    for (let k = 0; k < nb; k++) {
      pinv[perm[k]] = k;
      up[k] = parent[k] < 0 ? nb : parent[k];
    }
    reachStart[0] = 0;
    for (let i = 0; i < nc; i++) {
      // P Hᵀ of the contact's rows into y, and the reach of their blocks (patt[top .. nb),
      // ancestors last)
      let top = nb;
      mark[nb] = i;
      for (let k = 0; k < dim; k++) {
        set.addRowTranspose(i, k, 1, rhs);
        for (let b = 0; b < nb; b++) {
          const r0 = rhs[3 * b];
          const r1 = rhs[3 * b + 1];
          const r2 = rhs[3 * b + 2];
          if (r0 === 0 && r1 === 0 && r2 === 0) continue;
          rhs[3 * b] = rhs[3 * b + 1] = rhs[3 * b + 2] = 0;
          const o = k * n3 + 3 * pinv[b];
          y[o] = r0;
          y[o + 1] = r1;
          y[o + 2] = r2;
          top = reachUpTree(pinv[b], i, up, mark, patt, top);
        }
      }
      const start = reachStart[i];
      const end = start + nb - top;
      reachStart[i + 1] = end;
      this.reachBlock = extend(this.reachBlock, end);
      this.reachY = extend(this.reachY, 3 * dim * end);
      const { reachBlock, reachY } = this;
      // L y = P Hᵀ over the reach in topological order (each y_j final when taken): y kept
      // on the reach, D⁻¹ y written out, y cleared for the next contact
      for (let t = top, e = start; t < nb; t++, e++) {
        const j = patt[t];
        reachBlock[e] = j;
        const d = 9 * j;
        for (let k = 0; k < dim; k++) {
          const oj = k * n3 + 3 * j;
          const w0 = y[oj];
          const w1 = y[oj + 1];
          const w2 = y[oj + 2];
          y[oj] = y[oj + 1] = y[oj + 2] = 0;
          for (let q = lp[j]; q < lp[j + 1]; q++) {
            const o = k * n3 + 3 * li[q];
            const l = 9 * q;
            y[o] -= lx[l] * w0 + lx[l + 1] * w1 + lx[l + 2] * w2;
            y[o + 1] -= lx[l + 3] * w0 + lx[l + 4] * w1 + lx[l + 5] * w2;
            y[o + 2] -= lx[l + 6] * w0 + lx[l + 7] * w1 + lx[l + 8] * w2;
          }
          const ey = 3 * (dim * e + k);
          reachY[ey] = w0;
          reachY[ey + 1] = w1;
          reachY[ey + 2] = w2;
          const od = 3 * (dim * (i * nb + j) + k);
          dy[od] = dinv[d] * w0 + dinv[d + 1] * w1 + dinv[d + 2] * w2;
          dy[od + 1] = dinv[d + 3] * w0 + dinv[d + 4] * w1 + dinv[d + 5] * w2;
          dy[od + 2] = dinv[d + 6] * w0 + dinv[d + 7] * w1 + dinv[d + 8] * w2;
        }
      }
    }
    // rows (a, b) of contacts s, o: y_aᵀ D⁻¹ y_b over the shorter reach s of the two (D⁻¹
    // y_b vanishes off o's); the 3 × 3 block of a pair with friction in registers
    const { reachBlock, reachY } = this;
    for (let i = 0; i < nc; i++)
      for (let j = i; j < nc; j++) {
        const shorter = reachStart[j + 1] - reachStart[j] < reachStart[i + 1] - reachStart[i];
        const s = shorter ? j : i;
        const o = shorter ? i : j;
        const e0 = reachStart[s];
        const e1 = reachStart[s + 1];
        if (dim === 1) {
          const od = 3 * o * nb;
          let sum = 0;
          for (let e = e0; e < e1; e++) {
            const ey = 3 * e;
            const jb = od + 3 * reachBlock[e];
            sum += reachY[ey] * dy[jb] + reachY[ey + 1] * dy[jb + 1] + reachY[ey + 2] * dy[jb + 2];
          }
          out[s * m + o] = out[o * m + s] = scale * sum;
          continue;
        }
        // rows n, t1, t2 of s (u, v, w) against those of o (d⁰, d¹, d²: D⁻¹ y, 3·nb apart)
        const od = 9 * o * nb;
        let s00 = 0;
        let s01 = 0;
        let s02 = 0;
        let s10 = 0;
        let s11 = 0;
        let s12 = 0;
        let s20 = 0;
        let s21 = 0;
        let s22 = 0;
        for (let e = e0; e < e1; e++) {
          const ey = 9 * e;
          const jb = od + 9 * reachBlock[e];
          const u0 = reachY[ey];
          const u1 = reachY[ey + 1];
          const u2 = reachY[ey + 2];
          const v0 = reachY[ey + 3];
          const v1 = reachY[ey + 4];
          const v2 = reachY[ey + 5];
          const w0 = reachY[ey + 6];
          const w1 = reachY[ey + 7];
          const w2 = reachY[ey + 8];
          let d0 = dy[jb];
          let d1 = dy[jb + 1];
          let d2 = dy[jb + 2];
          s00 += u0 * d0 + u1 * d1 + u2 * d2;
          s10 += v0 * d0 + v1 * d1 + v2 * d2;
          s20 += w0 * d0 + w1 * d1 + w2 * d2;
          d0 = dy[jb + 3];
          d1 = dy[jb + 4];
          d2 = dy[jb + 5];
          s01 += u0 * d0 + u1 * d1 + u2 * d2;
          s11 += v0 * d0 + v1 * d1 + v2 * d2;
          s21 += w0 * d0 + w1 * d1 + w2 * d2;
          d0 = dy[jb + 6];
          d1 = dy[jb + 7];
          d2 = dy[jb + 8];
          s02 += u0 * d0 + u1 * d1 + u2 * d2;
          s12 += v0 * d0 + v1 * d1 + v2 * d2;
          s22 += w0 * d0 + w1 * d1 + w2 * d2;
        }
        const p = 3 * s;
        const q = 3 * o;
        const sums = this.sums;
        sums[0] = s00;
        sums[1] = s01;
        sums[2] = s02;
        sums[3] = s10;
        sums[4] = s11;
        sums[5] = s12;
        sums[6] = s20;
        sums[7] = s21;
        sums[8] = s22;
        for (let a = 0; a < 3; a++)
          for (let b = 0; b < 3; b++)
            out[(p + a) * m + q + b] = out[(q + b) * m + p + a] = scale * sums[3 * a + b];
      }
  }
}
