/**
 * Sessions lost with their worker (crashed, killed, or stopped by the watchdog).
 *
 * The pool fails the worker's pending requests (`worker_crashed`) and each of its sessions
 * is rebuilt at once on the least loaded live worker with room for it within
 * WORKER_SESSION_MEMORY_MB (the lost one's starting replacement only when none has room;
 * memory.ts; none: `error`, the budget named) from its last checkpoint (checkpoints.ts
 * `latest`: the file in DATA_DIR, or the copy in memory when it is newer or there is no
 * DATA_DIR), the way a restart restores; a session that was
 * running runs on, unless it was lost twice within LOSS_WINDOW_MS (then it comes back
 * paused, and its message says so: a session that kills its worker must not do it forever).
 * Meanwhile the session says so (`rebuilding: true`, its status, time and step the last
 * known before the loss) and the requests that need its simulation wait for the rebuild
 * (SessionTable.live), never answered from the lost state; reads in flight on the lost
 * worker are asked again of the rebuilt session (WorkerCalls.read).
 * A session lost before its first checkpoint was kept (its creation's still queued on the
 * busy worker) is rebuilt as it was created, from the request that opened it (or from its
 * model, at t = 0, once that is let go), and checkpointed at once.
 * What a rebuild cost is said, not hidden: the session's `message` (SessionRecord.notice,
 * while its status has no message of its own, until a reset) names the step it came back
 * at and the steps lost since, and moreau_session_rebuilds_total{from} counts it (from:
 * disk, memory, creation, model; none, failed).
 * When no worker can take it — the lost one's replacement fails to start (a broken worker
 * script, an exit at once) and no other has room — the session is not failed: it waits,
 * its last checkpoint kept, its requests answered 503 `worker_unavailable` naming the cause
 * (Retry-After), and is rebuilt as soon as a worker starts (onWorkerReady; the pool retries
 * the start with back-off). Until 2026-12-07 it went to `error` after three starts.
 * Only a session whose rebuild fails otherwise goes to `error` with its last state kept, and `reset`
 * rebuilds it from its model at t = 0 (`rebuildFromModel`). During a shutdown nothing is
 * rebuilt.
 *
 * A restart (DATA_DIR) resumes the runs its checkpoints hold (`resumeRestored`) with the same
 * guard: a run that takes the whole process down (or its worker, and the process with it)
 * must not do it at every start. The time a restart resumes a run is written with it in its
 * checkpoint before it starts (RunAt.resumedAt, kept by the run's checkpoints); a restart
 * finding one less than LOSS_WINDOW_MS old — the process died again within the window —
 * restores the session without its run (paused, or as it was when the run started if no
 * checkpoint of the run's own steps was kept), its message saying so. A graceful shutdown's checkpoint
 * drops that time (the process did not die), and so does a client's POST /run (a new run).
 * Until 2026-12-07 a restart resumed every run it found: a run that crashed the process
 * was resumed by every restart, a crash loop.
 */
import type { FastifyBaseLogger } from "fastify";
import type { ClusterHooks } from "../cluster/hooks";
import type { RunAt } from "../cluster/ports";
import type { Config } from "../config";
import { ApiError } from "../errors";
import type { ServerMetrics } from "../metrics";
import type { SessionSnapshot, Subscription, WorkerRequestBody } from "../protocol";
import { type WorkerAnswer, WorkerFailure, type WorkerPool } from "../worker-pool";
import type { Checkpoints } from "./checkpoints";
import { lightestWithRoom, noRoom, workerBudgetBytes } from "./memory";
import { namingSession, type SessionRecord, type SessionTable } from "./records";
import type { WorkerCalls } from "./worker-calls";

/**
 * A session lost twice within this window comes back paused (its run is not resumed): lost
 * with a worker twice, or with the process within this long of a restart that resumed it.
 */
const LOSS_WINDOW_MS = 60_000;

/** A lost session waiting for a worker that can start (Recovery.park). */
interface Parked {
  rec: SessionRecord;
  reason: string;
  run: SessionSnapshot["run"];
}

export class Recovery {
  /** lost sessions no worker could take yet, by id: rebuilt when one starts */
  private readonly parked = new Map<string, Parked>();

