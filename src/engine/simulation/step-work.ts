/**
 * The work (J) the non-conservative forces take out over each step, for the energy balance
 * (monitor.ts; Simulation.step):
 *  - the effectors' dissipative forces F (ForceEffector.applyDissipativeForces: dashpots,
 *    loads, actuators, the compliant limits' damping) and compliant contact's beyond its
 *    elastic push, with the scheme's own weights: its velocity update is
 *    M (v_{t+h} − v_t) = h ((1 − w) f_t + w f_{t+h}) (w = Integrator.forceWeight), so their
 *    work −h v̄ · ((1 − w) F_t + w F_{t+h}), v̄ = ½ (v_t + v_{t+h}), plus where a scheme's
 *    pseudo-acceleration memory lags behind the forces (generalized-α at ρ∞ < 1) their share
 *    of the lag's term, −h v̄ · share e_t (Integrator.memoryLag, carryLag), is exactly their
 *    share of the kinetic energy's change (a servo whose force falls within a step, a stiff dashpot
 *    leave no quadrature error; energy.error is then the scheme's error on the conservative
 *    forces), but a compliant contact the no-pull clamp holds at 0 at both ends of the step
 *    (or sub-step), which no scheme's velocities see: the elastic energy the clamp let go,
 *    U_s − U_e (compliant.ts, "The clamp's release"); or the integrator's own quadrature
 *    (Integrator.dissipatedWork: articulated's stages, of forcePower); where a servo's
 *    damping stopped its joint within the step, the law read at the end state, k_d times a
 *    rate that cancelled to its rounding, corrected to Newton's linear model of it
 *    (AccelerationStepper.lawRoundingWork: backward Euler's and symplectic Euler's solves);
 *  - the solver's Rayleigh damping, −h v̄ · ((1 − w_R) R_t + w_R R_{t+h}) with its force
 *    R = −(r_M M + r_K K) v at each end, as the scheme weighs it: newmark's and
 *    generalized-alpha's with their forceWeight (their memory's a_t holds R_t), the
 *    θ-schemes' at the end alone (w_R = 1: their residual takes it at the end, their
 *    f(x_t) without it). The trapezoid ½ h (P_t + P_{t+h}) of its power P = −R · v booked
 *    h/4 Δvᵀ C Δv too much a step at w_R = ½ (C = r_M M + r_K K), and at w_R = 1 missed
 *    ½ h v_tᵀ C Δv: a linear spring under newmark's trapezoidal rule with rayleighMass 2
 *    showed that as energy.error (test/engine/simulation/rayleigh-balance.test.ts);
 *  - the trapezoid over the step of the power of the motors' prescribed motions
 *    (dissipationPower);
 *  - what the integrator counted itself (AccelerationStepper.removedEnergy: the velocity
 *    decay, a θ-scheme's impulses and motors, a new memory's consistent start);
 *  - what compliant friction's history released where it was committed (the slip beyond
 *    the cap, compliant.ts settle).
 * A step the integrator split (step-halving.ts) is weighed sub-step by sub-step
 * (substepDone), the first two items over each sub-step; sub-steps of part of the dofs
 * (Moreau–Jean's groups apart from its contacts, the rest stepped whole) weigh the first
 * item over those dofs' sub-steps and the others' whole segment (partSubstepDone).
 * A step's end values are kept for the next step's start while the state stays as it is
 * (commit, invalidate).
 */
import type { ConstraintSet } from "../constraints/constraint-set";
import type { CompliantContactEffector } from "../contact/compliant";
import { isVelocityLevel } from "../dynamics/one-step-problem";
import type { ForceEffector } from "../forces/effector";
import type { AccelerationStepper } from "../integrators/acceleration-step";
import type {
  Integrator,
  IntegratorMemory,
  IntegratorName,
  MemoryLag,
  SubstepObserver,
} from "../integrators/integrator";
import { type BodySystem, clearForces, getForces, getVelocity } from "../model/body-system";

