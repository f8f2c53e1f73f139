/**
 * Failure paths: divergence (in a step request and in a run) keeps the last good state and
 * a message; a solver that throws puts its session in `error`; a crashed worker is replaced
 * and its sessions rebuilt from their last checkpoint while the server and the other
 * worker's sessions carry on (test/reliability/chaos.test.ts kills one mid-run); time limits (cooperative 504, and the watchdog that replaces a stuck worker).
 * Faults are injected through the worker's test hooks (enabled by `testHooks`, never from
 * the environment).
 */
import { connect } from "node:net";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { ErrorBody, Session } from "../../schemas/api";
import { State } from "../../schemas/state";
import type { MoreauApp } from "../../src/server/app";
import type { TestHook } from "../../src/server/protocol";
import { FrameClient } from "../support/frames";
import {
  centralDifferenceRecurrence,
  DIVERGING_STIFFNESS,
  divergingSpring,
  fallingBody,
  springParticle,
  springParticleRecurrence,
} from "../support/models";
import { startApp, startServer, useServer } from "../support/server";
import { sleep, waitFor } from "../support/wait";
import { createSession, G, getState, step } from "./helpers";

const server = useServer({ workers: 2, testHooks: true });
const api = () => request(server.app.server);
const hook = (a: MoreauApp, worker: number, h: TestHook, timeoutMs?: number) =>
  a.moreau.sessions.pool.request(worker, { kind: "test", hook: h }, timeoutMs);
const session = async (a: MoreauApp, id: string) =>
  Session.parse((await request(a.server).get(`/v1/sessions/${id}`)).body);

