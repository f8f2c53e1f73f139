/**
 * When a session is checkpointed, where its checkpoints go, and which one a rebuild takes.
 *
 * When: at creation; when it stops running (pause, `until` reached, divergence); after
 * reset, PATCH, inputs, a run's start and an applied assembly; every CHECKPOINT_EVERY_STEPS = K steps; and
 * on shutdown (shutdown.ts, `all`). With a store, the answer to a change waits until its
 * checkpoint is written (`acknowledge`; without one, until it is held in memory: no 2xx
 * answer's change is lost with its worker), and so does a step request's answer for the
 * checkpoint its steps call for (`afterSteps`): no 2xx answer's change is lost to a crash. A run's K-step checkpoints are taken by its worker at
 * the exact steps k·K (the run loop stops there for it: worker-runtime.ts) and sent with
 * the snapshot, and the run waits at step k·K until that checkpoint is written (or
 * deferred, below: then it is not waited for), so no step past it is answered or streamed
 * before it is kept — a node or process that dies loses at most K acknowledged steps. The
 * rest are exported from the worker when asked for (a step request's at its answer's
 * step). Checkpoints are coalesced per session: one at a time, and
 * those of steps asked for less than CHECKPOINT_MIN_INTERVAL_MS after the previous one are
 * deferred to that interval (the latest state wins; not waited for); creation, an answered
 * change, the end of a run, pause and shutdown are urgent: written at once
 * (after the one under way, never skipped for it: that one may have exported an earlier
 * step).
 *
 * Where: the last checkpoint of every session is kept in memory (its engine snapshot bytes,
 * within CHECKPOINT_MEMORY_BYTES for all sessions) and, with DATA_DIR, written to disk as
 * the session document (persistence.ts: atomic writes, durable deletes). A failed write
 * shows in /ready until a write succeeds.
 *
 * In a cluster (REDIS_URL) the store is Redis (cluster/redis.ts) and every write carries
 * the session's epoch and run: a write of a node that lost the session (its lease expired
 * and another node claimed it) is refused, and that node lets the session go.
 *
 * Which: a session lost with its worker is rebuilt (recovery.ts) from the newer of the file
 * and the copy in memory (the copy when a write failed or there is no DATA_DIR).
 */
import type { FastifyBaseLogger } from "fastify";
import {
  SESSION_SNAPSHOT_FORMAT,
  SESSION_SNAPSHOT_VERSION,
  type SessionStatusName,
} from "../../../schemas/api";
import type { ClusterHooks } from "../cluster/hooks";
import { FencedError, type RunAt, type SnapshotStore } from "../cluster/ports";
import type { Config } from "../config";
import type { ServerMetrics } from "../metrics";
import { type InputLogPart, loggedPart, type WorkerRequestBody } from "../protocol";
import type { MemoryCheckpoint, SessionRecord, SessionTable, WorkerCheckpoint } from "./records";
import type { WorkerCalls } from "./worker-calls";

/** The bytes a checkpoint in memory keeps alive: its snapshot's and its log part's. */
function memoryHeld(cp: MemoryCheckpoint): number {
  return heldBytes(cp.engine) + (cp.log?.lines.byteLength ?? 0);
}

/** A session's status at the step its engine snapshot was taken. */
type SnapshotAt = Pick<SessionRecord, "status" | "message" | "time" | "step">;

/** A checkpoint to rebuild a session from: the worker's restore request for it. */
export interface RestoreSource {
  body: WorkerRequestBody;
  from: "memory" | "disk";
  step: number;
}

/**
 * Room left before an engine snapshot's bytes in their ArrayBuffer (engineSnapshotBytes) for
 * the session document's head, `{"format":…,"version":…,"session":{…},"simulation":` —
 * a few hundred bytes (an id of 128 characters at most, the session's name and message) —
 * and after them for its closing brace.
 */
const HEAD_ROOM = 4096;
const TAIL_ROOM = 1;
/** Below this size an engine snapshot gets no room: copying it costs nothing. */
const ROOM_FROM_BYTES = 64 * 1024;
const utf8 = new TextEncoder();

