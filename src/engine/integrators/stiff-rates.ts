/**
 * The unresolved servos' rates in the symmetric joints' Newton correction
 * (generalized-alpha.ts; AccelerationStepper.holdStiffForces).
 *
 * With SchemeCoefficients.symmetricJoints the step's end velocity is the projection
 * v = P(x)(v_pred + c_v a + κ Y λ̃) onto the joints' tangent at the end (applyUnknown), and
 * a servo the step does not resolve reads its rate ψ = g·v with the gain k = k_d + δ k_p
 * (its lead, JointActuator.leadStiffness: 2.5e5 N·m·s/rad at k_p = 1e8, h = 5 ms). The
 * iteration matrix W takes ∂ψ/∂a = c_v g, the unprojected velocity's, and ∂ψ/∂λ̃ = 0,
 * while λ̃ moves v by κ Y λ̃ less what the projection takes out, and the projection turns
 * with the configuration. On the imported 7-axis arm (every servo at k_p = 1e8, k_d = 0,
 * joint2 commanded 0.5 rad at 5 ms), with the servos' turning in W (TURN_SWITCH), Newton
 * still contracted only linearly, by 0.77 a correction at h/16, and the first step failed;
 * with this term it converges at h in 10 iterations. Taken only by a solve whose plain
 * matrix contracts slowly (acceleration-step.ts SLOW_CONTRACTION): it costs.
 *
 * The missing part is of rank k (the number of such servos): the exact Jacobian of the
 * correction's system is K + U Vᵀ, K the mixed system solved (ConstrainedSolve.solveMixed),
 * U's columns u_s = (w + ε) k_s g_s in the balance rows (the servo's weight in the
 * residual, holdStiffForces), and V_s·z = Dψ_s[z] − c_v g_s·z_a for z = (z_a, z_λ), the
 * rate's directional derivative along the unknown and λ̃ less what W holds. A correction
 * z₀ = K⁻¹ (R, r_c) becomes z = z₀ − Z (I + Vᵀ Z)⁻¹ Vᵀ z₀, Z = K⁻¹ [U; 0]
 * (Sherman–Morrison–Woodbury), with k + 1 directional derivatives, each by central
 * differences from two evaluations of the end state (the positions moved by PERTURBATION),
 * and k solves with the kept factorization. A chord iteration keeps the Z and I + Vᵀ Z of
 * its factorization and takes Vᵀ z₀ anew.
 */

import type { SchemeCoefficients } from "../dynamics/stepper";
import type { ForceEffector } from "../forces/effector";
import { DenseLuSolver } from "../solvers/linear/dense-lu";
import type { StartDirections } from "./start-directions";

/**
 * The position change (m, rad) of a directional derivative's evaluations: the rates' second
 * derivatives leave ~1e-14 relative of it, their rounding (~1e-16 of rates up to 1e2 rad/s)
 * ~1e-9 relative, both far below what Newton's contraction needs.
 */
const PERTURBATION = 1e-7;

/**
 * |Vᵀ Z| below which the correction is left out: W then holds the rates to within it (a
 * servo alone on a hinge to the ground, whose rate the projection leaves as it is:
 * Vᵀ Z ~ 1e-9, the differences' noise), and the noise would only move Newton's last
 * digits (the rod of servo-balance.test at k_p = 1e4: its work–energy balance read
 * 1.3e-9 J of 900 J with it, below 1.9e-11 J without). The arm's read 1e-3 to 0.5.
 */
const NEGLIGIBLE_COUPLING = 1e-6;

/** What the correction needs of the stepper (AccelerationStepper). */
export interface StiffRateHost {
  readonly n: number;
  readonly a: Float64Array;
  readonly startDirections: StartDirections;
  /** The end state of the unknown `a` and λ̃ (startDirections.accel): positions, projected velocities. */
  applyUnknown(c: SchemeCoefficients, a: Float64Array): void;
  /** outA, outL ← the mixed system's solution for the balance's rhs and zero joint rows. */
  solveMixedForce(rhs: Float64Array, outA: Float64Array, outL: Float64Array): void;
}

