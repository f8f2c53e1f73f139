/**
 * Contact manifolds of two convex cores from their features (features.ts) facing each
 * other along the polished normal n (a→b), and the single contact when there is none:
 *  - polygon–polygon: the reference is the polygon whose normal separates the cores best
 *    (ties, e.g. parallel faces: the larger one; clip.ts referenceIsB), or the other one
 *    where that one is no good reference (a face over the larger one's edge); the incident
 *    polygon (a cap gets its exact deepest rim point inserted where the samples miss it)
 *    is clipped (Sutherland–Hodgman) against the reference's sides, gaps = heights above
 *    the reference plane, at most MAX_MANIFOLD points (deepest, then spread);
 *  - polygon–segment: the segment (for a cylinder side: the exact deepest point of each
 *    rim, joined) clipped to the polygon, two points;
 *  - segment–segment, parallel within PARALLEL_SIN: at each end of their overlap, the
 *    point of a's support line (on a's surface) and where the line from it along n
 *    enters b (on b's surface), gap = that parameter;
 *  - otherwise none: the single GJK/EPA contact. A reference polygon must separate the
 *    cores nearly as well as the optimal normal (within 5 % and 1e-5 of the size, as
 *    box–box prefers faces to edges), else the contact is at its boundary (a rim or an
 *    edge) and no manifold is built.
 * Normals: the reference polygon's normal for clipped manifolds, else the polished one.
 *
 * Feature ids (below FEATURE_RANGE = 65536): single contact 27·code_a + code_b (the cores'
 * point codes), then ranges for polygon–polygon (reference side, a's polygon code, b's
 * polygon code, clip label), polygon–segment, segment–polygon (polygon code, segment code,
 * segment clip label) and segment–segment (the *_BASE constants). Codes beyond those
 * ranges (a hull's faces, edges and vertices) are mixed into the ids instead
 * (ContactBuffer.mixFeatures of the range's label with the two codes).
 */

import type { ContactBuffer } from "../contact-buffer";
import { CONTACT, pushContactFromA } from "../helpers";
import {
  CLIP_IN,
  CLIP_IN_LABELS,
  CLIP_POINT,
  clipPolygon,
  clipped,
  clipSegment,
  FRAME,
  FRAME_POINT,
  PICK,
  pickBelowOf,
  pushPicked,
  REFERENCE,
  referenceIsB,
  SIDE_AXIS,
  SIDES,
  swapPick,
  toFrame,
} from "./clip";
import {
  type ConvexShape,
  F_POINT,
  F_POLY,
  FC,
  FCOUNT,
  FLAB,
  FNRM,
  FPOLY,
  FT,
  LINE,
  PARALLEL_SIN,
  POINT,
  POLY_CAP,
  RAY,
  TOWARD,
} from "./features";
import { RES } from "./gjk";
import { PN } from "./polish";
import { ALONG, QUERY, separationAlong, toLocal } from "./support";

/**
 * Radius each core is swept by (slot 0: a, 1: b; ConvexCore.sweep, written by pair.ts
 * collideCores), metres.
 */
export const RADII = new Float64Array(2);

/** Most points of a clipped manifold. */
const MAX_MANIFOLD = 8;

/** Feature id ranges of the convex pairs (all below FEATURE_RANGE = 65536). */
const POINT_RANGE = 27 * 27;
/** Clip labels of polygon–polygon: vertex q (16), edge e ∩ side k (256), side corners (256). */
const CLIP_LABELS = POLY_CAP + 2 * POLY_CAP * POLY_CAP;
const PP_BASE = POINT_RANGE;
const PS_BASE = PP_BASE + 2 * 6 * 6 * CLIP_LABELS;
/** Labels of a clipped segment: end e kept (0, 1) or cut by side k (2 + 2k + e). */
const SEG_LABELS = 2 + 2 * POLY_CAP;
const SP_BASE = PS_BASE + 6 * 12 * SEG_LABELS;
const SS_BASE = SP_BASE + 12 * 6 * SEG_LABELS;

