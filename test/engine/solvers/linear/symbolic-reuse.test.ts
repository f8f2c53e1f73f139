import { describe, expect, test } from "vitest";
import type { CsrMatrix } from "../../../../src/engine/math/csr";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { SparseLuSolver } from "../../../../src/engine/solvers/linear/sparse-lu";
import { mulberry32 } from "../../../support/random";
import {
  denseLuReference,
  randomNonsymmetric,
  randomSpd,
  randomVector,
  relativeError,
} from "./helpers";

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

describe("symbolic analysis is reused while the pattern is unchanged", () => {
  test("LDLᵀ: refactor with new values on the same CsrMatrix", () => {
    const n = 150;
    const a = randomSpd(n, 6, 1);
    const s = new SparseLdltSolver();
    s.factor(a);
    const perm = s.permutation;
    const etree = s.eliminationTree;
    const nnzL = s.nnzL;
    for (let step = 0; step < 4; step++) {
      newSymmetricValues(a, 100 + step);
      s.factor(a);
      const b = randomVector(n, 200 + step);
      const x = new Float64Array(n);
      expect(s.solve(b, x).converged).toBe(true);
      expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
    }
    expect(s.symbolicAnalyses).toBe(1);
    expect(s.numericFactorizations).toBe(5);
    // The ordering and elimination tree arrays are the very same objects.
    expect(s.permutation).toBe(perm);
    expect(s.eliminationTree).toBe(etree);
    expect(s.nnzL).toBe(nnzL);
  });

  test("LDLᵀ: a rebuilt matrix with an identical pattern is recognised; a new pattern is analysed", () => {
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

  test("LU: column ordering and storage reused across refactorizations", () => {
    const n = 120;
    const a = randomNonsymmetric(n, 5, 5, true);
    const s = new SparseLuSolver();
    s.factor(a);
    const q = s.columnPermutation;
    const growths = s.storageGrowths;
    const r = mulberry32(6);
    for (let step = 0; step < 3; step++) {
      // New values, same pattern (scaled and perturbed; stays nonsingular with
      // overwhelming probability and is checked against the reference anyway).
      for (let k = 0; k < a.values.length; k++) a.values[k] *= 0.5 + r();
      s.factor(a);
      const b = randomVector(n, 7 + step);
      const x = new Float64Array(n);
      expect(s.solve(b, x).converged).toBe(true);
      expect(relativeError(x, denseLuReference(a, b))).toBeLessThan(1e-10);
    }
    expect(s.symbolicAnalyses).toBe(1);
    expect(s.columnPermutation).toBe(q);
    expect(s.storageGrowths).toBe(growths);
  });
});
