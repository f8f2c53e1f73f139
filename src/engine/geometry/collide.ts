/**
 * Collision detection for a set of shapes attached to bodies: world poses, broad phase
 * (sweep and prune over the bounded shapes, planes tested against every bounded shape),
 * pair filtering and narrow phase into a reusable ContactBuffer.
 *
 * Contact a is always the shape with the lower index in the list given to the
 * constructor, so the normal points from the lower-indexed shape's body to the other.
 *
 * A pair whose two bodies are where they were at the previous detect() (positions and
 * quaternions equal; the world, body −1, always is), detected with the same margin, gets
 * that detection's contacts of the pair copied instead of a narrow phase: the narrow
 * phase is a function of the two world poses and the margin, so the copy is what it would
 * compute (the hill-climbing hull support's answer does not depend on its start vertex,
 * hull.ts supportVertex). Piles come to rest: on H-100 (100 hulls on a mesh terrain) 8 % of
 * the hulls are exactly still from one step to the next over steps 101–200, 47 % over
 * 501–600, and their mesh pairs are most of the detection's time (bench/README.md,
 * "Convex hulls on a mesh").
 */

import { extend } from "../math/grow";
import { quatToMat3Normalized } from "../math/quat";
import { type BroadPhaseMemory, SweepAndPrune } from "./broadphase";
import { ContactBuffer } from "./contact-buffer";
import { collideShapes } from "./narrowphase";
import { composePose, WorldPose } from "./pose";
import { isUnbounded, type Shape, type ShapeInstance, worldAabb, worldPlane } from "./shapes";

export interface CollisionOptions {
  /**
   * Contacts with gap < margin are reported (metres, ≥ 0; default 0). The time stepping
   * uses slightly separated contacts to choose its active set from a predicted gap.
   */
  margin?: number;
  /** Body index pairs that never collide (e.g. bodies joined by a joint). */
  excludedPairs?: ReadonlyArray<readonly [number, number]>;
  /** Indices of fixed bodies: pairs of two fixed bodies are skipped (body −1 is always fixed). */
  fixedBodies?: readonly number[];
  /**
   * Collision group of each shape (default 0, none): two shapes of the same non-zero
   * group never collide (the points of deformable surfaces, contact/fem-vertices.ts).
   */
  groups?: ArrayLike<number>;
}

/** Per-detect counts and timings (milliseconds, performance.now()). */
export interface DetectionStats {
  /** Shapes in the broad phase (bounded shapes) and planes. */
  boundedShapes: number;
  planes: number;
  /** Pairs passed to the narrow phase from the sweep and from the plane tests. */
  broadPairs: number;
  planePairs: number;
  /** Of those, pairs whose contacts were the previous detection's (both bodies still). */
  reusedPairs: number;
  /** Contacts produced. */
  contacts: number;
  /** World poses + AABBs + sweep + plane tests. */
  broadMs: number;
  /** Pair functions. */
  narrowMs: number;
  totalMs: number;
}

/** Maximum body index + 2 supported by the excluded-pair keys. */
const BODY_KEY = 1 << 26;

export class CollisionDetector {
  readonly shapes: readonly ShapeInstance[];
  /** Contacts with gap < margin are reported. */
  margin: number;
  readonly stats: DetectionStats = {
    boundedShapes: 0,
    planes: 0,
    broadPairs: 0,
    planePairs: 0,
    reusedPairs: 0,
    contacts: 0,
    broadMs: -0,
    narrowMs: -0,
    totalMs: -0,
  };
  /** World pose of every shape, valid after detect(). */
  readonly poses: WorldPose[];
  /** World AABB of bounded shape proxies (proxy k is shape proxyShape[k]), padded by margin/2. */
  readonly aabbMin: Float64Array;
  readonly aabbMax: Float64Array;
  /** Shape index of each broad-phase proxy. */
  readonly proxyShape: Int32Array;
  /** Shape index of each plane. */
  readonly planeShape: Int32Array;
  /** 1 for a proxy that is a sphere (its box a cube: the broad phase's ball test). */
  private readonly proxyBall: Uint8Array;

