/**
 * Whether a model is conservative, which decides two things of the wire format: whether
 * State.energy.error is reported (null otherwise), and whether solver.energyDriftLimit is
 * valid (a limit on a non-conservative model could never act, so it is rejected at model
 * validation, schemas/model.ts, and on PATCH, Simulation.update). The energy monitor that
 * measures the drift is src/engine/simulation/monitor.ts.
 *
 * A model is conservative when nothing adds or removes energy but the integrator and the
 * joint projection: no damper, no spring or frameSpring damping, no motor (a prescribed
 * motion does work), no actuator, no joint limit, no contact, no pointForce (its work is not
 * in the potential), and solver rayleighMass = rayleighStiffness = velocityDamping = 0.
 *
 * Pure functions over validated model pieces (no engine state), so that both the model
 * schema and the engine use them.
 */
import type { ForceSpec, SolverSpec } from "./model";

/** The parts of a model that decide whether it is conservative. */
export interface ConservativenessInput {
  forces: readonly ForceSpec[];
  motors: readonly { id: string }[];
  actuators: readonly { id: string }[];
  joints: readonly { id: string; limits?: unknown }[];
  contact?: unknown;
}

/** The solver parameters that decide it. */
export type SolverDamping = Pick<
  SolverSpec,
  "rayleighMass" | "rayleighStiffness" | "velocityDamping"
>;

/**
 * Why the model with these solver settings is not conservative (the first reason found,
 * naming the force, motor or field), or null when it is.
 */
export function nonConservativeReason(
  model: ConservativenessInput,
  solver: SolverDamping,
): string | null {
  for (let i = 0; i < model.forces.length; i++) {
    const f = model.forces[i];
    const at = `(forces.${i})`;
    switch (f.type) {
      case "damper":
        return `force "${f.id}" ${at} is a damper`;
      case "spring":
        if (f.damping > 0) return `spring "${f.id}" ${at} has damping ${f.damping}`;
        break;
      case "frameSpring":
        if (f.damping > 0 || f.rotaryDamping > 0) return `frameSpring "${f.id}" ${at} has damping`;
        break;
      case "pointForce":
        return `pointForce "${f.id}" ${at} does work that is not in the potential energy`;
    }
  }
  if (model.motors.length > 0)
    return `motor "${model.motors[0].id}" (motors.0) prescribes a motion, which does work`;
  if (model.actuators.length > 0)
    return `actuator "${model.actuators[0].id}" (actuators.0) does work`;
  const limited = model.joints.findIndex((j) => j.limits !== undefined);
  if (limited >= 0)
    return `joint "${model.joints[limited].id}" (joints.${limited}) has limits (their damping absorbs energy)`;
  if (model.contact !== undefined && model.contact !== null)
    return "the model has contact (impacts, friction and contact damping change the energy)";
  for (const name of ["rayleighMass", "rayleighStiffness", "velocityDamping"] as const)
    if (solver[name] !== 0) return `solver.${name} is ${solver[name]}`;
  return null;
}

/** The validation message for an energyDriftLimit on a model that is not conservative. */
export function energyLimitMessage(reason: string): string {
  return `energyDriftLimit needs a conservative model (energy.error is null otherwise, so the limit could never act), but ${reason}`;
}
