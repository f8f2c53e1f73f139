/**
 * The one place an integrator is chosen from the solver settings (solver.integrator and
 * its parameters):
 *   newmark            NewmarkIntegrator (SOFA's NewmarkImplicitSolver, Rayleigh damping;
 *                      β, γ by default as the step resolves the springs: resolution.ts)
 *   generalized-alpha  GeneralizedAlphaIntegrator (Chung–Hulbert, ρ∞)
 *   articulated        ArticulatedIntegrator (joint coordinates, Tsitouras' 5(4) pair with
 *                      error control; trees of rigid bodies, compliant contact as a force)
 *   moreau-jean, backward-euler, symplectic-euler
 *                      the θ-method of Moreau–Jean with θ, forceWeight: (θ, θ), (1, 1),
 *                      (1, 0); a MoreauJeanIntegrator over the one-step nonsmooth problem
 *                      when the model has one (nonsmooth contact, nonsmooth joint limits,
 *                      or both coupled), else the smooth ThetaScheme.
 * Contact and joint limits plug in through what they are: a compliant contact effector
 * (Newmark evaluates it at the predictor), one-step problems (the velocity-level schemes).
 */
import type { SolverSpec } from "../../../schemas/model";
import type { CompliantJointLimit } from "../actuators/joint-limit";
import type { JointLimitProblem } from "../actuators/limit-problem";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import type { CompliantContactEffector } from "../contact/compliant";
import type { NonsmoothContact } from "../contact/nonsmooth-contact";
import type { ArticulatedTree } from "../dynamics/articulated-body";
import { CoupledProblems } from "../dynamics/one-step-problem";
import { type AccelerationStepper, DEFAULT_NEWTON_TOLERANCE } from "./acceleration-step";
import { ARTICULATED_STEP_TOLERANCE, ArticulatedIntegrator } from "./articulated";
import { DEFAULT_RHO_INFINITY, GeneralizedAlphaIntegrator, stepControl } from "./generalized-alpha";
import type { Integrator, IntegratorMemory } from "./integrator";
import { LimitSwitches } from "./limit-switch";
import { MoreauJeanIntegrator } from "./moreau-jean";
import { NEWMARK_STEP_ERROR, NewmarkIntegrator } from "./newmark";
import { newmarkParameters, UNRESOLVED_H_OMEGA } from "./resolution";
import { ThetaScheme } from "./theta-scheme";

/** solver.theta unset: ½, Moreau–Jean's trapezoidal weighting (second order on smooth motion). */
const DEFAULT_THETA = 0.5;

/** The parts of a model an integrator steps besides the stepper's forces and joints. */
export interface IntegratorParts {
  /** contact.method "smc" */
  compliant: CompliantContactEffector | null;
  /** contact.method "nsc" */
  nonsmooth: NonsmoothContact | null;
  /** joint limits as impacts (velocity-level schemes) */
  limits: JointLimitProblem | null;
  /** the compliant joint limits (newmark, generalized-alpha split their steps at a switch) */
  compliantLimits: readonly CompliantJointLimit[];
  /** the stiffest spring's ω = √(k/m) (rad/s; resolution.ts), which newmark's defaults follow */
  springFrequency: number;
  /**
   * A spring network's ω_max bound (rad/s; resolution.ts springNetworkFrequencyBound) or
   * null, which newmark's defaults also follow
   */
  networkFrequency: number | null;
  /**
   * Whether the model has fem bodies: their highest modes (ω ≈ 2c/Δx, c = √(E/ρ)) are never
   * resolved at a practical step, so a scheme that does not damp them keeps the plain
   * Newton test (see createIntegrator).
   */
  femBodies: boolean;
  /**
   * Each body's jointed group's body length (m, by body index; generalized-alpha.ts
   * bodyLengths), to which the default stepTolerance of newmark's jointed steps,
   * generalized-alpha's and the θ-schemes' is scaled, group by group (stepControl).
   */
  bodyLengths: Float64Array;
  /**
   * The joint tree the articulated integrator steps (built on first use: a model that
   * never chooses it needs none), the joints and their multipliers, where it writes the
   * reactions.
   */
  articulated: {
    tree: () => ArticulatedTree;
    constraints: ConstraintSet;
    lambda: Float64Array;
    /**
     * The dissipative forces' power (W) at time t and the current state less the rate of
     * their stored functions Φ, and Σ Φ (J) (StepWork.forcePower, storedEnergy), or null:
     * none.
     */
    power: ((t: number) => number) | null;
    stored: ((t: number) => number) | null;
    /** The revolute joints' angle coordinates, which it tells the angles it steps. */
    angles: readonly JointCoordinate[];
  };
}

