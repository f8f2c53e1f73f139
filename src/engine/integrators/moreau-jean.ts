/**
 * Moreau–Jean time stepping with nonsmooth contact, following Siconos' TimeStepping
 * (reference/siconos-timestepping.html) with the MoreauJeanOSI θ-method:
 *
 *   M (v⁺ − v_t) = h[(1−w) f(x_t, v_t) + w f(x_{t+h}, v⁺)] + Hᵀ P,
 *   x_{t+h} = x_t ⊕ h[(1−θ) v_t + θ v⁺],
 *   u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0 (Newton impact law) and Coulomb's law on (u_t⁺, P_t)
 *   for the contacts of the active index set,
 * written in the acceleration form of acceleration-step.ts (a = (v⁺ − v_t)/h, c_v = h,
 * c_x = h²θ, the contact impulse as the force P/h over the step). θ = w for Moreau–Jean;
 * backward Euler (θ = w = 1) and symplectic Euler (θ = 1, w = 0) with contacts use the
 * same step.
 *
 * One step, in Siconos' order (TimeStepping::newtonSolve):
 * The one-step problem is the contacts' (nonsmooth-contact.ts), the joint limits'
 * (actuators/limit-problem.ts) or both coupled (dynamics/one-step-problem.ts).
 *
 *  0. updateIndexSets: contacts detected at (x_t, v_t), active set from the predicted gap
 *     g + γ h u_n⁻ ≤ 0, γ = 1/2 (nonsmooth-contact.ts; γ = 1 for the contacts step 7b may
 *     locate: NonsmoothContact.locatedBodies). Siconos does this at the end of
 *     the previous step (nextStep); here it runs at the start of the step on the same
 *     state, which also covers the first step and states changed from outside (reset,
 *     PATCH, assembly with apply).
 *  1. computeInitialResidu: x_t remembered, v_t, the predictor, f(x_t, v_t) when w < 1
 *     (ThetaScheme.prepare).
 *  2. prepareNewtonIteration: the iteration matrix W = M + hθ D + h²θ w K at the current
 *     iterate is assembled and factored (inside the stepper's Newton iteration), with the
 *     joints as a saddle-point system when there are any.
 *  3. computeFreeState: one Newton iteration of the smooth dynamics with the current
 *     contact force held (none on the first iteration) gives a; the free acceleration is
 *     a_free = a − W⁻¹Hᵀ P_k/h and the free velocity v_free = v_t + h a_free.
 *  4. computeOneStepNSProblem: the Delassus operator W_c = H W⁻¹ Hᵀ and
 *     q = H v_free + e u_n⁻; the LCP (frictionless) or the friction-contact problem is
 *     solved for P (warm-started by contact key).
 *  5. update: a = a_free + W⁻¹ Hᵀ P/h, positions and velocities from it. With joints the
 *     stepper re-solves once with the contact force Hᵀ P/h held, so the joint multipliers
 *     (reported reactions) include the contact's share.
 *  6. newtonCheckConvergence (nonlinear systems: solver.newtonIterations > 1): steps 2–5
 *     repeat until ‖a_k+1 − a_k‖∞ ≤ tol (1 + ‖a‖∞). For linear forces one pass is exact.
 *     Without joints, once Newton's own correction is below the contact solve's change of
 *     a, the remaining iterations repeat steps 4–5 only (the contact solve continued on
 *     the last W_c and v_free), in one call that does what those iterations would
 *     (nonsmooth-contact.ts, solve: their solves until one meets the tolerance, then one
 *     sweep for each left, polishing past it).
 *  7. saveYandLambdaInMemory: impulses by contact key (warm start), u⁺ for the output.
 *  7b. (not Siconos') The impacts located within the step (impact-location.ts): each
 *     contact with restitution that rebounded gets the end velocity and gap of its exact
 *     normal motion through the step, with the impact at the time its gap reaches 0 under
 *     the free acceleration (Newton's law there), instead of Newton's law between the
 *     step's ends and the rebound at its middle; the contacts of jointed bodies are not
 *     located (jointedBodies). The located impulses are added to the reported ones.
 *  8. TimeSteppingProjectOnConstraints (solver.projectOnConstraints): positions projected
 *     onto g ≥ 0 (and the joints onto C = 0) in the kinetic metric.
 * (not Siconos') The impacts of jointed and spinning bodies, which step 7b leaves out, and those of
 * joint limits' bounds (inelastic ones too) are met at their instants instead: `step` splits the step at each (impact-events.ts), Newton's law with
 * the joints at the impact, each piece between a step as above.
 * The energy balance (simulation/monitor.ts) takes the impulses' work on the step's mean
 * velocity (their exact share of the kinetic energy's change), and the change of the
 * total energy that steps 7b and 8 and the joint limits' projection make, as the
 * contacts' and limits' work: the position projection restores the potential energy the
 * step's overshoot past the surface lost, which the impulses' work on the mean velocity
 * had counted as taken out (a ball at e = 0 lands with energy.dissipated = m g H, where the
 * lift, up to m g h |u_n|/2 an impact, went to energy.error).
 * Energy of a strike (not Siconos'). On a step where a contact strikes a jointed group
 * (u_n⁻ < −ACTIVATION_TOLERANCE/h, a positive impulse: NonsmoothContact.strikes) the
 * joints' impulse Λ takes a share Λᵀ G v̄ of the kinetic energy's change too, G the
 * Jacobian it acts along: at the velocity level (the contact step) the last iterate's,
 * G v_{t+h} = 0 but G v_t ≠ 0 where the step turned the joint (½ Λᵀ G v_t); in the
 * symmetric redo (positionJointsTouched) λ̃ along G_t and the end projection's μ along
 * G_{t+h} (AccelerationStepper.jointImpulseWork). An ideal joint does no work at an
 * instantaneous impact: that share is the strike's, spread over the step's turn, and is
 * booked as the contacts' work. Unbooked, the rod of overlapRod (test/engine/simulation/
 * servo-balance.test.ts) read energy.error 114.6 J after its first step (k_p = 1e8,
 * commanded 0.3 rad: its hinge's end projection ½ μᵀ G_{t+h} v_t in the sub-step that
 * struck at 41 rad/s), 1577 J (1e6, 0.2 rad: the velocity-level contact step's, at
 * 343 rad/s), now within 3e-7 J of booked terms up to 2.6e5 J. A persistent contact's
 * step keeps it unbooked: there it is the scheme's truncation error on the smooth motion,
 * which energy.error shows (the crank whose link's tip slides with friction,
 * moreau-jean.test.ts). The settled redo's impulses are booked as it held them, v̄ · Hᵀ P_k
 * (the one-step problem's P_{k+1} after it, which it reports, differs by the settling
 * tolerance: 5.2e-3 J of that rod's first step at 0.2 rad, k_p = 1e8).
 * Integration factors: as the θ-scheme, (h²θ, h, 1) for the solved acceleration; the
 * contact impulse P moves v by W⁻¹HᵀP and x by hθ W⁻¹HᵀP.
 *
 * Jointed groups apart (not Siconos'). Steps 2–5 hold every joint at the velocity level,
 * an inelastic projection onto a tangent the step turns (theta-scheme.ts, "Joints"): one
 * box resting anywhere made every mechanism of the model lose energy at first order (a
 * 2 kg, 1 m rod hinged 5 m from it, released horizontal, lost 3.7 J in 8 s at 5 ms, 12.7 J
 * at 1/60 s; alone 1.2e-3 J and 0.013 J). In maximal coordinates M is block diagonal per
 * body, so a group of bodies joined by joints, motors, mimic couplings or W's off-diagonal
 * blocks (force elements) that shares no body with an active contact or limit has no
 * Delassus coupling with the one-step problem: its motion over the step is the smooth
 * step's, joints at the position level (markApart). So on a contact step with such a
 * group the smooth step (ThetaScheme.step, its halvings and error control included) runs
 * first on the whole model from the start, its end state and multipliers kept for those
 * groups' bodies and rows and its counted motor work and velocity decay for their rows and
 * bodies (motorRows, AccelerationStepper.decayCounted), then the contact step from the
 * start as above, counting the other rows' motors and bodies' decay, and the groups take
 * the smooth step's end before step 8 (which then projects them as the smooth path does).
 * The step reports the smooth step's sub-steps (solver.substeps; a rod spun at 300 rad/s
 * beside a resting box reported 1 where alone 8 before 2026-12-06), and tells the energy
 * balance of them for the groups' dofs (SubstepObserver's `dofs`: their dissipative forces
 * weighed sub-step by sub-step, the contact step's bodies over the whole step; a stiff
 * servo's rod beside the box, every step split, read energy.error 159 J in 48 steps where
 * alone 8e-7 J, now 1e-6 J; the solver's Rayleigh damping, and with compliant contact,
 * whose segments are the whole system's, these forces too, are weighed with the step). The
 * joints' projection after the step (step 8's passes, Simulation.step's) finds the groups'
 * joints closed by the smooth step's Newton iterations and moves nothing of theirs:
 * energy.error as alone (the spun rod: 0.036 J of 15 kJ in 2 s both; a 2 kg rod swinging
 * beside six tumbling boxes, 42 projection passes in 10 s: its energy as alone to 5e-13 J
 * at 5 ms). A joint limit touches its group only while one of its own bounds is active (a
 * 2 kg rod resting on its bound made a rod swinging freely beside it lose 9.2 J of its
 * 9.8 J in 60 s at 5 ms, alone 1.2e-3 J; before 2026-12-06 any active bound touched every
 * limited group, and velocityDamping > 0 sent every joint to the velocity level on contact
 * steps).
 *
 * Jointed groups touched (not Siconos'). The groups that do share a body with an active
 * contact or limit take steps 2–5 with their joints at the velocity level, the inelastic
 * projection: a spinner hinged through its centre, its own sphere resting on a frictionless
 * floor (the normal through the axis: its rate a constant) ran from 20 to 7.5 rad/s in
 * 30 s at 5 ms, and a crank whose link's tip slides on a frictionless floor lost 0.53 of its
 * 7.3 J in 30 s at 5 ms (0.68 J at 1/60 s). After the contact step (its impulses P), such a
 * step is redone from the start as the smooth step (joints and all at the position level,
 * symmetric: theta-scheme.ts, "Joints") with the impulses held as the known force Hᵀ P/h
 * over the step, its end velocity v⁺(P) tested against the contact law and P solved again,
 * the pair iterated (positionJointsTouched):
 *   P_{k+1} = the one-step problem's solution from the free velocity v⁺(P_k) − W⁻¹ Hᵀ P_k,
 * whose local velocity is H v⁺(P_k) − W_c P_k, so that a fixed point P* meets the law with
 * the symmetric step's own end velocity: u⁺ = H v⁺(P*) ≥ 0 ⊥ P* ≥ 0 (u_n⁺ + e u_n⁻ with
 * restitution, Coulomb's law on friction rows). It is a quasi-Newton iteration on P with the
 * contact step's Delassus operator W_c = H W⁻¹ Hᵀ (joints at the velocity level) for the
 * symmetric step's (they differ by O(h) of the joints' turn): the crank's changes fell by
 * 1.5e-4 an iteration, two symmetric steps a step. The bilateral constraints are held at the
 * position level beside the impulses as in Brüls, Acary & Cardona, "Simultaneous
 * enforcement of constraints at position and velocity levels in the nonsmooth
 * generalized-α scheme" (CMAME 281, 2014), whose contacts are also held at the position
 * level; here they keep Moreau–Jean's velocity-level law, and the two are solved by
 * splitting rather than as one problem. The spinner keeps its rate to 1e-10 over 30 s
 * (Newton's tolerance; symplectic Euler 1e-14) and energy.error within 1e-8 J;
 * the crank's energy stays within 4.2e-3 J over 30 s at 5 ms (0.015 J at 1/60 s), the rest
 * being the contact's own velocity-level law. Its normal rows H are the step's start's:
 * the tip's gap drifts by O(h²) a step (and by what the joints' end velocity projection,
 * which moves no position, leaves), and the end velocity keeps a normal component at the
 * end pose, O(h) of the curve's; past the activation gap, g + h u_n/2, the next step let
 * the tip go, to land with an impulse. So the pushing contacts of the groups redone
 * (P_n > 0, not separating at the end) are held on their surface after the step, at both
 * levels as RATTLE holds the joints: step 8's projection first moves them back onto
 * g = 0 and sets their normal velocity at the end pose to 0, as bilateral constraints
 * beside the joints (ContactProjection.hold; its impulse is reported with the step's, its
 * kinetic energy change counted as their work, its potential energy change, the drift's,
 * not). The crank's tip was let go 82 times in 30 s at 1/60 s, 22 at 5 ms, now never (with
 * the position level alone still 82; with the velocity's too, but at the carried midpoint,
 * half a slide off the tip, 43 times at 5 ms and 79 at 1/60 s). The loss left,
 * O(h) (0.074 J at 1/60 s before, the landings'), is the scheme's: energy.error shows it
 * (4.8e-3 J and 0.015 J), where the hold's counted potential energy had reported most of it
 * as the frictionless floor's dissipation. That loss was the hold's position move: with
 * H_n(x_t) v⁺ = 0 the tip drifts off by ½ Δqᵀ∇²g Δq a step and the hold lowers it, taking
 * m g times that. So the persistent contacts of the groups redone (with friction and
 * restitution too) take the midpoint law (NonsmoothContact.turnRows, lawAtStart): their
 * impulses, normal and tangential, along the rows at
 * the step's middle (midPose: positions averaged, orientations half way; the carried
 * contact point), H_n Δq = O(h³), the law on the normal velocity at the end pose,
 *   u_e = H_n(x_{t+h}) v⁺(P) ≥ 0 ⊥ P_n ≥ 0,
 * asked with the start's rows, those of W_c and of its response: q_n = u_e(P_k) − W_c P_k
 * (asked with the middle's rows, whose response is not W_c's, its fixed point left u_e at
 * 1.2e-4 m/s and the turntable rod's tip was let go at 1/60 s), and u_e is the u_n⁺ the
 * hold judges them by (H_m v⁺ is O(h) off it). The crank's max |E − E₀| over 10 s went from
 * 5.6e-3, 2.5e-3, 1.18e-3 J at h = 1/60, 1/120, 1/240 s to 1.15e-3, 2.64e-4, 6.6e-5 J; the
 * turntable rod's floor force reads m g/2 less the middle's (ωh)²/16 of it. With friction
 * (μ = 0.3, the tip sliding 1.45 s, then stuck) max |energy.error| over 3 s went from
 * 1.18e-3, 3.47e-4, 1.22e-4 J (5.7e-5 J at 1/480 s: first order) to 1.03e-3, 2.56e-4,
 * 6.3e-5 J, the dissipated energy within 2e-6 J of the friction work summed from the
 * reported forces (1.3e-4 J off before); at e = 0.5 (no strike) from the first order's
 * 5.6e-3, 2.6e-3, 1.3e-3 J to e = 0's figures. A law with both
 * levels in the step, as Brüls, Acary & Cardona's (H at the step's end), is left to do: the
 * end gap's Signorini law in place of the velocity's (the redo's impulses solved with q
 * offset by g⁺/(hθ) − u_n⁺) lost as much (4.3e-3 J) and read the turntable rod's floor
 * force 0.4 % low. The
 * reactions reported are the step's mean joint force
 * (AccelerationStepper.meanJointForce: the start directions' impulse and the end
 * projection's, over h), so that with the impulses they balance each body's momentum
 * change as the contact step's did (a bob on a revolute striking the floor: to 2e-12 N·s;
 * the symmetric step's own multipliers, which weigh the joint force by h/2 on the
 * velocities, missed it by 1e-5). Kept: the contact step's end and impulses when the
 * symmetric step's Newton does not converge, or the pair does not settle within
 * TOUCHED_ITERATIONS by more than the contact solve's tolerance (they count as settled
 * below a hundredth of it: a warm-started iterative solve moves P by about its residual at
 * each re-solve, and with friction the changes fell by only half an iteration, which had
 * sent 1789 of the 2000 steps of the crank at rest (μ = 0.3) to the velocity level after
 * 6 symmetric steps each). Groups with a motor too: its work over such a step is its
 * impulse times its rate, h λ̄ᵀ G v̄ over its rows with the step's mean joint force λ̄
 * (takeMotorWork: their exact share of the kinetic energy's change, as on the contact
 * step), and the next step without impulses takes the power at its start at the
 * multipliers consistent with it (IntegratorMemory.lambdaMean; ThetaScheme.ownStep's
 * trapezoid had read the mean force, the contact's share included). Left at the velocity
 * level before 2026-12-06 (including them had raised energy.error without that start), a
 * motor turning a crank at 2 rad/s whose link's tip slides on a frictionless floor read
 * energy.error 0.15 J in 30 s at 5 ms (0.84 J at 1/60 s), then 7.0e-4 J (0.029 J), and a
 * rod hinged to a turntable its motor turns at 3 rad/s, the rod's tip sliding on the floor
 * in a circle, 3.0 J (10.1 J), its motor 0.034 N·m where the motion takes none; now its
 * energy is kept to 5e-8 J, the floor carries m g/2 to 5e-6 N, the motor 3e-10 N·m,
 * energy.error 7e-8 J (6e-5 J at 1/60 s; 0.05 J and 1.7 J while the hold's potential
 * energy was counted: the lift it undoes, 4.3e-7 m a step at 5 ms, came from the joints'
 * end projection, with no kinetic energy; without the hold the tip was let go 73 times,
 * one step in four at 1/60 s). The crank at 2 rad/s keeps its tip on the floor on every
 * step after its start (the motor's impulsive start throws it up for 30 ms), where it was
 * let go 63 times in 30 s at 5 ms (194 at 1/60 s), its floor force to 4.5e-3 N of the
 * link's Newton–Euler balance (0.013 N; 5.2 N before, the landings), energy.error 0.018 J
 * (0.057 J), the O(h) loss above, in the motor's work (7e-4 J and 0.029 J while counted as
 * the floor's).
 *
 * Free bodies turning on a contact (not Siconos'). An unjointed body turning about a
 * pushing persistent contact has the same chord on the start rows: the step's turn lifts
 * the contact point by the chord's normal part, ½ (h ω)² c for a box rocking on an edge of
 * half height c, past the activation band once that exceeds 1 µm. A
 * box rocking on an edge on a frictionless floor at e = 1 (0.4 × 0.2 × 0.3 m, α₀ = 0.1
 * rad, h = 1/240 s; test/engine/contact/rocking-box.test.ts) had its pivot let go at
 * 8e-6 m, fall up to 8e-5 m into the floor and be taken back by small impacts; at a flat
 * landing the pivot, µm up, missed the other edge's impact and the box hopped (237 impacts
 * in 10 s where the closed form has 64 flat landings, |E − E₀| up to 1.0e-3 J, the swings
 * 0.027 rad short). So where θ = w = ½ (the symmetric smooth step) the free bodies with a
 * persistent pushing contact with restitution whose chord reaches NonsmoothContact's
 * TURN_CHORD (1e-8 m: NonsmoothContact.turningBodies; a resting box's, at 1e-12 m, keeps
 * the start rows and its step as it was; a round body's gaps do not depend on its turn)
 * take positionJointsTouched with the jointed groups (redoBodies): the midpoint law on
 * their persistent contacts and the projection's hold. The box now lands 64 times, each
 * within 1.12 steps of the closed form's instant, its swings within 6e-5 rad of α₀, |E −
 * E₀| ≤ 5.6e-6 J, its pivot up 1.0e-7 m at most. At e = 0 a contact let go lands again by
 * the law it would have kept, and the hold's uncounted moves cost a pile's energy balance:
 * 100 hulls settling on a terrain (μ = 0.5, e = 0, the benchmark's H-100, 600 steps at
 * 1/240 s) taken so read energy.error +0.967 J where −0.014 J, the largest one-step rise
 * of T + V 7.7e-3 J where 1.0e-3 J: such contacts keep the start rows. Left: the hold
 * leaves the pivot's normal rate within HOLD_TOLERANCE/h (2.4e-5 m/s), above the impact
 * events' V_EPS (1e-6 m/s), so about one step in 48 the events meet the pivot as an impact
 * of that rate (50 such in 10 s, each within 4.3e-7 J), and the hold's moves, whose
 * potential energy is the drift's, put 1.3e-5 J in energy.error over the 10 s. With
 * friction holding the pivot (μ = 1, a 0.3 × 0.2 m section) the box lands 63 times, the
 * closed form's (71 before), |E − E₀| ≤ 1.34e-3 J of 0.142 J (0.042 J before; 2.6e-3 J,
 * gained in the friction steps after each landing, while a landing's last piece forgot
 * the pivot's sticking drift: NonsmoothContact.takeBackTime). A box spinning flat about
 * the normal has its corners' chords in the floor's plane: the normal part is the test,
 * not |ω|.
 */
