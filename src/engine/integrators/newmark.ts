/**
 * Implicit Newmark integration with Rayleigh damping, after SOFA's
 * NewmarkImplicitSolver (reference/sofa-NewmarkImplicitSolver.txt). One step solves
 *   ((1 + hγ r_M) M + (h²β + hγ r_K) K) a_{t+h}
 *       = f_ext − (r_M M + r_K K)(v_t + h(1−γ) a_t) − K(x_t + h v_t + h²/2 (1−2β) a_t)
 *   x_{t+h} = x_t + h v_t + h²/2 ((1−2β) a_t + 2β a_{t+h})
 *   v_{t+h} = v_t + h ((1−γ) a_t + γ a_{t+h})
 * with the tangent stiffness K = −∂f/∂x (and D = −∂f/∂v) for nonlinear forces and
 * Newton iterations to `newtonTolerance` (see acceleration-step.ts: with a line search
 * when more than one iteration is allowed; a step whose iterations do not converge is
 * redone as two half steps, step-halving.ts, never continued from an unconverged iterate;
 * solver.newtonIterations = 1 asks for SOFA's linearized step). Unlike SOFA, a_t is
 * recomputed from the state (M a_t = f(x_t, v_t) − (r_M M + r_K K) v_t) on the first
 * step and after every reset or external change, never reused stale.
 * After the step, v ← v·exp(−h·velocityDamping) (SOFA's velocity decay).
 * (β, γ) = (1/4, 1/2) is the trapezoidal rule: unconditionally stable, no numerical
 * damping, energy-conserving for linear systems; γ > 1/2 damps high frequencies.
 *
 * Joints. (With Newton iterated and β > 0 a jointed step is generalized-alpha's form at
 * Newmark's (β, γ), joints held symmetrically, and so is the step at β = ¼, γ = ½ with fem
 * bodies: `alphaForm`; what follows is the linearized step's and the central
 * difference's.) With γ = ½ the Newton step holds them at the velocity level,
 * G v_{t+h} = −Ct (index 2), and the post-step projection removes the position drift.
 * The multipliers of such a step are not the state's reactions: with
 * v_{t+h} = v_t + h/2 (a_t + a_{t+h}) the rows ask G a_{t+h} ≈ −G a_t, so the part of a_t
 * along the joint directions that breaks G a = Qc changes sign at every step and is never
 * damped (the spurious root of γ = ½ is −1). The motion does not see it (x and v take the
 * mean of a_t and a_{t+h}), but λ carries M times it: after a 1 kg, 1 m rod fell onto a
 * joint limit and came to rest, its hinge force alternated by ±2.77 N along the rod (28 %
 * of m g) at every step for at least 60 s at h = 5 ms (±0.57 N at 1 ms), and a free swing
 * read ±2e-3 N. So a velocity-level step reports the multipliers consistent with its end
 * state after the joint projection (M ü = f + Gᵀλ with G ü = Qc, as generalized-alpha's:
 * AccelerationStepper.reactionsAtEnd), 1e-12 N from m g on the resting rod and 1e-11 N
 * from the closed form in the swing, at one more factorization of S = G M⁻¹ Gᵀ a step
 * (+15–20 % on a linearized step of a 100-link chain, ~2 % on an iterated one); the
 * step's own λ serve its Newton iterations only, and the next step's geometric stiffness
 * starts from the reported ones. Likewise the acceleration carried to the next step, a_t,
 * is the one consistent with the projected end state, M⁻¹ (f + Gᵀλ) with those λ (as a
 * new memory's, `initialAcceleration`), not the step's own a_{t+h}: nothing damps the
 * alternation and every projection adds to it, so carried on it grew as a random walk (on
 * the whip example 3.8e3 rad/s² after 1 s, 3.5e5 after 12 s, five times the largest true
 * acceleration), each step's Newton started twice that far from its solution with
 * multipliers as large, and from 34 s the whip gained energy (+113 J by 37 s) until a step
 * failed even at h/16 (37.4 s). Now it runs with no halving, 4.2 Newton iterations a step
 * (27 by 30 s before), and drains its energy by its unresolved cracks as the other
 * integrators do (−3.0 J by 60 s). The price, at steps that do not resolve a fast turn:
 * the alternation's symmetric bookkeeping is gone, and two rods jerked into a 60 rad/s
 * turn lose up to 7 J of 87 within 2 s at 1/240 s where the step's own a_t lost 3 J
 * (1.0 and 0.8 J at 1/480 s, 0.21 J both at 1/960 s), and the benchmark's 100-link chain
 * at the defaults loses up to 0.12 m g L over 2000 steps of 1/240 s (where it gained
 * 0.27 m g L, at 33 iterations and 2.3 sub-steps a step, now 5.0 and 1.0). At the
 * position level the alternation decays (below) and the step's own multipliers are
 * reported: first order in h (0.1 N of the swinging rod's
 * 10–30 N at h = 5 ms, γ = 0.6), transients after an impact decaying by 0.82 a step.
 * With numerical damping (γ > ½, β > 0) it holds them at the position level,
 * C(x) + G c_x Δa = 0 at each iterate x (index 3, as Cardona & Géradin's Newmark for
 * constrained mechanisms, Comput. Struct. 33, 1989, and Chrono's HHT): the step then
 * ends off the manifold only by what the linearization leaves, ½ (c_x Δa)ᵀ C_qq (c_x Δa)
 * with Δa = a_{t+h} − (Newton's guess), so more steps end within solver.jointTolerance
 * and need no position projection; their velocities, which position-level rows do not
 * constrain, are projected after every step instead (acceleration-step.ts). Index 3 needs
 * the numerical damping: with γ = ½ the accelerations along the joint directions are not
 * damped, and the 100-link chain of the benchmark (S2-100) diverges.
 * Newton's guess is then the mean of the last two accelerations rather than a_t: the
 * drift is quadratic in the guess's error, and the joint-direction accelerations
 * alternate from step to step (Newmark's spurious root at h ω → ∞ is
 * 1 − 2/(γ + ½) ≈ −0.82 for γ = 0.6), which a_t repeats and the mean largely cancels.
 * Of the guesses a_t + e (a_t − a_{t−h}), e near −½ (the mean) leaves the fewest steps
 * needing a position projection; e ≥ ½ (extrapolating a change that alternates in sign)
 * diverges. The
 * position level, with the velocity projection after every step, takes fewer
 * factorizations per step than the velocity level with its projections (bench/README.md,
 * "Newmark at the position level").
 */

