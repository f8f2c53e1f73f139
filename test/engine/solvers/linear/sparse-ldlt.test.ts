/**
 * SparseLdltSolver against ml-matrix dense LU: SPD and KKT systems under every ordering,
 * the inertia its pivots show (Sylvester), regularization with iterative refinement,
 * zero pivots reported, badly scaled systems, triangle-only storage, and the reuse of
 * the symbolic analysis while the pattern is unchanged.
 */
import { describe, expect, test } from "vitest";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { mulberry32 } from "../../../support/random";
import {
  denseLuReference,
  expectBadlyScaledSolved,
  expectRefactoredSolve,
  expectScaledSingularRefused,
  expectTriangleStorageSolved,
  randomKkt,
  randomSpd,
  randomVector,
  relativeError,
  relativeResidual,
  solveWith,
  TEST_SIZES,
} from "./helpers";

describe("SparseLdltSolver against ml-matrix dense LU", () => {
  for (const n of TEST_SIZES) {
    test(`random SPD, n = ${n}`, () => {
      const a = randomSpd(n, 6, 11 * n);
      const b = randomVector(n, 3 * n);
      const ref = denseLuReference(a, b);
      for (const ordering of ["amd", "rcm", "natural"] as const) {
        const x = solveWith(new SparseLdltSolver({ ordering }), a, b);
        expect(relativeError(x, ref), ordering).toBeLessThan(1e-10);
      }
      // SPD: every LDLᵀ pivot is positive (Sylvester's law of inertia).
      const ldl = new SparseLdltSolver();
      ldl.factor(a);
      expect(ldl.positivePivots).toBe(n);
      expect(ldl.negativePivots).toBe(0);
    });

    test(`symmetric indefinite KKT [M Jᵀ; J 0], n = ${n} + ${Math.ceil(n / 3)}`, () => {
      const nq = n;
      const nc = Math.ceil(n / 3);
      const a = randomKkt(nq, nc, 23 * n);
      const b = randomVector(nq + nc, 7 * n);
      const ref = denseLuReference(a, b);
      const solvers: [string, SparseLdltSolver][] = [
        ["natural (coordinates first)", new SparseLdltSolver({ ordering: "natural" })],
        ["amd regularized", new SparseLdltSolver({ ordering: "amd", regularization: 1e-8 })],
        ["rcm regularized", new SparseLdltSolver({ ordering: "rcm", regularization: 1e-8 })],
      ];
      for (const [label, s] of solvers) {
        const x = solveWith(s, a, b);
        expect(relativeError(x, ref), label).toBeLessThan(1e-10);
      }
      // Inertia of a KKT matrix with M SPD and J of full row rank is (nq, nc, 0)
      // (Gould 1985); D of an unpivoted LDLᵀ must show it.
      const ldl = new SparseLdltSolver({ ordering: "natural" });
      ldl.factor(a);
      expect([ldl.positivePivots, ldl.negativePivots]).toEqual([nq, nc]);
    });
  }

  test("regularized LDLᵀ: refinement recovers the solution of A, not of A + δS", () => {
    const a = randomKkt(80, 30, 5, true); // explicit zero diagonal stored
    const b = randomVector(110, 6);
    const ref = denseLuReference(a, b);
    for (const delta of [1e-10, 1e-8, 1e-6]) {
      const s = new SparseLdltSolver({ regularization: delta, refinementSteps: 10 });
      const x = solveWith(s, a, b);
      expect(relativeError(x, ref), `δ = ${delta}`).toBeLessThan(1e-10);
      // Without refinement the error is of the order of the perturbation δ·‖A⁻¹‖.
      const raw = new SparseLdltSolver({ regularization: delta, refinementSteps: 0 });
      const x0 = solveWith(raw, a, b);
      expect(relativeError(x0, ref)).toBeGreaterThan(delta * 1e-3);
    }
  });

  test("with refinement, solve reports the steps taken and the measured ‖b − A x‖/‖b‖", () => {
    const a = randomKkt(60, 20, 9, true);
    const b = randomVector(80, 10);
    const s = new SparseLdltSolver({ regularization: 1e-6, refinementSteps: 8 });
    s.factor(a);
    const x = new Float64Array(80);
    const info = s.solve(b, x);
    expect(info.converged).toBe(true);
    expect(info.iterations).toBeGreaterThanOrEqual(1);
    expect(info.iterations).toBeLessThanOrEqual(8);
    const measured = relativeResidual(a, x, b);
    expect(Math.abs(info.residual - measured)).toBeLessThan(1e-15 + 1e-6 * measured);
    // without regularization nothing is refined: 0 steps, residual not measured (0)
    const plain = new SparseLdltSolver({ ordering: "natural" });
    plain.factor(a);
    expect(plain.solve(b, x)).toEqual({ iterations: 0, residual: 0, converged: true });
  });

  test("explicit per-row regularization signs", () => {
    const nq = 40;
    const nc = 15;
    const a = randomKkt(nq, nc, 77);
    const signs = Array.from({ length: nq + nc }, (_, i) => (i < nq ? 1 : -1));
    const b = randomVector(nq + nc, 78);
    const s = new SparseLdltSolver({ regularization: 1e-8, regularizationSigns: signs });
    const x = solveWith(s, a, b);
    expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
  });

  test("zero pivots are reported as converged = false", () => {
    // [0 1; 1 0] in natural order: d_0 = 0.
    const swap = csrFromTriplets(2, 2, [0, 1], [1, 0], [1, 1]);
    const b = Float64Array.of(1, 2);
    const x = new Float64Array(2);
    const ldl = new SparseLdltSolver({ ordering: "natural" });
    ldl.factor(swap);
    expect(ldl.solve(b, x).converged).toBe(false);
    expect(ldl.zeroPivot).toBe(0);
    expect(Number.isNaN(x[0])).toBe(true);
    // Symmetric singular: [1 1; 1 1].
    const ones = csrFromTriplets(2, 2, [0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 1]);
    const ldl2 = new SparseLdltSolver();
    ldl2.factor(ones);
    expect(ldl2.solve(b, x).converged).toBe(false);
  });

  test("badly scaled systems (D A D, D from 1e-6 to 1e6) are solved, not rejected", () => {
    expectBadlyScaledSolved(() => new SparseLdltSolver());
    // A scaled singular matrix is still recognised: D [1 1; 1 1] D.
    expectScaledSingularRefused(() => new SparseLdltSolver());
  });

  test("upper-only, lower-only or full storage of the symmetric matrix", () =>
    expectTriangleStorageSolved(() => new SparseLdltSolver()));
});

