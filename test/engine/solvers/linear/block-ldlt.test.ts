/**
 * The block LDLᵀ factorization (3×3 blocks) and CG preconditioned by a reused block
 * factorization, against dense solves with ml-matrix (LU with partial pivoting) on random
 * sparse SPD block matrices, a grid Laplacian and an indefinite matrix.
 */
import { LuDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it, vi } from "vitest";
import { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { BlockLdlt } from "../../../../src/engine/solvers/linear/block-ldlt";
import { FactoredPcg } from "../../../../src/engine/solvers/linear/factored-pcg";
import { mulberry32 } from "../../../support/random";

/**
 * A symmetric block matrix over `pairs` (block pairs i < j) filled from a dense symmetric
 * matrix: every pair reserved both ways unless `upperOnly` (then only (i, j), i < j).
 */
function blockMatrix(
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

function fill(
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
function randomSpdBlocks(
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

function denseSolve(a: Matrix, b: Float64Array): Float64Array {
  const x = new LuDecomposition(a).solve(Matrix.columnVector(Array.from(b)));
  return Float64Array.from(x.getColumn(0));
}

function relativeError(x: Float64Array, ref: Float64Array): number {
  let num = 0;
  let den = 0;
  for (let i = 0; i < x.length; i++) {
    num += (x[i] - ref[i]) ** 2;
    den += ref[i] ** 2;
  }
  return Math.sqrt(num / den);
}

function randomVector(n: number, seed: number): Float64Array {
  const r = mulberry32(seed);
  return Float64Array.from({ length: n }, () => 2 * r() - 1);
}

/**
 * The 3-d elasticity-like operator of a k × k grid of nodes with 8 neighbours each (a
 * cloth's structural and shear springs): block (i, j) = −e eᵀ − 0.1 I for each edge (e the
 * unit edge direction with a small out-of-plane tilt), diagonal blocks minus the sum of a
 * row's off-diagonal blocks plus `mass` I: a graph Laplacian of 3×3 blocks, SPD.
 */
function gridLaplacian(k: number, mass: number): { pairs: [number, number][]; dense: Matrix } {
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

describe("BlockLdlt", () => {
  it("solves random sparse SPD block systems to 1e-10 of a dense LU solve", () => {
    for (const seed of [1, 2, 3]) {
      const nb = 40;
      const { pairs, dense } = randomSpdBlocks(nb, 3, seed);
      const m = blockMatrix(nb, pairs, dense);
      const f = new BlockLdlt();
      expect(f.factor(m)).toBe(true);
      expect(f.positiveDefinite).toBe(true);
      const b = randomVector(3 * nb, seed + 10);
      const x = new Float64Array(3 * nb);
      const bx = f.solve(b, x);
      const ref = denseSolve(dense, b);
      expect(relativeError(x, ref)).toBeLessThan(1e-10);
      // the returned bᵀx
      let dot = 0;
      for (let i = 0; i < b.length; i++) dot += b[i] * ref[i];
      expect(Math.abs(bx - dot)).toBeLessThan(1e-10 * Math.abs(dot));
    }
  });

  it("solves a 12 × 12 grid Laplacian of 3×3 blocks (a cloth's pattern) to 1e-10", () => {
    const k = 12;
    const { pairs, dense } = gridLaplacian(k, 1e-3);
    const m = blockMatrix(k * k, pairs, dense);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    const b = randomVector(3 * k * k, 7);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseSolve(dense, b))).toBeLessThan(1e-10);
    // the ordering reduces fill below the natural (banded) order's: a k × k grid with 8
    // neighbours has a band of k + 1 blocks, so the natural order fills ≈ k²(k + 1) blocks
    expect(f.solveCost).toBeLessThan(18 * k * k * (k + 1));
  });

  it("reads a triangle-only storage as the symmetric matrix", () => {
    const nb = 30;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 5);
    const m = blockMatrix(nb, pairs, dense, true);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    const b = randomVector(3 * nb, 6);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseSolve(dense, b))).toBeLessThan(1e-10);
  });

  it("factors a symmetric indefinite matrix, reporting it, and still solves it", () => {
    const nb = 30;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 8);
    // flip the sign of a few diagonal blocks' dominance: indefinite but nonsingular
    for (const b of [3, 17, 25])
      for (let p = 0; p < 3; p++) dense.set(3 * b + p, 3 * b + p, -dense.get(3 * b + p, 3 * b + p));
    const m = blockMatrix(nb, pairs, dense);
    const f = new BlockLdlt();
    expect(f.factor(m)).toBe(true);
    expect(f.positiveDefinite).toBe(false);
    const b = randomVector(3 * nb, 9);
    const x = new Float64Array(b.length);
    f.solve(b, x);
    expect(relativeError(x, denseSolve(dense, b))).toBeLessThan(1e-10);
  });

  it("reports a singular matrix", () => {
    const nb = 10;
    const { pairs, dense } = randomSpdBlocks(nb, 2, 11);
    // block 4 decoupled and zero: singular
    const kept = pairs.filter(([i, j]) => i !== 4 && j !== 4);
    for (let p = 0; p < 3; p++) for (let q = 0; q < 3; q++) dense.set(12 + p, 12 + q, 0);
    const m = blockMatrix(nb, kept, dense);
    expect(new BlockLdlt().factor(m)).toBe(false);
  });

  it("reuses its symbolic analysis while the pattern is unchanged", () => {
    const nb = 20;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 12);
    const m = blockMatrix(nb, pairs, dense);
    const f = new BlockLdlt();
    f.factor(m);
    f.factor(m);
    expect(f.analyses).toBe(1);
    expect(f.factorizations).toBe(2);
    m.addBlock(0, nb - 1);
    m.addBlock(nb - 1, 0);
    m.finalize();
    fill(m, nb, pairs, dense);
    f.factor(m);
    expect(f.analyses).toBe(2);
  });
});

