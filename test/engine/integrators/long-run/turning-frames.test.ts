/**
 * Bodies carried by a frame that turns freely about the vertical, 60 s at the default step
 * (5 ms), under each integrator that holds joints: what the frame's turning couples
 * (centrifugal, Coriolis and gyroscopic forces carried by the joints) must neither drain nor
 * feed the motion. Each against an independent number: RK4 on the reduced equations (the
 * Lagrangian in the joint coordinates) and the conservation of energy and of the angular
 * momentum about the axis, L_z, both computed here from the body states.
 *
 * Rotating hinge frame: a frame (I_f = 0.05 kg·m² about z) hinged to the ground about z
 * carries, on its own x axis at the turning axis, a hinged thin rod (m = 1 kg, L = 0.5 m, at
 * θ from the downward vertical). With A = m L²/3 about the hinge and a = 1e-4 kg·m² along
 * the rod, I_z(θ) = I_f + A sin²θ + a cos²θ, L_z = I_z(θ) φ̇ is constant and
 *   A θ̈ = (A − a) sin θ cos θ φ̇² − m g (L/2) sin θ,  φ̇ = L_z / I_z(θ).
 * Started at θ = 0.8 rad, φ̇ = 5 rad/s, it swings out and back, the frame's rate following.
 * Measured: energy 3.7e-5 J (symplectic Euler 4.8e-3 J, articulated 4e-11), L_z to 1e-10,
 * θ 6.9e-3 rad from RK4 (symplectic Euler 0.011; growing as a phase error; articulated 2e-9).
 *
 * Coriolis slot: an arm (I = 0.2 kg·m² about z) hinged to the ground about z, a 1 kg bead on
 * a prismatic slot along it, pulled to the hub by a spring (k = 50 N/m, rest r0 = 0.5 m).
 * L_z = (I_a + I_b + m r²) φ̇ is constant and m r̈ = m r φ̇² − k (r − r0); the slot's force
 * across the arm is m (r φ̈ + 2 ṙ φ̇) (Euler and Coriolis), φ̈ = −2 m r ṙ φ̇ / (I + m r²).
 * Started at r0 moving out at 0.5 m/s, φ̇ = 2 rad/s. Measured: r 3.1e-3 m from RK4 (symplectic
 * Euler 1.9e-3, articulated 1e-10), energy 5e-5 J (symplectic Euler 4.8e-3), L_z 3e-5 (the
 * spring's pull is not exactly central in their steps; symplectic Euler and articulated
 * 2e-11), the slot force 7e-15 N from the formula at the engine's own r, ṙ, φ̇.
 *
 * Wheel on a turning platform: a frame turning at 2 rad/s carries, 0.5 m out, a wheel
 * spinning at 100 rad/s (h ω = 0.5) on an axle along the frame's y. The wheel is symmetric
 * about its axle (I_xx = I_zz), so nothing couples the two rates: both are constant. Measured
 * over 30 s: the frame's rate 4e-9 rad/s off (articulated and symplectic Euler 3e-13), the
 * wheel's 3e-9 rad/s. (Newmark, now at its defaults generalized-alpha's steps: newmark.ts
 * `alphaForm`, braked the platform to 1.32 rad/s by 30 s with its velocity-level joints, and
 * its hinge frame's energy drifted by 4.4e-4 J in 60 s.)
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import {
  axisAngle,
  cross,
  type MassProperties,
  mechanicalEnergy,
  Rk4,
  report,
  type Vec3,
  verticalMomentum,
} from "./helpers";
import { G } from "./models";

const INTEGRATORS = [
  "moreau-jean",
  "generalized-alpha",
  "newmark",
  "symplectic-euler",
  "articulated",
] as const;
const SECONDS = 60;

/** The default step (s), which the models keep. */
const H = 0.005;
/** RK4's step (s): H / 100, its error far below the engine's. */
const RK_STEP = H / 100;

type State = ReturnType<ReturnType<typeof loadModel>["state"]>;

/** Steps a model `seconds` at its default step, calling `each` with the start's state (n = 0) and every step's. */
function runModel(
  json: Record<string, unknown>,
  seconds: number,
  each: (s: State, n: number) => void,
): void {
  const sim = loadModel(json);
  expect(sim.solver.dt).toBe(H);
  each(sim.state(), 0);
  const steps = Math.round(seconds / H);
  for (let n = 1; n <= steps; n++) {
    sim.step(1);
    each(sim.state(), n);
  }
}

