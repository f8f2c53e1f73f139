/**
 * Consistent mass of the fem bodies (`mass: "consistent"`: the element mass matrix
 * ρV/20 (1 + δ_ab) I₃ instead of the lumped ρV/4). Closed forms:
 *  - it is exact for a velocity field linear within each element, so a box spinning at ω
 *    about its centre's z axis has ½ vᵀ M v = ½ I_z ω², I_z = m (a² + b²)/12, exactly;
 *    the lumped masses are not (they put the mass at the nodes);
 *  - its rows sum to the lumped masses, so a uniform translation has ½ m v² and the body
 *    falls at g: every node at z₀ − ½ g t² (Newmark's trapezoidal rule is exact for a
 *    constant acceleration);
 *  - only newmark and generalized-alpha solve with it: another integrator is refused at
 *    fem.<i>.mass, and a PATCH to one at solver.integrator.
 */
import { describe, expect, it } from "vitest";
import { Model } from "../../../../schemas/model";
import { loadModel, ParameterError } from "../../../../src/engine/index";

const [A, B, C] = [0.3, 0.2, 0.1];
const RHO = 700;
const M = RHO * A * B * C;

function box(mass: "lumped" | "consistent", gravity: [number, number, number] = [0, 0, 0]) {
  return loadModel({
    gravity,
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "box",
        box: { size: [A, B, C], resolution: [3, 2, 2], center: [0, 0, 1] },
        density: RHO,
        youngModulus: 1e6,
        mass,
      },
    ],
    solver: { integrator: "newmark", dt: 0.01 },
  });
}

/** Node velocities v = ω e_z × (x − c), c the box's centre (0, 0, 1). */
function spin(sim: ReturnType<typeof loadModel>, omega: number) {
  const s = sim.system;
  for (let b = 0; b < s.numBodies; b++) {
    if (!s.ids[b].startsWith("box/")) continue;
    s.vel[3 * b] = -omega * s.pos[3 * b + 1];
    s.vel[3 * b + 1] = omega * s.pos[3 * b];
    s.vel[3 * b + 2] = 0;
  }
}

describe("consistent mass", () => {
  it("kinetic energy of a spinning box: ½ I_z ω² exactly (lumped: not)", () => {
    const omega = 3;
    const exact = 0.5 * ((M * (A * A + B * B)) / 12) * omega * omega;
    const consistent = box("consistent");
    spin(consistent, omega);
    expect(Math.abs(consistent.state().energy.kinetic / exact - 1)).toBeLessThan(1e-13);
    const lumped = box("lumped");
    spin(lumped, omega);
    expect(Math.abs(lumped.state().energy.kinetic / exact - 1)).toBeGreaterThan(0.1);
  });

  it("a uniform translation has ½ m v²; under gravity every node falls at g", () => {
    const sim = box("consistent", [0, 0, -9.81]);
    const s = sim.system;
    const z0 = Array.from({ length: s.numBodies }, (_, b) => s.pos[3 * b + 2]);
    for (let b = 1; b < s.numBodies; b++) s.vel[3 * b] = 2;
    expect(sim.state().energy.kinetic / (0.5 * M * 4) - 1).toBeCloseTo(0, 13);
    for (let b = 1; b < s.numBodies; b++) s.vel[3 * b] = 0;
    sim.step(50);
    const t = 0.5;
    for (let b = 1; b < s.numBodies; b++)
      expect(Math.abs(s.pos[3 * b + 2] - (z0[b] - 0.5 * 9.81 * t * t))).toBeLessThan(1e-12);
  });

  it("is refused with an integrator that solves with diagonal masses only", () => {
    const r = Model.safeParse({
      bodies: [{ id: "wall", fixed: true }],
      fem: [
        {
          id: "box",
          box: { size: [A, B, C], resolution: [1, 1, 1] },
          density: RHO,
          youngModulus: 1e6,
          mass: "consistent",
        },
      ],
      solver: { integrator: "moreau-jean" },
    });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [
        "fem.0.mass",
        'fem "box": a consistent mass needs integrator newmark or generalized-alpha (solver.integrator is "moreau-jean")',
      ],
    ]);
    const sim = box("consistent");
    expect(() => sim.update({ solver: { integrator: "backward-euler" } })).toThrow(ParameterError);
    try {
      sim.update({ solver: { integrator: "backward-euler" } });
    } catch (err) {
      expect((err as ParameterError).issues[0].path).toEqual(["solver", "integrator"]);
    }
    expect(sim.solver.integrator).toBe("newmark");
  });
});
