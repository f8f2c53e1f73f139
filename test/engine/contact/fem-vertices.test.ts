/**
 * Vertex contact of fem bodies (src/engine/contact/fem-vertices.ts): the surface vertices
 * are points against the analytic shapes, with ArtiSynth's vertex areas for compliant
 * contact and as particles in the nonsmooth problem.
 *
 * Areas against closed forms: a vertex takes one third of each adjacent triangle's area
 * projected on the plane normal to n, so
 *  - the vertices of one flat face of a box share its area a·b exactly (normal along it);
 *  - over the whole closed surface Σ_v A_v = Σ_f A_f |n_f·n| = 2 (bc|n_x| + ac|n_y| + ab|n_z|)
 *    (twice the box's silhouette on the plane ⊥ n), for any unit n in the box's axes, and
 *    the same after a rigid rotation of the mesh and n together.
 * Statics: a soft block dropped on a plane (and on a box, a cylinder's cap, a large
 * sphere) comes to rest; the contacts then carry its weight, Σ F_n n_z = m g (the elastic
 * forces sum to zero over the body), to 1e-6 relative with compliant contact, and with
 * nonsmooth contact Σ P_n/h = m g and the vertices stay where the impact left them (no
 * penetration drift between 1 s and 2 s).
 */
import { describe, expect, it } from "vitest";
import { FemVertexContacts } from "../../../src/engine/contact/fem-vertices";
import { boxMesh } from "../../../src/engine/forces/fem/mesh";
import { meshSurface } from "../../../src/engine/forces/fem/surface";
import { loadModel } from "../../../src/engine/index";
import { axisAngle, rotate } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { meshSystem } from "../forces/fem/helpers";

const SIZE: [number, number, number] = [0.3, 0.2, 0.1];

function boxVertices(q: [number, number, number, number]) {
  const mesh = boxMesh({ size: SIZE, resolution: [3, 2, 2], center: [0, 0, 0], orientation: q });
  const sys = meshSystem(mesh, 1000);
  const n = mesh.nodes.length / 3;
  const surface = meshSurface(mesh.elements, n);
  const contacts = new FemVertexContacts(sys, [
    { surface, nodeBodies: Int32Array.from({ length: n }, (_, k) => k) },
  ]);
  return { mesh, surface, contacts };
}

describe("fem surface and vertex areas", () => {
  it("the surface of a meshed box: its boundary triangles, outward, covering 2(ab + bc + ca)", () => {
    const { mesh, surface } = boxVertices([1, 0, 0, 0]);
    // 2 triangles per boundary quad: 2 (3·2 + 3·2 + 2·2) quads
    expect(surface.triangles.length / 3).toBe(2 * 2 * (6 + 6 + 4));
    // all nodes but the 2·1·1 inner ones of a 4×3×3 grid
    expect(surface.vertices.length).toBe(4 * 3 * 3 - 2);
    let area = 0;
    const tr = surface.triangles;
    for (let t = 0; t < tr.length / 3; t++) {
      const p = [0, 1, 2].map((c) => [0, 1, 2].map((i) => mesh.nodes[3 * tr[3 * t + c] + i]));
      const u = [0, 1, 2].map((i) => p[1][i] - p[0][i]);
      const v = [0, 1, 2].map((i) => p[2][i] - p[0][i]);
      const c = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
      area += 0.5 * Math.hypot(...c);
      // outward: the normal points away from the centre (the box is convex)
      const centroid = [0, 1, 2].map((i) => (p[0][i] + p[1][i] + p[2][i]) / 3);
      expect(c[0] * centroid[0] + c[1] * centroid[1] + c[2] * centroid[2]).toBeGreaterThan(0);
    }
    const [a, b, c] = SIZE;
    expect(area).toBeCloseTo(2 * (a * b + b * c + c * a), 14);
  });

  it("the vertex areas of a flat face sum to the face's area a·b", () => {
    const { mesh, surface, contacts } = boxVertices([1, 0, 0, 0]);
    const n = [0, 0, -1];
    let sum = 0;
    surface.vertices.forEach((k, v) => {
      if (Math.abs(mesh.nodes[3 * k + 2] + SIZE[2] / 2) > 1e-12) return;
      // vertices of the bottom face: its triangles project fully, the side ones not at all
      sum += contacts.vertexArea(contacts.firstShape + v, n, 0);
    });
    expect(Math.abs(sum - SIZE[0] * SIZE[1])).toBeLessThan(1e-15);
  });

  it("over the closed surface Σ A_v = 2(bc|n_x| + ac|n_y| + ab|n_z|), also rotated", () => {
    const rand = mulberry32(31);
    const [a, b, c] = SIZE;
    for (let trial = 0; trial < 10; trial++) {
      const axis = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const q = axisAngle(axis, 3 * rand());
      const { contacts, surface } = boxVertices(q);
      const local = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const l = Math.hypot(...local);
      const nl = local.map((x) => x / l);
      const n = rotate(q, nl);
      let sum = 0;
      for (let v = 0; v < surface.vertices.length; v++)
        sum += contacts.vertexArea(contacts.firstShape + v, n, 0);
      const exact =
        2 * (b * c * Math.abs(nl[0]) + a * c * Math.abs(nl[1]) + a * b * Math.abs(nl[2]));
      expect(Math.abs(sum - exact)).toBeLessThan(1e-14);
    }
  });
});