import { SchemeCoefficients } from "../dynamics/stepper";
import { getVelocity } from "../model/body-system";
import type { AccelerationStepper, EndConsistency, NewtonSettings } from "./acceleration-step";
import { ContactSwitches, type ImpactSource, lawChanged, type SwitchRedo } from "./contact-switch";
import { GeneralizedAlphaIntegrator } from "./generalized-alpha";
import {
  emptyStepStats,
  type Integrator,
  type IntegratorMemory,
  type ProjectionOrder,
  type StepStats,
  type SubstepObserver,
} from "./integrator";
import type { LimitSwitches } from "./limit-switch";
import { advanceWithHalving, type HalvingStep } from "./step-halving";

export interface NewmarkParameters {
  beta: number;
  gamma: number;
  rayleighMass: number;
  rayleighStiffness: number;
  velocityDamping: number;
  /**
   * solver.stepTolerance for the jointed steps of `alphaForm` (m per step, null: off): left
   * out, generalized-alpha's DEFAULT_STEP_TOLERANCE at every (β, γ) (its joints held
   * symmetrically, nothing damps them: `alphaForm`; integrators/factory.ts).
   */
  stepTolerance: number | null;
  /** Each body's weight on its estimate (generalized-alpha.ts stepControl; null: 1 for all). */
  errorWeights: Float64Array | null;
}

