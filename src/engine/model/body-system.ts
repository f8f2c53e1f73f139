/**
 * The bodies of a model and their state, MuJoCo-style: plain structure-of-arrays over
 * Float64Array, indexed by body number b (0..numBodies−1, in model order; "ground" is −1).
 *
 * Coordinates and velocities (world frame, SI):
 *   pos[3b..3b+2]    centre of mass (m)
 *   quat[4b..4b+3]   orientation [w, x, y, z] (body → world)
 *   vel[3b..3b+2]    linear velocity of the centre of mass (m/s)
 *   omega[3b..3b+2]  angular velocity, world frame (rad/s)
 * Generalized vectors (size numDofs) stack, for each dynamic body in order, its 3
 * (particle) or 6 (rigid: [v, ω]) dofs starting at dofOffset[b]; fixed bodies have none.
 * A generalized position increment of a rigid body is [δx, δθ], δθ a world-frame
 * rotation vector applied as q ← exp(δθ) ⊗ q.
 * Generalized forces are [f, τ], τ about the centre of mass, world frame.
 *
 * Three kinds of data, declared apart: BodyModel (constant: ids, kinds, masses, body-frame
 * inertias, the dof and block layout), BodyState (what changes and a snapshot saves:
 * pos, quat, vel, omega) and BodyDerived (what is computed from the state: rotations,
 * world inertias, force accumulators, versions). BodySystem holds the three.
 */

import { mat3Congruence, mat3Invert, mat3MulVec } from "../math/mat3";
import { quatRotate, quatRotateByVector, quatToMat3, quatToMat3Inertias } from "../math/quat";

export const BodyKind = { FIXED: 0, PARTICLE: 1, RIGID: 2 } as const;
export type BodyKindCode = (typeof BodyKind)[keyof typeof BodyKind];
const RIGID = BodyKind.RIGID;

export interface BodyInit {
  id: string;
  kind: "rigid" | "particle";
  fixed: boolean;
  mass: number;
  inertia: ArrayLike<number>; // row-major 3×3 (ignored for particles)
  position: ArrayLike<number>;
  orientation: ArrayLike<number>;
  velocity: ArrayLike<number>;
  angularVelocity: ArrayLike<number>;
}

/**
 * What never changes after the bodies are built: their model. Body numbers b index every
 * per-body array; generalized vectors follow dofOffset.
 */
export interface BodyModel {
  readonly numBodies: number;
  readonly numDofs: number;
  readonly ids: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  /** BodyKind per body (FIXED for fixed bodies of either kind). */
  readonly kind: Uint8Array;
  /** True for rigid bodies (with an orientation), fixed or not. */
  readonly hasOrientation: Uint8Array;
  /** First dof of body b, −1 when fixed. */
  readonly dofOffset: Int32Array;
  /** Solve-block number of body b in a SparseBlockMatrix, −1 when fixed. */
  readonly block: Int32Array;
  /** Dynamic bodies in block order: blockBody[k] is the body of block k. */
  readonly blockBody: Int32Array;
  /** Size of each solve block (3 or 6). */
  readonly blockSizes: Int32Array;
  /** Mass (kg); 0 for a fixed body. */
  readonly mass: Float64Array;
  /** Inertia about the centre of mass in the body frame (kg·m²), row-major 3×3 per body. */
  readonly inertiaBody: Float64Array;
  /**
   * 1 for a dynamic rigid body whose body-frame inertia is c·I (a sphere): its world inertia is
   * c·I at every orientation, so updateDerived leaves it alone and the gyroscopic term
   * ω × (c ω) vanishes.
   */
  readonly isotropic: Uint8Array;
  /**
   * For a dynamic rigid body whose body-frame inertia is diagonal (principal axes, not
   * isotropic): its moments (kg·m²) and their inverses at 3b (else NaN), so updateDerived
   * forms the world inertia and its inverse as R diag(I) Rᵀ and R diag(1/I) Rᵀ.
   */
  readonly principalInertia: Float64Array;
  readonly principalInertiaInv: Float64Array;
}

/**
 * What changes as the bodies move: their part of the simulation's state record
 * (simulation/state.ts), world frame, SI, in the layout of the file comment. A class for V8
 * (see BodySystem).
 */
export class BodyState {
  /** Centres of mass (m), 3 per body. */
  readonly pos: Float64Array;
  /** Unit quaternions [w, x, y, z] (body → world), 4 per body; [1, 0, 0, 0] for particles. */
  readonly quat: Float64Array;
  /** Linear velocities of the centres of mass (m/s), 3 per body. */
  readonly vel: Float64Array;
  /** Angular velocities, world frame (rad/s), 3 per body; 0 for particles. */
  readonly omega: Float64Array;

