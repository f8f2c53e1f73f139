/**
 * The state of one simulation: everything that changes as it runs, in one record
 * (SimulationState) that the Simulation creates once and whose arrays its parts step in
 * place:
 *  - the body arrays (positions, unit quaternions, velocities, angular velocities): the
 *    BodySystem's state, which the record takes as its bodies (the system's pos, quat,
 *    vel, omega, model/body-system.ts);
 *  - the joint multipliers of the last solve: the stepper is handed the array (its lambda;
 *    they are the reported joint reactions, and the previous step's reactions that
 *    solver.reactionChange compares with);
 *  - the integrator memory (Newmark's a_t and a_{t−h}, generalized-α's A_n, a_n and mean
 *    acceleration, and their validity): handed to the integrator of the current settings;
 *  - time and step, and the last step's solver figures: written by Simulation.step;
 *  - the energy reference of energy.error and the last reactionChange: written by the
 *    StepMonitor (monitor.ts).
 * Derived quantities (rotation matrices, world inertias) are not in it: they are
 * recomputed from the quaternions, as every step does.
 *
 * Simulation.captureState copies the record (SimulationState.clone) and adds the pieces
 * that stay with the part that uses them (CapturedState); Simulation.applyState copies
 * them back; encodeState / decodeState convert a capture to and from the snapshot's JSON
 * form (schemas/snapshot.ts). What a snapshot saves is exactly this (with the model and
 * the parameters as patched). The pieces kept elsewhere, and why:
 *  - the solve matrix's block pattern: compliant contact reserves blocks as contacts come
 *    and never releases them, and the pattern fixes the fill-reducing ordering of the
 *    sparse factorizations, hence their rounding. It is the matrix's structure (its CSR
 *    pattern), not an array of values; the capture lists its off-diagonal blocks;
 *  - the contact module's memory (nonsmooth contact's warm-start impulses, compliant
 *    friction's tangential displacements, by contact key): a table whose size
 *    follows the contacts of the step, owned and exported by the contact module as typed
 *    arrays (model/state-codec.ts ContactMemory), which encodeState writes for the wire
 *    like the record's own;
 *  - `auto`'s factored CG on fem nodes: the block LDLᵀ factorization it reuses across
 *    steps, saved as the matrix it was computed from (refactored on restore), and the work
 *    counted against the next one (solvers/linear/factored-pcg.ts): the solver's own,
 *    sized by the pattern, absent on the other paths;
 *  - the matrix-free CG's choice of preconditioner for the next step and the last step's
 *    hardest solve it follows from (integrators/iteration-matrix.ts KrylovMemory): the
 *    iteration matrix's, absent off that path (the preconditioners themselves are made
 *    again from the step's W);
 *  - the revolute coordinates' turn counters (angles unwrapped across ±π): each
 *    coordinate's, which its evaluation reads and updates (constraints/joint-coordinate.ts);
 *  - the last step's contacts as the State reports them with nonsmooth contact: the
 *    report of its last solve (contact/report.ts), which no later step reads, but the
 *    State reports until the next step (compliant contact re-detects its contacts at the
 *    state whenever it reports them: nothing to save);
 *  - the velocities at the start of the last step and its length, which bodyAcceleration
 *    sensors difference with: the Simulation's last good state (a failed step is undone to
 *    it), saved with such sensors only;
 *  - the last step's reported efforts (actuators' effort, joints' limitEffort): each
 *    actuator's and coordinate's, computed in the step; no later step reads them, but the
 *    State reports them until the next step, so a restored simulation reports what the
 *    original did;
 *  - the run-time inputs in effect and those pending for later steps: the commands are the
 *    actuators' and point forces' own, the queue is the Simulation's schedule (JSON inputs,
 *    not numbers of the dynamics).
 * Copies kept outside the record, and why: the Simulation's last good state (a failed
 * step is undone to it: a copy of the record with the efforts, turn counters, broad-phase
 * memory, the contact module's memory and nonsmooth contact's report the step rewrites,
 * Simulation.saveGood) and its
 * initial bodies (reset); the positions at the step's start in the stepper and the
 * velocities in the integrators (vt), which a halved step restarts from. None is saved:
 * the start-of-step copies are retaken by every step and the initial bodies are the
 * model's (the last good velocities are saved when bodyAcceleration sensors read them,
 * above).
 *
 * A continuation is bit-identical only if every value that a later step reads is restored
 * exactly: float64 arrays travel as their bytes (a decimal round trip would be exact for
 * finite doubles but loses the sign of −0).
 */
