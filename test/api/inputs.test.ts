/**
 * Driving a session over the API: POST /v1/sessions/:id/inputs (the step it takes effect
 * at, refusals with paths), GET /v1/sessions/:id/recording and its replay through POST
 * /v1/sessions { recording } (bit-identical: the replayed states equal the recorded run's
 * to the last bit, which JSON numbers carry exactly), and a controller over the
 * WebSocket: an inverted pendulum on a cart, kicked at t = 0, held upright for 10 s by a
 * state-feedback law u = k·(x, ẋ, θ, θ̇) computed in the test from each observation
 * frame, sent as an actuator input, in lock-step (inputs, then step 10, then the frame).
 */
import { pack, unpack } from "msgpackr";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { cartPoleModel, servoRod } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, G, getState, step } from "./helpers";

const cartPole = cartPoleModel({ dt: 0.002, sensors: ["x", "v", "theta", "omega"] });
/** Feedback gains on (x, ẋ, θ, θ̇): θ > 0 leans the pole to +x, the cart must follow. */
const K = [2, 3, 40, 8];

const server = useServer();

describe("POST /v1/sessions/:id/inputs", () => {
  it("answers the step boundary; the state of that step includes a teleport", async () => {
    const id = await createSession(server.app, cartPole);
    await step(server.app, id, 7);
    const r = await request(server.app.server)
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: [{ type: "bodyState", id: "cart", velocity: [0.5, 0, 0] }] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ step: 7, pending: 0 });
    // the cart's written 0.5 m/s shared with the pole its hinge carries (at rest upright):
    // the nearest velocities the joints allow, (m_c + m_p) ẋ + m_p r φ̇ = m_c 0.5 and
    // m_p r ẋ + (m_p r² + I) φ̇ = 0 (m_c 1, m_p 0.2 kg, r 0.5 m, I 0.0167 kg·m²)
    const [mc, mp, rr, I] = [1, 0.2, 0.5, 0.0167];
    const det = (mc + mp) * (mp * rr * rr + I) - (mp * rr) ** 2;
    const cart = (mc * 0.5 * (mp * rr * rr + I)) / det;
    expect((await getState(server.app, id)).bodies[0].velocity[0]).toBeCloseTo(cart, 9);
    const later = await request(server.app.server)
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: [{ type: "actuator", id: "push", value: 3 }], step: 20 });
    expect(later.body).toEqual({ step: 20, pending: 1 });
    expect((await step(server.app, id, 13)).actuators[0].command).toBe(3);
  });

  it("sets a joint's coordinate and rate (jointState) and an actuator's gains, over REST and the WebSocket; refusals name the field and id", async () => {
    const id = await createSession(server.app, cartPole);
    await step(server.app, id, 5);
    const post = (body: object) =>
      request(server.app.server).post(`/v1/sessions/${id}/inputs`).send(body);
    const set = await post({
      inputs: [
        { type: "jointState", id: "rail", position: 0.3, velocity: 0.2 },
        { type: "jointState", id: "hinge", position: 0.1 },
        { type: "gains", id: "push", effortLimit: 2 },
        { type: "actuator", id: "push", value: 10 },
      ],
    });
    expect(set.status).toBe(200);
    const s = await getState(server.app, id);
    // [x, ẋ, θ, θ̇]: the cart slid to 0.3 m, the pole carried along and turned 0.1 rad
    // about the hinge at the cart's centre: its centre at (0.3 + 0.5 sin 0.1, 0, 0.5 cos 0.1)
    const obs = s.observation as number[];
    for (const [k, want] of [0.3, 0.2, 0.1].entries())
      expect(Math.abs(obs[k] - want)).toBeLessThan(1e-12);
    const pole = s.bodies[1].position as number[];
    expect(Math.abs(pole[0] - (0.3 + 0.5 * Math.sin(0.1)))).toBeLessThan(1e-12);
    expect(Math.abs(pole[2] - 0.5 * Math.cos(0.1))).toBeLessThan(1e-12);
    // the State reports the gains in effect while they differ from the model's (limit 50)
    expect(s.actuators[0].gains).toEqual({ effortLimit: 2 });
    expect((await step(server.app, id, 1)).actuators[0].effort).toBe(2);
    const refused = await post({
      inputs: [
        { type: "gains", id: "push", kp: 5 },
        { type: "jointState", id: "cart", position: 0 },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.issues).toEqual([
      {
        path: ["inputs", 0, "kp"],
        message: 'actuator "push" is a torque actuator: it has no kp (effortLimit)',
      },
      {
        path: ["inputs", 1, "id"],
        message: 'unknown joint "cart" (the model\'s joints with a coordinate: "rail", "hinge")',
      },
    ]);
    // the WebSocket's inputs command takes them the same
    const ws = new WebSocket(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
    const messages: Record<string, unknown>[] = [];
    ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString())));
    await new Promise((r) => ws.once("open", r));
    ws.send(
      JSON.stringify({
        type: "inputs",
        ref: 1,
        inputs: [
          { type: "jointState", id: "hinge", position: -0.2, velocity: 1 },
          { type: "gains", id: "push", effortLimit: null },
        ],
      }),
    );
    const answer = await waitFor(() =>
      messages.find((m) => m.type === "inputs" || m.type === "error"),
    );
    expect(answer).toEqual({ type: "inputs", ref: 1, step: 6, pending: 0 });
    ws.close();
    const after = (await getState(server.app, id)).observation as number[];
    expect(Math.abs(after[2] + 0.2)).toBeLessThan(1e-12);
    expect(Math.abs(after[3] - 1)).toBeLessThan(1e-12);
    const lifted = await step(server.app, id, 1);
    expect(lifted.actuators[0].effort).toBe(10);
    // none, where the model's is 50; back to 50 (the model's): not reported
    expect(lifted.actuators[0].gains).toEqual({ effortLimit: null });
    await post({ inputs: [{ type: "gains", id: "push", effortLimit: 50 }] });
    expect((await getState(server.app, id)).actuators[0].gains).toBeUndefined();
  });

  it("refuses a reset sent with the values it would drop (gains, load), and a bodyState that sets nothing, at their paths; a reset alone is taken", async () => {
    const model = {
      ...servoRod(1, 1, { type: "position", kp: 20, kd: 1 }, {}),
      forces: [
        {
          id: "tip",
          type: "pointForce",
          at: { body: "rod", point: [0.5, 0, 0] },
          force: [0, 0, 0],
        },
      ],
    };
    const id = await createSession(server.app, model);
    await step(server.app, id, 3);
    const post = (inputs: object[]) =>
      request(server.app.server).post(`/v1/sessions/${id}/inputs`).send({ inputs });
    expect((await post([{ type: "gains", id: "servo", kp: 80 }])).status).toBe(200);
    const before = await getState(server.app, id);
    expect(before.actuators[0].gains).toEqual({ kp: 80, kd: 1, effortLimit: null });
    const refused = [
      [{ type: "gains", id: "servo", kp: 50, reset: true }, ["inputs", 0, "kp"], "servo"],
      [
        { type: "gains", id: "servo", effortLimit: null, reset: true },
        ["inputs", 0, "effortLimit"],
        "servo",
      ],
      [{ type: "load", id: "tip", force: [0, 2, 0], reset: true }, ["inputs", 0, "force"], "tip"],
      [{ type: "load", id: "tip", torque: [0, 0, 1], reset: true }, ["inputs", 0, "torque"], "tip"],
    ] as const;
    for (const [input, path, named] of refused) {
      const r = await post([input]);
      expect(r.status).toBe(400);
      expect(r.body.details.issues).toEqual([expect.objectContaining({ path })]);
      expect(r.body.message).toContain(`reset: true takes`);
      expect(r.body.message).toContain(`"${named}"`);
      expect(r.body.message).toContain(`drop the ${path[2]}`);
    }
    // nor is a bodyState that sets nothing, as a jointState that sets nothing is not: it
    // counted as a state written from outside, and took the energy balance back to 0
    const empty = await post([{ type: "bodyState", id: "rod" }]);
    expect(empty.status).toBe(400);
    expect(empty.body.details.issues).toEqual([expect.objectContaining({ path: ["inputs", 0] })]);
    expect(empty.body.message).toContain('body "rod" sets none of position');
    // nothing of them was taken: the state (energy balance included) and the recording are as before
    expect(await getState(server.app, id)).toEqual(before);
    const rec = await request(server.app.server).get(`/v1/sessions/${id}/recording`);
    expect(rec.body.inputs).toHaveLength(1);
    // a reset alone (and a load's reset with zero force, the schema's default) is taken
    const alone = await post([
      { type: "gains", id: "servo", reset: true },
      { type: "load", id: "tip", reset: true },
    ]);
    expect(alone.body).toEqual({ step: 3, pending: 0 });
    expect((await getState(server.app, id)).actuators[0].gains).toBeUndefined();
  });

  it("refuses unknown ids, unknown keys, past steps and deleted sessions with 4xx and paths", async () => {
    const id = await createSession(server.app, cartPole);
    await step(server.app, id, 5);
    const post = (body: object) =>
      request(server.app.server).post(`/v1/sessions/${id}/inputs`).send(body);
    const unknown = await post({ inputs: [{ type: "actuator", id: "nope", value: 1 }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.issues).toEqual([
      {
        path: ["inputs", 0, "id"],
        message: `unknown actuator "nope" (the model's actuators: "push")`,
      },
    ]);
    const key = await post({ inputs: [{ type: "actuator", id: "push", value: 1, gain: 2 }] });
    expect(key.status).toBe(400);
    expect(key.body.details.issues[0].message).toContain("gain");
    expect(key.body.details.issues[0].path).toEqual(["inputs", 0]);
    const type = await post({ inputs: [{ type: "actuator", id: "push", value: "high" }] });
    expect(type.status).toBe(400);
    expect(type.body.details.issues[0].path).toEqual(["inputs", 0, "value"]);
    const past = await post({ inputs: [{ type: "actuator", id: "push", value: 1 }], step: 2 });
    expect(past.status).toBe(400);
    expect(past.body.details.issues[0].path).toEqual(["step"]);
    await request(server.app.server).delete(`/v1/sessions/${id}`).expect(204);
    const gone = await post({ inputs: [{ type: "actuator", id: "push", value: 1 }] });
    expect(gone.status).toBe(404);
  });
});

