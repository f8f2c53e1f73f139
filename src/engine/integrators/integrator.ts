/**
 * The integrator interface: one step of the equations of motion from t to t + h, the
 * order of the joints' projection after it, and the step's memory (IntegratorMemory, held
 * in the simulation's state record). Each integrator states how the solved-for unknown
 * maps to the end state in its SchemeCoefficients (acceleration-step.ts: c_x, c_v), which
 * the constraint and contact corrections use (SOFA's OdeSolver integration factors).
 */

export type IntegratorName =
  | "moreau-jean"
  | "newmark"
  | "generalized-alpha"
  | "backward-euler"
  | "symplectic-euler"
  | "articulated";

export interface StepStats {
  newtonIterations: number;
  /** Newton met its tolerance (schemas/state.ts SolverStats). */
  newtonConverged: boolean;
  linearIterations: number;
  contactIterations: number;
  contactResidual: number;
  /** The contact solver met solver.tolerance (schemas/state.ts SolverStats). */
  contactConverged: boolean;
  /** Deepest penetration (m) the contact position projection left, 0 without one. */
  penetration: number;
  /** penetration ≤ solver.projectionTolerance. */
  projectionConverged: boolean;
  /** Sub-steps the step was taken in (1: whole; more after halvings, step-halving.ts). */
  substeps: number;
  /**
   * The largest local error estimate (m) of the step's accepted sub-steps (generalized-α's
   * error control, generalized-alpha.ts largestDisplacement); 0 without one.
   */
  stepError: number;
  /** stepError ≤ solver.stepTolerance in every sub-step (true without error control). */
  stepToleranceMet: boolean;
  /** The joints' post-step projection met solver.jointTolerance (true where none ran). */
  jointToleranceMet: boolean;
  /**
   * Impacts of jointed bodies the step met at their instants (Moreau–Jean: impact-events.ts,
   * the step split at each); 0 elsewhere.
   */
  impacts: number;
  /**
   * False when the step met more impacts than it resolves one by one (MAX_EVENTS) and took
   * the rest of the step whole, Newton's law on its contacts together.
   */
  impactsResolved: boolean;
}

/** Counts of a step not yet taken (every figure zero, converged). */
export function emptyStepStats(): StepStats {
  return {
    newtonIterations: 0,
    newtonConverged: true,
    linearIterations: 0,
    contactIterations: 0,
    contactResidual: 0,
    contactConverged: true,
    penetration: 0,
    projectionConverged: true,
    substeps: 1,
    stepError: 0,
    stepToleranceMet: true,
    jointToleranceMet: true,
    impacts: 0,
    impactsResolved: true,
  };
}

/** Zeroes the counts of `stats` for a new step (converged until a sub-step says not). */
export function resetStepStats(stats: StepStats): void {
  stats.newtonIterations = 0;
  stats.newtonConverged = true;
  stats.linearIterations = 0;
  stats.contactIterations = 0;
  stats.contactResidual = 0;
  stats.contactConverged = true;
  stats.penetration = 0;
  stats.projectionConverged = true;
  stats.substeps = 1;
  stats.stepError = 0;
  stats.stepToleranceMet = true;
  stats.jointToleranceMet = true;
  stats.impacts = 0;
  stats.impactsResolved = true;
}

/**
 * Step memory an integrator carries from one step to the next: part of the simulation's
 * state record (simulation/state.ts), which a snapshot saves for the continuation to be
 * bit-identical. The record holds one, created once; the integrator of the current solver
 * settings is handed it and reads and writes its arrays in place (a PATCH that builds a new
 * integrator hands it the same memory, invalid). Arrays are generalized vectors (size
 * numDofs, translational then rotational dofs per body). A class for V8 (see BodySystem).
 */
