/**
 * Coulomb friction in the Moreau–Jean friction-contact problem, against closed forms.
 *
 * Sliding block (m = 1, v0 = 2 m/s, μ = 0.3 on a plane): while it slides the friction
 * impulse per step is μ m g h against the motion, so v_n = v0 − n μ g h, and the θ = 1/2
 * position update integrates that ramp exactly: the block stops after v0²/(2μg) = 0.6796 m
 * (up to the part of the last step) and then sticks (u_t = 0 inside the cone).
 *
 * Sphere sliding without spin (solid, I = 2/5 m R²): friction μ m g decelerates the centre,
 * v = v0 − μ g t, and spins it up, R ω = (5/2) μ g t, until v = R ω; the angular momentum
 * about the contact point, m R v + I ω, is conserved, so the rolling speed is
 * m R v0 = (m R + I/R) v ⇒ v = 5/7 v0, reached at t = 2 v0/(7 μ g).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { ROUND_OFF_CONTACT } from "./helpers";

const g = 9.81;
const floor = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as [number, number, number], offset: 0 }],
};

describe("sliding block", () => {
  it("stops after v0²/(2μg) within 1 % and sticks; friction force μ m g while sliding", () => {
    const a = 0.1;
    const mu = 0.3;
    const v0 = 2;
    const h = 0.005;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "box",
          mass: 1,
          position: [0, 0, a],
          velocity: [v0, 0, 0],
          shapes: [{ type: "box", halfExtents: [a, a, a] }],
        },
        floor,
      ],
      contact: { method: "nsc", friction: mu },
      // to round-off: the velocities are checked against μ g h per step to 1e-9 m/s
      solver: { integrator: "moreau-jean", dt: h, ...ROUND_OFF_CONTACT },
    });
    sim.step(10);
    const st = sim.state();
    // Velocity after 10 steps and the total friction force on the floor (+x: reaction).
    expect(st.bodies[0].velocity[0]).toBeCloseTo(v0 - 10 * mu * g * h, 9);
    const ft = st.contacts.reduce((s, c) => s + c.tangentForce[0], 0);
    const fn = st.contacts.reduce((s, c) => s + c.normalForce, 0);
    expect(Math.abs(ft)).toBeCloseTo(mu * g, 8);
    expect(fn).toBeCloseTo(g, 8);
    sim.step(400);
    const end = sim.state().bodies[0];
    const d = v0 ** 2 / (2 * mu * g);
    expect(Math.abs(end.position[0] / d - 1)).toBeLessThan(0.01);
    expect(Math.abs(end.velocity[0])).toBeLessThan(1e-9);
    expect(Math.abs(end.position[2] - a)).toBeLessThan(1e-9);
    expect(Math.hypot(...end.angularVelocity)).toBeLessThan(1e-9);
  });
});

describe("sphere sliding without spin", () => {
  it("starts rolling at 5/7 v0 at t = 2 v0/(7 μ g)", () => {
    const R = 0.1;
    const m = 1;
    const v0 = 2;
    const mu = 0.3;
    const h = 0.005;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "ball",
          mass: m,
          position: [0, 0, R],
          velocity: [v0, 0, 0],
          shapes: [{ type: "sphere", radius: R }],
        },
        floor,
      ],
      contact: { method: "nsc", friction: mu },
      solver: { integrator: "moreau-jean", dt: h },
    });
    const tRoll = (2 * v0) / (7 * mu * g);
    let tSeen = -1;
    for (let k = 0; k < 200; k++) {
      sim.step(1);
      const b = sim.state().bodies[0];
      if (tSeen < 0 && Math.abs(b.velocity[0] - R * b.angularVelocity[1]) < 1e-9)
        tSeen = sim.state().time;
    }
    const b = sim.state().bodies[0];
    expect(Math.abs(b.velocity[0] - (5 / 7) * v0)).toBeLessThan(1e-9);
    expect(Math.abs(R * b.angularVelocity[1] - (5 / 7) * v0)).toBeLessThan(1e-9);
    expect(Math.abs(tSeen - tRoll)).toBeLessThanOrEqual(h);
  });
});
