/**
 * Generalized-α time integration for constrained mechanical systems: the Chung–Hulbert
 * scheme (J. Appl. Mech. 60, 1993) for the applied forces, with the joints held by a
 * symmetric, RATTLE-type projection (Andersen, J. Comput. Phys. 52, 1983; Hairer, Lubich
 * & Wanner, "Geometric Numerical Integration", §VII.1) instead of a multiplier carried in
 * the acceleration memory. The spectral radius at infinity ρ∞ ∈ [0, 1] sets
 *   α_m = (2ρ∞ − 1)/(ρ∞ + 1),  α_f = ρ∞/(ρ∞ + 1),  γ = ½ + α_f − α_m,  β = ¼ (γ + ½)².
 *
 * One step from t_n to t_{n+1} = t_n + h, with A = M⁻¹ (f − (r_M M + r_K K) v) the FREE
 * acceleration (the applied forces only) and a the pseudo-acceleration of the scheme:
 *   (1 − α_m) a_{n+1} + α_m a_n = (1 − α_f) A_{n+1} + α_f A_n
 *   x_{n+1} = x_n ⊕ (h v_n + h²(½ − β) a_n + h² β a_{n+1} + ½ h² M_n⁻¹ G_nᵀ λ̃)
 *   v_{n+1} = v_n + h(1 − γ) a_n + hγ a_{n+1} + ½ h (M_n⁻¹ G_nᵀ λ̃ + M_{n+1}⁻¹ G_{n+1}ᵀ μ̃)
 *   C(x_{n+1}, t_{n+1}) = 0,   G_{n+1} v_{n+1} + Ct = 0
 * λ̃ holds the positions on the joints' manifold with the directions of the START of the
 * step, μ̃ the velocities on its tangent at the end (a velocity projection in the mass
 * metric). In acceleration-step.ts' form the unknown is a = A_{n+1} + ρ M_n⁻¹ G_nᵀ λ̃ with
 *   c_x = h² β (1 − α_f)/(1 − α_m),  c_v = h γ (1 − α_f)/(1 − α_m),  ρ = h²/(2 c_x),
 *   Δx_pred = h v_n + h²(½ − β) a_n + h² β (α_f A_n − α_m a_n)/(1 − α_m),
 *   v_pred  = v_n + h(1 − γ) a_n + hγ (α_f A_n − α_m a_n)/(1 − α_m)
 * (SchemeCoefficients.symmetricJoints); Newton uses the exact mixed Jacobian of the
 * position rows (ConstrainedSolve.factorMixed, on every path: the saddle point too), the
 * rows of x_t ⊕ u differentiated through the exponential map (ConstraintSet.chainIncrements):
 * quadratic convergence, where G and Gᵀ in their places converged linearly at the rate the
 * bodies turn over a step (an imported 6-axis arm: 7.1 → 3.2 iterations a step).
 *
 * Why this form. With ρ∞ = 1 (β = ¼, γ = ½, α_m = α_f = ½: the trapezoidal rule) the
 * step is symmetric: stepping back by −h from (x_{n+1}, v_{n+1}) gives (x_n, v_n) with λ̃
 * and μ̃ exchanged, and nothing but the state is carried from step to step (A_n is a
 * function of the state). A symmetric, memoryless method keeps the energy of a
 * conservative mechanism within O(h²) for arbitrarily long runs, without drift (through
 * the error control's halvings too, which are chosen by the step's two ends alone, as a
 * time-reversible step-size function: rejectedByErrorControl), and
 * keeps the velocities of every relative equilibrium that the model's symmetries allow
 * exactly (a rod spinning on a frictionless hinge keeps ω to rounding at any h: its map
 * of ω is its own inverse; its angle has the scheme's phase error, (hω)²/8 per step).
 * Why not the index-3 generalized-α of Arnold & Brüls (Multibody Syst. Dyn. 18, 2007),
 * with the multipliers in the memory: at ρ∞ = 1 it is unstable (the multipliers'
 * spurious root −α_f/(1 − α_f) reaches −1); at ρ∞ < 1 its energy errors on the double
 * pendulum and four-bar examples are several times this form's, and its reactions carry
 * a first-order error in h (a heavy top's). Nor this form with the END directions in the
 * position update instead of the start ones: it loses most of the double pendulum's
 * energy and reverses the spinning rod (bench/README.md, "Generalized-α").
 * With ρ∞ < 1 the applied forces' high-frequency modes (stiff springs, contact) are damped
 * with the Chung–Hulbert spectral radius (→ ρ∞ as hω → ∞; 1 − ρ = O((hω)⁴) at low
 * frequency, 1e-11 per step at hω = 0.02 for ρ∞ = 0.9), while the joints stay exact:
 * nothing of the scheme acts along them but λ̃ and μ̃ (the symmetry is then lost). The
 * default is ρ∞ = 1: the symmetric scheme. Neither value makes an under-resolved motion
 * right: the benchmark's whipping 10-link chain at h = 1/240 s gains energy at single
 * violent steps (or diverges) whatever ρ∞, and h = 1/480 s resolves it (bench/README.md,
 * "Generalized-α").
 * The start directions must still act on the end configuration: a step that turns a link
 * through a large angle (a whipping 100-link chain's tip at h = 1/240 s) makes the mixed
 * Jacobian G M_t⁻¹ G_tᵀ lose its pivots; such steps are halved (a row left open by a
 * dropped pivot fails the closure test of AccelerationStepper.solve), and the run ends
 * `diverged` when four halvings do not suffice. The error control (params.stepTolerance,
 * rejectedByErrorControl; on by default with ρ∞ = 1, defaultStepTolerance) halves such
 * steps before they go wrong, so the whipping 100-link chain runs at h = 1/240 s, at a
 * higher cost per step (bench/README.md, "Generalized-α"). Where Newton keeps failing, the
 * following steps start with the sub-steps that succeeded instead of trying h first
 * (substep-depth.ts; the controller's state is part of the memory); the error control's
 * rejections do not move that start (trySingle).
 *
 * Fem bodies at ρ∞ = 1: the trapezoid ½ (f_n + f_{n+1}) of a nonlinear elastic body's
 * forces is not energy-stable where the step does not resolve its elements' modes (Simo &
 * Tarnow, ZAMP 43, 1992): a spinning block drifted by 2.3e-2 of its energy over 60 s, its
 * angular momentum by 6e-3. The step takes Gonzalez's energy–momentum force f̄ instead, as
 * moreau-jean's at θ = ½ (fem-effector.ts applyMeanForces; AccelerationStepper
 * .beginMeanStep): the end's residual takes 2 f̄ − f_n, so that ½ M (A_n + A_{n+1}) = f̄,
 * and the memory A_{n+1} is turned back into M⁻¹ f(x_{n+1}) after the step
 * (meanEndCorrection). Energy and momenta are then kept to Newton's tolerance (8e-11 over
 * 60 s); not with a consistent mass (that correction would need it solved) nor on
 * linearized steps (newtonIterations 1: the property is the converged step's, and with the
 * end's tangent for the mean force's a cantilever's linearized steps lost 1.2e-2 J where the
 * trapezoid's lost 1.4e-3). newmark at (¼, ½) with fem bodies steps through this scheme
 * (newmark.ts `alphaForm`).
 * Reported reactions are the multipliers consistent with the end state (M ü = f + Gᵀλ,
 * G ü = Qc: AccelerationStepper.consistentMultipliers), free of the iteration.
 * Newton is iterated to the tolerance (solver.newtonIterations, newtonTolerance; unset, also
 * Newmark's step-error test without joints: newmark.ts NEWMARK_STEP_ERROR, here with the
 * free accelerations' change over the step); a step
 * whose iterations do not converge is redone as two half steps (step-halving.ts), then
 * fails (the simulation ends `diverged` with its last good state). The memory (A_n, a_n)
 * starts from A_0 with a_0 = A_0, and again after every reset or external change and
 * after a backward-Euler step at a compliant contact's switch.
 *
 * Compliant joint limits (limit-switch.ts): a step in which one switches is split there. At
 * ρ∞ < 1 its pieces, and the step after them, are the trapezoidal rule (ρ∞ = 1's
 * coefficients, a_n = A_n: `restarting`), and that step's end restarts the memory with the
 * pseudo-acceleration of a smooth motion at steps of h, a_{n+1} = A_{n+1} + (α_m − α_f)
 * (A_{n+1} − A_n) (AlphaCoefficients.shift; cf. the restart after an impact in Brüls,
 * Acary & Cardona, CMAME 281, 2014, with the consistent acceleration's rate of change
 * added). The a_n carried across a switch belonged to the other side's force law (the
 * law's rate of change jumps there: by 1.4e7 rad/s³ where the default limit's damping ramp
 * begins, for a rod meeting it at 3 rad/s) and to a step of another length than the
 * piece's; each piece then added a velocity error ~ h_piece² times that jump, its constant
 * set by where the switch fell between the steps: the rod of limit-order.test.ts converged
 * erratically (angle errors at h = 1e-4, 5e-5, 2.5e-5 s 1.1e-5, 2.9e-6, 3.8e-6 rad at
 * ρ∞ = 0.5), and now at second order (4.6e-6, 1.2e-6, 3.2e-7). The memory is invalid
 * (IntegratorMemory.pseudoValid false) between the split step and the next, so that a
 * snapshot taken there continues as the run.
 *
 * Compliant contact (contact.method "smc"; the constructor's `impacts`): A_n taken again at
 * each step's start with the step's own contacts, and a step in which a contact switches
 * unresolved halved down to a backward-Euler h/16 (contact-switch.ts), as the θ-schemes'.
 */

