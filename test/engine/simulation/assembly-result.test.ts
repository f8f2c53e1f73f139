/**
 * The wire form of an assembly analysis (src/engine/simulation/assembly-result.ts), from a
 * hand-made analysis result on a particle on a unit link to the ground, a free rigid body
 * and a fixed one: each body's state from the system, its accelerations from the
 * generalized vector by its dofs (zeros for the fixed body, no angular part for the
 * particle), and the link's reaction on its body b, the constraint force −Gᵀλ: the
 * tension λ pulling the particle back along the link, −λ ê, no torque.
 */
import { describe, expect, it } from "vitest";
import type { JointSpec } from "../../../schemas/model";
import type { Assembly } from "../../../src/engine/analysis/assembly";
import { createConstraints } from "../../../src/engine/constraints/build";
import { ConstraintSet } from "../../../src/engine/constraints/constraint-set";
import { assemblyResultOut } from "../../../src/engine/simulation/assembly-result";
import { particle, rigid, system } from "../forces/jacobian-check";

function scene() {
  const sys = system(
    particle("bob", 2, [0.6, -0.8, 0]),
    rigid("r", 1, [0, 2, 0], { orientation: [0.8, 0.6, 0, 0], velocity: [1, 0, 0] }),
    rigid("f", 1, [5, 5, 5], { fixed: true }),
  );
  const link: JointSpec = {
    id: "link",
    type: "distance",
    a: { body: "ground", point: [0, 0, 0] },
    b: { body: "bob", point: [0, 0, 0] },
    length: 1,
  };
  return { sys, set: new ConstraintSet(sys, createConstraints([link], [], sys)) };
}

const analysis = (multipliers: Float64Array | null): Assembly => ({
  exitFlag: "REDUNDANT_CONSTRAINTS",
  iterations: 2,
  residualNorm: 1e-14,
  updateNorm: 3e-9,
  accelerationResidual: 4e-15,
  warnings: ["w"],
  accelerations: Float64Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9),
  multipliers,
});

describe("assemblyResultOut", () => {
  it("bodies: state and accelerations by dofs; the figures of the analysis", () => {
    const { sys, set } = scene();
    const out = assemblyResultOut(sys, set, analysis(null));
    expect(out.bodies.map((b) => b.id)).toEqual(["bob", "r", "f"]);
    expect(out.bodies[0]).toEqual({
      id: "bob",
      position: [0.6, -0.8, 0],
      orientation: [1, 0, 0, 0],
      velocity: [0, 0, 0],
      angularVelocity: [0, 0, 0],
      acceleration: [1, 2, 3],
      angularAcceleration: [0, 0, 0],
    });
    expect([out.bodies[1].orientation, out.bodies[1].velocity]).toEqual([
      [0.8, 0.6, 0, 0],
      [1, 0, 0],
    ]);
    expect([out.bodies[1].acceleration, out.bodies[1].angularAcceleration]).toEqual([
      [4, 5, 6],
      [7, 8, 9],
    ]);
    expect([out.bodies[2].acceleration, out.bodies[2].angularAcceleration]).toEqual([
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(out).toMatchObject({
      exitFlag: "REDUNDANT_CONSTRAINTS",
      iterations: 2,
      residualNorm: 1e-14,
      updateNorm: 3e-9,
      accelerationResidual: 4e-15,
      warnings: ["w"],
      reactions: [],
    });
  });

  it("reactions: the tension λ pulls the particle back along the link, −λ ê", () => {
    const { sys, set } = scene();
    const T = 7.5;
    const [r] = assemblyResultOut(sys, set, analysis(Float64Array.of(T))).reactions;
    expect(r.id).toBe("link");
    expect(r.multipliers).toEqual([T]);
    const e = [0.6, -0.8, 0];
    expect(r.force).toEqual(e.map((x) => expect.closeTo(-T * x, 13)));
    expect(r.torque).toEqual([0, 0, 0].map((x) => expect.closeTo(x, 13)));
  });
});
