/**
 * Reference-polygon clipping, shared by box–box (pairs/box-box.ts) and the polygon features
 * of the convex pairs (manifold.ts): a reference polygon with unit normal m defines a
 * frame (FRAME: origin f in its plane, in-plane axes u, v, normal m towards the incident
 * shape) and its sides as half-planes of the (x, y) = (u, v) coordinates. The incident
 * polygon, in frame coordinates (x, y, z = height above the reference plane), is clipped
 * against the sides (Sutherland–Hodgman); its remaining vertices below the margin are
 * the contacts, gap = z − (incident radius), normal ±m, point midway between the incident
 * point and its projection on the reference plane.
 *
 * Clip labels name each clipped vertex by the features that made it, so that a contact
 * keeps its feature id while the same features touch. With s the label stride (the most
 * vertices a polygon may have: 4 for box faces, POLY_CAP for convex polygon features):
 * label q < s is input vertex q; s + s·e + k the input edge e (joining vertices e and
 * e + 1) cut by side k; s(s + 1) + s·k' + k the corner of sides k' and k.
 */

import type { ContactBuffer } from "../contact-buffer";
import { CONTACT } from "../helpers";

/** Most sides of a reference polygon (and vertices of an incident one). */
export const MAX_SIDES = 16;
/** Capacity of the clip polygons (each side adds at most one vertex). */
const CLIP_MAX = 48;

/** Reference frame: origin f (0..2), u (3..5), v (6..8), normal m (9..11), all world. */
export const FRAME = new Float64Array(12);

/**
 * Sides of the reference polygon, half-planes o·(x, y) − off ≤ 0 in frame coordinates:
 * (o_x, o_y, off) per side, o the unit outward normal of the side.
 */
export const SIDES = new Float64Array(3 * MAX_SIDES);

/**
 * Per side, −1 for a general side, or the frame coordinate (0: x, 1: y) of a side along
 * a frame axis (a box face's): its test is then SIDES[3k]·coordinate − off with
 * SIDES[3k] = ±1, and a vertex cut by it is placed exactly on it (coordinate = ±off).
 */
export const SIDE_AXIS = new Int32Array(MAX_SIDES);

/** Clip polygons (x, y, z per vertex, frame coordinates) and their vertex and edge labels. */
const polyA = new Float64Array(3 * CLIP_MAX);
const polyB = new Float64Array(3 * CLIP_MAX);
const vlabA = new Int32Array(CLIP_MAX);
const vlabB = new Int32Array(CLIP_MAX);
const elabA = new Int32Array(CLIP_MAX);
const elabB = new Int32Array(CLIP_MAX);

/** Clip input, written by the caller: the incident polygon in frame coordinates, labels. */
export const CLIP_IN = polyA;
export const CLIP_IN_LABELS = vlabA;

/** The polygon clipPolygon returns: vertices (frame coordinates) and their labels. */
export const clipped = { points: polyA, labels: vlabA };

/**
 * Clips the incident polygon of n vertices in CLIP_IN (labels CLIP_IN_LABELS) against the
 * first `sides` sides (Sutherland–Hodgman), with label stride `stride` (see the file
 * comment). The result is in `clipped`; returns its vertex count.
 */
