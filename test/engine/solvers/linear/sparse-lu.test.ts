/**
 * SparseLuSolver against ml-matrix dense LU: SPD, nonsymmetric with shuffled rows (pivoting
 * needed) and KKT systems under every ordering, singular matrices reported, badly scaled
 * systems, the pivot tolerance, and the reuse of the column ordering and storage.
 */
import { describe, expect, test } from "vitest";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import { SparseLuSolver } from "../../../../src/engine/solvers/linear/sparse-lu";
import { mulberry32 } from "../../../support/random";
import {
  denseLuReference,
  expectBadlyScaledSolved,
  expectRefactoredSolve,
  expectScaledSingularRefused,
  randomKkt,
  randomNonsymmetric,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
  singular3x3,
  solveWith,
  TEST_SIZES,
} from "./helpers";

describe("SparseLuSolver against ml-matrix dense LU", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, SparseLuSolver][] = [
        ["amd", new SparseLuSolver({ ordering: "amd" })],
        ["amd-ata", new SparseLuSolver({ ordering: "amd-ata" })],
        ["natural", new SparseLuSolver({ ordering: "natural", pivotTolerance: 1 })],
      ];
      for (const [label, s] of solvers)
        expect(relativeError(solveWith(s, a, b), ref), label).toBeLessThan(1e-10);
    });

    test(`random nonsymmetric with shuffled rows (pivoting needed), n = ${n}`, () => {
      const a = randomNonsymmetric(n, 5, 17 * n, true);
      const b = randomVector(n, 5 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, SparseLuSolver][] = [
        ["amd", new SparseLuSolver()],
        ["amd-ata", new SparseLuSolver({ ordering: "amd-ata" })],
        [
          "natural partial pivoting",
          new SparseLuSolver({ ordering: "natural", pivotTolerance: 1 }),
        ],
        ["rcm", new SparseLuSolver({ ordering: "rcm" })],
      ];
      for (const [label, s] of solvers) {
        const x = solveWith(s, a, b);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
        expect(relativeResidual(a, x, b), label).toBeLessThan(1e-12);
      }
    });

    test(`symmetric indefinite KKT [M Jᵀ; J 0], n = ${n} + ${Math.ceil(n / 3)}`, () => {
      const a = randomKkt(n, Math.ceil(n / 3), 23 * n);
      const b = randomVector(a.rows, 7 * n);
      const x = solveWith(new SparseLuSolver(), a, b);
      expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
    });
  }

  test("pivots where LDLᵀ cannot ([0 1; 1 0]); singular matrices are reported", () => {
    // [0 1; 1 0] x = (1, 2): x = (2, 1).
    const swap = csrFromTriplets(2, 2, [0, 1], [1, 0], [1, 1]);
    const x = new Float64Array(2);
    const lu = new SparseLuSolver();
    lu.factor(swap);
    expect(lu.solve(Float64Array.of(1, 2), x).converged).toBe(true);
    expect(Array.from(x)).toEqual([2, 1]);

    const sing = singular3x3();
    for (const s of [new SparseLuSolver(), new SparseLuSolver({ ordering: "natural" })]) {
      s.factor(sing);
      expect(s.solve(Float64Array.of(1, 1, 1), new Float64Array(3)).converged, s.ordering).toBe(
        false,
      );
    }
  });

  test("badly scaled systems (D A D, D from 1e-6 to 1e6) are solved, a scaled singular one is not", () => {
    expectBadlyScaledSolved(() => new SparseLuSolver());
    expectScaledSingularRefused(() => new SparseLuSolver());
  });

  test("pivot tolerance: diagonal preference vs plain partial pivoting", () => {
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

  test("new values on the same pattern reuse the pivots while a fresh factorization would choose them, bit for bit", () => {
    const n = 150;
    const solution = (s: SparseLuSolver, a: CsrMatrix, seed: number) => {
      s.factor(a);
      const x = new Float64Array(n);
      expect(s.solve(randomVector(n, seed), x).converged).toBe(true);
      return Array.from(x);
    };
    // diagonally dominant: every pivot the diagonal, kept while it passes the threshold test
    const a = randomNonsymmetric(n, 5, 21, false);
    for (let i = 0; i < n; i++)
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) if (a.colIdx[k] === i) a.values[k] += 10;
    const s = new SparseLuSolver();
    s.factor(a);
    const r = mulberry32(8);
    // a Newton iteration's change: every value moved by up to 1 %
    for (let k = 0; k < a.values.length; k++) a.values[k] *= 1 + 0.02 * (r() - 0.5);
    expectRefactoredSolve(s, a, 9);
    expect([s.refactorizations, s.numericFactorizations]).toEqual([1, 1]);
    expect(solution(s, a, 3)).toEqual(solution(new SparseLuSolver(), a, 3));
    // shuffled rows (pivots off the diagonal, chosen as the largest): kept through changes
    // that leave them the largest, with a fresh factorization's factors
    const c = randomNonsymmetric(n, 5, 21, true);
    const t = new SparseLuSolver();
    t.factor(c);
    for (const amount of [1e-9, 0.02]) {
      for (let k = 0; k < c.values.length; k++) c.values[k] *= 1 + amount * (r() - 0.5);
      expectRefactoredSolve(t, c, 10);
      expect(solution(t, c, 4)).toEqual(solution(new SparseLuSolver(), c, 4));
    }
    expect([t.refactorizations, t.numericFactorizations]).toEqual([4, 1]); // two factor() a change
    // [0.1 2; 3 1]: row 1 pivots column 0 (0.1 < 0.1·3); at [0.5 2; 3 1] the kept pivot
    // still passes the threshold test, but numeric would now prefer the diagonal (0.5 ≥
    // 0.3): factored afresh, so that the factors depend on the matrix alone (a simulation
    // restored from a snapshot factors afresh and continues bit for bit:
    // test/reliability/snapshot.test.ts)
    const m = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [0.1, 2, 3, 1]);
    const u = new SparseLuSolver({ ordering: "natural" });
    u.factor(m);
    m.values[0] = 0.5;
    expect(solution(u, m, 5)).toEqual(solution(new SparseLuSolver({ ordering: "natural" }), m, 5));
    expect([u.refactorizations, u.numericFactorizations]).toEqual([0, 2]);
    // the diagonal made tiny: the kept (diagonal) pivots fail the test, a fresh factorization
    // with other pivots takes over, and the solve is right
    for (let i = 0; i < n; i++)
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
        if (a.colIdx[k] === i) a.values[k] *= 1e-9;
    expectRefactoredSolve(s, a, 10);
    expect([s.refactorizations, s.numericFactorizations]).toEqual([2, 2]);
  });

  test("column ordering and storage reused across refactorizations", () => {
    const n = 120;
    const a = randomNonsymmetric(n, 5, 5, true);
    const s = new SparseLuSolver();
    s.factor(a);
    const q = s.columnPermutation;
    const growths = s.storageGrowths;
    const r = mulberry32(6);
    for (let step = 0; step < 3; step++) {
      // New values, same pattern (scaled and perturbed; stays nonsingular with
      // overwhelming probability and is checked against the reference anyway).
      for (let k = 0; k < a.values.length; k++) a.values[k] *= 0.5 + r();
      expectRefactoredSolve(s, a, 7 + step);
    }
    expect(s.symbolicAnalyses).toBe(1);
    expect(s.columnPermutation).toBe(q);
    expect(s.storageGrowths).toBe(growths);
  });
});
