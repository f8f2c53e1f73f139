/**
 * Collision detection layer (pure geometry): shapes, world poses and bounds, narrow
 * phase pair functions, sweep-and-prune broad phase and the CollisionDetector.
 */
export { type PairFilter, SweepAndPrune } from "./broadphase";
export { CollisionDetector, type CollisionOptions, type DetectionStats } from "./collide";
export { ContactBuffer, contactKey, FEATURE_RANGE } from "./contact-buffer";
export {
  boxCylinder,
  CYLINDER_FLUSH_SIN,
  capsuleCylinder,
  cylinderCylinder,
  cylinderSphere,
  planeCylinder,
  RIM_SAMPLES,
} from "./cylinder";
export {
  boxBox,
  boxCapsule,
  boxSphere,
  capsuleCapsule,
  capsuleSphere,
  collideShapes,
  planeBox,
  planeCapsule,
  planeSphere,
  sphereSphere,
} from "./narrowphase";
export { composePose, quatToMatrix, WorldPose } from "./pose";
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
