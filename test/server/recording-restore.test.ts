/**
 * A recording spans the restores of its session from its own checkpoints (a worker loss's
 * rebuild, a server restart): its start stays the session's (null: t = 0 of the model) and
 * it holds every acknowledged input, those before the restore too, so that a session created
 * from it and stepped to its end reproduces the session's state bit for bit. Until
 * 2026-12-07 each restore started a new recording (`since.cause` "restored", its start the
 * checkpoint's state): the inputs before it were not in it. Real worker threads; a double
 * pendulum (chaotic: an input missed or applied in another order shows in the state hash).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { hingedRods } from "../support/models";
import { motion, postInputs, replayed, rodImpulse, stepBy } from "../support/recordings";
import { startApp, useServer } from "../support/server";

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };

describe("a recording spans a worker loss's rebuild", () => {
  const server = useServer({ workers: 1, testHooks: true });
  const api = () => request(server.app.server);

  it("drive, lose the worker, drive more: the recording from t = 0 replays to the same state", async () => {
    const m = server.app.moreau.sessions;
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await postInputs(api, id, [rodImpulse(3)]);
    await stepBy(api, id, 30);
    // one at the current step (applied now) and one ahead (pending at the checkpoint)
    await postInputs(api, id, [rodImpulse(-2)]);
    await postInputs(api, id, [rodImpulse(1.5)], 60);
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ gravity: [0, 0, -9] })
      .expect(200);
    // 10 steps past the checkpoint (step 30), lost with the worker
    await stepBy(api, id, 10);
    await m.pool.killForTest(0);
    await m.rebuilt();
    // (the exit may be handled after the kill resolves)
    for (let i = 0; i < 100 && !(await api().get(`/v1/sessions/${id}`)).body.message; i++)
      await new Promise((r) => setTimeout(r, 50));
    await m.rebuilt();
    expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(30);
    // a later go at the restore's own step, then past the pending input, and one more
    await postInputs(api, id, [rodImpulse(0.7)]);
    await stepBy(api, id, 50);
    await postInputs(api, id, [rodImpulse(-1)]);
    const end = await stepBy(api, id, 20);
    expect(end.step).toBe(100);
    const { rec, state, hash } = await replayed(api, id);
    // before: since "restored", the start the checkpoint's state at step 30, and only the
    // inputs after it (3 of 6)
    expect(rec.since.cause).toBe("created");
    expect(rec.start).toBeNull();
    expect(rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 30, 30, 60, 30, 80]);
    expect(rec.inputs[4].separate).toBe(true);
    expect(hash).toBe(rec.end.hash);
    expect(motion(state)).toEqual(motion(end));
  });
});

describe("a recording spans a server restart (DATA_DIR)", () => {
  const dir = mkdtempSync(join(tmpdir(), "moreau-recording-restart-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("drive, restart, drive more: the recording from t = 0 replays to the same state", async () => {
    let app: MoreauApp = await startApp({ workers: 1, dataDir: dir });
    const api = () => request(app.server);
    const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
    await postInputs(api, id, [rodImpulse(2)]);
    await stepBy(api, id, 25);
    await postInputs(api, id, [rodImpulse(1)], 40);
    await app.close();
    app = await startApp({ workers: 1, dataDir: dir });
    try {
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(25);
      await postInputs(api, id, [rodImpulse(-1.5)], 30);
      const end = await stepBy(api, id, 35);
      const { rec, state, hash } = await replayed(api, id);
      expect(rec.since.cause).toBe("created");
      expect(rec.start).toBeNull();
      expect(rec.inputs.map((e: { step: number }) => e.step)).toEqual([0, 40, 30]);
      expect(hash).toBe(rec.end.hash);
      expect(motion(state)).toEqual(motion(end));
    } finally {
      await app.close();
    }
  });
});
