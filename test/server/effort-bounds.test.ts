/**
 * A load or actuator value whose effect is a blow-up is refused at every door, with the
 * path of the value, nothing changed and other sessions unaffected; a large physical value
 * is taken. Before, a 1e300 N load, a 1e300 N·m effort or a 1e300 rad/s target was taken
 * (201, 200, an `inputs` answer) and the next step ended the session `diverged`.
 *
 * The rule (src/engine/simulation/inputs.ts) is the impulse's, for the impulse one step h
 * of the effort delivers: refused when it changes a body, free, by more than 1e8 m/s or
 * rad/s, where a run counts as blown up. The figures here follow from it by hand, at
 * h = 1 ms on a ball of m = 1 kg, I = 0.1 kg·m² and rods of 1 kg, 1 m hinged at an end
 * (I_J = m L²/3 = 1/3 kg·m² about the pin, their centres ½ m from it):
 *   load F along x at a point on the x axis   Δv = h F / m      → F > 1e11 N refused
 *   load torque T                             Δω = h T / I      → T > 1e10 N·m refused
 *   torque actuator τ on a rod                Δω = h τ / I_J    → τ > 3.33e10 N·m refused
 *   (until 2026-12-06 the rod's smallest principal moment, 1e-3 kg·m², about its long axis:
 *   τ > 1e8 N·m was refused though it turns the rod at 3e5 rad/s)
 *   velocity servo target, position target    beyond 1e8 (rad/s, rad), or a target whose swing
 *   passes 1e8 rad/s (test/engine/simulation/inputs.test.ts)
 * and a taken 1e6 N load moves the ball as the closed form says: v_x = h F / m = 1000 m/s
 * after one step.
 */
import { pack, unpack } from "msgpackr";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import type { CallResult } from "../support/process";
import { startServer, type TestServer } from "../support/server";
import { waitFor } from "../support/wait";

const H = 1e-3;
let server: TestServer;
beforeAll(async () => {
  server = await startServer({});
});
afterAll(async () => {
  await server?.app.close();
});

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<Pick<CallResult, "status" | "body">> {
  const r = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

/** A rod of 1 kg, 1 m along x hinged at its end about y, at y = `y` (I_x = 1e-3 kg·m²). */
function rod(id: string, y: number) {
  return {
    body: { id, mass: 1, position: [0.5, y, 0], inertia: [1e-3, 1 / 12, 1 / 12] },
    joint: {
      id: `${id}-pin`,
      type: "revolute",
      a: { body: "ground", point: [0, y, 0] },
      b: { body: id, point: [-0.5, 0, 0] },
      axis: [0, 1, 0],
    },
  };
}

/** A free ball (m = 1, I = 0.1) with a point load "push" at (0.1, 0, 0), and three driven rods. */
function model(push: unknown[] = [0, 0, 0], effort: unknown = 0) {
  const rods = [rod("r1", 0), rod("r2", 2), rod("r3", 4)];
  return {
    name: "driven",
    bodies: [
      { id: "ball", mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, -3, 10] },
      ...rods.map((r) => r.body),
    ],
    joints: rods.map((r) => r.joint),
    forces: [
      { id: "push", type: "pointForce", at: { body: "ball", point: [0.1, 0, 0] }, force: push },
    ],
    actuators: [
      { id: "motor", joint: "r1-pin", type: "torque", effort },
      { id: "speed", joint: "r2-pin", type: "velocity", kv: 1 },
      { id: "angle", joint: "r3-pin", type: "position", kp: 10, kd: 1 },
    ],
    solver: { dt: H },
  };
}

const pathsOf = (body: { details?: { issues?: { path: unknown[] }[] } }) =>
  (body.details?.issues ?? []).map((i) => i.path);

