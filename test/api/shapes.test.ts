/**
 * `convex` and `mesh` shapes over the API: a hull dropped on a mesh terrain steps and
 * comes to rest on it; malformed shapes answer 400 invalid_model naming the problem and
 * its path (flat point sets, out-of-range indices, degenerate triangles, non-numbers,
 * unknown keys, too many triangles), and a model body beyond MAX_MODEL_BYTES 413.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { SHAPE_MAX_TRIANGLES } from "../../schemas/model";
import { useServer } from "../support/server";

const server = useServer({ workers: 1, maxModelBytes: 4 * 1024 * 1024 });
const api = () => request(server.app.server);

/** A 4 × 4 grid of unit squares on z = 0, two triangles each. */
function terrain() {
  const vertices: number[][] = [];
  const triangles: number[][] = [];
  for (let j = 0; j <= 4; j++) for (let i = 0; i <= 4; i++) vertices.push([i - 2, j - 2, 0]);
  for (let j = 0; j < 4; j++)
    for (let i = 0; i < 4; i++) {
      const a = j * 5 + i;
      triangles.push([a, a + 1, a + 6], [a, a + 6, a + 5]);
    }
  return { type: "mesh", vertices, triangles };
}

const tetra = [
  [0, 0, 0],
  [0.2, 0, 0],
  [0, 0.2, 0],
  [0, 0, 0.2],
];

function model(shape: unknown) {
  return {
    bodies: [
      { id: "terrain", fixed: true, shapes: [terrain()] },
      { id: "rock", mass: 1, position: [0.1, 0.2, 0.3], shapes: [shape] },
    ],
    contact: { method: "nsc", friction: 0.5 },
    solver: { integrator: "moreau-jean", dt: 0.005 },
  };
}

async function issues(body: object, status = 400) {
  const r = await api().post("/v1/sessions").send(body);
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.body.error).toBe("invalid_model");
  return r.body.details.issues as { path: unknown[]; message: string }[];
}

describe("convex and mesh shapes over the API", () => {
  it("a tetrahedron hull falls onto a mesh terrain and rests on it", async () => {
    const r = await api()
      .post("/v1/sessions")
      .send({ model: model({ type: "convex", points: tetra }) });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const s = await api().post(`/v1/sessions/${r.body.id}/step`).send({ steps: 600 }).expect(200);
    const rock = s.body.bodies.find((b: { id: string }) => b.id === "rock");
    // Resting: the lowest corner on z = 0 (penetration below a millimetre), at rest.
    expect(Math.hypot(...rock.velocity)).toBeLessThan(1e-3);
    expect(s.body.contacts.length).toBeGreaterThanOrEqual(3);
    for (const c of s.body.contacts) expect(Math.abs(c.normal[2] - 1)).toBeLessThan(1e-9);
    await api().delete(`/v1/sessions/${r.body.id}`).expect(204);
  });

  it("400 naming a flat convex point set", async () => {
    const list = await issues({
      model: model({
        type: "convex",
        points: [
          [0, 0, 0],
          [1, 0, 0],
          [0, 1, 0],
          [1, 1, 0],
        ],
      }),
    });
    const i = list.find(
      (x) => JSON.stringify(x.path) === '["model","bodies",1,"shapes",0,"points"]',
    );
    expect(i, JSON.stringify(list)).toBeDefined();
    expect(i?.message).toMatch(/plane.*degenerate \(flat\)/);
  });

  it("400 naming an out-of-range index and a degenerate triangle of a mesh", async () => {
    const bad = terrain();
    bad.triangles[3] = [0, 1, 99];
    let list = await issues({ model: { bodies: [{ id: "terrain", fixed: true, shapes: [bad] }] } });
    expect(list.map((x) => x.path)).toContainEqual([
      "model",
      "bodies",
      0,
      "shapes",
      0,
      "triangles",
      3,
    ]);
    expect(list[0].message).toMatch(/triangle 3 refers to vertex 99; there are 25 vertices/);
    // a negative or fractional index: a 400 naming the triangle (a negative one once reached
    // the area check, whose TypeError was a 500)
    for (const index of [-1, 1.5]) {
      const wrong = terrain();
      wrong.triangles[3] = [0, index, 2];
      list = await issues({ model: { bodies: [{ id: "terrain", fixed: true, shapes: [wrong] }] } });
      const at = ["model", "bodies", 0, "shapes", 0, "triangles", 3];
      expect(list.some((x) => JSON.stringify(x.path.slice(0, 7)) === JSON.stringify(at))).toBe(
        true,
      );
      if (index < 0) expect(list.map((x) => x.message).join(" ")).toMatch(/refers to vertex -1/);
    }
    const flat = terrain();
    flat.triangles[5] = [0, 1, 2]; // three collinear vertices of the first row
    list = await issues({ model: { bodies: [{ id: "terrain", fixed: true, shapes: [flat] }] } });
    expect(list.map((x) => x.path)).toContainEqual([
      "model",
      "bodies",
      0,
      "shapes",
      0,
      "triangles",
      5,
    ]);
    expect(list[0].message).toMatch(/triangle 5 is degenerate/);
  });

  it("400 for a vertex that is not a number, and for an unknown key", async () => {
    const t = terrain();
    (t.vertices[2] as unknown[])[1] = null;
    let list = await issues({ model: { bodies: [{ id: "terrain", fixed: true, shapes: [t] }] } });
    expect(list.map((x) => x.path)).toContainEqual([
      "model",
      "bodies",
      0,
      "shapes",
      0,
      "vertices",
      2,
      1,
    ]);
    list = await issues({ model: model({ type: "convex", points: tetra, hull: true }) });
    expect(list[0].message).toMatch(/Unrecognized key.*hull/);
  });

  it("400 beyond SHAPE_MAX_TRIANGLES triangles; 413 beyond MAX_MODEL_BYTES", async () => {
    const t = terrain();
    const many = Array.from({ length: SHAPE_MAX_TRIANGLES + 1 }, () => [0, 1, 6]);
    // About 2 MB of JSON: within the 4 MiB body limit, so the schema's limit answers.
    const list = await issues({
      model: { bodies: [{ id: "terrain", fixed: true, shapes: [{ ...t, triangles: many }] }] },
    });
    expect(list.map((x) => x.path)).toContainEqual([
      "model",
      "bodies",
      0,
      "shapes",
      0,
      "triangles",
    ]);
    const huge = Array.from({ length: 400_000 }, (_, i) => [i, i + 1, i + 2]);
    const r = await api()
      .post("/v1/sessions")
      .send({
        model: { bodies: [{ id: "terrain", fixed: true, shapes: [{ ...t, triangles: huge }] }] },
      });
    expect(r.status).toBe(413);
  });
});
