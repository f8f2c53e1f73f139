/**
 * A simulation: the bodies, their force effectors and the integrator, advanced by one
 * clear step pipeline. Constructed by loadModel (src/engine/simulation/build.ts) from a validated
 * model; the service and embedding programs use it through src/engine/index.ts.
 */

import type { SceneOut } from "../../../schemas/api";
import { articulationIssues } from "../../../schemas/articulation";
import { denseOrderIssue, systemOrder } from "../../../schemas/cost";
import { consistentMassIssue } from "../../../schemas/fem";
import {
  type InputSpec,
  ParametersPatch,
  type ParametersPatchSpec,
  type TimedInputSpec,
} from "../../../schemas/input";
import { issuesOf, issuesSummary, underPath } from "../../../schemas/issues";
import {
  type ContactSpec,
  contactMethodOf,
  contactSolverIssues,
  type ModelSpec,
  patchSolver,
  type SolverSpec,
  unreadContactSettings,
  unreadSolverSettings,
  velocityDampingIssue,
} from "../../../schemas/model";
import { MAX_PENDING_INPUTS } from "../../../schemas/snapshot";
import type { AssemblyOptionsIn, AssemblyResultOut, StateOut } from "../../../schemas/state";
import { AssemblyOptions } from "../../../schemas/state";
import type { JointActuator, ServoGains } from "../actuators/actuator";
import type { Actuation } from "../actuators/build";
import { JointLimitProblem } from "../actuators/limit-problem";
import { assemble } from "../analysis/assembly";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import type { ContactModel } from "../contact/contact-model";
import { ContactReport } from "../contact/report";
import { type ArticulatedTree, buildTree } from "../dynamics/articulated-body";
import { isVelocityLevel } from "../dynamics/one-step-problem";
import type { ForceEffector } from "../forces/effector";
import { potentialEnergy } from "../forces/energy";
import { FemEffector } from "../forces/fem/fem-effector";
import { GyroscopicEffector } from "../forces/gyroscopic";
import { PointForceEffector } from "../forces/point-force";
import type { BroadPhaseMemory } from "../geometry/broadphase";
import { AccelerationStepper } from "../integrators/acceleration-step";
import { createIntegrator } from "../integrators/factory";
import { bodyLengths } from "../integrators/generalized-alpha";
import {
  emptyStepStats,
  type Integrator,
  resetStepStats,
  type StepStats,
} from "../integrators/integrator";
import type { KrylovMemory } from "../integrators/iteration-matrix";
import { INITIAL_PRECONDITIONING } from "../integrators/iteration-operator";
import { springNetworkFrequencyBound, stiffestSpringFrequency } from "../integrators/resolution";
import {
  BodyKind,
  type BodyState,
  type BodySystem,
  cloneBodyState,
  copyBodyState,
  kineticEnergy,
  updateDerived,
} from "../model/body-system";
import { isMemoryExporter, SnapshotError } from "../model/state-codec";
import { DeadlineExceeded } from "../solvers/deadline";
import { assemblyResultOut } from "./assembly-result";
import {
  applyInput,
  BLOW_UP_POSITION,
  BLOW_UP_VELOCITY,
  checkInput,
  checkModelCommands,
  type InputIssue,
  type InputTargets,
  JointBounds,
} from "./inputs";
import { JointStates } from "./joint-state";
import { withoutNegativeZeros } from "./json-values";
import { StepMonitor } from "./monitor";
import { SensorSet } from "./sensors";
import {
  canonicalJson,
  reservedOffDiagonalBlocks,
  type SimulationSnapshotSpec,
  withChecksum,
} from "./snapshot";
import { type ResolvedSolver, resolveSolver } from "./solver-defaults";
import {
  type CapturedState,
  type Controls,
  decodeState,
  encodeState,
  SimulationState,
  stateHash,
} from "./state";
import { StepWork } from "./step-work";

/** Thrown by step() when the state stops being finite or blows up; the state is the last good one. */
export class DivergenceError extends Error {
  constructor(
    message: string,
    readonly time: number,
    readonly step: number,
  ) {
    super(message);
    this.name = "DivergenceError";
  }
}

/**
 * Thrown by step() when a solver fails without the state going non-finite (a singular
 * or unconverged linear solve, a rejected contact problem); the state is the last good
 * one. The service ends such a session `diverged` with the message, as for a blow-up:
 * both mean the model cannot be advanced with these settings.
 */
export class SolverError extends Error {
  constructor(
    message: string,
    readonly time: number,
    readonly step: number,
  ) {
    super(message);
    this.name = "SolverError";
  }
}

/**
 * Thrown by update() when a patch is valid on its own but not for this model (an
 * energyDriftLimit on a model that is not conservative); nothing has changed. The issues'
 * paths are from the patch's root, as in a request validation error.
 */
export class ParameterError extends Error {
  constructor(readonly issues: { path: (string | number)[]; message: string }[]) {
    super(issuesSummary(issues));
    this.name = "ParameterError";
  }
}

/**
 * Thrown by schedule() when inputs do not fit this model or name a step already passed;
 * nothing is scheduled. Paths are from the request's root (inputs.<i>.…, step).
 */
export class InputError extends Error {
  constructor(readonly issues: InputIssue[]) {
    super(issuesSummary(issues));
    this.name = "InputError";
  }
}

/** Inputs a recording keeps at most (then it is marked truncated and cannot be replayed). */
export const MAX_RECORDED_INPUTS = 100_000;

/**
 * What was done to a simulation since a start: the snapshot it started from (null: the
 * model's initial state at t = 0) and every input and parameter patch with the step
 * boundary it took effect at. Replaying them from the start reproduces the run bit for bit.
 */
export interface RecordingLog {
  start: SimulationSnapshotSpec | null;
  entries: TimedInputSpec[];
  truncated: boolean;
}

export interface SimulationParts {
  model: ModelSpec;
  system: BodySystem;
  effectors: ForceEffector[];
  constraints: ConstraintSet;
  /** Contacts (model.contact), or undefined when bodies do not collide. */
  contact?: ContactModel;
  /** Joint coordinates, actuators and joint limits (their effectors are in `effectors`). */
  actuation: Actuation;
  /** ℓ, the smallest colliding shape's size (m; solver-defaults.ts contactSize). */
  contactSize: number;
  setGravity(g: readonly [number, number, number]): void;
}

export interface SimulationPatch {
  solver?: Partial<SolverSpec>;
  gravity?: [number, number, number];
  contact?: Partial<ContactSpec>;
}

/**
 * A joint row open beyond this (m or rad) at a failed step's last good state is named in the
 * failure (Simulation.openJoint): far beyond what any step's projection leaves (jointTolerance
 * ≤ 1e-3), far below a mechanism built wrong.
 */
const OPEN_JOINT = 1e-2;

/** The stiffest servos a failed step's message names (Simulation.stiffServos), the rest counted. */
const STIFF_SERVOS_NAMED = 5;

export class Simulation {
  readonly model: ModelSpec;
  readonly system: BodySystem;
  /** The solver settings as the model and the PATCHes give them. */
  private solverSpec: SolverSpec;
  /** solverSpec with the problem's defaults filled in (solver-defaults.ts): what runs. */
  private resolved: ResolvedSolver;
  private readonly contactSize: number;
  private readonly effectors: ForceEffector[];
  private readonly constraints: ConstraintSet;
  private readonly contact: ContactModel | undefined;
  private readonly stepper: AccelerationStepper;
  private integrator: Integrator;
  /**
   * Everything that changes as the simulation runs (state.ts): the bodies' arrays are the
   * system's, the multipliers the stepper's, the integrator memory the integrator's.
   */
  private readonly record: SimulationState;
  /** The running step's counts (copied to the record's stats when the step succeeds). */
  private readonly stepStats: StepStats = emptyStepStats();
  /** The model's initial bodies, which reset() returns to. */
  private readonly initial: BodyState;
  /**
   * The last good state, which a failed step is undone to (saveGood, restoreGood): the
   * record at the running step's start (bodies, multipliers, integrator memory, figures)
   * with, in the typed arrays below, what the step also rewrites in the parts a snapshot
   * saves (the reported efforts, the turn counters, the broad phase's memory, the matrix-
   * free CG's memory, nonsmooth contact's reported contacts) and what the parts hold in
   * place themselves (the factored PCG's factorization, nonsmooth contact's warm start,
   * compliant friction's history). A diverged session is then at exactly the state of a
   * session stepped to the last good step: its State, snapshot and fork are that session's
   * (the failed step's efforts, NaN after an unconverged Newton, made a snapshot no server
   * restores). `good` is the record at the start of the last step taken, whose velocities
   * the bodyAcceleration sensors difference with: the two swap when a step succeeds, so
   * that a failed one leaves them as they were.
   */
  private held: SimulationState;
  private good: SimulationState;
  /** The actuators' efforts, then the joint coordinates' limit efforts (N·m or N). */
  private readonly heldEfforts: Float64Array;
  /** Per revolute coordinate: its whole turns and last wrapped angle (rad). */
  private readonly heldTurns: Float64Array;
  /**
   * Nonsmooth contact's last contacts as the State reports them (compliant contact
   * re-detects its own at the state), which a failed step's State reports again.
   */
  private readonly heldContacts = new ContactReport();
  /** The matrix-free CG's memory, when it runs on that path. */
  private readonly heldKrylov: KrylovMemory = {
    preconditioning: INITIAL_PRECONDITIONING,
    stepIterations: 0,
  };
  private krylovHeld = false;
  /** The contact detector's broad-phase memory, when it had one (else it is as new). */
  private readonly heldBroadPhase: BroadPhaseMemory = { axis: 0, sinceChoice: 0 };
  private broadPhaseHeld = false;
  /** The joint coordinates (actuation.coordinates' values, in its order). */
  private readonly coordinates: JointCoordinate[];
  /** energy.error's reference and solver.reactionChange (monitor.ts). */
  private readonly monitor: StepMonitor;
  /** The work the non-conservative forces take out a step (the energy balance, monitor.ts). */
  private readonly stepWork: StepWork;
  private readonly setGravityFn: (g: readonly [number, number, number]) => void;
  private gravity: [number, number, number];
  /** The contact parameters as patched (model.contact merged with every PATCH). */
  private contactSpec: ContactSpec | null;
  /** What inputs act on: actuators and point forces by id, the bodies. */
  private readonly targets: InputTargets;
  private readonly actuation: Actuation;
  /** The revolute coordinates, whose turns are counted after every step. */
  private readonly angles: JointCoordinate[];
  /** The joint limits as a one-step problem (velocity-level integrators), or null. */
  private readonly limitProblem: JointLimitProblem | null;
  /** Per limit of limitProblem: 1 where its compliant law is a rigid bound's (ontoBounds). */
  private readonly rigidLimits: Uint8Array;
  /** Per limit of limitProblem: its joint's id, and ontoBounds' choice of limits (scratch). */
  private readonly limitJoints: string[];
  private readonly projectedLimits: Uint8Array;
  /** The stiffest spring's ω (rad/s), which newmark's default β, γ follow (resolution.ts). */
  private readonly springFrequency: number;
  /** Each body's jointed group's body length (m; generalized-alpha.ts bodyLengths). */
  private readonly bodyLengths: Float64Array;
  /** The spring network's ω_max bound (rad/s; resolution.ts), or null: not a network. */
  private readonly networkFrequency: number | null;
  private readonly sensors: SensorSet;
  /** Inputs and patches waiting for their step boundary, in the order they apply. */
  private pending: TimedInputSpec[] = [];
  /**
   * The pending entries the recording's start holds (a snapshot's controls): once applied
   * they are not recorded, since a replay restores them with the start.
   */
  private pendingInStart = new Set<TimedInputSpec>();
  /** The step of the last inputs applied since the recording's start (−1: none). */
  private lastInputStep = -1;
  private log: RecordingLog = { start: null, entries: [], truncated: false };
  /** Length of the last step (s; 0 before the first and after a state change). */
  private lastH = 0;
  /** The contacts of the state being reported (sensors read them). */
  private reportedContacts: StateOut["contacts"] = [];
  private readonly contactReport = new ContactReport();
  /**
   * A restored snapshot's contacts (state.ts, CapturedState.contacts), reported in place of
   * the contact module's until the next step or change of state; null: the module's.
   */
  private restoredContacts: ContactReport | null = null;
  /** The fem bodies (their effectors), in model order. */
  private readonly fem: FemEffector[];
  /** The joint tree of the articulated integrator, built when it is first chosen. */
  private tree: ArticulatedTree | null = null;