/** Local direction of classifyFacing; −n for b's feature (buildManifold). */
const LOCAL = new Float64Array(3);
const NEG_N = new Float64Array(3);

/** Classifies core c's feature (slot s) facing the world direction d[0..2] (FT[s], FC[s]). */
function classifyFacing(c: ConvexShape, s: number, d: Float64Array): void {
  toLocal(c, d, 0, LOCAL);
  c.classify(LOCAL, s);
}

/**
 * Pushes the manifold of the cores a and b facing each other along the polished unit
 * normal n = PN[0..2] (a→b), if their features make one (see the file comment); margin
 * QUERY[1].
 */
export function buildManifold(a: ConvexShape, b: ConvexShape, out: ContactBuffer): void {
  NEG_N[0] = -PN[0];
  NEG_N[1] = -PN[1];
  NEG_N[2] = -PN[2];
  classifyFacing(a, 0, PN);
  classifyFacing(b, 1, NEG_N);
  const ta = FT[0];
  const tb = FT[1];
  if (ta === F_POINT || tb === F_POINT) return;
  if (ta === F_POLY && tb === F_POLY) polygonPolygon(a, b, out);
  else if (ta === F_POLY) {
    a.polygon(0, false, TOWARD);
    separationAlong(a, b, FNRM, 0, 1);
    if (!goodReference(ALONG, 0)) return;
    TOWARD[0] = -FNRM[0];
    TOWARD[1] = -FNRM[1];
    TOWARD[2] = -FNRM[2];
    b.segment(1, TOWARD);
    const sides = polygonFrame(0);
    const wide = FC[0] >= 6 || FC[1] >= 12;
    const base = PS_BASE + (wide ? 0 : (FC[0] * 12 + FC[1]) * SEG_LABELS);
    CLIP_POINT[3] = RADII[1];
    const start = out.count;
    clipSegment(FPOLY, 3 * POLY_CAP, sides, QUERY, 1, 1, base, out);
    if (wide) out.mixFeatures(start, FC[0], 4 * FC[1] + 1);
  } else if (tb === F_POLY) {
    b.polygon(1, false, TOWARD);
    separationAlong(a, b, FNRM, 3, -1);
    if (!goodReference(ALONG, 0)) return;
    TOWARD[0] = -FNRM[3];
    TOWARD[1] = -FNRM[4];
    TOWARD[2] = -FNRM[5];
    a.segment(0, TOWARD);
    const sides = polygonFrame(1);
    const wide = FC[0] >= 12 || FC[1] >= 6;
    const base = SP_BASE + (wide ? 0 : (FC[0] * 6 + FC[1]) * SEG_LABELS);
    CLIP_POINT[3] = RADII[0];
    const start = out.count;
    clipSegment(FPOLY, 0, sides, QUERY, 1, -1, base, out);
    if (wide) out.mixFeatures(start, FC[0], 4 * FC[1] + 2);
  } else {
    a.segment(0, PN);
    b.segment(1, NEG_N);
    const wide = FC[0] >= 12 || FC[1] >= 12;
    const start = out.count;
    parallelSegments(b, SS_BASE + (wide ? 0 : (FC[0] * 12 + FC[1]) * 2), out);
    if (wide) out.mixFeatures(start, FC[0], 4 * FC[1] + 3);
  }
}

/**
 * Whether a polygon's normal, separating the cores by sep = v[o] (the separation along
 * it), may carry a clipped manifold: it must separate nearly as well as the optimum
 * −PN[3] (within 5 % and 1e-5 of the size QUERY[0], as box–box prefers faces over edges);
 * otherwise the contact is really at the polygon's boundary (a rim or an edge) and the
 * single contact is kept.
 */
function goodReference(v: Float64Array, o: number): boolean {
  const sep = v[o];
  const best = -PN[3];
  return sep >= best - 0.05 * Math.abs(best) - 1e-5 * QUERY[0];
}

