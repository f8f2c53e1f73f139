/**
 * Projections onto the constraint manifold in the mass (kinetic-energy) metric, shared by
 * the assembly analysis (position and velocity levels) and by the integrators (post-step
 * drift correction):
 *
 *   positions  Newton–Raphson on C(q, t) = 0 where each update is the smallest in the
 *              mass metric that cancels C to first order,
 *                 δq = −M⁻¹Gᵀ λ,  S λ = C,  S = G M⁻¹ Gᵀ,     q ← q ⊕ δq
 *              (the position level of Chrono's ChAssemblyAnalysis, whose
 *              StateSolveCorrection solves [M Gᵀ; G 0][δq; λ] = [0; −C]), with G
 *              re-evaluated at every iterate (full Newton, quadratic convergence). Stops
 *              (converged) when ‖C‖∞ ≤ residualTolerance or when
 *              ‖δq‖∞ ≤ absTolerance + relTolerance·‖X‖∞ (X: positions and quaternions of
 *              the dynamic bodies, as Chrono's state norm), or after maxIterations
 *              updates (not converged); an update that small with ‖C‖∞ still above both
 *              tolerances stops not converged (rows that conflict at a singular
 *              configuration, which the factorization drops).
 *   velocities v ← v − M⁻¹Gᵀ S⁻¹ (G v + Ct): the velocity closest to the given one in the
 *              kinetic-energy metric that satisfies G v = −Ct.
 *
 * S is factored by the semidefinite LDLᵀ (semidefinite-ldlt.ts), so redundant rows and
 * singular configurations give finite updates (dependent rows get zero multipliers; for
 * consistent equations the result is the same as with the redundant rows removed).
 * Work arrays live in a workspace cached per ConstraintSet: after the first call neither
 * function allocates.
 */

import { grow } from "../math/grow";
import {
  addPositionIncrement,
  type BodySystem,
  getVelocity,
  massSolve,
  setVelocity,
} from "../model/body-system";
import { SemidefiniteLdlt } from "../solvers/linear/semidefinite-ldlt";
import type { ConstraintSet } from "./constraint-set";
import type { JointCoordinate } from "./joint-coordinate";
import { MassSchurComplement } from "./schur";

export interface PositionProjectionOptions {
  maxIterations: number;
  relTolerance: number;
  absTolerance: number;
  residualTolerance: number;
  /**
   * Revolute angle coordinates to carry through the updates (the assembly analysis): each
   * update guides them by g·δq from the iterate before (JointCoordinate.guideFrom) and
   * takes that as their branch (track), so a joint an update turns past ±π (a mimic's
   * follower sent from 0 to 3.4 rad in one update) reads its unwrapped angle. The steppers
   * guide their own (AccelerationStepper).
   */
  angles?: readonly JointCoordinate[];
  /**
   * Chord (simplified Newton) iterations: keep the factorization of S while each update
   * cuts ‖C‖∞ twentyfold (they contract at a rate of the order of how far the bodies
   * moved since the factorization, |δq|/lever arm: ~1e-4 after a µm post-step drift,
   * ~0.05 after the mm drift of a whipping chain's step), refactor at the current
   * iterate when one does not. Default false (full
   * Newton, G and S at every iterate, as the assembly analysis wants).
   */
  chord?: boolean;
}

/** A chord iteration (positions or velocities) must cut the residual at least twentyfold. */
const CHORD_CONTRACTION = 0.05;

export interface PositionProjectionResult {
  /** Newton updates applied. */
  iterations: number;
  /** ‖C‖∞ at the final configuration (m / rad). */
  residualNorm: number;
  /** ‖δq‖∞ of the last update (0 when none was needed). */
  updateNorm: number;
  converged: boolean;
  /** Numerical rank of G at the last factorization (numRows when no update was made). */
  rank: number;
}

/**
 * minimumNorm looks for null vectors at the rows whose pivot d_k/s_kk (sin² of the angle
 * between row k and the earlier rows, in the mass metric) is at most this, and takes a
 * kept one's combination as a near self-stress (its force at most √NEAR_NULL = 1e-3 of
 * the row's own).
 */
const NEAR_NULL = 1e-6;

