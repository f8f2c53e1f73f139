/**
 * Narrow phase: contact points between two placed shapes.
 *
 * Every pair function appends to a ContactBuffer (for the pair set by out.setPair) the
 * contacts whose signed gap is below `margin`, each with
 *  - normal n: unit, world, pointing FROM the first shape (a) TO the second (b);
 *  - gap = (p_b − p_a)·n where p_a, p_b are the closest (or, when penetrating, the
 *    deepest) surface points of a and b; negative when penetrating;
 *  - point = (p_a + p_b)/2, the midpoint between the two surfaces;
 *  - feature: an integer naming the features in contact (documented per function), so
 *    the same contact is recognized from step to step.
 * Reporting slightly separated contacts (0 ≤ gap < margin) lets the time stepping build
 * its active set from a predicted gap (Moreau–Jean: g + h·v_n ≤ 0).
 *
 * The pair functions are written for the canonical order plane < box < capsule < cylinder <
 * sphere (`planeBox(plane, box)`, never `boxPlane`; the cylinder's pairs are in
 * cylinder.ts); collideShapes() dispatches any order and
 * negates the normals when it had to swap. Nothing here allocates: scratch storage is
 * module-level (single-threaded; each worker thread has its own module instance).
 */

import { copy3, length3 } from "../math/vec3";
import type { ContactBuffer } from "./contact-buffer";
import {
  boxCylinder,
  capsuleCylinder,
  cylinderCylinder,
  cylinderSphere,
  planeCylinder,
} from "./cylinder";
import type { WorldPose } from "./pose";
import {
  type BoxShape,
  type CapsuleShape,
  type PlaneShape,
  type Shape,
  type SphereShape,
  shapeRank,
  worldPlane,
} from "./shapes";

// ---------------------------------------------------------------------------------------
// Scratch storage and small helpers
// ---------------------------------------------------------------------------------------

const PLANE = new Float64Array(4);
/** pointBoxLocal result: closest/deepest surface point k (0..2), normal (3..5), signed distance (6), region code (7). */
const PB = new Float64Array(8);
/** segmentSegment result: parameters s, t in [0, 1]. */
const ST = new Float64Array(2);
/** Fallback normal. */
const NF = new Float64Array(3);
const GAPS = new Float64Array(8);
const IDX = new Int32Array(8);

/** Box–box face clipping polygons: (x, y, z) in the reference face frame, vertex and edge labels. */
const POLY_MAX = 16;
const polyA = new Float64Array(3 * POLY_MAX);
const polyB = new Float64Array(3 * POLY_MAX);
const vlabA = new Int32Array(POLY_MAX);
const vlabB = new Int32Array(POLY_MAX);
const elabA = new Int32Array(POLY_MAX);
const elabB = new Int32Array(POLY_MAX);
const keepIdx = new Int32Array(POLY_MAX);
const C = new Float64Array(9);
const AC = new Float64Array(9);

/**
 * A contact by its surface point on a: p_a (0..2), normal n (3..5), gap (6), written by
 * the caller; pushContactFromA records it. (An array rather than arguments, as CORES.)
 */
const CONTACT = new Float64Array(7);

/** Pushes the contact in CONTACT: point = p_a + (gap/2) n. */
function pushContactFromA(out: ContactBuffer, feature: number): void {
  const h = 0.5 * CONTACT[6];
  for (let k = 0; k < 3; k++) CONTACT[k] += h * CONTACT[3 + k];
  out.pushFrom(CONTACT, feature);
}

/** Pushes a contact from the surface point on a (ax, ay, az): point = p_a + (gap/2) n. */
function pushFromA(
  out: ContactBuffer,
  ax: number,
  ay: number,
  az: number,
  nx: number,
  ny: number,
  nz: number,
  gap: number,
  feature: number,
): void {
  CONTACT[0] = ax;
  CONTACT[1] = ay;
  CONTACT[2] = az;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  pushContactFromA(out, feature);
}

/**
 * A unit vector perpendicular to (x, y, z) (assumed unit), oriented so that its dot
 * product with (gx, gy, gz) is non-negative; written to NF. Used as the normal when two
 * core points coincide (concentric spheres, crossing capsule axes).
 */
function perpendicular(x: number, y: number, z: number, gx: number, gy: number, gz: number): void {
  // Cross with the world axis least aligned with the vector.
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const az = Math.abs(z);
  let px: number;
  let py: number;
  let pz: number;
  if (ax <= ay && ax <= az) {
    px = 0;
    py = z;
    pz = -y; // v × e_x
  } else if (ay <= az) {
    px = -z;
    py = 0;
    pz = x; // v × e_y
  } else {
    px = y;
    py = -x;
    pz = 0; // v × e_z
  }
  const l = length3(px, py, pz);
  let s = l > 0 ? 1 / l : 0;
  if (px * gx + py * gy + pz * gz < 0) s = -s;
  NF[0] = px * s;
  NF[1] = py * s;
  NF[2] = pz * s;
  if (l === 0) NF[2] = 1;
}

/**
 * Closest points of the segments P1 + s(Q1 − P1) and P2 + t(Q2 − P2), s, t ∈ [0, 1]
 * (Ericson, Real-Time Collision Detection, §5.1.9, ClosestPtSegmentSegment); writes s, t to ST.
 * For parallel segments the parameter of the first segment is 0 (any closest pair).
 */
function segmentSegment(
  p1x: number,
  p1y: number,
  p1z: number,
  d1x: number,
  d1y: number,
  d1z: number,
  p2x: number,
  p2y: number,
  p2z: number,
  d2x: number,
  d2y: number,
  d2z: number,
): void {
  const rx = p1x - p2x;
  const ry = p1y - p2y;
  const rz = p1z - p2z;
  const a = d1x * d1x + d1y * d1y + d1z * d1z;
  const e = d2x * d2x + d2y * d2y + d2z * d2z;
  const f = d2x * rx + d2y * ry + d2z * rz;
  const EPS = 1e-30;
  let s = 0;
  let t = 0;
  if (a <= EPS && e <= EPS) {
    s = 0;
    t = 0;
  } else if (a <= EPS) {
    s = 0;
    t = clamp01(f / e);
  } else {
    const c = d1x * rx + d1y * ry + d1z * rz;
    if (e <= EPS) {
      t = 0;
      s = clamp01(-c / a);
    } else {
      const b = d1x * d2x + d1y * d2y + d1z * d2z;
      const denom = a * e - b * b;
      s = denom > 1e-14 * a * e ? clamp01((b * f - c * e) / denom) : 0;
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        s = clamp01(-c / a);
      } else if (t > 1) {
        t = 1;
        s = clamp01((b - c) / a);
      }
    }
  }
  ST[0] = s;
  ST[1] = t;
}