  constructor(numBodies: number) {
    this.pos = new Float64Array(3 * numBodies);
    this.quat = new Float64Array(4 * numBodies);
    this.vel = new Float64Array(3 * numBodies);
    this.omega = new Float64Array(3 * numBodies);
  }
}

/** to ← from, the four arrays (bodies of the same model). */
export function copyBodyState(to: BodyState, from: BodyState): void {
  to.pos.set(from.pos);
  to.quat.set(from.quat);
  to.vel.set(from.vel);
  to.omega.set(from.omega);
}

/** A copy of a body state (new arrays). */
export function cloneBodyState(from: BodyState): BodyState {
  const copy = new BodyState(from.pos.length / 3);
  copyBodyState(copy, from);
  return copy;
}

/**
 * What is computed from the state, never saved: refreshed by updateDerived (rotations,
 * world inertias, versions) or accumulated afresh at every force evaluation.
 */
export interface BodyDerived {
  /** Rotation matrices R(q), row-major 3×3 per body (identity for particles). */
  readonly rotation: Float64Array;
  /** World-frame inertia R I Rᵀ (kg·m²) and its inverse, 3×3 per body. */
  readonly inertiaWorld: Float64Array;
  readonly inertiaWorldInv: Float64Array;
  /** Force (N) and torque (N·m, about the centre of mass) accumulators, world frame. */
  readonly force: Float64Array;
  readonly torque: Float64Array;
  /**
   * Incremented whenever positions or velocities change through this module
   * (updateDerived, setVelocity and what calls them). Effectors may cache what they
   * compute from the state under this number. Code that writes the state arrays directly
   * must call updateDerived (positions) or markStateChanged afterwards.
   */
  stateVersion: number;
  /**
   * Incremented whenever positions or orientations change (updateDerived): what is
   * computed from the configuration alone (joint kinematics) may be cached under it.
   */
  poseVersion: number;
}

/**
 * The bodies: their model, their state and what is derived from it, in one object that
 * the kernels read (sys.mass, sys.pos, sys.rotation, …). Built from the model's bodies in
 * order, its BodyState (`state`) filled with the bodies' initial values, derived quantities
 * refreshed (updateDerived). The simulation's state record takes `state` as its bodies:
 * pos, quat, vel and omega ARE the record's arrays, which every step writes in place.
 *
 * Why a class (V8, and the rule every per-simulation record that kernels read follows):
 * a second simulation in the same process (a server worker's next session, the
 * benchmark's timed instance after its throw-away one) must not deoptimize the compiled
 * kernels of the first: the second simulation's first steps would run in the interpreter
 * and be compiled again (bench/README.md, "A second simulation in one process"). Two
 * things did that:
 *  - an object literal with object-valued fields (typed arrays, records) evaluated a
 *    second time: V8 makes its boilerplate then and generalizes the fields' types, which
 *    every kernel compiled against them depended on. Such records are classes assigning
 *    each field in the constructor (BodySystem, CsrMatrix, PositionSnapshot, AxialEnds,
 *    SchemeCoefficients), or keep their objects out of the record (the integrators'
 *    NewtonSettings is a separate argument, not a field of their parameters);
 *  - a number field born holding a small integer (0, 1) that later holds a fraction: its
 *    representation changes and the map with it, the next instance arrives with the old
 *    map, and the field of the object holding it is generalized. Such fields start as a
 *    double: −0 for an accumulator or coefficient that is always written before it is
 *    read (SolveTiming, SchemeCoefficients, the contact stats), NaN for a value not yet
 *    set.
 */
export class BodySystem implements BodyModel, BodyState, BodyDerived {
  // BodyModel: constant
  readonly numBodies: number;
  readonly numDofs: number;
  readonly ids: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly kind: Uint8Array;
  readonly hasOrientation: Uint8Array;
  readonly dofOffset: Int32Array;
  readonly block: Int32Array;
  readonly blockBody: Int32Array;
  readonly blockSizes: Int32Array;
  readonly mass: Float64Array;
  readonly inertiaBody: Float64Array;
  readonly isotropic: Uint8Array;
  readonly principalInertia: Float64Array;
  readonly principalInertiaInv: Float64Array;