describe("a limits input over REST and the WebSocket", () => {
  it("moves a joint's bounds at the step the answer names; refusals name the path", async () => {
    // a 1 kg, 1 m rod hinged at its end (I = 1/3 kg·m²), no gravity, τ = 1 N·m pressing it
    // onto its upper bound 0.5 rad (moreau-jean: a rigid bound, limitEffort −τ)
    const id = await createSession(server.app, {
      gravity: [0, 0, 0],
      bodies: [{ id: "rod", mass: 1, position: [0.5, 0, 0], inertia: [1e-3, 1 / 12, 1 / 12] }],
      joints: [
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "rod", point: [-0.5, 0, 0] },
          axis: [0, 1, 0],
          limits: { lower: -1, upper: 0.5 },
        },
      ],
      actuators: [{ id: "m", joint: "pin", type: "torque", effort: 1 }],
      solver: { integrator: "moreau-jean", dt: 0.001 },
    });
    const rested = await step(server.app, id, 1000);
    expect(rested.joints[0].coordinates[0]).toBeCloseTo(0.5, 9);
    const post = (body: object) =>
      request(server.app.server).post(`/v1/sessions/${id}/inputs`).send(body);
    const later = await post({
      inputs: [{ type: "limits", id: "pin", lower: -1, upper: 0.8 }],
      step: 1100,
    });
    expect(later.body).toEqual({ step: 1100, pending: 1 });
    // at rest until step 1100, then q − 0.5 = ½ (τ/I) t² until the new bound (0.447 s)
    expect((await step(server.app, id, 100)).joints[0].coordinates[0]).toBeCloseTo(0.5, 9);
    const turned = await step(server.app, id, 300);
    expect(turned.joints[0].coordinates[0]).toBeCloseTo(0.5 + 0.5 * 3 * 0.3 * 0.3, 6);
    // over the socket: the bound moved into the joint (q ≈ 0.635 rad) puts it on the bound
    const ws = new WebSocket(`${server.ws}/v1/sessions/${id}/stream?fields=joints`);
    const messages: Record<string, unknown>[] = [];
    ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString())));
    await new Promise((r) => ws.once("open", r));
    ws.send(
      JSON.stringify({
        type: "inputs",
        ref: "in",
        inputs: [{ type: "limits", id: "pin", lower: -1, upper: 0.3 }],
      }),
    );
    ws.send(
      JSON.stringify({
        type: "inputs",
        ref: "bad",
        inputs: [{ type: "limits", id: "pin", lower: 0.3, upper: -1 }],
      }),
    );
    await waitFor(() => messages.some((m) => m.ref === "bad"));
    ws.close();
    expect(messages.find((m) => m.ref === "in")).toMatchObject({ step: 1400, pending: 0 });
    expect(messages.find((m) => m.ref === "bad")).toMatchObject({
      type: "error",
      details: { issues: [{ path: ["inputs", 0, "upper"] }] },
    });
    const moved = await getState(server.app, id);
    expect(moved.step).toBe(1400);
    expect(moved.joints[0].coordinates[0]).toBeCloseTo(0.3, 6);
    // its velocity kept (positions alone, as at a start): the next step's impact (e = 0) stops it
    expect(Math.abs((await step(server.app, id, 1)).joints[0].rates[0])).toBeLessThan(1e-9);
    const unknown = await post({ inputs: [{ type: "limits", id: "m", lower: 0, upper: 1 }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.issues).toEqual([
      {
        path: ["inputs", 0, "id"],
        message: `unknown joint "m": it is an actuator, on the joint "pin" (the model's joints with limits: "pin")`,
      },
    ]);
    expect((await step(server.app, id, 500)).joints[0].limitEffort).toBeCloseTo(-1, 6);
  });
});

