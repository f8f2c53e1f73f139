/**
 * What the engine reports: the State of a simulation (REST answers and stream frames)
 * and the assembly analysis' options and result. Forces in N, torques in N·m, world
 * frame. For nonsmooth (NSC) contact, forces are the step's impulse divided by h.
 */
import { z } from "zod";
import { Vec3 } from "./model";

const Quat = z.tuple([z.number(), z.number(), z.number(), z.number()]);

export const BodyState = z
  .object({
    id: z.string(),
    position: Vec3,
    orientation: Quat,
    velocity: Vec3,
    angularVelocity: Vec3,
  })
  .meta({ id: "BodyState" });

export const ContactState = z
  .object({
    bodies: z.tuple([z.string(), z.string()]),
    point: Vec3,
    normal: Vec3.meta({ description: "unit, from bodies[0] to bodies[1]" }),
    gap: z.number().meta({ description: "signed distance (m), negative when penetrating" }),
    normalForce: z.number().meta({ description: "N, ≥ 0, pushing the bodies apart" }),
    tangentForce: Vec3.meta({ description: "friction force on bodies[1] (N, world frame)" }),
    impulse: Vec3.meta({ description: "total contact impulse on bodies[1] over the step (N·s)" }),
  })
  .meta({ id: "ContactState" });

export const JointState = z
  .object({
    id: z.string(),
    force: Vec3.meta({ description: "force the joint applies on its body b (N, world)" }),
    torque: Vec3.meta({ description: "torque on body b about the joint point on b (N·m, world)" }),
    coordinates: z.array(z.number()).meta({
      description:
        "the joint's free coordinates from the model pose: revolute [angle (rad, b relative to a about the axis, unwrapped: it counts whole turns)], prismatic [offset (m) along the axis]; [] for the other types, motors and a revolute joint with a particle end",
    }),
    rates: z.array(z.number()).meta({
      description: "the coordinates' time derivatives (rad/s, m/s)",
    }),
    limitEffort: z.number().meta({
      description:
        "effort of the joint's limits along its coordinate (N·m or N, positive pushing the coordinate up; 0 inside the range or without limits)",
    }),
    limits: z
      .object({
        lower: z.number().meta({ description: "rad or m from the model pose" }),
        upper: z.number(),
      })
      .optional()
      .meta({
        description:
          "the bounds in effect, present only while a `limits` input has them differ from the model's (absent: the model's limits, or none)",
      }),
  })
  .meta({ id: "JointState" });

export const Energy = z
  .object({
    kinetic: z.number(),
    potential: z.number(),
    total: z.number(),
    dissipated: z.number().meta({
      description:
        "energy the damping took out since the reference: the dampers, the spring and frameSpring damping and solver.rayleighMass and solver.rayleighStiffness (r_M M + r_K K, K the tangent stiffness; their power integrated by the trapezoidal rule over each step, by the step's own stages with articulated), the kinetic energy solver.velocityDamping's decay took out, the impulses' of nonsmooth contact and of joint limits under the velocity-level integrators (minus their work on each step's mean velocity), the compliant joint limits' of newmark, generalized-alpha and articulated, the kinetic energy articulated's step start changes (velocities off the joints dropped, a motor's rate set) and compliant contact's beyond its elastic energy (its damping, and the elastic energy its no-pull clamp lets go), less the work point forces, actuators and motors put in (so negative where they drive the model) and the energy a limits input puts in where it moves a spring limit's bound past its joint (the change of its ½ k δ²); 0 without damping or drives",
    }),
    error: z.number().meta({
      description:
        "the energy balance: total plus dissipated minus the reference (the total at t = 0, re-taken after reset, a PATCH of gravity or solver damping, an applied assembly or an external change of the state): the integrator's own energy error",
    }),
  })
  .meta({ id: "Energy", description: "J; potential = gravitational + elastic" });