/** Polygon–polygon: the incident polygon clipped against the reference one. */
function polygonPolygon(a: ConvexShape, b: ConvexShape, out: ContactBuffer): void {
  const scale = QUERY[0];
  a.polygon(0, false, TOWARD);
  b.polygon(1, false, TOWARD);
  separationAlong(a, b, FNRM, 0, 1);
  REFERENCE[3] = ALONG[0];
  separationAlong(a, b, FNRM, 3, -1);
  REFERENCE[4] = ALONG[0];
  REFERENCE[0] = -(FNRM[0] * FNRM[3] + FNRM[1] * FNRM[4] + FNRM[2] * FNRM[5]);
  a.polygonArea(FC[0], REFERENCE, 1);
  b.polygonArea(FC[1], REFERENCE, 2);
  REFERENCE[5] = 1e-5 * scale;
  let useB = referenceIsB();
  // Nearly parallel polygons (within 1.8°) go to the larger one, whose plane may not
  // separate the cores: a box face over a triangle's edge (a 1° ridge, a table's edge,
  // the box tipped by φ over it) hangs below the triangle's plane by up to its overhang
  // times sin φ beyond the edge. The face–edge contact is then the segment of the edge
  // under the box's face, which the triangle clipped to the face's sides gives by its two
  // ends (heights above the face's plane); the single contact would be one point of it,
  // about which the box tips (balanced on a 1° ridge it rested 0.9 mrad tilted on one
  // end, that contact 0.6 mm deep, and slid along the ridge at 4 cm/s).
  if (!goodReference(REFERENCE, useB ? 4 : 3)) {
    useB = !useB;
    if (!goodReference(REFERENCE, useB ? 4 : 3)) return;
  }
  const ref = useB ? 1 : 0;
  const inc = 1 - ref;
  // The incident polygon rebuilt with its exact deepest rim point towards the reference.
  const o = 3 * ref;
  TOWARD[0] = -FNRM[o];
  TOWARD[1] = -FNRM[o + 1];
  TOWARD[2] = -FNRM[o + 2];
  TOWARD[3] = 1e-7 * scale;
  (inc === 0 ? a : b).polygon(inc, true, TOWARD);
  const sides = polygonFrame(ref);
  // The incident polygon in the reference frame, clipped.
  const n = FCOUNT[inc];
  const ib = 3 * inc * POLY_CAP;
  for (let q = 0; q < n; q++) {
    toFrame(FPOLY, ib + 3 * q);
    CLIP_IN[3 * q] = FRAME_POINT[0];
    CLIP_IN[3 * q + 1] = FRAME_POINT[1];
    CLIP_IN[3 * q + 2] = FRAME_POINT[2];
    CLIP_IN_LABELS[q] = FLAB[inc * POLY_CAP + q];
  }
  let m = pickBelowOf(clipPolygon(n, sides, POLY_CAP), QUERY, 1);
  if (m > MAX_MANIFOLD) m = spread(clipped.points, m);
  const wide = FC[0] >= 6 || FC[1] >= 6;
  const base = PP_BASE + (wide ? ref : (ref * 6 + FC[0]) * 6 + FC[1]) * CLIP_LABELS;
  const start = out.count;
  pushPicked(out, m, ref === 0 ? 1 : -1, base);
  if (wide) out.mixFeatures(start, FC[0], 4 * FC[1]);
}

/**
 * Sets the clip frame (FRAME, SIDES) from slot s's polygon: origin its vertex centroid,
 * u towards its first vertex, normal FNRM[s] (towards the incident side). Returns the
 * number of sides.
 */
