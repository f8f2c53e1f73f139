/**
 * A diverged session lost with its worker is rebuilt from its checkpoint as it was:
 * `diverged`, at its last good step. The undo of a failed step left the step's efforts
 * (NaN after newmark's unconverged Newton), the checkpoint of the diverged session held
 * them as null, and its rebuild was refused (snapshot.simulation.memory.efforts…): the
 * session went to `error`. The reference is a twin session given the same requests but no
 * step after the PATCH that makes the step fail.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import request from "supertest";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Session } from "../../schemas/api";
import type { MoreauApp } from "../../src/server/app";
import { createSession, getState, step } from "../api/helpers";
import { startApp } from "../support/server";
import { waitFor } from "../support/wait";

let app: MoreauApp;

beforeAll(async () => {
  app = await startApp({ workers: 2, testHooks: true });
});

afterAll(async () => {
  await app.close();
});

/** Sessions rebuilt from a checkpoint held in memory (or failing to be: from="failed"). */
async function rebuilds(): Promise<number> {
  const text = (await request(app.server).get("/metrics")).text;
  let n = 0;
  for (const from of ["memory", "failed"])
    n += Number(
      text.match(
        new RegExp(`^moreau_session_rebuilds_total\\{from="${from}"\\} (\\d+)$`, "m"),
      )?.[1] ?? 0,
    );
  return n;
}

/** The pendulum with a position servo pressing it on a limit (efforts about 100 N·m). */
function servoPendulum() {
  const model = JSON.parse(
    readFileSync(join(import.meta.dirname, "../../examples/pendulum.json"), "utf8"),
  );
  model.solver = { integrator: "newmark", dt: 0.01 };
  model.joints[0].limits = { lower: -1, upper: 1 };
  model.actuators = [{ id: "servo", joint: "hinge", type: "position", target: 3, kp: 50, kd: 5 }];
  return model;
}

it("a diverged session lost with its worker comes back diverged at its last good step, not `error`", async () => {
  const m = app.moreau.sessions;
  const api = () => request(app.server);
  const [id, twin] = [
    await createSession(app, servoPendulum()),
    await createSession(app, servoPendulum()),
  ];
  for (const s of [id, twin]) {
    expect((await step(app, s, 40)).step).toBe(40);
    await api()
      .patch(`/v1/sessions/${s}`)
      .send({ gravity: [0, 0, -1e13] })
      .expect(200);
  }
  // newmark's Newton does not converge at step 41: diverged at step 40
  const failed = await api().post(`/v1/sessions/${id}/step`).send({ steps: 5 });
  expect(failed.status).toBe(422);
  // a PATCH after it (answered once its checkpoint is held in memory)
  await api()
    .patch(`/v1/sessions/${id}`)
    .send({ solver: { dt: 0.005 } })
    .expect(200);
  await waitFor(() => m.memoryCheckpointStep(id) === 40);
  const before = await rebuilds();
  await m.pool.killForTest(m.workerOf(id));
  // (the worker's exit may be handled after the kill resolves)
  await waitFor(async () => (await rebuilds()) > before, 20_000);
  await m.rebuilt();
  const s = Session.parse((await api().get(`/v1/sessions/${id}`)).body);
  expect(s.status).toBe("diverged");
  expect(s.step).toBe(40);
  expect(s.dt).toBe(0.005);
  const [state, reference] = [await getState(app, id), await getState(app, twin)];
  expect(reference.actuators[0].effort).toBeGreaterThan(90);
  for (const key of ["bodies", "actuators", "joints"] as const)
    expect(state[key]).toEqual(reference[key]);
  for (const s of [id, twin]) await api().delete(`/v1/sessions/${s}`).expect(204);
});
