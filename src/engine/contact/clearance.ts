/**
 * Whether some bodies' contacts are provably out of reach within a time r, without a
 * detection (integrators/impact-events.ts, mayHaveEvents: its detection of its own at each
 * step of a jointed model with restitution, beside the step's).
 *
 * A contact of the pair (b, c) enters the events' index set when g + r u_n ≤ ε_act + reach
 * (NonsmoothContact.updateIndexSet with γ = 1 over the time left r, widened by the reach of
 * the accelerations; ε_act = ACTIVATION_TOLERANCE), its gap g no less than the distance of the two shapes, hence than
 * L, the distance of their bounding spheres (body b's: its centre x_b, radius ρ_b holding
 * all its shapes, contact/setup.ts boundingRadii; a fixed or world shape's: its own), or of
 * b's sphere to a plane's surface, n·x_b − d − ρ_b. The normal velocity at the contact point,
 * whose lever arm from a centre is at most ρ + g (the point lies on or between the
 * surfaces), is |u_n| ≤ |v_b| + |v_c| + |ω_b| (ρ_b + g) + |ω_c| (ρ_c + g) = S + Ω g, so an
 * activated contact has g (1 − r Ω) ≤ ε_act + reach + r S. A pair with
 *     L (1 − r Ω) > 2 (ε_act + reach + r S),   r Ω < ½,
 * (the factor 2 above the rounding of L and of the speeds) has none, nor a pair the caller
 * says has no events (eventPair: ImpactEvents', restitution 0 between unjointed bodies).
 * O(S_b × S) a call for the S_b shapes of the bodies asked about among S, O(S) memory
 * (each shape's body, frame and radius, the fixed shapes' world centres and planes), none
 * allocated by a call. A call asking about more than MAX_SHAPES shapes answers false
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
  /** The world bounding centres (3 a shape) and planes (4) of the shapes on no dynamic body. */
  private readonly centre: Float64Array;
  private readonly plane: Float64Array;
  private readonly pose = new WorldPose();
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
    this.centre = new Float64Array(3 * n);
    this.plane = new Float64Array(4 * n);
    let available = true;
    for (let i = 0; i < n && available; i++)
      if (shapes[i].shape.type === "plane" && this.dynamic(this.body[i])) available = false;
    this.available = available;
  }

  /**
   * Whether no contact of a pair (b, c) with eventPair(b, c) (b a dynamic body marked 1 in
   * `of`, c a body or −1, the world) can enter the index set of the time r left (file
   * comment). False where not `available`, or where more than MAX_SHAPES shapes are on the
   * bodies asked about.
   */
  clear(
    of: Uint8Array,
    r: number,
    reach: number,
    eventPair: (b: number, c: number) => boolean,
  ): boolean {
    if (!this.available) return false;
    const { sys, n, body, rho, ext, centre, plane, detector } = this;
    const { pos, vel, omega } = sys;
    let asked = 0;
    for (let i = 0; i < n; i++) if (this.dynamic(body[i]) && of[body[i]] === 1) asked++;
    if (asked > MAX_SHAPES) return false;
    // the world poses of the shapes on no dynamic body (fixed bodies, the world)
    for (let j = 0; j < n; j++) {
      const c = body[j];
      if (this.dynamic(c)) continue;
      const pose = this.pose;
      if (c >= 0)
        composePose(pos, sys.quat, c, this.localP[j], this.localR[j], pose, this.scratchR);
      else {
        pose.p.set(this.localP[j]);
        pose.R.set(this.localR[j]);
      }
      const shape = detector.shapes[j].shape;
      if (shape.type === "plane") worldPlane(shape, pose, plane, 4 * j);
      else centre.set(pose.p, 3 * j);
    }
    for (let i = 0; i < n; i++) {
      const b = body[i];
      if (!this.dynamic(b) || of[b] !== 1) continue;
      const xb = pos[3 * b];
      const yb = pos[3 * b + 1];
      const zb = pos[3 * b + 2];
      const sb = Math.hypot(vel[3 * b], vel[3 * b + 1], vel[3 * b + 2]);
      const wb = Math.hypot(omega[3 * b], omega[3 * b + 1], omega[3 * b + 2]);
      for (let j = 0; j < n; j++) {
        const c = body[j];
        if (c === b || !detector.acceptShapes(i, j) || !eventPair(b, c)) continue;
        let L: number;
        let S = sb + wb * rho[b];
        let W = wb;
        if (this.dynamic(c)) {
          const dx = xb - pos[3 * c];
          const dy = yb - pos[3 * c + 1];
          const dz = zb - pos[3 * c + 2];
          L = Math.sqrt(dx * dx + dy * dy + dz * dz) - rho[b] - rho[c];
          const wc = Math.hypot(omega[3 * c], omega[3 * c + 1], omega[3 * c + 2]);
          S += Math.hypot(vel[3 * c], vel[3 * c + 1], vel[3 * c + 2]) + wc * rho[c];
          W += wc;
        } else if (ext[j] === Number.POSITIVE_INFINITY) {
          const o = 4 * j;
          L = plane[o] * xb + plane[o + 1] * yb + plane[o + 2] * zb - plane[o + 3] - rho[b];
        } else {
          const o = 3 * j;
          const dx = xb - centre[o];
          const dy = yb - centre[o + 1];
          const dz = zb - centre[o + 2];
          L = Math.sqrt(dx * dx + dy * dy + dz * dz) - rho[b] - ext[j];
        }
        if (!(r * W < 0.5 && L * (1 - r * W) > 2 * (ACTIVATION_TOLERANCE + reach + r * S)))
          return false;
      }
    }
    return true;
  }

  /** Whether body index b (−1 the world) has degrees of freedom. */
  private dynamic(b: number): boolean {
    return b >= 0 && this.sys.dofOffset[b] >= 0;
  }
}
