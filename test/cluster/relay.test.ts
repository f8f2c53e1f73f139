/**
 * The relay's scene frames (src/server/cluster/relay.ts): a stream opened on a node that does
 * not hold the session gets the scene from the directory (its JSON bytes, without time and
 * step) completed with the latest frame's time and step. The scene's static part (bodies,
 * joints, fem: a 10 000-particle cloth's is 0.6 MB of JSON) is decoded and encoded once per
 * session on the node, and shared by every later subscriber in either format; before, each
 * late subscriber had the event loop parse and encode the whole scene again. A subscriber
 * resuming after a seq gets every frame after it, one the read loop took while the catch-up
 * read's answer was on its way included (until 2026-12-07 it was skipped).
 */
import { EventEmitter } from "node:events";
import { unpack } from "msgpackr";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SceneOut } from "../../schemas/api";
import { MemoryBus, MemoryCluster, MemoryDirectory } from "../../src/server/cluster/memory";
import { classId } from "../../src/server/cluster/ports";
import { Relay } from "../../src/server/cluster/relay";
import { encodeScene, packr, sceneFrameBytes } from "../../src/server/frames";
import { encodingKey } from "../../src/server/protocol";
import type { StreamHub, Subscriber } from "../../src/server/stream";
import { waitFor } from "../support/wait";

/** The hub's side the relay uses: the scene frames sent to each subscriber. */
class Hub {
  scenes: { format: string; bytes: Uint8Array }[] = [];
  add(sessionId: string, ws: EventEmitter, opts: { format: string }): Subscriber {
    return { sessionId, ws, format: opts.format } as unknown as Subscriber;
  }
  sendRaw(sub: Subscriber, bytes: Uint8Array): void {
    this.scenes.push({ format: sub.format, bytes });
  }
  /** the state frames sent to each subscriber, by its socket: their steps */
  dispatched: { ws: EventEmitter; step: number }[] = [];
  dispatchTo(sub: Subscriber, step: number): void {
    this.dispatched.push({ ws: sub.ws as unknown as EventEmitter, step });
  }
  steps(ws: EventEmitter): number[] {
    return this.dispatched.filter((d) => d.ws === ws).map((d) => d.step);
  }
  subscriptions(): [] {
    return [];
  }
}

/** A scene of `n` particles (0.1 MB of JSON for 1000). */
function sceneOf(n: number): SceneOut {
  return {
    bodies: Array.from({ length: n }, (_, i) => ({
      id: `p${i}`,
      kind: "particle" as const,
      fixed: i === 0,
      shapes: [{ type: "sphere", radius: 0.01 }],
    })),
    joints: [],
    fem: [],
  } as unknown as SceneOut;
}

