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
 *
 * Frame rate: a subscriber may be given a rate (frames per second of wall time, STREAM_FPS
 * or its `?maxFps`, set by the route with `limitRate` before it subscribes). It is a token
 * bucket holding RATE_BURST_SECONDS of frames, full at the start: a short burst (a step
 * request of a few dozen steps) passes whole, a long fast run gets the rate on average. A
 * frame over the rate is held back (one per subscriber: the bytes the other subscribers
 * share, no copy); a newer frame replaces it, the replaced one counting as skipped (in
 * `dropped`, like a frame skipped under back-pressure), and the held one is sent as soon
 * as the rate allows, so the latest state always arrives. `flush` sends it at once (the
 * route does before an answer on the socket, which must follow the frames of its steps).
 *
 * Admission (StreamAdmission): subscribers per session, per API key and per server are
 * counted from the upgrade request on (a place is taken before the upgrade and given back
 * when the connection closes), so a burst of upgrades cannot pass the caps.
 */
import type { WebSocket } from "ws";
import type { StreamOptions } from "../../schemas/api";
import { ApiError } from "./errors";
import { type FrameFormat, missedBetween, withDropped } from "./frames";
import { encodingKey, type Subscription } from "./protocol";

/** Seconds of frames a subscriber's rate bucket holds (the longest burst sent whole). */
export const RATE_BURST_SECONDS = 2;

