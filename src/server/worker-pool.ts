/**
 * The pool of solver worker threads. No solver runs on the event-loop thread: each session
 * lives in one worker (the least loaded running one when it is created, a lost worker's
 * starting replacement only when no running one takes it: sessions/records.ts
 * leastLoaded); requests cross as messages with ids, replies and events come back with
 * state bytes in transferred ArrayBuffers.
 *
 * Failure handling:
 * - a worker that exits or errors (a crash) is replaced by a fresh one at the same index;
 *   its pending requests fail with `worker_crashed` and the manager rebuilds its sessions
 *   from their last checkpoints (onWorkerLost: sessions/recovery.ts);
 * - the watchdog replaces a worker that is stuck: one whose event loop has not turned for
 *   REQUEST_TIMEOUT_MS plus watchdogGraceMs (nothing heard from it, not even the stats it
 *   sends every 250 ms: one computation that never returns to its loop), or that has not
 *   answered a request that long (its own `timeoutMs`) after it started working on it. The
 *   worker says when it starts each request (a `started` message; a queued operation when
 *   its turn comes, worker-runtime.ts), so what is timed is the worker's own time on the
 *   message, never the time it waited behind other messages or other sessions' work: legal
 *   requests queued on a worker never restart it. Its pending requests then fail with
 *   `timeout` and it is terminated and replaced as a crashed one. The legal long requests
 *   end by themselves within REQUEST_TIMEOUT_MS (a step's deadline; the engine's deadline
 *   for builds, assemblies and replays: worker-runtime.ts), so the watchdog is the last
 *   resort for a computation that ignores them.
 * Workers start at the compiled worker.js beside the compiled server (dist/, `npm run
 * build`: what `npm start` and the Docker image run), or, when this module runs from its
 * TypeScript source (tsx, vitest), at worker-bootstrap.mjs, which registers tsx's
 * TypeScript loader in the thread (Node 20 ignores `--import tsx` there) and loads
 * worker.ts.
 *
 * Metrics: busySeconds() is the time each worker index's event loop has been busy, summed
 * over the successive workers at that index (a counter: it never goes down).
 */
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FastifyBaseLogger } from "fastify";
import { type Config, watchdogGraceMs } from "./config";
import { ApiError } from "./errors";
import type {
  SessionSnapshot,
  WorkerErrorInfo,
  WorkerEvent,
  WorkerInit,
  WorkerNotice,
  WorkerOutbound,
  WorkerRequestBody,
  WorkerResult,
} from "./protocol";
import { workerBudgetBytes } from "./sessions/memory";

/**
 * The worker thread's entry: compiled JavaScript beside this bundle, or, run from source, the
 * tsx bootstrap — unless MOREAU_WORKER_BUNDLE names a bundle of worker.ts built from the same
 * sources: the test suite builds one per run (test/support/global-setup.ts), since a thread
 * transpiling the engine through tsx takes 2.4 s to start against 0.9 s for the bundle.
 * Read at each spawn, so a test can unset it to start the bootstrap.
 */
function workerEntry(): URL {
  if (!import.meta.url.endsWith(".ts")) return new URL("./worker.js", import.meta.url);
  const bundle = process.env.MOREAU_WORKER_BUNDLE;
  return bundle ? pathToFileURL(bundle) : new URL("./worker-bootstrap.mjs", import.meta.url);
}

export interface WorkerAnswer {
  result: WorkerResult;
  session: SessionSnapshot | null;
}

/** A request the worker refused or failed; `session` is its state after the attempt. */
export class WorkerFailure extends Error {
  constructor(
    readonly info: WorkerErrorInfo,
    readonly session: SessionSnapshot | null,
  ) {
    super(info.message);
    this.name = "WorkerFailure";
  }
}