  constructor(parts: SimulationParts) {
    this.model = parts.model;
    this.system = parts.system;
    this.effectors = parts.effectors;
    this.fem = parts.effectors.filter((e) => e instanceof FemEffector);
    this.constraints = parts.constraints;
    this.contact = parts.contact;
    this.setGravityFn = parts.setGravity;
    this.gravity = [...parts.model.gravity];
    this.contactSpec = parts.model.contact ? { ...parts.model.contact } : null;
    this.solverSpec = { ...parts.model.solver };
    this.contactSize = parts.contactSize;
    this.resolved = resolveSolver(this.solverSpec, this.contactSize, this.gravity);
    this.actuation = parts.actuation;
    this.angles = [...parts.actuation.coordinates.values()].filter((q) => q.kind === "angle");
    const limited = this.model.joints.flatMap((j) => {
      const q = parts.actuation.coordinates.get(j.id);
      return (j.type === "revolute" || j.type === "prismatic") && j.limits && q
        ? [
            {
              coordinate: q,
              lower: j.limits.lower,
              upper: j.limits.upper,
              restitution: j.limits.restitution ?? 0,
            },
          ]
        : [];
    });
    this.limitProblem = limited.length > 0 ? new JointLimitProblem(this.system, limited) : null;
    this.rigidLimits = Uint8Array.from(limited, (l) =>
      parts.actuation.limits.some((c) => c.coordinate === l.coordinate && c.spring) ? 0 : 1,
    );
    this.limitJoints = limited.map((l) => l.coordinate.joint);
    this.projectedLimits = new Uint8Array(limited.length);
    const { index, mass } = this.system;
    const massOf = (id: string) => {
      const b = index.get(id);
      return b === undefined ? 0 : mass[b];
    };
    this.springFrequency = stiffestSpringFrequency(this.model.forces, massOf);
    // each body's farthest joint anchor from its centre of mass (m), and the joints' body
    // pairs, for the jointed groups' length the default step tolerance is scaled to
    // (generalized-alpha.ts bodyLengths)
    const reach = new Float64Array(this.system.numBodies);
    const links: [number, number][] = [];
    for (const j of this.model.joints) {
      for (const end of [j.a, j.b]) {
        const b = index.get(end.body);
        if (b !== undefined) reach[b] = Math.max(reach[b], Math.hypot(...end.point));
      }
      links.push([index.get(j.a.body) ?? -1, index.get(j.b.body) ?? -1]);
    }
    this.bodyLengths = bodyLengths(this.system, reach, links);
    this.networkFrequency = springNetworkFrequencyBound(this.model, massOf);
    this.record = new SimulationState(
      this.system.state,
      this.system.numDofs,
      this.constraints.numRows,
    );
    this.stepper = new AccelerationStepper(
      this.system,
      this.effectors,
      this.solverSpec.linearSolver,
      this.solverSpec.linearPreconditioner ?? null,
      this.constraints,
      this.record.lambda,
      this.angles,
    );
    // compliant contact apart: its power at a step's start is taken with the contacts that
    // step detects (StepWork.begin), not carried from the last step's end
    const compliant = this.contact?.compliant ?? null;
    this.stepWork = new StepWork({
      system: this.system,
      stepper: this.stepper,
      constraints: this.constraints,
      lambda: this.record.lambda,
      memory: this.record.integrator,
      compliant,
      dissipative: this.effectors.filter(
        (e) => e.applyDissipativeForces !== undefined && e !== compliant,
      ),
      solver: () => this.solverSpec,
      integrator: () => this.integrator,
    });
    this.initial = cloneBodyState(this.system.state);
    this.ontoBounds();
    this.integrator = this.createIntegrator();
    this.held = this.record.clone();
    this.good = this.record.clone();
    this.coordinates = [...parts.actuation.coordinates.values()];
    this.heldEfforts = new Float64Array(parts.actuation.actuators.length + this.coordinates.length);
    this.heldTurns = new Float64Array(2 * this.angles.length);
    this.monitor = new StepMonitor(this.constraints, this.record);
    this.monitor.rebase(this.totalEnergy());
    const actuators = new Map(parts.actuation.actuators.map((a) => [a.id, a]));
    const loads = new Map<string, PointForceEffector>();
    for (const e of this.effectors) if (e instanceof PointForceEffector) loads.set(e.id, e);
    const bounds = new Map<string, JointBounds>();
    for (const l of limited) {
      const compliant = parts.actuation.limits.find((c) => c.coordinate === l.coordinate);
      const holders = compliant ? [l, compliant] : [l];
      const joint = l.coordinate.joint;
      const spring = compliant?.spring ? compliant : null;
      bounds.set(joint, new JointBounds(joint, l.lower, l.upper, holders, l.coordinate, spring));
    }
    this.targets = {
      system: this.system,
      actuators,
      loads,
      limits: bounds,
      joints: new Set(this.model.joints.map((j) => j.id)),
      time: () => this.record.time,
      dt: () => this.solver.dt,
      commands: new Map(
        this.model.actuators.map((a) => [a.id, a.type === "torque" ? a.effort : a.target]),
      ),
      effectorsChanged: () => this.stepper.effectorsChanged(),
      inputWork: (work) => this.monitor.addInputWork(work),
      jointStates: new JointStates(this.model, this.system, parts.actuation.coordinates),
    };
    this.sensors = new SensorSet(this.model.sensors, {
      system: this.system,
      coordinates: parts.actuation.coordinates,
      actuators,
      time: () => this.record.time,
      previousVelocity: () => ({ vel: this.good.bodies.vel, h: this.lastH }),
      contacts: () => this.reportedContacts,
    });
  }

  get time(): number {
    return this.record.time;
  }

  get stepCount(): number {
    return this.record.step;
  }

  /** Accumulated wall time (ms) in matrix assembly and linear solves since creation. */
  get timing(): Readonly<{ assembly: number; solve: number }> {
    return this.stepper.timing;
  }

  /** The contact part (collision detection, contact solver and their timings), if any. */
  get contactModel(): ContactModel | undefined {
    return this.contact;
  }

  /**
   * The total normal contact force of the last step (N): the sum over its contacts of the
   * normalForce the State reports (nonsmooth: P_n/h; compliant: F_n of the step's last
   * evaluation), without building the State's contacts, so that a stream can read it after
   * every step (the frames' contactPeak). 0 without contact and before the first step.
   * Allocates nothing.
   */
  get contactNormalForce(): number {
    const nsc = this.contact?.nonsmooth;
    if (nsc) return nsc.totalNormalForce;
    const smc = this.contact?.compliant;
    return smc && this.record.step > 0 ? smc.totalNormalForce : 0;
  }

  /**
   * The last step's solver figures (the State's `solver` without reactionChange), read in
   * place: no copy, so that a host can look at every step's (worker-runtime.ts).
   */
  get lastStepStats(): Readonly<StepStats> {
    return this.record.stats;
  }

  /** The solver settings in effect: the model's and PATCHes', with the problem's defaults. */
  get solver(): Readonly<ResolvedSolver> {
    return this.resolved;
  }

