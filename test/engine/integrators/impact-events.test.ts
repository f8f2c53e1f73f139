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
import { describe, expect, it, vi } from "vitest";
import { chainOnFloor as benchChainOnFloor } from "../../../bench/impacts";
import type { ModelInput } from "../../../schemas/model";
import type { StateOut } from "../../../schemas/state";
import { ContactClearance } from "../../../src/engine/contact/clearance";
import { NonsmoothContact } from "../../../src/engine/contact/nonsmooth-contact";
import { ACTIVATION_TOLERANCE } from "../../../src/engine/dynamics/one-step-problem";
import { loadModel } from "../../../src/engine/index";
import { ImpactEvents, MAX_EVENTS } from "../../../src/engine/integrators/impact-events";
import { type BodySystem, kineticEnergy } from "../../../src/engine/model/body-system";
import { readExample } from "../../support/examples";
import { pendulumsOverFloor } from "../../support/models";
import { report } from "./long-run/helpers";

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

  it("the cascade's step reports its totals: each ball's momentum change is gravity's, its string's and its contacts' impulses", () => {
    // M (v_{t+h} − v_t) = h f̄ + Gᵀ Λ + Σ impulses on the split step, ball by ball along
    // x, y, z: its string's reported force on it times h (the pieces' joint impulses and
    // the four impacts', a revolute's point rows fixed in the world) and the impulses of
    // the contacts that touch it (on body b, minus on body a). Before: the strings' forces
    // were the last piece's, the impacts' joint impulses (~0.4 N s) left out.
    const sim = at5ms();
    let before = sim.state();
    while (sim.state().solver.impacts === 0 && sim.time < 0.5) {
      before = sim.state();
      sim.step(1);
    }
    const s = sim.state();
    expect(s.solver.impacts).toBe(4);
    const h = 0.005;
    // (the largest impulse, to say what the balance is measured against)
    let largest = 0;
    for (let i = 0; i < 5; i++) {
      const id = s.bodies[i].id;
      for (let k = 0; k < 3; k++) {
        let rest =
          bodies[i].mass * (s.bodies[i].velocity[k] - before.bodies[i].velocity[k]) +
          (k === 2 ? bodies[i].mass * g * h : 0) -
          s.joints[i].force[k] * h;
        for (const c of s.contacts) {
          if (c.bodies[1] === id) rest -= c.impulse[k];
          if (c.bodies[0] === id) rest += c.impulse[k];
          largest = Math.max(largest, Math.abs(c.impulse[k]));
        }
        expect(Math.abs(rest)).toBeLessThan(1e-12);
      }
    }
    // ball 1 arrived at v₁ ≈ 0.89 m/s: each impact's impulse m v₁ ≈ 0.44 N s
    expect(largest).toBeGreaterThan(0.4);
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
    it(`dropped under gravity, h = ${dt.toPrecision(3)} s: the impact's step reports the hinge's force with the impact's joint impulse, the step's momentum balance closed`, () => {
      // the bob and the ball together: their momentum change less gravity's is the hinge's
      // impulse, its reported force times h (the contact between them is internal), and the
      // ball's alone the contact's impulse on it. Before: the hinge's force was the last
      // piece's, 0.72 N s of the impact's joint impulse missing along z.
      const sim = hinged(dt, [0, 0, -g], [0, 0, 0], -0.2);
      let before = sim.state();
      while (sim.state().solver.impacts === 0 && sim.time < 0.5) {
        before = sim.state();
        sim.step(1);
      }
      const s = sim.state();
      expect(s.solver.impacts).toBe(1);
      const dp = (i: number, mass: number, k: number) =>
        mass * (s.bodies[i].velocity[k] - before.bodies[i].velocity[k]) +
        (k === 2 ? mass * g * dt : 0);
      const hinge = s.joints[0].force;
      expect(s.contacts.length).toBe(1);
      const hit = s.contacts[0];
      expect(hit.bodies).toEqual(["bob", "ball"]);
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(hinge[k] * dt - (dp(0, M, k) + dp(1, m, k)))).toBeLessThan(1e-12);
        expect(Math.abs(hit.impulse[k] - dp(1, m, k))).toBeLessThan(1e-12);
      }
      expect(hinge[2] * dt).toBeGreaterThan(0.7);
      expect(
        Math.abs(hit.normalForce * dt - hit.impulse.reduce((a, p, k) => a + p * hit.normal[k], 0)),
      ).toBeLessThan(1e-12);
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

describe("impact events: a split step reports the step's totals", () => {
  // A cart (M = 1 kg sphere, r = 0.05 m) on a horizontal slider (prismatic along x, its
  // rotation held) at z = 0.5 m, struck by a ball (m = 0.3 kg, r = 0.05 m) dropped from
  // rest 0.3 m above it at x = −0.06 m (n = (−0.6, 0, 0.8), e = 1), and, 3 m away, a ball
  // (m_r = 2 kg) resting on the floor. On the impact's step, split at the impact, the
  // State's figures are the step's totals (impulses over the whole h), so that
  // M (v_{t+h} − v_t) = h f̄ + h Gᵀλ + Σ impulses closes: the slider's reported force on
  // the cart times h is the cart and ball's momentum change less gravity's, the contact's
  // impulse the ball's momentum change less gravity's, and the resting contact's impulse
  // m_r g h (normal force m_r g). Before: the slider's force was the last piece's (0.72 N s
  // of the impact's joint impulse missing) and the resting contact's impulse m_r g times
  // the last piece's length (0.063 of 0.098 N s at 5 ms, its normal force m_r g).
  const M = 1;
  const m = 0.3;
  const mr = 2;
  const struck = (dt: number) =>
    loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "cart",
          mass: M,
          position: [0, 0, 0.5],
          inertia: [0.001, 0.001, 0.001],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
        {
          id: "ball",
          mass: m,
          position: [-0.06, 0, 0.8],
          inertia: [0.0003, 0.0003, 0.0003],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
        {
          id: "rest",
          mass: mr,
          position: [3, 0, 0.1],
          inertia: [0.01, 0.01, 0.01],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      joints: [
        {
          id: "slide",
          type: "prismatic",
          a: { body: "ground", point: [0, 0, 0.5] },
          b: { body: "cart", point: [0, 0, 0] },
          axis: [1, 0, 0],
        },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt, theta: 0.5 },
    });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s: the slider's force, the impact's and the resting contact's impulses close the step's momentum balance`, () => {
      const sim = struck(dt);
      // the ball falls 0.2 m to the cart: the impact at t = 0.2019 s
      let before = sim.state();
      while (sim.state().solver.impacts === 0 && sim.time < 0.3) {
        before = sim.state();
        sim.step(1);
      }
      const s = sim.state();
      expect(s.solver.impacts).toBe(1);
      expect(s.solver.substeps).toBeGreaterThan(1);
      // Δp less gravity's impulse, body i, axis k (N s)
      const dp = (i: number, mass: number, k: number) =>
        mass * (s.bodies[i].velocity[k] - before.bodies[i].velocity[k]) +
        (k === 2 ? mass * g * dt : 0);
      const slide = s.joints[0].force;
      const hit = s.contacts.find((c) => c.bodies[1] === "ball");
      const resting = s.contacts.find((c) => c.bodies[0] === "rest");
      expect(hit).toBeDefined();
      expect(resting).toBeDefined();
      expect(s.contacts.length).toBe(2);
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(slide[k] * dt - (dp(0, M, k) + dp(1, m, k)))).toBeLessThan(1e-12);
        // (the contact's impulse on its body b, the ball)
        expect(Math.abs((hit?.impulse[k] ?? 0) - dp(1, m, k))).toBeLessThan(1e-12);
      }
      // the impact's vertical impulse went into the slider: 0.72 N s, not m_tot g h
      expect(slide[2] * dt).toBeGreaterThan(0.7);
      // (on the floor, body b: −m_r g h along z; the ball itself at rest)
      expect(Math.abs((resting?.impulse[2] ?? 0) + mr * g * dt)).toBeLessThan(1e-12);
      expect(Math.abs((resting?.normalForce ?? 0) - mr * g)).toBeLessThan(1e-9);
      expect(Math.abs(dp(2, mr, 2) + (resting?.impulse[2] ?? 0))).toBeLessThan(1e-12);
    });
});

describe("impact events: a split step's joint-limit effort is the step's", () => {
  // A cart (M = 1 kg sphere, r = 0.05 m) on a vertical slider (prismatic along z) resting
  // on its lower limit (restitution 0) under gravity, struck by a ball (m = 0.3 kg) dropped
  // 0.2 m above contact at x = −0.06 m (n = (−0.6, 0, 0.8)). The impact (the limit not in
  // its equations, impact-events.ts) drives the cart into its bound and the next piece's
  // limit impulse stops it, within the split step: along the slider's fixed axis the
  // cart's momentum change is −M g h + the limit's effort × h + the contact's impulse on
  // it, the limit's effort the step's mean (before: the last piece's, 0.40 N s of the
  // limit's impulse missing at 5 ms, 0.083 N s at 1/60 s).
  const M = 1;
  const m = 0.3;
  const cart = (dt: number) =>
    loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "cart",
          mass: M,
          position: [0, 0, 0.5],
          inertia: [0.001, 0.001, 0.001],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
        {
          id: "ball",
          mass: m,
          position: [-0.06, 0, 0.78],
          inertia: [0.0003, 0.0003, 0.0003],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
      ],
      joints: [
        {
          id: "lift",
          type: "prismatic",
          a: { body: "ground", point: [0, 0, 0.5] },
          b: { body: "cart", point: [0, 0, 0] },
          axis: [0, 0, 1],
          limits: { lower: 0, upper: 1, restitution: 0 },
        },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt, theta: 0.5 },
    });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s: the cart's momentum along the slider closes with the limit's effort over the step`, () => {
      const sim = cart(dt);
      let before = sim.state();
      while (sim.state().solver.impacts === 0 && sim.time < 0.4) {
        before = sim.state();
        sim.step(1);
      }
      const s = sim.state();
      expect(s.solver.impacts).toBe(1);
      // resting on the bound before: its effort M g
      expect(Math.abs(before.joints[0].limitEffort - M * g)).toBeLessThan(1e-9);
      const hit = s.contacts.find((c) => c.bodies[1] === "ball");
      expect(hit).toBeDefined();
      // (the contact's impulse on the cart, body a, is minus that on the ball)
      const onCart = -(hit?.impulse[2] ?? 0);
      const dp = M * (s.bodies[0].velocity[2] - before.bodies[0].velocity[2]);
      const effort = s.joints[0].limitEffort;
      expect(Math.abs(dp - (-M * g * dt + effort * dt + onCart))).toBeLessThan(1e-12);
      // the limit stopped the cart the impact pushed down: its impulse ≈ the impact's
      expect(effort * dt).toBeGreaterThan(0.5 * Math.abs(onCart));
    });
});

describe("impact events: a joint limit active at the impact is in its equations", () => {
  // A bob (M = 1 kg, r = 0.05 m) on a 0.5 m arm hinged along y at the origin, horizontal
  // at +x and resting on its bound (limits [lower, upper] = [−1, 0] rad from this pose,
  // restitution 0, no gravity), struck from above by a ball (m = 0.3 kg, r = 0.05 m) at
  // 2 m/s, off the bob's centre by −0.06 m along x: n = (−0.6, 0, 0.8) (bob to ball),
  // contact point c = (0.47, 0, 0.04). The impulse on the bob, −P n, turns it about y by
  // (c × (−n))_y P = 0.4 P > 0, into the bound (the coordinate's increasing side): with the
  // bound in Newton's law at the impact (its row beside the contact's, its own
  // restitution), the bob does not move and the ball rebounds from a fixed sphere,
  // v⁺ = v⁻ − 2 (v⁻·n) n = (−1.92, 0, 0.56) m/s at e = 1, its kinetic energy kept, the
  // limit's impulse 0.4 P = 0.4 · 2 m 1.6 = 0.384 N m s. Before: the impact turned the
  // bob as if free (the ball rebounding at the hinged bob's closed form) and the next
  // piece's limit impulse stopped it, its kinetic energy lost (e = 0).
  const m = 0.3;
  const struck = (dt: number) =>
    loadModel({
      gravity: [0, 0, 0],
      bodies: [
        {
          id: "bob",
          mass: 1,
          position: [0.5, 0, 0],
          inertia: [0.001, 0.001, 0.001],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
        {
          id: "ball",
          mass: m,
          position: [0.44, 0, 0.2],
          velocity: [0, 0, -2],
          inertia: [0.0003, 0.0003, 0.0003],
          shapes: [{ type: "sphere", radius: 0.05 }],
        },
      ],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "bob", point: [-0.5, 0, 0] },
          axis: [0, 1, 0],
          limits: { lower: -1, upper: 0, restitution: 0 },
        },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt, theta: 0.5 },
    });

  for (const dt of [0.005, 1 / 60])
    it(`h = ${dt.toPrecision(3)} s: the ball rebounds from the bob held by its bound, energy kept, the limit's impulse 0.4 P`, () => {
      const sim = struck(dt);
      const E0 = sim.state().energy.kinetic;
      let impulse = 0;
      // the ball meets the bob at t = 0.04 s; 0.2 s later it is gone
      for (let i = 0; i < Math.round(0.24 / dt); i++) {
        sim.step(1);
        impulse += sim.state().joints[0].limitEffort * dt;
      }
      const s = sim.state();
      const expected = [-1.92, 0, 0.56];
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(s.bodies[1].velocity[k] - expected[k])).toBeLessThan(1e-9);
        expect(Math.abs(s.bodies[0].velocity[k])).toBeLessThan(1e-9);
      }
      expect(Math.abs(s.bodies[0].angularVelocity[1])).toBeLessThan(1e-9);
      expect(Math.abs(s.energy.kinetic - E0)).toBeLessThan(1e-12);
      expect(Math.abs(Math.abs(impulse) - 0.4 * 2 * m * 1.6)).toBeLessThan(1e-9);
    });
});

