/**
 * Impacts of jointed bodies at their instants (src/engine/integrators/impact-events.ts):
 * Moreau–Jean's step split at each impact of a contact that a joint holds at one end, the
 * impact Newton's law with the joints, zero duration. Checked against closed forms derived
 * here and the conservation laws.
 *
 * Newton's cradle (the example: five 0.5 kg balls on 0.3 m strings, 1 mm apart, the first
 * released from 30°, e = 1) at 5 ms, where the gaps close within a step (ball 1 arrives at
 * v₁ = √(2 g L (cos θ_c − cos 30°)), θ_c = asin(1 mm / L), each gap then closes in
 * 1 mm / v₁ ≈ 1.1 ms): at the bottom the strings are vertical, so each ball's effective
 * mass along the horizontal normal is m and the two-ball impact at e = 1 exchanges the
 * velocities; after the cascade ball 5 moves at v₁ and balls 1–4 are at rest, and it
 * swings out to the height ball 1 was released from. Before, the step's simultaneous
 * impacts (Newton's law on the contacts active at the step's start, the joints at the
 * velocity level) sent ball 5 to 19.8° on its first swing, and the cradle lost 35 % of its
 * swing energy in 60 s.
 *
 * A ball hitting a pendulum bob off centre, no gravity: the closed form of the impact on a
 * hinge. Bob (M = 1 kg, radius 0.05 m) hanging 0.5 m below a hinge along y at the origin,
 * ball (m = 0.3 kg, radius 0.05 m) falling at 2 m/s along x = −0.06 m: the centres touch
 * at distance 0.1 m with n = (−0.6, 0, 0.8) (bob to ball), contact point c = (−0.03, 0,
 * −0.46); u⁻ = n·v = −1.6 m/s. An impulse P n on the ball (−P n on the bob) turns the
 * pendulum by ω_y = −(c × n)_y P / I_h, (c × n)_y = c_z n_x − c_x n_z = 0.3 m,
 * I_h = M L² + I_bob = 0.251 kg m², and the contact point's normal velocity by
 * 0.3 ω_y: u⁺ − u⁻ = P (1/m + 0.3²/I_h), so at e = 1 P = 2·1.6/(1/m + 0.09/I_h).
 * Kinetic energy and the angular momentum about the hinge axis are kept (the hinge's
 * reaction has no moment about its axis).
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { readExample } from "../../support/examples";

const g = 9.81;

describe("impact events: Newton's cradle example at 5 ms", () => {
  const model = readExample<ModelInput>("newtons-cradle");
  const at5ms = () => loadModel({ ...model, solver: { ...model.solver, dt: 0.005 } });
  const bodies = model.bodies as { mass: number; inertia: number[]; position: number[] }[];
  const joints = model.joints as { a: { point: number[] }; b: { point: number[] } }[];
  const L = Math.hypot(...joints[0].b.point);
  const rest = joints.map((j) => j.a.point[2] - L);
  // the swing energy Σ ½ m v² + ½ I ω² + m g (z − z_rest) (J)
  const swing = (sim: ReturnType<typeof loadModel>) =>
    sim.state().bodies.reduce((e, b, i) => {
      const { mass, inertia } = bodies[i];
      const v2 = b.velocity.reduce((s, x) => s + x * x, 0);
      const w2 = b.angularVelocity.reduce((s, x) => s + x * x, 0);
      return e + 0.5 * mass * v2 + 0.5 * inertia[0] * w2 + mass * g * (b.position[2] - rest[i]);
    }, 0);
  // the angle of ball i's string from the vertical (rad, positive towards +x)
  const angle = (sim: ReturnType<typeof loadModel>, i: number) => {
    const p = sim.state().bodies[i].position;
    const a = joints[i].a.point;
    return Math.atan2(p[0] - a[0], a[2] - p[2]);
  };

  it("passes the momentum on ball by ball: the cascade's step leaves ball 5 at ball 1's speed, balls 1–4 at rest", () => {
    const sim = at5ms();
    const speed = (i: number) => Math.hypot(...sim.state().bodies[i].velocity);
    // up to the step before the cascade (ball 1 from 30° reaches the bottom at 0.27 s)
    let before = 0;
    while (speed(4) === 0 && sim.time < 0.5) {
      before = speed(0);
      sim.step(1);
    }
    // the whole cascade, 4 × 1.1 ms, within that one step: ball 1's speed ends in ball 5
    // (measured 9e-5 apart, the pendulums' own motion over the step; balls 1–4 then move
    // at 1.6e-4 m/s, each 1 mm off its rest: g (1 mm / L) h)
    expect(sim.time).toBeGreaterThan(0.25);
    expect(Math.abs(speed(4) - before)).toBeLessThan(5e-4 * before);
    for (let i = 0; i < 4; i++) expect(speed(i)).toBeLessThan(5e-4 * before);
    // Newton's law at each instant: four impacts, each between pieces of the step
    const { solver } = sim.state();
    expect(solver.impacts).toBe(4);
    expect(solver.impactsResolved).toBe(true);
    expect(solver.substeps).toBeGreaterThanOrEqual(5);
  });

  it("keeps its swing over 60 s: energy within 1 %, ball 5's first swing to 30° within 1 %", () => {
    const sim = at5ms();
    const E0 = swing(sim);
    let first = 0;
    // ball 5's first swing: out and back within 0.3–0.9 s
    while (sim.time < 0.9) {
      sim.step(1);
      first = Math.max(first, angle(sim, 4));
    }
    let worst = 0;
    while (sim.time < 60) {
      sim.step(40);
      worst = Math.max(worst, Math.abs(swing(sim) - E0));
    }
    // (measured 4e-5 J of 0.197 J; the simultaneous impacts lost 0.069 J)
    expect(worst).toBeLessThan(0.01 * E0);
    // (measured 29.997°; the simultaneous impacts: 19.8°)
    expect(Math.abs(first - Math.PI / 6)).toBeLessThan(0.01 * (Math.PI / 6));
    const { energy } = sim.state();
    expect(Math.abs(energy.error)).toBeLessThan(1e-3 * E0);
    expect(Math.abs(energy.dissipated)).toBeLessThan(1e-6 * E0);
  });
});

describe("impact events: a ball hitting a pendulum bob off centre (no gravity, e = 1)", () => {
  const M = 1;
  const m = 0.3;
  const Ib = 0.001;
  const Ir = 0.0003;
  const hinged = (
    dt: number,
    gravity: [number, number, number] = [0, 0, 0],
    velocity: [number, number, number] = [0, 0, -2],
    z = -0.3,
  ) =>
    loadModel({
      gravity,
      bodies: [
        {
          id: "bob",
          mass: M,
          position: [0, 0, -0.5],
          inertia: [Ib, Ib, Ib],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
        {
          id: "ball",
          mass: m,
          position: [-0.06, 0, z],
          velocity,
          inertia: [Ir, Ir, Ir],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
      ],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "bob", point: [0, 0, 0.5] },
          axis: [0, 1, 0],
        },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt, theta: 0.5 },
    });
  // angular momentum about the hinge axis y (N m s)
  const Ly = (sim: ReturnType<typeof loadModel>) =>
    sim.state().bodies.reduce((s, b, i) => {
      const [x, , z] = b.position;
      const [vx, , vz] = b.velocity;
      const mass = i === 0 ? M : m;
      return s + mass * (z * vx - x * vz) + (i === 0 ? Ib : Ir) * b.angularVelocity[1];
    }, 0);
  const Ih = M * 0.5 * 0.5 + Ib;
  const P = (2 * 1.6) / (1 / m + 0.09 / Ih);
  const n = [-0.6, 0, 0.8];

  it("dropped under gravity: the ball's flight after the impact at 1/60 s is the 1 ms one to 1e-9, energy kept", () => {
    // the ball falls 0.12 m from rest onto the bob hanging at rest: the impact, at its
    // instant, meets the same state at any step, and the ball's parabola after it is exact
    // under the trapezoidal step (the whole-step impact: x 3.1e-2 m apart at 0.6 s, 1/60 s
    // against 1 ms)
    const dropped = (dt: number) => {
      const sim = hinged(dt, [0, 0, -g], [0, 0, 0], -0.2);
      sim.step(Math.round(0.6 / dt));
      return sim.state();
    };
    const coarse = dropped(1 / 60);
    const fine = dropped(0.001);
    for (let k = 0; k < 3; k++) {
      expect(Math.abs(coarse.bodies[1].position[k] - fine.bodies[1].position[k])).toBeLessThan(
        1e-9,
      );
      expect(Math.abs(coarse.bodies[1].velocity[k] - fine.bodies[1].velocity[k])).toBeLessThan(
        1e-9,
      );
    }
    // e = 1: nothing dissipated; the error is the swinging bob's smooth steps' (measured
    // 2.0e-4 J at 1/60 s of the ball's 2.3 J kinetic energy; the whole-step impact 1.6e-2 J)
    expect(Math.abs(coarse.energy.dissipated)).toBeLessThan(1e-12);
    expect(Math.abs(coarse.energy.error)).toBeLessThan(5e-4);
  });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s: the ball's rebound and the bob's turn as the closed form, energy and hinge momentum kept`, () => {
      const sim = hinged(dt);
      const L0 = Ly(sim);
      const E0 = sim.state().energy.kinetic;
      // the ball meets the bob at t = 0.04 s; 0.3 s later it is long gone
      sim.step(Math.round(0.3 / dt));
      const s = sim.state();
      const ball = s.bodies[1].velocity;
      for (let k = 0; k < 3; k++)
        expect(Math.abs(ball[k] - ((k === 2 ? -2 : 0) + (P / m) * n[k]))).toBeLessThan(1e-9);
      expect(Math.abs(s.bodies[0].angularVelocity[1] - (-0.3 * P) / Ih)).toBeLessThan(1e-9);
      expect(Math.abs(Ly(sim) - L0)).toBeLessThan(1e-12);
      expect(Math.abs(s.energy.kinetic - E0)).toBeLessThan(1e-12);
    });
});

describe("impact events: a pendulum bob striking the floor (e = 0.6)", () => {
  // A 2 kg bob (radius r = 0.05 m) on a 0.5 m arm hinged at (0, 0, r), released 20° above
  // horizontal; it meets the floor z = 0 with the arm horizontal, where its swing energy
  // E = ½ m v² + ½ I ω² + m g (z − r) is all kinetic, E₀ = m g L sin 20°. One degree of
  // freedom and the normal ⟂ the arm: Newton's law leaves ω⁺ = −e ω⁻, the energy e² E,
  // so between the k-th and (k + 1)-th impacts E = e^{2k} E₀. Newton's law over the
  // impact's step (the joints at the velocity level, the impulse against gravity over the
  // whole step) was off by 2.2e-2 E₀ at 5 ms and 2.8e-2 E₀ at 1/60 s.
  const L = 0.5;
  const r = 0.05;
  const m = 2;
  const I = 0.002;
  const e = 0.6;
  const a0 = (20 * Math.PI) / 180;
  const bob = (dt: number, restitution = e, damper = 0) =>
    loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "bob",
          mass: m,
          position: [L * Math.cos(a0), 0, r + L * Math.sin(a0)],
          inertia: [I, I, I],
          shapes: [{ type: "sphere", radius: r }],
        },
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      joints: [
        {
          id: "pivot",
          type: "revolute",
          a: { body: "ground", point: [0, 0, r] },
          b: { body: "bob", point: [-L * Math.cos(a0), 0, -L * Math.sin(a0)] },
          axis: [0, 1, 0],
        },
      ],
      forces: damper > 0 ? [{ id: "d", type: "damper", linear: damper }] : [],
      contact: { method: "nsc", restitution },
      solver: { integrator: "moreau-jean", dt },
    });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s: the swing energy between the k-th and next impacts is e^{2k} E₀ (k = 1, 2)`, () => {
      const sim = bob(dt);
      const E = () => {
        const b = sim.state().bodies[0];
        const v2 = b.velocity.reduce((s, x) => s + x * x, 0);
        const w2 = b.angularVelocity.reduce((s, x) => s + x * x, 0);
        return 0.5 * m * v2 + 0.5 * I * w2 + m * g * (b.position[2] - r);
      };
      const E0 = E();
      expect(Math.abs(E0 - m * g * L * Math.sin(a0))).toBeLessThan(1e-12);
      let k = 0;
      let last = 0;
      let samples = 0;
      while (k < 3 && sim.time < 5) {
        sim.step(1);
        const st = sim.state();
        const w = st.bodies[0].angularVelocity[1];
        // an impact turns the bob upwards (ω_y < 0: away from the floor)
        if (w < 0 && last >= 0) k++;
        last = w;
        // the steps without a contact's impulse, between the impacts
        if (k >= 1 && k <= 2 && st.contacts.every((c) => c.normalForce === 0)) {
          // (measured 6.5e-6 E₀ at 5 ms, 6.8e-5 E₀ at 1/60 s)
          expect(Math.abs(E() - e ** (2 * k) * E0)).toBeLessThan(1e-4 * E0);
          samples++;
        }
      }
      expect(k).toBe(3);
      expect(samples).toBeGreaterThan(10);
      // the impacts' work: (1 − e²) e^{2j} E₀ each, j = 0, 1, 2 (measured within 1.7e-4 E₀
      // at 1/60 s: the smooth steps' energy error up to the impacts)
      expect(Math.abs(sim.state().energy.dissipated - (1 - e ** 6) * E0) / E0).toBeLessThan(5e-4);
    });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s, e = 1 with a damper: the energy balance weighs each piece from the impact's velocities`, () => {
      // a linear damper (0.5 N s/m) on the bob, 16 impacts in 5 s: the damper's work over
      // the piece after an impact was weighed from the velocities before it (energy.error
      // −0.15 J at 1/60 s); the whole-step impacts left −6.2e-3 J (−3.3e-4 J at 5 ms)
      const sim = bob(dt, 1, 0.5);
      let impacts = 0;
      while (sim.time < 5 - dt / 2) {
        sim.step(1);
        impacts += sim.state().solver.impacts;
      }
      expect(impacts).toBeGreaterThan(10);
      const { energy } = sim.state();
      expect(energy.dissipated).toBeGreaterThan(1);
      // (measured 2.9e-6 J at 5 ms, 8.4e-6 J at 1/60 s)
      expect(Math.abs(energy.error)).toBeLessThan(1e-4);
    });
});

describe("impact events: more impacts in a step than it resolves one by one", () => {
  it("a 20-ball cradle, 0.2 mm gaps, at 1/60 s: 16 impacts met, the rest of the step whole, impactsResolved false", () => {
    // ball 1 hanging at the bottom moving at 1 m/s along the row: the 19 gaps close one
    // after the other within 3.8 ms, inside one step
    const n = 20;
    const R = 0.025;
    const d = 2 * R + 2e-4;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: Array.from({ length: n }, (_, i) => ({
        id: `b${i}`,
        mass: 0.5,
        position: [i * d, 0, 0.1] as [number, number, number],
        velocity: [i === 0 ? 1 : 0, 0, 0] as [number, number, number],
        inertia: [1.25e-4, 1.25e-4, 1.25e-4] as [number, number, number],
        shapes: [{ type: "sphere" as const, radius: R }],
      })),
      joints: Array.from({ length: n }, (_, i) => ({
        id: `s${i}`,
        type: "revolute" as const,
        a: { body: "ground", point: [i * d, 0, 0.4] as [number, number, number] },
        b: { body: `b${i}`, point: [0, 0, 0.3] as [number, number, number] },
        axis: [0, 1, 0] as [number, number, number],
      })),
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt: 1 / 60 },
    });
    sim.step(1);
    const { solver } = sim.state();
    expect(solver.impacts).toBe(16);
    expect(solver.impactsResolved).toBe(false);
    sim.step(1);
    expect(sim.state().solver.impactsResolved).toBe(true);
  });
});
