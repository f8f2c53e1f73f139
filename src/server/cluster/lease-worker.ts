/**
 * The lease renewal thread (renewer.ts): every third of LEASE_TTL_MS it renews the leases
 * the event loop handed it (HoldMessage), all at once on a Redis connection of its own,
 * while the event loop's heartbeat is younger than the bound (a hung event loop lets its
 * leases lapse), and posts each answer back. One renewal of a lease at a time. A renewal
 * that fails (Redis unreachable) is not reported: the event loop's own calls report the
 * outage, and its trust windows run out as without renewals.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Lease } from "./ports";
import { connect, RedisDirectory, ready } from "./redis-directory";
import type { HoldMessage, LeaseWorkerInit, LeaseWorkerMessage } from "./renewer";

/** How long the thread waits for Redis before it reports itself ready anyway. */
const START_WAIT_MS = 5000;

const init = workerData as LeaseWorkerInit;
const port = parentPort;
if (!port) throw new Error("lease-worker.ts runs in a worker thread");
const heartbeat = new BigInt64Array(init.heartbeat);
const redis = connect(init.redisUrl);
redis.on("error", () => undefined); // ioredis reconnects on its own
const directory = new RedisDirectory(redis, init.prefix);
let leases: Lease[] = [];
/** leases whose renewal is under way (`session:epoch`) */
const renewing = new Set<string>();

const post = (m: LeaseWorkerMessage) => port.postMessage(m);

port.on("message", (m: HoldMessage) => {
  leases = m.leases;
});

function pass(): void {
  const age = Number(process.hrtime.bigint() - Atomics.load(heartbeat, 0)) / 1e6;
  if (age > init.boundMs) return;
  for (const lease of leases) {
    const key = `${lease.session}:${lease.epoch}`;
    if (renewing.has(key)) continue;
    renewing.add(key);
    const sentNs = process.hrtime.bigint();
    directory
      .renew(lease, init.ttlMs)
      .then(
        (ok) => post({ kind: "renewed", lease, ok, sentNs }),
        () => undefined,
      )
      .finally(() => renewing.delete(key));
  }
}

setInterval(pass, Math.max(50, Math.floor(init.ttlMs / 3)));
await ready(redis, START_WAIT_MS);
post({ kind: "ready" });
