import { describe, expect, it } from "vitest";
import {
  ApgdSolver,
  BarzilaiBorweinSolver,
  type NonsmoothProblem,
  PgsSolver,
  PJacobiSolver,
  problemResidual,
  problemVelocity,
  projectOnCone,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { affine, denseSolve, maxAbsDiff, randomSpd } from "./helpers";

function fc(W: ArrayLike<number>, q: ArrayLike<number>, mu: ArrayLike<number>): NonsmoothProblem {
  return {
    contacts: mu.length,
    contactDim: 3,
    W: Float64Array.from(W),
    q: Float64Array.from(q),
    mu: Float64Array.from(mu),
  };
}

/** De Saxcé conditions checked directly: r ∈ K, ũ ∈ K*, ũ·r = 0 (per contact). */
function expectCoulomb(p: NonsmoothProblem, r: Float64Array, tol: number) {
  const u = affine(p.W as Float64Array, r, p.q, 3 * p.contacts);
  for (let i = 0; i < p.contacts; i++) {
    const mu = p.mu![i];
    const [rn, r1, r2] = [r[3 * i], r[3 * i + 1], r[3 * i + 2]];
    const [un, u1, u2] = [u[3 * i], u[3 * i + 1], u[3 * i + 2]];
    const ut = Math.hypot(u1, u2);
    const vn = un + mu * ut;
    expect(Math.hypot(r1, r2) - mu * rn).toBeLessThanOrEqual(tol);
    expect(mu * ut - vn).toBeLessThanOrEqual(tol); // μ‖ũ_t‖ ≤ ũ_n ⟺ u_n ≥ 0
    expect(Math.abs(vn * rn + u1 * r1 + u2 * r2)).toBeLessThanOrEqual(tol);
  }
}

describe("single contact, sphere on a plane (W = diag(1/m, w_t, w_t))", () => {
  const m = 2;
  const mu = 0.5;
  const W = [1 / m, 0, 0, 0, 1 / m, 0, 0, 0, 1 / m];
  const solvers = [new PgsSolver(), new PJacobiSolver()];

  it("stick: r_n = −q_n m, r_t = −q_t/W inside the cone", () => {
    const q = [-1, 0.1, -0.2]; // ‖q_t‖ m = 0.447 < μ r_n = 1
    for (const s of solvers) {
      const r = new Float64Array(3);
      const res = s.solve(fc(W, q, [mu]), r, { tolerance: 1e-13 });
      expect(res.converged).toBe(true);
      expect(res.measure).toBe("coulomb");
      expect(maxAbsDiff(r, [2, -0.2, 0.4])).toBeLessThan(1e-13);
      expect(problemResidual(fc(W, q, [mu]), r)).toBeLessThan(1e-8);
    }
    // Isotropic W_t from rotation: solid sphere, I = 2/5 m R², contact at −R n:
    // W_nn = 1/m, W_tt = 1/m + R²/I = 3.5/m, no normal–tangent coupling.
    const Ws = [1 / m, 0, 0, 0, 3.5 / m, 0, 0, 0, 3.5 / m];
    const r = new Float64Array(3);
    new PgsSolver().solve(fc(Ws, q, [mu]), r);
    expect(maxAbsDiff(r, [2, -0.1 / (3.5 / m), 0.2 / (3.5 / m)])).toBeLessThan(1e-13);
  });

  it("slip: r on the cone boundary, opposite to sliding, u_n = 0", () => {
    const q = [-1, 1.2, -1.6]; // ‖q_t‖ m = 4 > μ r_n = 1
    for (const s of solvers) {
      const r = new Float64Array(3);
      const res = s.solve(fc(W, q, [mu]), r, { tolerance: 1e-13 });
      expect(res.converged).toBe(true);
      // r_n = m·1, r_t = −μ r_n q_t/‖q_t‖ = −(0.6, −0.8)
      expect(maxAbsDiff(r, [2, -0.6, 0.8])).toBeLessThan(1e-13);
      const u = problemVelocity(fc(W, q, [mu]), r);
      // u_t = q_t (1 − μ r_n/(m‖q_t‖)) = 0.75 q_t, u_n = 0
      expect(maxAbsDiff(u, [0, 0.9, -1.2])).toBeLessThan(1e-13);
      expect(problemResidual(fc(W, q, [mu]), r)).toBeLessThan(1e-8);
      expectCoulomb(fc(W, q, [mu]), r, 1e-12);
    }
  });

  it("take-off: q_n > 0 gives r = 0", () => {
    const r = Float64Array.from([1, 1, 1]);
    const res = new PgsSolver().solve(fc(W, [0.3, 2, 0], [mu]), r);
    expect(res.converged).toBe(true);
    expect(Array.from(r)).toEqual([0, 0, 0]);
  });

  it("APGD and BB solve the CCP relaxation: r = P_K(−m q), u_n = μ‖u_t‖ > 0 when sliding", () => {
    const q = [-1, 1.2, -1.6];
    // P_K(2, −2.4, 3.2) with μ = 0.5: ‖x_t‖ = 4, r_n = (2 + 0.5·4)/1.25 = 3.2,
    // r_t = μ r_n x_t/‖x_t‖ = 1.6 (−0.6, 0.8).
    const expected = [3.2, -0.96, 1.28];
    for (const s of [new ApgdSolver(), new BarzilaiBorweinSolver()]) {
      const r = new Float64Array(3);
      const res = s.solve(fc(W, q, [mu]), r, { tolerance: 1e-13 });
      expect(res.converged).toBe(true);
      expect(res.measure).toBe("ccp");
      expect(maxAbsDiff(r, expected)).toBeLessThan(1e-11);
      const u = problemVelocity(fc(W, q, [mu]), r);
      expect(u[0]).toBeCloseTo(0.6, 11);
      expect(u[0]).toBeCloseTo(mu * Math.hypot(u[1], u[2]), 11);
      expect(problemResidual(fc(W, q, [mu]), r, "ccp")).toBeLessThan(1e-11);
      // Not the Coulomb solution: the De Saxcé residual stays O(1).
      expect(problemResidual(fc(W, q, [mu]), r, "coulomb")).toBeGreaterThan(0.1);
    }
    // In stick the two formulations coincide (u = 0).
    const r = new Float64Array(3);
    new ApgdSolver().solve(fc(W, [-1, 0.1, -0.2], [mu]), r, { tolerance: 1e-13 });
    expect(maxAbsDiff(r, [2, -0.2, 0.4])).toBeLessThan(1e-11);
  });
});

/**
 * Independent single-contact Coulomb reference for a general SPD 3×3 W: take-off (q_n ≥ 0),
 * stick (r = −W⁻¹q inside K), or slip r = r_n (1, −μ cos θ, −μ sin θ) with u_n = 0 and
 * u_t = κ (cos θ, sin θ), κ > 0, found by scanning θ and bisecting the cross product.
 */
function coulombReference(W: number[], q: number[], mu: number): number[][] {
  const sols: number[][] = [];
  if (q[0] >= 0) sols.push([0, 0, 0]);
  const rs = Array.from(
    denseSolve(
      W,
      q.map((v) => -v),
      3,
    ),
  );
  if (rs[0] >= 0 && Math.hypot(rs[1], rs[2]) <= mu * rs[0]) sols.push(rs);
  const at = (th: number) => {
    const d = [1, -mu * Math.cos(th), -mu * Math.sin(th)];
    const Wd = [0, 1, 2].map((a) => W[3 * a] * d[0] + W[3 * a + 1] * d[1] + W[3 * a + 2] * d[2]);
    const rn = -q[0] / Wd[0];
    const u1 = rn * Wd[1] + q[1];
    const u2 = rn * Wd[2] + q[2];
    return {
      rn,
      r: d.map((v) => v * rn),
      cross: Math.cos(th) * u2 - Math.sin(th) * u1,
      kappa: Math.cos(th) * u1 + Math.sin(th) * u2,
    };
  };
  const N = 3600;
  for (let k = 0; k < N; k++) {
    let a = (2 * Math.PI * k) / N;
    let b = (2 * Math.PI * (k + 1)) / N;
    if (Math.sign(at(a).cross) === Math.sign(at(b).cross)) continue;
    for (let it = 0; it < 200; it++) {
      const c = 0.5 * (a + b);
      if (Math.sign(at(c).cross) === Math.sign(at(a).cross)) a = c;
      else b = c;
    }
    const s = at(0.5 * (a + b));
    if (s.rn > 0 && s.kappa > 0) sols.push(s.r);
  }
  return sols;
}

describe("single contact with anisotropic, coupled W", () => {
  it("PGS and projected Jacobi match the θ-scan reference (stick and slip)", () => {
    const rand = mulberry32(7);
    let slips = 0;
    let sticks = 0;
    for (let c = 0; c < 40; c++) {
      // W = AᵀA/3 + 0.4 I: normal–tangent coupling and anisotropic W_tt.
      const W = Array.from(randomSpd(3, 0.4, rand)).map((v, i) => (i % 4 === 0 ? v : v / 3));
      const mu = 0.1 + 0.8 * rand();
      const q = [-0.2 - rand(), 1.2 * rand() - 0.6, 1.2 * rand() - 0.6];
      const ref = coulombReference(W, q, mu);
      expect(ref.length).toBe(1); // unique solution
      const stick = Math.hypot(ref[0][1], ref[0][2]) < mu * ref[0][0] * (1 - 1e-9);
      if (stick) sticks++;
      else slips++;
      for (const s of [new PgsSolver(), new PJacobiSolver()]) {
        const r = new Float64Array(3);
        const res = s.solve(fc(W, q, [mu]), r, { tolerance: 1e-12, maxIterations: 5000 });
        expect(res.converged).toBe(true);
        expect(maxAbsDiff(r, ref[0])).toBeLessThan(1e-9);
        expect(problemResidual(fc(W, q, [mu]), r)).toBeLessThan(1e-8);
        expectCoulomb(fc(W, q, [mu]), r, 1e-10);
      }
    }
    expect(slips).toBeGreaterThan(3);
    expect(sticks).toBeGreaterThan(3);
  });
});

/**
 * A particle (mass m) falling into a V-groove while sliding along it (x): two contacts with
 * normals n₁ = (0, s, c), n₂ = (0, −s, c), s = sin α, c = cos α (normals tilted ±α from the
 * vertical), tangents t₁ = e_x, t₂ = n × e_x. W_ij = R_i R_jᵀ / m (coupled: n₁·n₂ = c² − s²),
 * q_i = R_i v. Slip closed form: by symmetry r_n1 = r_n2, u_n = 0 ⇒ v'_z = 0 ⇒
 * r_n = m v₀/(2c); r_t1 = −μ r_n (opposite to the sliding x velocity), r_t2 = 0, and
 * v'_x = v_x − μ v₀/c > 0.
 */
function vGroove(m: number, alpha: number, v: number[], mu: number) {
  const s = Math.sin(alpha);
  const c = Math.cos(alpha);
  const R = [
    [
      [0, s, c],
      [1, 0, 0],
      [0, c, -s],
    ],
    [
      [0, -s, c],
      [1, 0, 0],
      [0, c, s],
    ],
  ];
  const rows = R.flat();
  const W = new Float64Array(36);
  for (let i = 0; i < 6; i++)
    for (let j = 0; j < 6; j++)
      W[i * 6 + j] =
        (rows[i][0] * rows[j][0] + rows[i][1] * rows[j][1] + rows[i][2] * rows[j][2]) / m;
  const q = rows.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]);
  return { problem: fc(W, q, [mu, mu]), rows, s, c };
}

