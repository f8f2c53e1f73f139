/**
 * Run-time inputs (schemas/input.ts) checked against a model and applied to its state.
 * Checking names the input's path and the unknown or unfit id; applying happens at a step
 * boundary (Simulation.step calls it before the step whose number the input was
 * scheduled at).
 *
 * bodyState (teleport, as MuJoCo MPC's SetState) writes any of position, orientation
 * (normalized), velocity and angular velocity (world frame) of a dynamic body.
 * impulse (a kick) changes the velocities of a dynamic body as an impulse J (N·s, world)
 * at the body point p (body frame) and an angular impulse L (N·m·s, world) would:
 *   Δv = J/m,   Δω = I_w⁻¹ (r × J + L),   r = R p
 * (a particle: Δv only; L and the moment are refused on it). Joints are not consulted
 * here: after the inputs, Simulation.stateChanged puts the velocities onto the joints at
 * once (the joints' share of a kick); a written pose is left to the joints' projection at
 * the next step's end, unless a joint is then past a bound that ontoBounds moves it onto
 * at once, the joints closed with it (newmark, generalized-alpha and articulated's
 * default bounds): a link of the imported 7-axis arm, whose joint4 starts past its bound,
 * written 0.01 m off its joints read 2e-4 m off right after under generalized-alpha and
 * 0.01 m under moreau-jean; a hinged rod within its bounds 0.01 m under both.
 *
 * gains sets a servo's k_p, k_d (k_v) or an actuator's effortLimit from the boundary on
 * (as MuJoCo's writable actuator_gainprm/biasprm, ROS control's dynamic PID parameters):
 * the law reads them at each evaluation (JointActuator.setGains); the energy balance books
 * a servo's whole effort as work from each step's start (step-work.ts), so the jump of
 * its potential ½ k_p e² at the change is no error. The command in effect is checked
 * under the new gains as a command is (commandBounds).
 *
 * Values whose effect is a blow-up are refused (checkInput), as the step that reached them
 * would end the run `diverged`: positions and velocities beyond BLOW_UP_POSITION and
 * BLOW_UP_VELOCITY, and the velocity change an impulse makes beyond the latter — and so
 * that of one step h (solver.dt) of an effort an input sets, the impulse h F: a load's
 * (J = h F at its point, L = h T) and a torque actuator's (h τ along its joint), and a
 * servo's target whose motion passes them (commandBounds). A 1e300 N load made the next
 * step diverge (or its energy overflow) instead of a 400 naming it; 1e6 N on a 1 kg body at
 * h = 1 ms (Δv = 1e3 m/s) is taken.
 */
import type { InputSpec } from "../../../schemas/input";
import type { ModelSpec, TimeFunctionSpec } from "../../../schemas/model";
import type { JointActuator, ServoGains } from "../actuators/actuator";
import type { CompliantJointLimit } from "../actuators/joint-limit";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import type { PointForceEffector } from "../forces/point-force";
import { mat3MulVec } from "../math/mat3";
import { quatNormalize } from "../math/quat";
import { cross3, sameValues } from "../math/vec3";
import { BodyKind, type BodySystem, updateBodyDerived } from "../model/body-system";
import { magnitudeBound } from "../model/time-function";
import type { JointStates } from "./joint-state";

/** A bound's holder: the compliant law's limit and the nonsmooth treatment's entry. */
interface BoundsHolder {
  lower: number;
  upper: number;
}

/**
 * The bounds of a joint whose model gives `limits`, which a `limits` input moves: written
 * to both treatments (joint-limit.ts's compliant law, limit-problem.ts's unilateral rows),
 * whichever the integrator uses, so that a PATCH of the integrator finds them moved too.
 */
export class JointBounds {
  constructor(
    readonly joint: string,
    /** The model's bounds (rad or m from the model pose): a reset's. */
    readonly modelLower: number,
    readonly modelUpper: number,
    private readonly holders: readonly BoundsHolder[],
    /** The joint's coordinate q (rad or m), which the bounds hold. */
    private readonly coordinate: JointCoordinate,
    /** The compliant law when the model gives its stiffness (a spring, springEnergy), else null. */
    private readonly spring: CompliantJointLimit | null,
  ) {}

  get lower(): number {
    return this.holders[0].lower;
  }

  get upper(): number {
    return this.holders[0].upper;
  }

  /** Whether the bounds in effect are not the model's. */
  get moved(): boolean {
    return this.lower !== this.modelLower || this.upper !== this.modelUpper;
  }

