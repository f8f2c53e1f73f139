import { describe, expect, it } from "vitest";
import {
  DenseDelassus,
  type NonsmoothProblem,
  PgsSolver,
  PJacobiSolver,
  problemResidual,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { maxAbsDiff, randomSpd } from "./helpers";

type Vec3 = [number, number, number];
const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const unit = (a: Vec3): Vec3 => {
  const l = Math.hypot(...a);
  return [a[0] / l, a[1] / l, a[2] / l];
};

/**
 * Particles (mass m_b) with contacts between random pairs (or a particle and the fixed
 * ground, body −1). Contact k between bodies a (−1 allowed) and b has frame rows
 * R_k = [n; t1; t2] and local velocity u_k = R_k (v_b − v_a), so H has blocks +R_k at b and
 * −R_k at a. Returns W = H M⁻¹ Hᵀ twice, independently: dense from the explicit H, and as
 * the upper-triangle block list W_kl = Σ_shared bodies s σ_ks σ_ls R_k R_lᵀ / m_s for
 * SparseBlockDelassus.fromBlockPairs; q = H v for random free velocities v.
 */
function particleContacts(nb: number, nc: number, seed: number, withDense: boolean) {
  const rand = mulberry32(seed);
  const mass = Array.from({ length: nb }, () => 0.5 + rand());
  const R: Vec3[][] = [];
  const ends: [number, number][] = [];
  for (let k = 0; k < nc; k++) {
    const b = Math.floor(rand() * nb);
    let a = -1;
    if (rand() > 0.3) {
      a = Math.floor(rand() * (nb - 1));
      if (a >= b) a++;
    }
    ends.push([a, b]);
    const n = unit([2 * rand() - 1, 2 * rand() - 1, 2 * rand() - 1]);
    const t1 = unit(cross(n, Math.abs(n[0]) < 0.6 ? [1, 0, 0] : [0, 1, 0]));
    R.push([n, t1, cross(n, t1)]);
  }
  const v = Array.from({ length: 3 * nb }, () => 2 * rand() - 1);
  const q = new Float64Array(3 * nc);
  for (let k = 0; k < nc; k++)
    for (let i = 0; i < 3; i++) {
      const [a, b] = ends[k];
      let s = 0;
      for (let x = 0; x < 3; x++) s += R[k][i][x] * (v[3 * b + x] - (a >= 0 ? v[3 * a + x] : 0));
      q[3 * k + i] = s;
    }
  // Sparse blocks: contacts sharing a body, listed once (k ≤ l).
  const byBody: number[][] = Array.from({ length: nb }, () => []);
  ends.forEach(([a, b], k) => {
    if (a >= 0) byBody[a].push(k);
    byBody[b].push(k);
  });
  const sign = (k: number, s: number) => (ends[k][1] === s ? 1 : ends[k][0] === s ? -1 : 0);
  const rows: number[] = [];
  const cols: number[] = [];
  const vals: number[] = [];
  for (let s = 0; s < nb; s++)
    for (const k of byBody[s])
      for (const l of byBody[s]) {
        if (l < k) continue;
        rows.push(k);
        cols.push(l);
        const f = (sign(k, s) * sign(l, s)) / mass[s];
        for (let i = 0; i < 3; i++)
          for (let j = 0; j < 3; j++) {
            let d = 0;
            for (let x = 0; x < 3; x++) d += R[k][i][x] * R[l][j][x];
            vals.push(f * d);
          }
      }
  const sparse = SparseBlockDelassus.fromBlockPairs(nc, 3, rows, cols, vals, { symmetric: true });
  let dense: Float64Array | undefined;
  if (withDense) {
    const m = 3 * nc;
    const nd = 3 * nb;
    const H = new Float64Array(m * nd);
    for (let k = 0; k < nc; k++) {
      const [a, b] = ends[k];
      for (let i = 0; i < 3; i++)
        for (let x = 0; x < 3; x++) {
          H[(3 * k + i) * nd + 3 * b + x] = R[k][i][x];
          if (a >= 0) H[(3 * k + i) * nd + 3 * a + x] = -R[k][i][x];
        }
    }
    dense = new Float64Array(m * m);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < m; j++) {
        let s = 0;
        for (let x = 0; x < nd; x++) s += (H[i * nd + x] * H[j * nd + x]) / mass[Math.floor(x / 3)];
        dense[i * m + j] = s;
      }
  }
  const mu = Float64Array.from({ length: nc }, () => 0.2 + 0.4 * rand());
  return { sparse, dense, q, mu };
}