/**
 * An engine snapshot's UTF-8 JSON bytes, encoded by the worker that holds the simulation.
 * From ROOM_FROM_BYTES on they are a view into an ArrayBuffer with HEAD_ROOM bytes before
 * and TAIL_ROOM after (transferred whole with the view), where `sessionDocument` writes the
 * document's head and tail: the event loop then wraps a snapshot without copying it (a
 * 10 000-particle cloth's is 10 MB; its copy was the event loop's longest task while it is
 * checkpointed: 60 to 90 ms at load 15 on the 2 cores here).
 */
export function engineSnapshotBytes(snapshot: unknown): Uint8Array {
  const text = JSON.stringify(snapshot);
  const length = Buffer.byteLength(text, "utf8");
  if (length < ROOM_FROM_BYTES) return utf8.encode(text);
  const view = new Uint8Array(new ArrayBuffer(HEAD_ROOM + length + TAIL_ROOM), HEAD_ROOM, length);
  utf8.encodeInto(text, view);
  return view;
}

/**
 * The bytes an engine snapshot keeps alive: its whole ArrayBuffer, room included (a large
 * one's view holds HEAD_ROOM + TAIL_ROOM = 4097 bytes more than its byteLength).
 */
function heldBytes(engine: Uint8Array): number {
  return engine.buffer.byteLength;
}

/**
 * The session document (schemas/api.ts Snapshot): the engine snapshot bytes wrapped with
 * the session's status, never parsed here. When the bytes have room around them in their
 * ArrayBuffer (engineSnapshotBytes) the head and tail are written there and the document is
 * a view of that buffer — no copy; else a new buffer. A buffer's room is written by each
 * document made of it: one document at a time of an engine snapshot (each checkpoint pass
 * wraps a snapshot of its own; an export answer, another).
 */
export function sessionDocument(
  rec: SessionRecord,
  engine: Uint8Array,
  at: SnapshotAt = rec,
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
  const prefix = utf8.encode(`${head.slice(0, -1)},"simulation":`);
  const start = engine.byteOffset - prefix.length;
  const end = engine.byteOffset + engine.byteLength;
  if (start >= 0 && end + TAIL_ROOM <= engine.buffer.byteLength) {
    const whole = new Uint8Array(engine.buffer);
    whole.set(prefix, start);
    whole[end] = 0x7d; // "}"
    return whole.subarray(start, end + 1);
  }
  return Buffer.concat([prefix, engine, Buffer.from("}", "utf8")]);
}

/** The part of a run a node taking the session over resumes (cluster checkpoints). */
export function runOf(run: NonNullable<SessionRecord["run"]>): RunAt {
  return { realtimeFactor: run.realtimeFactor, until: run.until };
}

/**
 * The run a checkpoint holds, with when a restart, a worker-loss rebuild or a cluster
 * takeover resumed it (`resumedAt`; null: none did).
 */
function heldRun(run: RunAt | null, resumedAt: number | null): RunAt | null {
  return run && resumedAt !== null ? { ...run, resumedAt } : run;
}

export class Checkpoints {
  /** bytes of the checkpoints held in memory */
  private memoryBytes = 0;
  /** DATA_DIR: the last checkpoint failure, cleared by the next successful write (/ready). */
  private persistenceError: string | null = null;

  constructor(
    private readonly config: Config,
    private readonly metrics: ServerMetrics,
    private readonly log: FastifyBaseLogger,
    /** DATA_DIR's store, Redis's in a cluster, or null (checkpoints in memory only) */
    readonly store: SnapshotStore | null,
    private readonly table: SessionTable,
    private readonly calls: WorkerCalls,
    private readonly closing: () => boolean,
    private readonly cluster: () => ClusterHooks | null,
    /** lets a run held at `step` go on (protocol.ts `checkpointed`) */
    private readonly releaseRun: (rec: SessionRecord, step: number) => void,
  ) {}

  /** Bytes of the checkpoints held in memory (moreau_checkpoint_memory_bytes). */
  get bytesInMemory(): number {
    return this.memoryBytes;
  }

  /** DATA_DIR: whether checkpoints reach the disk (the last failure, if any); null without it. */
  get persistence(): { ok: boolean; error: string | null } | null {
    if (!this.store) return null;
    return { ok: this.persistenceError === null, error: this.persistenceError };
  }

