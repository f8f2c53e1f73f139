/**
 * Stream frames across a cluster, through the Bus's per-class logs (Redis Streams).
 *
 * Owner side (`Publisher`): the classes (every, fields, format) wanted by subscribers on any
 * node are read from the bus (on a `want` message, and every REFRESH_MS); the session's
 * worker encodes them, and each frame goes into the log of every class it belongs to (a
 * step divisible by the class's `every`, or a forced frame), fenced by the lease's epoch. A
 * class new to the owner gets the session's current state as its first frame; so does
 * every class after a takeover (the restored state, steps going back to the checkpoint's).
 *
 * Subscriber side (`Relay`): a WebSocket on any node is fed from the log of its class: the
 * scene (from the directory), then the latest frame, or with `?from=<seq>` every frame after
 * that seq (a reconnect: no frame missing, none twice, as long as the log still holds them:
 * LOG_LENGTH per class), then the live frames as they are appended. Every state frame
 * carries its `seq` (withSeq below), which a client keeps to resume from. One read loop per
 * node follows every class its subscribers need (XREAD on all their logs at once).
 */
import { unpack } from "msgpackr";
import type { WebSocket } from "ws";
import type { SceneOut, StreamOptions } from "../../../schemas/api";
import {
  type EncodedScene,
  encodeScene,
  type FrameFormat,
  msgpackUint,
  sceneFrameBytes,
} from "../frames";
import { encodingKey, type Subscription } from "../protocol";
import type { StreamHub, Subscriber } from "../stream";
import { type Bus, type BusFrame, type Cursor, classId, type SessionDirectory } from "./ports";

/** How long a node's want of a class lasts without being renewed. */
export const WANT_TTL_MS = 30_000;
/** How often wants are renewed, and the owner re-reads them. */
export const REFRESH_MS = 5_000;
/** The longest a read of the logs blocks (a new class waits at most this for its first read). */
const BLOCK_MS = 100;
/** Frames read at once from a log when a subscriber catches up. */
const CATCH_UP_BATCH = 1000;

const utf8 = new TextEncoder();
const DROPPED_JSON = utf8.encode(',"dropped":0}');
/** msgpack: fixstr "dropped" (0xa7 + 7 bytes) and the positive fixint 0 */
const DROPPED_MSGPACK = Uint8Array.of(0xa7, ...utf8.encode("dropped"), 0x00);
const SEQ_MSGPACK_KEY = Uint8Array.of(0xa3, ...utf8.encode("seq"));

function endsWith(a: Uint8Array, tail: Uint8Array): boolean {
  if (a.length < tail.length) return false;
  for (let i = 0; i < tail.length; i++) if (a[a.length - tail.length + i] !== tail[i]) return false;
  return true;
}

/**
 * A state frame with `"seq": n` inserted just before its last key, `dropped` (src/server/
 * frames.ts keeps `dropped` last and encoded as 0, so the hub can still patch it): in JSON
 * `…,"dropped":0}` becomes `…,"seq":n,"dropped":0}`; in msgpack the map's size (a fixmap,
 * or a map16) grows by one and the pair is inserted before the `dropped` pair.
 */
export function withSeq(frame: Uint8Array, format: FrameFormat, seq: number): Uint8Array {
  if (format === "json") {
    if (!endsWith(frame, DROPPED_JSON)) throw new Error("not a state frame");
    const at = frame.length - DROPPED_JSON.length + 1; // after the comma
    const ins = utf8.encode(`"seq":${seq},`);
    const out = new Uint8Array(frame.length + ins.length);
    out.set(frame.subarray(0, at), 0);
    out.set(ins, at);
    out.set(frame.subarray(at), at + ins.length);
    return out;
  }
  if (!endsWith(frame, DROPPED_MSGPACK)) throw new Error("not a state frame");
  const value = msgpackUint(seq);
  const at = frame.length - DROPPED_MSGPACK.length;
  const out = new Uint8Array(frame.length + SEQ_MSGPACK_KEY.length + value.length);
  out.set(frame.subarray(0, at), 0);
  out.set(SEQ_MSGPACK_KEY, at);
  out.set(value, at + SEQ_MSGPACK_KEY.length);
  out.set(DROPPED_MSGPACK, at + SEQ_MSGPACK_KEY.length + value.length);
  const head = out[0];
  if (head >= 0x80 && head < 0x8f) out[0] = head + 1;
  else if (head === 0xde) new DataView(out.buffer).setUint16(1, out[1] * 256 + out[2] + 1);
  else throw new Error("not a msgpack map");
  return out;
}

