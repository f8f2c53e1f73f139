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

/**
 * Past the tolerance, at the default budget: a solve that met the tolerance ε goes on for
 * up to ⌊REST_UPDATES / contacts⌋ more sweeps toward REST_FRACTION·ε, and keeps what it
 * reaches if that still meets ε (nonsmooth-contact.ts, solve). Why: ε bounds each
 * contact's velocity error, but a tall stack turns errors at its contacts into much larger
 * body velocities. A column's sway (its boxes tilting together, each face's four contacts
 * opening and closing by a little) moves each contact by a lever's fraction of the top's
 * motion: an error along it shows little in any contact's residual, the sweeps, driven by
 * those residuals, converge slowest on it, and every step stopped at ε left it about where
 * the previous step's had (the top box swaying at up to 20 times ε with 8 cubes).
 * Measured on columns of 0.2 m cubes (1 kg, μ = 0.5, h = 5 ms, ε = 4.9e-5 m/s), 4000
 * steps, the largest box speed over the last 2000 and the steps ending above ε, before:
 * 6 cubes 2.2e-2 m/s and 28, 8 cubes 1.2e-2 and 86, 10 cubes 1.8e-3 and 116 (the sway
 * grew until a corner's gap passed the activation tolerance and the contact dropped out,
 * an impact; or the solve ran out of sweeps); with these sweeps 6.2e-6, 7.1e-6 and
 * 1.7e-5 m/s, and none above ε after the cold start's first steps (0, 2 and 14, all
 * within 0.2 s), at 3.2, 2.1 and 9.7 sweeps a step (6.8, 13.8 and 20.9 before). The yawed
 * column of stacking.test.ts over 60 s: two transients of 13 % and 7.7 % in the contact
 * pairs' loads, 148 steps above ε and its cubes at up to 3.6e-3 m/s before; 0.006 %, 12
 * (all within 0.85 s) and 1.8e-6 m/s now. A pile's contacts get none or few
 * (S1-1000's ~2700: none; S1-100's ~250: four, of which the settled pile took 0.85 a step
 * on average, 1.09 → 1.94 sweeps and 1.03–1.05 times the time a step; H-100's ~320: 54 →
 * 58 sweeps, 1.02 times; measured in one process, the two set-ups stepped in turn).
 */
export const REST_UPDATES = 1000;
export const REST_FRACTION = 1e-2;

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

/**
 * Sweeps past the tolerance at the default budget for a problem of `contacts` contacts
 * (REST_UPDATES); none for lemke, whose pivots end at an exact solution.
 */
export function restSweeps(solver: NonsmoothSolverName, contacts: number): number {
  if (solver === "lemke") return 0;
  return Math.floor(REST_UPDATES / Math.max(1, contacts));
}
