import { describe, expect, test } from "vitest";
import type { CsrMatrix } from "../../../../src/engine/math/csr";
import {
  type AdjacencyGraph,
  amdOrder,
  ataPattern,
  isPermutation,
  naturalOrder,
  rcmOrder,
  symmetricPattern,
} from "../../../../src/engine/solvers/linear/ordering";
import { SparseLdltSolver } from "../../../../src/engine/solvers/linear/sparse-ldlt";
import { mulberry32 } from "../../../support/random";
import { randomNonsymmetric, randomSpd, Triplets } from "./helpers";

/** 5-point Laplacian on a k×k grid. */
function gridLaplacian(k: number): CsrMatrix {
  const t = new Triplets();
  const id = (i: number, j: number) => i * k + j;
  for (let i = 0; i < k; i++)
    for (let j = 0; j < k; j++) {
      t.add(id(i, j), id(i, j), 4);
      if (i > 0) t.add(id(i, j), id(i - 1, j), -1);
      if (i < k - 1) t.add(id(i, j), id(i + 1, j), -1);
      if (j > 0) t.add(id(i, j), id(i, j - 1), -1);
      if (j < k - 1) t.add(id(i, j), id(i, j + 1), -1);
    }
  return t.toCsr(k * k, k * k);
}

/** Neighbour sets of the pattern of A + Aᵀ (no diagonal), brute force. */
function adjacencySets(a: CsrMatrix): Set<number>[] {
  const adj = Array.from({ length: a.rows }, () => new Set<number>());
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++) {
      const j = a.colIdx[k];
      if (j !== i) {
        adj[i].add(j);
        adj[j].add(i);
      }
    }
  return adj;
}

/**
 * nnz of the strict lower Cholesky factor of P A Pᵀ by simulating elimination on the
 * graph (Parter / Rose): eliminating v turns its uneliminated neighbours into a clique.
 */
function choleskyFill(a: CsrMatrix, perm: Int32Array): number {
  const n = a.rows;
  const adj = adjacencySets(a);
  const done = new Uint8Array(n);
  let nnz = 0;
  for (let k = 0; k < n; k++) {
    const v = perm[k];
    const nb = [...adj[v]].filter((u) => !done[u]);
    nnz += nb.length;
    for (const u of nb) for (const w of nb) if (u !== w) adj[u].add(w);
    done[v] = 1;
  }
  return nnz;
}

/** Exact minimum degree ordering (elimination graph, lowest index on ties). */
function exactMinimumDegree(a: CsrMatrix): Int32Array {
  const n = a.rows;
  const adj = adjacencySets(a);
  const alive = new Uint8Array(n).fill(1);
  const perm = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    let p = -1;
    for (let i = 0; i < n; i++) if (alive[i] && (p < 0 || adj[i].size < adj[p].size)) p = i;
    const nb = [...adj[p]];
    for (const u of nb) {
      adj[u].delete(p);
      for (const w of nb) if (u !== w) adj[u].add(w);
    }
    alive[p] = 0;
    perm[k] = p;
  }
  return perm;
}

function bandwidth(a: CsrMatrix, perm: Int32Array): number {
  const pinv = new Int32Array(perm.length);
  perm.forEach((v, k) => {
    pinv[v] = k;
  });
  let bw = 0;
  for (let i = 0; i < a.rows; i++)
    for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
      bw = Math.max(bw, Math.abs(pinv[i] - pinv[a.colIdx[k]]));
  return bw;
}

function graphSets(g: AdjacencyGraph): Set<number>[] {
  return Array.from({ length: g.n }, (_, i) => new Set(g.idx.subarray(g.ptr[i], g.ptr[i + 1])));
}

