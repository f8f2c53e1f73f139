/**
 * The model format: the single source of truth for what a client may post. Engine and
 * service types are inferred from these schemas; the OpenAPI document is generated from
 * them. SI units throughout, right-handed frames, quaternions [w, x, y, z].
 */
import { z } from "zod";
import { articulationIssues } from "./articulation";
import { denseOrderIssue, systemOrder } from "./cost";
import {
  consistentMassIssue,
  FEM_MAX_NODES,
  femIssues,
  femNodeCount,
  femNodeFixed,
  parseNodeRef,
} from "./fem";

/** zod 4 numbers are finite: NaN and ±Infinity are rejected. */
const finite = () => z.number();
const positive = () => z.number().positive();
const nonNegative = () => z.number().nonnegative();

export const Vec3 = z.tuple([finite(), finite(), finite()]).meta({ id: "Vec3" });
/**
 * Largest component of a vector the engine normalizes (quaternions, axes, normals): its
 * squares must not overflow (a quaternion [1e300, 1e300, 0, 0] was accepted, normalized
 * to zeros and the session diverged at its next step; a plane normal so large made the
 * contact solve NaN without naming it).
 */
const DIRECTION_MAX = 1e150;
const directionTooLarge = `components must be within ±${DIRECTION_MAX} (it is normalized)`;
const withinDirectionBound = (v: readonly number[]) => v.every((x) => Math.abs(x) <= DIRECTION_MAX);
export const Quaternion = z
  .tuple([finite(), finite(), finite(), finite()])
  .refine((q) => Math.hypot(...q) > 1e-12, "quaternion must have non-zero norm (it is normalized)")
  .refine(withinDirectionBound, `quaternion ${directionTooLarge}`)
  .meta({ id: "Quaternion", description: "[w, x, y, z]; normalized on load" });
const NonZeroVec3 = Vec3.refine((v) => Math.hypot(...v) > 1e-12, "vector must be non-zero").refine(
  withinDirectionBound,
  `vector ${directionTooLarge}`,
);

export const Id = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:-]+$/, "ids use letters, digits, _ . : -");

/**
 * A reference to a body: its id, or "<fem id>/<k>" for node k of a fem body (a particle;
 * schemas/fem.ts).
 */
export const BodyRef = z
  .string()
  .min(1)
  .max(160)
  .regex(
    /^[A-Za-z0-9_.:-]+(\/[0-9]+)?$/,
    'a body id, or "<fem id>/<node index>" for a node of a fem body',
  );

/** A point on a body, in that body's frame; "ground" (or no body) is the world frame. */
export const BodyPoint = z
  .strictObject({
    body: BodyRef.default("ground"),
    point: Vec3.default([0, 0, 0]),
  })
  .meta({ id: "BodyPoint" });

/** Most points of a `convex` shape and vertices of a `mesh` shape. */
export const SHAPE_MAX_VERTICES = 200_000;
/** Most triangles of a `mesh` shape. */
export const SHAPE_MAX_TRIANGLES = 200_000;

/**
 * Whether the points span 3-D, the check of src/engine/geometry/hull.ts (which builds the
 * hull) on the same tolerance: the widest axis pair, the farthest point from their line,
 * the farthest from their plane, each beyond 1e-11 of the extent plus 9 ε of the largest
 * coordinate. Returns what is degenerate, or null.
 */
export function flatnessIssue(points: readonly (readonly number[])[]): string | null {
  const n = points.length;
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  const loI = [0, 0, 0];
  const hiI = [0, 0, 0];
  let absMax = 0;
  points.forEach((p, i) => {
    for (let k = 0; k < 3; k++) {
      if (p[k] < lo[k]) [lo[k], loI[k]] = [p[k], i];
      if (p[k] > hi[k]) [hi[k], hiI[k]] = [p[k], i];
      absMax = Math.max(absMax, Math.abs(p[k]));
    }
  });
  const extent = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  const tol = 1e-11 * extent + 9 * Number.EPSILON * absMax;
  if (!(extent > 0)) return "all points coincide";
  let axis = 0;
  for (let k = 1; k < 3; k++) if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  const a = points[loI[axis]];
  const b = points[hiI[axis]];
  const e = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
  const el = Math.hypot(e[0], e[1], e[2]);
  let far = 0;
  let c = a;
  for (let i = 0; i < n; i++) {
    const r = [points[i][0] - a[0], points[i][1] - a[1], points[i][2] - a[2]];
    const d =
      Math.hypot(r[1] * e[2] - r[2] * e[1], r[2] * e[0] - r[0] * e[2], r[0] * e[1] - r[1] * e[0]) /
      el;
    if (d > far) [far, c] = [d, points[i]];
  }
  if (!(far > tol)) return "the points lie on a line";
  const f = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
  const m = [e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]];
  const ml = Math.hypot(m[0], m[1], m[2]);
  let off = 0;
  for (const p of points)
    off = Math.max(
      off,
      Math.abs(m[0] * (p[0] - a[0]) + m[1] * (p[1] - a[1]) + m[2] * (p[2] - a[2])) / ml,
    );
  if (!(off > tol)) return "the points lie in a plane";
  return null;
}

/**
 * Whether a triangle list is a closed surface: every edge used by exactly two triangles
 * in opposite directions (then the mesh bounds a solid with mass properties).
 */
export function meshIsClosed(triangles: readonly (readonly number[])[]): boolean {
  const use = new Map<string, number>();
  for (const t of triangles)
    for (let k = 0; k < 3; k++) {
      const key = `${t[k]},${t[(k + 1) % 3]}`;
      use.set(key, (use.get(key) ?? 0) + 1);
    }
  for (const [key, count] of use) {
    const [u, w] = key.split(",");
    if (count !== 1 || use.get(`${w},${u}`) !== 1) return false;
  }
  return true;
}

/** Local placement of a shape in its body's frame. */
const ShapePose = {
  position: Vec3.default([0, 0, 0]),
  orientation: Quaternion.default([1, 0, 0, 0]),
};
export const Shape = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("sphere"), radius: positive(), ...ShapePose }),
    z.strictObject({
      type: z.literal("plane"),
      normal: NonZeroVec3.default([0, 0, 1]),
      offset: finite().default(0),
      ...ShapePose,
    }),
    z.strictObject({
      type: z.literal("box"),
      halfExtents: z.tuple([positive(), positive(), positive()]),
      ...ShapePose,
    }),
    z.strictObject({
      type: z.literal("capsule"),
      radius: positive(),
      halfLength: nonNegative(),
      ...ShapePose,
    }),
    z.strictObject({
      type: z.literal("cylinder"),
      radius: positive(),
      halfLength: positive(),
      ...ShapePose,
    }),
    z
      .strictObject({
        type: z.literal("convex"),
        points: z.array(Vec3).min(4).max(SHAPE_MAX_VERTICES),
        ...ShapePose,
      })
      .superRefine((s, ctx) => {
        const issue = flatnessIssue(s.points);
        if (issue !== null)
          ctx.addIssue({
            code: "custom",
            path: ["points"],
            message: `convex: ${issue}, so their hull is degenerate (flat); a convex shape needs points spanning a volume`,
          });
      }),
    z
      .strictObject({
        type: z.literal("mesh"),
        vertices: z.array(Vec3).min(3).max(SHAPE_MAX_VERTICES),
        triangles: z
          .array(
            z.tuple([
              z.number().int().nonnegative(),
              z.number().int().nonnegative(),
              z.number().int().nonnegative(),
            ]),
          )
          .min(1)
          .max(SHAPE_MAX_TRIANGLES),
        ...ShapePose,
      })
      .superRefine((s, ctx) => {
        const x = s.vertices;
        let ext = 0;
        for (let k = 0; k < 3; k++) {
          let lo = Infinity;
          let hi = -Infinity;
          for (const v of x) {
            lo = Math.min(lo, v[k]);
            hi = Math.max(hi, v[k]);
          }
          ext = Math.max(ext, hi - lo);
        }
        for (let t = 0; t < s.triangles.length; t++) {
          const tri = s.triangles[t];
          // (refinements run on what failed the indices' own checks too: zod 4)
          const bad = tri.find((i) => !(Number.isInteger(i) && i >= 0 && i < x.length));
          const path = ["triangles", t];
          if (bad !== undefined) {
            ctx.addIssue({
              code: "custom",
              path,
              message: `mesh: triangle ${t} refers to vertex ${bad}; there are ${x.length} vertices`,
            });
            return;
          }
          const [a, b, c] = tri.map((i) => x[i]);
          const u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
          const v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
          const twice = Math.hypot(
            u[1] * v[2] - u[2] * v[1],
            u[2] * v[0] - u[0] * v[2],
            u[0] * v[1] - u[1] * v[0],
          );
          if (!(twice > 2e-12 * ext * ext)) {
            ctx.addIssue({
              code: "custom",
              path,
              message: `mesh: triangle ${t} is degenerate (zero area: repeated or collinear vertices)`,
            });
            return;
          }
        }
      }),
  ])
  .meta({
    id: "Shape",
    description:
      "plane: the solid is n·x ≤ offset (normal points out of it); capsule and cylinder axis: local z (halfLength: half the length of the axis segment; the cylinder has flat caps at z = ±halfLength); convex: the convex hull of `points` (shape frame; they must span a volume); mesh: triangles of `vertices` indices, counter-clockwise seen from outside (normals point out of the solid, or up from a terrain), colliding with every bounded shape but planes and meshes; a closed mesh gives mass properties, an open one (a terrain) needs a fixed body or an inertia",
  });

/** Whether a shape gives mass properties (a solid of positive volume). */
export function shapeIsSolid(s: z.output<typeof Shape>): boolean {
  if (s.type === "plane") return false;
  if (s.type === "mesh") return meshIsClosed(s.triangles);
  return true;
}

const Matrix3 = z.tuple([Vec3, Vec3, Vec3]);
export const Inertia = z.union([Vec3, Matrix3]).meta({
  description: "about the centre of mass in the body frame: [Ixx, Iyy, Izz] or a symmetric 3×3",
});

