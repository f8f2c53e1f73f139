/**
 * Model generators shared by the tests (and by bench/, which may import from here; src/
 * never does). Each returns plain model JSON as POST /v1/sessions and loadModel take it;
 * the parts a test varies (masses, stiffnesses, joint types, solver, …) are parameters, so
 * every test keeps its own numbers. SI units throughout: m, kg, kg·m², N/m, N·s/m, s.
 * Generators that build part of a model (bodies and joints, bodies and springs) leave the
 * name, gravity, motors, extra forces and solver to the caller.
 *
 * The benchmark scenes (S1 spheres, S2 chain, S3 cloth) are in bench/scenes.ts.
 */
import type { ModelInput } from "../../schemas/model";
import { rotate } from "./quat";
import { mulberry32 } from "./random";

export type Vec3 = [number, number, number];
type BodyIn = NonNullable<ModelInput["bodies"]>[number];
type JointIn = NonNullable<ModelInput["joints"]>[number];
type ForceIn = NonNullable<ModelInput["forces"]>[number];
type SensorIn = NonNullable<ModelInput["sensors"]>[number];
type ActuatorIn = NonNullable<ModelInput["actuators"]>[number];

/** A value that is either the same for every index or given per index i. */
type PerIndex<T> = T | ((i: number) => T);
const at = <T>(v: PerIndex<T>, i: number): T =>
  typeof v === "function" ? (v as (i: number) => T)(i) : v;

export interface CartPoleOptions {
  /** Time step h (s). */
  dt: number;
  /**
   * Sensors, in observation order: x, v (the cart's position (m) and velocity (m/s) on its
   * rail), theta, omega (the pole's angle (rad) and rate (rad/s), 0 upright, positive
   * leaning towards +x), effort (the force (N) the actuator applies).
   */
  sensors: ("x" | "v" | "theta" | "omega" | "effort")[];
}

/**
 * Cart-pole: a cart of 1 kg on the rail "rail" (a prismatic joint along x to the ground),
 * a pole of 0.2 kg, 1 m long (centre 0.5 m above the cart, inertia m L²/12 = 0.0167 kg·m²
 * about its centre), pinned to the cart by the revolute joint "hinge" about y, upright
 * at rest; "push" is an effort actuator on the rail (type "torque": a force along the
 * rail, |u| ≤ 50 N); default gravity (−9.81 m/s² along z); generalized-α at h = dt. Used
 * by bench/control.ts and test/api/inputs.test.ts.
 */
export function cartPoleModel(o: CartPoleOptions) {
  const sensors = {
    x: { id: "x", type: "jointPosition", joint: "rail" },
    v: { id: "v", type: "jointVelocity", joint: "rail" },
    theta: { id: "theta", type: "jointPosition", joint: "hinge" },
    omega: { id: "omega", type: "jointVelocity", joint: "hinge" },
    effort: { id: "effort", type: "actuatorEffort", actuator: "push" },
  } satisfies Record<CartPoleOptions["sensors"][number], SensorIn>;
  return {
    name: "cart-pole",
    bodies: [
      { id: "cart", mass: 1, inertia: [0.1, 0.1, 0.1] },
      { id: "pole", mass: 0.2, position: [0, 0, 0.5], inertia: [0.0167, 0.0167, 1e-4] },
    ],
    joints: [
      {
        id: "rail",
        type: "prismatic",
        a: { body: "ground" },
        b: { body: "cart" },
        axis: [1, 0, 0],
      },
      {
        id: "hinge",
        type: "revolute",
        a: { body: "cart" },
        b: { body: "pole", point: [0, 0, -0.5] },
        axis: [0, 1, 0],
      },
    ],
    actuators: [{ id: "push", joint: "rail", type: "torque", effortLimit: 50 }],
    sensors: o.sensors.map((s) => sensors[s]),
    solver: { integrator: "generalized-alpha", dt: o.dt },
  } satisfies ModelInput;
}

export interface SpringParticleOptions {
  /** Spring stiffness k (N/m); 100 when left out. */
  stiffness?: number;
  /** Particle mass m (kg); 1 when left out. */
  mass?: number;
  /** Initial position along x (m); 1 when left out. */
  x0?: number;
  /** Initial velocity along x (m/s); at rest (and none written) when left out. */
  v0?: number;
  /** Time step h (s); 0.001 when left out. */
  dt?: number;
}

/** The spring particle of the tests when an option is left out. */
export const SPRING_PARTICLE = { stiffness: 100, mass: 1, x0: 1, v0: 0, dt: 0.001 } as const;

type SolverIn = NonNullable<ModelInput["solver"]>;

const springParticleOptions = (o: SpringParticleOptions): Required<SpringParticleOptions> => ({
  stiffness: o.stiffness ?? SPRING_PARTICLE.stiffness,
  mass: o.mass ?? SPRING_PARTICLE.mass,
  x0: o.x0 ?? SPRING_PARTICLE.x0,
  v0: o.v0 ?? SPRING_PARTICLE.v0,
  dt: o.dt ?? SPRING_PARTICLE.dt,
});

/**
 * A particle "p" of mass m at (x0, 0, 0), with velocity (v0, 0, 0), on the zero-length
 * spring "s" to the origin, no gravity: x'' = −(k/m) x along x. Integrated by symplectic
 * Euler at h = dt, a motion with the short recurrence written out in
 * springParticleRecurrence; `integrator` and `solver` (more solver settings) for the tests
 * of other schemes. Named "spring" unless `name` says otherwise (null: no name).
 */
export function springParticle(
  o: SpringParticleOptions & {
    name?: string | null;
    integrator?: SolverIn["integrator"];
    solver?: SolverIn;
  } = {},
) {
  const p = springParticleOptions(o);
  return {
    ...(o.name === null ? {} : { name: o.name ?? "spring" }),
    gravity: [0, 0, 0] as Vec3,
    bodies: [
      {
        id: "p",
        kind: "particle" as const,
        mass: p.mass,
        position: [p.x0, 0, 0] as Vec3,
        ...(o.v0 === undefined ? {} : { velocity: [o.v0, 0, 0] as Vec3 }),
      },
    ],
    forces: [
      {
        id: "s",
        type: "spring" as const,
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: p.stiffness,
        restLength: 0,
      },
    ],
    solver: { integrator: o.integrator ?? ("symplectic-euler" as const), dt: p.dt, ...o.solver },
  } satisfies ModelInput;
}

