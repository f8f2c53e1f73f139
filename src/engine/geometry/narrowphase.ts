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
 * and mesh.ts, the last three on the generic convex machinery of convex/ (GJK, EPA,
 * normal polish, feature clipping). Plane–mesh and mesh–mesh have no contacts. collideShapes()
 * dispatches any order and negates the normals when it had to swap. No array or object is
 * created per call: scratch storage is module-level Float64Arrays (single-threaded; each
 * worker thread has its own module instance), and values cross hot calls through them
 * rather than as double arguments, which V8 boxes when it does not inline the call.
 */

import type { ContactBuffer } from "./contact-buffer";
import { boxCapsule, boxSphere, planeBox } from "./pairs/box";
import { boxBox } from "./pairs/box-box";
import { capsuleCapsule, capsuleSphere, planeCapsule } from "./pairs/capsule";
import {
  convexBox,
  convexCapsule,
  convexConvex,
  convexCylinder,
  convexSphere,
  planeConvex,
} from "./pairs/convex";
import {
  boxCylinder,
  capsuleCylinder,
  cylinderCylinder,
  cylinderSphere,
  planeCylinder,
} from "./pairs/cylinder";
import { meshBox, meshCapsule, meshConvex, meshCylinder, meshSphere } from "./pairs/mesh";
import { planeSphere, sphereSphere } from "./pairs/sphere";
import type { WorldPose } from "./pose";
import { type Shape, shapeRank } from "./shapes";

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
  if (shapeRank(a.type) <= shapeRank(b.type)) {
    dispatchOrdered(a, pa, b, pb, margin, out);
  } else {
    dispatchOrdered(b, pb, a, pa, margin, out);
    out.negateNormals(start);
  }
  return out.count - start;
}

/** Calls the pair function for shapes already in canonical order (rank(a) ≤ rank(b)). */
function dispatchOrdered(
  a: Shape,
  pa: WorldPose,
  b: Shape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  switch (a.type) {
    case "plane":
      switch (b.type) {
        case "plane":
          return; // two half-spaces: no point contact
        case "mesh":
          return; // a mesh against a half-space: not supported (both are ground shapes)
        case "convex":
          planeConvex(a, pa, b, pb, margin, out);
          return;
        case "box":
          planeBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          planeCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          planeCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          planeSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "mesh":
      switch (b.type) {
        case "convex":
          meshConvex(a, pa, b, pb, margin, out);
          return;
        case "box":
          meshBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          meshCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          meshCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          meshSphere(a, pa, b, pb, margin, out);
          return;
      }
      return; // mesh–mesh: not supported
    case "convex":
      switch (b.type) {
        case "convex":
          convexConvex(a, pa, b, pb, margin, out);
          return;
        case "box":
          convexBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          convexCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          convexCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          convexSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "box":
      switch (b.type) {
        case "box":
          boxBox(a, pa, b, pb, margin, out);
          return;
        case "capsule":
          boxCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          boxCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          boxSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "capsule":
      switch (b.type) {
        case "capsule":
          capsuleCapsule(a, pa, b, pb, margin, out);
          return;
        case "cylinder":
          capsuleCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          capsuleSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "cylinder":
      switch (b.type) {
        case "cylinder":
          cylinderCylinder(a, pa, b, pb, margin, out);
          return;
        case "sphere":
          cylinderSphere(a, pa, b, pb, margin, out);
          return;
      }
      return;
    case "sphere":
      if (b.type === "sphere") sphereSphere(a, pa, b, pb, margin, out);
      return;
  }
}
