/**
 * Every session route of the design's table with supertest, and every error code: 400 with
 * zod's issue paths, 404, 409, 413 (body bytes and MAX_BODIES), 429. States are checked
 * against closed forms (a body falling under gravity with the trapezoidal θ = 1/2 scheme,
 * which is exact for constant acceleration).
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { ErrorBody, RunAccepted, Session, SessionList } from "../../schemas/api";
import { State } from "../../schemas/state";
import { FrameClient } from "../support/frames";
import {
  fallingBody,
  rodPendulum,
  springParticle,
  springParticleRecurrence,
} from "../support/models";
import { startApp, startServer, useServer } from "../support/server";
import { sleep, waitFor } from "../support/wait";
import { createSession, G, getState, step } from "./helpers";

const server = useServer({ workers: 2, maxSessions: 8, maxBodies: 50, maxStepsPerRequest: 5000 });

const api = () => request(server.app.server);

function expectError(r: request.Response, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  const body = ErrorBody.parse(r.body);
  expect(body.error).toBe(code);
  expect(body.message.length).toBeGreaterThan(0);
  return body;
}

describe("POST /v1/sessions", () => {
  it("creates a session: 201 Session with id, location and a request id", async () => {
    const r = await api()
      .post("/v1/sessions")
      .send({ model: fallingBody({ z0: 10 }) });
    expect(r.status).toBe(201);
    const s = Session.parse(r.body);
    expect(s).toMatchObject({
      name: "fall",
      status: "ready",
      time: 0,
      step: 0,
      dt: 0.005,
      counts: { bodies: 1, forces: 0, joints: 0, motors: 0, actuators: 0, sensors: 0 },
      message: null,
      run: null,
      subscribers: 0,
    });
    expect(r.headers.location).toBe(`/v1/sessions/${s.id}`);
    expect(r.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    await api().delete(`/v1/sessions/${s.id}`).expect(204);
  });

  it("echoes a client's x-request-id", async () => {
    const r = await api().get("/health").set("x-request-id", "abc-123");
    expect(r.headers["x-request-id"]).toBe("abc-123");
  });

  it("400 invalid_model with zod's issue path for a bad field", async () => {
    const model = fallingBody();
    (model.bodies[0] as { mass: number }).mass = -1;
    const r = await api().post("/v1/sessions").send({ model });
    const e = expectError(r, 400, "invalid_model");
    const issues = (e.details as { issues: { path: unknown[]; message: string }[] }).issues;
    expect(issues.map((i) => i.path)).toContainEqual(["model", "bodies", 0, "mass"]);
  });

  it("400 invalid_model naming an unknown key of the model and its path", async () => {
    const model = fallingBody();
    (model.bodies[0] as Record<string, unknown>).friction = 0.3;
    const r = await api().post("/v1/sessions").send({ model });
    const e = expectError(r, 400, "invalid_model");
    const issues = (e.details as { issues: { path: unknown[]; message: string }[] }).issues;
    const issue = issues.find((i) => JSON.stringify(i.path) === '["model","bodies",0]');
    expect(issue, JSON.stringify(issues)).toBeDefined();
    expect(issue?.message).toContain('"friction"');
  });

  it("400 names the joint and the unknown body id it refers to", async () => {
    const model = {
      bodies: [{ id: "link", mass: 1, inertia: [1, 1, 1] }],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "link" },
          b: { body: "nobody" },
          axis: [0, 1, 0],
        },
      ],
    };
    const r = await api().post("/v1/sessions").send({ model });
    const e = expectError(r, 400, "invalid_model");
    const issues = (e.details as { issues: { path: unknown[]; message: string }[] }).issues;
    const issue = issues.find((i) => JSON.stringify(i.path) === '["model","joints",0,"b","body"]');
    expect(issue, JSON.stringify(issues)).toBeDefined();
    expect(issue?.message).toContain('"hinge"');
    expect(issue?.message).toContain('"nobody"');
  });

  it("400 names a joint whose ends cannot move, or a distance joint whose points coincide", async () => {
    // the engine refused both at the path ["model"]; a distance joint given a length was
    // built, its link without a direction (its body hung still under gravity)
    const body = (extra: object) => ({ id: "b", mass: 1, inertia: [1, 1, 1], ...extra });
    const issueOf = async (model: object) => {
      const e = expectError(await api().post("/v1/sessions").send({ model }), 400, "invalid_model");
      const [issue] = (e.details as { issues: { path: unknown[]; message: string }[] }).issues;
      return issue;
    };
    const still = await issueOf({
      bodies: [body({ fixed: true })],
      joints: [{ id: "j", type: "spherical", a: { body: "ground" }, b: { body: "b" } }],
    });
    expect(still).toEqual({
      path: ["model", "joints", 0],
      message: 'joint "j" joins "ground" and "b", neither of which can move',
      code: "custom",
    });
    // b's point [0, 1, 0] turned a quarter about x lies at [0, 0, 1] from b's origin
    // (0, 0, 1): [0, 0, 2], a's point on the ground
    const quarter = [Math.SQRT1_2, Math.SQRT1_2, 0, 0];
    const link = (a: number[], length?: number) => ({
      bodies: [body({ position: [0, 0, 1], orientation: quarter })],
      joints: [
        {
          id: "rod",
          type: "distance",
          a: { body: "ground", point: a },
          b: { body: "b", point: [0, 1, 0] },
          ...(length === undefined ? {} : { length }),
        },
      ],
    });
    for (const length of [undefined, 0.5]) {
      const issue = await issueOf(link([0, 0, 2], length));
      expect(issue.path).toEqual(["model", "joints", 0, "b", "point"]);
      expect(issue.message).toMatch(
        /^distance joint "rod": its two points coincide at the model pose \(at \[0,0,2\]\)/,
      );
    }
    // 1 µm apart: a link of that length, taken
    const r = await api()
      .post("/v1/sessions")
      .send({ model: link([0, 0, 2 + 1e-6]) });
    expect(r.status, r.text).toBe(201);
    await api().delete(`/v1/sessions/${r.body.id}`).expect(204);
  });

  it("400 invalid_request for a body without a model, unknown keys or bad JSON", async () => {
    expectError(await api().post("/v1/sessions").send({}), 400, "invalid_request");
    expectError(
      await api().post("/v1/sessions").send({ model: fallingBody(), extra: 1 }),
      400,
      "invalid_request",
    );
    expectError(
      await api().post("/v1/sessions").set("content-type", "application/json").send("{nope"),
      400,
      "invalid_request",
    );
  });

  it("413 for a model with more bodies than MAX_BODIES", async () => {
    const bodies = Array.from({ length: 51 }, (_, i) => ({
      id: `b${i}`,
      kind: "particle",
      mass: 1,
    }));
    const e = expectError(
      await api().post("/v1/sessions").send({ model: { bodies } }),
      413,
      "payload_too_large",
    );
    expect(e.details).toEqual({ bodies: 51, limit: 50 });
  });

  it("fem nodes count as bodies against MAX_BODIES (each node is a particle)", async () => {
    const fem = (resolution: [number, number, number]) => ({
      id: "beam",
      box: { size: [1, 0.1, 0.1], resolution },
      density: 1000,
      youngModulus: 1e6,
    });
    // 10 bodies + (3 + 1)(1 + 1)(2 + 1) = 24 nodes: 34 ≤ 50
    const bodies = Array.from({ length: 10 }, (_, i) => ({
      id: `b${i}`,
      kind: "particle",
      mass: 1,
    }));
    const ok = await api()
      .post("/v1/sessions")
      .send({ model: { bodies, fem: [fem([3, 1, 2])] } });
    expect(ok.status).toBe(201);
    await api().delete(`/v1/sessions/${ok.body.id}`);
    // (5 + 1)(1 + 1)(3 + 1) = 48 nodes: 58 > 50, refused before validation
    const e = expectError(
      await api()
        .post("/v1/sessions")
        .send({ model: { bodies, fem: [fem([5, 1, 3])] } }),
      413,
      "payload_too_large",
    );
    expect(e.details).toEqual({ bodies: 58, limit: 50 });
  });

  it("413 for a model body over MAX_MODEL_BYTES and any other body over MAX_BODY_BYTES", async () => {
    const small = await startApp({ maxBodyBytes: 1024, maxModelBytes: 4096 });
    try {
      const model = (n: number) => ({
        bodies: Array.from({ length: n }, (_, i) => ({ id: `b${i}`, kind: "particle", mass: 1 })),
      });
      // a model under MAX_MODEL_BYTES but over MAX_BODY_BYTES is accepted
      expect(JSON.stringify({ model: model(30) }).length).toBeGreaterThan(1024);
      const id = (
        await request(small.server)
          .post("/v1/sessions")
          .send({ model: model(30) })
          .expect(201)
      ).body.id;
      expect(JSON.stringify({ model: model(120) }).length).toBeGreaterThan(4096);
      for (const path of ["/v1/sessions", "/v1/assembly"]) {
        const e = expectError(
          await request(small.server)
            .post(path)
            .send({ model: model(120) }),
          413,
          "payload_too_large",
        );
        expect(e.details).toEqual({ limit: "MAX_MODEL_BYTES", max: 4096 });
      }
      // a control body (here inputs) over MAX_BODY_BYTES
      const inputs = Array.from({ length: 40 }, () => ({
        type: "impulse",
        id: "b0",
        impulse: [0, 0, 1],
      }));
      expect(JSON.stringify({ inputs }).length).toBeGreaterThan(1024);
      const e = expectError(
        await request(small.server).post(`/v1/sessions/${id}/inputs`).send({ inputs }),
        413,
        "payload_too_large",
      );
      expect(e.details).toEqual({ limit: "MAX_BODY_BYTES", max: 1024 });
    } finally {
      await small.close();
    }
  });

  it("429 when MAX_SESSIONS is reached, and room again after a delete", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await createSession(server.app, fallingBody()));
    const e = expectError(
      await api().post("/v1/sessions").send({ model: fallingBody() }),
      429,
      "too_many_sessions",
    );
    expect(e.details).toEqual({ limit: 8 });
    await api().delete(`/v1/sessions/${ids.pop()}`).expect(204);
    ids.push(await createSession(server.app, fallingBody()));
    for (const id of ids) await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("reading sessions", () => {
  it("GET /v1/sessions lists them; GET /v1/sessions/:id answers one; 404 otherwise", async () => {
    const a = await createSession(server.app, fallingBody({ z0: 1, dt: 0.005, name: "a" }));
    const b = await createSession(server.app, springParticle());
    const list = SessionList.parse((await api().get("/v1/sessions").expect(200)).body);
    expect(list.sessions.map((s) => s.id)).toEqual(expect.arrayContaining([a, b]));
    const one = Session.parse((await api().get(`/v1/sessions/${b}`).expect(200)).body);
    expect(one).toMatchObject({ id: b, name: "spring", counts: { bodies: 1, forces: 1 } });
    expectError(await api().get("/v1/sessions/nope"), 404, "not_found");
    expectError(await api().get("/v1/sessions/nope/state"), 404, "not_found");
    await api().delete(`/v1/sessions/${a}`).expect(204);
    await api().delete(`/v1/sessions/${b}`).expect(204);
  });

  it("counts the model's actuators and sensors with its bodies, forces, joints and motors (the created, listed and read Session alike)", async () => {
    // a hinged rod with a position servo, a torque actuator on the same pin and three
    // sensors, one of them three-valued: 3 sensors, 5 observation values (until 2026-12-07
    // counts had no actuators nor sensors)
    const model = {
      ...rodPendulum({
        mass: 1,
        length: 1,
        axis: [0, 1, 0],
        servo: { type: "position", target: 0.2, kp: 10, kd: 1 },
        solver: { integrator: "moreau-jean", dt: 0.005 },
      }),
      sensors: [
        { id: "t", type: "time" },
        { id: "q", type: "jointPosition", joint: "pin" },
        { id: "x", type: "bodyPosition", body: "rod" },
      ],
    };
    model.actuators = [
      ...(model.actuators ?? []),
      { id: "push", joint: "pin", type: "torque", effort: 0.1 },
    ];
    const counts = { bodies: 1, forces: 0, joints: 1, motors: 0, actuators: 2, sensors: 3 };
    const created = await api().post("/v1/sessions").send({ model }).expect(201);
    const id = Session.parse(created.body).id;
    expect(created.body.counts).toEqual(counts);
    expect(Session.parse((await api().get(`/v1/sessions/${id}`).expect(200)).body).counts).toEqual(
      counts,
    );
    const list = SessionList.parse((await api().get("/v1/sessions").expect(200)).body);
    expect(list.sessions.find((s) => s.id === id)?.counts).toEqual(counts);
    const state = State.parse((await api().get(`/v1/sessions/${id}/state`).expect(200)).body);
    expect(state.observation).toHaveLength(5);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("GET /state is the model's initial state at t = 0", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 3 }));
    const s = await getState(server.app, id);
    expect(s.time).toBe(0);
    expect(s.step).toBe(0);
    expect(s.bodies).toEqual([
      {
        id: "ball",
        position: [0, 0, 3],
        orientation: [1, 0, 0, 0],
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, 0],
      },
    ]);
    // potential energy m g z relative to z = 0 (1 kg at 3 m)
    expect(s.energy.kinetic).toBe(0);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("unknown routes answer 404 in the error format", async () => {
    expectError(await api().get("/v2/nothing"), 404, "not_found");
  });
});

describe("POST /v1/sessions/:id/step", () => {
  it("steps n steps: z = z0 − g t²/2, v = −g t", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 10 }));
    const s = await step(server.app, id, 100);
    expect(s.step).toBe(100);
    expect(s.time).toBeCloseTo(0.5, 12);
    expect(s.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * G * 0.25, 10);
    expect(s.bodies[0].velocity[2]).toBeCloseTo(-G * 0.5, 10);
    const s2 = await step(server.app, id, 100);
    expect(s2.step).toBe(200);
    expect(s2.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * G * 1, 10);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("steps a duration: ceil(duration / dt) steps", async () => {
    const id = await createSession(server.app, springParticle());
    const r = await api().post(`/v1/sessions/${id}/step`).send({ duration: 0.25 }).expect(200);
    const s = State.parse(r.body);
    expect(s.step).toBe(250);
    const ref = springParticleRecurrence({}, 250);
    expect(s.bodies[0].position[0]).toBeCloseTo(ref.x, 12);
    expect(s.bodies[0].velocity[0]).toBeCloseTo(ref.v, 12);
    const r2 = await api().post(`/v1/sessions/${id}/step`).send({ duration: 0.0015 }).expect(200);
    expect(State.parse(r2.body).step).toBe(252);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("400 for neither or both of steps/duration, bad values, and over MAX_STEPS_PER_REQUEST", async () => {
    const id = await createSession(server.app, fallingBody());
    const url = `/v1/sessions/${id}/step`;
    expectError(await api().post(url).send({}), 400, "invalid_request");
    expectError(await api().post(url).send({ steps: 1, duration: 1 }), 400, "invalid_request");
    const e0 = expectError(await api().post(url).send({ steps: 0 }), 400, "invalid_request");
    expect((e0.details as { issues: { path: unknown[] }[] }).issues[0].path).toEqual(["steps"]);
    expectError(await api().post(url).send({ steps: 1.5 }), 400, "invalid_request");
    const e = expectError(await api().post(url).send({ steps: 5001 }), 400, "invalid_request");
    expect((e.details as { issues: { path: unknown[] }[] }).issues[0].path).toEqual(["steps"]);
    // 100 s at dt = 0.005 s is 20000 steps
    const e2 = expectError(await api().post(url).send({ duration: 100 }), 400, "invalid_request");
    expect((e2.details as { issues: { path: unknown[] }[] }).issues[0].path).toEqual(["duration"]);
    expectError(await api().post("/v1/sessions/nope/step").send({ steps: 1 }), 404, "not_found");
    // nothing of this changed the session
    expect((await getState(server.app, id)).step).toBe(0);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("run, pause, reset", () => {
  it("runs as fast as it can until `until`, then pauses itself", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 10 }));
    const r = await api()
      .post(`/v1/sessions/${id}/run`)
      .send({ realtimeFactor: null, until: 1 })
      .expect(202);
    const acc = RunAccepted.parse(r.body);
    expect(acc.session.id).toBe(id);
    const s = await waitFor(async () => {
      const x = Session.parse((await api().get(`/v1/sessions/${id}`)).body);
      return x.status === "paused" ? x : null;
    });
    expect(s.step).toBe(200);
    expect(s.run).toBeNull();
    const st = await getState(server.app, id);
    expect(st.time).toBeCloseTo(1, 12);
    expect(st.bodies[0].position[2]).toBeCloseTo(10 - 0.5 * G, 10);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("runs at a real-time factor: simulated time follows r × wall time", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 1e4, dt: 0.001 }));
    const t0 = performance.now();
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: 2 }).expect(202);
    await sleep(400);
    const running = Session.parse((await api().get(`/v1/sessions/${id}`)).body);
    expect(running.status).toBe("running");
    expect(running.run).toMatchObject({ realtimeFactor: 2, until: null, simStart: 0 });
    // the run started between the request and its answer (epoch ms)
    expect(running.run?.wallStart).toBeGreaterThan(performance.timeOrigin + t0 - 5);
    expect(running.run?.wallStart).toBeLessThan(performance.timeOrigin + t0 + 400);
    const paused = Session.parse((await api().post(`/v1/sessions/${id}/pause`).expect(200)).body);
    const wall = (performance.now() - t0) / 1000;
    expect(paused.status).toBe("paused");
    const st = await getState(server.app, id);
    // simulated time ≈ 2 × wall, within request latencies and the pacing's allowed lag
    // (MAX_LAG_S = 0.25 s of wall time before a run drops its backlog)
    expect(st.time).toBeGreaterThan(2 * (wall - 0.45));
    expect(st.time).toBeLessThanOrEqual(2 * wall + 0.01);
    // paused means no more steps
    await sleep(50);
    expect((await getState(server.app, id)).step).toBe(st.step);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("409 for step or run while running; pause is allowed and idempotent", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 1e4, dt: 0.001 }));
    await api().post(`/v1/sessions/${id}/pause`).expect(200); // ready: no-op
    await api().post(`/v1/sessions/${id}/run`).send({}).expect(202); // default: real time
    const e = expectError(
      await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 }),
      409,
      "conflict",
    );
    expect(e.details).toMatchObject({ status: "running" });
    expectError(await api().post(`/v1/sessions/${id}/run`).send({}), 409, "conflict");
    expectError(await api().post(`/v1/sessions/${id}/assembly`).send({}), 409, "conflict");
    expectError(
      await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: -1 }),
      400,
      "invalid_request",
    );
    expectError(await api().post("/v1/sessions/nope/run").send({}), 404, "not_found");
    expectError(await api().post("/v1/sessions/nope/pause"), 404, "not_found");
    await api().post(`/v1/sessions/${id}/pause`).expect(200);
    await api().post(`/v1/sessions/${id}/pause`).expect(200);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("a run or a session's assembly sent without a body takes the defaults (real time; every level)", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 1e4, dt: 0.001 }));
    const a = await api().post(`/v1/sessions/${id}/assembly`).expect(200);
    expect(a.body.exitFlag).toBe("SUCCESS");
    expect(a.body.bodies[0].acceleration).toEqual([0, 0, -G]);
    const r = await api().post(`/v1/sessions/${id}/run`).expect(202);
    expect(RunAccepted.parse(r.body).session.run).toMatchObject({ realtimeFactor: 1, until: null });
    await api().post(`/v1/sessions/${id}/pause`).expect(200);
    // a body that is JSON null is not an absent one; a step still needs its body
    const n = expectError(
      await api()
        .post(`/v1/sessions/${id}/run`)
        .set("content-type", "application/json")
        .send("null"),
      400,
      "invalid_request",
    );
    expect(n.details).toMatchObject({ issues: [{ path: [] }] });
    expectError(await api().post(`/v1/sessions/${id}/step`), 400, "invalid_request");
    expectError(await api().patch(`/v1/sessions/${id}`), 400, "invalid_request");
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("400 for an `until` not after the current time", async () => {
    const id = await createSession(server.app, fallingBody());
    await step(server.app, id, 10);
    expectError(
      await api().post(`/v1/sessions/${id}/run`).send({ until: 0.01 }),
      400,
      "invalid_request",
    );
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("reset stops a run and answers the state at t = 0", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 5, dt: 0.001 }));
    const initial = await getState(server.app, id);
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }).expect(202);
    await waitFor(async () => (await getState(server.app, id)).step > 100);
    const r = await api().post(`/v1/sessions/${id}/reset`).expect(200);
    const s = State.parse(r.body);
    expect(s.time).toBe(0);
    expect(s.step).toBe(0);
    expect(s.bodies).toEqual(initial.bodies);
    expect(s.energy).toEqual(initial.energy);
    const sess = Session.parse((await api().get(`/v1/sessions/${id}`)).body);
    expect(sess).toMatchObject({ status: "ready", step: 0, time: 0, run: null });
    await sleep(30);
    expect((await getState(server.app, id)).step).toBe(0);
    expectError(await api().post("/v1/sessions/nope/reset"), 404, "not_found");
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("PATCH /v1/sessions/:id", () => {
  it("changes gravity: the motion follows the new gravity from the current state", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 10 }));
    const s1 = await step(server.app, id, 100); // t = 0.5
    const r = await api()
      .patch(`/v1/sessions/${id}`)
      .send({ gravity: [0, 0, -1] })
      .expect(200);
    expect(Session.parse(r.body).status).toBe("ready");
    const s2 = await step(server.app, id, 100); // 0.5 s more at g = 1
    const z1 = s1.bodies[0].position[2];
    const v1 = s1.bodies[0].velocity[2];
    expect(s2.bodies[0].position[2]).toBeCloseTo(z1 + v1 * 0.5 - 0.5 * 1 * 0.25, 9);
    expect(s2.bodies[0].velocity[2]).toBeCloseTo(v1 - 0.5, 9);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("changes only the solver settings it names (no defaults filled in)", async () => {
    const id = await createSession(server.app, springParticle({ dt: 0.002 }));
    // a partial solver patch must keep dt = 0.002, not reset it to the default 0.005
    const r = await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { newtonIterations: 2 } })
      .expect(200);
    expect(Session.parse(r.body).dt).toBe(0.002);
    const s = await step(server.app, id, 10);
    const ref = springParticleRecurrence({ dt: 0.002 }, 10);
    expect(s.bodies[0].position[0]).toBeCloseTo(ref.x, 12);
    const r2 = await api()
      .patch(`/v1/sessions/${id}`)
      .send({ solver: { dt: 0.001 } })
      .expect(200);
    expect(Session.parse(r2.body).dt).toBe(0.001);
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });

  it("400 with paths for bad values and unknown keys; 404 for an unknown session", async () => {
    const id = await createSession(server.app, fallingBody());
    const e = expectError(
      await api()
        .patch(`/v1/sessions/${id}`)
        .send({ solver: { dt: -1 } }),
      400,
      "invalid_request",
    );
    expect((e.details as { issues: { path: unknown[] }[] }).issues[0].path).toEqual([
      "solver",
      "dt",
    ]);
    expectError(
      await api()
        .patch(`/v1/sessions/${id}`)
        .send({ solver: { dtt: 1 } }),
      400,
      "invalid_request",
    );
    expectError(
      await api()
        .patch(`/v1/sessions/${id}`)
        .send({ gravity: [0, 0] }),
      400,
      "invalid_request",
    );
    expectError(
      await api()
        .patch("/v1/sessions/nope")
        .send({ gravity: [0, 0, 0] }),
      404,
      "not_found",
    );
    await api().delete(`/v1/sessions/${id}`).expect(204);
  });
});

describe("DELETE /v1/sessions/:id", () => {
  it("204, then 404 for it", async () => {
    const id = await createSession(server.app, fallingBody());
    await api().delete(`/v1/sessions/${id}`).expect(204);
    expectError(await api().get(`/v1/sessions/${id}`), 404, "not_found");
    expectError(await api().delete(`/v1/sessions/${id}`), 404, "not_found");
  });

  it("deletes a running session", async () => {
    const id = await createSession(server.app, fallingBody({ z0: 1e4, dt: 0.001 }));
    await api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: null }).expect(202);
    await api().delete(`/v1/sessions/${id}`).expect(204);
    expectError(await api().get(`/v1/sessions/${id}/state`), 404, "not_found");
  });
});

describe("SESSION_IDLE_TTL", () => {
  it("deletes sessions idle for longer than the TTL, not those with a stream", async () => {
    const { app: t, port } = await startServer({ workers: 1, sessionIdleTtl: 0.3 });
    try {
      const idle = await createSession(t, fallingBody());
      const watched = await createSession(t, fallingBody());
      const c = new FrameClient(`ws://127.0.0.1:${port}/v1/sessions/${watched}/stream`);
      await c.open();
      // listing does not count as activity on a session; reading one does
      const ids = async () =>
        SessionList.parse((await request(t.server).get("/v1/sessions")).body).sessions.map(
          (s) => s.id,
        );
      await waitFor(async () => !(await ids()).includes(idle), 3000);
      expect(await ids()).toEqual([watched]);
      c.close();
      await waitFor(async () => (await ids()).length === 0, 3000);
      expect((await request(t.server).get(`/v1/sessions/${idle}`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