  /**
   * Whether bounds moved to (lower, upper) change the limit's law at the current state: q
   * strictly past a bound that moves, its value in effect or the new one (q < lower,
   * q > upper, where both treatments push: joint-limit.ts, limit-problem.ts). Then the
   * joint is projected onto a new bound it is past (Simulation.ontoBounds: a start for the
   * joint), or under a spring limit (springEnergy) its ½ k δ² appears, changes or goes at
   * once, the input's work (applyInput books it). A joint inside both the old and the new bounds feels neither (no force,
   * no potential, no projection): nothing of its state or of the integrators' memories
   * (the forces they carry) changes.
   */
  reaches(lower: number, upper: number): boolean {
    const q = this.coordinate;
    q.evaluateValue();
    const v = q.value;
    return (
      (lower !== this.lower && (v < lower || v < this.lower)) ||
      (upper !== this.upper && (v > upper || v > this.upper))
    );
  }

  /**
   * ½ k δ² (J) of a spring limit (the model gives its stiffness) whose compliant law is in
   * effect (newmark, generalized-alpha, articulated), δ the depth past the bound at the
   * current state; null otherwise: a rigid bound (the default stiffness, its
   * regularization) or the nonsmooth treatment, which a start moves the joint onto
   * (Simulation.ontoBounds).
   */
  springEnergy(): number | null {
    const s = this.spring;
    return s?.enabled ? s.potentialEnergy() : null;
  }

  set(lower: number, upper: number): void {
    for (const h of this.holders) {
      h.lower = lower;
      h.upper = upper;
    }
  }
}

export interface InputTargets {
  system: BodySystem;
  actuators: ReadonlyMap<string, JointActuator>;
  loads: ReadonlyMap<string, PointForceEffector>;
  /** The joints whose model gives limits, by id; `joints` all the model's joint ids. */
  limits: ReadonlyMap<string, JointBounds>;
  joints: ReadonlySet<string>;
  /** The time (s) of the step boundary the inputs act at. */
  time: () => number;
  /** The step h (s, solver.dt): what an effort set at a boundary acts over before the next. */
  dt: () => number;
  /** The model's command (effort or target) of each actuator, by id (a `gains` input's check). */
  commands: ReadonlyMap<string, TimeFunctionSpec>;
  /** The joints' coordinates and child sides (a `jointState` input). */
  jointStates: JointStates;
  /** After a `gains` input changed whether a servo has Jacobians: the solver re-reads them. */
  effectorsChanged: () => void;
  /**
   * Energy (J) an input put into the model at the boundary without moving it (a spring
   * limit's bound moved: the change of its ½ k δ²; a load input taking a model's constant
   * world force's potential −f·x away, or a reset putting it back), booked as work done by the input
   * (StepMonitor.addInputWork: energy.dissipated lowered by it, energy.error unchanged).
   */
  inputWork: (work: number) => void;
}

export interface InputIssue {
  path: (string | number)[];
  message: string;
}

/**
 * A position (m) or a velocity (m/s, rad/s) beyond these is a blow-up: a step that reaches
 * one ends the run `diverged` (Simulation), and an input may not set one (checkInput: a
 * velocity of 1e300 overflowed the kinetic energy, the State's energies were null, and the
 * run's "last good state" was the absurd one).
 */
export const BLOW_UP_POSITION = 1e8;
export const BLOW_UP_VELOCITY = 1e8;

/**
 * A servo gain (k_p N·m/rad or N/m, k_d or k_v N·m·s/rad or N·s/m) beyond this overflows
 * float64 in the law's own numbers at states a run accepts: with |q − q*| and |q̇ − q̇*| up
 * to 2e8 (both ends within BLOW_UP_POSITION and BLOW_UP_VELOCITY) and |q̇| up to 1e8, the
 * effort's power τ q̇ (W), which the energy balance books, and the potential ½ k_p e² (J)
 * reach 2e16 k: MAX_VALUE/2e16 = 9.0e291. Nothing physical bounds a gain (k_d → ∞ is a
 * brake: at 1e300 backward-euler, symplectic-euler and articulated hold the rod at
 * q̇ = 4e-300 rad/s), but past this the State's energies read null while the run goes on
 * (articulated at k_d 1e300, the rod written at 1e7 rad/s: its power 1e314 W; at 1e291
 * dissipated read the ½ I q̇² = 1.7e13 J it took). The diverged-state tests' deliberately
 * failing servos (k_p, k_d up to 1e30) are far inside it.
 */
export const MAX_GAIN = Number.MAX_VALUE / (2 * BLOW_UP_POSITION * BLOW_UP_VELOCITY);

/**
 * The gains given (key, value: an input's kp, kd, kv or a model's) beyond MAX_GAIN, at
 * path [key], naming the actuator and its joint.
 */
function gainBounds(
  given: readonly [string, number | undefined][],
  actuator: string,
  joint: string,
): InputIssue[] {
  return given.flatMap(([key, v]) =>
    v !== undefined && v > MAX_GAIN
      ? [
          {
            path: [key],
            message: `actuator "${actuator}" on joint "${joint}": ${key} ${v} beyond ${MAX_GAIN.toPrecision(2)}, where its effort's power and potential at rates and errors within the blow-up bounds (2e8 × 1e8) overflow float64 (the energies would read null)`,
          },
        ]
      : [],
  );
}