function polygonFrame(s: number): number {
  const n = FCOUNT[s];
  const base = 3 * s * POLY_CAP;
  let fx = 0;
  let fy = 0;
  let fz = 0;
  for (let k = 0; k < n; k++) {
    fx += FPOLY[base + 3 * k];
    fy += FPOLY[base + 3 * k + 1];
    fz += FPOLY[base + 3 * k + 2];
  }
  fx /= n;
  fy /= n;
  fz /= n;
  const mx = FNRM[3 * s];
  const my = FNRM[3 * s + 1];
  const mz = FNRM[3 * s + 2];
  let ux = FPOLY[base] - fx;
  let uy = FPOLY[base + 1] - fy;
  let uz = FPOLY[base + 2] - fz;
  const um = ux * mx + uy * my + uz * mz;
  ux -= um * mx;
  uy -= um * my;
  uz -= um * mz;
  const ul = Math.sqrt(ux * ux + uy * uy + uz * uz);
  ux /= ul;
  uy /= ul;
  uz /= ul;
  FRAME[0] = fx;
  FRAME[1] = fy;
  FRAME[2] = fz;
  FRAME[3] = ux;
  FRAME[4] = uy;
  FRAME[5] = uz;
  FRAME[6] = my * uz - mz * uy;
  FRAME[7] = mz * ux - mx * uz;
  FRAME[8] = mx * uy - my * ux;
  FRAME[9] = mx;
  FRAME[10] = my;
  FRAME[11] = mz;
  for (let k = 0; k < n; k++) {
    const p = base + 3 * k;
    const q = base + 3 * ((k + 1) % n);
    const px = (FPOLY[p] - fx) * ux + (FPOLY[p + 1] - fy) * uy + (FPOLY[p + 2] - fz) * uz;
    const py =
      (FPOLY[p] - fx) * FRAME[6] + (FPOLY[p + 1] - fy) * FRAME[7] + (FPOLY[p + 2] - fz) * FRAME[8];
    const qx = (FPOLY[q] - fx) * ux + (FPOLY[q + 1] - fy) * uy + (FPOLY[q + 2] - fz) * uz;
    const qy =
      (FPOLY[q] - fx) * FRAME[6] + (FPOLY[q + 1] - fy) * FRAME[7] + (FPOLY[q + 2] - fz) * FRAME[8];
    let ox = qy - py;
    let oy = px - qx;
    const ol = Math.sqrt(ox * ox + oy * oy);
    ox /= ol;
    oy /= ol;
    if (ox * px + oy * py < 0) {
      ox = -ox;
      oy = -oy;
    }
    SIDES[3 * k] = ox;
    SIDES[3 * k + 1] = oy;
    SIDES[3 * k + 2] = ox * px + oy * py;
    SIDE_AXIS[k] = -1;
  }
  return n;
}

/**
 * Keeps MAX_MANIFOLD of the m points PICK[0..m−1]: the deepest, then repeatedly the one
 * farthest (in the plane) from those kept. Returns MAX_MANIFOLD.
 */
function spread(poly: Float64Array, m: number): number {
  let best = 0;
  for (let r = 1; r < m; r++) if (poly[3 * PICK[r] + 2] < poly[3 * PICK[best] + 2]) best = r;
  swapPick(0, best);
  for (let c = 1; c < MAX_MANIFOLD; c++) {
    let bi = c;
    let bd = -1;
    for (let r = c; r < m; r++) {
      const p = PICK[r];
      let dmin = Number.POSITIVE_INFINITY;
      for (let q = 0; q < c; q++) {
        const o = PICK[q];
        const d = (poly[3 * p] - poly[3 * o]) ** 2 + (poly[3 * p + 1] - poly[3 * o + 1]) ** 2;
        if (d < dmin) dmin = d;
      }
      if (dmin > bd) {
        bd = dmin;
        bi = r;
      }
    }
    swapPick(c, bi);
  }
  return MAX_MANIFOLD;
}

/**
 * Segment–segment (normal n = PN[0..2] a→b), when parallel within PARALLEL_SIN and
 * overlapping, and b has rayEntry (the cylinder): at each end of the overlap of a's
 * support segment (on a's surface: a box edge, or the side line of a capsule or cylinder
 * along n) with b's, the point p_a there and where the line p_a + s n enters b (on b's
 * surface): gap = s, so that p_b − p_a = gap n exactly; the exact line distance for
 * parallel axes, the height of b's surface along n at that station for slightly skewed
 * ones.
 */
