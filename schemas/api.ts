/**
 * The service's wire format besides the model (schemas/model.ts) and the engine's State and
 * assembly bodies (schemas/state.ts): every request body, query, answer and error of the
 * HTTP API and the WebSocket frames. Routes validate requests with these schemas and the
 * OpenAPI document at /docs is generated from them (ids given with `.meta({ id })` become
 * `components.schemas`).
 */
import { z } from "zod";
import { denseOrderIssue, systemOrder } from "./cost";
import { InputsAccepted, InputsBody, ParametersPatch } from "./input";
import { BodyPoint, Id, Model, Shape } from "./model";
import { Recording } from "./recording";
import { SimulationSnapshot } from "./snapshot";
import { AssemblyOptions, FemState, KeptStep, State } from "./state";

/**
 * `ready`: created or reset, not running; `running`: a `run` is stepping it; `paused`: a run
 * was paused or reached `until`; `diverged`: a step went non-finite or blew up (the last
 * good state is kept, `reset` or a PATCH + reset recovers); `error`: the solver threw or the
 * worker holding the session crashed or was stopped (the last state the server received is
 * kept; `reset` rebuilds the simulation from its model).
 */
export const SessionStatus = z
  .enum(["ready", "running", "paused", "diverged", "error"])
  .meta({ id: "SessionStatus" });

/**
 * A Session answer's status: its simulation's (SessionStatus), or `restoring` — only in the
 * Session answers of GET /v1/sessions and GET /v1/sessions/:id — for a session kept in
 * DATA_DIR that no solver worker could open yet (the server started with none that could
 * start), or one lost with its worker that waits for one that can start (in a cluster: for
 * a node with a worker running, no node holding it meanwhile): it waits with its
 * checkpoint, its other requests answered 503 `worker_unavailable` (in a cluster too)
 * with Retry-After, and is opened from its checkpoint as soon as a worker
 * starts; `message` names the cause.
 */
export const SessionListedStatus = z
  .enum([...SessionStatus.options, "restoring"])
  .meta({ id: "SessionListedStatus" });

export const Session = z
  .object({
    id: z.string(),
    name: z.string(),
    status: SessionListedStatus,
    time: z
      .number()
      .meta({ description: "simulated time (s); refreshed at least every 100 ms while running" }),
    step: z.number().int(),
    dt: z.number().meta({ description: "current step size (s)" }),
    counts: z
      .object({
        bodies: z.number().int(),
        forces: z.number().int(),
        joints: z.number().int(),
        motors: z.number().int(),
        actuators: z.number().int(),
        sensors: z.number().int().meta({
          description:
            "the model's sensors (State.observation concatenates their values, some sensors give several)",
        }),
      })
      .meta({
        description:
          "how many of each the session's model lists: bodies, forces, joints, motors, actuators and sensors (until 2026-12-07 actuators and sensors were not counted)",
      }),
    message: z.string().nullable().meta({
      description:
        "why the session is diverged or in error, or what it waits for while `restoring`; else, after a worker loss rebuilt it, what that cost (restored from its checkpoint at step N, the steps after it lost) until a reset; else null",
    }),
    rebuilding: z.boolean().meta({
      description:
        "true while its simulation is being rebuilt after the loss of its solver worker: status, time, step and run are then the last known before the loss (the rebuild may bring it back at an earlier step: `message` says so once it is done) and requests that need the simulation (state, step, run, inputs, PATCH, reset, snapshot, fork, recording) wait for the rebuild, never answered from the lost state",
    }),
    run: z
      .object({
        realtimeFactor: z.number().nullable(),
        until: z.number().nullable(),
        wallStart: z.number().meta({
          description:
            "pacing reference, Unix epoch ms (fractional): simulated time t is due at wallStart + 1000 (t − simStart) / realtimeFactor; set when the run starts and moved when it cannot keep up",
        }),
        simStart: z.number().meta({ description: "simulated time (s) at wallStart" }),
        lagResets: z.number().int().meta({
          description:
            "times the run fell more than 0.25 s behind real time and dropped the backlog",
        }),
      })
      .nullable()
      .meta({ description: "the active run's parameters while running, else null" }),
    subscribers: z.number().int().meta({ description: "open WebSocket streams" }),
    persisted: z.boolean().nullable().meta({
      description:
        "DATA_DIR set: whether the session's last checkpoint attempt reached the disk (false: it failed, see /ready); null without DATA_DIR",
    }),
    checkpointStep: z.number().int().nullable().meta({
      description: "the step of the session's last checkpoint on disk, null when none",
    }),
    createdAt: z.string().meta({ description: "ISO 8601" }),
    lastActivityAt: z.string().meta({ description: "ISO 8601; idle sessions expire" }),
  })
  .meta({ id: "Session" });