describe("sparse block Delassus operator", () => {
  const { sparse, dense } = particleContacts(40, 60, 11, true);
  const m = 180;

  it("equals W = H M⁻¹ Hᵀ assembled densely (toDense, multiply, rowBlockTimes, diagonalBlock)", () => {
    const W = dense!;
    expect(maxAbsDiff(sparse.toDense(), W)).toBeLessThan(1e-14);
    const x = Float64Array.from({ length: m }, (_, i) => Math.sin(i));
    const y = new Float64Array(m);
    sparse.multiply(x, y);
    const yd = new Float64Array(m);
    new DenseDelassus(W, 60, 3).multiply(x, yd);
    expect(maxAbsDiff(y, yd)).toBeLessThan(1e-13);
    const out = new Float64Array(3);
    const blk = new Float64Array(9);
    for (let i = 0; i < 60; i++) {
      sparse.rowBlockTimes(i, x, out);
      expect(maxAbsDiff(out, yd.subarray(3 * i, 3 * i + 3))).toBeLessThan(1e-13);
      sparse.diagonalBlock(i, blk);
      for (let a = 0; a < 3; a++)
        for (let b = 0; b < 3; b++)
          expect(blk[3 * a + b]).toBeCloseTo(W[(3 * i + a) * m + 3 * i + b], 14);
    }
    // Symmetric mirroring: W is symmetric, and only pairs sharing a body are stored.
    const D = sparse.toDense();
    for (let i = 0; i < m; i++) for (let j = 0; j < i; j++) expect(D[i * m + j]).toBe(D[j * m + i]);
    expect(sparse.rowPtr[60]).toBeLessThan(60 * 60);
  });

  it("sums duplicate pairs and rejects malformed patterns", () => {
    const s = SparseBlockDelassus.fromBlockPairs(2, 1, [0, 0, 1, 0], [0, 1, 1, 0], [1, 2, 3, 4], {
      symmetric: true,
    });
    expect(Array.from(s.toDense())).toEqual([5, 2, 2, 3]);
    expect(
      () =>
        new SparseBlockDelassus(
          2,
          1,
          Int32Array.from([0, 2, 2]),
          Int32Array.from([1, 0]),
          new Float64Array(2),
        ),
    ).toThrow(/ascending/);
    expect(() => SparseBlockDelassus.fromBlockPairs(2, 1, [0], [2], [1])).toThrow(/out of range/);
  });

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

describe("warm start", () => {
  const rand = mulberry32(42);
  const nc = 5;
  const W = randomSpd(3 * nc, 0.5, rand);
  const q = Float64Array.from({ length: 3 * nc }, (_, k) =>
    k % 3 === 0 ? -rand() : 2 * rand() - 1,
  );
  const mu = Float64Array.from({ length: nc }, () => 0.3);
  const fcp: NonsmoothProblem = { contacts: nc, contactDim: 3, W, q, mu };
  const Wl = randomSpd(8, 0.5, rand);
  const ql = Float64Array.from({ length: 8 }, () => -rand());
  const lcp: NonsmoothProblem = { contacts: 8, contactDim: 1, W: Wl, q: ql };

  for (const [label, p] of [
    ["friction", fcp],
    ["frictionless", lcp],
  ] as const) {
    it(`PGS started from the solution converges in 1 iteration (${label})`, () => {
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
      // Projected Jacobi checks before updating: 0 iterations from the solution.
      const pj = new PJacobiSolver().solve(p, r, { tolerance: 1e-10 });
      expect(pj.iterations).toBe(0);
      expect(pj.converged).toBe(true);
    });
  }

  it("warm-started APGD / BB stop at once from their own solution", () => {
    for (const name of ["apgd", "barzilai-borwein"] as const) {
      const r = new Float64Array(3 * nc);
      expect(
        solveNonsmooth(name, fcp, r, { tolerance: 1e-10, maxIterations: 10000 }).converged,
      ).toBe(true);
      const res = solveNonsmooth(name, fcp, r, { tolerance: 1e-10 });
      expect(res.iterations).toBe(0);
    }
  });
});
