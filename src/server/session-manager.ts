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
 * `reset` of a session whose worker crashed rebuilds its simulation from the stored model
 * on a live worker. A session is idle when it has had no request and no stream subscriber
 * for SESSION_IDLE_TTL seconds; idle sessions are deleted, running or not.
 *
 * Ownership (API keys, src/server/auth.ts): every method takes the requester's key id
 * (`owner`, null without keys); a session of another key is answered 404 as if it did not
 * exist, and each key may own MAX_SESSIONS_PER_KEY sessions.
 *
 * Snapshots and persistence: `exportSnapshot` answers the session document (schemas/api.ts
 * Snapshot: the worker's engine snapshot bytes wrapped, never parsed here); `create` with a
 * snapshot and `fork` start a session from one. With DATA_DIR (persistence.ts) a session is
 * checkpointed when created, when it stops running (pause, `until` reached, divergence),
 * after reset, PATCH and applied assembly, every CHECKPOINT_EVERY_STEPS steps and on
 * graceful shutdown; `start` restores every checkpoint (same id, owner and creation time).
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
import type { ModelSpec } from "../../schemas/model";
import type { RecordingSpec } from "../../schemas/recording";
import type { AssemblyOptionsIn } from "../../schemas/state";
import type { Config } from "./config";
import { ApiError, conflict, notFound } from "./errors";
import { encode } from "./frames";
import type { ServerMetrics } from "./metrics";
import { CheckpointStore } from "./persistence";
import type { SceneInfo, SessionSnapshot, WorkerEvent, WorkerRequestBody } from "./protocol";
import { StreamHub } from "./stream";
import { type WorkerAnswer, WorkerFailure, WorkerPool } from "./worker-pool";

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
  model: ModelSpec;
  scene: SceneInfo;
  /** the last State bytes the event loop received (served when the worker is gone) */
  lastState: Uint8Array;
  /** its worker died: the simulation is gone until a reset rebuilds it */
  lost: boolean;
  busy: number;
  /** key id of the creator (null without API keys) */
  owner: string | null;
  /** DATA_DIR: the step of the last checkpoint on disk (null: none) and whether the last attempt succeeded */
  savedStep: number | null;
  persisted: boolean;
  /** step of the last checkpoint started (DATA_DIR) */
  lastCheckpointStep: number;
  /** the running checkpoint loop, if any, and whether another pass is wanted after it */
  checkpointing: Promise<void> | null;
  checkpointAgain: boolean;
  deleted: boolean;
}

/** Where a new session comes from. */
type Origin =
  | { model: ModelSpec }
  | { snapshot: SnapshotOut }
  /** a recording (schemas/recording.ts), validated by the route */
  | { recording: RecordingSpec }
  /** the engine snapshot bytes of another session (fork) */
  | { fork: SessionRecord; bytes: Uint8Array };

export interface AssemblyAnswer {
  result: Uint8Array;
  state: Uint8Array | null;
}

export class SessionManager {
  private readonly records = new Map<string, SessionRecord>();
  private creating = 0;
  /** DATA_DIR: the last checkpoint failure, cleared by the next successful write (/ready). */
  private persistenceError: string | null = null;
  /** Creations in flight per API key (counted against MAX_SESSIONS_PER_KEY). */
  private readonly creatingByOwner = new Map<string, number>();
  private closing = false;
  readonly pool: WorkerPool;
  readonly streams: StreamHub;
  private sweeper: ReturnType<typeof setInterval> | null = null;
  readonly store: CheckpointStore | null;
  private readonly auth: boolean;

