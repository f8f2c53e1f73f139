/**
 * A fast heavy top (a gyroscope) in steady precession on a spherical joint, 60 s at the
 * default step (5 ms), under each integrator that holds joints and turns bodies in 3-D. Its
 * spin ω3 = 200 rad/s turns it by h ω3 = 1 rad a step.
 *
 * The top is models.ts's (m = 1 kg, COM l = 0.1 m up its axis from the pivot, I1c = 0.0025
 * and I3 = 0.005 kg·m², tilt θ = 30°). Steady precession at the rate Ω about the vertical
 * needs (models.ts, topSteadyPrecession) Ω I3 ω3 − Ω² I1 cos θ = m g l, I1 = I1c + m l²; for a
 * given ω3 it is a quadratic in Ω, whose slow root is the gyroscope's
 *   Ω = (I3 ω3 − √((I3 ω3)² − 4 I1 cos θ m g l)) / (2 I1 cos θ)  (0.9916 rad/s here).
 * In the exact motion ω3 = ω·e3 is constant (the gravity and joint forces act along lines
 * through the axis: no torque about it), the tilt stays θ, the axis' azimuth is Ω t, the
 * energy and L_z (about the vertical through the pivot) are constant, and the joint's force
 * on the top is m g up plus m Ω² l sin θ towards the axis (the COM's circle).
 *
 * What a long run must not do, and did (README, symplectic-euler): a spin that runs down or
 * reverses, a top that falls, a precession that drifts. Measured over 60 s (120 s gave the
 * figures in parentheses): ω3 to 1e-12 relative (articulated 1e-7), the tilt to 2e-4 rad
 * (symplectic Euler 8e-4), the precession phase to 0.011 rad of 60 rad (0.022 at 120 s),
 * the force to 0.065 N (symplectic Euler, first order, 0.75 N; articulated 5e-5 N). The
 * bounds sit a few times above.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import {
  axisAngle,
  cross,
  dot,
  mechanicalEnergy,
  report,
  rotate,
  unwrap,
  type Vec3,
  verticalMomentum,
} from "./helpers";
import { G, top } from "./models";

const OMEGA3 = 200;
const SECONDS = 60;
const { mass, l, I1c, I3, tilt } = top;
const I1 = I1c + mass * l * l;
const a = I1 * Math.cos(tilt);
const b = I3 * OMEGA3;
const Omega = (b - Math.sqrt(b * b - 4 * a * mass * G * l)) / (2 * a);

function gyroscope(integrator: string) {
  const spin = OMEGA3 - Omega * Math.cos(tilt); // ψ̇ = ω3 − Ω cos θ
  const e3: Vec3 = [Math.sin(tilt), 0, Math.cos(tilt)];
  const w: Vec3 = [spin * e3[0], 0, Omega + spin * e3[2]];
  const com: Vec3 = [l * e3[0], 0, l * e3[2]];
  return {
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "top",
        mass,
        position: com,
        orientation: axisAngle([0, 1, 0], tilt),
        velocity: cross(w, com),
        angularVelocity: w,
        inertia: [I1c, I1c, I3],
      },
    ],
    joints: [
      {
        id: "tip",
        type: "spherical",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "top", point: [0, 0, -l] },
      },
    ],
    solver: { integrator },
  };
}

/** integrator; bounds on |ω3 − ω3(0)|/ω3, tilt (rad), phase (rad), force (N) */
const CASES = [
  ["moreau-jean", 1e-9, 1e-3, 0.05, 0.2],
  ["generalized-alpha", 1e-9, 1e-3, 0.05, 0.2],
  ["newmark", 1e-9, 1e-3, 0.05, 0.2],
  ["symplectic-euler", 1e-9, 3e-3, 0.1, 2],
  ["articulated", 1e-6, 1e-4, 0.01, 1e-3],
] as const;

describe("a gyroscope (ω3 = 200 rad/s, h ω3 = 1) precessing on a spherical joint for 60 s at the default step", () => {
  it("the precession rate solves the steady-precession condition", () => {
    expect(Omega * I3 * OMEGA3 - Omega * Omega * I1 * Math.cos(tilt)).toBeCloseTo(mass * G * l, 12);
    expect(Omega).toBeCloseTo(0.9916, 4);
  });

  for (const [integrator, spinBound, tiltBound, phaseBound, forceBound] of CASES)
    it(`${integrator}: spin constant, tilt, precession phase, energy, L_z and the joint force`, () => {
      const sim = loadModel(gyroscope(integrator));
      expect(sim.solver.dt).toBe(0.005);
      const props = { top: { mass, inertia: [I1c, I1c, I3] } };
      const first = sim.state();
      const E0 = mechanicalEnergy(first.bodies, props, G).total;
      const L0 = verticalMomentum(first.bodies, props);
      const rHorizontal = mass * Omega * Omega * l * Math.sin(tilt);
      let spin = 0;
      let spinMin = Infinity;
      let tiltError = 0;
      let phase = 0;
      let azimuth = 0;
      let energy = 0;
      let momentum = 0;
      let force = 0;
      const steps = Math.round(SECONDS / sim.solver.dt);
      for (let n = 1; n <= steps; n++) {
        sim.step(1);
        const s = sim.state();
        const body = s.bodies[0];
        const axis = rotate(body.orientation, [0, 0, 1]);
        const w3 = dot(body.angularVelocity as Vec3, axis);
        spin = Math.max(spin, Math.abs(w3 / OMEGA3 - 1));
        spinMin = Math.min(spinMin, w3);
        tiltError = Math.max(tiltError, Math.abs(Math.acos(axis[2]) - tilt));
        azimuth = unwrap(azimuth, Math.atan2(axis[1], axis[0]));
        phase = Math.max(phase, Math.abs(azimuth - Omega * s.time));
        energy = Math.max(energy, Math.abs(mechanicalEnergy(s.bodies, props, G).total - E0));
        momentum = Math.max(momentum, Math.abs(verticalMomentum(s.bodies, props) - L0));
        const f = s.joints[0].force;
        force = Math.max(
          force,
          Math.abs(f[2] - mass * G),
          Math.abs(Math.hypot(f[0], f[1]) - rHorizontal),
        );
      }
      report(`gyroscope ${integrator}`, { spin, tiltError, phase, energy, momentum, force });
      expect(spinMin).toBeGreaterThan(0.99 * OMEGA3); // never runs down nor reverses
      expect(spin).toBeLessThan(spinBound);
      expect(tiltError).toBeLessThan(tiltBound);
      expect(phase).toBeLessThan(phaseBound);
      // kinetic energy ½ I3 ω3² ≈ 100 J, L_z ≈ 0.87 kg·m²/s
      expect(energy).toBeLessThan(1e-3);
      expect(momentum).toBeLessThan(1e-4);
      expect(force).toBeLessThan(forceBound);
    });
});
