/**
 * The contact part of a simulation, built from a model's `contact` block:
 *  - "nsc": a NonsmoothContact (nonsmooth-contact.ts) stepped by the Moreau–Jean
 *    integrator (integrators/moreau-jean.ts); backward and symplectic Euler, θ-schemes with
 *    θ = 1, use the same step. Newmark with nonsmooth contact is rejected: its stored
 *    acceleration a_t would carry the impulse P/h into the next step's predictor.
 *  - "smc": a CompliantContactEffector (compliant.ts) added to the force effectors, so it
 *    works with every integrator, with its Jacobians in the implicit ones.
 * With fem bodies that collide, both take the contacts with their surface triangles
 * (fem-faces.ts: the vertices of the other fem bodies and the points of the rigid shapes
 * against the faces) besides the detector's.
 * The Simulation applies the solver settings through it (configure), hands its parts to
 * the integrator factory (integrators/factory.ts), asks it for the State's contacts
 * (report) and applies PATCHes of the contact parameters (update).
 */
import {
  type ContactSpec,
  DEFAULT_CONTACT_BEHAVIOR,
  type ModelSpec,
  type SolverSpec,
} from "../../../schemas/model";
import { isVelocityLevel } from "../dynamics/one-step-problem";
import type { ForceEffector } from "../forces/effector";
import type { CollisionDetector } from "../geometry/collide";
import type { BodySystem } from "../model/body-system";
import type { ContactMemory } from "../model/state-codec";
import type { NonsmoothSolverName } from "../solvers/nonsmooth/types";
import { createContactBehavior } from "./behaviors";
import { CompliantContactEffector } from "./compliant";
import { FemFaceContacts } from "./fem-faces";
import type { FemVertexContacts } from "./fem-vertices";
import { NonsmoothContact, type NonsmoothContactSettings } from "./nonsmooth-contact";
import type { ProjectionSettings } from "./projection";
import type { ContactReport } from "./report";
import { createDetector, jointedPairs, PairParameters } from "./setup";

/**
 * The solver settings contact reads, with the problem's defaults filled in
 * (simulation/solver-defaults.ts; null iterations: the budget of budget.ts).
 */
export interface ContactSolverSettings extends Pick<SolverSpec, "integrator" | "dt"> {
  contactSolver: NonsmoothSolverName;
  tolerance: number;
  maxIterations: number | null;
  projectionTolerance: number;
  projectionIterations: number | null;
}

function nscSettings(p: ContactSolverSettings): NonsmoothContactSettings {
  return { solver: p.contactSolver, maxIterations: p.maxIterations, tolerance: p.tolerance };
}

/** The position projection's settings (solver.projectionTolerance, projectionIterations). */
function projectionSettings(p: ContactSolverSettings): ProjectionSettings {
  return { tolerance: p.projectionTolerance, maxIterations: p.projectionIterations };
}

export class ContactModel {
  readonly method: "nsc" | "smc";
  readonly detector: CollisionDetector;
  readonly params: PairParameters;
  readonly nonsmooth: NonsmoothContact | null = null;
  readonly compliant: CompliantContactEffector | null = null;
  private spec: ContactSpec;

  constructor(
    model: ModelSpec,
    /** The model's solver settings resolved (solver-defaults.ts). */
    solver: ContactSolverSettings,
    readonly sys: BodySystem,
    /** The points of the fem surfaces that collide (fem-vertices.ts), if any. */
    vertices?: FemVertexContacts,
  ) {
    const spec = model.contact;
    if (!spec) throw new Error("ContactModel needs a model with a contact block");
    this.spec = { ...spec };
    this.method = spec.method;
    this.detector = createDetector(model, sys, vertices);
    this.params = new PairParameters(sys, spec);
    const surfaces =
      vertices !== undefined
        ? new FemFaceContacts(sys, vertices, jointedPairs(model, sys), this.detector.shapes)
        : null;
    const faces = surfaces?.active === true ? surfaces : null;
    if (spec.method === "nsc") {
      this.nonsmooth = new NonsmoothContact(
        sys,
        this.detector,
        this.params,
        spec.margin,
        nscSettings(solver),
        model.joints.length + model.motors.length > 0,
      );
      this.nonsmooth.faces = faces;
      if (vertices !== undefined) {
        const nodes = new Uint8Array(sys.numBodies);
        for (const b of vertices.bodies) for (const k of b.nodeBodies) nodes[k] = 1;
        this.nonsmooth.femNodes = nodes;
      }
    } else {
      this.compliant = new CompliantContactEffector(
        sys,
        this.detector,
        createContactBehavior(spec.behavior ?? DEFAULT_CONTACT_BEHAVIOR),
        spec.margin,
        this.params,
      );
      this.compliant.stepSize = model.solver.dt;
      this.compliant.vertexAreas = vertices ?? null;
      this.compliant.faces = faces;
    }
  }

