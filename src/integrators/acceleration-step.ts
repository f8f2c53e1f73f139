/**
 * The one step every integrator here shares, in acceleration form.
 *
 * Each scheme advances with an unknown generalized acceleration a (size numDofs) through
 *   x_{t+h} = x_t ⊕ (Δx_pred + c_x a),     v_{t+h} = v_pred + c_v a,
 * and asks that the momentum balance
 *   R(a) = (1 − w) f(x_t, v_t, t) + w f(x_{t+h}, v_{t+h}, t+h) − (r_M M + r_K K) v_{t+h} − M a = 0
 * hold (plus constraint and contact forces, added by the caller's correction phase):
 *   Newmark (SOFA)      Δx_pred = h v + h²/2 (1−2β) a_t, v_pred = v + h(1−γ) a_t, c_x = h²β, c_v = hγ, w = 1
 *   backward Euler      Δx_pred = h v,  v_pred = v,  c_x = h²,  c_v = h,  w = 1
 *   Moreau–Jean θ       Δx_pred = h v,  v_pred = v,  c_x = h²θ, c_v = h,  w = θ
 *   symplectic Euler    Δx_pred = h v,  v_pred = v,  c_x = h²,  c_v = h,  w = 0
 * Newton's method on R with the iteration matrix (K = −∂f/∂x, D = −∂f/∂v)
 *   W = (1 + c_v r_M) M + (w c_x + c_v r_K) K + w c_v D
 * gives, for linear forces and one iteration from any guess, exactly SOFA's Newmark
 * equation ((1 + hγ r_M) M + (h²β + hγ r_K) K) a = f_ext − (r_M M + r_K K)(v_pred) − K(x_pred).
 * For nonlinear forces the iterations continue until ‖Δa‖∞ ≤ tol (1 + ‖a‖∞).
 * ⊕ applies rotation increments on the unit quaternions (exponential map, world frame),
 * always from the configuration at t, so repeated iterations do not accumulate roundoff.
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import { projectPositions, projectVelocities } from "../constraints/project";
import type { ForceEffector } from "../forces/effector";
import { SparseBlockMatrix } from "../math/block-matrix";
import {
  addMassBlocks,
  addPositionIncrement,
  type BodySystem,
  clearForces,
  createPositionSnapshot,
  getForces,
  massMultiply,
  massSolve,
  type PositionSnapshot,
  restorePositions,
  savePositions,
  setVelocity,
} from "../model/body-system";
import { createLinearSolver, resolveLinearSolverName } from "../solvers/linear";
import {
  type LinearSolver,
  type LinearSolverName,
  type LinearSolverOptions,
  MatrixType,
} from "../solvers/linear/linear-solver";
import { ConstrainedSolve } from "./constrained-solve";

/** Post-step projection: chord Newton on C = 0 to 1e-12 m (or rad), a few iterations at most. */
const PROJECTION = {
  maxIterations: 10,
  relTolerance: 0,
  absTolerance: 1e-14,
  residualTolerance: 1e-12,
  chord: true,
};

/**
 * A force effector whose solve-matrix blocks change from step to step (compliant contact:
 * its body pairs are the contacts detected at the start of each step). The stepper calls
 * `beginStep()` from its own beginStep (configuration at t), then `addSolveBlocks` again
 * and `matrix.finalize()`. Reserving a new block bumps the matrix's structureVersion and
 * makes toCsr() build a new CSR object, so the linear solvers (which compare patterns)
 * redo their symbolic analysis only when the pattern really changed. Blocks are never
 * released: the pattern is the union over the steps.
 */
export interface DynamicStructureEffector extends ForceEffector {
  readonly dynamicStructure: true;
  beginStep(): void;
}

export function hasDynamicStructure(e: ForceEffector): e is DynamicStructureEffector {
  return (e as Partial<DynamicStructureEffector>).dynamicStructure === true;
}

/**
 * Iterative solvers of the Newton step: incomplete factorizations as preconditioners
 * (IC(0) for CG, ILU(0) for GMRES), since stiff springs make Jacobi's convergence slow,
 * and a relative tolerance well below the Newton tolerance.
 */
function solverOptions(name: LinearSolverName): LinearSolverOptions {
  const preconditioner = name === "cg" ? "ic0" : name === "gmres" ? "ilu0" : undefined;
  return { tolerance: 1e-12, preconditioner };
}

/** Coefficients of one scheme for one step (see the file comment). */
export interface SchemeCoefficients {
  cx: number;
  cv: number;
  /** Weight w of the end-of-step forces (0 explicit, θ, 1 fully implicit). */
  w: number;
  rayleighMass: number;
  rayleighStiffness: number;
}

