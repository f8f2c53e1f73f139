import { ApgdSolver } from "./apgd";
import { BarzilaiBorweinSolver } from "./barzilai-borwein";
import { LemkeSolver } from "./lemke";
import { PgsSolver } from "./pgs";
import { PJacobiSolver } from "./pjacobi";
import type {
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  NonsmoothSolverName,
} from "./types";
import { NonsmoothProblemError } from "./types";

export { ApgdSolver, estimateLipschitz } from "./apgd";
export { BarzilaiBorweinSolver } from "./barzilai-borwein";
export { projectOnCone, projectOnK } from "./cone";
export { DenseDelassus, SparseBlockDelassus } from "./delassus";
export { FactoredDelassus } from "./factored";
export { LEMKE_FRICTION_MESSAGE, LemkeSolver } from "./lemke";
export { type PgsSettings, PgsSolver } from "./pgs";
export { PJacobiSolver } from "./pjacobi";
export {
  frictionResidual,
  lcpLocalResidual,
  lcpResidual,
  problemResidual,
  problemVelocity,
  residualFromVelocity,
} from "./residual";
export type {
  ContactDim,
  DelassusOperator,
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  NonsmoothSolverName,
  NonsmoothStatus,
  ResidualMeasure,
} from "./types";
export { DEFAULT_NONSMOOTH_OPTIONS, NonsmoothProblemError } from "./types";

/** A new solver instance (its own workspace; one per thread / simulation). */
export function createNonsmoothSolver(name: NonsmoothSolverName): NonsmoothSolver {
  switch (name) {
    case "pgs":
      return new PgsSolver();
    case "nncg":
      return new PgsSolver({ conjugate: true });
    case "pjacobi":
      return new PJacobiSolver();
    case "lemke":
      return new LemkeSolver();
    case "apgd":
      return new ApgdSolver();
    case "barzilai-borwein":
      return new BarzilaiBorweinSolver();
    default:
      throw new NonsmoothProblemError(`unknown nonsmooth solver "${String(name)}"`);
  }
}

/** One shared instance per name, created on first use (module scope: one per worker thread). */
const shared = new Map<NonsmoothSolverName, NonsmoothSolver>();

/**
 * Solves one nonsmooth problem with the named solver, in place on r (warm start on entry,
 * solution on exit). Formulations: pgs and pjacobi solve the exact problem (LCP, or Coulomb
 * friction with De Saxcé's complementarity, residual measure "coulomb"); apgd and
 * barzilai-borwein solve the convex cone-complementarity relaxation (exact for the LCP,
 * measure "ccp" with friction); lemke solves the frictionless LCP exactly and throws a
 * NonsmoothProblemError for a friction problem (contactDim 3): there is no fallback, the
 * caller picks another solver. Not reentrant: callers that nest solves should own instances
 * (createNonsmoothSolver).
 */
export function solveNonsmooth(
  name: NonsmoothSolverName,
  problem: NonsmoothProblem,
  r: Float64Array,
  options?: NonsmoothOptions,
): NonsmoothResult {
  let s = shared.get(name);
  if (!s) {
    s = createNonsmoothSolver(name);
    shared.set(name, s);
  }
  return s.solve(problem, r, options);
}
