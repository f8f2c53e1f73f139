/**
 * The factored Delassus operator W = s·H Y Hᵀ and the velocity-form PGS that runs on it,
 * against references built here: dense H (m × n) and block-diagonal Y assembled entry by
 * entry, W formed by dense products, Delassus-form PGS on that dense W, the LCP by
 * enumeration, and closed-form stacks.
 */
import { describe, expect, it } from "vitest";
import {
  DenseDelassus,
  FactoredDelassus,
  LemkeSolver,
  type NonsmoothProblem,
  PgsSolver,
  problemResidual,
} from "../../../../src/engine/solvers/nonsmooth";
import { mulberry32 } from "../../../support/random";
import { affine, bruteForceLcp, maxAbsDiff } from "./helpers";

/** A random multibody contact set: bodies of width 6 or 3, contacts on 1 or 2 bodies. */
interface RandomSet {
  op: FactoredDelassus;
  /** Dense H (3nc × n) and Y (n × n), row-major. */
  H: Float64Array;
  Y: Float64Array;
  n: number;
  nc: number;
}

function randomSet(seed: number, nb: number, nc: number, dim: 1 | 3, scale = 1): RandomSet {
  const rand = mulberry32(seed);
  const widths = Array.from({ length: nb }, () => (rand() < 0.7 ? 6 : 3));
  const off: number[] = [];
  let n = 0;
  for (const w of widths) {
    off.push(n);
    n += w;
  }
  // Y: per body an SPD block B Bᵀ + 0.1 I (a stand-in for M⁻¹ or W⁻¹ of a body).
  const Y = new Float64Array(n * n);
  widths.forEach((w, b) => {
    const B = Array.from({ length: w * w }, () => rand() - 0.5);
    for (let r = 0; r < w; r++)
      for (let c = 0; c < w; c++) {
        let s = r === c ? 0.1 : 0;
        for (let k = 0; k < w; k++) s += B[r * w + k] * B[c * w + k];
        Y[(off[b] + r) * n + off[b] + c] = s;
      }
  });
  const jac = new Float64Array(36 * nc);
  const resp = new Float64Array(36 * nc);
  const H = new Float64Array(3 * nc * n);
  const op = new FactoredDelassus();
  op.reset(nc, dim, n, scale, jac, resp);
  for (let i = 0; i < nc; i++) {
    const a = rand() < 0.25 ? -1 : Math.floor(rand() * nb); // −1: the ground
    let b = Math.floor(rand() * nb);
    if (b === a) b = (b + 1) % nb;
    [a, b].forEach((body, side) => {
      const w = body < 0 ? 0 : widths[body];
      op.setSide(i, side, body < 0 ? 0 : off[body], w);
      for (let k = 0; k < 3; k++)
        for (let c = 0; c < w; c++) {
          const v = 2 * rand() - 1;
          jac[36 * i + 18 * side + 6 * k + c] = v;
          H[(3 * i + k) * n + off[body] + c] += v;
        }
      // resp column k = Y_X A_iXᵀ row k, from the dense Y.
      for (let k = 0; k < 3; k++)
        for (let r = 0; r < w; r++) {
          let s = 0;
          for (let c = 0; c < w; c++)
            s += Y[(off[body] + r) * n + off[body] + c] * jac[36 * i + 18 * side + 6 * k + c];
          resp[36 * i + 18 * side + 6 * k + r] = s;
        }
    });
  }
  return { op, H, Y, n, nc };
}

/** Dense W = s H_d Y H_dᵀ on the first dim rows of every contact (m × m, row-major). */
function denseW(set: RandomSet, dim: 1 | 3, scale = 1): Float64Array {
  const { H, Y, n, nc } = set;
  const m = nc * dim;
  const row = (p: number) => 3 * Math.floor(p / dim) + (p % dim);
  const YH = new Float64Array(n * m); // Y H_dᵀ, column p
  for (let p = 0; p < m; p++)
    for (let r = 0; r < n; r++) {
      let s = 0;
      for (let c = 0; c < n; c++) s += Y[r * n + c] * H[row(p) * n + c];
      YH[r * m + p] = s;
    }
  const W = new Float64Array(m * m);
  for (let p = 0; p < m; p++)
    for (let q = 0; q < m; q++) {
      let s = 0;
      for (let r = 0; r < n; r++) s += H[row(p) * n + r] * YH[r * m + q];
      W[p * m + q] = scale * s;
    }
  return W;
}

