/**
 * Convex and triangle-mesh shapes in the dashboard (headless Chromium, test/dashboard/
 * browser.ts): the scene frame carries them once (their points, vertices and triangles are
 * in the bodies' shapes, not in the state frames) and the viewer draws a convex shape as the
 * hull of its points and a mesh as its triangles. A tetrahedron (4 corners and an interior
 * point) resting on a two-triangle terrain: the drawn hull has the tetrahedron's 4 faces and
 * only its corners as vertices, the terrain exactly the model's vertices and triangles.
 */
import { describe, expect, it } from "vitest";
import { useDashboard } from "./browser";

const h = useDashboard();

const CORNERS = [
  [0.1, 0.1, 0.1],
  [-0.1, -0.1, 0.1],
  [-0.1, 0.1, -0.1],
  [0.1, -0.1, -0.1],
];

const TERRAIN = [
  [-1, -1, 0],
  [1, -1, 0],
  [1, 1, 0],
  [-1, 1, 0],
];

const MODEL = {
  name: "hull-on-terrain",
  bodies: [
    {
      id: "terrain",
      fixed: true,
      shapes: [
        {
          type: "mesh",
          vertices: TERRAIN,
          triangles: [
            [0, 1, 2],
            [0, 2, 3],
          ],
        },
      ],
    },
    {
      id: "hull",
      mass: 1,
      position: [0, 0, 0.3],
      shapes: [{ type: "convex", points: [...CORNERS, [0.01, 0, 0]] }],
    },
  ],
  contact: { method: "nsc", friction: 0.5 },
  solver: { integrator: "moreau-jean", dt: 0.005 },
};

interface DrawnShape {
  positions: number[];
  index: number[] | null;
}

const drawn = (id: string) => `(() => {
  const meshes = [];
  d.viewer.bodies.get(${JSON.stringify(id)}).group.traverse((o) => { if (o.isMesh) meshes.push(o); });
  const g = meshes[0].geometry;
  return {
    positions: Array.from(g.attributes.position.array),
    index: g.index ? Array.from(g.index.array) : null,
  };
})()`;

describe("dashboard: convex and mesh shapes", () => {
  it("draws a convex shape as its hull and a mesh as its triangles", async () => {
    await h.open();
    const res = await h.post("/v1/sessions", { model: MODEL });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await h.dash(`d.attach(${JSON.stringify(id)}, ${JSON.stringify(MODEL)})`);
    await h.waitDash("d.state.scenesReceived >= 1 && d.viewer.bodies.size === 2");

    const terrain = await h.dash<DrawnShape>(drawn("terrain"));
    expect(terrain.positions).toEqual(TERRAIN.flat());
    expect(terrain.index).toEqual([0, 1, 2, 0, 2, 3]);

    // ConvexGeometry: non-indexed, 3 vertices per triangle; a tetrahedron has 4 faces, and
    // every drawn vertex is one of its corners (the interior point is not on the hull)
    const hull = await h.dash<DrawnShape>(drawn("hull"));
    expect(hull.positions.length).toBe(4 * 3 * 3);
    const corners = new Set<string>();
    for (let k = 0; k < hull.positions.length; k += 3) {
      const p = hull.positions.slice(k, k + 3);
      const corner = CORNERS.find((c) => c.every((x, i) => Math.abs(x - p[i]) < 1e-6));
      expect(corner).toBeDefined();
      corners.add(String(corner));
    }
    expect(corners.size).toBe(4);
  }, 60_000);
});
