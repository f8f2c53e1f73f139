/**
 * workspace.ts, the solvers' shared plumbing: ProblemView's validation (sizes, μ, operator
 * shape) and binding, ResolvedOptions' defaults and range checks, the diagonal cache's
 * coefficients against the blocks of W, the result records of an unconverged solve, and
 * the power-iteration probe.
 */
import { describe, expect, it } from "vitest";
import { DenseDelassus, type NonsmoothProblem } from "../../../../src/engine/solvers/nonsmooth";
import {
  DiagonalCache,
  fillProbe,
  makeResult,
  ProblemView,
  ResolvedOptions,
  unconvergedResult,
} from "../../../../src/engine/solvers/nonsmooth/workspace";

const W3 = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1]);
const base: NonsmoothProblem = {
  contacts: 1,
  contactDim: 3,
  W: W3,
  q: Float64Array.from([-1, 0, 0]),
  mu: Float64Array.from([0.3]),
};

/** A fresh 2-vector (q or r of a 2-contact frictionless problem). */
function r2(): Float64Array {
  return new Float64Array(2);
}

describe("ProblemView", () => {
  it("rejects non-integer contact counts, other dimensions and a NaN μ", () => {
    // (sizes, missing or negative μ and operator shapes: index.test.ts, through solveNonsmooth)
    const v = new ProblemView();
    const r = new Float64Array(3);
    expect(() => v.bind({ ...base, mu: Float64Array.from([Number.NaN]) }, r)).toThrow(/finite/);
    expect(() => v.bind({ ...base, contacts: 1.5 }, r)).toThrow(/non-negative integer/);
    expect(() => v.bind({ ...base, contactDim: 2 as 3 }, r)).toThrow(/1 or 3/);
  });

  it("binds a dense W through its own DenseDelassus and an operator as it is", () => {
    const v = new ProblemView();
    // longer caller buffers are fine: only the first m entries count
    v.bind({ ...base, q: new Float64Array(5) }, new Float64Array(4));
    expect([v.contacts, v.dim, v.m]).toEqual([1, 3, 3]);
    expect(v.op).toBeInstanceOf(DenseDelassus);
    const op = new DenseDelassus(W3, 1, 3);
    v.bind({ ...base, W: op }, new Float64Array(3));
    expect(v.op).toBe(op);
    // frictionless: μ optional
    v.bind({ contacts: 2, contactDim: 1, W: new Float64Array(4), q: new Float64Array(2) }, r2());
    expect([v.m, v.mu.length]).toEqual([2, 0]);
  });
});

describe("ResolvedOptions", () => {
  it("applies the defaults (1000 iterations, 1e-10, warm start; ω left to the solver)", () => {
    const o = new ResolvedOptions().resolve(undefined);
    expect([o.maxIterations, o.tolerance, o.warmStart]).toEqual([1000, 1e-10, true]);
    expect(o.omega).toBeNaN();
    o.resolve({ maxIterations: 5, tolerance: 0, omega: 1.9, warmStart: false });
    expect([o.maxIterations, o.tolerance, o.omega, o.warmStart]).toEqual([5, 0, 1.9, false]);
  });

  it("rejects ω outside (0, 2), negative limits and tolerances", () => {
    const o = new ResolvedOptions();
    for (const omega of [0, 2, 2.5, -1])
      expect(() => o.resolve({ omega }), `${omega}`).toThrow(/omega/);
    expect(() => o.resolve({ maxIterations: -1 })).toThrow(/maxIterations/);
    expect(() => o.resolve({ tolerance: Number.NaN })).toThrow(/tolerance/);
  });
});

