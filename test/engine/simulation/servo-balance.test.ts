/**
 * The energy balance of a position servo's work (step-work.ts, AccelerationStepper's
 * unresolved servos) against the work–energy theorem. A 2 kg, 0.6 m rod hinged to the
 * ground at its centre of mass, about z, no gravity: the hinge's reaction acts at the centre,
 * which does not move, and does no work, so the servo's work over the run is the rod's
 * kinetic energy ½ I q̇² (I = m L²/12 = 0.06 kg·m², from the joint rate the State reports)
 * and energy.error = ΔT − W must be rounding's at every step, whatever the scheme does to
 * the motion. The servo is commanded 0.3 rad from rest at 1/60 s with k_d = 0, at
 * k_p = 1e2 (h √(k_p/I) = 0.7, resolved) to 1e12 (w = 6.8e4): the large gains take the
 * weight 1 and the lead δ k_p (actuator.ts); generalized-alpha's error control splits
 * the steps of k_p = 1e4 into sub-steps of h/4 to h/16, some resolved, some not.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import {
  centredServoRod,
  positionServos,
  ROD_TIP_RADIUS,
  rodOverFloor,
  servoChainLinks,
  servoRod,
} from "../../support/models";

const m = 2;
const L = 0.6;
const I = (m * L * L) / 12;
const h = 1 / 60;
const target = 0.3;

/** The rod hinged at its end (servoRod: about z, no gravity), its servo as given, at h. */
/**
 * The end-hinged rod's hinge force |F| (N) from the State, and its closed form from the
 * reported rate q̇ and effort τ, m (L/2) √(q̇⁴ + (τ/I)²), I = m L²/3 (Newton–Euler about the
 * fixed pivot: the centre's centripetal and tangential accelerations).
 */
function hingeReaction(s: {
  joints: { rates: number[]; force: number[] }[];
  actuators: { effort: number }[];
}): { force: number; closedForm: number } {
  const rate = s.joints[0].rates[0];
  const [fx, fy, fz] = s.joints[0].force;
  const closedForm =
    m * (L / 2) * Math.hypot(rate * rate, s.actuators[0].effort / ((m * L * L) / 3));
  return { force: Math.hypot(fx, fy, fz), closedForm };
}

const endRod = (servo: Record<string, unknown>, integrator: string) =>
  loadModel(servoRod(m, L, servo, { integrator, dt: h }));

const centredRod = (integrator: string, kp: number) =>
  loadModel(centredServoRod(m, L, { type: "position", target, kp, kd: 0 }, { integrator, dt: h }));

describe("a servo's booked work is the kinetic energy it gave a rod hinged at its centre", () => {
  for (const integrator of ["newmark", "generalized-alpha", "backward-euler", "moreau-jean"])
    for (const kp of [1e2, 1e4, 1e6, 1e8, 1e10, 1e12])
      it(`${integrator}, k_p = ${kp.toExponential(0)} N·m/rad: energy.error = ½ I q̇² + dissipated to rounding over 300 steps`, () => {
        const sim = centredRod(integrator, kp);
        // the energies involved: the servo's start effort over the command, k_p q*²
        const scale = kp * target * target;
        let worst = 0;
        for (let n = 0; n < 300; n++) {
          sim.step(1);
          const s = sim.state();
          const rate = s.joints[0].rates[0];
          // ΔT − W, W = −dissipated the servo's booked work (T_0 = 0, no potential)
          const balance = 0.5 * I * rate * rate + s.energy.dissipated;
          expect(Math.abs(s.energy.error - balance)).toBeLessThan(1e-12 * (1 + scale));
          worst = Math.max(worst, Math.abs(balance));
        }
        // measured at most 6.4e-6 J (k_p = 1e12, of 9e10 J), and 1.17e-11 J of 900 J at
        // k_p = 1e4 under generalized-alpha (main at 7db7e79 too: rounding); before,
        // generalized-alpha at k_p = 1e4 read −19.4 J from the second step (its memory took
        // the lead's force for the servo's after a sub-step that did not resolve it)
        expect(worst).toBeLessThan(2e-14 * scale + 1e-12);
      });
});

