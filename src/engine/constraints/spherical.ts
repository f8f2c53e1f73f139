/**
 * Spherical (ball) joint: the attachment points coincide, C = p_b − p_a = 0 (3 rows, m).
 * Multipliers: λ is the force the joint applies on b at p_b (world, N); the torque about
 * p_b is zero.
 */
import type { BodySystem } from "../model/body-system";
import { pointJacobian, pointQuadratic, pointResidual, pointRowsInto } from "./kinematics";
import { type Attachment, PointRowsJoint } from "./pair-constraint";

export class SphericalJoint extends PointRowsJoint {
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

  jacobianInto(
    _t: number,
    values: Float64Array,
    slotA: number,
    widthA: number,
    slotB: number,
    widthB: number,
    stride: number,
  ): void {
    this.refresh();
    if (slotA >= 0) pointRowsInto(values, slotA, stride, widthA, -1, this.k.ra);
    if (slotB >= 0) pointRowsInto(values, slotB, stride, widthB, 1, this.k.rb);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    pointQuadratic(this.k, out, off);
  }

  /**
   * The force λ on b at p_b and no torque about p_b, without building the Jacobian blocks
   * (the monitor takes every joint's reaction after every step: on the 100-link chain
   * 5.1 → 0.5 µs a step). Bit for bit what PairConstraint.reaction computes from Cq_b =
   * [I, −[r_b]×] for finite λ: its F_i sums λ_i with the products 0·λ_j onto 0, which is
   * λ_i + 0 (a −0 becomes +0), and its τ_c − r_b × F subtracts from r_b × λ the same two
   * rounded products summed in the other order, an exact +0.
   */
  override reaction(
    lambda: Float64Array,
    off: number,
    force: Float64Array,
    torque: Float64Array,
  ): void {
    force[0] = lambda[off] + 0;
    force[1] = lambda[off + 1] + 0;
    force[2] = lambda[off + 2] + 0;
    torque[0] = 0;
    torque[1] = 0;
    torque[2] = 0;
  }
}