export const Body = z
  .strictObject({
    id: Id,
    kind: z.enum(["rigid", "particle"]).default("rigid"),
    fixed: z.boolean().default(false).meta({
      description: "does not move: its velocity and angularVelocity, if given, must be zero",
    }),
    mass: positive().optional(),
    position: Vec3.default([0, 0, 0]),
    orientation: Quaternion.default([1, 0, 0, 0]).meta({
      description: "[w, x, y, z]; a particle has none (the identity or left out)",
    }),
    velocity: Vec3.default([0, 0, 0]),
    angularVelocity: Vec3.default([0, 0, 0]).meta({
      description: "rad/s, world frame; zero for a particle",
    }),
    inertia: Inertia.optional().meta({
      description:
        "about the centre of mass in the body frame: [Ixx, Iyy, Izz] or a symmetric 3×3, positive definite, its principal moments a body's (the largest at most the sum of the other two); rigid bodies only",
    }),
    shapes: z.array(Shape).max(64).default([]),
  })
  .meta({ id: "Body" });

/**
 * A scalar function of time t (s): a number (constant), `{offset, rate}` (offset + rate t),
 * `{type:"sine", amplitude, frequency (Hz), phase (rad), offset}` or a piecewise-linear
 * `{type:"table", points: [[t, value], ...]}` (t ascending, held constant outside).
 */
export const TimeFunction = z
  .union([
    finite(),
    z.strictObject({
      type: z.literal("linear").optional(),
      offset: finite().default(0),
      rate: finite().default(0),
    }),
    z.strictObject({
      type: z.literal("sine"),
      amplitude: finite(),
      frequency: nonNegative(),
      phase: finite().default(0),
      offset: finite().default(0),
    }),
    z.strictObject({
      type: z.literal("table"),
      points: z
        .array(z.tuple([finite(), finite()]))
        .min(1)
        .max(100_000)
        .refine(
          (p) => p.every((x, i) => i === 0 || x[0] > p[i - 1][0]),
          "table times must be strictly ascending",
        ),
    }),
  ])
  .meta({ id: "TimeFunction" });

export const Force = z
  .discriminatedUnion("type", [
    z.strictObject({
      id: Id,
      type: z.literal("spring"),
      a: BodyPoint,
      b: BodyPoint,
      stiffness: nonNegative(),
      damping: nonNegative().default(0),
      restLength: nonNegative().optional().meta({ description: "default: the initial length" }),
    }),
    z.strictObject({
      id: Id,
      type: z.literal("pointForce"),
      at: BodyPoint,
      force: z.tuple([TimeFunction, TimeFunction, TimeFunction]).default([0, 0, 0]),
      torque: z.tuple([TimeFunction, TimeFunction, TimeFunction]).optional(),
      frame: z.enum(["world", "body"]).default("world").meta({
        description:
          "frame of force and torque: world (fixed directions) or body (a follower load, turning with the body)",
      }),
    }),
    z.strictObject({
      id: Id,
      type: z.literal("frameSpring"),
      a: BodyPoint,
      b: BodyPoint,
      stiffness: nonNegative(),
      rotaryStiffness: nonNegative(),
      damping: nonNegative().default(0),
      rotaryDamping: nonNegative().default(0),
    }),
    z.strictObject({
      id: Id,
      type: z.literal("damper"),
      bodies: z.array(BodyRef).optional().meta({ description: "default: every dynamic body" }),
      linear: nonNegative().default(0),
      angular: nonNegative().default(0),
    }),
  ])
  .meta({ id: "Force" });

/**
 * A joint limit lower ≤ q ≤ upper on the joint's coordinate (revolute angle in rad,
 * unwrapped, prismatic offset in m, both from the model pose): a unilateral constraint
 * with Newton's impact law (restitution) under the velocity-level integrators
 * (src/engine/actuators/limit-problem.ts), a compliant unilateral law (stiffness, damping) under
 * newmark and generalized-alpha (src/engine/actuators/joint-limit.ts).
 */
export const JointLimits = z
  .strictObject({
    lower: finite().meta({ description: "rad (revolute) or m (prismatic)" }),
    upper: finite().meta({ description: "rad (revolute) or m (prismatic)" }),
    restitution: z.number().min(0).max(1).optional().meta({
      description:
        "Newton's coefficient at the bounds, read by the velocity-level integrators (moreau-jean, backward-euler, symplectic-euler: the nonsmooth treatment) and refused with the others; absent: 0",
    }),
    stiffness: nonNegative().optional().meta({
      description:
        "the compliant law of newmark, generalized-alpha and articulated (refused with the others): N·m/rad or N/m; absent: m̃(2π/0.02 s)², m̃ = 1/(gᵀPg) the inertia the model's joints give the coordinate in the model pose, the other joints free",
    }),
    damping: nonNegative().optional().meta({
      description:
        "the compliant law's (as stiffness): N·m·s/rad or N·s/m; absent: 2m̃(2π/0.02 s) (critical with the default stiffness)",
    }),
  })
  .refine((l) => l.lower < l.upper, { message: "limits: lower must be below upper" })
  .meta({ id: "JointLimits" });

/**
 * A mimic joint (URDF <mimic>): this joint's coordinate follows another's,
 * q = multiplier·q_joint + offset (coordinates as in the State: rad or m from the model
 * pose, revolute angles unwrapped), held by one equality row
 * (src/engine/constraints/mimic.ts) whose reaction is reported as `<id>:mimic`.
 */
export const Mimic = z
  .strictObject({
    joint: Id.meta({ description: "the revolute or prismatic joint followed" }),
    multiplier: finite().default(1),
    offset: finite().default(0).meta({
      description:
        "rad or m; a model pose off the relation (offset ≠ 0) is projected onto it at the first step",
    }),
  })
  .meta({ id: "Mimic" });

const JointEnds = { id: Id, a: BodyPoint, b: BodyPoint };
export const Joint = z
  .discriminatedUnion("type", [
    z.strictObject({ ...JointEnds, type: z.literal("spherical") }),
    z.strictObject({
      ...JointEnds,
      type: z.literal("revolute"),
      axis: NonZeroVec3,
      limits: JointLimits.optional(),
      mimic: Mimic.optional(),
    }),
    z.strictObject({
      ...JointEnds,
      type: z.literal("prismatic"),
      axis: NonZeroVec3,
      limits: JointLimits.optional(),
      mimic: Mimic.optional(),
    }),
    z.strictObject({ ...JointEnds, type: z.literal("fixed") }),
    z.strictObject({
      ...JointEnds,
      type: z.literal("distance"),
      length: positive().optional().meta({
        description:
          "default: the initial distance; the two points must be apart at the model pose (their difference is the link's direction)",
      }),
    }),
  ])
  .meta({ id: "Joint", description: "axis in world coordinates for the configuration given" });

export const Motor = z
  .strictObject({
    id: Id,
    joint: Id,
    angle: TimeFunction.optional().meta({
      description: "revolute: angle (rad) from the model pose",
    }),
    offset: TimeFunction.optional().meta({
      description: "prismatic: offset (m) from the model pose",
    }),
  })
  .refine((m) => (m.angle === undefined) !== (m.offset === undefined), {
    message: "a motor drives exactly one of angle (revolute) or offset (prismatic)",
  })
  .meta({ id: "Motor" });

const EffortLimit = positive().optional().meta({
  description: "|effort| at most (N·m for a revolute joint, N for a prismatic one); absent: none",
});
/**
 * Actuators: a generalized effort τ along a revolute or prismatic joint's coordinate q
 * (src/engine/actuators/actuator.ts), positive driving q up. The command (effort or target) is a
 * time function of the model or set at run time by an input.
 */
export const Actuator = z
  .discriminatedUnion("type", [
    z.strictObject({
      id: Id,
      joint: Id,
      type: z.literal("torque"),
      effort: TimeFunction.default(0).meta({ description: "τ(t) (N·m or N)" }),
      effortLimit: EffortLimit,
    }),
    z.strictObject({
      id: Id,
      joint: Id,
      type: z.literal("velocity"),
      target: TimeFunction.default(0).meta({ description: "q̇*(t) (rad/s or m/s)" }),
      kv: nonNegative().meta({ description: "τ = kv (q̇* − q̇); N·m·s/rad or N·s/m" }),
      effortLimit: EffortLimit,
    }),
    z.strictObject({
      id: Id,
      joint: Id,
      type: z.literal("position"),
      target: TimeFunction.default(0).meta({
        description: "q*(t) (rad or m, from the model pose; revolute angles unwrapped)",
      }),
      kp: nonNegative().meta({ description: "N·m/rad or N/m" }),
      kd: nonNegative().default(0).meta({
        description: "τ = kp (q* − q) + kd (q̇* − q̇), q̇* the target's rate; N·m·s/rad or N·s/m",
      }),
      effortLimit: EffortLimit,
    }),
  ])
  .meta({ id: "Actuator" });

/**
 * Sensors: what a session observes each frame, concatenated in model order into the
 * state's flat `observation` vector (widths: time, joint and actuator sensors 1, vectors 3,
 * orientation 4).
 */
export const Sensor = z
  .discriminatedUnion("type", [
    z.strictObject({ id: Id, type: z.literal("time") }),
    z.strictObject({ id: Id, type: z.literal("jointPosition"), joint: Id }),
    z.strictObject({ id: Id, type: z.literal("jointVelocity"), joint: Id }),
    z.strictObject({ id: Id, type: z.literal("actuatorEffort"), actuator: Id }),
    z.strictObject({ id: Id, type: z.literal("bodyPosition"), body: BodyRef }),
    z.strictObject({ id: Id, type: z.literal("bodyOrientation"), body: BodyRef }),
    z.strictObject({ id: Id, type: z.literal("bodyVelocity"), body: BodyRef }),
    z.strictObject({ id: Id, type: z.literal("bodyAngularVelocity"), body: BodyRef }),
    z
      .strictObject({
        id: Id,
        type: z.literal("bodyAcceleration"),
        body: BodyRef,
      })
      .meta({ description: "(v_t − v_{t−h})/h over the last step (m/s²); 0 before the first" }),
    z
      .strictObject({
        id: Id,
        type: z.literal("contactForce"),
        bodies: z.tuple([Id, Id]),
      })
      .meta({
        description: "sum of the contact forces on the second body from the first (N, world)",
      }),
  ])
  .meta({ id: "Sensor" });