describe("a rotating hinge frame for 60 s at the default step: energy, L_z and the swing against RK4", () => {
  const m = 1;
  const L = 0.5;
  const If = 0.05;
  const Ic = (m * L * L) / 12;
  const a = 1e-4;
  const A = Ic + (m * L * L) / 4;
  const theta0 = 0.8;
  const rate0 = 5;
  const Iz = (t: number) => If + A * Math.sin(t) ** 2 + a * Math.cos(t) ** 2;
  const Lz = Iz(theta0) * rate0;
  const props: Record<string, MassProperties> = {
    frame: { mass: 1, inertia: [If, If, If] },
    rod: { mass: m, inertia: [Ic, Ic, a] },
  };
  // the rod along its body z, hanging at θ: turned by θ about x, COM at (L/2)(0, sin θ, −cos θ)
  const com: Vec3 = [0, (L / 2) * Math.sin(theta0), (-L / 2) * Math.cos(theta0)];
  const w: Vec3 = [0, 0, rate0];
  const model = (integrator: string) => ({
    gravity: [0, 0, -G],
    bodies: [
      { id: "frame", mass: 1, inertia: [If, If, If], angularVelocity: w },
      {
        id: "rod",
        mass: m,
        inertia: [Ic, Ic, a],
        position: com,
        orientation: axisAngle([1, 0, 0], theta0),
        velocity: cross(w, com),
        angularVelocity: w,
      },
    ],
    joints: [
      {
        id: "spin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "frame" },
        axis: [0, 0, 1],
      },
      {
        id: "tilt",
        type: "revolute",
        a: { body: "frame", point: [0, 0, 0] },
        b: { body: "rod", point: [0, 0, L / 2] },
        axis: [1, 0, 0],
      },
    ],
    solver: { integrator },
  });
  /** integrator; bounds on |ΔE| (J), |ΔL_z| (kg·m²/s), |θ − θ_RK4| (rad) */
  const bounds: Record<(typeof INTEGRATORS)[number], [number, number, number]> = {
    "moreau-jean": [2e-4, 1e-8, 0.03],
    "generalized-alpha": [2e-4, 1e-8, 0.03],
    newmark: [2e-4, 1e-8, 0.03],
    "symplectic-euler": [0.02, 1e-8, 0.03],
    articulated: [1e-8, 1e-8, 1e-6],
  };
  for (const integrator of INTEGRATORS)
    it(integrator, () => {
      const rk = new Rk4(
        (_t, y, dy) => {
          const rate = Lz / Iz(y[0]);
          dy[0] = y[1];
          dy[1] =
            ((A - a) * Math.sin(y[0]) * Math.cos(y[0]) * rate * rate -
              m * G * (L / 2) * Math.sin(y[0])) /
            A;
        },
        [theta0, 0],
      );
      let E0 = 0;
      let energy = 0;
      let momentum = 0;
      let angle = 0;
      runModel(model(integrator), SECONDS, (s, n) => {
        const E = mechanicalEnergy(s.bodies, props, G).total;
        if (n === 0) E0 = E;
        energy = Math.max(energy, Math.abs(E - E0));
        momentum = Math.max(momentum, Math.abs(verticalMomentum(s.bodies, props) - Lz));
        if (n > 0) rk.advance(RK_STEP, 100);
        angle = Math.max(angle, Math.abs(theta0 + s.joints[1].coordinates[0] - rk.y[0]));
      });
      report(`hinge frame ${integrator}`, { energy, momentum, angle });
      const [eb, lb, ab] = bounds[integrator];
      expect(energy).toBeLessThan(eb);
      expect(momentum).toBeLessThan(lb);
      expect(angle).toBeLessThan(ab);
    });
});

