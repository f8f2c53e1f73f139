/**
 * Rigid bodies joined in trees, in joint (reduced) coordinates: the configuration is one
 * set of coordinates per joint, the joints hold by construction, and the accelerations
 * come from Featherstone's articulated-body algorithm in O(bodies) ("Rigid Body Dynamics
 * Algorithms", 2008, ch. 7), written here with world-oriented 6-vectors referred to each
 * body's joint point. The integrators/articulated.ts integrator steps it.
 *
 * Each dynamic body is one `slot`, parents before children. A body joined to ground or to a
 * fixed body is a root; a body in no joint is a free root (6 coordinates, a particle 3).
 * Coordinates per joint (positions y, velocities u; world frame W, parent body frame P):
 *   spherical  y: the relative rotation q_rel = q_p* ⊗ q_c (4, a unit quaternion),
 *              u: the relative angular velocity ω_c − ω_p (3, W)
 *   revolute   y: the angle θ turned about the axis since the step's start (1), u: θ̇
 *   prismatic  y: the offset s of the child's point along the axis from the parent's (1, m), u: ṡ
 *   fixed      none (the relative pose of the step's start is kept)
 *   driven     none: a revolute or prismatic joint with a motor, its angle or offset the
 *              motor's time function from the model pose (rate and acceleration with it)
 *   free body  y: position (3) and orientation quaternion (4), u: ω then v (6, W)
 *   free particle  y: position (3), u: velocity (3)
 * The relative rotations of revolute, prismatic and fixed joints are taken at the step's start
 * (beginStep) from the bodies' state: the coordinates are increments over one step, so the
 * model needs no zero configuration of its joints. The joints' points, axes and the motors'
 * zero are read against the model pose (buildTree's `pose`), whatever the state when the
 * tree is built.
 *
 * Accelerations. A body's 6-vector "acceleration" A = (α, a_P) is its angular acceleration
 * and the acceleration of its joint point P (its centre of mass for a free body); a wrench
 * w = (n_P, f) a moment about P and a force, both W. A body of mass m, centroidal inertia I
 * (W), centre c = P + r, with applied force f_e and torque τ_e (gyroscopic torque included:
 * forces/gyroscopic.ts) needs from its joint the wrench
 *   w = M A + p,  M = [I − m r̃r̃, m r̃; −m r̃, m 1],  p = (r × (m c_r − f_e) − τ_e, m c_r − f_e)
 * with c_r = ω × (ω × r), plus its children's joint wrenches shifted to P. A child's
 * acceleration follows its parent's: A_c = T A_p + S ü + κ with T = [1, 0; −d̃, 1] (d from
 * the parent's point to the child's), S the joint's motion directions (W) and κ its
 * velocity-product terms: ω_p × (ω_p × d) in a_P, ω_p × (ê θ̇) in α (revolute),
 * 2 ω_p × ê ṡ in a_P (prismatic), and a driven joint's S q̈*(t) (its S ü is known). The
 * child's articulated inertia K and bias b (w = K A + b)
 * with its joint free along S (Sᵀ w = 0: the joint transmits no effort along its motion) are
 *   D = Sᵀ K S,  ü = D⁻¹ (−Sᵀ (K X + b)),  X = T A_p + κ,
 *   w = (K − K S D⁻¹ Sᵀ K) X + b − K S D⁻¹ Sᵀ b,
 * which adds Tᵀ K^a T and Tᵀ (K^a κ + b^a) to the parent's (Tᵀ shifts a wrench from the
 * child's point to the parent's: n + d × f). The backward pass builds K, b from the leaves
 * in; the forward pass gets ü and A from the roots out, and w = K A + b, each joint's
 * reaction on its child.
 */
import type { JointSpec, MotorSpec } from "../../../schemas/model";
import { quatMul, quatRotate, quatRotateInverse } from "../math/quat";
import { invertSmall } from "../math/small-dense";
import { BodyKind, type BodySystem, updateBodyDerived } from "../model/body-system";
import { type CompiledTimeFunction, compileTimeFunction } from "../model/time-function";

export const SlotKind = {
  FREE: 0,
  PARTICLE: 1,
  SPHERICAL: 2,
  REVOLUTE: 3,
  PRISMATIC: 4,
  FIXED: 5,
  /** A revolute joint whose angle a motor prescribes: φ*(t) from the model pose. */
  DRIVEN_REVOLUTE: 6,
  /** A prismatic joint whose offset a motor prescribes: d*(t) from the model pose. */
  DRIVEN_PRISMATIC: 7,
} as const;

/** Position and velocity coordinates of each kind of slot (a driven joint has none). */
const POSITION_SIZE = [7, 3, 4, 1, 1, 0, 0, 0];
const VELOCITY_SIZE = [6, 3, 3, 1, 1, 0, 0, 0];

/**
 * The tree of a model's joints, rooted at ground and the fixed bodies. The model is one
 * schemas/articulation.ts accepts (no loops, distance joints or joints on particles; the
 * loop test here is the walk's own invariant).
 */
export function buildTree(
  sys: BodySystem,
  joints: readonly JointSpec[],
  motors: readonly MotorSpec[],
  /** The model pose, which the joints' points, axes and motors are given against. */
  pose: Pose,
): ArticulatedTree {
  const n = sys.numBodies;
  const fixedOrGround = (b: number) => b < 0 || sys.kind[b] === BodyKind.FIXED;
  const adjacency: number[][] = Array.from({ length: n }, () => []);
  joints.forEach((j, k) => {
    const a = bodyIndex(sys, j.a.body);
    const b = bodyIndex(sys, j.b.body);
    if (!fixedOrGround(a)) adjacency[a].push(k);
    if (!fixedOrGround(b)) adjacency[b].push(k);
  });
  // breadth-first from the joints to ground and fixed bodies, then from each free body
  const slotOf = new Int32Array(n).fill(-1);
  const usedJoint = new Uint8Array(joints.length);
  const order: number[] = [];
  const parentSlot: number[] = [];
  const via: number[] = [];
  const visit = (body: number, parent: number, joint: number) => {
    slotOf[body] = order.length;
    order.push(body);
    parentSlot.push(parent);
    via.push(joint);
    if (joint >= 0) usedJoint[joint] = 1;
  };
  const other = (k: number, b: number) => {
    const a = bodyIndex(sys, joints[k].a.body);
    return a === b ? bodyIndex(sys, joints[k].b.body) : a;
  };
  joints.forEach((j, k) => {
    const a = bodyIndex(sys, j.a.body);
    const b = bodyIndex(sys, j.b.body);
    if (fixedOrGround(a) && !fixedOrGround(b) && slotOf[b] < 0) visit(b, -1, k);
    else if (fixedOrGround(b) && !fixedOrGround(a) && slotOf[a] < 0) visit(a, -1, k);
  });
  for (let b = 0; b < n; b++)
    if (slotOf[b] < 0 && sys.kind[b] !== BodyKind.FIXED && adjacency[b].length === 0)
      visit(b, -1, -1);
  for (let head = 0; ; head++) {
    if (head === order.length) {
      // a jointed component without ground: its first body is a free root
      const b = slotOf.findIndex((s, i) => s < 0 && sys.kind[i] !== BodyKind.FIXED);
      if (b < 0) break;
      visit(b, -1, -1);
    }
    const body = order[head];
    for (const k of adjacency[body]) {
      if (usedJoint[k]) continue;
      const c = other(k, body);
      if (fixedOrGround(c) || slotOf[c] >= 0)
        throw new Error(`joint "${joints[k].id}" closes a loop (schemas/articulation.ts)`);
      visit(c, head, k);
    }
  }
  const drives = new Map(
    motors.map((m) => [
      m.joint,
      compileTimeFunction((m.angle ?? m.offset) as NonNullable<MotorSpec["angle"]>),
    ]),
  );
  return new ArticulatedTree(sys, joints, drives, pose, order, parentSlot, via);
}

function bodyIndex(sys: BodySystem, id: string | undefined): number {
  if (id === undefined || id === "ground") return -1;
  const b = sys.index.get(id);
  if (b === undefined) throw new Error(`unknown body "${id}"`);
  return b;
}

export class ArticulatedTree {
  readonly sys: BodySystem;
  readonly numSlots: number;
  /** Body index of each slot (parents before children). */
  readonly body: Int32Array;
  /** Parent slot, −1 for a root. */
  readonly parent: Int32Array;
  /** Each slot's parent body: its parent slot's body, a root's fixed body, or −1. */
  private readonly parentBodyOf: Int32Array;
  readonly kind: Uint8Array;
  /** Model index of the slot's joint, −1 for a free root. */
  readonly joint: Int32Array;
  /** Offsets of each slot's coordinates in y and u; sizes of y and u. */
  readonly yOffset: Int32Array;
  readonly uOffset: Int32Array;
  readonly ySize: number;
  readonly uSize: number;
  /** The joint point on the parent (parent frame, from its centre; W for ground), m. */
  private readonly anchorParent: Float64Array;
  /** The joint point on the child (child frame, from its centre), m. */
  private readonly anchorChild: Float64Array;
  /** The joint axis in the parent's frame (W for ground), unit. */
  private readonly axis: Float64Array;
  /**
   * Relative rotation q_p* ⊗ q_c at the step's start (revolute, prismatic, fixed), at the
   * model pose (driven joints).
   */
  private readonly relative0: Float64Array;
  /** Relative rotation q_p* ⊗ q_c at the model pose (revolute, prismatic, fixed). */
  private readonly relativeModel: Float64Array;
  /** A driven prismatic joint's offset at the model pose (m). */
  private readonly offset0: Float64Array;
  /** The motor's prescription of each driven slot, null elsewhere. */
  private readonly drive: (CompiledTimeFunction | null)[];
  /**
   * A driven slot's prescribed angle or offset φ*(t) from the model pose (rad or m;
   * unbounded: what a joint coordinate reads, joint-coordinate.ts guide), rate and
   * acceleration at the last `setState`'s time.
   */
  readonly driveValue: Float64Array;
  readonly driveRate: Float64Array;
  private readonly driveAccel: Float64Array;
  /** A driven slot's effort Sᵀ w along its axis (N·m or N) from the last `accelerations`. */
  readonly driveEffort: Float64Array;
  // per-slot kinematics of the last `setState` (W): joint point P, axis ê
  private readonly point: Float64Array;
  private readonly axisWorld: Float64Array;
  // the articulated-body algorithm's per-slot quantities
  /**
   * Each slot's articulated inertia (6 × 6, row-major), symmetric: the backward pass keeps
   * its upper triangle only (K_αα's and K_tt's upper triangles and the whole K_αt, the 21
   * entries the spherical reduction and jointWrench read); mirrorLower fills the rest where a full
   * K is read (reduceGeneral's free root). Measured on the 100-link chain: accelerations 11.5 →
   * 10.2 µs, 5 % of its step.
   */
  private readonly K: Float64Array;
  private readonly bias: Float64Array;
  private readonly kappa: Float64Array;
  /** K S (6 × k, row-major), D⁻¹ (k × k), −Sᵀ b (k) of each slot's joint. */
  private readonly U: Float64Array;
  private readonly Dinv: Float64Array;
  private readonly free: Float64Array;
  /** Each slot's A = (α, a_P) of the last `accelerations`. */
  private readonly A: Float64Array;
  /** Each slot's joint wrench (n_P, f) on its body from the last `accelerations` (W). */
  readonly wrench: Float64Array;
  private readonly work = new Float64Array(36);
  private readonly Dk = new Float64Array(36);
  private readonly tmpQ = new Float64Array(4);
  private readonly snapScratch = new Float64Array(4);
  private readonly scratch = Array.from({ length: 4 }, () => new Float64Array(3));

