/**
 * A 7-axis arm with a two-finger gripper as URDF, with its collision geometry in mesh
 * files (binary STL, ASCII STL, OBJ) named by `package://arm7/meshes/…` paths, written for
 * the tests: the kinematics and joint limits of Franka Emika's Panda (franka_description:
 * d1 = 0.333, d3 = 0.316, a4 = 0.0825, d5 = 0.384, a7 = 0.088, flange 0.107 m; efforts 87
 * and 12 N·m; its fourth joint's range −3.0718 … −0.0698 rad does not hold the zero
 * configuration), a hand on a fixed joint (lumped into link7), and two prismatic fingers,
 * the second mimicking the first. Each moving link is a solid box whose mass and inertia
 * (m (b² + c²)/12 …) are those of the box its collision mesh is, so that the mesh's
 * closed-form volume and the <inertial> agree.
 */
import { asciiStl, binaryStl, boxTriangles, obj } from "../../support/mesh-files";
import { type ArmJoint, urdfJoint, type V3 } from "./arm";

export interface Arm7Link {
  name: string;
  mass: number;
  /** the box's half extents (m), centred at `com` in the link frame */
  half: V3;
  com: V3;
  /** the collision mesh's file (under meshes/) and format */
  mesh: string;
}

/** A joint of the 7-axis arm (revolute, prismatic or fixed; the fingers' mimic). */
export type Arm7Joint = ArmJoint;

const H = Math.PI / 2;

export const ARM7_LINKS: Arm7Link[] = [
  { name: "link0", mass: 3, half: [0.08, 0.08, 0.07], com: [0, 0, 0.07], mesh: "link0.stl" },
  { name: "link1", mass: 4, half: [0.06, 0.06, 0.1], com: [0, 0, -0.1], mesh: "link1.stl" },
  { name: "link2", mass: 2, half: [0.05, 0.1, 0.05], com: [0, -0.1, 0], mesh: "link2.obj" },
  { name: "link3", mass: 3, half: [0.06, 0.06, 0.08], com: [0.04, 0, -0.06], mesh: "link3.stl" },
  { name: "link4", mass: 3, half: [0.06, 0.12, 0.05], com: [-0.04, 0.1, 0], mesh: "link4.obj" },
  { name: "link5", mass: 2, half: [0.05, 0.05, 0.12], com: [0, 0.03, -0.12], mesh: "link5.stl" },
  { name: "link6", mass: 1.5, half: [0.06, 0.04, 0.04], com: [0.05, 0, 0], mesh: "link6.stl" },
  { name: "link7", mass: 0.5, half: [0.04, 0.04, 0.03], com: [0, 0, 0.07], mesh: "link7.obj" },
  { name: "hand", mass: 0.7, half: [0.03, 0.1, 0.03], com: [0, 0, 0.03], mesh: "hand.stl" },
  {
    name: "finger_left",
    mass: 0.05,
    half: [0.01, 0.01, 0.025],
    com: [0, 0.01, 0.025],
    mesh: "finger.stl",
  },
  {
    name: "finger_right",
    mass: 0.05,
    half: [0.01, 0.01, 0.025],
    com: [0, 0.01, 0.025],
    mesh: "finger.stl",
  },
];