import { SchemeCoefficients } from "../dynamics/stepper";
import { BodyKind, type BodySystem, getVelocity, massSolve } from "../model/body-system";
import type { AccelerationStepper, NewtonSettings } from "./acceleration-step";
import { ContactSwitches, type ImpactSource, lawChanged, type SwitchRedo } from "./contact-switch";
import {
  emptyStepStats,
  type Integrator,
  type IntegratorMemory,
  MemoryLag,
  type ProjectionOrder,
  type StepStats,
  type SubstepObserver,
} from "./integrator";
import type { LimitSwitches } from "./limit-switch";
import { advanceWithHalving, type HalvingStep } from "./step-halving";
import { SubstepDepth } from "./substep-depth";

/**
 * solver.stepTolerance when the model leaves it out and ρ∞ = 1 (m per step: the largest
 * displacement of a body's material the step's error estimate makes, largestDisplacement;
 * see defaultStepTolerance), for bodies of 1 m and more (bodyLengths); below,
 * DEFAULT_RELATIVE_STEP_TOLERANCE times their length.
 */
export const DEFAULT_STEP_TOLERANCE = 3e-4;

/**
 * The default's fraction of the body length (bodyLengths) where that is below 1 m:
 * 3e-4 m per metre. Why relative: the estimate bounds a displacement error δx, which
 * leaves a velocity error ≈ δx/h and costs m v δx/h of energy at a step, so an absolute
 * 3e-4 m allows small links the energy error of large ones against their smaller energy.
 * 8 hinged links released horizontally at 5 ms for 60 s (0.05 kg each; E_max = m g L/2
 * of the chain), the largest |E − E₀| against E_max, every step within its tolerance:
 *   links of 0.05 m: 3e-4 m 49 %, 1e-4 m 14 %, 3e-5 m 3.9 %, 1.5e-5 m (this) 1.3 %;
 *   links of 0.2 m:  3e-4 m 4.5 %, 6e-5 m (this) 1.2 %
 * (the same fraction of the link length, the same share of the energy: the error scales
 * with the links; 20 links of 0.05 m at 3e-4 m gained 2.6 J = 53 % of 4.9 J). Its price on
 * the 0.05 m links: 3.4 sub-steps and 16 Newton iterations a step, from 1.25 and 5.7
 * (test/engine/integrators/long-run/hinged-chain.test.ts). Capped at DEFAULT_STEP_TOLERANCE,
 * the figure the larger models were measured at.
 */
export const DEFAULT_RELATIVE_STEP_TOLERANCE = 3e-4;

/**
 * Each body's length (m) the default stepTolerance is scaled to: the mass-weighted mean over
 * the moving rigid bodies of its jointed group (the bodies `links`, the joints' body pairs,
 * connect to it, directly or through others; not through a fixed body) of each one's
 * length, the larger of the thin rod of its mass and trace of inertia, √(6 tr I / m) (a rod
 * of length ℓ: tr I = m ℓ²/6; a box: its diagonal; a sphere of radius R: 2.7 R), and twice
 * its farthest joint anchor from its centre of mass (`reach`, m per body: a point mass
 * 0.5 m from its hinge is a 1 m lever, not a point); Infinity for a group without such
 * bodies, NaN for a body without dofs (fixed: no estimate of its own). Weighted by mass, as the energy errors it scales are (m v δx/h): a light small
 * part on large links (the 7-axis arm's 0.05 kg fingers on links of 0.5–4 kg) does not set
 * the tolerance of the whole. Fixed bodies (no dofs) and particles do not count. Per group,
 * not over the model: bodies the joints do not connect do not share their errors, and the
 * model-wide mean let an unrelated body set a mechanism's tolerance (a 5-link chain of
 * 5 cm links, 40 s at 5 ms, its energy within 1.3 % of m g L/2 under generalized-alpha,
 * 0.99 % under moreau-jean, strayed by 21 % and 33 % once a free 1 m, 1 kg box was added
 * 100 m away, its tolerance loosened from 1.5e-5 to 2.6e-4 m).
 */
