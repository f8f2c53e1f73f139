/**
 * A URDF kinematic tree (tree.ts) → a Moreau model (schemas/model.ts), in the zero
 * configuration (every joint coordinate 0, which is the model pose, so Moreau's joint
 * coordinates, limits and actuator targets read as URDF's).
 *
 * Bodies. A link becomes a rigid body whose frame has the link frame's orientation and
 * its origin at the centre of mass: position = X_world_link · c, orientation = R_world_link,
 * inertia = R_i I R_iᵀ (URDF's tensor, given in the inertial frame rotated by R_i from the
 * link frame, turned into link axes). Two exceptions:
 * - links fixed to a fixed root (the root link when not `floating`, then through fixed
 *   joints) are `fixed: true` bodies (at the link frame; their mass is not needed);
 * - a link on a fixed joint is lumped into its parent's body (options.fixedJoints "lump",
 *   the default, as Gazebo does; with "keep" only a link without mass, or the child of a
 *   link without mass, is): the masses add, the centre of mass is their barycentre and
 *   the inertias add about it (parallel axis theorem); its shapes and its child joints
 *   move onto that body. A link that moves without mass is an error.
 *
 * Shapes come from <collision> (box: halfExtents = size/2; cylinder: halfLength =
 * length/2, axis local z in both formats; sphere; mesh: the convex hull of its corners, or
 * with options.collisionMeshes "mesh" its triangles), placed in the body frame. <visual>
 * geometry is not imported (a model's shapes are its collision geometry): a warning.
 *
 * Joints: revolute → revolute with limits; continuous → revolute without; prismatic →
 * prismatic with limits; fixed → fixed (unless lumped or static); floating → no joint (a
 * free body); planar → unsupported. Anchors: the joint frame's origin in both bodies' frames,
 * the axis in world coordinates. <limit effort> → the joint's actuator's effortLimit
 * (options.actuators); <dynamics damping> → a velocity servo towards 0 with kv = damping
 * (τ = −damping q̇, an implicit joint damper); <dynamics friction>, <limit velocity>,
 * <safety_controller>, <calibration>: no counterpart, a warning. <mimic> → the joint's
 * `mimic` (no actuator of its own: the coupling drives it).
 */
import { articulationIssues } from "../../../schemas/articulation";
import { flatnessIssue, type ModelInput, Shape } from "../../../schemas/model";
import type { UrdfImportOptionsSpec } from "../../../schemas/urdf";
import type { Issues } from "./errors";
import { IdSpace } from "./ids";
import {
  add,
  addMat,
  apply,
  compose,
  IDENTITY_POSE,
  type Mat3,
  type Pose,
  parallelAxis,
  positiveDefinite,
  quaternionOf,
  rotateTensor,
  scale,
  sub,
  toLocal,
  type Vec3,
} from "./math";
import type { MeshFile } from "./mesh";
import type { Placed, UrdfJoint, UrdfLink, UrdfRobot } from "./parse";
import type { KinematicTree } from "./tree";
import type { XmlElement } from "./xml";

type BodyIn = ModelInput["bodies"][number];
type ShapeIn = NonNullable<BodyIn["shapes"]>[number];
type JointIn = NonNullable<ModelInput["joints"]>[number];
type ActuatorIn = NonNullable<ModelInput["actuators"]>[number];

/** Whether schemas/model.ts has a `convex` shape of points (then collision meshes become one). */
export function convexShapeSupported(): boolean {
  const tetra = [
    [0, 0, 0],
    [1, 0, 0],
    [0, 1, 0],
    [0, 0, 1],
  ];
  return Shape.safeParse({ type: "convex", points: tetra }).success;
}

/** A body of the model: one link, or a link with the massless links lumped into it. */
interface Group {
  id: string;
  top: UrdfLink;
  fixed: boolean;
  links: UrdfLink[];
  /** kg */
  mass: number;
  /** centre of mass in the top link's frame (m) */
  com: Vec3;
  /** the body frame in the world */
  pose: Pose;
}

