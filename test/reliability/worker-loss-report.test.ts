/**
 * What a worker loss costs a session is said, and a session lost before its first
 * checkpoint is not lost for good:
 * - a session rebuilt from its checkpoint behind the steps it had answered says so in its
 *   `message` (the step it came back at, the steps lost) until a reset, and
 *   moreau_session_rebuilds_total counts it: it read `ready`, message null, at a lower
 *   step than it had answered;
 * - a session created (201) whose first checkpoint was still queued on its busy worker when
 *   that worker died is rebuilt as it was created: it went to `error` ("no checkpoint of it
 *   was kept") though its model was held;
 * - without DATA_DIR, a change answered 2xx (PATCH, inputs, reset, pause) survives the loss
 *   of its worker, as the README promises: its answer waits for its checkpoint in memory.
 *   Its checkpoint was only asked for, deferred by CHECKPOINT_MIN_INTERVAL_MS after the
 *   creation's, and the worker killed right after the answer took the change with it (the
 *   session came back at step 0 with its old gravity, its inputs gone);
 * - a running session lost twice within a minute comes back paused (its run is not resumed,
 *   lest a session that kills its workers do so forever) and says so in its `message`: it
 *   read `paused` with the first loss's kind of message only, as if a client had paused it.
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../schemas/api";
import type { MoreauApp } from "../../src/server/app";
import { createSession, getState, step } from "../api/helpers";
import { slowSpringChain, springParticle, springParticleRecurrence } from "../support/models";
import { startApp } from "../support/server";
import { waitFor } from "../support/wait";

let app: MoreauApp;

beforeAll(async () => {
  app = await startApp({ workers: 2, testHooks: true });
});

afterAll(async () => {
  await app.close();
});

const session = async (id: string) =>
  Session.parse((await request(app.server).get(`/v1/sessions/${id}`)).body);

const rebuilds = async (from: string) => {
  const text = (await request(app.server).get("/metrics")).text;
  return Number(
    text.match(
      new RegExp(`^moreau_session_rebuilds_total\\{from="${from}"\\} (\\d+)$`, "m"),
    )?.[1] ?? 0,
  );
};

describe("a session rolled back by a worker loss", () => {
  it("says it was restored from its checkpoint at step 0 and lost 5 steps, until a reset", async () => {
    const m = app.moreau.sessions;
    const id = await createSession(app, springParticle({ name: "rolled" }));
    // its creation's checkpoint (step 0) is held; steps by request are checkpointed every 1000
    await waitFor(() => m.memoryCheckpointStep(id) === 0);
    expect((await step(app, id, 5)).step).toBe(5);
    const before = await rebuilds("memory");
    await m.pool.killForTest(m.workerOf(id));
    // (the worker's exit may be handled after the kill resolves)
    await waitFor(async () => (await rebuilds("memory")) === before + 1, 20_000);
    await m.rebuilt();
    const s = await session(id);
    expect(s).toMatchObject({ status: "ready", step: 0 });
    expect(s.message).toMatch(/^restored from its checkpoint at step 0 after a worker loss \(/);
    expect(s.message).toMatch(/the 5 step\(s\) after it were lost \(it had reached step 5\)$/);
    // it goes on from there, the message kept
    const st = await step(app, id, 3);
    expect(st.bodies[0].position[0]).toBeCloseTo(springParticleRecurrence({}, 3).x, 12);
    expect((await session(id)).message).toMatch(/restored from its checkpoint at step 0/);
    // a reset starts a new history
    await request(app.server).post(`/v1/sessions/${id}/reset`).expect(200);
    expect((await session(id)).message).toBeNull();
    await request(app.server).delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("a session lost before its first checkpoint", () => {
  it("is rebuilt as it was created (not `error`), and checkpointed", async () => {
    const m = app.moreau.sessions;
    // the earlier test's killed worker replaced (its session was rebuilt on the live one,
    // not waiting for it): the creation below may go to either worker, both running
    await waitFor(() => m.pool.alive === 2, 20_000);
    const created = m.create({ model: springParticle({ name: "early" }) });
    // the worker it goes to is made busy right after the creation (a block posted behind it
    // before the event loop reads any reply): the creation's checkpoint, an export asked for
    // once the creation is answered, waits behind the block
    const pending = () =>
      (m.pool as unknown as { slots: { pending: Map<number, unknown> }[] }).slots.map(
        (s) => s.pending.size > 0,
      );
    for (let i = 0; i < 100 && !pending().includes(true); i++) await Promise.resolve();
    const w = pending().indexOf(true);
    expect(w).toBeGreaterThanOrEqual(0);
    const blocked = m.pool
      .request(w, { kind: "test", hook: { action: "block", ms: 4000 } }, 60_000)
      .catch(() => undefined);
    const s0 = await created;
    expect(m.workerOf(s0.id)).toBe(w);
    expect(m.memoryCheckpointStep(s0.id)).toBeNull();
    const before = await rebuilds("creation");
    await m.pool.killForTest(w);
    await blocked;
    await m.rebuilt();
    const s = await session(s0.id);
    expect(s).toMatchObject({ status: "ready", step: 0 });
    expect(s.message).toMatch(/^rebuilt as it was created \(step 0\) after a worker loss/);
    expect(await rebuilds("creation")).toBe(before + 1);
    // a session like any other: checkpointed, steppable
    await waitFor(() => m.memoryCheckpointStep(s0.id) === 0);
    const st = await step(app, s0.id, 4);
    expect(st.bodies[0].position[0]).toBeCloseTo(springParticleRecurrence({}, 4).x, 12);
    expect((await getState(app, s0.id)).step).toBe(4);
    await request(app.server).delete(`/v1/sessions/${s0.id}`).expect(204);
  });
});

describe("a running session lost twice within a minute", () => {
  it("runs on after the first loss; after the second it is paused and says its run was not resumed", async () => {
    const m = app.moreau.sessions;
    const api = () => request(app.server);
    const id = await createSession(app, springParticle({ name: "twice" }));
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }).expect(202);
    const lose = async () => {
      await waitFor(() => (m.memoryCheckpointStep(id) ?? 0) > 0, 20_000);
      const before = await rebuilds("memory");
      await m.pool.killForTest(m.workerOf(id));
      await waitFor(async () => (await rebuilds("memory")) === before + 1, 20_000);
      await m.rebuilt();
      return session(id);
    };
    const first = await lose();
    expect(first.status).toBe("running");
    expect(first.message).toMatch(/^restored from its checkpoint at step \d+ after a worker loss/);
    expect(first.message).not.toMatch(/not resumed/);
    const second = await lose();
    expect(second.status).toBe("paused");
    expect(second.message).toMatch(/^restored from its checkpoint at step \d+ after a worker loss/);
    expect(second.message).toMatch(
      /; its run was not resumed, the session having been lost with a worker twice within 60 s \(POST \/run resumes it\)$/,
    );
    // it is where its checkpoint was: symplectic Euler's recurrence at that step
    const st = await getState(app, id);
    expect(st.step).toBe(second.step);
    const ref = springParticleRecurrence({}, st.step);
    expect(st.bodies[0].position[0]).toBeCloseTo(ref.x, 9);
    expect(st.bodies[0].velocity[0]).toBeCloseTo(ref.v, 8);
    // and runs again when asked
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }).expect(202);
    await waitFor(async () => (await session(id)).step > st.step);
    await api().post(`/v1/sessions/${id}/pause`).expect(200);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("a change answered without DATA_DIR, then the worker lost", () => {
  // the particle's zero-length spring (k/m = 100 /s²) pulls it back along z too: symplectic
  // Euler from z = 0 with velocity v0 under a constant acceleration a, n steps of h:
  // v ← v + h (a − (k/m) z), then z ← z + h v
  const h = 0.001;
  const zAfter = (n: number, v0: number, a: number) => {
    let z = 0;
    let v = v0;
    for (let i = 0; i < n; i++) {
      v += h * (a - 100 * z);
      z += h * v;
    }
    return { z, v };
  };

  it("PATCH, inputs, reset and pause are all in the rebuilt session", async () => {
    const m = app.moreau.sessions;
    const api = () => request(app.server);
    const lose = async (id: string) => {
      await m.pool.killForTest(m.workerOf(id));
      await m.rebuilt();
      return session(id);
    };
    // each right after a creation (within CHECKPOINT_MIN_INTERVAL_MS of its checkpoint) and
    // 150 steps, the worker killed as soon as the change is answered
    const fresh = async () => {
      const id = await createSession(app, springParticle({ name: "acknowledged" }));
      await step(app, id, 150);
      return id;
    };

    const patched = await fresh();
    await api()
      .patch(`/v1/sessions/${patched}`)
      .send({ gravity: [0, 0, -3] })
      .expect(200);
    const p = await lose(patched);
    expect(p.step).toBe(150);
    const sp = await step(app, patched, 40);
    expect(sp.bodies[0].position[2]).toBeCloseTo(zAfter(40, 0, -3).z, 14);
    expect(sp.bodies[0].velocity[2]).toBeCloseTo(zAfter(40, 0, -3).v, 13);

    const kicked = await fresh();
    const ack = await api()
      .post(`/v1/sessions/${kicked}/inputs`)
      .send({ inputs: [{ type: "bodyState", id: "p", velocity: [0, 0, 7] }], step: 160 })
      .expect(200);
    expect(ack.body).toEqual({ step: 160, pending: 1 });
    expect((await lose(kicked)).step).toBe(150);
    const sk = await step(app, kicked, 50);
    // set moving up at 7 m/s at step 160: 40 steps of the oscillation since
    expect(sk.bodies[0].position[2]).toBeCloseTo(zAfter(40, 7, 0).z, 14);
    expect(sk.bodies[0].velocity[2]).toBeCloseTo(zAfter(40, 7, 0).v, 13);

    const reset = await fresh();
    await api().post(`/v1/sessions/${reset}/reset`).expect(200);
    expect((await lose(reset)).step).toBe(0);
    const sr = await step(app, reset, 30);
    expect(sr.bodies[0].position[0]).toBeCloseTo(springParticleRecurrence({}, 30).x, 14);

    const paused = await fresh();
    await api().post(`/v1/sessions/${paused}/run`).send({ realtimeFactor: 1 }).expect(202);
    const at = (await api().post(`/v1/sessions/${paused}/pause`).expect(200)).body.step;
    const ps = await lose(paused);
    expect(ps).toMatchObject({ status: "paused", step: at });
    expect((await getState(app, paused)).bodies[0].position[0]).toBeCloseTo(
      springParticleRecurrence({}, at).x,
      12,
    );
    for (const id of [patched, kicked, reset, paused])
      await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("a session whose worker is lost during a long step", () => {
  it("once rebuilt, its message says where it came back, not that it is being restored", async () => {
    const m = app.moreau.sessions;
    const api = () => request(app.server);
    const id = await createSession(app, slowSpringChain(200));
    await step(app, id, 100);
    await api()
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: [{ type: "bodyState", id: "p0", velocity: [0, 0, 1] }], step: 400 })
      .expect(200);
    // a PATCH is answered once its checkpoint (step 100) is held
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ gravity: [0, 0, -5] })
      .expect(200);
    const before = await rebuilds("memory");
    // a step of minutes: the worker is killed while it runs
    const answered = api()
      .post(`/v1/sessions/${id}/step`)
      .send({ steps: 100_000 })
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 200));
    await m.pool.killForTest(m.workerOf(id));
    expect((await answered).status).toBe(500);
    await waitFor(async () => (await rebuilds("memory")) === before + 1, 20_000);
    await m.rebuilt();
    const s = await session(id);
    expect(s).toMatchObject({ status: "ready", step: 100 });
    expect(s.message).toMatch(/^restored from its checkpoint at step 100 after a worker loss \(/);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});