describe("two coupled contacts: particle in a V-groove", () => {
  const m = 1.5;
  const alpha = Math.PI / 6;
  const mu = 0.3;

  it("slip matches the closed form (PGS, projected Jacobi)", () => {
    const v0 = 1;
    const vx = 2;
    const { problem, c } = vGroove(m, alpha, [vx, 0, -v0], mu);
    const rn = (m * v0) / (2 * c);
    const expected = [rn, -mu * rn, 0, rn, -mu * rn, 0];
    for (const s of [new PgsSolver(), new PJacobiSolver()]) {
      const r = new Float64Array(6);
      const res = s.solve(problem, r, { tolerance: 1e-12, maxIterations: 5000 });
      expect(res.converged).toBe(true);
      expect(maxAbsDiff(r, expected)).toBeLessThan(1e-9);
      const u = problemVelocity(problem, r);
      // Particle velocity after the step: (v_x − μ v₀/c, 0, 0) ⇒ u_t1 = that, the rest 0.
      expect(maxAbsDiff(u, [0, vx - (mu * v0) / c, 0, 0, vx - (mu * v0) / c, 0])).toBeLessThan(
        1e-9,
      );
      expectCoulomb(problem, r, 1e-10);
    }
  });

  it("stick stops the particle with r inside both cones", () => {
    const { problem, rows } = vGroove(m, alpha, [0.1, 0, -1], mu);
    const r = new Float64Array(6);
    const res = new PgsSolver().solve(problem, r, { tolerance: 1e-12, maxIterations: 5000 });
    expect(res.converged).toBe(true);
    const u = problemVelocity(problem, r);
    expect(maxAbsDiff(u, new Float64Array(6))).toBeLessThan(1e-10);
    for (let i = 0; i < 2; i++)
      expect(Math.hypot(r[3 * i + 1], r[3 * i + 2])).toBeLessThanOrEqual(mu * r[3 * i] + 1e-12);
    // Total impulse Σ R_iᵀ r_i = m (0 − v).
    const P = [0, 1, 2].map((a) => rows.reduce((acc, row, k) => acc + row[a] * r[k], 0));
    expect(maxAbsDiff(P, [-0.1 * m, 0, m])).toBeLessThan(1e-10);
  });
});

