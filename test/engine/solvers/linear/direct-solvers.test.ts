import { describe, expect, test } from "vitest";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import { DenseCholeskySolver } from "../../../../src/engine/solvers/linear/dense-cholesky";
import { DenseLuSolver } from "../../../../src/engine/solvers/linear/dense-lu";
import type { LinearSolver } from "../../../../src/engine/solvers/linear/linear-solver";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { SparseLuSolver } from "../../../../src/engine/solvers/linear/sparse-lu";
import { QrSolver } from "../../../../src/engine/solvers/linear/sparse-qr";
import {
  denseLuReference,
  randomKkt,
  randomNonsymmetric,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
} from "./helpers";

const SIZES = [5, 20, 60, 200];

function solveWith(s: LinearSolver, a: CsrMatrix, b: Float64Array): Float64Array {
  s.factor(a);
  const x = new Float64Array(a.cols);
  const info = s.solve(b, x);
  expect(info.converged, s.name).toBe(true);
  return x;
}

describe("direct solvers against ml-matrix dense LU", () => {
  for (const n of SIZES) {
    test(`random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, LinearSolver][] = [
        ["dense-lu", new DenseLuSolver()],
        ["dense-cholesky", new DenseCholeskySolver()],
        ["ldlt amd", new SparseLdltSolver({ ordering: "amd" })],
        ["ldlt rcm", new SparseLdltSolver({ ordering: "rcm" })],
        ["ldlt natural", new SparseLdltSolver({ ordering: "natural" })],
        ["lu amd", new SparseLuSolver({ ordering: "amd" })],
        ["lu amd-ata", new SparseLuSolver({ ordering: "amd-ata" })],
        ["lu natural", new SparseLuSolver({ ordering: "natural", pivotTolerance: 1 })],
        ["qr", new QrSolver()],
      ];
      for (const [label, s] of solvers) {
        const x = solveWith(s, a, b);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
      }
      // SPD: every LDLᵀ pivot is positive (Sylvester's law of inertia).
      const ldl = new SparseLdltSolver();
      ldl.factor(a);
      expect(ldl.positivePivots).toBe(n);
      expect(ldl.negativePivots).toBe(0);
    });

    test(`random nonsymmetric with shuffled rows (pivoting needed), n = ${n}`, () => {
      const a = randomNonsymmetric(n, 5, 17 * n, true);
      const b = randomVector(n, 5 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, LinearSolver][] = [
        ["dense-lu", new DenseLuSolver()],
        ["lu amd", new SparseLuSolver()],
        ["lu amd-ata", new SparseLuSolver({ ordering: "amd-ata" })],
        [
          "lu natural partial pivoting",
          new SparseLuSolver({ ordering: "natural", pivotTolerance: 1 }),
        ],
        ["lu rcm", new SparseLuSolver({ ordering: "rcm" })],
        ["qr", new QrSolver()],
      ];
      for (const [label, s] of solvers) {
        const x = solveWith(s, a, b);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
        expect(relativeResidual(a, x, b), label).toBeLessThan(1e-12);
      }
    });

    test(`symmetric indefinite KKT [M Jᵀ; J 0], n = ${n} + ${Math.ceil(n / 3)}`, () => {
      const nq = n;
      const nc = Math.ceil(n / 3);
      const a = randomKkt(nq, nc, 23 * n);
      const b = randomVector(nq + nc, 7 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, LinearSolver][] = [
        ["dense-lu", new DenseLuSolver()],
        ["ldlt natural (coordinates first)", new SparseLdltSolver({ ordering: "natural" })],
        ["ldlt amd regularized", new SparseLdltSolver({ ordering: "amd", regularization: 1e-8 })],
        ["ldlt rcm regularized", new SparseLdltSolver({ ordering: "rcm", regularization: 1e-8 })],
        ["lu amd", new SparseLuSolver()],
        ["qr", new QrSolver()],
      ];
      for (const [label, s] of solvers) {
        const x = solveWith(s, a, b);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
      }
      // Inertia of a KKT matrix with M SPD and J of full row rank is (nq, nc, 0)
      // (Gould 1985); D of an unpivoted LDLᵀ must show it.
      const ldl = new SparseLdltSolver({ ordering: "natural" });
      ldl.factor(a);
      expect([ldl.positivePivots, ldl.negativePivots]).toEqual([nq, nc]);
    });
  }

  test("regularized LDLᵀ: refinement recovers the solution of A, not of A + δS", () => {
    const a = randomKkt(80, 30, 5, true); // explicit zero diagonal stored
    const b = randomVector(110, 6);
    const ref = denseLuReference(a, b);
    for (const delta of [1e-10, 1e-8, 1e-6]) {
      const s = new SparseLdltSolver({ regularization: delta, refinementSteps: 10 });
      const x = solveWith(s, a, b);
      expect(relativeError(x, ref), `δ = ${delta}`).toBeLessThan(1e-10);
      // Without refinement the error is of the order of the perturbation δ·‖A⁻¹‖.
      const raw = new SparseLdltSolver({ regularization: delta, refinementSteps: 0 });
      const x0 = solveWith(raw, a, b);
      expect(relativeError(x0, ref)).toBeGreaterThan(delta * 1e-3);
    }
  });

  test("explicit per-row regularization signs", () => {
    const nq = 40;
    const nc = 15;
    const a = randomKkt(nq, nc, 77);
    const signs = Array.from({ length: nq + nc }, (_, i) => (i < nq ? 1 : -1));
    const b = randomVector(nq + nc, 78);
    const s = new SparseLdltSolver({ regularization: 1e-8, regularizationSigns: signs });
    const x = solveWith(s, a, b);
    expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
  });

  test("zero pivots are reported as converged = false", () => {
    // [0 1; 1 0] in natural order: d_0 = 0.
    const swap = csrFromTriplets(2, 2, [0, 1], [1, 0], [1, 1]);
    const b = Float64Array.of(1, 2);
    const x = new Float64Array(2);
    const ldl = new SparseLdltSolver({ ordering: "natural" });
    ldl.factor(swap);
    expect(ldl.solve(b, x).converged).toBe(false);
    expect(ldl.zeroPivot).toBe(0);
    expect(Number.isNaN(x[0])).toBe(true);
    // ... whereas LU pivots and solves it: x = (2, 1).
    const lu = new SparseLuSolver();
    lu.factor(swap);
    expect(lu.solve(b, x).converged).toBe(true);
    expect(Array.from(x)).toEqual([2, 1]);

    // Singular: row 2 = row 0 + row 1.
    const rows = [0, 0, 0, 1, 1, 2, 2, 2];
    const cols = [0, 1, 2, 1, 2, 0, 1, 2];
    const vals = [1, 2, 3, 4, 5, 1, 6, 8];
    const sing = csrFromTriplets(3, 3, rows, cols, vals);
    const b3 = Float64Array.of(1, 1, 1);
    const x3 = new Float64Array(3);
    for (const s of [
      new DenseLuSolver(),
      new SparseLuSolver(),
      new SparseLuSolver({ ordering: "natural" }),
    ]) {
      s.factor(sing);
      expect(s.solve(b3, x3).converged, s.name).toBe(false);
    }
    // Symmetric singular: [1 1; 1 1].
    const ones = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1]);
    const ldl2 = new SparseLdltSolver();
    ldl2.factor(ones);
    expect(ldl2.solve(b, x).converged).toBe(false);
    // Indefinite for Cholesky: [1 2; 2 1].
    const indef = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 2, 1]);
    const chol = new DenseCholeskySolver();
    chol.factor(indef);
    expect(chol.solve(b, x).converged).toBe(false);
  });

  test("badly scaled systems (D A D, D from 1e-6 to 1e6) are solved, not rejected", () => {
    // Mixed units (small inertias next to stiff springs) give such matrices. With
    // y = D x the system is A y = D⁻¹ b: reference by ml-matrix on the unscaled A, and
    // the error is measured in the scaled variables y (van der Sluis: LDLᵀ/Cholesky are
    // accurate there whatever D).
    const n = 50;
    const a = randomSpd(n, 6, 31);
    const dscale = Float64Array.from({ length: n }, (_, i) => 10 ** (-6 + (12 * i) / (n - 1)));
    const scaled: CsrMatrix = {
      ...a,
      values: a.values.map((v, k) => {
        let row = 0;
        while (a.rowPtr[row + 1] <= k) row++;
        return dscale[row] * v * dscale[a.colIdx[k]];
      }),
    };
    const b = randomVector(n, 32);
    const yRef = denseLuReference(
      a,
      b.map((v, i) => v / dscale[i]),
    );
    for (const s of [
      new SparseLdltSolver(),
      new DenseCholeskySolver(),
      new DenseLuSolver(),
      new SparseLuSolver(),
    ]) {
      const x = solveWith(s, scaled, b);
      const y = x.map((v, i) => v * dscale[i]);
      expect(relativeError(y, yRef), s.name).toBeLessThan(1e-10);
    }
    // A scaled singular matrix is still recognised: D [1 1; 1 1] D.
    const d0 = 1e-6;
    const d1 = 1e6;
    const sing = csrFromTriplets(
      2,
      2,
      [0, 0, 1, 1],
      [0, 1, 0, 1],
      [d0 * d0, d0 * d1, d1 * d0, d1 * d1],
    );
    const x2 = new Float64Array(2);
    for (const s of [new SparseLdltSolver(), new DenseLuSolver(), new SparseLuSolver()]) {
      s.factor(sing);
      expect(s.solve(Float64Array.of(1, 1), x2).converged, s.name).toBe(false);
    }
  });

  test("symmetric solvers accept upper-only, lower-only or full storage", () => {
    const a = randomSpd(50, 6, 99);
    const b = randomVector(50, 100);
    const ref = denseLuReference(a, b);
    const part = (keep: (i: number, j: number) => boolean): CsrMatrix => {
      const ri: number[] = [];
      const ci: number[] = [];
      const vi: number[] = [];
      for (let i = 0; i < a.rows; i++)
        for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
          if (keep(i, a.colIdx[k])) {
            ri.push(i);
            ci.push(a.colIdx[k]);
            vi.push(a.values[k]);
          }
      return csrFromTriplets(a.rows, a.cols, ri, ci, vi);
    };
    const upper = part((i, j) => j >= i);
    const lower = part((i, j) => j <= i);
    for (const m of [upper, lower, a]) {
      for (const s of [new SparseLdltSolver(), new DenseCholeskySolver()]) {
        const x = solveWith(s, m, b);
        expect(relativeError(x, ref), s.name).toBeLessThan(1e-10);
      }
    }
  });

  test("LU pivot tolerance: diagonal preference vs plain partial pivoting", () => {
    // [ε 1; 1 1] with ε = 1e-3: with tolerance 1e-4 the diagonal ε is accepted as pivot,
    // with tolerance 1 (partial pivoting) row 1 is pivoted first. Both solve it.
    const eps = 1e-3;
    const a = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [eps, 1, 1, 1]);
    const b = Float64Array.of(1, 2);
    // Closed form: x0 = 1/(1 − ε), x1 = 2 − x0 ... from x0 + x1 = 2, ε x0 + x1 = 1.
    const x0 = 1 / (1 - eps);
    const exact = Float64Array.of(x0, 2 - x0);
    // The small pivot costs up to a factor 1/ε in rounding error; partial pivoting none.
    for (const [tol, bound] of [
      [1e-4, 1e3 * 1e-15],
      [1, 1e-15],
    ]) {
      const s = new SparseLuSolver({ ordering: "natural", pivotTolerance: tol });
      const x = solveWith(s, a, b);
      expect(relativeError(x, exact)).toBeLessThan(bound);
    }
  });
});
