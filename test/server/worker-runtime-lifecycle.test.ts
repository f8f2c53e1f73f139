/**
 * The worker runtime's lifecycle rules, driven in process:
 * - a deleted session is gone at once: the operations queued on it before the delete (a run
 *   behind a long step, PATCH, inputs, reset) answer not_found and never run on it, and
 *   nothing (its run above all) keeps it referenced — they had run on the orphan, whose
 *   run stepped forever and kept its whole simulation alive;
 * - the worker says when it starts each request (`started`), a queued one when its turn
 *   comes: what the pool's watchdog times;
 * - a recording's replay runs in chunks (the worker answers other sessions meanwhile) and
 *   within REQUEST_TIMEOUT_MS of its time (409 naming the limit), where it ran in one
 *   synchronous go with no bound until the watchdog restarted the worker; its states are
 *   the engine's replayStates';
 * - an assembly runs under the engine's deadline: past REQUEST_TIMEOUT_MS it answers 504
 *   `timeout` and the session's state is as it was.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  parseRecording,
  type recordingOf,
  replayStates,
} from "../../src/engine/simulation/recording";
import type {
  WorkerInit,
  WorkerOutbound,
  WorkerRequestBody,
  WorkerResult,
} from "../../src/server/protocol";
import type { WorkerRuntime } from "../../src/server/worker-runtime";
import { hangingChain, slowSpringChain, sphericalChain, springParticle } from "../support/models";
import { InProcessWorker, type Reply } from "../support/worker-runtime";

let out: WorkerOutbound[];
let rt: WorkerRuntime | null = null;
let worker: InProcessWorker;

function runtime(init: Partial<WorkerInit> = {}): WorkerRuntime {
  worker = new InProcessWorker(init);
  out = worker.out;
  rt = worker.runtime;
  return rt;
}

beforeEach(() => {
  runtime();
});

afterEach(() => {
  // stops any run left and the stats timer
  worker.shutdown();
});

/** Sends a request; its reply, awaited (up to `turns` turns of the loop). */
const send = (body: WorkerRequestBody, turns = 100_000) => worker.send(body, turns);

const call = (body: WorkerRequestBody) => send(body).reply;

const open = (sessionId: string, model: unknown) =>
  call({
    kind: "open",
    sessionId,
    body: Buffer.from(JSON.stringify({ model })),
    maxBodies: 10_000,
  });

/** A chain of 200 particles on springs: thousands of its steps take seconds. */
const slowChain = () => slowSpringChain(200);

const internals = () =>
  rt as unknown as { sessions: Map<string, unknown>; running: unknown[]; turn: number };

const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

