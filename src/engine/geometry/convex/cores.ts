/**
 * The cores the pair functions place, one of each kind per side of a pair (index 0 for
 * the pair's a, 1 for its b), shared by pairs/convex.ts, cylinder.ts and mesh.ts: the
 * engine is single-threaded (each worker thread has its own module instance), a pair
 * function places the cores it queries before the query, and no pair function runs
 * inside another. placeCore places the core of a shape.
 */

import type { WorldPose } from "../pose";
import type {
  BoxShape,
  CapsuleShape,
  ConvexHullShape,
  CylinderShape,
  SphereShape,
} from "../shapes";
import { BoxCore } from "./box-core";
import { CylinderCore } from "./cylinder-core";
import type { ConvexShape } from "./features";
import { HullCore } from "./hull-core";
import { PointCore } from "./point-core";
import { SegmentCore } from "./segment-core";
import { TriangleCore } from "./triangle-core";

export const BOX = [new BoxCore(), new BoxCore()];
export const CYLINDER = [new CylinderCore(), new CylinderCore()];
export const HULL = [new HullCore(), new HullCore()];
export const SEGMENT = [new SegmentCore(), new SegmentCore()];
/** A sphere's centre (always the pair's b: spheres come last in the canonical order). */
export const POINT = new PointCore();
/** The triangle of a mesh (always the pair's a). */
export const TRIANGLE = new TriangleCore();

/** The shapes with a convex core: all but the plane and the mesh. */
export type CoreShape = ConvexHullShape | BoxShape | CapsuleShape | CylinderShape | SphereShape;

/**
 * The core of shape s placed at pose p, on side `side` of its pair (0: a, 1: b): the hull,
 * the box, a capsule's axis segment or a sphere's centre (their radius the core's sweep),
 * the solid cylinder.
 */
export function placeCore(s: CoreShape, p: WorldPose, side: number): ConvexShape {
  switch (s.type) {
    case "convex":
      return HULL[side].place(p, s.hull);
    case "box":
      return BOX[side].place(p, s.halfExtents);
    case "capsule":
      return SEGMENT[side].place(p, s);
    case "cylinder":
      return CYLINDER[side].place(p, s);
    case "sphere":
      return POINT.place(p, s);
  }
}
