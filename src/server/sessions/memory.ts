/**
 * What a session's simulation holds of its worker's memory, estimated from its model, and
 * the per-worker budget that admission (lifecycle.ts) and worker-loss rebuilds (recovery.ts)
 * keep to: WORKER_SESSION_MEMORY_MB, by default half of WORKER_MEMORY_MB. The worker itself
 * estimates each new session from its validated model (a create body's, a snapshot's, a
 * recording's) and refuses it BEFORE building it when its sessions would pass the budget
 * (worker-runtime.ts admit): a refused model costs its validation, never its build.
 *
 * Both kinds of memory are counted: the JS heap (which WORKER_MEMORY_MB, V8's heap limit
 * of the worker, bounds) and the typed arrays' buffers (ArrayBuffers, allocated outside
 * that heap and bounded by nothing but the machine: most of the engine's state, matrices
 * and factors live there). Counting the heap alone, a 100×100 cloth (10 000 particles,
 * 39 303 springs) was estimated at 26.7 MiB while it held 87.3 MiB (22.9 heap + 64.4
 * ArrayBuffers), so a worker admitted some 38 such cloths within its 1 GiB default budget:
 * 3.3 GiB, 2.4 of it outside the heap limit that was meant to stop it.
 *
 * Measured per item (process.memoryUsage() heapUsed +
 * arrayBuffers after a full GC, an in-process WorkerRuntime, two sessions of the model each
 * opened and stepped 3 times, per session): a session of one falling ball 175 KiB; a rigid
 * body without shapes 5.8–6.0 KB (2 000 and 8 000 of them); a particle 4.1 KB (8 000); a
 * primitive shape (a box) 4.4 KB more (2 000 boxes in the air); a dynamic body's contacts
 * 13–15 KB more (500 and 2 000 boxes resting on a floor); a revolute joint 20.5–22.3 KB
 * (500, 1 000, 2 000 bodies each hinged to the ground alone); a spring between rigid bodies
 * 8.0 KB (8 000), one between translational ends (particles, the ground: one vectorized
 * set, particle-springs.ts) 1.4 KB (8 000 particles each sprung to the ground); a fem box
 * of 8³, 12³, 16³, 20³ cells 8.8, 29.2, 74.7, 168.5 MiB — superlinear, the sparse factor
 * of its stiffness filling in (≈ n^(4/3) for a 3-D mesh of n nodes under nested dissection,
 * George 1973): per node 4 274 B + 702 B·n^(1/3) fits them within 15 % (least squares;
 * 0.85, 0.97, 1.02, 1.00 of each). The figures below are these rounded up: the 100×100
 * cloth is estimated at 99.3 MiB (87.3 measured), the 30×30 at 8.9 (8.3), fem boxes of 8³
 * and 20³ cells at 7.6 and 169.2 (8.8, 168.5).
 *
 * Motors, actuators, sensors and joint limits, measured the same way on N bodies each
 * hinged to the ground (N revolute joints: 6N dofs, 5N rows), each joint with one item:
 * a motor 4.0, 4.7, 6.8, 8.1, 8.5 KB (N = 125 … 2 000, the factor's fill growing slowly);
 * a sensor 66–93 B (10 000 of them: joint position, body velocity, acceleration,
 * orientation); an actuator (of any type) 3.0, 3.1, 3.0 KB at N = 500, 1 000, 2 000, and a
 * joint limit 2.4, 2.5, 2.4 KB (three sessions each, in turn per process; generalized-alpha
 * and moreau-jean, which take their rate correction and their limit problem, the same).
 * Until 2026-12-07 both grew with the model (16.6, 36.8, 74.4, 147.1 KB an actuator at
 * N = 125 … 1 000; 71.4, 144.4 KB a limit at N = 250, 500), almost all ArrayBuffers made
 * up front: the servos' rate correction (src/engine/integrators/stiff-rates.ts) held
 * 8 (2 n + m + k) bytes for every actuator, the limit problem (src/engine/actuators/
 * limit-problem.ts) two dense columns of the dofs per bound and three (2L)² matrices, and
 * they were counted so (500 actuated hinges estimated at 49.4 MiB, 500 limited at 83.3).
 * Both are now made as a step uses them. The limit problem's are not counted: its columns
 * per bound touching, by their nonzeros, and its LCP's count² (with Lemke's tableau) for
 * the bounds touching at once (500 hinges each resting on a bound: about 19 KB a limit).
 * The correction's are (stiffRateBytes), once it may be taken: a model with joints and
 * actuators, under any integrator (a PATCH may choose one that takes it). Taken, it holds
 * 8 (2 n + m) bytes for each servo it reads (g and Z's two parts) and 8 (4 n + 2 k² + 4 k)
 * of scratch, k×k system and its LU (until 2026-12-07 the LU also kept a copy of the
 * system: 3 k²): measured (probe, heap + ArrayBuffers after a full GC, three
 * sessions, a warm-up one stepped first) on a hanging chain of N links, each hinge's
 * position servo at k_p = 1e8, k_d = 0, the first joint commanded 0.5 rad, generalized-alpha
 * at 5 ms, whose first steps read every servo: 3 steps held 0.89 and 4.31 MB more than the
 * same chain at k_p = 10 (no correction) at N = 80 and 160, against the buffers' 0.94 and
 * 3.72 MB (the formula's 10 880 and 21 760 B a servo); uncounted, a session of 160 such
 * links was estimated 3.7 MB short of its correction alone.
 * A dense solver (dense-lu, sparse-qr) adds its n×n matrix, 8 n² bytes (cost.ts; dense-lu
 * factors in place: until 2026-12-07 it also kept a copy of A, 16 n² in all).
 *
 * Joints between two dynamic bodies cost more than the hinges to the ground the figures
 * above were measured on (probe as above, three integrators, N = 80 and 160 links of a
 * hanging chain, hinges about x and y in turn): a revolute 25.2 KB (COUPLING_JOINT_BYTES),
 * and once an actuator on such a joint (or a joint limit, a spring between two dynamic
 * bodies) couples them in the iteration matrix W, the constrained solve factors the whole
 * saddle point by sparse LU instead of the block-diagonal Schur complement: 9.6–10.8 KB
 * more a link (SADDLE_POINT_BYTES per dof and row). Until 2026-12-07 that LU also kept
 * CSparse's first guess of its factors' storage, 4 nnz(A) + n entries each, 5 to 7 times
 * what they fill (src/engine/solvers/linear/sparse-lu.ts fitStorage): a chain held 36 KB a
 * link more than the hinges (66.8 against 31 KB), so that 160 links of stiff servos held
 * 14.9 MB against 9.8 estimated. Now (held, estimated, MB): 160 links with torque
 * actuators 7.7–7.8, 8.1; with stiff servos (k_p = 1e8, the correction taken) 12.1–12.2,
 * 12.6; without actuators 5.0–5.1, 5.3; 80 links 4.0, 4.2; 5.2, 5.4; 2.6–2.7, 2.7. Servos at
 * k_p = 10 hold about what torque actuators do, and are estimated with the correction
 * they may take (1.6 times; on hinges to the ground 2.0).
 *
 * What the budget leaves of the heap is for what is transient: building a model takes
 * about 2.6 times what the session then keeps (the cloth peaks at 61 MiB of heap), and a
 * checkpoint's snapshot text is ~10 MB for that cloth.
 */