  // BodyState: the arrays of `state`, under the names the kernels read
  /** The bodies' state: its arrays are pos, quat, vel and omega. */
  readonly state: BodyState;
  readonly pos: Float64Array;
  readonly quat: Float64Array;
  readonly vel: Float64Array;
  readonly omega: Float64Array;

  // BodyDerived
  readonly inertiaWorld: Float64Array;
  readonly inertiaWorldInv: Float64Array;
  readonly rotation: Float64Array;
  readonly force: Float64Array;
  readonly torque: Float64Array;
  stateVersion: number;
  poseVersion: number;

  constructor(bodies: readonly BodyInit[]) {
    const n = bodies.length;
    const state = new BodyState(n);
    const kind = new Uint8Array(n);
    const hasOrientation = new Uint8Array(n);
    const dofOffset = new Int32Array(n).fill(-1);
    const block = new Int32Array(n).fill(-1);
    const blockBody: number[] = [];
    const blockSizes: number[] = [];
    const mass = new Float64Array(n);
    const inertiaBody = new Float64Array(9 * n);
    const { pos, quat, vel, omega } = state;
    let dofs = 0;
    bodies.forEach((b, i) => {
      const rigid = b.kind === "rigid";
      hasOrientation[i] = rigid ? 1 : 0;
      kind[i] = b.fixed ? BodyKind.FIXED : rigid ? BodyKind.RIGID : BodyKind.PARTICLE;
      mass[i] = b.fixed ? 0 : b.mass;
      for (let k = 0; k < 9; k++) inertiaBody[9 * i + k] = rigid ? b.inertia[k] : 0;
      for (let k = 0; k < 3; k++) {
        pos[3 * i + k] = b.position[k];
        vel[3 * i + k] = b.fixed ? 0 : b.velocity[k];
        omega[3 * i + k] = b.fixed || !rigid ? 0 : b.angularVelocity[k];
      }
      const qn = Math.hypot(b.orientation[0], b.orientation[1], b.orientation[2], b.orientation[3]);
      for (let k = 0; k < 4; k++) quat[4 * i + k] = rigid ? b.orientation[k] / qn : k === 0 ? 1 : 0;
      if (!b.fixed) {
        dofOffset[i] = dofs;
        block[i] = blockBody.length;
        blockBody.push(i);
        const size = rigid ? 6 : 3;
        blockSizes.push(size);
        dofs += size;
      }
    });
    this.numBodies = n;
    this.numDofs = dofs;
    this.ids = bodies.map((b) => b.id);
    this.index = new Map(bodies.map((b, i) => [b.id, i]));
    this.kind = kind;
    this.hasOrientation = hasOrientation;
    this.dofOffset = dofOffset;
    this.block = block;
    this.blockBody = Int32Array.from(blockBody);
    this.blockSizes = Int32Array.from(blockSizes);
    this.mass = mass;
    this.inertiaBody = inertiaBody;
    this.isotropic = Uint8Array.from({ length: n }, (_, i) =>
      kind[i] === BodyKind.RIGID && isIsotropic(inertiaBody, 9 * i) ? 1 : 0,
    );
    this.principalInertia = new Float64Array(3 * n).fill(Number.NaN);
    this.principalInertiaInv = new Float64Array(3 * n).fill(Number.NaN);
    this.inertiaWorld = new Float64Array(9 * n);
    this.inertiaWorldInv = new Float64Array(9 * n);
    this.rotation = new Float64Array(9 * n);
    this.state = state;
    this.pos = pos;
    this.quat = quat;
    this.vel = vel;
    this.omega = omega;
    this.force = new Float64Array(3 * n);
    this.torque = new Float64Array(3 * n);
    this.stateVersion = 0;
    this.poseVersion = 0;
    for (let b = 0; b < n; b++)
      if (!this.hasOrientation[b]) for (let k = 0; k < 9; k += 4) this.rotation[9 * b + k] = 1;
    for (let b = 0; b < n; b++) {
      const o = 9 * b;
      const I = inertiaBody;
      // positive principal moments (a singular inertia keeps the general path, as before)
      const diagonal =
        [1, 2, 3, 5, 6, 7].every((k) => I[o + k] === 0) && [0, 4, 8].every((k) => I[o + k] > 0);
      if (kind[b] !== BodyKind.RIGID || this.isotropic[b] || !diagonal) continue;
      for (let k = 0; k < 3; k++) {
        this.principalInertia[3 * b + k] = I[o + 4 * k];
        this.principalInertiaInv[3 * b + k] = 1 / I[o + 4 * k];
      }
    }
    // constant world inertias, set once (updateDerived skips these bodies)
    for (let b = 0; b < n; b++)
      if (this.isotropic[b]) {
        const c = inertiaBody[9 * b];
        for (let k = 0; k < 9; k += 4) {
          this.inertiaWorld[9 * b + k] = c;
          this.inertiaWorldInv[9 * b + k] = 1 / c;
        }
      }
    updateDerived(this);
  }
}

