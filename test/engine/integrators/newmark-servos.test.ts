/**
 * Newmark's servos at γ = ½ with β ≠ γ/2 (β = 0.3), and at (0.3025, 0.6); Newton iterated, the
 * jointed steps are generalized-alpha's form at Newmark's (β, γ), the joints held
 * symmetrically (newmark.ts `alphaForm`; before, at the velocity level for γ = ½ and the
 * position level for γ > ½).
 *
 * A servo the step does not resolve (h·max(k_d/I, √(k_p/I)) > 1) takes its force with the
 * weight 1 in the velocity and its stiffness at the lead z = q + δ q̇, δ = h − μ,
 * μ = c_x/c_v = h β/γ (AccelerationStepper.holdStiffForces), so that for its coordinate
 *   q₁ = q₀ + h q̇₀ + μ (q̇₁ − q̇₀),   I q̇₁ = I q̇₀ + h τ(q₁ + δ' q̇₁, q̇₁),
 * δ' = δ where k_d < δ k_p, else 0 (JointActuator.leadStiffness): backward Euler of
 * (z, q̇). Newmark's own position update is that plus κ a_t, κ = h² (½ − β/γ) (−0.1 h² at
 * β = 0.3), and κ's share of the servo's start force, ~k_p times its error, stayed in it
 * (AccelerationStepper.shiftStiffStart (3)): a velocity servo's first step ended at
 * q = −2.66 rad turning at −2.49 rad/s, the rod hinged at its centre diverged from
 * h √(k_p/I) = 6.8 on, and the 3-link servo chain at k_p = 1e8 failed its second step even
 * at h/16.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { centredServoRod, positionServos, servoChainLinks, servoRod } from "../../support/models";

const m = 2;
const L = 0.6;
const h = 1 / 60;
const beta = 0.3;
const gamma = 0.5;
const SOLVER = { integrator: "newmark", dt: h, beta, gamma };
/**
 * SOLVER without the error control (solver.stepTolerance, on by default for every member's
 * jointed steps: newmark.ts `alphaForm`), for the tests that write out the step's recurrence
 * at h: its estimate halves the first steps of a servo's jump to its target (and every step
 * of one the step does not resolve), which are then not the step at h they test.
 */
const AT_H = { ...SOLVER, stepTolerance: null };
/** μ = c_x/c_v (s) at (β, γ) = (0.3, ½). */
const mu = (h * beta) / gamma;
/**
 * (β, γ) of the position servo's and the chain's cases: γ = ½, and the numerically damped
 * member, whose unresolved servos took the scheme's own weights before the weight 1:
 * Newmark's rates for h ω ≫ 1 scale with h ω, damped by ρ∞ = 0.82 a step.
 */
const SCHEMES = [
  { beta: 0.3, gamma: 0.5 },
  { beta: 0.3025, gamma: 0.6 },
] as const;

