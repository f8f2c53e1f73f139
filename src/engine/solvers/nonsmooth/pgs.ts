import { grow } from "../../math/grow";
import { checkDeadline } from "../deadline";
import { coulombBlockUpdate, lcpRowUpdate } from "./cone";
import { FactoredDelassus } from "./factored";
import { contactResidual, coulombResidualBelow, residualFromVelocity } from "./residual";
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
  /**
   * Nonsmooth nonlinear conjugate gradients on top of the sweeps (solver "nncg", the
   * default contact solver; see PgsSolver.accelerate); default false: plain PGS.
   */
  conjugate?: boolean;
}

/**
 * NNCG's default relaxation ω of its sweeps after the first (the caller's omega wins). The
 * first, from the warm start, is plain Gauss–Seidel (ω = 1), NNCG's x₁ = PGS(x₀): it solves
 * a contact that interacts with no other exactly (a single frictionless or sticking
 * contact converges in one sweep, as the closed-form impact and rolling tests need) and a
 * one-sweep budget is PGS's. Under-relaxed sweeps make better "gradients" for the momentum.
 * Measured on H-100 at the defaults (550 steps: 25 from each of 11 states of one PGS
 * trajectory, steps 100–600), sweeps a step and steps meeting the tolerance: this setting
 * 276 and 544; plain PGS 671 and 398. With polishing sweeps at ω = 1 (instead of
 * NNCG_OMEGA): 386 and 514 at ω = 1, 280 and 470 at 0.8; every sweep at 0.8 (the first
 * too) 252 and 548 but no longer exact on single contacts, 0.7: 263 and 546, 0.9: 297 and
 * 540, 1.3: 535 and 428; plain PGS with every sweep at 0.8: 709 and 398. The 12-particle
 * resting column (nncg.test.ts): 176 sweeps at ω = 1, 274 at 0.8, PGS 1358.
 */
const NNCG_OMEGA = 0.8;

/**
 * NNCG restarts (p ← g, no momentum) when β = ‖g_k‖²/‖g_{k−1}‖² exceeds this, not 1 as in
 * Silcowitz et al.'s Algorithm 2. Why: where the sweeps stall, on a hull vertex touching
 * several terrain triangles (nearly parallel contacts at one point: W nearly singular, load
 * moving between them with little change of velocity), the sweep's step g stays constant
 * up to a zigzag, β alternating 0.98 / 1.02 or 1 + 1e-6; a restart at β > 1 drops the
 * momentum every other sweep and leaves plain PGS at ω = 0.8 (H-100's impact steps took
 * 700–1900 sweeps at a residual flat at 1.1–2 × the tolerance). A sweep whose step grew by
 * 30 % still restarts, and the solve's budget bounds a run of β ∈ (1, 1.3].
 * Measured on the same problems (every contact solve of one trajectory at the defaults,
 * redone from the same warm start; H-100 600 steps, S1-1000 500, S1-100 1000), sweeps a
 * step and steps ending above the tolerance on H-100 / steps ending above it and their mean
 * residual on S1-1000 / mean residual on S1-100: threshold 1: 284, 8 / 112, 6.8e-3 /
 * 2.8e-5; 1.2: 225, 3 / 111, 6.5e-3 / 2.8e-5; 1.3: 217, 2 / 113, 6.8e-3 / 2.6e-5; 1.5:
 * 207, 1 / 117, 7.7e-3 / 3.2e-5 (the 20-sweep solves of the sphere piles' landing lose to
 * the larger momentum); 2: 199, 1 on H-100. Dropped: restarting on growth over the
 * smallest ‖g‖² since the last restart (1.5×: 231 sweeps), β capped at 1 (220).
 */
const NNCG_RESTART = 1.3;

/** Sweeps between residual checks once the first four have not converged. */
const RESIDUAL_CHECK_INTERVAL = 8;

/**
 * Local bindings of the per-contact functions: where the engine is loaded as CommonJS (a
 * script outside the package's "type": "module", run with tsx), every use of an imported
 * function is a getter call on the exporting module, here once per contact and sweep; the
 * package's ES modules (the benchmark, the server's bundle) read the bindings directly and
 * lose nothing by the copies (bench/README.md, "Imported bindings in hot loops").
 */
const coulombUpdate = coulombBlockUpdate;
const lcpUpdate = lcpRowUpdate;
const localResidual = contactResidual;
const residualBelow = coulombResidualBelow;