/**
 * springParticle's x and v after n steps of symplectic Euler (v ← v − h (k/m) x, then
 * x ← x + h v), for the same options.
 */
export function springParticleRecurrence(o: SpringParticleOptions, n: number) {
  const { stiffness: k, mass: m, dt: h, x0, v0 } = springParticleOptions(o);
  let x = x0;
  let v = v0;
  for (let i = 0; i < n; i++) {
    v -= h * (k / m) * x;
    x += h * v;
  }
  return { x, v };
}

/**
 * springParticle's x and v after n steps of the central difference (Newmark β = 0, γ = ½:
 * x ← x + h v + ½ h² a, then v ← v + ½ h (a + a⁺), a = −(k/m) x), for the same options.
 */
export function centralDifferenceRecurrence(o: SpringParticleOptions, n: number) {
  const { stiffness: k, mass: m, dt: h, x0, v0 } = springParticleOptions(o);
  let x = x0;
  let v = v0;
  for (let i = 0; i < n; i++) {
    const a = -(k / m) * x;
    x += h * v + 0.5 * h * h * a;
    v += 0.5 * h * (a - (k / m) * x);
  }
  return { x, v };
}

/** The stiffness (N/m) of divergingSpring's spring. */
export const DIVERGING_STIFFNESS = 1e7;

/**
 * A run that genuinely diverges: springParticle (1 kg at x0 = 1 m) on a 1e7 N/m spring at
 * h = 0.01 s under the central difference the user chose (newmark, β = 0, γ = ½: explicit,
 * stable only while h ω < 2; here h ω = 31.6, and newmark checks no bound: symplectic Euler
 * would take the sub-steps the spring's bound asks, theta-scheme.ts). Its first step
 * (centralDifferenceRecurrence) reaches x = −499 m, v = 2.49e7 m/s; the second blows past
 * the 1e8 limit (simulation.ts), so the run ends `diverged` at step 2, its last good
 * state at step 1.
 */
export function divergingSpring() {
  return springParticle({
    stiffness: DIVERGING_STIFFNESS,
    dt: 0.01,
    name: "diverging",
    integrator: "newmark",
    solver: { beta: 0, gamma: 0.5 },
  });
}

export interface FallingBodyOptions {
  /** Initial height (m); 10 when left out. */
  z0?: number;
  /** Time step h (s); 0.005 when left out. */
  dt?: number;
  /** The model's name; "fall" when left out. */
  name?: string;
}

/**
 * A rigid body "ball" (1 kg, inertia 0.1 kg·m²) falling from z0 under the default gravity
 * with the default Moreau–Jean θ = 1/2 scheme, which integrates a constant acceleration
 * exactly: z(t) = z0 − g t²/2, v(t) = −g t.
 */
export function fallingBody(o: FallingBodyOptions = {}) {
  return {
    name: o.name ?? "fall",
    bodies: [
      {
        id: "ball",
        kind: "rigid" as const,
        mass: 1,
        inertia: [0.1, 0.1, 0.1] as Vec3,
        position: [0, 0, o.z0 ?? 10] as Vec3,
      },
    ],
    solver: { dt: o.dt ?? 0.005 },
  } satisfies ModelInput;
}

export interface RodPendulumOptions {
  /** Rod mass m (kg). */
  mass: number;
  /** Rod length L (m). */
  length: number;
  /** The pin's axis (world = rod frame at rest). */
  axis: Vec3;
  /** Gravity (m/s²); the model default (0, 0, −9.81) when left out. */
  gravity?: Vec3;
  /** Limits of the pin joint (rad), as the model takes them. */
  limits?: Record<string, number>;
  /** An actuator on the pin, id "servo" (type, gains, target, limit). */
  servo?: Record<string, unknown>;
  /** Solver settings, as the model takes them. */
  solver: Record<string, unknown>;
}

/**
 * Rod pendulum: a uniform rod "rod" of mass m and length L along x, centre at (L/2, 0, 0),
 * inertia diag(1e-3, m L²/12, m L²/12) about its centre (so m L²/3 about the pivot for
 * the y and z axes), pinned at its end x = 0 to the ground by the revolute joint "pin".
 */
export function rodPendulum(o: RodPendulumOptions): ModelInput {
  const { mass: m, length: L } = o;
  return {
    ...(o.gravity ? { gravity: o.gravity } : {}),
    bodies: [
      {
        id: "rod",
        mass: m,
        position: [L / 2, 0, 0],
        // a slender rod's axial moment is next to nothing: 1e-3, or its transverse moment on a
        // rod too light for that (the moments stay a body's, the largest at most the others' sum)
        inertia: [Math.min(1e-3, (m * L * L) / 12), (m * L * L) / 12, (m * L * L) / 12],
      },
    ],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "rod", point: [-L / 2, 0, 0] },
        axis: [...o.axis],
        ...(o.limits ? { limits: o.limits } : {}),
      },
    ],
    ...(o.servo ? { actuators: [{ id: "servo", joint: "pin", ...o.servo } as ActuatorIn] } : {}),
    solver: o.solver,
  } as ModelInput;
}

/**
 * A 1 kg, 1 m rod hung from one end by the hinge "hinge" (axis y through the origin), its
 * centre d = 0.5 m below, I_p = 1/12 + d² kg·m² about the pivot, started at θ = 0 with
 * θ' = θ0 ω; gravity chosen so that ω² = m g d / I_p: the small oscillation θ0 sin ω t.
 * A rotation δθ about the pivot moves the rod's material by √(I_p/m) δθ (`gyration`, m/rad).
 */
export function stiffHingedRod(omega: number, theta0: number, solver: Record<string, unknown>) {
  const d = 0.5;
  const Ip = 1 / 12 + d * d;
  const W = theta0 * omega;
  const model = {
    gravity: [0, 0, -(omega * omega * Ip) / d],
    bodies: [
      {
        id: "rod",
        kind: "rigid",
        mass: 1,
        position: [0, 0, -d],
        inertia: [1 / 12, 1 / 12, 1e-4],
        velocity: [-d * W, 0, 0],
        angularVelocity: [0, W, 0],
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "rod", point: [0, 0, d] },
        axis: [0, 1, 0],
      },
    ],
    solver,
  } as ModelInput;
  return { model, gyration: Math.sqrt(Ip) };
}

