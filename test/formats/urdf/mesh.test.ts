/**
 * Mesh files uploaded with a URDF: STL (binary and ASCII) and OBJ read by three.js's
 * loaders and checked — NaN vertices, face indices out of range, degenerate triangles,
 * malformed files and the size limits refused naming the file and the <mesh> line; how
 * <mesh filename> finds its file; collision meshes refused as unsupported while the model
 * format has no convex shape (a convex hull of the mesh's points once it has), visual
 * meshes dropped with a warning.
 */
import { describe, expect, it } from "vitest";
import { MESH_MAX_BYTES, MESH_MAX_TRIANGLES } from "../../../schemas/urdf";
import {
  convexShapeSupported,
  findFile,
  importUrdf,
  UrdfImportError,
} from "../../../src/formats/urdf/index";
import { asciiStl, binaryStl } from "../../support/mesh-files";

const TETRA = [
  [0, 0, 0, 0, 1, 0, 1, 0, 0],
  [0, 0, 0, 1, 0, 0, 0, 0, 1],
  [0, 0, 0, 0, 0, 1, 0, 1, 0],
  [1, 0, 0, 0, 1, 0, 0, 0, 1],
];
const TETRA_OBJ =
  "o tetra\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n";

/** A robot whose link "b" has a <mesh> as visual (line 6) and, when asked, as collision (line 7). */
function robot(filename: string, collision = false) {
  return [
    `<?xml version="1.0"?>`,
    `<robot name="r">`,
    `<link name="a"/>`,
    `<link name="b">`,
    `<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>`,
    `<visual><geometry><mesh filename="${filename}" scale="0.001 0.001 0.001"/></geometry></visual>`,
    collision ? `<collision><geometry><mesh filename="${filename}"/></geometry></collision>` : "",
    `</link>`,
    `<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>`,
    `</robot>`,
  ].join("\n");
}

async function refusal(p: Promise<unknown>): Promise<UrdfImportError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof UrdfImportError) return err;
    throw err;
  }
  throw new Error("imported, expected a refusal");
}