export const SessionList = z.object({ sessions: z.array(Session) }).meta({ id: "SessionList" });

export const SessionParams = z.object({ id: z.string().min(1).max(128) });

export const SESSION_SNAPSHOT_FORMAT = "moreau.session";
export const SESSION_SNAPSHOT_VERSION = 1;

/**
 * A whole session, as GET /v1/sessions/:id/snapshot answers it and POST /v1/sessions
 * (`{ "snapshot": ... }`) resumes it: the engine snapshot (model, parameters as patched,
 * state, solver memory) and the session's status. The new session continues bit-identically.
 */
export const Snapshot = z
  .strictObject({
    format: z.literal(SESSION_SNAPSHOT_FORMAT, { error: `expected "${SESSION_SNAPSHOT_FORMAT}"` }),
    version: z.literal(SESSION_SNAPSHOT_VERSION, {
      error: `unsupported snapshot version (this server reads version ${SESSION_SNAPSHOT_VERSION})`,
    }),
    session: z
      .object({
        id: z.string().max(128).optional(),
        name: z.string().max(256),
        status: SessionStatus,
        message: z.string().max(10_000).nullable().default(null),
        time: z.number().optional(),
        step: z.number().int().optional(),
        createdAt: z.string().max(64).optional(),
        savedAt: z.string().max(64).optional(),
      })
      .meta({
        description:
          "informative, except status and message, which the resumed session takes (a running session resumes paused)",
      }),
    simulation: SimulationSnapshot,
  })
  .meta({ id: "Snapshot" });

export const CreateSessionBody = z
  .strictObject({
    model: Model.optional().meta({ description: "a new session from a model" }),
    snapshot: Snapshot.optional().meta({
      description: "a session resumed from GET /v1/sessions/:id/snapshot",
    }),
    recording: Recording.optional().meta({
      description:
        "a session at the start of a recording (GET /v1/sessions/:id/recording) with its inputs pending: stepping it to end.step replays the run bit for bit",
    }),
  })
  .refine((b) => [b.model, b.snapshot, b.recording].filter((x) => x !== undefined).length === 1, {
    message: 'give exactly one of "model", "snapshot" or "recording"',
  })
  .meta({ id: "CreateSession" });

export const RecordingQuery = z.strictObject({
  every: z.coerce.number().int().min(1).max(1_000_000).optional().meta({
    description:
      "also return the states every `every` steps (and at the end), computed by replaying the recording",
  }),
});

/**
 * The body of a route that takes none (pause, reset, fork): nothing, or an empty object.
 * Strict, as every request part: a key sent to it (a fork's `{"name": …}`, a reset's
 * `{"step": …}`) is a 400 naming it, not silently ignored.
 */
export const NoBody = z
  .strictObject({})
  .optional()
  .meta({ description: "none, or {}: this route takes no parameters" });

export const StepBody = z
  .strictObject({
    steps: z.number().int().min(1).optional().meta({ description: "number of steps of solver.dt" }),
    duration: z
      .number()
      .positive()
      .optional()
      .meta({ description: "simulated time (s): ceil(duration / dt) steps" }),
  })
  .refine((b) => (b.steps === undefined) !== (b.duration === undefined), {
    message: 'give exactly one of "steps" or "duration"',
  })
  .meta({ id: "StepRequest" });

export const RunBody = z
  .strictObject({
    realtimeFactor: z
      .number()
      .positive()
      .max(1e6)
      .nullable()
      .default(1)
      .meta({ description: "simulated seconds per wall-clock second; null: as fast as it can" }),
    until: z
      .number()
      .nonnegative()
      .optional()
      .meta({ description: "stop (status paused) when the simulated time reaches it (s)" }),
  })
  .prefault({})
  .meta({ id: "RunRequest" });

export const RunAccepted = z
  .object({ session: Session, message: z.string() })
  .meta({ id: "RunAccepted" });

export const SessionAssemblyBody = AssemblyOptions.extend({
  apply: z
    .boolean()
    .default(false)
    .meta({ description: "write the assembled positions and velocities into the session" }),
})
  .strict()
  .prefault({})
  .meta({ id: "SessionAssemblyRequest" });

export const AssemblyBody = z
  .strictObject({ model: Model, options: AssemblyOptions.prefault({}) })
  .superRefine((b, ctx) => {
    const dense = denseOrderIssue(b.options.solver, systemOrder(b.model));
    if (dense !== null)
      ctx.addIssue({ code: "custom", path: ["options", "solver"], message: dense });
  })
  .meta({ id: "AssemblyRequest" });

