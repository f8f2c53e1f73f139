/**
 * A run's CHECKPOINT_EVERY_STEPS checkpoints hold steps k·K exactly (issue 32: after a
 * kill -9 at most K steps are lost). The run loop ends a chunk at every multiple of K and
 * its worker sends the session's snapshot taken there; the event loop writes it as it is.
 * - the worker alone: a run of 100 steps with K = 7 sends the snapshots of steps 7, 14, …,
 *   98, each the spring particle's state of the symplectic Euler recurrence at that step,
 *   and waits at each (its state read there says so) until the event loop answers
 *   `checkpointed` (nothing past a checkpoint is streamed before it is written), or for
 *   CHECKPOINT_WAIT_MS when no answer comes;
 * - a server with DATA_DIR: the checkpoint file, read while a run goes on, only ever holds
 *   a step multiple of K (with and without CHECKPOINT_MIN_INTERVAL_MS), its state the
 *   recurrence's, and the session's `checkpointStep` says the same. Step requests keep
 *   their checkpoints at the answer's step (test/reliability/restart.test.ts);
 * - the order of the writes: a run's checkpoints, then its pause's at the paused step, never
 *   a run's older checkpoint written after it (one deferred by CHECKPOINT_MIN_INTERVAL_MS is
 *   superseded by the pause's);
 * - with a slow store (30 ms a write), a run as fast as it can never answers a step more
 *   than K past the last checkpoint the store has finished writing (the run had not waited
 *   for the write: up to 2K, far more with a store slower than K steps).
 * Nothing here depends on the machine's speed: the polls only collect what they see.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { RunAt } from "../../src/server/cluster/ports";
import { CheckpointStore } from "../../src/server/persistence";
import type { InputLogAt, WorkerOutbound, WorkerRequestBody } from "../../src/server/protocol";
import { CHECKPOINT_WAIT_MS, WorkerRuntime } from "../../src/server/worker-runtime";
import { createSession } from "../api/helpers";
import { startOneWorkerManager } from "../support/manager";
import { SPRING_PARTICLE, springParticle, springParticleRecurrence } from "../support/models";
import { startApp } from "../support/server";
import { sleep, waitFor } from "../support/wait";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** x and v of the particle in an engine snapshot (little-endian float64 arrays). */
function particleOf(simulation: { state: { position: string; velocity: string } }) {
  const f64 = (b64: string) => {
    const b = Buffer.from(b64, "base64");
    return new Float64Array(b.buffer, b.byteOffset, b.byteLength / 8);
  };
  return { x: f64(simulation.state.position)[0], v: f64(simulation.state.velocity)[0] };
}

interface EngineSnapshot {
  step: number;
  state: { position: string; velocity: string };
}

/** The snapshot matches the recurrence at its own step (to roundoff over the steps). */
function expectRecurrence(simulation: EngineSnapshot) {
  const ref = springParticleRecurrence({}, simulation.step);
  const got = particleOf(simulation);
  expect(got.x).toBeCloseTo(ref.x, 10);
  expect(got.v).toBeCloseTo(ref.v, 9);
}