  private readonly shapeList: Shape[];
  /**
   * Radius of each sphere shape, −1 for other shapes: a sphere's box is the cube of side
   * 2(ρ + margin/2) about its centre, which the broad phase's ball test reads back (the
   * radii from a Float64Array: a double field read where the shape objects, a union of
   * hidden classes, meet is boxed).
   */
  private readonly sphereRadius: Float64Array;
  private readonly body: Int32Array;
  private readonly localP: Float64Array[];
  private readonly localR: Float64Array[];
  private readonly fixed: Uint8Array;
  private readonly excluded: Set<number>;
  private readonly group: Int32Array;
  private readonly sap: SweepAndPrune;
  private readonly planeWorld: Float64Array;
  private readonly scratchR = new Float64Array(9);
  private planePairs: Int32Array = new Int32Array(64);
  private planePairCount = 0;
  /**
   * The previous detect() (file comment): its body poses (3 and 4 per body index),
   * margin (−1: none to reuse, also while a detect runs, so that one ended by an
   * exception leaves nothing), contacts, and where each narrow-phased pair's contacts are
   * in them; `contacts` and `ranges` collect the running detect's. Pairs of a sphere with
   * a sphere or plane are left out: their closed forms cost less than the copy.
   * still[b + 1]: body b (−1 the world) is where it was.
   */
  private readonly lastPos: Float64Array;
  private readonly lastQuat: Float64Array;
  private lastMargin = -1;
  private readonly still: Uint8Array;
  /** Per shape: 1 for a sphere or a plane (a pair of two such is not kept). */
  private readonly closedForm: Uint8Array;
  private lastContacts = new ContactBuffer(64);
  private contacts = new ContactBuffer(64);
  private lastRanges: PairRanges;
  private ranges: PairRanges;

  constructor(shapes: readonly ShapeInstance[], options: CollisionOptions = {}) {
    this.shapes = shapes;
    this.margin = options.margin ?? 0;
    if (!(this.margin >= 0)) throw new RangeError("margin must be a non-negative number");
    const n = shapes.length;
    if (n >= 1 << 18) throw new RangeError("at most 2^18 shapes (contact keys)");
    this.shapeList = shapes.map((s) => s.shape);
    this.sphereRadius = Float64Array.from(shapes, (s) =>
      s.shape.type === "sphere" ? s.shape.radius : -1,
    );
    this.body = new Int32Array(n);
    this.localP = [];
    this.localR = [];
    this.poses = [];
    let maxBody = -1;
    let bounded = 0;
    for (let i = 0; i < n; i++) {
      const inst = shapes[i];
      validateShape(inst.shape, i);
      if (!Number.isInteger(inst.body) || inst.body < -1 || inst.body >= BODY_KEY - 2) {
        throw new RangeError(`shape ${i}: body must be an integer ≥ −1`);
      }
      this.body[i] = inst.body;
      if (inst.body > maxBody) maxBody = inst.body;
      const lp = inst.localPosition ?? [0, 0, 0];
      const lq = inst.localOrientation ?? [1, 0, 0, 0];
      this.localP.push(new Float64Array(lp));
      const R = new Float64Array(9);
      // through a Float64Array, as the rotation kernels' type asks (math/quat.ts): one call
      // with a plain array made their loads polymorphic, and the optimized code boxed every
      // quaternion entry it read (a heap allocation per body and step ever after)
      quatToMat3Normalized(R, 0, new Float64Array(lq), 0);
      this.localR.push(R);
      const pose = new WorldPose();
      // Shapes on the world frame (body −1) keep their local pose as world pose.
      pose.p.set(lp);
      pose.R.set(R);
      this.poses.push(pose);
      if (!isUnbounded(inst.shape)) bounded++;
    }
    this.proxyShape = new Int32Array(bounded);
    this.planeShape = new Int32Array(n - bounded);
    let kb = 0;
    let kp = 0;
    for (let i = 0; i < n; i++) {
      if (isUnbounded(this.shapeList[i])) this.planeShape[kp++] = i;
      else this.proxyShape[kb++] = i;
    }
    this.proxyBall = Uint8Array.from(this.proxyShape, (s) => (this.sphereRadius[s] >= 0 ? 1 : 0));
    this.aabbMin = new Float64Array(3 * bounded);
    this.aabbMax = new Float64Array(3 * bounded);
    this.planeWorld = new Float64Array(4 * kp);
    this.stats.boundedShapes = bounded;
    this.stats.planes = kp;

    let maxFixed = maxBody;
    for (const b of options.fixedBodies ?? []) if (b > maxFixed) maxFixed = b;
    this.fixed = new Uint8Array(maxFixed + 2); // index body + 1; slot 0 is the world
    this.fixed[0] = 1;
    for (const b of options.fixedBodies ?? []) if (b >= -1) this.fixed[b + 1] = 1;
    this.excluded = new Set();
    for (const [p, q] of options.excludedPairs ?? []) this.excluded.add(bodyPairKey(p, q));
    this.closedForm = Uint8Array.from(shapes, ({ shape }) =>
      shape.type === "sphere" || shape.type === "plane" ? 1 : 0,
    );
    this.lastPos = new Float64Array(3 * (maxBody + 1));
    this.lastQuat = new Float64Array(4 * (maxBody + 1));
    this.still = new Uint8Array(maxBody + 2);
    this.lastRanges = new PairRanges(n);
    this.ranges = new PairRanges(n);
    this.group = new Int32Array(n);
    if (options.groups) this.group.set(options.groups);
    const proxyShape = this.proxyShape;
    this.sap = new SweepAndPrune((i, j) => this.acceptShapes(proxyShape[i], proxyShape[j]));
  }

