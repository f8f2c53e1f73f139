/**
 * The URDF element tree (xml.ts) → a typed robot description, every number checked
 * (finite, in range) and every problem named with its element and line.
 *
 * URDF units: metres, kilograms, kg·m², radians; N·m (revolute) or N (prismatic) for
 * efforts, rad/s or m/s for velocities, N·m·s/rad or N·s/m for damping. Frames:
 * - a link has its own frame; its <inertial>, <visual> and <collision> elements are placed
 *   in it by their <origin xyz rpy> (rpy: fixed-axis roll, pitch, yaw, math.ts);
 * - a joint's <origin> places the joint frame in the parent link's frame, and the child
 *   link's frame is the joint frame moved by the joint coordinate (at zero: the same);
 * - a joint's <axis xyz> is in the joint frame (default 1 0 0), normalized.
 */
import { type Issues, UrdfImportError } from "./errors";
import { IDENTITY_POSE, type Mat3, norm, originPose, type Pose, scale, type Vec3 } from "./math";
import type { XmlElement } from "./xml";

export type Geometry =
  | { type: "box"; size: Vec3 }
  | { type: "cylinder"; radius: number; length: number }
  | { type: "sphere"; radius: number }
  | { type: "mesh"; filename: string; scale: Vec3 };

export interface Placed {
  /** the <visual> or <collision> element */
  el: XmlElement;
  /** its geometry's element (<box>, <mesh>, …) */
  geometryEl: XmlElement;
  /** the geometry's frame in the link frame */
  origin: Pose;
  geometry: Geometry;
}

export interface Inertial {
  el: XmlElement;
  /** kg */
  mass: number;
  /** the inertial frame (origin: the centre of mass) in the link frame */
  origin: Pose;
  /** about the centre of mass in the inertial frame, kg·m² (row-major, symmetric) */
  inertia: Mat3;
  inertiaEl: XmlElement;
}

export interface UrdfLink {
  name: string;
  el: XmlElement;
  inertial: Inertial | null;
  visuals: Placed[];
  collisions: Placed[];
}

export const JOINT_TYPES = [
  "revolute",
  "continuous",
  "prismatic",
  "fixed",
  "floating",
  "planar",
] as const;
export type JointType = (typeof JOINT_TYPES)[number];

export interface UrdfJoint {
  name: string;
  el: XmlElement;
  type: JointType;
  parent: string;
  parentEl: XmlElement;
  child: string;
  childEl: XmlElement;
  /** the joint frame in the parent link's frame (= the child link's frame at zero) */
  origin: Pose;
  /** unit axis in the joint frame */
  axis: Vec3;
  limit: {
    el: XmlElement;
    lower: number;
    upper: number;
    effort: number;
    velocity: number;
  } | null;
  dynamics: { el: XmlElement; damping: number; friction: number } | null;
  mimic: { el: XmlElement; joint: string; multiplier: number; offset: number } | null;
  /** elements read and not used (<safety_controller>, <calibration>) */
  ignored: XmlElement[];
}

export interface UrdfRobot {
  name: string;
  el: XmlElement;
  links: UrdfLink[];
  joints: UrdfJoint[];
  /** elements the importer does not read (transmissions, gazebo tags, unknown elements) */
  ignored: XmlElement[];
}

const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The numbers of an attribute, or null after an issue naming it. */
function numbers(issues: Issues, el: XmlElement, attr: string, count: number): number[] | null {
  const raw = el.attrs[attr];
  const parts = raw.trim().split(/\s+/).filter(Boolean);
  if (parts.length !== count) {
    issues.at(
      el,
      `${attr}="${raw}": expected ${count === 1 ? "a number" : `${count} numbers`}, found ${parts.length}`,
    );
    return null;
  }
  const out: number[] = [];
  for (const p of parts) {
    if (!FLOAT.test(p)) {
      const what = /^[+-]?(nan|inf|infinity)$/i.test(p) ? "not a finite number" : "not a number";
      issues.at(el, `${attr}="${raw}": "${p}" is ${what}`);
      return null;
    }
    const x = Number(p);
    if (!Number.isFinite(x)) {
      issues.at(el, `${attr}="${raw}": "${p}" overflows a double`);
      return null;
    }
    out.push(x);
  }
  return out;
}

interface NumberRule {
  /** value when the attribute is absent; undefined: required */
  default?: number;
  min?: number;
  /** strictly above min */
  above?: boolean;
}

/** One number attribute; NaN after an issue (the stage fails at its end). */
function number(issues: Issues, el: XmlElement, attr: string, rule: NumberRule = {}): number {
  if (!(attr in el.attrs)) {
    if (rule.default !== undefined) return rule.default;
    issues.at(el, `attribute "${attr}" is required`);
    return Number.NaN;
  }
  const v = numbers(issues, el, attr, 1);
  if (v === null) return Number.NaN;
  const x = v[0];
  if (rule.min !== undefined && (rule.above ? x <= rule.min : x < rule.min)) {
    issues.at(el, `${attr}="${el.attrs[attr]}" must be ${rule.above ? ">" : "≥"} ${rule.min}`);
    return Number.NaN;
  }
  return x;
}

