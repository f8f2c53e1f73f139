/**
 * Joint limits as unilateral constraints of Moreau–Jean time stepping (the nonsmooth
 * treatment; joint-limit.ts is the compliant one). Each bound is a row of the one-step
 * problem (dynamics/one-step-problem.ts) along the joint's coordinate q:
 *
 *   lower:  gap g = q − lower,  row  H =  gᵀ   (u = q̇)
 *   upper:  gap g = upper − q,  row  H = −gᵀ   (u = −q̇)
 *
 * active at the step start when g + γ h u⁻ ≤ ε (Siconos' activation with γ = 1/2, ε =
 * ACTIVATION_TOLERANCE, as for contacts), with the Newton impact law
 *   u⁺ + e u⁻ ≥ 0 ⊥ P ≥ 0
 * (e the limit's restitution), folded into q = H v_free + e u⁻ of the LCP
 * W_c P + q ≥ 0 ⊥ P ≥ 0, W_c = (c_v/h) H W⁻¹ Hᵀ with the joints held (one column
 * W⁻¹ Hᵀ per active row through the stepper's constrained solve). The LCP is small (one
 * row per touching bound) and solved exactly by Lemke's pivoting. The reported limit effort
 * is σ P/h (σ = +1 lower, −1 upper): the mean effort over the step.
 *
 * The impact law holds velocities; a bound passed within the step (by up to h |u⁻|/2 at
 * θ = ½, the step activating on the predicted gap) would stay passed: `project` moves the
 * positions back after the step, as nonsmooth contact's position projection does
 * (Siconos' TimeSteppingProjectOnConstraints; contact/projection.ts). Under moreau-jean and
 * its family a bound reached within a step is met at its instant, the step split there
 * (integrators/impact-events.ts), so what `project` moves back is what a piece's end and
 * a step's velocity-level law leave.
 */

import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { projectionWorkspace } from "../constraints/project";
import {
  ACTIVATION_GAMMA,
  ACTIVATION_TOLERANCE,
  type OneStepProblem,
} from "../dynamics/one-step-problem";
import type { NewtonStepper, SchemeCoefficients } from "../dynamics/stepper";
import { extend, grow } from "../math/grow";
import {
  addPositionIncrement,
  type BodySystem,
  getVelocity,
  massSolve,
  setVelocity,
} from "../model/body-system";
import { createNonsmoothSolver } from "../solvers/nonsmooth";
import type { NonsmoothSolver } from "../solvers/nonsmooth/types";

/** rows[12 k ..] ← the row H = σ g of a bound (side σ: +1 lower, −1 upper), its sides a, b. */
function writeRow(rows: Float64Array, k: number, sigma: number, q: JointCoordinate): void {
  for (let j = 0; j < 6; j++) {
    rows[12 * k + j] = sigma * q.jacA[j];
    rows[12 * k + 6 + j] = sigma * q.jacB[j];
  }
}

/**
 * Whether a rebound at restitution e from the rate u (< 0: towards the bound; rad/s or m/s)
 * is one the steps cannot resolve: its flight against the pull Δ the joint has towards the
 * bound over a step (its rate's change, a h) is at most four steps, 2 e |u|/a ≤ 4 h, i.e.
 * e |u| ≤ 2Δ (JointLimitProblem.solve's comment). Such a rebound ends at rest on the bound.
 */
export function unresolvedRebound(e: number, u: number, pull: number): boolean {
  return u < 0 && e * -u <= 2 * pull;
}

/**
 * A row of H Y Hᵀ whose pivot in its Cholesky factor is at most this fraction of its
 * diagonal depends on the rows before it (solveSemidefinite).
 */
const DEPENDENT_PIVOT = 1e-9;

/**
 * Solves A x = b in place (b ← x) for the symmetric positive semidefinite m × m matrix A
 * (row-major) by Cholesky's factorization A = L Lᵀ (L in `factor`), a row whose pivot is
 * round-off of its diagonal (≤ DEPENDENT_PIVOT A_kk) dropped: its x_k = 0 and its column of
 * L zero, so the rows kept are solved exactly. Dependent rows are the bounds of joints a
 * mimic couples (q₂ = q₁: their rows along Y are one), both passed at once; the rows kept
 * move them both (the joints held), so the dropped ones' gaps close with them. Without the
 * drop the singular matrix failed the inverse and no bound was projected: the 7-axis arm's
 * fingers (finger_joint2 mimics finger_joint1, upper bound 0.04 m) dropped on a floor under
 * moreau-jean rested at 0.0453 m, and joint4, in the same projection, 0.035 rad past its
 * bound. False when a pivot is not finite.
 */