import { isDenseSolver, systemOrder, systemSize } from "../../../schemas/cost";
import { parseNodeRef } from "../../../schemas/fem";
import type { ModelSpec } from "../../../schemas/model";
import type { Config } from "../config";
import { ApiError } from "../errors";
import type { WorkerErrorInfo } from "../protocol";

/** Bytes a session holds whatever its model (its records, buffers, recording; 175 KiB). */
const SESSION_BYTES = 192 * 1024;
/** Per rigid body (its state, mass, solver rows; 6.0 KB measured). */
const RIGID_BODY_BYTES = 6 * 1024;
/** Per particle (4.1 KB). */
const PARTICLE_BYTES = 4352;
/** Per primitive shape (sphere, box, capsule, cylinder, plane; a box 4.4 KB). */
const SHAPE_BYTES = 4608;
/** Per dynamic body with shapes: its contacts (a box resting on a floor, 13–15 KB). */
const CONTACT_BYTES = 15 * 1024;
/** Per joint (its constraint rows, limits, coordinate; a revolute's, the largest: 22.3 KB). */
const JOINT_BYTES = 22.5 * 1024;
/**
 * More per joint between two dynamic bodies (its rows couple them in S = G M⁻¹ Gᵀ, whose
 * factor fills in between them: a hanging chain's revolute 25.2 KB, 24.6 KiB).
 */
