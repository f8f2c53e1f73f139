/**
 * A joint limit lower ≤ q ≤ upper on a revolute angle (rad) or prismatic offset (m),
 * enforced by a compliant unilateral law (the SMC counterpart of a contact): past a
 * bound by δ > 0 the limit pushes q back with the effort
 *
 *   τ = ±(k δ + c q̇_in min(1, δ/δ_r)),  clamped to push only (τ ≥ 0 at the lower
 *   bound, ≤ 0 at the upper)
 *
 * with q̇_in the rate further into the limit, δ_r = DAMPING_RAMP (a Kelvin–Voigt law without adhesion; k in
 * N·m/rad or N/m, c in N·m·s/rad or N·s/m). Its Jacobians (−k g gᵀ, −c g gᵀ while the
 * law is active and not clamped) enter the Newton matrix as a spring's do, so a stiff limit
 * is stable at ordinary steps.
 *
 * Defaults, from the inertia the joints give the coordinate in the model pose,
 * m̃ = 1/(gᵀ P g) with P = M⁻¹ − M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹G M⁻¹ the inverse mass the model's
 * joints, motors and mimics (rows G) leave, the coordinate itself free
 * (`constrainLimitInertias`; MuJoCo's dof_invweight0, taken at qpos0, likewise): k = m̃ (2π/T)²
 * and c = 2 m̃ (2π/T), T = DEFAULT_PERIOD, a critically damped limit that stops the joint
 * within about T/4 (MuJoCo's soft constraints scale their stiffness by the effective mass
 * the same way). m̃ is a constant, so the law stays a conservative spring and a damper.
 * The inertia with the joints free, 1/(gᵀ M⁻¹ g) (the joint's own two links alone), was the
 * default until 2026-12-06: a joint carrying a chain has far more, and its limit was soft
 * (the imported 7-axis arm's joint2: 0.0057 kg·m² for the 0.557 the joints give it; its
 * servo commanded to 90 rad swung it 0.66 rad past its bound under generalized-alpha at
 * 5 ms, 0.028 rad now, and 0.0154 rad, the critically damped closed form's, at 0.25 ms).
 * Under a steady effort τ the joint rests δ = τ/k past its bound.
 *
 * The nonsmooth law (Moreau–Jean impacts with restitution, limit-problem.ts) is the other
 * treatment of the same limit, used with the velocity-level integrators; this one is used
 * with newmark and generalized-alpha.
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { projectionWorkspace } from "../constraints/project";
import type { ForceEffector } from "../forces/effector";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { type BodySystem, massSolve } from "../model/body-system";
import { checkDeadline } from "../solvers/deadline";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import {
  addCoordinateOuter,
  addGeneralizedEffort,
  coordinateMassNorms,
  reserveCoordinateBlocks,
} from "./actuator";

/**
 * Depth (rad or m) over which the damping term ramps in: c q̇_in min(1, δ/δ_r). Without
 * it the effort would jump by c q̇_in where the limit is reached, and Newton would cycle
 * between the two sides of the jump; with it the law is continuous.
 */