  constructor(
    sys: BodySystem,
    joints: readonly JointSpec[],
    /** The motors' prescriptions by joint id. */
    drives: ReadonlyMap<string, CompiledTimeFunction>,
    pose: Pose,
    order: readonly number[],
    parentSlot: readonly number[],
    via: readonly number[],
  ) {
    this.sys = sys;
    const n = order.length;
    this.numSlots = n;
    this.body = Int32Array.from(order);
    this.parent = Int32Array.from(parentSlot);
    this.joint = Int32Array.from(via);
    // a root's parent body: a fixed body, or −1 (ground or none)
    const rootParentBody = new Int32Array(n).fill(-1);
    this.kind = new Uint8Array(n);
    this.yOffset = new Int32Array(n);
    this.uOffset = new Int32Array(n);
    this.anchorParent = new Float64Array(3 * n);
    this.anchorChild = new Float64Array(3 * n);
    this.axis = new Float64Array(3 * n);
    this.relative0 = new Float64Array(4 * n);
    this.relativeModel = new Float64Array(4 * n);
    this.offset0 = new Float64Array(n);
    this.drive = new Array<CompiledTimeFunction | null>(n).fill(null);
    this.driveValue = new Float64Array(n);
    this.driveRate = new Float64Array(n);
    this.driveAccel = new Float64Array(n);
    this.driveEffort = new Float64Array(n);
    this.point = new Float64Array(3 * n);
    this.axisWorld = new Float64Array(3 * n);
    this.K = new Float64Array(36 * n);
    this.bias = new Float64Array(6 * n);
    this.kappa = new Float64Array(6 * n);
    this.U = new Float64Array(36 * n);
    this.Dinv = new Float64Array(36 * n);
    this.free = new Float64Array(6 * n);
    this.A = new Float64Array(6 * n);
    this.wrench = new Float64Array(6 * n);
    this.delta = new Float64Array(6 * n);
    let ys = 0;
    let us = 0;
    for (let i = 0; i < n; i++) {
      const b = order[i];
      const k = via[i];
      let kind: number;
      if (k < 0) kind = sys.kind[b] === BodyKind.PARTICLE ? SlotKind.PARTICLE : SlotKind.FREE;
      else {
        const j = joints[k];
        const drive = drives.get(j.id) ?? null;
        this.drive[i] = drive;
        kind =
          j.type === "spherical"
            ? SlotKind.SPHERICAL
            : j.type === "revolute"
              ? drive
                ? SlotKind.DRIVEN_REVOLUTE
                : SlotKind.REVOLUTE
              : j.type === "prismatic"
                ? drive
                  ? SlotKind.DRIVEN_PRISMATIC
                  : SlotKind.PRISMATIC
                : SlotKind.FIXED;
        // the child is the end that is this slot's body; the parent the other
        const childIsB = bodyIndex(sys, j.b.body) === b;
        const childEnd = childIsB ? j.b : j.a;
        const parentEnd = childIsB ? j.a : j.b;
        const pb = bodyIndex(sys, parentEnd.body);
        if (parentSlot[i] < 0) rootParentBody[i] = pb;
        for (let d = 0; d < 3; d++) this.anchorChild[3 * i + d] = childEnd.point[d];
        const w = new Float64Array(3);
        if (kind === SlotKind.FIXED) {
          // the child's point in the parent's frame: the relative pose of the model is held
          bodyToWorld(pose, b, childEnd.point, w);
          worldToBody(pose, pb, w, this.anchorParent, 3 * i);
        } else for (let d = 0; d < 3; d++) this.anchorParent[3 * i + d] = parentEnd.point[d];
        if (j.type === "revolute" || j.type === "prismatic") {
          const len = Math.hypot(j.axis[0], j.axis[1], j.axis[2]);
          // the model gives the axis in W at the model pose: into the parent's frame
          for (let d = 0; d < 3; d++) w[d] = j.axis[d] / len;
          rotateToBody(pose, pb, w, this.axis, 3 * i);
          // the coordinate's sign: b relative to a (joint-coordinate.ts)
          if (!childIsB) for (let d = 0; d < 3; d++) this.axis[3 * i + d] *= -1;
        }
        if (j.type !== "spherical") relativeRotation(pose, pb, b, this.relativeModel, 4 * i);
        if (drive) {
          // a motor's zero is the model pose: its relative rotation, and its offset along
          // the axis (parent frame) of the child's point from the parent's
          relativeRotation(pose, pb, b, this.relative0, 4 * i);
          const pc = new Float64Array(3);
          bodyToWorld(pose, b, childEnd.point, pc);
          worldToBody(pose, pb, pc, w, 0);
          let s0 = 0;
          for (let d = 0; d < 3; d++)
            s0 += this.axis[3 * i + d] * (w[d] - this.anchorParent[3 * i + d]);
          this.offset0[i] = s0;
        }
      }
      this.kind[i] = kind;
      this.yOffset[i] = ys;
      this.uOffset[i] = us;
      ys += POSITION_SIZE[kind];
      us += VELOCITY_SIZE[kind];
    }
    this.ySize = ys;
    this.uSize = us;
    this.parentBodyOf = Int32Array.from({ length: n }, (_, i) =>
      parentSlot[i] >= 0 ? order[parentSlot[i]] : rootParentBody[i],
    );
  }

  /**
   * The coordinates of the bodies' current state (y, u), and the step's reference relative
   * rotations. Velocities outside a joint's motion are dropped (a state off the joints,
   * as a model's initial velocities may be, is projected there; positions likewise by
   * `setState`, which places each child at its joint).
   */
  beginStep(y: Float64Array, u: Float64Array): void {
    const sys = this.sys;
    const { pos, quat, vel, omega } = sys;
    const q = this.tmpQ;
    for (let i = 0; i < this.numSlots; i++) {
      const b = this.body[i];
      const yo = this.yOffset[i];
      const uo = this.uOffset[i];
      const kind = this.kind[i];
      if (kind === SlotKind.FREE) {
        for (let d = 0; d < 3; d++) y[yo + d] = pos[3 * b + d];
        for (let d = 0; d < 4; d++) y[yo + 3 + d] = quat[4 * b + d];
        for (let d = 0; d < 3; d++) {
          u[uo + d] = omega[3 * b + d];
          u[uo + 3 + d] = vel[3 * b + d];
        }
        continue;
      }
      if (kind === SlotKind.PARTICLE) {
        for (let d = 0; d < 3; d++) {
          y[yo + d] = pos[3 * b + d];
          u[uo + d] = vel[3 * b + d];
        }
        continue;
      }
      // a driven joint's pose is the motor's, from the model pose: nothing to read
      if (kind === SlotKind.DRIVEN_REVOLUTE || kind === SlotKind.DRIVEN_PRISMATIC) continue;
      const pb = this.parentBodyOf[i];
      // q_rel = q_p* ⊗ q_c
      if (pb >= 0) {
        q[0] = quat[4 * pb];
        for (let d = 1; d < 4; d++) q[d] = -quat[4 * pb + d];
      } else {
        q[0] = 1;
        q[1] = q[2] = q[3] = 0;
      }
      const rel = kind === SlotKind.SPHERICAL ? y : this.relative0;
      const ro = kind === SlotKind.SPHERICAL ? yo : 4 * i;
      quatMul(rel, ro, q, 0, quat, 4 * b);
      normalizeQuat(rel, ro);
      const wpx = pb >= 0 ? omega[3 * pb] : 0;
      const wpy = pb >= 0 ? omega[3 * pb + 1] : 0;
      const wpz = pb >= 0 ? omega[3 * pb + 2] : 0;
      const rx = omega[3 * b] - wpx;
      const ry = omega[3 * b + 1] - wpy;
      const rz = omega[3 * b + 2] - wpz;
      if (kind === SlotKind.SPHERICAL) {
        u[uo] = rx;
        u[uo + 1] = ry;
        u[uo + 2] = rz;
        continue;
      }
      if (kind === SlotKind.FIXED) continue;
      // the axis in W at the start
      const e = this.axisWorld;
      parentRotate(sys, pb, this.axis, 3 * i, e, 3 * i);
      if (kind === SlotKind.REVOLUTE) {
        y[yo] = 0;
        u[uo] = e[3 * i] * rx + e[3 * i + 1] * ry + e[3 * i + 2] * rz;
        continue;
      }
      // prismatic: s = ê·(P_c − P_p), ṡ = ê·(v of P_c on the child − v of that point on the parent)
      const pc = this.scratch[0];
      const pp = this.scratch[1];
      const vc = this.scratch[2];
      const vp = this.scratch[3];
      bodyToWorld(sys, b, this.anchorChild.subarray(3 * i, 3 * i + 3), pc);
      bodyToWorld(sys, pb, this.anchorParent.subarray(3 * i, 3 * i + 3), pp);
      pointVelocity(sys, b, pc, vc);
      if (pb >= 0) pointVelocity(sys, pb, pc, vp);
      else vp.fill(0);
      let s = 0;
      let sd = 0;
      for (let d = 0; d < 3; d++) {
        s += e[3 * i + d] * (pc[d] - pp[d]);
        sd += e[3 * i + d] * (vc[d] - vp[d]);
      }
      y[yo] = s;
      u[uo] = sd;
    }
  }