/**
 * κ of Newmark's step-error test when solver.newtonTolerance is unset (acceleration-step.ts,
 * `solve`): Newton stops once the position error it leaves, β h² ‖Δa‖∞, is at most 5 % of
 * the step's own local error estimate |β − 1/6| h² ‖a_{t+h} − a_t‖∞ (Zienkiewicz & Xie
 * 1991), so that the algebraic error is a small fraction of the discretization's. On the
 * stiff cloth of the benchmark (S3-32-stiff, 1 100 steps) κ = 0.01, 0.03, 0.05, 0.1 take
 * 4.03, 3.60, 3.36, 3.07 Newton and 44.9, 35.6, 33.8, 29.2 CG iterations a step; after 100
 * steps their positions are 4.8e-7, 4.3e-7, 5.3e-7, 1.2e-6 m from Newton to 1e-10, where
 * the same run at h/2 is 1.8e-3 m away: up to 5 % the solves' tolerance, not the test,
 * sets what is left. The soft cloth (S3-32 at the defaults): 3.6e-6 (κ = 0.01) and 1.0e-5 m
 * (0.05) from Newton to 1e-10 after 100 steps, h/2 6.4e-4 m. Not larger: at κ = 0.1 a
 * stiffer cloth (k = 1e5 N/m) failed at step 780 (the run ends diverged), and at κ = 0.2
 * the benchmark's stiff cloth blew up near step 960 with every step converged (strain
 * 990 %), also with the estimate's reference capped at twice the previous step's change
 * (so not only because an error that excites the cloth loosens its own test). At 0.05
 * cloths of 24² to 48² particles and k = 1e4 to 3e5 N/m ran through (bench/README.md,
 * "Stiff cloth").
 */
export const NEWMARK_STEP_ERROR = 5e-2;

