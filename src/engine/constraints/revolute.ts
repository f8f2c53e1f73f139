/**
 * Revolute (hinge) joint about an axis given in world coordinates for the model pose.
 * Rows (m, then dimensionless):
 *   0..2  p_b − p_a = 0                       (the points coincide)
 *   3     n_a·u_b = 0,  4   n_a·w_b = 0        (b's axis stays along a's axis)
 * where (n, u, w) is the right-handed frame of the axis (kinematics.ts `axisFrame`), n
 * stored in a's frame and u, w in b's frame at construction, so rows 3–4 vanish in the
 * model pose and b may turn freely about n. When either body is a particle (no
 * orientation) rows 3–4 are omitted and the joint acts as a spherical one.
 * Reaction: rows 0..2 give the force on b at p_b; rows 3–4 a pure torque
 * λ₃ (u_b × n_a) + λ₄ (w_b × n_a) (perpendicular to the axis).
 */

import { dot3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import {
  axisFrame,
  dotJacobian,
  dotQuadraticPart,
  pointJacobian,
  pointQuadratic,
  pointResidual,
} from "./kinematics";
import { type Attachment, hasOrientation, PointRowsJoint } from "./pair-constraint";

export class RevoluteJoint extends PointRowsJoint {
  /** True when the two orientation rows are present. */
  readonly aligns: boolean;
  /** n in a's frame (0..2); u, w in b's frame (3..8). */
  private readonly local = new Float64Array(9);
  /** World copies at the last refresh: n_a, u_b, w_b. */
  private readonly world = new Float64Array(9);

  constructor(id: string, sys: BodySystem, a: Attachment, b: Attachment, axis: ArrayLike<number>) {
    const aligns = hasOrientation(sys, a.body) && hasOrientation(sys, b.body);
    super(id, "revolute", "joint", sys, a, b, aligns ? 5 : 3);
    this.aligns = aligns;
    const frame = new Float64Array(9);
    axisFrame(axis, frame);
    this.toLocalA(frame.subarray(0, 3), this.local, 0);
    this.toLocalB(frame.subarray(3, 6), this.local, 3);
    this.toLocalB(frame.subarray(6, 9), this.local, 6);
  }

  private orient(): void {
    this.worldA(this.local, 0, this.world, 0);
    this.worldB(this.local, 3, this.world, 3);
    this.worldB(this.local, 6, this.world, 6);
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.refresh();
    pointResidual(this.k, out, off);
    if (!this.aligns) return;
    this.orient();
    const w = this.world;
    out[off + 3] = dot3(w, 0, w, 3);
    out[off + 4] = dot3(w, 0, w, 6);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    pointJacobian(this.k, jacA, jacB, 0);
    if (!this.aligns) return;
    this.orient();
    dotJacobian(this.world, 0, this.world, 3, jacA, jacB, 3);
    dotJacobian(this.world, 0, this.world, 6, jacA, jacB, 4);
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    pointQuadratic(this.k, out, off);
    if (!this.aligns) return;
    this.orient();
    out[off + 3] = -dotQuadraticPart(this.k, this.world, 0, this.world, 3);
    out[off + 4] = -dotQuadraticPart(this.k, this.world, 0, this.world, 6);
  }
}
