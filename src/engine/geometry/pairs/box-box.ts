/**
 * Box–box, after Gottschalk's separating-axis test and ODE's dBoxBox / Box2D's
 * b2CollidePolygons: the separating-axis test picks a face or an edge pair; a face gives a
 * manifold by clipping the other box's incident face against the reference face (the
 * clipping of convex/clip.ts, shared with the convex pairs' polygon features), reduced to
 * at most four points; an edge pair gives one contact between the supporting edges.
 */

import { copy3 } from "../../math/vec3";
import type { ContactBuffer } from "../contact-buffer";
import {
  CLIP_IN,
  CLIP_IN_LABELS,
  clipPolygon,
  clipped,
  FRAME,
  PICK,
  pickBelow,
  pushPicked,
  REFERENCE,
  referenceIsB,
  SAME_FACE_COS,
  SIDE_AXIS,
  SIDES,
  swapPick,
} from "../convex/clip";
import { AXES, CONTACT, closestOnAxes, inFrameOf } from "../helpers";
import type { WorldPose } from "../pose";
import type { BoxShape } from "../shapes";

/** Number of point labels per (reference face, incident face) in box–box features. */
const BOX_POINT_LABELS = 36;
/** First box–box feature id of the edge–edge contacts (2 sides · 6 · 6 faces · 36 labels). */
const BOX_EDGE_BASE = 2 * 6 * 6 * BOX_POINT_LABELS;

/** C_ij = a_i · b_j (row-major) and |C_ij|: b's axes in a's frame. */
const C = new Float64Array(9);
const AC = new Float64Array(9);
/**
 * edgeAxisSeparation's input d in a's frame (0..2) and its results (3, 4): an array rather
 * than double arguments and double results, which V8 boxes when it does not inline the call.
 */
const SEP = new Float64Array(5);

/**
 * Box–box:
 *  1. Separating axes: the 3 face normals of a, the 3 of b and the 9 edge cross products
 *     a_i × b_j (skipped when nearly parallel). The separation along a unit axis L is
 *     |L·d| − Σ h^a_k |L·a_k| − Σ h^b_k |L·b_k| (d = c_b − c_a); if any exceeds the
 *     margin there is no contact. The axis of largest separation is chosen, with a bias
 *     for faces over edges (relative 5%, absolute 1e-5 of the smallest half-extent), and
 *     never an edge axis within SAME_FACE_COS (≈1.8°) of a face normal (see below). Between
 *     a's and b's best face axes: if nearly parallel, the larger face is the reference
 *     (stable while a resting box rocks); otherwise b's face must beat a's by 2% + 1e-5
 *     (referenceIsB).
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
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      const v = RA[i] * RB[j] + RA[3 + i] * RB[3 + j] + RA[6 + i] * RB[6 + j];
      C[3 * i + j] = v;
      AC[3 * i + j] = Math.abs(v);
    }
  }
  // d in a's frame (also edgeAxisSeparation's input).
  inFrameOf(pa, pb, SEP, 0);
  const tA0 = SEP[0];
  const tA1 = SEP[1];
  const tA2 = SEP[2];
  const scale = Math.min(hA[0], hA[1], hA[2], hB[0], hB[1], hB[2]);
  const absTol = 1e-5 * scale;

  // Face axes of a, then of b.
  let faceASep = Number.NEGATIVE_INFINITY;
  let faceAIdx = 0;
  for (let i = 0; i < 3; i++) {
    const t = i === 0 ? tA0 : i === 1 ? tA1 : tA2;
    const s =
      Math.abs(t) - (hA[i] + hB[0] * AC[3 * i] + hB[1] * AC[3 * i + 1] + hB[2] * AC[3 * i + 2]);
    if (s > margin) return;
    if (s > faceASep) {
      faceASep = s;
      faceAIdx = i;
    }
  }
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
  REFERENCE[0] = AC[3 * faceAIdx + faceBIdx];
  REFERENCE[1] = hA[(faceAIdx + 1) % 3] * hA[(faceAIdx + 2) % 3];
  REFERENCE[2] = hB[(faceBIdx + 1) % 3] * hB[(faceBIdx + 2) % 3];
  REFERENCE[3] = faceASep;
  REFERENCE[4] = faceBSep;
  REFERENCE[5] = absTol;
  const useB = referenceIsB();
  let bestKind = useB ? 1 : 0; // 0: face of a, 1: face of b, 2: edge pair
  let bestIdx = useB ? faceBIdx : faceAIdx;
  let bestSep = Math.max(faceASep, faceBSep);

  // Edge axes a_i × b_j: chosen only when clearly better than the best face, and not when
  // nearly parallel to a face normal. Faces resting on each other at a small relative tilt
  // θ (a stack's boxes, yawed against each other) make edge axes of edges in the two faces'
  // planes within about θ of the normals, and the separation along such an axis exceeds
  // the faces' by up to θ times a half-extent: along the face normal the other box's
  // corners that the tilt lowers count in full, along the edge axis (normal to the two
  // edges) less. At θ = 1e-4 and 0.1 m that is ~1e-5 m, beyond the bias (faceSep ≈ 0 at
  // rest): the one edge–edge point replaced the four-point face manifold under a resting
  // box, and an 8-box column, alternate boxes yawed 45°, collapsed after 8.8 s. Such an
  // axis describes the face contact (Gregorius, "Robust Contact Creation for Physics
  // Simulations", GDC 2013: prefer faces): the clipped face manifold holds the edges'
  // crossing point among its points, gap along the face normal, within 1.8° of the edge
  // axis. It is still a separating axis if it separates.
  const faceSep = bestSep;
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      edgeAxisSeparation(i, j, hA, hB);
      const s = SEP[3];
      if (s > margin) return;
      if (SEP[4] > SAME_FACE_COS) continue;
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
 * Separation of the boxes along the edge axis L = a_i × b_j (in a's frame; b_j in a's
 * frame is column j of C), with d in a's frame (tA0, tA1, tA2) = SEP[0..2], into SEP[3]:
 * (|L·d| − Σ h^a_k |L_k| − Σ h^b_k |L·b_k|)/|L|; −∞ when the axes are nearly parallel
 * (|L| < 1e-6: no axis). Into SEP[4]: the largest |cos| between L and a face normal,
 * max(|L_k|, |L·b_k|)/|L|.
 */