/** Per-set work arrays and factorization (created on first use). */
export class ProjectionWorkspace {
  readonly schur: MassSchurComplement;
  readonly ldlt = new SemidefiniteLdlt();
  readonly c: Float64Array;
  readonly lambda: Float64Array;
  readonly du: Float64Array;
  readonly tmp: Float64Array;
  readonly u: Float64Array;
  /** G's values at the last `factorAt` (the corrections' directions, see `correction`). */
  readonly factoredG: Float64Array;
  /**
   * The factorizations so far (factorCurrent's, factorAt's included): a user that factored
   * the shared workspace knows the factor is still its own while this has not moved
   * (impact-events.ts jointsFactoredAt).
   */
  factorings = 0;
  /** minimumNorm's orthonormal null-space basis (p × numRows, by column) and a column. */
  private nullBasis = new Float64Array(0);
  private column = new Float64Array(0);

  constructor(
    readonly set: ConstraintSet,
    sys: BodySystem,
  ) {
    this.schur = new MassSchurComplement(set, sys);
    this.c = new Float64Array(set.numRows);
    this.lambda = new Float64Array(set.numRows);
    this.du = new Float64Array(sys.numDofs);
    this.tmp = new Float64Array(sys.numDofs);
    this.u = new Float64Array(sys.numDofs);
    this.factoredG = new Float64Array(set.G.values.length);
  }

  /** G ← Cq(q, t), S ← G M⁻¹ Gᵀ, factor S; keeps G's values as factoredG. */
  factorAt(t: number): void {
    this.set.updateJacobian(t);
    this.factorCurrent();
  }

  /**
   * S ← G M⁻¹ Gᵀ from G's current values (set.updateJacobian done by the caller), factor
   * S; keeps G's values as factoredG. The constrained Newton step's mass path factors
   * here too (constrained-solve.ts), so a projection after it can start from its
   * factorization.
   */
  factorCurrent(): void {
    this.factorings++;
    this.factoredG.set(this.set.G.values);
    const { ldlt, schur } = this;
    schur.updateInto(ldlt.beginLoad(schur.S), ldlt.loadSlots(schur.S));
    ldlt.factorLoaded();
  }

