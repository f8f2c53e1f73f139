/**
 * WebSocket fan-out of a session's frames to its subscribers.
 *
 * Each subscriber chose `every`, `fields` and `format`; the worker encodes each distinct
 * (fields, format) once per due step and this hub writes the same bytes to every
 * subscriber of that class. Bounded memory: a subscriber whose socket still holds more than
 * STREAM_MAX_BUFFERED_BYTES unsent (ws `bufferedAmount`: the socket's write queue plus ws's
 * own) is skipped for that frame, never queued; the next frame it does get carries in
 * `dropped` how many it missed since the previous one (including frames the worker itself
 * dropped under back-pressure, recovered from the gap in step numbers). A client that reads
 * nothing therefore costs at most its buffer limit plus one frame.
 */
import type { WebSocket } from "ws";
import type { StreamOptions } from "../../schemas/api";
import { type FrameFormat, missedBetween, withDropped } from "./frames";
import { encodingKey, type Subscription } from "./protocol";

export interface Subscriber {
  readonly id: number;
  readonly sessionId: string;
  readonly ws: WebSocket;
  readonly every: number;
  readonly fields: StreamOptions["fields"];
  readonly format: FrameFormat;
  readonly key: string;
  /** step of the last state frame written to it (null: none yet); a later frame with a
   *  smaller step (after a reset) starts counting gaps afresh */
  last: number | null;
  /** frames skipped here since the last one it got: on `every` boundaries / forced ones */
  skippedRegular: number;
  skippedForced: number;
  sent: number;
  dropped: number;
  alive: boolean;
}

export interface StreamCounters {
  framesSent(n: number): void;
  framesDropped(n: number): void;
}

/** Time (ms) a closing client gets to answer the close frame before its socket is destroyed. */
export const CLOSE_GRACE_MS = 1000;

/** Ping period (ms); a client that has not answered the previous ping is terminated. */
export const HEARTBEAT_MS = 30_000;

export class StreamHub {
  private readonly bySession = new Map<string, Set<Subscriber>>();
  private nextId = 1;
  private total = 0;
  private readonly heartbeat: ReturnType<typeof setInterval>;

  constructor(
    private readonly maxBufferedBytes: number,
    private readonly counters: StreamCounters,
    /** called with the session's distinct subscription classes whenever they change */
    private readonly onSubscriptions: (sessionId: string, subs: Subscription[]) => void,
  ) {
    this.heartbeat = setInterval(() => this.ping(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  get clients(): number {
    return this.total;
  }

  subscribers(sessionId: string): Subscriber[] {
    return [...(this.bySession.get(sessionId) ?? [])];
  }

  count(sessionId: string): number {
    return this.bySession.get(sessionId)?.size ?? 0;
  }

  add(sessionId: string, ws: WebSocket, opts: StreamOptions): Subscriber {
    const sub: Subscriber = {
      id: this.nextId++,
      sessionId,
      ws,
      every: opts.every,
      fields: opts.fields,
      format: opts.format,
      key: encodingKey(opts.fields, opts.format),
      last: null,
      skippedRegular: 0,
      skippedForced: 0,
      sent: 0,
      dropped: 0,
      alive: true,
    };
    let set = this.bySession.get(sessionId);
    if (!set) {
      set = new Set();
      this.bySession.set(sessionId, set);
    }
    set.add(sub);
    this.total++;
    ws.on("pong", () => {
      sub.alive = true;
    });
    ws.on("close", () => this.remove(sub));
    this.changed(sessionId);
    return sub;
  }

  remove(sub: Subscriber): void {
    const set = this.bySession.get(sub.sessionId);
    if (!set?.delete(sub)) return;
    this.total--;
    if (set.size === 0) this.bySession.delete(sub.sessionId);
    this.changed(sub.sessionId);
  }

  /** The distinct (every, fields, format) classes of a session's subscribers. */
  subscriptions(sessionId: string): Subscription[] {
    const out: Subscription[] = [];
    for (const s of this.bySession.get(sessionId) ?? [])
      if (!out.some((o) => o.key === s.key && o.every === s.every))
        out.push({ key: s.key, every: s.every, fields: s.fields, format: s.format });
    return out;
  }

  private changed(sessionId: string): void {
    this.onSubscriptions(sessionId, this.subscriptions(sessionId));
  }

  /** Writes a non-state message (the scene frame) to one subscriber. */
  sendRaw(sub: Subscriber, bytes: Uint8Array): void {
    if (sub.ws.readyState === sub.ws.OPEN) sub.ws.send(bytes, { binary: sub.format === "msgpack" });
  }

  /**
   * A first state frame for a new subscriber (the worker's snapshot); ignored when a
   * regular frame has reached it meanwhile, so frames stay in order.
   */
  sendInitial(sub: Subscriber, step: number, bytes: Uint8Array): void {
    if (sub.last !== null || sub.ws.readyState !== sub.ws.OPEN) return;
    sub.ws.send(bytes, { binary: sub.format === "msgpack" });
    sub.last = step;
    sub.sent++;
    this.counters.framesSent(1);
  }

  /** Frames from the worker for one step of a session. */
  dispatch(
    sessionId: string,
    step: number,
    forced: boolean,
    frames: readonly { key: string; bytes: Uint8Array }[],
  ): void {
    const set = this.bySession.get(sessionId);
    if (!set) return;
    let sent = 0;
    let dropped = 0;
    for (const sub of set) {
      const onBoundary = step % sub.every === 0;
      if (!forced && !onBoundary) continue;
      const frame = frames.find((f) => f.key === sub.key);
      if (!frame || sub.ws.readyState !== sub.ws.OPEN) continue;
      if (sub.ws.bufferedAmount > this.maxBufferedBytes) {
        if (onBoundary) sub.skippedRegular++;
        else sub.skippedForced++;
        sub.dropped++;
        dropped++;
        continue;
      }
      const gap = missedBetween(sub.last, step, sub.every);
      const missed = Math.max(gap, sub.skippedRegular) + sub.skippedForced;
      // frames of the gap not skipped here were dropped by the worker under back-pressure
      const upstream = Math.max(0, gap - sub.skippedRegular);
      sub.dropped += upstream;
      dropped += upstream;
      sub.ws.send(withDropped(frame.bytes, sub.format, missed), {
        binary: sub.format === "msgpack",
      });
      sub.last = step;
      sub.skippedRegular = 0;
      sub.skippedForced = 0;
      sub.sent++;
      sent++;
    }
    if (sent) this.counters.framesSent(sent);
    if (dropped) this.counters.framesDropped(dropped);
  }

  /**
   * Closes a session's streams with a code and reason. A client that does not complete the
   * closing handshake within CLOSE_GRACE_MS (one that reads nothing) is cut off.
   */
  closeSession(sessionId: string, code: number, reason: string): void {
    for (const sub of this.bySession.get(sessionId) ?? []) {
      sub.ws.close(code, reason);
      const ws = sub.ws;
      setTimeout(() => {
        if (ws.readyState !== ws.CLOSED) ws.terminate();
      }, CLOSE_GRACE_MS).unref();
      this.remove(sub);
    }
  }

  closeAll(code: number, reason: string): void {
    for (const id of [...this.bySession.keys()]) this.closeSession(id, code, reason);
  }

  private ping(): void {
    for (const set of this.bySession.values())
      for (const sub of set) {
        if (!sub.alive) {
          sub.ws.terminate();
          continue;
        }
        sub.alive = false;
        sub.ws.ping();
      }
  }

  close(): void {
    clearInterval(this.heartbeat);
  }
}
