import type { SparseBlockMatrix } from "../../math/block-matrix";
import type { CsrMatrix } from "../../math/csr";

/**
 * Jacobian/matrix type flags, as ArtiSynth's Matrix.SYMMETRIC and
 * Matrix.POSITIVE_DEFINITE. A solve matrix's type is the bitwise AND of the types of
 * everything that contributed to it; the type picks the linear solver.
 */
export const MatrixType = {
  GENERAL: 0,
  SYMMETRIC: 1,
  POSITIVE_DEFINITE: 2,
  SPD: 3,
} as const;
export type MatrixTypeFlags = number;

export type LinearSolverName =
  | "auto"
  | "dense-lu"
  | "dense-cholesky"
  | "sparse-ldlt"
  | "sparse-lu"
  | "sparse-qr"
  | "cg"
  | "minres"
  | "gmres";

/** What one solve did; iterative solvers fill iterations and residual. */
export interface LinearSolveInfo {
  /** Iterations used (0 for a direct solver). */
  iterations: number;
  /** Final relative residual ‖b − A x‖₂ / ‖b‖₂ (0 for a direct solver unless measured). */
  residual: number;
  /** False when an iterative solver hit its limit or a factorization met a zero pivot. */
  converged: boolean;
}

/**
 * One interface for every linear solver. Usage per step:
 *   solver.factor(A)   (analyses the pattern on first use or when it changes, then
 *                       refactors numerically; iterative solvers build a preconditioner)
 *   solver.solve(b, x) (x is used as the initial guess by iterative solvers)
 * `factor` may be called with the same CsrMatrix object whose `values` changed; direct
 * solvers must then reuse their symbolic analysis (ordering, elimination tree, fill
 * pattern) and allocate nothing.
 */
export interface LinearSolver {
  readonly name: LinearSolverName;
  factor(a: CsrMatrix): void;
  solve(b: Float64Array, x: Float64Array): LinearSolveInfo;
}

/**
 * The Krylov solvers (cg, minres, gmres): a relative tolerance that may change between
 * solves, and `factor` also takes a matrix-free LinearOperator.
 */
export interface IterativeLinearSolver extends LinearSolver {
  tolerance: number;
  /** Iteration limit; undefined: the solver's default. */
  maxIterations: number | undefined;
  factor(a: CsrMatrix | LinearOperator): void;
}

const ITERATIVE: ReadonlySet<LinearSolverName> = new Set(["cg", "minres", "gmres"]);

export function isIterative(s: LinearSolver): s is IterativeLinearSolver {
  return ITERATIVE.has(s.name);
}

/**
 * A square linear operator for matrix-free iterative solvers: `apply` writes A x into
 * `out` (never aliasing x) and must not allocate. `diagonal`, when present, writes
 * diag(A) into `out`; the Jacobi preconditioner uses it (without it Jacobi is the
 * identity). `blockDiagonal`, when present, returns a SparseBlockMatrix whose diagonal
 * blocks are A's (its other blocks are ignored); the block-Jacobi preconditioner needs it.
 */
export interface LinearOperator {
  readonly n: number;
  apply(x: Float64Array, out: Float64Array): void;
  diagonal?(out: Float64Array): void;
  blockDiagonal?(): SparseBlockMatrix;
  /**
   * When present, changes exactly when diagonal() / blockDiagonal() do: a solver given the
   * same operator again rebuilds its preconditioner only then (the Newton operator keeps
   * its diagonal at the mass while the mass preconditions well enough, see
   * integrators/iteration-operator.ts).
   */
  readonly diagonalVersion?: number;
  /**
   * When present, for the "multigrid" preconditioner (aggregation-multigrid.ts): A
   * assembled in 3×3 blocks at its last assembly, whose coarse term is made from it again
   * when `assembledVersion` changed (a coarse term of an earlier A is still an SPD
   * preconditioner; block Jacobi is always blockDiagonal()'s); null: block Jacobi alone.
   */
  assembled?(): SparseBlockMatrix | null;
  /** Changes at every assembly of assembled() (with it). */
  readonly assembledVersion?: number;
}

/** Fill-reducing orderings of the sparse direct solvers (see ordering.ts). */
export type OrderingName = "amd" | "amd-ata" | "rcm" | "natural";

/** Preconditioners of the iterative solvers (see preconditioners.ts). */
export type PreconditionerName = "none" | "jacobi" | "block-jacobi" | "multigrid" | "ic0" | "ilu0";

/**
 * Options of every solver; each solver reads the fields that concern it and ignores the
 * others, so one options object can travel with a `LinearSolverName`.
 */
export interface LinearSolverOptions {
  /** Relative residual tolerance of iterative solvers (default 1e-10). */
  tolerance?: number;
  /** Iteration limit of iterative solvers (default max(200, 3n); GMRES counts inner steps). */
  maxIterations?: number;
  /**
   * Fill-reducing ordering. sparse-ldlt: "amd" (default, on the pattern of A + Aᵀ),
   * "rcm", "natural". sparse-lu: "amd" (default, AMD on A + Aᵀ, for structurally
   * near-symmetric matrices), "amd-ata" (AMD on AᵀA, for strongly nonsymmetric
   * patterns), "rcm", "natural".
   */
  ordering?: OrderingName;
  /**
   * sparse-ldlt static diagonal regularization δ ≥ 0, in the units of A's entries. The
   * factored matrix is A + δ S with S = diag(±1): +1 where A_ii > 0, −1 where A_ii ≤ 0
   * (the zero/negative constraint block of a KKT matrix), which makes a saddle-point
   * matrix quasi-definite. Solves are corrected by iterative refinement against A.
   */
  regularization?: number;
  /** Iterative refinement steps of sparse-ldlt (default 3 when regularization > 0, else 0). */
  refinementSteps?: number;
  /**
   * sparse-lu diagonal preference: the diagonal entry is taken as pivot when
   * |a_diag| ≥ pivotTolerance · max|a_column| (1 = plain partial pivoting). Default 0.1.
   */
  pivotTolerance?: number;
  /** sparse-qr relative rank tolerance: |R_kk| ≤ rankTolerance·|R_00| counts as zero. Default 1e-10. */
  rankTolerance?: number;
  /** Preconditioner of cg / minres / gmres (default "jacobi"). */
  preconditioner?: PreconditionerName;
  /** GMRES restart length m (default 30). */
  restart?: number;
}
