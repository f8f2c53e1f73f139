/**
 * buildApp(config): the Fastify 5 application — zod validation (with zod's issue paths in
 * 400 answers), OpenAPI at /docs, pino logs with request ids (x-request-id honoured and
 * echoed), one plugin per resource from routes/, the session manager and its worker pool
 * (started by app.ready()), and graceful close: app.close() refuses new sessions and
 * upgrades, closes streams with 1001, stops runs, lets in-flight requests finish, then
 * stops the workers (checkpointing every session first when DATA_DIR is set).
 * Access control (API_KEY / API_KEYS, src/server/auth.ts) is an onRequest hook installed
 * before every route; the per-key rate limit (@fastify/rate-limit, RATE_LIMIT_MAX per
 * RATE_LIMIT_WINDOW_MS) applies when keys are set, to every route but /health and /ready
 * (WebSocket upgrades included: they pass the same hooks; each command sent on a stream is
 * counted by routes/stream.ts through the plugin's createRateLimit, the same counter), and
 * wrong keys are limited per client address (AUTH_FAILURE_MAX, auth.ts).
 *
 * Hardening (hooks installed before every route):
 * - security headers on every answer (onSend: securityHeaders below; router errors too);
 * - ALLOWED_HOSTS: a Host header outside the list is answered 421 (/health and /ready
 *   answer any Host: probes reach them by address), first of the onRequest checks;
 * - CORS_ORIGINS: CORS for the listed origins (off by default; corsHook below), preflights
 *   answered before access control (a browser sends no key on them);
 * - connections: HEADERS_TIMEOUT_MS, RECEIVE_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS,
 *   CONNECTION_TIMEOUT_MS and MAX_CONNECTIONS (server options, see installConnectionLimits);
 * - a body over MAX_BODY_BYTES is drained (up to MAX_DRAIN_BYTES) so the client reads its 413.
 *
 * Cluster (REDIS_URL, src/server/cluster/): the node's onRequest hook forwards what another
 * node owns (after access control and the rate limit, which counts in Redis then), it joins
 * the cluster once listening, and a close drains it first (its sessions handed over).
 *
 * Tests: `const app = await buildApp({ workers: 1, logLevel: "silent" }); await app.ready();
 * supertest(app.server)...; await app.close()`.
 */
import { randomUUID } from "node:crypto";
import type { Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import rateLimit from "@fastify/rate-limit";
import websocket from "@fastify/websocket";
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifySchemaCompiler,
} from "fastify";
import { serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { z } from "zod";
import assemblyRoutes from "../../routes/assembly";
import docsRoutes from "../../routes/docs";
import healthRoutes from "../../routes/health";
import metricsRoutes from "../../routes/metrics";
import modelRoutes from "../../routes/models";
import sessionRoutes from "../../routes/sessions";
import streamRoutes from "../../routes/stream";
import { installAuth, PUBLIC_PATHS, pathOf, WS_PROTOCOL } from "./auth";
import { registerClientBundle } from "./client-bundle";
import { ClusterNode, type ClusterPorts } from "./cluster/node";
import { redisPorts } from "./cluster/setup";
import { type Config, type ConfigInput, resolveConfig } from "./config";
import type { MoreauContext } from "./context";
import { ApiError, clientErrorAnswer, installErrorHandlers, toApiError } from "./errors";
import { noSessionsByStatus, ServerMetrics } from "./metrics";
import { JsonText, parseJsonBody, refuseContentCoding, validatePart } from "./request-body";
import { SessionManager } from "./session-manager";
import { STREAM_MAX_MESSAGE_BYTES, StreamSocket } from "./stream";

/**
 * The body of a request sent without one. Fastify validates a missing body as null, which
 * would refuse it even where the body schema has a default (`POST /run`: real time;
 * `POST /assembly` of a session: the default options): the preValidation hook of buildApp
 * puts this in its place, validated as undefined. A JSON `null` body stays null.
 */
const NO_BODY: unique symbol = Symbol("no body");

/**
 * Validates a request part with its zod schema, keeping zod's issue paths; a JsonText body
 * (a model-carrying route's, see request-body.ts) is validated by the worker instead.
 */
const validatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) =>
    data instanceof JsonText
      ? { value: data }
      : validatePart(schema, data === NO_BODY ? undefined : data, httpPart ?? "body");

export interface BuildOptions {
  /**
   * The cluster's ports, for a node on other adapters than REDIS_URL's (the in-process
   * ones of src/server/cluster/memory.ts: tests of several nodes in one process)
   */
  cluster?: ClusterPorts;
}