import type { JointLimitProblem } from "../actuators/limit-problem";
import { projectVelocities, type VelocityProjectionResult } from "../constraints/project";
import { ContactSolveError, type NonsmoothContact } from "../contact/nonsmooth-contact";
import type { ProjectionResult } from "../contact/projection";
import type { OneStepProblem } from "../dynamics/one-step-problem";
import type { SchemeCoefficients } from "../dynamics/stepper";
import { potentialEnergy } from "../forces/energy";
import { FemEffector } from "../forces/fem/fem-effector";
import type { ShapeInstance } from "../geometry/shapes";
import {
  type BodySystem,
  clearForces,
  getForces,
  getVelocity,
  kineticEnergy,
  massSolve,
  PositionSnapshot,
  restorePositions,
  savePositions,
  setVelocity,
  updateDerived,
} from "../model/body-system";
import { type AccelerationStepper, groupRoot, type NewtonSettings } from "./acceleration-step";
import type { ImpactSource } from "./contact-switch";
import { trapezoidalStepError } from "./generalized-alpha";
import { ImpactEvents, NO_LAG, STEP_LAG, SUBSTEP_LAG, TURN } from "./impact-events";
import { ImpactLocation } from "./impact-location";
import {
  emptyStepStats,
  type IntegratorMemory,
  type IntegratorName,
  resetStepStats,
  type StepStats,
  type SubstepObserver,
} from "./integrator";
import { SingularIterationMatrix } from "./iteration-matrix";
import { MAX_HALVINGS } from "./step-halving";
import { type ThetaParameters, ThetaScheme } from "./theta-scheme";

