/**
 * The state of one simulation: everything that changes as it runs, as one record. What a
 * snapshot saves is exactly this record (with the model and the parameters as patched);
 * Simulation.captureState fills it from the parts that step it, Simulation.applyState puts
 * it back, and encodeState / decodeState convert it to and from the snapshot's JSON form
 * (schemas/snapshot.ts).
 *
 * Why each piece is there — a continuation is bit-identical only if every value that a
 * later step reads is restored exactly:
 *  - the body arrays (positions, unit quaternions, velocities), as their bytes: a decimal
 *    round trip would be exact for finite doubles but loses the sign of −0;
 *  - time and step;
 *  - integrator memory (Newmark's a_t and its validity, Integrator.saveMemory);
 *  - the joint multipliers of the last solve (they are the reported joint reactions, and
 *    the previous step's reactions that solver.reactionChange compares with);
 *  - the energy reference of energy.error and the last reactionChange (monitor.ts);
 *  - the solve matrix's block pattern: compliant contact reserves blocks as contacts come
 *    and never releases them, and the pattern fixes the fill-reducing ordering of the
 *    sparse factorizations, hence their rounding;
 *  - the contact module's warm-start memory (impulses by contact key);
 *  - `auto`'s factored CG on fem nodes: the block LDLᵀ factorization it reuses across
 *    steps, as the matrix it was computed from (refactored on restore), and the work
 *    counted against the next one (solvers/linear/factored-pcg.ts);
 *  - the revolute coordinates' turn counters (angles unwrapped across ±π);
 *  - the run-time inputs in effect and those pending for later steps.
 * Derived quantities (rotation matrices, world inertias) are recomputed from the
 * quaternions, as every step does.
 */
import type { SimulationSnapshotSpec } from "../../../schemas/snapshot";
import type { IntegratorMemory, StepStats } from "../integrators/integrator";
import { decodeFloat64, encodeFloat64, hashFloat64, SnapshotError } from "../model/state-codec";
import { type FactorizationMemory, packedBlockCount } from "../solvers/linear/factored-pcg";
import { finiteOrNull } from "./snapshot";

type Memory = SimulationSnapshotSpec["memory"];
/** Run-time inputs in effect and pending (the snapshot's `controls`). */
export type Controls = NonNullable<SimulationSnapshotSpec["controls"]>;

export interface SimulationState {
  /** Simulated time (s) and steps taken. */
  time: number;
  step: number;
  /** Body arrays in BodySystem's layout (world frame: m, [w, x, y, z], m/s, rad/s). */
  position: Float64Array;
  orientation: Float64Array;
  velocity: Float64Array;
  angularVelocity: Float64Array;
  /** The integrator's step memory (see IntegratorMemory). */
  integrator: IntegratorMemory;
  /** Joint multipliers of the last solve (N, N·m). */
  lambda: Float64Array;
  /** The last step's solver figures, and the monitor's solver.reactionChange. */
  stats: StepStats;
  reactionChange: number;
  /** Total energy (J) energy.error is measured from. */
  energyReference: number;
  /** Off-diagonal blocks (bi, bj) reserved in the solve matrix. */
  matrixBlocks: [number, number][];
  /** The contact module's warm-start memory (JSON-safe), absent without one. */
  contact?: Memory["contact"];
  /** The factored-PCG solver's memory, absent off that path or before its first factor. */
  factorization?: FactorizationMemory;
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
  return hashFloat64([s.position, s.orientation, s.velocity, s.angularVelocity]);
}

