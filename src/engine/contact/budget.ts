/**
 * The default iteration budget of the nonsmooth contact solver and of the contact position
 * projection (solver.maxIterations, solver.projectionIterations absent; README, "Solver
 * settings"): a fixed amount of work per step rather than a fixed number of sweeps.
 *
 * One Gauss–Seidel sweep costs O(contacts), so the budget is CONTACT_UPDATES contact
 * updates, ⌈CONTACT_UPDATES / contacts⌉ sweeps, clamped to [MIN_SWEEPS, MAX_SWEEPS]: a
 * small problem (a box stack, a cradle) may sweep up to 200 times, as the schema's earlier
 * fixed default, and a large pile gets 20. The figure 20 is measured (bench/compare, S1-1000,
 * 1000 warm-started steps of a jammed pile of 1000 spheres with ~3000 contacts): at the
 * default tolerance the settled pile needs one or two sweeps a step, the landing more; with
 * 20 sweeps 94 % of the steps meet the tolerance at 2.7 sweeps per step on average, with
 * 50 96 % at 4.6, with 200 97 % at 12.1 — the remaining steps are the impacts of the landing,
 * where the warm start is far off and PGS converges slowly whatever the cap; their stats say
 * contactConverged: false. Lemke's pivots are not sweeps: it keeps the earlier 200.
 */
import type { NonsmoothSolverName } from "../solvers/nonsmooth/types";

/** Contact updates per step that the default budget spends at most (above MIN_SWEEPS). */
export const CONTACT_UPDATES = 10_000;
export const MIN_SWEEPS = 20;
export const MAX_SWEEPS = 200;

/**
 * Iterations of `solver` for a problem of `contacts` contacts: `explicit` when the model sets
 * one (solver.maxIterations / projectionIterations), else the default budget above.
 */
export function iterationBudget(
  explicit: number | null,
  solver: NonsmoothSolverName,
  contacts: number,
): number {
  if (explicit !== null) return explicit;
  if (solver === "lemke") return MAX_SWEEPS;
  return Math.min(MAX_SWEEPS, Math.max(MIN_SWEEPS, Math.ceil(CONTACT_UPDATES / contacts)));
}
