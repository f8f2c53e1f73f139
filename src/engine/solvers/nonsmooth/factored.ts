import type { ContactDim, DelassusOperator } from "./types";
import { NonsmoothProblemError } from "./types";

/**
 * The Delassus matrix kept in factored form, W = s·H Y Hᵀ, for contacts between bodies
 * (Siconos assembles W's blocks; Bullet's and Box2D's sequential impulses never form it,
 * as here). Contact i touches at most two bodies ("sides" a and b); for side X:
 *  - dof[2i + X]: offset of the body's generalized velocity in the global vector (length n),
 *    width[2i + X]: its dofs (6 rigid, 3 particle, 0 for the world or a fixed body);
 *  - jac[36i + 18X + 6k + c]: row k (n, t1, t2) of the local Jacobian A_iX (3 × w, stride 6),
 *    so the local relative velocity is u_i = Σ_X A_iX v_X;
 *  - resp[36i + 18X + 6k + c]: column k of Y_X A_iXᵀ, the generalized velocity change of
 *    body X per unit local impulse along e_k (Y_X the body's block of the inverse
 *    iteration matrix, M_X⁻¹ for Moreau–Jean without stiffness);
 *  - s: the scale of W (c_v/h, 1 for Moreau–Jean).
 * Then W_ij = s Σ_X A_iX Y_X A_jXᵀ over the bodies X shared by contacts i and j, and the
 * generalized velocity change of impulses r is Δv = Y Hᵀ r = Σ_i Σ_X resp_iX r_i.
 *
 * Why factored: a product W r costs O(contacts) (Δv = Y Hᵀ r, then u = s H Δv, about
 * 2·2·3·w products per contact) instead of O(nonzero blocks) (9 products per block, and in
 * a jammed pile, each sphere touching 6–12 others, a contact's row has 10–20 blocks), and
 * nothing quadratic in the contacts per body is assembled per step. The velocity-form PGS (pgs.ts) keeps
 * Δv up to date and sweeps contact by contact with the local rows.
 *
 * Usage per step: `reset(...)` binds the Jacobian / response arrays (not copied: they are
 * the caller's, read during the solve; a caller that rewrites them calls reset again, which
 * bumps `revision`), then `setSide` for every contact side. The
 * per-body contact lists that rowBlockTimes needs are built on its first call after a
 * reset (the velocity-form PGS and the multiply-based solvers never need them). Grows
 * geometrically; no allocation once the largest contact count has been seen.
 */
export class FactoredDelassus implements DelassusOperator {
  size = 0;
  blocks = 0;
  blockSize: ContactDim = 1;
  /** Length of the generalized velocity vector. */
  n = 0;
  /** Scale s of W = s H Y Hᵀ (set by reset; NaN, a double, before: see BodySystem on V8). */
  scale = Number.NaN;
  jac: Float64Array = new Float64Array(0);
  resp: Float64Array = new Float64Array(0);
  dof: Int32Array = new Int32Array(0);
  width: Int32Array = new Int32Array(0);
  // Contact sides by body (CSR over dof offsets, entries 2i + X ascending in i).
  private start: Int32Array = new Int32Array(1);
  private entry: Int32Array = new Int32Array(0);
  private fill: Int32Array = new Int32Array(0);
  private listsBuilt = false;
  /**
   * Bumped by reset and setSide: W is unchanged while it is, so per-W data (the solvers'
   * diagonal cache, workspace.ts) is reused across the solve calls of one problem
   * (Moreau–Jean's continuation calls the solver up to R times on the same W).
   */
  revision = 0;
  /** Scratch generalized vector of multiply (n). */
  private dv: Float64Array = new Float64Array(0);
  private readonly acc = new Float64Array(6);

