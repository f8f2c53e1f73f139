/**
 * Block matrices for the tests of the block LDLᵀ and of CG preconditioned by it: random
 * sparse SPD block matrices and a grid Laplacian, with their dense forms (ml-matrix).
 */
import { Matrix } from "ml-matrix";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { mulberry32 } from "../../../support/random";

/**
 * A symmetric block matrix over `pairs` (block pairs i < j) filled from a dense symmetric
 * matrix: every pair reserved both ways unless `upperOnly` (then only (i, j), i < j).
 */
export function blockMatrix(
  nb: number,
  pairs: [number, number][],
  dense: Matrix,
  upperOnly = false,
): SparseBlockMatrix {
  const m = new SparseBlockMatrix(new Array(nb).fill(3));
  for (const [i, j] of pairs) {
    m.addBlock(i, j);
    if (!upperOnly) m.addBlock(j, i);
  }
  m.finalize();
  fill(m, nb, pairs, dense, upperOnly);
  return m;
}

export function fill(
  m: SparseBlockMatrix,
  nb: number,
  pairs: [number, number][],
  dense: Matrix,
  upperOnly = false,
): void {
  m.clear();
  const put = (bi: number, bj: number) => {
    for (let r = 0; r < 3; r++)
      for (let c = 0; c < 3; c++) m.addEntry(bi, bj, r, c, dense.get(3 * bi + r, 3 * bj + c));
  };
  for (let b = 0; b < nb; b++) put(b, b);
  for (const [i, j] of pairs) {
    put(i, j);
    if (!upperOnly) put(j, i);
  }
}

/**
 * Random sparse pattern: each block row couples to `perRow` random others; the dense
 * matrix holds G Gᵀ-like SPD blocks: symmetric random couplings and diagonal blocks made
 * dominant (Σ of the row's coupling norms, plus `shift` on the diagonal).
 */
export function randomSpdBlocks(
  nb: number,
  perRow: number,
  seed: number,
  shift = 0.1,
): { pairs: [number, number][]; dense: Matrix } {
  const r = mulberry32(seed);
  const n = 3 * nb;
  const dense = Matrix.zeros(n, n);
  const seen = new Set<number>();
  const pairs: [number, number][] = [];
  const rowAbs = new Float64Array(n);
  for (let i = 0; i < nb; i++)
    for (let e = 0; e < perRow; e++) {
      const j = Math.floor(r() * nb);
      const a = Math.min(i, j);
      const b = Math.max(i, j);
      if (a === b || seen.has(a * nb + b)) continue;
      seen.add(a * nb + b);
      pairs.push([a, b]);
      for (let p = 0; p < 3; p++)
        for (let q = 0; q < 3; q++) {
          const v = 2 * r() - 1;
          dense.set(3 * a + p, 3 * b + q, v);
          dense.set(3 * b + q, 3 * a + p, v);
          rowAbs[3 * a + p] += Math.abs(v);
          rowAbs[3 * b + q] += Math.abs(v);
        }
    }
  for (let b = 0; b < nb; b++)
    for (let p = 0; p < 3; p++) {
      for (let q = 0; q < p; q++) {
        const v = 0.1 * (2 * r() - 1);
        dense.set(3 * b + p, 3 * b + q, v);
        dense.set(3 * b + q, 3 * b + p, v);
        rowAbs[3 * b + p] += Math.abs(v);
        rowAbs[3 * b + q] += Math.abs(v);
      }
    }
  for (let i = 0; i < n; i++) dense.set(i, i, rowAbs[i] + shift + r());
  return { pairs, dense };
}

/**
 * The 3-d elasticity-like operator of a k × k grid of nodes with 8 neighbours each (a
 * cloth's structural and shear springs): block (i, j) = −e eᵀ − 0.1 I for each edge (e the
 * unit edge direction with a small out-of-plane tilt), diagonal blocks minus the sum of a
 * row's off-diagonal blocks plus `mass` I: a graph Laplacian of 3×3 blocks, SPD.
 */
export function gridLaplacian(
  k: number,
  mass: number,
): { pairs: [number, number][]; dense: Matrix } {
  const nb = k * k;
  const dense = Matrix.zeros(3 * nb, 3 * nb);
  const pairs: [number, number][] = [];
  const edge = (a: number, b: number, dx: number, dy: number) => {
    pairs.push([Math.min(a, b), Math.max(a, b)]);
    const len = Math.hypot(dx, dy, 0.1);
    const e = [dx / len, dy / len, 0.1 / len];
    for (let p = 0; p < 3; p++)
      for (let q = 0; q < 3; q++) {
        const v = e[p] * e[q] + (p === q ? 0.1 : 0);
        dense.set(3 * a + p, 3 * b + q, dense.get(3 * a + p, 3 * b + q) - v);
        dense.set(3 * b + p, 3 * a + q, dense.get(3 * b + p, 3 * a + q) - v);
        dense.set(3 * a + p, 3 * a + q, dense.get(3 * a + p, 3 * a + q) + v);
        dense.set(3 * b + p, 3 * b + q, dense.get(3 * b + p, 3 * b + q) + v);
      }
  };
  for (let j = 0; j < k; j++)
    for (let i = 0; i < k; i++) {
      const a = j * k + i;
      if (i + 1 < k) edge(a, a + 1, 1, 0);
      if (j + 1 < k) edge(a, a + k, 0, 1);
      if (i + 1 < k && j + 1 < k) edge(a, a + k + 1, 1, 1);
      if (i > 0 && j + 1 < k) edge(a, a + k - 1, -1, 1);
    }
  for (let i = 0; i < 3 * nb; i++) dense.set(i, i, dense.get(i, i) + mass);
  return { pairs, dense };
}