export class NewmarkIntegrator implements Integrator, HalvingStep, SwitchRedo {
  readonly name = "newmark" as const;
  /**
   * The generalized-alpha integrator that takes the steps in its form at α_m = α_f = ½ with
   * Newmark's (β, γ), or null. (Named `trapezoid` while it took only β = ¼, γ = ½; every
   * member's jointed steps since e39896a.)
   * With joints (or motors), Newton iterated and β > 0: the steps are generalized-alpha's
   * form at α_m = α_f = ½ with Newmark's (β, γ) (its memory a = A = M⁻¹ f, the balance then
   * a_{t+h} = A_{t+h}: Newmark's step for the applied forces), whose joints are held
   * symmetrically within the step (GeneralizedAlphaParameters.newmarkBeta); at β = ¼,
   * γ = ½ (the trapezoidal rule) that is ρ∞ = 1, also taken with fem bodies, whose energy–
   * momentum force it applies; null otherwise (the linearized step, the central
   * difference).
   *
   * The other members, too. Newmark's own joints carry their force in a_t, and γ weighs it
   * as any other: a rod turning steadily about a hinge at its end is a constant joint rate,
   * but its centre circles at ω, an oscillation of its coordinates that γ > ½ damped by
   * ≈ (γ − ½) h ω² a unit time (¾ of it on a rod, its centre's share of I). A 2 kg, 0.6 m
   * rod spinning freely at 5 rad/s (1/60 s) slowed to 3.92 rad/s in 10 s at (0.3025, 0.6)
   * and to 4.9955 at (0.3, ½) (the velocity-level drain below); a velocity servo (k_v =
   * 1e4) on it settled 6.4e-3 rad/s above its target (∝ h²: the position-level rows left
   * the centre's velocity 6e-3 rad/s ahead of the rod's turn, which the servo read, and
   * the post-step projection averaged them), energy.error 1.8e3 J in 20 s; at k_v = 0.1
   * the drag held it 0.31 rad/s below; and a 1 kg, 1 m rod swinging from horizontal lost
   * 3.5 J of its 4.9 J in 120 s at (0.3025, 0.6) at h = 5 ms, where its swing is resolved
   * (h ω = 0.02). Held symmetrically the spin and the servo are exact (1e-12 rad/s) and
   * the swing keeps its energy within 6e-4 J at any (β, γ): the joints' part of a motion
   * is the symmetric scheme's, not Newmark's, whose (β, γ) weigh the applied forces alone
   * (test/engine/integrators/newmark-joint-turns.test.ts). So γ > ½ no longer damps what
   * only the joints carry, and nothing drains an unresolved whip: without error control the
   * whip example at 1/240 s gains energy at its cracks, +209 J (21 m g L) by step 1310 at
   * (0.3025, 0.6) and +210 J by step 1142 at (0.3, ½), its steps halved ever more (10
   * sub-steps and 64 iterations a step at the end), until Newton fails at h/16 (step 1311,
   * 5.46 s; 1143, 4.76 s: the run ends diverged). Before, their drain took 2.95 and 3.26 J of
   * m g L = 9.81 J in 30 s, at 1.0 sub-steps and 3.9 to 5 iterations a step. So every
   * member's jointed steps take generalized-alpha's error control by default
   * (DEFAULT_STEP_TOLERANCE, as at ρ∞ = 1: integrators/factory.ts): over 30 s the whip then
   * ends −0.55 J from its start, +0.66 J at the highest, at (0.3025, 0.6) and −0.96 J,
   * +0.16 J at (0.3, ½), at 2.0 sub-steps and 10 iterations a step, the cost of (¼, ½)'s
   * (test/engine/integrators/newmark-whip.test.ts). Its price: the estimate halves the first
   * steps of a servo's jump to its target, so the tests that write out a servo's recurrence
   * at h set stepTolerance null (newmark-servos.test.ts).
   *
   * At (¼, ½), before the symmetric joints: the velocity-level step below is not symmetric
   * in time: it holds
   * G v_{t+h} = −Ct, projects the positions after the step and carries the acceleration
   * matched to the projected end (file comment), and drained energy and spin at O(h³) a unit
   * time, silently: the four-bar example at 5 ms −0.240 J of its 1.06 J peak kinetic energy
   * by 100 s, a gyroscope's spin 200 → 198.8 rad/s in 120 s, a wheel at 100 rad/s on a
   * freely turning platform braked it from 2 to 1.32 rad/s in 30 s, a closed 10-link chain
   * 8.4e-3 of its peak kinetic energy in 40 s. The symmetric step keeps them (four-bar
   * 4.6e-3 of it, bounded, no drift; the spin within 1e-9 of itself, the platform's rate
   * within 1e-6 rad/s; the chain 1.6e-3:
   * test/engine/integrators/long-run), with generalized-alpha's error control (its default
   * stepTolerance) for the violent steps of an unresolved whip, where the old step relied
   * on its drain: the whip example at 1/240 s runs its 60 s (it failed at step 1581 without
   * the control), within 0.41 J of m g L = 9.81 J at stepTolerance 1e-4 m (3.0 sub-steps a
   * step) but +9.8 J by 60 s at the default 3e-4 m, as generalized-alpha's (a single step
   * gains 5.5 J near 49.7 s); 1e-4 m as the default lets an undamped compliant limit gain
   * 1.7 % of the rod's drop at 1/60 s (limit-switch.test.ts), where 3e-4 m gains nothing. Not for the linearized step (newtonIterations 1): the symmetric
   * joints are closed by Newton's iterations, with no projection after the step, and a
   * linearized one left the benchmark's 10-link chain open by 1.2e-5 m. Fem bodies keep it without
   * error control: their elements' modes are never resolved, and its estimate would halve
   * every step (integrators/factory.ts). The velocity-level joints with
   * the post-step projection (file comment) move the attached nodes of a fem body by the
   * step's drift against its elements: energy into modes the step does not resolve
   * (h ω ≈ 40 for E = 1e8 Pa, h = 5 ms) and the trapezoidal rule does not damp. A 4 kg block
   * on a hinged 1 kg link (the README's, released horizontal, 29 J of swing) took 0.65 J of
   * strain energy by 3.5 s (1e-4 J under generalized-alpha), Newton then took 15–18
   * iterations and halved most steps, and the swing lost 15.7 J by 10 s, energy.error
   * reporting all of it (nothing booked: the scheme has no numerical damping); with the
   * projection off (jointTolerance 1e-3) the loss stayed within 3e-3 J. Now 4.8e-3 J over
   * 10 s, no halving (test/engine/forces/fem/swing.test.ts).
   */
  private readonly alphaForm: GeneralizedAlphaIntegrator | null;
  private readonly vt: Float64Array;
  /** The compliant contacts' switches within a step (the constructor's `impacts`), or null. */
  private readonly switches: ContactSwitches | null;
  /** The running step's counts (set by `step`, added to by every sub-step). */
  private stats: StepStats = emptyStepStats();
  private readonly coeff = new SchemeCoefficients();
  /**
   * Velocity-level joints: the reactions and the memory's a_t made consistent with the
   * projected end state (AccelerationStepper.reactionsAtEnd; see the file comment).
   */
  private readonly end: EndConsistency;
  /** Position-level joints: the reactions only (a_t stays the step's own). */
  private readonly endReactions: EndConsistency = { coefficients: this.coeff, acceleration: null };
  /** startAcceleration's solve: one linear solve, the state held. */
  private readonly hold: NewtonSettings = { maxIterations: 1, tolerance: 0 };