  /**
   * Asks for a checkpoint of the session: kept in memory and (DATA_DIR) written to disk.
   * `urgent`: at once (after the one under way); otherwise no sooner than
   * CHECKPOINT_MIN_INTERVAL_MS after the previous one started. Resolves when the checkpoint
   * exported next after this call is done (an urgent one) or deferred — not when the loop
   * ends: a controller's inputs arriving while each write is under way keep it going, and
   * each answer waits for its own pass only (group commit: the callers of one pass share
   * its write). Failures are logged, never thrown.
   */
  checkpoint(rec: SessionRecord, urgent = false): Promise<void> {
    if (rec.lost || rec.deleted || rec.deleting) return Promise.resolve();
    rec.checkpointWanted = true;
    if (urgent) rec.checkpointUrgent = true;
    void this.schedule(rec);
    // deferred (no loop under way): nothing to wait for
    if (!rec.checkpointing) return Promise.resolve();
    return new Promise((resolve) => rec.checkpointWaiters.push(resolve));
  }

  /**
   * The checkpoint of a change about to be answered (PATCH, inputs, reset, run, pause, an
   * applied assembly; a creation or fork with a store: lifecycle.ts), which the answer waits
   * for: taken at once (after the one under way; the answers waiting meanwhile share the
   * next), it resolves once a checkpoint exported after the change is held in memory and,
   * with a store, written. So a 2xx answer's change survives the loss of its worker (rebuilt
   * from that checkpoint) and, with a store, a crash of the process (a write that fails is
   * reported as any other: `persisted: false`, /ready). Without a store too: deferred by
   * CHECKPOINT_MIN_INTERVAL_MS as a step's, or not waited for, the change would be lost with
   * a worker that dies before its export.
   */
  acknowledge(rec: SessionRecord): Promise<void> {
    return this.checkpoint(rec, true);
  }

  /**
   * After a step request (answered, or failed with the steps it took kept: a divergence, a
   * timeout): the checkpoint CHECKPOINT_EVERY_STEPS = K calls for once K steps have passed
   * since the last. With a store the answer waits for it, so no answer is given K or more
   * steps past what the store holds — unless CHECKPOINT_MIN_INTERVAL_MS defers it (then
   * nothing is waited for, as a run is not held at a deferred checkpoint).
   */
  afterSteps(rec: SessionRecord): Promise<void> {
    const every = this.config.checkpointEverySteps;
    if (rec.status === "running" || every <= 0 || rec.step - rec.lastCheckpointStep < every)
      return Promise.resolve();
    const done = this.checkpoint(rec);
    return this.store ? done : Promise.resolve();
  }

  /**
   * A checkpoint a running session's worker took at a step multiple of
   * CHECKPOINT_EVERY_STEPS: written as any other (coalesced; a later one replaces it while
   * it waits), as it is — never re-exported at another step. The run waits at that step
   * until the write is done (`release`), or goes on at once when the write is deferred.
   */
  taken(rec: SessionRecord, cp: WorkerCheckpoint): void {
    if (rec.lost || rec.deleted || rec.deleting) return;
    rec.workerCheckpoint = cp;
    rec.runHeldAt = cp.session.step;
    void this.schedule(rec);
    // not being written now (deferred, or nothing to write any more): not waited for
    if (!rec.checkpointing) this.release(rec);
  }

  /** Lets the session's run, held at its last worker checkpoint, go on. */
  private release(rec: SessionRecord): void {
    const step = rec.runHeldAt;
    if (step === null) return;
    rec.runHeldAt = null;
    if (!rec.lost) this.releaseRun(rec, step);
  }

  /**
   * Starts the checkpoint loop now, or defers it to CHECKPOINT_MIN_INTERVAL_MS; `due`: the
   * deferral's timer (its interval has passed). A loop under way takes what is wanted next.
   */
  private schedule(rec: SessionRecord, due = false): Promise<void> {
    if (rec.checkpointing) return rec.checkpointing;
    if (!this.pending(rec)) return Promise.resolve();
    const wait =
      rec.checkpointUrgent || due
        ? 0
        : rec.lastCheckpointAt + this.config.checkpointMinIntervalMs - Date.now();
    if (wait > 0) {
      this.defer(rec, wait);
      return Promise.resolve();
    }
    // started from a microtask, never within this call: a pass that waits for nothing (its
    // worker's checkpoint kept in memory, no store) would otherwise end, and clear the mark,
    // before the mark is set — leaving a settled promise that every later checkpoint returns
    rec.checkpointing = Promise.resolve().then(() => this.loop(rec, due));
    return rec.checkpointing;
  }

