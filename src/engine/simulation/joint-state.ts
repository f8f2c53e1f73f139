/**
 * The `jointState` input: a revolute or prismatic joint's coordinate q and rate q̇ set at a
 * step boundary (MuJoCo's qpos/qvel of one joint, Drake's SetPositions), as the
 * jointPosition and jointVelocity sensors read them (rad or m from the model pose, rad/s
 * or m/s; revolute angles unwrapped).
 *
 * What moves: the joint's child side, the bodies the joint joins to the rest only through
 * itself, found in the graph whose nodes are the bodies (the ground and every fixed body one
 * node, the world) and whose edges are all the model's joints: with the joint's edge taken
 * out, the side of its two ends that does not hold the world (where neither does, a
 * floating mechanism, the side of its end b, the child as URDF names it). Refused: a joint
 * whose ends stay joined without it (a closed loop: no rigid motion of one side changes its
 * coordinate alone), a motor's joint (the motor prescribes q), a child side holding a fem
 * node (an elastic body is not moved rigidly). A loop within the child side moves rigidly
 * with it, closed as it was.
 *
 * Mimics (q_f = m q_l + o, schemas/model.ts Mimic) move together: setting the followed
 * joint l sets each of its followers f to m q* + o (rate m q̇*), setting a follower sets l
 * to (q* − o)/m and so the other followers, each joint moved on its own child side (a
 * joint's move leaves every other coordinate as it was, so the order does not matter). The
 * whole group must be movable; refused too: a follower whose multiplier is 0 (q_f = o
 * whatever l does) and a joint followed by one that is itself followed (a mimic of a mimic).
 * Until 2026-12-06 any joint of a mimic was refused (the imported arm's gripper could not
 * be set open).
 *
 * How: the child side is turned about the joint's axis through its anchor on the child end
 * (revolute) or translated along it (prismatic) by Newton on q: δ = (q* − q)/s, s = g_c·ξ
 * the coordinate's rate along the unit motion ξ of the child end (g its Jacobian), until q
 * reads q* to round-off (exact in one iteration on a closed joint, a second on one the steps
 * left open by their tolerance). The velocities are carried along, the joints' rates kept
 * (the child's motion relative to the other end, its twist turned with the bodies, added to
 * that end's rigid motion at the new positions), then q̇ is set by adding (q̇* − q̇)/s ξ of
 * the unit motion to every child body: the other joints' coordinates and rates unchanged.
 * A revolute coordinate's turn count follows the branch of q* (JointCoordinate.guide). A
 * q* past the bounds in effect is set on the bound (of the followed joint's, and its
 * followers' mapped onto it: the relation is kept).
 */
import type { ModelSpec } from "../../../schemas/model";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { quatMul, quatNormalize, quatRotate } from "../math/quat";
import { BodyKind, type BodySystem, updateDerived } from "../model/body-system";

/** A mimic relation's drift (m or rad) the steps leave at the defaults (onRelation). */
const RELATION_DRIFT = 1e-12;
/** A mimic relation's rate drift, relative: × (1 + |q̇|) (m/s or rad/s; onRelation). */
const RELATION_RATE_DRIFT = 1e-9;

/** Per joint: its child side's body indices, or why it has none to move. */
type ChildSide = Side | { refusal: string };

/** A joint's bounds in effect (rad or m from the model pose). */
export interface Bounds {
  readonly lower: number;
  readonly upper: number;
}

/** A follower's relation to the joint it follows: q_f = multiplier q_l + offset. */
interface Follower {
  joint: string;
  multiplier: number;
  offset: number;
}

/** A joint's child side: its bodies, the other end's node (parent) and the child end (0: a, 1: b). */
interface Side {
  bodies: number[];
  parent: number;
  end: 0 | 1;
}

