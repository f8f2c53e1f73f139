/**
 * The one-step θ-schemes at velocity level, written in the acceleration form of
 * acceleration-step.ts with a = (v_{t+h} − v_t)/h:
 *   v_{t+h} = v_t + h a,   x_{t+h} = x_t ⊕ h((1−θ) v_t + θ v_{t+h}) = x_t ⊕ (h v_t + h²θ a)
 *   M a = (1 − w) f(x_t, v_t) + w f(x_{t+h}, v_{t+h})
 * - backward Euler: θ = 1, w = 1 (linearized implicit Euler; Newton iterations optional).
 * - Moreau–Jean (Siconos MoreauJeanOSI) without contact: θ-method with w = θ. With
 *   c_v = h and c_x = h²θ the iteration matrix of acceleration-step.ts is
 *   M + θh D + θ·h²θ K, exactly Siconos' W = M + hθ C + h²θ² K.
 * - symplectic (semi-implicit) Euler: forces at (x_t, v_t) (w = 0), positions with the new
 *   velocity (θ = 1): v_{t+h} = v_t + h M⁻¹ f(x_t, v_t), x_{t+h} = x_t ⊕ h v_{t+h}.
 * Each scheme's solution (the acceleration a) moves the end-of-step state by
 * c_x = h²θ (position) and c_v = h (velocity).
 *
 * Solver damping, as Newmark's (newmark.ts): the Rayleigh force −(r_M M + r_K K) v at the
 * end-of-step velocity, implicit whatever w (so symplectic Euler's explicit forces keep an
 * unconditionally stable damping: v_{t+h} = (M + h r_M M + h r_K K)⁻¹ (M v_t + h f_t) with
 * K at the start), then v ← v·exp(−h·velocityDamping).
 */

import { SchemeCoefficients } from "../dynamics/stepper";
import { getVelocity } from "../model/body-system";
import type { AccelerationStepper, NewtonSettings } from "./acceleration-step";
import {
  emptyStepStats,
  type Integrator,
  type IntegratorName,
  type ProjectionOrder,
  type StepStats,
  type SubstepObserver,
} from "./integrator";
import { advanceWithHalving, type HalvingStep } from "./step-halving";

export interface ThetaParameters {
  /** θ ∈ [0, 1]: weight of the end-of-step velocity in the position update. */
  theta: number;
  /** Weight of the end-of-step forces (0: explicit forces). */
  forceWeight: number;
  /** Rayleigh coefficients r_M (1/s) and r_K (s), and the velocity decay rate (1/s). */
  rayleighMass: number;
  rayleighStiffness: number;
  velocityDamping: number;
}

export class ThetaScheme implements Integrator, HalvingStep {
  readonly projectionOrder: ProjectionOrder = "velocities-first";
  private readonly coeff = new SchemeCoefficients();
  /** The velocities at the step's start (prepare). */
  protected readonly vt: Float64Array;
  /** ½ (v_t + v_{t+h}) of the last step (meanVelocity). */
  protected readonly mean: Float64Array;
  /** G v̄ of the constraint rows (takeMotorWork). */
  private readonly rowRates: Float64Array;
  /** The running step's counts (set by `step`, added to by every sub-step). */
  private stats: StepStats = emptyStepStats();

  constructor(
    readonly name: IntegratorName,
    protected readonly stepper: AccelerationStepper,
    public params: ThetaParameters,
    /** Newton's budget and tolerance (apart from params, see BodySystem on V8). */
    protected readonly newton: NewtonSettings,
  ) {
    this.vt = new Float64Array(stepper.n);
    this.mean = new Float64Array(stepper.n);
    this.rowRates = new Float64Array(stepper.constraints?.numRows ?? 0);
  }

  reset(): void {}

  /** The weight of the end-of-step forces (params.forceWeight: θ, 1 or 0). */
  get forceWeight(): number {
    return this.params.forceWeight;
  }

  /** Sets up predictors and coefficients for a step from t; returns the coefficients. */
  protected prepare(t: number, h: number): SchemeCoefficients {
    const s = this.stepper;
    const c = this.coeff;
    s.beginStep();
    getVelocity(s.sys, this.vt);
    for (let i = 0; i < s.n; i++) {
      s.dxPred[i] = h * this.vt[i];
      s.vPred[i] = this.vt[i];
    }
    s.a.fill(0);
    c.cx = h * h * this.params.theta;
    c.cv = h;
    c.w = this.params.forceWeight;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    if (c.w < 1) s.computeForces(t, s.fStart);
    s.linearIterations = 0;
    return c;
  }

  /** Told of a split step's accepted sub-steps (Integrator; the energy balance). */
  substepObserver: SubstepObserver | null = null;

  step(t: number, h: number, stats: StepStats): void {
    this.stats = stats;
    stats.substeps = advanceWithHalving(this, t, h, this.newton, this.name);
  }

  /** One step of h; false when Newton did not converge (step-halving.ts). */
  trySingle(t: number, h: number): boolean {
    const c = this.prepare(t, h);
    this.stats.newtonIterations += this.stepper.solve(c, t + h, this.newton);
    this.stats.linearIterations += this.stepper.linearIterations;
    if (this.stepper.mustRedo) return false;
    this.stats.newtonConverged &&= this.stepper.newtonConverged;
    // motors (rows with ∂C/∂t ≠ 0): their work over the step, for the energy balance
    if (this.stepper.constraints?.timeDependent === true) {
      this.meanVelocity();
      this.takeMotorWork(h);
    }
    this.stepper.decayVelocities(h, this.params.velocityDamping);
    return true;
  }

  /** mean ← ½ (v_t + v_{t+h}) with the system's current velocities as v_{t+h}. */
  protected meanVelocity(): void {
    const { mean, vt } = this;
    getVelocity(this.stepper.sys, mean);
    for (let i = 0; i < mean.length; i++) mean[i] = 0.5 * (vt[i] + mean[i]);
  }

  /**
   * The motors' work over the step of h (the rows with ∂C/∂t ≠ 0) into the stepper's
   * removedEnergy (the energy balance, simulation/monitor.ts): minus h λᵀ G v̄ over their
   * rows, with λ the step's multipliers, a force over the step (M (v_{t+h} − v_t) = h f̄ +
   * h Gᵀλ), so their exact share of the kinetic energy's change. Needs meanVelocity first.
   */
  protected takeMotorWork(h: number): void {
    const set = this.stepper.constraints;
    if (set === null || !set.timeDependent) return;
    const rates = this.rowRates;
    set.multiply(this.mean, rates);
    const lambda = this.stepper.lambda;
    let work = 0;
    for (let r = 0; r < set.numRows; r++)
      if (set.constraints[set.rowConstraint[r]].timeDependent) work += h * lambda[r] * rates[r];
    this.stepper.removedEnergy -= work;
  }

  /** Puts the state back at the start of the step (step-halving.ts). */
  restoreStart(): void {
    this.stepper.restoreStart(this.vt);
  }
}
