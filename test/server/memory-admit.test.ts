/**
 * A solver worker admits a session by its estimated memory (src/server/sessions/memory.ts)
 * BEFORE it builds its model (worker-runtime.ts admit): a refused model costs its
 * validation, not its build — about 2.6 times the heap the session would then keep, and
 * for a model far past the budget enough of the worker's time and heap to end it. Driven in
 * process with the engine's buildSimulation counted (every build goes through it: a model,
 * a snapshot's model, a recording's), under a 22 MiB budget (WORKER_SESSION_MEMORY_MB): a
 * 30×30 cloth (measured 8.3 MiB of heap and ArrayBuffers) is estimated at 192 KiB +
 * 900·4352 + 3393·1536 bytes = 8.89 MiB, two fit, a
 * third — from a model, an engine snapshot (a fork), a session document or a recording —
 * is refused with insufficient_memory and never built, while a session running on the
 * worker steps on.
 *
 * And a client's snapshot holding more inputs pending than MAX_PENDING_INPUTS is refused
 * (400 naming it) before its model is built; the server's own restores (a fork) are not,
 * nor is a recording (a run to replay whole: one longer than the limit was refused, 400,
 * and could never be posted back), whose pending inputs count against the memory budget
 * instead.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { clothModel } from "../../bench/scenes";
import { SESSION_SNAPSHOT_FORMAT, SESSION_SNAPSHOT_VERSION } from "../../schemas/api";
import { loadModel, recordingOf } from "../../src/engine/index";
import type { WorkerInit, WorkerRequestBody } from "../../src/server/protocol";
import type { WorkerRuntime } from "../../src/server/worker-runtime";
import { fallingBody } from "../support/models";
import { InProcessWorker, type Reply } from "../support/worker-runtime";

const builds = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/engine/simulation/build", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/engine/simulation/build")>();
  return {
    ...real,
    buildSimulation: (...args: Parameters<typeof real.buildSimulation>) => {
      builds.count++;
      return real.buildSimulation(...args);
    },
  };
});

const MiB = 2 ** 20;
const cloth = { ...clothModel({ n: 30 }), name: "cloth30" };
const clothBytes = 192 * 1024 + 900 * 4352 + 3393 * 1536;
const BUDGET = 22 * MiB;

let rt: WorkerRuntime | null = null;
let worker: InProcessWorker | null = null;

function runtime(init: Partial<WorkerInit>): WorkerRuntime {
  worker = new InProcessWorker(init);
  rt = worker.runtime;
  return rt;
}

afterEach(() => {
  worker?.shutdown();
  worker = null;
  rt = null;
});

const call = (body: WorkerRequestBody): Promise<Reply> => (worker as InProcessWorker).call(body);

const json = (x: unknown) => Buffer.from(JSON.stringify(x));
const open = (sessionId: string, body: unknown) =>
  call({ kind: "open", sessionId, body: json(body), maxBodies: 10_000 });
const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

async function exported(sessionId: string): Promise<Uint8Array> {
  const r = await call({ kind: "export", sessionId });
  if (!r.ok || r.result.kind !== "exported") throw new Error("no export");
  return r.result.bytes;
}

async function stepOf(sessionId: string): Promise<number> {
  const r = await call({ kind: "state", sessionId });
  if (!r.ok || r.result.kind !== "state") throw new Error("no state");
  return decode(r.result.state).step;
}

function refusal(r: Reply, held: number) {
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.error.code).toBe("insufficient_memory");
  expect(r.error.details).toEqual({
    limit: "WORKER_SESSION_MEMORY_MB",
    budgetBytes: BUDGET,
    sessionBytes: clothBytes,
    heldBytes: held,
  });
  expect(r.error.message).toContain("WORKER_SESSION_MEMORY_MB");
}

describe("admission by estimated memory in the worker, before the build", () => {
  it("a cloth past the budget is refused from a model, a snapshot, a document and a recording, never built; a running session steps on", async () => {
    runtime({ sessionMemoryBytes: BUDGET });
    const small = 192 * 1024 + 6 * 1024;
    expect((await open("small", { model: fallingBody() })).ok).toBe(true);
    expect(
      (await call({ kind: "run", sessionId: "small", realtimeFactor: null, until: null })).ok,
    ).toBe(true);
    expect((await open("a", { model: cloth })).ok).toBe(true);
    expect((await open("b", { model: cloth })).ok).toBe(true);
    const held = small + 2 * clothBytes;
    const snapshot = await exported("a");
    const recording = recordingOf(loadModel(cloth));
    const stepBefore = await stepOf("small");
    const built = builds.count;

    refusal(await open("c", { model: cloth }), held);
    refusal(
      await call({
        kind: "restore",
        sessionId: "d",
        name: "fork",
        snapshot,
        status: "ready",
        message: null,
      }),
      held,
    );
    const document = {
      format: SESSION_SNAPSHOT_FORMAT,
      version: SESSION_SNAPSHOT_VERSION,
      session: { name: "cloth30", status: "ready" },
      simulation: decode(snapshot),
    };
    refusal(await open("e", { snapshot: document }), held);
    refusal(await open("f", { recording }), held);
    expect(builds.count).toBe(built);
    // nothing of them kept: a fourth exists nowhere
    expect((await call({ kind: "state", sessionId: "c" })).ok).toBe(false);

    // the running session went on stepping meanwhile
    const until = (await stepOf("small")) + 50;
    while ((await stepOf("small")) < until) await new Promise((res) => setImmediate(res));
    expect(await stepOf("small")).toBeGreaterThan(stepBefore);

    // room again once one goes: the next one is built
    rt?.handle({ kind: "cancel", sessionId: "a" });
    expect((await call({ kind: "delete", sessionId: "a" })).ok).toBe(true);
    const r = await open("c", { model: cloth });
    expect(r.ok).toBe(true);
    if (r.ok && r.result.kind === "created") expect(r.result.origin.memoryBytes).toBe(clothBytes);
    expect(builds.count).toBe(built + 1);
  });
});

describe("a client's snapshot within MAX_PENDING_INPUTS", () => {
  it("more pending than the limit: 400 naming it, not built; a fork of the same is restored", async () => {
    // 5 inputs pending for later steps, under the format's own limit
    runtime({});
    expect((await open("src", { model: fallingBody() })).ok).toBe(true);
    for (let k = 1; k <= 5; k++) {
      const r = await call({
        kind: "inputs",
        sessionId: "src",
        inputs: [
          {
            type: "impulse",
            id: "ball",
            impulse: [0, 0, k * 1e-3],
            point: [0, 0, 0],
            angularImpulse: [0, 0, 0],
          },
        ],
        step: 10 * k,
      });
      expect(r.ok).toBe(true);
    }
    const snapshot = await exported("src");
    expect(decode(snapshot).controls.pending).toHaveLength(5);
    rt?.handle({ kind: "shutdown" });

    runtime({ maxPendingInputs: 3 });
    const built = builds.count;
    const r = await open("c", {
      snapshot: {
        format: SESSION_SNAPSHOT_FORMAT,
        version: SESSION_SNAPSHOT_VERSION,
        session: { name: "fall", status: "ready" },
        simulation: decode(snapshot),
      },
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("invalid_request");
      expect(r.error.details).toMatchObject({
        limit: "MAX_PENDING_INPUTS",
        max: 3,
        issues: [{ path: ["snapshot", "simulation", "controls", "pending"] }],
      });
      expect(r.error.message).toContain("5 inputs pending, above MAX_PENDING_INPUTS (3)");
    }
    expect(builds.count).toBe(built);
    // the server's own restore (a fork, a checkpoint) keeps what it held
    const fork = await call({
      kind: "restore",
      sessionId: "fork",
      name: "fall",
      snapshot,
      status: "ready",
      message: null,
    });
    expect(fork.ok).toBe(true);
  });
});

describe("a client's recording longer than MAX_PENDING_INPUTS", () => {
  // a falling body's recording from t = 0 with 6 impulses at steps 0, 10, 20, ..., 50 (the
  // one at step 0 applied at once, never pending): its session starts with 5 pending
  const at = (step: number, k: number) => ({
    step,
    input: {
      type: "impulse" as const,
      id: "ball",
      impulse: [0, 0, k * 1e-3] as [number, number, number],
      point: [0, 0, 0] as [number, number, number],
      angularImpulse: [0, 0, 0] as [number, number, number],
    },
  });
  const recorded = () => {
    const sim = loadModel(fallingBody());
    sim.scheduleTimed([at(0, 1), ...[1, 2, 3, 4, 5].map((k) => at(10 * k, k))]);
    sim.step(60);
    return recordingOf(sim);
  };

  it("is opened with all its inputs pending (5 under a limit of 4) and replays to its end hash", async () => {
    const recording = recorded();
    expect(recording.inputs).toHaveLength(6);
    // before: 400 "5 inputs pending, above MAX_PENDING_INPUTS (4)", never opened
    runtime({ maxPendingInputs: 4, sessionMemoryBytes: BUDGET });
    const r = await open("r", { recording });
    expect(r.ok).toBe(true);
    expect(decode(await exported("r")).controls.pending).toHaveLength(5);
    const stepped = await call({ kind: "step", sessionId: "r", steps: 60, limitMs: 30_000 });
    expect(stepped.ok).toBe(true);
    // v_z = (1 + 1 + 2 + ... + 5)·1e-3 N·s / 1 kg − g·60·dt (every impulse applied)
    const state = await call({ kind: "state", sessionId: "r" });
    if (!state.ok || state.result.kind !== "state") throw new Error("no state");
    expect(decode(state.result.state).bodies[0].velocity[2]).toBeCloseTo(
      16e-3 - 9.81 * 60 * 0.005,
      12,
    );
    // the same run bit for bit: its recording ends at the original's hash
    const again = await call({ kind: "recording", sessionId: "r", every: null, maxSteps: 1000 });
    if (!again.ok || again.result.kind !== "exported") throw new Error("no recording");
    expect(decode(again.result.bytes).end).toEqual(recording.end);
  });

  it("counts its pending inputs against the memory budget: 507 before its build when they pass it", async () => {
    const recording = recorded();
    // a falling body (192 KiB + 6 KiB) and room for 4 recorded inputs (320 B each), not 5
    const model = 192 * 1024 + 6 * 1024;
    runtime({ sessionMemoryBytes: model + 4 * 320 });
    const built = builds.count;
    const r = await open("r", { recording });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("insufficient_memory");
      expect(r.error.details).toMatchObject({ sessionBytes: model + 5 * 320, heldBytes: 0 });
    }
    expect(builds.count).toBe(built);
    rt?.handle({ kind: "shutdown" });
    runtime({ sessionMemoryBytes: model + 5 * 320 });
    expect((await open("r", { recording })).ok).toBe(true);
  });
});

describe("a session's recording within the worker's budget", () => {
  it("inputs the recording would keep past WORKER_SESSION_MEMORY_MB: 507, nothing applied; a reset frees them", async () => {
    // a recording keeps every input since its start (up to 100 000): measured 314 B per
    // bodyState input, counted at 320 B (memory.ts RECORDED_INPUT_BYTES). A falling body
    // (192 KiB + 6 KiB) and room for exactly 10 recorded inputs
    const budget = 192 * 1024 + 6 * 1024 + 10 * 320;
    runtime({ sessionMemoryBytes: budget });
    expect((await open("s", { model: fallingBody() })).ok).toBe(true);
    const impulse = (k: number) => ({
      kind: "inputs" as const,
      sessionId: "s",
      inputs: [
        {
          type: "impulse" as const,
          id: "ball",
          impulse: [0, 0, k] as [number, number, number],
          point: [0, 0, 0] as [number, number, number],
          angularImpulse: [0, 0, 0] as [number, number, number],
        },
      ],
      step: null,
    });
    for (let k = 1; k <= 10; k++) expect((await call(impulse(k))).ok).toBe(true);
    const speed = async () => {
      const r = await call({ kind: "state", sessionId: "s" });
      if (!r.ok || r.result.kind !== "state") throw new Error("no state");
      return decode(r.result.state).bodies[0].velocity[2] as number;
    };
    // 1 + 2 + ... + 10 N·s on 1 kg
    expect(await speed()).toBeCloseTo(55, 12);
    const r = await call(impulse(11));
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("insufficient_memory");
      expect(r.error.details).toMatchObject({
        limit: "WORKER_SESSION_MEMORY_MB",
        budgetBytes: budget,
      });
      expect(r.error.message).toContain("a recording keeps every input since its start");
    }
    expect(await speed()).toBeCloseTo(55, 12);
    // a patch is recorded too
    const patch = await call({ kind: "update", sessionId: "s", patch: { gravity: [0, 0, -1] } });
    expect(patch.ok).toBe(false);
    // a reset starts a new recording: room again
    expect((await call({ kind: "reset", sessionId: "s" })).ok).toBe(true);
    expect((await call(impulse(1))).ok).toBe(true);
  });
});