const PLANE = { type: "plane", normal: [0, 0, 1], offset: 0 };

/** A soft block (0.2 × 0.2 × 0.1 m, 4 kg) released 5 mm above the top (z = 0) of `floor`. */
function block(
  contact: Record<string, unknown>,
  solver: Record<string, unknown>,
  floor: Record<string, unknown> = PLANE,
  fem: Record<string, unknown> = {},
) {
  return loadModel({
    gravity: [0, 0, -9.81],
    bodies: [{ id: "floor", fixed: true, shapes: [floor] }],
    fem: [
      {
        id: "block",
        box: { size: [0.2, 0.2, 0.1], resolution: [2, 2, 1], center: [0, 0, 0.055] },
        density: 1000,
        youngModulus: 1e5,
        poissonRatio: 0.3,
        ...fem,
      },
    ],
    contact,
    solver,
  });
}

const WEIGHT = 0.2 * 0.2 * 0.1 * 1000 * 9.81;

function contactSums(sim: ReturnType<typeof loadModel>) {
  const st = sim.state();
  // the vertical component of Σ F_n n (the normals tilt on a sphere)
  let force = 0;
  let minGap = Number.POSITIVE_INFINITY;
  for (const c of st.contacts) {
    // the floor's vertex contacts (floor, node), and a rigid point's on a face (fem-faces.ts:
    // the triangle's first node, then the floor, the normal from the face to it)
    const onFace = c.bodies[1] === "floor";
    expect(c.bodies[onFace ? 1 : 0]).toBe("floor");
    expect(c.bodies[onFace ? 0 : 1]).toMatch(/^block\/\d+$/);
    force += (onFace ? -1 : 1) * c.normalForce * c.normal[2];
    minGap = Math.min(minGap, c.gap);
  }
  return { force, minGap, count: st.contacts.length };
}