export class JointStates {
  private readonly sides = new Map<string, ChildSide>();
  /**
   * Per node, the joints at it: [other end's node, joint index]; built at the first
   * jointState (a 10 000-body cloth's sessions never pay for it).
   */
  private adjacency: [number, number][][] | null = null;
  private readonly motorJoints: Set<string>;
  /** A follower's followed joint and relation, by the follower's id. */
  private readonly leaders = new Map<string, Follower>();
  /** The followers of a followed joint, by its id. */
  private readonly followers = new Map<string, Follower[]>();
  private readonly modelBodies: Set<string>;
  private readonly scratch = new Float64Array(12);
  /** The world's node in the joints' graph (the ground and the fixed bodies): after the bodies'. */
  private readonly world: number;

  constructor(
    private readonly model: ModelSpec,
    private readonly sys: BodySystem,
    readonly coordinates: ReadonlyMap<string, JointCoordinate>,
  ) {
    this.world = sys.ids.length;
    model.joints.forEach((j) => {
      if ((j.type === "revolute" || j.type === "prismatic") && j.mimic) {
        const { joint, multiplier, offset } = j.mimic;
        this.leaders.set(j.id, { joint, multiplier, offset });
        const list = this.followers.get(joint) ?? [];
        list.push({ joint: j.id, multiplier, offset });
        this.followers.set(joint, list);
      }
    });
    this.motorJoints = new Set(model.motors.map((m) => m.joint));
    this.modelBodies = new Set(model.bodies.map((b) => b.id));
  }

  /** The node of a joint end's body: its index, or the world's for the ground and fixed bodies. */
  private node(id: string): number {
    const b = id === "ground" ? undefined : this.sys.index.get(id);
    return b === undefined || this.sys.dofOffset[b] < 0 ? this.world : b;
  }

  /** Why the joint's coordinate cannot be set, or null when it can (its mimic group's too). */
  refusal(joint: string): string | null {
    const own = this.side(joint);
    if ("refusal" in own) return own.refusal;
    const up = this.leaders.get(joint);
    if (up === undefined && !this.followers.has(joint)) return null;
    if (up?.multiplier === 0)
      return `joint "${joint}" follows joint "${up.joint}" with multiplier 0 (mimic): its coordinate is its offset, ${up.offset}`;
    const leader = up?.joint ?? joint;
    const members = this.group(leader);
    const chained = members.find((id) => (id === leader ? this.leaders : this.followers).has(id));
    if (chained !== undefined)
      return `joint "${joint}" is in a chain of mimics (joint "${chained}" both follows and is followed): only a joint followed directly, or its followers, is set`;
    for (const id of members) {
      if (id === joint) continue;
      const side = this.side(id);
      if ("refusal" in side)
        return `joint "${joint}" moves with joint "${id}" (mimic), which cannot be set: ${side.refusal}`;
    }
    return null;
  }

  /** A followed joint and its followers (the joint alone without mimics). */
  private group(leader: string): string[] {
    return [leader, ...(this.followers.get(leader) ?? []).map((f) => f.joint)];
  }

  /**
   * Sets the joint's q and/or q̇ (checked: refusal(joint) is null), and its mimic group's by
   * their relations; a q past the bounds in effect (`bounds`, by joint) set on the bound.
   * Returns false, having changed nothing, when the values it would give the joint are its
   * own in place, q and q̇ as the State reports them (evaluate: the unwrapped angle, its turn
   * count included), bit for bit: a client writing back the State it read. Its mimic partners
   * are then left as the dynamics keep them, q_f = m q_l + o to the constraints' tolerance
   * (set, they would be put on it to round-off: a slider pair's leader written back under
   * newmark moved its follower by an ulp, a start; its follower's under backward-euler, by
   * (q − o)/m read an ulp off q_l). Not so a q past a bound, its own or a partner's mapped
   * onto it: set on the bound; nor a partner off its relation beyond the steps' drift
   * (onRelation): the group is written, the relation holding after the input.
   */
  set(
    joint: string,
    position: number | undefined,
    velocity: number | undefined,
    bounds: ReadonlyMap<string, Bounds>,
  ): boolean {
    const up = this.leaders.get(joint);
    const leader = up?.joint ?? joint;
    // the followed joint's values: q_l = (q − o)/m, q̇_l = q̇/m
    const m = up?.multiplier ?? 1;
    const o = up?.offset ?? 0;
    const asked = position === undefined ? undefined : (position - o) / m;
    let q = asked;
    const rate = velocity === undefined ? undefined : velocity / m;
    const relations: Follower[] = [
      { joint: leader, multiplier: 1, offset: 0 },
      ...(this.followers.get(leader) ?? []),
    ];
    if (q !== undefined)
      for (const r of relations) {
        // joint r's bounds on q_l: (bound − o_r)/m_r, their order swapped for m_r < 0
        const b = bounds.get(r.joint);
        if (b === undefined || r.multiplier === 0) continue;
        const x = (b.lower - r.offset) / r.multiplier;
        const y = (b.upper - r.offset) / r.multiplier;
        q = Math.min(Math.max(x, y), Math.max(Math.min(x, y), q));
      }
    // in place: the joint's own values given and no bound moves q (compared as given, not
    // mapped through q_l: (q − o)/m and back reads an ulp off), its mimic partners on their
    // relation to them (onRelation)
    const c = this.coordinates.get(joint) as JointCoordinate;
    c.evaluate();
    if (
      (position === undefined || (position === c.value && q === asked)) &&
      (velocity === undefined || velocity === c.rate) &&
      relations.every((r) => r.joint === joint || this.onRelation(r, asked, rate))
    )
      return false;
    for (const r of relations)
      this.apply(
        r.joint,
        q === undefined ? undefined : r.multiplier * q + r.offset,
        rate === undefined ? undefined : r.multiplier * rate,
      );
    return true;
  }

