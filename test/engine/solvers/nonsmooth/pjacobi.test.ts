/**
 * PJacobiSolver (projected Jacobi) against independent references: the LCP by Lemke and
 * enumeration, closed-form friction contacts, the θ-scan Coulomb reference, the De Saxcé
 * conditions checked from W directly, and its automatic relaxation against λ_max(D⁻¹W)
 * computed with ml-matrix.
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { PgsSolver, PJacobiSolver } from "../../../../src/engine/solvers/nonsmooth";
import {
  expectRandomCoulomb,
  testCoulombClosedForms,
  testFrictionlessLcp,
  warmStartProblems,
} from "./checks";
import { maxAbsDiff } from "./helpers";
import { lcp, randomLcpCases } from "./scenes";

describe("projected Jacobi on frictionless LCPs", () => {
  testFrictionlessLcp(() => new PJacobiSolver());

  it("reports max-iterations when the budget is too small", () => {
    const cases = randomLcpCases();
    const { n, W, q } = cases[cases.length - 1];
    const res = new PJacobiSolver().solve(lcp(W, q), new Float64Array(n), {
      maxIterations: 3,
      tolerance: 1e-14,
      warmStart: false,
    });
    expect(res.converged).toBe(false);
    expect(res.status).toBe("max-iterations");
    expect(res.iterations).toBe(3);
    expect(res.message).toMatch(/pjacobi/);
  });
});

describe("projected Jacobi on Coulomb friction (De Saxcé)", () => {
  testCoulombClosedForms(() => new PJacobiSolver());

  it("random coupled problems: the De Saxcé conditions, the solution PGS finds", () => {
    const jacobi = expectRandomCoulomb(new PJacobiSolver());
    const gaussSeidel = expectRandomCoulomb(new PgsSolver());
    jacobi.forEach((r, k) => {
      expect(maxAbsDiff(r, gaussSeidel[k])).toBeLessThan(1e-6);
    });
  });

  it("checks before updating: 0 iterations when started from the solution", () => {
    for (const p of Object.values(warmStartProblems())) {
      const r = new Float64Array(p.contacts * p.contactDim);
      expect(
        new PgsSolver().solve(p, r, { tolerance: 1e-10, maxIterations: 10000 }).converged,
      ).toBe(true);
      const pj = new PJacobiSolver().solve(p, r, { tolerance: 1e-10 });
      expect(pj.iterations).toBe(0);
      expect(pj.converged).toBe(true);
    }
  });
});

describe("projected Jacobi's automatic relaxation", () => {
  /** λ_max(D^{-1/2} W D^{-1/2}) = λ_max(D⁻¹W), D = diag(W), by ml-matrix. */
  function lambdaMax(W: Float64Array, n: number): number {
    const s = Matrix.zeros(n, n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++)
        s.set(i, j, W[i * n + j] / Math.sqrt(W[i * n + i] * W[j * n + j]));
    return Math.max(...new EigenvalueDecomposition(s).realEigenvalues);
  }

  it("ω = 1 for uncoupled contacts (D⁻¹W = I); the given ω when one is passed", () => {
    const W = Float64Array.from([2, 0, 0, 0, 5, 0, 0, 0, 0.5]);
    const q = Float64Array.from([-1, 1, -2]);
    const s = new PJacobiSolver();
    const r = new Float64Array(3);
    expect(s.solve(lcp(W, q), r).converged).toBe(true);
    expect(s.lastOmega).toBe(1);
    expect(Array.from(r)).toEqual([0.5, 0, 4]);
    s.solve(lcp(W, q), r, { omega: 0.7 });
    expect(s.lastOmega).toBe(0.7);
  });

  it("strong coupling (W = 11ᵀ + 0.1 I): 1/λ_max ≤ ω < 2/λ_max, and the LCP is solved", () => {
    // ω = 1 would diverge here: λ_max(D⁻¹W) = (n + 0.1)/1.1 ≈ 5.5 > 2.
    const n = 6;
    const W = new Float64Array(n * n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) W[i * n + j] = 1 + (i === j ? 0.1 : 0);
    const q = new Float64Array(n).fill(-1);
    const lam = lambdaMax(W, n);
    expect(lam).toBeCloseTo((n + 0.1) / 1.1, 12);
    const s = new PJacobiSolver();
    const r = new Float64Array(n);
    const res = s.solve(lcp(W, q), r, { tolerance: 1e-12, maxIterations: 10000 });
    expect(s.lastOmega * lam).toBeLessThan(2);
    expect(s.lastOmega * lam).toBeGreaterThanOrEqual(1 - 1e-9);
    expect(res.converged).toBe(true);
    // r = (1/(n + 0.1))·1 (all active, W r = 1)
    for (let i = 0; i < n; i++) expect(r[i]).toBeCloseTo(1 / (n + 0.1), 11);
  });
});
