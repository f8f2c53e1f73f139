/**
 * Run-time inputs: what a client sends to drive a running simulation (POST
 * /v1/sessions/:id/inputs and the `inputs` message on the session's WebSocket), and the
 * parameter patch (PATCH /v1/sessions/:id). An input takes effect at a step boundary: the
 * next one, or the one its `step` names (not in the past). Units SI, world frame unless
 * said otherwise; ids name the model's actuators, point forces and bodies.
 */
import { z } from "zod";
import { BodyRef, Contact, Id, Quaternion, SolverSettings, Vec3 } from "./model";

/**
 * A partial copy of an object schema whose fields may all be omitted and, unlike zod's
 * `.partial()`, fill in no defaults: a PATCH must change only what it names.
 */
function patchOf<S extends z.ZodRawShape>(obj: z.ZodObject<S>) {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, v] of Object.entries(obj.shape)) {
    const t = v as z.ZodType;
    shape[k] = (t instanceof z.ZodDefault ? (t.unwrap() as z.ZodType) : t).optional();
  }
  return z.strictObject(shape) as unknown as z.ZodObject<{
    [K in keyof S]: z.ZodOptional<S[K] extends z.ZodDefault<infer I> ? I : S[K]>;
  }>;
}

export const SolverPatch = patchOf(SolverSettings).meta({ id: "SolverPatch" });
export const ContactPatch = patchOf(Contact).meta({ id: "ContactPatch" });

export const ParametersPatch = z
  .strictObject({
    solver: SolverPatch.optional(),
    gravity: Vec3.optional(),
    contact: ContactPatch.optional(),
  })
  .meta({ id: "SessionPatch" });

/** One input. */
export const Input = z
  .discriminatedUnion("type", [
    z.strictObject({
      type: z.literal("actuator"),
      id: Id.meta({ description: "the actuator's id" }),
      value: z.number().nullable().meta({
        description:
          "the command from now on: a torque actuator's effort (N·m or N), a velocity servo's target rate (rad/s or m/s), a position servo's target (rad or m; its target rate is then 0); null: back to the model's time function",
      }),
    }),
    z.strictObject({
      type: z.literal("gains"),
      id: Id.meta({ description: "the actuator's id" }),
      kp: z.number().nonnegative().optional().meta({
        description: "a position servo's k_p from now on (N·m/rad or N/m)",
      }),
      kd: z.number().nonnegative().optional().meta({
        description: "a position servo's k_d from now on (N·m·s/rad or N·s/m)",
      }),
      kv: z.number().nonnegative().optional().meta({
        description: "a velocity servo's k_v from now on (N·m·s/rad or N·s/m)",
      }),
      effortLimit: z.number().positive().nullable().optional().meta({
        description: "|effort| at most from now on (N·m or N), any actuator's; null: none",
      }),
      reset: z.boolean().default(false).meta({
        description:
          "true: back to the model's gains (alone: with kp, kd, kv or effortLimit, a 400 at that field)",
      }),
    }),
    z.strictObject({
      type: z.literal("load"),
      id: Id.meta({ description: "a pointForce's id" }),
      force: Vec3.default([0, 0, 0]).meta({ description: "N, in the load's frame" }),
      torque: Vec3.default([0, 0, 0]).meta({ description: "N·m, in the load's frame" }),
      reset: z.boolean().default(false).meta({
        description:
          "true: back to the model's time functions (alone: with a nonzero force or torque, a 400 at that field)",
      }),
    }),
    z.strictObject({
      type: z.literal("limits"),
      id: Id.meta({ description: "a revolute or prismatic joint whose model gives `limits`" }),
      lower: z.number().meta({
        description:
          "rad (revolute) or m (prismatic) from the model pose; the model's restitution, stiffness and damping stay",
      }),
      upper: z.number().meta({ description: "above lower" }),
    }),
    z.strictObject({
      type: z.literal("bodyState"),
      id: BodyRef.meta({
        description: 'the body\'s id (a dynamic body, or a fem node "<fem id>/<k>")',
      }),
      position: Vec3.optional(),
      orientation: Quaternion.optional().meta({ description: "[w, x, y, z]; normalized" }),
      velocity: Vec3.optional(),
      angularVelocity: Vec3.optional(),
    }),
    z.strictObject({
      type: z.literal("jointState"),
      id: Id.meta({ description: "a revolute or prismatic joint's id" }),
      position: z.number().optional().meta({
        description:
          "its coordinate q (rad or m from the model pose, revolute angles unwrapped, as jointPosition reads it): the joint's child side turned or slid rigidly",
      }),
      velocity: z.number().optional().meta({
        description:
          "its rate q̇ (rad/s or m/s, as jointVelocity reads it); absent: the joints' rates kept",
      }),
    }),
    z.strictObject({
      type: z.literal("impulse"),
      id: BodyRef.meta({
        description: 'the body\'s id (a dynamic body, or a fem node "<fem id>/<k>")',
      }),
      impulse: Vec3.default([0, 0, 0]).meta({ description: "N·s, world frame, at `point`" }),
      point: Vec3.default([0, 0, 0]).meta({
        description: "where the impulse acts, in the body frame (m)",
      }),
      angularImpulse: Vec3.default([0, 0, 0]).meta({ description: "N·m·s, world frame" }),
    }),
  ])
  .meta({
    id: "Input",
    description:
      "actuator: set a command; gains: set a servo's k_p, k_d (k_v) or an actuator's effortLimit; load: set a point force; limits: move a joint's bounds; bodyState: teleport (set any of pose and velocity); jointState: set a joint's coordinate and rate, its child side moved rigidly; impulse: kick (Δv = J/m, Δω = I⁻¹(r × J + L))",
  });

export const InputsBody = z
  .strictObject({
    inputs: z.array(Input).min(1).max(1000),
    step: z.number().int().nonnegative().optional().meta({
      description:
        "apply at this step boundary (before step `step + 1` is taken); absent: the next boundary; a step already passed is refused",
    }),
  })
  .meta({ id: "InputsRequest" });

export const InputsAccepted = z
  .object({
    step: z.number().int().nonnegative().meta({
      description:
        "the step boundary at which the inputs take effect: the state with this step number is the first to include them",
    }),
    pending: z.number().int().nonnegative().meta({ description: "inputs waiting for later steps" }),
  })
  .meta({ id: "InputsAccepted" });

/**
 * Set on a recorded input that a later request applied at the same step boundary, after
 * the ones before it had taken effect: a replay applies it the same way (the articulated
 * integrator puts the bodies back on their joints after each request's inputs, and doing
 * it once for both would differ by rounding).
 */
const Separate = z.boolean().optional().meta({
  description:
    "true: applied by a later request at the same step, after the inputs before it had taken effect (a replay does the same)",
});

/** An input or a parameter patch at a step boundary (recordings, snapshots' pending list). */
export const TimedInput = z
  .union([
    z.strictObject({ step: z.number().int().nonnegative(), input: Input, separate: Separate }),
    z.strictObject({
      step: z.number().int().nonnegative(),
      parameters: ParametersPatch,
      separate: Separate,
    }),
  ])
  .meta({ id: "TimedInput" });

export type InputIn = z.input<typeof Input>;
export type InputSpec = z.output<typeof Input>;
export type ParametersPatchSpec = z.output<typeof ParametersPatch>;
export type TimedInputSpec = z.output<typeof TimedInput>;