  /**
   * Whether joint r of a mimic group reads q_r = m_r q_l + o_r and q̇_r = m_r q̇_l for the
   * followed joint's values q_l, q̇_l a jointState gives (undefined: not given, not
   * checked), to the drift the steps leave the relation at the defaults: RELATION_DRIFT
   * (jointTolerance's default, the post-step projection's ‖C‖∞) and RELATION_RATE_DRIFT
   * (1 + |q̇_r|) (the velocity projection's floor). Within them a write-back of the values in
   * place is no change (measured: a slider pair's relation held to 7e-17 m and 3e-16 m/s over
   * 10 s under every integrator that takes mimics); beyond them something put the partner
   * off (a bodyState of its body at the same boundary, a looser jointTolerance), and the
   * group is written, the relation put back (until 2026-12-08 a partner 1e-3 m off was left
   * so by its leader's write-back).
   */
  private onRelation(r: Follower, ql: number | undefined, rate: number | undefined): boolean {
    const c = this.coordinates.get(r.joint) as JointCoordinate;
    c.evaluate();
    return (
      (ql === undefined || Math.abs(c.value - (r.multiplier * ql + r.offset)) <= RELATION_DRIFT) &&
      (rate === undefined ||
        Math.abs(c.rate - r.multiplier * rate) <= RELATION_RATE_DRIFT * (1 + Math.abs(c.rate)))
    );
  }

  private side(joint: string): ChildSide {
    let side = this.sides.get(joint);
    if (side === undefined) {
      side = this.findSide(joint);
      this.sides.set(joint, side);
    }
    return side;
  }

  private findSide(joint: string): ChildSide {
    const k = this.model.joints.findIndex((j) => j.id === joint);
    const spec = this.model.joints[k];
    if (!this.coordinates.has(joint))
      return {
        refusal: `joint "${joint}" is ${spec.type === "revolute" ? "a revolute joint with a particle end" : `a ${spec.type} joint`}: it has no coordinate (only a revolute or prismatic joint's is set)`,
      };
    if (this.motorJoints.has(joint))
      return { refusal: `joint "${joint}" is driven by a motor, which prescribes its coordinate` };
    const a = this.node(spec.a.body);
    const b = this.node(spec.b.body);
    const sideB = this.reach(b, k);
    if (sideB.includes(a) || a === b)
      return {
        refusal: `joint "${joint}" is in a closed loop: its two ends are joined without it, so its coordinate cannot be set alone`,
      };
    const [bodies, parent, end] = sideB.includes(this.world)
      ? [this.reach(a, k), b, 0 as const]
      : [sideB, a, 1 as const];
    const fem = bodies.find((i) => !this.modelBodies.has(this.sys.ids[i]));
    if (fem !== undefined)
      return {
        refusal: `joint "${joint}": its child side holds the fem node "${this.sys.ids[fem]}", which is not moved rigidly`,
      };
    return { bodies, parent, end };
  }

