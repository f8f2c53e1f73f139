/**
 * Small helpers shared by the pair functions (pairs/) and the convex machinery (convex/):
 * the contact push (a contact given by its surface point on a, or by a point of b over a
 * plane), a polytope's vertices against a plane, b's position in a's frame, a
 * perpendicular of a vector, and the closest points of two segments.
 *
 * Conventions are those of narrowphase.ts: normals from a to b, gap = (p_b − p_a)·n
 * (negative when penetrating), reported point the midpoint p_a + (gap/2) n. Results are
 * written to module-level scratch arrays (single-threaded; each worker thread has its own
 * module instance), so nothing here allocates.
 */

import type { ContactBuffer } from "./contact-buffer";
import type { WorldPose } from "./pose";

// ---------------------------------------------------------------------------------------
// Contact push
// ---------------------------------------------------------------------------------------

/**
 * A contact by its surface point on a: p_a (0..2), normal n (3..5), gap (6), written by
 * the caller; pushContactFromA records it. An array rather than arguments: V8 boxes each
 * double argument of a call it does not inline (an allocation per contact).
 */
export const CONTACT = new Float64Array(7);

/** Pushes the contact in CONTACT (from a's surface point): point = p_a + (gap/2) n. */
export function pushContactFromA(out: ContactBuffer, feature: number): void {
  const h = 0.5 * CONTACT[6];
  for (let k = 0; k < 3; k++) CONTACT[k] += h * CONTACT[3 + k];
  out.pushFrom(CONTACT, feature);
}

/**
 * Pushes a contact given in a's frame (placed at pa) by src[o..o+7]: a's surface point k
 * (o..o+2), normal n (o+3..o+5), gap (o+6) and feature (o+7): p_a = p + R k, n_world = R n.
 */
export function pushLocalFromA(out: ContactBuffer, pa: WorldPose, src: Float64Array, o: number) {
  const R = pa.R;
  const kx = src[o];
  const ky = src[o + 1];
  const kz = src[o + 2];
  const nlx = src[o + 3];
  const nly = src[o + 4];
  const nlz = src[o + 5];
  CONTACT[0] = pa.p[0] + R[0] * kx + R[1] * ky + R[2] * kz;
  CONTACT[1] = pa.p[1] + R[3] * kx + R[4] * ky + R[5] * kz;
  CONTACT[2] = pa.p[2] + R[6] * kx + R[7] * ky + R[8] * kz;
  CONTACT[3] = R[0] * nlx + R[1] * nly + R[2] * nlz;
  CONTACT[4] = R[3] * nlx + R[4] * nly + R[5] * nlz;
  CONTACT[5] = R[6] * nlx + R[7] * nly + R[8] * nlz;
  CONTACT[6] = src[o + 6];
  pushContactFromA(out, src[o + 7] | 0);
}

/** Scratch for worldPlane(): the plane's world normal (0..2) and offset (3). */
export const PLANE = new Float64Array(4);

/**
 * A point of b against the world plane in PLANE (n = PLANE[0..2], solid n·x ≤ d below),
 * written by the caller of pushPlaneContact: the point x (0..2), its height s = n·x − d
 * over the plane (3) and the contact's gap (4: s less b's radius about x, 0 for a vertex).
 */
export const HIT = new Float64Array(5);

/**
 * Pushes the contact of the point in HIT with the plane (the pair's a): p_a = x − s n, the
 * foot of x on the plane, normal n (out of the plane's solid, towards b).
 */
export function pushPlaneContact(out: ContactBuffer, feature: number): void {
  const s = HIT[3];
  CONTACT[0] = HIT[0] - s * PLANE[0];
  CONTACT[1] = HIT[1] - s * PLANE[1];
  CONTACT[2] = HIT[2] - s * PLANE[2];
  CONTACT[3] = PLANE[0];
  CONTACT[4] = PLANE[1];
  CONTACT[5] = PLANE[2];
  CONTACT[6] = HIT[4];
  pushContactFromA(out, feature);
}

/** The contact margin of the pair for the helpers that take it (a double argument is boxed). */
export const MARGIN = new Float64Array(1);

/** Most contacts of a polytope against a plane (a box resting on a face: its 4 corners). */
const PLANE_CONTACTS = 4;

/** Gaps and vertex indices of planeVertices' candidates (grown to the largest polytope). */
const CANDIDATES = { gaps: new Float64Array(64), idx: new Int32Array(64) };

/**
 * The vertices of a polytope b (local vertices x[3v..3v+2], v < V) placed at `pose`
 * against the world plane in PLANE (plane–box, plane–convex): each vertex's gap
 * g = n·(c + R v) − d, computed as dc + Σ_j v_j (n·R_j) with dc = n·c − d, and of those
 * below the margin MARGIN[0] the PLANE_CONTACTS smallest pushed (selection; ties: the lower
 * vertex index first), p_a = v − g n; feature the vertex index (mixed above 65535).
 */
