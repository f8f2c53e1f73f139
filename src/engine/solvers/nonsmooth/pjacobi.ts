import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";
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
  fillProbe,
  makeResult,
  ProblemView,
  ResolvedOptions,
  unconvergedResult,
} from "./workspace";

/** Power iterations used to estimate λ_max(D⁻¹W) for the automatic relaxation. */
const POWER_ITERATIONS = 20;

/**
 * Projected Jacobi (Chrono's ChSolverPJacobi): the same per-contact projections as PGS
 * (cone.ts), but every contact is updated from the previous iterate: u = W r_k + q is formed
 * once (one W product per iteration, trivially parallel), then r_{k+1,i} = update(r_{k,i}, u_i).
 * That u also gives the residual of r_k, so the check costs nothing extra and a warm start
 * at the solution converges with 0 iterations.
 *
 * Frictionless, the update is r ← max(0, r − ω D⁻¹(W r + q)) with D = diag(W): projected
 * gradient in the D-metric, convergent for a solvable PSD LCP iff 0 < ω < 2/λ_max(D⁻¹W)
 * (unlike Gauss–Seidel, ω = 1 diverges when contacts are strongly coupled). With friction
 * D = (W_nn, ½tr W_tt, ½tr W_tt) per contact and convergence is heuristic, as for PGS.
 * Relaxation: options.omega when given; otherwise ω = 1/λ̂ with λ̂ a Rayleigh-quotient
 * estimate of λ_max(D⁻¹W) after 20 power iterations from a fixed generic vector (costs 20
 * W products per solve; λ̂ ≤ λ_max, so ω < 2/λ_max once λ̂ > λ_max/2), clamped to ω ≤ 1.
 */
export class PJacobiSolver implements NonsmoothSolver {
  readonly name = "pjacobi";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private readonly cache = new DiagonalCache();
  private u = new Float64Array(0);
  private x = new Float64Array(0);

  /** The relaxation used by the last solve (auto or given). */
  lastOmega = Number.NaN;

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const { m, contacts: nc, dim, op, q, mu } = v;
    const measure: ResidualMeasure = dim === 1 ? "lcp" : "coulomb";
    if (!o.warmStart) r.fill(0, 0, m);
    if (m === 0) return makeResult(0, 0, true, measure, "converged");
    this.u = grow(this.u, m);
    this.x = grow(this.x, m);
    const u = this.u;
    const c = this.cache;
    c.load(v);
    const omega = Number.isNaN(o.omega) ? this.autoOmega() : o.omega;
    this.lastOmega = omega;

    let it = 0;
    let res: number;
    for (;;) {
      op.multiply(r, u);
      for (let k = 0; k < m; k++) u[k] += q[k];
      res = residualFromVelocity(measure, nc, r, u, mu);
      if (res <= o.tolerance) return makeResult(it, res, true, measure, "converged");
      if (it >= o.maxIterations || !Number.isFinite(res)) break;
      if ((it & 15) === 15) checkDeadline();
      // Contacts are independent given u (Jacobi): each reads only its own r_i and u_i.
      if (dim === 1) for (let i = 0; i < nc; i++) lcpRowUpdate(r, i, u, i, omega, c);
      else for (let i = 0; i < nc; i++) coulombBlockUpdate(r, i, u, 3 * i, mu, omega, c);
      it++;
    }
    return unconvergedResult("pjacobi", it, res, o.tolerance, measure);
  }

  /**
   * ω = 1/λ̂, λ̂ = max over power iterates x of the Rayleigh quotient xᵀWx / xᵀDx of the
   * symmetric-definite pencil (W, D), which is ≤ λ_max(D⁻¹W) and increases towards it.
   * Rows with a zero scaling are left out (D⁻¹ taken as 0 there).
   */
  private autoOmega(): number {
    const { m, contacts: nc, dim, op } = this.view;
    const c = this.cache;
    const x = this.x;
    const y = this.u;
    fillProbe(x, m);
    let lambda = 0;
    for (let p = 0; p < POWER_ITERATIONS; p++) {
      op.multiply(x, y);
      let xWx = 0;
      let xDx = 0;
      for (let i = 0; i < nc; i++) {
        for (let a = 0; a < dim; a++) {
          const k = i * dim + a;
          const dinv = a === 0 ? c.invN[i] : c.rhoT[i];
          xWx += x[k] * y[k];
          if (dinv > 0) xDx += (x[k] * x[k]) / dinv;
        }
      }
      if (xDx > 0) lambda = Math.max(lambda, xWx / xDx);
      // x ← D⁻¹ W x, normalized (∞-norm) to stay in range.
      let nx = 0;
      for (let i = 0; i < nc; i++)
        for (let a = 0; a < dim; a++) {
          const k = i * dim + a;
          const dinv = a === 0 ? c.invN[i] : c.rhoT[i];
          x[k] = y[k] * dinv;
          nx = Math.max(nx, Math.abs(x[k]));
        }
      if (!(nx > 0)) break;
      for (let k = 0; k < m; k++) x[k] /= nx;
    }
    // λ_max(D⁻¹W) ≥ mean diagonal of D^{-1/2} W D^{-1/2} = 1, so ω = 1 is the upper clamp.
    return lambda > 1 ? 1 / lambda : 1;
  }
}
