/**
 * The one-step θ-schemes at velocity level, written in the acceleration form of
 * acceleration-step.ts with a = (v_{t+h} − v_t)/h:
 *   v_{t+h} = v_t + h a,   x_{t+h} = x_t ⊕ h((1−θ) v_t + θ v_{t+h}) = x_t ⊕ (h v_t + h²θ a)
 *   M a = (1 − w) f(x_t, v_t) + w f(x_{t+h}, v_{t+h})
 * - backward Euler: θ = 1, w = 1 (linearized implicit Euler; Newton iterations optional).
 * - Moreau–Jean (Siconos MoreauJeanOSI) without contact: θ-method with w = θ. With
 *   c_v = h and c_x = h²θ the iteration matrix of acceleration-step.ts is
 *   M + θh D + θ·h²θ K, exactly Siconos' W = M + hθ C + h²θ² K.
 * - symplectic (semi-implicit) Euler: forces at (x_t, v_t) (w = 0), positions with the new
 *   velocity (θ = 1): v_{t+h} = v_t + h M⁻¹ f(x_t, v_t), x_{t+h} = x_t ⊕ h v_{t+h}.
 * Each scheme's solution (the acceleration a) moves the end-of-step state by
 * c_x = h²θ (position) and c_v = h (velocity).
 *
 * Fem bodies at θ = w = ½. The trapezoidal rule is not energy-stable for a nonlinear
 * elastic body whose element modes the step does not resolve (Simo & Tarnow, ZAMP 43,
 * 1992): a free block spinning at 10 rad/s (3 × 2 × 2 cells, E = 1e8 Pa, h = 5 ms) gained
 * 36 % of its energy by 10 s and diverged at 15.8 s. So that step takes their forces as the
 * energy–momentum discrete gradient f̄(x_t, x_{t+h}) in place of ½ (f(x_t) + f(x_{t+h}))
 * (AccelerationStepper.beginMeanStep, fem-effector.ts applyMeanForces): the force's work
 * over the step is exactly minus the strain energy's change and its moment about the mean
 * positions zero, so energy and angular momentum are kept to Newton's tolerance (1.8e-11
 * over 60 s; test/engine/forces/fem/spin.test.ts).
 *
 * Free rigid bodies at θ = w = ½. The trapezoidal rule on Euler's equations (the gyroscopic
 * torque at both ends, the turn exp(h ω̄)) keeps neither the kinetic energy nor the angular
 * momentum of a torque-free body: one of moments 0.1, 0.2, 0.3 kg·m² tumbling at
 * (3, 50, 2) rad/s swung its 251.05 J by up to 1.3 J over 100 s at 5 ms, its L's direction
 * by 56 %. So that step takes the rotation of the rigid bodies no joint or motor touches as
 * symplectic Euler does (the implicit midpoint rule, the gyroscopic torque at the mean rate
 * with the start's inertia, and the Cayley turn of ½ h ω̄), their other torques on the
 * trapezoid (SchemeCoefficients.meanRates; AccelerationStepper.holdStartForces,
 * meanRateResidual): symmetric and second order still, and a free body keeps ½ ωᵀ I ω and
 * its world L to rounding (2.8e-14 and 1.4e-13 there; test/engine/integrators/long-run/
 * free-spin.test.ts), in two Newton iterations a step where the trapezoid took 5.3. With
 * nonsmooth contacts (moreau-jean.ts, holdTrapezoidTurns) the bodies an active contact of
 * the step touches keep the trapezoid (AccelerationStepper.trapezoidTurn), and every body
 * near a contact but the round ones (spheres on their centre) turns by exp(h ω̄) in place of
 * the Cayley map on a step split at its impacts (AccelerationStepper.exponentialTurn): the
 * impacts met at their instants split the step into pieces whose turn their location takes
 * as exp(h ω), exact about a principal axis, which the Cayley turn is not (2 atan(½ h ω)):
 * with it, a box tumbling in a plane onto a frictionless floor at e = 1 (test/engine/
 * contact/tumbling-box.test.ts) left its impact steps 3.3e-4 m/s off the exact motion, where exp(h ω̄) keeps
 * every impact step to rounding; the midpoint rule's rate keeps ½ ωᵀ I ω with either turn,
 * where the trapezoid, which those bodies kept before, moved a box spun off its principal
 * axes by up to 8.2e-4 J over 60 s of impacts (long-run/tumbling-box.test.ts; now 1.0e-13 J).
 * The bodies no contact touches take the midpoint step: a body tumbling at (10, 177, 5)
 * rad/s beside a box resting on a floor, every step a contact step, kept its spin's 3334 J to
 * 7e-15 over 4 s at 5 ms, where the trapezoid strayed by 7.0 % (free-spin.test.ts).
 *
 * Solver damping, as Newmark's (newmark.ts): the Rayleigh force −(r_M M + r_K K) v at the
 * end-of-step velocity, implicit whatever w (so symplectic Euler's explicit forces keep an
 * unconditionally stable damping: v_{t+h} = (M + h r_M M + h r_K K)⁻¹ (M v_t + h f_t) with
 * K at the start), then v ← v·exp(−h·velocityDamping).
 *
 * Joints. At θ = w = ½ (Moreau–Jean's default) the smooth step is the trapezoidal rule,
 * generalized-alpha's at ρ∞ = 1, and its joints are held as there (generalized-alpha.ts,
 * SchemeCoefficients.symmetricJoints): the joint force along the start configuration moves
 * the positions onto C(x_{t+h}) = 0 (weight h²/2) and the velocities by h/2, and the end
 * velocities are projected onto the joints' tangent at x_{t+h} (RATTLE). The step is then
 * symmetric and a conservative mechanism keeps its energy. Symplectic Euler (θ = 1, w = 0)
 * holds them the same way with the weights h² and h, the constrained symplectic Euler
 * (Hairer, Lubich & Wanner, "Geometric Numerical Integration", §VII.1): its energy error
 * stays bounded. Its jointed rigid bodies' rotational rows are in angular momentum, their
 * turn a Lie group variational integrator's with the exponential map (Bou-Rabee & Marsden;
 * AccelerationStepper.rotationMomentum: a spin about a principal axis or a hinge turns by
 * exactly h ω), so that the step is symplectic on SO(3) too and keeps
 * the momenta a symmetry keeps (a spherical pendulum's L_z, a heavy top's spin) to
 * rounding. Its Newton iterations close the joints, C(x_{t+h}) = 0 (acceleration-step.ts
 * `solve`, explicitStep), so that sub-steps (explicitHalvings, the joints' error control)
 * are whole steps of their length. In general the weights are h²θ on x and hθ on v (ρ = 1, κ = hθ − c_v).
 * With the joint impulse over the whole step at the velocity level (backward Euler's
 * treatment, and these schemes' before), each step projected the velocities inelastically
 * onto a tangent turned by the step, a loss of first order in h (a rod released horizontal
 * at 5 ms lost 3.2 of its 4.9 J in 20 s at θ = ½ (4.6 J within a minute) and 80 % of it
 * with symplectic Euler (all of it within 100 s),
 * the Newton's cradle example's balls 23 % of their swing in 30 s;
 * test/engine/integrators/theta-scheme.test.ts).
 * Motors too: their rows C(x, t + h) = 0 close with the joints', their work is the
 * trapezoid of their power at the start's and the end's consistent multipliers (as
 * generalized-alpha's, simulation/step-work.ts). Held at the velocity level, one motor sent
 * every joint of the model there: the double pendulum's free lower link, its shoulder held
 * by a motor, decayed from a swing of π to 1.8 rad in a minute at 5 ms, and a motor turning
 * an offset rod at a constant rate read a torque of m ω³ r² h/2 where there is none.
 * Not on a step with active contacts or limits for the jointed groups that touch them
 * (Moreau–Jean's one-step problem takes its impulses at the velocity level with their
 * joints', one Newton iteration at a time; the groups apart keep this step:
 * moreau-jean.ts, "Jointed groups apart"; the motors' work is then takeMotorWork's, each
 * step counting its own rows', motorRows). A step that does not resolve
 * the motion, its local error h²/12 ‖ü_{n+1} − ü_n‖ (ü = M⁻¹ (f + Gᵀλ) the acceleration
 * consistent with the joints at each end of the step; measured as generalized-alpha's
 * largestDisplacement) above solver.stepTolerance (params.stepTolerance, m; left out
 * generalized-alpha's default, 3e-4 m per metre of the model's body length, at most
 * 3e-4 m; null: off), where the symmetric scheme
 * gains energy at single violent steps (a whipping 100-link chain at 1/240 s blew up), is
 * halved as generalized-alpha's, and so is one whose joints Newton cannot close at the
 * position level (a joint turned far within the step; the next steps
 * then start at the depth that succeeded: substep-depth.ts). The estimate is a function of
 * the step's two ends, the same for the step taken back, so the halvings are chosen as a
 * time-reversible step-size function would (Hairer & Söderlind, SIAM J. Sci. Comput. 26,
 * 2005), and at θ = ½ a rejection does not move the next steps' start depth (generalized-
 * alpha.ts rejectedByErrorControl, trySingle); where the memory holds no ü_n (after a
 * contact step) it is taken from the start state (keepStartAcceleration); the memory
 * keeps the step's mean acceleration apart, Moreau–Jean's impacts' reference (keepEnd).
 * The former estimate h²/12 ‖D − D_prev‖ (D the step's mean acceleration (v_{t+h} −
 * v_t)/h, compared with the step before it: a backward difference), its halvings kept by the depth
 * controller for the next steps, halved later entering a whip than leaving it and drained
 * conservative motion: the
 * passive 7-axis arm of test/formats/urdf/arm7.ts at 5 ms lost 21.5 of its 102 J over 60 s
 * (now within 2.0 J; 2.75 J at a near-uniform 2.5 ms), the benchmark's 10-link chain at
 * 1/240 s 0.068 m g L in 2000 steps (now −0.020 … +0.009);
 * the last halving is accepted still too coarse (stats.stepToleranceMet false), and joints
 * no motion satisfies fail it, as generalized-alpha's. The velocity level (first order, an
 * inelastic projection that dissipates) is left for steps with active contacts or limits:
 * taking it for every coarse step had braked a rod spun on a hinge to ~38 rad/s (h ω ≈
 * 0.19) at 5 ms, whatever its speed, and the whip example lost 2.5 J in 10 s at 1/240 s
 * (0.05 J now). Symplectic Euler's velocity is the leapfrog's, half a sub-step behind its
 * positions, so a sub-step of a new length starts from a velocity restaggered by the
 * change (restagger: the variable-step leapfrog's kick), which keeps its modified energy
 * across the change to first order, though not for a stiff mode (h ω near the bound 2,
 * whose modified energy's O((h ω)²) terms change with the length). So with explicit stiff
 * forces (the stability bound's, explicitRates) the error control fixes a step's sub-step
 * length at its first sub-step (the least depth it accepts: advanceEvenly), the others
 * taken at that length (halved only where Newton fails; a coarse one accepted,
 * stats.stepToleranceMet false), and the depth controller starts at the stability bound's
 * depth and counts the sub-steps there. Halving only the rejected sub-steps, with the
 * depth chosen anew at each step as the swing's phase moved the error estimate, had
 * stepped a cart on a servo (h ω = 3, 1e-2 m swing) in 4 to 6 uneven sub-steps, its
 * modified energy wandering between 0.54 and 2.8 times its start over 10 s; it now takes 8
 * a step, the energy kept to 1e-14 (test/engine/integrators/theta-explicit.test.ts).
 * Without them it halves the sub-steps its error control rejects, whose rejections do not
 * move the depth controller's start depth (reversibleControl, as at θ = ½): the lengths
 * are chosen by the motion, alike entering and leaving a whip. With one length a step kept
 * by the depth controller, which deepened a step late entering each whip and kept later
 * sub-steps too coarse for it (one lost 6.6 J), the passive 7-axis arm of
 * test/formats/urdf/arm7.ts at 5 ms lost 19.4 of its 102 J over 60 s (16–29 J at 4–6 ms);
 * now within 2.5 J (2.5–4.9 J), as many sub-steps (+2 %) and 9–17 % more Newton
 * iterations, where every step halved strays 3.4 J (1.6–29 J at 4–6 ms) with 1.7 times
 * the sub-steps.
 *
 * Symplectic Euler with compliant contacts (the constructor's `impacts`). Its contact
 * forces are explicit, taken at the step's start. Linearized about a rest, M (v⁺ − v) =
 * −h (K x + C v) and x⁺ = x + h v⁺ are the central difference
 *   x_{n+1} − 2 x_n + x_{n−1} + h M⁻¹C (x_n − x_{n−1}) + h² M⁻¹K x_n = 0,
 * which, multiplied by M (δ_n + δ_{n−1}) (δ_n = x_{n+1} − x_n), never lets
 *   F_n = δ_nᵀ (M − h²K/4 − hC/2) δ_n + h² x̄_nᵀ K x̄_n   (x̄_n = ½ (x_n + x_{n+1}))
 * grow: F_n − F_{n−1} = −(h/2) (δ_n + δ_{n−1})ᵀ C (δ_n + δ_{n−1}) ≤ 0. F bounds the motion
 * while λ_max(M⁻¹(h²K + 2hC)) < 4, which h² ω² + 2 h γ < 4 ensures (ω² ≥ λ_max(M⁻¹K),
 * γ ≥ λ_max(M⁻¹C); for one mode, ω² = k/m and γ = d/m, the bound is exact: beyond it the
 * mode grows). The default contact law's damping d = ½ h k (stepDamping ½) makes it
 * (h ω)² < 2: a 1 kg ball on it (k = 1e5 N/m, h = 5 ms: (h ω)² = 2.5) was pumped at every
 * bounce (dropped 1 m, its second apex at 1.73 m, 440–1830 m up by 60 s), and a 2 kg box
 * (0.2 m) resting on its four corners (its rocking modes' ω² = 6 k/m, (h ω)² = 7.5) was
 * thrown 112 m up within 10 s, energy.error +856 J, no step flagged. So a step whose
 * pushing contacts at its start (the forces the explicit step takes) fail the bound, by
 * Gershgorin bounds of ω² and γ with the contacts' effective masses, rotation included
 * (compliant.ts explicitRates), is taken in halves from its start (step-halving.ts), as
 * many as the bound asks (explicitHalvings: h/2^k, the damping staying the law's ½ h k of
 * the whole step, so the sub-steps integrate the same law), and each sub-step is checked
 * again at its own start; beyond MAX_HALVINGS the last halving is backward Euler from the
 * same start (θ = w = 1, as the other θ-schemes' redo at a switch: dissipative, stable).
 * (On a step with active joint limits, moreau-jean.ts's impulsive step, the same bound
 * halves the step there: explicitUnstable.)
 * And the explicit step does not see a contact met within it: its penetration, up to h
 * times the approach speed, stores (h ω)² times the impact's energy in the contact (with
 * the bound alone a 0.1 kg ball dropped 1 m bounced to 1.3 m, then 3.8 and 23 m), and one
 * left within it pushes for the whole step. So a step in which a contact starts or stops
 * pushing unresolved is redone as the other θ-schemes' (switchedInStep: h ω > 1 at the
 * switch, the last halving backward Euler). stats.substeps reports the sub-steps. At the
 * defaults the ball takes 2 sub-steps while it pushes and the box 4 (the bound: 8 k/m at
 * a corner, against the exact 6 k/m); a ball over 1.25 kg (a box over 10 kg) is stepped
 * whole, as before.
 *
 * Symplectic Euler's elastic forces are checked the same way, once a step at its start:
 * the effectors that bound their stiffest mode (ForceEffector.addExplicitRates: the fem
 * bodies, element by element with the material's largest stiffness at each element's
 * strain, fem-effector.ts) add their ω² and γ to the contacts', and so do the forces
 * between few bodies (ForceEffector.addExplicitRows: springs, frame springs, dampers,
 * joint servos), by Gershgorin's circles on 3 × 3 blocks, a body's translation and a rigid
 * body's rotation (particle-springs.ts, two-point.ts, frame-spring.ts, damper.ts,
 * actuators/actuator.ts), the largest row of
 * their sum (explicitForceRates). A spring to a rigid body at rest gets at most 1.21 times
 * its k/m_eff (1/m_eff = 1/m + (r × û)ᵀ I⁻¹ (r × û)), a frame spring 1.9–2.8 times its
 * highest mode, a damper its rate (test/engine/forces). Moreau–Jean's impulsive step (active
 * nonsmooth contacts or joint limits) asks the same bound of its forces at each sub-step's
 * start (explicitUnstable), halving the whole contact step, the last halving backward
 * Euler. Unchecked, a hanging fem bar
 * (1 m in 20 cells, E = 1 MPa, ν = 0: ω_max ≈ 2.35e3 rad/s, the step alone stable up to
 * h ≈ 0.85 ms) diverged at the 6th step at 5 ms; it now takes 8 sub-steps (its bound
 * 2.53e3 rad/s) and vibrates about ρ g L²/(2E) at the period 4 L/c to 0.05 %, and one 100
 * times stiffer, beyond h/16, is stepped by backward Euler at h/16
 * (test/engine/integrators/theta-explicit.test.ts). The bound costs a pass over the
 * elements of about a third of a force evaluation, once a step.
 */

