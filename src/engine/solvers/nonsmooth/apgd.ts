import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";
import { projectOnK } from "./cone";
import { residualFromVelocity } from "./residual";
import type {
  DelassusOperator,
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  ResidualMeasure,
} from "./types";
import {
  fillProbe,
  makeResult,
  ProblemView,
  ResolvedOptions,
  unconvergedResult,
} from "./workspace";

/** Backtracking doublings allowed per iteration (L grows by 2⁶⁰ at most). */
const MAX_BACKTRACKS = 60;

/**
 * Initial Lipschitz estimate L₀ = ‖W p‖₂ / ‖p‖₂ for a fixed generic p (Chrono's APGD uses
 * p = γ₀ − 1), a lower bound of λ_max(W) that backtracking then corrects. Uses x and y as
 * scratch. Returns 1 for W = 0.
 */
export function estimateLipschitz(
  op: DelassusOperator,
  m: number,
  x: Float64Array,
  y: Float64Array,
): number {
  fillProbe(x, m);
  op.multiply(x, y);
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < m; i++) {
    nx += x[i] * x[i];
    ny += y[i] * y[i];
  }
  const L = Math.sqrt(ny / nx);
  return L > 0 && Number.isFinite(L) ? L : 1;
}

/**
 * Accelerated projected gradient descent (Nesterov's method with adaptive step and
 * restart: Mazhar, Heyn, Negrut & Tasora, "Using Nesterov's method to accelerate multibody
 * dynamics with friction and contact", ACM TOG 34(3), 2015, Algorithm APGD; Chrono's
 * ChSolverAPGD) on the cone-complementarity quadratic program
 *   min f(r) = ½ rᵀW r + qᵀr   subject to  r ∈ K,
 * K the orthant (frictionless) or the product of Coulomb cones K_μi.
 *
 * Formulation: its KKT conditions are K ∋ r ⊥ u = W r + q ∈ K*, Anitescu's cone
 * complementarity problem (CCP) that Chrono solves. Without friction it is exactly the LCP.
 * With friction it differs from the exact Coulomb problem by the De Saxcé term: the
 * velocity that must lie in K* is u instead of u + μ‖u_t‖e_n, so a sliding contact ends
 * with a separating normal velocity u_n = μ‖u_t‖ (the known CCP "boundary layer", O(h μ v_t)
 * in position). The reported residual is therefore the "ccp" measure (residual.ts; "lcp"
 * without friction), the exact optimality residual of the problem solved.
 *
 * Iteration k (Mazhar et al.): g = W y_k + q; γ_{k+1} = P_K(y_k − t_k g) with backtracking
 * L_k ← 2 L_k while f(γ_{k+1}) > f(y_k) + gᵀd + ½ L_k‖d‖², d = γ_{k+1} − y_k; then
 * θ_{k+1} = (−θ_k² + θ_k √(θ_k² + 4))/2, β = θ_k(1 − θ_k)/(θ_k² + θ_{k+1}),
 * y_{k+1} = γ_{k+1} + β(γ_{k+1} − γ_k); restart (y = γ_{k+1}, θ = 1) when gᵀ(γ_{k+1} − γ_k) > 0;
 * L_k ← 0.9 L_k. The iterate of smallest residual is returned.
 * Since f is quadratic, the sufficient-decrease test is exactly dᵀW d ≤ L‖d‖²; W d is taken
 * as Wγ_{k+1} − W y_k with W y_k carried as the same linear combination of fresh products, so
 * each trial costs one W product, which also yields u = Wγ_{k+1} + q for the residual.
 * A relative slack 1e-13‖d‖(‖Wγ_{k+1}‖ + ‖W y‖) absorbs the round-off of that difference.
 * Warm start: the r passed in, projected onto K. omega is not used.
 */
export class ApgdSolver implements NonsmoothSolver {
  readonly name = "apgd";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private gk = new Float64Array(0);
  private gk1 = new Float64Array(0);
  private wgk = new Float64Array(0);
  private wgk1 = new Float64Array(0);
  private y = new Float64Array(0);
  private wy = new Float64Array(0);
  private g = new Float64Array(0);
  private u = new Float64Array(0);
  private best = new Float64Array(0);

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const { m, contacts: nc, dim, op, q, mu } = v;
    const measure: ResidualMeasure = dim === 1 ? "lcp" : "ccp";
    if (!o.warmStart) r.fill(0, 0, m);
    if (m === 0) return makeResult(0, 0, true, measure, "converged");
    this.ensure(m);
    let gk = this.gk;
    let gk1 = this.gk1;
    let wgk = this.wgk;
    let wgk1 = this.wgk1;
    const { y, wy, g, u, best } = this;

