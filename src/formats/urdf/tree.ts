/**
 * The kinematic tree of a URDF robot: one root link, every other link the child of exactly
 * one joint, no cycles; and every link frame's world pose in the zero configuration (every
 * joint coordinate 0), composed from the root (placed at the world origin) through the
 * joint origins: X_world_child = X_world_parent ∘ X_origin.
 */
import type { Issues } from "./errors";
import { compose, IDENTITY_POSE, type Pose } from "./math";
import type { UrdfJoint, UrdfLink, UrdfRobot } from "./parse";

export interface KinematicTree {
  root: UrdfLink;
  links: Map<string, UrdfLink>;
  /** child link → the joint that carries it */
  parentJoint: Map<string, UrdfJoint>;
  /** parent link → its joints, in document order */
  childJoints: Map<string, UrdfJoint[]>;
  /** links from the root down, each after its parent */
  order: UrdfLink[];
  /** each link frame in the world at zero (m, rad) */
  world: Map<string, Pose>;
}

export function buildTree(robot: UrdfRobot, issues: Issues): KinematicTree {
  const links = new Map(robot.links.map((l) => [l.name, l]));
  const parentJoint = new Map<string, UrdfJoint>();
  const childJoints = new Map<string, UrdfJoint[]>();
  for (const j of robot.joints) {
    let ok = true;
    for (const [which, ref, el] of [
      ["parent", j.parent, j.parentEl],
      ["child", j.child, j.childEl],
    ] as const)
      if (!links.has(ref)) {
        issues.at(el, `joint "${j.name}": its ${which} link "${ref}" is not defined`);
        ok = false;
      }
    if (!ok) continue;
    if (j.parent === j.child) {
      issues.at(j.el, `joint "${j.name}" joins link "${j.parent}" to itself`);
      continue;
    }
    const other = parentJoint.get(j.child);
    if (other) {
      issues.at(
        j.childEl,
        `link "${j.child}" is the child of joint "${j.name}" and of joint "${other.name}" (line ${other.el.line}); a URDF is a tree (closed loops are not supported)`,
      );
      continue;
    }
    parentJoint.set(j.child, j);
    const list = childJoints.get(j.parent) ?? [];
    list.push(j);
    childJoints.set(j.parent, list);
  }
  issues.check();
  const roots = robot.links.filter((l) => !parentJoint.has(l.name));
  if (roots.length > 1) {
    const named = roots.map((l) => `"${l.name}" (line ${l.el.line})`).join(", ");
    for (const l of roots.slice(1))
      issues.at(
        l.el,
        `the robot has ${roots.length} root links (links no joint carries): ${named}; a URDF has one`,
      );
  }
  // walk down from the root; what is not reached hangs in a cycle (each link has one parent)
  const order: UrdfLink[] = [];
  const world = new Map<string, Pose>();
  if (roots.length >= 1) {
    const root = roots[0];
    world.set(root.name, IDENTITY_POSE);
    order.push(root);
    for (let k = 0; k < order.length; k++) {
      const parent = order[k];
      for (const j of childJoints.get(parent.name) ?? []) {
        world.set(j.child, compose(world.get(parent.name) as Pose, j.origin));
        order.push(links.get(j.child) as UrdfLink);
      }
    }
  }
  const reported = new Set<string>();
  for (const l of robot.links) {
    if (world.has(l.name) || reported.has(l.name) || roots.includes(l)) continue;
    // follow the parents until a link repeats: that loop is the cycle
    const path: UrdfJoint[] = [];
    const at = new Map<string, number>();
    let name = l.name;
    while (!at.has(name)) {
      at.set(name, path.length);
      const j = parentJoint.get(name) as UrdfJoint;
      path.push(j);
      name = j.parent;
    }
    const cycle = path.slice(at.get(name));
    if (cycle.some((j) => reported.has(j.child))) continue;
    for (const j of cycle) reported.add(j.child);
    issues.at(
      cycle[0].el,
      `cyclic joints: ${cycle.map((j) => `"${j.name}" (line ${j.el.line})`).join(" → ")} close a loop of links ${cycle.map((j) => `"${j.child}"`).join(", ")}`,
    );
  }
  if (roots.length === 0 && reported.size === 0)
    issues.at(robot.el, "the robot has no root link (every link is the child of a joint)");
  issues.check();
  return { root: roots[0], links, parentJoint, childJoints, order, world };
}