  /**
   * After beginStep on a state set from outside (an input, ArticulatedIntegrator.stateMoved):
   * each revolute joint's relative rotation to the nearest its hinge allows — the twist
   * about its axis of its deviation from the model pose's, the swing dropped (q_rel =
   * R(ê, θ) ⊗ Q_model, ê in the parent's frame) — and each prismatic or fixed joint's to the
   * model pose's. setState then places every child on its joint (its point at the parent's,
   * a slide along the axis).
   */
  snapRotations(): void {
    const r = this.relative0;
    const m = this.relativeModel;
    const d = this.tmpQ;
    const c = this.snapScratch;
    for (let i = 0; i < this.numSlots; i++) {
      const kind = this.kind[i];
      const o = 4 * i;
      if (kind === SlotKind.PRISMATIC || kind === SlotKind.FIXED) {
        for (let k = 0; k < 4; k++) r[o + k] = m[o + k];
        continue;
      }
      if (kind !== SlotKind.REVOLUTE) continue;
      // the deviation d = q_rel ⊗ Q_model*, and its twist about ê: (d_w, (d_v · ê) ê)
      c[0] = m[o];
      for (let k = 1; k < 4; k++) c[k] = -m[o + k];
      quatMul(d, 0, r, o, c, 0);
      const a = this.axis;
      const s = d[1] * a[3 * i] + d[2] * a[3 * i + 1] + d[3] * a[3 * i + 2];
      c[0] = d[0];
      for (let k = 0; k < 3; k++) c[k + 1] = s * a[3 * i + k];
      const l = Math.hypot(c[0], c[1], c[2], c[3]);
      // (a half-turn swing leaves no twist to keep: the model's)
      if (l < 1e-12) {
        c[0] = 1;
        c[1] = c[2] = c[3] = 0;
      } else for (let k = 0; k < 4; k++) c[k] /= l;
      quatMul(r, o, c, 0, m, o);
      normalizeQuat(r, o);
    }
  }

  /**
   * Places the bodies at coordinates (y, u) and time t (s; the driven joints' prescribed
   * pose) by forward kinematics, parents first: positions, orientations, velocities and the
   * derived rotations and inertias of the body system (the inverse world inertias only
   * with `inverse`: a stage of a step needs none). Quaternion coordinates are read
   * normalized.
   */
  setState(y: Float64Array, u: Float64Array, t: number, inverse = true): void {
    const sys = this.sys;
    const { pos, quat, vel, omega, rotation } = sys;
    const P = this.point;
    const E = this.axisWorld;
    const q = this.tmpQ;
    for (let i = 0; i < this.numSlots; i++) {
      const b = this.body[i];
      const yo = this.yOffset[i];
      const uo = this.uOffset[i];
      const kind = this.kind[i];
      if (kind === SlotKind.FREE || kind === SlotKind.PARTICLE) {
        for (let d = 0; d < 3; d++) pos[3 * b + d] = P[3 * i + d] = y[yo + d];
        if (kind === SlotKind.PARTICLE) {
          for (let d = 0; d < 3; d++) vel[3 * b + d] = u[uo + d];
          continue;
        }
        for (let d = 0; d < 4; d++) q[d] = y[yo + 3 + d];
        normalizeQuat(q, 0);
        for (let d = 0; d < 4; d++) quat[4 * b + d] = q[d];
        updateBodyDerived(sys, b, inverse);
        for (let d = 0; d < 3; d++) {
          omega[3 * b + d] = u[uo + d];
          vel[3 * b + d] = u[uo + 3 + d];
        }
        continue;
      }
      const pb = this.parentBodyOf[i];
      // the relative rotation q_rel (normalized), then q_c = q_p ⊗ q_rel
      let rw: number;
      let rx0: number;
      let ry0: number;
      let rz0: number;
      if (kind === SlotKind.SPHERICAL) {
        rw = y[yo];
        rx0 = y[yo + 1];
        ry0 = y[yo + 2];
        rz0 = y[yo + 3];
        const l = 1 / Math.sqrt(rw * rw + rx0 * rx0 + ry0 * ry0 + rz0 * rz0);
        rw *= l;
        rx0 *= l;
        ry0 *= l;
        rz0 *= l;
      } else {
        const r0 = this.relative0;
        rw = r0[4 * i];
        rx0 = r0[4 * i + 1];
        ry0 = r0[4 * i + 2];
        rz0 = r0[4 * i + 3];
        let angle = 0;
        if (kind === SlotKind.REVOLUTE) angle = y[yo];
        else if (kind === SlotKind.DRIVEN_REVOLUTE || kind === SlotKind.DRIVEN_PRISMATIC) {
          const drive = this.drive[i] as CompiledTimeFunction;
          angle = drive.value(t);
          this.driveValue[i] = angle;
          this.driveRate[i] = drive.rate(t);
          this.driveAccel[i] = drive.accel(t);
        }
        if (kind === SlotKind.REVOLUTE || kind === SlotKind.DRIVEN_REVOLUTE) {
          // rotation θ about the parent-frame axis, then the reference relative rotation
          // (the step's start; a driven joint's, the model pose)
          const half = 0.5 * angle;
          const sn = Math.sin(half);
          const cw = Math.cos(half);
          const ax = sn * this.axis[3 * i];
          const ay = sn * this.axis[3 * i + 1];
          const az = sn * this.axis[3 * i + 2];
          const w = cw * rw - ax * rx0 - ay * ry0 - az * rz0;
          const x = cw * rx0 + ax * rw + ay * rz0 - az * ry0;
          const yq = cw * ry0 - ax * rz0 + ay * rw + az * rx0;
          const z = cw * rz0 + ax * ry0 - ay * rx0 + az * rw;
          rw = w;
          rx0 = x;
          ry0 = yq;
          rz0 = z;
        }
      }
      if (pb >= 0) {
        const pw = quat[4 * pb];
        const px = quat[4 * pb + 1];
        const py = quat[4 * pb + 2];
        const pz = quat[4 * pb + 3];
        quat[4 * b] = pw * rw - px * rx0 - py * ry0 - pz * rz0;
        quat[4 * b + 1] = pw * rx0 + px * rw + py * rz0 - pz * ry0;
        quat[4 * b + 2] = pw * ry0 - px * rz0 + py * rw + pz * rx0;
        quat[4 * b + 3] = pw * rz0 + px * ry0 - py * rx0 + pz * rw;
      } else {
        quat[4 * b] = rw;
        quat[4 * b + 1] = rx0;
        quat[4 * b + 2] = ry0;
        quat[4 * b + 3] = rz0;
      }
      updateBodyDerived(sys, b, inverse);
      // joint point: on the parent (plus the slide), W: x_p + R_p a_p (ground: a_p)
      const ap = this.anchorParent;
      if (pb >= 0) {
        const Rp = 9 * pb;
        const ax = ap[3 * i];
        const ay = ap[3 * i + 1];
        const az = ap[3 * i + 2];
        P[3 * i] = pos[3 * pb] + rotation[Rp] * ax + rotation[Rp + 1] * ay + rotation[Rp + 2] * az;
        P[3 * i + 1] =
          pos[3 * pb + 1] + rotation[Rp + 3] * ax + rotation[Rp + 4] * ay + rotation[Rp + 5] * az;
        P[3 * i + 2] =
          pos[3 * pb + 2] + rotation[Rp + 6] * ax + rotation[Rp + 7] * ay + rotation[Rp + 8] * az;
      } else {
        P[3 * i] = ap[3 * i];
        P[3 * i + 1] = ap[3 * i + 1];
        P[3 * i + 2] = ap[3 * i + 2];
      }
      if (kind !== SlotKind.SPHERICAL && kind !== SlotKind.FIXED)
        parentRotate(sys, pb, this.axis, 3 * i, E, 3 * i);
      if (kind === SlotKind.PRISMATIC)
        for (let d = 0; d < 3; d++) P[3 * i + d] += E[3 * i + d] * y[yo];
      else if (kind === SlotKind.DRIVEN_PRISMATIC) {
        const offset = this.offset0[i] + (this.drive[i] as CompiledTimeFunction).value(t);
        for (let d = 0; d < 3; d++) P[3 * i + d] += E[3 * i + d] * offset;
      }
      // centre: x_c = P − R_c a_c
      const R = 9 * b;
      const ac = 3 * i;
      const cx = this.anchorChild[ac];
      const cy = this.anchorChild[ac + 1];
      const cz = this.anchorChild[ac + 2];
      const rx = -(rotation[R] * cx + rotation[R + 1] * cy + rotation[R + 2] * cz);
      const ry = -(rotation[R + 3] * cx + rotation[R + 4] * cy + rotation[R + 5] * cz);
      const rz = -(rotation[R + 6] * cx + rotation[R + 7] * cy + rotation[R + 8] * cz);
      pos[3 * b] = P[3 * i] + rx;
      pos[3 * b + 1] = P[3 * i + 1] + ry;
      pos[3 * b + 2] = P[3 * i + 2] + rz;
      // velocities: ω_c = ω_p + relative; v_P = v_p + ω_p × (P − x_p) (+ ê ṡ); v_c = v_P + ω_c × r
      let wx = 0;
      let wy = 0;
      let wz = 0;
      let vx = 0;
      let vy = 0;
      let vz = 0;
      if (this.parent[i] >= 0) {
        wx = omega[3 * pb];
        wy = omega[3 * pb + 1];
        wz = omega[3 * pb + 2];
        const dx = P[3 * i] - pos[3 * pb];
        const dy = P[3 * i + 1] - pos[3 * pb + 1];
        const dz = P[3 * i + 2] - pos[3 * pb + 2];
        vx = vel[3 * pb] + wy * dz - wz * dy;
        vy = vel[3 * pb + 1] + wz * dx - wx * dz;
        vz = vel[3 * pb + 2] + wx * dy - wy * dx;
      }
      if (kind === SlotKind.SPHERICAL) {
        wx += u[uo];
        wy += u[uo + 1];
        wz += u[uo + 2];
      } else if (kind === SlotKind.REVOLUTE) {
        wx += E[3 * i] * u[uo];
        wy += E[3 * i + 1] * u[uo];
        wz += E[3 * i + 2] * u[uo];
      } else if (kind === SlotKind.PRISMATIC) {
        vx += E[3 * i] * u[uo];
        vy += E[3 * i + 1] * u[uo];
        vz += E[3 * i + 2] * u[uo];
      } else if (kind === SlotKind.DRIVEN_REVOLUTE) {
        const r = this.driveRate[i];
        wx += E[3 * i] * r;
        wy += E[3 * i + 1] * r;
        wz += E[3 * i + 2] * r;
      } else if (kind === SlotKind.DRIVEN_PRISMATIC) {
        const r = this.driveRate[i];
        vx += E[3 * i] * r;
        vy += E[3 * i + 1] * r;
        vz += E[3 * i + 2] * r;
      }
      omega[3 * b] = wx;
      omega[3 * b + 1] = wy;
      omega[3 * b + 2] = wz;
      vel[3 * b] = vx + wy * rz - wz * ry;
      vel[3 * b + 1] = vy + wz * rx - wx * rz;
      vel[3 * b + 2] = vz + wx * ry - wy * rx;
    }
    // each moved body's rotation and inertias were refreshed as it was placed
    sys.stateVersion++;
    sys.poseVersion++;
  }

