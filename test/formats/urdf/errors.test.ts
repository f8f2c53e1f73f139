/**
 * Malformed and unsupported URDF: each refusal names its problem, the element and its line
 * (UrdfImportError issues); what is only approximated or dropped is a warning. Also the
 * structural mappings that have no arm in arm.test.ts: floating roots, floating joints,
 * lumped links, renamed ids, the world link.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { importUrdf, UrdfImportError, type UrdfIssue } from "../../../src/formats/urdf/index";

const INERTIAL = `<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>`;

/** A URDF from lines; `line(marker)` is the 1-based line holding the marker. */
function doc(...lines: string[]) {
  const urdf = [`<?xml version="1.0"?>`, `<robot name="r">`, ...lines, `</robot>`].join("\n");
  const all = urdf.split("\n");
  return {
    urdf,
    line: (marker: string) => {
      const k = all.findIndex((l) => l.includes(marker));
      if (k < 0) throw new Error(`no line with ${marker}`);
      return k + 1;
    },
  };
}

async function refused(body: Parameters<typeof importUrdf>[0]): Promise<UrdfImportError> {
  try {
    await importUrdf(body);
  } catch (err) {
    if (err instanceof UrdfImportError) return err;
    throw err;
  }
  throw new Error("imported, expected a refusal");
}

function expectIssue(err: UrdfImportError, match: Partial<UrdfIssue> & { text: RegExp | string }) {
  const { text, ...rest } = match;
  const hit = err.issues.find(
    (i) =>
      (typeof text === "string" ? i.message.includes(text) : text.test(i.message)) &&
      Object.entries(rest).every(([k, v]) => i[k as keyof UrdfIssue] === v),
  );
  expect(hit, `no issue ${JSON.stringify(match)} in ${JSON.stringify(err.issues)}`).toBeDefined();
}

const close = (a: readonly number[], b: readonly number[]) => {
  expect(a).toHaveLength(b.length);
  a.forEach((x, i) => {
    expect(x).toBeCloseTo(b[i], 12);
  });
};

const link = (name: string, body = INERTIAL) => `<link name="${name}">${body}</link>`;
const joint = (name: string, type: string, parent: string, child: string, extra = "") =>
  `<joint name="${name}" type="${type}"><parent link="${parent}"/><child link="${child}"/>${extra}</joint>`;
const LIMIT = `<limit lower="-1" upper="1" effort="10" velocity="1"/>`;

