/**
 * Assembly over HTTP: POST /v1/assembly (nothing kept) and POST /v1/sessions/:id/assembly
 * (with `apply`). The system is a particle of mass m on a rod of length L from a fixed
 * point, moving at speed v across the rod: position and velocity levels are consistent (or
 * the position level pulls a particle placed at 1.1 L back onto the rod), the acceleration
 * is centripetal, v²/L towards the pivot, and the rod's tension is m g + m v²/L.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { ErrorBody, Session } from "../../schemas/api";
import { AssemblyResult } from "../../schemas/state";
import { FrameClient } from "../support/frames";
import { useServer } from "../support/server";
import { createSession, G, getState } from "./helpers";

const m = 0.5;
const L = 1;
const v = 2;
const rod = (z0: number) => ({
  name: "rod",
  bodies: [{ id: "p", kind: "particle", mass: m, position: [0, 0, z0], velocity: [v, 0, 0] }],
  joints: [{ id: "rod", type: "distance", a: { body: "ground" }, b: { body: "p" }, length: L }],
});

const server = useServer({ workers: 1 });
const api = () => request(server.app.server);

function expectPendulum(r: ReturnType<typeof AssemblyResult.parse>) {
  expect(r.exitFlag).toBe("SUCCESS");
  const b = r.bodies[0];
  expect(b.position[0]).toBeCloseTo(0, 12);
  expect(b.position[2]).toBeCloseTo(-L, 12);
  expect(b.velocity).toEqual([v, 0, 0]);
  expect(b.acceleration[0]).toBeCloseTo(0, 12);
  expect(b.acceleration[2]).toBeCloseTo((v * v) / L, 12);
  // the rod's force on its body b (the particle): up, m g + m v²/L
  expect(r.reactions).toHaveLength(1);
  expect(r.reactions[0].id).toBe("rod");
  expect(r.reactions[0].force[2]).toBeCloseTo(m * G + (m * v * v) / L, 12);
  expect(r.reactions[0].multipliers[0]).toBeCloseTo(m * G + (m * v * v) / L, 12);
}

describe("POST /v1/assembly", () => {
  it("answers the AssemblyResult of a posted model and keeps no session", async () => {
    const r = await api()
      .post("/v1/assembly")
      .send({ model: rod(-1.1) })
      .expect(200);
    const a = AssemblyResult.parse(r.body);
    expectPendulum(a);
    expect(a.iterations).toBeGreaterThan(0);
    expect(a.updateNorm).toBeCloseTo(0.1, 12);
    expect((await api().get("/v1/sessions")).body.sessions).toEqual([]);
  });

  it("takes options and validates them", async () => {
    const r = await api()
      .post("/v1/assembly")
      .send({ model: rod(-1), options: { levels: ["position"], maxIterations: 5 } })
      .expect(200);
    expect(AssemblyResult.parse(r.body).exitFlag).toBe("SUCCESS");
    const bad = await api()
      .post("/v1/assembly")
      .send({ model: rod(-1), options: { levels: ["nope"] } });
    expect(bad.status).toBe(400);
    const e = ErrorBody.parse(bad.body);
    expect(e.error).toBe("invalid_request");
    expect((e.details as { issues: { path: unknown[] }[] }).issues[0].path).toEqual([
      "options",
      "levels",
      0,
    ]);
    // strict like every request part: an unknown option is named, not ignored
    const unknown = await api()
      .post("/v1/assembly")
      .send({ model: rod(-1), options: { maxIteration: 5 } });
    expect(unknown.status).toBe(400);
    const issue = (
      ErrorBody.parse(unknown.body).details as {
        issues: { path: unknown[]; message: string }[];
      }
    ).issues[0];
    expect(issue.path).toEqual(["options"]);
    expect(issue.message).toContain("maxIteration");
    const noModel = await api()
      .post("/v1/assembly")
      .send({ model: { bodies: [{ id: "p", kind: "particle" }] } });
    expect(noModel.status).toBe(400);
    expect(ErrorBody.parse(noModel.body).error).toBe("invalid_model");
  });
});

describe("POST /v1/sessions/:id/assembly", () => {
  it("without apply answers the analysis and leaves the state as it was", async () => {
    const id = await createSession(server.app, rod(-1.1));
    const before = await getState(server.app, id);
    const r = await api().post(`/v1/sessions/${id}/assembly`).send({}).expect(200);
    expectPendulum(AssemblyResult.parse(r.body));
    expect(await getState(server.app, id)).toEqual(before);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("with apply writes the assembled state into the session and its streams", async () => {
    const id = await createSession(server.app, rod(-1.1));
    const c = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=bodies`);
    await c.open();
    await c.waitForMessages(2);
    const r = await api().post(`/v1/sessions/${id}/assembly`).send({ apply: true }).expect(200);
    expectPendulum(AssemblyResult.parse(r.body));
    const s = await getState(server.app, id);
    expect(s.bodies[0].position[2]).toBeCloseTo(-L, 12);
    await c.waitForMessages(3);
    expect(c.states().at(-1)?.bodies).toEqual(s.bodies);
    expect(Session.parse((await api().get(`/v1/sessions/${id}`)).body).status).toBe("ready");
    c.close();
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("404 for an unknown session, 400 for bad options", async () => {
    const nf = await api().post("/v1/sessions/nope/assembly").send({});
    expect(nf.status).toBe(404);
    const id = await createSession(server.app, rod(-1));
    const bad = await api().post(`/v1/sessions/${id}/assembly`).send({ maxIterations: 0 });
    expect(bad.status).toBe(400);
    expect(
      (ErrorBody.parse(bad.body).details as { issues: { path: unknown[] }[] }).issues[0].path,
    ).toEqual(["maxIterations"]);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});
