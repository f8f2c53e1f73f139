/**
 * A running session driven with each input kind, over REST and over the WebSocket, under
 * every integrator, against the closed form of the motion.
 *
 * A 1 kg, 1 m rod pinned at its end about y (I = m L²/3 = 1/3 kg·m² about the pin), no
 * gravity, with a torque actuator "drive" (effort 0 in the model) and a world-frame
 * pointForce "twist" (torque 0 in the model), both about the pin's axis: under a constant
 * total torque τ the angle is θ(t) = θ₀ + ω₀ (t − t₀) + τ (t − t₀)²/(2I), ω(t) = ω₀ +
 * τ (t − t₀)/I. At h = 1 ms:
 *   0.5 s  actuator drive 0.1 N·m              (τ = 0.1)
 *   1.5 s  load twist (0, 0.05, 0) N·m          (τ = 0.15)
 *   2.5 s  gains drive effortLimit 0.04 N·m     (τ = 0.04 + 0.05 = 0.09)
 *   3 s    jointState pin q = 1 rad, q̇ = 0
 *   3.5 s  impulse, angular (0, 0.02, 0) N·m·s  (Δω = 0.02/I = 0.06 rad/s: the pin
 *          takes the rest of the free rod's I_c⁻¹ L)
 *   4 s    bodyState: the rod's velocities of ω = −0.5 rad/s about the pin (v = ω ŷ × r,
 *          r the centre from the pin)
 *   5 s    the end: θ, ω against the closed form of each phase.
 * The inputs over the WebSocket's `inputs` command drive the session to the same states as
 * over REST, bit for bit.
 * Tolerances: BOUNDS. (An audit: the drive path was right before this file, which guards it.)
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { SolverSettings } from "../../schemas/model";
import type { StateOut } from "../../schemas/state";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, getState, step } from "./helpers";

const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;
const I = 1 / 3;
const H = 1e-3;

function model(integrator: string) {
  return {
    gravity: [0, 0, 0],
    bodies: [{ id: "rod", mass: 1, position: [0.5, 0, 0], inertia: [1e-3, 1 / 12, 1 / 12] }],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "rod", point: [-0.5, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    actuators: [{ id: "drive", joint: "pin", type: "torque", effort: 0 }],
    forces: [{ id: "twist", type: "pointForce", at: { body: "rod" }, torque: [0, 0, 0] }],
    solver: { integrator, dt: H },
  };
}

/**
 * |θ − θ_exact| (rad) and |ω − ω_exact| (rad/s) at the phases' ends, by integrator (measured
 * in parentheses). articulated steps the pin's angle itself: round-off (1.8e-13, 1.1e-13).
 * moreau-jean, newmark and generalized-alpha take the constant acceleration's rate exactly
 * (1.1e-13) and the angle to the joints' position-level error, the rod's centre stepped
 * along the chord and put back on the arc, O((ω h)²) a step (5.7e-8 rad at 1.06 rad,
 * 1.1 rad/s). backward-euler and symplectic-euler: first order, τ h (t − t₀)/(2I) a phase
 * (4.4e-4 rad; backward-euler's rate 1.7e-4 rad/s, symplectic-euler's 8.6e-14).
 */
const BOUNDS: Record<string, [number, number]> = {
  articulated: [1e-12, 1e-12],
  "moreau-jean": [1e-7, 1e-12],
  newmark: [1e-7, 1e-12],
  "generalized-alpha": [1e-7, 1e-12],
  "backward-euler": [1e-3, 5e-4],
  "symplectic-euler": [1e-3, 1e-12],
};

const server = useServer();

type Send = (id: string, inputs: object[]) => Promise<void>;

const rest: Send = async (id, inputs) => {
  const r = await request(server.app.server).post(`/v1/sessions/${id}/inputs`).send({ inputs });
  if (r.status !== 200) throw new Error(`inputs: ${r.status} ${r.text}`);
};

/** The inputs over one WebSocket per call (JSON), the answer awaited. */
const socket: Send = async (id, inputs) => {
  const ws = new WebSocket(`${server.ws}/v1/sessions/${id}/stream?every=1000000`);
  const messages: Record<string, unknown>[] = [];
  ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString())));
  await new Promise((r) => ws.once("open", r));
  ws.send(JSON.stringify({ type: "inputs", ref: 1, inputs }));
  const answer = await waitFor(() =>
    messages.find((m) => m.type === "inputs" || m.type === "error"),
  );
  ws.close();
  if (answer.type !== "inputs") throw new Error(`inputs: ${JSON.stringify(answer)}`);
};