import { SchemeCoefficients } from "../dynamics/stepper";
import type { ForceEffector } from "../forces/effector";
import { getVelocity, setVelocity } from "../model/body-system";
import type { AccelerationStepper, EndConsistency, NewtonSettings } from "./acceleration-step";
import { ContactSwitches, type ImpactSource, Switch } from "./contact-switch";
import { trapezoidalStepError } from "./generalized-alpha";
import {
  emptyStepStats,
  type Integrator,
  type IntegratorMemory,
  type IntegratorName,
  type ProjectionOrder,
  type StepStats,
  type SubstepObserver,
} from "./integrator";
import { advanceWithHalving, type HalvingStep, halvingFailure, MAX_HALVINGS } from "./step-halving";
import { SubstepDepth } from "./substep-depth";

export interface ThetaParameters {
  /** θ ∈ [0, 1]: weight of the end-of-step velocity in the position update. */
  theta: number;
  /** Weight of the end-of-step forces (0: explicit forces). */
  forceWeight: number;
  /** Rayleigh coefficients r_M (1/s) and r_K (s), and the velocity decay rate (1/s). */
  rayleighMass: number;
  rayleighStiffness: number;
  velocityDamping: number;
  /**
   * The local error per step (m, generalized-alpha.ts largestDisplacement) above which
   * tooCoarse halves a step: solver.stepTolerance, left out generalized-alpha's default at
   * ρ∞ = 1, 3e-4 m per metre of the model's body length, at most 3e-4 m (factory.ts;
   * defaultStepTolerance), the θ-schemes' trapezoidal step at θ = ½ being that scheme's;
   * Infinity: off (solver.stepTolerance null). An absolute 3e-4 m let a 5-link chain of
   * 0.05 m links stray by 17 % of m g L/2 over 40 s under Moreau–Jean (20 % under symplectic
   * Euler), every step within it (file comment, "Joints").
   */
  stepTolerance: number;
  /** Each body's weight on its estimate (generalized-alpha.ts stepControl; null: 1 for all). */
  errorWeights: Float64Array | null;
}

