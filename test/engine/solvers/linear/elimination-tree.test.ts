/**
 * elimination-tree.ts: the elimination tree and column counts of L (ldl_symbolic) against
 * a symbolic Cholesky done by brute force here (a dense boolean pattern eliminated column
 * by column: l_ik ≠ 0 iff a_ik ≠ 0 or l_ij ≠ 0 ≠ l_kj for some j < k), and the counting
 * sort of upper-triangle entries into columns.
 */
import { describe, expect, test } from "vitest";
import {
  eliminationTree,
  reachUpTree,
  sortByColumn,
} from "../../../../src/engine/solvers/linear/elimination-tree";
import { mulberry32 } from "../../../support/random";

/** Random symmetric pattern (dense boolean n×n, diagonal set). */
function randomPattern(n: number, density: number, seed: number): boolean[][] {
  const r = mulberry32(seed);
  const p = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => i === j));
  for (let i = 0; i < n; i++)
    for (let j = 0; j < i; j++)
      if (r() < density) {
        p[i][j] = true;
        p[j][i] = true;
      }
  return p;
}

/** Pattern of L by elimination; parent[k] = first row below k in column k, −1 if none. */
function bruteForceSymbolic(pattern: boolean[][]) {
  const n = pattern.length;
  const l = pattern.map((row) => row.slice());
  for (let k = 0; k < n; k++)
    for (let i = k + 1; i < n; i++)
      if (l[i][k]) for (let j = k + 1; j <= i; j++) if (l[j][k]) l[i][j] = true;
  const parent: number[] = [];
  const lnz: number[] = [];
  for (let k = 0; k < n; k++) {
    let first = -1;
    let count = 0;
    for (let i = n - 1; i > k; i--)
      if (l[i][k]) {
        first = i;
        count++;
      }
    parent.push(first);
    lnz.push(count);
  }
  return { parent, lnz, l };
}

/** Row lists of the strictly lower part (plus, to be ignored, the diagonal and upper part). */
function rowLists(pattern: boolean[][]) {
  const n = pattern.length;
  const ptr = new Int32Array(n + 1);
  const idx: number[] = [];
  for (let k = 0; k < n; k++) {
    for (let i = 0; i < n; i++) if (pattern[k][i]) idx.push(i);
    ptr[k + 1] = idx.length;
  }
  return { ptr, idx: Int32Array.from(idx) };
}

describe("eliminationTree", () => {
  test("parent and column counts equal the brute-force symbolic Cholesky", () => {
    for (let trial = 0; trial < 30; trial++) {
      const n = 1 + (trial % 25);
      const pattern = randomPattern(n, [0.05, 0.15, 0.4][trial % 3], 100 + trial);
      const { ptr, idx } = rowLists(pattern);
      const t = eliminationTree(n, ptr, idx);
      const ref = bruteForceSymbolic(pattern);
      expect(Array.from(t.parent), `trial ${trial}`).toEqual(ref.parent);
      expect(Array.from(t.lnz), `trial ${trial}`).toEqual(ref.lnz);
      // column pointers are the prefix sums of the counts
      for (let k = 0; k < n; k++) expect(t.lp[k + 1] - t.lp[k]).toBe(ref.lnz[k]);
      expect(t.lp[0]).toBe(0);
    }
  });

  test("an arrow matrix: the dense last row makes a chain of fill; the reversed arrow none", () => {
    // last row full: every column k has l_{n−1,k} ≠ 0 only → parent n−1, one entry each
    const n = 6;
    const arrow = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => i === j || i === n - 1 || j === n - 1),
    );
    let { ptr, idx } = rowLists(arrow);
    let t = eliminationTree(n, ptr, idx);
    expect(Array.from(t.parent)).toEqual([5, 5, 5, 5, 5, -1]);
    expect(Array.from(t.lnz)).toEqual([1, 1, 1, 1, 1, 0]);
    // first row full: eliminating 0 first fills everything, a path 0 → 1 → … → n−1
    const reversed = Array.from({ length: n }, (_, i) =>
      Array.from({ length: n }, (_, j) => i === j || i === 0 || j === 0),
    );
    ({ ptr, idx } = rowLists(reversed));
    t = eliminationTree(n, ptr, idx);
    expect(Array.from(t.parent)).toEqual([1, 2, 3, 4, 5, -1]);
    expect(Array.from(t.lnz)).toEqual([5, 4, 3, 2, 1, 0]);
    expect(t.lp[n]).toBe(15);
  });
});

describe("reachUpTree", () => {
  test("row k of L from the walks of its entries: the brute-force pattern, descendants before ancestors", () => {
    for (let trial = 0; trial < 20; trial++) {
      const n = 2 + (trial % 20);
      const pattern = randomPattern(n, [0.1, 0.3][trial % 2], 300 + trial);
      const { ptr, idx } = rowLists(pattern);
      const t = eliminationTree(n, ptr, idx);
      const ref = bruteForceSymbolic(pattern);
      const flag = new Int32Array(n).fill(-1);
      const patt = new Int32Array(n);
      for (let k = 0; k < n; k++) {
        flag[k] = k;
        let top = n;
        for (let p = ptr[k]; p < ptr[k + 1]; p++)
          if (idx[p] < k) top = reachUpTree(idx[p], k, t.parent, flag, patt, top);
        const row = Array.from(patt.subarray(top, n));
        const want = [];
        for (let j = 0; j < k; j++) if (ref.l[k][j]) want.push(j);
        expect(
          [...row].sort((a, b) => a - b),
          `trial ${trial} row ${k}`,
        ).toEqual(want);
        // a node's parent, when in the row, comes after it (ldl_numeric's order)
        row.forEach((j, at) => {
          const up = row.indexOf(t.parent[j]);
          if (up >= 0) expect(up).toBeGreaterThan(at);
        });
      }
    }
  });
});

describe("sortByColumn", () => {
  test("a counting sort into columns, stable, sources carried along", () => {
    // entries (row ≤ col) in arbitrary order: (0,2) (1,1) (0,0) (1,2) (0,1) (2,2)
    const rowOf = Int32Array.of(0, 1, 0, 1, 0, 2);
    const colOf = Int32Array.of(2, 1, 0, 2, 1, 2);
    const s1 = Int32Array.of(10, 11, 12, 13, 14, 15);
    const s2 = Int32Array.of(-1, 21, -1, 23, 24, -1);
    const n = 3;
    const cp = new Int32Array(n + 1);
    for (const c of colOf) cp[c + 1]++;
    const u = sortByColumn(n, 6, rowOf, colOf, s1, s2, cp);
    expect(Array.from(cp)).toEqual([0, 1, 3, 6]);
    expect(Array.from(u.ci)).toEqual([0, 1, 0, 0, 1, 2]);
    expect(Array.from(u.src1)).toEqual([12, 11, 14, 10, 13, 15]);
    expect(Array.from(u.src2)).toEqual([-1, 21, 24, -1, 23, -1]);
  });
});