  constructor(
    private readonly config: Config,
    private readonly metrics: ServerMetrics,
    private readonly log: FastifyBaseLogger,
    private readonly pool: WorkerPool,
    /** the subscription classes a session's worker encodes (its streams', or the cluster's) */
    private readonly subscriptionsOf: (id: string) => Subscription[],
    private readonly table: SessionTable,
    private readonly calls: WorkerCalls,
    private readonly checkpoints: Checkpoints,
    private readonly closing: () => boolean,
    private readonly cluster: () => ClusterHooks | null,
  ) {}

  /** The pool lost `worker`: its sessions are rebuilt elsewhere (or marked lost). */
  onWorkerLost(worker: number, reason: string): void {
    this.metrics.workerRestarts.inc();
    const lost: { rec: SessionRecord; run: SessionSnapshot["run"] }[] = [];
    for (const rec of this.table.all()) {
      if (rec.worker !== worker || rec.lost) continue;
      rec.lost = true;
      this.checkpoints.clearTimer(rec);
      // a run's checkpoint still waiting to be written: the rebuild restarts from the last written
      rec.workerCheckpoint = null;
      rec.runHeldAt = null;
      lost.push({ rec, run: rec.status === "running" ? rec.run : null });
      this.log.warn({ session: rec.id, worker }, "session lost with its worker");
    }
    if (this.closing()) {
      for (const { rec } of lost) markLost(rec, `${reason}; the server is shutting down`);
      return;
    }
    this.rebuild(lost.map(({ rec, run }) => ({ rec, run, reason })));
  }

  /** A worker started: the sessions waiting for one are rebuilt (on it, or where there is room). */
  onWorkerReady(_worker: number): void {
    if (this.parked.size === 0 || this.closing()) return;
    const waiting = [...this.parked.values()];
    this.parked.clear();
    for (const { rec } of waiting) rec.awaitingWorker = null;
    this.rebuild(waiting.filter(({ rec }) => this.table.find(rec.id) === rec));
  }

  /** Rebuilds lost sessions from their checkpoints (onWorkerLost). */
  private rebuild(lost: Parked[]): void {
    // spread over the live workers with room, the lost one's replacement only when none
    // has (memory.ts lightestWithRoom: requests to it wait until it has started)
    const live = (w: number) => this.pool.isAlive(w);
    const load = this.table.loads(this.pool.size);
    // and never past a worker's WORKER_SESSION_MEMORY_MB (memory.ts): the lost worker's
    // sessions piled on the others would take them down in turn
    const memory = this.table.memory(this.pool.size);
    const budget = workerBudgetBytes(this.config);
    for (const { rec, run, reason } of lost) {
      if (rec.deleting) {
        markLost(rec, reason);
        continue;
      }
      const target = lightestWithRoom(load, memory, rec.memoryBytes, budget, live);
      if (target === null) {
        this.metrics.sessionRebuilds.inc({ from: "failed" });
        markLost(rec, `${reason}; not rebuilt: ${noRoom(rec.memoryBytes, memory, budget).message}`);
        continue;
      }
      load[target]++;
      memory[target] += rec.memoryBytes;
      rec.message = `${reason}; restoring the session from its last checkpoint`;
      rec.busy++;
      const done = this.rebuildFromCheckpoint(rec, reason, run, target).finally(() => {
        rec.busy--;
        if (rec.rebuilding === done) rec.rebuilding = null;
      });
      rec.rebuilding = done;
    }
  }

  /**
   * Resumes the run a restored session was in (resumeNoted: a rebuild here, a restart, a
   * cluster's takeover), unless its `until` has passed; a refusal is logged, never thrown.
   */
  private async resume(rec: SessionRecord, run: RunAt): Promise<void> {
    if (run.until !== null && run.until <= rec.time) return;
    await this.calls
      .call(rec, rec.worker, {
        kind: "run",
        sessionId: rec.id,
        realtimeFactor: run.realtimeFactor,
        until: run.until,
      })
      .catch((err) => this.log.warn({ err, session: rec.id }, "run not resumed after the restore"));
  }

