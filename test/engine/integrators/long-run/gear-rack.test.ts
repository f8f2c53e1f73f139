/**
 * Gears by mimic couplings, 60 s at the default step (5 ms): an unbalanced wheel (1 kg, its
 * COM e = 0.1 m off its hinge, I = 0.01 kg·m² about it) swings under gravity, a balanced
 * wheel (I2 = 0.02 kg·m²) follows it at n = −2 (a gear pair: q2 = n q1), and a rack
 * (M = 0.5 kg on a prismatic guide) at R = 0.1 m/rad (a pinion: s = R q1). The couplings
 * add n² I2 + M R² to the swing's inertia:
 *   J θ̈ = −m g e sin θ,  J = I + m e² + n² I2 + M R²  (0.105 kg·m²),
 * a pendulum, started at rest at θ = 2.5 rad (a large swing). RK4 on it is the reference.
 * The couplings' efforts are what the followers' inertia takes: I2 n θ̈ about the gear's
 * axle (the State's joint "h2:mimic") and M R θ̈ along the rack ("slide:mimic").
 * Measured: θ 1.9e-3 rad from RK4 (symplectic Euler 0.014, first order, at the first swing),
 * energy (from the body states) 8e-5 J of the 3.2 J swing (symplectic Euler 0.011), both
 * couplings' ratios to 4e-15, their efforts 2e-15 from the formulas at the engine's own θ.
 * (articulated steps no mimic.)
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { axisAngle, mechanicalEnergy, Rk4, report } from "./helpers";
import { G } from "./models";

const m1 = 1;
const e = 0.1;
const I1 = 0.01;
const n = -2;
const I2 = 0.02;
const M = 0.5;
const R = 0.1;
const theta0 = 2.5;
const J = I1 + m1 * e * e + n * n * I2 + M * R * R;
const accel = (theta: number) => (-m1 * G * e * Math.sin(theta)) / J;
const props = {
  w1: { mass: m1, inertia: [I1, I1, I1] },
  w2: { mass: 1, inertia: [I2, I2, I2] },
  rack: { mass: M, inertia: [0.01, 0.01, 0.01] },
};

function model(integrator: string) {
  // the wheel turned by θ about y (which takes z to x): its COM at e (−sin θ, 0, −cos θ), θ
  // from the downward vertical
  return {
    gravity: [0, 0, -G],
    bodies: [
      {
        id: "w1",
        mass: m1,
        inertia: props.w1.inertia,
        position: [-e * Math.sin(theta0), 0, -e * Math.cos(theta0)],
        orientation: axisAngle([0, 1, 0], theta0),
      },
      { id: "w2", mass: 1, inertia: props.w2.inertia, position: [0.5, 0, 0] },
      { id: "rack", mass: M, inertia: props.rack.inertia, position: [0, 0, 0.5] },
    ],
    joints: [
      {
        id: "h1",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "w1", point: [0, 0, e] },
        axis: [0, 1, 0],
      },
      {
        id: "h2",
        type: "revolute",
        a: { body: "ground", point: [0.5, 0, 0] },
        b: { body: "w2", point: [0, 0, 0] },
        axis: [0, 1, 0],
        mimic: { joint: "h1", multiplier: n },
      },
      {
        id: "slide",
        type: "prismatic",
        a: { body: "ground", point: [0, 0, 0.5] },
        b: { body: "rack", point: [0, 0, 0] },
        axis: [1, 0, 0],
        mimic: { joint: "h1", multiplier: R },
      },
    ],
    solver: { integrator },
  };
}

/** integrator; bounds on |θ − θ_RK4| (rad) and |ΔE| (J) */
const CASES = [
  ["moreau-jean", 0.01, 5e-4],
  ["generalized-alpha", 0.01, 5e-4],
  ["symplectic-euler", 0.05, 0.03],
] as const;

describe("a wheel geared to a wheel and a rack by mimic couplings, 60 s at the default step", () => {
  for (const [integrator, angleBound, energyBound] of CASES)
    it(`${integrator}: the swing against RK4, energy, the ratios and the couplings' efforts`, () => {
      const sim = loadModel(model(integrator));
      const h = sim.solver.dt;
      expect(h).toBe(0.005);
      const E0 = mechanicalEnergy(sim.state().bodies, props, G).total;
      const rk = new Rk4(
        (_t, y, dy) => {
          dy[0] = y[1];
          dy[1] = accel(y[0]);
        },
        [theta0, 0],
      );
      let angle = 0;
      let energy = 0;
      let ratio = 0;
      let efforts = 0;
      let largest = 0;
      const steps = Math.round(60 / h);
      for (let k = 1; k <= steps; k++) {
        sim.step(1);
        rk.advance(h / 100, 100);
        const s = sim.state();
        const joint = (id: string) => {
          const j = s.joints.find((x) => x.id === id);
          if (!j) throw new Error(`no joint ${id}`);
          return j;
        };
        const q = joint("h1").coordinates[0]; // from the model pose: θ = θ0 + q
        angle = Math.max(angle, Math.abs(theta0 + q - rk.y[0]));
        energy = Math.max(energy, Math.abs(mechanicalEnergy(s.bodies, props, G).total - E0));
        ratio = Math.max(
          ratio,
          Math.abs(joint("h2").coordinates[0] - n * q),
          Math.abs(joint("slide").coordinates[0] - R * q),
        );
        const a = accel(theta0 + q);
        largest = Math.max(largest, Math.abs(I2 * n * a));
        efforts = Math.max(
          efforts,
          Math.abs(joint("h2:mimic").torque[1] - I2 * n * a),
          Math.abs(joint("slide:mimic").force[0] - M * R * a),
        );
      }
      report(`gear-rack ${integrator}`, { angle, energy, ratio, efforts, largest });
      expect(largest).toBeGreaterThan(0.3);
      expect(angle).toBeLessThan(angleBound);
      expect(energy).toBeLessThan(energyBound);
      expect(ratio).toBeLessThan(1e-12);
      expect(efforts).toBeLessThan(1e-9);
    });
});