  private graph(): [number, number][][] {
    if (this.adjacency !== null) return this.adjacency;
    const adjacency: [number, number][][] = Array.from({ length: this.world + 1 }, () => []);
    this.model.joints.forEach((j, k) => {
      const a = this.node(j.a.body);
      const b = this.node(j.b.body);
      adjacency[a].push([b, k]);
      adjacency[b].push([a, k]);
    });
    this.adjacency = adjacency;
    return adjacency;
  }

  /** The nodes reached from `start` through the joints but `without` (the world's included). */
  private reach(start: number, without: number): number[] {
    const adjacency = this.graph();
    const seen = new Set<number>([start]);
    const stack = [start];
    while (stack.length > 0) {
      const i = stack.pop() as number;
      for (const [other, k] of adjacency[i]) {
        if (k === without || seen.has(other)) continue;
        seen.add(other);
        stack.push(other);
      }
    }
    return [...seen];
  }

  /**
   * Sets the joint's own q and/or q̇ (its child side movable). Leaves the derived data
   * current and the coordinate's turn count on q's branch.
   */
  private apply(joint: string, position: number | undefined, velocity: number | undefined): void {
    const side = this.side(joint) as Side;
    const q = this.coordinates.get(joint) as JointCoordinate;
    const sys = this.sys;
    const childEnd = side.end;
    if (position !== undefined) {
      for (let it = 0; it < MAX_ITERATIONS; it++) {
        if (q.kind === "angle") {
          // the branch of q* (within π of it after the first turn)
          q.guided = position;
          q.guide();
        }
        q.evaluate();
        const miss = position - q.value;
        if (Math.abs(miss) <= 1e-15 * Math.max(1, Math.abs(position))) break;
        this.move(q, childEnd, side, miss);
        updateDerived(sys);
      }
      if (q.kind === "angle") {
        q.guided = position;
        q.guide();
        q.track();
      }
    }
    if (velocity !== undefined) {
      q.evaluate();
      const xi = this.unitMotion(q, childEnd);
      const d = (velocity - q.rate) / xi.s;
      for (const i of side.bodies) {
        const o = 3 * i;
        if (q.kind === "angle") {
          // ω += d â,  v += d â × (x − p)
          const rx = sys.pos[o] - xi.p[0];
          const ry = sys.pos[o + 1] - xi.p[1];
          const rz = sys.pos[o + 2] - xi.p[2];
          const [ax, ay, az] = xi.axis;
          sys.vel[o] += d * (ay * rz - az * ry);
          sys.vel[o + 1] += d * (az * rx - ax * rz);
          sys.vel[o + 2] += d * (ax * ry - ay * rx);
          if (sys.kind[i] === BodyKind.RIGID)
            for (let c = 0; c < 3; c++) sys.omega[o + c] += d * xi.axis[c];
        } else for (let c = 0; c < 3; c++) sys.vel[o + c] += d * xi.axis[c];
      }
    }
  }

  /**
   * The unit motion ξ of the child end (side 0: a, 1: b) along the coordinate, as of the
   * last evaluate: a turn about â = g_θ/|g_θ| through the anchor p on the child end
   * (revolute), a slide along â = g_t/|g_t| (prismatic); s = g·ξ, q's rate along it.
   */
  private unitMotion(q: JointCoordinate, end: 0 | 1): { axis: number[]; p: number[]; s: number } {
    const sys = this.sys;
    const g = end === 0 ? q.jacA : q.jacB;
    const c = end === 0 ? q.bodyA : q.bodyB;
    const r = q.lever(end);
    const p = [sys.pos[3 * c] + r[0], sys.pos[3 * c + 1] + r[1], sys.pos[3 * c + 2] + r[2]];
    if (q.kind === "angle") {
      const n = Math.hypot(g[3], g[4], g[5]);
      const axis = [g[3] / n, g[4] / n, g[5] / n];
      // ξ at the child end's centre: v = â × (x_c − p) = −â × r, ω = â
      const v = [
        -(axis[1] * r[2] - axis[2] * r[1]),
        -(axis[2] * r[0] - axis[0] * r[2]),
        -(axis[0] * r[1] - axis[1] * r[0]),
      ];
      const s = g[0] * v[0] + g[1] * v[1] + g[2] * v[2] + n;
      return { axis, p, s };
    }
    const n = Math.hypot(g[0], g[1], g[2]);
    return { axis: [g[0] / n, g[1] / n, g[2] / n], p, s: n };
  }