const COUPLING_JOINT_BYTES = 2.5 * 1024;
/**
 * Per dof and per constraint row when the iteration matrix W couples two dynamic bodies
 * and the model has joints: the whole saddle point [W Gᵀ; G 0] is then factored by sparse
 * LU (src/engine/integrators/constrained-solve.ts, its KKT path), with its matrix, its
 * pattern's copies and its factors (a hanging chain of servos: 9.6–10.8 KB a link of 6
 * dofs and 5 rows, 1.0 KB each, rounded up to cover the chains of torque actuators, whose
 * estimate has no margin from the stiff-rate correction's).
 */
const SADDLE_POINT_BYTES = 1280;
/** Per motor (its driving row, time function and factor fill: 4.0–8.5 KB, N ≤ 2 000). */
const MOTOR_BYTES = 9 * 1024;
/** Per actuator (its records and rate-correction share: 3.0–3.1 KB, N ≤ 2 000). */
const ACTUATOR_BYTES = 3.25 * 1024;
/** Per joint limit (its bounds' rows and the limit problem's share: 2.4–2.5 KB, N ≤ 2 000). */
const LIMIT_BYTES = 2.5 * 1024;
/**
 * Per servo the stiff-rate correction reads, beside its three vectors' 8 (2 n + m) bytes:
 * the typed arrays' own objects (stiffRateBytes; the probe's 4.31 MB against 3.72 of buffers
 * at N = 160 is the margin's measure, 3.7 KB a servo).
 */
const STIFF_SERVO_BYTES = 4 * 1024;
/** Per sensor (heap-only 0.28 KiB; 66–93 B with the typed arrays, 10 000 sensors). */
const SENSOR_BYTES = 320;
/** Per force element (a spring, a damper, a load) on a rigid body (a spring 8.0 KB). */
const FORCE_BYTES = 8 * 1024;
/** Per spring between translational ends: particles, fem nodes, the ground (1.4 KB). */
const PARTICLE_SPRING_BYTES = 1536;
/** A fem body of n nodes: FEM_NODE_BYTES·n + FEM_FILL_BYTES·n^(4/3) (its factor's fill). */
const FEM_NODE_BYTES = 4352;
const FEM_FILL_BYTES = 704;
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
/** The estimated bytes (JS heap and ArrayBuffers) of a session of `model`. */
export function sessionMemoryBytes(model: ModelSpec): number {
  let bytes = SESSION_BYTES;
  bytes += JOINT_BYTES * model.joints.length + saddlePointBytes(model);
  bytes += MOTOR_BYTES * model.motors.length + SENSOR_BYTES * model.sensors.length;
  bytes += ACTUATOR_BYTES * model.actuators.length + stiffRateBytes(model);
  for (const j of model.joints)
    if ((j.type === "revolute" || j.type === "prismatic") && j.limits) bytes += LIMIT_BYTES;
  const particles = new Set<string>();
  for (const body of model.bodies) {
    if (body.kind === "particle") particles.add(body.id);
    bytes += body.kind === "particle" ? PARTICLE_BYTES : RIGID_BODY_BYTES;
    if (!body.fixed && body.shapes.length > 0) bytes += CONTACT_BYTES;
    for (const shape of body.shapes) {
      if (shape.type === "mesh")
        bytes +=
          MESH_VERTEX_BYTES * shape.vertices.length + MESH_TRIANGLE_BYTES * shape.triangles.length;
      else if (shape.type === "convex") bytes += CONVEX_POINT_BYTES * shape.points.length;
      else bytes += SHAPE_BYTES;
    }
  }
  // springs between ends without rotation share one vectorized set (forces/build.ts)
  const translational = (id: string) =>
    id === "ground" || particles.has(id) || parseNodeRef(id) !== null;
  for (const f of model.forces)
    bytes +=
      f.type === "spring" && translational(f.a.body) && translational(f.b.body)
        ? PARTICLE_SPRING_BYTES
        : FORCE_BYTES;
  for (const f of model.fem) {
    const r = f.box?.resolution;
    const nodes = r ? (r[0] + 1) * (r[1] + 1) * (r[2] + 1) : (f.nodes?.length ?? 0);
    bytes += FEM_NODE_BYTES * nodes + FEM_FILL_BYTES * nodes ** (4 / 3);
  }
  if (isDenseSolver(model.solver.linearSolver)) bytes += 8 * systemOrder(model) ** 2;
  return Math.ceil(bytes);
}