function vector(issues: Issues, el: XmlElement, attr: string, fallback: Vec3): Vec3 {
  if (!(attr in el.attrs)) return fallback;
  const v = numbers(issues, el, attr, 3);
  return v === null ? [Number.NaN, Number.NaN, Number.NaN] : (v as Vec3);
}

function name(issues: Issues, el: XmlElement, attr = "name"): string {
  const v = el.attrs[attr];
  if (v === undefined || v.trim() === "") {
    issues.at(el, `attribute "${attr}" is required`);
    return "";
  }
  return v;
}

/** The only child of that tag, null when none; a second one is an issue. */
function single(issues: Issues, el: XmlElement, tag: string): XmlElement | null {
  const found = el.children.filter((c) => c.name === tag);
  if (found.length > 1)
    issues.at(
      found[1],
      `<${el.name}> has more than one <${tag}> (the first is at line ${found[0].line})`,
    );
  return found[0] ?? null;
}

function origin(issues: Issues, el: XmlElement): Pose {
  const o = single(issues, el, "origin");
  if (o === null) return IDENTITY_POSE;
  return originPose(vector(issues, o, "xyz", [0, 0, 0]), vector(issues, o, "rpy", [0, 0, 0]));
}

function inertial(issues: Issues, el: XmlElement): Inertial | null {
  const massEl = single(issues, el, "mass");
  const inertiaEl = single(issues, el, "inertia");
  if (massEl === null) issues.at(el, "<inertial> has no <mass>");
  if (inertiaEl === null) issues.at(el, "<inertial> has no <inertia>");
  if (massEl === null || inertiaEl === null) return null;
  const mass = number(issues, massEl, "value", { min: 0 });
  const [ixx, ixy, ixz, iyy, iyz, izz] = ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"].map((a) =>
    number(issues, inertiaEl, a),
  );
  return {
    el,
    mass,
    origin: origin(issues, el),
    inertia: [ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz],
    inertiaEl,
  };
}

function geometry(issues: Issues, el: XmlElement): Placed | null {
  const g = single(issues, el, "geometry");
  if (g === null) {
    issues.at(el, `<${el.name}> has no <geometry>`);
    return null;
  }
  const shapes = g.children;
  if (shapes.length !== 1) {
    issues.at(g, `<geometry> must hold exactly one shape, found ${shapes.length}`);
    return null;
  }
  const s = shapes[0];
  const pose = origin(issues, el);
  const positive = { min: 0, above: true };
  let geom: Geometry;
  switch (s.name) {
    case "box": {
      const size = vector(issues, s, "size", [Number.NaN, Number.NaN, Number.NaN]);
      if (!("size" in s.attrs)) issues.at(s, `attribute "size" is required`);
      else if (size.some((x) => x <= 0)) issues.at(s, `size="${s.attrs.size}": sizes must be > 0`);
      geom = { type: "box", size };
      break;
    }
    case "cylinder":
      geom = {
        type: "cylinder",
        radius: number(issues, s, "radius", positive),
        length: number(issues, s, "length", positive),
      };
      break;
    case "sphere":
      geom = { type: "sphere", radius: number(issues, s, "radius", positive) };
      break;
    case "mesh": {
      const sc = vector(issues, s, "scale", [1, 1, 1]);
      if (sc.some((x) => x === 0)) issues.at(s, `scale="${s.attrs.scale}": a scale of 0`);
      geom = { type: "mesh", filename: name(issues, s, "filename"), scale: sc };
      break;
    }
    default:
      issues.at(
        s,
        `geometry <${s.name}> is not supported (box, cylinder, sphere and mesh are)`,
        "unsupported",
      );
      return null;
  }
  return { el, geometryEl: s, origin: pose, geometry: geom };
}

function link(issues: Issues, el: XmlElement, ignored: XmlElement[]): UrdfLink {
  const out: UrdfLink = {
    name: name(issues, el),
    el,
    inertial: null,
    visuals: [],
    collisions: [],
  };
  const inertialEl = single(issues, el, "inertial");
  if (inertialEl) out.inertial = inertial(issues, inertialEl);
  for (const c of el.children) {
    if (c.name === "visual" || c.name === "collision") {
      const p = geometry(issues, c);
      if (p) (c.name === "visual" ? out.visuals : out.collisions).push(p);
    } else if (c.name !== "inertial") ignored.push(c);
  }
  return out;
}