describe("backward-euler books a servo's work at the step's end state before the joints' projection", () => {
  // The rod hinged at its end (rodPendulum, I = m L²/3 = 0.24 kg·m²): backward Euler's
  // M (v_{t+h} − v_t) = h f_{t+h} makes −h v̄ · F_{t+h} the servo's exact share of the kinetic
  // energy's change at the state the step solved; the post-step projection then moves q by
  // the hinge's drift (3.4e-3 rad on the first step at k_p = 1e10), and k_p times that was
  // read as the servo's force: energy.error 5.0e6 J from the first step (k_p = 1e10), 5.0e2 J
  // (1e6), 3.6 J (1e4), 100 times more each 1e2 of k_p. From rest the hinge's reaction does
  // no work on the first step (v_t = 0, G_{t+h} v_{t+h} = 0), so the first step's balance
  // closes to rounding; later steps keep the projection's own error (−2.8e-2 J at
  // k_p = 1e4, −4.9e-2 J at 1e2: the resolved servo's, unchanged).
  for (const kp of [1e4, 1e6, 1e8, 1e10, 1e12])
    it(`k_p = ${kp.toExponential(0)} N·m/rad: energy.error after the first step to rounding of k_p q*², and within 1e-5 J + that over 100 steps`, () => {
      const sim = endRod({ type: "position", target, kp, kd: 0 }, "backward-euler");
      const scale = kp * target * target;
      sim.step(1);
      const s = sim.state();
      // the rod moved: the balance is about tens of joules, not nothing
      expect(s.energy.kinetic).toBeGreaterThan(30);
      // measured 2.6e-12 J (1e4) to 7.5e-7 J (1e12): ≤ 1e-16 k_p q*²
      expect(Math.abs(s.energy.error)).toBeLessThan(1e-15 * scale + 1e-10);
      if (kp < 1e6) return;
      let worst = 0;
      for (let n = 0; n < 100; n++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().energy.error));
      }
      // measured 3.9e-6 J (1e6), 3.0e-10 (1e8), 1.2e-7 (1e10), 9.6e-6 (1e12)
      expect(worst).toBeLessThan(1e-5 + 1e-15 * scale);
    });
});

// newmark at its defaults (β = ¼, γ = ½, Newton iterated) takes generalized-alpha's steps at
// ρ∞ = 1 on a jointed model (newmark.ts `alphaForm`), so the same recurrences hold for it.
// Before (its velocity-level joints and post-step projection) the first step's effort was
// I q̇₁/h too, but from the second step the hinge's velocity-level step took kinetic energy
// the servo put back (energy.error 0.26 J to 0.33 J over 100 steps of the position servo;
// the motor at ω* booked 9.0e-6 J a step, the free rod's loss), which these bounds refuse
// (generalized-alpha's and the symmetric step's: 2e-5 J + 2e-12 k_p q*², 1e-8 J + 1e-10 of
// the motor's scale)
const SYMMETRIC = ["generalized-alpha", "newmark"] as const;

