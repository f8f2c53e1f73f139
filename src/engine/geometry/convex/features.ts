/**
 * Features of convex cores for contact manifolds: the face, edge or point a core turns
 * towards a direction, built into per-slot buffers (slot 0: a, slot 1: b) that the
 * manifold builder (manifold.ts) clips against each other.
 *
 * With the contact normal n (a→b), each core's feature facing the other (direction n for
 * a, −n for b) is:
 *  - a polygon (a box face, a cylinder cap as its RIM_SAMPLES rim points) when its normal
 *    is within CYLINDER_FLUSH_SIN of the direction (cos ≥ FLUSH_COS);
 *  - else a segment (a box edge, a cylinder's side line, a capsule's axis) when it is
 *    within LINE_SIN of perpendicular to the direction;
 *  - else a point.
 * Feature codes index the feature within its shape and enter the contact feature ids
 * (manifold.ts), which allow polygon codes below 6, segment codes below 12 and point
 * codes below 27.
 */

import { MAX_SIDES } from "./clip";
import type { ConvexSupport } from "./support";

/**
 * |n·d̂| below which a segment feature (a capsule's axis, a box edge, a cylinder's side)
 * lies across the normal n: a line contact (≈11.5°).
 */
export const LINE_SIN = 0.2;
/** sin of the angle below which two segment features are parallel (two-point contact). */
export const PARALLEL_SIN = 0.02;

/** Feature types. */
export const F_POINT = 0;
export const F_SEG = 1;
export const F_POLY = 2;

/** Feature type and code per slot (ConvexFeatures.classify). */
export const FT = new Int32Array(2);
export const FC = new Int32Array(2);

/** Most vertices of a polygon feature. */
export const POLY_CAP = MAX_SIDES;
/**
 * Polygon or segment feature per slot: vertices (world, 3 each, from 3·POLY_CAP·s),
 * their labels (from POLY_CAP·s), count; a polygon's outward unit normal (world, 3·s).
 */
export const FPOLY = new Float64Array(2 * 3 * POLY_CAP);
export const FLAB = new Int32Array(2 * POLY_CAP);
export const FCOUNT = new Int32Array(2);
export const FNRM = new Float64Array(6);

/**
 * Inputs of the feature methods (an array each rather than double arguments, which V8
 * boxes on a call it does not inline; support.ts QUERY): the unit direction towards the
 * other shape (0..2) and the tolerance (3) of polygon() and segment() (TOWARD); the world
 * point (0..2) and the size of the pair (3) of pointCode() (POINT); the line's point
 * (0..2) and unit direction (3..5) of rayEntry() (LINE).
 */
export const TOWARD = new Float64Array(4);
export const POINT = new Float64Array(4);
export const LINE = new Float64Array(6);

/** Entry parameter written by ConvexFeatures.rayEntry. */
export const RAY = new Float64Array(1);

/** A convex core's features (see the file comment); the slot s is 0 for a, 1 for b. */
export interface ConvexFeatures {
  /**
   * Classifies the feature facing the local unit direction d[0..2] (from the core towards
   * the other shape): writes its type (F_POINT, F_SEG, F_POLY) to FT[s] and code to FC[s].
   */
  classify(d: Float64Array, s: number): void;
  /**
   * Builds the polygon feature FC[s] into slot s: vertices in order around it (labels:
   * the vertex indices of the polygon), count, outward normal. `incident`: the polygon is
   * to be clipped against the other's, t[0..2] the unit direction towards it; a curved
   * boundary then gets its exact deepest point inserted where its samples miss it by more
   * than the tolerance t[3] (label: the sample count).
   */
  polygon(s: number, incident: boolean, t: Float64Array): void;
  /**
   * Builds the segment feature facing the unit world direction t[0..2] into slot s: its
   * two ends (labels 0: the − end, 1: the + end along the core's axis).
   */
  segment(s: number, t: Float64Array): void;
  /**
   * Code (below 27) of the core's feature carrying the world point q[0..2] of its surface,
   * within 1e-7 of the size of the pair q[3]: the single contact's feature.
   */
  pointCode(q: Float64Array): number;
  /** Area of the polygon feature `code` (only compared between two polygons), into out[o]. */
  polygonArea(code: number, out: Float64Array, o: number): void;
  /**
   * Optional: where the line p + t n (n unit; p = line[0..2], n = line[3..5]) enters the
   * solid core, t into RAY[0]; false when the line misses it. Needed for parallel segment
   * features when the core is b (manifold.ts parallelSegments); a core without it gets
   * the single contact there.
   */
  rayEntry?(line: Float64Array): boolean;
}

/** A convex core as the convex pairs use it: support function and features. */
export type ConvexShape = ConvexSupport & ConvexFeatures;

/**
 * What the cores share: their frame (x = p + R x_local, referencing the pose their place()
 * was given), the radius of the ball the core is swept by (sweep[0], metres: 0 for a
 * solid, a capsule's radius for its segment, a sphere's for its centre; pair.ts
 * collideCores adds it to the core gap), and the defaults of a polytope core without
 * polygon or segment features: a piecewise-linear support function (zero Hessian, kinks
 * too many to list or none, so the normal polish relies on EPA, exact for polytopes; no
 * cone points), which the curved and kinked cores override.
 */
export abstract class ConvexCore {
  p = new Float64Array(3);
  R = new Float64Array(9);
  readonly sweep = new Float64Array(1);

  /** Piecewise linear: zero Hessian. */
  addSupportHessian(_d: Float64Array, _o: number, _H: Float64Array): void {}

  kinkAxes(_out: Float64Array, _o: number): number {
    return 0;
  }

  coneAxes(_out: Float64Array, _o: number): number {
    return 0;
  }

  /** No polygon feature (classify never reports one). */
  polygon(_s: number, _incident: boolean, _t: Float64Array): void {}

  /** No segment feature (classify never reports one). */
  segment(_s: number, _t: Float64Array): void {}

  /** No polygon feature: area 0. */
  polygonArea(_code: number, out: Float64Array, o: number): void {
    out[o] = 0;
  }
}
