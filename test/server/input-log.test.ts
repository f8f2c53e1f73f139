/**
 * A session's recorded inputs are an append-only log beside its checkpoint (DATA_DIR,
 * persistence.ts): a checkpoint writes the inputs applied since the previous one, not the
 * whole list. Until 2026-12-07 every checkpoint rewrote every input (a controller's 10 000
 * were 1.5 MB written and fsynced by each change). The recording read back from the log —
 * after a worker loss's rebuild, a server restart, a reset's new log, a rebuild from the
 * copy in memory when a write failed, and a checkpoint put back after it was set aside as
 * not valid — replays to the live state bit for bit. Real
 * worker threads; a double pendulum (chaotic: an input missed, doubled or reordered shows
 * in the state).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { Input } from "../../schemas/input";
import type { RunAt } from "../../src/server/cluster/ports";
import { CheckpointStore } from "../../src/server/persistence";
import type { InputLogAt } from "../../src/server/protocol";
import { FrameClient } from "../support/frames";
import { startOneWorkerManager } from "../support/manager";
import { hingedRods } from "../support/models";
import { motion, postInputs, replayed, rodImpulse, stepBy } from "../support/recordings";
import { startServer, type TestServer } from "../support/server";
import { waitFor } from "../support/wait";

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "moreau-input-log-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** An input sent on the session's stream socket, answered there. */
async function wsInputs(server: TestServer, id: string, list: unknown[], ref: number) {
  const ws = new FrameClient(`${server.ws}/v1/sessions/${id}/stream`);
  await ws.open();
  try {
    ws.ws.send(JSON.stringify({ type: "inputs", ref, inputs: list }));
    await waitFor(async () =>
      ws.messages.find(
        (m) =>
          (m as { type: string; ref?: number }).type === "inputs" &&
          (m as { ref?: number }).ref === ref,
      ),
    );
  } finally {
    ws.close();
  }
}

/** The session's input log files in `dir`. */
const logFiles = (dir: string, id: string) =>
  readdirSync(join(dir, "sessions")).filter((n) => n.startsWith(`${id}.`) && n.endsWith(".inputs"));

describe("the bytes a checkpoint writes", () => {
  it("grow with the inputs applied since the previous checkpoint only, not with the recording", async () => {
    const dir = tempDir();
    const server = await startServer({ workers: 1, dataDir: dir, checkpointEverySteps: 0 });
    const api = () => request(server.app.server);
    const store = server.app.moreau.sessions.store as CheckpointStore;
    try {
      const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
      const N = 120;
      // per input: the bytes the acknowledged checkpoint of its POST wrote — its document,
      // and the input (applied at once: at the current step) appended to the log
      const written: number[] = [];
      for (let k = 0; k < N; k++) {
        const before = store.bytesWritten;
        await postInputs(api, id, [rodImpulse(0.01 * (k + 1))]);
        written.push(store.bytesWritten - before);
        await stepBy(api, id, 1);
      }
      const rec = (await api().get(`/v1/sessions/${id}/recording`).expect(200)).body;
      expect(rec.inputs).toHaveLength(N);
      // a log line is the input as the recording holds it, one JSON line
      const line = (k: number) => Buffer.byteLength(`${JSON.stringify(rec.inputs[k])}\n`);
      // the document's part of a checkpoint is the same for the 10th input and the 120th
      // (only the digits of its time, step and dates differ): before, it held every input
      // so far, ~110 × 90 bytes more for the 120th
      const document = (k: number) => written[k] - line(k);
      expect(Math.abs(document(N - 1) - document(9))).toBeLessThan(64);
      expect(written[N - 1] - written[9]).toBeLessThan(64 + line(N - 1) - line(9));
      // and the log on disk holds each applied input once, in order
      const files = logFiles(dir, id);
      expect(files).toHaveLength(1);
      const text = readFileSync(join(dir, "sessions", files[0]), "utf8");
      const lines = text.split("\n").filter((l) => l.length > 0);
      expect(lines).toHaveLength(N);
      expect(lines.map((l) => JSON.parse(l))).toEqual(rec.inputs);
    } finally {
      await server.app.close();
    }
  }, 120_000);
});

