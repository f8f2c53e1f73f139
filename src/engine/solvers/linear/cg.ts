/**
 * Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Saad, "Iterative Methods
 * for Sparse Linear Systems", 2nd ed., alg. 9.1) for symmetric positive definite A, with
 * a symmetric positive definite preconditioner M: Jacobi (default), block Jacobi, the
 * two-level aggregation multigrid (aggregation-multigrid.ts), IC(0) or none.
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
 * A preconditioner may take over the update of x and r (ResidualStepPreconditioner: the
 * two-level one's block-Jacobi sweep and restriction read the new r as it is formed) and
 * the next direction (applyDirection): the same numbers, fewer passes over the vectors.
 *
 * `factor` accepts a CsrMatrix or a matrix-free LinearOperator {n, apply, diagonal?};
 * work vectors are allocated once per dimension. The iteration itself
 * (conjugateGradients) also serves factored-pcg.ts, which trusts its recursive residual
 * and stops on a work budget (CgRun's confirm and afterIteration).
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
import {
  type Preconditioner,
  STEP_ALPHA,
  STEP_RR,
  STEP_RZ,
  stepsResidual,
} from "./preconditioners";

/** Tolerances from which a quick convergence is not confirmed (see the header). */
const LOOSE_TOLERANCE = 1e-6;
const CONFIRM_AFTER = 50;

/** CG's work vectors (length ≥ n each): residual r, preconditioned z, direction p, A p. */
export interface CgVectors {
  r: Float64Array;
  z: Float64Array;
  p: Float64Array;
  q: Float64Array;
}

export function cgVectors(n: number): CgVectors {
  return {
    r: new Float64Array(n),
    z: new Float64Array(n),
    p: new Float64Array(n),
    q: new Float64Array(n),
  };
}

/** ‖r‖ ≤ target is always confirmed with the true residual. */
const confirmAlways = (_iterations: number): boolean => true;
/** ‖r‖ ≤ target is taken as it is (the recursive residual, trusted). */
export const confirmNever = (_iterations: number): boolean => false;
/** A loose tolerance reached within CONFIRM_AFTER iterations is trusted (see the header). */
const confirmAfterLoose = (iterations: number): boolean => iterations > CONFIRM_AFTER;

/** A caller's target for a CG iterate: x and its residual norm ‖b − A x‖₂ (CgRun.accept). */
export interface CgAcceptance {
  accepts(x: Float64Array, residualNorm: number): boolean;
}

/** The settings and the outcome of one conjugateGradients run (one per solver, reused). */
export class CgRun {
  /** Whether ‖r‖ ≤ target reached after this many iterations is confirmed (b − A x). */
  confirm: (iterations: number) => boolean = confirmAlways;
  /**
   * Called after every iteration with the count so far (work accounting); false stops a
   * run not yet at its target (a work budget, factored-pcg.ts). null: never stops.
   */
  afterIteration: ((iterations: number) => boolean) | null = null;
  /**
   * A second target, the caller's (Newton's test on an affine residual,
   * acceleration-step.ts): true for the iterate x with the residual norm ‖r‖₂ given ends
   * the run as if at ‖r‖ ≤ target. null: none.
   */
  accept: CgAcceptance | null = null;
  /** The run ended on `accept` (its iterate met the caller's target). */
  accepted = false;
  iterations = 0;
  /** ‖r‖₂ at the end: the true residual when it was confirmed, else the recursive one. */
  residual = 0;
  /**
   * The run ended at ‖r‖ ≤ target (trusted or confirmed) or on a confirmation that failed
   * at the iteration limit: `residual` is the one to report. False: stopped short (limit,
   * breakdown, budget) with the recursive residual.
   */
  settled = false;
}

/**
 * Preconditioned CG (the header's algorithm) on A x = b from the x given (zero: no
 * product for the first residual) until ‖r‖₂ ≤ target, `limit` iterations, a breakdown
 * (pᵀAp ≤ 0 or rᵀM⁻¹r ≤ 0) or run.afterIteration's stop; the outcome in `run`. M⁻¹ is
 * not applied to a residual that ends the run (at the target or the limit, or stopped):
 * CG needs it only for a next direction. A reached target that run.confirm asks to
 * confirm is checked with the true residual b − A x, which replaces r if the two drifted
 * apart (residual replacement: CG restarts from x).
 */