/** What the step's work is read from: the simulation's parts, some of them PATCHed. */
export interface StepWorkSource {
  readonly system: BodySystem;
  readonly stepper: AccelerationStepper;
  readonly constraints: ConstraintSet;
  /** The state's joint multipliers (the record's). */
  readonly lambda: Float64Array;
  /**
   * The integrator's step memory (the record's): invalid at a run's start (t = 0, a reset,
   * a state written, a PATCH), where `lambda` is not the state's (zero before any step).
   */
  readonly memory: IntegratorMemory;
  /** Compliant contact's effector, or null: its contacts are detected at each step's start. */
  readonly compliant: CompliantContactEffector | null;
  /** The effectors with dissipative forces (compliant contact apart). */
  readonly dissipative: readonly ForceEffector[];
  /** The settings and the integrator in effect (PATCHes change them). */
  solver(): { integrator: IntegratorName; rayleighMass: number; rayleighStiffness: number };
  integrator(): Integrator;
}

/**
 * The fraction of a step from which a sub-step or piece ends it (the last one, left to
 * `work`): its pieces' ends t + Σ τ round. Ending at 1 − 1.1e-16, a moreau-jean step's last
 * piece after a joint limit's impact was weighed as a sub-step, at its end read after the
 * limits' projection (`projecting` had taken it as the step's end): −1.06e4 J of
 * energy.error on each of those steps of a rod's servo (k_p = 1e7, k_d = 0, commanded
 * 0.05 rad past its bound, 5 ms).
 */
const STEP_END = 1 - 1e-9;

export class StepWork implements SubstepObserver {
  /**
   * Generalized vectors (numDofs): the effectors' dissipative force and the velocity at the
   * running step's start and at its end (the end's become the next start's, swapped, while
   * the state stays), compliant contact's force at both (not carried: its contacts change
   * at a step's start), and forcePower's.
   */
  private startForce: Float64Array;
  private endForce: Float64Array;
  private startVelocity: Float64Array;
  private endVelocity: Float64Array;
  private contactStart: Float64Array;
  private contactEnd: Float64Array;
  /** The Rayleigh force R at the start and the end (swapped with the forces). */
  private rayleighStart: Float64Array;
  private rayleighEnd: Float64Array;
  /** The start's share of contacts held at 0 there that push at the end (applyReopened). */
  private readonly contactReopened: Float64Array;
  /** The unresolved servos' force change over the (sub-)step (segmentWork). */
  private readonly stiffChange: Float64Array;
  /** carryLag's scratch. */
  private readonly lagTurned: Float64Array;
  private readonly powerForce: Float64Array;
  private readonly powerVelocity: Float64Array;
  /** ∂C/∂t of the constraint rows and a fresh state's multipliers (dissipationPower's). */
  private readonly constraintRates: Float64Array;
  private readonly startLambda: Float64Array;
  /** dissipationPower (W) at the end of the last step, valid while stateVersion is `version`. */
  private power = 0;
  private version = -1;
  /** dissipationPower at the end of the running step (work). */
  private endPower = 0;
  /**
   * The running step's length (s), the fraction of it its accepted sub-steps covered
   * (exact: they are h/2^k), and their work (J): a split step is weighed sub-step by
   * sub-step (substepDone). Doubles from the start (−0; each is written before it is read):
   * born a small integer, `covered` changed this object's map when it first held a
   * fraction, at the first split step (hundreds of steps into the stiff cloth), and the
   * code compiled against the old map deoptimized (see BodySystem on V8). Not the powers:
   * they hold a fraction from the first step or never (no Rayleigh damping, no motors),
   * and as doubles they cost S2-100 at the defaults 32 B a step.
   */
  private stepSize = -0;
  private covered = -0;
  private splitWork = -0;
  /**
   * The dofs of the sub-steps told for part of the system (substepDone's `dofs`: Moreau–
   * Jean's groups apart, which its contact step does not move), null: none since the last
   * whole segment; the fraction of the step their sub-steps covered (≥ covered).
   */
  private partial: Uint8Array | null = null;
  private partCovered = -0;
  /** dissipationPower at the step's start, then at each accepted sub-step's end (W). */
  private substepPower = 0;
  /** The last segment's work read before the projection (solved), NaN: none this step. */
  private lastWork = Number.NaN;
  /** The running step's start (s), for the segment `projecting` ends. */
  private stepStart = -0;
  /**
   * A sub-step's work read before the integrator's projection (projecting) and the time (s)
   * its segment ends, NaN: none; substepDone takes it for the sub-step ending there.
   */
  private projectedWork = Number.NaN;
  private projectedAt = Number.NaN;
  /**
   * The time (s) of a projection whose (sub-)steps were told already (their segments end
   * there, `projecting` read none), NaN: none; `projected` takes the next segment's start
   * values after it.
   */
  private restartAt = Number.NaN;

