/**
 * CoulombNewton (src/engine/solvers/nonsmooth/newton.ts): the semismooth Newton polish of
 * a small dense Coulomb problem, on a box landing flat on a floor (four corners: 12 rows of
 * rank 6, W rank-deficient as the 6-link chain's), against the closed form of its motion
 * after the impact, and on a problem without a solution (never worse than its start).
 *
 * The box: half extents (a, b, c) = (0.05, 0.03, 0.01) m, mass M = 0.1 kg, inertia
 * I = M/3 diag(b² + c², a² + c², a² + b²), its corners p = (±a, ±b, −c) on the floor
 * (n = e_z, t1 = e_x, t2 = e_y), landing at v⁻ = (s cos φ, s sin φ, −V), ω⁻ = 0, e = 0.
 * Rows u = A v: for e ∈ {n, t1, t2}, [eᵀ, (p × e)ᵀ]; W = A Y Aᵀ, Y = diag(I₃/M, I⁻¹).
 * Sliding (s > μ V), the four corners move alike after the impact: v⁺ = ((s − μ V) cos φ,
 * (s − μ V) sin φ, 0), ω⁺ = 0 (total impulse M (v⁺ − v⁻): normal M V, friction μ M V
 * against the slip; its moment about the centre, c μ M V, balanced by the normal loads'
 * spread, possible as μ c < a, b). Sticking (s ≤ μ V): v⁺ = 0, ω⁺ = 0. The corners' loads
 * are not unique (W's null space), the velocities after are.
 */
import { describe, expect, it } from "vitest";
import { CoulombNewton } from "../../../../src/engine/solvers/nonsmooth/newton";
import { PgsSolver } from "../../../../src/engine/solvers/nonsmooth/pgs";
import { problemResidual } from "../../../../src/engine/solvers/nonsmooth/residual";
import { expectCoulomb } from "./checks";
import { fc } from "./scenes";

const a = 0.05;
const b = 0.03;
const c = 0.01;
const M = 0.1;
const inertia = [(M / 3) * (b * b + c * c), (M / 3) * (a * a + c * c), (M / 3) * (a * a + b * b)];

type Vec3 = [number, number, number];
const cross = (x: Vec3, y: Vec3): Vec3 => [
  x[1] * y[2] - x[2] * y[1],
  x[2] * y[0] - x[0] * y[2],
  x[0] * y[1] - x[1] * y[0],
];

/** The box's rows A (12 × 6), W = A Y Aᵀ and q = A v⁻ for a landing at (s, φ, V). */
function boxLanding(s: number, phi: number, V: number, mu: number) {
  const A: number[][] = [];
  for (const [sx, sy] of [
    [1, 1],
    [-1, 1],
    [-1, -1],
    [1, -1],
  ]) {
    const p: Vec3 = [sx * a, sy * b, -c];
    for (const e of [
      [0, 0, 1],
      [1, 0, 0],
      [0, 1, 0],
    ] as Vec3[])
      A.push([...e, ...cross(p, e)]);
  }
  const y = [1 / M, 1 / M, 1 / M, 1 / inertia[0], 1 / inertia[1], 1 / inertia[2]];
  const W: number[] = [];
  for (const ri of A) for (const rj of A) W.push(ri.reduce((t, x, k) => t + x * y[k] * rj[k], 0));
  const v = [s * Math.cos(phi), s * Math.sin(phi), -V, 0, 0, 0];
  const q = A.map((row) => row.reduce((t, x, k) => t + x * v[k], 0));
  return { A, y, v, problem: fc(W, q, [mu, mu, mu, mu]) };
}

/** v⁺ = v⁻ + Y Aᵀ r. */
function after(A: number[][], y: number[], v: number[], r: Float64Array): number[] {
  return v.map((vk, k) => vk + y[k] * A.reduce((t, row, j) => t + row[k] * r[j], 0));
}

