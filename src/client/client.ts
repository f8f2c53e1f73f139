/**
 * MoreauClient: a small typed client of the service's REST and WebSocket API (v1, the
 * table of /work/shared/DESIGN.md), for Node programs, the CLI and the tests. Types come
 * from the zod schemas of schemas/ (the wire format); with `validate: true` every answer is
 * also parsed with its schema, so a contract violation throws instead of passing silently.
 *
 *   const c = new MoreauClient("http://127.0.0.1:8080");
 *   const s = await c.createSession(model);
 *   const st = await c.step(s.id, { steps: 100 });
 *   const stream = c.stream(s.id, { every: 5 }, { onState: (f) => ... });
 *
 * The browser dashboard uses public/client.js, a plain-JS copy of this API (same method
 * names and semantics; test/client/alignment.test.ts keeps the two aligned).
 */
import type { z } from "zod";
import {
  type ErrorOut,
  Health,
  Readiness,
  RunAccepted,
  type RunRequest,
  Session,
  SessionList,
  type SessionOut,
  type SessionPatch,
} from "../../schemas/api";
import type { ModelInput } from "../../schemas/model";
import {
  type AssemblyOptionsIn,
  AssemblyResult,
  type AssemblyResultOut,
  State,
  type StateOut,
} from "../../schemas/state";
import { MoreauApiError, MoreauConnectionError } from "./errors";
import { SessionStream, type StreamHandlers, type StreamOptions } from "./stream";

export type HealthOut = z.infer<typeof Health>;
export type ReadinessOut = z.infer<typeof Readiness>;
export type RunAcceptedOut = z.infer<typeof RunAccepted>;
export type StepInput = { steps: number } | { duration: number };
export type RunInput = { realtimeFactor?: RunRequest["realtimeFactor"]; until?: number };
export type PatchInput = SessionPatch;
export type SessionAssemblyInput = AssemblyOptionsIn & { apply?: boolean };

export interface ClientOptions {
  /** fetch implementation (default: the global one) */
  fetch?: typeof fetch;
  /** headers sent with every request (and the WebSocket upgrade) */
  headers?: Record<string, string>;
  /** API key of a server with access control: sent as `Authorization: Bearer <key>` */
  apiKey?: string;
  /** time limit of one request (ms, default 60 s) */
  timeoutMs?: number;
  /** parse every answer with its zod schema (default false) */
  validate?: boolean;
}

interface Parser<T> {
  parse(x: unknown): T;
}

export class MoreauClient {
  /** base URL without a trailing slash, e.g. http://127.0.0.1:8080 */
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly validate: boolean;

  constructor(baseUrl: string | URL, options: ClientOptions = {}) {
    this.baseUrl = String(baseUrl).replace(/\/+$/, "");
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.validate = options.validate ?? false;
  }

  // ------------------------------------------------------------------ operations

  health(): Promise<HealthOut> {
    return this.request("GET", "/health", undefined, Health);
  }

  /** Readiness; a 503 answer (not ready) is returned, not thrown. */
  ready(): Promise<ReadinessOut> {
    return this.request("GET", "/ready", undefined, Readiness, [503]);
  }

  /** Prometheus text of GET /metrics. */
  async metrics(): Promise<string> {
    const res = await this.send("GET", "/metrics");
    return res.text();
  }

  // ------------------------------------------------------------------ sessions

  createSession(model: ModelInput | unknown): Promise<SessionOut> {
    return this.request("POST", "/v1/sessions", { model }, Session);
  }

  async listSessions(): Promise<SessionOut[]> {
    return (await this.request("GET", "/v1/sessions", undefined, SessionList)).sessions;
  }

  getSession(id: string): Promise<SessionOut> {
    return this.request("GET", this.path(id), undefined, Session);
  }

  getState(id: string): Promise<StateOut> {
    return this.request("GET", this.path(id, "/state"), undefined, State);
  }

  step(id: string, input: StepInput): Promise<StateOut> {
    return this.request("POST", this.path(id, "/step"), input, State);
  }

  run(id: string, input: RunInput = {}): Promise<RunAcceptedOut> {
    return this.request("POST", this.path(id, "/run"), input, RunAccepted);
  }

  pause(id: string): Promise<SessionOut> {
    return this.request("POST", this.path(id, "/pause"), undefined, Session);
  }

  reset(id: string): Promise<StateOut> {
    return this.request("POST", this.path(id, "/reset"), undefined, State);
  }

  patch(id: string, patch: PatchInput): Promise<SessionOut> {
    return this.request("PATCH", this.path(id), patch, Session);
  }

  async deleteSession(id: string): Promise<void> {
    await this.send("DELETE", this.path(id));
  }

  assembleSession(id: string, options: SessionAssemblyInput = {}): Promise<AssemblyResultOut> {
    return this.request("POST", this.path(id, "/assembly"), options, AssemblyResult);
  }

  /** Assembly analysis of a model; no session is kept. */
  assemble(
    model: ModelInput | unknown,
    options: AssemblyOptionsIn = {},
  ): Promise<AssemblyResultOut> {
    return this.request("POST", "/v1/assembly", { model, options }, AssemblyResult);
  }

  // ------------------------------------------------------------------ streaming

  /** ws:// or wss:// URL of a session's stream with its query. */
  streamUrl(id: string, options: Omit<StreamOptions, "reconnect"> = {}): string {
    const u = new URL(`${this.baseUrl}${this.path(id, "/stream")}`);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    if (options.every !== undefined) u.searchParams.set("every", String(options.every));
    if (options.fields !== undefined) u.searchParams.set("fields", options.fields.join(","));
    if (options.format !== undefined) u.searchParams.set("format", options.format);
    return u.toString();
  }

  /** Opens a session's stream (reconnecting unless `reconnect: false`). */
  stream(id: string, options: StreamOptions = {}, handlers: StreamHandlers = {}): SessionStream {
    return new SessionStream(
      this.streamUrl(id, options),
      options.format ?? "json",
      options.reconnect,
      handlers,
      this.headers,
    );
  }

  // ------------------------------------------------------------------ internals

  private path(id: string, suffix = ""): string {
    return `/v1/sessions/${encodeURIComponent(id)}${suffix}`;
  }

  private async request<T>(
    method: string,
    path: string,
    body: unknown,
    schema: Parser<T>,
    okStatuses: number[] = [],
  ): Promise<T> {
    const res = await this.send(method, path, body, okStatuses);
    const json: unknown = await res.json();
    return this.validate ? schema.parse(json) : (json as T);
  }

  private async send(
    method: string,
    path: string,
    body?: unknown,
    okStatuses: number[] = [],
  ): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json", ...this.headers };
    if (body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new MoreauConnectionError(
        `${method} ${this.baseUrl}${path}: ${(err as Error).message}`,
        err,
      );
    }
    if (res.ok || okStatuses.includes(res.status)) return res;
    const text = await res.text();
    let e: Partial<ErrorOut> = {};
    try {
      e = JSON.parse(text) as ErrorOut;
    } catch {
      e = { error: "http_error", message: text.slice(0, 500) };
    }
    throw new MoreauApiError(
      res.status,
      e.error ?? "http_error",
      e.message ?? `HTTP ${res.status}`,
      e.details,
      `${method} ${path}`,
    );
  }
}