function edgeAxisSeparation(i: number, j: number, hA: readonly number[], hB: readonly number[]) {
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
  const len = Math.sqrt(l0 * l0 + l1 * l1 + l2 * l2); // length3, written out
  if (len < 1e-6) {
    SEP[3] = Number.NEGATIVE_INFINITY;
    return;
  }
  const al0 = Math.abs(l0);
  const al1 = Math.abs(l1);
  const al2 = Math.abs(l2);
  const rA = hA[0] * al0 + hA[1] * al1 + hA[2] * al2;
  let rB = 0;
  let cosMax = Math.max(al0, al1, al2);
  for (let k = 0; k < 3; k++) {
    const lb = Math.abs(l0 * C[k] + l1 * C[3 + k] + l2 * C[6 + k]);
    rB += hB[k] * lb;
    if (lb > cosMax) cosMax = lb;
  }
  SEP[3] = (Math.abs(l0 * SEP[0] + l1 * SEP[1] + l2 * SEP[2]) - rA - rB) / len;
  SEP[4] = cosMax / len;
}

// ---------------------------------------------------------------------------------------
// Face contact: clipping
// ---------------------------------------------------------------------------------------

/**
 * Reference-face / incident-face clipping for box–box (see boxBox): the reference face
 * `axis` (`sign` its side) of the box (pr, hr), the incident box (pi, hi). `side` is 0
 * when the reference box is a (normal = +n_ref), 1 when it is b (normal = −n_ref).
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
  referenceFace(pr, hr, axis, sign);
  const incFace = incidentFace(pi, hi);
  const n = clipPolygon(4, 4, 4);
  let m = pickBelow(n, margin);
  if (m === 0) return;
  if (m > 4) m = reduceToFour(clipped.points, m);
  const refFace = 2 * axis + (sign > 0 ? 0 : 1);
  const base = ((side * 6 + refFace) * 6 + incFace) * BOX_POINT_LABELS;
  pushPicked(out, m, side === 0 ? 1 : -1, base);
}

/**
 * Sets the clip frame to the reference face `axis` (side `sign`) of the box (pr, hr):
 * origin the face centre f = c + h_axis n, x along the box axis u = axis + 1, y along
 * v = axis + 2, normal n = sign·(box axis) towards the incident box; and its four sides
 * x ≤ h_u (k = 0), y ≤ h_v (1), −x ≤ h_u (2), −y ≤ h_v (3), along the frame axes.
 */
