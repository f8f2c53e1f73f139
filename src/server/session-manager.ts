/**
 * Sessions as the event loop sees them: the coordinator behind the routes. Each request
 * method finds the session (as its owner sees it), checks the status rule, asks the
 * session's worker, and says which checkpoint the change calls for; the parts it
 * coordinates live in src/server/sessions/:
 *   records.ts        the record of a session, the table of them, ownership, placement
 *   admission.ts      MAX_SESSIONS and MAX_SESSIONS_PER_KEY, creations in flight included
 *   lifecycle.ts      open (create, fork, restore) and the durable delete
 *   worker-calls.ts   requests to a session's worker; its replies refresh the record
 *   worker-events.ts  frames to the streams, progress to the records, stats to the metrics
 *   checkpoints.ts    when a session is checkpointed, in memory and in DATA_DIR
 *   recovery.ts       sessions lost with their worker, rebuilt from their checkpoint
 *   idle.ts           SESSION_IDLE_TTL expiry
 *   shutdown.ts       the graceful close (checkpoint, 503 past SHUTDOWN_TIMEOUT_MS)
 *
 * Status rules (409 `conflict` otherwise):
 *   step, run       ready | paused
 *   pause           ready | paused (no-op) | running
 *   PATCH           any but error
 *   assembly        ready | paused | diverged
 *   state, reset, delete, stream   any status
 *
 * Order: a session's commands (step, run, pause, reset, PATCH, inputs, assembly) take effect
 * in the order they were received, each in its turn (records.ts inTurn) — a run's lasts
 * until it has started, its checkpoint included; a DELETE does not wait for its turn (the
 * commands behind it answer 404).
 *
 * Ownership (API keys, src/server/auth.ts): every method takes the requester's key id
 * (`owner`, null without keys); a session of another key is answered 404 as if it did not
 * exist, and each key may own MAX_SESSIONS_PER_KEY sessions.
 *
 * Cluster (REDIS_URL, src/server/cluster/): the manager holds the sessions this node owns;
 * `attachCluster` gives it the cluster's hooks (registry and quotas, leases, frames to the
 * Redis logs, fenced checkpoints), `adopt` opens a session taken over from its checkpoint
 * (its run resumed in the session's first turn), `handOver` lets one go in its turn for a
 * drain (its run kept in its checkpoint), and `evict` lets one go whose lease another node
 * holds now.
 *
 * Snapshots: `exportSnapshot` answers the session document (schemas/api.ts Snapshot: the
 * worker's engine snapshot bytes wrapped, never parsed here); `create` with a snapshot and
 * `fork` start a session from one.
 */
import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { WebSocket } from "ws";
import type { SessionOut, SessionPatch, StepRequest, StreamOptions } from "../../schemas/api";
import type { InputSpec } from "../../schemas/input";
import type { AssemblyOptionsIn } from "../../schemas/state";
import type { ClusterHooks } from "./cluster/hooks";
import type { Checkpoint, SnapshotStore } from "./cluster/ports";
import type { Config } from "./config";
import { ApiError, conflict, notFound } from "./errors";
import { sceneFrameBytes, withKeptStep } from "./frames";
import type { ServerMetrics } from "./metrics";
import { CheckpointStore } from "./persistence";
import type { FrameEncoding } from "./protocol";
import { Admission } from "./sessions/admission";
import { Checkpoints, runOf, sessionDocument } from "./sessions/checkpoints";
import { IdleSweeper } from "./sessions/idle";
import { SessionLifecycle } from "./sessions/lifecycle";
import { workerBudgetBytes } from "./sessions/memory";
import {
  inTurn,
  requireStatus,
  type SessionRecord,
  SessionTable,
  viewOf,
  withRecord,
} from "./sessions/records";
import { Recovery } from "./sessions/recovery";
import { Shutdown } from "./sessions/shutdown";
import { WorkerCalls } from "./sessions/worker-calls";
import { WorkerEvents } from "./sessions/worker-events";
import { StreamHub } from "./stream";
import { WorkerPool } from "./worker-pool";

export interface AssemblyAnswer {
  result: Uint8Array;
  state: Uint8Array | null;
}

export interface SessionManagerOptions {
  /**
   * the checkpoint store (default: one on DATA_DIR when it is set); a cluster passes its
   * Redis store, tests their own
   */
  store?: SnapshotStore | null;
}

