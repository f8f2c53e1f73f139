/**
 * Run-time inputs on fem nodes: a node "<fem id>/<k>" is a particle, so an impulse kicks it
 * by Δv = J/m_k (m_k its lumped mass) and a bodyState input teleports it; a node the body
 * does not have, or an orientation for one, is refused naming the input's path.
 * Lumped masses of one cube cell (side a, five tetrahedra: four corner ones of a³/6 and a
 * central one of a³/3, each giving ρV/4 to its nodes): the corners 0, 3, 5, 6 belong to one
 * corner tetrahedron, m = ρa³/24; the corners 1, 2, 4, 7 to three and the central one,
 * m = ρ(3a³/6 + a³/3)/4 = 5ρa³/24.
 */
import { describe, expect, it } from "vitest";
import { InputsBody } from "../../../../schemas/input";
import { InputError, loadModel } from "../../../../src/engine/index";

const A = 0.1;
const RHO = 800;

function cube() {
  return loadModel({
    gravity: [0, 0, 0],
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "cube",
        box: { size: [A, A, A], resolution: [1, 1, 1] },
        density: RHO,
        youngModulus: 1e6,
      },
    ],
  });
}

describe("inputs on fem nodes", () => {
  it("an impulse kicks a node by J/m with its lumped mass; bodyState teleports it", () => {
    const sim = cube();
    const body = (k: number) => sim.state().bodies.find((b) => b.id === `cube/${k}`);
    sim.schedule(
      InputsBody.parse({
        inputs: [
          { type: "impulse", id: "cube/0", impulse: [0.002, 0, 0] },
          { type: "impulse", id: "cube/7", impulse: [0, 0, -0.005] },
          { type: "bodyState", id: "cube/3", position: [0.2, 0.1, 0], velocity: [0, 1, 0] },
        ],
      }).inputs,
    );
    expect(body(0)?.velocity[0]).toBeCloseTo(0.002 / ((RHO * A ** 3) / 24), 12);
    expect(body(7)?.velocity[2]).toBeCloseTo(-0.005 / ((5 * RHO * A ** 3) / 24), 12);
    expect(body(3)?.position).toEqual([0.2, 0.1, 0]);
    expect(body(3)?.velocity).toEqual([0, 1, 0]);
    expect(sim.state().fem?.[0].positions.slice(9, 12)).toEqual([0.2, 0.1, 0]);
  });

  it("refuses a node the body does not have and an orientation for a node", () => {
    const sim = cube();
    const issues = (inputs: unknown[]) => {
      try {
        sim.schedule(InputsBody.parse({ inputs }).inputs);
      } catch (err) {
        if (err instanceof InputError) return err.issues;
        throw err;
      }
      return [];
    };
    expect(issues([{ type: "impulse", id: "cube/8", impulse: [1, 0, 0] }])).toEqual([
      { path: ["inputs", 0, "id"], message: 'unknown body "cube/8"' },
    ]);
    expect(issues([{ type: "bodyState", id: "cube/2", orientation: [1, 0, 0, 0] }])).toEqual([
      { path: ["inputs", 0, "orientation"], message: 'particle "cube/2" has no orientation' },
    ]);
  });
});