describe("a recording read back from its input log", () => {
  it("REST and WebSocket inputs, a worker loss, a restart, a reset: the recording replays to the live state", async () => {
    const dir = tempDir();
    let server = await startServer({ workers: 1, dataDir: dir, testHooks: true });
    let api = () => request(server.app.server);
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await postInputs(api, id, [rodImpulse(3)]);
    await stepBy(api, id, 20);
    await wsInputs(server, id, [rodImpulse(-2)], 1);
    await stepBy(api, id, 10);
    // one ahead: pending at the checkpoints until step 60
    await postInputs(api, id, [rodImpulse(1.5)], 60);
    await wsInputs(server, id, [rodImpulse(0.4)], 2);
    await stepBy(api, id, 10);
    // the worker lost 0 steps past the inputs' checkpoint at step 30... and 10 steps of it
    const m = server.app.moreau.sessions;
    await m.pool.killForTest(0);
    await m.rebuilt();
    for (let i = 0; i < 100 && !(await api().get(`/v1/sessions/${id}`)).body.message; i++)
      await new Promise((r) => setTimeout(r, 50));
    await m.rebuilt();
    expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(30);
    await wsInputs(server, id, [rodImpulse(0.7)], 3);
    await stepBy(api, id, 40);
    await postInputs(api, id, [rodImpulse(-1)]);
    await stepBy(api, id, 5);
    await server.app.close();

    server = await startServer({ workers: 1, dataDir: dir, testHooks: true });
    api = () => request(server.app.server);
    try {
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(75);
      await postInputs(api, id, [rodImpulse(0.2)]);
      await wsInputs(server, id, [rodImpulse(-0.3)], 4);
      const end = await stepBy(api, id, 25);
      const { rec, state, hash } = await replayed(api, id);
      expect(rec.since.cause).toBe("created");
      expect(rec.start).toBeNull();
      expect(rec.inputs.map((e: { step: number }) => e.step)).toEqual([
        0, 20, 30, 60, 30, 70, 75, 75,
      ]);
      expect(hash).toBe(rec.end.hash);
      expect(motion(state)).toEqual(motion(end));
      const before = logFiles(dir, id);
      expect(before).toHaveLength(1);

      // a reset starts a new recording, in a new log (the old one removed once the reset's
      // checkpoint names the new)
      await api().post(`/v1/sessions/${id}/reset`).expect(200);
      await postInputs(api, id, [rodImpulse(2.5)]);
      await stepBy(api, id, 15);
      await wsInputs(server, id, [rodImpulse(-1.2)], 5);
      await stepBy(api, id, 15);
      await server.app.moreau.sessions.pool.killForTest(0);
      await server.app.moreau.sessions.rebuilt();
      for (let i = 0; i < 100 && !(await api().get(`/v1/sessions/${id}`)).body.message; i++)
        await new Promise((r) => setTimeout(r, 50));
      await server.app.moreau.sessions.rebuilt();
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(15);
      const again = await stepBy(api, id, 20);
      const after = await replayed(api, id);
      expect(after.rec.since.cause).toBe("reset");
      expect(after.rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 15]);
      expect(after.hash).toBe(after.rec.end.hash);
      expect(motion(after.state)).toEqual(motion(again));
      const now = logFiles(dir, id);
      expect(now).toHaveLength(1);
      expect(now[0]).not.toBe(before[0]);
    } finally {
      await server.app.close();
    }
  }, 120_000);
});

