/**
 * WebSocket fan-out of a session's frames to its subscribers.
 *
 * Each subscriber chose `every`, `fields` and `format`; the worker encodes each distinct
 * (fields, format) once per due step and this hub writes the same bytes to every
 * subscriber of that class. Bounded memory: a frame for a subscriber whose socket still
 * holds more than STREAM_MAX_BUFFERED_BYTES unsent (ws `bufferedAmount`: the socket's write
 * queue plus ws's own) is held back, never queued: one per subscriber (the bytes the other
 * subscribers share, no copy), a newer frame replacing it, the replaced one skipped; the
 * next frame it does get carries in `dropped` how many it missed since the previous one
 * (including frames the worker itself dropped under back-pressure, recovered from the gap
 * in step numbers). The held frame goes once the socket has drained (looked at every
 * DRAIN_POLL_MS), so the latest state arrives even when the session has stopped meanwhile.
 * A client that reads nothing therefore costs at most its buffer limit plus one frame.
 *
 * Frame rate: a subscriber may be given a rate (frames per second of wall time, STREAM_FPS
 * or its `?maxFps`, set by the route with `limitRate` before it subscribes). It is a token
 * bucket holding RATE_BURST_SECONDS of frames, full at the start: a short burst (a step
 * request of a few dozen steps) passes whole, a long fast run gets the rate on average. A
 * frame over the rate is held back the same way, and sent as soon as the rate allows, so
 * the latest state always arrives. `flush` sends it at once unless the socket is full (the
 * route does before an answer on the socket, which must follow the frames of its steps).
 *
 * A rate below STREAM_MIN_FPS is taken as STREAM_MIN_FPS (the route refuses `?maxFps` below
 * it; STREAM_FPS may be configured lower), so a held frame waits at most 1 / STREAM_MIN_FPS
 * seconds: a rate of 1e-9 asked Node for a 1e12 ms timer, which it clamps to 1 ms with a
 * warning each time (a 1 ms loop flooding the log, the held frame never sent).
 *
 * Commands (CommandQueue, one per socket: the client's `inputs` and `step` messages) are
 * taken one at a time in arrival order and answered in that order, at most
 * MAX_PENDING_COMMANDS awaiting their answers; one more is refused at once with
 * `too_many_commands`. An `inputs` answer waits for its checkpoint while the next commands
 * are taken (group commit: the inputs taken during one write are kept by the next). Their
 * answers obey STREAM_MAX_BUFFERED_BYTES as frames do, but are never skipped: an answer
 * waits until the socket holds no more than that, and the next command waits behind it, so
 * a client that stops reading stops its own commands; one that sends on regardless (its
 * queue full, its socket too) is closed with 1008.
 * When the socket closes, the commands still queued are dropped (the running one finishes).
 * The bytes of every socket's commands awaiting their answers count in one server-wide
 * bound (CommandBytes, STREAM_COMMANDS_MAX_BYTES): a command past it is refused at once with
 * `too_many_commands` naming it, the socket left open.
 * Error answers quote at most MAX_ECHO_CHARS of any key or value the client sent.
 *
 * Admission (StreamAdmission): subscribers per session, per API key and per server are
 * counted from the upgrade request on (a place is taken before the upgrade and given back
 * when the connection closes), so a burst of upgrades cannot pass the caps.
 */
import { WebSocket } from "ws";
import type { StreamOptions } from "../../schemas/api";
import { ApiError, clip, MAX_ECHO_CHARS, toApiError } from "./errors";
import { encode, type FrameFormat, missedBetween, withDropped } from "./frames";
import { encodingKey, MAX_TIMER_MS, type Subscription } from "./protocol";

/** Seconds of frames a subscriber's rate bucket holds (the longest burst sent whole). */
export const RATE_BURST_SECONDS = 2;

/**
 * The lowest frame rate of a stream (frames per second): `?maxFps` below it is refused, a
 * lower STREAM_FPS is raised to it. A held frame waits at most 1 / STREAM_MIN_FPS seconds.
 */
export const STREAM_MIN_FPS = 0.1;

/**
 * Bytes of one message a client may send on a stream socket (ws maxPayload): a larger one
 * closes the socket with 1009, message too big. A command's inputs beyond it go by REST.
 */
export const STREAM_MAX_MESSAGE_BYTES = 64 * 1024;

/** The close reason of a socket whose message was over STREAM_MAX_MESSAGE_BYTES (≤ 123 bytes). */
export const MESSAGE_TOO_BIG_REASON = `message over ${STREAM_MAX_MESSAGE_BYTES} bytes (STREAM_MAX_MESSAGE_BYTES); send larger inputs by POST /inputs`;