describe("generalized-alpha's step (and newmark's at its defaults) applies the servo's law it books, the rod hinged at its end", () => {
  // The rod hinged at its end (I = m L²/3 = 0.24 kg·m²) under generalized-alpha: a servo the
  // step does not resolve takes the weight 1 and the lead z = q + (h/2) q̇, so from rest its
  // end effort τ is what turned the rod, τ = I q̇₁/h (the backward-Euler momentum of the
  // step), the kinetic energy ½ I q̇₁² = ½ τ h q̇₁ its work on the step's mean rate, and the
  // hinge's reaction consistent with the end (Newton–Euler about a fixed pivot) of size
  // m (L/2) √(q̇⁴ + (τ/I)²). Before, Newton started λ̃ (the hinge's force along the start's
  // directions) from the multipliers of the servo's start force k_p q*, whose removal from
  // its first iterate left that reaction in: the first correction moved λ̃ by
  // ‖ρ Y Δλ̃‖ = 7.5e10 rad/s² (k_p = 1e10) and the next one, 49 rad/s², read as a
  // contraction of 6.5e-10 and was accepted, z 2.1e-4 rad past the target: the servo's
  // end law −2.1e6 N·m where 259 N·m turned the rod, the hinge taking the rest along its
  // start directions; energy.error 3.1e5 J (1e10) and 3.1e7 J (1e12) from that step, the
  // effort reported −2.1e6 N·m and the hinge's reaction 3.7e9 N (the law at x, without the
  // lead: 1.5e9 N·m).
  const Iend = (m * L * L) / 3;
  for (const integrator of SYMMETRIC)
    for (const kp of [1e4, 1e6, 1e8, 1e10, 1e12])
      it(`${integrator}, k_p = ${kp.toExponential(0)} N·m/rad: the first step's effort, work and reaction those of the rod's turn; 100 steps within Newton's tolerance`, () => {
        const sim = endRod({ type: "position", target, kp, kd: 0 }, integrator);
        const scale = kp * target * target;
        sim.step(1);
        const s = sim.state();
        const rate = s.joints[0].rates[0];
        expect(rate).toBeGreaterThan(16);
        const applied = (Iend * rate) / h;
        // measured 6e-4 N·m off (k_p = 1e10) and 6e-2 (1e12): 7e-13 k_p q*², Newton's
        // tolerance times k_p; before −2.1e6 N·m for 259 (1e10)
        const effort = s.actuators[0].effort;
        expect(Math.abs(effort - applied)).toBeLessThan(1e-6 * applied + 2e-12 * scale);
        // ½ I q̇₁² against the booked work; measured 7e-9 J (1e4), 9e-7 (1e8), 9e-5 (1e10),
        // 9e-3 J (1e12): 1e-13 k_p q*², Newton's tolerance (1e-10 of ‖a‖) times k_p
        expect(Math.abs(0.5 * Iend * rate * rate + s.energy.dissipated)).toBeLessThan(
          1e-12 * scale + 1e-8,
        );
        expect(Math.abs(s.energy.error)).toBeLessThan(1e-12 * scale + 1e-8);
        const hinge = hingeReaction(s);
        expect(Math.abs(hinge.force - hinge.closedForm)).toBeLessThan(1e-6 * hinge.closedForm);
        let worst = 0;
        for (let n = 0; n < 100; n++) {
          sim.step(1);
          worst = Math.max(worst, Math.abs(sim.state().energy.error));
        }
        // measured 2.8e-6 J (1e4, the resolved sub-steps'), 1.1e-5 (1e6) to 1.1e-1 J (1e12):
        // 1.2e-12 k_p q*², set on the second step, where the rod stops; before 3.1e5 J (1e10),
        // 3.1e7 J (1e12). (1.3e-13 k_p q*² while Newton's λ̃ started each later step from the
        // last end's multipliers, which diverged on a chain of such servos:
        // test/engine/integrators/servo-chain.test.ts; Newton's tolerance is 1e-10)
        expect(worst).toBeLessThan(2e-5 + 2e-12 * scale);
        // at rest on the target from k_p = 1e6 (at 1e4, w = 3.4, it still swings)
        if (kp >= 1e6)
          expect(Math.abs(sim.state().joints[0].coordinates[0] - target)).toBeLessThan(1e-9);
      });
});

describe("generalized-alpha's motors (and newmark's at its defaults) the step does not resolve: backward Euler of the rate", () => {
  // A velocity servo τ = k_v (ω* − q̇), ω* = 5 rad/s, on the rod hinged at its end: at
  // h k_v/I > 1 the step takes it with the weight 1, I (ω₁ − ω₀) = h k_v (ω* − ω₁), so from
  // rest ω₁ = h k_v ω*/(I + h k_v), the effort I ω₁/h and ½ I ω₁² its work. Before (the
  // same λ̃ start as the position servo's) the first step ended 5.4e-4 rad/s above ω* at
  // k_v = 1e8 and up: energy.error 2.3e3 J (1e8), 2.3e5 (1e10), 2.3e7 J (1e12) from it.
  const Iend = (m * L * L) / 3;
  const omega = 5;
  for (const integrator of SYMMETRIC)
    for (const kv of [1e2, 1e4, 1e6, 1e8, 1e10, 1e12])
      it(`${integrator}, k_v = ${kv.toExponential(0)} N·m·s/rad: the first step's rate, effort and work by the recurrence; 100 steps within Newton's tolerance`, () => {
        const sim = endRod({ type: "velocity", target: omega, kv }, integrator);
        // the energy a step's force error of one part in kv's scale would book
        const scale = kv * omega * omega * h;
        sim.step(1);
        const s = sim.state();
        const rate = s.joints[0].rates[0];
        const expected = (h * kv * omega) / (Iend + h * kv);
        // measured to 2e-14 rad/s at every gain; before 5.4e-4 rad/s above ω* from 1e8
        expect(Math.abs(rate - expected)).toBeLessThan(1e-9);
        const applied = (Iend * rate) / h;
        // measured 0.14 N·m off at 1e12 (k_v times Newton's 1.4e-13 rad/s), 1e-9 below 1e8
        expect(Math.abs(s.actuators[0].effort - applied)).toBeLessThan(1e-8 * applied + 1e-12 * kv);
        // measured 2e-10 J (1e2) to 5.9e-3 J (1e12): 1.4e-14 of the scale
        expect(Math.abs(s.energy.error)).toBeLessThan(1e-13 * scale + 1e-9);
        let worst = 0;
        for (let n = 0; n < 100; n++) {
          sim.step(1);
          worst = Math.max(worst, Math.abs(sim.state().energy.error));
        }
        // measured 2.2e-10 J (1e2) to 3.8 J (1e12, 9e-12 of the scale: Newton's tolerance, 1.9e-2
        // J at newtonTolerance 1e-13); before 2.3e7 J (1e12)
        expect(worst).toBeLessThan(1e-10 * scale + 1e-8);
        expect(Math.abs(sim.state().joints[0].rates[0] - omega)).toBeLessThan(1e-9);
      });
});

