import { describe, expect, it } from "vitest";
import {
  createNonsmoothSolver,
  DenseDelassus,
  LemkeSolver,
  type NonsmoothProblem,
  NonsmoothProblemError,
  type NonsmoothSolverName,
  problemResidual,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { affine, bruteForceLcp, maxAbsDiff, randomSpd } from "./helpers";

function lcp(W: Float64Array, q: Float64Array): NonsmoothProblem {
  return { contacts: q.length, contactDim: 1, W, q };
}

/** Checks w ≥ −tol, r ≥ −tol, |w_i r_i| ≤ tol with w computed here from W and q. */
function expectComplementary(W: Float64Array, q: Float64Array, r: Float64Array, tol: number) {
  const n = q.length;
  const w = affine(W, r, q, n);
  for (let i = 0; i < n; i++) {
    expect(r[i]).toBeGreaterThanOrEqual(-tol);
    expect(w[i]).toBeGreaterThanOrEqual(-tol);
    expect(Math.abs(w[i] * r[i])).toBeLessThanOrEqual(tol);
  }
}

// 3 random LCPs per size 2..12: W = AᵀA + 0.5 I (SPD, condition number ≲ 100), q ∈ [−1, 1]ⁿ.
const cases: { n: number; W: Float64Array; q: Float64Array; ref: Float64Array }[] = [];
{
  const rand = mulberry32(20240611);
  for (let n = 2; n <= 12; n++)
    for (let c = 0; c < 3; c++) {
      const W = randomSpd(n, 0.5, rand);
      const q = Float64Array.from({ length: n }, () => 2 * rand() - 1);
      cases.push({ n, W, q, ref: bruteForceLcp(W, q, n) });
    }
}

describe("Lemke on random SPD LCPs", () => {
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

describe("iterative solvers agree with Lemke on the same LCPs", () => {
  const names: NonsmoothSolverName[] = ["pgs", "pjacobi", "apgd", "barzilai-borwein"];
  for (const name of names) {
    it(`${name} matches Lemke to 1e-6`, () => {
      const solver = createNonsmoothSolver(name);
      const lemke = new LemkeSolver();
      let worst = 0;
      for (const { n, W, q } of cases) {
        const rl = new Float64Array(n);
        lemke.solve(lcp(W, q), rl);
        const r = new Float64Array(n);
        const res = solver.solve(lcp(W, q), r, { maxIterations: 20000, tolerance: 1e-11 });
        expect(res.converged).toBe(true);
        expect(res.measure).toBe("lcp");
        // The reported residual is the natural map recomputed independently here.
        expect(res.residual).toBeCloseTo(problemResidual(lcp(W, q), r), 14);
        expectComplementary(W, q, r, 1e-9);
        worst = Math.max(worst, maxAbsDiff(r, rl));
      }
      expect(worst).toBeLessThan(1e-6);
    });
  }

  it("solves a coupled 2-contact LCP in closed form", () => {
    // W = [[2, 1], [1, 2]]: q = (−1, −1) → both active, r = W⁻¹(1, 1) = (1/3, 1/3);
    // q = (−1, 1) → contact 2 separates, r = (1/2, 0), w₂ = 1 + 1/2.
    const W = Float64Array.from([2, 1, 1, 2]);
    for (const name of ["lemke", "pgs", "pjacobi", "apgd", "barzilai-borwein"] as const) {
      const r = new Float64Array(2);
      solveNonsmooth(name, lcp(W, Float64Array.from([-1, -1])), r, { tolerance: 1e-13 });
      expect(r[0]).toBeCloseTo(1 / 3, 12);
      expect(r[1]).toBeCloseTo(1 / 3, 12);
      const r2 = new Float64Array(2);
      solveNonsmooth(name, lcp(W, Float64Array.from([-1, 1])), r2, { tolerance: 1e-13 });
      expect(r2[0]).toBeCloseTo(0.5, 12);
      expect(r2[1]).toBeCloseTo(0, 12);
      expect(affine(W, r2, [-1, 1], 2)[1]).toBeCloseTo(1.5, 12);
    }
  });

  it("PSOR over-relaxation (ω = 1.5) converges to the same solution", () => {
    const { n, W, q, ref } = cases[cases.length - 1];
    const r = new Float64Array(n);
    const res = solveNonsmooth("pgs", lcp(W, q), r, {
      omega: 1.5,
      maxIterations: 20000,
      tolerance: 1e-12,
    });
    expect(res.converged).toBe(true);
    expect(maxAbsDiff(r, ref)).toBeLessThan(1e-8);
  });

  it("reports max-iterations when the budget is too small", () => {
    const { n, W, q } = cases[cases.length - 1];
    const res = solveNonsmooth("pjacobi", lcp(W, q), new Float64Array(n), {
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
