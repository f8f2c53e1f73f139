/**
 * Whether some bodies' contacts are provably out of reach within a time r, without a
 * detection (integrators/impact-events.ts, mayHaveEvents: its detection of its own at each
 * step of a jointed model with restitution, beside the step's).
 *
 * A contact of the pair (b, c) enters the events' index set when g + r u_n ≤ ε_act + reach
 * (NonsmoothContact.updateIndexSet with γ = 1 over the time left r, widened by the reach of
 * the accelerations; ε_act = ACTIVATION_TOLERANCE), its gap g no less than the distance of
 * the two shapes, hence than L, their separation along one direction u: with c_i, c_j the
 * shapes' centres (their frames' origins) and u = (c_j − c_i)/|c_j − c_i|,
 *     L = |c_j − c_i| − σ_i(u) − σ_j(u),
 * σ(u) a shape's support about its centre along u (support: a box's Σ_k h_k |u·a_k|, the
 * other shapes' bounding radius, a sphere's its radius), and against a plane (n, d)
 * L = n·c_i − d − σ_i(n), a box's exact distance to it (the shapes' projections on u are
 * the intervals c·u ± σ(u), at least L apart, and no two points are nearer than their
 * projections; a 0.1 m box lying flat 0.02 m above the floor: L = 0.01 m where body b's
 * bounding sphere, radius ρ_b = 0.052 m, gave −0.032 m until 2026-12-07). The normal
 * velocity at the contact point,
 * whose lever arm from a centre is at most ρ + g (the point lies on or between the
 * surfaces), is |u_n| ≤ |v_b| + |v_c| + |ω_b| (ρ_b + g) + |ω_c| (ρ_c + g) = S + Ω g
 * (against a plane, which does not move: |n·v_b| + |n × ω_b| (ρ_b + g), its normal
 * components alone, u_n = n·v_b + r·(ω_b × n)), so an
 * activated contact has g (1 − r Ω) ≤ ε_act + reach + r S. A pair with
 *     L (1 − r Ω) > 2 (ε_act + reach + r S),   r Ω < ½,
 * (the factor 2 above the rounding of L and of the speeds) has none, nor a pair the caller
 * says has no events (eventPair: ImpactEvents', restitution 0 between unjointed bodies).
 * Slow pairs: an activated contact has g ≤ G = (ε_act + reach + r S)/(1 − r Ω), so its
 * |u_n| ≤ S + Ω max(g, 0) ≤ S + Ω G (a penetrating contact's point lies within both
 * shapes: lever arm ≤ ρ). The caller's events take only contacts approaching faster than
 * V (ImpactEvents: V_EPS = 1e-6 m/s), so a pair with S + Ω G < V/2 (r Ω < ½) has no event
 * contact either, though it may have contacts in the index set, touching (`touching`): the
 * bodies resting on a floor, which the distance never clears (a 6-link chain lying on
 * the floor, its links' bounding boxes touching it). The caller passes a slow pair only
 * where its own bounds say no contact of it, open or not, can do anything within r
 * (SlowPairs.pass: ImpactEvents' from-rest timing), told each side's lever bound and
 * whether the side is `touched`: a box or sphere on a static plane whose L, exact for those
 * (a box's lowest corner is planeBox's deepest vertex, a sphere's gap n·c − d − R), and
 * speed bound S keep L + r S ≤ ε_act/2, so that the detection of r holds a contact of that
 * body with gap ≤ ε_act (its gap ≤ L + rounding, g + r u_n ≤ ε_act: in the index set;
 * the factor 2 above the rounding).
 * Open gaps: a contact open beyond ε_act has a gap > ε_act; a box's or sphere's on a plane,
 * whose contacts are its corners (planeBox: planeVertices, gap n·v − d) or its centre's
 * point (gap n·c − d − R), at least the least of those gaps above ε_act/2 (the others
 * ≤ ε_act with the rounding: none open), Infinity where none is (`openGap`).
 * O(S_b × S) a call for the S_b shapes of the bodies asked about among S, O(S) memory
 * (each shape's body, frame, radius and half-extents, its world centre and axes a call's),
 * none allocated by a call. A call asking about more than MAX_SHAPES shapes answers false
 * (the caller detects: its S_b × S pairs would cost more than a detection's sweep), so that a
 * large model with a few eventful bodies (a pendulum among 1000 resting spheres) is
 * tested, and one whose every body is eventful is not. Not `available` (never clear) for
 * a model with a plane on a dynamic body (no bounding sphere); nor where fem surfaces
 * collide (the caller detects: fem-faces.ts and fem-vertices.ts, whose faces these spheres
 * do not hold).
 * Units: m, m/s, rad/s, s.
 */

