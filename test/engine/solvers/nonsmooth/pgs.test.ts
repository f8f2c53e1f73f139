/**
 * PgsSolver (projected Gauss–Seidel / PSOR) in its Delassus form on dense and sparse-block W
 * and in its velocity form on a FactoredDelassus, against independent references: the LCP
 * by enumeration and Lemke, closed-form friction contacts, the θ-scan Coulomb reference,
 * the De Saxcé conditions checked from W directly, Delassus-form sweeps on the dense
 * s·H Y Hᵀ, and a resting column's closed-form impulses; plus warm starts.
 */
import { describe, expect, it } from "vitest";
import {
  DenseDelassus,
  LemkeSolver,
  type NonsmoothProblem,
  PgsSolver,
  problemResidual,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import {
  expectRandomCoulomb,
  SPHERE_ON_PLANE,
  testCoulombClosedForms,
  testFrictionlessLcp,
  warmStartProblems,
} from "./checks";
import { affine, bruteForceLcp, maxAbsDiff } from "./helpers";
import {
  denseW,
  fc,
  lcp,
  particleContacts,
  randomLcpCases,
  randomSet,
  restingColumn,
  vGroove,
} from "./scenes";

describe("PGS on frictionless LCPs", () => {
  testFrictionlessLcp(() => new PgsSolver());

  it("PSOR over-relaxation (ω = 1.5) converges to the same solution", () => {
    const cases = randomLcpCases();
    const { n, W, q, ref } = cases[cases.length - 1];
    const r = new Float64Array(n);
    const res = new PgsSolver().solve(lcp(W, q), r, {
      omega: 1.5,
      maxIterations: 20000,
      tolerance: 1e-12,
    });
    expect(res.converged).toBe(true);
    expect(maxAbsDiff(r, ref)).toBeLessThan(1e-8);
  });

  it("reports max-iterations when the budget is too small, with the residual of the r returned", () => {
    const cases = randomLcpCases();
    const { n, W, q } = cases[cases.length - 1];
    const r = new Float64Array(n);
    const res = new PgsSolver().solve(lcp(W, q), r, { maxIterations: 2, tolerance: 1e-14 });
    expect(res).toMatchObject({ converged: false, status: "max-iterations", iterations: 2 });
    expect(res.message).toMatch(/^pgs: /);
    expect(res.residual).toBe(problemResidual(lcp(W, q), r));
  });
});

describe("PGS on Coulomb friction (De Saxcé)", () => {
  testCoulombClosedForms(() => new PgsSolver());

  it("an isotropic W_t (solid sphere) sticks in one sweep: r_t = −q_t / W_tt", () => {
    // I = 2/5 m R², contact at −R n: W_nn = 1/m, W_tt = 1/m + R²/I = 3.5/m, no coupling.
    const { m, mu, stickQ: q } = SPHERE_ON_PLANE;
    const Ws = [1 / m, 0, 0, 0, 3.5 / m, 0, 0, 0, 3.5 / m];
    const r = new Float64Array(3);
    new PgsSolver().solve(fc(Ws, q, [mu]), r);
    expect(maxAbsDiff(r, [2, -0.1 / (3.5 / m), 0.2 / (3.5 / m)])).toBeLessThan(1e-13);
  });

  it("take-off: q_n > 0 gives r = 0", () => {
    const { W, mu } = SPHERE_ON_PLANE;
    const r = Float64Array.from([1, 1, 1]);
    const res = new PgsSolver().solve(fc(W, [0.3, 2, 0], [mu]), r);
    expect(res.converged).toBe(true);
    expect(Array.from(r)).toEqual([0, 0, 0]);
  });

  it("V-groove: stick stops the particle with r inside both cones", () => {
    const m = 1.5;
    const mu = 0.3;
    const { problem, rows } = vGroove(m, Math.PI / 6, [0.1, 0, -1], mu);
    const r = new Float64Array(6);
    const res = new PgsSolver().solve(problem, r, { tolerance: 1e-12, maxIterations: 5000 });
    expect(res.converged).toBe(true);
    const u = affine(problem.W as Float64Array, r, problem.q, 6);
    expect(maxAbsDiff(u, new Float64Array(6))).toBeLessThan(1e-10);
    for (let i = 0; i < 2; i++)
      expect(Math.hypot(r[3 * i + 1], r[3 * i + 2])).toBeLessThanOrEqual(mu * r[3 * i] + 1e-12);
    // Total impulse Σ R_iᵀ r_i = m (0 − v).
    const P = [0, 1, 2].map((a) => rows.reduce((acc, row, k) => acc + row[a] * r[k], 0));
    expect(maxAbsDiff(P, [-0.1 * m, 0, m])).toBeLessThan(1e-10);
  });

  it("random coupled problems satisfy the De Saxcé conditions", () => {
    expectRandomCoulomb(new PgsSolver());
  });
});

describe("PGS warm start", () => {
  const problems = warmStartProblems();
  for (const [label, p] of Object.entries(problems) as [string, NonsmoothProblem][])
    it(`started from the solution converges in 1 iteration (${label})`, () => {
      const m = p.contacts * p.contactDim;
      const pgs = new PgsSolver();
      const r = new Float64Array(m);
      const cold = pgs.solve(p, r, { tolerance: 1e-10, maxIterations: 10000 });
      expect(cold.converged).toBe(true);
      expect(cold.iterations).toBeGreaterThan(3);
      const sol = Float64Array.from(r);
      const warm = pgs.solve(p, r, { tolerance: 1e-10, warmStart: true });
      expect(warm.converged).toBe(true);
      expect(warm.iterations).toBe(1);
      expect(maxAbsDiff(r, sol)).toBeLessThan(1e-9);
      // warmStart: false ignores the r passed in and repeats the cold solve exactly.
      const again = pgs.solve(p, r, { tolerance: 1e-10, maxIterations: 10000, warmStart: false });
      expect(again.iterations).toBe(cold.iterations);
      expect(maxAbsDiff(r, sol)).toBe(0);
    });
});

describe("PGS on a sparse block Delassus operator", () => {
  const m = 180;
  it("gives PGS results bit-identical to the dense matrix (friction and frictionless)", () => {
    // The same matrix in both forms: dense = the sparse operator's values laid out densely.
    const { sparse: sp, q: qq, mu } = particleContacts(40, 60, 11, false);
    const W = sp.toDense();
    for (const maxIterations of [1, 7, 200]) {
      const rd = new Float64Array(m);
      const rs = new Float64Array(m);
      const pgs = new PgsSolver();
      const a = pgs.solve({ contacts: 60, contactDim: 3, W, q: qq, mu }, rd, { maxIterations });
      const b = pgs.solve({ contacts: 60, contactDim: 3, W: sp, q: qq, mu }, rs, { maxIterations });
      expect(a.iterations).toBe(b.iterations);
      expect(a.residual).toBe(b.residual);
      for (let i = 0; i < m; i++) expect(rs[i] === rd[i]).toBe(true);
      expect(rd.some((x) => x !== 0)).toBe(true);
    }
    // Frictionless: the normal rows only (a 1×1-block operator from the same contacts).
    const nrows: number[] = [];
    const ncols: number[] = [];
    const nvals: number[] = [];
    for (let i = 0; i < 60; i++)
      for (let k = sp.rowPtr[i]; k < sp.rowPtr[i + 1]; k++) {
        nrows.push(i);
        ncols.push(sp.colIdx[k]);
        nvals.push(sp.values[9 * k]);
      }
    const spN = SparseBlockDelassus.fromBlockPairs(60, 1, nrows, ncols, nvals);
    const WN = spN.toDense();
    const qN = Float64Array.from({ length: 60 }, (_, i) => qq[3 * i]);
    const r1 = new Float64Array(60);
    const r2 = new Float64Array(60);
    const a = solveNonsmooth("pgs", { contacts: 60, contactDim: 1, W: WN, q: qN }, r1, {
      maxIterations: 50,
    });
    const b = solveNonsmooth("pgs", { contacts: 60, contactDim: 1, W: spN, q: qN }, r2, {
      maxIterations: 50,
    });
    expect(a.residual).toBe(b.residual);
    for (let i = 0; i < 60; i++) expect(r1[i] === r2[i]).toBe(true);
  });

  it("runs PGS on thousands of contacts without a dense matrix", () => {
    const nc = 3000;
    const { sparse: sp, q: qq, mu } = particleContacts(2500, nc, 5, false);
    const r = new Float64Array(3 * nc);
    const p: NonsmoothProblem = { contacts: nc, contactDim: 3, W: sp, q: qq, mu };
    const r0 = problemResidual(p, r);
    const res = solveNonsmooth("pgs", p, r, { maxIterations: 100, tolerance: 1e-8 });
    expect(res.iterations).toBeGreaterThan(0);
    expect(res.residual).toBeLessThan(1e-3 * r0);
    expect(res.residual).toBeCloseTo(problemResidual(p, r), 12);
  });
});

describe("velocity-form PGS", () => {
  // nncg too: its momentum is carried in generalized velocity in the velocity form
  for (const conjugate of [false, true])
    for (const dim of [1, 3] as const)
      it(`makes the same sweeps as the Delassus form on the dense W (${conjugate ? "nncg" : "pgs"}, dim ${dim})`, () => {
        for (let seed = 1; seed <= 5; seed++) {
          const set = randomSet(100 * seed + dim, 5, 12, dim);
          const W = denseW(set, dim);
          const m = set.nc * dim;
          const rand = mulberry32(seed);
          const q = Float64Array.from({ length: m }, () => 2 * rand() - 1);
          const mu = Float64Array.from({ length: set.nc }, () => 0.2 + 0.6 * rand());
          const base = { contacts: set.nc, contactDim: dim, q, mu: dim === 3 ? mu : undefined };
          for (const sweeps of [1, 3, 17]) {
            const rv = new Float64Array(m);
            const rd = new Float64Array(m);
            // nncg: the same ω in every sweep of both forms (unset, its first sweep has ω = 1)
            const opts = {
              maxIterations: sweeps,
              tolerance: 0,
              warmStart: false,
              ...(conjugate ? { omega: 0.8 } : {}),
            };
            new PgsSolver({ conjugate }).solve({ ...base, W: set.op }, rv, opts);
            new PgsSolver({ conjugate }).solve(
              { ...base, W: new DenseDelassus(W, set.nc, dim) },
              rd,
              opts,
            );
            // Same u_i at every contact update, up to the round-off of the two products.
            expect(maxAbsDiff(rv, rd)).toBeLessThan(
              1e-10 * (1 + maxAbsDiff(rd, new Float64Array(m))),
            );
          }
        }
      });

  it("re-reads W after the FactoredDelassus is rewritten and reset (one solver, two W)", () => {
    // The diagonal cache is kept across solves on one W (workspace.ts DiagonalCache, per
    // FactoredDelassus revision); here the same operator object is rebound to responses ×¼
    // (W → W/4) and the second solve must make the Delassus form's sweeps on the dense W/4.
    for (const conjugate of [false, true]) {
      const dim = 3 as const;
      const set = randomSet(4242, 5, 12, dim);
      const m = set.nc * dim;
      const rand = mulberry32(9);
      const q = Float64Array.from({ length: m }, () => 2 * rand() - 1);
      const mu = Float64Array.from({ length: set.nc }, () => 0.2 + 0.6 * rand());
      const base = { contacts: set.nc, contactDim: dim, q, mu };
      const opts = { maxIterations: 17, tolerance: 0, warmStart: false, omega: 0.8 };
      const solver = new PgsSolver({ conjugate });
      solver.solve({ ...base, W: set.op }, new Float64Array(m), opts);
      const { op } = set;
      const dof = op.dof.slice(0, 2 * set.nc);
      const width = op.width.slice(0, 2 * set.nc);
      for (let k = 0; k < 36 * set.nc; k++) op.resp[k] *= 0.25;
      op.reset(set.nc, dim, set.n, 1, op.jac, op.resp);
      for (let e = 0; e < 2 * set.nc; e++) op.setSide(e >> 1, e & 1, dof[e], width[e]);
      const rv = new Float64Array(m);
      solver.solve({ ...base, W: op }, rv, opts);
      const W = denseW(set, dim).map((x) => 0.25 * x);
      const rd = new Float64Array(m);
      new PgsSolver({ conjugate }).solve(
        { ...base, W: new DenseDelassus(W, set.nc, dim) },
        rd,
        opts,
      );
      expect(maxAbsDiff(rv, rd)).toBeLessThan(1e-10 * (1 + maxAbsDiff(rd, new Float64Array(m))));
    }
  });

  it("solves random frictionless LCPs as the enumeration and Lemke do", () => {
    for (let seed = 1; seed <= 8; seed++) {
      const set = randomSet(500 + seed, 4, 7, 1);
      const W = denseW(set, 1);
      const rand = mulberry32(seed + 40);
      const q = Float64Array.from({ length: set.nc }, () => 2 * rand() - 1.2);
      const ref = bruteForceLcp(W, q, set.nc, 1e-9);
      const r = new Float64Array(set.nc);
      const res = new PgsSolver().solve({ contacts: set.nc, contactDim: 1, W: set.op, q }, r, {
        tolerance: 1e-12,
        maxIterations: 100000,
      });
      expect(res.converged).toBe(true);
      // W may be only semidefinite (7 rows, rank ≤ n): compare velocities and residual.
      const lem = new Float64Array(set.nc);
      new LemkeSolver().solve({ contacts: set.nc, contactDim: 1, W, q }, lem);
      const w = affine(W, r, q, set.nc);
      const wRef = affine(W, ref, q, set.nc);
      expect(maxAbsDiff(w, wRef)).toBeLessThan(1e-8);
      expect(maxAbsDiff(affine(W, lem, q, set.nc), wRef)).toBeLessThan(1e-8);
      expect(problemResidual({ contacts: set.nc, contactDim: 1, W, q }, r)).toBeLessThan(1e-10);
    }
  });

  it("friction: converges to the Coulomb (De Saxcé) solution, the residual checked on the dense W", () => {
    for (let seed = 1; seed <= 5; seed++) {
      const set = randomSet(900 + seed, 6, 5, 3);
      const W = denseW(set, 3);
      const m = 3 * set.nc;
      const rand = mulberry32(seed + 7);
      const q = Float64Array.from({ length: m }, (_, k) => (k % 3 === 0 ? -rand() : rand() - 0.5));
      const mu = Float64Array.from({ length: set.nc }, () => 0.3 + 0.4 * rand());
      const r = new Float64Array(m);
      const res = new PgsSolver().solve({ contacts: set.nc, contactDim: 3, W: set.op, q, mu }, r, {
        tolerance: 1e-11,
        maxIterations: 200000,
      });
      expect(res.converged).toBe(true);
      const dense: NonsmoothProblem = { contacts: set.nc, contactDim: 3, W, q, mu };
      expect(problemResidual(dense, r)).toBeLessThan(1e-10);
    }
  });
});

describe("resting column (closed form P_j = (k − j) m g h)", () => {
  const k = 12;
  const [mp, g, h] = [0.1, 9.81, 1 / 240];
  for (const dim of [1, 3] as const)
    it(`velocity-form PGS reaches it; a warm start from the last step needs far fewer sweeps (dim ${dim})`, () => {
      const { op, q, exact } = restingColumn(k, mp, g, h, dim);
      const mu = new Float64Array(k).fill(0.5);
      const p: NonsmoothProblem = { contacts: k, contactDim: dim, W: op, q, mu };
      const pgs = new PgsSolver();
      const r = new Float64Array(dim * k);
      const opts = { tolerance: 1e-12, maxIterations: 100000 };
      const cold = pgs.solve(p, r, { ...opts, warmStart: false });
      expect(cold.converged).toBe(true);
      // Residual 1e-12 m/s; the column's W has condition number ~k², so the impulses
      // are checked relatively.
      for (let j = 0; j < k; j++) expect(Math.abs(r[dim * j] / exact[j] - 1)).toBeLessThan(1e-9);
      // Next step, load unchanged (a settled stack): warm-started, one sweep.
      const same = pgs.solve(p, Float64Array.from(r), opts);
      expect(same.iterations).toBe(1);
      // Next step with 1 % more load (the slowest mode of a column for Gauss–Seidel),
      // solved to a working tolerance (1e-6 m/s) warm from this step's impulses and cold.
      q[0] *= 1.01;
      const work = { tolerance: 1e-6, maxIterations: 100000 };
      const warmR = Float64Array.from(r);
      const warm = pgs.solve(p, warmR, work);
      const coldR = new Float64Array(dim * k);
      const cold2 = pgs.solve(p, coldR, { ...work, warmStart: false });
      expect(warm.converged && cold2.converged).toBe(true);
      for (let j = 0; j < k; j++) {
        // 1e-6 m/s on the velocities is ~2e-4 relative on these impulses (k² conditioning).
        expect(Math.abs(warmR[dim * j] / (1.01 * exact[j]) - 1)).toBeLessThan(1e-3);
        expect(Math.abs(coldR[dim * j] / (1.01 * exact[j]) - 1)).toBeLessThan(1e-3);
      }
      // Measured: 248 sweeps warm, 516 cold.
      expect(warm.iterations).toBeLessThan(0.6 * cold2.iterations);
    });
});

describe('PGS measured in "lcp-local" (the LCP residual in the units of w)', () => {
  // W = diag-dominant 2×2 with very different diagonals, so "lcp" and "lcp-local" differ.
  const W = Float64Array.from([400, 1, 1, 0.01]);
  const q = Float64Array.from([-2, -1e-3]);
  const problem: NonsmoothProblem = { contacts: 2, contactDim: 1, W, q };

  it("stops with every w_i ≥ −tol and no pushed contact with w_i > tol", () => {
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