import type { SimulationSnapshotSpec } from "../../../schemas/snapshot";
import { ContactReport } from "../contact/report";
import type { BroadPhaseMemory } from "../geometry/broadphase";
import {
  emptyStepStats,
  IntegratorMemory,
  resetStepStats,
  type StepStats,
} from "../integrators/integrator";
import type { KrylovMemory } from "../integrators/iteration-matrix";
import { BodyState, cloneBodyState, copyBodyState } from "../model/body-system";
import {
  type ContactMemory,
  decodeFloat64,
  encodeFloat64,
  hashFloat64,
  SnapshotError,
} from "../model/state-codec";
import { type FactorizationMemory, packedBlockCount } from "../solvers/linear/factored-pcg";
import { finiteOrNull } from "./snapshot";

type Memory = SimulationSnapshotSpec["memory"];
/** Run-time inputs in effect and pending (the snapshot's `controls`). */
export type Controls = NonNullable<SimulationSnapshotSpec["controls"]>;

/**
 * The record of everything that changes as a simulation runs (see the file comment). A
 * class assigning each field in the constructor, for V8 (see BodySystem).
 */
export class SimulationState {
  /** Simulated time (s) and steps taken. */
  time: number;
  step: number;
  /** Body arrays in BodySystem's layout (world frame: m, [w, x, y, z], m/s, rad/s). */
  readonly bodies: BodyState;
  /** Joint and motor multipliers of the last solve (N, N·m), one per row. */
  readonly lambda: Float64Array;
  /** The integrator's step memory (see IntegratorMemory). */
  readonly integrator: IntegratorMemory;
  /** The last good step's solver figures. */
  readonly stats: StepStats;
  /** The monitor's solver.reactionChange of the last step (N, N·m). */
  reactionChange: number;
  /** Total energy (J) energy.error is measured from (NaN: not taken yet). */
  energyReference: number;
  /** energy.dissipated (J) since that reference (monitor.ts). */
  energyDissipated: number;

  /** A record at t = 0 on the given body arrays, with `numRows` multipliers. */
  constructor(bodies: BodyState, numDofs: number, numRows: number) {
    this.time = 0;
    this.step = 0;
    this.bodies = bodies;
    this.lambda = new Float64Array(numRows);
    this.integrator = new IntegratorMemory(numDofs);
    this.stats = emptyStepStats();
    this.reactionChange = 0;
    this.energyReference = Number.NaN;
    this.energyDissipated = 0;
  }

  /** A record of the sizes given, at t = 0 with zero arrays (decodeState fills it). */
  static ofSizes(sizes: StateSizes): SimulationState {
    return new SimulationState(new BodyState(sizes.numBodies), sizes.numDofs, sizes.numRows);
  }

  /** A deep copy (new arrays). */
  clone(): SimulationState {
    const copy = new SimulationState(
      cloneBodyState(this.bodies),
      this.integrator.acceleration.length,
      this.lambda.length,
    );
    copy.copyFrom(this);
    return copy;
  }

  /** this ← from, in place (a record of the same sizes). */
  copyFrom(from: SimulationState): void {
    this.time = from.time;
    this.step = from.step;
    copyBodyState(this.bodies, from.bodies);
    this.lambda.set(from.lambda);
    this.integrator.copyFrom(from.integrator);
    Object.assign(this.stats, from.stats);
    this.reactionChange = from.reactionChange;
    this.energyReference = from.energyReference;
    this.energyDissipated = from.energyDissipated;
  }

  /** Back to t = 0 with the bodies as they are: no step taken, no memory, no multipliers. */
  restart(): void {
    this.time = 0;
    this.step = 0;
    this.lambda.fill(0);
    this.integrator.invalidate();
    resetStepStats(this.stats);
    this.reactionChange = 0;
  }
}

/**
 * A copy of the record with the pieces that stay with the parts using them (see the file
 * comment): what Simulation.captureState returns and applyState takes.
 */