export interface PoolHandlers {
  onEvent(worker: number, event: WorkerEvent): void;
  /** The worker at `index` died or was stopped; a fresh one replaces it. */
  onWorkerLost(worker: number, reason: string): void;
  /** The worker at `index` has started (a replacement too): sessions waiting for one may go there. */
  onWorkerReady?(worker: number): void;
}

/** The back-off (ms) before the next start of a worker that failed `failures` starts in a row. */
export function startBackoffMs(failures: number): number {
  return Math.min(30_000, 250 * 2 ** failures);
}

interface Pending {
  resolve(a: WorkerAnswer): void;
  reject(e: Error): void;
  kind: WorkerRequestBody["kind"];
  /** the worker's time it may take on it (ms), from its start, before the grace */
  limitMs: number;
  /** performance.now() when the worker said it started on it (null: not yet) */
  startedAt: number | null;
}

/** How often (ms) the watchdog looks at the workers. */
const WATCHDOG_TICK_MS = 200;
/** A worker heard from within this (ms) is turning its event loop (it sends stats every 250 ms). */
const LIVELY_MS = 1000;

interface Slot {
  index: number;
  worker: Worker;
  ready: Promise<void>;
  alive: boolean;
  /** taken out of service (crashed, stuck or shut down): its exit needs no more handling */
  retired: boolean;
  failReady(e: Error): void;
  inflight: Int32Array;
  pending: Map<number, Pending>;
  /** the worker's busy time (ms) when last read */
  active: number;
  lastError: string | null;
  /** performance.now() when the last message from the worker was handled */
  lastHeard: number;
}

export class WorkerPool {
  /** per index: its worker (none while the first one could not even be constructed: startAt) */
  private readonly slots: (Slot | undefined)[] = [];
  private nextId = 1;
  private closed = false;
  private readonly startFailures: number[] = [];
  /** per index: why its last start failed (null: it started), and when (Date.now()) the next is tried */
  private readonly startError: (string | null)[] = [];
  private readonly nextStartAt: number[] = [];
  /** test hook (testHooks): the indices whose workers start at a script that does not exist */
  private readonly brokenStarts = new Set<number>();
  /** busy ms of the retired workers, per index */
  private readonly retiredActive: number[] = [];
  private watchdog: ReturnType<typeof setInterval> | null = null;
  private lastTick = 0;

  constructor(
    private readonly config: Config,
    private readonly handlers: PoolHandlers,
    private readonly log: FastifyBaseLogger,
  ) {}

  get size(): number {
    return this.config.workers;
  }

  get alive(): number {
    return this.slots.filter((s) => s?.alive).length;
  }

  /** Whether the worker at `index` is running now (not starting, nor a starting replacement). */
  isAlive(index: number): boolean {
    return this.slots[index]?.alive ?? false;
  }

  /**
   * Starts every worker and waits until each has loaded the engine or failed its first
   * start. A worker that cannot start (a broken worker script, an exit at once) does not
   * fail the server's start (until 2026-12-07 it did: the process exited, its checkpointed
   * sessions unreachable): the server starts degraded — /ready 503 naming the cause
   * (startErrors), the requests it would take 503 `worker_unavailable` with Retry-After —
   * while the pool retries that start with back-off (retire → respawn), as it does a
   * replacement's; onWorkerReady tells the manager when it has started. A Worker that
   * cannot even be constructed (startAt) is such a start too: until 2026-12-07 its throw
   * failed the server's start.
   */
  async start(): Promise<void> {
    for (let i = 0; i < this.config.workers; i++) this.startAt(i, undefined);
    this.lastTick = performance.now();
    this.watchdog = setInterval(() => this.watch(), WATCHDOG_TICK_MS);
    this.watchdog.unref?.();
    await Promise.all(this.slots.map((s) => s?.ready.catch(() => undefined)));
    const failing = this.startErrors().filter((e): e is string => e !== null);
    if (failing.length > 0)
      this.log.error(
        { failing, workers: this.config.workers },
        "solver workers failed to start: serving degraded (/ready 503) while their starts are retried",
      );
  }