describe("a run's checkpoints (taken by its worker every K steps)", () => {
  it("append the inputs sent while it runs: after a restart the recording replays to the state it stopped at", async () => {
    const dir = tempDir();
    let server = await startServer({
      workers: 1,
      dataDir: dir,
      checkpointEverySteps: 10,
      checkpointMinIntervalMs: 0,
    });
    let api = () => request(server.app.server);
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    // real time, 200 steps: inputs land between the run's checkpoints at steps 10, 20, …
    await api()
      .post(`/v1/sessions/${id}/run`)
      .send({ realtimeFactor: 1, until: 200 * 0.005 })
      .expect(202);
    const sent = 6;
    for (let k = 0; k < sent - 1; k++) {
      await new Promise((r) => setTimeout(r, 80));
      if (k % 2 === 0) await postInputs(api, id, [rodImpulse(0.3 * (k + 1))]);
      else await wsInputs(server, id, [rodImpulse(-0.2 * k)], k);
    }
    // the last one 40 steps ahead: applied by the run after every answered change, its line
    // is appended by the worker's next k·K checkpoint
    const at = (await api().get(`/v1/sessions/${id}`).expect(200)).body.step + 40;
    await postInputs(api, id, [rodImpulse(0.9)], at);
    await waitFor(
      async () => (await api().get(`/v1/sessions/${id}`)).body.status === "paused",
      20_000,
    );
    const live = (await api().get(`/v1/sessions/${id}/state`).expect(200)).body;
    expect(live.step).toBe(200);
    await server.app.close();
    server = await startServer({ workers: 1, dataDir: dir });
    api = () => request(server.app.server);
    try {
      const { rec, state, hash } = await replayed(api, id);
      expect(rec.inputs).toHaveLength(sent);
      expect(rec.end.step).toBe(200);
      expect(hash).toBe(rec.end.hash);
      expect(motion(state)).toEqual(motion(live));
      const files = logFiles(dir, id);
      expect(files).toHaveLength(1);
      const lines = readFileSync(join(dir, "sessions", files[0]), "utf8").split("\n");
      expect(lines.filter((l) => l.length > 0).map((l) => JSON.parse(l))).toEqual(rec.inputs);
    } finally {
      await server.app.close();
    }
  }, 60_000);
});

describe("an input log lost with its folder", () => {
  it("is written whole again by the next checkpoint: /ready recovers, the recording replays after a restart", async () => {
    const dir = tempDir();
    let server = await startServer({ workers: 1, dataDir: dir });
    let api = () => request(server.app.server);
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await postInputs(api, id, [rodImpulse(1)]);
    await stepBy(api, id, 10);
    await postInputs(api, id, [rodImpulse(-0.5)]);
    // the folder becomes a file (every write fails), then an empty folder: the log is gone
    const sessions = join(dir, "sessions");
    rmSync(sessions, { recursive: true, force: true });
    writeFileSync(sessions, "not a folder");
    await stepBy(api, id, 5);
    await postInputs(api, id, [rodImpulse(0.25)]);
    expect((await api().get("/ready")).status).toBe(503);
    rmSync(sessions, { force: true });
    mkdirSync(sessions);
    await stepBy(api, id, 5);
    await postInputs(api, id, [rodImpulse(-0.1)]);
    // before: the append to the vanished log failed at every checkpoint, /ready 503 for good
    await waitFor(async () => (await api().get("/ready")).status === 200, 5000);
    const live = await stepBy(api, id, 10);
    await server.app.close();
    server = await startServer({ workers: 1, dataDir: dir });
    api = () => request(server.app.server);
    try {
      const { rec, state, hash } = await replayed(api, id);
      expect(rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 10, 15, 20]);
      expect(hash).toBe(rec.end.hash);
      expect(motion(state)).toEqual(motion(live));
    } finally {
      await server.app.close();
    }
  }, 60_000);
});