export interface ConvertInput {
  robot: UrdfRobot;
  tree: KinematicTree;
  /** the meshes read, by <mesh filename> (absent: not uploaded) */
  meshes: Map<string, MeshFile>;
  options: UrdfImportOptionsSpec;
  issues: Issues;
  warnings: string[];
  /**
   * Filled in: each moving body's top link and the <inertia> element its inertia comes
   * from, by body id, so that what schemas/model.ts refuses of an inertia (principal
   * moments no body has) is reported there (index.ts).
   */
  inertias: Map<string, { link: string; el: XmlElement }>;
}

const massOf = (l: UrdfLink) => l.inertial?.mass ?? 0;

export function convert(input: ConvertInput): ModelInput {
  const { robot, tree, options, issues, warnings } = input;
  const ids = new IdSpace();
  const rootIsWorld = tree.root.name === "world";
  if (rootIsWorld && options.floating)
    warnings.push(`the root link is "world", the world frame: it stays fixed (floating ignored)`);
  const floatingRoot = options.floating && !rootIsWorld;

  // ---- which body each link belongs to, and where its frame is in that body's top link
  const owner = new Map<string, Group>();
  const inTop = new Map<string, Pose>();
  const groups: Group[] = [];
  const newGroup = (l: UrdfLink, fixed: boolean) => {
    const g: Group = {
      id: ids.claim(l.name, "link"),
      top: l,
      fixed,
      links: [l],
      mass: massOf(l),
      com: [0, 0, 0],
      pose: IDENTITY_POSE,
    };
    groups.push(g);
    owner.set(l.name, g);
    inTop.set(l.name, IDENTITY_POSE);
  };
  for (const l of tree.order) {
    const j = tree.parentJoint.get(l.name);
    if (j === undefined) {
      newGroup(l, !floatingRoot);
      continue;
    }
    const parent = owner.get(j.parent) as Group;
    if (j.type === "fixed" && parent.fixed) newGroup(l, true);
    else if (
      j.type === "fixed" &&
      (options.fixedJoints === "lump" || massOf(l) === 0 || parent.mass === 0)
    ) {
      parent.links.push(l);
      parent.mass += massOf(l);
      owner.set(l.name, parent);
      inTop.set(l.name, compose(inTop.get(j.parent) as Pose, j.origin));
    } else newGroup(l, false);
  }

  // ---- mass properties and world poses
  const bodies: BodyIn[] = [];
  const lumped: string[] = [];
  for (const g of groups) {
    const body = massProperties(g, inTop, tree, issues, input.inertias);
    if (g.links.length > 1)
      lumped.push(
        `"${g.top.name}" ← ${g.links
          .slice(1)
          .map((l) => `"${l.name}"`)
          .join(", ")}`,
      );
    bodies.push(body);
  }
  if (lumped.length > 0)
    warnings.push(`links on fixed joints lumped into their parent's body: ${lumped.join("; ")}`);
  if (issues.list.length > 0) return { bodies };

  // ---- shapes
  const meshCollisions: Placed[] = [];
  const convex = convexShapeSupported();
  bodies.forEach((body, k) => {
    const g = groups[k];
    const shapes: ShapeIn[] = [];
    for (const l of g.links)
      for (const c of l.collisions) {
        const local = compose(inTop.get(l.name) as Pose, c.origin);
        const s = shapeOf(c, local, g.com, input.meshes, convex, options.collisionMeshes);
        if (s === null) meshCollisions.push(c);
        else if (s.type === "convex") {
          // The hull of the mesh's corners must have a volume (a single triangle, a flat
          // plate: none).
          const flat = flatnessIssue((s as { points: Vec3[] }).points);
          if (flat === null) shapes.push(s);
          else
            issues.at(
              c.geometryEl,
              `collision <mesh filename="${(c.geometry as { filename: string }).filename}">: ${flat}, so its convex hull is flat (no volume); give the collision a solid mesh, or a box`,
            );
        } else shapes.push(s);
      }
    if (shapes.length > 64)
      issues.at(
        g.top.el,
        `link "${g.top.name}" has ${shapes.length} collision shapes; a body holds 64 at most`,
      );
    if (shapes.length > 0) body.shapes = shapes;
  });
  for (const c of meshCollisions) {
    const file = (c.geometry as { filename: string }).filename;
    if (options.dropUnsupported) continue;
    if (convex)
      issues.at(
        c.geometryEl,
        `collision <mesh filename="${file}">: its file was not uploaded (files, by that name, without its scheme, or a trailing part of it)`,
      );
    else
      issues.at(
        c.geometryEl,
        `collision <mesh filename="${file}">: Moreau has no mesh or convex shape yet; use box, cylinder or sphere collision geometry, or options.dropUnsupported to drop it`,
        "unsupported",
      );
  }
  if (meshCollisions.length > 0 && options.dropUnsupported)
    warnings.push(
      `collision meshes dropped (${convex ? "their files were not uploaded" : "no mesh or convex shape in the model format"}): ${meshCollisions.map((c) => `line ${c.geometryEl.line}`).join(", ")}`,
    );
  const visuals = robot.links.filter((l) => l.visuals.length > 0);
  if (visuals.length > 0)
    warnings.push(
      `visual geometry is not imported (a model's shapes are its collision geometry): the <visual> elements of ${listNames(visuals.map((l) => l.name))}`,
    );
  if (bodies.some((b) => (b.shapes?.length ?? 0) > 0))
    warnings.push(
      `the model has no "contact" block, so its collision shapes do not collide yet: add one (collideJointed false keeps jointed links from colliding; "method": "smc" steps with articulated and generalized-alpha, nonsmooth contact needs moreau-jean)${bodies.some((b) => b.shapes?.some((x) => x.type === "mesh")) ? `; its "mesh" shapes (collisionMeshes "mesh") collide with neither planes nor other meshes: a floor under them is a box` : ""}`,
    );

  // ---- joints and actuators
  const joints: JointIn[] = [];
  const jointIds = new Map<string, string>();
  const actuators: ActuatorIn[] = [];
  const mimics: { joint: UrdfJoint; model: JointIn }[] = [];
  const offsets: string[] = [];
  const notes = {
    friction: [] as string[],
    velocity: [] as string[],
    passive: [] as string[],
    ignored: [] as string[],
    outside: [] as string[],
  };
  for (const l of tree.order) {
    const j = tree.parentJoint.get(l.name);
    if (j === undefined) continue;
    const a = owner.get(j.parent) as Group;
    const b = owner.get(j.child) as Group;
    if (a === b || (a.fixed && b.fixed)) continue;
    if (j.type === "floating") continue;
    if (j.type === "planar") {
      issues.at(j.el, `joint "${j.name}" is planar: Moreau has no planar joint`, "unsupported");
      continue;
    }
    const id = ids.claim(j.name, "joint");
    jointIds.set(j.name, id);
    const anchor = (tree.world.get(j.child) as Pose).p;
    const end = (g: Group) => ({
      body: g.id,
      point: clean(toLocal(g.pose, anchor)),
    });
    const axis = clean(apply((tree.world.get(j.child) as Pose).R, j.axis));
    if (j.type === "fixed") {
      joints.push({ id, type: "fixed", a: end(a), b: end(b) });
      continue;
    }
    const limits =
      j.type !== "continuous" && j.limit
        ? { lower: j.limit.lower, upper: j.limit.upper }
        : undefined;
    if (limits && (limits.lower > 0 || limits.upper < 0))
      notes.outside.push(`"${j.name}" (0 not in [${limits.lower}, ${limits.upper}])`);
    joints.push({
      id,
      type: j.type === "prismatic" ? "prismatic" : "revolute",
      a: end(a),
      b: end(b),
      axis,
      ...(limits ? { limits } : {}),
    });
    // a mimicking joint is driven through its coupling: an actuator of its own would fight
    // it; its <dynamics> are its own still (its damping was dropped with the drive)
    if (j.mimic) mimics.push({ joint: j, model: joints[joints.length - 1] });
    else driveOf(j, id, options, ids, actuators, notes);
    dynamicsOf(j, id, ids, actuators, notes);
  }
  // <mimic>: q = multiplier·q_joint + offset, on the model's coordinates (zero in the zero
  // configuration, as URDF's); the followed joint must be a moving revolute, continuous or
  // prismatic joint of the model
  for (const { joint: j, model } of mimics) {
    const mimic = j.mimic as NonNullable<UrdfJoint["mimic"]>;
    const target = jointIds.get(mimic.joint);
    const followed = joints.find((x) => x.id === target);
    if (followed === undefined || (followed.type !== "revolute" && followed.type !== "prismatic")) {
      issues.at(
        mimic.el,
        `joint "${j.name}" mimics "${mimic.joint}", which is not a revolute, continuous or prismatic joint of the model`,
      );
      continue;
    }
    (model as { mimic?: unknown }).mimic = {
      joint: followed.id,
      multiplier: mimic.multiplier,
      offset: mimic.offset,
    };
    if (mimic.offset !== 0) offsets.push(j.name);
  }
  if (mimics.length > 0)
    warnings.push(
      `mimic joints get no actuator (their coupling drives them): ${listNames(mimics.map((m) => m.joint.name))}`,
    );
  if (offsets.length > 0)
    warnings.push(
      `the zero configuration is off the <mimic offset> of ${listNames(offsets)}: the first step moves those joints onto it`,
    );
  const act = options.actuators;
  // the model pose is the zero configuration (the header): a joint whose <limit> leaves
  // out 0 (the Panda's fourth, −3.0718 … −0.0698 rad) starts on the wrong side of it
  if (notes.outside.length > 0)
    warnings.push(
      `the zero configuration (the imported pose) is outside the <limit> of ${notes.outside.slice(0, 20).join(", ")}${notes.outside.length > 20 ? ` and ${notes.outside.length - 20} more` : ""}: the limit pushes the joint in from the first step${act.type === "position" ? "; its position servo's target is the nearest limit, not 0" : ""}`,
    );
  if (act.type === "position" || act.type === "velocity")
    for (const name of Object.keys(act.joints ?? {}))
      if (!actuators.some((a) => a.joint === jointIds.get(name) && a.id.endsWith(".actuator")))
        issues.add({
          path: ["options", "actuators", "joints", name],
          message: `options.actuators.joints names "${name}", which is not an actuated joint of the robot`,
          code: "invalid",
        });
  if (notes.passive.length > 0)
    warnings.push(
      `joints with <limit effort="0"> get no actuator (passive): ${listNames(notes.passive)}`,
    );
  if (notes.velocity.length > 0)
    warnings.push(
      `<limit velocity> is not enforced (no velocity limit in the model format): ${listNames(notes.velocity)}`,
    );
  if (notes.friction.length > 0)
    warnings.push(
      `<dynamics friction> is not modelled (no joint friction in the model format): ${listNames(notes.friction)}`,
    );
  for (const j of robot.joints)
    for (const e of j.ignored)
      notes.ignored.push(`<${e.name}> of joint "${j.name}" (line ${e.line})`);
  for (const e of robot.ignored) notes.ignored.push(`<${e.name}> (line ${e.line})`);
  if (notes.ignored.length > 0)
    warnings.push(
      `elements not read: ${notes.ignored.slice(0, 20).join(", ")}${notes.ignored.length > 20 ? `, and ${notes.ignored.length - 20} more` : ""}`,
    );
  if (ids.renamed.length > 0)
    warnings.push(`names changed to model ids: ${ids.renamed.join(", ")}`);

  return {
    name: (options.name ?? robot.name).slice(0, 256),
    bodies,
    ...(joints.length > 0 ? { joints } : {}),
    ...(actuators.length > 0 ? { actuators } : {}),
    solver: robotSolver(bodies, joints, options.actuators.type),
  };
}

