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
 */

import type { JointCoordinate } from "../constraints/joint-coordinate";
import {
  ACTIVATION_GAMMA,
  ACTIVATION_TOLERANCE,
  type OneStepProblem,
} from "../dynamics/one-step-problem";
import type { NewtonStepper, SchemeCoefficients } from "../dynamics/stepper";
import type { BodySystem } from "../model/body-system";
import { createNonsmoothSolver } from "../solvers/nonsmooth";
import type { NonsmoothSolver } from "../solvers/nonsmooth/types";

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
  /** Per active row: the row H (12: a then b), u⁻, the impulse P and W⁻¹Hᵀ (n). */
  private readonly rows: Float64Array;
  private readonly uMinus: Float64Array;
  private readonly r: Float64Array;
  private readonly q: Float64Array;
  private readonly W: Float64Array;
  private readonly cols: Float64Array;
  private readonly rhs: Float64Array;
  /** The last step's impulse per limit and side (warm start and efforts). */
  private readonly remembered: Float64Array;
  private scale = 1;
  private readonly solver: NonsmoothSolver = createNonsmoothSolver("lemke");
  private readonly n: number;

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
    this.r = new Float64Array(m);
    this.q = new Float64Array(m);
    this.W = new Float64Array(m * m);
    this.cols = new Float64Array(m * this.n);
    this.rhs = new Float64Array(this.n);
    this.remembered = new Float64Array(m);
  }

  updateIndexSet(h: number): number {
    this.count = 0;
    this.limits.forEach((l, i) => {
      const q = l.coordinate;
      q.evaluate();
      for (const sigma of [1, -1] as const) {
        const gap = sigma > 0 ? q.value - l.lower : l.upper - q.value;
        const u = sigma * q.rate;
        if (gap + ACTIVATION_GAMMA * h * u > ACTIVATION_TOLERANCE) continue;
        const k = this.count++;
        this.limitOf[k] = i;
        this.side[k] = sigma;
        for (let j = 0; j < 6; j++) {
          this.rows[12 * k + j] = sigma * q.jacA[j];
          this.rows[12 * k + 6 + j] = sigma * q.jacB[j];
        }
        this.uMinus[k] = u;
        this.r[k] = this.remembered[2 * i + (sigma > 0 ? 0 : 1)];
      }
    });
    return this.count;
  }

  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void {
    const m = this.count;
    const n = this.n;
    this.scale = c.cv / h;
    for (let k = 0; k < m; k++) {
      this.rhs.fill(0);
      this.addRowTranspose(k, 1, this.rhs);
      stepper.solveConstrained(c, this.rhs, this.cols.subarray(k * n, k * n + n));
    }
    for (let k = 0; k < m; k++)
      for (let l = 0; l < m; l++)
        this.W[k * m + l] = this.scale * this.rowTimes(k, this.cols.subarray(l * n, l * n + n));
  }

  solve(vFree: Float64Array) {
    const m = this.count;
    for (let k = 0; k < m; k++) {
      const l = this.limits[this.limitOf[k]];
      this.q[k] = this.rowTimes(k, vFree) + l.restitution * this.uMinus[k];
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
    const n = this.n;
    for (let k = 0; k < this.count; k++) {
      const s = (sign * this.r[k]) / h;
      if (s === 0) continue;
      for (let j = 0; j < n; j++) out[j] += s * this.cols[k * n + j];
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
    for (let k = 0; k < this.count; k++) {
      const i = this.limitOf[k];
      this.remembered[2 * i + (this.side[k] > 0 ? 0 : 1)] = this.r[k];
      this.limits[i].coordinate.limitEffort += (this.side[k] * this.r[k]) / h;
    }
  }

  clear(): void {
    this.remembered.fill(0);
    this.count = 0;
  }

  /** out += s Hₖᵀ over the dofs of the row's bodies. */
  private addRowTranspose(k: number, s: number, out: Float64Array): void {
    const l = this.limits[this.limitOf[k]].coordinate;
    this.addSide(l.bodyA, 12 * k, s, out);
    this.addSide(l.bodyB, 12 * k + 6, s, out);
  }

  private addSide(b: number, o: number, s: number, out: Float64Array): void {
    if (b < 0) return;
    const d = this.sys.dofOffset[b];
    if (d < 0) return;
    const w = this.sys.hasOrientation[b] === 1 ? 6 : 3;
    for (let j = 0; j < w; j++) out[d + j] += s * this.rows[o + j];
  }

  /** Hₖ v. */
  private rowTimes(k: number, v: Float64Array): number {
    const l = this.limits[this.limitOf[k]].coordinate;
    return this.sideTimes(l.bodyA, 12 * k, v) + this.sideTimes(l.bodyB, 12 * k + 6, v);
  }

  private sideTimes(b: number, o: number, v: Float64Array): number {
    if (b < 0) return 0;
    const d = this.sys.dofOffset[b];
    if (d < 0) return 0;
    const w = this.sys.hasOrientation[b] === 1 ? 6 : 3;
    let s = 0;
    for (let j = 0; j < w; j++) s += this.rows[o + j] * v[d + j];
    return s;
  }
}
