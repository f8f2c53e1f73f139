/**
 * Sessions as the event loop sees them: a record per session (status, time, step mirrored
 * from its worker's replies and progress events), the rules of which request each status
 * allows, routing of requests to the session's worker, stream subscriptions, idle expiry.
 *
 * Status rules (409 `conflict` otherwise):
 *   step, run       ready | paused
 *   pause           ready | paused (no-op) | running
 *   PATCH           any but error
 *   assembly        ready | paused | diverged
 *   state, reset, delete, stream   any status
 * A session is idle when it has had no request and no stream subscriber for
 * SESSION_IDLE_TTL seconds; idle sessions are deleted, running or not.
 *
 * Ownership (API keys, src/server/auth.ts): every method takes the requester's key id
 * (`owner`, null without keys); a session of another key is answered 404 as if it did not
 * exist, and each key may own MAX_SESSIONS_PER_KEY sessions.
 *
 * Snapshots and checkpoints: `exportSnapshot` answers the session document (schemas/api.ts
 * Snapshot: the worker's engine snapshot bytes wrapped, never parsed here); `create` with a
 * snapshot and `fork` start a session from one. A session is checkpointed when created,
 * when it stops running (pause, `until` reached, divergence), after reset, PATCH, inputs
 * and applied assembly, every CHECKPOINT_EVERY_STEPS steps and on shutdown. Checkpoints are
 * coalesced per session: one at a time, and those asked for less than
 * CHECKPOINT_MIN_INTERVAL_MS after the previous one are deferred to that interval (the
 * latest state wins); creation, the end of a run, pause and shutdown are written at once.
 * The last checkpoint of every session is kept in memory (its engine snapshot bytes, within
 * CHECKPOINT_MEMORY_BYTES for all sessions) and, with DATA_DIR (persistence.ts), written to
 * disk; `start` restores every checkpoint on disk (same id, owner and creation time).
 *
 * A lost worker (crashed, killed, or stopped by the watchdog): its pending requests fail
 * (`worker_crashed`) and each of its sessions is rebuilt at once, live, on the least loaded
 * worker (its replacement included) from its last checkpoint — the file in DATA_DIR, or the
 * copy in memory when it is newer (a failed write) or there is no DATA_DIR — the way a
 * restart restores; a session that was running
 * runs on (unless it was lost twice within LOSS_WINDOW_MS: then it comes back paused).
 * Requests that arrive meanwhile wait for the rebuild; reads (state, snapshot, recording)
 * that were in flight on the lost worker are asked again of the rebuilt session. Only a
 * session without any checkpoint (or whose checkpoint cannot be restored) goes to `error`,
 * and `reset` rebuilds it from its model at t = 0.
 *
 * Shutdown (`beginClose`, then `close`): new sessions are refused, streams close with 1001,
 * runs stop, and every session is checkpointed first; requests still in flight
 * SHUTDOWN_TIMEOUT_MS after the start of the shutdown are answered 503 `shutting_down`;
 * then every session is checkpointed again (the steps of the requests that finished) and
 * the workers stop.
 *
 * A DELETE answers 204 only once the session's checkpoint is durably gone (persistence.ts);
 * when it cannot be, the session is kept and the DELETE answers 500 (retry it).
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { WebSocket } from "ws";
import {
  type SceneFrameOut,
  SESSION_SNAPSHOT_FORMAT,
  SESSION_SNAPSHOT_VERSION,
  type SessionOut,
  type SessionPatch,
  type SessionStatusName,
  type SnapshotOut,
  type StepRequest,
  type StreamOptions,
} from "../../schemas/api";
import type { InputSpec } from "../../schemas/input";
import type { AssemblyOptionsIn } from "../../schemas/state";
import type { Config } from "./config";
import { ApiError, conflict, notFound } from "./errors";
import { encode } from "./frames";
import type { ServerMetrics, WorkerMemory } from "./metrics";
import { CheckpointStore } from "./persistence";
import type { SceneInfo, SessionSnapshot, WorkerEvent, WorkerRequestBody } from "./protocol";
import { StreamHub } from "./stream";
import { type WorkerAnswer, WorkerFailure, WorkerPool } from "./worker-pool";

/** A session lost twice within this window comes back paused (its run is not resumed). */
const LOSS_WINDOW_MS = 60_000;
/** Time the last checkpoints of a shutdown may take once SHUTDOWN_TIMEOUT_MS has passed. */
const FINAL_CHECKPOINT_GRACE_MS = 2000;

/** The last checkpoint of a session, in memory. */
interface MemoryCheckpoint {
  /** the engine snapshot's JSON bytes */
  engine: Uint8Array;
  step: number;
  status: SessionStatusName;
  message: string | null;
}

interface SessionRecord {
  id: string;
  name: string;
  worker: number;
  /** seq of the last worker snapshot applied (see SessionSnapshot.seq) */
  seq: number;
  status: SessionStatusName;
  time: number;
  step: number;
  dt: number;
  message: string | null;
  run: SessionSnapshot["run"];
  counts: SessionOut["counts"];
  createdAt: Date;
  lastActivity: number;
  /** the validated model as UTF-8 JSON (SessionOrigin.model): rebuilds without a checkpoint */
  model: Uint8Array;
  scene: SceneInfo;
  /** the last State bytes the event loop received (served when the worker is gone) */
  lastState: Uint8Array;
  /** its worker died: the simulation is gone until a rebuild (under way, or by reset) */
  lost: boolean;
  /** the rebuild after a worker loss, while it goes on (never rejects) */
  rebuilding: Promise<void> | null;
  /** times this session was lost with its worker, within LOSS_WINDOW_MS */
  losses: number[];
  busy: number;
  /** key id of the creator (null without API keys) */
  owner: string | null;
  /** DATA_DIR: the step of the last checkpoint on disk (null: none) and whether the last attempt succeeded */
  savedStep: number | null;
  persisted: boolean;
  /** the last checkpoint held in memory (null: none, or over CHECKPOINT_MEMORY_BYTES) */
  memory: MemoryCheckpoint | null;
  /** step of the last checkpoint started */
  lastCheckpointStep: number;
  /** status of the last checkpoint taken */
  lastCheckpointStatus: SessionStatusName;
  /** Date.now() when the last checkpoint started */
  lastCheckpointAt: number;
  /** the running checkpoint loop, if any */
  checkpointing: Promise<void> | null;
  /** a checkpoint is wanted (now if urgent, else once CHECKPOINT_MIN_INTERVAL_MS has passed) */
  checkpointWanted: boolean;
  checkpointUrgent: boolean;
  checkpointTimer: ReturnType<typeof setTimeout> | null;
  /** a delete is under way: no checkpoint write starts */
  deleting: boolean;
  removing: Promise<void> | null;
  deleted: boolean;
}