/**
 * solver.dt of a robot without servos that `generalized-alpha` steps (articulated refused a
 * part, a mimic; s). Unactuated, such an arm swings its potential energy into its light
 * distal links: the 7-axis arm of the tests (arm7.ts, with its mimic-coupled gripper, no
 * limits) turns them at up to 120 rad/s, h ω = 0.6 at the format's 5 ms, which the
 * trapezoidal rule (ρ∞ = 1) does not resolve: its error control then halves a sixth of
 * the steps, time-symmetrically (generalized-alpha.ts rejectedByErrorControl), and the
 * energy strays within 3.9 J of 101 J over 60 s without drift (before the halvings were
 * symmetric it lost 17 J). At 1 ms (h ω = 0.12) no step is halved and it keeps it within
 * 0.46 J, at 2.1 times the Newton iterations (138 000 against 65 000 over the 60 s): kept
 * for that accuracy. Servos (kd) damp such swings, and their robots keep the format's step.
 */
export const PASSIVE_ALPHA_DT = 1e-3;

/** The robot's solver block: its integrator (robotIntegrator) and, where needed, its step. */
function robotSolver(
  bodies: NonNullable<ModelInput["bodies"]>,
  joints: NonNullable<ModelInput["joints"]>,
  actuators: UrdfImportOptionsSpec["actuators"]["type"],
): { integrator: "articulated" | "generalized-alpha"; dt?: number } {
  const integrator = robotIntegrator(bodies, joints, actuators);
  const servos = actuators === "position" || actuators === "velocity";
  return integrator === "generalized-alpha" && !servos
    ? { integrator, dt: PASSIVE_ALPHA_DT }
    : { integrator };
}