/**
 * The paths of a vector's components (or of a scalar: path [key]) beyond `bound` in
 * magnitude, with `what` they are.
 */
function beyond(
  v: readonly number[] | number | null | undefined,
  key: string,
  bound: number,
  what: string,
): InputIssue[] {
  if (v === undefined || v === null) return [];
  const issue = (path: (string | number)[]) => ({
    path,
    message: `${what} beyond ${bound.toExponential(0)}, where a run is a blow-up`,
  });
  if (typeof v === "number") return Math.abs(v) > bound ? [issue([key])] : [];
  return v.flatMap((x, k) => (Math.abs(x) > bound ? [issue([key, k])] : []));
}

/** Why `input` cannot act on this model (paths from the input), or [] when it can. */
export function checkInput(input: InputSpec, t: InputTargets): InputIssue[] {
  const sys = t.system;
  switch (input.type) {
    case "actuator": {
      const a = t.actuators.get(input.id);
      if (!a) return [{ path: ["id"], message: unknownActuator(input.id, t) }];
      return commandBounds(input.value, a, sys, t.dt());
    }
    case "gains": {
      const a = t.actuators.get(input.id);
      if (!a) return [{ path: ["id"], message: unknownActuator(input.id, t) }];
      const unfit = gainsFit(input, a);
      if (unfit.length > 0 || input.reset) return unfit;
      // the command in effect (the model's at its largest, as checkModelCommands) under the
      // new gains
      const h = t.dt();
      const spec = t.commands.get(a.id);
      const value = a.override ?? (spec === undefined ? null : magnitudeBound(spec, h));
      const named = (["kp", "kd", "kv", "effortLimit"] as const).find(
        (k) => input[k] !== undefined,
      );
      return commandBounds(value, a, sys, h, gainsOf(input, a)).map((issue) => ({
        path: [named ?? "id"],
        message: `with these gains the command in effect (${value}): ${issue.message}`,
      }));
    }
    case "load": {
      const load = t.loads.get(input.id);
      if (!load) return [{ path: ["id"], message: `unknown pointForce "${input.id}"` }];
      if (!input.reset) return loadBounds(input, load, sys, t.dt());
      // a reset takes the model's time functions back: a force or torque sent with it would
      // be dropped without a word (the schema's zero defaults are indistinguishable from none)
      return (["force", "torque"] as const)
        .filter((k) => input[k].some((x) => x !== 0))
        .map((k) => ({
          path: [k],
          message: `reset: true takes pointForce "${input.id}" back to the model's time functions, which would drop the ${k} sent with it: send it without reset, or reset alone`,
        }));
    }
    case "limits": {
      if (!t.limits.has(input.id))
        return [
          {
            path: ["id"],
            message: t.joints.has(input.id)
              ? `joint "${input.id}" has no limits in the model: only a limited revolute or prismatic joint's bounds move`
              : unknownJoint(input.id, t),
          },
        ];
      return input.lower < input.upper
        ? []
        : [
            {
              path: ["upper"],
              message: `upper (${input.upper}) must be above lower (${input.lower})`,
            },
          ];
    }
    case "jointState": {
      if (!t.joints.has(input.id))
        return [
          {
            path: ["id"],
            message: `unknown joint "${input.id}" (${listIds("joints with a coordinate", [...t.jointStates.coordinates.keys()])})`,
          },
        ];
      if (input.position === undefined && input.velocity === undefined)
        return [
          {
            path: [],
            message: `a jointState input for joint "${input.id}" sets neither position nor velocity`,
          },
        ];
      const refusal = t.jointStates.refusal(input.id);
      if (refusal !== null) return [{ path: ["id"], message: refusal }];
      return [
        ...beyond(input.position, "position", BLOW_UP_POSITION, "a coordinate (m or rad)"),
        ...beyond(input.velocity, "velocity", BLOW_UP_VELOCITY, "a rate (m/s or rad/s)"),
      ];
    }
    case "bodyState":
    case "impulse": {
      const b = sys.index.get(input.id);
      if (b === undefined) return [{ path: ["id"], message: `unknown body "${input.id}"` }];
      if (sys.dofOffset[b] < 0)
        return [{ path: ["id"], message: `body "${input.id}" is fixed: it cannot be moved` }];
      // as an empty jointState: it would change nothing, yet count as a state written from
      // outside (the energy balance's reference re-taken, energy.error and dissipated to 0)
      if (
        input.type === "bodyState" &&
        input.position === undefined &&
        input.orientation === undefined &&
        input.velocity === undefined &&
        input.angularVelocity === undefined
      )
        return [
          {
            path: [],
            message: `a bodyState input for body "${input.id}" sets none of position, orientation, velocity, angularVelocity`,
          },
        ];
      const bounds = input.type === "bodyState" ? stateBounds(input) : impulseBounds(input, sys, b);
      if (bounds.length > 0) return bounds;
      if (sys.kind[b] !== BodyKind.PARTICLE) return [];
      if (input.type === "bodyState" && input.orientation)
        return [{ path: ["orientation"], message: `particle "${input.id}" has no orientation` }];
      if (input.type === "bodyState" && input.angularVelocity)
        return [{ path: ["angularVelocity"], message: `particle "${input.id}" does not rotate` }];
      if (input.type === "impulse" && input.angularImpulse.some((x) => x !== 0))
        return [{ path: ["angularImpulse"], message: `particle "${input.id}" does not rotate` }];
      return [];
    }
  }
}