/**
 * The symmetric steps positionJointsTouched takes at most, each with the impulses of the
 * one-step problem solved after the last.
 */
const TOUCHED_ITERATIONS = 6;

/** The figures of a step without a contact position projection. */
const NO_PROJECTION: Readonly<ProjectionResult> = {
  iterations: 0,
  sweeps: 0,
  penetration: 0,
  converged: true,
};

export interface MoreauJeanParameters extends ThetaParameters {
  /** Siconos' TimeSteppingProjectOnConstraints after each step. */
  projectOnConstraints: boolean;
  /** Joint drift (m, rad) its joint projection leaves (solver.jointTolerance). */
  jointTolerance: number;
}

export class MoreauJeanIntegrator extends ThetaScheme {
  private readonly aPrev: Float64Array;
  /** The acceleration after a Newton iteration's smooth solve, before its contact solve. */
  private readonly aHeld: Float64Array;
  private readonly vFree: Float64Array;
  private readonly fContact: Float64Array;
  /** Figures of the last projection (passes, sweeps, deepest penetration left in m). */
  lastProjection: Readonly<ProjectionResult> = NO_PROJECTION;
  /** Step 7b (file comment): null without nonsmooth contacts. */
  private readonly location: ImpactLocation | null;
  /**
   * The impacts of jointed and spinning bodies and of limit bounds at their instants (impact-events.ts),
   * or null: no nonsmooth contact nor joint limit.
   */
  readonly events: ImpactEvents | null;
  /** The potential energy (J) before the step's position projection moved (NaN: no move). */
  private projectedFrom = Number.NaN;

  constructor(
    name: IntegratorName,
    stepper: AccelerationStepper,
    public override params: MoreauJeanParameters,
    newton: NewtonSettings,
    memory: IntegratorMemory,
    /** The one-step problem: contacts, joint limits, or both coupled. */
    readonly problem: OneStepProblem,
    /** The contacts, for the position projection (null: no nonsmooth contact). */
    readonly contact: NonsmoothContact | null,
    /** The joint limits, for their position projection (null: none). */
    readonly limits: JointLimitProblem | null = null,
    /** Compliant contacts beside joint limits (ThetaScheme's `impacts`), or null. */
    impacts: ImpactSource | null = null,
  ) {
    super(name, stepper, params, newton, memory, impacts);
    this.aPrev = new Float64Array(stepper.n);
    this.aHeld = new Float64Array(stepper.n);
    this.vFree = new Float64Array(stepper.n);
    this.fContact = new Float64Array(stepper.n);
    const jointed = jointedBodies(stepper, limits);
    this.jointed = jointed;
    this.freeMidpoint = params.theta === 0.5 && params.forceWeight === 0.5;
    this.round = roundBodies(stepper.sys.numBodies, contact?.detector.shapes ?? []);
    this.notTurning = Uint8Array.from(this.round, (r, b) => r | (jointed[b] ?? 0));
    this.location =
      contact !== null ? new ImpactLocation(stepper.sys, stepper.effectors, jointed) : null;
    // the contacts step 7b may locate are active when they close within the step
    // (NonsmoothContact.locatedBodies)
    if (contact !== null) {
      contact.locatedBodies = Uint8Array.from({ length: stepper.sys.numBodies }, (_, b) =>
        jointed.length === 0 || jointed[b] === 0 ? 1 : 0,
      );
      contact.locatedTurn = TURN;
    }
    // (the θ = 1 schemes' velocities lag: symplectic Euler's with joints restaggered by its
    // sub-steps, theta-scheme.ts restagger; the others' by half the step, impact-events.ts)
    const lags =
      params.theta !== 1
        ? NO_LAG
        : this.positionJoints && this.midpointGyroscopic
          ? SUBSTEP_LAG
          : STEP_LAG;
    this.events =
      contact !== null || (limits !== null && jointed.length > 0)
        ? new ImpactEvents(
            stepper,
            contact,
            jointed,
            this.round,
            memory,
            limits,
            lags,
            lags === STEP_LAG ? (t, out) => this.consistentAcceleration(t, out) : null,
          )
        : null;
    this.keepsMean = this.events !== null && lags === STEP_LAG;
    if (contact !== null) {
      contact.projection.beforeMove = () => {
        this.projectedFrom = potentialEnergy(stepper.effectors);
      };
      contact.startAcceleration = this.startAcceleration;
    }
    this.oneIteration = { maxIterations: 1, tolerance: newton.tolerance };
    const nb = stepper.sys.numBodies;
    this.group = new Int32Array(nb);
    this.touched = new Uint8Array(nb);
    this.apart = new Uint8Array(nb);
    this.apartRows = new Uint8Array(stepper.constraints?.numRows ?? 0);
    this.contactRows = new Uint8Array(this.apartRows.length);
    this.apartDofs = new Uint8Array(stepper.n);
    this.contactDofs = new Uint8Array(stepper.n);
    this.smoothPositions = new PositionSnapshot(stepper.sys);
    this.smoothVelocity = new Float64Array(stepper.n);
    this.smoothLambda = new Float64Array(this.apartRows.length);
    this.substepImpulse = new Float64Array(this.apartRows.length);
  }

  /**
   * 1 for each body whose collision shapes are all spheres centred on its origin (none: 0):
   * its contacts' gaps do not depend on its orientation, so the turn a piece of a split step
   * takes does not enter the impact events' prediction: it keeps the Cayley map there
   * (holdTrapezoidTurns).
   */
  private readonly round: Uint8Array;

  /**
   * M⁻¹ f(x_t, v_t) at the start of the step whose index set is being made (indexTime), of
   * the loads that move a fem body as a whole (gravity, springs, applied forces), for the fem
   * nodes' closing band (NonsmoothContact.startAcceleration); with `elastic`, of every force,
   * the fem bodies' elastic forces too (the second band there, which takes no impact step).
   * The elastic forces are left out of the first: they sum to zero over a body and ring at
   * rates a step need not resolve, where the start's value says nothing of where a node ends
   * (with them, a crushed neo-Hookean block rebounding at 1.2e3 J without gravity had nodes
   * so taken onto the floor, and its impact step lost 27 % of it where none touched:
   * stvk-compression.test.ts). prepare evaluates the step's forces anew. Each kind into its
   * own array (both are read in one index set).
   */
  private readonly startAcceleration = (elastic: boolean): Float64Array => {
    const { sys, effectors } = this.stepper;
    clearForces(sys);
    for (let i = 0; i < effectors.length; i++)
      if (elastic || !(effectors[i] instanceof FemEffector))
        effectors[i].applyForces(this.indexTime);
    getForces(sys, this.startForce);
    const out = elastic ? this.startElasticAccelerations : this.startAccelerations;
    massSolve(sys, this.startForce, out);
    return out;
  };
  private indexTime = 0;
  private readonly startForce: Float64Array = new Float64Array(this.stepper.n);
  private readonly startAccelerations: Float64Array = new Float64Array(this.stepper.n);
  private readonly startElasticAccelerations: Float64Array = new Float64Array(this.stepper.n);

  /** 1 for each body a joint, motor or limit holds (jointedBodies). */
  private readonly jointed: Uint8Array;
  /**
   * 1 for the bodies whose persistent contacts positionJointsTouched takes at the midpoint
   * and the projection holds: the jointed ones and the step's free bodies turning on a
   * pushing contact (NonsmoothContact.turningBodies).
   */
  private readonly redoBodies: Uint8Array = new Uint8Array(this.stepper.sys.numBodies);
  /**
   * Whether the free bodies turning on a pushing contact take the midpoint law: the
   * schemes whose smooth step is symmetric, θ = w = ½ (file comment, "Free bodies turning
   * on a contact").
   */
  private readonly freeMidpoint: boolean;
  /**
   * 1 for the bodies NonsmoothContact.turningBodies passes over: the jointed ones (the
   * touched groups' own path) and the round ones, whose contacts' gaps do not depend on
   * their turn (a rolling sphere's chord lifts no contact).
   */
  private readonly notTurning: Uint8Array;
  /**
   * The joints' velocities projected onto G v = −Ct at the step's end (stepEnd, a step of
   * stepLength), after each of the hold's velocity changes (step 8; ContactProjection
   * .hold), their impulse μ (M δv = Gᵀ μ) reported with the step's mean joint force,
   * λ += μ/h, which then balances each body's momentum change with the contacts' impulses
   * the hold's included (and the motors' with their work: a crank a motor turns at 2 rad/s,
   * T + V less its reported torque × rate, 0.105 J in 30 s at 5 ms without, 0.028 J with).
   */
  private readonly projectHeldRates = (): void => {
    const s = this.stepper;
    const set = s.constraints;
    if (set === null) return;
    const mu = this.heldJointImpulse;
    projectVelocities(s.sys, set, this.stepEnd, "factor", this.heldRates, 0, false, mu);
    for (let r = 0; r < mu.length; r++) s.lambda[r] += mu[r] / this.stepLength;
  };
  private readonly heldRates: VelocityProjectionResult = { residualNorm: 0, rank: 0 };
  private readonly heldJointImpulse: Float64Array = new Float64Array(
    this.stepper.constraints?.numRows ?? 0,
  );
  private stepEnd = 0;
  private stepLength = 0;
  /**
   * Whether the last stepOnce redid its touched groups at the position level with the
   * impulses settled (positionJointsTouched): its projection holds their pushing contacts.
   */
  private touchedRedone = false;