  /**
   * Whether shapes i and j may collide: different bodies, not both fixed, not an
   * excluded body pair, not of one collision group.
   */
  acceptShapes(i: number, j: number): boolean {
    const bi = this.body[i];
    const bj = this.body[j];
    if (bi === bj) return false;
    if (this.group[i] !== 0 && this.group[i] === this.group[j]) return false;
    if (this.isFixed(bi) && this.isFixed(bj)) return false;
    if (this.excluded.size > 0 && this.excluded.has(bodyPairKey(bi, bj))) return false;
    return true;
  }

  private isFixed(b: number): boolean {
    const k = b + 1;
    return k < this.fixed.length && this.fixed[k] === 1;
  }

  /**
   * Detects all contacts for bodies at positions pos[3b..3b+2] and orientations
   * quat[4b..4b+3] ([w, x, y, z]); `out` is cleared and filled (its arrays may be
   * reallocated when it grows: read them after the call).
   */
  detect(pos: Float64Array, quat: Float64Array, out: ContactBuffer): void {
    const t0 = performance.now();
    const n = this.shapeList.length;
    const pad = 0.5 * this.margin;
    let kb = 0;
    let kp = 0;
    for (let i = 0; i < n; i++) {
      const b = this.body[i];
      const pose = this.poses[i];
      if (b >= 0) composePose(pos, quat, b, this.localP[i], this.localR[i], pose, this.scratchR);
      const shape = this.shapeList[i];
      if (shape.type === "plane") {
        worldPlane(shape, pose, this.planeWorld, 4 * kp);
        kp++;
      } else {
        // padded by margin/2: two boxes overlap whenever the shapes are closer than the
        // margin along every axis. A sphere's from sphereRadius: a cube whose ball, the
        // sphere grown by margin/2, the sweep tests too (broadphase.ts, proxyBall).
        const o = 3 * kb;
        const r = this.sphereRadius[i];
        const min = this.aabbMin;
        const max = this.aabbMax;
        if (r >= 0)
          for (let k = 0; k < 3; k++) {
            min[o + k] = pose.p[k] - r;
            max[o + k] = pose.p[k] + r;
          }
        else worldAabb(shape, pose, min, max, o);
        for (let k = o; k < o + 3; k++) {
          min[k] -= pad;
          max[k] += pad;
        }
        kb++;
      }
    }
    this.sap.update(kb, this.aabbMin, this.aabbMax, this.proxyBall);
    this.collectPlanePairs(kb, kp, pad);
    this.markStill(pos, quat);
    const t1 = performance.now();

    out.clear();
    this.ranges.clear();
    this.contacts.clear();
    this.stats.reusedPairs = 0;
    const pairs = this.sap.pairs;
    for (let k = 0; k < this.sap.pairCount; k++) {
      this.narrow(this.proxyShape[pairs[2 * k]], this.proxyShape[pairs[2 * k + 1]], out);
    }
    const pp = this.planePairs;
    for (let k = 0; k < this.planePairCount; k++) this.narrow(pp[2 * k], pp[2 * k + 1], out);
    // This detection becomes the one the next reuses.
    const contacts = this.lastContacts;
    this.lastContacts = this.contacts;
    this.contacts = contacts;
    const ranges = this.lastRanges;
    this.lastRanges = this.ranges;
    this.ranges = ranges;
    this.lastMargin = this.margin;
    const t2 = performance.now();

    const st = this.stats;
    st.broadPairs = this.sap.pairCount;
    st.planePairs = this.planePairCount;
    st.contacts = out.count;
    st.broadMs = t1 - t0;
    st.narrowMs = t2 - t1;
    st.totalMs = t2 - t0;
  }