  private spawn(index: number): Slot {
    const inflight = new SharedArrayBuffer(4);
    const init: WorkerInit = {
      index,
      inflight,
      frameQueueBytes: this.config.frameQueueBytes,
      stepLimitMs: this.config.requestTimeoutMs,
      testHooks: this.config.testHooks,
      checkpointEverySteps: this.config.checkpointEverySteps,
      checkpointWaitMs: this.config.checkpointWaitMs,
      maxPendingInputs: this.config.maxPendingInputs,
      sessionMemoryBytes: workerBudgetBytes(this.config),
      recordingStatesMaxBytes: this.config.recordingStatesMaxBytes,
    };
    const entry = this.brokenStarts.has(index)
      ? new URL("./no-such-worker-for-test.mjs", import.meta.url)
      : workerEntry();
    const worker = new Worker(entry, {
      workerData: init,
      execArgv: [],
      name: `moreau-solver-${index}`,
      // a runaway of JavaScript objects (a contact explosion's records, a huge model) ends
      // this worker with ERR_WORKER_OUT_OF_MEMORY instead of the process: handled as a
      // crash, its sessions rebuilt from their checkpoints. Typed arrays live outside this
      // heap: the dense factorizations are bounded at validation instead (cost.ts)
      resourceLimits: { maxOldGenerationSizeMb: this.config.workerMemoryMb },
    });
    let markReady: () => void = () => {};
    let failReady: (e: Error) => void = () => {};
    const slot: Slot = {
      index,
      worker,
      ready: new Promise<void>((res, rej) => {
        markReady = res;
        failReady = rej;
      }),
      alive: false,
      retired: false,
      failReady: (e) => failReady(e),
      inflight: new Int32Array(inflight),
      pending: new Map(),
      active: 0,
      lastError: null,
      lastHeard: performance.now(),
    };
    slot.ready.catch(() => undefined);
    worker.on("message", (msg: WorkerOutbound) => {
      slot.lastHeard = performance.now();
      if (msg.kind === "started") {
        const p = slot.pending.get(msg.id);
        if (p) p.startedAt = slot.lastHeard;
      } else if (msg.kind === "reply") {
        const p = slot.pending.get(msg.id);
        if (!p) return;
        slot.pending.delete(msg.id);
        if (msg.ok) p.resolve({ result: msg.result, session: msg.session });
        else p.reject(new WorkerFailure(msg.error, msg.session));
      } else if (msg.kind === "ready") {
        slot.alive = true;
        this.startFailures[index] = 0;
        this.startError[index] = null;
        markReady();
        this.handlers.onWorkerReady?.(index);
      } else this.handlers.onEvent(index, msg);
    });
    worker.on("error", (err) => {
      slot.lastError = err?.message ?? String(err);
      this.log.error({ err, worker: index }, "solver worker error");
    });
    worker.on("exit", (code) => {
      if (slot.retired) return;
      const reason = `solver worker ${index} exited unexpectedly (exit code ${code}${slot.lastError ? `: ${slot.lastError}` : ""})`;
      if (!this.closed) this.log.error({ worker: index, code }, reason);
      this.retire(slot, reason);
    });
    return slot;
  }

  /**
   * Sends a request to worker `index` and resolves with its reply. `timeoutMs` (default
   * REQUEST_TIMEOUT_MS) plus the watchdog grace bounds the worker's time on it from when it
   * starts on it (not the time it waits behind other work): past it the worker is replaced
   * and the request fails with `timeout` (watch()).
   */
  async request(index: number, body: WorkerRequestBody, timeoutMs?: number): Promise<WorkerAnswer> {
    const slot = await this.live(index);
    const id = this.nextId++;
    return new Promise<WorkerAnswer>((resolve, reject) => {
      const pending: Pending = {
        resolve,
        reject,
        kind: body.kind,
        limitMs: timeoutMs ?? this.config.requestTimeoutMs,
        startedAt: null,
      };
      slot.pending.set(id, pending);
      try {
        slot.worker.postMessage({ ...body, id });
      } catch (err) {
        // the message could not be cloned (e.g. nested too deep for the structured clone):
        // nothing reached the worker, so nothing is left pending and the worker is fine
        slot.pending.delete(id);
        reject(
          new ApiError(
            "invalid_request",
            `the ${body.kind} request could not be sent to a solver worker: ${(err as Error).message}`,
          ),
        );
      }
    });
  }