describe("GET /v1/sessions/:id/recording?every=k", () => {
  // the states were kept whole and stringified at the end: ?every=1 on a 300 000-step
  // falling body ended a 512 MB worker, its other sessions rebuilt from their checkpoints
  const maxBytes = 1024 * 1024;
  const small = useServer({ recordingStatesMaxBytes: maxBytes });

  it("holds its states within RECORDING_STATES_MAX_BYTES: past it 409 naming the bound, the worker unharmed", async () => {
    // 100 falling particles: a State of about 13 kB, so 1 MiB at ~80 states
    const n = 100;
    const particles = {
      name: "particles",
      gravity: [0, 0, -G],
      solver: { integrator: "symplectic-euler", dt: 0.01 },
      bodies: Array.from({ length: n }, (_, i) => ({
        id: `p${i}`,
        kind: "particle",
        mass: 1,
        position: [i, 0, 0],
      })),
    };
    const bystander = await createSession(small.app, cartPole);
    await step(small.app, bystander, 10);
    const id = await createSession(small.app, particles);
    const end = await step(small.app, id, 200);
    const all = await request(small.app.server).get(`/v1/sessions/${id}/recording?every=1`);
    expect(all.status).toBe(409);
    expect(all.body.details).toMatchObject({
      limit: "RECORDING_STATES_MAX_BYTES",
      maxBytes,
      every: 1,
    });
    expect(all.body.details.statesTaken).toBeLessThan(200);
    expect(all.body.message).toContain("RECORDING_STATES_MAX_BYTES");
    // a coarser every is answered: the states at 20, 40, …, 200, the last the session's own
    const some = await request(small.app.server).get(`/v1/sessions/${id}/recording?every=20`);
    expect(some.status).toBe(200);
    const states = some.body.states as { step: number; bodies: { velocity: number[] }[] }[];
    expect(states.map((st) => st.step)).toEqual(Array.from({ length: 10 }, (_, k) => 20 * (k + 1)));
    expect(states[9].bodies).toEqual(end.bodies);
    // symplectic Euler under constant g: v_z = −g n h after n steps
    expect(states[0].bodies[n - 1].velocity[2]).toBeCloseTo(-G * 20 * 0.01, 12);
    // the worker lived on: the other session was not rebuilt
    const other = await request(small.app.server).get(`/v1/sessions/${bystander}`);
    expect(other.body).toMatchObject({ step: 10, message: null });
  });
});

