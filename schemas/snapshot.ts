/**
 * The engine's snapshot format (versioned): everything a Simulation needs to continue
 * exactly where another one stopped — the model as validated, the solver, gravity and
 * contact parameters as patched since creation, time and step, the body state arrays and
 * the solver memory (Newmark's a_t, the joint multipliers of the last solve, the solve
 * matrix's block pattern, the contact module's warm-start memory, the energy reference of
 * energy.error, the matrix of the block factorization `auto` reuses on fem nodes). Produced by
 * Simulation.snapshot() and read by loadSnapshot() (src/engine/index.ts); the service wraps it in
 * its session document (schemas/api.ts `Snapshot`).
 *
 * Float64 arrays travel as base64 of their little-endian IEEE-754 bytes: lossless for every
 * double (also −0, which JSON numbers lose), and about 11 characters per value. Body arrays
 * are per body, in model order: position 3, orientation 4 ([w, x, y, z]), velocity 3 and
 * angular velocity 3 values per body (fixed bodies included). Generalized vectors
 * (acceleration) are over the dofs, 3 per dynamic particle and 6 per dynamic rigid body.
 */
import { z } from "zod";
import { TimedInput } from "./input";
import { Contact, Id, SolverSettings, StoredModel, Vec3 } from "./model";

export const SIMULATION_SNAPSHOT_FORMAT = "moreau.simulation";
export const SIMULATION_SNAPSHOT_VERSION = 1;
/**
 * Inputs and parameter patches a session holds scheduled at most (a snapshot's
 * controls.pending; Simulation.schedule refuses more, so every checkpoint restores).
 */
export const MAX_PENDING_INPUTS = 100_000;

export const Float64Base64 = z
  .string()
  .max(1 << 28)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, "expected base64 of little-endian float64 values")
  .meta({ description: "base64 of little-endian IEEE-754 float64 values" });

const count = () => z.number().int().nonnegative();

/** Body indices of the contact memory (−1: the ground), at most one per remembered contact. */
const BodyIndices = z.array(z.number().int().min(-1)).max(10_000_000);

/**
 * The contact module's warm-start memory (src/engine/contact/nonsmooth-contact.ts exportMemory):
 * null for compliant contact, which keeps none. A closed shape, so that nothing deeper or
 * larger than the memory itself crosses to a solver worker.
 */
const ContactMemory = z
  .union([
    z.null(),
    z.strictObject({
      count: count(),
      key: Float64Base64,
      bodyA: BodyIndices,
      bodyB: BodyIndices,
      impulse: Float64Base64,
      point: Float64Base64,
      // sticking contacts' slip (4 a contact, all 0: none); absent in snapshots from before
      slip: Float64Base64.optional(),
      projection: z
        .strictObject({
          count: count(),
          key: Float64Base64,
          mu: Float64Base64,
          // absent in snapshots from before the lifts were remembered
          lifted: z
            .strictObject({ count: count(), key: Float64Base64, lift: Float64Base64 })
            .optional(),
        })
        .optional(),
    }),
  ])
  .meta({ description: "the contact module's warm-start memory (nonsmooth contact; null: none)" });

/**
 * Why a session's recording starts where it does: the session was `created` from a model,
 * opened from a client's `snapshot` or `recording`, is a `fork`, was `restored` from a
 * checkpoint that carried no recording (one written before 2026-12-07), `reset`, or an
 * `assembly` was applied. A restore from a checkpoint (a worker loss's rebuild, a server
 * restart, a cluster takeover), a fork and a client's snapshot carry the recording on
 * (RecordingHistory): they start none of their own.
 */
export const RecordingCause = z
  .enum(["created", "snapshot", "recording", "fork", "restored", "reset", "assembly"])
  .meta({ id: "RecordingCause" });
export type RecordingCauseName = z.infer<typeof RecordingCause>;

export const RecordingSince = z.strictObject({
  cause: RecordingCause,
  at: z.string().meta({ description: "ISO 8601: when the recording started" }),
});
export type RecordingSinceOut = z.infer<typeof RecordingSince>;