export function bodyLengths(
  sys: BodySystem,
  reach: Float64Array,
  links: readonly (readonly [number, number])[],
): Float64Array {
  const { dofOffset, kind, mass, inertiaBody: I, numBodies } = sys;
  // the groups: union–find over the joints between moving bodies
  const root = new Int32Array(numBodies);
  for (let b = 0; b < numBodies; b++) root[b] = b;
  const find = (b: number): number => {
    let r = b;
    while (root[r] !== r) r = root[r];
    return r;
  };
  for (const [a, b] of links)
    if (a >= 0 && b >= 0 && dofOffset[a] >= 0 && dofOffset[b] >= 0) root[find(a)] = find(b);
  const weighted = new Float64Array(numBodies);
  const total = new Float64Array(numBodies);
  for (let b = 0; b < numBodies; b++) {
    if (dofOffset[b] < 0 || kind[b] !== BodyKind.RIGID) continue;
    const trace = I[9 * b] + I[9 * b + 4] + I[9 * b + 8];
    const r = find(b);
    weighted[r] += mass[b] * Math.max(Math.sqrt((6 * trace) / mass[b]), 2 * reach[b]);
    total[r] += mass[b];
  }
  const lengths = new Float64Array(numBodies);
  for (let b = 0; b < numBodies; b++) {
    const r = find(b);
    if (dofOffset[b] < 0) lengths[b] = Number.NaN;
    else lengths[b] = total[r] > 0 ? weighted[r] / total[r] : Number.POSITIVE_INFINITY;
  }
  return lengths;
}

/**
 * The error control in effect: the model's stepTolerance (null: off, a number: that many
 * metres); left out, with ρ∞ = 1 DEFAULT_STEP_TOLERANCE or DEFAULT_RELATIVE_STEP_TOLERANCE
 * times `length` (a jointed group's body length, bodyLengths; m), whichever is smaller, and off with ρ∞ < 1. The symmetric scheme (ρ∞ = 1)
 * damps nothing it does not resolve: at single violent steps of an under-resolved motion
 * it makes energy errors of ±(hω)² E that add up, and the benchmark's whipping 10-link
 * chain at h = 1/240 s gained 162 m g L before Newton failed at step 1610 — silently wrong
 * for seconds. A local error of 0.3 mm per step is far above what a resolved motion makes
 * (the examples' estimates stay below 1 % of it, the long-run tests' below 10 %: their
 * trajectories are unchanged) and halves the violent steps. What it buys is the energy an
 * under-resolved whip loses at the steps it accepts (a step's loss grows faster than its
 * estimate): with g scaled by 1 + 1e-3 k, the 10-link chain loses 0.055 m g L over 2000
 * steps (mean of k = 0..7; 0.16 with the former 1e-2 m or rad per step, rotations
 * unweighted, whose translational 1 cm was a tenth of a link) at 1.15 times the CPU time,
 * the 100-link one 0.004 (0.020) at 1.13 times; 1e-4 m brings the 10-link chain to 0.032
 * at 1.26 times the Newton iterations and leaves the 100-link one at 0.003
 * (bench/README.md, "Generalized-α"). With ρ∞ < 1 the user asks the scheme to damp the
 * unresolved modes (stiff springs, compliant contact) at the step they chose, whose
 * estimate would halve every step: off unless set.
 */
export function defaultStepTolerance(
  set: number | null | undefined,
  rhoInfinity: number | undefined,
  length = Number.POSITIVE_INFINITY,
): number | null {
  if (set !== undefined) return set;
  if ((rhoInfinity ?? DEFAULT_RHO_INFINITY) !== 1) return null;
  return Math.min(DEFAULT_STEP_TOLERANCE, DEFAULT_RELATIVE_STEP_TOLERANCE * length);
}

/**
 * The error control of every scheme that has one but articulated (factory.ts): the
 * stepTolerance (m) its estimates are held to and each body's weight on its estimate
 * (largestDisplacement; null: 1 for all). `set` (solver.stepTolerance) given: that, the
 * same for every body. Left out: each body's default for its jointed group's length
 * (defaultStepTolerance of bodyLengths' `lengths`), as the tightest of them with each
 * body's estimate weighted by the ratio of that to its own (≤ 1), so that a body meets its
 * own and the reported estimate is in metres of the tightest group's; null weights where
 * all are one to 1e-9, as with one group (a body without dofs, length NaN, has none). Off with
 * ρ∞ < 1 (defaultStepTolerance).
 */
export function stepControl(
  set: number | null | undefined,
  rhoInfinity: number | undefined,
  lengths: Float64Array,
): { stepTolerance: number | null; errorWeights: Float64Array | null } {
  const uniform = defaultStepTolerance(set, rhoInfinity);
  if (set !== undefined || uniform === null) return { stepTolerance: uniform, errorWeights: null };
  let tightest = uniform;
  for (const l of lengths)
    if (!Number.isNaN(l)) tightest = Math.min(tightest, defaultStepTolerance(set, 1, l) as number);
  const weights = new Float64Array(lengths.length);
  let alike = true;
  for (let b = 0; b < lengths.length; b++) {
    const l = lengths[b];
    weights[b] = Number.isNaN(l) ? 1 : tightest / (defaultStepTolerance(set, 1, l) as number);
    // (lengths alike but for rounding, the cradle's balls' 1e-12 apart from their
    // anchors turned to the release angle: one group's tolerance)
    alike &&= weights[b] > 1 - 1e-9;
  }
  return { stepTolerance: tightest, errorWeights: alike ? null : weights };
}

/** solver.rhoInfinity unset: 1, the symmetric scheme (no numerical dissipation). */
export const DEFAULT_RHO_INFINITY = 1;