export class SessionManager {
  readonly pool: WorkerPool;
  readonly streams: StreamHub;
  readonly store: SnapshotStore | null;
  private readonly table: SessionTable;
  private cluster: ClusterHooks | null = null;
  /** sessions a drain is handing over (handOver): their commands not yet in effect answer 503 */
  private readonly handingOver = new WeakSet<SessionRecord>();
  private readonly admission: Admission;
  private readonly calls: WorkerCalls;
  private readonly checkpoints: Checkpoints;
  private readonly lifecycle: SessionLifecycle;
  private readonly recovery: Recovery;
  private readonly events: WorkerEvents;
  private readonly idle: IdleSweeper;
  private readonly shutdown: Shutdown;

  constructor(
    private readonly config: Config,
    metrics: ServerMetrics,
    log: FastifyBaseLogger,
    options: SessionManagerOptions = {},
  ) {
    this.store =
      options.store !== undefined
        ? options.store
        : config.dataDir
          ? new CheckpointStore(config.dataDir, log)
          : null;
    // placement counts a worker's sessions' assemblies in flight (synchronous and long), and
    // takes the running workers before a lost one's starting replacement
    const table = new SessionTable(
      config.apiKeys.length > 0,
      (w) => this.pool.inFlight(w, ["assemble"]),
      (w) => this.pool.isAlive(w),
    );
    this.table = table;
    // the parts below are built in dependency order; the pool's and the streams' callbacks
    // and `closing` reach parts built after them, by the time they are called
    const closing = () => this.shutdown.isClosing;
    const cluster = () => this.cluster;
    this.pool = new WorkerPool(
      config,
      {
        onEvent: (w, ev) => this.events.handle(w, ev),
        onWorkerLost: (w, reason) => {
          this.recovery.onWorkerLost(w, reason);
          this.cluster?.workers(false);
        },
        onWorkerReady: (w) => {
          this.recovery.onWorkerReady(w);
          if (this.cluster) this.cluster.workers(true);
          else this.lifecycle.onWorkerReady(this.store);
        },
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
        const rec = table.find(id);
        // in a cluster the session may live on another node
        if (this.cluster) this.cluster.subscriptions(id, subs);
        if (!rec || this.cluster) {
          if (rec) rec.lastActivity = Date.now();
          return;
        }
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
    this.admission = new Admission(config, table, closing);
    this.calls = new WorkerCalls(this.pool, table, (rec, was) =>
      this.checkpoints.afterSnapshot(rec, was),
    );
    this.checkpoints = new Checkpoints(
      config,
      metrics,
      log,
      this.store,
      table,
      this.calls,
      closing,
      cluster,
      (rec, step) =>
        this.pool.notify(rec.worker, { kind: "checkpointed", sessionId: rec.id, step }),
    );
    this.lifecycle = new SessionLifecycle(
      config,
      log,
      this.pool,
      this.streams,
      table,
      this.admission,
      this.calls,
      this.checkpoints,
      cluster,
      (rec, run) => this.recovery.resumeRestored(rec, run),
    );
    this.recovery = new Recovery(
      config,
      metrics,
      log,
      this.pool,
      (id) => (this.cluster ? this.cluster.wanted(id) : this.streams.subscriptions(id)),
      table,
      this.calls,
      this.checkpoints,
      closing,
      cluster,
    );
    this.events = new WorkerEvents(
      metrics,
      this.pool,
      this.streams,
      table,
      this.calls,
      cluster,
      (rec, cp) => this.checkpoints.taken(rec, cp),
    );
    this.idle = new IdleSweeper(config, log, this.streams, table, (id) =>
      this.lifecycle.remove(id),
    );
    this.shutdown = new Shutdown(
      config,
      log,
      this.pool,
      this.streams,
      table,
      this.calls,
      this.checkpoints,
      this.idle,
    );
    metrics.attach({
      workerBusySeconds: () => this.pool.busySeconds(),
      workerMemory: () => this.events.memory,
      workerSessionMemory: () => table.memory(this.pool.size),
      workerSessionBudget: () => workerBudgetBytes(config),
      checkpointMemoryBytes: () => this.checkpoints.bytesInMemory,
    });
  }

  /**
   * Starts the workers, restores DATA_DIR's checkpoints (in a cluster the nodes take over
   * the sessions nobody holds instead: cluster/node.ts), starts the idle sweep.
   */
  async start(): Promise<void> {
    await this.pool.start();
    if (this.store && !this.cluster) {
      await this.store.init();
      await this.lifecycle.restoreAll(this.store);
    }
    this.idle.start();
  }

  get isClosing(): boolean {
    return this.shutdown.isClosing;
  }

  /** DATA_DIR: whether checkpoints reach the disk (the last failure, if any); null without it. */
  get persistence(): { ok: boolean; error: string | null } | null {
    return this.checkpoints.persistence;
  }

  get size(): number {
    return this.table.size;
  }

  byStatus(): Record<SessionOut["status"], number> {
    return this.table.byStatus();
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
    return this.view(await this.lifecycle.open(randomUUID(), owner, { body }, new Date()));
  }

  /** A copy of a session at its current step (status as the source's, running → paused). */
  async fork(id: string, owner: string | null = null): Promise<SessionOut> {
    const rec = await this.table.live(id, owner);
    const bytes = await withRecord(rec, () => this.calls.exportEngine(rec, true));
    return this.view(
      await this.lifecycle.open(randomUUID(), owner, { fork: rec, bytes }, new Date()),
    );
  }

  /** The session document (schemas/api.ts Snapshot) as JSON bytes. */
  async exportSnapshot(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.table.live(id, owner);
    return withRecord(rec, async () =>
      sessionDocument(rec, await this.calls.exportEngine(rec, true)),
    );
  }

  /**
   * Throws what a new session of `owner` would be refused with now (shutting down, the
   * server's or the key's session limit): the create route calls it before reading the
   * body, so a full quota costs no parsing (issue 26, item 5), and open() again.
   */
  checkCapacity(owner: string | null): void {
    this.admission.check(owner);
  }

  /** Its sessions, then those waiting for a worker to open them (status `restoring`). */
  list(owner: string | null = null): SessionOut[] {
    return this.table
      .all()
      .filter((r) => this.table.visible(r, owner))
      .map((r) => this.view(r))
      .concat(this.table.restoring(owner));
  }

  /**
   * A session's record; one waiting for a worker to open its checkpoint (`restoring`) as
   * listed: its record needs no worker (until 2026-12-07 it answered 503).
   */
  get(id: string, owner: string | null = null): SessionOut {
    const waiting = this.table.has(id) ? undefined : this.table.waiting(id, owner);
    if (waiting) return waiting;
    return this.view(this.table.touch(id, owner));
  }

  exists(id: string, owner: string | null = null): boolean {
    const rec = this.table.find(id);
    return rec !== undefined && this.table.visible(rec, owner);
  }

  async state(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = await this.table.live(id, owner);
    if (rec.lost) return withKeptStep(rec.lastState, rec.savedStep);
    const state = await withRecord(rec, async () =>
      this.calls.stateOf(rec, await this.calls.read(rec, { kind: "state", sessionId: id })),
    );
    return withKeptStep(state, rec.savedStep);
  }

  async step(id: string, body: StepRequest, owner: string | null = null): Promise<Uint8Array> {
    const rec = this.table.touch(id, owner);
    let called = false;
    let state: Uint8Array;
    try {
      state = await this.inTurn(rec, owner, async () => {
        requireStatus(rec, ["ready", "paused"], "it cannot step");
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
        called = true;
        return withRecord(rec, async () =>
          this.calls.stateOf(
            rec,
            await this.calls.call(rec, rec.worker, {
              kind: "step",
              sessionId: id,
              steps,
              limitMs: this.config.requestTimeoutMs,
            }),
          ),
        );
      });
    } finally {
      // an error answer (diverged, timeout) keeps the steps it took too (the next command
      // does not wait for this write)
      if (called) await this.checkpoints.afterSteps(rec);
    }
    // after the checkpoint the steps called for: what the store holds now
    return withKeptStep(state, rec.savedStep);
  }

  async run(
    id: string,
    realtimeFactor: number | null,
    until: number | null,
    owner: string | null = null,
  ): Promise<SessionOut> {
    const rec = this.table.touch(id, owner);
    // its start in its turn, checkpoint included: a command received after it (a pause)
    // takes effect once the run has started
    await this.inTurn(rec, owner, async () => {
      requireStatus(rec, ["ready", "paused"], "it cannot run");
      if (until !== null && until <= rec.time)
        throw new ApiError(
          "invalid_request",
          `until (${until} s) is not after the session's time (${rec.time} s)`,
          {
            part: "body",
            issues: [{ path: ["until"], message: "must be after the current time" }],
          },
        );
      // a client's run: a restart that resumes it is its first (recovery.ts resumeRestored)
      rec.runResumedAt = null;
      // the run is acknowledged once a checkpoint holding it is kept: of the session at the
      // step the run starts from, with the run (`resumeRun`: the cluster's store and the file
      // keep it), which a node taking the session over or a restart resumes. Taken before the
      // run starts, so that a run's own checkpoints stay at the exact steps k·K. Without it a
      // node or process lost after the 202 gave the session back from its checkpoint before
      // the run, paused: the acknowledged run lost until the run's first K-step checkpoint.
      rec.resumeRun = { realtimeFactor, until };
      try {
        await this.checkpoints.acknowledge(rec);
      } finally {
        rec.resumeRun = null;
      }
      await withRecord(rec, () =>
        this.calls.call(rec, rec.worker, { kind: "run", sessionId: id, realtimeFactor, until }),
      );
    });
    return this.view(rec);
  }

  async pause(id: string, owner: string | null = null): Promise<SessionOut> {
    const rec = this.table.touch(id, owner);
    await this.inTurn(rec, owner, async () => {
      requireStatus(rec, ["ready", "paused", "running"], "nothing to pause");
      await withRecord(rec, () =>
        this.calls.call(rec, rec.worker, { kind: "pause", sessionId: id }),
      );
    });
    // flushed now; a checkpoint in flight (the creation's, a run's end) may have exported an
    // earlier step, so this one is queued behind it rather than skipped
    await this.checkpoints.acknowledge(rec);
    return this.view(rec);
  }

  async reset(id: string, owner: string | null = null): Promise<Uint8Array> {
    const rec = this.table.touch(id, owner);
    const state = await this.inTurn(rec, owner, () =>
      withRecord(rec, async () => {
        if (rec.lost) await this.recovery.rebuildFromModel(rec);
        const a = await this.calls.call(rec, rec.worker, { kind: "reset", sessionId: id });
        rec.lastCheckpointStep = 0;
        // a new history: what an earlier rebuild lost is no longer its to report
        rec.notice = null;
        return this.calls.stateOf(rec, a);
      }),
    );
    await this.checkpoints.acknowledge(rec);
    return withKeptStep(state, rec.savedStep);
  }

  async patch(id: string, patch: SessionPatch, owner: string | null = null): Promise<SessionOut> {
    const rec = this.table.touch(id, owner);
    await this.inTurn(rec, owner, async () => {
      requireStatus(rec, ["ready", "paused", "running", "diverged"], "reset it first");
      await withRecord(rec, () =>
        this.calls.call(rec, rec.worker, { kind: "update", sessionId: id, patch }),
      );
    });
    await this.checkpoints.acknowledge(rec);
    return this.view(rec);
  }

  /**
   * Schedules run-time inputs (schemas/input.ts) at a step boundary; resolves once they are
   * kept (their checkpoint written: the answer's guarantee).
   */
  async inputs(
    id: string,
    body: { inputs: InputSpec[]; step?: number },
    owner: string | null = null,
  ): Promise<{ step: number; pending: number }> {
    const taken = await this.takeInputs(id, body, owner);
    await taken.kept;
    return taken.answer;
  }

  /**
   * `inputs` in two halves, for a stream socket's group commit (stream.ts CommandQueue):
   * resolves once the worker has scheduled them — the answer (its step and the pending
   * count) — with `kept`, which resolves once the checkpoint exported after them is written
   * (in memory without a store). The next inputs may be taken meanwhile: those taken while
   * a write is under way share the next one.
   */
  async takeInputs(
    id: string,
    body: { inputs: InputSpec[]; step?: number },
    owner: string | null = null,
  ): Promise<{ answer: { step: number; pending: number }; kept: Promise<void> }> {
    const rec = this.table.touch(id, owner);
    const a = await this.inTurn(rec, owner, () => {
      requireStatus(rec, ["ready", "paused", "running"], "reset it first");
      return withRecord(rec, () =>
        this.calls.call(rec, rec.worker, {
          kind: "inputs",
          sessionId: id,
          inputs: body.inputs,
          step: body.step ?? null,
        }),
      );
    });
    if (a.result.kind !== "inputs") throw new ApiError("internal", "bad reply");
    return {
      answer: { step: a.result.step, pending: a.result.pending },
      kept: this.checkpoints.acknowledge(rec),
    };
  }

  /** The recording (schemas/recording.ts) as JSON bytes; `every`: with replayed states. */
  async recording(
    id: string,
    every: number | null,
    owner: string | null = null,
  ): Promise<Uint8Array> {
    const rec = await this.table.live(id, owner);
    if (rec.lost)
      throw conflict(rec.id, rec.status, "its simulation was lost with its worker; reset it first");
    const a = await withRecord(rec, () =>
      this.calls.read(rec, {
        kind: "recording",
        sessionId: id,
        every,
        maxSteps: this.config.maxStepsPerRequest,
      }),
    );
    if (a.result.kind !== "exported") throw new ApiError("internal", "bad reply");
    return a.result.bytes;
  }

  /**
   * Deletes a session once its checkpoint is durably gone (lifecycle.ts `remove`), or the
   * checkpoint of one waiting for a worker to open it (`removeWaiting`; its other requests
   * answer 503 until then, a delete needs no worker).
   */
  async delete(id: string, owner: string | null = null): Promise<void> {
    const waiting = this.table.has(id) ? undefined : this.table.awaitingRestore.get(id);
    if (waiting && this.table.visible(waiting, owner)) return this.lifecycle.removeWaiting(id);
    this.table.touch(id, owner);
    await this.lifecycle.remove(id);
  }

  async assemble(
    id: string,
    options: AssemblyOptionsIn,
    apply: boolean,
    owner: string | null = null,
  ): Promise<AssemblyAnswer> {
    const rec = this.table.touch(id, owner);
    const a = await this.inTurn(rec, owner, () => {
      requireStatus(
        rec,
        ["ready", "paused", "diverged"],
        "assembly needs a session that is not running",
      );
      return withRecord(rec, () =>
        this.calls.call(rec, rec.worker, { kind: "assemble", sessionId: id, options, apply }),
      );
    });
    if (a.result.kind !== "assembly") throw new ApiError("internal", "bad reply");
    if (a.result.state) {
      rec.lastState = a.result.state;
      await withRecord(rec, () => this.checkpoints.acknowledge(rec));
    }
    return { result: a.result.result, state: a.result.state };
  }

  /**
   * Assembly of a posted model on the least loaded worker; nothing is kept. `body`: the
   * AssemblyRequest's JSON bytes, parsed and validated by the worker.
   */
  async assembleModel(body: Uint8Array): Promise<Uint8Array> {
    if (this.isClosing) throw new ApiError("shutting_down", "the server is shutting down");
    // counted on its worker while in flight: concurrent assemblies spread over the workers
    const { worker, release } = this.table.place(this.pool.size);
    const a = await this.calls
      .call(null, worker, { kind: "assembleModel", body, maxBodies: this.config.maxBodies })
      .finally(release);
    if (a.result.kind !== "assembly") throw new ApiError("internal", "bad reply");
    return a.result.result;
  }

  /**
   * A URDF import (POST /v1/models/urdf) on the least loaded worker; nothing is kept.
   * `body`: the request's JSON bytes, parsed, validated and converted by the worker.
   */
  async importUrdf(body: Uint8Array): Promise<Uint8Array> {
    if (this.isClosing) throw new ApiError("shutting_down", "the server is shutting down");
    const { worker, release } = this.table.place(this.pool.size);
    const a = await this.calls
      .call(null, worker, { kind: "importUrdf", body, maxBodies: this.config.maxBodies })
      .finally(release);
    if (a.result.kind !== "imported") throw new ApiError("internal", "bad reply");
    return a.result.bytes;
  }

  // ---------------------------------------------------------------- streams

  /** Attaches an upgraded WebSocket to a session: scene frame, then state frames. */
  subscribe(id: string, ws: WebSocket, opts: StreamOptions): void {
    const rec = this.table.find(id);
    if (!rec) {
      ws.close(4404, "no such session");
      return;
    }
    // being rebuilt after a worker loss: subscribed once it is, so that its scene frame's
    // clock and first state are the rebuilt session's, never the lost one's (the socket's
    // commands wait for the rebuild meanwhile, as requests do)
    if (rec.rebuilding) {
      void rec.rebuilding.then(() => {
        if (ws.readyState === ws.OPEN) this.subscribe(id, ws, opts);
      });
      return;
    }
    const sub = this.streams.add(id, ws, opts);
    this.streams.sendRaw(sub, this.sceneFrame(rec, opts.format, true));
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

  // ---------------------------------------------------------------- cluster

  /** Makes this manager a cluster node's (before start). */
  attachCluster(hooks: ClusterHooks): void {
    this.cluster = hooks;
  }

  /** The record of a session this node holds, if any. */
  local(id: string): SessionRecord | undefined {
    return this.table.find(id);
  }

  /** Every session this node holds. */
  locals(): SessionRecord[] {
    return this.table.all();
  }

  /**
   * Opens a session taken over from its last checkpoint (same id, owner and creation
   * time; its lease already claimed) and resumes the run it was in — unless its holder
   * lost it without a hand-over within a minute of resuming it (recovery.ts resumeTakenOver).
   */
  async adopt(cp: Checkpoint): Promise<SessionOut> {
    const created = Date.parse(cp.snapshot.session.createdAt ?? "");
    const run = cp.run;
    // its run resumed in the session's first turn (lifecycle.ts open): a command received
    // while the takeover is under way (a stream's, served from the table) takes effect after
    const rec = await this.lifecycle.open(
      cp.id,
      cp.owner,
      { snapshot: cp.snapshot, log: cp.log },
      Number.isFinite(created) ? new Date(created) : new Date(),
      true,
      run ? (r) => withRecord(r, () => this.recovery.resumeTakenOver(r, run)) : undefined,
    );
    // its first checkpoint under the new epoch once the run is resumed: taken before, it
    // held the session paused without its run (restored paused by the worker), and a node
    // lost before the run's next checkpoint gave the next one the session paused — an
    // acknowledged run lost
    void this.checkpoints.checkpoint(rec, true);
    return this.view(rec);
  }

  /**
   * Lets a session go without touching its checkpoint or registry entry: another node
   * owns it now (its lease was lost), or this one hands it over (a drain).
   */
  async evict(id: string): Promise<void> {
    const rec = this.table.find(id);
    if (!rec) return;
    rec.deleted = true;
    rec.evicted = true;
    this.table.delete(id);
    this.checkpoints.forget(rec);
    if (!rec.lost) {
      this.pool.notify(rec.worker, { kind: "cancel", sessionId: id });
      await this.pool.request(rec.worker, { kind: "delete", sessionId: id }).catch(() => undefined);
    }
  }

  /** Checkpoints a session now (its registry entry re-made after Redis lost it); resolves when written. */
  async checkpointNow(id: string): Promise<void> {
    const rec = this.table.find(id);
    if (!rec) return;
    // a session being rebuilt after a worker loss is checkpointed as rebuilt (its lost
    // simulation has nothing to pause or export)
    if (rec.rebuilding) await rec.rebuilding;
    await this.checkpoints.checkpoint(rec, true);
  }

  /**
   * Hands a session over (a drain): a run is stopped and kept in the checkpoint, for the
   * node taking the session over, then the session is let go (evict) once it is written —
   * all in the session's turn (records.ts inTurn), so that a command received meanwhile
   * takes effect on the node taking it over (answered 503 here, to be retried: `evicted`).
   * Until 2026-12-07 a pause received during the hand-over's checkpoint was answered
   * `paused` and undone by the other node resuming the run the checkpoint held.
   * The commands received before it and not yet taking effect are answered 503 too, at
   * their turn (`handingOver`: they never took effect here, and retried take effect on the
   * node taking it over, in the order retried): the hand-over waits for the one command
   * taking effect when it began (a step request: REQUEST_TIMEOUT_MS at most), not for every
   * command queued before it (until 2026-12-07 their sum, without a bound).
   */
  async handOver(id: string): Promise<void> {
    const rec = this.table.find(id);
    if (!rec) return;
    this.handingOver.add(rec);
    let resumedAt = rec.runResumedAt;
    await inTurn(rec, async () => {
      if (rec.rebuilding) await rec.rebuilding;
      // handed over alive, as a shutdown stops: its checkpoint without the time its run was
      // resumed after a loss, so the node taking it over resumes the run as a first, not as
      // after its holder's death (recovery.ts resumeTakenOver)
      resumedAt = rec.runResumedAt;
      rec.runResumedAt = null;
      if (rec.status === "running" && rec.run) {
        rec.resumeRun = runOf(rec.run);
        await withRecord(rec, () =>
          this.calls.call(rec, rec.worker, { kind: "pause", sessionId: id }),
        ).catch(() => undefined);
      }
      await this.checkpoints.checkpoint(rec, true);
      await this.evict(id);
    }).catch((err) => {
      // kept here (not handed over): its commands are served again, its checkpoints hold
      // the resume's time again
      this.handingOver.delete(rec);
      rec.runResumedAt = resumedAt;
      throw err;
    });
  }

  /** Tells a session's worker which classes to encode (the cluster's wanted ones). */
  refreshSubscriptions(id: string): void {
    const rec = this.table.find(id);
    if (rec && !rec.lost && this.cluster)
      this.pool.notify(rec.worker, {
        kind: "subscriptions",
        sessionId: id,
        subscriptions: this.cluster.wanted(id),
      });
  }

  /** The current state frame of a session in one encoding (a new class's first frame). */
  async currentFrame(
    id: string,
    encoding: FrameEncoding,
  ): Promise<{ step: number; bytes: Uint8Array } | null> {
    const rec = this.table.find(id);
    if (!rec || rec.lost) return null;
    const a = await this.pool.request(rec.worker, { kind: "snapshot", sessionId: id, encoding });
    return a.result.kind === "frame" && a.result.bytes
      ? { step: a.result.step, bytes: a.result.bytes }
      : null;
  }

  /**
   * The scene frame of a session held here (schemas/api.ts SceneFrame: the first frame of
   * its streams), encoded: its worker's encoded scene with the session's fields put before
   * it (frames.ts sceneFrameBytes: a copy, never an encoding of the scene). `clock`: with
   * the session's time and step (a stream's); without (the cluster directory's copy, which
   * a relay completes with its latest frame's).
   */
  sceneFrame(rec: SessionRecord, format: FrameEncoding["format"], clock: boolean): Uint8Array {
    const head = clock
      ? { type: "scene", session: rec.id, name: rec.name, time: rec.time, step: rec.step }
      : { type: "scene", session: rec.id, name: rec.name };
    return sceneFrameBytes(head, rec.scene, format);
  }

  /** The Session body of a record (the cluster's listing). */
  viewOf(rec: SessionRecord): SessionOut {
    return this.view(rec);
  }

  // ---------------------------------------------------------------- shutdown

  /**
   * First half of a graceful shutdown (before the HTTP server waits for in-flight requests):
   * refuse new sessions, close every stream with 1001, stop runs, and checkpoint every
   * session (sessions/shutdown.ts).
   */
  beginClose(): Promise<void> {
    return this.shutdown.begin();
  }

  /** Second half (after in-flight requests are answered): checkpoint again, stop the workers. */
  close(): Promise<void> {
    return this.shutdown.close();
  }

  // ---------------------------------------------------------------- test support

  /** Worker index of a session (tests, diagnostics). */
  workerOf(id: string): number {
    return this.record(id).worker;
  }

  /** Step of a session's last checkpoint held in memory, null if none (tests, diagnostics). */
  memoryCheckpointStep(id: string): number | null {
    return this.record(id).memory?.step ?? null;
  }

  /** Resolves when no session is being rebuilt after a worker loss (tests). */
  async rebuilt(): Promise<void> {
    for (;;) {
      const pending = this.table.all().flatMap((r) => (r.rebuilding ? [r.rebuilding] : []));
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  // ---------------------------------------------------------------- internals

  /**
   * A command's `effect` on session `rec` (found when the command was received) in its turn
   * (records.ts inTurn), once the session is live (its rebuild after a worker loss awaited;
   * 404 if it was deleted meanwhile, 503 while it waits for a worker).
   */
  private inTurn<T>(
    rec: SessionRecord,
    owner: string | null,
    effect: () => Promise<T>,
  ): Promise<T> {
    return inTurn(rec, async () => {
      if (rec.evicted)
        throw new ApiError(
          "cluster_unavailable",
          `session ${rec.id} moved to another node meanwhile; retry`,
          { session: rec.id, retryAfterMs: 100 },
        );
      if (this.handingOver.has(rec))
        throw new ApiError(
          "cluster_unavailable",
          `session ${rec.id} is being handed over to another node (this node is draining); retry`,
          { session: rec.id, retryAfterMs: 100 },
        );
      if ((await this.table.live(rec.id, owner)) !== rec) throw notFound(rec.id);
      return effect();
    });
  }

  private record(id: string): SessionRecord {
    const rec = this.table.find(id);
    if (!rec) throw notFound(id);
    return rec;
  }

  private view(rec: SessionRecord): SessionOut {
    return viewOf(rec, this.streams.count(rec.id), this.store !== null);
  }
}