export async function buildApp(input: ConfigInput | Config = {}, options: BuildOptions = {}) {
  const config = resolveConfig(input);
  const app = Fastify({
    logger: { level: config.logLevel },
    // no time limit on start-up: the onReady hook starts the solver workers and restores
    // every session from its checkpoint (DATA_DIR), which takes as long as there are
    // sessions to restore and the machine allows; Fastify's default 10 s made a node started
    // on a loaded machine (load 18 on 2 cores, test/cluster) exit with "A callback for
    // 'onReady' hook timed out", as would a server with more checkpoints than it restores
    // in 10 s. A start that hangs shows in /health and /ready, which it never answers
    pluginTimeout: 0,
    bodyLimit: config.maxBodyBytes,
    // a client has HEADERS_TIMEOUT_MS to send its headers and RECEIVE_TIMEOUT_MS its whole
    // request (Node answers 408 and closes); Node checks them every connectionsCheckingInterval
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.receiveTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(config),
    },
    requestTimeout: config.receiveTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    requestIdHeader: "x-request-id",
    genReqId: () => randomUUID(),
    return503OnClosing: true,
    // what Node's parser refuses (a Content-Length shorter than the body sent makes the rest
    // a malformed next request) and requests not received in time, in the service's format
    clientErrorHandler(err, socket) {
      // nothing written into an answer already under way on the connection (as Node's own
      // handler: its headers sent, another status line would corrupt it)
      const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })
        ._httpMessage;
      const answer = socket.destroyed || current?.headersSent ? null : clientErrorAnswer(err);
      if (answer !== null && socket.writable) socket.write(answer);
      socket.destroy(err);
    },
    // router errors (bad URL encoding, over-long path parameters) in the service's format
    frameworkErrors: (err, _req, reply) => {
      const api = toApiError(err);
      const raw = reply as unknown as FastifyReply;
      setSecurityHeaders(raw, false);
      raw.code(api.statusCode).type("application/json").send(JSON.stringify(api.toJSON()));
    },
  }).withTypeProvider<ZodTypeProvider>();
  // bodies are JSON only: text/plain (parsed by default) is refused with 415 like any other type
  app.removeContentTypeParser("text/plain");
  // JSON: the bodies of routes flagged `config: { bodyInWorker: true }` (a model, a snapshot
  // or a recording: megabytes) go to a worker as bytes, parsed and validated there; the
  // others are parsed here (request-body.ts: nesting bound, prototype-poisoning checks)
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, body, done) => {
    const bytes = body as Buffer;
    if (req.routeOptions.config?.bodyInWorker === true) {
      done(null, new JsonText(bytes));
      return;
    }
    try {
      done(null, parseJsonBody(bytes.toString("utf8")));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // a compressed body is refused before it is read (request-body.ts refuseContentCoding)
  app.addHook("preParsing", async (req, reply, payload) => {
    try {
      refuseContentCoding(req.headers);
    } catch (err) {
      reply.header("accept-encoding", "identity");
      throw err;
    }
    return payload;
  });

  app.setValidatorCompiler(validatorCompiler);
  app.addHook("preValidation", async (req) => {
    if (req.body === undefined && req.routeOptions.schema?.body !== undefined) req.body = NO_BODY;
  });
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandlers(app, {
    maxDrainBytes: config.maxDrainBytes,
    maxBodyBytes: config.maxBodyBytes,
    maxModelBytes: config.maxModelBytes,
  });

  let sessions: SessionManager | null = null;
  const metrics = new ServerMetrics({
    sessionsByStatus: () => sessions?.byStatus() ?? noSessionsByStatus(),
    wsClients: () => sessions?.streams.clients ?? 0,
    workersAlive: () => sessions?.pool.alive ?? 0,
  });
  const redis = config.redisUrl && !options.cluster ? await redisPorts(config, app.log) : null;
  const ports = options.cluster ?? redis?.ports ?? null;
  sessions = new SessionManager(config, metrics, app.log, ports ? { store: ports.snapshots } : {});
  const cluster = ports
    ? new ClusterNode(config, app.log, sessions, sessions.streams, ports, metrics)
    : null;
  if (cluster) sessions.attachCluster(cluster);
  const ctx: MoreauContext = { config, sessions, metrics, cluster, startedAt: process.uptime() };
  app.decorate("moreau", ctx);

  installConnectionLimits(app, config);
  // An upgrade refused by an onRequest hook (host, CORS, key, rate limit) never reaches
  // @fastify/websocket's own onRequest hook, whose onResponse would end the socket: end it
  // once the refusal is written.
  app.addHook("onResponse", async (req) => {
    if (req.raw.headers.upgrade !== undefined && (req as { ws?: boolean }).ws !== true)
      req.raw.socket?.destroy();
  });
  app.addHook("onRequest", async (req, reply) => {
    reply.header("x-request-id", req.id);
  });
  app.addHook("onSend", securityHeaders);
  if (config.allowedHosts.length > 0) app.addHook("onRequest", hostCheck(config.allowedHosts));
  if (config.corsOrigins.length > 0) app.addHook("onRequest", corsHook(config.corsOrigins));
  installAuth(app, config.apiKeys, {
    failureMax: config.authFailureMax,
    failureWindowMs: config.authFailureWindowMs,
  });
  if (config.apiKeys.length > 0 && config.rateLimitMax > 0)
    await app.register(rateLimit, {
      global: true,
      max: config.rateLimitMax,
      timeWindow: config.rateLimitWindowMs,
      // per API key (the auth hook has run: req.owner is set)
      keyGenerator: (req) => req.owner ?? req.ip,
      // a cluster counts in Redis: the limit holds across nodes (and while Redis is
      // unreachable requests pass, so that the node keeps serving its own sessions)
      ...(redis
        ? { redis: redis.redis, nameSpace: `${config.clusterPrefix}rate:`, skipOnError: true }
        : {}),
      // a request another node forwarded was counted there
      allowList: (req) => PUBLIC_PATHS.has(pathOf(req)) || cluster?.isForwarded(req) === true,
      errorResponseBuilder: (_req, ctx) =>
        new ApiError(
          "rate_limited",
          `rate limit of ${ctx.max} requests per ${ctx.after} reached for this API key (RATE_LIMIT_MAX); retry in ${Math.ceil(ctx.ttl / 1000)} s`,
          { limit: ctx.max, retryAfterMs: ctx.ttl },
        ),
    });
  if (cluster) {
    // the sessions' routes, after their own and the rate limit's onRequest hooks (added to
    // each route as it is declared): a request is counted once, on the node it reached
    app.addHook("onRoute", (route) => {
      if (!route.url.startsWith("/v1/sessions")) return;
      const hook = (req: FastifyRequest, reply: FastifyReply) => cluster.route(req, reply);
      const own = route.onRequest;
      route.onRequest = own === undefined ? [hook] : [...(Array.isArray(own) ? own : [own]), hook];
    });
    app.addHook("onListen", async () => {
      const address = app.server.address();
      cluster.start(typeof address === "object" && address ? address.port : config.port);
    });
  }
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
    // a cluster node hands its sessions over first
    await cluster?.drain();
    await manager.beginClose();
  });
  // after in-flight requests are answered: stop the workers
  app.addHook("onClose", async () => {
    drain.stop();
    await manager.close();
    await cluster?.stop();
    metrics.close();
  });

  await app.register(docsRoutes);
  await app.register(websocket, {
    // the stream's subprotocol when the client offers it (a browser sending its key as
    // a `bearer.` subprotocol must be answered with one it offered: auth.ts)
    options: {
      maxPayload: STREAM_MAX_MESSAGE_BYTES,
      // closes a socket over it with a reason naming the bound (the option's type asks for
      // the ws module's own statics too, which the subclass inherits but does not list)
      WebSocket: StreamSocket as never,
      handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
    },
    // streams are closed by the session manager with 1001 in its own preClose
    preClose: (done) => done(),
  });
  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  await app.register(sessionRoutes);
  await app.register(assemblyRoutes);
  await app.register(modelRoutes);
  await app.register(streamRoutes);
  // the dashboard page at GET / and its assets (routes/dashboard.ts)
  await app.register((await import("../../routes/dashboard")).default);
  // its API client at /client.js: the browser bundle of src/client (client-bundle.ts)
  registerClientBundle(app);
  return app;
}

