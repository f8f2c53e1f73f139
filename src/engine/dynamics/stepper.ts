/**
 * What the one-step problems (contacts, joint limits: src/engine/contact, src/engine/actuators) need of the
 * integrators' Newton stepper, declared below both so that they depend on this interface and
 * not on the integrators (src/engine/integrators/acceleration-step.ts implements it): the scheme's
 * coefficients of one solve, the iteration matrix W and solves with W with the joints held.
 */
import type { ForceEffector } from "../forces/effector";
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { BlockLdlt } from "../solvers/linear/block-ldlt";

/**
 * Coefficients of one scheme for one solve (see the file comment): Δx = Δx_pred + c_x a,
 * v = v_pred + c_v a, end-of-step forces weighted by w. The integrator that owns it sets
 * the fields before each solve. A class whose number fields start as doubles (−0), so
 * that every integrator's coefficients share one stable map (see BodySystem on V8).
 */
export class SchemeCoefficients {
  cx = -0;
  cv = -0;
  /** Weight w of the end-of-step forces (0 explicit, θ, 1 fully implicit). */
  w = -0;
  rayleighMass = -0;
  rayleighStiffness = -0;
  /**
   * Joint rows at the position level (index 3, requires c_x > 0): each Newton iteration
   * asks C(x) + G c_x Δa = 0 at its iterate x instead of G (v + c_v Δa) = −Ct (see
   * `solveIteration`). Default false (velocity level).
   */
  positionLevel = false;
  /**
   * Joints in the symmetric (RATTLE-type) form of generalized-alpha.ts: the position rows
   * C(x_{t+h}) = 0 are held by a force ρ M M_t⁻¹ G_tᵀ λ̃ along the directions of the step's
   * START configuration (acting on x with weight c_x ρ = h²/2 and on v with weight
   * startVelocityWeight), and the velocities are projected onto G v = −Ct at the end
   * configuration, in the mass metric, at every iterate. Requires positionLevel.
   */
  symmetricJoints = false;
  /** ρ of symmetricJoints (dimensionless). */
  startForceWeight = -0;
  /** κ of symmetricJoints (s): v = v_pred + c_v a + κ M_t⁻¹ G_tᵀ λ̃ before the projection. */
  startVelocityWeight = -0;
  /**
   * symmetricJoints: the weight (s) of the start's applied torques in the turning bodies'
   * angular momentum balance (AccelerationStepper.momentumRows), h − c_v w: the part of the
   * trapezoid not at the end (the θ-schemes' (1 − w) f_t, generalized-alpha's memory).
   */
  startTorqueWeight = -0;
  /**
   * symmetricJoints: the turning rigid bodies' rotational rows are written in angular
   * momentum (AccelerationStepper.momentumRows; set by beginStartDirections), and W's
   * gyroscopic blocks are that form's (GyroscopicEffector.addMomentumJacobian).
   */
  momentumRows = false;
  /**
   * Whether the scheme reads the end's free angular accelerations after its solve
   * (AccelerationStepper.endFreeRates: generalized-alpha's memory A_{n+1}), which Newton then
   * evaluates at the accepted iterate (AccelerationStepper `iterate`).
   */
  endRates = false;
  /**
   * The trapezoidal rule's step (θ = w = ½, theta-scheme.ts): the rotation of the free rigid
   * bodies (no joint) is the implicit midpoint rule on Euler's equations, their gyroscopic
   * torque at the mean rate (AccelerationStepper.holdStartForces, meanRateResidual).
   */
  meanRates = false;
  /**
   * The weight ε added to the end-of-step forces of the effectors in `stiffForces` (the
   * servos the step does not resolve, AccelerationStepper.holdStiffForces): R gains
   * ε (f_s(x_{t+h}, v_{t+h}) − f_s(x_t, v_t)) and W their Jacobians with (w + ε) c_x and
   * (w + ε) c_v, so that their weight in the velocity update is 1 (backward Euler) where the
   * scheme's is w_v < 1: ε = 1 − w for the θ-schemes, (1 − w_v)/w_v for newmark and
   * generalized-alpha (w = 1, a memory consistent with the forces at t). 0: none.
   */
  stiffWeight = -0;
  /**
   * Whether Newton takes those servos' turning and rates into its matrix only where the
   * plain one contracts slowly (generalized-alpha; AccelerationStepper SLOW_CONTRACTION),
   * rather than in every solve with them (the θ-schemes and newmark).
   */
  stiffTermsOnDemand = false;
  /**
   * The effectors ε weighs (see stiffWeight), chosen at the step's start; with ε = 0 and
   * stiffTermsOnDemand (generalized-alpha at ρ∞ < 1), those Newton takes into its fuller
   * matrix and its servo test alone (AccelerationStepper.holdStiffForces).
   */
  readonly stiffForces: ForceEffector[] = [];
}

/** The Newton stepper as a one-step problem sees it. */
export interface NewtonStepper {
  /** W = c_M M + c_D D − c_K K (block sparse) at the last assembly */
  readonly matrix: SparseBlockMatrix;
  /** Assembles W at the current state into `matrix`. */
  assembleIterationMatrix(c: SchemeCoefficients): void;
  /** True when W is the (scaled) block-diagonal mass matrix. */
  usesMassOnly(c: SchemeCoefficients): boolean;
  /**
   * out = the acceleration change caused by the generalized force `rhs` (N, N·m) with the
   * bilateral constraints (joints) held: Δa = W⁻¹ rhs restricted to G Δa = 0.
   */
  solveConstrained(c: SchemeCoefficients, rhs: Float64Array, out: Float64Array): void;
  /**
   * W's block LDLᵀ factorization, so that W⁻¹ of `rightHandSides` sparse right-hand sides
   * needs no solve each (the contact Delassus build, contact/ldlt-delassus.ts); null (or
   * absent) where there is none or it would cost more than the solves: joints held, W the
   * mass matrix, W not solved by factored PCG.
   */
  exactFactorization?(c: SchemeCoefficients, rightHandSides: number): BlockLdlt | null;
}

/**
 * A force effector whose solve-matrix blocks change from step to step (compliant contact:
 * its body pairs are the contacts detected at the start of each step). The stepper calls
 * `beginStep()` from its own beginStep (configuration at t), then `addSolveBlocks` again
 * and `matrix.finalize()`. Reserving a new block bumps the matrix's structureVersion and
 * makes toCsr() build a new CSR object, so the linear solvers (which compare patterns)
 * redo their symbolic analysis only when the pattern really changed. Blocks are never
 * released: the pattern is the union over the steps.
 */
export interface DynamicStructureEffector extends ForceEffector {
  readonly dynamicStructure: true;
  beginStep(): void;
}

export function hasDynamicStructure(e: ForceEffector): e is DynamicStructureEffector {
  return (e as Partial<DynamicStructureEffector>).dynamicStructure === true;
}