export const ContactBehavior = z
  .discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("linear"),
      stiffness: positive(),
      damping: nonNegative().default(0),
      stepDamping: nonNegative().default(0),
      perUnitArea: z.boolean().default(false),
    }),
    z.strictObject({
      type: z.literal("hertz"),
      youngModulus: positive(),
      poissonRatio: z.number().min(0).lt(0.5).default(0.3),
      damping: nonNegative().default(0),
      stepDamping: nonNegative().default(0),
    }),
    z.strictObject({
      type: z.literal("table"),
      points: z
        .array(z.tuple([nonNegative(), nonNegative()]))
        .min(2)
        .max(10_000)
        .meta({ description: "[penetration (m), force (N)] pairs, ascending, starting at [0, 0]" }),
      damping: nonNegative().default(0),
      stepDamping: nonNegative().default(0),
    }),
  ])
  .meta({ id: "ContactBehavior" });

export const ContactPair = z.strictObject({
  bodies: z.tuple([Id, Id]),
  restitution: z.number().min(0).max(1).optional(),
  friction: nonNegative().optional(),
});

/** contact.behavior unset: the compliant contact's force law (ArtiSynth's defaults' kind). */
export const DEFAULT_CONTACT_BEHAVIOR = {
  type: "linear",
  stiffness: 1e5,
  damping: 0,
  stepDamping: 0.5,
  perUnitArea: false,
} as const;

export const Contact = z
  .strictObject({
    method: z.enum(["nsc", "smc"]).default("nsc"),
    restitution: z.number().min(0).max(1).optional().meta({
      description:
        "nsc only: Newton's coefficient of restitution of every pair `pairs` does not list (a fem body's contacts take 0: its rebound comes from its elasticity); absent: 0",
    }),
    friction: nonNegative().optional().meta({
      description:
        "Coulomb's friction coefficient μ of every pair `pairs` does not list (smc: a tangential spring with history capped at μ F_n, README Contact); absent: 0",
    }),
    margin: nonNegative()
      .default(0.01)
      .meta({ description: "gap (m) under which contacts are tracked" }),
    behavior: ContactBehavior.optional().meta({
      description:
        "smc only: the compliant force law; absent: linear, stiffness 1e5 N/m, damping 0, stepDamping 0.5",
    }),
    pairs: z.array(ContactPair).max(10_000).default([]).meta({
      description: "friction (both methods) and restitution (nsc only) of pairs of bodies",
    }),
    collideJointed: z.boolean().default(false),
  })
  .meta({ id: "Contact" });

export const SolverSettings = z
  .strictObject({
    integrator: z
      .enum([
        "moreau-jean",
        "newmark",
        "generalized-alpha",
        "backward-euler",
        "symplectic-euler",
        "articulated",
      ])
      .default("moreau-jean")
      .meta({
        description:
          "articulated for trees of rigid bodies, with compliant contact or none (joint coordinates: the joints hold exactly; explicit, with error control; joint servos too stiff for its explicit steps taken implicitly), generalized-alpha for closed chains, other jointed mechanisms and stiff forces (long runs keep their energy), moreau-jean for nonsmooth contact and impacts, newmark for cloth and spring networks (the central difference where the step resolves them, see beta) and SOFA's scheme",
      }),
    dt: positive().max(1).default(0.005),
    theta: z.number().min(0).max(1).optional().meta({
      description:
        "moreau-jean's θ (the weight of the end-of-step forces; ½ the trapezoidal rule, 1 backward Euler); absent: 0.5",
    }),
    beta: z.number().min(0).max(0.5).optional().meta({
      description:
        "newmark's β; absent: 0 (the central difference, with gamma 0.5) when neither is set and the model is particles and springs alone (with gravity, point forces, dampers) whose highest frequency the step resolves well, h ω_max ≤ 1.8 (ω_max bounded by Gershgorin's theorem: ω_max² ≤ max over particles of Σ k (1 + √(m/m_other))/m over its springs), else 0.25, or 0.3025 with gamma 0.6 when neither is set and some spring's period is not resolved by the step (h √(k/m) > 1, m the lighter moving end's mass), which the trapezoidal rule would let ring and overstretch (README, Integrators)",
    }),
    gamma: z.number().min(0).max(1).optional().meta({
      description:
        "newmark's γ (with joints and Newton iterated, beta > 0: the applied forces', the joints held symmetrically, README, Integrators); absent: 0.5 (with beta 0 for a spring network the step resolves well, see beta), or 0.6 (with beta 0.3025) when neither is set and some spring's period is not resolved by the step (h √(k/m) > 1)",
    }),
    rhoInfinity: z.number().min(0).max(1).optional().meta({
      description:
        "generalized-alpha: spectral radius at infinite frequency of the applied forces' modes (1: no numerical dissipation, the symmetric scheme; lower damps stiff springs and compliant contact); absent: 1",
    }),
    stepTolerance: positive().nullable().optional().meta({
      description:
        "generalized-alpha: local error per step (m) above which a step is redone as two half steps, up to four times: h²/12 times the change over the step of the acceleration consistent with the joints (a function of the step's two ends, so that the halvings are chosen time-symmetrically and do not themselves drift the symmetric scheme's energy; the steps it accepts still err by about m v δx/h in energy each, δx the estimate), measured per body as the root-mean-square displacement of its mass √(δx² + δθᵀIδθ/m), the largest over bodies; absent: with rhoInfinity 1 (the symmetric scheme damps nothing it does not resolve) 3e-4 m per metre of a body's jointed group's body length, at most 3e-4 m (the body length: the mass-weighted mean over the moving rigid bodies the joints connect, directly or through others but not through a fixed body, of √(6 tr I/m), a box's diagonal, a thin rod's length, or of twice the body's farthest joint anchor from its centre of mass where that is longer; 1.5e-5 m for links of 0.05 m, where an absolute 3e-4 m let a 5-link chain's energy stray by 21 % of m g L/2 in 40 s, every step within it; per group, so that an unrelated body does not set a mechanism's tolerance: a free 1 m box beside that chain had loosened it to 2.6e-4 m and let it stray by 21 % again while the length was the model's mean; stepError is then in metres of the tightest group's tolerance, each other body's estimate weighted by the ratio of that to its own), off with rhoInfinity < 1; null: off; a number: that many metres, whatever the bodies. newmark: the same control on the steps it takes in generalized-alpha's form (a model with joints or motors, newtonIterations > 1 and beta > 0, without fem bodies: its joints held symmetrically); absent: generalized-alpha's default at every beta and gamma (its joints held symmetrically, nothing damps them: without it a whipping chain gains energy at its cracks until a step fails, the whip example at (0.3025, 0.6) at step 1311; its estimate also halves the first steps of a servo's jump to its target); null: off; not read by its other steps. moreau-jean and symplectic-euler: the same control, in metres, with the same default (generalized-alpha's at rhoInfinity 1), on their joint steps held at the position level (moreau-jean at theta 0.5, symplectic-euler), each sub-step above it halved, up to four times; also on steps in which a compliant contact switches (moreau-jean at theta < 1, symplectic-euler with explicit stiff forces) and on a nonsmooth contact step with servos the step does not resolve; null: off (backward-euler, and moreau-jean at theta 1, have no error control and refuse it). articulated: local error per sub-step (m) of its Runge–Kutta 5(4) pair (Tsitouras), measured the same way (the velocities' error as the displacement it makes over the step, dt, or over 5 ms when dt is shorter, so that a shorter step is never less accurate), which sets the sub-steps' length, within the scheme's stability region (at most 3/ρ, ρ the fastest rate of the motion its stages show: a stiff servo's or damper's decay is not left ringing at the boundary); absent: 1e-6; null: off (one sub-step per step, no bound)",
    }),
    rayleighMass: nonNegative().default(0).meta({
      description:
        "r_M (1/s) of the Rayleigh damping force −(r_M M + r_K K) v, taken at the end-of-step velocity by every integrator but articulated (refused there)",
    }),
    rayleighStiffness: nonNegative().default(0).meta({
      description:
        "r_K (s) of the Rayleigh damping force, K the tangent stiffness −∂f/∂x at the iterate; refused with articulated",
    }),
    velocityDamping: nonNegative().default(0).meta({
      description:
        "velocity decay rate (1/s): v ← v·exp(−h·velocityDamping) after each step (SOFA); newmark and the θ-schemes, refused with generalized-alpha and articulated",
    }),
    linearSolver: z
      .enum(["auto", "dense-lu", "sparse-ldlt", "sparse-lu", "sparse-qr", "cg", "minres", "gmres"])
      .default("auto"),
    linearTolerance: positive().max(0.1).nullable().optional().meta({
      description:
        "cg, minres, gmres (and auto where it runs one): relative residual of each Newton step's linear solve; absent or null: max(newtonTolerance, 1e-12), looser while iterated Newton is far from the solution",
    }),
    linearIterations: z.number().int().min(1).max(100_000).nullable().optional().meta({
      description:
        "cg, minres, gmres (and auto where it runs one): iterations per linear solve at most, the solve then taken as it is (SOFA's CG: 25 at a 1e-9 threshold); absent or null: max(200, 3n) and a solve that does not converge fails the step",
    }),
    linearPreconditioner: z.enum(["none", "jacobi", "ic0"]).nullable().optional().meta({
      description:
        "cg only: its preconditioner, on the assembled matrix (set, it makes CG run there also where the springs offer the matrix-free product; none with linearIterations 25 is SOFA's CGLinearSolver); absent or null: ic0 on the assembled matrix, and the matrix-free operator chooses its own (the mass, block Jacobi or a two-level one)",
    }),
    contactSolver: z
      .enum(["pgs", "nncg", "lemke", "apgd", "pjacobi", "barzilai-borwein"])
      .optional()
      .meta({
        description:
          'nonsmooth contact: the solver of its one-step problem (README, Contact); absent: "nncg"',
      }),
    maxIterations: z.number().int().min(1).max(100_000).nullable().optional().meta({
      description:
        "nonsmooth contact: sweeps (pgs, nncg, pjacobi), gradient steps (apgd, barzilai-borwein) or pivots (lemke) per step at most; absent or null: lemke 200, the others ⌈10⁴/contacts⌉ clamped to [20, 200] (about 10⁴ contact updates a step, at least 20 sweeps); a step that stops short of tolerance says contactConverged: false (README, Solver settings)",
    }),
    tolerance: positive().nullable().optional().meta({
      description:
        "nonsmooth contact: residual at which the contact solver stops (m/s for the contacts that push: the error of their relative velocity, normal and, where they stick, tangential); absent or null: 10⁻³·|g|·dt, so the drift it lets a resting contact make, dt·tolerance, is 10⁻³·|g|·dt² per step (1.7e-7 m at dt = 1/240 s); 10⁻⁶·ℓ/dt without gravity (ℓ: the smallest colliding shape's size, see projectionTolerance)",
    }),
    newtonIterations: z.number().int().min(1).max(100).nullable().optional().meta({
      description:
        "every integrator but articulated: Newton iterations per step at most; a step that does not converge to newtonTolerance in them is redone as two half steps (up to four times), then the run ends diverged. 1 = the linearized step (one iteration, no convergence test); absent or null: 25",
    }),
    newtonTolerance: positive().nullable().optional().meta({
      description:
        "Newton converges when the last correction Δa satisfies ‖Δa‖∞ ≤ newtonTolerance (1 + ‖a‖∞) (m/s², rad/s²), or, with joints, when the error it leaves, θ/(1 − θ) ‖Δa‖∞ with θ the corrections' contraction rate ‖Δa_k‖/‖Δa_k−1‖, does (the first two corrections' θ only where ‖Δa‖∞ is within 1e3 times the tolerance: the first may be a part Newton removes in one step, its ratio no rate); absent or null: 1e-10, and newmark and generalized-alpha without joints also stop once the position error Newton leaves, c_x ‖Δa‖∞ (c_x = β dt² for newmark), is below 5 % of the step's own local error estimate |β − 1/6| dt² ‖a(t+dt) − a(t)‖∞ (Zienkiewicz & Xie; generalized-alpha: the free accelerations; README, Integrators), except with fem bodies or a spring the step does not resolve (dt √(k/m) > 1) under newmark at gamma ½ or generalized-alpha at rhoInfinity 1 (README, Integrators); generalized-alpha at rhoInfinity < 1 also holds each servo the step does not resolve (dt·max(kd/Ĩ, √(kp/Ĩ)) > 1) to its own test, the correction along its coordinate within the tolerance divided by σ = (c_x kp + c_v kd)/Ĩ, down to the rounding of the unknown and of the servo's law (a correction moves the servo's effort by σ Ĩ times itself, an effort the end state does not balance)",
    }),
    gyroscopicJacobian: z.boolean().optional().meta({
      description:
        "every integrator but articulated: whether the gyroscopic torque's Jacobians enter the iteration matrix (and the tangent stiffness K of rayleighStiffness): false is cheaper (with joints and no other Jacobians, the step factors the symmetric G M⁻¹ Gᵀ) and loses nothing for axisymmetric bodies that do not spin about their axis (the torque vanishes), but a fast-spinning asymmetric body (h|ω| ≳ 0.3) diverges without them; absent: true",
    }),
    jointTolerance: positive().max(1e-3).nullable().optional().meta({
      description:
        "moreau-jean, newmark, backward-euler, symplectic-euler: joint drift (m, rad) the post-step projection leaves: positions are projected until ‖C‖∞ is below it, velocities until ‖G v + Ct‖∞ is below max(1e-9 (1 + its value before), 0.1·jointTolerance/dt) (moreau-jean at theta 0.5 closes them, motors included, by its Newton iterations on steps without active contacts or limits, as generalized-alpha, and on steps with them for the jointed groups they touch, motors included, whose step is redone with the contact impulses held (README, Integrators); so does symplectic-euler, whose forces are explicit but whose position-level joint rows are not linear (one correction left a hinge open by ~r φ²/2, φ the step's turn, and its sub-steps closed that with their joint forces, pumping energy); newmark with Newton iterated and beta > 0 closes them by its Newton iterations, as generalized-alpha (it takes its form); its linearized step with gamma > 0.5 holds the joints at the position level; after a step whose positions needed no projection its velocities are made tangent where the step linearized); absent or null: 1e-12. Not read by generalized-alpha (its Newton iterations close the joints, to newtonTolerance) nor articulated (its joints are its coordinates)",
    }),
    projectOnConstraints: z.boolean().optional().meta({
      description:
        "nonsmooth contact: after each step, project the positions out of penetration (Siconos' TimeSteppingProjectOnConstraints; without it the penetration of an impact, up to dt·|u_n|/2, is never recovered), and under moreau-jean first move the pushing contacts of the jointed groups whose step was redone at the position level back onto their surface where the step lifted them (README, Integrators); absent: true",
    }),
    projectionTolerance: positive().max(1).nullable().optional().meta({
      description:
        "projectOnConstraints with nonsmooth contact: deepest penetration (m) left after each step's position projection; absent or null: 2·10⁻³·ℓ, ℓ the smallest colliding shape's size (sphere or capsule radius, a box's smallest half extent, a cylinder's smaller of radius and half length, half the smallest side of a convex or mesh shape's bounding box; of the moving bodies and fem cells), 1e-4 m for 5 cm spheres; a step that stops short of it says projectionConverged: false",
    }),
    projectionIterations: z.number().int().min(1).max(100_000).nullable().optional().meta({
      description:
        "projectOnConstraints with nonsmooth contact: Gauss–Seidel sweeps of the position projection per step at most; absent or null: ⌈10⁴/contacts⌉ clamped to [20, 200], as maxIterations",
    }),
    energyDriftLimit: positive().nullable().optional().meta({
      description:
        "J; absent or null: off. A step after which |energy.error| (the balance of the total energy and the dissipated work: the integrator's own energy error) exceeds it ends the run `diverged` with the last good state",
    }),
  })
  .meta({ id: "SolverSettings" });