/** rodPendulum's rod (mass kg, length m) about z without gravity, the "servo" actuator on its pin. */
export function servoRod(
  mass: number,
  length: number,
  servo: Record<string, unknown>,
  solver: Record<string, unknown>,
): ModelInput {
  return rodPendulum({ mass, length, axis: [0, 0, 1], gravity: [0, 0, 0], servo, solver });
}

/**
 * A rod of `mass` kg and `length` L m hinged to the ground at its top end by "pin" (axis x
 * through the origin), turned `angle` rad (default 0) from hanging straight down, its tip
 * the sphere of r = ROD_TIP_RADIUS over the nsc floor "floor" at z = −L: the sphere's centre
 * at z = −L cos a, r into the floor at a = 0, its gap L (1 − cos a) − r, clear from
 * a_c = acos((L − r)/L). No gravity; moreau-jean at 5 ms (`solver` merged in); a position
 * servo "servo" on the pin when `servo` is given ({ target, kp }, k_d = 0).
 */
export function rodOverFloor(o: {
  mass: number;
  length: number;
  angle?: number;
  servo?: { target: number; kp: number };
  solver?: Record<string, unknown>;
}): ModelInput {
  const { mass: m, length: L } = o;
  const a = o.angle ?? 0;
  const I = (m * L * L) / 12;
  return {
    gravity: [0, 0, 0],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: -L }] },
      {
        id: "rod",
        mass: m,
        // R_x(a) (0, 0, −L/2)
        position: [0, (L / 2) * Math.sin(a), (-L / 2) * Math.cos(a)],
        orientation: [Math.cos(a / 2), Math.sin(a / 2), 0, 0],
        inertia: [I, I, 1e-3],
        shapes: [{ type: "sphere", radius: ROD_TIP_RADIUS, position: [0, 0, -L / 2] }],
      },
    ],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "rod", point: [0, 0, L / 2] },
        axis: [1, 0, 0],
      },
    ],
    ...(o.servo
      ? {
          actuators: [
            { id: "servo", joint: "pin", type: "position", kd: 0, ...o.servo } as ActuatorIn,
          ],
        }
      : {}),
    contact: { method: "nsc" },
    solver: { integrator: "moreau-jean", dt: 0.005, ...o.solver },
  } as ModelInput;
}

/** The radius (m) of rodOverFloor's tip sphere. */
export const ROD_TIP_RADIUS = 0.05;

/**
 * The unit-mass rigid body "body" of principal inertias `inertia` (kg·m²) at `position` (m),
 * spun at `angularVelocity` (rad/s, world = body frame at the start); `shapes` if given.
 */
export function spunBody(
  inertia: Vec3,
  angularVelocity: Vec3,
  position: Vec3 = [0, 0, 0],
  shapes?: BodyIn["shapes"],
): BodyIn {
  return {
    id: "body",
    kind: "rigid",
    mass: 1,
    inertia,
    position,
    angularVelocity,
    ...(shapes ? { shapes } : {}),
  } as BodyIn;
}

/**
 * A unit-mass rigid body "body" at the origin in zero gravity, spun at angularVelocity
 * (rad/s, world = body frame at the start) with principal inertias (kg·m²): torque-free, so
 * its kinetic energy and world angular momentum are constants. `centre` holds it by a
 * spherical joint at its centre of mass, which exerts no torque. `floor`: a 0.1 m sphere
 * shape on it (its inertia kept) and a fixed plane 1 m below it, nsc contacts at e = 1,
 * which it never reaches (nothing moves its centre).
 */
export function tumblingBody(
  inertia: Vec3,
  angularVelocity: Vec3,
  solver: NonNullable<ModelInput["solver"]>,
  centre = false,
  floor = false,
): ModelInput {
  const body = spunBody(inertia, angularVelocity);
  return {
    gravity: [0, 0, 0],
    bodies: [
      floor ? { ...body, shapes: [{ type: "sphere", radius: 0.1 }] } : body,
      ...(floor
        ? [{ id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: -1 }] }]
        : []),
    ],
    ...(floor ? { contact: { method: "nsc", restitution: 1 } } : {}),
    joints: centre
      ? [
          {
            id: "centre",
            type: "spherical",
            a: { body: "ground", point: [0, 0, 0] },
            b: { body: "body", point: [0, 0, 0] },
          },
        ]
      : [],
    solver,
  } as ModelInput;
}

/**
 * rodPendulum's rod (mass kg, length m) hinged about z at its centre of mass, no gravity,
 * the "servo" actuator on its pin: the hinge's reaction acts at the centre, which does not
 * move, so the pin's angle obeys I θ̈ = τ exactly, I = m L²/12 (the transverse moment).
 */
export function centredServoRod(
  mass: number,
  length: number,
  servo: Record<string, unknown>,
  solver: Record<string, unknown>,
): ModelInput {
  const I = (mass * length * length) / 12;
  return {
    gravity: [0, 0, 0],
    bodies: [{ id: "rod", mass, position: [0, 0, 0], inertia: [1e-3, I, I] }],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "rod", point: [0, 0, 0] },
        axis: [0, 0, 1],
      },
    ],
    actuators: [{ id: "servo", joint: "pin", ...servo } as ActuatorIn],
    solver,
  } as ModelInput;
}

export interface HangingChainOptions {
  /** One entry per joint j0, j1, …: joint k joins link k − 1 (the ground for k = 0) to link k. */
  joints: ({ type: "revolute"; axis: Vec3 } | { type: "spherical" })[];
  /** Mass of link i (kg). */
  mass: PerIndex<number>;
  /** Principal inertia of every link about its centre (kg·m²). */
  inertia: Vec3;
  /** Initial angular velocity of link i (rad/s); none when left out. */
  angularVelocity?: (i: number) => Vec3;
}

/**
 * A chain of rigid links l0, l1, … 0.5 m long hanging straight down from the origin:
 * link i's centre at z = −0.25 − 0.5 i, joint k at the top of link k (the origin for
 * k = 0, else the bottom of link k − 1). Returns the bodies and joints.
 */
