/**
 * Liveness and readiness. /health answers from the event loop alone (it never waits on a
 * worker), so it stays prompt while solvers compute; /ready is 200 when every worker is up,
 * the server is not shutting down and (with DATA_DIR) checkpoints reach the disk, else 503.
 * In a cluster (REDIS_URL) `cluster` says whether Redis answers; a node cut off from Redis
 * stays ready (200, `cluster.degraded`): it still serves the sessions it holds, which a
 * proxy taking it out of rotation would cut off.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Health, Readiness } from "../schemas/api";

const health: FastifyPluginAsyncZod = async (app) => {
  const { sessions, cluster } = app.moreau;
  app.get(
    "/health",
    {
      schema: {
        operationId: "getHealth",
        tags: ["operations"],
        summary: "Liveness",
        response: { 200: Health },
      },
    },
    async () => ({ status: "ok" as const, uptime: process.uptime() }),
  );
  app.get(
    "/ready",
    {
      schema: {
        operationId: "getReadiness",
        tags: ["operations"],
        summary: "Readiness (all workers up, not shutting down, checkpoints written)",
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_req, reply) => {
      const alive = sessions.pool.alive;
      const total = sessions.pool.size;
      const persistence = sessions.persistence;
      const ready = alive === total && !sessions.isClosing && persistence?.ok !== false;
      reply.code(ready ? 200 : 503);
      return {
        ready,
        workers: {
          total,
          alive,
          failing: sessions.pool.startErrors().filter((e): e is string => e !== null),
        },
        sessions: sessions.size,
        closing: sessions.isClosing,
        persistence,
        cluster: cluster?.status() ?? null,
      };
    },
  );
};

export default health;
