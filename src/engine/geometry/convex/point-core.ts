/**
 * A point (the shape frame's origin) as a convex core: the core of a sphere, whose
 * radius the convex pairs add after working on the core (pair.ts RADII). Support
 * function h(d) = 0 (smooth, zero Hessian); its only feature is the point (code 0).
 */

import type { WorldPose } from "../pose";
import { type ConvexShape, F_POINT, FC, FT } from "./features";

export class PointCore implements ConvexShape {
  p = new Float64Array(3);
  R = new Float64Array(9);
  /** The radius the sphere sweeps the point by (0), metres: read by place(). */
  readonly size = new Float64Array(1);

  /** Places the core at the centre of the sphere `shape` at `pose` (referenced, not copied). */
  place(pose: WorldPose, shape: { readonly radius: number }): this {
    if (this.p !== pose.p) {
      this.p = pose.p;
      this.R = pose.R;
    }
    this.size[0] = shape.radius;
    return this;
  }

  boundingRadius(): number {
    return 0;
  }

  localSupport(_d: Float64Array, s: Float64Array): void {
    s[0] = 0;
    s[1] = 0;
    s[2] = 0;
  }

  projectOnSupport(q: Float64Array): number {
    q[0] = 0;
    q[1] = 0;
    q[2] = 0;
    return 0;
  }

  addSupportHessian(): void {
    // Constant support function: zero Hessian.
  }

  kinkAxes(): number {
    return 0;
  }

  coneAxes(): number {
    return 0;
  }

  classify(_d: Float64Array, s: number): void {
    FT[s] = F_POINT;
    FC[s] = 0;
  }

  /** A point has no polygon feature (classify never reports one). */
  polygon(): void {}

  /** A point has no segment feature. */
  segment(): void {}

  pointCode(): number {
    return 0;
  }

  polygonArea(_code: number, out: Float64Array, o: number): void {
    out[o] = 0;
  }
}