export function hangingChain(o: HangingChainOptions): { bodies: BodyIn[]; joints: JointIn[] } {
  const bodies = o.joints.map((_, i) => ({
    id: `l${i}`,
    kind: "rigid" as const,
    mass: at(o.mass, i),
    inertia: [...o.inertia] as Vec3,
    position: [0, 0, -0.25 - 0.5 * i] as Vec3,
    ...(o.angularVelocity ? { angularVelocity: o.angularVelocity(i) } : {}),
  }));
  const joints = o.joints.map((j, k) => ({
    id: `j${k}`,
    type: j.type,
    a: k === 0 ? { body: "ground" } : { body: `l${k - 1}`, point: [0, 0, -0.25] as Vec3 },
    b: { body: `l${k}`, point: [0, 0, 0.25] as Vec3 },
    ...(j.type === "revolute" ? { axis: [...j.axis] as Vec3 } : {}),
  })) as JointIn[];
  return { bodies, joints };
}

/**
 * A row of N unit-mass bodies b0, b1, … 2 m apart on the x axis, each hinged to the ground
 * by its own joint j_i about y, 0.5 m above its centre (inertia 0.1 kg·m² about each axis);
 * with `limits` every hinge bounded to ±1 rad. Returns the bodies and joints (the caller
 * adds motors or actuators on j_i).
 */
export function groundHinges(n: number, limits = false): { bodies: BodyIn[]; joints: JointIn[] } {
  const bodies: BodyIn[] = [];
  const joints: JointIn[] = [];
  for (let i = 0; i < n; i++) {
    bodies.push({ id: `b${i}`, mass: 1, inertia: [0.1, 0.1, 0.1], position: [2 * i, 0, 0] });
    joints.push({
      id: `j${i}`,
      type: "revolute",
      a: { body: "ground", point: [2 * i, 0, 0.5] },
      b: { body: `b${i}`, point: [0, 0, 0.5] },
      axis: [0, 1, 0],
      ...(limits ? { limits: { lower: -1, upper: 1 } } : {}),
    } as JointIn);
  }
  return { bodies, joints };
}

/**
 * A position servo "s<joint id>" on each of `joints`: target (rad or m from the model
 * pose) per joint index, gains k_p (N·m/rad or N/m) and k_d (N·m·s/rad or N·s/m).
 */
export function positionServos(
  joints: readonly { id: string }[],
  target: PerIndex<number>,
  kp: number,
  kd: number,
): ActuatorIn[] {
  return joints.map((j, i) => ({
    id: `s${j.id}`,
    joint: j.id,
    type: "position" as const,
    target: at(target, i),
    kp,
    kd,
  }));
}

/**
 * The servo chain's links (hangingChain): n (3 when left out) 1 kg links 0.5 m long,
 * principal inertia (0.021, 0.021, 0.002) kg·m², hinged about x, y, x, … from the ground
 * down.
 */
export function servoChainLinks(n = 3): { bodies: BodyIn[]; joints: JointIn[] } {
  return hangingChain({
    joints: Array.from({ length: n }, (_, k) => ({
      type: "revolute" as const,
      axis: (k % 2 === 0 ? [1, 0, 0] : [0, 1, 0]) as Vec3,
    })),
    mass: 1,
    inertia: [0.021, 0.021, 0.002],
  });
}

export interface SphericalChainOptions {
  links: number;
  /** Link length (m). */
  length: number;
  /** Mass of each link (kg). */
  mass: number;
  /** Principal inertia of each link about its centre (kg·m²). */
  inertia: Vec3;
  /** Body ids are `${prefix}${k}`. */
  prefix: string;
  /** Each link's box half-extents (m), as a shape; no shape when left out. */
  box?: Vec3;
  /** Write the first joint's ground point (0, 0, 0) out (it is the default). */
  groundPoint?: boolean;
  /**
   * The unit vector the chain lies along, in the world and in each link's frame: one of
   * ±x, ±y, ±z (its other components 0, so the coordinates are exact); +x when left out.
   */
  direction?: Vec3;
  /** Initial velocity of link k (m/s), called for k = 0, 1, … in order; none when left out. */
  velocity?: (k: number) => Vec3;
  /**
   * Initial angular velocity of link k (rad/s), called after velocity(k); none when left
   * out.
   */
  angularVelocity?: (k: number) => Vec3;
}

/**
 * Three pendulums (bobs 1 kg, spheres R = 0.1 m on 0.5 m arms hinged along y 0.59 m above
 * a floor, released level) and a free ball bouncing beside them from (2, 0, 1) m at
 * (0.3, 0.2, 0) m/s, e = 1, frictionless, Moreau–Jean at 5 ms, g = 9.81 m/s²
 * (impact-events.test.ts, bench/impacts.ts); and `resting` spheres (R = 0.1 m) resting on
 * the floor in rows 0.3 m apart beyond x = 3 m.
 */
export function pendulumsOverFloor(resting = 0): ModelInput {
  const bodies: unknown[] = [
    { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
  ];
  for (let i = 0; i < resting; i++)
    bodies.push({
      id: `rest${i}`,
      mass: 1,
      inertia: [0.004, 0.004, 0.004],
      position: [3 + 0.3 * (i % 10), 0.3 * Math.floor(i / 10), 0.1],
      shapes: [{ type: "sphere", radius: 0.1 }],
    });
  const joints: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    bodies.push({
      id: `bob${i}`,
      mass: 1,
      inertia: [0.004, 0.004, 0.004],
      position: [0.5, 0.3 * i, 0.59],
      shapes: [{ type: "sphere", radius: 0.1 }],
    });
    joints.push({
      id: `hinge${i}`,
      type: "revolute",
      a: { body: "ground", point: [-0.1 * i, 0.3 * i, 0.59] },
      b: { body: `bob${i}`, point: [-0.5 - 0.1 * i, 0, 0] },
      axis: [0, 1, 0],
    });
  }
  bodies.push({
    id: "ball",
    mass: 1,
    inertia: [0.004, 0.004, 0.004],
    position: [2, 0, 1],
    velocity: [0.3, 0.2, 0],
    shapes: [{ type: "sphere", radius: 0.1 }],
  });
  return {
    gravity: [0, 0, -9.81],
    bodies,
    joints,
    contact: { method: "nsc", restitution: 1, friction: 0 },
    solver: { integrator: "moreau-jean", dt: 0.005 },
  } as ModelInput;
}