describe("random coupled friction problems", () => {
  const rand = mulberry32(99);
  const problems: NonsmoothProblem[] = [];
  for (let c = 0; c < 8; c++) {
    const nc = 2 + (c % 4);
    const W = randomSpd(3 * nc, 0.5, rand);
    const q = Float64Array.from({ length: 3 * nc }, (_, k) =>
      k % 3 === 0 ? -rand() : 2 * rand() - 1,
    );
    const mu = Float64Array.from({ length: nc }, () => 0.1 + 0.3 * rand());
    problems.push({ contacts: nc, contactDim: 3, W, q, mu });
  }

  it("PGS and projected Jacobi satisfy the De Saxcé complementarity, same solution", () => {
    for (const p of problems) {
      const r = new Float64Array(3 * p.contacts);
      const res = solveNonsmooth("pgs", p, r, { tolerance: 1e-11, maxIterations: 20000 });
      expect(res.converged).toBe(true);
      expect(problemResidual(p, r)).toBeLessThan(1e-8);
      expectCoulomb(p, r, 1e-8);
      const rj = new Float64Array(3 * p.contacts);
      const resJ = solveNonsmooth("pjacobi", p, rj, { tolerance: 1e-11, maxIterations: 20000 });
      expect(resJ.converged).toBe(true);
      expectCoulomb(p, rj, 1e-8);
      expect(maxAbsDiff(r, rj)).toBeLessThan(1e-6);
    }
  });

  it("APGD and BB reach the same CCP optimum (strictly convex QP)", () => {
    for (const p of problems) {
      const ra = new Float64Array(3 * p.contacts);
      const rb = new Float64Array(3 * p.contacts);
      const resA = solveNonsmooth("apgd", p, ra, { tolerance: 1e-11, maxIterations: 20000 });
      const resB = solveNonsmooth("barzilai-borwein", p, rb, {
        tolerance: 1e-11,
        maxIterations: 20000,
      });
      expect(resA.converged && resB.converged).toBe(true);
      expect(problemResidual(p, ra, "ccp")).toBeLessThan(1e-10);
      expect(maxAbsDiff(ra, rb)).toBeLessThan(1e-6);
    }
  });
});