  /**
   * Whether a checkpoint of the session is asked for (by a request, or its worker's taken
   * during a run) and may still be taken: not once it is lost, deleted or being deleted —
   * what is still asked for then is dropped, never retried.
   */
  private pending(rec: SessionRecord): boolean {
    return (
      (rec.checkpointWanted || rec.workerCheckpoint !== null) &&
      !rec.deleted &&
      !rec.deleting &&
      !rec.lost
    );
  }

  /**
   * After a worker's snapshot was applied to the record (`was`: its status before): a run
   * that stopped (pause, `until` reached, divergence) is checkpointed at once. (A session
   * stepped by requests is checkpointed by `afterSteps`; a running one's worker sends its
   * own, at the exact steps: `taken`.)
   */
  afterSnapshot(rec: SessionRecord, was: SessionStatusName): void {
    if (was === "running" && rec.status !== "running" && this.table.has(rec.id))
      void this.checkpoint(rec, true);
  }

  /** Checkpoints every session whose last checkpoint is not its current state (shutdown). */
  async all(): Promise<void> {
    await Promise.all(
      this.table.all().map(async (r) => {
        if (r.checkpointing) await r.checkpointing;
        const current =
          !r.checkpointWanted &&
          !r.workerCheckpoint &&
          r.lastCheckpointStep === r.step &&
          r.lastCheckpointStatus === r.status &&
          (!this.store || (r.persisted && r.savedStep === r.step));
        if (!current) await this.checkpoint(r, true);
      }),
    );
    if (this.store) await this.store.flush().catch(() => undefined);
  }

  /**
   * The last checkpoint of a lost session as a restore request: the file in DATA_DIR, or
   * the copy in memory when it is newer (a failed write) or there is no file; null: none.
   */
  async latest(rec: SessionRecord): Promise<RestoreSource | null> {
    const mem = rec.memory;
    const store = this.store;
    const disk = async (): Promise<RestoreSource | null> => {
      const cp = await store?.read(rec.id).catch(() => null);
      if (!cp) return null;
      // the store's input log goes on: the inputs read back from it are its first ones
      rec.inputLog = store?.logsInputs ? (cp.log ?? null) : rec.inputLog;
      return {
        body: {
          kind: "restore",
          sessionId: rec.id,
          name: rec.name,
          snapshot: cp.snapshot.simulation,
          status: cp.snapshot.session.status,
          message: cp.snapshot.session.message,
          ...(store?.logsInputs ? { log: cp.log ?? null } : {}),
        },
        from: "disk",
        step: cp.snapshot.simulation.step,
      };
    };
    if (store && rec.savedStep !== null && (!mem || rec.savedStep >= mem.step)) {
      const fromDisk = await disk();
      if (fromDisk) return fromDisk;
    }
    if (!mem) return null;
    // its recording's inputs before its log part are in the store's log (what it held when
    // the copy was exported): read back, they go first
    let inputs: Uint8Array | undefined;
    if (mem.log) {
      const head =
        mem.log.from === 0
          ? new Uint8Array(0)
          : await store?.readLog?.(rec.id, { id: mem.log.id, count: mem.log.from });
      if (!head) {
        this.log.error(
          { session: rec.id, log: mem.log.id, from: mem.log.from },
          "the input log a checkpoint in memory continues cannot be read: restoring from the store's",
        );
        return disk();
      }
      inputs = Buffer.concat([head, mem.log.lines]);
    }
    const log = mem.log && rec.inputLog?.id === mem.log.id ? rec.inputLog : null;
    return {
      body: {
        kind: "restore",
        sessionId: rec.id,
        name: rec.name,
        snapshot: mem.engine,
        status: mem.status,
        message: mem.message,
        ...(inputs ? { inputs } : {}),
        ...(store?.logsInputs ? { log } : {}),
      },
      from: "memory",
      step: mem.step,
    };
  }

