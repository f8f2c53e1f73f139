/**
 * Common part of every joint and motor: two bodies a and b (either may be ground, −1),
 * one attachment point on each (body frame; world frame for ground), the pair
 * kinematics, the particle handling of the Jacobian and the reaction.
 *
 * Reaction (see constraint.ts for the sign of λ): the generalized force of the
 * constraint on body b is Cq_bᵀ λ = [F; τ_c], τ_c about b's centre of mass. The joint
 * applies on b the force F and, about its attachment point p_b = x_b + r_b, the torque
 * τ = τ_c − r_b × F. This holds for every row type (points, offsets, perpendicularities,
 * distances, angles), so the reaction is computed once here from the Jacobian. When b is
 * ground the same formula gives the force and torque the joint applies on the ground.
 */
import { BodyKind, type BodySystem } from "../model/body-system";
import type { Constraint } from "./constraint";
import {
  addPointRowsCurvature,
  PairKinematics,
  pointRotationStiffness,
  rotate,
  rotateInverse,
} from "./kinematics";

/** A point on a body: body index (−1 ground) and the point in that body's frame (m). */
export interface Attachment {
  body: number;
  point: ArrayLike<number>;
}

/** True when the body has an orientation the joint can align (ground or a rigid body). */
export function hasOrientation(sys: BodySystem, b: number): boolean {
  return b < 0 || sys.hasOrientation[b] === 1;
}

export abstract class PairConstraint implements Constraint {
  readonly bodyA: number;
  readonly bodyB: number;
  readonly timeDependent: boolean = false;
  /** Kinematics at the last refresh. */
  readonly k = new PairKinematics();
  /** poseVersion of the last kinematics update (−1: none yet). */
  private refreshedPose = -1;
  protected readonly sA = new Float64Array(3);
  protected readonly sB = new Float64Array(3);
  private readonly reactA: Float64Array;
  private readonly reactB: Float64Array;

  constructor(
    readonly id: string,
    readonly type: string,
    readonly category: "joint" | "motor",
    protected readonly sys: BodySystem,
    a: Attachment,
    b: Attachment,
    readonly rows: number,
  ) {
    this.bodyA = a.body;
    this.bodyB = b.body;
    for (let i = 0; i < 3; i++) {
      this.sA[i] = a.point[i];
      this.sB[i] = b.point[i];
    }
    this.reactA = new Float64Array(6 * rows);
    this.reactB = new Float64Array(6 * rows);
  }

  /**
   * Re-reads the bodies' positions (enough for residuals, Jacobians and reactions), unless
   * they are unchanged since the last refresh (the system's poseVersion): a residual and
   * the Jacobian at one configuration share one evaluation of the kinematics.
   */
  protected refresh(): void {
    const version = this.sys.poseVersion;
    if (version === this.refreshedPose) return;
    this.k.update(this.sys, this.bodyA, this.sA, this.bodyB, this.sB);
    this.refreshedPose = version;
  }

  /** Re-reads positions and velocities (for the quadratic-velocity terms). */
  protected refreshWithVelocities(): void {
    this.refresh();
    this.k.updateVelocities(this.sys, this.bodyA, this.bodyB);
  }

  /** World vector → a's frame (for storing axes given in world coordinates). */
  protected toLocalA(world: ArrayLike<number>, out: Float64Array, io = 0): void {
    this.refresh();
    rotateInverse(out, this.k.Ra, world as Float64Array, io, 0, this.k.raOffset);
  }

  protected toLocalB(world: ArrayLike<number>, out: Float64Array, io = 0): void {
    this.refresh();
    rotateInverse(out, this.k.Rb, world as Float64Array, io, 0, this.k.rbOffset);
  }

  /** out[io..] = R_a local[il..]: a vector fixed in a, in world coordinates. */
  protected worldA(local: Float64Array, il: number, out: Float64Array, io: number): void {
    rotate(out, this.k.Ra, local, io, il, this.k.raOffset);
  }