  /**
   * Advances n steps of solver.dt. Throws DivergenceError, with the state restored to the
   * last good step, when it becomes non-finite or blows up, or when |energy.error| of a
   * conservative model exceeds solver.energyDriftLimit.
   */
  step(n = 1): void {
    const record = this.record;
    for (let k = 0; k < n; k++) {
      if (this.pending.length > 0 && this.pending[0].step <= record.step) this.applyDue();
      // read after the inputs: a scheduled patch may change it
      const h = this.solverSpec.dt;
      // before the step's start detects (compliant contact's detection moves the broad
      // phase) and before the restored contacts are dropped: they are this state's
      this.saveGood();
      this.restoredContacts = null;
      this.stepWork.begin(record.time, h);
      // after: its detection commits the last step's friction history (compliant.ts
      // beginStep), the history a failed step goes back to
      this.contact?.compliant?.holdHistory();
      const stats = this.stepStats;
      // zeroed here, for every integrator: what one does not write (articulated has no
      // Newton iterations, a Moreau–Jean step with contacts no sub-steps) is then not what
      // the previous step or integrator left (after a PATCH from articulated to moreau-jean
      // every State kept its stepError, which a restored copy did not report)
      resetStepStats(stats);
      this.stepper.strainRejected = null;
      try {
        this.integrator.step(record.time, h, stats);
        this.stepWork.solved(record.time, h);
        stats.jointToleranceMet = this.stepper.projectOnConstraints(
          record.time + h,
          h,
          this.integrator.projectionOrder,
          this.resolved.jointTolerance,
        );
      } catch (err) {
        // the failed last halving's iterate, before the restore: a fem element crushed there
        // (a St Venant–Kirchhoff block struck faster than its wave speed) names the cause
        // (else the last end its halvings rejected as crushed: acceleration-step.ts solve)
        const last = this.strainFault();
        const rejected = this.stepper.strainRejected;
        const strained =
          last !== null
            ? `; its last iterate: ${last}`
            : rejected !== null
              ? `; a halving's end it rejected: ${rejected}`
              : "";
        this.restoreGood();
        // a host's time limit, not the model's failure: the step is undone, nothing else
        if (err instanceof DeadlineExceeded) throw err;
        throw new SolverError(
          `step ${record.step + 1} failed: ${(err as Error).message}${this.openJoint()}${this.stiffServos(h)}${strained}`,
          record.time,
          record.step,
        );
      }
      const bad = this.findBlowUp();
      if (bad !== null) {
        this.restoreGood();
        throw new DivergenceError(
          `diverged at step ${record.step + 1} (t = ${(record.time + h).toPrecision(6)} s): ${bad}`,
          record.time,
          record.step,
        );
      }
      const work = this.stepWork.work(record.time, h);
      const drift = this.energyDrift(work);
      if (drift !== null) {
        const limit = this.solverSpec.energyDriftLimit;
        this.restoreGood();
        throw new DivergenceError(
          `diverged at step ${record.step + 1} (t = ${(record.time + h).toPrecision(6)} s): energy error ${drift.toPrecision(4)} J exceeds solver.energyDriftLimit = ${limit} J`,
          record.time,
          record.step,
        );
      }
      Object.assign(record.stats, stats);
      this.monitor.addStepWork(work);
      this.stepWork.commit();
      this.monitor.afterStep(record.lambda, record.step > 0);
      for (let i = 0; i < this.angles.length; i++) this.angles[i].track();
      record.step++;
      record.time += h;
      this.lastH = h;
      // the step's start is now the last step taken's (the sensors' previous velocities)
      const start = this.held;
      this.held = this.good;
      this.good = start;
      // inputs due at the new boundary act now: the state of this step number includes them
      if (this.pending.length > 0 && this.pending[0].step <= record.step) this.applyDue();
    }
  }

  /**
   * Schedules inputs at the step boundary `step` (default: the next one, the current step
   * count), after any already scheduled there. Throws InputError, scheduling nothing, when
   * an input does not fit the model or the step has passed. Returns the boundary and the
   * number of inputs then pending.
   */
  schedule(
    given: readonly InputSpec[],
    step = this.record.step,
  ): { step: number; pending: number } {
    // (−0 as +0: as the recording's JSON will replay it)
    const inputs = withoutNegativeZeros(given);
    const issues: InputIssue[] = [];
    if (!Number.isInteger(step) || step < this.record.step)
      issues.push({
        path: ["step"],
        message: `step ${step} has passed (the simulation is at step ${this.record.step})`,
      });
    inputs.forEach((input, i) => {
      for (const issue of checkInput(input, this.targets))
        issues.push({ path: ["inputs", i, ...issue.path], message: issue.message });
    });
    this.checkRoom(inputs.length, ["inputs"], issues);
    if (issues.length > 0) throw new InputError(issues);
    this.enqueue(inputs.map((input) => ({ step, input })));
    // due now: applied at once, so the state of this step number already includes them
    if (step === this.record.step) this.applyDue();
    return { step, pending: this.pending.length };
  }

  /**
   * Schedules timed inputs and parameter patches (a recording's, a replay), each at its
   * own step; checked as schedule() checks (paths from the list's root), nothing
   * scheduled on error.
   */
  scheduleTimed(given: readonly TimedInputSpec[]): void {
    const entries = withoutNegativeZeros(given);
    const issues: InputIssue[] = [];
    entries.forEach((e, i) => {
      if (e.step < this.record.step)
        issues.push({
          path: [i, "step"],
          message: `step ${e.step} has passed (the simulation is at step ${this.record.step})`,
        });
      if ("input" in e)
        for (const issue of checkInput(e.input, this.targets))
          issues.push({ path: [i, "input", ...issue.path], message: issue.message });
    });
    this.checkRoom(entries.length, [], issues);
    if (issues.length > 0) throw new InputError(issues);
    this.enqueue(entries);
    if (this.pending.length > 0 && this.pending[0].step <= this.record.step) this.applyDue();
  }

  /**
   * The model's actuator commands and point loads whose effect is a blow-up at once (as
   * such an input would be: inputs.ts checkModelCommands), paths from the model's root;
   * [] when there is none. A server refuses such a model at its creation.
   */
  commandIssues(): InputIssue[] {
    return this.commandIssuesAt(this.solver.dt);
  }

  /**
   * The commands in effect whose effect over a step of h (s) is a blow-up: the model's
   * (checkModelCommands) and the actuator and load values inputs set (checkInput), paths
   * from the model's root (an input's value: ["actuators" | "forces", its id, …]).
   */
  private commandIssuesAt(h: number): InputIssue[] {
    const t: InputTargets = { ...this.targets, dt: () => h };
    const issues = checkModelCommands(this.model, t);
    const set = (kind: string, id: string, found: InputIssue[]) => {
      for (const issue of found)
        issues.push({
          path: [kind, id, ...issue.path],
          message: `the value an input set: ${issue.message}`,
        });
    };
    for (const a of t.actuators.values())
      if (a.override !== null)
        set("actuators", a.id, checkInput({ type: "actuator", id: a.id, value: a.override }, t));
    for (const load of t.loads.values()) {
      const o = load.override;
      if (o === null) continue;
      const [force, torque] = [o.force, o.torque].map(
        (v) => [v[0], v[1], v[2]] as [number, number, number],
      );
      set(
        "forces",
        load.id,
        checkInput({ type: "load", id: load.id, force, torque, reset: false }, t),
      );
    }
    return issues;
  }