describe("moreau-jean's smooth step with servos it does not resolve: λ̃ starts without their start force's reaction", () => {
  // The rod hinged at its end (I = m L²/3 = 0.24 kg·m²) under moreau-jean (θ = w = ½, no
  // contacts: the θ-scheme's symmetric joints, its error control splitting the first step).
  // A servo the step does not resolve takes the weight 1 at the step's end, its start force
  // f_s(t) none, while λ̃ started from the state's multipliers, which hold the joints'
  // reaction to the whole f_s(t): Newton's first correction took it out and the second read
  // as a contraction of 3e-14 and was accepted, its end 2.1e-6 rad/s past the law's root
  // (k_v = 1e12). energy.error = ½ I q̇² + dissipated (no potential, from rest); the hinge's
  // reaction is m (L/2) √(q̇⁴ + (τ/I)²) of the reported effort τ (Newton–Euler about the
  // fixed pivot), and once at rest (or at the motor's steady rate) a step applies no torque:
  // the reported one is Newton's tolerance times the gain.
  const Iend = (m * L * L) / 3;
  for (const kp of [1e4, 1e6, 1e8, 1e10, 1e12])
    it(`position servo, k_p = ${kp.toExponential(0)} N·m/rad: the booked work is ½ I q̇² to 3e-12 k_p q*² over 100 steps, the reaction that of the effort`, () => {
      const sim = endRod({ type: "position", target, kp, kd: 0 }, "moreau-jean");
      const scale = kp * target * target;
      let worst = 0;
      for (let n = 0; n < 100; n++) {
        sim.step(1);
        const s = sim.state();
        const rate = s.joints[0].rates[0];
        const balance = 0.5 * Iend * rate * rate + s.energy.dissipated;
        expect(Math.abs(s.energy.error - balance)).toBeLessThan(1e-9 + 1e-15 * scale);
        worst = Math.max(worst, Math.abs(balance));
        // the hinge's reaction that of the reported effort (the law the step applied, at z),
        // at every step: measured to 5e-16 of it; before, the step's end read the law at x,
        // k_p δ q̇ (87 N where 2.5e-4 N after the first step at 1e12, 546 N at 1e8)
        const effort = s.actuators[0].effort;
        const hinge = hingeReaction(s);
        expect(Math.abs(hinge.force - hinge.closedForm)).toBeLessThan(
          1e-9 * hinge.closedForm + 1e-15,
        );
        if (n < 10 || kp < 1e6) continue;
        // at rest on the target from the 11th step (within 1e-9 rad from the 9th to the 10th:
        // the error control splits the first steps into 16, whose sub-steps keep the step's
        // lead δ = h/2, AccelerationStepper.keepStepLead, and so integrate the law
        // q̇ = (q* − q)/δ, the error shrinking by e⁻² = 0.135 a step, measured 0.135; before,
        // from the 6th, each sub-step's own lead h/32 snapping it 16 times faster): no torque
        // applied, the one reported k_p times 2e-12 rad at most (measured ≤ 1.7e-9 N·m at
        // 1e6, ≤ 2.7e-5 N·m at 1e12 in steps 11 to 20)
        expect(Math.abs(s.joints[0].coordinates[0] - target)).toBeLessThan(1e-9);
        expect(Math.abs(effort)).toBeLessThan(2e-12 * kp + 1e-5);
      }
      // measured 2.6e-11 J (1e4), 1.6e-7 (1e6), 9.0e-6 (1e8), 9.3e-4 (1e10), 9.3e-2 J (1e12):
      // ≤ 1.8e-12 k_p q*², Newton's tolerance times k_p (4.0e-4 J at 1e12 with newtonTolerance
      // 1e-13); before 3.1e7 J at 1e12
      expect(worst).toBeLessThan(3e-12 * scale + 1e-8);
    });

  const omega = 5;
  for (const kv of [1e2, 1e4, 1e6, 1e8, 1e10, 1e12])
    it(`velocity servo, k_v = ${kv.toExponential(0)} N·m·s/rad: the booked work is ½ I q̇² to Newton's tolerance times k_v over 100 steps, the reaction that of the effort`, () => {
      const sim = endRod({ type: "velocity", target: omega, kv }, "moreau-jean");
      const scale = kv * omega * omega * h;
      let worst = 0;
      for (let n = 0; n < 100; n++) {
        sim.step(1);
        const s = sim.state();
        const rate = s.joints[0].rates[0];
        const balance = 0.5 * Iend * rate * rate + s.energy.dissipated;
        expect(Math.abs(s.energy.error - balance)).toBeLessThan(1e-9 + 1e-15 * scale);
        // measured 3.1e-8 J (1e2), 3.7e-6 (1e8), 3.7e-2 J (1e12) after the first step:
        // 9e-14 of the scale; before 5.5e3 J at 1e12 (1.3e-8 of it)
        if (n === 0) expect(Math.abs(balance)).toBeLessThan(2e-13 * scale + 1e-7);
        worst = Math.max(worst, Math.abs(balance));
        const effort = s.actuators[0].effort;
        const hinge = hingeReaction(s);
        expect(Math.abs(hinge.force - hinge.closedForm)).toBeLessThan(1e-9 * hinge.closedForm);
        if (n < 5 || kv < 1e4) continue;
        // the steady rate: no torque applied, the reported one k_v times Newton's tolerance
        // (measured 0.56 N·m at 1e12, 6e-13 of k_v)
        expect(Math.abs(rate - omega)).toBeLessThan(1e-9);
        expect(Math.abs(effort)).toBeLessThan(2e-12 * kv + 1e-8);
      }
      // measured 4.5e-8 J (1e4), 4.5e-4 (1e8), 4.5 J (1e12): 1.1e-11 of the scale, Newton's
      // tolerance (0.1 J at 1e12 with newtonTolerance 1e-12); before 5.5e3 J at 1e12
      expect(worst).toBeLessThan(3e-11 * scale + 1e-7);
    });
});

