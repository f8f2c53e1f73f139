/**
 * The articulated integrator: trees of rigid bodies stepped in joint coordinates
 * (dynamics/articulated-body.ts: the joints hold by construction, the accelerations come
 * from the articulated-body algorithm in O(bodies)), by the explicit Runge–Kutta 5(4) pair of
 * Tsitouras ("Runge–Kutta pairs of order 5(4) satisfying only the first column simplifying
 * assumption", Comput. Math. Appl. 62, 2011; the Dormand–Prince arrangement of Hairer,
 * Nørsett & Wanner, "Solving ODEs I", §II.5: seven stages, the last at the solution) with
 * error control: each step of h is taken in sub-steps whose fifth-order solution is
 * accepted when the embedded fourth-order one differs from it by at most
 * solver.stepTolerance, measured as
 * the largest root-mean-square displacement of a body's mass (m) over the sub-step, the
 * velocity difference counted as the displacement it makes over the whole step h, or the
 * default step (5 ms) when h is shorter: it persists, and measured over the sub-step it
 * would be discounted as the sub-steps shrink (under a stiff servo's damping, at the
 * scheme's stability limit, the velocities then rang while the displacements stayed
 * small: a rod's rate 0.32 rad/s where it is 1.10, 58 J of energy error in 0.1 s; measured
 * over h they followed it to 3e-3 rad/s at the same ~190 sub-steps a step, and within the
 * stability bound below to 1e-8 rad/s at 200, bench/README.md, "Articulated"). The next
 * sub-step's length is h_s (tol/err)^(1/5) · 0.9, within ×0.2 … ×5, and not longer right
 * after a rejection (Hairer's controller), nor than 3/ρ, ρ the largest rate |λ| of the
 * motion's Jacobian its last two stages show (STABLE_STEP, readStiffness): sized by the
 * error alone, the sub-steps grew past the stability boundary while a stiff servo's fast
 * mode was small, and that mode then grew until its error reached the tolerance, for good
 * (a URDF arm held by stiff servos at h = 2 ms: a wrist ringing at 7.6e-3 rad/s, one attempt
 * in five rejected; now its rates stay at 3e-13 rad/s, at 5.0 sub-steps a step instead of
 * 4.3 and 1.0 rejected; test/formats/urdf/arm.test.ts). What is left of a step is taken in
 * equal sub-steps no longer than that (no sliver at the step's end). The length and ρ
 * carry over to the next step in the integrator memory (substepSize, stiffness). The last stage
 * is evaluated at the accepted solution (first same as last), so an accepted sub-step
 * costs six evaluations of the forces and the articulated-body algorithm; its
 * accelerations also start the next step (IntegratorMemory.acceleration) unless the state
 * or the forces were changed in between, or a motor drives a joint (then a step costs one
 * evaluation more). A step of a model under gravity, springs, dampers, joint servos and
 * loads (no motor, compliant joint limit or compliant contact), its servos explicit, ends
 * with each piece's energy balance, its start's T + V (with its servos' stored functions)
 * less its non-conservative forces' work over the step, its velocities projected onto it
 * (`keepEnergy`, articulated-energy.ts): the pair's energy errors, each within the
 * tolerance, otherwise add up with the time (the whip example +0.13 J by 600 s).
 *
 * Explicit: a stiff force (a stiff spring, a compliant joint limit or contact, a stiff
 * servo) makes the sub-steps as short as its period, and a step that needs more than
 * MAX_ATTEMPTS fails. Joint servos too stiff for that (IMPLICIT_SERVO_SUBSTEPS) are taken
 * implicitly instead: the step is then the IMEX pair ARS(2,2,2) in sub-steps of at most
 * IMEX_SUBSTEP, the servos' and the compliant joint limits' laws and the joints'
 * kinematics its implicit part, solved in joint space with the mass matrix
 * (articulated-servos.ts), the other forces its explicit part (a sub-step whose servos
 * or limits switch between its stages by IMEX Euler, `imexStages`); the servos' unresolved modes are damped (L-stable), not followed. Those
 * sub-steps are under the same error control (`imexError`: ARS(2,2,2)'s first-order
 * companion, filtered through the implicit stage; a servo or limit switching between its
 * effort limits, its band or its bound within a sub-step located, `switchError`, a
 * servo's relaxation through its band after leaving its limit counted, `transitModel`).
 * Compliant contact is a force whose contacts are
 * detected once per step, at its start (with the margin its motion needs, compliant.ts);
 * nonsmooth contact, mimics and distance joints are not stepped here (schemas/
 * articulation.ts refuses them with this integrator, naming them). Motors prescribe their joints' coordinates
 * (driven slots of the tree).
 * The joints' reactions are the algorithm's joint wrenches at the step's end, written as
 * the constraint multipliers λ of each joint's rows, with its motor's row where it has one
 * (least squares of the child's Jacobian rows: exact, as the wrench lies in their span),
 * so the State reports them as for every integrator. The energy balance's work of a step
 * is the integrator's own (dissipatedWork).
 *
 * The joint coordinates (constraints/joint-coordinate.ts: what actuators, joint limits,
 * sensors and the State read) are told each hinge's unwrapped angle at every
 * configuration the step places, its stages' and its end's (JointCoordinate.guide): the
 * coordinate's value at the step's start plus the angle the tree turned it since
 * (ArticulatedTree: a revolute slot's θ, unbounded), or a motor's angle from the model
 * pose. A coordinate alone reads the branch of its angle nearest the step's start, which a
 * step turning the joint by π or more misses: a position servo on a ramp faster than
 * π/h read its angle 2π off within the step and ran away (at 650 rad/s and h = 5 ms, 25.7
 * rad after 2 s for 1300, 13 113 rad/s, 1401 N·m, not flagged);
 * test/engine/integrators/articulated-turns.test.ts.
 */
import { JointActuator } from "../actuators/actuator";
import { CompliantJointLimit } from "../actuators/joint-limit";
import type { ConstraintSet } from "../constraints/constraint-set";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { type ArticulatedTree, SlotKind } from "../dynamics/articulated-body";
import type { DynamicStructureEffector } from "../dynamics/stepper";
import { invertSmall } from "../math/small-dense";
import { kineticEnergy } from "../model/body-system";
import type { AccelerationStepper } from "./acceleration-step";
import { EnergyGroups } from "./articulated-energy";
import { hingeSlots, ImplicitServos } from "./articulated-servos";
import type { Integrator, IntegratorMemory, ProjectionOrder, StepStats } from "./integrator";

/**
 * The shortest time (s) over which a sub-step's velocity error is counted as a displacement
 * (`step`): the model's default step (schemas/model.ts, solver.dt). Counted over the step
 * itself, a user's shorter step loosened the velocities' control in proportion: the imported
 * arm's wrist under stiff servos ran 1.5 rad/s off at h = 1e-4 s, where it is right at the
 * default 5 ms, and a servo's creep 0.014 rad/s off at 1 ms (test/engine/integrators/
 * articulated.test.ts). A step at least this long is counted over itself, as before.
 */
const VELOCITY_ERROR_HORIZON = 0.005;

/** solver.stepTolerance's default for the articulated integrator (m per sub-step). */
export const ARTICULATED_STEP_TOLERANCE = 1e-6;

/**
 * Tsitouras' 5(4) tableau (Tsit5): nodes c, stages a (the last row the fifth-order weights
 * b, so the seventh stage is at the solution: first same as last) and the differences
 * e = b − b̂ to the embedded fourth-order weights. Chosen over Dormand & Prince's pair of
 * the same shape for its smaller error constants (bench/README.md, "Articulated"): on the
 * benchmark's chains at the default tolerance 3 to 4 % fewer sub-steps and a third to a
 * half of the energy error. test/engine/integrators/articulated.test.ts checks the order
 * conditions.
 */
export const TSITOURAS_5_4: {
  readonly c: readonly number[];
  readonly a: readonly (readonly number[])[];
  readonly e: readonly number[];
} = {
  c: [0, 0.161, 0.327, 0.9, 0.9800255409045097, 1, 1],
  a: [
    [],
    [0.161],
    [-0.008480655492356989, 0.335480655492357],
    [2.8971530571054935, -6.359448489975075, 4.3622954328695815],
    [5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525],
    [
      5.86145544294642, -12.92096931784711, 8.159367898576159, -0.071584973281401,
      -0.028269050394068383,
    ],
    [
      0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742, -3.290069515436081,
      2.324710524099774,
    ],
  ],
  e: [
    -0.001780011052225777,
    -0.0008164344596567469,
    0.007880878010261995,
    -0.1447110071732629,
    0.5823571654525552,
    -0.45808210592918697,
    1 / 66,
  ],
};
const C = TSITOURAS_5_4.c;
const A = TSITOURAS_5_4.a;
const E = TSITOURAS_5_4.e;
/** Sub-steps shorter than h · MIN_FRACTION end the step with an error (a blow-up). */
const MIN_FRACTION = 2 ** -24;
/**
 * Attempts per step beyond which the step fails (the run ends `diverged`): a force too
 * stiff for an explicit scheme (a spring of 1e12 N/m on 1 kg asks ~1e5 sub-steps of a
 * 1/240 s step) would otherwise hold a worker for seconds a step. The benchmark's whipping
 * 100-link chain takes ~3 sub-steps a step, its worst few dozen.
 */
const MAX_ATTEMPTS = 2000;
/**
 * The sub-steps' stability bound: hh ρ ≤ STABLE_STEP, ρ the estimated largest |λ| of the
 * motion's Jacobian (IntegratorMemory.stiffness, `readStiffness`). Tsitouras' pair is stable
 * on the negative real axis to hh |λ| = 3.51, and at hh |λ| = 3 |R(hh λ)| ≤ 0.53 for every λ
 * within 70° of that axis (R(z) = 1 + z bᵀ (I − z A)⁻¹ 1, the tableau's stability function,
 * evaluated on a grid of angles; on the imaginary axis |R| > 1, where the error control
 * alone sizes the sub-steps): a servo's or a damper's fast decay is then taken at
 * |R| ≤ 0.39 a sub-step. Hairer & Wanner's
 * DOPRI5 tests h ρ against 3.25, its own boundary, to report stiffness ("Solving ODEs II",
 * §IV.2).
 */