describe("a soft block dropped on a plane", () => {
  it("compliant contact (vertex areas, pressure per unit area): Σ F_n = m g to 1e-6 at rest", () => {
    // k = 1e7 Pa/m: a 981 Pa bearing pressure sinks the block 0.1 mm
    const sim = block(
      {
        method: "smc",
        behavior: { type: "linear", stiffness: 1e7, perUnitArea: true, stepDamping: 0.5 },
      },
      { integrator: "backward-euler", dt: 0.01, newtonIterations: 20, newtonTolerance: 1e-12 },
    );
    sim.step(200);
    const { force, minGap, count } = contactSums(sim);
    // the 9 vertices of the bottom face carry it
    expect(count).toBe(9);
    expect(Math.abs(force / WEIGHT - 1)).toBeLessThan(1e-6);
    // about the 0.098 mm of a uniform pressure m g / (a b k) (measured: 0.106 mm at the
    // deepest vertex)
    expect(-minGap).toBeGreaterThan(0.9e-4);
    expect(-minGap).toBeLessThan(1.2e-4);
  });

  it("on a box, a cylinder's cap and a large sphere too: Σ F_n n_z = m g to 1e-6 at rest", () => {
    const floors = [
      { type: "box", halfExtents: [1, 1, 0.1], position: [0, 0, -0.1] },
      { type: "cylinder", radius: 1, halfLength: 0.1, position: [0, 0, -0.1] },
      // its crest 0.25 mm above the block's corners: they touch too once it has sunk
      { type: "sphere", radius: 20, position: [0, 0, -20] },
    ];
    for (const floor of floors) {
      const sim = block(
        {
          method: "smc",
          behavior: { type: "linear", stiffness: 1e7, perUnitArea: true, stepDamping: 0.5 },
        },
        { integrator: "backward-euler", dt: 0.01, newtonIterations: 20, newtonTolerance: 1e-12 },
        floor,
      );
      sim.step(200);
      const { force, count } = contactSums(sim);
      expect(count, floor.type).toBeGreaterThanOrEqual(floor.type === "sphere" ? 1 : 9);
      expect(Math.abs(force / WEIGHT - 1), floor.type).toBeLessThan(1e-6);
    }
  });

  it("nonsmooth contact (Moreau–Jean): Σ P_n/h = m g and no penetration drift", () => {
    // θ = 1 damps the block's elastic vibration (θ = ½ keeps it ringing: ±40 % after 2 s)
    const h = 0.002;
    const sim = block({ method: "nsc" }, { integrator: "moreau-jean", dt: h, theta: 1 });
    sim.step(500);
    const at1 = contactSums(sim);
    sim.step(500);
    const at2 = contactSums(sim);
    expect(at2.count).toBe(9);
    // measured: 8e-13
    expect(Math.abs(at2.force / WEIGHT - 1)).toBeLessThan(1e-6);
    // the impact leaves at most one step's approach, √(2 g · 5 mm) h = 0.63 mm (measured
    // 0.092 mm), and it stays: velocity-level contact holds u_n = 0 from then on
    expect(-at2.minGap).toBeLessThan(Math.sqrt(2 * 9.81 * 0.005) * h);
    expect(Math.abs(at2.minGap - at1.minGap)).toBeLessThan(1e-12);
  });

  it("Coulomb friction through contact.pairs naming the fem body: it slides to a stop at μ g", () => {
    // released on the plane at 1 m/s along x; the pair (floor, block) sets μ = 0.3 for
    // every vertex contact: the nodes decelerate at μ g = 2.943 m/s² (1 − 2.943 t)
    const mean = (sim: ReturnType<typeof loadModel>) => {
      const bodies = sim.state().bodies.filter((b) => b.id.startsWith("block/"));
      return bodies.reduce((s, b) => s + b.velocity[0], 0) / bodies.length;
    };
    const fem = {
      box: { size: [0.2, 0.2, 0.1], resolution: [2, 2, 1], center: [0, 0, 0.05] },
      velocity: [1, 0, 0],
    };
    const solver = { integrator: "moreau-jean", dt: 0.002, theta: 1 };
    const rough = block(
      { method: "nsc", pairs: [{ bodies: ["floor", "block"], friction: 0.3 }] },
      solver,
      PLANE,
      fem,
    );
    rough.step(100);
    expect(Math.abs(mean(rough) - (1 - 0.3 * 9.81 * 0.2))).toBeLessThan(0.02);
    const smooth = block({ method: "nsc" }, solver, PLANE, fem);
    smooth.step(100);
    expect(Math.abs(mean(smooth) - 1)).toBeLessThan(1e-3);
  });

  it("a node attached to a body does not collide with it (unless collideJointed)", () => {
    // node 0, the corner (−0.1, −0.1, 0.005), held inside a fixed gripper box
    const contacts = (collideJointed: boolean) =>
      loadModel({
        gravity: [0, 0, -9.81],
        bodies: [
          {
            id: "gripper",
            fixed: true,
            position: [-0.1, -0.1, 0.005],
            shapes: [{ type: "box", halfExtents: [0.02, 0.02, 0.02] }],
          },
        ],
        fem: [
          {
            id: "block",
            box: { size: [0.2, 0.2, 0.1], resolution: [2, 2, 1], center: [0, 0, 0.055] },
            density: 1000,
            youngModulus: 1e5,
            attachments: [{ node: 0, body: "gripper" }],
          },
        ],
        contact: { method: "smc", collideJointed },
        solver: { integrator: "backward-euler", dt: 0.005 },
      })
        .state()
        .contacts.map((c) => c.bodies.join(" "));
    expect(contacts(false)).toEqual([]);
    expect(contacts(true)).toContain("gripper block/0");
  });
});