export interface GeneralizedAlphaParameters {
  /** Spectral radius at infinity ρ∞ ∈ [0, 1] (1: no numerical dissipation). */
  rhoInfinity: number;
  /**
   * Newmark's β and γ in place of ρ∞'s coefficients (newmark.ts, whose jointed steps take
   * this scheme), both or neither: α_m = α_f = ½, with which a_n = A_n makes the balance
   * a_{n+1} = A_{n+1} and the step Newmark's (β, γ) for the applied forces, the joints held
   * by λ̃ and μ̃ as here. (¼, ½) is ρ∞ = 1. Left out: ρ∞'s.
   */
  newmarkBeta?: number;
  newmarkGamma?: number;
  /**
   * Local error per step (m, largestDisplacement) above which a step is halved; null: no
   * error control.
   */
  stepTolerance: number | null;
  /** Each body's weight on the estimate (stepControl; null or left out: 1 for all). */
  errorWeights?: Float64Array | null;
  rayleighMass: number;
  rayleighStiffness: number;
}

/**
 * The scheme's coefficients for a spectral radius at infinity ρ∞ (Chung & Hulbert), set
 * in place (a step reads them without allocating; a class with double fields, see
 * BodySystem on V8).
 */
export class AlphaCoefficients {
  alphaM = -0;
  alphaF = -0;
  gamma = -0;
  beta = -0;

  set(rhoInfinity: number): this {
    const r = rhoInfinity;
    this.alphaM = (2 * r - 1) / (r + 1);
    this.alphaF = r / (r + 1);
    this.gamma = 0.5 + this.alphaF - this.alphaM;
    this.beta = 0.25 * (this.gamma + 0.5) ** 2;
    return this;
  }

  /** Newmark's (β, γ) as the scheme's α_m = α_f = ½ member (GeneralizedAlphaParameters). */
  setNewmark(beta: number, gamma: number): this {
    this.alphaM = 0.5;
    this.alphaF = 0.5;
    this.gamma = gamma;
    this.beta = beta;
    return this;
  }

  /**
   * α_m − α_f: the pseudo-acceleration of a smooth motion at steps of h is
   * a_n = ẍ(t_n + (α_m − α_f) h) + O(h²) (Arnold & Brüls, Multibody Syst. Dyn. 18, 2007);
   * 0 at ρ∞ = 1, −1 at ρ∞ = 0.
   */
  get shift(): number {
    return this.alphaM - this.alphaF;
  }
}

/**
 * The trapezoidal rule's local error h³ x‴/12 (m), estimated from a change Δ ≈ h x‴ of the
 * acceleration as (h²/12) Δ, measured by largestDisplacement: generalized-alpha's error
 * control at ρ∞ = 1 (rejectedByErrorControl: Δ = ü_{n+1} − ü_n over the step) and the
 * θ-schemes' test of their symmetric joint step (theta-scheme.ts tooCoarse: Δ the change of
 * the step's mean acceleration (v_{t+h} − v_t)/h from the previous step's), whose smooth
 * steps are the same rule.
 */
export function trapezoidalStepError(
  sys: BodySystem,
  h: number,
  meanChange: Float64Array,
  weights: Float64Array | null,
): number {
  return ((h * h) / 12) * largestDisplacement(sys, meanChange, weights);
}

/**
 * max over bodies of the root-mean-square displacement of the body's mass that a
 * generalized increment u (translation δx, rotation δθ about the centre of mass; m and rad)
 * makes: √(δx² + δθᵀ I δθ / m) (m), since Σ m_i |δθ × r_i|² = δθᵀ I δθ for mass elements
 * m_i at r_i from the centre (I the world inertia). A rotation thus counts by the distance
 * it moves the body's material — its radius of gyration about the axis per radian, 0.03 m
 * for the benchmark chain's 0.1 m links — not one metre per radian. Per body, not averaged
 * over the model: a light link's error is not diluted by heavy bodies elsewhere. Each body's
 * times its weight in `weights` where given (stepControl: its jointed group's share).
 */
export function largestDisplacement(
  sys: BodySystem,
  u: Float64Array,
  weights: Float64Array | null = null,
): number {
  const { dofOffset, kind, mass, inertiaWorld: I, numBodies } = sys;
  let largest = 0;
  for (let b = 0; b < numBodies; b++) {
    const d = dofOffset[b];
    if (d < 0) continue;
    let q = u[d] * u[d] + u[d + 1] * u[d + 1] + u[d + 2] * u[d + 2];
    if (kind[b] === BodyKind.RIGID) {
      const o = 9 * b;
      const x = u[d + 3];
      const y = u[d + 4];
      const z = u[d + 5];
      const Ix = I[o] * x + I[o + 1] * y + I[o + 2] * z;
      const Iy = I[o + 3] * x + I[o + 4] * y + I[o + 5] * z;
      const Iz = I[o + 6] * x + I[o + 7] * y + I[o + 8] * z;
      q += (x * Ix + y * Iy + z * Iz) / mass[b];
    }
    if (weights !== null) q *= weights[b] * weights[b];
    largest = Math.max(largest, q);
  }
  return Math.sqrt(largest);
}

export class GeneralizedAlphaIntegrator implements Integrator, HalvingStep, SwitchRedo {
  readonly name = "generalized-alpha" as const;
  readonly projectionOrder: ProjectionOrder = "none";
  private readonly vt: Float64Array;
  /** rejectedByErrorControl's D − D_prev. */
  private readonly change: Float64Array;
  /** An accepted step's free acceleration b at its end (attempt). */
  private readonly free: Float64Array;
  /**
   * The memory (A_n, a_n) an attempt starts from: the state record's, or with compliant
   * contacts A_n under the attempt's own contacts and a_n moved with it (startMemory).
   */
  private readonly accStart: Float64Array;
  private readonly pseudoStart: Float64Array;
  /** The running step's counts (set by `step`, added to by every sub-step). */
  private stats: StepStats = emptyStepStats();
  private readonly coeff = new SchemeCoefficients();
  private readonly alpha = new AlphaCoefficients();
  /** The depth each step's sub-steps start at (substep-depth.ts). */
  private readonly substeps: SubstepDepth;
  /** The last error estimate rejectedByErrorControl made, relative to stepTolerance (0: none). */
  private lastError = 0;
  /** Whether the last attempt was rejected by the error control (trySingle). */
  private rejected = false;
  /** ü_{n+1}, the acceleration consistent with the attempt's end (rejectedByErrorControl). */
  private readonly endAcceleration: Float64Array;
  /** The compliant contacts' switches within a step (the constructor's `impacts`), or null. */
  private readonly switches: ContactSwitches | null;
  /** Whether the last accepted (sub-)step was backward Euler at a contact's switch (trySingle). */
  private dissipativeStep = false;
  /**
   * Whether the last attempt was a trapezoidal restart of the pseudo-acceleration (ρ∞ < 1:
   * a piece of a step split at a limit's switch, or the step after one; `attempt`).
   */
  private restarting = false;
  /** Whether the step being taken was split at a compliant limit's switch (`step`). */
  private splitting = false;
  /**
   * The memory's part in the last accepted (sub-)step (Integrator.memoryLag), e = M (a − A):
   * with a_{n+1} = k ((1 − α_f) A_{n+1} + α_f A_n − α_m a_n), k = 1/(1 − α_m), the velocity
   * update h ((1 − γ) a_n + γ a_{n+1}) is h ((1 − w) A_n + w A_{n+1} + (1 − γ k) e_n), and
   * e_{n+1} = k (α_m − α_f)(A_{n+1} − A_n) − k α_m e_n (`attempt`); a restart's end
   * a_{n+1} = A_{n+1} + (α_m − α_f)(A_{n+1} − A_n) carries (α_m − α_f) alone, and backward
   * Euler's a_{n+1} = A_{n+1} nothing. Booked as the forces' own work before (the weights
   * (1 − w, w) alone, the README's), the lag of a velocity servo the step does not resolve
   * (k_v = 1e4 on the 2 kg, 0.6 m rod hinged at its centre, 1/60 s, ω* = 5 rad/s from rest)
   * read energy.error up to 71 J at ρ∞ = 0.9, 487 J at 0.5 and 1.2e3 J at 0, where it put
   * in ½ I ω*² = 0.75 J; now ≤ 7.1e-10 J, with A_{n+1}'s angular rows taken at Newton's
   * accepted iterate (AccelerationStepper `iterate`; 1.2e-4 J before that)
   * (test/engine/integrators/generalized-alpha-servo-work.test.ts).
   */
  readonly memoryLag = new MemoryLag();