describe("projection on the Coulomb cone", () => {
  it("is the Euclidean projection: idempotent, Moreau decomposition x = P_K(x) + P_K°(x)", () => {
    const rand = mulberry32(3);
    for (let k = 0; k < 200; k++) {
      const mu = k % 10 === 0 ? 0 : 2 * rand();
      const x = Float64Array.from([4 * rand() - 2, 4 * rand() - 2, 4 * rand() - 2]);
      const p = Float64Array.from(x);
      projectOnCone(p, 0, mu);
      expect(Math.hypot(p[1], p[2])).toBeLessThanOrEqual(mu * p[0] + 1e-14);
      const pp = Float64Array.from(p);
      projectOnCone(pp, 0, mu);
      expect(maxAbsDiff(pp, p)).toBeLessThan(1e-14);
      // x − P_K(x) lies in the polar cone K° = −K* = {μ‖z_t‖ ≤ −z_n} and ⊥ P_K(x).
      const z = [x[0] - p[0], x[1] - p[1], x[2] - p[2]];
      expect(mu * Math.hypot(z[1], z[2])).toBeLessThanOrEqual(-z[0] + 1e-12);
      expect(Math.abs(z[0] * p[0] + z[1] * p[1] + z[2] * p[2])).toBeLessThan(1e-12);
    }
  });
});
