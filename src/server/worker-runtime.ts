/**
 * What runs inside a solver worker thread: the sessions' Simulations, the step and run
 * loops, and the encoding of REST states and stream frames. worker.ts wires it to the
 * thread's parentPort; tests may drive it in-process.
 *
 * Scheduling inside a worker:
 * - Steps run in chunks of at most CHUNK_MS of wall time; between chunks the worker yields
 *   (setImmediate), so messages for other sessions on this worker, reads of this session,
 *   pauses and cancellations are handled while a long step request or a run is going on.
 * - Every mutating operation on a session (step, run tick, pause, reset, update, assembly)
 *   runs in that session's FIFO queue, so they never interleave; reads (state, snapshot)
 *   bypass the queue and see the state between two chunks.
 * - Runs are driven by one pump per worker (pump()): each turn serves every running session
 *   round robin within CHUNK_MS in all, then the worker handles its messages and sleeps
 *   until the earliest due step. At real-time factor r a run keeps simulated time at
 *   t0 + r·(wall − wall0), stepping what is due; when it falls more than MAX_LAG_S of wall
 *   time behind (a solver slower than real time) it drops the backlog instead of bursting.
 *   With r = null it takes every turn it can. With CHECKPOINT_EVERY_STEPS = K a run's
 *   chunk also ends at every multiple of K, where the session's snapshot is sent (a
 *   `checkpoint` event): a run's checkpoints hold steps k·K exactly. The run then waits
 *   there (reads are still answered) until the event loop says the checkpoint is written
 *   (`checkpointed`), so no step past k·K is streamed or answered before step k·K is kept
 *   (or CHECKPOINT_WAIT_MS has passed: a stuck store does not stop the run).
 * - A step request checks its deadline between steps and ends with `timeout`. The other
 *   long requests run under the engine's deadline too (src/engine/solvers/deadline.ts:
 *   the solvers' loops check it), REQUEST_TIMEOUT_MS of the worker's time from their start:
 *   opening a session (build), an assembly (504 `timeout`, the state as it was), and a
 *   recording's replay (409, in chunks between which the worker serves its other sessions).
 * - The worker tells the event loop when it starts working on each request (a `started`
 *   message; a queued operation when its turn in the session's queue comes), so the pool's
 *   watchdog measures the worker's own time on it, never the time it waited behind others.
 * - A deleted session is gone at once: its run stops, and the operations already queued
 *   on it fail with `not_found` when their turn comes (nothing runs on it any more, so
 *   nothing keeps it).
 */

import { randomUUID } from "node:crypto";
import { getHeapStatistics } from "node:v8";
import { AssemblyBody, CreateSessionBody, type SessionStatusName } from "../../schemas/api";
import type { InputSpec } from "../../schemas/input";
import { issuesOf, issuesSummary, underPath } from "../../schemas/issues";
import type { ModelSpec } from "../../schemas/model";
import type { RecordingCauseName, RecordingSinceOut, RecordingSpec } from "../../schemas/recording";
import {
  MAX_PENDING_INPUTS,
  RecordingHistory,
  type RecordingHistorySpec,
} from "../../schemas/snapshot";
import type { AssemblyOptionsIn } from "../../schemas/state";
import { UrdfImportBody } from "../../schemas/urdf";
import {
  buildSimulation,
  clearDeadline,
  DeadlineExceeded,
  DivergenceError,
  InputError,
  loadSnapshot,
  ParameterError,
  parseRecording,
  RecordingError,
  replayRecording,
  type Simulation,
  type SimulationSnapshotSpec,
  SnapshotError,
  SolverError,
  setDeadline,
} from "../engine/index";
import { importParsed, UrdfImportError } from "../formats/urdf/index";
import { ApiError } from "./errors";
import { ContactWindow, encode, encodeScene, encodeStateFrame } from "./frames";
import { trackLiveHeap } from "./live-heap";
import {
  type FrameEncoding,
  type InputLogAt,
  type InputLogPart,
  logLines,
  MAX_TIMER_MS,
  modelCounts,
  PROGRESS_MS,
  RECORDING_STATES_MAX_BYTES,
  type SessionSnapshot,
  SHORTFALLS,
  type ShortfallFigure,
  STEP_BUCKETS,
  type Subscription,
  type WorkerErrorInfo,
  type WorkerInit,
  type WorkerNotice,
  type WorkerOutbound,
  type WorkerRequest,
  type WorkerResult,
} from "./protocol";
import {
  sessionRecording,
  snapshotForLog,
  snapshotWithHistory,
  splitHistory,
} from "./recording-history";
import { parseModelBody } from "./request-body";
import { engineSnapshotBytes } from "./sessions/checkpoints";
import { mib, noRoomInfo, RECORDED_INPUT_BYTES, sessionMemoryBytes } from "./sessions/memory";

/** Wall time (ms) of stepping between two yields. */
export const CHUNK_MS = 10;

/** A run behind real time by more than this (s of wall time) drops the backlog. */
export const MAX_LAG_S = 0.25;
/**
 * Wall time (ms) a run waits at its checkpoint for the event loop's `checkpointed` unless
 * CHECKPOINT_WAIT_MS says otherwise (WorkerInit.checkpointWaitMs): a store that hangs (a
 * frozen Redis keeps its connection) must not stop the run for good.
 */
export const CHECKPOINT_WAIT_MS = 2000;
const STATS_MS = 250;

type Post = (msg: WorkerOutbound, transfer?: ArrayBuffer[]) => void;

/** Requests that run in their session's queue (they post `started` when their turn comes). */
const QUEUED = new Set<WorkerRequest["kind"]>([
  "assemble",
  "step",
  "run",
  "pause",
  "reset",
  "update",
  "inputs",
]);

class Failure extends Error {
  constructor(readonly info: WorkerErrorInfo) {
    super(info.message);
  }
}

interface RunState {
  realtimeFactor: number | null;
  until: number | null;
  /** wall clock (performance.now, ms) and simulated time at the pacing reference */
  wall0: number;
  sim0: number;
  /** the same reference as epoch ms (what clients see) */
  wallStart: number;
  simStart: number;
  /** times the backlog was dropped (the run could not keep up) */
  lagResets: number;
}

class WorkerSession {
  status: SessionStatusName = "ready";
  message: string | null = null;
  run: RunState | null = null;
  /** the step k·K its run waits at until that checkpoint is written (null: not waiting) */
  checkpointWait: number | null = null;
  /** performance.now() when it stops waiting regardless (CHECKPOINT_WAIT_MS) */
  checkpointWaitEnd = 0;
  /**
   * The step of the checkpoint the store has confirmed (a `kept` notice; null: none), which
   * every frame carries as keptStep. A run that went on past CHECKPOINT_WAIT_MS streams
   * steps past it: those a crash would lose.
   */
  keptStep: number | null = null;
  subscriptions: Subscription[] = [];
  /** one per subscription class with contactPeak: its contact figures since its last frame */
  windows: ContactWindow[] = [];
  cancelled = false;
  queue: Promise<unknown> = Promise.resolve();
  lastProgress = 0;
  /** test hook: the next step throws this (a solver failure that is not a divergence) */
  throwOnStep: string | null = null;
  /** what started its recording and when (schemas/recording.ts RecordingSince) */
  since: RecordingSinceOut = { cause: "created", at: new Date().toISOString() };
  /**
   * its recording before the simulation's own began, at the restore from a snapshot that
   * carried it (recording-history.ts): null when the engine's recording is the whole of it
   */
  history: RecordingHistorySpec | null = null;
  /**
   * Its recording's input log (protocol.ts InputLogAt): the log's id, new at every start of
   * the recording, and what the store holds of it (null: nothing); `logging`: its store
   * keeps one, so its checkpoints carry the inputs since (recording-history.ts snapshotForLog).
   */
  logId: string = randomUUID();
  logged: InputLogAt | null = null;
  logging = false;
  constructor(
    readonly id: string,
    readonly sim: Simulation,
    /** its estimated bytes, heap and ArrayBuffers (sessions/memory.ts), counted against the worker's budget */
    readonly memoryBytes: number,
  ) {}

  /** Its recording starts anew (`cause`), in a new input log. */
  startRecording(cause: RecordingCauseName): void {
    this.since = since(cause);
    this.history = null;
    this.logId = randomUUID();
    this.logged = null;
  }
}

