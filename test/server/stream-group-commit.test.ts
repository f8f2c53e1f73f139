/**
 * Group commit of a stream socket's inputs (stream.ts CommandQueue, sessions/checkpoints.ts):
 * the `inputs` messages that arrive while a checkpoint write is under way are applied in
 * order and kept together by the next write, each answered once its own input is durable,
 * the answers in order. Until 2026-12-07 each message waited for its own write before the
 * next one started: a client bursting 500 messages/s with DATA_DIR had 106–385 of 2500
 * accepted (the rest refused by MAX_PENDING_COMMANDS), its answers 0.6–0.9 s late.
 *
 * Read through the physics of a falling ball (moreau-jean θ = 1/2 integrates a constant
 * acceleration exactly): message k holds an impulse J_k = (0, 0, c (k + 1)) N·s at step
 * boundary k + 1; after n steps of h, v_z = −g n h + Σ J_k / m and z = z0 − g (n h)² / 2 +
 * Σ (J_k / m)(n − k − 1) h (the jump before step k + 2 carries the ball over the n − k − 1
 * steps left).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { type RawData, WebSocket } from "ws";
import type { SnapshotStore } from "../../src/server/cluster/ports";
import { MAX_PENDING_COMMANDS } from "../../src/server/stream";
import { fallingBody } from "../support/models";
import { type ServerProcess, spawnServer } from "../support/process";
import { startServer } from "../support/server";
import { sleep, waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;
const C = 0.01;
/** A burst as large as a socket's queue holds: every message is taken. */
const N = MAX_PENDING_COMMANDS;

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "moreau-group-commit-"));
  dirs.push(dir);
  return dir;
};
const servers: ServerProcess[] = [];
afterAll(() => {
  for (const s of servers) s.kill();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Answer = { type: string; ref?: number; step?: number; pending?: number; error?: string };

/** Message k of the burst: the impulse J_k at step boundary k + 1. */
const message = (k: number) =>
  JSON.stringify({
    type: "inputs",
    ref: k,
    step: k + 1,
    inputs: [{ type: "impulse", id: "ball", impulse: [0, 0, C * (k + 1)] }],
  });

/** A stream client of a session; `onAnswer` sees every answer as it arrives. */
async function connect(url: string, onAnswer: (a: Answer) => void = () => undefined) {
  const ws = new WebSocket(url);
  const answers: Answer[] = [];
  ws.on("message", (data: RawData) => {
    const m = JSON.parse(data.toString()) as Answer;
    if (m.type === "scene" || m.type === "state") return;
    answers.push(m);
    onAnswer(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, answers };
}

/** The ball's z velocity and height after n steps with the first m messages' impulses. */
function expected(n: number, m: number) {
  let v = -G * n * H;
  let z = Z0 - (G * (n * H) ** 2) / 2;
  for (let k = 0; k < m; k++) {
    const dv = C * (k + 1); // J_k / m, m = 1 kg
    v += dv;
    z += dv * (n - k - 1) * H;
  }
  return { v, z };
}

type Recorded = { step: number; input: { type: string; impulse: number[] } };

/** The recording holds the first m messages' inputs, each at its step. */
function expectRecorded(inputs: Recorded[], m: number) {
  expect(inputs.slice(0, m).map((r) => [r.step, r.input.type, r.input.impulse[2]])).toEqual(
    Array.from({ length: m }, (_, k) => [k + 1, "impulse", C * (k + 1)]),
  );
}

describe("a burst of inputs over one socket with DATA_DIR", () => {
  it("is applied in order while one write is under way, kept by the next, answered in order once kept", async () => {
    const server = await startServer({ dataDir: tempDir(), checkpointEverySteps: 0 });
    const api = () => request(server.app.server);
    try {
      const id = (await api().post("/v1/sessions").send({ model: fallingBody() }).expect(201)).body
        .id as string;
      // the store's writes counted, and held until the test lets them go
      const store = server.app.moreau.sessions.store as SnapshotStore;
      const write = store.write.bind(store);
      let writes = 0;
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      store.write = async (...args: Parameters<SnapshotStore["write"]>) => {
        writes++;
        await gate;
        return write(...args);
      };
      const c = await connect(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
      for (let k = 0; k < N; k++) c.ws.send(message(k));
      // all N applied while the first one's write is held (before: the first alone, its
      // answer waited for that write and the next message for its answer)
      let applied = 0;
      await waitFor(async () => {
        const r = await api().get(`/v1/sessions/${id}/recording`).expect(200);
        applied = r.body.inputs.length;
        return applied === N;
      }, 10_000).catch(() => undefined);
      expect(applied).toBe(N);
      // none answered: none is durable yet
      await sleep(100);
      expect(c.answers).toEqual([]);
      open();
      await waitFor(() => c.answers.length === N, 10_000);
      // in order, each at its step, all N pending (the session has not stepped)
      expect(c.answers).toEqual(
        Array.from({ length: N }, (_, k) => ({
          type: "inputs",
          ref: k,
          step: k + 1,
          pending: k + 1,
        })),
      );
      // the first input's write, then one for the N − 1 taken while it was held
      expect(writes).toBeLessThanOrEqual(2);
      expect(writes).toBeLessThan(N);
      c.ws.close();

      const rec = (await api().get(`/v1/sessions/${id}/recording`).expect(200)).body;
      expect(rec.inputs).toHaveLength(N);
      expectRecorded(rec.inputs, N);
      const n = N + 10;
      const s = (await api().post(`/v1/sessions/${id}/step`).send({ steps: n }).expect(200)).body;
      const ball = s.bodies[0];
      const e = expected(n, N);
      expect(ball.velocity[2]).toBeCloseTo(e.v, 12);
      expect(ball.position[2]).toBeCloseTo(e.z, 12);
    } finally {
      await server.app.close();
    }
  }, 60_000);
});

describe("a server killed (SIGKILL) right after the k-th answer of a burst", () => {
  it("restarts with the k acknowledged inputs at their steps", async () => {
    const dataDir = tempDir();
    const start = async () => {
      const s = await spawnServer({ DATA_DIR: dataDir, CHECKPOINT_EVERY_STEPS: "0" });
      servers.push(s);
      return s;
    };
    const K = 12;
    const s1 = await start();
    const created = await s1.call("POST", "/v1/sessions", { model: fallingBody() });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    let killedAfter: Answer[] = [];
    const c = await connect(
      `ws://127.0.0.1:${s1.port}/v1/sessions/${id}/stream?every=1000000`,
      () => {
        // at once, in the handler of the K-th answer: nothing of the server runs after it
        if (c.answers.length === K) {
          s1.kill();
          killedAfter = [...c.answers];
        }
      },
    );
    for (let k = 0; k < N; k++) c.ws.send(message(k));
    expect(await s1.exited).toBe(null);
    expect(killedAfter.map((a) => [a.type, a.ref, a.step])).toEqual(
      Array.from({ length: K }, (_, k) => ["inputs", k, k + 1]),
    );

    const s2 = await start();
    const r = await s2.call("GET", `/v1/sessions/${id}/recording`);
    expect(r.status, r.text).toBe(200);
    // the K answered, in order at their steps; those applied but not yet answered may be
    // there too (kept by the write under way), in order after them
    const m = r.body.inputs.length as number;
    expect(m).toBeGreaterThanOrEqual(K);
    expectRecorded(r.body.inputs, m);
    const n = N + 10;
    const st = await s2.call("POST", `/v1/sessions/${id}/step`, { steps: n });
    expect(st.status, st.text).toBe(200);
    const e = expected(n, m);
    expect(st.body.bodies[0].velocity[2]).toBeCloseTo(e.v, 12);
    expect(st.body.bodies[0].position[2]).toBeCloseTo(e.z, 12);
    s2.kill();
  }, 120_000);
});
