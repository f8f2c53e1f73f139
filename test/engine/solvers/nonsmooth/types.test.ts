/**
 * types.ts's runtime content seen through a solver: DEFAULT_NONSMOOTH_OPTIONS are what a
 * solve without options uses (the iteration limit and tolerance observed on a problem
 * that converges slowly, the warm start on the r passed in), and NonsmoothProblemError is
 * an Error that names itself.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_NONSMOOTH_OPTIONS,
  NonsmoothProblemError,
  PgsSolver,
} from "../../../../src/engine/solvers/nonsmooth";

describe("DEFAULT_NONSMOOTH_OPTIONS", () => {
  it("1000 iterations, tolerance 1e-10, ω = 1, warm start, not polishing", () => {
    expect(DEFAULT_NONSMOOTH_OPTIONS).toEqual({
      maxIterations: 1000,
      tolerance: 1e-10,
      omega: 1,
      warmStart: true,
      polish: false,
    });
  });

  it("are what a solve without options uses", () => {
    // Two nearly parallel contacts, W = [[1, 1 − ε], [1 − ε, 1]], q = (−1, −1): both active,
    // r = (1, 1)/(2 − ε). Gauss–Seidel contracts the error by (1 − ε)² per sweep, so with
    // ε = 1e-4 it cannot reach 1e-10 in 1000 sweeps from r = 0.
    const eps = 1e-4;
    const W = Float64Array.of(1, 1 - eps, 1 - eps, 1);
    const q = Float64Array.of(-1, -1);
    const res = new PgsSolver().solve({ contacts: 2, contactDim: 1, W, q }, new Float64Array(2));
    expect(res.status).toBe("max-iterations");
    expect(res.iterations).toBe(1000);
    expect(res.message).toMatch(/tolerance 1e-10 after 1000 iterations/);
    // warm start by default: from the solution passed in, one sweep and the check
    const exact = new Float64Array(2).fill(1 / (2 - eps));
    const warm = new PgsSolver().solve({ contacts: 2, contactDim: 1, W, q }, exact);
    expect(warm).toMatchObject({ converged: true, iterations: 1 });
    expect(Math.abs(exact[0] - 1 / (2 - eps))).toBeLessThan(1e-10);
  });
});

describe("NonsmoothProblemError", () => {
  it("is an Error named NonsmoothProblemError", () => {
    const e = new NonsmoothProblemError("bad");
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("NonsmoothProblemError");
    expect(e.message).toBe("bad");
  });
});
