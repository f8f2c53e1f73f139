/**
 * The Redis side of a cluster node (REDIS_URL): one connection for commands (the rate
 * limiter's too, and the frames), the bus's own for blocking reads and pub/sub, one for
 * checkpoints, one for the leases, and the adapters.
 *
 * Checkpoints have their own connection because a connection answers in order: a lease
 * renewal (a few bytes) sent on the connection that carries a checkpoint (a 10 000-particle
 * cloth's is 10 MB) waited for the whole checkpoint to be sent, stored and answered — 140 to
 * 190 ms on an idle machine, seconds on a loaded one, and past LEASE_TTL_MS the other nodes
 * take the session over. On its own connection the renewal is answered in a round trip
 * while the checkpoint streams in (test/cluster/setup.test.ts). The renewals have their
 * own for the same reason: the command connection carries the frames published (a cloth's
 * are hundreds of kB each, many a second) and the directory's reads. The periodic renewals
 * run in a thread of their own, on a fifth connection (renewer.ts: an event loop stalled
 * for most of a TTL keeps its leases).
 * Redis unreachable at start is no failure: the node starts degraded and joins once ioredis
 * has reconnected.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";
import type { Config } from "../config";
import type { ClusterPorts } from "./node";
import { connect, RedisBus, RedisDirectory, RedisSnapshotStore, ready } from "./redis";
import { WorkerLeaseRenewer } from "./renewer";

/** How long a start waits for Redis before going on degraded. */
const START_WAIT_MS = 5000;

export async function redisPorts(
  config: Config,
  log: FastifyBaseLogger,
): Promise<{ ports: ClusterPorts; redis: Redis }> {
  const redis = connect(config.redisUrl);
  let up = false;
  /** performance.now() when the connection came back after it was lost (reconnectedAt) */
  let back = Number.NEGATIVE_INFINITY;
  let connected = false;
  redis.on("ready", () => {
    if (!up) log.info("redis connected");
    if (!up && connected) back = performance.now();
    up = true;
    connected = true;
  });
  redis.on("error", (err: Error) => {
    if (up) log.warn({ err: err.message }, "redis unreachable: serving this node's own sessions");
    up = false;
  });
  redis.on("end", () => {
    up = false;
  });
  const checkpoints = connect(config.redisUrl);
  const leases = connect(config.redisUrl);
  // a failed write is reported by the store's caller, a failed renewal by the node's
  // (Redis unreachable: the command connection reports it); ioredis reconnects on its own
  checkpoints.on("error", () => undefined);
  leases.on("error", () => undefined);
  const p = config.clusterPrefix;
  const renewer = new WorkerLeaseRenewer(config.redisUrl, p, config.leaseTtlMs, log);
  const [allReady] = await Promise.all([
    Promise.all([
      ready(redis, START_WAIT_MS),
      ready(checkpoints, START_WAIT_MS),
      ready(leases, START_WAIT_MS),
    ]),
    // not ready in time: the event loop renews until it is
    renewer.started(START_WAIT_MS),
  ]);
  if (!allReady.every(Boolean)) log.warn("redis unreachable at start: the node starts degraded");
  const bus = new RedisBus(redis, p);
  return {
    redis,
    ports: {
      directory: new RedisDirectory(redis, p),
      leases: new RedisDirectory(leases, p),
      renewer,
      bus,
      snapshots: new RedisSnapshotStore(checkpoints, p),
      healthy: () => [redis, checkpoints, leases].every((c) => c.status === "ready"),
      reconnectedAt: () => back,
      close: async () => {
        await renewer.close();
        await bus.close();
        redis.disconnect();
        checkpoints.disconnect();
        leases.disconnect();
      },
    },
  };
}