  constructor(
    private readonly config: Config,
    private readonly metrics: ServerMetrics,
    private readonly log: FastifyBaseLogger,
  ) {
    this.store = config.dataDir ? new CheckpointStore(config.dataDir, log) : null;
    this.auth = config.apiKeys.length > 0;
    this.pool = new WorkerPool(
      config,
      {
        onEvent: (w, ev) => this.onEvent(w, ev),
        onWorkerLost: (w, reason) => this.onWorkerLost(w, reason),
      },
      log,
    );
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

  /** A new session from a model, or resumed from a session document (a new id). */
  async create(
    from: { model: ModelSpec } | { snapshot: SnapshotOut } | { recording: RecordingSpec },
    owner: string | null = null,
  ): Promise<SessionOut> {
    return this.view(await this.open(randomUUID(), owner, from, new Date()));
  }

  /** A copy of a session at its current step (status as the source's, running → paused). */
  async fork(id: string, owner: string | null = null): Promise<SessionOut> {
    const rec = this.touch(id, owner);
    const bytes = await this.withRecord(rec, () => this.exportEngine(rec));
    return this.view(await this.open(randomUUID(), owner, { fork: rec, bytes }, new Date()));
  }

  /** The session document (schemas/api.ts Snapshot) as JSON bytes. */
  async exportSnapshot(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = this.touch(id, owner);
    return this.withRecord(rec, () => this.exportDocument(rec));
  }

  private async open(
    id: string,
    owner: string | null,
    from: Origin,
    createdAt: Date,
    restoring = false,
  ): Promise<SessionRecord> {
    if (this.closing) throw new ApiError("shutting_down", "the server is shutting down");
    if (this.records.size + this.creating >= this.config.maxSessions)
      throw new ApiError(
        "too_many_sessions",
        `the server holds its limit of ${this.config.maxSessions} sessions (MAX_SESSIONS); delete one first`,
        { limit: this.config.maxSessions },
      );
    if (owner !== null && !restoring) {
      // sessions of this key plus its creations still in flight (concurrent creates
      // would each see the same count and all pass)
      let mine = this.creatingByOwner.get(owner) ?? 0;
      for (const r of this.records.values()) if (r.owner === owner) mine++;
      if (mine >= this.config.maxSessionsPerKey)
        throw new ApiError(
          "too_many_sessions",
          `this API key holds its limit of ${this.config.maxSessionsPerKey} sessions (MAX_SESSIONS_PER_KEY); delete one first`,
          { limit: this.config.maxSessionsPerKey, scope: "key" },
        );
    }
    this.creating++;
    if (owner !== null) this.creatingByOwner.set(owner, (this.creatingByOwner.get(owner) ?? 0) + 1);
    try {
      const worker = this.leastLoadedWorker();
      let model: ModelSpec;
      let name: string;
      let body: WorkerRequestBody;
      if ("model" in from) {
        model = from.model;
        name = model.name;
        body = { kind: "create", sessionId: id, model };
      } else if ("snapshot" in from) {
        model = from.snapshot.simulation.model;
        name = from.snapshot.session.name;
        body = {
          kind: "restore",
          sessionId: id,
          snapshot: from.snapshot.simulation,
          status: from.snapshot.session.status,
          message: from.snapshot.session.message,
        };
      } else if ("recording" in from) {
        model = from.recording.model;
        name = model.name;
        body = { kind: "replay", sessionId: id, recording: from.recording };
      } else {
        model = from.fork.model;
        name = from.fork.name;
        body = {
          kind: "restore",
          sessionId: id,
          snapshot: from.bytes,
          status: from.fork.status,
          message: from.fork.message,
        };
      }
      const a = await this.call(null, worker, body);
      if (a.result.kind !== "created" || !a.session) throw new ApiError("internal", "bad reply");
      const rec: SessionRecord = {
        id,
        name,
        worker,
        ...a.session,
        counts: {
          bodies: model.bodies.length,
          forces: model.forces.length,
          joints: model.joints.length,
          motors: model.motors.length,
        },
        createdAt,
        lastActivity: Date.now(),
        model,
        scene: a.result.scene,
        lastState: a.result.state,
        lost: false,
        busy: 0,
        owner,
        lastCheckpointStep: a.session.step,
        checkpointing: null,
        checkpointAgain: false,
        savedStep: restoring ? a.session.step : null,
        persisted: true,
        deleted: false,
      };
      this.records.set(id, rec);
      this.log.info(
        {
          session: id,
          worker,
          bodies: rec.counts.bodies,
          step: rec.step,
          from: Object.keys(from)[0],
        },
        restoring ? "session restored from its checkpoint" : "session created",
      );
      if (!restoring) void this.checkpoint(rec);
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
    const rec = this.touch(id, owner);
    if (rec.lost) return rec.lastState;
    return this.withRecord(rec, async () => {
      const a = await this.call(rec, rec.worker, { kind: "state", sessionId: id });
      return this.stateOf(rec, a);
    });
  }

  async step(id: string, body: StepRequest, owner: string | null = null): Promise<Uint8Array> {
    const rec = this.touch(id, owner);
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
    const rec = this.touch(id, owner);
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
    const rec = this.touch(id, owner);
    this.allow(rec, ["ready", "paused", "running"], "nothing to pause");
    await this.withRecord(rec, () => this.call(rec, rec.worker, { kind: "pause", sessionId: id }));
    void this.checkpoint(rec);
    return this.view(rec);
  }

  async reset(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = this.touch(id, owner);
    const state = await this.withRecord(rec, async () => {
      if (rec.lost) await this.rebuild(rec);
      const a = await this.call(rec, rec.worker, { kind: "reset", sessionId: id });
      return this.stateOf(rec, a);
    });
    rec.lastCheckpointStep = 0;
    void this.checkpoint(rec);
    return state;
  }

  async patch(id: string, patch: SessionPatch, owner: string | null = null): Promise<SessionOut> {
    const rec = this.touch(id, owner);
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
    const rec = this.touch(id, owner);
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
    const rec = this.touch(id, owner);
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const a = await this.withRecord(rec, () =>
      this.call(rec, rec.worker, {
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

  private async remove(id: string): Promise<void> {
    const rec = this.records.get(id);
    if (!rec) throw notFound(id);
    rec.deleted = true;
    this.records.delete(id);
    this.streams.closeSession(id, 1000, "session deleted");
    if (!rec.lost) this.pool.notify(rec.worker, { kind: "cancel", sessionId: id });
    // a 204 means the checkpoint is gone too (after any write of it already under way)
    if (this.store)
      await this.store
        .remove(id)
        .catch((err) => this.log.warn({ err, session: id }, "checkpoint delete failed"));
    if (!rec.lost) {
      await this.pool
        .request(rec.worker, { kind: "delete", sessionId: id })
        .catch((err) => this.log.warn({ err, session: id }, "worker delete failed"));
    }
    this.log.info({ session: id }, "session deleted");
  }

  async assemble(
    id: string,
    options: AssemblyOptionsIn,
    apply: boolean,
    owner: string | null = null,
  ): Promise<AssemblyAnswer> {
    const rec = this.touch(id, owner);
    this.allow(
      rec,
      ["ready", "paused", "diverged"],
      "assembly needs a session that is not running",
    );
    return this.withRecord(rec, async () => {
      const a = await this.call(rec, rec.worker, {
        kind: "assemble",
        sessionId: id,
        model: null,
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

  /** Assembly of a posted model on the least loaded worker; nothing is kept. */
  async assembleModel(model: ModelSpec, options: AssemblyOptionsIn): Promise<Uint8Array> {
    if (this.closing) throw new ApiError("shutting_down", "the server is shutting down");
    const a = await this.call(null, this.leastLoadedWorker(), {
      kind: "assemble",
      sessionId: null,
      model,
      options,
      apply: false,
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

  // ---------------------------------------------------------------- internals

  private touch(id: string, owner: string | null): SessionRecord {
    const rec = this.records.get(id);
    if (!rec || !this.visible(rec, owner)) throw notFound(id);
    rec.lastActivity = Date.now();
    return rec;
  }

  /** Without API keys every session is everyone's; with keys, only its creator's. */
  private visible(rec: SessionRecord, owner: string | null): boolean {
    return !this.auth || rec.owner === owner;
  }

  // ---------------------------------------------------------------- snapshots, checkpoints

  /** The engine snapshot bytes of a live session (a read: it does not wait for its queue). */
  private async exportEngine(rec: SessionRecord): Promise<Uint8Array> {
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const a = await this.call(rec, rec.worker, { kind: "export", sessionId: rec.id });
    if (a.result.kind !== "exported") throw new ApiError("internal", "bad reply");
    return a.result.bytes;
  }

  /** The session document: the engine snapshot wrapped with the session's status. */
  private async exportDocument(rec: SessionRecord): Promise<Uint8Array> {
    const engine = await this.exportEngine(rec);
    const head = JSON.stringify({
      format: SESSION_SNAPSHOT_FORMAT,
      version: SESSION_SNAPSHOT_VERSION,
      session: {
        id: rec.id,
        name: rec.name,
        status: rec.status,
        message: rec.message,
        time: rec.time,
        step: rec.step,
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
   * Writes the session's checkpoint (DATA_DIR); resolves when a checkpoint taken after
   * this call is on disk. Failures are logged, never thrown.
   */
  private checkpoint(rec: SessionRecord): Promise<void> {
    const store = this.store;
    if (!store || rec.lost || rec.deleted) return Promise.resolve();
    if (rec.checkpointing) {
      rec.checkpointAgain = true;
      return rec.checkpointing;
    }
    rec.checkpointAgain = true;
    rec.checkpointing = (async () => {
      try {
        while (rec.checkpointAgain && !rec.deleted && !rec.lost) {
          rec.checkpointAgain = false;
          rec.lastCheckpointStep = rec.step;
          const bytes = await this.exportDocument(rec);
          // synchronous check and enqueue: a delete after this point removes the file
          if (rec.deleted) break;
          const step = rec.lastCheckpointStep;
          await store.write(rec.id, rec.owner, bytes);
          this.metrics.checkpoints.inc();
          rec.savedStep = step;
          rec.persisted = true;
          this.persistenceError = null;
        }
      } catch (err) {
        rec.persisted = false;
        this.persistenceError = `checkpoint of session ${rec.id} failed: ${(err as Error).message}`;
        this.metrics.checkpointFailures.inc();
        this.log.warn({ err, session: rec.id }, "checkpoint failed");
      } finally {
        rec.checkpointing = null;
      }
    })();
    return rec.checkpointing;
  }

  /** Checkpoints due by CHECKPOINT_EVERY_STEPS. */
  private checkpointIfDue(rec: SessionRecord): void {
    const every = this.config.checkpointEverySteps;
    if (this.store && every > 0 && rec.step - rec.lastCheckpointStep >= every)
      void this.checkpoint(rec);
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
    // a run that stopped (pause, `until` reached, divergence) is checkpointed
    if (was === "running" && s.status !== "running" && this.records.has(rec.id))
      void this.checkpoint(rec);
    else this.checkpointIfDue(rec);
  }

  /** Recreates a lost session's simulation (t = 0) on the least loaded live worker. */
  private async rebuild(rec: SessionRecord): Promise<void> {
    const worker = this.leastLoadedWorker(rec.id);
    const a = await this.pool
      .request(worker, { kind: "create", sessionId: rec.id, model: rec.model })
      .catch((err) => {
        if (err instanceof WorkerFailure)
          throw new ApiError(err.info.code, err.info.message, err.info.details);
        throw err;
      });
    rec.worker = worker;
    rec.seq = 0; // another worker counts its own snapshots
    rec.lost = false;
    if (a.session) this.apply(rec, a.session);
    this.pool.notify(worker, {
      kind: "subscriptions",
      sessionId: rec.id,
      subscriptions: this.streams.subscriptions(rec.id),
    });
  }

  private leastLoadedWorker(except?: string): number {
    const load = new Array(this.pool.size).fill(0);
    for (const r of this.records.values()) if (!r.lost && r.id !== except) load[r.worker]++;
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
        return;
      case "ready":
        return;
    }
  }

  private onWorkerLost(worker: number, reason: string): void {
    this.metrics.workerRestarts.inc();
    for (const rec of this.records.values()) {
      if (rec.worker !== worker || rec.lost) continue;
      rec.lost = true;
      rec.status = "error";
      rec.run = null;
      rec.message = `${reason}; the simulation was lost (state: the last one received; reset rebuilds it from the model)`;
      this.log.warn({ session: rec.id, worker }, "session lost with its worker");
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

  /**
   * First half of a graceful shutdown (before the HTTP server stops): refuse new sessions,
   * close every stream with 1001 and stop runs; in-flight step requests go on.
   */
  async beginClose(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.streams.closeAll(1001, "server shutting down");
    this.streams.close();
    await Promise.all(
      [...this.records.values()]
        .filter((r) => r.status === "running" && !r.lost)
        .map((r) =>
          this.pool.request(r.worker, { kind: "pause", sessionId: r.id }).catch(() => undefined),
        ),
    );
  }

  /**
   * Second half (after in-flight requests are answered): checkpoint every session (DATA_DIR),
   * then stop the workers.
   */
  async close(): Promise<void> {
    await this.beginClose();
    if (this.store) {
      await Promise.all([...this.records.values()].map((r) => this.checkpoint(r)));
      await this.store.flush().catch(() => undefined);
    }
    await this.pool.close();
  }
}