  /**
   * Requests in flight on worker `index` of the given kinds (placement counts the heavy
   * ones: a worker in the middle of an assembly is not the least loaded).
   */
  inFlight(index: number, kinds: readonly WorkerRequestBody["kind"][]): number {
    const slot = this.slots[index];
    if (!slot?.alive) return 0;
    let n = 0;
    for (const p of slot.pending.values()) if (kinds.includes(p.kind)) n++;
    return n;
  }

  /**
   * The watchdog's look at every live worker: one whose event loop has not turned for
   * REQUEST_TIMEOUT_MS + grace (nothing heard from it), or that is turning but has not
   * answered a request its limit + grace after starting on it, is stuck: replaced.
   */
  private watch(): void {
    const now = performance.now();
    const late = now - this.lastTick - WATCHDOG_TICK_MS;
    this.lastTick = now;
    // this thread's own loop was held up: the workers' messages of that time are not read
    // yet (they are handled after this timer), so nothing can be said of them this turn
    if (late > WATCHDOG_TICK_MS || this.closed) return;
    const grace = watchdogGraceMs(this.config);
    for (const slot of this.slots) {
      if (!slot?.alive || slot.retired) continue;
      const silent = now - slot.lastHeard;
      const blockedLimit = this.config.requestTimeoutMs + grace;
      if (silent > blockedLimit) {
        // what it is likely stuck in: the request it started last
        let last: Pending | null = null;
        for (const p of slot.pending.values())
          if (p.startedAt !== null && (last?.startedAt ?? -1) < p.startedAt) last = p;
        const on = last ? ` (working on a ${last.kind} request)` : "";
        this.stuck(
          slot,
          `solver worker ${slot.index} has not returned to its event loop for ${Math.round(silent)} ms${on}, past REQUEST_TIMEOUT_MS + ${grace} ms`,
        );
        continue;
      }
      // a busy loop is the case above; a worker heard from lately that keeps a request
      // unanswered past its limit has lost it
      if (silent > LIVELY_MS) continue;
      for (const p of slot.pending.values()) {
        if (p.startedAt === null || now - p.startedAt <= p.limitMs + grace) continue;
        this.stuck(
          slot,
          `solver worker ${slot.index} has not answered a ${p.kind} request ${Math.round(now - p.startedAt)} ms after starting on it (limit ${p.limitMs} ms + ${grace} ms)`,
        );
        break;
      }
    }
  }

  /** A stuck worker: its pending requests fail with `timeout`, and it is replaced. */
  private stuck(slot: Slot, why: string): void {
    const now = performance.now();
    for (const [, p] of slot.pending) {
      const waited =
        p.startedAt === null
          ? "before starting on it"
          : `${Math.round(now - p.startedAt)} ms into it`;
      p.reject(
        new ApiError(
          "timeout",
          `the worker did not answer a ${p.kind} request (${waited}): ${why}; it was restarted`,
          { kind: p.kind },
        ),
      );
    }
    slot.pending.clear();
    this.replace(slot.index, `${why}; it was restarted`);
  }