export const DAMPING_RAMP = 1e-4;

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
  /** The bounds (rad or m); a `limits` input moves them (simulation/inputs.ts JointBounds). */
  lower: number;
  upper: number;
  /**
   * m̃ (kg or kg·m²) of the defaults: the coordinate's inertia with the joints free until
   * constrainLimitInertias gives it the joints' (at the simulation's build).
   */
  inertia = 0;
  /** k and c (the model's, else the defaults from `inertia`). */
  stiffness = 0;
  damping = 0;
  /**
   * Whether the model gives the stiffness: a spring, whose energy ½ k δ² past a bound at a
   * start is the model's to release. The default stiffness stands for a rigid bound (its
   * regularization), which a start past it only moves back onto (Simulation.ontoBounds).
   */
  readonly spring: boolean;
  /** The limit's effort of the last applyForces (N·m or N; 0 when inside the range). */
  effort = 0;
  /**
   * False while the limit is treated as a nonsmooth constraint (velocity-level
   * integrators, limit-problem.ts): the compliant law then adds nothing.
   */
  enabled = true;
  /** −∂τ/∂q and −∂τ/∂q̇ of the last applyForces (0 when the law is inactive or clamped). */
  private jacobianStiffness = 0;
  private jacobianDamping = 0;
  /** σ and δ of the last evaluation of the law (see `law`). */
  private side = 0;
  private depth = 0;

  constructor(
    private readonly sys: BodySystem,
    readonly coordinate: JointCoordinate,
    private readonly o: JointLimitOptions,
  ) {
    this.id = o.id;
    this.lower = o.lower;
    this.upper = o.upper;
    this.spring = o.stiffness !== undefined;
    coordinate.evaluate();
    this.setInertia(coordinateInertia(sys, coordinate));
  }

  /** m̃ ← m, and the defaults k = m (2π/T)², c = 2 m (2π/T) where the model gives none. */
  setInertia(m: number): void {
    const w = (2 * Math.PI) / DEFAULT_PERIOD;
    this.inertia = m;
    this.stiffness = this.o.stiffness ?? m * w * w;
    this.damping = this.o.damping ?? 2 * m * w;
  }

  applyForces(_t: number): void {
    this.jacobianStiffness = 0;
    this.jacobianDamping = 0;
    if (!this.enabled) return;
    const q = this.coordinate;
    const tau = this.law();
    if (tau !== 0) {
      const ramp = Math.min(1, this.depth / DAMPING_RAMP);
      const rateIn = -this.side * q.rate;
      // ∂push/∂δ = k + c q̇_in/δ_r on the ramp; kept ≥ 0 so −∂f stays semidefinite
      this.jacobianStiffness = Math.max(
        0,
        this.stiffness + (ramp < 1 ? (this.damping * rateIn) / DAMPING_RAMP : 0),
      );
      this.jacobianDamping = this.damping * ramp;
    }
    this.effort = tau;
    q.limitEffort = tau;
    if (tau !== 0) addGeneralizedEffort(this.sys, q, tau);
  }

  /**
   * The effort τ at the current state (the header's law), with `side` σ (+1 past the lower
   * bound, −1 past the upper, 0 inside) and `depth` δ set.
   */
  private law(): number {
    const q = this.coordinate;
    // the angle first; its rate and Jacobian only past a bound (a limit is mostly inside)
    q.evaluateValue();
    const sigma = q.value < this.lower ? 1 : q.value > this.upper ? -1 : 0;
    this.side = sigma;
    this.depth = sigma > 0 ? this.lower - q.value : sigma < 0 ? q.value - this.upper : 0;
    if (sigma === 0) return 0;
    q.evaluate();
    const push = this.push(sigma, q.value, q.rate);
    return push > 0 ? sigma * push : 0;
  }

  /**
   * The push k δ + c q̇_in min(1, δ/δ_r) of bound σ (+1 lower, −1 upper) at the coordinate's
   * value q and rate q̇, before the clamp, δ = σ (bound − q) the signed depth (negative
   * inside the range, where it is k δ: the law's switch function, positive where the bound
   * pushes; limit-switch.ts locates its zeros within a step).
   */
  push(sigma: number, value: number, rate: number): number {
    const depth = sigma > 0 ? this.lower - value : value - this.upper;
    const ramp = Math.min(1, Math.max(0, depth) / DAMPING_RAMP);
    return this.stiffness * depth + this.damping * ramp * -sigma * rate;
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    reserveCoordinateBlocks(this.sys, this.coordinate, m);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    if (this.jacobianStiffness > 0)
      addCoordinateOuter(this.sys, this.coordinate, m, -s * this.jacobianStiffness);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    if (this.jacobianDamping > 0)
      addCoordinateOuter(this.sys, this.coordinate, m, -s * this.jacobianDamping);
  }

  /** ½ k δ² past a bound (the law's elastic part), 0 inside the range or when disabled. */
  potentialEnergy(): number {
    if (!this.enabled) return 0;
    this.law();
    return 0.5 * this.stiffness * this.depth * this.depth;
  }

  /**
   * The effort less its elastic part, τ − σ k δ, along the coordinate: power
   * −q̇ (τ − σ k δ) = −τ q̇ − d(½ k δ²)/dt (W), the damping's c q̇² min(1, δ/δ_r) while the
   * law pushes, and the elastic energy let go without work where it is clamped (a joint
   * leaving faster than the spring relaxes), so that the effort's work is the potential's
   * change less this.
   */
  applyDissipativeForces(_t: number): void {
    const d = this.dissipativeEffort();
    if (d !== 0) addGeneralizedEffort(this.sys, this.coordinate, d);
  }

  /**
   * τ − σ k δ at the current state (N·m or N, along the coordinate; 0 inside the range or
   * when disabled): the effort of applyDissipativeForces, whose power is −q̇ (τ − σ k δ).
   */
  dissipativeEffort(): number {
    if (!this.enabled) return 0;
    const tau = this.law();
    return this.side === 0 ? 0 : tau - this.side * this.stiffness * this.depth;
  }
}