describe("newmark (β = 0.3, γ = ½): a velocity servo k_v (ω* − q̇) on a hinged rod", () => {
  // No gravity, ω* = 5 rad/s from rest. The closed form ω(t) = ω* (1 − e^{−λ t}), λ = k_v/I;
  // the step, unresolved (h λ > 1), is backward Euler's, ω₁ = (ω₀ + h λ ω*)/(1 + h λ), its
  // error from ω* shrinking by 1/(1 + h λ) a step; resolved it is the trapezoid's. The rod
  // hinged at its centre (I = m L²/12 = 0.06 kg·m²) turns exactly as I θ̈ = τ; the rod hinged
  // at its end (I = m L²/3), whose hinge holds its centre on a circle, its rate as exactly
  // (9e-13 rad/s; 3.3e-8 with the velocity-level joints before), its first step's angle
  // within 1.6e-5 rad, which then lags the recurrence by the symmetric joints' phase error
  // of a turn, (h ω)²/8 of it (generalized-alpha.ts): 0.043 rad over 10 s at 5 rad/s (the
  // velocity-level joints' chord against its arc lagged 0.035 rad; 0.031 rad at β = ¼
  // linearized, where κ = 0: not the servo's). Newmark's own update of the bodies'
  // coordinates is not the joint angle's: the recurrence holds on the rate.
  const target = 5;
  for (const { rod, kv, tolerance, angleTolerance } of [
    { rod: "centre", kv: 1e-1, tolerance: 1e-9, angleTolerance: 1e-9 },
    { rod: "centre", kv: 1e4, tolerance: 1e-9, angleTolerance: 1e-9 },
    { rod: "end", kv: 1e4, tolerance: 1e-9, angleTolerance: 1e-4 },
  ])
    it(`hinged at its ${rod}, k_v = ${kv.toExponential(0)} N·m·s/rad: the rate and angle on the step's recurrence, the rate on the closed form, over 10 s`, () => {
      const servo = { type: "velocity", target, kv };
      const I = rod === "centre" ? (m * L * L) / 12 : (m * L * L) / 3;
      const sim = loadModel(
        rod === "centre" ? centredServoRod(m, L, servo, AT_H) : servoRod(m, L, servo, AT_H),
      );
      const lambda = kv / I;
      const unresolved = h * lambda > 1;
      let [q, w] = [0, 0];
      let worstRate = 0;
      let worstAngle = 0;
      let worstClosed = 0;
      for (let n = 1; n <= 600; n++) {
        // the step's recurrence: backward Euler's rate and q₁ = q₀ + (h − μ) ω₀ + μ ω₁
        // unresolved, else the trapezoid's rate and Newmark's angle (a = λ (ω* − ω))
        const w1 = unresolved
          ? (w + h * lambda * target) / (1 + h * lambda)
          : (w + h * lambda * (target - w / 2)) / (1 + (h * lambda) / 2);
        q += unresolved
          ? (h - mu) * w + mu * w1
          : h * w + h * h * lambda * ((0.5 - beta) * (target - w) + beta * (target - w1));
        w = w1;
        sim.step(1);
        const s = sim.state();
        const rate = s.joints[0].rates[0];
        worstRate = Math.max(worstRate, Math.abs(rate - w));
        if (rod === "centre" || n === 1)
          worstAngle = Math.max(worstAngle, Math.abs(s.joints[0].coordinates[0] - q));
        // the closed form, within the scheme's error: backward Euler's (its own bound) or
        // the trapezoid's (h λ)³/12 a step, relative
        const exact = target * (1 - Math.exp(-lambda * n * h));
        const bound = unresolved
          ? target / (1 + h * lambda) ** n + tolerance
          : (target * (h * lambda) ** 3 * n) / 12 + tolerance;
        worstClosed = Math.max(worstClosed, Math.abs(rate - exact) / bound);
      }
      // (before, at k_v = 1e4: the end-hinged rod's first step at q = −2.66 rad, −2.49 rad/s)
      expect(worstRate).toBeLessThan(tolerance);
      expect(worstAngle).toBeLessThan(angleTolerance);
      expect(worstClosed).toBeLessThan(1);
    });
});