  /**
   * λ ← λ − N (NᵀN)⁻¹ Nᵀ λ = λ − Q Qᵀ λ: the smallest (Euclidean) multipliers of the same joint
   * forces G_fᵀλ, for a λ from `ldlt.solve` (the reactions a state reports; the bodies'
   * forces are those of the step). N's columns span null(G_fᵀ), the loops' self-stresses,
   * as the factorization shows them:
   *  - a dropped row k: n_k = e_k − S_f⁺ S_f e_k (S_f e_k = G_f M⁻¹ G_f,kᵀ, S_f⁺ the solve,
   *    zero on the dropped rows), 1 at k, 0 at the other dropped rows; G_fᵀ n_k = 0 since
   *    row k is the combination S_f⁺ S_f e_k of the kept rows;
   *  - a kept row k whose pivot is round-off along a null vector: u = L⁻ᵀ e_k (1 at k, 0
   *    after it) has |Aᵀu|² = d_k (A = G_f M^{-1/2}), and it is one when d_k ≤ ε s_kk |u|²
   *    (ε the factorization's pivot tolerance: the dropped rows' test, for the unit vector
   *    u/|u|). A dependent row whose own share of the self-stress c is small has a pivot
   *    of round-off over c², above the drop test, and the solve then amplified the
   *    state's errors along that self-stress by 1/d_k; only rows with d_k ≤ NEAR_NULL
   *    s_kk are looked at (c ≳ 1e-5).
   * Solving with a dependent row's multiplier 0 picks one member of the family λ + N y,
   * the one whose dependent row carries nothing, singular where that row's share c of the
   * self-stress vanishes: a planar parallelogram of three equal cranks has the self-stress
   * (1, −2, 1) along the cranks, its dependent row a vertical one (c ∝ sin θ), and every
   * crank carried ±1/sin θ of it (median 25 N against 10.5 N, 68.6 kN at most over 60 s;
   * test/engine/integrators/long-run/parallelogram-reactions.test.ts); the smallest is the
   * equal share.
   *
   * velocityPart (Q_c of the consistent multipliers' S λ = Q_c − G M⁻¹ f, or null) also
   * drops the shares of NEAR self-stresses that the velocity term alone asks. Near a
   * singular configuration a combination of rows carries almost no force (singular value
   * σ ≪ the rows'): flat, the same linkage's cranks' difference (1, 0, −1) turns the
   * coupler only by sin θ. Its multiplier is its share of the right-hand side over σ²,
   * and the velocity term's share is the state's velocity along the near motion (which
   * G v = −Ct fixes only to the projection's 1e-9 m/s over σ) times the velocities:
   * 9.3 kN at sin θ = 3.6e-5 where the loads' share was 4e-5 N (moreau-jean, h = 1 ms;
   * reported 4.6 kN off Newton–Euler's 14 N, and over 60 s up to 476 N with
   * generalized-alpha, 55 N backward-euler, 26 N newmark). A share the loads ask is kept:
   * a toggle held 1e-4 rad short of straight carries m g / (2 sin φ) along its links,
   * which it reports. Such a kept row k with d_k ≤ NEAR_NULL s_kk gives a column from u
   * after one step of inverse iteration, S_f⁺ u (u mixes in the other directions by up to
   * √NEAR_NULL of their force, which S_f⁺ shrinks by σ²/σ_j²), kept if it still carries at
   * most √NEAR_NULL of row k's force once orthonormal to the columns before it; its share
   * qᵀλ is dropped when the velocity term's, qᵀ S_f⁺ Q_c, is more than half of it.
   * Nothing is done when no row is near dependent; otherwise a solve with S_f or a back
   * substitution per such row (and a solve per near one), a Gram–Schmidt of the p vectors
   * found (buffers grow, nothing is allocated per call).
   */
  minimumNorm(lambda: Float64Array, velocityPart: Float64Array | null = null): void {
    const { ldlt, set } = this;
    const m = set.numRows;
    let candidates = 0;
    for (let k = 0; k < m; k++) if (ldlt.relativePivot(k) <= NEAR_NULL) candidates++;
    if (candidates === 0) return;
    this.nullBasis = grow(this.nullBasis, candidates * m);
    this.column = grow(this.column, m);
    const N = this.nullBasis;
    // the self-stresses first, then the near ones orthogonal to them (Gram–Schmidt's order)
    let p = 0;
    for (let k = 0; k < m; k++) if (this.nullColumn(k, p, true)) p++;
    const exact = p;
    if (velocityPart !== null) for (let k = 0; k < m; k++) if (this.nullColumn(k, p, false)) p++;
    // the multipliers the velocity term asks alone, S_f⁺ Q_c
    const byVelocity = this.column;
    if (p > exact && velocityPart !== null) ldlt.solve(velocityPart, byVelocity);
    // λ − Q Qᵀ λ, Q's columns orthonormal; a near one's share only where the velocity term
    // asks for most of it
    for (let a = 0; a < p; a++) {
      const q = N.subarray(a * m, (a + 1) * m);
      let s = 0;
      for (let r = 0; r < m; r++) s += q[r] * lambda[r];
      if (a >= exact) {
        let sv = 0;
        for (let r = 0; r < m; r++) sv += q[r] * byVelocity[r];
        if (!(Math.abs(sv) > 0.5 * Math.abs(s))) continue;
      }
      for (let r = 0; r < m; r++) lambda[r] -= s * q[r];
    }
  }

