/**
 * pattern.ts: the pattern cache (by content, not identity), the binary search for an
 * entry, and the dot product and overflow-safe norm against sums written out.
 */
import { describe, expect, test } from "vitest";
import { type CsrMatrix, csrFromTriplets } from "../../../../src/engine/math/csr";
import { csrFind, dot, norm2, PatternCache } from "../../../../src/engine/solvers/linear/pattern";
import { randomNonsymmetric, randomSpd } from "./helpers";

describe("PatternCache", () => {
  test("matches a rebuilt matrix with the same pattern, not a changed one, not an edited one", () => {
    const a = randomSpd(30, 5, 1);
    const cache = new PatternCache();
    expect(cache.matches(a)).toBe(false);
    cache.remember(a);
    expect(cache.matches(a)).toBe(true);
    const copy: CsrMatrix = {
      ...a,
      rowPtr: a.rowPtr.slice(),
      colIdx: a.colIdx.slice(),
      values: a.values.map((v) => -v),
    };
    expect(cache.matches(copy)).toBe(true);
    // an in-place edit of the structure is seen (the cache holds a copy)
    copy.colIdx[3] = (copy.colIdx[3] + 1) % 30;
    expect(cache.matches(copy)).toBe(false);
    expect(cache.matches(a)).toBe(true);
    expect(cache.matches(randomSpd(30, 5, 2))).toBe(false);
    expect(cache.matches(randomSpd(31, 5, 1))).toBe(false);
    // same rows and nonzeros, different column count
    expect(cache.matches({ ...a, cols: 31 })).toBe(false);
  });
});

describe("csrFind", () => {
  test("finds every stored entry and returns −1 for every other one", () => {
    const a = randomNonsymmetric(25, 4, 3);
    for (let i = 0; i < a.rows; i++) {
      const stored = new Map<number, number>();
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) stored.set(a.colIdx[k], k);
      for (let j = 0; j < a.cols; j++) expect(csrFind(a, i, j)).toBe(stored.get(j) ?? -1);
    }
    const empty = csrFromTriplets(2, 2, [1], [1], [1]);
    expect(csrFind(empty, 0, 0)).toBe(-1);
  });
});

describe("dot and norm2", () => {
  test("over the first n entries; the norm avoids overflow and underflow", () => {
    const x = Float64Array.of(1, 2, 3, 100);
    const y = Float64Array.of(4, -5, 6, 100);
    expect(dot(x, y, 3)).toBe(4 - 10 + 18);
    expect(norm2(Float64Array.of(3, 4, 99), 2)).toBe(5);
    expect(norm2(Float64Array.of(3e200, 4e200), 2) / 5e200).toBeCloseTo(1, 14); // (3e200)² overflows
    expect(norm2(Float64Array.of(3e-200, 4e-200), 2) / 5e-200).toBeCloseTo(1, 14);
    expect(norm2(new Float64Array(3), 3)).toBe(0);
    expect(norm2(Float64Array.of(1, Number.POSITIVE_INFINITY), 2)).toBe(Number.POSITIVE_INFINITY);
  });
});