const decode = (f: { format: string; bytes: Uint8Array }) =>
  (f.format === "json"
    ? JSON.parse(Buffer.from(f.bytes).toString("utf8"))
    : unpack(f.bytes)) as Record<string, unknown>;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("relay scene frames", () => {
  it("decode and encode the scene once per session, shared by every late subscriber", async () => {
    const cluster = new MemoryCluster();
    const directory = new MemoryDirectory(cluster);
    const bus = new MemoryBus(cluster);
    const hub = new Hub();
    const relay = new Relay(bus, directory, hub as unknown as StreamHub, () => undefined);
    const scene = sceneOf(1000);
    const raw = sceneFrameBytes(
      { type: "scene", session: "s", name: "cloth" },
      encodeScene(scene),
      "json",
    );
    await directory.putScene("s", raw);
    // the owner's latest frame of each class, at t = 0.5 s, step 30
    const lease = await directory.claim("s", "owner", 10_000);
    const epoch = (lease as NonNullable<typeof lease>).epoch;
    const fields = ["bodies"] as never;
    for (const format of ["json", "msgpack"] as const) {
      const state = { type: "state", session: "s", time: 0.5, step: 30, dropped: 0 };
      const bytes =
        format === "json" ? Buffer.from(JSON.stringify(state)) : new Uint8Array(packr.pack(state));
      const cls = classId({ every: 1, key: encodingKey(fields, format) });
      await bus.publish("s", cls, epoch, { step: 30, forced: true, bytes });
    }
    const parse = vi.spyOn(JSON, "parse");
    const stringify = vi.spyOn(JSON, "stringify");
    const pack = vi.spyOn(packr, "pack");
    const withBodies = (args: unknown[]) =>
      typeof args[0] === "object" && args[0] !== null && "bodies" in args[0];
    const sockets: EventEmitter[] = [];
    const formats = ["json", "msgpack", "json", "msgpack", "json"] as const;
    for (const format of formats) {
      const ws = new EventEmitter();
      sockets.push(ws);
      await relay.subscribe("s", ws as never, { every: 1, fields, format } as never, null);
    }
    // the scene's JSON decoded once, its part encoded once in each format
    expect(parse.mock.calls.filter((c) => String(c[0]).length >= raw.length).length).toBe(1);
    expect(stringify.mock.calls.filter(withBodies).length).toBe(1);
    expect(pack.mock.calls.filter(withBodies).length).toBe(1);
    // every subscriber's scene frame: the session's fields, the latest time and step, the scene
    expect(hub.scenes.map((f) => f.format)).toEqual([...formats]);
    for (const f of hub.scenes) {
      const frame = decode(f);
      expect(Object.keys(frame)).toEqual([
        "type",
        "session",
        "name",
        "time",
        "step",
        "bodies",
        "joints",
        "fem",
      ]);
      expect(frame).toEqual({
        type: "scene",
        session: "s",
        name: "cloth",
        time: 0.5,
        step: 30,
        ...scene,
      });
    }
    // a scene put again (a takeover) is read anew
    await directory.putScene(
      "s",
      sceneFrameBytes(
        { type: "scene", session: "s", name: "moved" },
        encodeScene(sceneOf(3)),
        "json",
      ),
    );
    const ws = new EventEmitter();
    sockets.push(ws);
    await relay.subscribe("s", ws as never, { every: 1, fields, format: "msgpack" } as never, null);
    const last = decode(hub.scenes[hub.scenes.length - 1]);
    expect(last.name).toBe("moved");
    expect(last.bodies).toHaveLength(3);
    expect(last.step).toBe(30);
    for (const s of sockets) s.emit("close");
  });
});

describe("a subscriber resuming after a seq (?from=)", () => {
  it("gets every frame after it, one the read loop took while its catch-up read was answered too", async () => {
    const cluster = new MemoryCluster();
    const directory = new MemoryDirectory(cluster);
    const bus = new MemoryBus(cluster);
    const hub = new Hub();
    const relay = new Relay(bus, directory, hub as unknown as StreamHub, () => undefined);
    const lease = await directory.claim("s", "owner", 10_000);
    const epoch = (lease as NonNullable<typeof lease>).epoch;
    const fields = ["energy"] as never;
    const cls = classId({ every: 1, key: encodingKey(fields, "json") });
    const publish = (step: number) =>
      bus.publish("s", cls, epoch, {
        step,
        forced: false,
        bytes: Buffer.from(
          JSON.stringify({ type: "state", session: "s", time: step, step, dropped: 0 }),
        ),
      });
    for (const step of [1, 2, 3]) await publish(step);
    relay.start();
    try {
      const opts = { every: 1, fields, format: "json" } as never;
      // a live subscriber: the class's read loop runs
      const live = new EventEmitter();
      await relay.subscribe("s", live as never, opts, null);
      // the resuming one's catch-up read runs at once (nothing after seq 3 yet), its answer
      // held back until the read loop has taken the frame published next: the two reads go
      // on two Redis connections, whose answers may come in either order
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => {
        release = r;
      });
      const range = bus.range.bind(bus);
      let reads = 0;
      vi.spyOn(bus, "range").mockImplementation(async (...args) => {
        const frames = await range(...args);
        reads++;
        await held;
        return frames;
      });
      const resuming = new EventEmitter();
      const subscribed = relay.subscribe("s", resuming as never, opts, 3);
      await waitFor(() => reads === 1, 5000);
      await publish(4);
      await waitFor(() => hub.steps(live).includes(4), 5000);
      release();
      await subscribed;
      await publish(5);
      await waitFor(() => hub.steps(live).includes(5), 5000);
      // before: [5], the frame of seq 4 missing (the read loop had skipped it for this
      // subscriber, still catching up, and the catch-up read's empty answer ended its catch-up)
      expect(hub.steps(resuming)).toEqual([4, 5]);
      for (const ws of [live, resuming]) ws.emit("close");
    } finally {
      await relay.stop();
    }
  });
});