/** A class this node relays: its log's position and its subscribers here. */
interface RelayClass {
  session: string;
  cls: string;
  /** seq of the last frame the live loop read */
  after: number;
  subs: Map<Subscriber, { last: number; catchingUp: boolean }>;
}

/**
 * A session's scene as this node relays it: the directory's JSON bytes it was read from,
 * its session fields, and its static part encoded once in both formats (a 10 000-particle
 * cloth's is 0.6 MB of JSON: decoding and encoding it for every late subscriber cost the
 * event loop tens of ms each).
 */
interface RelayScene {
  raw: Uint8Array;
  head: Record<string, unknown>;
  encoded: EncodedScene;
}

/** The subscriber side: see the head of this file. */
export class Relay {
  private readonly classes = new Map<string, RelayClass>();
  /** the scenes of the sessions with subscribers here */
  private readonly scenes = new Map<string, RelayScene>();
  private readonly bySub = new Map<Subscriber, RelayClass>();
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** the bus failed its last read (Redis unreachable) */
  failing = false;

  constructor(
    private readonly bus: Bus,
    private readonly directory: SessionDirectory,
    private readonly streams: StreamHub,
    /** a frame read from the logs was sent to a subscriber here (metrics) */
    private readonly relayed: () => void,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
    this.timer = setInterval(() => void this.renewWants(), REFRESH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.wake?.();
    await this.loop;
  }

  /**
   * Attaches an upgraded WebSocket to a session's frames on this node (any node): the
   * scene, then the latest frame or every frame after `from`, then the live ones.
   */
  async subscribe(
    session: string,
    ws: WebSocket,
    opts: StreamOptions,
    from: number | null,
  ): Promise<void> {
    const sub = this.streams.add(session, ws, opts);
    const key = encodingKey(opts.fields, opts.format);
    const cls = classId({ every: opts.every, key });
    const [scene, latest] = await Promise.all([this.scene(session), this.bus.latest(session, cls)]);
    if (scene) {
      const head = latest
        ? { ...scene.head, ...timeAndStep(latest.bytes, opts.format) }
        : scene.head;
      this.streams.sendRaw(sub, sceneFrameBytes(head, scene.encoded, opts.format));
    }
    const id = `${session}\n${cls}`;
    let c = this.classes.get(id);
    if (!c) {
      c = { session, cls, after: latest?.seq ?? 0, subs: new Map() };
      this.classes.set(id, c);
      this.wake?.();
    }
    this.bySub.set(sub, c);
    ws.once("close", () => this.drop(sub));
    if (from === null) {
      // the latest frame, then the live ones
      const state = { last: latest?.seq ?? 0, catchingUp: false };
      c.subs.set(sub, state);
      if (latest && latest.seq <= c.after) this.send(sub, state, latest, opts.format);
      return;
    }
    const state = { last: from, catchingUp: true };
    c.subs.set(sub, state);
    try {
      for (let empty = 0; ; ) {
        const frames = await this.bus.range(session, cls, state.last, CATCH_UP_BATCH);
        for (const f of frames) if (f.seq <= c.after) this.send(sub, state, f, opts.format);
        // caught up with the live loop (synchronously: no frame can slip in between)
        if (
          state.last >= c.after ||
          (frames.length > 0 && frames[frames.length - 1].seq >= c.after)
        )
          break;
        // none after `last`, and yet the live loop took frames past it (skipped for this
        // subscriber, catching up): appended after this read ran in Redis, the live loop's
        // answer (on the bus's own connection) handled first — read again. Ending the catch-up
        // here lost them (the kill -9 test's resumed subscriber missed seq 36 once in 11 runs).
        // Twice none: the log holds nothing more of them (Redis restarted without its data)
        if (frames.length === 0 && ++empty >= 2) break;
      }
    } finally {
      state.catchingUp = false;
    }
  }

  /**
   * A session's scene from the directory, decoded and encoded only when its bytes are new to
   * this node (a session's first subscriber here, or a scene put again): later subscribers
   * share the encoded part, joined to their time and step (frames.ts sceneFrameBytes).
   */
  private async scene(session: string): Promise<RelayScene | null> {
    const raw = await this.directory.scene(session);
    if (!raw) return null;
    const known = this.scenes.get(session);
    if (known && Buffer.compare(known.raw, raw) === 0) return known;
    const { bodies, joints, fem, ...head } = JSON.parse(
      Buffer.from(raw).toString("utf8"),
    ) as Record<string, unknown>;
    const scene = { raw, head, encoded: encodeScene({ bodies, joints, fem } as SceneOut) };
    this.scenes.set(session, scene);
    return scene;
  }

  private send(sub: Subscriber, state: { last: number }, f: BusFrame, format: FrameFormat): void {
    if (f.seq <= state.last) return;
    state.last = f.seq;
    this.streams.dispatchTo(sub, f.step, f.forced, withSeq(f.bytes, format, f.seq));
    this.relayed();
  }

  private drop(sub: Subscriber): void {
    const c = this.bySub.get(sub);
    this.bySub.delete(sub);
    if (!c) return;
    c.subs.delete(sub);
    if (c.subs.size > 0) return;
    this.classes.delete(`${c.session}\n${c.cls}`);
    // the scene goes with the session's last class here
    for (const other of this.classes.values()) if (other.session === c.session) return;
    this.scenes.delete(c.session);
  }

  /** Declares (again) this node's classes of a session (its subscribers changed). */
  async want(session: string, subs: Subscription[]): Promise<void> {
    if (subs.length === 0) return;
    await Promise.all(subs.map((s) => this.bus.want(session, s, WANT_TTL_MS)));
    await this.bus.control({ type: "want", session });
  }

  private async renewWants(): Promise<void> {
    const sessions = new Set([...this.classes.values()].map((c) => c.session));
    for (const s of sessions)
      await this.want(s, this.streams.subscriptions(s)).catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (this.running) {
      const classes = [...this.classes.values()];
      if (classes.length === 0) {
        await new Promise<void>((res) => {
          this.wake = res;
          setTimeout(res, BLOCK_MS).unref();
        });
        this.wake = null;
        continue;
      }
      const cursors: Cursor[] = classes.map((c) => ({
        session: c.session,
        cls: c.cls,
        after: c.after,
      }));
      let got: { cursor: Cursor; frames: BusFrame[] }[];
      try {
        got = await this.bus.read(cursors, BLOCK_MS);
        this.failing = false;
      } catch {
        this.failing = true;
        await new Promise((res) => setTimeout(res, 250).unref());
        continue;
      }
      for (const { cursor, frames } of got) {
        const c = this.classes.get(`${cursor.session}\n${cursor.cls}`);
        if (!c) continue;
        for (const f of frames) {
          if (f.seq <= c.after) continue;
          c.after = f.seq;
          for (const [sub, state] of c.subs)
            if (!state.catchingUp) this.send(sub, state, f, sub.format);
        }
      }
    }
  }
}

/** time and step of an encoded state frame (the scene frame of a late subscriber). */
function timeAndStep(bytes: Uint8Array, format: FrameFormat): { time?: number; step?: number } {
  try {
    const f = (
      format === "json" ? JSON.parse(Buffer.from(bytes).toString("utf8")) : unpack(bytes)
    ) as { time?: number; step?: number };
    return f.time === undefined || f.step === undefined ? {} : { time: f.time, step: f.step };
  } catch {
    return {};
  }
}