  /**
   * Resumes the run a restart found in a session's checkpoint (lifecycle.ts restoreAll) —
   * unless a restart resumed it less than LOSS_WINDOW_MS ago (`run.resumedAt`: the process
   * died again since): resumeGuarded. A refusal is logged, never thrown.
   */
  resumeRestored(rec: SessionRecord, run: RunAt): Promise<void> {
    return this.resumeGuarded(
      rec,
      run,
      (resumed) =>
        `restored from its checkpoint at step ${rec.step} after a restart; its run was not resumed, the server having stopped without a shutdown within ${LOSS_WINDOW_MS / 1000} s of the restart that resumed it (${resumed}) (POST /run resumes it)`,
      "the process died within a minute of resuming the session's run: restored paused, its run not resumed",
    );
  }

  /**
   * Resumes the run a cluster node found in the checkpoint of a session it takes over
   * (SessionManager.adopt), with a restart's guard: the holder that resumed it less than
   * LOSS_WINDOW_MS ago (`run.resumedAt`: a takeover's, a rebuild's or a restart's resume) lost
   * it since without a hand-over — it died (its lease expired), or lost its worker with no
   * other to start — so the session stays paused (resumeGuarded). A drain's hand-over writes
   * its checkpoint without `resumedAt` (SessionManager.handOver: the holder is alive, as a
   * shutdown's checkpoint is), so its run is resumed as a first. Until 2026-12-07 a
   * takeover resumed every run it found: a run that took down each node taking it over went
   * round the cluster forever. The window is read on the wall clocks of two nodes (the one
   * that wrote `resumedAt`, this one): their skew moves it.
   */
  resumeTakenOver(rec: SessionRecord, run: RunAt): Promise<void> {
    return this.resumeGuarded(
      rec,
      run,
      (resumed) =>
        `taken over from its checkpoint at step ${rec.step}; its run was not resumed, the node holding it having lost it without a hand-over (died, or lost its worker) within ${LOSS_WINDOW_MS / 1000} s of the takeover, rebuild or restart that resumed it (${resumed}) (POST /run resumes it)`,
      "the session's holder lost it within a minute of resuming its run: taken over paused, its run not resumed",
    );
  }

  /**
   * Resumes `run` — unless its checkpoint says a restart, rebuild or takeover resumed it less
   * than LOSS_WINDOW_MS ago (`run.resumedAt`), then the session stays paused as its worker
   * restored it, its message says why (`halted(the ISO time of that resume)`), and its
   * checkpoint is written without the run (a later restart or takeover does not resume it
   * either). Otherwise resumeNoted. A refusal is logged, never thrown.
   */
  private async resumeGuarded(
    rec: SessionRecord,
    run: RunAt,
    halted: (resumed: string) => string,
    warning: string,
  ): Promise<void> {
    if (run.until !== null && run.until <= rec.time) return;
    const now = Date.now();
    if (run.resumedAt !== undefined && now - run.resumedAt < LOSS_WINDOW_MS) {
      const resumed = new Date(run.resumedAt).toISOString();
      rec.notice = halted(resumed);
      this.log.warn({ session: rec.id, step: rec.step, resumedAt: resumed }, warning);
      await this.checkpoints.acknowledge(rec);
      return;
    }
    await this.resumeNoted(rec, run, now);
  }

  /**
   * Resumes `run` once its checkpoint holds it with the time of this resume, `now`
   * (RunAt.resumedAt, kept by the run's checkpoints): a restart after the process died
   * within LOSS_WINDOW_MS of it restores the session paused (resumeRestored), and a node
   * taking it over after its holder died does too (resumeTakenOver). Awaited before
   * the run goes on: a run that takes the process down at its first step is found so.
   */
  private async resumeNoted(rec: SessionRecord, run: RunAt, now: number): Promise<void> {
    rec.runResumedAt = now;
    rec.resumeRun = { realtimeFactor: run.realtimeFactor, until: run.until };
    try {
      await this.checkpoints.acknowledge(rec);
    } finally {
      rec.resumeRun = null;
    }
    await this.resume(rec, run);
  }

  /**
   * Recreates a lost session's simulation from its model (t = 0) on the least loaded worker
   * with room for it (WORKER_SESSION_MEMORY_MB; none: 507).
   */
  async rebuildFromModel(rec: SessionRecord): Promise<void> {
    const memory = this.table.memory(this.pool.size, rec.id);
    const budget = workerBudgetBytes(this.config);
    const target = lightestWithRoom(
      this.table.loads(this.pool.size, rec.id),
      memory,
      rec.memoryBytes,
      budget,
      (w) => this.pool.isAlive(w),
    );
    if (target === null) throw noRoom(rec.memoryBytes, memory, budget);
    await this.relocate(rec, this.fromModel(rec), target);
  }

