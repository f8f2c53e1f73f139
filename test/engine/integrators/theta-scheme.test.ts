/**
 * Backward Euler's amplitude decay and symplectic Euler's bounded energy error on the
 * oscillator x'' = −ω² x, against their closed forms:
 * - backward Euler, in coordinates (ωx, v), is the scaled rotation [1 −hω; hω 1]⁻¹, so the
 *   energy ½(v² + ω²x²) is multiplied by exactly 1/(1 + h²ω²) every step;
 * - symplectic Euler (v first, then x with the new v) conserves exactly the modified
 *   quadratic I = v² + ω²x² − hω² x v, and since |hω² x v| ≤ hω·E,
 *   I / (2(1 + hω/2)) ≤ E ≤ I / (2(1 − hω/2)) for all time.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { springParticle } from "../../support/models";

const omega = 2 * Math.PI;

/** A particle of 2 kg on a zero-length spring to the origin, x'' = −ω² x, set moving. */
const model = (integrator: "backward-euler" | "symplectic-euler", h: number) =>
  springParticle({
    stiffness: 2 * omega ** 2,
    mass: 2,
    x0: 0.5,
    v0: 0.3,
    dt: h,
    name: null,
    integrator,
  });

function xv(sim: ReturnType<typeof loadModel>) {
  const b = sim.state().bodies[0];
  return { x: b.position[0], v: b.velocity[0] };
}

describe("backward Euler", () => {
  it("damps the oscillator's energy by exactly 1/(1 + h²ω²) per step", () => {
    const h = 0.02;
    const sim = loadModel(model("backward-euler", h));
    const e = (s: { x: number; v: number }) => 0.5 * (s.v ** 2 + omega ** 2 * s.x ** 2);
    const e0 = e(xv(sim));
    for (let n = 1; n <= 300; n++) {
      sim.step(1);
      const expected = e0 * (1 + h * h * omega * omega) ** -n;
      expect(Math.abs(e(xv(sim)) - expected) / expected).toBeLessThan(1e-10);
    }
  });
});

describe("symplectic Euler", () => {
  it("keeps v² + ω²x² − hω²xv constant and the energy within its closed-form band", () => {
    const h = 0.02;
    const sim = loadModel(model("symplectic-euler", h));
    const inv = (s: { x: number; v: number }) =>
      s.v ** 2 + omega ** 2 * s.x ** 2 - h * omega ** 2 * s.x * s.v;
    const i0 = inv(xv(sim));
    const lo = i0 / (2 * (1 + (h * omega) / 2));
    const hi = i0 / (2 * (1 - (h * omega) / 2));
    let maxErr = 0;
    const e0 = 0.5 * (0.3 ** 2 + omega ** 2 * 0.25);
    for (let n = 1; n <= 2000; n++) {
      sim.step(1);
      const s = xv(sim);
      expect(Math.abs(inv(s) - i0) / i0).toBeLessThan(1e-11);
      const e = 0.5 * (s.v ** 2 + omega ** 2 * s.x ** 2);
      expect(e).toBeGreaterThanOrEqual(lo * (1 - 1e-12));
      expect(e).toBeLessThanOrEqual(hi * (1 + 1e-12));
      maxErr = Math.max(maxErr, Math.abs(e - e0) / e0);
    }
    // bounded, not drifting: the error stays of order hω, far from growing
    expect(maxErr).toBeLessThan(h * omega);
  });
});
