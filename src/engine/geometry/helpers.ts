/**
 * Small helpers shared by the pair functions (pairs/) and the convex machinery (convex/):
 * the contact push (a contact given by its surface point on a), a perpendicular of a
 * vector, clamps, and the closest points of two segments.
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