export const StreamFieldName = z.enum([
  "bodies",
  "contacts",
  "joints",
  "actuators",
  "observation",
  "energy",
  "solver",
  "contactPeak",
  "fem",
  "femStrain",
]);
/** The fields of a stream that names none: all but those added on request. */
const DEFAULT_STREAM_FIELDS = StreamFieldName.exclude([
  "solver",
  "contactPeak",
  "fem",
  "femStrain",
]).options;

export const StreamQuery = z.object({
  every: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1)
    .meta({ description: "send a frame at every step number divisible by it" }),
  fields: z
    .string()
    .default(DEFAULT_STREAM_FIELDS.join(","))
    .transform((s, ctx) => {
      const names = s
        .split(",")
        .map((x) => x.trim())
        .filter((x) => x.length > 0);
      const out: z.infer<typeof StreamFieldName>[] = [];
      for (const n of names) {
        const r = StreamFieldName.safeParse(n);
        if (!r.success) {
          ctx.addIssue({
            code: "custom",
            message: `unknown field "${n}" (use ${StreamFieldName.options.join(", ")})`,
          });
          return z.NEVER;
        }
        if (!out.includes(r.data)) out.push(r.data);
      }
      return out;
    })
    .meta({
      description:
        "comma-separated: bodies, contacts, joints, actuators, observation, energy (the default), solver, contactPeak, fem (each fem body's node positions), femStrain (its nodal equivalent strains)",
    }),
  format: z.enum(["json", "msgpack"]).default("json"),
});
export type StreamOptions = z.output<typeof StreamQuery>;
export type StreamField = z.infer<typeof StreamFieldName>;

/** First frame of every stream: what a viewer needs to draw the scene. */
export const SceneFrame = z
  .object({
    type: z.literal("scene"),
    session: z.string(),
    name: z.string(),
    time: z.number(),
    step: z.number().int(),
    bodies: z.array(
      z.object({
        id: z.string(),
        kind: z.enum(["rigid", "particle"]),
        fixed: z.boolean(),
        shapes: z.array(Shape),
      }),
    ),
    joints: z.array(z.object({ id: Id, type: z.string(), a: BodyPoint, b: BodyPoint })),
    fem: z.array(
      z.object({
        id: Id,
        nodeCount: z.number().int(),
        triangles: z.array(z.number().int()).meta({
          description:
            "the surface: 3 node indices per triangle, counter-clockwise seen from outside; drawn at the positions of the state frames' `fem` field",
        }),
      }),
    ),
  })
  .meta({ id: "SceneFrame" });

/**
 * A frame's contact figures over the steps since the previous frame of its subscription
 * class (its fields, format and `every`): a one-step impact between two frames shows in
 * the next one. A frame the server skips (counted in a later frame's `dropped`) takes its
 * steps' figures with it; when subscribers of one field set and format differ in `every`,
 * a frame due for several of them covers the longest of their intervals.
 */
export const ContactPeak = z
  .object({
    steps: z.number().int().nonnegative().meta({
      description:
        "steps covered: those since the class's previous frame (0 for a first frame, the frame of a reset and a frame with no step since the previous one, e.g. one sent at once for inputs)",
    }),
    maxNormalForce: z.number().meta({
      description:
        "N: the largest total normal contact force (Σ normalForce over a step's contacts) of these steps; 0 without contact",
    }),
    normalImpulse: z.number().meta({
      description: "N·s: the normal contact impulse over these steps (Σ total normal force × h)",
    }),
  })
  .meta({ id: "ContactPeak" });

/**
 * Every later frame: the session's State restricted to the subscribed fields (and
 * contactPeak when subscribed), with the number of frames this subscriber missed (dropped
 * because it read too slowly or the server was saturated) since the previous frame it
 * received.
 */
export const StateFrame = State.partial({
  bodies: true,
  contacts: true,
  joints: true,
  actuators: true,
  observation: true,
  energy: true,
  solver: true,
})
  .extend({
    type: z.literal("state"),
    contactPeak: ContactPeak.optional(),
    fem: z
      .array(FemState.pick({ id: true, positions: true }))
      .optional()
      .meta({ description: "the `fem` field: each fem body's node positions (FemState)" }),
    femStrain: z
      .array(FemState.pick({ id: true, strain: true }))
      .optional()
      .meta({ description: "the `femStrain` field: each fem body's nodal strains (FemState)" }),
    keptStep: KeptStep.meta({
      description:
        "the step of the checkpoint the store had confirmed when this frame was made (KeptStep): frames past it carry steps a crash would lose",
    }),
    dropped: z.number().int().nonnegative(),
  })
  .meta({ id: "StateFrame" });