  constructor(private readonly src: StepWorkSource) {
    const dofs = src.system.numDofs;
    this.startForce = new Float64Array(dofs);
    this.endForce = new Float64Array(dofs);
    this.startVelocity = new Float64Array(dofs);
    this.endVelocity = new Float64Array(dofs);
    this.contactStart = new Float64Array(dofs);
    this.contactEnd = new Float64Array(dofs);
    this.rayleighStart = new Float64Array(dofs);
    this.rayleighEnd = new Float64Array(dofs);
    this.contactReopened = new Float64Array(dofs);
    this.stiffChange = new Float64Array(dofs);
    this.lagTurned = new Float64Array(dofs);
    this.powerForce = new Float64Array(dofs);
    this.powerVelocity = new Float64Array(dofs);
    this.constraintRates = new Float64Array(src.constraints.numRows);
    this.startLambda = new Float64Array(src.constraints.numRows);
  }

  /** Whether any force does work beyond its potential (the articulated stages' power). */
  get dissipates(): boolean {
    return this.src.dissipative.length > 0 || this.src.compliant !== null;
  }

  /**
   * Forgets the last step's end values: the forces at this state changed (an input, a
   * PATCH of the solver damping).
   */
  invalidate(): void {
    this.version = -1;
  }

  /**
   * At a step's start: clears what the integrator will count, keeps the start's dissipative
   * force and velocity where the scheme weighs them (Integrator.forceWeight), and
   * dissipationPower at t (the last step's end values unless the state was written since).
   */
  begin(t: number, h: number): void {
    const { src } = this;
    src.stepper.removedEnergy = 0;
    this.stepSize = h;
    this.stepStart = t;
    this.covered = 0;
    this.splitWork = 0;
    this.partial = null;
    this.lastWork = Number.NaN;
    this.projectedAt = Number.NaN;
    this.restartAt = Number.NaN;
    const cached = this.version === src.system.stateVersion;
    // a new memory (a_t = A_t) has no lag
    if (!src.memory.accelerationValid) src.memory.dissipativeLag.fill(0);
    if (src.integrator().forceWeight !== undefined) {
      // the last step's end is this step's start
      if (cached) this.endBecomesStart();
      else {
        this.effectorForce(t, this.startForce);
        getVelocity(src.system, this.startVelocity);
        this.rayleighForce(this.rayleighStart);
      }
      this.contactStartForce();
    } else src.compliant?.beginStep();
    this.substepPower = cached
      ? this.power
      : this.dissipationPower(t, !src.memory.accelerationValid);
  }

