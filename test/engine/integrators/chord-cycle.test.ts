/**
 * Newton's chord iterations on a constrained system must not cycle. A six-axis arm (the
 * UR5-like arm of test/formats/urdf/arm.ts, imported from its URDF) held by stiff position
 * servos (k_p 5000 N·m/rad, k_d 300 on the three large joints; 100 and 5 on the wrist)
 * against gravity, at a wrist singularity (joints 4 and 6 coaxial: every wrist target 0),
 * with the velocity-level schemes: the fresh-factorization corrections and the chord
 * corrections once landed on two different points forever, and the step failed after
 * 0.7 s (acceleration-step.ts, `solve`). Every step must now converge, and the arm come to
 * rest at its targets up to the sag each servo needs to hold its load (|τ|/k_p, rad).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { importUrdf } from "../../../src/formats/urdf/index";
import { armUrdf } from "../../formats/urdf/arm";

const TARGETS = [0.4, -0.6, 0.8, 0, 0, 0];
const GAINS = [
  [5000, 300],
  [5000, 300],
  [5000, 300],
  [100, 5],
  [100, 5],
  [100, 5],
];

describe("chord iterations at a wrist singularity", () => {
  for (const integrator of ["moreau-jean", "backward-euler"] as const)
    it(`${integrator}: 3 s of servo-held arm, every step converged, at rest on its targets`, async () => {
      const { model } = await importUrdf({
        urdf: armUrdf(),
        options: { actuators: { type: "position", kp: 1, kd: 0 } },
      });
      const m = structuredClone(model) as {
        solver: { integrator: string };
        actuators: { type: string; target?: number; kp?: number; kd?: number }[];
      };
      m.solver.integrator = integrator;
      m.actuators = m.actuators.filter((a) => a.type === "position");
      expect(m.actuators.length).toBe(6);
      m.actuators.forEach((a, k) => {
        a.target = TARGETS[k];
        a.kp = GAINS[k][0];
        a.kd = GAINS[k][1];
      });
      const sim = loadModel(m);
      let converged = 0;
      const steps = Math.round(3 / sim.solver.dt);
      for (let k = 0; k < steps; k++) {
        sim.step(1);
        if (sim.state().solver.newtonConverged) converged++;
      }
      expect(converged).toBe(steps);
      const st = sim.state();
      st.actuators.forEach((a, k) => {
        const q = st.joints[k].coordinates[0];
        expect(Math.abs(st.joints[k].rates[0])).toBeLessThan(1e-6);
        // at rest: τ = k_p (q* − q), so q* − q = τ/k_p
        expect(Math.abs(TARGETS[k] - q - a.effort / GAINS[k][0])).toBeLessThan(1e-6);
      });
    });
});