  /**
   * Where a model's energy at this state overflows double precision (a snapshot would write
   * the energy reference as null, which no server restores), paths from the model's root;
   * null when the energy is finite. The culprit is the first body whose own energy
   * ½ m|v|² + ½ ωᵀ I ω − m g·x is not finite, else the forces, joints and fem bodies (whose
   * energies the effectors sum with no per-entry split); within it, the field holding the value of
   * largest magnitude (a box halfExtents of 1e308: ["bodies", i, "shapes", k,
   * "halfExtents"], whose inertia m (b² + c²)/3 overflows; a rest length of 1e300:
   * ["forces", i, "restLength"]).
   */
  energyOverflow(): InputIssue | null {
    const kinetic = this.kineticEnergy();
    const potential = potentialEnergy(this.effectors);
    if (Number.isFinite(kinetic) && Number.isFinite(potential)) return null;
    const totals = `kinetic ${kinetic} J, potential ${potential} J`;
    const s = this.system;
    const I = s.inertiaWorld;
    const [gx, gy, gz] = this.gravity;
    for (const [i, body] of this.model.bodies.entries()) {
      const b = s.index.get(body.id);
      if (b === undefined || s.dofOffset[b] < 0) continue;
      const m = s.mass[b];
      const [x, v, w] = [vec3(s.pos, 3 * b), vec3(s.vel, 3 * b), vec3(s.omega, 3 * b)];
      let e =
        0.5 * m * (v[0] ** 2 + v[1] ** 2 + v[2] ** 2) - m * (gx * x[0] + gy * x[1] + gz * x[2]);
      if (s.kind[b] === BodyKind.RIGID)
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++) e += 0.5 * w[r] * I[9 * b + 3 * r + c] * w[c];
      if (Number.isFinite(e)) continue;
      // its quantities (the orientation is a unit quaternion)
      const fields = Object.fromEntries(Object.entries(body).filter(([k]) => k !== "orientation"));
      const at = largestLeaf(fields, ["bodies", i]);
      return {
        path: at.path,
        message: `body "${body.id}": its energy is not finite (${e} J; ${totals}), its ${at.path.slice(2).join(".")} reaching ${at.value}: beyond what double precision holds`,
      };
    }
    const { forces, joints, fem } = this.model;
    const at = largestLeaf({ forces, joints, fem }, []);
    return {
      path: at.path,
      message: `the energy of the forces, joints or fem bodies is not finite (${totals}), ${at.path.length > 0 ? `the largest value among them ${at.path.join(".")} = ${at.value}` : "none of them holding a number"}: beyond what double precision holds`,
    };
  }

  /** How many inputs and patches wait for a later step boundary. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Inputs and patches waiting for a later step boundary (a copy). */
  pendingInputs(): TimedInputSpec[] {
    return this.pending.map((p) => ({ ...p }));
  }

  /**
   * Inputs and patches the recording holds (at most MAX_RECORDED_INPUTS), and whether it
   * takes more (false once truncated): what it keeps of the heap grows with them.
   */
  recordedInputs(): { entries: number; full: boolean } {
    return { entries: this.log.entries.length, full: this.log.truncated };
  }

  /**
   * The recording since the last start (creation, reset, restore or applied assembly), with
   * the inputs and patches scheduled since it that still wait (`scheduled`, copies): not
   * those its start's snapshot holds pending. `from`: only its entries from that index on
   * (a caller that keeps the earlier ones, as a store's input log does, reads what is new
   * in O(new + pending) instead of the whole recording).
   */
  recording(from = 0): RecordingLog & { scheduled: TimedInputSpec[] } {
    const scheduled = this.pending
      .filter((p) => !this.pendingInStart.has(p))
      .map((p) => ({ ...p }));
    return { ...this.log, entries: this.log.entries.slice(from), scheduled };
  }

  /**
   * An issue at `path` when `count` more entries would take the queue past
   * MAX_PENDING_INPUTS, the most a snapshot keeps: a longer queue was accepted, then its
   * checkpoint refused on restore and the session lost.
   */
  private checkRoom(count: number, path: (string | number)[], issues: InputIssue[]): void {
    const after = this.pending.length + count;
    if (after > MAX_PENDING_INPUTS)
      issues.push({
        path,
        message: `${count} more would make ${after} inputs pending, above the ${MAX_PENDING_INPUTS} a session holds (apply some first: step past them)`,
      });
  }

  /**
   * Inserts keeping the queue ordered by step, each after the entries of its step already
   * there and in its list's order: O(queue + n log n) for n entries (one at a time, each
   * insertion moved the queue, a thousand inputs into 295 000 pending took seconds).
   */
  private enqueue(entries: readonly TimedInputSpec[]): void {
    if (entries.length === 0) return;
    // (sort is stable: entries of one step keep their order)
    const added = entries.length > 1 ? [...entries].sort((a, b) => a.step - b.step) : entries;
    const queue = this.pending;
    if (queue.length === 0 || added[0].step >= queue[queue.length - 1].step) {
      for (const e of added) queue.push(e);
      return;
    }
    const merged: TimedInputSpec[] = [];
    let i = 0;
    for (const e of added) {
      while (i < queue.length && queue[i].step <= e.step) merged.push(queue[i++]);
      merged.push(e);
    }
    while (i < queue.length) merged.push(queue[i++]);
    this.pending = merged;
  }

  /**
   * Applies the pending inputs and patches due at this step boundary, and records them. A
   * request's inputs applied at a boundary where earlier ones already took effect are
   * recorded `separate`, and a replay settles the ones before them first, as live.
   */
  private applyDue(): void {
    // forces (or parameters) changed, and the state written (InputEffect)
    let changed = false;
    let moved = false;
    // a teleport's pose (bodyState position or orientation): a start, see stateChanged;
    // moved bounds: a start for their joints (the others may rest into their compliant
    // bounds, δ = τ/k, as the dynamics left them)
    let placed: Placed = null;
    let applied = false;
    // taken off the queue at once (one shift each moved the queue: quadratic)
    let count = 0;
    while (count < this.pending.length && this.pending[count].step <= this.record.step) count++;
    for (const entry of this.pending.splice(0, count)) {
      if (entry.separate === true && applied) {
        this.settleInputs(changed, moved, placed);
        changed = false;
        moved = false;
        placed = null;
        applied = false;
      }
      if ("input" in entry) {
        const input = entry.input;
        const effect = applyInput(input, this.targets);
        if (effect !== "none") changed = true;
        if (effect === "state") moved = true;
        // not a jointState: it sets its joint within its bounds and leaves the other joints'
        // coordinates as the dynamics left them (ontoBounds moved a joint resting δ = τ/k
        // into its compliant bound onto it, the chain with it: the joint set 9.3e-5 rad off);
        // nor bounds that do not reach their joint (JointBounds.reaches), nor a bodyState of
        // the values in place (applyInput: "none")
        if (
          input.type === "bodyState" &&
          effect === "state" &&
          (!!input.position || !!input.orientation)
        )
          placed = "all";
        else if (input.type === "limits" && effect === "state" && placed !== "all")
          placed = new Set([...(placed ?? []), input.id]);
      } else {
        this.applyPatch(entry.parameters);
        changed = true;
      }
      if (!this.pendingInStart.delete(entry)) {
        // the first of this go, after an earlier go at this boundary
        const later = !applied && this.lastInputStep === this.record.step;
        const step = this.record.step;
        this.logEntry(
          "input" in entry
            ? { step, input: entry.input, ...(later ? { separate: true } : {}) }
            : { step, parameters: entry.parameters, ...(later ? { separate: true } : {}) },
        );
      }
      applied = true;
    }
    // nothing due (an empty list scheduled now): nothing the recording would replay either
    if (applied) this.settleInputs(changed, moved, placed);
  }

  /**
   * After inputs took effect at this boundary: what they invalidate. `changed`: forces,
   * parameters or the state (InputEffect other than "none"); `moved`: a body's state was
   * written; `placed`: a pose ("all") or joints' bounds (their ids) among them. Inputs that
   * changed nothing (a zero impulse, bounds that do not reach their joint) invalidate
   * nothing: at generalized-alpha's ρ∞ < 1 forcesChanged restarts the acceleration memory,
   * which would change the motion.
   */
  private settleInputs(changed: boolean, moved: boolean, placed: Placed): void {
    this.lastInputStep = this.record.step;
    if (!changed) return;
    // a new command or load changes the forces at this state (the step's work) and the
    // forces an integrator may have carried from the last step
    this.stepWork.invalidate();
    this.integrator.forcesChanged?.();
    if (moved) this.stateChanged(placed);
  }

  private logEntry(entry: TimedInputSpec): void {
    if (this.log.truncated) return;
    if (this.log.entries.length >= MAX_RECORDED_INPUTS) this.log.truncated = true;
    else this.log.entries.push(entry);
  }

  /**
   * A failed step's hint (its message's end): the joint row furthest from closed at the last
   * good state when it is open beyond OPEN_JOINT (m or rad), as joints no motion satisfies
   * leave it (a particle on two distance joints too short to meet: Newton cannot close them
   * at the position level, and its failure alone named no joint); "" otherwise.
   */
  private openJoint(): string {
    const { row, value } = this.constraints.largestResidual(this.record.time);
    if (row < 0 || !(value > OPEN_JOINT)) return "";
    return `; at the last good state ${this.constraints.rowLabel(row)} is off by ${value.toPrecision(3)} (m or rad): joints no motion satisfies cannot be held`;
  }

  /**
   * The servos a step of h does not resolve at the last good state by the bound with the
   * joints free (JointActuator.fastestRate), named in a failed step's message: at extreme
   * gains they are what the step could not take (k_p = 1e22 N·m/rad, no k_d, on a
   * 0.24 kg·m² rod at 1/60 s: h √(k_p/Ĩ) = 6.8e9, newmark and backward-euler fail at h/16;
   * at 1e18 both run, at 3 to 6 Newton iterations a step). Under articulated, which takes
   * servos implicitly where its explicit sub-steps would be too many (articulated.ts,
   * IMPLICIT_SERVO_SUBSTEPS), the hint is generalized-alpha, whose Newton iterations take
   * the other stiff forces implicitly too.
   */
  private stiffServos(h: number): string {
    const stiff: { a: JointActuator; hl: number }[] = [];
    for (const a of this.actuation.actuators) {
      const hl = h * a.fastestRate();
      if (hl > 1) stiff.push({ a, hl });
    }
    if (stiff.length === 0) return "";
    // the stiffest first, at most STIFF_SERVOS_NAMED of them (a 160-link chain of servos
    // named every one)
    stiff.sort((x, y) => y.hl - x.hl);
    const named = stiff.slice(0, STIFF_SERVOS_NAMED).map(({ a, hl }) => {
      // a velocity servo's gain is k_v (held as its kd), a position servo's k_p and k_d
      const bound = a.type === "velocity" ? "h·kv/I" : "h·max(kd/I, √(kp/I))";
      return `"${a.id}" (${bound} = ${hl.toPrecision(3)})`;
    });
    const more = stiff.length - named.length;
    if (more > 0) named.push(`and ${more} more`);
    const hint =
      this.resolved.integrator === "articulated"
        ? "articulated takes only servos implicitly, its other forces explicitly: generalized-alpha takes them all implicitly, or a shorter dt"
        : "a shorter dt or the backward-euler integrator takes them";
    return `; servos stiffer than the step resolves: ${named.join(", ")} (${hint})`;
  }

  /**
   * After positions or velocities were set from outside: derived data and memories.
   * `placed` (a teleport's pose: "all"; moved bounds: their joints): a start, whose joints
   * (those joints) past a rigid bound are moved onto it as at t = 0 (ontoBounds); under the
   * compliant law a rod teleported 0.1 rad past its bound was thrown back across its range
   * by the ½ k δ² (41 J) of the default stiffness, where the velocity-level integrators set
   * it on the bound at rest.
   */
  private stateChanged(placed: Placed = null): void {
    this.restoredContacts = null;
    // compliant friction's springs do not follow a state written from outside
    this.contact?.compliant?.clearHistory();
    updateDerived(this.system);
    if (placed !== null) this.ontoBounds(placed === "all" ? null : placed);
    this.integrator.reset();
    // back onto the joints before the angles, the energy and the State read it: articulated
    // its own way, the others the velocities projected onto the joints and motors (the
    // impulse the joints give at once: the State right after an impulse on a hinged rod
    // showed the free body's velocities until the next step)
    if (this.integrator.stateMoved) this.integrator.stateMoved(this.time);
    else this.stepper.consistentStart(this.time);
    for (const q of this.angles) q.track();
    this.lastH = 0;
    this.monitor.rebase(this.totalEnergy());
  }

  /**
   * At the model's start (t = 0, a reset; a teleport or moved bounds, stateChanged), before
   * the energy reference is taken: the bounds a joint starts past are moved back onto them,
   * the positions alone, the joints held (the smallest move in the kinetic metric,
   * JointLimitProblem.project, as the steps' projections of the joints' drift: no velocity
   * from it). A rigid bound's compliant law (its default
   * stiffness under newmark, generalized-alpha and articulated) would otherwise release the
   * ½ k δ² of its regularization: a 1 kg, 1 m rod started 0.07 rad past its bound without
   * gravity was thrown at 6.3 rad/s across its range onto the other bound. A spring (the
   * model's stiffness) is left where it is, its release the model's energy. The model pose
   * (`initial`) stays the joints' and the articulated tree's reference. `joints`: only
   * their limits (moved bounds; null: all). Until 2026-12-06 moved bounds projected every
   * joint past one: the 3-link chain's j2, resting 9.3e-5 rad into its compliant bound,
   * was moved onto it and the chain with it when j1's bounds were widened.
   */
  private ontoBounds(joints: ReadonlySet<string> | null = null): void {
    const p = this.limitProblem;
    if (p === null) return;
    const velocityLevel = isVelocityLevel(this.resolved.integrator);
    const only = this.projectedLimits;
    for (let i = 0; i < only.length; i++)
      only[i] =
        (velocityLevel || this.rigidLimits[i] === 1) &&
        (joints === null || joints.has(this.limitJoints[i]))
          ? 1
          : 0;
    const t = this.record.time;
    const tolerance = this.resolved.jointTolerance;
    const set = this.constraints.numRows > 0 ? this.constraints : null;
    p.project(
      set,
      t,
      tolerance,
      set === null
        ? null
        : () =>
            this.stepper.projectOnConstraints(t, this.resolved.dt, "positions-first", tolerance),
      only,
    );
  }

  /** Starts a new recording at the current state (after reset, restore, applied assembly). */
  private restartRecording(atModelStart: boolean): void {
    this.log = { start: null, entries: [], truncated: false };
    if (!atModelStart) this.log.start = this.snapshot();
    this.pendingInStart = new Set(atModelStart ? [] : this.pending);
    this.lastInputStep = -1;
  }

  /** Back to t = 0 with the model's initial state. */
  reset(): void {
    this.restoredContacts = null;
    // the broad phase as a new simulation's: the contacts in a fresh run's order
    this.contact?.detector.resetBroadPhase();
    this.contact?.compliant?.clearHistory();
    this.restore(this.initial);
    this.record.restart();
    for (const b of this.targets.limits.values()) b.set(b.modelLower, b.modelUpper);
    this.ontoBounds();
    this.lastH = 0;
    this.integrator.reset();
    // the model's commands and loads before the reference is taken: a model's constant world
    // force is a potential a load set at run time is not (until 2026-12-08 the reference was
    // taken under the run-time load, energy.error off by the model's −f·x from t = 0 on)
    for (const a of this.targets.actuators.values()) a.override = null;
    this.setGains(new Map());
    for (const l of this.targets.loads.values()) l.setLoad(null, 0);
    this.monitor.rebase(this.totalEnergy());
    for (const q of this.actuation.coordinates.values()) q.resetTurns();
    // the State's efforts are the last step's: none since t = 0, as a new session's (the
    // servo's and limit's of the step before the reset read on at t = 0)
    this.zeroEfforts();
    this.pending = [];
    // the parameters stay as patched: a recording from the model's start would replay the
    // model's (another dt, gravity or solver), so its start is then this state's snapshot
    const m = this.model;
    const modelParameters = { solver: m.solver, gravity: m.gravity, contact: m.contact ?? null };
    this.restartRecording(canonicalJson(this.parameters()) === canonicalJson(modelParameters));
  }

  /**
   * Applies a PATCH. Throws ParameterError (paths from the patch's root), changing nothing,
   * when it breaks the wire format's rules (ParametersPatch) or does not fit this model:
   * settings the resulting choice does not read, nonsmooth contact with an integrator that
   * has no velocity level, lemke with friction, a change of contact.method or
   * collideJointed, an energyDriftLimit on a model that is not conservative. Re-takes
   * energy.error's reference when gravity or the conservativeness changes.
   */
  update(given: SimulationPatch): void {
    // the wire format's rules (schemas/input.ts) for a caller of the engine too: a dt of 2 s
    // taken here made a session whose snapshot no server could restore
    const checked = ParametersPatch.safeParse(given);
    if (!checked.success) throw new ParameterError(issuesOf(checked.error));
    // (−0 as +0: as the recording's JSON will replay it)
    const patch = withoutNegativeZeros(given);
    // (a live PATCH only: a recording that holds such an entry, accepted and ignored
    // before, still replays)
    if (patch.contact && contactMethodOf(this.model) === "none")
      throw new ParameterError([
        {
          path: ["contact"],
          message:
            "the model has no contact block, so there are no contact parameters to change (its shapes do not collide): create the session with one",
        },
      ]);
    this.applyPatch(patch);
    this.logEntry({ step: this.record.step, parameters: patch as ParametersPatchSpec });
  }

  private applyPatch(patch: SimulationPatch): void {
    const contact = contactMethodOf(this.model);
    const solver = patch.solver
      ? patchSolver(this.solverSpec, patch.solver, contact)
      : this.solverSpec;
    const spec = this.contactSpec;
    const unread = [
      ...unreadSolverSettings(solver, contact).map((u) => ({
        path: ["solver", u.key],
        message: u.message,
      })),
      ...(patch.contact && contact !== "none"
        ? unreadContactSettings(patch.contact, contact).map((u) => ({
            path: ["contact", u.key],
            message: u.message,
          }))
        : []),
      // what selects the contact's structure is the session's for good
      ...(["method", "collideJointed"] as const)
        .filter(
          (key) => spec && patch.contact?.[key] !== undefined && patch.contact[key] !== spec[key],
        )
        .map((key) => ({
          path: ["contact", key],
          message: `contact.${key} cannot change in a session (it is ${JSON.stringify(spec?.[key])}): create a session with the other`,
        })),
      ...contactSolverIssues(solver, spec ? { ...spec, ...patch.contact } : undefined),
    ];
    if (unread.length > 0) throw new ParameterError(unread);
    const dense = denseOrderIssue(solver.linearSolver, systemOrder(this.model));
    if (dense !== null)
      throw new ParameterError([{ path: ["solver", "linearSolver"], message: dense }]);
    const decay = velocityDampingIssue(solver);
    if (decay !== null)
      throw new ParameterError([{ path: ["solver", "velocityDamping"], message: decay }]);
    const articulation = articulationIssues({ ...this.model, solver });
    if (articulation.length > 0) throw new ParameterError(articulation);
    if (consistentMassIssue(this.model.fem, solver.integrator) !== null)
      throw new ParameterError([
        {
          path: ["solver", "integrator"],
          message: `a fem body with a consistent mass needs newmark or generalized-alpha, not ${solver.integrator}`,
        },
      ]);
    // a longer step lengthens what an effort in effect does in one (h F): a load or effort
    // taken at the old step may be a blow-up at the new one, refused as its input would be
    if (solver.dt > this.solverSpec.dt) {
      const blown = this.commandIssuesAt(solver.dt);
      if (blown.length > 0)
        throw new ParameterError([
          {
            path: ["solver", "dt"],
            message: `at a step of ${solver.dt} s, ${blown[0].path.join(".")}: ${blown[0].message}`,
          },
        ]);
    }
    if (patch.gravity) {
      const before = this.gravity;
      this.gravity = [...patch.gravity];
      this.setGravityFn(this.gravity);
      // the energy reference re-taken under the new gravity must be a number: a gravity
      // of 1e308 m/s² made the potential Infinity, which a snapshot writes as null and no
      // server restores (the session then lost at the next restart)
      const total = this.totalEnergy();
      if (!Number.isFinite(total)) {
        this.gravity = before;
        this.setGravityFn(before);
        throw new ParameterError([
          {
            path: ["gravity"],
            message: `the potential energy under this gravity is not finite (${total} J): beyond what double precision holds`,
          },
        ]);
      }
      this.monitor.rebase(total);
    }
    if (patch.contact && this.contact) {
      this.contact.update(patch.contact);
      if (this.contactSpec) this.contactSpec = { ...this.contactSpec, ...patch.contact };
    }
    if (patch.solver || patch.gravity) {
      // build the new integrator first, so a rejected combination changes nothing; the
      // defaults follow the step and the gravity (solver-defaults.ts)
      const previous = this.solverSpec;
      const previousResolved = this.resolved;
      this.solverSpec = solver;
      this.resolved = resolveSolver(this.solverSpec, this.contactSize, this.gravity);
      try {
        this.integrator = this.createIntegrator();
      } catch (err) {
        this.solverSpec = previous;
        this.resolved = previousResolved;
        throw err;
      }
    }
    if (patch.solver) {
      this.stepper.setLinearSolver(
        this.solverSpec.linearSolver,
        this.solverSpec.linearPreconditioner ?? null,
      );
      const jacobians = this.resolved.gyroscopicJacobian;
      const gyroscopic = this.effectors.find((e) => e instanceof GyroscopicEffector);
      if (gyroscopic !== undefined && gyroscopic.jacobians !== jacobians) {
        gyroscopic.jacobians = jacobians;
        this.stepper.effectorsChanged();
      }
    }
    this.integrator.reset();
    // the damping's power follows the solver settings (rayleighMass, rayleighStiffness)
    this.stepWork.invalidate();
  }

  state(): StateOut {
    const s = this.system;
    const bodies = s.ids.map((id, b) => ({
      id,
      position: vec3(s.pos, 3 * b),
      orientation: [s.quat[4 * b], s.quat[4 * b + 1], s.quat[4 * b + 2], s.quat[4 * b + 3]] as [
        number,
        number,
        number,
        number,
      ],
      velocity: vec3(s.vel, 3 * b),
      angularVelocity: vec3(s.omega, 3 * b),
    }));
    // the contacts first: compliant contact re-detects them at this state (compliant.ts,
    // report), and its elastic energy is then that of the contacts reported
    const contacts = this.contactStates();
    this.reportedContacts = contacts;
    const kinetic = this.kineticEnergy();
    const potential = potentialEnergy(this.effectors);
    return {
      time: this.record.time,
      step: this.record.step,
      bodies,
      contacts,
      joints: this.jointStates(),
      actuators: this.actuation.actuators.map((a) => ({
        id: a.id,
        effort: a.effort,
        command: a.commandAt(this.record.time),
        ...(a.gainsMoved ? { gains: wireGains(a) } : {}),
      })),
      observation: this.sensors.observe(),
      energy: {
        kinetic,
        potential,
        total: kinetic + potential,
        dissipated: this.monitor.dissipated(),
        error: this.monitor.energyError(kinetic + potential),
      },
      solver: { ...this.record.stats, reactionChange: this.record.reactionChange },
      ...(this.fem.length > 0 ? { fem: this.femStates() } : {}),
    };
  }

  /** The fem bodies of the State: node positions and nodal equivalent strains as arrays. */
  private femStates(): NonNullable<StateOut["fem"]> {
    return this.fem.map((f) => {
      const positions = new Float64Array(3 * f.nodeCount);
      const strain = new Float64Array(f.nodeCount);
      f.positions(positions);
      f.nodalStrain(strain);
      return { id: f.id, positions: Array.from(positions), strain: Array.from(strain) };
    });
  }

  /**
   * Assembly analysis at the current time (Chrono ChAssemblyAnalysis semantics; see
   * src/engine/analysis/assembly.ts). The bodies are moved to the assembled state only when
   * `apply` is true; otherwise the state is restored afterwards.
   */
  assemble(options?: AssemblyOptionsIn, apply = false): AssemblyResultOut {
    const spec = AssemblyOptions.parse(options ?? {});
    const dense = denseOrderIssue(spec.solver, systemOrder(this.model));
    if (dense !== null) throw new ParameterError([{ path: ["solver"], message: dense }]);
    const before = cloneBodyState(this.system.state);
    // the angles' branches, which the analysis moves with the joints
    const turns = this.angles.map((q) => [q.turns, q.lastAngle]);
    // the bounds in effect (a limits input moves them)
    const limits = [...this.targets.limits.values()].map((b) => ({
      joint: b.joint,
      lower: b.lower,
      upper: b.upper,
    }));
    const result = assemblyResultOut(
      this.system,
      this.constraints,
      assemble(
        this.system,
        this.constraints,
        (t, out) => this.stepper.computeForces(t, out),
        this.record.time,
        spec,
        {
          contacts: this.contact?.nonsmooth?.touchingCount() ?? 0,
          coordinates: this.actuation.coordinates,
          limits,
        },
      ),
    );
    // not performed: nothing to apply (the state, its memory and the recording stay)
    if (result.exitFlag === "UNSUPPORTED_CONTACTS") return result;
    if (apply) {
      this.stateChanged();
      this.restartRecording(false);
    } else {
      this.restore(before);
      this.angles.forEach((q, i) => {
        [q.turns, q.lastAngle] = turns[i];
      });
    }
    return result;
  }

  /**
   * The joints and motors of the State, in the wire format: each constraint's reaction on
   * its body b (world; N, N·m about its attachment point on b) from the last solve's
   * multipliers, with the coordinate and rate of the joints that have one.
   */
  private jointStates(): StateOut["joints"] {
    const set = this.constraints;
    const force = new Float64Array(3);
    const torque = new Float64Array(3);
    return set.constraints.map((c, k) => {
      set.reaction(k, this.record.lambda, force, torque);
      const q = c.category === "joint" ? this.actuation.coordinates.get(c.id) : undefined;
      q?.evaluate();
      // the bounds a `limits` input moved (as actuators[].gains: absent while the model's)
      const bounds = c.category === "joint" ? this.targets.limits.get(c.id) : undefined;
      return {
        id: c.id,
        force: vec3(force, 0),
        torque: vec3(torque, 0),
        coordinates: q ? [q.value] : [],
        rates: q ? [q.rate] : [],
        limitEffort: q ? q.limitEffort : 0,
        ...(bounds?.moved ? { limits: { lower: bounds.lower, upper: bounds.upper } } : {}),
      };
    });
  }

  /** The contacts of the last step (a restored snapshot's until the next step); null: none. */
  private lastContacts(): ContactReport | null {
    if (this.restoredContacts !== null) return this.restoredContacts;
    if (!this.contact) return null;
    this.contact.report(this.contactReport);
    return this.contactReport;
  }

  /** The contacts of the State, in the wire format (bodies by id; see ContactReport). */
  private contactStates(): StateOut["contacts"] {
    const r = this.lastContacts();
    if (r === null) return [];
    const ids = this.system.ids;
    const name = (b: number) => (b < 0 ? "ground" : ids[b]);
    return Array.from({ length: r.count }, (_, i) => ({
      bodies: [name(r.bodyA[i]), name(r.bodyB[i])],
      point: vec3(r.point, 3 * i),
      normal: vec3(r.normal, 3 * i),
      gap: r.gap[i],
      normalForce: r.normalForce[i],
      tangentForce: vec3(r.tangentForce, 3 * i),
      impulse: vec3(r.impulse, 3 * i),
    }));
  }

  /** sha256 (hex) of the position, orientation, velocity and angular-velocity bytes. */
  stateHash(): string {
    return stateHash(this.record);
  }

  /**
   * Everything a continuation needs, JSON-safe and versioned (schemas/snapshot.ts): the
   * model, the parameters as patched and the state record (state.ts). loadSnapshot
   * (src/engine/index.ts) builds a Simulation from it whose next steps are bit-identical
   * to this one's.
   */
  snapshot(): SimulationSnapshotSpec {
    return withChecksum({
      format: "moreau.simulation",
      version: 1,
      model: this.model,
      parameters: this.parameters(),
      ...encodeState(this.captureState()),
    });
  }

  /** The parameters as patched (a copy): a snapshot's `parameters`. */
  private parameters(): SimulationSnapshotSpec["parameters"] {
    return {
      solver: { ...this.solverSpec },
      gravity: [...this.gravity],
      contact: this.contactSpec ? { ...this.contactSpec } : null,
    };
  }

  /**
   * Continues from a snapshot of a simulation of the same model (validated with
   * parseSnapshot). Throws SnapshotError, leaving this simulation as it was, when the
   * snapshot does not fit the model or its state does not match its hash.
   */
  restoreSnapshot(snap: SimulationSnapshotSpec): void {
    if (canonicalJson(snap.model) !== canonicalJson(this.model))
      throw new SnapshotError([
        { path: ["model"], message: "the snapshot is of another model than this simulation's" },
      ]);
    const state = decodeState(snap, {
      numBodies: this.system.numBodies,
      numDofs: this.system.numDofs,
      numRows: this.record.lambda.length,
      numBlocks: this.stepper.matrix.numBlocks,
    });
    // Parameters first: update() rebuilds the integrator and clears its memory.
    const p = snap.parameters;
    const patch: SimulationPatch = {};
    // settings the snapshot's solver leaves out are unset (patchSolver): one the model sets
    // that a PATCH dropped since (a switch of integrator and back: theta, newtonIterations)
    // must not come back with the model's value in place of the default that ran
    const solver = diffKeys(this.solverSpec, p.solver, true);
    if (solver) patch.solver = solver as Partial<SolverSpec>;
    if (canonicalJson(p.gravity) !== canonicalJson(this.gravity)) patch.gravity = [...p.gravity];
    if ((p.contact === null) !== (this.contactSpec === null))
      throw new SnapshotError([
        {
          path: ["parameters", "contact"],
          message: "contact must be null exactly when the model has none",
        },
      ]);
    if (p.contact && this.contactSpec) {
      const contact = diffKeys(this.contactSpec, p.contact);
      if (contact) patch.contact = contact as Partial<ContactSpec>;
    }
    try {
      if (patch.solver || patch.gravity || patch.contact) this.update(patch);
    } catch (err) {
      if (err instanceof ParameterError)
        throw new SnapshotError(underPath(["parameters"], err.issues));
      throw new SnapshotError([{ path: ["parameters"], message: (err as Error).message }]);
    }
    this.applyState(state);
  }

  /**
   * The state record of this simulation now, a copy, with the pieces the parts keep
   * (state.ts, CapturedState).
   */
  captureState(): CapturedState {
    const contact = this.contact;
    // the pattern first: it finalizes blocks reserved since the last factorization, after
    // which the solver's memory is of an older pattern (none: the next factor starts afresh)
    const matrixBlocks = reservedOffDiagonalBlocks(this.stepper.matrix);
    const factorization = this.stepper.saveSolverMemory();
    const krylov = this.stepper.saveKrylovMemory();
    // nonsmooth contact's report is its last solve's (compliant contact re-detects its own)
    const contacts = this.contact?.nonsmooth ? this.lastContacts() : null;
    const broadPhase = contact?.detector.broadPhaseMemory() ?? null;
    return {
      record: this.record.clone(),
      matrixBlocks,
      ...(contact && isMemoryExporter(contact) ? { contact: contact.exportMemory() } : {}),
      ...(broadPhase !== null ? { broadPhase } : {}),
      ...(factorization !== undefined ? { factorization } : {}),
      ...(krylov !== undefined ? { krylov } : {}),
      ...(contacts !== null && contacts.count > 0 ? { contacts: contacts.clone() } : {}),
      ...(this.lastH > 0 && this.model.sensors.some((s) => s.type === "bodyAcceleration")
        ? { previousVelocity: { h: this.lastH, velocity: this.good.bodies.vel.slice() } }
        : {}),
      ...(this.hasEfforts() ? { efforts: this.efforts() } : {}),
      ...(this.hasTurns()
        ? {
            turns: this.angles.map(
              (q) => [q.joint, q.turns, q.lastAngle] as [string, number, number],
            ),
          }
        : {}),
      ...(this.hasControls() ? { controls: this.controls() } : {}),
    };
  }

  /**
   * Puts a captured state of a simulation of this model (decodeState checked its sizes)
   * back: the next steps continue it bit for bit. Throws SnapshotError, before changing
   * anything, when its controls or turns name what this model lacks.
   */
  applyState(state: CapturedState): void {
    this.restoreControls(state);
    // before the copy: the integrator's reset invalidates the record's memory
    this.integrator.reset();
    const record = this.record;
    record.copyFrom(state.record);
    updateDerived(this.system);
    this.monitor.restoreReactions(record.lambda);
    if (Number.isNaN(record.energyReference)) this.monitor.rebase(this.totalEnergy());
    for (const [bi, bj] of state.matrixBlocks) this.stepper.matrix.addBlock(bi, bj);
    this.stepper.matrix.finalize();
    this.stepper.restoreSolverMemory(state.factorization);
    this.stepper.restoreKrylovMemory(state.krylov);
    const contact = this.contact;
    if (state.contact != null && contact && isMemoryExporter(contact))
      contact.importMemory(state.contact);
    // none saved: compliant friction's springs start unloaded (as the saved session's were)
    else contact?.compliant?.clearHistory();
    // none: a broad phase as new (taken before its first update, or an older snapshot)
    if (state.broadPhase !== undefined) contact?.detector.restoreBroadPhase(state.broadPhase);
    else contact?.detector.resetBroadPhase();
    // the bodyAcceleration sensors' previous step (the last good state is retaken by the
    // next step before anything else reads it)
    this.lastH = state.previousVelocity?.h ?? 0;
    if (state.previousVelocity) this.good.bodies.vel.set(state.previousVelocity.velocity);
    this.restoredContacts = state.contacts ?? null;
    this.restartRecording(false);
  }

  private hasEfforts(): boolean {
    for (const a of this.actuation.actuators) if (a.effort !== 0) return true;
    for (const q of this.actuation.coordinates.values()) if (q.limitEffort !== 0) return true;
    return false;
  }

  /**
   * Every actuator's gains ← `gains`' (by id), the model's where it names none (a reset, a
   * restored snapshot's controls); the solver re-reads the Jacobians when whether one has
   * them changed.
   */
  private setGains(gains: ReadonlyMap<string, ServoGains>): void {
    let changed = false;
    for (const a of this.targets.actuators.values())
      changed = a.setGains(gains.get(a.id) ?? a.modelGains) || changed;
    if (changed) this.stepper.effectorsChanged();
  }

  /** The actuators' and limits' reported efforts ← 0: no step taken since this state. */
  private zeroEfforts(): void {
    for (const a of this.actuation.actuators) a.effort = 0;
    for (const q of this.actuation.coordinates.values()) q.limitEffort = 0;
  }

  /** The last step's reported efforts (state.ts, CapturedState.efforts). */
  private efforts(): NonNullable<CapturedState["efforts"]> {
    return {
      actuators: this.actuation.actuators.map((a) => [a.id, a.effort] as [string, number]),
      limits: [...this.actuation.coordinates.values()].map(
        (q) => [q.joint, q.limitEffort] as [string, number],
      ),
    };
  }

  private hasTurns(): boolean {
    return this.angles.some((q) => q.turns !== 0 || q.lastAngle !== 0);
  }

  private hasControls(): boolean {
    if (this.pending.length > 0) return true;
    for (const a of this.targets.actuators.values())
      if (a.override !== null || a.gainsMoved) return true;
    for (const l of this.targets.loads.values()) if (l.override !== null) return true;
    for (const b of this.targets.limits.values()) if (b.moved) return true;
    return false;
  }

  /** The run-time commands in effect and the pending inputs (snapshot `controls`). */
  private controls(): Controls {
    const actuators: [string, number][] = [];
    for (const a of this.targets.actuators.values())
      if (a.override !== null) actuators.push([a.id, a.override]);
    const loads: [string, { force: [number, number, number]; torque: [number, number, number] }][] =
      [];
    for (const l of this.targets.loads.values())
      if (l.override !== null)
        loads.push([
          l.id,
          {
            force: [l.override.force[0], l.override.force[1], l.override.force[2]],
            torque: [l.override.torque[0], l.override.torque[1], l.override.torque[2]],
          },
        ]);
    const limits: [string, number, number][] = [];
    for (const b of this.targets.limits.values())
      if (b.moved) limits.push([b.joint, b.lower, b.upper]);
    const gains: [string, number, number, number | null][] = [];
    for (const a of this.targets.actuators.values()) {
      if (!a.gainsMoved) continue;
      const g = a.gains;
      gains.push([a.id, g.kp, g.kd, g.limit === Number.POSITIVE_INFINITY ? null : g.limit]);
    }
    return {
      actuators,
      loads,
      ...(limits.length > 0 ? { limits } : {}),
      ...(gains.length > 0 ? { gains } : {}),
      pending: this.pendingInputs(),
    };
  }

  /** Restores the state's controls and turns (checked: throws SnapshotError). */
  private restoreControls(state: CapturedState): void {
    const c = state.controls ?? { actuators: [], loads: [], pending: [] };
    const issues: { path: (string | number)[]; message: string }[] = [];
    c.actuators.forEach(([id], i) => {
      if (!this.targets.actuators.has(id))
        issues.push({ path: ["controls", "actuators", i, 0], message: `unknown actuator "${id}"` });
    });
    c.loads.forEach(([id], i) => {
      if (!this.targets.loads.has(id))
        issues.push({ path: ["controls", "loads", i, 0], message: `unknown pointForce "${id}"` });
    });
    c.limits?.forEach(([id, lower, upper], i) => {
      for (const issue of checkInput({ type: "limits", id, lower, upper }, this.targets))
        issues.push({
          path: ["controls", "limits", i, issue.path[0] === "id" ? 0 : 2],
          message: issue.message,
        });
    });
    c.gains?.forEach(([id, kp, kd], i) => {
      const a = this.targets.actuators.get(id);
      const path = ["controls", "gains", i];
      if (!a) {
        issues.push({ path: [...path, 0], message: `unknown actuator "${id}"` });
        return;
      }
      // (the schema keeps them non-negative, the limit positive)
      if (a.type !== "position" && kp !== 0)
        issues.push({ path: [...path, 1], message: `actuator "${id}" is ${a.type}: no k_p` });
      if (a.type === "torque" && kd !== 0)
        issues.push({ path: [...path, 2], message: `actuator "${id}" is torque: no rate gain` });
    });
    c.pending.forEach((p, i) => {
      if (p.step < state.record.step)
        issues.push({
          path: ["controls", "pending", i, "step"],
          message: "before the snapshot's step",
        });
      if ("input" in p)
        for (const issue of checkInput(p.input, this.targets))
          issues.push({
            path: ["controls", "pending", i, "input", ...issue.path],
            message: issue.message,
          });
    });
    const efforts = state.efforts ?? { actuators: [], limits: [] };
    const actuatorsById = new Map(this.actuation.actuators.map((a) => [a.id, a]));
    efforts.actuators.forEach(([id], i) => {
      if (!actuatorsById.has(id))
        issues.push({
          path: ["memory", "efforts", "actuators", i, 0],
          message: `unknown actuator "${id}"`,
        });
    });
    efforts.limits.forEach(([id], i) => {
      if (!this.actuation.coordinates.has(id))
        issues.push({
          path: ["memory", "efforts", "limits", i, 0],
          message: `no joint coordinate "${id}"`,
        });
    });
    const turns = state.turns ?? [];
    turns.forEach(([id], i) => {
      if (this.actuation.coordinates.get(id)?.kind !== "angle")
        issues.push({ path: ["memory", "turns", i, 0], message: `no revolute coordinate "${id}"` });
    });
    if (issues.length > 0) throw new SnapshotError(issues);
    for (const a of this.targets.actuators.values()) a.override = null;
    for (const l of this.targets.loads.values()) l.setLoad(null, state.record.time);
    for (const [id, v] of c.actuators)
      (this.targets.actuators.get(id) as JointActuator).override = v;
    for (const [id, v] of c.loads)
      this.targets.loads.get(id)?.setLoad({ force: v.force, torque: v.torque }, state.record.time);
    for (const b of this.targets.limits.values()) b.set(b.modelLower, b.modelUpper);
    for (const [id, lower, upper] of c.limits ?? []) this.targets.limits.get(id)?.set(lower, upper);
    this.setGains(
      new Map(
        (c.gains ?? []).map(([id, kp, kd, limit]) => [
          id,
          { kp, kd, limit: limit ?? Number.POSITIVE_INFINITY },
        ]),
      ),
    );
    this.pending = c.pending.map((p) => ({ ...p }));
    this.zeroEfforts();
    for (const q of this.actuation.coordinates.values()) {
      q.turns = 0;
      q.lastAngle = 0;
    }
    for (const [id, effort] of efforts.actuators)
      (actuatorsById.get(id) as JointActuator).effort = effort;
    for (const [id, effort] of efforts.limits)
      (this.actuation.coordinates.get(id) as JointCoordinate).limitEffort = effort;
    for (const [id, k, angle] of turns) {
      const q = this.actuation.coordinates.get(id);
      if (q) {
        q.turns = k;
        q.lastAngle = angle;
      }
    }
  }

  /** The scene frame's model part (schemas/api.ts SceneFrame): shapes, joints, fem surfaces. */
  scene(): SceneOut {
    return {
      bodies: this.model.bodies.map((b) => ({
        id: b.id,
        kind: b.kind,
        fixed: b.fixed,
        shapes: b.shapes,
      })),
      joints: this.model.joints.map((j) => ({ id: j.id, type: j.type, a: j.a, b: j.b })),
      fem: this.fem.map((f) => ({
        id: f.id,
        nodeCount: f.nodeCount,
        triangles: Array.from(f.surface.triangles),
      })),
    };
  }

  /**
   * The integrator of the current solver settings. Joint limits are nonsmooth (Moreau–Jean
   * impacts with restitution, JointLimitProblem) with the velocity-level schemes
   * (moreau-jean, backward-euler, symplectic-euler) and compliant (CompliantJointLimit)
   * with newmark and generalized-alpha; nonsmooth contact needs a velocity-level scheme.
   */
  private createIntegrator(): Integrator {
    const p = this.resolved;
    this.contact?.configure(p);
    for (const l of this.actuation.limits) l.enabled = !isVelocityLevel(p.integrator);
    const integrator = createIntegrator(
      p,
      this.stepper,
      {
        compliant: this.contact?.compliant ?? null,
        nonsmooth: this.contact?.nonsmooth ?? null,
        limits: this.limitProblem,
        compliantLimits: this.actuation.limits,
        springFrequency: this.springFrequency,
        networkFrequency: this.networkFrequency,
        femBodies: this.fem.length > 0,
        bodyLengths: this.bodyLengths,
        articulated: {
          tree: () => {
            // against the model pose, which the joints' axes and the motors refer to (the
            // state may be anywhere when a PATCH first chooses the integrator)
            this.tree ??= buildTree(
              this.system,
              this.model.joints,
              this.model.motors,
              this.initial,
            );
            return this.tree;
          },
          constraints: this.constraints,
          lambda: this.record.lambda,
          // the power of the dissipative forces and of compliant contact (with the contacts
          // its step detected), which the integrator integrates by its own stages (none
          // without: the balance's work is then zero); the motors' it takes from its own
          // joint efforts
          power: this.stepWork.dissipates ? (t: number) => this.stepWork.forcePower(t) : null,
          stored: this.stepWork.dissipates ? (t: number) => this.stepWork.storedEnergy(t) : null,
          angles: this.angles,
        },
      },
      this.record.integrator,
    );
    // a new scheme starts without memory (the record's may hold the previous scheme's)
    this.record.integrator.invalidate();
    // a split step's sub-steps weighed one by one in the energy balance
    integrator.substepObserver = this.stepWork;
    return integrator;
  }

  private findBlowUp(): string | null {
    const s = this.system;
    for (let b = 0; b < s.numBodies; b++) {
      for (let k = 0; k < 3; k++) {
        const x = s.pos[3 * b + k];
        const v = s.vel[3 * b + k];
        const w = s.omega[3 * b + k];
        if (!Number.isFinite(x) || !Number.isFinite(v) || !Number.isFinite(w))
          return `body "${s.ids[b]}" has a non-finite state`;
        if (
          Math.abs(x) > BLOW_UP_POSITION ||
          Math.abs(v) > BLOW_UP_VELOCITY ||
          Math.abs(w) > BLOW_UP_VELOCITY
        )
          return `body "${s.ids[b]}" blew up (|x| or |v| beyond 1e8)`;
      }
      if (!Number.isFinite(s.quat[4 * b])) return `body "${s.ids[b]}" has a non-finite orientation`;
    }
    // a fem element its material no longer models (St Venant–Kirchhoff crushed or inverted),
    // where the step's last halving left it (a longer step's end there is redone in halves:
    // acceleration-step.ts `solve`)
    return this.strainFault();
  }

  /** The first fem element its material no longer models (FemEffector.strainFault), or null. */
  private strainFault(): string | null {
    for (const f of this.fem) {
      const fault = f.strainFault();
      if (fault !== null) return fault;
    }
    return null;
  }

  /** Total energy (J), as state() sums it. */
  private totalEnergy(): number {
    return this.kineticEnergy() + potentialEnergy(this.effectors);
  }

  /** ½ vᵀ M v (J): the bodies' masses and the fem bodies' consistent masses. */
  private kineticEnergy(): number {
    let e = kineticEnergy(this.system);
    for (const f of this.fem) e += f.kineticCorrection();
    return e;
  }

  /**
   * energy.error after a step that dissipated `work` (J, not yet committed) when it is
   * beyond solver.energyDriftLimit (or not finite), else null.
   */
  private energyDrift(work: number): number | null {
    const limit = this.solverSpec.energyDriftLimit;
    if (limit == null) return null;
    const error = this.monitor.energyError(this.totalEnergy(), work);
    return Math.abs(error) <= limit ? null : error;
  }

  /**
   * Holds the state at the running step's start (see `held`; compliant friction's history
   * apart, held by step after its start's detection); allocates nothing.
   */
  private saveGood(): void {
    this.held.copyFrom(this.record);
    const actuators = this.actuation.actuators;
    const na = actuators.length;
    for (let i = 0; i < na; i++) this.heldEfforts[i] = actuators[i].effort;
    for (let i = 0; i < this.coordinates.length; i++)
      this.heldEfforts[na + i] = this.coordinates[i].limitEffort;
    for (let i = 0; i < this.angles.length; i++) {
      this.heldTurns[2 * i] = this.angles[i].turns;
      this.heldTurns[2 * i + 1] = this.angles[i].lastAngle;
    }
    this.stepper.holdSolverMemory();
    this.krylovHeld = this.stepper.saveKrylovMemory(this.heldKrylov) !== undefined;
    const contact = this.contact;
    if (contact) {
      this.broadPhaseHeld = contact.detector.broadPhaseMemory(this.heldBroadPhase) !== null;
      if (contact.nonsmooth) {
        contact.nonsmooth.holdMemory();
        // this state's contacts (lastContacts), reported straight into the held ones: not
        // built into contactReport and copied, every step (0.06 ms of each on S1-1000)
        const restored = this.restoredContacts;
        if (restored === null) contact.report(this.heldContacts);
        else this.heldContacts.copyFrom(restored);
      }
    }
  }

  /**
   * Undoes a failed step to what saveGood held, as applyState puts a captured state back:
   * the integrator reset (its own flags), then the record with its memory, so that the
   * next step continues as the last good step's successor would have.
   */
  private restoreGood(): void {
    this.integrator.reset();
    this.record.copyFrom(this.held);
    updateDerived(this.system);
    const actuators = this.actuation.actuators;
    const na = actuators.length;
    for (let i = 0; i < na; i++) actuators[i].effort = this.heldEfforts[i];
    for (let i = 0; i < this.coordinates.length; i++)
      this.coordinates[i].limitEffort = this.heldEfforts[na + i];
    for (let i = 0; i < this.angles.length; i++) {
      this.angles[i].turns = this.heldTurns[2 * i];
      this.angles[i].lastAngle = this.heldTurns[2 * i + 1];
    }
    this.stepper.restoreHeldSolverMemory();
    // (a failed step's mean force found an element inverted: not the restored state's)
    for (const f of this.fem) f.forgetMeanFault();
    if (this.krylovHeld) this.stepper.restoreKrylovMemory(this.heldKrylov);
    const contact = this.contact;
    if (contact) {
      if (this.broadPhaseHeld) contact.detector.restoreBroadPhase(this.heldBroadPhase);
      else contact.detector.resetBroadPhase();
      contact.compliant?.restoreHistory();
      if (contact.nonsmooth) {
        contact.nonsmooth.restoreHeldMemory();
        // reported as a restored snapshot's are, until the next step
        this.restoredContacts = this.heldContacts;
      }
    }
  }

  /** The bodies ← `from` (derived quantities refreshed). */
  private restore(from: BodyState): void {
    copyBodyState(this.record.bodies, from);
    updateDerived(this.system);
  }
}