export function solveSemidefinite(
  a: Float64Array,
  m: number,
  b: Float64Array,
  factor: Float64Array,
): boolean {
  for (let k = 0; k < m; k++) {
    let d = a[k * m + k];
    for (let j = 0; j < k; j++) d -= factor[k * m + j] * factor[k * m + j];
    const kept = d > DEPENDENT_PIVOT * a[k * m + k];
    if (!Number.isFinite(d)) return false;
    const lkk = kept ? Math.sqrt(d) : 0;
    factor[k * m + k] = lkk;
    for (let i = k + 1; i < m; i++) {
      let s = a[i * m + k];
      for (let j = 0; j < k; j++) s -= factor[i * m + j] * factor[k * m + j];
      factor[i * m + k] = kept ? s / lkk : 0;
    }
  }
  // L y = b, then Lᵀ x = y (the dropped rows' unknowns 0)
  for (let k = 0; k < m; k++) {
    const lkk = factor[k * m + k];
    let s = b[k];
    for (let j = 0; j < k; j++) s -= factor[k * m + j] * b[j];
    b[k] = lkk > 0 ? s / lkk : 0;
  }
  for (let k = m - 1; k >= 0; k--) {
    const lkk = factor[k * m + k];
    let s = b[k];
    for (let i = k + 1; i < m; i++) s -= factor[i * m + k] * b[i];
    b[k] = lkk > 0 ? s / lkk : 0;
  }
  return true;
}

/**
 * An active row's impulse P is reported as no effort (JointLimitProblem.saveMemory) when
 * the rate it gives its own row, |W_kk P| (m/s or rad/s), is within round-off of the rates
 * it balances, EFFORT_ROUNDOFF (Σ_j |H_kj v_free,j| + e |u⁻| + Σ_{l≠k} |W_kl P_l|), or
 * below EFFORT_FLOOR, far below any rate a state resolves: a bound touching without load
 * reported 3.5e-63 N·m (a rod resting on its bound with the gravity along its hinge).
 */
const EFFORT_ROUNDOFF = 1e-12;
const EFFORT_FLOOR = 1e-14;

/**
 * Columns of the dofs (W⁻¹Hᵀ, Y Hᵀ: one per row) held by their nonzeros: a bound's column
 * moves the bodies its joint's mechanism couples, not the model (a body hinged to the
 * ground alone: its 6 dofs of n). Held dense, for every bound, they took 2·2L·n doubles,
 * 71 KB a limit on 250 hinged bodies and 144 KB on 500 (quadratic in the model); the
 * buffers grow to the largest count of nonzeros seen and are kept (no per-step allocation).
 * The zeros left out add nothing to what reads them (x + s·0 = x).
 */
class SparseColumns {
  private start = new Int32Array(1);
  private index = new Int32Array(0);
  private value = new Float64Array(0);
  private count = 0;

  clear(): void {
    this.count = 0;
  }

  /** Appends the column `dense` (its nonzeros) as the next one. */
  push(dense: Float64Array): void {
    const k = this.count;
    let end = this.start[k];
    this.start = extend(this.start, k + 2);
    this.index = extend(this.index, end + dense.length);
    this.value = extend(this.value, end + dense.length);
    for (let j = 0; j < dense.length; j++) {
      if (dense[j] === 0) continue;
      this.index[end] = j;
      this.value[end++] = dense[j];
    }
    this.start[k + 1] = end;
    this.count = k + 1;
  }

  /** out += s · column k. */
  addTo(k: number, s: number, out: Float64Array): void {
    const { index, value } = this;
    for (let p = this.start[k]; p < this.start[k + 1]; p++) out[index[p]] += s * value[p];
  }
}

/** Position projection passes per step at most (JointLimitProblem.project). */
const PROJECTION_PASSES = 4;

export interface NonsmoothLimit {
  coordinate: JointCoordinate;
  lower: number;
  upper: number;
  restitution: number;
}