export class PgsSolver implements NonsmoothSolver {
  readonly name: "pgs" | "nncg";
  private readonly view = new ProblemView();
  private readonly opts = new ResolvedOptions();
  private readonly cache = new DiagonalCache();
  private u = new Float64Array(0);
  /** A contact's local velocity u_i, then (velocitySweep) its local residual. */
  private readonly ui = new Float64Array(4);
  /** Velocity form: Δv = Y Hᵀ r of the current iterate (generalized, length n). */
  private dv = new Float64Array(0);
  private readonly lcpMeasure: "lcp" | "lcp-local";
  private readonly conjugate: boolean;
  /** NNCG: the iterate a sweep started from (m) and, velocity form, its Δv (n). */
  private rPrev = new Float64Array(0);
  private dvPrev = new Float64Array(0);
  /** NNCG: the search direction p (m) and, velocity form, Y Hᵀ p (n). */
  private p = new Float64Array(0);
  private dp = new Float64Array(0);
  /** NNCG: ‖g‖² of the previous sweep's step g = PGS(r) − r (0: none yet, restart). */
  private gg = 0;
  /**
   * Velocity form: ‖g‖² of the last sweep's step, summed by velocitySweep as it updates
   * each contact once (g_i = r_i⁺ − r_i, added in the order of accelerate's loop over r in
   * the Delassus form, so β is the same number without that pass).
   */
  private sweepStep = 0;

  constructor(settings: PgsSettings = {}) {
    this.lcpMeasure = settings.residual ?? "lcp";
    this.conjugate = settings.conjugate ?? false;
    this.name = this.conjugate ? "nncg" : "pgs";
  }

  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult {
    const v = this.view;
    v.bind(problem, r);
    const o = this.opts.resolve(options);
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
    // Polishing a converged iterate: sweeps without the momentum (see accelerate), still
    // under-relaxed (ω = 1 sweeps there left 64 of 362 polished H-100 steps above the
    // tolerance they had met, NNCG_OMEGA 2 of 368)
    const conjugate = this.conjugate && !o.polish;
    const omega = Number.isNaN(o.omega) ? 1 : o.omega;
    // NNCG's sweeps after the first: NNCG_OMEGA
    const omegaNext = Number.isNaN(o.omega) && this.conjugate ? NNCG_OMEGA : omega;
    if (conjugate) {
      this.rPrev = grow(this.rPrev, m);
      this.p = grow(this.p, m);
      if (fac !== null) {
        this.dvPrev = grow(this.dvPrev, fac.n);
        this.dp = grow(this.dp, fac.n);
      }
      this.gg = 0;
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
      if (conjugate) {
        // the momentum step after a sweep that did not converge (it also keeps the next
        // sweep's start), or the first sweep's start
        if (it > 0) this.accelerate(r, m, fac);
        else {
          this.rPrev.set(r.subarray(0, m));
          if (fac !== null) this.dvPrev.set(this.dv.subarray(0, fac.n));
        }
      }
      const w = it === 0 ? omega : omegaNext;
      if (fac !== null)
        estimate = this.velocitySweep(fac, r, q, mu, w, o.tolerance, 0.5 * o.tolerance);
      else this.delassusSweep(op, nc, dim, r, q, mu, w);
      it++;
    }
    return unconvergedResult(this.name, it, res, o.tolerance, measure);
  }

