/**
 * Messages between the event loop (session manager, worker pool) and the solver workers.
 *
 * What crosses and why: the worker owns every Simulation and does all the work that grows
 * with the model — stepping, building the State and encoding it (JSON as UTF-8 bytes, or
 * msgpack) — and sends the bytes in a transferred ArrayBuffer. The event loop only copies
 * bytes to sockets: a REST answer is the worker's JSON as is, a stream frame is written to
 * every subscriber without being decoded. Small control data (status, time, step) travels
 * as plain structured-clone objects.
 */
import type { SessionOut, SessionPatch, SessionStatusName, StreamField } from "../../schemas/api";
import type { InputSpec } from "../../schemas/input";
import type { ModelSpec } from "../../schemas/model";
import type { AssemblyOptionsIn, StateOut } from "../../schemas/state";
import type { EncodedScene } from "./frames";

/** What the event loop mirrors of a session after every reply or event. */
export interface SessionSnapshot {
  /**
   * The worker's count of snapshots taken when this one was: a later snapshot of a session
   * has a larger seq. The event loop applies a snapshot only when it is newer than the
   * last it applied from that worker (a reply's snapshot is applied after its awaiting
   * continuation runs, which can come after a progress event the worker posted later).
   */
  seq: number;
  status: SessionStatusName;
  time: number;
  step: number;
  dt: number;
  message: string | null;
  run: {
    realtimeFactor: number | null;
    until: number | null;
    /** the pacing reference: epoch ms (fractional) and the simulated time then */
    wallStart: number;
    simStart: number;
    lagResets: number;
  } | null;
  /**
   * the inputs and patches its recording holds (Simulation.recordedInputs().entries): the
   * worker's estimate of its heap counts each at RECORDED_INPUT_BYTES (sessions/memory.ts)
   */
  recordedInputs: number;
}

/**
 * A session's scene (schemas/api.ts SceneFrame's model part), encoded by its worker
 * (frames.ts EncodedScene): the event loop never holds it as objects nor encodes it.
 */
export type SceneInfo = EncodedScene;

/** One stream encoding the worker produces: a set of fields in a format. */
export interface FrameEncoding {
  /** `${fields joined by ","}|${format}` */
  key: string;
  fields: StreamField[];
  format: "json" | "msgpack";
}

/** A subscription class: frames of `encoding` at every step divisible by `every`. */
export interface Subscription extends FrameEncoding {
  every: number;
}

/**
 * A session's append-only log of recorded inputs (persistence.ts): `id` names the
 * recording (a new one at each start: creation, reset, an applied assembly, a restore
 * that carries none), `count` the inputs it holds — the recording's inputs that can no
 * longer change (applied, or carried from before a restore), in their order.
 */
export interface InputLogAt {
  id: string;
  count: number;
}

/**
 * The inputs a checkpoint appends to its session's log: `lines` holds the recording's
 * inputs from..count-1 (count - from JSON lines, each ending in "\n"); the checkpoint's
 * snapshot holds only those after them (still pending: their order may change).
 */
export interface InputLogPart extends InputLogAt {
  from: number;
  lines: Uint8Array;
}

export type TestHook =
  | { action: "block"; ms: number }
  | { action: "throwOnStep"; sessionId: string; message: string }
  | { action: "exit"; code: number };

