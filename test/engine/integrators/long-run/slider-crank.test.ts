/**
 * The planar slider-crank of test/engine/analysis/slider-crank-fixture.ts (crank r = 0.1 m,
 * 1 kg; rod L = 0.3 m, 2 kg; slider 0.5 kg; gravity −y; four full 3-D joints, so a
 * redundant loop) run for 60 s at the default step, its joint forces against the fixture's
 * closed form (loop-closure kinematics and planar Newton–Euler by hand, sliderCrank).
 *
 * Driven: a motor turns the crank at ω = 10 rad/s (95 turns); the forces of the pivot, both
 * pins and the guide and the motor's torque must stay those of the closed form at φ = ω t at
 * every step (measured 2e-13 N on forces up to 40 N under both integrators).
 *
 * Free: no motor, started at the dead centre φ = 0 at 20 rad/s, the crank turning over and
 * over (119 turns) through both dead centres, where it runs fastest (h φ̇ ≈ 0.17) and the
 * slider's reversal loads the rod most. Without a drive, τ(φ, ω, α) = 0 fixes α: τ is affine
 * in α (the fixture's τ is the inverse dynamics), so α = −τ(φ, ω, 0) / (τ(φ, ω, 1) −
 * τ(φ, ω, 0)). RK4 on that equation at h/2 is the reference motion (at h/10 it moves by
 * 0.01 rad). Measured: the energy (computed from the body states) within 1.9e-3 of the
 * largest kinetic energy (3.5 J); the crank angle 4.0 rad behind or ahead of the reference's
 * after 749 rad (0.53 %, the scheme's second-order phase error: 1.1 rad at h/2); the joint
 * forces 2e-11 N from Newton–Euler at the engine's own φ, φ̇, of up to 125 N (the reactions
 * of the motion it has: "hundreds of times too large" would show here).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import {
  G,
  I1,
  I2,
  M1,
  M2,
  M3,
  type SliderCrankSolution,
  sliderCrank,
} from "../../analysis/slider-crank-fixture";
import { SLIDER_CRANK_JOINTS, zQuat } from "../../analysis/slider-crank-model";
import { mechanicalEnergy, Rk4, report } from "./helpers";

const OMEGA = 10;
/** The free crank's start rate (rad/s): ½ J(0) ω² = 2.0 J clears the 1.47 J the links rise. */
const SPIN = 20;
const SECONDS = 60;
const SLIDER_INERTIA = 1e-3;

/** The engine model at the fixture's solution `sol` (positions and velocities). */
function model(sol: SliderCrankSolution, integrator: string, driven: boolean) {
  const v3 = (p: readonly number[]) => [p[0], p[1], 0];
  const body = (id: string, mass: number, I: number, b: SliderCrankSolution["rod"]) => ({
    id,
    mass,
    inertia: [I / 10, I, I],
    position: v3(b.x),
    orientation: zQuat(b.angle),
    velocity: v3(b.v),
    angularVelocity: [0, 0, b.omega],
  });
  return {
    gravity: [0, -G, 0],
    bodies: [
      body("crank", M1, I1, sol.crank),
      body("rod", M2, I2, sol.rod),
      {
        ...body("slider", M3, SLIDER_INERTIA, sol.slider),
        inertia: [1, 1, 1].map(() => SLIDER_INERTIA),
      },
    ],
    joints: SLIDER_CRANK_JOINTS,
    motors: driven ? [{ id: "m1", joint: "j1", angle: { offset: 0, rate: OMEGA } }] : [],
    solver: { integrator },
  };
}

type Joint = { id: string; force: number[]; torque: number[] };

/** Largest force difference (N) between the reported joints and the closed form `ref`. */
function forceError(joints: readonly Joint[], ref: SliderCrankSolution): number {
  const f = (id: string) => joints.find((j) => j.id === id)?.force ?? [NaN, NaN, NaN];
  const d = (a: number[], b: readonly number[]) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2]);
  return Math.max(
    d(f("j1"), ref.F1),
    d(f("j2"), ref.F2),
    d(f("j3"), ref.F3),
    Math.abs(f("j4")[1] - ref.N4),
  );
}