  /**
   * @param newton Newton's budget and tolerance (apart from params: a record the kernels
   *   read must hold numbers only or be a class, see BodySystem on V8).
   * @param impacts compliant contacts, or null. The trapezoidal rule integrates a force
   *   that switches on or off inside the step as if it acted linearly over the whole step,
   *   which pumps energy into an impact the step does not resolve (contact-switch.ts). A
   *   step in which a contact starts or stops pushing while the step does not resolve its
   *   mode (h ω > 1) is halved, and the last halving (h/16) is redone with backward Euler
   *   from the same start (ContactSwitches.settle, as generalized-alpha's; unlike it, a
   *   solve the stepper keeps unconverged stands, as before); a persistent contact keeps the
   *   energy-conserving Newmark update (a_t after a backward-Euler sub-step is its end
   *   acceleration). It redid the whole step with backward Euler, whose numerical loss at
   *   h ω > 1 took most of an impact's energy: a ball dropped 1 m on an undamped contact
   *   (h ω = 1.58) rebounded to 0.093 m, now to 0.998 m, losing 0.77 % a bounce
   *   (test/engine/integrators/newmark-compliant.test.ts). The contacts' law changes at
   *   every step's start, where they are
   *   detected again (compliant.ts: a contact met in a step is damped from the next), so a
   *   step with contacts takes a_t again at its start with its own where the law changed
   *   (contact-switch.ts lawChanged): with the last step's, the damping d u_n missing from
   *   the start made the trapezoidal step's energy change −¼ h d u_{t+h} (u_t + u_{t+h}),
   *   positive where the contact turned the motion within the step (h ω > 1), and two
   *   hinged 1 kg links dropped onto a plane gained 0.87 J in steps where no contact
   *   switched (test/engine/integrators/alpha-compliant.test.ts).
   * @param memory the state record's: a_t in `acceleration`, a_{t−h} (a_t itself after a
   *   fresh initialAcceleration) in `previousAcceleration`; generalized-alpha's with
   *   `femBodies` at (¼, ½).
   * @param limitSwitches the compliant joint limits, or null: a step in which one switches
   *   is split at the switch (limit-switch.ts, `splitAt`).
   * @param femBodies the model has fem bodies (see `alphaForm`).
   */
  constructor(
    private readonly stepper: AccelerationStepper,
    public params: NewmarkParameters,
    private readonly newton: NewtonSettings,
    private readonly memory: IntegratorMemory,
    impacts: ImpactSource | null = null,
    private readonly limitSwitches: LimitSwitches | null = null,
    femBodies = false,
  ) {
    this.vt = new Float64Array(stepper.n);
    this.end = { coefficients: this.coeff, acceleration: memory.acceleration };
    this.switches = impacts === null ? null : new ContactSwitches(impacts);
    const { beta, gamma, rayleighMass, rayleighStiffness, stepTolerance, errorWeights } = params;
    const jointed = stepper.constraints !== null && newton.maxIterations > 1 && beta > 0;
    const trapezoidal = beta === 0.25 && gamma === 0.5;
    this.alphaForm =
      jointed || (femBodies && trapezoidal)
        ? new GeneralizedAlphaIntegrator(
            stepper,
            {
              rhoInfinity: 1,
              newmarkBeta: beta,
              newmarkGamma: gamma,
              stepTolerance: femBodies ? null : stepTolerance,
              errorWeights,
              rayleighMass,
              rayleighStiffness,
            },
            newton,
            memory,
            impacts,
            limitSwitches,
            "newmark",
          )
        : null;
  }

