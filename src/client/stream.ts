/**
 * SessionStream: a session's WebSocket stream (GET /v1/sessions/:id/stream) that reconnects
 * when it drops.
 *
 * Every (re)connection starts with a `scene` frame, then `state` frames (schemas/api
 * SceneFrame, StateFrame): JSON text frames, or msgpack binary frames with
 * `format: "msgpack"`. Reconnection policy:
 * - closed by close(): never reconnects;
 * - closed by the server with 1000 (the session was deleted) or refused with 4xx (unknown
 *   session, bad query): the stream ends (`closed`);
 * - anything else (network drop, 1001 shutdown, 1006, a 5xx refusal, a server not up yet):
 *   reconnects after a delay doubling from `initialDelayMs` to `maxDelayMs`, reset by every
 *   connection that opens, until `maxAttempts` consecutive failures (default unlimited).
 * After a reconnect the frames continue from the session's current step (the `scene` frame
 * is sent again); frames produced while disconnected are not replayed.
 *
 * Commands (the stream's `inputs` and `step` messages, README Streaming): sendInputs and
 * step send one on the open connection, as JSON text whatever the format (the server reads
 * both; no msgpack encoder in the browser bundle), tagged with a ref of their own, and
 * resolve with its answer (`{ step, pending }`; `{ step, time, keptStep }` after the frames
 * of the steps taken), or reject with a MoreauApiError (status 0: a socket's error answer
 * has none; its code, message and details as REST's) — a controller's inputs and steps on
 * the socket it reads its observations from. A command sent while the stream is not open,
 * or still awaiting its answer when the connection closes, rejects with a
 * MoreauConnectionError: the server drops the commands still queued on a closed socket (the
 * one running finishes), so one may or may not have been carried out.
 *
 * One code for Node and the browser: the socket is driven through the WHATWG WebSocket
 * interface (onopen, onmessage, onclose, onerror, binaryType), which the `ws` package also
 * implements; the browser bundle of the client substitutes the browser's own WebSocket for
 * `ws` (src/client/browser/). Where they differ:
 * - authentication: `ws` sends the client's headers (Authorization) with the upgrade; a
 *   browser cannot, and offers the key as the subprotocol `bearer.<base64url(key)>` instead
 *   (src/server/auth.ts);
 * - a refused upgrade: `ws` reports the HTTP status (`unexpected-response`); a browser
 *   hides it, so a connection that never opened asks `sessionExists` (GET
 *   /v1/sessions/:id) and ends when the session is gone.
 */
import { unpack } from "msgpackr/unpack";
import { WebSocket } from "ws";
import type { SceneFrameOut, StateFrameOut, StreamField } from "../../schemas/api";
import type { InputIn } from "../../schemas/input";
import { MoreauApiError, MoreauConnectionError } from "./errors";

