/**
 * A contact detection that stays usable while the bodies move a little: detected once at
 * a pose (with a margin), its contacts are carried rigidly with their bodies to later poses
 * as long as it provably still lists every contact that can penetrate. The nonsmooth
 * contact detects at the step's start (x_t) and its position projection reuses that
 * detection at x_{t+h} and after each projection pass (bench/README.md, "Contact position
 * projection"). Units: m.
 */
import type { CollisionDetector } from "../geometry/collide";
import { ContactBuffer } from "../geometry/contact-buffer";
import { grow } from "../math/grow";
import type { BodySystem } from "../model/body-system";
import { boundingRadii } from "./setup";

/** a[i..i+2]·b[j..j+2]. */
function rowDot(a: Float64Array, i: number, b: Float64Array, j: number): number {
  return a[i] * b[j] + a[i + 1] * b[j + 1] + a[i + 2] * b[j + 2];
}

export class CarriedDetection {
  /** The contacts detected at the reference pose. */
  readonly buffer = new ContactBuffer(64);
  /** Per body: the bounding radius of its shapes about its centre (m). */
  readonly rho: Float64Array;
  /** Gaps and midpoints of the detected contacts carried to the current pose (transport). */
  gap: Float64Array = new Float64Array(0);
  point: Float64Array = new Float64Array(0);
  /**
   * Pose at which `buffer` was detected (centres, rotation matrices) and the margin used.
   * A negative margin: no detection to reuse (before the first step, after clear()).
   */
  private readonly refPos: Float64Array;
  private readonly refRot: Float64Array;
  private refMargin = -1;
  /** Per body: the rotation T = R Rᵣₑ𝒻ᵀ since the detection pose (9 per body). */
  private readonly turn: Float64Array;
  /** Per shape: the radius about its core (sphere, capsule, cylinder), 0 for boxes and planes. */
  private readonly shapeRadius: Float64Array;
  /** Per shape: 1 for a plane (contactPoint). */
  private readonly plane: Uint8Array;
  /** Scratch of transport: the two carried core points. */
  private readonly carried = new Float64Array(6);
  /**
   * Per body: the world box of its shapes at the detection pose (min 0..2, max 3..5; an
   * unbounded shape, a plane, makes it all of space; no shape, empty) and the bound δ on
   * how far a point of its shapes moved since then (covers()).
   */
  private readonly refBox: Float64Array;
  private readonly moved: Float64Array;

  constructor(
    private readonly sys: BodySystem,
    readonly detector: CollisionDetector,
  ) {
    this.rho = boundingRadii(detector.shapes, sys.numBodies);
    this.refPos = new Float64Array(3 * sys.numBodies);
    this.refRot = new Float64Array(9 * sys.numBodies);
    this.turn = new Float64Array(9 * sys.numBodies);
    this.refBox = new Float64Array(6 * sys.numBodies);
    this.moved = new Float64Array(sys.numBodies);
    this.shapeRadius = Float64Array.from(detector.shapes, ({ shape: sh }) =>
      sh.type === "sphere" || sh.type === "capsule" || sh.type === "cylinder" ? sh.radius : 0,
    );
    this.plane = Uint8Array.from(detector.shapes, ({ shape: sh }) => (sh.type === "plane" ? 1 : 0));
  }

  /** Forgets the detection (nothing to reuse until the next detect). */
  clear(): void {
    this.buffer.clear();
    this.refMargin = -1;
  }

  /**
   * Detection at the current pose into `buffer` with the detector's current margin,
   * remembering the pose and the margin for covers() and transport().
   */
  detect(): void {
    const { sys } = this;
    this.detector.detect(sys.pos, sys.quat, this.buffer);
    this.refPos.set(sys.pos);
    this.refRot.set(sys.rotation);
    this.refMargin = this.detector.margin;
    this.boxBodies();
  }

  /**
   * refBox from the detector's boxes of this detection (padded by margin/2 there: the
   * padding taken off again).
   */
  private boxBodies(): void {
    const { detector, refBox } = this;
    const shapes = detector.shapes;
    const pad = 0.5 * detector.margin;
    for (let b = 0; b < this.sys.numBodies; b++) {
      for (let k = 0; k < 3; k++) {
        refBox[6 * b + k] = Number.POSITIVE_INFINITY;
        refBox[6 * b + 3 + k] = Number.NEGATIVE_INFINITY;
      }
    }
    const { aabbMin, aabbMax, proxyShape, planeShape } = detector;
    for (let j = 0; j < proxyShape.length; j++) {
      const b = shapes[proxyShape[j]].body;
      if (b < 0) continue;
      for (let k = 0; k < 3; k++) {
        refBox[6 * b + k] = Math.min(refBox[6 * b + k], aabbMin[3 * j + k] + pad);
        refBox[6 * b + 3 + k] = Math.max(refBox[6 * b + 3 + k], aabbMax[3 * j + k] - pad);
      }
    }
    for (let j = 0; j < planeShape.length; j++) {
      const b = shapes[planeShape[j]].body;
      if (b < 0) continue;
      for (let k = 0; k < 3; k++) {
        refBox[6 * b + k] = Number.NEGATIVE_INFINITY;
        refBox[6 * b + 3 + k] = Number.POSITIVE_INFINITY;
      }
    }
  }

