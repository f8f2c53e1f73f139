/**
 * POST /v1/models/urdf: a URDF (with its meshes in the JSON body) → { model, warnings };
 * the model creates a session as it is. Refusals in the service's error format with the
 * issues naming the element and its line, or the file: 400 invalid_urdf (malformed URDF
 * or mesh), 422 unsupported_urdf, 413 (a mesh over MESH_MAX_BYTES, a body over
 * MAX_MODEL_BYTES), 400 invalid_request (a body that is not an import request).
 */
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Model } from "../../schemas/model";
import { MESH_MAX_BYTES } from "../../schemas/urdf";
import { MoreauClient } from "../../src/client/index";
import { convexShapeSupported } from "../../src/formats/urdf/index";
import type { MoreauApp } from "../../src/server/app";
import { armUrdf } from "../formats/urdf/arm";
import { arm7Files, arm7Urdf } from "../formats/urdf/arm7";
import { startApp, startServer } from "../support/server";

let app: MoreauApp;
beforeAll(async () => {
  app = await startApp();
});
afterAll(async () => {
  await app?.close();
});

const post = (body: unknown) =>
  request(app.server)
    .post("/v1/models/urdf")
    .send(body as object);

const MESH_ROBOT = (collision: boolean) =>
  [
    `<robot name="r">`,
    `<link name="a"/>`,
    `<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>`,
    `<visual><geometry><mesh filename="package://r/meshes/b.stl"/></geometry></visual>`,
    collision
      ? `<collision><geometry><mesh filename="package://r/meshes/b.stl"/></geometry></collision>`
      : "",
    `</link>`,
    `<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>`,
    `</robot>`,
  ].join("\n");

const TRIANGLE = `solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n`;
/** A tetrahedron (corners 0, x, y, z) as ASCII STL. */
const TETRA = `solid t\n${[
  ["0 0 0", "0 1 0", "1 0 0"],
  ["0 0 0", "1 0 0", "0 0 1"],
  ["0 0 0", "0 0 1", "0 1 0"],
  ["1 0 0", "0 1 0", "0 0 1"],
]
  .map(
    (f) =>
      `facet normal 0 0 0\nouter loop\n${f.map((v) => `vertex ${v}`).join("\n")}\nendloop\nendfacet`,
  )
  .join("\n")}\nendsolid t\n`;

