/**
 * Newmark (SOFA NewmarkImplicitSolver) against the recurrence written out here, and the
 * energy behaviour of (β, γ) = (1/4, 1/2) versus (0.3025, 0.6) on a linear chain.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { springChain, springParticle } from "../../support/models";

const k = (2 * Math.PI) ** 2;

/** The design's Newmark equations for m = 1, stiffness k, written out as a scalar recurrence. */
function newmarkRecurrence(
  h: number,
  beta: number,
  gamma: number,
  rM: number,
  rK: number,
  n: number,
) {
  let x = 1;
  let v = 0;
  let a = (-k * x - (rM + rK * k) * v) / 1;
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const lhs = 1 + h * gamma * rM + (h * h * beta + h * gamma * rK) * k;
    const vPred = v + h * (1 - gamma) * a;
    const xPred = x + h * v + 0.5 * h * h * (1 - 2 * beta) * a;
    const aNew = (-(rM + rK * k) * vPred - k * xPred) / lhs;
    x = x + h * v + 0.5 * h * h * ((1 - 2 * beta) * a + 2 * beta * aNew);
    v = v + h * ((1 - gamma) * a + gamma * aNew);
    a = aNew;
    xs.push(x);
  }
  return xs;
}

describe("Newmark on the one-dof oscillator m = 1, k = (2π)²", () => {
  for (const [beta, gamma] of [
    [0.25, 0.5],
    [0.3025, 0.6],
  ])
    for (const h of [0.01, 0.05])
      for (const [rM, rK] of [
        [0, 0],
        [0.1, 0.01],
      ])
        it(`β=${beta} γ=${gamma} h=${h} r_M=${rM} r_K=${rK} follows the recurrence to 1e-12`, () => {
          // one particle (m = 1) on a zero-length spring to the origin: x'' = −k x
          const sim = loadModel(
            springParticle({
              stiffness: k,
              dt: h,
              name: null,
              integrator: "newmark",
              solver: { beta, gamma, rayleighMass: rM, rayleighStiffness: rK },
            }),
          );
          const expected = newmarkRecurrence(h, beta, gamma, rM, rK, 200);
          for (let i = 0; i < 200; i++) {
            sim.step(1);
            const x = sim.state().bodies[0].position[0];
            expect(Math.abs(x - expected[i])).toBeLessThan(1e-12);
          }
        });
});

/** 10 masses, 11 springs between two walls along x; the middle mass displaced along x. */
function chainModel(beta: number, gamma: number) {
  const n = 10;
  const spacing = 0.1;
  return {
    gravity: [0, 0, 0],
    ...springChain({
      particles: n,
      prefix: "m",
      mass: (i) => 0.1 + 0.01 * i,
      position: (i) => [spacing * (i + 1) + (i === 4 ? 0.03 : 0) + (i === 7 ? -0.02 : 0), 0, 0],
      stiffness: (i) => 50 + 5 * i,
      restLength: spacing,
      anchor: [0, 0, 0],
      wall: [spacing * (n + 1), 0, 0],
    }),
    solver: { integrator: "newmark", dt: 0.01, beta, gamma },
  };
}

describe("Newmark energy on an undamped linear chain", () => {
  it("(1/4, 1/2) keeps the energy constant to 1e-10 relative over 500 steps", () => {
    const sim = loadModel(chainModel(0.25, 0.5));
    const e0 = sim.state().energy.total;
    expect(e0).toBeGreaterThan(0);
    for (let i = 0; i < 500; i++) {
      sim.step(1);
      expect(Math.abs(sim.state().energy.total - e0) / e0).toBeLessThan(1e-10);
    }
  });

  it("(0.3025, 0.6) makes it decrease monotonically", () => {
    const sim = loadModel(chainModel(0.3025, 0.6));
    let prev = sim.state().energy.total;
    const e0 = prev;
    for (let i = 0; i < 500; i++) {
      sim.step(1);
      const e = sim.state().energy.total;
      expect(e).toBeLessThan(prev);
      prev = e;
    }
    expect(prev).toBeLessThan(0.99 * e0);
  });
});