type GainsInput = Extract<InputSpec, { type: "gains" }>;

/**
 * Why a `gains` input does not fit its actuator, validated as the model's gains are
 * (schemas/model.ts Actuator: k_p and k_d a position servo's, k_v a velocity servo's, an
 * effortLimit any actuator's; the schema keeps them non-negative, the limit positive), or
 * [] when it does. Also a snapshot's controls.gains (Simulation.restoreControls).
 */
export function gainsFit(input: GainsInput, a: JointActuator): InputIssue[] {
  const what = {
    torque: "a torque actuator",
    velocity: "a velocity servo",
    position: "a position servo",
  }[a.type];
  const own: readonly string[] = { torque: [], velocity: ["kv"], position: ["kp", "kd"] }[a.type];
  const issues: InputIssue[] = [];
  // a reset takes the model's gains back: a gain sent with it would be dropped without a word
  if (input.reset)
    for (const key of ["kp", "kd", "kv", "effortLimit"] as const)
      if (input[key] !== undefined)
        issues.push({
          path: [key],
          message: `reset: true takes actuator "${a.id}" back to the model's gains, which would drop the ${key} sent with it: send it without reset, or reset alone`,
        });
  for (const key of ["kp", "kd", "kv"] as const)
    if (input[key] !== undefined && !own.includes(key))
      issues.push({
        path: [key],
        message: `actuator "${a.id}" is ${what}: it has no ${key} (${own.length > 0 ? `its gains: ${own.join(", ")}, ` : ""}effortLimit)`,
      });
  issues.push(
    ...gainBounds(
      (["kp", "kd", "kv"] as const).map((k) => [k, input[k]]),
      a.id,
      a.coordinate.joint,
    ),
  );
  if (
    !input.reset &&
    issues.length === 0 &&
    input.kp === undefined &&
    input.kd === undefined &&
    input.kv === undefined &&
    input.effortLimit === undefined
  )
    issues.push({
      path: [],
      message: `a gains input for actuator "${a.id}" sets none of ${[...own, "effortLimit"].join(", ")} (or reset: true)`,
    });
  return issues;
}

/** The gains a checked `gains` input gives its actuator: those it names, the others as in effect. */
export function gainsOf(input: GainsInput, a: JointActuator): ServoGains {
  if (input.reset) return { ...a.modelGains };
  const g = a.gains;
  return {
    kp: input.kp ?? g.kp,
    kd: input.kd ?? input.kv ?? g.kd,
    limit:
      input.effortLimit === undefined ? g.limit : (input.effortLimit ?? Number.POSITIVE_INFINITY),
  };
}

/**
 * The refusal of an actuator input naming no actuator: what the id is when it names a
 * joint (its actuators, as a URDF import names them "<joint>.actuator"), and the model's
 * actuators (listIds).
 */
function unknownActuator(id: string, t: InputTargets): string {
  const actuators = [...t.actuators.values()];
  if (t.joints.has(id)) {
    const on = actuators.filter((a) => a.coordinate.joint === id).map((a) => `"${a.id}"`);
    return `unknown actuator "${id}": it is a joint, ${on.length > 0 ? `driven by ${on.join(", ")}` : "which no actuator drives"}`;
  }
  return `unknown actuator "${id}" (${listIds(
    "actuators",
    actuators.map((a) => a.id),
  )})`;
}

/** The refusal of a limits input naming no joint: what the id is when it names an actuator, and the joints whose bounds move. */
function unknownJoint(id: string, t: InputTargets): string {
  const a = t.actuators.get(id);
  const joint = a ? `: it is an actuator, on the joint "${a.coordinate.joint}"` : "";
  return `unknown joint "${id}"${joint} (${listIds("joints with limits", [...t.limits.keys()])})`;
}