/** The free crank's α at (φ, ω): τ(φ, ω, α) = 0 with τ affine in α. */
function freeAcceleration(phi: number, omega: number): number {
  const t0 = sliderCrank(phi, omega, 0).tau;
  return -t0 / (sliderCrank(phi, omega, 1).tau - t0);
}

describe("the slider-crank for 60 s at the default step: joint forces against Newton–Euler by hand", () => {
  for (const integrator of ["moreau-jean", "generalized-alpha"])
    it(`${integrator}, driven at 10 rad/s: pivot, pins, guide and motor torque at every step`, () => {
      const sim = loadModel(model(sliderCrank(0, OMEGA, 0), integrator, true));
      expect(sim.solver.dt).toBe(0.005);
      let forces = 0;
      let torque = 0;
      let scale = 0;
      const steps = Math.round(SECONDS / sim.solver.dt);
      for (let n = 1; n <= steps; n++) {
        sim.step(1);
        const s = sim.state();
        const ref = sliderCrank(OMEGA * s.time, OMEGA, 0);
        scale = Math.max(scale, Math.hypot(...ref.F1));
        forces = Math.max(forces, forceError(s.joints, ref));
        const motor = s.joints.find((j) => j.id === "m1");
        torque = Math.max(torque, Math.abs((motor?.torque[2] ?? NaN) - ref.tau));
      }
      report(`slider-crank driven ${integrator}`, { forces, torque, scale });
      expect(scale).toBeGreaterThan(20);
      expect(forces).toBeLessThan(1e-6);
      expect(torque).toBeLessThan(1e-6);
    });

  it("generalized-alpha, free through both dead centres: energy, crank angle vs RK4, forces at its own state", () => {
    const sim = loadModel(
      model(sliderCrank(0, SPIN, freeAcceleration(0, SPIN)), "generalized-alpha", false),
    );
    const props = {
      crank: { mass: M1, inertia: [I1 / 10, I1, I1] },
      rod: { mass: M2, inertia: [I2 / 10, I2, I2] },
      slider: { mass: M3, inertia: [SLIDER_INERTIA, SLIDER_INERTIA, SLIDER_INERTIA] },
    };
    const energyOf = (s: ReturnType<typeof sim.state>) =>
      mechanicalEnergy(s.bodies, props, G, [0, 1, 0]);
    const E0 = energyOf(sim.state()).total;
    const h = sim.solver.dt;
    let energy = 0;
    let kineticMax = 0;
    let angle = 0;
    let forces = 0;
    let largest = 0;
    const steps = Math.round(SECONDS / h);
    const rk = new Rk4(
      (_t, y, dy) => {
        dy[0] = y[1];
        dy[1] = freeAcceleration(y[0], y[1]);
      },
      [0, SPIN],
    );
    for (let n = 1; n <= steps; n++) {
      sim.step(1);
      rk.advance(h / 2, 2);
      const s = sim.state();
      const e = energyOf(s);
      kineticMax = Math.max(kineticMax, e.kinetic);
      energy = Math.max(energy, Math.abs(e.total - E0));
      const crank = s.joints.find((j) => j.id === "j1");
      const phi = crank?.coordinates[0] ?? NaN;
      const rate = crank?.rates[0] ?? NaN;
      angle = Math.max(angle, Math.abs(phi - rk.y[0]));
      const ref = sliderCrank(phi, rate, freeAcceleration(phi, rate));
      largest = Math.max(largest, Math.hypot(...ref.F2));
      forces = Math.max(forces, forceError(s.joints, ref));
    }
    report("slider-crank free generalized-alpha", {
      energy,
      kineticMax,
      angle,
      forces,
      largest,
      turns: rk.y[0] / (2 * Math.PI),
    });
    expect(rk.y[0] / (2 * Math.PI)).toBeGreaterThan(100);
    expect(energy / kineticMax).toBeLessThan(4e-3);
    expect(angle / Math.abs(rk.y[0])).toBeLessThan(0.01);
    expect(forces).toBeLessThan(1e-6);
  });
});
