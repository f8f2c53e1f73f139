/**
 * Assembly analysis with the semantics of Chrono's ChAssemblyAnalysis
 * (/work/shared/reference/chrono-ChAssemblyAnalysis.txt): consistent positions,
 * velocities, accelerations and reactions of a constrained system, level by level in the
 * order position → velocity → acceleration (any subset of them).
 *
 *   position      Newton–Raphson on C(q, t) = 0, each update the smallest in the mass
 *                 metric (project.ts `projectPositions`, the same function the
 *                 integrators use for drift correction), limited by maxIterations and
 *                 stopped by relTolerance/absTolerance on ‖δq‖∞ and residualTolerance on
 *                 ‖C‖∞. Reports iterations, the last residual norm (at the final
 *                 configuration) and the last update norm. Not converged → NOT_CONVERGED
 *                 (a vanishing update with ‖C‖∞ still above the tolerances too: rows that
 *                 conflict at a singular configuration), naming the row furthest from
 *                 closed.
 *   velocity      the velocity closest to the given one in the kinetic-energy metric with
 *                 G v = −Ct (project.ts `projectVelocities`).
 *   acceleration  the saddle-point system
 *                     [M  Gᵀ] [a]   [f ]
 *                     [G  0 ] [λ] = [Qc]
 *                 with f from `computeForces` (applied + gyroscopic forces, [f; τ] per
 *                 dof) and Qc the analytic quadratic-velocity term of every constraint
 *                 (no central differencing, hence no roundoff floor). SIGN OF λ: the
 *                 constraint force on the bodies is −Gᵀλ (M a = f − Gᵀλ); the reported
 *                 `multipliers` are this λ, and a constraint's reaction (the force and
 *                 torque on its body b, world frame, torque about its point on b) is the
 *                 constraint.ts reaction of −λ. E.g. a distance link's multiplier is its
 *                 tension (positive when it pulls the bodies together).
 *                 accelerationResidual = ‖G a − Qc‖∞ over all rows; above
 *                 residualTolerance·(1 + ‖Qc‖∞) it flags ACCELERATION_INACCURATE.
 *
 * Redundant and singular constraints. After the position level the rows of G are
 * checked for linear dependence by Householder QR of Gᵀ taking the rows in order and
 * deferring dependent ones (solvers/linear/sparse-qr.ts `dependentRows`, relative
 * tolerance 1e-10); constraints are stacked joints first, motors last, so:
 *   - a dependent JOINT row is redundant (e.g. a planar four-bar or slider-crank built
 *     from full 3-D joints): it is named in `warnings` as `joint "<id>" row k`; the
 *     solve uses the independent rows, and the multipliers returned are the
 *     minimum-norm ones among all λ giving the same constraint force Gᵀλ, λ = (Gᵀ)⁺Gᵀλ_I,
 *     unique in the determined directions. The result is still SUCCESS (REDUNDANT_CONSTRAINTS
 *     is not raised: the answer is complete and correct, the warnings say what was
 *     indeterminate).
 *   - a dependent MOTOR row means the joints already fix what the drive prescribes to
 *     first order: the drive does not determine the motion (a slider-crank driven from
 *     its slider at a dead centre) → SINGULAR, with finite output: the motion follows the
 *     dynamics in the undriven direction.
 *   - if any row is dependent and the velocity or acceleration equations are then not
 *     satisfied (inconsistent at a singular configuration) → SINGULAR as well.
 * SINGULAR output is finite (never NaN); non-finite solver output is replaced by zeros.
 *
 * Contacts: like ChSystem::DoAssembly, an analysis with active nonsmooth contacts is not
 * performed (`context.contacts > 0` → UNSUPPORTED_CONTACTS, state untouched; Simulation
 * counts the contacts touching at the state, NonsmoothContact.touchingCount).
 *
 * Linear solvers for the acceleration level (`options.solver`): "sparse-lu" and
 * "sparse-qr" (direct; sparse-lu is the default; sparse-qr is a dense least-squares QR for
 * small systems), "minres" (for the
 * symmetric indefinite saddle-point matrix) and "gmres", tolerance 1e-13 relative.
 *
 * Side effects: the analysis writes the consistent positions and velocities into `sys`
 * (Chrono does the same); a caller that must not change the state snapshots and restores.
 * Time: `options.dt` when given (the schema's "time of the analysis"), else `t`.
 */
