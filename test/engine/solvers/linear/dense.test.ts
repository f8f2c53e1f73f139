/**
 * dense.ts: CSR → dense copies (duplicates summed; the symmetric reading that averages or
 * mirrors triangles), the scale-invariant zero-pivot test, and the triangular
 * substitutions checked against products written out here.
 */
import { describe, expect, test } from "vitest";
import { csrFromTriplets } from "../../../../src/engine/math/csr";
import {
  csrToDenseInto,
  isZeroPivot,
  symmetricDenseInto,
  unitLowerSolveInPlace,
  upperSolveInPlace,
} from "../../../../src/engine/solvers/linear/dense";
import { mulberry32 } from "../../../support/random";

describe("csrToDenseInto", () => {
  test("sums duplicate entries, zeroes the rest (also a larger, dirty buffer's first rows·cols)", () => {
    const a = csrFromTriplets(2, 3, [0, 0, 1, 1], [2, 2, 0, 1], [1, 2, 3, 4]);
    const out = new Float64Array(8).fill(9);
    csrToDenseInto(a, out);
    expect(Array.from(out)).toEqual([0, 0, 3, 3, 4, 0, 9, 9]);
  });
});

describe("symmetricDenseInto", () => {
  test("both triangles stored: their mean; one stored: mirrored; exactly symmetric", () => {
    // (0,1) = 2 and (1,0) = 4 → 3; (0,2) only above → mirrored; (2,1) only below → mirrored
    const a = csrFromTriplets(
      3,
      3,
      [0, 0, 1, 0, 2, 2, 1],
      [0, 1, 0, 2, 1, 2, 1],
      [1, 2, 4, 5, 6, 7, 8],
    );
    const out = new Float64Array(9);
    symmetricDenseInto(a, out, new Uint8Array(9));
    expect(Array.from(out)).toEqual([1, 3, 5, 3, 8, 6, 5, 6, 7]);
  });
});

describe("isZeroPivot", () => {
  test("rounding-level pivots are zero, whatever the scale; NaN is zero", () => {
    for (const scale of [1e-12, 1, 1e12]) {
      expect(isZeroPivot(0, scale, 1)).toBe(true);
      // |pivot| ≤ terms·ε·scale
      expect(isZeroPivot(3 * Number.EPSILON * scale, scale, 3)).toBe(true);
      expect(isZeroPivot(-3 * Number.EPSILON * scale, scale, 3)).toBe(true);
      expect(isZeroPivot(4 * Number.EPSILON * scale, scale, 3)).toBe(false);
      expect(isZeroPivot(1e-8 * scale, scale, 10)).toBe(false);
    }
    expect(isZeroPivot(Number.NaN, 1, 1)).toBe(true);
  });
});

describe("triangular substitutions on a packed LU", () => {
  test("unitLowerSolveInPlace and upperSolveInPlace invert L and U (products written out)", () => {
    const n = 7;
    const r = mulberry32(3);
    const lu = Float64Array.from({ length: n * n }, () => 2 * r() - 1);
    for (let i = 0; i < n; i++) lu[i * n + i] = 2 + r(); // U's diagonal away from 0
    const x = Float64Array.from({ length: n }, () => 2 * r() - 1);
    // y = L x with L unit lower (strict lower part of lu)
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      y[i] = x[i];
      for (let j = 0; j < i; j++) y[i] += lu[i * n + j] * x[j];
    }
    unitLowerSolveInPlace(lu, n, y);
    for (let i = 0; i < n; i++) expect(y[i]).toBeCloseTo(x[i], 13);
    // w = U x with U the upper part, diagonal included
    const w = new Float64Array(n);
    for (let i = 0; i < n; i++) for (let j = i; j < n; j++) w[i] += lu[i * n + j] * x[j];
    upperSolveInPlace(lu, n, w);
    for (let i = 0; i < n; i++) expect(w[i]).toBeCloseTo(x[i], 13);
  });
});
