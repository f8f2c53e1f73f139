/**
 * The joint force of SchemeCoefficients.symmetricJoints (generalized-α): the joints are
 * held by a force ρ M Y λ̃ along the directions of the step's START configuration,
 *     Y λ̃ = M_t⁻¹ G_tᵀ λ̃   (m/s², rad/s²),
 * with G_t and M_t⁻¹ frozen at time t and the multipliers λ̃ (N, N·m) found by Newton
 * with the step's acceleration. This object holds the frozen G_t values and world inverse
 * inertias, λ̃ and Y λ̃, and performs the λ̃ part of each Newton correction. Without
 * joints (set null) Y λ̃ stays 0.
 */
import type { ConstraintSet } from "../constraints/constraint-set";
import type { SchemeCoefficients } from "../dynamics/stepper";
import { type BodySystem, massSolveWith } from "../model/body-system";
import type { AccelerationStepper } from "./acceleration-step";
import type { ConstrainedSolve } from "./constrained-solve";

export class StartDirections {
  /** λ̃ (N, N·m) */
  readonly lambda: Float64Array;
  /** Y λ̃ = M_t⁻¹ G_tᵀ λ̃ (m/s², rad/s²) */
  readonly accel: Float64Array;
  /** ‖ρ Y Δλ̃‖∞ of the last correction (m/s²): part of Newton's convergence test. */
  change = 0;
  /** G's values and the world inverse inertias at the step's start. */
  private readonly startG: Float64Array;
  private readonly startInertiaInv: Float64Array;
  /**
   * momentumRows: the world inertias at the start, and the mixed Jacobian's inertias
   * α I_t + β I_end (9 per body; `correct`).
   */
  private readonly startInertia: Float64Array;
  private readonly mixedInertia: Float64Array;
  /**
   * momentumRows: 1 for each body whose rows are in angular momentum (the rest keep the
   * force form's I_end), or null: every body (begin).
   */
  private momentumBody: Uint8Array | null = null;
  /** Scratch: G_tᵀ Δλ̃ and M_t⁻¹ of it. */
  private readonly force: Float64Array;
  private readonly scratch: Float64Array;

  constructor(
    private readonly sys: BodySystem,
    private readonly set: ConstraintSet | null,
  ) {
    const n = sys.numDofs;
    this.lambda = new Float64Array(set?.numRows ?? 0);
    this.accel = new Float64Array(n);
    this.startG = new Float64Array(set?.G.values.length ?? 0);
    this.startInertiaInv = new Float64Array(sys.inertiaWorldInv.length);
    this.startInertia = new Float64Array(sys.inertiaWorld.length);
    this.mixedInertia = new Float64Array(sys.inertiaWorld.length);
    this.force = new Float64Array(n);
    this.scratch = new Float64Array(n);
  }

  /**
   * Records G and M⁻¹ at the step's start configuration (time t, the current state) and
   * starts λ̃ from the last step's joint multipliers.
   */
  begin(
    t: number,
    lambda: Float64Array,
    c: SchemeCoefficients | null = null,
    momentumBody: Uint8Array | null = null,
  ): void {
    const { set, sys } = this;
    if (set === null) return;
    set.updateJacobian(t);
    this.startG.set(set.G.values);
    this.startInertiaInv.set(sys.inertiaWorldInv);
    if (c?.momentumRows === true) this.startInertia.set(sys.inertiaWorld);
    this.momentumBody = momentumBody;
    this.lambda.set(lambda);
    set.multiplyTranspose(this.lambda, this.force, this.startG);
    massSolveWith(sys, this.startInertiaInv, this.force, this.accel);
  }

  /** out ← G_t v (per row; m/s, rad/s): the rates of v along the start's directions. */
  startRates(v: Float64Array, out: Float64Array): void {
    this.set?.multiply(v, out, this.startG);
  }

  /** out ← Y dLambda = M_t⁻¹ G_tᵀ dLambda (m/s², rad/s²); 0 without joints. */
  directionsOf(dLambda: Float64Array, out: Float64Array): void {
    const { set, sys } = this;
    if (set === null) {
      out.fill(0);
      return;
    }
    set.multiplyTranspose(dLambda, this.force, this.startG);
    massSolveWith(sys, this.startInertiaInv, this.force, out);
  }