/** Where a new session comes from. */
type Origin =
  /** the JSON of a create body (schemas/api.ts CreateSession), validated by the worker */
  | { body: Uint8Array }
  /** a checkpoint's session document */
  | { snapshot: SnapshotOut }
  /** the engine snapshot bytes of another session (fork) */
  | { fork: SessionRecord; bytes: Uint8Array };

export interface AssemblyAnswer {
  result: Uint8Array;
  state: Uint8Array | null;
}

export interface SessionManagerOptions {
  /** the checkpoint store (default: one on DATA_DIR when it is set); tests pass their own */
  store?: CheckpointStore | null;
}

export class SessionManager {
  private readonly records = new Map<string, SessionRecord>();
  private creating = 0;
  /** DATA_DIR: the last checkpoint failure, cleared by the next successful write (/ready). */
  private persistenceError: string | null = null;
  /** Creations in flight per API key (counted against MAX_SESSIONS_PER_KEY). */
  private readonly creatingByOwner = new Map<string, number>();
  private closing = false;
  private closingStarted: Promise<void> | null = null;
  /** Date.now() by which in-flight requests must have finished (shutdown) */
  private shutdownDeadline = Number.POSITIVE_INFINITY;
  private abortTimer: ReturnType<typeof setTimeout> | null = null;
  readonly pool: WorkerPool;
  readonly streams: StreamHub;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  readonly store: CheckpointStore | null;
  private readonly auth: boolean;
  /** bytes of the checkpoints held in memory */
  private memoryBytes = 0;
  /** memory of each worker, from its stats messages (bytes) */
  private readonly workerMemory: WorkerMemory[] = [];

  constructor(
    private readonly config: Config,
    private readonly metrics: ServerMetrics,
    private readonly log: FastifyBaseLogger,
    options: SessionManagerOptions = {},
  ) {
    this.store =
      options.store !== undefined
        ? options.store
        : config.dataDir
          ? new CheckpointStore(config.dataDir, log)
          : null;
    this.auth = config.apiKeys.length > 0;
    this.pool = new WorkerPool(
      config,
      {
        onEvent: (w, ev) => this.onEvent(w, ev),
        onWorkerLost: (w, reason) => this.onWorkerLost(w, reason),
      },
      log,
    );
    metrics.attach({
      workerBusySeconds: () => this.pool.busySeconds(),
      workerMemory: () => this.workerMemory,
      checkpointMemoryBytes: () => this.memoryBytes,
    });
    this.streams = new StreamHub(
      config.streamMaxBufferedBytes,
      {
        framesSent: (n) => metrics.framesSent.inc(n),
        framesDropped: (n) => metrics.droppedFrames.inc(n),
      },
      (id, subs) => {
        const rec = this.records.get(id);
        if (!rec) return;
        // a stream joining or leaving counts as activity (the idle clock restarts)
        rec.lastActivity = Date.now();
        if (!rec.lost)
          this.pool.notify(rec.worker, {
            kind: "subscriptions",
            sessionId: id,
            subscriptions: subs,
          });
      },
    );
  }