describe("MAX_PENDING_INPUTS", () => {
  // each answered change rewrites a session's whole pending queue in its checkpoint: 100 000
  // pending bodyState inputs were a 14.6 MB document exported (~1 s of its worker) and
  // written for every POST inputs and PATCH answer; the queue is bounded by configuration
  const small = useServer({ maxPendingInputs: 3 });
  const push = (value: number) => ({ type: "actuator", id: "push", value });

  it("refuses inputs that would leave more than the limit pending (REST and stream), 400 naming it", async () => {
    const id = await createSession(small.app, cartPole);
    const post = (body: object) =>
      request(small.app.server).post(`/v1/sessions/${id}/inputs`).send(body);
    expect((await post({ inputs: [push(1), push(2)], step: 10 })).body).toEqual({
      step: 10,
      pending: 2,
    });
    expect((await post({ inputs: [push(3)], step: 20 })).body).toEqual({ step: 20, pending: 3 });
    const over = await post({ inputs: [push(4)], step: 30 });
    expect(over.status).toBe(400);
    expect(over.body.details).toMatchObject({ limit: "MAX_PENDING_INPUTS", max: 3 });
    expect(over.body.details.issues[0].path).toEqual(["inputs"]);
    expect(over.body.message).toContain("MAX_PENDING_INPUTS (3)");
    // inputs at the current step act at once and never wait: taken at the limit
    expect((await post({ inputs: [push(5)] })).body).toEqual({ step: 0, pending: 3 });
    // the same refusal on a stream
    const ws = new WebSocket(`${small.ws}/v1/sessions/${id}/stream?every=1000000`);
    const answers: Record<string, unknown>[] = [];
    ws.on("message", (data: Buffer) => {
      const m = JSON.parse(data.toString());
      if (m.type === "inputs" || m.type === "error") answers.push(m);
    });
    await new Promise((r) => ws.once("open", r));
    ws.send(JSON.stringify({ type: "inputs", ref: 1, inputs: [push(6)], step: 40 }));
    await waitFor(() => answers.length === 1);
    expect(answers[0]).toMatchObject({
      type: "error",
      error: "invalid_request",
      ref: 1,
      details: { limit: "MAX_PENDING_INPUTS", max: 3 },
    });
    ws.close();
    // stepped past step 10: its two applied, room for two more
    await step(small.app, id, 11);
    expect((await post({ inputs: [push(7), push(8)], step: 30 })).body).toEqual({
      step: 30,
      pending: 3,
    });
    // nothing refused was scheduled: step 20's command, then step 30's last
    expect((await step(small.app, id, 10)).actuators[0].command).toBe(3);
    expect((await step(small.app, id, 10)).actuators[0].command).toBe(8);
  });

  it("a recording longer than the limit is posted back whole and replays bit-identically", async () => {
    // a controller's run: 12 commands, each sent for the next step (never more than one
    // pending), so its recording holds 12 inputs after its start, 4 times the limit
    const id = await createSession(small.app, cartPole);
    const post = (body: object) =>
      request(small.app.server).post(`/v1/sessions/${id}/inputs`).send(body).expect(200);
    for (let k = 1; k <= 12; k++) {
      await post({ inputs: [push(k / 4)], step: 5 * k });
      await step(small.app, id, 5);
    }
    const end = await step(small.app, id, 5);
    expect(end.step).toBe(65);
    const rec = await request(small.app.server).get(`/v1/sessions/${id}/recording`).expect(200);
    expect(rec.body.inputs.filter((e: { step: number }) => e.step > 0)).toHaveLength(12);
    // before: 400 "12 inputs pending, above MAX_PENDING_INPUTS (3)"
    const created = await request(small.app.server)
      .post("/v1/sessions")
      .send({ recording: rec.body })
      .expect(201);
    const copy = created.body.id as string;
    // holding 12 pending, it takes none for later steps until it has stepped below 3
    await request(small.app.server)
      .post(`/v1/sessions/${copy}/inputs`)
      .send({ inputs: [push(9)], step: 100 })
      .expect(400);
    const replay = await step(small.app, copy, 65);
    expect(replay.bodies).toEqual(end.bodies);
    expect(replay.actuators[0].command).toBe(3);
    const again = await request(small.app.server).get(`/v1/sessions/${copy}/recording`).expect(200);
    expect(again.body.end).toEqual(rec.body.end);
  });
});