export function clipPolygon(n: number, sides: number, stride: number): number {
  for (let q = 0; q < n; q++) elabA[q] = vlabA[q];
  let src = polyA;
  let dst = polyB;
  let srcV = vlabA;
  let dstV = vlabB;
  let srcE = elabA;
  let dstE = elabB;
  for (let k = 0; k < sides && n > 0; k++) {
    const ox = SIDES[3 * k];
    const oy = SIDES[3 * k + 1];
    const off = SIDES[3 * k + 2];
    const axis = SIDE_AXIS[k];
    let m = 0;
    for (let p = 0; p < n; p++) {
      const q = p + 1 === n ? 0 : p + 1;
      const fp =
        axis < 0 ? ox * src[3 * p] + oy * src[3 * p + 1] - off : ox * src[3 * p + axis] - off;
      const fq =
        axis < 0 ? ox * src[3 * q] + oy * src[3 * q + 1] - off : ox * src[3 * q + axis] - off;
      const inP = fp <= 0;
      const inQ = fq <= 0;
      if (inP && m < CLIP_MAX) {
        dst[3 * m] = src[3 * p];
        dst[3 * m + 1] = src[3 * p + 1];
        dst[3 * m + 2] = src[3 * p + 2];
        dstV[m] = srcV[p];
        dstE[m] = srcE[p];
        m++;
      }
      if (inP !== inQ && m < CLIP_MAX) {
        const t = fp / (fp - fq);
        dst[3 * m] = src[3 * p] + t * (src[3 * q] - src[3 * p]);
        dst[3 * m + 1] = src[3 * p + 1] + t * (src[3 * q + 1] - src[3 * p + 1]);
        dst[3 * m + 2] = src[3 * p + 2] + t * (src[3 * q + 2] - src[3 * p + 2]);
        if (axis >= 0) dst[3 * m + axis] = ox * off; // exactly on the side
        const e = srcE[p];
        dstV[m] =
          e < stride ? stride + stride * e + k : stride * (stride + 1) + stride * (e - stride) + k;
        // Entering (P out, Q in): the new vertex continues along edge e; leaving: along side k.
        dstE[m] = inP ? stride + k : e;
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
  clipped.points = src;
  clipped.labels = srcV;
  return n;
}

/** Indices of chosen clipped vertices (pickBelow, then a reduction). */
export const PICK = new Int32Array(CLIP_MAX);

/** pickBelow's margin. */
const MARGIN = new Float64Array(1);

/** Lists in PICK the clipped vertices with height z below `margin`; returns their count. */
export function pickBelow(n: number, margin: number): number {
  MARGIN[0] = margin;
  return pickBelowOf(n, MARGIN, 0);
}

/**
 * pickBelow with the margin read from v[o]: for a caller holding it in an array, since V8
 * boxes a double argument of a call it does not inline.
 */
export function pickBelowOf(n: number, v: Float64Array, o: number): number {
  const margin = v[o];
  const pts = clipped.points;
  let m = 0;
  for (let p = 0; p < n; p++) if (pts[3 * p + 2] < margin) PICK[m++] = p;
  return m;
}

/** Swaps PICK[i] and PICK[j]. */
export function swapPick(i: number, j: number): void {
  const t = PICK[i];
  PICK[i] = PICK[j];
  PICK[j] = t;
}

/**
 * The point pushFramePoint pushes: frame coordinates x (0), y (1), core height z of the
 * incident feature above the reference plane (2), and the incident shape's radius around
 * its core (3). An array rather than arguments: V8 boxes each double argument of a call
 * it does not inline.
 */
export const CLIP_POINT = new Float64Array(4);

/**
 * Pushes the point in CLIP_POINT: gap = z − radius, point midway (at height gap/2 above
 * the reference plane). `cn` = +1 when the reference belongs to a (normal = m), −1 when
 * to b (normal = −m).
 */
export function pushFramePoint(out: ContactBuffer, cn: number, feature: number): void {
  const x = CLIP_POINT[0];
  const y = CLIP_POINT[1];
  const gap = CLIP_POINT[2] - CLIP_POINT[3];
  const hz = 0.5 * gap;
  CONTACT[0] = FRAME[0] + x * FRAME[3] + y * FRAME[6] + hz * FRAME[9];
  CONTACT[1] = FRAME[1] + x * FRAME[4] + y * FRAME[7] + hz * FRAME[10];
  CONTACT[2] = FRAME[2] + x * FRAME[5] + y * FRAME[8] + hz * FRAME[11];
  CONTACT[3] = cn * FRAME[9];
  CONTACT[4] = cn * FRAME[10];
  CONTACT[5] = cn * FRAME[11];
  CONTACT[6] = gap;
  out.pushFrom(CONTACT, feature);
}

/**
 * Pushes the clipped vertices PICK[0..m) (radius 0: gap = height above the reference
 * plane), features base + clip label; `cn` as pushFramePoint.
 */
export function pushPicked(out: ContactBuffer, m: number, cn: number, base: number): void {
  const pts = clipped.points;
  const labels = clipped.labels;
  CLIP_POINT[3] = 0;
  for (let r = 0; r < m; r++) {
    const p = PICK[r];
    CLIP_POINT[0] = pts[3 * p];
    CLIP_POINT[1] = pts[3 * p + 1];
    CLIP_POINT[2] = pts[3 * p + 2];
    pushFramePoint(out, cn, base + labels[p]);
  }
}

/** toFrame result: frame coordinates (x, y, z). */
export const FRAME_POINT = new Float64Array(3);

/** Coordinates of the world point src[o..o+2] in FRAME into FRAME_POINT. */
export function toFrame(src: Float64Array, o: number): void {
  const dx = src[o] - FRAME[0];
  const dy = src[o + 1] - FRAME[1];
  const dz = src[o + 2] - FRAME[2];
  FRAME_POINT[0] = dx * FRAME[3] + dy * FRAME[4] + dz * FRAME[5];
  FRAME_POINT[1] = dx * FRAME[6] + dy * FRAME[7] + dz * FRAME[8];
  FRAME_POINT[2] = dx * FRAME[9] + dy * FRAME[10] + dz * FRAME[11];
}

/**
 * The segment from the world points pts[o..o+2] to pts[o+3..o+5] (the core of an incident
 * segment feature, radius CLIP_POINT[3], written by the caller) clipped to the first
 * `sides` sides: the ends of the remaining part below the margin mv[mo] are pushed (one
 * point when it is shorter than 1e-9 of the segment), labels e (end e kept) or 2 + 2k + e
 * (end e cut by side k).
 */
export function clipSegment(
  pts: Float64Array,
  o: number,
  sides: number,
  mv: Float64Array,
  mo: number,
  cn: number,
  base: number,
  out: ContactBuffer,
): void {
  const rad = CLIP_POINT[3];
  const margin = mv[mo];
  toFrame(pts, o);
  const x0 = FRAME_POINT[0];
  const y0 = FRAME_POINT[1];
  const z0 = FRAME_POINT[2];
  toFrame(pts, o + 3);
  const x1 = FRAME_POINT[0];
  const y1 = FRAME_POINT[1];
  const z1 = FRAME_POINT[2];
  let t0 = 0;
  let t1 = 1;
  let cut0 = -1;
  let cut1 = -1;
  for (let k = 0; k < sides; k++) {
    const ox = SIDES[3 * k];
    const oy = SIDES[3 * k + 1];
    const off = SIDES[3 * k + 2];
    const f0 = ox * x0 + oy * y0 - off;
    const f1 = ox * x1 + oy * y1 - off;
    if (f0 > 0 && f1 > 0) return;
    if (f0 > 0) {
      const t = f0 / (f0 - f1);
      if (t > t0) {
        t0 = t;
        cut0 = k;
      }
    } else if (f1 > 0) {
      const t = f0 / (f0 - f1);
      if (t < t1) {
        t1 = t;
        cut1 = k;
      }
    }
  }
  if (!(t1 >= t0)) return;
  const single = t1 - t0 <= 1e-9;
  for (let e = 0; e < (single ? 1 : 2); e++) {
    const t = e === 0 ? t0 : t1;
    const z = z0 + t * (z1 - z0);
    if (!(z - rad < margin)) continue;
    const cut = e === 0 ? cut0 : cut1;
    CLIP_POINT[0] = x0 + t * (x1 - x0);
    CLIP_POINT[1] = y0 + t * (y1 - y0);
    CLIP_POINT[2] = z;
    pushFramePoint(out, cn, base + (cut < 0 ? e : 2 + 2 * cut + e));
  }
}

/**
 * Input of referenceIsB: the cosine between the two polygons' normals (0), their areas
 * (a's 1, b's 2), the separations of the shapes along their normals (a's 3, b's 4) and the
 * absolute tolerance (5).
 */
export const REFERENCE = new Float64Array(6);

/**
 * Cosine above which two directions count as the same face direction (≈1.8°): two nearly
 * parallel polygon normals (referenceIsB), a box–box edge axis and a face normal
 * (pairs/box-box.ts).
 */
export const SAME_FACE_COS = 0.9995;

/**
 * Which of two polygon features, a's and b's (face or cap), is the reference (inputs in
 * REFERENCE): when their normals are nearly parallel (cos > SAME_FACE_COS) they describe
 * the same face-to-face contact and their separations differ only by O(angle · size), so
 * the larger one is the reference (a's on a tie), which keeps the choice, hence the
 * feature ids, steady while a resting shape rocks slightly; otherwise b's must separate
 * the shapes better than a's by 2 % of a's separation + the tolerance. Returns true for b's.
 */
export function referenceIsB(): boolean {
  const sepA = REFERENCE[3];
  if (REFERENCE[0] > SAME_FACE_COS) return REFERENCE[2] > REFERENCE[1] * (1 + 1e-9);
  return REFERENCE[4] > sepA + 0.02 * Math.abs(sepA) + REFERENCE[5];
}
