/**
 * Contact: collision geometry (./geometry), compliant contact behaviors and areas
 * (ArtiSynth ContactForceBehavior), the compliant contact effector (SMC), the nonsmooth
 * one-step contact problem of Moreau–Jean time stepping (NSC, Siconos), and the contact
 * model that wires either into a Simulation.
 */
export {
  boxVertexArea,
  computeContactAreas,
  convexHullArea2D,
  roundContactArea,
  surfaceRadius,
  vertexContactArea,
} from "./area";
export {
  type ContactBehavior,
  type ContactPoint,
  type ContactResponse,
  createContactBehavior,
  effectiveDamping,
  HertzContactBehavior,
  LinearContactBehavior,
  TableContactBehavior,
} from "./behaviors";
export { CompliantContactEffector } from "./compliant";
export { ContactModel, createContactModel } from "./contact-model";
export { ContactSet, tangentFrame } from "./contact-set";
export {
  ACTIVATION_GAMMA,
  ACTIVATION_TOLERANCE,
  DEFAULT_PROJECTION,
  NonsmoothContact,
  type NonsmoothContactSettings,
  type NonsmoothContactStats,
  type ProjectionSettings,
  WARM_START_RADIUS,
} from "./nonsmooth-contact";
export { createDetector, PairParameters, shapeInstances } from "./setup";
