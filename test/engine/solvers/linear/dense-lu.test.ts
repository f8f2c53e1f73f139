/**
 * DenseLuSolver (partial-pivoting LU in place, in ml-matrix's order) against ml-matrix: its
 * factors bit for bit, its solutions against ml-matrix's dense LU.
 */
import { LuDecomposition, Matrix } from "ml-matrix";
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { csrToDenseInto } from "../../../../src/engine/solvers/linear/dense";
import { DenseLuSolver } from "../../../../src/engine/solvers/linear/dense-lu";
import {
  expectBadlyScaledSolved,
  expectRandomSquareSystemsSolved,
  expectScaledSingularRefused,
  randomNonsymmetric,
  singular3x3,
  TEST_SIZES,
} from "./helpers";

describe("DenseLuSolver", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD, nonsymmetric with shuffled rows and KKT, n = ${n}`, () =>
      expectRandomSquareSystemsSolved(() => new DenseLuSolver(), n));
  }

  test("its factors and pivots are ml-matrix's LuDecomposition's, bit for bit", () => {
    for (const n of [1, 7, 40]) {
      // rows shuffled: most diagonal entries small or zero, so the LU pivots
      const a = randomNonsymmetric(n, 5, 3 + n, true);
      const s = new DenseLuSolver();
      s.factor(a);
      const { lu, piv } = s as unknown as { lu: Float64Array; piv: Int32Array };
      const dense = new Float64Array(n * n);
      csrToDenseInto(a, dense);
      const ref = new LuDecomposition(Matrix.from1DArray(n, n, dense));
      const l = ref.lowerTriangularMatrix;
      const u = ref.upperTriangularMatrix;
      for (let i = 0; i < n; i++) {
        expect(piv[i]).toBe(ref.pivotPermutationVector[i]);
        for (let j = 0; j < n; j++) expect(lu[i * n + j]).toBe(i > j ? l.get(i, j) : u.get(i, j));
      }
    }
  });

  test("a singular matrix is reported as converged = false", () => {
    const s = new DenseLuSolver();
    s.factor(singular3x3());
    const x = new Float64Array(3);
    expect(s.solve(Float64Array.of(1, 1, 1), x).converged).toBe(false);
    // rank 2: the last pivot of U is the zero one, and x is marked unusable
    expect(s.zeroPivot).toBe(2);
    expect(Array.from(x).every(Number.isNaN)).toBe(true);
    // the same solver then factors a smaller, regular matrix: [2 1; 1 3] x = (3, 4) → (1, 1)
    s.factor(csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [2, 1, 1, 3]));
    expect(s.zeroPivot).toBe(-1);
    const x2 = new Float64Array(2);
    expect(s.solve(Float64Array.of(3, 4), x2).converged).toBe(true);
    expect(Math.abs(x2[0] - 1) + Math.abs(x2[1] - 1)).toBeLessThan(1e-15);
  });

  test("a non-square matrix is refused", () => {
    const wide = csrFromTriplets(2, 3, [0, 1], [0, 2], [1, 1]);
    expect(() => new DenseLuSolver().factor(wide)).toThrow(/square/);
  });

  test("badly scaled systems (D A D, D from 1e-6 to 1e6) are solved, a scaled singular one is not", () => {
    expectBadlyScaledSolved(() => new DenseLuSolver());
    expectScaledSingularRefused(() => new DenseLuSolver());
  });
});