/** Two runs' states equal bit for bit: every body's pose and rates, and the energy's error. */
function expectSameMotion(a: StateOut, b: StateOut): void {
  for (let i = 0; i < a.bodies.length; i++) {
    expect(a.bodies[i].position).toEqual(b.bodies[i].position);
    expect(a.bodies[i].orientation).toEqual(b.bodies[i].orientation);
    expect(a.bodies[i].velocity).toEqual(b.bodies[i].velocity);
    expect(a.bodies[i].angularVelocity).toEqual(b.bodies[i].angularVelocity);
  }
  expect(a.energy.error).toBe(b.energy.error);
}

describe("impact events: no second detection where no contact can be an event", () => {
  // A 4 × 4 grid of unjointed spheres on a smooth floor, every other one dropped from 0.3 m
  // at e = ½ (their impacts located in closed form, impact-location.ts: no body jointed
  // nor spinning, no pair with friction, so no event contact). `next` then detects nothing of its own; forced to
  // (mayHaveEvents true) it detects a second time a step, and the motion must be the same
  // bit for bit: the step's own detection makes the contact set from the state alone.
  const grid = () => {
    const bodies: unknown[] = [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
    ];
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 4; j++)
        bodies.push({
          id: `s${i}${j}`,
          mass: 1,
          inertia: [0.004, 0.004, 0.004],
          position: [0.25 * i, 0.25 * j, 0.1 + 0.3 * ((i + j) % 2)],
          shapes: [{ type: "sphere", radius: 0.1 }],
        });
    return loadModel({
      gravity: [0, 0, -g],
      bodies,
      contact: { method: "nsc", restitution: 0.5, friction: 0 },
      solver: { integrator: "moreau-jean", dt: 0.005 },
    } as ModelInput);
  };
  it("the grid's 400 steps (2 s, the dropped spheres bouncing to rest) bit for bit with and without the second detection; none made", () => {
    const detect = vi.spyOn(NonsmoothContact.prototype, "updateIndexSet");
    const skipped = grid();
    for (let k = 0; k < 400; k++) skipped.step(1);
    // one detection a step: the step's own
    expect(detect.mock.calls.length).toBe(400);
    const forced = vi
      .spyOn(ImpactEvents.prototype as unknown as { mayHaveEvents(): boolean }, "mayHaveEvents")
      .mockReturnValue(true);
    detect.mockClear();
    const twice = grid();
    for (let k = 0; k < 400; k++) twice.step(1);
    expect(detect.mock.calls.length).toBe(800);
    forced.mockRestore();
    detect.mockRestore();
    const a = skipped.state();
    const b = twice.state();
    // (the bounces happened: the dropped spheres rest after e^k decays, having moved)
    expect(a.bodies[2].position[2]).toBeLessThan(0.2);
    expectSameMotion(a, b);
  });
});

