/**
 * The one step every integrator here shares, in acceleration form.
 *
 * Each scheme advances with an unknown generalized acceleration a (size numDofs) through
 *   x_{t+h} = x_t ⊕ (Δx_pred + c_x a),     v_{t+h} = v_pred + c_v a,
 * and asks that the momentum balance
 *   R(a) = (1 − w) f(x_t, v_t, t) + w f(x_{t+h}, v_{t+h}, t+h) − (r_M M + r_K K) v_{t+h} − M a = 0
 * hold (plus constraint and contact forces, added by the caller's correction phase):
 *   Newmark (SOFA)      Δx_pred = h v + h²/2 (1−2β) a_t, v_pred = v + h(1−γ) a_t, c_x = h²β, c_v = hγ, w = 1
 *   backward Euler      Δx_pred = h v,  v_pred = v,  c_x = h²,  c_v = h,  w = 1
 *   Moreau–Jean θ       Δx_pred = h v,  v_pred = v,  c_x = h²θ, c_v = h,  w = θ
 *   symplectic Euler    Δx_pred = h v,  v_pred = v,  c_x = h²,  c_v = h,  w = 0
 * Newton's method on R with the iteration matrix (K = −∂f/∂x, D = −∂f/∂v)
 *   W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D
 * gives, for linear forces and one iteration from any guess, exactly SOFA's Newmark
 * equation ((1 + hγ r_M) M + (h²β + hγ r_K) K) a = f_ext − (r_M M + r_K K)(v_pred) − K(x_pred).
 * For nonlinear forces the iterations continue until ‖Δa‖∞ ≤ tol (1 + ‖a‖∞).
 * ⊕ applies rotation increments on the unit quaternions (exponential map, world frame),
 * always from the configuration at t, so repeated iterations do not accumulate roundoff.
 * The stepper runs the Newton loop and evaluates R; W and its linear solver are
 * iteration-matrix.ts's, the saddle-point solve with joints constrained-solve.ts's, the
 * post-step joint projection joint-projection.ts's.
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import {
  type ProjectionWorkspace,
  projectionWorkspace,
  projectVelocities,
  type VelocityProjectionResult,
} from "../constraints/project";
import {
  type DynamicStructureEffector,
  hasDynamicStructure,
  type NewtonStepper,
  SchemeCoefficients,
} from "../dynamics/stepper";
import type { ForceEffector } from "../forces/effector";
import { GyroscopicEffector, midpointRotation } from "../forces/gyroscopic";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { mat3Invert, mat3Mul, mat3MulVec, mat3Skew } from "../math/mat3";
import { quatMul, quatNormalize, quatRotate, quatRotateInverse } from "../math/quat";
import { expInverseBeta, expInverseBetaSlope } from "../math/so3";
import { cross3, dot3 } from "../math/vec3";
import {
  BodyKind,
  type BodySystem,
  clearForces,
  getForces,
  getVelocity,
  kineticEnergy,
  massMultiply,
  massSolve,
  PositionSnapshot,
  restorePositions,
  savePositions,
  setPositionsFrom,
  setVelocity,
  updateDerived,
} from "../model/body-system";
import { checkDeadline } from "../solvers/deadline";
import type { BlockLdlt } from "../solvers/linear/block-ldlt";
import type { CgAcceptance } from "../solvers/linear/cg";
import type { FactorizationMemory } from "../solvers/linear/factored-pcg";
import type { LinearSolverName } from "../solvers/linear/linear-solver";
import { ConstrainedSolve } from "./constrained-solve";
import type { ProjectionOrder } from "./integrator";
import {
  type CgPreconditioner,
  IterationMatrix,
  type KrylovMemory,
  LINEAR_TOLERANCE_FLOOR,
  SingularIterationMatrix,
  type SolveTiming,
} from "./iteration-matrix";
import { JointProjection } from "./joint-projection";
import { StartDirections } from "./start-directions";
import { MAX_HALVINGS } from "./step-halving";
import { StiffRateCorrection, type StiffRateHost } from "./stiff-rates";

/** Newton's tolerance when solver.newtonTolerance is unset (relative, see `solve`). */
export const DEFAULT_NEWTON_TOLERANCE = 1e-10;

/**
 * The position change (m, rad) of the last Newton correction below which a step with servos
 * it does not resolve (AccelerationStepper.holdStiffForces) takes their forces' turning
 * with the bodies into W (JointActuator.addTurnStiffness). That term, τ ∂g/∂x, is of the
 * size |q* − q| of the servo's own k_p g gᵀ: without it Newton contracted only linearly
 * near the solution, by 0.3 to 0.65 a correction on the imported 7-axis arm (every servo at
 * k_p = 1e8, k_d = 0, joint2 commanded 0.5 rad at 5 ms), whose first step failed even at
 * h/16. Farther out it is no help: with it from the first iterate the corrections grew
 * (the servos' τ changes by k_p times the iterate's turn, 1.05e8 N·m of residual became
 * 2.6e10 after the first exact correction at h), without it they contracted; the chord
 * iterations there, with W of an iterate that turned by tenths of a radian since, threw
 * the iterate off (a correction of 1.9e9 rad/s² where Newton's was 1e6 at k_p = 1e10), so
 * such steps factor W afresh at every iteration until it holds. 0.1 rad: 1e-2 let the
 * stall test (`solve`) halve the arm's step at k_p = 1e10, k_d = 0 just before the switch,
 * and its first h/16 sub-steps then diverged. The term (and stiff-rates.ts) only in a
 * solve that needs it (SLOW_CONTRACTION).
 */
const TURN_SWITCH = 0.1;

/**
 * Newton's contraction θ = ‖Δa_k‖/‖Δa_{k−1}‖ above which, twice in a row, a solve with
 * servos the step does not resolve goes on with the fuller matrix (their turning and
 * rates: TURN_SWITCH, stiff-rates.ts), as it does where it would stall. That matrix costs
 * a factorization at every iteration until TURN_SWITCH, k + 1 pairs of end-state
 * evaluations and k solves a factorization, and one pair a chord iteration: from the first
 * iterate of every such solve it made the imported 7-axis arm at the import's gains (k_p
 * 500, k_d 20, the light wrists' servos unresolved) ~35 % slower in CPU, where the plain
 * matrix converges at θ ≲ 0.1. The arm at k_p = 1e8 contracts at 0.3 to 0.65 a correction
 * with the plain one, and its first step stalled even at h/16.
 */
const SLOW_CONTRACTION = 0.5;

/**
 * Newton iterations kept for the fuller matrix (SLOW_CONTRACTION) when a solve's plain one
 * contracts steadily but too slowly: it is taken once the rate the corrections show cannot
 * meet the target within the budget less these (chordIterationsLeft). On a hanging chain of
 * 160 links with a servo on every joint (k_p = 1e8, k_d = 0, the first commanded 0.5 rad
 * at 5 ms) the plain matrix of the first step's second sub-step contracted at 0.41–0.45
 * (fresh and chord corrections alike), just under SLOW_CONTRACTION; the fuller one came in
 * at the 22nd iteration of 25 and the step failed even at h/16. Once taken, it converged in
 * 3 to 8 more iterations there (4 most often). With none kept (the budget alone) the chain's
 * step converged, one of its solves at its 25th iteration; with 5, within 18, and the
 * stiff-servo tests took no more iterations than before (the 7-axis arm's at k_p = 1e10:
 * 1182 → 1135, 7 failed solves either way).
 */
const FULLER_ITERATIONS = 5;

/** Largest (and first) forcing term of iterated Newton (see `forcingTerm`). */
const FORCING_MAX = 0.1;

/**
 * The Krylov tolerance of the first solve of a step whose residual is affine in the
 * accelerations (`solve`), where CG stops earlier at the first iterate meeting Newton's
 * acceptance (AffineAcceptance): tight enough that the bound holds at the solve's end, so
 * that a step is one correction. On cloths of 10 × 10, 16 × 16 and 32 × 32 particles at the
 * central difference (CG on W = M + γ h D), with this tolerance alone: 1.000 Newton
 * iterations a step at 1e-3 (2, 2 and 3 CG iterations), 1.74, 1.40 and 1.17 at 1e-2, where
 * a failed bound costs a residual and a solve more; with the acceptance 1.000 and 1.76, 2.00,
 * 2.14 CG iterations (bench/README.md, "Central difference").
 */
const AFFINE_FORCING = 1e-3;

/**
 * The exponent α of Eisenstat & Walker's choice 2 (they allow α ∈ (1, 2]): the golden ratio,
 * PETSc's default (SNESKSPSetParametersEW), the order of the superlinear convergence the
 * inexact Newton then keeps. Against α = 2 on the stiff cloth of the benchmark: 44.9 CG
 * iterations a step instead of 50.8, 1.08–1.14 times less time, the positions within
 * 4.8e-7 m of Newton to 1e-10 over the first 100 steps (bench/README.md, "Stiff cloth").
 */
const FORCING_ORDER = (1 + Math.sqrt(5)) / 2;

/**
 * Eisenstat & Walker's forcing term, choice 2 (SIAM J. Sci. Comput. 17, 1996):
 * η_k = 0.9 (‖R_k‖/‖R_{k−1}‖)^α, kept ≥ 0.9 η_{k−1}^α when that is above 0.1 (so that one
 * lucky decrease does not make the next solve needlessly exact) and ≤ FORCING_MAX, where
 * the line search's test that ‖R‖ at least halves (`solve`) can still be met; α =
 * FORCING_ORDER. The Krylov solve of iteration k then stops at ‖W Δa + R_k‖ ≤ η_k ‖R_k‖:
 * loose while Newton is far from the solution (the linear model is then poor anyway), as
 * tight as the Newton tolerance once it converges fast: fewer Krylov iterations for the
 * same converged step (bench/README.md, "Stiff cloth").
 */
function forcingTerm(previous: number, ratio: number): number {
  let eta = 0.9 * ratio ** FORCING_ORDER;
  const safeguard = 0.9 * previous ** FORCING_ORDER;
  if (safeguard > 0.1) eta = Math.max(eta, safeguard);
  return Math.min(eta, FORCING_MAX);
}

/**
 * Iterated Newton without line search (joints, compliant contacts) reuses the iteration
 * matrix's factorization after a full Newton correction (a chord, or simplified Newton,
 * iteration: Hairer & Wanner, "Solving ODEs II", §IV.8). Chord corrections contract
 * linearly, ‖Δa_{k+1}‖ ≈ θ ‖Δa_k‖, at a rate θ of the order of how much W changed over
 * the step; a fresh factorization contracts quadratically. So the chord goes on while the
 * rate it shows predicts convergence within CHORD_ITERATIONS more corrections (see
 * `chordIterationsLeft`), else the next iteration factors again: on a linear problem the
 * second iteration costs one residual and one solve, not a second factorization, and
 * confirms convergence; on the benchmark's 100-link chain at h = 1/240 s (generalized-α)
 * the chord's θ is 1e-4–1e-3 in the swing and 0.1–0.25 in the whip, where the earlier rule
 * (factor again only when θ > ¼) ran 10–15 chord corrections where a fresh factorization
 * and two chord corrections suffice.
 */
const CHORD_ITERATIONS = 2;

/**
 * A mean step's defect corrections of a Newton correction (meanTangentCorrection): at most
 * this many, until one changes it by at most MEAN_TANGENT_ACCURACY of its size (max-norms).
 */
const MEAN_TANGENT_CORRECTIONS = 8;
const MEAN_TANGENT_ACCURACY = 1e-6;

/**
 * ‖G v + Ct‖∞ (m/s, rad/s) up to which a new memory's start counts as consistent
 * (AccelerationStepper.consistentStart): far above what the steps' projections leave, far
 * below a motor's rate or a velocity set against the joints.
 */
const START_TOLERANCE = 1e-6;

/**
 * A fresh factorization's correction that did not halve the previous one and is within
 * this factor of Newton's target is the problem's rounding noise, not a lack of
 * convergence: near a singular configuration of the joints (a parallelogram linkage
 * passing its flat position) S = G W⁻¹ Gᵀ is nearly singular and amplifies the rounding of
 * C(x) beyond positionRoundingFloor (the corrections then stagnate at a small multiple of
 * the target, whatever h; bench/README.md, "Projection near singular configurations"), so
 * such a step is accepted as converged.
 */
const NOISE_FACTOR = 1e3;

/**
 * The largest move (m or rad, any coordinate) of Newton's first iterate that the start force
 * of the servos a step does not resolve may make before that iterate is taken without it
 * (AccelerationStepper.shiftStiffStart): a radian, past which a turn's linearization
 * (sin φ ≈ φ) is 16 % off; an ordinary servo's share is far below (the rod holding 5.6 N·m
 * at 1 ms: 2e-5 rad), an extreme one's far above (8.7e5 rad).
 */
const GUESS_SHARE_LIMIT = 1;

/** Relative rounding of C(x) at the position level (16 ulps; see positionRoundingFloor). */
const POSITION_ROUNDING = 16 * Number.EPSILON;

/**
 * Relative rounding of a servo's coordinate change g·Δa (servoLawsSettled), 16 ulps of
 * each of its two sources: the unknown, known to ε ‖a‖∞ an entry (g·Δa sums up to six with
 * |g_i| ≤ 1, a hinge between two rigid bodies), and the servo's law, whose terms'
 * magnitudes L (ForceEffector.lawScale) round to ε L, a correction of ε L/(w ∂τ/∂(g·a)):
 * the rod of servoLawsSettled settled at 5 rad/s (L = 1e7 N·m, w ∂τ/∂(g·a) = 1.25e4 N·m
 * per rad/s² at ρ∞ = 0) stagnated at corrections of 3e-13 to 1.1e-12 rad/s², 16 ε L/(…) =
 * 2.8e-12, where 16 ε ‖a‖∞ was 2e-14.
 */
const SERVO_ROUNDING = 16 * Number.EPSILON;

/** Smallest step fraction of the Newton line search (see AccelerationStepper.solve). */
const LINE_SEARCH_MIN_STEP = 1 / 64;
/** Residual reduction below which the line search takes full steps (rounding regime). */
const LINE_SEARCH_FLOOR = 1e-8;
/** Residual, relative to the forces, below which it is rounding (see `solve`). */
const ROUNDING_FLOOR = 1e-9;

/**
 * Corrections still needed after one of size d (the ‖Δa‖∞ of the test) when the
 * iterations contract at the rate θ: the k-th next is θᵏ d, and the iterate is accepted
 * once θ/(1 − θ) θᵏ d ≤ target (see `solve`), so k = ⌈log(target (1 − θ)/(θ d))/log θ⌉;
 * infinite when θ ≥ 1 (no contraction) and 0 before a rate is known (θ < 0).
 */
function chordIterationsLeft(theta: number, d: number, target: number): number {
  if (theta < 0) return 0;
  if (theta >= 1) return Number.POSITIVE_INFINITY;
  if (theta === 0) return 0;
  return Math.max(0, Math.ceil(Math.log((target * (1 - theta)) / (theta * d)) / Math.log(theta)));
}

/**
 * Newton's target for ‖Δa‖∞ (m/s², rad/s²; without the rounding floor) at the iterate
 * a + Δa (a alone when `da` is null; n unknowns): newtonTolerance (1 + ‖a + Δa‖∞), or with
 * the step-error test (`stepError` > 0) the larger of that and stepError
 * ‖a + Δa − reference‖∞ (see AccelerationStepper.solve).
 */
function newtonTarget(
  newton: NewtonSettings,
  a: Float64Array,
  da: Float64Array | null,
  reference: Float64Array | null,
  stepError: number,
  n: number,
): number {
  let amax = 0;
  let moved = 0;
  for (let i = 0; i < n; i++) {
    const next = da === null ? a[i] : a[i] + da[i];
    amax = Math.max(amax, Math.abs(next));
    if (reference !== null) moved = Math.max(moved, Math.abs(next - reference[i]));
  }
  return Math.max(newton.tolerance * (1 + amax), stepError * moved);
}

/**
 * Newton's acceptance of a correction on an affine residual (AccelerationStepper.solve),
 * as a target for CG's iterates x = Δa: ‖R − W x‖₂/λ_M, which bounds the error the
 * correction leaves, within Newton's target at a + x. Set for each step's solves (no
 * allocation a step); `active` false: none.
 */
class AffineAcceptance implements CgAcceptance {
  active = false;
  newton: NewtonSettings = { maxIterations: 1, tolerance: 0 };
  a: Float64Array = new Float64Array(0);
  reference: Float64Array | null = null;
  /** The step-error test's factor, λ_M (kg, kg·m²) and the rounding floor (m/s²). */
  stepError = -0;
  massFloor = -0;
  roundingFloor = -0;

  accepts(x: Float64Array, residualNorm: number): boolean {
    const { newton, a, reference, stepError } = this;
    return this.bounds(
      residualNorm,
      newtonTarget(newton, a, x, reference, stepError, a.length) + this.roundingFloor,
    );
  }

  /** Whether ‖R − W Δa‖₂ = residualNorm bounds the correction's error within `target`. */
  bounds(residualNorm: number, target: number): boolean {
    return residualNorm <= this.massFloor * target;
  }
}

function norm2(x: Float64Array, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i] * x[i];
  return Math.sqrt(s);
}

export interface NewtonSettings {
  maxIterations: number;
  tolerance: number;
  /**
   * solver.linearTolerance: a fixed relative tolerance of the Krylov solves; absent or
   * null: the inexact-Newton rule (`linearTolerance`, `forcingTerm`).
   */
  linearTolerance?: number | null;
  /**
   * solver.linearIterations: Krylov iterations per solve at most, the solve then taken as
   * it is (SOFA's CGLinearSolver); absent or null: the solver's limit, a solve that does
   * not converge failing the step.
   */
  linearIterations?: number | null;
  /**
   * κ of the step-error test (newmark.ts; solver.newtonTolerance left unset): Newton also
   * converges once the position error it leaves, c_x ‖Δa‖∞, is at most κ times the step's
   * own local error estimate (see AccelerationStepper.solve's `stepError`); absent or 0: off.
   */
  stepErrorFraction?: number;
  /**
   * Set by advanceWithHalving (step-halving.ts): true when a solve that fails is redone
   * in halves, so Newton may stop as soon as its rate predicts failure (see `solve`);
   * absent or false (the last halving, or a solve outside it): the whole budget is spent.
   */
  halvingFollows?: boolean;
}

/**
 * What projectOnConstraints makes consistent with a step's projected end state
 * (AccelerationStepper.reactionsAtEnd): the multipliers, with the Rayleigh terms of
 * `coefficients`, and the acceleration, written into `acceleration` (null: the
 * multipliers only, the scheme keeping its own acceleration).
 */
export interface EndConsistency {
  readonly coefficients: SchemeCoefficients;
  readonly acceleration: Float64Array | null;
}

/** The root of body b's group in the union-find forest `group` (jointGroups), halving the paths. */
export function groupRoot(group: Int32Array, b: number): number {
  let r = b;
  while (group[r] !== r) {
    group[r] = group[group[r]];
    r = group[r];
  }
  return r;
}

/** Joins the groups of bodies a and b of sys in `group` (groupRoot); the ground and fixed bodies apart. */
export function joinGroups(sys: BodySystem, group: Int32Array, a: number, b: number): void {
  const { dofOffset } = sys;
  if (a < 0 || b < 0 || dofOffset[a] < 0 || dofOffset[b] < 0) return;
  const ra = groupRoot(group, a);
  const rb = groupRoot(group, b);
  if (ra !== rb) group[ra] = rb;
}

/**
 * x ← P x = x − M⁻¹G_fᵀ S_f⁻¹ G_f x: x projected mass-orthogonally onto the joints' tangent
 * G_f x = 0 of ws's factorization (G_f its factoredG, S_f = G_f M⁻¹ G_fᵀ: S and G of one
 * pose); rates ← S_f⁻¹ G_f x (the joints' impulse −Gᵀ S⁻¹ G x of a unit impulse along M x,
 * in λ's sign, M ẍ = f + Gᵀ λ), du ← the correction −M⁻¹G_fᵀ S_f⁻¹ G_f x
 * (ProjectionWorkspace.correction; ws.du by default). The stepper's at the step's start (startTangent), the
 * impact events' at a piece's t (impact-events.ts toTangent).
 */
export function jointTangent(
  ws: ProjectionWorkspace,
  x: Float64Array,
  rates: Float64Array,
  du: Float64Array = ws.du,
): void {
  ws.set.multiply(x, rates, ws.factoredG);
  ws.correction(rates, du);
  for (let i = 0; i < x.length; i++) x[i] += du[i];
}

/**
 * gᵀ P M⁻¹ g (1/(kg m²), 1/kg) for a generalized force g (a coordinate's gradient: the
 * effort 1 along it), the inverse inertia 1/Ĩ the joints leave along g (P M⁻¹ g the
 * accelerations a unit effort gives with the joints held, into x; jointTangent, its
 * rates and du as there), at most the joints-free gᵀ M⁻¹ g (P is a projection in the
 * kinetic metric: ws null, no joint rows), at least 0 (rounding, where g lies in the
 * joints' row space: a servo's rate √(k_p/Ĩ) of it would be NaN). One arithmetic for
 * AccelerationStepper.jointInverseInertia (the step's start, ForceEffector.unresolvedBy)
 * and impact-events.ts heldInverseInertia (a piece's t, the servos' rates).
 */
export function heldInverseInertia(
  sys: BodySystem,
  ws: ProjectionWorkspace | null,
  g: Float64Array,
  x: Float64Array,
  rates: Float64Array,
  du?: Float64Array,
): number {
  massSolve(sys, g, x);
  if (ws !== null) jointTangent(ws, x, rates, du);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += g[i] * x[i];
  return Math.max(s, 0);
}

/**
 * The Newton step shared by the integrators of one simulation, with its work arrays.
 * Allocates in the constructor only.
 */
