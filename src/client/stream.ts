/**
 * SessionStream: a session's WebSocket stream (GET /v1/sessions/:id/stream) that reconnects
 * when it drops.
 *
 * Every (re)connection starts with a `scene` frame, then `state` frames (schemas/api
 * SceneFrame, StateFrame). Reconnection policy:
 * - closed by close(): never reconnects;
 * - closed by the server with 1000 (the session was deleted) or refused with 4xx (unknown
 *   session, bad query): the stream ends (`closed`);
 * - anything else (network drop, 1001 shutdown, 1006, a 5xx refusal, a server not up yet):
 *   reconnects after a delay doubling from `initialDelayMs` to `maxDelayMs`, reset by every
 *   connection that opens, until `maxAttempts` consecutive failures (default unlimited).
 * After a reconnect the frames continue from the session's current step (the `scene` frame
 * is sent again); frames produced while disconnected are not replayed.
 */
import { unpack } from "msgpackr";
import { WebSocket } from "ws";
import type { SceneFrameOut, StateFrameOut, StreamField } from "../../schemas/api";

export type StreamStatus = "connecting" | "open" | "reconnecting" | "closed";

export interface StreamOptions {
  /** a frame at every step divisible by it (default 1) */
  every?: number;
  /** members of the state frames (default bodies, contacts, joints, energy) */
  fields?: StreamField[];
  format?: "json" | "msgpack";
  /** false: no reconnection; or the backoff parameters */
  reconnect?: boolean | { initialDelayMs?: number; maxDelayMs?: number; maxAttempts?: number };
}

export interface StreamHandlers {
  onScene?(frame: SceneFrameOut): void;
  onState?(frame: StateFrameOut): void;
  onStatus?(status: StreamStatus, info: { code?: number; reason?: string; attempt: number }): void;
  onError?(err: Error): void;
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
  /** close code and reason of the last closed connection */
  lastClose: { code: number; reason: string } | null = null;

  constructor(
    url: string,
    private readonly format: "json" | "msgpack",
    reconnect: StreamOptions["reconnect"],
    private readonly handlers: StreamHandlers,
    private readonly headers: Record<string, string> = {},
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
    const ws = new WebSocket(this.url, { headers: this.headers });
    this.ws = ws;
    let opened = false;
    let refusedFinal = false;
    ws.on("open", () => {
      opened = true;
      if (this.attempt > 0 || this.frames > 0) this.reconnects++;
      this.attempt = 0;
      this.setStatus("open", { attempt: 0 });
    });
    ws.on("unexpected-response", (_req, res) => {
      const code = res.statusCode ?? 0;
      // 4xx: unknown session or bad query — retrying cannot help
      refusedFinal = code >= 400 && code < 500;
      this.handlers.onError?.(new Error(`stream refused with HTTP ${code}`));
      res.resume();
      ws.terminate();
    });
    ws.on("error", (err) => {
      this.handlers.onError?.(err);
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      let frame: { type?: string; dropped?: number };
      try {
        frame = isBinary || this.format === "msgpack" ? unpack(data) : JSON.parse(data.toString());
      } catch (err) {
        this.handlers.onError?.(err as Error);
        return;
      }
      this.frames++;
      if (frame.type === "scene") this.handlers.onScene?.(frame as SceneFrameOut);
      else if (frame.type === "state") {
        this.dropped += frame.dropped ?? 0;
        this.handlers.onState?.(frame as StateFrameOut);
      }
    });
    ws.on("close", (code, reasonBuf) => {
      const reason = reasonBuf.toString();
      this.lastClose = { code, reason };
      if (this.ws === ws) this.ws = null;
      const final =
        this.stopped ||
        !this.reconnectEnabled ||
        refusedFinal ||
        (opened && FINAL_CLOSE_CODES.has(code));
      if (final) {
        this.stopped = true;
        this.setStatus("closed", { code, reason, attempt: this.attempt });
        return;
      }
      this.attempt++;
      if (this.attempt > this.maxAttempts) {
        this.stopped = true;
        this.setStatus("closed", { code, reason, attempt: this.attempt });
        return;
      }
      const delay = Math.min(this.maxDelayMs, this.initialDelayMs * 2 ** (this.attempt - 1));
      this.setStatus("reconnecting", { code, reason, attempt: this.attempt });
      this.timer = setTimeout(() => {
        this.timer = null;
        this.connect();
      }, delay);
    });
  }
}