export interface CapturedState {
  record: SimulationState;
  /** Off-diagonal blocks (bi, bj) reserved in the solve matrix. */
  matrixBlocks: [number, number][];
  /**
   * The contact module's memory (model/state-codec.ts ContactMemory): nonsmooth contact's
   * warm-start impulses, compliant contact's friction history (null without friction),
   * absent without a contact module.
   */
  contact?: ContactMemory | null;
  /**
   * The contact detector's sweep axis and updates since its choice
   * (geometry/broadphase.ts), absent without contact (and in older snapshots: chosen anew).
   */
  broadPhase?: BroadPhaseMemory;
  /** The factored-PCG solver's memory, absent off that path or before its first factor. */
  factorization?: FactorizationMemory;
  /** The matrix-free CG's memory (iteration-matrix.ts KrylovMemory), absent off that path. */
  krylov?: KrylovMemory;
  /**
   * The last step's reported efforts, [actuator id, N·m or N] and [joint id, limit effort]:
   * what State reports until the next step (kept by the actuators and joint coordinates,
   * which compute them in the step); absent: all 0.
   */
  efforts?: { actuators: [string, number][]; limits: [string, number][] };
  /**
   * The last step's contacts as the State reports them (contact/report.ts), kept by the
   * nonsmooth contact module; absent: none.
   */
  contacts?: ContactReport;
  /**
   * The body velocities at the start of the last step (m/s, 3 per body) and its length h
   * (s): what bodyAcceleration sensors difference with (sensors.ts); kept by the Simulation
   * as its last good state, saved only when the model has such a sensor; absent: none.
   */
  previousVelocity?: { h: number; velocity: Float64Array };
  /** [joint id, whole turns, last wrapped angle (rad)]; absent: all 0. */
  turns?: [string, number, number][];
  /** Absent: none. */
  controls?: Controls;
}

/** The sizes a state must have to fit a simulation. */
export interface StateSizes {
  numBodies: number;
  numDofs: number;
  /** joint and motor rows */
  numRows: number;
  /** solve-matrix blocks (one per dynamic body) */
  numBlocks: number;
}

/** sha256 (hex) of the position, orientation, velocity and angular-velocity bytes. */
export function stateHash(s: SimulationState): string {
  const { pos, quat, vel, omega } = s.bodies;
  return hashFloat64([pos, quat, vel, omega]);
}

/**
 * The capture's part of a snapshot document (exact: float64 arrays as their bytes). The
 * integrator's arrays go in only while valid (IntegratorMemory: an integrator without
 * memory never makes them so).
 */
export function encodeState(
  c: CapturedState,
): Pick<SimulationSnapshotSpec, "time" | "step" | "state" | "memory" | "controls" | "hash"> {
  const s = c.record;
  const m = s.integrator;
  const { pos, quat, vel, omega } = s.bodies;
  return {
    time: s.time,
    step: s.step,
    state: {
      position: encodeFloat64(pos),
      orientation: encodeFloat64(quat),
      velocity: encodeFloat64(vel),
      angularVelocity: encodeFloat64(omega),
    },
    memory: {
      integrator: {
        ...(m.accelerationValid ? { acceleration: encodeFloat64(m.acceleration) } : {}),
        ...(m.previousValid ? { previousAcceleration: encodeFloat64(m.previousAcceleration) } : {}),
        ...(m.pseudoValid ? { pseudoAcceleration: encodeFloat64(m.pseudoAcceleration) } : {}),
        // with the dissipative forces' share of its lag (step-work.ts), where it has one
        ...(m.pseudoValid && m.dissipativeLag.some((x) => x !== 0)
          ? { dissipativeLag: encodeFloat64(m.dissipativeLag) }
          : {}),
        accelerationValid: m.accelerationValid,
        // generalized-α's sub-step controller, when it is not at its start
        ...(m.substepDepth !== 0 || m.substepWait !== 0 || m.substepBackoff !== 1
          ? { substeps: { depth: m.substepDepth, wait: m.substepWait, backoff: m.substepBackoff } }
          : {}),
        // the articulated integrator's sub-step length, once it has one (symplectic
        // Euler's last)
        ...(m.substepSize > 0 ? { substepSize: m.substepSize } : {}),
        // and its stiffness estimate, which bounds the sub-steps
        ...(m.stiffness > 0 ? { stiffness: m.stiffness } : {}),
        // the θ-schemes' consistent start, once made
        ...(m.started ? { started: true } : {}),
        // moreau-jean: λ is the last step's mean joint force
        ...(m.lambdaMean ? { lambdaMean: true } : {}),
      },
      lambda: encodeFloat64(s.lambda),
      stats: {
        ...s.stats,
        contactResidual: finiteOrNull(s.stats.contactResidual),
        reactionChange: s.reactionChange,
      },
      energyReference: s.energyReference,
      energyDissipated: s.energyDissipated,
      matrixBlocks: c.matrixBlocks,
      ...(c.contact !== undefined ? { contact: encodeContactMemory(c.contact) } : {}),
      ...(c.factorization !== undefined
        ? {
            factorization: {
              mode: c.factorization.mode,
              wasted: c.factorization.wasted,
              ...(c.factorization.matrix ? { matrix: encodeFloat64(c.factorization.matrix) } : {}),
            },
          }
        : {}),
      ...(c.krylov !== undefined ? { krylov: { ...c.krylov } } : {}),
      ...(c.broadPhase !== undefined ? { broadPhase: { ...c.broadPhase } } : {}),
      ...(c.contacts !== undefined ? { contactReport: encodeContactReport(c.contacts) } : {}),
      ...(c.previousVelocity !== undefined
        ? {
            previousVelocity: {
              h: c.previousVelocity.h,
              velocity: encodeFloat64(c.previousVelocity.velocity),
            },
          }
        : {}),
      ...(c.efforts !== undefined ? { efforts: c.efforts } : {}),
      ...(c.turns !== undefined ? { turns: c.turns } : {}),
    },
    ...(c.controls !== undefined ? { controls: c.controls } : {}),
    hash: stateHash(s),
  };
}