export type MoreauApp = Awaited<ReturnType<typeof buildApp>>;

/** How often Node looks for requests past HEADERS_TIMEOUT_MS / RECEIVE_TIMEOUT_MS. */
function checkingIntervalMs(config: Config): number {
  return Math.min(5000, Math.max(25, Math.floor(config.headersTimeoutMs / 4)));
}

/**
 * MAX_CONNECTIONS (Node closes a connection over it at once) and CONNECTION_TIMEOUT_MS:
 * a connection on which no byte has moved for that long is destroyed, unless its request
 * has been received whole and its answer is still being computed (a long step: its own
 * deadline, REQUEST_TIMEOUT_MS, bounds it). Upgraded WebSockets have their own heartbeat
 * (ws turns the socket timeout off).
 */
function installConnectionLimits(app: FastifyInstance, config: Config): void {
  const server: Server = app.server;
  if (config.maxConnections > 0) server.maxConnections = config.maxConnections;
  if (config.connectionTimeoutMs <= 0) return;
  /** the answer in progress on each socket */
  const current = new WeakMap<Socket, { res: ServerResponse; complete: () => boolean }>();
  app.addHook("onRequest", async (req, reply) => {
    const socket = req.raw.socket as Socket | null;
    if (socket) current.set(socket, { res: reply.raw, complete: () => req.raw.complete });
  });
  // a 'timeout' listener takes over Node's default (destroy) for every socket timeout,
  // keep-alive ones included
  server.on("timeout", (socket: Socket) => {
    const c = current.get(socket);
    const computing = c?.complete() && !c.res.headersSent && !c.res.writableEnded;
    if (!computing) socket.destroy();
  });
}