export type WorkerRequestBody =
  /**
   * A session from the JSON (UTF-8 bytes) of a create body (schemas/api.ts CreateSession: a model, a
   * snapshot or a recording), parsed and validated in the worker; MAX_BODIES applies.
   */
  | { kind: "open"; sessionId: string; body: Uint8Array; maxBodies: number; admit?: false }
  | { kind: "state"; sessionId: string }
  /**
   * `limitMs`: the wall time (ms) the request may take from when the worker starts it
   * (REQUEST_TIMEOUT_MS): time it waits behind other requests on the worker does not count
   * (a 1-step request queued behind a 30 s assembly timed out having stepped nothing).
   */
  | { kind: "step"; sessionId: string; steps: number; limitMs: number }
  | { kind: "run"; sessionId: string; realtimeFactor: number | null; until: number | null }
  | { kind: "pause"; sessionId: string }
  | { kind: "reset"; sessionId: string }
  | { kind: "update"; sessionId: string; patch: SessionPatch }
  | { kind: "assemble"; sessionId: string; options: AssemblyOptionsIn; apply: boolean }
  /** Assembly of the model in the JSON (UTF-8 bytes) of an AssemblyRequest body; nothing is kept. */
  | { kind: "assembleModel"; body: Uint8Array; maxBodies: number }
  /** The model of a URDF import body's JSON (UTF-8 bytes, schemas/urdf.ts); nothing is kept. */
  | { kind: "importUrdf"; body: Uint8Array; maxBodies: number }
  | { kind: "delete"; sessionId: string }
  | { kind: "snapshot"; sessionId: string; encoding: FrameEncoding }
  /**
   * The session's engine snapshot (schemas/snapshot.ts) as JSON bytes; `recording`: with the
   * recording so far (a checkpoint's, which a restore carries on: recording-history.ts)
   */
  | {
      kind: "export";
      sessionId: string;
      recording?: boolean;
      /**
       * With `recording`, a store that keeps the inputs as an append-only log (persistence.ts):
       * what it holds of the session's (null: nothing yet). The inputs past it that no longer
       * change come back apart (`exported.log`), not in the snapshot. Absent: all in it.
       */
      log?: InputLogAt | null;
    }
  /** A session from an engine snapshot, with the status it had (running comes back paused). */
  | {
      kind: "restore";
      sessionId: string;
      /** the session's name (the snapshot's session name) */
      name: string;
      snapshot: unknown;
      status: SessionStatusName;
      message: string | null;
      /**
       * The recording's logged inputs (InputLogPart lines, 0..n-1), which the snapshot's
       * recording does not hold: they go before its inputs (an in-memory checkpoint whose
       * log is partly on disk).
       */
      inputs?: Uint8Array;
      /**
       * The session's input log as its store holds it (present: the store keeps one; null:
       * nothing of this recording yet): its checkpoints append to it.
       */
      log?: InputLogAt | null;
      /**
       * Absent: a new session (a create, a fork), refused before its build when its worker
       * has no room within WORKER_SESSION_MEMORY_MB (worker-runtime.ts admit). false (on
       * `open` too): a session that was admitted once coming back (a restart's restore, a
       * rebuild after a worker loss, placed within the budget by the event loop), never
       * refused for want of room: its acknowledged work is not lost to an estimate. On
       * `restore` it also tells the session's own checkpoint from a fork: the cause its
       * recording names (schemas/recording.ts since: restored, fork), and only its own
       * checkpoint's recording is carried on (recording-history.ts; a fork starts its own).
       */
      admit?: false;
    }
  /** Run-time inputs at the boundary `step` (null: the next one). */
  | { kind: "inputs"; sessionId: string; inputs: InputSpec[]; step: number | null }
  /** The session's recording (schemas/recording.ts) as JSON bytes; `every`: with replayed states. */
  | { kind: "recording"; sessionId: string; every: number | null; maxSteps: number }
  | { kind: "test"; hook: TestHook };

export type WorkerRequest = WorkerRequestBody & { id: number };

/** Fire-and-forget control messages (no reply). */
export type WorkerNotice =
  | { kind: "subscriptions"; sessionId: string; subscriptions: Subscription[] }
  | { kind: "cancel"; sessionId: string }
  /**
   * The checkpoint a running session's worker took at `step` (a `checkpoint` event) is
   * written, or will not be waited for: its run, held at that step, goes on.
   */
  | { kind: "checkpointed"; sessionId: string; step: number }
  /**
   * The store (DATA_DIR, Redis) holds the session's checkpoint of `step` (null: none, or no
   * store): its stream frames carry it as `keptStep`, what a crash of the process would
   * bring the session back to. Sent after every write the store confirmed, and when a
   * session is opened on a worker from its checkpoint (a restart, a rebuild, a takeover).
   */
  | {
      kind: "kept";
      sessionId: string;
      step: number | null;
      /** what the store holds of the session's input log (absent: it keeps none) */
      log?: InputLogAt | null;
    }
  | { kind: "shutdown" };

export interface WorkerErrorInfo {
  code:
    | "invalid_model"
    | "invalid_request"
    | "payload_too_large"
    | "conflict"
    | "invalid_urdf"
    | "unsupported_urdf"
    | "not_found"
    | "diverged"
    | "solver_error"
    | "insufficient_memory"
    | "timeout";
  message: string;
  details?: unknown;
}

/** What the event loop keeps of a new session's model. */
export interface SessionOrigin {
  /** the session's name: its model's, or the snapshot's session name */
  name: string;
  counts: SessionOut["counts"];
  /** the estimated bytes (heap and ArrayBuffers) the session holds on its worker (sessions/memory.ts) */
  memoryBytes: number;
  /** the validated model (defaults written out) as UTF-8 JSON: a lost session without a
   * checkpoint is rebuilt from it */
  model: Uint8Array;
}

