/**
 * The solid cylinder x² + y² ≤ r², |z| ≤ L (shape frame) as a convex core: support
 * function h(d) = L |d·z| + r |d_⊥| (d_⊥ = d − (d·z) z), kinked on the great circle
 * n ⟂ z and with cone points at ±z (the caps); caps as polygon features (code 0: −z,
 * 1: +z) of RIM_SAMPLES rim points, the side line facing a direction as its segment
 * feature (code 0), and the code of a surface point: 0/1 the −z/+z cap, 2 the side, 3/4
 * the −z/+z rim.
 */

import { FLUSH_COS, RIM_COS, RIM_SAMPLES, RIM_SIN } from "../cylinder";
import type { WorldPose } from "../pose";
import { type CylinderShape, readRadiusLength, SIZES } from "../shapes";
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
  RAY,
} from "./features";
import { localToWorld } from "./support";

/** addSupportHessian's axis z (0..2) and unit radial direction û (3..5). */
const ZU = new Float64Array(6);
/** A local point for localToWorld. */
const LP = new Float64Array(3);

export class CylinderCore extends ConvexCore implements ConvexShape {
  /** Radius r (0) and half-length L (1), metres (also read by the cylinder pairs). */
  readonly size = new Float64Array(2);

  /**
   * Places the core: the cylinder (r, L) of `shape` at `pose` (the pose is referenced, not
   * copied; the shape rather than its two numbers, which V8 would box as arguments; the
   * sizes read through shapes.ts readRadiusLength: why there).
   */
  place(pose: WorldPose, shape: CylinderShape): this {
    this.p = pose.p;
    this.R = pose.R;
    readRadiusLength(shape, 0);
    this.size[0] = SIZES[0];
    this.size[1] = SIZES[1];
    return this;
  }

  boundingRadius(): number {
    const r = this.size[0];
    const L = this.size[1];
    return Math.sqrt(r * r + L * L);
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    const r = this.size[0];
    const rho = Math.sqrt(d[0] * d[0] + d[1] * d[1]);
    if (rho > 0) {
      s[0] = (r * d[0]) / rho;
      s[1] = (r * d[1]) / rho;
    } else {
      s[0] = 0;
      s[1] = 0;
    }
    s[2] = d[2] >= 0 ? this.size[1] : -this.size[1];
  }

  /**
   * The radial part goes to the rim point of d's radial direction, or (d along the axis:
   * the cap face) is clamped to the disc; the axial part to the supporting cap, or (d
   * radial: the side line) clamped to [−L, L].
   */
  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number {
    const eps = 1e-9;
    const rad = this.size[0];
    const axial = this.size[1];
    let dim = 0;
    const rho = Math.sqrt(d[0] * d[0] + d[1] * d[1]);
    if (rho > eps) {
      q[0] = (rad * d[0]) / rho;
      q[1] = (rad * d[1]) / rho;
    } else {
      const m = Math.sqrt(q[0] * q[0] + q[1] * q[1]);
      if (m > rad) {
        q[0] *= rad / m;
        q[1] *= rad / m;
      }
      dim = 2;
    }
    if (d[2] > eps) q[2] = axial;
    else if (d[2] < -eps) q[2] = -axial;
    else {
      const z = q[2];
      q[2] = z < -axial ? -axial : Math.min(z, axial);
      if (dim === 0) {
        dim = 1;
        ends[0] = ends[3] = q[0];
        ends[1] = ends[4] = q[1];
        ends[2] = -axial;
        ends[5] = axial;
      } else dim = 2;
    }
    return dim;
  }

