/**
 * The iteration matrix of the Newton step (acceleration-step.ts) and its linear solver:
 *   W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D,   K = −∂f/∂x, D = −∂f/∂v,
 * assembled from the force effectors at the current state into a sparse block matrix
 * (ArtiSynth's solve matrix), then factored and solved by one of five paths:
 * - W = (1 + c_v r_M) M (no effector has Jacobians, or w = 0 and r_K = 0): M⁻¹ per body,
 *   nothing assembled;
 * - `auto` on elastic solids without joints (3×3 blocks): CG preconditioned by a block
 *   LDLᵀ factorization reused across iterations and steps (factored-pcg.ts);
 * - `auto` above the dense size on a W whose pattern is block diagonal (free rigid
 *   bodies): each block inverted on its own;
 * - a Krylov solver on the matrix-free operator (iteration-operator.ts) when every
 *   effector offers Jacobian products;
 * - otherwise the chosen solver (solvers/linear: dense, sparse direct or Krylov) on W's CSR.
 * It also applies W's parts M and K to vectors (the residual's inertia and Rayleigh
 * terms), and adds the wall time of assembly and of factor + solve to `timing`.
 * The joints' saddle-point system built on this W is constrained-solve.ts's.
 */

import type { SchemeCoefficients } from "../dynamics/stepper";
import { type ForceEffector, isSymmetrizable } from "../forces/effector";
import { GyroscopicEffector } from "../forces/gyroscopic";
import { SparseBlockMatrix } from "../math/block-matrix";
import { addMassBlocks, type BodySystem, massMultiply, massSolve } from "../model/body-system";
import { AUTO_DENSE_MAX, createLinearSolver, resolveLinearSolverName } from "../solvers/linear";
import { BlockLdlt } from "../solvers/linear/block-ldlt";
import { type CgAcceptance, ConjugateGradientSolver } from "../solvers/linear/cg";
import { FactoredPcg, type FactorizationMemory } from "../solvers/linear/factored-pcg";
import {
  isIterative,
  type LinearSolver,
  type LinearSolverName,
  type LinearSolverOptions,
  MatrixType,
} from "../solvers/linear/linear-solver";
import { BlockJacobiPreconditioner } from "../solvers/linear/preconditioners";
import {
  INITIAL_PRECONDITIONING,
  IterationOperator,
  type OperatorPreconditioning,
} from "./iteration-operator";

/** Preconditioners of CG on the assembled matrix (solver.linearPreconditioner). */
export type CgPreconditioner = "none" | "jacobi" | "ic0";

/**
 * Krylov tolerance of the Newton step: relative residual η = max(Newton tolerance, 1e-12),
 * an inexact Newton method (Dembo, Eisenstat & Steihaug, SIAM J. Numer. Anal. 19, 1982);
 * iterated Newton loosens it while far from the solution (acceleration-step.ts,
 * `forcingTerm`). The error it leaves in Δa is at most κ(W) η ‖Δa‖ (2-norms), of the order
 * of what the Newton test ‖Δa‖∞ ≤ tol (1 + ‖a‖∞) accepts as converged when W is well
 * conditioned (κ(W) of order 1 when the mass dominates W: resolved springs); for a
 * linearized step (one iteration) it adds to the linearization error, which dominates at
 * the tolerances used (bench/README.md, "Cloth"). The floor keeps η above rounding.
 */
export const LINEAR_TOLERANCE_FLOOR = 1e-12;

/**
 * Iterative solvers of the Newton step: incomplete factorizations as preconditioners
 * (IC(0) for CG, ILU(0) for GMRES), since stiff springs make Jacobi's convergence slow;
 * on the matrix-free operator (iteration-operator.ts), which has no CSR matrix to factor,
 * block Jacobi on the operator's diagonal (the mass, or the full block diagonal after a
 * hard solve: FEW_ITERATIONS), for CG with the two-level aggregation term after a very
 * hard one ("multigrid": nextPreconditioning). Their relative tolerance is set per solve
 * (see LINEAR_TOLERANCE_FLOOR).
 */