const STABLE_STEP = 3;
/**
 * A step whose energy defect (`keepEnergy`) is too large to take back by its velocities (`keepEnergy`) is taken again from its start with its tolerance times
 * ENERGY_RETRY_TOLERANCE, up to ENERGY_RETRIES times (then kept as it is, its energy
 * error in energy.error): over 60 s, 6 of the whip example's 14 400 steps and 8 of the
 * 20-link hinged chain's 12 000 (articulated-energy.test.ts), the evaluations a step
 * unchanged (20.8 and 24.4, against 20.8 and 24.6 without the projection).
 */
const ENERGY_RETRY_TOLERANCE = 0.1;
const ENERGY_RETRIES = 3;
/**
 * The largest |W_g|/T_g (W_g a group's non-conservative work over the step, T_g its kinetic
 * energy at the end) at which keepEnergy scales the group: its quadrature's relative error
 * on W_g comes out W_g/T_g times larger in T_g, and a group whose forces take out more
 * than its kinetic energy each step (an overdamped servo's creep) is dissipative enough
 * not to drift. A stiff position servo on a rod (articulated.test.ts, "a servo whose
 * damping the sub-steps barely resolve": W/T ≈ 30 a step at h = 0.1 ms, ≈ 300 at 1 ms) scaled had its rate
 * 3.0e-4 rad/s off at h = 0.1 ms, where the steps left as they are are 1.4e-6 off.
 */
const WORK_SHARE = 1;
/**
 * keepEnergy's states of a group: within the rounding or at rest (KEEP_NONE), scaled with
 * its change bounded within the step's estimate (KEEP_SCALE), its change to be measured
 * (KEEP_MEASURE), out of reach or beyond the estimate (KEEP_LEFT).
 */
const KEEP_NONE = 0;
const KEEP_SCALE = 1;
const KEEP_MEASURE = 2;
const KEEP_LEFT = 3;
/**
 * The energy defect |E_start − V_end − T_end| (J) `keepEnergy` leaves, as a fraction of
 * |E_start| + |V_end| + T_end: the rounding of the sums of a few hundred bodies' terms
 * (2.2e-16 each).
 */
const ENERGY_ROUNDING = 1e-15;
/**
 * The error (fraction of stepTolerance) above which a sub-step's stages are read for ρ: at
 * rest their differences are rounding, whose ratios shorten the sub-steps for nothing
 * (the imported arm held still under its servos, read at any error: 4.8 sub-steps a step
 * in its first second, 5.8 in its twelfth and growing; read above this, 5.0 throughout).
 * A stiff motion this small (1e-12 m at the default) grows back above it within a few
 * unstable sub-steps, and is then read again.
 */
const STIFFNESS_READ = 1e-6;
/**
 * What the kept stiffness loses a read: ρ ← max(ρ_read, STIFFNESS_MEMORY · ρ). One read
 * errs low or high with the phase of the motion it is taken on (`readStiffness`), so the
 * largest of the recent reads is kept; a stiffness that really drops (a contact let go) is
 * followed within about 20 sub-steps (0.9²⁰ = 0.12). Kept as read instead, the stiff creep of
 * articulated.test.ts ("a servo whose damping the sub-steps barely resolve") ran at
 * 185 sub-steps a step with its rate 5.7e-6 rad/s off, past the stability boundary on
 * its low reads; so kept, 200 sub-steps and 1e-8 rad/s.
 */
const STIFFNESS_MEMORY = 0.9;
/**
 * The explicit sub-steps (ImplicitServos.explicitSubsteps, estimated at the step's start)
 * beyond which a step takes its servos implicitly: by ARS(2,2,2) sub-steps of at most
 * IMEX_SUBSTEP (file comment). Below, the explicit pair's accuracy is kept where its cost
 * is bearable: the end-hinged rod's undamped servo at k_p = 1e6 N·m/rad, h ω = 34 at
 * 1/60 s (estimated 374), follows its closed form to 1.6e-4 rad at 147 sub-steps a step
 * (articulated-servos.test.ts), as the creep of articulated.test.ts (k_d/I = 1.6e5 /s at
 * 1/240 s, estimated 278) its exact rate to 1e-8 rad/s at 200; at 1e8 the explicit step
 * failed past MAX_ATTEMPTS. The estimate's bound (the joints free) may exceed the truth
 * by the joints' factor (2 for the rod's ringing), so this is a cost, not a stability, line.
 * Nor, since the joint limits are in the implicit stage, a safety one (the 7-axis arm of
 * test/formats/urdf, its fourth joint starting on its limit, blew up within 7 steps at a
 * lower line while they were explicit); lower, the implicit steps would be cheaper but far
 * less accurate where the explicit pair now resolves the servos: at the URDF import's
 * gains (k_p 500, k_d 20) the 6-axis arm (estimated 200 to 300, 227 taken) runs 8 times
 * faster implicit, 3.5e-3 rad off a 0.5 rad move where the explicit steps are 3e-5 off
 * (convert.ts robotIntegrator), and the two closed-form tests above would lose theirs.
 * Under the implicit steps' error control (imexError) that arm forced implicit throughout
 * met the explicit steps' accuracy, 2.8e-5 rad off a reference at 0.25 ms, at 7.5
 * sub-steps a step and 82 steps/s where the explicit ones take 227 and 25 steps/s (the
 * 7-axis arm with its limits: 6.1e-5 rad, 116 steps/s against 9.3e-5 and 105; measured
 * when its saturated start was a step left uncontrolled, 2.5e-3 rad then); but below 374 the rod's −ΔΦ booking test (articulated-servos.test.ts, k_p = 1e6)
 * would book the implicit impulses instead (124 J apart): the line stays.
 */
const IMPLICIT_SERVO_SUBSTEPS = 500;
/**
 * Without error control (stepTolerance null) an explicit step is one sub-step of h,
 * whatever its servos ask (ImplicitServos.explicitSubsteps): where they ask more than
 * this, the step takes them implicitly. Held to IMPLICIT_SERVO_SUBSTEPS instead, the
 * imported 7-axis arm at k_p 1e8 (k_d 6.3e3, efforts 87/12 N·m) at h = 2e-5 s took its
 * servos explicitly, one Tsitouras step each past their stability (h √(k_p/Ĩ) ~ 6 on the
 * wrists), chattering from limit to limit: energy.error −4.6 J in 0.1 s, −65 J in 1 s.
 */
const EXPLICIT_UNCONTROLLED = 1;
/**
 * The longest sub-step (s) of a step with implicit servos without error control
 * (stepTolerance null): the model's default step (schemas/model.ts, solver.dt); a longer
 * step is taken in equal sub-steps no longer than this (4 at 1/60 s).
 *
 * A step whose servos start at their effort limits or whose limits start past their bounds
 * is under the error control as every other (it kept these fixed sub-steps before): its
 * active set switches as a law enters and leaves its band, each switch located within its
 * sub-step (ImplicitServos.switchError, SWITCH_MARGIN). The fixed sub-steps had looked
 * right on the 7-axis arm of test/formats/urdf held at k_p 1e10 (k_d 6.3e4, saturating,
 * its fourth joint on its limit): at rest by 0.3 s, where the controlled ones still turned
 * at 1.2 rad/s after 2 s. The turning is the law's: a servo saturated away from its band
 * pushes with ±limit whatever its rate, and a joint swinging in that V-shaped well loses
 * only ~2 limit (k_d/k_p) q̇² a band crossing; generalized-alpha at 1e-5 s has joint5 at
 * −9.64e-3 rad at 0.1 s (controlled −9.66e-3, fixed 0: caught in its band, as an implicit
 * step catches a joint crossing it slower than ~h limit/Ĩ). On the end-hinged rod's
 * saturated servo chasing a sine (articulated-error.test.ts) the fixed sub-steps were
 * 2.7e-2 rad off its exact motion in 10 s; controlled, 3.4e-4 at 1e-6, and with the
 * passages through its band followed (ImplicitServos.transitModel, TRANSIT_SUBSTEPS)
 * 1.45e-4 at 1e-6, 3.7e-6 at 1e-7.
 */
const IMEX_SUBSTEP = 0.005;
/**
 * The implicit steps' sub-steps a step at most under error control: a sub-step of
 * h / IMEX_MAX_SUBSTEPS is accepted whatever its error (StepStats.stepToleranceMet false,
 * stepError the error). The error control asks the servos' motion to be followed, and a
 * stiff servo's transient is motion (the end-hinged rod's critically damped servo at
 * k_p = 1e8 N·m/rad closes 0.3 rad in ~1e-4 s): followed to the tolerance, its first
 * step ran past MAX_ATTEMPTS at 2e-8 s sub-steps; so bounded, it takes 61 and reports
 * the error, and the L-stable stages damp what they do not follow. At 64 the bound held
 * the sub-steps of smooth motion at a fine tolerance (the rod of articulated-error.test.ts
 * at 1e-8: 62 a step where it needs 121).
 */
const IMEX_MAX_SUBSTEPS = 1024;
/**
 * The sub-steps a servo's transit out of its effort limit may take per relaxation time
 * ε_r of its band (ImplicitServos.transitModel) before one is accepted whatever its
 * error: below IMEX_MAX_SUBSTEPS' floor where ε_r is shorter, as a transit lasts a few ε_r.
 */
