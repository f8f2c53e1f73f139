/**
 * Box pairs in closed form: box–sphere, plane–box and box–capsule, with the box's point
 * queries they share: a point against the box (closest or deepest surface point, normal,
 * signed distance and Voronoi region) and the box's signed distance. Box–box is in
 * box-box.ts.
 */

import type { ContactBuffer } from "../contact-buffer";
import { LINE_SIN } from "../convex/features";
import {
  inFrameOf,
  MARGIN,
  PLANE,
  planeVertices,
  pushLocalFromA,
  SEGMENTS,
  ST,
  segmentSegment,
} from "../helpers";
import type { WorldPose } from "../pose";
import {
  type BoxShape,
  type CapsuleShape,
  type PlaneShape,
  readRadius,
  readRadiusLength,
  SIZES,
  type SphereShape,
  worldPlane,
} from "../shapes";

// ---------------------------------------------------------------------------------------
// Point queries on a box |x_i| ≤ h_i (in its frame)
// ---------------------------------------------------------------------------------------

/**
 * pointBoxLocal input: the point q (0..2, box frame); result: closest/deepest surface
 * point k (0..2), normal (3..5), signed distance (6), region code (7).
 */
const PB = new Float64Array(8);
/** pointBoxLocal's q clamped to the box, |k_i| ≤ h_i. */
const CLAMPED = new Float64Array(3);

/**
 * Point q = PB[0..2] (box frame) against the box |x_i| ≤ h_i. Writes into PB:
 *  - k: closest point of the box surface when q is outside; when q is inside, the
 *    point of the face nearest to q (the deepest-penetration projection);
 *  - n: unit outward normal from k towards q (outside) or of that nearest face (inside);
 *  - dist: signed distance |q − k| outside, −(distance to the nearest face) inside;
 *  - code: Voronoi region, Σ_i c_i 3^i with c_i = 0 (q_i < −h_i), 1 (within), 2 (q_i > h_i);
 *    for inside points the nearest face's code (so a face keeps its code across the surface).
 */
function pointBoxLocal(h: readonly number[]): void {
  // q clamped to the box axis by axis into CLAMPED, with c_i; the code Σ c_i 3^i by Horner.
  let code = 0;
  for (let i = 2; i >= 0; i--) {
    const q = PB[i];
    let k = q;
    let c = 1;
    if (q > h[i]) {
      k = h[i];
      c = 2;
    } else if (q < -h[i]) {
      k = -h[i];
      c = 0;
    }
    CLAMPED[i] = k;
    code = 3 * code + c;
  }
  const qx = PB[0];
  const qy = PB[1];
  const qz = PB[2];
  if (code !== 13) {
    // outside (13 = 1 + 3 + 9: every c_i = 1 is the inside)
    const kx = CLAMPED[0];
    const ky = CLAMPED[1];
    const kz = CLAMPED[2];
    const dx = qx - kx;
    const dy = qy - ky;
    const dz = qz - kz;
    const dist = Math.sqrt(dx * dx + dy * dy + dz * dz); // length3, written out
    PB[0] = kx;
    PB[1] = ky;
    PB[2] = kz;
    PB[3] = dx / dist;
    PB[4] = dy / dist;
    PB[5] = dz / dist;
    PB[6] = dist;
    PB[7] = code;
    return;
  }
  // Inside: the face with the least depth h_i − |q_i| (ties: lowest axis, + side).
  const d0 = h[0] - Math.abs(qx);
  const d1 = h[1] - Math.abs(qy);
  const d2 = h[2] - Math.abs(qz);
  let axis = 0;
  let depth = d0;
  if (d1 < depth) {
    axis = 1;
    depth = d1;
  }
  if (d2 < depth) {
    axis = 2;
    depth = d2;
  }
  const q = axis === 0 ? qx : axis === 1 ? qy : qz;
  const s = q >= 0 ? 1 : -1;
  PB[0] = qx;
  PB[1] = qy;
  PB[2] = qz;
  PB[axis] = s * h[axis];
  PB[3] = PB[4] = PB[5] = 0;
  PB[3 + axis] = s;
  PB[6] = -depth;
  PB[7] = 13 + (s > 0 ? 1 : -1) * (axis === 0 ? 1 : axis === 1 ? 3 : 9);
}

