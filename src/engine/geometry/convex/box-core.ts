/**
 * The box |x_i| ≤ h_i (shape frame) as a convex core: support function h(d) = Σ h_i |d_i|
 * (piecewise linear: kinks on the great circles n ⟂ axis_i), faces as polygon features
 * (code 2·axis + (0: + side, 1: − side)), edges as segment features (code 4·axis + bit 0
 * for the + side of the next axis, bit 1 for the + side of the one after), and the region
 * code Σ c_i 3^i (c_i = 0, 1, 2 below, within, above the slab i) of a surface point.
 */

import { FLUSH_COS } from "../cylinder";
import type { WorldPose } from "../pose";
import {
  ConvexCore,
  type ConvexShape,
  F_POINT,
  F_POLY,
  F_SEG,
  FC,
  FCOUNT,
  FLAB,
  FNRM,
  FPOLY,
  FT,
  LINE_SIN,
  POLY_CAP,
} from "./features";
import { localToWorld } from "./support";

/** Local vertex scratch. */
const TMP = new Float64Array(3);

export class BoxCore extends ConvexCore implements ConvexShape {
  /** Half-extents h_0, h_1, h_2, metres. */
  private readonly h = new Float64Array(3);

  /** Places the core: the box of half-extents h at `pose` (the pose is referenced, not copied). */
  place(pose: WorldPose, h: readonly number[]): this {
    this.p = pose.p;
    this.R = pose.R;
    this.h[0] = h[0];
    this.h[1] = h[1];
    this.h[2] = h[2];
    return this;
  }

  boundingRadius(): number {
    const h = this.h;
    return Math.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    const h = this.h;
    s[0] = d[0] >= 0 ? h[0] : -h[0];
    s[1] = d[1] >= 0 ? h[1] : -h[1];
    s[2] = d[2] >= 0 ? h[2] : -h[2];
  }

  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number {
    const eps = 1e-9;
    let free = -1;
    let dim = 0;
    for (let j = 0; j < 3; j++) {
      const dj = d[j];
      const h = this.h[j];
      if (dj > eps) q[j] = h;
      else if (dj < -eps) q[j] = -h;
      else {
        const v = q[j];
        q[j] = v < -h ? -h : Math.min(v, h);
        free = j;
        dim++;
      }
    }
    if (dim === 1) {
      for (let c = 0; c < 3; c++) ends[c] = ends[3 + c] = q[c];
      ends[free] = -this.h[free];
      ends[3 + free] = this.h[free];
    }
    return dim;
  }

  override kinkAxes(out: Float64Array, o: number): number {
    const R = this.R;
    for (let j = 0; j < 3; j++) {
      out[3 * (o + j)] = R[j];
      out[3 * (o + j) + 1] = R[3 + j];
      out[3 * (o + j) + 2] = R[6 + j];
    }
    return 3;
  }

  classify(d: Float64Array, s: number): void {
    const c0 = d[0];
    const c1 = d[1];
    const c2 = d[2];
    FT[s] = F_POINT;
    FC[s] = 0;
    const a0 = Math.abs(c0);
    const a1 = Math.abs(c1);
    const a2 = Math.abs(c2);
    const j = a0 >= a1 && a0 >= a2 ? 0 : a1 >= a2 ? 1 : 2;
    const cj = j === 0 ? c0 : j === 1 ? c1 : c2;
    if (Math.abs(cj) >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = 2 * j + (cj > 0 ? 0 : 1);
      return;
    }
    const m = a0 <= a1 && a0 <= a2 ? 0 : a1 <= a2 ? 1 : 2;
    const am = m === 0 ? a0 : m === 1 ? a1 : a2;
    if (am <= LINE_SIN) {
      const p = (m + 1) % 3;
      const q = (m + 2) % 3;
      const cp = p === 0 ? c0 : p === 1 ? c1 : c2;
      const cq = q === 0 ? c0 : q === 1 ? c1 : c2;
      FT[s] = F_SEG;
      FC[s] = 4 * m + (cp >= 0 ? 1 : 0) + (cq >= 0 ? 2 : 0);
    }
  }

  /** The face FC[s]: vertices (+,+), (−,+), (−,−), (+,−) in its in-plane axes (k, l). */
  override polygon(s: number): void {
    const R = this.R;
    const h = this.h;
    const face = FC[s];
    const j = face >> 1;
    const sg = face & 1 ? -1 : 1;
    const k = (j + 1) % 3;
    const l = (j + 2) % 3;
    for (let q = 0; q < 4; q++) {
      const sk = q === 0 || q === 3 ? 1 : -1;
      const sl = q < 2 ? 1 : -1;
      TMP[j] = sg * h[j];
      TMP[k] = sk * h[k];
      TMP[l] = sl * h[l];
      localToWorld(this, TMP, 0, FPOLY, 3 * (s * POLY_CAP + q));
      FLAB[s * POLY_CAP + q] = q;
    }
    FCOUNT[s] = 4;
    FNRM[3 * s] = sg * R[j];
    FNRM[3 * s + 1] = sg * R[3 + j];
    FNRM[3 * s + 2] = sg * R[6 + j];
  }

  /** The edge FC[s] (from classify: its axis and the sides of the other two). */
  override segment(s: number): void {
    const h = this.h;
    const m = FC[s] >> 2;
    const p = (m + 1) % 3;
    const q = (m + 2) % 3;
    TMP[p] = FC[s] & 1 ? h[p] : -h[p];
    TMP[q] = FC[s] & 2 ? h[q] : -h[q];
    for (let e = 0; e < 2; e++) {
      TMP[m] = e === 0 ? -h[m] : h[m];
      localToWorld(this, TMP, 0, FPOLY, 3 * (s * POLY_CAP + e));
      FLAB[s * POLY_CAP + e] = e;
    }
    FCOUNT[s] = 2;
  }

  pointCode(q: Float64Array): number {
    const R = this.R;
    const h = this.h;
    const dx = q[0] - this.p[0];
    const dy = q[1] - this.p[1];
    const dz = q[2] - this.p[2];
    const l0 = R[0] * dx + R[3] * dy + R[6] * dz;
    const l1 = R[1] * dx + R[4] * dy + R[7] * dz;
    const l2 = R[2] * dx + R[5] * dy + R[8] * dz;
    const tol = 1e-7 * q[3];
    const c0 = l0 > h[0] - tol ? 2 : l0 < -h[0] + tol ? 0 : 1;
    const c1 = l1 > h[1] - tol ? 2 : l1 < -h[1] + tol ? 0 : 1;
    const c2 = l2 > h[2] - tol ? 2 : l2 < -h[2] + tol ? 0 : 1;
    return c0 + 3 * c1 + 9 * c2;
  }

  override polygonArea(code: number, out: Float64Array, o: number): void {
    const j = code >> 1;
    out[o] = 4 * this.h[(j + 1) % 3] * this.h[(j + 2) % 3];
  }
}
