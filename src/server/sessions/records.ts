/**
 * What the event loop keeps of each session (SessionRecord: status, time and step mirrored
 * from its worker's replies and progress events, its checkpoint bookkeeping, its loss and
 * delete flags) and the table of them: lookup with ownership, the status rule of a request,
 * the busy count that keeps a session from expiring while a request on it runs, and the
 * load per worker that placement follows (sessions, and the placements and heavy requests
 * in flight).
 *
 * Ownership (API keys, src/server/auth.ts): with keys, a session is visible only to the key
 * that created it (`owner`); any other key is answered 404 as if it did not exist.
 */
import type { SessionOut, SessionStatusName } from "../../../schemas/api";
import type { Checkpoint, RunAt } from "../cluster/ports";
import { ApiError, conflict, notFound } from "../errors";
import {
  type InputLogAt,
  type InputLogPart,
  modelCounts,
  type SceneInfo,
  type SessionSnapshot,
  type WorkerRequestBody,
} from "../protocol";
import { lightestWithRoom, RECORDED_INPUT_BYTES } from "./memory";

/** The last checkpoint of a session, in memory. */
export interface MemoryCheckpoint {
  /** the engine snapshot's JSON bytes */
  engine: Uint8Array;
  /** the inputs its recording leaves out since what its store's log held (persistence.ts) */
  log: InputLogPart | null;
  step: number;
  status: SessionStatusName;
  message: string | null;
}

/**
 * A checkpoint a running session's worker took at a step multiple of CHECKPOINT_EVERY_STEPS
 * (protocol.ts `checkpoint` event), waiting to be written (checkpoints.ts).
 */
export interface WorkerCheckpoint {
  /** the engine snapshot's JSON bytes */
  engine: Uint8Array;
  /** the inputs it appends to the session's log (a store that keeps one) */
  log?: InputLogPart;
  /** the session at that step, as its worker saw it (seq orders it against exports) */
  session: SessionSnapshot;
}

export interface SessionRecord {
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
  /** the estimated bytes (heap and ArrayBuffers) of its model on its worker (sessions/memory.ts) */
  memoryBytes: number;
  /** the inputs and patches its recording holds, as last reported (SessionSnapshot) */
  recordedInputs: number;
  createdAt: Date;
  lastActivity: number;
  /** the validated model as UTF-8 JSON (SessionOrigin.model): rebuilds without a checkpoint */
  model: Uint8Array;
  /**
   * the worker request that opened the session (its create body, a fork's snapshot), kept
   * until its first checkpoint is held: a session lost before that is rebuilt as it was
   * created (recovery.ts); null once a checkpoint is held, or for a restored session
   */
  opened: WorkerRequestBody | null;
  /**
   * what the session's status message does not say but its clients must know: that it was
   * rebuilt after a worker loss, from which step, and how many steps that lost (shown as
   * `message` while the status has none of its own; cleared by a reset)
   */
  notice: string | null;
  scene: SceneInfo;
  /** the last State bytes the event loop received (served when the worker is gone) */
  lastState: Uint8Array;
  /** its worker died: the simulation is gone until a rebuild (under way, or by reset) */
  lost: boolean;
  /**
   * lost with its worker and waiting for one that can start (recovery.ts park): the 503
   * its requests are answered with (null: not waiting)
   */
  awaitingWorker: (() => ApiError) | null;
  /**
   * Date.now() when it began to wait for a worker (recovery.ts park), kept across the
   * failed tries to rebuild it until one succeeds (null: not waiting)
   */
  waitingSince: number | null;
  /** the rebuild after a worker loss, while it goes on (never rejects) */
  rebuilding: Promise<void> | null;
  /** times this session was lost with its worker, within LOSS_WINDOW_MS (recovery.ts) */
  losses: number[];
  busy: number;
  /** key id of the creator (null without API keys) */
  owner: string | null;
  /** REDIS_URL: the epoch of this node's lease on the session, its fencing token (0: no cluster) */
  epoch: number;
  /**
   * The run its checkpoints keep while the session is not running: the one a session paused
   * for a hand-over (drain) or a shutdown was in, or the one a POST /run is about to start
   * (its 202 waits for that checkpoint)
   */
  resumeRun: RunAt | null;
  /**
   * Date.now() when a restart, a worker-loss rebuild or a cluster takeover resumed the run
   * it is in (recovery.ts resumeNoted): kept with that run in its checkpoints
   * (RunAt.resumedAt), so that a process or holder dying again within LOSS_WINDOW_MS of it
   * brings the session back paused; null once a client starts a run, and for a shutdown's or
   * a drain's checkpoint (the process or holder did not die)
   */
  runResumedAt: number | null;
  /**
   * the turn of the last command received (inTurn): settled once it has taken effect, when
   * the next may begin — so a session's commands take effect in the order they were received
   */
  turn: Promise<void>;
  /** the commands received and not yet in effect, the one taking effect included (inTurn) */
  commandsQueued: number;
  /** DATA_DIR: the step of the last checkpoint on disk (null: none) and whether the last attempt succeeded */
  savedStep: number | null;
  persisted: boolean;
  /** what the store's input log holds of the session's recording (persistence.ts; null: none) */
  inputLog: InputLogAt | null;
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
  /**
   * the callers of `checkpoint` since the last export began: settled once the checkpoint
   * exported next is written (or has failed), or when no checkpoint is to be taken
   */
  checkpointWaiters: (() => void)[];
  checkpointTimer: ReturnType<typeof setTimeout> | null;
  /** the latest checkpoint its worker took during a run and not yet written (the older dropped) */
  workerCheckpoint: WorkerCheckpoint | null;
  /** the step its worker's run waits at until the checkpoint taken there is written (null: none) */
  runHeldAt: number | null;
  /** a delete is under way: no checkpoint write starts */
  deleting: boolean;
  removing: Promise<void> | null;
  deleted: boolean;
  /**
   * REDIS_URL: let go to another node (SessionManager.evict: a drain's hand-over, a lease
   * lost): the commands that waited for their turn behind it answer 503 to be retried there
   */
  evicted: boolean;
}

