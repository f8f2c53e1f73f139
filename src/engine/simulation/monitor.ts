/**
 * What a Simulation watches besides its state, so that what goes wrong is reported rather
 * than returned as a result (Simulation.step, Simulation.state):
 *
 *  - the energy balance, of every model. `energy.dissipated` (J): the work the
 *    non-conservative forces took out since the reference. The effectors' dissipative
 *    forces F (ForceEffector.applyDissipativeForces: dampers, spring and frameSpring
 *    damping, compliant joint limits, point forces and actuators, negative where they
 *    drive) and compliant contact's beyond its elastic push (with the contacts of the step:
 *    step-work.ts), with the scheme's own weights, Σ over steps of
 *    −h v̄ · ((1 − w) F_t + w F_{t+h}), v̄ = ½ (v_t + v_{t+h}), w = Integrator.forceWeight
 *    (with generalized-α's memory lag, Integrator.memoryLag: exactly their share of the
 *    kinetic energy's change; articulated: its stages'
 *    quadrature of −F·v, Integrator.dissipatedWork); the trapezoid ½ h (P_t + P_{t+h}) of the
 *    power of the motors' constraint force, −λᵀ ∂C/∂t, with newmark and generalized-alpha
 *    (with the θ-schemes their work over the step instead: theta-scheme.ts takeMotorWork),
 *    and solver.rayleighMass's and rayleighStiffness's force −(r_M M + r_K K) v, K the tangent
 *    stiffness, with the scheme's weight for it (step-work.ts); plus the kinetic energy that
 *    solver.velocityDamping's decay took out and, under the velocity-level integrators,
 *    minus the work of the contact and joint-limit impulses on the step's mean velocity,
 *    and under newmark and generalized-alpha the kinetic energy a new memory's start
 *    changes (the velocities projected onto the joints' and motors' constraints:
 *    AccelerationStepper.consistentStart) (exact parts of the kinetic energy's change:
 *    AccelerationStepper.removedEnergy), and minus the energy an input puts in at a step
 *    boundary without moving the state (a spring limit's bound moved: addInputWork);
 *    `energy.error` (J): the total energy plus energy.dissipated minus the reference, which
 *    is the integrator's (and the projections') own error on the conservative forces, the
 *    trapezoids' included (O(h²) like the schemes).
 *    The reference is the total energy when the monitor is rebased (energy.dissipated then
 *    0): at t = 0, after reset, after a PATCH of gravity, after an external change of the
 *    state or an applied assembly, and as saved
 *    in a snapshot with energy.dissipated (an older snapshot without them: the energy of
 *    the restored state, and 0).
 *  - `solver.reactionChange` (N, N·m): the largest change between the last two steps of any
 *    component of any joint's (or motor's) reaction force or torque, the ∞-norm over the
 *    entries of State.joints; 0 before the second step since t = 0. Computed after each good
 *    step from the step's multipliers with ConstraintSet.reaction (what State.joints reports,
 *    bit for bit) into two Float64Arrays swapped from step to step: no allocation.
 *  - `solver.energyDriftLimit` (J): Simulation.step ends with a DivergenceError, the state
 *    back at the last good step, when |energy.error| exceeds it.
 */
import type { ConstraintSet } from "../constraints/constraint-set";

/** The figures a StepMonitor keeps in the simulation's state record (state.ts). */
export interface MonitoredValues {
  /** Total energy (J) that energy.error is measured from. */
  energyReference: number;
  /** energy.dissipated (J): the damping's work since the reference (see the header). */
  energyDissipated: number;
  /** solver.reactionChange of the last step (N, N·m). */
  reactionChange: number;
}

/**
 * The energy reference and the reaction history of one Simulation (see the header). The
 * figures a snapshot saves are written to the record it is given; the last two steps'
 * reactions are derived from the multipliers (restoreReactions).
 */
export class StepMonitor {
  private previous: Float64Array;
  private current: Float64Array;
  private readonly force = new Float64Array(3);
  private readonly torque = new Float64Array(3);

  constructor(
    private readonly constraints: ConstraintSet,
    private readonly values: MonitoredValues,
  ) {
    const n = 6 * constraints.constraints.length;
    this.previous = new Float64Array(n);
    this.current = new Float64Array(n);
  }

  /** Measures energy.error from `total` on, with nothing dissipated yet. */
  rebase(total: number): void {
    this.values.energyReference = total;
    this.values.energyDissipated = 0;
  }

  /**
   * energy.error for a state of total energy `total`, with `work` (J) dissipated beyond
   * energy.dissipated (a step not yet committed).
   */
  energyError(total: number, work = 0): number {
    const v = this.values;
    return total + v.energyDissipated + work - v.energyReference;
  }

  /** energy.dissipated (J). */
  dissipated(): number {
    return this.values.energyDissipated;
  }

  /**
   * Commits a good step's dissipation: ½ h (P_t + P_{t+h}) (J) from the damping's power (W)
   * at its two ends (the trapezoidal rule, see the header).
   */
  addStepWork(work: number): void {
    this.values.energyDissipated += work;
  }

  /**
   * Books `work` (J) an input put into the model at a step boundary without moving the
   * state (a spring limit's bound moved past its joint: the change of ½ k δ²) as work done
   * on it, as a drive's: energy.dissipated −= work, so energy.error stays the scheme's.
   */
  addInputWork(work: number): void {
    this.values.energyDissipated -= work;
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
