/**
 * Newton's cradle: three equal balls (m = 1, R = 0.05) on a line, no gravity, the first
 * moving at 1 m/s, with Moreau–Jean and the Newton impact law; closed forms derived here.
 *
 * Balls 5 mm apart: the impacts are successive two-ball impacts. For equal masses the
 * one-contact LCP gives the impulse P = (1 + e)/2·(v₁ − v₂) and
 *   v₁⁺ = (1 − e)/2 v₁ + (1 + e)/2 v₂,  v₂⁺ = (1 + e)/2 v₁ + (1 − e)/2 v₂,
 * so with e = 1 the velocities are exchanged twice: (1, 0, 0) → (0, 1, 0) → (0, 0, 1), and
 * with e = 0.8: (0.1, 0.9, 0) after the first impact and (0.1, 0.09, 0.81) after the second.
 *
 * Balls touching: both contacts (gap 0) are in the active set of the same step
 * (0 + h u_n/2 ≤ 0 for u_n = −1 and for u_n = 0) and Moreau–Jean solves them together:
 * with H = [−1 1 0; 0 −1 1], W = H M⁻¹ Hᵀ = [2 −1; −1 2], q = (1 + e) H v⁻ = (−(1 + e), 0),
 * the LCP w = W P + q ≥ 0 ⊥ P ≥ 0 has both impulses positive:
 *   2P₁ − P₂ = 1 + e,  −P₁ + 2P₂ = 0  ⇒  P₁ = 2(1 + e)/3,  P₂ = (1 + e)/3,
 *   v⁺ = (1 − P₁, P₁ − P₂, P₂) = (1 − 2(1 + e)/3, (1 + e)/3, (1 + e)/3),
 * i.e. (−1/3, 2/3, 2/3) for e = 1 — not the (0, 0, 1) of the successive-impact picture.
 * Afterwards balls 2 and 3 move together (their contact stays active with q = 0, P = 0) and
 * ball 1 recedes. Momentum is kept exactly: every impulse acts equally and oppositely.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const R = 0.05;

function cradle(e: number, gap: number, contactSolver = "pgs", h = 0.001) {
  const d = 2 * R + gap;
  return loadModel({
    gravity: [0, 0, 0],
    bodies: [0, 1, 2].map((i) => ({
      id: `b${i}`,
      mass: 1,
      position: [i * d, 0, 0] as [number, number, number],
      velocity: [i === 0 ? 1 : 0, 0, 0] as [number, number, number],
      inertia: [0.001, 0.001, 0.001] as [number, number, number],
      shapes: [{ type: "sphere" as const, radius: R }],
    })),
    contact: { method: "nsc", restitution: e },
    solver: { integrator: "moreau-jean", dt: h, theta: 0.5, contactSolver, tolerance: 1e-14 },
  });
}

const vx = (sim: ReturnType<typeof loadModel>) => sim.state().bodies.map((b) => b.velocity[0]);

describe("Newton's cradle, balls 5 mm apart", () => {
  it("e = 1: (1, 0, 0) → (0, 0, 1) to 1e-6, momentum to 1e-12", () => {
    const sim = cradle(1, 0.005);
    for (let k = 0; k < 40; k++) {
      sim.step(1);
      const v = vx(sim);
      expect(Math.abs(v[0] + v[1] + v[2] - 1)).toBeLessThan(1e-12);
    }
    const v = vx(sim);
    expect(Math.abs(v[0])).toBeLessThan(1e-6);
    expect(Math.abs(v[1])).toBeLessThan(1e-6);
    expect(Math.abs(v[2] - 1)).toBeLessThan(1e-6);
  });

  it("e = 0.8: the two successive two-ball impacts", () => {
    const e = 0.8;
    const sim = cradle(e, 0.005);
    const first = [(1 - e) / 2, (1 + e) / 2, 0];
    const second = [first[0], ((1 - e) / 2) * first[1], ((1 + e) / 2) * first[1]];
    const seen: number[][] = [];
    let last = vx(sim);
    for (let k = 0; k < 40; k++) {
      sim.step(1);
      const v = vx(sim);
      if (v.some((x, i) => Math.abs(x - last[i]) > 1e-9)) seen.push(v);
      last = v;
      expect(Math.abs(v[0] + v[1] + v[2] - 1)).toBeLessThan(1e-12);
    }
    expect(seen).toHaveLength(2);
    seen[0].forEach((x, i) => {
      expect(Math.abs(x - first[i])).toBeLessThan(1e-9);
    });
    seen[1].forEach((x, i) => {
      expect(Math.abs(x - second[i])).toBeLessThan(1e-9);
    });
  });
});

describe("Newton's cradle, balls touching: the simultaneous-impact LCP", () => {
  for (const e of [1, 0.8])
    for (const solver of ["pgs", "lemke"])
      it(`e = ${e} (${solver}): v⁺ = (1 − 2(1+e)/3, (1+e)/3, (1+e)/3)`, () => {
        const sim = cradle(e, 0, solver);
        sim.step(1);
        const expected = [1 - (2 * (1 + e)) / 3, (1 + e) / 3, (1 + e) / 3];
        const v1 = vx(sim);
        v1.forEach((x, i) => {
          expect(Math.abs(x - expected[i])).toBeLessThan(1e-10);
        });
        const st = sim.state();
        expect(st.contacts).toHaveLength(2);
        // Reported impulses: P₁ on ball 2 along +x, P₂ on ball 3.
        const P = st.contacts.map((c) => Math.abs(c.impulse[0])).sort((a, b) => b - a);
        expect(P[0]).toBeCloseTo((2 * (1 + e)) / 3, 9);
        expect(P[1]).toBeCloseTo((1 + e) / 3, 9);
        sim.step(30);
        const v = vx(sim);
        v.forEach((x, i) => {
          expect(Math.abs(x - expected[i])).toBeLessThan(1e-10);
        });
        expect(Math.abs(v[0] + v[1] + v[2] - 1)).toBeLessThan(1e-12);
      });
});
