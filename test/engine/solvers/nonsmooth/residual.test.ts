import { describe, expect, it } from "vitest";
import {
  frictionResidual,
  lcpResidual,
  type NonsmoothProblem,
  problemResidual,
} from "../../../../src/engine/solvers/nonsmooth";
import {
  contactResidual,
  coulombResidualBelow,
} from "../../../../src/engine/solvers/nonsmooth/residual";
import { mulberry32 } from "../../../support/random";
import { unitFrictionContact } from "./scenes";

describe("residual measures", () => {
  it("LCP: ‖min(r, w)‖∞", () => {
    // r = (1, 0, 2), w = (0, −3, 0.5): min = (0, −3, 0.5) → 3
    expect(lcpResidual(3, Float64Array.from([1, 0, 2]), Float64Array.from([0, -3, 0.5]))).toBe(3);
    expect(lcpResidual(2, Float64Array.from([0, 1]), Float64Array.from([1, 0]))).toBe(0);
    expect(lcpResidual(1, Float64Array.from([Number.NaN]), Float64Array.from([1]))).toBeNaN();
  });

  it("friction: ‖r − P_K(r − ũ)‖ with and without the De Saxcé term", () => {
    const mu = Float64Array.from([0.5]);
    // Sliding contact at the CCP optimum of W = I/2, q = (−1, 1.2, −1.6):
    // r = (3.2, −0.96, 1.28), u = (0.6, 0.72, −0.96). CCP: r − u = (2.6, −1.68, 2.24) projects
    // back onto r (r ∈ ∂K, u ∈ ∂K*, r ⊥ u), so the CCP residual vanishes.
    const r = Float64Array.from([3.2, -0.96, 1.28]);
    const u = Float64Array.from([0.6, 0.72, -0.96]);
    expect(frictionResidual(1, r, u, mu, false)).toBeLessThan(1e-15);
    // Coulomb: ũ_n = 0.6 + 0.5·1.2 = 1.2; z = r − ũ = (2.0, −1.68, 2.24), ‖z_t‖ = 2.8:
    // P_K(z) = ((2 + 1.4)/1.25)(1, 0.5·(−0.6, 0.8)) = 2.72 (1, −0.3, 0.4).
    const p = [2.72, -0.816, 1.088];
    const e = Math.hypot(3.2 - p[0], -0.96 - p[1], 1.28 - p[2]);
    expect(frictionResidual(1, r, u, mu, true)).toBeCloseTo(e, 14);
    // Separated contact, r = 0 and u_n > 0: zero in both measures.
    const z3 = new Float64Array(3);
    expect(frictionResidual(1, z3, Float64Array.from([1, 5, 0]), mu, true)).toBe(0);
  });
});

describe("coulombResidualBelow (the velocity-form sweep's cheap bound)", () => {
  it("true only where the exact De Saxcé residual is ≤ the bound, and true for small u inside the cone", () => {
    const rand = mulberry32(77);
    let passed = 0;
    for (let s = 0; s < 20000; s++) {
      const mu = 1.5 * rand();
      // r inside, on or outside the cone; u from 1e-6 to 1 (the bound 1e-3)
      const rn = 2 * rand() - 0.2;
      const a = 2 * Math.PI * rand();
      const t = mu * Math.abs(rn) * (0.2 + rand());
      const scale = 10 ** (-6 + 6 * rand());
      const u = [0, 1, 2].map(() => scale * (2 * rand() - 1));
      const r = [rn, t * Math.cos(a), t * Math.sin(a)];
      const bound = 1e-3;
      const args = [
        Float64Array.of(mu),
        0,
        Float64Array.from(r),
        0,
        Float64Array.from(u),
        0,
      ] as const;
      if (!coulombResidualBelow(...args, bound)) continue;
      passed++;
      const e = new Float64Array(1);
      contactResidual(e, 0, ...args, true);
      expect(e[0]).toBeLessThanOrEqual(bound);
    }
    expect(passed).toBeGreaterThan(2000);
    // sticking at rest: r inside the cone, u = 0 passes; outside the cone or NaN does not
    // (μ, r_n, r_t1, r_t2, u_n, u_t1, u_t2), laid out as contact 1 of a problem at offsets
    const below = (x: number[], bound: number) =>
      coulombResidualBelow(
        Float64Array.of(9, x[0]),
        1,
        Float64Array.of(9, 9, 9, ...x.slice(1, 4)),
        3,
        Float64Array.of(9, ...x.slice(4)),
        1,
        bound,
      );
    expect(below([0.5, 1, 0.2, 0.1, 0, 0, 0], 1e-9)).toBe(true);
    expect(below([0.5, 1, 0.6, 0, 0, 0, 0], 1e-9)).toBe(false);
    expect(below([0.5, -1e-3, 0, 0, 0, 0, 0], 1e-9)).toBe(false);
    expect(below([0.5, 1, 0, 0, Number.NaN, 0, 0], 1e-9)).toBe(false);
    // the threshold on u is ‖u‖ ≤ bound/√(2 + μ²)
    expect(below([0, 0, 0, 0, 0.99 / Math.SQRT2, 0, 0], 1)).toBe(true);
    expect(below([0, 0, 0, 0, 1.01 / Math.SQRT2, 0, 0], 1)).toBe(false);
  });
});

describe("problemResidual", () => {
  const base = unitFrictionContact();

  it("problemResidual defaults to the exact measure of the problem type", () => {
    const r = Float64Array.from([1, 0, 0]); // u = (0, 0, 0): the exact solution
    expect(problemResidual(base, r)).toBe(0);
  });
});

describe('"lcp-local": the LCP residual in the units of w', () => {
  // W = diag-dominant 2×2 with very different diagonals, so "lcp" and "lcp-local" differ.
  const W = Float64Array.from([400, 1, 1, 0.01]);
  const q = Float64Array.from([-2, -1e-3]);
  const problem: NonsmoothProblem = { contacts: 2, contactDim: 1, W, q };

  it("is ‖min(W_ii r_i, w_i)‖∞ (hand-computed)", () => {
    // r = (0.01, 0): w = (400·0.01 − 2, 0.01 − 1e-3) = (2, 0.009);
    // min(W_11 r_1, w_1) = min(4, 2) = 2; min(0, 0.009) = 0 → 2 ("lcp": min(0.01, 2) = 0.01).
    const r = Float64Array.from([0.01, 0]);
    expect(problemResidual(problem, r, "lcp-local")).toBeCloseTo(2, 14);
    expect(problemResidual(problem, r, "lcp")).toBeCloseTo(0.01, 14);
  });
});