import { ACTIVATION_TOLERANCE } from "../dynamics/one-step-problem";
import type { CollisionDetector } from "../geometry/collide";
import { composePose, WorldPose } from "../geometry/pose";
import { type Shape, worldPlane } from "../geometry/shapes";
import { quatToMat3Normalized } from "../math/quat";
import type { BodySystem } from "../model/body-system";
import { boundingRadii } from "./setup";

/**
 * Shapes of the bodies asked about at most for the test (`clear`: its pairs with the S
 * shapes then cost 64 S, less than a detection's sweep; until 2026-12-07 the model's shapes
 * at most, S ≤ 64, with an S × S table of the pairs that may collide).
 */
export const MAX_SHAPES = 64;

/** The bounding radius (m) of a bounded shape about its frame's origin (boundingRadii's). */
function shapeRadius(s: Shape): number {
  if (s.type === "sphere") return s.radius;
  if (s.type === "box") return Math.hypot(s.halfExtents[0], s.halfExtents[1], s.halfExtents[2]);
  if (s.type === "capsule") return s.halfLength + s.radius;
  if (s.type === "cylinder") return Math.hypot(s.halfLength, s.radius);
  if (s.type === "convex") return s.hull.radius;
  if (s.type === "mesh") return s.mesh.radius;
  return Number.POSITIVE_INFINITY;
}

/** The caller's test of a slow pair (ContactClearance.clear, file comment). */
export interface SlowPairs {
  /** The speed V (m/s) below which a contact takes no event (ImpactEvents: V_EPS). */
  readonly rate: number;
  /**
   * Whether slow pair (b, c) (c a body or −1) may be passed: G (m) bounds its contacts'
   * gaps and, with ρ, their lever arms (ρ_b + G); `open` (m) the gap of its contacts open
   * beyond ε_act at least (file comment, open gaps); touchedB/touchedC whether that side is
   * touched (file comment).
   */
  pass(
    b: number,
    c: number,
    G: number,
    open: number,
    touchedB: boolean,
    touchedC: boolean,
  ): boolean;
}

export class ContactClearance {
  /** Whether the test applies to the model (file comment); else `clear` is never true. */
  readonly available: boolean;
  private readonly n: number;
  private readonly body: Int32Array;
  /** Each body's bounding radius about its position (m; boundingRadii). */
  readonly rho: Float64Array;
  /** Each shape's bounding radius about its frame's origin (Infinity: a plane). */
  private readonly ext: Float64Array;
  private readonly localP: Float64Array[];
  private readonly localR: Float64Array[];
  /** A box's half-extents (3 a shape; −1 for the other shapes: support). */
  private readonly half: Float64Array;
  /** Each shape's world centre (3 a shape), axes (9) and a plane's (n, d) (4), a call's. */
  private readonly centre: Float64Array;
  private readonly axes: Float64Array;
  private readonly plane: Float64Array;
  private readonly pose = new WorldPose();
  /**
   * Whether the last `clear` that answered true passed a pair as slow (file comment): its
   * contacts may be in the index set, not approaching faster than V.
   */
  touching = false;
  /** 1 for the dynamic bodies a `clear` found touched (file comment), a call's. */
  private readonly touched: Uint8Array;
  private readonly scratchR = new Float64Array(9);

  constructor(
    private readonly sys: BodySystem,
    private readonly detector: CollisionDetector,
  ) {
    const shapes = detector.shapes;
    const n = shapes.length;
    this.n = n;
    this.body = Int32Array.from(shapes, (s) => s.body);
    this.ext = Float64Array.from(shapes, (s) => shapeRadius(s.shape));
    this.rho = boundingRadii(shapes, sys.numBodies);
    this.localP = shapes.map((s) => new Float64Array(s.localPosition ?? [0, 0, 0]));
    this.localR = shapes.map((s) => {
      const R = new Float64Array(9);
      quatToMat3Normalized(R, 0, new Float64Array(s.localOrientation ?? [1, 0, 0, 0]), 0);
      return R;
    });
    this.half = new Float64Array(3 * n).fill(-1);
    for (let i = 0; i < n; i++) {
      const shape = shapes[i].shape;
      if (shape.type === "box") this.half.set(shape.halfExtents, 3 * i);
    }
    this.centre = new Float64Array(3 * n);
    this.axes = new Float64Array(9 * n);
    this.plane = new Float64Array(4 * n);
    this.touched = new Uint8Array(sys.numBodies);
    let available = true;
    for (let i = 0; i < n && available; i++)
      if (shapes[i].shape.type === "plane" && this.dynamic(this.body[i])) available = false;
    this.available = available;
  }