describe("impact events: no second detection while a jointed body's contacts are out of reach", () => {
  // Three pendulums (bobs m = 1 kg, spheres R = 0.1 m on 0.5 m arms hinged along y 0.59 m
  // above a floor, released level) and a free ball bouncing beside them, e = 1, 5 ms: a bob
  // reaches the floor 11.5° before the bottom (cos θ = 0.49/0.5) and rebounds, swinging
  // between level and there. The events' own detection each step (mayHaveEvents) is
  // needed only where a bob's contact may enter its index set; ContactClearance proves
  // the others out of reach from the bounding spheres, so they detect once, the step's
  // own: the motion is the same bit for bit with the detection forced at every step.
  const pendulums = () => loadModel(pendulumsOverFloor());
  it("10 s: the detections fall from 2 a step to 1.3, the bobs' impacts the same, the motion bit for bit", () => {
    const detect = vi.spyOn(NonsmoothContact.prototype, "updateIndexSet");
    const run = () => {
      detect.mockClear();
      const sim = pendulums();
      let impacts = 0;
      let lowest = Number.POSITIVE_INFINITY;
      for (let k = 0; k < 2000; k++) {
        sim.step(1);
        const s = sim.state();
        impacts += s.solver.impacts;
        for (let i = 1; i <= 3; i++) lowest = Math.min(lowest, s.bodies[i].position[2]);
      }
      return { sim, impacts, lowest, detections: detect.mock.calls.length };
    };
    const cleared = run();
    const forced = vi.spyOn(ContactClearance.prototype, "clear").mockReturnValue(false);
    const always = run();
    forced.mockRestore();
    detect.mockRestore();
    // every step detects twice when forced (the events' and the step's), the split ones more
    expect(always.detections).toBeGreaterThanOrEqual(4000);
    expect(cleared.detections).toBeLessThan(0.65 * always.detections);
    // the bobs hit the floor (each swing's impact at its instant), never through it
    expect(cleared.impacts).toBeGreaterThanOrEqual(30);
    expect(cleared.impacts).toBe(always.impacts);
    expect(cleared.lowest).toBeGreaterThan(0.1 - 1e-9);
    const a = cleared.sim.state();
    const b = always.sim.state();
    expectSameMotion(a, b);
  });
});