const utf8 = new TextEncoder();

export class WorkerRuntime {
  private readonly sessions = new Map<string, WorkerSession>();
  /** the end of the last replay queued on this worker (inReplayTurn): replays run one at a time */
  private replays: Promise<void> = Promise.resolve();
  private readonly inflight: Int32Array;
  private readonly buckets = new Float64Array(STEP_BUCKETS.length + 1);
  private stepsSinceStats = 0;
  private sumSinceStats = 0;
  /** Steps short of each of SHORTFALLS' tolerances since the last stats message. */
  private readonly shortSinceStats = new Float64Array(SHORTFALLS.length);
  private readonly statsTimer: ReturnType<typeof setInterval>;
  private readonly liveHeap = trackLiveHeap();
  /** running sessions, served in turn by pump() */
  private readonly running: WorkerSession[] = [];
  private turn = 0;
  /** Snapshots taken so far (SessionSnapshot.seq: the order the event loop applies them in). */
  private snapshotSeq = 0;
  private pumpImmediate: ReturnType<typeof setImmediate> | null = null;
  private pumpTimer: ReturnType<typeof setTimeout> | null = null;
  private pumpAt = 0;
  /** CHECKPOINT_EVERY_STEPS (0: no checkpoints from the run loop) */
  private readonly checkpointEvery: number;

  constructor(
    private readonly init: WorkerInit,
    private readonly post: Post,
  ) {
    this.inflight = new Int32Array(init.inflight);
    this.checkpointEvery = init.checkpointEverySteps ?? 0;
    this.statsTimer = setInterval(() => this.flushStats(), STATS_MS);
    this.statsTimer.unref?.();
  }

  /** Entry for every message from the event loop. */
  handle(msg: WorkerRequest | WorkerNotice): void {
    switch (msg.kind) {
      case "subscriptions": {
        const s = this.sessions.get(msg.sessionId);
        if (!s) return;
        s.subscriptions = msg.subscriptions;
        // a class that stays keeps its window: a new subscriber does not cut the others' short
        s.windows = msg.subscriptions
          .filter((sub) => sub.fields.includes("contactPeak"))
          .map(
            (sub) =>
              s.windows.find((w) => w.key === sub.key && w.every === sub.every) ??
              new ContactWindow(sub.key, sub.every),
          );
        return;
      }
      case "cancel": {
        // the session is being deleted (its `delete` follows): it stops now
        const s = this.sessions.get(msg.sessionId);
        if (s) {
          s.cancelled = true;
          this.stopRun(s);
        }
        return;
      }
      case "checkpointed": {
        const s = this.sessions.get(msg.sessionId);
        if (s && s.checkpointWait === msg.step) {
          s.checkpointWait = null;
          if (s.run) this.wake(0);
        }
        return;
      }
      case "kept": {
        const s = this.sessions.get(msg.sessionId);
        if (s) {
          s.keptStep = msg.step;
          // what its store holds of this recording's log: its next checkpoint starts there
          if (msg.log !== undefined && (msg.log === null || msg.log.id === s.logId))
            s.logged = msg.log;
        }
        return;
      }
      case "shutdown":
        for (const s of this.sessions.values()) this.stopRun(s);
        clearInterval(this.statsTimer);
        this.flushStats();
        this.liveHeap.stop();
        return;
    }
    void this.dispatch(msg);
  }

  private async dispatch(msg: WorkerRequest): Promise<void> {
    let s: WorkerSession | undefined;
    // a replay posts `started` when its turn among the worker's replays comes (inReplayTurn)
    if (!QUEUED.has(msg.kind) && !(msg.kind === "recording" && msg.every !== null))
      this.post({ kind: "started", id: msg.id });
    try {
      let result: WorkerResult;
      switch (msg.kind) {
        case "open": {
          const opened = this.underDeadline("building the session", () =>
            this.open(msg.sessionId, msg.body, msg.maxBodies, msg.admit !== false),
          );
          s = opened.session;
          s.startRecording(opened.cause);
          result = this.created(s, opened.name);
          break;
        }
        case "assembleModel":
          result = this.assembleModel(msg.body, msg.maxBodies);
          break;
        case "importUrdf":
          result = await importUrdfBody(msg.body, msg.maxBodies);
          break;
        case "assemble":
          s = this.get(msg.sessionId);
          result = await this.locked(s, msg.id, () =>
            this.assemble(s as WorkerSession, msg.options, msg.apply),
          );
          break;
        case "state":
          s = this.get(msg.sessionId);
          result = { kind: "state", state: this.stateBytes(s) };
          break;
        case "snapshot": {
          s = this.get(msg.sessionId);
          result = {
            kind: "frame",
            step: s.sim.stepCount,
            bytes: encodeStateFrame(s.sim.state(), msg.encoding.fields, msg.encoding.format, {
              keptStep: s.keptStep,
            }),
          };
          break;
        }
        case "export": {
          // a read: between two chunks the simulation is at a step boundary
          s = this.get(msg.sessionId);
          if (msg.recording && msg.log !== undefined) {
            // the store's log is what it has confirmed: newer than a `kept` notice may be
            s.logging = true;
            s.logged = msg.log;
            result = this.exportForLog(s);
            break;
          }
          result = {
            kind: "exported",
            bytes: engineSnapshotBytes(msg.recording ? this.exportOf(s) : s.sim.snapshot()),
          };
          break;
        }
        case "restore": {
          const { sessionId, snapshot, status, message } = msg;
          s = this.underDeadline("restoring the session", () =>
            this.restore(
              sessionId,
              snapshot,
              status,
              message,
              false,
              msg.admit !== false,
              msg.admit === false,
              msg.inputs,
            ),
          );
          // admitted once (admit false): its own checkpoint coming back; else a fork
          s.since = s.history?.since ?? since(msg.admit === false ? "restored" : "fork");
          // its recording carried on goes on in the log its store holds (when it holds
          // the inputs the history starts with); else its checkpoints start a new one
          s.logging = msg.log !== undefined;
          if (msg.log && s.history && s.history.inputs.length >= msg.log.count) {
            s.logId = msg.log.id;
            s.logged = msg.log;
          }
          result = this.created(s, msg.name);
          break;
        }
        case "step":
          s = this.get(msg.sessionId);
          // the limit runs from the request's turn (protocol.ts)
          result = await this.locked(s, msg.id, () =>
            this.step(s as WorkerSession, msg.steps, Date.now() + msg.limitMs),
          );
          break;
        case "run":
          s = this.get(msg.sessionId);
          await this.locked(s, msg.id, () =>
            this.startRun(s as WorkerSession, msg.realtimeFactor, msg.until),
          );
          result = { kind: "ok" };
          break;
        case "pause":
          s = this.get(msg.sessionId);
          await this.locked(s, msg.id, () => this.pause(s as WorkerSession));
          result = { kind: "ok" };
          break;
        case "reset":
          s = this.get(msg.sessionId);
          result = await this.locked(s, msg.id, () => this.reset(s as WorkerSession));
          break;
        case "update":
          s = this.get(msg.sessionId);
          await this.locked(s, msg.id, () => this.update(s as WorkerSession, msg.patch));
          result = { kind: "ok" };
          break;
        case "delete":
          s = this.sessions.get(msg.sessionId);
          if (s) this.drop(s);
          s = undefined;
          result = { kind: "ok" };
          break;
        case "inputs":
          s = this.get(msg.sessionId);
          result = await this.locked(s, msg.id, () =>
            this.inputs(s as WorkerSession, msg.inputs, msg.step),
          );
          break;
        case "recording":
          // a read: the recording is taken at once (between two chunks the simulation is at
          // a step boundary), its replay runs on a simulation of its own
          s = this.get(msg.sessionId);
          result = await this.recording(s, msg.id, msg.every, msg.maxSteps);
          break;
        case "test":
          this.testHook(msg.hook);
          result = { kind: "ok" };
          break;
      }
      this.reply(msg.id, { ok: true, result }, s);
    } catch (err) {
      const info: WorkerErrorInfo =
        err instanceof Failure
          ? err.info
          : err instanceof ApiError
            ? failureInfo(err)
            : { code: "solver_error", message: (err as Error)?.message ?? String(err) };
      this.reply(msg.id, { ok: false, error: info }, s);
    }
  }

