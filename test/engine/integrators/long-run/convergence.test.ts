/**
 * Generalized-α's order and numerical dissipation, measured on the engine against numbers
 * computed here.
 *
 * 1. Second order. A rigid pendulum (models.ts: thin rod of 1 kg and 1 m hinged at its end,
 *    released at rest at θ0 = 1 rad) reduces to J θ̈ = −m g l sin θ, J = m L²/12 + m l². The
 *    reference θ(2 s) is RK4 on it with H = 1e-5 s (error ~ (H ω)⁴ t ω ≈ 1e-16 rad, ω ≈ 5.4
 *    rad/s). The engine's angle error at t = 2 s, for h = 8, 4, 2, 1 ms, must fall by 4 per
 *    halving (each ratio in [3.5, 4.5]), at ρ∞ = 1 and ρ∞ = 0.5.
 *
 * 2. Dissipation of a stiff mode. A particle on a zero-length linear spring (x'' = −ω² x,
 *    no damping, no gravity) with h ω = Ω = 10: per step the scheme multiplies the state by
 *    its amplification matrix A(Ω) (helpers.ts, written out from the recurrences), whose
 *    eigenvalues are a complex pair λ, λ̄ (the principal roots) and a real spurious root μ
 *    with |μ| < |λ| = ρ(Ω), the spectral radius. Then x_n = c λⁿ + c̄ λ̄ⁿ + b μⁿ, and the
 *    Hankel determinant D_n = x_n x_{n+2} − x_{n+1}² is |c|² (λ − λ̄)² |λ|^{2n} up to a part
 *    (|μ|/ρ)ⁿ smaller: after that transient, |D_{n+K}/D_n|^{1/(2K)} is the amplitude ratio
 *    per step of the motion, and must equal ρ(Ω). As Ω grows, ρ(Ω) tends to ρ∞ (the
 *    parameters are chosen so): at Ω = 1e3 it is within 10/Ω of it, and the engine's
 *    measured ratio with it.
 *    The engine starts the scheme's acceleration memory at the consistent acceleration
 *    (a_0 = ẍ_0 = −ω² x_0); the step-by-step comparison with the recurrences below uses
 *    that start.
 */
import { EigenvalueDecomposition, Matrix, solve } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import {
  amplificationEigenvalues,
  amplificationMatrix,
  OneDofReference,
  report,
  rotate,
  ScalarGeneralizedAlpha,
  spectralRadius,
} from "./helpers";
import { oscillatorModel, pendulum, pendulumModel, pendulumReduced } from "./models";

const T = 2;

/** θ(T) of the pendulum by RK4 with 2e5 steps of 1e-5 s. */
function referenceAngle(): number {
  const { accel } = pendulumReduced();
  const ref = new OneDofReference(accel, pendulum.theta0, 0, T, 200_000);
  ref.step();
  return ref.theta;
}

/** The engine's pendulum angle at t = T (from the rod's direction, body x). */
function engineAngle(h: number, rhoInfinity: number): number {
  const sim = loadModel(pendulumModel({ integrator: "generalized-alpha", dt: h, rhoInfinity }));
  sim.step(Math.round(T / h));
  const e = rotate(sim.state().bodies[0].orientation, [1, 0, 0]);
  return Math.atan2(e[0], -e[2]);
}

describe("generalized-α is second order on a rigid pendulum (θ0 = 1 rad, t = 2 s)", () => {
  const thetaRef = referenceAngle();
  for (const rhoInfinity of [1, 0.5])
    it(`ρ∞ = ${rhoInfinity}: the error falls by 4 per halving of h = 8, 4, 2, 1 ms`, () => {
      const errors = [0.008, 0.004, 0.002, 0.001].map((h) =>
        Math.abs(engineAngle(h, rhoInfinity) - thetaRef),
      );
      const ratios = errors.slice(1).map((e, i) => errors[i] / e);
      // the yardstick (reported only): the scheme's own error on the one-dof equation
      const scalar = [0.008, 0.004, 0.002, 0.001].map((h) => {
        const s = new ScalarGeneralizedAlpha(
          pendulumReduced().accel,
          pendulum.theta0,
          0,
          rhoInfinity,
          h,
        );
        for (let n = Math.round(T / h); n > 0; n--) s.step();
        return Math.abs(s.theta - thetaRef);
      });
      report(`pendulum order ρ∞=${rhoInfinity}`, {
        e8: errors[0],
        e4: errors[1],
        e2: errors[2],
        e1: errors[3],
        r1: ratios[0],
        r2: ratios[1],
        r3: ratios[2],
        scalar8: scalar[0],
        scalar1: scalar[3],
      });
      for (const r of ratios) {
        expect(r).toBeGreaterThanOrEqual(3.5);
        expect(r).toBeLessThanOrEqual(4.5);
      }
    });
});

/** h ω = Ω with h = 10 ms: the spring's stiffness (m = 1 kg). */
const H = 0.01;
const stiffnessFor = (Omega: number) => (Omega / H) ** 2;

/** x_0 … x_N of the particle (x_0 = 1 m, released at rest). */
function oscillatorPositions(Omega: number, rhoInfinity: number, N: number): number[] {
  const sim = loadModel(
    oscillatorModel(stiffnessFor(Omega), 1, {
      integrator: "generalized-alpha",
      dt: H,
      rhoInfinity,
    }),
  );
  const xs = [sim.state().bodies[0].position[0]];
  for (let n = 0; n < N; n++) {
    sim.step(1);
    xs.push(sim.state().bodies[0].position[0]);
  }
  return xs;
}

/**
 * The amplitude ratio per step over steps n0 … n0 + K: |D_{n0+K}/D_{n0}|^{1/(2K)}, and n0 chosen
 * so that the spurious root's share, (|μ|/ρ)^{n0}, is below `bias`.
 */
