/**
 * A servo's damping raised mid-swing under the θ = 1 schemes with joint limits (the
 * velocities' lag restaggers: theta-scheme.ts restagger, impact-events.ts kick;
 * AccelerationStepper.unresolvedAt). A rod hinged at its end (m = 1 kg, L = 1 m,
 * I = m L²/3 about the hinge), released level under gravity, limits at ±0.3 rad
 * (restitution ½; the swing strikes the upper one at 0.28 s), a position servo to q* = 0
 * at k_p = 20 N·m/rad, k_d = 1 N·m·s/rad, h = 1 ms. At 0.15 s, on the way to the bound at
 * 1.4 rad/s, a `gains` input sets k_d = 1e6: h k_d/I = 3000, a damping no step resolves.
 * Backward Euler of I q̈ = τ_o − k_d q̇ (τ_o the spring's and gravity's torque,
 * |τ_o| ≤ k_p 0.3 + m g L/2 within the limits) over a step of h, or over pieces h_i
 * summing to it (Π (1 + h_i γ) ≥ 1 + h γ, γ = k_d/I), bounds the rate:
 *   |q̇₁| ≤ |q̇₀| / (1 + h γ) + h |τ_o|max / I:
 * a damper only slows the rod towards rest. Before, the step split at an impact the
 * damper's pull predicted (−γ q̇ taken for a constant acceleration) kicked the velocities
 * by s ü (the lag s, up to h/2) with ü's share −γ q̇ explicit, s γ ≫ 1: backward Euler's
 * rate reversed (15 times the bound), energy.error 3.6e5 J at the change's step;
 * symplectic Euler's restagger kicked its first short sub-step by tens of rad/s, unbooked,
 * that its damper then dissipated, booked: energy.error +0.46 J of the 0.33 J.
 */
import { describe, expect, it } from "vitest";
import { Input } from "../../../schemas/input";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const M = 1;
const L = 1;
const G = 9.81;
const I = (M * L * L) / 3;
const KP = 20;
const KD = 1e6;
const H = 1e-3;
const BOUND = 0.3;
/** The change's step: 0.15 s, mid-swing towards the upper bound. */
const CHANGE = 150;
/** |τ_o| within the limits: the servo's spring at the bound and gravity's largest moment. */
const TAU = KP * BOUND + M * G * (L / 2);
const GAMMA = KD / I;

function rod(integrator: string, limited = true) {
  return loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, -G],
      ...(limited ? { limits: { lower: -BOUND, upper: BOUND, restitution: 0.5 } } : {}),
      servo: { type: "position", target: 0, kp: KP, kd: 1 },
      solver: { integrator, dt: H },
    }),
  );
}

describe("a servo's damping raised mid-swing with joint limits (θ = 1 schemes)", () => {
  it.each(["backward-euler", "symplectic-euler"])(
    "%s: the rate within backward Euler's bound every step, energy.error the scheme's own, 20 s",
    (integrator) => {
      // the swing left alone strikes the bound: the rate turned in one step from towards it
      // to away (met at its instant, the impact leaves the step's end short of the bound)
      const alone = rod(integrator);
      let struck = false;
      let previous = 0;
      for (let k = 0; k < 400; k++) {
        alone.step(1);
        const rate = alone.state().joints[0].rates[0];
        struck ||= previous > 0.5 && rate < 0;
        previous = rate;
      }
      expect(struck, integrator).toBe(true);

      const sim = rod(integrator);
      sim.step(CHANGE);
      const s0 = sim.state();
      let rate = s0.joints[0].rates[0];
      const q0 = rate;
      expect(rate).toBeGreaterThan(1);
      const error0 = s0.energy.error as number;
      sim.schedule([Input.parse({ type: "gains", id: "servo", kd: KD })]);
      let changeError = Number.NaN;
      let drift = 0;
      let worstRatio = 0;
      for (let k = 0; k < 20000; k++) {
        sim.step(1);
        const s = sim.state();
        const next = s.joints[0].rates[0];
        worstRatio = Math.max(
          worstRatio,
          Math.abs(next) / (Math.abs(rate) / (1 + H * GAMMA) + (H * TAU) / I),
        );
        const error = (s.energy.error as number) - error0;
        if (k <= 1) changeError = error;
        else drift = Math.max(drift, Math.abs(error - changeError));
        rate = next;
      }
      // measured 1.8e-3 (backward Euler) and 7.0e-5 (symplectic Euler); before, 15.4
      // under backward Euler, its change's step reversing the rate
      expect(worstRatio, integrator).toBeLessThanOrEqual(1);
      // the change's step and the next (backward Euler's rate 1.4/(1 + h γ) = 4.7e-4 rad/s
      // after the first, at the terminal 2.3e-6 after the second): the damper takes the
      // kinetic energy and the potential's change over |Δq| ≤ h |q̇₀|, which the scheme books
      // at one end's forces: its own error at most h |q̇₀| |τ_o|max (1.5e-2 J; measured
      // 3.4e-3 J and 2.1e-4 J, bit for bit the same rod's without limits; before, 3.6e5 J and
      // 0.46 J. While the change's step was cut at the damper's predicted apexes, pieces 1/γ
      // long that resolved its transient, 4.2e-4 J and 2.2e-5 J: dampedAway)
      expect(Math.abs(changeError), integrator).toBeLessThan(H * q0 * TAU);
      // then held at rest by the servo: no work, energy.error kept over 20 s
      expect(drift, integrator).toBeLessThan(1e-6);
    },
  );
});

