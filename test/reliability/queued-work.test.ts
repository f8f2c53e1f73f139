/**
 * Work that waits in line, over the API (loopback only, bounded):
 * - a DELETE while a long step runs and a run, PATCH, inputs and reset are queued behind
 *   it (in the session's turn, records.ts inTurn): the DELETE answers 204 and every one of
 *   them 404, and the worker steps nothing more. They had answered 202 and 200 after the 204, the run stepping the deleted
 *   session for good (its heap kept: 19 MiB → 2.7 GiB in the audit);
 * - legal creations queued on one worker (each far within REQUEST_TIMEOUT_MS + grace,
 *   together far past it) are all created, and no worker is restarted: the watchdog timed
 *   them from when they were posted, answered 504 and restarted the worker;
 * - concurrent creations and assemblies of posted models spread over the workers: they
 *   were all placed on the worker that was the least loaded before any of them was
 *   answered.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import type { WorkerPool } from "../../src/server/worker-pool";
import { createSession } from "../api/helpers";
import { fallingBody, slowSpringChain, sphericalChain } from "../support/models";
import { startApp } from "../support/server";
import { sleep, waitFor } from "../support/wait";

const chain = () => slowSpringChain(300);

const metric = async (app: MoreauApp, name: string): Promise<number> => {
  const text = (await request(app.server).get("/metrics")).text;
  return Number(text.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1] ?? Number.NaN);
};

/** Requests posted to worker `w` and not answered yet. */
const pendingOn = (pool: WorkerPool, w: number) =>
  (pool as unknown as { slots: { pending: Map<number, unknown> }[] }).slots[w].pending.size;

describe("a DELETE with work queued on the session", () => {
  let app: MoreauApp;
  beforeAll(async () => {
    app = await startApp({ workers: 1 });
  });
  afterAll(async () => {
    await app.close();
  });

  it("answers 204; the step in progress and the run, PATCH, inputs and reset queued behind it 404; nothing steps it any more", async () => {
    const api = () => request(app.server);
    const id = await createSession(app, chain());
    const pool = app.moreau.sessions.pool;
    // a step of minutes (it stops at the delete)
    const step = api()
      .post(`/v1/sessions/${id}/step`)
      .send({ steps: 1_000_000 })
      .then((r) => r);
    await waitFor(async () => (await metric(app, "moreau_steps_total")) > 0, 20_000);
    const queued = [
      api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }),
      api()
        .patch(`/v1/sessions/${id}`)
        .send({ gravity: [0, 0, -1] }),
      api()
        .post(`/v1/sessions/${id}/inputs`)
        .send({ inputs: [{ type: "impulse", id: "p5", impulse: [0, 0, 0.001] }] }),
      api().post(`/v1/sessions/${id}/reset`),
    ].map((r) => r.then((x) => x));
    // all four waiting for their turn behind the step (records.ts inTurn: commands take
    // effect in the order received; until 2026-12-07 they were in the worker's queue)
    const rec = app.moreau.sessions.local(id);
    await waitFor(() => (rec?.commandsQueued ?? 0) >= 5, 20_000);
    expect(pendingOn(pool, 0)).toBe(1);
    const del = await api().delete(`/v1/sessions/${id}`);
    expect(del.status).toBe(204);
    const answers = await Promise.all([step, ...queued]);
    expect(answers.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    for (const r of answers) expect(r.body.error).toBe("not_found");
    expect((await api().get(`/v1/sessions/${id}`)).status).toBe(404);
    expect((await api().get("/v1/sessions")).body.sessions).toEqual([]);
    // the worker steps nothing any more (its stats come every 250 ms)
    await sleep(600);
    const steps = await metric(app, "moreau_steps_total");
    await sleep(1000);
    expect(await metric(app, "moreau_steps_total")).toBe(steps);
  });
});

describe("legal creations queued on one worker", () => {
  /** A convex hull of 5000 points on the unit sphere: its build takes most of a second. */
  const hull = () => {
    const n = 5000;
    const points = Array.from({ length: n }, (_, i) => {
      const z = 1 - (2 * i + 1) / n;
      const r = Math.sqrt(1 - z * z);
      const t = i * 2.399963;
      return [r * Math.cos(t), r * Math.sin(t), z];
    });
    return { name: "hull", bodies: [{ id: "h", mass: 1, shapes: [{ type: "convex", points }] }] };
  };

  it("eight at once on one worker (REQUEST_TIMEOUT_MS 2 s + 1 s grace, ~5 s in all): all created, no worker restarted", async () => {
    const app = await startApp({ workers: 1, requestTimeoutMs: 2000 });
    try {
      const victim = await createSession(app, fallingBody());
      const body = { model: hull() };
      const answers = await Promise.all(
        Array.from({ length: 8 }, () => request(app.server).post("/v1/sessions").send(body)),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(await metric(app, "moreau_worker_restarts_total")).toBe(0);
      const v = await request(app.server).get(`/v1/sessions/${victim}`);
      expect(v.body).toMatchObject({ status: "ready", message: null });
    } finally {
      await app.close();
    }
  }, 120_000);
});

describe("placement", () => {
  let app: MoreauApp;
  beforeAll(async () => {
    app = await startApp({ workers: 2 });
  });
  afterAll(async () => {
    await app.close();
  });

  it("concurrent creations spread over the workers", async () => {
    const m = app.moreau.sessions;
    const made = await Promise.all(
      Array.from({ length: 4 }, (_, k) => m.create({ model: fallingBody({ z0: k + 1 }) })),
    );
    const workers = made.map((s) => m.workerOf(s.id));
    expect(workers.filter((w) => w === 0)).toHaveLength(2);
    expect(workers.filter((w) => w === 1)).toHaveLength(2);
    for (const s of made) await m.delete(s.id);
  });

  it("concurrent assemblies of posted models go to different workers", async () => {
    const m = app.moreau.sessions;
    const spy = vi.spyOn(m.pool, "request");
    try {
      const model = {
        name: "chain",
        ...sphericalChain({ links: 20, prefix: "b", length: 1, mass: 1, inertia: [1, 1, 1] }),
      };
      const body = Buffer.from(JSON.stringify({ model, options: {} }));
      await Promise.all([m.assembleModel(body), m.assembleModel(body)]);
      const used = spy.mock.calls.filter(([, b]) => b.kind === "assembleModel").map(([w]) => w);
      expect(used.sort()).toEqual([0, 1]);
    } finally {
      spy.mockRestore();
    }
  });
});