  /**
   * @param memory the state record's: A_n, the free acceleration at the start of the next
   *   step, in `acceleration`; a_n, the pseudo-acceleration, in `pseudoAcceleration`; with
   *   error control the acceleration consistent with the joints at the last accepted
   *   step's end, ü_n = M⁻¹ (f + Gᵀλ), in `previousAcceleration`, valid with
   *   `previousValid` (not after a reset: the first step then has no estimate).
   * @param impacts compliant contacts (contact.method "smc"), or null. Their force law
   *   changes at every step's start, where they are detected again (compliant.ts: a contact
   *   met during a step is elastic in it, damped from the next; its material points are
   *   attached anew), so A_n, taken at the last step's end with the last step's contacts,
   *   is not this step's force at x_n: with its damping −d u_n missing where a contact had
   *   just been met, the trapezoidal step's energy change is −¼ h d u_{n+1} (u_n + u_{n+1})
   *   instead of −¼ h d (u_n + u_{n+1})², positive when the contact turns the motion within
   *   the step (h ω > 1). So each step with contacts starts from A_n computed at x_n with
   *   its own, and a_n moved by the same change (the law's jump at t_n: a_n − A_n, the
   *   scheme's own memory, is kept). A step in which a contact starts or stops pushing while
   *   the step does not resolve its mode (contact-switch.ts: h ω > 1), or whose Newton
   *   iterations did not converge (the stepper keeps those with compliant contacts), is
   *   halved, and the last halving (h/16) is backward Euler from the same start, as the
   *   θ-schemes' (theta-scheme.ts): the trapezoidal rule integrates a force switching on or
   *   off inside the step as if it acted over the whole step, a gain of up to (h ω)²/4 of
   *   the kinetic energy at each contact left. Its end restarts the memory, a_{n+1} =
   *   A_{n+1}: the pseudo-acceleration carried across a switch (ρ∞ < 1) went on pushing a
   *   body that had left the contact. Two hinged 1 kg links dropped onto a plane at the
   *   default law gained 2.43 J (ρ∞ = 1) and 7.33 J (ρ∞ = 0.5) over 3 s that way, and a
   *   ball's rebound at ρ∞ = 0.5 rose 3.8 times as high as the law's.
   * @param limitSwitches the compliant joint limits, or null: a step in which one switches
   *   is split at the switch (limit-switch.ts, `splitAt`).
   * @param scheme the name a step that fails even halved gives (newmark's trapezoidal rule
   *   with fem bodies steps through this one: newmark.ts).
   */
  constructor(
    private readonly stepper: AccelerationStepper,
    public params: GeneralizedAlphaParameters,
    private readonly newton: NewtonSettings,
    private readonly memory: IntegratorMemory,
    impacts: ImpactSource | null = null,
    private readonly limitSwitches: LimitSwitches | null = null,
    private readonly scheme: "generalized-alpha" | "newmark" = "generalized-alpha",
  ) {
    this.vt = new Float64Array(stepper.n);
    this.change = new Float64Array(stepper.n);
    this.free = new Float64Array(stepper.n);
    this.accStart = new Float64Array(stepper.n);
    this.pseudoStart = new Float64Array(stepper.n);
    this.endAcceleration = new Float64Array(stepper.n);
    this.substeps = new SubstepDepth(memory);
    this.switches = impacts === null ? null : new ContactSwitches(impacts);
  }

  reset(): void {
    this.memory.invalidate();
  }

  /**
   * The scheme's coefficients (`alpha`, set in place): the trapezoidal rule's (ρ∞ = 1) for
   * a `restart`, else Newmark's (β, γ) where the params give them, else ρ∞'s.
   */
  private coefficients(restart: boolean): AlphaCoefficients {
    const { rhoInfinity, newmarkBeta, newmarkGamma } = this.params;
    if (restart) return this.alpha.set(1);
    if (newmarkBeta !== undefined && newmarkGamma !== undefined)
      return this.alpha.setNewmark(newmarkBeta, newmarkGamma);
    return this.alpha.set(rhoInfinity);
  }

  /**
   * An input changed the applied forces at the step boundary (an actuator's command, a
   * point load): A_n, the free acceleration the memory carries, is the last step's end's,
   * under the old forces, and the next step would weigh the old force in its start term
   * h²(½ − β) a_n, h(1 − γ) a_n (a torque stepped from 0 to τ by an input gave the joint
   * ½ h τ/I less rate for ever: 5e-3 of τ t/I after 0.1 s at 1 ms). A new memory is taken
   * at the state under the new forces (startMemory); at ρ∞ = 1 it is the same as carrying
   * a_n − A_n, which is then 0; at ρ∞ < 1 that difference restarts from 0, as after a reset.
   */
  forcesChanged(): void {
    this.memory.accelerationValid = false;
  }