describe("a run's checkpoints at exact steps", () => {
  it("the worker sends the snapshots of steps 7, 14, …, 98 of a 100-step run (K = 7), holding the run at each until it is written", async () => {
    const K = 7;
    const out: WorkerOutbound[] = [];
    const rt: WorkerRuntime = new WorkerRuntime(
      {
        index: 0,
        inflight: new SharedArrayBuffer(4),
        frameQueueBytes: 1 << 20,
        testHooks: false,
        stepLimitMs: 30_000,
        checkpointEverySteps: K,
      },
      (m) => out.push(m),
    );
    const send = (body: WorkerRequestBody, id: number) => rt.handle({ ...body, id } as never);
    send(
      {
        kind: "open",
        sessionId: "s",
        body: Buffer.from(JSON.stringify({ model: springParticle() })),
        maxBodies: 10,
      },
      1,
    );
    type Checkpoint = Extract<WorkerOutbound, { kind: "checkpoint" }>;
    const cps = () => out.filter((m): m is Checkpoint => m.kind === "checkpoint");
    /** the step of the session's State, read as a client's GET would (it bypasses the run) */
    let nextId = 10;
    const stepNow = async () => {
      const id = nextId++;
      send({ kind: "state", sessionId: "s" }, id);
      const reply = await waitFor(() => out.find((m) => m.kind === "reply" && m.id === id && m.ok));
      if (reply.kind !== "reply" || !reply.ok || reply.result.kind !== "state")
        throw new Error("no state");
      return JSON.parse(Buffer.from(reply.result.state).toString("utf8")).step as number;
    };
    // as fast as it can, to t = 100 h
    send({ kind: "run", sessionId: "s", realtimeFactor: null, until: 100 * SPRING_PARTICLE.dt }, 2);
    // the first three: the run stays at step k·K (50 ms, some 10⁴ steps' worth) until its
    // checkpoint is answered; an answer for another step does not release it
    for (let k = 1; k <= 3; k++) {
      await waitFor(() => cps().length === k, 10_000, 2);
      expect(await stepNow()).toBe(k * K);
      rt.handle({ kind: "checkpointed", sessionId: "s", step: k * K + 1 });
      await sleep(50);
      expect(await stepNow()).toBe(k * K);
      expect(cps().length).toBe(k);
      rt.handle({ kind: "checkpointed", sessionId: "s", step: k * K });
    }
    // the fourth never answered (a stuck store): the run goes on after CHECKPOINT_WAIT_MS
    await waitFor(() => cps().length === 4, 10_000, 2);
    const heldSince = performance.now();
    await waitFor(() => cps().length === 5, 10_000, 2);
    expect(performance.now() - heldSince).toBeGreaterThanOrEqual(CHECKPOINT_WAIT_MS - 20);
    // the others answered as they come
    await waitFor(
      () => {
        const last = cps().at(-1);
        if (last) rt.handle({ kind: "checkpointed", sessionId: "s", step: last.session.step });
        return out.some((m) => m.kind === "progress" && m.session.status === "paused");
      },
      10_000,
      2,
    );
    // 100 is no multiple of 7: the run's end is the event loop's urgent checkpoint instead
    expect(cps().map((c) => c.session.step)).toEqual(
      Array.from({ length: 14 }, (_, i) => K * (i + 1)),
    );
    for (const c of cps()) {
      const simulation = JSON.parse(Buffer.from(c.engine).toString("utf8"));
      expect(simulation.step).toBe(c.session.step);
      expect(c.session.status).toBe("running");
      expect(c.session.time).toBeCloseTo(c.session.step * SPRING_PARTICLE.dt, 12);
      expectRecurrence(simulation);
    }
    rt.handle({ kind: "shutdown" });
  });

  it.each([
    { minIntervalMs: 0, K: 40 },
    { minIntervalMs: 150, K: 25 },
  ])(
    "DATA_DIR: the file holds only steps k·K during a run (K = $K, CHECKPOINT_MIN_INTERVAL_MS = $minIntervalMs)",
    async ({ minIntervalMs, K }) => {
      const dir = mkdtempSync(join(tmpdir(), "moreau-exact-"));
      dirs.push(dir);
      const app = await startApp({
        dataDir: dir,
        checkpointEverySteps: K,
        checkpointMinIntervalMs: minIntervalMs,
      });
      try {
        const id = await createSession(app, springParticle());
        const file = join(dir, "sessions", `${id}.json`);
        await waitFor(() => {
          try {
            return readFileSync(file, "utf8").length > 0;
          } catch {
            return false;
          }
        });
        // at real time, 1.2 s: 1200 steps of 1 ms
        const until = 1.2;
        await request(app.server)
          .post(`/v1/sessions/${id}/run`)
          .send({ realtimeFactor: 1, until })
          .expect(202);
        const seen = new Map<number, EngineSnapshot>();
        const told = new Set<number>();
        for (;;) {
          const doc = JSON.parse(readFileSync(file, "utf8")).snapshot;
          if (doc.session.status !== "running") {
            if (doc.session.step === Math.round(until / SPRING_PARTICLE.dt)) break;
          } else seen.set(doc.simulation.step, doc.simulation);
          const s = (await request(app.server).get(`/v1/sessions/${id}`).expect(200)).body;
          if (s.status === "running" && s.checkpointStep !== null) told.add(s.checkpointStep);
          await new Promise((r) => setTimeout(r, 5));
        }
        // the run's own checkpoints: every one a multiple of K, with the recurrence's state
        expect(seen.size).toBeGreaterThanOrEqual(2);
        for (const [step, simulation] of seen) {
          expect(step % K).toBe(0);
          expect(step).toBeGreaterThan(0);
          expectRecurrence(simulation);
        }
        // what the session says while running: the creation's (0) or a multiple of K
        for (const step of told) expect(step % K).toBe(0);
        // its end is written at once, at the step it ended: the recurrence's too
        const end = JSON.parse(readFileSync(file, "utf8")).snapshot;
        expect(end.session.status).toBe("paused");
        expectRecurrence(end.simulation);
        console.log(
          `exact checkpoints (K = ${K}, min interval ${minIntervalMs} ms): steps ${[...seen.keys()].join(", ")}`,
        );
      } finally {
        await app.close();
      }
    },
    20_000,
  );
});