function solverOptions(
  name: LinearSolverName,
  matrixFree: boolean,
  cgPreconditioner: CgPreconditioner | null,
): LinearSolverOptions {
  const preconditioner = matrixFree
    ? name === "cg"
      ? "multigrid"
      : "block-jacobi"
    : name === "cg"
      ? (cgPreconditioner ?? "ic0")
      : name === "gmres"
        ? "ilu0"
        : undefined;
  return { tolerance: LINEAR_TOLERANCE_FLOOR, preconditioner };
}

/**
 * Krylov iterations up to which a matrix-free solve counts as easy: the next one is then
 * preconditioned by the mass alone, a harder one's successor by the full block diagonal
 * (iteration-operator.ts: the full diagonal costs about one iteration per solve).
 */
const FEW_ITERATIONS = 8;

/**
 * Block-Jacobi CG iterations from which the next matrix-free solve of a particle system
 * takes the two-level preconditioner (aggregation-multigrid.ts): it also assembles W once
 * a step and factors the coarse matrix (together about four block-Jacobi iterations on
 * the 32 × 32 cloth) and makes each iteration ~1.4 times dearer, and pays where it cuts
 * the iterations by more than that: on the stiff cloth 94 → 43 a step (bench/README.md,
 * "Stiff cloth"). Solves of a few tens of iterations gain little either way.
 */
const MULTIGRID_FROM = 20;

/**
 * Two-level iterations up to which W counts as close to the mass matrix: after a step
 * whose solves all took at most this many, the next step's are preconditioned by the mass
 * alone (a solve the two-level preconditioner finishes in one iteration takes M⁻¹ a few).
 * Per step, not per solve: a step's first solves, to the loose first forcing terms, take
 * a few iterations even on the stiff cloth, its last one tens.
 */
const MULTIGRID_FEW = 1;

/**
 * The matrix-free operator's preconditioning for the next solve after one that took
 * `iterations` with `current` (iteration-operator.ts): the mass after an easy solve, the
 * full block diagonal after a harder one, the two-level preconditioner (particles, CG)
 * after one that block Jacobi found hard; that one stays for the rest of the step (see
 * MULTIGRID_FEW for leaving it).
 */
function nextPreconditioning(
  current: OperatorPreconditioning,
  iterations: number,
  multigridPossible: boolean,
): OperatorPreconditioning {
  if (current === "multigrid") return current;
  if (iterations > MULTIGRID_FROM && multigridPossible) return "multigrid";
  return iterations > FEW_ITERATIONS ? "diagonal" : "mass";
}

/**
 * Solvers that need a symmetric matrix: with one of them the effectors that can are asked
 * for their symmetric Jacobian approximation (same forces, so the same Newton solution).
 */
const SYMMETRIC_SOLVERS: readonly LinearSolverName[] = [
  "cg",
  "minres",
  "sparse-ldlt",
  "dense-cholesky",
];

/**
 * Size (dofs) from which `auto` runs CG on the matrix-free operator when there is one: above
 * the dense size. Below 1 000 unknowns, where a sparse factorization used to be taken, CG was
 * 4 to 29 times faster on cloths (bench/README.md, "Central difference").
 */
const AUTO_KRYLOV_MIN_DOFS = AUTO_DENSE_MAX + 1;

/** Size (dofs) from which `auto` runs IC(0)-preconditioned CG on SPD elastic solids. */
const AUTO_SOLID_CG_MIN_DOFS = 5000;

/** Krylov solvers that run on the matrix-free operator when every effector offers it. */
const MATRIX_FREE_SOLVERS: readonly LinearSolverName[] = ["cg", "gmres"];

/** The matrix-free CG's memory across steps (IterationMatrix.saveKrylovMemory). */
export interface KrylovMemory {
  preconditioning: OperatorPreconditioning;
  /** The most Krylov iterations a solve of the last step took. */
  stepIterations: number;
}

/**
 * Accumulated wall time (ms) of matrix assembly and of factor + solve: a class with
 * doubles from the start (−0), see BodySystem on V8.
 */