export class ThetaScheme implements Integrator, HalvingStep {
  readonly projectionOrder: ProjectionOrder = "velocities-first";
  private readonly coeff = new SchemeCoefficients();
  /** The velocities at the step's start (prepare). */
  protected readonly vt: Float64Array;
  /** ½ (v_t + v_{t+h}) of the last step (meanVelocity). */
  protected readonly mean: Float64Array;
  /** G v̄ of the constraint rows (takeMotorWork). */
  private readonly rowRates: Float64Array;
  /** The running step's counts (set by `step`, added to by every sub-step). */
  private stats: StepStats = emptyStepStats();
  /**
   * Whether smooth steps hold the joints and motors at the position level (file comment):
   * θ = w = ½ or symplectic Euler, with joints.
   */
  protected readonly positionJoints: boolean;
  /**
   * Backward Euler (θ = w = 1) with joints: the reactions its steps report are the
   * multipliers consistent with the end state after the joint projection
   * (AccelerationStepper.reactionsAtEnd, as newmark's velocity level), not the step's own
   * λ, which are first order in h and carry a redundant loop's self-stress (the three-crank
   * parallelogram: 417 N off the equal share at h = 1 ms).
   */
  private readonly end: EndConsistency | null;
  /**
   * Symplectic Euler (θ = 1, w = 0): the turning bodies' gyroscopic torque at their mean
   * rate (AccelerationStepper.holdStartForces; the jointed ones' rows in angular momentum
   * on smooth steps instead, momentumRows), whose explicit form gains energy; a body
   * hinged to a static body keeps the explicit one, ⊥ its axis (there).
   */
  protected readonly midpointGyroscopic: boolean;
  /**
   * Whether every smooth step keeps its mean acceleration in the memory (keepEnd), where
   * neither the error control nor compliant contacts ask it: Moreau–Jean's impacts of a
   * θ = 1 scheme whose velocities lag by half the step take their closing times and the
   * lag's restagger from it (impact-events.ts, STEP_LAG; moreau-jean.ts sets it).
   */
  protected keepsMean = false;
  /** Whether the last `prepare` solved every mean rate (midpointGyroscopic). */
  protected startSolved = true;
  /**
   * Symplectic Euler with joints and explicit stiff forces: a step's sub-steps keep one
   * length (advanceEvenly), a stiff mode's modified energy being kept only at a constant
   * step (file comment).
   */
  private readonly evenSubsteps: boolean;
  /** Whether the running sub-step's length was fixed by its step's first (advanceEvenly). */
  private lengthKept = false;
  /**
   * The trapezoidal rule's joint step (θ = w = ½ with positionJoints), and symplectic
   * Euler's without evenSubsteps: its error control's rejections do not move the sub-step
   * controller's depth (ownStep; file comment).
   */
  private readonly reversibleControl: boolean;
  /** The depth each step's sub-steps start at (substep-depth.ts; positionJoints). */
  private readonly substeps: SubstepDepth;
  /** tooCoarse's last estimate relative to params.stepTolerance (0: none). */
  private lastError = 0;
  /** tooCoarse's last estimate (m; 0: none), stats.stepError's. */
  private lastEstimate = 0;
  /**
   * The attempt's ü_{n+1}, the acceleration consistent with the joints at its end state
   * (tooCoarse, the symmetric joint step), then the memory's `acceleration`.
   */
  private readonly endAcceleration: Float64Array;
  /**
   * The attempt's mean acceleration D = (v_{t+h} − v_t)/h (measureMean), then the memory's
   * previousAcceleration: the reference of tooCoarse after any other step, and the
   * closing times' a_n of Moreau–Jean's impacts (impact-events.ts `next`).
   */
  private readonly stepMean: Float64Array;
  /** The change of the reference over the step (tooCoarse; restagger's scratch). */
  private readonly endChange: Float64Array;
  /**
   * Symplectic Euler with joints: the kick (s) restagger added to the running sub-step's
   * start velocity, (h_prev − h)/2 times ü there (0: none).
   */
  private kick = 0;
  /** The compliant contacts' switches within an attempt (the constructor's `impacts`), or null. */
  private readonly switches: ContactSwitches | null;
  /**
   * Whether the attempt running is backward Euler (θ = w = 1) in place of the scheme's own
   * step at a compliant contact's switch (trySingle).
   */
  protected dissipativeStep = false;
  /**
   * Symplectic Euler with compliant contacts: the bounds [ω², γ] (1/s², 1/s) of the
   * contacts pushing at a sub-step's start (ImpactSource.explicitRates; explicitHalvings);
   * null for the other schemes or without them.
   */
  private readonly explicitRates: Float64Array | null;
  /**
   * Symplectic Euler: the effectors that bound their stiffest mode (ForceEffector
   * .addExplicitRates: the fem bodies; .addExplicitRows: the springs, frame springs,
   * dampers and joint servos), their row sums by block row (stiffRows, dampRows), and their bounds [ω², γ] at the
   * running step's start (explicitHalvings).
   */
  private readonly explicitForces: readonly ForceEffector[];
  private readonly stiffRows: Float64Array;
  private readonly dampRows: Float64Array;
  private readonly forceRates = new Float64Array(2);

