/**
 * MoreauClient: a small typed client of the service's REST and WebSocket API (v1, the
 * table of /work/shared/DESIGN.md), for Node programs, the CLI, the tests and the browser.
 * Types come from the zod schemas of schemas/ (the wire format); with `validate: true` every
 * answer is also parsed with its schema (answers.ts), so a contract violation throws
 * instead of passing silently.
 *
 *   const c = new MoreauClient("http://127.0.0.1:8080");
 *   const s = await c.createSession(model);
 *   const st = await c.step(s.id, { steps: 100 });
 *   const stream = c.stream(s.id, { every: 5 }, { onState: (f) => ... });
 *
 * The browser dashboard uses this same code: the server serves its browser bundle at
 * /client.js (browser/bundle.ts), which takes the browser's WebSocket for `ws` and leaves
 * out the answer schemas (no `validate` there).
 */
import type { ErrorOut, RunRequest, SessionOut, SessionPatch } from "../../schemas/api";
import type { InputIn } from "../../schemas/input";
import type { ModelInput } from "../../schemas/model";
import type { AssemblyOptionsIn, AssemblyResultOut, StateOut } from "../../schemas/state";
import type { FileContent, UrdfImportOptionsIn } from "../../schemas/urdf";
import { type Answers, answerSchemas } from "./answers";
import { MoreauApiError, MoreauConnectionError } from "./errors";
import {
  SessionStream,
  type StreamConnection,
  type StreamHandlers,
  type StreamOptions,
} from "./stream";

export type HealthOut = Answers["health"];
export type ReadinessOut = Answers["readiness"];
export type RunAcceptedOut = Answers["runAccepted"];
export type InputsAcceptedOut = Answers["inputsAccepted"];
export type RecordingOut = Answers["recording"];
export type SnapshotOut = Answers["snapshot"];
export type StepInput = { steps: number } | { duration: number };
export type RunInput = { realtimeFactor?: RunRequest["realtimeFactor"]; until?: number };
export type PatchInput = SessionPatch;
export type SessionAssemblyInput = AssemblyOptionsIn & { apply?: boolean };
export type UrdfImportOut = Answers["urdfImport"];

export interface ClientOptions {
  /** fetch implementation (default: the global one) */
  fetch?: typeof fetch;
  /** headers sent with every request (and, from Node, the WebSocket upgrade) */
  headers?: Record<string, string>;
  /**
   * API key of a server with access control: sent as `Authorization: Bearer <key>`, and
   * offered on a stream's upgrade as the subprotocol `bearer.<base64url(key)>` too (a
   * browser cannot set headers on one: src/server/auth.ts)
   */
  apiKey?: string;
  /** time limit of one request (ms, default 60 s) */
  timeoutMs?: number;
  /** parse every answer with its zod schema (default false; not in the browser bundle) */
  validate?: boolean;
}

/** The subprotocol of the stream (the server selects it: src/server/auth.ts WS_PROTOCOL). */
const STREAM_PROTOCOL = "moreau";