  /**
   * NNCG's step after sweep k (Silcowitz, Niebe & Erleben, "A nonsmooth nonlinear
   * conjugate gradient method for interactive contact force problems", The Visual Computer
   * 26, 2010, Algorithm 2): the sweep is read as a gradient step, g_k = PGS(r_k) − r_k
   * (= −∇f), with the Fletcher–Reeves β_k = ‖g_k‖²/‖g_{k−1}‖². For β_k ≤ NNCG_RESTART
   *   r ← PGS(r_k) + β_k p_{k−1},   p_k = β_k p_{k−1} + g_k,
   * else (the sweep's step grew: the direction no longer descends; the paper restarts at
   * β_k > 1, see NNCG_RESTART) a restart, p_k = g_k
   * and r = PGS(r_k) unchanged. r may leave the cone; the next sweep projects each contact
   * again, and only swept iterates are checked and returned (solve). Velocity form: Δv is
   * linear in r, so Δv ← Δv + β_k Y Hᵀ p_{k−1} with Y Hᵀ p kept alongside p (O(n) a
   * sweep, no product with W).
   * Measured: a 12-particle resting column from r = 0 to 1e-12 m/s in 176 sweeps (274 at
   * NNCG_OMEGA) against PGS's 1358; H-100 at NNCG_OMEGA. Not when polishing (options.polish,
   * a warm start that already meets the tolerance): on redundant contacts (a cylinder on
   * its eight rim points, 24 rows on 6 dofs) the momentum builds up along W's null space,
   * impulses that move no velocity, and the same 23 sweeps left the residual at 2.7e-7 m/s
   * instead of PGS's 2.2e-9.
   */
  private accelerate(r: Float64Array, m: number, fac: FactoredDelassus | null): void {
    const { rPrev, p } = this;
    let gg = 0;
    if (fac !== null) gg = this.sweepStep;
    else
      for (let k = 0; k < m; k++) {
        const g = r[k] - rPrev[k];
        gg += g * g;
      }
    const beta = this.gg > 0 ? gg / this.gg : Number.POSITIVE_INFINITY;
    this.gg = gg;
    // each loop also stores the next sweep's start (rPrev, dvPrev): one pass instead of two
    if (beta > NNCG_RESTART) {
      for (let k = 0; k < m; k++) {
        p[k] = r[k] - rPrev[k];
        rPrev[k] = r[k];
      }
      if (fac !== null) {
        const { dv, dvPrev, dp } = this;
        for (let k = 0; k < fac.n; k++) {
          dp[k] = dv[k] - dvPrev[k];
          dvPrev[k] = dv[k];
        }
      }
      return;
    }
    for (let k = 0; k < m; k++) {
      const g = r[k] - rPrev[k];
      r[k] += beta * p[k];
      p[k] = beta * p[k] + g;
      rPrev[k] = r[k];
    }
    if (fac !== null) {
      const { dv, dvPrev, dp } = this;
      for (let k = 0; k < fac.n; k++) {
        const g = dv[k] - dvPrev[k];
        dv[k] += beta * dp[k];
        dp[k] = beta * dp[k] + g;
        dvPrev[k] = dv[k];
      }
    }
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
        ui[0] += q[i];
        lcpUpdate(r, i, ui, 0, omega, c);
      }
      return;
    }
    for (let i = 0; i < nc; i++) {
      op.rowBlockTimes(i, r, ui);
      const k = 3 * i;
      ui[0] += q[k];
      ui[1] += q[k + 1];
      ui[2] += q[k + 2];
      coulombUpdate(r, i, ui, 0, mu, omega, c);
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
   * to be > tolerance. With friction a contact that passes coulombResidualBelow at
   * tolerance/2 (`half`) counts as ≤ tolerance without its exact value (the gate is the
   * same). `half` comes as an argument, not computed here: a double computed in this
   * function and passed on to a call V8 does not inline is a heap number at each call,
   * where an argument is passed on as it came (4.6 KB a step on S1-100 at the defaults with
   * the cheap bound not inlined).
   */
  private velocitySweep(
    op: FactoredDelassus,
    r: Float64Array,
    q: Float64Array,
    mu: Float64Array,
    omega: number,
    tolerance: number,
    half: number,
  ): number {
    const { jac, resp, dof, width, scale: s, blocks: nc, blockSize: dim } = op;
    const { dv, ui, cache: c } = this;
    const local = this.lcpMeasure === "lcp-local";
    // the contact's local velocity goes to the kernels through ui (cone.ts, file comment)
    let est = 0;
    let gg = 0;
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
        ui[0] = w;
        lcpUpdate(r, i, ui, 0, omega, c);
        const d0 = r[i] - r0;
        gg += d0 * d0;
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
      ui[0] = s * un + q[o];
      ui[1] = s * u1 + q[o + 1];
      ui[2] = s * u2 + q[o + 2];
      // most contacts of a converging pile pass the cheap bound (residual.ts); ½ tol keeps
      // round-off from deciding the gate, so the checks made are those of the exact value
      // (r[o..o+2] is still (r0, r1, r2) here)
      if (est <= tolerance && !residualBelow(mu, i, r, o, ui, 0, half)) {
        localResidual(ui, 3, mu, i, r, o, ui, 0, true);
        est = Math.max(est, ui[3]);
      }
      coulombUpdate(r, i, ui, 0, mu, omega, c);
      const d0 = r[o] - r0;
      const d1 = r[o + 1] - r1;
      const d2 = r[o + 2] - r2;
      gg += d0 * d0;
      gg += d1 * d1;
      gg += d2 * d2;
      if (d0 === 0 && d1 === 0 && d2 === 0) continue;
      for (let k = 0; k < wa; k++)
        dv[da + k] += d0 * resp[oa + k] + d1 * resp[oa + 6 + k] + d2 * resp[oa + 12 + k];
      for (let k = 0; k < wb; k++)
        dv[db + k] += d0 * resp[ob + k] + d1 * resp[ob + 6 + k] + d2 * resp[ob + 12 + k];
    }
    this.sweepStep = gg;
    return est;
  }
}
