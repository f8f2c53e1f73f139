/**
 * Access control with API keys (API_KEY / API_KEYS). When keys are configured, every
 * request but GET /health, GET /ready and the routes marked `config: { public: true }`
 * (the dashboard's page and assets, which hold no data) must carry
 * `Authorization: Bearer <key>`; otherwise it is answered 401 `unauthorized` with
 * `WWW-Authenticate: Bearer`. WebSocket upgrades pass the same onRequest hook before any
 * upgrade; since a browser cannot set headers on one, an upgrade may instead carry the key
 * as the subprotocol `bearer.<base64url(key)>` next to `moreau`
 * (`new WebSocket(url, ["moreau", "bearer." + base64url(key)])`), the server selecting
 * `moreau` (never echoing the key). The request's `owner` is then the key's id: the first 16 hex
 * digits of its sha256, which is what sessions, checkpoints and logs keep (never the key).
 * Keys are compared through their digests with timingSafeEqual, so the comparison time does
 * not depend on how much of a guess is right. Without keys `owner` is null and every
 * session is everyone's.
 *
 * Guessing is rate-limited per client address (req.ip: the peer's address, a proxy's when
 * behind one): each request with a wrong key counts, and an address that has sent
 * AUTH_FAILURE_MAX of them within AUTH_FAILURE_WINDOW_MS is answered 429 `rate_limited`
 * (Retry-After) before its key is even looked at, until that window ends. A missing or
 * malformed Authorization header is no guess and does not count.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "./errors";

declare module "fastify" {
  interface FastifyRequest {
    /** Id of the API key the request authenticated with, or null without access control. */
    owner: string | null;
  }
}

declare module "fastify" {
  interface FastifyContextConfig {
    /** Served without a key when access control is on (no data behind the route). */
    public?: boolean;
  }
}

/** Paths served without a key (liveness and readiness probes). */
export const PUBLIC_PATHS: ReadonlySet<string> = new Set(["/health", "/ready"]);

/** The WebSocket subprotocol of the stream; the server selects it when offered. */
export const WS_PROTOCOL = "moreau";
const BEARER_PROTOCOL = "bearer.";

/** The subprotocol entry that carries a key on a WebSocket upgrade (browsers). */
export function bearerProtocol(key: string): string {
  return BEARER_PROTOCOL + Buffer.from(key, "utf8").toString("base64url");
}

/** The key of a `bearer.<base64url>` entry of Sec-WebSocket-Protocol, or null. */
function keyFromProtocols(header: string | undefined): string | null {
  if (header === undefined) return null;
  for (const entry of header.split(",")) {
    const p = entry.trim();
    if (p.startsWith(BEARER_PROTOCOL))
      return Buffer.from(p.slice(BEARER_PROTOCOL.length), "base64url").toString("utf8");
  }
  return null;
}

export function keyId(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex").slice(0, 16);
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

export function pathOf(req: FastifyRequest): string {
  const url = req.raw.url ?? req.url;
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Failed key checks per client address in fixed windows: `blocked` says for how long an
 * address that reached `max` failures must wait. Memory is bounded: expired windows are
 * swept when the table grows, and past `capacity` addresses the oldest entries go.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    readonly max: number,
    readonly windowMs: number,
    private readonly capacity = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** ms until `address` may try again, or 0 when it may now. */
  blocked(address: string): number {
    if (this.max <= 0) return 0;
    const w = this.windows.get(address);
    if (w === undefined) return 0;
    const left = w.resetAt - this.now();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return w.count >= this.max ? left : 0;
  }

  fail(address: string): void {
    if (this.max <= 0) return;
    const now = this.now();
    let w = this.windows.get(address);
    if (w === undefined || w.resetAt <= now) {
      if (w !== undefined) this.windows.delete(address);
      if (this.windows.size >= this.capacity) this.sweep(now);
      w = { count: 0, resetAt: now + this.windowMs };
      this.windows.set(address, w);
    }
    w.count++;
  }

  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    for (const [a, w] of this.windows) if (w.resetAt <= now) this.windows.delete(a);
    // still full: the oldest windows (insertion order) go
    for (const a of this.windows.keys()) {
      if (this.windows.size < this.capacity) break;
      this.windows.delete(a);
    }
  }
}

export interface AuthOptions {
  /** wrong keys per address per window before 429 (0: no limit) */
  failureMax?: number;
  failureWindowMs?: number;
}

/** Installs the key check (no-op without keys) and the `owner` request property. */
export function installAuth(
  app: FastifyInstance,
  keys: readonly string[],
  opts: AuthOptions = {},
): void {
  app.decorateRequest("owner", null);
  if (keys.length === 0) return;
  const known = keys.map((k) => ({ digest: digest(k), id: keyId(k) }));
  const failures = new FailureLimiter(opts.failureMax ?? 0, opts.failureWindowMs ?? 60_000);
  app.addHook("onRequest", async (req, reply) => {
    if (PUBLIC_PATHS.has(pathOf(req)) || req.routeOptions.config?.public === true) return;
    const header = req.headers.authorization;
    const m = typeof header === "string" ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
    const wsKey =
      header === undefined && req.raw.headers.upgrade !== undefined
        ? keyFromProtocols(req.headers["sec-websocket-protocol"])
        : null;
    const key = m?.[1] ?? wsKey;
    if (key == null) {
      reply.header("www-authenticate", 'Bearer realm="moreau"');
      throw new ApiError(
        "unauthorized",
        header === undefined
          ? "this server needs an API key: send Authorization: Bearer <key> (a browser's WebSocket: the subprotocol bearer.<base64url(key)>)"
          : "malformed Authorization header: expected Bearer <key>",
      );
    }
    const wait = failures.blocked(req.ip);
    if (wait > 0) {
      const s = Math.ceil(wait / 1000);
      reply.header("retry-after", String(s));
      throw new ApiError(
        "rate_limited",
        `too many wrong API keys from this address (AUTH_FAILURE_MAX ${failures.max} per ${failures.windowMs} ms); retry in ${s} s`,
        { limit: "AUTH_FAILURE_MAX", max: failures.max, retryAfterMs: Math.ceil(wait) },
      );
    }
    const d = digest(key);
    let id: string | null = null;
    for (const k of known) if (timingSafeEqual(d, k.digest)) id = k.id;
    if (id === null) {
      failures.fail(req.ip);
      reply.header("www-authenticate", 'Bearer realm="moreau", error="invalid_token"');
      throw new ApiError("unauthorized", "unknown API key");
    }
    req.owner = id;
  });
}