export class JointLimitProblem implements OneStepProblem {
  /** Active rows: limit index and side (+1 lower, −1 upper). */
  private readonly limitOf: Int32Array;
  private readonly side: Int8Array;
  private count = 0;
  /**
   * Per active row: the row H (12: a then b), u⁻, the impulse P and W⁻¹Hᵀ (`cols`, sparse);
   * the LCP's W (count², grown with the active rows: made for all 2L bounds, it held (2L)²
   * doubles).
   */
  private readonly rows: Float64Array;
  private readonly uMinus: Float64Array;
  /** Per active row: Σ_j |H_kj v_free,j| + e |u⁻|, the rates its LCP row sums (saveMemory). */
  private readonly balanced: Float64Array;
  private readonly r: Float64Array;
  private readonly q: Float64Array;
  private W = new Float64Array(0);
  private readonly cols = new SparseColumns();
  /** A column of the dofs as it is solved (assemble, passedSolve). */
  private readonly column: Float64Array;
  private readonly rhs: Float64Array;
  /** The last step's impulse per limit and side (warm start and efforts). */
  private readonly remembered: Float64Array;
  private scale = 1;
  private readonly solver: NonsmoothSolver = createNonsmoothSolver("lemke");
  private readonly n: number;
  /**
   * The position projection's rows (the bounds passed: H as `rows`, their gaps), columns
   * Y Hᵀ (sparse), H Y Hᵀ and its factor (m², grown to the most rows passed at once), the
   * multipliers and the move (`project`).
   */
  private readonly passedRows: Float64Array;
  private readonly passedLimit: Int32Array;
  private readonly passedGap: Float64Array;
  private readonly passedCols = new SparseColumns();
  private passedMatrix = new Float64Array(0);
  private passedFactor = new Float64Array(0);
  private readonly passedMu: Float64Array;
  private readonly move: Float64Array;
  private readonly unit: Float64Array;
  /** 1 for each bound (2 i + [upper]) the last `project` moved back onto (restPassed). */
  private readonly moved: Uint8Array;

  constructor(
    private readonly sys: BodySystem,
    readonly limits: readonly NonsmoothLimit[],
  ) {
    const m = 2 * limits.length;
    this.n = sys.numDofs;
    this.limitOf = new Int32Array(m);
    this.side = new Int8Array(m);
    this.rows = new Float64Array(12 * m);
    this.uMinus = new Float64Array(m);
    this.balanced = new Float64Array(m);
    this.r = new Float64Array(m);
    this.q = new Float64Array(m);
    this.rhs = new Float64Array(this.n);
    this.column = new Float64Array(this.n);
    this.remembered = new Float64Array(m);
    this.passedRows = new Float64Array(12 * m);
    this.passedLimit = new Int32Array(m);
    this.passedGap = new Float64Array(m);
    this.passedMu = new Float64Array(m);
    this.move = new Float64Array(this.n);
    this.unit = new Float64Array(this.n);
    this.moved = new Uint8Array(m);
    this.deferred = new Uint8Array(m);
    this.anyRestitution = limits.some((l) => l.restitution > 0);
  }

  /**
   * Moves the positions of the bounds passed by more than `tolerance` (rad or m) back onto
   * them, the joints of `set` held to first order: the smallest move in the kinetic metric,
   *   δx = Y Hᵀ μ,  (H Y Hᵀ) μ = −g,  Y = M⁻¹ − M⁻¹ Gᵀ S⁻¹ G M⁻¹,  S = G M⁻¹ Gᵀ
   * (H the passed bounds' rows, g < 0 their gaps, G the joints' Jacobian at t; Y = M⁻¹
   * without joints), `joints` (the joints' own projection) closing after each move what it
   * left of them (second order), repeated while a bound is passed, PROJECTION_PASSES times
   * at most. Velocities are kept. `only` (1 per limit; null: all) leaves the others where
   * they are. Returns the largest passage left (≥ 0).
   */
  project(
    set: ConstraintSet | null,
    t: number,
    tolerance: number,
    joints: (() => void) | null = null,
    only: Uint8Array | null = null,
  ): number {
    let passed = 0;
    this.moved.fill(0);
    for (let pass = 0; pass <= PROJECTION_PASSES; pass++) {
      // the bounds passed, as rows H (σ jac) with their gaps
      // (indexed loops: this runs every step, and a closure or a [1, −1] literal would
      // allocate each time)
      let m = 0;
      passed = 0;
      for (let i = 0; i < this.limits.length; i++) {
        if (only !== null && only[i] === 0) continue;
        const l = this.limits[i];
        const q = l.coordinate;
        q.evaluate();
        for (let sigma = 1; sigma >= -1; sigma -= 2) {
          const gap = sigma > 0 ? q.value - l.lower : l.upper - q.value;
          if (gap >= -tolerance) continue;
          passed = Math.max(passed, -gap);
          if (pass < PROJECTION_PASSES) this.moved[2 * i + (sigma > 0 ? 0 : 1)] = 1;
          writeRow(this.passedRows, m, sigma, q);
          this.passedLimit[m] = i;
          this.passedGap[m++] = gap;
        }
      }
      if (m === 0 || pass === PROJECTION_PASSES) break;
      if (!this.passedSolve(set, t, m)) break;
      addPositionIncrement(this.sys, this.move, 1);
      joints?.();
    }
    return passed;
  }