/**
 * The integrator the model format recommends for the robot, without contact: articulated
 * for a tree driven by efforts (actuators `torque` or `none`: the joints hold exactly, at
 * O(links) a step; the 6-axis arm of the tests falls under gravity 2.4 times faster than
 * under generalized-alpha), generalized-alpha where the import adds servos (`position`,
 * `velocity`) or articulated refuses a part (a mimic couples two joints' coordinates:
 * schemas/articulation.ts). Servos, measured at the README's gains (kp 500, kd 20, the
 * URDF's effort limits) against articulated at stepTolerance 1e-11, at the format's 5 ms:
 * - articulated explicit is exact to 1e-7 rad but takes 220–236 sub-steps a step (the
 *   wrists' damping, kd/I ≈ 1.5e5 /s on the 6-axis arm's last link, sets them at its
 *   stability bound), 55–66 steps/s against generalized-alpha's 1000–3500 (CPU time);
 * - its implicit servos (IMEX ARS(2,2,2), which the step takes past 500 estimated
 *   sub-steps; lowered to 0 for the measurement), since 2026-12-06 with the joint limits in
 *   the implicit stage, at a 0.5 rad step of every target over 2 s against articulated at
 *   0.25 ms: 152 steps/s against generalized-alpha's 115 on the 6-axis arm, but 3.5e-3 rad
 *   off against 2.2e-3 and an energy error of 0.098 J against 0.045 J; on the 7-axis arm
 *   without its gripper (its fourth joint starting on its limit, which blew the IMEX step
 *   up within 7 steps while the limits were explicit) 215 steps/s against 66, 0.053 rad
 *   off against 0.027 and 1.0 J against 0.14 J (against articulated at stepTolerance
 *   1e-11; its explicit steps there take 10 sub-steps a step, 133 steps/s, 9e-5 rad).
 *   Faster, less accurate: the default stays.
 * generalized-alpha takes the servos and the limits implicitly, its step error controlled.
 */