  /** The joints' post-step projection: none after the alpha form's symmetric joints. */
  get projectionOrder(): ProjectionOrder {
    return this.alphaForm !== null ? this.alphaForm.projectionOrder : "positions-first";
  }

  reset(): void {
    this.memory.invalidate();
  }

  /**
   * An input changed the applied forces at the step boundary (an actuator's command, a
   * point load): a_t, the acceleration the memory carries, is the last step's end's, under
   * the old forces, and the next step would weigh the old force in its start term
   * h²(½ − β) a_t, h(1 − γ) a_t (a torque stepped from 0 to τ by an input gave the joint
   * ½ h τ/I less rate for ever: 5e-3 of τ t/I after 0.1 s at 1 ms). The next step takes a_t
   * anew at the state under the new forces (initialAcceleration).
   */
  forcesChanged(): void {
    this.memory.accelerationValid = false;
  }

  /** Told of a split step's accepted sub-steps (Integrator; the energy balance). */
  substepObserver: SubstepObserver | null = null;

  /** Where the last failed trySingle asks its step split (HalvingStep; limit-switch.ts). */
  splitAt = 0;

  /** γ, or 1 for a step redone with backward Euler at a contact switch (backwardEuler). */
  private weight = 0.5;

  /** The weight of the end's forces in the last step (Integrator.forceWeight). */
  get forceWeight(): number {
    return this.alphaForm !== null ? this.alphaForm.forceWeight : this.weight;
  }

  step(t: number, h: number, stats: StepStats): void {
    this.stats = stats;
    const s = this.stepper;
    s.reactionsAtEnd = null;
    if (this.limitSwitches !== null) this.limitSwitches.stepSize = h;
    const alphaForm = this.alphaForm;
    if (alphaForm !== null) {
      // a memory from newmark's own steps (an older snapshot) holds a_t with the joints'
      // forces, not the free acceleration: taken anew
      if (!this.memory.pseudoValid) this.memory.accelerationValid = false;
      alphaForm.substepObserver = this.substepObserver;
      alphaForm.step(t, h, stats);
      s.decayVelocities(h, this.params.velocityDamping);
      return;
    }
    s.beginStepLead(h);
    stats.substeps = advanceWithHalving(this, t, h, this.newton, "newmark");
    // the reactions the state reports are the multipliers consistent with the end state,
    // after the joint projection, and at the velocity level a_t too (see the file comment)
    if (s.constraints !== null) {
      const c = this.coeff;
      c.rayleighMass = this.params.rayleighMass;
      c.rayleighStiffness = this.params.rayleighStiffness;
      s.reactionsAtEnd = this.positionLevel ? this.endReactions : this.end;
    }
  }

  /** Whether the joints are held at the position level (γ > ½ and β > 0; file comment). */
  private get positionLevel(): boolean {
    return this.params.gamma > 0.5 && this.params.beta > 0;
  }

  /** Puts the state back at the start of the step (advanceWithHalving). */
  restoreStart(): void {
    this.stepper.restoreStart(this.vt);
  }

