/**
 * Linear solvers behind one interface (see linear-solver.ts) and the factory that picks
 * one from a LinearSolverName and the matrix type flags.
 *
 * `auto` rule (n = dimension, type = AND of the contributors' MatrixType flags):
 *   n ≤ 60                       → dense: "dense-cholesky" if type has SPD (both SYMMETRIC
 *                                   and POSITIVE_DEFINITE), else "dense-lu"
 *                                   (dense factorizations beat sparse bookkeeping there);
 *   SYMMETRIC (SPD or indefinite) → "sparse-ldlt" (AMD ordering, symbolic analysis reused);
 *   otherwise                    → "sparse-lu" (threshold partial pivoting).
 * For symmetric indefinite saddle-point matrices larger than 60, pass a `regularization`
 * (see sparse-ldlt.ts) or the ordering may meet a zero pivot on the constraint block.
 */
import { ConjugateGradientSolver } from "./cg";
import { DenseCholeskySolver } from "./dense-cholesky";
import { DenseLuSolver } from "./dense-lu";
import { GmresSolver } from "./gmres";
import {
  type LinearSolver,
  type LinearSolverName,
  type LinearSolverOptions,
  MatrixType,
  type MatrixTypeFlags,
} from "./linear-solver";
import { MinresSolver } from "./minres";
import { type SparseLdltOptions, SparseLdltSolver } from "./sparse-ldlt";
import { SparseLuSolver } from "./sparse-lu";
import { QrSolver } from "./sparse-qr";

/** Largest dimension for which `auto` picks a dense factorization. */
export const AUTO_DENSE_MAX = 60;

/** The concrete solver name `auto` resolves to (other names are returned unchanged). */
export function resolveLinearSolverName(
  name: LinearSolverName,
  type: MatrixTypeFlags,
  n: number,
): Exclude<LinearSolverName, "auto"> {
  if (name !== "auto") return name;
  const spd = (type & MatrixType.SPD) === MatrixType.SPD;
  if (n <= AUTO_DENSE_MAX) return spd ? "dense-cholesky" : "dense-lu";
  if ((type & MatrixType.SYMMETRIC) !== 0) return "sparse-ldlt";
  return "sparse-lu";
}

/** Creates the solver `name` (resolving `auto` with the rule above) for dimension n. */
export function createLinearSolver(
  name: LinearSolverName,
  type: MatrixTypeFlags,
  n: number,
  options: LinearSolverOptions | SparseLdltOptions = {},
): LinearSolver {
  const concrete = resolveLinearSolverName(name, type, n);
  switch (concrete) {
    case "dense-lu":
      return new DenseLuSolver();
    case "dense-cholesky":
      return new DenseCholeskySolver();
    case "sparse-ldlt":
      return new SparseLdltSolver(options);
    case "sparse-lu":
      return new SparseLuSolver(options);
    case "sparse-qr":
      return new QrSolver(options);
    case "cg":
      return new ConjugateGradientSolver(n, options);
    case "minres":
      return new MinresSolver(n, options);
    case "gmres":
      return new GmresSolver(n, options);
  }
}

export { ConjugateGradientSolver } from "./cg";
export { DenseCholeskySolver } from "./dense-cholesky";
export { DenseLuSolver } from "./dense-lu";
export { GmresSolver } from "./gmres";
export { CsrOperator, isCsrMatrix, type MatrixOrOperator } from "./iterative-base";
export * from "./linear-solver";
export { MinresSolver } from "./minres";
export {
  type AdjacencyGraph,
  amdOrder,
  ataPattern,
  computeOrdering,
  invertPermutation,
  isPermutation,
  naturalOrder,
  rcmOrder,
  symmetricPattern,
} from "./ordering";
export {
  BlockJacobiPreconditioner,
  Ic0Preconditioner,
  IdentityPreconditioner,
  Ilu0Preconditioner,
  JacobiPreconditioner,
  type Preconditioner,
} from "./preconditioners";
export { type SparseLdltOptions, SparseLdltSolver } from "./sparse-ldlt";
export { SparseLuSolver } from "./sparse-lu";
export {
  DEFAULT_RANK_TOLERANCE,
  type DependentRows,
  dependentRows,
  QrSolver,
  qrMinNormSolve,
  type RankRevealingQr,
  rankRevealingQr,
} from "./sparse-qr";