  /** The request that opens a session's simulation from its model (t = 0). */
  private fromModel(rec: SessionRecord): WorkerRequestBody {
    return {
      kind: "open",
      sessionId: rec.id,
      body: Buffer.concat([Buffer.from('{"model":'), rec.model, Buffer.from("}")]),
      maxBodies: this.config.maxBodies,
    };
  }

  /**
   * Rebuilds a lost session from its last checkpoint on worker `target` — as it was
   * created when none was kept yet — says so in its message, and resumes its run if it was
   * running. Never rejects.
   */
  private async rebuildFromCheckpoint(
    rec: SessionRecord,
    reason: string,
    run: SessionSnapshot["run"],
    target: number,
  ): Promise<void> {
    const now = Date.now();
    rec.losses = [...rec.losses.filter((t) => now - t < LOSS_WINDOW_MS), now];
    // the last step the event loop knew of (answered or streamed)
    const reached = rec.step;
    try {
      const source = rec.deleted ? null : await this.checkpoints.latest(rec);
      if (rec.deleted) {
        this.metrics.sessionRebuilds.inc({ from: "none" });
        markLost(rec, `${reason}; the session is being deleted`);
        return;
      }
      // no checkpoint kept yet: as it was created (the request that opened it), or from
      // its model once that request was let go
      const from = source ? source.from : rec.opened ? "creation" : "model";
      await this.relocate(rec, source ? source.body : (rec.opened ?? this.fromModel(rec)), target);
      this.metrics.sessionRebuilds.inc({ from });
      // a run lost twice within LOSS_WINDOW_MS is not resumed (the session may be what kills
      // its workers): said in its message, as the steps lost are, not only logged
      const halted = run !== null && !this.closing() && rec.losses.length > 1;
      rec.notice = rebuiltNotice(from, rec.step, reached, reason, halted);
      this.log.warn(
        { session: rec.id, worker: rec.worker, step: rec.step, reached, from },
        source
          ? "session lost with its worker rebuilt from its last checkpoint"
          : "session lost with its worker before its first checkpoint rebuilt as it was created",
      );
      // its first checkpoint, now (the one its creation asked for was lost with the worker)
      if (!source) void this.checkpoints.checkpoint(rec, true);
      if (halted) {
        this.log.warn(
          { session: rec.id, losses: rec.losses.length },
          "session lost again within a minute: restored paused, its run not resumed",
        );
        // its checkpoint without the run: a restart does not resume it either
        await this.checkpoints.acknowledge(rec);
      }
      // the resume's time written with the run first, as a restart's resume writes it
      // (until 2026-12-07 only those did): a run whose rebuild's resume takes the process
      // down within LOSS_WINDOW_MS is restored paused by the next start, where every start
      // resumed it again (a crash loop that the in-process count of losses, lost with the
      // process, never saw)
      else if (run && !this.closing()) await this.resumeNoted(rec, run, now);
    } catch (err) {
      if (err instanceof ApiError && err.code === "worker_unavailable" && !this.closing()) {
        this.park(rec, reason, run, err);
        return;
      }
      this.metrics.sessionRebuilds.inc({ from: "failed" });
      this.log.error({ err, session: rec.id }, "session could not be rebuilt from its checkpoint");
      rec.lost = true;
      markLost(
        rec,
        `${reason}; it could not be restored from its checkpoint (${(err as Error)?.message})`,
      );
    }
  }