  /**
   * Hessian of h = L |d·z| + r |d_⊥| away from its kinks: (r/|d_⊥|)(I − z zᵀ − û ûᵀ),
   * û = d_⊥/|d_⊥| (the cap term is linear on each side of the kink).
   */
  override addSupportHessian(d: Float64Array, o: number, H: Float64Array): void {
    const dx = d[o];
    const dy = d[o + 1];
    const dz = d[o + 2];
    const R = this.R;
    const zx = R[2];
    const zy = R[5];
    const zz = R[8];
    const c = dx * zx + dy * zy + dz * zz;
    const px = dx - c * zx;
    const py = dy - c * zy;
    const pz = dz - c * zz;
    const l = Math.sqrt(px * px + py * py + pz * pz);
    if (!(l > 1e-12)) return;
    const k = this.size[0] / l;
    ZU[0] = zx;
    ZU[1] = zy;
    ZU[2] = zz;
    ZU[3] = px / l;
    ZU[4] = py / l;
    ZU[5] = pz / l;
    for (let a = 0; a < 3; a++)
      for (let b = 0; b < 3; b++)
        H[3 * a + b] += k * ((a === b ? 1 : 0) - ZU[a] * ZU[b] - ZU[3 + a] * ZU[3 + b]);
  }

  /** The axis z: h is kinked across the circle n ⟂ z (the rims). */
  override kinkAxes(out: Float64Array, o: number): number {
    const R = this.R;
    out[3 * o] = R[2];
    out[3 * o + 1] = R[5];
    out[3 * o + 2] = R[8];
    return 1;
  }

  /** The axis z: h has cone points at ±z (the caps). */
  override coneAxes(out: Float64Array, o: number): number {
    const R = this.R;
    out[3 * o] = R[2];
    out[3 * o + 1] = R[5];
    out[3 * o + 2] = R[8];
    return 1;
  }

  classify(d: Float64Array, s: number): void {
    const c2 = d[2];
    FT[s] = F_POINT;
    FC[s] = 0;
    if (Math.abs(c2) >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = c2 > 0 ? 1 : 0;
    } else if (Math.abs(c2) <= LINE_SIN) FT[s] = F_SEG;
  }

  /**
   * The cap FC[s] as its RIM_SAMPLES rim points (labels k); incident, the rim point
   * furthest along t = t[0..2] (the deepest) is inserted (label RIM_SAMPLES) where the
   * samples miss it by more than t[3].
   */
  override polygon(s: number, incident: boolean, t: Float64Array): void {
    const R = this.R;
    const r = this.size[0];
    const L = this.size[1];
    const zc = FC[s] === 1 ? L : -L;
    const sg = FC[s] === 1 ? 1 : -1;
    FNRM[3 * s] = sg * R[2];
    FNRM[3 * s + 1] = sg * R[5];
    FNRM[3 * s + 2] = sg * R[8];
    // Exact deepest rim point along t (local radial direction of t).
    let insertAt = -1;
    let ex = 0;
    let ey = 0;
    if (incident) {
      const tx = t[0];
      const ty = t[1];
      const tz = t[2];
      const tol = t[3];
      const lx = R[0] * tx + R[3] * ty + R[6] * tz;
      const ly = R[1] * tx + R[4] * ty + R[7] * tz;
      const rho = Math.sqrt(lx * lx + ly * ly);
      if (rho > 0) {
        ex = lx / rho;
        ey = ly / rho;
        let bestS = Number.NEGATIVE_INFINITY;
        for (let k = 0; k < RIM_SAMPLES; k++)
          bestS = Math.max(bestS, r * rho * (RIM_COS[k] * ex + RIM_SIN[k] * ey));
        if (r * rho - bestS > tol) {
          let ang = Math.atan2(ey, ex);
          if (ang < 0) ang += 2 * Math.PI;
          insertAt = Math.min(RIM_SAMPLES - 1, Math.floor((ang * RIM_SAMPLES) / (2 * Math.PI)));
        }
      }
    }
    let n = 0;
    LP[2] = zc;
    for (let k = 0; k < RIM_SAMPLES; k++) {
      LP[0] = r * RIM_COS[k];
      LP[1] = r * RIM_SIN[k];
      localToWorld(this, LP, 0, FPOLY, 3 * (s * POLY_CAP + n));
      FLAB[s * POLY_CAP + n] = k;
      n++;
      if (k === insertAt) {
        LP[0] = r * ex;
        LP[1] = r * ey;
        localToWorld(this, LP, 0, FPOLY, 3 * (s * POLY_CAP + n));
        FLAB[s * POLY_CAP + n] = RIM_SAMPLES;
        n++;
      }
    }
    FCOUNT[s] = n;
  }