  /**
   * minimumNorm's column p: the vector of row k (`exact`: a dropped row's n_k, or a kept
   * row's u = L⁻ᵀ e_k that is null to the drop test, d_k ≤ ε s_kk |u|²; else S_f⁺ u for a
   * kept row with d_k ≤ NEAR_NULL s_kk whose u is not), orthonormalized against the
   * columns before it (modified Gram–Schmidt). Whether it was written (false: row k is not
   * of that kind, its vector was, to round-off, a combination of the columns before it,
   * or a near one's remainder carries more than √NEAR_NULL of row k's force).
   */
  private nullColumn(k: number, p: number, exact: boolean): boolean {
    const { ldlt, set, tmp, du } = this;
    const m = set.numRows;
    const pivot = ldlt.relativePivot(k);
    if (pivot > NEAR_NULL) return false;
    const col = this.column;
    const N = this.nullBasis;
    col.fill(0);
    col[k] = 1;
    if (ldlt.dropped[k] === 0) {
      ldlt.solveUpper(col);
      let uu = 0;
      for (let r = 0; r < m; r++) uu += col[r] * col[r];
      if (pivot <= ldlt.pivotTolerance * uu !== exact) return false;
      // one step of inverse iteration towards the near null vector: u mixes in the other
      // directions by up to √NEAR_NULL of their force, which S_f⁺ shrinks by σ²/σ_j²
      if (!exact) ldlt.solve(col, col);
    } else {
      if (!exact) return false;
      set.multiplyTranspose(col, tmp, this.factoredG);
      massSolve(set.sys, tmp, du);
      set.multiply(du, col, this.factoredG);
      ldlt.solve(col, col);
      for (let r = 0; r < m; r++) col[r] = -col[r];
      col[k] = 1;
    }
    let before = 0;
    for (let r = 0; r < m; r++) before += col[r] * col[r];
    for (let a = 0; a < p; a++) {
      let s = 0;
      for (let r = 0; r < m; r++) s += N[a * m + r] * col[r];
      for (let r = 0; r < m; r++) col[r] -= s * N[a * m + r];
    }
    let after = 0;
    for (let r = 0; r < m; r++) after += col[r] * col[r];
    if (after <= 1e-20 * before) return false;
    const unit = 1 / Math.sqrt(after);
    const q = N.subarray(p * m, (p + 1) * m);
    for (let r = 0; r < m; r++) q[r] = unit * col[r];
    if (exact) return true;
    // still near null once orthogonal to the columns before it (the part of a u nearly
    // parallel to an earlier one is their difference, normalized, and can carry force):
    // |Aᵀq|² ≤ NEAR_NULL s_kk, s_kk = |Aᵀe_k|²
    col.fill(0);
    col[k] = 1;
    return this.forceNorm(q) ** 2 <= NEAR_NULL * this.forceNorm(col) ** 2;
  }

  /** |Aᵀx| = √(xᵀ G_f M⁻¹ G_fᵀ x): the size of the joint forces of multipliers x. */
  private forceNorm(x: Float64Array): number {
    const { set, tmp, du } = this;
    set.multiplyTranspose(x, tmp, this.factoredG);
    massSolve(set.sys, tmp, du);
    let s = 0;
    for (let i = 0; i < tmp.length; i++) s += tmp[i] * du[i];
    return Math.sqrt(s);
  }

  /**
   * du ← −M⁻¹G_fᵀ S_f⁻¹ r with G_f and S_f those of the last `factorAt` (the smallest
   * mass-weighted du with G_f du = −r on the kept rows). r is overwritten by S_f⁻¹ r.
   *
   * Chord iterations evaluate r at the current configuration and correct along the
   * factorization's own G_f: the residual then changes by −G M⁻¹ G_fᵀ S_f⁻¹ r, off r by
   * (G_f − G) M⁻¹ G_fᵀ S_f⁻¹ r = (G_f − G) du: the drift of G times the correction.
   * Along the current G the error would be (S_f − S) S_f⁻¹ r instead, and S_f⁻¹
   * amplifies by up to κ(S) (~1e4 on a 100-link chain): a µm move already makes that
   * diverge, while (G_f − G) du, not amplified, stays a small fraction of r.
   * The converged velocity projection is then oblique, along M⁻¹G_fᵀ: it meets G v = −Ct
   * at the current positions and is first order in G_f − G away from the
   * mass-orthogonal one.
   */
  correction(r: Float64Array, du: Float64Array): void {
    this.ldlt.solve(r, r);
    this.set.multiplyTranspose(r, this.tmp, this.factoredG);
    massSolve(this.set.sys, this.tmp, du);
    for (let i = 0; i < du.length; i++) du[i] = -du[i];
  }
}

const workspaces = new WeakMap<ConstraintSet, ProjectionWorkspace>();

/** The cached workspace of a set (created on first use). */
export function projectionWorkspace(set: ConstraintSet): ProjectionWorkspace {
  let ws = workspaces.get(set);
  if (!ws) {
    ws = new ProjectionWorkspace(set, set.sys);
    workspaces.set(set, ws);
  }
  return ws;
}