export const SolverStats = z
  .object({
    newtonIterations: z.number(),
    newtonConverged: z.boolean().meta({
      description:
        "whether the step's Newton iterations met solver.newtonTolerance (always true for one iteration, the linearized step); only Moreau–Jean with nonsmooth contact can end a step unconverged, when its iterations run out before Newton's own correction falls below the contact solve's change (from there on the step's accuracy is the contact solve's: contactConverged); every other integrator redoes such a step in halves or ends the run diverged",
    }),
    linearIterations: z.number(),
    contactIterations: z.number(),
    contactResidual: z.number(),
    contactConverged: z.boolean().meta({
      description:
        "whether the nonsmooth contact solver met solver.tolerance in the step (else contactResidual is above it: the step's contact velocities are off by about that much, m/s), and, under moreau-jean, whether each impact met at its instant solved its law (else contactResidual holds that solve's residual, m/s: README, Contact); true without active contacts",
    }),
    penetration: z.number().meta({
      description:
        "deepest penetration (m) left by the step's contact position projection (projectOnConstraints with nonsmooth contact); 0 without one",
    }),
    projectionConverged: z.boolean().meta({
      description:
        "whether penetration is within solver.projectionTolerance (false: the projection's sweeps ran out first)",
    }),
    substeps: z.number().int().meta({
      description:
        "sub-steps the step was taken in: 1, or more where a step whose Newton iterations did not converge (or whose error exceeded solver.stepTolerance, or in which a compliant contact switched unresolved) was redone in halves, or symplectic-euler's explicit step was split for the compliant contacts pushing at its start, up to 16; articulated: its accepted Runge–Kutta sub-steps (up to 2000)",
    }),
    impacts: z.number().int().meta({
      description:
        "moreau-jean: impacts of jointed or spinning bodies (restitution > 0, no friction) the step met at their instants, the step split at each (README, Contact); 0 elsewhere",
    }),
    impactsResolved: z.boolean().meta({
      description:
        "false when the step met more than 16 such impacts (or took 64 pieces) and took the rest of it whole, Newton's law on its active contacts together; true elsewhere",
    }),
    stepError: z.number().meta({
      description:
        "the integrators with an error control (solver.stepTolerance; all but backward-euler): the largest local error estimate (m) of the step's accepted sub-steps, the root-mean-square displacement of a body's mass (with the default stepTolerance and bodies of several jointed groups, in metres of the tightest group's tolerance: each other body's weighted by the ratio of that to its own); 0 without one",
    }),
    stepToleranceMet: z.boolean().meta({
      description:
        "whether stepError is within solver.stepTolerance (false: the step was halved four times and its last sub-steps still exceeded it, accepted so that the run goes on; articulated accepts no sub-step above it but an implicit step's sub-steps at h/1024, a stiff servo's transient); true without an error control",
    }),
    jointToleranceMet: z.boolean().meta({
      description:
        "whether the joints' post-step projection brought ‖C‖∞ within solver.jointTolerance (false: its 25 updates ran out first); true without joints, with generalized-alpha, whose Newton iterations close the joints (newtonConverged), and with articulated, whose joints are its coordinates",
    }),
    reactionChange: z.number().meta({
      description:
        "largest change between the last two steps of any joint's reaction force or torque component (N, N·m; ∞-norm over joints); 0 before the second step",
    }),
  })
  .meta({ id: "SolverStats", description: "figures of the last step" });

export const ActuatorState = z
  .object({
    id: z.string(),
    effort: z.number().meta({
      description: "the effort applied in the last evaluation (N·m or N, after the effort limit)",
    }),
    command: z.number().meta({
      description: "the command now: effort (torque), target rate (velocity) or target (position)",
    }),
    gains: z
      .object({
        kp: z.number().optional().meta({ description: "a position servo's k_p (N·m/rad or N/m)" }),
        kd: z
          .number()
          .optional()
          .meta({ description: "a position servo's k_d (N·m·s/rad or N·s/m)" }),
        kv: z
          .number()
          .optional()
          .meta({ description: "a velocity servo's k_v (N·m·s/rad or N·s/m)" }),
        effortLimit: z.number().nullable().meta({ description: "|effort| at most; null: none" }),
      })
      .optional()
      .meta({
        description:
          "the gains in effect, present only while a `gains` input has them differ from the model's (absent: the model's): the fields of that input the actuator's type has",
      }),
  })
  .meta({ id: "ActuatorState" });

export const FemState = z
  .object({
    id: z.string(),
    positions: z.array(z.number()).meta({
      description:
        "node positions x₀ y₀ z₀ x₁ … (m, world), 3 per node in node order (the nodes are also the particles <id>/<k> of `bodies`); in msgpack stream frames one bin of little-endian float64",
    }),
    strain: z.array(z.number()).meta({
      description:
        "per node, the von Mises equivalent strain √(2/3 E′:E′) of the Green–Lagrange strain's deviator, rest-volume-weighted over the node's elements (dimensionless); in msgpack stream frames one bin of little-endian float32",
    }),
  })
  .meta({ id: "FemState", description: "a deformable (fem) body's nodes as arrays" });