  /**
   * Whether no contact of a pair (b, c) with eventPair(b, c) (b a dynamic body marked 1 in
   * `of`, c a body or −1, the world) can enter the index set of the time r left (file
   * comment), or approach faster than slow.rate when it does and `slow` passes it (slow
   * pairs, file comment: `touching` then true; null: none). False where not `available`, or
   * where more than MAX_SHAPES shapes are on the bodies asked about.
   */
  clear(
    of: Uint8Array,
    r: number,
    reach: number,
    eventPair: (b: number, c: number) => boolean,
    slow: SlowPairs | null = null,
  ): boolean {
    this.touching = false;
    if (!this.available) return false;
    const { sys, n, body, rho, centre, plane, detector } = this;
    const { pos, vel, omega } = sys;
    let asked = 0;
    for (let i = 0; i < n; i++) if (this.dynamic(body[i]) && of[body[i]] === 1) asked++;
    if (asked > MAX_SHAPES) return false;
    // every shape's world centre and axes (9: R row-major, its columns the axes), a plane's
    // (n, d) (4)
    const pose = this.pose;
    let touching = false;
    for (let j = 0; j < n; j++) {
      const c = body[j];
      if (c >= 0)
        composePose(pos, sys.quat, c, this.localP[j], this.localR[j], pose, this.scratchR);
      else {
        pose.p.set(this.localP[j]);
        pose.R.set(this.localR[j]);
      }
      const shape = detector.shapes[j].shape;
      if (shape.type === "plane") worldPlane(shape, pose, plane, 4 * j);
      else {
        centre.set(pose.p, 3 * j);
        this.axes.set(pose.R, 9 * j);
      }
    }
    if (slow !== null) this.markTouched(r);
    const touched = this.touched;
    for (let i = 0; i < n; i++) {
      const b = body[i];
      if (!this.dynamic(b) || of[b] !== 1) continue;
      const sb = Math.hypot(vel[3 * b], vel[3 * b + 1], vel[3 * b + 2]);
      const wb = Math.hypot(omega[3 * b], omega[3 * b + 1], omega[3 * b + 2]);
      const xi = centre[3 * i];
      const yi = centre[3 * i + 1];
      const zi = centre[3 * i + 2];
      for (let j = 0; j < n; j++) {
        const c = body[j];
        if (c === b || !detector.acceptShapes(i, j) || !eventPair(b, c)) continue;
        let L: number;
        let S = sb + wb * rho[b];
        let W = wb;
        if (this.dynamic(c)) {
          const wc = Math.hypot(omega[3 * c], omega[3 * c + 1], omega[3 * c + 2]);
          S += Math.hypot(vel[3 * c], vel[3 * c + 1], vel[3 * c + 2]) + wc * rho[c];
          W += wc;
        }
        if (this.ext[j] === Number.POSITIVE_INFINITY) {
          const o = 4 * j;
          const nx = plane[o];
          const ny = plane[o + 1];
          const nz = plane[o + 2];
          L = nx * xi + ny * yi + nz * zi - plane[o + 3] - this.support(i, nx, ny, nz);
          // (the plane still: u_n = n·v_b + r·(ω_b × n), so S and Ω take the normal speed
          // and |n × ω_b| alone: a link sliding or turning flat on the floor has neither)
          const vx = vel[3 * b];
          const vy = vel[3 * b + 1];
          const vz = vel[3 * b + 2];
          const wx = omega[3 * b];
          const wy = omega[3 * b + 1];
          const wz = omega[3 * b + 2];
          W = Math.hypot(ny * wz - nz * wy, nz * wx - nx * wz, nx * wy - ny * wx);
          S = Math.abs(nx * vx + ny * vy + nz * vz) + W * rho[b];
        } else {
          const dx = centre[3 * j] - xi;
          const dy = centre[3 * j + 1] - yi;
          const dz = centre[3 * j + 2] - zi;
          const D = Math.sqrt(dx * dx + dy * dy + dz * dz);
          L =
            D > 0
              ? D -
                this.support(i, dx / D, dy / D, dz / D) -
                this.support(j, dx / D, dy / D, dz / D)
              : -this.ext[i] - this.ext[j];
        }
        if (!(r * W < 0.5)) return false;
        const band = ACTIVATION_TOLERANCE + reach + r * S;
        if (L * (1 - r * W) > 2 * band) continue;
        const G = band / (1 - r * W);
        if (slow === null || !(S + W * G < 0.5 * slow.rate)) return false;
        const tc = this.dynamic(c) && touched[c] === 1;
        const open =
          this.ext[j] === Number.POSITIVE_INFINITY ? this.openGap(i, j) : ACTIVATION_TOLERANCE;
        if (!slow.pass(b, c, G, open, touched[b] === 1, tc)) return false;
        touching = true;
      }
    }
    this.touching = touching;
    return true;
  }

