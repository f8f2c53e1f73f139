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
 * the floor, its links' bounding boxes touching it).
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
    let available = true;
    for (let i = 0; i < n && available; i++)
      if (shapes[i].shape.type === "plane" && this.dynamic(this.body[i])) available = false;
    this.available = available;
  }

  /**
   * Whether no contact of a pair (b, c) with eventPair(b, c) (b a dynamic body marked 1 in
   * `of`, c a body or −1, the world) can enter the index set of the time r left (file
   * comment), or approach faster than `slow` (m/s; 0: any approach) when it does (slow
   * pairs, file comment: `touching` then true). False where not `available`, or where more
   * than MAX_SHAPES shapes are on the bodies asked about.
   */
  clear(
    of: Uint8Array,
    r: number,
    reach: number,
    eventPair: (b: number, c: number) => boolean,
    slow = 0,
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
        if (!(S + (W * band) / (1 - r * W) < 0.5 * slow)) return false;
        touching = true;
      }
    }
    this.touching = touching;
    return true;
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
