/**
 * ConjugateGradientSolver against ml-matrix dense LU: random SPD systems under every
 * preconditioner, matrix-free operators (a stencil, block-Jacobi on a block matrix),
 * the indefinite and iteration-limit failures, the initial guess, and the confirmation
 * of the recursive residual counted in operator products.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { ConjugateGradientSolver } from "../../../../src/engine/solvers/linear/cg";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../../support/random";
import {
  countingOperator,
  denseLuReference,
  randomSpd,
  randomSpdBlocks,
  randomVector,
  relativeError,
  relativeResidual,
  shiftedLaplacian,
  TEST_SIZES,
} from "./helpers";

const TOL = 1e-13;

describe("ConjugateGradientSolver", () => {
  for (const n of TEST_SIZES)
    test(`random SPD, n = ${n}, preconditioners none, Jacobi and IC(0)`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      for (const preconditioner of ["none", "jacobi", "ic0"] as const) {
        const s = new ConjugateGradientSolver(n, { tolerance: TOL, preconditioner });
        s.factor(a);
        const x = new Float64Array(n);
        const info = s.solve(b, x);
        expect(info.converged, preconditioner).toBe(true);
        expect(info.residual, preconditioner).toBeLessThanOrEqual(TOL);
        expect(relativeResidual(a, x, b), preconditioner).toBeLessThan(2 * TOL);
        expect(relativeError(x, ref), preconditioner).toBeLessThan(1e-10);
      }
    });

  test("detects an indefinite matrix (pᵀAp ≤ 0) and reports converged = false", () => {
    const a = csrFromTriplets(2, 2, [0, 1], [0, 1], [1, -1]);
    const s = new ConjugateGradientSolver(2, { preconditioner: "none" });
    s.factor(a);
    const x = new Float64Array(2);
    expect(s.solve(Float64Array.of(1, 1), x).converged).toBe(false);
  });

  test("iteration limit reached → converged = false, residual reported", () => {
    const a = randomSpd(200, 6, 5, 0.001);
    const b = randomVector(200, 6);
    const s = new ConjugateGradientSolver(200, {
      tolerance: 1e-14,
      maxIterations: 3,
      preconditioner: "none",
    });
    s.factor(a);
    const x = new Float64Array(200);
    const info = s.solve(b, x);
    expect(info.converged).toBe(false);
    expect(info.iterations).toBe(3);
    expect(info.residual).toBeCloseTo(relativeResidual(a, x, b), 12);
  });

  test("initial guess is used; zero right-hand side gives x = 0", () => {
    const n = 60;
    const a = randomSpd(n, 6, 8);
    const b = randomVector(n, 9);
    const s = new ConjugateGradientSolver(n);
    s.factor(a);
    const x = Float64Array.from(denseLuReference(a, b));
    const info = s.solve(b, x);
    expect(info.iterations).toBe(0);
    expect(info.converged).toBe(true);
    const z = randomVector(n, 10);
    expect(s.solve(new Float64Array(n), z).converged).toBe(true);
    expect(Array.from(z).every((v) => v === 0)).toBe(true);
  });

  test("a matrix-free operator: the symmetric shifted Laplacian stencil", () => {
    const { operator, matrix } = shiftedLaplacian(14, 0.5, true);
    const b = randomVector(operator.n, 1);
    const s = new ConjugateGradientSolver(operator.n, { tolerance: TOL });
    s.factor(operator);
    const x = new Float64Array(operator.n);
    expect(s.solve(b, x).converged).toBe(true);
    expect(relativeError(x, denseLuReference(matrix, b))).toBeLessThan(1e-10);
    // IC(0) needs the matrix itself
    expect(() =>
      new ConjugateGradientSolver(operator.n, { preconditioner: "ic0" }).factor(operator),
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
    const s = new ConjugateGradientSolver(n, { tolerance: 1e-13, preconditioner: "block-jacobi" });
    s.factor(op);
    const r = mulberry32(11);
    const b = Float64Array.from({ length: n }, () => 2 * r() - 1);
    const x = new Float64Array(n);
    expect(s.solve(b, x).converged).toBe(true);
    const ref = inverse(dense).mmul(Matrix.columnVector(Array.from(b)));
    for (let i = 0; i < n; i++) expect(x[i]).toBeCloseTo(ref.get(i, 0), 10);
  });

  test("block Jacobi is refused on a CSR matrix (it needs the block structure)", () => {
    const { m } = randomSpdBlocks(1);
    const s = new ConjugateGradientSolver(m.size, { preconditioner: "block-jacobi" });
    expect(() => s.factor(m.toCsr())).toThrow(/block-jacobi needs an operator/);
  });

  test("a loose tolerance reached quickly is reported without the confirming product", () => {
    const n = 120;
    const a = randomSpd(n, 6, 77);
    const b = randomVector(n, 78);
    for (const [tolerance, extra] of [
      [1e-4, 0],
      [1e-10, 1],
    ] as const) {
      const op = countingOperator(a);
      const s = new ConjugateGradientSolver(n, { tolerance, preconditioner: "none" });
      s.factor(op);
      const x = new Float64Array(n);
      const info = s.solve(b, x);
      expect(info.converged).toBe(true);
      expect(op.products).toBe(info.iterations + extra);
      // the reported residual is the true one to rounding, confirmed or not
      expect(Math.abs(relativeResidual(a, x, b) - info.residual)).toBeLessThan(1e-12);
      expect(relativeResidual(a, x, b)).toBeLessThanOrEqual(tolerance * (1 + 1e-9));
    }
  });
});