  /**
   * After `project`: the bounds it moved back onto that were not among the step's active
   * rows (updateIndexSet's, or impact-events.ts' last piece's), and whose rate at the end
   * points away from them (u = H v > 0), get u = 0, the velocity changed by the smallest
   * impulse in the kinetic metric with the joints held (δv = Y Hᵀ ν, (H Y Hᵀ) ν = −u, Y as
   * in `project`, at the end configuration t). Such a bound was passed and left within the
   * step by a motion the step never held against it (the activation at the start read a
   * rate away from it, or none): a servo pulling its joint past its bound towards a target
   * beyond it ends the step ringing about that target, away from the bound, and `project`,
   * which keeps velocities, set it on the bound still moving away; the next step's
   * activation, g + γ h u > 0, then left the bound out again, and the step ran past it the
   * same way, forever (a 3-link chain's middle servo at k_p = 1e6, k_d = 1e3 commanded
   * 0.5 rad against a bound at 0.45 rad ended every 5 ms step on the bound at 2.30 rad/s
   * away from it, the servo's effort 1.4e3 N·m where 5e4 N·m press the bound, energy.error
   * growing by 44 J a step). The joint met the bound within the step: Newton's law there,
   * u⁺ = 0 (what the step missed of it is left: e u⁻ with restitution, whose impacts
   * impact-events.ts meets at their instants), so the next step activates it (g = 0, u = 0)
   * and its one-step problem holds it. A rate towards the bound is the next step's impact
   * law's. The kinetic energy this takes is the limits' work (moreau-jean.ts).
   */
  restPassed(set: ConstraintSet | null, t: number): void {
    const v = this.move;
    let m = 0;
    for (let i = 0; i < this.limits.length; i++)
      for (let sigma = 1; sigma >= -1; sigma -= 2) {
        if (this.moved[2 * i + (sigma > 0 ? 0 : 1)] === 0 || this.isActive(i, sigma)) continue;
        if (m === 0) getVelocity(this.sys, v);
        const q = this.limits[i].coordinate;
        q.evaluate();
        writeRow(this.passedRows, m, sigma, q);
        const u = this.timesRows(this.passedRows, i, 12 * m, v);
        if (u <= 0) continue;
        this.passedLimit[m] = i;
        // (u taken to 0 as `project` takes its gaps)
        this.passedGap[m++] = u;
      }
    if (m === 0 || !this.passedSolve(set, t, m)) return;
    // move = the velocity change; v, read into `move` above, is the state's again
    getVelocity(this.sys, this.unit);
    for (let j = 0; j < this.n; j++) this.unit[j] += this.move[j];
    setVelocity(this.sys, this.unit);
  }

  /** Whether bound σ of limit i is among the step's active rows. */
  private isActive(i: number, sigma: number): boolean {
    for (let k = 0; k < this.count; k++)
      if (this.limitOf[k] === i && this.side[k] === sigma) return true;
    return false;
  }

