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
 * (a particle: Δv only; L and the moment are refused on it). Joints are not consulted: a
 * kick or a teleport of a jointed body is corrected by the joints' projection at the end
 * of the next step (jointTolerance), as an assembly would.
 */
import type { InputSpec } from "../../../schemas/input";
import type { JointActuator } from "../actuators/actuator";
import type { PointForceEffector } from "../forces/point-force";
import { mat3MulVec } from "../math/mat3";
import { quatNormalize } from "../math/quat";
import { cross3 } from "../math/vec3";
import { BodyKind, type BodySystem } from "../model/body-system";

export interface InputTargets {
  system: BodySystem;
  actuators: ReadonlyMap<string, JointActuator>;
  loads: ReadonlyMap<string, PointForceEffector>;
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

/** The paths of a vector's components beyond `bound` in magnitude, with `what` they are. */
function beyond(
  v: readonly number[] | undefined,
  key: string,
  bound: number,
  what: string,
): InputIssue[] {
  if (v === undefined) return [];
  return v.flatMap((x, k) =>
    Math.abs(x) > bound
      ? [
          {
            path: [key, k],
            message: `${what} beyond ${bound.toExponential(0)}, where a run is a blow-up`,
          },
        ]
      : [],
  );
}

/** Why `input` cannot act on this model (paths from the input), or [] when it can. */
export function checkInput(input: InputSpec, t: InputTargets): InputIssue[] {
  const sys = t.system;
  switch (input.type) {
    case "actuator":
      return t.actuators.has(input.id)
        ? []
        : [{ path: ["id"], message: `unknown actuator "${input.id}"` }];
    case "load":
      return t.loads.has(input.id)
        ? []
        : [{ path: ["id"], message: `unknown pointForce "${input.id}"` }];
    case "bodyState":
    case "impulse": {
      const b = sys.index.get(input.id);
      if (b === undefined) return [{ path: ["id"], message: `unknown body "${input.id}"` }];
      if (sys.dofOffset[b] < 0)
        return [{ path: ["id"], message: `body "${input.id}" is fixed: it cannot be moved` }];
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

/** angularChange's moment (an input is applied or checked at a time: no per-call array). */
const IMPULSE_SCRATCH = new Float64Array(3);

/**
 * Applies a checked input. Returns true when it changed the state (positions or
 * velocities), which the caller follows with what a state change needs (the integrator's
 * memory, the energy reference, the joints' turn counts).
 */
export function applyInput(input: InputSpec, t: InputTargets): boolean {
  const sys = t.system;
  switch (input.type) {
    case "actuator": {
      const a = t.actuators.get(input.id);
      if (a) a.override = input.value;
      return false;
    }
    case "load":
      t.loads
        .get(input.id)
        ?.setLoad(input.reset ? null : { force: input.force, torque: input.torque });
      return false;
    case "bodyState": {
      const b = sys.index.get(input.id) as number;
      if (input.position) sys.pos.set(input.position, 3 * b);
      if (input.orientation) {
        sys.quat.set(input.orientation, 4 * b);
        quatNormalize(sys.quat, 4 * b);
      }
      if (input.velocity) sys.vel.set(input.velocity, 3 * b);
      if (input.angularVelocity) sys.omega.set(input.angularVelocity, 3 * b);
      return true;
    }
    case "impulse": {
      const b = sys.index.get(input.id) as number;
      const J = input.impulse;
      const m = sys.mass[b];
      for (let k = 0; k < 3; k++) sys.vel[3 * b + k] += J[k] / m;
      if (sys.kind[b] !== BodyKind.RIGID) return true;
      const dw = new Float64Array(3);
      angularChange(input, sys, b, dw);
      for (let i = 0; i < 3; i++) sys.omega[3 * b + i] += dw[i];
      return true;
    }
  }
}
