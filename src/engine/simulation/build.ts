/**
 * loadModel: validate a JSON model with the schema (schemas/model.ts) and build the
 * simulation. Every validation failure becomes a ModelError listing zod's issue paths
 * and messages, which name the offending body, force or joint id.
 */

import { issuesOf, issuesSummary } from "../../../schemas/issues";
import { Model, type ModelSpec } from "../../../schemas/model";
import { createActuation } from "../actuators/build";
import { constrainLimitInertias } from "../actuators/joint-limit";
import { createConstraints } from "../constraints/build";
import { ConstraintSet } from "../constraints/constraint-set";
import { createContactModel } from "../contact/contact-model";
import { femVertexContacts } from "../contact/fem-vertices";
import { createForceEffectors } from "../forces/build";
import {
  createFemEffectors,
  femAttachmentJoints,
  femBodyInits,
  prepareFem,
} from "../forces/fem/build";
import { type BodyInit, BodySystem } from "../model/body-system";
import { inertiaFromShapes } from "../model/inertia";
import { deepFreeze, withoutNegativeZeros } from "./json-values";
import { Simulation } from "./simulation";
import { contactSize, resolveSolver } from "./solver-defaults";

export interface ModelIssue {
  path: (string | number)[];
  message: string;
}

export class ModelError extends Error {
  constructor(readonly issues: ModelIssue[]) {
    super(`invalid model: ${issuesSummary(issues, 5)}`);
    this.name = "ModelError";
  }
}

/**
 * Validates `json` as a Model and returns a ready Simulation at t = 0. The validated model
 * (a copy zod made) is frozen, deeply: the simulation holds it and hands it out as it is
 * (Simulation.model, snapshots), so that nothing, here or in an embedding program, can
 * change the model of a running simulation behind its back.
 */
export function loadModel(json: unknown): Simulation {
  const parsed = Model.safeParse(json);
  if (!parsed.success) throw new ModelError(issuesOf(parsed.error));
  return buildSimulation(deepFreeze(parsed.data));
}

/** Builds a simulation from an already validated model (a −0 in it taken as +0). */
export function buildSimulation(validated: ModelSpec): Simulation {
  const model = withoutNegativeZeros(validated);
  // fem bodies: their nodes are particles after the model's bodies (forces/fem/build.ts)
  const fem = prepareFem(model.fem ?? []);
  const system = new BodySystem([...model.bodies.map(bodyInit), ...femBodyInits(fem)]);
  const size = contactSize(model);
  // the settings as the engine reads them, defaults filled in (Simulation resolves them
  // again, and after every PATCH)
  const solver = resolveSolver(model.solver, size, model.gravity);
  const { effectors, gravity } = createForceEffectors(
    model.forces,
    system,
    model.gravity,
    solver.gyroscopicJacobian,
  );
  effectors.push(...createFemEffectors(fem, system));
  const joints = [...model.joints, ...femAttachmentJoints(fem, system)];
  const actuation = createActuation(model.joints, model.actuators, system);
  const constraints = new ConstraintSet(
    system,
    createConstraints(joints, model.motors, system, actuation.coordinates),
  );
  constrainLimitInertias(actuation.limits, constraints);
  effectors.push(...actuation.actuators, ...actuation.limits);
  const contact = createContactModel(
    model,
    solver,
    system,
    model.contact ? femVertexContacts(fem, system) : undefined,
  );
  if (contact) effectors.push(...contact.effectors);
  return new Simulation({
    model,
    system,
    effectors,
    constraints,
    contact,
    actuation,
    contactSize: size,
    setGravity: (g) => gravity.setGravity(g),
  });
}

function bodyInit(b: ModelSpec["bodies"][number]): BodyInit {
  const mass = b.mass ?? 0;
  let inertia: ArrayLike<number>;
  if (b.inertia === undefined)
    inertia =
      b.kind === "rigid" && !b.fixed
        ? inertiaFromShapes(b.shapes, mass)
        : [1, 0, 0, 0, 1, 0, 0, 0, 1];
  else if (typeof b.inertia[0] === "number") {
    const [x, y, z] = b.inertia as [number, number, number];
    inertia = [x, 0, 0, 0, y, 0, 0, 0, z];
  } else inertia = (b.inertia as number[][]).flat();
  return {
    id: b.id,
    kind: b.kind,
    fixed: b.fixed,
    mass,
    inertia,
    position: b.position,
    orientation: b.orientation,
    velocity: b.velocity,
    angularVelocity: b.angularVelocity,
  };
}