  /** Force effectors to add to the model's (the compliant contact, for "smc"). */
  get effectors(): ForceEffector[] {
    return this.compliant ? [this.compliant] : [];
  }

  /**
   * Applies solver settings p: the compliant contact's step size, the nonsmooth contact's
   * solver and projection settings. Throws for nonsmooth contact with an integrator that
   * has no velocity level (newmark, generalized-alpha).
   */
  configure(p: ContactSolverSettings): void {
    if (this.compliant) {
      this.compliant.stepSize = p.dt;
      this.compliant.invalidateDetection();
      return;
    }
    if (!isVelocityLevel(p.integrator))
      throw new Error(
        `contact.method "nsc" needs a velocity-level integrator (moreau-jean, backward-euler or symplectic-euler); use "smc" with ${p.integrator}`,
      );
    const nsc = this.nonsmooth as NonsmoothContact;
    nsc.setSettings(nscSettings(p));
    nsc.projection.settings = projectionSettings(p);
  }

  /**
   * Snapshot hook (simulation/snapshot.ts MemoryExporter): the nonsmooth warm-start
   * impulses by contact key; compliant contact's friction history (its tangential springs'
   * displacements by contact key, compliant.ts), null without friction (its contacts are
   * detected again at each step start; the solve-matrix pattern is saved by the
   * simulation).
   */
  exportMemory(): ContactMemory | null {
    if (this.nonsmooth) return this.nonsmooth.exportMemory();
    return this.compliant?.exportHistory() ?? null;
  }

  importMemory(memory: ContactMemory): void {
    if (this.nonsmooth) this.nonsmooth.importMemory(memory);
    else this.compliant?.importHistory(memory);
  }

  /** The contacts for the State (NonsmoothContact.report / CompliantContactEffector.report). */
  report(out: ContactReport): void {
    if (this.nonsmooth) this.nonsmooth.report(out);
    else this.compliant?.report(out);
  }

  /**
   * PATCH of the contact parameters: restitution, friction, pairs (replacing the list),
   * margin and, for "smc", behavior (friction and behavior from the next step's start). The method and collideJointed cannot change in a
   * running session (they select the solver structure and the detector's exclusions).
   */
  update(patch: Partial<ContactSpec>): void {
    if (patch.method !== undefined && patch.method !== this.method)
      throw new Error(`contact.method cannot change in a session (it is "${this.method}")`);
    if (patch.collideJointed !== undefined && patch.collideJointed !== this.spec.collideJointed)
      throw new Error("contact.collideJointed cannot change in a session");
    const before = {
      restitution: this.spec.restitution,
      friction: this.spec.friction,
      pairs: this.spec.pairs,
    };
    this.params.set(patch);
    try {
      this.nonsmooth?.parametersChanged();
    } catch (err) {
      this.params.set(before);
      throw err;
    }
    if (patch.margin !== undefined) {
      if (this.nonsmooth) this.nonsmooth.margin = patch.margin;
      if (this.compliant) {
        this.compliant.margin = patch.margin;
        this.compliant.invalidateDetection();
      }
    }
    if (patch.behavior !== undefined && this.compliant)
      this.compliant.behavior = createContactBehavior(patch.behavior);
    // compliant friction's μ, k_t and c_t are the step's, taken at its detection: detected
    // again (at the same state) for the next step (the normal law reads its behavior at
    // every evaluation: a frictionless session's detections stay as they were)
    const frictionRead =
      patch.friction !== undefined ||
      patch.pairs !== undefined ||
      (patch.behavior !== undefined && this.params.anyFriction());
    if (this.compliant && frictionRead) this.compliant.invalidateDetection();
    this.spec = { ...this.spec, ...patch };
  }
}

/** The contact model of a validated model, or undefined when it has no contact block. */
export function createContactModel(
  model: ModelSpec,
  solver: ContactSolverSettings,
  sys: BodySystem,
  vertices?: FemVertexContacts,
): ContactModel | undefined {
  return model.contact ? new ContactModel(model, solver, sys, vertices) : undefined;
}
