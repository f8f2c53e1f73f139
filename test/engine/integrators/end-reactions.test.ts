/**
 * The joint reactions Newmark (joints at the velocity level, γ = ½) and backward Euler
 * report, the multipliers consistent with the end state (AccelerationStepper
 * .reactionsAtEnd), against closed forms: a rod resting on its joint limit carries
 * (0, 0, m g) at its hinge, and a swinging rod m a_c − m g with a_c its centre's
 * acceleration at the state (angle and rate): along the rod (a point at L/2 from the hinge,
 * θ from hanging) the pull m g cos θ + m (L/2) θ̇², across it m (L/2) θ̈ + m g sin θ with
 * θ̈ = −m g (L/2) sin θ / I_hinge.
 * Newmark with numerical damping (γ > ½) holds the joints at the position level, and its
 * step's own multipliers are first order in h there; it reports the end state's too.
 * Newmark's own multipliers carried the undamped alternation of γ = ½ along the joint
 * directions (newmark.ts): ±2.77 N on the resting rod at every step, for ever. Backward
 * Euler's own are its step's mean force, first order in h: 0.39 N (4 % of m g) off at
 * h = 1/60 s on the swinging rod, 0.12 N at 5 ms.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const G = 9.81;
const M = 1;
const L = 1;
/** The rod's inertia about the hinge's axis (kg·m²): m L²/12 + m (L/2)². */
const I_HINGE = (M * L * L) / 3;

/**
 * A 1 kg, 1 m rod along x from a revolute hinge at the origin, axis y, gravity −z: it falls
 * from horizontal, onto the upper limit 0.5 rad when `limited`.
 */
function rod(solver: Record<string, unknown>, limited: boolean, integrator = "newmark") {
  return loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, -G],
      ...(limited ? { limits: { lower: -1, upper: 0.5 } } : {}),
      solver: { integrator, ...solver },
    }),
  );
}

/**
 * |F − F_exact| (N) for the hinge force F on the rod at the current state: F_exact = m a_c − m g
 * with a_c = α × r − ω² r, r the centre from the hinge, ω its rate about y and
 * α = (m g r_x + τ_limit)/I_hinge.
 */
function forceError(sim: ReturnType<typeof loadModel>): number {
  const st = sim.state();
  const [rx, , rz] = st.bodies[0].position;
  const w = st.bodies[0].angularVelocity[1];
  const { force, limitEffort } = st.joints[0];
  const alpha = (M * G * rx + limitEffort) / I_HINGE;
  const exact = [M * (alpha * rz - w * w * rx), 0, M * (-alpha * rx - w * w * rz) + M * G];
  return Math.hypot(force[0] - exact[0], force[1] - exact[1], force[2] - exact[2]);
}