  /**
   * The work (J) the step from t of h took out (see the file comment), after `begin`.
   * Keeps the end's values for `commit`.
   */
  work(t: number, h: number): number {
    const { src } = this;
    const integrator = src.integrator();
    const own = integrator.dissipatedWork;
    this.endPower = this.dissipationPower(t + h);
    // compliant friction's history committed at the end (after the step's own contacts'
    // forces were read) and what its commits released (compliant.ts settle)
    if (own !== undefined) return own + src.stepper.removedEnergy + this.released();
    // the last sub-step (the whole step when it was not split): read before the joints'
    // projection (solved), or now
    const hLast = h * (1 - this.covered);
    let last = this.lastWork;
    if (Number.isNaN(last)) last = this.segmentWork(t + h, 1, integrator.forceWeight ?? 1);
    else this.projectedEnd(t + h);
    this.lastWork = Number.NaN;
    return (
      this.splitWork +
      last +
      0.5 * hLast * (this.substepPower + this.endPower) +
      src.stepper.removedEnergy +
      this.released()
    );
  }

  /**
   * At the integrator's end state from t of h, before the joints' post-step projection
   * (Simulation.step; integrators whose projectionOrder is not "none"): the last segment's
   * work (segmentWork), as `work` books it. The step's velocity update took the forces at
   * this state; the projection then moves the positions and velocities by the drift, and a
   * stiff force read after it is no force the step applied: a servo at k_p = 1e10 on the
   * 2 kg, 0.6 m rod hinged at its end, 1/60 s, read k_p Δq of a 3.4e-3 rad projection,
   * 5.0e6 J booked too much a step under backward-euler, 1.2e6 J under newmark. What the
   * projection changes of the kinetic and potential energies is its own (energy.error).
   */
  solved(t: number, h: number): void {
    const integrator = this.src.integrator();
    if (integrator.dissipatedWork !== undefined || integrator.projectionOrder === "none") return;
    // read before the integrator's own projection (projecting): this state is past it
    if (!Number.isNaN(this.lastWork)) return;
    this.lastWork = this.segmentWork(t + h, 1, integrator.forceWeight ?? 1);
  }

  /**
   * At the end, at t, of the (sub-)step or piece the integrator is about to project
   * (SubstepObserver.projecting: Moreau–Jean's step 8 and its joint limits' projection): the
   * segment's work from the start values held, as `solved` reads the step's before the
   * joints' projection, kept for substepDone (a sub-step ending at t) or `work` (the step's
   * end). Read after the projection, a stiff servo's end force was k_p Δq off the force
   * the step applied: the 3-link servo chain (k_p = 1e8, commands 0.3/0.5/0.2 rad, 5 ms)
   * started 5 cm into an nsc floor, its joints moved Δq = (−0.0003, 0.0099, 0.0225) rad by
   * the projection against rates ~100 rad/s, booked ½ h k_p Σ Δq q̇ ≈ 7.9e5 J a step
   * too much (energy.error +7.97e5 J, resting on the floor −31.7 J). The projection's
   * changes of the kinetic and potential energies are the contacts' and limits' work
   * (moreau-jean.ts).
   */
  projecting(t: number): void {
    const w = this.src.integrator().forceWeight;
    if (w === undefined) return;
    const end = (t - this.stepStart) / this.stepSize;
    // the step's end (its last sub-step or piece), to the rounding of t's sum
    if (end >= STEP_END) {
      this.lastWork = this.segmentWork(t, 1, w);
      return;
    }
    // the sub-steps told already end here (a smooth step split itself): no segment left,
    // the next one starts after the projection (`projected`)
    if (end - this.covered <= 1e-9) {
      this.restartAt = t;
      return;
    }
    this.projectedWork = this.segmentWork(t, end, w);
    this.projectedAt = t;
  }

  /**
   * After the integrator's projection at t (SubstepObserver.projected): where the
   * (sub-)steps told before it ended there (`projecting`), the next segment's start values
   * are read at the projected state, which that segment starts from. Kept from before the
   * projection, a stiff servo's start force was k_p Δq off the force the next sub-step
   * applied: the rod of `overlapRod` in test/engine/simulation/servo-balance.test.ts
   * (k_p = 1e8) hitting the nsc floor in its split steps booked 9.8e4 J of energy.error at
   * each such projection.
   */
  projected(t: number): void {
    if (t !== this.restartAt) return;
    this.restartAt = Number.NaN;
    this.effectorForce(t, this.startForce);
    getVelocity(this.src.system, this.startVelocity);
    this.rayleighForce(this.rayleighStart);
    this.substepPower = this.dissipationPower(t);
    this.contactStartForce();
  }