/**
 * boxSignedDistance input: the point q (0..2, box frame); its result: the signed distance
 * (3). An array rather than arguments and a return value: V8 boxes the double arguments
 * and the double result of a call it does not inline into new heap numbers, and the
 * golden-section search of box–capsule makes some seventy such calls.
 */
const SD = new Float64Array(4);

/** Signed distance from q = SD[0..2] (box frame) to the box |x_i| ≤ h_i (convex in q), into SD[3]. */
function boxSignedDistance(h: readonly number[]): void {
  const ex = Math.abs(SD[0]) - h[0];
  const ey = Math.abs(SD[1]) - h[1];
  const ez = Math.abs(SD[2]) - h[2];
  const ox = Math.max(ex, 0);
  const oy = Math.max(ey, 0);
  const oz = Math.max(ez, 0);
  const outside = Math.sqrt(ox * ox + oy * oy + oz * oz); // length3, written out
  const m = ex > ey ? Math.max(ex, ez) : Math.max(ey, ez);
  SD[3] = outside + Math.min(m, 0);
}

// ---------------------------------------------------------------------------------------
// Box–sphere and plane–box
// ---------------------------------------------------------------------------------------

/**
 * Box–sphere. The sphere centre q in the box frame is classified against the box
 * (pointBoxLocal): outside, p_a is the closest box point and n = (q − p_a)/|q − p_a|;
 * inside, the nearest face gives n and the depth. gap = signed distance − r.
 * Feature: the Voronoi region code Σ c_i 3^i (face, edge or vertex region, 0..26).
 */
export function boxSphere(
  a: BoxShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  inFrameOf(pa, pb, PB, 0);
  pointBoxLocal(a.halfExtents);
  readRadius(b, 0);
  const gap = PB[6] - SIZES[0];
  if (!(gap < margin)) return;
  PB[6] = gap;
  pushLocalFromA(out, pa, PB, 0);
}

/** planeBox's corners, local (3 each), corner v at (±h_0, ±h_1, ±h_2), bit j of v for +h_j. */
const CORNERS = new Float64Array(24);

/**
 * Plane–box: the box's 8 corners v = c + Σ_j s_j h_j b_j (b_j the box axes) as polytope
 * vertices against the plane (helpers.ts planeVertices: gap n·v − d, the 4 deepest below
 * the margin), so a box resting on a face gives its 4 bottom vertices, on an edge 2, on a
 * vertex 1. Normal n (out of the plane's solid). Feature: the corner index, bit j set when
 * s_j = +1.
 */
export function planeBox(
  a: PlaneShape,
  pa: WorldPose,
  b: BoxShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  const h = b.halfExtents;
  for (let v = 0; v < 8; v++) {
    CORNERS[3 * v] = v & 1 ? h[0] : -h[0];
    CORNERS[3 * v + 1] = v & 2 ? h[1] : -h[1];
    CORNERS[3 * v + 2] = v & 4 ? h[2] : -h[2];
  }
  MARGIN[0] = margin;
  planeVertices(CORNERS, 8, pb, out);
}

// ---------------------------------------------------------------------------------------
// Box–capsule
// ---------------------------------------------------------------------------------------

/**
 * boxCapsule's segment in the box frame: start s_0 (0..2), direction d = s_1 − s_0 (3..5);
 * and the capsule's half-length L (6) and radius r (7), read by deepestParameter and
 * faceLineContact from here rather than as arguments (which V8 would box).
 */
const SEG = new Float64Array(8);
/** deepestParameter's result t (0); closestToFeature's input t (1) and result (2). */
const TPAR = new Float64Array(3);

/**
 * Box–capsule. The deepest point of the capsule's segment is found by minimizing the
 * box's signed distance along the segment, φ(t) = sd(s_0 + t (s_1 − s_0)), t ∈ [0, 1]
 * (deepestParameter). That point is then treated as a sphere of the capsule's radius
 * against the box (features 0..26: the region code, as boxSphere). When it lies in a face
 * region and the axis is within LINE_SIN (≈11.5°) of that face's plane, the capsule is
 * lying on the face: the two-point contact of faceLineContact (features 27 + 2·face + end,
 * face = 2·axis + (0 for +, 1 for −)). A capsule lying exactly along a box edge gets a
 * single contact (at the end of its axis) — the closest set is then a segment.
 */