  protected worldB(local: Float64Array, il: number, out: Float64Array, io: number): void {
    rotate(out, this.k.Rb, local, io, il, this.k.rbOffset);
  }

  abstract residual(t: number, out: Float64Array, off: number): void;
  abstract quadraticTerm(t: number, out: Float64Array, off: number): void;
  /** Full 6-column Jacobian blocks at the kinematics of the last refresh. */
  protected abstract fullJacobian(t: number, jacA: Float64Array, jacB: Float64Array): void;

  jacobian(t: number, jacA: Float64Array, jacB: Float64Array): void {
    this.refresh();
    this.fullJacobian(t, jacA, jacB);
    // A particle has no rotational dofs: its columns 3..5 do not exist.
    if (this.bodyA >= 0 && this.sys.kind[this.bodyA] === BodyKind.PARTICLE)
      for (let r = 0; r < this.rows; r++) jacA.fill(0, 6 * r + 3, 6 * r + 6);
    if (this.bodyB >= 0 && this.sys.kind[this.bodyB] === BodyKind.PARTICLE)
      for (let r = 0; r < this.rows; r++) jacB.fill(0, 6 * r + 3, 6 * r + 6);
  }

  velocityTerm(_t: number, out: Float64Array, off: number): void {
    out.fill(0, off, off + this.rows);
  }

  reaction(lambda: Float64Array, off: number, force: Float64Array, torque: Float64Array): void {
    this.refresh();
    this.fullJacobian(0, this.reactA, this.reactB);
    const J = this.reactB;
    let fx = 0;
    let fy = 0;
    let fz = 0;
    let tx = 0;
    let ty = 0;
    let tz = 0;
    for (let r = 0; r < this.rows; r++) {
      const l = lambda[off + r];
      const o = 6 * r;
      fx += J[o] * l;
      fy += J[o + 1] * l;
      fz += J[o + 2] * l;
      tx += J[o + 3] * l;
      ty += J[o + 4] * l;
      tz += J[o + 5] * l;
    }
    // τ about p_b = τ about the centre of mass − r_b × F
    const rb = this.k.rb;
    force[0] = fx;
    force[1] = fy;
    force[2] = fz;
    torque[0] = tx - (rb[1] * fz - rb[2] * fy);
    torque[1] = ty - (rb[2] * fx - rb[0] * fz);
    torque[2] = tz - (rb[0] * fy - rb[1] * fx);
  }
}

/**
 * A joint whose rows 0..2 are the point rows p_b − p_a = 0 (spherical, revolute, fixed):
 * they, and only they, carry the geometric stiffness and the velocity rows' curvature
 * (kinematics.ts pointRotationStiffness, addPointRowsCurvature), which these joints offer
 * as Constraint.addRotationStiffness and addVelocityCurvature.
 */
export abstract class PointRowsJoint extends PairConstraint {
  /**
   * Constraint.addRotationStiffness: the point rows' (0..2); the other rows add nothing
   * (constraint-set.ts).
   */
  addRotationStiffness(
    lambda: Float64Array,
    off: number,
    ka: Float64Array,
    kb: Float64Array,
  ): void {
    this.refresh();
    pointRotationStiffness(this.k, lambda, off, ka, kb);
  }

  /**
   * Constraint.addVelocityCurvature: the point rows' (0..2), at the kinematics and
   * velocities read here; the other rows add nothing (constraint-set.ts velocityRows).
   */
  addVelocityCurvature(
    values: Float64Array,
    slotA: number,
    widthA: number,
    slotB: number,
    widthB: number,
    stride: number,
    scale: number,
  ): void {
    this.refreshWithVelocities();
    const k = this.k;
    if (slotA >= 0) addPointRowsCurvature(values, slotA, stride, widthA, -1, k.ra, k.wa, scale);
    if (slotB >= 0) addPointRowsCurvature(values, slotB, stride, widthB, 1, k.rb, k.wb, scale);
  }
}