  /** Cancels a deferred checkpoint (a loss, a delete, the end of a shutdown). */
  clearTimer(rec: SessionRecord): void {
    if (rec.checkpointTimer) clearTimeout(rec.checkpointTimer);
    rec.checkpointTimer = null;
  }

  /** Releases what a deleted session held. */
  forget(rec: SessionRecord): void {
    this.clearTimer(rec);
    rec.opened = null;
    rec.workerCheckpoint = null;
    rec.runHeldAt = null;
    if (rec.memory) this.memoryBytes -= memoryHeld(rec.memory);
    rec.memory = null;
  }

  private defer(rec: SessionRecord, wait: number): void {
    if (rec.checkpointTimer) return;
    rec.checkpointTimer = setTimeout(() => {
      rec.checkpointTimer = null;
      void this.schedule(rec, true);
    }, wait);
    rec.checkpointTimer.unref?.();
  }

  /**
   * Takes checkpoints of the session while they are wanted (one at a time), each urgent one
   * at once, the others CHECKPOINT_MIN_INTERVAL_MS apart (`due`: the first one's has passed).
   */
  private async loop(rec: SessionRecord, due: boolean): Promise<void> {
    const store = this.store;
    // the callers this pass's export follows, settled once it is written (or has failed)
    const covered: (() => void)[] = [];
    const settle = (waiters: (() => void)[]) => {
      for (const resolve of waiters.splice(0)) resolve();
    };
    try {
      while (this.pending(rec)) {
        if (!rec.checkpointUrgent && !due) {
          const wait = rec.lastCheckpointAt + this.config.checkpointMinIntervalMs - Date.now();
          if (wait > 0) {
            this.defer(rec, wait);
            return;
          }
        }
        due = false;
        this.clearTimer(rec);
        const exporting = rec.checkpointWanted;
        rec.checkpointWanted = false;
        rec.checkpointUrgent = false;
        // the changes of these callers were applied before this export is asked for (each
        // asked for its checkpoint once its worker had answered): the export holds them
        covered.push(...rec.checkpointWaiters.splice(0));
        rec.lastCheckpointAt = Date.now();
        let engine: Uint8Array;
        let log: InputLogPart | null;
        let at: SnapshotAt;
        let run: SessionRecord["run"];
        if (exporting) {
          rec.lastCheckpointStep = rec.step;
          try {
            // with the recording so far, which a restore from it carries on — the inputs
            // its store's log holds left out (persistence.ts): only those since come back
            const exported = await this.calls.exportAt(
              rec,
              false,
              true,
              store?.logsInputs ? rec.inputLog : undefined,
            );
            engine = exported.bytes;
            log = exported.log ?? null;
            // one its worker took before this export is older: superseded
            const cp = rec.workerCheckpoint;
            if (cp && cp.session.seq < exported.seq) rec.workerCheckpoint = null;
          } catch (err) {
            // the worker could not export (lost with its worker, deleted meanwhile, or a
            // shutdown): not a persistence failure
            if (!rec.lost && !rec.deleted && !rec.deleting && !this.closing())
              this.log.warn({ err, session: rec.id }, "checkpoint export failed");
            return;
          }
          // the reply refreshed the record: these are the exported snapshot's
          at = { status: rec.status, message: rec.message, time: rec.time, step: rec.step };
          run = rec.run;
        } else {
          const cp = rec.workerCheckpoint as WorkerCheckpoint;
          rec.workerCheckpoint = null;
          engine = cp.engine;
          log = cp.log ?? null;
          const { status, message, time, step } = cp.session;
          at = { status, message, time, step };
          run = cp.session.run;
        }
        rec.lastCheckpointStep = at.step;
        rec.lastCheckpointStatus = at.status;
        this.keepInMemory(rec, { engine, log, ...at });
        this.dropOpened(rec);
        // synchronous check and enqueue: a delete after this point removes the file
        if (
          store &&
          !rec.deleted &&
          !rec.deleting &&
          !(await this.write(store, rec, engine, log, at, run))
        )
          return;
        this.dropOpened(rec);
        settle(covered);
        // the run held at the checkpoint this pass wrote (or at an older one an export
        // superseded) goes on
        if (rec.workerCheckpoint === null) this.release(rec);
      }
    } finally {
      // a failed pass's callers too: their changes are in effect, the failure is reported
      settle(covered);
      rec.checkpointing = null;
      // asked for again meanwhile (after a failure or a deferral: within the interval); a
      // session lost or being deleted is not — were it, the next pass would end at once, and
      // its own `finally` would schedule it again, without end
      if (!rec.checkpointTimer) void this.schedule(rec);
      // a run is held only while a loop is about to write its checkpoint
      if (!rec.checkpointing) {
        this.release(rec);
        // no pass is coming for them (deferred, lost, deleted): not waited for
        settle(rec.checkpointWaiters);
      }
    }
  }