  /**
   * The inverse world inertias of the state the last `setState` placed without them (its
   * rotations and world inertias computed again, the same bits), and the state's versions
   * moved as a `setState` moves them: what `setState` with `inverse` would leave there,
   * without its kinematics again (the articulated integrator's step ends at its last stage's
   * state).
   */
  completeState(): void {
    const sys = this.sys;
    for (let i = 0; i < this.numSlots; i++) updateBodyDerived(sys, this.body[i], true);
    sys.stateVersion++;
    sys.poseVersion++;
  }

  /**
   * ẏ of coordinates (y, u) at the state `setState` placed: angles and offsets their rates,
   * quaternions ½ (0, ω) ⊗ q (spherical: ω the relative angular velocity in the parent's
   * frame, so that the child turns by it relative to the parent).
   */
  positionRates(y: Float64Array, u: Float64Array, out: Float64Array): void {
    const sys = this.sys;
    const { rotation } = sys;
    for (let i = 0; i < this.numSlots; i++) {
      const yo = this.yOffset[i];
      const uo = this.uOffset[i];
      switch (this.kind[i]) {
        case SlotKind.FREE:
          for (let d = 0; d < 3; d++) out[yo + d] = u[uo + 3 + d];
          quatRate(y, yo + 3, u[uo], u[uo + 1], u[uo + 2], out);
          break;
        case SlotKind.PARTICLE:
          for (let d = 0; d < 3; d++) out[yo + d] = u[uo + d];
          break;
        case SlotKind.SPHERICAL: {
          const pb = this.parentBodyOf[i];
          let wx = u[uo];
          let wy = u[uo + 1];
          let wz = u[uo + 2];
          if (pb >= 0) {
            // Rᵀ_p ω_rel
            const R = 9 * pb;
            const x = rotation[R] * wx + rotation[R + 3] * wy + rotation[R + 6] * wz;
            const yv = rotation[R + 1] * wx + rotation[R + 4] * wy + rotation[R + 7] * wz;
            const z = rotation[R + 2] * wx + rotation[R + 5] * wy + rotation[R + 8] * wz;
            wx = x;
            wy = yv;
            wz = z;
          }
          quatRate(y, yo, wx, wy, wz, out);
          break;
        }
        case SlotKind.REVOLUTE:
        case SlotKind.PRISMATIC:
          out[yo] = u[uo];
          break;
      }
    }
  }

  /**
   * The joint rates nearest the bodies' current velocities in the mass metric,
   *   u = argmin ‖J u − v‖²_M  (the driven joints at their motors' rates),
   * i.e. M(q) u = Jᵀ M v: what an impulse p on the bodies does to the tree, Δu = M(q)⁻¹ Jᵀ p
   * (Gauss's principle; the maximal-coordinate integrators project velocities in the same
   * metric, constraints/project.ts). Solved by the articulated-body algorithm at zero
   * velocity with the bodies' momenta (m v, I ω, about the centre) as the applied forces and
   * each driven joint's rate as its prescribed "acceleration". `y`: the coordinates
   * beginStep read; `momenta`: scratch in the body system's force layout. Leaves the bodies
   * at (y, 0) with zero velocities: the caller places them at (y, out). False when a
   * joint's D is singular.
   */
  nearestRates(y: Float64Array, t: number, momenta: Float64Array, out: Float64Array): boolean {
    const { vel, omega, mass, inertiaWorld, dofOffset } = this.sys;
    momenta.fill(0);
    for (let i = 0; i < this.numSlots; i++) {
      const b = this.body[i];
      const o = dofOffset[b];
      const m = mass[b];
      for (let d = 0; d < 3; d++) momenta[o + d] = m * vel[3 * b + d];
      if (this.kind[i] === SlotKind.PARTICLE) continue;
      const I = 9 * b;
      const wx = omega[3 * b];
      const wy = omega[3 * b + 1];
      const wz = omega[3 * b + 2];
      for (let d = 0; d < 3; d++)
        momenta[o + 3 + d] =
          inertiaWorld[I + 3 * d] * wx +
          inertiaWorld[I + 3 * d + 1] * wy +
          inertiaWorld[I + 3 * d + 2] * wz;
    }
    out.fill(0);
    this.setState(y, out, t);
    for (let i = 0; i < this.numSlots; i++) {
      const b = this.body[i];
      for (let d = 0; d < 3; d++) vel[3 * b + d] = omega[3 * b + d] = 0;
      if (this.kind[i] === SlotKind.DRIVEN_REVOLUTE || this.kind[i] === SlotKind.DRIVEN_PRISMATIC)
        this.driveAccel[i] = this.driveRate[i];
    }
    return this.accelerations(out, momenta, out);
  }

  /**
   * u̇ at the state `setState` placed, under the applied generalized forces `f` (the body
   * system's layout: force then torque per body, N and N·m, W, about the centre), by the
   * articulated-body algorithm (file comment); with `wrenches`, each joint's wrench on its
   * child into `wrench`. False when a joint's D is singular (a body of no inertia along it).
   */
  accelerations(u: Float64Array, f: Float64Array, out: Float64Array, wrenches = false): boolean {
    this.K.fill(0);
    this.bias.fill(0);
    for (let i = this.numSlots - 1; i >= 0; i--) {
      const kind = this.kind[i];
      if (kind === SlotKind.PARTICLE) {
        const b = this.body[i];
        const o = this.sys.dofOffset[b];
        const uo = this.uOffset[i];
        for (let d = 0; d < 3; d++) out[uo + d] = f[o + d] / this.sys.mass[b];
        continue;
      }
      if (!this.backwardStep(i, f, u)) return false;
    }
    const { A, kappa, U, Dinv, free, wrench } = this;
    const P = this.point;
    const E = this.axisWorld;
    for (let i = 0; i < this.numSlots; i++) {
      const kind = this.kind[i];
      if (kind === SlotKind.PARTICLE) continue;
      const k6 = 6 * i;
      const k36 = 36 * i;
      const p = this.parent[i];
      const uo = this.uOffset[i];
      if (kind === SlotKind.SPHERICAL) {
        // X = T A_p + κ (κ_α = 0); α = s − Π X_t (backwardStep), ẇ = α − X_α
        let xa = 0;
        let ya = 0;
        let za = 0;
        let xt = kappa[k6 + 3];
        let yt = kappa[k6 + 4];
        let zt = kappa[k6 + 5];
        if (p >= 0) {
          const p6 = 6 * p;
          const dx = P[3 * i] - P[3 * p];
          const dy = P[3 * i + 1] - P[3 * p + 1];
          const dz = P[3 * i + 2] - P[3 * p + 2];
          xa = A[p6];
          ya = A[p6 + 1];
          za = A[p6 + 2];
          xt += A[p6 + 3] + ya * dz - za * dy;
          yt += A[p6 + 4] + za * dx - xa * dz;
          zt += A[p6 + 5] + xa * dy - ya * dx;
        }
        const ax = free[k6] - (U[k36] * xt + U[k36 + 1] * yt + U[k36 + 2] * zt);
        const ay = free[k6 + 1] - (U[k36 + 3] * xt + U[k36 + 4] * yt + U[k36 + 5] * zt);
        const az = free[k6 + 2] - (U[k36 + 6] * xt + U[k36 + 7] * yt + U[k36 + 8] * zt);
        out[uo] = ax - xa;
        out[uo + 1] = ay - ya;
        out[uo + 2] = az - za;
        A[k6] = ax;
        A[k6 + 1] = ay;
        A[k6 + 2] = az;
        A[k6 + 3] = xt;
        A[k6 + 4] = yt;
        A[k6 + 5] = zt;
        continue;
      }
      // X = T A_p + κ into A
      for (let d = 0; d < 6; d++) A[k6 + d] = kappa[k6 + d];
      if (p >= 0) {
        const p6 = 6 * p;
        const dx = P[3 * i] - P[3 * p];
        const dy = P[3 * i + 1] - P[3 * p + 1];
        const dz = P[3 * i + 2] - P[3 * p + 2];
        const ax = A[p6];
        const ay = A[p6 + 1];
        const az = A[p6 + 2];
        A[k6] += ax;
        A[k6 + 1] += ay;
        A[k6 + 2] += az;
        A[k6 + 3] += A[p6 + 3] + ay * dz - az * dy;
        A[k6 + 4] += A[p6 + 4] + az * dx - ax * dz;
        A[k6 + 5] += A[p6 + 5] + ax * dy - ay * dx;
      }
      {
        // ü = D⁻¹ (−Sᵀ b − Uᵀ X), A = X + S ü
        const kdim = VELOCITY_SIZE[kind];
        const rhs = this.tmpR;
        for (let r = 0; r < kdim; r++) {
          let s = free[k6 + r];
          for (let c = 0; c < 6; c++) s -= U[k36 + kdim * c + r] * A[k6 + c];
          rhs[r] = s;
        }
        for (let r = 0; r < kdim; r++) {
          let s = 0;
          for (let c = 0; c < kdim; c++) s += Dinv[k36 + kdim * r + c] * rhs[c];
          out[uo + r] = s;
        }
        if (kind === SlotKind.REVOLUTE)
          for (let d = 0; d < 3; d++) A[k6 + d] += E[3 * i + d] * out[uo];
        else if (kind === SlotKind.PRISMATIC)
          for (let d = 0; d < 3; d++) A[k6 + 3 + d] += E[3 * i + d] * out[uo];
        else if (kind === SlotKind.FREE) for (let d = 0; d < 6; d++) A[k6 + d] += out[uo + d];
      }
      if (kind === SlotKind.DRIVEN_REVOLUTE || kind === SlotKind.DRIVEN_PRISMATIC) {
        // the motor's effort: the wrench's component along the joint's motion, Sᵀ w
        this.jointWrench(i);
        const o = k6 + (kind === SlotKind.DRIVEN_REVOLUTE ? 0 : 3);
        this.driveEffort[i] =
          E[3 * i] * wrench[o] + E[3 * i + 1] * wrench[o + 1] + E[3 * i + 2] * wrench[o + 2];
      }
    }
    if (wrenches) this.jointWrenches();
    return true;
  }