export class AccelerationStepper implements NewtonStepper, StiffRateHost {
  readonly n: number;
  /** The unknown acceleration (result of `solve`). */
  readonly a: Float64Array;
  /** Predictor increment Δx_pred and velocity v_pred: the integrator fills them. */
  readonly dxPred: Float64Array;
  readonly vPred: Float64Array;
  /** Generalized velocity at the end of the step (valid after `solve`). */
  readonly v: Float64Array;
  /** Forces at the start of the step (used when w < 1; see holdStartForces). */
  readonly fStart: Float64Array;
  /**
   * The generalized force (N, N·m) at the step's start of the effectors the step does not
   * resolve (holdStiffForces; SchemeCoefficients.stiffForces), and scratch for it at an iterate.
   */
  readonly stiffStart: Float64Array;
  private readonly stiffEnd: Float64Array;
  /** The coefficients of the last holdStiffForces that chose any, else null. */
  private stiffHeld: SchemeCoefficients | null = null;
  /** Whether the step's unknown is shifted by ε M⁻¹ f_s(t) (shiftStiffStart). */
  private stiffShifted = false;
  /**
   * Whether `solve` is to start λ̃ without the joints' reaction to the chosen servos' start
   * force (holdStiffForces with symmetricJoints and no shiftStiffStart after it: the
   * θ-schemes'; dropStiffReaction).
   */
  private stiffReactionPending = false;
  /**
   * keepStiffFor's: the dofs (1 by dof) whose step ended with an earlier (sub-)step than the
   * last holdStiffForces', that sub-step's unresolved effectors and their force at its start.
   */
  private stiffKeptDofs: Uint8Array | null = null;
  private readonly stiffKept: ForceEffector[] = [];
  private readonly stiffKeptStart: Float64Array;
  /** The lead δ (s) of the last holdStiffForces that chose any, and keepStiffFor's. */
  private stiffLead = 0;
  /** keepStepLead's step (s) and its choice: 1 the step's lead, 0 the attempts', −1 not yet. */
  private leadStep = 0;
  private leadChoice = -1;
  /** The servos keepStepLead's choice 1 holds with the step's lead on all its sub-steps. */
  private readonly stepStiff: ForceEffector[] = [];
  private stiffKeptLead = 0;
  /** Scratch: the stiff forces with their lead (stiffApplied, removeStiffShare). */
  private readonly stiffLed: Float64Array;
  /** The effectors that can be unresolved (ForceEffector.unresolvedBy). */
  private readonly stiffCandidates: readonly ForceEffector[];
  /** The unresolved servos' rates in the symmetric joints' correction (stiff-rates.ts). */
  private readonly stiffRates: StiffRateCorrection | null;
  /**
   * 1/Ĩ of each servo holdStiffForces chose for Newton alone (its extra weight 0), at the
   * step's start (ForceEffector.inverseInertiaAlong; servoLawsSettled), one per candidate.
   */
  private readonly stiffInverseInertia: Float64Array;
  /**
   * Per candidate (stiffCandidates), after a converged `solve` (N·m or N): the law's value
   * at the accepted unknown by Newton's linear model, less its reading at the end state the
   * solve left, where that difference is within the reading's rounding (endLaws); else 0.
   * lawRoundingWork books it. The linear model at Newton's last iterate, first.
   */
  private readonly lawRounding: Float64Array;
  /** The rounding of each candidate's law read at the end state (linearLaws). */
  private readonly lawBand: Float64Array;
  /** sys.stateVersion of the end state lawRounding belongs to; −1: none. */
  private roundingVersion = -1;
  /** Whether lawRounding holds the linear model of the accepted unknown (linearLaws). */
  private lawsLinear = false;
  /** startMultipliers' coefficients (only its Rayleigh damping is read). */
  private readonly startCoefficients = new SchemeCoefficients();
  /** holdState's coefficients (c_x = c_v = 0, w = 1; reused: with compliant contacts at every step). */
  private readonly holdCoefficients = new SchemeCoefficients();
  /**
   * The dynamic rigid bodies whose world inertia turns with them (not isotropic): their
   * start torques are carried as accelerations (holdStartForces).
   */
  private readonly turning: Int32Array;
  /** α_t = I_w(t)⁻¹ τ_t of each `turning` body (3 each; holdStartForces). */
  private readonly startAngular: Float64Array;
  private readonly carried = new Float64Array(3);
  /** Whether applyUnknown guided the angle coordinates since the step began (guideAngles). */
  private anglesGuided = false;
  /** Whether fStart holds the gyroscopic effector's torque (holdStartForces' midpoint). */
  private readonly gyroscopic: boolean;
  /**
   * 1 for each `turning` body a revolute joint holds to a static body (the ground or a
   * fixed body), or that fixed joints weld to such a body: it turns about that joint's
   * fixed axis (holdStartForces).
   */
  private readonly fixedAxis: Uint8Array;
  /**
   * The free welded groups (holdStartForces): dynamic rigid bodies fixed joints tie
   * together and no other joint or motor holds, group g's bodies at weldBodies[weldStart[g]
   * .. weldStart[g + 1]); and for each `turning` body its group, or −1.
   */
  private readonly weldStart: Int32Array;
  private readonly weldBodies: Int32Array;
  private readonly weldOf: Int32Array;
  /** Each group's mean rate over the step (3 a group; holdStartForces). */
  private readonly weldMean: Float64Array;
  /** Each group's rate at the step's end, ω₂ (3 a group; weldMeanRates, placeWelded). */
  private readonly weldEnd: Float64Array;
  /** The step h weldMeanRates last stepped the groups by (0: not this step; placeWelded). */
  private weldStep = 0;
  /** A group's turn over the step, cay(½ h ω̄), as a unit quaternion (placeWelded). */
  private readonly weldTurn = new Float64Array(4);
  /** A group's inertia about its centre of mass, its momentum, torque and offsets' work arrays. */
  private readonly weldInertia = new Float64Array(9);
  private readonly weldInverse = new Float64Array(9);
  private readonly weldMomentum = new Float64Array(3);
  private readonly weldTorque = new Float64Array(3);
  private readonly weldRate = new Float64Array(3);
  private readonly weldCentre = new Float64Array(6);
  /**
   * A turning body's I_w ω, its torques without the gyroscopic one, and its end rate
   * (holdStartForces).
   */
  private readonly momentum = new Float64Array(3);
  private readonly applied = new Float64Array(3);
  private readonly endRate = new Float64Array(3);
  /**
   * 1 for each `turning` body no joint holds whose rate the running step took at its mean
   * rate (holdStartForces' midpointRotation, not welded, no fixed axis): applyUnknown turns
   * it by the Cayley map of its mean rate (cayleyTurn); its start rate ω_t (3 each).
   */
  private readonly cayleyBody: Uint8Array;
  private readonly cayleyStart: Float64Array;
  /** The step h the running step's cayleyBody were set for (0: none; holdStartForces). */
  private cayleyStep = 0;
  /** cayleyTurn's ½ h ω̄, c × ω' and c × (c × ω') (3 each). */
  private readonly cayleyWork = new Float64Array(9);
  /** Each cayleyBody's rate ω' of the iterate before cayleyTurn carries it (3 each). */
  private readonly cayleyRate: Float64Array;
  /** 1 for each `turning` body no joint or motor touches (holdStartForces' meanRates). */
  private readonly freeTurning: Uint8Array;
  /**
   * 1 for each body (by body index) whose rotation the running step keeps on the trapezoid
   * although free (meanRates; midpointTurn): Moreau–Jean's bodies that an active contact of
   * the step touches (moreau-jean.ts, holdTrapezoidTurns), set before the step's prepare.
   */
  readonly trapezoidTurn: Uint8Array;
  /**
   * 1 for each body (by body index) whose midpoint rule turns it by exp(h ω̄) rather than
   * the Cayley map (meanRates; cayleyTurn): Moreau–Jean's bodies but the round ones near a
   * contact on a step split at its impacts (moreau-jean.ts, holdTrapezoidTurns), set before
   * the step's prepare.
   */
  readonly exponentialTurn: Uint8Array;
  /**
   * Whether the running step writes the free turning bodies' rotational rows as the
   * implicit midpoint rule (SchemeCoefficients.meanRates; holdStartForces): their residual
   * meanRateResidual's, W's blocks meanRateJacobians'.
   */
  private meanRateRows = false;
  /** meanRates: each cayleyBody's start torque without the gyroscopic one, (1 − w) τ_t (3 each). */
  private readonly meanTorque: Float64Array;
  /** The gyroscopic effector, or null (meanRateJacobians). */
  private readonly gyroscopicEffector: GyroscopicEffector | null;
  /** rotationMomentum's I_t φ, φ × I_t φ and φ × (φ × I_t φ) (3 each). */
  private readonly turnMomentum = new Float64Array(3);
  private readonly turnCross = new Float64Array(3);
  private readonly turnDouble = new Float64Array(3);
  /** rotationJacobians' [φ]×, [·]× of the others, products and ∂g/∂φ (3 × 3 each). */
  private readonly turnSkew = new Float64Array(9);
  private readonly turnSkewOther = new Float64Array(9);
  private readonly turnProduct = new Float64Array(9);
  private readonly turnJacobian = new Float64Array(9);
  /**
   * 1 for each `turning` body a joint or motor holds that is not in a free welded group
   * (weldOf < 0): the bodies whose rotational rows symplectic Euler's smooth step writes
   * in angular momentum (momentumRows; the free ones keep the midpoint rate, the welded
   * groups placeWelded's).
   */
  private readonly jointedTurning: Uint8Array;
  /**
   * 1 for each body (by body index) whose rotational rows the running step writes in
   * angular momentum (beginStartDirections: every `turning` body with end forces, the
   * jointedTurning ones under symplectic Euler).
   */
  private readonly momentumBody: Uint8Array;
  /**
   * symmetricJoints: each `turning` body's world inertia I_t (9), its gyroscopic
   * ω_t × I_t ω_t (3) at the step's start, and its rate before the end's velocity
   * projection (3; applyUnknown), for the rotational rows' momentum form (momentumRows).
   */
  private readonly startInertia: Float64Array;
  private readonly startGyroscopic: Float64Array;
  private readonly rawRate: Float64Array;
  private readonly endAngular: Float64Array;
  readonly start: PositionSnapshot;
  /** W and its linear solver (iteration-matrix.ts). */
  private readonly iteration: IterationMatrix;
  /** W at the last assembly (the iteration matrix's, for the one-step problems). */
  readonly matrix: SparseBlockMatrix;
  private readonly f: Float64Array;
  private readonly r: Float64Array;
  private readonly da: Float64Array;
  private readonly inc: Float64Array;
  private readonly tmp: Float64Array;
  private readonly kv: Float64Array;
  private readonly aStart: Float64Array;
  /** Relative tolerance of the Krylov solvers in the current `solve` (see LINEAR_TOLERANCE_FLOOR). */
  private linearTolerance = LINEAR_TOLERANCE_FLOOR;
  /** Krylov iterations per solve at most (NewtonSettings.linearIterations), or null. */
  private linearCap: number | null = null;
  /** Whether the last `solve` met the Newton tolerance. */
  newtonConverged = true;
  /** Whether the last `solve` ended stalled, not merely out of iterations (see `solve`). */
  newtonStalled = false;

  /**
   * Whether the last `solve` must be redone (step-halving.ts): it did not converge, and
   * either stalled or has no compliant contacts. With compliant contacts an unconverged
   * solve that still reduced its corrections is kept (Newton can cycle between the two
   * branches of a contact force switching at a kink, where halving h does not help), and
   * the step's stats say newtonConverged: false.
   */
  get mustRedo(): boolean {
    return !this.newtonConverged && (this.newtonStalled || this.dynamicEffectors.length === 0);
  }
  private searchFailed = false;
  /**
   * The step fraction α the last line search took (1: the whole correction). NaN before the
   * first: a number field born a small integer changes the stepper's map when it first holds
   * a fraction (here at the first backtracking, hundreds of steps into the stiff cloth), and
   * every function compiled against the old map deoptimizes (see BodySystem on V8).
   */
  private searchStep = Number.NaN;
  /**
   * A lower bound of the mass matrix's eigenvalues (kg, kg·m²: the smallest particle or
   * body mass and principal inertia), or 0 where unknown (effectors with a mass of their
   * own): W ⪰ λ_M I when the Jacobians are symmetric positive semidefinite (see `solve`).
   */
  private readonly massFloor: number;
  /** Every effector's forces are affine in the velocities (ForceEffector.affineInVelocity). */
  private readonly affineInVelocity: boolean;
  /** Newton's test on an affine residual as CG's second target (see `solve`). */
  private readonly affineTest = new AffineAcceptance();
  /** Krylov iterations of the solves with W since the integrator last cleared it. */
  linearIterations = 0;
  /**
   * Energy (J) taken out since the simulation cleared it at the start of its step, apart
   * from the damping forces' power (the energy balance, simulation/monitor.ts): the
   * kinetic energy of the velocity decay (decayVelocities) and, under the θ-schemes, the
   * negative work of the one-step problem's impulses (contacts, joint limits:
   * moreau-jean.ts) and of the motors (theta-scheme.ts takeMotorWork).
   */
  removedEnergy = 0;
  /**
   * A generalized force (N, N·m) held constant during `solve` and added to the residual
   * with weight 1, or null: the nonsmooth contact force H^T P/h of Moreau–Jean's Newton
   * iterations (integrators/moreau-jean.ts).
   */
  extraForce: Float64Array | null = null;
  private readonly dynamicEffectors: DynamicStructureEffector[];
  /** The effectors that may shorten a Newton correction (ForceEffector.stepFraction). */
  private readonly limiting: ForceEffector[];
  /** The effectors whose model may not hold at an end state (ForceEffector.strainFault). */
  private readonly strained: ForceEffector[];
  /**
   * Accumulated wall time (ms) of matrix assembly and of factor + solve, for benchmarks:
   * the iteration matrix's, to which the constrained solves add theirs.
   */
  readonly timing: SolveTiming;

  /** Bilateral constraints (joints, motors) or null; see constrained-solve.ts. */
  readonly constraints: ConstraintSet | null;
  /**
   * Constraint force multipliers of the last solve (M a = f + Gᵀλ), N or N·m: the state
   * record's array (see the constructor).
   */
  readonly lambda: Float64Array;
  /** `lambda` at the attempt's start (beginStep), put back by restoreStart. */
  private readonly startLambda: Float64Array;
  /** Whether the current solve iterates Newton (newtonIterations > 1). */
  private iterating = false;
  private readonly constrained: ConstrainedSolve | null;
  private readonly rc: Float64Array;
  private readonly ct: Float64Array;
  private readonly zeroRows: Float64Array;
  private readonly scratchLambda: Float64Array;
  /** The rows G̃ of a velocity-level Newton step's factorization (factorConstrained). */
  private readonly velocityRows: Float64Array;
  /** The post-step drift correction of the joints (joint-projection.ts), or null. */
  private readonly jointProjection: JointProjection | null;
  /** The end-of-iterate velocity projection of symmetricJoints. */
  private readonly endProjection: VelocityProjectionResult = { residualNorm: 0, rank: 0 };
  /** Its joint impulse μ (N s, N m s per row: addJointImpulse). */
  private readonly endImpulse: Float64Array;
  /** symmetricJoints: the joint force along the start configuration (start-directions.ts). */
  readonly startDirections: StartDirections;
  /** The end time of the running `solve` (s). */
  private tEnd = 0;
  /** The last Newton iteration's joint rows were at the position level (see solveIteration). */
  private positionLevelRows = false;
  /**
   * The last constrained factorization took the mass path, whose S = G M⁻¹ Gᵀ is the
   * projections' own (constrained-solve.ts shares the set's ProjectionWorkspace).
   */
  private massMetricFactored = false;
  /**
   * symmetricJoints with position-level rows: ‖Δa‖∞ and ‖ρ Y Δλ̃‖∞ (m/s², rad/s²) of the
   * mixed system's solution for the joint rows' rounding alone, ±positionRoundingFloor a row
   * (the rounding of C(x), POSITION_ROUNDING of the positions, over c_x), the balance rows
   * 0: the corrections Newton cannot resolve below, measured with each fresh factorization
   * (jointRoundingResponse; `iterate`, jointsAtNoise). 0: none measured.
   */
  private accelNoise = 0;
  private jointNoise = 0;
  /** Scratch of jointRoundingResponse: the rows' rounding, and the response (Δa, Δλ̃, ρ Y Δλ̃). */
  private readonly noiseRows: Float64Array;
  private readonly noiseLambda: Float64Array;
  private readonly noiseAccel: Float64Array;
  private readonly zeroForce: Float64Array;

