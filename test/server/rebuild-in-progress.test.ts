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
 * The rebuild is held deterministically: the restore request is gated until the test
 * releases it.
 */
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
    // its recording restarted at the checkpoint, and says so
    const rec = await request(app.server).get(`/v1/sessions/${a}/recording`).expect(200);
    expect(rec.body.since.cause).toBe("restored");
    expect(rec.body.start.step).toBe(0);
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
});