describe("the damped rod's bounds, which it never reaches, split no step (impact-events.ts dampedAway)", () => {
  // After the change, I q̈ = τ_o − k_d q̇ with |τ_o| ≤ TAU: from q̇₀ the rate decays as
  // e^{−γ t} to at most TAU/k_d (1.1e-5 rad/s), so the closed form moves the rod by at most
  // |q̇₀|/γ + T TAU/k_d (4.7e-7 + 2.2e-4 rad over T = 20 s) from q₀ ≈ 0.13 rad (the schemes'
  // steps add up to h |q̇₀| in the change's step): neither bound at ±0.3 rad is reached, and a step needs no piece for one. So each step takes as many
  // sub-steps as the same rod without limits (its scheme's own halvings: symplectic Euler's
  // explicit damper), and meets no impact. Before, the prediction held the damper's pull
  // −γ q̇ (4.2e6 rad/s² at 1.4 rad/s) as a constant acceleration, which turns the rod back
  // onto the lower bound within 2 u/γ: the change's step was cut into pieces of 1/γ at
  // each apex, chasing a return that never comes (4 sub-steps for 1 under backward
  // Euler, 24 for 16 under symplectic Euler, 8 for 1 under Moreau–Jean).
  it.each(["backward-euler", "symplectic-euler", "moreau-jean"])(
    "%s: 20 s after the change, the sub-steps of the rod without limits every step, no impact",
    (integrator) => {
      const limited = rod(integrator);
      const free = rod(integrator, false);
      limited.step(CHANGE);
      free.step(CHANGE);
      const q0 = limited.state().joints[0].coordinates[0];
      const rate0 = limited.state().joints[0].rates[0];
      const reach = Math.abs(rate0) / GAMMA + (20 * TAU) / KD;
      expect(Math.abs(q0) + reach).toBeLessThan(BOUND);
      const gains = [Input.parse({ type: "gains", id: "servo", kd: KD })];
      limited.schedule(gains);
      free.schedule(gains);
      let mismatched = 0;
      let impacts = 0;
      let drift = 0;
      for (let k = 0; k < 20000; k++) {
        limited.step(1);
        free.step(1);
        if (limited.lastStepStats.substeps !== free.lastStepStats.substeps) mismatched++;
        impacts += limited.lastStepStats.impacts;
        drift = Math.max(drift, Math.abs(limited.state().joints[0].coordinates[0] - q0));
      }
      // the closed form's envelope holds in the scheme too, give or take the change's step's
      // share of the start's rate, at most h |q̇₀| (the trapezoid's h/2: 7e-4 rad)
      expect(drift, integrator).toBeLessThan(reach + H * Math.abs(rate0));
      expect(impacts, integrator).toBe(0);
      expect(mismatched, integrator).toBe(0);
    },
  );
});
