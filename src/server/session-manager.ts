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
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { WebSocket } from "ws";
import type {
  SceneFrameOut,
  SessionOut,
  SessionPatch,
  SessionStatusName,
  StepRequest,
  StreamOptions,
} from "../../schemas/api";
import type { ModelSpec } from "../../schemas/model";
import type { AssemblyOptionsIn } from "../../schemas/state";
import type { Config } from "./config";
import { ApiError, conflict, notFound } from "./errors";
import { encode } from "./frames";
import type { ServerMetrics } from "./metrics";
import type { SceneInfo, SessionSnapshot, WorkerEvent, WorkerRequestBody } from "./protocol";
import { StreamHub } from "./stream";
import { type WorkerAnswer, WorkerFailure, WorkerPool } from "./worker-pool";

interface SessionRecord {
  id: string;
  name: string;
  worker: number;
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
}

export interface AssemblyAnswer {
  result: Uint8Array;
  state: Uint8Array | null;
}

export class SessionManager {
  private readonly records = new Map<string, SessionRecord>();
  private creating = 0;
  private closing = false;
  readonly pool: WorkerPool;
  readonly streams: StreamHub;
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly config: Config,
    private readonly metrics: ServerMetrics,
    private readonly log: FastifyBaseLogger,
  ) {
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
    if (this.config.sessionIdleTtl > 0) {
      const every = Math.min(60_000, Math.max(50, (this.config.sessionIdleTtl * 1000) / 4));
      this.sweeper = setInterval(() => this.sweepIdle(), every);
      this.sweeper.unref();
    }
  }

  get isClosing(): boolean {
    return this.closing;
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

  async create(model: ModelSpec): Promise<SessionOut> {
    if (this.closing) throw new ApiError("shutting_down", "the server is shutting down");
    if (this.records.size + this.creating >= this.config.maxSessions)
      throw new ApiError(
        "too_many_sessions",
        `the server holds its limit of ${this.config.maxSessions} sessions (MAX_SESSIONS); delete one first`,
        { limit: this.config.maxSessions },
      );
    this.creating++;
    try {
      const id = randomUUID();
      const worker = this.leastLoadedWorker();
      const a = await this.call(null, worker, { kind: "create", sessionId: id, model });
      if (a.result.kind !== "created" || !a.session) throw new ApiError("internal", "bad reply");
      const rec: SessionRecord = {
        id,
        name: model.name,
        worker,
        ...a.session,
        counts: {
          bodies: model.bodies.length,
          forces: model.forces.length,
          joints: model.joints.length,
          motors: model.motors.length,
        },
        createdAt: new Date(),
        lastActivity: Date.now(),
        model,
        scene: a.result.scene,
        lastState: a.result.state,
        lost: false,
        busy: 0,
      };
      this.records.set(id, rec);
      this.log.info({ session: id, worker, bodies: rec.counts.bodies }, "session created");
      return this.view(rec);
    } finally {
      this.creating--;
    }
  }

  list(): SessionOut[] {
    return [...this.records.values()].map((r) => this.view(r));
  }

  get(id: string): SessionOut {
    return this.view(this.touch(id));
  }

  exists(id: string): boolean {
    return this.records.has(id);
  }

  async state(id: string): Promise<Uint8Array> {
    const rec = this.touch(id);
    if (rec.lost) return rec.lastState;
    return this.withRecord(rec, async () => {
      const a = await this.call(rec, rec.worker, { kind: "state", sessionId: id });
      return this.stateOf(rec, a);
    });
  }

  async step(id: string, body: StepRequest): Promise<Uint8Array> {
    const rec = this.touch(id);
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

  async run(id: string, realtimeFactor: number | null, until: number | null): Promise<SessionOut> {
    const rec = this.touch(id);
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

  async pause(id: string): Promise<SessionOut> {
    const rec = this.touch(id);
    this.allow(rec, ["ready", "paused", "running"], "nothing to pause");
    await this.withRecord(rec, () => this.call(rec, rec.worker, { kind: "pause", sessionId: id }));
    return this.view(rec);
  }

  async reset(id: string): Promise<Uint8Array> {
    const rec = this.touch(id);
    return this.withRecord(rec, async () => {
      if (rec.lost) await this.rebuild(rec);
      const a = await this.call(rec, rec.worker, { kind: "reset", sessionId: id });
      return this.stateOf(rec, a);
    });
  }

  async patch(id: string, patch: SessionPatch): Promise<SessionOut> {
    const rec = this.touch(id);
    this.allow(rec, ["ready", "paused", "running", "diverged"], "reset it first");
    await this.withRecord(rec, () =>
      this.call(rec, rec.worker, { kind: "update", sessionId: id, patch }),
    );
    return this.view(rec);
  }

  async delete(id: string): Promise<void> {
    const rec = this.records.get(id);
    if (!rec) throw notFound(id);
    this.records.delete(id);
    this.streams.closeSession(id, 1000, "session deleted");
    if (!rec.lost) {
      this.pool.notify(rec.worker, { kind: "cancel", sessionId: id });
      await this.pool
        .request(rec.worker, { kind: "delete", sessionId: id })
        .catch((err) => this.log.warn({ err, session: id }, "worker delete failed"));
    }
    this.log.info({ session: id }, "session deleted");
  }

  async assemble(id: string, options: AssemblyOptionsIn, apply: boolean): Promise<AssemblyAnswer> {
    const rec = this.touch(id);
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
      if (a.result.state) rec.lastState = a.result.state;
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

  private touch(id: string): SessionRecord {
    const rec = this.records.get(id);
    if (!rec) throw notFound(id);
    rec.lastActivity = Date.now();
    return rec;
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
    if (rec.lost) return;
    rec.status = s.status;
    rec.time = s.time;
    rec.step = s.step;
    rec.dt = s.dt;
    rec.message = s.message;
    rec.run = s.run;
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
      void this.delete(rec.id).catch(() => undefined);
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

  /** Second half (after in-flight requests are answered): stop the workers. */
  async close(): Promise<void> {
    await this.beginClose();
    await this.pool.close();
  }
}