describe("FactoredPcg", () => {
  /**
   * A sequence of slowly changing SPD matrices A_s = A₀ + s·E (E a small symmetric
   * perturbation on the same pattern), as Newton's W along a run.
   */
  function sequence(k: number, mass: number) {
    const { pairs, dense } = gridLaplacian(k, mass);
    const r = mulberry32(21);
    const n = 3 * k * k;
    const e = Matrix.zeros(n, n);
    const put = (i: number, j: number, v: number) => {
      e.set(i, j, e.get(i, j) + v);
      if (i !== j) e.set(j, i, e.get(j, i) + v);
    };
    for (let b = 0; b < k * k; b++) put(3 * b, 3 * b, 0.002 * r());
    for (const [a, b] of pairs) put(3 * a + 1, 3 * b, 0.0005 * (2 * r() - 1));
    const m = blockMatrix(k * k, pairs, dense);
    return { m, pairs, nb: k * k, at: (s: number) => dense.clone().add(e.clone().mul(s)) };
  }

  it("solves each matrix of a slowly changing sequence to the tolerance, factoring rarely", () => {
    const { m, pairs, nb, at } = sequence(10, 1e-2);
    const pcg = new FactoredPcg(true);
    pcg.tolerance = 1e-12;
    const steps = 20;
    let iterations = 0;
    for (let s = 0; s < steps; s++) {
      const a = at(s);
      fill(m, nb, pairs, a);
      pcg.factor(m);
      const b = randomVector(3 * nb, 100 + s);
      const x = new Float64Array(b.length);
      const info = pcg.solve(b, x);
      iterations += info.iterations;
      expect(info.converged).toBe(true);
      expect(relativeError(x, denseSolve(a, b))).toBeLessThan(1e-9);
    }
    // reused: at most every other matrix factored (on this small grid a factorization costs
    // a few iterations, so the cost rule refactors often), a few iterations a solve
    expect(pcg.ldlt.factorizations).toBeLessThanOrEqual(steps / 2);
    expect(iterations / steps).toBeLessThan(8);
  });

  it("applies the factorization once per CG iteration and counts the iterations beyond a solve's first as work", () => {
    const { m, pairs, nb, at } = sequence(10, 1e-2);
    const pcg = new FactoredPcg(true);
    pcg.tolerance = 1e-12;
    const applications = vi.spyOn(pcg.ldlt, "solve");
    const n = 3 * nb;
    // an iteration: the product (9 multiply-adds a stored block), the two triangular sweeps
    // and D⁻¹ (the factorization's solveCost) and five vector sweeps
    const iterationCost = () => m.values.length + pcg.ldlt.solveCost + 5 * n;
    const solve = (s: number) => {
      const a = at(s);
      fill(m, nb, pairs, a);
      pcg.factor(m);
      const b = randomVector(n, 400 + s);
      const x = new Float64Array(n);
      applications.mockClear();
      const info = pcg.solve(b, x);
      expect(info.converged).toBe(true);
      expect(relativeError(x, denseSolve(a, b))).toBeLessThan(1e-9);
      return info.iterations;
    };
    // the first matrix is factored: one iteration, one application (none for a next
    // direction once the residual is at the target)
    expect(solve(0)).toBe(1);
    expect(applications).toHaveBeenCalledTimes(1);
    expect(pcg.saveMemory(m)?.wasted).toBe(0);
    // the next one is preconditioned by the first's factorization: k iterations, k
    // applications, k − 1 iterations counted against the next factorization
    const k = solve(1);
    expect(k).toBeGreaterThan(1);
    expect(applications).toHaveBeenCalledTimes(k);
    expect(pcg.ldlt.factorizations).toBe(1);
    expect(pcg.saveMemory(m)?.wasted).toBe((k - 1) * iterationCost());
  });

  it("keeps block Jacobi without a factorization when the mass dominates", () => {
    // W = M + small stiffness: block Jacobi converges in a few iterations
    const { m, pairs, nb, at } = sequence(10, 100);
    const pcg = new FactoredPcg();
    pcg.tolerance = 1e-12;
    for (let s = 0; s < 10; s++) {
      const a = at(s);
      fill(m, nb, pairs, a);
      pcg.factor(m);
      const b = randomVector(3 * nb, 200 + s);
      const x = new Float64Array(b.length);
      expect(pcg.solve(b, x).converged).toBe(true);
      expect(relativeError(x, denseSolve(a, b))).toBeLessThan(1e-10);
    }
    expect(pcg.ldlt.factorizations).toBe(0);
  });

  it("switches from block Jacobi to the factorization on a stiff system", () => {
    const { m, pairs, nb, at } = sequence(10, 1e-4);
    const pcg = new FactoredPcg();
    pcg.tolerance = 1e-12;
    const a = at(0);
    fill(m, nb, pairs, a);
    pcg.factor(m);
    const b = randomVector(3 * nb, 300);
    const x = new Float64Array(b.length);
    expect(pcg.solve(b, x).converged).toBe(true);
    expect(relativeError(x, denseSolve(a, b))).toBeLessThan(1e-9);
    expect(pcg.ldlt.factorizations).toBe(1);
  });

  it("its memory (saveMemory, restoreMemory) continues a sequence bit for bit from any solve, in each mode", () => {
    const stiff = sequence(10, 1e-2);
    const soft = sequence(10, 100);
    // symmetric up to rounding, as an assembled W: W_ij and W_jiᵀ differ in the last bits
    const unsymmetric = (s: number) => {
      const a = stiff.at(s);
      for (const [i, j] of stiff.pairs)
        a.set(3 * i, 3 * j + 2, a.get(3 * i, 3 * j + 2) * (1 + 1e-15));
      return a;
    };
    const nb = 30;
    const indefinite = randomSpdBlocks(nb, 3, 13);
    for (const b of [2, 9])
      for (let p = 0; p < 3; p++)
        indefinite.dense.set(3 * b + p, 3 * b + p, -indefinite.dense.get(3 * b + p, 3 * b + p));
    const cases = [
      // the factorization reused and renewed (mirrored blocks packed by their symmetric part)
      {
        name: "factored",
        mode: "factored",
        factorFirst: true,
        nb: stiff.nb,
        pairs: stiff.pairs,
        upper: false,
        at: unsymmetric,
      },
      // blocks stored on one side only (packed as they are)
      {
        name: "triangle",
        mode: "factored",
        factorFirst: true,
        nb: stiff.nb,
        pairs: stiff.pairs,
        upper: true,
        at: stiff.at,
      },
      {
        name: "jacobi",
        mode: "jacobi",
        factorFirst: false,
        nb: soft.nb,
        pairs: soft.pairs,
        upper: false,
        at: soft.at,
      },
      {
        name: "direct",
        mode: "direct",
        factorFirst: true,
        nb,
        pairs: indefinite.pairs,
        upper: false,
        at: (s: number) => indefinite.dense.clone().mul(1 + 0.01 * s),
      },
    ] as const;
    const steps = 10;
    for (const c of cases) {
      /** The solutions of the sequence's systems from..steps−1 with pcg, and its memory after each. */
      const run = (pcg: FactoredPcg, m: SparseBlockMatrix, from: number) => {
        const xs: Float64Array[] = [];
        const memory = [];
        for (let s = from; s < steps; s++) {
          fill(m, c.nb, c.pairs as [number, number][], c.at(s), c.upper);
          pcg.factor(m);
          const x = new Float64Array(3 * c.nb);
          pcg.solve(randomVector(3 * c.nb, 400 + s), x);
          xs.push(x);
          memory.push(pcg.saveMemory(m));
        }
        return { xs, memory };
      };
      const build = () => blockMatrix(c.nb, c.pairs as [number, number][], c.at(0), c.upper);
      const reference = run(new FactoredPcg(c.factorFirst), build(), 0);
      expect(reference.memory.at(-1)?.mode, c.name).toBe(c.mode);
      if (c.mode === "factored") {
        // renewed now and then, with CG work counted in between
        expect(
          reference.memory.some((f) => (f?.wasted ?? 0) > 0),
          c.name,
        ).toBe(true);
        expect(
          new Set(reference.memory.map((f) => f?.matrix?.join())).size,
          c.name,
        ).toBeGreaterThan(1);
      }
      for (let k = 1; k < steps; k++) {
        const pcg = new FactoredPcg(c.factorFirst);
        const m = build();
        pcg.restoreMemory(m, reference.memory[k - 1]);
        const { xs } = run(pcg, m, k);
        for (let s = k; s < steps; s++) {
          const x = xs[s - k];
          const ref = reference.xs[s];
          const same = x.every((v, i) => Object.is(v, ref[i]));
          expect(same, `${c.name}: resumed after ${k} solves, solve ${s}`).toBe(true);
        }
      }
    }
  });

  it("solves an indefinite matrix directly with a fresh factorization", () => {
    const nb = 30;
    const { pairs, dense } = randomSpdBlocks(nb, 3, 13);
    for (const b of [2, 9])
      for (let p = 0; p < 3; p++) dense.set(3 * b + p, 3 * b + p, -dense.get(3 * b + p, 3 * b + p));
    const m = blockMatrix(nb, pairs, dense);
    const pcg = new FactoredPcg(true);
    pcg.tolerance = 1e-12;
    pcg.factor(m);
    const b = randomVector(3 * nb, 14);
    const x = new Float64Array(b.length);
    expect(pcg.solve(b, x).converged).toBe(true);
    expect(relativeError(x, denseSolve(dense, b))).toBeLessThan(1e-10);
  });
});