  private reply(
    id: number,
    body: { ok: true; result: WorkerResult } | { ok: false; error: WorkerErrorInfo },
    s: WorkerSession | undefined,
  ): void {
    const session = s && this.isLive(s) ? this.snapshot(s) : null;
    const transfer: ArrayBuffer[] = [];
    if (body.ok) {
      const r = body.result;
      if (r.kind === "created")
        transfer.push(
          r.state.buffer as ArrayBuffer,
          r.origin.model.buffer as ArrayBuffer,
          r.scene.json.buffer as ArrayBuffer,
          r.scene.msgpack.buffer as ArrayBuffer,
        );
      else if (r.kind === "state") transfer.push(r.state.buffer as ArrayBuffer);
      else if (r.kind === "frame" && r.bytes) transfer.push(r.bytes.buffer as ArrayBuffer);
      else if (r.kind === "exported" || r.kind === "imported")
        transfer.push(r.bytes.buffer as ArrayBuffer);
      else if (r.kind === "assembly") {
        transfer.push(r.result.buffer as ArrayBuffer);
        if (r.state) transfer.push(r.state.buffer as ArrayBuffer);
      }
      this.post({ kind: "reply", id, ok: true, result: r, session }, transfer);
    } else this.post({ kind: "reply", id, ok: false, error: body.error, session });
  }

  private snapshot(s: WorkerSession): SessionSnapshot {
    return {
      seq: ++this.snapshotSeq,
      status: s.status,
      time: s.sim.time,
      step: s.sim.stepCount,
      dt: s.sim.solver.dt,
      message: s.message,
      run: s.run
        ? {
            realtimeFactor: s.run.realtimeFactor,
            until: s.run.until,
            wallStart: s.run.wallStart,
            simStart: s.run.simStart,
            lagResets: s.run.lagResets,
          }
        : null,
      recordedInputs: recordedInputs(s),
    };
  }

  private progress(s: WorkerSession): void {
    s.lastProgress = performance.now();
    this.post({ kind: "progress", sessionId: s.id, session: this.snapshot(s) });
  }

  private get(id: string): WorkerSession {
    const s = this.sessions.get(id);
    if (!s) throw new Failure({ code: "not_found", message: `no session "${id}" on this worker` });
    if (s.cancelled) throw deletedFailure(id);
    return s;
  }

  /** Whether `s` is still the session of its id here (not deleted). */
  private isLive(s: WorkerSession): boolean {
    return !s.cancelled && this.sessions.get(s.id) === s;
  }

  /**
   * Deletes a session: its run stops and it leaves the map at once; the operations queued
   * on it fail with not_found when their turn comes (locked), so none of them runs on it —
   * none restarts its run — and nothing keeps a reference to it once they have answered.
   */
  private drop(s: WorkerSession): void {
    s.cancelled = true;
    this.stopRun(s);
    if (this.sessions.get(s.id) === s) this.sessions.delete(s.id);
    s.subscriptions = [];
    s.windows = [];
  }

  /**
   * Runs fn after every earlier mutating operation of the session has finished, and tells
   * the event loop when it starts (`started` for request `id`: its watchdog times the
   * request from there). A session deleted meanwhile: fn does not run, not_found.
   */
  private locked<T>(s: WorkerSession, id: number, fn: () => T | Promise<T>): Promise<T> {
    const p = s.queue.then(() => {
      if (!this.isLive(s)) throw deletedFailure(s.id);
      this.post({ kind: "started", id });
      return fn();
    });
    s.queue = p.catch(() => undefined);
    return p;
  }

  /**
   * Runs a synchronous computation (a build, an assembly) under the engine's deadline,
   * REQUEST_TIMEOUT_MS from now (the solvers' long loops check it): past it, DeadlineExceeded
   * becomes 504 `timeout` naming the limit, instead of the watchdog replacing the worker.
   */
  private underDeadline<T>(what: string, fn: () => T): T {
    setDeadline(this.init.stepLimitMs);
    try {
      return fn();
    } catch (err) {
      if (err instanceof DeadlineExceeded) throw this.timeLimitFailure(what);
      throw err;
    } finally {
      clearDeadline();
    }
  }

  private timeLimitFailure(what: string, details: Record<string, unknown> = {}): Failure {
    return new Failure({
      code: "timeout",
      message: `${what} ran past the time limit (REQUEST_TIMEOUT_MS, ${this.init.stepLimitMs} ms) and was stopped`,
      details: { ...details, limit: "REQUEST_TIMEOUT_MS", limitMs: this.init.stepLimitMs },
    });
  }

  /**
   * A session from the JSON text of a create body, parsed and validated here rather than on
   * the event loop (src/server/request-body.ts): from a model, a snapshot (its status kept,
   * running → paused) or a recording (at its start, inputs pending). Errors carry the
   * paths from the body's root, as the route's own validation would.
   */
  private open(
    id: string,
    bytes: Uint8Array,
    maxBodies: number,
    bounded: boolean,
  ): { session: WorkerSession; name: string; cause: RecordingCauseName } {
    const body = parseModelBody(CreateSessionBody, bytes, maxBodies);
    if (body.model !== undefined)
      return {
        session: this.create(id, body.model, bounded),
        name: body.model.name,
        cause: "created",
      };
    if (body.snapshot !== undefined) {
      const { session, simulation } = body.snapshot;
      return {
        session: this.restore(
          id,
          simulation,
          session.status,
          session.message,
          bounded,
          bounded,
          false,
        ),
        name: session.name,
        cause: "snapshot",
      };
    }
    const recording = body.recording as RecordingSpec;
    return {
      session: this.replay(id, recording, bounded),
      name: recording.model.name,
      cause: "recording",
    };
  }

  /** The answer to a request that made a session: its scene, state and what the event loop keeps. */
  private created(s: WorkerSession, name: string): WorkerResult {
    const model = s.sim.model;
    return {
      kind: "created",
      scene: encodeScene(s.sim.scene()),
      state: this.stateBytes(s),
      origin: {
        name,
        counts: modelCounts(model),
        memoryBytes: s.memoryBytes,
        model: utf8.encode(JSON.stringify(model)),
      },
    };
  }

  /** A session from a validated model (paths of engine failures under "model"). */
  private create(id: string, model: ModelSpec, bounded: boolean): WorkerSession {
    if (this.sessions.has(id))
      throw new Failure({ code: "conflict", message: `session "${id}" exists` });
    const bytes = this.admit(model, bounded);
    let sim: Simulation;
    try {
      sim = buildSimulation(model);
    } catch (err) {
      if (err instanceof DeadlineExceeded) throw err;
      throw new Failure({
        code: "invalid_model",
        message: `the engine cannot build this model: ${(err as Error)?.message ?? err}`,
        details: { issues: [{ path: ["model"], message: String((err as Error)?.message ?? err) }] },
      });
    }
    // an actuator command or a load whose effect is a blow-up at once: refused as the input
    // setting it would be (paths under "model"), not left to end the first step diverged
    const issues = underPath(["model"], sim.commandIssues());
    if (issues.length > 0)
      throw new Failure({
        code: "invalid_model",
        message: `invalid body: ${issues[0].path.join(".")}: ${issues[0].message}`,
        details: { part: "body", issues },
      });
    return this.keep(id, sim, bytes, "invalid_model", ["model"]);
  }

  /**
   * The estimated bytes (heap and ArrayBuffers) of a session of `model` (sessions/memory.ts),
   * checked against what the worker's sessions may hold (init.sessionMemoryBytes, WORKER_SESSION_MEMORY_MB)
   * before the model is built: a refused model costs its validation only, not its build
   * (about 2.6 times what the session then keeps, sessions/memory.ts), which for a model
   * far past the budget could take the worker's time and run its heap out. Synchronous, so
   * concurrent creations on one worker are counted one after the other. `bounded` false: a
   * session admitted once coming back (protocol.ts `admit`), counted but never refused.
   * `inputs`: the inputs it starts with pending (a recording's), which its recording keeps
   * once applied, checked at RECORDED_INPUT_BYTES each with the model (the refusal's
   * sessionBytes counts them) but not in the bytes returned (heldBytes counts them as the
   * recording takes them).
   */
  private admit(model: ModelSpec, bounded: boolean, inputs = 0): number {
    const bytes = sessionMemoryBytes(model);
    const budget = this.init.sessionMemoryBytes;
    if (budget === undefined || !bounded) return bytes;
    const held = this.heldBytes();
    const need = bytes + RECORDED_INPUT_BYTES * inputs;
    if (held + need > budget) throw new Failure(noRoomInfo(need, held, budget));
    return bytes;
  }