    let L = estimateLipschitz(op, m, gk, wgk);
    for (let i = 0; i < m; i++) gk[i] = r[i];
    projectOnK(gk, nc, dim, mu);
    op.multiply(gk, wgk);
    for (let i = 0; i < m; i++) {
      y[i] = gk[i];
      wy[i] = wgk[i];
      u[i] = wgk[i] + q[i];
      best[i] = gk[i];
    }
    let bestRes = residualFromVelocity(measure, nc, gk, u, mu);
    let theta = 1;
    let it = 0;
    let res = bestRes;
    let stalled = false;
    while (!(bestRes <= o.tolerance) && it < o.maxIterations && Number.isFinite(res)) {
      if ((it & 15) === 15) checkDeadline();
      for (let i = 0; i < m; i++) g[i] = wy[i] + q[i];
      let dd = 0;
      for (let bt = 0; ; bt++) {
        const t = 1 / L;
        for (let i = 0; i < m; i++) gk1[i] = y[i] - t * g[i];
        projectOnK(gk1, nc, dim, mu);
        op.multiply(gk1, wgk1);
        dd = 0;
        let dWd = 0;
        let n1 = 0;
        let n2 = 0;
        for (let i = 0; i < m; i++) {
          const d = gk1[i] - y[i];
          dd += d * d;
          dWd += d * (wgk1[i] - wy[i]);
          n1 += wgk1[i] * wgk1[i];
          n2 += wy[i] * wy[i];
        }
        const slack = 1e-13 * Math.sqrt(dd) * (Math.sqrt(n1) + Math.sqrt(n2));
        if (dWd <= L * dd + slack || bt >= MAX_BACKTRACKS || !Number.isFinite(dWd)) break;
        L *= 2;
      }
      const thetaNew = 0.5 * (-theta * theta + theta * Math.sqrt(theta * theta + 4));
      const beta = (theta * (1 - theta)) / (theta * theta + thetaNew);
      for (let i = 0; i < m; i++) u[i] = wgk1[i] + q[i];
      res = residualFromVelocity(measure, nc, gk1, u, mu);
      it++;
      if (res < bestRes) {
        bestRes = res;
        for (let i = 0; i < m; i++) best[i] = gk1[i];
      }
      if (dd === 0 && !(res <= o.tolerance)) {
        // y is a fixed point of the projected gradient step yet the residual is above the
        // tolerance: round-off floor reached.
        stalled = true;
        break;
      }
      // Restart test on the gradient at y_k: gᵀ(γ_{k+1} − γ_k) > 0.
      let gs = 0;
      for (let i = 0; i < m; i++) gs += g[i] * (gk1[i] - gk[i]);
      if (gs > 0) {
        for (let i = 0; i < m; i++) {
          y[i] = gk1[i];
          wy[i] = wgk1[i];
        }
        theta = 1;
      } else {
        for (let i = 0; i < m; i++) {
          y[i] = gk1[i] + beta * (gk1[i] - gk[i]);
          wy[i] = wgk1[i] + beta * (wgk1[i] - wgk[i]);
        }
        theta = thetaNew;
      }
      L *= 0.9;
      let s = gk;
      gk = gk1;
      gk1 = s;
      s = wgk;
      wgk = wgk1;
      wgk1 = s;
    }
    for (let i = 0; i < m; i++) r[i] = best[i];
    if (bestRes <= o.tolerance) return makeResult(it, bestRes, true, measure, "converged");
    return unconvergedResult("apgd", it, bestRes, o.tolerance, measure, stalled);
  }

  private ensure(m: number): void {
    this.gk = grow(this.gk, m);
    this.gk1 = grow(this.gk1, m);
    this.wgk = grow(this.wgk, m);
    this.wgk1 = grow(this.wgk1, m);
    this.y = grow(this.y, m);
    this.wy = grow(this.wy, m);
    this.g = grow(this.g, m);
    this.u = grow(this.u, m);
    this.best = grow(this.best, m);
  }
}
