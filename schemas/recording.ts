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
import { SimulationSnapshot } from "./snapshot";
import { State } from "./state";

export const RECORDING_FORMAT = "moreau.recording";
export const RECORDING_VERSION = 1;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected a sha256 hex digest");

/**
 * Why a session's recording starts where it does: the session was `created` from a model,
 * opened from a client's `snapshot` or `recording`, is a `fork`, was `restored` from its
 * checkpoint (a worker loss's rebuild, a server restart, a cluster takeover: the inputs
 * before the checkpoint are not in it), `reset`, or an `assembly` was applied. Each of
 * them starts a new recording (the engine's log: Simulation.restartRecording).
 */
export const RecordingCause = z
  .enum(["created", "snapshot", "recording", "fork", "restored", "reset", "assembly"])
  .meta({ id: "RecordingCause" });
export type RecordingCauseName = z.infer<typeof RecordingCause>;

export const RecordingSince = z.strictObject({
  cause: RecordingCause,
  at: z.string().meta({ description: "ISO 8601: when the recording started" }),
});
export type RecordingSinceOut = z.infer<typeof RecordingSince>;

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
        "what started this recording and when (GET /v1/sessions/:id/recording writes it; ignored when a recording is posted): a recording covers its session from its last creation, restore, reset or applied assembly, not before",
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
