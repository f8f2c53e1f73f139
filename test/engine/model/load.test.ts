/**
 * loadModel validation: invalid engine input throws a ModelError whose message and issue
 * paths name the offending id.
 */
import { describe, expect, it } from "vitest";
import { loadModel, ModelError } from "../../../src/engine/index";

const ball = { id: "ball", mass: 1, shapes: [{ type: "sphere", radius: 0.1 }] };

function errorOf(model: unknown): ModelError {
  try {
    loadModel(model);
  } catch (e) {
    if (e instanceof ModelError) return e;
    throw e;
  }
  throw new Error("expected a ModelError");
}

describe("loadModel rejects invalid input, naming the offending id", () => {
  it("two motors on one joint, naming both", () => {
    const e = errorOf({
      bodies: [ball],
      joints: [
        {
          id: "j",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "ball", point: [0, 0, 1] },
          axis: [0, 1, 0],
        },
      ],
      motors: [
        { id: "m1", joint: "j", angle: 0 },
        { id: "m2", joint: "j", angle: { type: "linear", rate: 1 } },
      ],
    });
    expect(e.issues[0].path).toEqual(["motors", 1, "joint"]);
    expect(e.issues[0].message).toContain('"m2"');
    expect(e.issues[0].message).toContain('"m1"');
  });

  it("an unknown key anywhere in the model, named with its path (never silently dropped)", () => {
    const hinge = {
      id: "j",
      type: "revolute",
      a: { body: "ground" },
      b: { body: "ball", point: [0, 0, 1] },
      axis: [0, 1, 0],
    };
    const cases: [unknown, (string | number)[], string][] = [
      [{ bodies: [ball], colour: "red" }, [], "colour"],
      [{ bodies: [{ ...ball, spin: 3 }] }, ["bodies", 0], "spin"],
      [
        { bodies: [{ ...ball, shapes: [{ type: "sphere", radius: 0.1, r: 1 }] }] },
        ["bodies", 0, "shapes", 0],
        "r",
      ],
      [
        {
          bodies: [ball],
          joints: [{ ...hinge, limits: { lower: -1, upper: 1, bounce: 0.5 } }],
        },
        ["joints", 0, "limits"],
        "bounce",
      ],
      [
        {
          bodies: [ball],
          joints: [hinge],
          actuators: [{ id: "m", joint: hinge.id, type: "position", kp: 1, ki: 2 }],
        },
        ["actuators", 0],
        "ki",
      ],
      [
        { bodies: [ball], joints: [{ ...hinge, b: { body: "ball", pt: [0, 0, 1] } }] },
        ["joints", 0, "b"],
        "pt",
      ],
      [{ bodies: [ball], solver: { integrator: "newmark", rho: 0.5 } }, ["solver"], "rho"],
      [
        { bodies: [ball], contact: { method: "nsc", restitutoin: 0.5 } },
        ["contact"],
        "restitutoin",
      ],
      [
        {
          bodies: [ball],
          forces: [
            { id: "g", type: "pointForce", at: { body: "ball" }, force: [0, 0, 1], extra: 1 },
          ],
        },
        ["forces", 0],
        "extra",
      ],
    ];
    for (const [model, path, key] of cases) {
      const e = errorOf(model);
      expect(e.issues[0].path).toEqual(path);
      expect(e.issues[0].message).toContain(`"${key}"`);
      expect(e.message).toContain(key);
    }
  });

  it("non-positive mass", () => {
    const e = errorOf({ bodies: [{ ...ball, id: "heavy", mass: -1 }] });
    expect(e.issues[0].path).toEqual(["bodies", 0, "mass"]);
    const e2 = errorOf({ bodies: [{ id: "nomass", kind: "particle" }] });
    expect(e2.message).toMatch(/"nomass"/);
  });
  it("non-positive-definite inertia", () => {
    const e = errorOf({
      bodies: [
        {
          id: "wobbly",
          mass: 1,
          inertia: [
            [1, 2, 0],
            [2, 1, 0],
            [0, 0, 1],
          ],
        },
      ],
    });
    expect(e.message).toMatch(/"wobbly".*positive definite/);
    expect(e.issues[0].path).toEqual(["bodies", 0, "inertia"]);
  });
  it("principal moments breaking the triangle inequality, given or as a full tensor's eigenvalues", () => {
    // I = tr(S)·1 − S with S = ∫ r rᵀ dm ⪰ 0, so each principal moment is at most the sum of
    // the other two: [1, 1, 5] is no body's (it was accepted, being positive definite)
    const e = errorOf({ bodies: [{ id: "impossible", mass: 1, inertia: [1, 1, 5] }] });
    expect(e.issues[0].path).toEqual(["bodies", 0, "inertia"]);
    expect(e.issues[0].message).toMatch(
      /^body "impossible": .*\[1, 1, 5\].*triangle inequality \(5 > 1 \+ 1\)/,
    );
    // the same moments [1, 2, 5] turned by 0.3 rad about x: R diag(1, 2, 5) Rᵀ
    const [c, s] = [Math.cos(0.3), Math.sin(0.3)];
    const turned = [
      [1, 0, 0],
      [0, 2 * c * c + 5 * s * s, (2 - 5) * c * s],
      [0, (2 - 5) * c * s, 2 * s * s + 5 * c * c],
    ];
    const f = errorOf({ bodies: [{ ...ball }, { id: "tilted", mass: 1, inertia: turned }] });
    expect(f.issues[0].path).toEqual(["bodies", 1, "inertia"]);
    expect(f.issues[0].message).toMatch(/"tilted".*eigenvalues\) \[1, 2, 5\].*\(5 > 1 \+ 2\)/);
    // a flat body is on the bound (a square plate: [1, 1, 2]; rounded to 4 digits as well),
    // a rod's moments [1e-3, 1/12, 1/12] within it: accepted
    for (const inertia of [
      [1, 1, 2],
      [0.0833, 0.0833, 0.1667],
      [1e-3, 1 / 12, 1 / 12],
    ])
      expect(() => loadModel({ bodies: [{ id: "ok", mass: 1, inertia }] })).not.toThrow();
  });
  it("zero-norm quaternion", () => {
    const e = errorOf({ bodies: [{ ...ball, orientation: [0, 0, 0, 0] }] });
    expect(e.issues[0].path).toEqual(["bodies", 0, "orientation"]);
    expect(e.message).toMatch(/non-zero norm/);
  });
  it("a quaternion or a normal whose squares would overflow, naming the path", () => {
    // normalized with √(Σ q²): [1e300, 1e300, 0, 0] became zeros, and a plane normal of
    // 1e300 made the contact solve NaN at the first step without naming it
    const q = errorOf({ bodies: [{ ...ball, orientation: [1e300, 1e300, 0, 0] }] });
    expect(q.issues[0].path).toEqual(["bodies", 0, "orientation"]);
    expect(q.message).toMatch(/quaternion components must be within ±1e\+150/);
    const floor = { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1e300] }] };
    const n = errorOf({ bodies: [ball, floor] });
    expect(n.issues[0].path).toEqual(["bodies", 1, "shapes", 0, "normal"]);
    expect(n.message).toMatch(/vector components must be within ±1e\+150/);
    // large but fine: normalized as any other
    const fine = loadModel({ bodies: [{ ...ball, orientation: [1e150, 0, 0, 1e150] }] } as never);
    expect(fine.state().bodies[0].orientation[0]).toBeCloseTo(Math.SQRT1_2, 15);
  });
  it("unknown body id in a force and in a joint", () => {
    const e = errorOf({
      bodies: [ball],
      forces: [
        { id: "s1", type: "spring", a: { body: "ball" }, b: { body: "ghost" }, stiffness: 1 },
      ],
    });
    expect(e.message).toMatch(/force "s1" refers to unknown body "ghost"/);
    expect(e.issues[0].path).toEqual(["forces", 0, "b", "body"]);
    const j = errorOf({
      bodies: [ball],
      joints: [
        {
          id: "hinge",
          type: "revolute",
          a: { body: "nowhere" },
          b: { body: "ball" },
          axis: [0, 1, 0],
        },
      ],
    });
    expect(j.message).toMatch(/joint "hinge" refers to unknown body "nowhere"/);
  });
  it("duplicate ids", () => {
    const e = errorOf({ bodies: [ball, { ...ball }] });
    expect(e.message).toMatch(/duplicate id "ball"/);
  });
  it("a valid model loads with defaults filled in", () => {
    const sim = loadModel({ bodies: [ball] });
    expect(sim.model.solver.integrator).toBe("moreau-jean");
    expect(sim.state().bodies[0].orientation).toEqual([1, 0, 0, 0]);
  });
});
