/**
 * DenseCholeskySolver against ml-matrix dense LU: SPD systems in any triangle storage,
 * badly scaled ones, and the matrices it must refuse (indefinite, non-square).
 */
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { DenseCholeskySolver } from "../../../../src/engine/solvers/linear/dense-cholesky";
import {
  denseLuReference,
  expectBadlyScaledSolved,
  expectTriangleStorageSolved,
  randomSpd,
  randomVector,
  relativeError,
  solveWith,
  TEST_SIZES,
} from "./helpers";

describe("DenseCholeskySolver", () => {
  for (const n of TEST_SIZES)
    test(`random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const x = solveWith(new DenseCholeskySolver(), a, b);
      expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
    });

  test("an indefinite matrix [1 2; 2 1] is reported as converged = false", () => {
    const indef = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 2, 2, 1]);
    const chol = new DenseCholeskySolver();
    chol.factor(indef);
    const x = new Float64Array(2);
    expect(chol.solve(Float64Array.of(1, 2), x).converged).toBe(false);
    expect(Array.from(x).every(Number.isNaN)).toBe(true);
    // a singular PSD matrix [1 1; 1 1] too: its second pivot 1 − 1 = 0 is rounding level
    chol.factor(csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1]));
    expect(chol.solve(Float64Array.of(1, 2), x).converged).toBe(false);
  });

  test("badly scaled systems (D A D, D from 1e-6 to 1e6) are solved, not rejected", () =>
    expectBadlyScaledSolved(() => new DenseCholeskySolver()));

  test("upper-only, lower-only or full storage of the symmetric matrix", () =>
    expectTriangleStorageSolved(() => new DenseCholeskySolver()));

  test("a non-square matrix is refused", () => {
    const wide = csrFromTriplets(2, 3, [0, 1], [0, 2], [1, 1]);
    expect(() => new DenseCholeskySolver().factor(wide)).toThrow(/square/);
  });
});
