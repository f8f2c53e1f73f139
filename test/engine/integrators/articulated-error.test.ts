/**
 * The error control of articulated's implicit servo steps (ARS(2,2,2), articulated.ts
 * imexError): the end-hinged 2 kg, 0.6 m rod (I = m L²/3 = 0.24 kg·m², no gravity) held
 * by an overdamped position servo (k_p = 1e5 N·m/rad, k_d = 1e4 N·m·s/rad: its estimate
 * ~930 explicit sub-steps a 1/60 s step, so taken implicitly) following q*(t) = A sin ωt
 * from rest. The motion is linear, I q̈ + k_d q̇ + k_p q = k_p q* + k_d q̇*, and its closed
 * form is the forced response Im[A H e^{iωt}], H = (k_p + iω k_d)/(k_p − I ω² + iω k_d),
 * plus the two decaying modes e^{r t}, I r² + k_d r + k_p = 0, that start it from rest.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { servoRod } from "../../support/models";

const m = 2;
const L = 0.6;
const I = (m * L * L) / 3;
const h = 1 / 60;
const kp = 1e5;
const kd = 1e4;
const A = 0.3;
const omega = 2 * Math.PI;

/** q(t), q̇(t) of the closed form (file comment). */
function closedForm(): { q: (t: number) => number; v: (t: number) => number } {
  const dr = kp - I * omega * omega;
  const di = omega * kd;
  const dd = dr * dr + di * di;
  // H = (k_p + i ω k_d)/(d_r + i d_i)
  const hr = (kp * dr + omega * kd * di) / dd;
  const hi = (omega * kd * dr - kp * di) / dd;
  const qp = (t: number) => A * (hr * Math.sin(omega * t) + hi * Math.cos(omega * t));
  const vp = (t: number) => A * omega * (hr * Math.cos(omega * t) - hi * Math.sin(omega * t));
  const disc = Math.sqrt(kd * kd - 4 * I * kp);
  const r1 = (-kd + disc) / (2 * I);
  const r2 = (-kd - disc) / (2 * I);
  // from rest: c₁ + c₂ = −q_p(0), r₁ c₁ + r₂ c₂ = −q̇_p(0)
  const c1 = (-vp(0) + r2 * qp(0)) / (r1 - r2);
  const c2 = -qp(0) - c1;
  return {
    q: (t) => qp(t) + c1 * Math.exp(r1 * t) + c2 * Math.exp(r2 * t),
    v: (t) => vp(t) + r1 * c1 * Math.exp(r1 * t) + r2 * c2 * Math.exp(r2 * t),
  };
}

/** 10 s (10 periods) at the tolerance: the worst angle and rate off the closed form. */
function run(stepTolerance: number) {
  const sim = loadModel(
    servoRod(
      m,
      L,
      { type: "position", target: { type: "sine", amplitude: A, frequency: 1 }, kp, kd },
      { integrator: "articulated", dt: h, stepTolerance },
    ),
  );
  const { q, v } = closedForm();
  let angle = 0;
  let rate = 0;
  let missed = 0;
  let worstError = 0;
  let energy = 0;
  for (let n = 1; n <= 600; n++) {
    sim.step(1);
    const s = sim.state();
    angle = Math.max(angle, Math.abs(s.joints[0].coordinates[0] - q(n * h)));
    rate = Math.max(rate, Math.abs(s.joints[0].rates[0] - v(n * h)));
    energy = Math.max(energy, Math.abs(s.energy.error as number));
    if (n > 1) {
      if (!s.solver.stepToleranceMet) missed++;
      worstError = Math.max(worstError, s.solver.stepError);
    }
  }
  return { angle, rate, missed, worstError, energy };
}

describe("articulated's implicit servo steps under stepTolerance", () => {
  it("follow the closed form to within an error that falls with the tolerance, each step but the first within it", () => {
    const coarse = run(1e-6);
    const fine = run(1e-8);
    // (the first step: the fast mode, r₂ ≈ −k_d/I, takes the rod from rest to the slow
    // mode's rate within ~3e-5 s, motion the error control would follow to its end; its
    // sub-steps at their shortest, h/1024, are accepted, stepToleranceMet false)
    for (const [r, tol] of [
      [coarse, 1e-6],
      [fine, 1e-8],
    ] as const) {
      expect(r.missed).toBe(0);
      expect(r.worstError).toBeLessThanOrEqual(tol);
      // the servo's work booked as its impulses on the hinge's mean rates: exact on a
      // hinge to the ground (articulated-servos.ts), whatever the error
      expect(r.energy).toBeLessThan(1e-12);
    }
    // measured 6.4e-7 rad, 8.0e-6 rad/s at 1e-6 (12.2 sub-steps a step), 1.2e-8 rad,
    // 6.0e-7 rad/s at 1e-8 (121); before, fixed 5 ms sub-steps whatever the tolerance:
    // 5.5e-6 rad, 5.4e-5 rad/s
    expect(coarse.angle).toBeLessThan(1.5e-6);
    expect(coarse.rate).toBeLessThan(1.5e-5);
    expect(fine.angle).toBeLessThan(coarse.angle / 10);
    expect(fine.rate).toBeLessThan(coarse.rate / 5);
  });
});