/**
 * Messages a client sends on the stream's socket (JSON text, or msgpack binary in the
 * msgpack format): run-time inputs, as POST /v1/sessions/:id/inputs takes them, and
 * steps, as POST /v1/sessions/:id/step takes them, each with an optional `ref` the answer
 * repeats. Messages are handled in the order they arrive.
 */
const Ref = z
  .union([z.string().max(128), z.number()])
  .optional()
  .meta({
    description: "any tag; the answer repeats it",
  });
export const StreamClientMessage = z
  .discriminatedUnion("type", [
    InputsBody.extend({ type: z.literal("inputs"), ref: Ref }),
    z.strictObject({
      type: z.literal("step"),
      steps: z.number().int().min(1).meta({
        description:
          "advance this many steps (as POST /v1/sessions/:id/step; a paused or ready session): a controller in lock-step sends its inputs, then a step, and reads the frames",
      }),
      ref: Ref,
    }),
  ])
  .meta({ id: "StreamClientMessage" });

/** The server's answer to a client message, in the stream's format. */
export const StreamAnswerFrame = z
  .union([
    InputsAccepted.extend({
      type: z.literal("inputs"),
      ref: z.union([z.string(), z.number()]).optional(),
    }),
    z.object({
      type: z.literal("stepped"),
      ref: z.union([z.string(), z.number()]).optional(),
      step: z.number().int().meta({ description: "the session's step after the request" }),
      time: z.number(),
      keptStep: KeptStep.meta({
        description:
          "the step of the checkpoint the store holds after the request (KeptStep), after any checkpoint its steps called for",
      }),
    }),
    z.object({
      type: z.literal("error"),
      ref: z.union([z.string(), z.number()]).optional(),
      error: z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  ])
  .meta({ id: "StreamAnswerFrame" });

export const ErrorBody = z
  .object({
    error: z.string().meta({
      description:
        "invalid_request, invalid_model, invalid_urdf, unsupported_urdf, unauthorized, not_found, conflict, misdirected_request, payload_too_large, unsupported_media_type, too_many_sessions, too_many_subscribers, rate_limited, diverged, solver_error, timeout, worker_crashed, shutting_down, insufficient_memory, cluster_unavailable, worker_unavailable, internal",
    }),
    message: z.string(),
    details: z.unknown().optional(),
  })
  .meta({ id: "Error" });

export const Health = z
  .object({ status: z.literal("ok"), uptime: z.number() })
  .meta({ id: "Health" });

export const Readiness = z
  .object({
    ready: z.boolean(),
    workers: z.object({
      total: z.number().int(),
      alive: z.number().int(),
      failing: z.array(z.string()).meta({
        description:
          "why the workers that are not running failed to start (each retried with back-off; /ready 503 meanwhile)",
      }),
    }),
    sessions: z.number().int(),
    closing: z.boolean(),
    persistence: z.object({ ok: z.boolean(), error: z.string().nullable() }).nullable().meta({
      description:
        "DATA_DIR set: ok false (and /ready 503) while the last checkpoint write failed, with its error; null without DATA_DIR",
    }),
    cluster: z
      .object({
        node: z.string(),
        redis: z.enum(["up", "down"]),
        nodes: z.number().int(),
        degraded: z.boolean(),
      })
      .nullable()
      .meta({
        description:
          "REDIS_URL set: this node's name, whether Redis answers, the live nodes it sees; degraded (still 200: the node serves its own sessions) while Redis is unreachable; null without REDIS_URL",
      }),
  })
  .meta({ id: "Readiness" });

export type SessionOut = z.infer<typeof Session>;
export type SnapshotIn = z.input<typeof Snapshot>;
export type SnapshotOut = z.output<typeof Snapshot>;
export type SessionStatusName = z.infer<typeof SessionStatus>;
export type StepRequest = z.output<typeof StepBody>;
export type RunRequest = z.output<typeof RunBody>;
export { ContactPatch, InputsAccepted, InputsBody, SolverPatch } from "./input";
export const PatchSessionBody = ParametersPatch;
export type SessionPatch = z.output<typeof PatchSessionBody>;

export type SessionAssemblyRequest = z.output<typeof SessionAssemblyBody>;
export type AssemblyRequest = z.output<typeof AssemblyBody>;
export type ErrorOut = z.infer<typeof ErrorBody>;
export type SceneFrameOut = z.infer<typeof SceneFrame>;
/** What a simulation contributes to its scene frame: bodies with shapes, joints, fem surfaces. */
export type SceneOut = Pick<SceneFrameOut, "bodies" | "joints" | "fem">;
export type StateFrameOut = z.infer<typeof StateFrame>;
export type ContactPeakOut = z.infer<typeof ContactPeak>;