describe("DiagonalCache", () => {
  it("diagonal blocks at stride 9, 1/W_nn and 2/(W_t1t1 + W_t2t2), 0 where those vanish", () => {
    // two contacts: block 0 = [[2, .1, .2], [.1, 3, 0], [.2, 0, 5]], block 1 has W_nn = 0
    // and a zero tangential trace
    const m = 6;
    const W = new Float64Array(m * m);
    const b0 = [2, 0.1, 0.2, 0.1, 3, 0, 0.2, 0, 5];
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) W[a * m + b] = b0[3 * a + b];
    W[1 * m + 4] = 7; // off-diagonal block: not cached
    const v = new ProblemView();
    v.bind(
      { contacts: 2, contactDim: 3, W, q: new Float64Array(m), mu: new Float64Array(2) },
      new Float64Array(m),
    );
    const c = new DiagonalCache();
    c.load(v);
    expect(Array.from(c.diag.subarray(0, 18))).toEqual([...b0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(c.invN[0]).toBe(0.5);
    expect(c.rhoT[0]).toBe(2 / 8);
    expect([c.invN[1], c.rhoT[1]]).toEqual([0, 0]);
    // frictionless: entry 0 only, no tangential step
    const v1 = new ProblemView();
    v1.bind({ contacts: 2, contactDim: 1, W: Float64Array.of(4, 1, 1, 0.5), q: r2() }, r2());
    c.load(v1);
    expect([c.diag[0], c.diag[9], c.invN[0], c.invN[1], c.rhoT[0]]).toEqual([4, 0.5, 0.25, 2, 0]);
  });

  it("a diagonal entry at round-off against the largest (a direction a joint blocks) is taken as zero", () => {
    // W_nn of the second contact ±8e-102 as the joints' constrained solve returned it for a
    // platform welded to the ground: its inverse was 1e101 and the updates overflowed to NaN
    for (const noise of [7.9e-102, -7.9e-102, 1e-14]) {
      const v = new ProblemView();
      v.bind({ contacts: 2, contactDim: 1, W: Float64Array.of(0.1, 0, 0, noise), q: r2() }, r2());
      const c = new DiagonalCache();
      c.load(v);
      expect([c.invN[0], c.invN[1]]).toEqual([10, 0]);
    }
    // a real ratio of masses and lever arms (1e-9) is kept
    const v = new ProblemView();
    v.bind({ contacts: 2, contactDim: 1, W: Float64Array.of(1, 0, 0, 1e-9), q: r2() }, r2());
    const c = new DiagonalCache();
    c.load(v);
    expect(c.invN[1]).toBeCloseTo(1e9, 3);
  });
});

describe("results", () => {
  it("makeResult keeps a message only when given", () => {
    expect(makeResult(3, 0.5, true, "lcp", "converged")).toEqual({
      iterations: 3,
      residual: 0.5,
      converged: true,
      measure: "lcp",
      status: "converged",
    });
    expect(makeResult(0, 0, false, "ccp", "stalled", "m").message).toBe("m");
  });

  it("unconvergedResult: diverged for a non-finite residual, stalled on request, else max-iterations", () => {
    expect(unconvergedResult("apgd", 4, Number.NaN, 1e-8, "ccp")).toMatchObject({
      converged: false,
      status: "diverged",
      iterations: 4,
    });
    expect(unconvergedResult("apgd", 4, Number.POSITIVE_INFINITY, 1e-8, "ccp").status).toBe(
      "diverged",
    );
    const stalled = unconvergedResult("bb", 9, 1e-3, 1e-8, "lcp", true);
    expect(stalled.status).toBe("stalled");
    expect(stalled.message).toMatch(/^bb: iterate stopped moving at residual 1\.000e-3/);
    const limit = unconvergedResult("pgs", 9, 1e-3, 1e-8, "lcp");
    expect(limit.status).toBe("max-iterations");
    expect(limit.message).toBe("pgs: residual 1.000e-3 > tolerance 1e-8 after 9 iterations");
  });
});

describe("fillProbe", () => {
  it("fills [0.5, 1.5) without repeats, the same vector every time", () => {
    const a = new Float64Array(50);
    fillProbe(a, 40);
    for (let i = 0; i < 40; i++) {
      expect(a[i]).toBeGreaterThanOrEqual(0.5);
      expect(a[i]).toBeLessThan(1.5);
    }
    expect(a[40]).toBe(0);
    expect(new Set(a.subarray(0, 40)).size).toBe(40);
    const b = new Float64Array(40);
    fillProbe(b, 40);
    expect(Array.from(b)).toEqual(Array.from(a.subarray(0, 40)));
  });
});