  /**
   * One Newmark step of size h; false (nothing committed: a_t kept, the system left at the
   * last iterate) when its Newton iterations did not converge, or when a compliant contact
   * switched unresolved in it and a halving follows (`last` false; the constructor's
   * `impacts`).
   */
  trySingle(t: number, h: number, last: boolean): boolean {
    const stats = this.stats;
    const s = this.stepper;
    const { beta, gamma } = this.params;
    this.weight = gamma;
    this.splitAt = 0;
    const c = this.coeff;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    s.beginStep();
    const memory = this.memory;
    // a new memory: the start made consistent with the joints and motors first
    if (!memory.accelerationValid) s.consistentStart(t);
    getVelocity(s.sys, this.vt);
    const fresh = !memory.accelerationValid;
    if (fresh) this.initialAcceleration(t);
    // with compliant contacts, a_t under this step's contacts (see the constructor)
    const switches = this.switches;
    if (switches !== null && switches.begin() > 0 && !fresh) {
      this.startAcceleration(t);
      if (lawChanged(memory.acceleration, s.a)) memory.acceleration.set(s.a);
    }
    const { dxPred, vPred, a } = s;
    const vt = this.vt;
    const at = memory.acceleration;
    // (a_t and a_{t+h}, M a = f + Gᵀλ: the limits' free motion, limit-switch.ts)
    this.limitSwitches?.begin(at);
    // a snapshot without a_{t−h} (written before it was kept): the guess from a_t alone
    const aBefore = memory.previousValid ? memory.previousAcceleration : at;
    // Joint rows at the position level with numerical damping, and with joints Newton's
    // first iterate then at the mean of the last two accelerations; otherwise at the
    // velocity level from a_t (see the file comment).
    const positionLevel = this.positionLevel;
    const mean = positionLevel && s.constraints !== null ? 0.5 : 0;
    for (let i = 0; i < s.n; i++) {
      dxPred[i] = h * vt[i] + 0.5 * h * h * (1 - 2 * beta) * at[i];
      vPred[i] = vt[i] + h * (1 - gamma) * at[i];
      a[i] = at[i] + mean * (aBefore[i] - at[i]);
    }
    c.cx = h * h * beta;
    c.cv = h * gamma;
    c.w = 1;
    c.positionLevel = positionLevel;
    // the servos the step does not resolve with the weight 1 in v_{t+h} − v_t, where a_t
    // (M a_t = f_t) gives the others (1 − γ): ε = (1 − γ)/γ on their change over the step
    // (AccelerationStepper.holdStiffForces), their share taken out of the memory again in
    // commit; the share the predictors lose is the constrained one, P M⁻¹ f_s(t), as a_t
    // holds the joints' reaction to it (AccelerationStepper.shiftStiffStart). With the
    // joints at the position level too (γ > ½): left to the scheme's weights there, an
    // unresolved servo rang at Newmark's h ω-scaled rates, damped by only ρ∞ = 0.82 a step
    // at (0.3025, 0.6): the rod hinged at its centre (k_p = 1e8, 0.3 rad) at up to
    // 1.5e5 rad/s, 7.2e8 J of kinetic energy where the command holds ½ k_p q*² = 4.5e6 J
    // (now 9.7 J, as at γ = ½), and the 3-link servo chain peaked at 1.2e7 J (k_p = 1e8) and
    // 5.9e10 J (1e10) with energy.error 4.3e7 J and 1.0e11 J (now 3.3e3 J, 36 J and 38 J)
    s.holdStiffForces(t, h, c, (1 - gamma) / gamma);
    // in the step's halvings, the whole step's lead where none resolves them
    s.keepStepLead(h);
    // and κ a_t of x_{t+h} = x_t + h v_t + μ (v_{t+h} − v_t) + κ a_t, κ = h² (½ − β/γ),
    // taken out along the servos' force, where it held ~k_p times their error at β ≠ γ/2
    // (shiftStiffStart (3))
    s.shiftStiffStart(c, at, h * h * (0.5 - beta / gamma));
    s.linearIterations = 0;
    // the step-error test (solver.newtonTolerance unset): Zienkiewicz & Xie's local error
    // |β − 1/6| h² ‖a_{t+h} − a_t‖∞ against c_x = β h² (acceleration-step.ts, `solve`); at
    // β = 0 (the central difference) Newton's error leaves the positions alone and moves the
    // velocities by γ h ‖Δa‖, hence the next step's positions by γ h² ‖Δa‖: against that
    const scale = beta > 0 ? beta : gamma;
    const errorRatio = scale > 0 ? Math.abs(beta - 1 / 6) / scale : 0;
    stats.newtonIterations += s.solve(c, t + h, this.newton, at, errorRatio);
    stats.linearIterations += s.linearIterations;
    if (s.mustRedo) return false;
    // a contact switched unresolved: halved while a halving follows, the last halving
    // backward Euler (contact-switch.ts; the constructor). A solve the stepper kept
    // unconverged stands, as it did (stats.newtonConverged false)
    const redo = this.switches?.settle(this, true, t, h, last) ?? null;
    if (redo !== null) return redo;
    // a compliant limit switched within the step: split there while a halving follows
    if (!last && this.limitSwitches !== null) {
      this.splitAt = this.limitSwitches.splitFraction(h, s.a);
      if (this.splitAt > 0) return false;
    }
    return this.commit(t, h);
  }