  /**
   * move ← Y Hᵀ μ, (H Y Hᵀ) μ = −passedGap, for the m rows passedRows (limits passedLimit)
   * at t (`project`); false where H Y Hᵀ is not positive semidefinite.
   */
  private passedSolve(set: ConstraintSet | null, t: number, m: number): boolean {
    const n = this.n;
    this.passedMatrix = grow(this.passedMatrix, m * m);
    this.passedFactor = grow(this.passedFactor, m * m);
    // the columns Y Hₗᵀ, each kept by its nonzeros once H Y Hᵀ's column l is taken of it
    const ws = set === null ? null : projectionWorkspace(set);
    ws?.factorAt(t);
    const col = this.column;
    this.passedCols.clear();
    for (let l = 0; l < m; l++) {
      this.unit.fill(0);
      this.addRows(this.passedRows, this.passedLimit[l], 12 * l, 1, this.unit);
      massSolve(this.sys, this.unit, col);
      if (ws !== null && set !== null) {
        set.multiply(col, ws.c);
        ws.correction(ws.c, ws.du);
        for (let j = 0; j < n; j++) col[j] += ws.du[j];
      }
      for (let k = 0; k < m; k++)
        this.passedMatrix[k * m + l] = this.timesRows(
          this.passedRows,
          this.passedLimit[k],
          12 * k,
          col,
        );
      this.passedCols.push(col);
    }
    const mu = this.passedMu;
    for (let k = 0; k < m; k++) mu[k] = -this.passedGap[k];
    if (!solveSemidefinite(this.passedMatrix, m, mu, this.passedFactor)) return false;
    this.move.fill(0);
    for (let k = 0; k < m; k++) if (mu[k] !== 0) this.passedCols.addTo(k, mu[k], this.move);
    return true;
  }

  /**
   * The bounds touching now (gap ≤ ACTIVATION_TOLERANCE) as the active rows, for an impact
   * at this instant (integrators/impact-events.ts: Newton's law with them); returns their
   * number. The next step's updateIndexSet replaces them.
   */
  touchingRows(): number {
    return this.updateIndexSet(0);
  }

  /** Active row k's rate u = H v (m/s, rad/s; impact-events.ts). */
  rowRate(k: number, v: Float64Array): number {
    return this.rowTimes(k, v);
  }

  /** out += s H_kᵀ for active row k (impact-events.ts). */
  addRow(k: number, s: number, out: Float64Array): void {
    this.addRowTranspose(k, s, out);
  }

  /** Active row k's limit index and side (+1 lower, −1 upper). */
  rowLimit(k: number): number {
    return this.limitOf[k];
  }
  rowSide(k: number): number {
    return this.side[k];
  }

  /** The active rows of the step (updateIndexSet's count). */
  get activeRows(): number {
    return this.count;
  }

  /** The limit of active row k (< activeRows): the bodies it holds (moreau-jean.ts, markApart). */
  activeLimit(k: number): NonsmoothLimit {
    return this.limits[this.limitOf[k]];
  }

  /**
   * Whether a bound has restitution: its impacts are met at their instants
   * (impact-events.ts, which defers a bound closing later in the step: `defer`).
   */
  readonly anyRestitution: boolean;
  /** 1 for each bound (2 i + [upper]) left open in the running piece (`defer`). */
  private readonly deferred: Uint8Array;

  /** Leaves bound σ of limit i open (not activated) until clearDeferred (impact-events.ts). */
  defer(i: number, sigma: number): void {
    this.deferred[2 * i + (sigma > 0 ? 0 : 1)] = 1;
  }

  clearDeferred(): void {
    this.deferred.fill(0);
  }

  /**
   * Defers every bound not touching now (gap > ACTIVATION_TOLERANCE), for the rest of a step
   * that impact-events.ts takes whole once its pieces run out: its index set would read the
   * joint's rate at the rest's start, g + h u/2 ≤ ε, which a stiff servo reverses within a
   * fraction of it. A rod (I = 0.24 kg·m²) whose servo (k_p = 1e8 N·m/rad, k_d = 0: ω = 2.0e4
   * rad/s) rings about −0.5 rad between 0 and −1 rad, 0.1 rad short of its bound at 0.1 rad,
   * ran out of pieces (six a period, chasing its approaches and apexes) 3.35 ms into its
   * first 5 ms step at −0.197 rad, 8124 rad/s towards the bound: the bound, 0.297 rad away
   * (the servo turns the rod back 0.26 rad on), was activated, and the contact step (joints
   * at the velocity level, h ω = 34) ended at 2.995 rad, halved to 0.573 rad, which the
   * projection set on the bound: the rod put 0.1 rad past its reach, ½ k_p (0.6² − 0.5²) =
   * 5.5e6 J more in the servo than the ring ever held. Deferred, the rest is the smooth step
   * (its error control and sub-steps); a bound it passes is moved back and left at rest by
   * `project` and restPassed, as one that a step's activation misses (a ring of servos no
   * halving resolves is first ended by a piece with the step's lead: impact-events.ts, the
   * ring's end; at k_p = 1e10 the rest, started from the ring's 8.1e4 rad/s, ran 0.83 rad
   * past the bound before). A bound touching
   * keeps the rest's own Newton law (resting on it, or just met).
   */
  deferApart(): void {
    for (let i = 0; i < this.limits.length; i++) {
      const l = this.limits[i];
      const q = l.coordinate;
      q.evaluateValue();
      if (q.value - l.lower > ACTIVATION_TOLERANCE) this.deferred[2 * i] = 1;
      if (l.upper - q.value > ACTIVATION_TOLERANCE) this.deferred[2 * i + 1] = 1;
    }
  }