describe("articulated's implicit servo steps that start saturated, under stepTolerance", () => {
  // The same rod and servo with its effort limited to 2.5 N·m, below the I A ω² = 2.84 N·m
  // the sine asks: the servo saturates from the start and stays there but for its passages
  // through its band (|law| < limit) between +limit and −limit, each ~3e-5 s; the steps
  // start saturated (they kept fixed 5 ms sub-steps before). The exact motion is
  // I q̈ = clamp(k_p (q* − q) + k_d (q̇* − q̇), ±limit), taken here by RK4 at h/16 667
  // (converged to 1e-9 rad: the same at half that).
  const limit = 2.5;
  const law = (t: number, q: number, v: number) =>
    Math.max(
      -limit,
      Math.min(
        limit,
        kp * (A * Math.sin(omega * t) - q) + kd * (A * omega * Math.cos(omega * t) - v),
      ),
    ) / I;
  /** The exact (q, q̇) at the end of each of the 600 steps (file comment). */
  function reference(): Float64Array {
    const per = 16667;
    const dt = h / per;
    const out = new Float64Array(1200);
    let q = 0;
    let v = 0;
    for (let n = 1; n <= 600; n++) {
      for (let k = 0; k < per; k++) {
        const t = (n - 1) * h + k * dt;
        const a1 = law(t, q, v);
        const a2 = law(t + dt / 2, q + (dt / 2) * v, v + (dt / 2) * a1);
        const a3 = law(t + dt / 2, q + (dt / 2) * (v + (dt / 2) * a1), v + (dt / 2) * a2);
        const a4 = law(t + dt, q + dt * (v + (dt / 2) * a2), v + dt * a3);
        q += (dt / 6) * (v + 2 * (v + (dt / 2) * a1) + 2 * (v + (dt / 2) * a2) + (v + dt * a3));
        v += (dt / 6) * (a1 + 2 * a2 + 2 * a3 + a4);
      }
      out[2 * n - 2] = q;
      out[2 * n - 1] = v;
    }
    return out;
  }
  /** 10 s at the tolerance: the worst angle and rate off the exact motion, and the steps' stats. */
  function run(exact: Float64Array, stepTolerance: number) {
    const sim = loadModel(
      servoRod(
        m,
        L,
        {
          type: "position",
          target: { type: "sine", amplitude: A, frequency: 1 },
          kp,
          kd,
          effortLimit: limit,
        },
        { integrator: "articulated", dt: h, stepTolerance },
      ),
    );
    let angle = 0;
    let rate = 0;
    let missed = 0;
    let saturated = 0;
    let energy = 0;
    for (let n = 1; n <= 600; n++) {
      sim.step(1);
      const s = sim.state();
      angle = Math.max(angle, Math.abs(s.joints[0].coordinates[0] - exact[2 * n - 2]));
      rate = Math.max(rate, Math.abs(s.joints[0].rates[0] - exact[2 * n - 1]));
      energy = Math.max(energy, Math.abs(s.energy.error as number));
      if (!s.solver.stepToleranceMet) missed++;
      if (Math.abs(s.actuators[0].effort as number) >= limit * (1 - 1e-12)) saturated++;
    }
    return { angle, rate, missed, saturated, energy };
  }

  it("follow the exact motion through the switches between the effort limits, to an error that falls with the tolerance", () => {
    const exact = reference();
    const coarse = run(exact, 1e-6);
    const fine = run(exact, 1e-7);
    for (const r of [coarse, fine]) {
      expect(r.saturated).toBe(600);
      expect(r.missed).toBe(0);
      expect(r.energy).toBeLessThan(1e-12);
    }
    // Each passage through the band is a transient of the law relaxing over
    // ε = I/k_d = 2.4e-5 s (ImplicitServos.transitModel), which the L-stable stage collapsed
    // into the switch's instant, ~2.4e-4 rad/s of rate error a passage that neither the
    // embedded estimate nor the switch's location measured: before, 3.5e-4 rad, 1.2e-3
    // rad/s at 1e-6 and 2.0e-4 rad, 6e-4 rad/s at 1e-7 (7.6e-5 at 1e-8). Counted and, past
    // the tolerance, followed by sub-steps of at most ε: measured 1.45e-4 rad, 4.4e-4 rad/s
    // at 1e-6 (17.0 sub-steps a step; each passage a rate error of ~1.2e-4 rad/s, 7e-7 m
    // over the step at the rod's r.m.s. radius, within the tolerance, then carried: the
    // saturated servo does not damp it), 3.7e-6 rad, 1.1e-5 rad/s at 1e-7 (51), 6.6e-7 rad
    // at 1e-8 (161)
    expect(coarse.angle).toBeLessThan(3e-4);
    expect(coarse.rate).toBeLessThan(1e-3);
    expect(fine.angle).toBeLessThan(1e-5);
    expect(fine.rate).toBeLessThan(3e-5);
  });
});
