/**
 * Builds the constraints of a validated model: one per joint (model order), then one per
 * motor (model order), then one per mimic (model order of the mimicking joints, on the
 * joint coordinates `coordinates`, the simulation's own so the turns it counts apply). Attachment points and axes are read against the body system's
 * CURRENT configuration, which must be the model pose: axes are given in world
 * coordinates for it, distance lengths default to it and motors are zero in it.
 * Errors name the joint or motor id and the offending body or joint id.
 */
import type { JointSpec, MotorSpec } from "../../../schemas/model";
import type { BodySystem } from "../model/body-system";
import { compileTimeFunction } from "../model/time-function";
import type { Constraint } from "./constraint";
import { DistanceJoint } from "./distance";
import { FixedJoint } from "./fixed";
import type { JointCoordinate } from "./joint-coordinate";
import { MimicConstraint } from "./mimic";
import { PrismaticMotor, RevoluteMotor } from "./motor";
import type { Attachment } from "./pair-constraint";
import { PrismaticJoint } from "./prismatic";
import { RevoluteJoint } from "./revolute";
import { SphericalJoint } from "./spherical";

export class ConstraintBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConstraintBuildError";
  }
}

function attachment(
  sys: BodySystem,
  owner: string,
  end: { body?: string; point?: readonly number[] },
): Attachment {
  const id = end.body ?? "ground";
  const point = end.point ?? [0, 0, 0];
  if (id === "ground") return { body: -1, point };
  const b = sys.index.get(id);
  if (b === undefined) throw new ConstraintBuildError(`${owner} refers to unknown body "${id}"`);
  return { body: b, point };
}

export function createConstraints(
  joints: readonly JointSpec[],
  motors: readonly MotorSpec[],
  sys: BodySystem,
  coordinates: ReadonlyMap<string, JointCoordinate> = new Map(),
): Constraint[] {
  const out: Constraint[] = [];
  const byId = new Map<string, JointSpec>();
  for (const j of joints) {
    const owner = `joint "${j.id}"`;
    if (byId.has(j.id)) throw new ConstraintBuildError(`duplicate joint id "${j.id}"`);
    byId.set(j.id, j);
    const a = attachment(sys, owner, j.a);
    const b = attachment(sys, owner, j.b);
    if (a.body === b.body)
      throw new ConstraintBuildError(`${owner} joins body "${j.a.body ?? "ground"}" to itself`);
    const dynamic = (x: number) => x >= 0 && sys.dofOffset[x] >= 0;
    if (!dynamic(a.body) && !dynamic(b.body))
      throw new ConstraintBuildError(
        `${owner} joins "${j.a.body ?? "ground"}" and "${j.b.body ?? "ground"}", neither of which can move`,
      );
    try {
      switch (j.type) {
        case "spherical":
          out.push(new SphericalJoint(j.id, sys, a, b));
          break;
        case "revolute":
          out.push(new RevoluteJoint(j.id, sys, a, b, j.axis));
          break;
        case "prismatic":
          out.push(new PrismaticJoint(j.id, sys, a, b, j.axis));
          break;
        case "fixed":
          out.push(new FixedJoint(j.id, sys, a, b));
          break;
        case "distance":
          out.push(new DistanceJoint(j.id, sys, a, b, j.length));
          break;
        default: {
          const never: never = j;
          throw new ConstraintBuildError(`${owner}: unknown type ${(never as JointSpec).type}`);
        }
      }
    } catch (e) {
      if (e instanceof ConstraintBuildError) throw e;
      throw new ConstraintBuildError(`${owner}: ${(e as Error).message}`);
    }
  }
  for (const m of motors) {
    const owner = `motor "${m.id}"`;
    const j = byId.get(m.joint);
    if (!j) throw new ConstraintBuildError(`${owner} refers to unknown joint "${m.joint}"`);
    const a = attachment(sys, `joint "${j.id}"`, j.a);
    const b = attachment(sys, `joint "${j.id}"`, j.b);
    if ((m.angle === undefined) === (m.offset === undefined))
      throw new ConstraintBuildError(`${owner} must drive exactly one of angle or offset`);
    if (m.angle !== undefined) {
      if (j.type !== "revolute")
        throw new ConstraintBuildError(
          `${owner}: angle drives a revolute joint, "${j.id}" is ${j.type}`,
        );
      try {
        out.push(new RevoluteMotor(m.id, j.id, sys, a, b, j.axis, compileTimeFunction(m.angle)));
      } catch (e) {
        throw new ConstraintBuildError((e as Error).message);
      }
    } else if (m.offset !== undefined) {
      if (j.type !== "prismatic")
        throw new ConstraintBuildError(
          `${owner}: offset drives a prismatic joint, "${j.id}" is ${j.type}`,
        );
      out.push(new PrismaticMotor(m.id, j.id, sys, a, b, j.axis, compileTimeFunction(m.offset)));
    }
  }
  for (const j of joints) {
    if ((j.type !== "revolute" && j.type !== "prismatic") || !j.mimic) continue;
    const k = coordinates.get(j.id);
    const l = coordinates.get(j.mimic.joint);
    if (!k || !l)
      throw new ConstraintBuildError(
        `joint "${j.id}" mimics "${j.mimic.joint}": ${k ? `"${j.mimic.joint}"` : "it"} has no coordinate`,
      );
    out.push(new MimicConstraint(`${j.id}:mimic`, k, l, j.mimic.multiplier, j.mimic.offset));
  }
  return out;
}