  /**
   * Whether `buffer` still lists every contact that can penetrate at the current pose: a
   * pair it lacks had gap ≥ refMargin at the detection pose, and its gap has since dropped
   * by at most δ_a + δ_b, δ_X = |x_X − x_X,ref| + ρ_X ‖R_X − R_X,ref‖_F bounding how far a
   * point of body X's shapes moved (ρ_X its bounding radius; a rotation by φ moves a point
   * at distance ρ by 2ρ sin(φ/2) = ρ ‖R − R_ref‖_F / √2). So the two largest δ summing to
   * at most refMargin suffice (a pair with a fixed body needs δ ≤ refMargin only).
   * Otherwise, with every δ ≤ refMargin, the pairs of two moving bodies with δ_a + δ_b >
   * refMargin are checked one by one (farApart): such a pair is covered when its
   * shapes' boxes at the detection pose were at least δ_a + δ_b apart along an axis
   * (their gap was at least that).
   * Also fills turn (the rotations since the detection pose) for transport().
   */
  covers(): boolean {
    const { sys, refPos, refRot, turn, rho, moved } = this;
    const R = sys.rotation;
    let d1 = 0;
    let d2 = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      const o = 9 * b;
      let f = 0;
      for (let k = 0; k < 9; k++) {
        const e = R[o + k] - refRot[o + k];
        f += e * e;
      }
      // T_ij = (row i of R)·(row j of Rᵣₑ𝒻).
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) turn[o + 3 * i + j] = rowDot(R, o + 3 * i, refRot, o + 3 * j);
      const dx = sys.pos[3 * b] - refPos[3 * b];
      const dy = sys.pos[3 * b + 1] - refPos[3 * b + 1];
      const dz = sys.pos[3 * b + 2] - refPos[3 * b + 2];
      const d = Math.sqrt(dx * dx + dy * dy + dz * dz) + rho[b] * Math.sqrt(0.5 * f);
      moved[b] = d;
      if (d > d1) {
        d2 = d1;
        d1 = d;
      } else if (d > d2) d2 = d;
    }
    const margin = this.refMargin;
    if (d1 + d2 <= margin) return true;
    return d1 <= margin && this.farApart();
  }

  /**
   * Whether every pair of bodies with δ_a + δ_b > refMargin had boxes at least δ_a + δ_b
   * apart along some axis at the detection pose (covers(); O(fast bodies × bodies), a
   * fast body's δ exceeding refMargin/2).
   */
  private farApart(): boolean {
    const { refBox: box, moved } = this;
    const nb = this.sys.numBodies;
    const margin = this.refMargin;
    for (let a = 0; a < nb; a++) {
      const da = moved[a];
      if (!(2 * da > margin)) continue;
      for (let b = 0; b < nb; b++) {
        const reach = da + moved[b];
        // each pair once: b is also fast and comes later, or b is slow
        if (b === a || !(reach > margin) || (2 * moved[b] > margin && b < a)) continue;
        let apart = false;
        for (let k = 0; k < 3 && !apart; k++)
          apart =
            box[6 * b + k] - box[6 * a + 3 + k] >= reach ||
            box[6 * a + k] - box[6 * b + 3 + k] >= reach;
        if (!apart) return false;
      }
    }
    return true;
  }

  /**
   * The detected contacts carried to the current pose (turn from covers()), into gap and
   * point. The normal n is kept and each side's core point moves rigidly with its body:
   * the surface point p_a = point − (gap/2) n, p_b = point + (gap/2) n, moved inwards by
   * the shape's radius ρ (sphere centre, capsule axis point; a cylinder's radius too, exact
   * for a rolling side contact and conservative by ρ(1 − cos φ) for a rim point; ρ = 0 and
   * the surface point itself for boxes and planes),
   * k_a = p_a − ρ_a n, k_b = p_b + ρ_b n, then
   * k_X' = x_X + T_X (k_X − x_X,ref), and
   *     g' = n·(k_b' − k_a') − ρ_a − ρ_b,   midpoint (k_a' + ρ_a n + k_b' − ρ_b n)/2.
   * Why the core and not the surface point: a sphere's contact point is no material point
   * (the sphere rolls under it); carried with the body's rotation φ it would raise the gap
   * by ρ(1 − cos φ) (4e-5 m for a 5 cm sphere turning 0.04 rad in a step). So: exact for a
   * box vertex or a sphere on a fixed plane, and for two spheres g' = n·(c_b' − c_a') −
   * ρ_a − ρ_b ≤ |c_b' − c_a'| − ρ_a − ρ_b, the true gap — the carried penetration is then
   * never less than the true one. Elsewhere (edge and face contacts of boxes) it is exact
   * to first order, like the Jacobian H_n. Returns the deepest carried penetration
   * max(0, −min g') (m).
   */
  transport(): number {
    const { sys, buffer, refPos, turn, shapeRadius } = this;
    const nc = buffer.count;
    this.gap = grow(this.gap, nc);
    this.point = grow(this.point, 3 * nc);
    const { normal, point, gap } = buffer;
    const tp = this.point;
    let gmin = 0;
    for (let k = 0; k < nc; k++) {
      const nx = normal[3 * k];
      const ny = normal[3 * k + 1];
      const nz = normal[3 * k + 2];
      const ra = shapeRadius[buffer.shapeA[k]];
      const rb = shapeRadius[buffer.shapeB[k]];
      const ha = 0.5 * gap[k] + ra;
      const hb = 0.5 * gap[k] + rb;
      const kp = this.carried;
      carryPoint(
        sys.pos,
        refPos,
        turn,
        buffer.bodyA[k],
        point[3 * k] - ha * nx,
        point[3 * k + 1] - ha * ny,
        point[3 * k + 2] - ha * nz,
        kp,
        0,
      );
      carryPoint(
        sys.pos,
        refPos,
        turn,
        buffer.bodyB[k],
        point[3 * k] + hb * nx,
        point[3 * k + 1] + hb * ny,
        point[3 * k + 2] + hb * nz,
        kp,
        3,
      );
      const ax = kp[0];
      const ay = kp[1];
      const az = kp[2];
      const bx = kp[3];
      const by = kp[4];
      const bz = kp[5];
      const g = nx * (bx - ax) + ny * (by - ay) + nz * (bz - az) - ra - rb;
      this.gap[k] = g;
      // Midpoint of the surface points k_a' + ρ_a n and k_b' − ρ_b n.
      const c = 0.5 * (ra - rb);
      tp[3 * k] = 0.5 * (ax + bx) + c * nx;
      tp[3 * k + 1] = 0.5 * (ay + by) + c * ny;
      tp[3 * k + 2] = 0.5 * (az + bz) + c * nz;
      if (g < gmin) gmin = g;
    }
    return -gmin;
  }

  /**
   * Contact k's core points (transport's k_a = p − (g/2 + ρ_a) n, k_b = p + (g/2 + ρ_b) n)
   * in their bodies' frames at the detection pose, R_refᵀ (k − x_ref) (world for ground),
   * into out[o..o+5], and ρ_a, ρ_b into out[o+6], out[o+7]: for anchoredGap's gap at a
   * later pose, which needs neither this detection nor its keys (a projection that detects
   * afresh replaces both).
   */
  anchor(k: number, out: Float64Array, o: number): void {
    const { buffer, refPos, refRot, shapeRadius } = this;
    const { normal, point, gap } = buffer;
    const ra = shapeRadius[buffer.shapeA[k]];
    const rb = shapeRadius[buffer.shapeB[k]];
    out[o + 6] = ra;
    out[o + 7] = rb;
    for (let side = 0; side < 2; side++) {
      const b = side === 0 ? buffer.bodyA[k] : buffer.bodyB[k];
      const d = side === 0 ? -(0.5 * gap[k] + ra) : 0.5 * gap[k] + rb;
      const a = o + 3 * side;
      for (let i = 0; i < 3; i++) out[a + i] = point[3 * k + i] + d * normal[3 * k + i];
      if (b < 0) continue;
      const x = out[a] - refPos[3 * b];
      const y = out[a + 1] - refPos[3 * b + 1];
      const z = out[a + 2] - refPos[3 * b + 2];
      // l_j = Σ_i R_ij d_i (R row-major)
      for (let j = 0; j < 3; j++)
        out[a + j] = refRot[9 * b + j] * x + refRot[9 * b + 3 + j] * y + refRot[9 * b + 6 + j] * z;
    }
  }

  /**
   * out[o..o+2] ← the point of contact k at the current pose (after transport), for the
   * lever arms of its velocity: transport's midpoint is half a slide off the true contact
   * where one side slides on the other (a 5 cm sphere at the end of a link sliding 4.7 mm a
   * step on the floor: the floor's point stays where the step began, and the tip's normal
   * velocity read at the midpoint was off by ω × 2.4 mm, 7e-4 m/s). So the surface point of
   * a rounded side (sphere, capsule, cylinder: its core point carried plus ρ n, where any
   * partner touches it), else of the side opposite a plane (whose own point is no material
   * feature: a vertex, an edge of the other is), else the midpoint.
   */
  contactPoint(k: number, out: Float64Array, o: number): void {
    const { sys, buffer, refPos, turn, shapeRadius, plane } = this;
    const sa = buffer.shapeA[k];
    const sb = buffer.shapeB[k];
    const ra = shapeRadius[sa];
    const rb = shapeRadius[sb];
    const sideA = ra > rb || (ra === rb && plane[sb] === 1 && plane[sa] === 0);
    const sideB = rb > ra || (ra === rb && plane[sa] === 1 && plane[sb] === 0);
    if (!sideA && !sideB) {
      for (let j = 0; j < 3; j++) out[o + j] = this.point[3 * k + j];
      return;
    }
    const { normal, point, gap } = buffer;
    // the side's surface point at the detection, carried: p ∓ (g/2) n, its core ∓ ρ n
    const sign = sideA ? -1 : 1;
    const r = sideA ? ra : rb;
    const d = sign * (0.5 * gap[k] + r);
    carryPoint(
      sys.pos,
      refPos,
      turn,
      sideA ? buffer.bodyA[k] : buffer.bodyB[k],
      point[3 * k] + d * normal[3 * k],
      point[3 * k + 1] + d * normal[3 * k + 1],
      point[3 * k + 2] + d * normal[3 * k + 2],
      out,
      o,
    );
    for (let j = 0; j < 3; j++) out[o + j] -= sign * r * normal[3 * k + j];
  }
}

