/**
 * A position servo under the articulated integrator: its work booked against the
 * work–energy theorem. The 2 kg, 0.6 m rod hinged to the ground at its end (rodPendulum,
 * I = m L²/3 = 0.24 kg·m²), no gravity, commanded q* = 0.3 rad from rest at 1/60 s with
 * k_d = 0: the pivot does not move, so the hinge does no work, and the servo's effort
 * τ = −Φ'(e), e = q − q*, Φ(e) = ½ k_p e² (Huber's ∫ clamp(k_p e) de under an effort
 * limit), does the work −ΔΦ along any motion. energy.error = ½ I q̇² + Φ(e) − Φ(−q*) is
 * then the scheme's own energy error, whatever the booking, and it must equal the State's
 * energy.error to rounding. The motion itself is q = q*(1 − cos ω t), ω = √(k_p/I).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum, servoRod } from "../../support/models";

const m = 2;
const L = 0.6;
const I = (m * L * L) / 3;
const h = 1 / 60;
const target = 0.3;

/** The rod hinged at its end (servoRod: about z, no gravity), its servo as given, at h. */
const endRod = (servo: Record<string, unknown>, integrator: string) =>
  loadModel(servoRod(m, L, servo, { integrator, dt: h }));

/** Φ(e) = ∫₀^e clamp(k_p s, ±limit) ds (J). */
function stored(kp: number, limit: number, e: number): number {
  const band = limit / kp;
  const a = Math.abs(e);
  return a <= band ? 0.5 * kp * a * a : limit * a - (0.5 * limit * limit) / kp;
}

describe("articulated books a position servo's work as −ΔΦ, its energy.error the motion's", () => {
  for (const kp of [1e2, 1e4, 1e6])
    it(`k_p = ${kp.toExponential(0)} N·m/rad: energy.error = ½ I q̇² + ½ k_p (q − q*)² − ½ k_p q*² over 300 steps`, () => {
      const sim = endRod({ type: "position", target, kp, kd: 0 }, "articulated");
      const scale = 0.5 * kp * target * target;
      const omega = Math.sqrt(kp / I);
      let worstBooking = 0;
      let worstEnergy = 0;
      let worstAngle = 0;
      for (let n = 1; n <= 300; n++) {
        sim.step(1);
        const s = sim.state();
        const q = s.joints[0].coordinates[0];
        const rate = s.joints[0].rates[0];
        const drift = 0.5 * I * rate * rate + 0.5 * kp * (q - target) ** 2 - scale;
        worstBooking = Math.max(worstBooking, Math.abs(s.energy.error - drift));
        worstEnergy = Math.max(worstEnergy, Math.abs(drift));
        worstAngle = Math.max(worstAngle, Math.abs(q - target * (1 - Math.cos(omega * n * h))));
      }
      // measured 4.5e-15 J (k_p = 1e2), 2.8e-13 J (1e4), 5.9e-11 J (1e6); before, the
      // stages' quadrature of the servo's power −τ q̇ (its error left out of the error
      // control) booked 0.32 J (1e4) and 28 J (1e6) off −ΔΦ within 100 steps
      expect(worstBooking).toBeLessThan(1e-14 * scale + 1e-12);
      // the scheme's own error at its default tolerance (1e-6 m a sub-step), growing
      // with the run: measured 8.8e-5 J of 4.5 J (1e2), 8.3e-2 J of 450 J (1e4), 22.6 J of
      // 4.5e4 J (1e6); the angle within 1.1e-5, 1.3e-4, 1.6e-4 rad of the closed form
      expect(worstEnergy).toBeLessThan(1e-3 * scale);
      expect(worstAngle).toBeLessThan(5e-4);
    });

  it("saturated at its effort limit (Φ linear beyond the band): energy.error the motion's to rounding", () => {
    const kp = 1e4;
    const limit = 300;
    const sim = endRod({ type: "position", target, kp, kd: 0, effortLimit: limit }, "articulated");
    const start = stored(kp, limit, -target);
    let worst = 0;
    let saturated = 0;
    for (let n = 1; n <= 300; n++) {
      sim.step(1);
      const s = sim.state();
      const q = s.joints[0].coordinates[0];
      const rate = s.joints[0].rates[0];
      if (Math.abs(kp * (q - target)) > limit) saturated++;
      const drift = 0.5 * I * rate * rate + stored(kp, limit, q - target) - start;
      worst = Math.max(worst, Math.abs(s.energy.error - drift));
    }
    // the run spends steps past the band (|k_p e| > 300 N·m up to e = 0.03 rad)
    expect(saturated).toBeGreaterThan(10);
    // measured 5.7e-14 J (286 of the 300 steps end saturated)
    expect(worst).toBeLessThan(1e-11);
  });
});

describe("stiff servos under articulated (explicit: the sub-steps resolve them)", () => {
  it("a critically damped servo holds a pendulum at its static deflection k_p (q* − q) = m g (L/2) cos q, k_p = 1e8", () => {
    // (a guard: this ran before too, at 116 sub-steps a step, the 3/ρ bound of ρ ≈ k_d/I)
    const kp = 1e8;
    const kd = 2 * Math.sqrt(kp * I);
    const sim = loadModel(
      rodPendulum({
        mass: m,
        length: L,
        axis: [0, 0, 1],
        gravity: [0, -9.81, 0],
        servo: { type: "position", target, kp, kd },
        solver: { integrator: "articulated", dt: h },
      }),
    );
    sim.step(60);
    const q = sim.state().joints[0].coordinates[0];
    // the fixed point of q = q* − m g (L/2) cos q / k_p (5.6e-8 rad), by iteration
    let closed = target;
    for (let k = 0; k < 5; k++) closed = target - (m * 9.81 * (L / 2) * Math.cos(closed)) / kp;
    expect(target - q).toBeGreaterThan(5e-8);
    expect(Math.abs(q - closed)).toBeLessThan(1e-12);
  });

  it("an undamped servo's ringing at k_p = 1e8 fails its first step naming the servo and generalized-alpha", () => {
    // ω = √(k_p/I) = 2.0e4 rad/s at 0.3 rad: the error control asks ~1e4 sub-steps a step
    const sim = endRod({ type: "position", target, kp: 1e8, kd: 0 }, "articulated");
    let message = "";
    try {
      sim.step(1);
    } catch (err) {
      message = (err as Error).message;
    }
    // h √(k_p/Ĩ), 1/Ĩ = 1/I_c = 4/I the joint free
    const rate = (h * Math.sqrt((4 * 1e8) / I)).toPrecision(3);
    expect(message).toMatch(/^step 1 failed: articulated: /);
    expect(message).toContain(
      `; servos stiffer than the step resolves: "servo" (h·max(kd/I, √(kp/I)) = ${rate}) (articulated's explicit sub-steps must follow them: generalized-alpha takes them implicitly, or a shorter dt)`,
    );
    // the last good state (the start) is kept
    expect(sim.stepCount).toBe(0);
    expect(sim.state().joints[0].coordinates[0]).toBe(0);
  });
});