describe("CoulombNewton: a box landing flat (W 12 × 12 of rank 6)", () => {
  const mu = 0.5;
  const V = 1;
  for (const [s, phi] of [
    [1.2, 0.3],
    [0.3, 2],
  ]) {
    const sliding = s > mu * V;
    it(`s = ${s} m/s at φ = ${phi}, V = ${V} m/s, μ = ${mu}: from 5 Gauss–Seidel sweeps, ${sliding ? "slides" : "sticks"} to the closed form's v⁺, ω⁺ = 0`, () => {
      const { A, y, v, problem } = boxLanding(s, phi, V, mu);
      const r = new Float64Array(12);
      const gs = new PgsSolver().solve(problem, r, {
        tolerance: 1e-13,
        maxIterations: 5,
        warmStart: false,
      });
      // (5 sweeps short of the tolerance: 1.3e-4 sliding, 1.2e-3 sticking)
      expect(gs.residual).toBeGreaterThan(1e-5);
      expect(gs.residual).toBeGreaterThan(1e-11);
      const newton = new CoulombNewton();
      const res = newton.polish(
        4,
        problem.W as Float64Array,
        problem.q,
        problem.mu as Float64Array,
        r,
        1e-13,
        50,
      );
      expect(res).toBeCloseTo(problemResidual(problem, r), 15);
      expect(res).toBeLessThanOrEqual(1e-13);
      // (4 and 2 Newton steps)
      expect(newton.iterations).toBeLessThanOrEqual(6);
      // the De Saxcé conditions on u = W r + q recomputed here, r in each cone
      expectCoulomb(problem, r, 1e-13);
      // the motion after: v⁺ = v⁻ + Y Aᵀ r against the closed form (ω's scale 1/I ~ 1e4)
      const left = sliding ? s - mu * V : 0;
      const expected = [left * Math.cos(phi), left * Math.sin(phi), 0, 0, 0, 0];
      const vp = after(A, y, v, r);
      for (let k = 0; k < 6; k++) expect(Math.abs(vp[k] - expected[k])).toBeLessThan(1e-10);
    });
  }
});

describe("CoulombNewton: a law without a solution (the jammed bob's, impact-friction.test.ts)", () => {
  // One dof, the bob's rotation ω about its hinge (I_h = 0.254 kg m²: 1 kg at 0.5 m, I =
  // 0.004): u_n = α ω, u_t1 = β ω (α = −0.0995 m, β = −0.59 m), u_t2 = 0; W = g gᵀ/I_h,
  // g = (α, β, 0), rank 1; at ω⁻ = 6.15 rad/s, e = 1 (q_n = 2 α ω⁻) and μ = 0.3 > |α/β|
  // no impulse meets Moreau's law (impact-events.ts, friction). The polish cannot find
  // one: it leaves the residual at most the start's, above half the impact's speed, and
  // the impulse in its cone.
  it("residual at most the start's (the impact's speed), r in K", () => {
    const al = -0.0995;
    const be = -0.59;
    const Ih = 0.254;
    const w = 6.15;
    const g = [al, be, 0];
    const W = g.flatMap((x) => g.map((z) => (x * z) / Ih));
    const problem = fc(W, [2 * al * w, be * w, 0], [0.3]);
    const r = new Float64Array(3);
    const gs = new PgsSolver().solve(problem, r, {
      tolerance: 1e-13,
      maxIterations: 1000,
      warmStart: false,
    });
    const start = problemResidual(problem, r);
    expect(gs.residual).toBeCloseTo(start, 12);
    const res = new CoulombNewton().polish(
      1,
      problem.W as Float64Array,
      problem.q,
      problem.mu as Float64Array,
      r,
      1e-13,
      50,
    );
    expect(res).toBeCloseTo(problemResidual(problem, r), 12);
    expect(res).toBeLessThanOrEqual(start);
    expect(res).toBeGreaterThan(0.5 * Math.abs(be * w) * 0.1);
    expect(Math.hypot(r[1], r[2])).toBeLessThanOrEqual(0.3 * r[0] * (1 + 1e-15));
    expect(r[0]).toBeGreaterThanOrEqual(0);
  });
});
