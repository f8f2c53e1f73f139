/**
 * ContactModel, the contact part of a simulation built from the model's `contact` block:
 * "nsc" makes a NonsmoothContact and no force effector, "smc" a compliant effector with
 * the step size; configure applies the solver settings and refuses nonsmooth contact with
 * an integrator without a velocity level; update applies PATCHes of the parameters (pair
 * restitution and friction, margin, behavior) and refuses to change the method or
 * collideJointed; compliant contact keeps no memory. No contact block: no model.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { CompliantContactEffector } from "../../../src/engine/contact/compliant";
import {
  ContactModel,
  type ContactSolverSettings,
  createContactModel,
} from "../../../src/engine/contact/contact-model";
import { NonsmoothContact } from "../../../src/engine/contact/nonsmooth-contact";
import { modelSystem } from "../../support/system";

function scene(contact: Record<string, unknown> | undefined) {
  return modelSystem({
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      { id: "ball", mass: 1, position: [0, 0, 0.5], shapes: [{ type: "sphere", radius: 0.1 }] },
    ],
    ...(contact ? { contact } : {}),
    solver: { integrator: "backward-euler", dt: 0.004 },
  } as ModelInput);
}

const settings = (over: Partial<ContactSolverSettings> = {}): ContactSolverSettings => ({
  integrator: "moreau-jean",
  dt: 0.004,
  contactSolver: "pgs",
  tolerance: 1e-8,
  maxIterations: null,
  projectionTolerance: 1e-6,
  projectionIterations: null,
  ...over,
});

describe("ContactModel", () => {
  it("no contact block: no contact model", () => {
    const { system, spec } = scene(undefined);
    expect(createContactModel(spec, settings(), system)).toBeUndefined();
    expect(() => new ContactModel(spec, settings(), system)).toThrow(
      /needs a model with a contact block/,
    );
  });

  it("nsc: a nonsmooth contact, no effector; configured only with a velocity-level integrator", () => {
    const { system, spec } = scene({ method: "nsc", restitution: 0.3 });
    const contact = createContactModel(spec, settings(), system) as ContactModel;
    expect(contact.method).toBe("nsc");
    expect(contact.nonsmooth).toBeInstanceOf(NonsmoothContact);
    expect(contact.compliant).toBeNull();
    expect(contact.effectors).toEqual([]);
    contact.configure(
      settings({ contactSolver: "apgd", tolerance: 1e-5, projectionTolerance: 1e-4 }),
    );
    const nsc = contact.nonsmooth as NonsmoothContact;
    expect(nsc.settings).toEqual({ solver: "apgd", maxIterations: null, tolerance: 1e-5 });
    expect(nsc.projection.settings).toEqual({ tolerance: 1e-4, maxIterations: null });
    for (const integrator of ["newmark", "generalized-alpha"] as const)
      expect(() => contact.configure(settings({ integrator }))).toThrow(
        `contact.method "nsc" needs a velocity-level integrator (moreau-jean, backward-euler or symplectic-euler); use "smc" with ${integrator}`,
      );
  });

  it("smc: a compliant effector with the step size; no memory", () => {
    const { system, spec } = scene({ method: "smc", behavior: { type: "linear", stiffness: 1e5 } });
    const contact = new ContactModel(spec, settings(), system);
    expect(contact.compliant).toBeInstanceOf(CompliantContactEffector);
    expect(contact.nonsmooth).toBeNull();
    expect(contact.effectors).toEqual([contact.compliant]);
    expect(contact.compliant?.stepSize).toBe(0.004);
    contact.configure(settings({ integrator: "newmark", dt: 0.001 }));
    expect(contact.compliant?.stepSize).toBe(0.001);
    expect(contact.exportMemory()).toBeNull();
    contact.update({
      margin: 0.03,
      behavior: { type: "linear", stiffness: 2e5, damping: 0, stepDamping: 0, perUnitArea: false },
    });
    expect(contact.compliant?.margin).toBe(0.03);
    // the new linear law: f = k·dist = 2e5 · (−1 mm) between the world and a ball
    const flat = { position: [0, 0, 0], body: -1, radius: Number.POSITIVE_INFINITY };
    const ball = { position: [0, 0, 0], body: 0, radius: 0.1 };
    const response = contact.compliant?.behavior.computeResponse(-0.001, flat, ball, [0, 0, 1], 0);
    expect(response?.force).toBeCloseTo(-200, 9);
  });

  it("update: pair parameters and margin change; the method and collideJointed do not", () => {
    const { system, spec } = scene({ method: "nsc", restitution: 0.3, friction: 0.1 });
    const contact = new ContactModel(spec, settings(), system);
    contact.update({
      restitution: 0.6,
      pairs: [{ bodies: ["ball", "floor"], friction: 0.8 }],
      margin: 0.02,
    });
    expect(contact.params.restitutionOf(0, 1)).toBe(0.6);
    expect(contact.params.frictionOf(1, 0)).toBe(0.8);
    expect(contact.nonsmooth?.margin).toBe(0.02);
    expect(() => contact.update({ method: "smc" })).toThrow(
      /contact.method cannot change in a session/,
    );
    expect(() => contact.update({ collideJointed: true })).toThrow(
      /contact.collideJointed cannot change in a session/,
    );
  });
});
