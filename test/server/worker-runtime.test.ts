import { unpack } from "msgpackr";
import { beforeEach, describe, expect, it } from "vitest";
import { clothModel } from "../../bench/scenes";
import type { ContactPeakOut } from "../../schemas/api";
import { loadModel } from "../../src/engine/simulation/build";
import type {
  Subscription,
  WorkerOutbound,
  WorkerRequestBody,
  WorkerResult,
} from "../../src/server/protocol";
import { sessionDocument } from "../../src/server/sessions/checkpoints";
import { WorkerRuntime } from "../../src/server/worker-runtime";
import { readExample } from "../support/examples";
import { unitTetFem } from "../support/fem";
import { fallingBody } from "../support/models";

const LIMIT = 64 * 1024;
let out: WorkerOutbound[];
/** the ArrayBuffers each message transferred (parallel to `out`) */
let transfers: ArrayBuffer[][];
let inflight: Int32Array;
let rt: WorkerRuntime;
let nextId = 1;

beforeEach(() => {
  out = [];
  transfers = [];
  const sab = new SharedArrayBuffer(4);
  inflight = new Int32Array(sab);
  rt = new WorkerRuntime(
    { index: 0, inflight: sab, frameQueueBytes: LIMIT, testHooks: false, stepLimitMs: 30_000 },
    (m, t) => {
      out.push(m);
      transfers.push(t ?? []);
    },
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
    body: Buffer.from(JSON.stringify({ model: fallingBody({ z0: 10 }) })),
    maxBodies: 100,
  });
  expect(r.ok).toBe(true);
  return r;
}

