/**
 * linear-solver.ts's runtime pieces: the MatrixType flags combine by bitwise AND (a solve
 * matrix is SPD only when every contributor is), and isIterative tells the Krylov solvers
 * (which take a tolerance and a matrix-free operator) from the direct ones.
 */
import { describe, expect, test } from "vitest";
import { createLinearSolver } from "../../../../src/engine/solvers/linear/index";
import { isIterative, MatrixType } from "../../../../src/engine/solvers/linear/linear-solver";
import { SOLVER_NAMES } from "./helpers";

describe("MatrixType", () => {
  test("SPD is SYMMETRIC and POSITIVE_DEFINITE; AND of contributors drops what one lacks", () => {
    expect(MatrixType.SPD).toBe(MatrixType.SYMMETRIC | MatrixType.POSITIVE_DEFINITE);
    expect(MatrixType.SPD & MatrixType.SYMMETRIC).toBe(MatrixType.SYMMETRIC);
    expect(MatrixType.SPD & MatrixType.POSITIVE_DEFINITE).toBe(MatrixType.POSITIVE_DEFINITE);
    expect(MatrixType.SYMMETRIC & MatrixType.POSITIVE_DEFINITE).toBe(MatrixType.GENERAL);
    expect(MatrixType.SPD & MatrixType.GENERAL).toBe(MatrixType.GENERAL);
  });
});

describe("isIterative", () => {
  test("true exactly for cg, minres and gmres", () => {
    for (const name of SOLVER_NAMES) {
      const s = createLinearSolver(name, MatrixType.SPD, 10);
      expect(isIterative(s), name).toBe(name === "cg" || name === "minres" || name === "gmres");
    }
  });
});
