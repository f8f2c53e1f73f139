/**
 * MinresSolver against ml-matrix dense LU: random SPD and indefinite KKT systems, a
 * matrix-free stencil, the initial guess, the iteration limit and the preconditioners it
 * refuses (M must be SPD: only none and |diag A| Jacobi).
 */
import { describe, expect, test } from "vitest";
import { MinresSolver } from "../../../../src/engine/solvers/linear/minres";
import {
  denseLuReference,
  expectInitialGuessAndZeroRhs,
  expectKrylovSolve,
  expectMatrixFreeLaplacian,
  randomKkt,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
  TEST_SIZES,
} from "./helpers";

const TOL = 1e-13;

describe("MinresSolver", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi"] as const) {
        const s = new MinresSolver(n, { tolerance: TOL, preconditioner });
        expectKrylovSolve(s, a, b, ref, TOL, preconditioner);
      }
    });

    test(`the indefinite KKT matrix, n = ${n} + ${Math.ceil(n / 3)}`, () => {
      const a = randomKkt(n, Math.ceil(n / 3), 23 * n);
      const b = randomVector(a.rows, 7 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi"] as const) {
        const s = new MinresSolver(a.rows, { tolerance: TOL, preconditioner });
        s.factor(a);
        const x = new Float64Array(a.rows);
        const info = s.solve(b, x);
        expect(info.converged, preconditioner).toBe(true);
        expect(relativeError(x, ref), preconditioner).toBeLessThan(1e-10);
      }
    });
  }

  test("initial guess is used; zero right-hand side gives x = 0", () =>
    expectInitialGuessAndZeroRhs((n, o) => new MinresSolver(n, o)));

  test("a matrix-free operator: the symmetric shifted Laplacian stencil", () =>
    expectMatrixFreeLaplacian((n, o) => new MinresSolver(n, o), TOL));

  test("iteration limit reached → converged = false, the true residual reported", () => {
    const a = randomSpd(200, 6, 5, 0.001);
    const b = randomVector(200, 6);
    const s = new MinresSolver(200, { tolerance: 1e-14, maxIterations: 3, preconditioner: "none" });
    s.factor(a);
    const x = new Float64Array(200);
    const info = s.solve(b, x);
    expect(info.converged).toBe(false);
    expect(info.iterations).toBe(3);
    expect(info.residual).toBeCloseTo(relativeResidual(a, x, b), 12);
  });

  test("preconditioners that are not SPD for an indefinite A are refused", () => {
    for (const preconditioner of ["ic0", "ilu0", "block-jacobi"] as const)
      expect(() => new MinresSolver(4, { preconditioner }), preconditioner).toThrow(
        /not supported/,
      );
  });
});