describe("malformed URDF is refused (invalid, 400) naming the element and line", () => {
  it("malformed XML", async () => {
    const d = doc(link("a"), `<link name="b">`, `<joint`);
    const err = await refused({ urdf: d.urdf });
    expect(err.kind).toBe("invalid");
    expect(err.issues[0].message).toMatch(/malformed XML/);
    expect(err.issues[0].line).toBeGreaterThanOrEqual(d.line("<joint"));
  });

  it("a root element other than <robot>", async () => {
    const err = await refused({ urdf: `<model name="x"/>` });
    expectIssue(err, { element: "model", line: 1, text: "a URDF's is <robot>" });
  });

  it("a joint naming a missing link", async () => {
    const d = doc(link("a"), link("b"), joint("j", "fixed", "a", "c"));
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, {
      element: "child",
      line: d.line(`name="j"`),
      text: `link "c" is not defined`,
    });
  });

  it("cyclic joints", async () => {
    const d = doc(
      link("root"),
      link("a"),
      link("b"),
      joint("ab", "continuous", "a", "b"),
      joint("ba", "continuous", "b", "a"),
    );
    const err = await refused({ urdf: d.urdf });
    expect(err.kind).toBe("invalid");
    expectIssue(err, {
      element: "joint",
      text: /cyclic joints: "(ab|ba)" \(line \d+\) → "(ab|ba)"/,
    });
    expect([d.line(`name="ab"`), d.line(`name="ba"`)]).toContain(
      err.issues.find((i) => i.message.includes("cyclic"))?.line,
    );
  });

  it("two roots", async () => {
    const d = doc(link("a"), link("b"), link("c"), joint("j", "fixed", "a", "b"));
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "link", line: d.line(`name="c"`), text: "2 root links" });
  });

  it("a link that is the child of two joints", async () => {
    const d = doc(
      link("a"),
      link("b"),
      link("c"),
      joint("j1", "fixed", "a", "c"),
      joint("j2", "fixed", "b", "c"),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "child", line: d.line(`name="j2"`), text: "child of joint" });
  });

  it("an unknown joint type", async () => {
    const d = doc(link("a"), link("b"), joint("j", "hinge", "a", "b"));
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, {
      element: "joint",
      line: d.line("hinge"),
      text: `unknown joint type "hinge"`,
    });
  });

  it("NaN and non-numeric attributes", async () => {
    const d = doc(
      link("a"),
      `<link name="b"><inertial><mass value="heavy"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>`,
      joint("j", "continuous", "a", "b", `<origin xyz="0 NaN 0"/>`),
      link(
        "c",
        `<inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="1e999" iyz="0" izz="0.1"/></inertial>`,
      ),
      joint("k", "fixed", "b", "c", `<origin xyz="0 0"/>`),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "mass", line: d.line("heavy"), text: `"heavy" is not a number` });
    expectIssue(err, {
      element: "origin",
      line: d.line("NaN"),
      text: `"NaN" is not a finite number`,
    });
    expectIssue(err, { element: "inertia", line: d.line("1e999"), text: "overflows" });
    expectIssue(err, {
      element: "origin",
      line: d.line(`"0 0"`),
      text: "expected 3 numbers, found 2",
    });
  });

  it("a moving link without mass, and an <inertial> without <mass>", async () => {
    const d = doc(
      link("a"),
      `<link name="b"/>`,
      joint("j", "revolute", "a", "b", LIMIT),
      `<link name="c"><inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>`,
      joint("k", "prismatic", "a", "c", LIMIT),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "inertial", line: d.line(`name="c"`), text: "has no <mass>" });
    const again = await refused({
      urdf: doc(link("a"), `<link name="b"/>`, joint("j", "revolute", "a", "b", LIMIT)).urdf,
    });
    expectIssue(again, {
      element: "link",
      line: 4,
      text: `link "b" moves on joint "j" (revolute) but has no mass`,
    });
  });

  it("a revolute joint without <limit>, or with lower ≥ upper", async () => {
    const d = doc(
      link("a"),
      link("b"),
      link("c"),
      joint("j", "revolute", "a", "b"),
      joint("k", "prismatic", "a", "c", `<limit lower="1" upper="1" effort="1" velocity="1"/>`),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "joint", line: d.line(`name="j"`), text: "requires its <limit>" });
    expectIssue(err, { element: "limit", line: d.line(`name="k"`), text: "must be below upper" });
  });

  it("an inertia that is not positive definite, a duplicate link, a zero axis", async () => {
    const d = doc(
      link("a"),
      link(
        "b",
        `<inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>`,
      ),
      joint("j", "continuous", "a", "b", `<axis xyz="0 0 0"/>`),
      link("a"),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, { element: "axis", line: d.line(`xyz="0 0 0"`), text: "the axis is zero" });
    expectIssue(err, { element: "link", line: 6, text: `a second link named "a"` });
    const spd = await refused({
      urdf: doc(
        link("a"),
        link(
          "b",
          `<inertial><mass value="1"/><inertia ixx="1" ixy="2" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>`,
        ),
        joint("j", "continuous", "a", "b"),
      ).urdf,
    });
    expectIssue(spd, { element: "inertia", line: 4, text: "not positive definite" });
  });

  it("bad options: a gain for a joint that is not there", async () => {
    const d = doc(link("a"), link("b"), joint("j", "continuous", "a", "b"));
    const err = await refused({
      urdf: d.urdf,
      options: { actuators: { type: "position", kp: 1, joints: { nope: { kp: 2 } } } },
    });
    expectIssue(err, { text: `names "nope"` });
    expect(err.issues[0].path).toEqual(["options", "actuators", "joints", "nope"]);
  });

  it("<mimic> of a joint that is not a moving revolute, continuous or prismatic joint", async () => {
    const d = doc(
      link("a"),
      link("b"),
      link("c"),
      joint("j", "fixed", "a", "b"),
      joint("k", "continuous", "a", "c", `<mimic joint="j" multiplier="2"/>`),
    );
    const err = await refused({ urdf: d.urdf, options: { fixedJoints: "keep" } });
    expectIssue(err, {
      element: "mimic",
      line: d.line("mimic"),
      code: "invalid",
      text: 'joint "k" mimics "j", which is not a revolute, continuous or prismatic joint',
    });
  });

  it("more links than MAX_BODIES (too_large)", async () => {
    const d = doc(link("a"), link("b"), joint("j", "fixed", "a", "b"));
    await expect(importUrdf({ urdf: d.urdf }, { maxBodies: 1 })).rejects.toMatchObject({
      kind: "too_large",
    });
  });
});

describe("URDF the model format cannot hold is refused as unsupported (422)", () => {
  it("planar joints, unknown geometry, xacro macros", async () => {
    const d = doc(
      link("a"),
      link(
        "b",
        `${INERTIAL}<collision><geometry><capsule radius="1" length="2"/></geometry></collision>`,
      ),
      joint("j", "planar", "a", "b"),
    );
    const err = await refused({ urdf: d.urdf });
    expectIssue(err, {
      element: "capsule",
      line: d.line("capsule"),
      code: "unsupported",
      text: "not supported",
    });
    const planar = await refused({
      urdf: doc(link("a"), link("b"), joint("j", "planar", "a", "b")).urdf,
    });
    expectIssue(planar, { element: "joint", code: "unsupported", text: "no planar joint" });
    const xacro = await refused({ urdf: doc(`<xacro:macro name="m"/>`, link("a")).urdf });
    expectIssue(xacro, { element: "xacro:macro", line: 3, code: "unsupported", text: "run xacro" });
  });
});