  constructor(
    readonly name: IntegratorName,
    protected readonly stepper: AccelerationStepper,
    public params: ThetaParameters,
    /** Newton's budget and tolerance (apart from params, see BodySystem on V8). */
    protected readonly newton: NewtonSettings,
    /**
     * The state record's integrator memory: the acceleration consistent with the joints at
     * the state (`acceleration`), which the symmetric joint step's error test reads, and
     * the last step's mean acceleration (previousAcceleration; keepEnd).
     */
    protected readonly memory: IntegratorMemory,
    /**
     * Compliant contacts (contact.method "smc"), or null. At θ < 1 with implicit forces
     * the trapezoidal step neither damps a stiff contact's mode nor integrates a force that
     * switches on or off inside the step: on two soft fem blocks (k = 1e7 N/m³ per unit
     * area, h = 5 ms) every impact pumped energy, +2.9 J at 0.5 s and 1.8e3 J at 1 s, and
     * the run diverged at step 376, its unconverged steps kept. So a step in which one of
     * them starts or stops pushing is checked as a step of the symmetric joints is
     * (tooCoarse: its local error h²/12 ‖D − D_prev‖, D the steps' mean accelerations
     * (v_{t+h} − v_t)/h, against params.stepTolerance; with joints at the position level
     * the ends' accelerations ü as the file comment's), and
     * so is one whose Newton iterations did not converge (the stepper keeps those with
     * compliant contacts: Newton cycles at a contact's kink); either is redone in halves
     * (step-halving.ts), and at the last halving with backward Euler from the same start
     * (θ = w = 1, Newmark's treatment of every switch: newmark.ts), which dissipates and
     * is accepted unconverged only there (stats.newtonConverged false). A switch the
     * step resolves (a ball on a resolved spring-dashpot floor) keeps the trapezoidal
     * step and its energy balance. Symplectic Euler's explicit contact forces are checked
     * against its stability bound instead (file comment, explicitHalvings).
     */
    private readonly impacts: ImpactSource | null = null,
  ) {
    this.vt = new Float64Array(stepper.n);
    this.stepImpulse = new Float64Array(stepper.constraints?.numRows ?? 0);
    this.switches = impacts === null ? null : new ContactSwitches(impacts);
    this.mean = new Float64Array(stepper.n);
    this.endAcceleration = new Float64Array(stepper.n);
    this.stepMean = new Float64Array(stepper.n);
    this.endChange = new Float64Array(stepper.n);
    this.rowRates = new Float64Array(stepper.constraints?.numRows ?? 0);
    this.startLambda = new Float64Array(stepper.constraints?.numRows ?? 0);
    this.substeps = new SubstepDepth(memory);
    this.midpointGyroscopic = params.theta === 1 && params.forceWeight === 0;
    this.explicitForces = this.midpointGyroscopic
      ? stepper.effectors.filter(
          (e) => e.addExplicitRates !== undefined || e.addExplicitRows !== undefined,
        )
      : [];
    // (rows of 3 dofs: a body's translation, a rigid body's rotation)
    this.stiffRows = new Float64Array(
      this.explicitForces.length > 0 ? 2 * stepper.sys.numBodies : 0,
    );
    this.dampRows = new Float64Array(this.stiffRows.length);
    this.explicitRates =
      this.midpointGyroscopic &&
      (impacts?.explicitRates !== undefined || this.explicitForces.length > 0)
        ? new Float64Array(2)
        : null;
    const set = stepper.constraints;
    this.positionJoints =
      set !== null &&
      ((params.theta === 0.5 && params.forceWeight === 0.5) ||
        (params.theta === 1 && params.forceWeight === 0));
    this.evenSubsteps =
      this.positionJoints && this.midpointGyroscopic && this.explicitRates !== null;
    this.reversibleControl = this.positionJoints && !this.evenSubsteps;
    this.end =
      set !== null && params.theta === 1 && params.forceWeight === 1
        ? { coefficients: this.coeff, acceleration: null }
        : null;
  }

  /**
   * Forgets the memory (the state was changed from outside): the accelerations it keeps
   * (keepEnd), and the consistent start, which the next step makes again.
   */
  reset(): void {
    this.memory.invalidate();
  }

  /**
   * A new memory's start made consistent with the joints and motors (as generalized-alpha
   * and newmark do): the velocities projected onto G v = −Ct where they violate it, the
   * kinetic energy that changes counted (AccelerationStepper.consistentStart). Without it
   * the step's own joint projection made that change uncounted: an impulse off a hinged
   * rod's pivot, or a motor starting from rest, left its energy in energy.error (0.5 J of
   * 1.5 J, the motor's whole ½ I ω²).
   */
  protected startRun(t: number): void {
    const memory = this.memory;
    if (memory.started) return;
    this.stepper.consistentStart(t);
    memory.started = true;
    if (!this.positionJoints) return;
    // the first step's error estimate (tooCoarse) against the start's acceleration: a step
    // turning a fast rotor too far for Newton to close its joints at the position level
    // was otherwise taken at the velocity level unchecked, losing most of its speed (a rod
    // on a hinge at 300 rad/s, h = 5 ms: 113 rad/s after the first step); and the first
    // step's stand-in for a last step's mean acceleration (stepMean: the impacts' closing
    // times)
    this.keepStartAcceleration(t);
    memory.previousAcceleration.set(memory.acceleration);
    memory.previousValid = true;
  }

  /**
   * The error estimate's start reference ü_n (tooCoarse) from the state at t, the
   * acceleration consistent with the joints (AccelerationStepper.constrainedAcceleration; λ
   * then the state's consistent multipliers): a function of the state alone, so a step
   * whose memory has none (a new memory, or after Moreau–Jean's contact step or its
   * halving, moreau-jean.ts) is tested too. Those steps went unchecked, covered only where
   * the sub-step controller's depth kept earlier rejections, which no longer move it at
   * θ = ½ (ownStep): a rod spun at 300 rad/s on a hinge reads 7.4 times the tolerance at a
   * whole 5 ms step (test/engine/integrators/moreau-jean.test.ts, the halved contact step).
   * Into the memory's `acceleration` (valid with previousValid: Moreau–Jean's contact step
   * invalidates that one alone), apart from the last step's mean acceleration (stepMean).
   */
  private keepStartAcceleration(t: number): void {
    this.consistentAcceleration(t, this.memory.acceleration);
    this.memory.accelerationValid = true;
  }

  /**
   * out ← ü at the state at t, the acceleration consistent with the joints
   * (AccelerationStepper.constrainedAcceleration, the Rayleigh forces included; λ then the
   * state's consistent multipliers).
   */
  protected consistentAcceleration(t: number, out: Float64Array): void {
    const c = this.coeff;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    this.stepper.constrainedAcceleration(c, t, out);
  }