/**
 * The status a record is listed with: `restoring` while it waits for a worker that can
 * start to restore it (lost with its worker: recovery.ts park), as a checkpoint a restart
 * could not open yet is listed; its own (its simulation's, last known) otherwise. Until
 * 2026-12-07 a waiting session showed the status it had before the loss (`running`, …).
 */
export function listedStatus(rec: SessionRecord): SessionOut["status"] {
  return rec.awaitingWorker ? "restoring" : rec.status;
}

/** The Session body of a record (schemas/api.ts Session). */
export function viewOf(rec: SessionRecord, subscribers: number, persistence: boolean): SessionOut {
  const waiting = rec.awaitingWorker !== null;
  return {
    id: rec.id,
    name: rec.name,
    status: listedStatus(rec),
    time: rec.time,
    step: rec.step,
    dt: rec.dt,
    counts: rec.counts,
    message: rec.message ?? rec.notice,
    rebuilding: rec.rebuilding !== null,
    // no run goes on while it waits (the one it was in is resumed once it is restored)
    run: waiting ? null : rec.run,
    subscribers,
    persisted: persistence ? rec.persisted : null,
    checkpointStep: rec.savedStep,
    createdAt: rec.createdAt.toISOString(),
    lastActivityAt: new Date(rec.lastActivity).toISOString(),
  };
}

/**
 * A checkpointed session a restart could not open yet, no worker starting (lifecycle.ts
 * restoreAll): its owner, why no worker takes it (`error`: the pool's 503 now), its
 * checkpoint's Session body (restoringViewOf) and when it began to wait (`since`,
 * Date.now(): kept across the failed tries to open it, so that what it reports counts the
 * whole wait — until 2026-12-07 each failed try started it again).
 */
export interface AwaitingRestore {
  owner: string | null;
  error: () => ApiError;
  view: SessionOut;
  since: number;
  /** its delete, under way (lifecycle.ts removeWaiting): it is not opened meanwhile */
  removing: Promise<void> | null;
}

/**
 * The Session body of a checkpoint waiting for a worker (status `restoring`): what the
 * checkpoint says — its name, the time, step and step size it holds, its model's counts;
 * its last activity when it began to wait (`since`, Date.now()).
 */
export function restoringViewOf(cp: Checkpoint, since: number): SessionOut {
  const { session, simulation } = cp.snapshot;
  const { model } = simulation;
  return {
    id: cp.id,
    name: session.name,
    status: "restoring",
    time: simulation.time,
    step: simulation.step,
    dt: simulation.parameters.solver.dt,
    counts: modelCounts(model),
    message: null,
    rebuilding: false,
    run: null,
    subscribers: 0,
    persisted: true,
    checkpointStep: simulation.step,
    createdAt: session.createdAt ?? new Date(since).toISOString(),
    lastActivityAt: new Date(since).toISOString(),
  };
}

