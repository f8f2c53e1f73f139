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

import { type ConstraintSet, ROW_ENTRIES } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { projectionWorkspace } from "../constraints/project";
import type { ForceEffector } from "../forces/effector";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { grow } from "../math/grow";
import { BodyKind, type BodySystem, massSolveBody } from "../model/body-system";
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
 *     gᵀ P g = gᵀ M⁻¹ g − wᵀ S⁺ w,   w = G M⁻¹ g,   S = G M⁻¹ Gᵀ
 * with S factored once by the projections' semidefinite LDLᵀ (constraints/project.ts:
 * sparse, redundant rows of closed loops dropped, which leaves the same P; S⁺ = L⁻ᵀ D⁺ L⁻¹
 * the matrix its solve applies). M⁻¹ is block diagonal, so M⁻¹ g lies on the coordinate's
 * two bodies and w on the rows R touching them: S⁺ is needed on R × R only, which the
 * factorization's selected inverse gives (SemidefiniteLdlt.selectedInverse, one pass in
 * about the factorization's cost; its inverseEntries reaches the pairs of R off L's
 * structure, a row of the parent's joint and one of the child's, by a step or two of
 * the same recurrence). O(dofs) in all where one solve per limit made it O(limits · dofs):
 * a 2 000-link chain with limits built in 7.8 s, a 9 000-link one in 200 s, past the
 * server's build deadline. The per-limit solve stays for a coordinate whose rows need more
 * of the recurrence than inverseEntries' `budget` blocks (none on a chain or a tree). A
 * limit whose coordinate the constraints hold (HELD) keeps the inertia with the joints free.
 */
export function constrainLimitInertias(
  limits: readonly CompliantJointLimit[],
  set: ConstraintSet,
  budget = 64,
): void {
  if (limits.length === 0 || set.numRows === 0) return;
  const sys = set.sys;
  const ws = projectionWorkspace(set);
  ws.factorAt(0);
  ws.ldlt.selectedInverse();
  const { rowBody, rowSlot, rowDof, rowWidth } = set;
  const G = set.G.values;
  // the entries e (of rowBody, row ⌊e / ROW_ENTRIES⌋) of each body, in row order
  const start = new Int32Array(sys.numBodies + 1);
  for (let e = 0; e < rowBody.length; e++) if (rowBody[e] >= 0) start[rowBody[e] + 1]++;
  for (let b = 0; b < sys.numBodies; b++) start[b + 1] += start[b];
  const entries = new Int32Array(start[sys.numBodies]);
  const next = start.slice(0, sys.numBodies);
  for (let e = 0; e < rowBody.length; e++) if (rowBody[e] >= 0) entries[next[rowBody[e]]++] = e;
  const g = new Float64Array(sys.numDofs);
  const v = new Float64Array(sys.numDofs);
  // R's rows and their place in it (−1: not in R), w on R, S⁺ on R × R
  const place = new Int32Array(set.numRows).fill(-1);
  let rows = new Int32Array(0);
  let w = new Float64Array(0);
  let z = new Float64Array(0);
  for (const l of limits) {
    // (the server's build deadline, solvers/deadline.ts, ends a long build with a timeout)
    checkDeadline();
    const q = l.coordinate;
    q.evaluate();
    const ends = [q.bodyA, q.bodyB].filter((b) => b >= 0 && sys.dofOffset[b] >= 0);
    q.spread(1, g);
    for (const b of ends) massSolveBody(sys, sys.inertiaWorldInv, b, g, v);
    const free = q.along(v);
    let count = 0;
    for (const b of ends) count += start[b + 1] - start[b];
    rows = grow(rows, count);
    count = 0;
    for (const b of ends)
      for (let p = start[b]; p < start[b + 1]; p++) {
        const r = Math.floor(entries[p] / ROW_ENTRIES);
        if (place[r] < 0) {
          place[r] = 0;
          rows[count++] = r;
        }
      }
    rows.subarray(0, count).sort();
    w = grow(w, count);
    w.fill(0, 0, count);
    for (let i = 0; i < count; i++) place[rows[i]] = i;
    for (const b of ends)
      for (let p = start[b]; p < start[b + 1]; p++) {
        const e = entries[p];
        const s = rowSlot[e];
        const d = rowDof[e];
        let acc = 0;
        for (let c = 0; c < rowWidth[e]; c++) acc += G[s + c] * v[d + c];
        w[place[Math.floor(e / ROW_ENTRIES)]] += acc;
      }
    z = grow(z, count * count);
    let joined: number;
    if (ws.ldlt.inverseEntries(rows, count, z, budget)) {
      let wzw = 0;
      for (let i = 0; i < count; i++) {
        let s = 0;
        for (let j = 0; j < count; j++) s += z[i * count + j] * w[j];
        wzw += w[i] * s;
      }
      joined = free - wzw;
    } else joined = free + solvedCorrection(set, q, v);
    for (let i = 0; i < count; i++) place[rows[i]] = -1;
    for (const b of ends) {
      const d = sys.dofOffset[b];
      const width = sys.kind[b] === BodyKind.RIGID ? 6 : 3;
      g.fill(0, d, d + width);
      v.fill(0, d, d + width);
    }
    if (joined > HELD * free) l.setInertia(1 / joined);
  }
}

/**
 * gᵀ du, du = −M⁻¹Gᵀ S⁺ G v for v = M⁻¹ g (zero off the coordinate's bodies): the
 * constraints' share −wᵀ S⁺ w by a full solve, O(dofs) (constrainLimitInertias' fallback).
 */
function solvedCorrection(set: ConstraintSet, q: JointCoordinate, v: Float64Array): number {
  const ws = projectionWorkspace(set);
  const r = ws.c;
  set.multiply(v, r);
  ws.correction(r, ws.du);
  return q.along(ws.du);
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
