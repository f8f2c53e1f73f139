/**
 * Collision detection layer (pure geometry): shapes, world poses and bounds, narrow
 * phase pair functions, sweep-and-prune broad phase and the CollisionDetector.
 */
export { type PairFilter, SweepAndPrune } from "./broadphase";
export { CollisionDetector, type CollisionOptions, type DetectionStats } from "./collide";
export { ContactBuffer, contactKey, FEATURE_RANGE } from "./contact-buffer";
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
