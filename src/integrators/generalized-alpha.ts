/**
 * Generalized-α time integration for constrained mechanical systems, in the DAE form of
 * Arnold & Brüls ("Convergence of the generalized-α scheme for constrained mechanical
 * systems", Multibody Syst. Dyn. 18, 2007) on the Lie group SE(3) of each rigid body
 * (Brüls, Cardona & Arnold, Mech. Mach. Theory 48, 2012; lie-group.ts), with the
 * Chung–Hulbert parameters (J. Appl. Mech. 60, 1993) set by the spectral radius at
 * infinity ρ∞ ∈ [0, 1]:
 *   α_m = (2ρ∞ − 1)/(ρ∞ + 1),  α_f = ρ∞/(ρ∞ + 1),  γ = ½ + α_f − α_m,  β = ¼ (γ + ½)².
 * One step from t_n to t_{n+1} = t_n + h solves, for the acceleration ä_{n+1} (the twist
 * derivative of rigid bodies) and the joint multipliers λ_{n+1},
 *   M ä_{n+1} = f(q_{n+1}, v_{n+1}, t_{n+1}) − (r_M M + r_K K) v_{n+1} + Gᵀ λ_{n+1}
 *   C(q_{n+1}, t_{n+1}) = 0                                   (joints at the position level)
 *   (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) ä_{n+1} + α_f ä_n   (a: pseudo-acceleration)
 *   q_{n+1} = q_n ∘ exp(h v_n + h²(½ − β) a_n + h² β a_{n+1}),  v_{n+1} = v_n + h(1 − γ) a_n + hγ a_{n+1}
 * The equilibrium holds exactly at t_{n+1}, so λ_{n+1} is the joint reaction at t_{n+1}.
 * Eliminating a_{n+1}, the step has the acceleration form of acceleration-step.ts with
 *   c_x = h² β (1 − α_f)/(1 − α_m),  c_v = h γ (1 − α_f)/(1 − α_m),  w = 1,
 *   Δx_pred = h v_n + h²(½ − β) a_n + h² β (α_f ä_n − α_m a_n)/(1 − α_m),
 *   v_pred  = v_n + h(1 − γ) a_n + hγ (α_f ä_n − α_m a_n)/(1 − α_m).
 *
 * Properties (linear analysis, Chung & Hulbert): second order; the spectral radius of the
 * amplification matrix tends to ρ∞ as hω → ∞ and departs from 1 only at fourth order in
 * hω (ρ∞ = 0.9: 1 − ρ ≈ 1e-11 per step at hω = 0.02), so high-frequency modes (stiff
 * springs, the joint directions) are damped while the mechanism's motion keeps its energy
 * over long runs; ρ∞ = 1 is the trapezoidal rule (β = ¼, γ = ½, α_m = α_f = ½), no
 * dissipation. The joints are held at the position level (index 3), their rows scaled by
 * 1/c_x = O(1/(β h²)) (acceleration-step.ts, positionLevel) so that the Newton matrix and
 * the multipliers (forces) are well scaled at any h; Arnold & Brüls prove convergence of
 * this index-3 form for ρ∞ < 1 (the multipliers' spurious root is −α_f/(1 − α_f) = −ρ∞),
 * and ρ∞ = 1 leaves that root on the unit circle: use it for smooth motions and models
 * without stiff joint dynamics.
 *
 * Newton is iterated to the tolerance (solver.newtonIterations, newtonTolerance); a step
 * whose iterations do not converge is redone as two half steps, up to MAX_HALVINGS times,
 * then fails (the simulation ends `diverged` with its last good state). The acceleration
 * memory starts from the consistent acceleration (M ä = f + Gᵀλ, G ä = Qc at t, with
 * a_0 = ä_0) and after every reset or external change of the state.
 */

import { getVelocity, massSolve, restorePositions, setVelocity } from "../model/body-system";
import {
  type AccelerationStepper,
  type NewtonSettings,
  SchemeCoefficients,
} from "./acceleration-step";
import {
  type DerivativeOrder,
  emptyStepStats,
  type Integrator,
  type IntegratorMemory,
  type ProjectionOrder,
  resetStepStats,
  type StepStats,
} from "./integrator";
import { advanceWithHalving, type HalvingStep } from "./step-halving";

export interface GeneralizedAlphaParameters {
  /** Spectral radius at infinity ρ∞ ∈ [0, 1] (1: no numerical dissipation). */
  rhoInfinity: number;
  rayleighMass: number;
  rayleighStiffness: number;
}

/** The scheme's coefficients for a spectral radius at infinity ρ∞ (Chung & Hulbert). */
export function generalizedAlphaCoefficients(rhoInfinity: number): {
  alphaM: number;
  alphaF: number;
  gamma: number;
  beta: number;
} {
  const r = rhoInfinity;
  const alphaM = (2 * r - 1) / (r + 1);
  const alphaF = r / (r + 1);
  const gamma = 0.5 + alphaF - alphaM;
  const beta = 0.25 * (gamma + 0.5) ** 2;
  return { alphaM, alphaF, gamma, beta };
}

export class GeneralizedAlphaIntegrator implements Integrator, HalvingStep {
  readonly name = "generalized-alpha" as const;
  readonly projectionOrder: ProjectionOrder = "none";
  /** ä_n, the acceleration (twist derivative) at the start of the next step. */
  private readonly acc: Float64Array;
  /** a_n, the pseudo-acceleration. */
  private readonly pseudo: Float64Array;
  private readonly vt: Float64Array;
  private haveAcceleration = false;
  /** The running step's counts (set by `step`, added to by every sub-step). */
  private stats: StepStats = emptyStepStats();
  private readonly coeff = new SchemeCoefficients();