/**
 * Two boxes 0.2 × 0.2 × 0.2 m, a (1 kg) and b (3 kg), their centres 0.3 m apart along x
 * about the origin, welded by the fixed joint `weld`, their bottoms `drop` m above z = 0
 * (the floor is the caller's): welded-drop.test.ts, leapfrog-bounce.test.ts.
 */
export function weldedBoxes(drop: number): { bodies: BodyIn[]; joints: JointIn[] } {
  const box = { type: "box" as const, halfExtents: [0.1, 0.1, 0.1] as Vec3 };
  return {
    bodies: [
      {
        id: "a",
        mass: 1,
        inertia: [0.01, 0.02, 0.025],
        position: [-0.15, 0, 0.1 + drop],
        shapes: [box],
      },
      {
        id: "b",
        mass: 3,
        inertia: [0.03, 0.02, 0.04],
        position: [0.15, 0, 0.1 + drop],
        shapes: [box],
      },
    ],
    joints: [
      {
        id: "weld",
        type: "fixed",
        a: { body: "a", point: [0.15, 0, 0] },
        b: { body: "b", point: [-0.15, 0, 0] },
      },
    ],
  };
}

/**
 * The S2 benchmark's chain of `links` links (bench/scenes.ts, ../shared/BENCH-SCENES.md):
 * boxes 0.1 × 0.02 × 0.02 m along x, 0.1 kg, spherical joints end to end from the ground at
 * the origin, straight along +x at rest (sphericalChain). Bodies link0…, joints j0….
 */
export const s2Chain = (links: number) =>
  sphericalChain({
    links,
    length: 0.1,
    mass: 0.1,
    inertia: [6.667e-6, 8.667e-5, 8.667e-5],
    box: [0.05, 0.01, 0.01],
    prefix: "link",
    groundPoint: true,
  });

/**
 * A chain of rigid links along `direction` (+x by default), straight at rest: link k's
 * centre at (k + ½)·length along it, spherical joints j0, j1, … end to end, j0 holding
 * link 0's end to the ground at the origin. 6 dofs and 3 constraint rows per link.
 * Returns the bodies and joints.
 */
export function sphericalChain(o: SphericalChainOptions): { bodies: BodyIn[]; joints: JointIn[] } {
  const len = o.length;
  const dir = o.direction ?? [1, 0, 0];
  // 0, not −0, off the axis: the coordinates are those written out by hand
  const along = (s: number) => dir.map((d) => (d === 0 ? 0 : d * s)) as Vec3;
  const bodies = Array.from({ length: o.links }, (_, k) => ({
    id: `${o.prefix}${k}`,
    mass: o.mass,
    inertia: [...o.inertia] as Vec3,
    position: along(len * (k + 0.5)),
    ...(o.velocity ? { velocity: o.velocity(k) } : {}),
    ...(o.angularVelocity ? { angularVelocity: o.angularVelocity(k) } : {}),
    ...(o.box ? { shapes: [{ type: "box" as const, halfExtents: [...o.box] as Vec3 }] } : {}),
  }));
  const ground = o.groundPoint ? { body: "ground", point: [0, 0, 0] as Vec3 } : { body: "ground" };
  const joints = Array.from({ length: o.links }, (_, k) => ({
    id: `j${k}`,
    type: "spherical" as const,
    a: k === 0 ? ground : { body: `${o.prefix}${k - 1}`, point: along(len / 2) },
    b: { body: `${o.prefix}${k}`, point: along(-len / 2) },
  }));
  return { bodies, joints };
}

export interface SpringChainOptions {
  /** Number of particles. */
  particles: number;
  /** Particle ids are `${prefix}${i}`; springs are s0, s1, …. */
  prefix: string;
  /** Mass of particle i (kg). */
  mass: PerIndex<number>;
  /** Whether particle i is fixed; written out only when given (default: none is). */
  fixed?: PerIndex<boolean>;
  /** Initial position of particle i (m). */
  position: (i: number) => Vec3;
  /** Initial velocity of particle i (m/s); none when left out. */
  velocity?: (i: number) => Vec3;
  /** Stiffness of spring s<i> (N/m). */
  stiffness: PerIndex<number>;
  /** Damping of every spring (N·s/m); the model default when left out. */
  damping?: number;
  /** Rest length of every spring (m); the model default (its initial length) when left out. */
  restLength?: number;
  /**
   * Whether a spring holds particle 0 to the ground (anchor); true when left out. Without
   * it the springs only join the particles (spring i from particle i to particle i + 1),
   * e.g. for a chain whose first particle is fixed.
   */
  grounded?: boolean;
  /** The ground point spring 0 starts at; written out only when given (default origin). */
  anchor?: Vec3;
  /** A last spring from the last particle to this ground point (a second wall). */
  wall?: Vec3;
}

/**
 * A chain of particles joined by axial springs: spring 0 from the ground (anchor) to
 * particle 0, spring i from particle i − 1 to particle i, and with `wall` one more from
 * the last particle to a second ground point. Without `grounded` the first spring is left
 * out and the others numbered from 0. Returns the bodies and springs.
 */
export function springChain(o: SpringChainOptions): { bodies: BodyIn[]; forces: ForceIn[] } {
  const n = o.particles;
  const id = (i: number) => `${o.prefix}${i}`;
  const bodies = Array.from({ length: n }, (_, i) => ({
    id: id(i),
    kind: "particle" as const,
    mass: at(o.mass, i),
    ...(o.fixed !== undefined ? { fixed: at(o.fixed, i) } : {}),
    position: o.position(i),
    ...(o.velocity ? { velocity: o.velocity(i) } : {}),
  }));
  const ground = (point: Vec3 | undefined) =>
    point ? { body: "ground", point } : { body: "ground" };
  // spring i of the grounded chain joins particle i − 1 (the ground for i = 0) to particle i
  const first = o.grounded === false ? 1 : 0;
  const forces = Array.from({ length: (o.wall ? n + 1 : n) - first }, (_, k) => {
    const i = k + first;
    return {
      id: `s${k}`,
      type: "spring" as const,
      a: i === 0 ? ground(o.anchor) : { body: id(i - 1) },
      b: i === n ? ground(o.wall) : { body: id(i) },
      stiffness: at(o.stiffness, k),
      ...(o.damping !== undefined ? { damping: o.damping } : {}),
      ...(o.restLength !== undefined ? { restLength: o.restLength } : {}),
    };
  });
  return { bodies, forces };
}