  /** Union–find parents over the bodies (markApart). */
  private readonly group: Int32Array;
  /** 1 for a group root whose group meets an active contact or limit (markApart). */
  private readonly touched: Uint8Array;
  /** 1 for a body of a jointed group apart from the step's contacts and limits (markApart). */
  private readonly apart: Uint8Array;
  /** 1 for the constraint rows of those groups (markApart); contactRows its complement. */
  private readonly apartRows: Uint8Array;
  private readonly contactRows: Uint8Array;
  /**
   * 1 for the dofs of the bodies apart (markApart), contactDofs its complement: each step
   * counts its own bodies' velocity decay (AccelerationStepper.decayCounted).
   */
  private readonly apartDofs: Uint8Array;
  private readonly contactDofs: Uint8Array;
  /** The smooth step's end state and multipliers (smoothApart). */
  private readonly smoothPositions: PositionSnapshot;
  private readonly smoothVelocity: Float64Array;
  private readonly smoothLambda: Float64Array;
  private readonly smoothStats: StepStats = emptyStepStats();

  /** Newton settings of one iteration at a time (the contact loop drives the iterations). */
  private readonly oneIteration: NewtonSettings;

  override reset(): void {
    super.reset();
    this.problem.clear();
    this.events?.forget();
  }

  /** Its own steps and pieces set their lead for their halvings (wholeStep, pieceStep). */
  protected override get ownsStepLead(): boolean {
    return false;
  }

  /** An input changed the applied forces: the limits' pulls are evaluated anew (impact-events.ts). */
  forcesChanged(): void {
    this.events?.forget();
  }

  /** A sub-step's figures when a step is split (step). */
  private readonly subStats: StepStats = emptyStepStats();
  /** Whether the last stepOnce told the energy balance of its sub-steps (a split smooth step). */
  private substepsTold = false;

  /**
   * One step of h. A step whose one-step contact problem cannot be solved (ContactSolveError:
   * its solver diverged, or its Delassus operator is indefinite because W is not positive
   * definite) is redone as two steps of h/2 from its start, recursively up to MAX_HALVINGS
   * times (step-halving.ts), before the run fails: a 0.2 m soft fem block hitting a floor
   * at 10 m/s with friction, h = 5 ms, crushed so far in two steps that W = M + h² K (exact
   * tangent) turned indefinite, and step 3's solve diverged (nncg, pgs) or "converged" to a
   * gain of 1e4 times the block's energy (pjacobi); at h/2 it is definite. So is, under
   * symplectic Euler, an impulsive step whose explicit forces fail the stability bound
   * (ThetaScheme.explicitUnstable, the bound the smooth step's halvings follow), the last
   * halving backward Euler: a fem block resting on an nsc floor (E = 1 MPa, 5 cm cells)
   * diverged at its 8th step at 5 ms, and now takes 8 sub-steps
   * (test/engine/integrators/theta-explicit.test.ts).
   */
  override step(t: number, h: number, stats: StepStats): void {
    // the sticking contacts' drift taken back over the whole step, whatever its pieces and
    // halvings (NonsmoothContact.takeBackTime)
    if (this.contact !== null) this.contact.takeBackTime = h;
    const events = this.events;
    if (events === null) {
      stats.substeps = this.wholeStep(t, h, stats);
      return;
    }
    // split at the impacts of jointed and spinning bodies (impact-events.ts), each piece a sub-step
    // (halved on its own, at most MAX_HALVINGS − 1 times)
    stats.substeps = events.advance(
      t,
      h,
      stats,
      this.wholeStep,
      this.pieceStep,
      this.substepObserver,
    );
  }

  /**
   * The step whole, and a piece of a step split at its impacts (impact-events.ts). The
   * servos no halving resolves keep the step's (or the piece's) lead in its halvings,
   * contact steps and smooth steps alike (AccelerationStepper.beginStepLead/keepStepLead,
   * as the smooth step's own halvings: ThetaScheme.step). With each half's own, the 3-link
   * servo chain (k_p = 1e8, commands 0.3, 0.5, 0.2 rad, 5 ms) whose lowest link rests on a
   * floor, its first step halved once (its contact solve failing), read energy.error −128 J
   * in 20 steps where whole −32 J, then −28 J; the contact step's own error test now
   * splits it the same whatever the failures (leadTooCoarse; servo-chain.test.ts).
   * A piece keeps its own: it ends at an impact predicted on the exact motion, which a
   * shorter lead follows more closely (with the step's, a damped servo's approach to a bound,
   * k_p = 1e8, k_d = 1e5, ended its first step 0.07 rad short of the bound it reaches within
   * it: servo-chain.test.ts). A piece given the step's length `lead` takes the step's lead
   * however short it is (AccelerationStepper.beginStepLeadAt: the piece that ends the
   * pieces' ring once they run out, impact-events.ts).
   */
  private readonly wholeStep = (t: number, h: number, stats: StepStats): number => {
    this.leadLength = h;
    this.stepper.beginStepLead(h);
    return this.stepOrHalve(t, h, stats, 0);
  };
  private readonly pieceStep = (t: number, h: number, stats: StepStats, lead = h): number => {
    this.leadLength = lead;
    if (lead === h) this.stepper.beginStepLead(h);
    else this.stepper.beginStepLeadAt(t, lead);
    return this.stepOrHalve(t, h, stats, 1);
  };
  /** The step's or piece's length whose lead its halvings keep (wholeStep, pieceStep). */
  private leadLength = 0;

  /**
   * The contact step's prepare (ThetaScheme.prepare) of h from t; a halving's (h shorter
   * than the step's) then takes the step's lead for the servos no halving resolves
   * (AccelerationStepper.keepStepLead, as the smooth step's attempts).
   */
  private prepareContact(t: number, h: number, symmetric = false): SchemeCoefficients {
    const c = this.prepare(t, h, symmetric);
    if (h < this.leadLength) this.stepper.keepStepLead(h);
    return c;
  }

  /** step at `depth` halvings (the figures of a split step summed into `stats`). */
  private stepOrHalve(t: number, h: number, stats: StepStats, depth: number): number {
    const removed = this.stepper.removedEnergy;
    const own = depth === 0 ? stats : this.subStats;
    if (depth > 0) resetStepStats(own);
    let halve: boolean;
    try {
      halve = !this.stepOnce(t, h, own, depth >= MAX_HALVINGS);
    } catch (e) {
      // (a singular W, an exact fem tangent cancelling the mass at an iterate, is no solution
      // of the step either: halved as the smooth step's Newton halves it, acceleration-step.ts
      // `iterate`; a crushed neo-Hookean block rebounding near the floor, its contact step
      // taken where its nodes' forces carry them onto it, met one at 250/s, h = 10 ms:
      // stvk-compression.test.ts)
      const halving = e instanceof ContactSolveError || e instanceof SingularIterationMatrix;
      if (!halving || depth >= MAX_HALVINGS) {
        if (e instanceof ContactSolveError && depth > 0)
          e.message += ` (the step halved ${depth} times, h = ${h} s)`;
        throw e;
      }
      halve = true;
    }
    if (halve) {
      this.restoreStart();
      this.stepper.removedEnergy = removed;
      this.memory.previousValid = false;
      if (depth === 0) resetStepStats(stats);
      return (
        this.stepOrHalve(t, 0.5 * h, stats, depth + 1) +
        this.stepOrHalve(t + 0.5 * h, 0.5 * h, stats, depth + 1)
      );
    }
    // a split step's totals (impact-events.ts): this sub-step's joint and contact impulses
    if (this.events?.splitting === true) this.events.substepDone(h, this.jointImpulse(h));
    if (depth === 0) return stats.substeps;
    stats.newtonIterations += own.newtonIterations;
    stats.newtonConverged &&= own.newtonConverged;
    stats.linearIterations += own.linearIterations;
    stats.contactIterations += own.contactIterations;
    stats.contactResidual = Math.max(stats.contactResidual, own.contactResidual);
    stats.contactConverged &&= own.contactConverged;
    // the state's: the last sub-step's
    stats.penetration = own.penetration;
    stats.projectionConverged = own.projectionConverged;
    stats.stepError = Math.max(stats.stepError, own.stepError);
    stats.stepToleranceMet &&= own.stepToleranceMet;
    stats.jointToleranceMet &&= own.jointToleranceMet;
    // a half the smooth step split itself told its sub-steps (step-halving.ts): told again
    // as a whole, its dissipative work was counted twice (2.6e-4 J on a damped rod at
    // 300 rad/s whose contact solve failed twice); a contact step's half is told whole (the
    // sub-steps smoothApart told of its groups apart end there: StepWork weighs their dofs
    // over nothing more)
    if (!this.substepsTold) this.substepObserver?.substepDone(t, h);
    return own.substeps;
  }

  /** Whether the last stepOnce was a contact step, and one with groups apart (jointImpulse). */
  private impulsive = false;
  private withApart = false;
  private readonly substepImpulse: Float64Array;

