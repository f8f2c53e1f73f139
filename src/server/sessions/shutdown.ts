/**
 * Graceful shutdown of the sessions, in two halves around the HTTP server's own close
 * (app.ts: preClose, then onClose once in-flight requests are answered):
 * - `begin`: new sessions are refused (the `closing` flag the other parts read), streams
 *   close with 1001, runs stop (their checkpoints keep the run, which a restart resumes, as
 *   after a crash), and every session is checkpointed first; requests still in
 *   flight SHUTDOWN_TIMEOUT_MS after the start of the shutdown are answered 503
 *   `shutting_down`;
 * - `close`: every session is checkpointed again (the steps of the requests that finished
 *   meanwhile), within the timeout or FINAL_CHECKPOINT_GRACE_MS past it, then the workers
 *   stop.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config";
import { ApiError } from "../errors";
import type { StreamHub } from "../stream";
import type { WorkerPool } from "../worker-pool";
import { type Checkpoints, runOf } from "./checkpoints";
import type { IdleSweeper } from "./idle";
import type { SessionTable } from "./records";
import type { WorkerCalls } from "./worker-calls";

/** Time the last checkpoints of a shutdown may take once SHUTDOWN_TIMEOUT_MS has passed. */
const FINAL_CHECKPOINT_GRACE_MS = 2000;

export class Shutdown {
  private closing = false;
  private started: Promise<void> | null = null;
  /** Date.now() by which in-flight requests must have finished */
  private deadline = Number.POSITIVE_INFINITY;
  private abortTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    private readonly pool: WorkerPool,
    private readonly streams: StreamHub,
    private readonly table: SessionTable,
    private readonly calls: WorkerCalls,
    private readonly checkpoints: Checkpoints,
    private readonly idle: IdleSweeper,
  ) {}

  /** The shutdown has begun: no new session, no rebuild after a worker loss. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** The first half (idempotent): see the module's comment. */
  begin(): Promise<void> {
    this.started ??= this.start();
    return this.started;
  }

  private async start(): Promise<void> {
    this.closing = true;
    const timeout = this.config.shutdownTimeoutMs;
    this.deadline = Date.now() + timeout;
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
    this.idle.stop();
    this.streams.closeAll(1001, "server shutting down");
    this.streams.close();
    await bounded(
      (async () => {
        await Promise.all(this.table.all().map((r) => r.rebuilding ?? Promise.resolve()));
        await Promise.all(
          this.table
            .all()
            .filter((r) => r.status === "running" && !r.lost)
            .map((r) => {
              if (r.run) r.resumeRun = runOf(r.run);
              // stopped, not died: the next start resumes it as a first time (recovery.ts
              // resumeRestored)
              r.runResumedAt = null;
              return this.pool
                .request(r.worker, { kind: "pause", sessionId: r.id })
                .then((a) => a.session && this.calls.apply(r, a.session))
                .catch(() => undefined);
            }),
        );
        // checkpoint first: what was acknowledged is on disk before anything else is waited for
        await this.checkpoints.all();
      })(),
      this.deadline,
    );
  }

  /** The second half (after in-flight requests are answered): see the module's comment. */
  async close(): Promise<void> {
    await this.begin();
    if (this.abortTimer) clearTimeout(this.abortTimer);
    await bounded(
      this.checkpoints.all(),
      Math.max(this.deadline, Date.now() + FINAL_CHECKPOINT_GRACE_MS),
    );
    for (const r of this.table.all()) this.checkpoints.clearTimer(r);
    await this.pool.close();
  }
}

/** Waits for `p` until the time `deadline` (Date.now() scale) at most. */
async function bounded(p: Promise<unknown>, deadline: number): Promise<void> {
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