  /**
   * γ (1 − α_f)/(1 − α_m): the weight of A_{t+h} in v_{t+h} − v_t = h ((1 − γ) a_t + γ a_{t+h})
   * once a_{t+h} is written out (½ at ρ∞ = 1, the trapezoidal rule; the memory's a_t stands
   * in for A_t, its part in the smooth motion); 1 after a step redone with backward Euler at
   * a compliant contact's switch (the energy balance reads it after each step and sub-step).
   */
  get forceWeight(): number {
    if (this.dissipativeStep) return 1;
    if (this.restarting) return 0.5;
    const { alphaM, alphaF, gamma } = this.coefficients(false);
    return (gamma * (1 - alphaF)) / (1 - alphaM);
  }

  /** Told of a split step's accepted sub-steps (Integrator; the energy balance). */
  substepObserver: SubstepObserver | null = null;

  step(t: number, h: number, stats: StepStats): void {
    this.stats = stats;
    this.stepper.beginStepLead(h);
    const depth = this.substeps.begin(h);
    if (this.limitSwitches !== null) this.limitSwitches.stepSize = h;
    this.splitting = false;
    stats.substeps = advanceWithHalving(this, t, h, this.newton, this.scheme, 0, depth);
    this.substeps.end();
    // a_n after the pieces is no memory for the next step of h (`attempt`)
    if (this.splitting && this.coefficients(false).shift !== 0) this.memory.pseudoValid = false;
    this.splitting = false;
  }

  /** Puts the state back at the start of the step (advanceWithHalving). */
  restoreStart(): void {
    this.stepper.restoreStart(this.vt);
  }

  /**
   * One step of h; false (memory untouched) when Newton did not converge, the error
   * control rejects it or a compliant contact switched unresolved in it (the constructor's
   * `impacts`) and a halving follows; told to the sub-step controller.
   */
  trySingle(t: number, h: number, last: boolean): boolean {
    this.dissipativeStep = false;
    this.splitAt = 0;
    this.rejected = false;
    const accepted = this.attempt(t, h, last);
    // a step split at a limit's switch is no failure of its size, nor one the error
    // control halves (rejectedByErrorControl: its choice must be the step's own)
    if (this.splitAt === 0) this.substeps.record(h, accepted || this.rejected, this.lastError);
    return accepted;
  }

  /** Where the last failed trySingle asks its step split (HalvingStep; limit-switch.ts). */
  splitAt = 0;