/**
 * A hanging chain of `particles` 10 g particles on springs of 100 N/m (1 cm apart, the
 * first sprung to the origin), Newmark at 1 ms: thousands of its steps take seconds, a
 * request the tests keep a worker busy with.
 */
export function slowSpringChain(particles: number): ModelInput {
  return {
    name: "chain",
    gravity: [0, 0, -9.81],
    ...springChain({
      particles,
      prefix: "p",
      mass: 0.01,
      position: (i) => [(i + 1) * 0.01, 0, 0],
      stiffness: 100,
      restLength: 0.01,
    }),
    solver: { integrator: "newmark", dt: 0.001 },
  } as ModelInput;
}

/**
 * A spring (10 N/m, no damping, rest length the initial distance) from the double-pendulum
 * example's lower rod to a point of the ground beside it.
 */
export const doublePendulumSpring = {
  id: "s",
  type: "spring",
  a: { body: "lower", point: [0, 0, 0.25] },
  b: { body: "ground", point: [1, 0, 0] },
  stiffness: 10,
};

/**
 * A solid sphere (1 kg, r = 0.1 m, I = 2/5 m r²) at height z above a floor plane, moving at
 * vx along x (spinning at wy about y where given), with nonsmooth contact (or the contact
 * given, e.g. `method: "smc"`) and Moreau–Jean (the solver settings given added).
 */
