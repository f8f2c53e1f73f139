/**
 * From a model's fem bodies to the engine's pieces (src/engine/forces/fem/build.ts),
 * called directly on schema-parsed specs: node ids, the prepared mesh (inline meshes
 * oriented, fixed nodes and box faces, lumped masses ρV/4), the nodes as particles after
 * the bodies, the node body indices, one FemEffector per body, and the attachments as
 * spherical joints whose default point is the node's place in the body's frame
 * (p = Rᵀ (x − x_b), written out here with the tests' quaternion algebra).
 */
import { describe, expect, it } from "vitest";
import { Fem, type FemSpec } from "../../../../schemas/model";
import {
  createFemEffectors,
  femAttachmentJoints,
  femBodyInits,
  femNodeId,
  nodeBodies,
  prepareFem,
} from "../../../../src/engine/forces/fem/build";
import { FemEffector } from "../../../../src/engine/forces/fem/fem-effector";
import { BodySystem } from "../../../../src/engine/model/body-system";
import { unitTetFem } from "../../../support/fem";
import { axisAngle, rotationMatrix } from "../../../support/quat";
import { particle, rigid } from "../jacobian-check";

/** One tetrahedron (inline), negatively oriented as given: its last two nodes swapped. */
const tet = (extra: Record<string, unknown> = {}): FemSpec =>
  Fem.parse(unitTetFem({ elements: [[0, 1, 3, 2]], ...extra }));

const block = (extra: Record<string, unknown> = {}): FemSpec =>
  Fem.parse({
    id: "block",
    box: { size: [0.4, 0.2, 0.2], resolution: [2, 1, 1], center: [0, 0, 1] },
    density: 1000,
    youngModulus: 1e5,
    ...extra,
  });

describe("femNodeId and prepareFem", () => {
  it("node ids are <fem id>/<k>; an inline mesh is oriented and lumped ρV/4", () => {
    expect(femNodeId("jelly", 7)).toBe("jelly/7");
    const [p] = prepareFem([tet({ fixedNodes: [2] })]);
    expect(Array.from(p.mesh.elements)).toEqual([0, 1, 2, 3]);
    for (const m of p.mass) expect(m).toBeCloseTo(600 / 24, 12);
    expect(Array.from(p.fixed)).toEqual([0, 0, 1, 0]);
    expect(p.surface.triangles.length).toBe(12);
  });

  it("a box: 12 nodes, its fixedFaces fixed, total mass ρ a b c", () => {
    const [p] = prepareFem([block({ fixedFaces: ["-x"], fixedNodes: [11] })]);
    expect(p.mesh.nodes.length).toBe(3 * 12);
    // -x: nodes i = 0 of (i + 3 (j + 2 k)): 0, 3, 6, 9; node 11 given
    expect([...p.fixed.keys()].filter((k) => p.fixed[k])).toEqual([0, 3, 6, 9, 11]);
    expect(p.mass.reduce((s, m) => s + m, 0)).toBeCloseTo(1000 * 0.4 * 0.2 * 0.2, 12);
  });

  it("refuses a spec with no mesh and a fixed node out of range", () => {
    const noMesh = { ...tet(), nodes: undefined, elements: undefined };
    expect(() => prepareFem([noMesh])).toThrow(/fem "tet": give nodes and elements, or box/);
    expect(() => prepareFem([tet({ fixedNodes: [4] })])).toThrow(/no node 4 to fix \(4 nodes\)/);
  });
});

describe("femBodyInits, nodeBodies, createFemEffectors", () => {
  it("the nodes as particles after the bodies, with the body's velocity; their indices; one effector each", () => {
    const prepared = prepareFem([tet({ velocity: [1, 0, -2], fixedNodes: [0] }), block()]);
    const inits = femBodyInits(prepared);
    expect(inits.map((b) => b.id)).toEqual([
      ...[0, 1, 2, 3].map((k) => `tet/${k}`),
      ...Array.from({ length: 12 }, (_, k) => `block/${k}`),
    ]);
    expect(inits.every((b) => b.kind === "particle")).toBe(true);
    expect(inits.map((b) => b.fixed).slice(0, 5)).toEqual([true, false, false, false, false]);
    expect(Array.from(inits[3].position)).toEqual([0, 0, 1]);
    expect(Array.from(inits[1].velocity)).toEqual([1, 0, -2]);
    expect(inits[1].mass).toBeCloseTo(25, 12);
    const sys = new BodySystem([rigid("r", 1, [0, 0, 3]), ...inits]);
    expect(Array.from(nodeBodies(sys, prepared[0]))).toEqual([1, 2, 3, 4]);
    expect(nodeBodies(sys, prepared[1])[11]).toBe(16);
    const effectors = createFemEffectors(prepared, sys);
    expect(effectors.map((e) => [e.id, e instanceof FemEffector])).toEqual([
      ["tet", true],
      ["block", true],
    ]);
    // a system without the nodes
    expect(() => nodeBodies(new BodySystem([rigid("r", 1, [0, 0, 0])]), prepared[0])).toThrow(
      /node 0 is not in the body system/,
    );
  });

  it("refuses a free node that belongs to no element (it has no mass)", () => {
    const loose = tet({
      nodes: [
        [0, 0, 0],
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
        [5, 5, 5],
      ],
    });
    expect(() => femBodyInits(prepareFem([loose]))).toThrow(/node 4 belongs to no element/);
    // fixed, it is accepted
    expect(femBodyInits(prepareFem([{ ...loose, fixedNodes: [4] }])).length).toBe(5);
  });
});

describe("femAttachmentJoints", () => {
  it("spherical joints body point – node; the default point is Rᵀ (x − x_b), or x on ground", () => {
    const q = axisAngle([0.2, 1, -0.4], 0.9);
    const spec = tet({
      attachments: [
        { node: 3, body: "r" },
        { node: 1, body: "ground" },
        { node: 2, body: "p", point: [0.1, 0.2, 0.3] },
      ],
    });
    const prepared = prepareFem([spec]);
    const sys = new BodySystem([
      rigid("r", 1, [0.5, -0.2, 2], { orientation: q }),
      particle("p", 1, [3, 3, 3]),
      ...femBodyInits(prepared),
    ]);
    const joints = femAttachmentJoints(prepared, sys);
    expect(joints.map((j) => [j.id, j.type, j.a.body, j.b.body])).toEqual([
      ["tet/attachment/0", "spherical", "r", "tet/3"],
      ["tet/attachment/1", "spherical", "ground", "tet/1"],
      ["tet/attachment/2", "spherical", "p", "tet/2"],
    ]);
    const R = rotationMatrix(q);
    const d = [0 - 0.5, 0 + 0.2, 1 - 2]; // node 3 at (0, 0, 1)
    const expected = [0, 1, 2].map((c) => R[0][c] * d[0] + R[1][c] * d[1] + R[2][c] * d[2]);
    for (let c = 0; c < 3; c++) expect(joints[0].a.point[c]).toBeCloseTo(expected[c], 14);
    expect(joints[1].a.point).toEqual([1, 0, 0]);
    expect(joints[2].a.point).toEqual([0.1, 0.2, 0.3]);
    for (const j of joints) expect(j.b.point).toEqual([0, 0, 0]);
    const unknown = prepareFem([tet({ attachments: [{ node: 0, body: "nobody" }] })]);
    expect(() => femAttachmentJoints(unknown, sys)).toThrow(
      /fem "tet" attachment 0 refers to unknown body "nobody"/,
    );
  });
});