export interface NewtonSettings {
  maxIterations: number;
  tolerance: number;
}

/**
 * Work arrays and the solve matrix shared by the integrators of one simulation.
 * Allocates in the constructor only.
 */
export class AccelerationStepper {
  readonly n: number;
  /** The unknown acceleration (result of `solve`). */
  readonly a: Float64Array;
  /** Predictor increment Δx_pred and velocity v_pred: the integrator fills them. */
  readonly dxPred: Float64Array;
  readonly vPred: Float64Array;
  /** Generalized velocity at the end of the step (valid after `solve`). */
  readonly v: Float64Array;
  /** Forces at the start of the step (used when w < 1). */
  readonly fStart: Float64Array;
  readonly start: PositionSnapshot;
  readonly matrix: SparseBlockMatrix;
  /** AND of every effector's jacobianType: the solve matrix's type. */
  readonly matrixType: number;
  private readonly f: Float64Array;
  private readonly r: Float64Array;
  private readonly da: Float64Array;
  private readonly inc: Float64Array;
  private readonly tmp: Float64Array;
  private readonly kv: Float64Array;
  private readonly massOnly: boolean;
  private solver: LinearSolver | null = null;
  private solverName: LinearSolverName;
  linearIterations = 0;
  /**
   * A generalized force (N, N·m) held constant during `solve` and added to the residual
   * with weight 1, or null: the nonsmooth contact force H^T P/h of Moreau–Jean's Newton
   * iterations (integrators/moreau-jean.ts).
   */
  extraForce: Float64Array | null = null;
  private readonly dynamicEffectors: DynamicStructureEffector[];
  /** Accumulated wall time (ms) of matrix assembly and of factor + solve, for benchmarks. */
  readonly timing = { assembly: 0, solve: 0 };

  /** Bilateral constraints (joints, motors) or null; see constrained-solve.ts. */
  readonly constraints: ConstraintSet | null;
  /** Constraint force multipliers of the last solve (M a = f + Gᵀλ), N or N·m. */
  readonly lambda: Float64Array;
  private readonly constrained: ConstrainedSolve | null;
  private readonly rc: Float64Array;
  private readonly ct: Float64Array;
  private readonly zeroRows: Float64Array;
  private readonly scratchLambda: Float64Array;

  constructor(
    readonly sys: BodySystem,
    readonly effectors: readonly ForceEffector[],
    linearSolver: LinearSolverName,
    constraints: ConstraintSet | null = null,
  ) {
    const n = sys.numDofs;
    this.constraints = constraints !== null && constraints.numRows > 0 ? constraints : null;
    const m = this.constraints?.numRows ?? 0;
    this.constrained = this.constraints ? new ConstrainedSolve(sys, this.constraints) : null;
    this.lambda = new Float64Array(m);
    this.rc = new Float64Array(m);
    this.ct = new Float64Array(m);
    this.zeroRows = new Float64Array(m);
    this.scratchLambda = new Float64Array(m);
    this.n = n;
    this.a = new Float64Array(n);
    this.dxPred = new Float64Array(n);
    this.vPred = new Float64Array(n);
    this.v = new Float64Array(n);
    this.fStart = new Float64Array(n);
    this.f = new Float64Array(n);
    this.r = new Float64Array(n);
    this.da = new Float64Array(n);
    this.inc = new Float64Array(n);
    this.tmp = new Float64Array(n);
    this.kv = new Float64Array(n);
    this.start = createPositionSnapshot(sys);
    this.matrix = new SparseBlockMatrix(sys.blockSizes);
    for (const e of effectors) e.addSolveBlocks(this.matrix);
    this.matrix.finalize();
    this.matrixType = effectors.reduce<number>((t, e) => t & e.jacobianType, MatrixType.SPD);
    this.dynamicEffectors = effectors.filter(hasDynamicStructure);
    this.massOnly = effectors.every((e) => e.hasJacobians === false);
    this.solverName = linearSolver;
  }

  setLinearSolver(name: LinearSolverName): void {
    if (name !== this.solverName) {
      this.solverName = name;
      this.solver = null;
    }
  }

  /** Generalized applied force at the current state into out (clears the accumulators). */
  computeForces(t: number, out: Float64Array): void {
    clearForces(this.sys);
    for (const e of this.effectors) e.applyForces(t);
    getForces(this.sys, out);
  }

