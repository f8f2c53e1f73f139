/**
 * A spherical pendulum in steady conical motion, under every integrator that holds joints,
 * over 60 s (32 periods) at the default step: a 1 kg body of small isotropic inertia on a
 * massless link of L = 1 m, the link at φ = 30° from the vertical, turning about the
 * vertical at Ω with Ω² = g / (L cos φ) (an isotropic inertia adds no gyroscopic moment: the
 * body turns with the link at Ω about z, and its angular momentum about its centre stays
 * along z). The exact motion keeps the height −L cos φ, the rate Ω, and the joint's force on
 * the body m (g ẑ − Ω² ρ ρ̂) of size m g / cos φ. What a long run must not do is drift from
 * it: a reaction hundreds of times too large, a cone that opens or closes, a rate that
 * runs down. The bounds are what each integrator's order gives at h = 5 ms (measured:
 * articulated 1e-13, the second-order ones 3e-4 N and 1e-5 m, symplectic Euler 3e-2 N).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";

const g = 9.81;
const L = 1;
const phi = Math.PI / 6;
const omega = Math.sqrt(g / (L * Math.cos(phi)));
const force = g / Math.cos(phi);

/** integrator, force bound (N), height and rate bound (m, rad/s) */
const BOUNDS = [
  ["articulated", 1e-9, 1e-9],
  ["generalized-alpha", 1e-3, 1e-4],
  ["moreau-jean", 1e-3, 1e-4],
  ["newmark", 1e-3, 1e-4],
  ["symplectic-euler", 0.1, 1e-2],
] as const;

/** Largest deviations over 60 s at 5 ms: height (m), force size (N), rate (rad/s). */
function run(integrator: (typeof BOUNDS)[number][0]) {
  const r = [L * Math.sin(phi), 0, -L * Math.cos(phi)] as [number, number, number];
  const sim = loadModel({
    gravity: [0, 0, -g],
    bodies: [
      {
        id: "p",
        mass: 1,
        position: r,
        inertia: [1e-3, 1e-3, 1e-3],
        velocity: [0, omega * r[0], 0],
        angularVelocity: [0, 0, omega],
      },
    ],
    joints: [
      {
        id: "j",
        type: "spherical",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "p", point: [-r[0], 0, -r[2]] },
      },
    ],
    solver: { integrator, dt: 0.005 },
  });
  let height = 0;
  let size = 0;
  let rate = 0;
  for (let k = 0; k < 12000; k++) {
    sim.step(1);
    const s = sim.state();
    const f = s.joints[0].force;
    height = Math.max(height, Math.abs(s.bodies[0].position[2] - r[2]));
    size = Math.max(size, Math.abs(Math.hypot(f[0], f[1], f[2]) - force));
    rate = Math.max(rate, Math.abs(s.bodies[0].angularVelocity[2] - omega));
  }
  return { height, size, rate };
}

describe("a conical pendulum over 60 s: height, rate and the joint's force m g / cos φ", () => {
  for (const [integrator, forceBound, motionBound] of BOUNDS)
    it(integrator, () => {
      const { height, size, rate } = run(integrator);
      expect(size).toBeLessThan(forceBound);
      expect(height).toBeLessThan(motionBound);
      expect(rate).toBeLessThan(motionBound);
    });
});
