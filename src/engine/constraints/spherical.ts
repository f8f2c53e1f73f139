/**
 * Spherical (ball) joint: the attachment points coincide, C = p_b − p_a = 0 (3 rows, m).
 * Multipliers: λ is the force the joint applies on b at p_b (world, N); the torque about
 * p_b is zero.
 */
import type { BodySystem } from "../model/body-system";
import { pointJacobian, pointQuadratic, pointResidual } from "./kinematics";
import { type Attachment, PairConstraint } from "./pair-constraint";

export class SphericalJoint extends PairConstraint {
  constructor(id: string, sys: BodySystem, a: Attachment, b: Attachment) {
    super(id, "spherical", "joint", sys, a, b, 3);
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.refresh();
    pointResidual(this.k, out, off);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    pointJacobian(this.k, jacA, jacB, 0);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    pointQuadratic(this.k, out, off);
  }

  addRotationStiffness(lambda: Float64Array, off: number, ka: Float64Array, kb: Float64Array) {
    this.addPointRowStiffness(lambda, off, ka, kb);
  }
}