describe("POST /v1/models/urdf", () => {
  it('collisionMeshes "mesh": the collision mesh\'s triangles as a mesh shape', async () => {
    const closed = TETRA;
    const r = await post({
      urdf: MESH_ROBOT(true),
      files: { "meshes/b.stl": { text: closed } },
      options: { collisionMeshes: "mesh" },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const shape = r.body.model.bodies[1].shapes[0];
    expect(shape.type).toBe("mesh");
    // the tetrahedron's 4 distinct corners and its 4 faces, windings as in the file
    expect(shape.vertices).toEqual([
      [0, 0, 0],
      [0, 1, 0],
      [1, 0, 0],
      [0, 0, 1],
    ]);
    expect(shape.triangles).toEqual([
      [0, 1, 2],
      [0, 2, 3],
      [0, 3, 1],
      [2, 1, 3],
    ]);
    expect(r.body.model.bodies[1].inertia).toBeDefined(); // URDF's inertial, not the mesh's
    const convex = await post({
      urdf: MESH_ROBOT(true),
      files: { "meshes/b.stl": { text: closed } },
    });
    expect(convex.body.model.bodies[1].shapes[0].type).toBe("convex");
    const bad = await post({ urdf: MESH_ROBOT(true), options: { collisionMeshes: "hull" } });
    expect(bad.status).toBe(400);
    const s = await request(app.server).post("/v1/sessions").send({ model: r.body.model });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    await request(app.server).delete(`/v1/sessions/${s.body.id}`);
  });

  it("answers the model and the warnings; the model creates a session that steps", async () => {
    const r = await post({
      urdf: armUrdf(),
      options: { actuators: { type: "position", kp: 1000, kd: 50 } },
    });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toMatch(/application\/json/);
    expect(Model.safeParse(r.body.model).success).toBe(true);
    expect(r.body.model.bodies).toHaveLength(7);
    expect(
      r.body.model.actuators.filter((a: { type: string }) => a.type === "position"),
    ).toHaveLength(6);
    expect(r.body.warnings.some((w: string) => w.includes("visual geometry"))).toBe(true);
    const s = await request(app.server).post("/v1/sessions").send({ model: r.body.model });
    expect(s.status).toBe(201);
    const st = await request(app.server).post(`/v1/sessions/${s.body.id}/step`).send({ steps: 20 });
    expect(st.status).toBe(200);
    expect(st.body.joints).toHaveLength(6);
    await request(app.server).delete(`/v1/sessions/${s.body.id}`);
  });

  it("the 7-axis arm with its STL and OBJ meshes (package:// paths): the model answered runs as a session, driven by inputs, its warnings each naming what they are about", async () => {
    const r = await post({
      urdf: arm7Urdf(true),
      files: arm7Files(true),
      options: { actuators: { type: "position", kp: 500, kd: 20 } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.warnings).toEqual([
      `links on fixed joints lumped into their parent's body: "link7" ← "hand"`,
      `the model has no "contact" block, so its collision shapes do not collide yet: add one (collideJointed false keeps jointed links from colliding; "method": "smc" steps with articulated and generalized-alpha, nonsmooth contact needs moreau-jean)`,
      `mimic joints get no actuator (their coupling drives them): "finger_joint2"`,
      `the zero configuration (the imported pose) is outside the <limit> of "joint4" (0 not in [-3.0718, -0.0698]): the limit pushes the joint in from the first step; its position servo's target is the nearest limit, not 0`,
      `<limit velocity> is not enforced (no velocity limit in the model format): "joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7", "finger_joint1", "finger_joint2"`,
    ]);
    const s = await request(app.server).post("/v1/sessions").send({ model: r.body.model });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const inputs = await request(app.server)
      .post(`/v1/sessions/${s.body.id}/inputs`)
      .send({ inputs: [{ type: "actuator", id: "joint2.actuator", value: 0.5 }] });
    expect(inputs.status, JSON.stringify(inputs.body)).toBeLessThan(300);
    const st = await request(app.server)
      .post(`/v1/sessions/${s.body.id}/step`)
      .send({ steps: 400 });
    expect(st.status).toBe(200);
    const q2 = st.body.joints.find((j: { id: string }) => j.id === "joint2").coordinates[0];
    // 2 s after the step of its target: near it (gravity's torque over kp is < 0.1 rad)
    expect(Math.abs(q2 - 0.5)).toBeLessThan(0.1);
    await request(app.server).delete(`/v1/sessions/${s.body.id}`);
  });

  it("400 invalid_urdf naming the element and line (a joint's missing link)", async () => {
    const urdf = `<robot name="r">\n<link name="a"/>\n<joint name="j" type="fixed">\n<parent link="a"/>\n<child link="nope"/>\n</joint>\n</robot>`;
    const r = await post({ urdf });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_urdf");
    expect(r.body.message).toContain(
      `line 5 <child>: joint "j": its child link "nope" is not defined`,
    );
    expect(r.body.details.issues).toEqual([
      {
        path: ["urdf"],
        element: "child",
        line: 5,
        message: `joint "j": its child link "nope" is not defined`,
        code: "invalid",
      },
    ]);
  });

  it("400 invalid_urdf for malformed XML and for a NaN or degenerate mesh, naming the file", async () => {
    const xml = await post({ urdf: `<robot name="r">\n<link name="a">\n</robot>` });
    expect(xml.status).toBe(400);
    expect(xml.body.details.issues[0]).toMatchObject({ line: 3 });
    expect(xml.body.details.issues[0].message).toMatch(/malformed XML/);
    const nan = await post({
      urdf: MESH_ROBOT(false),
      files: { "meshes/b.stl": TRIANGLE.replace("vertex 0 1 0", "vertex 0 NaN 0") },
    });
    expect(nan.status).toBe(400);
    expect(nan.body.details.issues[0]).toMatchObject({
      path: ["files", "meshes/b.stl"],
      file: "meshes/b.stl",
      element: "mesh",
      line: 4,
    });
    const flat = await post({
      urdf: MESH_ROBOT(false),
      files: { "b.stl": TRIANGLE.replace("vertex 0 1 0", "vertex 2 0 0") },
    });
    expect(flat.status).toBe(400);
    expect(flat.body.message).toContain(`mesh file "b.stl": 1 degenerate (zero-area) triangle`);
  });

  it("422 unsupported_urdf for a collision mesh (while the model format has no convex shape)", async () => {
    const r = await post({ urdf: MESH_ROBOT(true), files: { "b.stl": TRIANGLE } });
    if (convexShapeSupported()) {
      // A collision mesh becomes the convex hull of its corners: a tetrahedron's is one, a
      // single triangle's is flat (400 naming the element and its line).
      expect(r.status).toBe(400);
      expect(r.body.details.issues[0]).toMatchObject({ element: "mesh", line: 5 });
      expect(r.body.details.issues[0].message).toMatch(/convex hull is flat/);
      const ok = await post({ urdf: MESH_ROBOT(true), files: { "b.stl": TETRA } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const shape = ok.body.model.bodies.find((b: { id: string }) => b.id === "b").shapes[0];
      expect(shape.type).toBe("convex");
      expect(shape.points).toHaveLength(4);
      return;
    }
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("unsupported_urdf");
    expect(r.body.details.issues[0]).toMatchObject({
      element: "mesh",
      line: 5,
      code: "unsupported",
    });
  });

  it("413 for a mesh file over MESH_MAX_BYTES, naming it", async () => {
    const big = `solid big\n${" ".repeat(MESH_MAX_BYTES)}\nendsolid big\n`;
    const r = await post({ urdf: MESH_ROBOT(false), files: { "b.stl": big } });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe("payload_too_large");
    expect(r.body.message).toContain(`mesh file "b.stl" has ${MESH_MAX_BYTES + 24} bytes`);
    expect(r.body.details.issues[0]).toMatchObject({ file: "b.stl", line: 4 });
  });

  it("400 invalid_request with zod's paths for a body that is not an import request", async () => {
    const r = await post({ urdf: MESH_ROBOT(false), files: { "b.stl": 5 }, extra: true });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
    const paths = r.body.details.issues.map((i: { path: unknown[] }) => i.path);
    expect(paths).toContainEqual(["files", "b.stl"]);
    expect(paths).toContainEqual([]);
  });

  it("is in the OpenAPI document", async () => {
    const r = await request(app.server).get("/docs/json");
    const op = r.body.paths["/v1/models/urdf"]?.post;
    expect(op?.operationId).toBe("importUrdf");
    expect(Object.keys(op?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "413", "422"]),
    );
  });
});

describe("POST /v1/models/urdf body limit", () => {
  it("is MAX_MODEL_BYTES, the model routes' (413 naming it)", async () => {
    const small = await startApp({ maxModelBytes: 64 * 1024, maxBodyBytes: 16 * 1024 });
    try {
      const ok = await request(small.server)
        .post("/v1/models/urdf")
        .send({ urdf: MESH_ROBOT(false), files: { "b.stl": TRIANGLE + " ".repeat(30_000) } });
      expect(ok.status).toBe(200);
      const r = await request(small.server)
        .post("/v1/models/urdf")
        .send({ urdf: MESH_ROBOT(false), files: { "b.stl": " ".repeat(100_000) } });
      expect(r.status).toBe(413);
      expect(r.body.message).toContain("MAX_MODEL_BYTES");
    } finally {
      await small.close();
    }
  });
});

describe("MoreauClient.importUrdf", () => {
  it("answers the import, validated against its schema", async () => {
    const server = await startServer();
    try {
      const c = new MoreauClient(server.url, { validate: true });
      const r = await c.importUrdf(MESH_ROBOT(false), { "b.stl": TRIANGLE }, { name: "gripper" });
      expect(r.model.name).toBe("gripper");
      expect(r.model.bodies.map((b) => [b.id, b.fixed])).toEqual([
        ["a", true],
        ["b", false],
      ]);
      await expect(c.importUrdf("<robot")).rejects.toMatchObject({ status: 400 });
    } finally {
      await server.app.close();
    }
  });
});
