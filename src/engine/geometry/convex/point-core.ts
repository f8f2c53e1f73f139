/**
 * A point (the shape frame's origin) as a convex core: the core of a sphere, whose
 * radius the convex pairs add after working on the core (ConvexCore.sweep). Support
 * function h(d) = 0 (smooth, zero Hessian); its only feature is the point (code 0).
 */

import type { WorldPose } from "../pose";
import { readRadius, SIZES, type SphereShape } from "../shapes";
import { ConvexCore, type ConvexShape, F_POINT, FC, FT } from "./features";

export class PointCore extends ConvexCore implements ConvexShape {
  /**
   * Places the core at the centre of the sphere `shape` at `pose` (referenced, not copied),
   * swept by its radius (sweep[0], read through shapes.ts readRadius: why there).
   */
  place(pose: WorldPose, shape: SphereShape): this {
    this.p = pose.p;
    this.R = pose.R;
    readRadius(shape, 0);
    this.sweep[0] = SIZES[0];
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

  classify(_d: Float64Array, s: number): void {
    FT[s] = F_POINT;
    FC[s] = 0;
  }

  pointCode(): number {
    return 0;
  }
}
