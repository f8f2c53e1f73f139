/**
 * Implicit-step matrix of a 32×32 particle mass-spring sheet (1024 particles, 3 dof
 * each, structural springs): A = M + h²K with K the tangent stiffness of the springs.
 * The reference is Gaussian elimination with partial pivoting on the dense n×n array
 * (loops limited to the band, which natural numbering keeps at 3·32 + 2), itself checked
 * against ml-matrix LU on a small sheet.
 */
import { describe, expect, test } from "vitest";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import { ConjugateGradientSolver } from "../../../../src/engine/solvers/linear/cg";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { MinresSolver } from "../../../../src/engine/solvers/linear/minres";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { mulberry32 } from "../../../support/random";
import { denseLuReference, randomVector, relativeError } from "./helpers";

interface Sheet {
  n: number;
  matrix: CsrMatrix;
  /** Matrix-free A x assembled spring by spring. */
  operator: LinearOperator;
}

/**
 * Particles on a jittered nx×ny grid (spacing 0.1 m, jitter ±0.01 m in x, y, z), mass
 * m = 0.01 kg; structural springs to the right and upper neighbours with stiffness
 * k = 1000 N/m and rest length 0.09 m (all in tension); step h = 0.01 s.
 * Spring force on a: f_a = k (l − L0) u, u = (x_b − x_a)/l. Its tangent stiffness block
 *   K_s = −∂f_a/∂x_a = k [u uᵀ + (1 − L0/l)(I − u uᵀ)]   (positive semidefinite for l > L0)
 * enters K as +K_s on the aa and bb blocks and −K_s on ab and ba.
 */
function massSpringSheet(nx: number, ny: number, seed: number): Sheet {
  const r = mulberry32(seed);
  const np = nx * ny;
  const n = 3 * np;
  const mass = 0.01;
  const k = 1000;
  const rest = 0.09;
  const h = 0.01;
  const pos = new Float64Array(n);
  for (let j = 0; j < ny; j++)
    for (let i = 0; i < nx; i++) {
      const p = j * nx + i;
      pos[3 * p] = 0.1 * i + 0.02 * (r() - 0.5);
      pos[3 * p + 1] = 0.1 * j + 0.02 * (r() - 0.5);
      pos[3 * p + 2] = 0.02 * (r() - 0.5);
    }
  const springs: [number, number][] = [];
  for (let j = 0; j < ny; j++)
    for (let i = 0; i < nx; i++) {
      const p = j * nx + i;
      if (i + 1 < nx) springs.push([p, p + 1]);
      if (j + 1 < ny) springs.push([p, p + nx]);
    }
  // h²K_s per spring, 3×3 row-major.
  const blocks = springs.map(([a, b]) => {
    const d = [0, 1, 2].map((c) => pos[3 * b + c] - pos[3 * a + c]);
    const l = Math.hypot(d[0], d[1], d[2]);
    const u = d.map((v) => v / l);
    const g = 1 - rest / l;
    const blk = new Float64Array(9);
    for (let p = 0; p < 3; p++)
      for (let q = 0; q < 3; q++)
        blk[3 * p + q] = h * h * k * (u[p] * u[q] + g * ((p === q ? 1 : 0) - u[p] * u[q]));
    return blk;
  });
  const ri: number[] = [];
  const ci: number[] = [];
  const vi: number[] = [];
  for (let i = 0; i < n; i++) {
    ri.push(i);
    ci.push(i);
    vi.push(mass);
  }
  springs.forEach(([a, b], s) => {
    const blk = blocks[s];
    for (let p = 0; p < 3; p++)
      for (let q = 0; q < 3; q++) {
        const v = blk[3 * p + q];
        for (const [x, y, sign] of [
          [a, a, 1],
          [b, b, 1],
          [a, b, -1],
          [b, a, -1],
        ]) {
          ri.push(3 * x + p);
          ci.push(3 * y + q);
          vi.push(sign * v);
        }
      }
  });
  const matrix = csrFromTriplets(n, n, ri, ci, vi);
  const operator: LinearOperator = {
    n,
    apply(x, out) {
      for (let i = 0; i < n; i++) out[i] = mass * x[i];
      springs.forEach(([a, b], s) => {
        const blk = blocks[s];
        for (let p = 0; p < 3; p++) {
          let f = 0;
          for (let q = 0; q < 3; q++) f += blk[3 * p + q] * (x[3 * a + q] - x[3 * b + q]);
          out[3 * a + p] += f;
          out[3 * b + p] -= f;
        }
      });
    },
  };
  return { n, matrix, operator };
}