/**
 * What joints between two dynamic bodies add (COUPLING_JOINT_BYTES each) and, when the
 * iteration matrix W couples two dynamic bodies (an actuator or a joint limit on such a
 * joint: its coordinate's Jacobian, actuator.ts reserveCoordinateBlocks; a spring between
 * two dynamic ends), the saddle point's sparse LU, SADDLE_POINT_BYTES per dof and row. A
 * dynamic end: a body not fixed, or a fem node. Joints only to the ground (or to fixed
 * bodies) leave W block diagonal, whose Schur complement takes no more (the hinges the
 * per-joint figures were measured on).
 */
function saddlePointBytes(model: ModelSpec): number {
  const fixed = new Set(model.bodies.filter((b) => b.fixed).map((b) => b.id));
  const dynamic = (id: string) => id !== "ground" && !fixed.has(id);
  const coupling = new Set(
    model.joints.filter((j) => dynamic(j.a.body) && dynamic(j.b.body)).map((j) => j.id),
  );
  const limited = (j: ModelSpec["joints"][number]) =>
    (j.type === "revolute" || j.type === "prismatic") && j.limits !== undefined;
  const coupled =
    model.actuators.some((a) => coupling.has(a.joint)) ||
    model.joints.some((j) => coupling.has(j.id) && limited(j)) ||
    model.forces.some(
      (f) =>
        (f.type === "spring" || f.type === "frameSpring") && dynamic(f.a.body) && dynamic(f.b.body),
    );
  const { dofs, rows } = systemSize(model);
  const saddle = coupled && rows > 0 ? SADDLE_POINT_BYTES * (dofs + rows) : 0;
  return COUPLING_JOINT_BYTES * coupling.size + saddle;
}

/**
 * The stiff-rate correction's buffers once a step takes it (src/engine/integrators/
 * stiff-rates.ts; the file comment's figures): none without joints or actuators, else, for
 * the n dofs and m rows, one set of g and Z's parts (8 (2 n + m) bytes and
 * STIFF_SERVO_BYTES) per servo it may read — every position or velocity servo (k of them)
 * and the one being read, at most the actuators — and its scratch, 8 (4 n + 2 k² + 4 k):
 * its k×k system and that system's LU. A torque actuator has no rate gain and takes no set
 * of its own.
 */
function stiffRateBytes(model: ModelSpec): number {
  const actuators = model.actuators.length;
  const { dofs, rows } = systemSize(model);
  if (actuators === 0 || rows === 0) return 0;
  const k = model.actuators.filter((a) => a.type !== "torque").length;
  const sets = Math.min(actuators, k + 1);
  return sets * (8 * (2 * dofs + rows) + STIFF_SERVO_BYTES) + 8 * (4 * dofs + 2 * k * k + 4 * k);
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
 * (`memory`) within `budget`; null when it fits on none. `live` (a worker loss's rebuilds):
 * the workers running now are taken first, a starting replacement only when none of them
 * has room — it is the least loaded, being empty, but a session opened there waits for its
 * cold start (0.9 s for the bundled worker, 2.4 s from source) while a live worker opens it
 * at once.
 */
export function lightestWithRoom(
  load: readonly number[],
  memory: readonly number[],
  bytes: number,
  budget: number,
  live?: (worker: number) => boolean,
): number | null {
  let best: number | null = null;
  let bestLive = false;
  for (let w = 0; w < load.length; w++) {
    if (memory[w] + bytes > budget) continue;
    const isLive = live ? live(w) : true;
    if (best === null || (isLive && !bestLive) || (isLive === bestLive && load[w] < load[best])) {
      best = w;
      bestLive = isLive;
    }
  }
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
    message: `this session needs an estimated ${mib(bytes)} of a solver worker's memory (JS heap and ArrayBuffers); ${where} already holds ${mib(held)} of sessions, and each may hold ${mib(budget)} (WORKER_SESSION_MEMORY_MB, by default half of WORKER_MEMORY_MB): delete a session first, or make the model smaller`,
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