export type StreamStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface StreamOptions {
  /** a frame at every step divisible by it (default 1) */
  every?: number;
  /** members of the state frames (default bodies, contacts, joints, actuators, observation, energy) */
  fields?: StreamField[];
  format?: "json" | "msgpack";
  /** frames per second of wall time at most (default the server's STREAM_FPS, up to STREAM_MAX_FPS) */
  maxFps?: number;
  /** false: no reconnection; or the backoff parameters */
  reconnect?: boolean | { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
}

export interface StreamHandlers {
  onScene?(frame: SceneFrameOut): void;
  onState?(frame: StateFrameOut): void;
  onStatus?(status: StreamStatus, info: { code?: number; reason?: string; attempt: number }): void;
  onError?(err: Error): void;
}

/** How a stream connects (MoreauClient fills it in). */
export interface StreamConnection {
  /** headers of the upgrade request (sent by `ws`; a browser cannot send them) */
  headers?: Record<string, string>;
  /** WebSocket subprotocols to offer (the API key's: MoreauClient) */
  protocols?: string[];
  /**
   * Whether the session still exists (false: it is gone, the stream ends), asked when a
   * connection never opened and the refusal's HTTP status is unknown (a browser).
   */
  sessionExists?: () => Promise<boolean>;
}

/** The answer of an `inputs` command: the step boundary they act at, the inputs then pending. */
export interface InputsAnswer {
  step: number;
  pending: number;
}

/** The answer of a `step` command: the session's step and time after it, its kept step. */
export interface SteppedAnswer {
  step: number;
  time: number;
  keptStep: number | null;
}

/** A message of the server that answers a command (schemas/api StreamAnswerFrame). */
interface AnswerFrame {
  type: "inputs" | "stepped" | "error";
  ref?: string | number;
  error?: string;
  message?: string;
  details?: unknown;
  [k: string]: unknown;
}

/** A command awaiting its answer. */
interface Awaiting {
  what: string;
  resolve: (answer: AnswerFrame) => void;
  reject: (err: Error) => void;
}

/** Close codes after which reconnecting is pointless. */
const FINAL_CLOSE_CODES = new Set([1000, 1008, 1003]);

export class SessionStream {
  readonly url: string;
  private ws: WebSocket | null = null;
  private stopped = false;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly initialDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxAttempts: number;
  private readonly reconnectEnabled: boolean;
  private statusValue: StreamStatus = "connecting";
  private readonly listeners = new Set<(s: StreamStatus) => void>();
  /** connections opened after the first one */
  reconnects = 0;
  /** frames received (scene and state) */
  frames = 0;
  /** sum of the `dropped` counts of the state frames received */
  dropped = 0;
  /**
   * the `keptStep` of the last state frame received: the step a crash of the server would
   * bring the session back to (null: no store, nothing written, or no frame yet); the
   * frames' steps past it are the ones that could be lost
   */
  keptStep: number | null = null;
  /** close code and reason of the last closed connection */
  lastClose: { code: number; reason: string } | null = null;
  /** the commands sent awaiting their answers, by ref */
  private readonly awaiting = new Map<number, Awaiting>();
  private lastRef = 0;

  constructor(
    url: string,
    /** the format asked for (a frame is decoded by its kind: text JSON, binary msgpack) */
    readonly format: "json" | "msgpack",
    reconnect: StreamOptions["reconnect"],
    private readonly handlers: StreamHandlers,
    private readonly connection: StreamConnection = {},
  ) {
    this.url = url;
    const r = typeof reconnect === "object" ? reconnect : {};
    this.reconnectEnabled = reconnect !== false;
    this.initialDelayMs = r.initialDelayMs ?? 250;
    this.maxDelayMs = r.maxDelayMs ?? 5000;
    this.maxAttempts = r.maxAttempts ?? Number.POSITIVE_INFINITY;
    this.connect();
  }

  get status(): StreamStatus {
    return this.statusValue;
  }

  /** Resolves when the stream is open (rejects if it closes for good first). */
  opened(timeoutMs = 10_000): Promise<void> {
    return this.waitForStatus("open", timeoutMs);
  }

  /** Resolves when the stream has ended (close(), deletion or a final refusal). */
  ended(timeoutMs = 10_000): Promise<void> {
    return this.waitForStatus("closed", timeoutMs);
  }

  /** Stops the stream for good (no reconnection). */
  close(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ws && this.ws.readyState !== WebSocket.CLOSED) this.ws.close(1000, "client closed");
    else this.setStatus("closed", { attempt: this.attempt });
  }

  /**
   * Inputs on the socket (the `inputs` command, as POST /v1/sessions/:id/inputs takes them):
   * at the next step boundary, or at step boundary `step`.
   */
  async sendInputs(inputs: InputIn[], step?: number): Promise<InputsAnswer> {
    const a = await this.command("inputs", { inputs, ...(step === undefined ? {} : { step }) });
    return { step: a.step as number, pending: a.pending as number };
  }

  /**
   * Steps a paused or ready session (the `step` command): resolves once its steps are taken,
   * after their frames.
   */
  async step(steps: number): Promise<SteppedAnswer> {
    const a = await this.command("step", { steps });
    return {
      step: a.step as number,
      time: a.time as number,
      keptStep: (a.keptStep as number | null | undefined) ?? null,
    };
  }

  private command(type: "inputs" | "step", body: Record<string, unknown>): Promise<AnswerFrame> {
    const ws = this.ws;
    if (this.statusValue !== "open" || ws === null)
      return Promise.reject(
        new MoreauConnectionError(`stream ${this.statusValue}: the ${type} command was not sent`),
      );
    const ref = ++this.lastRef;
    return new Promise((resolve, reject) => {
      this.awaiting.set(ref, { what: type, resolve, reject });
      ws.send(JSON.stringify({ type, ...body, ref }));
    });
  }

  /** An answer to one of this stream's commands: its promise settles. */
  private answered(frame: AnswerFrame): void {
    if (typeof frame.ref !== "number") return;
    const waiting = this.awaiting.get(frame.ref);
    if (!waiting) return;
    this.awaiting.delete(frame.ref);
    if (frame.type !== "error") waiting.resolve(frame);
    else
      waiting.reject(
        new MoreauApiError(
          0,
          frame.error ?? "error",
          frame.message ?? "",
          frame.details,
          `stream ${waiting.what}`,
        ),
      );
  }

  /** The connection closed: the commands awaiting their answers will get none. */
  private abandonCommands(code: number, reason: string): void {
    for (const [ref, waiting] of this.awaiting) {
      this.awaiting.delete(ref);
      waiting.reject(
        new MoreauConnectionError(
          `stream closed (${code}${reason ? ` ${reason}` : ""}) before the answer to its ${waiting.what} command`,
        ),
      );
    }
  }

  /** The underlying socket of the current connection (tests, diagnostics). */
  get socket(): WebSocket | null {
    return this.ws;
  }

  private waitForStatus(want: StreamStatus, timeoutMs: number): Promise<void> {
    if (this.statusValue === want) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`stream did not become ${want} within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = (s: StreamStatus) => {
        if (s === want) {
          clearTimeout(t);
          this.listeners.delete(check);
          resolve();
        } else if (s === "closed") {
          clearTimeout(t);
          this.listeners.delete(check);
          reject(
            new Error(
              `stream closed${this.lastClose ? ` (${this.lastClose.code} ${this.lastClose.reason})` : ""}`,
            ),
          );
        }
      };
      this.listeners.add(check);
    });
  }

  private setStatus(s: StreamStatus, info: { code?: number; reason?: string; attempt: number }) {
    if (this.statusValue === s && s !== "reconnecting") return;
    this.statusValue = s;
    this.handlers.onStatus?.(s, info);
    for (const l of [...this.listeners]) l(s);
  }

  private connect(): void {
    if (this.stopped) return;
    let ws: WebSocket;
    try {
      // never `undefined` for the subprotocols (a browser would offer one named so); the
      // third argument is `ws`'s options, which a browser's WebSocket ignores
      ws = new WebSocket(this.url, this.connection.protocols ?? [], {
        headers: this.connection.headers,
      });
    } catch (err) {
      // a URL or subprotocol the implementation refuses outright
      this.handlers.onError?.(err as Error);
      this.retry(0, String(err));
      return;
    }
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    let opened = false;
    /** HTTP status of a refused upgrade, when the implementation tells it (`ws`) */
    let refusal: number | null = null;
    // `ws` only (the browser's WebSocket has no `on`): the refusal's status
    if (typeof ws.on === "function")
      ws.on("unexpected-response", (_req, res) => {
        refusal = res.statusCode ?? 0;
        this.handlers.onError?.(new Error(`stream refused with HTTP ${refusal}`));
        res.resume();
        ws.terminate();
      });
    ws.onopen = () => {
      opened = true;
      if (this.attempt > 0 || this.frames > 0) this.reconnects++;
      this.attempt = 0;
      this.setStatus("open", { attempt: 0 });
    };
    ws.onerror = (ev) => {
      // `ws` carries the error; a browser tells nothing more than that there was one
      const err: unknown = (ev as { error?: unknown }).error;
      this.handlers.onError?.(err instanceof Error ? err : new Error("stream connection error"));
    };
    ws.onmessage = (ev) => this.receive(ev.data);
    ws.onclose = (ev) => {
      void this.closed(ws, ev.code, ev.reason, opened, refusal);
    };
  }

  /** One frame: JSON text, or msgpack bytes (an ArrayBuffer: binaryType). */
  private receive(data: unknown): void {
    let frame: { type?: string; dropped?: number; keptStep?: number | null };
    try {
      frame =
        typeof data === "string"
          ? JSON.parse(data)
          : unpack(data instanceof Uint8Array ? data : new Uint8Array(data as ArrayBuffer));
    } catch (err) {
      this.handlers.onError?.(err as Error);
      return;
    }
    if (frame.type === "scene") {
      this.frames++;
      this.handlers.onScene?.(frame as SceneFrameOut);
    } else if (frame.type === "state") {
      this.frames++;
      this.dropped += frame.dropped ?? 0;
      this.keptStep = frame.keptStep ?? null;
      this.handlers.onState?.(frame as StateFrameOut);
    } else this.answered(frame as AnswerFrame);
  }

  /** A connection closed: the stream ends, or reconnects (see the policy above). */
  private async closed(
    ws: WebSocket,
    code: number,
    reason: string,
    opened: boolean,
    refusal: number | null,
  ): Promise<void> {
    this.lastClose = { code, reason };
    if (this.ws === ws) this.ws = null;
    this.abandonCommands(code, reason);
    // 4xx: unknown session or bad query — retrying cannot help
    const refusedFinal = refusal !== null && refusal >= 400 && refusal < 500;
    if (
      this.stopped ||
      !this.reconnectEnabled ||
      refusedFinal ||
      (opened && FINAL_CLOSE_CODES.has(code))
    ) {
      this.end({ code, reason, attempt: this.attempt });
      return;
    }
    if (!opened && refusal === null && this.connection.sessionExists) {
      // the refusal's status is hidden (a browser): ask whether the session still exists
      const exists = await this.connection.sessionExists().catch(() => true);
      if (!exists) {
        this.end({ code, reason: "session not found", attempt: this.attempt });
        return;
      }
    }
    this.retry(code, reason);
  }

  private end(info: { code: number; reason: string; attempt: number }): void {
    this.stopped = true;
    this.setStatus("closed", info);
  }

  /** The next attempt after the backoff delay (or the end after `maxAttempts`). */
  private retry(code: number, reason: string): void {
    if (this.stopped) return;
    this.attempt++;
    if (this.attempt > this.maxAttempts) {
      this.end({ code, reason, attempt: this.attempt });
      return;
    }
    const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** (this.attempt - 1));
    this.setStatus("reconnecting", { code, reason, attempt: this.attempt });
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }
}