  /**
   * Every joint's wrench on its child, w = K A + b, into `wrench`, from the K, b and A the
   * last `accelerations` left (what its `wrenches` flag computes, for a caller that learns
   * only afterwards which evaluation's wrenches it needs: the articulated integrator, at its
   * last accepted sub-step's end, instead of at every sub-step's last stage).
   */
  jointWrenches(): void {
    for (let i = 0; i < this.numSlots; i++)
      if (this.kind[i] !== SlotKind.PARTICLE) this.jointWrench(i);
  }

  /**
   * Slot i's joint wrench w = K A + b on its body (after the forward pass reached it), K
   * read from its upper triangle (K symmetric, see K): row r is Σ_c K_{min(r,c),max(r,c)} A_c.
   */
  private jointWrench(i: number): void {
    const { K, bias, A, wrench } = this;
    const k6 = 6 * i;
    const k = 36 * i;
    const a0 = A[k6];
    const a1 = A[k6 + 1];
    const a2 = A[k6 + 2];
    const a3 = A[k6 + 3];
    const a4 = A[k6 + 4];
    const a5 = A[k6 + 5];
    const k01 = K[k + 1];
    const k02 = K[k + 2];
    const k03 = K[k + 3];
    const k04 = K[k + 4];
    const k05 = K[k + 5];
    const k12 = K[k + 8];
    const k13 = K[k + 9];
    const k14 = K[k + 10];
    const k15 = K[k + 11];
    const k23 = K[k + 15];
    const k24 = K[k + 16];
    const k25 = K[k + 17];
    const k34 = K[k + 22];
    const k35 = K[k + 23];
    const k45 = K[k + 29];
    // (summed in the order b_r, then c = 0 … 5: the same bits as the full row's product)
    wrench[k6] = bias[k6] + K[k] * a0 + k01 * a1 + k02 * a2 + k03 * a3 + k04 * a4 + k05 * a5;
    wrench[k6 + 1] =
      bias[k6 + 1] + k01 * a0 + K[k + 7] * a1 + k12 * a2 + k13 * a3 + k14 * a4 + k15 * a5;
    wrench[k6 + 2] =
      bias[k6 + 2] + k02 * a0 + k12 * a1 + K[k + 14] * a2 + k23 * a3 + k24 * a4 + k25 * a5;
    wrench[k6 + 3] =
      bias[k6 + 3] + k03 * a0 + k13 * a1 + k23 * a2 + K[k + 21] * a3 + k34 * a4 + k35 * a5;
    wrench[k6 + 4] =
      bias[k6 + 4] + k04 * a0 + k14 * a1 + k24 * a2 + k34 * a3 + K[k + 28] * a4 + k45 * a5;
    wrench[k6 + 5] =
      bias[k6 + 5] + k05 * a0 + k15 * a1 + k25 * a2 + k35 * a3 + k45 * a4 + K[k + 35] * a5;
  }

  /**
   * κ of slot i's joint (file comment): ω_p × (ω_p × d) in a_P, d from the parent's point;
   * ω_p × ê θ̇ in α (revolute); 2 ω_p × ê ṡ in a_P (prismatic); with a motor, its rate in
   * place of θ̇ or ṡ and its prescribed acceleration S q̈*(t) added. The parent's terms are
   * zero below ground or a fixed body, and a free root has none. (A spherical joint's is
   * backwardStep's own.)
   */
  private velocityProduct(i: number, u: Float64Array): void {
    const kappa = this.kappa;
    const k6 = 6 * i;
    const p = this.parent[i];
    const kind = this.kind[i];
    if (kind === SlotKind.FREE) {
      for (let d = 0; d < 6; d++) kappa[k6 + d] = 0;
      return;
    }
    // ω_p × (ω_p × d) in a_P (0 below ground or a fixed body)
    const { omega } = this.sys;
    const P = this.point;
    const pb = p >= 0 ? this.body[p] : -1;
    const px = p >= 0 ? omega[3 * pb] : 0;
    const py = p >= 0 ? omega[3 * pb + 1] : 0;
    const pz = p >= 0 ? omega[3 * pb + 2] : 0;
    if (p >= 0) {
      const dx = P[3 * i] - P[3 * p];
      const dy = P[3 * i + 1] - P[3 * p + 1];
      const dz = P[3 * i + 2] - P[3 * p + 2];
      const ex = py * dz - pz * dy;
      const ey = pz * dx - px * dz;
      const ez = px * dy - py * dx;
      kappa[k6 + 3] = py * ez - pz * ey;
      kappa[k6 + 4] = pz * ex - px * ez;
      kappa[k6 + 5] = px * ey - py * ex;
    } else {
      kappa[k6 + 3] = 0;
      kappa[k6 + 4] = 0;
      kappa[k6 + 5] = 0;
    }
    kappa[k6] = 0;
    kappa[k6 + 1] = 0;
    kappa[k6 + 2] = 0;
    const E = this.axisWorld;
    const revolute = kind === SlotKind.REVOLUTE || kind === SlotKind.DRIVEN_REVOLUTE;
    const prismatic = kind === SlotKind.PRISMATIC || kind === SlotKind.DRIVEN_PRISMATIC;
    const driven = kind === SlotKind.DRIVEN_REVOLUTE || kind === SlotKind.DRIVEN_PRISMATIC;
    if (driven) {
      // the prescribed acceleration along the axis, S q̈*(t): in α (revolute) or a_P
      const o = k6 + (revolute ? 0 : 3);
      const acc = this.driveAccel[i];
      for (let d = 0; d < 3; d++) kappa[o + d] += E[3 * i + d] * acc;
    }
    if (p < 0) return;
    const rate = driven ? this.driveRate[i] : revolute || prismatic ? u[this.uOffset[i]] : 0;
    if (revolute) {
      kappa[k6] += rate * (py * E[3 * i + 2] - pz * E[3 * i + 1]);
      kappa[k6 + 1] += rate * (pz * E[3 * i] - px * E[3 * i + 2]);
      kappa[k6 + 2] += rate * (px * E[3 * i + 1] - py * E[3 * i]);
    } else if (prismatic) {
      const t = 2 * rate;
      kappa[k6 + 3] += t * (py * E[3 * i + 2] - pz * E[3 * i + 1]);
      kappa[k6 + 4] += t * (pz * E[3 * i] - px * E[3 * i + 2]);
      kappa[k6 + 5] += t * (px * E[3 * i + 1] - py * E[3 * i]);
    }
  }