describe("structural mappings", () => {
  it("a floating root is a free body; a floating joint leaves its child free", async () => {
    const d = doc(
      link("base"),
      link("wheel"),
      joint("j", "continuous", "base", "wheel", `<origin xyz="0 0.2 0"/>`),
      link("drone"),
      joint("f", "floating", "base", "drone", `<origin xyz="1 0 0"/>`),
    );
    const { model } = await importUrdf({ urdf: d.urdf, options: { floating: true } });
    expect(model.bodies.map((b) => [b.id, b.fixed, b.position])).toEqual([
      ["base", false, [0, 0, 0]],
      ["wheel", false, [0, 0.2, 0]],
      ["drone", false, [1, 0, 0]],
    ]);
    expect(model.joints.map((j) => j.id)).toEqual(["j"]);
  });

  it("lumps links on fixed joints into their parent's body (masses, com, parallel axis)", async () => {
    const box = (m: number) =>
      `<inertial><mass value="${m}"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial>`;
    const d = doc(
      `<link name="base_link"/>`,
      link("torso", box(2)),
      joint("t", "fixed", "base_link", "torso", `<origin xyz="0 0 1"/>`),
      link("pack", box(2)),
      joint("p", "fixed", "base_link", "pack", `<origin xyz="0 0 -1"/>`),
    );
    const lumped = await importUrdf({ urdf: d.urdf, options: { floating: true } });
    expect(lumped.model.bodies.map((b) => [b.id, b.mass, b.position])).toEqual([
      ["base_link", 4, [0, 0, 0]],
    ]);
    // own tensors plus m d² (d = 1 m) about x and y, for each of the two
    close(lumped.model.bodies[0].inertia as number[], [0.2 + 4, 0.4 + 4, 0.6]);
    expect(lumped.model.joints).toEqual([]);
    // keep: torso still lumps into the massless base; pack, on the now massive base, keeps
    // its fixed joint
    const { model, warnings } = await importUrdf({
      urdf: d.urdf,
      options: { floating: true, fixedJoints: "keep" },
    });
    expect(model.bodies.map((b) => b.id)).toEqual(["base_link", "pack"]);
    const base = model.bodies[0];
    expect(base.mass).toBe(2);
    expect(base.position).toEqual([0, 0, 1]);
    expect(base.inertia).toEqual([0.1, 0.2, 0.3]);
    expect(model.joints).toHaveLength(1);
    expect(warnings.join("\n")).toContain(`"base_link" ← "torso"`);
    // two masses lumped: com between them, parallel-axis terms m d² about x and y
    const d2 = doc(
      link("a", box(1)),
      `<link name="b"/>`,
      joint("j", "continuous", "a", "b"),
      link("c", box(1)),
      joint("k", "fixed", "b", "c", `<origin xyz="0 0 2"/>`),
      link("e", box(3)),
      joint("l", "fixed", "b", "e"),
    );
    const r2 = await importUrdf({ urdf: d2.urdf });
    const b = r2.model.bodies.find((x) => x.id === "b");
    expect(b?.mass).toBe(4);
    expect(b?.position).toEqual([0, 0, 0.5]);
    // own tensors (the same for both) plus, about the com at z = 0.5, c at +1.5 (m 1) and e at
    // −0.5 (m 3): Σ m d² = 2.25 + 0.75 = 3
    close(b?.inertia as number[], [0.2 + 3, 0.4 + 3, 0.6]);
  });

  it("renames what is no model id, with a warning; the world link stays fixed", async () => {
    const d = doc(
      `<link name="world"/>`,
      link("arm/link 1"),
      joint("arm/link 1", "continuous", "world", "arm/link 1"),
      link("ground"),
      joint("g", "continuous", "arm/link 1", "ground"),
    );
    const { model, warnings } = await importUrdf({ urdf: d.urdf, options: { floating: true } });
    expect(model.bodies.map((b) => b.id)).toEqual(["world", "arm_link_1", "ground_2"]);
    expect(model.bodies[0].fixed).toBe(true);
    expect(model.joints.map((j) => j.id)).toEqual(["arm_link_1_2", "g"]);
    expect(model.actuators.map((a) => a.id)).toEqual(["arm_link_1_2.actuator", "g.actuator"]);
    const text = warnings.join("\n");
    expect(text).toContain(`link "arm/link 1" → "arm_link_1"`);
    expect(text).toContain(`link "ground" → "ground_2"`);
    expect(text).toContain("floating ignored");
  });

  it("actuators: none, velocity, passive joints (effort 0)", async () => {
    const d = doc(
      link("a"),
      link("b"),
      link("c"),
      joint("j", "revolute", "a", "b", LIMIT),
      joint("k", "prismatic", "a", "c", `<limit lower="0" upper="1" effort="0" velocity="1"/>`),
    );
    const none = await importUrdf({ urdf: d.urdf, options: { actuators: { type: "none" } } });
    expect(none.model.actuators).toEqual([]);
    const vel = await importUrdf({
      urdf: d.urdf,
      options: { actuators: { type: "velocity", kv: 3 } },
    });
    expect(vel.model.actuators).toEqual([
      { id: "j.actuator", joint: "j", type: "velocity", kv: 3, target: 0, effortLimit: 10 },
    ]);
    expect(vel.warnings.join("\n")).toContain(`get no actuator (passive): "k"`);
    expect(vel.model.joints[1]).toMatchObject({
      type: "prismatic",
      limits: { lower: 0, upper: 1 },
    });
  });
});