  async start(): Promise<void> {
    await this.pool.start();
    if (this.store) {
      await this.store.init();
      await this.restoreCheckpoints(this.store);
    }
    if (this.config.sessionIdleTtl > 0) {
      const every = Math.min(60_000, Math.max(50, (this.config.sessionIdleTtl * 1000) / 4));
      this.sweeper = setInterval(() => this.sweepIdle(), every);
      this.sweeper.unref();
    }
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** DATA_DIR: whether checkpoints reach the disk (the last failure, if any); null without it. */
  get persistence(): { ok: boolean; error: string | null } | null {
    if (!this.store) return null;
    return { ok: this.persistenceError === null, error: this.persistenceError };
  }

  get size(): number {
    return this.records.size;
  }

  byStatus(): Record<SessionStatusName, number> {
    const out: Record<SessionStatusName, number> = {
      ready: 0,
      running: 0,
      paused: 0,
      diverged: 0,
      error: 0,
    };
    for (const r of this.records.values()) out[r.status]++;
    return out;
  }

  // ---------------------------------------------------------------- requests

  /**
   * A new session from a create body: its JSON bytes (POST /v1/sessions hands them over
   * unparsed: a worker parses and validates them, src/server/request-body.ts) or a model.
   */
  async create(
    from: { body: Uint8Array } | { model: unknown },
    owner: string | null = null,
  ): Promise<SessionOut> {
    const body = "body" in from ? from.body : Buffer.from(JSON.stringify({ model: from.model }));
    return this.view(await this.open(randomUUID(), owner, { body }, new Date()));
  }

  /** A copy of a session at its current step (status as the source's, running → paused). */
  async fork(id: string, owner: string | null = null): Promise<SessionOut> {
    const rec = await this.live(id, owner);
    const bytes = await this.withRecord(rec, () => this.exportEngine(rec, true));
    return this.view(await this.open(randomUUID(), owner, { fork: rec, bytes }, new Date()));
  }

  /** The session document (schemas/api.ts Snapshot) as JSON bytes. */
  async exportSnapshot(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.live(id, owner);
    return this.withRecord(rec, async () =>
      this.documentOf(rec, await this.exportEngine(rec, true)),
    );
  }

  private async open(
    id: string,
    owner: string | null,
    from: Origin,
    createdAt: Date,
    restoring = false,
  ): Promise<SessionRecord> {
    // a restored session was already counted against its key's quota
    this.checkCapacity(restoring ? null : owner);
    this.creating++;
    if (owner !== null) this.creatingByOwner.set(owner, (this.creatingByOwner.get(owner) ?? 0) + 1);
    try {
      const worker = this.leastLoadedWorker();
      const body: WorkerRequestBody =
        "body" in from
          ? { kind: "open", sessionId: id, body: from.body, maxBodies: this.config.maxBodies }
          : "snapshot" in from
            ? {
                kind: "restore",
                sessionId: id,
                name: from.snapshot.session.name,
                snapshot: from.snapshot.simulation,
                status: from.snapshot.session.status,
                message: from.snapshot.session.message,
              }
            : {
                kind: "restore",
                sessionId: id,
                name: from.fork.name,
                snapshot: from.bytes,
                status: from.fork.status,
                message: from.fork.message,
              };
      const a = await this.call(null, worker, body);
      if (a.result.kind !== "created" || !a.session) throw new ApiError("internal", "bad reply");
      const { origin } = a.result;
      const rec: SessionRecord = {
        id,
        name: origin.name,
        worker,
        ...a.session,
        counts: origin.counts,
        createdAt,
        lastActivity: Date.now(),
        model: origin.model,
        scene: a.result.scene,
        lastState: a.result.state,
        lost: false,
        rebuilding: null,
        losses: [],
        busy: 0,
        owner,
        memory: null,
        lastCheckpointStep: a.session.step,
        lastCheckpointStatus: a.session.status,
        lastCheckpointAt: 0,
        checkpointing: null,
        checkpointWanted: false,
        checkpointUrgent: false,
        checkpointTimer: null,
        savedStep: restoring ? a.session.step : null,
        persisted: true,
        deleting: false,
        removing: null,
        deleted: false,
      };
      this.records.set(id, rec);
      this.log.info(
        {
          session: id,
          worker,
          bodies: rec.counts.bodies,
          step: rec.step,
          from: "body" in from ? "request" : Object.keys(from)[0],
        },
        restoring ? "session restored from its checkpoint" : "session created",
      );
      // the first checkpoint at once (a restored session has its file; the memory copy
      // comes with its next checkpoint)
      if (!restoring) void this.checkpoint(rec, true);
      return rec;
    } finally {
      this.creating--;
      if (owner !== null) {
        const left = (this.creatingByOwner.get(owner) ?? 1) - 1;
        if (left > 0) this.creatingByOwner.set(owner, left);
        else this.creatingByOwner.delete(owner);
      }
    }
  }

  /**
   * Throws what a new session of `owner` would be refused with now (shutting down, the
   * server's or the key's session limit): the create route calls it before reading the
   * body, so a full quota costs no parsing (issue 26, item 5), and open() again.
   */
  checkCapacity(owner: string | null): void {
    if (this.closing) throw new ApiError("shutting_down", "the server is shutting down");
    if (this.records.size + this.creating >= this.config.maxSessions)
      throw new ApiError(
        "too_many_sessions",
        `the server holds its limit of ${this.config.maxSessions} sessions (MAX_SESSIONS); delete one first`,
        { limit: this.config.maxSessions },
      );
    if (owner === null) return;
    // sessions of this key plus its creations still in flight (concurrent creates would
    // each see the same count and all pass)
    let mine = this.creatingByOwner.get(owner) ?? 0;
    for (const r of this.records.values()) if (r.owner === owner) mine++;
    if (mine >= this.config.maxSessionsPerKey)
      throw new ApiError(
        "too_many_sessions",
        `this API key holds its limit of ${this.config.maxSessionsPerKey} sessions (MAX_SESSIONS_PER_KEY); delete one first`,
        { limit: this.config.maxSessionsPerKey, scope: "key" },
      );
  }

  list(owner: string | null = null): SessionOut[] {
    return [...this.records.values()]
      .filter((r) => this.visible(r, owner))
      .map((r) => this.view(r));
  }

  get(id: string, owner: string | null = null): SessionOut {
    return this.view(this.touch(id, owner));
  }

  exists(id: string, owner: string | null = null): boolean {
    const rec = this.records.get(id);
    return rec !== undefined && this.visible(rec, owner);
  }

  async state(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.live(id, owner);
    if (rec.lost) return rec.lastState;
    return this.withRecord(rec, async () =>
      this.stateOf(rec, await this.read(rec, { kind: "state", sessionId: id })),
    );
  }

  async step(id: string, body: StepRequest, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.live(id, owner);
    this.allow(rec, ["ready", "paused"], "it cannot step");
    const steps = body.steps ?? Math.max(1, Math.ceil((body.duration ?? 0) / rec.dt - 1e-9));
    if (steps > this.config.maxStepsPerRequest)
      throw new ApiError(
        "invalid_request",
        `${steps} steps exceed the limit of ${this.config.maxStepsPerRequest} per request (MAX_STEPS_PER_REQUEST)`,
        {
          part: "body",
          issues: [
            {
              path: [body.steps !== undefined ? "steps" : "duration"],
              message: `at most ${this.config.maxStepsPerRequest} steps per request`,
            },
          ],
        },
      );
    return this.withRecord(rec, async () => {
      const a = await this.call(rec, rec.worker, {
        kind: "step",
        sessionId: id,
        steps,
        deadline: Date.now() + this.config.requestTimeoutMs,
      });
      return this.stateOf(rec, a);
    });
  }

  async run(
    id: string,
    realtimeFactor: number | null,
    until: number | null,
    owner: string | null = null,
  ): Promise<SessionOut> {
    const rec = await this.live(id, owner);
    this.allow(rec, ["ready", "paused"], "it cannot run");
    if (until !== null && until <= rec.time)
      throw new ApiError(
        "invalid_request",
        `until (${until} s) is not after the session's time (${rec.time} s)`,
        { part: "body", issues: [{ path: ["until"], message: "must be after the current time" }] },
      );
    await this.withRecord(rec, () =>
      this.call(rec, rec.worker, { kind: "run", sessionId: id, realtimeFactor, until }),
    );
    return this.view(rec);
  }

  async pause(id: string, owner: string | null = null): Promise<SessionOut> {
    const rec = await this.live(id, owner);
    this.allow(rec, ["ready", "paused", "running"], "nothing to pause");
    await this.withRecord(rec, () => this.call(rec, rec.worker, { kind: "pause", sessionId: id }));
    // flushed now; a checkpoint in flight (the creation's, a run's end) may have exported an
    // earlier step, so this one is queued behind it rather than skipped
    void this.checkpoint(rec, true);
    return this.view(rec);
  }

  async reset(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.live(id, owner);
    const state = await this.withRecord(rec, async () => {
      if (rec.lost) await this.rebuildFromModel(rec);
      const a = await this.call(rec, rec.worker, { kind: "reset", sessionId: id });
      return this.stateOf(rec, a);
    });
    rec.lastCheckpointStep = 0;
    void this.checkpoint(rec);
    return state;
  }

  async patch(id: string, patch: SessionPatch, owner: string | null = null): Promise<SessionOut> {
    const rec = await this.live(id, owner);
    this.allow(rec, ["ready", "paused", "running", "diverged"], "reset it first");
    await this.withRecord(rec, () =>
      this.call(rec, rec.worker, { kind: "update", sessionId: id, patch }),
    );
    void this.checkpoint(rec);
    return this.view(rec);
  }

  /** Schedules run-time inputs (schemas/input.ts) at a step boundary. */
  async inputs(
    id: string,
    body: { inputs: InputSpec[]; step?: number },
    owner: string | null = null,
  ): Promise<{ step: number; pending: number }> {
    const rec = await this.live(id, owner);
    this.allow(rec, ["ready", "paused", "running"], "reset it first");
    const a = await this.withRecord(rec, () =>
      this.call(rec, rec.worker, {
        kind: "inputs",
        sessionId: id,
        inputs: body.inputs,
        step: body.step ?? null,
      }),
    );
    if (a.result.kind !== "inputs") throw new ApiError("internal", "bad reply");
    void this.checkpoint(rec);
    return { step: a.result.step, pending: a.result.pending };
  }

  /** The recording (schemas/recording.ts) as JSON bytes; `every`: with replayed states. */
  async recording(
    id: string,
    every: number | null,
    owner: string | null = null,
  ): Promise<Uint8Array> {
    const rec = await this.live(id, owner);
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const a = await this.withRecord(rec, () =>
      this.read(rec, {
        kind: "recording",
        sessionId: id,
        every,
        maxSteps: this.config.maxStepsPerRequest,
      }),
    );
    if (a.result.kind !== "exported") throw new ApiError("internal", "bad reply");
    return a.result.bytes;
  }

  async delete(id: string, owner: string | null = null): Promise<void> {
    this.touch(id, owner);
    await this.remove(id);
  }

  /**
   * Deletes a session: its checkpoint first (durably: persistence.ts), then the session.
   * When the checkpoint cannot be deleted durably the session is kept and this throws
   * (500): a session answered deleted must not come back after a restart.
   */
  private remove(id: string): Promise<void> {
    const rec = this.records.get(id);
    if (!rec) return Promise.reject(notFound(id));
    if (rec.removing) return rec.removing;
    const removing = (async () => {
      if (rec.rebuilding) await rec.rebuilding;
      rec.deleting = true; // no checkpoint write starts from here on
      this.clearCheckpointTimer(rec);
      if (this.store) {
        try {
          // after any write of it already under way
          await this.store.remove(id);
        } catch (err) {
          rec.deleting = false;
          this.log.error({ err, session: id }, "session not deleted: its checkpoint remains");
          throw new ApiError(
            "internal",
            `session "${id}" was not deleted: ${(err as Error).message}; it is kept, retry the delete`,
            { session: id },
          );
        }
      }
      rec.deleted = true;
      this.records.delete(id);
      this.forget(rec);
      this.streams.closeSession(id, 1000, "session deleted");
      if (!rec.lost) {
        this.pool.notify(rec.worker, { kind: "cancel", sessionId: id });
        await this.pool
          .request(rec.worker, { kind: "delete", sessionId: id })
          .catch((err) => this.log.warn({ err, session: id }, "worker delete failed"));
      }
      this.log.info({ session: id }, "session deleted");
    })();
    rec.removing = removing;
    void removing.then(
      () => undefined,
      () => {
        if (rec.removing === removing) rec.removing = null;
      },
    );
    return removing;
  }

  async assemble(
    id: string,
    options: AssemblyOptionsIn,
    apply: boolean,
    owner: string | null = null,
  ): Promise<AssemblyAnswer> {
    const rec = await this.live(id, owner);
    this.allow(
      rec,
      ["ready", "paused", "diverged"],
      "assembly needs a session that is not running",
    );
    return this.withRecord(rec, async () => {
      const a = await this.call(rec, rec.worker, {
        kind: "assemble",
        sessionId: id,
        options,
        apply,
      });
      if (a.result.kind !== "assembly") throw new ApiError("internal", "bad reply");
      if (a.result.state) {
        rec.lastState = a.result.state;
        void this.checkpoint(rec);
      }
      return { result: a.result.result, state: a.result.state };
    });
  }

  /**
   * Assembly of a posted model on the least loaded worker; nothing is kept. `body`: the
   * AssemblyRequest's JSON bytes, parsed and validated by the worker.
   */
  async assembleModel(body: Uint8Array): Promise<Uint8Array> {
    if (this.closing) throw new ApiError("shutting_down", "the server is shutting down");
    const a = await this.call(null, this.leastLoadedWorker(), {
      kind: "assembleModel",
      body,
      maxBodies: this.config.maxBodies,
    });
    if (a.result.kind !== "assembly") throw new ApiError("internal", "bad reply");
    return a.result.result;
  }

  // ---------------------------------------------------------------- streams

  /** Attaches an upgraded WebSocket to a session: scene frame, then state frames. */
  subscribe(id: string, ws: WebSocket, opts: StreamOptions): void {
    const rec = this.records.get(id);
    if (!rec) {
      ws.close(4404, "no such session");
      return;
    }
    const sub = this.streams.add(id, ws, opts);
    const scene: SceneFrameOut = {
      type: "scene",
      session: id,
      name: rec.name,
      time: rec.time,
      step: rec.step,
      bodies: rec.scene.bodies as SceneFrameOut["bodies"],
      joints: rec.scene.joints as SceneFrameOut["joints"],
    };
    this.streams.sendRaw(sub, encode(scene, opts.format));
    if (rec.lost) return;
    this.pool
      .request(rec.worker, {
        kind: "snapshot",
        sessionId: id,
        encoding: { key: sub.key, fields: sub.fields, format: sub.format },
      })
      .then((a) => {
        if (a.result.kind === "frame" && a.result.bytes)
          this.streams.sendInitial(sub, a.result.step, a.result.bytes);
      })
      .catch(() => undefined);
  }

  // ---------------------------------------------------------------- test support

  /** Worker index of a session (tests, diagnostics). */
  workerOf(id: string): number {
    const rec = this.records.get(id);
    if (!rec) throw notFound(id);
    return rec.worker;
  }

  /** Step of a session's last checkpoint held in memory, null if none (tests, diagnostics). */
  memoryCheckpointStep(id: string): number | null {
    const rec = this.records.get(id);
    if (!rec) throw notFound(id);
    return rec.memory?.step ?? null;
  }

  /** Resolves when no session is being rebuilt after a worker loss (tests). */
  async rebuilt(): Promise<void> {
    for (;;) {
      const pending = [...this.records.values()].flatMap((r) =>
        r.rebuilding ? [r.rebuilding] : [],
      );
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  // ---------------------------------------------------------------- internals

  private touch(id: string, owner: string | null): SessionRecord {
    const rec = this.records.get(id);
    if (!rec || !this.visible(rec, owner)) throw notFound(id);
    rec.lastActivity = Date.now();
    return rec;
  }

  /** `touch`, after the rebuild of a session lost with its worker (if one is under way). */
  private async live(id: string, owner: string | null): Promise<SessionRecord> {
    const rec = this.touch(id, owner);
    if (rec.rebuilding) {
      await rec.rebuilding;
      if (!this.records.has(id)) throw notFound(id);
    }
    return rec;
  }

  /** Without API keys every session is everyone's; with keys, only its creator's. */
  private visible(rec: SessionRecord, owner: string | null): boolean {
    return !this.auth || rec.owner === owner;
  }

  // ---------------------------------------------------------------- snapshots, checkpoints

  /**
   * The engine snapshot bytes of a live session (a read: it does not wait for its queue).
   * `retry`: asked again of the rebuilt session if the worker is lost meanwhile.
   */
  private async exportEngine(rec: SessionRecord, retry: boolean): Promise<Uint8Array> {
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const body: WorkerRequestBody = { kind: "export", sessionId: rec.id };
    const a = retry ? await this.read(rec, body) : await this.call(rec, rec.worker, body);
    if (a.result.kind !== "exported") throw new ApiError("internal", "bad reply");
    return a.result.bytes;
  }

  /** The session document: the engine snapshot wrapped with the session's status. */
  private documentOf(
    rec: SessionRecord,
    engine: Uint8Array,
    at: Pick<SessionRecord, "status" | "message" | "time" | "step"> = rec,
  ): Uint8Array {
    const head = JSON.stringify({
      format: SESSION_SNAPSHOT_FORMAT,
      version: SESSION_SNAPSHOT_VERSION,
      session: {
        id: rec.id,
        name: rec.name,
        status: at.status,
        message: at.message,
        time: at.time,
        step: at.step,
        createdAt: rec.createdAt.toISOString(),
        savedAt: new Date().toISOString(),
      },
    });
    return Buffer.concat([
      Buffer.from(`${head.slice(0, -1)},"simulation":`, "utf8"),
      engine,
      Buffer.from("}", "utf8"),
    ]);
  }

  /**
   * Asks for a checkpoint of the session: kept in memory and (DATA_DIR) written to disk.
   * `urgent`: at once (after the one under way); otherwise no sooner than
   * CHECKPOINT_MIN_INTERVAL_MS after the previous one started. Resolves when a checkpoint
   * taken after this call is done (an urgent one) or deferred. Failures are logged, never
   * thrown.
   */
  private checkpoint(rec: SessionRecord, urgent = false): Promise<void> {
    if (rec.lost || rec.deleted || rec.deleting) return Promise.resolve();
    rec.checkpointWanted = true;
    if (urgent) rec.checkpointUrgent = true;
    if (rec.checkpointing) return rec.checkpointing;
    const wait = rec.checkpointUrgent
      ? 0
      : rec.lastCheckpointAt + this.config.checkpointMinIntervalMs - Date.now();
    if (wait > 0) {
      this.deferCheckpoint(rec, wait);
      return Promise.resolve();
    }
    rec.checkpointing = this.checkpointLoop(rec);
    return rec.checkpointing;
  }

  private deferCheckpoint(rec: SessionRecord, wait: number): void {
    if (rec.checkpointTimer) return;
    rec.checkpointTimer = setTimeout(() => {
      rec.checkpointTimer = null;
      if (rec.checkpointWanted) void this.checkpoint(rec, true);
    }, wait);
    rec.checkpointTimer.unref?.();
  }

  private clearCheckpointTimer(rec: SessionRecord): void {
    if (rec.checkpointTimer) clearTimeout(rec.checkpointTimer);
    rec.checkpointTimer = null;
  }

  private async checkpointLoop(rec: SessionRecord): Promise<void> {
    const store = this.store;
    try {
      while (rec.checkpointWanted && !rec.deleted && !rec.deleting && !rec.lost) {
        if (!rec.checkpointUrgent) {
          const wait = rec.lastCheckpointAt + this.config.checkpointMinIntervalMs - Date.now();
          if (wait > 0) {
            this.deferCheckpoint(rec, wait);
            return;
          }
        }
        this.clearCheckpointTimer(rec);
        rec.checkpointWanted = false;
        rec.checkpointUrgent = false;
        rec.lastCheckpointAt = Date.now();
        rec.lastCheckpointStep = rec.step;
        let engine: Uint8Array;
        try {
          engine = await this.exportEngine(rec, false);
        } catch (err) {
          // the worker could not export (lost with its worker, deleted meanwhile, or a
          // shutdown): not a persistence failure
          if (!rec.lost && !rec.deleted && !rec.deleting && !this.closing)
            this.log.warn({ err, session: rec.id }, "checkpoint export failed");
          return;
        }
        // the reply refreshed the record: these are the exported snapshot's
        const at = { status: rec.status, message: rec.message, time: rec.time, step: rec.step };
        rec.lastCheckpointStep = at.step;
        rec.lastCheckpointStatus = at.status;
        this.keepInMemory(rec, { engine, ...at });
        // synchronous check and enqueue: a delete after this point removes the file
        if (!store || rec.deleted || rec.deleting) continue;
        try {
          await store.write(rec.id, rec.owner, this.documentOf(rec, engine, at));
        } catch (err) {
          rec.persisted = false;
          this.persistenceError = `checkpoint of session ${rec.id} failed: ${(err as Error).message}`;
          this.metrics.checkpointFailures.inc();
          this.log.warn({ err, session: rec.id }, "checkpoint failed");
          return;
        }
        this.metrics.checkpoints.inc();
        rec.savedStep = at.step;
        rec.persisted = true;
        this.persistenceError = null;
      }
    } finally {
      rec.checkpointing = null;
      // asked for again meanwhile (after a failure or a deferral: within the interval)
      if (rec.checkpointWanted && !rec.checkpointTimer) void this.checkpoint(rec);
    }
  }

  /** Keeps a session's last checkpoint in memory, within CHECKPOINT_MEMORY_BYTES for all. */
  private keepInMemory(rec: SessionRecord, cp: MemoryCheckpoint): void {
    const old = rec.memory?.engine.byteLength ?? 0;
    const total = this.memoryBytes - old + cp.engine.byteLength;
    if (total <= this.config.checkpointMemoryBytes) {
      this.memoryBytes = total;
      rec.memory = cp;
    } else if (rec.memory === null || rec.memory.engine.byteLength < cp.engine.byteLength) {
      // over the budget: the older copy is kept (a rebuild takes the newer of it and the file)
      this.log.debug(
        { session: rec.id, bytes: cp.engine.byteLength, budget: this.config.checkpointMemoryBytes },
        "checkpoint not kept in memory (CHECKPOINT_MEMORY_BYTES)",
      );
    }
  }

  /** Releases what a deleted session held. */
  private forget(rec: SessionRecord): void {
    this.clearCheckpointTimer(rec);
    if (rec.memory) this.memoryBytes -= rec.memory.engine.byteLength;
    rec.memory = null;
  }

  /** Checkpoints due by CHECKPOINT_EVERY_STEPS. */
  private checkpointIfDue(rec: SessionRecord): void {
    const every = this.config.checkpointEverySteps;
    if (every > 0 && rec.step - rec.lastCheckpointStep >= every) void this.checkpoint(rec);
  }

  private async restoreCheckpoints(store: CheckpointStore): Promise<void> {
    const found = await store.readAll();
    let restored = 0;
    for (const cp of found) {
      if (this.records.has(cp.id)) continue;
      const created = Date.parse(cp.snapshot.session.createdAt ?? "");
      try {
        await this.open(
          cp.id,
          cp.owner,
          { snapshot: cp.snapshot },
          Number.isFinite(created) ? new Date(created) : new Date(),
          true,
        );
        restored++;
      } catch (err) {
        this.log.error(
          { err, session: cp.id, file: store.fileOf(cp.id) },
          "a checkpointed session could not be restored",
        );
      }
    }
    if (found.length > 0)
      this.log.info(
        { restored, found: found.length, dir: store.dir },
        `restored ${restored} session(s) from ${store.dir}`,
      );
  }

  private allow(rec: SessionRecord, ok: SessionStatusName[], what: string): void {
    if (!ok.includes(rec.status)) throw conflict(rec.id, rec.status, what);
  }

  private async withRecord<T>(rec: SessionRecord, fn: () => Promise<T>): Promise<T> {
    rec.busy++;
    try {
      return await fn();
    } finally {
      rec.busy--;
      rec.lastActivity = Date.now();
    }
  }

  /** A worker request; its reply's session snapshot refreshes the record. */
  private async call(
    rec: SessionRecord | null,
    worker: number,
    body: WorkerRequestBody,
  ): Promise<WorkerAnswer> {
    try {
      const a = await this.pool.request(worker, body);
      if (rec && a.session) this.apply(rec, a.session);
      return a;
    } catch (err) {
      if (err instanceof WorkerFailure) {
        if (rec && err.session) this.apply(rec, err.session);
        if (err.info.code === "not_found" && rec && !this.records.has(rec.id))
          throw new ApiError("not_found", `session "${rec.id}" was deleted`, { session: rec.id });
        throw new ApiError(err.info.code, err.info.message, err.info.details);
      }
      throw err;
    }
  }

  /**
   * A read (nothing changes in the worker): if its worker is lost while it is in flight,
   * it is asked again of the session rebuilt from its checkpoint.
   */
  private async read(rec: SessionRecord, body: WorkerRequestBody): Promise<WorkerAnswer> {
    try {
      return await this.call(rec, rec.worker, body);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === "worker_crashed" && rec.rebuilding)) throw err;
      await rec.rebuilding;
      if (rec.lost || !this.records.has(rec.id)) throw err;
      return this.call(rec, rec.worker, body);
    }
  }

  private stateOf(rec: SessionRecord, a: WorkerAnswer): Uint8Array {
    if (a.result.kind !== "state") throw new ApiError("internal", "bad reply");
    rec.lastState = a.result.state;
    return a.result.state;
  }

  private apply(rec: SessionRecord, s: SessionSnapshot): void {
    // an older snapshot than the last applied (a reply overtaken by a progress event)
    if (rec.lost || s.seq <= rec.seq) return;
    rec.seq = s.seq;
    const was = rec.status;
    rec.status = s.status;
    rec.time = s.time;
    rec.step = s.step;
    rec.dt = s.dt;
    rec.message = s.message;
    rec.run = s.run;
    // a run that stopped (pause, `until` reached, divergence) is checkpointed at once
    if (was === "running" && s.status !== "running" && this.records.has(rec.id))
      void this.checkpoint(rec, true);
    else this.checkpointIfDue(rec);
  }

  // ---------------------------------------------------------------- worker losses

  private onWorkerLost(worker: number, reason: string): void {
    this.metrics.workerRestarts.inc();
    const lost: { rec: SessionRecord; run: SessionSnapshot["run"] }[] = [];
    for (const rec of this.records.values()) {
      if (rec.worker !== worker || rec.lost) continue;
      rec.lost = true;
      this.clearCheckpointTimer(rec);
      lost.push({ rec, run: rec.status === "running" ? rec.run : null });
      this.log.warn({ session: rec.id, worker }, "session lost with its worker");
    }
    if (this.closing) {
      for (const { rec } of lost) this.markLost(rec, `${reason}; the server is shutting down`);
      return;
    }
    // spread over the workers (the replacement of the lost one included: requests to it
    // wait until it has started)
    const load = this.loads();
    for (const { rec, run } of lost) {
      if (rec.deleting) {
        this.markLost(rec, reason);
        continue;
      }
      let target = 0;
      for (let i = 1; i < load.length; i++) if (load[i] < load[target]) target = i;
      load[target]++;
      rec.message = `${reason}; restoring the session from its last checkpoint`;
      rec.busy++;
      const done = this.rebuildFromCheckpoint(rec, reason, run, target).finally(() => {
        rec.busy--;
        if (rec.rebuilding === done) rec.rebuilding = null;
      });
      rec.rebuilding = done;
    }
  }

  /** The session stays lost: `error`, its last state served, reset rebuilds it from the model. */
  private markLost(rec: SessionRecord, why: string): void {
    rec.status = "error";
    rec.run = null;
    rec.message = `${why}; the simulation was lost (state: the last one received; reset rebuilds it from the model)`;
  }

  /**
   * Rebuilds a lost session from its last checkpoint (the newer of memory and disk) on
   * worker `target`, and resumes its run if it was running. Never rejects.
   */
  private async rebuildFromCheckpoint(
    rec: SessionRecord,
    reason: string,
    run: SessionSnapshot["run"],
    target: number,
  ): Promise<void> {
    const now = Date.now();
    rec.losses = [...rec.losses.filter((t) => now - t < LOSS_WINDOW_MS), now];
    try {
      let body: WorkerRequestBody | null = null;
      let from: "memory" | "disk" = "memory";
      let step = -1;
      const mem = rec.memory;
      if (this.store && rec.savedStep !== null && (!mem || rec.savedStep >= mem.step)) {
        const cp = await this.store.read(rec.id).catch(() => null);
        if (cp) {
          body = {
            kind: "restore",
            sessionId: rec.id,
            name: rec.name,
            snapshot: cp.snapshot.simulation,
            status: cp.snapshot.session.status,
            message: cp.snapshot.session.message,
          };
          from = "disk";
          step = cp.snapshot.simulation.step;
        }
      }
      if (!body && mem) {
        body = {
          kind: "restore",
          sessionId: rec.id,
          name: rec.name,
          snapshot: mem.engine,
          status: mem.status,
          message: mem.message,
        };
        step = mem.step;
      }
      if (!body || rec.deleted) {
        this.metrics.sessionRebuilds.inc({ from: "none" });
        this.markLost(rec, `${reason}; no checkpoint of it was kept`);
        return;
      }
      await this.relocate(rec, body, target);
      this.metrics.sessionRebuilds.inc({ from });
      this.log.warn(
        { session: rec.id, worker: rec.worker, step, from },
        "session lost with its worker rebuilt from its last checkpoint",
      );
      if (run && !this.closing) {
        if (rec.losses.length > 1)
          this.log.warn(
            { session: rec.id, losses: rec.losses.length },
            "session lost again within a minute: restored paused, its run not resumed",
          );
        else if (run.until === null || run.until > rec.time)
          await this.call(rec, rec.worker, {
            kind: "run",
            sessionId: rec.id,
            realtimeFactor: run.realtimeFactor,
            until: run.until,
          }).catch((err) =>
            this.log.warn({ err, session: rec.id }, "run not resumed after the rebuild"),
          );
      }
    } catch (err) {
      this.metrics.sessionRebuilds.inc({ from: "failed" });
      this.log.error({ err, session: rec.id }, "session could not be rebuilt from its checkpoint");
      rec.lost = true;
      this.markLost(
        rec,
        `${reason}; it could not be restored from its checkpoint (${(err as Error)?.message})`,
      );
    }
  }

  /** Recreates a lost session's simulation from its model (t = 0) on the least loaded worker. */
  private async rebuildFromModel(rec: SessionRecord): Promise<void> {
    const load = this.loads(rec.id);
    let target = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[target]) target = i;
    await this.relocate(
      rec,
      {
        kind: "open",
        sessionId: rec.id,
        body: Buffer.concat([Buffer.from('{"model":'), rec.model, Buffer.from("}")]),
        maxBodies: this.config.maxBodies,
      },
      target,
    );
  }

