/**
 * Shared plumbing of the Krylov solvers: the system is either a CsrMatrix or a
 * matrix-free LinearOperator, and the preconditioner is built from whichever is given.
 * Work vectors are allocated when the dimension changes, never per solve.
 */
import { type CsrMatrix, csrMultiply } from "../../math/csr";
import { AggregationMultigrid } from "./aggregation-multigrid";
import type {
  LinearOperator,
  LinearSolveInfo,
  LinearSolverOptions,
  PreconditionerName,
} from "./linear-solver";
import {
  BlockJacobiPreconditioner,
  Ic0Preconditioner,
  IdentityPreconditioner,
  Ilu0Preconditioner,
  JacobiPreconditioner,
  type Preconditioner,
} from "./preconditioners";

export type MatrixOrOperator = CsrMatrix | LinearOperator;

export function isCsrMatrix(a: MatrixOrOperator): a is CsrMatrix {
  return (a as CsrMatrix).rowPtr !== undefined;
}

/** LinearOperator view of a square CsrMatrix. */
export class CsrOperator implements LinearOperator {
  readonly n: number;
  constructor(readonly matrix: CsrMatrix) {
    if (matrix.rows !== matrix.cols) throw new Error("CsrOperator: matrix must be square");
    this.n = matrix.rows;
  }
  apply(x: Float64Array, out: Float64Array): void {
    csrMultiply(this.matrix, x, out);
  }
  diagonal(out: Float64Array): void {
    const a = this.matrix;
    out.fill(0, 0, this.n);
    for (let i = 0; i < a.rows; i++)
      for (let k = a.rowPtr[i]; k < a.rowPtr[i + 1]; k++)
        if (a.colIdx[k] === i) out[i] += a.values[k];
  }
}

export const DEFAULT_TOLERANCE = 1e-10;

/** Default iteration limit max(200, 3n). */
export function defaultMaxIterations(n: number): number {
  return Math.max(200, 3 * n);
}

/**
 * Holds the operator and the preconditioner of an iterative solver. `absoluteJacobi`
 * selects M = |diag(A)| (SPD, for MINRES).
 */
export class OperatorState {
  op: LinearOperator | null = null;
  matrix: CsrMatrix | null = null;
  precond: Preconditioner = new IdentityPreconditioner(0);
  n = 0;
  private csrOp: CsrOperator | null = null;
  private jacobi: JacobiPreconditioner | null = null;
  private blockJacobi: BlockJacobiPreconditioner | null = null;
  private multigrid: AggregationMultigrid | null = null;
  /** op.assembledVersion the multigrid's coarse term was made at (NaN: none). */
  private coarseVersion = Number.NaN;
  private ic0: Ic0Preconditioner | null = null;
  private ilu0: Ilu0Preconditioner | null = null;
  private diagWork: Float64Array = new Float64Array(0);
  private identity: IdentityPreconditioner | null = null;
  /** op.diagonalVersion the preconditioner was built from (NaN: rebuild). */
  private builtVersion = Number.NaN;

  constructor(
    readonly preconditioner: PreconditionerName,
    private readonly absoluteJacobi: boolean,
    allowed: readonly PreconditionerName[],
    private readonly solverName: string,
  ) {
    if (!allowed.includes(preconditioner))
      throw new Error(`${solverName}: preconditioner ${preconditioner} not supported`);
  }

  /** Sets the system; returns true when the dimension changed. */
  set(a: MatrixOrOperator): boolean {
    let op: LinearOperator;
    if (isCsrMatrix(a)) {
      if (!this.csrOp || this.csrOp.matrix !== a) this.csrOp = new CsrOperator(a);
      op = this.csrOp;
      this.matrix = a;
    } else {
      op = a;
      this.matrix = null;
    }
    const changed = op.n !== this.n;
    const same = op === this.op && !changed && op.diagonalVersion !== undefined;
    this.op = op;
    this.n = op.n;
    if (same && op.diagonalVersion === this.builtVersion) return false;
    this.buildPreconditioner(op);
    this.builtVersion = op.diagonalVersion ?? Number.NaN;
    return changed;
  }