/**
 * The capture of a validated snapshot document, checked against the sizes of the
 * simulation it is for: array lengths, the state hash, finite body values, block indices.
 * Throws SnapshotError at the offending path. `energyReference` is NaN when the document
 * has none (older snapshots: the caller takes the restored state's energy).
 */
export function decodeState(snap: SimulationSnapshotSpec, sizes: StateSizes): CapturedState {
  const n = sizes.numBodies;
  const s = SimulationState.ofSizes(sizes);
  const st = snap.state;
  const { pos, quat, vel, omega } = s.bodies;
  pos.set(decodeFloat64(st.position, 3 * n, ["state", "position"]));
  quat.set(decodeFloat64(st.orientation, 4 * n, ["state", "orientation"]));
  vel.set(decodeFloat64(st.velocity, 3 * n, ["state", "velocity"]));
  omega.set(decodeFloat64(st.angularVelocity, 3 * n, ["state", "angularVelocity"]));
  if (stateHash(s) !== snap.hash)
    throw new SnapshotError([
      { path: ["hash"], message: "the state arrays do not match the snapshot's hash" },
    ]);
  for (const [name, a] of [
    ["position", pos],
    ["orientation", quat],
    ["velocity", vel],
    ["angularVelocity", omega],
  ] as const)
    if (!a.every(Number.isFinite))
      throw new SnapshotError([{ path: ["state", name], message: "non-finite value" }]);
  const mem = snap.memory;
  const m = s.integrator;
  /** Decodes the named memory array into the record's; false when the document has none. */
  const vector = (
    name: "acceleration" | "previousAcceleration" | "pseudoAcceleration" | "dissipativeLag",
  ) => {
    const encoded = mem.integrator[name];
    if (encoded === undefined) return false;
    m[name].set(decodeFloat64(encoded, sizes.numDofs, ["memory", "integrator", name]));
    return true;
  };
  // older documents wrote a_t whatever its validity, which accelerationValid tells
  const valid = mem.integrator.accelerationValid === true;
  m.accelerationValid = vector("acceleration") && valid;
  m.pseudoValid = vector("pseudoAcceleration") && valid;
  // an older document, or a lag of 0: none
  if (!vector("dissipativeLag")) m.dissipativeLag.fill(0);
  m.previousValid = vector("previousAcceleration");
  const substeps = mem.integrator.substeps;
  m.substepDepth = substeps?.depth ?? 0;
  m.substepWait = substeps?.wait ?? 0;
  m.substepBackoff = substeps?.backoff ?? 1;
  m.substepSize = mem.integrator.substepSize ?? 0;
  m.stiffness = mem.integrator.stiffness ?? 0;
  m.started = mem.integrator.started === true;
  m.lambdaMean = mem.integrator.lambdaMean === true;
  s.lambda.set(decodeFloat64(mem.lambda, sizes.numRows, ["memory", "lambda"]));
  const nb = sizes.numBlocks;
  mem.matrixBlocks.forEach(([bi, bj], k) => {
    if (bi >= nb || bj >= nb)
      throw new SnapshotError([
        { path: ["memory", "matrixBlocks", k], message: `block index beyond ${nb - 1}` },
      ]);
  });
  const factorization = decodeFactorization(mem.factorization, mem.matrixBlocks, nb);
  const { reactionChange, ...saved } = mem.stats;
  const stats: StepStats = {
    ...saved,
    newtonConverged: saved.newtonConverged ?? true,
    contactResidual: saved.contactResidual ?? Number.NaN,
    contactConverged: saved.contactConverged ?? true,
    penetration: saved.penetration ?? 0,
    projectionConverged: saved.projectionConverged ?? true,
    substeps: saved.substeps ?? 1,
    stepError: saved.stepError ?? 0,
    stepToleranceMet: saved.stepToleranceMet ?? true,
    jointToleranceMet: saved.jointToleranceMet ?? true,
    impacts: saved.impacts ?? 0,
    impactsResolved: saved.impactsResolved ?? true,
  };
  Object.assign(s.stats, stats);
  s.time = snap.time;
  s.step = snap.step;
  s.reactionChange = reactionChange ?? 0;
  s.energyReference = mem.energyReference ?? Number.NaN;
  s.energyDissipated = mem.energyDissipated ?? 0;
  return {
    record: s,
    matrixBlocks: mem.matrixBlocks,
    ...(mem.contact !== undefined
      ? { contact: decodeContactMemory(mem.contact, sizes.numBodies) }
      : {}),
    ...(factorization !== undefined ? { factorization } : {}),
    ...(mem.krylov !== undefined ? { krylov: { ...mem.krylov } } : {}),
    ...(mem.broadPhase !== undefined ? { broadPhase: { ...mem.broadPhase } } : {}),
    ...(mem.contactReport !== undefined
      ? { contacts: decodeContactReport(mem.contactReport, sizes.numBodies) }
      : {}),
    ...(mem.previousVelocity !== undefined
      ? {
          previousVelocity: {
            h: mem.previousVelocity.h,
            velocity: decodeFloat64(mem.previousVelocity.velocity, 3 * sizes.numBodies, [
              "memory",
              "previousVelocity",
              "velocity",
            ]),
          },
        }
      : {}),
    ...(mem.efforts !== undefined ? { efforts: mem.efforts } : {}),
    ...(mem.turns !== undefined ? { turns: mem.turns } : {}),
    ...(snap.controls !== undefined ? { controls: snap.controls } : {}),
  };
}

