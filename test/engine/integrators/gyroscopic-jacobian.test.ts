/**
 * solver.gyroscopicJacobian: the gyroscopic torque with and without its Jacobians in the
 * iteration matrix (src/engine/forces/gyroscopic.ts).
 *
 * Conical physical pendulum (closed form): a rigid body pivoted by a spherical joint at a
 * point of its symmetry axis, distance d from its centre of mass, turning steadily at Ω
 * about the vertical with its axis e_a at angle θ from the downward vertical. With
 * I_a, I_t its axial and transverse inertias about the centre of mass and I_P = I_t + m d²,
 * the angular momentum about the pivot is L = Ω (−cos θ I_a e_a + sin θ I_P e_p)
 * (e_p ⟂ e_a in the vertical plane), and dL/dt = Ω ẑ × L = Ω² sin θ cos θ (I_P − I_a) ŷ
 * must equal gravity's torque m g d sin θ ŷ:
 *     Ω² = m g d / (cos θ (I_P − I_a)).
 * The body spins about its own axis (ω·e_a = −Ω cos θ), so the gyroscopic torque is part
 * of the balance: without it the cone would turn at √(m g d / (cos θ I_P)), 4 % slower here.
 */
import { describe, expect, it } from "vitest";
import { SchemeCoefficients } from "../../../src/engine/dynamics/stepper";
import { createForceEffectors } from "../../../src/engine/forces/build";
import { GyroscopicEffector } from "../../../src/engine/forces/gyroscopic";
import { loadModel } from "../../../src/engine/index";
import { AccelerationStepper } from "../../../src/engine/integrators/acceleration-step";

const m = 2;
const half: [number, number, number] = [0.5, 0.2, 0.2]; // box half extents (m)
const d = half[0]; // pivot at the end of the axis
const g = 9.81;
const theta = Math.PI / 4;
const Ia = (m * ((2 * half[1]) ** 2 + (2 * half[2]) ** 2)) / 12;
const It = (m * ((2 * half[0]) ** 2 + (2 * half[1]) ** 2)) / 12;
const IP = It + m * d * d;
const Omega = Math.sqrt((m * g * d) / (Math.cos(theta) * (IP - Ia)));

/** The body's axis e_a = R x̂ from its orientation quaternion (w, x, y, z). */
function axis(q: readonly number[]): number[] {
  const [w, x, y, z] = q;
  return [1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)];
}

function conicalModel(gyroscopicJacobian: boolean, dt = 1e-3) {
  // R = rotation about y by α = π/2 − θ maps x̂ to e_a = (sin θ, 0, −cos θ)
  const alpha = Math.PI / 2 - theta;
  const ea = [Math.sin(theta), 0, -Math.cos(theta)];
  return {
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "top",
        mass: m,
        position: ea.map((c) => d * c),
        orientation: [Math.cos(alpha / 2), 0, Math.sin(alpha / 2), 0],
        // v = Ω ẑ × d e_a
        velocity: [0, Omega * d * Math.sin(theta), 0],
        angularVelocity: [0, 0, Omega],
        shapes: [{ type: "box", halfExtents: half }],
      },
    ],
    joints: [
      {
        id: "pivot",
        type: "spherical",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "top", point: [-d, 0, 0] },
      },
    ],
    solver: { integrator: "newmark", dt, beta: 0.25, gamma: 0.5, gyroscopicJacobian },
  };
}

describe("conical physical pendulum, Newmark (1/4, 1/2), h = 1 ms, 2 s", () => {
  for (const jacobian of [true, false])
    it(`gyroscopicJacobian ${jacobian}: keeps the cone angle and turns at the closed-form Ω`, () => {
      const sim = loadModel(conicalModel(jacobian));
      const steps = 2000;
      let unwrapped = 0;
      let previous = 0;
      let tilt = 0;
      for (let n = 1; n <= steps; n++) {
        sim.step(1);
        const e = axis(sim.state().bodies[0].orientation);
        tilt = Math.max(tilt, Math.abs(Math.acos(-e[2]) - theta));
        const azimuth = Math.atan2(e[1], e[0]);
        let delta = azimuth - previous;
        if (delta > Math.PI) delta -= 2 * Math.PI;
        if (delta < -Math.PI) delta += 2 * Math.PI;
        unwrapped += delta;
        previous = azimuth;
      }
      const t = steps * 1e-3;
      expect(tilt).toBeLessThan(1e-4);
      // Ω t ≈ 10 rad, reached to ~1e-5 rad; with the gyroscopic torque left out of the
      // forces altogether the azimuth ends 0.73 rad off and the cone angle 0.09 rad
      expect(Math.abs(unwrapped - Omega * t)).toBeLessThan(1e-3);
    });
});

describe("solver.gyroscopicJacobian", () => {
  it("false makes the iteration matrix the mass matrix (no other Jacobians), true does not", () => {
    const sim = loadModel(conicalModel(true));
    const sys = sim.system;
    const { effectors } = createForceEffectors([], sys, [0, 0, -g], false);
    const stepper = new AccelerationStepper(sys, effectors, "auto", null);
    const c = new SchemeCoefficients();
    c.cx = 1e-6;
    c.cv = 1e-3;
    c.w = 1;
    expect(stepper.usesMassOnly(c)).toBe(true);
    const gyroscopic = effectors.find((e) => e instanceof GyroscopicEffector);
    if (gyroscopic === undefined) throw new Error("no gyroscopic effector");
    gyroscopic.jacobians = true;
    stepper.effectorsChanged();
    expect(stepper.usesMassOnly(c)).toBe(false);
  });

  // a flat asymmetric body (inertias 2, 4, 6) spun at 7 rad/s near its
  // middle axis, one linearized Newmark step of h = 0.05 s (h ω = 0.35), for 20 s
  const free = (gyroscopicJacobian: boolean) =>
    loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "racket", mass: 1, inertia: [2, 4, 6], angularVelocity: [0, 7, 0.5] }],
      solver: { integrator: "newmark", dt: 0.05, gyroscopicJacobian, newtonIterations: 1 },
    });

  it("without the Jacobians a fast-spinning asymmetric body diverges where it stays bounded with them", () => {
    const implicit = free(true);
    const e0 = implicit.state().energy.kinetic;
    implicit.step(400);
    expect(implicit.state().energy.kinetic / e0).toBeLessThan(2);
    expect(() => free(false).step(400)).toThrow(/diverged/);
  });

  it("a solver patch puts the Jacobians back: the same body then stays bounded", () => {
    const sim = free(false);
    const e0 = sim.state().energy.kinetic;
    sim.update({ solver: { gyroscopicJacobian: true } });
    sim.step(400);
    expect(sim.state().energy.kinetic / e0).toBeLessThan(2);
  });
});