export function planeVertices(x: Float64Array, V: number, pose: WorldPose, out: ContactBuffer) {
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pose.R;
  const c = pose.p;
  const margin = MARGIN[0];
  if (CANDIDATES.gaps.length < V) {
    CANDIDATES.gaps = new Float64Array(V);
    CANDIDATES.idx = new Int32Array(V);
  }
  const gaps = CANDIDATES.gaps;
  const idx = CANDIDATES.idx;
  const dc = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3];
  // n·(R e_j): the plane normal in b's frame.
  const m0 = nx * R[0] + ny * R[3] + nz * R[6];
  const m1 = nx * R[1] + ny * R[4] + nz * R[7];
  const m2 = nx * R[2] + ny * R[5] + nz * R[8];
  let m = 0;
  for (let v = 0; v < V; v++) {
    const g = dc + x[3 * v] * m0 + x[3 * v + 1] * m1 + x[3 * v + 2] * m2;
    if (g < margin) {
      gaps[m] = g;
      idx[m] = v;
      m++;
    }
  }
  const k = Math.min(m, PLANE_CONTACTS);
  for (let i = 0; i < k; i++) {
    let best = i;
    for (let j = i + 1; j < m; j++) if (gaps[j] < gaps[best]) best = j;
    const g = gaps[best];
    const v = idx[best];
    gaps[best] = gaps[i];
    idx[best] = idx[i];
    gaps[i] = g;
    idx[i] = v;
    const s0 = x[3 * v];
    const s1 = x[3 * v + 1];
    const s2 = x[3 * v + 2];
    HIT[0] = c[0] + R[0] * s0 + R[1] * s1 + R[2] * s2;
    HIT[1] = c[1] + R[3] * s0 + R[4] * s1 + R[5] * s2;
    HIT[2] = c[2] + R[6] * s0 + R[7] * s1 + R[8] * s2;
    HIT[3] = g;
    HIT[4] = g;
    const start = out.count;
    pushPlaneContact(out, v & 0xffff);
    if (v > 0xffff) out.mixFeatures(start, v, 0);
  }
}

/** Rᵀ (p_b − p_a): the origin of pose pb in the frame of pose pa, into out[o..o+2]. */
export function inFrameOf(pa: WorldPose, pb: WorldPose, out: Float64Array, o: number): void {
  const R = pa.R;
  const dx = pb.p[0] - pa.p[0];
  const dy = pb.p[1] - pa.p[1];
  const dz = pb.p[2] - pa.p[2];
  out[o] = R[0] * dx + R[3] * dy + R[6] * dz;
  out[o + 1] = R[1] * dx + R[4] * dy + R[7] * dz;
  out[o + 2] = R[2] * dx + R[5] * dy + R[8] * dz;
}

// ---------------------------------------------------------------------------------------
// Perpendiculars and clamps
// ---------------------------------------------------------------------------------------

/** crossLeastAxis result (not normalized). */
export const PERP = new Float64Array(3);

/**
 * Input of perpendicular, v (0..2) and g (3..5), written by the caller (double arguments
 * of a call V8 does not inline are boxed).
 */
export const PERP_IN = new Float64Array(6);

/**
 * v × e_k for the world axis e_k least aligned with v = (x, y, z) = v[o..o+2] (ties: the
 * lower axis), written to PERP: a vector perpendicular to v of length at least
 * |v|·√(2/3), not normalized. The vector is read from an array (see PERP_IN).
 */
export function crossLeastAxis(v: Float64Array, o: number): void {
  const x = v[o];
  const y = v[o + 1];
  const z = v[o + 2];
  const ax = Math.abs(x);
  const ay = Math.abs(y);
  const az = Math.abs(z);
  if (ax <= ay && ax <= az) {
    PERP[0] = 0;
    PERP[1] = z;
    PERP[2] = -y; // v × e_x
  } else if (ay <= az) {
    PERP[0] = -z;
    PERP[1] = 0;
    PERP[2] = x; // v × e_y
  } else {
    PERP[0] = y;
    PERP[1] = -x;
    PERP[2] = 0; // v × e_z
  }
}

/** perpendicular() result: a unit vector. */
export const NF = new Float64Array(3);

/**
 * A unit vector perpendicular to v = PERP_IN[0..2] = (x, y, z) (assumed unit), oriented so
 * that its dot product with g = PERP_IN[3..5] is non-negative; written to NF (+z when the
 * vector is zero). Used as the normal when two core points coincide (concentric spheres,
 * crossing capsule axes).
 */
export function perpendicular(): void {
  const gx = PERP_IN[3];
  const gy = PERP_IN[4];
  const gz = PERP_IN[5];
  crossLeastAxis(PERP_IN, 0);
  const px = PERP[0];
  const py = PERP[1];
  const pz = PERP[2];
  const l = Math.sqrt(px * px + py * py + pz * pz); // length3, written out
  let s = l > 0 ? 1 / l : 0;
  if (px * gx + py * gy + pz * gz < 0) s = -s;
  NF[0] = px * s;
  NF[1] = py * s;
  NF[2] = pz * s;
  if (l === 0) NF[2] = 1;
}