  /**
   * The joints' impulse Λ (N s, N m s per row) of the sub-step of h just accepted, M Δv =
   * h f̄ + Gᵀ Λ + Hᵀ P: a contact step's h λ (λ its mean force, the contacts' share
   * included), the smooth step's own (ThetaScheme.stepImpulse) for a smooth step and for
   * the rows of the groups apart from a contact step (their smooth step's, smoothApart).
   */
  private jointImpulse(h: number): Float64Array {
    const out = this.substepImpulse;
    const lambda = this.stepper.lambda;
    for (let r = 0; r < out.length; r++)
      out[r] =
        !this.impulsive || (this.withApart && this.apartRows[r] === 1)
          ? this.stepImpulse[r]
          : h * lambda[r];
    return out;
  }

  /** Kinetic plus potential energy of the current state (J). */
  private totalEnergy(): number {
    return kineticEnergy(this.stepper.sys) + potentialEnergy(this.stepper.effectors);
  }

  /**
   * Whether some jointed group (bodies joined by joints, motors, mimic couplings or W's
   * off-diagonal blocks, the force elements' coupling) shares no body with the active
   * rows of the step's one-step problem (the active contacts, the active bounds of the
   * joint limits); marks apart, apartRows, contactRows, apartDofs and contactDofs. Only
   * where the smooth step holds the joints at the position level (θ = w = ½, symplectic
   * Euler: theta-scheme.ts positionJoints; file comment).
   */
  private markApart(): boolean {
    const set = this.stepper.constraints;
    this.touchedJoints = false;
    // (a scheme whose smooth step holds the joints at the velocity level too gains nothing)
    if (set === null || !this.positionJoints) return false;
    const { sys } = this.stepper;
    const { group, touched, apart } = this;
    touched.fill(0);
    apart.fill(0);
    this.stepper.jointGroups(group);
    let reached = false;
    if (this.contact !== null) {
      const cs = this.contact.set;
      for (let i = 0; i < cs.count; i++) {
        // (both ends marked: no short circuit)
        if (this.touch(cs.bodyA[i])) reached = true;
        if (this.touch(cs.bodyB[i])) reached = true;
      }
    }
    const limits = this.limits;
    if (limits !== null)
      for (let k = 0; k < limits.activeRows; k++) {
        const q = limits.activeLimit(k).coordinate;
        if (this.touch(q.bodyA)) reached = true;
        if (this.touch(q.bodyB)) reached = true;
      }
    // (rows that reach no body, none apart from them: the whole model's contact step)
    if (!reached) return false;
    let any = false;
    for (let r = 0; r < set.numRows; r++) {
      const c = set.constraints[set.rowConstraint[r]];
      const b = c.bodyA >= 0 && sys.dofOffset[c.bodyA] >= 0 ? c.bodyA : c.bodyB;
      const free = b >= 0 && sys.dofOffset[b] >= 0 && touched[groupRoot(group, b)] === 0;
      this.apartRows[r] = free ? 1 : 0;
      this.contactRows[r] = free ? 0 : 1;
      any ||= free;
      if (!free) this.touchedJoints = true;
    }
    if (!any) return false;
    const { apartDofs, contactDofs } = this;
    apartDofs.fill(0);
    for (let b = 0; b < apart.length; b++) {
      const d = sys.dofOffset[b];
      if (d < 0 || touched[groupRoot(group, b)] !== 0) continue;
      apart[b] = 1;
      apartDofs.fill(1, d, d + sys.blockSizes[sys.block[b]]);
    }
    for (let i = 0; i < apartDofs.length; i++) contactDofs[i] = 1 - apartDofs[i];
    return true;
  }

  /** Marks body b's group touched (markApart); whether b is a dynamic body. */
  private touch(b: number): boolean {
    if (b < 0 || this.stepper.sys.dofOffset[b] < 0) return false;
    this.touched[groupRoot(this.group, b)] = 1;
    return true;
  }

  /**
   * The smooth step of h from t (ThetaScheme.step: the joints at the position level where
   * the scheme holds them so) of the whole model, its end kept for the groups apart
   * (spliceApart) and the state put back at the start; returns the energy it counted
   * removed (the motors' work of the groups' rows); its figures in smoothStats.
   */
  private smoothApart(t: number, h: number): number {
    const s = this.stepper;
    const { sys } = s;
    // the start (a halved smooth step's sub-steps move the stepper's own)
    const start = this.startPositions;
    savePositions(sys, start);
    getVelocity(sys, this.startVelocity);
    const removed = s.removedEnergy;
    const observer = this.substepObserver;
    // its sub-steps are the groups apart's only (the contact step moves the others over the
    // whole step): told for their dofs
    this.outerObserver = observer;
    this.substepObserver = observer === null ? null : this.apartObserver;
    this.motorRows = this.apartRows;
    s.decayCounted = this.apartDofs;
    s.extraForce = null;
    const own = this.smoothStats;
    resetStepStats(own);
    try {
      super.step(t, h, own);
    } finally {
      this.substepObserver = observer;
      this.motorRows = null;
      s.decayCounted = null;
    }
    // their last sub-step's unresolved servos, for its work with the step's end (the contact
    // step's prepare holds its own)
    s.keepStiffFor(this.apartDofs);
    const counted = s.removedEnergy - removed;
    s.removedEnergy = removed;
    savePositions(sys, this.smoothPositions);
    getVelocity(sys, this.smoothVelocity);
    this.smoothLambda.set(s.lambda);
    this.smoothValid = this.memory.previousValid;
    sys.pos.set(start.pos);
    sys.quat.set(start.quat);
    updateDerived(sys);
    setVelocity(sys, this.startVelocity);
    // the contact step counts the other rows' motors
    this.motorRows = this.contactRows;
    return counted;
  }

  /** The simulation's observer while smoothApart tells it the sub-steps of apartDofs. */
  private outerObserver: SubstepObserver | null = null;
  private readonly apartObserver: SubstepObserver = {
    substepDone: (t, h) => this.outerObserver?.substepDone(t, h, this.apartDofs),
  };

  /** Whether the smooth step left its mean acceleration in the memory (smoothApart). */
  private smoothValid = false;
  private readonly startPositions: PositionSnapshot = new PositionSnapshot(this.stepper.sys);
  private readonly startVelocity: Float64Array = new Float64Array(this.stepper.n);

  /**
   * The groups apart take the smooth step's end (smoothApart), the contact step's motors'
   * work having been counted for the other rows only; `smoothRemoved` is the smooth step's.
   */
  private spliceApart(smoothRemoved: number): void {
    const s = this.stepper;
    const { sys } = s;
    const { apart, smoothPositions: p, smoothVelocity: sv } = this;
    getVelocity(sys, this.startVelocity);
    for (let b = 0; b < apart.length; b++) {
      if (apart[b] === 0) continue;
      for (let k = 0; k < 3; k++) sys.pos[3 * b + k] = p.pos[3 * b + k];
      for (let k = 0; k < 4; k++) sys.quat[4 * b + k] = p.quat[4 * b + k];
      const d = sys.dofOffset[b];
      for (let k = d; k < d + sys.blockSizes[sys.block[b]]; k++) this.startVelocity[k] = sv[k];
    }
    updateDerived(sys);
    setVelocity(sys, this.startVelocity);
    const lambda = s.lambda;
    for (let r = 0; r < lambda.length; r++)
      if (this.apartRows[r] === 1) lambda[r] = this.smoothLambda[r];
    s.removedEnergy += smoothRemoved;
    this.motorRows = null;
  }

  /**
   * The contact step's error test where it holds servos it does not resolve (stepOnce):
   * the acceleration consistent with the joints at its start, then the change to its end's
   * (the contacts' impulses not in either), and the step's multipliers kept meanwhile.
   */
  private readonly leadStart: Float64Array = new Float64Array(this.stepper.n);
  private readonly leadChange: Float64Array = new Float64Array(this.stepper.n);
  private readonly leadLambda: Float64Array = new Float64Array(
    this.stepper.constraints?.numRows ?? 0,
  );

  /**
   * leadStart ← ü at the contact step's start: M⁻¹ (f + Gᵀλ) with the joints' consistent
   * multipliers (AccelerationStepper.constrainedAcceleration), the servos at x; the stepper's
   * λ (Newton's start) kept.
   */
  private keepLeadStart(c: SchemeCoefficients, t: number): void {
    const s = this.stepper;
    this.leadLambda.set(s.lambda);
    s.constrainedAcceleration(c, t, this.leadStart);
    s.lambda.set(this.leadLambda);
  }

  /**
   * Whether the contact step of h from t, whose servos holdStiffForces chose (unresolved
   * at h: their lead δ relaxes q* − q at the time constant δ ~ h/2, which one step of h
   * cannot follow), does not resolve the motion: the smooth step's error estimate
   * (theta-scheme.ts tooCoarse, the symmetric joint step's) h²/12 ‖ü_{t+h} − ü_t‖ moves
   * some body's mass by more than params.stepTolerance, ü the acceleration consistent
   * with the joints without the contacts (their impulses out of the estimate: a link
   * resting on the floor reads its steady support as no change). Then it is halved as the
   * smooth step splits itself, its sub-steps keeping the step's lead (prepareContact). The
   * 3-link servo chain (k_p = 1e8, commands 0.3, 0.5, 0.2 rad, 5 ms) resting on a floor
   * took its first step whole, 0.29 rad from the chain without the floor at its end and
   * energy.error −32.3 J in 20 steps (without the floor −5.05 J)
   * (test/engine/integrators/servo-chain.test.ts). The step's multipliers are kept.
   */
  private leadTooCoarse(c: SchemeCoefficients, tEnd: number, h: number): boolean {
    const s = this.stepper;
    const change = this.leadChange;
    this.leadLambda.set(s.lambda);
    s.constrainedAcceleration(c, tEnd, change);
    s.lambda.set(this.leadLambda);
    const start = this.leadStart;
    for (let i = 0; i < change.length; i++) change[i] -= start[i];
    const { stepTolerance, errorWeights } = this.params;
    return trapezoidalStepError(s.sys, h, change, errorWeights) > stepTolerance;
  }