describe("a session deleted with operations queued on it", () => {
  it("the queued run, PATCH, inputs and reset answer not_found, nothing runs on it, nothing keeps it", async () => {
    expect((await open("s", slowChain())).ok).toBe(true);
    // a step that would take minutes; the others queue behind it
    const step = send({
      kind: "step",
      sessionId: "s",
      steps: 1_000_000,
      limitMs: 600_000,
    });
    // let the step start (its first chunk) before the rest arrives
    for (let i = 0; i < 5; i++) await new Promise((res) => setImmediate(res));
    const run = send({ kind: "run", sessionId: "s", realtimeFactor: null, until: null });
    const patch = send({ kind: "update", sessionId: "s", patch: { gravity: [0, 0, -1] } });
    const inputs = send({
      kind: "inputs",
      sessionId: "s",
      inputs: [
        {
          type: "impulse",
          id: "p5",
          impulse: [0, 0, 1e-3],
          point: [0, 0, 0],
          angularImpulse: [0, 0, 0],
        },
      ],
      step: null,
    });
    const reset = send({ kind: "reset", sessionId: "s" });
    // the event loop's delete: cancel, then delete
    rt?.handle({ kind: "cancel", sessionId: "s" });
    const del = await call({ kind: "delete", sessionId: "s" });
    expect(del.ok).toBe(true);

    const replies = await Promise.all([step, run, patch, inputs, reset].map((r) => r.reply));
    for (const r of replies) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("not_found");
        expect(r.error.message).toMatch(/was deleted/);
      }
      // no snapshot of the deleted session goes back to the event loop
      expect(r.session).toBeNull();
    }
    // no run was started on the orphan: the worker holds nothing of it and steps nothing
    expect(out.some((m) => m.kind === "progress" && m.session.status === "running")).toBe(false);
    expect(internals().running).toHaveLength(0);
    expect(internals().sessions.size).toBe(0);
    const seen = out.length;
    for (let i = 0; i < 50; i++) await new Promise((res) => setImmediate(res));
    expect(out.slice(seen).filter((m) => m.kind !== "stats")).toEqual([]);
  });

  it("a run started before the delete stops and leaves the running list", async () => {
    expect((await open("r", springParticle())).ok).toBe(true);
    expect(
      (await call({ kind: "run", sessionId: "r", realtimeFactor: null, until: null })).ok,
    ).toBe(true);
    expect(internals().running).toHaveLength(1);
    rt?.handle({ kind: "cancel", sessionId: "r" });
    expect(internals().running).toHaveLength(0);
    expect((await call({ kind: "delete", sessionId: "r" })).ok).toBe(true);
    expect(internals().sessions.size).toBe(0);
    // a read of it now: not_found
    const r = await call({ kind: "state", sessionId: "r" });
    expect(r.ok).toBe(false);
  });
});

describe("started", () => {
  it("a request says when the worker starts on it; one queued behind another of its session, when its turn comes", async () => {
    const opened = send({
      kind: "open",
      sessionId: "q",
      body: Buffer.from(JSON.stringify({ model: slowChain() })),
      maxBodies: 10_000,
    });
    expect((await opened.reply).ok).toBe(true);
    const openId = opened.id;
    expect(out.findIndex((m) => m.kind === "started" && m.id === openId)).toBeLessThan(
      out.findIndex((m) => m.kind === "reply" && m.id === openId),
    );
    const first = send({
      kind: "step",
      sessionId: "q",
      steps: 300,
      limitMs: 600_000,
    });
    const second = send({ kind: "step", sessionId: "q", steps: 1, limitMs: 600_000 });
    // a read bypasses the queue: started at once, answered between two chunks of the step
    const read = send({ kind: "state", sessionId: "q" });
    await read.reply;
    const at = (kind: string, id: number) =>
      out.findIndex((m) => m.kind === kind && (m as { id?: number }).id === id);
    expect(at("started", read.id)).toBeGreaterThanOrEqual(0);
    await Promise.all([first.reply, second.reply]);
    expect(at("started", first.id)).toBeGreaterThanOrEqual(0);
    expect(at("started", first.id)).toBeLessThan(at("reply", first.id));
    // the second step starts only once the first has answered
    expect(at("started", second.id)).toBeGreaterThan(at("reply", first.id));
    expect(at("started", second.id)).toBeLessThan(at("reply", second.id));
  });
});

describe("a step request's time limit", () => {
  it("runs from the request's turn: one queued behind a longer one still steps", async () => {
    // the manager sent an absolute deadline, so a 1-step request queued behind a 30 s
    // assembly answered 504 having stepped nothing (README: the wait does not count)
    expect((await open("q", slowChain())).ok).toBe(true);
    const first = send({ kind: "step", sessionId: "q", steps: 1e9, limitMs: 300 });
    const second = send({ kind: "step", sessionId: "q", steps: 5, limitMs: 200 });
    const [a, b] = await Promise.all([first.reply, second.reply]);
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.error.code).toBe("timeout");
    const reached = (a.error.details as { step: number }).step;
    // it waited 300 ms, beyond its own 200, and then made its 5 steps
    expect(b.ok).toBe(true);
    const st = await call({ kind: "state", sessionId: "q" });
    expect(st.ok && st.result.kind === "state" && decode(st.result.state).step).toBe(reached + 5);
  });
});