import type { AssemblyOptionsSpec, ExitFlagCode } from "../../../schemas/state";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { RevoluteMotor } from "../constraints/motor";
import { projectionWorkspace, projectPositions, projectVelocities } from "../constraints/project";
import { type CsrMatrix, csrFromTriplets, csrMultiply, csrToDense } from "../math/csr";
import { BodyKind, type BodySystem, getVelocity, massSolve } from "../model/body-system";
import { createLinearSolver, MatrixType } from "../solvers/linear/index";
import { dependentRows, qrMinNormSolve, rankRevealingQr } from "../solvers/linear/sparse-qr";

/** Relative tolerance of the rank decisions (see the header). */
export const RANK_TOLERANCE = 1e-10;
/** Relative residual tolerance given to the iterative solvers. */
export const ITERATIVE_TOLERANCE = 1e-13;

export interface AssemblyContext {
  /** Number of active nonsmooth (NSC) contacts; > 0 gives UNSUPPORTED_CONTACTS. */
  contacts?: number;
  /**
   * The joints' coordinates by joint id (joint-coordinate.ts). Revolute angles are read
   * unwrapped (mimic couplings, limits): a motor's joint is read at its drive's θ(t) at the
   * pose the motor's row (φ − θ wrapped) takes it to, and every angle is carried through
   * the position level's updates (drivenBranches, PositionProjectionOptions.angles).
   * The analysis leaves them on the branches it reached (Simulation restores them when
   * it does not apply the result).
   */
  coordinates?: ReadonlyMap<string, JointCoordinate>;
  /**
   * The joints' limits (rad or m): the analysis does not enforce them (no contact-like
   * inequality at any level) and names a coordinate it leaves outside its range in warnings.
   */
  limits?: readonly { joint: string; lower: number; upper: number }[];
}

/**
 * What an analysis found. The consistent positions and velocities are in the BodySystem
 * (see Side effects in the header); Simulation turns this into the wire format.
 */
export interface Assembly {
  /** the most severe condition met (FLAG_RANK order) */
  exitFlag: ExitFlagCode;
  /** position level: Newton iterations, ‖C‖∞ at the end, the last ‖δq‖∞ */
  iterations: number;
  residualNorm: number;
  updateNorm: number;
  /** ‖G a − Qc‖∞ (0 when the acceleration level did not run) */
  accelerationResidual: number;
  warnings: string[];
  /** generalized accelerations [a; α] per dof (m/s², rad/s²; zeros without that level) */
  accelerations: Float64Array;
  /** multipliers λ (sign as in the header), null when the acceleration level did not run */
  multipliers: Float64Array | null;
}

const FLAG_RANK: Record<ExitFlagCode, number> = {
  SUCCESS: 0,
  REDUNDANT_CONSTRAINTS: 1,
  ACCELERATION_INACCURATE: 2,
  SINGULAR: 3,
  NOT_CONVERGED: 4,
  UNSUPPORTED_CONTACTS: 5,
};

function infNorm(x: Float64Array): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) {
    const a = Math.abs(x[i]);
    if (!(a <= m)) m = a;
  }
  return m;
}

function allFinite(x: Float64Array): boolean {
  for (let i = 0; i < x.length; i++) if (!Number.isFinite(x[i])) return false;
  return true;
}

/** The exit flag (the most severe raised) and the warnings of one analysis. */
class Outcome {
  flag: ExitFlagCode = "SUCCESS";
  readonly warnings: string[] = [];

  raise(f: ExitFlagCode, warning?: string): void {
    if (FLAG_RANK[f] > FLAG_RANK[this.flag]) this.flag = f;
    if (warning !== undefined) this.warnings.push(warning);
  }

  warn(warning: string): void {
    this.warnings.push(warning);
  }
}

