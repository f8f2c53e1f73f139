import { describe, expect, test } from "vitest";
import { GmresSolver } from "../../../../src/engine/solvers/linear/gmres";
import {
  denseLuReference,
  expectBlockJacobiMatchesDense,
  expectInitialGuessAndZeroRhs,
  expectKrylovSolve,
  randomNonsymmetric,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
  shiftedLaplacian,
  TEST_SIZES,
} from "./helpers";

const TOL = 1e-13;

describe("GmresSolver", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD with ILU(0), n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const s = new GmresSolver(n, { tolerance: TOL, preconditioner: "ilu0" });
      expectKrylovSolve(s, a, b, denseLuReference(a, b), TOL, "ilu0");
    });

    test(`random nonsymmetric, n = ${n}`, () => {
      const a = randomNonsymmetric(n, 5, 13 * n);
      const b = randomVector(n, 5 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi", "ilu0"] as const)
        for (const restart of [5, 30]) {
          const s = new GmresSolver(n, {
            tolerance: TOL,
            preconditioner,
            restart,
            maxIterations: 2000,
          });
          expectKrylovSolve(s, a, b, ref, TOL, `${preconditioner} m=${restart}`, false);
        }
    });
  }

  test("initial guess is used; zero right-hand side gives x = 0", () =>
    expectInitialGuessAndZeroRhs((n, o) => new GmresSolver(n, o)));

  test("a matrix-free operator: the convective stencil, preconditioners none and Jacobi", () => {
    const { operator, matrix } = shiftedLaplacian(14, 0.5, false);
    const b = randomVector(operator.n, 1);
    const ref = denseLuReference(matrix, b);
    for (const preconditioner of ["none", "jacobi"] as const) {
      const g = new GmresSolver(operator.n, { tolerance: TOL, preconditioner, restart: 20 });
      g.factor(operator);
      const x = new Float64Array(operator.n);
      expect(g.solve(b, x).converged).toBe(true);
      expect(relativeError(x, ref)).toBeLessThan(1e-10);
    }
    // ILU(0) needs the matrix itself
    expect(() =>
      new GmresSolver(operator.n, { preconditioner: "ilu0" }).factor(operator),
    ).toThrow();
  });

  test("block Jacobi on a matrix-free block operator matches a dense LU solve", () =>
    expectBlockJacobiMatchesDense((n, o) => new GmresSolver(n, o)));

  test("iteration limit (inner steps over all cycles) → converged = false, true residual", () => {
    const n = 120;
    const a = randomNonsymmetric(n, 5, 41);
    const b = randomVector(n, 42);
    const s = new GmresSolver(n, {
      tolerance: 1e-14,
      preconditioner: "none",
      restart: 4,
      maxIterations: 6,
    });
    s.factor(a);
    const x = new Float64Array(n);
    const info = s.solve(b, x);
    expect(info.converged).toBe(false);
    expect(info.iterations).toBe(6);
    expect(info.residual).toBeCloseTo(relativeResidual(a, x, b), 12);
  });
});