/** "the model's <what>: "a", "b"" (the first LISTED_IDS of them, and how many in all), or "the model has no <what>". */
function listIds(what: string, ids: readonly string[]): string {
  if (ids.length === 0) return `the model has no ${what}`;
  const shown = ids.slice(0, LISTED_IDS).map((id) => `"${id}"`);
  const more = ids.length > LISTED_IDS ? `, … ${ids.length} in all` : "";
  return `the model's ${what}: ${shown.join(", ")}${more}`;
}

/** How many ids an unknown id's refusal lists (a 10 000-body cloth's would be 600 kB). */
const LISTED_IDS = 10;

/**
 * The model's actuator commands and point loads checked as inputs that set their largest
 * values would be (checkInput; each time function at its magnitudeBound for h = solver.dt):
 * a model whose command or load is a blow-up at once is refused as such an input is. Paths
 * from the model's root: ["actuators", i, "effort" | "target"], ["forces", i, "force", k]
 * or ["forces", i, "torque"].
 */
export function checkModelCommands(model: ModelSpec, t: InputTargets): InputIssue[] {
  const h = t.dt();
  const issues: InputIssue[] = [];
  model.actuators.forEach((a, i) => {
    const gains: [string, number | undefined][] =
      a.type === "position"
        ? [
            ["kp", a.kp],
            ["kd", a.kd],
          ]
        : a.type === "velocity"
          ? [["kv", a.kv]]
          : [];
    for (const issue of gainBounds(gains, a.id, a.joint))
      issues.push({ path: ["actuators", i, ...issue.path], message: issue.message });
    const [key, f] = a.type === "torque" ? ["effort", a.effort] : ["target", a.target];
    const input = { type: "actuator" as const, id: a.id, value: magnitudeBound(f, h) };
    for (const issue of checkInput(input, t))
      issues.push({ path: ["actuators", i, key], message: issue.message });
  });
  model.forces.forEach((f, i) => {
    if (f.type !== "pointForce") return;
    const bound = (v: readonly TimeFunctionSpec[]): [number, number, number] => [
      magnitudeBound(v[0], h),
      magnitudeBound(v[1], h),
      magnitudeBound(v[2], h),
    ];
    const input = {
      type: "load" as const,
      id: f.id,
      force: bound(f.force),
      torque: f.torque ? bound(f.torque) : ([0, 0, 0] as [number, number, number]),
      reset: false,
    };
    for (const issue of checkInput(input, t))
      issues.push({ path: ["forces", i, ...issue.path], message: issue.message });
  });
  return issues;
}

/** A bodyState's values beyond the blow-up bounds. */
function stateBounds(input: Extract<InputSpec, { type: "bodyState" }>): InputIssue[] {
  return [
    ...beyond(input.position, "position", BLOW_UP_POSITION, "a coordinate (m)"),
    ...beyond(input.velocity, "velocity", BLOW_UP_VELOCITY, "a velocity (m/s)"),
    ...beyond(input.angularVelocity, "angularVelocity", BLOW_UP_VELOCITY, "a rate (rad/s)"),
  ];
}

/**
 * An impulse whose velocity change is beyond the blow-up bound: Δv = J/m, and
 * Δω = I_w⁻¹ (r × J + L) at the body's present orientation (as applyInput computes it).
 */
function impulseBounds(
  input: Extract<InputSpec, { type: "impulse" }>,
  sys: BodySystem,
  b: number,
): InputIssue[] {
  const J = input.impulse;
  const m = sys.mass[b];
  const linear = beyond(
    J.map((x) => x / m),
    "impulse",
    BLOW_UP_VELOCITY,
    "the velocity change it makes (m/s)",
  );
  if (linear.length > 0 || sys.kind[b] !== BodyKind.RIGID) return linear;
  const dw = new Float64Array(3);
  angularChange(input, sys, b, dw);
  return Math.hypot(dw[0], dw[1], dw[2]) > BLOW_UP_VELOCITY
    ? [
        {
          path: ["angularImpulse"],
          message: `the rate change it makes, with the impulse's moment, is beyond ${BLOW_UP_VELOCITY.toExponential(0)} rad/s, where a run is a blow-up`,
        },
      ]
    : [];
}

