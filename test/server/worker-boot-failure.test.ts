/**
 * A solver worker that cannot start at the server's start (its script missing, as a broken
 * deployment leaves it: MOREAU_WORKER_BUNDLE pointed at a file that does not exist) does not
 * fail the start: the server starts degraded — /health 200, /ready 503 naming the cause in
 * workers.failing, a new session and the checkpointed sessions' requests 503
 * `worker_unavailable` with Retry-After — and once a worker can start (the pool retries with
 * back-off) the checkpointed session is restored with its acknowledged work. Until
 * 2026-12-07 the start rejected (buildApp threw: the process exited). Real worker threads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { hingedRods } from "../support/models";
import { startApp } from "../support/server";
import { waitFor } from "../support/wait";

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };
const impulse = { type: "impulse", id: "r2", impulse: [0, 0, 2], point: [0.5, 0, 0] };

const dir = mkdtempSync(join(tmpdir(), "moreau-boot-"));
const bundle = process.env.MOREAU_WORKER_BUNDLE;
const apps: MoreauApp[] = [];
afterAll(async () => {
  if (bundle === undefined) delete process.env.MOREAU_WORKER_BUNDLE;
  else process.env.MOREAU_WORKER_BUNDLE = bundle;
  for (const app of apps) await app.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Steps 10, an impulse (acknowledged: checkpointed before its answer), steps 5. */
async function drive(app: MoreauApp, id: string) {
  const api = () => request(app.server);
  await api().post(`/v1/sessions/${id}/step`).send({ steps: 10 }).expect(200);
  await api()
    .post(`/v1/sessions/${id}/inputs`)
    .send({ inputs: [impulse] })
    .expect(200);
  return (await api().post(`/v1/sessions/${id}/step`).send({ steps: 5 }).expect(200)).body;
}

describe("a worker that cannot start at the server's start", () => {
  it("starts degraded (/health 200, /ready 503 naming it, 503 worker_unavailable), then restores the checkpointed session", async () => {
    const first = await startApp({ workers: 1, dataDir: dir });
    apps.push(first);
    const id = (await request(first.server).post("/v1/sessions").send({ model }).expect(201)).body
      .id;
    const before = await drive(first, id);
    await first.close();

    // the worker's script is missing at the restart: before, startApp rejected here
    const missing = join(dir, "no-such-worker-at-boot.mjs");
    process.env.MOREAU_WORKER_BUNDLE = missing;
    const app = await startApp({ workers: 1, dataDir: dir });
    apps.push(app);
    const api = () => request(app.server);
    await api().get("/health").expect(200);
    const ready = await api().get("/ready");
    expect(ready.status).toBe(503);
    expect(ready.body.workers.alive).toBe(0);
    expect(ready.body.workers.failing).toHaveLength(1);
    expect(ready.body.workers.failing[0]).toContain("no-such-worker-at-boot");
    // a new session: no worker can take it
    const c = await api().post("/v1/sessions").send({ model });
    expect(c.status).toBe(503);
    expect(c.body.error).toBe("worker_unavailable");
    expect(Number(c.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // the checkpointed session waits for one: 503 naming the cause, not 404
    const s = await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 });
    expect(s.status).toBe(503);
    expect(s.body.error).toBe("worker_unavailable");
    expect(s.body.message).toContain("no-such-worker-at-boot");
    expect(Number(s.headers["retry-after"])).toBeGreaterThanOrEqual(1);

    // the script is back: the pool's next try starts the worker and the session comes back
    if (bundle === undefined) delete process.env.MOREAU_WORKER_BUNDLE;
    else process.env.MOREAU_WORKER_BUNDLE = bundle;
    await waitFor(async () => (await api().get("/ready")).status === 200, 60_000);
    await waitFor(async () => (await api().get(`/v1/sessions/${id}`)).status === 200, 20_000);
    const restored = (await api().get(`/v1/sessions/${id}/state`).expect(200)).body;
    expect(restored.step).toBe(15);
    expect(restored.bodies).toEqual(before.bodies);
    // stepped on to 20 it is exactly a session driven the same way with no restart
    const after = (await api().post(`/v1/sessions/${id}/step`).send({ steps: 5 }).expect(200)).body;
    const ref = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await drive(app, ref);
    const expected = (await api().post(`/v1/sessions/${ref}/step`).send({ steps: 5 }).expect(200))
      .body;
    expect(after.step).toBe(20);
    expect(after.bodies).toEqual(expected.bodies);
    expect(after.joints).toEqual(expected.joints);
  }, 120_000);
});