/**
 * The factored-PCG memory of a snapshot: `matrix` present exactly in mode "factored", with
 * the length its packing gives the restored pattern (factored-pcg.ts packSymmetric: 9
 * values for each diagonal block, each mirrored pair of off-diagonal blocks and each
 * unmirrored one; every block is 3×3 on that path).
 */
function decodeFactorization(
  f: Memory["factorization"],
  blocks: readonly (readonly [number, number])[],
  numBlocks: number,
): FactorizationMemory | undefined {
  if (f === undefined) return undefined;
  const path = ["memory", "factorization", "matrix"];
  if ((f.matrix !== undefined) !== (f.mode === "factored"))
    throw new SnapshotError([
      { path, message: `present exactly when mode is "factored" (mode: "${f.mode}")` },
    ]);
  if (f.matrix === undefined) return { mode: f.mode, wasted: f.wasted };
  const length = 9 * packedBlockCount(numBlocks, blocks);
  return { mode: f.mode, wasted: f.wasted, matrix: decodeFloat64(f.matrix, length, path) };
}

/** The contact memory's wire form: float64 arrays as their bytes, body indices as numbers. */
function encodeContactMemory(m: ContactMemory | null): Memory["contact"] {
  if (m === null) return null;
  return {
    count: m.count,
    key: encodeFloat64(m.key),
    bodyA: Array.from(m.bodyA),
    bodyB: Array.from(m.bodyB),
    impulse: encodeFloat64(m.impulse),
    point: encodeFloat64(m.point),
    ...(m.slip !== undefined ? { slip: encodeFloat64(m.slip) } : {}),
    ...(m.projection !== undefined
      ? {
          projection: {
            count: m.projection.count,
            key: encodeFloat64(m.projection.key),
            mu: encodeFloat64(m.projection.mu),
            ...(m.projection.lifted !== undefined
              ? {
                  lifted: {
                    count: m.projection.lifted.count,
                    key: encodeFloat64(m.projection.lifted.key),
                    lift: encodeFloat64(m.projection.lifted.lift),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

/**
 * The contact memory of a validated snapshot, its arrays checked against its counts and
 * its body indices against the model's (SnapshotError at the offending path).
 */
function decodeContactMemory(m: Memory["contact"], numBodies: number): ContactMemory | null {
  if (m === null || m === undefined) return null;
  const n = m.count;
  const path = ["memory", "contact"];
  const bodies = (list: number[], name: string) => bodyIndices(list, n, numBodies, [...path, name]);
  const p = m.projection;
  return {
    count: n,
    key: decodeFloat64(m.key, n, [...path, "key"]),
    bodyA: bodies(m.bodyA, "bodyA"),
    bodyB: bodies(m.bodyB, "bodyB"),
    impulse: decodeFloat64(m.impulse, 3 * n, [...path, "impulse"]),
    point: decodeFloat64(m.point, 3 * n, [...path, "point"]),
    ...(m.slip !== undefined ? { slip: decodeFloat64(m.slip, 4 * n, [...path, "slip"]) } : {}),
    ...(p !== undefined
      ? {
          projection: {
            count: p.count,
            key: decodeFloat64(p.key, p.count, [...path, "projection", "key"]),
            mu: decodeFloat64(p.mu, p.count, [...path, "projection", "mu"]),
            ...(p.lifted !== undefined
              ? {
                  lifted: {
                    count: p.lifted.count,
                    key: decodeFloat64(p.lifted.key, p.lifted.count, [
                      ...path,
                      "projection",
                      "lifted",
                      "key",
                    ]),
                    lift: decodeFloat64(p.lifted.lift, p.lifted.count, [
                      ...path,
                      "projection",
                      "lifted",
                      "lift",
                    ]),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}

/** Body indices of a snapshot checked against the model: n of them, each −1 ≤ b < numBodies. */
function bodyIndices(list: number[], n: number, numBodies: number, path: string[]): Int32Array {
  if (list.length !== n)
    throw new SnapshotError([{ path, message: `expected ${n} body indices, got ${list.length}` }]);
  const bad = list.findIndex((b) => b >= numBodies);
  if (bad >= 0)
    throw new SnapshotError([
      { path: [...path, bad], message: `body index ${list[bad]} out of range` },
    ]);
  return Int32Array.from(list);
}

/** The contact report's wire form (float64 arrays as their bytes). */
function encodeContactReport(r: ContactReport): NonNullable<Memory["contactReport"]> {
  return {
    count: r.count,
    bodyA: Array.from(r.bodyA),
    bodyB: Array.from(r.bodyB),
    point: encodeFloat64(r.point),
    normal: encodeFloat64(r.normal),
    gap: encodeFloat64(r.gap),
    normalForce: encodeFloat64(r.normalForce),
    tangentForce: encodeFloat64(r.tangentForce),
    impulse: encodeFloat64(r.impulse),
  };
}

/** The contact report of a validated snapshot, checked (SnapshotError at its paths). */
function decodeContactReport(
  m: NonNullable<Memory["contactReport"]>,
  numBodies: number,
): ContactReport {
  const n = m.count;
  const path = ["memory", "contactReport"];
  const r = new ContactReport();
  r.count = n;
  r.bodyA = bodyIndices(m.bodyA, n, numBodies, [...path, "bodyA"]);
  r.bodyB = bodyIndices(m.bodyB, n, numBodies, [...path, "bodyB"]);
  r.point = decodeFloat64(m.point, 3 * n, [...path, "point"]);
  r.normal = decodeFloat64(m.normal, 3 * n, [...path, "normal"]);
  r.gap = decodeFloat64(m.gap, n, [...path, "gap"]);
  r.normalForce = decodeFloat64(m.normalForce, n, [...path, "normalForce"]);
  r.tangentForce = decodeFloat64(m.tangentForce, 3 * n, [...path, "tangentForce"]);
  r.impulse = decodeFloat64(m.impulse, 3 * n, [...path, "impulse"]);
  return r;
}
