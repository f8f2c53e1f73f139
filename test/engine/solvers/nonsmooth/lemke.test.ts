/**
 * LemkeSolver (complementary pivoting) against the 2ⁿ enumeration of scenes.ts's random
 * LCPs, on dense and operator forms of W, with degenerate ties, the trivial q ≥ 0 case,
 * ray termination on infeasible LCPs, and the refusal of friction problems.
 */
import { describe, expect, it } from "vitest";
import {
  DenseDelassus,
  LemkeSolver,
  type NonsmoothProblem,
  NonsmoothProblemError,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { expectComplementary, expectCoupledTwoContactLcp } from "./checks";
import { maxAbsDiff } from "./helpers";
import { lcp, randomLcpCases } from "./scenes";

describe("Lemke on random SPD LCPs", () => {
  const cases = randomLcpCases();

  it("is complementary to 1e-12 and equals the 2ⁿ enumeration", () => {
    const lemke = new LemkeSolver();
    let active = 0;
    for (const { n, W, q, ref } of cases) {
      const r = new Float64Array(n);
      const res = lemke.solve(lcp(W, q), r);
      expect(res.converged).toBe(true);
      expect(res.status).toBe("converged");
      expect(res.measure).toBe("lcp");
      expect(res.residual).toBeLessThan(1e-12);
      expectComplementary(W, q, r, 1e-12);
      expect(maxAbsDiff(r, ref)).toBeLessThan(1e-10);
      active += ref.filter((v) => v > 0).length;
    }
    // The set mixes active and inactive contacts (not all r = 0, not all r > 0).
    const total = cases.reduce((s, c) => s + c.n, 0);
    expect(active).toBeGreaterThan(total / 5);
    expect(active).toBeLessThan(total);
  });

  it("accepts W as a DelassusOperator (dense and sparse) with the same answer", () => {
    const lemke = new LemkeSolver();
    for (const { n, W, q, ref } of cases.slice(-6)) {
      const r1 = new Float64Array(n);
      lemke.solve({ contacts: n, contactDim: 1, W: new DenseDelassus(W, n, 1), q }, r1);
      expect(maxAbsDiff(r1, ref)).toBeLessThan(1e-10);
      const rows: number[] = [];
      const cols: number[] = [];
      const vals: number[] = [];
      for (let i = 0; i < n; i++)
        for (let j = 0; j < n; j++) {
          rows.push(i);
          cols.push(j);
          vals.push(W[i * n + j]);
        }
      const sp = SparseBlockDelassus.fromBlockPairs(n, 1, rows, cols, vals);
      const r2 = new Float64Array(n);
      lemke.solve({ contacts: n, contactDim: 1, W: sp, q }, r2);
      expect(maxAbsDiff(r2, ref)).toBeLessThan(1e-10);
    }
  });

  it("handles degenerate ties (repeated q, q_i = 0, rank-one coupling) without cycling", () => {
    const lemke = new LemkeSolver();
    const n = 6;
    // W = 11ᵀ + 0.1 I, q = −1: all ratios tie at every step. Solution r = (1/(n + 0.1))·1.
    const W = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) W[i * n + j] = 1 + (i === j ? 0.1 : 0);
    const q = new Float64Array(n).fill(-1);
    const r = new Float64Array(n);
    const res = lemke.solve(lcp(W, q), r);
    expect(res.converged).toBe(true);
    for (let i = 0; i < n; i++) expect(r[i]).toBeCloseTo(1 / (n + 0.1), 13);
    // Identity W with q having zeros and repeats: r = max(0, −q).
    const I = new Float64Array(n * n);
    for (let i = 0; i < n; i++) I[i * n + i] = 1;
    const q2 = Float64Array.from([-1, 0, -1, 0.5, -1, 0]);
    const r2 = new Float64Array(n);
    expect(lemke.solve(lcp(I, q2), r2).converged).toBe(true);
    expect(Array.from(r2)).toEqual([1, 0, 1, 0, 1, 0]);
    // Rank-deficient PSD W (two coincident contacts): w = (r1 + r2) − 1, any split solves;
    // Lemke must return one complementary solution.
    const W3 = Float64Array.from([1, 1, 1, 1]);
    const q3 = Float64Array.from([-1, -1]);
    const r3 = new Float64Array(2);
    expect(lemke.solve(lcp(W3, q3), r3).converged).toBe(true);
    expectComplementary(W3, q3, r3, 1e-12);
    expect(r3[0] + r3[1]).toBeCloseTo(1, 14);
  });

  it("returns r = 0 at once when q ≥ 0", () => {
    const r = Float64Array.from([5, 5]);
    const res = new LemkeSolver().solve(
      lcp(Float64Array.from([2, 1, 1, 2]), Float64Array.from([0, 3])),
      r,
    );
    expect(res).toMatchObject({ converged: true, iterations: 0, residual: 0 });
    expect(Array.from(r)).toEqual([0, 0]);
  });

  it("reports ray termination on infeasible LCPs and leaves r unchanged", () => {
    const lemke = new LemkeSolver();
    // W = 0, q = −1: w = −1 whatever r.
    const r = Float64Array.from([0.25]);
    const res = lemke.solve(lcp(Float64Array.from([0]), Float64Array.from([-1])), r);
    expect(res.converged).toBe(false);
    expect(res.status).toBe("ray-termination");
    expect(res.message).toMatch(/ray termination/);
    expect(r[0]).toBe(0.25);
    // W = [[1, −1], [−1, 1]] PSD, q = (−1, −1): w₁ + w₂ = −2 < 0 for every r.
    const r2 = new Float64Array(2);
    const res2 = lemke.solve(
      lcp(Float64Array.from([1, -1, -1, 1]), Float64Array.from([-1, -1])),
      r2,
    );
    expect(res2.status).toBe("ray-termination");
    expect(res2.residual).toBe(1); // ‖min(0, −1)‖∞ for the unchanged r = 0
  });

  it("refuses friction problems with a clear error", () => {
    const prob: NonsmoothProblem = {
      contacts: 1,
      contactDim: 3,
      W: Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]),
      q: Float64Array.from([-1, 0, 0]),
      mu: Float64Array.from([0.5]),
    };
    expect(() => solveNonsmooth("lemke", prob, new Float64Array(3))).toThrow(NonsmoothProblemError);
    expect(() => solveNonsmooth("lemke", prob, new Float64Array(3))).toThrow(
      /frictionless LCP only.*pgs/,
    );
  });
});

describe("Lemke in closed form", () => {
  it("solves a coupled 2-contact LCP (both active; one separating)", () => {
    expectCoupledTwoContactLcp(new LemkeSolver());
  });
});
