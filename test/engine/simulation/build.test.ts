/**
 * From a model to a Simulation (src/engine/simulation/build.ts): ModelError with the
 * schema's paths; the bodies as the model gives them — a principal inertia (3-vector) as a
 * diagonal, a full 3×3 kept, a solid box's inertia from its shape when none is given
 * (m/12 (b² + c²), … with b, c its edge lengths), fixed bodies; fem nodes appended after
 * the bodies with their lumped masses; the pieces assembled (gravity acts on every dynamic
 * body: one step of the default scheme from rest moves a body by the closed form).
 */
import { describe, expect, it } from "vitest";
import { Model } from "../../../schemas/model";
import { buildSimulation, loadModel, ModelError } from "../../../src/engine/simulation/build";
import { unitTetFem } from "../../support/fem";

function modelIssues(json: unknown) {
  try {
    loadModel(json);
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toMatch(/^invalid model: /);
    return (err as ModelError).issues;
  }
  throw new Error("accepted");
}

describe("loadModel and buildSimulation", () => {
  it("ModelError names the offending field by its path", () => {
    expect(modelIssues({ bodies: [{ id: "a", mass: -1 }] })[0].path).toEqual(["bodies", 0, "mass"]);
    expect(
      modelIssues({ bodies: [{ id: "a", mass: 1 }], joints: [{ id: "j", type: "weld" }] })[0].path,
    ).toEqual(["joints", 0, "type"]);
    expect(modelIssues("not a model").length).toBeGreaterThan(0);
  });

  it("what a body's kind would drop is refused with its path: a fixed body's motion, a particle's rotation", () => {
    const paths = (bodies: Record<string, unknown>[]) =>
      modelIssues({ bodies: [...bodies, { id: "ok", mass: 1, inertia: [1, 1, 1] }] }).map((i) =>
        i.path.join("."),
      );
    expect(
      paths([
        { id: "f", fixed: true, velocity: [1, 0, 0], angularVelocity: [0, 0, 2] },
        {
          id: "p",
          kind: "particle",
          mass: 1,
          orientation: [0, 0, 0, 1],
          angularVelocity: [0, 0, 5],
          inertia: [1, 1, 1],
        },
      ]),
    ).toEqual([
      "bodies.0.velocity",
      "bodies.0.angularVelocity",
      "bodies.1.orientation",
      "bodies.1.angularVelocity",
      "bodies.1.inertia",
    ]);
    // at rest, identity and no inertia: taken
    expect(() =>
      loadModel({
        bodies: [
          { id: "f", fixed: true, velocity: [0, 0, 0] },
          { id: "p", kind: "particle", mass: 1, orientation: [1, 0, 0, 0] },
        ],
      }),
    ).not.toThrow();
  });

  it("the loaded model is frozen: a snapshot's model cannot change the simulation's", () => {
    const json = {
      gravity: [0, 0, -9.81],
      bodies: [{ id: "p", kind: "particle", mass: 2, position: [0, 0, 1] }],
    };
    const sim = loadModel(json);
    const snap = sim.snapshot();
    expect(snap.model).toBe(sim.model);
    expect(() => {
      (snap.model.bodies[0] as { mass?: number }).mass = 5;
    }).toThrow(TypeError);
    expect(() => {
      (snap.model.gravity as number[])[2] = 0;
    }).toThrow(TypeError);
    sim.step(10);
    // the fall under g as loaded: the default θ = ½ is exact for a constant force,
    // z = z0 − g t²/2
    const t = 10 * sim.solver.dt;
    expect(sim.state().bodies[0].position[2]).toBeCloseTo(1 - 0.5 * 9.81 * t * t, 12);
    // the caller's input is the caller's: zod made the copy that is frozen
    expect(Object.isFrozen(json)).toBe(false);
  });

  it("inertias: a 3-vector as diag, a 3×3 kept, a box's from its shape; fem nodes after the bodies", () => {
    const m = 3;
    const [a, b, c] = [0.2, 0.4, 1.0]; // edge lengths
    const sim = buildSimulation(
      Model.parse({
        gravity: [0, 0, 0],
        bodies: [
          { id: "diag", mass: 1, inertia: [1, 2, 3] },
          {
            id: "full",
            mass: 1,
            inertia: [
              [2, 0.1, 0],
              [0.1, 2, 0.2],
              [0, 0.2, 2],
            ],
          },
          { id: "box", mass: m, shapes: [{ type: "box", halfExtents: [a / 2, b / 2, c / 2] }] },
          { id: "base", fixed: true, position: [0, 0, -1] },
        ],
        fem: [unitTetFem()],
      }),
    );
    const s = sim.system;
    expect(s.ids).toEqual(["diag", "full", "box", "base", "tet/0", "tet/1", "tet/2", "tet/3"]);
    expect(Array.from(s.inertiaBody.subarray(0, 9))).toEqual([1, 0, 0, 0, 2, 0, 0, 0, 3]);
    expect(Array.from(s.inertiaBody.subarray(9, 18))).toEqual([2, 0.1, 0, 0.1, 2, 0.2, 0, 0.2, 2]);
    const box = Array.from(s.inertiaBody.subarray(18, 27));
    const expected = [
      (m / 12) * (b * b + c * c),
      0,
      0,
      0,
      (m / 12) * (a * a + c * c),
      0,
      0,
      0,
      (m / 12) * (a * a + b * b),
    ];
    expect(box).toEqual(expected.map((v) => expect.closeTo(v, 13)));
    expect(s.block[3]).toBe(-1); // fixed: no dofs
    for (let k = 4; k < 8; k++) expect(s.mass[k]).toBeCloseTo(600 / 24, 12);
  });

  it("the pieces are assembled: a body released in gravity falls by g h² in one step of symplectic Euler", () => {
    const h = 0.01;
    const sim = loadModel({
      bodies: [{ id: "ball", mass: 2, inertia: [1, 1, 1], position: [0, 0, 5] }],
      solver: { integrator: "symplectic-euler", dt: h },
    });
    sim.step(1);
    // v₁ = −g h, z₁ = z₀ + h v₁
    expect(sim.system.vel[2]).toBeCloseTo(-9.81 * h, 14);
    expect(sim.system.pos[2]).toBeCloseTo(5 - 9.81 * h * h, 14);
  });
});