  /** Whether the memory holds ü at the current state (keepStartAcceleration, keepEnd). */
  private get startAccelerationValid(): boolean {
    return this.memory.accelerationValid && this.memory.previousValid;
  }

  /**
   * The weight of the end-of-step forces (params.forceWeight: θ, 1 or 0), 1 for a step
   * redone with backward Euler at a compliant contact's switch (the energy balance reads
   * it after each step and sub-step).
   */
  get forceWeight(): number {
    return this.dissipativeStep ? 1 : this.params.forceWeight;
  }

  /**
   * Sets up predictors and coefficients for a step from t; returns the coefficients.
   * `symmetric`: the joints held as generalized-alpha's (file comment).
   */
  protected prepare(t: number, h: number, symmetric = false): SchemeCoefficients {
    const s = this.stepper;
    const c = this.coeff;
    s.beginStep();
    getVelocity(s.sys, this.vt);
    for (let i = 0; i < s.n; i++) {
      s.dxPred[i] = h * this.vt[i];
      s.vPred[i] = this.vt[i];
    }
    s.a.fill(0);
    const theta = this.dissipativeStep ? 1 : this.params.theta;
    c.cx = h * h * theta;
    c.cv = h;
    c.w = this.dissipativeStep ? 1 : this.params.forceWeight;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    c.positionLevel = symmetric;
    c.symmetricJoints = symmetric;
    c.momentumRows = false;
    // the trapezoidal rule: the free rigid bodies' rotation at their mean rate (file comment)
    c.meanRates = theta === 0.5 && c.w === 0.5;
    if (symmetric) {
      // the joint force on x with weight c_x ρ = h²θ, on v with c_v ρ + κ = hθ
      c.startForceWeight = 1;
      c.startVelocityWeight = h * theta - c.cv;
      c.startTorqueWeight = h - c.cv * c.w;
      s.beginStartDirections(t, c);
    }
    // the servos the step does not resolve at backward Euler's weight 1, ε = 1 − w
    // (AccelerationStepper.holdStiffForces; none for the explicit w = 0, sub-stepped instead)
    s.holdStiffForces(t, h, c, c.w > 0 ? 1 - c.w : 0);
    if (c.w < 1) {
      s.computeForces(t, s.fStart);
      this.startSolved = s.holdStartForces(this.midpointGyroscopic || c.meanRates ? h : 0, c);
    }
    // the trapezoidal rule (θ = w = ½): the fem bodies' energy–momentum force (file comment)
    if (theta === 0.5 && c.w === 0.5) s.beginMeanStep();
    s.linearIterations = 0;
    return c;
  }

  /**
   * The constraint rows whose motors' work this integrator's steps count (1), or null: all.
   * Moreau–Jean's step beside a contact (moreau-jean.ts, "Jointed groups apart") takes a
   * group's joints from a smooth step and the rest from its contact step, each counting
   * the work of its own rows' motors only.
   */
  protected motorRows: Uint8Array | null = null;

  /** Told of a split step's accepted sub-steps (Integrator; the energy balance). */
  substepObserver: SubstepObserver | null = null;

  /**
   * The joints' impulse Λ of the last `step` (N s, N m s per row), summed over its
   * accepted sub-steps (AccelerationStepper.addJointImpulse): M (v_{t+h} − v_t) = h f̄ +
   * Gᵀ Λ, where the reported λ is the end's consistent multipliers (Moreau–Jean's step
   * split at its impacts sums it: impact-events.ts).
   */
  readonly stepImpulse: Float64Array;

  /**
   * Whether `step` is the step whose lead the servos no halving resolves keep
   * (AccelerationStepper.beginStepLead): false where the integrator's own step calls it on
   * parts of a step (Moreau–Jean's halvings and pieces, moreau-jean.ts `step`).
   */
  protected get ownsStepLead(): boolean {
    return true;
  }

  step(t: number, h: number, stats: StepStats): void {
    this.startRun(t);
    this.stats = stats;
    this.stepImpulse.fill(0);
    this.kick = 0;
    // the servos no halving resolves keep the step's lead in its sub-steps (attempt;
    // AccelerationStepper.keepStepLead): with each sub-step's own, h/32 at the error
    // control's h/16, the sub-steps snapped them 16 times faster than the step's law and the
    // joints' impulses worked on that whip (a 3-link chain, servos about x, y, x at k_p = 1e8
    // commanded 0.3, 0.5, 0.2 rad at 5 ms: energy.error −1.96e4 J, now −5.1 J;
    // test/engine/integrators/servo-chain.test.ts); Moreau–Jean's own step sets it for
    // its halvings and pieces (ownsStepLead)
    if (this.ownsStepLead) this.stepper.beginStepLead(h);
    // the halvings the explicit step's forces and contacts ask at the start (file comment)
    let depth = 0;
    if (this.explicitRates !== null) {
      this.explicitForceRates();
      depth = Math.min(this.explicitHalvings(h), MAX_HALVINGS);
    }
    if (this.positionJoints) depth = this.substeps.begin(h, depth);
    stats.substeps = this.evenSubsteps
      ? this.advanceEvenly(t, h, depth)
      : advanceWithHalving(this, t, h, this.newton, this.name, 0, depth);
    if (this.positionJoints) this.substeps.end();
    // backward Euler: the reactions consistent with the end state (`end`), when this step
    // moves every row (motorRows null; Moreau–Jean's groups apart from its contacts are
    // stepped here with their rows marked, and its contact step then sets the others')
    this.stepper.reactionsAtEnd = this.motorRows === null ? this.end : null;
  }

  /**
   * Symplectic Euler with joints: the step from t of h in 2^d sub-steps of one length
   * (file comment), d the least depth from `depth` whose first sub-step is accepted (the
   * joints' error control and Newton: trySingle); the others keep that length
   * (lengthKept: their error control reports, stats.stepToleranceMet, and does not halve),
   * each still halved where Newton fails (step-halving.ts). Returns the sub-steps taken.
   */
  private advanceEvenly(t: number, h: number, depth: number): number {
    const newton = this.newton;
    let d = depth;
    for (; ; d++) {
      const last = d >= MAX_HALVINGS;
      newton.halvingFollows = !last;
      if (this.trySingle(t, h * 0.5 ** d, last)) break;
      if (last) throw halvingFailure(this.name, newton, h * 0.5 ** d);
      this.restoreStart();
    }
    const tau = h * 0.5 ** d;
    if (d > 0) this.substepObserver?.substepDone(t, tau);
    let count = 1;
    this.lengthKept = true;
    try {
      for (let k = 1; k < 2 ** d; k++)
        count += advanceWithHalving(this, t + k * tau, tau, newton, this.name, d, d);
    } finally {
      this.lengthKept = false;
    }
    return count;
  }

  /**
   * One step of h; false when Newton did not converge or, with symmetric joints, the step
   * is too coarse for the motion and may still be halved (step-halving.ts). With symmetric
   * joints, the symmetric step first, then, where its joints cannot be closed or the last
   * halving is still too coarse, the velocity-level one (file comment).
   */
  trySingle(t: number, h: number, last: boolean): boolean {
    this.dissipativeStep = false;
    if (this.positionJoints && this.midpointGyroscopic) {
      this.restagger(t, h);
      const accepted = this.stiffOrOwn(t, h, last);
      if (accepted) {
        this.kick = 0;
        this.memory.substepSize = h;
        this.memory.velocitiesInTime = false;
      }
      return accepted;
    }
    return this.stiffOrOwn(t, h, last);
  }