describe("Newton does not accept a step on the ratio of its first two corrections alone", () => {
  // The rod hinged at its end under moreau-jean (2 kg, 0.6 m, 1/60 s), a servo the step does
  // not resolve: Newton's first correction takes the start guess's share of the servo's
  // force out (a part it removes in one step), and the second's ratio to it read as a
  // contraction of ~1e-10 — accepted, though the correction after it was still millions of
  // times the tolerance (AccelerationStepper.iterate, `trusted`). The step's end is then the
  // converged one: the angle within 1e-12 rad of the same run at newtonTolerance 1e-14, and
  // energy.error (the work booked against ½ I q̇², the hinge doing none) Newton's tolerance's.
  // Before: the PD servo's 2.7e-9 rad off after one step and energy.error 5.5e-2 J; the
  // motor 0.55 J (at 1e-14 too, whose first ratio accepted the same way). Now 2e-14 rad,
  // 1.1e-6 J and 3.7e-6 J after the first step
  const cases = [
    { type: "position", target, kp: 1e8, kd: 5e6 },
    { type: "velocity", target: 5, kv: 1e8 },
  ];
  for (const servo of cases)
    it(`moreau-jean, ${JSON.stringify(servo)}: the first step's end is Newton's root`, () => {
      const run = (newtonTolerance?: number) =>
        loadModel(
          servoRod(m, L, servo, {
            integrator: "moreau-jean",
            dt: h,
            ...(newtonTolerance ? { newtonTolerance } : {}),
          }),
        );
      const sim = run();
      const tight = run(1e-14);
      sim.step(1);
      tight.step(1);
      const angle = (s: typeof sim) => s.state().joints[0].coordinates[0];
      expect(Math.abs(angle(sim) - angle(tight))).toBeLessThan(1e-12);
      expect(Math.abs(sim.state().energy.error as number)).toBeLessThan(1e-4);
      expect(Math.abs(tight.state().energy.error as number)).toBeLessThan(1e-4);
    });
});