/**
 * The step of the session's latest checkpoint its store (DATA_DIR, or Redis in a cluster)
 * has confirmed written: a crash of the server (kill -9, a power cut, a node lost) brings
 * the session back to that step, so the steps after it a client has seen are the ones it
 * could lose. A run normally waits at each checkpoint step k·K until it is written
 * (CHECKPOINT_EVERY_STEPS), so this is at most K steps behind; a store slower than
 * CHECKPOINT_WAIT_MS, or a checkpoint deferred by CHECKPOINT_MIN_INTERVAL_MS, lets the run
 * go on with it older. Null: no store, or nothing written yet.
 */
export const KeptStep = z.number().int().nonnegative().nullable().meta({
  description:
    "the step of the session's latest checkpoint the store (DATA_DIR, Redis) has confirmed: a crash brings the session back to it, losing the steps after it; null without a store or before the first write. After a reset it may exceed `step` until the reset's checkpoint is written",
});

export const State = z
  .object({
    time: z.number(),
    step: z.number().int(),
    bodies: z.array(BodyState),
    contacts: z.array(ContactState),
    joints: z.array(JointState),
    actuators: z.array(ActuatorState),
    observation: z.array(z.number()).meta({
      description: "the model's sensors' values, concatenated in model order ([] without sensors)",
    }),
    energy: Energy,
    solver: SolverStats,
    fem: z.array(FemState).optional().meta({
      description: "the model's fem bodies, in model order (absent without fem bodies)",
    }),
    keptStep: KeptStep.optional().meta({
      description:
        "in the server's State answers (GET state, step, reset), as when the answer left; absent from a recording's replayed states",
    }),
  })
  .meta({ id: "State" });

export const AssemblyLevel = z.enum(["position", "velocity", "acceleration"]);

export const AssemblyOptions = z
  .strictObject({
    levels: z.array(AssemblyLevel).min(1).default(["position", "velocity", "acceleration"]),
    maxIterations: z.number().int().min(1).max(10_000).default(20),
    relTolerance: z.number().nonnegative().default(1e-10),
    absTolerance: z.number().nonnegative().default(1e-12),
    residualTolerance: z.number().nonnegative().default(1e-10),
    solver: z.enum(["sparse-lu", "sparse-qr", "minres", "gmres"]).default("sparse-lu").meta({
      description:
        "acceleration-level solver; sparse-qr is a dense least-squares QR (small systems)",
    }),
    dt: z.number().nonnegative().optional().meta({
      description:
        "time (s) of the analysis (the motors' drives are read at it); default: the current time",
    }),
  })
  .meta({ id: "AssemblyOptions" });

export const ExitFlag = z.enum([
  "SUCCESS",
  "NOT_CONVERGED",
  "ACCELERATION_INACCURATE",
  "SINGULAR",
  "UNSUPPORTED_CONTACTS",
  "REDUNDANT_CONSTRAINTS",
]);

export const AssemblyResult = z
  .object({
    exitFlag: ExitFlag,
    iterations: z.number().int(),
    residualNorm: z.number(),
    updateNorm: z.number(),
    accelerationResidual: z.number(),
    bodies: z.array(BodyState.extend({ acceleration: Vec3, angularAcceleration: Vec3 })),
    reactions: z.array(
      z.object({
        id: z.string(),
        force: Vec3,
        torque: Vec3,
        multipliers: z.array(z.number()).meta({
          description:
            "the rows' λ with the constraint force on the bodies −Gᵀλ (M a = f − Gᵀλ): a distance link's is its tension, a motor's the negative of the torque or force it applies on its body b",
        }),
      }),
    ),
    warnings: z.array(z.string()),
  })
  .meta({ id: "AssemblyResult" });

export type StateOut = z.infer<typeof State>;
export type BodyStateOut = z.infer<typeof BodyState>;
export type ContactStateOut = z.infer<typeof ContactState>;
export type JointStateOut = z.infer<typeof JointState>;
export type AssemblyOptionsIn = z.input<typeof AssemblyOptions>;
export type AssemblyOptionsSpec = z.output<typeof AssemblyOptions>;
export type AssemblyResultOut = z.infer<typeof AssemblyResult>;
export type ExitFlagCode = z.infer<typeof ExitFlag>;