  /**
   * The end's dissipative force, velocity and Rayleigh force at the projected end state (the
   * next step's start: the scheme takes its start there), after `solved` read them before.
   */
  private projectedEnd(t: number): void {
    this.effectorForce(t, this.endForce);
    getVelocity(this.src.system, this.endVelocity);
    this.rayleighForce(this.rayleighEnd);
  }

  /**
   * An accepted sub-step from t of h of a split step (the integrator's SubstepObserver):
   * its forces' work weighed as the scheme weighed them over it, M (v_e − v_s) =
   * h ((1 − w) f_s + w f_e) holding sub-step by sub-step (over the whole step a stiff
   * servo's effort, which changes within it, missed its work by joules), and the powers'
   * trapezoid over it. The step's last sub-step is left to `work`. With `dofs` (1 for the
   * dofs it moved; the others' segment goes on), see partSubstepDone.
   */
  substepDone(t: number, h: number, dofs: Uint8Array | null = null): void {
    const w = this.src.integrator().forceWeight;
    if (w === undefined) return;
    // the work `projecting` read for a sub-step ending at t + h (any other: a rejected one's)
    const projectedAt = this.projectedAt;
    this.projectedAt = Number.NaN;
    if (dofs !== null) {
      this.partSubstepDone(t, h, w, dofs);
      return;
    }
    const covered = this.covered + h / this.stepSize;
    if (covered >= STEP_END) return;
    // a whole step's work read before a projection that was then rejected (halved)
    this.lastWork = Number.NaN;
    let segment: number;
    if (Math.abs(t + h - projectedAt) <= 1e-9 * this.stepSize) {
      segment = this.projectedWork;
      this.projectedEnd(t + h);
    } else segment = this.segmentWork(t + h, covered, w);
    // and the powers' trapezoid over the sub-step
    const p1 = this.dissipationPower(t + h);
    this.splitWork += segment + 0.5 * h * (this.substepPower + p1);
    this.covered = covered;
    this.partial = null;
    this.substepPower = p1;
    // the sub-step's end is the next one's start; its contacts' force with the contacts the
    // next sub-step detects there (a contact met in this one is damped in the next: carried,
    // its damping at the next one's start went unbooked, -0.54 J of energy.error at a single
    // step of two hinged links dropped onto a plane under generalized-alpha)
    this.endBecomesStart();
    this.contactStartForce();
  }

  /**
   * A sub-step from t of h that moved only the dofs of `dofs` (Moreau–Jean's groups apart
   * from its contacts take a smooth step of their own, split, while its contact step moves
   * the rest over the whole step: moreau-jean.ts): their forces' work over it, −h v̄ ·
   * ((1 − w) F_s + w F_e) summed over those dofs, and their end values become their start;
   * the other dofs' segment goes on from its start, the Rayleigh force's likewise. Exact
   * where no force couples the two sets (their dissipative forces on `dofs` depend on those
   * dofs alone). The motors' power trapezoid is left to the whole segments. Not with
   * compliant contact,
   * whose segments are the whole system's (its sub-steps then weighed with the step).
   */
  private partSubstepDone(t: number, h: number, w: number, dofs: Uint8Array): void {
    if (this.src.compliant !== null) return;
    if (this.partial !== dofs) {
      this.partial = dofs;
      this.partCovered = this.covered;
    }
    const covered = this.partCovered + h / this.stepSize;
    if (covered >= STEP_END) return;
    this.partCovered = covered;
    const { startForce: f0, endForce: f1, startVelocity: v0, endVelocity: v1 } = this;
    const { rayleighStart: r0, rayleighEnd: r1 } = this;
    this.effectorForce(t + h, f1);
    getVelocity(this.src.system, v1);
    this.rayleighForce(r1);
    const wr = this.rayleighWeight(w);
    // the servos it did not resolve, at the weight 1 and with their lead (segmentWork)
    const ds = this.stiffChange;
    const ws = this.src.stepper.stiffForceChange(t + h, w, ds) ? 1 : 0;
    let work = 0;
    for (let i = 0; i < f1.length; i++) {
      if (dofs[i] === 0) continue;
      work -=
        (v0[i] + v1[i]) *
        ((1 - w) * f0[i] + w * f1[i] + ws * ds[i] + (1 - wr) * r0[i] + wr * r1[i]);
      f0[i] = f1[i];
      v0[i] = v1[i];
      r0[i] = r1[i];
    }
    this.splitWork += 0.5 * h * work;
  }