export function assemble(
  sys: BodySystem,
  set: ConstraintSet,
  computeForces: (t: number, out: Float64Array) => void,
  t: number,
  options: AssemblyOptionsSpec,
  context: AssemblyContext = {},
): Assembly {
  const time = options.dt ?? t;
  const m = set.numRows;
  const out = new Outcome();
  const acc = new Float64Array(sys.numDofs);
  const lambda = new Float64Array(m);
  const c = new Float64Array(m);
  set.residual(time, c);
  const position = { iterations: 0, residualNorm: infNorm(c), updateNorm: 0 };
  const result = (reactions: boolean, accelerationResidual: number): Assembly => ({
    exitFlag: out.flag,
    ...position,
    accelerationResidual,
    warnings: out.warnings,
    accelerations: acc,
    multipliers: reactions ? lambda : null,
  });

  if ((context.contacts ?? 0) > 0) {
    out.raise(
      "UNSUPPORTED_CONTACTS",
      `${context.contacts} active nonsmooth contacts: assembly is not performed with NSC contacts (as Chrono's DoAssembly); use smc contact or a short settling run`,
    );
    return result(false, 0);
  }
  const levels = new Set(options.levels);
  const angles = drivenBranches(set, context.coordinates, time);
  if (levels.has("position")) {
    const r = projectPositions(sys, set, time, { ...options, angles });
    position.iterations = r.iterations;
    position.residualNorm = r.residualNorm;
    position.updateNorm = r.updateNorm;
    if (!r.converged) {
      const open = set.largestResidual(time);
      out.raise(
        "NOT_CONVERGED",
        `position level not converged after ${r.iterations} iterations: ‖C‖∞ = ${r.residualNorm.toExponential(3)} (${set.rowLabel(open.row)}), last ‖δq‖∞ = ${r.updateNorm.toExponential(3)}`,
      );
    }
  }
  outsideLimits(context, out);
  const dependent = dependentConstraintRows(sys, set, time, out);
  if (levels.has("velocity") && m > 0)
    velocityLevel(sys, set, time, options, dependent.length > 0, out);
  let accelerationResidual = 0;
  if (levels.has("acceleration"))
    accelerationResidual = accelerationLevel(
      sys,
      set,
      computeForces,
      time,
      options,
      dependent,
      out,
      acc,
      lambda,
    );
  return result(levels.has("acceleration"), accelerationResidual);
}

/**
 * The revolute angle coordinates of `coordinates`, each motor's joint first put on the
 * branch on which the pose its row reaches reads the drive's θ(t): the row is φ − θ
 * wrapped to (−π, π], r, and Newton turns the joint by −r, so the joint is read now as
 * θ + r. A mimic of a joint a motor holds at 4 rad at t = 0.4 s then follows 4 rad, not
 * 4 − 2π (the pose is the same; a stepped run, turning the joint there, reads 4).
 */
function drivenBranches(
  set: ConstraintSet,
  coordinates: ReadonlyMap<string, JointCoordinate> | undefined,
  time: number,
): JointCoordinate[] {
  if (coordinates === undefined) return [];
  const r = new Float64Array(1);
  for (const c of set.constraints) {
    if (!(c instanceof RevoluteMotor)) continue;
    const q = coordinates.get(c.joint);
    if (q === undefined || q.kind !== "angle") continue;
    c.residual(time, r, 0);
    q.guided = c.drive.value(time) + r[0];
    q.guide();
    q.track();
  }
  return [...coordinates.values()].filter((q) => q.kind === "angle");
}

/** A warning for each limited coordinate outside its range at the assembled positions. */
function outsideLimits(context: AssemblyContext, out: Outcome): void {
  for (const { joint, lower, upper } of context.limits ?? []) {
    const q = context.coordinates?.get(joint);
    if (q === undefined) continue;
    q.evaluateValue();
    if (q.value < lower || q.value > upper)
      out.warn(
        `joint "${joint}" is at ${q.value.toPrecision(6)} (${q.kind === "angle" ? "rad" : "m"}), outside its limits [${lower}, ${upper}]: the analysis does not enforce limits`,
      );
  }
}

/**
 * Rank analysis of G at the final configuration: the dependent rows (see the header), each
 * named in a warning; a dependent motor row raises SINGULAR.
 */
