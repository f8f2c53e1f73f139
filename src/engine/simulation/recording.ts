/**
 * Recordings (schemas/recording.ts): written from a simulation's log (Simulation
 * .recording), replayed into a new simulation whose steps reproduce the recorded run bit
 * for bit (same model, same start, the same inputs and patches at the same step
 * boundaries: every step of the engine is deterministic).
 */

import { issuesOf, issuesSummary, underPath } from "../../../schemas/issues";
import { withoutUnreadModelSettings } from "../../../schemas/model";
import {
  RECORDING_FORMAT,
  RECORDING_VERSION,
  Recording,
  type RecordingSpec,
} from "../../../schemas/recording";
import type { StateOut } from "../../../schemas/state";
import { SnapshotError, type SnapshotIssue } from "../model/state-codec";
import { buildSimulation } from "./build";
import { InputError, MAX_RECORDED_INPUTS, type Simulation } from "./simulation";
import { withoutUnreadSnapshotSettings } from "./snapshot";

/** A recording that cannot be read or replayed; paths from the recording's root. */
export class RecordingError extends Error {
  constructor(readonly issues: SnapshotIssue[]) {
    super(`invalid recording: ${issuesSummary(issues, 5)}`);
    this.name = "RecordingError";
  }
}

/**
 * The recording of `sim` since its last start: the inputs and patches applied, then those
 * scheduled since the start that still wait for a step after the end, so that a session
 * created from it goes on past the end as `sim` does (until 2026-12-06 they were left out:
 * a controller's input sent ahead for step 300, recorded at step 200, was lost to the
 * copy). Throws RecordingError when it was truncated, or would hold more than
 * MAX_RECORDED_INPUTS with them.
 */
export function recordingOf(sim: Simulation): RecordingSpec {
  const log = sim.recording();
  if (log.truncated || log.entries.length + log.scheduled.length > MAX_RECORDED_INPUTS)
    throw new RecordingError([
      {
        path: ["inputs"],
        message: `the recording was truncated (more than ${MAX_RECORDED_INPUTS} inputs since its start, those still pending included); reset or snapshot to start a new one`,
      },
    ]);
  return {
    format: RECORDING_FORMAT,
    version: RECORDING_VERSION,
    model: sim.model,
    start: log.start,
    inputs: [...log.entries, ...log.scheduled],
    end: { step: sim.stepCount, time: sim.time, hash: sim.stateHash() },
  };
}

/** Validates a recording document (RecordingError with zod's paths). */
export function parseRecording(json: unknown): RecordingSpec {
  const r = Recording.safeParse(json);
  if (!r.success) throw new RecordingError(issuesOf(r.error));
  const { model, start } = r.data;
  // as a snapshot's (snapshot.ts withoutUnreadSnapshotSettings)
  return {
    ...r.data,
    model: withoutUnreadModelSettings(model),
    start: start === null ? null : withoutUnreadSnapshotSettings(start),
  };
}

/**
 * A simulation at the recording's start with its inputs scheduled: stepping it to
 * end.step replays the run. Throws RecordingError when the start or an input does not
 * fit the model.
 */
export function replayRecording(rec: RecordingSpec): Simulation {
  let sim: Simulation;
  try {
    sim = buildSimulation(rec.model);
    if (rec.start !== null) sim.restoreSnapshot(rec.start);
  } catch (err) {
    if (err instanceof SnapshotError) throw new RecordingError(underPath(["start"], err.issues));
    throw new RecordingError([
      { path: ["model"], message: (err as Error)?.message ?? String(err) },
    ]);
  }
  if (rec.start !== null && JSON.stringify(rec.start.model) !== JSON.stringify(rec.model))
    throw new RecordingError([
      { path: ["start", "model"], message: "the start is a snapshot of another model" },
    ]);
  if (rec.end.step < sim.stepCount)
    throw new RecordingError([{ path: ["end", "step"], message: "the end is before the start" }]);
  try {
    sim.scheduleTimed(rec.inputs);
  } catch (err) {
    if (err instanceof InputError) throw new RecordingError(underPath(["inputs"], err.issues));
    throw err;
  }
  return sim;
}

/**
 * Replays a recording to its end, returning the states every `every` steps (and the end
 * state) and whether the end state's hash is the recorded one.
 */
export function replayStates(
  rec: RecordingSpec,
  every: number,
): { states: StateOut[]; matches: boolean } {
  const sim = replayRecording(rec);
  const states: StateOut[] = [];
  while (sim.stepCount < rec.end.step) {
    const next = Math.min(rec.end.step, (Math.floor(sim.stepCount / every) + 1) * every);
    sim.step(next - sim.stepCount);
    if (sim.stepCount % every === 0 || sim.stepCount === rec.end.step) states.push(sim.state());
  }
  return { states, matches: sim.stateHash() === rec.end.hash };
}