  private buildPreconditioner(op: LinearOperator): void {
    const n = op.n;
    switch (this.preconditioner) {
      case "none":
        if (this.identity?.n !== n) this.identity = new IdentityPreconditioner(n);
        this.precond = this.identity;
        return;
      case "jacobi": {
        if (!this.jacobi || this.jacobi.n !== n) {
          this.jacobi = new JacobiPreconditioner(n, this.absoluteJacobi);
          this.diagWork = new Float64Array(n);
        }
        if (this.matrix) this.jacobi.updateFromCsr(this.matrix);
        else this.jacobi.updateFromOperator(op, this.diagWork);
        this.precond = this.jacobi;
        return;
      }
      case "block-jacobi":
        this.precond = this.updateBlockJacobi(op);
        return;
      case "multigrid": {
        // the two-level preconditioner when the operator offers its assembled matrix (the
        // coarse term made again when that was assembled again), else block Jacobi: SPD
        // either way
        const assembled = op.assembled?.() ?? null;
        if (assembled !== null && op.blockDiagonal) {
          this.multigrid ??= new AggregationMultigrid();
          const multigrid = this.multigrid;
          const version = op.assembledVersion ?? Number.NaN;
          if (version !== this.coarseVersion || Number.isNaN(version)) {
            multigrid.updateCoarse(assembled);
            this.coarseVersion = version;
          }
          if (multigrid.coarseReady) {
            multigrid.updateSmoother(op.blockDiagonal());
            this.precond = multigrid;
            return;
          }
        }
        this.precond = this.updateBlockJacobi(op);
        return;
      }
      case "ic0": {
        if (!this.matrix) throw new Error(`${this.solverName}: ic0 needs a CsrMatrix`);
        this.ic0 ??= new Ic0Preconditioner();
        this.ic0.update(this.matrix);
        this.precond = this.ic0;
        return;
      }
      case "ilu0": {
        if (!this.matrix) throw new Error(`${this.solverName}: ilu0 needs a CsrMatrix`);
        this.ilu0 ??= new Ilu0Preconditioner();
        this.ilu0.update(this.matrix);
        this.precond = this.ilu0;
        return;
      }
    }
  }

  private updateBlockJacobi(op: LinearOperator): BlockJacobiPreconditioner {
    if (!op.blockDiagonal)
      throw new Error(`${this.solverName}: block-jacobi needs an operator with blockDiagonal()`);
    this.blockJacobi ??= new BlockJacobiPreconditioner();
    this.blockJacobi.update(op.blockDiagonal());
    return this.blockJacobi;
  }
}

/**
 * The frame of a Krylov solver (minres.ts, gmres.ts): the tolerance and iteration limit,
 * the operator and its preconditioner (OperatorState), work storage sized by `allocate`
 * to the operator's dimension at factor(), and the opening of a solve (operator()).
 */
export abstract class KrylovSolver {
  abstract readonly name: string;
  tolerance: number;
  /** Iteration limit; undefined means defaultMaxIterations(n) = max(200, 3n). */
  maxIterations: number | undefined;
  protected readonly state: OperatorState;

  constructor(options: LinearSolverOptions, state: OperatorState) {
    this.tolerance = options.tolerance ?? DEFAULT_TOLERANCE;
    this.maxIterations = options.maxIterations;
    this.state = state;
  }

  /** Sizes the work storage for dimension n (nothing to do when it has that size). */
  protected abstract allocate(n: number): void;

  factor(a: MatrixOrOperator): void {
    this.state.set(a);
    this.allocate(this.state.n);
  }

  /** The operator of the last factor(); an error before the first. */
  protected operator(): LinearOperator {
    const op = this.state.op;
    if (!op) throw new Error(`${this.name}: solve before factor`);
    return op;
  }
}

/** The solution of A x = 0, x = 0, written into x[0..n). */
export function zeroSolution(x: Float64Array, n: number): LinearSolveInfo {
  x.fill(0, 0, n);
  return { iterations: 0, residual: 0, converged: true };
}

/** Resolved tolerance and iteration limit. */
export function iterationSettings(
  options: LinearSolverOptions,
  n: number,
): { tolerance: number; maxIterations: number } {
  return {
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE,
    maxIterations: options.maxIterations ?? defaultMaxIterations(n),
  };
}
