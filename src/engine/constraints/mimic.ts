/**
 * A mimic joint (URDF <mimic>): joint k's coordinate follows joint j's,
 *   C = q_k − m q_j − o = 0   (rad or m; m dimensionless, or m/rad, rad/m across types),
 * one scalar row on the coordinates of src/engine/constraints/joint-coordinate.ts (zero in
 * the model pose, revolute angles unwrapped with the turn count of the last step
 * boundary, so a coupling with m ≠ ±1 stays continuous over whole turns).
 *
 * Jacobian: q̇ = g·u for each coordinate, so Cq = g_k − m g_j, assembled per body; the
 * two joints have up to four distinct ends (a gripper's fingers share the palm: three),
 * hence bodyA, bodyB and moreBodies. Ct = 0 (o is constant). Acceleration level:
 * C̈ = (g_k u̇ − Qc_k) − m (g_j u̇ − Qc_j), so Qc = Qc_k − m Qc_j, with each coordinate's
 * own analytic Qc (no finite differences).
 *
 * Reaction: λ is a generalized effort along q_k (N·m or N; Gᵀλ = g_kᵀλ − m g_jᵀλ), reported
 * as the force and torque it applies on joint k's body b, about k's attachment point on b
 * (as a motor on k would report it); joint j receives −m λ along q_j.
 */

import type { Constraint } from "./constraint";
import type { JointCoordinate } from "./joint-coordinate";

export class MimicConstraint implements Constraint {
  readonly category = "coupling";
  readonly type = "mimic";
  readonly timeDependent = false;
  readonly rows = 1;
  readonly bodyA: number;
  readonly bodyB: number;
  readonly moreBodies: readonly number[];
  /** Distinct non-ground bodies of the two joints, in the order bodyA, bodyB, moreBodies. */
  private readonly bodies: Int32Array;

  /** `id`: "<joint k>:mimic". */
  constructor(
    readonly id: string,
    private readonly follower: JointCoordinate,
    private readonly leader: JointCoordinate,
    private readonly multiplier: number,
    private readonly offset: number,
  ) {
    const ends = [follower.bodyA, follower.bodyB, leader.bodyA, leader.bodyB];
    const distinct = [...new Set(ends.filter((b) => b >= 0))];
    this.bodies = Int32Array.from(distinct);
    this.bodyA = distinct[0] ?? -1;
    this.bodyB = distinct[1] ?? -1;
    this.moreBodies = distinct.slice(2);
  }

  residual(_t: number, out: Float64Array, off: number): void {
    this.follower.evaluate();
    this.leader.evaluate();
    out[off] = this.follower.value - this.multiplier * this.leader.value - this.offset;
  }

  jacobian(_t: number, jacA: Float64Array, jacB: Float64Array, jacMore?: Float64Array): void {
    const { follower: k, leader: j } = this;
    k.evaluate();
    j.evaluate();
    const n = this.bodies.length;
    for (let i = 0; i < n; i++) {
      const out = i === 0 ? jacA : i === 1 ? jacB : (jacMore as Float64Array);
      const o = i < 2 ? 0 : 6 * (i - 2);
      const b = this.bodies[i];
      out.fill(0, o, o + 6);
      addSide(out, o, b, k.bodyA, k.jacA, 1);
      addSide(out, o, b, k.bodyB, k.jacB, 1);
      addSide(out, o, b, j.bodyA, j.jacA, -this.multiplier);
      addSide(out, o, b, j.bodyB, j.jacB, -this.multiplier);
    }
    if (n < 2) jacB.fill(0, 0, 6);
    if (n < 1) jacA.fill(0, 0, 6);
  }

  velocityTerm(_t: number, out: Float64Array, off: number): void {
    out[off] = 0;
  }

  quadraticTerm(_t: number, out: Float64Array, off: number): void {
    out[off] = this.follower.quadraticTerm() - this.multiplier * this.leader.quadraticTerm();
  }

  reaction(lambda: Float64Array, off: number, force: Float64Array, torque: Float64Array): void {
    this.follower.reaction(lambda, off, force, torque);
  }
}

/** out[o..o+6) += s·g when the coordinate's end `end` is body b. */
function addSide(
  out: Float64Array,
  o: number,
  b: number,
  end: number,
  g: Float64Array,
  s: number,
): void {
  if (end !== b) return;
  for (let c = 0; c < 6; c++) out[o + c] += s * g[c];
}