  updateIndexSet(h: number): number {
    this.count = 0;
    this.limits.forEach((l, i) => {
      const q = l.coordinate;
      q.evaluate();
      for (const sigma of [1, -1] as const) {
        if (this.deferred[2 * i + (sigma > 0 ? 0 : 1)] === 1) continue;
        const gap = sigma > 0 ? q.value - l.lower : l.upper - q.value;
        const u = sigma * q.rate;
        if (gap + ACTIVATION_GAMMA * h * u > ACTIVATION_TOLERANCE) continue;
        const k = this.count++;
        this.limitOf[k] = i;
        this.side[k] = sigma;
        writeRow(this.rows, k, sigma, q);
        this.uMinus[k] = u;
        this.r[k] = this.remembered[2 * i + (sigma > 0 ? 0 : 1)];
      }
    });
    return this.count;
  }

  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void {
    const m = this.count;
    this.scale = c.cv / h;
    this.W = grow(this.W, m * m);
    // the columns W⁻¹Hₗᵀ, each kept by its nonzeros once W's column l is taken of it
    const col = this.column;
    this.cols.clear();
    for (let l = 0; l < m; l++) {
      this.rhs.fill(0);
      this.addRowTranspose(l, 1, this.rhs);
      stepper.solveConstrained(c, this.rhs, col);
      for (let k = 0; k < m; k++) this.W[k * m + l] = this.scale * this.rowTimes(k, col);
      this.cols.push(col);
    }
  }

  /**
   * The LCP of the active rows: q = H v_free + e' u⁻, with Newton's coefficient e' = e,
   * or 0 for a rebound the steps cannot resolve: one whose flight, at e |u⁻| against the
   * pull the step's free motion has towards the bound, Δ = u⁻ − H v_free > 0 (rad/s or m/s
   * over the step, joints held), is at most four steps, 2 e |u⁻|/a ≤ 4 h (a = Δ/h), i.e.
   * e |u⁻| ≤ 2Δ. The impact is not located within its step (u⁻ is the step's start rate,
   * and the rebound leaves from the step's end), so each end of such a flight is off by up
   * to a step, half of it or more; the body rests on the bound instead (as a contact's
   * rebound that would be back on the surface by the step's end, Contact). Without it the
   * law never let a joint come to rest at e > 0: resting on the bound it bounced on every
   * other step at |u⁻| = a h/(1 + e) for ever (a 1 kg, 1 m rod on its bound at e = ½, 1 ms:
   * ±9.4e-3 rad/s four seconds after the Zeno accumulation of its bounces at 0.5 s, the
   * limit effort 0 and twice the gravity moment in turn), or in longer cycles, which the
   * unlocated impacts' timing error feeds (a slider at e = ½, 1/60 s: every third step);
   * a flight of two steps as the bound still left such cycles at e = 0.8. Under moreau-jean
   * and its family the impacts of bounds with e > 0 are met at their instants
   * (impact-events.ts, which takes the same rule at the impact: unresolvedRebound), so a
   * step's own Newton law holds bounds resting or met at an unresolved rate; left to it, at
   * e ≥ 0.9 cycles of about 2/(1 − e) steps hopped for ever, the impacts' timing error
   * feeding them.
   */
  solve(vFree: Float64Array) {
    const m = this.count;
    for (let k = 0; k < m; k++) {
      const l = this.limits[this.limitOf[k]];
      const uFree = this.rowTimes(k, vFree);
      const u = this.uMinus[k];
      const unresolved = unresolvedRebound(l.restitution, u, u - uFree);
      this.q[k] = uFree + (unresolved ? 0 : l.restitution * u);
      this.balanced[k] =
        this.timesRows(this.rows, this.limitOf[k], 12 * k, vFree, true) +
        (unresolved ? 0 : Math.abs(l.restitution * u));
    }
    const res = this.solver.solve(
      { contacts: m, contactDim: 1, W: this.W.subarray(0, m * m), q: this.q },
      this.r,
      {
        maxIterations: 10 * m + 10,
        tolerance: 1e-12,
        warmStart: true,
      },
    );
    if (res.status === "diverged" || !Number.isFinite(res.residual))
      throw new Error(`joint limits: the LCP solver failed (${res.message ?? "NaN"})`);
    return res;
  }