  /** Remembers the configuration at t (call before `solve`). */
  beginStep(): void {
    savePositions(this.sys, this.start);
    if (this.dynamicEffectors.length === 0) return;
    for (const e of this.dynamicEffectors) {
      e.beginStep();
      e.addSolveBlocks(this.matrix);
    }
    this.matrix.finalize();
  }

  /** Sets positions x_t ⊕ (Δx_pred + c_x a) and velocities v_pred + c_v a. */
  applyUnknown(c: SchemeCoefficients, a: Float64Array): void {
    const { inc, v, n } = this;
    for (let i = 0; i < n; i++) {
      inc[i] = this.dxPred[i] + c.cx * a[i];
      v[i] = this.vPred[i] + c.cv * a[i];
    }
    restorePositions(this.sys, this.start);
    addPositionIncrement(this.sys, inc, 1);
    setVelocity(this.sys, v);
  }

  /**
   * Newton iterations on R(a) = 0 from the guess in `this.a` (fStart must hold f at t
   * when c.w < 1). Leaves the system at the end-of-step state of the final `a`.
   * Returns the number of iterations.
   */
  solve(c: SchemeCoefficients, tEnd: number, newton: NewtonSettings): number {
    const { a, da, r, n } = this;
    let it = 0;
    for (; it < newton.maxIterations; it++) {
      this.applyUnknown(c, a);
      this.residual(c, tEnd, r);
      this.solveIteration(c, tEnd, r, da);
      let dmax = 0;
      let amax = 0;
      for (let i = 0; i < n; i++) {
        a[i] += da[i];
        dmax = Math.max(dmax, Math.abs(da[i]));
        amax = Math.max(amax, Math.abs(a[i]));
      }
      if (dmax <= newton.tolerance * (1 + amax) || (c.w === 0 && c.rayleighStiffness === 0)) {
        it++;
        break;
      }
    }
    this.applyUnknown(c, a);
    return it;
  }

  /** out = R(a) at the state currently applied (see file comment). */
  residual(c: SchemeCoefficients, tEnd: number, out: Float64Array): void {
    const { f, tmp, n } = this;
    if (c.w > 0) this.computeForces(tEnd, f);
    else f.fill(0);
    massMultiply(this.sys, this.a, tmp);
    for (let i = 0; i < n; i++) out[i] = (1 - c.w) * this.fStart[i] + c.w * f[i] - tmp[i];
    const fx = this.extraForce;
    if (fx !== null) for (let i = 0; i < n; i++) out[i] += fx[i];
    if (c.rayleighMass !== 0) {
      massMultiply(this.sys, this.v, tmp);
      for (let i = 0; i < n; i++) out[i] -= c.rayleighMass * tmp[i];
    }
    if (c.rayleighStiffness !== 0) {
      this.stiffnessTimes(this.v, this.kv);
      for (let i = 0; i < n; i++) out[i] -= c.rayleighStiffness * this.kv[i];
    }
  }

  /** out = K x with K = −∂f/∂x at the current state. */
  private stiffnessTimes(x: Float64Array, out: Float64Array): void {
    const m = this.matrix;
    m.clear();
    for (const e of this.effectors) e.addPosJacobian(m, -1);
    m.multiply(x, out);
  }

  /** Assembles W at the current state (see file comment) into `this.matrix`. */
  assembleIterationMatrix(c: SchemeCoefficients): void {
    const m = this.matrix;
    m.clear();
    const kScale = c.w * c.cx + c.cv * c.rayleighStiffness;
    if (kScale !== 0) for (const e of this.effectors) e.addPosJacobian(m, -kScale);
    if (c.w !== 0) for (const e of this.effectors) e.addVelJacobian(m, -c.w * c.cv);
    addMassBlocks(this.sys, m, 1 + c.cv * c.rayleighMass);
  }

  /** True when W is the (scaled) block-diagonal mass matrix. */
  usesMassOnly(c: SchemeCoefficients): boolean {
    return this.massOnly || (c.w === 0 && c.rayleighStiffness === 0);
  }

  /** Factors W at the current state (no-op work for the mass-only case). */
  factor(c: SchemeCoefficients): void {
    if (this.usesMassOnly(c)) return;
    const t0 = performance.now();
    this.assembleIterationMatrix(c);
    const csr = this.matrix.toCsr();
    const t1 = performance.now();
    this.solver ??= createLinearSolver(
      this.solverName,
      this.matrixType,
      this.n,
      solverOptions(resolveLinearSolverName(this.solverName, this.matrixType, this.n)),
    );
    this.solver?.factor(csr);
    this.timing.assembly += t1 - t0;
    this.timing.solve += performance.now() - t1;
  }

