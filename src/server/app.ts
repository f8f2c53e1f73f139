/**
 * buildApp(config): the Fastify 5 application — zod validation (with zod's issue paths in
 * 400 answers), OpenAPI at /docs, pino logs with request ids (x-request-id honoured and
 * echoed), one plugin per resource from routes/, the session manager and its worker pool
 * (started by app.ready()), and graceful close: app.close() refuses new sessions and
 * upgrades, closes streams with 1001, stops runs, lets in-flight requests finish, then
 * stops the workers (checkpointing every session first when DATA_DIR is set).
 * Access control (API_KEY / API_KEYS, src/server/auth.ts) is an onRequest hook installed
 * before every route; the per-key rate limit (@fastify/rate-limit, RATE_LIMIT_MAX per
 * RATE_LIMIT_WINDOW_MS) applies when keys are set, to every route but /health and /ready.
 *
 * Tests: `const app = await buildApp({ workers: 1, logLevel: "silent" }); await app.ready();
 * supertest(app.server)...; await app.close()`.
 */
import { randomUUID } from "node:crypto";
import rateLimit from "@fastify/rate-limit";
import websocket from "@fastify/websocket";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifySchemaCompiler,
} from "fastify";
import { serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { z } from "zod";
import assemblyRoutes from "../../routes/assembly";
import docsRoutes from "../../routes/docs";
import healthRoutes from "../../routes/health";
import metricsRoutes from "../../routes/metrics";
import sessionRoutes from "../../routes/sessions";
import streamRoutes from "../../routes/stream";
import { installAuth, PUBLIC_PATHS, pathOf, WS_PROTOCOL } from "./auth";
import { type Config, type ConfigInput, resolveConfig } from "./config";
import type { MoreauContext } from "./context";
import { ApiError, installErrorHandlers, RequestValidationError, toApiError } from "./errors";
import { ServerMetrics } from "./metrics";
import { SessionManager } from "./session-manager";

/** Validates a request part with its zod schema, keeping zod's issue paths. */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const r = schema.safeParse(data);
    if (r.success) return { value: r.data };
    return {
      error: new RequestValidationError(
        httpPart ?? "body",
        r.error.issues.map((i) => ({
          path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
          message: i.message,
          code: i.code,
        })),
        typeof data === "object" && data !== null && "model" in data,
      ),
    };
  };

export async function buildApp(input: ConfigInput | Config = {}) {
  const config = resolveConfig(input);
  const app = Fastify({
    logger: { level: config.logLevel },
    bodyLimit: config.maxBodyBytes,
    requestIdHeader: "x-request-id",
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // router errors (bad URL encoding, over-long path parameters) in the service's format
    frameworkErrors: (err, _req, reply) => {
      const api = toApiError(err);
      const raw = reply as unknown as FastifyReply;
      raw.code(api.statusCode).type("application/json").send(JSON.stringify(api.toJSON()));
    },
  }).withTypeProvider<ZodTypeProvider>();
  // bodies are JSON only: text/plain (parsed by default) is refused with 415 like any other type
  app.removeContentTypeParser("text/plain");

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandlers(app);

  let sessions: SessionManager | null = null;
  const metrics = new ServerMetrics({
    sessionsByStatus: () =>
      sessions?.byStatus() ?? { ready: 0, running: 0, paused: 0, diverged: 0, error: 0 },
    wsClients: () => sessions?.streams.clients ?? 0,
    workerUtilization: () => sessions?.pool.utilization() ?? [],
    workersAlive: () => sessions?.pool.alive ?? 0,
  });
  sessions = new SessionManager(config, metrics, app.log);
  const ctx: MoreauContext = { config, sessions, metrics, startedAt: process.uptime() };
  app.decorate("moreau", ctx);

  app.addHook("onRequest", async (req, reply) => {
    reply.header("x-request-id", req.id);
  });
  installAuth(app, config.apiKeys);
  if (config.apiKeys.length > 0 && config.rateLimitMax > 0)
    await app.register(rateLimit, {
      global: true,
      max: config.rateLimitMax,
      timeWindow: config.rateLimitWindowMs,
      // per API key (the auth hook has run: req.owner is set)
      keyGenerator: (req) => req.owner ?? req.ip,
      allowList: (req) => PUBLIC_PATHS.has(pathOf(req)),
      errorResponseBuilder: (_req, ctx) =>
        new ApiError(
          "rate_limited",
          `rate limit of ${ctx.max} requests per ${ctx.after} reached for this API key (RATE_LIMIT_MAX); retry in ${Math.ceil(ctx.ttl / 1000)} s`,
          { limit: ctx.max, retryAfterMs: ctx.ttl },
        ),
    });
  app.addHook("onResponse", async (req, reply) => {
    metrics.httpDuration.observe(
      {
        method: req.method,
        route: req.routeOptions.url ?? "unknown",
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });

  const manager = sessions;
  const drain = answeredResponseDrain(app);
  app.addHook("onReady", async () => {
    await manager.start();
  });
  // before the HTTP server stops: refuse new work, close streams (1001), stop runs
  app.addHook("preClose", async () => {
    drain.start();
    await manager.beginClose();
  });
  // after in-flight requests are answered: stop the workers
  app.addHook("onClose", async () => {
    drain.stop();
    await manager.close();
  });

  await app.register(docsRoutes);
  await app.register(websocket, {
    // the stream's subprotocol when the client offers it (a browser sending its key as
    // a `bearer.` subprotocol must be answered with one it offered: auth.ts)
    options: {
      maxPayload: 64 * 1024,
      handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    },
    // streams are closed by the session manager with 1001 in its own preClose
    preClose: (done) => done(),
  });
  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  await app.register(sessionRoutes);
  await app.register(assemblyRoutes);
  await app.register(streamRoutes);
  // the dashboard page at GET / and its assets (routes/dashboard.ts)
  await app.register((await import("../../routes/dashboard")).default);
  return app;
}

export type MoreauApp = Awaited<ReturnType<typeof buildApp>>;

/** How long an answer may make no progress towards its client once the server is closing. */
const DRAIN_GRACE_MS = 1000;

/**
 * The server stops (server.close) only when every connection has ended. An answer whose
 * client does not read it (a large body never consumed) keeps its connection open, so
 * the graceful shutdown would wait until SHUTDOWN_TIMEOUT_MS and exit 1. Once closing, a
 * connection whose answer has started (headers sent) but has not moved a byte for
 * DRAIN_GRACE_MS is destroyed: requests still being computed (a step in a worker, no
 * headers yet) and clients still reading are left to finish.
 */
function answeredResponseDrain(app: FastifyInstance) {
  const open = new Set<FastifyReply>();
  const progress = new WeakMap<FastifyReply, { bytes: number; at: number }>();
  let timer: NodeJS.Timeout | null = null;
  app.addHook("onRequest", async (_req, reply) => {
    open.add(reply);
    reply.raw.once("close", () => open.delete(reply));
  });
  const sweep = () => {
    const now = Date.now();
    for (const reply of open) {
      const socket = reply.raw.socket;
      if (!reply.raw.headersSent || socket === null) continue;
      const last = progress.get(reply);
      if (last === undefined || socket.bytesWritten !== last.bytes)
        progress.set(reply, { bytes: socket.bytesWritten, at: now });
      else if (now - last.at >= DRAIN_GRACE_MS) socket.destroy();
    }
  };
  return {
    start() {
      timer ??= setInterval(sweep, 100).unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}