/** Parameter interval [T01[0], T01[1]] of a segment, clipped by clipT. */
const T01 = new Float64Array(2);

/** Clips the interval T01 by the linear constraint g0 + g1 t ≤ 0. */
function clipT(g0: number, g1: number): void {
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

function clamp01(x: number): number {
  return x < 0 ? 0 : Math.min(x, 1);
}

/**
 * Point q (box frame) against the box |x_i| ≤ h_i. Writes into PB:
 *  - k: closest point of the box surface when q is outside; when q is inside, the
 *    point of the face nearest to q (the deepest-penetration projection);
 *  - n: unit outward normal from k towards q (outside) or of that nearest face (inside);
 *  - dist: signed distance |q − k| outside, −(distance to the nearest face) inside;
 *  - code: Voronoi region, Σ_i c_i 3^i with c_i = 0 (q_i < −h_i), 1 (within), 2 (q_i > h_i);
 *    for inside points the nearest face's code (so a face keeps its code across the surface).
 */
function pointBoxLocal(qx: number, qy: number, qz: number, h: readonly number[]): void {
  let kx = qx;
  let ky = qy;
  let kz = qz;
  let c0 = 1;
  let c1 = 1;
  let c2 = 1;
  if (qx > h[0]) {
    kx = h[0];
    c0 = 2;
  } else if (qx < -h[0]) {
    kx = -h[0];
    c0 = 0;
  }
  if (qy > h[1]) {
    ky = h[1];
    c1 = 2;
  } else if (qy < -h[1]) {
    ky = -h[1];
    c1 = 0;
  }
  if (qz > h[2]) {
    kz = h[2];
    c2 = 2;
  } else if (qz < -h[2]) {
    kz = -h[2];
    c2 = 0;
  }
  if (c0 !== 1 || c1 !== 1 || c2 !== 1) {
    const dx = qx - kx;
    const dy = qy - ky;
    const dz = qz - kz;
    const dist = length3(dx, dy, dz);
    PB[0] = kx;
    PB[1] = ky;
    PB[2] = kz;
    PB[3] = dx / dist;
    PB[4] = dy / dist;
    PB[5] = dz / dist;
    PB[6] = dist;
    PB[7] = c0 + 3 * c1 + 9 * c2;
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

/** Signed distance from q (box frame) to the box |x_i| ≤ h_i (convex in q). */
function boxSignedDistance(qx: number, qy: number, qz: number, h: readonly number[]): number {
  const ex = Math.abs(qx) - h[0];
  const ey = Math.abs(qy) - h[1];
  const ez = Math.abs(qz) - h[2];
  const outside = length3(Math.max(ex, 0), Math.max(ey, 0), Math.max(ez, 0));
  const m = ex > ey ? Math.max(ex, ez) : Math.max(ey, ez);
  return outside + Math.min(m, 0);
}

// ---------------------------------------------------------------------------------------
// Sphere, plane, capsule pairs
// ---------------------------------------------------------------------------------------

/**
 * Sphere–sphere. n = (c_b − c_a)/|c_b − c_a|, gap = |c_b − c_a| − r_a − r_b,
 * p_a = c_a + r_a n. Concentric spheres get n = +z. Feature 0.
 */
export function sphereSphere(
  a: SphereShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  copy3(CORES, 0, pa.p, 0);
  CORES[3] = a.radius;
  copy3(CORES, 4, pb.p, 0);
  CORES[7] = b.radius;
  CORES[8] = 0;
  CORES[9] = 0;
  CORES[10] = 1;
  roundCores(margin, out, 0);
}

/**
 * Input of roundCores, written by its callers: core point A (0..2), radius r_a (3), core
 * point B (4..6), radius r_b (7), unit fallback normal (8..10). Passed through this array
 * rather than as arguments (or a setter's): V8 does not inline every such call, and boxes
 * each double argument of a call it does not inline (an allocation per contact).
 */
const CORES = new Float64Array(11);

/**
 * Contact between two balls of radii ra, rb around core points A and B (spheres, or
 * the closest points of capsule segments), read from CORES. The fallback normal is used
 * when the core points coincide.
 */
function roundCores(margin: number, out: ContactBuffer, feature: number): void {
  const ax = CORES[0];
  const ay = CORES[1];
  const az = CORES[2];
  const ra = CORES[3];
  const rb = CORES[7];
  const dx = CORES[4] - ax;
  const dy = CORES[5] - ay;
  const dz = CORES[6] - az;
  const dist = length3(dx, dy, dz);
  const gap = dist - ra - rb;
  if (!(gap < margin)) return;
  let nx = CORES[8];
  let ny = CORES[9];
  let nz = CORES[10];
  if (dist > 1e-12 * (ra + rb) && dist > 0) {
    nx = dx / dist;
    ny = dy / dist;
    nz = dz / dist;
  }
  CONTACT[0] = ax + ra * nx;
  CONTACT[1] = ay + ra * ny;
  CONTACT[2] = az + ra * nz;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  pushContactFromA(out, feature);
}

/**
 * Plane–sphere. With the world plane n·x = d (solid below): gap = n·c − d − r,
 * p_b = c − r n, normal n (out of the plane's solid, towards the sphere). Feature 0.
 */
export function planeSphere(
  a: PlaneShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const c = pb.p;
  const r = b.radius;
  const gap = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3] - r;
  if (!(gap < margin)) return;
  // p_a = c − (gap + r) n on the plane.
  const s = gap + r;
  CONTACT[0] = c[0] - s * nx;
  CONTACT[1] = c[1] - s * ny;
  CONTACT[2] = c[2] - s * nz;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  pushContactFromA(out, 0);
}

/**
 * Plane–capsule: the two end spheres (centres c ∓ L z, z the capsule's world axis)
 * against the plane, gap = n·x − d − r each. Feature 0 for the −z end, 1 for the +z end,
 * so a lying capsule gets two contacts and a standing one gets its lower end.
 */
export function planeCapsule(
  a: PlaneShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pb.R;
  const L = b.halfLength;
  const r = b.radius;
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  for (let end = 0; end < 2; end++) {
    const sgn = end === 0 ? -L : L;
    const x = pb.p[0] + sgn * zx;
    const y = pb.p[1] + sgn * zy;
    const z = pb.p[2] + sgn * zz;
    const dist = nx * x + ny * y + nz * z - PLANE[3];
    const gap = dist - r;
    if (gap < margin)
      pushFromA(out, x - dist * nx, y - dist * ny, z - dist * nz, nx, ny, nz, gap, end);
    if (L === 0) break;
  }
}

/**
 * Capsule–sphere: the sphere centre against the closest point of the capsule's segment,
 * x = c_a + clamp((c_b − c_a)·z, −L, L) z, then as two spheres. Feature 0.
 */
export function capsuleSphere(
  a: CapsuleShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const R = pa.R;
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  const L = a.halfLength;
  let t = (pb.p[0] - pa.p[0]) * zx + (pb.p[1] - pa.p[1]) * zy + (pb.p[2] - pa.p[2]) * zz;
  t = t < -L ? -L : Math.min(t, L);
  const ax = pa.p[0] + t * zx;
  const ay = pa.p[1] + t * zy;
  const az = pa.p[2] + t * zz;
  perpendicular(zx, zy, zz, pb.p[0] - pa.p[0], pb.p[1] - pa.p[1], pb.p[2] - pa.p[2]);
  CORES[0] = ax;
  CORES[1] = ay;
  CORES[2] = az;
  CORES[3] = a.radius;
  copy3(CORES, 4, pb.p, 0);
  CORES[7] = b.radius;
  copy3(CORES, 8, NF, 0);
  roundCores(margin, out, 0);
}

/** sin of the angle below which two capsules are treated as parallel (two-point contact). */
const CAPSULE_PARALLEL_SIN = 0.02;

/**
 * Capsule–capsule. In general one contact from the closest points of the two segments
 * (Ericson §5.1.9), feature 0. When the axes are parallel within CAPSULE_PARALLEL_SIN
 * and their projections overlap, the closest set is a segment: two contacts at the ends
 * of the overlap (each end point of a's segment against its closest point on b's),
 * features 1 and 2, so that one capsule lying along another is supported.
 */
export function capsuleCapsule(
  a: CapsuleShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const RA = pa.R;
  const RB = pb.R;
  const ax = RA[2];
  const ay = RA[5];
  const az = RA[8];
  const bx = RB[2];
  const by = RB[5];
  const bz = RB[8];
  const LA = a.halfLength;
  const LB = b.halfLength;
  const cax = pa.p[0];
  const cay = pa.p[1];
  const caz = pa.p[2];
  const cbx = pb.p[0];
  const cby = pb.p[1];
  const cbz = pb.p[2];
  const dcx = cbx - cax;
  const dcy = cby - cay;
  const dcz = cbz - caz;
  // Fallback normal: perpendicular to both axes (or to a's axis), towards b.
  const xx = ay * bz - az * by;
  const xy = az * bx - ax * bz;
  const xz = ax * by - ay * bx;
  const sinAngle = length3(xx, xy, xz);
  let fx: number;
  let fy: number;
  let fz: number;
  if (sinAngle > 1e-9) {
    const s = (xx * dcx + xy * dcy + xz * dcz >= 0 ? 1 : -1) / sinAngle;
    fx = xx * s;
    fy = xy * s;
    fz = xz * s;
  } else {
    perpendicular(ax, ay, az, dcx, dcy, dcz);
    fx = NF[0];
    fy = NF[1];
    fz = NF[2];
  }
  if (sinAngle < CAPSULE_PARALLEL_SIN && LA > 0 && LB > 0) {
    const tm = dcx * ax + dcy * ay + dcz * az;
    const tb = LB * (bx * ax + by * ay + bz * az);
    const t0 = Math.max(-LA, Math.min(tm - tb, tm + tb));
    const t1 = Math.min(LA, Math.max(tm - tb, tm + tb));
    if (t1 - t0 > 1e-9 * (LA + LB)) {
      for (let end = 0; end < 2; end++) {
        const t = end === 0 ? t0 : t1;
        const qax = cax + t * ax;
        const qay = cay + t * ay;
        const qaz = caz + t * az;
        let u = (qax - cbx) * bx + (qay - cby) * by + (qaz - cbz) * bz;
        u = u < -LB ? -LB : Math.min(u, LB);
        CORES[0] = qax;
        CORES[1] = qay;
        CORES[2] = qaz;
        CORES[3] = a.radius;
        CORES[4] = cbx + u * bx;
        CORES[5] = cby + u * by;
        CORES[6] = cbz + u * bz;
        CORES[7] = b.radius;
        CORES[8] = fx;
        CORES[9] = fy;
        CORES[10] = fz;
        roundCores(margin, out, 1 + end);
      }
      return;
    }
  }
  const p1x = cax - LA * ax;
  const p1y = cay - LA * ay;
  const p1z = caz - LA * az;
  const p2x = cbx - LB * bx;
  const p2y = cby - LB * by;
  const p2z = cbz - LB * bz;
  segmentSegment(
    p1x,
    p1y,
    p1z,
    2 * LA * ax,
    2 * LA * ay,
    2 * LA * az,
    p2x,
    p2y,
    p2z,
    2 * LB * bx,
    2 * LB * by,
    2 * LB * bz,
  );
  const s = 2 * LA * ST[0];
  const t = 2 * LB * ST[1];
  CORES[0] = p1x + s * ax;
  CORES[1] = p1y + s * ay;
  CORES[2] = p1z + s * az;
  CORES[3] = a.radius;
  CORES[4] = p2x + t * bx;
  CORES[5] = p2y + t * by;
  CORES[6] = p2z + t * bz;
  CORES[7] = b.radius;
  CORES[8] = fx;
  CORES[9] = fy;
  CORES[10] = fz;
  roundCores(margin, out, 0);
}

// ---------------------------------------------------------------------------------------
// Box pairs
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
  const R = pa.R;
  const dx = pb.p[0] - pa.p[0];
  const dy = pb.p[1] - pa.p[1];
  const dz = pb.p[2] - pa.p[2];
  // q = Rᵀ (c − p)
  const qx = R[0] * dx + R[3] * dy + R[6] * dz;
  const qy = R[1] * dx + R[4] * dy + R[7] * dz;
  const qz = R[2] * dx + R[5] * dy + R[8] * dz;
  pointBoxLocal(qx, qy, qz, a.halfExtents);
  const gap = PB[6] - b.radius;
  if (!(gap < margin)) return;
  pushBoxLocal(out, pa, PB[0], PB[1], PB[2], PB[3], PB[4], PB[5], gap, PB[7]);
}

/** Pushes a contact given the box-side surface point k and normal n in the box frame. */
function pushBoxLocal(
  out: ContactBuffer,
  pa: WorldPose,
  kx: number,
  ky: number,
  kz: number,
  nlx: number,
  nly: number,
  nlz: number,
  gap: number,
  feature: number,
): void {
  const R = pa.R;
  const px = pa.p[0] + R[0] * kx + R[1] * ky + R[2] * kz;
  const py = pa.p[1] + R[3] * kx + R[4] * ky + R[5] * kz;
  const pz = pa.p[2] + R[6] * kx + R[7] * ky + R[8] * kz;
  const nx = R[0] * nlx + R[1] * nly + R[2] * nlz;
  const ny = R[3] * nlx + R[4] * nly + R[5] * nlz;
  const nz = R[6] * nlx + R[7] * nly + R[8] * nlz;
  pushFromA(out, px, py, pz, nx, ny, nz, gap, feature);
}

/**
 * Plane–box: the signed distance n·v − d of each of the 8 vertices
 * v = c + Σ_j s_j h_j b_j (b_j the box axes), reporting up to 4 vertices with the
 * smallest gaps below the margin (a box resting on a face gives its 4 bottom vertices,
 * on an edge 2, on a vertex 1). Normal n (out of the plane's solid). Feature: vertex
 * index, bit j set when s_j = +1.
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
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pb.R;
  const h = b.halfExtents;
  const c = pb.p;
  const dc = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3];
  // n·(h_j b_j)
  const e0 = h[0] * (nx * R[0] + ny * R[3] + nz * R[6]);
  const e1 = h[1] * (nx * R[1] + ny * R[4] + nz * R[7]);
  const e2 = h[2] * (nx * R[2] + ny * R[5] + nz * R[8]);
  let m = 0;
  for (let v = 0; v < 8; v++) {
    const g = dc + (v & 1 ? e0 : -e0) + (v & 2 ? e1 : -e1) + (v & 4 ? e2 : -e2);
    if (g < margin) {
      GAPS[m] = g;
      IDX[m] = v;
      m++;
    }
  }
  // Keep the 4 deepest (selection; ties keep the lower vertex index first).
  const k = Math.min(m, 4);
  for (let i = 0; i < k; i++) {
    let best = i;
    for (let j = i + 1; j < m; j++) if (GAPS[j] < GAPS[best]) best = j;
    const g = GAPS[best];
    const v = IDX[best];
    GAPS[best] = GAPS[i];
    IDX[best] = IDX[i];
    GAPS[i] = g;
    IDX[i] = v;
    const s0 = v & 1 ? h[0] : -h[0];
    const s1 = v & 2 ? h[1] : -h[1];
    const s2 = v & 4 ? h[2] : -h[2];
    const vx = c[0] + R[0] * s0 + R[1] * s1 + R[2] * s2;
    const vy = c[1] + R[3] * s0 + R[4] * s1 + R[5] * s2;
    const vz = c[2] + R[6] * s0 + R[7] * s1 + R[8] * s2;
    // The vertex is p_b; p_a = v − g n.
    pushFromA(out, vx - g * nx, vy - g * ny, vz - g * nz, nx, ny, nz, g, v);
  }
}

/** |d̂·n| below which a capsule lying on a box face gets the two-point face contact (≈ 11.5°). */
const CAPSULE_FACE_SIN = 0.2;

/**
 * Box–capsule. The deepest point of the capsule's segment is found by minimizing the
 * box's signed distance along the segment, φ(t) = sd(s_0 + t (s_1 − s_0)), t ∈ [0, 1]
 * (sd is convex, so φ is convex and golden-section search converges to a minimizer;
 * endpoints are checked exactly, and an edge or vertex minimum is polished in closed
 * form). That point is then treated as a sphere of the capsule's radius against the box
 * (features 0..26: the region code, as boxSphere). When it lies in a face region and the
 * axis is within ≈11.5° of that face's plane, the capsule is lying on the face: the
 * segment is clipped to the part where that face is the nearest box feature, and both
 * ends of that part are reported against the face plane (φ is linear there, so the
 * deepest point is one of them and both gaps are exact), features 27 + 2·face + end,
 * face = 2·axis + (0 for +, 1 for −). A capsule lying exactly along a box edge gets a
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
  const L = b.halfLength;
  const r = b.radius;
  const dx = pb.p[0] - pa.p[0];
  const dy = pb.p[1] - pa.p[1];
  const dz = pb.p[2] - pa.p[2];
  // Capsule centre and axis in the box frame.
  const cx = R[0] * dx + R[3] * dy + R[6] * dz;
  const cy = R[1] * dx + R[4] * dy + R[7] * dz;
  const cz = R[2] * dx + R[5] * dy + R[8] * dz;
  const zx = R[0] * Rb[2] + R[3] * Rb[5] + R[6] * Rb[8];
  const zy = R[1] * Rb[2] + R[4] * Rb[5] + R[7] * Rb[8];
  const zz = R[2] * Rb[2] + R[5] * Rb[5] + R[8] * Rb[8];
  const s0x = cx - L * zx;
  const s0y = cy - L * zy;
  const s0z = cz - L * zz;
  const ddx = 2 * L * zx;
  const ddy = 2 * L * zy;
  const ddz = 2 * L * zz;

  // Quick reject: the segment's centre is farther than L + r + margin from the box.
  if (boxSignedDistance(cx, cy, cz, h) - L - r >= margin) return;

  let tBest = 0;
  if (L > 0) {
    const f0 = boxSignedDistance(s0x, s0y, s0z, h);
    const f1 = boxSignedDistance(s0x + ddx, s0y + ddy, s0z + ddz, h);
    // Golden-section search on the convex φ over [0, 1].
    const PHI = 0.6180339887498949;
    let lo = 0;
    let hi = 1;
    let x1 = hi - PHI * (hi - lo);
    let x2 = lo + PHI * (hi - lo);
    let g1 = boxSignedDistance(s0x + x1 * ddx, s0y + x1 * ddy, s0z + x1 * ddz, h);
    let g2 = boxSignedDistance(s0x + x2 * ddx, s0y + x2 * ddy, s0z + x2 * ddz, h);
    for (let it = 0; it < 80 && hi - lo > 1e-13; it++) {
      if (g1 <= g2) {
        hi = x2;
        x2 = x1;
        g2 = g1;
        x1 = hi - PHI * (hi - lo);
        g1 = boxSignedDistance(s0x + x1 * ddx, s0y + x1 * ddy, s0z + x1 * ddz, h);
      } else {
        lo = x1;
        x1 = x2;
        g1 = g2;
        x2 = lo + PHI * (hi - lo);
        g2 = boxSignedDistance(s0x + x2 * ddx, s0y + x2 * ddy, s0z + x2 * ddz, h);
      }
    }
    tBest = 0.5 * (lo + hi);
    let fBest = boxSignedDistance(s0x + tBest * ddx, s0y + tBest * ddy, s0z + tBest * ddz, h);
    if (f0 <= fBest) {
      tBest = 0;
      fBest = f0;
    }
    if (f1 < fBest) {
      tBest = 1;
      fBest = f1;
    }
    // Near a smooth minimum (closest to an edge or a vertex) comparisons of φ only fix t
    // to ~√ε; polish t in closed form for the feature found: the closest point of the
    // segment to that edge (segment–segment) or vertex (projection), kept if not worse.
    pointBoxLocal(s0x + tBest * ddx, s0y + tBest * ddy, s0z + tBest * ddz, h);
    const code0 = PB[7];
    const e0 = code0 % 3;
    const e1 = Math.floor(code0 / 3) % 3;
    const e2 = Math.floor(code0 / 9);
    const clamped = (e0 !== 1 ? 1 : 0) + (e1 !== 1 ? 1 : 0) + (e2 !== 1 ? 1 : 0);
    let tRef = -1;
    if (clamped === 3) {
      const vx = (e0 - 1) * h[0] - s0x;
      const vy = (e1 - 1) * h[1] - s0y;
      const vz = (e2 - 1) * h[2] - s0z;
      tRef = clamp01((vx * ddx + vy * ddy + vz * ddz) / (ddx * ddx + ddy * ddy + ddz * ddz));
    } else if (clamped === 2) {
      // Edge along the free axis m, at the clamped coordinates of the other two.
      const m = e0 === 1 ? 0 : e1 === 1 ? 1 : 2;
      const ex = m === 0 ? -h[0] : (e0 - 1) * h[0];
      const ey = m === 1 ? -h[1] : (e1 - 1) * h[1];
      const ez = m === 2 ? -h[2] : (e2 - 1) * h[2];
      segmentSegment(
        s0x,
        s0y,
        s0z,
        ddx,
        ddy,
        ddz,
        ex,
        ey,
        ez,
        m === 0 ? 2 * h[0] : 0,
        m === 1 ? 2 * h[1] : 0,
        m === 2 ? 2 * h[2] : 0,
      );
      tRef = ST[0];
    }
    if (tRef >= 0) {
      const f = boxSignedDistance(s0x + tRef * ddx, s0y + tRef * ddy, s0z + tRef * ddz, h);
      if (f <= fBest + 1e-12 * (L + h[0] + h[1] + h[2])) tBest = tRef;
    }
  }
  const qx = s0x + tBest * ddx;
  const qy = s0y + tBest * ddy;
  const qz = s0z + tBest * ddz;
  pointBoxLocal(qx, qy, qz, h);
  const code = PB[7];
  // Face region: exactly one coordinate code differs from 1.
  const c0 = code % 3;
  const c1 = Math.floor(code / 3) % 3;
  const c2 = Math.floor(code / 9);
  const off = (c0 !== 1 ? 1 : 0) + (c1 !== 1 ? 1 : 0) + (c2 !== 1 ? 1 : 0);
  if (off === 1 && L > 0) {
    const axis = c0 !== 1 ? 0 : c1 !== 1 ? 1 : 2;
    const sgn = (axis === 0 ? c0 : axis === 1 ? c1 : c2) === 2 ? 1 : -1;
    const dAxis = axis === 0 ? ddx : axis === 1 ? ddy : ddz;
    if (Math.abs(dAxis) <= CAPSULE_FACE_SIN * 2 * L) {
      // Keep the part of the segment where this face is the box's nearest feature:
      // within the face's slab (|x_m| ≤ h_m, m ≠ axis), on this face's side (s x_a ≥ 0)
      // and, for points inside the box, no deeper below this face than below another
      // (|x_m| − h_m ≤ s x_a − h_a). There φ(t) = s x_a − h_a is linear in t, so the
      // ends of that interval carry the minimum and their gaps are exact.
      const sa = axis === 0 ? s0x : axis === 1 ? s0y : s0z;
      const da = axis === 0 ? ddx : axis === 1 ? ddy : ddz;
      T01[0] = 0;
      T01[1] = 1;
      clipT(-sgn * sa, -sgn * da);
      for (let m = 0; m < 3; m++) {
        if (m === axis) continue;
        const sm = m === 0 ? s0x : m === 1 ? s0y : s0z;
        const dm = m === 0 ? ddx : m === 1 ? ddy : ddz;
        clipT(sm - h[m], dm);
        clipT(-sm - h[m], -dm);
        clipT(sm - h[m] - sgn * sa + h[axis], dm - sgn * da);
        clipT(-sm - h[m] - sgn * sa + h[axis], -dm - sgn * da);
      }
      const t0 = T01[0];
      const t1 = T01[1];
      if (t1 - t0 > 1e-9) {
        const face = 2 * axis + (sgn > 0 ? 0 : 1);
        for (let end = 0; end < 2; end++) {
          const t = end === 0 ? t0 : t1;
          const x = s0x + t * ddx;
          const y = s0y + t * ddy;
          const z = s0z + t * ddz;
          const coord = axis === 0 ? x : axis === 1 ? y : z;
          const gap = sgn * coord - h[axis] - r;
          if (!(gap < margin)) continue;
          const kx = axis === 0 ? sgn * h[0] : x;
          const ky = axis === 1 ? sgn * h[1] : y;
          const kz = axis === 2 ? sgn * h[2] : z;
          pushBoxLocal(
            out,
            pa,
            kx,
            ky,
            kz,
            axis === 0 ? sgn : 0,
            axis === 1 ? sgn : 0,
            axis === 2 ? sgn : 0,
            gap,
            27 + 2 * face + end,
          );
        }
        return;
      }
    }
  }
  const gap = PB[6] - r;
  if (!(gap < margin)) return;
  pushBoxLocal(out, pa, PB[0], PB[1], PB[2], PB[3], PB[4], PB[5], gap, code);
}

/** Number of point labels per (reference face, incident face) in box–box features. */
const BOX_POINT_LABELS = 36;
/** First box–box feature id of the edge–edge contacts (2 sides · 6 · 6 faces · 36 labels). */
const BOX_EDGE_BASE = 2 * 6 * 6 * BOX_POINT_LABELS;

/**
 * Box–box, after Gottschalk's separating-axis test and ODE's dBoxBox / Box2D's
 * b2CollidePolygons:
 *  1. Separating axes: the 3 face normals of a, the 3 of b and the 9 edge cross products
 *     a_i × b_j (skipped when nearly parallel). The separation along a unit axis L is
 *     |L·d| − Σ h^a_k |L·a_k| − Σ h^b_k |L·b_k| (d = c_b − c_a); if any exceeds the
 *     margin there is no contact. The axis of largest separation is chosen, with a bias
 *     for faces over edges (relative 5%, absolute 1e-5 of the smallest half-extent). Between
 *     a's and b's best face axes: if nearly parallel, the larger face is the reference
 *     (stable while a resting box rocks); otherwise b's face must beat a's by 2% + 1e-5.
 *  2. Face axis: the face of the reference box (the owner of the axis) facing the other
 *     box is the reference face; the other box's face most anti-parallel to it is the
 *     incident face. The incident quad is clipped (Sutherland–Hodgman) against the four
 *     side planes of the reference face; the clipped vertices below the margin are the
 *     contacts, gap = height above the reference face, at most 4 kept (deepest first,
 *     then spread to maximize the covered area as in Bullet's contact reduction).
 *     Feature = ((side·6 + refFace)·6 + incFace)·36 + label, side 0 when a owns the
 *     reference face, face = 2·axis + (0: + side, 1: − side), label 0..3 an incident
 *     vertex, 4 + 4e + k incident edge e cut by side plane k, 20 + 4k + k' the corner of
 *     side planes k and k'.
 *  3. Edge axis: one contact between the closest points of the two supporting edges,
 *     feature BOX_EDGE_BASE + ((3i + j)·4 + edge_a)·4 + edge_b.
 */
export function boxBox(
  a: BoxShape,
  pa: WorldPose,
  b: BoxShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const RA = pa.R;
  const RB = pb.R;
  const hA = a.halfExtents;
  const hB = b.halfExtents;
  const dx = pb.p[0] - pa.p[0];
  const dy = pb.p[1] - pa.p[1];
  const dz = pb.p[2] - pa.p[2];
  // C_ij = a_i · b_j.
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      const v = RA[i] * RB[j] + RA[3 + i] * RB[3 + j] + RA[6 + i] * RB[6 + j];
      C[3 * i + j] = v;
      AC[3 * i + j] = Math.abs(v);
    }
  }
  const tA0 = RA[0] * dx + RA[3] * dy + RA[6] * dz;
  const tA1 = RA[1] * dx + RA[4] * dy + RA[7] * dz;
  const tA2 = RA[2] * dx + RA[5] * dy + RA[8] * dz;
  const scale = Math.min(hA[0], hA[1], hA[2], hB[0], hB[1], hB[2]);
  const absTol = 1e-5 * scale;

  let bestSep = Number.NEGATIVE_INFINITY;
  let bestKind = 0; // 0: face of a, 1: face of b, 2: edge pair
  let bestIdx = 0;
  for (let i = 0; i < 3; i++) {
    const t = i === 0 ? tA0 : i === 1 ? tA1 : tA2;
    const s =
      Math.abs(t) - (hA[i] + hB[0] * AC[3 * i] + hB[1] * AC[3 * i + 1] + hB[2] * AC[3 * i + 2]);
    if (s > margin) return;
    if (s > bestSep) {
      bestSep = s;
      bestIdx = i;
    }
  }
  const faceASep = bestSep;
  const faceAIdx = bestIdx;
  let faceBSep = Number.NEGATIVE_INFINITY;
  let faceBIdx = 0;
  for (let j = 0; j < 3; j++) {
    const t = RB[j] * dx + RB[3 + j] * dy + RB[6 + j] * dz;
    const s = Math.abs(t) - (hA[0] * AC[j] + hA[1] * AC[3 + j] + hA[2] * AC[6 + j] + hB[j]);
    if (s > margin) return;
    if (s > faceBSep) {
      faceBSep = s;
      faceBIdx = j;
    }
  }
  // Reference face: when the best face axes of a and b are nearly parallel (within
  // ≈1.8°) they describe the same face-to-face contact, and their separations differ
  // only by O(angle · size); the larger face is then the reference (a's on a tie), which
  // keeps the choice, hence the feature ids, steady while a resting box rocks slightly.
  // Otherwise b's face must beat a's by the relative/absolute tolerance.
  let useB: boolean;
  if (AC[3 * faceAIdx + faceBIdx] > 0.9995) {
    const areaA = hA[(faceAIdx + 1) % 3] * hA[(faceAIdx + 2) % 3];
    const areaB = hB[(faceBIdx + 1) % 3] * hB[(faceBIdx + 2) % 3];
    useB = areaB > areaA * (1 + 1e-9);
  } else {
    useB = faceBSep > faceASep + 0.02 * Math.abs(faceASep) + absTol;
  }
  if (useB) {
    bestKind = 1;
    bestIdx = faceBIdx;
  }
  bestSep = Math.max(faceASep, faceBSep);
  const faceSep = bestSep;
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      // L = a_i × b_j in a's frame; b_j in a's frame is column j of C.
      const v0 = C[j];
      const v1 = C[3 + j];
      const v2 = C[6 + j];
      let l0: number;
      let l1: number;
      let l2: number;
      if (i === 0) {
        l0 = 0;
        l1 = -v2;
        l2 = v1;
      } else if (i === 1) {
        l0 = v2;
        l1 = 0;
        l2 = -v0;
      } else {
        l0 = -v1;
        l1 = v0;
        l2 = 0;
      }
      const len = length3(l0, l1, l2);
      if (len < 1e-6) continue;
      const rA = hA[0] * Math.abs(l0) + hA[1] * Math.abs(l1) + hA[2] * Math.abs(l2);
      let rB = 0;
      for (let k = 0; k < 3; k++) {
        rB += hB[k] * Math.abs(l0 * C[k] + l1 * C[3 + k] + l2 * C[6 + k]);
      }
      const s = (Math.abs(l0 * tA0 + l1 * tA1 + l2 * tA2) - rA - rB) / len;
      if (s > margin) return;
      if (s > faceSep + 0.05 * Math.abs(faceSep) + absTol && s > bestSep) {
        bestSep = s;
        bestKind = 2;
        bestIdx = 3 * i + j;
      }
    }
  }

  if (bestKind === 0) {
    const t = bestIdx === 0 ? tA0 : bestIdx === 1 ? tA1 : tA2;
    clipFaces(pa, hA, bestIdx, t >= 0 ? 1 : -1, pb, hB, 0, margin, out);
  } else if (bestKind === 1) {
    const j = bestIdx;
    const t = RB[j] * dx + RB[3 + j] * dy + RB[6 + j] * dz;
    // b's face towards a: along −d.
    clipFaces(pb, hB, j, t > 0 ? -1 : 1, pa, hA, 1, margin, out);
  } else {
    edgeEdge(pa, hA, pb, hB, (bestIdx / 3) | 0, bestIdx % 3, margin, out);
  }
}