  /**
   * The step from t of h again from its start (restored) with backward Euler, at a
   * compliant contact's unresolved switch on the last halving (ContactSwitches.settle):
   * Δx_pred = h v_t, v_pred = v_t, c_x = h², c_v = h, the joints held as in the step (the
   * coefficients' level). Its end acceleration M⁻¹ f(x_{t+h}, v_{t+h}) is the next a_t.
   * False when Newton did not converge and the stepper does not keep it.
   */
  backwardEuler(t: number, h: number): boolean {
    const stats = this.stats;
    const s = this.stepper;
    const { dxPred, vPred, a } = s;
    const vt = this.vt;
    for (let i = 0; i < s.n; i++) {
      dxPred[i] = h * vt[i];
      vPred[i] = vt[i];
      a[i] = 0;
    }
    const c = this.coeff;
    c.cx = h * h;
    c.cv = h;
    s.holdStiffForces(t, h, c, 0);
    s.linearIterations = 0;
    stats.newtonIterations += s.solve(c, t + h, this.newton);
    stats.linearIterations += s.linearIterations;
    if (s.mustRedo) return false;
    this.weight = 1;
    return this.commit(t, h);
  }

  /**
   * A solved step from t of h kept: its a_{t+h} the next a_t (less the unresolved servos'
   * extra share, constrained as a_t is: AccelerationStepper.removeStiffShare), the velocity
   * decay.
   */
  private commit(t: number, h: number): true {
    const s = this.stepper;
    const memory = this.memory;
    this.stats.newtonConverged &&= s.newtonConverged;
    memory.previousAcceleration.set(memory.acceleration);
    memory.acceleration.set(s.a);
    s.removeStiffShare(this.coeff, t + h, memory.acceleration, true);
    memory.previousValid = true;
    s.decayVelocities(h, this.params.velocityDamping);
    return true;
  }

  /**
   * a_t from M a = f(x_t, v_t) − (r_M M + r_K K) v_t (with the joints' multipliers): the
   * scheme with c_x = c_v = 0, so the state stays at (x_t, v_t) while the residual is driven
   * to zero; into the stepper's `a`.
   */
  private startAcceleration(t: number): void {
    const s = this.stepper;
    const { rayleighMass, rayleighStiffness } = this.params;
    s.solve(s.holdState(this.vt, rayleighMass, rayleighStiffness), t, this.hold);
  }

  /** A new memory: a_t (startAcceleration), and a_{t−h} = a_t. */
  private initialAcceleration(t: number): void {
    this.startAcceleration(t);
    const memory = this.memory;
    memory.acceleration.set(this.stepper.a);
    memory.previousAcceleration.set(memory.acceleration);
    memory.accelerationValid = true;
    memory.previousValid = true;
  }
}