/** A lock-step controller over one socket (msgpack): returns the session id. */
async function controlLoop(
  seconds: number,
): Promise<{ id: string; worstTheta: number; worstX: number }> {
  const id = await createSession(server.app, cartPole);
  // the kick: 0.1 N·s at the pole's top
  await request(server.app.server)
    .post(`/v1/sessions/${id}/inputs`)
    .send({ inputs: [{ type: "impulse", id: "pole", impulse: [0.1, 0, 0], point: [0, 0, 0.5] }] })
    .expect(200);
  const ws = new WebSocket(
    `${server.ws}/v1/sessions/${id}/stream?format=msgpack&every=10&fields=observation`,
  );
  const messages: Record<string, unknown>[] = [];
  ws.on("message", (data: Buffer) => messages.push(unpack(data)));
  await new Promise((r) => ws.once("open", r));
  const next = async (pred: (m: Record<string, unknown>) => boolean) =>
    waitFor(
      async () => {
        const i = messages.findIndex(pred);
        return i >= 0 ? messages.splice(0, i + 1)[i] : undefined;
      },
      10_000,
      1,
    );
  let frame = await next((m) => m.type === "state");
  let worstTheta = 0;
  let worstX = 0;
  const rounds = Math.round(seconds / (10 * cartPole.solver.dt));
  for (let k = 0; k < rounds; k++) {
    const [x, v, theta, omega] = frame.observation as number[];
    worstTheta = Math.max(worstTheta, Math.abs(theta));
    worstX = Math.max(worstX, Math.abs(x));
    const u = K[0] * x + K[1] * v + K[2] * theta + K[3] * omega;
    ws.send(pack({ type: "inputs", ref: k, inputs: [{ type: "actuator", id: "push", value: u }] }));
    ws.send(pack({ type: "step", ref: k, steps: 10 }));
    const accepted = await next((m) => m.type === "inputs" || m.type === "error");
    expect(accepted).toEqual({ type: "inputs", ref: k, step: frame.step, pending: 0 });
    frame = await next((m) => m.type === "state" && m.step === (frame.step as number) + 10);
    const stepped = await next((m) => m.type === "stepped" || m.type === "error");
    expect(stepped.step).toBe(frame.step);
  }
  ws.close();
  return { id, worstTheta, worstX };
}

