/**
 * The integrator interface. Like SOFA's OdeSolver, each integrator states its
 * integration factors, which constraint and contact corrections use to turn a change of
 * the solved-for unknown into changes of position and velocity at the end of the step.
 *
 * Derivative orders: 0 = position, 1 = velocity, 2 = acceleration.
 *   getIntegrationFactor(i, o): ∂(output of order o at t+h) / ∂(input of order i at t)
 *   getSolutionIntegrationFactor(o): ∂(output of order o at t+h) / ∂(the unknown solved)
 * E.g. Newmark solves for a_{t+h}: solution factors (h²β, hγ, 1) for o = (0, 1, 2).
 */
export type DerivativeOrder = 0 | 1 | 2;

export type IntegratorName = "moreau-jean" | "newmark" | "backward-euler" | "symplectic-euler";

export interface StepStats {
  newtonIterations: number;
  linearIterations: number;
  contactIterations: number;
  contactResidual: number;
}

/**
 * Step memory an integrator carries from one step to the next, which a snapshot must keep
 * for the continuation to be bit-identical (src/simulation/snapshot.ts). Arrays are
 * generalized vectors (size numDofs, translational then rotational dofs per body).
 */
export interface IntegratorMemory {
  /** Newmark: a_t (m/s², rad/s²), the acceleration the next step's predictor uses. */
  acceleration?: Float64Array;
  /** Newmark: a_t is valid (false after a reset or a PATCH: it is then recomputed). */
  accelerationValid?: boolean;
}

export interface Integrator {
  readonly name: IntegratorName;
  /** The step memory (a copy), for snapshots; integrators without memory omit it. */
  saveMemory?(): IntegratorMemory;
  /** Restores memory from saveMemory() of an integrator of the same kind and size. */
  restoreMemory?(memory: IntegratorMemory): void;
  /** Advances the system from t to t + h (s), writing the step's iteration counts to stats. */
  step(t: number, h: number, stats: StepStats): void;
  /** Forgets step memory (e.g. Newmark's a_t) after a reset or an external state change. */
  reset(): void;
  getIntegrationFactor(input: DerivativeOrder, output: DerivativeOrder, h: number): number;
  getSolutionIntegrationFactor(output: DerivativeOrder, h: number): number;
}