  /**
   * The free rigid bodies that keep the trapezoid's turn exp(h ω̄) on this step (or piece)
   * rather than the midpoint rule with its Cayley turn (theta-scheme.ts, "Free rigid
   * bodies"; AccelerationStepper.trapezoidTurn): the bodies of the active contacts (their
   * impacts located in closed form, impact-location.ts, or their contact steps, whose
   * impulses the trapezoid's rows have always taken). On a step split at its impacts the
   * other bodies with a contact within the piece's reach (ImpactEvents.nearContact) but the
   * round ones take the midpoint rule with the turn exp(h ω̄) in place of the Cayley map
   * (AccelerationStepper.exponentialTurn): impact-events.ts aims its pieces at the instants
   * it finds on the exact turn, exp(h ω) about a principal axis, where the Cayley turn's
   * 2 atan(½ h ω) falls behind by (h ω)³/12 and moves a corner's gap by |r| (h ω)³/12 (a box
   * tumbling in a plane onto a floor at e = 1, test/engine/contact/tumbling-box.test.ts, then
   * left its impact steps 3.3e-4 m/s off the exact motion's velocities; the turn exp(h ω̄)
   * keeps them to 5.6e-10), and the midpoint rule keeps ½ ωᵀ I ω whatever the turn, where
   * the trapezoid does not: the box of long-run/tumbling-box.test.ts, spun off its
   * principal axes onto a frictionless floor at e = 1, had T + V off by up to 8.2e-4 J in
   * 60 s with the trapezoid in the split steps, 1.0e-13 J now. The turn exp(h ω̄) leaves
   * the world L's direction off by (h |ω̄|)³/12 a piece where L is not along ω̄, so the
   * bodies no contact is near, and the round ones, whose gaps do not depend on their turn
   * (`round`), keep the Cayley map, whose world L is exact (a box tumbling at (3, 50, 2)
   * rad/s beside a ball whose bounces split the steps: its L to 4.9e-15 over 4 s, 3.6e-4
   * with the trapezoid there, 3.8e-4 in 2 s with exp(h ω̄); a sphere of inertias 0.1, 0.2,
   * 0.3 kg·m² spinning at (0.3, 15, 0.2) rad/s bouncing on a frictionless floor at e = 1:
   * |L| and ½ ωᵀ I ω to 3e-14 over 23 bounces, 1.4e-4 and 1.8e-4 J with the trapezoid in
   * the bounce steps: long-run/free-spin.test.ts). The others take the smooth step's energy- and L-keeping turn: a body tumbling beside a box
   * resting on the floor keeps its energy to rounding.
   */
  private holdTrapezoidTurns(active: number): void {
    const turn = this.stepper.trapezoidTurn;
    const exp = this.stepper.exponentialTurn;
    turn.fill(0);
    exp.fill(0);
    const events = this.events;
    if (events?.splitting === true)
      for (let b = 0; b < exp.length; b++) exp[b] = events.nearContact[b] & (1 - this.round[b]);
    const contact = this.contact;
    if (active === 0 || contact === null) return;
    const { count, bodyA, bodyB } = contact.set;
    for (let i = 0; i < count; i++) {
      if (bodyA[i] >= 0) turn[bodyA[i]] = 1;
      if (bodyB[i] >= 0) turn[bodyB[i]] = 1;
    }
  }

  /** Whether the step's active rows reach a jointed group (markApart). */
  private touchedJoints = false;
  /**
   * The work (J) on the step's mean velocity of the joints' impulse of the groups a contact
   * strikes (AccelerationStepper.jointImpulseWork; 0: none strikes), the contact step's or
   * positionJointsTouched's settled one's: booked as the contacts' work (file comment,
   * "Energy of a strike").
   */
  private touchedJointWork = 0;
  /** Whether a contact strikes the touched groups' jointed bodies (NonsmoothContact.strikes). */
  private striking = false;
  /**
   * The work (J) on the step's mean velocity of the impulses positionJointsTouched's settled
   * symmetric step held, v̄ · Hᵀ P_k (NaN: none settled): the share of the kinetic energy's
   * change the step's velocities took from them, where the re-solved P_{k+1} it reports
   * differs by the settling tolerance.
   */
  private heldImpulseWork = Number.NaN;
  /** The contact step's solution a and multipliers, kept while positionJointsTouched iterates. */
  private readonly contactA: Float64Array = new Float64Array(this.stepper.n);
  private readonly contactEndLambda: Float64Array = new Float64Array(
    this.stepper.constraints?.numRows ?? 0,
  );
  /** The contact step's free velocity (its one-step problem's, to solve it again). */
  private readonly contactFree: Float64Array = new Float64Array(this.stepper.n);
  /** The Newton guess of positionJointsTouched's symmetric steps. */
  private readonly aTouched: Float64Array = new Float64Array(this.stepper.n);
  /** W⁻¹ Hᵀ P of the impulses before and after a re-solve (positionJointsTouched). */
  private readonly impulseVelocity: Float64Array = new Float64Array(this.stepper.n);
  private readonly impulseVelocityNext: Float64Array = new Float64Array(this.stepper.n);
  /**
   * positionJointsTouched's pose at the step's start, and a symmetric step's end pose and
   * velocity (the midpoint law's: NonsmoothContact.turnRows).
   */
  private readonly startPose = new PositionSnapshot(this.stepper.sys);
  private readonly endPose = new PositionSnapshot(this.stepper.sys);
  private readonly endRates = new Float64Array(this.stepper.n);

  /**
   * The step of the jointed groups an active contact or limit touches, redone with their
   * joints at the position level (theta-scheme.ts, "Joints": the smooth step's symmetric
   * joints, RATTLE), the one-step problem's impulses P held as known forces Hᵀ P/h over the
   * step, and the pair iterated to a fixed point (file comment, "Jointed groups touched"):
   *   v⁺(P) = the symmetric step with Hᵀ P/h,   P' = the one-step problem's solution from
   *   the free velocity v⁺(P) − W⁻¹ Hᵀ P,
   * W⁻¹ Hᵀ the contact step's own response (joints at the velocity level), so that at
   * P' = P the end velocity v⁺(P) meets the contact law with P (u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0,
   * Coulomb's on the tangential rows), and each step is a quasi-Newton step of that law in P
   * with the contact step's Delassus operator in place of the symmetric step's. Called after
   * the contact step (its end state, multipliers and impulses the start of the iteration
   * and what is kept where the symmetric step's Newton fails or the pair does not settle
   * within TOUCHED_ITERATIONS). Returns the Newton iterations spent.
   */
  private positionJointsTouched(t: number, h: number, stats: StepStats): number {
    const s = this.stepper;
    const { sys } = s;
    const nsc = this.problem;
    const n = s.n;
    const tEnd = t + h;
    this.contactA.set(s.a);
    this.contactEndLambda.set(s.lambda);
    this.contactFree.set(this.vFree);
    this.aTouched.set(s.a);
    const { impulseVelocity: dv, impulseVelocityNext: dvNext, vFree } = this;
    // an iterative contact solve accepts a velocity error up to its tolerance (m/s): the
    // pair is settled well below it
    const contactTolerance = this.contact?.settings.tolerance ?? 0;
    let iterations = 0;
    let settled = false;
    // whether the last symmetric step converged, and the change its impulses' re-solve made
    let solved = false;
    let change = Number.POSITIVE_INFINITY;
    // the persistent contacts' midpoint law (file comment; NonsmoothContact
    // .turnRows), whose middle pose needs the start's
    const contact = this.problem === this.contact ? this.contact : null;
    let symmetric: SchemeCoefficients | null = null;
    for (let k = 0; k < TOUCHED_ITERATIONS && !settled; k++) {
      // the symmetric step from the start with the impulses held
      this.restoreStart();
      if (k === 0 && contact !== null) savePositions(sys, this.startPose);
      const c = this.prepareContact(t, h, true);
      symmetric = c;
      solved = false;
      if (!this.startSolved) break;
      s.a.set(this.aTouched);
      this.fContact.fill(0);
      nsc.addGeneralizedForce(1 / h, this.fContact);
      s.extraForce = this.fContact;
      try {
        iterations += s.solve(c, tEnd, this.newton);
      } finally {
        s.extraForce = null;
      }
      stats.linearIterations += s.linearIterations;
      if (s.mustRedo || !s.newtonConverged) break;
      solved = true;
      this.aTouched.set(s.a);
      // the law on the end pose's normal velocity u_e, asked with the rows of the step's
      // start (those of the Delassus operator and response), the impulses then along the
      // rows at the step's middle (file comment; NonsmoothContact.lawAtStart)
      let turned = false;
      if (contact !== null) {
        getVelocity(sys, this.endRates);
        turned = contact.turnRows(this.redoBodies, h, this.endRates) > 0;
        if (turned) contact.lawAtStart(this.endRates);
      }
      // the reactions reported: the step's mean joint force, as the contact step's
      s.meanJointForce(c, h);
      // the free velocity that gives v⁺(P) with P through the contact step's response
      getVelocity(sys, vFree);
      dv.fill(0);
      nsc.addAcceleration(h, h, dv);
      let vmax = 0;
      for (let i = 0; i < n; i++) {
        vmax = Math.max(vmax, Math.abs(vFree[i]));
        vFree[i] -= dv[i];
      }
      const res = nsc.solve(vFree);
      stats.contactIterations += res.iterations;
      dvNext.fill(0);
      nsc.addAcceleration(h, h, dvNext);
      change = 0;
      for (let i = 0; i < n; i++) change = Math.max(change, Math.abs(dvNext[i] - dv[i]));
      // the next symmetric step's impulses (and the booking's rows) at the step's middle
      if (turned) {
        savePositions(sys, this.endPose);
        midPose(sys, this.startPose, this.endPose);
        contact?.turnRows(this.redoBodies, h, null);
        restorePositions(sys, this.endPose);
      }
      // settled: P' moves the end velocities by no more than Newton's tolerance, the
      // one-step problem's own residual, or a hundredth of the contact solve's tolerance
      // (its warm-started sweeps move P by about their residual: with friction the
      // changes fell by about half an iteration, below 1e-7 m/s against 5e-5)
      settled =
        change <=
        Math.max(this.newton.tolerance * (1 + vmax), res.residual, 0.01 * contactTolerance);
    }
    // (the impulses unsettled by less than the contact solve's tolerance: kept)
    if (solved && change <= contactTolerance) settled = true;
    this.touchedRedone = settled;
    if (settled) {
      // (the rows left at the middle, along which the impulses acted: the energy balance
      // takes their work on the mean velocity, P H_m v̄)
      contact?.endTurn();
      // the energy balance's shares of the kinetic energy's change: the held impulses' and
      // (a contact striking) the joints' on the mean velocity, at the end state (its
      // Jacobian the end projection's)
      this.meanVelocity();
      let held = 0;
      for (let i = 0; i < n; i++) held += h * this.fContact[i] * this.mean[i];
      this.heldImpulseWork = held;
      if (this.striking)
        this.touchedJointWork = s.jointImpulseWork(
          symmetric as SchemeCoefficients,
          this.mean,
          this.contactRows,
        );
      return iterations;
    }
    s.lambda.set(this.contactEndLambda);
    // back to the contact step's end (its a from the start) and impulses
    this.restoreStart();
    contact?.startRows();
    const c = this.prepareContact(t, h);
    s.a.set(this.contactA);
    s.applyUnknown(c, s.a);
    nsc.solve(this.contactFree);
    return iterations;
  }

