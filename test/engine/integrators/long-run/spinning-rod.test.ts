/**
 * A rod spinning about a frictionless hinge, without gravity, for 100 s (100 turns).
 *
 * Exact motion: nothing acts about the hinge axis, so the rod turns at its initial rate
 * ω = 2π rad/s forever (the angular momentum about z is conserved and the rod is rigid). Its
 * COM moves on a circle of radius r = 0.5 m at ω, so the one force on it, the hinge's, is the
 * centripetal force F = m a_COM = −m ω² r_⊥ (r_⊥ the COM's position from the axis): magnitude
 * m ω² r = 2π² N, pointing from the COM to the axis, no axial part. The rod's angular
 * momentum about its COM, I ω ẑ (z a principal axis), is constant, so the reaction's torque
 * about the COM vanishes: the hinge force acts along the rod, and the reaction torque
 * (about the joint point on the rod) is zero too.
 *
 * This uniform rotation is a relative equilibrium of the rod, which the integrator must
 * keep (a Lie-group update on SE(3) represents it exactly, as a constant body twist): ω
 * must stay 2π ẑ to the Newton tolerance and the reaction to near rounding, whatever h. Asserted at every step (step(1), then state()): ω to 1e-9 rad/s,
 * the reaction's magnitude to 1e-6 relative and its direction (the angle between F and
 * −r_⊥) to 1e-6 rad, its axial part and the torque to 1e-6 of m ω² r (and × r). The rod's
 * angle after 100 s against ω t (100 turns: back at 0) is reported, not asserted.
 * Cost: state() builds a small object per call; one step plus one state() of this 1-body
 * model takes ~30 µs, so the 1e5 + 1e4 steps take a few seconds.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { norm, report, type Vec3 } from "./helpers";
import { rod, spinningRodModel } from "./models";

describe("spinning rod on a frictionless hinge (no gravity), 100 s", () => {
  for (const h of [0.001, 0.01])
    it(`generalized-α defaults, h = ${h * 1e3} ms: ω = 2π ẑ and the reaction m ω² r towards the axis, every step`, () => {
      const sim = loadModel(spinningRodModel({ integrator: "generalized-alpha", dt: h }));
      const { mass, r, omega } = rod;
      const F0 = mass * omega * omega * r;
      const steps = Math.round(100 / h);
      let omegaZ = 0; // max |ω_z − 2π|
      let omegaXY = 0; // max |(ω_x, ω_y)|
      let magnitude = 0; // max | |F| − m ω² r | / (m ω² r)
      let direction = 0; // max angle (rad) between F and −r_⊥
      let axial = 0; // max |F_z| / (m ω² r)
      let torque = 0; // max |τ| / (m ω² r · r)
      let worst = 0; // step of the largest magnitude error
      for (let n = 1; n <= steps; n++) {
        sim.step(1);
        const st = sim.state();
        const body = st.bodies[0];
        const w = body.angularVelocity;
        omegaZ = Math.max(omegaZ, Math.abs(w[2] - omega));
        omegaXY = Math.max(omegaXY, Math.hypot(w[0], w[1]));
        const F = st.joints[0].force as Vec3;
        const Fm = norm(F);
        const e = Math.abs(Fm - F0) / F0;
        if (e > magnitude) {
          magnitude = e;
          worst = n;
        }
        // −r_⊥: from the COM to the axis (the hinge axis is z through the origin)
        const p = body.position;
        const rp = Math.hypot(p[0], p[1]);
        const cosAngle = -(F[0] * p[0] + F[1] * p[1]) / (Math.hypot(F[0], F[1]) * rp);
        const sinAngle = (F[0] * p[1] - F[1] * p[0]) / (Math.hypot(F[0], F[1]) * rp);
        direction = Math.max(direction, Math.abs(Math.atan2(sinAngle, cosAngle)));
        axial = Math.max(axial, Math.abs(F[2]) / F0);
        torque = Math.max(torque, norm(st.joints[0].torque as Vec3) / (F0 * r));
      }
      // the turns it made: the COM's angle against ω t (not asserted, reported)
      const p = sim.state().bodies[0].position;
      const lag = Math.atan2(p[1], p[0]) - omega * steps * h;
      const phase = Math.atan2(Math.sin(lag), Math.cos(lag));
      report(`spinning rod h=${h}`, {
        omegaZ,
        omegaXY,
        magnitude,
        worstStep: worst,
        direction,
        axial,
        torque,
        phase,
      });
      expect(omegaZ).toBeLessThanOrEqual(1e-9);
      expect(omegaXY).toBeLessThanOrEqual(1e-9);
      expect(magnitude).toBeLessThanOrEqual(1e-6);
      expect(direction).toBeLessThanOrEqual(1e-6);
      expect(axial).toBeLessThanOrEqual(1e-6);
      expect(torque).toBeLessThanOrEqual(1e-6);
    });
});