/**
 * The 503 of a request on session `id` waiting for a worker: the pool's (`cause`: why no
 * worker takes it, Retry-After), the session named with what it waits for (`what`).
 */
export function namingSession(id: string, what: string, cause: ApiError): ApiError {
  return new ApiError(cause.code, `session "${id}" is ${what}: ${cause.message}`, {
    ...(cause.details as object),
    session: id,
  });
}

/** What a session waiting for a worker (`w`) waits for: since when, to be opened from which checkpoint. */
function waitingFor(w: AwaitingRestore): string {
  return `waiting since ${new Date(w.since).toISOString()} for a solver worker to open it from its checkpoint at step ${w.view.step}`;
}

/** Throws 409 `conflict` unless the session's status is one of `ok`. */
export function requireStatus(rec: SessionRecord, ok: SessionStatusName[], what: string): void {
  if (!ok.includes(rec.status)) throw conflict(rec.id, rec.status, what);
}

/**
 * Runs a request on a session: busy while it runs (the idle sweep leaves it alone), and
 * its end counts as activity.
 */
export async function withRecord<T>(rec: SessionRecord, fn: () => Promise<T>): Promise<T> {
  rec.busy++;
  try {
    return await fn();
  } finally {
    rec.busy--;
    rec.lastActivity = Date.now();
  }
}

/**
 * Runs command `effect` on a session once the commands received before it have taken
 * effect, and lets the next one begin once it has (resolved or thrown): the commands of a
 * session take effect in the order they were received. `effect` is what the command changes,
 * up to its worker's answer (a run's: its checkpoint, then its start); what the answer waits
 * for afterwards (its checkpoint's write) is not, so a command's write never holds up the next
 * command (group commit, checkpoints.ts). Until 2026-12-07 a pause received while a run's
 * checkpoint was being written took effect first (a no-op, the run not started) and the run
 * then started: the session ran on although the pause was answered after it.
 */
export async function inTurn<T>(rec: SessionRecord, effect: () => Promise<T>): Promise<T> {
  const before = rec.turn;
  let done = () => {};
  rec.turn = new Promise<void>((resolve) => {
    done = resolve;
  });
  rec.commandsQueued++;
  try {
    await before;
    return await effect();
  } finally {
    rec.commandsQueued--;
    done();
  }
}

/** Every session by id, seen through ownership. */
export class SessionTable {
  private readonly records = new Map<string, SessionRecord>();
  /** per worker: placements in flight (a session being opened there, a stateless job) */
  private readonly placing: number[] = [];
  /** Checkpointed sessions a restart could not open yet (AwaitingRestore), by id. */
  readonly awaitingRestore = new Map<string, AwaitingRestore>();

  /**
   * `auth`: API keys are configured (sessions are their creator's); `busy`: the heavy
   * requests in flight on a worker (its sessions' assemblies: worker-pool.ts inFlight);
   * `running`: whether a worker is running now, not a lost one's replacement still starting
   * (worker-pool.ts isAlive)
   */
  constructor(
    private readonly auth: boolean,
    private readonly busy: (worker: number) => number = () => 0,
    private readonly running: (worker: number) => boolean = () => true,
  ) {}

