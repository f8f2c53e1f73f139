/**
 * A segment from (0, 0, −L) to (0, 0, +L) (shape frame) as a convex core: the core of a
 * capsule, whose radius the convex pairs add after working on the core. Support function
 * h(d) = L |d·z|, kinked on the great circle n ⟂ z; its one feature besides its points is
 * the whole segment (segment code 0), and the code of a point on it: 0/1 the −z/+z end,
 * 2 between them.
 */

import type { WorldPose } from "../pose";
import { type CapsuleShape, readRadiusLength, SIZES } from "../shapes";
import {
  ConvexCore,
  type ConvexShape,
  F_POINT,
  F_SEG,
  FC,
  FCOUNT,
  FLAB,
  FPOLY,
  FT,
  LINE_SIN,
  POLY_CAP,
} from "./features";
import { localToWorld } from "./support";

/** A local point for localToWorld. */
const LP = new Float64Array(3);

export class SegmentCore extends ConvexCore implements ConvexShape {
  /** Half-length L (0), metres. */
  readonly size = new Float64Array(1);

  /**
   * Places the core: the segment of half-length L of the capsule `shape` at `pose`
   * (referenced, not copied; the shape rather than its numbers, which V8 would box as
   * arguments), swept by the capsule's radius (sweep[0]). The sizes are read through
   * shapes.ts readRadiusLength (why: there).
   */
  place(pose: WorldPose, shape: CapsuleShape): this {
    this.p = pose.p;
    this.R = pose.R;
    readRadiusLength(shape, 0);
    this.size[0] = SIZES[1];
    this.sweep[0] = SIZES[0];
    return this;
  }

  boundingRadius(): number {
    return this.size[0];
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    s[0] = 0;
    s[1] = 0;
    s[2] = d[2] >= 0 ? this.size[0] : -this.size[0];
  }

  /** The supporting end, or (d ⟂ the axis) the whole segment, q clamped onto it. */
  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number {
    const eps = 1e-9;
    const L = this.size[0];
    q[0] = 0;
    q[1] = 0;
    if (d[2] > eps) q[2] = L;
    else if (d[2] < -eps) q[2] = -L;
    else {
      const z = q[2];
      q[2] = z < -L ? -L : Math.min(z, L);
      ends[0] = ends[1] = ends[3] = ends[4] = 0;
      ends[2] = -L;
      ends[5] = L;
      return 1;
    }
    return 0;
  }

  override kinkAxes(out: Float64Array, o: number): number {
    const R = this.R;
    out[3 * o] = R[2];
    out[3 * o + 1] = R[5];
    out[3 * o + 2] = R[8];
    return 1;
  }

  classify(d: Float64Array, s: number): void {
    FT[s] = Math.abs(d[2]) <= LINE_SIN ? F_SEG : F_POINT;
    FC[s] = 0;
  }

  override segment(s: number): void {
    const L = this.size[0];
    LP[0] = 0;
    LP[1] = 0;
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
    const l2 = R[2] * (q[0] - this.p[0]) + R[5] * (q[1] - this.p[1]) + R[8] * (q[2] - this.p[2]);
    const tol = 1e-7 * q[3];
    const L = this.size[0];
    return l2 > L - tol ? 1 : l2 < -L + tol ? 0 : 2;
  }
}