export class IntegratorMemory {
  /**
   * Newmark: a_t (m/s², rad/s²), the acceleration the next step's predictor uses;
   * generalized-α: the free acceleration A_n = M⁻¹ f (generalized-alpha.ts); articulated:
   * the joint coordinates' accelerations at the last step's end (its first entries); the
   * θ-schemes with joints at the position level: the acceleration consistent with the
   * joints at the state, M⁻¹ (f + Gᵀλ), their error control's (theta-scheme.ts tooCoarse;
   * valid only with previousValid too).
   */
  readonly acceleration: Float64Array;
  /**
   * Newmark: a_{t−h}, the step before's (its Newton guess, newmark.ts); generalized-α: the
   * acceleration consistent with the joints at the state, M⁻¹ (f + Gᵀλ), for its error
   * control; the θ-schemes: the last step's mean acceleration (v_{t+h} − v_t)/h (their
   * error control's without joints at the position level; Moreau–Jean's impacts' closing
   * times, impact-events.ts).
   */
  readonly previousAcceleration: Float64Array;
  /** Generalized-α: the pseudo-acceleration a_n (`acceleration` holds ä_n). */
  readonly pseudoAcceleration: Float64Array;
  /**
   * Generalized-α: the dissipative forces' share of M (a_n − A_n) (N, N·m; the effectors',
   * compliant contact's and the Rayleigh force's, MemoryLag), which the energy balance
   * carries beside a_n (simulation/step-work.ts); valid with pseudoValid.
   */
  readonly dissipativeLag: Float64Array;
  /**
   * Whether each array holds a value to continue from: all false at the start, after a
   * reset, an external change of the state or a PATCH (the scheme then recomputes them).
   * Only the arrays a scheme uses become valid, and a snapshot saves only valid ones.
   * Newmark without a valid a_{t−h} (an older snapshot) guesses from a_t alone.
   */
  accelerationValid: boolean;
  previousValid: boolean;
  pseudoValid: boolean;
  /**
   * The sub-step controller (substep-depth.ts; generalized-alpha and the θ-schemes): the next
   * step starts with 2^substepDepth sub-steps; substepWait more steps pass before it tries
   * sub-steps twice as long, and substepBackoff steps after the next failure. 0, 0 and 1
   * at the start and after invalidate().
   */
  substepDepth = 0;
  substepWait = 0;
  substepBackoff = 1;
  /**
   * The articulated integrator's next sub-step length (s; articulated.ts), 0 at the start
   * and after invalidate(): the next step then tries the whole step first. Symplectic
   * Euler with joints: its last sub-step's length, whose change the next sub-step's start
   * velocity is restaggered by (theta-scheme.ts restagger; 0: none).
   */
  substepSize = 0;
  /**
   * Symplectic Euler with joints: the velocities are at the positions' time, not the
   * leapfrog's half a sub-step behind them (an impact met at its instant left them there,
   * impact-events.ts impactInTime), so the next sub-step kicks half its length
   * (theta-scheme.ts restagger). Set and taken up within one step (a piece always follows
   * the impact), never in a snapshot; false at the start and after invalidate().
   */
  velocitiesInTime = false;
  /**
   * The articulated integrator's estimate of the largest |λ| of the motion's Jacobian
   * (1/s; articulated.ts, readStiffness), which bounds its sub-steps to the scheme's
   * stability region; 0 (none) at the start and after invalidate().
   */
  stiffness = 0;
  /**
   * The θ-schemes: whether the run's start was made consistent with the joints and motors
   * (AccelerationStepper.consistentStart, the energy it changes counted); false at the
   * start and after invalidate(): the next step makes it (theta-scheme.ts).
   */
  started = false;
  /**
   * Moreau–Jean: whether the state's multipliers (the record's λ) are its last step's mean
   * joint force, impulses included (a step with active contacts or limits), rather than
   * the consistent ones of its end: the next smooth step then takes its motors' power at
   * the start at the consistent multipliers (theta-scheme.ts startConsistent).
   */
  lambdaMean = false;

