/** createForceEffectors: id resolution, defaults, the implicit effectors, errors. */
import { describe, expect, it } from "vitest";
import { Force, type ForceSpec } from "../../../schemas/model";
import { createForceEffectors } from "../../../src/engine/forces/build";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { GyroscopicEffector } from "../../../src/engine/forces/gyroscopic";
import { ParticleSpringSet } from "../../../src/engine/forces/particle-springs";
import { clearForces } from "../../../src/engine/model/body-system";
import { particle, rigid, system } from "./jacobian-check";

const parse = (f: unknown): ForceSpec => Force.parse(f);

describe("createForceEffectors", () => {
  it("builds every force type, adds gravity and the gyroscopic term", () => {
    const sys = system(particle("p", 1, [1, 0, 0]), rigid("r", 2, [0, 0, 1]));
    const forces = [
      parse({
        id: "s",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground", point: [0, 0, 0] },
        stiffness: 10,
      }),
      parse({
        id: "pf",
        type: "pointForce",
        at: { body: "r", point: [0, 1, 0] },
        force: [1, 0, 0],
      }),
      parse({
        id: "fs",
        type: "frameSpring",
        a: { body: "r" },
        b: { body: "p" },
        stiffness: 1,
        rotaryStiffness: 1,
      }),
      parse({ id: "d", type: "damper", linear: 0.1 }),
    ];
    const { effectors, gravity } = createForceEffectors(forces, sys, [0, 0, -9.81], true);
    // the particle–ground spring joins the vectorized set of translational springs
    expect(effectors.map((e) => e.id)).toEqual([
      "gravity",
      "gyroscopic",
      "particle-springs",
      "pf",
      "fs",
      "d",
    ]);
    expect(effectors[0]).toBe(gravity);
    expect(gravity).toBeInstanceOf(GravityEffector);
    expect(effectors[1]).toBeInstanceOf(GyroscopicEffector);
    expect(effectors[2]).toBeInstanceOf(ParticleSpringSet);
    // default rest length: the initial distance |(1,0,0)| = 1, so no force initially
    const s = effectors[2];
    expect(s.potentialEnergy()).toBe(0);
    clearForces(sys);
    s.applyForces(0);
    expect(Array.from(sys.force)).toEqual([0, 0, 0, 0, 0, 0]);
    gravity.setGravity([0, -1, 0]);
    clearForces(sys);
    gravity.applyForces(0);
    expect(Array.from(sys.force)).toEqual([0, -1, 0, 0, -2, 0]);
  });

  it("explicit rest length is kept; no gyroscopic term without dynamic rigid bodies", () => {
    const sys = system(particle("p", 1, [3, 0, 0]), rigid("base", 1, [0, 0, 0], { fixed: true }));
    const { effectors } = createForceEffectors(
      [
        parse({
          id: "s",
          type: "spring",
          a: { body: "p" },
          b: { body: "base" },
          stiffness: 2,
          restLength: 1,
        }),
      ],
      sys,
      [0, 0, 0],
      true,
    );
    expect(effectors.map((e) => e.id)).toEqual(["gravity", "particle-springs"]);
    clearForces(sys);
    effectors[1].applyForces(0);
    expect(Array.from(sys.force.subarray(0, 3))).toEqual([-4, 0, 0]);
  });

  it("an unknown body id names the force and the body", () => {
    const sys = system(particle("p", 1, [0, 0, 0]));
    const cases: [unknown, string, string][] = [
      [
        { id: "spring1", type: "spring", a: { body: "p" }, b: { body: "nobody" }, stiffness: 1 },
        "spring1",
        "nobody",
      ],
      [
        { id: "push", type: "pointForce", at: { body: "ghost" }, force: [0, 0, 1] },
        "push",
        "ghost",
      ],
      [
        {
          id: "fs9",
          type: "frameSpring",
          a: { body: "missing" },
          b: { body: "p" },
          stiffness: 1,
          rotaryStiffness: 1,
        },
        "fs9",
        "missing",
      ],
      [{ id: "damp", type: "damper", bodies: ["p", "phantom"], linear: 1 }, "damp", "phantom"],
    ];
    for (const [spec, forceId, bodyId] of cases) {
      let message = "";
      try {
        createForceEffectors([parse(spec)], sys, [0, 0, -9.81], true);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain(`"${forceId}"`);
      expect(message).toContain(`"${bodyId}"`);
    }
  });
});