export function conjugateGradients(
  a: Pick<LinearOperator, "apply">,
  m: Preconditioner,
  n: number,
  b: Float64Array,
  x: Float64Array,
  v: CgVectors,
  target: number,
  limit: number,
  run: CgRun,
): void {
  const { r, z, p, q } = v;
  let zeroStart = true;
  for (let i = 0; i < n && zeroStart; i++) zeroStart = x[i] === 0;
  if (zeroStart) for (let i = 0; i < n; i++) r[i] = b[i];
  else {
    a.apply(x, q);
    for (let i = 0; i < n; i++) r[i] = b[i] - q[i];
  }
  let rn = Math.sqrt(dot(r, r, n));
  // rz = rᵀz, and every value it takes from a call, through unary +: V8 types what a call
  // it does not inline returns as anything, and kept rz, which also takes doubles, boxed:
  // a heap number an iteration (0.5 KB a step on S3-32-stiff at the defaults). + of a
  // number is that number.
  let rz = +m.apply(r, z);
  for (let i = 0; i < n; i++) p[i] = z[i];
  let it = 0;
  run.settled = false;
  const accept = run.accept;
  // the preconditioner's first pass within the update of x and r (ResidualStepPreconditioner)
  const fused = stepsResidual(m) ? m : null;
  // whether the current iterate meets run.accept (tested once per iterate)
  let accepted = false;
  run.accepted = false;
  for (;;) {
    if ((it & 31) === 31) checkDeadline();
    if (rn <= target || accepted) {
      if (!run.confirm(it)) {
        run.settled = true;
        break;
      }
      a.apply(x, q);
      for (let i = 0; i < n; i++) q[i] = b[i] - q[i];
      const trueRn = Math.sqrt(dot(q, q, n));
      if (accepted) accepted = accept?.accepts(x, trueRn) === true;
      if (trueRn <= target || accepted || it >= limit) {
        rn = trueRn;
        run.settled = true;
        break;
      }
      // residual replacement and restart from the current iterate
      for (let i = 0; i < n; i++) r[i] = q[i];
      rn = trueRn;
      rz = +m.apply(r, z);
      for (let i = 0; i < n; i++) p[i] = z[i];
    }
    if (it >= limit || !(rz > 0)) break;
    a.apply(p, q);
    const pq = dot(p, q, n);
    if (!(pq > 0)) break;
    const alpha = rz / pq;
    let rr = 0;
    if (fused !== null) {
      // its scalars through fused.scalars (see ResidualStepPreconditioner)
      fused.scalars[STEP_ALPHA] = alpha;
      fused.stepResidual(x, p, r, q, z);
      rr = fused.scalars[STEP_RR];
    } else
      for (let i = 0; i < n; i++) {
        x[i] += alpha * p[i];
        const ri = r[i] - alpha * q[i];
        r[i] = ri;
        rr += ri * ri;
      }
    rn = Math.sqrt(rr);
    it++;
    const goOn = run.afterIteration === null || run.afterIteration(it);
    accepted = accept !== null && rn > target && accept.accepts(x, rn);
    // the loop's top confirms or stops: no next direction needed
    if (rn <= target || it >= limit || accepted) continue;
    if (!goOn) break;
    if (fused !== null) {
      fused.scalars[STEP_RZ] = rz;
      fused.completeDirection(z, p);
      rz = fused.scalars[STEP_RZ];
    } else if (m.applyDirection !== undefined) rz = +m.applyDirection(r, z, p, rz);
    else {
      const rzNew = +m.apply(r, z);
      const beta = rzNew / rz;
      rz = rzNew;
      for (let i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
  }
  run.iterations = it;
  run.residual = rn;
  run.accepted = accepted;
}

export class ConjugateGradientSolver implements LinearSolver {
  readonly name = "cg" as const;
  tolerance: number;
  /** A second target of the next solves (CgRun.accept); null: the tolerance alone. */
  accept: CgAcceptance | null = null;
  /** Iteration limit; undefined means max(200, 3n). */
  maxIterations: number | undefined;
  private readonly state: OperatorState;
  private vectors: CgVectors = cgVectors(0);
  private readonly run = new CgRun();

  constructor(n = 0, options: LinearSolverOptions = {}) {
    this.tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
    this.maxIterations = options.maxIterations;
    this.state = new OperatorState(
      options.preconditioner ?? "jacobi",
      false,
      ["none", "jacobi", "block-jacobi", "multigrid", "ic0"],
      "cg",
    );
    this.allocate(n);
  }

  private allocate(n: number): void {
    if (this.vectors.r.length !== n) this.vectors = cgVectors(n);
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
    const bn = Math.sqrt(dot(b, b, n));
    if (bn === 0) {
      x.fill(0, 0, n);
      return { iterations: 0, residual: 0, converged: true };
    }
    const target = this.tolerance * bn;
    const run = this.run;
    run.confirm = this.tolerance >= LOOSE_TOLERANCE ? confirmAfterLoose : confirmAlways;
    run.accept = this.accept;
    const limit = this.maxIterations ?? defaultMaxIterations(n);
    conjugateGradients(op, this.state.precond, n, b, x, this.vectors, target, limit, run);
    let rn = run.residual;
    if (!run.settled) {
      // stopped short (limit, breakdown): the true residual is reported
      const q = this.vectors.q;
      op.apply(x, q);
      for (let i = 0; i < n; i++) q[i] = b[i] - q[i];
      rn = Math.sqrt(dot(q, q, n));
    }
    return {
      iterations: run.iterations,
      residual: rn / bn,
      converged: rn <= target || (run.settled && run.accepted),
    };
  }
}