  constructor(numDofs: number) {
    this.acceleration = new Float64Array(numDofs);
    this.previousAcceleration = new Float64Array(numDofs);
    this.pseudoAcceleration = new Float64Array(numDofs);
    this.dissipativeLag = new Float64Array(numDofs);
    this.accelerationValid = false;
    this.previousValid = false;
    this.pseudoValid = false;
  }

  /** Forgets the memory (the arrays stay; the next step recomputes what it needs). */
  invalidate(): void {
    this.accelerationValid = false;
    this.previousValid = false;
    this.pseudoValid = false;
    this.substepDepth = 0;
    this.substepWait = 0;
    this.substepBackoff = 1;
    this.substepSize = 0;
    this.velocitiesInTime = false;
    this.stiffness = 0;
    this.started = false;
    this.lambdaMean = false;
  }

  /** this ← from (a memory of the same size). */
  copyFrom(from: IntegratorMemory): void {
    this.acceleration.set(from.acceleration);
    this.previousAcceleration.set(from.previousAcceleration);
    this.pseudoAcceleration.set(from.pseudoAcceleration);
    this.dissipativeLag.set(from.dissipativeLag);
    this.accelerationValid = from.accelerationValid;
    this.previousValid = from.previousValid;
    this.pseudoValid = from.pseudoValid;
    this.substepDepth = from.substepDepth;
    this.substepWait = from.substepWait;
    this.substepBackoff = from.substepBackoff;
    this.substepSize = from.substepSize;
    this.velocitiesInTime = from.velocitiesInTime;
    this.stiffness = from.stiffness;
    this.started = from.started;
    this.lambdaMean = from.lambdaMean;
  }
}

/**
 * Order of the post-step drift correction of the joints (AccelerationStepper.
 * projectOnConstraints), a property of the scheme:
 * - "velocities-first" (the θ-schemes: Moreau–Jean, backward and symplectic Euler): the
 *   velocities are made tangent at the end-of-step configuration the step reached
 *   (G v = −Ct there, as a converged Newton loop of Siconos' Moreau–Jean leaves them),
 *   then the positions alone are projected (Siconos' TimeSteppingProjectOnConstraints,
 *   "projection on position only … with kinetic metric"); both use one factorization
 *   of G M⁻¹ Gᵀ. The velocities then miss the tangent at the projected positions by
 *   ‖ΔG v‖ (ΔG the change of G over the µm correction); the next step's velocity
 *   constraint removes that, with a gain of about hω/2 per step on the drift it causes.
 * - "positions-first" (Newmark): positions projected, then velocities, tangent where the
 *   positions were linearized last when that is within one correction of them, else at
 *   the projected positions. Newmark's acceleration memory a_t makes the other order
 *   unstable: a whipping chain's joints come apart with it, with β = ¼, γ = ½ as with
 *   β = 0.3025, γ = 0.6, where every θ-scheme holds them (bench/README.md, "Projection
 *   order").
 * - "none" (generalized-α): the step holds the joints at the position level and Newton
 *   converges it (acceleration-step.ts, positionLevel): the positions end on the manifold
 *   to Newton's tolerance, and the velocities are the scheme's own (projecting them would
 *   change v without the acceleration memory, a perturbation of the scheme that the
 *   generalized-α's convergence analysis does not cover).
 */
export type ProjectionOrder = "velocities-first" | "positions-first" | "none";

/**
 * Told of each accepted sub-step of a step an integrator split (step-halving.ts): the
 * energy balance weighs each sub-step's forces as the scheme does (simulation/step-work.ts).
 */
export interface SubstepObserver {
  /**
   * The sub-step from t of h (s) was accepted; the system is at its end. `dofs`: it moved
   * only those (1), the others being stepped over the whole step (Moreau–Jean's groups apart
   * from its contacts, moreau-jean.ts); absent or null: the whole system.
   */
  substepDone(t: number, h: number, dofs?: Uint8Array | null): void;
  /**
   * The system is at the end, at t (s), of the (sub-)step or piece about to be told (or of
   * the step), before the integrator's own position projection moves it (Moreau–Jean's
   * step 8 and its joint limits' projection): the forces the step applied are this state's.
   */
  projecting?(t: number): void;
  /**
   * That projection (all its passes, the joint limits' too) is done: the system, at t (s),
   * is where the next (sub-)step or piece starts.
   */
  projected?(t: number): void;
}