  /**
   * One step of h (Siconos' order, file comment); false, nothing committed, when symplectic
   * Euler's explicit forces would not keep an impulsive step stable (explicitUnstable): it
   * is to be halved, unless `last` (then backward Euler).
   */
  private stepOnce(t: number, h: number, stats: StepStats, last: boolean): boolean {
    const s = this.stepper;
    const nsc = this.problem;
    const tEnd = t + h;
    const newton = this.newton;
    // (the θ = 1 schemes: their velocities' lag, for the located impacts, 7b)
    const lagStart = this.velocityLag(h);
    this.startRun(t);
    this.motorRows = null;
    this.dissipativeStep = false;
    s.keepStiffFor(null);
    this.touchedRedone = false;
    // 0. index set at (x_t, v_t)
    this.indexTime = t;
    const active = nsc.updateIndexSet(h);
    this.holdTrapezoidTurns(active);
    // 1. initial residual (x_t, v_t, predictor, f_t), the contact step's only: a step with
    // no active row is the smooth step, whose attempts prepare their own (prepared here too,
    // its force evaluation at t was made twice: the rod on its limit, away from its bounds,
    // 6 evaluations a step where without the limit 5; the detection reads x_t and v_t only)
    const c = active > 0 ? this.prepareContact(t, h) : null;
    // symplectic Euler's explicit forces, which the smooth step checks in its own halvings
    // (ThetaScheme.step): an impulsive step they would not keep stable is halved the same,
    // the last halving backward Euler (its coefficients prepared again)
    if (active > 0 && this.explicitUnstable(h, last)) return false;
    // A fem node striking a contact (NonsmoothContact.femImpact) at θ < 1 went on at its
    // mean velocity (1 − θ) u_n⁻ past the surface, which the projection then pushed it back
    // from alone, into its own elements: a 0.2 m stvk block (E = 1e7 Pa) landing at
    // 3.13 m/s at θ = ½, h = 10 ms, gained 559 J on its 59 J. Backward Euler's end positions
    // (x_t + h v⁺) keep it on the surface: the step is taken so, dissipative as the impact
    if (active > 0 && this.contact?.femImpact === true && this.params.theta < 1)
      this.dissipativeStep = true;
    const dissipative = this.dissipativeStep;
    if (dissipative) this.prepareContact(t, h);
    const contact = this.contact;
    const location = active > 0 && contact !== null ? this.location : null;
    const restituting = location !== null && location.begin((contact as NonsmoothContact).set) > 0;
    let newtonIterations = 0;
    let contactIterations = 0;
    let contactResidual = 0;
    let contactConverged = true;
    let converged = true;
    // the jointed groups apart from the active rows: their smooth step first (file comment)
    const apart = active > 0 && this.markApart();
    this.impulsive = active > 0;
    this.withApart = apart;
    let smoothRemoved = 0;
    if (apart) {
      smoothRemoved = this.smoothApart(t, h);
      // the contact step's own start (the smooth step's prepared its own)
      this.dissipativeStep = dissipative;
      this.prepareContact(t, h);
    }
    this.substepsTold = false;
    // a contact step with servos it does not resolve, alone (the groups apart's sub-steps
    // told already) and not the last halving: tested as the smooth step is (leadTooCoarse)
    const leadTested = c !== null && c.stiffWeight !== 0 && !apart && !last;
    if (leadTested) this.keepLeadStart(c, t);
    if (c === null) {
      s.extraForce = null;
      // the smooth step, redone in halves when Newton does not converge
      super.step(t, h, stats);
      newtonIterations = stats.newtonIterations;
      this.substepsTold = stats.substeps > 1;
    } else {
      const one = this.oneIteration;
      const n = s.n;
      const { a } = s;
      const joints = s.constraints !== null;
      s.extraForce = null;
      // Set once Newton's own correction is below the contact solve's change (step 6):
      // the remaining iterations continue the contact solve alone.
      let smoothDone = false;
      try {
        for (let k = 0; k < newton.maxIterations; k++) {
          if (!smoothDone) {
            // 2–3. W at the iterate and one Newton iteration with the contact force held.
            s.solve(c, tEnd, one);
            newtonIterations++;
            this.aHeld.set(a);
            nsc.assemble(s, c, h);
            if (k > 0) nsc.addAcceleration(h, -1, a);
            for (let i = 0; i < n; i++) this.vFree[i] = s.vPred[i] + c.cv * a[i];
            if (k === 0 && restituting) (location as ImpactLocation).takeFree(this.vFree);
          } else {
            // the same operator and free velocity, the last impulses taken out again
            this.aHeld.set(a);
            nsc.addAcceleration(h, -1, a);
          }
          // 4. one-step nonsmooth problem; once the smooth part is done (below), the
          // iterations left would each continue the same contact solve: one call does what
          // they would (OneStepProblem.solve, `continued`) and ends the loop.
          const continued = smoothDone ? newton.maxIterations - k : 0;
          const res = nsc.solve(this.vFree, continued);
          contactIterations += res.iterations;
          contactResidual = res.residual;
          contactConverged = res.converged;
          // 5. update
          nsc.addAcceleration(h, 1, a);
          s.applyUnknown(c, a);
          // The generalized contact force Hᵀ P/h is needed only as the stepper's held
          // force: the joint re-solve and further Newton iterations.
          if (joints || (!smoothDone && newton.maxIterations > 1 && !s.usesMassOnly(c))) {
            this.fContact.fill(0);
            nsc.addGeneralizedForce(1 / h, this.fContact);
          }
          if (joints) {
            s.extraForce = this.fContact;
            s.solve(c, tEnd, one);
          }
          // 6. Newton convergence check (nonlinear systems only: with forces that have no
          // Jacobians the smooth part is linear in a and one pass is exact)
          if (newton.maxIterations === 1 || s.usesMassOnly(c)) break;
          // The change dmax of a has two parts: Newton's correction of the smooth dynamics
          // with the contact force held (aHeld − aPrev) and the contact solve's own change
          // (a − aHeld). A contact solve stopped at its sweep budget goes on moving a from
          // iteration to iteration. Without joints, once Newton's correction is below that
          // move (at most what the solve resolves, below), the smooth part is resolved beyond what the contact solve resolves: the
          // further iterations continue the contact solve alone, on the operator and free
          // velocity of the last Newton iteration (its W, Delassus operator and smooth
          // solve are not redone; bench/README.md, "Convex hulls on a mesh").
          let dmax = 0;
          let amax = 0;
          let dNewton = 0;
          let dContact = 0;
          for (let i = 0; i < n; i++) {
            dmax = Math.max(dmax, Math.abs(a[i] - this.aPrev[i]));
            amax = Math.max(amax, Math.abs(a[i]));
            dNewton = Math.max(dNewton, Math.abs(this.aHeld[i] - this.aPrev[i]));
            dContact = Math.max(dContact, Math.abs(a[i] - this.aHeld[i]));
          }
          this.aPrev.set(a);
          const tolerance = newton.tolerance * (1 + amax);
          // After the continuation (smoothDone: Newton's own correction was below the
          // contact solve's change) the smooth part is resolved beyond what the contact
          // solve resolves, and what the step still misses is the contact solve's, which
          // contactConverged reports: Newton converged. Only a loop that spends its
          // iterations before that says otherwise.
          converged = (k > 0 && dmax <= tolerance) || continued > 0;
          if (converged) break;
          // A converged contact solve's move counts only up to the error it leaves in the
          // velocities (its tolerance, m/s, over c_v = h: m/s²): its change is then the
          // problem's own (W and the free velocity change with the iterate), not the drift
          // of a solve stopped at its budget. At an impact that change is large: a Newton
          // correction merely below it left the smooth part unresolved after two
          // iterations, the step's end depending on Newton's start (a 0.2 m stvk block
          // landing at 10 m/s, its centre at +1.047 m/s from a = 0, −0.064 m/s from a start
          // 100 m/s² off; test/engine/contact/fem-landing-newton.test.ts). Models with fem
          // contact bodies only: the rigid ones' steps keep the economy as it was (their
          // trajectories pinned: test/engine/simulation/trajectories.test.ts, H-100 defaults)
          const drift =
            res.converged && contact !== null && contact.femNodes !== null
              ? Math.min(dContact, contact.settings.tolerance / c.cv)
              : dContact;
          if (k > 0 && !joints && dNewton <= tolerance + drift) smoothDone = true;
          s.extraForce = this.fContact;
        }
      } finally {
        s.extraForce = null;
      }
      // a contact striking the groups the one-step problem touches: their joints' work on the
      // step's mean velocity at the velocity level (the G of the last iterate), the
      // contacts' (touchedJointWork; positionJointsTouched's settled step replaces it)
      this.touchedJointWork = 0;
      this.heldImpulseWork = Number.NaN;
      this.striking = this.touchedJoints && this.contact?.strikes(this.jointed, h) === true;
      if (this.striking) {
        this.meanVelocity();
        this.touchedJointWork = s.jointImpulseWork(c, this.mean, this.contactRows);
      }
      // the jointed groups the one-step problem touches: their joints at the position level
      // (not in the backward Euler step of symplectic Euler's last halving, velocity level)
      // and the free bodies turning on a pushing contact (file comment, "Free bodies
      // turning on a contact"): the midpoint law too
      const turning =
        this.freeMidpoint && contact !== null && this.problem === contact
          ? contact.turningBodies(h, this.notTurning, this.redoBodies)
          : 0;
      if (turning === 0) this.redoBodies.fill(0);
      for (let b = 0; b < this.jointed.length; b++) this.redoBodies[b] |= this.jointed[b];
      if (converged && !dissipative && (this.touchedJoints || turning > 0))
        newtonIterations += this.positionJointsTouched(t, h, stats);
      // an end a force no longer models (a St Venant–Kirchhoff element crushed against the
      // contact): halved as the smooth step's (acceleration-step.ts `solve`), the last
      // halving kept for findBlowUp to end the run naming the element
      if (!last && s.strainFaulted()) return false;
      if (leadTested && this.leadTooCoarse(c, tEnd, h)) return false;
    }
    // 7. memory (the smooth step above decayed the velocities already)
    nsc.saveMemory(h, this.params.theta);
    if (active > 0) {
      // (its velocities kicked whole: symplectic Euler's lag behind the positions again)
      this.memory.velocitiesInTime = false;
      // an impulsive step's mean acceleration says nothing of the next smooth step's error
      // (theta-scheme.ts tooCoarse): that one is not tested (beside a smooth step of the
      // groups apart, that one's, whose contact bodies' entries fell freely, is kept)
      this.memory.previousValid = apart && this.smoothValid;
      // the energy balance's exact shares of the kinetic energy's change (simulation/
      // monitor.ts): the impulses' work on the step's mean velocity, Pᵀ H ½ (v_t + v_{t+h})
      // (M (v_{t+h} − v_t) = h f̄ + Hᵀ P + h Gᵀλ at convergence; negative for a dissipating
      // impact or friction), and the motors'
      // (a step whose positions move at its end velocity, θ = 1, with contacts alone: their
      // work split from its smooth step's, NonsmoothContact.endVelocityImpulseWork; with
      // joint limits in the problem, the mean velocity's still)
      this.meanVelocity();
      s.removedEnergy -= this.touchedRedone
        ? this.heldImpulseWork
        : (dissipative || this.params.theta === 1) && contact !== null && this.problem === contact
          ? contact.endVelocityImpulseWork(this.vt)
          : this.problem.impulseWork(this.mean);
      s.removedEnergy -= this.touchedJointWork;
      this.takeMotorWork(h);
      // the reported λ: the step's mean joint force, impulses included (the next smooth
      // step takes its motors' power at its start at the consistent multipliers instead)
      this.memory.lambdaMean = true;
      // 7b. the impacts located within the step, their energy change the contacts' work
      if (restituting) {
        const nc = contact as NonsmoothContact;
        const e0 = this.totalEnergy();
        const tolerance = Math.max(nc.settings.tolerance, nc.stats.residual);
        const { theta } = this.params;
        const loc = location as ImpactLocation;
        // (the θ = 1 schemes' end velocities lag half the step, the next step kicking whole)
        const lagEnd = this.params.theta === 1 ? 0.5 * h : 0;
        if (loc.locate(nc.set, h, theta, tolerance, nc.projection, lagStart, lagEnd) > 0) {
          // (less the lags' share of the kinetic energy, the scheme's: impact-location.ts)
          s.removedEnergy += e0 - this.totalEnergy() + loc.lagEnergy;
          loc.report(nc);
        }
      }
      // (the groups apart decayed in their smooth step: its decay of them is theirs)
      s.decayCounted = apart ? this.contactDofs : null;
      s.decayVelocities(h, this.params.velocityDamping);
      s.decayCounted = null;
      if (apart) this.spliceApart(smoothRemoved);
    }
    // the energy balance reads the step's end forces here, before steps 8 and the limits move
    this.substepObserver?.projecting?.(tEnd);
    // 8. projection on constraints (none: nothing left to report)
    if (!this.params.projectOnConstraints || contact === null) this.lastProjection = NO_PROJECTION;
    else {
      const set = s.constraints;
      this.projectedFrom = Number.NaN;
      const kinetic = kineticEnergy(s.sys);
      this.stepEnd = tEnd;
      this.stepLength = h;
      this.lastProjection = contact.project(
        set !== null
          ? () => s.projectOnConstraints(tEnd, h, this.projectionOrder, this.params.jointTolerance)
          : undefined,
        // the pushing contacts of the groups redone held on their surface (file comment)
        this.touchedRedone ? this.redoBodies : null,
        set !== null ? this.projectHeldRates : null,
        // each pass along the joints (ContactProjection.jointPass)
        set !== null ? { set, t: tEnd, bodies: this.jointed } : null,
      );
      // the passes' last joint projection made the velocities tangent where the contacts had
      // moved the bodies, before it moved them back onto the joints: made tangent at the
      // pose the next (sub-)step starts from, as after the hold. Left off it, that step's
      // joints took the difference as its own: a stiff servo rod (k_p = 1e8) started 5 cm
      // into the floor, turned 1.5 rad by the passes, started its next sub-step with its
      // hinge opening at 32 m/s, −2844 J of energy.error there
      if (set !== null && !Number.isNaN(this.projectedFrom)) this.projectHeldRates();
      // the kinetic energy the hold's impulses and the passes' joint velocity projections
      // changed (the motors' share among them): the contacts' work (file comment). Each
      // pass's joint projection takes the velocities onto the joints' tangent at the pose the
      // contacts moved, an impulse Gᵀμ (M δv = Gᵀμ, mass-orthogonal: ΔT = −½ δvᵀ M δv
      // without motors) that the contacts' move made, not the step's forces: left out, that
      // rod, turned 1.5 rad by the passes of its first sub-step, lost 1421 J of its 1522 J
      // unbooked (energy.error)
      s.removedEnergy += kinetic - kineticEnergy(s.sys);
      // the potential energy the passes' moves changed: the contacts' work (file comment)
      if (!Number.isNaN(this.projectedFrom))
        s.removedEnergy += this.projectedFrom - potentialEnergy(s.effectors);
    }
    // the joint limits' bounds passed within the step, back onto them to the joints'
    // tolerance, the joints projected after each move, and those the step did not hold
    // left at rest on them where it ended moving away (JointLimitProblem.restPassed); the
    // potential energy that changes and the kinetic energy the rest and the joints' velocity
    // projection at the moved pose take (as step 8's) are the limits' work
    if (this.limits !== null) {
      const set = s.constraints;
      const from = potentialEnergy(s.effectors);
      const kinetic = kineticEnergy(s.sys);
      this.limits.project(
        set,
        tEnd,
        this.params.jointTolerance,
        set === null
          ? null
          : () => s.projectOnConstraints(tEnd, h, this.projectionOrder, this.params.jointTolerance),
      );
      this.limits.restPassed(set, tEnd);
      s.removedEnergy += from - potentialEnergy(s.effectors) + kinetic - kineticEnergy(s.sys);
    }
    this.substepObserver?.projected?.(tEnd);
    const own = this.smoothStats;
    stats.newtonIterations = newtonIterations + (apart ? own.newtonIterations : 0);
    // a symplectic Euler step whose gyroscopic mean rate did not converge (held contacts
    // cannot halve it) kept the explicit torque: reported as not converged
    stats.newtonConverged = converged && this.startSolved && (!apart || own.newtonConverged);
    if (active > 0) stats.linearIterations = s.linearIterations;
    if (apart) {
      // the sub-steps the groups apart took (the contact step is one)
      stats.substeps = own.substeps;
      stats.linearIterations += own.linearIterations;
      stats.stepError = Math.max(stats.stepError, own.stepError);
      stats.stepToleranceMet &&= own.stepToleranceMet;
    }
    stats.contactIterations = contactIterations;
    stats.contactResidual = contactResidual;
    stats.contactConverged = contactConverged;
    stats.penetration = this.lastProjection.penetration;
    stats.projectionConverged = this.lastProjection.converged;
    return true;
  }
}