function referenceFace(pr: WorldPose, hr: readonly number[], axis: number, sign: number): void {
  const Rr = pr.R;
  const nx = sign * Rr[axis];
  const ny = sign * Rr[3 + axis];
  const nz = sign * Rr[6 + axis];
  const ku = (axis + 1) % 3;
  const kv = (axis + 2) % 3;
  FRAME[0] = pr.p[0] + hr[axis] * nx;
  FRAME[1] = pr.p[1] + hr[axis] * ny;
  FRAME[2] = pr.p[2] + hr[axis] * nz;
  FRAME[3] = Rr[ku];
  FRAME[4] = Rr[3 + ku];
  FRAME[5] = Rr[6 + ku];
  FRAME[6] = Rr[kv];
  FRAME[7] = Rr[3 + kv];
  FRAME[8] = Rr[6 + kv];
  FRAME[9] = nx;
  FRAME[10] = ny;
  FRAME[11] = nz;
  for (let k = 0; k < 4; k++) {
    const comp = k & 1; // 0: x, 1: y
    SIDES[3 * k] = k < 2 ? 1 : -1;
    SIDES[3 * k + 1] = 0;
    SIDES[3 * k + 2] = comp === 0 ? hr[ku] : hr[kv];
    SIDE_AXIS[k] = comp;
  }
}

/**
 * Writes the incident face of the box (pi, hi) — its face whose axis is most
 * (anti)parallel to the reference normal, on the side facing the reference — into the clip
 * input in the clip frame (x along u, y along v, z along n): vertices (+,+), (−,+), (−,−),
 * (+,−) in the face's in-plane axes (k, l), labels 0..3 (edge e joins vertex e and
 * e + 1). Returns the incident face, 2·axis + (0: + side, 1: − side).
 */
function incidentFace(pi: WorldPose, hi: readonly number[]): number {
  const Ri = pi.R;
  const fx = FRAME[0];
  const fy = FRAME[1];
  const fz = FRAME[2];
  const ux = FRAME[3];
  const uy = FRAME[4];
  const uz = FRAME[5];
  const vx = FRAME[6];
  const vy = FRAME[7];
  const vz = FRAME[8];
  const nx = FRAME[9];
  const ny = FRAME[10];
  const nz = FRAME[11];
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
  for (let q = 0; q < 4; q++) {
    const sk = q === 0 || q === 3 ? 1 : -1;
    const sl = q < 2 ? 1 : -1;
    const wx = icx + sk * kx + sl * lx - fx;
    const wy = icy + sk * ky + sl * ly - fy;
    const wz = icz + sk * kz + sl * lz - fz;
    CLIP_IN[3 * q] = wx * ux + wy * uy + wz * uz;
    CLIP_IN[3 * q + 1] = wx * vx + wy * vy + wz * vz;
    CLIP_IN[3 * q + 2] = wx * nx + wy * ny + wz * nz;
    CLIP_IN_LABELS[q] = q;
  }
  return 2 * jAx + (sI > 0 ? 0 : 1);
}

/**
 * Chooses 4 of the m candidate points listed in PICK (indices into poly, (x, y, z)
 * in the reference face frame): the deepest, the farthest from it in the face plane, the
 * one making the largest triangle with those two, and the one adding the most area to
 * that triangle. The chosen indices are moved to PICK[0..3]; returns 4.
 */