function joint(issues: Issues, el: XmlElement): UrdfJoint {
  const jname = name(issues, el);
  const typeName = name(issues, el, "type");
  const type = JOINT_TYPES.find((t) => t === typeName);
  if (type === undefined && typeName !== "")
    issues.at(
      el,
      `joint "${jname}": unknown joint type "${typeName}" (URDF's are ${JOINT_TYPES.join(", ")})`,
    );
  const end = (tag: string): [string, XmlElement] => {
    const e = single(issues, el, tag);
    if (e === null) {
      issues.at(el, `joint "${jname}" has no <${tag}>`);
      return ["", el];
    }
    return [name(issues, e, "link"), e];
  };
  const [parent, parentEl] = end("parent");
  const [child, childEl] = end("child");
  const axisEl = single(issues, el, "axis");
  let axis: Vec3 = [1, 0, 0];
  if (axisEl) {
    if (!("xyz" in axisEl.attrs)) issues.at(axisEl, `attribute "xyz" is required`);
    const a = vector(issues, axisEl, "xyz", [1, 0, 0]);
    const n = norm(a);
    if (n === 0) issues.at(axisEl, `joint "${jname}": the axis is zero`);
    axis = scale(a, 1 / n);
  }
  const limitEl = single(issues, el, "limit");
  const moving = type === "revolute" || type === "prismatic";
  if (moving && limitEl === null)
    issues.at(
      el,
      `joint "${jname}" is ${type}: URDF requires its <limit> (lower, upper, effort, velocity)`,
    );
  const limit =
    limitEl === null
      ? null
      : {
          el: limitEl,
          lower: number(issues, limitEl, "lower", { default: 0 }),
          upper: number(issues, limitEl, "upper", { default: 0 }),
          effort: number(issues, limitEl, "effort", { min: 0 }),
          velocity: number(issues, limitEl, "velocity", { min: 0 }),
        };
  if (limit && moving && limit.lower >= limit.upper)
    issues.at(
      limitEl as XmlElement,
      `joint "${jname}": lower (${limit.lower}) must be below upper (${limit.upper}); a joint that cannot move is a fixed joint`,
    );
  const dynEl = single(issues, el, "dynamics");
  const dynamics =
    dynEl === null
      ? null
      : {
          el: dynEl,
          damping: number(issues, dynEl, "damping", { default: 0, min: 0 }),
          friction: number(issues, dynEl, "friction", { default: 0, min: 0 }),
        };
  const mimicEl = single(issues, el, "mimic");
  const mimic =
    mimicEl === null
      ? null
      : {
          el: mimicEl,
          joint: name(issues, mimicEl, "joint"),
          multiplier: number(issues, mimicEl, "multiplier", { default: 1 }),
          offset: number(issues, mimicEl, "offset", { default: 0 }),
        };
  const known = ["origin", "parent", "child", "axis", "limit", "dynamics", "mimic"];
  return {
    name: jname,
    el,
    type: type ?? "fixed",
    parent,
    parentEl,
    child,
    childEl,
    origin: origin(issues, el),
    axis,
    limit,
    dynamics,
    mimic,
    ignored: el.children.filter((c) => !known.includes(c.name)),
  };
}

/** Every element whose tag has a xacro prefix: a file that still needs `xacro`. */
function xacroElements(el: XmlElement, out: XmlElement[] = []): XmlElement[] {
  if (el.name.startsWith("xacro:")) out.push(el);
  else for (const c of el.children) xacroElements(c, out);
  return out;
}

/** Reads the robot; throws the issues found (UrdfImportError). */
export function readRobot(root: XmlElement, issues: Issues): UrdfRobot {
  if (root.name !== "robot")
    throw new UrdfImportError([
      {
        path: ["urdf"],
        element: root.name,
        line: root.line,
        message: `the root element is <${root.name}>; a URDF's is <robot>`,
        code: "invalid",
      },
    ]);
  const xacro = xacroElements(root);
  for (const x of xacro.slice(0, 5))
    issues.at(
      x,
      `<${x.name}>: xacro macros are not expanded here; run xacro on the file first`,
      "unsupported",
    );
  issues.check();
  const robot: UrdfRobot = {
    name: name(issues, root),
    el: root,
    links: [],
    joints: [],
    ignored: [],
  };
  for (const c of root.children) {
    if (c.name === "link") robot.links.push(link(issues, c, robot.ignored));
    else if (c.name === "joint") robot.joints.push(joint(issues, c));
    else if (c.name !== "material") robot.ignored.push(c);
  }
  const seen = new Map<string, XmlElement>();
  for (const x of [...robot.links, ...robot.joints]) {
    if (x.name === "") continue;
    const kind = x.el.name;
    const key = `${kind}:${x.name}`;
    const first = seen.get(key);
    if (first)
      issues.at(x.el, `a second ${kind} named "${x.name}" (the first is at line ${first.line})`);
    else seen.set(key, x.el);
  }
  if (robot.links.length === 0) issues.at(root, "the robot has no <link>");
  issues.check();
  return robot;
}