/**
 * An actuator command whose effect is a blow-up (path ["value"]), a dynamic body at either
 * end of its joint moving as the joint lets it with the other end held, along the joint
 * with the inertia I (kg along a prismatic joint; about a revolute one its moment
 * I_J = âᵀ I_w â + m |â × r|², â the joint's axis, r the lever from the centre of mass to
 * the joint's anchor on the body, the parallel-axis theorem), its centre at d = |â × r|
 * from the axis:
 *   torque     one step's impulse h τ (τ clamped to its effortLimit, as it acts):
 *              Δq̇ = h |τ| / I
 *   velocity   the target rate |q̇*| the servo drives the joint to (beyond BLOW_UP_VELOCITY
 *              refused as such)
 *   position   the largest rate the servo's law drives the joint to from its present
 *              q and q̇ toward the target (JointActuator.peakRate), or, if less, the rate
 *              of a step that carries it there at once, |q* − q|/h + |q̇|: what an implicit
 *              step makes of a servo too stiff for it to resolve (h ω_n ≫ 1, backward
 *              Euler's q̇₁ → (q* − q)/h, a hold), whose law's own peak, undamped, is
 *              |q* − q| ω_n; so only a target both readings make a blow-up is refused
 *              (and one beyond BLOW_UP_POSITION as such)
 * refused when that rate (rad/s or m/s), or about a hinge its centre's speed d q̇, passes
 * BLOW_UP_VELOCITY. Until 2026-12-06 the revolute torque check took the free body's
 * smallest principal moment, so a slim rod hinged across its length was bounded by its
 * moment about its own long axis (and an isotropic body, which stores none, by NaN: any
 * effort taken), and a position servo's target was checked against 1e8 rad alone: a target
 * of 9e7 rad on a 20 N·m/rad servo (no effort limit) was taken and its 8e8 rad/s swing
 * ended the run at its first step. Other joints of a mechanism only add inertia; a free
 * body at the other end takes part of the turn (its own check).
 */
function commandBounds(
  value: number | null,
  a: JointActuator,
  sys: BodySystem,
  h: number,
  gains: ServoGains = a.gains,
): InputIssue[] {
  if (value === null) return [];
  if (a.type === "position") {
    const far = beyond(value, "value", BLOW_UP_POSITION, "a target (m or rad)");
    if (far.length > 0) return far;
  }
  if (a.type === "velocity") {
    const far = beyond(value, "value", BLOW_UP_VELOCITY, "a target rate (m/s or rad/s)");
    if (far.length > 0) return far;
  }
  const q = a.coordinate;
  const angle = q.kind === "angle";
  q.evaluate();
  const [rateUnit, inertiaUnit] = angle ? ["rad/s", "kg·m²"] : ["m/s", "kg"];
  for (const side of [0, 1] as const) {
    const b = side === 0 ? q.bodyA : q.bodyB;
    if (b < 0 || sys.dofOffset[b] < 0 || (angle && sys.kind[b] !== BodyKind.RIGID)) continue;
    const [inertia, arm] = angle
      ? hingeInertia(sys, b, side === 0 ? q.jacA : q.jacB, q.lever(side))
      : [sys.mass[b], 0];
    let rate: number;
    let what: string;
    switch (a.type) {
      case "torque":
        rate = (h * Math.min(Math.abs(value), gains.limit)) / inertia;
        what = `one step (${h} s) of this effort changes body "${sys.ids[b]}" by`;
        break;
      case "velocity":
        rate = Math.abs(value);
        what = `this target rate moves body "${sys.ids[b]}" at`;
        break;
      case "position":
        rate = Math.min(
          a.peakRate(q.value - value, q.rate, inertia, gains),
          Math.abs(value - q.value) / h + Math.abs(q.rate),
        );
        what = `the servo driving its joint from ${q.value.toPrecision(4)} to this target moves body "${sys.ids[b]}" at`;
        break;
    }
    const speed = rate * arm;
    if (Math.max(rate, speed) > BLOW_UP_VELOCITY) {
      const [v, unit] = speed > rate ? [speed, "m/s (its centre)"] : [rate, rateUnit];
      return [
        {
          path: ["value"],
          message: `${what} up to ${v.toExponential(2)} ${unit} (its inertia along the joint ${inertia.toPrecision(4)} ${inertiaUnit}), beyond ${BLOW_UP_VELOCITY.toExponential(0)}, where a run is a blow-up`,
        },
      ];
    }
  }
  return [];
}

/**
 * Rigid body b turning about a hinge's axis through its anchor (the joint's other end
 * held): [I_J, d], I_J = âᵀ I_w â + m d² (kg·m²) its moment about the axis and d = |â × r|
 * (m) its centre's distance from it, â = g_θ/|g_θ| the axis from the coordinate's Jacobian
 * g (its angular part), r the lever (m, world) from the centre to the anchor.
 */
function hingeInertia(
  sys: BodySystem,
  b: number,
  g: Float64Array,
  r: Float64Array,
): [number, number] {
  const n = Math.hypot(g[3], g[4], g[5]);
  const ax = g[3] / n;
  const ay = g[4] / n;
  const az = g[5] / n;
  const J = sys.inertiaWorld;
  const o = 9 * b;
  let axial = 0;
  const u = [ax, ay, az];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) axial += u[i] * J[o + 3 * i + j] * u[j];
  const arm = Math.hypot(ay * r[2] - az * r[1], az * r[0] - ax * r[2], ax * r[1] - ay * r[0]);
  return [axial + sys.mass[b] * arm * arm, arm];
}

