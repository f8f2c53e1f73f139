/**
 * Whether a model's energy is accounted, which decides two things of the wire format:
 * whether State.energy.error and energy.dissipated are reported (null otherwise), and
 * whether solver.energyDriftLimit is valid (a limit that could never act is rejected at
 * model validation, schemas/model.ts, and on PATCH, Simulation.update). The energy monitor
 * that keeps the balance is src/engine/simulation/monitor.ts.
 *
 * A model's energy is accounted when every change of its total energy other than the
 * integrator's and the projections' is a work the engine measures: the dampers, the spring
 * and frameSpring damping, solver.rayleighMass, solver.velocityDamping (the kinetic energy
 * its decay takes out), the impulses of nonsmooth contact and of joint limits under the
 * velocity-level integrators (their work on the step's mean velocity), the compliant joint
 * limits of newmark and generalized-alpha (their elastic energy in the potential, their
 * damping's power), point forces and actuators (their work rates, energy put in), and the
 * motors (their constraint force's work: −λᵀ ∂C/∂t at the step's ends with newmark and
 * generalized-alpha, whose multipliers are the end-of-step forces; h λᵀ G v̄ over the step
 * with the θ-schemes, whose multipliers act over it). Not accounted: compliant contact
 * ("smc": its damping's power is not evaluated) and solver.rayleighStiffness (its force
 * follows the tangent stiffness, whose power the engine does not evaluate).
 *
 * Pure functions over validated model pieces (no engine state), so that both the model
 * schema and the engine use them.
 */
import type { SolverSpec } from "./model";

/** The parts of a model that decide whether its energy is accounted. */
export interface EnergyAccountInput {
  contact?: { method?: string } | null;
}

/** The solver parameters that decide it. */
export type SolverDamping = Pick<SolverSpec, "rayleighStiffness">;

/**
 * Why the energy of the model with these solver settings is not accounted (the first reason
 * found, naming the force, motor or setting), or null when it is (see the header).
 */
export function unaccountedEnergyReason(
  model: EnergyAccountInput,
  solver: SolverDamping,
): string | null {
  if (model.contact?.method === "smc")
    return 'the model has compliant contact ("smc": its damping\'s work is not measured)';
  if (solver.rayleighStiffness !== 0)
    return `solver.rayleighStiffness is ${solver.rayleighStiffness}`;
  return null;
}

/** The validation message for an energyDriftLimit on a model whose energy is not accounted. */
export function energyLimitMessage(reason: string): string {
  return `energyDriftLimit needs a model whose energy is accounted (energy.error is null otherwise, so the limit could never act), but ${reason}`;
}