/**
 * The entries of `to` whose JSON differs from `from`'s, or null when none does; with
 * `unset`, also those `from` sets and `to` leaves out, as undefined.
 */
function diffKeys(from: object, to: object, unset = false): Record<string, unknown> | null {
  const a = from as Record<string, unknown>;
  const b = to as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, v] of Object.entries(b)) {
    if (canonicalJson(v) !== canonicalJson(a[k])) {
      out[k] = v;
      any = true;
    }
  }
  if (unset)
    for (const [k, v] of Object.entries(a))
      if (v !== undefined && b[k] === undefined) {
        out[k] = undefined;
        any = true;
      }
  return any ? out : null;
}

/**
 * The path (below `path`) of the field of `x` holding the number of largest magnitude, a
 * field being a number or an array of numbers (or of such arrays: a convex shape's points);
 * `path` itself when there is none.
 */
function largestLeaf(
  x: unknown,
  path: (string | number)[],
): { path: (string | number)[]; value: number } {
  let best = { path, value: 0 };
  const magnitude = (y: unknown): number =>
    typeof y === "number"
      ? Math.abs(y)
      : Array.isArray(y) && y.length > 0
        ? y.reduce((most: number, z) => Math.max(most, magnitude(z)), 0)
        : Number.NaN;
  const visit = (y: unknown, at: (string | number)[]) => {
    const size = magnitude(y);
    if (!Number.isNaN(size)) {
      if (size > Math.abs(best.value)) best = { path: at, value: size };
      return;
    }
    if (Array.isArray(y)) for (const [k, z] of y.entries()) visit(z, [...at, k]);
    else if (typeof y === "object" && y !== null)
      for (const [k, z] of Object.entries(y)) visit(z, [...at, k]);
  };
  visit(x, path);
  return best;
}

/**
 * The gains in effect as the State reports them (ActuatorState.gains): the `gains` input's
 * fields the actuator's type has, so that a client can send back what it reads.
 */
function wireGains(a: JointActuator): NonNullable<StateOut["actuators"][number]["gains"]> {
  const effortLimit = a.limit === Number.POSITIVE_INFINITY ? null : a.limit;
  switch (a.type) {
    case "position":
      return { kp: a.kp, kd: a.kd, effortLimit };
    case "velocity":
      return { kv: a.kd, effortLimit };
    case "torque":
      return { effortLimit };
  }
}

/** What inputs at a boundary placed (stateChanged): a pose ("all"), joints' bounds, nothing. */
type Placed = "all" | ReadonlySet<string> | null;

function vec3(a: Float64Array, i: number): [number, number, number] {
  return [a[i], a[i + 1], a[i + 2]];
}