/**
 * A load whose impulse over one step of h changes its body by more than the blow-up bound:
 * checked as the impulse J = h F at its point with L = h T would be (impulseBounds; a
 * follower load's F and T turned to the world by the body's rotation), paths ["force", k]
 * (["force"] for a follower) and, for the rate change, ["torque"] — ["force"] when the
 * load has no torque (the force's moment made it).
 */
function loadBounds(
  input: Extract<InputSpec, { type: "load" }>,
  load: PointForceEffector,
  sys: BodySystem,
  h: number,
): InputIssue[] {
  const b = load.at.body;
  if (b < 0 || sys.dofOffset[b] < 0) return [];
  const J = new Float64Array(3);
  const L = new Float64Array(3);
  for (let k = 0; k < 3; k++) {
    J[k] = h * input.force[k];
    L[k] = h * input.torque[k];
  }
  if (load.follower) {
    mat3MulVec(J, 0, sys.rotation, 9 * b, Float64Array.from(J), 0);
    mat3MulVec(L, 0, sys.rotation, 9 * b, Float64Array.from(L), 0);
  }
  const vec = (v: Float64Array): [number, number, number] => [v[0], v[1], v[2]];
  const kick = {
    type: "impulse" as const,
    id: input.id,
    impulse: vec(J),
    point: vec(load.at.local),
    angularImpulse: vec(L),
  };
  const torqued = input.torque.some((x) => x !== 0);
  return impulseBounds(kick, sys, b).map(({ path, message }) => ({
    path:
      path[0] === "impulse"
        ? load.follower
          ? ["force"]
          : ["force", ...path.slice(1)]
        : [torqued ? "torque" : "force"],
    message: `one step (${h} s) of this load: ${message}`,
  }));
}

/** out ← Δω = I_w⁻¹ (R p × J + L) of an impulse on rigid body b (rad/s, world). */
function angularChange(
  input: Extract<InputSpec, { type: "impulse" }>,
  sys: BodySystem,
  b: number,
  out: Float64Array,
): void {
  const L = IMPULSE_SCRATCH;
  // r = R p (world), then L = r × J + L_given
  mat3MulVec(out, 0, sys.rotation, 9 * b, input.point, 0);
  cross3(L, 0, out, 0, input.impulse, 0);
  for (let i = 0; i < 3; i++) L[i] += input.angularImpulse[i];
  mat3MulVec(out, 0, sys.inertiaWorldInv, 9 * b, L, 0);
}

/**
 * Whether each value a bodyState input gives equals body b's in place (the orientation as
 * stored, before the normalization a write makes).
 */
function inPlace(
  input: Extract<InputSpec, { type: "bodyState" }>,
  sys: BodySystem,
  b: number,
): boolean {
  const same = (v: readonly number[] | undefined, held: Float64Array, o: number) =>
    v === undefined || sameValues(v, held, o);
  return (
    same(input.position, sys.pos, 3 * b) &&
    same(input.orientation, sys.quat, 4 * b) &&
    same(input.velocity, sys.vel, 3 * b) &&
    same(input.angularVelocity, sys.omega, 3 * b)
  );
}

/** angularChange's moment (an input is applied or checked at a time: no per-call array). */
const IMPULSE_SCRATCH = new Float64Array(3);

/**
 * What an applied input changed, which the caller follows with what it needs
 * (Simulation.settleInputs):
 *   "state"   positions or velocities (a start: the integrator's memory, the energy
 *             reference re-taken, the joints' turn counts)
 *   "forces"  the applied forces at the state (a command, gains, a load, a spring limit's
 *             bound moved where the joint is past it: the forces the integrator carries from
 *             the last step and the step's work at its start)
 *   "none"    nothing the dynamics read (a zero impulse; a bodyState or jointState of the
 *             values in place; a command, load or gains equal to those in effect; bounds
 *             moved where the joint is inside both the old and the new ones):
 *             the run goes on as without it, bit for bit, its energy balance too.
 */
export type InputEffect = "state" | "forces" | "none";

