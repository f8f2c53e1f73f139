/**
 * Compressed sparse rows (src/engine/math/csr.ts): triplets with duplicates summed, sorted
 * columns, the product against a dense matrix-vector product written out here, and the
 * dense copy.
 */
import { describe, expect, it } from "vitest";
import { csrFromTriplets, csrMultiply, csrToDense } from "../../../src/engine/math/csr";
import { mulberry32 } from "../../support/random";

describe("csr", () => {
  it("sums duplicate triplets, sorts each row's columns, multiplies as the dense matrix does", () => {
    const rng = mulberry32(7);
    const rows = 13;
    const cols = 9;
    const dense = new Float64Array(rows * cols);
    const ri: number[] = [];
    const ci: number[] = [];
    const vi: number[] = [];
    for (let k = 0; k < 80; k++) {
      const r = Math.floor(rng() * rows);
      const c = Math.floor(rng() * cols);
      const v = 2 * rng() - 1;
      ri.push(r);
      ci.push(c);
      vi.push(v);
      dense[r * cols + c] += v;
    }
    const a = csrFromTriplets(rows, cols, ri, ci, vi);
    expect(a.rowPtr[rows]).toBe(new Set(ri.map((r, k) => r * cols + ci[k])).size);
    for (let i = 0; i < rows; i++)
      for (let k = a.rowPtr[i] + 1; k < a.rowPtr[i + 1]; k++)
        expect(a.colIdx[k]).toBeGreaterThan(a.colIdx[k - 1]);
    const back = csrToDense(a);
    for (let k = 0; k < dense.length; k++) expect(back[k]).toBeCloseTo(dense[k], 14);
    const x = Float64Array.from({ length: cols }, () => rng());
    const y = new Float64Array(rows).fill(Number.NaN);
    csrMultiply(a, x, y);
    for (let i = 0; i < rows; i++) {
      let s = 0;
      for (let j = 0; j < cols; j++) s += dense[i * cols + j] * x[j];
      expect(y[i]).toBeCloseTo(s, 14);
    }
  });

  it("an empty row keeps its place and multiplies to zero", () => {
    const a = csrFromTriplets(3, 3, [0, 2], [1, 0], [4, 5]);
    expect(Array.from(a.rowPtr)).toEqual([0, 1, 1, 2]);
    const y = new Float64Array(3).fill(Number.NaN);
    csrMultiply(a, Float64Array.of(1, 2, 3), y);
    expect(Array.from(y)).toEqual([8, 0, 5]);
  });
});
