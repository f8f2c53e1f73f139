/**
 * Convex hull pairs (the `convex` shape: hull.ts data, convex/hull-core.ts core). In
 * canonical order the hull is b against a plane or a mesh, else a.
 *
 *  - plane–convex, closed form as plane–box: every hull vertex v with gap
 *    g = n·(c + R v) − d below the margin, the 4 deepest kept (ties: lower vertex index
 *    first), point on the plane side as planeBox; feature: the vertex index (mixed above
 *    65535). A hull of a box's corners, listed in planeBox's vertex order (bit 0: +x,
 *    bit 1: +y, bit 2: +z), gives planeBox's contacts bit for bit: same arithmetic
 *    dc + Σ_j v_j (n·R_j), same selection.
 *  - a hull that is an axis-aligned box of its frame (ConvexHull.box) against a box or
 *    such a hull: box–box on that box, so a box given as the hull of its corners collides
 *    exactly as the box primitive;
 *  - convex against convex, box, capsule (its segment), cylinder and sphere (its centre):
 *    the cores through GJK/EPA, the normal polish and the feature manifolds
 *    (convex/pair.ts collideCores, the radii in RADII): face–face contacts are clipped
 *    polygons as box–box's, edges and vertices single contacts; feature ids as in
 *    convex/manifold.ts, mixed with the hull's codes where these exceed the primitive
 *    ranges.
 * Nothing allocates (the vertex scratch grows once to the largest hull).
 */

import type { ContactBuffer } from "../contact-buffer";
import { BoxCore } from "../convex/box-core";
import { CylinderCore } from "../convex/cylinder-core";
import { HullCore } from "../convex/hull-core";
import { collideCores, RADII } from "../convex/pair";
import { PointCore } from "../convex/point-core";
import { SegmentCore } from "../convex/segment-core";
import { CONTACT, PLANE, pushContactFromA } from "../helpers";
import type { ConvexHull } from "../hull";
import { WorldPose } from "../pose";
import type {
  BoxShape,
  CapsuleShape,
  ConvexHullShape,
  CylinderShape,
  PlaneShape,
  SphereShape,
} from "../shapes";
import { worldPlane } from "../shapes";
import { boxBox } from "./box-box";

const HULL_A = new HullCore();
const HULL_B = new HullCore();
const BOX = new BoxCore();
const SEGMENT = new SegmentCore();
const CYLINDER = new CylinderCore();
const POINT = new PointCore();

/** Gaps and vertex indices of planeConvex's candidates (grown to the largest hull). */
const SCRATCH = { gaps: new Float64Array(64), idx: new Int32Array(64) };

/** Most contacts of plane–convex (as plane–box). */
const PLANE_CONTACTS = 4;

/** Plane–convex (see the file comment). */
export function planeConvex(
  a: PlaneShape,
  pa: WorldPose,
  b: ConvexHullShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const hull = b.hull;
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pb.R;
  const c = pb.p;
  const x = hull.vertices;
  const V = hull.source.length;
  if (SCRATCH.gaps.length < V) {
    SCRATCH.gaps = new Float64Array(V);
    SCRATCH.idx = new Int32Array(V);
  }
  const gaps = SCRATCH.gaps;
  const idx = SCRATCH.idx;
  const dc = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3];
  // n·(R e_j): the plane normal in the hull's frame.
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
    const vx = c[0] + R[0] * s0 + R[1] * s1 + R[2] * s2;
    const vy = c[1] + R[3] * s0 + R[4] * s1 + R[5] * s2;
    const vz = c[2] + R[6] * s0 + R[7] * s1 + R[8] * s2;
    // The vertex is p_b; p_a = v − g n.
    CONTACT[0] = vx - g * nx;
    CONTACT[1] = vy - g * ny;
    CONTACT[2] = vz - g * nz;
    CONTACT[3] = nx;
    CONTACT[4] = ny;
    CONTACT[5] = nz;
    CONTACT[6] = g;
    const start = out.count;
    pushContactFromA(out, v & 0xffff);
    if (v > 0xffff) out.mixFeatures(start, v, 0);
  }
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
  HULL_A.place(pa, a.hull);
  HULL_B.place(pb, b.hull);
  RADII[0] = 0;
  RADII[1] = 0;
  collideCores(HULL_A, HULL_B, margin, out);
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
  HULL_A.place(pa, a.hull);
  BOX.place(pb, b.halfExtents);
  RADII[0] = 0;
  RADII[1] = 0;
  collideCores(HULL_A, BOX, margin, out);
}

/** Convex–capsule: the hull core and the capsule's segment, its radius added. */
export function convexCapsule(
  a: ConvexHullShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  HULL_A.place(pa, a.hull);
  SEGMENT.place(pb, b);
  RADII[0] = 0;
  RADII[1] = SEGMENT.size[1];
  collideCores(HULL_A, SEGMENT, margin, out);
}

/** Convex–cylinder: the hull core and the solid cylinder core. */
export function convexCylinder(
  a: ConvexHullShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  HULL_A.place(pa, a.hull);
  CYLINDER.place(pb, b);
  RADII[0] = 0;
  RADII[1] = 0;
  collideCores(HULL_A, CYLINDER, margin, out);
}

/** Convex–sphere: the hull core and the sphere's centre, its radius added. */
export function convexSphere(
  a: ConvexHullShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  HULL_A.place(pa, a.hull);
  POINT.place(pb, b);
  RADII[0] = 0;
  RADII[1] = POINT.size[0];
  collideCores(HULL_A, POINT, margin, out);
}
