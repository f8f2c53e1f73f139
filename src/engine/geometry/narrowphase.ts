/**
 * Narrow phase: contact points between two placed shapes, and the conventions every pair
 * function follows.
 *
 * Every pair function appends to a ContactBuffer (for the pair set by out.setPair) the
 * contacts whose signed gap is below `margin`, each with
 *  - normal n: unit, world, pointing FROM the first shape (a) TO the second (b);
 *  - gap = (p_b − p_a)·n, metres, where p_a, p_b are the closest (or, when penetrating,
 *    the deepest) surface points of a and b: the signed distance along n, NEGATIVE when
 *    penetrating (the penetration depth is −gap; GJK/EPA's depth enters as gap = −depth);
 *  - point = (p_a + p_b)/2, the midpoint between the two surfaces;
 *  - feature: an integer below 65536 naming the features in contact (documented per
 *    function), so the same contact is recognized from step to step.
 * Reporting slightly separated contacts (0 ≤ gap < margin) lets the time stepping build
 * its active set from a predicted gap (Moreau–Jean: g + h·v_n ≤ 0).
 *
 * The pair functions are written for the canonical order plane < mesh < convex < box <
 * capsule < cylinder < sphere (`planeBox(plane, box)`, never `boxPlane`), one file per
 * family under pairs/: sphere.ts, capsule.ts, box.ts, box-box.ts, cylinder.ts, convex.ts
 * and mesh.ts; the pairs with no closed form go through the shapes' convex cores and the
 * generic machinery of convex/ (GJK, EPA, normal polish, feature clipping): convex.ts
 * coreCore, and mesh.ts meshCores triangle by triangle. Plane–mesh and mesh–mesh have no contacts. collideShapes()
 * takes any order, calls the pair function of PAIRS and negates the normals when it had
 * to swap. No array or object is
 * created per call: scratch storage is module-level Float64Arrays (single-threaded; each
 * worker thread has its own module instance), and values cross hot calls through them
 * rather than as double arguments, which V8 boxes when it does not inline the call.
 */

import type { ContactBuffer } from "./contact-buffer";
import { boxCapsule, boxSphere, planeBox } from "./pairs/box";
import { boxBox } from "./pairs/box-box";
import { capsuleCapsule, capsuleSphere, planeCapsule } from "./pairs/capsule";
import { convexBox, convexConvex, coreCore, planeConvex } from "./pairs/convex";
import { cylinderSphere, planeCylinder } from "./pairs/cylinder";
import { meshCores, meshSphere } from "./pairs/mesh";
import { planeSphere, sphereSphere } from "./pairs/sphere";
import type { WorldPose } from "./pose";
import { type Shape, type ShapeType, shapeRank } from "./shapes";

/** A pair function of the conventions above, for shapes a and b of these types. */
export type PairFunction<A extends Shape, B extends Shape> = (
  a: A,
  pa: WorldPose,
  b: B,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
) => void;

type ShapeOf<T extends ShapeType> = Extract<Shape, { type: T }>;

/**
 * The pair function of each pair of types in canonical order (rank(a) ≤ rank(b)); none
 * for plane–plane (two half-spaces), plane–mesh (both ground shapes) and mesh–mesh.
 */
const PAIRS: { [A in ShapeType]: { [B in ShapeType]?: PairFunction<ShapeOf<A>, ShapeOf<B>> } } = {
  plane: {
    convex: planeConvex,
    box: planeBox,
    capsule: planeCapsule,
    cylinder: planeCylinder,
    sphere: planeSphere,
  },
  mesh: {
    convex: meshCores,
    box: meshCores,
    capsule: meshCores,
    cylinder: meshCores,
    sphere: meshSphere,
  },
  convex: {
    convex: convexConvex,
    box: convexBox,
    capsule: coreCore,
    cylinder: coreCore,
    sphere: coreCore,
  },
  box: { box: boxBox, capsule: boxCapsule, cylinder: coreCore, sphere: boxSphere },
  capsule: { capsule: capsuleCapsule, cylinder: coreCore, sphere: capsuleSphere },
  cylinder: { cylinder: coreCore, sphere: cylinderSphere },
  sphere: { sphere: sphereSphere },
};

/**
 * PAIRS by rank, entry RANKS·rank(a) + rank(b) (null: no pair function): an array read
 * per call rather than two string-keyed reads. Each entry is PAIRS's function for the
 * types of those ranks, so calling it on shapes of those ranks is well typed.
 */
const TYPES = Object.keys(PAIRS) as ShapeType[];
const RANKS = TYPES.length;
const BY_RANK: (PairFunction<Shape, Shape> | null)[] = new Array(RANKS * RANKS).fill(null);
for (const ta of TYPES)
  for (const tb of TYPES)
    BY_RANK[RANKS * shapeRank(ta) + shapeRank(tb)] =
      (PAIRS[ta][tb] as PairFunction<Shape, Shape> | undefined) ?? null;

/**
 * Contacts between shape a at pose pa and shape b at pose pb (any types, any order),
 * appended to `out` for the pair set by out.setPair(). Normals point from a to b.
 * Returns the number of contacts added.
 */
export function collideShapes(
  a: Shape,
  pa: WorldPose,
  b: Shape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): number {
  const start = out.count;
  const ra = shapeRank(a.type);
  const rb = shapeRank(b.type);
  if (ra <= rb) {
    const pair = BY_RANK[RANKS * ra + rb];
    if (pair !== null) pair(a, pa, b, pb, margin, out);
  } else {
    const pair = BY_RANK[RANKS * rb + ra];
    if (pair !== null) pair(b, pb, a, pa, margin, out);
    out.negateNormals(start);
  }
  return out.count - start;
}
