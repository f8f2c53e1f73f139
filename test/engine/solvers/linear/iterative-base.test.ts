/**
 * iterative-base.ts, the Krylov solvers' plumbing: the CsrOperator view (product and
 * diagonal against a dense product written out), the default iteration settings, and
 * OperatorState's choice and rebuild of the preconditioner (counted through an operator
 * that records its diagonal() calls).
 */
import { describe, expect, test } from "vitest";
import { csrFromTriplets, csrToDense } from "../../../../src/engine/math/csr";
import {
  CsrOperator,
  DEFAULT_TOLERANCE,
  defaultMaxIterations,
  isCsrMatrix,
  iterationSettings,
  OperatorState,
} from "../../../../src/engine/solvers/linear/iterative-base";
import type { LinearOperator } from "../../../../src/engine/solvers/linear/linear-solver";
import { JacobiPreconditioner } from "../../../../src/engine/solvers/linear/preconditioners";
import { randomNonsymmetric, randomVector } from "./helpers";

describe("CsrOperator", () => {
  test("apply is A x, diagonal sums duplicate diagonal entries; non-square is refused", () => {
    const a = randomNonsymmetric(12, 4, 3);
    const op = new CsrOperator(a);
    expect(op.n).toBe(12);
    const x = randomVector(12, 4);
    const y = new Float64Array(12);
    op.apply(x, y);
    const d = csrToDense(a);
    for (let i = 0; i < 12; i++) {
      let s = 0;
      for (let j = 0; j < 12; j++) s += d[i * 12 + j] * x[j];
      expect(y[i]).toBeCloseTo(s, 14);
    }
    const dup = csrFromTriplets(2, 2, [0, 0, 1, 0], [0, 0, 1, 1], [1, 2, 5, 7]);
    const diag = new Float64Array(2).fill(9);
    new CsrOperator(dup).diagonal(diag);
    expect(Array.from(diag)).toEqual([3, 5]);
    expect(isCsrMatrix(a)).toBe(true);
    expect(isCsrMatrix(op)).toBe(false);
    expect(() => new CsrOperator(csrFromTriplets(2, 3, [0], [0], [1]))).toThrow(/square/);
  });
});

describe("iteration settings", () => {
  test("defaults: tolerance 1e-10, limit max(200, 3n); given values win", () => {
    expect(DEFAULT_TOLERANCE).toBe(1e-10);
    expect(defaultMaxIterations(10)).toBe(200);
    expect(defaultMaxIterations(1000)).toBe(3000);
    expect(iterationSettings({}, 100)).toEqual({ tolerance: 1e-10, maxIterations: 300 });
    expect(iterationSettings({ tolerance: 1e-4, maxIterations: 7 }, 100)).toEqual({
      tolerance: 1e-4,
      maxIterations: 7,
    });
  });
});

/** diag(1..n) as an operator that counts diagonal() calls, with a settable version. */
function countedDiagonal(n: number, version?: number) {
  const op = {
    n,
    calls: 0,
    diagonalVersion: version,
    apply(x: Float64Array, out: Float64Array) {
      for (let i = 0; i < n; i++) out[i] = (i + 1) * x[i];
    },
    diagonal(out: Float64Array) {
      op.calls++;
      for (let i = 0; i < n; i++) out[i] = i + 1;
    },
  };
  return op;
}

describe("OperatorState", () => {
  test("refuses a preconditioner its solver does not allow", () => {
    expect(() => new OperatorState("ic0", true, ["none", "jacobi"], "minres")).toThrow(
      /minres: preconditioner ic0 not supported/,
    );
  });

  test("Jacobi from the operator's diagonal (|a_ii| when absolute); set reports a new dimension", () => {
    const s = new OperatorState("jacobi", true, ["jacobi"], "t");
    const op = countedDiagonal(4);
    expect(s.set(op)).toBe(true);
    expect(s.set(countedDiagonal(4))).toBe(false);
    expect(s.precond).toBeInstanceOf(JacobiPreconditioner);
    const z = new Float64Array(4);
    s.precond.apply(Float64Array.of(1, 1, 1, 1), z);
    expect(Array.from(z)).toEqual([1, 1 / 2, 1 / 3, 1 / 4]);
    expect(s.set(countedDiagonal(6))).toBe(true);
    expect(s.n).toBe(6);
    expect(s.matrix).toBeNull();
  });

  test("an operator with a diagonalVersion is re-preconditioned only when the version changes", () => {
    const s = new OperatorState("jacobi", false, ["jacobi"], "t");
    const op = countedDiagonal(3, 1);
    s.set(op);
    s.set(op);
    s.set(op);
    expect(op.calls).toBe(1);
    op.diagonalVersion = 2;
    s.set(op);
    expect(op.calls).toBe(2);
    // without a version every set rebuilds
    const plain = countedDiagonal(3);
    s.set(plain);
    s.set(plain);
    expect(plain.calls).toBe(2);
  });

  test("a CsrMatrix is wrapped once; IC(0)/ILU(0) need one, block Jacobi needs blockDiagonal()", () => {
    const a = randomNonsymmetric(5, 3, 9);
    const s = new OperatorState("ilu0", false, ["ilu0"], "gmres");
    s.set(a);
    const wrapped = s.op;
    s.set(a);
    expect(s.op).toBe(wrapped);
    expect(s.matrix).toBe(a);
    const op: LinearOperator = countedDiagonal(5);
    expect(() => s.set(op)).toThrow(/gmres: ilu0 needs a CsrMatrix/);
    expect(() => new OperatorState("ic0", false, ["ic0"], "cg").set(op)).toThrow(
      /cg: ic0 needs a CsrMatrix/,
    );
    expect(() => new OperatorState("block-jacobi", false, ["block-jacobi"], "cg").set(op)).toThrow(
      /block-jacobi needs an operator with blockDiagonal/,
    );
  });
});