  /**
   * Slot i's step of the backward pass: its own M and p (file comment) added to its K and
   * bias, where its children's already are, then its joint's reduction. One call a slot:
   * V8 inlines none of these steps (their bytecode is past its limit), and the spherical
   * joints' chains spend most of their step here, so a spherical joint's reduction is
   * written out below rather than called (the 100-link chain's accelerations 1.07 times
   * faster than with a call for the body's terms and one for the reduction). False when a
   * joint's D is singular.
   */
  private backwardStep(i: number, f: Float64Array, u: Float64Array): boolean {
    const { K, bias, kappa, U, free } = this;
    const k = 36 * i;
    const k6 = 6 * i;
    {
      const { pos, omega, mass, inertiaWorld, dofOffset } = this.sys;
      const P = this.point;
      const b = this.body[i];
      const o = dofOffset[b];
      const m = mass[b];
      const rx = pos[3 * b] - P[3 * i];
      const ry = pos[3 * b + 1] - P[3 * i + 1];
      const rz = pos[3 * b + 2] - P[3 * i + 2];
      const wx = omega[3 * b];
      const wy = omega[3 * b + 1];
      const wz = omega[3 * b + 2];
      const ux = wy * rz - wz * ry;
      const uy = wz * rx - wx * rz;
      const uz = wx * ry - wy * rx;
      // m c_r − f_e, and r × that − τ_e
      const hx = m * (wy * uz - wz * uy) - f[o];
      const hy = m * (wz * ux - wx * uz) - f[o + 1];
      const hz = m * (wx * uy - wy * ux) - f[o + 2];
      bias[k6] += ry * hz - rz * hy - f[o + 3];
      bias[k6 + 1] += rz * hx - rx * hz - f[o + 4];
      bias[k6 + 2] += rx * hy - ry * hx - f[o + 5];
      bias[k6 + 3] += hx;
      bias[k6 + 4] += hy;
      bias[k6 + 5] += hz;
      // I + m (|r|² 1 − r rᵀ) | m r̃ ;  −m r̃ | m 1 (the upper triangle: see K)
      const I = 9 * b;
      const mxx = m * (ry * ry + rz * rz);
      const myy = m * (rx * rx + rz * rz);
      const mzz = m * (rx * rx + ry * ry);
      const mxy = -m * rx * ry;
      const mxz = -m * rx * rz;
      const myz = -m * ry * rz;
      K[k] += inertiaWorld[I] + mxx;
      K[k + 1] += inertiaWorld[I + 1] + mxy;
      K[k + 2] += inertiaWorld[I + 2] + mxz;
      K[k + 7] += inertiaWorld[I + 4] + myy;
      K[k + 8] += inertiaWorld[I + 5] + myz;
      K[k + 14] += inertiaWorld[I + 8] + mzz;
      const sx = m * rx;
      const sy = m * ry;
      const sz = m * rz;
      K[k + 4] -= sz;
      K[k + 5] += sy;
      K[k + 9] += sz;
      K[k + 11] -= sx;
      K[k + 15] -= sy;
      K[k + 16] += sx;
      K[k + 21] += m;
      K[k + 28] += m;
      K[k + 35] += m;
    }
    if (this.kind[i] !== SlotKind.SPHERICAL) {
      this.velocityProduct(i, u);
      return this.reduceGeneral(i);
    }
    // A spherical joint (S = [1; 0], D = K_αα): the child's α follows from its point's
    // acceleration, α = s − Π a_P with Π = D⁻¹ K_αt and s = −D⁻¹ b_α (kept in U and free for
    // the forward pass), and the parent receives the translational block alone,
    // Q = K_tt − K_tα Π and b_t − Πᵀ b_α + Q κ_t, shifted to its point:
    // Tᵀ [0, 0; 0, Q] T = [−d̃Qd̃, d̃Q; −Qd̃, Q], Tᵀ (0, c) = (d × c, c).
    // Its κ (κ_t = ω_p × (ω_p × d), κ_α = 0, which the forward pass never reads) and the shift
    // are velocityProduct's and addShifted's terms in their operations' order (the same
    // bits), written out: as calls, with Q and c handed over in arrays, they cost the
    // 100-link chain's accelerations 1.19 times their time.
    // D⁻¹ by the adjugate (D symmetric positive definite: a rigid body's rotational inertia
    // about its joint point plus what its subtree adds)
    const a00 = K[k];
    const a01 = K[k + 1];
    const a02 = K[k + 2];
    const a11 = K[k + 7];
    const a12 = K[k + 8];
    const a22 = K[k + 14];
    const c00 = a11 * a22 - a12 * a12;
    const c01 = a02 * a12 - a01 * a22;
    const c02 = a01 * a12 - a02 * a11;
    const id = 1 / (a00 * c00 + a01 * c01 + a02 * c02);
    const i00 = c00 * id;
    const i01 = c01 * id;
    const i02 = c02 * id;
    const i11 = (a00 * a22 - a02 * a02) * id;
    const i12 = (a01 * a02 - a00 * a12) * id;
    const i22 = (a00 * a11 - a01 * a01) * id;
    // K_αt (rows 0..2, columns 3..5): t_c = its column c (K_tα's row c), and
    // Π = D⁻¹ K_αt (p_c its column c) into U (3 × 3, row-major) for the forward pass
    const t0x = K[k + 3];
    const t0y = K[k + 9];
    const t0z = K[k + 15];
    const t1x = K[k + 4];
    const t1y = K[k + 10];
    const t1z = K[k + 16];
    const t2x = K[k + 5];
    const t2y = K[k + 11];
    const t2z = K[k + 17];
    const p0x = i00 * t0x + i01 * t0y + i02 * t0z;
    const p0y = i01 * t0x + i11 * t0y + i12 * t0z;
    const p0z = i02 * t0x + i12 * t0y + i22 * t0z;
    const p1x = i00 * t1x + i01 * t1y + i02 * t1z;
    const p1y = i01 * t1x + i11 * t1y + i12 * t1z;
    const p1z = i02 * t1x + i12 * t1y + i22 * t1z;
    const p2x = i00 * t2x + i01 * t2y + i02 * t2z;
    const p2y = i01 * t2x + i11 * t2y + i12 * t2z;
    const p2z = i02 * t2x + i12 * t2y + i22 * t2z;
    U[k] = p0x;
    U[k + 1] = p1x;
    U[k + 2] = p2x;
    U[k + 3] = p0y;
    U[k + 4] = p1y;
    U[k + 5] = p2y;
    U[k + 6] = p0z;
    U[k + 7] = p1z;
    U[k + 8] = p2z;
    const bx = bias[k6];
    const by = bias[k6 + 1];
    const bz = bias[k6 + 2];
    free[k6] = -(i00 * bx + i01 * by + i02 * bz);
    free[k6 + 1] = -(i01 * bx + i11 * by + i12 * bz);
    free[k6 + 2] = -(i02 * bx + i12 * by + i22 * bz);
    const p = this.parent[i];
    if (p < 0) {
      // below ground or a fixed body: no parent's rotation
      kappa[k6 + 3] = 0;
      kappa[k6 + 4] = 0;
      kappa[k6 + 5] = 0;
      return true;
    }
    // d from the parent's point to the child's, and κ_t = ω_p × (ω_p × d)
    const P = this.point;
    const dx = P[3 * i] - P[3 * p];
    const dy = P[3 * i + 1] - P[3 * p + 1];
    const dz = P[3 * i + 2] - P[3 * p + 2];
    {
      const omega = this.sys.omega;
      const pb = this.body[p];
      const px = omega[3 * pb];
      const py = omega[3 * pb + 1];
      const pz = omega[3 * pb + 2];
      const ex = py * dz - pz * dy;
      const ey = pz * dx - px * dz;
      const ez = px * dy - py * dx;
      kappa[k6 + 3] = py * ez - pz * ey;
      kappa[k6 + 4] = pz * ex - px * ez;
      kappa[k6 + 5] = px * ey - py * ex;
    }
    // Q = K_tt − K_tα Π (symmetric: the upper triangle)
    const q00 = K[k + 21] - (t0x * p0x + t0y * p0y + t0z * p0z);
    const q01 = K[k + 22] - (t0x * p1x + t0y * p1y + t0z * p1z);
    const q02 = K[k + 23] - (t0x * p2x + t0y * p2y + t0z * p2z);
    const q11 = K[k + 28] - (t1x * p1x + t1y * p1y + t1z * p1z);
    const q12 = K[k + 29] - (t1x * p2x + t1y * p2y + t1z * p2z);
    const q22 = K[k + 35] - (t2x * p2x + t2y * p2y + t2z * p2z);
    // c = b_t − Πᵀ b_α + Q κ_t
    const kx = kappa[k6 + 3];
    const ky = kappa[k6 + 4];
    const kz = kappa[k6 + 5];
    const cx = bias[k6 + 3] - (p0x * bx + p0y * by + p0z * bz) + q00 * kx + q01 * ky + q02 * kz;
    const cy = bias[k6 + 4] - (p1x * bx + p1y * by + p1z * bz) + q01 * kx + q11 * ky + q12 * kz;
    const cz = bias[k6 + 5] - (p2x * bx + p2y * by + p2z * bz) + q02 * kx + q12 * ky + q22 * kz;
    // to the parent's point: b += Tᵀ (0, c), K += Tᵀ [0, 0; 0, Q] T (addShifted's terms with
    // A = B = 0, the same sums; its M = d̃ Q, column j = d × Q_j, and −d̃ Q d̃ = −M d̃)
    const o6 = 6 * p;
    bias[o6] += 0 + dy * cz - dz * cy;
    bias[o6 + 1] += 0 + dz * cx - dx * cz;
    bias[o6 + 2] += 0 + dx * cy - dy * cx;
    bias[o6 + 3] += cx;
    bias[o6 + 4] += cy;
    bias[o6 + 5] += cz;
    const o = 36 * p;
    const m00 = dy * q02 - dz * q01;
    const m10 = dz * q00 - dx * q02;
    const m20 = dx * q01 - dy * q00;
    const m01 = dy * q12 - dz * q11;
    const m11 = dz * q01 - dx * q12;
    const m21 = dx * q11 - dy * q01;
    const m02 = dy * q22 - dz * q12;
    const m12 = dz * q02 - dx * q22;
    const m22 = dx * q12 - dy * q02;
    K[o] += dy * m02 - dz * m01;
    K[o + 1] += dz * m00 - dx * m02;
    K[o + 2] += dx * m01 - dy * m00;
    K[o + 7] += dz * m10 - dx * m12;
    K[o + 8] += dx * m11 - dy * m10;
    K[o + 14] += dx * m21 - dy * m20;
    K[o + 3] += m00;
    K[o + 4] += m01;
    K[o + 5] += m02;
    K[o + 9] += m10;
    K[o + 10] += m11;
    K[o + 11] += m12;
    K[o + 15] += m20;
    K[o + 16] += m21;
    K[o + 17] += m22;
    K[o + 21] += q00;
    K[o + 22] += q01;
    K[o + 23] += q02;
    K[o + 28] += q11;
    K[o + 29] += q12;
    K[o + 35] += q22;
    return true;
  }