  /** The estimated memory of this worker's sessions: their models' and their recordings'. */
  private heldBytes(): number {
    let held = 0;
    for (const s of this.sessions.values())
      held += s.memoryBytes + RECORDED_INPUT_BYTES * recordedInputs(s);
    return held;
  }

  /**
   * Refuses (507 insufficient_memory) `count` inputs or patches the session's recording
   * would keep when they take the worker's sessions past WORKER_SESSION_MEMORY_MB
   * (memory.ts RECORDED_INPUT_BYTES): a recording keeps every input since its start, up to
   * 100 000 (then it is truncated and keeps no more, so a full one is never refused).
   */
  private checkRecordingRoom(s: WorkerSession, count: number): void {
    const budget = this.init.sessionMemoryBytes;
    if (budget === undefined || s.sim.recordedInputs().full) return;
    const held = this.heldBytes();
    const bytes = RECORDED_INPUT_BYTES * count;
    if (held + bytes <= budget) return;
    const info = noRoomInfo(bytes, held, budget);
    throw new Failure({
      ...info,
      message: `${count} more input(s) would make the recordings and sessions of this session's solver worker hold ${mib(held + bytes)}, past the ${mib(budget)} its sessions may hold (WORKER_SESSION_MEMORY_MB): a recording keeps every input since its start; reset or delete a session to free it`,
    });
  }

  /**
   * Refuses a client's snapshot holding more inputs pending than MAX_PENDING_INPUTS (400
   * naming it): the format holds up to its own MAX_PENDING_INPUTS (100 000), and every
   * answered change of such a session would rewrite them all in its checkpoint (see
   * checkPendingRoom). The server's own checkpoints and forks are not refused: a session
   * kept under a larger limit is not lost when the limit is lowered.
   */
  private checkRestoredPending(snap: SimulationSnapshotSpec): void {
    this.checkClientPending(snap.controls?.pending.length ?? 0, "snapshot", [
      "snapshot",
      "simulation",
      "controls",
      "pending",
    ]);
  }

  /** The 400 of checkRestoredPending: `pending` past the limit. */
  private checkClientPending(pending: number, what: string, path: string[]): void {
    const max = this.init.maxPendingInputs ?? MAX_PENDING_INPUTS;
    if (pending <= max) return;
    const message = `${pending} inputs pending, above MAX_PENDING_INPUTS (${max}), the most a session holds scheduled for later steps`;
    throw new Failure({
      code: "invalid_request",
      message: `invalid ${what}: ${path.join(".")}: ${message}`,
      details: {
        part: "body",
        issues: [{ path, message }],
        limit: "MAX_PENDING_INPUTS",
        max,
      },
    });
  }

  /**
   * A new session's simulation kept, once its energy is known to be finite: a state whose
   * energy overflows double precision (a velocity of 1e300 m/s, a spring's rest length of
   * 1e300 m, a mass of 1e300 kg 1e10 m up, a box 1e308 m long) has an energy reference of
   * ±Infinity or NaN, which its snapshot writes as JSON null — a document no server
   * restores, so the session's checkpoints could not bring it back after a restart or a
   * worker loss. Refused at the door instead (400). `path` is where the model is in the
   * body: the issue's path goes on to the body, force or joint and its field responsible
   * (Simulation.energyOverflow) when the state is the model's own, not a snapshot's
   * (`atModel` false: the path stays the snapshot's).
   */
  private keep(
    id: string,
    sim: Simulation,
    memoryBytes: number,
    code: "invalid_model" | "invalid_request",
    path: (string | number)[],
    atModel = true,
  ): WorkerSession {
    const overflow = sim.energyOverflow();
    if (overflow !== null) {
      const at = atModel ? [...path, ...overflow.path] : path;
      const issue = `the energy at t = ${sim.time} s: ${overflow.message}`;
      throw new Failure({
        code,
        message: `invalid body: ${at.join(".")}: ${issue}`,
        details: { part: "body", issues: [{ path: at, message: issue }] },
      });
    }
    const s = new WorkerSession(id, sim, memoryBytes);
    this.sessions.set(id, s);
    return s;
  }

  /**
   * A session continuing from an engine snapshot (issue paths from the session document's
   * root: ["snapshot", "simulation", ...]). A session that was running comes back paused.
   * Admitted by its model's estimate before the model is built (admit; `bounded` false: not
   * refused); `client`: the snapshot is a client's (a create body), held to
   * MAX_PENDING_INPUTS too.
   */
  private restore(
    id: string,
    snapshot: unknown,
    status: SessionStatusName,
    message: string | null,
    client: boolean,
    bounded: boolean,
    /** its own checkpoint: the recording it carries is carried on (else its own starts here) */
    carry: boolean,
    /** the recording's logged inputs, which go before those the snapshot's recording holds */
    logged?: Uint8Array,
  ): WorkerSession {
    if (this.sessions.has(id))
      throw new Failure({ code: "conflict", message: `session "${id}" exists` });
    let sim: Simulation;
    let bytes = 0;
    let history: RecordingHistorySpec | null = null;
    try {
      // a fork and an in-memory checkpoint send the snapshot as its JSON bytes
      const split = splitHistory(
        snapshot instanceof Uint8Array ? JSON.parse(new TextDecoder().decode(snapshot)) : snapshot,
      );
      if (carry) history = historyFor(split.engine, withLogged(split.history, logged));
      sim = loadSnapshot(split.engine, (snap) => {
        if (client) this.checkRestoredPending(snap);
        bytes = this.admit(snap.model, bounded);
      });
    } catch (err) {
      if (err instanceof DeadlineExceeded || err instanceof Failure) throw err;
      if (err instanceof SnapshotError) {
        // paths from the body's root, in the message too
        const issues = underPath(["snapshot", "simulation"], err.issues);
        throw new Failure({
          code: "invalid_request",
          message: `invalid snapshot: ${issuesSummary(issues, 5)}`,
          details: { part: "body", issues },
        });
      }
      throw new Failure({
        code: "invalid_request",
        message: `the engine cannot restore this snapshot: ${(err as Error)?.message ?? err}`,
        details: {
          part: "body",
          issues: [{ path: ["snapshot"], message: String((err as Error)?.message ?? err) }],
        },
      });
    }
    const s = this.keep(id, sim, bytes, "invalid_request", ["snapshot", "simulation"], false);
    s.history = history;
    s.status = status === "running" ? "paused" : status;
    s.message = s.status === "diverged" || s.status === "error" ? message : null;
    return s;
  }

  /** The session's snapshot with its recording so far (recording-history.ts). */
  private exportOf(s: WorkerSession): SimulationSnapshotSpec {
    return snapshotWithHistory(s.sim, s.history, s.since);
  }

  /** `exportOf` for a store that keeps the inputs as a log: the inputs since its log apart. */
  private exportForLog(s: WorkerSession): {
    kind: "exported";
    bytes: Uint8Array;
    log?: InputLogPart;
  } {
    const { snapshot, log } = snapshotForLog(s.sim, s.history, s.since, s.logId, s.logged);
    const bytes = engineSnapshotBytes(snapshot);
    return log ? { kind: "exported", bytes, log } : { kind: "exported", bytes };
  }

  private stateBytes(s: WorkerSession): Uint8Array {
    return utf8.encode(JSON.stringify(s.sim.state()));
  }

  private requireSteppable(s: WorkerSession, what: string): void {
    if (s.status === "running" || s.status === "diverged" || s.status === "error")
      throw new Failure({
        code: "conflict",
        message: `session "${s.id}" is ${s.status}: ${what}`,
        details: { session: s.id, status: s.status },
      });
  }