describe("a bead on a spring in a slot of a freely turning arm for 60 s at the default step: L_z, energy, r against RK4, the Coriolis force", () => {
  const m = 1;
  const k = 50;
  const r0 = 0.5;
  const Ia = 0.2;
  const Ib = 1e-3;
  const rate0 = 2;
  const outward = 0.5;
  const I = Ia + Ib;
  const Lz = (I + m * r0 * r0) * rate0;
  const props: Record<string, MassProperties> = {
    arm: { mass: 2, inertia: [0.01, Ia, Ia] },
    bead: { mass: m, inertia: [Ib, Ib, Ib] },
  };
  const model = (integrator: string) => ({
    gravity: [0, 0, 0],
    bodies: [
      { id: "arm", mass: 2, inertia: [0.01, Ia, Ia], angularVelocity: [0, 0, rate0] },
      {
        id: "bead",
        mass: m,
        inertia: [Ib, Ib, Ib],
        position: [r0, 0, 0],
        velocity: [outward, rate0 * r0, 0],
        angularVelocity: [0, 0, rate0],
      },
    ],
    joints: [
      { id: "hinge", type: "revolute", a: { body: "ground" }, b: { body: "arm" }, axis: [0, 0, 1] },
      { id: "slot", type: "prismatic", a: { body: "arm" }, b: { body: "bead" }, axis: [1, 0, 0] },
    ],
    forces: [
      {
        id: "spring",
        type: "spring",
        a: { body: "arm" },
        b: { body: "bead" },
        stiffness: k,
        restLength: r0,
      },
    ],
    solver: { integrator },
  });
  /** The slot's force across the arm (N) at r, ṙ, φ̇: m (r φ̈ + 2 ṙ φ̇), L_z constant. */
  const across = (r: number, dr: number, rate: number) =>
    m * (r * ((-2 * m * r * dr * rate) / (I + m * r * r)) + 2 * dr * rate);
  /** integrator; bounds on |ΔE| (J), |ΔL_z|, |r − r_RK4| (m) */
  const bounds: Record<(typeof INTEGRATORS)[number], [number, number, number]> = {
    "moreau-jean": [5e-4, 1e-4, 0.01],
    "generalized-alpha": [5e-4, 1e-4, 0.01],
    newmark: [5e-4, 1e-4, 0.01],
    "symplectic-euler": [0.02, 1e-8, 0.01],
    articulated: [1e-8, 1e-8, 1e-6],
  };
  for (const integrator of INTEGRATORS)
    it(integrator, () => {
      const rk = new Rk4(
        (_t, y, dy) => {
          const rate = Lz / (I + m * y[0] * y[0]);
          dy[0] = y[1];
          dy[1] = y[0] * rate * rate - (k / m) * (y[0] - r0);
        },
        [r0, outward],
      );
      let E0 = 0;
      let energy = 0;
      let momentum = 0;
      let radius = 0;
      let force = 0;
      let largest = 0;
      runModel(model(integrator), SECONDS, (s, n) => {
        const bead = s.bodies[1];
        const r = Math.hypot(bead.position[0], bead.position[1]);
        const E = mechanicalEnergy(s.bodies, props, 0).total + 0.5 * k * (r - r0) ** 2;
        if (n === 0) E0 = E;
        energy = Math.max(energy, Math.abs(E - E0));
        momentum = Math.max(momentum, Math.abs(verticalMomentum(s.bodies, props) - Lz));
        if (n === 0) return;
        rk.advance(RK_STEP, 100);
        radius = Math.max(radius, Math.abs(r - rk.y[0]));
        // the slot's force across the arm against the formula at the engine's own r, ṙ, φ̇
        const ux = bead.position[0] / r;
        const uy = bead.position[1] / r;
        const dr = ux * bead.velocity[0] + uy * bead.velocity[1];
        const f = s.joints[1].force;
        const expected = across(r, dr, s.bodies[0].angularVelocity[2]);
        largest = Math.max(largest, Math.abs(expected));
        force = Math.max(force, Math.abs(-uy * f[0] + ux * f[1] - expected));
      });
      report(`coriolis slot ${integrator}`, { energy, momentum, radius, force, largest });
      const [eb, lb, rb] = bounds[integrator];
      expect(largest).toBeGreaterThan(0.5);
      expect(energy).toBeLessThan(eb);
      expect(momentum).toBeLessThan(lb);
      expect(radius).toBeLessThan(rb);
      expect(force).toBeLessThan(1e-6);
    });
});

describe("a wheel spinning at 100 rad/s on the axle of a freely turning platform for 30 s at the default step", () => {
  const spin = 100;
  const turn = 2;
  const model = (integrator: string) => ({
    gravity: [0, 0, 0],
    bodies: [
      { id: "frame", mass: 1, inertia: [0.1, 0.1, 0.1], angularVelocity: [0, 0, turn] },
      {
        id: "wheel",
        mass: 1,
        inertia: [0.01, 0.02, 0.01],
        position: [0.5, 0, 0],
        velocity: [0, turn * 0.5, 0],
        angularVelocity: [0, spin, turn],
      },
    ],
    joints: [
      {
        id: "base",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "frame" },
        axis: [0, 0, 1],
      },
      {
        id: "axle",
        type: "revolute",
        a: { body: "frame", point: [0.5, 0, 0] },
        b: { body: "wheel", point: [0, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    solver: { integrator },
  });
  for (const integrator of INTEGRATORS)
    it(`${integrator}: the platform's and the wheel's rates constant`, () => {
      let platform = 0;
      let wheel = 0;
      runModel(model(integrator), 30, (s) => {
        platform = Math.max(platform, Math.abs(s.joints[0].rates[0] - turn));
        wheel = Math.max(wheel, Math.abs(s.joints[1].rates[0] - spin));
      });
      report(`wheel on a platform ${integrator}`, { platform, wheel });
      expect(platform).toBeLessThan(1e-6);
      expect(wheel).toBeLessThan(1e-6);
    });
});
