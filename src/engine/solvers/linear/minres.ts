/**
 * MINRES (Paige & Saunders, "Solution of sparse indefinite systems of linear
 * equations", SIAM J. Numer. Anal. 12, 1975), following the reference implementation
 * minres.m of the Stanford SOL group, for symmetric (possibly indefinite) A, e.g. the
 * saddle-point matrices [M Jᵀ; J 0] of constrained dynamics. The preconditioner must be
 * symmetric positive definite: Jacobi here uses M = |diag(A)| (zero diagonal entries,
 * as in a KKT constraint block, count as 1), or none.
 *
 * MINRES minimizes ‖r_k‖_{M⁻¹} over x0 + K_k(M⁻¹A, M⁻¹r0) with a three-term Lanczos
 * recurrence and Givens rotations; phibar is that norm. When phibar says the tolerance
 * is met, the true residual ‖b − A x‖₂ is computed; if it is still above tol·‖b‖ (the
 * norms differ by the preconditioner's scaling) the recurrence just continues toward
 * a correspondingly smaller phibar, so `converged` refers to the true relative residual.
 *
 * `factor` accepts a CsrMatrix or a matrix-free LinearOperator; work vectors are
 * allocated once per dimension.
 */

import { checkDeadline } from "../deadline";
import { defaultMaxIterations, KrylovSolver, OperatorState, zeroSolution } from "./iterative-base";
import type {
  LinearOperator,
  LinearSolveInfo,
  LinearSolver,
  LinearSolverOptions,
} from "./linear-solver";
import { dot } from "./pattern";

export class MinresSolver extends KrylovSolver implements LinearSolver {
  readonly name = "minres" as const;
  private r1: Float64Array = new Float64Array(0);
  private r2: Float64Array = new Float64Array(0);
  private y: Float64Array = new Float64Array(0);
  private v: Float64Array = new Float64Array(0);
  private w: Float64Array = new Float64Array(0);
  private w1: Float64Array = new Float64Array(0);
  private w2: Float64Array = new Float64Array(0);
  private t: Float64Array = new Float64Array(0);

  constructor(n = 0, options: LinearSolverOptions = {}) {
    super(
      options,
      new OperatorState(options.preconditioner ?? "jacobi", true, ["none", "jacobi"], "minres"),
    );
    this.allocate(n);
  }

  protected allocate(n: number): void {
    if (this.r1.length === n) return;
    this.r1 = new Float64Array(n);
    this.r2 = new Float64Array(n);
    this.y = new Float64Array(n);
    this.v = new Float64Array(n);
    this.w = new Float64Array(n);
    this.w1 = new Float64Array(n);
    this.w2 = new Float64Array(n);
    this.t = new Float64Array(n);
  }

  /** ‖b − A x‖₂ (uses the work vector t). */
  private trueResidual(op: LinearOperator, b: Float64Array, x: Float64Array): number {
    const n = op.n;
    const t = this.t;
    op.apply(x, t);
    let s = 0;
    for (let i = 0; i < n; i++) {
      const d = b[i] - t[i];
      s += d * d;
    }
    return Math.sqrt(s);
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const op = this.operator();
    const n = op.n;
    const m = this.state.precond;
    const maxIt = this.maxIterations ?? defaultMaxIterations(n);
    const bn = Math.sqrt(dot(b, b, n));
    if (bn === 0) return zeroSolution(x, n);
    const target = this.tolerance * bn;
    let { r1, r2, y, w, w1, w2 } = this;
    const v = this.v;

    // r1 = b − A x0, y = M⁻¹ r1, β1 = sqrt(r1ᵀ y).
    op.apply(x, y);
    for (let i = 0; i < n; i++) r1[i] = b[i] - y[i];
    const r0n = Math.sqrt(dot(r1, r1, n));
    if (r0n <= target) return { iterations: 0, residual: r0n / bn, converged: true };
    let beta1 = m.apply(r1, y);
    if (!(beta1 >= 0))
      return { iterations: 0, residual: this.trueResidual(op, b, x) / bn, converged: false };
    if (beta1 === 0) return { iterations: 0, residual: 0, converged: true };
    beta1 = Math.sqrt(beta1);
    for (let i = 0; i < n; i++) {
      r2[i] = r1[i];
      w[i] = 0;
      w2[i] = 0;
    }
    let oldb = 0;
    let beta = beta1;
    let dbar = 0;
    let epsln = 0;
    let phibar = beta1;
    let cs = -1;
    let sn = 0;
    // phibar/β1 ≈ ‖r‖/‖r0‖ in the M⁻¹-norm; aim it at tol·‖b‖/‖r0‖₂ (corrected below).
    let estTarget = (target / r0n) * beta1;
    let trueRn = Number.NaN;
    let it = 0;
    let converged = false;
    while (it < maxIt) {
      it++;
      if ((it & 31) === 0) checkDeadline();
      // Lanczos step: v = y/β, y = A v − (β/β_old) r1 − (α/β) r2.
      const s = 1 / beta;
      for (let i = 0; i < n; i++) v[i] = s * y[i];
      op.apply(v, y);
      if (it >= 2) {
        const c = beta / oldb;
        for (let i = 0; i < n; i++) y[i] -= c * r1[i];
      }
      const alfa = dot(v, y, n);
      const c2 = alfa / beta;
      for (let i = 0; i < n; i++) y[i] -= c2 * r2[i];
      // r1 ← r2, r2 ← y, y ← M⁻¹ r2 (rotate the three arrays, no copies).
      const tmp = r1;
      r1 = r2;
      r2 = y;
      y = tmp;
      oldb = beta;
      const bb = m.apply(r2, y);
      if (!(bb >= 0)) break; // M not positive definite
      beta = Math.sqrt(bb);
      // Apply the previous rotation, then compute and apply the new one.
      const oldeps = epsln;
      const delta = cs * dbar + sn * alfa;
      const gbar = sn * dbar - cs * alfa;
      epsln = sn * beta;
      dbar = -cs * beta;
      const gamma = Math.max(Math.hypot(gbar, beta), Number.EPSILON);
      cs = gbar / gamma;
      sn = beta / gamma;
      const phi = cs * phibar;
      phibar = sn * phibar;
      // w = (v − ε_old w1 − δ w2)/γ with w1 ← w2, w2 ← w; x += φ w.
      const denom = 1 / gamma;
      const tw = w1;
      w1 = w2;
      w2 = w;
      w = tw;
      for (let i = 0; i < n; i++) {
        const wi = (v[i] - oldeps * w1[i] - delta * w2[i]) * denom;
        w[i] = wi;
        x[i] += phi * wi;
      }
      if (phibar <= estTarget || beta === 0) {
        trueRn = this.trueResidual(op, b, x);
        if (trueRn <= target) {
          converged = true;
          break;
        }
        if (beta === 0) break; // Krylov space exhausted
        // Aim the preconditioned estimate lower by the observed mismatch.
        estTarget = Math.min(estTarget, phibar) * Math.max(1e-3, (0.5 * target) / trueRn);
        trueRn = Number.NaN;
      }
    }
    // Keep the rotated arrays in place for the next solve.
    this.r1 = r1;
    this.r2 = r2;
    this.y = y;
    this.w = w;
    this.w1 = w1;
    this.w2 = w2;
    if (Number.isNaN(trueRn)) {
      trueRn = this.trueResidual(op, b, x);
      converged = trueRn <= target;
    }
    return { iterations: it, residual: trueRn / bn, converged };
  }
}
