/** DenseLuSolver (ml-matrix's partial-pivoting LU applied in place) against ml-matrix dense LU. */
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { DenseLuSolver } from "../../../../src/engine/solvers/linear/dense-lu";
import {
  expectBadlyScaledSolved,
  expectRandomSquareSystemsSolved,
  expectScaledSingularRefused,
  singular3x3,
  TEST_SIZES,
} from "./helpers";

describe("DenseLuSolver", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD, nonsymmetric with shuffled rows and KKT, n = ${n}`, () =>
      expectRandomSquareSystemsSolved(() => new DenseLuSolver(), n));
  }

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