/**
 * The gap (m) at the current pose of a contact anchored by CarriedDetection.anchor (8
 * values at anchors[o..]) whose normal n (a to b, world) is at normal[no..no+2]: its core
 * points carried rigidly with their bodies, k_X = x_X + R_X k_X,local (world for ground), and
 *     g = n·(k_b − k_a) − ρ_a − ρ_b,
 * transport's gap, the normal kept (exact for a sphere or a box vertex on a fixed plane).
 */
export function anchoredGap(
  sys: BodySystem,
  bodyA: number,
  bodyB: number,
  anchors: Float64Array,
  o: number,
  normal: Float64Array,
  no: number,
): number {
  let g = -anchors[o + 6] - anchors[o + 7];
  for (let side = 0; side < 2; side++) {
    const b = side === 0 ? bodyA : bodyB;
    const s = side === 0 ? -1 : 1;
    const a = o + 3 * side;
    for (let i = 0; i < 3; i++) {
      let k = anchors[a + i];
      if (b >= 0) {
        const r = 9 * b + 3 * i;
        const R = sys.rotation;
        k =
          sys.pos[3 * b + i] +
          R[r] * anchors[a] +
          R[r + 1] * anchors[a + 1] +
          R[r + 2] * anchors[a + 2];
      }
      g += s * normal[no + i] * k;
    }
  }
  return g;
}

/**
 * out[o..o+2] = the point (x, y, z) carried rigidly with body b since the reference pose:
 * x_b + T_b (p − x_b,ref) (T_b: row-major 3×3 at 9b); the point itself for ground (b < 0).
 */
function carryPoint(
  pos: Float64Array,
  refPos: Float64Array,
  turn: Float64Array,
  b: number,
  x: number,
  y: number,
  z: number,
  out: Float64Array,
  o: number,
): void {
  if (b < 0) {
    out[o] = x;
    out[o + 1] = y;
    out[o + 2] = z;
    return;
  }
  const t = 9 * b;
  const lx = x - refPos[3 * b];
  const ly = y - refPos[3 * b + 1];
  const lz = z - refPos[3 * b + 2];
  out[o] = pos[3 * b] + turn[t] * lx + turn[t + 1] * ly + turn[t + 2] * lz;
  out[o + 1] = pos[3 * b + 1] + turn[t + 3] * lx + turn[t + 4] * ly + turn[t + 5] * lz;
  out[o + 2] = pos[3 * b + 2] + turn[t + 6] * lx + turn[t + 7] * ly + turn[t + 8] * lz;
}
