/**
 * Motors: one driving row added to a revolute or prismatic joint (the joint's own rows
 * stay in that joint; the motor is a separate constraint with the motor's id, on the
 * same bodies and points). Both are zero in the model pose (construction time), like
 * MuJoCo's qpos0 and Chrono's initialized link frames.
 *
 * Revolute motor: C = φ − θ(t) (rad), φ the angle of b relative to a about the joint's
 * axis n (right-handed, kinematics.ts "relative rotation angle"), measured from the model
 * pose. The residual is wrapped to (−π, π] (computed as atan2 of the rotated (c, s)
 * pair), so θ(t) may grow without bound. Ct = −θ̇(t), Qc = −(d/dt Cq) u + θ̈(t).
 * Reaction: the motor applies on b the torque λ g, g = ∂φ/∂ω_b (= n on the joint's
 * manifold): force 0, torque λ g (N·m about the axis; positive drives b in +φ).
 *
 * Prismatic motor: C = d·n_a − s₀ − s(t) (m), d = p_b − p_a, s₀ = d·n_a in the model
 * pose. Ct = −ṡ(t), Qc = −(d/dt Cq) u + s̈(t). Reaction: force λ n_a on b at p_b,
 * torque 0.
 */

import { dot3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import {
  alongJacobian,
  alongQuadraticPart,
  angleCurvature,
  angleJacobian,
  angleQuadraticPart,
  axisFrame,
} from "./kinematics";
import { type Attachment, hasOrientation, PairConstraint } from "./pair-constraint";

/** A scalar drive θ(t) with its first two derivatives (src/engine/model/time-function.ts). */
export interface DriveFunction {
  value(t: number): number;
  rate(t: number): number;
  accel(t: number): number;
  readonly constant: boolean;
}

export class RevoluteMotor extends PairConstraint {
  override readonly timeDependent: boolean;
  /** u_a, w_a in a's frame (0..5), u_b in b's frame (6..8). */
  private readonly local = new Float64Array(9);
  private readonly world = new Float64Array(9);
  /** Views of `world`: u_a, w_a, u_b. */
  private readonly ua = this.world.subarray(0, 3);
  private readonly wa = this.world.subarray(3, 6);
  private readonly ub = this.world.subarray(6, 9);

  /** `joint`: the id of the revolute joint it drives (for messages). */
  constructor(
    id: string,
    readonly joint: string,
    sys: BodySystem,
    a: Attachment,
    b: Attachment,
    axis: ArrayLike<number>,
    readonly drive: DriveFunction,
  ) {
    super(id, "revolute-motor", "motor", sys, a, b, 1);
    if (!hasOrientation(sys, a.body) || !hasOrientation(sys, b.body))
      throw new Error(
        `motor "${id}": an angle drive needs rigid bodies on joint "${joint}" (a particle has no orientation)`,
      );
    this.timeDependent = !drive.constant;
    const frame = new Float64Array(9);
    axisFrame(axis, frame);
    this.toLocalA(frame.subarray(3, 6), this.local, 0);
    this.toLocalA(frame.subarray(6, 9), this.local, 3);
    this.toLocalB(frame.subarray(3, 6), this.local, 6);
  }

  private orient(): void {
    this.worldA(this.local, 0, this.world, 0);
    this.worldA(this.local, 3, this.world, 3);
    this.worldB(this.local, 6, this.world, 6);
  }

  /** The relative angle φ (rad, (−π, π]) of the current configuration. */
  angle(): number {
    this.refresh();
    this.orient();
    const w = this.world;
    return Math.atan2(dot3(w, 3, w, 6), dot3(w, 0, w, 6));
  }

  residual(t: number, out: Float64Array, off: number): void {
    this.refresh();
    this.orient();
    const w = this.world;
    const c = dot3(w, 0, w, 6);
    const s = dot3(w, 3, w, 6);
    const th = this.drive.value(t);
    const ct = Math.cos(th);
    const st = Math.sin(th);
    // φ − θ wrapped: the angle of (c, s) rotated by −θ.
    out[off] = Math.atan2(s * ct - c * st, c * ct + s * st);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    this.orient();
    angleJacobian(this.ua, this.wa, this.ub, jacA, jacB, 0);
  }

  /**
   * ∂t/∂θ_a and ∂t/∂θ_b (3×3 row-major) of the angle's a-side rotational row t at the
   * current configuration (kinematics.ts angleCurvature).
   */
  curvature(ta: Float64Array, tb: Float64Array): void {
    this.refresh();
    this.orient();
    angleCurvature(this.ua, this.wa, this.ub, ta, tb);
  }

  override velocityTerm(t: number, out: Float64Array, off: number): void {
    out[off] = -this.drive.rate(t);
  }

  quadraticTerm(t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    this.orient();
    out[off] = -angleQuadraticPart(this.k, this.ua, this.wa, this.ub) + this.drive.accel(t);
  }
}

export class PrismaticMotor extends PairConstraint {
  override readonly timeDependent: boolean;
  /** n in a's frame. */
  private readonly local = new Float64Array(3);
  private readonly world = new Float64Array(3);
  /** Offset d·n_a of the model pose (m). */
  readonly offset0: number;

  constructor(
    id: string,
    readonly joint: string,
    sys: BodySystem,
    a: Attachment,
    b: Attachment,
    axis: ArrayLike<number>,
    readonly drive: DriveFunction,
  ) {
    super(id, "prismatic-motor", "motor", sys, a, b, 1);
    this.timeDependent = !drive.constant;
    const frame = new Float64Array(9);
    axisFrame(axis, frame);
    this.toLocalA(frame.subarray(0, 3), this.local, 0);
    this.offset0 = dot3(this.k.d, 0, frame, 0);
  }

  /** The offset d·n_a − s₀ (m) of the current configuration. */
  displacement(): number {
    this.refresh();
    this.worldA(this.local, 0, this.world, 0);
    return dot3(this.k.d, 0, this.world, 0) - this.offset0;
  }

  residual(t: number, out: Float64Array, off: number): void {
    out[off] = this.displacement() - this.drive.value(t);
  }

  protected fullJacobian(_t: number, jacA: Float64Array, jacB: Float64Array): void {
    this.worldA(this.local, 0, this.world, 0);
    alongJacobian(this.k, this.world, 0, jacA, jacB, 0);
  }

  override velocityTerm(t: number, out: Float64Array, off: number): void {
    out[off] = -this.drive.rate(t);
  }

  quadraticTerm(t: number, out: Float64Array, off: number): void {
    this.refreshWithVelocities();
    this.worldA(this.local, 0, this.world, 0);
    out[off] = -alongQuadraticPart(this.k, this.world, 0) + this.drive.accel(t);
  }
}