/** θ, ω of the pin. */
const pin = (s: StateOut): [number, number] => [s.joints[0].coordinates[0], s.joints[0].rates[0]];

/** The drive; per phase's end: [t, θ, ω, closed-form θ, closed-form ω]. */
async function drive(integrator: string, send: Send): Promise<number[][]> {
  const id = await createSession(server.app, model(integrator));
  const out: number[][] = [];
  // the closed form: θ₀, ω₀ at t₀ under τ
  let [t0, th0, w0, tau] = [0, 0, 0, 0];
  const at = (t: number): [number, number] => [
    th0 + w0 * (t - t0) + (tau * (t - t0) ** 2) / (2 * I),
    w0 + (tau * (t - t0)) / I,
  ];
  const phase = async (steps: number) => {
    const s = await step(server.app, id, steps);
    out.push([s.time, ...pin(s), ...at(s.time)]);
  };
  const change = (t: number, next: { tau?: number; th?: number; w?: number }) => {
    const [th, w] = at(t);
    [t0, th0, w0, tau] = [t, next.th ?? th, next.w ?? w, next.tau ?? tau];
  };
  await phase(500);
  await send(id, [{ type: "actuator", id: "drive", value: 0.1 }]);
  change(0.5, { tau: 0.1 });
  await phase(1000);
  await send(id, [{ type: "load", id: "twist", torque: [0, 0.05, 0] }]);
  change(1.5, { tau: 0.15 });
  await phase(1000);
  await send(id, [{ type: "gains", id: "drive", effortLimit: 0.04 }]);
  change(2.5, { tau: 0.09 });
  await phase(500);
  await send(id, [{ type: "jointState", id: "pin", position: 1, velocity: 0 }]);
  // (the State at the boundary includes it, to round-off)
  const set = pin(await getState(server.app, id));
  expect(Math.abs(set[0] - 1), integrator).toBeLessThan(1e-12);
  expect(Math.abs(set[1]), integrator).toBeLessThan(1e-12);
  change(3, { th: 1, w: 0 });
  await phase(500);
  const before = pin(await getState(server.app, id));
  await send(id, [
    { type: "impulse", id: "rod", impulse: [0, 0, 0], angularImpulse: [0, 0.02, 0] },
  ]);
  const kicked = pin(await getState(server.app, id));
  expect(Math.abs(kicked[1] - before[1] - 0.02 / I), integrator).toBeLessThan(1e-9);
  change(3.5, { th: before[0], w: before[1] + 0.02 / I });
  await phase(500);
  // the rod's velocities of ω = −0.5 rad/s about the pin: the centre r = (½ cos θ, 0,
  // −½ sin θ) from it, v = ω ŷ × r = ω (r_z, 0, −r_x)
  const [th] = pin(await getState(server.app, id));
  const r = [0.5 * Math.cos(th), 0, -0.5 * Math.sin(th)];
  await send(id, [
    {
      type: "bodyState",
      id: "rod",
      velocity: [-0.5 * r[2], 0, 0.5 * r[0]],
      angularVelocity: [0, -0.5, 0],
    },
  ]);
  change(4, { th, w: -0.5 });
  await phase(1000);
  return out;
}

describe("a running session driven by each input kind, against the closed form", () => {
  it("REST and the WebSocket, every integrator: θ(t) = θ₀ + ω₀ t + τ t²/(2I) phase by phase, the two channels bit for bit", async () => {
    for (const integrator of INTEGRATORS) {
      const overRest = await drive(integrator, rest);
      const overSocket = await drive(integrator, socket);
      expect(overSocket, integrator).toEqual(overRest);
      const [angle, rate] = BOUNDS[integrator];
      for (const [t, th, w, thExact, wExact] of overRest) {
        const what = `${integrator} at ${t} s`;
        expect(Math.abs(th - thExact), what).toBeLessThan(angle);
        expect(Math.abs(w - wExact), what).toBeLessThan(rate);
      }
    }
  }, 120_000);
});
