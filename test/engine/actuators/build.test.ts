/**
 * createActuation (src/engine/actuators/build.ts) from schema-validated models: a
 * coordinate for each revolute and prismatic joint (none for a spherical one), a compliant
 * limit "<joint>:limits" for each joint with limits (given k and c kept), the actuators in
 * model order with their laws' gains, and the errors naming the actuator or the body.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { createActuation } from "../../../src/engine/actuators/build";
import { systemOf } from "./hinge";

const model = {
  gravity: [0, 0, 0],
  bodies: [
    { id: "a", mass: 1, inertia: [1, 1, 1], position: [0, 0, 0] },
    { id: "b", mass: 1, inertia: [1, 1, 1], position: [1, 0, 0] },
    { id: "c", mass: 1, inertia: [1, 1, 1], position: [2, 0, 0] },
  ],
  joints: [
    {
      id: "hinge",
      type: "revolute",
      a: { body: "ground" },
      b: { body: "a" },
      axis: [0, 0, 1],
      limits: { lower: -1, upper: 1, stiffness: 50, damping: 2 },
    },
    {
      id: "ball",
      type: "spherical",
      a: { body: "a", point: [0.5, 0, 0] },
      b: { body: "b", point: [-0.5, 0, 0] },
    },
    {
      id: "slide",
      type: "prismatic",
      a: { body: "b" },
      b: { body: "c" },
      axis: [1, 0, 0],
      limits: { lower: 0, upper: 0.5 },
    },
  ],
  actuators: [
    { id: "push", joint: "slide", type: "torque", effort: 2 },
    { id: "servo", joint: "hinge", type: "position", kp: 10, kd: 1, target: 0.5 },
    { id: "spin", joint: "hinge", type: "velocity", kv: 3, target: 1 },
  ],
  // the compliant limits' integrator (a limit's stiffness is refused with the others)
  solver: { integrator: "newmark" },
} as ModelInput;

describe("createActuation", () => {
  it("coordinates of revolute and prismatic joints, their limits, the actuators in model order", () => {
    const { system, spec } = systemOf(model);
    const act = createActuation(spec.joints, spec.actuators, system);
    expect([...act.coordinates.keys()]).toEqual(["hinge", "slide"]);
    expect(act.limits.map((l) => [l.id, l.lower, l.upper])).toEqual([
      ["hinge:limits", -1, 1],
      ["slide:limits", 0, 0.5],
    ]);
    expect([act.limits[0].stiffness, act.limits[0].damping]).toEqual([50, 2]);
    expect(act.limits[0].coordinate).toBe(act.coordinates.get("hinge"));
    expect(
      act.actuators.map((a) => [
        a.id,
        a.type,
        a.coordinate === act.coordinates.get(a.id === "push" ? "slide" : "hinge"),
      ]),
    ).toEqual([
      ["push", "torque", true],
      ["servo", "position", true],
      ["spin", "velocity", true],
    ]);
    // the laws got their gains: at the model pose (q = 0, q̇ = 0)
    const effort = act.actuators.map((a) => {
      a.applyForces(0);
      return a.effort;
    });
    expect(effort).toEqual([2, 10 * 0.5, 3 * 1]);
  });

  it("an actuator on a joint without a coordinate, and an unknown body, are named", () => {
    const { system, spec } = systemOf(model);
    const onBall = [{ ...spec.actuators[0], joint: "ball" }];
    expect(() => createActuation(spec.joints, onBall, system)).toThrow(
      /actuator "push": joint "ball" has no coordinate to act on/,
    );
    const lost = spec.joints.map((j) =>
      j.id === "hinge" ? { ...j, b: { ...j.b, body: "ghost" } } : j,
    );
    expect(() => createActuation(lost, [], system)).toThrow(/unknown body "ghost"/);
  });
});
