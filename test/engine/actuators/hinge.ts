/**
 * The scene of the actuator tests: the rod pendulum of test/support/models.ts (mass M,
 * length L, pinned to the ground at the origin about y), without gravity, its joint
 * coordinate, actuators and compliant limits built by createActuation from the
 * schema-validated model, the limits' m̃ from its joint (constrainLimitInertias, as the
 * simulation's build; no Simulation: systemOf builds the bodies). setHinge turns the rod about the pivot to a known angle and rate, so
 * the coordinate's value and rate are known in closed form.
 */
import { Model, type ModelInput, type ModelSpec } from "../../../schemas/model";
import { type Actuation, createActuation } from "../../../src/engine/actuators/build";
import { constrainLimitInertias } from "../../../src/engine/actuators/joint-limit";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { BodySystem, updateDerived } from "../../../src/engine/model/body-system";
import { hangingChain, rodPendulum } from "../../support/models";
import { axisAngle, rotate } from "../../support/quat";
import { rigid } from "../forces/jacobian-check";

export const M = 1.2;
export const L = 0.8;
/** The rod's inertia about its centre for the y axis (kg·m²). */
export const I_CENTRE = (M * L * L) / 12;
/** Its inertia about the pivot at its end, I_CENTRE + M (L/2)² (kg·m²). */
export const I_PIVOT = (M * L * L) / 3;

export function hinge(o: { servo?: Record<string, unknown>; limits?: Record<string, number> }): {
  system: BodySystem;
  spec: ModelSpec;
  actuation: Actuation;
} {
  const { system, spec } = systemOf(
    // (generalized-alpha: the integrator whose compliant limits these tests build)
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      solver: { integrator: "generalized-alpha" },
      ...o,
    }),
  );
  const actuation = createActuation(spec.joints, spec.actuators, system);
  const joints = createConstraints(spec.joints, spec.motors, system, actuation.coordinates);
  constrainLimitInertias(actuation.limits, new ConstraintSet(system, joints));
  return { system, spec, actuation };
}

/**
 * The validated model and a body system of its bodies, all rigid with principal inertias
 * given as 3-vectors, at the model pose.
 */
export function systemOf(model: ModelInput): { system: BodySystem; spec: ModelSpec } {
  const spec = Model.parse(model);
  const bodies = spec.bodies.map((b) => {
    const [x, y, z] = b.inertia as [number, number, number];
    return rigid(b.id, b.mass ?? 0, [...b.position], {
      inertia: [x, 0, 0, 0, y, 0, 0, 0, z],
      orientation: [...b.orientation],
    });
  });
  return { system: new BodySystem(bodies), spec };
}

/**
 * Two links of 1 kg, principal inertias (0.1, 0.2, 0.3) kg·m² (the second link's I_yy
 * `secondIyy`), hanging from the ground by hinges j0 and j1 about y, without gravity: the
 * model and its body system (systemOf).
 */
export function twoLinkHinges(secondIyy = 0.2): { system: BodySystem; spec: ModelSpec } {
  const chain = hangingChain({
    joints: [
      { type: "revolute", axis: [0, 1, 0] },
      { type: "revolute", axis: [0, 1, 0] },
    ],
    mass: 1,
    inertia: [0.1, 0.2, 0.3],
  });
  // I_xx raised with I_yy so that the moments stay a body's (the largest at most the others' sum)
  chain.bodies[1].inertia = [Math.max(0.1, secondIyy), secondIyy, 0.3];
  return systemOf({ gravity: [0, 0, 0], ...chain });
}

/** The rod turned by θ (rad) about y around the pivot, turning at θ̇ (rad/s). */
export function setHinge(sys: BodySystem, theta: number, rate: number): void {
  const q = axisAngle([0, 1, 0], theta);
  const r = rotate(q, [L / 2, 0, 0]);
  sys.quat.set(q, 0);
  sys.pos.set(r, 0);
  sys.omega.set([0, rate, 0], 0);
  // v = ω × r with ω = θ̇ ŷ
  sys.vel.set([rate * r[2], 0, -rate * r[0]], 0);
  updateDerived(sys);
}
