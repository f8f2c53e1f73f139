/**
 * Assertions shared by the nonsmooth solvers' test files: the complementarity conditions
 * checked directly from W, q and r (computed here, not by the solvers' residual code), and
 * the problems of scenes.ts every solver of a formulation must solve the same way — run
 * by each solver's own test file on that solver.
 */
import { expect, it } from "vitest";
import {
  LemkeSolver,
  type NonsmoothProblem,
  type NonsmoothSolver,
  problemResidual,
  problemVelocity,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { affine, maxAbsDiff, randomSpd } from "./helpers";
import {
  coulombReference,
  fc,
  lcp,
  randomFrictionProblems,
  randomLcpCases,
  vGroove,
} from "./scenes";

/** Checks w ≥ −tol, r ≥ −tol, |w_i r_i| ≤ tol with w computed here from W and q. */
export function expectComplementary(
  W: Float64Array,
  q: Float64Array,
  r: Float64Array,
  tol: number,
): void {
  const n = q.length;
  const w = affine(W, r, q, n);
  for (let i = 0; i < n; i++) {
    expect(r[i]).toBeGreaterThanOrEqual(-tol);
    expect(w[i]).toBeGreaterThanOrEqual(-tol);
    expect(Math.abs(w[i] * r[i])).toBeLessThanOrEqual(tol);
  }
}

/** De Saxcé conditions checked directly: r ∈ K, ũ ∈ K*, ũ·r = 0 (per contact). */
export function expectCoulomb(p: NonsmoothProblem, r: Float64Array, tol: number): void {
  const u = affine(p.W as Float64Array, r, p.q, 3 * p.contacts);
  const mus = p.mu as Float64Array;
  for (let i = 0; i < p.contacts; i++) {
    const mu = mus[i];
    const [rn, r1, r2] = [r[3 * i], r[3 * i + 1], r[3 * i + 2]];
    const [un, u1, u2] = [u[3 * i], u[3 * i + 1], u[3 * i + 2]];
    const ut = Math.hypot(u1, u2);
    const vn = un + mu * ut;
    expect(Math.hypot(r1, r2) - mu * rn).toBeLessThanOrEqual(tol);
    expect(mu * ut - vn).toBeLessThanOrEqual(tol); // μ‖ũ_t‖ ≤ ũ_n ⟺ u_n ≥ 0
    expect(Math.abs(vn * rn + u1 * r1 + u2 * r2)).toBeLessThanOrEqual(tol);
  }
}

/**
 * Every iterative solver on the random LCPs of scenes.ts: converged in the "lcp" measure,
 * its reported residual equal to the natural map recomputed independently, complementary
 * to 1e-9 and within 1e-6 of Lemke's solution.
 */
export function expectMatchesLemke(solver: NonsmoothSolver): void {
  const lemke = new LemkeSolver();
  let worst = 0;
  for (const { n, W, q } of randomLcpCases()) {
    const rl = new Float64Array(n);
    lemke.solve(lcp(W, q), rl);
    const r = new Float64Array(n);
    const res = solver.solve(lcp(W, q), r, { maxIterations: 20000, tolerance: 1e-11 });
    expect(res.converged).toBe(true);
    expect(res.measure).toBe("lcp");
    expect(res.residual).toBeCloseTo(problemResidual(lcp(W, q), r), 14);
    expectComplementary(W, q, r, 1e-9);
    worst = Math.max(worst, maxAbsDiff(r, rl));
  }
  expect(worst).toBeLessThan(1e-6);
}

/**
 * W = [[2, 1], [1, 2]]: q = (−1, −1) → both active, r = W⁻¹(1, 1) = (1/3, 1/3);
 * q = (−1, 1) → contact 2 separates, r = (1/2, 0), w₂ = 1 + 1/2.
 */
export function expectCoupledTwoContactLcp(solver: NonsmoothSolver): void {
  const W = Float64Array.from([2, 1, 1, 2]);
  const r = new Float64Array(2);
  solver.solve(lcp(W, Float64Array.from([-1, -1])), r, { tolerance: 1e-13 });
  expect(r[0]).toBeCloseTo(1 / 3, 12);
  expect(r[1]).toBeCloseTo(1 / 3, 12);
  const r2 = new Float64Array(2);
  solver.solve(lcp(W, Float64Array.from([-1, 1])), r2, { tolerance: 1e-13 });
  expect(r2[0]).toBeCloseTo(0.5, 12);
  expect(r2[1]).toBeCloseTo(0, 12);
  expect(affine(W, r2, [-1, 1], 2)[1]).toBeCloseTo(1.5, 12);
}

/** Sphere on a plane, W = diag(1/m, 1/m, 1/m), m = 2, μ = 0.5. */
export const SPHERE_ON_PLANE = {
  m: 2,
  mu: 0.5,
  W: [0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5],
  /** ‖q_t‖ m = 0.447 < μ r_n = 1: stick. */
  stickQ: [-1, 0.1, -0.2],
  /** ‖q_t‖ m = 4 > μ r_n = 1: slip. */
  slipQ: [-1, 1.2, -1.6],
};

/**
 * The exact Coulomb solvers (PGS, projected Jacobi) on the sphere on a plane:
 * stick r_n = −q_n m, r_t = −q_t m inside the cone; slip r on the cone boundary opposite
 * to sliding, r = (2, −0.6, 0.8), with u_n = 0 and u_t = 0.75 q_t.
 */
export function expectSphereOnPlaneCoulomb(solver: NonsmoothSolver): void {
  const { W, mu, stickQ, slipQ } = SPHERE_ON_PLANE;
  const r = new Float64Array(3);
  const stick = solver.solve(fc(W, stickQ, [mu]), r, { tolerance: 1e-13 });
  expect(stick.converged).toBe(true);
  expect(stick.measure).toBe("coulomb");
  expect(maxAbsDiff(r, [2, -0.2, 0.4])).toBeLessThan(1e-13);
  expect(problemResidual(fc(W, stickQ, [mu]), r)).toBeLessThan(1e-8);

  const rs = new Float64Array(3);
  const slip = solver.solve(fc(W, slipQ, [mu]), rs, { tolerance: 1e-13 });
  expect(slip.converged).toBe(true);
  // r_n = m·1, r_t = −μ r_n q_t/‖q_t‖ = −(0.6, −0.8)
  expect(maxAbsDiff(rs, [2, -0.6, 0.8])).toBeLessThan(1e-13);
  const u = problemVelocity(fc(W, slipQ, [mu]), rs);
  // u_t = q_t (1 − μ r_n/(m‖q_t‖)) = 0.75 q_t, u_n = 0
  expect(maxAbsDiff(u, [0, 0.9, -1.2])).toBeLessThan(1e-13);
  expect(problemResidual(fc(W, slipQ, [mu]), rs)).toBeLessThan(1e-8);
  expectCoulomb(fc(W, slipQ, [mu]), rs, 1e-12);
}

/**
 * The exact Coulomb solvers on 40 single contacts with anisotropic, normal–tangent coupled
 * W = AᵀA/3 + 0.4 I against scenes.ts's θ-scan reference (unique solutions; both stick and
 * slip cases occur).
 */
export function expectAnisotropicCoulomb(solver: NonsmoothSolver): void {
  const rand = mulberry32(7);
  let slips = 0;
  let sticks = 0;
  for (let c = 0; c < 40; c++) {
    const W = Array.from(randomSpd(3, 0.4, rand)).map((v, i) => (i % 4 === 0 ? v : v / 3));
    const mu = 0.1 + 0.8 * rand();
    const q = [-0.2 - rand(), 1.2 * rand() - 0.6, 1.2 * rand() - 0.6];
    const ref = coulombReference(W, q, mu);
    expect(ref.length).toBe(1); // unique solution
    const stick = Math.hypot(ref[0][1], ref[0][2]) < mu * ref[0][0] * (1 - 1e-9);
    if (stick) sticks++;
    else slips++;
    const r = new Float64Array(3);
    const res = solver.solve(fc(W, q, [mu]), r, { tolerance: 1e-12, maxIterations: 5000 });
    expect(res.converged).toBe(true);
    expect(maxAbsDiff(r, ref[0])).toBeLessThan(1e-9);
    expect(problemResidual(fc(W, q, [mu]), r)).toBeLessThan(1e-8);
    expectCoulomb(fc(W, q, [mu]), r, 1e-10);
  }
  expect(slips).toBeGreaterThan(3);
  expect(sticks).toBeGreaterThan(3);
}

/**
 * The exact Coulomb solvers on the V-groove (scenes.ts): sliding along the groove, the
 * closed form r_n = m v₀/(2c), r_t1 = −μ r_n, and the particle's velocity after the step
 * (v_x − μ v₀/c, 0, 0).
 */
export function expectVGrooveSlip(solver: NonsmoothSolver): void {
  const [m, alpha, mu] = [1.5, Math.PI / 6, 0.3];
  const v0 = 1;
  const vx = 2;
  const { problem, c } = vGroove(m, alpha, [vx, 0, -v0], mu);
  const rn = (m * v0) / (2 * c);
  const r = new Float64Array(6);
  const res = solver.solve(problem, r, { tolerance: 1e-12, maxIterations: 5000 });
  expect(res.converged).toBe(true);
  expect(maxAbsDiff(r, [rn, -mu * rn, 0, rn, -mu * rn, 0])).toBeLessThan(1e-9);
  const u = problemVelocity(problem, r);
  const vt = vx - (mu * v0) / c;
  expect(maxAbsDiff(u, [0, vt, 0, 0, vt, 0])).toBeLessThan(1e-9);
  expectCoulomb(problem, r, 1e-10);
}

/**
 * The exact Coulomb solvers on scenes.ts's random coupled friction problems: converged,
 * the De Saxcé conditions to 1e-8. Returns the solutions (for comparisons between solvers).
 */
export function expectRandomCoulomb(solver: NonsmoothSolver): Float64Array[] {
  return randomFrictionProblems().map((p) => {
    const r = new Float64Array(3 * p.contacts);
    const res = solver.solve(p, r, { tolerance: 1e-11, maxIterations: 20000 });
    expect(res.converged).toBe(true);
    expect(problemResidual(p, r)).toBeLessThan(1e-8);
    expectCoulomb(p, r, 1e-8);
    return r;
  });
}

/**
 * The CCP solvers (APGD, BB) on the sliding sphere: r = P_K(−m q) = (3.2, −0.96, 1.28)
 * (P_K(2, −2.4, 3.2) with μ = 0.5: ‖x_t‖ = 4, r_n = (2 + 0.5·4)/1.25 = 3.2,
 * r_t = μ r_n x_t/‖x_t‖), u_n = μ‖u_t‖ = 0.6 > 0; not the Coulomb solution; in stick
 * the two formulations coincide.
 */
export function expectSphereOnPlaneCcp(solver: NonsmoothSolver): void {
  const { W, mu, stickQ, slipQ } = SPHERE_ON_PLANE;
  const r = new Float64Array(3);
  const res = solver.solve(fc(W, slipQ, [mu]), r, { tolerance: 1e-13 });
  expect(res.converged).toBe(true);
  expect(res.measure).toBe("ccp");
  expect(maxAbsDiff(r, [3.2, -0.96, 1.28])).toBeLessThan(1e-11);
  const u = problemVelocity(fc(W, slipQ, [mu]), r);
  expect(u[0]).toBeCloseTo(0.6, 11);
  expect(u[0]).toBeCloseTo(mu * Math.hypot(u[1], u[2]), 11);
  expect(problemResidual(fc(W, slipQ, [mu]), r, "ccp")).toBeLessThan(1e-11);
  // Not the Coulomb solution: the De Saxcé residual stays O(1).
  expect(problemResidual(fc(W, slipQ, [mu]), r, "coulomb")).toBeGreaterThan(0.1);
  const rs = new Float64Array(3);
  solver.solve(fc(W, stickQ, [mu]), rs, { tolerance: 1e-13 });
  expect(maxAbsDiff(rs, [2, -0.2, 0.4])).toBeLessThan(1e-11);
}

/**
 * The CCP solvers on the random coupled friction problems: converged, the CCP residual
 * recomputed below 1e-10. Returns the solutions (the optimum of a strictly convex QP is
 * unique, so two CCP solvers must agree).
 */
export function expectRandomCcp(solver: NonsmoothSolver): Float64Array[] {
  return randomFrictionProblems().map((p) => {
    const r = new Float64Array(3 * p.contacts);
    const res = solver.solve(p, r, { tolerance: 1e-11, maxIterations: 20000 });
    expect(res.converged).toBe(true);
    expect(problemResidual(p, r, "ccp")).toBeLessThan(1e-10);
    return r;
  });
}

/** A friction (5 contacts) and a frictionless (8 contacts) problem for the warm-start tests. */
export function warmStartProblems(): {
  friction: NonsmoothProblem;
  frictionless: NonsmoothProblem;
} {
  const rand = mulberry32(42);
  const nc = 5;
  const W = randomSpd(3 * nc, 0.5, rand);
  const q = Float64Array.from({ length: 3 * nc }, (_, k) =>
    k % 3 === 0 ? -rand() : 2 * rand() - 1,
  );
  const mu = Float64Array.from({ length: nc }, () => 0.3);
  const Wl = randomSpd(8, 0.5, rand);
  const ql = Float64Array.from({ length: 8 }, () => -rand());
  return {
    friction: { contacts: nc, contactDim: 3, W, q, mu },
    frictionless: { contacts: 8, contactDim: 1, W: Wl, q: ql },
  };
}

/** A CCP solver warm-started from its own solution stops at once (0 iterations). */
export function expectWarmStartAtSolution(solver: NonsmoothSolver): void {
  const { friction } = warmStartProblems();
  const r = new Float64Array(3 * friction.contacts);
  expect(solver.solve(friction, r, { tolerance: 1e-10, maxIterations: 10000 }).converged).toBe(
    true,
  );
  expect(solver.solve(friction, r, { tolerance: 1e-10 }).iterations).toBe(0);
}

/**
 * The frictionless LCP tests every LCP solver's file registers (inside its describe), each
 * on a fresh solver from make: Lemke's solutions of the random LCPs, the coupled 2-contact
 * closed form.
 */
export function testFrictionlessLcp(make: () => NonsmoothSolver): void {
  it("matches Lemke to 1e-6 on the random LCPs", () => expectMatchesLemke(make()));
  it("solves a coupled 2-contact LCP in closed form", () => expectCoupledTwoContactLcp(make()));
}

/**
 * The Coulomb (De Saxcé) closed forms every splitting solver's file registers (PGS, projected
 * Jacobi): the sphere on a plane, the θ-scan reference of an anisotropic W, V-groove slip.
 */
export function testCoulombClosedForms(make: () => NonsmoothSolver): void {
  it("sphere on a plane: stick and slip in closed form", () => expectSphereOnPlaneCoulomb(make()));
  it("anisotropic, coupled W: the θ-scan reference (stick and slip)", () =>
    expectAnisotropicCoulomb(make()));
  it("V-groove: slip in closed form", () => expectVGrooveSlip(make()));
}

/**
 * The tests every projected-gradient solver of the cone-complementarity QP registers (APGD,
 * Barzilai–Borwein): the frictionless LCPs, the sliding sphere's CCP closed form, the
 * optimum of random coupled friction problems, a warm start at the solution.
 */
export function testProjectedGradient(make: () => NonsmoothSolver): void {
  testFrictionlessLcp(make);
  it("solves the CCP relaxation of a sliding sphere: r = P_K(−m q), u_n = μ‖u_t‖ > 0", () =>
    expectSphereOnPlaneCcp(make()));
  it("reaches the CCP optimum of random coupled friction problems", () => {
    expectRandomCcp(make());
  });
  it("warm-started from its own solution stops at once", () => expectWarmStartAtSolution(make()));
}
