/**
 * Compliant contacts (contact.method "smc", compliant.ts) switching within a step: which of
 * them push (F_n > 0) at the step's start and at its end, and whether the step resolves
 * the mode of one that switched. The integrators whose step weighs the start's and the
 * end's forces (the trapezoidal rule and its relatives: newmark.ts, generalized-alpha.ts)
 * integrate a contact force that starts or stops pushing inside the step as if it acted
 * linearly over the whole step. For a linear contact k, a contact left within the step
 * gives back ½ k δ_t (δ_t + g_{t+h}) where its elastic energy was ½ k δ_t² (δ the
 * penetration at the start, g the gap at the end), a gain of up to (h ω)²/4 of the kinetic
 * energy at the switch (ω = √(k/m)); a contact met gives the mirror loss, and neither
 * cancels the other when the contact's damping acts in between. Those schemes halve such a
 * step and redo its last halving dissipatively (backward Euler, which never gains: `settle`).
 *
 * A mode is resolved when h ω ≤ 1 at the model's step h = solver.dt (CompliantContactEffector
 * .modes: (h ω)² with ω from the contact's stiffness and the inverse mass its normal moves,
 * a rigid body's rotation left out, so a lower bound). It is measured at solver.dt also in
 * a halved sub-step, so a scheme that halves a step where an unresolved contact switches
 * goes on halving down to its last halving (the θ-schemes' treatment, theta-scheme.ts, and
 * generalized-alpha's and newmark's, `settle`): the dissipative redo then acts over h/16
 * only, and takes at most (h ω/16)² of the energy of the motion it integrates.
 */
import { extend } from "../math/grow";

/** What an integrator needs of a compliant contact effector (compliant.ts) to see its contacts switch. */
export interface ImpactSource {
  /** The contacts of the running step: those its detection (beginStep) found. */
  readonly count: number;
  /** out[i] = 1 where contact i pushes at the current state (i < the step's count). */
  pushing(out: Uint8Array): number;
  /**
   * out[i] = (h ω_i)² of contact i's mode where it pushes at the current state, else 0
   * (compliant.ts `modes`); returns the step's count (out untouched when shorter).
   */
  modes?(out: Float64Array): number;
  /**
   * out[0], out[1] ≥ λ_max(M⁻¹K) (1/s²) and λ_max(M⁻¹C) (1/s) of the contacts pushing at
   * the current state, detected there (compliant.ts `explicitRates`): symplectic Euler's
   * stability check (theta-scheme.ts).
   */
  explicitRates?(out: Float64Array): void;
}

/**
 * A step of the trapezoidal family that redoes itself dissipatively at a contact's switch
 * (newmark.ts, generalized-alpha.ts: ContactSwitches.settle).
 */
export interface SwitchRedo {
  /** Puts the state back at the step's start (HalvingStep.restoreStart). */
  restoreStart(): void;
  /**
   * The step from t of h (s) again from its restored start with backward Euler, committed;
   * false (nothing committed) when its Newton iterations must be redone.
   */
  backwardEuler(t: number, h: number): boolean;
}

/** What `check` finds: no contact switched, only resolved ones did, or an unresolved one did. */
export const Switch = { NONE: 0, RESOLVED: 1, UNRESOLVED: 2 } as const;
export type SwitchCode = (typeof Switch)[keyof typeof Switch];

export class ContactSwitches {
  /** Pushing flags and (h ω)² of the contacts at the start [0] and the end [1] of a step. */
  private readonly flags: [Uint8Array, Uint8Array] = [new Uint8Array(16), new Uint8Array(16)];
  private readonly modes: [Float64Array, Float64Array] = [
    new Float64Array(16),
    new Float64Array(16),
  ];
  /** The contacts at the step's start (`begin`). */
  private count = 0;

  constructor(private readonly impacts: ImpactSource) {}

  /**
   * At a step's start, after its detection: records which contacts push and their modes.
   * Returns the step's number of contacts.
   */
  begin(): number {
    this.count = this.record(0);
    return this.count;
  }