const TRANSIT_SUBSTEPS = 64;
/** The relaxation times ε_r after a transit's entry into its band it is followed for. */
const TRANSIT_WINDOW = 8;
/** The fraction of a switch's estimated instant a sub-step ends before it (`advance`). */
const SWITCH_MARGIN = 1e-3;
/**
 * Ascher, Ruuth & Spiteri's ARS(2,2,2) (Appl. Numer. Math. 25, 1997, §2.6): the implicit
 * part L-stable and stiffly accurate, nodes (0, γ, 1), weights (0, 1 − γ, γ), γ = 1 − 1/√2;
 * the explicit part's rows (γ), (δ, 1 − δ), δ = 1 − 1/(2γ), its weights its last row: the
 * solution is the last stage. Second order on both parts and their coupling.
 */
const ARS_GAMMA = 1 - Math.SQRT1_2;
const ARS_DELTA = 1 - 1 / (2 * ARS_GAMMA);
/**
 * The weights of the stages' powers in a sub-step's work (the slots of stagePower): the
 * explicit pair's b (its seventh stage's 0), and ARS(2,2,2)'s implicit weights at its
 * second and third stages (slots 1 and 6), the rule second order as the step.
 */
const RK_POWER_WEIGHTS = [...A[6], 0];
const IMEX_POWER_WEIGHTS = [0, 1 - ARS_GAMMA, 0, 0, 0, 0, ARS_GAMMA];
/** A sub-step taken by IMEX Euler instead (imexStages): the trapezoid on its ends. */
const EULER_POWER_WEIGHTS = [0.5, 0, 0, 0, 0, 0, 0.5];

export class ArticulatedIntegrator implements Integrator {
  readonly name = "articulated" as const;
  readonly projectionOrder: ProjectionOrder = "none";
  /**
   * The work the last step took out (J): the fifth-order quadrature hh Σ b_k P_k of the
   * dissipative forces' power, less the motors', at each accepted sub-step's stages (the
   * trapezoid of the power at the step's ends misses an impact on a compliant joint limit
   * inside the step by up to its whole loss), and the kinetic energy the step's start
   * changed (see `step`); on a step with the servos implicit, their work is their
   * impulses' on their joints' mean rates instead of their share of P and ΔΦ
   * (ImplicitServos.substepWork).
   */
  dissipatedWork = 0;
  /** The dissipative power at each stage of the running sub-step (W). */
  private readonly stagePower = new Float64Array(7);
  /**
   * The time (s) of the stage `evaluate` computes, handed over in this field rather than as
   * an argument: V8 passes a double argument to a call it does not inline as a heap number,
   * an allocation per stage (a double from the start, see BodySystem on V8).
   */
  private stageTime = -0;
  // the coordinates at the sub-step's start (y, u) and at its stages (ys, us): an accepted
  // sub-step swaps the two pairs (its solution is the seventh stage's point) rather than
  // copying; beginStep writes y, u afresh at each step's start
  private y: Float64Array;
  private u: Float64Array;
  private ys: Float64Array;
  private us: Float64Array;
  private readonly ky: Float64Array[];
  private readonly ku: Float64Array[];
  private readonly ey: Float64Array;
  private readonly eu: Float64Array;
  /** Y₇ − Y₆, the last two stages' points' difference (readStiffness). */
  private readonly dy: Float64Array;
  private readonly du: Float64Array;
  private readonly forces: Float64Array;
  /** The servos a step may take implicitly (null: none), and whether the running step does. */
  private readonly servos: ImplicitServos | null;
  private splitting = false;
  /** The forces with the implicit servos' (evaluate), whose reactions the step reports. */
  private readonly fullForces: Float64Array;
  private readonly jac = [new Float64Array(36), new Float64Array(36)];
  private readonly normal = new Float64Array(49);
  private readonly normalInv = new Float64Array(49);
  private readonly work = new Float64Array(49);
  private readonly rhs = new Float64Array(7);
  /** A joint's and its motor's Jacobian rows on the child (row-major, 6 columns). */
  private readonly childRows = new Float64Array(42);
  /** Each slot's motor (constraint index), −1 where none. */
  private readonly motorOf: Int32Array;
  /** The slots a motor drives, whose power the energy balance counts. */
  private readonly drivenSlots: Int32Array;
  /** Whether the step integrates a power for the energy balance (dissipative forces, motors). */
  private readonly balance: boolean;
  /**
   * Whether the last stage's accelerations carry to the next step (the memory's
   * `acceleration`, saved in snapshots): without motors.
   */
  private readonly carries: boolean;
  /**
   * The groups whose energy balance a step keeps (`keepEnergy`; articulated-energy.ts), or
   * null where the model's balance involves work from outside: a motor (a prescribed
   * rate's work), compliant contact, a compliant joint limit, a force that is not one of
   * EnergyGroups' (articulated-energy.ts).
   */
  private readonly groups: EnergyGroups | null;
  /** Per group: T + V at the step's start (J), and T, V at its end (keepEnergy). */
  private readonly energyStart: Float64Array;
  private readonly kineticEnd: Float64Array;
  private readonly potentialEnd: Float64Array;
  /** Per group: the scale keepEnergy puts on its velocities, and its KEEP_* state. */
  private readonly scale: Float64Array;
  private readonly keepState: Uint8Array;
  /**
   * Per group: its power (EnergyGroups.power) at each stage of the running sub-step (W,
   * stage k at k · count + g), and the work its accepted sub-steps integrated over the
   * step (J).
   */
  private readonly groupPower: Float64Array;
  private readonly groupWork: Float64Array;
  /** The lightest mass (kg) of the tree's bodies (keepEnergy's bound). */
  private readonly lightest: number;
  /**
   * The hinges' joint coordinates (revolute and driven revolute slots; see the file
   * comment), each with its slot and, for a revolute slot, its value at the step's start.
   */
  private readonly hinges: JointCoordinate[];
  private readonly hingeSlot: Int32Array;
  private readonly hingeStart: Float64Array;