function robotIntegrator(
  bodies: NonNullable<ModelInput["bodies"]>,
  joints: NonNullable<ModelInput["joints"]>,
  actuators: UrdfImportOptionsSpec["actuators"]["type"],
): "articulated" | "generalized-alpha" {
  if (actuators === "position" || actuators === "velocity") return "generalized-alpha";
  const issues = articulationIssues({
    bodies: bodies.map((b) => ({ id: b.id, kind: b.kind ?? "rigid", fixed: b.fixed === true })),
    joints: joints.map((j) => ({
      id: j.id,
      type: j.type,
      a: j.a,
      b: j.b,
      mimic: "mimic" in j ? j.mimic : undefined,
    })),
    solver: {
      integrator: "articulated",
      rayleighMass: 0,
      rayleighStiffness: 0,
      velocityDamping: 0,
    },
  });
  return issues.length === 0 ? "articulated" : "generalized-alpha";
}

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, 20).map((n) => `"${n}"`);
  return names.length > 20 ? `${shown.join(", ")} and ${names.length - 20} more` : shown.join(", ");
}

/** Rounds away the last-bit noise of rotations (|x| < 1e-15 → 0) so that exact inputs stay exact. */
function clean(v: readonly number[]): Vec3 {
  return [0, 1, 2].map((i) => (Math.abs(v[i]) < 1e-15 ? 0 : v[i])) as Vec3;
}

