/**
 * `moreau import robot.urdf [--out model.json]`: the URDF converted in this process, its
 * meshes read from disk (package:// found from --package or a folder of that name above
 * the URDF), warnings on standard error; the model it writes runs with `moreau run`.
 * Refusals exit 1 naming the line (or the file: a 100 MB mesh is refused by its size,
 * unread); bad usage exits 2.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { Model } from "../../schemas/model";
import { main } from "../../src/cli/main";
import { armUrdf } from "../formats/urdf/arm";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "moreau-import-"));

async function cli(args: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on("data", (c: Buffer) => out.push(c));
  stderr.on("data", (c: Buffer) => err.push(c));
  const code = await main(args, { stdout, stderr, cwd: dir, env: {} });
  return { code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString() };
}

function write(rel: string, content: string | Buffer): string {
  const p = join(dir, rel);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, content);
  return p;
}

const TETRA_STL = `solid t
facet normal 0 0 -1
outer loop
vertex 0 0 0
vertex 0 1 0
vertex 1 0 0
endloop
endfacet
facet normal 0 -1 0
outer loop
vertex 0 0 0
vertex 1 0 0
vertex 0 0 1
endloop
endfacet
endsolid t
`;

/** A robot with one mesh-bearing link, in a ROS-like package folder. */
function meshRobot(collision: boolean): string {
  return `<robot name="gripper">
  <link name="base"/>
  <link name="finger">
    <inertial><mass value="0.2"/><inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial>
    <visual><geometry><mesh filename="package://gripper_description/meshes/finger.stl"/></geometry></visual>
    ${collision ? `<collision><geometry><mesh filename="package://gripper_description/meshes/finger.stl"/></geometry></collision>` : ""}
  </link>
  <joint name="slide" type="prismatic">
    <parent link="base"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.04" effort="20" velocity="0.1"/>
  </joint>
</robot>
`;
}

