/**
 * The linear-solver factory (index.ts): the `auto` rule by dimension and matrix type, and
 * every named solver built by it solving an SPD system against ml-matrix dense LU.
 */
import { describe, expect, test } from "vitest";
import {
  AUTO_DENSE_MAX,
  createLinearSolver,
  resolveLinearSolverName,
} from "../../../../src/engine/solvers/linear/index";
import {
  type LinearSolverName,
  MatrixType,
} from "../../../../src/engine/solvers/linear/linear-solver";
import {
  denseLuReference,
  randomKkt,
  randomSpd,
  randomVector,
  relativeError,
  SOLVER_NAMES,
} from "./helpers";

describe("createLinearSolver", () => {
  test("auto rule: n ≤ 60 dense (Cholesky iff SPD), symmetric → LDLᵀ, else LU", () => {
    expect(AUTO_DENSE_MAX).toBe(60);
    const cases: [number, number, LinearSolverName][] = [
      [MatrixType.SPD, 60, "dense-cholesky"],
      [MatrixType.SYMMETRIC, 60, "dense-lu"],
      [MatrixType.POSITIVE_DEFINITE, 10, "dense-lu"],
      [MatrixType.GENERAL, 1, "dense-lu"],
      [MatrixType.SPD, 61, "sparse-ldlt"],
      [MatrixType.SYMMETRIC, 500, "sparse-ldlt"],
      [MatrixType.POSITIVE_DEFINITE, 500, "sparse-lu"],
      [MatrixType.GENERAL, 61, "sparse-lu"],
    ];
    for (const [type, n, expected] of cases) {
      expect(resolveLinearSolverName("auto", type, n), `${type} ${n}`).toBe(expected);
      expect(createLinearSolver("auto", type, n).name).toBe(expected);
    }
    expect(resolveLinearSolverName("gmres", MatrixType.SPD, 5)).toBe("gmres");
  });

  test("every named solver solves an SPD system through the factory", () => {
    const n = 90;
    const a = randomSpd(n, 6, 3);
    const b = randomVector(n, 4);
    const ref = denseLuReference(a, b);
    for (const name of ["auto", ...SOLVER_NAMES] as const) {
      const s = createLinearSolver(name, MatrixType.SPD, n, { tolerance: 1e-13 });
      s.factor(a);
      const x = new Float64Array(n);
      expect(s.solve(b, x).converged, name).toBe(true);
      expect(relativeError(x, ref), name).toBeLessThan(1e-10);
    }
  });

  test("auto on a large symmetric KKT matrix with regularization", () => {
    const a = randomKkt(120, 40, 5);
    const b = randomVector(160, 6);
    const s = createLinearSolver("auto", MatrixType.SYMMETRIC, 160, { regularization: 1e-9 });
    expect(s.name).toBe("sparse-ldlt");
    s.factor(a);
    const x = new Float64Array(160);
    expect(s.solve(b, x).converged).toBe(true);
    expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
  });
});