describe("Newmark at γ = ½: joint reactions", () => {
  for (const [dt, seconds] of [
    [0.005, 60],
    [0.001, 10],
  ])
    it(`h = ${dt * 1000} ms: the rod at rest on its limit reads (0, 0, m g) at the hinge to 1e-8 N at every step over ${seconds} s`, () => {
      const sim = rod({ dt }, true);
      // the fall and the impact on the limit (at ~0.27 s), settled within 1 s
      sim.step(Math.round(1 / dt));
      let worst = 0;
      let effort = 0;
      for (let i = Math.round(1 / dt); i < Math.round(seconds / dt); i++) {
        sim.step(1);
        const st = sim.state();
        const [fx, fy, fz] = st.joints[0].force;
        worst = Math.max(worst, Math.hypot(fx, fy, fz - M * G));
        // the limit holds the rod's weight: τ = −m g (L/2) cos φ
        effort = Math.max(
          effort,
          Math.abs(st.joints[0].limitEffort + M * G * st.bodies[0].position[0]),
        );
      }
      const st = sim.state();
      expect(st.joints[0].coordinates[0]).toBeGreaterThan(0.5);
      // at rest to Newton's tolerance: the velocity-level step's projection left 1e-12 rad/s, the
      // symmetric step of the defaults (newmark.ts `alphaForm`) 2e-12 (1 ms: below 1e-12)
      expect(Math.abs(st.joints[0].rates[0])).toBeLessThan(1e-11);
      // (the step's own multipliers: ±2.77 N at 5 ms, ±0.57 N at 1 ms, alternating). The
      // defaults' symmetric step (newmark.ts `alphaForm`) reports generalized-alpha's
      // consistent multipliers at a rest Newton holds to its tolerance: 3.6e-9 N at 5 ms
      // (4e-10 of m g) and the limit's effort 2.4e-9 N·m, where the projected velocity-level
      // step read both below 1e-9
      expect(worst).toBeLessThan(1e-8);
      expect(effort).toBeLessThan(1e-8);
    });

  for (const [name, solver] of [
    ["β = ¼, Newton iterated", { beta: 0.25, gamma: 0.5 }],
    ["β = ¼, the linearized step", { beta: 0.25, gamma: 0.5, newtonIterations: 1 }],
    ["the central difference (β = 0)", { beta: 0, gamma: 0.5 }],
  ] as const)
    it(`${name}: a swinging rod's hinge force is m a_c − m g at its state to 1e-9 N over 10 s`, () => {
      const sim = rod({ dt: 0.005, ...solver }, false);
      let worst = 0;
      for (let i = 0; i < 2000; i++) {
        sim.step(1);
        worst = Math.max(worst, forceError(sim));
      }
      // (the step's own multipliers: 2.1e-3, 4.1e-3 and 5.2e-3 N)
      expect(worst).toBeLessThan(1e-9);
    });

  it("through the impact on the limit too, the hinge force is the state's to 1e-9 N", () => {
    const sim = rod({ dt: 0.005 }, true);
    let worst = 0;
    for (let i = 0; i < 400; i++) {
      sim.step(1);
      worst = Math.max(worst, forceError(sim));
    }
    // (the step's own multipliers: 3.4 N)
    expect(worst).toBeLessThan(1e-9);
  });
});

describe("backward Euler: joint reactions", () => {
  for (const dt of [1 / 60, 0.005])
    it(`h = ${dt.toPrecision(3)} s: a swinging rod's hinge force is m a_c − m g at its state to 1e-9 N over 10 s`, () => {
      const sim = rod({ dt }, false, "backward-euler");
      let worst = 0;
      for (let i = 0; i < Math.round(10 / dt); i++) {
        sim.step(1);
        worst = Math.max(worst, forceError(sim));
      }
      // (the step's own multipliers: 0.39 N at 1/60 s, 0.12 N at 5 ms)
      expect(worst).toBeLessThan(1e-9);
    });
});

describe("Newmark with numerical damping (γ > ½, joints at the position level): joint reactions", () => {
  for (const [dt, solver] of [
    [0.005, { beta: 0.3025, gamma: 0.6 }],
    [0.001, { beta: 0.3025, gamma: 0.6 }],
    [0.005, { beta: 0.3, gamma: 0.7 }],
  ] as const)
    it(`h = ${dt * 1000} ms, γ = ${solver.gamma}: a swinging rod's hinge force is m a_c − m g at its state to 1e-9 N over 10 s`, () => {
      const sim = rod({ dt, ...solver }, false);
      let worst = 0;
      for (let i = 0; i < Math.round(10 / dt); i++) {
        sim.step(1);
        worst = Math.max(worst, forceError(sim));
      }
      // (the step's own multipliers, reported before: 0.10 N, 0.020 N and 0.099 N)
      expect(worst).toBeLessThan(1e-9);
    });

  it("h = 5 ms, γ = 0.6: through the impact on the limit and at rest on it, the hinge force is the state's to 1e-9 N", () => {
    const sim = rod({ dt: 0.005, beta: 0.3025, gamma: 0.6 }, true);
    let worst = 0;
    for (let i = 0; i < 2000; i++) {
      sim.step(1);
      worst = Math.max(worst, forceError(sim));
    }
    // (the step's own multipliers: 4.2 N)
    expect(worst).toBeLessThan(1e-9);
  });
});
