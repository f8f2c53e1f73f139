/**
 * DenseCholeskySolver against ml-matrix: its factor bit for bit against
 * CholeskyDecomposition's, its solutions against dense LU on SPD systems in any triangle
 * storage, badly scaled ones, and the matrices it must refuse (indefinite, non-square).
 */
import { CholeskyDecomposition, Matrix } from "ml-matrix";
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { symmetricDenseInto } from "../../../../src/engine/solvers/linear/dense";
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

  test("its factor is ml-matrix's CholeskyDecomposition's, bit for bit", () => {
    for (const n of [1, 7, 40]) {
      const a = randomSpd(n, 6, 5 + n);
      const s = new DenseCholeskySolver();
      s.factor(a);
      const { l } = s as unknown as { l: Float64Array };
      const dense = new Float64Array(n * n);
      symmetricDenseInto(a, dense, new Uint8Array(n * n));
      const ref = new CholeskyDecomposition(Matrix.from1DArray(n, n, dense)).lowerTriangularMatrix;
      for (let i = 0; i < n; i++)
        for (let j = 0; j <= i; j++) expect(l[i * n + j]).toBe(ref.get(i, j));
    }
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