  constructor(
    private readonly stepper: AccelerationStepper,
    public params: GeneralizedAlphaParameters,
    private readonly newton: NewtonSettings,
  ) {
    this.acc = new Float64Array(stepper.n);
    this.pseudo = new Float64Array(stepper.n);
    this.vt = new Float64Array(stepper.n);
  }

  reset(): void {
    this.haveAcceleration = false;
  }

  saveMemory(): IntegratorMemory {
    return {
      acceleration: new Float64Array(this.acc),
      pseudoAcceleration: new Float64Array(this.pseudo),
      accelerationValid: this.haveAcceleration,
    };
  }

  restoreMemory(memory: IntegratorMemory): void {
    const { acceleration, pseudoAcceleration } = memory;
    for (const [name, x] of [
      ["ä_n", acceleration],
      ["a_n", pseudoAcceleration],
    ] as const)
      if (x !== undefined && x.length !== this.acc.length)
        throw new Error(
          `generalized-alpha memory: ${name} has ${x.length} entries, expected ${this.acc.length}`,
        );
    if (acceleration === undefined || pseudoAcceleration === undefined) {
      this.haveAcceleration = false;
      return;
    }
    this.acc.set(acceleration);
    this.pseudo.set(pseudoAcceleration);
    this.haveAcceleration = memory.accelerationValid === true;
  }

  step(t: number, h: number, stats: StepStats): void {
    resetStepStats(stats);
    this.stats = stats;
    advanceWithHalving(this, t, h, this.newton, "generalized-alpha");
  }

  /** Puts the state back at the start of the step (advanceWithHalving). */
  restoreStart(): void {
    const s = this.stepper;
    restorePositions(s.sys, s.start);
    setVelocity(s.sys, this.vt);
  }

  /** One step of h; false (memory untouched) when Newton did not converge. */
  trySingle(t: number, h: number): boolean {
    const stats = this.stats;
    const s = this.stepper;
    const { alphaM, alphaF, gamma, beta } = generalizedAlphaCoefficients(this.params.rhoInfinity);
    s.beginStep();
    getVelocity(s.sys, this.vt);
    if (!this.haveAcceleration) this.initialAcceleration(t);
    const c = this.coeff;
    const k = 1 / (1 - alphaM);
    c.cx = h * h * beta * (1 - alphaF) * k;
    c.cv = h * gamma * (1 - alphaF) * k;
    c.w = 1;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    c.positionLevel = true;
    c.lieGroup = false;
    c.symmetricJoints = true;
    // ρ: the joints' force acts on x with weight c_x ρ = h²/2; κ: on v with h/2 − c_v ρ
    c.startForceWeight = (h * h) / (2 * c.cx);
    c.startVelocityWeight = 0.5 * h - c.cv * c.startForceWeight;
    s.beginStartDirections(t);
    const { dxPred, vPred, a, startAccel } = s;
    const { vt, acc, pseudo } = this;
    const rho = c.startForceWeight;
    for (let i = 0; i < s.n; i++) {
      const carried = k * (alphaF * acc[i] - alphaM * pseudo[i]);
      dxPred[i] = h * vt[i] + h * h * ((0.5 - beta) * pseudo[i] + beta * carried);
      vPred[i] = vt[i] + h * ((1 - gamma) * pseudo[i] + gamma * carried);
      a[i] = acc[i] + rho * startAccel[i];
    }
    s.linearIterations = 0;
    stats.newtonIterations += s.solve(c, t + h, this.newton);
    stats.linearIterations += s.linearIterations;
    if (s.mustRedo) return false;
    stats.newtonConverged &&= s.newtonConverged;
    // the free acceleration b = a − ρ Y λ̃ = M⁻¹ f at t_{n+1}; the pseudo-acceleration
    // a_{n+1} = ((1 − α_f) b + α_f A_n − α_m a_n)/(1 − α_m)
    for (let i = 0; i < s.n; i++) {
      const b = a[i] - rho * startAccel[i];
      pseudo[i] = k * ((1 - alphaF) * b + alphaF * acc[i] - alphaM * pseudo[i]);
      acc[i] = b;
    }
    s.consistentMultipliers(c, t + h);
    return true;
  }

  /**
   * A_n = M⁻¹ (f − (r_M M + r_K K) v) at the current state, the free acceleration (the
   * joints' forces are the step's own, not memory): the stepper's residual at a = 0 with
   * the state left where it is (c_x = c_v = 0).
   */
  private initialAcceleration(t: number): void {
    const s = this.stepper;
    s.dxPred.fill(0);
    s.vPred.set(this.vt);
    s.a.fill(0);
    const c = new SchemeCoefficients();
    c.w = 1;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    s.applyUnknown(c, s.a);
    s.residual(c, t, this.pseudo);
    massSolve(s.sys, this.pseudo, this.acc);
    this.pseudo.set(this.acc);
    this.haveAcceleration = true;
  }

  getIntegrationFactor(input: DerivativeOrder, output: DerivativeOrder, h: number): number {
    // with the unknown ä_{n+1} and the memory (ä_n, a_n) held: ∂x/∂x_n = 1, ∂x/∂v_n = h,
    // ∂v/∂v_n = 1 (acceleration inputs enter through the memory, not the state)
    const table = [
      [1, h, 0],
      [0, 1, 0],
      [0, 0, 0],
    ];
    return table[output][input];
  }

  getSolutionIntegrationFactor(output: DerivativeOrder, h: number): number {
    const { alphaM, alphaF, gamma, beta } = generalizedAlphaCoefficients(this.params.rhoInfinity);
    const k = (1 - alphaF) / (1 - alphaM);
    return [h * h * beta * k, h * gamma * k, 1][output];
  }
}