function reduceToFour(poly: Float64Array, m: number): number {
  let best = 0;
  for (let r = 1; r < m; r++) if (poly[3 * PICK[r] + 2] < poly[3 * PICK[best] + 2]) best = r;
  swapPick(0, best);
  const p0 = PICK[0];
  const x0 = poly[3 * p0];
  const y0 = poly[3 * p0 + 1];
  best = 1;
  let bestVal = -1;
  for (let r = 1; r < m; r++) {
    const p = PICK[r];
    const d = (poly[3 * p] - x0) ** 2 + (poly[3 * p + 1] - y0) ** 2;
    if (d > bestVal) {
      bestVal = d;
      best = r;
    }
  }
  swapPick(1, best);
  const p1 = PICK[1];
  const x1 = poly[3 * p1];
  const y1 = poly[3 * p1 + 1];
  best = 2;
  bestVal = -1;
  for (let r = 2; r < m; r++) {
    const p = PICK[r];
    const a = Math.abs((x1 - x0) * (poly[3 * p + 1] - y0) - (y1 - y0) * (poly[3 * p] - x0));
    if (a > bestVal) {
      bestVal = a;
      best = r;
    }
  }
  swapPick(2, best);
  const p2 = PICK[2];
  const x2 = poly[3 * p2];
  const y2 = poly[3 * p2 + 1];
  best = 3;
  bestVal = -1;
  for (let r = 3; r < m; r++) {
    const p = PICK[r];
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
  swapPick(3, best);
  return 4;
}

// ---------------------------------------------------------------------------------------
// Edge contact
// ---------------------------------------------------------------------------------------

/** The edge–edge normal n (0..2, input of supportingEdge) and an edge's centre (3..5, its result). */
const EDGE = new Float64Array(6);

/**
 * The edge along axis `skip` of the box (pose, h) furthest along `towards`·n (n in
 * EDGE[0..2]): each other axis m at the side s_m = sign(towards·(n·axis_m)) (ties: +).
 * Its centre c + Σ s_m h_m axis_m into EDGE[3..5]; returns its code, bit k set when the
 * k-th other axis (in increasing order) is at +h.
 */
function supportingEdge(pose: WorldPose, h: readonly number[], skip: number, towards: number) {
  const R = pose.R;
  const nx = EDGE[0];
  const ny = EDGE[1];
  const nz = EDGE[2];
  let qx = pose.p[0];
  let qy = pose.p[1];
  let qz = pose.p[2];
  let edge = 0;
  let bit = 0;
  for (let m = 0; m < 3; m++) {
    if (m === skip) continue;
    const dn = nx * R[m] + ny * R[3 + m] + nz * R[6 + m];
    const sg = towards > 0 ? (dn >= 0 ? 1 : -1) : dn > 0 ? -1 : 1;
    if (sg > 0) edge |= 1 << bit;
    bit++;
    qx += sg * h[m] * R[m];
    qy += sg * h[m] * R[3 + m];
    qz += sg * h[m] * R[6 + m];
  }
  EDGE[3] = qx;
  EDGE[4] = qy;
  EDGE[5] = qz;
  return edge;
}

/**
 * Edge–edge box contact for the axis a_i × b_j (see boxBox): n = a_i × b_j normalized and
 * oriented from a to b; the closest points of a's supporting edge (along a_i, furthest
 * along +n) and b's (along b_j, furthest along −n) give gap = (x_b − x_a)·n.
 */
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
  const aix = RA[i];
  const aiy = RA[3 + i];
  const aiz = RA[6 + i];
  const bjx = RB[j];
  const bjy = RB[3 + j];
  const bjz = RB[6 + j];
  let nx = aiy * bjz - aiz * bjy;
  let ny = aiz * bjx - aix * bjz;
  let nz = aix * bjy - aiy * bjx;
  const len = Math.sqrt(nx * nx + ny * ny + nz * nz); // length3, written out
  let s = 1 / len;
  if (nx * (pb.p[0] - pa.p[0]) + ny * (pb.p[1] - pa.p[1]) + nz * (pb.p[2] - pa.p[2]) < 0) s = -s;
  nx *= s;
  ny *= s;
  nz *= s;
  EDGE[0] = nx;
  EDGE[1] = ny;
  EDGE[2] = nz;
  const edgeA = supportingEdge(pa, hA, i, 1);
  copy3(AXES, 0, EDGE, 3);
  AXES[3] = aix;
  AXES[4] = aiy;
  AXES[5] = aiz;
  AXES[6] = hA[i];
  const edgeB = supportingEdge(pb, hB, j, -1);
  copy3(AXES, 7, EDGE, 3);
  AXES[10] = bjx;
  AXES[11] = bjy;
  AXES[12] = bjz;
  AXES[13] = hB[j];
  closestOnAxes();
  const cax = AXES[14];
  const cay = AXES[15];
  const caz = AXES[16];
  const cbx = AXES[17];
  const cby = AXES[18];
  const cbz = AXES[19];
  const gap = (cbx - cax) * nx + (cby - cay) * ny + (cbz - caz) * nz;
  if (!(gap < margin)) return;
  CONTACT[0] = 0.5 * (cax + cbx);
  CONTACT[1] = 0.5 * (cay + cby);
  CONTACT[2] = 0.5 * (caz + cbz);
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  out.pushFrom(CONTACT, BOX_EDGE_BASE + ((3 * i + j) * 4 + edgeA) * 4 + edgeB);
}