/**
 * Headers on every answer: no MIME sniffing, no framing (X-Frame-Options and CSP
 * frame-ancestors), no Referer, same-origin resource and opener policies. HTML pages (the
 * dashboard, Swagger UI) get a CSP that leaves their own scripts alone (base-uri,
 * object-src, form-action, frame-ancestors); every other answer, data only, `default-src
 * 'none'`. No HSTS: the server speaks plain HTTP (TLS ends at a proxy, which sets it).
 */
async function securityHeaders(_req: FastifyRequest, reply: FastifyReply, payload: unknown) {
  setSecurityHeaders(reply, String(reply.getHeader("content-type") ?? "").startsWith("text/html"));
  return payload;
}

function setSecurityHeaders(reply: FastifyReply, html: boolean): void {
  reply.header("x-content-type-options", "nosniff");
  reply.header("x-frame-options", "DENY");
  reply.header("referrer-policy", "no-referrer");
  reply.header("cross-origin-resource-policy", "same-origin");
  reply.header("cross-origin-opener-policy", "same-origin");
  reply.header("x-permitted-cross-domain-policies", "none");
  reply.header(
    "content-security-policy",
    html
      ? "base-uri 'self'; object-src 'none'; form-action 'self'; frame-ancestors 'none'"
      : "default-src 'none'; frame-ancestors 'none'",
  );
}

/** The Host header's name and port, lower-case ("example.com", "8080"), or null. */
function splitHost(host: string): { name: string; port: string | null } | null {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  return m ? { name: m[1], port: m[2] ?? null } : null;
}

/** ALLOWED_HOSTS entries: `name`, `name:port`, `*.domain` (any subdomain), `[v6]:port`. */
export function hostAllowed(host: string | undefined, allowed: readonly string[]): boolean {
  if (host === undefined) return false;
  const h = splitHost(host);
  if (h === null) return false;
  return allowed.some((entry) => {
    const e = splitHost(entry);
    if (e === null) return false;
    if (e.port !== null && e.port !== h.port) return false;
    if (e.name.startsWith("*.")) return h.name.endsWith(e.name.slice(1));
    return e.name === h.name;
  });
}

function hostCheck(allowed: readonly string[]) {
  return async (req: FastifyRequest) => {
    if (PUBLIC_PATHS.has(pathOf(req))) return;
    const host = req.headers.host;
    if (!hostAllowed(host, allowed))
      throw new ApiError(
        "misdirected_request",
        `this server does not answer for host "${host ?? ""}" (ALLOWED_HOSTS)`,
        { host: host ?? null },
      );
  };
}

const CORS_METHODS = "GET, POST, PATCH, DELETE, OPTIONS";
const CORS_HEADERS = "authorization, content-type, x-request-id";
const CORS_EXPOSED =
  "x-request-id, retry-after, www-authenticate, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset";

/**
 * CORS for CORS_ORIGINS ("*": any origin). An allowed Origin gets
 * Access-Control-Allow-Origin (the origin itself, with Vary: Origin) on every answer,
 * errors included; a preflight (OPTIONS with Access-Control-Request-Method) from it is
 * answered 204 here, before access control (browsers send no key on preflights). Keys
 * travel in the Authorization header, never in cookies: no Allow-Credentials. Other
 * origins get no CORS header (the browser then refuses to share the answer); a preflight
 * from them is answered 204 without any, so it fails.
 */
function corsHook(origins: readonly string[]) {
  const any = origins.includes("*");
  const allowed = new Set(origins);
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const origin = req.headers.origin;
    const preflight =
      req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
    reply.header("vary", "Origin");
    const ok = typeof origin === "string" && (any || allowed.has(origin.toLowerCase()));
    if (ok) {
      reply.header("access-control-allow-origin", origin);
      reply.header("access-control-expose-headers", CORS_EXPOSED);
    }
    if (!preflight) return;
    if (ok) {
      reply.header("access-control-allow-methods", CORS_METHODS);
      reply.header("access-control-allow-headers", CORS_HEADERS);
      reply.header("access-control-max-age", "600");
    }
    return reply.code(204).send();
  };
}

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