describe("moreau-jean books every energy change of its split contact and limit steps once: E_end − E_0 = −dissipated", () => {
  // The servos (k_d = 0) are unresolved (h √(k_p/I) ≫ 1): their lead δ k_p damps them, and the
  // contact step's error test splits the steps (leadTooCoarse). Each model's energy is
  // written out here from the State's joint rates and a closed form of its pose: with every
  // change booked (the servos' work at the state each (sub-)step applied it, the contacts'
  // and limits' projections' kinetic and potential energy changes as their work), the
  // balance E − E_0 + dissipated is the scheme's own error (rounding for one hinged rod).
  const Ip = (m * L * L) / 3;

  /**
   * A rod of m, L hanging from the hinge "pin" (axis x, no gravity), a sphere of 5 cm at its
   * tip 5 cm into an nsc floor (rodOverFloor), its servo (k_d = 0) commanded `command` rad.
   */
  const overlapRod = (command: number, kp = 1e8) =>
    loadModel(rodOverFloor({ mass: m, length: L, servo: { target: command, kp } }));
  /** overlapRod's E − E_0 + dissipated (J): E = ½ I_p q̇², E_0 = 0. */
  const overlapBalance = (s: ReturnType<ReturnType<typeof overlapRod>["state"]>) => {
    const rate = s.joints[0].rates[0];
    return 0.5 * Ip * rate * rate + (s.energy.dissipated as number);
  };

  it("a stiff servo rod started 5 cm into the floor, commanded 0.5 rad: −dissipated is ½ I_p q̇² at every step, and it rests at 0.5 rad", () => {
    // E_0 = 0 (at rest, no gravity); E = ½ I_p q̇², I_p = m L²/3 about the hinge. Step 8 of
    // the first sub-step turns the rod 1.5 rad off the floor (the tip clears it from
    // acos((L − 0.05)/L) = 0.41 rad), at 0.5 rad its tip 2.4 cm above it. Before: the
    // passes' kinetic energy change (1522 → 101 J) unbooked, the next sub-steps weighed from
    // the servo's force before that turn (k_p × 1.5 rad) and its hinge opening at 32 m/s:
    // −1.13e6 J after the first step
    const sim = overlapRod(0.5);
    let split = 0;
    let worst = 0;
    for (let n = 0; n < 200; n++) {
      sim.step(1);
      const s = sim.state();
      split = Math.max(split, s.solver.substeps);
      worst = Math.max(worst, Math.abs(overlapBalance(s)));
    }
    expect(split).toBeGreaterThan(16);
    // measured 1e-9 J (rounding of the booked sums, whose sub-steps' terms reach 1e5 J)
    expect(worst).toBeLessThan(1e-6);
    const s = sim.state();
    expect(Math.abs(s.joints[0].coordinates[0] - 0.5)).toBeLessThan(1e-9);
    expect(Math.abs(s.joints[0].rates[0])).toBeLessThan(1e-9);
  });

  // Commanded inside the floor's reach (q* < a_c = acos((L − r)/L) = 0.4111 rad, where the
  // tip's sphere touches the floor: its centre at z = −L cos a, the floor at −L): the rod
  // rests on the floor at a_c, the floor carrying the servo's torque k_p (a_c − q*) through
  // the lever L sin a_c, the joint at rest. Before, at k_p = 1e8 and 0.3 rad, step 8's
  // first pass turned the rod 4.7 rad (its Newton step on the gap, g/(L sin a) from
  // 0.018 rad) to −0.45 rad, where the servo pressed it into the floor from the far side,
  // hitting it at 220 rad/s every step, E + dissipated rising 5.6e5 J a step (2.2e8 J in
  // 400); at k_p = 1e6 and 0.2 rad the same to −0.43 rad, 741 rad/s, 1.5e5 J a step; at
  // 1e8 and 0.41 rad it was left 0.16 mm above the floor by the pass's second order, out of
  // the next step's contacts, and bounced at up to 14.7 rad/s.
  // (at 0.2 rad and k_p = 1e8, 0.3 and 0.41 rad at 1e6 it rested so before too)
  // E_0 = 0 (at rest, no gravity), E = ½ I_p q̇²: E + dissipated = 0 from the first step on.
  // Its first sub-steps start from inside the floor, and one of them strikes it (the rod
  // turning back at 41 to 343 rad/s against the servo): the joints' impulse of that step,
  // along the hinge's Jacobian at the end (velocity level) or at both ends (the symmetric
  // redo, moreau-jean.ts positionJointsTouched), did work on the step's mean velocity that
  // no booking took (moreau-jean.ts, "Energy of a strike"): the first step read E +
  // dissipated = 114.6 J (0.3 rad, k_p = 1e8), 529 J (0.2, 1e8), 1577 J (0.2, 1e6), and
  // 1.9e-4 J (0.41, 1e8), flat after it
  const cases = [
    { command: 0.3, kp: 1e8 },
    { command: 0.2, kp: 1e8 },
    { command: 0.41, kp: 1e8 },
    { command: 0.2, kp: 1e6 },
  ];
  for (const { command, kp } of cases)
    it(`commanded ${command} rad (k_p = ${kp.toExponential(0)}), inside the floor's reach: it rests on the floor at acos((L − r)/L), the floor holding k_p (a_c − q*), and E + dissipated = 0 from the first step over 400 steps`, () => {
      const r = ROD_TIP_RADIUS;
      const ac = Math.acos((L - r) / L);
      const lever = L * Math.sin(ac);
      // the contacts' hold leaves the tip within HOLD_TOLERANCE = 1e-7 m of the floor
      // (contact/projection.ts): δa = 1e-7/(L sin a_c) = 4.2e-7 rad of the joint
      const da = 1e-7 / lever;
      const sim = overlapRod(command, kp);
      sim.step(1);
      // the first step (booked terms up to 2.6e5 J): measured 1.8e-7, 6.2e-8, −1.7e-9,
      // −3.7e-8 J at a fixed 3e-4 m step tolerance; 3.5e-6 J (0.2 rad, 1e8) at the rod's
      // body-length one (1.8e-4 m, more sub-steps): round-off and Newton's tolerance on the
      // servo's work, whose scale is k_p (a_c − q*)² (4.5e6 J there)
      expect(Math.abs(overlapBalance(sim.state()))).toBeLessThan(
        1e-6 + 2e-12 * kp * (ac - command) ** 2,
      );
      let worst = 0;
      for (let n = 1; n < 400; n++) {
        sim.step(1);
        const s = sim.state();
        worst = Math.max(worst, Math.abs(overlapBalance(s)));
        // at rest from the first step's end (measured ≤ 6.4e-10 rad/s)
        expect(Math.abs(s.joints[0].rates[0])).toBeLessThan(1e-6);
      }
      // resting, the servo's k_p (a_c − q*) ≈ 1e7 N·m on the rates' noise: measured 4.9e-5 J,
      // 8.8e-4 J, 6.3e-8 J, 1.3e-7 J
      expect(worst).toBeLessThan(2e-11 * kp);
      const s = sim.state();
      const q = s.joints[0].coordinates[0];
      // the tip on the floor: its gap L (1 − cos q) − r (measured −7.0e-8 to −9.6e-8 m)
      expect(Math.abs(L * (1 - Math.cos(q)) - r)).toBeLessThan(1e-7);
      expect(Math.abs(q - ac)).toBeLessThan(da);
      // the servo's torque at a_c, and the floor's normal force holding it through the lever
      // (moments about the hinge; measured within 1.2e2 N of 4.6e7 N at 1e8, 0.3 rad)
      const torque = kp * (ac - command);
      expect(Math.abs(s.actuators[0].effort + torque)).toBeLessThan(kp * da);
      expect(s.contacts).toHaveLength(1);
      expect(Math.abs(s.contacts[0].normalForce - torque / lever)).toBeLessThan(
        (2 * kp * da) / lever,
      );
    });

  it("commanded 1 rad (k_p = 1e6), beyond the floor's reach: it rings off the floor, E + dissipated = 0 from the first step over 400 steps", () => {
    // The first step's sub-steps strike the floor at up to 343 rad/s, and it rings
    // between 0.43 and 1.57 rad, splitting its steps (up to 56 sub-steps) as it passes
    // the floor's activation gap. Before, E + dissipated read 2.37e4 J after the first
    // step and crept 94 J more over 400 steps
    const sim = overlapRod(1, 1e6);
    let worst = 0;
    let low = Number.POSITIVE_INFINITY;
    let high = Number.NEGATIVE_INFINITY;
    for (let n = 0; n < 400; n++) {
      sim.step(1);
      const s = sim.state();
      worst = Math.max(worst, Math.abs(overlapBalance(s)));
      low = Math.min(low, s.joints[0].coordinates[0]);
      high = Math.max(high, s.joints[0].coordinates[0]);
      // the first step (measured −2.4e-7 J)
      if (n === 0) expect(Math.abs(overlapBalance(s))).toBeLessThan(1e-6);
    }
    // it moved: rang over more than a radian
    expect(high - low).toBeGreaterThan(1);
    // measured 1.7e-5 J, of the servo's ½ k_p q*² = 5e5 J
    expect(worst).toBeLessThan(1e-4);
  });

  it("the 3-link servo chain started 5 cm into the floor: −dissipated is its potential energy's rise to the commanded pose at rest, as the resting chain's", () => {
    // commands 0.3/0.5/0.2 rad about x, y, x (k_p = 1e8, 5 ms, g = 9.81); the lowest sphere
    // 5 cm into the floor (offset −1.45; −1.5: resting on it). At rest at q* the links'
    // centres are at z_0 = −l cos a, z_1 = −2 l cos a − l cos a cos b,
    // z_2 = −2 l cos a − 2 l cos a cos b + l (sin a sin c − cos a cos b cos c), l = 0.25 m
    // (R_x(a) R_y(b) R_x(c) applied to (0, 0, −l)), from −0.25, −0.75, −1.25 m at rest:
    // E_end − E_0 = m g Σ Δz. Before: the contacts' projection of the first sub-step
    // unbooked and the next sub-steps weighed from the servos' forces before it: −4.8e5 J
    const [a, b, c] = [0.3, 0.5, 0.2];
    const l = 0.25;
    const z = [
      -l * Math.cos(a),
      -2 * l * Math.cos(a) - l * Math.cos(a) * Math.cos(b),
      -2 * l * Math.cos(a) -
        2 * l * Math.cos(a) * Math.cos(b) +
        l * (Math.sin(a) * Math.sin(c) - Math.cos(a) * Math.cos(b) * Math.cos(c)),
    ];
    const rise = 9.81 * (z[0] + 0.25 + z[1] + 0.75 + z[2] + 1.25);
    const chain = (offset: number) => {
      const { bodies, joints } = servoChainLinks();
      return loadModel({
        gravity: [0, 0, -9.81],
        bodies: [
          { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset }] },
          ...bodies.map((body) => ({
            ...body,
            shapes: [{ type: "sphere", radius: 0.05, position: [0, 0, -0.2] }],
          })),
        ],
        joints,
        actuators: positionServos(joints, (i) => [a, b, c][i], 1e8, 0),
        contact: { method: "nsc" },
        solver: { integrator: "moreau-jean", dt: 0.005 },
      } as ModelInput);
    };
    for (const offset of [-1.5, -1.45]) {
      const sim = chain(offset);
      for (let n = 0; n < 40; n++) sim.step(1);
      const s = sim.state();
      // at rest at the commands (the servos' static deflection m g l / k_p ~ 1e-7 rad)
      for (let k = 0; k < 3; k++) {
        expect(Math.abs(s.joints[k].coordinates[0] - [a, b, c][k])).toBeLessThan(1e-5);
        expect(Math.abs(s.joints[k].rates[0])).toBeLessThan(1e-3);
      }
      // measured 1.8 J (resting) and 9.5 J (5 cm in): the scheme's error on the first
      // sub-steps, which the servos drive at up to 1.3e4 J
      expect(Math.abs(-(s.energy.dissipated as number) - rise)).toBeLessThan(20);
    }
  });

  it("a servo rod swinging back past its limit (k_p = 1e6, k_d = 0): −dissipated is ½ I_p (q̇² − q̇₀²) at every step, and it rests at its command", () => {
    // the rod of m, L hinged at its end about y, no gravity, its bound q ≤ −0.45 rad (the
    // model pose, q = 0, is assembled onto it), started at 100 rad/s away from the bound; the
    // servo's target −0.5 rad lies 0.05 rad inside, and swings it back past the bound
    // (5.5 mrad at 3.1 ms) within a smooth step that split itself. The limits' projection then
    // moved it back onto the bound, and the next sub-step was weighed from the servo's force
    // before that move: −872 J from the first step on
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        {
          id: "rod",
          mass: m,
          position: [L / 2, 0, 0],
          inertia: [1e-3, I, I],
          angularVelocity: [0, -100, 0],
          velocity: [0, 0, 100 * (L / 2)],
        },
      ],
      joints: [
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "rod", point: [-L / 2, 0, 0] },
          axis: [0, 1, 0],
          limits: { lower: -3, upper: -0.45 },
        },
      ],
      actuators: [{ id: "servo", joint: "pin", type: "position", target: -0.5, kp: 1e6, kd: 0 }],
      solver: { integrator: "moreau-jean", dt: 0.005 },
    } as ModelInput);
    const rate0 = sim.state().joints[0].rates[0];
    const e0 = 0.5 * Ip * rate0 * rate0;
    expect(e0).toBeGreaterThan(100);
    let worst = 0;
    let split = 0;
    for (let n = 0; n < 60; n++) {
      sim.step(1);
      const s = sim.state();
      split = Math.max(split, s.solver.substeps);
      const rate = s.joints[0].rates[0];
      worst = Math.max(
        worst,
        Math.abs(0.5 * Ip * rate * rate - e0 + (s.energy.dissipated as number)),
      );
    }
    expect(split).toBeGreaterThan(8);
    // measured 1.6e-8 J
    expect(worst).toBeLessThan(1e-6);
    const s = sim.state();
    expect(Math.abs(s.joints[0].coordinates[0] + 0.5)).toBeLessThan(1e-9);
  });
});