/** True when the row-major 3×3 at I[o..o+8] is a (positive) multiple of the identity. */
export function isIsotropic(I: Float64Array, o: number): boolean {
  return (
    I[o] > 0 &&
    I[o] === I[o + 4] &&
    I[o] === I[o + 8] &&
    I[o + 1] === 0 &&
    I[o + 2] === 0 &&
    I[o + 3] === 0 &&
    I[o + 5] === 0 &&
    I[o + 6] === 0 &&
    I[o + 7] === 0
  );
}

/** Refreshes rotation matrices and world inertias from the orientations. */
export function updateDerived(sys: BodySystem): void {
  sys.stateVersion++;
  sys.poseVersion++;
  for (let b = 0; b < sys.numBodies; b++) updateBodyDerived(sys, b);
}

/**
 * Body b's rotation matrix and world inertias from its orientation (updateDerived's work
 * for one body: a caller that places the bodies one by one and needs each one's rotation
 * before the next, dynamics/articulated-body.ts, then bumps the versions itself). Without
 * `inverse` the inverse world inertia is left as it was: for a state that only forces and
 * the articulated-body algorithm read (a Runge–Kutta stage), which never invert it.
 */
export function updateBodyDerived(sys: BodySystem, b: number, inverse = true): void {
  // a particle keeps R = I (its quaternion is never rotated)
  if (sys.hasOrientation[b] === 0) return;
  const { rotation, quat, inertiaBody, inertiaWorld, inertiaWorldInv } = sys;
  const { principalInertia, principalInertiaInv } = sys;
  const rigid = sys.kind[b] === BodyKind.RIGID && sys.isotropic[b] === 0;
  if (rigid && principalInertia[3 * b] >= 0) {
    // R, R diag(I_p) Rᵀ and R diag(1/I_p) Rᵀ in one pass
    quatToMat3Inertias(
      rotation,
      9 * b,
      quat,
      4 * b,
      principalInertia,
      inertiaWorld,
      inverse ? principalInertiaInv : null,
      inverse ? inertiaWorldInv : null,
      3 * b,
    );
    return;
  }
  quatToMat3(rotation, 9 * b, quat, 4 * b);
  if (!rigid) return;
  mat3Congruence(inertiaWorld, 9 * b, rotation, 9 * b, inertiaBody, 9 * b);
  if (inverse) mat3Invert(inertiaWorldInv, 9 * b, inertiaWorld, 9 * b);
}

export function clearForces(sys: BodySystem): void {
  sys.force.fill(0);
  sys.torque.fill(0);
}

/** u ← the generalized velocity [v; ω] of every dynamic body. */
export function getVelocity(sys: BodySystem, u: Float64Array): void {
  gather(sys, sys.vel, sys.omega, u);
}

/**
 * out ← the per-body 3-vectors lin[3b..] and, for rigid bodies, ang[3b..] stacked as a
 * generalized vector (getVelocity, getForces). Written out rather than with copy3: every
 * Newton iteration of a jointed chain reads and writes its velocities several times, and
 * where the engine is loaded as CommonJS (a script outside the package, run with tsx) each
 * call of another module's function goes through an export getter: on the 100-link chain
 * getVelocity took 2.8 µs that way, 0.9 µs written out (setVelocity the same). The package's
 * ES modules (the benchmark, the server's bundle) have no getters.
 */
function gather(sys: BodySystem, lin: Float64Array, ang: Float64Array, out: Float64Array): void {
  const { dofOffset, kind } = sys;
  for (let b = 0; b < sys.numBodies; b++) {
    const d = dofOffset[b];
    if (d < 0) continue;
    const o = 3 * b;
    out[d] = lin[o];
    out[d + 1] = lin[o + 1];
    out[d + 2] = lin[o + 2];
    if (kind[b] !== RIGID) continue;
    out[d + 3] = ang[o];
    out[d + 4] = ang[o + 1];
    out[d + 5] = ang[o + 2];
  }
}

/** Tells state-caching effectors that the state arrays were written directly. */
export function markStateChanged(sys: BodySystem): void {
  sys.stateVersion++;
}