  constructor(
    private readonly tree: ArticulatedTree,
    private readonly stepper: AccelerationStepper,
    private readonly constraints: ConstraintSet,
    /** The constraint multipliers the State's reactions are read from (simulation record). */
    private readonly lambda: Float64Array,
    /**
     * The dissipative forces' power (W) at t and the current state, less the rate Φ̇ of
     * their stored functions (StepWork.forcePower); null: none.
     */
    private readonly power: ((t: number) => number) | null,
    /**
     * Σ Φ (J) of those functions at t and the current state (ForceEffector.storedEnergy),
     * booked exactly as its change over the step; null: none.
     */
    private readonly stored: ((t: number) => number) | null,
    /**
     * Compliant contact, or null: its contacts are detected at each step's start, so the
     * forces change from one step's end to the next step's start.
     */
    private readonly contact: DynamicStructureEffector | null,
    /** solver.stepTolerance (m per sub-step; null: no error control, one sub-step). */
    public params: { stepTolerance: number | null },
    private readonly memory: IntegratorMemory,
    /** The joints' angle coordinates (actuators, limits, sensors read them): guided. */
    angles: readonly JointCoordinate[] = [],
  ) {
    const ny = tree.ySize;
    const nu = tree.uSize;
    this.y = new Float64Array(ny);
    this.u = new Float64Array(nu);
    this.ys = new Float64Array(ny);
    this.us = new Float64Array(nu);
    this.ky = Array.from({ length: 7 }, () => new Float64Array(ny));
    this.ku = Array.from({ length: 7 }, () => new Float64Array(nu));
    this.zeros = new Float64Array(Math.max(ny, nu));
    this.ey = new Float64Array(ny);
    this.eu = new Float64Array(nu);
    this.dy = new Float64Array(ny);
    this.du = new Float64Array(nu);
    this.forces = new Float64Array(stepper.n);
    this.fullForces = new Float64Array(stepper.n);
    this.yStart = new Float64Array(ny);
    this.uStart = new Float64Array(nu);
    this.yHat = new Float64Array(ny);
    this.uHat = new Float64Array(nu);
    const servos = new ImplicitServos(
      tree,
      stepper.effectors.filter((e): e is JointActuator => e instanceof JointActuator),
      stepper.effectors.filter((e): e is CompliantJointLimit => e instanceof CompliantJointLimit),
      hingeSlots(
        tree,
        constraints.constraints.map((c) => c.id),
      ),
      stepper.n,
    );
    this.servos = servos.servos.length > 0 ? servos : null;
    // the motors by the id of the joint they drive (constraints: the joints, then the motors)
    const motorByJoint = new Map<string, number>();
    constraints.constraints.forEach((c, k) => {
      if (c.category === "motor" && "joint" in c) motorByJoint.set(String(c.joint), k);
    });
    this.motorOf = Int32Array.from({ length: tree.numSlots }, (_, i) => {
      const k = tree.joint[i];
      return k < 0 ? -1 : (motorByJoint.get(constraints.constraints[k].id) ?? -1);
    });
    this.drivenSlots = Int32Array.from(
      Array.from(this.motorOf.entries())
        .filter(([, k]) => k >= 0)
        .map(([i]) => i),
    );
    this.balance = power !== null || this.drivenSlots.length > 0;
    // a motor's effort at the step's start is part of its power, and the contacts a step
    // detects change the forces at its start: both are evaluated afresh
    this.carries =
      this.drivenSlots.length === 0 && contact === null && tree.uSize <= memory.acceleration.length;
    this.groups =
      this.drivenSlots.length === 0 && contact === null
        ? EnergyGroups.of(tree, stepper.effectors)
        : null;
    const count = this.groups?.count ?? 0;
    this.energyStart = new Float64Array(count);
    this.kineticEnd = new Float64Array(count);
    this.potentialEnd = new Float64Array(count);
    this.scale = new Float64Array(count);
    this.keepState = new Uint8Array(count);
    this.groupPower = new Float64Array(this.groups?.damps ? 7 * count : 0);
    this.groupWork = new Float64Array(count);
    let lightest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < tree.numSlots; i++)
      lightest = Math.min(lightest, tree.sys.mass[tree.body[i]]);
    this.lightest = lightest;
    const hinges: JointCoordinate[] = [];
    const slots: number[] = [];
    for (let i = 0; i < tree.numSlots; i++) {
      const kind = tree.kind[i];
      if (kind !== SlotKind.REVOLUTE && kind !== SlotKind.DRIVEN_REVOLUTE) continue;
      const id = constraints.constraints[tree.joint[i]].id;
      for (const q of angles)
        if (q.joint === id) {
          hinges.push(q);
          slots.push(i);
        }
    }
    this.hinges = hinges;
    this.hingeSlot = Int32Array.from(slots);
    this.hingeStart = new Float64Array(hinges.length);
  }

  /** Forgets the carried accelerations and sub-step length (the state was changed). */
  reset(): void {
    this.memory.invalidate();
    this.started = false;
  }

  /**
   * False until the first step after construction or `reset` (t = 0, a reset, a state
   * written from outside, a PATCH, a restored snapshot): that step starts with the joints'
   * impulse (see `step`). Not the memory's validity, which is false at every step when a
   * motor drives a joint or contact is compliant (nothing carried): the start's projection
   * factors G M⁻¹ Gᵀ, one factorization a step there.
   */
  private started = false;

  /**
   * An input moved the bodies (an impulse, a written velocity or pose): the state goes back
   * onto the joints at once — each hinge's rotation to the nearest it allows
   * (ArticulatedTree.snapRotations: a written orientation off a hinge's axis had bent it for
   * good), the joint rates to the nearest the new velocities in the mass metric
   * (ArticulatedTree.nearestRates) — so an impulse on a jointed body moves the tree as it
   * would a maximal-coordinate integrator's (reading the rates off the relative angular
   * velocities alone dropped every velocity change the joints do not carry one to one: an
   * impulse at a link's centre did nothing).
   */
  stateMoved(t: number): void {
    const { tree, y, u } = this;
    tree.beginStep(y, u);
    tree.snapRotations();
    if (!tree.nearestRates(y, t, this.forces, u))
      throw new Error("articulated: a joint's articulated inertia is singular");
    tree.setState(y, u, t);
  }

  /** An input changed the applied forces: the carried accelerations no longer hold. */
  forcesChanged(): void {
    this.memory.accelerationValid = false;
  }

  step(t: number, h: number, stats: StepStats): void {
    const { tree, ky, ku, eu } = this;
    let { y, u } = this;
    // the kinetic energy the step's start takes out or puts in: the state read in joint
    // coordinates drops velocities off the joints' motion (an inelastic projection), and a
    // motor sets its joint's rate (its impulsive work, where the rate jumps: at t = 0 from
    // rest); rounding where the state is already the last step's
    let work = 0;
    // the servos implicit where the explicit sub-steps would be too many (at the state at
    // t), or without error control more than the one sub-step h it takes (EXPLICIT_UNCONTROLLED)
    let implicit =
      this.servos !== null &&
      this.servos.explicitSubsteps(t, h) >
        (this.params.stepTolerance === null ? EXPLICIT_UNCONTROLLED : IMPLICIT_SERVO_SUBSTEPS);
    this.splitting = implicit;
    // compliant contact: the contacts of this step, detected at its start (the stepper's
    // beginStep would also reserve the iteration matrix's blocks, which this step never uses)
    this.contact?.beginStep();
    // the hinges' coordinates at the step's start (the turn count of the last boundary):
    // the stages add the angles the tree turns them by
    for (let j = 0; j < this.hinges.length; j++) {
      const q = this.hinges[j];
      q.evaluateValue();
      this.hingeStart[j] = q.value;
    }
    if (this.memory.accelerationValid && this.carries && !implicit) {
      // first same as last across steps: the state is the last step's end, untouched since
      // (a reset, an input or a PATCH clears the memory), so its accelerations are the last
      // stage's; the position rates are taken at the coordinates as read back
      tree.beginStep(y, u);
      tree.positionRates(y, u, ky[0]);
      // (copied by index: a subarray view would be an allocation a step)
      const carried = this.memory.acceleration;
      for (let i = 0; i < tree.uSize; i++) ku[0][i] = carried[i];
      if (this.balance) this.stagePower[0] = this.power === null ? 0 : this.power(t);
      if (this.groupPower.length > 0) (this.groups as EnergyGroups).power(t, this.groupPower, 0);
    } else {
      // at a start (`started` false: t = 0, a reset, a state written from outside) the
      // velocities that violate the joints or motors are projected onto them in the mass
      // metric first, the impulse the joints give, as every
      // integrator's start (AccelerationStepper.consistentStart, its energy counted there).
      // Read in joint coordinates as they were, they lost every velocity off the relative
      // angular rates: a hinged rod given its centre's velocity stayed at rest (1.5 v/L for
      // a uniform rod), a top whose pivot moved gained 2.1 J, a motor started from rest
      // kicked none of the tree.
      if (!this.started) this.stepper.consistentStart(t);
      const before = kineticEnergy(tree.sys);
      tree.beginStep(y, u);
      this.stageTime = t;
      this.evaluate(y, u, 0);
      work = before - kineticEnergy(tree.sys);
    }
    // each group's T + V at the step's start, which its step ends with less its forces'
    // work (keepEnergy)
    // (explicit steps only: an implicit step's servos are not the forces the groups' power
    // reads, `evaluate`)
    const tol = this.params.stepTolerance;
    const groups = this.groups;
    let keep = groups !== null && tol !== null && !implicit;
    if (keep && groups !== null) {
      const { energyStart, potentialEnd } = this;
      groups.kinetic(energyStart);
      groups.potential(potentialEnd, t);
      for (let g = 0; g < groups.count; g++) energyStart[g] += potentialEnd[g];
    }
    // Φ at the step's start (the stored functions' change is booked whole, at the end)
    const storedStart = this.stored === null ? 0 : this.stored(t);
    // the servos' share of it, which a step with them implicit books as their impulses'
    // work instead (ImplicitServos.substepWork)
    const servoStart =
      this.stored === null || this.servos === null ? 0 : this.servos.storedEnergy(t);
    // the limits' ½ k δ² (energy.potential), whose change a step with them implicit takes
    // out of their impulses' work to leave their damping's
    const limitStart = this.power === null || this.servos === null ? 0 : this.servos.limitEnergy();
    // the start, kept for a step whose explicit sub-steps a servo runs past MAX_ATTEMPTS
    const fallback = !implicit && this.servos !== null;
    if (fallback || keep) {
      this.yStart.set(y);
      this.uStart.set(u);
    }
    let accepted = this.advance(t, h, implicit, tol);
    if (keep && accepted >= 0) {
      let tighter = tol as number;
      for (let k = 0; !this.keepEnergy(t, h, accepted, tighter) && k < ENERGY_RETRIES; k++) {
        tighter *= ENERGY_RETRY_TOLERANCE;
        this.restart(t, false);
        accepted = this.advance(t, h, false, tighter);
        // (a servo the tighter sub-steps run past MAX_ATTEMPTS: taken implicitly below)
        if (accepted < 0) break;
      }
    }
    if (accepted < 0) {
      // (see `advance`): the step again from its start with the servos implicit, its
      // energy as the implicit sub-steps leave it
      implicit = true;
      keep = false;
      this.restart(t, true);
      accepted = this.advance(t, h, true, tol);
    }
    const worst = this.worstError;
    work += this.substepWork;
    ({ y, u } = this);
    this.started = true;
    // (the implicit servos' steps carry nothing: their last stage's accelerations are the
    // explicit part's)
    if (this.carries) {
      this.memory.acceleration.set(ku[0]);
      this.memory.accelerationValid = !implicit;
    }
    // the reactions: the joint wrenches of the last evaluation, the last accepted
    // sub-step's seventh stage, at (y, u) (computed once here, not at every sub-step's
    // last stage: a rejected or a later sub-step's were thrown away); with the implicit
    // servos, a pass with their forces, which that evaluation left out
    if (implicit) {
      if (!tree.accelerations(u, this.fullForces, eu, true))
        throw new Error("articulated: a joint's articulated inertia is singular");
      this.splitting = false;
    } else tree.jointWrenches();
    // the state written normalized: an explicit step's last evaluation, its last accepted
    // sub-step's seventh stage, placed it at (y, u) already (without the inverse world
    // inertias); with motors that stage's time, t plus the sum of the sub-steps, may differ
    // from t + h in the last bit, and the implicit servos' stages end elsewhere: placed again
    if (implicit || this.drivenSlots.length > 0) tree.setState(y, u, t + h);
    else tree.completeState();
    // the step's end: the turn counts the simulation takes (JointCoordinate.track)
    this.guideHinges(y);
    // ΔΦ, exact at the states the step reached (the stages integrated the power less Φ̇);
    // without the implicit servos' (their work is their impulses', in substepWork)
    if (this.stored !== null) {
      work += this.stored(t + h) - storedStart;
      if (implicit) work -= (this.servos as ImplicitServos).storedEnergy(t + h) - servoStart;
    }
    // the limits' damping: their work (in substepWork) less their elastic energy's change
    if (implicit && this.power !== null)
      work -= (this.servos as ImplicitServos).limitEnergy() - limitStart;
    this.dissipatedWork = work;
    this.writeReactions(t + h);
    stats.substeps = accepted;
    stats.stepError = worst;
    stats.stepToleranceMet = !this.toleranceMissed;
  }

  /**
   * The step's start again (yStart, uStart, kept by `step`), its first stage evaluated, for
   * `advance` to take the step anew: with the servos implicit where `implicit`.
   */
  private restart(t: number, implicit: boolean): void {
    this.splitting = implicit;
    this.y.set(this.yStart);
    this.u.set(this.uStart);
    this.tree.setState(this.y, this.u, t, false);
    this.guideHinges(this.y);
    this.stageTime = t;
    this.evaluate(this.y, this.u, 0);
  }

  /**
   * A step ends with each group's energy balance (`groups`, articulated-energy.ts: the
   * pieces joined by joints or springs): the velocities of group g at the step's end are
   * scaled by s_g = √((E_g − V_g,end)/T_g,end), so that T_g,end + V_g,end = E_g, where
   * E_g = T_g + V_g at the step's start less W_g, the work its non-conservative forces took
   * out over the step, V_g with its servos' stored functions Φ (articulated-energy.ts;
   * their power P_g, less Φ̇, integrated by the accepted sub-steps' fifth-order weights at
   * their stages, hh Σ b_k P_g(Y_k): the same Runge–Kutta step applied to Ẇ_g = P_g, so
   * that E_g(y) + W_g is the first integral of the augmented system, kept as any other).
   * At the end's configuration the scaling is the projection onto that energy surface
   * nearest in the mass metric (min (u' − u)ᵀ M (u' − u) subject to ½ u'ᵀ M u' =
   * E_g − V_g: M (u' − u) = μ M u', u' ∥ u), the standard projection method of Hairer,
   * Lubich & Wanner ("Geometric Numerical Integration", §IV.4); the groups' surfaces are
   * independent (their velocities are disjoint in u), so the nearest point onto all of
   * them is each group's own scaling. Why: the Runge–Kutta pair is
   * neither symplectic nor symmetric, and its sub-steps' energy errors, each within the
   * tolerance, have a sign that persists: they add up in proportion to the time (the
   * 20-link hinged chain of 5 cm links at 5 ms, +3.7e-4 J/s, +0.22 J by 600 s; the whip
   * example +2.2e-4 J/s, +0.133 J by 600 s; a tolerance of 1e-7 still +9e-6 J/s at 1.5
   * times the sub-steps). Projected, both stay within 2e-13 J over 150 s at the same
   * evaluations a step (test/engine/integrators/long-run/articulated-energy.test.ts);
   * over 600 s 1.9e-4 J (chain) and 5.7e-5 J (whip): what the steps left as they are
   * (below) let through, 1100 and 2300 times less than before. Two such chains side by
   * side: +0.063 and +0.022 J at 150 s, now 4e-13 J each; a 10-link chain with a torsion
   * spring at each hinge 3.7e-3 J over 150 s, now 5.0e-5 J, and with a damper at each
   * hinge 8.6e-3 J off its balance by 120 s, now 6.1e-5 J (long-run/
   * articulated-balance.test.ts; the left steps' share).
   *
   * The scaling is applied only where it changes the velocities by no more than the step
   * erred by its own estimate: the change δu = (s − 1) u, measured as the sub-steps'
   * errors are (tree.largestDisplacement, δu over the step or 5 ms), at most the sum of
   * the accepted sub-steps' estimates (errorSum). Beyond it, or where no scaling reaches
   * E_g (V_g,end above it), the step is taken again by the caller at a tighter tolerance
   * (false) where that tightens it, else that group is left as it is and the others
   * scaled (the groups' changes measured at once, as one δu, and where that is beyond the
   * estimate each measured group's alone; one group's left step had held back every
   * other's projection). So is a group whose forces did more work over the step than its
   * kinetic energy (WORK_SHARE). A defect
   * within the energies' rounding (ENERGY_ROUNDING) is left: at rest, scaling by it would
   * follow the rounding of V with the velocities.
   *
   * The carried accelerations (IntegratorMemory.acceleration, first same as last) stay
   * those of the unscaled velocities: they differ by (s² − 1) times the velocities'
   * quadratic terms and (s − 1) times the dampers' forces, a first stage off by what the step's own error left, and the next
   * step's is projected in turn (evaluated afresh instead, a step would cost one
   * evaluation more).
   */
  private keepEnergy(t: number, h: number, accepted: number, tol: number): boolean {
    const { tree, u, du, energyStart, kineticEnd, potentialEnd, groupWork } = this;
    const groups = this.groups as EnergyGroups;
    const { scale, keepState } = this;
    const sys = tree.sys;
    groups.kinetic(kineticEnd);
    groups.potential(potentialEnd, t + h);
    // the change's size as the error control measures it (m), against the step's own
    // estimated error and its tolerance
    const estimate = this.errorSum;
    const allowed = accepted * tol;
    const horizon = Math.max(h, VELOCITY_ERROR_HORIZON);
    // each group's scale and state (KEEP_*); whether some group's change is beyond the
    // estimate by its bound below (then measured), and whether some group is left
    let measure = false;
    let left = false;
    let scaled = false;
    for (let g = 0; g < groups.count; g++) {
      scale[g] = 1;
      keepState[g] = KEEP_NONE;
      const kinetic = kineticEnd[g];
      const potential = potentialEnd[g];
      // the balance: the start's energy less what the group's non-conservative forces took out
      const target = energyStart[g] - groupWork[g];
      const rest = target - potential;
      if (
        Math.abs(rest - kinetic) <=
        ENERGY_ROUNDING * (Math.abs(target) + Math.abs(potential) + kinetic)
      )
        continue;
      // (at rest there is nothing to scale; a group whose forces took out or put in more
      // than its kinetic energy over the step is left, WORK_SHARE)
      if (!(kinetic > 0) || Math.abs(groupWork[g]) > WORK_SHARE * kinetic) continue;
      // V above the target (a position error at a turning point): no scaling reaches it,
      // the nearest being to rest (s = 0), whose size decides between a retry and leaving it
      if (!(rest > 0)) {
        keepState[g] = KEEP_LEFT;
        left = true;
        continue;
      }
      const s = Math.sqrt(rest / kinetic);
      scale[g] = s;
      scaled = true;
      // a body's √(δx² + δθᵀIδθ/m) is at most √(2 (s − 1)² T / m) over the horizon (its
      // share of the change's kinetic energy at most the whole): where that bound is
      // within the estimate, the pass over the tree is spared (S2-100: the projection 68 →
      // 27 µs a step against 1.7 ms of its evaluations, both timed under a load of 24 on 2
      // cores)
      if (horizon * Math.abs(s - 1) * Math.sqrt((2 * kinetic) / this.lightest) > estimate) {
        keepState[g] = KEEP_MEASURE;
        measure = true;
      } else keepState[g] = KEEP_SCALE;
    }
    const uGroup = groups.uGroup;
    if (measure) {
      // (du: readStiffness's scratch, free after the sub-steps) the groups' changes at once,
      // the largest body's the largest group's; beyond the estimate, each measured group's
      // own (its subtree alone moves: du is 0 outside it)
      for (let i = 0; i < u.length; i++) du[i] = (scale[uGroup[i]] - 1) * u[i];
      if (tree.largestDisplacement(this.y, this.zeros, du, horizon) > estimate)
        for (let g = 0; g < groups.count; g++) {
          if (keepState[g] !== KEEP_MEASURE) continue;
          for (let i = 0; i < u.length; i++) du[i] = uGroup[i] === g ? (scale[g] - 1) * u[i] : 0;
          if (tree.largestDisplacement(this.y, this.zeros, du, horizon) > estimate) {
            scale[g] = 1;
            left = true;
          }
        }
    }
    // the groups within it scaled, each on its own (a group beyond it does not hold back
    // the others' projection)
    if (scaled) {
      for (let i = 0; i < u.length; i++) u[i] *= scale[uGroup[i]];
      // the bodies' velocities are linear in u (no motor drives a joint): scaled alike
      const { vel, omega } = sys;
      const slotGroup = groups.slotGroup;
      for (let i = 0; i < tree.numSlots; i++) {
        const b = 3 * tree.body[i];
        const s = scale[slotGroup[i]];
        for (let d = 0; d < 3; d++) {
          vel[b + d] *= s;
          omega[b + d] *= s;
        }
      }
    }
    // a group beyond the step's estimate (or out of reach): the step taken again at a
    // tighter tolerance where that tightens it, its estimate above the tighter tolerance
    // (a crack of the whip or a fast swing of the chain its sub-steps barely resolve);
    // else that group left as it is (a resolved swing's turning point, where the
    // positions' error, ~1e-13 m, would be put into the small velocities: the compound
    // pendulum of articulated.test.ts with the change allowed up to the tolerance ran
    // 2.8e-9 of its period off, 3e-10 unchanged)
    return !left || !(estimate > ENERGY_RETRY_TOLERANCE * allowed);
  }

  /**
   * The sub-steps of a step of h from t (the start's rates in ky[0], ku[0], stagePower[0]),
   * explicit or, with `implicit`, ARS(2,2,2)'s with the servos implicit: leaves the end in
   * this.y, this.u, the work its stages integrated in substepWork, the largest accepted
   * error in worstError; returns the sub-steps taken. −1 when an explicit step runs past
   * MAX_ATTEMPTS with a servo too stiff for it where it got stuck (one that entered its
   * linear band within the step, saturated at its start), which the caller then takes
   * again with the servos implicit: the waste of one step's attempts, where the explicit
   * path alone failed. `tol`: the step's stepTolerance, or a tighter one where `step` takes
   * a conservative step again (keepEnergy).
   */
  private advance(t: number, h: number, implicit: boolean, tol: number | null): number {
    const { tree, ky, ku, ey, eu } = this;
    let { y, u, ys, us } = this;
    const fallback = !implicit && this.servos !== null;
    let work = 0;
    let done = 0;
    let hs = this.memory.substepSize > 0 ? Math.min(this.memory.substepSize, h) : h;
    let accepted = 0;
    let attempts = 0;
    let missed = false;
    const floor = h / IMEX_MAX_SUBSTEPS;
    let rejected = false;
    let worst = 0;
    let errors = 0;
    this.groupWork.fill(0);
    // the velocities' error weighed over the step, h, or the default step when h is
    // shorter: see the file comment and VELOCITY_ERROR_HORIZON
    const horizon = Math.max(h, VELOCITY_ERROR_HORIZON);
    const servos = this.servos as ImplicitServos;
    // the laws at the step's start (the tree placed at y by the caller's evaluate)
    if (implicit && tol !== null) servos.readStart(t, u);
    let switchAt = -1;
    // the time into the step (s) until which a servo's transit out of its effort limit
    // lets the sub-steps be as short as transitFloor (TRANSIT_SUBSTEPS)
    let transitEnd = -1;
    let transitFloor = floor;
    // the smooth part of a sub-step's error (without a switch's, switchError), and the
    // next attempt's length where it ends just before a switch (−1: the controller's)
    let smooth = 0;
    let ahead = -1;
    while (done < h) {
      // what is left of the step in equal sub-steps no longer than hs: the last one ends
      // the step exactly, and no sliver is left for a sub-step of its own
      const rest = h - done;
      const hh =
        ahead > 0
          ? Math.min(ahead, rest)
          : rest /
            Math.max(1, Math.ceil(rest / (implicit && tol === null ? IMEX_SUBSTEP : hs) - 1e-9));
      ahead = -1;
      if (implicit) {
        this.substepStart = t + done;
        this.substepLength = hh;
        this.imexStages(y, u, ys, us);
      } else
        for (let k = 1; k < 7; k++) {
          // ys = y + hh Σ_j a_kj k_j, us likewise (one pass each)
          const row = this.rows[k];
          for (let j = 0; j < k; j++) row[j] = hh * A[k][j];
          combine(ys, y, row, ky, k);
          combine(us, u, row, ku, k);
          this.stageTime = t + done + C[k] * hh;
          this.evaluate(ys, us, k);
        }
      let err = 0;
      switchAt = -1;
      if (tol !== null && implicit) {
        err = this.imexError(hh, y, ys, us, horizon);
        // a row switching side within the sub-step: the effort its start side applied
        // until the switch, which the stages took from the end side (switchError)
        servos.switchError(hh, eu);
        switchAt = servos.switchAt;
        smooth = err;
        if (switchAt >= 0) {
          this.dy.fill(0);
          err = Math.max(err, tree.largestDisplacement(y, this.dy, eu, horizon));
        }
      } else if (tol !== null) {
        // the embedded error hh Σ_k (b_k − b̂_k) k_k
        const erow = this.rows[0];
        for (let k = 0; k < 7; k++) erow[k] = hh * E[k];
        combine(ey, this.zeros, erow, ky, 7);
        combine(eu, this.zeros, erow, ku, 7);
        err = tree.largestDisplacement(y, ey, eu, horizon);
        smooth = err;
      }
      // ys, us hold the solution (the seventh stage's point)
      // (an implicit sub-step at its shortest is accepted: IMEX_MAX_SUBSTEPS; one with a
      // servo's transit out of its effort limit at TRANSIT_SUBSTEPS of its relaxation time)
      if (implicit && tol !== null && servos.transit > 0) {
        // (its relaxation, followed by the sub-steps within TRANSIT_WINDOW ε_r of its entry
        // into the band, which may be as short)
        transitEnd = Math.max(transitEnd, done + switchAt * hh + TRANSIT_WINDOW * servos.transit);
        transitFloor = Math.min(floor, servos.transit / TRANSIT_SUBSTEPS);
      }
      const shortest = done < transitEnd ? transitFloor : floor;
      const ok = tol === null || err <= tol || (implicit && hh <= shortest * (1 + 1e-9));
      if (ok && tol !== null && err > tol) missed = true;

      // the motion's stiffness, where the stages show more than rounding (STIFFNESS_READ),
      // on accepted sub-steps (as DOPRI5's test, Hairer & Wanner, "Solving ODEs II", §IV.2):
      // a rejected one's stages may have left the linear regime the read assumes (the 6-axis
      // URDF arm at k_p 500, k_d 20 without effort limits, h k_d/I = 797 on its last wrist:
      // its first sub-step, the whole step, blew up to an error of 1e50 m, read ρ = 1e22 /s,
      // and the next sub-step, 3/ρ, fell below h · MIN_FRACTION: step 1 failed)
      if (ok && tol !== null && !implicit && err > STIFFNESS_READ * tol) {
        const rho = this.readStiffness(hh);
        if (rho > 0 && Number.isFinite(rho))
          this.memory.stiffness = Math.max(rho, STIFFNESS_MEMORY * this.memory.stiffness);
      }
      if (ok) {
        // the solution and its rates start the next sub-step (first same as last): the
        // arrays swapped, as the stages overwrite ys, us, ky[6], ku[6] before reading them
        const yt = y;
        y = ys;
        ys = yt;
        const ut = u;
        u = us;
        us = ut;
        const kt = ky[0];
        ky[0] = ky[6];
        ky[6] = kt;
        const lt = ku[0];
        ku[0] = ku[6];
        ku[6] = lt;
        if (this.balance) {
          const P = this.stagePower;
          const weights = implicit
            ? this.eulerSubstep
              ? EULER_POWER_WEIGHTS
              : IMEX_POWER_WEIGHTS
            : RK_POWER_WEIGHTS;
          let w = 0;
          for (let k = 0; k < 7; k++) w += weights[k] * P[k];
          work += hh * w;
          // the implicit servos' work, their impulses on their joints' mean rates (the
          // stages' P without their share, `evaluate`)
          if (implicit && this.power !== null)
            work -= (this.servos as ImplicitServos).substepWork(u);
          P[0] = P[6];
        }
        // each group's non-conservative work, by the same weights (the groups are only kept
        // on explicit steps: an implicit one's stages leave its servos' forces out)
        const Pg = this.groupPower;
        if (Pg.length > 0 && !implicit) {
          const n = this.groupWork.length;
          for (let g = 0; g < n; g++) {
            let w = 0;
            for (let k = 0; k < 7; k++) w += RK_POWER_WEIGHTS[k] * Pg[k * n + g];
            this.groupWork[g] += hh * w;
            Pg[g] = Pg[6 * n + g];
          }
        }
        if (implicit && tol !== null) servos.acceptSubstep();
        done += hh;
        accepted++;
        if (err > worst) worst = err;
        errors += err;
      }
      // (without error control the implicit servos' sub-steps are of fixed length,
      // IMEX_SUBSTEP)
      if (implicit && tol === null) continue;
      const factor =
        tol === null
          ? 1
          : Number.isFinite(err)
            ? Math.min(
                // no growth right after a rejection (Hairer's DOPRI5), nor after a
                // sub-step taken by IMEX Euler (its error not estimated, imexError)
                (ok && rejected) || (implicit && this.eulerSubstep) ? 1 : 5,
                Math.max(
                  0.2,
                  // the estimate's order: hh⁵ (the explicit pair's fourth-order companion),
                  // hh² (ARS(2,2,2)'s first-order one, imexError)
                  0.9 * (tol / Math.max(smooth, 1e-300)) ** (implicit ? 0.5 : 0.2),
                ),
              )
            : 0.2;
      // a sub-step cut short to end the step does not shorten the next one
      hs = ok && hh < hs ? Math.max(hs, hh * factor) : hh * factor;
      // within the stability region (STABLE_STEP): the elementary controller alone lets
      // the sub-steps grow past its boundary while a stiff mode's error is small, and that
      // mode then grows until its error reaches the tolerance (the chatter at the boundary
      // of Hairer & Wanner, "Solving ODEs II", §IV.2)
      // (explicit sub-steps only: the implicit ones take the servos' stiffness implicitly)
      if (this.memory.stiffness > 0 && !implicit)
        hs = Math.min(hs, STABLE_STEP / this.memory.stiffness);
      if (implicit) hs = Math.max(hs, shortest);
      // a sub-step rejected for a switch at σ within it is taken again to end just before
      // the switch (σ the law's linear crossing: again until the switch is at the next
      // sub-step's start, where the end side's effort is right from the start), below the
      // shortest sub-step if need be (and then accepted whatever its error)
      if (!ok && switchAt > 0) ahead = switchAt * hh * (1 - SWITCH_MARGIN);
      // a sub-step rejected for a servo's transit out of its effort limit within ε_r of its
      // start (ImplicitServos.transitModel): taken again at most ε_r long, halved until its
      // stages follow the law's relaxation, and the sub-steps after it grow from there
      const transit = implicit && !ok ? servos.transit : -1;
      if (transit > 0 && switchAt * hh < transit) {
        ahead = Math.min(0.5 * hh, transit);
        hs = ahead;
      }
      if (!ok && hs < h * MIN_FRACTION)
        throw new Error(
          `articulated: the sub-steps fell below ${(h * MIN_FRACTION).toExponential(2)} s (error ${err.toExponential(3)} m)`,
        );
      rejected = !ok;
      if (++attempts > MAX_ATTEMPTS) {
        // a servo too stiff for the sub-steps where they got stuck: the caller takes the
        // step again with it implicit; other stiff forces fail the step as before
        if (fallback) {
          this.stageTime = t + done;
          tree.setState(y, u, this.stageTime, false);
          this.guideHinges(y);
          const servos = this.servos as ImplicitServos;
          if (servos.explicitSubsteps(this.stageTime, h) > IMPLICIT_SERVO_SUBSTEPS) return -1;
        }
        // (the stage that hit the cap named: the implicit servo steps' sub-steps are sized
        // by their error control and their switches, not by an explicit stability bound)
        throw new Error(
          implicit
            ? `articulated: the step needed more than ${MAX_ATTEMPTS} sub-steps (the last ${hh.toExponential(2)} s) in its implicit servo stage (ARS(2,2,2): the servos and joint limits implicit, the other forces explicit), its error control or its servos' and limits' switches asking that many; raise solver.stepTolerance, or choose generalized-alpha`
            : `articulated: the step needed more than ${MAX_ATTEMPTS} sub-steps (the last ${hh.toExponential(2)} s): a force too stiff for this explicit integrator; choose generalized-alpha or newmark`,
        );
      }
    }
    this.y = y;
    this.u = u;
    this.ys = ys;
    this.us = us;
    this.memory.substepSize = hs;
    this.substepWork = work;
    this.worstError = worst;
    this.errorSum = errors;
    this.toleranceMissed = missed;
    return accepted;
  }

  /**
   * ρ ≈ |λ|max of the motion's Jacobian J from the sub-step's last two stages, both at its
   * end (c₆ = c₇ = 1): f(Y₇) − f(Y₆) ≈ J (Y₇ − Y₆), Y₇ − Y₆ = hh Σ_j (a₇ⱼ − a₆ⱼ) k_j
   * (DOPRI5's stiffness detection, Hairer & Wanner, "Solving ODEs II", §IV.2). Split into
   * the coordinates' part (δy → δẏ) and the velocities' (δu → δa), two reads, each |λ|
   * along an eigenvector (δu = λ δy, δa = λ δu): ρ_u = ‖δa‖/‖δu‖ and
   * ρ_p = √(‖δẏ‖ ‖δa‖ / (‖δy‖ ‖δu‖)), the smaller kept. On a stiff servo's
   * [[0, 1], [−kp/I, −kd/I]] read on a mixture of its modes, ρ_u holds an overdamped
   * servo's kd/I (a rod at 7990 /s: within 2.5 % on every read) where ρ_p swings from 2 000
   * to 40 000 (the creep's δy), and ρ_p holds an undamped one's √(kp/I) (2828 /s on every read)
   * where ρ_u swings from 160 to 15 000 with the oscillation's phase; either errs low as
   * well, hence STIFFNESS_MEMORY. Hairer's one ratio over (δy, δu) carried both errors: on
   * the rod unweighed toward kp/I (10 600 /s kept, 8 sub-steps a step instead of 5), with the
   * velocities weighed by 5 ms a stiff undamped servo on the test arm took 54 sub-steps a
   * step instead of 23 attempts, and weighed by the sub-step, a velocity jump (a target's
   * kink) read 1/hh, which shrank the sub-steps without end. A read of velocities alone
   * is ρ_u, the damping's ‖∂a/∂u‖. 0 when the velocities do not differ.
   */
  private readStiffness(hh: number): number {
    const { ky, ku, dy, du } = this;
    const row = this.rows[0];
    for (let j = 0; j < 6; j++) row[j] = hh * (A[6][j] - (j < 5 ? A[5][j] : 0));
    combine(dy, this.zeros, row, ky, 6);
    combine(du, this.zeros, row, ku, 6);
    // squared norms of δy, δẏ, δu, δa
    let yy = 0;
    let rr = 0;
    for (let i = 0; i < dy.length; i++) {
      const d = ky[6][i] - ky[5][i];
      rr += d * d;
      yy += dy[i] * dy[i];
    }
    let uu = 0;
    let aa = 0;
    for (let i = 0; i < du.length; i++) {
      const d = ku[6][i] - ku[5][i];
      aa += d * d;
      uu += du[i] * du[i];
    }
    if (!(uu > 0)) return 0;
    const rhoU = Math.sqrt(aa / uu);
    return yy > 0 ? Math.min(rhoU, Math.sqrt(Math.sqrt((rr * aa) / (yy * uu)))) : rhoU;
  }

  /** `advance`'s results: the work its stages integrated (J), its largest error (m). */
  private substepWork = 0;
  private worstError = 0;
  /** The sum of `advance`'s accepted errors (m): the step's estimated error (keepEnergy). */
  private errorSum = 0;
  /** Whether `advance` accepted a sub-step above the tolerance (IMEX_MAX_SUBSTEPS). */
  private toleranceMissed = false;
  /** The step's start (y, u), for `advance`'s fallback. */
  private readonly yStart: Float64Array;
  private readonly uStart: Float64Array;
  /** An implicit stage's Ŷ (implicitStage). */
  private readonly yHat: Float64Array;
  private readonly uHat: Float64Array;
  /** The running sub-step's start and length (s), handed to imexStages as stageTime is. */
  private substepStart = -0;
  private substepLength = -0;
  /** The implicit stage's γ hh (s), handed to implicitStage likewise. */
  private implicitLength = -0;

  /**
   * One ARS(2,2,2) sub-step of hh from t (substepStart, substepLength; see
   * IMPLICIT_SERVO_SUBSTEPS): from (y, u) and
   * the explicit rates f_E(Y₁) in ky[0], ku[0], its solution Y₃ into (ys, us) and
   * f_E(Y₃) into ky[6], ku[6] (first same as last); f_E(Y₂) in slot 1, f_I(Y₂), f_I(Y₃) in
   * slots 2 and 3 (ImplicitServos.solve):
   *   Ŷ₂ = y + γ hh f_E(Y₁),  Y₂ = Ŷ₂ + γ hh f_I(Y₂),
   *   Ŷ₃ = y + hh (δ f_E(Y₁) + (1 − δ) f_E(Y₂) + (1 − γ) f_I(Y₂)),  Y₃ = Ŷ₃ + γ hh f_I(Y₃).
   */
  private imexStages(y: Float64Array, u: Float64Array, ys: Float64Array, us: Float64Array): void {
    const { ky, ku } = this;
    const t = this.substepStart;
    const hh = this.substepLength;
    const gh = ARS_GAMMA * hh;
    this.implicitLength = gh;
    const servos = this.servos as ImplicitServos;
    servos.beginSubstep(u);
    const row = this.rows[0];
    row[0] = gh;
    combine(ys, y, row, ky, 1);
    combine(us, u, row, ku, 1);
    this.stageTime = t + gh;
    this.implicitStage(ys, us, 2);
    servos.keepActiveSet();
    servos.addImpulse((1 - ARS_GAMMA) * hh);
    this.evaluate(ys, us, 1);
    row[0] = ARS_DELTA * hh;
    row[1] = (1 - ARS_DELTA) * hh;
    row[2] = (1 - ARS_GAMMA) * hh;
    combine(ys, y, row, ky, 3);
    combine(us, u, row, ku, 3);
    this.stageTime = t + hh;
    this.implicitStage(ys, us, 3);
    servos.addImpulse(gh);
    this.eulerSubstep = !servos.activeSetKept();
    if (this.eulerSubstep) {
      // a row switched between the stages (a servo entering or leaving its effort limit, a
      // limit its bound): the law is not smooth over the sub-step, and ARS(2,2,2)'s second
      // stage, weighed 1 − γ, carried the effort of its side past the switch that the
      // last, weighed γ, could not take back: a saturated servo caught in its band
      // (k_p = 1e8, k_d = 1e6, limit 1000 N·m, the end-hinged rod) chattered from limit to
      // limit at 5–17 rad/s, its angle creeping (4.6e-3 rad off after 1 s). The sub-step is
      // taken again by IMEX Euler, Y = y + hh (f_E(y) + f_I(Y)), the implicit law's clamp
      // solved at the sub-step's end, as the implicit Euler discretization of sliding-mode
      // control (Acary & Brogliato, Syst. Control Lett. 59, 2010: chattering-free, the
      // sliding surface reached in finite steps): first order across the switch. ARS's
      // solution is kept in (ey, eu) for the error estimate (imexError).
      this.ey.set(ys);
      this.eu.set(us);
      servos.beginSubstep(u);
      row[0] = hh;
      combine(ys, y, row, ky, 1);
      combine(us, u, row, ku, 1);
      this.implicitLength = hh;
      this.implicitStage(ys, us, 3);
      servos.addImpulse(hh);
    }
    this.evaluate(ys, us, 6);
  }

  /** Whether the last imexStages sub-step was taken by IMEX Euler (EULER_POWER_WEIGHTS). */
  private eulerSubstep = false;

  /**
   * The error (m, as the explicit pair's, tree.largestDisplacement over `horizon`) of the
   * ARS(2,2,2) sub-step of hh from y to (ys, us) imexStages just took: its solution less its
   * first-order companion's from the same stages, y + hh (f_E(Y₁) + f_I(Y₂)) (Σ b̂ = 1 on
   * both parts: IMEX Euler's quadrature), that is
   *   e = hh ((1 − δ) (f_E(Y₂) − f_E(Y₁)) + γ (f_I(Y₃) − f_I(Y₂))),
   * O(hh²), filtered through the last implicit stage (ImplicitServos.filterError) so that
   * the servos' damped stiff modes do not count. As the explicit pair's, an estimate of the
   * lower order's error with the higher order's solution kept (local extrapolation), so
   * the same stepTolerance asks more of the second-order solution than it shows. A
   * sub-step taken by IMEX Euler (an active set switching within it) is estimated by its
   * difference to ARS's solution of the same sub-step (imexStages), O(hh²) on either side
   * of the switch, the two L-stable (unestimated, its first sub-step was the whole step's
   * first order: the 6-axis arm of test/formats/urdf started toward 0.5 rad on every
   * joint, its wrists saturated, took its first 5 ms in one IMEX Euler sub-step, 1.6e-2 rad
   * and 0.024 J off whatever the tolerance).
   */
  private imexError(
    hh: number,
    y: Float64Array,
    ys: Float64Array,
    us: Float64Array,
    horizon: number,
  ): number {
    const { tree, ky, ku, ey, eu, dy } = this;
    if (this.eulerSubstep) {
      for (let i = 0; i < ey.length; i++) ey[i] = ys[i] - ey[i];
      for (let i = 0; i < eu.length; i++) eu[i] = us[i] - eu[i];
      return tree.largestDisplacement(y, ey, eu, horizon);
    }
    const row = this.rows[0];
    row[0] = -(1 - ARS_DELTA) * hh;
    row[1] = (1 - ARS_DELTA) * hh;
    row[2] = -ARS_GAMMA * hh;
    row[3] = ARS_GAMMA * hh;
    combine(ey, this.zeros, row, ky, 4);
    combine(eu, this.zeros, row, ku, 4);
    const gh = this.implicitLength;
    if (!(this.servos as ImplicitServos).filterError(gh, ey, eu))
      throw new Error("articulated: a joint's articulated inertia is singular");
    // ey += gh ẏ(eu), at the solution's coordinates (where evaluate left the tree)
    tree.positionRates(ys, eu, dy);
    for (let i = 0; i < ey.length; i++) ey[i] += gh * dy[i];
    return tree.largestDisplacement(y, ey, eu, horizon);
  }

  /**
   * Y = Ŷ + γ hh f_I(Y) at stageTime (γ hh: implicitLength), Ŷ in (y, u), f_I(Y) into
   * ky[k], ku[k] (ImplicitServos). Solved with the mass matrix at Ŷ, then again with it at
   * that solution: with M at Ŷ alone, f_I(Y) is O(hh) off (M moves by O(hh u) over the
   * stage), its share of the sub-step O(hh²), and the step first order (a passive link
   * swinging on a stiffly held one, its energy error halving with the step: 0.110, 0.055,
   * 0.028, 0.014 J at 4, 2, 1, 0.5 ms over 1 s).
   */
  private implicitStage(y: Float64Array, u: Float64Array, k: number): void {
    const t = this.stageTime;
    const gh = this.implicitLength;
    const servos = this.servos as ImplicitServos;
    const { tree, ky, ku, yHat, uHat } = this;
    tree.setState(y, u, t, false);
    this.guideHinges(y);
    servos.readLaws(t, gh);
    yHat.set(y);
    uHat.set(u);
    for (let pass = 0; pass < 2; pass++) {
      if (pass > 0) {
        // M and the limits' damping ramps at the first solution, the stage again from Ŷ
        tree.setState(y, u, t, false);
        servos.relinearize(gh, u);
        y.set(yHat);
        u.set(uHat);
      }
      if (!servos.readInertia(u) || !servos.stage(gh, y, u, ky[k], ku[k]))
        throw new Error("articulated: a joint's articulated inertia is singular");
    }
  }

  /** Stage k's rates at (stageTime, y, u) into ky[k], ku[k]. */
  private evaluate(y: Float64Array, u: Float64Array, k: number): void {
    const t = this.stageTime;
    const tree = this.tree;
    // (without the inverse world inertias, which neither the forces nor the algorithm
    // read: the step's end sets them)
    tree.setState(y, u, t, false);
    this.guideHinges(y);
    this.stepper.computeForces(t, this.forces);
    tree.positionRates(y, u, this.ky[k]);
    if (this.splitting) {
      // the explicit part of an ARS(2,2,2) stage: the accelerations of the forces less the
      // servos' (the coordinates' rates are the implicit part's, ImplicitServos)
      this.fullForces.set(this.forces);
      (this.servos as ImplicitServos).removeForces(this.forces);
      this.ky[k].fill(0);
    }
    if (!tree.accelerations(u, this.forces, this.ku[k]))
      throw new Error("articulated: a joint's articulated inertia is singular");
    if (this.balance) {
      // the dissipative forces' power, less what the motors put in (effort × rate)
      let p = this.power === null ? 0 : this.power(t);
      for (let i = 0; i < this.drivenSlots.length; i++) {
        const slot = this.drivenSlots[i];
        p -= tree.driveEffort[slot] * tree.driveRate[slot];
      }
      // (the implicit servos' share booked apart, ImplicitServos.substepWork)
      if (this.splitting && this.power !== null) p -= (this.servos as ImplicitServos).power(t);
      this.stagePower[k] = p;
    }
    // each group's power, for its energy balance (keepEnergy; explicit steps only)
    if (this.groupPower.length > 0 && !this.splitting) {
      const groups = this.groups as EnergyGroups;
      groups.power(t, this.groupPower, k * groups.count);
    }
  }

  /**
   * Each hinge's unwrapped angle at the configuration setState just placed from y (file
   * comment) to its coordinate: the start's value plus the revolute slot's θ, or the
   * motor's angle.
   */
  private guideHinges(y: Float64Array): void {
    const tree = this.tree;
    for (let j = 0; j < this.hinges.length; j++) {
      const q = this.hinges[j];
      const i = this.hingeSlot[j];
      q.guided =
        tree.kind[i] === SlotKind.REVOLUTE
          ? this.hingeStart[j] + y[tree.yOffset[i]]
          : tree.driveValue[i];
      q.guide();
    }
  }

  /**
   * λ of each joint's rows from the tree's joint wrenches: the generalized force the joint
   * applies to its child at the centre, g = (f, n_P − r × f), equals J_cᵀ λ with J_c the
   * child's Jacobian block of the rows; λ = (J_c J_cᵀ)⁻¹ J_c g.
   */
  private writeReactions(t: number): void {
    const { tree, constraints, lambda, jac, normal, normalInv, work, rhs } = this;
    const rows = this.childRows;
    const w = tree.wrench;
    for (let i = 0; i < tree.numSlots; i++) {
      const k = tree.joint[i];
      if (k < 0) continue;
      const c = constraints.constraints[k];
      const b = tree.body[i];
      const off = constraints.rowOffset[k];
      const o = 6 * i;
      const km = this.motorOf[i];
      if (c.type === "spherical") {
        // its rows' multipliers are the force on b (constraints/spherical.ts): the wrench's
        // force where the child is b, the opposite where it is a
        const sign = c.bodyB === b ? 1 : -1;
        for (let d = 0; d < 3; d++) lambda[off + d] = sign * w[o + 3 + d];
        continue;
      }
      // the child's rows: the joint's, then its motor's
      // (copied by index: subarray views would be allocations a step)
      c.jacobian(t, jac[0], jac[1]);
      const own = c.bodyB === b ? jac[1] : jac[0];
      for (let e = 0; e < 6 * c.rows; e++) rows[e] = own[e];
      let m = c.rows;
      if (km >= 0) {
        const motor = constraints.constraints[km];
        motor.jacobian(t, jac[0], jac[1]);
        const driven = motor.bodyB === b ? jac[1] : jac[0];
        for (let e = 0; e < 6; e++) rows[6 * m + e] = driven[e];
        m++;
      }
      // the wrench at the centre: P = x_c − r
      const f0 = w[o + 3];
      const f1 = w[o + 4];
      const f2 = w[o + 5];
      const r = tree.pointToCentre(i);
      const g = this.g;
      g[0] = f0;
      g[1] = f1;
      g[2] = f2;
      g[3] = w[o] - (r[1] * f2 - r[2] * f1);
      g[4] = w[o + 1] - (r[2] * f0 - r[0] * f2);
      g[5] = w[o + 2] - (r[0] * f1 - r[1] * f0);
      for (let p = 0; p < m; p++) {
        let s = 0;
        for (let d = 0; d < 6; d++) s += rows[6 * p + d] * g[d];
        rhs[p] = s;
        for (let q = 0; q < m; q++) {
          let n = 0;
          for (let d = 0; d < 6; d++) n += rows[6 * p + d] * rows[6 * q + d];
          normal[m * p + q] = n;
        }
      }
      const solved = invertSmall(normalInv, 0, normal, 0, m, work);
      for (let p = 0; p < m; p++) {
        let s = 0;
        if (solved) for (let q = 0; q < m; q++) s += normalInv[m * p + q] * rhs[q];
        if (p < c.rows) lambda[off + p] = s;
        else lambda[constraints.rowOffset[km]] = s;
      }
    }
  }

  private readonly g = new Float64Array(6);
  /**
   * Zeros, as long as y: the base of a combination that sums from zero (combine; 0 + x is
   * x, the bits a sum without a base would have).
   */
  private readonly zeros: Float64Array;
  /** Scratch rows of the stages' coefficients times the sub-step length. */
  private readonly rows = Array.from({ length: 7 }, () => new Float64Array(7));
}