  /** trySingle's step. */
  private attempt(t: number, h: number, last: boolean): boolean {
    const stats = this.stats;
    const s = this.stepper;
    const memory = this.memory;
    const shift = this.coefficients(false).shift;
    this.restarting =
      shift !== 0 && (this.splitting || (memory.accelerationValid && !memory.pseudoValid));
    const { alphaM, alphaF, gamma, beta } = this.coefficients(this.restarting);
    s.beginStep();
    // a new memory: the start made consistent with the joints and motors first, and
    // Newton's λ̃ started from the multipliers consistent with it (below)
    const fresh = !memory.accelerationValid;
    if (fresh) s.consistentStart(t);
    getVelocity(s.sys, this.vt);
    this.startMemory(t);
    if (this.restarting) this.pseudoStart.set(this.accStart);
    // Newton starts from a = A + ρ Y λ̃ (A the free acceleration M⁻¹ f), whose position
    // update at ρ∞ = 1 is h v + ¼ h² (A_n + A) + ½ h² Y λ̃: with the last step's λ̃ it
    // nearly cancels the free part, but a new memory (t = 0, a reset, an input that changed
    // the forces) had λ̃ = 0 or the old forces' λ̃, and the first iterate moved the bodies by
    // ½ h² A. Where A is far from what the joints allow (a torque on a hinged point mass of
    // 1e-12 kg·m²: A = 1e12 rad/s², ½ h² A = 5e5 rad at 1 ms; a stiff servo's step) Newton
    // then converged on a configuration turned by many turns (the joint read 5e5 rad after
    // one step, the mass on the far side of its pivot) or not at all (NaN). With the
    // consistent multipliers, M a_c = f + Gᵀ λ, G a_c = Qc, the first iterate is the
    // constrained motion h v + ½ h² a_c.
    if (fresh)
      s.startMultipliers(t, this.params.rayleighMass, this.params.rayleighStiffness, s.lambda);
    const c = this.coeff;
    const k = 1 / (1 - alphaM);
    c.cx = h * h * beta * (1 - alphaF) * k;
    c.cv = h * gamma * (1 - alphaF) * k;
    c.w = 1;
    c.rayleighMass = this.params.rayleighMass;
    c.rayleighStiffness = this.params.rayleighStiffness;
    c.positionLevel = true;
    c.symmetricJoints = true;
    c.stiffTermsOnDemand = true;
    c.endRates = true;
    // ρ: the joints' force acts on x with weight c_x ρ = h²/2; κ: on v with h/2 − c_v ρ
    c.startForceWeight = (h * h) / (2 * c.cx);
    c.startVelocityWeight = 0.5 * h - c.cv * c.startForceWeight;
    c.startTorqueWeight = h - c.cv * c.w;
    s.beginStartDirections(t, c);
    // at ρ∞ = 1, the trapezoidal rule: the fem bodies' energy–momentum force (file comment),
    // when Newton iterates (its property is the converged step's)
    if (alphaM === alphaF && beta === 0.25 && gamma === 0.5 && this.newton.maxIterations > 1)
      s.beginMeanStep();
    // at ρ∞ = 1 (a_n = A_n = M⁻¹ f_n, the weight ½ on both ends) the servos the step does
    // not resolve with the weight 1 in v_{t+h} − v_t: ε = 1 on their change over the step
    // (AccelerationStepper.holdStiffForces), taken out of the memory again below; ρ∞ < 1
    // damps them by its own spectral radius (chosen there for Newton's fuller matrix and
    // servo test alone, with the weight 0)
    s.holdStiffForces(t, h, c, alphaM === alphaF ? (1 - this.forceWeight) / this.forceWeight : 0);
    // in the step's halvings and pieces, the whole step's lead where none resolves them
    s.keepStepLead(h);
    const { dxPred, vPred, a } = s;
    const startAccel = s.startDirections.accel;
    const vt = this.vt;
    const { accStart: acc, pseudoStart: pseudo } = this;
    // With servos the step does not resolve, A_n again at x_n, v_n (a_n moved by the same
    // change, as for a contact's changed law): the memory's is M⁻¹ f at the last step's end
    // BEFORE its joint projection, and such a servo's force is a difference of large terms
    // that the projection moves by far more than the force itself (k_d = 5e8 N·m·s/rad
    // times a few mrad/s): on the rod of shiftStiffStart (k_p = 1e10, k_d = 5e8) A_n read
    // 2e7 rad/s² where the step changes the rate by 300 rad/s², and the next step
    // converged only at h/16
    if (c.stiffWeight !== 0 && !fresh) {
      for (let i = 0; i < s.n; i++) pseudo[i] -= acc[i];
      this.freeAcceleration(t, acc);
      for (let i = 0; i < s.n; i++) pseudo[i] += acc[i];
    }
    const rho = c.startForceWeight;
    // the limits' free motion at the start (limit-switch.ts) along A + Y λ̃, the free
    // acceleration and the joints' force along the start's directions (at the end Y λ̃ holds
    // the start's joint force, which a limit pushing there loaded: none given)
    const withJoints = this.change;
    if (this.limitSwitches !== null) {
      for (let i = 0; i < s.n; i++) withJoints[i] = acc[i] + startAccel[i];
      this.limitSwitches.begin(withJoints);
    }
    for (let i = 0; i < s.n; i++) {
      const carried = k * (alphaF * acc[i] - alphaM * pseudo[i]);
      dxPred[i] = h * vt[i] + h * h * ((0.5 - beta) * pseudo[i] + beta * carried);
      vPred[i] = vt[i] + h * ((1 - gamma) * pseudo[i] + gamma * carried);
      a[i] = acc[i] + rho * startAccel[i];
    }
    // the unresolved servos' start force out of the predictors, and out of the position's
    // κ a_n, κ = h² (½ − β/γ) (AccelerationStepper.shiftStiffStart (3)): 0 at ρ∞ = 1, not
    // for Newmark's other members (GeneralizedAlphaParameters.newmarkBeta), where at β = 0.3,
    // γ = ½ a velocity servo's first step (k_v = 1e4, the 2 kg, 0.6 m rod hinged at its
    // centre, 1/60 s) ended 23 rad/s off backward Euler's rate without it; the memory is
    // the free acceleration
    s.shiftStiffStart(c, pseudo, h * h * (0.5 - beta / gamma), false);
    s.linearIterations = 0;
    this.lastError = 0;
    // Newmark's step-error test (newmark.ts; solver.newtonTolerance unset, no joints): the
    // position update's local error |β − 1/6| h² ‖A_{n+1} − A_n‖∞ (the free accelerations'
    // change over the step, h x‴; at ρ∞ = 1 the error control's (h²/12)(D − D_prev)) against
    // Newton's position error c_x ‖Δa‖∞
    const errorRatio = (Math.abs(beta - 1 / 6) * h * h) / c.cx;
    stats.newtonIterations += s.solve(c, t + h, this.newton, acc, errorRatio);
    stats.linearIterations += s.linearIterations;
    if (s.mustRedo) return false;
    // a contact switched unresolved, or Newton was kept unconverged: halved while a halving
    // follows, the last halving backward Euler (contact-switch.ts)
    const redo = this.switches?.settle(this, s.newtonConverged, t, h, last) ?? null;
    if (redo !== null) return redo;
    // a compliant limit switched within the step: split there while a halving follows
    if (!last && this.limitSwitches !== null) {
      this.splitAt = this.limitSwitches.splitFraction(h, null);
      if (this.splitAt > 0) {
        this.splitting = true;
        return false;
      }
    }
    // the free acceleration b = a − ρ Y λ̃ = M⁻¹ f at t_{n+1}; the pseudo-acceleration
    // a_{n+1} = ((1 − α_f) b + α_f A_n − α_m a_n)/(1 − α_m)
    // (the turning bodies' rotational rows: their I_end⁻¹ f_end, AccelerationStepper.endFreeRates)
    const free = this.free;
    for (let i = 0; i < s.n; i++) free[i] = a[i] - rho * startAccel[i];
    // the fem bodies' end force in place of the mean step's 2 f̄ − f(x_n), before the error
    // control: its end forces then take the stresses this pass keeps at x_{n+1}
    // (FemEffector keptVersion) instead of evaluating every element again (a rejected step
    // is redone from its start, whose stresses beginMeanStep then evaluates again)
    s.meanEndCorrection(free);
    if (this.rejectedByErrorControl(c, t + h, h, last)) {
      this.rejected = true;
      return false;
    }
    stats.newtonConverged &&= s.newtonConverged;
    s.endFreeRates(c, free);
    s.removeStiffShare(c, t + h, free);
    // A_n and a_n carried with the turning bodies to the end's orientation (at ρ∞ = 1,
    // a_n = A_n and the blend leaves a_{n+1} = b whatever their frame)
    if (shift !== 0) {
      s.transportWithRotation(acc);
      s.transportWithRotation(pseudo);
    }
    const { acceleration, pseudoAcceleration } = memory;
    for (let i = 0; i < s.n; i++) {
      const b = free[i];
      pseudoAcceleration[i] = this.restarting
        ? b + shift * (b - acc[i])
        : k * ((1 - alphaF) * b + alphaF * acc[i] - alphaM * pseudo[i]);
      acceleration[i] = b;
    }
    memory.pseudoValid = true;
    const lag = this.memoryLag;
    lag.share = shift === 0 || this.restarting ? 0 : 1 - gamma * k;
    lag.carry = this.restarting ? shift : k * shift;
    lag.decay = shift === 0 || this.restarting ? 0 : -k * alphaM;
    lag.transported = shift !== 0;
    // again after the error control's (rejectedByErrorControl): the same λ, and the force
    // accumulators left with the end's forces as the steps without it leave them. The
    // servos the step did not resolve with its lead, the law it applied (`stepped`): at x
    // alone their force differs by δ k_p v (1.5e9 N·m after the first step of the rod
    // hinged at its end, k_p = 1e10, where the step applied 259 N·m), and the hinge's
    // reported reaction to it was 3.7e9 N; the next step's λ̃ starts from it too
    s.consistentMultipliers(c, t + h, false, s.lambda, true);
    return true;
  }

  /**
   * The memory an attempt from t starts from, into accStart and pseudoStart: a new one
   * (A_0 = M⁻¹ f at the state, a_0 = A_0), or the record's; with compliant contacts at this
   * step (the constructor's `impacts`) A_n again at x_n with this step's contacts where
   * their law changed (contact-switch.ts lawChanged), and a_n moved by the same change,
   * a_n − A_n kept.
   */
  private startMemory(t: number): void {
    const memory = this.memory;
    const { accStart, pseudoStart } = this;
    if (!memory.accelerationValid) {
      this.freeAcceleration(t, accStart);
      pseudoStart.set(accStart);
      memory.acceleration.set(accStart);
      memory.pseudoAcceleration.set(accStart);
      memory.accelerationValid = true;
      memory.pseudoValid = true;
      this.switches?.begin();
      return;
    }
    const { acceleration } = memory;
    pseudoStart.set(memory.pseudoAcceleration);
    if (this.switches !== null && this.switches.begin() > 0) {
      this.freeAcceleration(t, accStart);
      if (lawChanged(acceleration, accStart)) {
        for (let i = 0; i < accStart.length; i++) pseudoStart[i] += accStart[i] - acceleration[i];
        return;
      }
    }
    accStart.set(acceleration);
  }