/**
 * gᵀ P g at most this fraction of gᵀ M⁻¹ g is round-off (P g = M⁻¹g + du cancels to
 * ~1e-16 of M⁻¹g): the constraints hold the coordinate (a motor on its joint, a loop
 * locked in the model pose) and give it no finite inertia; its limit keeps the inertia
 * with the joints free.
 */
const HELD = 1e-9;

/**
 * Gives each limit m̃ = 1/(gᵀ P g) (setInertia), the inertia the constraints of `set` (all
 * the model's: joints, motors, mimics; a limit's own joint leaves its coordinate free)
 * give its coordinate at the bodies' current configuration, the model pose at the build:
 * P g = M⁻¹g − M⁻¹Gᵀ S⁻¹ G M⁻¹g, S = G M⁻¹ Gᵀ factored once by the projections'
 * semidefinite LDLᵀ (constraints/project.ts: sparse, redundant rows of closed loops
 * dropped, which leaves the same P), then one solve per limit. A limit whose coordinate
 * the constraints hold (HELD) keeps the inertia with the joints free.
 */
export function constrainLimitInertias(
  limits: readonly CompliantJointLimit[],
  set: ConstraintSet,
): void {
  if (limits.length === 0 || set.numRows === 0) return;
  const sys = set.sys;
  const g = new Float64Array(sys.numDofs);
  const v = new Float64Array(sys.numDofs);
  const du = new Float64Array(sys.numDofs);
  const r = new Float64Array(set.numRows);
  const ws = projectionWorkspace(set);
  ws.factorAt(0);
  for (const l of limits) {
    // O(dofs) a limit, O(limits · dofs) in all: a 9 000-link chain with limits held its
    // worker for minutes at the build (the server's build deadline, solvers/deadline.ts,
    // is checked here so that it ends the build with a timeout instead)
    checkDeadline();
    const q = l.coordinate;
    q.evaluate();
    g.fill(0);
    q.spread(1, g);
    massSolve(sys, g, v);
    const free = q.along(v);
    set.multiply(v, r);
    ws.correction(r, du);
    const joined = free + q.along(du);
    if (joined > HELD * free) l.setInertia(1 / joined);
  }
}

/**
 * 1/(gᵀ M⁻¹ g) over the coordinate's dynamic bodies (kg or kg·m²): the inertia along q
 * with the joints free (the sum of the squares of coordinateMassNorms), a lower bound of
 * constrainLimitInertias'. Infinity when neither body can move.
 */
export function coordinateInertia(sys: BodySystem, q: JointCoordinate): number {
  const u = new Float64Array(4);
  coordinateMassNorms(sys, q, u);
  const s = u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3];
  return s > 0 ? 1 / s : Number.POSITIVE_INFINITY;
}