  /** Binds nc contacts of dimension dim over n generalized dofs; sides start empty. */
  reset(
    nc: number,
    dim: ContactDim,
    n: number,
    scale: number,
    jac: Float64Array,
    resp: Float64Array,
  ): this {
    if (jac.length < 36 * nc || resp.length < 36 * nc)
      throw new NonsmoothProblemError(`jac and resp need 36 entries per contact (${36 * nc})`);
    this.blocks = nc;
    this.blockSize = dim;
    this.size = nc * dim;
    this.n = n;
    this.scale = scale;
    this.jac = jac;
    this.resp = resp;
    this.revision++;
    if (this.dof.length < 2 * nc) {
      const c = Math.max(2 * nc, 2 * this.dof.length);
      this.dof = new Int32Array(c);
      this.width = new Int32Array(c);
      this.entry = new Int32Array(c);
    }
    this.width.fill(0, 0, 2 * nc);
    this.listsBuilt = false;
    if (this.start.length < n + 1) {
      this.start = new Int32Array(n + 1);
      this.fill = new Int32Array(n);
      this.dv = new Float64Array(n);
    }
    return this;
  }

  /** Side X (0: a, 1: b) of contact i acts on dofs [offset, offset + w) (w 0, 3 or 6). */
  setSide(i: number, side: number, offset: number, w: number): void {
    if (w !== 0 && (offset < 0 || offset + w > this.n))
      throw new NonsmoothProblemError(
        `contact ${i}: dofs ${offset}..${offset + w} outside 0..${this.n}`,
      );
    this.dof[2 * i + side] = offset;
    this.width[2 * i + side] = w;
    this.listsBuilt = false;
    this.revision++;
  }

  /** Builds the per-body side lists used by rowBlockTimes (entries 2i + X, ascending). */
  private buildLists(): void {
    this.listsBuilt = true;
    const { n, blocks: nc, start, dof, width } = this;
    start.fill(0, 0, n + 1);
    for (let e = 0; e < 2 * nc; e++) if (width[e] > 0) start[dof[e] + 1]++;
    for (let d = 0; d < n; d++) start[d + 1] += start[d];
    this.fill.set(start.subarray(0, n));
    for (let e = 0; e < 2 * nc; e++) if (width[e] > 0) this.entry[this.fill[dof[e]]++] = e;
  }

  /**
   * out[0 .. n) += f·Σ_i Σ_X resp_iX r_i, i.e. f·Y Hᵀ r: the generalized velocity change of
   * the impulses r for f = 1 (without the scale s, which belongs to W only).
   */
  addResponse(r: Float64Array, f: number, out: Float64Array): void {
    const { resp, dof, width, blocks: nc, blockSize: bs } = this;
    for (let i = 0; i < nc; i++) {
      // each out[d + c] takes the rows' terms in the order k = 0, 1, 2, a zero impulse
      // component adding nothing (so −0 entries stay −0): one read and write per dof
      const r0 = f * r[bs * i];
      const r1 = bs === 3 ? f * r[bs * i + 1] : 0;
      const r2 = bs === 3 ? f * r[bs * i + 2] : 0;
      if (r0 === 0 && r1 === 0 && r2 === 0) continue;
      for (let side = 0; side < 2; side++) {
        const w = width[2 * i + side];
        const d = dof[2 * i + side];
        const o = 36 * i + 18 * side;
        if (r0 !== 0 && r1 !== 0 && r2 !== 0) {
          // the usual case (a pushing contact with friction), without the branches
          for (let c = 0; c < w; c++) {
            let x = out[d + c];
            x += r0 * resp[o + c];
            x += r1 * resp[o + 6 + c];
            x += r2 * resp[o + 12 + c];
            out[d + c] = x;
          }
          continue;
        }
        for (let c = 0; c < w; c++) {
          let x = out[d + c];
          if (r0 !== 0) x += r0 * resp[o + c];
          if (r1 !== 0) x += r1 * resp[o + 6 + c];
          if (r2 !== 0) x += r2 * resp[o + 12 + c];
          out[d + c] = x;
        }
      }
    }
  }