/**
 * Reference-face / incident-face clipping for box–box (see boxBox). `side` is 0 when the
 * reference box is a (normal = +n_ref), 1 when it is b (normal = −n_ref).
 */
function clipFaces(
  pr: WorldPose,
  hr: readonly number[],
  axis: number,
  sign: number,
  pi: WorldPose,
  hi: readonly number[],
  side: number,
  margin: number,
  out: ContactBuffer,
): void {
  const Rr = pr.R;
  const Ri = pi.R;
  // Reference normal (world), towards the incident box.
  const nx = sign * Rr[axis];
  const ny = sign * Rr[3 + axis];
  const nz = sign * Rr[6 + axis];
  // In-plane axes u (axis+1) and v (axis+2) of the reference face, half sizes hu, hv.
  const ku = (axis + 1) % 3;
  const kv = (axis + 2) % 3;
  const ux = Rr[ku];
  const uy = Rr[3 + ku];
  const uz = Rr[6 + ku];
  const vx = Rr[kv];
  const vy = Rr[3 + kv];
  const vz = Rr[6 + kv];
  const hu = hr[ku];
  const hv = hr[kv];
  const fx = pr.p[0] + hr[axis] * nx;
  const fy = pr.p[1] + hr[axis] * ny;
  const fz = pr.p[2] + hr[axis] * nz;

  // Incident face: the axis of the other box most (anti)parallel to n.
  let jAx = 0;
  let bestDot = -1;
  let dotSigned = 0;
  for (let j = 0; j < 3; j++) {
    const dj = nx * Ri[j] + ny * Ri[3 + j] + nz * Ri[6 + j];
    if (Math.abs(dj) > bestDot + 1e-12) {
      bestDot = Math.abs(dj);
      dotSigned = dj;
      jAx = j;
    }
  }
  const sI = dotSigned > 0 ? -1 : 1; // incident face normal sI·i_j opposes n
  const jk = (jAx + 1) % 3;
  const jl = (jAx + 2) % 3;
  const icx = pi.p[0] + sI * hi[jAx] * Ri[jAx];
  const icy = pi.p[1] + sI * hi[jAx] * Ri[3 + jAx];
  const icz = pi.p[2] + sI * hi[jAx] * Ri[6 + jAx];
  const kx = hi[jk] * Ri[jk];
  const ky = hi[jk] * Ri[3 + jk];
  const kz = hi[jk] * Ri[6 + jk];
  const lx = hi[jl] * Ri[jl];
  const ly = hi[jl] * Ri[3 + jl];
  const lz = hi[jl] * Ri[6 + jl];
  // Incident quad in the reference face frame (x along u, y along v, z along n):
  // vertices (+,+), (−,+), (−,−), (+,−) in (k, l); edge e joins vertex e and e+1.
  let n = 4;
  for (let q = 0; q < 4; q++) {
    const sk = q === 0 || q === 3 ? 1 : -1;
    const sl = q < 2 ? 1 : -1;
    const wx = icx + sk * kx + sl * lx - fx;
    const wy = icy + sk * ky + sl * ly - fy;
    const wz = icz + sk * kz + sl * lz - fz;
    polyA[3 * q] = wx * ux + wy * uy + wz * uz;
    polyA[3 * q + 1] = wx * vx + wy * vy + wz * vz;
    polyA[3 * q + 2] = wx * nx + wy * ny + wz * nz;
    vlabA[q] = q;
    elabA[q] = q;
  }
  // Sutherland–Hodgman against x ≤ hu (k=0), y ≤ hv (1), −x ≤ hu (2), −y ≤ hv (3).
  // Edge labels: 0..3 original incident edges, 4 + k an edge lying on side plane k.
  let src = polyA;
  let dst = polyB;
  let srcV = vlabA;
  let dstV = vlabB;
  let srcE = elabA;
  let dstE = elabB;
  for (let k = 0; k < 4 && n > 0; k++) {
    const comp = k & 1; // 0: x, 1: y
    const sgn = k < 2 ? 1 : -1;
    const lim = comp === 0 ? hu : hv;
    let m = 0;
    for (let p = 0; p < n; p++) {
      const q = p + 1 === n ? 0 : p + 1;
      const fp = sgn * src[3 * p + comp] - lim;
      const fq = sgn * src[3 * q + comp] - lim;
      const inP = fp <= 0;
      const inQ = fq <= 0;
      if (inP) {
        dst[3 * m] = src[3 * p];
        dst[3 * m + 1] = src[3 * p + 1];
        dst[3 * m + 2] = src[3 * p + 2];
        dstV[m] = srcV[p];
        dstE[m] = srcE[p];
        m++;
      }
      if (inP !== inQ) {
        const t = fp / (fp - fq);
        dst[3 * m] = src[3 * p] + t * (src[3 * q] - src[3 * p]);
        dst[3 * m + 1] = src[3 * p + 1] + t * (src[3 * q + 1] - src[3 * p + 1]);
        dst[3 * m + 2] = src[3 * p + 2] + t * (src[3 * q + 2] - src[3 * p + 2]);
        // Exact coordinate on the clip line.
        dst[3 * m + comp] = sgn * lim;
        const e = srcE[p];
        dstV[m] = e < 4 ? 4 + 4 * e + k : 20 + 4 * (e - 4) + k;
        // Entering (P out, Q in): the new vertex continues along edge e; leaving: along plane k.
        dstE[m] = inP ? 4 + k : e;
        m++;
      }
    }
    n = m;
    const t0 = src;
    src = dst;
    dst = t0;
    const t1 = srcV;
    srcV = dstV;
    dstV = t1;
    const t2 = srcE;
    srcE = dstE;
    dstE = t2;
  }
  // Points below the margin.
  let m = 0;
  for (let p = 0; p < n; p++) if (src[3 * p + 2] < margin) keepIdx[m++] = p;
  if (m === 0) return;
  if (m > 4) m = reduceToFour(src, m);
  const refFace = 2 * axis + (sign > 0 ? 0 : 1);
  const incFace = 2 * jAx + (sI > 0 ? 0 : 1);
  const base = ((side * 6 + refFace) * 6 + incFace) * BOX_POINT_LABELS;
  const cn = side === 0 ? 1 : -1;
  for (let r = 0; r < m; r++) {
    const p = keepIdx[r];
    const x = src[3 * p];
    const y = src[3 * p + 1];
    const z = src[3 * p + 2];
    // Midpoint between the incident point (height z) and its projection on the reference face.
    const hz = 0.5 * z;
    out.push(
      fx + x * ux + y * vx + hz * nx,
      fy + x * uy + y * vy + hz * ny,
      fz + x * uz + y * vz + hz * nz,
      cn * nx,
      cn * ny,
      cn * nz,
      z,
      base + srcV[p],
    );
  }
}

