/**
 * The worker runtime driven in-process (no thread): frames per subscription class at the
 * steps `every` selects, worker-side dropping when the event loop has not drained
 * FRAME_QUEUE_BYTES, the step deadline, and disabled test hooks.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { WorkerOutbound, WorkerRequestBody, WorkerResult } from "../../src/server/protocol";
import { WorkerRuntime } from "../../src/server/worker-runtime";
import { fallingBody } from "../api/helpers";

const LIMIT = 64 * 1024;
let out: WorkerOutbound[];
let inflight: Int32Array;
let rt: WorkerRuntime;
let nextId = 1;

beforeEach(() => {
  out = [];
  const sab = new SharedArrayBuffer(4);
  inflight = new Int32Array(sab);
  rt = new WorkerRuntime(
    { index: 0, inflight: sab, frameQueueBytes: LIMIT, testHooks: false, stepLimitMs: 30_000 },
    (m) => out.push(m),
  );
});

async function call(body: WorkerRequestBody) {
  const id = nextId++;
  rt.handle({ ...body, id } as never);
  for (let i = 0; i < 1000; i++) {
    const r = out.find((m) => m.kind === "reply" && m.id === id);
    if (r && r.kind === "reply") return r;
    await new Promise((res) => setImmediate(res));
  }
  throw new Error("no reply");
}

const frames = () =>
  out.filter((m) => m.kind === "frame") as Extract<WorkerOutbound, { kind: "frame" }>[];
const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

async function created() {
  const r = await call({
    kind: "open",
    sessionId: "s",
    body: Buffer.from(JSON.stringify({ model: fallingBody(10) })),
    maxBodies: 100,
  });
  expect(r.ok).toBe(true);
  return r;
}

describe("WorkerRuntime", () => {
  it("sends one frame per due step and class, and counts their bytes in flight", async () => {
    await created();
    rt.handle({
      kind: "subscriptions",
      sessionId: "s",
      subscriptions: [
        { key: "bodies|json", fields: ["bodies"], format: "json", every: 1 },
        { key: "energy|json", fields: ["energy"], format: "json", every: 4 },
      ],
    });
    const r = await call({ kind: "step", sessionId: "s", steps: 8, deadline: Date.now() + 10_000 });
    expect(r.ok).toBe(true);
    const f = frames();
    expect(f.map((x) => x.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(f.map((x) => x.frames.map((e) => e.key).join("+"))).toEqual([
      "bodies|json",
      "bodies|json",
      "bodies|json",
      "bodies|json+energy|json",
      "bodies|json",
      "bodies|json",
      "bodies|json",
      "bodies|json+energy|json",
    ]);
    const bytes = f.reduce((n, x) => n + x.bytes, 0);
    expect(bytes).toBe(
      f.reduce((n, x) => n + x.frames.reduce((m, e) => m + e.bytes.byteLength, 0), 0),
    );
    expect(Atomics.load(inflight, 0)).toBe(bytes);
    // the frame at step 4: z = 10 − g t²/2 at t = 0.02 s
    const at4 = decode(f[3].frames[0].bytes);
    expect(at4.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * 9.81 * 0.02 ** 2, 12);
    expect(Object.keys(decode(f[3].frames[1].bytes))).toEqual([
      "type",
      "time",
      "step",
      "energy",
      "dropped",
    ]);
  });

  it("drops frames while the event loop holds more than FRAME_QUEUE_BYTES of them", async () => {
    await created();
    rt.handle({
      kind: "subscriptions",
      sessionId: "s",
      subscriptions: [{ key: "bodies|json", fields: ["bodies"], format: "json", every: 1 }],
    });
    Atomics.store(inflight, 0, LIMIT + 1);
    const r = await call({
      kind: "step",
      sessionId: "s",
      steps: 10,
      deadline: Date.now() + 10_000,
    });
    expect(frames()).toHaveLength(0);
    const state = decode((r as { result: WorkerResult & { state: Uint8Array } }).result.state);
    expect(state.step).toBe(10);
    Atomics.store(inflight, 0, 0); // drained
    await call({ kind: "step", sessionId: "s", steps: 1, deadline: Date.now() + 10_000 });
    expect(frames().map((f) => f.step)).toEqual([11]);
  });

  it("a step request past its deadline fails with `timeout` and steps nothing", async () => {
    await created();
    const r = await call({ kind: "step", sessionId: "s", steps: 10, deadline: Date.now() - 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("timeout");
      expect(r.error.details).toMatchObject({ stepsDone: 0, stepsRequested: 10, step: 0 });
    }
  });

  it("refuses fault injection unless test hooks are enabled", async () => {
    const r = await call({ kind: "test", hook: { action: "exit", code: 1 } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/disabled/);
  });

  it("reports invalid models with paths under `model`", async () => {
    const r = await call({
      kind: "open",
      sessionId: "x",
      body: Buffer.from(JSON.stringify({ model: { bodies: [{ id: "a", mass: 0 }] } })),
      maxBodies: 100,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("invalid_model");
      const issues = (r.error.details as { issues: { path: unknown[] }[] }).issues;
      expect(issues[0].path).toEqual(["model", "bodies", 0, "mass"]);
    }
  });
});