describe("a recording's replay", () => {
  /** Steps session `id` for about `ms` of the worker's time (a step request's deadline). */
  async function stepFor(id: string, ms: number): Promise<number> {
    const r = await call({ kind: "step", sessionId: id, steps: 1e9, limitMs: ms });
    expect(r.ok).toBe(false);
    if (r.ok) return 0;
    expect(r.error.code).toBe("timeout");
    return (r.error.details as { step: number }).step;
  }

  it("past REQUEST_TIMEOUT_MS of the worker's time: 409 naming the limit; the worker answers other sessions meanwhile", async () => {
    const limit = 300;
    runtime({ stepLimitMs: limit });
    expect((await open("long", slowChain())).ok).toBe(true);
    expect((await open("other", springParticle())).ok).toBe(true);
    // steps that took about 4 limits to compute take about as long to replay
    const steps = await stepFor("long", 4 * limit);
    expect(steps).toBeGreaterThan(0);
    const t0 = performance.now();
    const rec = send({ kind: "recording", sessionId: "long", every: 1_000_000, maxSteps: 1e9 });
    // asked after it, answered before it: the replay yields between its chunks
    const other = send({ kind: "state", sessionId: "other" });
    const otherReply = await other.reply;
    expect(otherReply.ok).toBe(true);
    const r = await rec.reply;
    const ms = performance.now() - t0;
    expect(out.indexOf(otherReply)).toBeLessThan(out.indexOf(r));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("conflict");
    expect(r.error.message).toMatch(/REQUEST_TIMEOUT_MS, 300 ms/);
    expect(r.error.message).toMatch(new RegExp(`recording's ${steps} steps`));
    const d = r.error.details as { steps: number; stepsReplayed: number; limit: string };
    expect(d.limit).toBe("REQUEST_TIMEOUT_MS");
    expect(d.steps).toBe(steps);
    expect(d.stepsReplayed).toBeGreaterThan(0);
    expect(d.stepsReplayed).toBeLessThan(steps);
    // stopped at the limit (no upper bound on a loaded machine's wall time)
    expect(ms).toBeGreaterThanOrEqual(limit - 1);
    // the session itself is untouched
    const st = await call({ kind: "state", sessionId: "long" });
    expect(st.ok && st.result.kind === "state" && decode(st.result.state).step).toBe(steps);
  });

  it("within the limit: the engine's replayStates' states, inputs included", async () => {
    const model = springParticle({ name: "rec" });
    expect((await open("s", model)).ok).toBe(true);
    const step = (steps: number) => call({ kind: "step", sessionId: "s", steps, limitMs: 60_000 });
    await step(7);
    const scheduled = await call({
      kind: "inputs",
      sessionId: "s",
      inputs: [
        {
          type: "impulse",
          id: "p",
          impulse: [0.3, 0, 0],
          point: [0, 0, 0],
          angularImpulse: [0, 0, 0],
        },
      ],
      step: 12,
    });
    expect(scheduled.ok).toBe(true);
    await step(20);
    const r = await call({ kind: "recording", sessionId: "s", every: 5, maxSteps: 1e6 });
    expect(r.ok).toBe(true);
    if (!r.ok || r.result.kind !== "exported") return;
    const got = decode(r.result.bytes) as ReturnType<typeof recordingOf> & {
      states: { step: number }[];
    };
    // the engine's replay of the same recording
    const { states, ...recording } = got;
    const ref = replayStates(parseRecording(recording), 5);
    expect(ref.matches).toBe(true);
    expect(got.states.map((s) => s.step)).toEqual([5, 10, 15, 20, 25, 27]);
    expect(states).toEqual(JSON.parse(JSON.stringify(ref.states)));
    expect(got.inputs).toHaveLength(1);
  });

  it("a session deleted during its replay: not_found", async () => {
    runtime({ stepLimitMs: 30_000 });
    expect((await open("d", slowChain())).ok).toBe(true);
    await stepFor("d", 600);
    const rec = send({ kind: "recording", sessionId: "d", every: 1_000_000, maxSteps: 1e9 });
    await new Promise((res) => setImmediate(res));
    rt?.handle({ kind: "cancel", sessionId: "d" });
    await call({ kind: "delete", sessionId: "d" });
    const r = await rec.reply;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("not_found");
  });
});

