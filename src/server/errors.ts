/** Characters of a key or value the client sent that an error answer quotes (then "…"). */
export const MAX_ECHO_CHARS = 100;

/** A text cut at `max` characters with an ellipsis (never inside a surrogate pair). */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

/**
 * Service errors. Every error answer is JSON `{ error, message, details }` (schemas/api
 * ErrorBody) with one of these codes and HTTP statuses:
 *
 *   400 invalid_request / invalid_model  zod issues in details.issues ([{ path, message }],
 *                                        paths from the request body's root, e.g.
 *                                        ["model", "joints", 0, "a", "body"])
 *   401 unauthorized       API keys are set and the request has no valid
 *                          `Authorization: Bearer <key>`
 *   404 not_found          unknown session or route (or a session of another key)
 *   409 conflict           the session's status forbids the request (details.status)
 *   400 invalid_urdf       POST /v1/models/urdf: a malformed URDF or mesh file; details.issues
 *                          [{ path, element, line, file, message, code }] name each problem
 *   422 unsupported_urdf   POST /v1/models/urdf: URDF the model format cannot represent (a
 *                          collision mesh, a mimic joint, a planar joint), issues as above
 *   413 payload_too_large  request body over MAX_BODY_BYTES or model over MAX_BODIES (the
 *                          rest of an over-long body is read and discarded, up to
 *                          MAX_DRAIN_BYTES, so that the client reads the answer)
 *   415 unsupported_media_type  a body that is not application/json, or one sent compressed (Content-Encoding)
 *   422 diverged           the simulation went non-finite or blew up during the request
 *   429 too_many_sessions  MAX_SESSIONS or MAX_SESSIONS_PER_KEY reached
 *   421 misdirected_request  a Host header not in ALLOWED_HOSTS
 *   426 upgrade_required   a plain HTTP request (no WebSocket upgrade) to a stream route
 *   429 too_many_subscribers MAX_SUBSCRIBERS_PER_SESSION / _PER_KEY / MAX_SUBSCRIBERS streams
 *                          (details.limit names the variable)
 *   429 rate_limited       RATE_LIMIT_MAX requests in RATE_LIMIT_WINDOW_MS (per key), or
 *                          AUTH_FAILURE_MAX wrong keys in AUTH_FAILURE_WINDOW_MS (per address)
 *   500 solver_error / worker_crashed / internal
 *   503 shutting_down      the server is closing
 *   507 insufficient_memory  a new session's estimated memory fits no worker's
 *                          WORKER_SESSION_MEMORY_MB, or an input its recording would keep
 *                          takes its worker past it (details: limit, budgetBytes, ...)
 *   503 cluster_unavailable  REDIS_URL: the session lives on another node and Redis (which
 *                          says where) is unreachable, or no node could take it over yet
 *                          (Retry-After)
 *   503 worker_unavailable  no solver worker can take the request: the one it needs (its
 *                          session's, or any for a new session) failed to start and is
 *                          retried with back-off; the message names the cause (Retry-After);
 *                          in a cluster, too, a session no node holds while no node has a
 *                          worker running (cluster/node.ts)
 *   504 timeout            the request passed REQUEST_TIMEOUT_MS
 *
 * and, before any route sees the request (Node's HTTP parser; the connection is closed):
 *
 *   400 invalid_request    not parseable as HTTP/1.1 (details.parser: Node's code, e.g.
 *                          HPE_INVALID_METHOD: the bytes past a Content-Length shorter than
 *                          the body sent, read as the next request)
 *   408 request_timeout    headers not sent within HEADERS_TIMEOUT_MS, or the whole request
 *                          within RECEIVE_TIMEOUT_MS
 *   431 headers_too_large  headers over Node's --max-http-header-size (16 KiB)
 */
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ErrorOut } from "../../schemas/api";
import { issuesSummary } from "../../schemas/issues";

export interface Issue {
  path: (string | number)[];
  message: string;
  code?: string;
}

