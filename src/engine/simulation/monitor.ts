/**
 * What a Simulation watches besides its state, so that what goes wrong is reported rather
 * than returned as a result (Simulation.step, Simulation.state):
 *
 *  - `energy.error` (J): the total energy minus a reference, reported only when the model is
 *    conservative (nonConservativeReason is null: no damper, no spring or frameSpring
 *    damping, no motor — a prescribed motion does work —, no actuator, no joint limit, no contact, no pointForce — its
 *    work is not in the potential —, and solver rayleighMass = rayleighStiffness =
 *    velocityDamping = 0), null otherwise. Nothing then adds or removes energy but the
 *    integrator and the joint projection, so the figure is their drift. The reference is the
 *    total energy when the monitor is rebased: at t = 0, after reset, after a PATCH of
 *    gravity or of whether the model is conservative (the solver damping), after an applied
 *    assembly, and as saved in a snapshot (an older snapshot without it: the energy of the
 *    restored state).
 *  - `solver.reactionChange` (N, N·m): the largest change between the last two steps of any
 *    component of any joint's (or motor's) reaction force or torque, the ∞-norm over the
 *    entries of State.joints; 0 before the second step since t = 0. Computed after each good
 *    step from the step's multipliers with ConstraintSet.reaction (what State.joints reports,
 *    bit for bit) into two Float64Arrays swapped from step to step: no allocation.
 *  - `solver.energyDriftLimit` (J): on a conservative model, Simulation.step ends with a
 *    DivergenceError, the state back at the last good step, when |energy.error| exceeds it.
 *    A limit on a non-conservative model could never act, so it is rejected, at model
 *    validation (schemas/model.ts) and on PATCH (Simulation.update), with the reason from
 *    nonConservativeReason.
 *
 * nonConservativeReason and energyLimitMessage read validated model pieces only (no engine
 * state) and are part of the model's validity, so they live in schemas/energy.ts (schemas/
 * imports nothing from src/).
 */
import type { ConstraintSet } from "../constraints/constraint-set";

/** The figures a StepMonitor keeps in the simulation's state record (state.ts). */
export interface MonitoredValues {
  /** Total energy (J) that energy.error is measured from. */
  energyReference: number;
  /** solver.reactionChange of the last step (N, N·m). */
  reactionChange: number;
}

/**
 * The energy reference and the reaction history of one Simulation (see the header). The
 * figures a snapshot saves are written to the record it is given; the last two steps'
 * reactions are derived from the multipliers (restoreReactions).
 */
export class StepMonitor {
  /** Whether the model, with the current solver settings, is conservative. */
  conservative: boolean;
  private previous: Float64Array;
  private current: Float64Array;
  private readonly force = new Float64Array(3);
  private readonly torque = new Float64Array(3);

  constructor(
    private readonly constraints: ConstraintSet,
    conservative: boolean,
    private readonly values: MonitoredValues,
  ) {
    this.conservative = conservative;
    const n = 6 * constraints.constraints.length;
    this.previous = new Float64Array(n);
    this.current = new Float64Array(n);
  }

  /** Measures energy.error from `total` on. */
  rebase(total: number): void {
    this.values.energyReference = total;
  }

  /** energy.error for a state of total energy `total`: null unless conservative. */
  energyError(total: number): number | null {
    return this.conservative ? total - this.values.energyReference : null;
  }

  /**
   * After a good step: the reactions of its multipliers `lambda` at the current positions;
   * reactionChange is their largest difference from the previous step's when `hasPrevious`
   * (a step ran since t = 0 before this one), else 0.
   */
  afterStep(lambda: Float64Array, hasPrevious: boolean): void {
    const cur = this.previous;
    this.previous = this.current;
    this.current = cur;
    this.fill(lambda, cur);
    let change = 0;
    if (hasPrevious) {
      const prev = this.previous;
      for (let i = 0; i < cur.length; i++) {
        const d = Math.abs(cur[i] - prev[i]);
        if (d > change) change = d;
      }
    }
    this.values.reactionChange = change;
  }

  /**
   * After a snapshot restore: the last step's reactions from its multipliers `lambda` at the
   * restored positions (ConstraintSet.reaction reads only them).
   */
  restoreReactions(lambda: Float64Array): void {
    this.fill(lambda, this.current);
  }

  private fill(lambda: Float64Array, out: Float64Array): void {
    const { force, torque, constraints } = this;
    for (let k = 0; k < constraints.constraints.length; k++) {
      constraints.reaction(k, lambda, force, torque);
      const o = 6 * k;
      out[o] = force[0];
      out[o + 1] = force[1];
      out[o + 2] = force[2];
      out[o + 3] = torque[0];
      out[o + 4] = torque[1];
      out[o + 5] = torque[2];
    }
  }
}