/** Body velocities ← u. */
export function setVelocity(sys: BodySystem, u: Float64Array): void {
  sys.stateVersion++;
  const { dofOffset, kind, vel, omega } = sys;
  for (let b = 0; b < sys.numBodies; b++) {
    const d = dofOffset[b];
    if (d < 0) continue;
    const o = 3 * b;
    vel[o] = u[d];
    vel[o + 1] = u[d + 1];
    vel[o + 2] = u[d + 2];
    if (kind[b] !== RIGID) continue;
    omega[o] = u[d + 3];
    omega[o + 1] = u[d + 4];
    omega[o + 2] = u[d + 5];
  }
}

/** f ← the accumulated generalized force [f; τ]. */
export function getForces(sys: BodySystem, f: Float64Array): void {
  gather(sys, sys.force, sys.torque, f);
}

/**
 * Positions ← positions ⊕ s·du: x += s δx and q ← exp(s δθ) ⊗ q (world-frame rotation
 * vector). Refreshes the derived quantities.
 */
export function addPositionIncrement(sys: BodySystem, du: Float64Array, s: number): void {
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    sys.pos[3 * b] += s * du[d];
    sys.pos[3 * b + 1] += s * du[d + 1];
    sys.pos[3 * b + 2] += s * du[d + 2];
    if (sys.kind[b] === BodyKind.RIGID) quatRotateByVector(sys.quat, 4 * b, du, d + 3, s);
  }
  updateDerived(sys);
}

/** The turn exp(s δθ) of one body in movePositions (a unit quaternion). */
const TURN_BY = new Float64Array(4);

/**
 * Positions ← positions ⊕ s·du for a move of the positions alone (a projection), as
 * addPositionIncrement, and each rigid body it turns turns its world angular velocity
 * with it, ω ← exp(s δθ) ω: the body-frame ω, and the kinetic energy ½ ωᵀ I_world ω with
 * it, stay. Held in the world instead, ω would change the energy of a body spinning at ω
 * by up to |s δθ| |ω| |I_world ω| (contact/projection.ts).
 */
export function movePositions(sys: BodySystem, du: Float64Array, s: number): void {
  const { omega } = sys;
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0 || sys.kind[b] !== BodyKind.RIGID) continue;
    if (du[d + 3] === 0 && du[d + 4] === 0 && du[d + 5] === 0) continue;
    TURN_BY[0] = 1;
    TURN_BY[1] = 0;
    TURN_BY[2] = 0;
    TURN_BY[3] = 0;
    quatRotateByVector(TURN_BY, 0, du, d + 3, s);
    quatRotate(omega, 3 * b, TURN_BY, 0, omega, 3 * b);
  }
  markStateChanged(sys);
  addPositionIncrement(sys, du, s);
}

/** out = M u with M = blockdiag(m I₃, I_world). */
export function massMultiply(sys: BodySystem, u: Float64Array, out: Float64Array): void {
  for (let b = 0; b < sys.numBodies; b++) {
    const d = sys.dofOffset[b];
    if (d < 0) continue;
    const m = sys.mass[b];
    out[d] = m * u[d];
    out[d + 1] = m * u[d + 1];
    out[d + 2] = m * u[d + 2];
    if (sys.kind[b] === BodyKind.RIGID) mat3MulVec(out, d + 3, sys.inertiaWorld, 9 * b, u, d + 3);
  }
}

/** out = M⁻¹ f. */
export function massSolve(sys: BodySystem, f: Float64Array, out: Float64Array): void {
  massSolveWith(sys, sys.inertiaWorldInv, f, out);
}

/**
 * out = M⁻¹ f with the world inverse inertias `inertiaInv` (9 per body, as
 * sys.inertiaWorldInv): M⁻¹ at another configuration, e.g. the start of a step.
 */
export function massSolveWith(
  sys: BodySystem,
  inertiaInv: Float64Array,
  f: Float64Array,
  out: Float64Array,
): void {
  for (let b = 0; b < sys.numBodies; b++) massSolveBody(sys, inertiaInv, b, f, out);
}

/**
 * massSolveWith on body b's dofs alone (nothing for ground and fixed bodies): M_b⁻¹ f_b
 * for a generalized vector supported on a few bodies (joint-limit.ts's coordinates).
 */
export function massSolveBody(
  sys: BodySystem,
  inertiaInv: Float64Array,
  b: number,
  f: Float64Array,
  out: Float64Array,
): void {
  const d = sys.dofOffset[b];
  if (d < 0) return;
  const im = 1 / sys.mass[b];
  out[d] = im * f[d];
  out[d + 1] = im * f[d + 1];
  out[d + 2] = im * f[d + 2];
  if (sys.kind[b] === BodyKind.RIGID) mat3MulVec(out, d + 3, inertiaInv, 9 * b, f, d + 3);
}