  /**
   * The end's dissipative force and velocity become the start's, swapped with temporaries
   * (no copy; a destructuring swap would build an array).
   */
  private endBecomesStart(): void {
    const force = this.startForce;
    this.startForce = this.endForce;
    this.endForce = force;
    const velocity = this.startVelocity;
    this.startVelocity = this.endVelocity;
    this.endVelocity = velocity;
    const rayleigh = this.rayleighStart;
    this.rayleighStart = this.rayleighEnd;
    this.rayleighEnd = rayleigh;
  }

  /** out ← the Rayleigh force R = −(r_M M + r_K K) v at the current state (0 without). */
  private rayleighForce(out: Float64Array): void {
    const { rayleighMass, rayleighStiffness } = this.src.solver();
    if (rayleighMass === 0 && rayleighStiffness === 0) out.fill(0);
    else this.src.stepper.rayleighForce(rayleighMass, rayleighStiffness, out);
  }

  /**
   * The weight of the Rayleigh force at a (sub-)step's end in the scheme's velocity update
   * (the file comment): 1 for the θ-schemes (velocity-level), else the forces' w.
   */
  private rayleighWeight(w: number): number {
    return isVelocityLevel(this.src.solver().integrator) ? 1 : w;
  }

  /**
   * −h v̄ · ((1 − w) F_s + w F_e) (J) over a segment ending at t, the fraction `end` of the
   * step, and the current state, from the start values held (h from `covered` on, and for
   * the dofs of partial sub-steps from partCovered on), plus the elastic energy compliant
   * contact's no-pull clamp let go where it held a contact at 0 at both ends (compliant.ts,
   * "The clamp's release": those contacts are not in F_s, F_e); the end's into endForce,
   * endVelocity (and contactEnd).
   */
  private segmentWork(t: number, end: number, w: number): number {
    const { startForce: f0, endForce: f1, startVelocity: v0, endVelocity: v1 } = this;
    const { rayleighStart: r0, rayleighEnd: r1 } = this;
    const { system, compliant } = this.src;
    const h = this.stepSize * (end - this.covered);
    this.effectorForce(t, f1);
    getVelocity(system, v1);
    this.rayleighForce(r1);
    const wr = this.rayleighWeight(w);
    // the servos the (sub-)step did not resolve had the weight 1, not w, and their lead: their
    // change over it adds (1 − w) ΔF_s and the lead's end force F_s^δ − F_s
    // (AccelerationStepper.holdStiffForces, stiffForceChange)
    const ds = this.stiffChange;
    const ws = this.src.stepper.stiffForceChange(t, w, ds) ? 1 : 0;
    // and their share of a pseudo-acceleration memory's lag (generalized-α at ρ∞ < 1)
    const lag = this.src.integrator().memoryLag ?? null;
    const e = this.src.memory.dissipativeLag;
    const share = lag === null ? 0 : lag.share;
    let work = 0;
    if (compliant === null) {
      const part = this.partial;
      if (part === null) {
        for (let i = 0; i < f1.length; i++)
          work -=
            (v0[i] + v1[i]) *
            ((1 - w) * f0[i] +
              w * f1[i] +
              ws * ds[i] +
              share * e[i] +
              (1 - wr) * r0[i] +
              wr * r1[i]);
        if (lag !== null) this.carryLag(lag, null, null);
        return 0.5 * h * work + this.src.stepper.lawRoundingWork(h, w, v0, v1);
      }
      const hPart = this.stepSize * (end - this.partCovered);
      for (let i = 0; i < f1.length; i++)
        work -=
          (part[i] === 1 ? hPart : h) *
          (v0[i] + v1[i]) *
          ((1 - w) * f0[i] + w * f1[i] + ws * ds[i] + (1 - wr) * r0[i] + wr * r1[i]);
      return 0.5 * work;
    }
    const { contactStart: c0, contactEnd: c1, contactReopened: c2 } = this;
    clearForces(system);
    const released = compliant.applySegmentEnd();
    getForces(system, c1);
    clearForces(system);
    if (compliant.applyReopened()) {
      getForces(system, c2);
      for (let i = 0; i < c0.length; i++) c0[i] += c2[i];
    }
    for (let i = 0; i < f1.length; i++)
      work -=
        (v0[i] + v1[i]) *
        ((1 - w) * (f0[i] + c0[i]) +
          w * (f1[i] + c1[i]) +
          ws * ds[i] +
          share * e[i] +
          (1 - wr) * r0[i] +
          wr * r1[i]);
    if (lag !== null) this.carryLag(lag, c0, c1);
    return 0.5 * h * work + released + this.src.stepper.lawRoundingWork(h, w, v0, v1);
  }

