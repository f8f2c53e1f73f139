/**
 * Common types of the one-step nonsmooth problem solvers (Moreau–Jean time stepping, as
 * Siconos numerics' LCP and FrictionContact3D).
 *
 * Conventions (all solvers):
 * - Contact i has a local frame: normal n (unit, from body a to body b) and tangents t1, t2.
 *   Its unknowns are the local impulse r_i = (r_n, r_t1, r_t2) [N·s] and the local relative
 *   velocity u_i = (u_n, u_t1, u_t2) [m/s] at the end of the step. Without friction only the
 *   normal component exists (one row per contact).
 * - u = W r + q with W the Delassus matrix (m×m, symmetric positive semidefinite,
 *   m = contacts·contactDim) and q the free local velocity. The Newton impact law is folded
 *   into q by the caller (q_n includes e·u_n⁻), so the solvers only see complementarity.
 * - Frictionless (contactDim 1): the LCP  w = W r + q ≥ 0, r ≥ 0, wᵀr = 0.
 * - Friction (contactDim 3): Coulomb cone K_μ = {‖r_t‖ ≤ μ r_n} and, with De Saxcé's
 *   modified velocity ũ = u + μ‖u_t‖ e_n:  K_μ* ∋ ũ ⊥ r ∈ K_μ.
 * - Vectors may be longer than m (growable caller buffers); only the first m entries are
 *   read or written.
 */

/** Names accepted by `solveNonsmooth` (the model's `solver.contactSolver`). */
export type NonsmoothSolverName =
  | "pgs"
  | "nncg"
  | "lemke"
  | "apgd"
  | "pjacobi"
  | "barzilai-borwein";

/** Rows per contact: 1 = frictionless (normal only), 3 = (n, t1, t2) with Coulomb friction. */
export type ContactDim = 1 | 3;

/**
 * The Delassus matrix W as an operator, so iterative solvers can run on large sparse
 * contact sets without a dense m×m matrix. Blocks are per contact: block (i, j) couples the
 * blockSize rows of contact i with those of contact j, stored row-major.
 */
export interface DelassusOperator {
  /** Matrix dimension m = blocks · blockSize. */
  readonly size: number;
  /** Number of contacts (block rows). */
  readonly blocks: number;
  /** Rows per contact (1 or 3); must equal the problem's contactDim. */
  readonly blockSize: ContactDim;
  /** out[0 .. blockSize²) = W_ii, row-major (out3x3 for friction, out[0] without). */
  diagonalBlock(i: number, out: Float64Array): void;
  /** out[0 .. m) = W r. */
  multiply(r: Float64Array, out: Float64Array): void;
  /** out[0 .. blockSize) = Σ_j W_ij r_j: row block i of W times r (diagonal block included). */
  rowBlockTimes(i: number, r: Float64Array, out: Float64Array): void;
}

/** One nonsmooth problem: u = W r + q with the complementarity conditions above. */
export interface NonsmoothProblem {
  /** Number of contacts nc. */
  contacts: number;
  /** 1: frictionless LCP (m = nc); 3: friction contact 3-D (m = 3 nc). */
  contactDim: ContactDim;
  /**
   * Delassus matrix: dense row-major m×m (row stride m; only the first m² entries are
   * used) or an operator (dense or sparse-block, see delassus.ts).
   */
  W: Float64Array | DelassusOperator;
  /** Free local velocity q (m) [m/s], restitution already folded into q_n. */
  q: Float64Array;
  /** Friction coefficient per contact (nc, ≥ 0); required when contactDim is 3. */
  mu?: Float64Array;
}

/**
 * Solver options. Every field is optional; defaults are in DEFAULT_NONSMOOTH_OPTIONS
 * (omega: 1 for PGS, see NNCG_OMEGA for NNCG; for projected Jacobi an automatic safe
 * step, see pjacobi.ts).
 */
export interface NonsmoothOptions {
  /** Iteration limit (sweeps for PGS / Jacobi, gradient steps for APGD / BB, pivots for Lemke). */
  maxIterations?: number;
  /** Stop when the residual (see residual.ts) is ≤ tolerance (absolute, mixed units, see there). */
  tolerance?: number;
  /**
   * Relaxation of PGS, NNCG and projected Jacobi (0 < ω < 2; default 1, NNCG 0.8 after
   * its first sweep, see pgs.ts NNCG_OMEGA); unused by Lemke, APGD and BB.
   */
  omega?: number;
  /** Start from the r passed in (true) or from r = 0 (false); unused by Lemke. */
  warmStart?: boolean;
  /**
   * The warm start already meets the caller's tolerance and the solve continues past it
   * (contact/nonsmooth-contact.ts, a continued solve): nncg then makes plain PGS sweeps
   * (pgs.ts, accelerate).
   */
  polish?: boolean;
}

export const DEFAULT_NONSMOOTH_OPTIONS = {
  maxIterations: 1000,
  tolerance: 1e-10,
  omega: 1,
  warmStart: true,
  polish: false,
} as const;

/**
 * Which residual a result reports (residual.ts): "lcp" is ‖min(r, W r + q)‖∞; "lcp-local"
 * is ‖min(W_ii r_i, w_i)‖∞, the same natural map in the units of w (PGS on request, for
 * tolerances on w: a gap in m for the position projection); "coulomb" is the projection
 * residual of the exact Coulomb problem (De Saxcé term included); "ccp" is the same
 * projection residual without the De Saxcé term, i.e. the KKT residual of the convex
 * cone-complementarity relaxation that APGD and BB solve.
 */
export type ResidualMeasure = "lcp" | "lcp-local" | "coulomb" | "ccp";

/** How a solve ended. */
export type NonsmoothStatus =
  | "converged"
  /** Iteration (or pivot) limit reached before the tolerance. */
  | "max-iterations"
  /** Lemke: ray termination, the LCP has no solution (W PSD ⇒ infeasible). */
  | "ray-termination"
  /** The iterate stopped moving above the tolerance (tolerance below round-off). */
  | "stalled"
  /** A NaN or infinite residual appeared (bad data, e.g. NaN in W or q). */
  | "diverged";

export interface NonsmoothResult {
  /** Iterations (sweeps, gradient steps, or Lemke pivots) performed. */
  iterations: number;
  /** Final residual in the measure below, for the r left in the caller's array. */
  residual: number;
  /** True when the residual reached the tolerance (Lemke: a complementary basis was found). */
  converged: boolean;
  /** The residual's definition (depends on the solver's formulation and contactDim). */
  measure: ResidualMeasure;
  status: NonsmoothStatus;
  /** Human-readable reason when not converged. */
  message?: string;
}

/** A solver instance owns its workspace (grown on demand, never per iteration). */
export interface NonsmoothSolver {
  readonly name: NonsmoothSolverName;
  /**
   * Solves the problem; r (m) is the warm start on entry (when options.warmStart) and the
   * solution on exit.
   */
  solve(problem: NonsmoothProblem, r: Float64Array, options?: NonsmoothOptions): NonsmoothResult;
}

/** Raised for malformed problems (sizes, negative μ) and unsupported combinations. */
export class NonsmoothProblemError extends Error {
  override name = "NonsmoothProblemError";
}
