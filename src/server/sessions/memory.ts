/**
 * What a session's simulation holds of its worker's heap, estimated from its model, and the
 * per-worker budget that admission (lifecycle.ts) and worker-loss rebuilds (recovery.ts)
 * keep to: WORKER_SESSION_MEMORY_MB, by default half of WORKER_MEMORY_MB. The worker itself
 * estimates each new session from its validated model (a create body's, a snapshot's, a
 * recording's) and refuses it BEFORE building it when its sessions would pass the budget
 * (worker-runtime.ts admit): a refused model costs its validation, never its build.
 *
 * Measured (the retained JS heap after a full GC, an in-process WorkerRuntime, a session
 * opened and stepped 3 times): a 100×100 cloth (10 000 particles, 39 303 springs) 23.3 MiB;
 * 2 000 boxes resting on a floor (their contacts held) 2.7 MiB; a fem box of 20³ cells
 * (9 261 nodes, 40 000 tetrahedra) 4.8 MiB, of 10³ cells 0.9 MiB. The per-item figures
 * below are these rounded up (the cloth is estimated at 26.7 MiB, the 20³ fem box at 7.1).
 * Joints, motors, actuators and sensors measured the same way, as the heap's growth from N
 * rigid bodies each pinned to the ground alone to the same with one item each (N = 500,
 * 1 000, 2 000; the figures agree within 5 % between them, so linear in N): a revolute
 * joint 12.1–12.6 KiB (a prismatic 12.4, a fixed 5.5, a spherical 4.9: the revolute's and
 * prismatic's rows, limit and coordinate machinery), a motor (a sine angle) 6.6 KiB, a
 * position actuator 1.7 KiB, a sensor (joint or body position) 0.20–0.28 KiB; a rigid body
 * 1.15–1.3 KiB. Each item is counted at the largest of its kind, rounded up; they had all
 * been taken at a body's 1.5 KiB, a revolute joint 8 times under. A dense solver
 * (dense-lu, sparse-qr) adds its n×n matrix, 8 n² bytes (cost.ts).
 *
 * What the budget leaves of the heap is for what is transient: building a model takes
 * about 2.6 times what the session then keeps (the cloth peaks at 61 MiB), and a
 * checkpoint's snapshot text is ~10 MB for that cloth.
 */
import { isDenseSolver, systemOrder } from "../../../schemas/cost";
import type { ModelSpec } from "../../../schemas/model";
import type { Config } from "../config";
import { ApiError } from "../errors";
import type { WorkerErrorInfo } from "../protocol";

/** Bytes a session holds whatever its model (its records, buffers, recording). */
const SESSION_BYTES = 64 * 1024;
/** Per body (its state, mass, shapes and their contact memory). */
const BODY_BYTES = 1536;
/** Per joint (its constraint rows, limits, coordinate; a revolute's, the largest: 12.6 KiB). */
const JOINT_BYTES = 13 * 1024;
/** Per motor (its driving row and time function; measured 6.6 KiB). */
const MOTOR_BYTES = 7 * 1024;
/** Per actuator (measured 1.7 KiB). */
const ACTUATOR_BYTES = 2 * 1024;
/** Per sensor (measured at most 0.28 KiB). */
const SENSOR_BYTES = 320;
/** Per force element (a spring, a damper, a load). */
const FORCE_BYTES = 320;
/** Per fem node and per fem tetrahedron. */
const FEM_NODE_BYTES = 256;
const FEM_ELEMENT_BYTES = 128;
/**
 * Per input or parameter patch a session's recording holds (the engine keeps every one since
 * its start, up to MAX_RECORDED_INPUTS = 100 000, src/engine/simulation/simulation.ts):
 * measured as above, 100 000 applied one a step, 314 B per bodyState input (29.9 MiB in
 * all), 137 B per actuator command. Not in a session's estimate (they come later, from its
 * inputs): the worker counts them as they are recorded (worker-runtime.ts heldBytes), and
 * an input that would take its sessions past the budget is refused (507) instead of
 * growing a log that 64 sessions could take to 1.9 GiB, past a worker's heap.
 */
export const RECORDED_INPUT_BYTES = 320;
/**
 * Per vertex and per triangle of a mesh shape, per point of a convex shape: their geometry,
 * bounding-volume tree and contact features, per shape (each body's shapes are its own).
 * Measured as above but with the typed arrays' buffers counted (process.memoryUsage()
 * heapUsed + arrayBuffers, which the per-worker `moreau_worker_heap_live_bytes` also counts;
 * most of a mesh's cost is there), on one body with the shape and a sphere resting on it:
 * a mesh costs 664–712 B a triangle with its vertices (a terrain grid of 2 601 vertices,
 * 5 000 triangles 3.3 MiB; 40 401 / 80 000 51.2 MiB; a closed sphere of 14 282 / 28 560
 * 19.4 MiB), a convex shape 719–933 B a point (all on the hull: 1 000 points 0.89 MiB,
 * 50 000 34.3 MiB). They were not counted: a session with a mesh of 180 000 triangles
 * (8.9 MB of JSON) held about 120 MiB and was estimated at 68 KiB, so sessions admitted far
 * within WORKER_SESSION_MEMORY_MB ended their 512 MiB worker, and their rebuilds the next
 * one, in turn.
 */
