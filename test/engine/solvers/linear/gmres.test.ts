/**
 * GmresSolver (restarted, right-preconditioned) against ml-matrix dense LU: random SPD and
 * nonsymmetric systems for every preconditioner and restart length, matrix-free operators
 * (a convective stencil, block Jacobi on a block matrix), the initial guess and the
 * iteration limit.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, test } from "vitest";
import { GmresSolver } from "../../../../src/engine/solvers/linear/gmres";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../../support/random";
import {
  denseLuReference,
  randomNonsymmetric,
  randomSpd,
  randomSpdBlocks,
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
      s.factor(a);
      const x = new Float64Array(n);
      const info = s.solve(b, x);
      expect(info.converged).toBe(true);
      expect(info.residual).toBeLessThanOrEqual(TOL);
      expect(relativeResidual(a, x, b)).toBeLessThan(2 * TOL);
      expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
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
          s.factor(a);
          const x = new Float64Array(n);
          const info = s.solve(b, x);
          const label = `${preconditioner} m=${restart}`;
          expect(info.converged, label).toBe(true);
          expect(relativeResidual(a, x, b), label).toBeLessThan(2 * TOL);
          expect(relativeError(x, ref), label).toBeLessThan(1e-10);
        }
    });
  }

  test("initial guess is used; zero right-hand side gives x = 0", () => {
    const n = 60;
    const a = randomSpd(n, 6, 8);
    const b = randomVector(n, 9);
    const s = new GmresSolver(n);
    s.factor(a);
    const x = Float64Array.from(denseLuReference(a, b));
    const info = s.solve(b, x);
    expect(info.iterations).toBe(0);
    expect(info.converged).toBe(true);
    const z = randomVector(n, 10);
    expect(s.solve(new Float64Array(n), z).converged).toBe(true);
    expect(Array.from(z).every((v) => v === 0)).toBe(true);
  });

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

  test("block Jacobi on a matrix-free block operator matches a dense LU solve", () => {
    const { m, dense } = randomSpdBlocks(5);
    const n = m.size;
    const op: LinearOperator = {
      n,
      apply: (x, out) => m.multiply(x, out),
      blockDiagonal: () => m,
    };
    const s = new GmresSolver(n, { tolerance: 1e-13, preconditioner: "block-jacobi" });
    s.factor(op);
    const r = mulberry32(11);
    const b = Float64Array.from({ length: n }, () => 2 * r() - 1);
    const x = new Float64Array(n);
    expect(s.solve(b, x).converged).toBe(true);
    const ref = inverse(dense).mmul(Matrix.columnVector(Array.from(b)));
    for (let i = 0; i < n; i++) expect(x[i]).toBeCloseTo(ref.get(i, 0), 10);
  });

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