it("create: a model whose load or actuator command is a blow-up is refused with its path; 1e6 N is taken", async () => {
  const refused: [unknown, unknown, unknown[]][] = [
    [[1e300, 0, 0], 0, ["model", "forces", 0, "force", 0]],
    [
      [0, { type: "sine", amplitude: 1e300, frequency: 1 }, 0],
      0,
      ["model", "forces", 0, "force", 1],
    ],
    [[1.0001e11, 0, 0], 0, ["model", "forces", 0, "force", 0]],
    [[0, 0, 0], 1e300, ["model", "actuators", 0, "effort"]],
    [
      [0, 0, 0],
      {
        type: "table",
        points: [
          [0, 0],
          [1, 4e10],
        ],
      },
      ["model", "actuators", 0, "effort"],
    ],
  ];
  for (const [push, effort, path] of refused) {
    const r = await call("POST", "/v1/sessions", { model: model(push as unknown[], effort) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(pathsOf(r.body)).toEqual([path]);
  }
  expect((await call("GET", "/v1/sessions")).body.sessions).toHaveLength(0);
  // a large physical load and effort: taken, and the ball moves as h F / m says
  const made = await call("POST", "/v1/sessions", { model: model([1e6, 0, 0], 0.9999e8) });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const s = await call("POST", `/v1/sessions/${made.body.id}/step`, { steps: 1 });
  const ball = s.body.bodies.find((b: { id: string }) => b.id === "ball");
  expect(ball.velocity[0]).toBeCloseTo((H * 1e6) / 1, 9);
  expect((await call("DELETE", `/v1/sessions/${made.body.id}`)).status).toBe(204);
});

it("REST inputs, WebSocket inputs and PATCH: refused with the path, nothing changed, a bystander unaffected", async () => {
  const bystander = (await call("POST", "/v1/sessions", { model: fallingBody({ z0: 1e6 }) })).body
    .id;
  expect((await call("POST", `/v1/sessions/${bystander}/run`, { realtimeFactor: 1 })).status).toBe(
    202,
  );
  const id = (await call("POST", "/v1/sessions", { model: model() })).body.id as string;
  const before = (await call("GET", `/v1/sessions/${id}/state`)).body;

  const refused: [unknown, unknown[]][] = [
    [{ type: "load", id: "push", force: [1e300, 0, 0] }, ["inputs", 0, "force", 0]],
    [{ type: "load", id: "push", force: [1.0001e11, 0, 0] }, ["inputs", 0, "force", 0]],
    [{ type: "load", id: "push", torque: [0, 0, 1.0001e10] }, ["inputs", 0, "torque"]],
    [{ type: "actuator", id: "motor", value: 3.3334e10 }, ["inputs", 0, "value"]],
    [{ type: "actuator", id: "motor", value: 1e300 }, ["inputs", 0, "value"]],
    [{ type: "actuator", id: "speed", value: 1e300 }, ["inputs", 0, "value"]],
    [{ type: "actuator", id: "angle", value: -2e8 }, ["inputs", 0, "value"]],
    // its PD (k_p 10, k_d 1 on I_J = 1/3) swings the rod at up to 3.79 rad/s a radian of
    // its step, ω_n exp(−ζ acos ζ/√(1 − ζ²)): 9e7 rad at 3.4e8 rad/s (taken before)
    [{ type: "actuator", id: "angle", value: 9e7 }, ["inputs", 0, "value"]],
  ];
  for (const [input, path] of refused) {
    const r = await call("POST", `/v1/sessions/${id}/inputs`, { inputs: [input] });
    expect(r.status, JSON.stringify(input)).toBe(400);
    expect(pathsOf(r.body)).toEqual([path]);
  }

  // the same over the socket: JSON, and msgpack, which can carry a non-finite value
  const json = new FrameClient(`${server.ws}/v1/sessions/${id}/stream?fields=energy`);
  await json.open();
  json.ws.send(JSON.stringify({ type: "inputs", ref: 1, inputs: [refused[0][0]] }));
  const packed = new FrameClient(
    `${server.ws}/v1/sessions/${id}/stream?fields=energy&format=msgpack`,
  );
  await packed.open();
  packed.ws.send(
    pack({
      type: "inputs",
      ref: 2,
      inputs: [{ type: "actuator", id: "motor", value: Number.POSITIVE_INFINITY }],
    }),
  );
  packed.ws.send(
    pack({ type: "inputs", ref: 3, inputs: [{ type: "actuator", id: "speed", value: 1e300 }] }),
  );
  const jsonAnswer = await waitFor(() =>
    json.messages.find((m) => (m as { type: string }).type === "error"),
  );
  expect(jsonAnswer).toMatchObject({ type: "error", ref: 1, error: "invalid_request" });
  expect(pathsOf(jsonAnswer as never)).toEqual([["inputs", 0, "force", 0]]);
  const answers = await waitFor(() => {
    const a = packed.raw.map((b) => unpack(b)).filter((m) => m.type === "error");
    return a.length >= 2 ? a : null;
  });
  expect(answers.map((a) => [a.ref, a.error, pathsOf(a)])).toEqual([
    [2, "invalid_request", [["inputs", 0, "value"]]],
    [3, "invalid_request", [["inputs", 0, "value"]]],
  ]);
  json.close();
  packed.close();

  // nothing changed: the state, its step, and what the next step does (gravity alone)
  const after = (await call("GET", `/v1/sessions/${id}/state`)).body;
  expect(after).toEqual(before);
  expect(after.actuators.map((a: { command: number }) => a.command)).toEqual([0, 0, 0]);

  // PATCH: a load of 1e9 N is taken at h = 1 ms (Δv = 1e6 m/s); a step of 0.2 s would make
  // it 2e8 m/s: the PATCH is refused on solver.dt, the step stays 1 ms
  let r = await call("POST", `/v1/sessions/${id}/inputs`, {
    inputs: [{ type: "load", id: "push", force: [1e9, 0, 0] }],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  r = await call("PATCH", `/v1/sessions/${id}`, { solver: { dt: 0.2 } });
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(pathsOf(r.body)).toEqual([["solver", "dt"]]);
  expect((await call("GET", `/v1/sessions/${id}`)).body.dt).toBe(H);
  r = await call("PATCH", `/v1/sessions/${id}`, { solver: { dt: 0.002 } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  // an effort the rod's smallest principal moment refused (above 1e8 N·m at 1 ms) and its
  // moment about the pin takes: at h = 2 ms, 1.6e10 N·m makes h τ / I_J = 9.6e7 rad/s
  r = await call("POST", `/v1/sessions/${id}/inputs`, {
    inputs: [{ type: "actuator", id: "motor", value: 1.6e10 }],
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);

  // the bystander ran on throughout
  const b = (await call("GET", `/v1/sessions/${bystander}`)).body;
  expect(b.status).toBe("running");
  await waitFor(async () => (await call("GET", `/v1/sessions/${bystander}`)).body.step > b.step);
});