  /** out = W⁻¹ rhs with the last factorization. */
  solveFactored(c: SchemeCoefficients, rhs: Float64Array, out: Float64Array): void {
    if (this.usesMassOnly(c)) {
      massSolve(this.sys, rhs, out);
      const s = 1 / (1 + c.cv * c.rayleighMass);
      if (s !== 1) for (let i = 0; i < this.n; i++) out[i] *= s;
      return;
    }
    const t0 = performance.now();
    out.fill(0);
    const solver = this.solver!;
    const info = solver.solve(rhs, out);
    this.linearIterations += info.iterations;
    if (!info.converged)
      throw new Error(
        `linear solver ${solver.name} failed (relative residual ${info.residual.toExponential(2)} after ${info.iterations} iterations)`,
      );
    this.timing.solve += performance.now() - t0;
  }

  /**
   * out = the acceleration change caused by the generalized force `rhs` (N, N·m) with the
   * bilateral constraints (joints) held: Δa = W⁻¹ rhs restricted to G Δa = 0. Contact
   * corrections use it to build their Delassus operator and to apply impulses, so joints,
   * springs and contacts combine in one step. Without joints it is W⁻¹ rhs.
   */
  solveConstrained(c: SchemeCoefficients, rhs: Float64Array, out: Float64Array): void {
    if (this.constrained === null) this.solveFactored(c, rhs, out);
    else this.constrained.solve(rhs, this.zeroRows, out, this.scratchLambda);
  }

  private solveIteration(
    c: SchemeCoefficients,
    tEnd: number,
    rhs: Float64Array,
    out: Float64Array,
  ) {
    const set = this.constraints;
    if (set === null || this.constrained === null) {
      this.factor(c);
      this.solveFactored(c, rhs, out);
      return;
    }
    this.factorConstrained(c, tEnd);
    // Velocity level G v_{t+h} = −Ct, i.e. G Δa = −(G v + Ct)/c_v; acceleration level
    // G a = Qc when c_v = 0 (the consistent initial acceleration).
    const rc = this.rc;
    if (c.cv > 0) {
      set.velocityTerm(tEnd, this.ct);
      set.multiply(this.v, rc);
      for (let i = 0; i < rc.length; i++) rc[i] = -(rc[i] + this.ct[i]) / c.cv;
    } else {
      set.quadraticTerm(tEnd, this.ct);
      set.multiply(this.a, rc);
      for (let i = 0; i < rc.length; i++) rc[i] = this.ct[i] - rc[i];
    }
    const t0 = performance.now();
    this.constrained.solve(rhs, rc, out, this.lambda);
    this.timing.solve += performance.now() - t0;
  }

  /** Updates G at the current iterate and factors the saddle-point system. */
  private factorConstrained(c: SchemeCoefficients, tEnd: number): void {
    const solver = this.constrained!;
    const t0 = performance.now();
    this.constraints!.updateJacobian(tEnd);
    if (this.usesMassOnly(c)) {
      this.timing.assembly += performance.now() - t0;
      solver.factorMass(1 + c.cv * c.rayleighMass);
      this.timing.solve += performance.now() - t0;
      return;
    }
    this.assembleIterationMatrix(c);
    if (this.matrix.isBlockDiagonal()) {
      const t1 = performance.now();
      const ok = solver.factorBlockDiagonal(this.matrix);
      this.timing.assembly += t1 - t0;
      this.timing.solve += performance.now() - t1;
      if (ok) return;
    }
    const w = this.matrix.toCsr();
    const t1 = performance.now();
    solver.factorGeneral(w);
    this.timing.assembly += t1 - t0;
    this.timing.solve += performance.now() - t1;
  }

  /**
   * Drift correction after a step with joints: positions projected onto C(q, t) = 0 and
   * velocities onto G v = −Ct, both in the mass metric (constraints/project.ts), so the
   * joint drift stays at the projection tolerance instead of accumulating. Chord
   * iterations: S is factored once, at the first iterate, and serves the velocity
   * projection too (one factorization per step instead of two or three).
   */
  projectOnConstraints(tEnd: number): void {
    const set = this.constraints;
    if (set === null) return;
    const moved = projectPositions(this.sys, set, tEnd, PROJECTION).iterations > 0;
    // the step's solve already made G v = −Ct at the unprojected positions
    if (moved) projectVelocities(this.sys, set, tEnd, true);
  }
}