  /**
   * λ̃ += dLambda (N, N·m) and Y λ̃ with it; out += ρ Y dLambda (ρ = c.startForceWeight), the
   * unknown a = b + ρ Y λ̃ keeping its free part b (a change of Newton's first iterate:
   * AccelerationStepper.shiftStiffStart).
   */
  shift(dLambda: Float64Array, rho: number, out: Float64Array): void {
    const { set, sys } = this;
    if (set === null) return;
    for (let i = 0; i < dLambda.length; i++) this.lambda[i] += dLambda[i];
    set.multiplyTranspose(dLambda, this.force, this.startG);
    massSolveWith(sys, this.startInertiaInv, this.force, this.scratch);
    for (let i = 0; i < this.scratch.length; i++) {
      this.accel[i] += this.scratch[i];
      out[i] += rho * this.scratch[i];
    }
  }

  /**
   * momentumRows: the inertias of the joints' force in the exact mixed Jacobian. The
   * momentum rows hold (c_v ρ + κ) G_tᵀλ̃/c_v and, through the rate ω' = … + κ Y λ̃ they
   * weigh with I_end, −κ I_end I_t⁻¹ G_tᵀλ̃/c_v: ρ Ī I_t⁻¹ G_tᵀ λ̃ with Ī = α I_t + β I_end,
   * α = (c_v ρ + κ)/(c_v ρ), β = −κ/(c_v ρ) (α + β = 1: Ī = I for an isotropic body, the
   * force form's ρ M M_t⁻¹ G_tᵀ).
   */
  private mixedInertias(c: SchemeCoefficients): Float64Array {
    const rho = c.cv * c.startForceWeight;
    const alpha = (rho + c.startVelocityWeight) / rho;
    const beta = -c.startVelocityWeight / rho;
    const { mixedInertia, startInertia, momentumBody } = this;
    const end = this.sys.inertiaWorld;
    for (let i = 0; i < end.length; i++)
      mixedInertia[i] =
        momentumBody === null || momentumBody[(i / 9) | 0] === 1
          ? alpha * startInertia[i] + beta * end[i]
          : end[i];
    return mixedInertia;
  }

  /**
   * One Newton correction of the constrained system for Δa (into `out`) and λ̃: the
   * balance holds the joints' force ρ M Y λ̃ (residual), so Newton for the increments with
   * the exact mixed Jacobian (ConstrainedSolve.factorMixed; the rows' G J of
   * ConstraintSet.chainIncrements). `set` is the joints' (this object's), `rhs` and `rc`
   * the residuals of the balance and of the joint rows, `dLambda` scratch of the rows'
   * size.
   */
  correct(
    set: ConstraintSet,
    solver: ConstrainedSolve,
    c: SchemeCoefficients,
    refactor: boolean,
    rhs: Float64Array,
    rc: Float64Array,
    out: Float64Array,
    dLambda: Float64Array,
    mean: AccelerationStepper | null = null,
  ): void {
    if (refactor)
      solver.factorMixed(
        this.startG,
        this.startInertiaInv,
        c.startForceWeight,
        c.momentumRows ? this.mixedInertias(c) : this.sys.inertiaWorld,
      );
    solver.solveMixed(rhs, rc, out, dLambda);
    mean?.meanTangentCorrection(c, rhs, out, rc, dLambda);
    mean?.correctStiffRates(c, refactor, out, dLambda);
    for (let i = 0; i < dLambda.length; i++) this.lambda[i] += dLambda[i];
    set.multiplyTranspose(dLambda, this.force, this.startG);
    massSolveWith(this.sys, this.startInertiaInv, this.force, this.scratch);
    let change = 0;
    for (let i = 0; i < this.scratch.length; i++) {
      this.accel[i] += this.scratch[i];
      change = Math.max(change, Math.abs(c.startForceWeight * this.scratch[i]));
    }
    this.change = change;
  }
}
