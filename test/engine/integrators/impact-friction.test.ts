/**
 * Frictional impacts at their instants (src/engine/integrators/impact-events.ts, friction):
 * Newton's law on the normal, Coulomb's on the tangential impulse, zero duration.
 *
 * A solid sphere (m = 1 kg, R = 0.1 m, I = 2/5 m R² = 0.004 kg m²) dropped from rest
 * vertically, its centre z₀ above the floor's contact height R, moving at v_x and spinning
 * at ω_y: in flight v_x and ω_y stay, and it lands at t* = √(2 (z₀ − R)/g) at
 * v_z⁻ = −g t*. Its contact point (lever arm r = (0, 0, −R)) slides at
 * u_x⁻ = v_x − R ω_y. The impulse (P_x, 0, P_n) at it: the normal and tangential rows are
 * decoupled for a sphere (W = diag(1/m, 1/m + R²/I, ·)), so
 *     P_n = m (1 + e) |v_z⁻|,
 *     sticking, u_x⁺ = 0:  P_x = −u_x⁻ / (1/m + R²/I) = −(2/7) m u_x⁻,  when |P_x| ≤ μ P_n,
 *     else sliding:        P_x = −μ P_n sign(u_x⁻),
 * and v_x⁺ = v_x + P_x/m, ω_y⁺ = ω_y − R P_x / I ((r × P)_y = −R P_x), v_z⁺ = e |v_z⁻|,
 * then free flight again: v_z = e |v_z⁻| − g (t − t*). Before (a spinning body's frictional
 * impact left to the step's own law at its start, located along the normal only), the
 * tangential impulse held the whole step's normal impulse, m g h more than the impact's.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { ballOnFloor } from "../../support/models";

const g = 9.81;
const m = 1;
const R = 0.1;
const I = 0.004;
const Z0 = 0.6;

/** The sphere's velocities just after its impact (file comment). */
function rebound(vx: number, wy: number, e: number, mu: number) {
  const vz = -Math.sqrt(2 * g * (Z0 - R));
  const ux = vx - R * wy;
  const pn = m * (1 + e) * -vz;
  const stick = -ux / (1 / m + (R * R) / I);
  const sticking = Math.abs(stick) <= mu * pn;
  const px = sticking ? stick : -mu * pn * Math.sign(ux);
  return { vx: vx + px / m, wy: wy - (R * px) / I, vz: e * -vz, sticking };
}

describe("impact events with friction: a spinning sphere landing obliquely on a rough floor", () => {
  for (const { mu, e, sticking } of [
    { mu: 0.1, e: 0.5, sticking: false },
    { mu: 0.5, e: 0.5, sticking: true },
    { mu: 0.04, e: 1, sticking: false },
  ])
    for (const h of [0.005, 1 / 60])
      it(`μ = ${mu}, e = ${e}, h = ${h.toPrecision(3)} s: ${sticking ? "sticks" : "slides"}, rebounds as the closed form, energy not made`, () => {
        const vx = 3;
        const wy = 10;
        const sim = loadModel(
          ballOnFloor({ restitution: e, friction: mu }, { z: Z0, vx, wy }, { dt: h }) as ModelInput,
        );
        const want = rebound(vx, wy, e, mu);
        expect(want.sticking).toBe(sticking);
        const arrival = Math.sqrt((2 * (Z0 - R)) / g);
        const E0 = sim.state().energy.total;
        // through the impact and 0.1 s of flight after it
        while (sim.time < arrival + 0.1) sim.step(1);
        const b = sim.state().bodies[0];
        expect(Math.abs(b.velocity[0] - want.vx)).toBeLessThan(1e-9);
        expect(Math.abs(b.angularVelocity[1] - want.wy)).toBeLessThan(1e-9);
        expect(Math.abs(b.velocity[2] - (want.vz - g * (sim.time - arrival)))).toBeLessThan(1e-9);
        expect(Math.abs(b.velocity[1]) + Math.abs(b.angularVelocity[0])).toBeLessThan(1e-12);
        // the energy: the start's less the impact's loss, ½ m (v⁻² − v⁺²) + ½ I (ω⁻² − ω⁺²)
        // (≥ 0: no energy made), the flight's parabola exact under θ = ½; the balance closed
        const vz = Math.sqrt(2 * g * (Z0 - R));
        const lost =
          0.5 * m * (vx * vx + vz * vz - want.vx ** 2 - want.vz ** 2) +
          0.5 * I * (wy * wy - want.wy ** 2);
        expect(lost).toBeGreaterThanOrEqual(0);
        const { energy } = sim.state();
        expect(Math.abs(energy.total - (E0 - lost))).toBeLessThan(1e-8);
        expect(Math.abs(energy.error)).toBeLessThan(1e-8);
      });
});