describe("newmark: a position servo on the rod hinged at its centre", () => {
  // I θ̈ = k_p (θ* − θ) − k_d θ̇ exactly (centredServoRod), I = m L²/12 = 0.06 kg·m²,
  // θ* = 0.3 rad from rest at 0.
  const I = (m * L * L) / 12;
  const target = 0.3;

  /**
   * The step's (θ, θ̇) after each of n steps: Newmark's recurrence with a_t = τ(θ, θ̇)/I
   * where the step resolves the servo, else the unresolved servo's (file comment), at (β, γ).
   */
  function recurrence(
    { beta, gamma }: (typeof SCHEMES)[number],
    kp: number,
    kd: number,
    n: number,
  ): [number, number][] {
    const mu = (h * beta) / gamma;
    const lead = h - mu;
    const out: [number, number][] = [];
    let [th, v] = [0, 0];
    if (h * Math.max(kd / I, Math.sqrt(kp / I)) > 1) {
      const d = kd < lead * kp ? lead : 0;
      for (let k = 0; k < n; k++) {
        // I v₁ = I v₀ + h (k_p (θ* − θ₁ − d v₁) − k_d v₁), θ₁ = θ₀ + (h − μ) v₀ + μ v₁
        const v1 =
          (I * v + h * kp * (target - th - (h - mu) * v)) / (I + h * kd + h * kp * (mu + d));
        th += (h - mu) * v + mu * v1;
        v = v1;
        out.push([th, v]);
      }
      return out;
    }
    let a = (kp * (target - th) - kd * v) / I;
    for (let k = 0; k < n; k++) {
      const thPred = th + h * v + h * h * (0.5 - beta) * a;
      const vPred = v + h * (1 - gamma) * a;
      const a1 = (kp * (target - thPred) - kd * vPred) / (I + h * h * beta * kp + h * gamma * kd);
      th = thPred + h * h * beta * a1;
      v = vPred + h * gamma * a1;
      a = a1;
      out.push([th, v]);
    }
    return out;
  }

  for (const scheme of SCHEMES)
    for (const [kp, kd] of [
      [1e2, 0],
      [1e2, 0.5],
      [1e3, 0],
      [1e4, 0],
      [1e4, 50],
      [1e8, 0],
      [1e8, 1e5],
    ])
      it(`β = ${scheme.beta}, γ = ${scheme.gamma}, k_p = ${kp.toExponential(0)}, k_d = ${kd}: on the step's recurrence to 1e-9 rad over 10 s (h √(k_p/I) = ${(h * Math.sqrt(kp / I)).toFixed(2)})`, () => {
        const sim = loadModel(
          centredServoRod(m, L, { type: "position", target, kp, kd }, { ...AT_H, ...scheme }),
        );
        const expected = recurrence(scheme, kp, kd, 600);
        let worst = 0;
        let worstRate = 0;
        for (let n = 0; n < 600; n++) {
          sim.step(1);
          const s = sim.state();
          worst = Math.max(worst, Math.abs(s.joints[0].coordinates[0] - expected[n][0]));
          worstRate = Math.max(worstRate, Math.abs(s.joints[0].rates[0] - expected[n][1]));
          expect(s.solver.substeps).toBe(1);
        }
        expect(worst).toBeLessThan(1e-9);
        expect(worstRate).toBeLessThan(1e-9 * (1 + Math.sqrt(kp / I)));
      });

  it("k_p = 1e2, k_d = 0.5 at h = 1 ms: the closed form of the damped oscillator over 4 s (12 periods)", () => {
    // ω_n = √(k_p/I) = 40.8 rad/s, ζ = k_d/(2 √(k_p I)) = 0.102: θ(t) = θ* [1 − e^{−ζ ω_n t}
    // (cos ω_d t + ζ ω_n/ω_d sin ω_d t)]. Newmark's period at γ = ½ is longer by
    // (β − 1/12)(h ω)²/2 (1/12 at the trapezoid's β = ¼): a phase lag of
    // (0.3 − 1/12)(0.0408)²/2 · 163 rad = 0.029 rad by 4 s, θ* e^{−ζ ω_n t} times that in the
    // angle (with half again for the amplitude's own error and the lag's second order)
    const kp = 1e2;
    const kd = 0.5;
    const dt = 1e-3;
    const wn = Math.sqrt(kp / I);
    const zeta = kd / (2 * Math.sqrt(kp * I));
    const wd = wn * Math.sqrt(1 - zeta * zeta);
    const sim = loadModel(
      centredServoRod(m, L, { type: "position", target, kp, kd }, { ...SOLVER, dt }),
    );
    let worst = 0;
    for (let n = 1; n <= 4000; n++) {
      sim.step(1);
      const t = n * dt;
      const exact =
        target *
        (1 - Math.exp(-zeta * wn * t) * (Math.cos(wd * t) + ((zeta * wn) / wd) * Math.sin(wd * t)));
      const phase = ((beta - 1 / 12) * (dt * wn) ** 2 * wn * t) / 2;
      const bound = target * Math.exp(-zeta * wn * t) * (phase + 1e-6) * 1.5;
      worst = Math.max(worst, Math.abs(sim.state().joints[0].coordinates[0] - exact) / bound);
    }
    expect(worst).toBeLessThan(1);
  });
});

