/**
 * CG preconditioned by a reused block LDLᵀ factorization (factored-pcg.ts) against dense
 * solves with ml-matrix on random sparse SPD block matrices and a grid Laplacian.
 */
import { Matrix } from "ml-matrix";
import { describe, expect, it, vi } from "vitest";
import type { SparseBlockMatrix } from "../../../../src/engine/math/block-matrix";
import { FactoredPcg } from "../../../../src/engine/solvers/linear/factored-pcg";
import { mulberry32 } from "../../../support/random";
import { blockMatrix, fill, gridLaplacian, randomSpdBlocks } from "./block-matrices";
import { denseLuSolve, randomVector, relativeError } from "./helpers";

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
      expect(relativeError(x, denseLuSolve(a, b))).toBeLessThan(1e-9);
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
      expect(relativeError(x, denseLuSolve(a, b))).toBeLessThan(1e-9);
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
      expect(relativeError(x, denseLuSolve(a, b))).toBeLessThan(1e-10);
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
    expect(relativeError(x, denseLuSolve(a, b))).toBeLessThan(1e-9);
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
    expect(relativeError(x, denseLuSolve(dense, b))).toBeLessThan(1e-10);
  });
});