/**
 * Velocity projection tolerance, relative to 1 + ‖G v + Ct‖∞ before it (m/s, rad/s): a
 * residual below it is left as it is. A residual ε drifts the joints by h ε during the
 * next step (4e-12 m for ε = 1e-9 m/s at h = 1/240 s), which that step's own projection
 * removes with the drift of the step itself (~1e-6 m on the benchmark chain).
 */
const VELOCITY_TOLERANCE = 1e-9;

function infNorm(x: Float64Array, n = x.length): number {
  let m = 0;
  for (let i = 0; i < n; i++) {
    const a = Math.abs(x[i]);
    if (a > m || Number.isNaN(a)) m = a;
  }
  return m;
}

/** ‖X‖∞ over the positions and quaternions of the dynamic bodies. */
function stateNorm(sys: BodySystem): number {
  let m = 0;
  for (let b = 0; b < sys.numBodies; b++) {
    if (sys.dofOffset[b] < 0) continue;
    for (let i = 0; i < 3; i++) m = Math.max(m, Math.abs(sys.pos[3 * b + i]));
    if (sys.hasOrientation[b])
      for (let i = 0; i < 4; i++) m = Math.max(m, Math.abs(sys.quat[4 * b + i]));
  }
  return m;
}

/** ‖C(q, t)‖∞ at the current configuration (m / rad). */
export function constraintResidualNorm(set: ConstraintSet, t: number): number {
  if (set.numRows === 0) return 0;
  const { c } = projectionWorkspace(set);
  set.residual(t, c);
  return infNorm(c);
}

/**
 * Newton–Raphson projection of the positions onto C(q, t) = 0 in the mass metric (see the
 * header). Moves the bodies of `sys` in place (positions and orientations; velocities are
 * untouched). The result is written to `result` when given (a stepper's own, so that a
 * step allocates nothing), else to a new object.
 *
 * reuseFactorization: the set's workspace already holds G and the factorization of S at
 * the current configuration (a velocity projection just made there), so the first update
 * uses them instead of factoring again.
 */
export function projectPositions(
  sys: BodySystem,
  set: ConstraintSet,
  t: number,
  options: PositionProjectionOptions,
  result: PositionProjectionResult = {
    iterations: 0,
    residualNorm: 0,
    updateNorm: 0,
    converged: true,
    rank: 0,
  },
  reuseFactorization = false,
): PositionProjectionResult {
  result.iterations = 0;
  result.residualNorm = 0;
  result.updateNorm = 0;
  result.converged = true;
  result.rank = set.numRows;
  if (set.numRows === 0) return result;
  const ws = projectionWorkspace(set);
  const { c, du } = ws;
  set.residual(t, c);
  let residualNorm = infNorm(c);
  let converged = false;
  let factored = reuseFactorization;
  if (factored) result.rank = ws.ldlt.rank;
  for (;;) {
    if (residualNorm <= options.residualTolerance) {
      converged = true;
      break;
    }
    if (result.iterations >= options.maxIterations || !Number.isFinite(residualNorm)) break;
    if (!factored || !options.chord) {
      ws.factorAt(t);
      factored = true;
      result.rank = ws.ldlt.rank;
    }
    ws.correction(c, du);
    const angles = options.angles;
    if (angles !== undefined) for (const q of angles) q.holdStart();
    addPositionIncrement(sys, du, 1);
    if (angles !== undefined)
      for (const q of angles) {
        q.guideFrom(du);
        q.track();
      }
    result.iterations++;
    result.updateNorm = infNorm(du);
    set.residual(t, c);
    const previous = residualNorm;
    residualNorm = infNorm(c);
    // (‖X‖∞ only when it counts: the steppers' projection has relTolerance 0)
    const relative = options.relTolerance > 0 ? options.relTolerance * stateNorm(sys) : 0;
    const small = options.absTolerance + relative;
    if (result.updateNorm <= small) {
      // a vanishing update is convergence only with a residual as small: where rows conflict
      // at a singular configuration (two hinges off one axis; a particle between two links
      // pulled straight along one line) the semidefinite factorization drops a row and the
      // update vanishes with ‖C‖∞ far from zero
      converged = residualNorm <= Math.max(options.residualTolerance, small);
      break;
    }
    if (!(residualNorm <= CHORD_CONTRACTION * previous)) factored = false;
  }
  result.residualNorm = residualNorm;
  result.converged = converged;
  return result;
}