const NodeIndex = z.number().int().min(0).max(199_999);
const CellCount = z.number().int().min(1).max(1000);

export const FemBox = z
  .strictObject({
    size: z
      .tuple([positive(), positive(), positive()])
      .meta({ description: "edge lengths along the box's local x, y, z (m)" }),
    resolution: z.tuple([CellCount, CellCount, CellCount]).meta({
      description:
        "cells along x, y, z, each split into 5 tetrahedra; node (i, j, k) has the index i + (nx+1)(j + (ny+1) k)",
    }),
    center: Vec3.default([0, 0, 0]),
    orientation: Quaternion.default([1, 0, 0, 0]),
  })
  .meta({ id: "FemBox", description: "a box (beam) meshed with tetrahedra" });

export const FemAttachment = z
  .strictObject({
    node: NodeIndex,
    body: BodyRef.meta({ description: 'a body, "ground", or another fem body\'s node' }),
    point: Vec3.optional().meta({
      description: "in the body's frame; default: where the node is in the model's configuration",
    }),
  })
  .meta({
    id: "FemAttachment",
    description:
      "node held at a point of a body (a spherical joint, with its reaction in the State)",
  });

export const Fem = z
  .strictObject({
    id: Id,
    nodes: z
      .array(Vec3)
      .min(4)
      .max(200_000)
      .optional()
      .meta({ description: "rest positions (m, world frame), with elements" }),
    elements: z
      .array(z.tuple([NodeIndex, NodeIndex, NodeIndex, NodeIndex]))
      .min(1)
      .max(1_000_000)
      .optional()
      .meta({ description: "linear tetrahedra as 4 node indices (either orientation)" }),
    box: FemBox.optional(),
    density: positive().meta({ description: "kg/m³" }),
    youngModulus: positive().meta({ description: "Pa" }),
    poissonRatio: z.number().gt(-1).lt(0.5).default(0.3),
    material: z.enum(["corotational", "stvk", "neo-hookean"]).default("corotational"),
    tangent: z.enum(["exact", "approximate"]).default("exact").meta({
      description:
        "corotational: exact (with the rotation's variation) or approximate (R K₀ Rᵀ: SPD, exact only at rest and in rigid motion)",
    }),
    velocity: Vec3.default([0, 0, 0]).meta({ description: "initial velocity of every node (m/s)" }),
    fixedNodes: z.array(NodeIndex).max(200_000).default([]),
    fixedFaces: z
      .array(z.enum(["-x", "+x", "-y", "+y", "-z", "+z"]))
      .max(6)
      .default([])
      .meta({ description: "box: the nodes of these faces (local axes) are fixed" }),
    attachments: z.array(FemAttachment).max(200_000).default([]),
    mass: z.enum(["lumped", "consistent"]).default("lumped").meta({
      description:
        "lumped: ρV/4 from each element to each of its nodes; consistent: the element mass matrix ρV/20 (1 + δ_ab) (newmark and generalized-alpha only)",
    }),
    contact: z.boolean().default(true).meta({
      description:
        "its surface vertices collide with the bodies' shapes (with a model `contact` block; vertex areas for smc)",
    }),
  })
  .meta({
    id: "Fem",
    description:
      'a deformable body of linear tetrahedra (README, Methods, "Deformable bodies"); its nodes are particles with the ids `<id>/<k>` (k from 0) and the lumped masses (ρV/4 from each element), which forces, joints, sensors and inputs may name',
  });

const ModelObject = z.strictObject({
  name: z.string().max(256).default("model"),
  gravity: Vec3.default([0, 0, -9.81]),
  bodies: z.array(Body).min(1).max(100_000),
  fem: z.array(Fem).max(1000).default([]),
  forces: z.array(Force).max(1_000_000).default([]),
  joints: z.array(Joint).max(100_000).default([]),
  motors: z.array(Motor).max(100_000).default([]),
  actuators: z.array(Actuator).max(100_000).default([]),
  sensors: z.array(Sensor).max(10_000).default([]),
  contact: Contact.optional(),
  solver: SolverSettings.default(SolverSettings.parse({})),
});

/** Points closer than this (m, relative to their distance from the origin past 1 m) coincide. */
const COINCIDENT = 1e-12;

/** Whether a joint end cannot move: the ground or a fixed body (a fem node can). */
function cannotMove(ref: string, bodies: Map<string, BodyIn>): boolean {
  return ref === "ground" || bodies.get(ref)?.fixed === true;
}