export class SolveTiming {
  assembly = -0;
  solve = -0;
}

/**
 * W of one simulation, its solver and their work storage. Allocates in the constructor
 * and when the solver is chosen again (effectorsChanged, setLinearSolver) only.
 */
export class IterationMatrix {
  readonly n: number;
  /** W at the last `assemble` (also the scratch of `stiffnessTimes`). */
  readonly matrix: SparseBlockMatrix;
  /** AND of every effector's jacobianType: the solve matrix's type (set with the solver). */
  private matrixType: number = MatrixType.SPD;
  /** Accumulated wall time of assembly and of factor + solve, for benchmarks. */
  readonly timing = new SolveTiming();
  /** Every effector's Jacobians are empty (see `effectorsChanged`). */
  private massOnly = false;
  /** Some effector's stiffness bounds Newton's resolution (ForceEffector.roundingBound). */
  private boundedByRounding = false;
  /** Effectors with a mass matrix of their own (ForceEffector.addMassProduct). */
  private massEffectors: ForceEffector[] = [];
  private solver: LinearSolver | null = null;
  /**
   * CG's preconditioner asked for (solver.linearPreconditioner; null: IC(0) on the assembled
   * matrix, the operator's own on the matrix-free one).
   */
  private cgPreconditioner: CgPreconditioner | null = null;
  /**
   * `auto` on fem bodies whose nodes are the only moving bodies, without joints: CG on the
   * assembled W of 3×3 blocks preconditioned by a reused block LDLᵀ factorization
   * (factored-pcg.ts; see selectSolver), or null.
   */
  private blockSolver: FactoredPcg | null = null;
  /**
   * `sparse-ldlt` on a system of particles or fem nodes alone (3×3 blocks, no joints): the
   * same factorization of W's symmetric part (up-looking LDLᵀ, AMD, no pivoting) on node
   * blocks, read from W without a CSR copy (block-ldlt.ts), or null. On the 11 × 11 cloth
   * of examples/cloth.json (357 unknowns) 0.69 ms a factorization scalar (bench/README.md,
   * "Block LDLᵀ for sparse-ldlt").
   */
  private directBlock: BlockLdlt | null = null;
  /**
   * `auto` above the dense size on a W whose pattern is block diagonal (rigid bodies
   * without joints or couplings: each body's mass and gyroscopic Jacobian, 6×6, not
   * symmetric for an anisotropic spinning body): every block inverted on its own
   * (Gauss–Jordan with partial pivoting, preconditioners.ts), the exact W⁻¹ in O(bodies)
   * instead of a sparse LU's symbolic and numeric work. `diagonalFactored` tells whether
   * the last `factor` took this path (no singular block).
   */
  private readonly diagonalInverse = new BlockJacobiPreconditioner();
  /** Whether the last `factor` inverted W's blocks (see diagonalInverse). */
  diagonalFactored = false;
  private solverName: LinearSolverName = "auto";
  /** The solver actually used: solverName, or cg for `auto` on a large matrix-free system. */
  private solverChoice: LinearSolverName = "auto";
  /** The matrix-free W when every Jacobian effector offers products, else null. */
  private operator: IterationOperator | null = null;
  private matrixFree = false;
  /** CG on the operator of a particle system: the multigrid may precondition it. */
  private multigridPossible = false;
  /** The most iterations a solve took since the last `announce` (the step's start). */
  private stepIterations = 0;

  /**
   * @param jointed whether the system has bilateral constraints, whose saddle-point solve
   *   (constrained-solve.ts) takes W assembled: no factored-PCG path then.
   */
  constructor(
    private readonly sys: BodySystem,
    private readonly effectors: readonly ForceEffector[],
    linearSolver: LinearSolverName,
    private readonly jointed: boolean,
    preconditioner: CgPreconditioner | null = null,
  ) {
    this.n = sys.numDofs;
    this.matrix = new SparseBlockMatrix(sys.blockSizes);
    for (const e of effectors) e.addSolveBlocks(this.matrix);
    this.matrix.finalize();
    this.solverName = linearSolver;
    this.cgPreconditioner = preconditioner;
    this.effectorsChanged();
  }

