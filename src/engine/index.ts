/**
 * The engine's public entry. The service, the tests and any embedding program use the
 * engine only through this module.
 *
 *   const sim = loadModel(json);   // validates with schemas/model (throws ModelError)
 *   sim.step(100);                 // advances 100 steps of solver.dt (DivergenceError on blow-up)
 *   sim.state();                   // State (schemas/state)
 *   sim.reset();                   // back to t = 0 as loaded
 *   sim.assemble(options);         // AssemblyResult (Chrono ChAssemblyAnalysis semantics)
 *   const snap = sim.snapshot();   // JSON-safe, versioned (schemas/snapshot)
 *   loadSnapshot(snap);            // a Simulation that continues bit-identically (SnapshotError)
 *   sim.schedule(inputs, step);    // run-time inputs (schemas/input) at a step boundary (InputError)
 *   recordingOf(sim);              // the inputs since the start (schemas/recording); replayRecording
 */
import { SnapshotError } from "./model/state-codec";
import { buildSimulation } from "./simulation/build";
import { deepFreeze } from "./simulation/json-values";
import type { Simulation } from "./simulation/simulation";
import { parseSnapshot, type SimulationSnapshotSpec, verifyChecksum } from "./simulation/snapshot";

/** Generalized-α's error control as a model's settings give it (the default rule). */
export { defaultStepTolerance } from "./integrators/generalized-alpha";
export { SnapshotError, type SnapshotIssue } from "./model/state-codec";
export { buildSimulation, loadModel, ModelError, type ModelIssue } from "./simulation/build";
export {
  parseRecording,
  RecordingError,
  recordingOf,
  replayRecording,
  replayStates,
} from "./simulation/recording";
export {
  DivergenceError,
  InputError,
  ParameterError,
  Simulation,
  type SimulationPatch,
  SolverError,
} from "./simulation/simulation";
export type { SimulationSnapshotSpec } from "./simulation/snapshot";
/** The wall-clock limit of a step, checked inside the solvers' loops (src/engine/solvers/deadline.ts). */
export { clearDeadline, DeadlineExceeded, setDeadline } from "./solvers/deadline";

/**
 * Validates a snapshot (schemas/snapshot.ts) and returns the Simulation it describes, at
 * its time and step with its solver memory. Throws SnapshotError (issue paths from the
 * snapshot's root) when it is invalid or does not fit its own model. `admit`, when given,
 * sees the validated snapshot before its model is built and may refuse it by throwing
 * (what it throws propagates): a server's memory admission refuses a model too large for
 * its worker without paying for its build.
 */
export function loadSnapshot(
  json: unknown,
  admit?: (snap: SimulationSnapshotSpec) => void,
): Simulation {
  const snap = parseSnapshot(json);
  admit?.(snap);
  let sim: Simulation;
  try {
    // frozen as loadModel's (build.ts): the snapshot's model is the parsed copy
    sim = buildSimulation(deepFreeze(snap.model));
  } catch (err) {
    throw new SnapshotError([{ path: ["model"], message: (err as Error)?.message ?? String(err) }]);
  }
  sim.restoreSnapshot(snap);
  // last: a field that does not fit (a state array of the wrong length, an unknown actuator
  // in controls) is named by its own check; the checksum can only say that something
  // changed, and answered "checksum" for those too
  verifyChecksum(json);
  return sim;
}