/**
 * A body point in world coordinates at the model pose (m): x + R(q) r, q the body's
 * orientation normalized (a particle's is the identity); the ground's point as it is.
 * Null for a fem node or an unknown body (checked elsewhere).
 */
function modelPosePoint(
  end: { body: string; point: readonly number[] },
  bodies: Map<string, BodyIn>,
): [number, number, number] | null {
  const [rx, ry, rz] = end.point;
  if (end.body === "ground") return [rx, ry, rz];
  const b = bodies.get(end.body);
  if (!b) return null;
  const [x, y, z] = b.position ?? [0, 0, 0];
  const q = b.orientation ?? [1, 0, 0, 0];
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  const w = q[0] / n;
  const u = [q[1] / n, q[2] / n, q[3] / n];
  // R r = r + 2w (u × r) + 2 u × (u × r)
  const c = [u[1] * rz - u[2] * ry, u[2] * rx - u[0] * rz, u[0] * ry - u[1] * rx];
  const cc = [u[1] * c[2] - u[2] * c[1], u[2] * c[0] - u[0] * c[2], u[0] * c[1] - u[1] * c[0]];
  return [
    x + rx + 2 * (w * c[0] + cc[0]),
    y + ry + 2 * (w * c[1] + cc[1]),
    z + rz + 2 * (w * c[2] + cc[2]),
  ];
}

/**
 * Cross-reference checks: unique ids, known bodies and joints, derivable inertia, a dense
 * solver only under its size limit (schemas/cost.ts).
 */
function checkReferences(m: z.infer<typeof ModelObject>, ctx: z.RefinementCtx): void {
  const seen = new Map<string, string>();
  const bodies = new Map(m.bodies.map((b) => [b.id, b]));
  const claim = (id: string, path: (string | number)[]) => {
    if (id === "ground")
      ctx.addIssue({ code: "custom", path, message: `"ground" is reserved for the world frame` });
    else if (seen.has(id))
      ctx.addIssue({
        code: "custom",
        path,
        message: `duplicate id "${id}" (also used at ${seen.get(id)})`,
      });
    else seen.set(id, path.join("."));
  };
  const femNodes = new Map(m.fem.map((f) => [f.id, femNodeCount(f)]));
  const allNodes = m.fem.reduce((s, f) => s + femNodeCount(f), 0);
  if (allNodes > FEM_MAX_NODES)
    ctx.addIssue({
      code: "custom",
      path: ["fem"],
      message: `the fem bodies have ${allNodes} nodes together, above the limit of ${FEM_MAX_NODES}`,
    });
  const knownBody = (owner: string, ref: string, path: (string | number)[]) => {
    if (ref === "ground" || bodies.has(ref)) return;
    const node = parseNodeRef(ref);
    const count = node === null ? undefined : femNodes.get(node.fem);
    if (node === null || count === undefined)
      ctx.addIssue({ code: "custom", path, message: `${owner} refers to unknown body "${ref}"` });
    else if (node.node >= count)
      ctx.addIssue({
        code: "custom",
        path,
        message: `${owner} refers to node ${node.node} of fem "${node.fem}", which has ${count} nodes`,
      });
  };
  m.bodies.forEach((b, i) => {
    claim(b.id, ["bodies", i, "id"]);
    if (b.fixed) return;
    if (b.mass === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["bodies", i, "mass"],
        message: `body "${b.id}": a dynamic body needs a positive mass`,
      });
    if (b.kind === "rigid" && b.inertia === undefined && !b.shapes.some(shapeIsSolid))
      ctx.addIssue({
        code: "custom",
        path: ["bodies", i, "inertia"],
        message: `body "${b.id}": inertia is required when no sphere, box, capsule, cylinder, convex or closed mesh shape gives it`,
      });
    if (b.kind === "particle" && b.shapes.some((s) => s.type !== "sphere"))
      ctx.addIssue({
        code: "custom",
        path: ["bodies", i, "shapes"],
        message: `particle "${b.id}" may carry only spheres`,
      });
    if (b.inertia !== undefined && !inertiaIsSpd(b.inertia))
      ctx.addIssue({
        code: "custom",
        path: ["bodies", i, "inertia"],
        message: `body "${b.id}": inertia must be symmetric positive definite`,
      });
    else if (b.inertia !== undefined) {
      const issue = triangleInequalityIssue(b.inertia);
      if (issue)
        ctx.addIssue({
          code: "custom",
          path: ["bodies", i, "inertia"],
          message: `body "${b.id}": ${issue}`,
        });
    }
  });
  m.fem.forEach((f, i) => {
    claim(f.id, ["fem", i, "id"]);
    for (const issue of femIssues(f, i)) ctx.addIssue({ code: "custom", ...issue });
    f.attachments.forEach((a, k) => {
      const path = ["fem", i, "attachments", k, "body"];
      knownBody(`fem "${f.id}" attachment ${k}`, a.body, path);
      const ref = parseNodeRef(a.body);
      if (ref !== null && ref.fem === f.id && ref.node === a.node)
        ctx.addIssue({
          code: "custom",
          path,
          message: `fem "${f.id}" attachment ${k} attaches node ${a.node} to itself`,
        });
      else if (femNodeFixed(f, a.node) && cannotMove(a.body, bodies))
        ctx.addIssue({
          code: "custom",
          path,
          message: `fem "${f.id}" attachment ${k}: node ${a.node} is fixed and "${a.body}" cannot move`,
        });
    });
  });
  m.forces.forEach((f, i) => {
    claim(f.id, ["forces", i, "id"]);
    if (f.type === "spring" || f.type === "frameSpring") {
      knownBody(`force "${f.id}"`, f.a.body, ["forces", i, "a", "body"]);
      knownBody(`force "${f.id}"`, f.b.body, ["forces", i, "b", "body"]);
    } else if (f.type === "pointForce")
      knownBody(`force "${f.id}"`, f.at.body, ["forces", i, "at", "body"]);
    else
      f.bodies?.forEach((id, k) => {
        knownBody(`force "${f.id}"`, id, ["forces", i, "bodies", k]);
      });
  });
  const joints = new Map(m.joints.map((j) => [j.id, j]));
  m.joints.forEach((j, i) => {
    claim(j.id, ["joints", i, "id"]);
    if ((j.type === "revolute" || j.type === "prismatic") && j.limits && !hasCoordinate(j, bodies))
      ctx.addIssue({ code: "custom", path: ["joints", i, "limits"], message: noCoordinate(j) });
    knownBody(`joint "${j.id}"`, j.a.body, ["joints", i, "a", "body"]);
    knownBody(`joint "${j.id}"`, j.b.body, ["joints", i, "b", "body"]);
    if (j.a.body === j.b.body)
      ctx.addIssue({
        code: "custom",
        path: ["joints", i, "b", "body"],
        message: `joint "${j.id}" joins body "${j.a.body}" to itself`,
      });
    else if (cannotMove(j.a.body, bodies) && cannotMove(j.b.body, bodies))
      ctx.addIssue({
        code: "custom",
        path: ["joints", i],
        message: `joint "${j.id}" joins "${j.a.body}" and "${j.b.body}", neither of which can move`,
      });
    else if (j.type === "distance") {
      // the link's direction is b's point less a's: none where they coincide (and no
      // length to keep when `length` is left out); the engine refused the model at ["model"]
      // or, given a length, kept the link's direction undefined (the body never moved)
      const pa = modelPosePoint(j.a, bodies);
      const pb = modelPosePoint(j.b, bodies);
      if (pa && pb) {
        const gap = Math.hypot(pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]);
        if (!(gap > COINCIDENT * Math.max(1, Math.hypot(...pa))))
          ctx.addIssue({
            code: "custom",
            path: ["joints", i, "b", "point"],
            message: `distance joint "${j.id}": its two points coincide at the model pose (at ${JSON.stringify(pa)}), so the link has no direction: move one of them`,
          });
      }
    }
  });
  checkMimics(m.joints, bodies, ctx);
  // one motor per joint: two would prescribe the same coordinate twice (redundant or
  // contradictory rows)
  const driven = new Map<string, string>();
  m.motors.forEach((mo, i) => {
    claim(mo.id, ["motors", i, "id"]);
    const j = joints.get(mo.joint);
    const other = driven.get(mo.joint);
    if (other !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["motors", i, "joint"],
        message: `motor "${mo.id}" drives joint "${mo.joint}", which motor "${other}" already drives`,
      });
    driven.set(mo.joint, mo.id);
    if (!j)
      ctx.addIssue({
        code: "custom",
        path: ["motors", i, "joint"],
        message: `motor "${mo.id}" refers to unknown joint "${mo.joint}"`,
      });
    else if (mo.angle !== undefined && j.type !== "revolute")
      ctx.addIssue({
        code: "custom",
        path: ["motors", i, "angle"],
        message: `motor "${mo.id}": angle drives a revolute joint, "${j.id}" is ${j.type}`,
      });
    else if (mo.offset !== undefined && j.type !== "prismatic")
      ctx.addIssue({
        code: "custom",
        path: ["motors", i, "offset"],
        message: `motor "${mo.id}": offset drives a prismatic joint, "${j.id}" is ${j.type}`,
      });
    else if ((j.type === "revolute" || j.type === "prismatic") && j.mimic)
      ctx.addIssue({
        code: "custom",
        path: ["motors", i, "joint"],
        message: `motor "${mo.id}" drives joint "${j.id}", which mimics "${j.mimic.joint}" (two prescriptions of one coordinate)`,
      });
  });
  m.actuators.forEach((ac, i) => {
    claim(ac.id, ["actuators", i, "id"]);
    const j = joints.get(ac.joint);
    const path = ["actuators", i, "joint"];
    if (!j)
      ctx.addIssue({
        code: "custom",
        path,
        message: `actuator "${ac.id}" refers to unknown joint "${ac.joint}"`,
      });
    else if (!hasCoordinate(j, bodies))
      ctx.addIssue({ code: "custom", path, message: `actuator "${ac.id}": ${noCoordinate(j)}` });
    else if (driven.has(ac.joint))
      ctx.addIssue({
        code: "custom",
        path,
        message: `actuator "${ac.id}" acts on joint "${ac.joint}", which motor "${driven.get(ac.joint)}" prescribes`,
      });
  });
  const actuators = new Set(m.actuators.map((a) => a.id));
  m.sensors.forEach((se, i) => {
    claim(se.id, ["sensors", i, "id"]);
    if (se.type === "jointPosition" || se.type === "jointVelocity") {
      const j = joints.get(se.joint);
      if (!j)
        ctx.addIssue({
          code: "custom",
          path: ["sensors", i, "joint"],
          message: `sensor "${se.id}" refers to unknown joint "${se.joint}"`,
        });
      else if (!hasCoordinate(j, bodies))
        ctx.addIssue({
          code: "custom",
          path: ["sensors", i, "joint"],
          message: `sensor "${se.id}": ${noCoordinate(j)}`,
        });
    } else if (se.type === "actuatorEffort") {
      if (!actuators.has(se.actuator))
        ctx.addIssue({
          code: "custom",
          path: ["sensors", i, "actuator"],
          message: `sensor "${se.id}" refers to unknown actuator "${se.actuator}"`,
        });
    } else if (se.type === "contactForce")
      se.bodies.forEach((id, k) => {
        knownBody(`sensor "${se.id}"`, id, ["sensors", i, "bodies", k]);
      });
    else if (se.type !== "time") {
      // a body or a fem node; not "ground" (knownBody lets it pass)
      if (se.body === "ground")
        ctx.addIssue({
          code: "custom",
          path: ["sensors", i, "body"],
          message: `sensor "${se.id}" refers to unknown body "ground"`,
        });
      else knownBody(`sensor "${se.id}"`, se.body, ["sensors", i, "body"]);
    }
  });
  m.contact?.pairs.forEach((p, i) => {
    p.bodies.forEach((id, k) => {
      // a fem body's id names all its nodes (their surface vertices' contacts)
      if (!femNodes.has(id))
        knownBody(`contact pair ${i}`, id, ["contact", "pairs", i, "bodies", k]);
    });
    // fem contacts take restitution 0 (contact/nonsmooth-contact.ts, README Deformable bodies)
    const fem = p.bodies.find(
      (id) => femNodes.has(id) || femNodes.has(parseNodeRef(id)?.fem ?? ""),
    );
    if (fem !== undefined && (p.restitution ?? 0) > 0)
      ctx.addIssue({
        code: "custom",
        path: ["contact", "pairs", i, "restitution"],
        message: `contact pair ${i}: restitution ${p.restitution} names fem body "${fem}", whose contacts take restitution 0 (Newton's law node by node makes energy; the body's rebound comes from its elasticity): remove it or set 0`,
      });
  });
  const dense = denseOrderIssue(m.solver.linearSolver, systemOrder(m));
  if (dense !== null)
    ctx.addIssue({ code: "custom", path: ["solver", "linearSolver"], message: dense });
  const mass = consistentMassIssue(m.fem, m.solver.integrator);
  if (mass !== null) ctx.addIssue({ code: "custom", ...mass });
  const decay = velocityDampingIssue(m.solver);
  if (decay !== null)
    ctx.addIssue({ code: "custom", path: ["solver", "velocityDamping"], message: decay });
  for (const issue of articulationIssues(m)) ctx.addIssue({ code: "custom", ...issue });
}

