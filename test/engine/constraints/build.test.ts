/**
 * createConstraints: one constraint per joint (model order), then per motor, then per
 * mimic, of the joint's class and row count; and its errors, which name the joint or
 * motor and the offending body or joint.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import { ConstraintBuildError, createConstraints } from "../../../src/engine/constraints/build";
import { DistanceJoint } from "../../../src/engine/constraints/distance";
import { FixedJoint } from "../../../src/engine/constraints/fixed";
import { createJointCoordinate } from "../../../src/engine/constraints/joint-coordinate";
import { MimicConstraint } from "../../../src/engine/constraints/mimic";
import { PrismaticMotor, RevoluteMotor } from "../../../src/engine/constraints/motor";
import { PrismaticJoint } from "../../../src/engine/constraints/prismatic";
import { RevoluteJoint } from "../../../src/engine/constraints/revolute";
import { SphericalJoint } from "../../../src/engine/constraints/spherical";
import { mulberry32 } from "../../support/random";
import { randomBody, system } from "./helpers";

const r = mulberry32(5);
const sys = system([
  randomBody(r, "A", "rigid"),
  randomBody(r, "P", "particle"),
  randomBody(r, "F", "fixed"),
  randomBody(r, "B", "rigid"),
]);
const rev = (over: Partial<JointSpec> = {}) =>
  ({
    id: "hinge",
    type: "revolute",
    a: { body: "ground", point: [0, 0, 0] },
    b: { body: "A", point: [0, 0, 0] },
    axis: [0, 0, 1],
    ...over,
  }) as JointSpec;

describe("createConstraints", () => {
  it("joints in model order, then motors, then mimics; each of its class and row count", () => {
    const end = (body: string) => ({ body, point: [0.1, 0.2, 0.3] as [number, number, number] });
    const joints: JointSpec[] = [
      { id: "s", type: "spherical", a: end("ground"), b: end("A") },
      { id: "sl", type: "prismatic", a: end("A"), b: end("B"), axis: [1, 0, 0] },
      {
        id: "h",
        type: "revolute",
        a: end("F"),
        b: end("B"),
        axis: [0, 1, 0],
        mimic: { joint: "sl", multiplier: 2, offset: 0 },
      },
      { id: "w", type: "fixed", a: end("P"), b: end("B") },
      { id: "d", type: "distance", a: end("ground"), b: end("P"), length: 2 },
    ];
    const coordinates = new Map();
    for (const j of joints)
      if (j.type === "revolute" || j.type === "prismatic")
        coordinates.set(
          j.id,
          createJointCoordinate(
            sys,
            j,
            { body: sys.index.get(j.a.body as string) ?? -1, point: j.a.point },
            { body: sys.index.get(j.b.body as string) ?? -1, point: j.b.point },
          ),
        );
    const out = createConstraints(
      joints,
      [
        { id: "m2", joint: "h", angle: 0 },
        { id: "m1", joint: "sl", offset: 0 },
      ],
      sys,
      coordinates,
    );
    const classes = [
      SphericalJoint,
      PrismaticJoint,
      RevoluteJoint,
      FixedJoint,
      DistanceJoint,
      RevoluteMotor,
      PrismaticMotor,
      MimicConstraint,
    ];
    expect(out.map((c) => c.id)).toEqual(["s", "sl", "h", "w", "d", "m2", "m1", "h:mimic"]);
    for (const [i, c] of out.entries()) expect(c).toBeInstanceOf(classes[i]);
    // a particle end leaves the fixed joint its 3 point rows
    expect(out.map((c) => c.rows)).toEqual([3, 5, 5, 3, 1, 1, 1, 1]);
    expect((out[4] as DistanceJoint).length).toBe(2);
  });
});

describe("createConstraints errors name the joint and the body", () => {
  it("unknown body", () => {
    expect(() =>
      createConstraints([rev({ b: { body: "nope", point: [0, 0, 0] } })], [], sys),
    ).toThrow(/joint "hinge" refers to unknown body "nope"/);
  });
  it("a body joined to itself", () => {
    expect(() => createConstraints([rev({ a: { body: "A", point: [0, 0, 0] } })], [], sys)).toThrow(
      /joint "hinge" joins body "A" to itself/,
    );
  });
  it("no dynamic body", () => {
    expect(() => createConstraints([rev({ b: { body: "F", point: [0, 0, 0] } })], [], sys)).toThrow(
      /joint "hinge".*neither of which can move/,
    );
  });
  it("a duplicate joint id, a zero axis", () => {
    expect(() => createConstraints([rev(), rev()], [], sys)).toThrow(/duplicate joint id "hinge"/);
    expect(() =>
      createConstraints([rev({ axis: [0, 0, 0] } as Partial<JointSpec>)], [], sys),
    ).toThrow(/joint "hinge": axis must be a non-zero vector/);
  });
  it("unknown joint, wrong joint type, angle drive on a particle", () => {
    expect(() => createConstraints([rev()], [{ id: "m", joint: "x", angle: 1 }], sys)).toThrow(
      /motor "m" refers to unknown joint "x"/,
    );
    expect(() => createConstraints([rev()], [{ id: "m", joint: "hinge", offset: 1 }], sys)).toThrow(
      /motor "m": offset drives a prismatic joint, "hinge" is revolute/,
    );
    expect(() =>
      createConstraints(
        [rev({ b: { body: "P", point: [0, 0, 0] } })],
        [{ id: "m", joint: "hinge", angle: 1 }],
        sys,
      ),
    ).toThrow(/motor "m".*particle/);
    expect(() =>
      createConstraints([rev()], [{ id: "m", joint: "hinge", angle: 1, offset: 1 }], sys),
    ).toThrow(/motor "m" must drive exactly one of angle or offset/);
  });
  it("a mimic whose joints have no coordinate", () => {
    const mimic = rev({
      mimic: { joint: "other", multiplier: 1, offset: 0 },
    } as Partial<JointSpec>);
    expect(() => createConstraints([mimic], [], sys)).toThrow(ConstraintBuildError);
    expect(() => createConstraints([mimic], [], sys)).toThrow(
      /joint "hinge" mimics "other": it has no coordinate/,
    );
  });
});
