/**
 * The nonsmooth solvers' entry point (index.ts): createNonsmoothSolver by name,
 * solveNonsmooth's validation of every problem (through each solver's workspace), the
 * trivial empty problem, and its shared instances giving the same numbers as a fresh
 * solver.
 */
import { describe, expect, it } from "vitest";
import {
  ApgdSolver,
  BarzilaiBorweinSolver,
  createNonsmoothSolver,
  LemkeSolver,
  NonsmoothProblemError,
  type NonsmoothSolverName,
  PgsSolver,
  PJacobiSolver,
  SparseBlockDelassus,
  solveNonsmooth,
} from "../../../../src/engine/solvers/nonsmooth";
import { randomFrictionProblems, unitFrictionContact } from "./scenes";

const NAMES: NonsmoothSolverName[] = ["pgs", "pjacobi", "lemke", "apgd", "barzilai-borwein"];

describe("createNonsmoothSolver", () => {
  it("builds the solver of each name, a new instance every call", () => {
    const classes = [PgsSolver, PJacobiSolver, LemkeSolver, ApgdSolver, BarzilaiBorweinSolver];
    NAMES.forEach((name, k) => {
      const s = createNonsmoothSolver(name);
      expect(s).toBeInstanceOf(classes[k]);
      expect(s.name).toBe(name);
      expect(createNonsmoothSolver(name)).not.toBe(s);
    });
    expect(() => createNonsmoothSolver("gauss" as "pgs")).toThrow(NonsmoothProblemError);
  });
});

describe("solveNonsmooth", () => {
  it("gives, bit for bit, what a fresh solver of that name gives (a shared instance reused)", () => {
    const p = randomFrictionProblems()[3];
    for (const name of ["pgs", "pjacobi", "apgd", "barzilai-borwein"] as const) {
      const shared = new Float64Array(3 * p.contacts);
      const fresh = new Float64Array(3 * p.contacts);
      for (let k = 0; k < 2; k++) {
        shared.fill(0);
        const a = solveNonsmooth(name, p, shared, { maxIterations: 40 });
        const b = createNonsmoothSolver(name).solve(p, fresh.fill(0), { maxIterations: 40 });
        expect(a, name).toEqual(b);
        expect(Array.from(shared), name).toEqual(Array.from(fresh));
      }
    }
  });
});

describe("solveNonsmooth: problem validation", () => {
  const base = unitFrictionContact();

  it("rejects wrong sizes, missing or negative μ, bad options and unknown solvers", () => {
    const r = new Float64Array(3);
    expect(() => solveNonsmooth("pgs", { ...base, q: new Float64Array(2) }, r)).toThrow(/q has 2/);
    expect(() => solveNonsmooth("pgs", base, new Float64Array(1))).toThrow(/r has 1/);
    expect(() => solveNonsmooth("apgd", { ...base, W: new Float64Array(4) }, r)).toThrow(/3×3/);
    expect(() => solveNonsmooth("pjacobi", { ...base, mu: undefined }, r)).toThrow(/needs mu/);
    expect(() => solveNonsmooth("pgs", { ...base, mu: Float64Array.from([-1]) }, r)).toThrow(
      NonsmoothProblemError,
    );
    expect(() => solveNonsmooth("pgs", base, r, { omega: 2.5 })).toThrow(/omega/);
    const op = SparseBlockDelassus.fromBlockPairs(2, 3, [0, 1], [0, 1], new Float64Array(18));
    expect(() => solveNonsmooth("pgs", { ...base, W: op }, r)).toThrow(/2 blocks of 3/);
    expect(() => solveNonsmooth("gauss" as "pgs", base, r)).toThrow(/unknown nonsmooth solver/);
  });

  it("solves an empty problem trivially", () => {
    for (const name of NAMES) {
      const res = solveNonsmooth(
        name,
        { contacts: 0, contactDim: 1, W: new Float64Array(0), q: new Float64Array(0) },
        new Float64Array(0),
      );
      expect(res).toMatchObject({ converged: true, iterations: 0, residual: 0 });
    }
  });
});