  /**
   * out[bs·i + k] = s Σ_X (A_iX v_X)_k for every contact i: the local velocities of the
   * generalized velocity v (u = s H v). Rows unrolled: this runs once per residual check.
   */
  velocities(v: Float64Array, out: Float64Array): void {
    const { jac, dof, width, blockSize: bs, scale, blocks: nc } = this;
    for (let i = 0; i < nc; i++) {
      let un = 0;
      let u1 = 0;
      let u2 = 0;
      for (let side = 0; side < 2; side++) {
        const w = width[2 * i + side];
        const d = dof[2 * i + side];
        const o = 36 * i + 18 * side;
        for (let c = 0; c < w; c++) {
          const x = v[d + c];
          un += jac[o + c] * x;
          if (bs === 3) {
            u1 += jac[o + 6 + c] * x;
            u2 += jac[o + 12 + c] * x;
          }
        }
      }
      if (bs === 1) out[i] = scale * un;
      else {
        out[3 * i] = scale * un;
        out[3 * i + 1] = scale * u1;
        out[3 * i + 2] = scale * u2;
      }
    }
  }

  /**
   * W_ii = s Σ_X A_iX (Y_X A_iXᵀ), all bs² entries (Y need not be symmetric), in one pass
   * over each side's dofs.
   */
  diagonalBlock(i: number, out: Float64Array): void {
    const { jac, resp, width, blockSize: bs, scale } = this;
    let w00 = 0;
    let w01 = 0;
    let w02 = 0;
    let w10 = 0;
    let w11 = 0;
    let w12 = 0;
    let w20 = 0;
    let w21 = 0;
    let w22 = 0;
    for (let side = 0; side < 2; side++) {
      const w = width[2 * i + side];
      const o = 36 * i + 18 * side;
      for (let c = 0; c < w; c++) {
        const a0 = jac[o + c];
        const b0 = resp[o + c];
        w00 += a0 * b0;
        if (bs === 1) continue;
        const a1 = jac[o + 6 + c];
        const a2 = jac[o + 12 + c];
        const b1 = resp[o + 6 + c];
        const b2 = resp[o + 12 + c];
        w01 += a0 * b1;
        w02 += a0 * b2;
        w10 += a1 * b0;
        w11 += a1 * b1;
        w12 += a1 * b2;
        w20 += a2 * b0;
        w21 += a2 * b1;
        w22 += a2 * b2;
      }
    }
    out[0] = scale * w00;
    if (bs === 1) return;
    out[1] = scale * w01;
    out[2] = scale * w02;
    out[3] = scale * w10;
    out[4] = scale * w11;
    out[5] = scale * w12;
    out[6] = scale * w20;
    out[7] = scale * w21;
    out[8] = scale * w22;
  }

  multiply(r: Float64Array, out: Float64Array): void {
    const dv = this.dv;
    dv.fill(0, 0, this.n);
    this.addResponse(r, 1, dv);
    this.velocities(dv, out);
  }

  /**
   * Σ_j W_ij r_j through the contacts sharing a body with i: for each side X of i,
   * s A_iX (Σ_{j at X} resp_jX r_j). O(contacts at i's bodies).
   */
  rowBlockTimes(i: number, r: Float64Array, out: Float64Array): void {
    if (!this.listsBuilt) this.buildLists();
    const { jac, resp, dof, width, blockSize: bs, scale, start, entry, acc } = this;
    for (let k = 0; k < bs; k++) out[k] = 0;
    for (let side = 0; side < 2; side++) {
      const w = width[2 * i + side];
      if (w === 0) continue;
      const d = dof[2 * i + side];
      acc.fill(0);
      for (let p = start[d]; p < start[d + 1]; p++) {
        const e = entry[p];
        const j = e >> 1;
        const o = 18 * e; // = 36 j + 18 X'
        for (let l = 0; l < bs; l++) {
          const rl = r[bs * j + l];
          if (rl === 0) continue;
          for (let c = 0; c < w; c++) acc[c] += rl * resp[o + 6 * l + c];
        }
      }
      const o = 36 * i + 18 * side;
      for (let k = 0; k < bs; k++) {
        let s = 0;
        for (let c = 0; c < w; c++) s += jac[o + 6 * k + c] * acc[c];
        out[k] += scale * s;
      }
    }
  }
}