  /** The side line at the rim point of t's radial direction (local x when t is axial). */
  override segment(s: number, t: Float64Array): void {
    const tx = t[0];
    const ty = t[1];
    const tz = t[2];
    const R = this.R;
    const r = this.size[0];
    const L = this.size[1];
    const lx = R[0] * tx + R[3] * ty + R[6] * tz;
    const ly = R[1] * tx + R[4] * ty + R[7] * tz;
    const rho = Math.sqrt(lx * lx + ly * ly);
    LP[0] = rho > 0 ? (r * lx) / rho : r;
    LP[1] = rho > 0 ? (r * ly) / rho : 0;
    LP[2] = -L;
    localToWorld(this, LP, 0, FPOLY, 3 * (s * POLY_CAP));
    LP[2] = L;
    localToWorld(this, LP, 0, FPOLY, 3 * (s * POLY_CAP + 1));
    FLAB[s * POLY_CAP] = 0;
    FLAB[s * POLY_CAP + 1] = 1;
    FCOUNT[s] = 2;
  }

  pointCode(q: Float64Array): number {
    const R = this.R;
    const dx = q[0] - this.p[0];
    const dy = q[1] - this.p[1];
    const dz = q[2] - this.p[2];
    const l0 = R[0] * dx + R[3] * dy + R[6] * dz;
    const l1 = R[1] * dx + R[4] * dy + R[7] * dz;
    const l2 = R[2] * dx + R[5] * dy + R[8] * dz;
    const tol = 1e-7 * q[3];
    const onSide = Math.sqrt(l0 * l0 + l1 * l1) > this.size[0] - tol;
    const L = this.size[1];
    const cap = l2 > L - tol ? 1 : l2 < -L + tol ? 0 : -1;
    if (cap >= 0) return onSide ? 3 + cap : cap;
    return 2;
  }

  override polygonArea(_code: number, out: Float64Array, o: number): void {
    out[o] = Math.PI * this.size[0] * this.size[0];
  }

  /**
   * Where the line p + t n (n unit; p = line[0..2], n = line[3..5]) enters the solid
   * cylinder: the largest of the entry parameters into the infinite side and into the slab
   * between the caps, if below the smallest exit; into RAY[0]. The caps are taken a hair
   * (1e-9 L) outwards: an overlap end lies on this cylinder's cap plane when the other
   * support segment reaches past it (the line then runs in that plane).
   */
  rayEntry(line: Float64Array): boolean {
    const px = line[0];
    const py = line[1];
    const pz = line[2];
    const nx = line[3];
    const ny = line[4];
    const nz = line[5];
    const R = this.R;
    const dx = px - this.p[0];
    const dy = py - this.p[1];
    const dz = pz - this.p[2];
    const l0 = R[0] * dx + R[3] * dy + R[6] * dz;
    const l1 = R[1] * dx + R[4] * dy + R[7] * dz;
    const l2 = R[2] * dx + R[5] * dy + R[8] * dz;
    const m0 = R[0] * nx + R[3] * ny + R[6] * nz;
    const m1 = R[1] * nx + R[4] * ny + R[7] * nz;
    const m2 = R[2] * nx + R[5] * ny + R[8] * nz;
    const r = this.size[0];
    const L = this.size[1] * (1 + 1e-9);
    let lo = Number.NEGATIVE_INFINITY;
    let hi = Number.POSITIVE_INFINITY;
    // Side: |(l0, l1) + t (m0, m1)|² ≤ r².
    const A = m0 * m0 + m1 * m1;
    const B = l0 * m0 + l1 * m1;
    const C = l0 * l0 + l1 * l1 - r * r;
    if (A > 0) {
      const disc = B * B - A * C;
      if (!(disc >= 0)) return false;
      const q = Math.sqrt(disc);
      lo = (-B - q) / A;
      hi = (-B + q) / A;
    } else if (C > 0) return false;
    // Slab: |l2 + t m2| ≤ L.
    if (m2 !== 0) {
      const a = (-L - l2) / m2;
      const b = (L - l2) / m2;
      lo = Math.max(lo, Math.min(a, b));
      hi = Math.min(hi, Math.max(a, b));
    } else if (Math.abs(l2) > L) return false;
    if (!(lo <= hi)) return false;
    RAY[0] = lo;
    return true;
  }
}