describe("WorkerRuntime", () => {
  it("exports a large session's snapshot with room around it: the event loop wraps it as the session document without copying it", async () => {
    const id = nextId++;
    rt.handle({
      kind: "open",
      sessionId: "big",
      body: Buffer.from(JSON.stringify({ model: clothModel({ n: 30 }) })),
      maxBodies: 10_000,
      id,
    } as never);
    const exported = await call({ kind: "export", sessionId: "big" });
    if (!exported.ok || exported.result.kind !== "exported") throw new Error("no export");
    const engine = exported.result.bytes;
    // moved, not copied
    expect(transfers[out.indexOf(exported)]).toContain(engine.buffer);
    const at = { status: "ready" as const, message: null, time: 0, step: 0 };
    const rec = { id: "big", name: 'cloth "30"', createdAt: new Date(0), ...at };
    const document = sessionDocument(rec as never, engine, at);
    // the document is the engine snapshot's own buffer, head and tail written around it
    expect(document.buffer).toBe(engine.buffer);
    expect(document.byteLength).toBeGreaterThan(engine.byteLength);
    const parsed = decode(document);
    expect(parsed.simulation).toEqual(decode(engine));
    expect(parsed.session).toMatchObject({ id: "big", name: rec.name, status: "ready", step: 0 });
    expect(Object.keys(parsed)).toEqual(["format", "version", "session", "simulation"]);
  });

  it("answers a creation with its scene encoded in both formats, transferred: the event loop neither clones nor encodes it", async () => {
    // the cloth example (121 particles, springs) with a tetrahedron: bodies and fem
    const model = { ...readExample("cloth"), fem: [unitTetFem()] };
    const id = nextId++;
    rt.handle({
      kind: "open",
      sessionId: "s",
      body: Buffer.from(JSON.stringify({ model })),
      maxBodies: 10_000,
      id,
    } as never);
    let r: WorkerOutbound | undefined;
    for (let i = 0; i < 1000 && !r; i++) {
      r = out.find((m) => m.kind === "reply" && m.id === id);
      if (!r) await new Promise((res) => setImmediate(res));
    }
    if (r?.kind !== "reply" || !r.ok || r.result.kind !== "created") throw new Error("no creation");
    const { scene } = r.result;
    expect(scene.json).toBeInstanceOf(Uint8Array);
    expect(scene.msgpack).toBeInstanceOf(Uint8Array);
    // moved to the event loop, not copied (a structured clone of objects costs it tens of
    // milliseconds for a 10 000-particle cloth)
    const moved = transfers[out.indexOf(r)];
    expect(moved).toContain(scene.json.buffer);
    expect(moved).toContain(scene.msgpack.buffer);
    // the bytes are the engine's scene, built here from the same model
    const sim = loadModel(model).scene();
    const expected = { bodies: sim.bodies, joints: sim.joints, fem: sim.fem ?? [] };
    expect(expected.fem.length).toBeGreaterThan(0);
    expect(decode(scene.json)).toEqual(expected);
    expect(unpack(scene.msgpack)).toEqual(expected);
  });

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
    const r = await call({ kind: "step", sessionId: "s", steps: 8, limitMs: 10_000 });
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
      "keptStep",
      "dropped",
    ]);
    expect(at4.keptStep).toBe(null); // no store has told it of a checkpoint
  });

  it("stamps its frames with the step the event loop last said the store holds (`kept`)", async () => {
    await created();
    rt.handle({
      kind: "subscriptions",
      sessionId: "s",
      subscriptions: [{ key: "bodies|json", fields: ["bodies"], format: "json", every: 1 }],
    });
    rt.handle({ kind: "kept", sessionId: "s", step: 0 });
    expect((await call({ kind: "step", sessionId: "s", steps: 2, limitMs: 10_000 })).ok).toBe(true);
    rt.handle({ kind: "kept", sessionId: "s", step: 2 });
    expect((await call({ kind: "step", sessionId: "s", steps: 2, limitMs: 10_000 })).ok).toBe(true);
    const kept = frames().map((x) => [x.step, decode(x.frames[0].bytes).keptStep]);
    expect(kept).toEqual([
      [1, 0],
      [2, 0],
      [3, 2],
      [4, 2],
    ]);
    // a subscriber's first frame (`snapshot`) too
    const first = await call({
      kind: "snapshot",
      sessionId: "s",
      encoding: { key: "bodies|json", fields: ["bodies"], format: "json" },
    });
    expect(
      first.ok && first.result.kind === "frame" && decode(first.result.bytes as Uint8Array),
    ).toMatchObject({ step: 4, keptStep: 2 });
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
      limitMs: 10_000,
    });
    expect(frames()).toHaveLength(0);
    const state = decode((r as { result: WorkerResult & { state: Uint8Array } }).result.state);
    expect(state.step).toBe(10);
    Atomics.store(inflight, 0, 0); // drained
    await call({ kind: "step", sessionId: "s", steps: 1, limitMs: 10_000 });
    expect(frames().map((f) => f.step)).toEqual([11]);
  });

  it("a step request past its deadline fails with `timeout` and steps nothing", async () => {
    await created();
    const r = await call({ kind: "step", sessionId: "s", steps: 10, limitMs: -1 });
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

const BALL = readExample("bouncing-ball");

/** Σ normalForce of the State's contacts after every step 1..n of the bouncing ball, alone. */
function referenceForces(n: number): number[] {
  const sim = loadModel(BALL);
  const out = [0]; // step 0: no step yet
  for (let k = 1; k <= n; k++) {
    sim.step(1);
    out.push(sim.state().contacts.reduce((a, c) => a + c.normalForce, 0));
  }
  return out;
}

/** The expected contactPeak of a frame at `step` covering the `steps` steps before it. */
function window(ref: number[], step: number, steps: number): ContactPeakOut {
  const span = ref.slice(step - steps + 1, step + 1);
  return {
    steps,
    maxNormalForce: Math.max(0, ...span),
    normalImpulse: span.reduce((a, f) => a + f * BALL.solver.dt, 0),
  };
}

function expectPeak(got: ContactPeakOut, want: ContactPeakOut) {
  expect(got.steps).toBe(want.steps);
  expect(got.maxNormalForce).toBeCloseTo(want.maxNormalForce, 9);
  expect(got.normalImpulse).toBeCloseTo(want.normalImpulse, 9);
}

describe("replays of recordings (GET recording?every=k)", () => {
  it("run one at a time: each starts (and its REQUEST_TIMEOUT_MS counts) once the one before it has answered", async () => {
    await created();
    expect((await call({ kind: "step", sessionId: "s", steps: 50, limitMs: 10_000 })).ok).toBe(
      true,
    );
    const ids = [0, 1, 2].map(() => nextId++);
    for (const id of ids)
      rt.handle({ kind: "recording", sessionId: "s", every: 10, maxSteps: 1000, id } as never);
    // and a request without every is answered at once, whatever replays are queued
    const plain = await call({ kind: "recording", sessionId: "s", every: null, maxSteps: 1000 });
    expect(plain.ok).toBe(true);
    for (let i = 0; i < 1000 && !ids.every((id) => replyOf(id)); i++)
      await new Promise((res) => setImmediate(res));
    // started(a), reply(a), started(b), reply(b), …: replays interleaved chunk by chunk shared
    // their time limit (12 concurrent replays of a 50-step cloth all ended 409)
    const events = out
      .map((m, at) => ({ m, at }))
      .filter(({ m }) => (m.kind === "started" || m.kind === "reply") && ids.includes(m.id))
      .map(({ m }) => `${m.kind}:${ids.indexOf((m as { id: number }).id)}`);
    expect(events).toEqual([
      "started:0",
      "reply:0",
      "started:1",
      "reply:1",
      "started:2",
      "reply:2",
    ]);
    // each the same states: at steps 10, 20, …, 50 (the last the session's own)
    const texts = ids.map((id) => {
      const r = replyOf(id);
      if (!r?.ok || r.result.kind !== "exported") throw new Error("no recording");
      return decode(r.result.bytes) as { states: { step: number }[] };
    });
    expect(texts[0].states.map((x) => x.step)).toEqual([10, 20, 30, 40, 50]);
    expect(texts[1]).toEqual(texts[0]);
    expect(texts[2]).toEqual(texts[0]);
  });
});

/** The reply to request `id`, if it came. */
function replyOf(id: number) {
  const r = out.find((m) => m.kind === "reply" && m.id === id);
  return r?.kind === "reply" ? r : undefined;
}

describe("contactPeak", () => {
  const peakSub = (every: number): Subscription => ({
    key: "contactPeak|json",
    fields: ["contactPeak"],
    format: "json",
    every,
  });
  const ball = () =>
    call({
      kind: "open",
      sessionId: "b",
      body: Buffer.from(JSON.stringify({ model: BALL })),
      maxBodies: 100,
    });
  const peaks = () =>
    frames().map((f) => ({ step: f.step, peak: decode(f.frames[0].bytes).contactPeak }));
  const stepBall = (steps: number) =>
    call({ kind: "step", sessionId: "b", steps, limitMs: 10_000 });

  it("carries the largest contact force and the impulse of the steps since the class's last frame", async () => {
    expect((await ball()).ok).toBe(true);
    rt.handle({ kind: "subscriptions", sessionId: "b", subscriptions: [peakSub(7)] });
    // the first two impacts, within steps 215 and 557: from z = 1 m (radius 0.1 m) the ball
    // lands at t₁ = √(2 · 0.9 / g) = 0.42835 s (214.2 h, h = 2 ms), rebounds at 0.8 · g t₁ and
    // lands again 2 · 0.8 t₁ later, at 1.11371 s (556.9 h)
    const n = 560;
    await stepBall(n);
    const ref = referenceForces(n);
    const got = peaks();
    expect(got.map((f) => f.step)).toEqual(Array.from({ length: 80 }, (_, i) => 7 * (i + 1)));
    for (const f of got) expectPeak(f.peak, window(ref, f.step, 7));
    // every impact shows in the frame after it, though no frame falls on its step
    const impacts = ref.flatMap((f, k) => (f > 1000 ? [k] : []));
    expect(impacts).toEqual([215, 557]);
    for (const k of impacts) {
      const f = got.find((x) => x.step >= k)!;
      expect(f.step).not.toBe(k);
      expect(f.peak.maxNormalForce).toBeCloseTo(ref[k], 9);
      expect(f.peak.maxNormalForce).toBeGreaterThan(3000); // m (1 + e) v / h, v ≈ 4.2 m/s
    }
  });

  it("classes of one encoding share the longest window; a dropped frame's steps go to the next; a reset starts afresh", async () => {
    expect((await ball()).ok).toBe(true);
    rt.handle({ kind: "subscriptions", sessionId: "b", subscriptions: [peakSub(1), peakSub(4)] });
    await stepBall(212);
    const ref = referenceForces(230);
    out = [];
    await stepBall(4); // steps 213..216: the impact at 215, in the frame at 215 and at 216
    expect(peaks().map((f) => [f.step, f.peak.steps])).toEqual([
      [213, 1],
      [214, 1],
      [215, 1],
      [216, 4], // due for every = 1 and every = 4: the longer interval
    ]);
    expectPeak(peaks()[2].peak, window(ref, 215, 1));
    expectPeak(peaks()[3].peak, window(ref, 216, 4));

    // the event loop is behind: frames are dropped, the next one covers their steps
    Atomics.store(inflight, 0, LIMIT + 1);
    await stepBall(5); // 217..221
    Atomics.store(inflight, 0, 0);
    out = [];
    await stepBall(1); // 222: for every = 1, the steps 217..222
    expect(peaks().map((f) => [f.step, f.peak.steps])).toEqual([[222, 6]]);
    expectPeak(peaks()[0].peak, window(ref, 222, 6));

    out = [];
    expect((await stepBall(1)).ok).toBe(true); // 223
    const r = await call({ kind: "reset", sessionId: "b" });
    expect(r.ok).toBe(true);
    expect(peaks()).toEqual([
      { step: 223, peak: window(ref, 223, 1) },
      { step: 0, peak: { steps: 0, maxNormalForce: 0, normalImpulse: 0 } },
    ]);
    out = [];
    await stepBall(4);
    expect(peaks().at(-1)).toEqual({ step: 4, peak: expect.objectContaining({ steps: 4 }) });
  });
});
