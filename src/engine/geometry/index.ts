/**
 * Collision detection layer (pure geometry): shapes, world poses and bounds, narrow
 * phase pair functions, sweep-and-prune broad phase and the CollisionDetector.
 */
export { type PairFilter, SweepAndPrune } from "./broadphase";
export { CollisionDetector, type CollisionOptions, type DetectionStats } from "./collide";
export { ContactBuffer, contactKey, FEATURE_RANGE } from "./contact-buffer";
export { CYLINDER_FLUSH_SIN, RIM_SAMPLES } from "./cylinder";
export { collideShapes } from "./narrowphase";
export { boxCapsule, boxSphere, planeBox } from "./pairs/box";
export { boxBox } from "./pairs/box-box";
export { capsuleCapsule, capsuleSphere, planeCapsule } from "./pairs/capsule";
export { coreCore } from "./pairs/convex";
export { cylinderSphere, planeCylinder } from "./pairs/cylinder";
export { planeSphere, sphereSphere } from "./pairs/sphere";
export { composePose, WorldPose } from "./pose";
export {
  aabbHalfWidths,
  type BoxShape,
  type CapsuleShape,
  type CylinderShape,
  isUnbounded,
  type PlaneShape,
  type Shape,
  type ShapeInstance,
  type ShapeType,
  type SphereShape,
  shapeRank,
  worldAabb,
  worldPlane,
} from "./shapes";
