/**
 * Convex hull pairs (the `convex` shape: hull.ts data, convex/hull-core.ts core). In
 * canonical order the hull is b against a plane or a mesh, else a.
 *
 *  - plane–convex, closed form as plane–box (helpers.ts planeVertices): every hull vertex
 *    v with gap g = n·(c + R v) − d below the margin, the 4 deepest kept (ties: lower
 *    vertex index first); feature: the vertex index (mixed above 65535). A hull of a
 *    box's corners, listed in planeBox's corner order (bit 0: +x, bit 1: +y, bit 2: +z),
 *    gives planeBox's contacts bit for bit: the same function on the same vertices.
 *  - a hull that is an axis-aligned box of its frame (ConvexHull.box) against a box or
 *    such a hull: box–box on that box, so a box given as the hull of its corners collides
 *    exactly as the box primitive;
 *  - convex against convex, box, capsule (its segment), cylinder and sphere (its centre):
 *    the cores through GJK/EPA, the normal polish and the feature manifolds
 *    (convex/pair.ts collideCores, the radii the cores' sweeps): face–face contacts are
 *    clipped polygons as box–box's, edges and vertices single contacts; feature ids as in
 *    convex/manifold.ts, mixed with the hull's codes where these exceed the primitive
 *    ranges.
 * Nothing allocates (planeVertices' scratch grows once to the largest hull).
 */

import type { ContactBuffer } from "../contact-buffer";
import { type CoreShape, placeCore } from "../convex/cores";
import { collideCores } from "../convex/pair";
import { MARGIN, PLANE, planeVertices } from "../helpers";
import type { ConvexHull } from "../hull";
import { WorldPose } from "../pose";
import type { BoxShape, ConvexHullShape, PlaneShape } from "../shapes";
import { worldPlane } from "../shapes";
import { boxBox } from "./box-box";

/** Plane–convex (see the file comment): the hull's vertices, helpers.ts planeVertices. */
export function planeConvex(
  a: PlaneShape,
  pa: WorldPose,
  b: ConvexHullShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  MARGIN[0] = margin;
  planeVertices(b.hull.vertices, b.hull.source.length, pb, out);
}

/** Poses of box-shaped hulls off their frame's origin (boxPose). */
const BOX_POSE_A = new WorldPose();
const BOX_POSE_B = new WorldPose();

/**
 * The pose of hull h's box (ConvexHull.box) when the hull is at `pose`: the pose itself
 * for a box centred on the frame origin, else moved to p + R c (into `scratch`).
 */
function boxPose(h: ConvexHull, pose: WorldPose, scratch: WorldPose): WorldPose {
  const box = h.box;
  if (box === null || box.centered) return pose;
  const c = box.center;
  const R = pose.R;
  scratch.R.set(R);
  for (let i = 0; i < 3; i++)
    scratch.p[i] = pose.p[i] + R[3 * i] * c[0] + R[3 * i + 1] * c[1] + R[3 * i + 2] * c[2];
  return scratch;
}

/**
 * Convex–convex: the two hull cores; two box-shaped hulls (ConvexHull.box) as box–box, so
 * that a box given by its corners collides exactly as the box primitive.
 */
export function convexConvex(
  a: ConvexHullShape,
  pa: WorldPose,
  b: ConvexHullShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const ba = a.hull.box;
  const bb = b.hull.box;
  if (ba !== null && bb !== null) {
    boxBox(
      ba.shape,
      boxPose(a.hull, pa, BOX_POSE_A),
      bb.shape,
      boxPose(b.hull, pb, BOX_POSE_B),
      margin,
      out,
    );
    return;
  }
  coreCore(a, pa, b, pb, margin, out);
}

/** Convex–box: the hull core and the box core (a box-shaped hull: box–box). */
export function convexBox(
  a: ConvexHullShape,
  pa: WorldPose,
  b: BoxShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const ba = a.hull.box;
  if (ba !== null) {
    boxBox(ba.shape, boxPose(a.hull, pa, BOX_POSE_A), b, pb, margin, out);
    return;
  }
  coreCore(a, pa, b, pb, margin, out);
}

/**
 * Two shapes through their convex cores (placeCore; convex/pair.ts collideCores: GJK/EPA,
 * the normal polish and the feature manifolds, a capsule's or sphere's radius the core's
 * sweep): convex–convex and convex–box but for box-shaped hulls, convex–capsule,
 * convex–cylinder, convex–sphere, and pairs/cylinder.ts's general pairs.
 */
export function coreCore(
  a: CoreShape,
  pa: WorldPose,
  b: CoreShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  MARGIN[0] = margin;
  collideCores(placeCore(a, pa, 0), placeCore(b, pb, 1), out);
}