describe("moreau import", () => {
  it("writes the model of the arm, which `moreau run` runs", async () => {
    const urdf = write("arm.urdf", armUrdf());
    const r = await cli([
      "import",
      urdf,
      "--out",
      "arm.json",
      "--actuators",
      "position",
      "--kp",
      "500",
      "--kd",
      "20",
    ]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain("warning: visual geometry is not imported");
    expect(r.err).toContain("model written to arm.json");
    const model = JSON.parse(readFileSync(join(dir, "arm.json"), "utf8"));
    expect(Model.safeParse(model).success).toBe(true);
    expect(model.actuators.filter((a: { type: string }) => a.type === "position")).toHaveLength(6);
    const run = await cli([
      "run",
      "arm.json",
      "--steps",
      "40",
      "--every",
      "20",
      "--format",
      "json",
    ]);
    expect(run.code, run.err).toBe(0);
    const out = JSON.parse(run.out);
    expect(out.frames.map((f: { step: number }) => f.step)).toEqual([0, 20, 40]);
    expect(out.frames[2].joints).toHaveLength(6);
  });

  it("reads package:// meshes from the package folder above the URDF", async () => {
    write("gripper_description/meshes/finger.stl", TETRA_STL);
    const urdf = write("gripper_description/urdf/gripper.urdf", meshRobot(false));
    const r = await cli(["import", urdf]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).not.toContain("mesh file not found");
    expect(JSON.parse(r.out).bodies.map((b: { id: string }) => b.id)).toEqual(["base", "finger"]);
    // a collision mesh: its convex hull by default, its triangles with --collision-meshes mesh
    const coll = write("gripper_description/urdf/gripper2.urdf", meshRobot(true));
    const hull = await cli(["import", coll]);
    expect(hull.code, hull.err).toBe(0);
    const finger = (out: string) => JSON.parse(out).bodies[1].shapes[0];
    expect(finger(hull.out).type).toBe("convex");
    // a mesh shape on a moving link must be a closed surface: the whole tetrahedron
    write(
      "gripper_description/meshes/finger.stl",
      `${TETRA_STL.replace("endsolid t\n", "")}${[
        ["0 0 0", "0 0 1", "0 1 0"],
        ["1 0 0", "0 1 0", "0 0 1"],
      ]
        .map(
          (f) =>
            `facet normal 0 0 0\nouter loop\n${f.map((v) => `vertex ${v}`).join("\n")}\nendloop\nendfacet\n`,
        )
        .join("")}endsolid t\n`,
    );
    const mesh = await cli(["import", coll, "--collision-meshes", "mesh"]);
    expect(mesh.code, mesh.err).toBe(0);
    expect(finger(mesh.out).type).toBe("mesh");
    expect(finger(mesh.out).triangles).toHaveLength(4);
    expect(Model.safeParse(JSON.parse(mesh.out)).success).toBe(true);
    const bad = await cli(["import", coll, "--collision-meshes", "hull"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--collision-meshes must be convex or mesh");
    // --package points elsewhere; a missing mesh is a warning
    const elsewhere = await cli([
      "import",
      urdf,
      "--package",
      `gripper_description=${join(dir, "nowhere")}`,
    ]);
    expect(elsewhere.code).toBe(0);
    const lone = join(mkdtempSync(join(tmpdir(), "moreau-import-lone-")), "gripper.urdf");
    writeFileSync(lone, meshRobot(false));
    const missing = await cli(["import", lone]);
    expect(missing.err).toContain(
      "warning: mesh file not found: package://gripper_description/meshes/finger.stl",
    );
  });

  it("refuses a 100 MB mesh by its size, naming the file, without reading it", async () => {
    const mesh = write("big_description/meshes/finger.stl", "");
    truncateSync(mesh, 100 * 1024 * 1024); // sparse: nothing is written
    const urdf = write(
      "big_description/urdf/big.urdf",
      meshRobot(false).replaceAll("gripper_description", "big_description"),
    );
    const r = await cli(["import", urdf]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`mesh file ${mesh}`);
    expect(r.err).toContain("has 104857600 bytes; the limit is 8388608 (MESH_MAX_BYTES)");
  });

  it("exits 1 naming the line of a malformed URDF, 2 on bad usage", async () => {
    const bad = write(
      "bad.urdf",
      `<robot name="r">\n<link name="a"/>\n<joint name="j" type="hinge">\n<parent link="a"/><child link="a"/>\n</joint>\n</robot>\n`,
    );
    const r = await cli(["import", bad]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`line 3 <joint>: joint "j": unknown joint type "hinge"`);
    expect((await cli(["import", bad, "--actuators", "position"])).code).toBe(2);
    expect((await cli(["import"])).code).toBe(2);
    expect((await cli(["import", "missing.urdf"])).code).toBe(2);
    const help = await cli(["import", "--help"]);
    expect(help.out).toContain("Usage: moreau import <robot.urdf>");
  });

  it("refuses principal moments no body has at their line; --balance-inertia sets them to their mean", async () => {
    const urdf = write(
      "placeholder.urdf",
      `<robot name="r">\n<link name="a"/>\n<link name="b"><inertial><mass value="1"/>\n<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="5"/></inertial></link>\n<joint name="j" type="continuous"><parent link="a"/><child link="b"/></joint>\n</robot>\n`,
    );
    const r = await cli(["import", urdf]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `line 4 <inertia>: link "b": the principal moments of inertia [1, 1, 5]`,
    );
    expect(r.err).toContain("--balance-inertia");
    const ok = await cli(["import", urdf, "--balance-inertia"]);
    expect(ok.code, ok.err).toBe(0);
    expect(JSON.parse(ok.out).bodies[1].inertia).toEqual([7 / 3, 7 / 3, 7 / 3]);
    expect(ok.err).toContain(`warning: link "b": the principal moments of inertia [1, 1, 5]`);
  });

  it("runs from bin/moreau.js", () => {
    const urdf = write("arm2.urdf", armUrdf());
    const p = spawnSync(process.execPath, [join(ROOT, "bin/moreau.js"), "import", urdf], {
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(p.status, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout).name).toBe("arm6");
  });
});