  /**
   * Any other joint, with K and b as they are: U = K S, D = Sᵀ U and its inverse, −Sᵀ b,
   * and for a child K^a = K − U D⁻¹ Uᵀ, b^a = b + U D⁻¹ (−Sᵀ b) + K^a κ, shifted to the
   * parent's point. A revolute or prismatic joint (S one column s = (ê, 0) or (0, ê)) is a
   * rank-one reduction, K^a = K − u uᵀ / d with u = K s, d = sᵀ u, kept as the upper
   * triangle like K; a fixed or driven joint (S empty) passes K and b on; a free body is a
   * root (nothing to pass on). False when D is singular.
   */
  private reduceGeneral(i: number): boolean {
    const { K, bias, kappa, U, Dinv, free, work: Ka } = this;
    const kind = this.kind[i];
    const k36 = 36 * i;
    const k6 = 6 * i;
    if (kind === SlotKind.FREE) {
      // D = K (S = 1), a root's: U = K, −Sᵀ b = −b
      mirrorLower(K, k36);
      for (let r = 0; r < 36; r++) {
        U[k36 + r] = K[k36 + r];
        this.Dk[r] = K[k36 + r];
      }
      for (let r = 0; r < 6; r++) free[k6 + r] = -bias[k6 + r];
      return invertSmall(Dinv, k36, this.Dk, 0, 6, Ka);
    }
    const axial = kind === SlotKind.REVOLUTE || kind === SlotKind.PRISMATIC;
    // u = K s (the upper triangle read symmetric), d = sᵀ u, −sᵀ b
    let uOverD = 0;
    if (axial) {
      const E = this.axisWorld;
      const ex = E[3 * i];
      const ey = E[3 * i + 1];
      const ez = E[3 * i + 2];
      const e0 = kind === SlotKind.PRISMATIC ? 3 : 0;
      for (let r = 0; r < 6; r++)
        U[k36 + r] =
          K[k36 + upper(r, e0)] * ex +
          K[k36 + upper(r, e0 + 1)] * ey +
          K[k36 + upper(r, e0 + 2)] * ez;
      const d = ex * U[k36 + e0] + ey * U[k36 + e0 + 1] + ez * U[k36 + e0 + 2];
      if (!(d > 0)) return false;
      Dinv[k36] = 1 / d;
      free[k6] = -(ex * bias[k6 + e0] + ey * bias[k6 + e0 + 1] + ez * bias[k6 + e0 + 2]);
      uOverD = free[k6] / d;
    }
    const p = this.parent[i];
    if (p < 0) return true;
    // K^a (full, both triangles: symmetric by construction, as backwardStep's Q)
    const id = axial ? Dinv[k36] : 0;
    for (let r = 0; r < 6; r++)
      for (let c = r; c < 6; c++) {
        const s = K[k36 + 6 * r + c] - (axial ? U[k36 + r] * U[k36 + c] * id : 0);
        Ka[6 * r + c] = s;
        Ka[6 * c + r] = s;
      }
    // b^a = b + u (−sᵀ b) / d + K^a κ
    const bA = this.tmpB;
    for (let r = 0; r < 6; r++) {
      let s = bias[k6 + r] + (axial ? U[k36 + r] * uOverD : 0);
      for (let c = 0; c < 6; c++) s += Ka[6 * r + c] * kappa[k6 + c];
      bA[r] = s;
    }
    addShifted(Ka, bA, this.point, i, p, K, bias);
    return true;
  }

  private readonly tmpB = new Float64Array(6);
  private readonly tmpR = new Float64Array(6);
  private readonly centre = new Float64Array(3);
  /** largestDisplacement's per-slot (δθ, δP). */
  private readonly delta: Float64Array;

  /** r = x_c − P, slot i's centre from its joint point at the last `setState` (W, m). */
  pointToCentre(i: number): Float64Array {
    const b = this.body[i];
    for (let d = 0; d < 3; d++) this.centre[d] = this.sys.pos[3 * b + d] - this.point[3 * i + d];
    return this.centre;
  }

  /**
   * The largest mass-weighted displacement (m) of a body under a change (dy, du·h) of the
   * coordinates, to first order: the joint motions propagated like velocities, then per
   * body √(|δx|² + δθᵀ I δθ / m) (the root-mean-square displacement of its mass,
   * integrators/generalized-alpha.ts largestDisplacement). dy's quaternion entries are
   * changes of the coordinates' quaternions; `scale` multiplies du.
   */
  largestDisplacement(y: Float64Array, dy: Float64Array, du: Float64Array, scale: number): number {
    const sys = this.sys;
    const { pos, rotation, mass, inertiaWorld } = sys;
    const P = this.point;
    const E = this.axisWorld;
    // per slot δθ (3) and δP (3): its own array, as A holds the last evaluation's
    // accelerations, which jointWrenches may still read
    const T = this.delta;
    let worst = 0;
    for (let i = 0; i < this.numSlots; i++) {
      const b = this.body[i];
      const kind = this.kind[i];
      const yo = this.yOffset[i];
      const uo = this.uOffset[i];
      const t6 = 6 * i;
      let tx = 0;
      let ty = 0;
      let tz = 0;
      let px = 0;
      let py = 0;
      let pz = 0;
      if (kind === SlotKind.FREE || kind === SlotKind.PARTICLE) {
        px = dy[yo] + scale * du[uo + (kind === SlotKind.FREE ? 3 : 0)];
        py = dy[yo + 1] + scale * du[uo + (kind === SlotKind.FREE ? 4 : 1)];
        pz = dy[yo + 2] + scale * du[uo + (kind === SlotKind.FREE ? 5 : 2)];
        if (kind === SlotKind.FREE) {
          // δθ = 2 (δq ⊗ q*)_vec, W
          const r = rotationChange(y, yo + 3, dy, this.tmpQ);
          tx = r[1] + scale * du[uo];
          ty = r[2] + scale * du[uo + 1];
          tz = r[3] + scale * du[uo + 2];
        }
      } else {
        const p = this.parent[i];
        if (p >= 0) {
          const p6 = 6 * p;
          const dx = P[3 * i] - P[3 * p];
          const dyy = P[3 * i + 1] - P[3 * p + 1];
          const dz = P[3 * i + 2] - P[3 * p + 2];
          tx = T[p6];
          ty = T[p6 + 1];
          tz = T[p6 + 2];
          px = T[p6 + 3] + ty * dz - tz * dyy;
          py = T[p6 + 4] + tz * dx - tx * dz;
          pz = T[p6 + 5] + tx * dyy - ty * dx;
        }
        if (kind === SlotKind.SPHERICAL) {
          // δφ in the parent's frame = 2 (δq ⊗ q*)_vec; into W
          const r = rotationChange(y, yo, dy, this.tmpQ);
          const pb = this.parentBodyOf[i];
          let ax = r[1];
          let ay = r[2];
          let az = r[3];
          if (pb >= 0) {
            const R = 9 * pb;
            const x = rotation[R] * ax + rotation[R + 1] * ay + rotation[R + 2] * az;
            const yv = rotation[R + 3] * ax + rotation[R + 4] * ay + rotation[R + 5] * az;
            az = rotation[R + 6] * ax + rotation[R + 7] * ay + rotation[R + 8] * az;
            ax = x;
            ay = yv;
          }
          tx += ax + scale * du[uo];
          ty += ay + scale * du[uo + 1];
          tz += az + scale * du[uo + 2];
        } else if (kind === SlotKind.REVOLUTE) {
          const t = dy[yo] + scale * du[uo];
          tx += E[3 * i] * t;
          ty += E[3 * i + 1] * t;
          tz += E[3 * i + 2] * t;
        } else if (kind === SlotKind.PRISMATIC) {
          const t = dy[yo] + scale * du[uo];
          px += E[3 * i] * t;
          py += E[3 * i + 1] * t;
          pz += E[3 * i + 2] * t;
        }
      }
      T[t6] = tx;
      T[t6 + 1] = ty;
      T[t6 + 2] = tz;
      T[t6 + 3] = px;
      T[t6 + 4] = py;
      T[t6 + 5] = pz;
      // the centre's displacement δP + δθ × r
      const rx = pos[3 * b] - P[3 * i];
      const ry = pos[3 * b + 1] - P[3 * i + 1];
      const rz = pos[3 * b + 2] - P[3 * i + 2];
      const cx = px + ty * rz - tz * ry;
      const cy = py + tz * rx - tx * rz;
      const cz = pz + tx * ry - ty * rx;
      let e2 = cx * cx + cy * cy + cz * cz;
      if (kind !== SlotKind.PARTICLE) {
        const I = 9 * b;
        const ix = inertiaWorld[I] * tx + inertiaWorld[I + 1] * ty + inertiaWorld[I + 2] * tz;
        const iy = inertiaWorld[I + 3] * tx + inertiaWorld[I + 4] * ty + inertiaWorld[I + 5] * tz;
        const iz = inertiaWorld[I + 6] * tx + inertiaWorld[I + 7] * ty + inertiaWorld[I + 8] * tz;
        e2 += (tx * ix + ty * iy + tz * iz) / mass[b];
      }
      if (e2 > worst) worst = e2;
    }
    return Math.sqrt(worst);
  }
}

/**
 * The lower triangle of the symmetric 6 × 6 matrix at m[o..o+36) (row-major) from its upper
 * triangle (the articulated inertias' storage, ArticulatedTree.K).
 */
function mirrorLower(m: Float64Array, o: number): void {
  for (let r = 1; r < 6; r++) for (let c = 0; c < r; c++) m[o + 6 * r + c] = m[o + 6 * c + r];
}

/** The index in a row-major 6 × 6 of entry (r, c) of its upper triangle (symmetric storage). */
function upper(r: number, c: number): number {
  return r <= c ? 6 * r + c : 6 * c + r;
}

