/**
 * A servo's damping stiff enough to stop its joint within one step (h k_d/I ≫ 1) books the
 * kinetic energy it took (AccelerationStepper.endLaws, lawRoundingWork; step-work.ts). The
 * step's end rate v_pred + h a then cancels: a rod at q̇₀ under k_d ends a backward-Euler
 * step at q̇₀ I/(I + h k_d), below the rounding ε q̇₀ of that sum, and the damper's law read
 * at the end state, −k_d q̇₁, is off by up to ε k_d q̇₀ of the I q̇₀/h the step applied:
 * until 2026-12-08 the 1 kg·m² rod below at 10 rad/s (1/60 s) booked none of its 50 J at
 * k_d = 1e30 (energy.error −50 J) and 4.1e-6 J too little at k_d = 1e12; the rod hinged at
 * its end, written at 1e7 rad/s under k_d = 1e291, −1.67e13 J. Checked against the
 * work–energy theorem: the hinge through the centre of mass does no work, so what the
 * damper took is ½ I (q̇₀² − q̇²) at every step, q̇ the State's joint rate.
 *
 * Backward Euler and symplectic Euler (its stiff steps taken as backward Euler's) only:
 * moreau-jean, newmark and generalized-alpha still book none of the 50 J at k_d = 1e30
 * (their residual weighs the servo's start force (1 − w) f_s(t) − ε f_s(t), a sum of
 * ±k_d q̇₀ whose rounding covers the I q̇₀/h the step applied).
 */
import { describe, expect, it } from "vitest";
import { Input } from "../../../schemas/input";
import { loadModel } from "../../../src/engine/index";
import { centredServoRod, rodPendulum } from "../../support/models";

const h = 1 / 60;

/** A servo of k_p = 0 (a damper −k_d q̇) on a 12 kg, 1 m rod hinged at its centre: I = 1 kg·m². */
function brakedRod(integrator: string, kd: number, rate: number) {
  const sim = loadModel(
    centredServoRod(12, 1, { type: "position", target: 0, kp: 0, kd: 0 }, { integrator, dt: h }),
  );
  sim.schedule([
    Input.parse({ type: "jointState", id: "pin", velocity: rate }),
    Input.parse({ type: "gains", id: "servo", kd }),
  ]);
  return sim;
}

describe("a damper that stops a rod within a step books the kinetic energy it took", () => {
  const I = 1;
  const rate = 10;
  const taken = 0.5 * I * rate * rate;
  for (const integrator of ["backward-euler", "symplectic-euler"])
    for (const kd of [1e3, 1e6, 1e12, 1e17, 1e30])
      it(`${integrator}, k_d = ${kd.toExponential(0)} N·m·s/rad (h k_d/I = ${(h * kd).toExponential(1)}): energy.dissipated = ½ I (q̇₀² − q̇²) to rounding over 600 steps`, () => {
        const sim = brakedRod(integrator, kd, rate);
        let worst = 0;
        for (let n = 0; n < 600; n++) {
          sim.step(1);
          const s = sim.state();
          const q = s.joints[0].rates[0];
          const booked = s.energy.dissipated as number;
          worst = Math.max(worst, Math.abs(booked - 0.5 * I * (rate * rate - q * q)));
          expect(Math.abs(s.energy.error as number)).toBeLessThanOrEqual(1e-13 * taken);
        }
        // stopped: (k_d = 1e3, backward Euler) 1/(1 + h k_d/I)^600 of its rate
        expect(Math.abs(sim.state().joints[0].rates[0])).toBeLessThan(1e-10);
        // measured 0 to 7.1e-15 J (1.4e-16 of 50 J, the rounding of ½ I q̇₀²); before 9.4e-11 J
        // (backward Euler, k_d = 1e6), 4.1e-6 J (both, 1e12), 5.6 J and 0.040 J (1e17), 50 J
        // (1e30); k_d = 1e3 read 0 and 7.1e-15 J before too
        expect(worst).toBeLessThanOrEqual(1e-13 * taken);
      });
});

describe("the rod hinged at its end, its rate written with k_d raised (to 1e291 at 1e7 rad/s: inputs.ts MAX_GAIN's reach)", () => {
  // rodPendulum: 1 kg, 1 m, I = m L²/3 about the hinge; a position servo k_p = 20 toward
  // 0.3 rad, k_d raised with the rate written at once
  const I = 1 / 3;
  for (const integrator of ["backward-euler", "symplectic-euler"])
    for (const [kd, rate] of [
      [1e15, 10],
      [1e17, 10],
      [1e291, 1e7],
    ])
      it(`${integrator}, k_d = ${kd.toExponential(0)}, q̇₀ = ${rate.toExponential(0)} rad/s: the brake's ½ I q̇₀² booked, energy.error within 1e-8 of it over 300 steps`, () => {
        const sim = loadModel(
          rodPendulum({
            mass: 1,
            length: 1,
            axis: [0, 1, 0],
            gravity: [0, 0, 0],
            servo: { type: "position", target: 0.3, kp: 20, kd: 0.5 },
            solver: { integrator, dt: h },
          }),
        );
        sim.step(10);
        sim.schedule([
          Input.parse({ type: "gains", id: "servo", kd }),
          Input.parse({ type: "jointState", id: "pin", velocity: rate }),
        ]);
        const before = sim.state().energy;
        const taken = 0.5 * I * rate * rate;
        for (let n = 0; n < 300; n++) {
          sim.step(1);
          const e = sim.state().energy;
          // measured at most 6.6e-8 J (backward Euler at 1e15 and 1e17 alike: 4e-9 of 16.7 J,
          // not the brake's) and 1250 J of 1.67e13 (7.5e-11, 1e291); before 0.195 J and
          // 12.8 J (backward Euler), 3.2e-3 and 2.2e-2 J (symplectic Euler), 1.67e13 J at
          // 1e291 (both)
          expect(Math.abs((e.error as number) - (before.error as number))).toBeLessThan(
            1e-8 * taken,
          );
        }
        const booked = (sim.state().energy.dissipated as number) - (before.dissipated as number);
        // the servo's k_p (q* − q) ends at rest: its potential ½ k_p (q − q*)² changed by
        // the turn the rod made within the brake's step (≪ the kinetic energy)
        expect(Math.abs(booked - taken)).toBeLessThan(1e-6 * taken);
      });
});