describe("fill-reducing orderings", () => {
  test("AMD reduces fill versus natural ordering on a 2-D grid Laplacian", () => {
    for (const k of [10, 30]) {
      const a = gridLaplacian(k);
      const amd = amdOrder(symmetricPattern(a));
      expect(isPermutation(amd, k * k)).toBe(true);
      const fillAmd = choleskyFill(a, amd);
      const fillNat = choleskyFill(a, naturalOrder(k * k));
      // Natural (banded) ordering fills the whole band: about n·k entries.
      expect(fillAmd).toBeLessThan(fillNat);
      if (k === 30) expect(fillAmd).toBeLessThan(0.45 * fillNat);
      // The LDLᵀ symbolic analysis (etree + column counts) predicts the same nnz(L).
      for (const [ordering, fill] of [
        ["amd", fillAmd],
        ["natural", fillNat],
      ] as const) {
        const s = new SparseLdltSolver({ ordering });
        s.factor(a);
        expect(s.nnzL, ordering).toBe(fill);
      }
    }
  });

  test("AMD fill is close to exact minimum degree", () => {
    for (const a of [gridLaplacian(20), randomSpd(300, 6, 1), randomSpd(400, 3, 2)]) {
      const fillAmd = choleskyFill(a, amdOrder(symmetricPattern(a)));
      const fillMd = choleskyFill(a, exactMinimumDegree(a));
      expect(fillAmd).toBeLessThan(1.15 * fillMd);
    }
  });

  test("AMD handles dense rows, disconnected parts, isolated nodes and n = 0", () => {
    // Arrowhead: node 0 couples to every node. Natural order fills completely; AMD
    // removes the dense row, orders it last and creates no fill at all.
    const n = 400;
    const t = new Triplets();
    for (let i = 0; i < n; i++) t.add(i, i, 10);
    for (let i = 1; i < n; i++) {
      t.add(0, i, 1);
      t.add(i, 0, 1);
    }
    const arrow = t.toCsr(n, n);
    const p = amdOrder(symmetricPattern(arrow));
    expect(isPermutation(p, n)).toBe(true);
    expect(p[n - 1]).toBe(0);
    expect(choleskyFill(arrow, p)).toBe(n - 1);
    // With node 0 first, eliminating it makes the rest a clique: L is full, n(n−1)/2.
    const natural = new SparseLdltSolver({ ordering: "natural" });
    natural.factor(arrow);
    expect(natural.nnzL).toBe((n * (n - 1)) / 2);
    const viaAmd = new SparseLdltSolver({ ordering: "amd" });
    viaAmd.factor(arrow);
    expect(viaAmd.nnzL).toBe(n - 1);

    // Two grids side by side plus isolated nodes.
    const g1 = gridLaplacian(8);
    const t2 = new Triplets();
    for (let i = 0; i < 64; i++)
      for (let k = g1.rowPtr[i]; k < g1.rowPtr[i + 1]; k++) {
        t2.add(i, g1.colIdx[k], g1.values[k]);
        t2.add(64 + i, 64 + g1.colIdx[k], g1.values[k]);
      }
    for (let i = 128; i < 135; i++) t2.add(i, i, 1);
    const two = t2.toCsr(135, 135);
    for (const order of [amdOrder(symmetricPattern(two)), rcmOrder(symmetricPattern(two))])
      expect(isPermutation(order, 135)).toBe(true);

    expect(amdOrder({ n: 0, ptr: new Int32Array(1), idx: new Int32Array(0) }).length).toBe(0);
    expect(rcmOrder({ n: 0, ptr: new Int32Array(1), idx: new Int32Array(0) }).length).toBe(0);
  });

  test("RCM restores a small bandwidth on a randomly numbered grid", () => {
    const k = 20;
    const a = gridLaplacian(k);
    // Random symmetric renumbering of the grid.
    const r = mulberry32(9);
    const shuffle = Array.from({ length: k * k }, (_, i) => i);
    for (let i = shuffle.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [shuffle[i], shuffle[j]] = [shuffle[j], shuffle[i]];
    }
    const t = new Triplets();
    for (let i = 0; i < a.rows; i++)
      for (let q = a.rowPtr[i]; q < a.rowPtr[i + 1]; q++)
        t.add(shuffle[i], shuffle[a.colIdx[q]], a.values[q]);
    const shuffled = t.toCsr(k * k, k * k);
    const rcm = rcmOrder(symmetricPattern(shuffled));
    expect(isPermutation(rcm, k * k)).toBe(true);
    expect(bandwidth(shuffled, naturalOrder(k * k))).toBeGreaterThan(10 * k);
    // Level sets of a BFS from a corner are anti-diagonals (≤ k nodes): bandwidth ≤ 2k.
    expect(bandwidth(shuffled, rcm)).toBeLessThanOrEqual(2 * k);
  });

  test("random graphs (incl. replicated nodes and overlapping cliques): valid permutations, etree counts = brute-force fill", () => {
    const r = mulberry32(12);
    for (let trial = 0; trial < 60; trial++) {
      const kind = trial % 3;
      const t = new Triplets();
      let n: number;
      if (kind === 0) {
        // Random sparse pattern.
        n = 1 + Math.floor(r() * 80);
        for (let e = 0; e < n * (1 + 3 * r()); e++)
          t.add(Math.floor(r() * n), Math.floor(r() * n), 1);
      } else if (kind === 1) {
        // Every node replicated 3× (3-dof particles): indistinguishable supervariables.
        const np = 1 + Math.floor(r() * 30);
        n = 3 * np;
        for (let e = 0; e < np * 2; e++) {
          const a = Math.floor(r() * np);
          const b = Math.floor(r() * np);
          for (let p = 0; p < 3; p++) for (let q = 0; q < 3; q++) t.add(3 * a + p, 3 * b + q, 1);
        }
      } else {
        // Overlapping cliques (elements), a few large.
        n = 5 + Math.floor(r() * 70);
        for (let c = 0; c < 1 + n / 4; c++) {
          const size = 2 + Math.floor(r() * (r() < 0.2 ? 20 : 5));
          const nodes = Array.from({ length: size }, () => Math.floor(r() * n));
          for (const a of nodes) for (const b of nodes) t.add(a, b, 1);
        }
      }
      for (let i = 0; i < n; i++) t.add(i, i, 1);
      const a = t.toCsr(n, n);
      const amd = amdOrder(symmetricPattern(a));
      expect(isPermutation(amd, n), `trial ${trial}`).toBe(true);
      expect(isPermutation(rcmOrder(symmetricPattern(a)), n)).toBe(true);
      const s = new SparseLdltSolver({ ordering: "amd" });
      s.factor(a);
      expect(s.nnzL, `trial ${trial}`).toBe(choleskyFill(a, amd));
    }
  });

  test("symmetricPattern and ataPattern match brute force", () => {
    const a = randomNonsymmetric(40, 3, 4);
    const sym = graphSets(symmetricPattern(a));
    const ref = adjacencySets(a);
    for (let i = 0; i < 40; i++)
      expect([...sym[i]].sort((x, y) => x - y)).toEqual([...ref[i]].sort((x, y) => x - y));
    // AᵀA: columns j1 ≠ j2 adjacent iff some row holds both.
    const ata = graphSets(ataPattern(a, 1000));
    for (let j1 = 0; j1 < 40; j1++)
      for (let j2 = 0; j2 < 40; j2++) {
        if (j1 === j2) continue;
        let both = false;
        for (let i = 0; i < 40 && !both; i++) {
          const cols = a.colIdx.subarray(a.rowPtr[i], a.rowPtr[i + 1]);
          both = cols.includes(j1) && cols.includes(j2);
        }
        expect(ata[j1].has(j2)).toBe(both);
      }
  });
});
