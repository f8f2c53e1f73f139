/**
 * NNCG (PgsSolver with conjugate: true, solver "nncg": PGS sweeps, ω = 0.8 by default,
 * with Fletcher–Reeves momentum) against independent references: Lemke and the
 * closed-form contact problems every splitting solver must solve, the De Saxcé conditions
 * checked from W directly, a resting column's closed-form impulses (where plain
 * Gauss–Seidel is slowest), the same iterates in the velocity and the Delassus form, the r
 * it returns when stopped short, polishing (options.polish) as plain PGS sweeps, and a
 * hull vertex on four terrain triangles where the sweeps stall (the restart threshold).
 */
import { describe, expect, it } from "vitest";
import {
  createNonsmoothSolver,
  LemkeSolver,
  type NonsmoothProblem,
  PgsSolver,
  problemResidual,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { expectRandomCoulomb, testCoulombClosedForms, testFrictionlessLcp } from "./checks";
import { affine, maxAbsDiff } from "./helpers";
import {
  denseW,
  hullVertexOnTerrain,
  randomFrictionProblems,
  randomSet,
  restingColumn,
} from "./scenes";

const nncg = () => new PgsSolver({ conjugate: true });

describe("NNCG on frictionless LCPs", () => {
  testFrictionlessLcp(nncg);

  it("velocity form: random LCPs on a factored W give Lemke's velocities", () => {
    for (let seed = 1; seed <= 8; seed++) {
      const set = randomSet(500 + seed, 4, 7, 1);
      const W = denseW(set, 1);
      const rand = mulberry32(seed + 40);
      const q = Float64Array.from({ length: set.nc }, () => 2 * rand() - 1.2);
      const r = new Float64Array(set.nc);
      const res = nncg().solve({ contacts: set.nc, contactDim: 1, W: set.op, q }, r, {
        tolerance: 1e-12,
        maxIterations: 100000,
      });
      expect(res.converged).toBe(true);
      // W may be only semidefinite (7 rows, rank ≤ 4·3): velocities are unique, r not.
      const lem = new Float64Array(set.nc);
      new LemkeSolver().solve({ contacts: set.nc, contactDim: 1, W, q }, lem);
      expect(maxAbsDiff(affine(W, r, q, set.nc), affine(W, lem, q, set.nc))).toBeLessThan(1e-8);
      expect(problemResidual({ contacts: set.nc, contactDim: 1, W, q }, r)).toBeLessThan(1e-10);
    }
  });
});

describe("NNCG on Coulomb friction (De Saxcé)", () => {
  testCoulombClosedForms(nncg);

  it("random coupled problems satisfy the De Saxcé conditions", () => {
    expectRandomCoulomb(nncg());
  });

  it("the solver named nncg is this one", () => {
    expect(createNonsmoothSolver("nncg").name).toBe("nncg");
  });
});

describe("NNCG iterates", () => {
  it("polishing (options.polish) are PGS's sweeps (ω = 1, then 0.8), bit for bit", () => {
    for (const p of randomFrictionProblems()) {
      const m = 3 * p.contacts;
      const start = new Float64Array(m);
      new PgsSolver().solve(p, start, { tolerance: 1e-6, maxIterations: 20000 });
      const a = Float64Array.from(start);
      const b = Float64Array.from(start);
      const ra = nncg().solve(p, a, { tolerance: 0, maxIterations: 23, polish: true });
      const pgs = new PgsSolver();
      pgs.solve(p, b, { tolerance: 0, maxIterations: 1 });
      const rb = pgs.solve(p, b, { tolerance: 0, maxIterations: 22, omega: 0.8 });
      expect(ra.iterations).toBe(23);
      expect(ra.residual).toBe(rb.residual);
      for (let k = 0; k < m; k++) expect(a[k] === b[k]).toBe(true);
    }
  });

  it("stopped short, return a swept iterate: inside the cones, its residual recomputed", () => {
    for (const p of randomFrictionProblems()) {
      const r = new Float64Array(3 * p.contacts);
      const res = nncg().solve(p, r, { tolerance: 1e-14, maxIterations: 6 });
      expect(res).toMatchObject({ converged: false, status: "max-iterations", iterations: 6 });
      expect(res.message).toMatch(/^nncg: /);
      expect(res.residual).toBe(problemResidual(p, r));
      const mu = p.mu as Float64Array;
      for (let i = 0; i < p.contacts; i++)
        expect(Math.hypot(r[3 * i + 1], r[3 * i + 2])).toBeLessThanOrEqual(
          mu[i] * r[3 * i] * (1 + 1e-15),
        );
    }
  });
});

describe("resting column (closed form P_j = (k − j) m g h)", () => {
  it("one particle alone on the ground: exact in one sweep (the first sweep's ω = 1)", () => {
    const [mp, g, h] = [0.1, 9.81, 1 / 240];
    const { op, q } = restingColumn(1, mp, g, h, 3);
    const r = new Float64Array(3);
    const p: NonsmoothProblem = { contacts: 1, contactDim: 3, W: op, q, mu: Float64Array.of(0.5) };
    const res = nncg().solve(p, r, { maxIterations: 1, tolerance: 1e-15, warmStart: false });
    expect(res).toMatchObject({ converged: true, iterations: 1 });
    expect(Math.abs(r[0] / (mp * g * h) - 1)).toBeLessThan(1e-14);
    // explicitly under-relaxed, the same sweep leaves 1 − ω of the impulse to find
    nncg().solve(p, r.fill(0), { maxIterations: 1, tolerance: 0, omega: 0.8, warmStart: false });
    expect(Math.abs(r[0] / (mp * g * h) - 0.8)).toBeLessThan(1e-14);
  });

  const k = 12;
  const [mp, g, h] = [0.1, 9.81, 1 / 240];
  for (const dim of [1, 3] as const)
    it(`NNCG reaches it in a fraction of PGS's sweeps (dim ${dim})`, () => {
      const { op, q, exact } = restingColumn(k, mp, g, h, dim);
      const mu = new Float64Array(k).fill(0.5);
      const p: NonsmoothProblem = { contacts: k, contactDim: dim, W: op, q, mu };
      const opts = { tolerance: 1e-12, maxIterations: 100000, warmStart: false };
      const r = new Float64Array(dim * k);
      const cg = nncg().solve(p, r, opts);
      expect(cg.converged).toBe(true);
      // Residual 1e-12 m/s, W's condition number ~k²: impulses checked relatively.
      for (let j = 0; j < k; j++) expect(Math.abs(r[dim * j] / exact[j] - 1)).toBeLessThan(1e-9);
      const gs = new PgsSolver().solve(p, new Float64Array(dim * k), opts);
      expect(gs.converged).toBe(true);
      expect(cg.iterations).toBeLessThan(0.25 * gs.iterations);
    });
});

describe("a hull vertex on four terrain triangles (H-100's stalled impacts)", () => {
  it("NNCG meets 1e-3 g h in under 100 sweeps (restarting at β > 1: 271), checked on the dense W", () => {
    // The sweeps' step g stays constant up to a zigzag (β = 0.98 / 1.02, or 1 + 1e-6)
    // while load moves between the vertex's contacts: a restart at β > 1 drops the
    // momentum every other sweep (pgs.ts, NNCG_RESTART).
    const { problem, dense } = hullVertexOnTerrain();
    const tolerance = (1e-3 * 9.81) / 240;
    const r = new Float64Array(3 * problem.contacts);
    const res = nncg().solve(problem, r, { tolerance, maxIterations: 100, warmStart: false });
    expect(res.converged).toBe(true);
    expect(problemResidual(dense, r)).toBeLessThanOrEqual(tolerance);
    const gs = new PgsSolver().solve(problem, new Float64Array(r.length), {
      tolerance,
      maxIterations: 100,
      warmStart: false,
    });
    expect(gs.converged).toBe(false);
  });
});