  /** Some effector's stiffness bounds Newton's resolution (ForceEffector.roundingBound). */
  get roundingBound(): boolean {
    return this.boundedByRounding;
  }

  /**
   * Whether W is symmetric positive definite as the solver sees it: a symmetric solver on
   * symmetric positive semidefinite Jacobians, so that W ⪰ λ_min(M) I (acceleration-step.ts,
   * the oversolving safeguard).
   */
  get symmetricPositiveDefinite(): boolean {
    return (
      SYMMETRIC_SOLVERS.includes(
        resolveLinearSolverName(this.solverChoice, this.matrixType, this.n),
      ) && (this.matrixType & MatrixType.SPD) === MatrixType.SPD
    );
  }

  /**
   * Re-reads what the effectors' Jacobians are (hasJacobians, jacobianType, the
   * matrix-free products) after one of them changed (solver.gyroscopicJacobian), and
   * selects the linear solver again.
   */
  effectorsChanged(): void {
    this.massOnly = this.effectors.every((e) => e.hasJacobians === false);
    this.boundedByRounding = this.effectors.some((e) => e.roundingBound === true);
    this.massEffectors = this.effectors.filter((e) => e.addMassProduct !== undefined);
    this.operator = IterationOperator.create(this.sys, this.effectors);
    this.selectSolver(this.solverName);
  }

  /**
   * The linear solver and CG's preconditioner (solver.linearSolver, linearPreconditioner):
   * a preconditioner asked for makes CG run on the assembled matrix, where it applies, also
   * when the effectors offer the matrix-free product.
   */
  setLinearSolver(name: LinearSolverName, preconditioner: CgPreconditioner | null = null): void {
    if (name === this.solverName && preconditioner === this.cgPreconditioner) return;
    this.cgPreconditioner = preconditioner;
    this.selectSolver(name);
  }

  /**
   * The factored-PCG solver's memory for the state record (factored-pcg.ts saveMemory; a
   * copy), undefined off that path or before its first factorization.
   */
  saveMemory(): FactorizationMemory | undefined {
    return this.blockSolver?.saveMemory(this.matrix);
  }

  /** Holds the factored-PCG solver's memory at a simulation step's start (FactoredPcg.hold). */
  holdMemory(): void {
    this.blockSolver?.hold(this.matrix);
  }

  /** The memory holdMemory held, back (FactoredPcg.restoreHeld): a failed step undone. */
  restoreHeldMemory(): void {
    this.blockSolver?.restoreHeld(this.matrix);
  }

  /**
   * Puts saveMemory's record back (after the solve matrix's pattern was restored);
   * undefined: the solver starts afresh. Ignored off the factored path (the model and
   * parameters, which choose the path, are restored with the record).
   */
  restoreMemory(memory: FactorizationMemory | undefined): void {
    this.blockSolver?.restoreMemory(this.matrix, memory);
  }

  /**
   * What the matrix-free CG carries from one step to the next, for the state record: the
   * operator's preconditioning and the step's hardest solve (nextPreconditioning,
   * MULTIGRID_FEW); undefined off that path. The preconditioners themselves are made
   * again from W (the two-level one's coarse term at each step's start), so a resumed run
   * repeats the same iterates.
   */
  saveKrylovMemory(out?: KrylovMemory): KrylovMemory | undefined {
    const op = this.operator;
    if (!this.matrixFree || op === null) return undefined;
    // into `out` when given (a simulation's step-start hold, which allocates nothing)
    const m = out ?? { preconditioning: op.preconditioning, stepIterations: 0 };
    m.preconditioning = op.preconditioning;
    m.stepIterations = this.stepIterations;
    return m;
  }

