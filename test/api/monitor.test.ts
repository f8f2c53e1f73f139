/**
 * The run monitors through the service: State carries energy.error and
 * solver.reactionChange (REST and stream frames); solver.energyDriftLimit ends a step
 * request (422) and a run in `diverged` with the state of the last good step, which is
 * checked against a second session without the limit stepped to that step; the limit is
 * taken on every model (0 refused with the field's path).
 */
import request from "supertest";
import { beforeAll, describe, expect, it } from "vitest";
import { ErrorBody, Session } from "../../schemas/api";
import type { StateOut } from "../../schemas/state";
import { readExample } from "../support/examples";
import { FrameClient } from "../support/frames";
import { doublePendulumSpring } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, getState, step } from "./helpers";

const server = useServer({ workers: 2 });
const api = () => request(server.app.server);

const LIMIT = 0.5;

/** The double-pendulum example released horizontal; backward Euler loses energy steadily. */
function pendulum(solver: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    ...readExample("double-pendulum"),
    solver: { integrator: "backward-euler", dt: 0.005, ...solver },
    ...extra,
  };
}

/**
 * The last step before |total − total(t = 0)| exceeds LIMIT, found by stepping a session
 * without the limit one step at a time; returns that step's State (read from the API).
 */
async function lastGoodState(): Promise<StateOut> {
  const id = await createSession(server.app, pendulum());
  const initial = (await getState(server.app, id)).energy.total;
  let good = await getState(server.app, id);
  for (;;) {
    const s = await step(server.app, id, 1);
    if (Math.abs(s.energy.total - initial) > LIMIT) break;
    good = s;
  }
  await api().delete(`/v1/sessions/${id}`).expect(204);
  return good;
}

const session = async (id: string) => Session.parse((await api().get(`/v1/sessions/${id}`)).body);

function expectSameState(s: StateOut, good: StateOut) {
  expect(s.time).toBe(good.time);
  expect(s.step).toBe(good.step);
  expect(s.bodies).toEqual(good.bodies);
  expect(s.joints).toEqual(good.joints);
  expect(s.energy).toEqual(good.energy);
}

describe("State", () => {
  it("reports energy.error and solver.reactionChange, over REST and in stream frames", async () => {
    const id = await createSession(server.app, pendulum());
    const s0 = await getState(server.app, id);
    expect(s0.energy.error).toBe(0);
    expect(s0.solver.reactionChange).toBe(0);
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=joints,energy,solver`);
    await c.open();
    await c.waitForMessages(2); // scene, step 0
    await step(server.app, id, 5);
    const s = await step(server.app, id, 1);
    expect(s.energy.error).toBe(s.energy.total - s0.energy.total);
    await c.waitForMessages(8); // scene, steps 0..6
    const frames = c.states();
    const [f5, f6] = frames.slice(-2);
    expect(f6.step).toBe(6);
    expect(f6.energy).toEqual(s.energy);
    expect(f6.solver).toEqual(s.solver);
    let change = 0;
    f5.joints.forEach((j, k) => {
      for (let i = 0; i < 3; i++)
        change = Math.max(
          change,
          Math.abs(f6.joints[k].force[i] - j.force[i]),
          Math.abs(f6.joints[k].torque[i] - j.torque[i]),
        );
    });
    expect(f6.solver.reactionChange).toBe(change);
    expect(change).toBeGreaterThan(0);
    c.close();

    // the damper's work is in energy.dissipated, and rayleighStiffness's
    const damped = await createSession(
      server.app,
      pendulum({}, { forces: [{ id: "d", type: "damper", angular: 0.1 }] }),
    );
    const sd = await step(server.app, damped, 3);
    expect(sd.energy.dissipated).toBeGreaterThan(0);
    expect(sd.energy.error).toBeTypeOf("number");
    const pushed = await createSession(
      server.app,
      pendulum({ rayleighStiffness: 0.1 }, { forces: [doublePendulumSpring] }),
    );
    const sp = await step(server.app, pushed, 3);
    expect(sp.energy.dissipated).toBeGreaterThan(0);
    expect(sp.energy.error).toBeTypeOf("number");
    for (const x of [pushed]) await api().delete(`/v1/sessions/${x}`).expect(204);
    for (const x of [id, damped]) await api().delete(`/v1/sessions/${x}`).expect(204);
  });
});

describe("energyDriftLimit", () => {
  let good: StateOut;
  beforeAll(async () => {
    good = await lastGoodState();
    expect(good.step).toBeGreaterThan(10);
  });

  it("ends a step request in `diverged` (422) with the last good state", async () => {
    const id = await createSession(server.app, pendulum({ energyDriftLimit: LIMIT }));
    const r = await api().post(`/v1/sessions/${id}/step`).send({ steps: 100_000 });
    expect(r.status).toBe(422);
    const e = ErrorBody.parse(r.body);
    expect(e.error).toBe("diverged");
    expect(e.message).toMatch(
      new RegExp(
        `diverged at step ${good.step + 1} \\(t = [0-9.]+ s\\): energy error -[0-9.e+-]+ J exceeds solver\\.energyDriftLimit = ${LIMIT} J`,
      ),
    );
    expect(e.details).toMatchObject({ session: id, step: good.step, stepsDone: good.step });
    const s = await session(id);
    expect(s.status).toBe("diverged");
    expect(s.message).toMatch(/energy error/);
    expectSameState(await getState(server.app, id), good);
    // still diverged: a PATCH that lifts the limit and a reset recover it
    expect((await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 })).status).toBe(409);
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { energyDriftLimit: null } })
      .expect(200);
    await api().post(`/v1/sessions/${id}/reset`).expect(200);
    expect((await step(server.app, id, good.step + 10)).step).toBe(good.step + 10);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("ends a run in `diverged` with the last good state", async () => {
    const id = await createSession(server.app, pendulum({ energyDriftLimit: LIMIT }));
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }).expect(202);
    const s = await waitFor(async () => {
      const x = await session(id);
      return x.status === "diverged" ? x : null;
    });
    expect(s.run).toBeNull();
    expect(s.step).toBe(good.step);
    expect(s.message).toMatch(/energy error .* exceeds solver\.energyDriftLimit/);
    expectSameState(await getState(server.app, id), good);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("is taken with rayleighStiffness too, at creation and on PATCH; 0 is refused with its path", async () => {
    await createSession(server.app, pendulum({ energyDriftLimit: 1, rayleighStiffness: 0.1 }));
    const r = await api()
      .post("/v1/sessions")
      .send({ model: pendulum({ energyDriftLimit: 0 }) });
    expect(r.status).toBe(400);
    const issues = (ErrorBody.parse(r.body).details as { issues: { path: unknown[] }[] }).issues;
    expect(issues[0].path).toEqual(["model", "solver", "energyDriftLimit"]);
    const ok = await createSession(server.app, pendulum({ energyDriftLimit: 1 }));
    await api()
      .patch(`/v1/sessions/${ok}`)
      .send({ solver: { rayleighStiffness: 0.2, energyDriftLimit: 2 } })
      .expect(200);
  });
});