  /**
   * `touched` for the time r (file comment): the dynamic bodies with a box or sphere whose
   * L + r S against a static plane it may collide with is at most ε_act/2 (the plane's S:
   * |n·v_b| + |n × ω_b| ρ_b, as `clear`'s), from `clear`'s world centres and planes.
   */
  private markTouched(r: number): void {
    const { n, body, plane, centre, detector, touched, rho } = this;
    const { vel, omega } = this.sys;
    touched.fill(0);
    for (let i = 0; i < n; i++) {
      const b = body[i];
      const type = detector.shapes[i].shape.type;
      if (!this.dynamic(b) || touched[b] === 1 || (type !== "box" && type !== "sphere")) continue;
      for (let j = 0; j < n; j++) {
        if (this.ext[j] !== Number.POSITIVE_INFINITY || !detector.acceptShapes(i, j)) continue;
        const o = 4 * j;
        const nx = plane[o];
        const ny = plane[o + 1];
        const nz = plane[o + 2];
        const L =
          nx * centre[3 * i] +
          ny * centre[3 * i + 1] +
          nz * centre[3 * i + 2] -
          plane[o + 3] -
          this.support(i, nx, ny, nz);
        const wx = omega[3 * b];
        const wy = omega[3 * b + 1];
        const wz = omega[3 * b + 2];
        const S =
          Math.abs(nx * vel[3 * b] + ny * vel[3 * b + 1] + nz * vel[3 * b + 2]) +
          Math.hypot(ny * wz - nz * wy, nz * wx - nx * wz, nx * wy - ny * wx) * rho[b];
        if (L + r * S <= 0.5 * ACTIVATION_TOLERANCE) {
          touched[b] = 1;
          break;
        }
      }
    }
  }

  /**
   * The least gap (m) above ε_act/2 of shape i's corners (a box) or centre's point (a
   * sphere) against plane j, from `clear`'s centres, axes and planes, Infinity where none
   * is; ε_act for the other shapes (file comment, open gaps).
   */
  private openGap(i: number, j: number): number {
    const type = this.detector.shapes[i].shape.type;
    if (type !== "box" && type !== "sphere") return ACTIVATION_TOLERANCE;
    const { plane, centre, half, axes } = this;
    const o = 4 * j;
    const nx = plane[o];
    const ny = plane[o + 1];
    const nz = plane[o + 2];
    const dc = nx * centre[3 * i] + ny * centre[3 * i + 1] + nz * centre[3 * i + 2] - plane[o + 3];
    const band = 0.5 * ACTIVATION_TOLERANCE;
    let open = Number.POSITIVE_INFINITY;
    if (type === "sphere") {
      const g = dc - this.ext[i];
      return g > band ? g : open;
    }
    // n·a_k h_k for the box's axes a_k (columns of R, row-major)
    const q = 9 * i;
    const m0 = (nx * axes[q] + ny * axes[q + 3] + nz * axes[q + 6]) * half[3 * i];
    const m1 = (nx * axes[q + 1] + ny * axes[q + 4] + nz * axes[q + 7]) * half[3 * i + 1];
    const m2 = (nx * axes[q + 2] + ny * axes[q + 5] + nz * axes[q + 8]) * half[3 * i + 2];
    for (let v = 0; v < 8; v++) {
      const g = dc + (v & 1 ? m0 : -m0) + (v & 2 ? m1 : -m1) + (v & 4 ? m2 : -m2);
      if (g > band && g < open) open = g;
    }
    return open;
  }

  /**
   * The support of bounded shape i along the unit direction u (m): the largest u·(x − c_i)
   * over its points x (c_i its frame's origin in the world, `centre`), Σ_k h_k |u·a_k| for a
   * box (half-extents h_k along its axes a_k, `axes`), its bounding radius (`ext`) for the
   * others (a sphere's exactly). The same along −u (each shape symmetric about its origin,
   * or bounded by its ball).
   */
  private support(i: number, ux: number, uy: number, uz: number): number {
    const h = this.half;
    if (h[3 * i] < 0) return this.ext[i];
    const R = this.axes;
    const o = 9 * i;
    return (
      h[3 * i] * Math.abs(ux * R[o] + uy * R[o + 3] + uz * R[o + 6]) +
      h[3 * i + 1] * Math.abs(ux * R[o + 1] + uy * R[o + 4] + uz * R[o + 7]) +
      h[3 * i + 2] * Math.abs(ux * R[o + 2] + uy * R[o + 5] + uz * R[o + 8])
    );
  }

  /** Whether body index b (−1 the world) has degrees of freedom. */
  private dynamic(b: number): boolean {
    return b >= 0 && this.sys.dofOffset[b] >= 0;
  }
}
