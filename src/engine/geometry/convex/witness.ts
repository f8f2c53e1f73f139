/**
 * Witness points of the single contact of two convex cores on their support sets along
 * the polished normal: each witness is moved onto its core's face, edge or point
 * supporting that normal (ConvexSupport.projectOnSupport), then the pair is made
 * consistent with the reported gap g (p_b − p_a = g n) from the side whose support set
 * has the lower dimension, or, for two segments, at their closest points.
 */

import { RES } from "./gjk";
import { type ConvexSupport, localToWorld, toLocal } from "./support";

/** Support segments of projectOnSupport: slot s's ends at SSEG[6s..6s+5] (world). */
const SSEG = new Float64Array(12);
/** Local witness, local direction, local segment ends. */
const Q = new Float64Array(3);
const D = new Float64Array(3);
const ENDS = new Float64Array(6);
/**
 * The witness relative to the core's origin (0..2); the normal n (3..5), its opposite −n
 * (6..8) and the gap g (9) of placeWitnesses.
 */
const WV = new Float64Array(10);

/**
 * Moves the witness RES[o..o+2] of core c (slot s) onto its support set in the world unit
 * direction d = WV[k..k+2]. Returns the dimension of the support set (0 point, 1 segment:
 * its ends into SSEG, 2 face).
 */
function projectOnSupport(c: ConvexSupport, s: number, k: number, o: number): number {
  const p = c.p;
  WV[0] = RES[o] - p[0];
  WV[1] = RES[o + 1] - p[1];
  WV[2] = RES[o + 2] - p[2];
  toLocal(c, WV, 0, Q);
  toLocal(c, WV, k, D);
  const dim = c.projectOnSupport(Q, D, ENDS);
  if (dim === 1) {
    localToWorld(c, ENDS, 0, SSEG, 6 * s);
    localToWorld(c, ENDS, 3, SSEG, 6 * s + 3);
  }
  localToWorld(c, Q, 0, RES, o);
  return dim;
}

/**
 * Places the single contact's witnesses (RES[3..8]) on the support sets along the unit
 * n = n[0..2] (a→b) with p_b − p_a = g n: from the side whose support set has the lower
 * dimension (a vertex or rim point over an edge or side line over a face or cap), or, for
 * two segments, at their closest points.
 */
export function placeWitnesses(a: ConvexSupport, b: ConvexSupport, n: Float64Array): void {
  const nx = n[0];
  const ny = n[1];
  const nz = n[2];
  WV[3] = nx;
  WV[4] = ny;
  WV[5] = nz;
  WV[6] = -nx;
  WV[7] = -ny;
  WV[8] = -nz;
  const da = projectOnSupport(a, 0, 3, 3);
  const db = projectOnSupport(b, 1, 6, 6);
  const g = nx * (RES[6] - RES[3]) + ny * (RES[7] - RES[4]) + nz * (RES[8] - RES[5]);
  WV[9] = g;
  if (da === 1 && db === 1 && closestOfSupportSegments()) return;
  if (db < da) {
    RES[3] = RES[6] - g * nx;
    RES[4] = RES[7] - g * ny;
    RES[5] = RES[8] - g * nz;
  } else {
    RES[6] = RES[3] + g * nx;
    RES[7] = RES[4] + g * ny;
    RES[8] = RES[5] + g * nz;
  }
}

/**
 * Witnesses at the closest points of the two support segments (SSEG), which lie in two
 * parallel planes ⊥ n, i.e. of their projections on the plane ⊥ n: s from the unclamped
 * solution, then t from s and s again from t, each clamped to [0, 1] (the alternating
 * projection onto the segments; Ericson's segmentSegment clamps in a different order,
 * with different rounding), p_b − p_a = g n (n = WV[3..5], g = WV[9]). Returns false,
 * leaving RES, for (nearly) parallel segments.
 */
function closestOfSupportSegments(): boolean {
  const nx = WV[3];
  const ny = WV[4];
  const nz = WV[5];
  const g = WV[9];
  const p1x = SSEG[0];
  const p1y = SSEG[1];
  const p1z = SSEG[2];
  const d1x = SSEG[3] - p1x;
  const d1y = SSEG[4] - p1y;
  const d1z = SSEG[5] - p1z;
  const p2x = SSEG[6];
  const p2y = SSEG[7];
  const p2z = SSEG[8];
  const d2x = SSEG[9] - p2x;
  const d2y = SSEG[10] - p2y;
  const d2z = SSEG[11] - p2z;
  const a = d1x * d1x + d1y * d1y + d1z * d1z;
  const e = d2x * d2x + d2y * d2y + d2z * d2z;
  const b = d1x * d2x + d1y * d2y + d1z * d2z;
  const rx = p1x - p2x;
  const ry = p1y - p2y;
  const rz = p1z - p2z;
  const c = d1x * rx + d1y * ry + d1z * rz;
  const f = d2x * rx + d2y * ry + d2z * rz;
  const den = a * e - b * b;
  if (!(den > 1e-12 * a * e)) return false;
  let sp = (b * f - c * e) / den;
  sp = sp < 0 ? 0 : Math.min(sp, 1);
  let tp = (b * sp + f) / e;
  tp = tp < 0 ? 0 : Math.min(tp, 1);
  sp = (b * tp - c) / a;
  sp = sp < 0 ? 0 : Math.min(sp, 1);
  RES[3] = p1x + sp * d1x;
  RES[4] = p1y + sp * d1y;
  RES[5] = p1z + sp * d1z;
  RES[6] = RES[3] + g * nx;
  RES[7] = RES[4] + g * ny;
  RES[8] = RES[5] + g * nz;
  return true;
}