describe("impact events: a slowly spinning sphere's frictionless impacts are the closed form's", () => {
  // A sphere (R = 0.1 m, 1 kg, inertias 0.004, 0.005, 0.006 kg m²) spinning at 0.05 rad/s
  // about x, its contact point moving at 5e-3 m/s about its centre (> V_EPS = 1e-6 m/s:
  // `turning`), dropped from H = 0.5 m (centre at 0.6 m) onto a frictionless floor at
  // e = 0.9, 5 ms. The floor's normal passes through the centre, so the turn enters neither
  // the gap nor the impulse (ImpactEvents.slowRound): the centre bounces as a point, the
  // first impact at t₁ = √(2H/g) at v₁ = √(2 g H), the k-th rebound at e^k v₁ and the
  // next impact 2 e^k v₁/g later, ω kept. Left to impact-location.ts' closed form it
  // detects once a step; as events (the slowRound answer forced false) the events' own
  // detection is added at the steps near the floor (ContactClearance), 1113 in 1000 steps.
  const H = 0.5;
  const R = 0.1;
  const e = 0.9;
  const dt = 0.005;
  const steps = 1000;
  const ball = () =>
    loadModel({
      gravity: [0, 0, -g],
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
        {
          id: "ball",
          mass: 1,
          inertia: [0.004, 0.005, 0.006],
          position: [0, 0, R + H],
          angularVelocity: [0.05, 0, 0],
          shapes: [{ type: "sphere", radius: R }],
        },
      ],
      contact: { method: "nsc", restitution: e, friction: 0 },
      solver: { integrator: "moreau-jean", dt },
    } as ModelInput);
  /** The centre's height and vertical velocity at time t (the bounces written out). */
  const exact = (t: number): [number, number] => {
    let t0 = Math.sqrt((2 * H) / g);
    if (t < t0) return [R + H - 0.5 * g * t * t, -g * t];
    let v = e * Math.sqrt(2 * g * H);
    while (t >= t0 + (2 * v) / g) {
      t0 += (2 * v) / g;
      v *= e;
    }
    const s = t - t0;
    return [R + v * s - 0.5 * g * s * s, v - g * s];
  };
  const run = () => {
    const detect = vi.spyOn(NonsmoothContact.prototype, "updateIndexSet");
    const sim = ball();
    const path: StateOut[] = [];
    let impacts = 0;
    for (let k = 0; k < steps; k++) {
      sim.step(1);
      path.push(sim.state());
      impacts += sim.lastStepStats.impacts;
    }
    const detections = detect.mock.calls.length;
    detect.mockRestore();
    return { path, impacts, detections };
  };
  it("5 s, 16 bounces: one detection a step, the centre on the bounces written out to 1e-12, ω kept, the events' path to 1e-12 (the turn to its Cayley lag)", () => {
    const located = run();
    const forced = vi
      .spyOn(ImpactEvents.prototype as unknown as { slowRound(): boolean }, "slowRound")
      .mockReturnValue(false);
    const events = run();
    forced.mockRestore();
    // the events split the impact steps and detect twice a step; the closed form once
    expect(events.impacts).toBeGreaterThanOrEqual(16);
    expect(located.impacts).toBe(0);
    expect(located.detections).toBe(steps);
    expect(events.detections).toBeGreaterThan(1.1 * steps);
    let bounces = 0;
    for (let k = 0; k < steps; k++) {
      const a = located.path[k].bodies[1];
      const b = events.path[k].bodies[1];
      const [z, vz] = exact((k + 1) * dt);
      if (k > 0 && located.path[k - 1].bodies[1].velocity[2] < 0 && a.velocity[2] > 0) bounces++;
      expect(Math.abs(a.position[2] - z)).toBeLessThan(1e-12);
      expect(Math.abs(a.velocity[2] - vz)).toBeLessThan(1e-12);
      expect(a.angularVelocity).toEqual([0.05, 0, 0]);
      for (let c = 0; c < 3; c++) {
        expect(Math.abs(a.position[c] - b.position[c])).toBeLessThan(1e-12);
        expect(Math.abs(a.velocity[c] - b.velocity[c])).toBeLessThan(1e-12);
        expect(Math.abs(a.angularVelocity[c] - b.angularVelocity[c])).toBeLessThan(1e-12);
      }
      // the turn: the Cayley turn 2 atan(½ h ω) of the smooth steps falls behind h ω by
      // (h ω)³/12 a step (1.3e-12 rad) on both paths; the bounce steps of the closed form
      // take the trapezoid's exact turn (moreau-jean.ts holdTrapezoidTurns), the events'
      // split steps Cayley's: the two apart by at most that a bounce step
      const turn = 0.05 * (k + 1) * dt;
      const lagA = turn - 2 * Math.atan2(a.orientation[1], a.orientation[0]);
      const lagB = turn - 2 * Math.atan2(b.orientation[1], b.orientation[0]);
      expect(lagA).toBeGreaterThanOrEqual(0);
      expect(lagA).toBeLessThanOrEqual(lagB + 1e-15);
      expect(lagB).toBeLessThan(((k + 1) * (0.05 * dt) ** 3) / 12 + 1e-15);
      for (let c = 0; c < 4; c++)
        expect(Math.abs(a.orientation[c] - b.orientation[c])).toBeLessThan(
          (20 * (0.05 * dt) ** 3) / 12,
        );
    }
    expect(bounces).toBeGreaterThanOrEqual(16);
  });
});

