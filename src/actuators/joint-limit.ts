/**
 * A joint limit lower ≤ q ≤ upper on a revolute angle (rad) or prismatic offset (m),
 * enforced by a compliant unilateral law (the SMC counterpart of a contact): past a
 * bound by δ > 0 the limit pushes q back with the effort
 *
 *   τ = ±(k δ − c q̇_in),  clamped to push only (τ ≥ 0 at the lower bound, ≤ 0 at the upper)
 *
 * with q̇_in the rate further into the limit (a Kelvin–Voigt law without adhesion; k in
 * N·m/rad or N/m, c in N·m·s/rad or N·s/m). Its Jacobians (−k g gᵀ, −c g gᵀ while the
 * law is active and not clamped) enter the Newton matrix as a spring's do, so a stiff limit
 * is stable at ordinary steps.
 *
 * Defaults, from the coordinate's inertia with the joints free, m̃ = 1/(gᵀ M⁻¹ g) in the
 * model pose (a lower bound of the inertia the joints give it): k = m̃ (2π/T)² and
 * c = 2 m̃ (2π/T), T = DEFAULT_PERIOD, a critically damped limit that stops the joint
 * within about T/4 (MuJoCo's soft constraints scale their stiffness by the effective
 * mass the same way). Under a steady effort τ the joint rests δ = τ/k past its bound.
 *
 * The nonsmooth law (Moreau–Jean, impacts with restitution) is the other treatment of the
 * same limit (see the model's `limits`); this file is the compliant one.
 */

import type { ForceEffector } from "../forces/effector";
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { addCoordinateOuter, addGeneralizedEffort, reserveCoordinateBlocks } from "./actuator";
import type { JointCoordinate } from "./joint-coordinate";

/** Period T (s) of the default compliant limit. */
export const DEFAULT_PERIOD = 0.02;

export interface JointLimitOptions {
  id: string;
  lower: number;
  upper: number;
  /** k and c; undefined: the defaults above. */
  stiffness?: number;
  damping?: number;
}

export class CompliantJointLimit implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags = MatrixType.SPD;
  readonly lower: number;
  readonly upper: number;
  readonly stiffness: number;
  readonly damping: number;
  /** The limit's effort of the last applyForces (N·m or N; 0 when inside the range). */
  effort = 0;
  /** Whether the law is active and unclamped (its Jacobians apply). */
  private engaged = false;

  constructor(
    private readonly sys: BodySystem,
    readonly coordinate: JointCoordinate,
    o: JointLimitOptions,
  ) {
    this.id = o.id;
    this.lower = o.lower;
    this.upper = o.upper;
    coordinate.evaluate();
    const m = coordinateInertia(sys, coordinate);
    const w = (2 * Math.PI) / DEFAULT_PERIOD;
    this.stiffness = o.stiffness ?? m * w * w;
    this.damping = o.damping ?? 2 * m * w;
  }

  applyForces(_t: number): void {
    const q = this.coordinate;
    q.evaluate();
    let tau = 0;
    if (q.value < this.lower)
      tau = Math.max(0, this.stiffness * (this.lower - q.value) - this.damping * q.rate);
    else if (q.value > this.upper)
      tau = Math.min(0, this.stiffness * (this.upper - q.value) - this.damping * q.rate);
    this.engaged = tau !== 0;
    this.effort = tau;
    if (tau !== 0) addGeneralizedEffort(this.sys, q, tau);
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    reserveCoordinateBlocks(this.sys, this.coordinate, m);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    if (this.engaged) addCoordinateOuter(this.sys, this.coordinate, m, -s * this.stiffness);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    if (this.engaged) addCoordinateOuter(this.sys, this.coordinate, m, -s * this.damping);
  }

  potentialEnergy(): number {
    return 0;
  }
}

/**
 * 1/(gᵀ M⁻¹ g) over the coordinate's dynamic bodies (kg or kg·m²): the inertia along q
 * with the joints free. Infinity when neither body can move.
 */
export function coordinateInertia(sys: BodySystem, q: JointCoordinate): number {
  let s = 0;
  for (const [b, g] of [
    [q.bodyA, q.jacA],
    [q.bodyB, q.jacB],
  ] as const) {
    if (b < 0 || sys.block[b] < 0) continue;
    s += (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / sys.mass[b];
    if (sys.hasOrientation[b] !== 1) continue;
    const J = sys.inertiaWorldInv;
    const o = 9 * b;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) s += g[3 + i] * J[o + 3 * i + j] * g[3 + j];
  }
  return s > 0 ? 1 / s : Number.POSITIVE_INFINITY;
}