describe("a build past REQUEST_TIMEOUT_MS", () => {
  it("a chain of 400 links with limits and actuators: 504 timeout, nothing kept, the worker answers on", async () => {
    // constrainLimitInertias is O(limits · dofs) and checked no deadline: a URDF chain of
    // 9 000 links (limits and an actuator on every joint) held a real server's worker past
    // REQUEST_TIMEOUT_MS + 15 s, and the watchdog replaced it, its other sessions rebuilt
    const chain = hangingChain({
      joints: Array.from({ length: 400 }, () => ({
        type: "revolute" as const,
        axis: [0, 1, 0] as const,
      })),
      mass: () => 1,
      inertia: [0.01, 0.01, 0.01],
    });
    for (const j of chain.joints) if (j.type === "revolute") j.limits = { lower: -1, upper: 1 };
    const model = {
      name: "limited-chain",
      gravity: [0, 0, -9.81],
      ...chain,
      actuators: chain.joints.map((j) => ({ id: `${j.id}.a`, joint: j.id, type: "torque" })),
    };
    runtime({ stepLimitMs: 1 });
    const r = await open("a", model);
    // before: ok (built whatever the deadline)
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("timeout");
    expect(r.error.message).toMatch(/building the session ran past the time limit/);
    const gone = await call({ kind: "state", sessionId: "a" });
    expect(gone.ok).toBe(false);
    rt?.handle({ kind: "shutdown" });
    runtime({ stepLimitMs: 30_000 });
    expect((await open("b", springParticle())).ok).toBe(true);
  });
});

describe("an assembly past REQUEST_TIMEOUT_MS", () => {
  /** A chain of 300 links whose joints are 2 cm open: the position level has work to do. */
  const openChain = () => {
    const chain = sphericalChain({
      links: 300,
      prefix: "b",
      length: 1,
      mass: 1,
      inertia: [0.1, 0.1, 0.1],
    });
    return {
      name: "open-chain",
      gravity: [0, 0, -9.81] as [number, number, number],
      bodies: chain.bodies.map((b, k) => ({
        ...b,
        position: [k + 0.5, 0, 0.02 * k] as [number, number, number],
      })),
      joints: chain.joints,
    };
  };

  it("answers 504 timeout naming the limit; the session's state and status are as they were", async () => {
    runtime({ stepLimitMs: 1 });
    expect((await open("a", openChain())).ok).toBe(true);
    const before = await call({ kind: "state", sessionId: "a" });
    const r = await call({
      kind: "assemble",
      sessionId: "a",
      options: { levels: ["position", "velocity", "acceleration"], solver: "gmres" },
      apply: true,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.code).toBe("timeout");
    expect(r.error.message).toMatch(
      /the assembly ran past the time limit \(REQUEST_TIMEOUT_MS, 1 ms\)/,
    );
    expect(r.session?.status).toBe("ready");
    const after = await call({ kind: "state", sessionId: "a" });
    const state = (x: Reply) =>
      x.ok && x.result.kind === "state"
        ? decode((x.result as WorkerResult & { state: Uint8Array }).state)
        : null;
    expect(state(after).bodies).toEqual(state(before).bodies);
  });

  it("of a posted model: 504 timeout", async () => {
    runtime({ stepLimitMs: 1 });
    const r = await call({
      kind: "assembleModel",
      body: Buffer.from(
        JSON.stringify({
          model: openChain(),
          options: { levels: ["position", "velocity", "acceleration"], solver: "gmres" },
        }),
      ),
      maxBodies: 10_000,
    });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe("timeout");
      expect(r.error.message).toMatch(/REQUEST_TIMEOUT_MS, 1 ms/);
    }
    expect(internals().sessions.size).toBe(0);
  });
});