  /** Puts saveKrylovMemory's record back; undefined: as a new simulation starts. */
  restoreKrylovMemory(memory: KrylovMemory | undefined): void {
    const op = this.operator;
    if (!this.matrixFree || op === null) return;
    op.preconditioning = memory?.preconditioning ?? INITIAL_PRECONDITIONING;
    this.stepIterations = memory?.stepIterations ?? 0;
  }

  /**
   * Whether the integrator holds the positions in its Newton iterations (c_x = 0: Newmark's
   * central difference), so that W is the mass and the velocity Jacobians alone; `auto`
   * then solves on the matrix-free operator at any size (selectSolver).
   */
  private positionsHeld = false;

  /** Sets positionsHeld (the integrator's factory), choosing the solver again on a change. */
  setPositionsHeld(held: boolean): void {
    if (held === this.positionsHeld) return;
    this.positionsHeld = held;
    this.selectSolver(this.solverName);
  }

  /**
   * Symmetric Jacobians for a symmetric solver, then the matrix type (AND over the
   * effectors) and whether the solver runs matrix-free; the solver is created on first use.
   */
  private selectSolver(name: LinearSolverName): void {
    this.solverName = name;
    this.solver = null;
    this.blockSolver = null;
    this.directBlock = null;
    // `auto` on elastic solids (fem bodies: ForceEffector.roundingBound) whose nodes are
    // all the system's bodies (3×3 blocks), without joints, with symmetric Jacobians (or a
    // symmetric form: springs, same forces, so the same Newton solution): CG preconditioned
    // by a block LDLᵀ factorization reused across iterations and steps while it pays
    // (factored-pcg.ts). W = M + c_x K changes slowly from one Newton iterate or step to
    // the next, so a stale factorization is nearly exact: the fem beam of bench/fem.ts
    // takes 2 to 6 PCG iterations a solve where IC(0) took about a hundred, and the
    // factorization (block LDLᵀ, a few times faster than the scalar sparse LDLᵀ) is made
    // about once a run. Not for cloth: there W stays close to M (matrix-free CG with the
    // mass as preconditioner is cheaper) or, with stiff springs, rotates so much per step
    // that a factorization pays only for itself (bench/README.md, "Factored PCG")
    if (
      name === "auto" &&
      this.boundedByRounding &&
      !this.jointed &&
      this.n > AUTO_DENSE_MAX &&
      this.matrix.uniform3
    ) {
      for (const e of this.effectors) if (isSymmetrizable(e)) e.symmetricJacobian = true;
      const type = this.effectors.reduce<number>((t, e) => t & e.jacobianType, MatrixType.SPD);
      if ((type & MatrixType.SYMMETRIC) !== 0) {
        this.blockSolver = new FactoredPcg(this.boundedByRounding);
        this.solverChoice = "cg";
        this.matrixType = type;
        this.matrixFree = false;
        this.multigridPossible = false;
        return;
      }
    }
    // `auto` above the dense size on a system whose Jacobians all offer the matrix-free
    // product (particle springs): CG on the operator rather than a sparse factorization,
    // whose fill-in grows faster than the springs on a 2-d mesh while a product costs
    // O(springs) and W, close to the mass matrix, needs few iterations (bench/README.md,
    // "Cloth"); at any size when the integrator holds the positions (the central
    // difference: W = M + c_v D, the mass and the dashpots; bench/README.md, "Central
    // difference")
    let chosen: LinearSolverName =
      name === "auto" &&
      this.operator !== null &&
      (this.n >= AUTO_KRYLOV_MIN_DOFS || this.positionsHeld)
        ? "cg"
        : name;
    // `auto` on a large symmetric positive definite system of elastic solids (fem bodies
    // with the approximate tangent: ForceEffector.roundingBound): IC(0)-preconditioned CG,
    // whose iterations grow more slowly than a sparse factorization's fill-in on a 3-d mesh
    // (a cantilever: 9 720 unknowns 1.1 s a step against 2.0 s, 4 410 about even)
    if (chosen === "auto" && this.boundedByRounding && this.n >= AUTO_SOLID_CG_MIN_DOFS) {
      for (const e of this.effectors) if (isSymmetrizable(e)) e.symmetricJacobian = true;
      const type = this.effectors.reduce<number>((t, e) => t & e.jacobianType, MatrixType.SPD);
      if ((type & MatrixType.SPD) === MatrixType.SPD) chosen = "cg";
    }
    this.solverChoice = chosen;
    const symmetric = SYMMETRIC_SOLVERS.includes(chosen);
    for (const e of this.effectors) if (isSymmetrizable(e)) e.symmetricJacobian = symmetric;
    this.matrixType = this.effectors.reduce<number>((t, e) => t & e.jacobianType, MatrixType.SPD);
    const concrete = resolveLinearSolverName(chosen, this.matrixType, this.n);
    this.matrixFree =
      this.operator !== null &&
      MATRIX_FREE_SOLVERS.includes(concrete) &&
      !(concrete === "cg" && this.cgPreconditioner !== null);
    this.multigridPossible =
      this.matrixFree && concrete === "cg" && this.operator?.particlesOnly === true;
    if (concrete === "sparse-ldlt" && !this.jointed && this.matrix.uniform3)
      this.directBlock = new BlockLdlt();
  }