  /** At the step's end (the state after `begin`'s step): what switched since `begin`. */
  check(): SwitchCode {
    const n = this.record(1);
    const [a, b] = this.flags;
    const [m0, m1] = this.modes;
    let found: SwitchCode = n === this.count ? Switch.NONE : Switch.RESOLVED;
    for (let i = 0; i < n; i++) {
      if (a[i] === b[i]) continue;
      // h ω > 1 at either end: the step does not resolve the contact's mode
      if (m0[i] > 1 || m1[i] > 1) return Switch.UNRESOLVED;
      found = Switch.RESOLVED;
    }
    return found;
  }

  /**
   * The trapezoidal family's treatment of a step just solved from t of h (s) (newmark.ts,
   * generalized-alpha.ts; the file comment): null when the step stands, its Newton
   * iterations `converged` and no contact switched unresolved (`check`); otherwise what
   * the attempt returns to step-halving.ts: false (halve it) while a halving follows, and
   * at the `last` halving the step redone from its start with backward Euler
   * (`step.backwardEuler`), whose numerical loss then acts over h/2^MAX_HALVINGS only. An
   * unconverged solve is one the stepper kept (AccelerationStepper.mustRedo false: Newton
   * cycling at a contact's kink), which a shorter step brings back into Newton's reach.
   */
  settle(
    step: SwitchRedo,
    converged: boolean,
    t: number,
    h: number,
    last: boolean,
  ): boolean | null {
    if (converged && this.check() !== Switch.UNRESOLVED) return null;
    if (!last) return false;
    step.restoreStart();
    return step.backwardEuler(t, h);
  }

  /** Pushing flags and modes at the current state into [which]; returns the contacts' number. */
  private record(which: 0 | 1): number {
    const { impacts } = this;
    const n = impacts.count;
    // grown keeping the start's values (check compares with them)
    const { flags, modes } = this;
    flags[0] = extend(flags[0], n);
    flags[1] = extend(flags[1], n);
    modes[0] = extend(modes[0], n);
    modes[1] = extend(modes[1], n);
    impacts.pushing(flags[which]);
    if (impacts.modes === undefined) modes[which].fill(0, 0, n);
    else impacts.modes(modes[which]);
    return n;
  }
}

/**
 * The change of a step's start acceleration, relative to 1 + its size (m/s², rad/s²), that
 * lawChanged takes for a change of the contacts' law. A law that changes at a step's start
 * changes it by the force a contact gains or loses, its damping d u_n at the least (25 m/s²
 * on 1 kg at 0.1 m/s under the default law); the carried and the fresh accelerations of a
 * law that did not change differ by rounding and by what Newton left, 1e-10 m/s² on a
 * resting stack of boxes (k = 1e5 N/m), which would otherwise replace the carried one at
 * every other step (and cost newmark a second Newton iteration there: the carried one, the
 * last iterate, is the next step's best guess). A change below it does work ½ h v̄ · M Δa
 * of 1e-6 of h m |v̄| (1 + |a|) at most (5e-9 J a step for 1 kg at 1 m/s, h = 5 ms).
 */
export const LAW_CHANGE = 1e-6;

/**
 * Whether the acceleration `fresh` (m/s², rad/s²), computed at a step's start with the
 * step's contacts, differs from the memory's `carried` one by a change of the contacts' law:
 * ‖fresh − carried‖∞ > LAW_CHANGE (1 + ‖fresh‖∞). Otherwise the carried one is kept, and a
 * persistent contact steps as it did without the check.
 */
export function lawChanged(carried: Float64Array, fresh: Float64Array): boolean {
  let change = 0;
  let size = 0;
  for (let i = 0; i < fresh.length; i++) {
    change = Math.max(change, Math.abs(fresh[i] - carried[i]));
    size = Math.max(size, Math.abs(fresh[i]));
  }
  return change > LAW_CHANGE * (1 + size);
}