/**
 * out = base + Σ_{j<count} c_j k_j (a sum from zero: `base` the integrator's zeros), one pass over the entries: the stages'
 * combinations (a pass per term, or a loop over j inside the loop over entries, costs
 * more than the sums on the short vectors of a small tree). One loop per count, chosen
 * before it, rather than a test of count per term and entry: a loop of one sub-step's
 * combinations on the 100-link chain 12–25 % faster (bench/README.md, "Articulated (joint
 * coordinates)"), the same sums in the same order (base, then c_0 k_0, c_1 k_1, …).
 */
function combine(
  out: Float64Array,
  base: Float64Array,
  c: Float64Array,
  k: Float64Array[],
  count: number,
): void {
  const n = out.length;
  const b = base;
  const k0 = k[0];
  const k1 = k[1];
  const k2 = k[2];
  const k3 = k[3];
  const k4 = k[4];
  const k5 = k[5];
  const k6 = k[6];
  const c0 = c[0];
  const c1 = c[1];
  const c2 = c[2];
  const c3 = c[3];
  const c4 = c[4];
  const c5 = c[5];
  const c6 = c[6];
  switch (count) {
    case 1:
      for (let i = 0; i < n; i++) out[i] = b[i] + c0 * k0[i];
      return;
    case 2:
      for (let i = 0; i < n; i++) out[i] = b[i] + c0 * k0[i] + c1 * k1[i];
      return;
    case 3:
      for (let i = 0; i < n; i++) out[i] = b[i] + c0 * k0[i] + c1 * k1[i] + c2 * k2[i];
      return;
    case 4:
      for (let i = 0; i < n; i++) out[i] = b[i] + c0 * k0[i] + c1 * k1[i] + c2 * k2[i] + c3 * k3[i];
      return;
    case 5:
      for (let i = 0; i < n; i++)
        out[i] = b[i] + c0 * k0[i] + c1 * k1[i] + c2 * k2[i] + c3 * k3[i] + c4 * k4[i];
      return;
    case 6:
      for (let i = 0; i < n; i++)
        out[i] = b[i] + c0 * k0[i] + c1 * k1[i] + c2 * k2[i] + c3 * k3[i] + c4 * k4[i] + c5 * k5[i];
      return;
    default:
      for (let i = 0; i < n; i++)
        out[i] =
          b[i] +
          c0 * k0[i] +
          c1 * k1[i] +
          c2 * k2[i] +
          c3 * k3[i] +
          c4 * k4[i] +
          c5 * k5[i] +
          c6 * k6[i];
  }
}
