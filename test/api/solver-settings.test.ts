/**
 * Solver settings read by one choice only, over HTTP (schemas/model.ts unreadSolverSettings;
 * the engine's side in test/engine/simulation/solver-settings.test.ts): a model setting one
 * where it is not read is answered 400 at its path; a PATCH switching the integrator drops the
 * previous one's settings (the session's snapshot no longer holds them); a PATCH naming an
 * unread one is answered 400 and changes nothing. Also the once schema-defaulted
 * newtonIterations, gyroscopicJacobian and jointTolerance with articulated, and the settings
 * that cannot run together (schemas/model.ts contactSolverIssues; the contact's structure).
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { ballOnFloor, hingedRods, springParticle } from "../support/models";
import { useServer } from "../support/server";
import { createSession } from "./helpers";

const server = useServer();
const api = () => request(server.app.server);

const oscillator = (solver: Record<string, unknown>) =>
  springParticle({ stiffness: 50, mass: 2, x0: 0.4, dt: 0.01, solver });

describe("solver settings read by one choice only (HTTP)", () => {
  it("a model with newmark and theta: 400 at model.solver.theta, naming the integrator that reads it", async () => {
    const r = await api()
      .post("/v1/sessions")
      .send({ model: oscillator({ integrator: "newmark", theta: 0.7 }) });
    expect(r.status).toBe(400);
    const paths = r.body.details.issues.map((i: { path: unknown[] }) => i.path.join("."));
    expect(paths).toEqual(["model.solver.theta"]);
    expect(r.body.details.issues[0].message).toContain('"moreau-jean"');
  });

  it("a PATCH to another integrator drops the previous one's settings; naming an unread one is 400", async () => {
    const id = await createSession(
      server.app,
      oscillator({ integrator: "newmark", beta: 0.3, gamma: 0.6 }),
    );
    const bad = await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { rhoInfinity: 0.5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.issues[0].path).toEqual(["solver", "rhoInfinity"]);
    const kept = await api().get(`/v1/sessions/${id}/snapshot`).expect(200);
    expect(kept.body.simulation.parameters.solver).toMatchObject({ beta: 0.3, gamma: 0.6 });

    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { integrator: "moreau-jean", theta: 0.6 } })
      .expect(200);
    const after = (await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body.simulation
      .parameters.solver;
    expect(after).toMatchObject({ integrator: "moreau-jean", theta: 0.6 });
    expect(after).not.toHaveProperty("beta");
    expect(after).not.toHaveProperty("gamma");
    await api().post(`/v1/sessions/${id}/step`).send({ steps: 3 }).expect(200);
  });

  it("articulated with newtonIterations, gyroscopicJacobian or jointTolerance: 400 at each; a PATCH to articulated drops them, one naming them is 400", async () => {
    const settings = { newtonIterations: 3, gyroscopicJacobian: false, jointTolerance: 1e-8 };
    const r = await api()
      .post("/v1/sessions")
      .send({ model: hingedRods({ integrator: "articulated", dt: 0.01, ...settings }) });
    expect(r.status).toBe(400);
    expect(r.body.details.issues.map((i: { path: unknown[] }) => i.path.join("."))).toEqual([
      "model.solver.newtonIterations",
      "model.solver.gyroscopicJacobian",
      "model.solver.jointTolerance",
    ]);
    expect(r.body.details.issues[0].message).toContain('"articulated" has none');

    const id = await createSession(
      server.app,
      hingedRods({ integrator: "newmark", dt: 0.01, ...settings }),
    );
    await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { integrator: "articulated" } })
      .expect(200);
    const parameters = (await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body.simulation
      .parameters.solver;
    expect(parameters.integrator).toBe("articulated");
    for (const key of Object.keys(settings)) expect(parameters).not.toHaveProperty(key);
    const bad = await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { newtonIterations: 3 } });
    expect(bad.status).toBe(400);
    expect(bad.body.details.issues.map((i: { path: unknown[] }) => i.path)).toEqual([
      ["solver", "newtonIterations"],
    ]);
    const kept = (await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body.simulation
      .parameters.solver;
    expect(kept).toEqual(parameters);
    await api().post(`/v1/sessions/${id}/step`).send({ steps: 3 }).expect(200);
  });

  it("nonsmooth contact with a Newmark-type integrator, lemke with friction: 400 at the setting, for a model and for a PATCH, which changes nothing", async () => {
    const ball = (contact: Record<string, unknown>, solver: Record<string, unknown>) =>
      ballOnFloor(contact, { z: 0.3, vx: 0 }, { dt: 0.01, ...solver });
    const paths = (r: { body: { details: { issues: { path: unknown[] }[] } } }) =>
      r.body.details.issues.map((i) => i.path.join("."));
    let r = await api()
      .post("/v1/sessions")
      .send({ model: ball({}, { integrator: "newmark" }) });
    expect(r.status).toBe(400);
    expect(paths(r)).toEqual(["model.solver.integrator"]);
    expect(r.body.details.issues[0].message).toMatch(/"nsc" needs a velocity-level integrator/);
    r = await api()
      .post("/v1/sessions")
      .send({ model: ball({ friction: 0.3 }, { contactSolver: "lemke" }) });
    expect(r.status).toBe(400);
    expect(paths(r)).toEqual(["model.solver.contactSolver"]);

    // a running session: each PATCH is a 400 at its cause and the session is as it was
    const id = await createSession(server.app, ball({}, { contactSolver: "lemke" }));
    await api().post(`/v1/sessions/${id}/step`).send({ steps: 5 }).expect(200);
    const before = (await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body.simulation;
    for (const [patch, path] of [
      [{ solver: { integrator: "generalized-alpha" }, gravity: [0, 0, -1] }, "solver.integrator"],
      [{ contact: { friction: 0.5 } }, "solver.contactSolver"],
      [{ contact: { method: "smc" } }, "contact.method"],
      [{ contact: { collideJointed: true } }, "contact.collideJointed"],
    ] as const) {
      const p = await api().patch(`/v1/sessions/${id}`).send(patch);
      expect(p.status, JSON.stringify(p.body)).toBe(400);
      expect(paths(p)).toEqual([path]);
    }
    const after = (await api().get(`/v1/sessions/${id}/snapshot`).expect(200)).body.simulation;
    expect(after.parameters).toEqual(before.parameters);
    await api().post(`/v1/sessions/${id}/step`).send({ steps: 5 }).expect(200);
  });
});