export type ErrorCode =
  | "invalid_request"
  | "invalid_model"
  | "unauthorized"
  | "not_found"
  | "conflict"
  | "invalid_urdf"
  | "unsupported_urdf"
  | "payload_too_large"
  | "unsupported_media_type"
  | "diverged"
  | "too_many_sessions"
  | "too_many_subscribers"
  | "misdirected_request"
  | "upgrade_required"
  | "rate_limited"
  | "solver_error"
  | "worker_crashed"
  | "internal"
  | "shutting_down"
  | "insufficient_memory"
  | "cluster_unavailable"
  | "worker_unavailable"
  | "timeout"
  | "request_timeout"
  | "headers_too_large";

const STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_model: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  invalid_urdf: 400,
  unsupported_urdf: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  diverged: 422,
  too_many_sessions: 429,
  too_many_subscribers: 429,
  misdirected_request: 421,
  upgrade_required: 426,
  rate_limited: 429,
  solver_error: 500,
  worker_crashed: 500,
  internal: 500,
  shutting_down: 503,
  insufficient_memory: 507,
  cluster_unavailable: 503,
  worker_unavailable: 503,
  timeout: 504,
  request_timeout: 408,
  headers_too_large: 431,
};

export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = "ApiError";
    this.statusCode = STATUS[code];
  }

  toJSON(): ErrorOut {
    return this.details === undefined
      ? { error: this.code, message: this.message }
      : { error: this.code, message: this.message, details: this.details };
  }
}

export const notFound = (id: string) =>
  new ApiError("not_found", `no session "${id}"`, { session: id });

export const conflict = (id: string, status: string, what: string) =>
  new ApiError("conflict", `session "${id}" is ${status}: ${what}`, { session: id, status });

/**
 * Request validation failure carrying zod's issues with their paths intact (fastify's own
 * validation errors flatten paths to strings). Produced by the validator compiler in app.ts.
 */
export class RequestValidationError extends Error {
  readonly statusCode = 400;
  constructor(
    readonly part: string,
    readonly issues: Issue[],
    /** the request body has a `model` member (so the issues under it are the model's) */
    readonly modelGiven = false,
  ) {
    super(`invalid ${part}: ${issuesSummary(issues, 3)}`);
    this.name = "RequestValidationError";
  }
}

/** A validation error is about the model when a model was given and every issue lies in it. */
export function validationApiError(err: RequestValidationError): ApiError {
  const aboutModel =
    err.part === "body" &&
    err.modelGiven &&
    err.issues.length > 0 &&
    err.issues.every((i) => i.path[0] === "model");
  return new ApiError(aboutModel ? "invalid_model" : "invalid_request", err.message, {
    part: err.part,
    issues: err.issues,
  });
}

/** Maps anything thrown in a route to the service's error body. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RequestValidationError) return validationApiError(err);
  const fe = err as Partial<FastifyError> & { message?: string };
  switch (fe.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("payload_too_large", fe.message ?? "request body too large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError(
        "unsupported_media_type",
        `${fe.message ?? "unsupported media type"}; send application/json`,
      );
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new ApiError("invalid_request", fe.message ?? "bad request body");
  }
  if (fe.statusCode === 413) return new ApiError("payload_too_large", fe.message ?? "too large");
  if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500)
    return new ApiError(
      fe.statusCode === 404 ? "not_found" : "invalid_request",
      fe.message ?? "bad request",
    );
  // JSON.parse failures in the body parser carry a SyntaxError
  if (err instanceof SyntaxError) return new ApiError("invalid_request", err.message);
  return new ApiError("internal", "internal server error");
}

/**
 * What Node's HTTP server reports on a connection (its `clientError`: a request its parser
 * refused, or one not received in time), answered in the service's format instead of
 * Fastify's default `{"error":"Bad Request","message":"Client Error"}`: the raw HTTP/1.1
 * text to write before closing the socket (no request or reply exists yet), or null when
 * nothing can be written (a reset connection).
 */