/** Swaps keepIdx[r] and keepIdx[c]. */
function sel(r: number, c: number): void {
  const t = keepIdx[r];
  keepIdx[r] = keepIdx[c];
  keepIdx[c] = t;
}

/**
 * Chooses 4 of the m candidate points listed in keepIdx (indices into poly, (x, y, z)
 * in the reference face frame): the deepest, the farthest from it in the face plane, the
 * one making the largest triangle with those two, and the one adding the most area to
 * that triangle. The chosen indices are moved to keepIdx[0..3]; returns 4.
 */
function reduceToFour(poly: Float64Array, m: number): number {
  let best = 0;
  for (let r = 1; r < m; r++) if (poly[3 * keepIdx[r] + 2] < poly[3 * keepIdx[best] + 2]) best = r;
  sel(0, best);
  const p0 = keepIdx[0];
  const x0 = poly[3 * p0];
  const y0 = poly[3 * p0 + 1];
  best = 1;
  let bestVal = -1;
  for (let r = 1; r < m; r++) {
    const p = keepIdx[r];
    const d = (poly[3 * p] - x0) ** 2 + (poly[3 * p + 1] - y0) ** 2;
    if (d > bestVal) {
      bestVal = d;
      best = r;
    }
  }
  sel(1, best);
  const p1 = keepIdx[1];
  const x1 = poly[3 * p1];
  const y1 = poly[3 * p1 + 1];
  best = 2;
  bestVal = -1;
  for (let r = 2; r < m; r++) {
    const p = keepIdx[r];
    const a = Math.abs((x1 - x0) * (poly[3 * p + 1] - y0) - (y1 - y0) * (poly[3 * p] - x0));
    if (a > bestVal) {
      bestVal = a;
      best = r;
    }
  }
  sel(2, best);
  const p2 = keepIdx[2];
  const x2 = poly[3 * p2];
  const y2 = poly[3 * p2 + 1];
  best = 3;
  bestVal = -1;
  for (let r = 3; r < m; r++) {
    const p = keepIdx[r];
    const x = poly[3 * p];
    const y = poly[3 * p + 1];
    // Sum of the three sub-triangle areas: equals the triangle's area inside it and grows
    // with the area the point adds outside it.
    const a =
      Math.abs((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0)) +
      Math.abs((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) +
      Math.abs((x0 - x2) * (y - y2) - (y0 - y2) * (x - x2));
    if (a > bestVal) {
      bestVal = a;
      best = r;
    }
  }
  sel(3, best);
  return 4;
}

/** Edge–edge box contact for the axis a_i × b_j (see boxBox). */
function edgeEdge(
  pa: WorldPose,
  hA: readonly number[],
  pb: WorldPose,
  hB: readonly number[],
  i: number,
  j: number,
  margin: number,
  out: ContactBuffer,
): void {
  const RA = pa.R;
  const RB = pb.R;
  // World axis n = a_i × b_j, oriented from a to b.
  const aix = RA[i];
  const aiy = RA[3 + i];
  const aiz = RA[6 + i];
  const bjx = RB[j];
  const bjy = RB[3 + j];
  const bjz = RB[6 + j];
  let nx = aiy * bjz - aiz * bjy;
  let ny = aiz * bjx - aix * bjz;
  let nz = aix * bjy - aiy * bjx;
  const len = length3(nx, ny, nz);
  let s = 1 / len;
  if (nx * (pb.p[0] - pa.p[0]) + ny * (pb.p[1] - pa.p[1]) + nz * (pb.p[2] - pa.p[2]) < 0) s = -s;
  nx *= s;
  ny *= s;
  nz *= s;
  // Supporting edge of a: the edge along a_i furthest along +n; of b: along b_j, furthest along −n.
  let qax = pa.p[0];
  let qay = pa.p[1];
  let qaz = pa.p[2];
  let edgeA = 0;
  let bit = 0;
  for (let m = 0; m < 3; m++) {
    if (m === i) continue;
    const dn = nx * RA[m] + ny * RA[3 + m] + nz * RA[6 + m];
    const sg = dn >= 0 ? 1 : -1;
    if (sg > 0) edgeA |= 1 << bit;
    bit++;
    qax += sg * hA[m] * RA[m];
    qay += sg * hA[m] * RA[3 + m];
    qaz += sg * hA[m] * RA[6 + m];
  }
  let qbx = pb.p[0];
  let qby = pb.p[1];
  let qbz = pb.p[2];
  let edgeB = 0;
  bit = 0;
  for (let m = 0; m < 3; m++) {
    if (m === j) continue;
    const dn = nx * RB[m] + ny * RB[3 + m] + nz * RB[6 + m];
    const sg = dn > 0 ? -1 : 1;
    if (sg > 0) edgeB |= 1 << bit;
    bit++;
    qbx += sg * hB[m] * RB[m];
    qby += sg * hB[m] * RB[3 + m];
    qbz += sg * hB[m] * RB[6 + m];
  }
  const La = hA[i];
  const Lb = hB[j];
  const p1x = qax - La * aix;
  const p1y = qay - La * aiy;
  const p1z = qaz - La * aiz;
  const p2x = qbx - Lb * bjx;
  const p2y = qby - Lb * bjy;
  const p2z = qbz - Lb * bjz;
  segmentSegment(
    p1x,
    p1y,
    p1z,
    2 * La * aix,
    2 * La * aiy,
    2 * La * aiz,
    p2x,
    p2y,
    p2z,
    2 * Lb * bjx,
    2 * Lb * bjy,
    2 * Lb * bjz,
  );
  const sa = 2 * La * ST[0];
  const sb = 2 * Lb * ST[1];
  const cax = p1x + sa * aix;
  const cay = p1y + sa * aiy;
  const caz = p1z + sa * aiz;
  const cbx = p2x + sb * bjx;
  const cby = p2y + sb * bjy;
  const cbz = p2z + sb * bjz;
  const gap = (cbx - cax) * nx + (cby - cay) * ny + (cbz - caz) * nz;
  if (!(gap < margin)) return;
  out.push(
    0.5 * (cax + cbx),
    0.5 * (cay + cby),
    0.5 * (caz + cbz),
    nx,
    ny,
    nz,
    gap,
    BOX_EDGE_BASE + ((3 * i + j) * 4 + edgeA) * 4 + edgeB,
  );
}

// ---------------------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------------------

/**
 * Contacts between shape a at pose pa and shape b at pose pb (any types, any order),
 * appended to `out` for the pair set by out.setPair(). Normals point from a to b.
 * Returns the number of contacts added.
 */
export function collideShapes(
  a: Shape,
  pa: WorldPose,
  b: Shape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): number {
  const start = out.count;
  if (shapeRank(a.type) <= shapeRank(b.type)) {
    dispatchOrdered(a, pa, b, pb, margin, out);
  } else {
    dispatchOrdered(b, pb, a, pa, margin, out);
    out.negateNormals(start);
  }
  return out.count - start;
}

/** Calls the pair function for shapes already in canonical order (rank(a) ≤ rank(b)). */
function dispatchOrdered(
  a: Shape,
  pa: WorldPose,
  b: Shape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  switch (a.type) {
    case "plane":
      switch (b.type) {
        case "plane":
          return; // two half-spaces: no point contact
        case "box":
          planeBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          planeCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          planeCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          planeSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "box":
      switch (b.type) {
        case "box":
          boxBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          boxCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          boxCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          boxSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "capsule":
      switch (b.type) {
        case "capsule":
          capsuleCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          capsuleCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          capsuleSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "cylinder":
      switch (b.type) {
        case "cylinder":
          cylinderCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          cylinderSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "sphere":
      if (b.type === "sphere") sphereSphere(a, pa, b, pb, margin, out);
      return;
  }
}