/** A frame held back by the rate limit until the rate allows it. */
interface HeldFrame {
  step: number;
  onBoundary: boolean;
  bytes: Uint8Array;
}

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
  /** frames per second of wall time at most (Infinity: no limit) */
  readonly maxFps: number;
  /** rate bucket: frames that may be sent now, refilled at maxFps up to the burst */
  tokens: number;
  refilledAt: number;
  held: HeldFrame | null;
  timer: ReturnType<typeof setTimeout> | null;
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
  private readonly rates = new WeakMap<WebSocket, number>();
  private readonly bySocket = new WeakMap<WebSocket, Subscriber>();

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

  /** The frame rate (frames per second of wall time) of the socket's coming subscription. */
  limitRate(ws: WebSocket, maxFps: number): void {
    this.rates.set(ws, maxFps);
  }

  /** The subscriber of a socket, if it is subscribed. */
  subscriberOf(ws: WebSocket): Subscriber | undefined {
    return this.bySocket.get(ws);
  }

  add(sessionId: string, ws: WebSocket, opts: StreamOptions): Subscriber {
    const maxFps = this.rates.get(ws) ?? Number.POSITIVE_INFINITY;
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
      maxFps,
      tokens: burstOf(maxFps),
      refilledAt: performance.now(),
      held: null,
      timer: null,
    };
    this.bySocket.set(ws, sub);
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
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    sub.held = null;
    this.bySocket.delete(sub.ws);
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
    // a frame held back from before this snapshot is older than it: never send it after
    if (sub.held !== null && sub.held.step <= step) sub.held = null;
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
    const now = performance.now();
    const tally = { sent: 0, dropped: 0 };
    for (const sub of set) {
      const onBoundary = step % sub.every === 0;
      if (!forced && !onBoundary) continue;
      const frame = frames.find((f) => f.key === sub.key);
      if (frame) this.offer(sub, step, onBoundary, frame.bytes, now, tally);
    }
    this.record(tally);
  }

  /**
   * One frame for one subscriber (a cluster's relay, cluster/relay.ts, whose frames come
   * per subscriber from the Redis logs): sent, held back by its rate, or skipped.
   */
  dispatchTo(sub: Subscriber, step: number, forced: boolean, bytes: Uint8Array): void {
    const tally = { sent: 0, dropped: 0 };
    this.offer(sub, step, forced ? step % sub.every === 0 : true, bytes, performance.now(), tally);
    this.record(tally);
  }

  private offer(
    sub: Subscriber,
    step: number,
    onBoundary: boolean,
    bytes: Uint8Array,
    now: number,
    tally: { sent: number; dropped: number },
  ): void {
    if (sub.ws.readyState !== sub.ws.OPEN) return;
    // a newer frame replaces the one held back by the rate limit: that one is skipped
    if (sub.held !== null) {
      this.skip(sub, sub.held.onBoundary, tally);
      sub.held = null;
    }
    if (!this.take(sub, now)) {
      sub.held = { step, onBoundary, bytes };
      this.schedule(sub);
      return;
    }
    this.deliver(sub, step, onBoundary, bytes, tally);
  }

  /** Sends a subscriber's held-back frame now, whatever the rate (before an answer to it). */
  flush(ws: WebSocket): void {
    const sub = this.bySocket.get(ws);
    if (!sub || sub.held === null) return;
    const held = sub.held;
    sub.held = null;
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    this.take(sub, performance.now());
    const tally = { sent: 0, dropped: 0 };
    if (sub.ws.readyState === sub.ws.OPEN)
      this.deliver(sub, held.step, held.onBoundary, held.bytes, tally);
    this.record(tally);
  }

  /** Takes a token of the subscriber's rate bucket; false when it is empty. */
  private take(sub: Subscriber, now: number): boolean {
    if (sub.maxFps === Number.POSITIVE_INFINITY) return true;
    sub.tokens = Math.min(
      burstOf(sub.maxFps),
      sub.tokens + ((now - sub.refilledAt) * sub.maxFps) / 1000,
    );
    sub.refilledAt = now;
    if (sub.tokens < 1) return false;
    sub.tokens -= 1;
    return true;
  }

  /** Sends the held-back frame when the bucket has a token again. */
  private schedule(sub: Subscriber): void {
    if (sub.timer !== null) return;
    const wait = Math.max(1, Math.ceil(((1 - sub.tokens) * 1000) / sub.maxFps));
    sub.timer = setTimeout(() => {
      sub.timer = null;
      const held = sub.held;
      if (held === null || !this.bySession.get(sub.sessionId)?.has(sub)) return;
      if (!this.take(sub, performance.now())) {
        this.schedule(sub);
        return;
      }
      sub.held = null;
      const tally = { sent: 0, dropped: 0 };
      if (sub.ws.readyState === sub.ws.OPEN)
        this.deliver(sub, held.step, held.onBoundary, held.bytes, tally);
      this.record(tally);
    }, wait);
    sub.timer.unref();
  }

  private skip(sub: Subscriber, onBoundary: boolean, tally: { dropped: number }): void {
    if (onBoundary) sub.skippedRegular++;
    else sub.skippedForced++;
    sub.dropped++;
    tally.dropped++;
  }

  /** Writes a frame to a subscriber unless its socket is backed up (then it is skipped). */
  private deliver(
    sub: Subscriber,
    step: number,
    onBoundary: boolean,
    bytes: Uint8Array,
    tally: { sent: number; dropped: number },
  ): void {
    if (sub.ws.bufferedAmount > this.maxBufferedBytes) {
      this.skip(sub, onBoundary, tally);
      return;
    }
    const gap = missedBetween(sub.last, step, sub.every);
    const missed = Math.max(gap, sub.skippedRegular) + sub.skippedForced;
    // frames of the gap not skipped here were dropped by the worker under back-pressure
    const upstream = Math.max(0, gap - sub.skippedRegular);
    sub.dropped += upstream;
    tally.dropped += upstream;
    sub.ws.send(withDropped(bytes, sub.format, missed), {
      binary: sub.format === "msgpack",
    });
    sub.last = step;
    sub.skippedRegular = 0;
    sub.skippedForced = 0;
    sub.sent++;
    tally.sent++;
  }

  private record(tally: { sent: number; dropped: number }): void {
    if (tally.sent) this.counters.framesSent(tally.sent);
    if (tally.dropped) this.counters.framesDropped(tally.dropped);
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

/** Frames a rate bucket holds: RATE_BURST_SECONDS of frames, at least one. */
function burstOf(maxFps: number): number {
  return Math.max(1, maxFps * RATE_BURST_SECONDS);
}

export interface SubscriberLimits {
  /** MAX_SUBSCRIBERS_PER_SESSION */
  perSession: number;
  /** MAX_SUBSCRIBERS_PER_KEY (applies to requests with an owner) */
  perKey: number;
  /** MAX_SUBSCRIBERS */
  total: number;
}

/** A subscriber's place, taken before its upgrade; `release` is idempotent. */
export interface StreamTicket {
  release(): void;
}

/**
 * Counts stream places per session, per API key and in all, and refuses a new one past a
 * cap with 429 `too_many_subscribers` naming the limit (details: limit, max).
 */
export class StreamAdmission {
  private readonly bySession = new Map<string, number>();
  private readonly byKey = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: SubscriberLimits) {}

  get size(): number {
    return this.total;
  }

  admit(sessionId: string, owner: string | null): StreamTicket {
    const refuse = (limit: string, max: number, what: string) =>
      new ApiError(
        "too_many_subscribers",
        `${what} has ${max} streams, the most allowed (${limit}); close one first`,
        { limit, max, session: sessionId },
      );
    if ((this.bySession.get(sessionId) ?? 0) >= this.limits.perSession)
      throw refuse("MAX_SUBSCRIBERS_PER_SESSION", this.limits.perSession, `session "${sessionId}"`);
    if (owner !== null && (this.byKey.get(owner) ?? 0) >= this.limits.perKey)
      throw refuse("MAX_SUBSCRIBERS_PER_KEY", this.limits.perKey, "this API key");
    if (this.total >= this.limits.total)
      throw refuse("MAX_SUBSCRIBERS", this.limits.total, "the server");
    bump(this.bySession, sessionId, 1);
    if (owner !== null) bump(this.byKey, owner, 1);
    this.total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        bump(this.bySession, sessionId, -1);
        if (owner !== null) bump(this.byKey, owner, -1);
        this.total--;
      },
    };
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}