describe("a checkpoint set aside as not valid", () => {
  it("keeps its input log: put back, the checkpoint is restored with its acknowledged inputs, which replay bit for bit", async () => {
    const dir = tempDir();
    let server = await startServer({ workers: 1, dataDir: dir });
    let api = () => request(server.app.server);
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    // acknowledged inputs: each answered once its checkpoint (and the log's lines) is kept
    await postInputs(api, id, [rodImpulse(2)]);
    await stepBy(api, id, 12);
    await postInputs(api, id, [rodImpulse(-1.5)]);
    await stepBy(api, id, 8);
    await postInputs(api, id, [rodImpulse(0.6)]);
    const live = await stepBy(api, id, 10);
    await server.app.close();
    const file = join(dir, "sessions", `${id}.json`);
    const intact = readFileSync(file);
    const logs = logFiles(dir, id);
    expect(logs).toHaveLength(1);
    // a torn copy over the checkpoint (its first half): the next start sets it aside
    writeFileSync(file, intact.subarray(0, intact.length >> 1));
    server = await startServer({ workers: 1, dataDir: dir });
    api = () => request(server.app.server);
    const aside = readdirSync(join(dir, "sessions")).filter((n) => n.startsWith(`${id}.rejected-`));
    try {
      await api().get(`/v1/sessions/${id}`).expect(404);
      expect(aside).toHaveLength(1);
      // before: removed as named by no checkpoint
      expect(logFiles(dir, id)).toEqual(logs);
    } finally {
      await server.app.close();
    }
    // put back (the intact copy; the torn one removed): restored with its inputs
    writeFileSync(file, intact);
    rmSync(join(dir, "sessions", aside[0]));
    server = await startServer({ workers: 1, dataDir: dir });
    api = () => request(server.app.server);
    try {
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(30);
      const state = (await api().get(`/v1/sessions/${id}/state`).expect(200)).body;
      expect(motion(state)).toEqual(motion(live));
      const replay = await replayed(api, id);
      expect(replay.rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 12, 20]);
      expect(replay.hash).toBe(replay.rec.end.hash);
      expect(motion(replay.state)).toEqual(motion(live));
    } finally {
      await server.app.close();
    }
  }, 60_000);
});

/** A DATA_DIR store whose checkpoint writes fail while `failing` (a full disk). */
class FailingStore extends CheckpointStore {
  failing = false;
  protected override async persist(
    target: string,
    owner: string | null,
    snapshot: Uint8Array,
    log?: InputLogAt | null,
    run?: RunAt | null,
  ) {
    if (this.failing) throw new Error("ENOSPC: no space left on device (test)");
    await super.persist(target, owner, snapshot, log, run);
  }
}

describe("a rebuild from the checkpoint in memory (its write failed)", () => {
  it("takes the inputs before it from the log on disk: the recording replays to the live state", async () => {
    const dir = tempDir();
    const log = pino({ level: "silent" });
    const store = new FailingStore(dir, log);
    const m = await startOneWorkerManager(dir, store, log, 0, 0, { testHooks: true });
    try {
      const id = (await m.create({ model })).id;
      await m.inputs(id, { inputs: [Input.parse(rodImpulse(3))] });
      await m.step(id, { steps: 20 });
      await m.inputs(id, { inputs: [Input.parse(rodImpulse(-2))] });
      await m.step(id, { steps: 10 });
      // written: the log holds the inputs of steps 0 and 20
      await m.inputs(id, { inputs: [Input.parse(rodImpulse(0.5))] });
      await m.step(id, { steps: 10 });
      store.failing = true;
      // not written: the copy in memory (step 40) is newer than the file (step 30)
      await m.inputs(id, { inputs: [Input.parse(rodImpulse(-0.8))] });
      expect(m.get(id).persisted).toBe(false);
      await m.pool.killForTest(0);
      await m.rebuilt();
      await waitFor(() => (m.get(id).message ?? "").length > 0, 5000);
      await m.rebuilt();
      expect(m.get(id).step).toBe(40);
      store.failing = false;
      await m.step(id, { steps: 30 });
      const live = JSON.parse(Buffer.from(await m.state(id)).toString("utf8"));
      const rec = JSON.parse(Buffer.from(await m.recording(id, null)).toString("utf8"));
      expect(rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 20, 30, 40]);
      const copy = await m.create({ body: Buffer.from(JSON.stringify({ recording: rec })) });
      await m.step(copy.id, { steps: rec.end.step });
      const replay = JSON.parse(Buffer.from(await m.state(copy.id)).toString("utf8"));
      expect(motion(replay)).toEqual(motion(live));
    } finally {
      await m.close();
    }
  }, 60_000);
});
