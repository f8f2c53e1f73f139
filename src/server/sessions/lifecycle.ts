/**
 * How a session comes to be and how it goes.
 *
 * `open`: a new session on the least loaded running worker (a lost one's starting
 * replacement only when no running one takes it: records.ts leastLoaded), from a create
 * body (validated by the worker), a checkpoint's session document (a restart's restore) or
 * another session's engine snapshot (fork); admitted first (admission.ts), and checkpointed
 * at once unless it was restored from its checkpoint (with a store, before `open` returns:
 * a creation is answered once it is kept). `restoreAll`: on start, every checkpoint of
 * DATA_DIR is opened again (same id, owner and creation time) and the run it holds resumed
 * (persistence.ts keeps it: a run's 202 waits for it), as a worker loss's rebuild does, with
 * the same guard (recovery.ts resumeRestored: not when the process died within a minute of
 * the restart that resumed it).
 *
 * In a cluster (REDIS_URL) a new session is admitted in the cluster's registry first (the
 * quotas over every node), and once open it takes its lease (cluster/node.ts) before its
 * first checkpoint, which the lease's epoch fences.
 *
 * `remove`: a DELETE completes only once the session's checkpoint is durably gone
 * (persistence.ts); when it cannot be, the session is kept and the DELETE answers 500
 * (retry it): a session answered deleted must not come back after a restart. The same
 * holds for a checkpoint waiting for a worker to open it (`removeWaiting`).
 */
import type { FastifyBaseLogger } from "fastify";
import type { SnapshotOut } from "../../../schemas/api";
import type { ClusterHooks } from "../cluster/hooks";
import type { Checkpoint, RunAt, SnapshotStore } from "../cluster/ports";
import type { Config } from "../config";
import { ApiError, notFound } from "../errors";
import type { InputLogAt, WorkerRequestBody } from "../protocol";
import type { StreamHub } from "../stream";
import type { WorkerAnswer, WorkerPool } from "../worker-pool";
import type { Admission } from "./admission";
import type { Checkpoints } from "./checkpoints";
import { lightestWithRoom, type NoRoomDetails, noRoom } from "./memory";
import {
  inTurn,
  restoringViewOf,
  type SessionRecord,
  type SessionTable,
  withRecord,
} from "./records";
import type { WorkerCalls } from "./worker-calls";

/** Where a new session comes from. */
export type Origin =
  /** the JSON of a create body (schemas/api.ts CreateSession), validated by the worker */
  | { body: Uint8Array }
  /** a checkpoint's session document */
  | { snapshot: SnapshotOut; log?: InputLogAt | null }
  /** the engine snapshot bytes of another session (fork) */
  | { fork: SessionRecord; bytes: Uint8Array };