export function ballOnFloor(
  contact: Record<string, unknown>,
  o: { z: number; vx: number; wy?: number },
  solver: Record<string, unknown>,
) {
  return {
    gravity: [0, 0, -9.81],
    bodies: [
      {
        id: "ball",
        kind: "rigid",
        mass: 1,
        inertia: [0.004, 0.004, 0.004],
        position: [0, 0, o.z],
        velocity: [o.vx, 0, 0],
        ...(o.wy === undefined ? {} : { angularVelocity: [0, o.wy, 0] }),
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
    ],
    contact: { method: "nsc", ...contact },
    solver: { integrator: "moreau-jean", ...solver },
  };
}

// Scenes of the snapshot tests: restored and continued bit-identically by the engine
// (test/reliability/snapshot.test.ts) and over HTTP (test/api/snapshot.test.ts).

/** Two rigid bodies on nonlinear springs (rest length ≠ 0) and a frame spring, Newmark + Newton. */
export const springPairNewmark = {
  name: "newmark-newton",
  gravity: [0, 0, -9.81],
  bodies: [
    {
      id: "a",
      kind: "rigid",
      mass: 2,
      inertia: [0.02, 0.03, 0.04],
      position: [0.5, 0, 0],
      angularVelocity: [0.3, 1.1, -0.7],
    },
    {
      id: "b",
      kind: "rigid",
      mass: 1,
      inertia: [0.01, 0.012, 0.015],
      position: [1.2, 0.3, -0.2],
      orientation: [0.9, 0.1, 0.3, 0.2],
    },
  ],
  forces: [
    {
      id: "s1",
      type: "spring",
      a: { body: "ground" },
      b: { body: "a", point: [0.05, 0, 0] },
      stiffness: 400,
      damping: 0.5,
      restLength: 0.3,
    },
    {
      id: "s2",
      type: "spring",
      a: { body: "a" },
      b: { body: "b", point: [0, 0.05, 0] },
      stiffness: 250,
      restLength: 0.4,
    },
    {
      id: "f1",
      type: "frameSpring",
      a: { body: "a" },
      b: { body: "b" },
      stiffness: 20,
      rotaryStiffness: 3,
      damping: 0.1,
      rotaryDamping: 0.01,
    },
  ],
  solver: {
    integrator: "newmark",
    dt: 0.002,
    beta: 0.3,
    gamma: 0.6,
    rayleighMass: 0.05,
    rayleighStiffness: 0.001,
    newtonIterations: 8,
    newtonTolerance: 1e-12,
  },
};

/** A box sliding on a plane with friction, nonsmooth contact (warm-started PGS). */
export const slidingBoxNsc = {
  name: "nsc",
  bodies: [
    { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
    {
      id: "box",
      kind: "rigid",
      mass: 1,
      position: [0, 0, 0.1],
      velocity: [0.5, 0.1, 0],
      angularVelocity: [0, 0, 0.5],
      shapes: [{ type: "box", halfExtents: [0.2, 0.1, 0.1] }],
    },
  ],
  contact: { method: "nsc", friction: 0.3, restitution: 0 },
  solver: { integrator: "moreau-jean", dt: 0.005, maxIterations: 30, tolerance: 1e-14 },
};

/**
 * A particle held by two distance joints of 0.3 m to ground points 1 m apart: no position
 * meets both, so no projection brings ‖C‖∞ (0.2 m at its start midway) within tolerance.
 * `theta` (moreau-jean): 0.6 holds the joints at the velocity level (the post-step
 * projection reports them); at ½ the position level fails loudly, as newmark's.
 */
export function impossibleJoints(
  integrator: "moreau-jean" | "newmark",
  dt: number,
  theta?: number,
): ModelInput {
  const to = (id: string, point: number[]) => ({
    id,
    type: "distance" as const,
    a: { body: "ground", point },
    b: { body: "p" },
    length: 0.3,
  });
  return {
    gravity: [0, 0, -9.81],
    bodies: [{ id: "p", kind: "particle", mass: 1, position: [0.5, 0, 0] }],
    joints: [to("left", [0, 0, 0]), to("right", [1, 0, 0])],
    solver: { integrator, dt, ...(theta === undefined ? {} : { theta }) },
  } as ModelInput;
}

/** A hinged rod's inertia (kg·m²): 1 kg, 1 m along x, thin (hingedRods). */
export const HINGED_ROD_INERTIA: Vec3 = [1e-3, 1 / 12, 1 / 12];

/**
 * Two sliders along x, s2 following s1 (mimic q₂ = −2 q₁ + 0.01), s1 driven by a position
 * servo (k_p = 5 N/m, k_d = 0.05 N·s/m) from 0 toward 0.02 m, no gravity: the bodies f1
 * (0.05 kg) and f2 (0.08 kg), so the pair's inertia along q₁ is 0.05 + 4 · 0.08 = 0.37 kg
 * (ω_n = 3.7 rad/s, ζ = 0.02); `solver` as given.
 */
export function mimicSliders(solver: NonNullable<ModelInput["solver"]>): ModelInput {
  const slider = (id: string, body: string, y: number) => ({
    id,
    type: "prismatic" as const,
    a: { body: "ground", point: [0, y, 0] as Vec3 },
    b: { body },
    axis: [1, 0, 0] as Vec3,
  });
  return {
    gravity: [0, 0, 0],
    bodies: [
      { id: "f1", mass: 0.05, position: [0, 0.1, 0], inertia: [1e-5, 1e-5, 1e-5] },
      { id: "f2", mass: 0.08, position: [0.01, -0.1, 0], inertia: [1e-5, 1e-5, 1e-5] },
    ],
    joints: [
      slider("s1", "f1", 0.1),
      { ...slider("s2", "f2", -0.1), mimic: { joint: "s1", multiplier: -2, offset: 0.01 } },
    ],
    actuators: [{ id: "servo", joint: "s1", type: "position", target: 0.02, kp: 5, kd: 0.05 }],
    solver,
  };
}

/**
 * A box (mass kg, half extents [b, depth, c] m, long side x) standing on its edge
 * (b, ·, −c) at the origin of a floor plane z = 0, turned by `tilt` (rad) about y so that it
 * rocks about that edge; gravity −g along z; nonsmooth contact with the given restitution and
 * friction; moreau-jean at `dt` (absent: the default step).
 */
export function boxOnEdge(o: {
  mass: number;
  halfExtents: Vec3;
  tilt: number;
  g: number;
  restitution: number;
  friction: number;
  dt?: number;
}): ModelInput {
  const [b, , c] = o.halfExtents;
  const a = o.tilt;
  return {
    gravity: [0, 0, -o.g],
    bodies: [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      {
        id: "box",
        mass: o.mass,
        position: [-(b * Math.cos(a) - c * Math.sin(a)), 0, b * Math.sin(a) + c * Math.cos(a)],
        orientation: [Math.cos(a / 2), 0, Math.sin(a / 2), 0],
        shapes: [{ type: "box", halfExtents: o.halfExtents }],
      },
    ],
    contact: { method: "nsc", restitution: o.restitution, friction: o.friction },
    solver:
      o.dt === undefined ? { integrator: "moreau-jean" } : { integrator: "moreau-jean", dt: o.dt },
  };
}

/**
 * A double pendulum: two rods r1, r2 (1 kg, 1 m along x, HINGED_ROD_INERTIA) in a row from
 * the origin, straight out along +x at rest, on the revolute joints p1 (ground–r1) and p2
 * (r1–r2) about y; default gravity; `solver` as given.
 */
export function hingedRods(solver: NonNullable<ModelInput["solver"]>) {
  return {
    bodies: [
      { id: "r1", mass: 1, position: [0.5, 0, 0], inertia: [...HINGED_ROD_INERTIA] },
      { id: "r2", mass: 1, position: [1.5, 0, 0], inertia: [...HINGED_ROD_INERTIA] },
    ],
    joints: [
      {
        id: "p1",
        type: "revolute",
        a: { body: "ground" },
        b: { body: "r1", point: [-0.5, 0, 0] },
        axis: [0, 1, 0],
      },
      {
        id: "p2",
        type: "revolute",
        a: { body: "r1", point: [0.5, 0, 0] },
        b: { body: "r2", point: [-0.5, 0, 0] },
        axis: [0, 1, 0],
      },
    ],
    solver,
  } satisfies ModelInput;
}

/** A body of randomTree: its mass (kg), principal inertia (kg·m², body frame) and pose. */
export interface RandomTreeBody {
  id: string;
  mass: number;
  inertia: Vec3;
  position: Vec3;
  /** [w, x, y, z] */
  orientation: [number, number, number, number];
}

/**
 * A tree of 3 to 6 rigid bodies drawn from `seed` (mulberry32): body i hangs from the
 * ground or an earlier body by a revolute (random axis), spherical or fixed joint (the
 * first by a revolute or spherical one) at the midpoint between their centres, 0.15–0.3 m
 * apart, with a random orientation and the principal inertias of a box of random sides
 * (2–12 cm) and mass 0.2–2.2 kg. Released at rest under gravity g (m/s², along −z), it
 * tumbles chaotically, its links spinning at up to ~100 rad/s.
 */
export function randomTree(
  seed: number,
  solver: ModelInput["solver"],
  g = 9.81,
): { model: ModelInput; bodies: RandomTreeBody[]; joints: JointIn[] } {
  const r = mulberry32(seed);
  const unit = (): Vec3 => {
    const v: Vec3 = [r() - 0.5, r() - 0.5, r() - 0.5];
    const n = Math.hypot(...v);
    return [v[0] / n, v[1] / n, v[2] / n];
  };
  const orientation = (): RandomTreeBody["orientation"] => {
    const q = [r() - 0.5, r() - 0.5, r() - 0.5, r() - 0.5];
    const n = Math.hypot(...q);
    return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
  };
  // a world point in a body's frame (the ground's is the world)
  const inFrame = (b: RandomTreeBody | null, w: Vec3): Vec3 =>
    b === null
      ? w
      : rotate(
          [b.orientation[0], -b.orientation[1], -b.orientation[2], -b.orientation[3]],
          [w[0] - b.position[0], w[1] - b.position[1], w[2] - b.position[2]],
        );
  const n = 3 + Math.floor(r() * 4);
  const bodies: RandomTreeBody[] = [];
  const joints: JointIn[] = [];
  for (let i = 0; i < n; i++) {
    const parent = i === 0 ? null : (bodies[Math.floor(r() * (i + 1)) - 1] ?? null);
    const from: Vec3 = parent === null ? [0, 0, 0] : parent.position;
    const d = 0.15 + 0.15 * r();
    const u = unit();
    const position: Vec3 = [from[0] + d * u[0], from[1] + d * u[1], from[2] + d * u[2]];
    const [a, b, c] = [r(), r(), r()].map((x) => 0.02 + 0.1 * x);
    const mass = 0.2 + 2 * r();
    const body: RandomTreeBody = {
      id: `b${i}`,
      mass,
      inertia: [
        (mass * (b * b + c * c)) / 3,
        (mass * (a * a + c * c)) / 3,
        (mass * (a * a + b * b)) / 3,
      ],
      position,
      orientation: orientation(),
    };
    const anchor: Vec3 = [0, 1, 2].map((k) => 0.5 * (from[k] + position[k])) as Vec3;
    const type = (["revolute", "spherical", "fixed"] as const)[Math.floor(r() * (i === 0 ? 2 : 3))];
    joints.push({
      id: `j${i}`,
      type,
      a: { body: parent === null ? "ground" : parent.id, point: inFrame(parent, anchor) },
      b: { body: body.id, point: inFrame(body, anchor) },
      ...(type === "revolute" ? { axis: unit() } : {}),
    } as JointIn);
    bodies.push(body);
  }
  const model = {
    gravity: [0, 0, -g],
    bodies: bodies.map(({ id, mass, inertia, position, orientation }) => ({
      id,
      mass,
      inertia,
      position,
      orientation,
    })),
    joints,
    solver,
  } as ModelInput;
  return { model, bodies, joints };
}

/**
 * A fem bar, 1 × 0.2 × 0.2 m in 6 × 6 × 6 cells (ρ = 1000 kg/m³, E = 1e7 Pa, ν = 0.3),
 * clamped at its −x face to a fixed wall and bending under gravity, at h = 5 ms with
 * Newton to 1e-10 throughout (newmark's default also stops at a share of the step's own
 * error): its steps run on the factored PCG (auto) and spend enough CG work for several
 * refactorizations within a few dozen steps.
 */
export function clampedFemBar(
  integrator: "generalized-alpha" | "newmark" | "moreau-jean",
): ModelInput {
  return {
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "bar",
        box: { size: [1, 0.2, 0.2], resolution: [6, 6, 6], center: [0.5, 0, 0] },
        density: 1000,
        youngModulus: 1e7,
        poissonRatio: 0.3,
        fixedFaces: ["-x"],
      },
    ],
    solver: { integrator, dt: 0.005, newtonTolerance: 1e-10 },
  };
}