describe("impact events: no second detection for a chain's links resting or sliding on the floor", () => {
  // A 6-link chain of boxes (0.1 × 0.02 × 0.02 m, 0.1 kg, spherical joints) hinged 0.35 m
  // above a floor at e = 0, μ = 0.5, released level (1/240 s): it swings down, its links
  // strike the floor (impacts at their instants) and come to lie and slide on it. The
  // events' own detection is needed only where a link's contact may approach faster than
  // V_EPS; ContactClearance proves the others out of reach from each box's distance to the
  // floor, Σ h_k |n·a_k| below its centre, or slow, no point of a link moving along the
  // floor's normal faster than V_EPS/2 (|n·v| + |n × ω| ρ): a link resting, or sliding and
  // turning flat on the floor — the latter only where no contact of the pair can be timed
  // "from rest" (ImpactEvents.quiet): a link lying flat, its bottom corners within the
  // activation band, its top ones 0.02 m up, beyond the pull's ½ B h² ≈ 1e-4 m (gravity
  // and the joints' angular part, the joints held). The motion is the same bit for bit with
  // the detection forced; 1.21 detections a step where it was 2.01 while the slow pairs held
  // only within the accelerations' reach (none under gravity).
  const chain = () => chainOnFloor(0);
  it("3 s: the links' impacts and the motion bit for bit with the detection forced", () => {
    const steps = 720;
    const detect = vi.spyOn(NonsmoothContact.prototype, "updateIndexSet");
    const run = () => {
      detect.mockClear();
      const sim = chain();
      let impacts = 0;
      let lowest = Number.POSITIVE_INFINITY;
      for (let k = 0; k < steps; k++) {
        sim.step(1);
        const s = sim.state();
        impacts += s.solver.impacts;
        for (let i = 0; i < 6; i++) lowest = Math.min(lowest, s.bodies[i].position[2]);
      }
      return { sim, impacts, lowest, detections: detect.mock.calls.length };
    };
    const cleared = run();
    const forced = vi.spyOn(ContactClearance.prototype, "clear").mockReturnValue(false);
    const always = run();
    forced.mockRestore();
    detect.mockRestore();
    expect(always.detections).toBeGreaterThanOrEqual(2 * steps);
    expect(cleared.detections).toBeLessThanOrEqual(always.detections);
    // (1.221 a step, 1.207 before cc111c4's leaving contacts, 2.093 forced then; 2.008 while
    // the slow pairs held only within the accelerations' reach, none under gravity)
    expect(cleared.detections).toBeLessThan(1.3 * steps);
    // the links struck the floor and lie on it (their centres 0.01 m above it, to the
    // projection's tolerance)
    expect(cleared.impacts).toBeGreaterThanOrEqual(10);
    expect(cleared.impacts).toBe(always.impacts);
    expect(cleared.lowest).toBeGreaterThan(-0.35 + 0.01 - 1e-4);
    expect(cleared.lowest).toBeLessThan(-0.35 + 0.01 + 1e-4);
    expectSameMotion(cleared.sim.state(), always.sim.state());
  });
});