describe("divergence", () => {
  it("a diverging step answers 422, keeps the last good state, and recovers after PATCH + reset", async () => {
    const id = await createSession(server.app, divergingSpring());
    const r = await api().post(`/v1/sessions/${id}/step`).send({ steps: 10 });
    expect(r.status).toBe(422);
    const e = ErrorBody.parse(r.body);
    expect(e.error).toBe("diverged");
    expect(e.message).toMatch(/diverged at step 2/);
    expect(e.details).toMatchObject({ session: id, step: 1, stepsDone: 1 });

    const s = await session(server.app, id);
    expect(s.status).toBe("diverged");
    expect(s.message).toMatch(/blew up/);
    // last good state: one central-difference step of the 1e7 N/m spring
    const good = await getState(server.app, id);
    const ref = centralDifferenceRecurrence({ stiffness: DIVERGING_STIFFNESS, dt: 0.01 }, 1);
    expect(good.step).toBe(1);
    expect(good.bodies[0].position[0]).toBeCloseTo(ref.x, 6); // −499
    expect(good.bodies[0].velocity[0]).toBeCloseTo(ref.v, 4); // 2.49e7

    expect((await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 })).status).toBe(409);
    expect((await api().post(`/v1/sessions/${id}/run`).send({})).status).toBe(409);
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { dt: 1e-5 } })
      .expect(200);
    const reset = State.parse((await api().post(`/v1/sessions/${id}/reset`).expect(200)).body);
    expect(reset.bodies[0].position).toEqual([1, 0, 0]);
    expect((await session(server.app, id)).status).toBe("ready");
    // h²k/m = 1e-3: stable now
    const after = await step(server.app, id, 500);
    const ref2 = centralDifferenceRecurrence({ stiffness: DIVERGING_STIFFNESS, dt: 1e-5 }, 500);
    expect(after.bodies[0].position[0]).toBeCloseTo(ref2.x, 9);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("a run that diverges stops in `diverged`; the worker serves its other sessions", async () => {
    const bad = await createSession(server.app, divergingSpring());
    const good = await createSession(server.app, fallingBody({ z0: 10 }));
    const other = await createSession(server.app, fallingBody({ z0: 10 })); // same worker as `bad`
    const m = server.app.moreau.sessions;
    expect(m.workerOf(other)).toBe(m.workerOf(bad));
    await api().post(`/v1/sessions/${bad}/run`).send({ realtimeFactor: null }).expect(202);
    const s = await waitFor(async () => {
      const x = await session(server.app, bad);
      return x.status === "diverged" ? x : null;
    });
    expect(s.run).toBeNull();
    expect(s.step).toBe(1);
    expect(s.message).toMatch(/diverged at step 2/);
    const o = await step(server.app, other, 100);
    expect(o.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * G * 0.25, 10);
    await step(server.app, good, 1);
    expect((await api().get("/health")).status).toBe(200);
    for (const id of [bad, good, other]) await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("a solver that throws", () => {
  it("puts its session in `error` with a message and its last good state", async () => {
    const id = await createSession(server.app, springParticle({ name: "thrower" }));
    const before = await step(server.app, id, 10);
    await hook(server.app, server.app.moreau.sessions.workerOf(id), {
      action: "throwOnStep",
      sessionId: id,
      message: "matrix is singular",
    });
    const r = await api().post(`/v1/sessions/${id}/step`).send({ steps: 10 });
    expect(r.status).toBe(500);
    expect(ErrorBody.parse(r.body)).toMatchObject({
      error: "solver_error",
      message: "solver failed: matrix is singular",
    });
    const s = await session(server.app, id);
    expect(s).toMatchObject({
      status: "error",
      step: 10,
      message: "solver failed: matrix is singular",
    });
    expect((await getState(server.app, id)).bodies).toEqual(before.bodies);
    expect((await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 })).status).toBe(409);
    expect(
      (
        await api()
          .patch(`/v1/sessions/${id}`)
          .send({ gravity: [0, 0, 0] })
      ).status,
    ).toBe(409);
    await api().post(`/v1/sessions/${id}/reset`).expect(200);
    const again = await step(server.app, id, 10);
    expect(again.bodies).toEqual(before.bodies);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("a crashed worker", () => {
  it("is replaced; its sessions are rebuilt from their last checkpoint; the rest of the server is unaffected", async () => {
    const a = await createSession(server.app, springParticle({ name: "a" }));
    const b = await createSession(server.app, springParticle({ name: "b" }));
    const m = server.app.moreau.sessions;
    expect(m.workerOf(a)).not.toBe(m.workerOf(b));
    const at30 = await step(server.app, a, 30);
    // a pause is checkpointed at once (held in memory: no DATA_DIR here)
    await api().post(`/v1/sessions/${a}/pause`).expect(200);
    await waitFor(async () => m.memoryCheckpointStep(a) === 30);
    await step(server.app, a, 10); // not checkpointed
    await step(server.app, b, 30);
    const c = new FrameClient(`${server.ws}/v1/sessions/${a}/stream?fields=bodies`);
    await c.open();
    await c.waitForMessages(2);

    await expect(hook(server.app, m.workerOf(a), { action: "exit", code: 3 })).rejects.toThrow(
      /exited unexpectedly \(exit code 3\)/,
    );
    // rebuilt live at its last checkpoint (step 30): requests wait for the rebuild
    expect(await getState(server.app, a)).toEqual(at30);
    expect(await session(server.app, a)).toMatchObject({ status: "ready", step: 30 });
    // the other worker's session and the server carry on
    const sb = await step(server.app, b, 30);
    const ref = springParticleRecurrence({}, 60);
    expect(sb.bodies[0].position[0]).toBeCloseTo(ref.x, 12);
    expect((await api().get("/health")).status).toBe(200);
    await waitFor(async () => (await api().get("/ready")).status === 200);
    const metrics = (await api().get("/metrics")).text;
    expect(metrics).toMatch(/^moreau_worker_restarts_total 1$/m);
    expect(metrics).toMatch(/^moreau_session_rebuilds_total\{from="memory"\} 1$/m);
    expect(metrics).toMatch(/^moreau_sessions\{status="error"\} 0$/m);

    // it continues from the checkpoint as the uninterrupted session would; its stream goes on
    const sa2 = await step(server.app, a, 30);
    expect(sa2.step).toBe(60);
    expect(sa2.bodies[0].position[0]).toBeCloseTo(ref.x, 12);
    await waitFor(async () => c.states().at(-1)?.step === 60);
    expect(c.states().at(-1)?.bodies).toEqual(sa2.bodies);
    c.close();
    for (const id of [a, b]) await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("time limits", () => {
  it("a step request over REQUEST_TIMEOUT_MS ends with 504 and keeps the state it reached", async () => {
    const t = await startApp({ workers: 1, requestTimeoutMs: 300, maxStepsPerRequest: 1e12 });
    try {
      const id = await createSession(t, springParticle({ dt: 1e-6, name: "slow" }));
      const t0 = performance.now();
      const r = await request(t.server).post(`/v1/sessions/${id}/step`).send({ steps: 1e11 });
      const ms = performance.now() - t0;
      expect(r.status).toBe(504);
      const e = ErrorBody.parse(r.body);
      expect(e.error).toBe("timeout");
      const d = e.details as { stepsDone: number; stepsRequested: number; step: number };
      expect(d.stepsRequested).toBe(1e11);
      expect(d.stepsDone).toBeGreaterThan(0);
      // the deadline ended it (1e11 steps would take days); no upper bound on wall time: the
      // machine may be loaded
      expect(ms).toBeGreaterThan(290);
      const s = await getState(t, id);
      expect(s.step).toBe(d.step);
      expect((await session(t, id)).status).toBe("ready");
      const ref = springParticleRecurrence({ dt: 1e-6 }, s.step);
      expect(s.bodies[0].position[0]).toBeCloseTo(ref.x, 9);
    } finally {
      await t.close();
    }
  });

  it("a worker that stops answering is replaced; the request answers 504", async () => {
    const t = await startApp({ workers: 1, requestTimeoutMs: 200, testHooks: true });
    try {
      const id = await createSession(t, fallingBody());
      // one computation that never yields for 4 s (its own request may wait 60 s)
      const blocked = hook(t, 0, { action: "block", ms: 4000 }, 60_000).catch((e: Error) => e);
      const t0 = performance.now();
      const r = await request(t.server).get(`/v1/sessions/${id}/state`);
      const ms = performance.now() - t0;
      expect(r.status).toBe(504);
      expect(ErrorBody.parse(r.body).message).toMatch(/did not answer a state request/);
      // limit 200 ms + grace max(1 s, 100 ms); the watchdog, not the end of the block, ended
      // it: the blocked request fails with "restarted" below
      expect(ms).toBeGreaterThan(1150);
      expect(((await blocked) as Error).message).toMatch(/restarted/);
      // rebuilt from its last checkpoint (its creation)
      expect(await session(t, id)).toMatchObject({ status: "ready", step: 0 });
      expect((await request(t.server).get("/health")).status).toBe(200);
      await waitFor(async () => (await request(t.server).get("/ready")).status === 200);
      const id2 = await createSession(t, fallingBody({ z0: 1 }));
      expect((await step(t, id2, 10)).step).toBe(10);
    } finally {
      await t.close();
    }
  });
});

describe("graceful shutdown", () => {
  it("finishes an in-flight step, then refuses new work", async () => {
    const { app: t, port } = await startServer({ workers: 1, maxStepsPerRequest: 1e9 });
    const id = await createSession(t, springParticle({ dt: 1e-5, name: "shut" }));
    const n = 400_000;
    const inflight = request(`http://127.0.0.1:${port}`)
      .post(`/v1/sessions/${id}/step`)
      .send({ steps: n });
    const answered = inflight.then((r) => r);
    await sleep(100);
    const closing = t.close();
    const r = await answered;
    expect(r.status).toBe(200);
    expect(State.parse(r.body).step).toBe(n);
    await closing;
    await expect(request(`http://127.0.0.1:${port}`).get("/health")).rejects.toThrow();
  });

  it("a client that never reads its answer does not hold the shutdown", async () => {
    const { app: t, port } = await startServer({ workers: 1 });
    // three.js (~1.3 MB) eight times, pipelined on a socket that is never read: the
    // answers fill the socket buffers and stay unflushed
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.pause();
    socket.write("GET /vendor/three/three.module.js HTTP/1.1\r\nHost: x\r\n\r\n".repeat(8));
    await sleep(200);
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    const t0 = performance.now();
    await t.close();
    expect(performance.now() - t0).toBeLessThan(4000);
    socket.resume(); // let the destroyed connection's close reach this side
    await closed;
  }, 20_000);
});