/** A DATA_DIR store that notes the step of every checkpoint it writes, in order. */
class StepsStore extends CheckpointStore {
  steps: number[] = [];
  protected override async persist(
    target: string,
    owner: string | null,
    snapshot: Uint8Array,
    log?: InputLogAt | null,
    run?: RunAt | null,
  ) {
    await super.persist(target, owner, snapshot, log, run);
    this.steps.push(JSON.parse(Buffer.from(snapshot).toString("utf8")).session.step);
  }
}

describe("a run's checkpoints and its pause's", () => {
  it.each([
    { minIntervalMs: 0, K: 20 },
    // the run's checkpoints all deferred (a minute): the pause's supersedes them
    { minIntervalMs: 60_000, K: 20 },
  ])(
    "are written in order, the pause's last at the paused step (CHECKPOINT_MIN_INTERVAL_MS = $minIntervalMs)",
    async ({ minIntervalMs, K }) => {
      const dir = mkdtempSync(join(tmpdir(), "moreau-order-"));
      dirs.push(dir);
      const log = pino({ level: "silent" });
      const store = new StepsStore(dir, log);
      const m = await startOneWorkerManager(dir, store, log, K, minIntervalMs);
      try {
        const id = (await m.create({ model: springParticle() })).id;
        await waitFor(() => store.steps.length === 1, 5000); // the creation's, step 0
        await m.run(id, 1, null);
        // past several multiples of K (1 ms steps at real time)
        await waitFor(() => m.get(id).step >= 10 * K, 10_000);
        const paused = (await m.pause(id)).step;
        await waitFor(() => store.steps[store.steps.length - 1] === paused, 5000);
        // a run's deferred checkpoint, if any, is not written after the pause's
        await new Promise((r) => setTimeout(r, 100));
        // the creation's, the run's 202's (at step 0, where it starts), the run's at steps
        // k·K, then the paused step's (the run's end and the pause both ask for one)
        const steps = store.steps;
        const end = steps.indexOf(paused);
        expect(steps.slice(0, 2)).toEqual([0, 0]);
        expect(end).toBeGreaterThan(1);
        expect(steps.slice(end).every((step) => step === paused)).toBe(true);
        const during = steps.slice(2, end);
        for (const step of during) expect(step % K).toBe(0);
        for (let i = 1; i < steps.length; i++)
          expect(steps[i]).toBeGreaterThanOrEqual(steps[i - 1]);
        if (minIntervalMs > 0) expect(during).toEqual([]);
        else expect(during.length).toBeGreaterThanOrEqual(1);
      } finally {
        await m.close();
      }
    },
    20_000,
  );
});

/** A DATA_DIR store whose writes take 30 ms; `durable`: the step of the last one done. */
class SlowStore extends CheckpointStore {
  durable = -1;
  protected override async persist(
    target: string,
    owner: string | null,
    snapshot: Uint8Array,
    log?: InputLogAt | null,
    run?: RunAt | null,
  ) {
    await sleep(30);
    await super.persist(target, owner, snapshot, log, run);
    this.durable = JSON.parse(Buffer.from(snapshot).toString("utf8")).session.step;
  }
}

describe("a run and its checkpoints' writes", () => {
  it("a run never answers a step more than K past the last checkpoint written (a 30 ms store)", async () => {
    const K = 20;
    const dir = mkdtempSync(join(tmpdir(), "moreau-held-"));
    dirs.push(dir);
    const log = pino({ level: "silent" });
    const store = new SlowStore(dir, log);
    const m = await startOneWorkerManager(dir, store, log, K, 0);
    try {
      const id = (await m.create({ model: springParticle() })).id;
      await waitFor(() => store.durable === 0, 5000);
      await m.run(id, null, null); // as fast as it can: K steps take well under 30 ms
      let answered = 0;
      let ahead = 0;
      // a State read, then the store: what was durable then is no older than this
      while (answered < 12 * K) {
        const step = JSON.parse(Buffer.from(await m.state(id)).toString("utf8")).step as number;
        const known = m.get(id).step;
        answered = Math.max(step, known);
        ahead = Math.max(ahead, answered - store.durable);
        expect(answered - store.durable).toBeLessThanOrEqual(K);
        await sleep(3);
      }
      await m.pause(id);
      console.log(`held run: at most ${ahead} steps past the last written checkpoint (K = ${K})`);
    } finally {
      await m.close();
    }
  }, 20_000);
});
