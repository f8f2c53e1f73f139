/**
 * Distance link (massless rigid rod with ball ends): C = |p_b − p_a| − L = 0 (1 row, m).
 * Multiplier: with n = (p_b − p_a)/|p_b − p_a| the unit vector from a's point to b's, λ
 * is the force along n on b at p_b (N, see constraint.ts for the sign convention of λ):
 * λ > 0 pushes b away from a (the link is in compression), λ < 0 pulls it (tension).
 */

import { norm3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import { distanceJacobian, distanceQuadraticPart } from "./kinematics";
import { type Attachment, PairConstraint } from "./pair-constraint";

export class DistanceJoint extends PairConstraint {
  /** Length L (m). */
  readonly length: number;

  /** `length` defaults to the distance of the points in the current configuration. */
  constructor(id: string, sys: BodySystem, a: Attachment, b: Attachment, length?: number) {
    super(id, "distance", "joint", sys, a, b, 1);
    this.refresh();
    const d = this.k.d;
    const current = norm3(d);
    this.length = length ?? current;
    if (!(this.length > 0))
      throw new Error(`joint "${id}": distance needs a positive length (the points coincide)`);
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.refresh();
    const d = this.k.d;
    out[off] = norm3(d) - this.length;
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    distanceJacobian(this.k, jacA, jacB, 0);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    out[off] = -distanceQuadraticPart(this.k);
  }
}