  /**
   * The live worker at `index`, waiting for a starting or replacement one — unless its
   * replacement failed to start (a broken worker script, an exit at once): then 503
   * `worker_unavailable` at once, naming the cause and when the next start is tried
   * (Retry-After), while the pool goes on trying with back-off. Until 2026-12-07 a request
   * waited for three starts and failed with 500 `worker_crashed`.
   */
  private async live(index: number): Promise<Slot> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.closed) throw new ApiError("shutting_down", "the server is shutting down");
      if (!(index >= 0 && index < this.size)) throw new ApiError("internal", `no worker ${index}`);
      const slot = this.slots[index];
      if (slot?.alive) return slot;
      // no slot: its first Worker could not be constructed (a failed start, startAt)
      if (!slot || (this.startFailures[index] ?? 0) > 0) throw this.unavailable(index);
      await slot.ready.catch(() => undefined);
    }
    const slot = this.slots[index];
    if (slot?.alive) return slot;
    throw this.unavailable(index);
  }

  /** Why worker `index` cannot take requests now (its start failing), as a 503 with Retry-After. */
  unavailable(index: number): ApiError {
    const cause = this.startError[index] ?? `solver worker ${index} is not running`;
    // the next start, and about a second for it to load the engine
    const retryAfterMs = Math.max(1000, (this.nextStartAt[index] ?? 0) - Date.now() + 1000);
    return new ApiError(
      "worker_unavailable",
      `no solver worker can take this request now: ${cause}; the server retries starting it with back-off (next in ${Math.ceil(retryAfterMs / 1000)} s)`,
      { worker: index, cause, retryAfterMs },
    );
  }

  /** Why a worker's starts fail, per index (null: it started); /ready reports them. */
  startErrors(): (string | null)[] {
    return Array.from({ length: this.config.workers }, (_, i) =>
      this.slots[i]?.alive ? null : (this.startError[i] ?? null),
    );
  }

  /**
   * Test hook (testHooks): the workers at `index` start at a script that does not exist
   * (`broken`) or as usual again: a replacement that cannot start.
   */
  breakStartsForTest(index: number, broken: boolean): void {
    if (!this.config.testHooks) throw new Error("breakStartsForTest needs testHooks");
    if (broken) this.brokenStarts.add(index);
    else this.brokenStarts.delete(index);
  }

  notify(index: number, notice: WorkerNotice): void {
    const slot = this.slots[index];
    if (slot?.alive) slot.worker.postMessage(notice);
  }

  /** The event loop has written out `bytes` of frames from worker `index`. */
  framesDone(index: number, bytes: number): void {
    const slot = this.slots[index];
    if (slot) Atomics.sub(slot.inflight, 0, bytes);
  }

  /** Bytes of frames from worker `index` not yet written out. */
  framesInFlight(index: number): number {
    const slot = this.slots[index];
    return slot ? Atomics.load(slot.inflight, 0) : 0;
  }

  /**
   * Takes a worker out of service at once: its pending requests fail with worker_crashed,
   * a replacement starts, and the manager marks its sessions `error` (all before the old
   * thread has actually stopped).
   */
  private retire(slot: Slot, reason: string): void {
    if (slot.retired) return;
    slot.retired = true;
    this.readActive(slot);
    this.retiredActive[slot.index] = (this.retiredActive[slot.index] ?? 0) + slot.active;
    slot.active = 0;
    const wasAlive = slot.alive;
    slot.alive = false;
    slot.failReady(new Error(reason));
    for (const [, p] of slot.pending)
      p.reject(new ApiError("worker_crashed", `${reason}; the request was lost`));
    slot.pending.clear();
    if (this.closed) return;
    const index = slot.index;
    if (this.slots[index] === slot) {
      // a worker that dies before it is ready (a broken engine import) is retried with
      // exponential back-off instead of in a tight loop
      const failures = wasAlive ? 0 : (this.startFailures[index] ?? 0) + 1;
      this.startFailures[index] = failures;
      if (failures > 0) this.startError[index] = reason;
      this.respawn(index, slot, failures);
    }
    if (wasAlive) this.handlers.onWorkerLost(index, reason);
  }

  /**
   * Starts a worker at `index` in place of `prev` (undefined: none yet, the server's start).
   * A Worker that cannot even be constructed (the constructor throws: ERR_WORKER_INIT_FAILED
   * when no thread can be had, invalid options) counts as a failed start and is retried with
   * back-off like one that dies before it is ready: `prev` stays in its place meanwhile
   * (thrown from respawn's timer it would end the process; from start(), fail the server's
   * start). The new slot, or null when it could not be constructed.
   */
  private startAt(index: number, prev: Slot | undefined): Slot | null {
    try {
      const slot = this.spawn(index);
      this.slots[index] = slot;
      return slot;
    } catch (err) {
      const n = (this.startFailures[index] ?? 0) + 1;
      this.startFailures[index] = n;
      this.startError[index] =
        `solver worker ${index} could not be started: ${(err as Error)?.message ?? err}`;
      this.log.error({ err, worker: index }, "solver worker could not be started");
      this.respawn(index, prev, n);
      return null;
    }
  }

  /**
   * Starts the replacement of `slot` at `index` (undefined: a first worker that could not be
   * constructed), at once after a loss (`failures` 0), else after startBackoffMs.
   */
  private respawn(index: number, slot: Slot | undefined, failures: number): void {
    const start = () => {
      if (this.closed || this.slots[index] !== slot) return;
      this.startAt(index, slot)?.ready.catch((err) =>
        this.log.error({ err, worker: index }, "replacement worker failed to start"),
      );
    };
    if (failures === 0) {
      this.nextStartAt[index] = Date.now();
      start();
      return;
    }
    const delay = startBackoffMs(failures);
    this.nextStartAt[index] = Date.now() + delay;
    setTimeout(start, delay).unref();
  }

  /** Terminates worker `index` (stuck or on request): it is replaced, its sessions lost. */
  replace(index: number, reason: string): void {
    const slot = this.slots[index];
    if (!slot || slot.retired) return;
    this.log.error({ worker: index }, reason);
    this.retire(slot, reason);
    void slot.worker.terminate();
  }

  /**
   * Answers every pending request of every worker with the error `make()` gives (the
   * workers go on; their late replies are ignored). Returns how many were pending.
   */
  abortPending(make: () => Error): number {
    let n = 0;
    for (const slot of this.slots) {
      if (!slot) continue;
      for (const [, p] of slot.pending) {
        p.reject(make());
        n++;
      }
      slot.pending.clear();
    }
    return n;
  }

  /** Seconds each worker index's event loop has been busy, over all its successive workers. */
  busySeconds(): number[] {
    return Array.from({ length: this.config.workers }, (_, i) => {
      const slot = this.slots[i];
      if (slot && !slot.retired) this.readActive(slot);
      return ((this.retiredActive[i] ?? 0) + (slot && !slot.retired ? slot.active : 0)) / 1000;
    });
  }

  private readActive(slot: Slot): void {
    if (!slot.alive) return;
    try {
      slot.active = Math.max(slot.active, slot.worker.performance.eventLoopUtilization().active);
    } catch {
      /* the thread is gone: keep the last reading */
    }
  }

  /**
   * Terminates worker `index` from outside, as the system would kill it (tests only: needs
   * the testHooks setting). Its exit is handled as a crash.
   */
  killForTest(index: number): Promise<number> {
    if (!this.config.testHooks) throw new Error("killForTest needs testHooks");
    const slot = this.slots[index];
    if (!slot) throw new Error(`no worker ${index}`);
    return slot.worker.terminate();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
    await Promise.all(
      this.slots.map(async (s) => {
        if (!s) return;
        if (s.alive) s.worker.postMessage({ kind: "shutdown" } satisfies WorkerNotice);
        this.retire(s, "server shutting down");
        await s.worker.terminate();
      }),
    );
  }
}