  /**
   * Creates (or restores) a lost session's simulation on worker `target` — or, if that one
   * cannot start, on another — and makes it the session's.
   */
  private async relocate(
    rec: SessionRecord,
    body: WorkerRequestBody,
    target: number,
  ): Promise<void> {
    const order = [target, ...Array.from({ length: this.pool.size }, (_, i) => i)].filter(
      (w, i, all) => all.indexOf(w) === i,
    );
    let a: WorkerAnswer | null = null;
    let worker = target;
    for (const w of order) {
      try {
        a = await this.pool.request(w, body);
        worker = w;
        break;
      } catch (err) {
        const last = w === order[order.length - 1];
        if (err instanceof ApiError && err.code === "worker_crashed" && !last && !this.closing)
          continue;
        if (err instanceof WorkerFailure)
          throw new ApiError(err.info.code, err.info.message, err.info.details);
        throw err;
      }
    }
    if (!a) throw new ApiError("worker_crashed", "no solver worker could take the session");
    rec.worker = worker;
    rec.seq = 0; // another worker counts its own snapshots
    rec.lost = false;
    if (a.result.kind === "created") {
      rec.lastState = a.result.state;
      rec.scene = a.result.scene;
    }
    if (a.session) {
      this.apply(rec, a.session);
      rec.lastCheckpointStep = a.session.step;
    }
    this.pool.notify(worker, {
      kind: "subscriptions",
      sessionId: rec.id,
      subscriptions: this.streams.subscriptions(rec.id),
    });
  }