  /**
   * Moves the child side by the unit motion's δ = miss/s (a turn of δ rad about â through p,
   * or a slide of δ m along â), the velocities carried along: each child body's twist
   * relative to the other end's rigid motion (parent) is turned with it and added back to
   * that motion at the new position.
   */
  private move(q: JointCoordinate, end: 0 | 1, side: Side, miss: number): void {
    const sys = this.sys;
    const xi = this.unitMotion(q, end);
    const delta = miss / xi.s;
    const t = this.scratch;
    // the rotation's quaternion (identity for a slide) at t[0..3]
    const half = q.kind === "angle" ? 0.5 * delta : 0;
    t[0] = Math.cos(half);
    for (let c = 0; c < 3; c++) t[1 + c] = Math.sin(half) * xi.axis[c];
    const par = side.parent;
    const pw = par === this.world ? null : 3 * par;
    for (const i of side.bodies) {
      const o = 3 * i;
      // the parent's velocity at the old position: v_p + ω_p × (x − x_p), at t[4..6]
      this.parentVelocity(pw, o, t, 4);
      // relative v and ω, turned
      for (let c = 0; c < 3; c++) t[7 + c] = sys.vel[o + c] - t[4 + c];
      quatRotate(t, 7, t, 0, t, 7);
      // the new position: p + R (x − p), or x + δ â
      for (let c = 0; c < 3; c++) t[4 + c] = sys.pos[o + c] - xi.p[c];
      if (q.kind === "angle") quatRotate(t, 4, t, 0, t, 4);
      for (let c = 0; c < 3; c++)
        sys.pos[o + c] = xi.p[c] + t[4 + c] + (q.kind === "angle" ? 0 : delta * xi.axis[c]);
      this.parentVelocity(pw, o, t, 4);
      for (let c = 0; c < 3; c++) sys.vel[o + c] = t[4 + c] + t[7 + c];
      if (sys.kind[i] !== BodyKind.RIGID) continue;
      for (let c = 0; c < 3; c++)
        t[7 + c] = sys.omega[o + c] - (pw === null ? 0 : sys.omega[pw + c]);
      quatRotate(t, 7, t, 0, t, 7);
      for (let c = 0; c < 3; c++)
        sys.omega[o + c] = (pw === null ? 0 : sys.omega[pw + c]) + t[7 + c];
      const w = 4 * i;
      quatMul(t, 4, t, 0, sys.quat, w);
      for (let c = 0; c < 4; c++) sys.quat[w + c] = t[4 + c];
      quatNormalize(sys.quat, w);
    }
  }

  /** out[at..at+2] ← the parent's rigid velocity at body o's position (0 for the world). */
  private parentVelocity(pw: number | null, o: number, out: Float64Array, at: number): void {
    const { pos, vel, omega } = this.sys;
    if (pw === null) {
      out[at] = 0;
      out[at + 1] = 0;
      out[at + 2] = 0;
      return;
    }
    const rx = pos[o] - pos[pw];
    const ry = pos[o + 1] - pos[pw + 1];
    const rz = pos[o + 2] - pos[pw + 2];
    out[at] = vel[pw] + omega[pw + 1] * rz - omega[pw + 2] * ry;
    out[at + 1] = vel[pw + 1] + omega[pw + 2] * rx - omega[pw] * rz;
    out[at + 2] = vel[pw + 2] + omega[pw] * ry - omega[pw + 1] * rx;
  }
}

/** Newton's iterations on q at most (one on a closed joint, two on one left open by the steps' tolerance). */
const MAX_ITERATIONS = 6;
