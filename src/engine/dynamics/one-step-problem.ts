/**
 * The one-step nonsmooth problem as Moreau–Jean time stepping sees it (Siconos'
 * OneStepNSProblem): a set of unilateral rows H (impulses P ≥ 0, local velocities
 * u = H v), activated at the step start, whose Delassus operator W_c = (c_v/h) H W⁻¹ Hᵀ
 * is formed at the iterate, solved for P from a free velocity, and fed back as the
 * acceleration Δa = (1/h) W⁻¹ Hᵀ P. Implemented by the contacts (NonsmoothContact) and the
 * joint limits (JointLimitProblem); CoupledProblems solves two of them together.
 */
import { VELOCITY_LEVEL_INTEGRATORS } from "../../../schemas/model";
import type { NonsmoothResult } from "../solvers/nonsmooth/types";
import type { NewtonStepper, SchemeCoefficients } from "./stepper";

/**
 * Predicted gap (m, or rad for a joint limit) at or below which a unilateral row is active:
 * g + γ h u⁻ ≤ ε_act (Siconos' MoreauJeanOSI index-set rule; ε_act is not in Siconos: it
 * keeps a resting contact active through round-off).
 */
export const ACTIVATION_TOLERANCE = 1e-6;
/** Siconos' default γ of the activation prediction g + γ h u_n. */
export const ACTIVATION_GAMMA = 0.5;

export interface OneStepProblem {
  /** Active rows at (x_t, v_t); returns how many (0: the step is smooth). */
  updateIndexSet(h: number): number;
  /** W_c at the stepper's current iterate. */
  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void;
  /**
   * P from the free generalized velocity (warm-started from the current P). continued > 0:
   * the problem of the last call (same operator and vFree) solved on from its P, doing in
   * one call what `continued` further calls would (integrators/moreau-jean.ts, step 6); a
   * problem solved exactly may ignore it.
   */
  solve(
    vFree: Float64Array,
    continued?: number,
  ): Pick<NonsmoothResult, "iterations" | "residual" | "converged">;
  /** out += sign·(1/h) W⁻¹ Hᵀ P. */
  addAcceleration(h: number, sign: number, out: Float64Array): void;
  /** out += scale·Hᵀ P. */
  addGeneralizedForce(scale: number, out: Float64Array): void;
  /**
   * Pᵀ H v (J for impulses P in N·s and a generalized velocity v): the impulses' work on v,
   * for the energy balance with v the step's mean velocity (integrators/moreau-jean.ts).
   */
  impulseWork(v: Float64Array): number;
  /** End of step: impulses kept for the next warm start and the reported figures. */
  saveMemory(h: number, theta: number): void;
  /** Forgets memory (reset, state changed from outside). */
  clear(): void;
}

/** Sweeps of the block Gauss–Seidel between two coupled problems at most. */
export const COUPLING_SWEEPS = 50;

/**
 * Two one-step problems on the same bodies (contacts and joint limits) solved together by
 * block Gauss–Seidel: each is solved with the other's impulses held, Δv = c_v Δa added to
 * its free velocity, until no impulse changes by more than `tolerance` (relative to the
 * largest) or COUPLING_SWEEPS. For two monotone LCPs this converges to the solution of the
 * joint problem (the block splitting of a positive semidefinite Delassus operator).
 */
export class CoupledProblems implements OneStepProblem {
  private readonly vA: Float64Array;
  private readonly vB: Float64Array;
  private readonly dv: Float64Array;
  private cv = 0;
  private h = 0;
  private activeA = 0;
  private activeB = 0;

  constructor(
    readonly a: OneStepProblem,
    readonly b: OneStepProblem,
    n: number,
    private readonly tolerance: number,
  ) {
    this.vA = new Float64Array(n);
    this.vB = new Float64Array(n);
    this.dv = new Float64Array(n);
  }

  updateIndexSet(h: number): number {
    this.activeA = this.a.updateIndexSet(h);
    this.activeB = this.b.updateIndexSet(h);
    return this.activeA + this.activeB;
  }

  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void {
    this.cv = c.cv;
    this.h = h;
    if (this.activeA > 0) this.a.assemble(stepper, c, h);
    if (this.activeB > 0) this.b.assemble(stepper, c, h);
  }

  solve(vFree: Float64Array): Pick<NonsmoothResult, "iterations" | "residual" | "converged"> {
    if (this.activeB === 0) return this.a.solve(vFree);
    if (this.activeA === 0) return this.b.solve(vFree);
    let iterations = 0;
    let residual = 0;
    // converged: both last solves met their tolerances and the coupling settled
    let converged = false;
    const { vA, vB, dv, cv, h } = this;
    for (let sweep = 0; sweep < COUPLING_SWEEPS; sweep++) {
      // a with b's impulses held
      dv.fill(0);
      this.b.addAcceleration(h, cv, dv);
      for (let i = 0; i < vA.length; i++) vA[i] = vFree[i] + dv[i];
      const ra = this.a.solve(vA);
      // b with a's impulses held; the change of b's velocity response measures convergence
      dv.fill(0);
      this.a.addAcceleration(h, cv, dv);
      for (let i = 0; i < vB.length; i++) vB[i] = vFree[i] + dv[i];
      dv.fill(0);
      this.b.addAcceleration(h, -cv, dv);
      const rb = this.b.solve(vB);
      this.b.addAcceleration(h, cv, dv);
      iterations += ra.iterations + rb.iterations;
      residual = Math.max(ra.residual, rb.residual);
      converged = ra.converged && rb.converged;
      let change = 0;
      let size = 0;
      for (let i = 0; i < dv.length; i++) {
        change = Math.max(change, Math.abs(dv[i]));
        size = Math.max(size, Math.abs(vB[i]));
      }
      if (change <= this.tolerance * (1 + size)) return { iterations, residual, converged };
    }
    return { iterations, residual, converged: false };
  }

  addAcceleration(h: number, sign: number, out: Float64Array): void {
    if (this.activeA > 0) this.a.addAcceleration(h, sign, out);
    if (this.activeB > 0) this.b.addAcceleration(h, sign, out);
  }

  addGeneralizedForce(scale: number, out: Float64Array): void {
    if (this.activeA > 0) this.a.addGeneralizedForce(scale, out);
    if (this.activeB > 0) this.b.addGeneralizedForce(scale, out);
  }

  impulseWork(v: Float64Array): number {
    return (
      (this.activeA > 0 ? this.a.impulseWork(v) : 0) +
      (this.activeB > 0 ? this.b.impulseWork(v) : 0)
    );
  }

  saveMemory(h: number, theta: number): void {
    this.a.saveMemory(h, theta);
    this.b.saveMemory(h, theta);
  }

  clear(): void {
    this.a.clear();
    this.b.clear();
  }
}

/**
 * Whether an integrator (solver.integrator) steps at the velocity level, impulses and all
 * (Moreau–Jean and its θ = 1 cases, backward and symplectic Euler): only those take
 * one-step nonsmooth problems (contact.method "nsc", nonsmooth joint limits). Newmark and
 * generalized-α step accelerations, whose memory a_t would carry an impulse P/h into the
 * next step's predictor; they take the compliant forms instead. The articulated integrator
 * takes neither (schemas/articulation.ts refuses contact and limits with it).
 */
export function isVelocityLevel(integrator: string): boolean {
  return (VELOCITY_LEVEL_INTEGRATORS as readonly string[]).includes(integrator);
}