export class StiffRateCorrection {
  /** The servos of the last factorization that read a rate, and their count. */
  private readonly servos: ForceEffector[] = [];
  private count = 0;
  /** Whether Z and the factored I + Vᵀ Z belong to the running solve's factorization. */
  private ready = false;
  /**
   * g_s (n each), Z's parts (n and m each): one per servo a factorization has read, and one
   * more for the servo being read (whose gain may be 0), grown as more are read and kept
   * (`reserve`). Made up front for every candidate they held 8 (2n + m) bytes an actuator
   * whether or not a correction was ever taken (74 KB each on 500 hinges, quadratic in the
   * model: 9 000 actuated joints needed ~12 GB); only a slowly contracting solve takes one.
   */
  private readonly g: Float64Array[] = [];
  private readonly za: Float64Array[] = [];
  private readonly zl: Float64Array[] = [];
  /** I + Vᵀ Z (row-major k × k) and its LU; Vᵀ z₀, the solution (for the largest k yet). */
  private small = new Float64Array(0);
  private readonly lu = new DenseLuSolver();
  private rhs = new Float64Array(0);
  private solution = new Float64Array(0);
  private plus = new Float64Array(0);
  private minus = new Float64Array(0);
  /** Scratch (n each, made with the first correction): a column of U, the unknown and Y λ̃ held, Y z_λ. */
  private column = new Float64Array(0);
  private heldA = new Float64Array(0);
  private heldAccel = new Float64Array(0);
  private yz = new Float64Array(0);

  constructor(
    private readonly host: StiffRateHost,
    /** The effectors that may be unresolved (holdStiffForces' candidates): k's bound. */
    private readonly candidates: number,
    /** The joint rows (z_λ's length). */
    private readonly m: number,
  ) {}

  /** Makes room for servo s (0-based) of a factorization: its g and Z's parts, the scratch. */
  private reserve(s: number): void {
    const n = this.host.n;
    if (this.column.length !== n) {
      this.column = new Float64Array(n);
      this.heldA = new Float64Array(n);
      this.heldAccel = new Float64Array(n);
      this.yz = new Float64Array(n);
    }
    while (this.g.length <= s) {
      this.g.push(new Float64Array(n));
      this.za.push(new Float64Array(n));
      this.zl.push(new Float64Array(this.m));
    }
  }

  /** Makes room for k servos in the k-sized buffers (grown to the largest k seen, then kept). */
  private reserveMatrix(k: number): void {
    if (this.rhs.length >= k) return;
    this.small = new Float64Array(k * k);
    this.rhs = new Float64Array(k);
    this.solution = new Float64Array(k);
    this.plus = new Float64Array(k);
    this.minus = new Float64Array(k);
  }