/**
 * The session's recording up to a snapshot (schemas/recording.ts without its model and
 * end): its start, every input and patch since (those then still pending at their later
 * steps) and what started it. Kept in every snapshot a server writes (its checkpoints, GET
 * snapshot), outside the checksum (the recording's end hash checks a replay); a session
 * restored from the snapshot records on from it, so its recording spans the restore.
 */
export const RecordingHistory = z
  .strictObject({
    start: z
      .lazy(() => SimulationSnapshot)
      .nullable()
      .meta({ description: "the recording's start (null: the model's initial state, t = 0)" }),
    inputs: z.array(TimedInput).max(100_000),
    since: RecordingSince,
  })
  .meta({ id: "RecordingHistory" });
export type RecordingHistorySpec = z.output<typeof RecordingHistory>;

export const SimulationSnapshot = z
  .strictObject({
    format: z.literal(SIMULATION_SNAPSHOT_FORMAT, {
      error: `expected "${SIMULATION_SNAPSHOT_FORMAT}"`,
    }),
    version: z.literal(SIMULATION_SNAPSHOT_VERSION, {
      error: `unsupported snapshot version (this server reads version ${SIMULATION_SNAPSHOT_VERSION})`,
    }),
    model: StoredModel,
    parameters: z
      .strictObject({
        solver: SolverSettings,
        gravity: Vec3,
        contact: Contact.nullable(),
      })
      .meta({ description: "solver, gravity and contact parameters as patched since creation" }),
    time: z.number().nonnegative().meta({ description: "simulated time (s)" }),
    step: count(),
    state: z.strictObject({
      position: Float64Base64,
      orientation: Float64Base64,
      velocity: Float64Base64,
      angularVelocity: Float64Base64,
    }),
    memory: z.strictObject({
      integrator: z.strictObject({
        acceleration: Float64Base64.optional().meta({
          description: "Newmark a_t; generalized-α ä_n",
        }),
        previousAcceleration: Float64Base64.optional().meta({
          description:
            "Newmark a_{t−h} (its Newton guess; a_t when absent); generalized-α, moreau-jean at theta 0.5 and symplectic-euler: the last step's mean acceleration (error control)",
        }),
        pseudoAcceleration: Float64Base64.optional().meta({
          description: "generalized-α a_n (acceleration holds ä_n)",
        }),
        dissipativeLag: Float64Base64.optional().meta({
          description:
            "generalized-α: the dissipative forces' share of M (a_n − ä_n) (N, N·m), the energy balance's (absent: 0)",
        }),
        accelerationValid: z.boolean().optional(),
        started: z.boolean().optional().meta({
          description:
            "moreau-jean, backward-euler, symplectic-euler: the run's start was made consistent with the joints and motors (absent: the next step makes it, counting the energy it changes)",
        }),
        lambdaMean: z.boolean().optional().meta({
          description:
            "moreau-jean: memory.lambda is the last step's mean joint force, its contact and limit impulses included (a step with active ones), not the consistent multipliers of its end; the next step without them takes its motors' power at its start at the consistent ones",
        }),
        substeps: z
          .strictObject({
            // MAX_HALVINGS − 1 (src/engine/integrators/step-halving.ts)
            depth: z.number().int().min(0).max(3),
            wait: count(),
            backoff: z.number().int().positive(),
          })
          .optional()
          .meta({
            description:
              "the sub-step controller (generalized-α; moreau-jean at theta 0.5 and symplectic-euler with joints): the next step's 2^depth sub-steps, steps before it tries longer ones, wait after the next failure (absent: 0, 0, 1)",
          }),
        substepSize: z.number().positive().optional().meta({
          description:
            "the articulated integrator's next sub-step length (s; absent: none, the next step tries the whole step)",
        }),
        stiffness: z.number().positive().optional().meta({
          description:
            "the articulated integrator's estimate of the largest rate |λ| of the motion's Jacobian (1/s), which bounds its sub-steps to 3/|λ| (absent: none yet)",
        }),
      }),
      lambda: Float64Base64.meta({
        description: "joint multipliers of the last solve (the reported reactions)",
      }),
      stats: z.strictObject({
        newtonIterations: count(),
        newtonConverged: z.boolean().optional().meta({
          description: "solver.newtonConverged of the last step (absent in older snapshots: true)",
        }),
        linearIterations: count(),
        contactIterations: count(),
        contactResidual: z.number().nullable(),
        contactConverged: z.boolean().optional().meta({
          description: "solver.contactConverged of the last step (absent in older snapshots: true)",
        }),
        penetration: z.number().nonnegative().optional().meta({
          description: "solver.penetration of the last step (absent in older snapshots: 0)",
        }),
        projectionConverged: z.boolean().optional().meta({
          description:
            "solver.projectionConverged of the last step (absent in older snapshots: true)",
        }),
        substeps: z.number().int().min(1).optional().meta({
          description: "solver.substeps of the last step (absent in older snapshots: 1)",
        }),
        impacts: z.number().int().min(0).optional().meta({
          description: "solver.impacts of the last step (absent in older snapshots: 0)",
        }),
        impactsResolved: z.boolean().optional().meta({
          description: "solver.impactsResolved of the last step (absent in older snapshots: true)",
        }),
        stepError: z.number().nonnegative().optional().meta({
          description: "solver.stepError of the last step (absent in older snapshots: 0)",
        }),
        stepToleranceMet: z.boolean().optional().meta({
          description: "solver.stepToleranceMet of the last step (absent in older snapshots: true)",
        }),
        jointToleranceMet: z.boolean().optional().meta({
          description:
            "solver.jointToleranceMet of the last step (absent in older snapshots: true)",
        }),
        reactionChange: z.number().nonnegative().optional().meta({
          description: "solver.reactionChange of the last step (absent in older snapshots: 0)",
        }),
      }),
      energyReference: z.number().optional().meta({
        description:
          "total energy (J) that energy.error is measured from (absent in older snapshots: the restored state's energy)",
      }),
      energyDissipated: z.number().optional().meta({
        description:
          "energy.dissipated (J) since that reference (absent in older snapshots: 0, or the restored state's energy as the reference when that is absent too)",
      }),
      matrixBlocks: z
        .array(z.tuple([count(), count()]))
        .max(10_000_000)
        .meta({ description: "off-diagonal blocks reserved in the solve matrix (bi, bj)" }),
      contact: ContactMemory.optional(),
      factorization: z
        .strictObject({
          mode: z.enum(["jacobi", "factored", "direct"]).meta({
            description:
              "the preconditioner: block Jacobi, the factorization of `matrix`, or every matrix factored (after an indefinite one)",
          }),
          wasted: z.number().nonnegative().meta({
            description:
              "multiply-adds of extra CG iterations counted since the last factorization",
          }),
          matrix: Float64Base64.optional().meta({
            description:
              "mode factored: the Newton matrix the factorization was computed from, its symmetric part by 3×3 blocks (each mirrored pair once, in the pattern's order)",
          }),
        })
        .optional()
        .meta({
          description:
            "`auto`'s factored CG on fem nodes (factored-pcg.ts): its reused factorization (absent: none yet)",
        }),
      krylov: z
        .strictObject({
          preconditioning: z.enum(["mass", "diagonal", "multigrid"]).meta({
            description:
              "the preconditioner of the next solve: the mass, block Jacobi, or block Jacobi with the two-level aggregation term",
          }),
          stepIterations: count().meta({
            description: "the most CG iterations a solve of the last step took",
          }),
        })
        .optional()
        .meta({
          description:
            "CG on the matrix-free Newton operator of particle springs (iteration-matrix.ts): what chooses its next preconditioner (absent: a new simulation's)",
        }),
      broadPhase: z
        .strictObject({
          axis: z.number().int().min(0).max(2),
          sinceChoice: count(),
        })
        .optional()
        .meta({
          description:
            "the contact detector's sweep axis (0: x, 1: y, 2: z) and the updates since it was chosen: the contacts' order follows it (absent: chosen anew)",
        }),
      contactReport: z
        .strictObject({
          count: count(),
          bodyA: BodyIndices,
          bodyB: BodyIndices,
          point: Float64Base64,
          normal: Float64Base64,
          gap: Float64Base64,
          normalForce: Float64Base64,
          tangentForce: Float64Base64,
          impulse: Float64Base64,
        })
        .optional()
        .meta({
          description:
            "the last step's contacts as the State reports them (src/engine/contact/report.ts: bodies, point, normal, gap, normal force, tangential force, impulse), until the next step; absent: none",
        }),
      previousVelocity: z
        .strictObject({ h: z.number().positive(), velocity: Float64Base64 })
        .optional()
        .meta({
          description:
            "the body velocities at the start of the last step (3 per body) and its length (s), which bodyAcceleration sensors difference with (saved with such sensors only; absent: they read 0 until the next step)",
        }),
      efforts: z
        .strictObject({
          actuators: z.array(z.tuple([Id, z.number()])).max(100_000),
          limits: z.array(z.tuple([Id, z.number()])).max(100_000),
        })
        .optional()
        .meta({
          description:
            "the last step's reported efforts: [actuator id, effort (N·m or N)] and [joint id, limit effort] (State's actuators[].effort and joints[].limitEffort; absent: all 0)",
        }),
      turns: z
        .array(z.tuple([Id, z.number().int(), z.number()]))
        .max(100_000)
        .optional()
        .meta({
          description:
            "[joint id, whole turns, last wrapped angle (rad)] of each revolute coordinate (unwrapping; absent: 0 turns)",
        }),
    }),
    controls: z
      .strictObject({
        actuators: z
          .array(z.tuple([Id, z.number()]))
          .max(100_000)
          .meta({
            description: "[actuator id, command] of the actuators commanded at run time",
          }),
        loads: z
          .array(z.tuple([Id, z.strictObject({ force: Vec3, torque: Vec3 })]))
          .max(100_000)
          .meta({ description: "[pointForce id, values] of the loads set at run time" }),
        limits: z
          .array(z.tuple([Id, z.number(), z.number()]))
          .max(100_000)
          .optional()
          .meta({
            description: "[joint id, lower, upper] of the joints whose bounds an input moved",
          }),
        gains: z
          .array(
            z.tuple([
              Id,
              z.number().nonnegative(),
              z.number().nonnegative(),
              z.number().positive().nullable(),
            ]),
          )
          .max(100_000)
          .optional()
          .meta({
            description:
              "[actuator id, k_p, k_d (a velocity servo's k_v), effortLimit (null: none)] of the actuators whose gains an input changed",
          }),
        pending: z.array(TimedInput).max(MAX_PENDING_INPUTS).meta({
          description: "inputs and parameter patches scheduled for later step boundaries",
        }),
      })
      .optional()
      .meta({ description: "run-time inputs in effect and pending (absent: none)" }),
    hash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "expected a sha256 hex digest")
      .meta({
        description:
          "sha256 of the position, orientation, velocity and angular-velocity bytes, in that order",
      }),
    checksum: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "expected a sha256 hex digest")
      .optional()
      .meta({
        description:
          "sha256 of the whole document's canonical JSON (keys sorted) without this field and `recording`; absent in older snapshots (then not checked)",
      }),
    get recording() {
      return RecordingHistory.optional().meta({
        description:
          "the session's recording up to this snapshot (a server's snapshots carry it; not in the checksum): a session resumed from it records on from it, its recording spanning the restore",
      });
    },
  })
  .meta({ id: "SimulationSnapshot" });

export type SimulationSnapshotIn = z.input<typeof SimulationSnapshot>;
export type SimulationSnapshotSpec = z.output<typeof SimulationSnapshot>;

/** The contact memory as the snapshot carries it (see ContactMemory). */
export type ContactMemorySpec = z.output<typeof ContactMemory>;
