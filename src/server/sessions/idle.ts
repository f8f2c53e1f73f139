/**
 * Idle expiry: a session that has had no request and no stream subscriber for
 * SESSION_IDLE_TTL seconds is deleted, running or not (a request in flight keeps it: its
 * busy count), but for one waiting for a worker to rebuild it (its clock starts again once
 * rebuilt). The sweep runs every quarter of the TTL (between 50 ms and a minute).
 */
import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../config";
import type { StreamHub } from "../stream";
import type { SessionTable } from "./records";

export class IdleSweeper {
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    private readonly streams: StreamHub,
    private readonly table: SessionTable,
    /** deletes a session (durably: its checkpoint first) */
    private readonly remove: (id: string) => Promise<void>,
  ) {}

  /** Starts sweeping (nothing when SESSION_IDLE_TTL is 0). */
  start(): void {
    if (this.config.sessionIdleTtl <= 0) return;
    const every = Math.min(60_000, Math.max(50, (this.config.sessionIdleTtl * 1000) / 4));
    this.timer = setInterval(() => this.sweep(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private sweep(): void {
    const limit = Date.now() - this.config.sessionIdleTtl * 1000;
    for (const rec of this.table.all()) {
      if (rec.busy > 0 || rec.lastActivity > limit || this.streams.count(rec.id) > 0) continue;
      // one waiting for a worker (recovery.ts park) is not idle but unusable: expiring it
      // would delete the checkpoint it waits with (one a restart could not open waits out
      // of the table, never expired either)
      if (rec.waitingSince !== null) continue;
      this.log.info({ session: rec.id }, "idle session expired");
      void this.remove(rec.id).catch(() => undefined);
    }
  }
}