  /**
   * The dissipative forces' lag e = M (a − A) (IntegratorMemory.dissipativeLag) carried over
   * the segment just weighed, from its start and end values (the effectors', the Rayleigh
   * force's and, non-null, compliant contact's c_s, c_e): e ← carry (f_e − R f_s) +
   * decay R e, R the turning bodies' rotation over it where the integrator turned its memory
   * (MemoryLag, generalized-alpha.ts).
   */
  private carryLag(lag: MemoryLag, c0: Float64Array | null, c1: Float64Array | null): void {
    const { startForce: f0, endForce: f1, rayleighStart: r0, rayleighEnd: r1 } = this;
    const e = this.src.memory.dissipativeLag;
    const turned = this.lagTurned;
    const { carry, decay } = lag;
    for (let i = 0; i < e.length; i++)
      turned[i] = decay * e[i] - carry * (f0[i] + r0[i] + (c0 === null ? 0 : c0[i]));
    if (lag.transported) this.src.stepper.transportWithRotation(turned);
    for (let i = 0; i < e.length; i++)
      e[i] = carry * (f1[i] + r1[i] + (c1 === null ? 0 : c1[i])) + turned[i];
  }

  /** The energy compliant friction's commits released over the step (J; compliant.ts). */
  private released(): number {
    return this.src.compliant === null ? 0 : this.src.compliant.settle();
  }

  /** A good step: its end values are the next step's start while the state stays. */
  commit(): void {
    this.power = this.endPower;
    this.version = this.src.system.stateVersion;
  }