  /**
   * Tells the matrix-free operator's effectors the coefficients of the coming Newton
   * iterations, so that the springs build the operator's product form with the residual's
   * forces (IterationOperator.announce); nothing on the other paths.
   */
  announce(c: SchemeCoefficients): void {
    const op = this.operator;
    if (!this.matrixFree || op === null || this.usesMassOnly(c)) return;
    // a step whose multigrid solves were all easy: the mass preconditions the next one
    if (op.preconditioning === "multigrid" && this.stepIterations <= MULTIGRID_FEW)
      op.preconditioning = "mass";
    this.stepIterations = 0;
    op.announce(c);
  }

  /** Assembles W at the current state (see the file comment) into `matrix`. */
  assemble(c: SchemeCoefficients): void {
    const m = this.matrix;
    m.clear();
    const kScale = c.w * c.cx + c.cv * c.rayleighStiffness;
    // indexed loops: a for…of here kept its iterator object (an allocation per call)
    const effectors = this.effectors;
    // momentumRows: the gyroscopic torque's Jacobians are those of the momentum rows
    const momentum = c.momentumRows;
    if (kScale !== 0)
      for (let i = 0; i < effectors.length; i++) {
        const e = effectors[i];
        if (momentum && e instanceof GyroscopicEffector) e.addMomentumJacobian(m, c.cx / c.cv);
        else e.addPosJacobian(m, -kScale);
      }
    if (c.w !== 0)
      for (let i = 0; i < effectors.length; i++) {
        const e = effectors[i];
        if (!(momentum && e instanceof GyroscopicEffector)) e.addVelJacobian(m, -c.w * c.cv);
      }
    // the servos the step does not resolve at the weight w + ε (SchemeCoefficients.stiffWeight)
    const stiff = c.stiffForces;
    for (let i = 0; i < stiff.length && c.stiffWeight !== 0; i++) {
      stiff[i].addPosJacobian(m, -c.stiffWeight * c.cx);
      stiff[i].addVelJacobian(m, -c.stiffWeight * c.cv);
    }
    addMassBlocks(this.sys, m, 1 + c.cv * c.rayleighMass);
    const extra = this.massEffectors;
    for (let i = 0; i < extra.length; i++) extra[i].addMassBlocks?.(m, 1 + c.cv * c.rayleighMass);
    this.rowBlocks?.(c);
  }

  /**
   * The blocks of rows the stepper writes in a form of its own, set into `matrix` after the
   * effectors' and the mass (AccelerationStepper.meanRateJacobians), or null.
   */
  rowBlocks: ((c: SchemeCoefficients) => void) | null = null;

  /** True when W is the (scaled) block-diagonal mass matrix. */
  usesMassOnly(c: SchemeCoefficients): boolean {
    return this.massOnly || (c.w === 0 && c.rayleighStiffness === 0);
  }