  /** Sessions per worker (those lost with theirs not counted). */
  private loads(except?: string): number[] {
    const load = new Array(this.pool.size).fill(0);
    for (const r of this.records.values()) if (!r.lost && r.id !== except) load[r.worker]++;
    return load;
  }

  private leastLoadedWorker(except?: string): number {
    const load = this.loads(except);
    let best = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[best]) best = i;
    return best;
  }

  private view(rec: SessionRecord): SessionOut {
    return {
      id: rec.id,
      name: rec.name,
      status: rec.status,
      time: rec.time,
      step: rec.step,
      dt: rec.dt,
      counts: rec.counts,
      message: rec.message,
      run: rec.run,
      subscribers: this.streams.count(rec.id),
      persisted: this.store ? rec.persisted : null,
      checkpointStep: rec.savedStep,
      createdAt: rec.createdAt.toISOString(),
      lastActivityAt: new Date(rec.lastActivity).toISOString(),
    };
  }

  private onEvent(worker: number, ev: WorkerEvent): void {
    switch (ev.kind) {
      case "frame": {
        try {
          const rec = this.records.get(ev.sessionId);
          if (rec && rec.worker === worker && !rec.lost) {
            if (ev.step > rec.step || ev.forced) rec.step = ev.step;
            this.streams.dispatch(ev.sessionId, ev.step, ev.forced, ev.frames);
          }
        } finally {
          this.pool.framesDone(worker, ev.bytes);
        }
        return;
      }
      case "progress": {
        const rec = this.records.get(ev.sessionId);
        if (rec && rec.worker === worker) this.apply(rec, ev.session);
        return;
      }
      case "stats":
        this.metrics.recordWorkerStats(ev.steps, ev.buckets, ev.sum);
        this.workerMemory[worker] = {
          heapUsed: ev.heapUsed,
          external: ev.external,
          liveHeap: ev.liveHeap,
        };
        return;
      case "ready":
        return;
    }
  }

  private sweepIdle(): void {
    const limit = Date.now() - this.config.sessionIdleTtl * 1000;
    for (const rec of [...this.records.values()]) {
      if (rec.busy > 0 || rec.lastActivity > limit || this.streams.count(rec.id) > 0) continue;
      this.log.info({ session: rec.id }, "idle session expired");
      void this.remove(rec.id).catch(() => undefined);
    }
  }

  // ---------------------------------------------------------------- shutdown

  /**
   * First half of a graceful shutdown (before the HTTP server waits for in-flight requests):
   * refuse new sessions, close every stream with 1001, stop runs, and checkpoint every
   * session. Requests still in flight SHUTDOWN_TIMEOUT_MS after this call are answered 503
   * `shutting_down`.
   */
  beginClose(): Promise<void> {
    this.closingStarted ??= this.startClosing();
    return this.closingStarted;
  }

  private async startClosing(): Promise<void> {
    this.closing = true;
    const timeout = this.config.shutdownTimeoutMs;
    this.shutdownDeadline = Date.now() + timeout;
    this.abortTimer = setTimeout(() => {
      const n = this.pool.abortPending(
        () =>
          new ApiError(
            "shutting_down",
            `the server is shutting down and this request did not finish within SHUTDOWN_TIMEOUT_MS (${timeout} ms); its session keeps the state it reached and is checkpointed before the server stops`,
          ),
      );
      if (n > 0)
        this.log.warn({ requests: n }, "requests still in flight at the shutdown timeout: 503");
    }, timeout);
    this.abortTimer.unref?.();
    if (this.sweeper) clearInterval(this.sweeper);
    this.streams.closeAll(1001, "server shutting down");
    this.streams.close();
    await this.bounded(
      (async () => {
        await Promise.all([...this.records.values()].map((r) => r.rebuilding ?? Promise.resolve()));
        await Promise.all(
          [...this.records.values()]
            .filter((r) => r.status === "running" && !r.lost)
            .map((r) =>
              this.pool
                .request(r.worker, { kind: "pause", sessionId: r.id })
                .then((a) => a.session && this.apply(r, a.session))
                .catch(() => undefined),
            ),
        );
        // checkpoint first: what was acknowledged is on disk before anything else is waited for
        await this.checkpointAll();
      })(),
      this.shutdownDeadline,
    );
  }

  /**
   * Second half (after in-flight requests are answered): checkpoint every session again
   * (the steps of the requests that finished meanwhile), then stop the workers.
   */
  async close(): Promise<void> {
    await this.beginClose();
    if (this.abortTimer) clearTimeout(this.abortTimer);
    await this.bounded(
      this.checkpointAll(),
      Math.max(this.shutdownDeadline, Date.now() + FINAL_CHECKPOINT_GRACE_MS),
    );
    for (const r of this.records.values()) this.clearCheckpointTimer(r);
    await this.pool.close();
  }

  /** Checkpoints every session whose last checkpoint is not its current state. */
  private async checkpointAll(): Promise<void> {
    await Promise.all(
      [...this.records.values()].map(async (r) => {
        if (r.checkpointing) await r.checkpointing;
        const current =
          !r.checkpointWanted &&
          r.lastCheckpointStep === r.step &&
          r.lastCheckpointStatus === r.status &&
          (!this.store || (r.persisted && r.savedStep === r.step));
        if (!current) await this.checkpoint(r, true);
      }),
    );
    if (this.store) await this.store.flush().catch(() => undefined);
  }

  /** Waits for `p` until the time `deadline` (Date.now() scale) at most. */
  private async bounded(p: Promise<unknown>, deadline: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const late = new Promise<void>((res) => {
      timer = setTimeout(res, Math.max(0, deadline - Date.now()));
    });
    try {
      await Promise.race([p.then(() => undefined), late]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}
