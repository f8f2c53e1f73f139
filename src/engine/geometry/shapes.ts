/**
 * Collision shape descriptors and their world-space bounds.
 *
 * Every shape is described in its own shape frame; a ShapeInstance places that frame in
 * a body frame (localPosition, localOrientation) and the body frame is placed in the
 * world by the body's position and orientation (DESIGN.md: origin at the centre of
 * mass, quaternion [w, x, y, z]). Lengths in metres.
 */

import type { ConvexHull } from "./hull";
import type { TriangleMesh } from "./mesh";
import type { WorldPose } from "./pose";

/** Ball of the given radius centred at the shape frame's origin. */
export interface SphereShape {
  readonly type: "sphere";
  readonly radius: number;
}

/**
 * Half-space {x : n·x ≤ offset} in the shape frame. The half-space is the SOLID part:
 * the plane's body occupies the side opposite its normal, and the surface is n·x = offset.
 * `normal` should be unit; a non-unit normal is normalized together with the offset by
 * the detector so that the surface stays the same.
 */
export interface PlaneShape {
  readonly type: "plane";
  readonly normal: readonly [number, number, number];
  readonly offset: number;
}

/** Box |x_i| ≤ halfExtents_i in the shape frame. */
export interface BoxShape {
  readonly type: "box";
  readonly halfExtents: readonly [number, number, number];
}

/**
 * Capsule: all points within `radius` of the segment from (0, 0, −halfLength) to
 * (0, 0, +halfLength), i.e. the axis is the shape frame's local z.
 */
export interface CapsuleShape {
  readonly type: "capsule";
  readonly radius: number;
  readonly halfLength: number;
}

/**
 * Solid cylinder: all points with x² + y² ≤ radius² and |z| ≤ halfLength in the shape
 * frame, i.e. the axis is the local z and the flat caps are at z = ±halfLength.
 */
export interface CylinderShape {
  readonly type: "cylinder";
  readonly radius: number;
  readonly halfLength: number;
}

/** Convex hull of a point set (hull.ts), in the shape frame. */
export interface ConvexHullShape {
  readonly type: "convex";
  readonly hull: ConvexHull;
}

/**
 * Triangle mesh (mesh.ts; counter-clockwise triangles seen from outside, so face normals
 * point out of the solid or up from a terrain), in the shape frame. It collides with
 * the bounded primitives and convex hulls, not with planes or other meshes.
 */
export interface MeshShape {
  readonly type: "mesh";
  readonly mesh: TriangleMesh;
}

export type Shape =
  | SphereShape
  | PlaneShape
  | BoxShape
  | CapsuleShape
  | CylinderShape
  | ConvexHullShape
  | MeshShape;
export type ShapeType = Shape["type"];

/**
 * A shape attached to a body. `body` indexes the pos (3 per body) and quat (4 per body)
 * arrays passed to the detector; body −1 is the fixed world frame (the shape's local
 * pose is then its world pose). The local pose defaults to the identity.
 */
export interface ShapeInstance {
  readonly shape: Shape;
  readonly body: number;
  /** Position of the shape frame's origin in the body frame, metres. */
  readonly localPosition?: readonly [number, number, number];
  /** Orientation of the shape frame in the body frame, [w, x, y, z]. */
  readonly localOrientation?: readonly [number, number, number, number];
}

/**
 * Rank used to put a pair of shapes in the canonical order the pair functions are
 * written for (plane < mesh < convex < box < capsule < cylinder < sphere): e.g.
 * `planeBox(plane, box)`, `coreCore(convex, cylinder)`.
 */
export function shapeRank(type: ShapeType): number {
  switch (type) {
    case "plane":
      return 0;
    case "mesh":
      return 1;
    case "convex":
      return 2;
    case "box":
      return 3;
    case "capsule":
      return 4;
    case "cylinder":
      return 5;
    case "sphere":
      return 6;
  }
}

/** True for shapes with an unbounded extent (excluded from the broad phase). */
export function isUnbounded(shape: Shape): boolean {
  return shape.type === "plane";
}

/**
 * Sizes read by readRadius and readRadiusLength: radius (o) and half-length (o + 1) of a
 * round shape, for o = 0 (conventionally the pair's first shape) or 2 (its second).
 */
export const SIZES = new Float64Array(4);

/** The shape last passed to branchOn (compared, never used otherwise). */
const LAST_READ: { shape: Shape | null } = { shape: null };

/**
 * A branch that stores to an object, taken before a shape's double field is read (the
 * size reads below, worldPlane's offset; the convex cores read their sizes through these).
 *
 * Code that has just switched on a shape's `type` (aabbHalfWidths, or a pair function V8
 * inlines into narrowphase's dispatch) must not read the double fields itself: V8's
 * optimizing compiler takes the hidden classes the shape may have from that check of `type`
 * (all the shape classes), and a double field loaded from that union is a polymorphic load
 * (undefined for the classes without it) whose result is a new heap number, 16 bytes each
 * time. The inference stops where two branches meet (or at a call V8 does not inline), so
 * a read after this uses its own feedback; and through SIZES the values stay unboxed
 * whether or not V8 inlines the reading call.
 */
function branchOn(shape: Shape): void {
  if (LAST_READ.shape !== shape) LAST_READ.shape = shape;
}

/** Writes the radius of a sphere, capsule or cylinder into SIZES[o], read after branchOn. */
export function readRadius(shape: SphereShape | CapsuleShape | CylinderShape, o: number): void {
  branchOn(shape);
  SIZES[o] = shape.radius;
}

