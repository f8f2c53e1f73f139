import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";
import { coulombBlockUpdate, lcpRowUpdate } from "./cone";
import { FactoredDelassus } from "./factored";
import { contactResidual, residualFromVelocity } from "./residual";
import type {
  ContactDim,
  DelassusOperator,
  NonsmoothOptions,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  ResidualMeasure,
} from "./types";
import {
  DiagonalCache,
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
 * After a sweep u = W r + q is formed and the residual (residual.ts: "lcp" or "coulomb",
 * the exact De Saxcé conditions) is checked — after each of the first four sweeps (so a
 * warm start at the solution converges after one), then every RESIDUAL_CHECK_INTERVAL
 * sweeps, since the check costs as much as a sweep, and always after the last sweep, so
 * the reported residual is that of the r returned. The velocity form checks only when its
 * sweep's on-the-fly estimate (velocitySweep) is within the tolerance, or after the last
 * sweep: a pile stopped by the sweep limit pays one check.
 * ω ∈ (0, 2), default 1 (plain Gauss–Seidel); for a symmetric PSD W and a solvable LCP the
 * sweeps converge for any such ω (Cryer 1971, Mangasarian 1977). With friction there is no
 * general convergence theorem (the Coulomb problem is not monotone); NSGS converges in
 * practice for moderate μ.
 *
 * Velocity form (W a FactoredDelassus, W = s H Y Hᵀ): the solver keeps the generalized
 * velocity change Δv = Y Hᵀ r of the current impulses (Bullet's / Box2D's sequential
 * impulses, Siconos' NSGS on MoreauJeanOSI data), so contact i reads
 * u_i = s A_i Δv + q_i from its own two bodies and, after the same local update, adds
 * resp_i (r_i⁺ − r_i) to Δv: O(1) per contact and O(contacts) per sweep and per residual
 * check, whatever the number of neighbours. In exact arithmetic the iterates are those
 * of the Delassus form (u_i is the same number), so convergence and fixed points are too.
 */
/**
 * Frictionless problems can be measured in the units of w instead (PgsSettings.residual
 * "lcp-local", residual.ts: ‖min(W_ii r_i, w_i)‖∞), both in the exact checks and in the
 * velocity form's estimate, so a tolerance reads as a bound on w — a gap in m for the
 * position projection of nonsmooth-contact.ts, whose multipliers (kg·m) would make the
 * "lcp" tolerance depend on the masses.
 */
export interface PgsSettings {
  /** Residual of frictionless problems (default "lcp"); friction always uses "coulomb". */
  residual?: "lcp" | "lcp-local";
}

/** Sweeps between residual checks once the first four have not converged. */
const RESIDUAL_CHECK_INTERVAL = 8;

/**
 * Local bindings of the per-contact functions: tsx / esbuild compile an imported function
 * to a getter on the exporting module, evaluated on every use; the sweeps call these once
 * per contact per sweep, so a local binding saves a getter call per contact and sweep
 * (bench/README.md, "Imported bindings in hot loops").
 */
const coulombUpdate = coulombBlockUpdate;
const lcpUpdate = lcpRowUpdate;
const localResidual = contactResidual;

export class PgsSolver implements NonsmoothSolver {
  readonly name = "pgs";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private readonly cache = new DiagonalCache();
  private u = new Float64Array(0);
  private readonly ui = new Float64Array(3);
  /** Velocity form: Δv = Y Hᵀ r of the current iterate (generalized, length n). */
  private dv = new Float64Array(0);
  private readonly lcpMeasure: "lcp" | "lcp-local";

  constructor(settings: PgsSettings = {}) {
    this.lcpMeasure = settings.residual ?? "lcp";
  }

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
    const omega = Number.isNaN(o.omega) ? 1 : o.omega;
    const { m, contacts: nc, dim, op, q, mu } = v;
    const measure: ResidualMeasure = dim === 1 ? this.lcpMeasure : "coulomb";
    if (!o.warmStart) r.fill(0, 0, m);
    if (m === 0) return makeResult(0, 0, true, measure, "converged");
    this.u = grow(this.u, m);
    const u = this.u;
    this.cache.load(v);
    const fac = op instanceof FactoredDelassus ? op : null;
    if (fac !== null) {
      this.dv = grow(this.dv, fac.n);
      this.dv.fill(0, 0, fac.n);
      fac.addResponse(r, 1, this.dv);
    }

    let it = 0;
    let res = Number.NaN;
    /** Velocity form: the last sweep's on-the-fly residual estimate (see velocitySweep). */
    let estimate = Number.POSITIVE_INFINITY;
    for (;;) {
      const check =
        fac !== null
          ? it >= o.maxIterations || (it > 0 && !(estimate > o.tolerance))
          : (it > 0 && (it <= 4 || it % RESIDUAL_CHECK_INTERVAL === 0 || it >= o.maxIterations)) ||
            o.maxIterations === 0;
      if (check) {
        if (fac !== null) fac.velocities(this.dv, u);
        else op.multiply(r, u);
        for (let k = 0; k < m; k++) u[k] += q[k];
        res = residualFromVelocity(measure, nc, r, u, mu, this.cache.diag);
        if (res <= o.tolerance) return makeResult(it, res, true, measure, "converged");
        if (it >= o.maxIterations || !Number.isFinite(res)) break;
      }
      if ((it & 15) === 15) checkDeadline();
      if (fac !== null) estimate = this.velocitySweep(fac, r, q, mu, omega, o.tolerance);
      else this.delassusSweep(op, nc, dim, r, q, mu, omega);
      it++;
    }
    return unconvergedResult("pgs", it, res, o.tolerance, measure);
  }

  /** One Gauss–Seidel sweep reading u_i = (row block i of W)·r + q_i. */
  private delassusSweep(
    op: DelassusOperator,
    nc: number,
    dim: ContactDim,
    r: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    omega: number,
  ): void {
    const { ui, cache: c } = this;
    if (dim === 1) {
      for (let i = 0; i < nc; i++) {
        op.rowBlockTimes(i, r, ui);
        lcpUpdate(r, i, ui[0] + q[i], c.invN[i], omega);
      }
      return;
    }
    for (let i = 0; i < nc; i++) {
      op.rowBlockTimes(i, r, ui);
      const k = 3 * i;
      coulombUpdate(r, i, ui[0] + q[k], ui[1] + q[k + 1], ui[2] + q[k + 2], mu[i], omega, c);
    }
  }

  /**
   * One Gauss–Seidel sweep in velocity form: u_i = s Σ_X A_iX Δv_X + q_i, the local
   * update, then Δv_X += resp_iX (r_i⁺ − r_i) for both sides (see the class comment).
   * Returns the largest local residual (residual.ts, same measure) of the (r_i, u_i) each
   * contact saw before its update: the residual of no single iterate, but equal to the
   * exact one at a fixed point, so it gates the exact check. Once it exceeds `tolerance`
   * the remaining contacts of the sweep are not evaluated (the gate is closed anyway), so
   * far from convergence it costs next to nothing; the value returned is then only known
   * to be > tolerance.
   */
  private velocitySweep(
    op: FactoredDelassus,
    r: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    omega: number,
    tolerance: number,
  ): number {
    const { jac, resp, dof, width, scale: s, blocks: nc, blockSize: dim } = op;
    const dv = this.dv;
    const c = this.cache;
    const local = this.lcpMeasure === "lcp-local";
    let est = 0;
    for (let i = 0; i < nc; i++) {
      const e = 2 * i;
      const wa = width[e];
      const wb = width[e + 1];
      const da = dof[e];
      const db = dof[e + 1];
      const oa = 36 * i;
      const ob = oa + 18;
      if (dim === 1) {
        let un = 0;
        for (let k = 0; k < wa; k++) un += jac[oa + k] * dv[da + k];
        for (let k = 0; k < wb; k++) un += jac[ob + k] * dv[db + k];
        const r0 = r[i];
        const w = s * un + q[i];
        if (est <= tolerance)
          est = Math.max(est, Math.abs(Math.min(local ? c.diag[9 * i] * r0 : r0, w)));
        lcpUpdate(r, i, w, c.invN[i], omega);
        const d0 = r[i] - r0;
        if (d0 === 0) continue;
        for (let k = 0; k < wa; k++) dv[da + k] += d0 * resp[oa + k];
        for (let k = 0; k < wb; k++) dv[db + k] += d0 * resp[ob + k];
        continue;
      }
      let un = 0;
      let u1 = 0;
      let u2 = 0;
      for (let k = 0; k < wa; k++) {
        const x = dv[da + k];
        un += jac[oa + k] * x;
        u1 += jac[oa + 6 + k] * x;
        u2 += jac[oa + 12 + k] * x;
      }
      for (let k = 0; k < wb; k++) {
        const x = dv[db + k];
        un += jac[ob + k] * x;
        u1 += jac[ob + 6 + k] * x;
        u2 += jac[ob + 12 + k] * x;
      }
      const o = 3 * i;
      const r0 = r[o];
      const r1 = r[o + 1];
      const r2 = r[o + 2];
      un = s * un + q[o];
      u1 = s * u1 + q[o + 1];
      u2 = s * u2 + q[o + 2];
      if (est <= tolerance) est = Math.max(est, localResidual(mu[i], r0, r1, r2, un, u1, u2, true));
      coulombUpdate(r, i, un, u1, u2, mu[i], omega, c);
      const d0 = r[o] - r0;
      const d1 = r[o + 1] - r1;
      const d2 = r[o + 2] - r2;
      if (d0 === 0 && d1 === 0 && d2 === 0) continue;
      for (let k = 0; k < wa; k++)
        dv[da + k] += d0 * resp[oa + k] + d1 * resp[oa + 6 + k] + d2 * resp[oa + 12 + k];
      for (let k = 0; k < wb; k++)
        dv[db + k] += d0 * resp[ob + k] + d1 * resp[ob + 6 + k] + d2 * resp[ob + 12 + k];
    }
    return est;
  }
}