  /**
   * The power (W) the effectors' and compliant contact's dissipative forces take out at t
   * and the current state, −F·v, less the rates Φ̇ of the effectors' stored functions
   * (ForceEffector.storedEnergy): the articulated integrator's stages integrate it, and
   * book ΔΦ exactly (storedEnergy at the step's ends). Integrated whole, a position servo's
   * power carried the stages' quadrature error, uncontrolled (the error estimate measures
   * the motion): the 2 kg, 0.6 m rod hinged at its end, k_d = 0, commanded 0.3 rad at
   * 1/60 s, booked 0.32 J (k_p = 1e4) and 28 J (1e6) off −ΔΦ over 100 steps where the
   * motion's own energy ½ I q̇² + Φ drifted 0.028 J and 7.5 J; now that drift is
   * energy.error.
   */
  forcePower(t: number): number {
    const { powerForce: f, powerVelocity: v, contactEnd: fc } = this;
    const { system, compliant } = this.src;
    this.effectorForce(t, f);
    const contact = compliant !== null;
    if (contact) {
      clearForces(system);
      compliant.applyDissipativeForces(t);
      getForces(system, fc);
    }
    getVelocity(system, v);
    let power = 0;
    for (let i = 0; i < f.length; i++) power -= (contact ? f[i] + fc[i] : f[i]) * v[i];
    const { dissipative } = this.src;
    for (let i = 0; i < dissipative.length; i++) power -= dissipative[i].storedPower?.(t) ?? 0;
    return power;
  }

  /** Σ Φ (J) of the effectors' stored functions at t and the current state (forcePower). */
  storedEnergy(t: number): number {
    const { dissipative } = this.src;
    let stored = 0;
    for (let i = 0; i < dissipative.length; i++) stored += dissipative[i].storedEnergy?.(t) ?? 0;
    return stored;
  }

  /**
   * The power (W) the motors take out at time t (s) and the current state, integrated by
   * the trapezoid over a step: the prescribed motions'. `fresh`: a run's start (the
   * integrator's memory invalid, as a snapshot keeps it), where the record's multipliers
   * are not the state's.
   */
  private dissipationPower(t: number, fresh = false): number {
    const { src } = this;
    const solver = src.solver();
    let power = 0;
    // the prescribed motions' (motors: C(q, t) = 0 with ∂C/∂t ≠ 0): their constraint force
    // Gᵀλ has the power λᵀ G v = −λᵀ ∂C/∂t (the velocity constraint G v + ∂C/∂t = 0), which
    // they put in, at the multipliers of the state's last solve: the end-of-step forces of
    // newmark and generalized-alpha (the θ-schemes' act over the step: theta-scheme.ts
    // takeMotorWork). At a run's start they are computed, consistent with the state: the
    // record's are zero before the first step (a motor loaded at the start missed ½ h τ₀ ω,
    // 0.62 J for a rod turned at 50 rad/s against gravity at h = 5 ms) and the last step's
    // after an input
    const set = src.constraints;
    if (set.timeDependent && !isVelocityLevel(solver.integrator)) {
      let lambda = src.lambda;
      if (fresh) {
        lambda = this.startLambda;
        src.stepper.startMultipliers(t, solver.rayleighMass, solver.rayleighStiffness, lambda);
      }
      power += set.prescribedPower(t, lambda, this.constraintRates);
    }
    return power;
  }

  /**
   * out ← the generalized dissipative force (N, N·m) of the effectors at t and the current
   * state, through the body accumulators.
   */
  private effectorForce(t: number, out: Float64Array): void {
    const { system, dissipative } = this.src;
    clearForces(system);
    for (let i = 0; i < dissipative.length; i++) dissipative[i].applyDissipativeForces?.(t);
    getForces(system, out);
  }

  /**
   * contactStart ← compliant contact's dissipative force at a segment's start (a step's or
   * sub-step's), with the contacts detected at this state, as the segment will detect them
   * (its damping acts on the contacts that penetrate at its start, compliant.ts): not
   * carried from one segment's end, where the contacts change (a contact found separated is
   * elastic for one step, damped from the next). Those the no-pull clamp holds at 0 here
   * are left to the segment's end (applySegmentStart). Nothing without compliant contact.
   */
  private contactStartForce(): void {
    const { system, compliant } = this.src;
    if (compliant === null) return;
    compliant.beginStep();
    clearForces(system);
    compliant.applySegmentStart();
    getForces(system, this.contactStart);
  }
}