const MESH_VERTEX_BYTES = 256;
const MESH_TRIANGLE_BYTES = 640;
const CONVEX_POINT_BYTES = 1024;
/** Tetrahedra of a fem box's cell (schemas/model.ts FemBox: each cell split into 5). */
const TETS_PER_CELL = 5;

/** The estimated heap bytes of a session of `model`. */
export function sessionMemoryBytes(model: ModelSpec): number {
  let bytes = SESSION_BYTES;
  bytes += BODY_BYTES * model.bodies.length + JOINT_BYTES * model.joints.length;
  bytes += MOTOR_BYTES * model.motors.length + ACTUATOR_BYTES * model.actuators.length;
  bytes += SENSOR_BYTES * model.sensors.length;
  bytes += FORCE_BYTES * model.forces.length;
  for (const body of model.bodies)
    for (const shape of body.shapes) {
      if (shape.type === "mesh")
        bytes +=
          MESH_VERTEX_BYTES * shape.vertices.length + MESH_TRIANGLE_BYTES * shape.triangles.length;
      else if (shape.type === "convex") bytes += CONVEX_POINT_BYTES * shape.points.length;
    }
  for (const f of model.fem) {
    const r = f.box?.resolution;
    const nodes = r ? (r[0] + 1) * (r[1] + 1) * (r[2] + 1) : (f.nodes?.length ?? 0);
    const elements = r ? TETS_PER_CELL * r[0] * r[1] * r[2] : (f.elements?.length ?? 0);
    bytes += FEM_NODE_BYTES * nodes + FEM_ELEMENT_BYTES * elements;
  }
  if (isDenseSolver(model.solver.linearSolver)) bytes += 8 * systemOrder(model) ** 2;
  return bytes;
}

/** The bytes of sessions one worker may hold (WORKER_SESSION_MEMORY_MB). */
export function workerBudgetBytes(config: Config): number {
  const mb = config.workerSessionMemoryMb ?? Math.floor(config.workerMemoryMb / 2);
  return mb * 1024 * 1024;
}

/** Bytes as MiB for a message (one decimal). */
export function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

/**
 * The least loaded of the workers (`load`: sessions and work in flight, SessionTable.loads;
 * the first on a tie) on which a session of `bytes` keeps their sessions' estimated memory
 * (`memory`) within `budget`; null when it fits on none.
 */
export function lightestWithRoom(
  load: readonly number[],
  memory: readonly number[],
  bytes: number,
  budget: number,
): number | null {
  let best: number | null = null;
  for (let w = 0; w < load.length; w++)
    if (memory[w] + bytes <= budget && (best === null || load[w] < load[best])) best = w;
  return best;
}

/**
 * The refusal of a session of `bytes` that fits within no worker's budget (`memory`: the
 * bytes each worker holds).
 */
export function noRoom(bytes: number, memory: readonly number[], budget: number): ApiError {
  const info = noRoomInfo(bytes, Math.min(...memory), budget, memory.length);
  return new ApiError(info.code, info.message, info.details);
}

/**
 * The refusal of a session of `bytes` by the least used of `workers` worker(s), which holds
 * `held` bytes of sessions already: what a worker answers (worker-runtime.ts admit) and the
 * event loop relays when no other worker has room.
 */
export function noRoomInfo(
  bytes: number,
  held: number,
  budget: number,
  workers = 1,
): WorkerErrorInfo & { details: NoRoomDetails } {
  const where = workers === 1 ? "the solver worker" : `the least used of the ${workers} workers`;
  return {
    code: "insufficient_memory",
    message: `this session needs an estimated ${mib(bytes)} of a solver worker's heap; ${where} already holds ${mib(held)} of sessions, and each may hold ${mib(budget)} (WORKER_SESSION_MEMORY_MB, by default half of WORKER_MEMORY_MB): delete a session first, or make the model smaller`,
    details: {
      limit: "WORKER_SESSION_MEMORY_MB",
      budgetBytes: budget,
      sessionBytes: bytes,
      heldBytes: held,
    },
  };
}

/** The details of a 507 insufficient_memory. */
export interface NoRoomDetails {
  limit: "WORKER_SESSION_MEMORY_MB";
  budgetBytes: number;
  sessionBytes: number;
  heldBytes: number;
}