/** Applies a checked input; returns what it changed (InputEffect). */
export function applyInput(input: InputSpec, t: InputTargets): InputEffect {
  const sys = t.system;
  switch (input.type) {
    case "actuator":
      // the command in effect given again (the override, the model's constant, the State's
      // actuators[].command written back): the law reads the same numbers, nothing to re-take
      // (until 2026-12-08 "forces": the step's work re-taken and the integrators' carried
      // forces restarted, generalized-alpha's motion changed)
      return (t.actuators.get(input.id) as JointActuator).setCommand(input.value)
        ? "forces"
        : "none";
    case "gains": {
      const a = t.actuators.get(input.id) as JointActuator;
      const was = a.gains;
      if (a.setGains(gainsOf(input, a))) t.effectorsChanged();
      const now = a.gains;
      // the gains in effect given again (a client writing back the State's actuators[].gains):
      // the law reads the same numbers, so nothing to re-take (until 2026-12-07 "forces": the
      // step's work re-evaluated, articulated's energy.error 6e-18 J off the run without it)
      return now.kp === was.kp && now.kd === was.kd && now.limit === was.limit ? "none" : "forces";
    }
    case "load": {
      const load = t.loads.get(input.id) as PointForceEffector;
      // a model's constant world force is a potential, −f·x (point-force.ts), which a load
      // set at run time is not, and the other way round at a reset: the change of the
      // potential at the boundary is the input's work, booked as a limit's (until 2026-12-08
      // it went to energy.error: 0.17 J on a servo rod whose 0.5 N end load was set to 1 N,
      // 0.19 J when set to its own value, now "none")
      const before = load.potentialEnergy();
      const given = input.reset ? null : { force: input.force, torque: input.torque };
      if (load.inEffect(given)) return "none";
      load.setLoad(given, t.time());
      const work = load.potentialEnergy() - before;
      if (work !== 0) t.inputWork(work);
      return "forces";
    }
    case "limits": {
      const bounds = t.limits.get(input.id) as JointBounds;
      // a start for the joint where the moved bounds reach it (JointBounds.reaches: onto a
      // bound it is now past, Simulation.stateChanged); else nothing: until 2026-12-07 every
      // limits input was a start, and a servo rod swinging well inside its bounds lost its
      // energy.error and dissipated (back to 0) at each one
      const reached = bounds.reaches(input.lower, input.upper);
      const before = reached ? bounds.springEnergy() : null;
      bounds.set(input.lower, input.upper);
      if (!reached) return "none";
      if (before === null) return "state";
      // a spring limit's: the joint stays where it is (ontoBounds leaves a spring's depth as
      // the model's energy), its push k δ and ½ k δ² change at once, as a load's force would:
      // the change ½ k (δ₁² − δ₀²) is the input's work, booked (until 2026-12-07 a start,
      // which re-took the energy reference: energy.error and dissipated back to 0)
      t.inputWork((bounds.springEnergy() as number) - before);
      return "forces";
    }
    case "bodyState": {
      const b = sys.index.get(input.id) as number;
      // the values in place (a client writing back the State it read): nothing changes, so
      // no start (until 2026-12-07 one, the energy reference re-taken: a servo rod's
      // energy.dissipated, −0.67 J at 0.2 s, back to 0)
      if (inPlace(input, sys, b)) return "none";
      if (input.position) sys.pos.set(input.position, 3 * b);
      if (input.orientation) {
        sys.quat.set(input.orientation, 4 * b);
        quatNormalize(sys.quat, 4 * b);
      }
      if (input.position || input.orientation) {
        // the pose's derived values (rotation, world inertia) and versions at once: the
        // inputs after it at this boundary read them (a jointState's coordinates cached
        // under poseVersion read the pose before it until 2026-12-08, an impulse's
        // Δω = I_w⁻¹ (r × J) the old orientation)
        sys.stateVersion++;
        sys.poseVersion++;
        updateBodyDerived(sys, b);
      }
      if (input.velocity) sys.vel.set(input.velocity, 3 * b);
      if (input.angularVelocity) sys.omega.set(input.angularVelocity, 3 * b);
      return "state";
    }
    case "jointState": {
      // set on a bound it would be past (in joint space: the other joints stay, where the
      // teleport's projection, ontoBounds, moves the whole chain by the least kinetic
      // metric: j1 of a 3-link chain set 0.5 rad past read 0.984 with j0 and j2 moved
      // 0.16 and 0.80 rad); a mimic's partners with it. The values in place (a client writing
      // back the State it read): nothing changes, so no start (until 2026-12-07 one, the
      // energy reference re-taken: a servo rod's energy.dissipated, −0.67 J at 0.2 s, to 0)
      return t.jointStates.set(input.id, input.position, input.velocity, t.limits)
        ? "state"
        : "none";
    }
    case "impulse": {
      // a zero kick (J = L = 0) changes no velocity: not a start (the energy reference kept)
      if (input.impulse.every((x) => x === 0) && input.angularImpulse.every((x) => x === 0))
        return "none";
      const b = sys.index.get(input.id) as number;
      const J = input.impulse;
      const m = sys.mass[b];
      for (let k = 0; k < 3; k++) sys.vel[3 * b + k] += J[k] / m;
      if (sys.kind[b] !== BodyKind.RIGID) return "state";
      const dw = new Float64Array(3);
      angularChange(input, sys, b, dw);
      for (let i = 0; i < 3; i++) sys.omega[3 * b + i] += dw[i];
      return "state";
    }
  }
}
