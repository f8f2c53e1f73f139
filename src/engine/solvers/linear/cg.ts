/**
 * Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, "Iterative Methods
 * for Sparse Linear Systems", 2nd ed., alg. 9.1) for symmetric positive definite A, with
 * a symmetric positive definite preconditioner M: Jacobi (default), block Jacobi, IC(0) or
 * none.
 *
 * Stopping: the recursively updated residual r_k reaching ‖r_k‖ ≤ tol·‖b‖ is confirmed
 * with the true residual b − A x_k; if rounding made them drift apart, r is replaced by
 * the true residual and CG restarts from x_k (residual replacement), so `converged`
 * refers to the true relative residual. The confirmation costs one product, a quarter of
 * an inexact Newton step's solve, and is skipped when it cannot matter: the gap between
 * the two residuals grows like k·ε·‖A‖‖x‖ (Greenbaum, "Estimating the attainable accuracy
 * of recursively computed residual methods", SIAM J. Matrix Anal. Appl. 18, 1997), so
 * for a loose tolerance (≥ LOOSE_TOLERANCE) reached within CONFIRM_AFTER iterations the
 * recursive residual is reported as it is. p_kᵀ A p_k ≤ 0 (A not SPD) or
 * r_kᵀ M⁻¹ r_k ≤ 0 (M not SPD) stops the iteration (converged = false unless the
 * true residual already meets the tolerance).
 *
 * `factor` accepts a CsrMatrix or a matrix-free LinearOperator {n, apply, diagonal?};
 * work vectors are allocated once per dimension.
 */

import { checkDeadline } from "../deadline";
import {
  DEFAULT_TOLERANCE,
  defaultMaxIterations,
  type MatrixOrOperator,
  OperatorState,
} from "./iterative-base";
import type {
  LinearOperator,
  LinearSolveInfo,
  LinearSolver,
  LinearSolverOptions,
} from "./linear-solver";
import { dot } from "./pattern";

/** Tolerances from which a quick convergence is not confirmed (see the header). */
const LOOSE_TOLERANCE = 1e-6;
const CONFIRM_AFTER = 50;

export class ConjugateGradientSolver implements LinearSolver {
  readonly name = "cg" as const;
  tolerance: number;
  /** Iteration limit; undefined means max(200, 3n). */
  maxIterations: number | undefined;
  private readonly state: OperatorState;
  private r: Float64Array = new Float64Array(0);
  private z: Float64Array = new Float64Array(0);
  private p: Float64Array = new Float64Array(0);
  private q: Float64Array = new Float64Array(0);

  constructor(n = 0, options: LinearSolverOptions = {}) {
    this.tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
    this.maxIterations = options.maxIterations;
    this.state = new OperatorState(
      options.preconditioner ?? "jacobi",
      false,
      ["none", "jacobi", "block-jacobi", "ic0"],
      "cg",
    );
    this.allocate(n);
  }

  private allocate(n: number): void {
    if (this.r.length === n) return;
    this.r = new Float64Array(n);
    this.z = new Float64Array(n);
    this.p = new Float64Array(n);
    this.q = new Float64Array(n);
  }

  /** Sets the system matrix (CsrMatrix) or operator and rebuilds the preconditioner. */
  factor(a: MatrixOrOperator): void {
    this.state.set(a);
    this.allocate(this.state.n);
  }

  solve(b: Float64Array, x: Float64Array): LinearSolveInfo {
    const op = this.state.op as LinearOperator | null;
    if (!op) throw new Error("cg: solve before factor");
    const n = op.n;
    const m = this.state.precond;
    const { r, z, p, q } = this;
    const maxIt = this.maxIterations ?? defaultMaxIterations(n);
    const bn = Math.sqrt(dot(b, b, n));
    if (bn === 0) {
      x.fill(0, 0, n);
      return { iterations: 0, residual: 0, converged: true };
    }
    const target = this.tolerance * bn;
    // r = b − A x (no product for the usual start x = 0), then p = z = M⁻¹ r.
    let zeroStart = true;
    for (let i = 0; i < n && zeroStart; i++) zeroStart = x[i] === 0;
    if (zeroStart) for (let i = 0; i < n; i++) r[i] = b[i];
    else {
      op.apply(x, q);
      for (let i = 0; i < n; i++) r[i] = b[i] - q[i];
    }
    let rn = Math.sqrt(dot(r, r, n));
    let rz = m.apply(r, z);
    for (let i = 0; i < n; i++) p[i] = z[i];
    let it = 0;
    let trueRn = Number.NaN;
    const trusted = this.tolerance >= LOOSE_TOLERANCE;
    for (;;) {
      if ((it & 31) === 31) checkDeadline();
      if (rn <= target && trusted && it <= CONFIRM_AFTER) {
        trueRn = rn;
        break;
      }
      if (rn <= target) {
        op.apply(x, q);
        for (let i = 0; i < n; i++) q[i] = b[i] - q[i];
        trueRn = Math.sqrt(dot(q, q, n));
        if (trueRn <= target || it >= maxIt) break;
        // Residual replacement and restart from the current iterate.
        for (let i = 0; i < n; i++) r[i] = q[i];
        rn = trueRn;
        rz = m.apply(r, z);
        for (let i = 0; i < n; i++) p[i] = z[i];
        trueRn = Number.NaN;
      }
      if (it >= maxIt) break;
      if (!(rz > 0)) {
        break;
      }
      op.apply(p, q);
      const pq = dot(p, q, n);
      if (!(pq > 0)) {
        break;
      }
      const alpha = rz / pq;
      let rr = 0;
      for (let i = 0; i < n; i++) {
        x[i] += alpha * p[i];
        const ri = r[i] - alpha * q[i];
        r[i] = ri;
        rr += ri * ri;
      }
      rn = Math.sqrt(rr);
      it++;
      const rzNew = m.apply(r, z);
      const beta = rzNew / rz;
      rz = rzNew;
      for (let i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    if (Number.isNaN(trueRn)) {
      op.apply(x, q);
      for (let i = 0; i < n; i++) q[i] = b[i] - q[i];
      trueRn = Math.sqrt(dot(q, q, n));
    }
    return {
      iterations: it,
      residual: trueRn / bn,
      converged: trueRn <= target,
    };
  }
}