export function boxCapsule(
  a: BoxShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const R = pa.R;
  const Rb = pb.R;
  const h = a.halfExtents;
  // Capsule centre and axis in the box frame.
  inFrameOf(pa, pb, SD, 0);
  const cx = SD[0];
  const cy = SD[1];
  const cz = SD[2];
  const zx = R[0] * Rb[2] + R[3] * Rb[5] + R[6] * Rb[8];
  const zy = R[1] * Rb[2] + R[4] * Rb[5] + R[7] * Rb[8];
  const zz = R[2] * Rb[2] + R[5] * Rb[5] + R[8] * Rb[8];
  readRadiusLength(b, 0);
  const L = SIZES[1];
  const r = SIZES[0];
  SEG[6] = L;
  SEG[7] = r;
  SEG[0] = cx - L * zx;
  SEG[1] = cy - L * zy;
  SEG[2] = cz - L * zz;
  SEG[3] = 2 * L * zx;
  SEG[4] = 2 * L * zy;
  SEG[5] = 2 * L * zz;

  // Quick reject: the segment's centre (in SD) is farther than L + r + margin from the box.
  boxSignedDistance(h);
  if (SD[3] - L - r >= margin) return;

  let t = 0;
  if (L > 0) {
    deepestParameter(h);
    t = TPAR[0];
  }
  PB[0] = SEG[0] + t * SEG[3];
  PB[1] = SEG[1] + t * SEG[4];
  PB[2] = SEG[2] + t * SEG[5];
  pointBoxLocal(h);
  if (L > 0 && faceLineContact(pa, h, margin, out)) return;
  const gap = PB[6] - r;
  if (!(gap < margin)) return;
  PB[6] = gap;
  pushLocalFromA(out, pa, PB, 0);
}

/**
 * The parameter t ∈ [0, 1] (into TPAR[0]) of the deepest point of SEG (length 2L > 0, L in
 * SEG[6]) in the box: the
 * minimizer of φ(t) = sd(s_0 + t d). sd is convex, so φ is convex and golden-section
 * search converges to a minimizer; the endpoints are checked exactly. Near a smooth
 * minimum (closest to an edge or a vertex) comparisons of φ only fix t to ~√ε: t is then
 * polished in closed form for the feature found (closestToFeature), kept if not worse.
 */
function deepestParameter(h: readonly number[]): void {
  const s0x = SEG[0];
  const s0y = SEG[1];
  const s0z = SEG[2];
  const ddx = SEG[3];
  const ddy = SEG[4];
  const ddz = SEG[5];
  const L = SEG[6];
  SD[0] = s0x;
  SD[1] = s0y;
  SD[2] = s0z;
  boxSignedDistance(h);
  const f0 = SD[3];
  SD[0] = s0x + ddx;
  SD[1] = s0y + ddy;
  SD[2] = s0z + ddz;
  boxSignedDistance(h);
  const f1 = SD[3];
  // Golden-section search on the convex φ over [0, 1].
  const PHI = 0.6180339887498949;
  let lo = 0;
  let hi = 1;
  let x1 = hi - PHI * (hi - lo);
  let x2 = lo + PHI * (hi - lo);
  SD[0] = s0x + x1 * ddx;
  SD[1] = s0y + x1 * ddy;
  SD[2] = s0z + x1 * ddz;
  boxSignedDistance(h);
  let g1 = SD[3];
  SD[0] = s0x + x2 * ddx;
  SD[1] = s0y + x2 * ddy;
  SD[2] = s0z + x2 * ddz;
  boxSignedDistance(h);
  let g2 = SD[3];
  for (let it = 0; it < 80 && hi - lo > 1e-13; it++) {
    if (g1 <= g2) {
      hi = x2;
      x2 = x1;
      g2 = g1;
      x1 = hi - PHI * (hi - lo);
      SD[0] = s0x + x1 * ddx;
      SD[1] = s0y + x1 * ddy;
      SD[2] = s0z + x1 * ddz;
      boxSignedDistance(h);
      g1 = SD[3];
    } else {
      lo = x1;
      x1 = x2;
      g1 = g2;
      x2 = lo + PHI * (hi - lo);
      SD[0] = s0x + x2 * ddx;
      SD[1] = s0y + x2 * ddy;
      SD[2] = s0z + x2 * ddz;
      boxSignedDistance(h);
      g2 = SD[3];
    }
  }
  let tBest = 0.5 * (lo + hi);
  SD[0] = s0x + tBest * ddx;
  SD[1] = s0y + tBest * ddy;
  SD[2] = s0z + tBest * ddz;
  boxSignedDistance(h);
  let fBest = SD[3];
  if (f0 <= fBest) {
    tBest = 0;
    fBest = f0;
  }
  if (f1 < fBest) {
    tBest = 1;
    fBest = f1;
  }
  TPAR[1] = tBest;
  closestToFeature(h);
  const tRef = TPAR[2];
  if (tRef >= 0) {
    SD[0] = s0x + tRef * ddx;
    SD[1] = s0y + tRef * ddy;
    SD[2] = s0z + tRef * ddz;
    boxSignedDistance(h);
    if (SD[3] <= fBest + 1e-12 * (L + h[0] + h[1] + h[2])) tBest = tRef;
  }
  TPAR[0] = tBest;
}