  /**
   * Symplectic Euler's velocity, kicked by the forces at x_n over a whole sub-step, is the
   * leapfrog's at the middle of the sub-step it drifts (v_{n+½}; HLW §I.3.1), h/2 behind
   * the positions. A sub-step of h after one of h_prev therefore kicks (h_prev + h)/2, as
   * the variable-step leapfrog does, not h: the velocity it starts from is moved by
   * (h_prev − h)/2 · ü_n (ü the acceleration consistent with the joints at the start, the
   * memory's). Without it each change of length moved the energy by (h_prev − h)/2 · dV/dt,
   * the jump of the modified energy H̃ = H − (h/2) dV/dt, a loss at every deepening as a
   * whip starts (V falling) and at every return as it ends (V rising). With motors ü holds
   * their share M⁻¹ Gᵀλ too, and the kick moves the kinetic energy by −(h_prev − h)/2 times
   * their power λᵀ ∂C/∂t: no work (not booked, removedEnergy), the lag of the velocity h/2
   * behind the positions, whose energy offset −(h/2) vᵀM ü moves with the length, as the
   * forces' share; booked as the motor's work, energy.error drifted to −10 J in 10 s where
   * it stays within 2.3 J (the motor-swung double pendulum at 10 ms,
   * test/engine/integrators/theta-scheme.test.ts; 2.6 J the band of a uniform step scaled).
   * Velocities at the positions' time (memory.velocitiesInTime: an impact met at its
   * instant, impact-events.ts) start the leapfrog as its variable-step form does: a half
   * kick, −h/2 · ü, ü made at that state (its velocities the impact's). The sub-step then
   * drifts on v(t) + (h/2) ü, its end on the exact motion under forces held over it, where
   * the whole kick the run's start takes left it (h²/2) ü off, the velocity h/2 · ü: a
   * welded pair bouncing at e = 1 (5 ms) lost up to 0.9 % of its apex a bounce
   * (test/engine/integrators/welded-drop.test.ts).
   */
  private restagger(t: number, h: number): void {
    const memory = this.memory;
    let kick = 0;
    if (memory.velocitiesInTime) {
      // (ü made once, at the first attempt: a retry's start holds the kick already)
      if (this.kick === 0) this.keepStartAcceleration(t);
      kick = -0.5 * h;
    } else {
      // (none after a step that left no ü, a contact step's or the velocity level's: that
      // length is then forgotten, so that a retry, ü made meanwhile, does not take it up)
      if (!this.startAccelerationValid) memory.substepSize = 0;
      const previous = memory.substepSize;
      if (previous > 0) kick = 0.5 * (previous - h);
    }
    if (kick === this.kick) return;
    const dk = kick - this.kick;
    // a servo unresolved over the kick (h k_d/Ĩ > 1: AccelerationStepper.unresolvedAt): its
    // damping's share −(k_d/Ĩ) q̇ of ü, kicked explicitly, would reverse the rate it only
    // slows, energy the step's implicit damping then books as dissipated (a hinged rod whose
    // k_d a `gains` input raised to 1e6 mid-swing: energy.error +0.46 J of its 0.33 J,
    // test/engine/integrators/theta-servo-lag.test.ts). The velocities are left as they
    // are and the last length forgotten, as after a contact step
    if (this.stepper.unresolvedAt(t, Math.abs(dk))) {
      memory.substepSize = 0;
      return;
    }
    const { endChange: v } = this;
    const sys = this.stepper.sys;
    getVelocity(sys, v);
    const acceleration = memory.acceleration;
    for (let i = 0; i < v.length; i++) v[i] += dk * acceleration[i];
    setVelocity(sys, v);
    this.kick = kick;
  }

  /**
   * The θ = 1 schemes (symplectic Euler, backward Euler): the time (s) their velocities lag
   * the positions by at the start of a step of h, the leapfrog's (restagger): half the last
   * sub-step where the memory keeps its length and ü (symplectic Euler with joints), else
   * half a step of h (the step before kicked whole: at the run's constant step, its length;
   * a split step's pieces leave it so too, impact-events.ts STEP_LAG); 0 at the run's start
   * or after a state set from outside (memory.started false: read before startRun) and
   * after an impact met at its instant (memory.velocitiesInTime), and for θ < 1, whose
   * velocities are at the positions' time. Backward Euler's flight under a constant force
   * is symplectic Euler's, v_{n+1} = v_n + h a, x_{n+1} = x_n + h v_{n+1} (a at either end
   * the same), so its velocity lags as the leapfrog's: read in time, a ball dropped at
   * e = 1, 5 ms, lost 57 % of its apex over 20 bounces
   * (test/engine/integrators/leapfrog-bounce.test.ts).
   */
  protected velocityLag(h: number): number {
    const memory = this.memory;
    if (this.params.theta !== 1 || !memory.started || memory.velocitiesInTime) return 0;
    if (this.positionJoints && this.startAccelerationValid && memory.substepSize > 0)
      return 0.5 * memory.substepSize;
    return 0.5 * h;
  }

  /** trySingle's attempt, after the restagger (symplectic Euler with joints). */
  private stiffOrOwn(t: number, h: number, last: boolean): boolean {
    if (this.explicitRates !== null) {
      // the start held first, as prepare does (a halving puts the state back to it)
      this.stepper.beginStep();
      getVelocity(this.stepper.sys, this.vt);
      // symplectic Euler whose explicit step of h does not resolve the contacts pushing at
      // its start: halved, the last halving backward Euler (file comment)
      if (this.explicitHalvings(h) > 0) return this.dissipativeRedo(t, h, last);
    }
    return this.ownStep(t, h, last);
  }

  /**
   * forceRates ← the bounds [ω², γ] of the explicit forces at the current state: the sum of
   * the effectors' own (addExplicitRates, Weyl's inequality) and the largest of the row
   * sums of the bodies' blocks (addExplicitRows, block Gershgorin).
   */
  private explicitForceRates(): void {
    const { forceRates: rates, stiffRows, dampRows } = this;
    rates.fill(0);
    stiffRows.fill(0);
    dampRows.fill(0);
    for (const e of this.explicitForces) {
      e.addExplicitRates?.(rates);
      e.addExplicitRows?.(stiffRows, dampRows);
    }
    let omega2 = 0;
    let gamma = 0;
    for (let b = 0; b < stiffRows.length; b++) {
      omega2 = Math.max(omega2, stiffRows[b]);
      gamma = Math.max(gamma, dampRows[b]);
    }
    rates[0] += omega2;
    rates[1] += gamma;
  }

  /**
   * Symplectic Euler's impulsive step (moreau-jean.ts, active contacts or limits), which
   * the halvings of `step` do not reach: whether its explicit forces at the current state
   * (explicitForceRates) fail the bound at h (explicitHalvings), so that the step is to be
   * taken in halves; at the last halving, `last`, it is backward Euler instead (θ = w = 1:
   * dissipativeStep, read by prepare and forceWeight) and false.
   */
  protected explicitUnstable(h: number, last: boolean): boolean {
    this.dissipativeStep = false;
    if (this.explicitRates === null) return false;
    this.explicitForceRates();
    if (this.explicitHalvings(h) === 0) return false;
    this.dissipativeStep = last;
    return !last;
  }

  /**
   * The halvings k the explicit step of h needs (symplectic Euler, file comment): the least
   * k ≤ MAX_HALVINGS with h_k² ω² + 2 h_k γ < 4 + 2 h_k (r_M + r_K ω²), h_k = h/2^k, [ω², γ]
   * the sum of the bounds of the compliant contacts pushing at the current state
   * (ImpactSource.explicitRates) and of the forces at the running step's start
   * (forceRates), or MAX_HALVINGS + 1 when none passes. The Rayleigh terms are implicit
   * (at the end-of-step velocity): a mode ω with r_M, r_K and an explicit damping γ steps
   * as (1 + c) δ_n = (1 − h γ) δ_{n−1} − h² ω² x_n (δ_n = x_{n+1} − x_n, c = h (r_M +
   * r_K ω²)), whose roots stay in the unit circle while h² ω² + 2 h γ < 2 (2 + c) (Schur–
   * Cohn); with r_K ≥ h/2 no stiffness is too high.
   */
  private explicitHalvings(h: number): number {
    const rates = this.explicitRates as Float64Array;
    rates.fill(0);
    this.impacts?.explicitRates?.(rates);
    const omega2 = rates[0] + this.forceRates[0];
    const gamma = rates[1] + this.forceRates[1];
    const { rayleighMass: rM, rayleighStiffness: rK } = this.params;
    let k = 0;
    for (
      let hk = h;
      hk * hk * omega2 + 2 * hk * gamma >= 4 + 2 * hk * (rM + rK * omega2);
      hk *= 0.5
    )
      if (++k > MAX_HALVINGS) break;
    return k;
  }