export interface VelocityProjectionResult {
  /** ‖G v + Ct‖∞ after the projection (m/s / rad/s). */
  residualNorm: number;
  /** Numerical rank of G. */
  rank: number;
}

/**
 * Where a velocity projection takes its factorization of S (projectVelocities):
 * - "factor": factored at the current positions: the exact mass-metric projection.
 * - "factored-configuration": the velocities made tangent at the configuration of the
 *   set's last factorization instead (G_f v = −Ct, G_f its G), with that factorization:
 *   where a step or a position projection linearized last, when the positions are
 *   within the joint tolerance of it (integrators/joint-projection.ts).
 */
export type VelocityProjectionStart = "factor" | "factored-configuration";

/**
 * Velocity projection v ← v − M⁻¹Gᵀ S⁻¹ (G v + Ct) (see the header), in place on the
 * body velocities of `sys`, at the current positions (`start` "factor"), or
 * v ← v − M⁻¹G_fᵀ S_f⁻¹ (G_f v + Ct) at the configuration of the last factorization
 * ("factored-configuration": residual and correction on the same G_f). Either is one
 * exact correction, made when ‖G v + Ct‖∞ exceeds 1e-9 (1 + its value) or
 * absoluteTolerance (m/s, rad/s), whichever is larger: a stepper holding the joints to
 * a drift τ needs only τ/(10 h), which moves them by τ/10 over its next step
 * (integrators/joint-projection.ts). A negative absoluteTolerance corrects any residual:
 * a Newton iterate's end velocities (AccelerationStepper.applyUnknown), whose residual map
 * must not switch between iterates. The result is written to `result` when given, else
 * to a new object; its residualNorm is the residual after the correction, or NaN when
 * `measureAfter` is false and a correction was made: the steppers do not read it and
 * skip that second product G v (one of the 2–3 a step of a tuned 100-link chain).
 * `impulse`, when given, receives the joints' impulse μ of the correction (N s, N m s;
 * M Δv = G_fᵀ μ, μ = −S_f⁻¹ (G_f v + Ct); 0 without a correction).
 */
export function projectVelocities(
  sys: BodySystem,
  set: ConstraintSet,
  t: number,
  start: VelocityProjectionStart = "factor",
  result: VelocityProjectionResult = { residualNorm: 0, rank: 0 },
  absoluteTolerance = 0,
  measureAfter = true,
  impulse: Float64Array | null = null,
): VelocityProjectionResult {
  result.residualNorm = 0;
  result.rank = 0;
  impulse?.fill(0);
  if (set.numRows === 0) return result;
  const ws = projectionWorkspace(set);
  const { c, du, u } = ws;
  const ct = ws.lambda;
  if (start === "factor") ws.factorAt(t);
  const values = ws.factoredG;
  getVelocity(sys, u);
  set.velocityTerm(t, ct);
  velocityResidual(set, u, ct, c, values);
  let norm = infNorm(c);
  if (
    absoluteTolerance < 0
      ? norm > 0
      : norm > Math.max(VELOCITY_TOLERANCE * (1 + norm), absoluteTolerance)
  ) {
    ws.correction(c, du);
    // (c ← S_f⁻¹ r: du = −M⁻¹ G_fᵀ c)
    if (impulse !== null) for (let i = 0; i < c.length; i++) impulse[i] = -c[i];
    addTo(u, du);
    if (measureAfter) {
      velocityResidual(set, u, ct, c, values);
      norm = infNorm(c);
    } else norm = Number.NaN;
    setVelocity(sys, u);
  }
  result.residualNorm = norm;
  result.rank = ws.ldlt.rank;
  return result;
}

/**
 * u += du. Its own function: inlined in projectVelocities, V8 (Node 20) compiled
 * the element accesses generically and boxed every double, garbage at every step
 * (bench/README.md, "Velocity projection").
 */
function addTo(u: Float64Array, du: Float64Array): void {
  for (let i = 0; i < u.length; i++) u[i] += du[i];
}

/** c = G u + Ct (ct holds Ct; G's values `values`). */
function velocityResidual(
  set: ConstraintSet,
  u: Float64Array,
  ct: Float64Array,
  c: Float64Array,
  values: Float64Array,
): void {
  set.multiply(u, c, values);
  for (let i = 0; i < c.length; i++) c[i] += ct[i];
}