describe("principal moments no body has (I₃ > I₁ + I₂)", () => {
  // l1: a CAD placeholder [1, 1, 5]; l2: diag(1, 2, 5) in an inertial frame turned by rpy,
  // so its tensor in link axes is full and its principal moments are 1, 2, 5
  const d = doc(
    link("a"),
    link(
      "l1",
      `<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="5"/></inertial>`,
    ),
    link(
      "l2",
      `<inertial><origin xyz="0 0 0" rpy="0.3 0.2 0.1"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="2" iyz="0" izz="5"/></inertial>`,
    ),
    joint("j1", "continuous", "a", "l1"),
    joint("j2", "continuous", "l1", "l2"),
  );

  it("are refused at the link's <inertia> element and line, the moments and the cure named", async () => {
    const err = await refused({ urdf: d.urdf });
    expect(err.kind).toBe("invalid");
    expect(err.issues).toHaveLength(2);
    expectIssue(err, {
      element: "inertia",
      line: d.line(`name="l1"`),
      code: "invalid",
      text: /link "l1": the principal moments of inertia \[1, 1, 5\] break the triangle inequality.*options\.balanceInertia: true \(CLI --balance-inertia\)/,
    });
    expectIssue(err, {
      element: "inertia",
      line: d.line(`name="l2"`),
      text: /link "l2": the principal moments of inertia \(the tensor's eigenvalues\) \[1, 2, 5\] break/,
    });
    expect(err.issues.every((i) => i.path[0] === "urdf")).toBe(true);
  });

  it("options.balanceInertia sets them to their mean as MuJoCo's balanceinertia, with a warning; the model loads", async () => {
    const { model, warnings } = await importUrdf({
      urdf: d.urdf,
      options: { balanceInertia: true },
    });
    // MuJoCo: every principal moment ← (I₁ + I₂ + I₃)/3, so the tensor is that times 1
    const byId = new Map(model.bodies.map((b) => [b.id, b.inertia as number[]]));
    close(byId.get("l1") as number[], [7 / 3, 7 / 3, 7 / 3]);
    close(byId.get("l2") as number[], [8 / 3, 8 / 3, 8 / 3]);
    for (const id of ["l1", "l2"]) {
      const [a, b, c] = [...(byId.get(id) as number[])].sort((x, y) => x - y);
      expect(c).toBeLessThanOrEqual(a + b);
    }
    const text = warnings.join("\n");
    expect(text).toMatch(
      /link "l1": the principal moments of inertia \[1, 1, 5\].*\[2\.33333, 2\.33333, 2\.33333\] kg·m²/,
    );
    expect(text).toMatch(/link "l2": .*\[1, 2, 5\].*\[2\.66667, 2\.66667, 2\.66667\] kg·m²/);
    const sim = loadModel(model);
    sim.step(10);
    expect(sim.state().joints.map((j) => j.coordinates)).toEqual([[0], [0]]);
  });

  it("balanceInertia leaves the moments a body has alone (a plate [1, 1, 2], rounded [0.0833, 0.0833, 0.1667])", async () => {
    const plate = doc(
      link("a"),
      link(
        "p",
        `<inertial><mass value="1"/><inertia ixx="0.0833" ixy="0" ixz="0" iyy="0.0833" iyz="0" izz="0.1667"/></inertial>`,
      ),
      joint("j", "continuous", "a", "p"),
    );
    const { model, warnings } = await importUrdf({
      urdf: plate.urdf,
      options: { balanceInertia: true },
    });
    expect(model.bodies.find((b) => b.id === "p")?.inertia).toEqual([0.0833, 0.0833, 0.1667]);
    expect(warnings.join("\n")).not.toContain("balanceinertia");
  });
});