/**
 * solver.velocityDamping (SOFA's velocity decay) acts in newmark and the θ-schemes;
 * generalized-alpha, whose step carries accelerations and an error estimate that a decay
 * between steps would falsify, damps by rhoInfinity and the Rayleigh terms instead. The
 * message for a non-zero decay with it, else null (also checked on PATCH).
 */
export function velocityDampingIssue(
  solver: Pick<SolverSpec, "integrator" | "velocityDamping">,
): string | null {
  if (solver.integrator !== "generalized-alpha" || solver.velocityDamping === 0) return null;
  return `velocityDamping ${solver.velocityDamping} is not applied by generalized-alpha (it damps by rhoInfinity, rayleighMass and rayleighStiffness); set it to 0 or choose newmark or a θ-scheme`;
}

/** The integrators that solve each step by Newton iterations (all but articulated). */
const NEWTON_INTEGRATORS = [
  "moreau-jean",
  "newmark",
  "generalized-alpha",
  "backward-euler",
  "symplectic-euler",
] as const;
const newton: SettingReaders = { choice: "integrator", by: NEWTON_INTEGRATORS };
/**
 * The integrators whose joints the post-step projection holds (src/engine/integrators
 * joint-projection.ts, their projectionOrder "velocities-first" or "positions-first"):
 * generalized-alpha's order is "none" (its Newton iterations hold the joints at the position
 * level, to newtonTolerance, and projecting its velocities would perturb the scheme), and
 * articulated's joints are its coordinates, so neither reads jointTolerance.
 */
const PROJECTING_INTEGRATORS = [
  "moreau-jean",
  "newmark",
  "backward-euler",
  "symplectic-euler",
] as const;
const krylov: SettingReaders = { choice: "linearSolver", by: ["auto", "cg", "minres", "gmres"] };

/**
 * The solver settings that only some choices read: an integrator's own parameters, the
 * Newton iterations' and the Krylov solvers' (`auto` may run one; not articulated, which
 * has neither), the joints' post-step projection's (jointTolerance), and the nonsmooth
 * contact solver's and projection's (a model with contact.method "nsc"). A model that sets
 * one where its choices do not read it is refused naming it, rather than run without it; a
 * PATCH that changes the integrator or the linear solver drops the settings only the
 * previous choice read (patchSolver). Each setting is read where every listed choice is one
 * that reads it. None of them has a schema default: a value zod filled in could not be
 * told from one the model sets, and would pass here unread (newtonIterations 3 with
 * articulated was once taken and ignored); the engine fills their defaults in
 * (src/engine/simulation/solver-defaults.ts resolveSolver, integrators/factory.ts).
 */
const SETTING_READERS: { [K in keyof SolverSpec]?: readonly SettingReaders[] } = {
  theta: [{ choice: "integrator", by: ["moreau-jean"] }],
  beta: [{ choice: "integrator", by: ["newmark"] }],
  gamma: [{ choice: "integrator", by: ["newmark"] }],
  rhoInfinity: [{ choice: "integrator", by: ["generalized-alpha"] }],
  // not backward-euler: its steps (θ = w = 1, joints at the velocity level) have no error
  // control, every servo resolved by its weight 1 (integrators/theta-scheme.ts)
  stepTolerance: [
    {
      choice: "integrator",
      by: ["generalized-alpha", "newmark", "articulated", "moreau-jean", "symplectic-euler"],
    },
  ],
  newtonTolerance: [newton],
  // The Newton integrators' budget (integrators/factory.ts); articulated takes none.
  // symplectic-euler's forces are explicit, so its step is one iteration whatever the
  // budget unless rayleighStiffness > 0 (its one implicit force, acceleration-step.ts
  // `solve`); the readers go by the choices alone, as newtonTolerance's.
  newtonIterations: [newton],
  // The gyroscopic torque's Jacobians (forces/gyroscopic.ts) enter the iteration matrix and
  // the tangent stiffness K of the Rayleigh term (iteration-matrix.ts assemble,
  // stiffnessTimes), which only the Newton integrators solve with (symplectic-euler only
  // with rayleighStiffness > 0, its one implicit force); articulated evaluates the torque
  // alone (applyForces, which the flag leaves as it is) and refuses the Rayleigh terms.
  gyroscopicJacobian: [newton],
  jointTolerance: [{ choice: "integrator", by: PROJECTING_INTEGRATORS }],
  linearTolerance: [krylov, newton],
  linearIterations: [krylov, newton],
  linearPreconditioner: [{ choice: "linearSolver", by: ["cg"] }, newton],
  contactSolver: [{ choice: "contact", by: ["nsc"] }],
  maxIterations: [{ choice: "contact", by: ["nsc"] }],
  projectOnConstraints: [{ choice: "contact", by: ["nsc"] }],
  tolerance: [{ choice: "contact", by: ["nsc"] }],
  projectionTolerance: [{ choice: "contact", by: ["nsc"] }],
  projectionIterations: [{ choice: "contact", by: ["nsc"] }],
};

interface SettingReaders {
  choice: keyof SolverChoices;
  /** The values of `choice` that read the setting. */
  by: readonly string[];
}

/** The model's contact method as the solver settings see it ("none" without contact). */
export type ContactMethod = "nsc" | "smc" | "none";

/** What decides whether a solver setting is read. */
interface SolverChoices {
  integrator: SolverSpec["integrator"];
  linearSolver: SolverSpec["linearSolver"];
  contact: ContactMethod;
}

/** The contact method of a model (or of anything with its optional contact block). */
export function contactMethodOf(model: { contact?: { method?: string } | null }): ContactMethod {
  if (model.contact == null) return "none";
  return model.contact.method === "smc" ? "smc" : "nsc";
}

/** The first of `key`'s readers that the choices fail, or null where they read it. */
function unmetReader(choices: SolverChoices, key: keyof SolverSpec): SettingReaders | null {
  for (const r of SETTING_READERS[key] ?? []) if (!r.by.includes(choices[r.choice])) return r;
  return null;
}

/** Whether the choices read `key` (every setting but those of SETTING_READERS). */
function isRead(choices: SolverChoices, key: keyof SolverSpec): boolean {
  return unmetReader(choices, key) === null;
}

const choicesOf = (solver: SolverChoicesIn, contact: ContactMethod): SolverChoices => ({
  integrator: solver.integrator,
  linearSolver: solver.linearSolver,
  contact,
});

type SolverChoicesIn = Pick<SolverSpec, "integrator" | "linearSolver"> & Partial<SolverSpec>;

/**
 * The settings `solver` sets (neither absent nor null) that its integrator, its linear solver
 * or the model's contact (`contact`) does not read, with why.
 */