describe("FactoredDelassus", () => {
  for (const dim of [1, 3] as const)
    it(`matches the dense s·H Y Hᵀ: multiply, diagonal and row blocks (dim ${dim})`, () => {
      const set = randomSet(7 + dim, 6, 14, dim, 0.8);
      const W = denseW(set, dim, 0.8);
      const m = set.nc * dim;
      const rand = mulberry32(99);
      const r = Float64Array.from({ length: m }, () => rand() - 0.3);
      const out = new Float64Array(m);
      set.op.multiply(r, out);
      const ref = affine(W, r, new Float64Array(m), m);
      expect(maxAbsDiff(out, ref)).toBeLessThan(1e-12);
      const blk = new Float64Array(9);
      const row = new Float64Array(3);
      for (let i = 0; i < set.nc; i++) {
        set.op.diagonalBlock(i, blk);
        set.op.rowBlockTimes(i, r, row);
        for (let k = 0; k < dim; k++) {
          expect(row[k]).toBeCloseTo(ref[dim * i + k], 12);
          for (let l = 0; l < dim; l++)
            expect(blk[k * dim + l]).toBeCloseTo(W[(dim * i + k) * m + dim * i + l], 12);
        }
      }
    });
});

describe("velocity-form PGS", () => {
  for (const dim of [1, 3] as const)
    it(`makes the same sweeps as the Delassus form on the dense W (dim ${dim})`, () => {
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
          const opts = { maxIterations: sweeps, tolerance: 0, warmStart: false };
          new PgsSolver().solve({ ...base, W: set.op }, rv, opts);
          new PgsSolver().solve({ ...base, W: new DenseDelassus(W, set.nc, dim) }, rd, opts);
          // Same u_i at every contact update, up to the round-off of the two products.
          expect(maxAbsDiff(rv, rd)).toBeLessThan(
            1e-10 * (1 + maxAbsDiff(rd, new Float64Array(m))),
          );
        }
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

/**
 * A column of k particles of mass mp resting on the ground, contact j below particle j
 * (j = 0: ground). With gravity over one step the free velocities are −g h and the
 * normal impulses hold the weight of everything above: P_j = (k − j) mp g h, closed form.
 * Particles: A = Fᵀ per side (n = e_z for every contact), Y = I/mp.
 */
function column(k: number, mp: number, g: number, h: number, dim: 1 | 3) {
  const n = 3 * k;
  const jac = new Float64Array(36 * k);
  const resp = new Float64Array(36 * k);
  const op = new FactoredDelassus().reset(k, dim, n, 1, jac, resp);
  const frame = [
    [0, 0, 1],
    [1, 0, 0],
    [0, 1, 0],
  ];
  for (let j = 0; j < k; j++) {
    const sides: Array<[number, number]> =
      j === 0
        ? [[1, j]]
        : [
            [0, j - 1],
            [1, j],
          ];
    if (j === 0) op.setSide(j, 0, 0, 0);
    for (const [side, body] of sides) {
      op.setSide(j, side, 3 * body, 3);
      const s = side === 0 ? -1 : 1;
      for (let r = 0; r < 3; r++)
        for (let c = 0; c < 3; c++) {
          jac[36 * j + 18 * side + 6 * r + c] = s * frame[r][c];
          resp[36 * j + 18 * side + 6 * r + c] = (s * frame[r][c]) / mp;
        }
    }
  }
  // q = H v_free with every particle at v_free = (0, 0, −g h): the ground contact sees
  // −g h, the others 0 (both sides fall together).
  const q = new Float64Array(dim * k);
  q[0] = -g * h;
  const exact = Float64Array.from({ length: k }, (_, j) => (k - j) * mp * g * h);
  return { op, q, exact };
}

describe("resting column (closed form P_j = (k − j) m g h)", () => {
  const k = 12;
  const [mp, g, h] = [0.1, 9.81, 1 / 240];
  for (const dim of [1, 3] as const)
    it(`velocity-form PGS reaches it; a warm start from the last step needs far fewer sweeps (dim ${dim})`, () => {
      const { op, q, exact } = column(k, mp, g, h, dim);
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
