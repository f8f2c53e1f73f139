/**
 * The Redis side of a cluster node (REDIS_URL): one connection for commands (the rate
 * limiter's too), the bus's own for blocking reads and pub/sub, and the three adapters.
 * Redis unreachable at start is no failure: the node starts degraded and joins once ioredis
 * has reconnected.
 */
import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";
import type { Config } from "../config";
import type { ClusterPorts } from "./node";
import { connect, RedisBus, RedisDirectory, RedisSnapshotStore, ready } from "./redis";

/** How long a start waits for Redis before going on degraded. */
const START_WAIT_MS = 5000;

export async function redisPorts(
  config: Config,
  log: FastifyBaseLogger,
): Promise<{ ports: ClusterPorts; redis: Redis }> {
  const redis = connect(config.redisUrl);
  let up = false;
  redis.on("ready", () => {
    if (!up) log.info("redis connected");
    up = true;
  });
  redis.on("error", (err: Error) => {
    if (up) log.warn({ err: err.message }, "redis unreachable: serving this node's own sessions");
    up = false;
  });
  redis.on("end", () => {
    up = false;
  });
  if (!(await ready(redis, START_WAIT_MS)))
    log.warn("redis unreachable at start: the node starts degraded");
  const p = config.clusterPrefix;
  const bus = new RedisBus(redis, p);
  return {
    redis,
    ports: {
      directory: new RedisDirectory(redis, p),
      bus,
      snapshots: new RedisSnapshotStore(redis, p),
      healthy: () => redis.status === "ready",
      close: async () => {
        await bus.close();
        redis.disconnect();
      },
    },
  };
}
