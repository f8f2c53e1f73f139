/**
 * A 6-axis arm as URDF, written for the tests (no npm package ships a URDF robot arm with
 * inertials): the kinematics and masses of Universal Robots' UR5 (ur_description: link
 * offsets d1 = 0.089159, a2 = 0.425, a3 = 0.39225, d4 = 0.10915, d5 = 0.09465,
 * d6 = 0.0823 m; masses 3.7, 8.393, 2.275, 1.219, 1.219, 0.1879 kg), with inertial frames
 * rotated by rpy and tensors with products of inertia so that the import's rotation
 * R I Rᵀ is exercised, a continuous last joint, joint damping and friction, and a
 * massless tool flange on a fixed joint. The URDF text is generated from ARM, the table the
 * tests check the import against.
 */

export type V3 = [number, number, number];

export interface ArmLink {
  name: string;
  mass: number;
  /** inertial origin in the link frame */
  com: V3;
  rpy: V3;
  /** ixx ixy ixz iyy iyz izz in the inertial frame */
  inertia: [number, number, number, number, number, number];
  collision: string;
}

export interface ArmJoint {
  name: string;
  type: "revolute" | "continuous" | "prismatic" | "fixed";
  parent: string;
  child: string;
  xyz: V3;
  rpy: V3;
  axis: V3;
  limit?: { lower: number; upper: number; effort: number; velocity: number };
  dynamics?: { damping: number; friction: number };
  mimic?: { joint: string; multiplier: number; offset: number };
}

const PI = Math.PI;

export const ARM_LINKS: ArmLink[] = [
  {
    name: "base_link",
    mass: 4,
    com: [0, 0, 0.03],
    rpy: [0, 0, 0],
    inertia: [0.00443, 0, 0, 0.00443, 0, 0.0072],
    collision: `<origin xyz="0 0 0.03"/><geometry><cylinder radius="0.075" length="0.06"/></geometry>`,
  },
  {
    name: "shoulder_link",
    mass: 3.7,
    com: [0, 0.01, 0],
    rpy: [0, 0, 0],
    inertia: [0.010267, 0, 0, 0.010267, 0, 0.00666],
    collision: `<geometry><cylinder radius="0.06" length="0.15"/></geometry>`,
  },
  {
    name: "upper_arm_link",
    mass: 8.393,
    com: [0, -0.02, 0.28],
    rpy: [0.1, -0.05, 0.2],
    inertia: [0.2269, 0.002, -0.001, 0.2269, 0.0015, 0.0151],
    collision: `<origin xyz="0 0 0.2125"/><geometry><cylinder radius="0.054" length="0.425"/></geometry>`,
  },
  {
    name: "forearm_link",
    mass: 2.275,
    com: [0, 0, 0.25],
    rpy: [0.3, -0.2, 0.5],
    inertia: [0.0494, 0.0011, 0.0007, 0.0494, -0.0009, 0.004],
    collision: `<origin xyz="0 0 0.196"/><geometry><box size="0.08 0.08 0.39"/></geometry>`,
  },
  {
    name: "wrist_1_link",
    mass: 1.219,
    com: [0, 0.093, 0],
    rpy: [PI / 2, 0, 0],
    inertia: [0.00256, 0, 0, 0.00256, 0, 0.0022],
    collision: `<origin xyz="0 0.093 0" rpy="1.5707963267948966 0 0"/><geometry><cylinder radius="0.045" length="0.12"/></geometry>`,
  },
  {
    name: "wrist_2_link",
    mass: 1.219,
    com: [0, 0, 0.09465],
    rpy: [0, 0.4, 0],
    inertia: [0.00256, 0.0001, 0, 0.00256, 0, 0.0022],
    collision: `<origin xyz="0 0 0.09465"/><geometry><cylinder radius="0.045" length="0.12"/></geometry>`,
  },
  {
    name: "wrist_3_link",
    mass: 0.1879,
    com: [0, 0.065, 0],
    rpy: [-PI / 2, 0, 0],
    inertia: [0.000084, 0, 0, 0.000084, 0, 0.000132],
    collision: `<origin xyz="0 0.065 0"/><geometry><sphere radius="0.04"/></geometry>`,
  },
];