export type WorkerResult =
  | { kind: "created"; scene: SceneInfo; state: Uint8Array; origin: SessionOrigin }
  | { kind: "state"; state: Uint8Array }
  | { kind: "frame"; step: number; bytes: Uint8Array | null }
  | { kind: "exported"; bytes: Uint8Array; log?: InputLogPart }
  | { kind: "assembly"; result: Uint8Array; state: Uint8Array | null }
  /** the JSON bytes of a URDF import's answer (schemas/urdf.ts UrdfImportResult) */
  | { kind: "imported"; bytes: Uint8Array }
  | { kind: "inputs"; step: number; pending: number }
  | { kind: "ok" };

export type WorkerReply =
  | {
      kind: "reply";
      id: number;
      ok: true;
      result: WorkerResult;
      session: SessionSnapshot | null;
    }
  | {
      kind: "reply";
      id: number;
      ok: false;
      error: WorkerErrorInfo;
      session: SessionSnapshot | null;
    };

/** Worker → event loop, unsolicited. */
export type WorkerEvent =
  | { kind: "ready" }
  /** Encoded frames at one step, one per requested encoding; `forced`: not on an `every` boundary (reset, applied assembly). */
  | {
      kind: "frame";
      sessionId: string;
      step: number;
      forced: boolean;
      frames: { key: string; bytes: Uint8Array }[];
      bytes: number;
    }
  /** Status / time changes: at least every PROGRESS_MS while running, and on every change of status. */
  | { kind: "progress"; sessionId: string; session: SessionSnapshot }
  /**
   * A running session's engine snapshot (JSON bytes) taken at a step that is a multiple of
   * CHECKPOINT_EVERY_STEPS (WorkerInit.checkpointEverySteps): the run stops at that exact
   * step for it and stays there until the event loop answers `checkpointed` (the write is
   * done), so nothing past a checkpoint is answered or streamed before that checkpoint is
   * kept, and no more than K acknowledged steps are lost.
   */
  | {
      kind: "checkpoint";
      sessionId: string;
      session: SessionSnapshot;
      engine: Uint8Array;
      /** the inputs it appends to the session's log (a store that keeps one) */
      log?: InputLogPart;
    }
  /**
   * Counters since the previous stats message, and the worker isolate's memory now (bytes):
   * V8 heap in use, memory held outside it (ArrayBuffers), and both right after the latest
   * major collection (src/server/live-heap.ts; NaN before the first).
   */
  | {
      kind: "stats";
      steps: number;
      buckets: number[];
      sum: number;
      /** Steps that ended short of each of SHORTFALLS' tolerances, in its order. */
      short: number[];
      heapUsed: number;
      external: number;
      liveHeap: number;
    }
  /**
   * The worker starts working on request `id` (a queued operation when its turn comes): the
   * pool's watchdog times the request from here (worker-pool.ts).
   */
  | { kind: "started"; id: number };

export type WorkerOutbound = WorkerReply | WorkerEvent;

/** Step-duration histogram buckets (s), shared by the worker (counting) and /metrics. */
export const STEP_BUCKETS = [
  1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
  5e-2, 0.1, 0.25, 0.5, 1,
];

export const PROGRESS_MS = 100;

/**
 * The longest wait Node's timers hold (ms): a longer one fires after 1 ms, with a
 * TimeoutOverflowWarning each time (a timer armed again on firing becomes a 1 ms loop).
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The Session view's `counts` of a validated model: what a created session's origin and a
 * checkpoint waiting for a worker (sessions/records.ts restoringViewOf) report alike.
 */
export function modelCounts(model: ModelSpec): SessionOut["counts"] {
  return {
    bodies: model.bodies.length,
    forces: model.forces.length,
    joints: model.joints.length,
    motors: model.motors.length,
    actuators: model.actuators.length,
    sensors: model.sensors.length,
  };
}

export function encodingKey(fields: readonly StreamField[], format: "json" | "msgpack"): string {
  return `${fields.join(",")}|${format}`;
}