  /**
   * The step from t of h again from its start with backward Euler, after the scheme's own
   * step saw a compliant contact switch (switchedInStep; the constructor's `impacts`) or
   * symplectic Euler's explicit step would not be stable (explicitHalvings); false while a
   * halving follows, or when it does not converge and may be halved.
   */
  private dissipativeRedo(t: number, h: number, last: boolean): boolean {
    this.restoreStart();
    // halved while a halving follows; the last one with backward Euler
    if (!last) {
      if (this.positionJoints) this.substeps.record(h, false, this.lastError);
      return false;
    }
    this.dissipativeStep = true;
    const c = this.attempt(t, h, false);
    if (c === null) {
      this.dissipativeStep = false;
      return false;
    }
    this.stepper.addJointImpulse(c, this.stepImpulse);
    this.measureMean(h);
    this.keepEnd(false);
    if (this.positionJoints) this.substeps.record(h, true, 0);
    if (this.stepper.constraints?.timeDependent === true) {
      this.meanVelocity();
      this.takeMotorWork(h);
    }
    this.stepper.decayVelocities(h, this.params.velocityDamping);
    return true;
  }

  /**
   * Whether the step just taken must be redone (the constructor's `impacts`): compliant
   * contacts, a scheme that is not backward Euler already (θ < 1 with implicit forces, or
   * symplectic Euler: file comment), and Newton not converged (kept by the stepper with compliant contacts), or a contact
   * whose pushing state changed from the step's start in a step that does not resolve the
   * motion (tooCoarse; not tested without the last step's mean acceleration).
   */
  private switchedInStep(t: number, h: number): boolean {
    const impacts = this.impacts;
    if (impacts === null || this.dissipativeStep) return false;
    if (this.explicitRates === null && (this.params.theta >= 1 || this.params.forceWeight === 0))
      return false;
    if (!this.stepper.newtonConverged) return true;
    // a switch of a contact whose mode the step does not resolve (h ω > 1), or any switch in
    // a step too coarse for the motion
    const found = (this.switches as ContactSwitches).check();
    return found === Switch.UNRESOLVED || (found === Switch.RESOLVED && this.tooCoarse(t, h));
  }

  /** The scheme's own step of h (trySingle before a compliant contact's redo). */
  private ownStep(t: number, h: number, last: boolean): boolean {
    const s = this.stepper;
    if (this.positionJoints) {
      // the motors' power at the start, from the state's multipliers (a symmetric step
      // leaves the consistent ones)
      const startPower = this.motorPower(t, this.startConsistent(t));
      if (!this.startAccelerationValid) this.keepStartAcceleration(t);
      const c = this.attempt(t, h, true);
      if (c !== null && this.switchedInStep(t, h)) return this.dissipativeRedo(t, h, last);
      const coarse = c !== null && this.tooCoarse(t, h);
      // the last halving is accepted still too coarse (as generalized-alpha's), saying so,
      // and so is a sub-step whose length its step's first fixed (advanceEvenly)
      const kept = last || this.lengthKept;
      if (coarse && kept) this.stats.stepToleranceMet = false;
      if (c !== null && (!coarse || kept)) {
        s.addJointImpulse(c, this.stepImpulse);
        // the reactions: the multipliers consistent with the end state (as generalized-alpha),
        // left by tooCoarse's end acceleration, which reads the servos the step did not
        // resolve at x (the memory's reference); the State's reactions and the motors' end
        // power take them as the step applied them, at its lead (consistentMultipliers'
        // `stepped`): read at x, the end-hinged rod's k_p = 1e6 servo (moreau-jean, 1/60 s)
        // reported a hinge reaction of 65.4 N where its effort asks 6.16 N
        if (c.stiffWeight !== 0) s.consistentMultipliers(c, t + h);
        // the motors' work, the trapezoid of their power (as generalized-alpha's, whose
        // step this is at θ = ½: simulation/step-work.ts)
        const endPower = this.motorPower(t + h, s.lambda);
        this.memory.lambdaMean = false;
        this.lambdaAbandoned = false;
        s.removedEnergy += 0.5 * h * (startPower + endPower);
        this.keepEnd(c.symmetricJoints);
        s.decayVelocities(h, this.params.velocityDamping);
        this.substeps.record(h, true, this.lastError);
        this.stats.stepError = Math.max(this.stats.stepError, this.lastEstimate);
        return true;
      }
      this.restoreStart();
      if (!last) {
        // halved: shorter steps resolve the motion, or turn the joints little enough for
        // Newton to close them (the velocity level would dissipate it). At θ = ½ (and under
        // symplectic Euler without evenSubsteps) only Newton's failures move the next steps'
        // start depth: the error control's halvings must be each step's own for the scheme
        // to keep its energy (file comment)
        this.substeps.record(h, c !== null && this.reversibleControl, this.lastError);
        return false;
      }
      // the last halving, its joints not closed at the position level: the velocity level
      // (where joints no motion satisfies fail too, as under generalized-alpha)
    }
    const c = this.attempt(t, h, false);
    if (c === null) return false;
    if (this.switchedInStep(t, h)) return this.dissipativeRedo(t, h, last);
    s.addJointImpulse(c, this.stepImpulse);
    if (this.positionJoints || this.impacts !== null || this.keepsMean) {
      // the next step's error estimate (tooCoarse) compares with this step's mean, and
      // Moreau–Jean's impacts read it (keepsMean)
      this.measureMean(h);
      this.keepEnd(false);
    }
    if (this.positionJoints) this.substeps.record(h, true, 0);
    // motors (rows with ∂C/∂t ≠ 0): their work over the step, for the energy balance
    if (s.constraints?.timeDependent === true) {
      this.meanVelocity();
      this.takeMotorWork(h);
    }
    s.decayVelocities(h, this.params.velocityDamping);
    return true;
  }

  /**
   * The motors' power (W) at t, λᵀ ∂C/∂t over the rows of motorRows, with the stepper's
   * multipliers λ (ConstraintSet.prescribedPower).
   */
  private motorPower(t: number, lambda: Float64Array): number {
    const set = this.stepper.constraints;
    if (set === null || !set.timeDependent) return 0;
    const rows = this.motorRows;
    if (rows === null) return set.prescribedPower(t, lambda, this.rowRates);
    const rates = this.rowRates;
    set.velocityTerm(t, rates);
    let power = 0;
    for (let r = 0; r < set.numRows; r++) if (rows[r] === 1) power += lambda[r] * rates[r];
    return power;
  }

  /** The start's consistent multipliers (startConsistent). */
  private readonly startLambda: Float64Array;
  /**
   * Whether the stepper's λ is an abandoned attempt's (restoreStart put the state back
   * since a step last ended in ownStep): its end's consistent multipliers (tooCoarse) or
   * Newton's last iterate, not the start's (startConsistent).
   */
  private lambdaAbandoned = false;