export const ARM_JOINTS: ArmJoint[] = [
  {
    name: "shoulder_pan_joint",
    type: "revolute",
    parent: "base_link",
    child: "shoulder_link",
    xyz: [0, 0, 0.089159],
    rpy: [0, 0, 0],
    axis: [0, 0, 1],
    limit: { lower: -2 * PI, upper: 2 * PI, effort: 150, velocity: 3.15 },
    dynamics: { damping: 0.5, friction: 0 },
  },
  {
    name: "shoulder_lift_joint",
    type: "revolute",
    parent: "shoulder_link",
    child: "upper_arm_link",
    xyz: [0, 0.13585, 0],
    rpy: [0, PI / 2, 0],
    axis: [0, 1, 0],
    limit: { lower: -2 * PI, upper: 2 * PI, effort: 150, velocity: 3.15 },
    dynamics: { damping: 0.5, friction: 0.2 },
  },
  {
    name: "elbow_joint",
    type: "revolute",
    parent: "upper_arm_link",
    child: "forearm_link",
    xyz: [0, -0.1197, 0.425],
    rpy: [0, 0, 0],
    axis: [0, 1, 0],
    limit: { lower: -PI, upper: PI, effort: 150, velocity: 3.15 },
  },
  {
    name: "wrist_1_joint",
    type: "revolute",
    parent: "forearm_link",
    child: "wrist_1_link",
    xyz: [0, 0, 0.39225],
    rpy: [0, PI / 2, 0],
    axis: [0, 1, 0],
    limit: { lower: -2 * PI, upper: 2 * PI, effort: 28, velocity: 3.2 },
  },
  {
    name: "wrist_2_joint",
    type: "revolute",
    parent: "wrist_1_link",
    child: "wrist_2_link",
    xyz: [0, 0.093, 0],
    rpy: [0, 0, 0],
    axis: [0, 0, 1],
    limit: { lower: -2 * PI, upper: 2 * PI, effort: 28, velocity: 3.2 },
  },
  {
    name: "wrist_3_joint",
    type: "continuous",
    parent: "wrist_2_link",
    child: "wrist_3_link",
    xyz: [0, 0, 0.09465],
    rpy: [0, 0, 0],
    axis: [0, 1, 0],
    limit: { lower: 0, upper: 0, effort: 28, velocity: 3.2 },
  },
  {
    name: "tool0_fixed_joint",
    type: "fixed",
    parent: "wrist_3_link",
    child: "tool0",
    xyz: [0, 0.0823, 0],
    rpy: [-PI / 2, 0, 0],
    axis: [1, 0, 0],
  },
];

const v = (x: readonly number[]) => x.join(" ");

/** A joint's URDF element (its limit, dynamics and mimic where it has them). */
export function urdfJoint(j: ArmJoint): string {
  const limit = j.limit
    ? `\n    <limit lower="${j.limit.lower}" upper="${j.limit.upper}" effort="${j.limit.effort}" velocity="${j.limit.velocity}"/>`
    : "";
  const dyn = j.dynamics
    ? `\n    <dynamics damping="${j.dynamics.damping}" friction="${j.dynamics.friction}"/>`
    : "";
  const mimic = j.mimic
    ? `\n    <mimic joint="${j.mimic.joint}" multiplier="${j.mimic.multiplier}" offset="${j.mimic.offset}"/>`
    : "";
  return `  <joint name="${j.name}" type="${j.type}">
    <parent link="${j.parent}"/>
    <child link="${j.child}"/>
    <origin xyz="${v(j.xyz)}" rpy="${v(j.rpy)}"/>
    <axis xyz="${v(j.axis)}"/>${limit}${dyn}${mimic}
  </joint>`;
}

/** The arm as URDF text; `extra` is inserted before </robot>. */
export function armUrdf(extra = ""): string {
  const links = ARM_LINKS.map((l) => {
    const [ixx, ixy, ixz, iyy, iyz, izz] = l.inertia;
    return `  <link name="${l.name}">
    <inertial>
      <origin xyz="${v(l.com)}" rpy="${v(l.rpy)}"/>
      <mass value="${l.mass}"/>
      <inertia ixx="${ixx}" ixy="${ixy}" ixz="${ixz}" iyy="${iyy}" iyz="${iyz}" izz="${izz}"/>
    </inertial>
    <visual>${l.collision}<material name="grey"/></visual>
    <collision>${l.collision}</collision>
  </link>`;
  });
  const joints = ARM_JOINTS.map(urdfJoint);
  return `<?xml version="1.0"?>
<!-- a UR5-like 6-axis arm (test/formats/urdf/arm.ts) -->
<robot name="arm6">
  <material name="grey"><color rgba="0.7 0.7 0.7 1"/></material>
${links.join("\n")}
  <link name="tool0"/>
${joints.join("\n")}
${extra}
</robot>
`;
}
