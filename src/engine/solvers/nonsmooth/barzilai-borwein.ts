import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";
import { estimateLipschitz } from "./apgd";
import { projectOnK } from "./cone";
import { residualFromVelocity } from "./residual";
import type {
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  ResidualMeasure,
} from "./types";
import { makeResult, ProblemView, ResolvedOptions, unconvergedResult } from "./workspace";

/** Nonmonotone memory M: the step must decrease f below the max of the last M values. */
const MEMORY = 10;
/** Sufficient-decrease parameter γ of the nonmonotone Armijo test. */
const GAMMA = 1e-4;
/** Safeguards of the quadratic-interpolation backtracking: λ_new ∈ [σ₁λ, σ₂λ]. */
const SIGMA1 = 0.1;
const SIGMA2 = 0.9;
/** Spectral step bounds, relative to 1/L₀. */
const ALPHA_MIN = 1e-10;
const ALPHA_MAX = 1e10;
/** Backtracking steps allowed per iteration. */
const MAX_BACKTRACKS = 40;
/** The gradient (carried by a recurrence) is recomputed from scratch this often. */
const REFRESH = 25;

/**
 * Spectral projected gradient with Barzilai–Borwein steps and a nonmonotone line search
 * (Birgin, Martínez & Raydan, "Nonmonotone spectral projected gradient methods on convex
 * sets", SIAM J. Optim. 10(4), 2000, algorithm SPG2; Chrono's ChSolverBB) on the same
 * cone-complementarity QP as APGD: min ½ rᵀW r + qᵀr, r ∈ K. Without friction this is the
 * LCP; with friction it is the CCP relaxation (no De Saxcé term, see apgd.ts), and the
 * residual is the "ccp" (or "lcp") measure of residual.ts.
 *
 * Iteration: d = P_K(x − α g) − x; λ = 1; while f(x + λd) > max_{j<M} f_{k−j} + γ λ gᵀd,
 * λ ← the safeguarded quadratic-interpolation step in [σ₁λ, σ₂λ] (else λ/2); x ← x + λd;
 * α ← BB1 = sᵀs / sᵀy and BB2 = sᵀy / yᵀy in turn (s = λd, y = λ W d; the alternation is
 * Chrono's default and clearly faster than BB1 alone on ill-conditioned stacks and chains),
 * clamped to [α_min, α_max], α_max when sᵀy ≤ 0.
 * Because f is quadratic, f(x + λd) = f + λ gᵀd + ½λ² dᵀW d exactly, so one W product (W d)
 * per iteration serves every trial λ and the new gradient g + λ W d. That recurrence is
 * refreshed from a fresh W x every 25 iterations, and always before declaring convergence.
 * α₀ = 1/L₀ (apgd.ts estimateLipschitz). Warm start: the r passed in, projected onto K.
 * Without convergence the iterate of smallest residual is returned. omega is not used.
 */
export class BarzilaiBorweinSolver implements NonsmoothSolver {
  readonly name = "barzilai-borwein";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private x = new Float64Array(0);
  private g = new Float64Array(0);
  private d = new Float64Array(0);
  private wd = new Float64Array(0);
  private best = new Float64Array(0);
  private readonly fhist = new Float64Array(MEMORY);

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const { m, contacts: nc, dim, op, mu } = v;
    const measure: ResidualMeasure = dim === 1 ? "lcp" : "ccp";
    if (!o.warmStart) r.fill(0, 0, m);
    if (m === 0) return makeResult(0, 0, true, measure, "converged");
    this.x = grow(this.x, m);
    this.g = grow(this.g, m);
    this.d = grow(this.d, m);
    this.wd = grow(this.wd, m);
    this.best = grow(this.best, m);
    const { x, g, d, wd, fhist, best } = this;