/** The body of a group: mass, centre of mass, inertia about it in link axes, world pose. */
function massProperties(
  g: Group,
  inTop: Map<string, Pose>,
  tree: KinematicTree,
  issues: Issues,
  inertias: ConvertInput["inertias"],
): BodyIn {
  const top = tree.world.get(g.top.name) as Pose;
  const orientation = quaternionOf(top.R);
  if (g.fixed) {
    g.pose = { R: top.R, p: top.p };
    return { id: g.id, fixed: true, position: clean(top.p), orientation };
  }
  const j = tree.parentJoint.get(g.top.name);
  if (g.mass <= 0) {
    const how = j ? `moves on joint "${j.name}" (${j.type})` : "is the floating root";
    issues.at(
      g.top.el,
      `link "${g.top.name}" ${how} but has no mass: give it an <inertial> with a <mass value> > 0`,
    );
    return { id: g.id };
  }
  // centres of mass and tensors of the lumped links, in the top link's frame
  const parts = g.links
    .filter((l) => massOf(l) > 0)
    .map((l) => {
      const inertial = l.inertial as NonNullable<UrdfLink["inertial"]>;
      const frame = compose(inTop.get(l.name) as Pose, inertial.origin);
      return { m: inertial.mass, c: frame.p, I: rotateTensor(frame.R, inertial.inertia) };
    });
  let com: Vec3 = parts[0].c;
  if (parts.length > 1) {
    com = [0, 0, 0];
    for (const p of parts) com = add(com, scale(p.c, p.m / g.mass));
  }
  let inertia: Mat3 = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (const p of parts) inertia = addMat(addMat(inertia, p.I), parallelAxis(p.m, sub(p.c, com)));
  g.com = com;
  const el = g.links.find((l) => l.inertial)?.inertial?.inertiaEl ?? g.top.el;
  inertias.set(g.id, { link: g.top.name, el });
  if (!positiveDefinite(inertia)) {
    issues.at(
      el,
      `link "${g.top.name}": the inertia tensor is not positive definite (${formatTensor(inertia)} kg·m² about the centre of mass, link axes)`,
    );
  }
  const position = add(top.p, apply(top.R, com));
  g.pose = { R: top.R, p: position };
  const diagonal = inertia[1] === 0 && inertia[2] === 0 && inertia[5] === 0;
  return {
    id: g.id,
    mass: g.mass,
    position: clean(position),
    orientation,
    inertia: diagonal
      ? [inertia[0], inertia[4], inertia[8]]
      : [
          [inertia[0], inertia[1], inertia[2]],
          [inertia[3], inertia[4], inertia[5]],
          [inertia[6], inertia[7], inertia[8]],
        ],
  };
}

function formatTensor(t: Mat3): string {
  const f = (x: number) => Number(x.toPrecision(4));
  return `ixx ${f(t[0])}, ixy ${f(t[1])}, ixz ${f(t[2])}, iyy ${f(t[4])}, iyz ${f(t[5])}, izz ${f(t[8])}`;
}

/** A collision geometry as a shape in the body frame; null for a mesh with no shape for it. */
function shapeOf(
  c: Placed,
  local: Pose,
  com: Vec3,
  meshes: Map<string, MeshFile>,
  convex: boolean,
  as: UrdfImportOptionsSpec["collisionMeshes"],
): ShapeIn | null {
  const pose = { position: clean(sub(local.p, com)), orientation: quaternionOf(local.R) };
  const g = c.geometry;
  switch (g.type) {
    case "box":
      return { type: "box", halfExtents: scale(g.size, 0.5), ...pose };
    case "cylinder":
      return { type: "cylinder", radius: g.radius, halfLength: g.length / 2, ...pose };
    case "sphere":
      return { type: "sphere", radius: g.radius, ...pose };
    case "mesh": {
      const mesh = meshes.get(g.filename);
      if (!convex || mesh === undefined) return null;
      if (as === "mesh") return { type: "mesh", ...indexedMesh(mesh, g.scale), ...pose };
      return { type: "convex", points: meshPoints(mesh, g.scale), ...pose } as unknown as ShapeIn;
    }
  }
}