  /**
   * @param lambda the multipliers' array, one per joint and motor row: the simulation's
   *   state record hands its own, which every solve then writes in place.
   */
  constructor(
    readonly sys: BodySystem,
    readonly effectors: readonly ForceEffector[],
    linearSolver: LinearSolverName,
    /** solver.linearPreconditioner (IterationMatrix.setLinearSolver) */
    preconditioner: CgPreconditioner | null,
    constraints: ConstraintSet | null = null,
    lambda: Float64Array = new Float64Array(constraints?.numRows ?? 0),
    /** The revolute joints' angle coordinates, guided through each step (guideAngles). */
    private readonly angles: readonly JointCoordinate[] = [],
  ) {
    const n = sys.numDofs;
    this.constraints = constraints !== null && constraints.numRows > 0 ? constraints : null;
    const m = this.constraints?.numRows ?? 0;
    if (lambda.length !== m) throw new Error(`${lambda.length} multipliers for ${m} rows`);
    this.constrained = this.constraints ? new ConstrainedSolve(sys, this.constraints) : null;
    this.lambda = lambda;
    this.startLambda = new Float64Array(m);
    this.rc = new Float64Array(m);
    this.ct = new Float64Array(m);
    this.zeroRows = new Float64Array(m);
    this.noiseRows = new Float64Array(m);
    this.noiseLambda = new Float64Array(m);
    this.noiseAccel = new Float64Array(n);
    this.zeroForce = new Float64Array(n);
    this.scratchLambda = new Float64Array(m);
    this.endImpulse = new Float64Array(m);
    this.velocityRows = new Float64Array(this.constraints?.G.values.length ?? 0);
    this.startDirections = new StartDirections(sys, this.constraints);
    this.jointProjection = this.constraints ? new JointProjection(sys, this.constraints) : null;
    this.n = n;
    this.a = new Float64Array(n);
    this.dxPred = new Float64Array(n);
    this.vPred = new Float64Array(n);
    this.v = new Float64Array(n);
    this.fStart = new Float64Array(n);
    this.stiffStart = new Float64Array(n);
    this.stiffEnd = new Float64Array(n);
    this.stiffKeptStart = new Float64Array(n);
    this.stiffLed = new Float64Array(n);
    this.stiffCandidates = effectors.filter((e) => e.unresolvedBy !== undefined);
    this.stiffInverseInertia = new Float64Array(this.stiffCandidates.length);
    this.lawRounding = new Float64Array(this.stiffCandidates.length);
    this.lawBand = new Float64Array(this.stiffCandidates.length);
    this.stiffRates =
      this.constraints !== null && this.stiffCandidates.length > 0
        ? new StiffRateCorrection(this, this.stiffCandidates.length, m)
        : null;
    this.f = new Float64Array(n);
    this.r = new Float64Array(n);
    this.da = new Float64Array(n);
    this.inc = new Float64Array(n);
    this.tmp = new Float64Array(n);
    this.kv = new Float64Array(n);
    this.aStart = new Float64Array(n);
    const turning: number[] = [];
    for (let b = 0; b < sys.numBodies; b++)
      if (sys.dofOffset[b] >= 0 && sys.kind[b] === BodyKind.RIGID && sys.isotropic[b] === 0)
        turning.push(b);
    this.turning = Int32Array.from(turning);
    this.startAngular = new Float64Array(3 * turning.length);
    this.startInertia = new Float64Array(9 * turning.length);
    this.startGyroscopic = new Float64Array(3 * turning.length);
    this.rawRate = new Float64Array(3 * turning.length);
    this.endAngular = new Float64Array(3 * turning.length);
    this.gyroscopicEffector =
      (effectors.find((e) => e instanceof GyroscopicEffector) as GyroscopicEffector | undefined) ??
      null;
    this.gyroscopic = this.gyroscopicEffector !== null;
    const held = new Uint8Array(sys.numBodies);
    const isStatic = (b: number) => b < 0 || sys.dofOffset[b] < 0;
    // a revolute joint with its 5 rows (both ends oriented) to a static body
    for (const j of this.constraints?.constraints ?? [])
      if (j.type === "revolute" && j.rows === 5 && isStatic(j.bodyA) !== isStatic(j.bodyB))
        held[isStatic(j.bodyA) ? j.bodyB : j.bodyA] = 1;
    // the welded groups: union–find over the fixed joints between dynamic rigid bodies
    const root = Int32Array.from({ length: sys.numBodies }, (_, b) => b);
    const find = (b: number): number => {
      while (root[b] !== b) b = root[b] = root[root[b]];
      return b;
    };
    const rigid = (b: number) => !isStatic(b) && sys.kind[b] === BodyKind.RIGID;
    for (const j of this.constraints?.constraints ?? [])
      if (j.type === "fixed" && rigid(j.bodyA) && rigid(j.bodyB))
        root[find(j.bodyA)] = find(j.bodyB);
    // a body welded to a hinged one turns about the same fixed axis
    for (let b = 0; b < sys.numBodies; b++) if (held[b] === 1 && rigid(b)) held[find(b)] = 1;
    for (let b = 0; b < sys.numBodies; b++) if (rigid(b) && held[find(b)] === 1) held[b] = 1;
    const groups = new Map<number, number[]>();
    for (let b = 0; b < sys.numBodies; b++) {
      if (!rigid(b)) continue;
      const r = find(b);
      const group = groups.get(r);
      if (group === undefined) groups.set(r, [b]);
      else group.push(b);
    }
    // the groups no other joint or motor holds (a free welded body)
    const attached = new Uint8Array(sys.numBodies);
    for (const j of this.constraints?.constraints ?? [])
      if (!(j.type === "fixed" && rigid(j.bodyA) && rigid(j.bodyB)))
        for (const b of [j.bodyA, j.bodyB]) if (b >= 0) attached[b] = 1;
    const welded = [...groups.values()].filter(
      (g) => g.length > 1 && g.every((b) => attached[b] === 0),
    );
    const weldOf = new Int32Array(sys.numBodies).fill(-1);
    welded.forEach((g, k) => {
      for (const b of g) weldOf[b] = k;
    });
    const weldStart = new Int32Array(welded.length + 1);
    welded.forEach((g, k) => {
      weldStart[k + 1] = weldStart[k] + g.length;
    });
    this.weldStart = weldStart;
    this.weldBodies = Int32Array.from(welded.flat());
    this.weldOf = Int32Array.from(turning, (b) => weldOf[b]);
    this.weldMean = new Float64Array(3 * welded.length);
    this.weldEnd = new Float64Array(3 * welded.length);
    this.fixedAxis = Uint8Array.from(turning, (b) => held[b]);
    const jointed = new Uint8Array(sys.numBodies);
    for (const j of this.constraints?.constraints ?? [])
      for (const b of [j.bodyA, j.bodyB]) if (b >= 0) jointed[b] = 1;
    this.jointedTurning = Uint8Array.from(turning, (b) =>
      jointed[b] === 1 && weldOf[b] < 0 ? 1 : 0,
    );
    this.cayleyBody = new Uint8Array(turning.length);
    this.cayleyStart = new Float64Array(3 * turning.length);
    this.cayleyRate = new Float64Array(3 * turning.length);
    this.meanTorque = new Float64Array(3 * turning.length);
    this.freeTurning = Uint8Array.from(turning, (b) => (jointed[b] === 0 ? 1 : 0));
    this.trapezoidTurn = new Uint8Array(sys.numBodies);
    this.exponentialTurn = new Uint8Array(sys.numBodies);
    this.momentumBody = new Uint8Array(sys.numBodies);
    let massFloor = Number.POSITIVE_INFINITY;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0) continue;
      massFloor = Math.min(massFloor, sys.mass[b]);
      if (sys.kind[b] === BodyKind.RIGID)
        for (let k = 0; k < 3; k++)
          massFloor = Math.min(massFloor, sys.principalInertia[3 * b + k]);
    }
    this.massFloor =
      Number.isFinite(massFloor) && !effectors.some((e) => e.addMassProduct !== undefined)
        ? massFloor
        : 0;
    this.start = new PositionSnapshot(sys);
    this.iteration = new IterationMatrix(
      sys,
      effectors,
      linearSolver,
      this.constraints !== null,
      preconditioner,
    );
    this.matrix = this.iteration.matrix;
    this.iteration.rowBlocks = (c) => this.meanRateJacobians(c);
    this.timing = this.iteration.timing;
    this.dynamicEffectors = effectors.filter(hasDynamicStructure);
    this.limiting = effectors.filter((e) => e.stepFraction !== undefined);
    this.strained = effectors.filter((e) => e.strainFault !== undefined);
    // with a consistent mass none: newmark's and generalized-alpha's memory would need the
    // correction M⁻¹ (f − f̃) with the whole mass matrix (meanEndCorrection)
    this.meanEffectors = effectors.some((e) => e.addMassProduct !== undefined)
      ? []
      : effectors.filter((e) => e.beginMeanStep !== undefined);
    this.affineInVelocity = effectors.every((e) => e.affineInVelocity === true);
    this.meanTangentEffectors = this.meanEffectors.filter(
      (e) => e.addMeanTangentProduct !== undefined,
    );
    const meanN = this.meanTangentEffectors.length > 0 ? n : 0;
    this.meanRhs = new Float64Array(meanN);
    this.meanPrevious = new Float64Array(meanN);
    this.meanFirst = new Float64Array(meanN);
    this.meanFirstLambda = new Float64Array(meanN > 0 ? (this.constraints?.numRows ?? 0) : 0);
  }

  /**
   * Re-reads what the effectors' Jacobians are (hasJacobians, jacobianType, the
   * matrix-free products) after one of them changed (solver.gyroscopicJacobian), and
   * selects the linear solver again.
   */
  effectorsChanged(): void {
    this.iteration.effectorsChanged();
  }

  /**
   * The factored-PCG solver's memory for the state record (factored-pcg.ts saveMemory; a
   * copy), undefined off that path or before its first factorization.
   */
  saveSolverMemory(): FactorizationMemory | undefined {
    return this.iteration.saveMemory();
  }

  /**
   * Puts saveSolverMemory's record back (after the solve matrix's pattern was restored);
   * undefined: the solver starts afresh.
   */
  restoreSolverMemory(memory: FactorizationMemory | undefined): void {
    this.iteration.restoreMemory(memory);
  }

  /** Holds the solver's memory at a simulation step's start (IterationMatrix.holdMemory). */
  holdSolverMemory(): void {
    this.iteration.holdMemory();
  }

  /** The memory holdSolverMemory held, back (a failed step undone). */
  restoreHeldSolverMemory(): void {
    this.iteration.restoreHeldMemory();
  }

  /**
   * The matrix-free CG's memory for the state record (iteration-matrix.ts
   * saveKrylovMemory; into `out` when given).
   */
  saveKrylovMemory(out?: KrylovMemory): KrylovMemory | undefined {
    return this.iteration.saveKrylovMemory(out);
  }

  /** Puts saveKrylovMemory's record back; undefined: as a new simulation starts. */
  restoreKrylovMemory(memory: KrylovMemory | undefined): void {
    this.iteration.restoreKrylovMemory(memory);
  }

  /** See IterationMatrix.setPositionsHeld. */
  setPositionsHeld(held: boolean): void {
    this.iteration.setPositionsHeld(held);
  }

  /** See IterationMatrix.setLinearSolver. */
  setLinearSolver(name: LinearSolverName, preconditioner: CgPreconditioner | null = null): void {
    this.iteration.setLinearSolver(name, preconditioner);
  }

  /** Generalized applied force at the current state into out (clears the accumulators). */
  computeForces(t: number, out: Float64Array): void {
    clearForces(this.sys);
    const effectors = this.effectors;
    for (let i = 0; i < effectors.length; i++) effectors[i].applyForces(t);
    getForces(this.sys, out);
  }

  /**
   * Chooses, at the step's start (the state at t), the effectors a step of h does not
   * resolve (ForceEffector.unresolvedBy: the servos with h k_d/Ĩ or h √(k_p/Ĩ) > 1) into
   * c.stiffForces, their force at t into stiffStart, and c.stiffWeight = `extra` where there
   * are any (else 0). The residual then takes their force with the weight 1 in the velocity
   * update where the scheme's own is w_v < 1 (SchemeCoefficients.stiffWeight): backward
   * Euler's L-stable treatment of a stiff dissipative force inside a second-order scheme, as
   * IMEX schemes take the stiff part of a split right-hand side implicitly (Ascher, Ruuth &
   * Spiteri, Appl. Numer. Math. 25, 1997) and MuJoCo its joint damping at the step's end
   * ("implicitfast" integrator). A mode the step does not resolve then decays by
   * 1/(1 + h λ) a step, where the trapezoid's amplification (1 − h λ/2)/(1 + h λ/2) → −1
   * rang: a 0.05 kg·m² wheel on a velocity servo k_v = 1000 at h = 1/60 s stayed 1.7e-3 of
   * its target rate off after 2 s under moreau-jean, 24 % under newmark. Resolved servos keep
   * the scheme's weights (its second order). The price: those servos' force is first order
   * in h over the step, as backward Euler's (the motion they drive was decided within the
   * step anyway).
   *
   * The weight 1 in the velocity alone leaves the scheme's position update, which for those
   * servos' share reads x_{t+h} = x_t + h v_t + μ (v_{t+h} − v_t), μ = c_x/c_v (h θ for the
   * θ-schemes, h β/γ for newmark and generalized-alpha at ρ∞ = 1, whose memory's share then
   * cancels at β = γ/2): h/2 at the trapezoid, where a stiffness-only servo (k_d = 0,
   * w = h √(k_p/I) > 4) kept the slow root λ = [(2 − w²/2) − w √(w²/4 − 4)]/(2 + w²) ≈
   * −(1 − 8/w²) of e₁ = e₀ + h (v₀ + v₁)/2, v₁ = v₀ − h (k_p/I) e₁: its error flipped sign
   * every step and shrank by 8/w² a step (the hinged rod at k_p = 1e10, 1/60 s swung at
   * ±35 rad/s for good). So their stiffness is measured at z = x + δ v, δ = h − μ (the lead,
   * ForceEffector.leadStiffness): z_{t+h} = z_t + h v_{t+h}, and with the weight 1,
   * v_{t+h} = v_t + h M⁻¹ f_s(z_{t+h}, v_{t+h}): backward Euler of (z, v) exactly, whose
   * roots 1/(1 ± i w) decay by 1/√(1 + w²) a step; x = z − δ v follows it, settling as v
   * does. It adds δ k_p to the damping (its W's share (w + ε)(c_x + δ c_v) k_p = (w + ε)
   * h c_v k_p); the force at rest is the same. (Measuring at x_t + h v_{t+h} instead keeps
   * the trapezoid's x_t in z: roots of modulus → 1/√2.) The lead is the (sub-)step's own:
   * set for its Newton iterations only (`solve`), so that the forces outside them (the
   * start's, the memory's) are the state's alone and the step's start share still cancels
   * (restored sessions step the same); stiffForceChange (the energy balance; it leaves the
   * servo's reported effort with the lead) and removeStiffShare add its end force back.
   *
   * With `extra` = 0 where c.stiffTermsOnDemand (generalized-alpha at ρ∞ < 1, whose own
   * spectral radius damps such a mode, and its backward-Euler redo) the servos are chosen
   * all the same, for Newton alone: its fuller matrix near the solution (SLOW_CONTRACTION)
   * and their own convergence test (servoLawsSettled); c.stiffWeight stays 0, with no lead,
   * the scheme's weights on every force.
   */
  holdStiffForces(t: number, h: number, c: SchemeCoefficients, extra: number): void {
    const chosen = c.stiffForces;
    chosen.length = 0;
    c.stiffWeight = 0;
    this.stiffHeld = null;
    this.stiffShifted = false;
    this.stiffReactionPending = false;
    if (extra === 0 && !c.stiffTermsOnDemand) return;
    const candidates = this.stiffCandidates;
    this.tangentTime = t;
    this.tangentFactored = false;
    const inverse = this.constraints === null ? undefined : this.jointInverseInertia;
    // a step whose servos no halving resolves (keepStepLead) integrates one law, theirs
    // with the step's lead, on every sub-step: those its finest sub-steps would resolve
    // stay chosen there (stepStiff)
    const led = this.leadChoice === 1 ? this.stepStiff : null;
    for (let i = 0; i < candidates.length; i++)
      if (candidates[i].unresolvedBy?.(h, inverse) === true || led?.includes(candidates[i]))
        chosen.push(candidates[i]);
    if (chosen.length === 0) return;
    if (extra === 0) {
      // for Newton alone (see above): their inertia at the start for servoLawsSettled
      for (let i = 0; i < chosen.length; i++)
        this.stiffInverseInertia[i] = chosen[i].inverseInertiaAlong?.(inverse) ?? 0;
      return;
    }
    c.stiffWeight = extra;
    this.stiffHeld = c;
    this.stiffLead = h - c.cx / c.cv;
    this.stiffForcesNow(c.stiffForces, t, this.stiffStart);
    this.stiffReactionPending = c.symmetricJoints && this.constraints !== null;
  }

  /**
   * Newton's test on the servos holdStiffForces chose for its iterations alone (their extra
   * weight 0: generalized-alpha at ρ∞ < 1), after the correction `da` of the iterate `a`
   * against `target` (m/s², rad/s²). A correction moves such a servo's law by
   * w (c_x k_p + c_v k) g·Δa (ForceEffector.lawGain), which over its inertia Ĩ (at the
   * step's start, stiffInverseInertia) is σ = w (c_x k_p + c_v k)/Ĩ ≫ 1 times the
   * correction itself: ‖Δa‖∞ ≤ target left the law off by σ target Ĩ, a force the end state
   * did not balance, whose work over the step the energy balance reads as its error. The
   * 2 kg, 0.6 m rod hinged at its end on a velocity servo k_v = 1e6 (1/60 s, σ up to 4e4):
   * energy.error 0.25 J (ρ∞ = 0.9) and 0.18 J (0.5), Newton's tolerance times k_v c_v ‖a‖∞
   * over the first step's turn. So each such servo must also have |g·Δa| ≤ target/σ, down
   * to the rounding of the unknown and of the law (SERVO_ROUNDING); `left`: the factor
   * θ/(1 − θ) that turns the correction into what the iterations' rate leaves after it (the
   * slower of the last two; 1 before two are known), as the test on ‖Δa‖∞ takes it. Newton's
   * fuller matrix (SLOW_CONTRACTION) makes that reachable: with the plain one, which
   * contracted at θ ≈ 0.24 there, the rod's first step failed at ρ∞ = 0.5 even at h/16.
   * Now energy.error 1.5e-7, 6.7e-7 and 8.6e-8 J at ρ∞ = 0.9, 0.5 and 0 over 10 s, with
   * 4474, 3754 and 3703 Newton iterations where 3777, 3144 and 3101 left 0.25, 0.18 and
   * 7e-4 J (test/engine/integrators/generalized-alpha-servo-work.test.ts).
   */
  private servoLawsSettled(
    c: SchemeCoefficients,
    da: Float64Array,
    target: number,
    left: number,
  ): boolean {
    const chosen = c.stiffForces;
    if (chosen.length === 0) return true;
    const { a, n } = this;
    let amax = 0;
    for (let i = 0; i < n; i++) amax = Math.max(amax, Math.abs(a[i] + da[i]));
    for (let i = 0; i < chosen.length; i++) {
      const gain = c.w * (chosen[i].lawGain?.(c.cx, c.cv) ?? 0);
      const sigma = gain * this.stiffInverseInertia[i];
      if (!(sigma > 1)) continue;
      const change = left * Math.abs(chosen[i].coordinateAlong?.(da) ?? 0);
      const floor = SERVO_ROUNDING * ((chosen[i].lawScale?.() ?? 0) / gain + amax);
      if (change > target / sigma + floor) return false;
    }
    return true;
  }

  /**
   * At the start of a step of h that the integrator may halve (step-halving.ts, and
   * generalized-alpha's error control and pieces): keepStepLead's step.
   */
  beginStepLead(h: number): void {
    this.leadStep = h;
    this.leadChoice = -1;
  }

  /**
   * beginStepLead(h) with keepStepLead's choice made now, at t, for a part of the step of h
   * that is to integrate the step's law however short it is (impact-events.ts: the piece
   * that ends a ring the pieces followed once they run out): the servos no halving of h
   * resolves (ForceEffector.unresolvedBy at h/2^MAX_HALVINGS, the joints' inertia at t)
   * take the step's lead on every attempt, chosen by holdStiffForces where the attempt
   * would resolve them. Whether there are any (else the attempts' own lead, as
   * beginStepLead's).
   */
  beginStepLeadAt(t: number, h: number): boolean {
    this.beginStepLead(h);
    this.tangentTime = t;
    this.tangentFactored = false;
    const inverse = this.constraints === null ? undefined : this.jointInverseInertia;
    const candidates = this.stiffCandidates;
    this.stepStiff.length = 0;
    for (let i = 0; i < candidates.length; i++)
      if (candidates[i].unresolvedBy?.(h / 2 ** MAX_HALVINGS, inverse) === true)
        this.stepStiff.push(candidates[i]);
    this.leadChoice = this.stepStiff.length > 0 ? 1 : 0;
    return this.leadChoice === 1;
  }

  /**
   * After holdStiffForces of an attempt of h within the step of beginStepLead: the servos
   * it chose take the whole step's lead, (step/h) times the attempt's, where no halving
   * resolves any of them (every one unresolved at step/2^MAX_HALVINGS; decided at the
   * step's first attempt that has them and kept for its others), else the attempt's own.
   * With each halving's own lead, h_sub/2, a halving weakened the law it was to integrate
   * more finely (its damping δ k_p) and sped the servo's settling up (its rate |q* − q|/δ):
   * the imported 7-axis arm (every servo at k_p = 1e8, k_d = 0, joint2 commanded 0.5 rad at
   * 5 ms) swung through ±5e5 J a sub-step of its second step's twelve (generalized-alpha's
   * error control, whose estimate did not shrink), where its unsplit first step's swing was
   * 1.5e4 J: energy.error 88 J after 60 steps (the joints' impulses' work on those swings),
   * now 2.3 J; at 1e10 107 J, now 1.6 J; under newmark at k_p = 1e10, k_d = 1e7, whose
   * first step Newton halves, 3.3e3 J, now 6.8e2 J. Where a halving can resolve a servo
   * (k_p = 1e6 on that arm) the attempt's own lead stays: the step's on the sub-steps that
   * still do not resolve it, next to those that do and take it with none, toggled its
   * damping by δ k_p from sub-step to sub-step (energy.error −230 J against 0.8 J).
   */
  keepStepLead(h: number): void {
    if (this.stiffHeld === null) return;
    const step = Math.max(this.leadStep, h);
    if (this.leadChoice < 0) {
      this.leadChoice = this.stiffUnresolvedBy(step / 2 ** MAX_HALVINGS) ? 1 : 0;
      this.stepStiff.length = 0;
      if (this.leadChoice === 1) for (const f of this.stiffHeld.stiffForces) this.stepStiff.push(f);
    }
    if (this.leadChoice === 1) this.stiffLead *= step / h;
  }

  /**
   * Whether some servo is unresolved by a time of s (ForceEffector.unresolvedBy: s k_d/Ĩ or
   * s √(k_p/Ĩ) > 1, Ĩ with the joints held) at the current state at t. An explicit kick
   * v += s ü of its force (the θ = 1 schemes' restaggers: theta-scheme.ts restagger,
   * impact-events.ts kick) moves its rate by −s (k_d/Ĩ) q̇, more than the rate itself there:
   * it reverses it where the damped motion only slows (test/engine/integrators/
   * theta-servo-lag.test.ts).
   */
  unresolvedAt(t: number, s: number): boolean {
    const candidates = this.stiffCandidates;
    if (candidates.length === 0) return false;
    // (S factored at t for the joints' inertia, then the step's own start's put back)
    const { tangentTime, tangentFactored } = this;
    this.tangentTime = t;
    this.tangentFactored = false;
    const inverse = this.constraints === null ? undefined : this.jointInverseInertia;
    let found = false;
    for (let i = 0; i < candidates.length && !found; i++)
      found = candidates[i].unresolvedBy?.(s, inverse) === true;
    const moved = this.tangentFactored;
    this.tangentTime = tangentTime;
    this.tangentFactored = tangentFactored && !moved;
    return found;
  }

  /**
   * Whether every servo the last holdStiffForces chose is unresolved by a step of h too
   * (ForceEffector.unresolvedBy, with the joints' inertia at that step's start).
   */
  private stiffUnresolvedBy(h: number): boolean {
    const c = this.stiffHeld;
    if (c === null) return false;
    const inverse = this.constraints === null ? undefined : this.jointInverseInertia;
    const chosen = c.stiffForces;
    for (let i = 0; i < chosen.length; i++)
      if (chosen[i].unresolvedBy?.(h, inverse) !== true) return false;
    return true;
  }

  /**
   * The θ-schemes' symmetric step (theta-scheme.ts, θ = w = ½: Moreau–Jean's smooth step)
   * with servos holdStiffForces chose: λ̃ ← the joints' multipliers consistent with the
   * start's forces less those servos', f(t) − f_s(t) (S = G M⁻¹ Gᵀ at the start,
   * startTangent's; jointMultipliers), `a` kept (StartDirections.shift). Their residual
   * weighs f_s(t) by (1 − w) − ε = 0 and takes the servos at the step's end alone, while λ̃
   * started from the state's multipliers, which hold the joints' reaction to the servos'
   * whole force (at x at the run's start, theta-scheme.ts startRun; at z at a (sub-)step's
   * end, consistentMultipliers). Left there, that reaction was Newton's first correction (‖ρ Y Δλ̃‖ = 6.2e13 rad/s² for a
   * velocity servo at k_v = 1e12 starting the 2 kg, 0.6 m rod hinged at its end from rest
   * towards 5 rad/s, h/16 of 1/60 s), against which the second (1.9 rad/s²) read as a
   * contraction of 3e-14 and was accepted: the end rate 2.1e-6 rad/s past the law's root,
   * its force −2.1e6 N·m where 1.15e3 N·m turned the rod, booked 5.5e3 J (the position
   * servo at k_p = 1e12 from 0.3 rad: 3.1e7 J). As generalized-alpha's (shiftStiffStart).
   * Called by `solve` (those schemes call no shiftStiffStart, which clears it), the system
   * at the step's start.
   */
  private dropStiffReaction(c: SchemeCoefficients): void {
    this.stiffReactionPending = false;
    const { f, fStart, stiffStart, da, n } = this;
    for (let i = 0; i < n; i++) f[i] = fStart[i] - stiffStart[i];
    // (da: scratch for the unknown's share, which stays where it is)
    da.fill(0);
    this.restartJointForce(c, f, da);
  }

  /**
   * λ̃ ← the joints' multipliers consistent with the generalized force f (less the
   * Rayleigh terms, subtracted here in place) at the step's start (tangentTime, S factored
   * there), and `unknown` += ρ Y Δλ̃ (StartDirections.shift).
   */
  private restartJointForce(c: SchemeCoefficients, f: Float64Array, unknown: Float64Array): void {
    const set = this.constraints;
    if (set === null) return;
    if (!this.tangentFactored) {
      projectionWorkspace(set).factorAt(this.tangentTime);
      this.tangentFactored = true;
    }
    getVelocity(this.sys, this.v);
    this.subtractRayleigh(c, f);
    const change = this.scratchLambda;
    this.jointMultipliers(f, this.tangentTime, change);
    const held = this.startDirections.lambda;
    for (let r = 0; r < change.length; r++) change[r] -= held[r];
    this.startDirections.shift(change, c.startForceWeight, unknown);
  }

  /**
   * With servos holdStiffForces chose (ε = c.stiffWeight > 0), after the integrator set its
   * predictors and Newton's guess (newmark, generalized-alpha, which carry a_t = M⁻¹ f(t)):
   *
   * (1) The start's −ε M⁻¹ f_s(t) moves from the unknown into the predictors: with
   * a' = a + ε M⁻¹ f_s(t), Δx_pred −= c_x ε M⁻¹ f_s(t), v_pred −= c_v ε M⁻¹ f_s(t) and the
   * residual M a' = f(t+h) + ε f_s(t+h) (stiffShifted): the same step, but Newton's test,
   * which scales with ‖a‖∞, no longer with that constant. A PD servo k_p = 1e9 N·m/rad,
   * k_d = 5e7 N·m·s/rad on the 0.24 kg·m² rod hinged at its end (2 kg, 0.6 m), commanded
   * 0.3 rad away at 1/60 s, held ‖a‖∞ at 5e9 rad/s² where the step changes the rate by
   * 300 rad/s², and generalized-alpha accepted a first step that left the hinge open by
   * 15 mm (the joint check scales the same way), whose projected end then started the next
   * step 2e9 N·m off, which failed even at h/16.
   *
   * (2) Where the servos' start force alone would move Newton's first iterate by more than
   * GUESS_SHARE_LIMIT (its share of the position update, c_x (1 + ε) M⁻¹ f_s(t)), that
   * iterate is taken without it: a' −= (1 + ε) M⁻¹ f_s(t). With symmetricJoints λ̃ then
   * restarts, at every step with such servos, from the multipliers consistent with the
   * forces the unknown's free part b holds, f(t) (less f_s(t) where dropped): a new memory's
   * λ̃ starts from those of the whole start force, and a later step's from the last end's, of
   * the law that step applied at z = x + δ v and before the joints' projection, which
   * differ from f(t)'s by the reaction to δ k_p q̇ and to k_p times the projection's move. On
   * a chain with such a servo on every joint (three links about x, y, x, k_p = 1e8 and 1e10,
   * k_d = 0, the middle one commanded 0.5 rad at 5 ms) Newton diverged from the second step
   * at h and each halving (test/engine/integrators/servo-chain.test.ts); the rod hinged at
   * its end, whose base does not turn, ran. Left in λ̃,
   * the reaction to the dropped force, k_p q* on the hinged rod below, was what Newton's first
   * correction took out (‖ρ Y Δλ̃‖ = 7.5e10 rad/s² at k_p = 1e10): the second, 49 rad/s²,
   * then read as a contraction of 6.5e-10 and the step was accepted with the servo's z
   * 2.1e-4 rad past its target, its end law −2.1e6 N·m where 259 N·m turned the rod (the
   * hinge took the difference along its start directions; energy.error 3.1e5 J, 3.1e7 J
   * at 1e12). Newmark's constrained memory (below) takes P M⁻¹ f_s(t) out, P the
   * mass-orthogonal projection onto the joints' tangent at the start. The carried a_t guesses that
   * a servo ends the step with the force it starts with; one the step does not resolve
   * settles or turns within the step, so a large start force says nothing of its end (the
   * converged step does not depend on it: at β = ¼, γ = ½ its weight in x_{t+h} is
   * h²((½ − β) − β ε) = 0), and it threw the first iterate far off: k_p = 1e10,
   * k_d = 5e8 on that rod starts at 3e9 N·m, whose ½ h² M⁻¹ f_s turned the rod by 8.7e5 rad,
   * from where Newton failed even at h/16 (generalized-alpha) or converged on a
   * configuration turned the wrong way (newmark: q = −2.4 rad at −1.1e4 rad/s after the
   * first step, where the step's own solution is 0.043 rad at 5.1 rad/s). Only there: a
   * servo holding a load keeps its force from step to step, and its carried guess is the
   * good one (without it the resting rod under k_p = 2e5, k_d = 200 at 1 ms crept at 3e-8
   * rad/s: each step's Newton, 47 rad/s² off at its start, stopped on the same side).
   *
   * `memory`, newmark's a_t (at the velocity level M⁻¹ (f_t + G_tᵀλ_t), which holds the
   * joints' reaction to the servos' start force too): the start share taken out is the
   * constrained P M⁻¹ f_s(t) (startTangent), the servos' force and the reaction to it. With
   * M⁻¹ f_s(t) the reaction's (1 − γ) h G_tᵀλ_s stayed in the step, a joint impulse at the
   * start's configuration that the converged end force then balanced: on the rod hinged at its
   * end (2 kg, 0.6 m, 1/60 s, k_d = 0) its work on the mean velocity read energy.error
   * −1.0 J (k_p = 1e4) to −1.25e8 J (1e12) from the first step, −5e-6 J now; and a first
   * step from it failed or ran away from k_p = 1e14 (the pendulum example commanded past its
   * limit, q = −2.3 rad then −118 rad), which now run to k_p = 1e18 and fail from 1e21.
   *
   * (3) `memory`'s `servoPosition` (newmark's κ = h² (½ − β/γ)): Newmark's position update
   * reads x_{t+h} = x_t + h v_t + μ (v_{t+h} − v_t) + κ a_t, μ = c_x/c_v, so κ M⁻¹ f_s(t) of
   * the servos' start force stays in it after (1) wherever β ≠ γ/2 (generalized-alpha's
   * default, κ = 0). The lead δ = h − μ (holdStiffForces) makes z = x + δ v backward
   * Euler's only without it; with it, ~k_p times the servo's error, newmark at β = 0.3,
   * γ = ½ (κ = −0.1 h²) threw a velocity servo's first step (k_v = 1e4 on the 2 kg, 0.6 m rod
   * hinged at its end, 5 rad/s, 1/60 s) to q = −2.66 rad at −2.49 rad/s (backward Euler's
   * 4.99 rad/s), a position servo on the rod hinged at its centre diverged from
   * h √(k_p/I) = 6.8 (k_p = 1e4) on, at k_p = 1e8 in two steps, and the 3-link servo chain
   * at k_p = 1e8 in its second step. So κ's term is taken out along the servos' force
   * d = f_s(t): Δx_pred −= κ Π a_t, Π = P M⁻¹ d dᵀ/(dᵀ P M⁻¹ d), the mass-orthogonal
   * projection onto P M⁻¹ d (y, the share's direction, held in tmp). Π takes out the start
   * force's share whole (Π y = y) and leaves κ (a_t − Π a_t), bounded by κ times the other
   * forces' acceleration. Not the share alone: a servo holding a load at rest has
   * d·a_t = 0 (its coordinate does not accelerate), where Π a_t = 0 keeps Newmark's rest a
   * fixed point; with κ M⁻¹ f_s(t) taken out there (the load's −κ a_load kept) the chain's
   * middle servo came to rest on its z at a rate of h (β/γ − ½) m g r/I = −3.5e-3 rad/s
   * that its coordinate never moved by (q 7e-6 rad off its rest).
   * `constrainedMemory` false: `memory` is generalized-alpha's free acceleration M⁻¹ f
   * (its form at Newmark's (β, γ), newmark.ts `alphaForm`), the joints' reaction in λ̃
   * instead: (1) with M⁻¹ f_s(t), and (3) takes Π P a_t and the share's normal part
   * κ (M⁻¹ − P M⁻¹) f_s(t) whole (see the body). With Π a_t of the free memory the chain's
   * middle servo rested 7e-6 rad off its static pose; with Π P a_t alone the velocity
   * servo's first step on the rod hinged at its end ended at q = −16.9 rad.
   */
  shiftStiffStart(
    c: SchemeCoefficients,
    memory: Float64Array | null = null,
    servoPosition = 0,
    constrainedMemory = true,
  ): void {
    this.stiffShifted = false;
    this.stiffReactionPending = false;
    const e = c.stiffWeight;
    if (e === 0) return;
    const { sys, tmp, a, dxPred, vPred, stiffStart, n } = this;
    const projected = memory !== null && constrainedMemory && this.constraints !== null;
    if (projected) this.startTangent(stiffStart, tmp);
    else massSolve(sys, stiffStart, tmp);
    // κ Π a_t = κ (d·a_t / d·y) y (see (3)); d·y = dᵀ P M⁻¹ d ≥ 0, 0 only where y = 0. A
    // free memory a_t = M⁻¹ f (generalized-alpha's form of newmark: `constrainedMemory`
    // false), whose joints' reaction is not in a_t but in λ̃: its tangential part P a_t
    // (d·P a_t = yᵀ M a_t, P M⁻¹ symmetric) as the constrained memory's, Π P a_t, 0 for a
    // servo holding a load at rest, and the servos' own share's normal part
    // κ (M⁻¹ d − y) whole, which λ̃ would otherwise take out with its velocity weight; y
    // then in f (scratch until computeForces below)
    let along = 0;
    let normal = 0;
    let y = tmp;
    if (memory !== null && servoPosition !== 0) {
      let dy = 0;
      let da = 0;
      if (!projected && this.constraints !== null) {
        normal = servoPosition;
        y = this.f;
        this.startTangent(stiffStart, y);
        const my = this.da;
        massMultiply(sys, y, my);
        for (let i = 0; i < n; i++) {
          dy += stiffStart[i] * y[i];
          da += my[i] * memory[i];
        }
      } else
        for (let i = 0; i < n; i++) {
          dy += stiffStart[i] * tmp[i];
          da += stiffStart[i] * memory[i];
        }
      if (dy > 0) along = (servoPosition * da) / dy;
    }
    let share = 0;
    for (let i = 0; i < n; i++) {
      dxPred[i] -= c.cx * e * tmp[i] + along * y[i] + normal * (tmp[i] - y[i]);
      vPred[i] -= c.cv * e * tmp[i];
      a[i] += e * tmp[i];
      share = Math.max(share, Math.abs(c.cx * (1 + e) * tmp[i]));
    }
    this.stiffShifted = true;
    // P tmp is no larger than tmp in the mass norm; the free share decides whether to look
    const drop = share > GUESS_SHARE_LIMIT;
    if (drop) for (let i = 0; i < n; i++) a[i] -= (1 + e) * tmp[i];
    // symmetricJoints: a = b + ρ Y λ̃, b = A_n the free acceleration at x_t (less the servos'
    // (1 + ε) M⁻¹ f_s(t) where dropped); λ̃ restarts from the multipliers consistent with the
    // same forces, f(t) (− f_s(t)), b kept
    if (projected || !c.symmetricJoints || this.constraints === null) return;
    const f = this.f;
    this.computeForces(this.tangentTime, f);
    if (drop) for (let i = 0; i < n; i++) f[i] -= stiffStart[i];
    this.restartJointForce(c, f, a);
  }

  /**
   * gᵀ P M⁻¹ g for a generalized force g at the step's start (ForceEffector.unresolvedBy):
   * the inverse inertia the joints leave along g, gᵀ M⁻¹ g less (G M⁻¹ g)ᵀ S⁻¹ (G M⁻¹ g)
   * (startTangent). A field, made once (holdStiffForces passes it).
   */
  private readonly jointInverseInertia = (g: Float64Array): number =>
    heldInverseInertia(this.sys, this.startWorkspace(), g, this.tmp, this.rc, this.da);
  /** The step's start time and whether S is factored there (startTangent). */
  private tangentTime = 0;
  private tangentFactored = false;

  /**
   * out ← P M⁻¹ g: M⁻¹ g projected mass-orthogonally onto the joints' tangent at the step's
   * start (holdStiffForces' t), M⁻¹g + du with du = −M⁻¹Gᵀ S⁻¹ G M⁻¹ g
   * (ProjectionWorkspace.correction), S = G M⁻¹ Gᵀ factored there once a step; M⁻¹ g
   * without joints. Uses da and rc.
   */
  private startTangent(g: Float64Array, out: Float64Array): void {
    massSolve(this.sys, g, out);
    const ws = this.startWorkspace();
    if (ws !== null) jointTangent(ws, out, this.rc, this.da);
  }

  /**
   * The joints' projection workspace with S factored at the step's start (tangentTime),
   * factored there once a step; null without joints (startTangent, jointInverseInertia).
   */
  private startWorkspace(): ProjectionWorkspace | null {
    const set = this.constraints;
    if (set === null) return null;
    const ws = projectionWorkspace(set);
    if (!this.tangentFactored) {
      ws.factorAt(this.tangentTime);
      this.tangentFactored = true;
    }
    return ws;
  }

  /**
   * out = the force the last (sub-)step applied to the unresolved servos (holdStiffForces)
   * beyond the scheme's (1 − w) f_s(t_start) + w f_s(t), at the current state (its end):
   * (1 − w)(f_s(t) − stiffStart), their weight in its velocity update being 1, not w, plus
   * their lead's end force f_s^δ(t) − f_s(t) (weight 1): the energy balance books their work
   * as applied (simulation/step-work.ts). False (out untouched) when that step had none.
   */
  stiffForceChange(t: number, w: number, out: Float64Array): boolean {
    const c = this.stiffHeld;
    const kept = this.stiffKeptDofs;
    if (c === null && (kept === null || this.stiffKept.length === 0)) return false;
    if (c === null) out.fill(0);
    else this.stiffApplied(c.stiffForces, this.stiffLead, this.stiffStart, t, w, out);
    if (kept !== null) {
      // a kept sub-step that resolved its servos held none: nothing beyond the scheme's
      // weights on its dofs (stiffApplied of no effectors read −(1 − w) stiffKeptStart, the
      // start force of the last keepStiffFor that had any: an undamped servo's rod, h ω = 4,
      // beside a bob resting on the floor, whose step ended with a resolved h/16 sub-step,
      // booked −95 J of energy.error on it; moreau-jean.test.ts)
      const tmp = this.stiffEnd;
      if (this.stiffKept.length === 0) tmp.fill(0);
      else this.stiffApplied(this.stiffKept, this.stiffKeptLead, this.stiffKeptStart, t, w, tmp);
      for (let i = 0; i < this.n; i++) if (kept[i] === 1) out[i] = tmp[i];
    }
    return true;
  }

  /** out = (1 − w)(f(t) − start) + f^δ(t) − f(t) of the effectors `chosen` (stiffForceChange). */
  private stiffApplied(
    chosen: readonly ForceEffector[],
    lead: number,
    start: Float64Array,
    t: number,
    w: number,
    out: Float64Array,
  ): void {
    const led = this.stiffLed;
    this.stiffForcesNow(chosen, t, out);
    this.leadStiff(chosen, lead);
    this.stiffForcesNow(chosen, t, led);
    this.leadStiff(chosen, 0);
    for (let i = 0; i < this.n; i++) out[i] = (1 - w) * (out[i] - start[i]) + led[i] - out[i];
  }

  /** The lead δ of the effectors `chosen` (ForceEffector.leadStiffness; 0: none). */
  private leadStiff(chosen: readonly ForceEffector[], lead: number): void {
    for (let i = 0; i < chosen.length; i++) chosen[i].leadStiffness?.(lead);
  }

  /**
   * Keeps, for the dofs of `dofs` (1 by dof), the unresolved effectors of the (sub-)step just
   * taken and their start force, for stiffForceChange after a later holdStiffForces: Moreau–
   * Jean's groups apart end their step with their smooth step's last sub-step, while the
   * contact step that follows holds its own (moreau-jean.ts, smoothApart; their last
   * sub-step's work is weighed with the step's end). Null: none kept (each step's start).
   */
  keepStiffFor(dofs: Uint8Array | null): void {
    this.stiffKeptDofs = dofs;
    this.stiffKept.length = 0;
    if (dofs === null || this.stiffHeld === null) return;
    const chosen = this.stiffHeld.stiffForces;
    for (let i = 0; i < chosen.length; i++) this.stiffKept.push(chosen[i]);
    this.stiffKeptStart.set(this.stiffStart);
    this.stiffKeptLead = this.stiffLead;
  }

  /** out = the generalized force of the effectors `chosen` at the current state and time t. */
  private stiffForcesNow(chosen: readonly ForceEffector[], t: number, out: Float64Array): void {
    clearForces(this.sys);
    for (let i = 0; i < chosen.length; i++) chosen[i].applyForces(t);
    getForces(this.sys, out);
  }

  /**
   * out −= M⁻¹ (ε (f_s^δ(t_end) − stiffStart) + f_s^δ(t_end) − f_s(t_end)), ε = c.stiffWeight,
   * f_s^δ with the servos' lead (holdStiffForces): the part of a solved step's `a` that
   * holdStiffForces' extra weight and the lead put there (newmark's and generalized-alpha's
   * memory, which must stay M⁻¹ f of the end state: the weight's share of the next step is
   * its own). With momentum rows, after endFreeRates: the turning bodies' rotational rows
   * of `out` then hold I_end⁻¹ f_end from the residual's forces (momentumRows), which have
   * the lead but not the weight's share, so only the lead's, I_end⁻¹ (f_s^δ − f_s), is taken
   * out there (M⁻¹ is block-diagonal by body). Taking the whole share before endFreeRates
   * left the lead's force in generalized-alpha's memory: the next step's start took
   * f_s^δ = k_p (q* − q) − δ k_p q̇ for f_s with the weight ½, where the servo was resolved
   * (the 2 kg, 0.6 m rod turning about its centre at k_p = 1e4, 1/60 s: its sub-steps of
   * h/8 after one of h/4 started from 110.6 N·m for 637.6, energy.error −19.4 J).
   * `constrainedMemory` (newmark's velocity-level a = M⁻¹ (f + Gᵀλ), λ the joints' reaction
   * to the whole force): the share is taken out as P M⁻¹ (…), P the mass-orthogonal
   * projection onto the joints' tangent at the end (startTangent with S factored there),
   * the share and the joints' reaction to it, so that the memory is the constrained
   * acceleration of the end's own forces, as shiftStiffStart takes the start's share out
   * (M⁻¹ alone left that reaction in a_t, the unconstrained response to k_p-sized forces
   * on the light links: the imported 7-axis arm with every servo at k_p = 1e8, k_d = 0,
   * joint2 commanded 0.5 rad at 5 ms, started its second half step with a first Newton
   * correction of 1e15 and failed the first step even at h/16; it runs now).
   * Leaves the force accumulators with the stiff forces.
   */
  removeStiffShare(
    c: SchemeCoefficients,
    tEnd: number,
    out: Float64Array,
    constrainedMemory = false,
  ): void {
    if (c.stiffWeight === 0) return;
    const { stiffEnd, stiffLed, stiffStart, tmp, n } = this;
    const e = c.stiffWeight;
    this.stiffForcesNow(c.stiffForces, tEnd, stiffEnd);
    this.leadStiff(c.stiffForces, this.stiffLead);
    this.stiffForcesNow(c.stiffForces, tEnd, stiffLed);
    this.leadStiff(c.stiffForces, 0);
    // shifted: a' = M⁻¹ (f + ε f_s(t_end)) (shiftStiffStart); the lead's share f_s^δ − f_s
    // into stiffLed
    const start = this.stiffShifted ? 0 : e;
    for (let i = 0; i < n; i++) {
      const lead = stiffLed[i] - stiffEnd[i];
      stiffEnd[i] = e * stiffLed[i] - start * stiffStart[i] + lead;
      stiffLed[i] = lead;
    }
    if (c.momentumRows) {
      const { sys, turning } = this;
      for (let k = 0; k < turning.length; k++) {
        const d = sys.dofOffset[turning[k]] + 3;
        for (let j = 0; j < 3; j++) stiffEnd[d + j] = stiffLed[d + j];
      }
    }
    if (constrainedMemory && this.constraints !== null) {
      // S at the end configuration (the next holdStiffForces sets the next start's)
      this.tangentTime = tEnd;
      this.tangentFactored = false;
      this.startTangent(stiffEnd, tmp);
    } else massSolve(this.sys, stiffEnd, tmp);
    for (let i = 0; i < n; i++) out[i] -= tmp[i];
  }

  /**
   * Puts the system back at the start of the step: the configuration `beginStep` saved
   * and the velocities vt (an integrator redoing a step, step-halving.ts).
   */
  restoreStart(vt: Float64Array): void {
    restorePositions(this.sys, this.start);
    setVelocity(this.sys, vt);
    // Newton's λ̃ from the start's multipliers again, not the rejected attempt's end: on the
    // whip example (generalized-alpha, 1/240 s) a sub-step of h/4 retried after a rejected
    // h/2 started from multipliers 4 times too large (|Δλ| 281 against 66), converged to a
    // wrong root with its joints closed and its error estimate within the tolerance, and
    // gained 5.56 J (+9.8 J by 60 s; −0.10 J with the start's λ̃)
    this.lambda.set(this.startLambda);
    // the start's angles again (guideAngles): a halved step's start may be a sub-step's,
    // turned by more than π since the last step boundary
    const angles = this.angles;
    for (let j = 0; j < angles.length; j++) angles[j].guideStart();
  }

  /**
   * The joints' angle coordinates (joint-coordinate.ts) unwrap a reading φ ∈ (−π, π] on the
   * branch nearest the last step boundary's angle, which a step turning a joint by π or
   * more misses (a rod spun at 650 rad/s on a hinge reads its angle 2π off at h = 5 ms, a
   * servo on it runs away). So each configuration a step places is told its angles,
   * q_t + g_t · Δx (the start's value and Jacobian, Δx the increment from the start, a
   * rotation vector per rigid body: exact for a rotation about the joint's axis, and
   * within π of the truth for any step Newton resolves), and q is read on the branch
   * nearest that (JointCoordinate.guide). `beginStep` holds the start's
   * (JointCoordinate.holdStart); applyUnknown guides each iterate (guideFrom).
   */
  private guideAngles(inc: Float64Array): void {
    const angles = this.angles;
    for (let j = 0; j < angles.length; j++) angles[j].guideFrom(inc);
    this.anglesGuided = true;
  }

  /**
   * Coefficients that leave the state where it is (x_t, v_t = vt: Δx_pred = 0,
   * v_pred = vt, c_x = c_v = 0, the guess a = 0), with end-of-step forces and the given
   * Rayleigh damping: the start of an acceleration memory computed from the state
   * (newmark.ts, generalized-alpha.ts).
   */
  holdState(vt: Float64Array, rayleighMass: number, rayleighStiffness: number): SchemeCoefficients {
    this.dxPred.fill(0);
    this.vPred.set(vt);
    this.a.fill(0);
    const c = this.holdCoefficients;
    c.w = 1;
    c.rayleighMass = rayleighMass;
    c.rayleighStiffness = rayleighStiffness;
    return c;
  }

  /**
   * out ← −(r_M M + r_K K) v (N, N·m) at the current state, v the bodies' velocities and
   * K = −∂f/∂x: the Rayleigh damping force the residual takes (subtractRayleigh), for the
   * energy balance (step-work.ts, after a step or sub-step: W, which K overwrites, is
   * assembled again before its next use).
   */
  rayleighForce(rayleighMass: number, rayleighStiffness: number, out: Float64Array): void {
    const { tmp, kv, n } = this;
    getVelocity(this.sys, tmp);
    out.fill(0);
    if (rayleighMass !== 0) {
      this.iteration.massTimes(tmp, kv);
      for (let i = 0; i < n; i++) out[i] -= rayleighMass * kv[i];
    }
    if (rayleighStiffness !== 0) {
      this.iteration.stiffnessTimes(tmp, kv);
      for (let i = 0; i < n; i++) out[i] -= rayleighStiffness * kv[i];
    }
  }

  /** Remembers the configuration at t (call before `solve`). */
  beginStep(): void {
    savePositions(this.sys, this.start);
    this.startLambda.set(this.lambda);
    this.meanStep = false;
    this.weldStep = 0;
    this.cayleyStep = 0;
    this.meanRateRows = false;
    // the angle coordinates' start (guideAngles)
    const angles = this.angles;
    for (let j = 0; j < angles.length; j++) angles[j].holdStart();
    this.anglesGuided = false;
    if (this.dynamicEffectors.length === 0) return;
    for (const e of this.dynamicEffectors) {
      e.beginStep();
      e.addSolveBlocks(this.matrix);
    }
    this.matrix.finalize();
  }

  /**
   * Sets positions x_t ⊕ (Δx_pred + c_x a) and velocities v_pred + c_v a (with
   * symmetricJoints, plus κ Y λ̃, then projected onto G v = −Ct at the new positions).
   */
  applyUnknown(c: SchemeCoefficients, a: Float64Array): void {
    const { inc, v, n, dxPred, vPred } = this;
    const { cx, cv } = c;
    for (let i = 0; i < n; i++) {
      inc[i] = dxPred[i] + cx * a[i];
      v[i] = vPred[i] + cv * a[i];
    }
    const set = this.constraints;
    const symmetric = c.symmetricJoints && set !== null;
    if (symmetric) {
      const k = c.startVelocityWeight;
      const y = this.startDirections.accel;
      for (let i = 0; i < n; i++) v[i] += k * y[i];
    }
    if (this.cayleyStep > 0) this.cayleyTurn(this.cayleyStep);
    setPositionsFrom(this.sys, this.start, inc, 1);
    if (this.angles.length > 0) this.guideAngles(inc);
    if (symmetric && c.momentumRows && c.w === 0) this.turnRates(c, v);
    setVelocity(this.sys, v);
    if (symmetric) {
      // the turning bodies' rates before the projection (momentumRows)
      const { sys, turning, rawRate } = this;
      for (let k = 0; k < turning.length; k++) {
        const d = sys.dofOffset[turning[k]] + 3;
        for (let j = 0; j < 3; j++) rawRate[3 * k + j] = v[d + j];
      }
      // whatever the residual (a negative tolerance): with the projection's 1e-9 m/s
      // tolerance the residual map switched between iterates near the root, leaving κ Y λ̃
      // in v where λ̃'s Newton column assumes it projected out; a servo the step does not
      // resolve (its lead δ k_p q̇ reads that rate) then made Newton converge linearly at
      // rest, its corrections shrinking by 0.75 each (the rod of servos.test, w = 17)
      projectVelocities(
        this.sys,
        set,
        this.tEnd,
        "factor",
        this.endProjection,
        -1,
        false,
        this.endImpulse,
      );
      getVelocity(this.sys, v);
    }
  }

  /**
   * out += the joints' impulse Λ (N s, N m s per row) of the step of coefficients c just
   * solved, M (v_{t+h} − v_t) = c_v f̄ + Gᵀ Λ: at the velocity level Λ = c_v λ (λ the
   * step's mean force); with symmetricJoints Λ = (c_v ρ + κ) λ̃ + μ, the force ρ M Y λ̃
   * along the start configuration (its G_t) weighed on v by c_v ρ + κ = hθ, and the end
   * projection's μ (along G at the end, applyUnknown). The rows' G differ between the
   * two (exact where G's translational part is fixed: a point's coincidence, a slider's
   * axis). Before consistentMultipliers overwrites λ.
   */
  addJointImpulse(c: SchemeCoefficients, out: Float64Array): void {
    if (this.constraints === null) return;
    if (!c.symmetricJoints) {
      for (let r = 0; r < out.length; r++) out[r] += c.cv * this.lambda[r];
      return;
    }
    const k = c.cv * c.startForceWeight + c.startVelocityWeight;
    const lt = this.startDirections.lambda;
    for (let r = 0; r < out.length; r++) out[r] += k * lt[r] + this.endImpulse[r];
  }

  /**
   * The work (J) the joints' impulse of the step just solved with coefficients c
   * (addJointImpulse's Λ) does on the velocity `mean`, over the rows of `rows` (1; null: all)
   * that do not depend on time (the motors' is their own: takeMotorWork). At the velocity
   * level Λ = c_v λ along the G of the last iterate, Σ_r c_v λ_r (G v̄)_r; with
   * symmetricJoints (c_v ρ + κ) λ̃ along G_t and the end projection's μ along G_end (the
   * set's Jacobian at the end state, its velocity projection's),
   * Σ_r (c_v ρ + κ) λ̃_r (G_t v̄)_r + μ_r (G_end v̄)_r. With v̄ = ½ (v_t + v_{t+h}) it is their
   * share of the step's kinetic energy change, M (v_{t+h} − v_t) = c_v f̄ + Gᵀ Λ + …: ½ Λᵀ
   * G v_t at the velocity level (G v_{t+h} = 0), not 0 where the step turns G.
   */
  jointImpulseWork(c: SchemeCoefficients, mean: Float64Array, rows: Uint8Array | null): number {
    const set = this.constraints;
    if (set === null) return 0;
    const { rc, ct } = this;
    set.multiply(mean, ct);
    const symmetric = c.symmetricJoints;
    if (symmetric) this.startDirections.startRates(mean, rc);
    const k = c.cv * c.startForceWeight + c.startVelocityWeight;
    const lt = this.startDirections.lambda;
    let work = 0;
    for (let r = 0; r < ct.length; r++) {
      if ((rows !== null && rows[r] === 0) || set.constraints[set.rowConstraint[r]].timeDependent)
        continue;
      work += symmetric
        ? k * lt[r] * rc[r] + this.endImpulse[r] * ct[r]
        : c.cv * this.lambda[r] * ct[r];
    }
    return work;
  }

  /**
   * A consistent start for a step whose integrator memory is new (t = 0, a reset, a state
   * written from outside): the velocities projected onto the joints' velocity constraints
   * G v = −Ct at t where they violate them, in the mass metric (the impulse the joints and
   * motors apply: a motor that sets its joint's rate from rest), and the kinetic energy that
   * changes counted in removedEnergy (negative: a motor's impulsive work), as the
   * articulated integrator counts its start. Velocities consistent to START_TOLERANCE are
   * left as they are: what a step's own projection leaves (1e-9 relative to the residual
   * before it) is no start to make, and a PATCH that renews the memory changes nothing.
   */
  consistentStart(t: number): void {
    const set = this.constraints;
    if (set === null) return;
    const before = kineticEnergy(this.sys);
    projectVelocities(this.sys, set, t, "factor", this.endProjection, START_TOLERANCE, false);
    this.removedEnergy += before - kineticEnergy(this.sys);
  }

  /**
   * The dofs (1) whose kinetic energy decayVelocities counts in removedEnergy, or null: all.
   * Moreau–Jean steps the jointed groups apart from its contacts in a smooth step of their
   * own and the rest in its contact step, each decaying every velocity and keeping its own
   * bodies' (moreau-jean.ts, markApart): each counts its own bodies' decay. M has no block
   * between two such groups (a consistent mass joins its bodies in one), so ½ vᵀ M v is the
   * sum of the groups' ½ v_gᵀ M_g v_g.
   */
  decayCounted: Uint8Array | null = null;

  /**
   * v ← v·exp(−h·rate) for the system's velocities (SOFA's velocity decay,
   * solver.velocityDamping in 1/s) after a step of h; nothing for rate 0.
   */
  decayVelocities(h: number, rate: number): void {
    if (rate === 0) return;
    const k = Math.exp(-h * rate);
    const { v, tmp, n } = this;
    getVelocity(this.sys, v);
    // the kinetic energy it takes out, ½ vᵀ M v (1 − k²): the energy balance's (removedEnergy),
    // over the dofs of decayCounted
    this.iteration.massTimes(v, tmp);
    const counted = this.decayCounted;
    let twice = 0;
    if (counted === null) for (let i = 0; i < n; i++) twice += v[i] * tmp[i];
    else for (let i = 0; i < n; i++) if (counted[i] === 1) twice += v[i] * tmp[i];
    this.removedEnergy += 0.5 * twice * (1 - k * k);
    for (let i = 0; i < n; i++) v[i] *= k;
    setVelocity(this.sys, v);
  }

  /**
   * symmetricJoints: starts the step's joint force (StartDirections.begin) at time t, and
   * chooses the turning bodies whose rotational rows are in angular momentum (momentumRows,
   * momentumBody): with end forces (w > 0) all of them; under symplectic Euler (w = 0) the
   * jointed ones (jointedTurning; the free bodies' midpoint rate keeps their energy exactly,
   * holdStartForces, and the free welded groups are placed as one body, placeWelded).
   */
  beginStartDirections(t: number, c: SchemeCoefficients): void {
    const { sys, turning, startInertia, startGyroscopic, momentum, momentumBody } = this;
    // with joints at the position level and the gyroscopic torque only (without it the
    // model's rotation is I ω̇ = τ, which that form is not)
    c.momentumRows =
      c.symmetricJoints &&
      this.constraints !== null &&
      c.cv > 0 &&
      this.gyroscopic &&
      this.turning.length > 0;
    let any = false;
    for (let k = 0; k < turning.length; k++) {
      // (the free bodies at θ = w = ½ take the midpoint rule instead: holdStartForces)
      const free = c.w === 0 || (c.meanRates && this.midpointTurn(k));
      const on = c.momentumRows && (this.jointedTurning[k] === 1 || !free);
      momentumBody[turning[k]] = on ? 1 : 0;
      any ||= on;
    }
    c.momentumRows = any;
    this.startDirections.begin(t, this.lambda, c, momentumBody);
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      for (let j = 0; j < 9; j++) startInertia[9 * k + j] = sys.inertiaWorld[9 * b + j];
      mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
      cross3(startGyroscopic, 3 * k, sys.omega, 3 * b, momentum, 0);
    }
  }

  /**
   * λ ← the joint multipliers consistent with the current state (N, N·m): M ü = f + Gᵀλ
   * with G ü = Qc, i.e. λ = S⁻¹ (Qc − G M⁻¹ f_eff), S = G M⁻¹ Gᵀ factored at the current
   * configuration by the last velocity projection of symmetricJoints (f_eff: the forces
   * less the Rayleigh terms). The reactions a state reports, free of the step's iteration.
   * `factor`: S is factored here first, at G(x, t) (a step that leaves no factorization
   * at its end state: newmark's velocity-level joints, newmark.ts). `out`: where λ goes.
   * `stepped` (the default): the servos the step did not resolve (c.stiffForces) with its
   * lead, the law its Newton iterations applied (holdStiffForces), as the State's effort;
   * false: at x (a memory's acceleration, constrainedAcceleration). At x the θ-schemes' end
   * read k_p δ q̇ of a servo settling within the step: the 2 kg, 0.6 m rod hinged at its end,
   * k_p = 1e12, commanded 0.3 rad at 1/60 s, came to rest (8e-9 rad/s) in the first step's
   * sub-steps with the hinge's reaction reported 87 N where its law at z turned it by 1e-4
   * N·m (the reaction 2.5e-4 N).
   */
  consistentMultipliers(
    c: SchemeCoefficients,
    t: number,
    factor = false,
    out: Float64Array = this.lambda,
    stepped = true,
  ): void {
    const set = this.constraints;
    if (set === null) return;
    if (factor) projectionWorkspace(set).factorAt(t);
    const { f } = this;
    this.endForces(c, t, f, stepped);
    this.subtractRayleigh(c, f);
    this.jointMultipliers(f, t, out);
  }

  /**
   * out ← S⁻¹ (Qc − G M⁻¹ f) (N, N·m): the joints' multipliers consistent with the
   * generalized force f at the current configuration and time t, S factored there (its
   * projection workspace's); leaves M⁻¹ f in tmp (constrainedAcceleration).
   */
  private jointMultipliers(f: Float64Array, t: number, out: Float64Array): void {
    const set = this.constraints as ConstraintSet;
    const { tmp, rc } = this;
    massSolve(this.sys, f, tmp);
    set.multiply(tmp, rc);
    set.quadraticTerm(t, this.ct);
    for (let i = 0; i < rc.length; i++) rc[i] = this.ct[i] - rc[i];
    const ws = projectionWorkspace(set);
    ws.ldlt.solve(rc, out);
    // a redundant loop's share: the smallest λ of the same forces, and near a singular
    // configuration of the shares the velocity term alone asks (ProjectionWorkspace)
    ws.minimumNorm(out, this.ct);
  }

  /**
   * out ← the joints' mean force over the step just solved with symmetricJoints, per row
   * (N, N·m): their impulse along the start's directions, (c_v ρ + κ) G_tᵀλ̃ (the force
   * ρ G_tᵀλ̃ of the residual over c_v and κ Y λ̃ on the velocities: applyUnknown), and the
   * end's velocity projection's, G_endᵀ ν = M (v_{t+h} − v'), v' = v_pred + c_v a + κ Y λ̃
   * the velocity before it (ν = S⁻¹ G M⁻¹ M (v_{t+h} − v'), exact: that impulse is in the
   * range of G_endᵀ; S factored at the end configuration by that projection), over h:
   *   λ̄ = ((c_v ρ + κ) λ̃ + ν)/h.
   * For rows whose Jacobian the step does not turn (a joint's translational rows on a
   * body's linear dofs) h Gᵀλ̄ is the joints' whole impulse of the step. Moreau–Jean reports
   * it on a step with impulses (moreau-jean.ts positionJointsTouched), as its contact
   * step's mean joint force.
   */
  meanJointForce(c: SchemeCoefficients, h: number, out: Float64Array = this.lambda): void {
    const set = this.constraints;
    if (set === null) return;
    const { n, v, vPred, a, da, rc } = this;
    const { accel, lambda } = this.startDirections;
    const kappa = c.startVelocityWeight;
    getVelocity(this.sys, v);
    for (let i = 0; i < n; i++) da[i] = v[i] - vPred[i] - c.cv * a[i] - kappa * accel[i];
    // M⁻¹ M (v − v') = v − v'
    set.multiply(da, rc);
    const ws = projectionWorkspace(set);
    ws.ldlt.solve(rc, out);
    const k = c.cv * c.startForceWeight + kappa;
    for (let r = 0; r < out.length; r++) out[r] = (out[r] + k * lambda[r]) / h;
    ws.minimumNorm(out);
  }

  /**
   * group ← the groups (groupRoot, one entry a body) of the dynamic bodies joined by the
   * joints, motors and mimic couplings (their constraints' bodies) or by W's off-diagonal
   * blocks (the force elements' and servos' couplings: the matrix's pattern). In maximal
   * coordinates M is block diagonal per body, so, the contacts left out, the motion of one
   * group does not depend on another's (moreau-jean.ts markApart; impact-events.ts, the
   * servos' rates by group). The ground and fixed bodies join nothing.
   */
  jointGroups(group: Int32Array): void {
    const { sys, matrix } = this;
    this.constraintGroups(group);
    const { rowStart, colBlock } = matrix.pattern;
    for (let bi = 0; bi < sys.blockBody.length; bi++)
      for (let k = rowStart[bi]; k < rowStart[bi + 1]; k++)
        joinGroups(sys, group, sys.blockBody[bi], sys.blockBody[colBlock[k]]);
  }

  /**
   * group ← the groups (groupRoot) of the dynamic bodies joined by the joints, motors and
   * mimic couplings alone (their constraints' bodies): those an impulse reaches in zero
   * time, Δv = P M⁻¹ Hᵀ P with P the projection onto G Δv = 0, block diagonal over these
   * groups (a force element's coupling carries no impulse). The ground and fixed bodies
   * join nothing (impact-events.ts, closeTouching).
   */
  constraintGroups(group: Int32Array): void {
    const { sys, constraints: set } = this;
    for (let b = 0; b < group.length; b++) group[b] = b;
    if (set !== null)
      for (const c of set.constraints) {
        joinGroups(sys, group, c.bodyA, c.bodyB);
        const more = c.moreBodies;
        if (more !== undefined)
          for (let k = 0; k < more.length; k++)
            joinGroups(sys, group, c.bodyA >= 0 ? c.bodyA : c.bodyB, more[k]);
      }
  }

  /**
   * out ← the joint multipliers consistent with the current state at t (N, N·m), with the
   * Rayleigh damping r_M, r_K of the settings (consistentMultipliers, S factored here);
   * `lambda`, the step's own and its Newton's start, is left as it is. The motors' power at
   * a step's start where the state was written since the last step (StepWork), whose
   * `lambda` is the last step's end or, before the first step, zero.
   */
  startMultipliers(t: number, rayleighMass: number, rayleighStiffness: number, out: Float64Array) {
    getVelocity(this.sys, this.v);
    const c = this.startCoefficients;
    c.rayleighMass = rayleighMass;
    c.rayleighStiffness = rayleighStiffness;
    this.consistentMultipliers(c, t, true, out);
  }

  /**
   * out ← the acceleration at the current state with the joints' consistent multipliers,
   * M⁻¹ (f − (r_M M + r_K K) v + Gᵀλ) (m/s², rad/s²), λ into `lambda` (consistentMultipliers,
   * S factored here unless `factor` is false: a step's end, where its velocity projection
   * left it factored); without joints M⁻¹ (f − (r_M M + r_K K) v). A θ-scheme's run starts
   * its error estimate from it (theta-scheme.ts startRun), generalized-alpha's error
   * control measures each step by its change (generalized-alpha.ts rejectedByErrorControl).
   * `stepped`: the servos the step did not resolve (c.stiffForces) measured with the step's
   * lead, at z = x + δ v as its Newton iterations took them (holdStiffForces), not at x:
   * their force at x differs by δ k_p v, which a step of w = h √(k_p/I) ≫ 1 leaves large
   * after a command (the hinged rod at w = 3400 read 100 times stepTolerance there).
   */
  constrainedAcceleration(
    c: SchemeCoefficients,
    t: number,
    out: Float64Array,
    factor = true,
    stepped = false,
  ): void {
    getVelocity(this.sys, this.v);
    const set = this.constraints;
    if (set === null) {
      const f = this.f;
      this.endForces(c, t, f, stepped);
      this.subtractRayleigh(c, f);
      massSolve(this.sys, f, out);
      return;
    }
    // leaves M⁻¹ (f − Rayleigh) in tmp
    this.consistentMultipliers(c, t, factor, this.lambda, stepped);
    set.multiplyTranspose(this.lambda, this.da);
    massSolve(this.sys, this.da, this.inc);
    for (let i = 0; i < this.n; i++) out[i] = this.tmp[i] + this.inc[i];
  }

  /**
   * computeForces at t into out, with `stepped` the servos the step did not resolve
   * (c.stiffForces) at its lead, z = x + δ v, as its Newton iterations took them
   * (holdStiffForces; their reported effort is then that law's).
   */
  private endForces(c: SchemeCoefficients, t: number, out: Float64Array, stepped: boolean): void {
    const lead = stepped && c.stiffWeight !== 0;
    if (lead) this.leadStiff(c.stiffForces, this.stiffLead);
    try {
      this.computeForces(t, out);
    } finally {
      if (lead) this.leadStiff(c.stiffForces, 0);
    }
  }

  /**
   * At the accepted correction `da` of Newton's last iterate (the state applyUnknown left
   * there, which its residual read): lawRounding ← each candidate servo's law there plus
   * its linear change over the correction, τ_k − γ g·Δa, γ = −∂τ/∂(g·a) (ForceEffector
   * .lawGain, its lead's included: the law falls as the coordinate's rate and value rise):
   * the law the step's velocity update applied (endLaws); lawBand ← the rounding of its
   * reading at the end, SERVO_ROUNDING (L_k + γ |g·a|), L_k the law's terms'
   * magnitudes there (ForceEffector.lawScale) and the second its change along the accepted
   * unknown a + Δa from the predictor's state (v_pred + c_v a, x_t + Δx_pred + c_x a).
   * Only where the residual weighs the end forces alone (w = 1, no symmetric joints, whose
   * start directions hold the start's forces): with a start share, (1 − w) f(t) and the
   * unresolved servos' −ε f_s(t) (holdStiffForces) cancel their law's k_d q̇₀ in the
   * residual to its rounding ε k_d q̇₀, which the correction Δa then carries into the model:
   * under moreau-jean (θ = ½) endLaws' rod at k_d = 1e30 had its residual sum to 0 at the
   * rounded end, Δa = 0 and the model the reading's 0 for the 600 N·m applied, and at 1e12
   * the model booked 9.7e-7 J off where the reading left 4.8e-8 J.
   */
  private linearLaws(c: SchemeCoefficients, t: number, da: Float64Array): void {
    if (c.w !== 1 || c.symmetricJoints) return;
    const { a, lawRounding, lawBand } = this;
    const candidates = this.stiffCandidates;
    for (let i = 0; i < candidates.length; i++) {
      const e = candidates[i];
      const tau = e.lawAt?.(t) ?? 0;
      const gain = e.lawGain?.(c.cx, c.cv) ?? 0;
      const step = e.coordinateAlong?.(da) ?? 0;
      lawRounding[i] = tau - gain * step;
      lawBand[i] =
        SERVO_ROUNDING *
        ((e.lawScale?.() ?? 0) + gain * Math.abs((e.coordinateAlong?.(a) ?? 0) + step));
    }
    this.lawsLinear = true;
  }

  /**
   * At the end state of a converged `solve` (t its time): lawRounding ← the linear model of
   * each candidate's law (linearLaws) less the law read at that state, kept where the two
   * differ by no more than the reading's rounding (lawBand), else 0. The end rate
   * v_pred + c_v a cancels where a stiff damper stops a coordinate within the step: a rod
   * spinning at q̇₀ under k_d with h k_d/I ≫ 1 ends at q̇₀ I/(I + h k_d), far below the
   * rounding ε q̇₀ of that sum, and the law read there, k_d times a rounded rate, is off by
   * up to ε k_d q̇₀ of the I q̇₀/h the step applied (a 1 kg·m² rod at 10 rad/s, 1/60 s,
   * k_d = 1e30 read 0: the energy balance booked none of the 50 J it took). Newton's
   * linear model has it from the unknown a, which the step's momentum balance M a = …
   * holds to its solve's precision. Beyond the rounding the model is off itself (the
   * joints' projection of the rates, stiff-rates.ts; a nonlinear law) and the reading stands.
   */
  private endLaws(t: number): void {
    if (!this.newtonConverged || !this.lawsLinear) return;
    const { lawRounding, lawBand } = this;
    const candidates = this.stiffCandidates;
    let any = false;
    for (let i = 0; i < candidates.length; i++) {
      const off = lawRounding[i] - (candidates[i].lawAt?.(t) ?? 0);
      lawRounding[i] = Math.abs(off) <= lawBand[i] ? off : 0;
      any ||= lawRounding[i] !== 0;
    }
    if (any) this.roundingVersion = this.sys.stateVersion;
  }

  /**
   * The work (J) by which the candidate servos' end forces read at the current state fall
   * short of what the last `solve` applied (endLaws), over a (sub-)step of h whose start
   * and end velocities are v0 and v1, the end forces weighed by w as the energy balance
   * weighs them (simulation/step-work.ts): −½ h w Σ δτ g·(v0 + v1). 0 unless the state is
   * still that solve's end.
   */
  lawRoundingWork(h: number, w: number, v0: Float64Array, v1: Float64Array): number {
    if (this.roundingVersion !== this.sys.stateVersion) return 0;
    const candidates = this.stiffCandidates;
    let work = 0;
    for (let i = 0; i < candidates.length; i++) {
      const off = this.lawRounding[i];
      if (off === 0) continue;
      const e = candidates[i];
      const rates = (e.coordinateAlong?.(v0) ?? 0) + (e.coordinateAlong?.(v1) ?? 0);
      work -= 0.5 * h * w * off * rates;
    }
    return work;
  }

  /**
   * Newton iterations on R(a) = 0 from the guess in `this.a` (fStart must hold f at t
   * when c.w < 1). Leaves the system at the end-of-step state of the final `a`.
   * Returns the number of iterations. `newtonConverged` tells whether the last correction
   * met ‖Δa‖∞ ≤ tol (1 + ‖a‖∞), or with joints whether the error it leaves, θ/(1 − θ)
   * ‖Δa‖∞ at the rate θ the corrections show, did (always true for maxIterations = 1, the
   * linearized step); `newtonStalled` whether the iterations ended stuck (below, and with
   * joints two fresh corrections whose rate cannot meet the target within the budget),
   * not merely out of budget.
   *
   * With more than one iteration, no joints and no compliant contacts (whose piecewise
   * linear force a semismooth Newton with full steps resolves in a few iterations, while
   * shortened steps make it wander between branches), each correction is globalized by a
   * backtracking line search on the residual (Armijo on ‖R‖₂: accept a + α Δa when
   * ‖R(a + α Δa)‖ ≤ (1 − 10⁻⁴ α) ‖R(a)‖, else halve α, down to 2⁻⁶; Dennis & Schnabel,
   * "Numerical Methods for Unconstrained Optimization", §6.3). Plain Newton overshoots on
   * stiff geometrically nonlinear springs (h ω ≫ 1, the stiff cloth of the benchmark:
   * a full step then rotates a spring far past the solution and the iterates diverge).
   * Once ‖R‖ is below 1e-8 of the step's first residual or 1e-9 of the forces (‖f‖₂, the
   * terms that cancel in R) the full step is taken: there rounding, not the model, decides
   * whether ‖R‖ still decreases. Unconverged iterations
   * are stalled, rather than out of budget, when ‖R‖ is still above that level and the
   * last iteration failed the search or did not halve ‖R‖ (Newton no longer converging
   * fast: an approximate Jacobian on a strongly nonlinear or indefinite step; going on
   * from such iterates let the stiff cloth blow up even when they had reduced ‖R‖ by
   * 1e3); the iterations then stop at once. A step that ends unconverged, stalled or out
   * of iterations, is redone by the integrator in halves (step-halving.ts).
   *
   * The step-error test (`reference` and `errorRatio` given, newton.stepErrorFraction
   * κ > 0, no joints; Newmark with solver.newtonTolerance unset): a scheme whose local
   * position error is about e_x = errorRatio · c_x ‖a_{t+h} − reference‖∞ (m, rad;
   * Newmark's: Zienkiewicz & Xie, "A simple error estimator and adaptive time stepping
   * procedure for dynamic analysis", Earthquake Eng. Struct. Dyn. 20, 1991,
   * e_x = |β − 1/6| h² ‖a_{t+h} − a_t‖∞, so errorRatio = |β − 1/6|/β and reference = a_t)
   * leaves its Newton iterations once the position error they leave, c_x ‖Δa‖∞, is at
   * most κ e_x: the target becomes max(tol (1 + ‖a‖∞), κ · errorRatio · ‖a − reference‖∞).
   * A step that moves nothing (a static state) keeps the tolerance alone. Jointed systems
   * keep the plain test: their position-level rows must close the joints to it after a
   * converged step (below), and their chord iterations have their own acceptance. Two
   * economies come with the test (an explicit newtonTolerance keeps the plain test, so
   * runs that set it repeat their iterates bit for bit). Under the line search too, a
   * correction that follows a whole one (α = 1) is accepted once the error it leaves,
   * θ/(1 − θ) ‖Δa‖∞, meets the target: Newton converging quadratically, the next
   * correction would be smaller than that (the stiff cloth's last corrections shrink by
   * 1e-2 to 1e-5 each), so it would only confirm the iterate, at the price of a solve.
   * And the Krylov tolerance is kept from oversolving (below).
   *
   * The oversolving safeguard (Kelley, "Iterative Methods for Linear and
   * Nonlinear Equations", SIAM 1995, §6.3: the last solve need be no more accurate than the
   * Newton test): with a symmetric solver on a W whose Jacobians are symmetric positive
   * semidefinite, W ⪰ λ_M I (λ_M the smallest body mass or principal inertia), so a solve
   * to the relative residual η leaves an error ‖e‖∞ ≤ ‖e‖₂ ≤ η ‖R‖₂/λ_M in Δa; η is raised to
   * ½ target λ_M/‖R‖₂ (target at the current iterate) where that is looser, at most to
   * FORCING_MAX. On the stiff cloth of the benchmark the last solve then takes 30 to 45
   * iterations instead of about 75.
   */
  solve(
    c: SchemeCoefficients,
    tEnd: number,
    newton: NewtonSettings,
    reference: Float64Array | null = null,
    errorRatio = 0,
  ): number {
    // the unresolved servos' lead for the iterations only (holdStiffForces)
    const led = c.stiffWeight !== 0 ? c.stiffForces : null;
    if (this.stiffReactionPending && c === this.stiffHeld) this.dropStiffReaction(c);
    if (led !== null) this.leadStiff(led, this.stiffLead);
    try {
      return this.iterate(c, tEnd, newton, reference, errorRatio);
    } finally {
      if (led !== null) this.leadStiff(led, 0);
    }
  }

  /** Newton's iterations of `solve`. */
  private iterate(
    c: SchemeCoefficients,
    tEnd: number,
    newton: NewtonSettings,
    reference: Float64Array | null,
    errorRatio: number,
  ): number {
    const { a, da, r, n } = this;
    // the step-error test's factor on ‖a − reference‖∞ (0: off, the plain tolerance test and
    // none of its economies; see the comment above)
    const stepError =
      reference === null || this.constraints !== null
        ? 0
        : (newton.stepErrorFraction ?? 0) * errorRatio;
    this.tEnd = tEnd;
    const fixedTolerance = newton.linearTolerance ?? null;
    this.linearTolerance = fixedTolerance ?? Math.max(newton.tolerance, LINEAR_TOLERANCE_FLOOR);
    this.linearCap = newton.linearIterations ?? null;
    const search =
      newton.maxIterations > 1 && this.constraints === null && this.dynamicEffectors.length === 0;
    this.iterating = newton.maxIterations > 1;
    let it = 0;
    this.roundingVersion = -1;
    this.lawsLinear = false;
    let rNorm = -1;
    let rFirst = -1;
    this.newtonConverged = newton.maxIterations === 1;
    this.newtonStalled = false;
    // the springs then build the operator's product form with the residual's forces
    this.iteration.announce(c);
    const floor = this.linearTolerance;
    let eta = FORCING_MAX;
    let rPrevious = -1;
    // chord iterations (see CHORD_ITERATIONS): refactor on the first iteration, and
    // after a chord correction whose rate does not promise convergence soon
    let refactor = true;
    let dPrevious = -1;
    // the previous correction's θ (−1: none), for servoLawsSettled's rate
    let thetaPrevious = -1;
    // whether the previous correction was made with a fresh factorization
    let previousFresh = false;
    // ‖Δa‖∞ of the last fresh correction (−1: none yet)
    let dFresh = -1;
    // whether the previous correction was the first or contracted (its θ < 1): a rate
    // measured against a diverging correction (a chord that overshot) means nothing
    let previousContracted = true;
    // whether an earlier correction of this solve measured a rate (see `trusted` below)
    let rated = false;
    // line search: whether the previous correction was taken whole (α = 1), so that this
    // correction's ratio to it is Newton's own contraction rate
    let previousFull = false;
    // with servos the step does not resolve: whether Newton goes on with the fuller matrix
    // (SLOW_CONTRACTION), and whether the previous ratio was slow
    // (c.stiffTermsOnDemand: generalized-alpha; the other schemes take it in every solve)
    this.stiffFull = c.stiffWeight !== 0 && !c.stiffTermsOnDemand;
    const onDemand =
      c.stiffForces.length !== 0 && c.stiffTermsOnDemand && c.cx > 0 && this.constraints !== null;
    let previousSlow = false;
    let previousLate = false;
    // the oversolving safeguard's bound λ_min(W) ≥ λ_M (see the comment above), or 0
    const wFloor =
      stepError > 0 && this.constraints === null && this.iteration.symmetricPositiveDefinite
        ? this.massFloor
        : 0;
    // An affine residual (the positions held, c_x = 0, and every force affine in the
    // velocities: Newmark's central difference of a spring network): R(a + Δa) is then the
    // linear solve's own residual, R(a) − W Δa, so a correction is accepted at once when
    // the solve was exact (a direct one: up to rounding), or when the bound of the error it
    // leaves, ‖R − W Δa‖₂/λ_M (W ⪰ λ_M I, see wFloor), meets the step-error target: one
    // force evaluation and one solve a step, as an explicit scheme, where the general test
    // would evaluate R again only to confirm it. An iterative solve runs until the bound
    // holds (AffineAcceptance, CG's second target), AFFINE_FORCING at most.
    const affine =
      c.cx === 0 &&
      this.affineInVelocity &&
      this.constraints === null &&
      this.dynamicEffectors.length === 0;
    if (affine) eta = AFFINE_FORCING;
    // Explicit forces (w = 0) without the Rayleigh stiffness's K v: R is affine in a and the
    // first correction solves it, unless position-level joint rows hold C(x_{t+h}) = 0,
    // nonlinear in a (symplectic Euler's joints, theta-scheme.ts). Taking their first
    // iterate there left a hinge open by ~r φ²/2 (r its lever, φ the step's turn: 6e-6 m a
    // sub-step on a rod turning 7.5e-3 rad), which the next sub-step closed with its joint force, pumping energy (a
    // rod on a servo at h ω = 3, 4 sub-steps: +2.1 % of its invariant per 10 s), and the
    // post-step projection at a whole step's end, dissipating (−0.27 % a second at h/4)
    const explicitStep =
      c.w === 0 && c.rayleighStiffness === 0 && !(c.positionLevel && this.constraints !== null);
    // no chord on compliant contacts: their piecewise-linear forces switch between
    // iterates, and a stale W then stops contracting (the impact tests' ball)
    const chord = !search && this.dynamicEffectors.length === 0;
    // cleared when a chord correction right after a fresh factorization did not halve it:
    // full Newton for the rest of the solve (see below)
    let chordOn = chord;
    const roundingFloor =
      (c.positionLevel || this.iteration.roundingBound) && c.cx > 0
        ? this.positionRoundingFloor(c.cx)
        : 0;
    // with a Krylov solver, the acceptance ends its iterations as soon as it holds
    const test = this.affineTest;
    test.active = affine && wFloor > 0;
    test.newton = newton;
    test.a = a;
    test.reference = reference;
    test.stepError = stepError;
    test.massFloor = wFloor;
    test.roundingFloor = roundingFloor;
    for (; it < newton.maxIterations; it++) {
      checkDeadline();
      if (rNorm < 0) {
        this.applyUnknown(c, a);
        this.residual(c, tEnd, r);
      }
      // ‖R‖₂ at this iterate (iterated Newton only; the line search's when it ran)
      let rk = rNorm;
      // iterated Newton: the line search and its stall test below compare with it, with a
      // fixed Krylov tolerance too (solver.linearTolerance)
      if (rk < 0 && newton.maxIterations > 1) rk = norm2(r, n);
      if (newton.maxIterations > 1 && fixedTolerance === null) {
        // the Krylov tolerance follows the convergence (forcingTerm)
        if (rPrevious > 0) eta = forcingTerm(eta, rk / rPrevious);
        rPrevious = rk;
        this.linearTolerance = Math.max(eta, floor);
        if (wFloor > 0 && rk > 0) {
          const aNow = newtonTarget(newton, a, null, reference, stepError, n);
          const safeguard = (0.5 * (aNow + roundingFloor) * wFloor) / rk;
          this.linearTolerance = Math.max(this.linearTolerance, Math.min(safeguard, FORCING_MAX));
        }
      }
      // With servos the step does not resolve: near the solution (the last correction moved
      // the positions by less than TURN_SWITCH) W takes their forces' turning with the
      // bodies (factorConstrained); farther, W is factored afresh at every iteration (see
      // TURN_SWITCH)
      this.turnClose = dPrevious >= 0 && dPrevious * c.cx < TURN_SWITCH;
      const fresh: boolean = refactor || !chordOn || (c.stiffWeight !== 0 && !this.turnClose);
      // A singular W (an exact fem tangent cancelling the mass at this iterate, W = M + c_x K:
      // a neo-Hookean block pressed on a floor at 250/s, θ = ½, h = 10 ms, met one at its
      // 26th step, c_x = h²/2) is no solution of the step either: halved while a halving
      // follows, where c_x K is 4 times smaller; before, the run ended at once
      try {
        this.solveIteration(c, tEnd, r, da, fresh);
      } catch (e) {
        // (iterated Newton only: the linearized step's callers take its one correction)
        const halved = newton.maxIterations > 1 && newton.halvingFollows === true;
        if (!(e instanceof SingularIterationMatrix) || !halved) throw e;
        this.newtonConverged = false;
        this.newtonStalled = true;
        it++;
        break;
      }
      if (newton.maxIterations === 1) {
        // the linearized step: one correction, nothing to test
        if (!search) this.linearLaws(c, tEnd, da);
        for (let i = 0; i < n; i++) a[i] += da[i];
        it++;
        break;
      }
      let dmax = 0;
      for (let i = 0; i < n; i++) dmax = Math.max(dmax, Math.abs(da[i]));
      const daMax = dmax;
      if (c.symmetricJoints) dmax = Math.max(dmax, this.startDirections.change);
      const target = newtonTarget(newton, a, da, reference, stepError, n) + roundingFloor;
      // The symmetric joints' corrections at their rounding: Δa and ρ Y Δλ̃ within the mixed
      // system's response to the joint rows' own rounding (accelNoise, jointNoise). On the
      // hanging chain of 160 links under k_p = 1e8 servos (servo-chain.test.ts) the first
      // step's sub-step solves stalled with ‖Δa‖∞ about its target (2e-5 to 3e-5 rad/s², 1.2e-5
      // of it positionRoundingFloor) while ‖ρ Y Δλ̃‖∞ wandered at 1.2e-4 to 4.4e-3 (rates θ 0.6
      // to 2.3: noise, accepted through NOISE_FACTOR alone, 13 of 16 solves). The mixed
      // system's LU solve is not the cause (its backward error 1e-18 to 1e-16, a refinement
      // step moving Δa by 1e-15 of itself); the rows' rounding is: at positionRoundingFloor a
      // row the response is 3e-6 to 4.9e-5 in Δa and 3.3e-3 to 2.5e-2 in ρ Y Δλ̃ there, the
      // stalls at most 0.73 of it (the balance rows' rounding, ε times each row's largest
      // terms, moves ρ Y Δλ̃ by 5e-7 only). The same chain of 40 links at k_p = 1e10 failed
      // its first step even at h/16 without this test.
      const jointsAtNoise =
        c.symmetricJoints &&
        daMax <= target + this.accelNoise &&
        this.startDirections.change <= target + this.jointNoise;
      // θ = ‖Δa_k‖/‖Δa_{k−1}‖, the rate the iterations show (Hairer & Wanner, §IV.8):
      // converging at it, the error left after Δa_k is about θ/(1 − θ) ‖Δa_k‖, which
      // must meet the target (it accepts the iterate one correction earlier than
      // ‖Δa_{k+1}‖ ≤ target would, at the same error)
      const theta = dPrevious > 0 ? dmax / dPrevious : -1;
      // The rate the FIRST ratio shows is trusted only for a correction already within
      // NOISE_FACTOR of the target: the first correction may be dominated by a part Newton
      // removes in one step (an affine part of the residual: the start guess's error along
      // a stiff servo's force or the joints' reaction to it), and its ratio to the second
      // then says nothing of how the rest converges. Two consecutive rates are needed
      // otherwise. The end-hinged rod under a 1e10 N·m/rad servo commanded 0.3 rad away
      // (moreau-jean, 1/60 s): a first correction of 3.75e10 rad/s², a second of 24 read as
      // θ = 6.5e-10 and accepted against a target of 1.1e-7, the next being 2.2; on
      // generalized-alpha's k_d > 0 servos 4.6e-5 after 5.2 was accepted against 6e-10, the
      // next 1.7e-7. The examples' first ratios accept corrections within 120 targets
      const trusted = rated || dmax <= NOISE_FACTOR * target;
      // the servos chosen for Newton alone: their own test, on what the rate θ leaves of
      // their coordinate where it is known, as the test on dmax (servoLawsSettled)
      const slowest = Math.max(theta, thetaPrevious);
      const left = thetaPrevious >= 0 && theta >= 0 && slowest < 1 ? slowest / (1 - slowest) : 1;
      const settled = c.stiffWeight !== 0 || this.servoLawsSettled(c, da, target, left);
      if (
        settled &&
        (dmax <= target ||
          jointsAtNoise ||
          (affine &&
            (this.iteration.lastRelativeResidual === 0 ||
              (test.active && test.bounds(this.iteration.lastRelativeResidual * rk, target)))) ||
          ((chord || (search && stepError > 0 && previousFull)) &&
            previousContracted &&
            trusted &&
            theta >= 0 &&
            theta < 1 &&
            (theta / (1 - theta)) * dmax <= target) ||
          explicitStep ||
          (chord &&
            fresh &&
            dPrevious > 0 &&
            dmax > 0.5 * dPrevious &&
            dmax <= NOISE_FACTOR * target))
      ) {
        if (!search) this.linearLaws(c, tEnd, da);
        for (let i = 0; i < n; i++) a[i] += da[i];
        this.newtonConverged = true;
        it++;
        break;
      }
      if (!search) {
        // a saturated servo the whole correction would carry past its range to the other
        // limit: the part that stops it inside (actuator.ts), then a fresh matrix with its
        // Jacobian, the convergence rate unknown again
        let alpha = 1;
        for (const e of this.limiting)
          alpha = Math.min(alpha, e.stepFraction?.(da, c.cx, c.cv) ?? 1);
        // with servos the step does not resolve, the plain matrix contracting slowly
        // (SLOW_CONTRACTION) or about to stall (below): the fuller one from this iterate on
        const slow = theta > SLOW_CONTRACTION;
        // the rate cannot reach the target within the budget and leave the fuller matrix
        // its own iterations (FULLER_ITERATIONS); taken after two fresh corrections in a
        // row, or after two such predictions in a row (a chord between fresh corrections)
        const late =
          rated &&
          previousContracted &&
          theta >= 0 &&
          chordIterationsLeft(theta, dmax, target) >
            newton.maxIterations - it - 1 - FULLER_ITERATIONS;
        const full: boolean =
          onDemand &&
          !this.stiffFull &&
          // (servos chosen for Newton alone, ε = 0: near the solution only, TURN_SWITCH; from
          // farther out it threw the end-hinged rod's iterates off, servoLawsSettled's
          // k_v = 1e6 failing its first step at ρ∞ = 0.9 and 0.5 even at h/16)
          (c.stiffWeight !== 0 || dmax * c.cx < TURN_SWITCH) &&
          ((slow && previousSlow) ||
            (late && (previousLate || (previousFresh && fresh))) ||
            (fresh && dFresh > 0 && dmax >= dFresh));
        previousSlow = slow;
        previousLate = late;
        if (alpha < 1 || full) {
          for (let i = 0; i < n; i++) a[i] += alpha * da[i];
          this.stiffFull ||= full;
          refactor = true;
          chordOn = chord;
          dPrevious = -1;
          thetaPrevious = -1;
          rated = false;
          dFresh = -1;
          previousFresh = false;
          previousSlow = false;
          previousLate = false;
          continue;
        }
        for (let i = 0; i < n; i++) a[i] += da[i];
        // A chord correction always follows a fresh one. One that does not even halve it
        // means the two disagree at this state, and they can cycle: on a servo-driven arm
        // at a wrist singularity (joints 4 and 6 coaxial, the constrained solve with
        // moreau-jean) the fresh corrections landed on one point and the chord ones on
        // another, forever. Full Newton from there converges.
        if (chordOn && !fresh && dmax > 0.5 * dPrevious) chordOn = false;
        const left = chordIterationsLeft(theta, dmax, target);
        // A fresh correction no smaller than the previous fresh one (full Newton not
        // contracting: Hairer & Wanner's θ ≥ 1), or two fresh corrections in a row whose
        // rate cannot reach the target within the iterations left: Newton is not in its
        // quadratic regime, and at a singular Jacobian (a whipping chain's start
        // directions that lost a pivot, generalized-alpha.ts) it converges linearly at
        // θ ≈ ½, never faster. The step goes to the halving at once instead of after the
        // whole budget (that took half of the iterations of the benchmark's 100-link
        // chain); the last halving spends it all (a run's last chance).
        if (
          newton.halvingFollows === true &&
          chord &&
          fresh &&
          ((previousFresh && left > newton.maxIterations - it - 1) ||
            (dFresh > 0 && dmax >= dFresh))
        ) {
          this.newtonStalled = true;
          it++;
          break;
        }
        refactor = !chordOn || (!fresh && left > CHORD_ITERATIONS);
        previousFresh = fresh;
        if (fresh) dFresh = dmax;
        previousContracted = theta < 1;
        rated ||= theta >= 0;
        dPrevious = dmax;
        thetaPrevious = theta;
        continue;
      }
      rNorm = rk;
      if (rFirst < 0) rFirst = rNorm;
      const before = rNorm;
      rNorm = this.lineSearch(c, tEnd, rNorm, rNorm <= this.roundingLevel(rFirst));
      previousFull = this.searchStep === 1;
      previousContracted = theta < 1;
      rated ||= theta >= 0;
      dPrevious = dmax;
      // (a residual falling by less than half is no stall at the last halving, which
      // spends its budget as the chord's does: a 0.2 m stvk block crushed on a floor at
      // 250/s, θ = ½, converged at h/16 in 17 such iterations, failed after its first)
      this.newtonStalled =
        rNorm > this.roundingLevel(rFirst) &&
        (this.searchFailed || (newton.halvingFollows === true && rNorm > 0.5 * before));
      // stalled: more iterations from here would not converge; the integrator redoes the
      // step in halves (step-halving.ts)
      if (this.newtonStalled) {
        it++;
        break;
      }
    }
    if (this.newtonConverged) this.newtonStalled = false;
    // a free body's midpoint rule unsolved at the last iterate (meanRateResidual): halved
    if (this.newtonConverged && this.meanRateRows && this.meanRateUnsolved) {
      this.newtonConverged = false;
      this.newtonStalled = true;
    }
    this.applyUnknown(c, a);
    this.endLaws(tEnd);
    // The end's free angular accelerations (endAngular, generalized-alpha's A_{n+1} on the
    // momentum rows: endFreeRates) at the accepted iterate, not the one before its last
    // correction Δa, whose residual they were computed with: a servo moves its torque by
    // k_v c_v Δa over that correction, the stiffness of W over the inertia's times Newton's
    // tolerance (a velocity servo at k_v = 1e5 on the 2 kg, 0.6 m rod hinged at its centre,
    // 1/60 s: 13 rad/s² of A_{n+1}'s 8e6 at ρ∞ = 0.9), and the next step's velocity update
    // carried it through a_n: energy.error 4.4 J at ρ∞ = 0.9 and 0.21 J at 0.5, now 4e-8 and
    // 1e-8 J, the rounding of a (test/engine/integrators/generalized-alpha-servo-work.test.ts).
    // One force evaluation, no factorization (Newton iterations a step: 2.0 before, 1.05
    // after at ρ∞ = 0.5, 2.0 both at 0.9)
    if (this.newtonConverged && c.endRates && c.momentumRows && c.w > 0 && newton.maxIterations > 1)
      this.residual(c, tEnd, r);
    // Position-level rows: a converged correction must also have closed the joints (a row
    // that a factorization dropped as dependent is not held by the correction: a whipping
    // chain whose step turned a link by more than a quarter turn opened by 25 cm that way)
    if (this.newtonConverged && c.positionLevel && this.constraints !== null && it > 1) {
      this.constraints.residual(tEnd, this.rc);
      let cmax = 0;
      for (let i = 0; i < this.rc.length; i++) cmax = Math.max(cmax, Math.abs(this.rc[i]));
      let amax = 0;
      for (let i = 0; i < n; i++) amax = Math.max(amax, Math.abs(a[i]));
      const target = newton.tolerance * (1 + amax) + roundingFloor;
      if (cmax > c.cx * NOISE_FACTOR * target) this.newtonConverged = false;
    }
    // An end state the forces no longer model (a St Venant–Kirchhoff element inverted or
    // crushed past its least stretch, FemEffector.strainFault) is no solution of the solid's
    // step: rejected while a halving follows, as a stalled Newton (redone even with
    // compliant contacts: mustRedo). A coarse step that crushed a free stvk block inverted
    // (det F = −0.997, its 300 J of kinetic energy grown to 1.7e4 J) ends on the block's
    // branch in halves. The last halving keeps it: the run then ends `diverged` naming the
    // element (simulation.ts findBlowUp).
    if (this.newtonConverged && newton.halvingFollows === true && this.strainFaulted()) {
      this.newtonConverged = false;
      this.newtonStalled = true;
    }
    return it;
  }

  /**
   * Whether some effector's model does not hold at the current state (ForceEffector
   * .strainFault): `solve`'s end check, and Moreau–Jean's contact step's (moreau-jean.ts
   * stepOnce), whose one-iteration solves leave it to the step's end.
   */
  strainFaulted(): boolean {
    const strained = this.strained;
    for (let i = 0; i < strained.length; i++) {
      const fault = (strained[i].strainFault as () => string | null).call(strained[i]);
      if (fault !== null) {
        this.strainRejected = fault;
        return true;
      }
    }
    return false;
  }

  /**
   * The last fault strainFaulted found (null: none since the owner cleared it): the
   * simulation names it when a step fails after its halvings rejected such ends, and the
   * last halving's Newton did not converge at all (its last iterate then shows none).
   */
  strainRejected: string | null = null;

  /**
   * The smallest correction (m/s², rad/s²) that position-level joint rows can resolve:
   * they ask G c_x Δa = −C(x), and C is computed from positions to within a few ulps of
   * their magnitude, so Δa carries a rounding noise of about ε (1 + ‖x‖∞)/c_x (4e-9 m/s²
   * for positions of 1 m at h = 1 ms): Newton's test on ‖Δa‖ cannot go below it. The same
   * bound holds for forces stiff in the positions (ForceEffector.roundingBound: elastic
   * solids): the force's rounding K ε ‖x‖ moves Δa by W⁻¹ K ε ‖x‖ ≤ ε ‖x‖/c_x when
   * c_x K dominates W (a stiff beam with Rayleigh damping stalled at 3e-10 m/s² above the
   * default tolerance and failed even with its step halved).
   */
  private positionRoundingFloor(cx: number): number {
    const pos = this.start.pos;
    // 1 + ‖x‖∞ as the largest 1 + |x_i| (the same double: rounding is monotonic), not
    // 1 + max |x_i|: V8 types a sum by the operands it has seen, and on the stiff cloth the
    // largest coordinate was a fixed corner's x = 1 until the cloth hung below z = −1, so
    // that sum had only added small integers; its compiled code (and `solve`'s, which
    // inlines it) then deoptimized, 13 times in a row. The sums here see every coordinate.
    let scale = 1;
    for (let i = 0; i < pos.length; i++) scale = Math.max(scale, 1 + Math.abs(pos[i]));
    return (POSITION_ROUNDING * scale) / cx;
  }

  /**
   * The level (‖R‖₂) below which the residual is rounding (see `solve`): LINE_SEARCH_FLOOR of
   * the step's first residual `first`, or ROUNDING_FLOOR of the forces ‖f‖₂ at the current
   * iterate. A method, not a closure in `solve`'s loop, which allocated one per iteration.
   */
  private roundingLevel(first: number): number {
    return Math.max(LINE_SEARCH_FLOOR * first, ROUNDING_FLOOR * norm2(this.f, this.n));
  }

  /**
   * a ← a + α Δa by backtracking (see `solve`; `full` takes α = 1), leaving R at the
   * accepted point in `r` (the next iteration's residual); searchFailed tells whether it
   * ended at the smallest α without the decrease. `rn0` is ‖R(a)‖₂. Returns ‖R‖₂ at the
   * accepted point.
   */
  private lineSearch(c: SchemeCoefficients, tEnd: number, rn0: number, full: boolean): number {
    const { a, da, r, aStart, n } = this;
    aStart.set(a);
    let alpha = 1;
    for (;;) {
      for (let i = 0; i < n; i++) a[i] = aStart[i] + alpha * da[i];
      this.applyUnknown(c, a);
      this.residual(c, tEnd, r);
      const rn = norm2(r, n);
      const decreased = rn <= (1 - 1e-4 * alpha) * rn0;
      if (full || decreased || alpha <= LINE_SEARCH_MIN_STEP) {
        this.searchFailed = !full && !decreased;
        this.searchStep = alpha;
        return rn;
      }
      alpha *= 0.5;
    }
  }

  /**
   * Whether turning body k takes the midpoint rule and Cayley turn at meanRates: free
   * (freeTurning) and not held on the trapezoid this step (trapezoidTurn).
   */
  private midpointTurn(k: number): boolean {
    return this.freeTurning[k] === 1 && this.trapezoidTurn[this.turning[k]] === 0;
  }

  /**
   * fStart's torques as the angular accelerations they give at the start configuration,
   * α_t = I_w(t)⁻¹ τ_t, for the bodies whose world inertia turns (call with the state at
   * the step's start, after computing fStart). The residual weighs them with the iterate's
   * inertia, I_w α_t: the start term of a θ-scheme is then the start's acceleration
   * M_t⁻¹ f_t, as Newmark's and generalized-alpha's carried accelerations are. Taken as a
   * torque, (1 − w) τ_t, it was divided by the END inertia, I_w(t+h)⁻¹ τ_t: not the
   * trapezoidal rule for a body whose inertia turns, and a free asymmetric body spinning
   * near its intermediate axis gained 4 J on its 1 J in 20 s at 5 ms under Moreau–Jean
   * (test/engine/integrators/theta-scheme.test.ts).
   * `midpointStep` > 0 (symplectic Euler, whose step it is): the gyroscopic torque of each
   * such body is taken at its mean rate over the step instead, with the start's inertia
   * and its other start torques (forces/gyroscopic.ts midpointRotation), so that a free
   * body keeps its kinetic energy and angular momentum's size exactly; α_t is then
   * (ω₂ − ω₁)/h. The joints' and contacts' torques, which the step solves for, act on the
   * rate without entering that mean (as Bullet's implicit gyroscopic step, before its
   * constraint solve). Not for the bodies whose rows the step writes in angular momentum
   * (`c`.momentumRows, momentumBody: symplectic Euler's smooth step with joints takes every
   * jointed body that way, momentumRows, which keeps what the split below lost); the mean
   * rate stays for the free bodies and welded groups, and the split for the velocity-level
   * steps (Moreau–Jean's with active contacts or limits). Not for a body a revolute joint
   * holds to a static body (fixedAxis), which keeps the explicit α_t: its rate ω_t lies on
   * the hinge's fixed axis n, where −ω_t × I ω_t is ⊥ n, all of it taken by the hinge, and
   * the step holding the hinge (its rows I_t (ω' − ω_t) = h (τ_t + G_tᵀλ̃) at the
   * solution, ω' on n) keeps its rate about n to rounding, whatever its inertia. The free mean rate is off the axis by the free precession the hinge then
   * removes, and there the torque has a part along n, n·(ω̄ × I ω̄) ≈ ½ h ω³ uᵀI⁻¹u
   * (u = n × I n, I n not along n), lost at first order in h: a body of diag(0.1, 0.1, 0.2)
   * kg·m² hinged at 20 rad/s about an axis 37° from its own ran down to 6.5 rad/s in 30 s
   * at 5 ms, 8.8 at 2.5 ms. Only there: with the joints' torques taken into every jointed
   * body's mean rate (the mean rate of the step's own rows, the torque linearized about the
   * start's or not), the torques turning bodies exchange pumped energy at first order (a
   * wheel spun on the axle of a turning platform: the platform's rate grew as e^(0.019 t)
   * at 5 ms, where the free mean rate brakes it as e^(−0.038 t); one of 24 random 3-D trees
   * diverged within 47 s at 5 ms). A body welded to a hinged one turns about the same
   * fixed axis and keeps the explicit α_t too: at its own free mean rate, a pair (1 and
   * 2 kg, centres 0.39 m apart) on one tilted hinge at 20 rad/s lost 71 of its 191 J in 30 s
   * at 5 ms, where the same rigid body as one strays by 1.2 J at most, as the pair now does.
   * Bodies welded by fixed joints that no other joint holds take theirs at the mean rate of
   * their group as one rigid body (weldMeanRates; placeWelded then moves them as one): each
   * body's own mean rate differs from its partner's, and the weld equalizing them lost 22 %
   * of a free pair's energy in 60 s at 5 ms. False when the mean rate's Newton did not
   * converge for some body (its explicit α_t kept): the step should be halved.
   * `midpointStep` > 0 with `c`.meanRates (the trapezoidal rule, θ = w = ½: Moreau–Jean's
   * default): the same midpoint rule and Cayley turn for the free bodies (freeTurning: no
   * joint or motor touches them), their other torques on the trapezoid, the end's within
   * Newton's iterations (holdMeanRate, meanRateResidual, meanRateJacobians), so that the
   * step stays symmetric and second order (not for the bodies of the step's nonsmooth
   * contacts: trapezoidTurn, moreau-jean.ts holdTrapezoidTurns; on a step split at its
   * impacts those near a contact but the round ones turn by exp(h ω̄) in place of the
   * Cayley map: exponentialTurn, cayleyTurn). The jointed bodies keep their rows (in angular
   * momentum on the symmetric step: momentumRows), and so do the free welded groups, held
   * by their welds on that step (RATTLE, theta-scheme.ts "Joints"), whose energy error is
   * then the trapezoid's, second order and bounded: a free pair (1 and 2 kg welded 0.3 m
   * apart, 9.19 J, tumbling at 5 rad/s) kept energy.error within 3.4e-5 J over 60 s at 5 ms,
   * 8.6e-6 J at 2.5 ms (placeWelded's rigid placement is symplectic Euler's, explicit in
   * the other forces).
   */
  holdStartForces(midpointStep = 0, c: SchemeCoefficients | null = null): boolean {
    const { sys, turning, startAngular, fStart, momentum, applied, endRate } = this;
    // the trapezoidal rule's free bodies (meanRates) or symplectic Euler's (midpoint)
    const meanRates = midpointStep > 0 && this.gyroscopic && c?.meanRates === true;
    const midpoint = midpointStep > 0 && this.gyroscopic && !meanRates;
    const h = midpointStep;
    let solved = !midpoint || this.weldMeanRates(h);
    this.weldStep = midpoint ? h : 0;
    this.cayleyStep = midpoint || meanRates ? h : 0;
    this.meanRateRows = meanRates;
    const momentumStep = c?.momentumRows === true;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      const d = sys.dofOffset[b] + 3;
      mat3MulVec(startAngular, 3 * k, sys.inertiaWorldInv, 9 * b, fStart, d);
      this.cayleyBody[k] = 0;
      if (meanRates) {
        if (this.midpointTurn(k)) this.holdMeanRate(k, b, d, (c as SchemeCoefficients).w);
        continue;
      }
      // (a body whose rows are in angular momentum has no mean rate: momentumRows)
      if (!midpoint || this.fixedAxis[k] === 1 || (momentumStep && this.momentumBody[b] === 1))
        continue;
      // fStart holds the gyroscopic effector's −ω × I_w ω: adding ω × I_w ω back leaves the
      // other torques, and the gyroscopic one is taken at the mean rate instead
      mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
      cross3(applied, 0, sys.omega, 3 * b, momentum, 0);
      for (let j = 0; j < 3; j++) applied[j] += fStart[d + j];
      const g = this.weldOf[k];
      if (g >= 0) {
        // a welded body: its group's rate change (weldMeanRates)
        const mean = this.weldMean;
        mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, mean, 3 * g);
        cross3(endRate, 0, mean, 3 * g, momentum, 0);
        for (let j = 0; j < 3; j++) applied[j] -= endRate[j];
        mat3MulVec(startAngular, 3 * k, sys.inertiaWorldInv, 9 * b, applied, 0);
      } else if (
        midpointRotation(endRate, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b, applied, 0, h)
      ) {
        for (let j = 0; j < 3; j++) {
          startAngular[3 * k + j] = (endRate[j] - sys.omega[3 * b + j]) / h;
          this.cayleyStart[3 * k + j] = sys.omega[3 * b + j];
        }
        this.cayleyBody[k] = this.jointedTurning[k] === 1 ? 0 : 1;
      } else solved = false;
    }
    return solved;
  }

  /**
   * meanRates (θ = w = ½): free turning body k (body b, rotational dofs at d) takes its
   * rotation as the implicit midpoint rule (meanRateResidual): its start rate ω_t
   * (cayleyStart), world inertia I_t (startInertia) and start torque without the
   * gyroscopic one, (1 − w) (τ_t + ω_t × I_t ω_t) (meanTorque, fStart holding −ω_t × I_t ω_t),
   * and the Cayley turn of its mean rate (cayleyBody, cayleyTurn).
   */
  private holdMeanRate(k: number, b: number, d: number, w: number): void {
    const { sys, fStart, momentum, applied, startInertia, meanTorque, cayleyStart } = this;
    for (let j = 0; j < 9; j++) startInertia[9 * k + j] = sys.inertiaWorld[9 * b + j];
    mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
    cross3(applied, 0, sys.omega, 3 * b, momentum, 0);
    for (let j = 0; j < 3; j++) {
      meanTorque[3 * k + j] = (1 - w) * (fStart[d + j] + applied[j]);
      cayleyStart[3 * k + j] = sys.omega[3 * b + j];
    }
    this.cayleyBody[k] = 1;
  }

  /**
   * meanRates: the rotational rows of R of each free turning body (cayleyBody): its rate
   * ω₂ by the implicit midpoint rule on its Euler equations in the frame of the step's
   * start, with the other torques on the trapezoid (midpointRotation),
   *   I_t (ω₂ − ω_t) = h ((1 − w) τ_t + Qᵀ τ_e − ω̄ × I_t ω̄),   ω̄ = ½ (ω_t + ω₂),
   *   τ_e = w (f_e + ω_e × I_e ω_e) − r_M I_e ω_e − r_K (K v)_e,
   * at the iterate's end state (Q = cay(½ h ω̄') its turn, cayleyTurn: R_e = Q R_t,
   * ω_e = Q ω', I_e = Q I_t Qᵀ; f_e the end's forces, the gyroscopic −ω_e × I_e ω_e among
   * them taken out; τ_t without it, meanTorque), and the rows
   *   R = (1 + c_v r_M) I_e (ω₂ − ω')/c_v   (N·m),
   * ω' the iterate's rate before its carry (cayleyRate). W's rotational block is the mass
   * block (1 + c_v r_M) I_e (meanRateJacobians), so a correction sets ω' = ω₂: a
   * torque-free body's rows are solved by the first, with or without the gyroscopic
   * Jacobians (solver.gyroscopicJacobian), its end rate ω₂ to rounding, whose ½ ωᵀ I ω and
   * world L the Cayley turn keeps (cayleyTurn). The step is symmetric (from the end back, Q
   * becomes Qᵀ) and second order, as the trapezoid is. Written as the trapezoid, I_e (ω_e −
   * ω_t)/h = ½ (τ_t + τ_e) with the gyroscopic torque at both ends and the turn exp(h ω̄),
   * the free step drifted by O((h ω)²): a body of moments 0.1, 0.2, 0.3 kg·m² tumbling at
   * (3, 50, 2) rad/s swung its 251.05 J by up to 1.3 J over 100 s at 5 ms
   * (test/engine/integrators/long-run/free-spin.test.ts). A body whose midpoint rule
   * Newton does not solve (h |ω| ≳ 2) leaves the step unconverged (meanRateUnsolved: halved).
   */
  private meanRateResidual(c: SchemeCoefficients, out: Float64Array): void {
    const { sys, turning, f, kv, start, cayleyRate, cayleyStart, startInertia, meanTorque } = this;
    const { momentum, applied, carried, endRate } = this;
    const scale = 1 + c.cv * c.rayleighMass;
    this.meanRateUnsolved = false;
    for (let k = 0; k < turning.length; k++) {
      if (this.cayleyBody[k] === 0) continue;
      const b = turning[k];
      const d = sys.dofOffset[b] + 3;
      // τ_e (world), then (1 − w) τ_t + Qᵀ τ_e, Qᵀ = R_t R_eᵀ
      mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
      cross3(applied, 0, sys.omega, 3 * b, momentum, 0);
      for (let j = 0; j < 3; j++) {
        applied[j] = c.w * (f[d + j] + applied[j]) - c.rayleighMass * momentum[j];
        if (c.rayleighStiffness !== 0) applied[j] -= c.rayleighStiffness * kv[d + j];
      }
      quatRotateInverse(carried, 0, sys.quat, 4 * b, applied, 0);
      quatRotate(applied, 0, start.quat, 4 * b, carried, 0);
      for (let j = 0; j < 3; j++) applied[j] += meanTorque[3 * k + j];
      if (!midpointRotation(endRate, 0, startInertia, 9 * k, cayleyStart, 3 * k, applied, 0, c.cv))
        this.meanRateUnsolved = true;
      for (let j = 0; j < 3; j++) carried[j] = (endRate[j] - cayleyRate[3 * k + j]) / c.cv;
      mat3MulVec(momentum, 0, sys.inertiaWorld, 9 * b, carried, 0);
      for (let j = 0; j < 3; j++) out[d + j] = scale * momentum[j];
    }
  }

  /** Whether the last meanRateResidual left some body's midpoint rule unsolved. */
  private meanRateUnsolved = false;

  /**
   * meanRates: W's rotational block of each free turning body (cayleyBody) left the mass
   * block (1 + c_v r_M) I_e, meanRateResidual's rows' own (their ω₂ solved within): the
   * gyroscopic torque's Jacobians that the assembly added there taken back
   * (GyroscopicEffector.addBodyJacobians); the other forces' blocks stay, their weight w
   * the trapezoid's, ∂R/∂a through ω₂ to O(h ω).
   */
  private meanRateJacobians(c: SchemeCoefficients): void {
    const gyro = this.gyroscopicEffector;
    if (!this.meanRateRows || !c.meanRates || gyro === null) return;
    const kScale = c.w * c.cx + c.cv * c.rayleighStiffness;
    for (let k = 0; k < this.turning.length; k++) {
      if (this.cayleyBody[k] === 0) continue;
      const b = this.turning[k];
      // what IterationMatrix.assemble added
      if (c.momentumRows)
        gyro.addBodyJacobians(this.matrix, b, 0, 0, kScale !== 0 ? -c.cx / c.cv : 0);
      else gyro.addBodyJacobians(this.matrix, b, kScale, c.w * c.cv, 0);
    }
  }

  /**
   * The turn and end rate of each free body whose rate the step takes at its mean rate
   * (cayleyBody; applyUnknown, after the solve's inc and v): with c = ½ h ω̄, ω̄ = ½ (ω_t +
   * ω') the mean of its start rate and the solve's end rate ω' (rad/s, world frame), the
   * body turns by the Cayley map Q = (1 − [c]×)⁻¹ (1 + [c]×), a turn of 2 atan|c| about c
   * (inc = 2 atan|c| c/|c|), and its end rate is Q ω', the rate ω' carried with the body.
   * midpointRotation's I_t (ω₂ − ω_t) = −h ω̄ × I_t ω̄ is (1 + [c]×) L₂ = (1 − [c]×) L_t with
   * L = I_t ω: Q L₂ = L_t, so the end's world momentum, I_end Q ω₂ = Q I_t Qᵀ Q ω₂ = Q L₂,
   * is the start's to rounding, and its kinetic energy ½ ω₂ᵀ I_t ω₂ the start's too: the
   * implicit midpoint rule on Euler's equations with its Cayley reconstruction (Austin,
   * Krishnaprasad & Wang, "Almost Poisson integration of rigid body systems", J. Comput.
   * Phys. 107, 1993), second order in the orientation. Before, the turn exp(h ω₂) with the
   * end rate ω₂ left the world momentum off by O(h ω̇): a free body of moments 1, 2, 3 kg·m²
   * tumbling about its middle axis at 1 rad/s had it 0.16 % off at 5 ms, 0.082 % at 2.5 ms,
   * its orientation as much in rad, for 400 s (now 3e-14 and 1.1e-3 rad, 2.8e-4 at 2.5 ms;
   * test/engine/integrators/long-run/free-spin.test.ts). Only for the bodies no joint holds:
   * the joints' rows see the turn the unknown gives, h ω'.
   * A body marked in exponentialTurn turns by exp(2c) = exp(h ω̄) instead, a turn of 2|c|
   * about c (Rodrigues: Q ω' = ω' + (sin 2|c|/|c|) c × ω' + ((1 − cos 2|c|)/|c|²) c × (c ×
   * ω')), its end rate Q ω₂ still: its kinetic energy ½ ω₂ᵀ I_t ω₂ and |L| are the start's
   * as above whatever the turn Q, and about a principal axis (ω̄ = ω_t) the turn is the exact
   * motion's, which the impact events' pieces are aimed on (moreau-jean.ts,
   * holdTrapezoidTurns); its world L's direction is off Cayley's by the turns' difference,
   * 2|c| − 2 atan|c| ≈ (h |ω̄|)³/12, about c (nothing where L ∥ ω̄).
   */
  private cayleyTurn(h: number): void {
    const { sys, turning, inc, v, cayleyBody, cayleyStart, cayleyWork: w } = this;
    for (let k = 0; k < turning.length; k++) {
      if (cayleyBody[k] === 0) continue;
      const d = sys.dofOffset[turning[k]] + 3;
      for (let j = 0; j < 3; j++) {
        w[j] = 0.25 * h * (cayleyStart[3 * k + j] + v[d + j]);
        this.cayleyRate[3 * k + j] = v[d + j];
      }
      const s2 = dot3(w, 0, w, 0);
      cross3(w, 3, w, 0, v, d);
      cross3(w, 6, w, 0, w, 3);
      const s = Math.sqrt(s2);
      if (this.exponentialTurn[turning[k]] === 1) {
        // (sin 2s/s = 2 sinc s cos s, (1 − cos 2s)/s² = 2 sinc² s: no cancellation at small s)
        const sinc = s > 0 ? Math.sin(s) / s : 1;
        const q1 = 2 * sinc * Math.cos(s);
        const q2 = 2 * sinc * sinc;
        for (let j = 0; j < 3; j++) {
          v[d + j] += q1 * w[3 + j] + q2 * w[6 + j];
          inc[d + j] = 2 * w[j];
        }
        continue;
      }
      const q = 2 / (1 + s2);
      const angle = s > 0 ? (2 * Math.atan(s)) / s : 2;
      for (let j = 0; j < 3; j++) {
        v[d + j] += q * (w[3 + j] + w[6 + j]);
        inc[d + j] = angle * w[j];
      }
    }
  }

  /**
   * Each welded group's mean rate over a step of h (weldMean; holdStartForces): the group
   * as one rigid body, its inertia about its centre of mass I_c = Σ (I_w,i + m_i ([r_i]×ᵀ
   * [r_i]×)), r_i = x_i − x_c, its rate ω₁ = I_c⁻¹ Σ (I_w,i ω_i + m_i r_i × (v_i − v_c)) and
   * the start's torques about x_c without the gyroscopic ones, Σ (τ_i + ω_i × I_w,i ω_i +
   * r_i × f_i), stepped by midpointRotation; ω̄ = ½ (ω₁ + ω₂). False when that Newton
   * did not converge.
   */
  private weldMeanRates(h: number): boolean {
    const { sys, fStart, weldStart, weldBodies } = this;
    const I = this.weldInertia;
    const L = this.weldMomentum;
    const tau = this.weldTorque;
    const c = this.weldCentre;
    const w = this.weldRate;
    const scratch = this.momentum;
    const cross = this.applied;
    let solved = true;
    for (let g = 0; g + 1 < weldStart.length; g++) {
      // centre of mass and its velocity
      let mass = 0;
      c.fill(0);
      for (let q = weldStart[g]; q < weldStart[g + 1]; q++) {
        const b = weldBodies[q];
        const m = sys.mass[b];
        mass += m;
        for (let j = 0; j < 3; j++) {
          c[j] += m * sys.pos[3 * b + j];
          c[3 + j] += m * sys.vel[3 * b + j];
        }
      }
      for (let j = 0; j < 6; j++) c[j] /= mass;
      I.fill(0);
      L.fill(0);
      tau.fill(0);
      for (let q = weldStart[g]; q < weldStart[g + 1]; q++) {
        const b = weldBodies[q];
        const m = sys.mass[b];
        const d = sys.dofOffset[b];
        const rx = sys.pos[3 * b] - c[0];
        const ry = sys.pos[3 * b + 1] - c[1];
        const rz = sys.pos[3 * b + 2] - c[2];
        const r2 = rx * rx + ry * ry + rz * rz;
        for (let k = 0; k < 9; k++) I[k] += sys.inertiaWorld[9 * b + k];
        I[0] += m * (r2 - rx * rx);
        I[4] += m * (r2 - ry * ry);
        I[8] += m * (r2 - rz * rz);
        I[1] -= m * rx * ry;
        I[3] -= m * rx * ry;
        I[2] -= m * rx * rz;
        I[6] -= m * rx * rz;
        I[5] -= m * ry * rz;
        I[7] -= m * ry * rz;
        // I_w ω, its gyroscopic torque's opposite ω × I_w ω, and m r × (v − v_c)
        mat3MulVec(scratch, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
        cross3(cross, 0, sys.omega, 3 * b, scratch, 0);
        const ux = sys.vel[3 * b] - c[3];
        const uy = sys.vel[3 * b + 1] - c[4];
        const uz = sys.vel[3 * b + 2] - c[5];
        L[0] += scratch[0] + m * (ry * uz - rz * uy);
        L[1] += scratch[1] + m * (rz * ux - rx * uz);
        L[2] += scratch[2] + m * (rx * uy - ry * ux);
        const fx = fStart[d];
        const fy = fStart[d + 1];
        const fz = fStart[d + 2];
        tau[0] += fStart[d + 3] + cross[0] + (ry * fz - rz * fy);
        tau[1] += fStart[d + 4] + cross[1] + (rz * fx - rx * fz);
        tau[2] += fStart[d + 5] + cross[2] + (rx * fy - ry * fx);
      }
      // ω₁ = I_c⁻¹ L (I_c is SPD: the bodies' inertias are)
      if (!mat3Invert(this.weldInverse, 0, I, 0)) {
        solved = false;
        continue;
      }
      mat3MulVec(w, 0, this.weldInverse, 0, L, 0);
      const { weldMean: mean, weldEnd: end } = this;
      if (!midpointRotation(cross, 0, I, 0, w, 0, tau, 0, h)) solved = false;
      for (let j = 0; j < 3; j++) {
        end[3 * g + j] = cross[j];
        mean[3 * g + j] = 0.5 * (w[j] + cross[j]);
      }
    }
    return solved;
  }

  /**
   * Moves each free welded group (weldStart) as the one rigid body it is, after `solve`
   * of a step whose holdStartForces took the groups' mean rates (weldStep = h; nothing
   * otherwise): symplectic Euler on the group's mass m, centre of mass x_c and inertia I_c
   * about it, from the start's state,
   *   v_c' = (v_c + h F/m)/(1 + h r_M),   ω' = ω₂/(1 + h r_M),
   *   x_c' = x_c + h v_c',   R = cay(½ h ω̄),   ω̄ = ½ (ω₁ + ω')   (world frame),
   * with F = Σ f_i the members' start forces (N), ω₁ and ω₂ weldMeanRates' start and end
   * rates (the implicit midpoint rule on the group's Euler equations, its start torques
   * about x_c), cay(c) = (1 − [c]×)⁻¹ (1 + [c]×) (cayleyTurn: with it the group's world
   * angular momentum is kept to rounding; turned by exp(h ω') it was off at first order, a
   * pair spun at 5.4 rad/s by 0.72 % at 5 ms, 0.36 % at 2.5 ms) and r_M the Rayleigh mass
   * damping (1/s; the solve divides every velocity by 1 + h r_M alike, a rigid motion stays
   * one). Each member i from its start x_i, q_i, with r_i = R (x_i − x_c):
   *   x_i' = x_c' + r_i,   q_i' = R ⊗ q_i,   v_i' = v_c' + R ω' × r_i,   ω_i' = R ω'.
   * The solve holds the members together by the welds' forces, applied along the start's
   * offsets and projected at the end's: with the centres of mass apart they did work at
   * first order in h (five asymmetric pairs spun free lost or gained 0.3–3.7 % of their
   * energy in 60 s at 5 ms). Placed rigidly, the welds' residuals stay what they were at the
   * start (a rigid motion keeps them), the kinetic energy is the one body's,
   * ½ m |v_c'|² + ½ ω'ᵀ I_c ω', and without damping a free group keeps it and L to
   * rounding (midpointRotation, cayleyTurn), and its linear momentum exactly.
   */
  placeWelded(rayleighMass: number): void {
    const h = this.weldStep;
    if (h === 0 || this.weldBodies.length === 0) return;
    const { sys, fStart, vPred, start, weldStart, weldBodies, weldMean, weldEnd } = this;
    const c = this.weldCentre;
    const w = this.weldRate;
    const turn = this.weldTurn;
    const r = this.weldMomentum;
    const damping = 1 / (1 + h * rayleighMass);
    for (let g = 0; g + 1 < weldStart.length; g++) {
      // the start's centre of mass (0..2), its velocity stepped to v_c' (3..5)
      let mass = 0;
      c.fill(0);
      for (let q = weldStart[g]; q < weldStart[g + 1]; q++) {
        const b = weldBodies[q];
        const m = sys.mass[b];
        const d = sys.dofOffset[b];
        mass += m;
        for (let j = 0; j < 3; j++) {
          c[j] += m * start.pos[3 * b + j];
          c[3 + j] += m * vPred[d + j] + h * fStart[d + j];
        }
      }
      // the Cayley turn of ½ h ω̄, ω̄ = ½ (ω₁ + ω') (ω₁ = 2 weldMean − ω₂; cayleyTurn), as
      // the unit quaternion (1, c)/√(1 + |c|²), and the end rate carried along, Q ω'
      for (let j = 0; j < 3; j++) {
        c[j] /= mass;
        c[3 + j] *= damping / mass;
        r[j] = damping * weldEnd[3 * g + j];
        turn[1 + j] = 0.25 * h * (2 * weldMean[3 * g + j] - weldEnd[3 * g + j] + r[j]);
      }
      turn[0] = 1;
      quatNormalize(turn, 0);
      quatRotate(w, 0, turn, 0, r, 0);
      for (let q = weldStart[g]; q < weldStart[g + 1]; q++) {
        const b = weldBodies[q];
        const o = 3 * b;
        for (let j = 0; j < 3; j++) r[j] = start.pos[o + j] - c[j];
        quatRotate(r, 0, turn, 0, r, 0);
        for (let j = 0; j < 3; j++) {
          sys.pos[o + j] = c[j] + h * c[3 + j] + r[j];
          sys.omega[o + j] = w[j];
        }
        cross3(sys.vel, o, w, 0, r, 0);
        for (let j = 0; j < 3; j++) sys.vel[o + j] += c[3 + j];
        quatMul(sys.quat, 4 * b, turn, 0, start.quat, 4 * b);
        quatNormalize(sys.quat, 4 * b);
      }
    }
    updateDerived(sys);
    // the angle coordinates' guides (guideAngles) hold for the new pose version: no joint
    // with a coordinate holds a free welded group, and their bodies did not move
    if (this.anglesGuided) for (let j = 0; j < this.angles.length; j++) this.angles[j].guide();
    getVelocity(sys, this.v);
  }

  /**
   * The effectors with an energy–momentum force for the symmetric step
   * (ForceEffector.beginMeanStep: the fem bodies), none with a consistent mass.
   */
  private readonly meanEffectors: readonly ForceEffector[];
  /** The mean effectors with the mean force's exact tangent (meanTangentCorrection). */
  private readonly meanTangentEffectors: readonly ForceEffector[];
  /** meanTangentCorrection's right-hand side and previous correction (n each). */
  private readonly meanRhs: Float64Array;
  private readonly meanPrevious: Float64Array;
  /** W's own correction and its dLambda, kept while the defect corrections run (n, rows). */
  private readonly meanFirst: Float64Array;
  private readonly meanFirstLambda: Float64Array;
  /** Whether the running step weighs those by their mean force (beginMeanStep). */
  private meanStep = false;

  /**
   * The running step, from the current positions x_t (after `beginStep`), is the
   * trapezoidal rule: M a = ½ f(x_t) + ½ f(x_{t+h}) with x_{t+h} = x_t + h v_t + ½ h² a
   * (theta-scheme.ts at θ = w = ½, f(x_t) in fStart), or the same with the end's force alone
   * in the residual and ½ M A_t carried (generalized-alpha.ts at ρ∞ = 1): its residual takes
   * the energy–momentum force of the effectors that have one (ForceEffector.meanForces,
   * 2 f̄ − f(x_t) at the end) in place of their trapezoid, until the next `beginStep`.
   */
  beginMeanStep(): void {
    const effectors = this.meanEffectors;
    for (let i = 0; i < effectors.length; i++) effectors[i].beginMeanStep?.();
    this.meanStep = effectors.length > 0;
  }

  /**
   * out += M⁻¹ (f − f̃) at the current state, the end of a mean step (beginMeanStep), for
   * the effectors with a mean force: f their force at the end, f̃ = 2 f̄ − f(x_t) the one
   * the step's residual took in its place; nothing after another step. A scheme that
   * carries the end's acceleration to the next step (generalized-alpha at ρ∞ = 1, whose
   * memory is A = M⁻¹ f: its start term ½ M A_n must be ½ f(x_n), or the next step's force
   * over the step is f̄ + ½ (M A_n − f(x_n)), not f̄) turns the step's own solution, M⁻¹ f̃
   * in those effectors' part, into the end state's. One pass of theirs
   * (ForceEffector.endMeanStep: f − f̃ per element, the end kept as the next mean step's
   * start, which then evaluates nothing), where f, f̃ and the next start took three (the
   * spinning block's 60 elements: 307 → 214 µs corotational, 104 → 62 stvk); the lumped
   * masses (meanEffectors: none with a consistent mass). The step is then no longer a mean
   * one (its effectors' start is the end).
   */
  meanEndCorrection(out: Float64Array): void {
    if (!this.meanStep) return;
    const { sys, f, tmp, n } = this;
    const mean = this.meanEffectors;
    this.meanStep = false;
    clearForces(sys);
    for (let i = 0; i < mean.length; i++) mean[i].endMeanStep?.();
    getForces(sys, f);
    massSolve(sys, f, tmp);
    for (let i = 0; i < n; i++) out[i] += tmp[i];
  }

  /**
   * A mean step's Newton correction `out` = W⁻¹ rhs brought to the mean force's Newton
   * matrix, W̃ out = rhs with W̃ = W − w c_x (J̃ − J) (ForceEffector.addMeanTangentProduct: J̃
   * the fem bodies' tangent of their mean force 2 f̄ − f(x_t), not symmetric, J their tangent
   * in W), by defect correction with W's factorization: out ← W⁻¹ (rhs + w c_x (J̃ − J)
   * out), up to MEAN_TANGENT_CORRECTIONS times, until a correction moves out by at most
   * MEAN_TANGENT_ACCURACY of it. It contracts at the rate Newton had with W alone (J̃ − J is
   * O(‖ΔF‖): the step's turn and strain change); each correction costs a product and a
   * solve with the kept factorization, where that Newton paid a residual (two energies an
   * element) and a factorization an iteration. The spinning block (spin.test.ts, 108
   * unknowns, factored PCG) took 9.1 to 9.8 iterations a step with W alone, linearly, and
   * 5.0 to 5.4 so, in about the same time a step (1.4–1.9 ms before, 1.5–2.4 ms after,
   * CPU time on a shared machine); the linear solvers and their choice stay the symmetric
   * ones. With joints held by the start's directions (symmetricJoints, StartDirections
   * .correct) each correction is the saddle-point solve's with the kept factorization, the
   * joint rows' residual `rc` unchanged, `dLambda` the last one's (ConstrainedSolve
   * .solveMixed): the fem block on the swinging link (swing.test.ts) 5.64 → 3.84 iterations
   * a step, its energy the same to 1e-9 J. The other joint solves keep W.
   */
  meanTangentCorrection(
    c: SchemeCoefficients,
    rhs: Float64Array,
    out: Float64Array,
    rc: Float64Array | null = null,
    dLambda: Float64Array | null = null,
  ): void {
    const mean = this.meanTangentEffectors;
    const s = c.w * c.cx;
    if (!this.meanStep || s === 0 || mean.length === 0) return;
    const { meanRhs, meanPrevious, meanFirst, meanFirstLambda, n } = this;
    const mixed = rc !== null && dLambda !== null && this.constrained !== null;
    meanFirst.set(out);
    if (mixed) meanFirstLambda.set(dLambda);
    let first = 0;
    for (let i = 0; i < n; i++) first = Math.max(first, Math.abs(out[i]));
    let previousChange = Number.POSITIVE_INFINITY;
    for (let j = 0; j < MEAN_TANGENT_CORRECTIONS; j++) {
      meanRhs.set(rhs);
      for (let i = 0; i < mean.length; i++) mean[i].addMeanTangentProduct?.(out, meanRhs, s);
      meanPrevious.set(out);
      if (mixed) (this.constrained as ConstrainedSolve).solveMixed(meanRhs, rc, out, dLambda);
      else this.solveFactored(c, meanRhs, out);
      let change = 0;
      let size = 0;
      for (let i = 0; i < n; i++) {
        change = Math.max(change, Math.abs(out[i] - meanPrevious[i]));
        size = Math.max(size, Math.abs(out[i]));
      }
      if (change <= MEAN_TANGENT_ACCURACY * size) return;
      // growing, and past W's own correction: W⁻¹ s (J̃ − J) has a spectral radius above
      // 1 (the iterate's strain far from the start's: a coarse step's first iterates under
      // a fast compression, where they grew ×80 a correction to 1e21 m/s²), and the
      // corrections diverge; W's own correction is kept, Newton's with the symmetric
      // tangent (a spinning block's first changes, the rotation's, may pass W's
      // correction and then contract: kept)
      if (change > previousChange && change > first) {
        out.set(meanFirst);
        if (mixed) (dLambda as Float64Array).set(meanFirstLambda);
        return;
      }
      previousChange = change;
    }
  }

  /** out = R(a) at the state currently applied (see file comment). */
  residual(c: SchemeCoefficients, tEnd: number, out: Float64Array): void {
    const { f, tmp, n } = this;
    // the unresolved servos' force apart first (the accumulators then hold the whole f)
    if (c.stiffWeight !== 0) this.stiffForcesNow(c.stiffForces, tEnd, this.stiffEnd);
    if (c.w > 0) {
      const mean = this.meanStep ? this.meanEffectors : null;
      if (mean !== null) for (let i = 0; i < mean.length; i++) mean[i].meanForces = true;
      try {
        this.computeForces(tEnd, f);
      } finally {
        if (mean !== null) for (let i = 0; i < mean.length; i++) mean[i].meanForces = false;
      }
    } else f.fill(0);
    this.iteration.massTimes(this.a, tmp);
    for (let i = 0; i < n; i++) out[i] = (1 - c.w) * this.fStart[i] + c.w * f[i] - tmp[i];
    if (c.w < 1) {
      // the turning bodies' start torques as I_w α_t (holdStartForces)
      const { sys, turning, startAngular, carried } = this;
      for (let k = 0; k < turning.length; k++) {
        const b = turning[k];
        const d = sys.dofOffset[b] + 3;
        mat3MulVec(carried, 0, sys.inertiaWorld, 9 * b, startAngular, 3 * k);
        for (let j = 0; j < 3; j++)
          out[d + j] = (1 - c.w) * carried[j] + c.w * f[d + j] - tmp[d + j];
      }
    }
    if (c.symmetricJoints && this.constraints !== null) {
      this.iteration.massTimes(this.startDirections.accel, tmp);
      const k = c.startForceWeight;
      for (let i = 0; i < n; i++) out[i] += k * tmp[i];
    }
    if (c.momentumRows) this.momentumRows(c, out);
    if (c.stiffWeight !== 0) {
      const { stiffEnd, stiffStart } = this;
      // shifted: f_s(t) is in the predictors (shiftStiffStart)
      const start = this.stiffShifted ? 0 : 1;
      for (let i = 0; i < n; i++) out[i] += c.stiffWeight * (stiffEnd[i] - start * stiffStart[i]);
    }
    const fx = this.extraForce;
    if (fx !== null) for (let i = 0; i < n; i++) out[i] += fx[i];
    this.subtractRayleigh(c, out);
    if (c.momentumRows && c.w > 0 && (c.rayleighMass !== 0 || c.rayleighStiffness !== 0))
      this.dampEndRates(c);
    if (this.meanRateRows && c.meanRates) this.meanRateResidual(c, out);
  }

  /**
   * The rotational rows of R in angular momentum of the bodies of momentumBody
   * (symmetricJoints; beginStartDirections), with w > 0:
   *   c_v R = I_t v_pred + c_v (1 − w) τ_t + c_v w τ_end + (c_v ρ + κ) G_tᵀλ̃ − I_end ω'
   * with ω' = v_pred + c_v a + κ Y λ̃ the rate before the end's velocity projection and τ
   * the applied torques without the gyroscopic one (dL/dt's). For I_end = I_t it is the
   * force form above; where the world inertia turns it keeps each component of L that the
   * joints' torques and the applied ones leave alone: a hinge about a non-principal axis
   * n keeps n·I ω (the projection keeps it too), so its rate.
   * Symplectic Euler (w = 0, κ = 0, ρ = 1): h R = L⁺ − g(φ)/h, L⁺ = I_t ω_t + h τ_t +
   * h G_tᵀλ̃ (kickedMomentum) and g(φ)/h the momentum with which the body turns by the
   * iterate's φ (rotationMomentum), the rate before the projection I_end⁻¹ L⁺ (turnRates):
   * the constrained symplectic Euler (Hairer, Lubich & Wanner, "Geometric Numerical
   * Integration", §VII.1) with, in place of x_{t+h} = x_t + h M⁻¹ p, a discrete free rigid
   * body's turn of momentum L⁺ (a Lie group variational integrator's, in the world frame),
   * then the end projection (RATTLE's). Each body's momentum changes by the start's torques
   * and the joints' impulses only, so what a symmetry keeps the step keeps to rounding
   * (turnRates): L_z about a vertical through a fixed pivot, a symmetric top's spin I₃ ω·e₃
   * (g(Q φ) = Q g(φ) for the turns Q that keep I_t), a hinge's rate about its fixed axis;
   * and being symplectic it keeps the energy in a band of O(h)
   * (test/engine/integrators/long-run/symplectic-momentum.test.ts). A body spinning about a
   * principal axis turns by exactly h ω a step (rotationMomentum).
   * Before, as I_t (ω' − ω_t) = h (τ_t + G_tᵀλ̃) with the gyroscopic torque at the free
   * mean rate (holdStartForces), a rod swinging on a spherical joint lost 19 % of L_z and
   * 0.34 J in 60 s at 5 ms, a heavy top fell, a wheel on a turning platform braked it.
   */
  private momentumRows(c: SchemeCoefficients, out: Float64Array): void {
    const { sys, turning, rawRate, f } = this;
    const { momentum, applied, carried } = this;
    const cv = c.cv;
    const endAngular = this.endAngular;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      if (this.momentumBody[b] === 0) continue;
      const d = sys.dofOffset[b] + 3;
      this.kickedMomentum(c, k, d, momentum);
      if (c.w === 0) {
        // symplectic Euler: the discrete rotation's momentum (rotationMomentum)
        this.rotationMomentum(k, d, cv, carried);
        for (let j = 0; j < 3; j++) out[d + j] = (momentum[j] - carried[j]) / cv;
        continue;
      }
      // − I_end ω'
      mat3MulVec(carried, 0, sys.inertiaWorld, 9 * b, rawRate, 3 * k);
      for (let j = 0; j < 3; j++) momentum[j] -= carried[j];
      // the gyroscopic torques (in f; momentumRows requires the effector) added back:
      // ω × I ω, at the end at the projected rate
      mat3MulVec(carried, 0, sys.inertiaWorld, 9 * b, sys.omega, 3 * b);
      cross3(applied, 0, sys.omega, 3 * b, carried, 0);
      for (let j = 0; j < 3; j++) out[d + j] = momentum[j] / cv + c.w * (f[d + j] + applied[j]);
      // the end's free angular acceleration I_end⁻¹ τ_end (gyroscopic included): endFreeRates
      mat3MulVec(endAngular, 3 * k, sys.inertiaWorldInv, 9 * b, f, d);
    }
  }

  /**
   * After subtractRayleigh with momentumRows (w > 0): the Rayleigh torques, −r_M I_end ω −
   * r_K (K v)_rot (M v in tmp, K v in kv), into each turning body's endAngular, so that the
   * free angular acceleration endFreeRates hands generalized-alpha's memory, A_{n+1}, is
   * the force form's M⁻¹ f_eff with its damping, as the other rows'. Without them the next
   * step's start share h/2 A_n left the damping out of the rotation: a rod of inertia
   * (0.001, 0.06, 0.06) kg·m² spun at 5 rad/s about z on a hinge at its centre kept
   * T/T₀ = 0.605 after 1 s at r_M = 0.5 /s where e^(−2 r_M t) = 0.368, energy.error +0.29 J
   * of the 0.75 J (a symmetric body, not turning, took the force form: exact).
   */
  private dampEndRates(c: SchemeCoefficients): void {
    const { sys, turning, endAngular, tmp, kv, carried, applied } = this;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      if (this.momentumBody[b] === 0) continue;
      const d = sys.dofOffset[b] + 3;
      for (let j = 0; j < 3; j++)
        carried[j] =
          (c.rayleighMass !== 0 ? -c.rayleighMass * tmp[d + j] : 0) -
          (c.rayleighStiffness !== 0 ? c.rayleighStiffness * kv[d + j] : 0);
      mat3MulVec(applied, 0, sys.inertiaWorldInv, 9 * b, carried, 0);
      for (let j = 0; j < 3; j++) endAngular[3 * k + j] += applied[j];
    }
  }

  /**
   * out ← the angular momentum (kg·m²/s, world frame) of `turning` body k (its rotational
   * dofs at d) after the step's start impulses, momentumRows' first terms:
   *   L⁺ = I_t (v_pred + (c_v ρ + κ) Y λ̃) + c_v (1 − w) τ_t + (h − c_v w) ω_t × I_t ω_t,
   * G_tᵀλ̃'s rotational part being I_t (Y λ̃), and fStart's torque τ_t holding the
   * gyroscopic −ω_t × I_t ω_t, added back with the whole start weight h − c_v w
   * (startTorqueWeight: the rest of the trapezoid, of which c_v (1 − w) τ_t in fStart and
   * the rest in v_pred's memory, generalized-alpha's h/2 A_n, A_n = I_t⁻¹ (τ_t − ω_t ×
   * I_t ω_t)), so that L⁺ − L_t is the applied torques' impulse without the gyroscopic one.
   */
  private kickedMomentum(c: SchemeCoefficients, k: number, d: number, out: Float64Array): void {
    const { startInertia, startGyroscopic, fStart, vPred, carried } = this;
    const y = this.startDirections.accel;
    const kJoint = c.cv * c.startForceWeight + c.startVelocityWeight;
    for (let j = 0; j < 3; j++) carried[j] = vPred[d + j] + kJoint * y[d + j];
    mat3MulVec(out, 0, startInertia, 9 * k, carried, 0);
    for (let j = 0; j < 3; j++)
      out[j] += c.cv * (1 - c.w) * fStart[d + j] + c.startTorqueWeight * startGyroscopic[3 * k + j];
  }

  /**
   * out ← g(φ)/h = J_l⁻ᵀ(φ) I_t φ/h (kg·m²/s, world frame) for `turning` body k, its
   * rotational dofs at d: φ = inc[d..d+2] the running iterate's turn (rad, world frame:
   * R_{t+h} = exp([φ]×) R_t), I_t the start's world inertia, J_l⁻ᵀ(φ) = 1 + ½ [φ]× +
   * β(|φ|) [φ]×² (math/so3.ts). The momentum with which the body turns by φ over h in the
   * Lie group variational integrator of the discrete Lagrangian L_d = φᵀ I_t φ/(2h), h times
   * the kinetic energy at the constant body rate φ/h (Bou-Rabee & Marsden, "Hamilton–Pontryagin
   * integrators on Lie groups", Found. Comput. Math. 9, 2009, their τ the exponential map):
   * R_{t+h} ← exp([ε]×) R_{t+h} changes φ by J_l⁻¹ ε, so ∂L_d/∂R_{t+h} = g/h; R_t ←
   * exp([ε]×) R_t changes φ by −J_r⁻¹ ε and I_t by [ε]× I_t − I_t [ε]×, so −∂L_d/∂R_t =
   * (J_r⁻ᵀ + [φ]×) I_t φ/h = g/h too: both discrete Legendre transforms agree, a free step
   * carries the world momentum unchanged. L_d is symmetric (from R_{t+h} back to R_t the turn
   * is −φ, and φᵀ I_{t+h} φ = φᵀ I_t φ as exp([φ]×) φ = φ), so the free turn is second
   * order. Where φ lies on a principal axis of I_t, J_l⁻ᵀ φ = φ and g = λ φ (λ its moment):
   * a body spinning about a principal axis turns by exactly h ω a step, at any h ω (J_l⁻¹ is
   * singular at |φ| = 2π only); on a hinge about any fixed axis n, n·g(θ n) = θ nᵀ I_t n, a
   * turn of exactly h (n·L)/(nᵀ I_t n). Before, Moser & Veselov's discrete rigid body (Lee,
   * Leok & McClamroch's L_d = tr((1 − F) J)/h, J = ½ tr(I) 1 − I), h [L]× = E J_t − J_t Eᵀ
   * with E = exp([φ]×), asked λ sin θ = h L about a principal axis: a wheel hinged at
   * 100 rad/s turned by asin(h ω) a step, 4.7 % fast at 5 ms (48 % at h ω = 0.995), and at
   * h ω > 1 the step had no solution and was sub-stepped.
   */
  private rotationMomentum(k: number, d: number, h: number, out: Float64Array): void {
    const { startInertia, inc, turnMomentum: m, turnCross: c, turnDouble: u } = this;
    mat3MulVec(m, 0, startInertia, 9 * k, inc, d);
    cross3(c, 0, inc, d, m, 0);
    cross3(u, 0, inc, d, c, 0);
    const beta = expInverseBeta(dot3(inc, d, inc, d));
    for (let j = 0; j < 3; j++) out[j] = (m[j] + 0.5 * c[j] + beta * u[j]) / h;
  }

  /**
   * Symplectic Euler's momentumRows: W's rotational block of each body they hold set to
   * −∂R/∂a = ∂g/∂φ (rotationMomentum; φ = h v_t + h² a, R = (L⁺ − g(φ)/h)/h, L⁺ without a):
   * with m = I_t φ, c = φ × m, u = φ × c, θ = |φ|,
   *   ∂g/∂φ = I_t + ½ ([φ]× I_t − [m]×) + β ([φ]×² I_t − [φ]× [m]× − [c]×) + (β′/θ) u φᵀ,
   * I_t at φ = 0. Times 1 + c_v r_M (the Rayleigh mass force at the end rate, −r_M L',
   * turnRates), in place of the mass block (1 + c_v r_M) I_end that `assemble` put there.
   * The mass block alone is off by about |φ| I_max: Newton diverged on a rod of axial
   * inertia 1e-4 and transverse 1/12 kg·m² turning 0.01 rad a step, which went to 8
   * sub-steps.
   */
  private rotationJacobians(c: SchemeCoefficients): void {
    const { sys, turning, inc, matrix, startInertia } = this;
    const { turnMomentum: m, turnCross: cr, turnDouble: u } = this;
    const { turnSkew: P, turnSkewOther: S, turnProduct: A, turnJacobian: D } = this;
    const scale = 1 + c.cv * c.rayleighMass;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      if (this.momentumBody[b] === 0) continue;
      const d = sys.dofOffset[b] + 3;
      const o = 9 * k;
      mat3MulVec(m, 0, startInertia, o, inc, d);
      cross3(cr, 0, inc, d, m, 0);
      cross3(u, 0, inc, d, cr, 0);
      const t2 = dot3(inc, d, inc, d);
      const beta = expInverseBeta(t2);
      const slope = expInverseBetaSlope(t2);
      // I_t + ½ [φ]× I_t + β [φ]×² I_t
      mat3Skew(P, 0, inc, d);
      mat3Mul(A, 0, P, 0, startInertia, o);
      mat3Mul(D, 0, P, 0, A, 0);
      for (let i = 0; i < 9; i++) D[i] = startInertia[o + i] + 0.5 * A[i] + beta * D[i];
      // − ½ [m]× − β [φ]× [m]×
      mat3Skew(S, 0, m, 0);
      mat3Mul(A, 0, P, 0, S, 0);
      for (let i = 0; i < 9; i++) D[i] -= 0.5 * S[i] + beta * A[i];
      // − β [c]× + (β′/θ) u φᵀ, less the mass block; the Rayleigh mass force scales it alike
      mat3Skew(S, 0, cr, 0);
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          const e = 3 * i + j;
          const dg = D[e] - beta * S[e] + slope * u[i] * inc[d + j];
          A[e] = scale * (dg - sys.inertiaWorld[9 * b + e]);
        }
      matrix.add3x3(sys.block[b], sys.block[b], 3, 3, A, 0, 1);
    }
  }

  /**
   * Symplectic Euler's momentumRows: the rate of each body they hold before the end's
   * velocity projection, ω' = I_end⁻¹ L' (I_end at the iterate's orientation), L' the
   * momentum the rows ask of the turn: L⁺ (kickedMomentum) plus h times what the residual
   * adds after them, the held force extraForce (Moreau–Jean's contact impulses over h) and
   * the Rayleigh forces. Without Rayleigh damping L' = L⁺ + h τ_extra, in closed form, so
   * what a symmetry keeps is kept to rounding (a hinged spinner's rate to 3e-13 over 30 s,
   * where the iterate's own turn momentum, g(φ)/h, held it only to Newton's
   * tolerance, 1.4e-9); with it, that turn momentum (at the rows' solution L⁺ + h τ_extra −
   * h r_M L' − h r_K (K v)_rot; nothing is conserved there).
   */
  private turnRates(c: SchemeCoefficients, v: Float64Array): void {
    const { sys, turning, momentum } = this;
    const fx = this.extraForce;
    const damped = c.rayleighMass !== 0 || c.rayleighStiffness !== 0;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      if (this.momentumBody[b] === 0) continue;
      const d = sys.dofOffset[b] + 3;
      if (damped) this.rotationMomentum(k, d, c.cv, momentum);
      else {
        this.kickedMomentum(c, k, d, momentum);
        if (fx !== null) for (let j = 0; j < 3; j++) momentum[j] += c.cv * fx[d + j];
      }
      mat3MulVec(v, d, sys.inertiaWorldInv, 9 * b, momentum, 0);
    }
  }

  /**
   * After `solve` with momentumRows: the turning bodies' rotational rows of `out` set to
   * their free angular acceleration at the end, I_end⁻¹ f_end (the a − ρ Y λ̃ of the force
   * form, which the momentum rows' a no longer is); generalized-alpha's memory A_{n+1}.
   */
  endFreeRates(c: SchemeCoefficients, out: Float64Array): void {
    if (!c.momentumRows) return;
    const { sys, turning, endAngular } = this;
    for (let k = 0; k < turning.length; k++) {
      const d = sys.dofOffset[turning[k]] + 3;
      for (let j = 0; j < 3; j++) out[d + j] = endAngular[3 * k + j];
    }
  }

  /**
   * u ← R_end R_tᵀ u on the turning bodies' rotational rows (the rest untouched): vectors of
   * the step's start carried along with each body's rotation over the step (R_t from the
   * start's orientation, R_end the current one). Generalized-alpha's memory with ρ∞ < 1
   * (its A_n and pseudo-acceleration a_n, blended with the end's free acceleration): the
   * free angular acceleration of a body whose world inertia turns, I_w⁻¹ (τ − ω × I_w ω),
   * turns with the body, and blended in the world frame the carried a_n lagged it by a
   * phase: on a hinge about a non-principal axis the joints' torque then balanced a wrong
   * acceleration and its part along the axis, through I_w⁻¹, changed the rate (40 rad/s
   * lost 1.2 % in 40 s at ρ∞ = 0.9, 20 % at 0.5, h = 5 ms). Carried with the body they are
   * the body-frame accelerations of the Lie-group generalized-α (Brüls & Cardona, J.
   * Comput. Nonlinear Dyn. 5, 2010), and a relative equilibrium keeps a_n = A_n exactly.
   */
  transportWithRotation(u: Float64Array): void {
    const { sys, turning, start, carried } = this;
    for (let k = 0; k < turning.length; k++) {
      const b = turning[k];
      const d = sys.dofOffset[b] + 3;
      quatRotateInverse(carried, 0, start.quat, 4 * b, u, d);
      quatRotate(u, d, sys.quat, 4 * b, carried, 0);
    }
  }

  /** out −= (r_M M + r_K K) v at the current state (Rayleigh damping forces). */
  private subtractRayleigh(c: SchemeCoefficients, out: Float64Array): void {
    const { tmp, n } = this;
    if (c.rayleighMass !== 0) {
      this.iteration.massTimes(this.v, tmp);
      for (let i = 0; i < n; i++) out[i] -= c.rayleighMass * tmp[i];
    }
    if (c.rayleighStiffness !== 0) {
      this.iteration.stiffnessTimes(this.v, this.kv);
      for (let i = 0; i < n; i++) out[i] -= c.rayleighStiffness * this.kv[i];
    }
  }

  /** Assembles W at the current state (iteration-matrix.ts) into `matrix`. */
  assembleIterationMatrix(c: SchemeCoefficients): void {
    this.iteration.assemble(c);
  }

  /**
   * True when W is the (scaled) block-diagonal mass matrix: not with symplectic Euler's
   * momentum rows, whose rotational blocks are rotationJacobians'.
   */
  usesMassOnly(c: SchemeCoefficients): boolean {
    return this.iteration.usesMassOnly(c) && !(c.momentumRows && c.w === 0);
  }

  /** out = W⁻¹ rhs with the last factorization, at the running solve's Krylov settings. */
  private solveFactored(c: SchemeCoefficients, rhs: Float64Array, out: Float64Array): void {
    this.linearIterations += this.iteration.solve(
      c,
      rhs,
      out,
      this.linearTolerance,
      this.linearCap,
      this.affineTest.active ? this.affineTest : null,
    );
  }

  /**
   * out = the acceleration change caused by the generalized force `rhs` (N, N·m) with the
   * bilateral constraints (joints) held: Δa = W⁻¹ rhs restricted to G Δa = 0. Contact
   * corrections use it to build their Delassus operator and to apply impulses, so joints,
   * springs and contacts combine in one step. Without joints it is W⁻¹ rhs.
   */
  solveConstrained(c: SchemeCoefficients, rhs: Float64Array, out: Float64Array): void {
    if (this.constrained === null) this.solveFactored(c, rhs, out);
    else this.constrained.solve(rhs, this.zeroRows, out, this.scratchLambda);
  }

  /**
   * W's block LDLᵀ factorization for `rightHandSides` solves at once (iteration-matrix.ts
   * exactFactorization); null with joints (solveConstrained holds them) or when W is not
   * solved by factored PCG or refactoring it would cost more than the solves.
   */
  exactFactorization(c: SchemeCoefficients, rightHandSides: number): BlockLdlt | null {
    return this.constrained === null ? this.iteration.exactFactorization(c, rightHandSides) : null;
  }

  /**
   * One Newton correction: W (and with joints the saddle-point system) factored at the
   * current iterate when `refactor`, else the last factorization reused (a chord
   * iteration; with joints G is refreshed for the right-hand side, so that the iterations
   * still converge to the solution of the exact equations).
   */
  private solveIteration(
    c: SchemeCoefficients,
    tEnd: number,
    rhs: Float64Array,
    out: Float64Array,
    refactor: boolean,
  ) {
    const set = this.constraints;
    if (set === null || this.constrained === null) {
      // a chord iteration solves with the kept factorization at this iteration's tolerance
      if (refactor) this.iteration.factor(c);
      this.solveFactored(c, rhs, out);
      this.meanTangentCorrection(c, rhs, out);
      return;
    }
    if (refactor) this.factorConstrained(c, tEnd);
    // (symmetricJoints: this iterate's velocity projection, applyUnknown, has just updated G)
    else if (!c.symmetricJoints) set.updateJacobian(tEnd);
    // Velocity level G v_{t+h} = −Ct, i.e. G̃ Δa = −(G v + Ct)/c_v (G̃ the rows' Jacobian
    // over c_v, factorConstrained; G in the linearized step); position level
    // C(x) + G c_x Δa = 0, i.e. G Δa = −C/c_x (positionLevel); acceleration level
    // G a = Qc when c_v = 0 (the consistent initial acceleration).
    const rc = this.rc;
    this.positionLevelRows = c.positionLevel && c.cv > 0;
    if (this.positionLevelRows) {
      set.residual(tEnd, rc);
      for (let i = 0; i < rc.length; i++) rc[i] = -rc[i] / c.cx;
      // the symmetric joints' rows of x_t ⊕ (Δx_pred + c_x a), differentiated exactly:
      // G J (ConstraintSet.chainIncrements; G is this iterate's, the next velocity
      // projection refreshes it, and the force directions are the start's, G_t)
      if (c.symmetricJoints) set.chainIncrements(this.inc);
    } else if (c.cv > 0) {
      set.velocityTerm(tEnd, this.ct);
      set.multiply(this.v, rc);
      for (let i = 0; i < rc.length; i++) rc[i] = -(rc[i] + this.ct[i]) / c.cv;
    } else {
      set.quadraticTerm(tEnd, this.ct);
      set.multiply(this.a, rc);
      for (let i = 0; i < rc.length; i++) rc[i] = this.ct[i] - rc[i];
    }
    const t0 = performance.now();
    if (c.symmetricJoints) {
      this.startDirections.correct(
        set,
        this.constrained,
        c,
        refactor,
        rhs,
        rc,
        out,
        this.scratchLambda,
        this,
      );
      if (refactor) {
        if (this.positionLevelRows) this.jointRoundingResponse(c);
        else {
          this.accelNoise = 0;
          this.jointNoise = 0;
        }
      }
    } else if (refactor) this.constrained.solve(rhs, rc, out, this.lambda);
    else {
      // Chord: the factorization's G differs from the current one, so the solve must be
      // for increments of the whole residual R + Gᵀλ (current G and λ), λ += Δλ; solving
      // for λ itself, as a fresh factorization does, would end where
      // G W⁻¹ Gᵀ − S_factored leaves C ≠ 0 (the four-bar example went unstable).
      set.multiplyTranspose(this.lambda, this.tmp);
      for (let i = 0; i < this.n; i++) rhs[i] += this.tmp[i];
      const dLambda = this.scratchLambda;
      this.constrained.solve(rhs, rc, out, dLambda);
      for (let i = 0; i < dLambda.length; i++) this.lambda[i] += dLambda[i];
    }
    this.timing.solve += performance.now() - t0;
  }

  /**
   * StartDirections.correct, after the mixed solve of (Δa, Δλ̃) = (out, dLambda): with
   * servos the step does not resolve, iterated Newton, their rates through the end's
   * velocity projection (stiff-rates.ts); `refactor` as the solve's.
   */
  correctStiffRates(
    c: SchemeCoefficients,
    refactor: boolean,
    out: Float64Array,
    dLambda: Float64Array,
  ): void {
    if (this.stiffRates === null || !this.stiffFull || !this.iterating) return;
    this.stiffRates.correct(c, refactor, out, dLambda);
  }

  /** StiffRateHost: the mixed system's (Δa, Δλ̃) for the balance's `rhs`, the joint rows 0. */
  solveMixedForce(rhs: Float64Array, outA: Float64Array, outL: Float64Array): void {
    this.constrained?.solveMixed(rhs, this.zeroRows, outA, outL);
  }

  /** Whether the running Newton iteration is within TURN_SWITCH of its solution. */
  private turnClose = false;
  /** Whether the running solve takes the fuller matrix (SLOW_CONTRACTION). */
  private stiffFull = false;
  /** Updates G at the current iterate and factors the saddle-point system. */
  private factorConstrained(c: SchemeCoefficients, tEnd: number): void {
    const solver = this.constrained!;
    const set = this.constraints!;
    const t0 = performance.now();
    // symmetricJoints: G is current (applyUnknown's velocity projection, see solveIteration)
    if (!c.symmetricJoints) set.updateJacobian(tEnd);
    // Velocity-level rows G(x) v + Ct = 0 at the iterate (x, v) of iterated Newton: their
    // Jacobian is G̃ = G + (c_x/c_v) ∂(G v)/∂x (ConstraintSet.velocityRows), nonsymmetric
    // against the forces' Gᵀ, so not the mass path's S; iterated Newton only, as the
    // geometric stiffness below (the linearized step's one correction keeps G).
    let rows: Float64Array | null = null;
    if (this.iterating && !c.positionLevel && c.cv > 0 && c.cx > 0 && set.hasVelocityCurvature) {
      rows = this.velocityRows;
      set.velocityRows(c.cx / c.cv, rows);
    }
    this.massMetricFactored = rows === null && this.usesMassOnly(c);
    if (this.massMetricFactored) {
      this.timing.assembly += performance.now() - t0;
      // symmetricJoints: the velocity projection of this iterate (applyUnknown) has just
      // factored the same S = G M⁻¹ Gᵀ in the shared workspace
      solver.factorMass(1 + c.cv * c.rayleighMass, c.symmetricJoints);
      this.timing.solve += performance.now() - t0;
      return;
    }
    this.iteration.assemble(c);
    if (c.momentumRows && c.w === 0) this.rotationJacobians(c);
    // the loaded joints' geometric stiffness (constraint-set.ts): their forces Gᵀλ are
    // taken at each iterate, except with the symmetric joints, whose directions are the
    // step's start (start-directions.ts). Iterated Newton only: it changes the iterations'
    // path, not where they converge; in the linearized step it would change the step
    // itself, with the previous step's λ — Newmark's γ = ½ then blew the 100-link chain
    // up at its whip (test/engine/integrators/constrained.test.ts).
    if (this.iterating && !c.symmetricJoints && c.cx > 0)
      set.addGeometricStiffness(this.lambda, this.matrix, -c.cx);
    // the servos the step does not resolve, at their weight w + ε in the residual: the
    // turning of their force's direction with the bodies, τ ∂g/∂x (JointActuator
    // .addTurnStiffness), near the solution only (TURN_SWITCH)
    if (this.iterating && c.cx > 0 && this.stiffFull && this.turnClose) {
      const stiff = c.stiffForces;
      const s = -(c.w + c.stiffWeight) * c.cx;
      for (let i = 0; i < stiff.length; i++) stiff[i].addTurnStiffness?.(this.matrix, s);
    }
    if (this.matrix.isBlockDiagonal()) {
      const t1 = performance.now();
      const ok = solver.factorBlockDiagonal(this.matrix, !c.symmetricJoints, rows);
      this.timing.assembly += t1 - t0;
      this.timing.solve += performance.now() - t1;
      if (ok) return;
    }
    const w = this.matrix.toCsr();
    const t1 = performance.now();
    // (symmetricJoints: their own saddle point is factored by StartDirections.correct)
    solver.factorGeneral(w, !c.symmetricJoints, rows);
    this.timing.assembly += t1 - t0;
    this.timing.solve += performance.now() - t1;
  }

  /**
   * accelNoise, jointNoise ← ‖Δa‖∞, ‖ρ Y Δλ̃‖∞ of the factored mixed system
   * (StartDirections.correct's) for the right-hand side [0; e], the balance rows 0 and
   * e_k = ±positionRoundingFloor(c_x) (m/s², rad/s²) with a fixed pseudo-random sign a row
   * (Knuth's multiplicative hash: rounding errors have no common sign). One solve with the
   * factorization just made, no allocation.
   */
  private jointRoundingResponse(c: SchemeCoefficients): void {
    const { noiseRows, noiseLambda, noiseAccel } = this;
    const floor = this.positionRoundingFloor(c.cx);
    for (let k = 0; k < noiseRows.length; k++)
      noiseRows[k] = (Math.imul(k + 1, 2654435761) >>> 0) & 0x8000 ? floor : -floor;
    this.constrained!.solveMixed(this.zeroForce, noiseRows, noiseAccel, noiseLambda);
    let accel = 0;
    for (let i = 0; i < noiseAccel.length; i++) accel = Math.max(accel, Math.abs(noiseAccel[i]));
    this.accelNoise = accel;
    this.startDirections.directionsOf(noiseLambda, noiseAccel);
    let change = 0;
    for (let i = 0; i < noiseAccel.length; i++)
      change = Math.max(change, Math.abs(c.startForceWeight * noiseAccel[i]));
    this.jointNoise = change;
  }

  /**
   * stiffLed ← the force f_s^δ(t) of the servos the step did not resolve (`chosen`), with
   * its lead, at the solved end state before the joints' projection: the law the step
   * applied (holdStiffForces); their reported efforts held at it (ForceEffector.holdEffort)
   * until projectOnConstraints ends.
   */
  private holdApplied(chosen: readonly ForceEffector[], t: number): void {
    this.leadStiff(chosen, this.stiffLead);
    this.stiffForcesNow(chosen, t, this.stiffLed);
    this.leadStiff(chosen, 0);
    for (let i = 0; i < chosen.length; i++) chosen[i].holdEffort?.(true);
  }

  /**
   * λ ← the joints' multipliers consistent with the projected end state with the servos
   * the step did not resolve at the force it applied (holdApplied), their efforts still
   * held (projectOnConstraints releases them): the State's reactions and efforts those of
   * the law the step applied, as generalized-alpha's (the memory's acceleration keeps the
   * state's own law: the next step takes their start share out at it, shiftStiffStart).
   * At the projected state the law reads k_v times the projection's move: a velocity servo
   * holding the 2 kg, 0.6 m rod hinged at its end at 5 rad/s, 1/60 s, k_v = 1e12, reported
   * 2448 N·m where it applied 1e-4 (the projection took 2.4e-9 rad/s a step), and after
   * the first step 225 N·m for 72; a position servo k_p = 1e12 from 0.3 rad 1.5e11 N·m
   * for 259 (the law at x). S is factored at the end (constrainedAcceleration,
   * consistentMultipliers).
   */
  private reportApplied(c: SchemeCoefficients, t: number): void {
    const { f, stiffEnd, stiffLed, n } = this;
    const chosen = c.stiffForces;
    this.computeForces(t, f);
    this.stiffForcesNow(chosen, t, stiffEnd);
    for (let i = 0; i < n; i++) f[i] += stiffLed[i] - stiffEnd[i];
    getVelocity(this.sys, this.v);
    this.subtractRayleigh(c, f);
    this.jointMultipliers(f, t, this.lambda);
  }

  /**
   * Set by an integrator whose step's multipliers (and acceleration) are not the end
   * state's (newmark.ts, backward Euler in theta-scheme.ts): the next projectOnConstraints
   * replaces λ by the multipliers consistent with the projected end state and, when
   * `acceleration` is given, writes the acceleration consistent with it there
   * (constrainedAcceleration, with the coefficients' Rayleigh terms, S factored there),
   * and clears it. Null: λ kept.
   */
  reactionsAtEnd: EndConsistency | null = null;

  /**
   * Drift correction after a step with joints (joint-projection.ts), at tEnd after a step
   * of h (s) in the integrator's `order`, to jointTolerance (m, rad); nothing without joints.
   * Whether the joints end within jointTolerance (JointProjection.project; true without).
   */
  projectOnConstraints(
    tEnd: number,
    h: number,
    order: ProjectionOrder,
    jointTolerance: number,
  ): boolean {
    const reactions = this.reactionsAtEnd;
    this.reactionsAtEnd = null;
    // (newmark's velocity level) the servos the step did not resolve, as it applied them
    const applied = reactions !== null ? this.stiffHeld : null;
    if (applied !== null) this.holdApplied(applied.stiffForces, tEnd);
    let met = true;
    try {
      met =
        this.jointProjection?.project(
          tEnd,
          h,
          order,
          jointTolerance,
          this.positionLevelRows,
          this.massMetricFactored,
        ) ?? true;
      if (reactions?.acceleration)
        this.constrainedAcceleration(reactions.coefficients, tEnd, reactions.acceleration);
      else if (reactions !== null) {
        getVelocity(this.sys, this.v);
        this.consistentMultipliers(reactions.coefficients, tEnd, true);
      }
      if (applied !== null) this.reportApplied(applied, tEnd);
    } finally {
      if (applied !== null) for (const e of applied.stiffForces) e.holdEffort?.(false);
    }
    // the projections (contacts', limits', this one) move the pose by drift-sized amounts:
    // the angles guided in the step keep their branch (guideAngles)
    if (this.anglesGuided) for (let j = 0; j < this.angles.length; j++) this.angles[j].guide();
    return met;
  }
}
