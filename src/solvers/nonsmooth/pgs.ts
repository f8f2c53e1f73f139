import { coulombBlockUpdate, lcpRowUpdate } from "./cone";
import { residualFromVelocity } from "./residual";
import type {
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  ResidualMeasure,
} from "./types";
import {
  DiagonalCache,
  grow,
  makeResult,
  ProblemView,
  ResolvedOptions,
  unconvergedResult,
} from "./workspace";

/**
 * Projected Gauss–Seidel / PSOR (Siconos' NSGS, Chrono's ChSolverPSOR, Bullet's sequential
 * impulses), warm-started from the r passed in.
 *
 * One iteration is a forward sweep over the contacts; contact i reads its local velocity
 * u_i = (row block i of W)·r + q_i with the latest r (contacts before i already updated:
 * Gauss–Seidel) through DelassusOperator.rowBlockTimes, so a sparse-block W costs
 * O(nonzero blocks) per sweep, then updates r_i in place:
 * - frictionless: r_i ← max(0, r_i − ω u_i / W_ii) (cone.ts lcpRowUpdate);
 * - friction: the local Coulomb block update (cone.ts coulombBlockUpdate): normal row with
 *   the diagonal block's W_nn, tangential step, radial projection on the disc of radius μ r_n.
 * After a sweep u = W r + q is formed and the residual (residual.ts: "lcp" or
 * "coulomb", the exact De Saxcé conditions) is checked — after each of the first four
 * sweeps (so a warm start at the solution converges after one) and then every
 * RESIDUAL_CHECK_INTERVAL sweeps, since the check costs as much as a sweep. ω ∈ (0, 2), default 1 (plain Gauss–Seidel); for a symmetric
 * PSD W and a solvable LCP the sweeps converge for any such ω (Cryer 1971, Mangasarian
 * 1977). With friction there is no general convergence theorem (the Coulomb problem is not
 * monotone); NSGS converges in practice for moderate μ.
 */
/** Sweeps between residual checks once the first four have not converged. */
const RESIDUAL_CHECK_INTERVAL = 8;

export class PgsSolver implements NonsmoothSolver {
  readonly name = "pgs";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private readonly cache = new DiagonalCache();
  private u = new Float64Array(0);
  private readonly ui = new Float64Array(3);

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const omega = Number.isNaN(o.omega) ? 1 : o.omega;
    const { m, contacts: nc, dim, op, q, mu } = v;
    const measure: ResidualMeasure = dim === 1 ? "lcp" : "coulomb";
    if (!o.warmStart) r.fill(0, 0, m);
    if (m === 0) return makeResult(0, 0, true, measure, "converged");
    this.u = grow(this.u, m);
    const u = this.u;
    const ui = this.ui;
    const c = this.cache;
    c.load(v);

    let it = 0;
    let res = Number.NaN;
    for (;;) {
      if (
        (it > 0 && (it <= 4 || it % RESIDUAL_CHECK_INTERVAL === 0 || it >= o.maxIterations)) ||
        o.maxIterations === 0
      ) {
        op.multiply(r, u);
        for (let k = 0; k < m; k++) u[k] += q[k];
        res = residualFromVelocity(measure, nc, r, u, mu);
        if (res <= o.tolerance) return makeResult(it, res, true, measure, "converged");
        if (it >= o.maxIterations || !Number.isFinite(res)) break;
      }
      // One Gauss–Seidel sweep.
      if (dim === 1) {
        for (let i = 0; i < nc; i++) {
          op.rowBlockTimes(i, r, ui);
          lcpRowUpdate(r, i, ui[0] + q[i], c.invN[i], omega);
        }
      } else {
        for (let i = 0; i < nc; i++) {
          op.rowBlockTimes(i, r, ui);
          const k = 3 * i;
          coulombBlockUpdate(
            r,
            i,
            ui[0] + q[k],
            ui[1] + q[k + 1],
            ui[2] + q[k + 2],
            mu[i],
            omega,
            c,
          );
        }
      }
      it++;
    }
    return unconvergedResult("pgs", it, res, o.tolerance, measure);
  }
}