export function clientErrorAnswer(err: NodeJS.ErrnoException & { reason?: string }): string | null {
  if (err.code === "ECONNRESET") return null;
  const api =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new ApiError(
          "request_timeout",
          "the request was not received in time (HEADERS_TIMEOUT_MS for its headers, RECEIVE_TIMEOUT_MS for all of it); the connection is closed",
        )
      : err.code === "HPE_HEADER_OVERFLOW"
        ? new ApiError(
            "headers_too_large",
            "the request's headers exceed the server's limit (Node's max header size); the connection is closed",
          )
        : new ApiError(
            "invalid_request",
            `the request is not valid HTTP/1.1 (${err.code ?? "parse error"}: ${err.reason ?? err.message}): check its request line, its headers and that its Content-Length is the length of the body sent (the bytes past it are read as a next request); the connection is closed`,
            { parser: err.code ?? null },
          );
  const body = JSON.stringify(api.toJSON());
  return `HTTP/1.1 ${api.statusCode} ${STATUS_CODES[api.statusCode]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * A body refused as too large (Fastify stops reading it and answers with `Connection: close`)
 * would have its connection closed while the client is still sending, and most clients
 * (Node's fetch among them) then fail with EPIPE instead of reading the 413. Instead the
 * rest of the body is read and discarded, keeping the connection, up to `maxDrainBytes` in
 * all (beyond, or when Content-Length announces more, the connection is closed: bounded
 * work); RECEIVE_TIMEOUT_MS bounds how long it may take.
 */
export function drainRefusedBody(req: FastifyRequest, reply: FastifyReply, maxDrainBytes: number) {
  const raw = req.raw;
  if (raw.complete || raw.destroyed) return;
  const declared = Number(raw.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxDrainBytes) return;
  reply.removeHeader("connection");
  let seen = 0;
  raw.on("data", (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > maxDrainBytes) raw.socket?.destroy();
  });
  raw.resume();
}

export interface ErrorHandlerOptions {
  /** bytes of a refused (too large) body read and discarded before closing (0: none) */
  maxDrainBytes?: number;
  /** MAX_BODY_BYTES, named in the 413 of a body over it */
  maxBodyBytes?: number;
  /** MAX_MODEL_BYTES, the limit of the routes whose body goes to a worker (`bodyInWorker`) */
  maxModelBytes?: number;
}

/** Installs the JSON error handler and the 404 handler on the app. */
export function installErrorHandlers(app: FastifyInstance, opts: ErrorHandlerOptions = {}): void {
  const maxDrainBytes = opts.maxDrainBytes ?? 0;
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const tooLarge = (err as { code?: unknown } | null)?.code === "FST_ERR_CTP_BODY_TOO_LARGE";
    const [limit, max] = req.routeOptions.config?.bodyInWorker
      ? ["MAX_MODEL_BYTES", opts.maxModelBytes]
      : ["MAX_BODY_BYTES", opts.maxBodyBytes];
    const api =
      tooLarge && max !== undefined
        ? new ApiError("payload_too_large", `request body over ${max} bytes (${limit})`, {
            limit,
            max,
          })
        : toApiError(err);
    if (api.statusCode >= 500) req.log.error({ err }, api.message);
    // the reason as a field of its own: a "msg" field would be a second msg key on the line
    else req.log.info({ code: api.code, reason: api.message }, "request rejected");
    if (tooLarge && maxDrainBytes > 0) drainRefusedBody(req, reply, maxDrainBytes);
    // a refusal that passes (worker_unavailable, cluster_unavailable) says when to retry
    const retryAfterMs = (api.details as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
    if (typeof retryAfterMs === "number" && api.statusCode === 503)
      reply.header("retry-after", String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    reply.code(api.statusCode).type("application/json").send(JSON.stringify(api.toJSON()));
  });
  app.setNotFoundHandler((req, reply) => {
    reply
      .code(404)
      .type("application/json")
      .send(
        JSON.stringify(
          new ApiError("not_found", `no route ${req.method} ${req.url.split("?")[0]}`).toJSON(),
        ),
      );
  });
}