  /**
   * The step from t of h again from its start (restored) with backward Euler, at a
   * compliant contact's switch on the last halving (the constructor's `impacts`), the
   * joints held as the θ-schemes' (theta-scheme.ts) at θ = w = 1: on x with weight h², on
   * v with h, the end's velocities projected onto their tangent. Restarts the memory:
   * A_{n+1} = a_{n+1} = M⁻¹ f at the end. False when Newton did not converge and the
   * stepper does not keep it.
   */
  backwardEuler(t: number, h: number): boolean {
    const stats = this.stats;
    const s = this.stepper;
    s.beginStep();
    const c = this.coeff;
    c.cx = h * h;
    c.cv = h;
    c.w = 1;
    c.positionLevel = true;
    c.symmetricJoints = true;
    c.stiffTermsOnDemand = true;
    c.endRates = true;
    c.startForceWeight = 1;
    c.startVelocityWeight = 0;
    c.startTorqueWeight = 0;
    s.beginStartDirections(t, c);
    s.holdStiffForces(t, h, c, 0);
    const { dxPred, vPred, a } = s;
    const startAccel = s.startDirections.accel;
    const { vt, accStart } = this;
    for (let i = 0; i < s.n; i++) {
      dxPred[i] = h * vt[i];
      vPred[i] = vt[i];
      a[i] = accStart[i] + startAccel[i];
    }
    s.linearIterations = 0;
    stats.newtonIterations += s.solve(c, t + h, this.newton);
    stats.linearIterations += s.linearIterations;
    if (s.mustRedo) return false;
    stats.newtonConverged &&= s.newtonConverged;
    const { acceleration, pseudoAcceleration } = this.memory;
    for (let i = 0; i < s.n; i++) acceleration[i] = a[i] - startAccel[i];
    s.endFreeRates(c, acceleration);
    pseudoAcceleration.set(acceleration);
    const lag = this.memoryLag;
    lag.share = 0;
    lag.carry = 0;
    lag.decay = 0;
    lag.transported = false;
    // the error control's next reference (rejectedByErrorControl), S factored at the end
    if (this.params.stepTolerance !== null) {
      s.constrainedAcceleration(c, t + h, this.memory.previousAcceleration, false);
      this.memory.previousValid = true;
    }
    s.consistentMultipliers(c, t + h);
    this.dissipativeStep = true;
    return true;
  }

  /**
   * Error control (params.stepTolerance, m per step; null: off): the acceleration
   * consistent with the joints, ü = M⁻¹ (f + Gᵀλ) (the servos the step does not resolve
   * with its lead, as it took them: constrainedAcceleration `stepped`; none before a new
   * memory's first step, which has no estimate), changes over the step by about h x‴, so
   * δ = (h²/12)(ü_{n+1} − ü_n) estimates the trapezoidal rule's local error h³ x‴/12, and
   * largestDisplacement measures it as the distance it moves a body's material (metres). A
   * step whose estimate exceeds the tolerance is redone as two half steps (step-halving.ts),
   * unless it is the `last` halving, which must be accepted (and says so: the step's
   * stats.stepToleranceMet false; stats.stepError the largest accepted estimate); an
   * accepted one keeps its ü_{n+1} for the next step's estimate. Steps that resolve the
   * motion are never touched; a whipping chain's tip at a coarse h is (see the file
   * comment).
   * Why the ends' accelerations. The estimate is then a function of the step's two ends
   * alone, the same for the step taken back from its end by −h (ü is even under time
   * reversal, |δ| unchanged), so the halvings are chosen as a time-reversible step-size
   * function would (Hairer & Söderlind, SIAM J. Sci. Comput. 26, 2005) and the symmetric
   * scheme keeps its energy without drift through them. The former estimate from the
   * steps' mean accelerations D = (v_{t+h} − v_t)/h, (h²/12)(D − D_prev), compared each step
   * with the one BEFORE it, a backward difference that taken back compares it with the one
   * after: the halvings came later entering a whip than leaving it, and an unactuated
   * 7-axis arm at h ω = 0.6 (5 ms, 60 s, four runs with g × (1 + 0.01 k)) lost 5.8 J of
   * its 103 J on average with that estimate alone, 16 J with the sub-step controller's
   * persistence on top (trySingle), against ±4 J either way with this one.
   */
  private rejectedByErrorControl(
    c: SchemeCoefficients,
    tEnd: number,
    h: number,
    last: boolean,
  ): boolean {
    const tol = this.params.stepTolerance;
    if (tol === null) return false;
    const { memory, endAcceleration: end } = this;
    // λ ← the end's consistent multipliers, S factored there by the step's velocity projection
    this.stepper.constrainedAcceleration(c, tEnd, end, false, true);
    if (memory.previousValid) {
      const change = this.change;
      const start = memory.previousAcceleration;
      for (let i = 0; i < change.length; i++) change[i] = end[i] - start[i];
      const estimate = trapezoidalStepError(
        this.stepper.sys,
        h,
        change,
        this.params.errorWeights ?? null,
      );
      this.lastError = estimate / tol;
      if (estimate > tol) {
        if (!last) return true;
        // accepted only because no halving is left: the run says it missed the tolerance
        this.stats.stepToleranceMet = false;
      }
      this.stats.stepError = Math.max(this.stats.stepError, estimate);
    }
    memory.previousAcceleration.set(end);
    memory.previousValid = true;
    return false;
  }

  /**
   * out ← A = M⁻¹ (f − (r_M M + r_K K) v) at the current state (velocities vt) and t, the
   * free acceleration (the joints' forces are the step's own, not memory): the stepper's
   * residual at a = 0 with the state left where it is (c_x = c_v = 0).
   */
  private freeAcceleration(t: number, out: Float64Array): void {
    const s = this.stepper;
    const c = s.holdState(this.vt, this.params.rayleighMass, this.params.rayleighStiffness);
    const force = this.change;
    s.applyUnknown(c, s.a);
    s.residual(c, t, force);
    massSolve(s.sys, force, out);
  }
}