  /**
   * The broad phase's state beyond the boxes, for snapshots (SweepAndPrune.memory, into
   * `out` when given; null: as new).
   */
  broadPhaseMemory(out?: BroadPhaseMemory): BroadPhaseMemory | null {
    return this.sap.memory(out);
  }

  restoreBroadPhase(m: BroadPhaseMemory): void {
    this.sap.restore(m);
  }

  /** The broad phase as a new detector's (a simulation's reset). */
  resetBroadPhase(): void {
    this.sap.reset();
  }

  /** Shape pairs found by the last detect() (bounded pairs, then plane pairs), i < j. */
  candidatePairs(): Array<[number, number]> {
    const res: Array<[number, number]> = [];
    const pairs = this.sap.pairs;
    for (let k = 0; k < this.sap.pairCount; k++) {
      const i = this.proxyShape[pairs[2 * k]];
      const j = this.proxyShape[pairs[2 * k + 1]];
      res.push(i < j ? [i, j] : [j, i]);
    }
    for (let k = 0; k < this.planePairCount; k++) {
      res.push([this.planePairs[2 * k], this.planePairs[2 * k + 1]]);
    }
    return res;
  }

  /**
   * Planes against every bounded shape, skipping shapes whose padded AABB lies above the
   * plane by at least margin/2: the shape's gap is at least that AABB distance plus the
   * padding (the padding adds pad·Σ|n_k| ≥ pad along a unit normal), hence ≥ margin.
   */
  private collectPlanePairs(kb: number, kp: number, pad: number): void {
    this.planePairCount = 0;
    const mn = this.aabbMin;
    const mx = this.aabbMax;
    const pw = this.planeWorld;
    for (let q = 0; q < kp; q++) {
      const ps = this.planeShape[q];
      const nx = pw[4 * q];
      const ny = pw[4 * q + 1];
      const nz = pw[4 * q + 2];
      const d = pw[4 * q + 3];
      const anx = Math.abs(nx);
      const any_ = Math.abs(ny);
      const anz = Math.abs(nz);
      for (let k = 0; k < kb; k++) {
        const cx = 0.5 * (mn[3 * k] + mx[3 * k]);
        const cy = 0.5 * (mn[3 * k + 1] + mx[3 * k + 1]);
        const cz = 0.5 * (mn[3 * k + 2] + mx[3 * k + 2]);
        const ex = 0.5 * (mx[3 * k] - mn[3 * k]);
        const ey = 0.5 * (mx[3 * k + 1] - mn[3 * k + 1]);
        const ez = 0.5 * (mx[3 * k + 2] - mn[3 * k + 2]);
        const lower = nx * cx + ny * cy + nz * cz - d - (anx * ex + any_ * ey + anz * ez);
        if (lower >= pad) continue;
        const s = this.proxyShape[k];
        if (!this.acceptShapes(ps, s)) continue;
        this.pushPlanePair(Math.min(ps, s), Math.max(ps, s));
      }
    }
  }

  private pushPlanePair(i: number, j: number): void {
    const k = 2 * this.planePairCount;
    if (k + 2 > this.planePairs.length) {
      const grown = new Int32Array(2 * this.planePairs.length);
      grown.set(this.planePairs);
      this.planePairs = grown;
    }
    this.planePairs[k] = i;
    this.planePairs[k + 1] = j;
    this.planePairCount++;
  }