/**
 * The parameter (into TPAR[2]) of the point of SEG closest to the box feature nearest to
 * SEG(t), t = TPAR[1]: a
 * vertex (projection on the segment) or an edge (segment–segment closest points); −1 when
 * that feature is a face (φ is then linear there and t needs no polish).
 */
function closestToFeature(h: readonly number[]): void {
  const t = TPAR[1];
  const s0x = SEG[0];
  const s0y = SEG[1];
  const s0z = SEG[2];
  const ddx = SEG[3];
  const ddy = SEG[4];
  const ddz = SEG[5];
  PB[0] = s0x + t * ddx;
  PB[1] = s0y + t * ddy;
  PB[2] = s0z + t * ddz;
  pointBoxLocal(h);
  const code = PB[7];
  const e0 = code % 3;
  const e1 = Math.floor(code / 3) % 3;
  const e2 = Math.floor(code / 9);
  const clamped = (e0 !== 1 ? 1 : 0) + (e1 !== 1 ? 1 : 0) + (e2 !== 1 ? 1 : 0);
  if (clamped === 3) {
    const vx = (e0 - 1) * h[0] - s0x;
    const vy = (e1 - 1) * h[1] - s0y;
    const vz = (e2 - 1) * h[2] - s0z;
    const u = (vx * ddx + vy * ddy + vz * ddz) / (ddx * ddx + ddy * ddy + ddz * ddz);
    TPAR[2] = u < 0 ? 0 : Math.min(u, 1); // clamp01, written out
    return;
  }
  if (clamped !== 2) {
    TPAR[2] = -1;
    return;
  }
  // Edge along the free axis m, at the clamped coordinates of the other two.
  const m = e0 === 1 ? 0 : e1 === 1 ? 1 : 2;
  const ex = m === 0 ? -h[0] : (e0 - 1) * h[0];
  const ey = m === 1 ? -h[1] : (e1 - 1) * h[1];
  const ez = m === 2 ? -h[2] : (e2 - 1) * h[2];
  SEGMENTS[0] = s0x;
  SEGMENTS[1] = s0y;
  SEGMENTS[2] = s0z;
  SEGMENTS[3] = ddx;
  SEGMENTS[4] = ddy;
  SEGMENTS[5] = ddz;
  SEGMENTS[6] = ex;
  SEGMENTS[7] = ey;
  SEGMENTS[8] = ez;
  SEGMENTS[9] = m === 0 ? 2 * h[0] : 0;
  SEGMENTS[10] = m === 1 ? 2 * h[1] : 0;
  SEGMENTS[11] = m === 2 ? 2 * h[2] : 0;
  segmentSegment();
  TPAR[2] = ST[0];
}

/**
 * Parameter interval [T01[0], T01[1]] of a segment, clipped by clipT; clipT's constraint
 * g0 (2), g1 (3), written by its caller (double arguments would be boxed).
 */
const T01 = new Float64Array(4);

/** Clips the interval T01 by the linear constraint g0 + g1 t ≤ 0 (g0, g1 in T01[2..3]). */
function clipT(): void {
  const g0 = T01[2];
  const g1 = T01[3];
  if (g1 > 0) {
    const t = -g0 / g1;
    if (t < T01[1]) T01[1] = t;
  } else if (g1 < 0) {
    const t = -g0 / g1;
    if (t > T01[0]) T01[0] = t;
  } else if (g0 > 0) {
    T01[1] = -1; // infeasible everywhere
  }
}