/** Radius (SIZES[o]) and half-length (SIZES[o + 1]) of a capsule or cylinder: see readRadius. */
export function readRadiusLength(shape: CapsuleShape | CylinderShape, o: number): void {
  branchOn(shape);
  SIZES[o] = shape.radius;
  SIZES[o + 1] = shape.halfLength;
}

/**
 * Writes the half-widths of the world axis-aligned bounding box of a bounded shape
 * placed at `pose` into ext[eo..eo+2]; the box is centred at pose.p for all bounded
 * shapes (the primitives are symmetric about their frame origin).
 *  - convex, mesh: their local box (centre c, half-widths h) widened to be centred at
 *    the origin, e_i = |(R c)_i| + Σ_j |R_ij| h_j;
 *  - sphere: r on every axis;
 *  - box: e_i = Σ_j |R_ij| h_j (the support of the box along world axis i);
 *  - capsule: e_i = |R_i2| L + r (segment of half-length L along local z, plus r);
 *  - cylinder: e_i = |R_i2| L + r √(1 − R_i2²) (the caps' discs, of normal z, reach
 *    r √(1 − z_i²) along world axis i).
 * Planes have no finite box; calling this for a plane writes +∞. Radii and half-lengths are
 * read through readRadius and readRadiusLength (why: there).
 */
export function aabbHalfWidths(shape: Shape, pose: WorldPose, ext: Float64Array, eo = 0): void {
  const R = pose.R;
  switch (shape.type) {
    case "sphere": {
      readRadius(shape, 0);
      ext[eo] = ext[eo + 1] = ext[eo + 2] = SIZES[0];
      return;
    }
    case "box": {
      const h = shape.halfExtents;
      for (let i = 0; i < 3; i++) {
        ext[eo + i] =
          Math.abs(R[3 * i]) * h[0] + Math.abs(R[3 * i + 1]) * h[1] + Math.abs(R[3 * i + 2]) * h[2];
      }
      return;
    }
    case "capsule": {
      readRadiusLength(shape, 0);
      const L = SIZES[1];
      const r = SIZES[0];
      for (let i = 0; i < 3; i++) ext[eo + i] = Math.abs(R[3 * i + 2]) * L + r;
      return;
    }
    case "cylinder": {
      readRadiusLength(shape, 0);
      const L = SIZES[1];
      const r = SIZES[0];
      for (let i = 0; i < 3; i++) {
        const z = R[3 * i + 2];
        ext[eo + i] = Math.abs(z) * L + r * Math.sqrt(Math.max(0, 1 - z * z));
      }
      return;
    }
    case "convex":
      localBoxHalfWidths(shape.hull.boxCenter, shape.hull.boxHalf, R, ext, eo);
      return;
    case "mesh":
      localBoxHalfWidths(shape.mesh.boxCenter, shape.mesh.boxHalf, R, ext, eo);
      return;
    case "plane": {
      ext[eo] = ext[eo + 1] = ext[eo + 2] = Number.POSITIVE_INFINITY;
      return;
    }
  }
}

/** |(R c)_i| + Σ_j |R_ij| h_j into ext[eo + i] (aabbHalfWidths). */
function localBoxHalfWidths(
  c: Float64Array,
  h: Float64Array,
  R: Float64Array,
  ext: Float64Array,
  eo: number,
): void {
  for (let i = 0; i < 3; i++) {
    const r0 = R[3 * i];
    const r1 = R[3 * i + 1];
    const r2 = R[3 * i + 2];
    ext[eo + i] =
      Math.abs(r0 * c[0] + r1 * c[1] + r2 * c[2]) +
      Math.abs(r0) * h[0] +
      Math.abs(r1) * h[1] +
      Math.abs(r2) * h[2];
  }
}

/**
 * World AABB of a shape as [min, max] written into min[o..o+2] and max[o..o+2] (the
 * detector pads it by margin/2 itself, in its own loop: a double argument to this call,
 * which V8 does not inline there, would be boxed for every shape).
 */
export function worldAabb(
  shape: Shape,
  pose: WorldPose,
  min: Float64Array,
  max: Float64Array,
  o = 0,
): void {
  aabbHalfWidths(shape, pose, min, o);
  for (let i = 0; i < 3; i++) {
    const e = min[o + i];
    min[o + i] = pose.p[i] - e;
    max[o + i] = pose.p[i] + e;
  }
}

/**
 * World surface of a plane shape placed at `pose`: unit normal n_w = R n and offset
 * d_w = n_w·p + d, so that the surface is n_w·x = d_w and the solid is n_w·x ≤ d_w.
 * Writes [n_w, d_w] into out[o..o+3]. The offset is read after branchOn (why: there).
 */
export function worldPlane(shape: PlaneShape, pose: WorldPose, out: Float64Array, o = 0): void {
  const R = pose.R;
  const n = shape.normal;
  const n0 = n[0];
  const n1 = n[1];
  const n2 = n[2];
  const len = Math.sqrt(n0 * n0 + n1 * n1 + n2 * n2); // length3, written out
  const nx = n[0] / len;
  const ny = n[1] / len;
  const nz = n[2] / len;
  const wx = R[0] * nx + R[1] * ny + R[2] * nz;
  const wy = R[3] * nx + R[4] * ny + R[5] * nz;
  const wz = R[6] * nx + R[7] * ny + R[8] * nz;
  out[o] = wx;
  out[o + 1] = wy;
  out[o + 2] = wz;
  branchOn(shape);
  out[o + 3] = wx * pose.p[0] + wy * pose.p[1] + wz * pose.p[2] + shape.offset / len;
}