/** The state's part of a snapshot document (exact: float64 arrays as their bytes). */
export function encodeState(
  s: SimulationState,
): Pick<SimulationSnapshotSpec, "time" | "step" | "state" | "memory" | "controls" | "hash"> {
  const m = s.integrator;
  return {
    time: s.time,
    step: s.step,
    state: {
      position: encodeFloat64(s.position),
      orientation: encodeFloat64(s.orientation),
      velocity: encodeFloat64(s.velocity),
      angularVelocity: encodeFloat64(s.angularVelocity),
    },
    memory: {
      integrator: {
        ...(m.acceleration ? { acceleration: encodeFloat64(m.acceleration) } : {}),
        ...(m.previousAcceleration
          ? { previousAcceleration: encodeFloat64(m.previousAcceleration) }
          : {}),
        ...(m.pseudoAcceleration
          ? { pseudoAcceleration: encodeFloat64(m.pseudoAcceleration) }
          : {}),
        ...(m.accelerationValid !== undefined ? { accelerationValid: m.accelerationValid } : {}),
      },
      lambda: encodeFloat64(s.lambda),
      stats: {
        ...s.stats,
        contactResidual: finiteOrNull(s.stats.contactResidual),
        reactionChange: s.reactionChange,
      },
      energyReference: s.energyReference,
      matrixBlocks: s.matrixBlocks,
      ...(s.contact !== undefined ? { contact: s.contact } : {}),
      ...(s.factorization !== undefined
        ? {
            factorization: {
              mode: s.factorization.mode,
              wasted: s.factorization.wasted,
              ...(s.factorization.matrix ? { matrix: encodeFloat64(s.factorization.matrix) } : {}),
            },
          }
        : {}),
      ...(s.turns !== undefined ? { turns: s.turns } : {}),
    },
    ...(s.controls !== undefined ? { controls: s.controls } : {}),
    hash: stateHash(s),
  };
}

/**
 * The state of a validated snapshot document, checked against the sizes of the simulation
 * it is for: array lengths, the state hash, finite body values, block indices. Throws
 * SnapshotError at the offending path. `energyReference` is NaN when the document has none
 * (older snapshots: the caller takes the restored state's energy).
 */
export function decodeState(snap: SimulationSnapshotSpec, sizes: StateSizes): SimulationState {
  const n = sizes.numBodies;
  const st = snap.state;
  const position = decodeFloat64(st.position, 3 * n, ["state", "position"]);
  const orientation = decodeFloat64(st.orientation, 4 * n, ["state", "orientation"]);
  const velocity = decodeFloat64(st.velocity, 3 * n, ["state", "velocity"]);
  const angularVelocity = decodeFloat64(st.angularVelocity, 3 * n, ["state", "angularVelocity"]);
  if (hashFloat64([position, orientation, velocity, angularVelocity]) !== snap.hash)
    throw new SnapshotError([
      { path: ["hash"], message: "the state arrays do not match the snapshot's hash" },
    ]);
  for (const [name, a] of [
    ["position", position],
    ["orientation", orientation],
    ["velocity", velocity],
    ["angularVelocity", angularVelocity],
  ] as const)
    if (!a.every(Number.isFinite))
      throw new SnapshotError([{ path: ["state", name], message: "non-finite value" }]);
  const mem = snap.memory;
  const vector = (name: "acceleration" | "previousAcceleration" | "pseudoAcceleration") => {
    const encoded = mem.integrator[name];
    return encoded !== undefined
      ? decodeFloat64(encoded, sizes.numDofs, ["memory", "integrator", name])
      : undefined;
  };
  const integrator: IntegratorMemory = {
    acceleration: vector("acceleration"),
    previousAcceleration: vector("previousAcceleration"),
    pseudoAcceleration: vector("pseudoAcceleration"),
    accelerationValid: mem.integrator.accelerationValid,
  };
  const lambda = decodeFloat64(mem.lambda, sizes.numRows, ["memory", "lambda"]);
  const nb = sizes.numBlocks;
  mem.matrixBlocks.forEach(([bi, bj], k) => {
    if (bi >= nb || bj >= nb)
      throw new SnapshotError([
        { path: ["memory", "matrixBlocks", k], message: `block index beyond ${nb - 1}` },
      ]);
  });
  const factorization = decodeFactorization(mem.factorization, mem.matrixBlocks, nb);
  const { reactionChange, ...stats } = mem.stats;
  return {
    time: snap.time,
    step: snap.step,
    position,
    orientation,
    velocity,
    angularVelocity,
    integrator,
    lambda,
    stats: {
      ...stats,
      newtonConverged: stats.newtonConverged ?? true,
      contactResidual: stats.contactResidual ?? Number.NaN,
      contactConverged: stats.contactConverged ?? true,
      penetration: stats.penetration ?? 0,
      projectionConverged: stats.projectionConverged ?? true,
    },
    reactionChange: reactionChange ?? 0,
    energyReference: mem.energyReference ?? Number.NaN,
    matrixBlocks: mem.matrixBlocks,
    ...(mem.contact !== undefined ? { contact: mem.contact } : {}),
    ...(factorization !== undefined ? { factorization } : {}),
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