/**
 * A 2 × 2 × 2-cell stvk block "b" (edge `size` m, ρ `density` kg/m³, E `youngModulus` Pa,
 * ν 0.3) with its bottom face `bottom` m above an inelastic nsc floor (z = 0), under gravity
 * g = 9.81 m/s² along −z, stepped by moreau-jean at `dt` s. Its 27 nodes are femNodeId("b", k).
 */
export function femBlockOverFloor(o: {
  size: number;
  bottom: number;
  density: number;
  youngModulus: number;
  dt: number;
}): ModelInput {
  return {
    gravity: [0, 0, -9.81],
    bodies: [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }],
    fem: [
      {
        id: "b",
        box: {
          size: [o.size, o.size, o.size],
          resolution: [2, 2, 2],
          center: [0, 0, o.bottom + o.size / 2],
        },
        density: o.density,
        youngModulus: o.youngModulus,
        poissonRatio: 0.3,
        material: "stvk",
      },
    ],
    contact: { method: "nsc", restitution: 0 },
    solver: { dt: o.dt, integrator: "moreau-jean" },
  } as ModelInput;
}

/** The hinged bob's dimensions: hinge height H over the floor z = 0, arm L, radius R (m), the
 * sphere's principal inertia I (kg·m²); its mass 1 kg. */
export const HINGED_BOB = { H: 0.59, L: 0.5, R: 0.1, I: 0.004 } as const;

/**
 * A 1 kg sphere ("bob", HINGED_BOB) on an arm of length L from a hinge about y at (0, 0, H),
 * its lowest point `dz` over the floor z = 0 (the contact point x_c = √(L² − (H − R − dz)²)
 * from the hinge axis), turning at ω₀ = `rate` rad/s about the hinge (up for ω₀ > 0: ω =
 * (0, −ω₀, 0), v = ω × (x_c, 0, R + dz − H)), its position servo ("servo", k_p `kp`, k_d 0)
 * commanding 0.1 rad (into the floor). The floor itself is the caller's.
 */
export function hingedBob(
  dz: number,
  kp: number,
  rate = 0,
): { bodies: BodyIn[]; joints: JointIn[]; actuators: ActuatorIn[] } {
  const { H, L, R, I } = HINGED_BOB;
  const zc = R + dz;
  const xc = Math.sqrt(L * L - (H - zc) ** 2);
  return {
    bodies: [
      {
        id: "bob",
        mass: 1,
        inertia: [I, I, I],
        position: [xc, 0, zc],
        ...(rate === 0
          ? {}
          : { angularVelocity: [0, -rate, 0], velocity: [-rate * (zc - H), 0, rate * xc] }),
        shapes: [{ type: "sphere", radius: R }],
      },
    ],
    joints: [
      {
        id: "hinge",
        type: "revolute",
        a: { body: "ground", point: [0, 0, H] },
        b: { body: "bob", point: [-xc, 0, H - zc] },
        axis: [0, 1, 0],
      },
    ],
    actuators: [{ id: "servo", joint: "hinge", type: "position", target: 0.1, kp, kd: 0 }],
  };
}

/**
 * A 2 kg rod ("rod", principal inertia (1e-3, 0.06, 0.06) kg·m²) hinged about z at its
 * centre (5, 0, 2), far from anything, on an undamped position servo ("rodServo", k_p `kp`,
 * k_d 0) commanding 0.3 rad from rest at 0: it rings at √(k_p / 0.06) rad/s.
 */
export function servoRodApart(kp: number): {
  bodies: BodyIn[];
  joints: JointIn[];
  actuators: ActuatorIn[];
} {
  return {
    bodies: [{ id: "rod", mass: 2, position: [5, 0, 2], inertia: [1e-3, 0.06, 0.06] }],
    joints: [
      {
        id: "pin",
        type: "revolute",
        a: { body: "ground", point: [5, 0, 2] },
        b: { body: "rod" },
        axis: [0, 0, 1],
      },
    ],
    actuators: [{ id: "rodServo", joint: "pin", type: "position", target: 0.3, kp, kd: 0 }],
  };
}