export function unreadSolverSettings(
  solver: SolverChoicesIn,
  contact: ContactMethod,
): { key: keyof SolverSpec; message: string }[] {
  const choices = choicesOf(solver, contact);
  const out: { key: keyof SolverSpec; message: string }[] = [];
  for (const key of Object.keys(SETTING_READERS) as (keyof SolverSpec)[]) {
    const unmet = solver[key] == null ? null : unmetReader(choices, key);
    if (unmet === null) continue;
    const { choice, by } = unmet;
    const names = by.map((v) => `"${v}"`).join(", ");
    out.push({
      key,
      message:
        choice === "contact"
          ? `${key} is read only with nonsmooth contact (contact.method "nsc"), and this model has ${contact === "smc" ? "compliant contact" : "no contact"}: remove it`
          : by === NEWTON_INTEGRATORS
            ? `${key} is read only by the Newton iterations of the other integrators, and "${choices.integrator}" has none (it steps explicitly, without linear solves): remove it or choose one of ${names}`
            : by === PROJECTING_INTEGRATORS
              ? `${key} is read only by the joints' post-step projection of ${names}, and "${choices.integrator}" runs none (${choices.integrator === "articulated" ? "its joints are its coordinates" : "its Newton iterations close the joints, to newtonTolerance"}): remove it or choose one of those`
              : `${key} is read only with ${choice} ${names}, not "${choices[choice]}": remove it or choose ${by.length > 1 ? "one of those" : names}`,
    });
  }
  // moreau-jean at θ = 1 weighs its forces as backward Euler does (integrators/factory.ts:
  // w = θ), whose steps have no error control: the tolerance would be taken and not read
  if (solver.integrator === "moreau-jean" && solver.theta === 1 && solver.stepTolerance != null)
    out.push({
      key: "stepTolerance",
      message:
        'stepTolerance is not read by "moreau-jean" at theta 1 (backward Euler\'s weighting, whose steps have no error control): remove it or set theta below 1',
    });
  return out;
}

/**
 * `spec` with a PATCH's solver settings applied. A patch that changes the integrator or the
 * linear solver drops the settings only the previous choice read, unless it names them (a
 * named one is then checked by unreadSolverSettings like a model's). A key the patch gives
 * as undefined is unset (no JSON carries one: a restored snapshot's solver that leaves out
 * a setting its model sets, Simulation.restoreSnapshot).
 */
export function patchSolver(
  spec: SolverSpec,
  patch: Partial<SolverSpec>,
  contact: ContactMethod,
): SolverSpec {
  const next: SolverSpec = { ...spec, ...patch };
  for (const key of Object.keys(patch) as (keyof SolverSpec)[])
    if (patch[key] === undefined) delete next[key];
  const choices = choicesOf(next, contact);
  // null included: generalized-alpha's stepTolerance null (its error control off) does not
  // outlast a switch to moreau-jean and back, as beta and gamma do not outlast one away from
  // newmark
  for (const key of Object.keys(SETTING_READERS) as (keyof SolverSpec)[])
    if (patch[key] === undefined && next[key] !== undefined && !isRead(choices, key))
      delete next[key];
  return next;
}

/**
 * A stored solver spec (a snapshot's or a recording's) without the settings its choices do
 * not read, which versions before that check filled in or accepted (theta and rhoInfinity
 * with every integrator; newtonIterations, gyroscopicJacobian and jointTolerance, schema
 * defaults once, with articulated, and jointTolerance with generalized-alpha): dropping them
 * changes nothing a step computes.
 */
export function withoutUnreadSettings(spec: SolverSpec, contact: ContactMethod): SolverSpec {
  return patchSolver(spec, {}, contact);
}

type ContactIn = Partial<z.output<typeof Contact>>;

/**
 * The contact settings that one method alone reads: restitution, also a pair's (nonsmooth
 * contact), behavior (compliant contact), each set where the model's `method` does not
 * read it, with why (a model refused; a PATCH too, Simulation.update). Friction, the
 * default's and the pairs', both read.
 */
export function unreadContactSettings(
  contact: ContactIn,
  method: "nsc" | "smc",
): { key: keyof ContactIn; message: string }[] {
  const out: { key: keyof ContactIn; message: string }[] = [];
  if (method === "smc") {
    const why =
      "compliant contact's loss at an impact is its behavior's damping (damping, stepDamping), and the coefficient of restitution that gives depends on the impact's speed and the force law, so no fixed e is modelled: set the damping";
    if (contact.restitution !== undefined)
      out.push({
        key: "restitution",
        message: `contact.restitution is read only by nonsmooth contact (method "nsc"): ${why}; remove it or choose "nsc"`,
      });
    const k = contact.pairs?.findIndex((p) => p.restitution !== undefined) ?? -1;
    if (k >= 0)
      out.push({
        key: "pairs",
        message: `contact.pairs[${k}].restitution is read only by nonsmooth contact (method "nsc"): ${why}; remove it (a pair's friction stays) or choose "nsc"`,
      });
  } else if (contact.behavior !== undefined)
    out.push({
      key: "behavior",
      message: `contact.behavior is the compliant contact's force law (method "smc"); nonsmooth contact does not read it: remove it or choose "smc"`,
    });
  return out;
}

/**
 * A stored contact block (a snapshot's or a recording's) without the settings its method does
 * not read (versions before that check filled restitution, friction and behavior in).
 */
export function withoutUnreadContact<C extends ContactIn & { method: "nsc" | "smc" }>(
  contact: C,
): C {
  const out = { ...contact };
  for (const u of unreadContactSettings(contact, contact.method)) {
    if (u.key === "pairs")
      out.pairs = (contact.pairs ?? []).map(({ restitution: _, ...pair }) => pair);
    else delete out[u.key];
  }
  return out;
}

type LimitsIn = z.output<typeof JointLimits>;

/**
 * The joint-limit settings that one family of integrators alone reads, each set where the
 * model's integrator does not read it, with why: restitution is the velocity-level
 * integrators' impact law (actuators/limit-problem.ts), stiffness and damping the compliant
 * law of newmark, generalized-alpha and articulated (actuators/joint-limit.ts). A new model
 * is refused with them; a PATCH of the integrator switches the law (the model's settings of
 * the other law, or their defaults).
 */
export function unreadLimitSettings(
  joint: string,
  limits: LimitsIn,
  integrator: SolverSpec["integrator"],
): { key: "restitution" | "stiffness" | "damping"; message: string }[] {
  const out: ReturnType<typeof unreadLimitSettings> = [];
  if (VELOCITY_LEVEL_INTEGRATORS.includes(integrator)) {
    for (const key of ["stiffness", "damping"] as const)
      if (limits[key] !== undefined)
        out.push({
          key,
          message: `joint "${joint}": limits.${key} belongs to the compliant law of newmark, generalized-alpha and articulated; ${integrator} holds the limits by impacts (limits.restitution): remove it or choose one of those integrators`,
        });
  } else if (limits.restitution !== undefined)
    out.push({
      key: "restitution",
      message: `joint "${joint}": limits.restitution is the impact law of the velocity-level integrators (moreau-jean, backward-euler, symplectic-euler); ${integrator} holds the limits by a compliant law (limits.stiffness, limits.damping): remove it or choose one of those integrators`,
    });
  return out;
}

/** The joints' limits without the settings the model's integrator does not read. */
function withoutUnreadLimits(model: ModelSpec): ModelSpec["joints"] {
  return model.joints.map((j) => {
    if ((j.type !== "revolute" && j.type !== "prismatic") || j.limits === undefined) return j;
    const unread = unreadLimitSettings(j.id, j.limits, model.solver.integrator);
    if (unread.length === 0) return j;
    const limits = { ...j.limits };
    for (const u of unread) delete limits[u.key];
    return { ...j, limits };
  });
}

/**
 * A stored model (a snapshot's or a recording's) without the solver, contact and joint-limit
 * settings its choices do not read (withoutUnreadSettings, withoutUnreadContact,
 * withoutUnreadLimits: versions before that check filled a limit's restitution in).
 */
export function withoutUnreadModelSettings(model: ModelSpec): ModelSpec {
  return {
    ...model,
    solver: withoutUnreadSettings(model.solver, contactMethodOf(model)),
    ...(model.contact ? { contact: withoutUnreadContact(model.contact) } : {}),
    joints: withoutUnreadLimits(model),
  };
}

type JointIn = z.infer<typeof ModelObject>["joints"][number];
type BodyIn = z.infer<typeof ModelObject>["bodies"][number];

/**
 * Whether a joint has a free coordinate that actuators, limits and sensors act on: a
 * prismatic joint, or a revolute joint whose ends both have an orientation (ground or a
 * rigid body).
 */
function hasCoordinate(j: JointIn, bodies: Map<string, BodyIn>): boolean {
  if (j.type === "prismatic") return true;
  if (j.type !== "revolute") return false;
  // a fem node ("<fem id>/<k>") is a particle
  const oriented = (id: string) =>
    id === "ground" || (parseNodeRef(id) === null && bodies.get(id)?.kind !== "particle");
  return oriented(j.a.body) && oriented(j.b.body);
}

/**
 * Mimics: the followed joint is another revolute or prismatic joint with a coordinate, and
 * following never loops back (q_a = f(q_b), q_b = g(q_a) is redundant or contradictory).
 */
function checkMimics(
  joints: readonly JointIn[],
  bodies: Map<string, BodyIn>,
  ctx: z.RefinementCtx,
): void {
  const index = new Map(joints.map((j, i) => [j.id, i]));
  const followed = (j: JointIn) =>
    j.type === "revolute" || j.type === "prismatic" ? j.mimic?.joint : undefined;
  // the problem with joint j's mimic, or null
  const problem = (j: JointIn, target: string): string | null => {
    const t = index.get(target);
    if (t === undefined) return `joint "${j.id}" mimics unknown joint "${target}"`;
    if (target === j.id) return `joint "${j.id}" mimics itself`;
    if (!hasCoordinate(j, bodies)) return noCoordinate(j);
    if (!hasCoordinate(joints[t], bodies))
      return `joint "${j.id}" mimics "${target}": ${noCoordinate(joints[t])}`;
    // walk the chain of followed joints: back at j is a cycle (a loop elsewhere is
    // reported from its own joints)
    const chain = [j.id];
    for (let next: string | undefined = target; next !== undefined; ) {
      chain.push(next);
      if (next === j.id) return `mimic cycle: ${chain.join(" → ")}`;
      if (chain.length > joints.length) return null;
      const k = index.get(next);
      next = k === undefined ? undefined : followed(joints[k]);
    }
    return null;
  };
  joints.forEach((j, i) => {
    const target = followed(j);
    const message = target === undefined ? null : problem(j, target);
    if (message !== null)
      ctx.addIssue({ code: "custom", path: ["joints", i, "mimic", "joint"], message });
  });
}