  /**
   * Advances at most `max` steps for at most `budgetMs`, sending due stream frames after
   * every step. Returns the steps done. A divergence or solver failure changes the status
   * (diverged / error), stops a run and is rethrown as a Failure whose stepsDone counts
   * `doneBefore` (the request's earlier chunks) with this chunk's.
   */
  private advance(
    s: WorkerSession,
    max: number,
    budgetMs: number,
    doneBefore = 0,
    stepDeadline = Number.POSITIVE_INFINITY,
  ): number {
    const start = performance.now();
    let done = 0;
    try {
      while (done < max && !s.cancelled) {
        const t0 = performance.now();
        if (s.throwOnStep !== null) {
          const m = s.throwOnStep;
          s.throwOnStep = null;
          throw new Error(m);
        }
        // a step request's own deadline, or a run's per-step limit (whichever is sooner)
        setDeadline(Math.min(this.init.stepLimitMs, stepDeadline - Date.now()));
        const time = s.sim.time;
        s.sim.step(1);
        const t1 = performance.now();
        this.recordStep((t1 - t0) / 1000, s.sim.lastStepStats);
        done++;
        if (s.subscriptions.length > 0) this.emitDue(s, s.sim.time - time);
        if (t1 - start >= budgetMs) break;
      }
    } catch (err) {
      clearDeadline();
      // a step request's deadline passed inside a step: that step is undone (the state is
      // the last good one) and the request times out, the session stays steppable
      if (
        err instanceof DeadlineExceeded &&
        stepDeadline !== Number.POSITIVE_INFINITY &&
        Date.now() >= stepDeadline
      )
        throw new Failure({
          code: "timeout",
          message: `step request stopped at the time limit after ${doneBefore + done} of ${doneBefore + max} steps (inside step ${s.sim.stepCount + 1}, undone)`,
          details: {
            session: s.id,
            stepsDone: doneBefore + done,
            stepsRequested: doneBefore + max,
            time: s.sim.time,
            step: s.sim.stepCount,
          },
        });
      this.stopRun(s);
      // A numerical failure of the step (SolverError: a singular iteration matrix, a contact
      // solver gone NaN, an allocation the model's size cannot have) is the model's, as a
      // blow-up is: `diverged`, last good state kept, 422. Anything else is ours: `error`.
      const diverged =
        err instanceof DivergenceError ||
        err instanceof SolverError ||
        err instanceof DeadlineExceeded;
      s.status = diverged ? "diverged" : "error";
      s.message = diverged
        ? err instanceof DeadlineExceeded
          ? `${err.message} (REQUEST_TIMEOUT_MS); the state is the last good step's: change the solver settings (fewer iterations, a cheaper solver, a smaller model) and continue`
          : (err as Error).message
        : `solver failed: ${(err as Error)?.message ?? String(err)}`;
      this.progress(s);
      throw new Failure({
        code: diverged ? "diverged" : "solver_error",
        message: s.message,
        details: {
          session: s.id,
          time: s.sim.time,
          step: s.sim.stepCount,
          stepsDone: doneBefore + done,
        },
      });
    }
    clearDeadline();
    return done;
  }

  private recordStep(seconds: number, stats: Readonly<Record<ShortfallFigure, boolean>>): void {
    this.stepsSinceStats++;
    this.sumSinceStats += seconds;
    let i = 0;
    while (i < STEP_BUCKETS.length && seconds > STEP_BUCKETS[i]) i++;
    this.buckets[i]++;
    for (let k = 0; k < SHORTFALLS.length; k++)
      if (!stats[SHORTFALLS[k][1]]) this.shortSinceStats[k]++;
  }

  private flushStats(): void {
    const heap = getHeapStatistics();
    this.post({
      kind: "stats",
      steps: this.stepsSinceStats,
      buckets: Array.from(this.buckets),
      sum: this.sumSinceStats,
      short: Array.from(this.shortSinceStats),
      heapUsed: heap.used_heap_size,
      external: heap.external_memory,
      liveHeap: this.liveHeap.bytes,
    });
    this.stepsSinceStats = 0;
    this.sumSinceStats = 0;
    this.buckets.fill(0);
    this.shortSinceStats.fill(0);
  }

  /**
   * After a step of h seconds: adds it to the contact windows, then sends the frames of the
   * subscriptions due at the current step.
   */
  private emitDue(s: WorkerSession, h: number): void {
    if (s.windows.length > 0) {
      const force = s.sim.contactNormalForce;
      for (const w of s.windows) w.add(force, h);
    }
    const step = s.sim.stepCount;
    let due: FrameEncoding[] | null = null;
    for (const sub of s.subscriptions) {
      if (step % sub.every !== 0) continue;
      due ??= [];
      if (!due.some((e) => e.key === sub.key)) due.push(sub);
    }
    if (due) this.emitFrames(s, due, false);
  }

  private emitFrames(s: WorkerSession, encodings: FrameEncoding[], forced: boolean): void {
    // Back-pressure: when the event loop has not yet written out FRAME_QUEUE_BYTES of our
    // earlier frames, drop this one (subscribers see it in their `dropped` counts).
    // A dropped frame leaves the contact windows as they are: the next frame covers its steps.
    if (Atomics.load(this.inflight, 0) > this.init.frameQueueBytes) return;
    const state = s.sim.state();
    // the windows this frame closes: of its encodings' classes, every one due now
    const closing = s.windows.filter(
      (w) => (forced || state.step % w.every === 0) && encodings.some((e) => e.key === w.key),
    );
    const frames = encodings.map((e) => {
      // classes that share an encoding share its bytes: the longest of their windows
      let longest: ContactWindow | undefined;
      for (const w of closing)
        if (w.key === e.key && (longest === undefined || w.steps > longest.steps)) longest = w;
      return {
        key: e.key,
        bytes: encodeStateFrame(state, e.fields, e.format, {
          keptStep: s.keptStep,
          peak: longest?.figures(),
        }),
      };
    });
    for (const w of closing) w.clear();
    const bytes = frames.reduce((n, f) => n + f.bytes.byteLength, 0);
    Atomics.add(this.inflight, 0, bytes);
    this.post(
      { kind: "frame", sessionId: s.id, step: state.step, forced, frames, bytes },
      frames.map((f) => f.bytes.buffer as ArrayBuffer),
    );
  }

  /** A frame of every subscribed encoding now (off the `every` grid: reset, inputs, assembly). */
  private emitForced(s: WorkerSession): void {
    const enc = this.allEncodings(s);
    if (enc.length > 0) this.emitFrames(s, enc, true);
  }

  private allEncodings(s: WorkerSession): FrameEncoding[] {
    const out: FrameEncoding[] = [];
    for (const sub of s.subscriptions) if (!out.some((e) => e.key === sub.key)) out.push(sub);
    return out;
  }

  private async step(s: WorkerSession, steps: number, deadline: number): Promise<WorkerResult> {
    this.requireSteppable(s, "it cannot step");
    let done = 0;
    while (done < steps) {
      if (s.cancelled) throw deletedFailure(s.id);
      if (Date.now() > deadline)
        throw new Failure({
          code: "timeout",
          message: `step request stopped at the time limit after ${done} of ${steps} steps`,
          details: {
            session: s.id,
            stepsDone: done,
            stepsRequested: steps,
            time: s.sim.time,
            step: s.sim.stepCount,
          },
        });
      done += this.advance(s, steps - done, CHUNK_MS, done, deadline);
      if (done < steps) await yieldToLoop();
    }
    return { kind: "state", state: this.stateBytes(s) };
  }

  private startRun(s: WorkerSession, realtimeFactor: number | null, until: number | null): void {
    if (!this.isLive(s)) throw deletedFailure(s.id);
    this.requireSteppable(s, "it cannot run");
    s.status = "running";
    s.message = null;
    const now = performance.now();
    s.run = {
      realtimeFactor,
      until,
      wall0: now,
      sim0: s.sim.time,
      wallStart: performance.timeOrigin + now,
      simStart: s.sim.time,
      lagResets: 0,
    };
    this.running.push(s);
    this.progress(s);
    this.wake(0);
  }

  /** Schedules the run pump in `delayMs` (0: as soon as the loop has handled messages). */
  private wake(delayMs: number): void {
    if (this.pumpImmediate) return;
    if (this.pumpTimer) {
      if (delayMs > 0 && this.pumpAt <= performance.now() + delayMs) return;
      clearTimeout(this.pumpTimer);
      this.pumpTimer = null;
    }
    if (delayMs <= 0) {
      this.pumpImmediate = setImmediate(() => this.pump());
    } else {
      // a run at a realtimeFactor of 1e-300 is due in 5e300 ms: woken at the longest wait a
      // timer holds, it finds nothing due and sleeps again (a longer timer fired every 1 ms)
      const wait = Math.min(delayMs, MAX_TIMER_MS);
      this.pumpAt = performance.now() + wait;
      this.pumpTimer = setTimeout(() => this.pump(), wait);
    }
  }

