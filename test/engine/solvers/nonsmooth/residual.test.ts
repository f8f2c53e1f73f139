import { describe, expect, it } from "vitest";
import {
  frictionResidual,
  lcpResidual,
  type NonsmoothProblem,
  NonsmoothProblemError,
  PgsSolver,
  problemResidual,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";

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

describe("problem validation", () => {
  const W = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  const base: NonsmoothProblem = {
    contacts: 1,
    contactDim: 3,
    W,
    q: Float64Array.from([-1, 0, 0]),
    mu: Float64Array.from([0.3]),
  };

  it("rejects wrong sizes, missing or negative μ, bad options and unknown solvers", () => {
    const r = new Float64Array(3);
    expect(() => solveNonsmooth("pgs", { ...base, q: new Float64Array(2) }, r)).toThrow(/q has 2/);
    expect(() => solveNonsmooth("pgs", base, new Float64Array(1))).toThrow(/r has 1/);
    expect(() => solveNonsmooth("apgd", { ...base, W: new Float64Array(4) }, r)).toThrow(/3×3/);
    expect(() => solveNonsmooth("pjacobi", { ...base, mu: undefined }, r)).toThrow(/needs mu/);
    expect(() => solveNonsmooth("pgs", { ...base, mu: Float64Array.from([-1]) }, r)).toThrow(
      NonsmoothProblemError,
    );
    expect(() => solveNonsmooth("pgs", base, r, { omega: 2.5 })).toThrow(/omega/);
    const op = SparseBlockDelassus.fromBlockPairs(2, 3, [0, 1], [0, 1], new Float64Array(18));
    expect(() => solveNonsmooth("pgs", { ...base, W: op }, r)).toThrow(/2 blocks of 3/);
    expect(() => solveNonsmooth("gauss" as "pgs", base, r)).toThrow(/unknown nonsmooth solver/);
  });

  it("solves an empty problem trivially", () => {
    for (const name of ["pgs", "pjacobi", "lemke", "apgd", "barzilai-borwein"] as const) {
      const res = solveNonsmooth(
        name,
        { contacts: 0, contactDim: 1, W: new Float64Array(0), q: new Float64Array(0) },
        new Float64Array(0),
      );
      expect(res).toMatchObject({ converged: true, iterations: 0, residual: 0 });
    }
  });

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

  it("PGS measured in it stops with every w_i ≥ −tol and no pushed contact with w_i > tol", () => {
    const tol = 1e-9;
    const r = new Float64Array(2);
    const res = new PgsSolver({ residual: "lcp-local" }).solve(problem, r, {
      tolerance: tol,
      maxIterations: 10_000,
    });
    expect(res).toMatchObject({ converged: true, measure: "lcp-local" });
    // Exact solution by the active sets: both active, W r = −q = (2, 1e-3), det W = 3,
    // gives r₂ = (400·1e-3 − 2)/3 < 0, rejected; contact 1 alone: r₁ = 2/400 = 0.005 and
    // w₂ = r₁ − 1e-3 = 0.004 > 0, the solution.
    expect(r[1]).toBe(0);
    expect(Math.abs(400 * r[0] - 2)).toBeLessThanOrEqual(tol);
    const w = [400 * r[0] + r[1] - 2, r[0] + 0.01 * r[1] - 1e-3];
    expect(Math.min(...w)).toBeGreaterThanOrEqual(-tol);
  });
});