  /**
   * Factors W at the current state (no-op work for the mass-only case).
   */
  factor(c: SchemeCoefficients): void {
    if (this.usesMassOnly(c)) return;
    const t0 = performance.now();
    // the node-block factorizations read W's blocks: factored PCG, or sparse-ldlt's
    const block = this.blockSolver ?? this.directBlock;
    if (block !== null) {
      this.assemble(c);
      const t1 = performance.now();
      block.factor(this.matrix);
      this.timing.assembly += t1 - t0;
      this.timing.solve += performance.now() - t1;
      return;
    }
    const op = this.matrixFree ? this.operator : null;
    if (op !== null) op.update(c);
    else this.assemble(c);
    this.diagonalFactored = false;
    if (
      op === null &&
      this.solverName === "auto" &&
      this.n > AUTO_DENSE_MAX &&
      this.matrix.isBlockDiagonal()
    ) {
      const t1 = performance.now();
      this.diagonalInverse.update(this.matrix);
      this.diagonalFactored = this.diagonalInverse.singularBlocks === 0;
      this.timing.assembly += t1 - t0;
      this.timing.solve += performance.now() - t1;
      if (this.diagonalFactored) return;
    }
    const csr = op === null ? this.matrix.toCsr() : null;
    const t1 = performance.now();
    this.solver ??= createLinearSolver(
      this.solverChoice,
      this.matrixType,
      this.n,
      solverOptions(
        resolveLinearSolverName(this.solverChoice, this.matrixType, this.n),
        op !== null,
        this.cgPreconditioner,
      ),
    );
    const solver = this.solver;
    if (csr !== null) solver.factor(csr);
    else if (op !== null && isIterative(solver)) solver.factor(op);
    this.timing.assembly += t1 - t0;
    this.timing.solve += performance.now() - t1;
  }

  /**
   * The last solve's relative residual ‖rhs − W out‖₂/‖rhs‖₂ (0 for a direct solve or the
   * mass alone: exact up to rounding), as its solver reported it.
   */
  lastRelativeResidual = 0;

  /**
   * out = W⁻¹ rhs with the last factorization. A Krylov solver stops at the relative
   * residual `tolerance` or after `maxIterations` (null: the solver's limit, and a solve
   * that does not converge throws; else the solve is taken as it is, as SOFA's
   * CGLinearSolver does). Returns the Krylov iterations taken (0 on the direct paths).
   */
  solve(
    c: SchemeCoefficients,
    rhs: Float64Array,
    out: Float64Array,
    tolerance: number,
    maxIterations: number | null,
    /** A CG solve's second target (CgRun.accept); null or another solver: none. */
    accept: CgAcceptance | null = null,
  ): number {
    this.lastRelativeResidual = 0;
    if (this.usesMassOnly(c)) {
      massSolve(this.sys, rhs, out);
      const s = 1 / (1 + c.cv * c.rayleighMass);
      if (s !== 1) for (let i = 0; i < this.n; i++) out[i] *= s;
      return 0;
    }
    const t0 = performance.now();
    if (this.diagonalFactored) {
      this.diagonalInverse.apply(rhs, out);
      this.timing.solve += performance.now() - t0;
      return 0;
    }
    const direct = this.directBlock;
    if (direct !== null) {
      // a singular pivot block fails the solve as the scalar factorization's zero pivot does
      if (!direct.ok)
        throw new SingularIterationMatrix(
          singularMessage("sparse-ldlt", this.sys, direct.singularBlock),
        );
      direct.solve(rhs, out);
      this.timing.solve += performance.now() - t0;
      return 0;
    }
    out.fill(0);
    const solver = this.blockSolver ?? this.solver!;
    if (solver instanceof FactoredPcg || isIterative(solver)) {
      solver.tolerance = tolerance;
      solver.maxIterations = maxIterations ?? undefined;
    }
    const cg = solver instanceof ConjugateGradientSolver ? solver : null;
    if (cg !== null) cg.accept = accept;
    const info = solver.solve(rhs, out);
    if (cg !== null) cg.accept = null;
    this.lastRelativeResidual = info.residual;
    // the preconditioner of the next solve (iteration-operator.ts)
    const op = this.operator;
    this.stepIterations = Math.max(this.stepIterations, info.iterations);
    if (this.matrixFree && op !== null)
      op.preconditioning = nextPreconditioning(
        op.preconditioning,
        info.iterations,
        this.multigridPossible,
      );
    const singular = solver instanceof FactoredPcg ? solver.singularBlock : -1;
    if (singular >= 0)
      throw new SingularIterationMatrix(singularMessage("factored-pcg", this.sys, singular));
    if (!info.converged && maxIterations === null)
      throw new Error(
        `linear solver ${solver.name} failed (relative residual ${info.residual.toExponential(2)} after ${info.iterations} iterations)`,
      );
    this.timing.solve += performance.now() - t0;
    return info.iterations;
  }