  /**
   * A lost session no worker can take now (`err`: the last refusal, worker_unavailable):
   * kept lost, with its checkpoint, until a worker starts (onWorkerReady); its requests are
   * answered 503 naming the cause (SessionTable.live), its message says what it waits for.
   */
  private park(
    rec: SessionRecord,
    reason: string,
    run: SessionSnapshot["run"],
    err: ApiError,
  ): void {
    // not a loss of its own: the rebuild's retry counts it again
    rec.losses.pop();
    rec.lost = true;
    // in a cluster a node whose workers run takes it over from its checkpoint instead
    const cluster = this.cluster();
    if (cluster) {
      cluster.unavailable(rec);
      return;
    }
    const worker = (err.details as { worker?: number } | undefined)?.worker ?? rec.worker;
    // a failed retry of one that waited already: it waits on since it began to
    rec.waitingSince ??= Date.now();
    const since = new Date(rec.waitingSince).toISOString();
    rec.awaitingWorker = () =>
      namingSession(
        rec.id,
        `waiting since ${since} for a solver worker to restore it from its last checkpoint`,
        this.pool.unavailable(worker),
      );
    const cause = (err.details as { cause?: string } | undefined)?.cause ?? err.message;
    rec.message = `${reason}; waiting since ${since} for a solver worker to start (${cause}): its last checkpoint is kept and it is restored once one starts`;
    this.parked.set(rec.id, { rec, reason, run });
    this.log.warn(
      { session: rec.id, cause },
      "session lost with its worker waits for a worker that can start",
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
      // counted on that worker while it is being opened there (placement)
      const release = this.table.reserve(w);
      try {
        // its place chosen within the budget already (or a reset's); not refused by the
        // worker's own check, which counts what the table does not (recordings)
        a = await this.pool.request(w, readmitted(body));
        worker = w;
        break;
      } catch (err) {
        const last = w === order[order.length - 1];
        if (
          err instanceof ApiError &&
          (err.code === "worker_crashed" || err.code === "worker_unavailable") &&
          !last &&
          !this.closing()
        )
          continue;
        if (err instanceof WorkerFailure)
          throw new ApiError(err.info.code, err.info.message, err.info.details);
        throw err;
      } finally {
        release();
      }
    }
    if (!a) throw new ApiError("worker_crashed", "no solver worker could take the session");
    rec.worker = worker;
    rec.seq = 0; // another worker counts its own snapshots
    rec.lost = false;
    if (rec.waitingSince !== null) {
      // its idle clock (SESSION_IDLE_TTL) starts again once it can be used, as a restart's
      // restore starts it (idle.ts leaves a waiting session alone)
      rec.waitingSince = null;
      rec.lastActivity = Date.now();
    }
    if (a.result.kind === "created") {
      rec.memoryBytes = a.result.origin.memoryBytes;
      rec.lastState = a.result.state;
      rec.scene = a.result.scene;
    }
    if (a.session) {
      this.calls.apply(rec, a.session);
      rec.lastCheckpointStep = a.session.step;
    }
    this.calls.tellKept(rec);
    this.pool.notify(worker, {
      kind: "subscriptions",
      sessionId: rec.id,
      subscriptions: this.subscriptionsOf(rec.id),
    });
  }
}

/**
 * The `message` of a session rebuilt after a worker loss (`from`: what it was rebuilt
 * from), at step `step`, having reached step `reached` before; `halted`: it was running
 * and its run is not resumed (lost twice within LOSS_WINDOW_MS).
 */
function rebuiltNotice(
  from: string,
  step: number,
  reached: number,
  reason: string,
  halted: boolean,
): string {
  const what =
    from === "creation"
      ? `rebuilt as it was created (step ${step}) after a worker loss, before any checkpoint of it was kept`
      : from === "model"
        ? `rebuilt from its model at step ${step} after a worker loss, no checkpoint of it being kept`
        : `restored from its checkpoint at step ${step} after a worker loss`;
  const lost =
    reached > step
      ? `; the ${reached - step} step(s) after it were lost (it had reached step ${reached})`
      : "";
  const paused = halted
    ? `; its run was not resumed, the session having been lost with a worker twice within ${LOSS_WINDOW_MS / 1000} s (POST /run resumes it)`
    : "";
  return `${what} (${reason})${lost}${paused}`;
}

/** The session stays lost: `error`, its last state served, reset rebuilds it from the model. */
function markLost(rec: SessionRecord, why: string): void {
  rec.status = "error";
  rec.run = null;
  rec.message = `${why}; the simulation was lost (state: the last one received; reset rebuilds it from the model)`;
}

/** The request that opens a session again, not refused by its worker for want of room. */
function readmitted(body: WorkerRequestBody): WorkerRequestBody {
  return body.kind === "open" || body.kind === "restore" ? { ...body, admit: false } : body;
}
