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
 */

import { getVelocity } from "../model/body-system";
import {
  type AccelerationStepper,
  type NewtonSettings,
  SchemeCoefficients,
} from "./acceleration-step";
import type {
  DerivativeOrder,
  Integrator,
  IntegratorName,
  ProjectionOrder,
  StepStats,
} from "./integrator";

export interface ThetaParameters {
  /** θ ∈ [0, 1]: weight of the end-of-step velocity in the position update. */
  theta: number;
  /** Weight of the end-of-step forces (0: explicit forces). */
  forceWeight: number;
}

export class ThetaScheme implements Integrator {
  readonly projectionOrder: ProjectionOrder = "velocities-first";
  private readonly coeff = new SchemeCoefficients();
  private readonly vt: Float64Array;

  constructor(
    readonly name: IntegratorName,
    protected readonly stepper: AccelerationStepper,
    public params: ThetaParameters,
    /** Newton's budget and tolerance (apart from params, see BodySystem on V8). */
    protected readonly newton: NewtonSettings,
  ) {
    this.vt = new Float64Array(stepper.n);
  }

  reset(): void {}

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
    if (c.w < 1) s.computeForces(t, s.fStart);
    s.linearIterations = 0;
    return c;
  }

  step(t: number, h: number, stats: StepStats): void {
    const c = this.prepare(t, h);
    stats.newtonIterations = this.stepper.solve(c, t + h, this.newton);
    stats.linearIterations = this.stepper.linearIterations;
    stats.contactIterations = 0;
    stats.contactResidual = 0;
  }

  getIntegrationFactor(input: DerivativeOrder, output: DerivativeOrder, h: number): number {
    // x_{t+h} = x_t + h v_t + h²θ a: ∂x/∂x_t = 1, ∂x/∂v_t = h; ∂v/∂v_t = 1.
    const table = [
      [1, h, 0],
      [0, 1, 0],
      [0, 0, 0],
    ];
    return table[output][input];
  }

  getSolutionIntegrationFactor(output: DerivativeOrder, h: number): number {
    return [h * h * this.params.theta, h, 1][output];
  }
}
