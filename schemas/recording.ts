/**
 * A recording (GET /v1/sessions/:id/recording): the model, the state the recording
 * started from (null: the model's initial state at t = 0; a snapshot after a reset is
 * not needed, after a restore or an applied assembly it is), every input and parameter
 * patch with the step boundary it took effect at (then those scheduled since the start
 * for a step after the end, still pending, at their steps), and the end (step, time and
 * the state hash there). Replaying the inputs from the start reproduces the run bit for bit, which
 * the end hash lets anyone check; posting it to POST /v1/sessions creates a session at
 * the start with the inputs pending. `states`, on request, samples the replayed run.
 */
import { z } from "zod";
import { TimedInput } from "./input";
import { StoredModel } from "./model";
import { RecordingSince, SimulationSnapshot } from "./snapshot";
import { State } from "./state";

export const RECORDING_FORMAT = "moreau.recording";
export const RECORDING_VERSION = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected a sha256 hex digest");

export {
  RecordingCause,
  type RecordingCauseName,
  RecordingSince,
  type RecordingSinceOut,
} from "./snapshot";

export const Recording = z
  .strictObject({
    format: z.literal(RECORDING_FORMAT, { error: `expected "${RECORDING_FORMAT}"` }),
    version: z.literal(RECORDING_VERSION, {
      error: `unsupported recording version (this server reads version ${RECORDING_VERSION})`,
    }),
    model: StoredModel,
    start: SimulationSnapshot.nullable().meta({
      description: "the state the recording starts from; null: the model's initial state, t = 0",
    }),
    inputs: z.array(TimedInput).max(100_000).meta({
      description:
        "the inputs and patches at the step boundaries they took effect at, then those still pending at the end (at later steps)",
    }),
    since: RecordingSince.optional().meta({
      description:
        "what started this recording and when (GET /v1/sessions/:id/recording writes it; ignored when a recording is posted): a recording covers its session from its creation, last reset or applied assembly, across restores from its checkpoints (a worker loss's rebuild, a restart, a takeover), forks and snapshots",
    }),
    end: z.strictObject({
      step: z.number().int().nonnegative(),
      time: z.number().nonnegative(),
      hash: Sha256.meta({ description: "the state hash at the end step (Simulation.stateHash)" }),
    }),
    states: z
      .array(State)
      .max(1_000_000)
      .optional()
      .meta({ description: "the replayed states every `every` steps (on request), end included" }),
  })
  .meta({ id: "Recording" });

export type RecordingSpec = z.output<typeof Recording>;