  /**
   * One turn of every running session of this worker: round robin, at most CHUNK_MS of
   * stepping in all (each session gets an equal share of what is left), so the worker
   * returns to its message queue at least every CHUNK_MS however many sessions run. Then
   * it sleeps until the earliest next due step (or yields at once if some session is
   * behind or runs as fast as it can).
   */
  private pump(): void {
    this.pumpImmediate = null;
    this.pumpTimer = null;
    const list = this.running.slice(); // a run may end (and leave the list) during its tick
    const n = list.length;
    if (n === 0) return;
    const start = performance.now();
    let next = Number.POSITIVE_INFINITY;
    let k = 0;
    for (; k < n; k++) {
      const used = performance.now() - start;
      if (used >= CHUNK_MS) {
        next = 0; // the others' turn comes right after the messages
        break;
      }
      const s = list[(this.turn + k) % n];
      next = Math.min(next, this.tick(s, Math.max(0.5, (CHUNK_MS - used) / (n - k))));
    }
    const m = this.running.length;
    this.turn = m > 0 ? (this.turn + k) % m : 0;
    if (m > 0 && Number.isFinite(next)) this.wake(next);
  }

  /**
   * Advances a running session by what is due, within `budgetMs`. Returns the ms until its
   * next step is due (0: behind or as fast as possible; Infinity: the run ended).
   */
  private tick(s: WorkerSession, budgetMs: number): number {
    const run = s.run;
    if (s.cancelled) {
      // deleted: out of the running list for good
      this.stopRun(s);
      return Number.POSITIVE_INFINITY;
    }
    if (!run || s.status !== "running") return Number.POSITIVE_INFINITY;
    if (s.checkpointWait !== null) {
      // `checkpointed` wakes it; without one in time it goes on (the write is stuck)
      const left = s.checkpointWaitEnd - performance.now();
      if (left > 0) return left;
      s.checkpointWait = null;
    }
    const dt = s.sim.solver.dt;
    const eps = 1e-9 * dt;
    let max = Number.POSITIVE_INFINITY;
    const now = performance.now();
    if (run.realtimeFactor !== null) {
      const target = run.sim0 + (run.realtimeFactor * (now - run.wall0)) / 1000;
      let due = Math.floor((target - s.sim.time) / dt + 1e-9);
      if (due * dt > run.realtimeFactor * MAX_LAG_S) {
        // slower than real time: forget the backlog, keep pacing from here
        this.rebase(run, now, s.sim.time);
        run.lagResets++;
        due = 1;
      }
      max = due;
    }
    if (run.until !== null) max = Math.min(max, Math.ceil((run.until - s.sim.time) / dt - 1e-9));
    // a chunk ends at the next multiple of K: the checkpoint below holds step k·K exactly
    const every = this.checkpointEvery;
    if (every > 0) max = Math.min(max, every - (s.sim.stepCount % every));
    let done = 0;
    if (max > 0) {
      try {
        done = this.advance(s, max, budgetMs);
      } catch {
        return Number.POSITIVE_INFINITY; // advance has set diverged / error and stopped the run
      }
    }
    if (s.cancelled) {
      this.stopRun(s);
      return Number.POSITIVE_INFINITY;
    }
    if (run.until !== null && s.sim.time >= run.until - eps) {
      this.stopRun(s);
      s.status = "paused";
      this.progress(s);
      return Number.POSITIVE_INFINITY;
    }
    // (a run that ended here is checkpointed by the event loop at its end instead)
    if (every > 0 && done > 0 && s.sim.stepCount % every === 0) this.postCheckpoint(s);
    if (performance.now() - s.lastProgress >= PROGRESS_MS) this.progress(s);
    if (run.realtimeFactor === null || done < max) return 0;
    const nextDue = run.wall0 + ((s.sim.time + dt - run.sim0) / run.realtimeFactor) * 1000;
    return Math.max(0, nextDue - performance.now());
  }

  /**
   * Sends a running session's snapshot at a step multiple of CHECKPOINT_EVERY_STEPS (one
   * serialization every K steps; the event loop coalesces the writes, checkpoints.ts) and
   * holds the run there until it is `checkpointed`. It carries the session's snapshot too,
   * so the record knows the exact step it holds.
   */
  private postCheckpoint(s: WorkerSession): void {
    s.checkpointWait = s.sim.stepCount;
    s.checkpointWaitEnd = performance.now() + (this.init.checkpointWaitMs ?? CHECKPOINT_WAIT_MS);
    const { bytes: engine, log } = s.logging
      ? this.exportForLog(s)
      : { bytes: engineSnapshotBytes(this.exportOf(s)), log: undefined };
    const session = this.snapshot(s);
    if (log)
      this.post({ kind: "checkpoint", sessionId: s.id, session, engine, log }, [
        engine.buffer as ArrayBuffer,
        log.lines.buffer as ArrayBuffer,
      ]);
    else
      this.post({ kind: "checkpoint", sessionId: s.id, session, engine }, [
        engine.buffer as ArrayBuffer,
      ]);
    s.lastProgress = performance.now();
  }

  private rebase(run: RunState, wall: number, time: number): void {
    run.wall0 = wall;
    run.sim0 = time;
    run.wallStart = performance.timeOrigin + wall;
    run.simStart = time;
  }

  private stopRun(s: WorkerSession): void {
    s.run = null;
    s.checkpointWait = null;
    const i = this.running.indexOf(s);
    if (i >= 0) {
      this.running.splice(i, 1);
      if (this.turn > i) this.turn--;
    }
  }

  private pause(s: WorkerSession): void {
    if (s.status === "running") {
      this.stopRun(s);
      s.status = "paused";
      this.progress(s);
    } else if (s.status === "diverged" || s.status === "error")
      throw new Failure({
        code: "conflict",
        message: `session "${s.id}" is ${s.status}: nothing to pause`,
        details: { session: s.id, status: s.status },
      });
  }

  private reset(s: WorkerSession): WorkerResult {
    this.stopRun(s);
    s.sim.reset();
    s.startRecording("reset");
    s.status = "ready";
    s.message = null;
    s.throwOnStep = null;
    for (const w of s.windows) w.clear(); // the steps they cover are undone
    this.progress(s);
    this.emitForced(s);
    return { kind: "state", state: this.stateBytes(s) };
  }

  private update(s: WorkerSession, patch: Parameters<Simulation["update"]>[0]): void {
    if (s.status === "error")
      throw new Failure({
        code: "conflict",
        message: `session "${s.id}" is error: reset it first`,
        details: { session: s.id, status: s.status },
      });
    this.checkRecordingRoom(s, 1);
    try {
      s.sim.update(patch);
    } catch (err) {
      // a setting the session's model cannot take (as request validation: 400, paths)
      if (err instanceof ParameterError) throw invalidBody(err);
      throw new Failure({
        code: "solver_error",
        message: `update failed: ${(err as Error)?.message ?? err}`,
      });
    }
    // a new dt or solver: pace from here
    if (s.run) this.rebase(s.run, performance.now(), s.sim.time);
  }

  /** Schedules inputs; the state changes they make at once are streamed as a forced frame. */
  private inputs(s: WorkerSession, inputs: InputSpec[], step: number | null): WorkerResult {
    if (s.status === "error" || s.status === "diverged")
      throw new Failure({
        code: "conflict",
        message: `session "${s.id}" is ${s.status}: reset it first`,
        details: { session: s.id, status: s.status },
      });
    this.checkPendingRoom(s, inputs.length, step);
    this.checkRecordingRoom(s, inputs.length);
    try {
      const r = s.sim.schedule(inputs, step ?? undefined);
      // applied now to a session that is not stepping: subscribers see the change
      if (r.step === s.sim.stepCount && s.status !== "running") {
        this.emitForced(s);
      }
      return { kind: "inputs", ...r };
    } catch (err) {
      if (err instanceof InputError) throw invalidBody(err);
      throw new Failure({
        code: "solver_error",
        message: `inputs failed: ${(err as Error)?.message ?? err}`,
      });
    }
  }

