/**
 * The engine's pieces of a model in the JSON format (e.g. from the generators of
 * models.ts), for the tests below the Simulation (constraints, projections, assembly):
 * validated and built as loadModel builds them, so the bodies are those a simulation of the
 * model steps (defaults filled in, principal inertias as 3×3 matrices).
 */
import type { ModelInput, ModelSpec } from "../../schemas/model";
import type { BodySystem } from "../../src/engine/model/body-system";
import { loadModel } from "../../src/engine/simulation/build";

/**
 * The body system of `model` at t = 0 and the validated model (its joints and motors, for
 * createConstraints). The system is the one a Simulation was built on: it is the caller's
 * to move; the simulation itself is dropped.
 */
export function modelSystem(model: ModelInput): { system: BodySystem; spec: ModelSpec } {
  const sim = loadModel(model);
  return { system: sim.system, spec: sim.model };
}