// ---------------------------------------------------------------------------------------
// Closest points of two segments
// ---------------------------------------------------------------------------------------

/**
 * segmentSegment input, written by the caller: P1 (0..2), Q1 − P1 (3..5), P2 (6..8),
 * Q2 − P2 (9..11) (an array rather than twelve double arguments, which V8 would box if it
 * did not inline the call).
 */
export const SEGMENTS = new Float64Array(12);
/** segmentSegment result: parameters s, t in [0, 1]. */
export const ST = new Float64Array(2);

/**
 * closestOnAxes input, written by the caller: segment A's centre (0..2), unit direction
 * (3..5) and half-length (6), segment B's (7..9, 10..12, 13); its result: the closest
 * points on A (14..16) and on B (17..19).
 */
export const AXES = new Float64Array(20);

/**
 * Closest points of two segments given by centre c, unit direction u and half-length L
 * (capsule axes, box edges) in AXES: as segmentSegment with P = c − L u, Q − P = 2L u; the
 * points P + (2L s) u.
 */
export function closestOnAxes(): void {
  const ax = AXES[3];
  const ay = AXES[4];
  const az = AXES[5];
  const LA = AXES[6];
  const bx = AXES[10];
  const by = AXES[11];
  const bz = AXES[12];
  const LB = AXES[13];
  const p1x = AXES[0] - LA * ax;
  const p1y = AXES[1] - LA * ay;
  const p1z = AXES[2] - LA * az;
  const p2x = AXES[7] - LB * bx;
  const p2y = AXES[8] - LB * by;
  const p2z = AXES[9] - LB * bz;
  SEGMENTS[0] = p1x;
  SEGMENTS[1] = p1y;
  SEGMENTS[2] = p1z;
  SEGMENTS[3] = 2 * LA * ax;
  SEGMENTS[4] = 2 * LA * ay;
  SEGMENTS[5] = 2 * LA * az;
  SEGMENTS[6] = p2x;
  SEGMENTS[7] = p2y;
  SEGMENTS[8] = p2z;
  SEGMENTS[9] = 2 * LB * bx;
  SEGMENTS[10] = 2 * LB * by;
  SEGMENTS[11] = 2 * LB * bz;
  segmentSegment();
  const s = 2 * LA * ST[0];
  const t = 2 * LB * ST[1];
  AXES[14] = p1x + s * ax;
  AXES[15] = p1y + s * ay;
  AXES[16] = p1z + s * az;
  AXES[17] = p2x + t * bx;
  AXES[18] = p2y + t * by;
  AXES[19] = p2z + t * bz;
}

/**
 * Closest points of the segments P1 + s(Q1 − P1) and P2 + t(Q2 − P2), s, t ∈ [0, 1], given
 * in SEGMENTS (Ericson, Real-Time Collision Detection, §5.1.9, ClosestPtSegmentSegment);
 * writes s, t to ST. For parallel segments the parameter of the first segment is 0 (any
 * closest pair). The clamps to [0, 1] are written out (clamp01's arithmetic): a double
 * returned by a call V8 does not inline is boxed.
 */
export function segmentSegment(): void {
  const p1x = SEGMENTS[0];
  const p1y = SEGMENTS[1];
  const p1z = SEGMENTS[2];
  const d1x = SEGMENTS[3];
  const d1y = SEGMENTS[4];
  const d1z = SEGMENTS[5];
  const p2x = SEGMENTS[6];
  const p2y = SEGMENTS[7];
  const p2z = SEGMENTS[8];
  const d2x = SEGMENTS[9];
  const d2y = SEGMENTS[10];
  const d2z = SEGMENTS[11];
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
    const u = f / e;
    t = u < 0 ? 0 : Math.min(u, 1);
  } else {
    const c = d1x * rx + d1y * ry + d1z * rz;
    if (e <= EPS) {
      t = 0;
      const u = -c / a;
      s = u < 0 ? 0 : Math.min(u, 1);
    } else {
      const b = d1x * d2x + d1y * d2y + d1z * d2z;
      const denom = a * e - b * b;
      if (denom > 1e-14 * a * e) {
        const u = (b * f - c * e) / denom;
        s = u < 0 ? 0 : Math.min(u, 1);
      } else {
        s = 0;
      }
      t = (b * s + f) / e;
      if (t < 0) {
        t = 0;
        const u = -c / a;
        s = u < 0 ? 0 : Math.min(u, 1);
      } else if (t > 1) {
        t = 1;
        const u = (b - c) / a;
        s = u < 0 ? 0 : Math.min(u, 1);
      }
    }
  }
  ST[0] = s;
  ST[1] = t;
}