  /**
   * Refuses (400, naming MAX_PENDING_INPUTS) `count` inputs at `step` that would leave more
   * than init.maxPendingInputs scheduled for later steps: each answered change rewrites the
   * whole queue in the session's checkpoint (a snapshot's controls.pending), and 100 000
   * pending bodyState inputs made a 14.6 MB document exported and written for every POST
   * inputs or PATCH answer (0.6-0.9 s each with DATA_DIR). Inputs at the current step are
   * applied at once and never wait; a session created from a snapshot or a recording may
   * hold more (up to the format's MAX_PENDING_INPUTS), and takes no later ones until it
   * has stepped below the limit.
   */
  private checkPendingRoom(s: WorkerSession, count: number, step: number | null): void {
    const max = this.init.maxPendingInputs ?? MAX_PENDING_INPUTS;
    const now = s.sim.stepCount;
    if (step === null || step <= now) return;
    const after = s.sim.pendingCount + count;
    if (after <= max) return;
    const message = `${count} more would leave ${after} inputs pending, above MAX_PENDING_INPUTS (${max}), the most a session holds scheduled for later steps (step past some first, or send them closer to their step)`;
    throw new Failure({
      code: "invalid_request",
      message: `invalid body: inputs: ${message}`,
      details: {
        part: "body",
        issues: [{ path: ["inputs"], message }],
        limit: "MAX_PENDING_INPUTS",
        max,
      },
    });
  }

  /**
   * The recording, with the replayed states every `every` steps when asked: taken at once,
   * replayed in its turn among the worker's replays (inReplayTurn) on a simulation of its
   * own in chunks of CHUNK_MS (the worker serves its other sessions and messages between
   * them), within REQUEST_TIMEOUT_MS from its turn (409 naming the limit past it: a replay
   * as long is refused, not left to the watchdog).
   */
  private async recording(
    s: WorkerSession,
    id: number,
    every: number | null,
    maxSteps: number,
  ): Promise<WorkerResult> {
    let rec: ReturnType<typeof sessionRecording>;
    try {
      rec = sessionRecording(s.sim, s.history, s.since);
    } catch (err) {
      throw new Failure({
        code: "conflict",
        message: (err as Error).message,
        details: { session: s.id },
      });
    }
    if (every !== null) {
      const start = rec.start?.step ?? 0;
      if (rec.end.step - start > maxSteps)
        throw new Failure({
          code: "conflict",
          message: `the recording spans ${rec.end.step - start} steps; states are replayed for at most ${maxSteps} (ask without every, or reset to start a new recording)`,
          details: { session: s.id, steps: rec.end.step - start, limit: maxSteps },
        });
      const { states, matches } = await this.inReplayTurn(id, () =>
        this.replayStates(s, rec, every),
      );
      if (!matches)
        throw new Failure({
          code: "solver_error",
          message: "the replay did not reproduce the recorded end state",
          details: { session: s.id },
        });
      // JSON.stringify({ ...rec, since, states }), the states' texts already made
      const head = JSON.stringify(rec).slice(0, -1);
      return { kind: "exported", bytes: utf8.encode(`${head},"states":[${states.join(",")}]}`) };
    }
    return { kind: "exported", bytes: utf8.encode(JSON.stringify(rec)) };
  }

  /**
   * Runs a replay (request `id`) once the worker's replays before it have ended, posting
   * `started` then. Replays interleaved chunk by chunk shared their REQUEST_TIMEOUT_MS of
   * wall time (an audit's report: 12 concurrent replays of a 50-step 100×100 cloth's
   * recording all ended 409, each having had a twelfth of the worker). One at a time, each has the worker's time
   * between its own chunks and the other sessions' (as a step request has), and the
   * watchdog times each from its own start; the others wait, unstarted, as requests queued
   * on a session do.
   */
  private inReplayTurn<T>(id: number, replay: () => Promise<T>): Promise<T> {
    const turn = this.replays.then(() => {
      this.post({ kind: "started", id });
      return replay();
    });
    // the next one starts after a turn of the event loop: this one's answer is posted first
    this.replays = turn.then(yieldToLoop, yieldToLoop);
    return turn;
  }

  /**
   * Replays `rec` to its end on a simulation of its own, returning the states every
   * `every` steps (and the end state) and whether the end state's hash is the recorded one,
   * as the engine's replayStates does, one step at a time: it yields every CHUNK_MS, and
   * stops with 409 once REQUEST_TIMEOUT_MS of the worker's time has passed since it
   * started (the engine's deadline bounds a single step too), or with 404 when the session
   * is deleted meanwhile.
   */
  private async replayStates(
    s: WorkerSession,
    rec: ReturnType<typeof sessionRecording>,
    every: number,
  ): Promise<{ states: string[]; matches: boolean }> {
    const limit = this.init.stepLimitMs;
    const end = performance.now() + limit;
    const first = rec.start?.step ?? 0;
    const total = rec.end.step - first;
    const sim = replayRecording(rec);
    const tooLong = () =>
      new Failure({
        code: "conflict",
        message: `replaying the recording's ${total} steps for its states ran past the time limit (REQUEST_TIMEOUT_MS, ${limit} ms) after ${sim.stepCount - first} steps and was stopped: ask without every, or reset the session to start a shorter recording`,
        details: {
          session: s.id,
          steps: total,
          stepsReplayed: sim.stepCount - first,
          limit: "REQUEST_TIMEOUT_MS",
          limitMs: limit,
        },
      });
    // each state's JSON text as it is taken, within RECORDING_STATES_MAX_BYTES (WorkerInit)
    const maxBytes = this.init.recordingStatesMaxBytes ?? RECORDING_STATES_MAX_BYTES;
    const states: string[] = [];
    let bytes = 0;
    const take = () => {
      const text = JSON.stringify(sim.state());
      bytes += Buffer.byteLength(text) + 1;
      if (bytes > maxBytes)
        throw new Failure({
          code: "conflict",
          message: `the states every ${every} step(s) of the recording's ${total} steps pass ${maxBytes} bytes of JSON (RECORDING_STATES_MAX_BYTES) at step ${sim.stepCount}, after ${states.length} states: ask with a larger every, or without it`,
          details: {
            session: s.id,
            steps: total,
            every,
            statesTaken: states.length,
            limit: "RECORDING_STATES_MAX_BYTES",
            maxBytes,
          },
        });
      states.push(text);
    };
    while (sim.stepCount < rec.end.step) {
      if (!this.isLive(s)) throw deletedFailure(s.id);
      const chunkEnd = performance.now() + CHUNK_MS;
      do {
        const left = end - performance.now();
        if (left <= 0) throw tooLong();
        setDeadline(left);
        try {
          sim.step(1);
        } catch (err) {
          if (err instanceof DeadlineExceeded) throw tooLong();
          throw new Failure({
            code: "solver_error",
            message: `the replay of the recording failed at step ${sim.stepCount + 1}: ${(err as Error)?.message ?? err}`,
            details: { session: s.id },
          });
        } finally {
          clearDeadline();
        }
        if (sim.stepCount % every === 0 || sim.stepCount === rec.end.step) take();
      } while (sim.stepCount < rec.end.step && performance.now() < chunkEnd);
      if (sim.stepCount < rec.end.step) await yieldToLoop();
    }
    return { states, matches: sim.stateHash() === rec.end.hash };
  }

  /**
   * A session at a recording's start with its inputs pending (paths from the body's root);
   * `bounded`: a client's, held to the worker's memory budget, its model's estimate and its
   * pending inputs' (those after the start step and its start's pending ones: the ones at
   * the start step are applied at once, Simulation.scheduleTimed) both.
   * Not to MAX_PENDING_INPUTS: a recording is a run to replay whole, and one of a 100 Hz
   * controller holds 10 000 inputs after 100 s, which was refused (400), past which no
   * recording could be posted back; it may hold what the format keeps (100 000), as a fork
   * of a session may, and takes inputs for later steps once it has stepped below the limit
   * (checkPendingRoom). The cost is the one MAX_PENDING_INPUTS bounds for requests: each
   * checkpoint of the session rewrites the inputs still pending.
   */
  private replay(id: string, json: unknown, bounded: boolean): WorkerSession {
    if (this.sessions.has(id))
      throw new Failure({ code: "conflict", message: `session "${id}" exists` });
    let sim: Simulation;
    let bytes = 0;
    // a recording from the model's start (none from a snapshot): its state is the model's
    let atModel = false;
    try {
      const recording = parseRecording(json);
      atModel = recording.start == null;
      bytes = this.admit(recording.model, bounded, recordingPending(recording));
      sim = replayRecording(recording);
    } catch (err) {
      if (err instanceof DeadlineExceeded || err instanceof Failure) throw err;
      const issues =
        err instanceof RecordingError
          ? err.issues
          : [{ path: [], message: String((err as Error)?.message ?? err) }];
      throw new Failure({
        code: "invalid_request",
        message: (err as Error).message,
        details: {
          part: "body",
          issues: underPath(["recording"], issues),
        },
      });
    }
    return this.keep(id, sim, bytes, "invalid_request", ["recording", "model"], atModel);
  }