/**
 * A pseudo-acceleration memory's part in a (sub-)step (generalized-alpha.ts): its velocity
 * update is M (v_{t+h} − v_t) = h ((1 − w) f_t + w f_{t+h} + share · e_t) (joints apart), w
 * the forceWeight, e = M (a − A) the memory's lag behind the forces at the state, which goes
 * on as e_{t+h} = carry (f_{t+h} − f_t) + decay · e_t, rotated with the turning bodies where
 * `transported` (a torque turns with the body as the acceleration it holds: I = R I₀ Rᵀ).
 * Linear in f: the energy balance carries the dissipative forces' share of e
 * (IntegratorMemory.dissipativeLag) and books share · e_t as their force (step-work.ts).
 * All 0 where a_t = A_t (ρ∞ = 1, newmark's members, a restart, backward Euler). A class
 * with double fields (see BodySystem on V8).
 */
export class MemoryLag {
  share = -0;
  carry = -0;
  decay = -0;
  transported = false;
}

export interface Integrator {
  readonly name: IntegratorName;
  /** Order of the joints' post-step projection (see ProjectionOrder). */
  readonly projectionOrder: ProjectionOrder;
  /**
   * The work (J) the dissipative forces took out over the last step, integrated by the
   * scheme's own stages (the articulated integrator's Runge–Kutta quadrature of the power
   * over its sub-steps); absent where the scheme has none: the energy balance then weighs
   * the forces as the scheme does (forceWeight; simulation/step-work.ts).
   */
  readonly dissipatedWork?: number;
  /**
   * The weight w of the end-of-step applied forces in the scheme's velocity update,
   * M (v_{t+h} − v_t) = h ((1 − w) f_t + w f_{t+h}) (newmark γ, a θ-scheme's force weight,
   * generalized-α's γ (1 − α_f)/(1 − α_m), with its memory's lag: memoryLag), as of the last
   * step: the energy balance integrates the dissipative forces' work with it
   * (simulation/step-work.ts).
   * Absent where the scheme has its own quadrature (dissipatedWork).
   */
  readonly forceWeight?: number;
  /**
   * How the scheme's pseudo-acceleration memory entered its last accepted (sub-)step
   * (generalized-α at ρ∞ < 1, whose a_t is not A_t = M⁻¹ f_t); absent: none (a_t = A_t).
   */
  readonly memoryLag?: MemoryLag;
  /**
   * Told of the accepted sub-steps when a step is split (the integrators that halve steps);
   * null or absent: nobody listens.
   */
  substepObserver?: SubstepObserver | null;
  /**
   * Advances the system from t to t + h (s), writing the step's iteration counts to stats,
   * which the caller has zeroed (resetStepStats, Simulation.step): what the integrator does
   * not write reads as a step without it (no Newton iterations, one sub-step, no error).
   */
  step(t: number, h: number, stats: StepStats): void;
  /**
   * Forgets step memory (its IntegratorMemory, the one-step problem's warm starts) after a
   * reset or an external state change.
   */
  reset(): void;
  /**
   * An input changed the applied forces at the step boundary (an actuator's command, a
   * point load), not the state: memory that holds the last step's forces is stale
   * (articulated.ts). Absent: nothing to forget.
   */
  forcesChanged?(): void;
  /**
   * Positions or velocities were set from outside (an input, an applied assembly), after
   * reset(), at time t (s): an integrator whose state lies on the joints by construction
   * puts the bodies back on them now, before the state is read or snapshotted (articulated:
   * the joint rates nearest the new velocities in the mass metric, as the other integrators'
   * velocity projection). Absent: nothing to do.
   */
  stateMoved?(t: number): void;
}