/** The subprotocol that carries an API key on a WebSocket upgrade: bearer.<base64url(key)>. */
function bearerProtocol(key: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(key)) binary += String.fromCharCode(byte);
  return `bearer.${btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

export class MoreauClient {
  /** base URL without a trailing slash, e.g. http://127.0.0.1:8080 */
  readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly headers: Record<string, string>;
  /** the subprotocols a stream offers (with an API key: its bearer entry) */
  private readonly streamProtocols: string[] | undefined;
  private readonly timeoutMs: number;
  private readonly validate: boolean;

  constructor(baseUrl: string | URL, options: ClientOptions = {}) {
    this.baseUrl = String(baseUrl).replace(/\/+$/, "");
    // called unbound: a browser's fetch must be called on the global object
    this.fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
    this.streamProtocols = options.apiKey
      ? [STREAM_PROTOCOL, bearerProtocol(options.apiKey)]
      : undefined;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.validate = options.validate ?? false;
    if (this.validate && answerSchemas === null)
      throw new Error(
        "validate: true needs the answer schemas, which the browser bundle of the client leaves out",
      );
  }

  // ------------------------------------------------------------------ operations

  health(): Promise<HealthOut> {
    return this.request("GET", "/health", undefined, "health");
  }

  /** Readiness; a 503 answer (not ready) is returned, not thrown. */
  ready(): Promise<ReadinessOut> {
    return this.request("GET", "/ready", undefined, "readiness", [503]);
  }

  /** Prometheus text of GET /metrics. */
  async metrics(): Promise<string> {
    const res = await this.send("GET", "/metrics");
    return res.text();
  }

  // ------------------------------------------------------------------ sessions

  createSession(model: ModelInput | unknown): Promise<SessionOut> {
    return this.request("POST", "/v1/sessions", { model }, "session");
  }

  async listSessions(): Promise<SessionOut[]> {
    return (await this.request("GET", "/v1/sessions", undefined, "sessionList")).sessions;
  }

  getSession(id: string): Promise<SessionOut> {
    return this.request("GET", this.path(id), undefined, "session");
  }

  getState(id: string): Promise<StateOut> {
    return this.request("GET", this.path(id, "/state"), undefined, "state");
  }

  step(id: string, input: StepInput): Promise<StateOut> {
    return this.request("POST", this.path(id, "/step"), input, "state");
  }

  run(id: string, input: RunInput = {}): Promise<RunAcceptedOut> {
    return this.request("POST", this.path(id, "/run"), input, "runAccepted");
  }

  pause(id: string): Promise<SessionOut> {
    return this.request("POST", this.path(id, "/pause"), undefined, "session");
  }

  reset(id: string): Promise<StateOut> {
    return this.request("POST", this.path(id, "/reset"), undefined, "state");
  }

  patch(id: string, patch: PatchInput): Promise<SessionOut> {
    return this.request("PATCH", this.path(id), patch, "session");
  }

  async deleteSession(id: string): Promise<void> {
    await this.send("DELETE", this.path(id));
  }

  /** Run-time inputs at the next step boundary, or at step boundary `step`. */
  sendInputs(id: string, inputs: InputIn[], step?: number): Promise<InputsAcceptedOut> {
    return this.request("POST", this.path(id, "/inputs"), { inputs, step }, "inputsAccepted");
  }

  /** The session's recording; `every`: with its states replayed every `every` steps. */
  getRecording(id: string, every?: number): Promise<RecordingOut> {
    const query = every === undefined ? "" : `?every=${every}`;
    return this.request("GET", this.path(id, `/recording${query}`), undefined, "recording");
  }

  /** The session document (a checkpoint of the session, to create a session from). */
  getSnapshot(id: string): Promise<SnapshotOut> {
    return this.request("GET", this.path(id, "/snapshot"), undefined, "snapshot");
  }

  /** A new session copied from this one at its current step. */
  forkSession(id: string): Promise<SessionOut> {
    return this.request("POST", this.path(id, "/fork"), undefined, "session");
  }

  assembleSession(id: string, options: SessionAssemblyInput = {}): Promise<AssemblyResultOut> {
    return this.request("POST", this.path(id, "/assembly"), options, "assemblyResult");
  }

  /** Assembly analysis of a model; no session is kept. */
  assemble(
    model: ModelInput | unknown,
    options: AssemblyOptionsIn = {},
  ): Promise<AssemblyResultOut> {
    return this.request("POST", "/v1/assembly", { model, options }, "assemblyResult");
  }

  /**
   * A URDF robot (and the mesh files it references, by name: base64 or text) converted into
   * a model; nothing is kept. Refusals throw MoreauApiError (400 invalid_urdf, 422
   * unsupported_urdf, 413) with the issues naming the element and line, or the file.
   */
  importUrdf(
    urdf: string,
    files: Record<string, FileContent> = {},
    options: UrdfImportOptionsIn = {},
  ): Promise<UrdfImportOut> {
    return this.request("POST", "/v1/models/urdf", { urdf, files, options }, "urdfImport");
  }

  // ------------------------------------------------------------------ streaming

  /** ws:// or wss:// URL of a session's stream with its query. */
  streamUrl(id: string, options: Omit<StreamOptions, "reconnect"> = {}): string {
    const u = new URL(`${this.baseUrl}${this.path(id, "/stream")}`);
    u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
    if (options.every !== undefined) u.searchParams.set("every", String(options.every));
    if (options.fields !== undefined) u.searchParams.set("fields", options.fields.join(","));
    if (options.format !== undefined) u.searchParams.set("format", options.format);
    if (options.maxFps !== undefined) u.searchParams.set("maxFps", String(options.maxFps));
    return u.toString();
  }

  /** Opens a session's stream (reconnecting unless `reconnect: false`). */
  stream(id: string, options: StreamOptions = {}, handlers: StreamHandlers = {}): SessionStream {
    const connection: StreamConnection = {
      headers: this.headers,
      protocols: this.streamProtocols,
      // gone only on a 404 (a connection failure or another error: retry)
      sessionExists: () =>
        this.getSession(id).then(
          () => true,
          (err: unknown) => !(err instanceof MoreauApiError && err.status === 404),
        ),
    };
    return new SessionStream(
      this.streamUrl(id, options),
      options.format ?? "json",
      options.reconnect,
      handlers,
      connection,
    );
  }

  // ------------------------------------------------------------------ internals

  private path(id: string, suffix = ""): string {
    return `/v1/sessions/${encodeURIComponent(id)}${suffix}`;
  }

  /** A request whose answer is JSON of the kind `answer` (parsed with its schema when validating). */
  private async request<K extends keyof Answers>(
    method: string,
    path: string,
    body: unknown,
    answer: K,
    okStatuses: number[] = [],
  ): Promise<Answers[K]> {
    const res = await this.send(method, path, body, okStatuses);
    const json: unknown = await res.json();
    return this.validate && answerSchemas
      ? answerSchemas[answer].parse(json)
      : (json as Answers[K]);
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