/** The distinct corners of a mesh, scaled (m). */
export function meshPoints(mesh: MeshFile, s: Vec3): Vec3[] {
  const seen = new Set<string>();
  const out: Vec3[] = [];
  const t = mesh.triangles;
  for (let i = 0; i < t.length; i += 3) {
    const key = `${t[i]},${t[i + 1]},${t[i + 2]}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([t[i] * s[0], t[i + 1] * s[1], t[i + 2] * s[2]]);
  }
  return out;
}

/**
 * The mesh as shared vertices (scaled, m) and index triangles, corners merged where they
 * coincide; triangles that collapse (two equal corners) are left out, and a mirroring
 * scale (odd number of negative factors) reverses the winding so outward stays outward.
 */
export function indexedMesh(
  mesh: MeshFile,
  s: Vec3,
): { vertices: Vec3[]; triangles: [number, number, number][] } {
  const index = new Map<string, number>();
  const vertices: Vec3[] = [];
  const triangles: [number, number, number][] = [];
  const t = mesh.triangles;
  const corner = (i: number) => {
    const key = `${t[i]},${t[i + 1]},${t[i + 2]}`;
    let k = index.get(key);
    if (k === undefined) {
      k = vertices.length;
      index.set(key, k);
      vertices.push([t[i] * s[0], t[i + 1] * s[1], t[i + 2] * s[2]]);
    }
    return k;
  };
  const mirrored = s[0] * s[1] * s[2] < 0;
  for (let i = 0; i < t.length; i += 9) {
    const a = corner(i);
    const b = corner(i + 3);
    const c = corner(i + 6);
    if (a === b || b === c || a === c) continue;
    triangles.push(mirrored ? [a, c, b] : [a, b, c]);
  }
  return { vertices, triangles };
}

/** The joint's drive (options.actuators), or the note that <limit effort="0"> leaves none. */
function driveOf(
  j: UrdfJoint,
  id: string,
  options: UrdfImportOptionsSpec,
  ids: IdSpace,
  out: ActuatorIn[],
  notes: { passive: string[] },
): void {
  const effort = j.limit?.effort;
  const act = options.actuators;
  if (effort === 0) notes.passive.push(j.name);
  else if (act.type !== "none") {
    const common = {
      id: ids.derived(`${id}.actuator`),
      joint: id,
      ...(effort !== undefined ? { effortLimit: effort } : {}),
    };
    if (act.type === "torque") out.push({ ...common, type: "torque" });
    else if (act.type === "position") {
      const own = act.joints?.[j.name];
      // the target held is the zero configuration, or the nearest limit where that is
      // outside the limits (a servo held beyond a limit would press on it for good)
      const limit = j.type === "continuous" ? undefined : j.limit;
      const target = limit ? Math.min(Math.max(0, limit.lower), limit.upper) : 0;
      out.push({
        ...common,
        type: "position",
        kp: own?.kp ?? act.kp,
        kd: own?.kd ?? act.kd,
        ...(target !== 0 ? { target } : {}),
      });
    } else out.push({ ...common, type: "velocity", kv: act.joints?.[j.name]?.kv ?? act.kv });
  }
}

/**
 * The joint's passive dynamics, a mimicking joint's too: <dynamics damping> as a velocity
 * servo to rest (torque −c q̇), and the notes that <dynamics friction> and <limit velocity>
 * are not modelled.
 */
function dynamicsOf(
  j: UrdfJoint,
  id: string,
  ids: IdSpace,
  out: ActuatorIn[],
  notes: { friction: string[]; velocity: string[] },
): void {
  if (j.limit && j.limit.velocity > 0) notes.velocity.push(j.name);
  if (j.dynamics && j.dynamics.friction > 0) notes.friction.push(j.name);
  if (j.dynamics && j.dynamics.damping > 0)
    out.push({
      id: ids.derived(`${id}.damping`),
      joint: id,
      type: "velocity",
      target: 0,
      kv: j.dynamics.damping,
    });
}