/**
 * The 6-link chain of boxes of bench/impacts.ts (0.1 × 0.02 × 0.02 m, 0.1 kg, spherical
 * joints) hinged 0.35 m above a floor at restitution e, μ = 0.5, released level (Moreau–Jean
 * θ = ½, at dt: 1/240 s unless given).
 */
const chainOnFloor = (restitution: number, dt = 1 / 240) =>
  loadModel(benchChainOnFloor(dt, restitution));

describe("impact events: an impact takes the contacts touching its mechanism, through the joints", () => {
  // The chain above at e = ½: its links strike the floor and each other and come to lie on
  // the floor. An impact of one link's corners turns its neighbours through the spherical
  // joints (Δv = P M⁻¹ Hᵀ P, P the projection onto the joints' tangent, which spreads over
  // the bodies they join), so the contacts touching those neighbours (gap ≤ 2 ε_act) are
  // in its law, w = u⁺ + e min(u⁻, 0) ≥ 0 ⊥ P ≥ 0, as those touching the struck link are:
  // after it no touching contact approaches. Reached through shared bodies alone, link 4's
  // impact on the floor left links 3 and 5's touching contacts approaching (3e-5 m/s), each
  // then met by an impact of its own, which left link 4's approaching again: the contact
  // clusters of one mechanism alternating, 4 to 6 impacts an instant, and step 317 of the
  // 720 met MAX_EVENTS (16), its rest taken whole (impactsResolved false).
  //
  // At 1/100 s too, whose count of impacts in 5 s the smooth steps' error control moved
  // (their tolerance scaled to the links' body length, 3.1e-5 m, from 3e-4 m: 1406 → 506,
  // now 463): the 1406 were inflated by a link chattering on its edges, 14 steps meeting
  // MAX_EVENTS and taking the rest whole (impactsResolved false), none now. The count is
  // the chain's rocking on the floor, not itself a figure of the physics, which is each
  // impact's law and the energy.
  // Newton's law at each impact, checked per contact against the velocities before and
  // after it: a contact the impact pushes (impulse P > 0, NonsmoothContact.addImpact)
  // leaves at most at e times its approach speed, 0 ≤ u⁺ ≤ e max(−u⁻, 0) (at e exactly
  // for a rebound the steps resolve, 0 where the applied forces' pull would take a
  // rebound back within the step: impact-events.ts rowRestitution), to the law's residual.
  for (const { dt, steps, impactsAbove, balance, rest } of [
    // (878 impacts; the balance within 1.4e-3 J, the θ-scheme's error of the swing; at
    // rest at the end, 2.9e-6 J)
    { dt: 1 / 240, steps: 1200, impactsAbove: 100, balance: 2e-3, rest: 1e-4 },
    // (463 impacts; the balance within 3.8e-3 J; a link still rocking at the end, 1.3e-4 J)
    { dt: 1 / 100, steps: 500, impactsAbove: 100, balance: 5e-3, rest: 5e-4 },
  ])
    it(`5 s at 1/${Math.round(1 / dt)} s: every step's impacts resolved, each leaving no touching contact approaching and no pushed one faster than e its approach, dissipating, the balance closed`, () => {
      const sim = chainOnFloor(0.5, dt);
      const proto = ImpactEvents.prototype as unknown as {
        impact(this: ImpactEvents, t: number, h: number): void;
      };
      const original = proto.impact;
      const touchingRates = new Float64Array(64);
      const approach = new Float64Array(64);
      const pushed: number[] = [];
      let calls = 0;
      let lowestRate = Number.POSITIVE_INFINITY;
      let fastestRebound = Number.NEGATIVE_INFINITY;
      let rebounds = 0;
      let largestGain = Number.NEGATIVE_INFINITY;
      let lost = 0;
      const addOriginal = NonsmoothContact.prototype.addImpact;
      NonsmoothContact.prototype.addImpact = function (this: NonsmoothContact, i, p, t1, t2) {
        pushed.push(i);
        addOriginal.call(this, i, p, t1, t2);
      };
      proto.impact = function (this: ImpactEvents, t: number, h: number) {
        const inner = this as unknown as {
          sys: BodySystem;
          contact: NonsmoothContact;
          residual: number;
        };
        const set = inner.contact.set;
        set.normalVelocities(approach, 0, set.count);
        pushed.length = 0;
        const before = kineticEnergy(inner.sys);
        original.call(this, t, h);
        const after = kineticEnergy(inner.sys);
        calls++;
        largestGain = Math.max(largestGain, (after - before) / before);
        lost += before - after;
        // (every link is of the one mechanism: every touching contact is the impact's; its
        // law's residual, m/s, where the frictional solve stopped short: stats.contactResidual)
        set.normalVelocities(touchingRates, 0, set.count);
        for (let i = 0; i < set.count; i++)
          if (set.gap[i] <= 2 * ACTIVATION_TOLERANCE)
            lowestRate = Math.min(lowestRate, touchingRates[i] + inner.residual);
        for (const i of pushed) {
          // u⁺ − e max(−u⁻, 0): ≤ 0 by the law (m/s)
          const excess = touchingRates[i] - set.restitution[i] * Math.max(-approach[i], 0);
          fastestRebound = Math.max(fastestRebound, excess - inner.residual);
          if (touchingRates[i] > 1e-3) rebounds++;
        }
      };
      let unresolved = 0;
      let most = 0;
      let impacts = 0;
      let worstError = 0;
      try {
        for (let k = 0; k < steps; k++) {
          sim.step(1);
          const s = sim.state();
          if (!s.solver.impactsResolved) unresolved++;
          most = Math.max(most, s.solver.impacts);
          impacts += s.solver.impacts;
          worstError = Math.max(worstError, Math.abs(s.energy.error));
        }
      } finally {
        proto.impact = original;
        NonsmoothContact.prototype.addImpact = addOriginal;
      }
      const { energy } = sim.state();
      // (before: step 317 unresolved at 1/240 s, 16 impacts in it; now 9 at most, a link
      // rocking between its edges within the activation band, each edge's return an impact)
      expect(unresolved).toBe(0);
      expect(most).toBeLessThan(MAX_EVENTS);
      expect(impacts).toBe(calls);
      expect(impacts).toBeGreaterThan(impactsAbove);
      // after each impact no touching contact approaches beyond its law's residual (3 of the
      // 976 impacts' Gauss–Seidel stopped short at 1/240 s, at 3.4e-8 to 5.6e-8 m/s), to
      // rounding (before: −3.3e-5 m/s)
      expect(lowestRate).toBeGreaterThan(-1e-10);
      // and none the impacts push leaves faster than e times its approach, to the solves'
      // rounding (8.6e-15 m/s at 1/240 s, 1.9e-10 m/s at 1/100 s); some rebound
      expect(fastestRebound).toBeLessThan(1e-9);
      expect(rebounds).toBeGreaterThan(0);
      // the impacts at e = ½ dissipate, each to the kinetic energy's rounding
      expect(largestGain).toBeLessThan(1e-12);
      expect(lost).toBeGreaterThan(0);
      // the balance E + dissipated = E₀ (= 0) within `balance` of the 1.38 J lost, lying on
      // the floor at the end
      expect(worstError).toBeLessThan(balance);
      expect(energy.dissipated).toBeGreaterThan(1.3);
      expect(energy.kinetic).toBeLessThan(rest);
      report(`chain on floor e = 0.5 at 1/${Math.round(1 / dt)} s`, {
        impacts,
        lowestRate,
        fastestRebound,
        rebounds,
        worstError,
      });
      // (1200 steps of a 6-link chain with its impacts: 41 s alone on the shared 2 cores)
    }, 180_000);
});