function dependentConstraintRows(
  sys: BodySystem,
  set: ConstraintSet,
  time: number,
  out: Outcome,
): Int32Array {
  const m = set.numRows;
  if (m === 0 || fullRankBySchur(set, time)) return new Int32Array(0);
  const G = set.updateJacobian(time);
  const dependent = dependentRows(csrToDense(G), m, sys.numDofs, RANK_TOLERANCE).dependent;
  for (const r of dependent) {
    if (set.constraints[set.rowConstraint[r]].category === "motor")
      out.raise(
        "SINGULAR",
        `${set.rowLabel(r)} depends on the other constraint rows: the drive does not determine the motion in this configuration (singular: a dead centre, or a drive on a motion the joints already fix)`,
      );
    else if (out.flag === "NOT_CONVERGED")
      // rows that conflict, not a redundancy: the position level stalled where they meet
      out.warn(
        `${set.rowLabel(r)} depends on earlier constraint rows at the configuration the position level stopped at (singular), where the joints are not closed`,
      );
    else
      out.warn(
        `${set.rowLabel(r)} is redundant (a combination of earlier constraint rows); its share of the reactions is not determined, the minimum-norm multipliers are reported`,
      );
  }
  return dependent;
}

/**
 * Sparse first test of the rank: the semidefinite LDLᵀ of S = G M⁻¹ Gᵀ (natural order,
 * no fill for chains) drops rows at angles below ~1e-6 rad from the span of the earlier
 * ones, a looser test than the QR's 1e-10; when it keeps every row, the QR would too
 * and its O(m²n) dense work is skipped (long chains). Otherwise the QR decides.
 */
function fullRankBySchur(set: ConstraintSet, time: number): boolean {
  const ws = projectionWorkspace(set);
  ws.factorAt(time);
  return ws.ldlt.rank === set.numRows;
}

/** The velocity level: v projected onto G v = −Ct, its residual checked. */
function velocityLevel(
  sys: BodySystem,
  set: ConstraintSet,
  time: number,
  options: AssemblyOptionsSpec,
  rankDeficient: boolean,
  out: Outcome,
): void {
  const m = set.numRows;
  const r = projectVelocities(sys, set, time);
  const ct = new Float64Array(m);
  set.velocityTerm(time, ct);
  // relative to the velocities too: G v + Ct sums terms of their size, whose rounding is
  // left (a four-bar 7e-6 rad short of its toggle, its coupler at 555 rad/s: 6e-10 m/s,
  // which no further correction reduces)
  const v = new Float64Array(sys.numDofs);
  getVelocity(sys, v);
  const tol = options.residualTolerance * (1 + infNorm(ct) + infNorm(v));
  if (r.residualNorm <= tol) return;
  // The projection's factorization drops rows at angles below ~1e-6 rad from the span
  // of the others (semidefinite-ldlt.ts), a looser test than the QR above: a row so
  // nearly dependent is a singular configuration for practical purposes too.
  const singular = rankDeficient || r.rank < m;
  out.raise(
    singular ? "SINGULAR" : "NOT_CONVERGED",
    `velocity constraints not satisfied: ‖G v + Ct‖∞ = ${r.residualNorm.toExponential(3)}${singular ? " (inconsistent at a singular configuration)" : ""}`,
  );
}

/**
 * The acceleration level: solves the saddle-point system on the independent rows into acc
 * and lambda (minimum-norm multipliers when rows are dependent); returns ‖G a − Qc‖∞.
 */