function noCoordinate(j: JointIn): string {
  return j.type === "revolute"
    ? `revolute joint "${j.id}" has a particle end, so no angle`
    : `joint "${j.id}" is ${j.type}; only revolute and prismatic joints have a coordinate`;
}

/**
 * Principal moments (I₁, I₂, I₃ the eigenvalues of the inertia tensor about the centre of
 * mass) of a real body satisfy the triangle inequality I₃ ≤ I₁ + I₂: with S = ∫ r rᵀ dm
 * (positive semidefinite), I = tr(S)·1 − S, so tr I = 2 tr S and S = (tr I / 2)·1 − I,
 * whose eigenvalues (I₁ + I₂ − I₃)/2 … must be ≥ 0. Equality is a flat body (a plate);
 * INERTIA_TRIANGLE_SLACK·tr I of excess is let pass, for moments rounded to 3–4 digits
 * ([0.0833, 0.0833, 0.1667], a square plate's). Null when the moments have it; else what
 * is wrong, the principal moments named (the eigenvalues of a full tensor).
 */
function triangleInequalityIssue(inertia: z.infer<typeof Inertia>): string | null {
  const full = typeof inertia[0] !== "number";
  const m = full ? symmetricEigenvalues(inertia as number[][]) : [...(inertia as number[])];
  m.sort((x, y) => x - y);
  const [a, b, c] = m;
  if (c <= a + b + INERTIA_TRIANGLE_SLACK * (a + b + c)) return null;
  const g = (x: number) => Number(x.toPrecision(6));
  return `${full ? `the principal moments of inertia (the tensor's eigenvalues) [${m.map(g).join(", ")}]` : `the principal moments of inertia [${(inertia as number[]).map(g).join(", ")}]`} break the triangle inequality (${g(c)} > ${g(a)} + ${g(b)}): no distribution of mass has them; the largest moment is at most the sum of the other two (equal for a flat body)`;
}

/** Excess of the largest principal moment over the sum of the others let pass, × tr I. */
const INERTIA_TRIANGLE_SLACK = 1e-3;

/**
 * The eigenvalues of a symmetric 3×3 matrix, closed form (Smith, "Eigenvalues of a
 * symmetric 3 × 3 matrix", Comm. ACM 4(4), 1961): with q = tr A / 3, p = ‖A − q·1‖_F / √6
 * and r = det((A − q·1)/p)/2, they are q + 2p·cos(φ + 2πk/3), φ = acos(r)/3.
 */
function symmetricEigenvalues(a: number[][]): number[] {
  const off = a[0][1] ** 2 + a[0][2] ** 2 + a[1][2] ** 2;
  if (off === 0) return [a[0][0], a[1][1], a[2][2]];
  const q = (a[0][0] + a[1][1] + a[2][2]) / 3;
  const p = Math.sqrt(((a[0][0] - q) ** 2 + (a[1][1] - q) ** 2 + (a[2][2] - q) ** 2 + 2 * off) / 6);
  const b = a.map((row, i) => row.map((x, j) => (x - (i === j ? q : 0)) / p));
  const det =
    b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) -
    b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) +
    b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
  const phi = Math.acos(Math.min(1, Math.max(-1, det / 2))) / 3;
  const e1 = q + 2 * p * Math.cos(phi);
  const e3 = q + 2 * p * Math.cos(phi + (2 * Math.PI) / 3);
  return [e1, 3 * q - e1 - e3, e3];
}

function inertiaIsSpd(inertia: z.infer<typeof Inertia>): boolean {
  if (typeof inertia[0] === "number") return (inertia as number[]).every((x) => x > 0);
  const a = inertia as number[][];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < i; j++)
      if (Math.abs(a[i][j] - a[j][i]) > 1e-12 * Math.abs(a[i][i] + a[j][j])) return false;
  const m1 = a[0][0];
  const m2 = a[0][0] * a[1][1] - a[0][1] * a[1][0];
  const m3 =
    a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
    a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
    a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
  return m1 > 0 && m2 > 0 && m3 > 0;
}

/**
 * A new model: the cross-reference checks, and no solver or contact setting its choices do
 * not read.
 */
export const Model = ModelObject.superRefine((m, ctx) => {
  checkReferences(m, ctx);
  for (const u of unreadSolverSettings(m.solver, contactMethodOf(m)))
    ctx.addIssue({ code: "custom", path: ["solver", u.key], message: u.message });
  for (const u of contactSolverIssues(m.solver, m.contact))
    ctx.addIssue({ code: "custom", path: u.path, message: u.message });
  if (m.contact)
    for (const u of unreadContactSettings(m.contact, m.contact.method))
      ctx.addIssue({ code: "custom", path: ["contact", u.key], message: u.message });
  m.bodies.forEach((b, i) => {
    for (const u of unreadBodySettings(b))
      ctx.addIssue({ code: "custom", path: ["bodies", i, u.key], message: u.message });
  });
  m.joints.forEach((j, i) => {
    if ((j.type !== "revolute" && j.type !== "prismatic") || j.limits === undefined) return;
    for (const u of unreadLimitSettings(j.id, j.limits, m.solver.integrator))
      ctx.addIssue({ code: "custom", path: ["joints", i, "limits", u.key], message: u.message });
  });
}).meta({ id: "Model" });

/** The integrators with a velocity level (impulses over the step), which "nsc" contact needs. */
export const VELOCITY_LEVEL_INTEGRATORS: readonly SolverSpec["integrator"][] = [
  "moreau-jean",
  "backward-euler",
  "symplectic-euler",
];

/**
 * Solver and contact settings that cannot run together, with why, paths from the model's
 * root: nonsmooth contact ("nsc") needs a velocity-level integrator, and its "lemke" solver
 * solves frictionless contact only. A model is refused with them, and so is a PATCH that
 * would bring them about (simulation.ts update).
 */
export function contactSolverIssues(
  solver: Pick<SolverSpec, "integrator" | "contactSolver">,
  contact: Pick<ContactSpec, "method" | "friction" | "pairs"> | undefined,
): { path: ["solver", "integrator" | "contactSolver"]; message: string }[] {
  if (contact?.method !== "nsc") return [];
  const out: ReturnType<typeof contactSolverIssues> = [];
  // (articulated takes no contact at all: articulation.ts says so, at contact.method)
  if (
    !VELOCITY_LEVEL_INTEGRATORS.includes(solver.integrator) &&
    solver.integrator !== "articulated"
  )
    out.push({
      path: ["solver", "integrator"],
      message: `contact.method "nsc" needs a velocity-level integrator (moreau-jean, backward-euler or symplectic-euler); use "smc" with ${solver.integrator}`,
    });
  const friction = (contact.friction ?? 0) > 0 || contact.pairs.some((p) => (p.friction ?? 0) > 0);
  if (solver.contactSolver === "lemke" && friction)
    out.push({
      path: ["solver", "contactSolver"],
      message:
        'contact solver "lemke" solves frictionless contact only; with friction use nncg, pgs, pjacobi, apgd or barzilai-borwein',
    });
  return out;
}

const isZero = (v: readonly number[]) => v.every((x) => x === 0);

/**
 * A body's initial state that the engine would not take, with why: a fixed body does not
 * move (velocity and angular velocity must be zero), a particle does not rotate (no
 * orientation other than the identity, no angular velocity, no inertia) — the rules the
 * bodyState input applies at run time (src/engine/simulation/inputs.ts).
 */
function unreadBodySettings(
  b: z.output<typeof Body>,
): { key: "velocity" | "angularVelocity" | "orientation" | "inertia"; message: string }[] {
  const out: ReturnType<typeof unreadBodySettings> = [];
  if (b.fixed)
    for (const key of ["velocity", "angularVelocity"] as const)
      if (!isZero(b[key]))
        out.push({
          key,
          message: `body "${b.id}" is fixed: it does not move, so its ${key} must be zero (a moving support is a body driven by a motor on a joint)`,
        });
  if (b.kind === "particle") {
    const [w, x, y, z] = b.orientation;
    if (w !== 1 || x !== 0 || y !== 0 || z !== 0)
      out.push({ key: "orientation", message: `particle "${b.id}" has no orientation` });
    if (!isZero(b.angularVelocity))
      out.push({ key: "angularVelocity", message: `particle "${b.id}" does not rotate` });
    if (b.inertia !== undefined)
      out.push({
        key: "inertia",
        message: `particle "${b.id}" does not rotate: it has no inertia (a rigid body does)`,
      });
  }
  return out;
}

/**
 * A model inside a snapshot or a recording: taken as it was validated when it was made, so
 * the check of unread solver settings is left out (versions before it filled theta and
 * rhoInfinity into every model's solver, and versions before they lost their schema
 * defaults newtonIterations 25, gyroscopicJacobian true and jointTolerance 1e-12, also with
 * articulated); withoutUnreadSettings drops them when one is restored.
 */
export const StoredModel = ModelObject.superRefine(checkReferences).meta({
  id: "StoredModel",
  description: "a model as a snapshot or recording keeps it",
});

/** A model as posted (defaults optional). */
export type ModelInput = z.input<typeof Model>;
/** A validated model with every default filled in. */
export type ModelSpec = z.output<typeof Model>;
export type BodySpec = ModelSpec["bodies"][number];
export type ShapeSpec = z.output<typeof Shape>;
export type ForceSpec = ModelSpec["forces"][number];
export type JointSpec = ModelSpec["joints"][number];
export type MotorSpec = ModelSpec["motors"][number];
export type ActuatorSpec = ModelSpec["actuators"][number];
export type SensorSpec = ModelSpec["sensors"][number];
export type FemSpec = ModelSpec["fem"][number];
export type ContactSpec = z.output<typeof Contact>;
export type ContactBehaviorSpec = z.output<typeof ContactBehavior>;
export type SolverSpec = z.output<typeof SolverSettings>;
export type TimeFunctionSpec = z.output<typeof TimeFunction>;
export type BodyPointSpec = z.output<typeof BodyPoint>;