function measuredRatio(Omega: number, rhoInfinity: number, bias: number, K: number) {
  const [lambda, , mu] = amplificationEigenvalues(rhoInfinity, Omega);
  const rho = Math.hypot(lambda[0], lambda[1]);
  const n0 = Math.ceil(Math.log(bias) / Math.log(Math.hypot(mu[0], mu[1]) / rho));
  const x = oscillatorPositions(Omega, rhoInfinity, n0 + K + 2);
  const D = (n: number) => x[n] * x[n + 2] - x[n + 1] * x[n + 1];
  return { measured: Math.abs(D(n0 + K) / D(n0)) ** (1 / (2 * K)), rho, n0, x };
}

/**
 * The largest root modulus of the linear recurrence x_{n+3} = c2 x_{n+2} + c1 x_{n+1} + c0 x_n
 * that x_0 … x_5 obey (every component of x_n = [Aⁿ z_0]_0 does, by Cayley–Hamilton, with
 * λ³ − c2 λ² − c1 λ − c0 the characteristic polynomial of A). The samples are scaled by
 * s⁻ⁿ (s near the roots' modulus) so that the 3×3 Hankel system is well conditioned; the
 * roots are the eigenvalues of the companion matrix, times s.
 */
function identifiedRadius(x: number[], s: number): number {
  const y = x.slice(0, 6).map((v, n) => v / s ** n);
  const c = solve(
    new Matrix([
      [y[0], y[1], y[2]],
      [y[1], y[2], y[3]],
      [y[2], y[3], y[4]],
    ]),
    Matrix.columnVector([y[3], y[4], y[5]]),
  ).to1DArray();
  const companion = new Matrix([
    [c[2], c[1], c[0]],
    [1, 0, 0],
    [0, 1, 0],
  ]);
  const e = new EigenvalueDecomposition(companion);
  return (
    s * Math.max(...e.realEigenvalues.map((re, i) => Math.hypot(re, e.imaginaryEigenvalues[i])))
  );
}

describe("generalized-α dissipation of a stiff undamped spring: the spectral radius", () => {
  for (const rhoInfinity of [0, 0.5, 0.8])
    it(`ρ∞ = ${rhoInfinity}: amplitude ratio per step at h ω = 10 is ρ(10), and tends to ρ∞ at h ω = 1e3`, () => {
      // the eigenvalue structure the estimator relies on: a complex dominant pair
      const eig = amplificationEigenvalues(rhoInfinity, 10);
      expect(Math.abs(eig[0][1])).toBeGreaterThan(0.1);
      expect(Math.hypot(eig[2][0], eig[2][1])).toBeLessThan(0.9 * spectralRadius(rhoInfinity, 10));

      // Ω = 10: the spurious part below 1e-10, the ratio over the next 20 steps; the
      // tolerance, 1e-6 relative, is far above that bias and rounding and far below the
      // differences a change of parameters makes (ρ∞ + 1e-3 moves ρ(10) by 7e-4 to 2.4e-3)
      const at10 = measuredRatio(10, rhoInfinity, 1e-10, 20);

      // step by step, the recurrences from x_0 = 1, v_0 = 0, a_0 = ẍ_0 = −ω² x_0 (z = (x, h v, h² a))
      const A = amplificationMatrix(rhoInfinity, 10);
      let z = [1, 0, -100];
      let follow = 0;
      for (let n = 1; n <= 30; n++) {
        z = [0, 1, 2].map((i) => A.get(i, 0) * z[0] + A.get(i, 1) * z[1] + A.get(i, 2) * z[2]);
        // relative to the amplitude left (the state decays by ρⁿ)
        follow = Math.max(follow, Math.abs(at10.x[n] - z[0]) / at10.rho ** n);
      }

      // Ω = 1e3: ρ(Ω) is within 10/Ω of ρ∞ and nearer to it than at Ω = 10
      const rho1000 = spectralRadius(rhoInfinity, 1e3);
      expect(Math.abs(rho1000 - rhoInfinity)).toBeLessThanOrEqual(10 / 1e3 + 1e-4);
      expect(Math.abs(rho1000 - rhoInfinity)).toBeLessThan(Math.abs(at10.rho - rhoInfinity));
      // The engine's ratio there. For ρ∞ > 0 as at Ω = 10 (the spurious root is within 5 % of
      // the pair's modulus, so the transient takes ~300–500 steps to fall below 1e-6). For
      // ρ∞ = 0 the state falls by ~100 per step and |μ|/ρ = 0.98: no transient can be waited
      // out in double precision, so the per-step ratio of the dominant mode is identified
      // instead (identifiedRadius: the three-term recurrence x_n obeys, from x_0 … x_5).
      const at1000 =
        rhoInfinity > 0
          ? measuredRatio(1e3, rhoInfinity, 1e-6, 20)
          : {
              measured: identifiedRadius(oscillatorPositions(1e3, 0, 5), rho1000),
              rho: rho1000,
              n0: 0,
            };

      report(`oscillator ρ∞=${rhoInfinity}`, {
        rho10: at10.rho,
        measured10: at10.measured,
        rel10: at10.measured / at10.rho - 1,
        n0: at10.n0,
        follow,
        rho1000,
        measured1000: at1000.measured,
        rel1000: at1000.measured / rho1000 - 1,
        n0at1000: at1000.n0,
      });
      expect(Math.abs(at10.measured / at10.rho - 1)).toBeLessThanOrEqual(1e-6);
      expect(follow).toBeLessThanOrEqual(1e-9);
      expect(Math.abs(at1000.measured / rho1000 - 1)).toBeLessThanOrEqual(1e-4);
    });
});