/** Same pattern, new values: symmetric perturbation keeping diagonal dominance. */
function newSymmetricValues(a: CsrMatrix, seed: number): void {
  const r = mulberry32(seed);
  const v = a.values;
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) {
      const j = a.colIdx[k];
      if (j < i) continue;
      const nv = j === i ? 0 : 2 * r() - 1;
      v[k] = nv;
      if (j !== i) {
        // mirror entry (j, i)
        for (let q = a.rowPtr[j]; q < a.rowPtr[j + 1]; q++) if (a.colIdx[q] === i) v[q] = nv;
      }
    }
  for (let i = 0; i < a.rows; i++) {
    let s = 0;
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) if (a.colIdx[k] !== i) s += Math.abs(v[k]);
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) if (a.colIdx[k] === i) v[k] = 1.1 * s + 0.2;
  }
}

describe("SparseLdltSolver reuses its symbolic analysis while the pattern is unchanged", () => {
  test("refactor with new values on the same CsrMatrix", () => {
    const n = 150;
    const a = randomSpd(n, 6, 1);
    const s = new SparseLdltSolver();
    s.factor(a);
    const perm = s.permutation;
    const etree = s.eliminationTree;
    const nnzL = s.nnzL;
    for (let step = 0; step < 4; step++) {
      newSymmetricValues(a, 100 + step);
      expectRefactoredSolve(s, a, 200 + step);
    }
    expect(s.symbolicAnalyses).toBe(1);
    expect(s.numericFactorizations).toBe(5);
    // The ordering and elimination tree arrays are the very same objects.
    expect(s.permutation).toBe(perm);
    expect(s.eliminationTree).toBe(etree);
    expect(s.nnzL).toBe(nnzL);
  });

  test("a rebuilt matrix with an identical pattern is recognised; a new pattern is analysed", () => {
    const n = 80;
    const a = randomSpd(n, 6, 2);
    const s = new SparseLdltSolver();
    s.factor(a);
    const copy: CsrMatrix = {
      rows: n,
      cols: n,
      rowPtr: a.rowPtr.slice(),
      colIdx: a.colIdx.slice(),
      values: a.values.map((v) => 2 * v),
    };
    s.factor(copy);
    expect(s.symbolicAnalyses).toBe(1);
    const b = randomVector(n, 3);
    const x = new Float64Array(n);
    s.solve(b, x);
    expect(relativeError(x, denseLuReference(copy, b))).toBeLessThan(1e-10);

    const other = randomSpd(n, 6, 4);
    s.factor(other);
    expect(s.symbolicAnalyses).toBe(2);
    s.solve(b, x);
    expect(relativeError(x, denseLuReference(other, b))).toBeLessThan(1e-10);
  });
});