  /**
   * still[] for this detect (file comment; none when the margin changed), and the poses
   * remembered for the next.
   */
  private markStill(pos: Float64Array, quat: Float64Array): void {
    const { lastPos, lastQuat, still } = this;
    const reuse = this.lastMargin >= 0 && this.lastMargin === this.margin;
    this.lastMargin = -1;
    still[0] = 1;
    for (let b = 0; b + 1 < still.length; b++) {
      let same = reuse;
      for (let k = 3 * b; k < 3 * b + 3; k++) {
        if (lastPos[k] !== pos[k]) same = false;
        lastPos[k] = pos[k];
      }
      for (let k = 4 * b; k < 4 * b + 4; k++) {
        if (lastQuat[k] !== quat[k]) same = false;
        lastQuat[k] = quat[k];
      }
      still[b + 1] = same ? 1 : 0;
    }
  }

  /** Narrow phase of shapes i < j: a = i, b = j (or the previous detection's, file comment). */
  private narrow(i: number, j: number, out: ContactBuffer): void {
    const kept = this.closedForm[i] === 0 || this.closedForm[j] === 0;
    const start = out.count;
    const last = this.lastRanges;
    const e =
      kept && this.still[this.body[i] + 1] === 1 && this.still[this.body[j] + 1] === 1
        ? last.find(i, j)
        : -1;
    if (e >= 0) {
      out.appendFrom(this.lastContacts, last.start[e], last.end[e]);
      this.stats.reusedPairs++;
    } else {
      out.setPair(this.body[i], this.body[j], i, j);
      collideShapes(
        this.shapeList[i],
        this.poses[i],
        this.shapeList[j],
        this.poses[j],
        this.margin,
        out,
      );
    }
    if (kept) {
      const from = this.contacts.count;
      this.contacts.appendFrom(out, start, out.count);
      this.ranges.add(i, j, from, this.contacts.count);
    }
  }
}

/**
 * The contacts of each narrow-phased shape pair (a, b) of one detection: the range
 * start..end−1 of its buffer, listed per shape a (head, then next).
 */
class PairRanges {
  private readonly head: Int32Array;
  private next = new Int32Array(64);
  private other = new Int32Array(64);
  start = new Int32Array(64);
  end = new Int32Array(64);
  private count = 0;

  constructor(shapes: number) {
    this.head = new Int32Array(shapes).fill(-1);
  }

  clear(): void {
    this.head.fill(-1);
    this.count = 0;
  }

  add(a: number, b: number, start: number, end: number): void {
    const e = this.count++;
    if (e === this.next.length) {
      this.next = extend(this.next, e + 1);
      this.other = extend(this.other, e + 1);
      this.start = extend(this.start, e + 1);
      this.end = extend(this.end, e + 1);
    }
    this.next[e] = this.head[a];
    this.head[a] = e;
    this.other[e] = b;
    this.start[e] = start;
    this.end[e] = end;
  }

  /** The entry of pair (a, b), −1 when it was not narrow-phased. */
  find(a: number, b: number): number {
    for (let e = this.head[a]; e >= 0; e = this.next[e]) if (this.other[e] === b) return e;
    return -1;
  }
}

function bodyPairKey(p: number, q: number): number {
  const lo = Math.min(p, q);
  const hi = Math.max(p, q);
  return (lo + 1) * BODY_KEY + (hi + 1);
}

function validateShape(s: Shape, i: number): void {
  const bad = (what: string) => new RangeError(`shape ${i} (${s.type}): ${what}`);
  const finiteNonNeg = (x: number) => Number.isFinite(x) && x >= 0;
  switch (s.type) {
    case "sphere":
      if (!finiteNonNeg(s.radius)) throw bad("radius must be finite and ≥ 0");
      return;
    case "capsule":
      if (!finiteNonNeg(s.radius) || !finiteNonNeg(s.halfLength)) {
        throw bad("radius and halfLength must be finite and ≥ 0");
      }
      return;
    case "cylinder":
      if (!(s.radius > 0 && s.halfLength > 0 && Number.isFinite(s.radius + s.halfLength))) {
        throw bad("radius and halfLength must be finite and > 0");
      }
      return;
    case "box":
      if (!s.halfExtents.every(finiteNonNeg)) throw bad("halfExtents must be finite and ≥ 0");
      return;
    case "plane": {
      const l = Math.hypot(s.normal[0], s.normal[1], s.normal[2]);
      if (!(l > 0) || !Number.isFinite(l) || !Number.isFinite(s.offset)) {
        throw bad("normal must be non-zero and offset finite");
      }
      return;
    }
  }
}