    const L0 = estimateLipschitz(op, m, x, g);
    const aMin = ALPHA_MIN / L0;
    const aMax = ALPHA_MAX / L0;
    let alpha = 1 / L0;
    for (let i = 0; i < m; i++) x[i] = r[i];
    projectOnK(x, nc, dim, mu);
    let f = this.refresh();
    fhist.fill(f);
    let res = residualFromVelocity(measure, nc, x, g, mu);
    let bestRes = res;
    for (let i = 0; i < m; i++) best[i] = x[i];
    let it = 0;
    let stalled = false;
    let fresh = true;
    while (!(res <= o.tolerance) && it < o.maxIterations && Number.isFinite(res)) {
      if ((it & 15) === 15) checkDeadline();
      let dd = 0;
      let gd = 0;
      for (let i = 0; i < m; i++) d[i] = x[i] - alpha * g[i];
      projectOnK(d, nc, dim, mu);
      for (let i = 0; i < m; i++) {
        d[i] -= x[i];
        dd += d[i] * d[i];
        gd += g[i] * d[i];
      }
      if (dd === 0) {
        // x is a fixed point of the projected gradient step: stationary up to round-off.
        if (!fresh) {
          f = this.refresh();
          fresh = true;
          res = residualFromVelocity(measure, nc, x, g, mu);
          continue;
        }
        stalled = true;
        break;
      }
      op.multiply(d, wd);
      let dWd = 0;
      let ww = 0;
      for (let i = 0; i < m; i++) {
        dWd += d[i] * wd[i];
        ww += wd[i] * wd[i];
      }
      let fmax = fhist[0];
      for (let j = 1; j < MEMORY; j++) fmax = Math.max(fmax, fhist[j]);
      let lambda = 1;
      let fnew = f + gd + 0.5 * dWd;
      for (let bt = 0; bt < MAX_BACKTRACKS && fnew > fmax + GAMMA * lambda * gd; bt++) {
        // Minimizer of the interpolating quadratic, exact here: λ_q = −gᵀd / dᵀWd.
        const lq = dWd > 0 ? -gd / dWd : 0.5 * lambda;
        lambda = lq >= SIGMA1 * lambda && lq <= SIGMA2 * lambda ? lq : 0.5 * lambda;
        fnew = f + lambda * gd + 0.5 * lambda * lambda * dWd;
      }
      for (let i = 0; i < m; i++) {
        x[i] += lambda * d[i];
        g[i] += lambda * wd[i];
      }
      f = fnew;
      it++;
      fhist[it % MEMORY] = f;
      // Alternating BB steps (Chrono's default do_BB1e2): BB1 = sᵀs/sᵀy = dᵀd/dᵀWd after odd
      // iterations, BB2 = sᵀy/yᵀy = dᵀWd/‖Wd‖² after even ones (s = λd, y = λWd: λ cancels).
      const bb = it % 2 === 1 ? dd / dWd : dWd / ww;
      alpha = dWd > 0 ? Math.min(aMax, Math.max(aMin, bb)) : aMax;
      fresh = false;
      if (it % REFRESH === 0) {
        f = this.refresh();
        fresh = true;
      }
      res = residualFromVelocity(measure, nc, x, g, mu);
      if (res <= o.tolerance && !fresh) {
        f = this.refresh();
        fresh = true;
        res = residualFromVelocity(measure, nc, x, g, mu);
      }
      if (res < bestRes) {
        bestRes = res;
        for (let i = 0; i < m; i++) best[i] = x[i];
      }
    }
    if (res <= o.tolerance) {
      for (let i = 0; i < m; i++) r[i] = x[i];
      return makeResult(it, res, true, measure, "converged");
    }
    // Not converged: the method is nonmonotone, so return the best iterate seen (as Chrono),
    // with its residual recomputed from a fresh product.
    for (let i = 0; i < m; i++) {
      x[i] = best[i];
      r[i] = best[i];
    }
    this.refresh();
    res = residualFromVelocity(measure, nc, x, g, mu);
    return unconvergedResult("barzilai-borwein", it, res, o.tolerance, measure, stalled);
  }

  /** g = W x + q (fresh product); returns f = ½ xᵀW x + qᵀx = ½ xᵀ(g + q). */
  private refresh(): number {
    const { m, op, q } = this.view;
    const { x, g } = this;
    op.multiply(x, g);
    let f = 0;
    for (let i = 0; i < m; i++) {
      g[i] += q[i];
      f += 0.5 * x[i] * (g[i] + q[i]);
    }
    return f;
  }
}
