/**
 * Newmark with joints and Newton iterated (β > 0): generalized-alpha's form, the applied
 * forces at Newmark's (β, γ) and the joints held symmetrically (newmark.ts `alphaForm`).
 *
 * A rod hinged at one end turning steadily at ω is a constant rate of its joint, but in the
 * bodies' coordinates its centre circles at ω: an oscillation of frequency ω, carried by
 * the joint's force. Newmark's own joints put that force into a_t, and γ > ½ damps it by
 * ≈ (γ − ½) h ω² a unit time, ¾ of it on this rod (the centre's share m (L/2)² of
 * I = m L²/3): before, the 2 kg, 0.6 m rod spinning freely at 5 rad/s slowed to 3.92 rad/s
 * in 10 s at (0.3025, 0.6), 1/60 s, and to 4.9955 rad/s at (0.3, ½) (the velocity-level
 * joints' drain). Held symmetrically, nothing of the scheme acts along the joints: a turn
 * is a relative equilibrium the step keeps (generalized-alpha.ts).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum, servoRod } from "../../support/models";

const m = 2;
const L = 0.6;
const h = 1 / 60;
const SCHEMES = [
  { beta: 0.3025, gamma: 0.6 },
  { beta: 0.3, gamma: 0.5 },
] as const;

describe("newmark with joints, Newton iterated: the rod hinged at its end, no gravity", () => {
  for (const scheme of SCHEMES)
    it(`(β, γ) = (${scheme.beta}, ${scheme.gamma}): spinning freely at 5 rad/s, its rate kept to 1e-9 over 100 s (80 turns)`, () => {
      const model = rodPendulum({
        mass: m,
        length: L,
        axis: [0, 0, 1],
        solver: { integrator: "newmark", dt: h, ...scheme },
      });
      const omega = 5;
      const rod = model.bodies?.[0] as { velocity?: number[]; angularVelocity?: number[] };
      rod.angularVelocity = [0, 0, omega];
      rod.velocity = [0, (omega * L) / 2, 0];
      const sim = loadModel(model);
      let worst = 0;
      for (let n = 0; n < 6000; n++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().joints[0].rates[0] - omega));
      }
      // (before: 3.92 rad/s after 10 s at (0.3025, 0.6), 4.9955 at (0.3, ½))
      expect(worst).toBeLessThan(1e-9);
    });

  // A velocity servo k_v (ω* − q̇), ω* = 5 rad/s from rest: I q̇' = k_v (ω* − q̇) on the joint
  // (I = m L²/3), λ = k_v/I. Resolved (h λ < 1) the step is Newmark's on the rate,
  //   q̇₁ = q̇₀ + h λ ((1 − γ)(ω* − q̇₀) + γ (ω* − q̇₁)),
  // unresolved backward Euler's, q̇₁ = (q̇₀ + h λ ω*)/(1 + h λ) (newmark-servos.test.ts; the
  // weight 1, AccelerationStepper.holdStiffForces). Both settle at ω*: a constant rate has
  // no acceleration for γ > ½ to damp.
  for (const kv of [0.1, 1e4])
    it(`(β, γ) = (0.3025, 0.6), k_v = ${kv.toExponential(0)} N·m·s/rad: the rate on its recurrence to 1e-9 rad/s at every step over 20 s, settled at ω*, energy.error within 1e-6 J`, () => {
      const { beta, gamma } = SCHEMES[0];
      const target = 5;
      const sim = loadModel(
        servoRod(
          m,
          L,
          { type: "velocity", target, kv },
          // the step's recurrence at h: without the error control, whose estimate halves the
          // first steps of the servo's jump to ω* (newmark.ts `alphaForm`)
          { integrator: "newmark", dt: h, beta, gamma, stepTolerance: null },
        ),
      );
      const lambda = kv / ((m * L * L) / 3);
      const unresolved = h * lambda > 1;
      let w = 0;
      let worst = 0;
      for (let n = 1; n <= 1200; n++) {
        w = unresolved
          ? (w + h * lambda * target) / (1 + h * lambda)
          : (w + h * lambda * ((1 - gamma) * (target - w) + gamma * target)) /
            (1 + h * gamma * lambda);
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().joints[0].rates[0] - w));
      }
      const s = sim.state();
      // (before: settled 6.4e-3 rad/s above ω* at k_v = 1e4, energy.error 1.8e3 J after
      // 20 s; at k_v = 0.1 the drag of the circling centre held it 0.31 rad/s below)
      expect(worst).toBeLessThan(1e-9);
      // the recurrence itself at 20 s: e^{−λ t} of 5 rad/s left at k_v = 0.1 (λ = 0.42/s)
      expect(Math.abs(s.joints[0].rates[0] - target)).toBeLessThan(
        unresolved ? 1e-9 : 1.1 * target * Math.exp(-lambda * 20),
      );
      expect(Math.abs(s.energy.error)).toBeLessThan(1e-6);
    });
});

describe("newmark with joints, Newton iterated: the rod hinged at its end swinging under gravity", () => {
  // 1 kg, 1 m, released horizontally (m g L/2 = 4.9 J of swing), h = 5 ms, 120 s (≈ 50
  // periods of 2.4 s). The swing's motion is the joints' (gravity is constant): held
  // symmetrically, the trapezoidal rule's, whose energy oscillates within O((h ω)²) of
  // its start without drift (generalized-alpha.ts): measured 6.0e-4 J at both schemes.
  const G = 9.81;
  for (const scheme of SCHEMES)
    it(`(β, γ) = (${scheme.beta}, ${scheme.gamma}): the energy within 1e-4 m g L of its start over 50 periods`, () => {
      const sim = loadModel(
        rodPendulum({
          mass: 1,
          length: 1,
          axis: [0, 1, 0],
          gravity: [0, 0, -G],
          solver: { integrator: "newmark", dt: 0.005, ...scheme },
        }),
      );
      const energy = () => {
        const b = sim.state().bodies[0];
        const w = b.angularVelocity[1];
        const v2 = b.velocity[0] ** 2 + b.velocity[1] ** 2 + b.velocity[2] ** 2;
        return 0.5 * v2 + (0.5 * w * w) / 12 + G * b.position[2];
      };
      const e0 = energy();
      let worst = 0;
      for (let n = 0; n < 24000; n++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(energy() - e0));
      }
      // (before: 1.6e-3 J at (0.3, ½), the velocity-level joints' drain; 3.5 J of the 4.9 J
      // at (0.3025, 0.6), γ's damping of the swing through the joints' force)
      expect(worst).toBeLessThan(1e-4 * G);
    });
});