  /**
   * Corrects the mixed solve's (Δa, Δλ̃) = (out, dLambda) of the current iterate (the
   * state applyUnknown left at host.a) for the servos' rates (file comment); `refactor`:
   * the solve's factorization is fresh (Z and I + Vᵀ Z made anew). The end state is put
   * back at the iterate.
   */
  correct(
    c: SchemeCoefficients,
    refactor: boolean,
    out: Float64Array,
    dLambda: Float64Array,
  ): void {
    const { host } = this;
    const n = host.n;
    if (refactor) {
      this.ready = false;
      const weight = c.w + c.stiffWeight;
      let k = 0;
      const chosen = c.stiffForces;
      for (let i = 0; i < chosen.length && k < this.candidates; i++) {
        this.reserve(k);
        const gain = chosen[i].rateGainAlong?.(this.g[k]) ?? 0;
        if (gain === 0) continue;
        this.servos[k] = chosen[i];
        const u = this.column;
        for (let j = 0; j < n; j++) u[j] = weight * gain * this.g[k][j];
        host.solveMixedForce(u, this.za[k], this.zl[k]);
        k++;
      }
      this.count = k;
      if (k === 0) return;
      this.reserveMatrix(k);
      this.hold();
      // I + Vᵀ Z by columns
      let coupling = 0;
      for (let j = 0; j < k; j++) {
        this.rateChange(c, this.za[j], this.zl[j], this.rhs);
        for (let i = 0; i < k; i++) {
          this.small[i * k + j] = (i === j ? 1 : 0) + this.rhs[i];
          coupling = Math.max(coupling, Math.abs(this.rhs[i]));
        }
      }
      this.lu.factorDense(this.small, k);
      // W holds the rates already where Vᵀ Z is below NEGLIGIBLE_COUPLING
      this.ready = this.lu.zeroPivot < 0 && coupling > NEGLIGIBLE_COUPLING;
    } else {
      if (!this.ready || this.count === 0) return;
      this.hold();
    }
    if (!this.ready) {
      this.release(c);
      return;
    }
    const k = this.count;
    this.rateChange(c, out, dLambda, this.rhs);
    this.release(c);
    this.lu.solve(this.rhs, this.solution);
    for (let j = 0; j < k; j++) {
      const s = this.solution[j];
      const za = this.za[j];
      const zl = this.zl[j];
      for (let i = 0; i < n; i++) out[i] -= s * za[i];
      for (let i = 0; i < dLambda.length; i++) dLambda[i] -= s * zl[i];
    }
  }

  /** Keeps the iterate's unknown and Y λ̃ (rateChange moves them). */
  private hold(): void {
    this.heldA.set(this.host.a);
    this.heldAccel.set(this.host.startDirections.accel);
  }

  /** Puts the iterate back, its end state too. */
  private release(c: SchemeCoefficients): void {
    const { host } = this;
    host.a.set(this.heldA);
    host.startDirections.accel.set(this.heldAccel);
    host.applyUnknown(c, host.a);
  }

  /**
   * out[s] ← V_s·z = Dψ_s[z] − c_v g_s·z_a for z = (za, zl) by central differences about
   * the held iterate (file comment).
   */
  private rateChange(
    c: SchemeCoefficients,
    za: Float64Array,
    zl: Float64Array,
    out: Float64Array,
  ): void {
    const { host, yz, heldA, heldAccel } = this;
    const n = host.n;
    const k = this.count;
    host.startDirections.directionsOf(zl, yz);
    let position = 0;
    let velocity = 0;
    for (let i = 0; i < n; i++) {
      position = Math.max(position, Math.abs(c.cx * za[i]));
      velocity = Math.max(velocity, Math.abs(c.cv * za[i] + c.startVelocityWeight * yz[i]));
    }
    // the positions move by PERTURBATION; a λ̃ alone moves the velocities (v by κ Y z_λ)
    // as much as c_v/c_x times that
    const size = Math.max(position, (velocity * c.cx) / c.cv);
    if (!(size > 0)) {
      out.fill(0, 0, k);
      return;
    }
    const eps = PERTURBATION / size;
    const { a, startDirections } = host;
    const accel = startDirections.accel;
    for (let side = 0; side < 2; side++) {
      const e = side === 0 ? eps : -eps;
      for (let i = 0; i < n; i++) {
        a[i] = heldA[i] + e * za[i];
        accel[i] = heldAccel[i] + e * yz[i];
      }
      host.applyUnknown(c, a);
      const rates = side === 0 ? this.plus : this.minus;
      for (let s = 0; s < k; s++) rates[s] = this.servos[s].lawRate?.() ?? 0;
    }
    for (let s = 0; s < k; s++) {
      const g = this.g[s];
      let along = 0;
      for (let i = 0; i < n; i++) along += g[i] * za[i];
      out[s] = (this.plus[s] - this.minus[s]) / (2 * eps) - c.cv * along;
    }
  }
}
