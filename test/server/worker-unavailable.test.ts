/**
 * A solver worker whose replacement cannot start (its script missing, as a broken
 * deployment would leave it: the test hook points the pool's spawns at a file that does not
 * exist) neither loses acknowledged work nor takes the server down: the lost session waits,
 * its last checkpoint kept; its requests and new sessions are answered 503
 * `worker_unavailable` naming the cause, with Retry-After; /ready is 503 and says why; the
 * pool retries the start with back-off, and once a worker starts the session is restored
 * from its checkpoint and steps on as if nothing happened. While it waits it is `restoring`
 * (GET, the list, moreau_sessions), then the status it had (a run resumed); until 2026-12-07
 * it showed the status it had before the loss. Until 2026-12-07 the session's
 * rebuild failed after three starts (500 `worker_crashed`) and it went to `error`, its
 * simulation gone. Real worker threads.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { sample } from "../support/metrics";
import { hingedRods } from "../support/models";
import { driveWithImpulse, expectDrivenWithoutLoss } from "../support/recordings";
import { startServer, type TestServer } from "../support/server";
import { waitFor } from "../support/wait";

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };

let server: TestServer;
let app: MoreauApp;
const api = () => request(app.server);

beforeAll(async () => {
  server = await startServer({ workers: 1, testHooks: true });
  app = server.app;
});
afterAll(async () => {
  await app.close();
});

const drive = (id: string) => driveWithImpulse(api, id);

describe("a replacement worker that cannot start", () => {
  it("503 with Retry-After naming the cause, /ready 503, then recovery with the session's acknowledged work", async () => {
    const m = app.moreau.sessions;
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await drive(id);
    const stepped = (await api().get(`/v1/sessions/${id}`).expect(200)).body.status;
    // and one running (in real time, with no end) when the worker goes
    const running = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await api().post(`/v1/sessions/${running}/run`).send({ realtimeFactor: 1 }).expect(202);
    expect((await api().get(`/v1/sessions/${running}`).expect(200)).body.status).toBe("running");
    m.pool.breakStartsForTest(0, true);
    await m.pool.killForTest(0);
    // the rebuild finds no worker that can start: the session waits (before: `error`)
    await waitFor(
      async () =>
        ((await api().get(`/v1/sessions/${id}`)).body.message ?? "").includes(
          "for a solver worker to start",
        ),
      20_000,
    );
    await waitFor(
      async () =>
        ((await api().get(`/v1/sessions/${running}`)).body.message ?? "").includes(
          "for a solver worker to start",
        ),
      20_000,
    );
    const s = (await api().get(`/v1/sessions/${id}`).expect(200)).body;
    // both say they wait to be restored, listed so and counted so (before: the status each
    // had before the loss, `paused` and `running`, the latter with its run)
    expect(s.status).toBe("restoring");
    const r1 = (await api().get(`/v1/sessions/${running}`).expect(200)).body;
    expect([r1.status, r1.run]).toEqual(["restoring", null]);
    const listed = (await api().get("/v1/sessions").expect(200)).body.sessions;
    expect(listed.map((x: { id: string; status: string }) => [x.id, x.status]).sort()).toEqual(
      [
        [id, "restoring"],
        [running, "restoring"],
      ].sort(),
    );
    const metrics = await api().get("/metrics").expect(200);
    expect(sample(metrics.text, 'moreau_sessions{status="restoring"}')).toBe(2);
    expect(sample(metrics.text, 'moreau_sessions{status="running"}')).toBe(0);
    // since when it waits (before: not said)
    const since = /waiting since (\S+) /.exec(s.message)?.[1] ?? "";
    expect(Date.parse(since)).toBeGreaterThan(0);
    // its requests: 503 worker_unavailable, Retry-After, the cause and the session named
    const r = await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 });
    expect(r.status).toBe(503);
    expect(r.body.error).toBe("worker_unavailable");
    expect(r.body.message).toContain("no-such-worker-for-test");
    expect(r.body.message).toContain(`session "${id}" is waiting since ${since}`);
    expect(r.body.details.session).toBe(id);
    expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // a new session too (no worker runs)
    const c = await api().post("/v1/sessions").send({ model });
    expect(c.status).toBe(503);
    expect(c.body.error).toBe("worker_unavailable");
    expect(Number(c.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // not ready, and says why; alive all the same
    const ready = await api().get("/ready");
    expect(ready.status).toBe(503);
    expect(ready.body.workers.alive).toBe(0);
    expect(ready.body.workers.failing).toHaveLength(1);
    expect(ready.body.workers.failing[0]).toContain("exited");
    await api().get("/health").expect(200);
    // the worker can start again: the pool's next try starts it and the session comes back
    m.pool.breakStartsForTest(0, false);
    await waitFor(async () => (await api().get("/ready")).status === 200, 60_000);
    await waitFor(async () => {
      const b = (await api().get(`/v1/sessions/${id}`)).body;
      return (b.message ?? "").startsWith("restored from its checkpoint at step 10");
    }, 20_000);
    await m.rebuilt();
    // restored, each in the status it had: the running one runs on (its run resumed)
    expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.status).toBe(stepped);
    await waitFor(
      async () => (await api().get(`/v1/sessions/${running}`)).body.status === "running",
      20_000,
    );
    const back = (await api().get(`/v1/sessions/${running}`).expect(200)).body;
    expect(back.run?.realtimeFactor).toBe(1);
    await api().delete(`/v1/sessions/${running}`).expect(204);
    // its checkpoint at step 10 (the inputs' answer) holds the impulse: stepped on to 15 it
    // is exactly a session driven the same way without a loss
    await expectDrivenWithoutLoss(api, id, model, 15);
  }, 120_000);
});

describe("a session waiting for a worker, under SESSION_IDLE_TTL", () => {
  it("is not expired while it waits (its checkpoint with it), and comes back once a worker starts", async () => {
    // 1 s: swept every 250 ms (idle.ts)
    const idle = await startServer({ workers: 1, testHooks: true, sessionIdleTtl: 1 });
    const call = () => request(idle.app.server);
    const m = idle.app.moreau.sessions;
    // its message, read without a request (a request is activity: the idle clock restarts)
    const said = (id: string) => {
      const r = m.local(id);
      return r ? (r.message ?? r.notice ?? "") : "gone";
    };
    try {
      const id = (await call().post("/v1/sessions").send({ model }).expect(201)).body.id;
      await driveWithImpulse(call, id);
      m.pool.breakStartsForTest(0, true);
      await m.pool.killForTest(0);
      await waitFor(() => said(id).includes("for a solver worker to start"), 20_000);
      // four TTLs with no request on it: before, the sweep deleted it (and its checkpoint)
      await new Promise((r) => setTimeout(r, 4000));
      expect(said(id)).toContain("for a solver worker to start");
      m.pool.breakStartsForTest(0, false);
      await waitFor(() => said(id).startsWith("restored from its checkpoint at step 10"), 60_000);
    } finally {
      await idle.app.close();
    }
  }, 120_000);
});