  addAcceleration(h: number, sign: number, out: Float64Array): void {
    for (let k = 0; k < this.count; k++) {
      const s = (sign * this.r[k]) / h;
      if (s !== 0) this.cols.addTo(k, s, out);
    }
  }

  addGeneralizedForce(scale: number, out: Float64Array): void {
    for (let k = 0; k < this.count; k++)
      if (this.r[k] !== 0) this.addRowTranspose(k, scale * this.r[k], out);
  }

  impulseWork(v: Float64Array): number {
    let work = 0;
    for (let k = 0; k < this.count; k++)
      if (this.r[k] !== 0) work += this.r[k] * this.rowTimes(k, v);
    return work;
  }

  saveMemory(h: number, _theta: number): void {
    this.remembered.fill(0);
    for (const l of this.limits) l.coordinate.limitEffort = 0;
    const m = this.count;
    for (let k = 0; k < m; k++) {
      const i = this.limitOf[k];
      this.remembered[2 * i + (this.side[k] > 0 ? 0 : 1)] = this.r[k];
      // an impulse within round-off is no effort (EFFORT_ROUNDOFF)
      let others = this.balanced[k];
      for (let l = 0; l < m; l++) if (l !== k) others += Math.abs(this.W[k * m + l] * this.r[l]);
      const own = Math.abs(this.W[k * m + k] * this.r[k]);
      if (own <= EFFORT_FLOOR || own <= EFFORT_ROUNDOFF * others) continue;
      this.limits[i].coordinate.limitEffort += (this.side[k] * this.r[k]) / h;
    }
  }

  clear(): void {
    this.remembered.fill(0);
    this.count = 0;
    this.deferred.fill(0);
  }

  /** out += s Hₖᵀ over the dofs of the row's bodies. */
  private addRowTranspose(k: number, s: number, out: Float64Array): void {
    this.addRows(this.rows, this.limitOf[k], 12 * k, s, out);
  }

  /** Hₖ v. */
  private rowTimes(k: number, v: Float64Array): number {
    return this.timesRows(this.rows, this.limitOf[k], 12 * k, v);
  }

  /** out += s Hᵀ for the row H at rows[o..o+12) (its sides a, b) of limit `limit`. */
  private addRows(rows: Float64Array, limit: number, o: number, s: number, out: Float64Array) {
    const q = this.limits[limit].coordinate;
    this.addSide(rows, q.bodyA, o, s, out);
    this.addSide(rows, q.bodyB, o + 6, s, out);
  }

  /** H v for the row H at rows[o..o+12) of limit `limit`; with `abs`, Σ_j |H_j v_j|. */
  private timesRows(
    rows: Float64Array,
    limit: number,
    o: number,
    v: Float64Array,
    abs = false,
  ): number {
    const q = this.limits[limit].coordinate;
    return this.sideTimes(rows, q.bodyA, o, v, abs) + this.sideTimes(rows, q.bodyB, o + 6, v, abs);
  }

  private addSide(rows: Float64Array, b: number, o: number, s: number, out: Float64Array): void {
    if (b < 0) return;
    const d = this.sys.dofOffset[b];
    if (d < 0) return;
    const w = this.sys.hasOrientation[b] === 1 ? 6 : 3;
    for (let j = 0; j < w; j++) out[d + j] += s * rows[o + j];
  }

  private sideTimes(
    rows: Float64Array,
    b: number,
    o: number,
    v: Float64Array,
    abs: boolean,
  ): number {
    if (b < 0) return 0;
    const d = this.sys.dofOffset[b];
    if (d < 0) return 0;
    const w = this.sys.hasOrientation[b] === 1 ? 6 : 3;
    let s = 0;
    if (abs) for (let j = 0; j < w; j++) s += Math.abs(rows[o + j] * v[d + j]);
    else for (let j = 0; j < w; j++) s += rows[o + j] * v[d + j];
    return s;
  }
}