export class SessionLifecycle {
  /** The restore of the sessions that waited for a worker, under way (onWorkerReady). */
  private restoringWaiting: Promise<void> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    private readonly pool: WorkerPool,
    private readonly streams: StreamHub,
    private readonly table: SessionTable,
    private readonly admission: Admission,
    private readonly calls: WorkerCalls,
    private readonly checkpoints: Checkpoints,
    private readonly cluster: () => ClusterHooks | null,
    /** resumes the run a restored session's checkpoint holds (recovery.ts `resumeRestored`) */
    private readonly resume: (rec: SessionRecord, run: RunAt) => Promise<void>,
  ) {}

  /**
   * Opens session `id` of `owner` from `from`; `restoring`: from its own checkpoint. `first`
   * (a restored session's run resumed) takes effect in the session's first turn (records.ts
   * inTurn), taken as the record enters the table, before any request can reach it: a
   * command received meanwhile (the cluster's `opened` waits for Redis, and a stream's
   * commands are served from the table: routes/stream.ts) takes effect after it. Until
   * 2026-12-07 a takeover's resumption was not in a turn: a pause received between the
   * opening and the resumption was answered `paused` and undone by the resumption.
   */
  async open(
    id: string,
    owner: string | null,
    from: Origin,
    createdAt: Date,
    restoring = false,
    first?: (rec: SessionRecord) => Promise<void>,
  ): Promise<SessionRecord> {
    // a restored session was already counted against its key's quota
    const admitted = this.admission.enter(owner, !restoring);
    const cluster = this.cluster();
    let registered = false;
    let release = () => {};
    try {
      if (cluster && !restoring) {
        await cluster.admit(id, owner);
        registered = true;
      }
      // counted on its worker from now (not only once answered): concurrent creations spread
      const placed = this.table.place(this.pool.size);
      let worker = placed.worker;
      release = placed.release;
      const request = requestOf(id, from, this.config.maxBodies);
      // its worker's sessions within WORKER_SESSION_MEMORY_MB (memory.ts): the worker
      // estimates the session from its validated model and refuses it before building it
      // when it has no room (worker-runtime.ts admit); then it is opened on the least loaded
      // other running worker with room by the table (a starting replacement only when none
      // has), if one has (which checks again: others were admitted meanwhile), else refused
      // (507) naming the budget
      let a: WorkerAnswer;
      try {
        a = await this.calls.call(null, worker, request);
      } catch (err) {
        const refused = noRoomOf(err);
        if (!refused) throw err;
        const memory = this.table.memory(this.pool.size);
        memory[worker] = Math.max(memory[worker], refused.heldBytes);
        const bytes = refused.sessionBytes;
        const budget = refused.budgetBytes;
        const other = lightestWithRoom(
          this.table.loads(this.pool.size),
          memory,
          bytes,
          budget,
          (w) => this.pool.isAlive(w),
        );
        if (other === null) throw noRoom(bytes, memory, budget);
        release();
        release = this.table.reserve(other);
        worker = other;
        a = await this.calls.call(null, worker, request).catch((again: unknown) => {
          const also = noRoomOf(again);
          if (!also) throw again;
          memory[other] = Math.max(memory[other], also.heldBytes);
          throw noRoom(bytes, memory, budget);
        });
      }
      if (a.result.kind !== "created" || !a.session) throw new ApiError("internal", "bad reply");
      const { origin } = a.result;
      const rec: SessionRecord = {
        id,
        name: origin.name,
        worker,
        ...a.session,
        counts: origin.counts,
        memoryBytes: origin.memoryBytes,
        createdAt,
        lastActivity: Date.now(),
        model: origin.model,
        // a restored session has its checkpoint already
        opened: restoring ? null : request,
        notice: null,
        scene: a.result.scene,
        lastState: a.result.state,
        lost: false,
        rebuilding: null,
        awaitingWorker: null,
        waitingSince: null,
        losses: [],
        busy: 0,
        owner,
        epoch: 0,
        resumeRun: null,
        runResumedAt: null,
        turn: Promise.resolve(),
        commandsQueued: 0,
        memory: null,
        lastCheckpointStep: a.session.step,
        lastCheckpointStatus: a.session.status,
        lastCheckpointAt: 0,
        checkpointing: null,
        checkpointWanted: false,
        checkpointUrgent: false,
        checkpointWaiters: [],
        checkpointTimer: null,
        workerCheckpoint: null,
        runHeldAt: null,
        savedStep: restoring ? a.session.step : null,
        persisted: true,
        inputLog: "snapshot" in from ? (from.log ?? null) : null,
        deleting: false,
        removing: null,
        deleted: false,
        evicted: false,
      };
      // `first` once the session is open (not if it could not be)
      let isOpen: (ok: boolean) => void = () => {};
      const opened = new Promise<boolean>((resolve) => {
        isOpen = resolve;
      });
      const firstTurn = first
        ? inTurn(rec, async () => {
            if (await opened) await first(rec);
          })
        : null;
      this.table.add(rec);
      // a session restored from its checkpoint: the store holds that step
      if (restoring) this.calls.tellKept(rec);
      release();
      if (cluster) {
        try {
          await cluster.opened(rec);
        } catch (err) {
          isOpen(false);
          this.table.delete(id);
          this.drop(worker, id);
          throw err;
        }
      }
      isOpen(true);
      if (firstTurn) await firstTurn;
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
      registered = false;
      // the first checkpoint at once, the answer waiting for it with a store (a restored
      // session has its file; the memory copy comes with its next checkpoint; a cluster's
      // takeover takes its own once its run is resumed: SessionManager.adopt). Without a
      // store it is not waited for: until it is held, a worker loss rebuilds the session
      // from the request that opened it (rec.opened, recovery.ts)
      if (!restoring) {
        const first = this.checkpoints.checkpoint(rec, true);
        if (this.checkpoints.store) await first;
      }
      return rec;
    } finally {
      release();
      admitted();
      if (registered) await cluster?.deleted(id).catch(() => undefined);
    }
  }

  /** Deletes a session's simulation on its worker that the table does not (or no longer) hold. */
  private drop(worker: number, id: string): void {
    this.pool.notify(worker, { kind: "cancel", sessionId: id });
    void this.pool.request(worker, { kind: "delete", sessionId: id }).catch(() => undefined);
  }

  /**
   * Opens every checkpoint of the store again (server start). One no worker can take, its
   * start failing (503 worker_unavailable: the server started degraded, worker-pool.ts
   * start), waits in the table's awaitingRestore — its requests 503 naming the cause, with
   * Retry-After — and is opened once a worker starts (onWorkerReady): its checkpoint is
   * never dropped for it.
   */
  async restoreAll(store: SnapshotStore): Promise<void> {
    const found = await store.readAll();
    const restored = await this.restoreEach(found, store);
    if (found.length > 0)
      this.log.info(
        {
          restored,
          found: found.length,
          waiting: this.table.awaitingRestore.size,
          store: store.where,
        },
        `restored ${restored} session(s) from ${store.where}`,
      );
    // a worker that started while they were being opened told nobody they wait
    if (this.table.awaitingRestore.size > 0 && this.pool.alive > 0) this.onWorkerReady(store);
  }

  /** A worker started: the checkpoints a restart could not open yet are opened (restoreAll). */
  onWorkerReady(store: SnapshotStore | null): void {
    if (!store || this.table.awaitingRestore.size === 0 || this.restoringWaiting) return;
    this.restoringWaiting = (async () => {
      try {
        const ids = [...this.table.awaitingRestore.keys()];
        const found: Checkpoint[] = [];
        for (const id of ids) {
          // one being deleted is not opened (removeWaiting waits for this pass first)
          if (this.table.awaitingRestore.get(id)?.removing) continue;
          const cp = await store.read(id).catch(() => null);
          if (cp) found.push(cp);
          else this.table.awaitingRestore.delete(id);
        }
        const restored = await this.restoreEach(found, store);
        this.log.info(
          { restored, waiting: this.table.awaitingRestore.size, store: store.where },
          `a solver worker started: restored ${restored} session(s) that waited for one`,
        );
      } finally {
        this.restoringWaiting = null;
      }
    })();
  }

  /** Opens each checkpoint; the number opened. */
  private async restoreEach(found: Checkpoint[], store: SnapshotStore): Promise<number> {
    let restored = 0;
    for (const cp of found) {
      if (this.table.has(cp.id)) continue;
      const created = Date.parse(cp.snapshot.session.createdAt ?? "");
      try {
        const run = cp.run;
        // its run resumed in the session's first turn: a command received meanwhile (the
        // server listens when a worker's start restores it late) takes effect after it
        await this.open(
          cp.id,
          cp.owner,
          { snapshot: cp.snapshot, log: cp.log },
          Number.isFinite(created) ? new Date(created) : new Date(),
          true,
          run ? (rec) => withRecord(rec, () => this.resume(rec, run)) : undefined,
        );
        this.table.awaitingRestore.delete(cp.id);
        restored++;
      } catch (err) {
        if (err instanceof ApiError && err.code === "worker_unavailable") {
          const worker = (err.details as { worker?: number } | undefined)?.worker ?? 0;
          // a failed try of one that waited already: it waits on since it began to
          const since = this.table.awaitingRestore.get(cp.id)?.since ?? Date.now();
          this.table.awaitingRestore.set(cp.id, {
            owner: cp.owner,
            error: () => this.pool.unavailable(worker),
            view: restoringViewOf(cp, since),
            since,
            removing: null,
          });
          this.log.warn(
            { session: cp.id, cause: (err.details as { cause?: string } | undefined)?.cause },
            "a checkpointed session waits for a solver worker that can start",
          );
          continue;
        }
        this.table.awaitingRestore.delete(cp.id);
        this.log.error(
          { err, session: cp.id, store: store.where },
          "a checkpointed session could not be restored",
        );
      }
    }
    return restored;
  }

  /**
   * Deletes a session: its checkpoint first (durably), then the session, its streams
   * (closed with 1000) and its simulation in the worker. Concurrent calls share one delete.
   */
  remove(id: string): Promise<void> {
    const rec = this.table.find(id);
    if (!rec) return Promise.reject(notFound(id));
    if (rec.removing) return rec.removing;
    const store = this.checkpoints.store;
    const removing = (async () => {
      if (rec.rebuilding) await rec.rebuilding;
      rec.deleting = true; // no checkpoint write starts from here on
      this.checkpoints.clearTimer(rec);
      if (store) {
        try {
          // after any write of it already under way
          await store.remove(id);
        } catch (err) {
          rec.deleting = false;
          throw this.notDeleted(id, err);
        }
      }
      await this.cluster()
        ?.deleted(id)
        .catch((err) => this.log.warn({ err, session: id }, "cluster registry not updated"));
      rec.deleted = true;
      this.table.delete(id);
      this.checkpoints.forget(rec);
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

  /**
   * Deletes a checkpoint waiting for a worker to open it (awaitingRestore): its file and
   * input log durably gone from the store (else 500, kept: retry), then from the list.
   * A pass opening the waiting ones (onWorkerReady) is let finish first: one it opened
   * meanwhile is an open session, deleted as any (`remove`); one it left waiting is skipped
   * by every later pass while this runs. Concurrent calls share one delete.
   */
  async removeWaiting(id: string): Promise<void> {
    while (this.restoringWaiting) await this.restoringWaiting;
    if (this.table.has(id)) return this.remove(id);
    const waiting = this.table.awaitingRestore.get(id);
    if (!waiting) throw notFound(id);
    if (waiting.removing) return waiting.removing;
    const store = this.checkpoints.store;
    const removing = (async () => {
      try {
        await store?.remove(id);
      } catch (err) {
        waiting.removing = null;
        throw this.notDeleted(id, err);
      }
      this.table.awaitingRestore.delete(id);
      this.log.info({ session: id }, "session waiting for a worker deleted");
    })();
    waiting.removing = removing;
    return removing;
  }

  /** The 500 of a delete whose checkpoint could not be removed (`err`): logged, the session kept. */
  private notDeleted(id: string, err: unknown): ApiError {
    this.log.error({ err, session: id }, "session not deleted: its checkpoint remains");
    return new ApiError(
      "internal",
      `session "${id}" was not deleted: ${(err as Error).message}; it is kept, retry the delete`,
      { session: id },
    );
  }
}

/** The figures of a worker's refusal for want of memory (memory.ts noRoomInfo), else null. */
function noRoomOf(err: unknown): NoRoomDetails | null {
  return err instanceof ApiError && err.code === "insufficient_memory"
    ? (err.details as NoRoomDetails)
    : null;
}

/** The worker request that opens a session from `from`. */
function requestOf(id: string, from: Origin, maxBodies: number): WorkerRequestBody {
  if ("body" in from) return { kind: "open", sessionId: id, body: from.body, maxBodies };
  if ("snapshot" in from)
    return {
      kind: "restore",
      sessionId: id,
      name: from.snapshot.session.name,
      snapshot: from.snapshot.simulation,
      status: from.snapshot.session.status,
      message: from.snapshot.session.message,
      // its own checkpoint: admitted once, not lost to the budget (worker-runtime.ts admit)
      admit: false,
      // its store's input log, which its checkpoints append to
      ...(from.log !== undefined ? { log: from.log } : {}),
    };
  return {
    kind: "restore",
    sessionId: id,
    name: from.fork.name,
    snapshot: from.bytes,
    status: from.fork.status,
    message: from.fork.message,
  };
}