  /**
   * An assembly analysis of the session (`apply`: its result becomes the state). `timed`:
   * under the engine's deadline, REQUEST_TIMEOUT_MS from now (504 `timeout` past it); false
   * when the caller holds one (assembleModel).
   */
  private assemble(
    s: WorkerSession,
    options: AssemblyOptionsIn,
    apply: boolean,
    timed = true,
  ): WorkerResult {
    if (s.status === "running" || s.status === "error")
      throw new Failure({
        code: "conflict",
        message: `session "${s.id}" is ${s.status}: assembly needs a paused session`,
        details: { session: s.id, status: s.status },
      });
    // the engine puts the state back only when the analysis ends: one stopped half-way
    // (its deadline, a failure) may have moved it, so it is put back from here
    const before = timed ? s.sim.captureState() : null;
    let result: unknown;
    if (timed) setDeadline(this.init.stepLimitMs);
    try {
      result = s.sim.assemble(options, apply);
    } catch (err) {
      // options this model cannot take (a dense solver above its size): 400 with paths
      if (err instanceof ParameterError) throw invalidBody(err);
      if (!before) throw err;
      s.sim.applyState(before);
      if (err instanceof DeadlineExceeded)
        throw this.timeLimitFailure("the assembly", { session: s.id });
      throw new Failure({
        code: "solver_error",
        message: `assembly failed: ${(err as Error)?.message ?? err}`,
        details: { session: s.id },
      });
    } finally {
      if (timed) clearDeadline();
    }
    // an applied assembly restarts the recording, unless it was not performed
    // (Simulation.assemble: UNSUPPORTED_CONTACTS leaves the state and the recording)
    if (apply && (result as { exitFlag?: string }).exitFlag !== "UNSUPPORTED_CONTACTS") {
      s.startRecording("assembly");
      this.emitForced(s);
    }
    return {
      kind: "assembly",
      result: encode(result, "json"),
      state: apply ? this.stateBytes(s) : null,
    };
  }

  /**
   * Assembly of the model of an AssemblyRequest body's JSON text (validated here): the
   * build and the analysis within one REQUEST_TIMEOUT_MS (504 `timeout` past it).
   */
  private assembleModel(bytes: Uint8Array, maxBodies: number): WorkerResult {
    const { model, options } = parseModelBody(AssemblyBody, bytes, maxBodies);
    const id = `assembly-${Math.random().toString(36).slice(2)}`;
    return this.underDeadline("the assembly", () => {
      // transient (deleted below): within the heap the budget leaves for builds, not counted
      const s = this.create(id, model, false);
      try {
        return this.assemble(s, options, false, false);
      } catch (err) {
        if (err instanceof DeadlineExceeded) throw err;
        if (err instanceof Failure || err instanceof ApiError) throw err;
        throw new Failure({
          code: "solver_error",
          message: `assembly failed: ${(err as Error)?.message ?? err}`,
        });
      } finally {
        this.sessions.delete(id);
      }
    });
  }

  private testHook(hook: Extract<WorkerRequest, { kind: "test" }>["hook"]): void {
    if (!this.init.testHooks)
      throw new Failure({ code: "conflict", message: "test hooks are disabled" });
    switch (hook.action) {
      case "block": {
        // a computation that never yields (e.g. one enormous step)
        const end = Date.now() + hook.ms;
        while (Date.now() < end) {
          /* busy */
        }
        return;
      }
      case "throwOnStep":
        this.get(hook.sessionId).throwOnStep = hook.message;
        return;
      case "exit":
        process.exit(hook.code);
    }
  }
}

/** An operation on a session deleted before it ran (404 to the client). */
function deletedFailure(id: string): Failure {
  return new Failure({ code: "not_found", message: `session "${id}" was deleted` });
}

function yieldToLoop(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

/** A request the session's model cannot take, as request validation answers it: 400 with paths. */
function invalidBody(err: ParameterError | InputError): Failure {
  return new Failure({
    code: "invalid_request",
    message: `invalid body: ${err.message}`,
    details: { part: "body", issues: err.issues },
  });
}

/**
 * POST /v1/models/urdf in the worker: the body parsed and validated (400 invalid_request
 * with paths), the URDF converted (src/formats/urdf); its refusals as the service answers
 * them: 400 invalid_urdf, 422 unsupported_urdf, 413 payload_too_large, with the issues
 * (element, line, file) in details.issues.
 */
async function importUrdfBody(bytes: Uint8Array, maxBodies: number): Promise<WorkerResult> {
  const body = parseModelBody(UrdfImportBody, bytes, maxBodies);
  try {
    const result = await importParsed(body, { maxBodies });
    return { kind: "imported", bytes: utf8.encode(JSON.stringify(result)) };
  } catch (err) {
    if (!(err instanceof UrdfImportError)) throw err;
    const code =
      err.kind === "too_large"
        ? "payload_too_large"
        : err.kind === "unsupported"
          ? "unsupported_urdf"
          : "invalid_urdf";
    throw new Failure({
      code,
      message: `URDF import: ${err.message}`,
      details: { part: "body", issues: err.issues },
    });
  }
}

/** A refusal thrown as an ApiError (request-body.ts) in the worker protocol's terms. */
function failureInfo(err: ApiError): WorkerErrorInfo {
  return { code: err.code as WorkerErrorInfo["code"], message: err.message, details: err.details };
}

/**
 * The inputs a session created from a recording starts with pending: its start's pending
 * ones and its own after the start step (those at the start step are applied at once).
 */
function recordingPending(rec: RecordingSpec): number {
  const start = rec.start?.step ?? 0;
  let later = 0;
  for (const e of rec.inputs) if (e.step > start) later++;
  return (rec.start?.controls?.pending.length ?? 0) + later;
}

/**
 * The recording a snapshot carries (SimulationSnapshot.recording), validated as a client's
 * would be (a checkpoint held in memory comes unparsed): SnapshotError at ["recording", …]
 * when it is malformed or starts from a snapshot of another model.
 */
function historyFor(engine: unknown, history: unknown): RecordingHistorySpec | null {
  if (history === null) return null;
  const r = RecordingHistory.safeParse(history);
  if (!r.success) throw new SnapshotError(underPath(["recording"], issuesOf(r.error)));
  const model = (engine as { model?: unknown } | null)?.model;
  if (r.data.start !== null && JSON.stringify(r.data.start.model) !== JSON.stringify(model))
    throw new SnapshotError([
      {
        path: ["recording", "start", "model"],
        message: "the recording's start is a snapshot of another model",
      },
    ]);
  return r.data;
}

/**
 * A snapshot's recording with the logged inputs that go before its own (a checkpoint of a
 * store that keeps them as a log: protocol.ts InputLogPart lines); as it is without them.
 */
function withLogged(history: unknown, logged: Uint8Array | undefined): unknown {
  if (logged === undefined || history === null || typeof history !== "object") return history;
  const own = (history as { inputs?: unknown }).inputs;
  const count = logged.reduce((n, b) => (b === 0x0a ? n + 1 : n), 0);
  const read = logLines(logged, count);
  if (read === null || !Array.isArray(own)) return history;
  return { ...history, inputs: [...read.inputs, ...own] };
}

/** The inputs and patches a session's recording holds: its history's and the simulation's. */
function recordedInputs(s: WorkerSession): number {
  return (s.history?.inputs.length ?? 0) + s.sim.recordedInputs().entries;
}

/** A recording started now by `cause` (WorkerSession.since). */
function since(cause: RecordingCauseName): RecordingSinceOut {
  return { cause, at: new Date().toISOString() };
}
