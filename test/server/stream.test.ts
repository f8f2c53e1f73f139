/**
 * StreamHub's frame rate at its lower end (src/server/stream.ts), on a stand-in socket:
 * a rate far below STREAM_MIN_FPS (STREAM_FPS may be configured so; ?maxFps is refused
 * below it) waited 1e12 ms for its next frame, which Node's timers cannot hold: they
 * clamped it to 1 ms with a TimeoutOverflowWarning each time (a 1 ms loop and a log flood)
 * and the held frame was never sent. The wait is now at most 1 / STREAM_MIN_FPS.
 */
import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebSocket } from "ws";
import { MAX_ECHO_CHARS } from "../../src/server/errors";
import { boundAnswer, STREAM_MIN_FPS, StreamHub } from "../../src/server/stream";
import { sleep } from "../support/wait";

/** The part of a ws socket the hub uses. */
class FakeSocket extends EventEmitter {
  readonly OPEN = 1;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: string[] = [];
  send(bytes: Uint8Array): void {
    this.sent.push(Buffer.from(bytes).toString("utf8"));
  }
  ping(): void {}
  terminate(): void {}
  close(): void {}
}

const counters = { framesSent: () => {}, framesDropped: () => {} };
/** A state frame as the worker encodes it: `dropped` last, 0 (the hub writes the count). */
const frame = (step: number) =>
  new TextEncoder().encode(`{"type":"state","step":${step},"dropped":0}`);

/** A hub with one subscriber at `fps` frames per second. */
function subscribe(fps: number) {
  const hub = new StreamHub(1 << 20, counters, () => {}); // STREAM_MAX_BUFFERED_BYTES 1 MiB
  const ws = new FakeSocket();
  hub.limitRate(ws as unknown as WebSocket, fps);
  const sub = hub.add("s", ws as unknown as WebSocket, {
    every: 1,
    fields: ["bodies"],
    format: "json",
  });
  const offer = (step: number) =>
    hub.dispatch("s", step, false, [{ key: sub.key, bytes: frame(step) }]);
  return { hub, ws, sub, offer };
}

describe("a subscriber's rate below STREAM_MIN_FPS", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends the held frame within 1 / STREAM_MIN_FPS seconds", () => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"],
    });
    const { hub, ws, sub, offer } = subscribe(1e-9);
    offer(1); // the bucket's one token
    offer(2); // held back
    expect(ws.sent.map((s) => JSON.parse(s).step)).toEqual([1]);
    vi.advanceTimersByTime(1000 / STREAM_MIN_FPS + 100);
    expect(ws.sent.map((s) => JSON.parse(s).step)).toEqual([1, 2]);
    // and no timer keeps firing meanwhile: one wait, not a 1 ms loop
    expect(vi.getTimerCount()).toBeLessThanOrEqual(1); // the heartbeat
    hub.remove(sub);
    hub.close();
  });

  it("never asks Node for a timer it cannot hold (no TimeoutOverflowWarning)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    const { hub, sub, offer } = subscribe(1e-9);
    try {
      offer(1);
      offer(2);
      await sleep(100);
    } finally {
      hub.remove(sub);
      hub.close();
      process.off("warning", onWarning);
    }
    expect(warnings.filter((w) => w === "TimeoutOverflowWarning")).toEqual([]);
  });
});

describe("a subscriber whose socket is full", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds the latest frame (the older ones skipped) and sends it once the socket drains", () => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"],
    });
    const { hub, ws, sub, offer } = subscribe(Number.POSITIVE_INFINITY);
    offer(1);
    ws.bufferedAmount = 2 << 20; // over the bound: the client reads nothing
    offer(2);
    offer(3);
    hub.flush(ws as unknown as WebSocket); // not while full
    vi.advanceTimersByTime(1000);
    expect(ws.sent.map((s) => JSON.parse(s).step)).toEqual([1]);
    ws.bufferedAmount = 0; // it read its backlog; the session has stopped meanwhile
    vi.advanceTimersByTime(100);
    expect(ws.sent.map((s) => JSON.parse(s))).toEqual([
      { type: "state", step: 1, dropped: 0 },
      { type: "state", step: 3, dropped: 1 },
    ]);
    expect(sub.dropped).toBe(1);
    hub.remove(sub);
    hub.close();
  });
});

describe("boundAnswer", () => {
  it("quotes at most MAX_ECHO_CHARS of what the client sent, and keeps the rest as is", () => {
    const long = "x".repeat(10_000);
    const a = boundAnswer({
      type: "error",
      ref: 3,
      error: "invalid_request",
      message: `Unrecognized key: "${long}"; bodies.0: expected number`,
      details: {
        issues: Array.from({ length: 500 }, (_, i) => ({ path: [long, i], message: "bad" })),
        [long]: 1,
      },
    });
    expect(a.message).toBe(
      `Unrecognized key: "${"x".repeat(MAX_ECHO_CHARS)}…"; bodies.0: expected number`,
    );
    const d = a.details as Record<string, unknown> & { issues: { path: unknown[] }[] };
    expect(d.issues).toHaveLength(20);
    expect(d.issues[0]).toEqual({ path: [`${"x".repeat(MAX_ECHO_CHARS)}…`, 0], message: "bad" });
    expect(Object.keys(d)).toEqual(["issues", `${"x".repeat(MAX_ECHO_CHARS)}…`]);
    expect(JSON.stringify(a).length).toBeLessThan(5000);
    const plain = { type: "stepped", ref: "r", step: 4, time: 0.02 };
    expect(boundAnswer(plain)).toEqual(plain);
  });
});
