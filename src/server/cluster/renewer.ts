/**
 * Lease renewals off the event loop: a worker thread (lease-worker.ts) with a Redis
 * connection of its own renews the leases the node holds, every third of LEASE_TTL_MS, so
 * that a stall of the event loop (a long synchronous piece of work, a major collection) does
 * not lose them: on the event loop, a stall longer than 2/3 of the TTL that began just
 * before a renewal pass let the lease lapse (the pass ran after the stall) and another node
 * took the session over.
 *
 * A process whose event loop is hung for good must still lose its leases. The event loop
 * writes a heartbeat (a process.hrtime timestamp in a SharedArrayBuffer, every HEARTBEAT_MS)
 * and the thread renews only while it is younger than HEARTBEAT_BOUND of the TTL: the last
 * renewal goes out at most that long after the last heartbeat, and the lease lapses at most
 * (HEARTBEAT_BOUND + 1)·LEASE_TTL_MS after the event loop stopped (1.5 TTL; 1 TTL from the
 * last renewal on the event loop before), plus however late Redis runs that last renewal:
 * its TTL counts from when Redis runs it. The holder's own trust in a lease counts from the
 * send, so that delay shortens the holder's trust, never lengthens it. A stall of up to (HEARTBEAT_BOUND + 2/3)·TTL less
 * HEARTBEAT_MS keeps every lease whatever its phase: the thread's last renewal in it comes
 * at least HEARTBEAT_BOUND·TTL − TTL/3 after its start (a pass every TTL/3), and lives TTL.
 *
 * Times cross the threads as process.hrtime (one monotonic clock for the whole process;
 * performance.now() counts from each thread's own start).
 */
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FastifyBaseLogger } from "fastify";
import type { Lease } from "./ports";

/** The heartbeat's bound, as a fraction of the lease TTL (see the file's head). */
export const HEARTBEAT_BOUND = 0.5;
/** How often the event loop writes its heartbeat (ms). */
const HEARTBEAT_MS = 50;

/** What the renewal thread is started with. */
export interface LeaseWorkerInit {
  redisUrl: string;
  prefix: string;
  ttlMs: number;
  /** the heartbeat's bound (ms) */
  boundMs: number;
  /** one BigInt64: the event loop's last heartbeat, process.hrtime.bigint() */
  heartbeat: SharedArrayBuffer;
}

/** Event loop → thread: the leases to renew from now on (the whole set). */
export interface HoldMessage {
  leases: Lease[];
}

/** Thread → event loop. */
export type LeaseWorkerMessage =
  /** its Redis connection is ready (or gave up waiting: it goes on reconnecting) */
  | { kind: "ready" }
  /** a renewal answered: `ok` false when the lease is not this node's any more */
  | { kind: "renewed"; lease: Lease; ok: boolean; sentNs: bigint };

/** The lease renewals a node leaves to another thread (ClusterPorts.renewer). */
export interface LeaseRenewer {
  /** Whether the thread runs (false before it is ready and once it failed). */
  alive(): boolean;
  /** The leases to renew from now on (replacing the previous set). */
  hold(leases: readonly Lease[]): void;
  /** Called on the event loop with each renewal answered; `sent`: its performance.now(). */
  onRenewed(fn: (lease: Lease, ok: boolean, sent: number) => void): void;
  close(): Promise<void>;
}

/**
 * The thread's entry: compiled JavaScript beside the compiled server (dist/cluster/), the
 * test run's bundle beside MOREAU_WORKER_BUNDLE's (test/support/global-setup.ts), or, run
 * from source, a bootstrap that registers tsx's loader in the thread (worker-pool.ts).
 */
function entry(): URL {
  if (!import.meta.url.endsWith(".ts"))
    return new URL("./cluster/lease-worker.js", import.meta.url);
  const bundle = process.env.MOREAU_WORKER_BUNDLE;
  return bundle
    ? pathToFileURL(join(dirname(bundle), "cluster", "lease-worker.js"))
    : new URL("./lease-bootstrap.mjs", import.meta.url);
}

/** The renewal thread and the event loop's heartbeat. */
export class WorkerLeaseRenewer implements LeaseRenewer {
  private readonly worker: Worker;
  private readonly beat: BigInt64Array;
  private readonly timer: ReturnType<typeof setInterval>;
  private ready = false;
  private failed = false;
  private listener: (lease: Lease, ok: boolean, sent: number) => void = () => undefined;

  constructor(redisUrl: string, prefix: string, ttlMs: number, log: FastifyBaseLogger) {
    const heartbeat = new SharedArrayBuffer(8);
    this.beat = new BigInt64Array(heartbeat);
    const write = () => Atomics.store(this.beat, 0, process.hrtime.bigint());
    write();
    this.timer = setInterval(write, HEARTBEAT_MS);
    this.timer.unref();
    const init: LeaseWorkerInit = {
      redisUrl,
      prefix,
      ttlMs,
      boundMs: HEARTBEAT_BOUND * ttlMs,
      heartbeat,
    };
    this.worker = new Worker(entry(), { workerData: init });
    // the renewals keep no process alive (the node's own timers are unref'd too)
    this.worker.unref();
    this.worker.on("message", (m: LeaseWorkerMessage) => {
      if (m.kind === "ready") this.ready = true;
      else {
        // the same interval on this thread's clock
        const ago = Number(process.hrtime.bigint() - m.sentNs) / 1e6;
        this.listener(m.lease, m.ok, performance.now() - ago);
      }
    });
    const down = (why: string) => {
      if (this.failed) return;
      this.failed = true;
      clearInterval(this.timer);
      log.error(`lease renewal thread ${why}: leases renewed on the event loop`);
    };
    this.worker.on("error", (err) => down(`failed (${err.message})`));
    this.worker.on("exit", (code) => down(`exited (${code})`));
  }

  /** Resolves once the thread is ready (false after `timeoutMs`: renewed on the event loop meanwhile). */
  started(timeoutMs: number): Promise<boolean> {
    return new Promise((res) => {
      const t = setTimeout(() => res(this.alive()), timeoutMs);
      const check = (m: LeaseWorkerMessage) => {
        if (m.kind !== "ready") return;
        clearTimeout(t);
        this.worker.off("message", check);
        res(true);
      };
      if (this.ready) res(true);
      else this.worker.on("message", check);
    });
  }

  alive(): boolean {
    return this.ready && !this.failed;
  }

  hold(leases: readonly Lease[]): void {
    if (this.failed) return;
    const m: HoldMessage = { leases: [...leases] };
    this.worker.postMessage(m);
  }

  onRenewed(fn: (lease: Lease, ok: boolean, sent: number) => void): void {
    this.listener = fn;
  }

  async close(): Promise<void> {
    this.failed = true;
    clearInterval(this.timer);
    await this.worker.terminate();
  }
}