/** A face contact of faceLineContact in the box frame, as pushLocalFromA reads it. */
const FACE_CONTACT = new Float64Array(8);

/**
 * The capsule lying on a box face (boxCapsule; L and r in SEG[6..7]): when the deepest
 * point's region `code` (PB[7], from pointBoxLocal) is a face region and SEG is within LINE_SIN of the face's
 * plane, keeps the part of the segment where this face is the box's nearest feature:
 * within the face's slab (|x_m| ≤ h_m, m ≠ axis), on this face's side (s x_a ≥ 0) and, for
 * points inside the box, no deeper below this face than below another
 * (|x_m| − h_m ≤ s x_a − h_a). There φ(t) = s x_a − h_a is linear in t, so the ends of
 * that interval carry the minimum and their gaps are exact: both are pushed against the
 * face plane (features 27 + 2·face + end). Returns false (nothing pushed) otherwise.
 */
function faceLineContact(
  pa: WorldPose,
  h: readonly number[],
  margin: number,
  out: ContactBuffer,
): boolean {
  const L = SEG[6];
  const r = SEG[7];
  const code = PB[7];
  const s0x = SEG[0];
  const s0y = SEG[1];
  const s0z = SEG[2];
  const ddx = SEG[3];
  const ddy = SEG[4];
  const ddz = SEG[5];
  // Face region: exactly one coordinate code differs from 1.
  const c0 = code % 3;
  const c1 = Math.floor(code / 3) % 3;
  const c2 = Math.floor(code / 9);
  const off = (c0 !== 1 ? 1 : 0) + (c1 !== 1 ? 1 : 0) + (c2 !== 1 ? 1 : 0);
  if (off !== 1) return false;
  const axis = c0 !== 1 ? 0 : c1 !== 1 ? 1 : 2;
  const sgn = (axis === 0 ? c0 : axis === 1 ? c1 : c2) === 2 ? 1 : -1;
  const dAxis = axis === 0 ? ddx : axis === 1 ? ddy : ddz;
  if (!(Math.abs(dAxis) <= LINE_SIN * 2 * L)) return false;
  const sa = axis === 0 ? s0x : axis === 1 ? s0y : s0z;
  const da = axis === 0 ? ddx : axis === 1 ? ddy : ddz;
  T01[0] = 0;
  T01[1] = 1;
  T01[2] = -sgn * sa;
  T01[3] = -sgn * da;
  clipT();
  for (let m = 0; m < 3; m++) {
    if (m === axis) continue;
    const sm = m === 0 ? s0x : m === 1 ? s0y : s0z;
    const dm = m === 0 ? ddx : m === 1 ? ddy : ddz;
    T01[2] = sm - h[m];
    T01[3] = dm;
    clipT();
    T01[2] = -sm - h[m];
    T01[3] = -dm;
    clipT();
    T01[2] = sm - h[m] - sgn * sa + h[axis];
    T01[3] = dm - sgn * da;
    clipT();
    T01[2] = -sm - h[m] - sgn * sa + h[axis];
    T01[3] = -dm - sgn * da;
    clipT();
  }
  const t0 = T01[0];
  const t1 = T01[1];
  if (!(t1 - t0 > 1e-9)) return false;
  const face = 2 * axis + (sgn > 0 ? 0 : 1);
  for (let end = 0; end < 2; end++) {
    const t = end === 0 ? t0 : t1;
    const x = s0x + t * ddx;
    const y = s0y + t * ddy;
    const z = s0z + t * ddz;
    const coord = axis === 0 ? x : axis === 1 ? y : z;
    const gap = sgn * coord - h[axis] - r;
    if (!(gap < margin)) continue;
    FACE_CONTACT[0] = axis === 0 ? sgn * h[0] : x;
    FACE_CONTACT[1] = axis === 1 ? sgn * h[1] : y;
    FACE_CONTACT[2] = axis === 2 ? sgn * h[2] : z;
    FACE_CONTACT[3] = axis === 0 ? sgn : 0;
    FACE_CONTACT[4] = axis === 1 ? sgn : 0;
    FACE_CONTACT[5] = axis === 2 ? sgn : 0;
    FACE_CONTACT[6] = gap;
    FACE_CONTACT[7] = 27 + 2 * face + end;
    pushLocalFromA(out, pa, FACE_CONTACT, 0);
  }
  return true;
}