  /**
   * Writes one checkpoint to the store. False: the loop stops — the write failed (logged,
   * shown in /ready) or was fenced off (the session is let go).
   */
  private async write(
    store: SnapshotStore,
    rec: SessionRecord,
    engine: Uint8Array,
    log: InputLogPart | null,
    at: SnapshotAt,
    run: SessionRecord["run"],
  ): Promise<boolean> {
    try {
      const document = sessionDocument(rec, engine, at);
      // the run it holds, which the node taking the session over (a cluster) or a restart
      // (DATA_DIR: persistence.ts keeps it, and has no epochs) resumes — with when a restart
      // resumed it, if one did (recovery.ts resumeRestored)
      const held = heldRun(
        rec.resumeRun ?? (at.status === "running" && run ? runOf(run) : null),
        rec.runResumedAt,
      );
      const fence = rec.epoch > 0 || !this.cluster() ? { epoch: rec.epoch, run: held } : undefined;
      await store.write(rec.id, rec.owner, document, fence, log ?? undefined);
      const part = loggedPart(log);
      rec.inputLog = part ? { id: part.id, count: part.count } : null;
    } catch (err) {
      if (err instanceof FencedError) {
        this.log.warn(
          { session: rec.id, epoch: rec.epoch },
          "checkpoint fenced off: another node owns the session",
        );
        this.cluster()?.fenced(rec);
        return false;
      }
      rec.persisted = false;
      // the next checkpoint sends its inputs from the start: the store skips what its log
      // holds, whatever it holds (persistence.ts appendLog)
      rec.inputLog = null;
      this.persistenceError = `checkpoint of session ${rec.id} failed: ${(err as Error).message}`;
      this.metrics.checkpointFailures.inc();
      this.log.warn({ err, session: rec.id }, "checkpoint failed");
      return false;
    }
    this.metrics.checkpoints.inc();
    rec.savedStep = at.step;
    // before the run held at this step is released (`checkpointed`, after this): the frames
    // past it carry it
    this.calls.tellKept(rec);
    rec.persisted = true;
    this.persistenceError = null;
    return true;
  }

  /**
   * Lets go of the request that opened the session once a checkpoint of it is held (in
   * memory or in the store) — or at its first checkpoint when none can be kept anywhere
   * (CHECKPOINT_MEMORY_BYTES = 0 without a store): a rebuild then starts from the model.
   */
  private dropOpened(rec: SessionRecord): void {
    if (!rec.opened) return;
    const nowhere = this.config.checkpointMemoryBytes === 0 && !this.store;
    if (rec.memory !== null || rec.savedStep !== null || nowhere) rec.opened = null;
  }

  /** Keeps a session's last checkpoint in memory, within CHECKPOINT_MEMORY_BYTES for all. */
  private keepInMemory(rec: SessionRecord, cp: MemoryCheckpoint): void {
    const old = rec.memory ? memoryHeld(rec.memory) : 0;
    const bytes = memoryHeld(cp);
    const total = this.memoryBytes - old + bytes;
    if (total <= this.config.checkpointMemoryBytes) {
      this.memoryBytes = total;
      rec.memory = cp;
    } else if (rec.memory === null || old < bytes) {
      // over the budget: the older copy is kept (a rebuild takes the newer of it and the file)
      this.log.debug(
        { session: rec.id, bytes, budget: this.config.checkpointMemoryBytes },
        "checkpoint not kept in memory (CHECKPOINT_MEMORY_BYTES)",
      );
    }
  }
}
