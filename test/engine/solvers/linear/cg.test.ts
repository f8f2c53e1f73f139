import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import { ConjugateGradientSolver } from "../../../../src/engine/solvers/linear/cg";
import {
  countingOperator,
  denseLuReference,
  expectBlockJacobiMatchesDense,
  expectInitialGuessAndZeroRhs,
  expectKrylovSolve,
  expectMatrixFreeLaplacian,
  randomSpd,
  randomSpdBodyBlocks,
  randomVector,
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
        expectKrylovSolve(s, a, b, ref, TOL, preconditioner);
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

  test("a second target (accept) ends the run at the first iterate meeting it, as converged", () => {
    const n = 200;
    const a = randomSpd(n, 6, 5, 0.001);
    const b = randomVector(n, 6);
    const bn = Math.hypot(...b);
    const full = new ConjugateGradientSolver(n, { tolerance: 1e-12, preconditioner: "none" });
    full.factor(a);
    const exact = new Float64Array(n);
    const all = full.solve(b, exact).iterations;
    // the caller's target: a residual below a tenth of ‖b‖, judged on the iterate it is given
    const seen: number[] = [];
    const s = new ConjugateGradientSolver(n, { tolerance: 1e-12, preconditioner: "none" });
    s.accept = {
      accepts(x, residualNorm) {
        seen.push(relativeResidual(a, x, b) * bn);
        return residualNorm <= 0.1 * bn;
      },
    };
    s.factor(a);
    const x = new Float64Array(n);
    const info = s.solve(b, x);
    expect(info.converged).toBe(true);
    expect(info.iterations).toBeLessThan(all);
    expect(relativeResidual(a, x, b)).toBeLessThanOrEqual(0.1 * (1 + 1e-9));
    expect(info.residual).toBeCloseTo(relativeResidual(a, x, b), 9);
    // each iterate tested once, and the last once more on its true residual (a tolerance
    // this tight confirms what ends the run); the iterate before the last did not meet it
    expect(seen.length).toBe(info.iterations + 1);
    expect(seen[seen.length - 3]).toBeGreaterThan(0.1 * bn);
  });

  test("initial guess is used; zero right-hand side gives x = 0", () =>
    expectInitialGuessAndZeroRhs((n, o) => new ConjugateGradientSolver(n, o)));

  test("a matrix-free operator: the symmetric shifted Laplacian stencil", () => {
    expectMatrixFreeLaplacian((n, o) => new ConjugateGradientSolver(n, o), TOL);
    // IC(0) needs the matrix itself
    const { operator } = shiftedLaplacian(14, 0.5, true);
    expect(() =>
      new ConjugateGradientSolver(operator.n, { preconditioner: "ic0" }).factor(operator),
    ).toThrow();
  });

  test("block Jacobi on a matrix-free block operator matches a dense LU solve", () =>
    expectBlockJacobiMatchesDense((n, o) => new ConjugateGradientSolver(n, o)));

  test("block Jacobi is refused on a CSR matrix (it needs the block structure)", () => {
    const { m } = randomSpdBodyBlocks(1);
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