  /**
   * The multipliers the motors' power at the running step's start is taken at (ownStep):
   * the state's λ, the last step's consistent ones at its end, or, where the last step was
   * Moreau–Jean's with impulses (IntegratorMemory.lambdaMean: its λ the step's mean joint
   * force, the impulses' share included), the multipliers consistent with the start state
   * (AccelerationStepper.startMultipliers). The trapezoid of the power is the symmetric
   * step's motor work only at the multipliers of its own dynamics at both ends: with the
   * mean force of a crank's step whose link slid on the floor, the next step (its tip
   * lifted) counted the contact's share of the motor torque as work: a motor turning the
   * crank at 2 rad/s, its joints redone at the position level (moreau-jean.ts, "Jointed
   * groups touched"), read energy.error 0.072 J in 30 s at 5 ms, now 7.0e-4 J
   * (test/engine/integrators/moreau-jean.test.ts). So too after an attempt from this start
   * was rejected (lambdaAbandoned): its λ, the rejected end's, had the retry's trapezoid
   * count the power at t + h_rejected as the start's, once per rejection; a double pendulum
   * whose shoulder a motor swings (1 rad at 2 Hz, symplectic Euler at 10 ms, its sub-steps
   * halved by the error control in and out of each whip) read energy.error 91 J within
   * 10 s, now 2.0 J (test/engine/integrators/theta-scheme.test.ts).
   */
  private startConsistent(t: number): Float64Array {
    const s = this.stepper;
    if (
      !(this.memory.lambdaMean || this.lambdaAbandoned) ||
      s.constraints === null ||
      !s.constraints.timeDependent
    )
      return s.lambda;
    const { rayleighMass, rayleighStiffness } = this.params;
    s.startMultipliers(t, rayleighMass, rayleighStiffness, this.startLambda);
    return this.startLambda;
  }

  /** One Newton solve of the step; its coefficients, or null when Newton did not converge. */
  private attempt(t: number, h: number, symmetric: boolean): SchemeCoefficients | null {
    const c = this.prepare(t, h, symmetric);
    this.stepper.keepStepLead(h);
    if (!this.startSolved) return null;
    if (this.switches !== null && !this.dissipativeStep) this.switches.begin();
    this.stats.newtonIterations += this.stepper.solve(c, t + h, this.newton);
    this.stats.linearIterations += this.stepper.linearIterations;
    if (this.stepper.mustRedo) return null;
    // symplectic Euler: the free welded groups moved as the rigid bodies they are
    // (AccelerationStepper.placeWelded; not the Rayleigh stiffness damping's K v, which
    // couples them to the bodies their force elements reach: those keep the solve's)
    if (this.params.rayleighStiffness === 0) this.stepper.placeWelded(this.params.rayleighMass);
    // (a step with compliant contacts that is then redone counts its redo's: trySingle)
    if (this.impacts === null || this.stepper.newtonConverged || this.dissipativeStep)
      this.stats.newtonConverged &&= this.stepper.newtonConverged;
    return c;
  }

  /**
   * Whether the step from t of h just solved does not resolve the motion: its local error
   * h²/12 ‖ref_{n+1} − ref_n‖ moves some body's mass by more than params.stepTolerance
   * (generalized-alpha.ts rejectedByErrorControl; no test without the memory's ref_n). The
   * reference: after the symmetric joint step ü, the acceleration consistent with the joints
   * (AccelerationStepper.constrainedAcceleration at the end into endAcceleration, its λ then
   * the end's consistent multipliers, the reactions ownStep reports; the file comment's
   * time-symmetric estimate); after any other step the mean acceleration D = (v_{t+h} −
   * v_t)/h (the compliant contacts' switches; with joints a velocity-level or backward-Euler
   * step, rare and dissipative anyway, whose λ, the step's impulse, must stay). D is
   * measured either way (stepMean), the impacts' closing times' reference (keepEnd).
   */
  private tooCoarse(t: number, h: number): boolean {
    const { endAcceleration, stepMean, endChange: change, coeff: c, memory } = this;
    this.measureMean(h);
    const symmetric = this.positionJoints && c.symmetricJoints;
    // (the symmetric joint step: S = G M⁻¹ Gᵀ factored at the end by its velocity projection)
    if (symmetric) this.stepper.constrainedAcceleration(c, t + h, endAcceleration, false);
    this.lastError = 0;
    this.lastEstimate = 0;
    // (ü_n: made at the symmetric step's start where the memory held none, ownStep)
    if (!(symmetric ? memory.accelerationValid : memory.previousValid)) return false;
    const start = symmetric ? memory.acceleration : memory.previousAcceleration;
    const end = symmetric ? endAcceleration : stepMean;
    for (let i = 0; i < change.length; i++) change[i] = end[i] - start[i];
    this.lastEstimate = trapezoidalStepError(this.stepper.sys, h, change, this.params.errorWeights);
    this.lastError = this.lastEstimate / this.params.stepTolerance;
    return this.lastError > 1;
  }

  /** stepMean ← (v_{t+h} − v_t)/h, the step's mean acceleration, at the current velocities. */
  private measureMean(h: number): void {
    const { stepMean, vt } = this;
    getVelocity(this.stepper.sys, stepMean);
    for (let i = 0; i < stepMean.length; i++) stepMean[i] = (stepMean[i] - vt[i]) / h;
  }

  /**
   * The accepted step's references into the memory, the next step's: its mean acceleration
   * (stepMean) as previousAcceleration, and, after the symmetric joint step (`symmetric`,
   * tooCoarse having measured it), ü at its end (endAcceleration) as `acceleration`, else
   * none (the next symmetric step takes it from its start: keepStartAcceleration). Two
   * measures, not one: Moreau–Jean's impacts take their closing times with D_prev as the
   * constant acceleration a_n (impact-events.ts `next`), and with ü there in its place the
   * rod dropped from level onto a limit bound at e = 1 (1/60 s) ended its pieces past the
   * bound (up to 2.8e-5 rad, every one of its 115 impacts) where D_prev had left them short
   * (18 past, up to 4.5e-6 rad), and the bound's projection back lifted it by
   * m g (L/2) cos θ_b times that: +3.67e-3 J over 60 s against 1.7e-4
   * (test/engine/integrators/limit-impacts.test.ts).
   */
  private keepEnd(symmetric: boolean): void {
    const memory = this.memory;
    memory.previousAcceleration.set(this.stepMean);
    memory.previousValid = true;
    if (symmetric) memory.acceleration.set(this.endAcceleration);
    memory.accelerationValid = symmetric;
  }

  /** mean ← ½ (v_t + v_{t+h}) with the system's current velocities as v_{t+h}. */
  protected meanVelocity(): void {
    const { mean, vt } = this;
    getVelocity(this.stepper.sys, mean);
    for (let i = 0; i < mean.length; i++) mean[i] = 0.5 * (vt[i] + mean[i]);
  }

  /**
   * The motors' work over the step of h (the rows with ∂C/∂t ≠ 0) into the stepper's
   * removedEnergy (the energy balance, simulation/monitor.ts): minus h λᵀ G v̄ over their
   * rows, with λ the step's multipliers, a force over the step (M (v_{t+h} − v_t) = h f̄ +
   * h Gᵀλ), so their exact share of the kinetic energy's change. Needs meanVelocity first.
   */
  protected takeMotorWork(h: number): void {
    const set = this.stepper.constraints;
    if (set === null || !set.timeDependent) return;
    const rates = this.rowRates;
    set.multiply(this.mean, rates);
    const lambda = this.stepper.lambda;
    const rows = this.motorRows;
    let work = 0;
    for (let r = 0; r < set.numRows; r++)
      if (set.constraints[set.rowConstraint[r]].timeDependent && (rows === null || rows[r] === 1))
        work += h * lambda[r] * rates[r];
    this.stepper.removedEnergy -= work;
  }

  /** Puts the state back at the start of the step (step-halving.ts). */
  restoreStart(): void {
    this.stepper.restoreStart(this.vt);
    this.lambdaAbandoned = true;
  }
}