  get size(): number {
    return this.records.size;
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  /** The record of `id` whoever owns it (internal paths: events, streams, tests). */
  find(id: string): SessionRecord | undefined {
    return this.records.get(id);
  }

  add(rec: SessionRecord): void {
    this.records.set(rec.id, rec);
  }

  delete(id: string): void {
    this.records.delete(id);
  }

  /** A copy of the records (callers may delete while they go through it). */
  all(): SessionRecord[] {
    return [...this.records.values()];
  }

  /** Without API keys every session is everyone's; with keys, only its creator's. */
  visible(rec: { owner: string | null }, owner: string | null): boolean {
    return !this.auth || rec.owner === owner;
  }

  /**
   * The sessions waiting for a worker (awaitingRestore) as `owner` sees them: status
   * `restoring`, the message naming what they wait for since when (the cause of the
   * workers' failing starts, when the next is tried).
   */
  restoring(owner: string | null): SessionOut[] {
    const out: SessionOut[] = [];
    for (const id of this.awaitingRestore.keys()) {
      const view = this.waiting(id, owner);
      if (view) out.push(view);
    }
    return out;
  }

  /** The Session body of `id` if it waits for a worker and `owner` sees it (`restoring`). */
  waiting(id: string, owner: string | null): SessionOut | undefined {
    const w = this.awaitingRestore.get(id);
    if (!w || !this.visible(w, owner)) return undefined;
    return { ...w.view, message: `${waitingFor(w)}: ${w.error().message}` };
  }

  /** The session of `id` as `owner` sees it (404 otherwise); a request is activity. */
  touch(id: string, owner: string | null): SessionRecord {
    const rec = this.records.get(id);
    if (!rec) {
      // kept on disk, waiting for a worker to open it in: not gone (503, not 404), and
      // the 503 names it (the pool's alone reads as any request's)
      const waiting = this.awaitingRestore.get(id);
      if (waiting && this.visible(waiting, owner)) {
        throw namingSession(id, waitingFor(waiting), waiting.error());
      }
      throw notFound(id);
    }
    if (!this.visible(rec, owner)) throw notFound(id);
    rec.lastActivity = Date.now();
    return rec;
  }

  /** `touch`, after the rebuild of a session lost with its worker (if one is under way). */
  async live(id: string, owner: string | null): Promise<SessionRecord> {
    const rec = this.touch(id, owner);
    if (rec.rebuilding) {
      await rec.rebuilding;
      if (!this.records.has(id)) throw notFound(id);
    }
    if (rec.awaitingWorker) throw rec.awaitingWorker();
    return rec;
  }

  /** Sessions of one API key. */
  ownedBy(owner: string): number {
    let n = 0;
    for (const r of this.records.values()) if (r.owner === owner) n++;
    return n;
  }

  /** The sessions by the status GET /v1/sessions lists them with (those waiting: `restoring`). */
  byStatus(): Record<SessionOut["status"], number> {
    const out: Record<SessionOut["status"], number> = {
      ready: 0,
      running: 0,
      paused: 0,
      diverged: 0,
      error: 0,
      restoring: this.awaitingRestore.size,
    };
    for (const r of this.records.values()) out[listedStatus(r)]++;
    return out;
  }

  /**
   * The load of each of `workers` workers, what placement follows: its sessions (those lost
   * with theirs not counted), the placements on it still in flight (`reserve`: sessions
   * being created or rebuilt there, assemblies of posted models, URDF imports) and its
   * sessions' heavy requests in flight. Counting what is in flight spreads concurrent
   * creations and assemblies over the workers instead of piling them on the one that was
   * the least loaded before any of them was answered.
   */
  loads(workers: number, except?: string): number[] {
    const load = new Array<number>(workers).fill(0);
    for (const r of this.records.values()) if (!r.lost && r.id !== except) load[r.worker]++;
    for (let w = 0; w < workers; w++) load[w] += (this.placing[w] ?? 0) + this.busy(w);
    return load;
  }

  /**
   * The estimated bytes (heap and ArrayBuffers) of the sessions on each of `workers` workers (those lost with
   * theirs not counted): their models' and their recordings' (RECORDED_INPUT_BYTES an
   * input), as the worker counts them (worker-runtime.ts heldBytes): what
   * WORKER_SESSION_MEMORY_MB bounds.
   */
  memory(workers: number, except?: string): number[] {
    const bytes = new Array<number>(workers).fill(0);
    for (const r of this.records.values())
      if (!r.lost && r.id !== except)
        bytes[r.worker] += r.memoryBytes + RECORDED_INPUT_BYTES * r.recordedInputs;
    return bytes;
  }

  /**
   * The least loaded worker (loads; the first of them on a tie) of those running now, a
   * starting one (a lost worker's replacement) only when none is: a new session or job
   * placed there waits for its cold start (0.9 s for the bundled worker, 2.4 s from source)
   * while a running one takes it at once. Memory is not weighed here: a new session's
   * estimate comes from its model, which its worker validates; a worker without room
   * refuses it and it is placed again (lifecycle.ts, memory.ts lightestWithRoom).
   */
  leastLoaded(workers: number, except?: string): number {
    const load = this.loads(workers, except);
    // no memory bound here: every worker has room for 0 bytes within 0
    return (
      lightestWithRoom(
        load,
        load.map(() => 0),
        0,
        0,
        this.running,
      ) ?? 0
    );
  }

  /**
   * Counts a placement on `worker` until the returned release is called (once the session
   * is in the table, or the job answered).
   */
  reserve(worker: number): () => void {
    this.placing[worker] = (this.placing[worker] ?? 0) + 1;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.placing[worker]--;
    };
  }

  /** The least loaded worker, reserved for a placement (release it when done). */
  place(workers: number, except?: string): { worker: number; release: () => void } {
    const worker = this.leastLoaded(workers, except);
    return { worker, release: this.reserve(worker) };
  }
}