export const ARM7_JOINTS: Arm7Joint[] = [
  j("joint1", "link0", "link1", [0, 0, 0.333], [0, 0, 0], -2.8973, 2.8973, 87),
  j("joint2", "link1", "link2", [0, 0, 0], [-H, 0, 0], -1.7628, 1.7628, 87),
  j("joint3", "link2", "link3", [0, -0.316, 0], [H, 0, 0], -2.8973, 2.8973, 87),
  j("joint4", "link3", "link4", [0.0825, 0, 0], [H, 0, 0], -3.0718, -0.0698, 87),
  j("joint5", "link4", "link5", [-0.0825, 0.384, 0], [-H, 0, 0], -2.8973, 2.8973, 12),
  j("joint6", "link5", "link6", [0, 0, 0], [H, 0, 0], -0.0175, 3.7525, 12),
  j("joint7", "link6", "link7", [0.088, 0, 0], [H, 0, 0], -2.8973, 2.8973, 12),
  {
    name: "flange",
    type: "fixed",
    parent: "link7",
    child: "hand",
    xyz: [0, 0, 0.107],
    rpy: [0, 0, -Math.PI / 4],
    axis: [1, 0, 0],
  },
  {
    name: "finger_joint1",
    type: "prismatic",
    parent: "hand",
    child: "finger_left",
    xyz: [0, 0, 0.0584],
    rpy: [0, 0, 0],
    axis: [0, 1, 0],
    limit: { lower: 0, upper: 0.04, effort: 20, velocity: 0.2 },
  },
  {
    name: "finger_joint2",
    type: "prismatic",
    parent: "hand",
    child: "finger_right",
    xyz: [0, 0, 0.0584],
    rpy: [0, 0, Math.PI],
    axis: [0, 1, 0],
    limit: { lower: 0, upper: 0.04, effort: 20, velocity: 0.2 },
    mimic: { joint: "finger_joint1", multiplier: 1, offset: 0 },
  },
];

function j(
  name: string,
  parent: string,
  child: string,
  xyz: V3,
  rpy: V3,
  lower: number,
  upper: number,
  effort: number,
): Arm7Joint {
  return {
    name,
    type: "revolute",
    parent,
    child,
    xyz,
    rpy,
    axis: [0, 0, 1],
    limit: { lower, upper, effort, velocity: 2.175 },
  };
}

/** The box's principal moments about its centre: m (b² + c²)/3 with half extents a, b, c. */
export function boxInertia(m: number, h: V3): V3 {
  const [a, b, c] = h;
  return [(m * (b * b + c * c)) / 3, (m * (a * a + c * c)) / 3, (m * (a * a + b * b)) / 3];
}

/**
 * The meshes, by path under the package (binary STL for link0, link3, link6, hand and the
 * finger; ASCII STL for link1 and link5; OBJ for the rest), as the import's `files` (a
 * Buffer is sent base64). Each file is in millimetres when `mm` (the URDF then scales it
 * by 0.001).
 */
export function arm7Files(mm = false): Record<string, string> {
  const k = mm ? 1000 : 1;
  const out: Record<string, string> = {};
  const ascii = new Set(["link1.stl", "link5.stl"]);
  for (const l of ARM7_LINKS) {
    const path = `meshes/${l.mesh}`;
    if (path in out) continue;
    const tris = boxTriangles(l.com.map((x) => x * k) as V3, l.half.map((x) => x * k) as V3);
    if (l.mesh.endsWith(".obj")) out[path] = obj(tris);
    else if (ascii.has(l.mesh)) out[path] = asciiStl(tris);
    else out[path] = binaryStl(tris).toString("base64");
  }
  return out;
}

const v = (x: readonly number[]) => x.join(" ");

/** The arm as URDF text (meshes in millimetres, scaled, when `mm`). */
export function arm7Urdf(mm = false): string {
  const scale = mm ? ` scale="0.001 0.001 0.001"` : "";
  const links = ARM7_LINKS.map((l) => {
    const [ixx, iyy, izz] = boxInertia(l.mass, l.half);
    return `  <link name="${l.name}">
    <inertial>
      <origin xyz="${v(l.com)}"/>
      <mass value="${l.mass}"/>
      <inertia ixx="${ixx}" ixy="0" ixz="0" iyy="${iyy}" iyz="0" izz="${izz}"/>
    </inertial>
    <collision><geometry><mesh filename="package://arm7/meshes/${l.mesh}"${scale}/></geometry></collision>
  </link>`;
  });
  const joints = ARM7_JOINTS.map(urdfJoint);
  return `<?xml version="1.0"?>
<robot name="arm7">
${links.join("\n")}
${joints.join("\n")}
</robot>
`;
}