/** Adds s·M to the diagonal blocks of a solve matrix (blocks numbered as sys.block). */
export function addMassBlocks(
  sys: BodySystem,
  m: {
    add3x3(
      bi: number,
      bj: number,
      r0: number,
      c0: number,
      a: Float64Array,
      ia: number,
      s: number,
    ): void;
    addDiagonal3(b: number, r0: number, s: number): void;
  },
  s: number,
): void {
  for (let b = 0; b < sys.numBodies; b++) {
    const k = sys.block[b];
    if (k < 0) continue;
    m.addDiagonal3(k, 0, s * sys.mass[b]);
    if (sys.kind[b] === BodyKind.RIGID) m.add3x3(k, k, 3, 3, sys.inertiaWorld, 9 * b, s);
  }
}

/** Kinetic energy ½ m v² + ½ ωᵀ I ω (J). */
export function kineticEnergy(sys: BodySystem): number {
  let e = 0;
  for (let b = 0; b < sys.numBodies; b++) if (sys.dofOffset[b] >= 0) e = addBodyKinetic(sys, b, e);
  return e;
}

/**
 * e plus body b's kinetic energy ½ m v² (+ ½ ωᵀ I_w ω for a rigid body), J, added in that
 * order (kineticEnergy's sum; articulated-energy.ts's per group).
 */
export function addBodyKinetic(sys: BodySystem, b: number, e: number): number {
  const v = sys.vel;
  e += 0.5 * sys.mass[b] * (v[3 * b] ** 2 + v[3 * b + 1] ** 2 + v[3 * b + 2] ** 2);
  if (sys.kind[b] !== BodyKind.RIGID) return e;
  const w = sys.omega;
  const I = sys.inertiaWorld;
  const i = 9 * b;
  const x = w[3 * b];
  const y = w[3 * b + 1];
  const z = w[3 * b + 2];
  return (
    e +
    0.5 *
      (x * (I[i] * x + I[i + 1] * y + I[i + 2] * z) +
        y * (I[i + 3] * x + I[i + 4] * y + I[i + 5] * z) +
        z * (I[i + 6] * x + I[i + 7] * y + I[i + 8] * z))
  );
}

/**
 * max_r Σ_c |(I_b⁻¹)_rc| (1/(kg·m²)): Gershgorin's bound of the largest eigenvalue of body
 * b's world inverse inertia (exact when I_b's principal axes are the world's); 0 on a
 * particle. The explicit steps' stability bounds use it for the rotation a force at a
 * lever arm r drives, |r|² ι_b (compliant.ts frictionRates, two-point.ts addExplicitRows).
 */
export function inverseInertiaBound(sys: BodySystem, b: number): number {
  if (sys.kind[b] !== BodyKind.RIGID) return 0;
  const I = sys.inertiaWorldInv;
  let bound = 0;
  for (let r = 0; r < 3; r++) {
    const o = 9 * b + 3 * r;
    bound = Math.max(bound, Math.abs(I[o]) + Math.abs(I[o + 1]) + Math.abs(I[o + 2]));
  }
  return bound;
}

/**
 * A copy of the positions and orientations, for Newton iterations (the step's start, which
 * a halved step returns to; a class for V8, see BodySystem).
 */
export class PositionSnapshot {
  readonly pos: Float64Array;
  readonly quat: Float64Array;

  constructor(sys: BodySystem) {
    this.pos = new Float64Array(sys.pos);
    this.quat = new Float64Array(sys.quat);
  }
}

export function savePositions(sys: BodySystem, out: PositionSnapshot): void {
  out.pos.set(sys.pos);
  out.quat.set(sys.quat);
}

export function restorePositions(sys: BodySystem, from: PositionSnapshot): void {
  sys.pos.set(from.pos);
  sys.quat.set(from.quat);
  updateDerived(sys);
}

/**
 * Positions ← from ⊕ s·du: restorePositions then addPositionIncrement, with one refresh
 * of the derived quantities instead of two.
 */
export function setPositionsFrom(
  sys: BodySystem,
  from: PositionSnapshot,
  du: Float64Array,
  s: number,
): void {
  sys.pos.set(from.pos);
  sys.quat.set(from.quat);
  addPositionIncrement(sys, du, s);
}