  /**
   * W's block LDLᵀ factorization at its last `factor` when factored PCG or the block
   * sparse-ldlt solves it, for `rightHandSides` solves at once: with factored PCG made
   * afresh if the one at hand is a preconditioner of an older W and that costs less than
   * the solves (FactoredPcg.factorExactly); null otherwise, on the other paths, or when W
   * is the mass matrix.
   */
  exactFactorization(c: SchemeCoefficients, rightHandSides: number): BlockLdlt | null {
    const direct = this.directBlock;
    if (direct !== null) return direct.ok && !this.usesMassOnly(c) ? direct : null;
    const solver = this.blockSolver;
    if (solver === null || this.usesMassOnly(c)) return null;
    const t0 = performance.now();
    const ldlt = solver.factorExactly(rightHandSides);
    this.timing.solve += performance.now() - t0;
    return ldlt;
  }

  /** out = M x: the bodies' masses and the effectors' own (a consistent mass). */
  massTimes(x: Float64Array, out: Float64Array): void {
    massMultiply(this.sys, x, out);
    const extra = this.massEffectors;
    for (let i = 0; i < extra.length; i++) extra[i].addMassProduct?.(x, out, 1);
  }

  /**
   * out = K x with K = −∂f/∂x at the current state, assembled in `matrix` (W is lost: every
   * Newton iteration that solves with W assembles it first, after its residual, whose
   * Rayleigh term calls this, and a step's first iteration always does).
   */
  stiffnessTimes(x: Float64Array, out: Float64Array): void {
    const m = this.matrix;
    m.clear();
    for (const e of this.effectors) e.addPosJacobian(m, -1);
    m.multiply(x, out);
  }
}

/**
 * A solve with W whose block LDLᵀ factorization met a singular or non-finite pivot
 * (singularMessage): a Newton iteration that meets it is redone in halves, as a Newton that
 * does not converge (AccelerationStepper `solve`), c_x K shrinking 4 times a halving.
 */
export class SingularIterationMatrix extends Error {}

/**
 * The failure of a block LDLᵀ factorization of W (factored PCG's direct solve, sparse-ldlt
 * on node blocks: BlockLdlt.singularBlock): W = (1 + c_v r_M) M + (w c_x + c_v r_K) K has a
 * singular or non-finite 3×3 pivot at the node block `block`, whose body it names. With
 * positive masses only the tangent stiffness makes it so: an exact tangent indefinite
 * enough to cancel the mass (a strongly compressed or inverted fem element), or a force's
 * non-finite Jacobian. Before, factored PCG's said "linear solver cg failed (relative
 * residual 0.00e+0 after 0 iterations)".
 */
function singularMessage(solver: string, sys: BodySystem, block: number): string {
  let body = -1;
  for (let b = 0; b < sys.numBodies && body < 0; b++) if (sys.block[b] === block) body = b;
  const at = body >= 0 ? `body "${sys.ids[body]}"` : `block ${block}`;
  return `linear solver ${solver} failed: the iteration matrix W = M + c_x K is singular or not finite at ${at} (a pivot of its block LDLᵀ factorization: the tangent stiffness K cancels the mass there, as the exact tangent of a strongly compressed or inverted element can, or is not finite)`;
}
