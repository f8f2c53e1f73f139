/**
 * A session being rebuilt after the loss of its worker (sessions/recovery.ts):
 * - it goes to a live worker with room, not to the lost worker's replacement: that one was
 *   the least loaded (empty), so every rebuild waited for its cold start while the live
 *   worker could open it at once;
 * - while the rebuild goes on, GET says so (`rebuilding: true`, status and step the last
 *   known), where it read its old status as if nothing had happened, and a request that
 *   needs the simulation (GET state) waits for the rebuild and is answered from the
 *   rebuilt session, never from the lost one.
 *   A stream opened meanwhile is subscribed once the rebuild is done: its scene frame read
 *   the lost step, and no state frame followed it.
 * - a NEW session (a create, a fork, a restore from a snapshot or a recording) made while
 *   the replacement is still starting goes to the live worker too, and is answered while
 *   the replacement has not started: it went to the replacement (empty, the least loaded)
 *   and waited for its cold start.
 * The rebuild is held deterministically: the restore request is gated until the test
 * releases it; so is the replacement's start (its entry waits for the test's word).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { BroadcastChannel } from "node:worker_threads";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { Session } from "../../schemas/api";
import type { MoreauApp } from "../../src/server/app";
import type { WorkerRequestBody } from "../../src/server/protocol";
import { createSession, getState, step } from "../api/helpers";
import { springParticle, springParticleRecurrence } from "../support/models";
import { startServer, type TestServer } from "../support/server";
import { sleep, waitFor } from "../support/wait";

let server: TestServer;
let app: MoreauApp;

beforeAll(async () => {
  server = await startServer({ workers: 2, testHooks: true });
  app = server.app;
});

afterAll(async () => {
  vi.restoreAllMocks();
  await app.close();
});

const session = async (id: string) =>
  Session.parse((await request(app.server).get(`/v1/sessions/${id}`).expect(200)).body);

describe("a session rebuilt after a worker loss", () => {
  it("goes to the live worker with room, not to the starting replacement", async () => {
    const m = app.moreau.sessions;
    // placed by count: a on worker 0, b on worker 1
    const a = await createSession(app, springParticle({ name: "a" }));
    const b = await createSession(app, springParticle({ name: "b" }));
    expect([m.workerOf(a), m.workerOf(b)]).toEqual([0, 1]);
    await waitFor(() => m.memoryCheckpointStep(a) === 0);
    await m.pool.killForTest(0);
    // (the worker's exit may be handled after the kill resolves)
    await waitFor(async () => (await session(a)).message?.startsWith("restored from") ?? false);
    await m.rebuilt();
    // before: worker 0 (the replacement, empty: the least loaded)
    expect(m.workerOf(a)).toBe(1);
    expect(m.pool.isAlive(1)).toBe(true);
    // and it steps on there by the recurrence
    const st = await step(app, a, 4);
    expect(st.bodies[0].position[0]).toBeCloseTo(springParticleRecurrence({}, 4).x, 12);
    // its recording spans the rebuild: the creation's, from t = 0 (until 2026-12-07 it
    // restarted at the checkpoint: "restored", its start the checkpoint's state)
    const rec = await request(app.server).get(`/v1/sessions/${a}/recording`).expect(200);
    expect(rec.body.since.cause).toBe("created");
    expect(rec.body.start).toBeNull();
    for (const id of [a, b]) await request(app.server).delete(`/v1/sessions/${id}`).expect(204);
  });

  it("says it is being rebuilt, and its state waits for the rebuild", async () => {
    const m = app.moreau.sessions;
    const id = await createSession(app, springParticle({ name: "held" }));
    await waitFor(() => m.memoryCheckpointStep(id) === 0);
    expect((await step(app, id, 5)).step).toBe(5);
    // the rebuild's restore waits for the test
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const original = m.pool.request.bind(m.pool);
    const spy = vi
      .spyOn(m.pool, "request")
      .mockImplementation(async (w: number, body: WorkerRequestBody, t?: number) => {
        if (body.kind === "restore" && body.sessionId === id) await gate;
        return original(w, body, t);
      });
    try {
      await m.pool.killForTest(m.workerOf(id));
      const during = await waitFor(async () => {
        const s = await session(id);
        return s.rebuilding ? s : null;
      });
      // the last known before the loss, said to be so
      expect(during).toMatchObject({ status: "ready", step: 5, rebuilding: true });
      expect(during.message).toMatch(/restoring the session from its last checkpoint$/);
      expect((await request(app.server).get("/v1/sessions").expect(200)).body.sessions).toEqual(
        expect.arrayContaining([expect.objectContaining({ id, rebuilding: true })]),
      );
      let answered = false;
      const state = getState(app, id).then((s) => {
        answered = true;
        return s;
      });
      // a stream opened meanwhile: its scene frame is the rebuilt session's
      const frames: { type: string; step: number }[] = [];
      const ws = new WebSocket(`${server.ws}/v1/sessions/${id}/stream`);
      ws.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString())));
      await new Promise((r) => ws.once("open", r));
      await sleep(200);
      // not answered from the lost simulation (its step 5)
      expect(answered).toBe(false);
      expect(frames).toEqual([]);
      release();
      const s = await state;
      // the checkpoint's step 0, as the rebuilt session is
      expect(s.step).toBe(0);
      await waitFor(() => frames.length >= 2);
      ws.close();
      // before: the scene frame at the lost step 5, and no state frame after it
      expect(frames[0]).toMatchObject({ type: "scene", step: 0 });
      expect(frames[1]).toMatchObject({ type: "state", step: 0 });
      await m.rebuilt();
      const after = await session(id);
      expect(after).toMatchObject({ status: "ready", step: 0, rebuilding: false });
      expect(after.message).toMatch(/the 5 step\(s\) after it were lost/);
    } finally {
      release();
      spy.mockRestore();
    }
    await request(app.server).delete(`/v1/sessions/${id}`).expect(204);
  });

  it("a new session made while the replacement starts goes to the live worker", async () => {
    const m = app.moreau.sessions;
    await waitFor(() => m.pool.alive === 2, 20_000);
    const a = await createSession(app, springParticle({ name: "a" }));
    const lost = m.workerOf(a);
    const live = 1 - lost;
    await waitFor(() => m.memoryCheckpointStep(a) === 0);
    // the replacement's entry waits for the test's word before it loads the worker (the
    // entry is read at each spawn: worker-pool.ts workerEntry)
    const channel = `moreau-hold-start-${process.pid}`;
    const dir = mkdtempSync(join(tmpdir(), "moreau-hold-"));
    const entry = join(dir, "held-worker.mjs");
    const real = process.env.MOREAU_WORKER_BUNDLE
      ? pathToFileURL(process.env.MOREAU_WORKER_BUNDLE)
      : new URL("../../src/server/worker-bootstrap.mjs", import.meta.url);
    writeFileSync(
      entry,
      [
        `import { BroadcastChannel } from "node:worker_threads";`,
        `const hold = new BroadcastChannel(${JSON.stringify(channel)});`,
        "const go = new Promise((resolve) => { hold.onmessage = resolve; });",
        `hold.postMessage("held");`,
        "await go;",
        "hold.close();",
        `await import(${JSON.stringify(real.href)});`,
      ].join("\n"),
    );
    const bundle = process.env.MOREAU_WORKER_BUNDLE;
    const unhold = () => {
      if (bundle === undefined) delete process.env.MOREAU_WORKER_BUNDLE;
      else process.env.MOREAU_WORKER_BUNDLE = bundle;
    };
    process.env.MOREAU_WORKER_BUNDLE = entry;
    // the word is given once the entry listens (a message before that would be lost)
    const start = new BroadcastChannel(channel);
    let held = false;
    let released = false;
    start.onmessage = () => {
      held = true;
      if (released) start.postMessage("go");
    };
    const release = () => {
      released = true;
      if (held) start.postMessage("go");
    };
    const asked: { worker: number; kind: string }[] = [];
    const original = m.pool.request.bind(m.pool);
    const spy = vi
      .spyOn(m.pool, "request")
      .mockImplementation(async (w: number, body: WorkerRequestBody, t?: number) => {
        if (body.kind === "open" || body.kind === "restore")
          asked.push({ worker: w, kind: body.kind });
        return original(w, body, t);
      });
    const made: string[] = [];
    try {
      await m.pool.killForTest(lost);
      await waitFor(async () => (await session(a)).message?.startsWith("restored from") ?? false);
      await m.rebuilt();
      unhold();
      expect(m.workerOf(a)).toBe(live);
      // where each new session's request went, then its answer (with the replacement held)
      const placed = async (make: () => Promise<string>, kind: string) => {
        const n = asked.length;
        const id = make();
        const first = await waitFor(() => asked[n], 20_000);
        expect(first.kind).toBe(kind);
        // before: the lost worker's index, its replacement still starting
        expect(first.worker).toBe(live);
        made.push(await id);
        expect(m.workerOf(made[made.length - 1])).toBe(live);
      };
      const post = (body: object) => async () =>
        (await request(app.server).post("/v1/sessions").send(body).expect(201)).body.id as string;
      await placed(() => createSession(app, springParticle({ name: "c" })), "open");
      await placed(
        async () =>
          (await request(app.server).post(`/v1/sessions/${a}/fork`).expect(201)).body.id as string,
        "restore",
      );
      const snapshot = (await request(app.server).get(`/v1/sessions/${a}/snapshot`).expect(200))
        .body;
      await placed(post({ snapshot }), "open");
      const recording = (await request(app.server).get(`/v1/sessions/${a}/recording`).expect(200))
        .body;
      await placed(post({ recording }), "open");
      // all answered while the replacement had not started
      expect(m.pool.isAlive(lost)).toBe(false);
      // and each steps on from step 0 by the recurrence
      for (const id of made) {
        const st = await step(app, id, 4);
        expect(st.bodies[0].position[0]).toBeCloseTo(springParticleRecurrence({}, 4).x, 12);
      }
    } finally {
      unhold();
      spy.mockRestore();
      release();
      // (a cold start on a loaded machine)
      await waitFor(() => m.pool.alive === 2, 20_000).finally(() => {
        start.close();
        rmSync(dir, { recursive: true, force: true });
      });
    }
    for (const id of [a, ...made])
      await request(app.server).delete(`/v1/sessions/${id}`).expect(204);
  });
});