/**
 * The server's stream sockets (the ws server's `WebSocket` class). ws closes a socket
 * whose message is over maxPayload with close(1009) and no reason (its receiver's error
 * handler), before anything of ours hears of it: the client read 1009 alone. The reason
 * names the bound here.
 */
export class StreamSocket extends WebSocket {
  override close(code?: number, data?: string | Buffer): void {
    if (code === 1009 && (data === undefined || data.length === 0))
      super.close(code, MESSAGE_TOO_BIG_REASON);
    else super.close(code, data);
  }
}

/** Commands a stream socket may have awaiting their answers, the running one included. */
export const MAX_PENDING_COMMANDS = 32;

/** The longest text, and the most entries of a list, an error answer carries. */
const MAX_ANSWER_TEXT = 1000;
const MAX_ANSWER_LIST = 20;

/** How often an answer held back by a full socket looks at it again (ms). */
const DRAIN_POLL_MS = 20;

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

  /**
   * The frame rate (frames per second of wall time) of the socket's coming subscription, at
   * least STREAM_MIN_FPS.
   */
  limitRate(ws: WebSocket, maxFps: number): void {
    this.rates.set(ws, Math.max(STREAM_MIN_FPS, maxFps));
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
    // a newer frame replaces the one held back (by the rate or a full socket): that one is skipped
    if (sub.held !== null) {
      this.skip(sub, sub.held.onBoundary, tally);
      sub.held = null;
    }
    if (this.full(sub) || !this.take(sub, now)) {
      sub.held = { step, onBoundary, bytes };
      this.schedule(sub);
      return;
    }
    this.deliver(sub, step, bytes, tally);
  }

  /**
   * Sends a subscriber's held-back frame now, whatever the rate (before an answer to it),
   * unless its socket is full (then it goes once the socket drains).
   */
  flush(ws: WebSocket): void {
    const sub = this.bySocket.get(ws);
    if (!sub || sub.held === null || this.full(sub)) return;
    const held = sub.held;
    sub.held = null;
    if (sub.timer) clearTimeout(sub.timer);
    sub.timer = null;
    this.take(sub, performance.now());
    const tally = { sent: 0, dropped: 0 };
    if (sub.ws.readyState === sub.ws.OPEN) this.deliver(sub, held.step, held.bytes, tally);
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

  /** Whether the subscriber's socket holds more than STREAM_MAX_BUFFERED_BYTES unsent. */
  private full(sub: Subscriber): boolean {
    return sub.ws.bufferedAmount > this.maxBufferedBytes;
  }

  /**
   * Sends the held-back frame once the socket has drained (looking every DRAIN_POLL_MS) and
   * the bucket has a token again.
   */
  private schedule(sub: Subscriber): void {
    if (sub.timer !== null) return;
    // at most 1 / STREAM_MIN_FPS seconds (limitRate), and never more than a timer holds
    const wait = this.full(sub)
      ? DRAIN_POLL_MS
      : Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(((1 - sub.tokens) * 1000) / sub.maxFps)));
    sub.timer = setTimeout(() => {
      sub.timer = null;
      const held = sub.held;
      if (held === null || !this.bySession.get(sub.sessionId)?.has(sub)) return;
      if (sub.ws.readyState !== sub.ws.OPEN) return;
      if (this.full(sub) || !this.take(sub, performance.now())) {
        this.schedule(sub);
        return;
      }
      sub.held = null;
      const tally = { sent: 0, dropped: 0 };
      if (sub.ws.readyState === sub.ws.OPEN) this.deliver(sub, held.step, held.bytes, tally);
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

  /** Writes a frame to a subscriber (whose socket has room: the callers look). */
  private deliver(
    sub: Subscriber,
    step: number,
    bytes: Uint8Array,
    tally: { sent: number; dropped: number },
  ): void {
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
      closeSocket(sub.ws, code, reason);
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

/**
 * Closes a socket with a code and reason; a client that does not complete the closing
 * handshake within CLOSE_GRACE_MS (one that reads nothing) is cut off.
 */
function closeSocket(ws: WebSocket, code: number, reason: string): void {
  ws.close(code, reason);
  setTimeout(() => {
    if (ws.readyState !== ws.CLOSED) ws.terminate();
  }, CLOSE_GRACE_MS).unref();
}

/** An answer to a client's command, in the stream's format (schemas/api.ts StreamAnswerFrame). */
export interface CommandAnswer {
  type: "inputs" | "stepped" | "error";
  ref?: string | number;
  [member: string]: unknown;
}

/**
 * The bytes of the commands awaiting their answers on all the server's stream sockets
 * (each held as the message it came as until its answer is written): at most `max`
 * (STREAM_COMMANDS_MAX_BYTES). A socket's own bound (MAX_PENDING_COMMANDS messages of at
 * most STREAM_MAX_MESSAGE_BYTES, 2 MiB) times MAX_SUBSCRIBERS (1000) sockets would let
 * clients without keys park 2 GiB of messages (2.9 GB of the event loop's memory with
 * their Buffers' overhead) behind a long step; this bounds the sum.
 */
export class CommandBytes {
  private held = 0;

  constructor(readonly max: number) {}

  /** Bytes held now. */
  get used(): number {
    return this.held;
  }

  /** Takes `n` bytes: false (nothing taken) when they would pass `max`. */
  take(n: number): boolean {
    if (this.held + n > this.max) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held -= n;
  }
}

/**
 * A command that has taken effect: its answer, and `kept` (its inputs' checkpoint), which
 * the answer must wait for — while the commands after it are taken.
 */
export interface TakenCommand {
  answer: CommandAnswer;
  kept?: Promise<void>;
}

/**
 * The commands of one stream socket, taken one at a time in arrival order, and their
 * answers, written in the same order.
 *
 * - Group commit: a command starts once the one before it has taken effect, not once its
 *   answer is out. An `inputs` command's answer waits for its checkpoint (`kept`: the
 *   durable write that acknowledges it), and the inputs that arrive meanwhile are applied
 *   in order and kept together by the next write (sessions/checkpoints.ts: the callers of
 *   one pass share it); each answer leaves once its own command is kept and the answers
 *   before it have left. A command that must not overtake an answer (a `step`: its
 *   `stepped` follows the frames of its steps, and the inputs before it are answered first)
 *   awaits `answered` before it runs.
 * - At most `maxPending` (MAX_PENDING_COMMANDS) await their answers, the running ones and
 *   those waiting for their checkpoint included; one more is refused at once (ahead of the
 *   answers still due) with `too_many_commands`, details `{ limit: "MAX_PENDING_COMMANDS", max }`.
 * - An answer is written once the socket holds at most `maxBufferedBytes` unsent
 *   (STREAM_MAX_BUFFERED_BYTES, the frames' bound), after the frame the rate holds back for
 *   it (`flush`); while an answer is held back so, the next command does not start. A
 *   client that reads nothing therefore stops its own commands, and costs one waiting
 *   answer. When its queue is full and its socket too, nothing more can be answered: the
 *   socket is closed with 1008.
 * - Their bytes (the messages they came as, held until answered) count in the server's
 *   CommandBytes: one past STREAM_COMMANDS_MAX_BYTES is refused at once with
 *   `too_many_commands`, details `{ limit: "STREAM_COMMANDS_MAX_BYTES", maxBytes }`.
 * - Once the socket closes, the queued commands are dropped; the running one finishes (and
 *   those taken are kept as ever: only their answers are not written).
 * - Answers pass through `boundAnswer`: what the client sent is quoted at most
 *   MAX_ECHO_CHARS characters long (a 60 kB unknown key was echoed whole, per message).
 */
export class CommandQueue {
  private pending = 0;
  /** commands taken whose answers are not written yet */
  private unwritten = 0;
  /** settled once the last command queued has taken effect (or was dropped) */
  private taking: Promise<void> = Promise.resolve();
  /** settled once the last command queued is answered (or dropped) */
  private answering: Promise<void> = Promise.resolve();
  private gone = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly format: FrameFormat,
    private readonly maxBufferedBytes: number,
    /** writes the frame held back by the rate for this socket (StreamHub.flush) */
    private readonly flush: () => void,
    /** the server's bound on the bytes of all sockets' commands awaiting their answers */
    private readonly bytes: CommandBytes,
    private readonly maxPending = MAX_PENDING_COMMANDS,
  ) {
    ws.once("close", () => {
      this.gone = true;
    });
  }

  /** Commands awaiting their answers, the running ones included. */
  get size(): number {
    return this.pending;
  }

  private get open(): boolean {
    return !this.gone && this.ws.readyState === this.ws.OPEN;
  }

  /**
   * Queues a command of `size` bytes (the message it came as, which `run` holds): `run` is
   * called in turn, unless the socket has closed by then, with `answered` (resolves once
   * the answers before it are written), and its answer (or the error it throws, as an error
   * answer) written after those, once its `kept` has resolved and the socket has room.
   */
  push(
    ref: string | number | undefined,
    size: number,
    run: (answered: () => Promise<void>) => TakenCommand | Promise<TakenCommand>,
  ): void {
    if (!this.open) return;
    if (this.pending >= this.maxPending) {
      this.refuse(ref);
      return;
    }
    if (!this.bytes.take(size)) {
      this.refuseBytes(ref, size);
      return;
    }
    this.pending++;
    const before = this.answering;
    const taken = this.taking.then(async (): Promise<TakenCommand | null> => {
      // not while an earlier answer waits for a full socket: a client that stops reading
      // stops its own commands
      while (this.open && this.unwritten > 0 && this.full)
        await new Promise<void>((resolve) => setTimeout(resolve, DRAIN_POLL_MS).unref());
      if (!this.open) return null;
      let out: TakenCommand;
      try {
        out = await run(() => before);
      } catch (err) {
        out = { answer: { type: "error", ref, ...toApiError(err).toJSON() } };
      }
      this.unwritten++;
      return out;
    });
    this.taking = taken.then(() => undefined);
    this.answering = Promise.all([taken, before]).then(async ([out]) => {
      try {
        if (out === null) return;
        await out.kept;
        await this.write(out.answer);
      } catch {
        /* the socket failed: its close drops the rest */
      } finally {
        if (out !== null) this.unwritten--;
        this.pending--;
        this.bytes.give(size);
      }
    });
  }

  /** Whether the socket holds more than `maxBufferedBytes` unsent. */
  private get full(): boolean {
    return this.ws.bufferedAmount > this.maxBufferedBytes;
  }

  /** Writes an answer once the socket has room, after the frame held back for it. */
  private async write(answer: CommandAnswer): Promise<void> {
    while (this.open && this.full)
      await new Promise<void>((resolve) => setTimeout(resolve, DRAIN_POLL_MS).unref());
    if (!this.open) return;
    this.flush();
    this.send(answer);
  }

  private send(answer: CommandAnswer): void {
    this.ws.send(encode(boundAnswer(answer), this.format), { binary: this.format === "msgpack" });
  }

  /** A command over the queue's bound: refused at once, or the socket closed if full. */
  private refuse(ref: string | number | undefined): void {
    if (this.full) {
      this.gone = true;
      closeSocket(
        this.ws,
        1008,
        "not reading: MAX_PENDING_COMMANDS commands waiting and STREAM_MAX_BUFFERED_BYTES unsent",
      );
      return;
    }
    this.send({
      type: "error",
      ref,
      error: "too_many_commands",
      message: `${this.maxPending} commands on this stream are awaiting their answers, the most allowed (MAX_PENDING_COMMANDS); send more once answers come`,
      details: { limit: "MAX_PENDING_COMMANDS", max: this.maxPending },
    });
  }

  /**
   * A command whose bytes would pass the server's STREAM_COMMANDS_MAX_BYTES: refused at
   * once (its answer is small: a client that reads nothing is closed by `refuse` once its
   * own queue is full, as before).
   */
  private refuseBytes(ref: string | number | undefined, size: number): void {
    const { max, used } = this.bytes;
    this.send({
      type: "error",
      ref,
      error: "too_many_commands",
      message: `the server's stream sockets hold ${used} bytes of commands awaiting their answers; this one's ${size} would pass the server's limit of ${max} bytes (STREAM_COMMANDS_MAX_BYTES): send it again once answers come`,
      details: { limit: "STREAM_COMMANDS_MAX_BYTES", maxBytes: max, heldBytes: used, bytes: size },
    });
  }
}

/**
 * An answer with what the client sent quoted short: a quoted run ("…") longer than
 * MAX_ECHO_CHARS, a key, or an issue's path element is cut there with an ellipsis, any
 * other text at MAX_ANSWER_TEXT characters, a list at MAX_ANSWER_LIST entries (the first).
 * An answer so bounded is at most a few kB whatever the message it answers.
 */
export function boundAnswer<T>(answer: T): T {
  return bound(answer, 0, false) as T;
}

function bound(value: unknown, depth: number, inPath: boolean): unknown {
  if (typeof value === "string")
    return inPath ? clip(value, MAX_ECHO_CHARS) : clip(clipQuoted(value), MAX_ANSWER_TEXT);
  if (value === null || typeof value !== "object") return value;
  if (depth >= 8) return "…";
  if (Array.isArray(value))
    return value.slice(0, MAX_ANSWER_LIST).map((v) => bound(v, depth + 1, inPath));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[clip(k, MAX_ECHO_CHARS)] = bound(v, depth + 1, k === "path");
  return out;
}

/** Quoted runs of a text cut at MAX_ECHO_CHARS characters. */
function clipQuoted(text: string): string {
  return text.replace(/"([^"]*)"/g, (whole, inner: string) =>
    inner.length > MAX_ECHO_CHARS ? `"${clip(inner, MAX_ECHO_CHARS)}"` : whole,
  );
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
