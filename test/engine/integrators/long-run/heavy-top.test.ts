/**
 * A heavy symmetric top in steady precession on a spherical joint, for ten precession
 * periods, at h = 1, 0.5 and 0.25 ms.
 *
 * The steady-precession condition is derived in models.ts (topSteadyPrecession): with the
 * tilt θ from the vertical, the precession rate Ω about the vertical and I1 = I1c + m l² the
 * transverse inertia about the pivot, Ω I3 ω3 − Ω² I1 cos θ = m g l, ω3 = ψ̇ + Ω cos θ the
 * spin about the symmetry axis. Here θ = 30°, Ω = 2π rad/s (one period per second), so
 * ω3 = 44.83 rad/s. The first test below checks that condition independently, by RK4 on
 * the rigid-body equations of the top about its pivot (Euler's equations in the body frame
 * and the quaternion kinematics), before the engine is measured against it.
 *
 * In the steady precession the COM runs on a horizontal circle of radius l sin θ at the
 * rate Ω, so the joint's force on the top (the only force besides gravity) is
 * F = m a_COM − m g = m g ẑ − m Ω² l sin θ r̂ (r̂ the COM's horizontal direction from the
 * axis): vertical part m g, horizontal part m Ω² l sin θ towards the axis. Asserted at every
 * step: |θ − θ0| ≤ 1e-4 rad (θ from the body's symmetry axis) and |F − F_exact| ≤ 1e-4 m g,
 * F_exact taken at the simulated COM's direction (the precession phase is not asserted;
 * its error is reported). Both errors are the integrator's, O(h²), so their maxima must
 * shrink as h halves. Cost: 10 + 20 + 40 thousand steps of a one-body model.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { norm, Rk4, report, rotate, sub, unwrap, type Vec3 } from "./helpers";
import { G, top, topModel, topSteadyPrecession } from "./models";

const PERIODS = 10;

interface Errors {
  tilt: number;
  reaction: number;
  phase: number;
}

const cache = new Map<number, Errors>();

function run(h: number): Errors {
  const cached = cache.get(h);
  if (cached) return cached;
  const { mass, l, tilt: tilt0 } = top;
  const { Omega } = topSteadyPrecession();
  const sim = loadModel(topModel({ integrator: "generalized-alpha", dt: h }));
  const horizontal = mass * Omega * Omega * l * Math.sin(tilt0);
  const steps = Math.round((PERIODS * 2 * Math.PI) / Omega / h);
  let tilt = 0;
  let reaction = 0;
  let phase = 0;
  let azimuth = 0;
  for (let n = 1; n <= steps; n++) {
    sim.step(1);
    const st = sim.state();
    const b = st.bodies[0];
    const e3 = rotate(b.orientation, [0, 0, 1]);
    tilt = Math.max(tilt, Math.abs(Math.atan2(Math.hypot(e3[0], e3[1]), e3[2]) - tilt0));
    const p = b.position;
    const rp = Math.hypot(p[0], p[1]);
    const exact: Vec3 = [(-horizontal * p[0]) / rp, (-horizontal * p[1]) / rp, mass * G];
    reaction = Math.max(reaction, norm(sub(st.joints[0].force as Vec3, exact)) / (mass * G));
    azimuth = unwrap(azimuth, Math.atan2(p[1], p[0]));
    phase = Math.max(phase, Math.abs(azimuth - Omega * n * h));
  }
  const errors = { tilt, reaction, phase };
  cache.set(h, errors);
  report(`heavy top h=${h}`, { ...errors });
  return errors;
}

describe("heavy symmetric top in steady precession, 10 periods", () => {
  it("the steady-precession condition holds for the rigid-body equations (RK4, independent)", () => {
    // State: quaternion q (body to world) and body angular velocity ω_b; about the pivot
    //   I_p ω̇_b = τ_b − ω_b × I_p ω_b,  I_p = diag(I1, I1, I3),
    //   τ_b = (l ẑ_b) × (Rᵀ (−m g ẑ)),  q̇ = ½ q ⊗ (0, ω_b).
    const { mass, l, I3, tilt: tilt0 } = top;
    const { I1, spin, Omega } = topSteadyPrecession();
    const s = Math.sin(0.5 * tilt0);
    const c = Math.cos(0.5 * tilt0);
    // ω_b = Rᵀ (Ω ẑ + ψ̇ e3) = Ω Rᵀẑ + ψ̇ ẑ_b, Rᵀẑ = (−sin θ, 0, cos θ) for R about y by θ
    const w0 = [-Omega * Math.sin(tilt0), 0, Omega * Math.cos(tilt0) + spin];
    const rk = new Rk4(
      (_t, y, dy) => {
        const [qw, qx, qy, qz, wx, wy, wz] = y;
        const gb = rotate([qw, -qx, -qy, -qz], [0, 0, -mass * G]); // gravity in the body frame
        // τ = (0, 0, l) × g_b
        const tx = -l * gb[1];
        const ty = l * gb[0];
        dy[0] = 0.5 * (-qx * wx - qy * wy - qz * wz);
        dy[1] = 0.5 * (qw * wx + qy * wz - qz * wy);
        dy[2] = 0.5 * (qw * wy + qz * wx - qx * wz);
        dy[3] = 0.5 * (qw * wz + qx * wy - qy * wx);
        dy[4] = (tx - (I3 - I1) * wy * wz) / I1;
        dy[5] = (ty - (I1 - I3) * wz * wx) / I1;
        dy[6] = 0;
      },
      [c, 0, s, 0, ...w0],
    );
    let worst = 0;
    for (let k = 0; k < 1000; k++) {
      rk.advance(1e-5, 100); // one precession period in 1000 × 100 steps
      const y = rk.y;
      const e3 = rotate([y[0], y[1], y[2], y[3]], [0, 0, 1]);
      worst = Math.max(worst, Math.abs(Math.atan2(Math.hypot(e3[0], e3[1]), e3[2]) - tilt0));
    }
    const y = rk.y;
    const e3 = rotate([y[0], y[1], y[2], y[3]], [0, 0, 1]);
    expect(worst).toBeLessThan(1e-10);
    // after one period of 2π/Ω the axis is back where it started
    expect(norm(sub(e3, [Math.sin(tilt0), 0, Math.cos(tilt0)]))).toBeLessThan(1e-9);
  });

  for (const h of [0.001, 0.0005, 0.00025])
    it(`generalized-α defaults, h = ${h * 1e3} ms: tilt to 1e-4 rad, reaction to 1e-4 m g, every step`, () => {
      const e = run(h);
      expect(e.tilt).toBeLessThanOrEqual(1e-4);
      expect(e.reaction).toBeLessThanOrEqual(1e-4);
    });

  it("the largest tilt and reaction errors shrink as h halves", () => {
    const [a, b, c] = [0.001, 0.0005, 0.00025].map(run);
    report("heavy top ratios", {
      tilt1: a.tilt / b.tilt,
      tilt2: b.tilt / c.tilt,
      reaction1: a.reaction / b.reaction,
      reaction2: b.reaction / c.reaction,
      phase1: a.phase / b.phase,
      phase2: b.phase / c.phase,
    });
    expect(b.tilt).toBeLessThan(a.tilt);
    expect(c.tilt).toBeLessThan(b.tilt);
    expect(b.reaction).toBeLessThan(a.reaction);
    expect(c.reaction).toBeLessThan(b.reaction);
  });
});