function parallelSegments(b: ConvexShape, base: number, out: ContactBuffer): void {
  const nx = PN[0];
  const ny = PN[1];
  const nz = PN[2];
  const scale = QUERY[0];
  const margin = QUERY[1];
  const A = 0;
  const B = 3 * POLY_CAP;
  const ra = RADII[0];
  // a's support segment on its surface (a capsule's axis moved out by its radius).
  const a0x = FPOLY[A] + ra * nx;
  const a0y = FPOLY[A + 1] + ra * ny;
  const a0z = FPOLY[A + 2] + ra * nz;
  let dax = FPOLY[A + 3] - FPOLY[A];
  let day = FPOLY[A + 4] - FPOLY[A + 1];
  let daz = FPOLY[A + 5] - FPOLY[A + 2];
  const la = Math.sqrt(dax * dax + day * day + daz * daz);
  const b0x = FPOLY[B];
  const b0y = FPOLY[B + 1];
  const b0z = FPOLY[B + 2];
  let dbx = FPOLY[B + 3] - b0x;
  let dby = FPOLY[B + 4] - b0y;
  let dbz = FPOLY[B + 5] - b0z;
  const lb = Math.sqrt(dbx * dbx + dby * dby + dbz * dbz);
  if (!(la > 0 && lb > 0) || b.rayEntry === undefined) return;
  dax /= la;
  day /= la;
  daz /= la;
  dbx /= lb;
  dby /= lb;
  dbz /= lb;
  const sx = day * dbz - daz * dby;
  const sy = daz * dbx - dax * dbz;
  const sz = dax * dby - day * dbx;
  if (Math.sqrt(sx * sx + sy * sy + sz * sz) > PARALLEL_SIN) return;
  const tb0 = (b0x - a0x) * dax + (b0y - a0y) * day + (b0z - a0z) * daz;
  const tb1 = tb0 + lb * (dbx * dax + dby * day + dbz * daz);
  const lo = Math.max(0, Math.min(tb0, tb1));
  const hi = Math.min(la, Math.max(tb0, tb1));
  if (!(hi - lo > 1e-9 * scale)) return;
  for (let e = 0; e < 2; e++) {
    const t = e === 0 ? lo : hi;
    const px = a0x + t * dax;
    const py = a0y + t * day;
    const pz = a0z + t * daz;
    LINE[0] = px;
    LINE[1] = py;
    LINE[2] = pz;
    LINE[3] = nx;
    LINE[4] = ny;
    LINE[5] = nz;
    if (!b.rayEntry(LINE)) continue;
    const gap = RAY[0];
    if (!(gap < margin)) continue;
    CONTACT[0] = px;
    CONTACT[1] = py;
    CONTACT[2] = pz;
    CONTACT[3] = nx;
    CONTACT[4] = ny;
    CONTACT[5] = nz;
    CONTACT[6] = gap;
    pushContactFromA(out, base + e);
  }
}

/**
 * Pushes the single GJK/EPA contact (witnesses RES, polished normal PN, radii added) when
 * below the margin QUERY[1]; feature 27·code_a + code_b.
 */
export function singleContact(a: ConvexShape, b: ConvexShape, out: ContactBuffer): void {
  const ra = RADII[0];
  const gap = RES[9] - ra - RADII[1];
  if (!(gap < QUERY[1])) return;
  const nx = PN[0];
  const ny = PN[1];
  const nz = PN[2];
  POINT[3] = QUERY[0];
  for (let k = 0; k < 3; k++) POINT[k] = RES[3 + k];
  const codeA = a.pointCode(POINT);
  for (let k = 0; k < 3; k++) POINT[k] = RES[6 + k];
  const codeB = b.pointCode(POINT);
  const wide = codeA >= 27 || codeB >= 27;
  CONTACT[0] = RES[3] + ra * nx;
  CONTACT[1] = RES[4] + ra * ny;
  CONTACT[2] = RES[5] + ra * nz;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  const start = out.count;
  pushContactFromA(out, wide ? 0 : 27 * codeA + codeB);
  if (wide) out.mixFeatures(start, codeA, 4 * codeB + 3);
}