describe("a controller over the WebSocket", () => {
  it("holds the kicked inverted pendulum on its cart upright for 10 s; the recording replays bit-identically", async () => {
    const { id, worstTheta, worstX } = await controlLoop(10);
    const end = await getState(server.app, id);
    expect(end.time).toBeCloseTo(10, 9);
    expect(worstTheta).toBeGreaterThan(0.05); // the kick did tip it
    expect(worstTheta).toBeLessThan(0.3);
    expect(Math.abs(end.observation[2])).toBeLessThan(1e-3); // upright at the end
    expect(worstX).toBeLessThan(2);
    // the recording: the kick at step 0, then one actuator input every 10 steps
    const rec = await request(server.app.server).get(`/v1/sessions/${id}/recording`).expect(200);
    expect(rec.body.inputs).toHaveLength(501);
    expect(rec.body.inputs.slice(0, 3).map((e: { step: number }) => e.step)).toEqual([0, 0, 10]);
    expect(rec.body.end.step).toBe(5000);
    const created = await request(server.app.server)
      .post("/v1/sessions")
      .send({ recording: rec.body })
      .expect(201);
    const replay = await step(server.app, created.body.id, 5000);
    expect(replay.bodies).toEqual(end.bodies);
    expect(replay.observation).toEqual(end.observation);
  }, 120_000);

  it("GET /recording?every=k returns the replayed states; a malformed recording is refused with paths", async () => {
    const id = await createSession(server.app, cartPole);
    await request(server.app.server)
      .post(`/v1/sessions/${id}/inputs`)
      .send({ inputs: [{ type: "actuator", id: "push", value: 1 }] });
    const last = await step(server.app, id, 25);
    const rec = await request(server.app.server)
      .get(`/v1/sessions/${id}/recording?every=10`)
      .expect(200);
    expect(rec.body.states.map((s: { step: number }) => s.step)).toEqual([10, 20, 25]);
    expect(rec.body.states[2].bodies).toEqual(last.bodies);
    // a parameter given twice is refused as such (it read "expected number, received NaN")
    const twice = await request(server.app.server).get(
      `/v1/sessions/${id}/recording?every=1&every=2`,
    );
    expect([twice.status, twice.body.details.issues]).toEqual([
      400,
      [{ path: ["every"], message: '"every" is given 2 times: give it once', code: "custom" }],
    ]);
    const bad = await request(server.app.server)
      .post("/v1/sessions")
      .send({
        recording: {
          ...rec.body,
          states: undefined,
          inputs: [{ step: 3, input: { type: "actuator", id: "ghost", value: 0 } }],
        },
      });
    expect(bad.status).toBe(400);
    expect(bad.body.details.issues[0].path).toEqual(["recording", "inputs", 0, "input", "id"]);
  });
});