/**
 * 1 for each body a joint, motor or joint limit holds (an end of one of the stepper's
 * constraints or of a limit's coordinate; fixed bodies and the ground, which no move
 * reaches, excepted), by body index; empty without any. A body held through other jointed
 * bodies is the end of a joint itself. Step 7b's location moves bodies in the free metric
 * M⁻¹ and would break the joints and their velocity constraints of such a body: its
 * contacts are not located; those of the model's other bodies (a ball bouncing beside a
 * pendulum) are.
 */
function jointedBodies(stepper: AccelerationStepper, limits: JointLimitProblem | null): Uint8Array {
  const { sys } = stepper;
  const constraints = stepper.constraints?.constraints ?? [];
  if (constraints.length === 0 && (limits === null || limits.limits.length === 0))
    return new Uint8Array(0);
  const out = new Uint8Array(sys.numBodies);
  const hold = (b: number) => {
    if (b >= 0 && sys.dofOffset[b] >= 0) out[b] = 1;
  };
  for (const c of constraints) {
    hold(c.bodyA);
    hold(c.bodyB);
    for (const b of c.moreBodies ?? []) hold(b);
  }
  for (const l of limits?.limits ?? []) {
    hold(l.coordinate.bodyA);
    hold(l.coordinate.bodyB);
  }
  return out;
}

/**
 * 1 by body index for the bodies all of whose `shapes` (at least one) are spheres centred on
 * the body's origin (MoreauJeanIntegrator.round).
 */
function roundBodies(numBodies: number, shapes: readonly ShapeInstance[]): Uint8Array {
  const out = new Uint8Array(numBodies);
  for (const s of shapes) if (s.body >= 0 && s.body < numBodies) out[s.body] = 1;
  for (const s of shapes) {
    if (s.body < 0 || s.body >= numBodies) continue;
    const p = s.localPosition;
    const centred = p === undefined || (p[0] === 0 && p[1] === 0 && p[2] === 0);
    if (s.shape.type !== "sphere" || !centred) out[s.body] = 0;
  }
  return out;
}

/**
 * The bodies at the middle of a step from `a` to `b`: positions averaged, orientations the
 * normalized sum of the quaternions (the same hemisphere), the half turn to O(φ³).
 */
function midPose(sys: BodySystem, a: PositionSnapshot, b: PositionSnapshot): void {
  for (let i = 0; i < sys.pos.length; i++) sys.pos[i] = 0.5 * (a.pos[i] + b.pos[i]);
  for (let o = 0; o < sys.quat.length; o += 4) {
    let dot = 0;
    for (let k = 0; k < 4; k++) dot += a.quat[o + k] * b.quat[o + k];
    const s = dot < 0 ? -1 : 1;
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const q = a.quat[o + k] + s * b.quat[o + k];
      sys.quat[o + k] = q;
      n += q * q;
    }
    n = Math.sqrt(n);
    for (let k = 0; k < 4; k++) sys.quat[o + k] /= n;
  }
  updateDerived(sys);
}
