/**
 * Builds the joint coordinates, actuators and compliant joint limits of a validated
 * model. Every revolute joint between oriented ends and every prismatic joint gets a
 * coordinate (joint-coordinate.ts): State reports it, sensors read it, actuators and
 * limits act along it. Read against the body system's CURRENT configuration, which must
 * be the model pose (the coordinates are zero in it). The effectors are returned in
 * model order: actuators, then limits.
 */
import type { ActuatorSpec, JointSpec } from "../../../schemas/model";
import { createJointCoordinate, type JointCoordinate } from "../constraints/joint-coordinate";
import type { BodySystem } from "../model/body-system";
import { compileTimeFunction } from "../model/time-function";
import { JointActuator } from "./actuator";
import { CompliantJointLimit } from "./joint-limit";

export interface Actuation {
  /** Joint id → its coordinate. */
  coordinates: Map<string, JointCoordinate>;
  actuators: JointActuator[];
  limits: CompliantJointLimit[];
}

export function createActuation(
  joints: readonly JointSpec[],
  actuators: readonly ActuatorSpec[],
  sys: BodySystem,
): Actuation {
  const coordinates = new Map<string, JointCoordinate>();
  const limits: CompliantJointLimit[] = [];
  const end = (e: { body: string; point: readonly number[] }) => {
    const b = e.body === "ground" ? -1 : sys.index.get(e.body);
    if (b === undefined) throw new Error(`unknown body "${e.body}"`);
    return { body: b, point: e.point };
  };
  for (const j of joints) {
    if (j.type !== "revolute" && j.type !== "prismatic") continue;
    const q = createJointCoordinate(sys, j, end(j.a), end(j.b));
    if (q === null) continue;
    coordinates.set(j.id, q);
    if (j.limits)
      limits.push(
        new CompliantJointLimit(sys, q, {
          id: `${j.id}:limits`,
          lower: j.limits.lower,
          upper: j.limits.upper,
          stiffness: j.limits.stiffness,
          damping: j.limits.damping,
        }),
      );
  }
  const out = actuators.map((a) => {
    const q = coordinates.get(a.joint);
    if (q === undefined)
      throw new Error(`actuator "${a.id}": joint "${a.joint}" has no coordinate to act on`);
    return new JointActuator(sys, q, {
      id: a.id,
      type: a.type,
      command: compileTimeFunction(a.type === "torque" ? a.effort : a.target),
      kp: a.type === "position" ? a.kp : 0,
      kd: a.type === "position" ? a.kd : a.type === "velocity" ? a.kv : 0,
      effortLimit: a.effortLimit ?? Number.POSITIVE_INFINITY,
    });
  });
  return { coordinates, actuators: out, limits };
}
