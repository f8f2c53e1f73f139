/**
 * The cores the pair functions place, one of each kind per side of a pair (index 0 for
 * the pair's a, 1 for its b), shared by pairs/convex.ts, cylinder.ts and mesh.ts: the
 * engine is single-threaded (each worker thread has its own module instance), a pair
 * function places the cores it queries before the query, and no pair function runs
 * inside another.
 */

import { BoxCore } from "./box-core";
import { CylinderCore } from "./cylinder-core";
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