/** workerData handed to each worker thread. */
export interface WorkerInit {
  index: number;
  /** Int32Array over it: [0] bytes of frames posted and not yet written out by the event loop. */
  inflight: SharedArrayBuffer;
  frameQueueBytes: number;
  testHooks: boolean;
  /**
   * Wall time (ms) one step of a run may take (REQUEST_TIMEOUT_MS): past it the step is
   * abandoned cooperatively (src/engine/solvers/deadline.ts) and the session ends `diverged`
   * with its last good state, instead of the watchdog replacing the whole worker. It bounds
   * a session's build (open, restore), an assembly and a recording's replay the same way
   * (each answered with its error, the session's state put back).
   */
  stepLimitMs: number;
  /**
   * CHECKPOINT_EVERY_STEPS: a run's chunks end at every multiple of it, where the worker
   * sends the session's snapshot (a `checkpoint` event) and holds the run until it is
   * `checkpointed`; 0 or absent: never.
   */
  checkpointEverySteps?: number;
  /**
   * CHECKPOINT_WAIT_MS: how long (ms) a run held at its checkpoint waits for `checkpointed`
   * before it goes on (a stuck store must not stop it for good); absent: 2000.
   */
  checkpointWaitMs?: number;
  /**
   * MAX_PENDING_INPUTS: the inputs an `inputs` request may leave scheduled for later steps
   * in a session; absent: the snapshot format's MAX_PENDING_INPUTS (schemas/snapshot.ts).
   */
  maxPendingInputs?: number;
  /**
   * WORKER_SESSION_MEMORY_MB in bytes: the estimated memory (sessions/memory.ts) the worker's
   * sessions may hold together; a model that would pass it is refused before it is built
   * (`insufficient_memory`). Absent: no bound.
   */
  sessionMemoryBytes?: number;
  /**
   * RECORDING_STATES_MAX_BYTES: bytes of JSON the replayed states of one recording answer
   * (?every=k) may hold; past it the replay stops, 409 naming it. Absent: the default.
   */
  recordingStatesMaxBytes?: number;
}

/**
 * The default of RECORDING_STATES_MAX_BYTES (64 MiB). The states were kept as objects to the
 * end, then stringified whole: ?every=1 on a falling body stepped 300 000 times ended its
 * 512 MB worker (heap out of memory; its other sessions rebuilt from their checkpoints),
 * 100 000 steps answered 70 MB in 3.7 s, and at 1e6 steps (the most replayed) the text would
 * pass V8's longest string.
 */
export const RECORDING_STATES_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The stated tolerances a step can end short of (README, Solver settings), each with the
 * solver figure that says so: the label of /metrics' moreau_steps_short_total.
 */
export const SHORTFALLS = [
  ["newton", "newtonConverged"],
  ["contact", "contactConverged"],
  ["projection", "projectionConverged"],
  ["step", "stepToleranceMet"],
  ["joint", "jointToleranceMet"],
] as const satisfies readonly (readonly [string, keyof StateOut["solver"]])[];

/** The solver figures SHORTFALLS reads (true: the step met that tolerance). */
export type ShortfallFigure = (typeof SHORTFALLS)[number][1];

/**
 * The input log a checkpoint writes, or null when its recording has no inputs fixed yet
 * (count 0: no log, in every store, as DATA_DIR's file store writes none).
 */
export function loggedPart<T extends InputLogAt>(log: T | null | undefined): T | null {
  return log && log.count > 0 ? log : null;
}

/**
 * The first `count` JSON lines of an input log's bytes (InputLogPart lines) and the byte
 * length they take; null when it holds fewer.
 */
export function logLines(
  bytes: Uint8Array,
  count: number,
): { inputs: unknown[]; bytes: number } | null {
  const inputs: unknown[] = [];
  const text = new TextDecoder();
  let at = 0;
  while (inputs.length < count) {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0) return null;
    inputs.push(JSON.parse(text.decode(bytes.subarray(at, end))));
    at = end + 1;
  }
  return { inputs, bytes: at };
}

/** The lines of an input log's bytes (InputLogPart lines), each with its "\n" (views, not copies). */
export function splitLogLines(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const end = bytes.indexOf(0x0a, at);
    const next = end < 0 ? bytes.length : end + 1;
    out.push(bytes.subarray(at, next));
    at = next;
  }
  return out;
}

/** Where the `skip`-th line of an input log's bytes starts (their length when it has fewer). */
export function logLineStart(bytes: Uint8Array, skip: number): number {
  let at = 0;
  for (let i = 0; i < skip; i++) {
    const end = bytes.indexOf(0x0a, at);
    if (end < 0) return bytes.length;
    at = end + 1;
  }
  return at;
}