/**
 * Gaussian elimination with partial pivoting on [A | b] stored as a dense n×n
 * row-major array; rows/columns outside the band (kl below, kl + ku above after
 * pivoting) are known zeros and skipped.
 */
function bandedDenseLuSolve(a: CsrMatrix, b: Float64Array): Float64Array {
  const n = a.rows;
  let kl = 0;
  let ku = 0;
  for (let i = 0; i < n; i++)
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) {
      const j = a.colIdx[p];
      kl = Math.max(kl, i - j);
      ku = Math.max(ku, j - i);
    }
  const d = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let p = a.rowPtr[i]; p < a.rowPtr[i + 1]; p++) d[i * n + a.colIdx[p]] += a.values[p];
  const y = Float64Array.from(b);
  for (let k = 0; k < n; k++) {
    const iend = Math.min(n - 1, k + kl);
    const jend = Math.min(n - 1, k + kl + ku);
    let piv = k;
    for (let i = k + 1; i <= iend; i++)
      if (Math.abs(d[i * n + k]) > Math.abs(d[piv * n + k])) piv = i;
    if (piv !== k) {
      for (let j = k; j <= jend; j++) {
        const t = d[k * n + j];
        d[k * n + j] = d[piv * n + j];
        d[piv * n + j] = t;
      }
      const t = y[k];
      y[k] = y[piv];
      y[piv] = t;
    }
    const dkk = d[k * n + k];
    for (let i = k + 1; i <= iend; i++) {
      const l = d[i * n + k] / dkk;
      if (l === 0) continue;
      for (let j = k + 1; j <= jend; j++) d[i * n + j] -= l * d[k * n + j];
      y[i] -= l * y[k];
    }
  }
  const x = new Float64Array(n);
  for (let i = n - 1; i >= 0; i--) {
    let s = y[i];
    const jend = Math.min(n - 1, i + kl + ku);
    for (let j = i + 1; j <= jend; j++) s -= d[i * n + j] * x[j];
    x[i] = s / d[i * n + i];
  }
  return x;
}

describe("1024-particle mass-spring sheet, A = M + h²K", () => {
  test("the banded dense LU reference agrees with ml-matrix LU on a 6×6 sheet", () => {
    const s = massSpringSheet(6, 6, 3);
    const b = randomVector(s.n, 4);
    expect(
      relativeError(bandedDenseLuSolve(s.matrix, b), denseLuReference(s.matrix, b)),
    ).toBeLessThan(1e-13);
  });

  test("LDLᵀ, CG and MINRES agree with dense LU to 1e-10", () => {
    const s = massSpringSheet(32, 32, 7);
    expect(s.n).toBe(3072);
    const b = randomVector(s.n, 8);
    const ref = bandedDenseLuSolve(s.matrix, b);

    const ldl = new SparseLdltSolver();
    ldl.factor(s.matrix);
    const x = new Float64Array(s.n);
    expect(ldl.solve(b, x).converged).toBe(true);
    expect(relativeError(x, ref)).toBeLessThan(1e-10);
    expect(ldl.positivePivots).toBe(s.n);

    for (const solver of [
      new ConjugateGradientSolver(s.n, { tolerance: 1e-13, preconditioner: "jacobi" }),
      new ConjugateGradientSolver(s.n, { tolerance: 1e-13, preconditioner: "ic0" }),
      new MinresSolver(s.n, { tolerance: 1e-13 }),
    ]) {
      solver.factor(s.matrix);
      x.fill(0);
      const info = solver.solve(b, x);
      expect(info.converged, solver.name).toBe(true);
      expect(relativeError(x, ref), solver.name).toBeLessThan(1e-10);
    }

    // Matrix-free: the operator applies the springs directly, no matrix.
    for (const solver of [
      new ConjugateGradientSolver(s.n, { tolerance: 1e-13, preconditioner: "none" }),
      new MinresSolver(s.n, { tolerance: 1e-13, preconditioner: "none" }),
    ]) {
      solver.factor(s.operator);
      x.fill(0);
      expect(solver.solve(b, x).converged, solver.name).toBe(true);
      expect(relativeError(x, ref), `${solver.name} matrix-free`).toBeLessThan(1e-10);
    }
  });
});
