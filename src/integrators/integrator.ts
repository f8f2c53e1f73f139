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

export interface Integrator {
  readonly name: IntegratorName;
  /** Advances the system from t to t + h (s). */
  step(t: number, h: number): StepStats;
  /** Forgets step memory (e.g. Newmark's a_t) after a reset or an external state change. */
  reset(): void;
  getIntegrationFactor(input: DerivativeOrder, output: DerivativeOrder, h: number): number;
  getSolutionIntegrationFactor(output: DerivativeOrder, h: number): number;
}