describe("newmark: the 3-link chain with a stiff servo on every joint", () => {
  // servoChainLinks (1 kg, 0.5 m links about x, y, x, gravity −z), every servo at k_p with
  // no effort limit, the middle one commanded 0.5 rad at the start, h = 5 ms (h √(k_p/I) =
  // 600 on the middle joint at 1e8). At rest the x-joints carry no torque and the middle
  // servo holds the lower links' gravity moment: k_p (q* − q) = m g (r₁ + r₂) sin q, r₁ =
  // 0.25 m, r₂ = 0.75 m. Before, at γ = ½: `diverged` (k_p = 1e8) or Newton failing at
  // h/16 (1e10) in the first two steps; at γ = 0.6 (the servos at the scheme's weights) a
  // ring of 1.2e7 J (1e8), 9.1e5 J (k_d = 1e5) and 5.9e10 J (1e10) of kinetic energy, and
  // energy.error 4.3e7 J, 1.9e8 J and 1.0e11 J.
  const G = 9.81;
  const dt = 0.005;
  const target = 0.5;
  for (const scheme of SCHEMES)
    for (const [kp, kd] of [
      [1e8, 0],
      [1e8, 1e5],
      [1e10, 0],
    ])
      it(`β = ${scheme.beta}, γ = ${scheme.gamma}, k_p = ${kp.toExponential(0)}, k_d = ${kd.toExponential(0)}: 2 s, at rest on the static pose, energy.error set in the snap and then held`, () => {
        const { bodies, joints } = servoChainLinks();
        const sim = loadModel({
          gravity: [0, 0, -G],
          bodies,
          joints,
          actuators: positionServos(joints, 0, kp, kd),
          solver: { ...SOLVER, ...scheme, dt },
        } as ModelInput);
        sim.schedule([{ type: "actuator", id: "sj1", value: target }]);
        let rest = target;
        for (let i = 0; i < 50; i++) rest = target - (G * (0.25 + 0.75) * Math.sin(rest)) / kp;
        let peak = 0;
        let settled = 0;
        let worstRate = 0;
        let drift = 0;
        for (let n = 1; n <= 400; n++) {
          sim.step(1);
          const s = sim.state();
          peak = Math.max(peak, s.energy.kinetic);
          if (n === 20) settled = s.energy.error;
          if (n > 20) drift = Math.max(drift, Math.abs(s.energy.error - settled));
          if (n > 300)
            for (const j of s.joints) worstRate = Math.max(worstRate, Math.abs(j.rates[0]));
        }
        const s = sim.state();
        const [q0, q1, q2] = s.joints.map((j) => j.coordinates[0]);
        expect(Math.abs(q0)).toBeLessThan(1e-12);
        expect(Math.abs(q2)).toBeLessThan(1e-12);
        expect(Math.abs(q1 - rest)).toBeLessThan(1e-9);
        // at rest, not turning: with only the servos' start force taken out of κ a_t the middle
        // servo held its z at rest while its rate read h (β/γ − ½) m g (r₁ + r₂) sin q/I
        // = −3.5e-3 rad/s (AccelerationStepper.shiftStiffStart (3))
        expect(worstRate).toBeLessThan(1e-7);
        // energy.error, set in the first steps, where the lower links swing at ~100 rad/s
        // (peak 2.3e3 to 3.3e3 J) and the servos stop them within a step, then held: with
        // the joints held symmetrically 0.01 to 0.10 J, one sub-step a step. Before, at
        // γ = ½ the velocity-level joints' impulses' work on the mean velocity (first order
        // in the step's turn), 54 to 92 J; at γ = 0.6 the position-level joints', −35 and
        // −38 J at k_d = 0, −616 J at k_d = 1e5, whose second step Newton split into 7
        // sub-steps (16 at k_p = 1e10)
        expect(Math.abs(settled)).toBeLessThan(1e-4 * peak);
        expect(drift).toBeLessThan(1e-6 * peak);
      });
});