describe("mesh files", () => {
  it("are found by the filename as written, without its scheme, or a trailing part", () => {
    const names = ["meshes/b.stl", "b.stl", "other/c.obj"];
    expect(findFile(names, "package://arm/meshes/b.stl")).toBe("meshes/b.stl");
    expect(findFile(["package://arm/meshes/b.stl", "b.stl"], "package://arm/meshes/b.stl")).toBe(
      "package://arm/meshes/b.stl",
    );
    expect(findFile(["arm/meshes/b.stl"], "package://arm/meshes/b.stl")).toBe("arm/meshes/b.stl");
    expect(findFile(names, "file:///x/y/b.stl")).toBe("b.stl");
    expect(findFile(names, "package://arm/meshes/xb.stl")).toBeNull();
    expect(findFile(names, "c.obj")).toBeNull();
  });

  it("read binary STL, ASCII STL and OBJ (base64 or text); a visual mesh is dropped with a warning", async () => {
    for (const content of [
      binaryStl(TETRA).toString("base64"),
      { base64: binaryStl(TETRA).toString("base64") },
      asciiStl(TETRA),
      { text: asciiStl(TETRA) },
    ]) {
      const r = await importUrdf({
        urdf: robot("package://r/meshes/b.stl"),
        files: { "b.stl": content },
      });
      expect(r.model.bodies[1].shapes).toEqual([]);
      expect(r.warnings.join("\n")).toContain(`<visual> elements of "b"`);
    }
    const obj = await importUrdf({
      urdf: robot("meshes/b.obj"),
      files: { "meshes/b.obj": TETRA_OBJ },
    });
    expect(obj.model.bodies).toHaveLength(2);
    const unused = await importUrdf({
      urdf: robot("b.obj"),
      files: { "b.obj": TETRA_OBJ, "x.stl": asciiStl(TETRA) },
    });
    expect(unused.warnings.join("\n")).toContain(`uploaded files no <mesh> refers to: "x.stl"`);
  });

  it("refuse NaN vertices (ASCII and binary STL, OBJ) and face indices out of range, naming the file and line", async () => {
    const cases: [string, string | Buffer, RegExp][] = [
      [
        "b.stl",
        asciiStl([[0, 0, 0, 1, 0, 0, 0, "nan", 0]]),
        /malformed: STLLoader: Something isn't right with the vertices of face number 0/,
      ],
      [
        "b.stl",
        binaryStl([[0, 0, 0, 1, 0, 0, 0, Number.NaN, 0]]),
        /corner 3 of triangle 1 is not finite/,
      ],
      ["b.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n", /corner 3 of triangle 1 is not finite/],
      ["b.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", /face index out of range/],
    ];
    for (const [name, content, message] of cases) {
      const err = await refusal(
        importUrdf({
          urdf: robot(name),
          files: { [name]: typeof content === "string" ? content : content.toString("base64") },
        }),
      );
      expect(err.kind).toBe("invalid");
      expect(err.issues[0]).toMatchObject({
        path: ["files", name],
        file: name,
        element: "mesh",
        line: 6,
      });
      expect(err.issues[0].message).toMatch(message);
    }
  });

  it("refuse degenerate triangles, files with no triangles, and binary STL of the wrong size", async () => {
    const flat = [0, 0, 0, 1, 1, 1, 2, 2, 2];
    const cases: [string, string, RegExp][] = [
      [
        "b.stl",
        asciiStl([...TETRA, flat]),
        /1 degenerate \(zero-area\) triangle of 5, e.g. triangle 5/,
      ],
      ["b.obj", "v 0 0 0\nv 1 0 0\nf 1 2 1\n", /degenerate/],
      ["b.obj", "v 0 0 0\n", /no triangles/],
      [
        "b.stl",
        binaryStl(TETRA).subarray(0, 150).toString("base64"),
        /a binary STL declaring 4 triangles has 284 bytes, this one 150/,
      ],
    ];
    for (const [name, content, message] of cases) {
      const err = await refusal(importUrdf({ urdf: robot(name), files: { [name]: content } }));
      expect(err.issues[0].message, name).toMatch(message);
      expect(err.issues[0].line).toBe(6);
    }
  });

  it("refuse a file over MESH_MAX_BYTES or MESH_MAX_TRIANGLES as too large, naming it", async () => {
    const big = `solid big\n${" ".repeat(MESH_MAX_BYTES)}endsolid big\n`;
    const err = await refusal(importUrdf({ urdf: robot("big.stl"), files: { "big.stl": big } }));
    expect(err.kind).toBe("too_large");
    expect(err.issues[0].message).toMatch(
      /mesh file "big.stl" has \d+ bytes; the limit is 8388608 \(MESH_MAX_BYTES\)/,
    );
    const many = `v 0 0 0\nv 1 0 0\nv 0 1 0\n${"f 1 2 3\n".repeat(MESH_MAX_TRIANGLES + 1)}`;
    const err2 = await refusal(
      importUrdf({ urdf: robot("many.obj"), files: { "many.obj": many } }),
    );
    expect(err2.kind).toBe("too_large");
    expect(err2.issues[0].message).toContain(`has ${MESH_MAX_TRIANGLES + 1} triangles`);
  });

  it("refuse other formats as unsupported", async () => {
    const err = await refusal(
      importUrdf({ urdf: robot("b.dae", true), files: { "b.dae": "<COLLADA/>" } }),
    );
    expect(err.issues.some((i) => i.code === "unsupported" && i.message.includes(".dae"))).toBe(
      true,
    );
  });
});

describe("a collision mesh", () => {
  const files = { "b.stl": binaryStl(TETRA).toString("base64") };

  it(
    convexShapeSupported()
      ? "becomes a convex shape of its points"
      : "is refused as unsupported (no convex shape in the model format yet), naming the <mesh> and its line",
    async () => {
      if (convexShapeSupported()) {
        const r = await importUrdf({ urdf: robot("b.stl", true), files });
        expect(r.model.bodies[1].shapes[0]).toMatchObject({ type: "convex" });
        return;
      }
      const err = await refusal(importUrdf({ urdf: robot("b.stl", true), files }));
      expect(err.kind).toBe("unsupported");
      expect(err.issues).toEqual([
        expect.objectContaining({ element: "mesh", line: 7, code: "unsupported" }),
      ]);
      expect(err.message).toContain(`line 7 <mesh>: collision <mesh filename="b.stl">`);
    },
  );

  it("is dropped with a warning under dropUnsupported", async () => {
    const r = await importUrdf({
      urdf: robot("b.stl", true),
      files,
      options: { dropUnsupported: true },
    });
    if (!convexShapeSupported()) {
      expect(r.model.bodies[1].shapes).toEqual([]);
      expect(r.warnings.join("\n")).toContain("collision meshes dropped");
    }
  });
});