export function createIntegrator(
  /** The settings with the problem's defaults filled in (simulation/solver-defaults.ts). */
  p: SolverSpec & {
    tolerance: number;
    projectOnConstraints: boolean;
    newtonIterations: number;
    jointTolerance: number;
  },
  stepper: AccelerationStepper,
  parts: IntegratorParts,
  /**
   * The state record's integrator memory, which newmark, generalized-alpha, articulated and
   * the θ-schemes (their last step's mean acceleration) step.
   */
  memory: IntegratorMemory,
): Integrator {
  const newmark = newmarkParameters(p, p.dt, parts.springFrequency, parts.networkFrequency);
  const rhoInfinity = p.rhoInfinity ?? DEFAULT_RHO_INFINITY;
  // Newmark's step-error test (newmark.ts) measures Newton's error against |β − 1/6| h²
  // ‖a_{t+h} − a_t‖∞, the local error of a motion the step resolves. A mode it does not
  // resolve (h ω ≫ 1) enters that estimate with (h ω)² times its amplitude, so the error
  // Newton may leave exceeds what the mode holds, excites it, and the test loosens with
  // it; a scheme that damps such modes (newmark γ > ½, generalized-alpha ρ∞ < 1) takes that
  // error out, the non-dissipative ones keep it. A fem block (3 × 2 × 2 cells, E = 1e8 Pa,
  // h = 5 ms, the fem benchmark's step and modulus) spinning at 10 rad/s, a motion the step
  // resolves (h ω = 0.05), gained 150 times its energy in 10 s under the trapezoidal rule
  // and ended diverged, every step converged (generalized-alpha at ρ∞ = 1: 8 times in
  // 20 s); Newton to 1e-10 keeps it to 2e-3. So those schemes keep the plain test with fem
  // bodies (test/engine/forces/fem/spin.test.ts), and with a spring the step does not
  // resolve (h √(k/m) > 1, resolution.ts): a spinning lattice of k = 1e5 N/m springs
  // (h ω ≈ 24) gained 65 % of its energy in 20 s at ρ∞ = 1 and 4e13 times it under the
  // trapezoidal rule set by hand, no step flagged; with the plain test 3.6 % and ±47 %
  // (the trapezoidal rule's own nonlinear instability; test/engine/integrators/
  // factory.test.ts). Newmark's defaults damp an unresolved spring (resolution.ts).
  const undampedUnresolved =
    (parts.femBodies || p.dt * parts.springFrequency > UNRESOLVED_H_OMEGA) &&
    ((p.integrator === "newmark" && newmark.gamma <= 0.5) ||
      (p.integrator === "generalized-alpha" && rhoInfinity >= 1));
  // solver.newtonTolerance unset: 1e-10 and, but for undampedUnresolved, the step-error test
  const newton = {
    maxIterations: p.newtonIterations,
    tolerance: p.newtonTolerance ?? DEFAULT_NEWTON_TOLERANCE,
    stepErrorFraction: p.newtonTolerance == null && !undampedUnresolved ? NEWMARK_STEP_ERROR : 0,
    linearTolerance: p.linearTolerance,
    linearIterations: p.linearIterations,
  };
  // the central difference's Newton iterations leave the positions where the step put them
  stepper.setPositionsHeld(p.integrator === "newmark" && newmark.beta === 0);
  const limitSwitches =
    parts.compliantLimits.length > 0 &&
    (p.integrator === "newmark" || p.integrator === "generalized-alpha")
      ? new LimitSwitches(parts.compliantLimits)
      : null;
  switch (p.integrator) {
    case "newmark":
      return new NewmarkIntegrator(
        stepper,
        {
          ...newmark,
          rayleighMass: p.rayleighMass,
          rayleighStiffness: p.rayleighStiffness,
          velocityDamping: p.velocityDamping,
          // the error control on by default for every member's jointed steps, as
          // generalized-alpha's at ρ∞ = 1: they hold the joints symmetrically whatever
          // (β, γ), damping nothing along them (newmark.ts `alphaForm`)
          ...stepControl(p.stepTolerance, 1, parts.bodyLengths),
        },
        newton,
        memory,
        parts.compliant,
        limitSwitches,
        parts.femBodies,
      );
    case "generalized-alpha":
      return new GeneralizedAlphaIntegrator(
        stepper,
        {
          rhoInfinity,
          ...stepControl(p.stepTolerance, p.rhoInfinity, parts.bodyLengths),
          rayleighMass: p.rayleighMass,
          rayleighStiffness: p.rayleighStiffness,
        },
        newton,
        memory,
        parts.compliant,
        limitSwitches,
      );
    case "articulated": {
      const { tree, constraints, lambda, power, stored, angles } = parts.articulated;
      return new ArticulatedIntegrator(
        tree(),
        stepper,
        constraints,
        lambda,
        power,
        stored,
        parts.compliant,
        {
          stepTolerance:
            p.stepTolerance === undefined ? ARTICULATED_STEP_TOLERANCE : p.stepTolerance,
        },
        memory,
        angles,
      );
    }
  }
  const control = stepControl(p.stepTolerance, 1, parts.bodyLengths);
  const shared = {
    rayleighMass: p.rayleighMass,
    rayleighStiffness: p.rayleighStiffness,
    velocityDamping: p.velocityDamping,
    // their error control (theta-scheme.ts tooCoarse, moreau-jean.ts leadTooCoarse):
    // solver.stepTolerance in metres as generalized-alpha's, left out its default at ρ∞ = 1
    // (their smooth step at θ = ½ being that scheme's), null off (an infinite tolerance:
    // the estimates are still made, for the reactions and stats.stepError)
    stepTolerance: control.stepTolerance ?? Number.POSITIVE_INFINITY,
    errorWeights: control.errorWeights,
  };
  const theta =
    p.integrator === "moreau-jean"
      ? { theta: p.theta ?? DEFAULT_THETA, forceWeight: p.theta ?? DEFAULT_THETA, ...shared }
      : { theta: 1, forceWeight: p.integrator === "backward-euler" ? 1 : 0, ...shared };
  const { nonsmooth: contact, limits } = parts;
  const problem =
    contact && limits
      ? new CoupledProblems(contact, limits, stepper.n, p.tolerance)
      : (contact ?? limits);
  if (problem === null)
    return new ThetaScheme(p.integrator, stepper, theta, newton, memory, parts.compliant);
  return new MoreauJeanIntegrator(
    p.integrator,
    stepper,
    { ...theta, projectOnConstraints: p.projectOnConstraints, jointTolerance: p.jointTolerance },
    newton,
    memory,
    problem,
    contact,
    limits,
    parts.compliant,
  );
}