/**
 * A child's articulated inertia and bias, referred to its joint point P_i, added to its
 * parent's (K's upper triangle at 36 p, bias at 6 p), referred to P_p: Tᵀ Ka T and Tᵀ bA,
 * T = [1, 0; −d̃, 1], d = P_i − P_p. Ka is symmetric 6 × 6 (row-major, its upper triangle
 * read); with Ka = [A, B; Bᵀ, C]
 *   Tᵀ Ka T = [A + N + Nᵀ − d̃ C d̃, B + d̃ C; ·, C],  N = d̃ Bᵀ (column c: d × row c of B),
 *   Tᵀ (n, f) = (n + d × f, f).
 * d is read here from the points, not passed: doubles passed to a call V8 does not inline
 * are boxed. (backwardStep writes the C and bias terms out itself, A = B = 0 there.)
 */
function addShifted(
  Ka: Float64Array,
  bA: Float64Array,
  P: Float64Array,
  i: number,
  p: number,
  K: Float64Array,
  bias: Float64Array,
): void {
  const dx = P[3 * i] - P[3 * p];
  const dy = P[3 * i + 1] - P[3 * p + 1];
  const dz = P[3 * i + 2] - P[3 * p + 2];
  const o6 = 6 * p;
  bias[o6] += bA[0] + dy * bA[5] - dz * bA[4];
  bias[o6 + 1] += bA[1] + dz * bA[3] - dx * bA[5];
  bias[o6 + 2] += bA[2] + dx * bA[4] - dy * bA[3];
  bias[o6 + 3] += bA[3];
  bias[o6 + 4] += bA[4];
  bias[o6 + 5] += bA[5];
  const o = 36 * p;
  const c00 = Ka[21];
  const c01 = Ka[22];
  const c02 = Ka[23];
  const c11 = Ka[28];
  const c12 = Ka[29];
  const c22 = Ka[35];
  // M = d̃ C, column j = d × C_j
  const m00 = dy * c02 - dz * c01;
  const m10 = dz * c00 - dx * c02;
  const m20 = dx * c01 - dy * c00;
  const m01 = dy * c12 - dz * c11;
  const m11 = dz * c01 - dx * c12;
  const m21 = dx * c11 - dy * c01;
  const m02 = dy * c22 - dz * c12;
  const m12 = dz * c02 - dx * c22;
  const m22 = dx * c12 - dy * c02;
  // −d̃ C d̃ = −M d̃: row r is d × (row r of M)
  K[o] += dy * m02 - dz * m01;
  K[o + 1] += dz * m00 - dx * m02;
  K[o + 2] += dx * m01 - dy * m00;
  K[o + 7] += dz * m10 - dx * m12;
  K[o + 8] += dx * m11 - dy * m10;
  K[o + 14] += dx * m21 - dy * m20;
  K[o + 3] += m00;
  K[o + 4] += m01;
  K[o + 5] += m02;
  K[o + 9] += m10;
  K[o + 10] += m11;
  K[o + 11] += m12;
  K[o + 15] += m20;
  K[o + 16] += m21;
  K[o + 17] += m22;
  K[o + 21] += c00;
  K[o + 22] += c01;
  K[o + 23] += c02;
  K[o + 28] += c11;
  K[o + 29] += c12;
  K[o + 35] += c22;
  // A + N + Nᵀ and B, N = d̃ Bᵀ, column c = d × (Ka[c][3], Ka[c][4], Ka[c][5])
  const b0x = Ka[3];
  const b0y = Ka[4];
  const b0z = Ka[5];
  const b1x = Ka[9];
  const b1y = Ka[10];
  const b1z = Ka[11];
  const b2x = Ka[15];
  const b2y = Ka[16];
  const b2z = Ka[17];
  const n00 = dy * b0z - dz * b0y;
  const n10 = dz * b0x - dx * b0z;
  const n20 = dx * b0y - dy * b0x;
  const n01 = dy * b1z - dz * b1y;
  const n11 = dz * b1x - dx * b1z;
  const n21 = dx * b1y - dy * b1x;
  const n02 = dy * b2z - dz * b2y;
  const n12 = dz * b2x - dx * b2z;
  const n22 = dx * b2y - dy * b2x;
  K[o] += Ka[0] + 2 * n00;
  K[o + 1] += Ka[1] + n01 + n10;
  K[o + 2] += Ka[2] + n02 + n20;
  K[o + 7] += Ka[7] + 2 * n11;
  K[o + 8] += Ka[8] + n12 + n21;
  K[o + 14] += Ka[14] + 2 * n22;
  K[o + 3] += b0x;
  K[o + 4] += b0y;
  K[o + 5] += b0z;
  K[o + 9] += b1x;
  K[o + 10] += b1y;
  K[o + 11] += b1z;
  K[o + 15] += b2x;
  K[o + 16] += b2y;
  K[o + 17] += b2z;
}

function normalizeQuat(q: Float64Array, o: number): void {
  // not Math.hypot: V8 calls it with boxed arguments, a heap allocation per call (vec3.ts)
  const l =
    1 / Math.sqrt(q[o] * q[o] + q[o + 1] * q[o + 1] + q[o + 2] * q[o + 2] + q[o + 3] * q[o + 3]);
  q[o] *= l;
  q[o + 1] *= l;
  q[o + 2] *= l;
  q[o + 3] *= l;
}

/** out[o..] = ½ (0, ω) ⊗ q[o..] */
function quatRate(
  q: Float64Array,
  o: number,
  wx: number,
  wy: number,
  wz: number,
  out: Float64Array,
) {
  const w = q[o];
  const x = q[o + 1];
  const y = q[o + 2];
  const z = q[o + 3];
  out[o] = 0.5 * (-wx * x - wy * y - wz * z);
  out[o + 1] = 0.5 * (wx * w + wy * z - wz * y);
  out[o + 2] = 0.5 * (wy * w + wz * x - wx * z);
  out[o + 3] = 0.5 * (wz * w + wx * y - wy * x);
}

/**
 * The rotation δφ (in out[1..3]) that q + δq makes of the rotation of q, to first order:
 * 2 δq ⊗ q* / |q|² (q need not be unit: the coordinates' quaternions are read normalized).
 */
function rotationChange(
  q: Float64Array,
  o: number,
  dq: Float64Array,
  out: Float64Array,
): Float64Array {
  const w = q[o];
  const x = -q[o + 1];
  const y = -q[o + 2];
  const z = -q[o + 3];
  const a = dq[o];
  const b = dq[o + 1];
  const c = dq[o + 2];
  const d = dq[o + 3];
  const s = 2 / (w * w + x * x + y * y + z * z);
  out[0] = 0;
  out[1] = s * (a * x + b * w + c * z - d * y);
  out[2] = s * (a * y - b * z + c * w + d * x);
  out[3] = s * (a * z + b * y - c * x + d * w);
  return out;
}

/** Body positions and orientations (a BodySystem's current state, or the model pose). */
export interface Pose {
  readonly pos: ArrayLike<number>;
  readonly quat: Float64Array;
}

/** out = x_b + R_b p, the body-frame point p in W at `pose` (ground: p itself). */
function bodyToWorld(pose: Pose, b: number, p: ArrayLike<number>, out: Float64Array): void {
  if (b < 0) {
    for (let d = 0; d < 3; d++) out[d] = p[d];
    return;
  }
  for (let d = 0; d < 3; d++) out[d] = p[d];
  quatRotate(out, 0, pose.quat, 4 * b, out, 0);
  for (let d = 0; d < 3; d++) out[d] += pose.pos[3 * b + d];
}

/** out[oo..] = R_bᵀ (w − x_b), the world point w in body b's frame at `pose`. */
function worldToBody(pose: Pose, b: number, w: Float64Array, out: Float64Array, oo: number): void {
  for (let d = 0; d < 3; d++) out[oo + d] = b < 0 ? w[d] : w[d] - pose.pos[3 * b + d];
  if (b >= 0) quatRotateInverse(out, oo, pose.quat, 4 * b, out, oo);
}

/** out[oo..] = q_p* ⊗ q_c at `pose` (p = −1: ground, the identity). */
function relativeRotation(pose: Pose, p: number, c: number, out: Float64Array, oo: number): void {
  const conj = new Float64Array([1, 0, 0, 0]);
  if (p >= 0) {
    conj[0] = pose.quat[4 * p];
    for (let d = 1; d < 4; d++) conj[d] = -pose.quat[4 * p + d];
  }
  quatMul(out, oo, conj, 0, pose.quat, 4 * c);
  normalizeQuat(out, oo);
}

/** out[oo..] = R_bᵀ w, the world vector w in body b's frame at `pose`. */
function rotateToBody(pose: Pose, b: number, w: Float64Array, out: Float64Array, oo: number): void {
  for (let d = 0; d < 3; d++) out[oo + d] = w[d];
  if (b >= 0) quatRotateInverse(out, oo, pose.quat, 4 * b, out, oo);
}

/** out = R_p v (W; ground: v). */
function parentRotate(
  sys: BodySystem,
  b: number,
  v: Float64Array,
  vo: number,
  out: Float64Array,
  oo: number,
): void {
  if (b < 0) {
    for (let d = 0; d < 3; d++) out[oo + d] = v[vo + d];
    return;
  }
  const R = sys.rotation;
  const o = 9 * b;
  for (let d = 0; d < 3; d++)
    out[oo + d] =
      R[o + 3 * d] * v[vo] + R[o + 3 * d + 1] * v[vo + 1] + R[o + 3 * d + 2] * v[vo + 2];
}

/** out = v_b + ω_b × (p − x_b), the velocity of body b's material point at p (W). */
function pointVelocity(sys: BodySystem, b: number, p: Float64Array, out: Float64Array): void {
  const { pos, vel, omega } = sys;
  const dx = p[0] - pos[3 * b];
  const dy = p[1] - pos[3 * b + 1];
  const dz = p[2] - pos[3 * b + 2];
  const wx = omega[3 * b];
  const wy = omega[3 * b + 1];
  const wz = omega[3 * b + 2];
  out[0] = vel[3 * b] + wy * dz - wz * dy;
  out[1] = vel[3 * b + 1] + wz * dx - wx * dz;
  out[2] = vel[3 * b + 2] + wx * dy - wy * dx;
}