function accelerationLevel(
  sys: BodySystem,
  set: ConstraintSet,
  computeForces: (t: number, out: Float64Array) => void,
  time: number,
  options: AssemblyOptionsSpec,
  dependent: Int32Array,
  out: Outcome,
  acc: Float64Array,
  lambda: Float64Array,
): number {
  const n = sys.numDofs;
  const m = set.numRows;
  const f = new Float64Array(n);
  computeForces(time, f);
  if (m === 0) {
    massSolve(sys, f, acc);
    return 0;
  }
  const G = set.updateJacobian(time);
  const qc = new Float64Array(m);
  set.quadraticTerm(time, qc);
  const isDependent = new Uint8Array(m);
  for (const r of dependent) isDependent[r] = 1;
  const kept: number[] = [];
  for (let r = 0; r < m; r++) if (!isDependent[r]) kept.push(r);
  const N = n + kept.length;
  const K = saddlePointMatrix(sys, G, kept);
  const rhs = new Float64Array(N);
  rhs.set(f);
  kept.forEach((r, k) => {
    rhs[n + k] = qc[r];
  });
  const x = new Float64Array(N);
  const solver = createLinearSolver(options.solver, MatrixType.SYMMETRIC, N, {
    tolerance: ITERATIVE_TOLERANCE,
    maxIterations: Math.max(1000, 20 * N),
    preconditioner: "jacobi",
  });
  solver.factor(K);
  const info = solver.solve(rhs, x);
  if (!allFinite(x)) {
    out.raise(
      "SINGULAR",
      `the acceleration-level system is singular to working precision (${options.solver}); accelerations and reactions are set to zero`,
    );
    x.fill(0);
  } else if (!info.converged)
    out.raise(
      "ACCELERATION_INACCURATE",
      `${options.solver} did not converge at the acceleration level (relative residual ${info.residual.toExponential(3)} after ${info.iterations} iterations)`,
    );
  acc.set(x.subarray(0, n));
  kept.forEach((r, k) => {
    lambda[r] = x[n + k];
  });
  const rankDeficient = dependent.length > 0;
  if (rankDeficient) minimumNormMultipliers(set, G, n, lambda);
  // ‖G a − Qc‖∞ over every row, the dependent ones included.
  const ga = new Float64Array(m);
  csrMultiply(G, acc, ga);
  for (let r = 0; r < m; r++) ga[r] -= qc[r];
  const res = infNorm(ga);
  // relative to the accelerations too, whose products it sums (as the velocity level's)
  const tol = options.residualTolerance * (1 + infNorm(qc) + infNorm(acc));
  if (!(res <= tol))
    out.raise(
      rankDeficient ? "SINGULAR" : "ACCELERATION_INACCURATE",
      `acceleration constraints not satisfied: ‖G a − Qc‖∞ = ${res.toExponential(3)} > ${tol.toExponential(3)}${rankDeficient ? " (inconsistent at a singular configuration)" : ""}`,
    );
  return res;
}

/** K = [M G_Iᵀ; G_I 0] (G_I: the rows `kept` of G), sparse. */
function saddlePointMatrix(sys: BodySystem, G: CsrMatrix, kept: readonly number[]): CsrMatrix {
  const n = sys.numDofs;
  const ri: number[] = [];
  const ci: number[] = [];
  const vi: number[] = [];
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    for (let i = 0; i < 3; i++) {
      ri.push(d + i);
      ci.push(d + i);
      vi.push(sys.mass[b]);
    }
    if (sys.kind[b] === BodyKind.RIGID)
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          ri.push(d + 3 + i);
          ci.push(d + 3 + j);
          vi.push(sys.inertiaWorld[9 * b + 3 * i + j]);
        }
  }
  kept.forEach((r, k) => {
    for (let p = G.rowPtr[r]; p < G.rowPtr[r + 1]; p++) {
      ri.push(n + k, G.colIdx[p]);
      ci.push(G.colIdx[p], n + k);
      vi.push(G.values[p], G.values[p]);
    }
  });
  const N = n + kept.length;
  return csrFromTriplets(N, N, ri, ci, vi);
}

/** λ ← the minimum-norm multipliers with the same constraint force Gᵀλ. */
function minimumNormMultipliers(
  set: ConstraintSet,
  G: CsrMatrix,
  n: number,
  lambda: Float64Array,
): void {
  const m = set.numRows;
  const g = new Float64Array(n);
  set.multiplyTranspose(lambda, g);
  const gd = csrToDense(G); // m×n row-major = (Gᵀ)ᵀ: transpose into n×m
  const gt = new Float64Array(n * m);
  for (let r = 0; r < m; r++) for (let j = 0; j < n; j++) gt[j * m + r] = gd[r * n + j];
  const qr = rankRevealingQr(gt, n, m, RANK_TOLERANCE);
  const lmin = new Float64Array(m);
  qrMinNormSolve(qr, g, lmin);
  if (allFinite(lmin)) lambda.set(lmin);
}
