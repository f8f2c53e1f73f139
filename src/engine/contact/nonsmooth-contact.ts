/**
 * The one-step nonsmooth contact problem of Moreau–Jean time stepping (Siconos'
 * TimeStepping with MoreauJeanOSI and the LCP / FrictionContact one-step problems), and
 * the position projection of TimeSteppingProjectOnConstraints.
 *
 * Per step (called by MoreauJeanIntegrator, src/engine/integrators/moreau-jean.ts):
 *  updateIndexSet  detect contacts at (x_t, v_t) and keep the active index set I₁:
 *                  contact i is active when its predicted gap
 *                      g_i + γ h u_n,i⁻ ≤ ε_act,    γ = 1/2,
 *                  Siconos' MoreauJeanOSI::addInteractionInIndexSet (y + γ h ẏ ≤ 0 with its
 *                  default γ = 1/2), u⁻ = H v_t the local velocity at t. ε_act =
 *                  ACTIVATION_TOLERANCE (1 µm) is not in Siconos: it keeps a resting
 *                  contact active when its gap came out slightly positive, by round-off
 *                  (1e-17 m) or, mostly, by an iterative solve stopped before convergence
 *                  (the gap then moves by hθ times the residual velocity, ~1e-8 m for a
 *                  tall stack under PGS). Without it such a contact is released, the body
 *                  falls freely for a step and sinks by g h²/2 (1e-4 m at h = 0.005): the
 *                  active set flickers. 1 µm is far below the penetrations the scheme makes
 *                  at impacts (up to γ h |u_n|). Not Siconos': the rigid contacts with
 *                  restitution of the bodies Moreau–Jean's impact location takes (no joint,
 *                  turning by at most TURN in the step: locatedBodies) are active with
 *                  γ = 1, so that an impact within the step's second half is located in it
 *                  rather than found past the surface at the next start (closes).
 *                  The detection margin is raised to
 *                  γ h·2 max|v_point| for the step so no contact that the prediction would
 *                  activate is missed. The fem face contacts (fem-faces.ts) are detected
 *                  with the same margin and enter the set with their triangle sides.
 *  assemble        the contact Jacobian H (local frames (n, t1, t2), see contact-set.ts)
 *                  and the Delassus matrix
 *                      W_c = (c_v/h)·H W⁻¹ Hᵀ
 *                  with W the integrator's iteration matrix (joints held): for Moreau–Jean
 *                  c_v = h, so an impulse P changes the end velocity by Δv = W⁻¹ Hᵀ P and
 *                  the local velocity by W_c P. Fast path (no joints, W block-diagonal, i.e.
 *                  no coupling springs): W_c is kept factored (FactoredDelassus: per
 *                  contact side the rows of H and W_X⁻¹ H_Xᵀ from each body's w×w block
 *                  W_X⁻¹, M⁻¹/(1 + h r_M) when W is the mass matrix), so the PGS runs in
 *                  velocity form at O(contacts) per sweep. Otherwise (or with a fem face
 *                  contact, whose triangle side spans three particles' blocks) one
 *                  column W⁻¹ H_kᵀ per contact row through stepper.solveConstrained (W⁻¹
 *                  with the joints held), and W_c dense; when the stepper offers W's block
 *                  LDLᵀ factors (fem bodies without joints: exactFactorization), W_c dense
 *                  from them instead, Yᵀ D⁻¹ Y with Y = L⁻¹ P Hᵀ swept sparsely
 *                  (ldlt-delassus.ts), and the impulse's Δa by one solve with them.
 *                  With joints, a contact whose normal row the joints nearly fix
 *                  (REDUNDANT_FRACTION) is taken out of the problem: no impulse, the
 *                  joints carry its load.
 *  solve           q = H v_free + e·u_n⁻ on the normal rows (the Newton impact law
 *                  u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0 folded into q), q_t = H_t v_free, and with
 *                  Coulomb friction the 3-D friction-contact problem (De Saxcé), without
 *                  friction the LCP on the normal rows; any of the nonsmooth solvers
 *                  (solvers/nonsmooth), warm-started from the previous step's impulses of
 *                  the contacts with the same key (world impulse re-expressed in the new
 *                  frame).
 *                  Sticking drift (not Siconos'): below.
 *  addAcceleration Δa = (1/h) W⁻¹ Hᵀ P (the impulse as a force P/h over the step).
 *  saveMemory      Siconos saveYandLambdaInMemory: impulses by key for the warm start,
 *                  the end-of-step local velocities (a fem face contact's reported gap).
 *  project         TimeSteppingProjectOnConstraints: positions onto g ≥ 0 in the kinetic
 *                  metric (projection.ts), on this step's detection carried to the new
 *                  pose (carried-detection.ts); the fem face contacts, detected afresh,
 *                  by a pass of their own.
 * Sticking drift (not Siconos'). Coulomb's law holds a sticking contact at the velocity
 * level with the lever arms of the step's start, u_t(x_k, v_{k+1}) = 0, and the positions
 * follow x_{k+1} = x_k ⊕ h((1−θ) v_k + θ v_{k+1}): the chord of the bodies' arcs, so at the
 * end pose the same velocity slides, u_t(x_{k+1}, v_{k+1}) = c = O(h) (ω² r h outward on a
 * turntable), and nothing brought the contact back: a box stuck by friction on a turntable
 * turning at ω crept outward at dr/dt ≈ ω² h r (0.30 to 0.405 m in 60 s at 1 rad/s and
 * 5 ms; off the table at 1/60 s or at 2 rad/s). So a contact that sticks (its impulse
 * strictly inside the cone, STICK_FRACTION, or its slip over the step, as the solver saw
 * it, below DRIFT_TOLERANCE: a manifold's contacts on the cone's rim while their body
 * sticks) carries its drift D (m, world, b relative to a, tangential) from step to step in
 * the memory: the θ-scheme's displacement at the start's lever arms plus the chord's, by
 * the trapezoid rule between the lever arms at both ends,
 *     D_{k+1} = D_k + h((1−θ) u_t(x_k, v_k) + (θ − ½) u_t(x_k, v_{k+1}))
 *                   + (h/2) u_t(x_{k+1}, v_{k+1}),
 * turned with side a over the step (R_a(t+h) R_a(t)ᵀ: the surfaces turn, a turntable's by
 * ωh), the first line taken at the step's end (saveMemory), the second at the next start's
 * detection (driftAt); the next step's friction law is asked for the velocity that takes
 * it back, u_t(x_{k+1}, v_{k+2}) = −D_{k+1}/h: q_t ← q_t + D_t/h (the solver's u_t = 0 is
 * then u_t + D_t/h = 0; a stabilisation of the tangential position as the projection holds
 * the normal gap). At θ = ½ then D_{k+1} = (D_k − D_{k−1})/2 + h c: roots of modulus 1/√2,
 * and D = h c at the steady state: the turntable's box keeps its radius to ω² r h² and is
 * held by m ω² r. The trapezoid leaves O(h³) a step along the motion, r (ωh)³/12, which
 * the contact's velocities do not see (the box's angle on the table moved by T ω³ h²/12
 * over T: −1.1e-2 rad in 60 s at 2 rad/s and 1/60 s), so while the bodies turn together
 * the drift takes the move of b's centre in a's frame from the positions (chordSlip) in
 * place of its trapezoid: the angle keeps within 1.5e-5 rad, no creep. A rolling contact
 * (a sphere on a plane: the lever arm −R n at both ends) has no drift, nor a resting one
 * (D at round-off, below DRIFT_TOLERANCE: left alone); a sliding contact carries none (its
 * slip is not taken back). Contacts with a triangle side (fem faces) keep none. A step
 * split at impacts or halved takes the drift back over the whole step, −D/max(h, H) with
 * H its length (takeBackTime), each piece its share.
 * Units: impulses N·s, local velocities m/s, gaps m.
 */
import {
  ACTIVATION_GAMMA,
  ACTIVATION_TOLERANCE,
  type OneStepProblem,
} from "../dynamics/one-step-problem";
import type { NewtonStepper, SchemeCoefficients } from "../dynamics/stepper";
import type { CollisionDetector } from "../geometry/collide";
import { extend, grow } from "../math/grow";
import { quatRotate, quatRotateInverse } from "../math/quat";
import { invertSmall } from "../math/small-dense";
import { type BodySystem, getVelocity, massSolve } from "../model/body-system";
import type { ContactMemory } from "../model/state-codec";
import type { BlockLdlt } from "../solvers/linear/block-ldlt";
import { createNonsmoothSolver } from "../solvers/nonsmooth";
import type { FactoredDelassus } from "../solvers/nonsmooth/factored";
import type {
  ContactDim,
  NonsmoothProblem,
  NonsmoothResult,
  NonsmoothSolver,
  NonsmoothSolverName,
} from "../solvers/nonsmooth/types";
import { iterationBudget, REST_FRACTION, restSweeps } from "./budget";
import { anchoredGap, CarriedDetection } from "./carried-detection";
import { blockOffsets, ContactSet, inverseMassBlocks } from "./contact-set";
import type { FemFaceContacts } from "./fem-faces";
import { ImpulseMemory } from "./impulse-memory";
import { KeyTable } from "./key-table";
import { LdltDelassus } from "./ldlt-delassus";
import { ManifoldImpulses } from "./manifold-impulses";
import {
  ContactProjection,
  ContactSolveError,
  type HeldContacts,
  HOLD_TOLERANCE,
  type ProjectedJoints,
  type ProjectionResult,
} from "./projection";

export { ContactSolveError };

import type { ContactReport } from "./report";
import type { PairParameters } from "./setup";

/**
 * LDLᵀ without pivoting of the dense symmetric m × m matrix W (row-major, copied into
 * `work`): false when a pivot falls below −1e-10 of W's largest diagonal entry, i.e. W has
 * a negative eigenvalue (Sylvester's law of inertia); pivots within that of zero (dependent
 * rows: a semidefinite W) are skipped with their column.
 */
export function positiveSemidefinite(W: Float64Array, m: number, work: Float64Array): boolean {
  let scale = 0;
  for (let i = 0; i < m; i++) scale = Math.max(scale, Math.abs(W[i * m + i]));
  if (!(scale > 0)) return scale === 0;
  const eps = 1e-10 * scale;
  work.set(W.subarray(0, m * m));
  for (let k = 0; k < m; k++) {
    const d = work[k * m + k];
    if (!(d >= -eps)) return false;
    if (d <= eps) continue;
    for (let i = k + 1; i < m; i++) {
      const l = work[i * m + k] / d;
      if (l === 0) continue;
      for (let j = k + 1; j <= i; j++) work[i * m + j] -= l * work[j * m + k];
    }
  }
  return true;
}

/**
 * A contact is redundant with the joints when its normal row keeps at most this fraction
 * of its kinetic-metric norm once the joints are held:
 *     W_c,nn ≤ δ · s n_iᵀ M⁻¹ n_i,    δ = REDUNDANT_FRACTION,
 * W_c,nn = s n_iᵀ W_G⁻¹ n_i with W_G⁻¹ the inverse with the joints held (for W = M it is
 * n_iᵀ M⁻¹ n_i · sin²α, α the angle in the M⁻¹ metric between the row n_i and the joints'
 * rows: δ = 1e-6 is α ≤ 1 mrad). The rigid model does not split a load between dependent
 * rows (the contact under a hinged end lying on the floor and the hinge's vertical row:
 * any split balances), and on a nearly dependent row the split it does fix acts through a
 * lever sin α times the contact's own. Two 0.4 m links hinged to the ground at the half
 * height (0.025 m) of one end and dropped onto a floor came to rest at 2 mrad from level,
 * the free end 0.8 mm up, held by the contact under the hinged end at 5.0·10⁴ N (the
 * hinge −5.0·10⁴ N) where the statically determinate load on that end is 4.9 N; a solve
 * from zero impulses found the same lock (7·10⁴ N), so no warm start carried it. Such a
 * row is taken as dependent (numerical rank by a relative threshold, the cut-off of a
 * pseudo-inverse: Golub & Van Loan, Matrix Computations, "numerical rank"), as dependent
 * joint rows get zero multipliers: the contact gets no impulse and the joints carry its
 * load, their statically determinate reaction. A contact is dropped only where a load
 * would take more than 1/√δ = 10³ times the force the same contact needs without the
 * joints; the position projection still acts on it.
 */
export const REDUNDANT_FRACTION = 1e-6;

/**
 * A contact sticks (carries its drift: file comment, "Sticking drift") when its friction
 * impulse is within this fraction of the cone's rim, |P_t| < (1 − 1e-9) μ P_n: the solvers
 * put a sliding contact's impulse on the rim (projection onto the cone, to rounding).
 */
export const STICK_FRACTION = 1 - 1e-9;

/**
 * The relative turn a step (rad) below which a sticking contact's drift takes its bodies'
 * chord (NonsmoothContact.chordSlip): above it (rolling) the arc b's centre makes in a's
 * frame would read as slip, ψ³ |y|/12 a step: below 1e-10 |y| here.
 */
const CHORD_TURN = 1e-3;

/**
 * chordSlip's move (m a step) below which it is round-off and left out (a resting stack's
 * contacts: 1e-17 m; the turntable's lag r (ωh)³/12 is 3e-9 m at 1 rad/s and 5 ms).
 */
const CHORD_ROUNDOFF = 1e-12;

/**
 * A sticking contact's drift is taken back once it exceeds this (m; file comment, "Sticking
 * drift"), and carried till then: a resting contact's, at round-off or at the solves'
 * residual (a box resting on a 0.4 rad slope: 1e-9 m a step), leaves the step as it was.
 * ACTIVATION_TOLERANCE, the normal gap's own: the turntable's chord is ω² r h²/2 = 3.8e-6 m
 * a step at 1 rad/s and 5 ms (r = 0.3 m), taken back each step.
 */
export const DRIFT_TOLERANCE = ACTIVATION_TOLERANCE;

/**
 * The chord's normal part (m) from which a free body's persistent pushing contact takes
 * the midpoint law (turningBodies): a hundredth of the activation band. A box rocking on an
 * edge at 2.5 rad/s (c = 0.15 m, h = 1/240 s) lifts its pivot ½ (hω)² c = 8e-6 m a step on
 * the start rows, past the band; a resting box (ω ≤ 1e-3 rad/s: 1e-12 m) keeps them.
 */
export const TURN_CHORD = 0.01 * ACTIVATION_TOLERANCE;

export interface NonsmoothContactSettings {
  solver: NonsmoothSolverName;
  /** Iterations per solve at most; null: the default budget for the step's contacts (budget.ts). */
  maxIterations: number | null;
  /** Residual at which the solve stops (residual.ts; m/s on the contacts that push). */
  tolerance: number;
}

/** Accumulated wall time (ms) by phase, and figures of the last step. */
export interface NonsmoothContactStats {
  broadMs: number;
  narrowMs: number;
  assemblyMs: number;
  solverMs: number;
  projectionMs: number;
  /** Contacts detected / active in the last step. */
  detected: number;
  active: number;
  iterations: number;
  residual: number;
  /** The last solve met the tolerance (true in a step without active contacts). */
  converged: boolean;
}

export class NonsmoothContact implements OneStepProblem {
  readonly set: ContactSet;
  readonly stats: NonsmoothContactStats = {
    broadMs: -0,
    narrowMs: -0,
    assemblyMs: -0,
    solverMs: -0,
    projectionMs: -0,
    detected: 0,
    active: 0,
    iterations: 0,
    residual: -0,
    converged: true,
  };
  /** Rows per contact of the current problem (3 with friction, else 1). */
  dim: ContactDim = 1;
  /** The position projection after the step (its settings: solver.projection*). */
  readonly projection: ContactProjection;
  /** The fem face contacts' detection (fem-faces.ts): fem–fem, and rigid shapes on fem faces. */
  faces: FemFaceContacts | null = null;
  /**
   * 1 by body index for the nodes of the fem bodies whose surfaces collide (fem-vertices.ts),
   * or null: their inelastic contacts close within the step (updateIndexSet, `closing`).
   */
  femNodes: Uint8Array | null = null;
  /**
   * 1 by body index for the bodies whose contacts Moreau–Jean's impact location may take
   * (integrators/impact-location.ts: no joint, motor or limit holds them), or null: none.
   * Their rigid contacts with restitution are active when the linear prediction closes their
   * gap within the step, g + h u_n⁻ ≤ ε_act (updateIndexSet, `closes`), where the others keep
   * Siconos' γ = ½. A body turning by more than `locatedTurn` (rad) within the step keeps
   * γ = ½ too (integrators/impact-events.ts, TURN: its impacts are the impact events', as
   * those of any turning body).
   */
  locatedBodies: Uint8Array | null = null;
  locatedTurn = 0;
  /**
   * Whether an active contact of a fem node strikes (u_n⁻ < 0 beyond the activation
   * tolerance over the step; updateIndexSet): Moreau–Jean takes such a step with backward
   * Euler's end positions (moreau-jean.ts stepOnce).
   */
  femImpact = false;
  /**
   * The bodies' accelerations at the step's start under the loads that move them as a whole
   * (gravity, springs, applied forces; not the fem bodies' elastic forces), M⁻¹ f(x_t, v_t)
   * (m/s², rad/s² per dof), or null: unknown (the integrator's; moreau-jean.ts). Asked only
   * when a fem node's contact is detected open and not closing on its velocity alone
   * (updateIndexSet): a node at rest just above a surface closes within the step by
   * the loads' h² a_n alone. `elastic`: of every force, the fem bodies' elastic forces
   * too (updateIndexSet's second band). Each kind has its own array, valid until the next
   * index set.
   */
  startAcceleration: ((elastic: boolean) => Float64Array) | null = null;

  /** The step's detection, reused by the projection. */
  private readonly detection: CarriedDetection;
  private solver: NonsmoothSolver;
  private readonly yOff: Int32Array;
  private readonly Y: Float64Array;
  private readonly n: number;
  /** Scratch of the diagonal-block inversions. */
  private readonly work = new Float64Array(36);
  // Per-contact work (grown on demand).
  private r: Float64Array = new Float64Array(0);
  /** 1 for a contact redundant with the joints (assemble; REDUNDANT_FRACTION), else 0. */
  private redundant: Uint8Array = new Uint8Array(0);
  /** How many contacts of the current operator are redundant (0 without joints). */
  private redundantCount = 0;
  /** s n_iᵀ M⁻¹ n_i of each contact's normal row, the joints free (assemble). */
  private freeNorm: Float64Array = new Float64Array(0);
  /** Scratch of the Delassus operator's definiteness test (assemble). */
  private definiteWork: Float64Array = new Float64Array(0);
  /** The last step's impulses as reported (saveMemory; local, dim per contact). */
  private reported: Float64Array = new Float64Array(0);
  /** The continuation's converged impulses, kept while polishing (see solve). */
  private rMet: Float64Array = new Float64Array(0);
  private q: Float64Array = new Float64Array(0);
  private mu: Float64Array = new Float64Array(0);
  /** Normal relative velocities u_n⁻ at t and u_n⁺ at the end of the step (one per contact). */
  private uMinus: Float64Array = new Float64Array(0);
  private uPlus: Float64Array = new Float64Array(0);
  /** The fem–fem contacts' reported end-of-step gaps (m, saveMemory). */
  private endGap: Float64Array = new Float64Array(0);
  /**
   * g/h (m/s) of each contact activated as closing within the step (updateIndexSet), added
   * to its q_n: the law g + h u_n⁺ ≥ 0 ⊥ P_n ≥ 0; 0 for the others. closingCount: how many.
   */
  private closing: Float64Array = new Float64Array(0);
  private closingCount = 0;
  /**
   * The detector's contacts' core points in their bodies' frames and radii at the step's
   * start (8 per contact, CarriedDetection.anchor): their gaps at the pose reported
   * (poseGap).
   */
  private anchors: Float64Array = new Float64Array(0);
  /** Each contact's drift D at the step's start (m, world, tangential; driftAt). */
  private drift: Float64Array = new Float64Array(0);
  /**
   * D_t/max(h, takeBackTime) of each contact whose drift is taken back (m/s, along t1 and
   * t2), added to q_t.
   */
  private shift: Float64Array = new Float64Array(0);
  /**
   * The time (s) over which a sticking contact's drift is taken back at the least: the
   * whole step's length, which Moreau–Jean sets before a step it may split at impacts or
   * halve (moreau-jean.ts `step`); 0 elsewhere (each step's own h). Taken back over a piece
   * alone, −D/h_piece asked for a velocity the cone cannot give: a box rocking on an edge
   * where friction holds the pivot (μ = 1, 0.3 × 0.2 m section, e = 1, h = 1/240 s), each
   * flat landing's step split at the impact with a last piece of 2.1e-5 s, asked 0.7 m/s
   * of the pivot for its 1.5e-5 m drift there: the impulse on the cone's rim, the contact
   * counted as sliding and its drift forgotten, the pivot kicked by 7e-6 m/s the next
   * steps. It crept 1.5e-5 m a landing, 0.98 mm in 10 s (file comment, "Sticking drift";
   * test/engine/contact/rocking-pivot.test.ts).
   */
  takeBackTime = 0;
  /** The bodies' orientations at the step's start (updateIndexSet), for the drift's turn. */
  private readonly startQuat: Float64Array;
  /**
   * The bodies' positions, velocities and angular velocities at the step's start
   * (updateIndexSet), for the drift's chord (chordSlip).
   */
  private readonly startPos: Float64Array;
  private readonly startVel: Float64Array;
  private readonly startOmega: Float64Array;
  /** Scratch of a drift carried to the memory (saveMemory). */
  private readonly carried = new Float64Array(3);
  /** Scratch of a contact's u_t(x_k, v_{k+1}) (m/s, t1 and t2; saveMemory). */
  private readonly uEnd = new Float64Array(2);
  /** u_t(x_k, v_k) of each contact carrying a drift (m/s, t1 and t2; else 0; driftAt). */
  private uStart: Float64Array = new Float64Array(0);
  /** How many contacts of the set have a drift taken back (0: q as it was). */
  private shiftedCount = 0;
  /** impulseWork's local velocities (dim per contact). */
  private uWork: Float64Array = new Float64Array(0);
  /** endVelocityImpulseWork's local end velocities (dim per contact). */
  private uWorkEnd: Float64Array = new Float64Array(0);
  /** endVelocityImpulseWork's impact share P_I of each normal impulse (N·s). */
  private impact: Float64Array = new Float64Array(0);
  /** endVelocityImpulseWork's H_Sᵀ P_S (then v⁺) and δ (then v_t + ½ δ), n each. */
  private readonly workScratch: { impulse: Float64Array; delta: Float64Array };
  /**
   * World impulses of the last step's active contacts as reported (N·s, on body b): the
   * least-norm share within each resting manifold (saveMemory).
   */
  private impulse: Float64Array = new Float64Array(0);
  // Dense path.
  private cols: Float64Array = new Float64Array(0);
  private Wd: Float64Array = new Float64Array(0);
  private readonly rhs: Float64Array;
  /** Dense path with W's factorization (fem bodies): W⁻¹ from it, no cols. */
  private ldlt: BlockLdlt | null = null;
  private readonly ldltDelassus = new LdltDelassus();
  /** W⁻¹ Hᵀ P of addAcceleration on that path (n). */
  private readonly response: Float64Array;
  // Operator of the current step: the factored one (fast path) or the dense Wd.
  private W: Float64Array | FactoredDelassus = new Float64Array(0);
  private factored: FactoredDelassus | null = null;
  private scale = 1;
  private readonly memory: ImpulseMemory;
  /** The warm-start memory held at a Simulation step's start (holdMemory). */
  private readonly heldMemory: ImpulseMemory;
  /** The reported share among a manifold's points (manifold-impulses.ts). */
  private readonly manifolds = new ManifoldImpulses();
  private solverName: NonsmoothSolverName;
  private lastH = 0;

  constructor(
    readonly sys: BodySystem,
    readonly detector: CollisionDetector,
    readonly params: PairParameters,
    /** contact.margin of the model (m). */
    public margin: number,
    public settings: NonsmoothContactSettings,
    /** Joints or motors exist: the Delassus operator goes through solveConstrained. */
    readonly hasJoints: boolean,
  ) {
    this.set = new ContactSet(sys);
    this.projection = new ContactProjection(sys);
    this.detection = new CarriedDetection(sys, detector);
    this.memory = new ImpulseMemory(sys.numBodies);
    this.startQuat = new Float64Array(4 * sys.numBodies);
    this.startPos = new Float64Array(3 * sys.numBodies);
    this.startVel = new Float64Array(3 * sys.numBodies);
    this.startOmega = new Float64Array(3 * sys.numBodies);
    this.heldMemory = new ImpulseMemory(sys.numBodies);
    this.solverName = settings.solver;
    this.solver = createNonsmoothSolver(settings.solver);
    const { yOff, size } = blockOffsets(sys);
    this.yOff = yOff;
    this.Y = new Float64Array(size);
    this.n = sys.numDofs;
    this.rhs = new Float64Array(sys.numDofs);
    this.response = new Float64Array(sys.numDofs);
    this.workScratch = {
      impulse: new Float64Array(sys.numDofs),
      delta: new Float64Array(sys.numDofs),
    };
    this.checkSolver();
  }

  /** Lemke solves the frictionless LCP only (solvers/nonsmooth/lemke.ts). */
  private checkSolver(solver = this.settings.solver): void {
    if (solver === "lemke" && this.params.anyFriction())
      throw new Error(
        'contact solver "lemke" solves frictionless contact only; with friction use nncg, pgs, pjacobi, apgd or barzilai-borwein',
      );
  }

  /** Applies new solver settings (solver name, iterations, tolerance); checked first. */
  setSettings(settings: NonsmoothContactSettings): void {
    this.checkSolver(settings.solver);
    this.settings = settings;
    if (settings.solver !== this.solverName) {
      this.solverName = settings.solver;
      this.solver = createNonsmoothSolver(settings.solver);
    }
  }

  /** Re-checks the solver against changed friction parameters (throws when it cannot). */
  parametersChanged(): void {
    this.checkSolver();
  }

  /** Forgets warm-start memory and the last step's contacts (reset, external changes). */
  clear(): void {
    this.endSplit();
    this.memory.clear();
    this.projection.clear();
    this.set.reset(0);
    this.detection.clear();
  }

  get activeCount(): number {
    return this.set.count;
  }

  /**
   * The contacts touching or penetrating at the current state (gap ≤ ACTIVATION_TOLERANCE),
   * detected afresh with the model's margin: what an analysis of this state must not
   * ignore, where activeCount is the last step's set (empty before the first step and
   * after a reset: a resting stack analysed then was assembled as falling freely). The
   * next step detects again.
   */
  touchingCount(): number {
    this.detector.margin = Math.max(this.margin, ACTIVATION_TOLERANCE);
    this.detection.detect();
    let n = 0;
    const { buffer } = this.detection;
    for (let k = 0; k < buffer.count; k++) if (buffer.gap[k] <= ACTIVATION_TOLERANCE) n++;
    if (this.faces !== null) {
      this.faces.detect(this.detector.margin);
      const faces = this.faces.buffer;
      for (let k = 0; k < faces.count; k++) if (faces.gap[k] <= ACTIVATION_TOLERANCE) n++;
    }
    return n;
  }

  /**
   * The total normal force of the last step (N): Σ P_n / h over its contacts (a split
   * step's totals: beginSplit), the sum of the normalForce values states() reports; 0
   * before the first step. Allocates nothing.
   */
  get totalNormalForce(): number {
    if (this.splitStep > 0) {
      let pn = 0;
      for (let j = 0; j < this.keptCount; j++) pn += this.keptNormal(j);
      return pn / this.splitStep;
    }
    if (this.lastH === 0) return 0;
    const p = this.impulse;
    const f = this.set.frame;
    let pn = 0;
    for (let i = 0; i < this.set.count; i++)
      pn += p[3 * i] * f[9 * i] + p[3 * i + 1] * f[9 * i + 1] + p[3 * i + 2] * f[9 * i + 2];
    return pn / this.lastH;
  }

  /**
   * Whether contact i of the set (`fem`: touching a fem node) is one the impact location may
   * take, activated when its gap closes within the step (locatedBodies): rigid, with
   * restitution, no body of it held by a joint. Siconos' γ = ½ left out the contacts that
   * close in the step's second half (τ ∈ (h/2, h]): the step carried them past the surface
   * and the projection lifted them, which the next step's location undid, but not where the
   * impact was then met at its instant (impact-events.ts: the body turning faster by then),
   * whose Newton's law kept the lift's potential energy and the speed gained past the
   * surface. A box rocking on its edges at e = 1, μ = 0.3 (0.2 rad/s, 2.2e-4 J above rest)
   * was lifted 180 times in 10 s at 5 ms, its T + V up to 9.7e-4 J above its start; the
   * long-run tumbling box, come to rest flat, so rocked from 14.6 s on, up to 5.2e-4 J a step.
   */
  private closes(i: number, fem: boolean, h: number): boolean {
    const { set } = this;
    if (fem || set.triangle[i] !== 0) return false;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    if (!this.locatable(a, h) || !this.locatable(b, h)) return false;
    return this.params.restitutionOf(a, b) > 0;
  }

  /** Body b (< 0: the ground) in locatedBodies, turning by at most locatedTurn within h. */
  private locatable(b: number, h: number): boolean {
    if (b < 0) return true;
    if ((this.locatedBodies as Uint8Array)[b] === 0) return false;
    const w = this.sys.omega;
    const turn = h * Math.hypot(w[3 * b], w[3 * b + 1], w[3 * b + 2]);
    return !(turn > this.locatedTurn);
  }

  /** Whether contact i of the set has a fem node on either side (a triangle's first node). */
  private touchesFem(i: number): boolean {
    const { femNodes, set } = this;
    if (femNodes === null) return false;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    return (a >= 0 && femNodes[a] === 1) || (b >= 0 && femNodes[b] === 1);
  }

  /** Whether contact i of the set has a moving body that is not a fem node on either side. */
  private touchesRigid(i: number): boolean {
    const { femNodes, set, sys } = this;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    const rigid = (x: number) => x >= 0 && sys.dofOffset[x] >= 0 && femNodes?.[x] !== 1;
    return rigid(a) || rigid(b);
  }

  /** The normal impulse of kept contact j (N·s: its world impulse on its normal). */
  private keptNormal(j: number): number {
    const o = 10 * j;
    const g = this.kept;
    return g[o + 6] * g[o + 3] + g[o + 7] * g[o + 4] + g[o + 8] * g[o + 5];
  }

  /**
   * Siconos updateIndexSets at (x_t, v_t): detection, then the active contacts (predicted
   * gap ≤ ε_act) into `set` with their restitution, friction, u⁻ and warm-start impulses.
   * `reach` (m, 0 for a step) widens the band to g + γ h u_n⁻ ≤ ε_act + reach, and the
   * detection's margin with it: integrators/impact-events.ts' prediction, whose contacts
   * may close within h under their accelerations, ½ a h² beyond the straight line.
   * Returns the number of active contacts.
   */
  updateIndexSet(h: number, gamma = ACTIVATION_GAMMA, reach = 0): number {
    const { sys, set } = this;
    const { buffer, rho } = this.detection;
    // Bound on relative point speeds, for the detection margin of this step.
    let vmax = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0) continue;
      const vx = sys.vel[3 * b];
      const vy = sys.vel[3 * b + 1];
      const vz = sys.vel[3 * b + 2];
      const wx = sys.omega[3 * b];
      const wy = sys.omega[3 * b + 1];
      const wz = sys.omega[3 * b + 2];
      const v = Math.sqrt(vx * vx + vy * vy + vz * vz);
      const w = Math.sqrt(wx * wx + wy * wy + wz * wz);
      vmax = Math.max(vmax, v + w * rho[b]);
    }
    // (the fem nodes' closing band and the located contacts', g + h u_n⁻ ≤ ε_act, reach twice
    // as far)
    const closing = gamma < 1 && this.locatedBodies !== null && this.params.anyRestitution();
    const span = this.femNodes !== null || closing ? Math.max(gamma, 1) : gamma;
    this.detector.margin = Math.max(
      this.margin,
      2 * span * h * vmax * 1.01 + ACTIVATION_TOLERANCE + reach,
    );
    this.detection.detect();
    const ds = this.detector.stats;
    this.stats.broadMs += ds.broadMs;
    this.stats.narrowMs += ds.narrowMs;
    const faces = this.faces;
    let fc = 0;
    if (faces !== null) {
      const t0 = performance.now();
      faces.detect(this.detector.margin);
      fc = faces.buffer.count;
      this.stats.narrowMs += performance.now() - t0;
    }
    this.stats.detected = buffer.count + fc;
    this.stats.iterations = 0;
    this.stats.residual = 0;
    this.stats.converged = true;

    // Active index set: each detected contact is pushed (frame, Jacobian rows) and kept
    // when its predicted gap g + γ h u_n⁻ is within the activation tolerance.
    // (the fem–fem contacts after the detector's, with their triangle sides)
    const nb = buffer.count;
    set.reset(nb + fc);
    this.uMinus = grow(this.uMinus, nb + fc);
    this.closing = grow(this.closing, nb + fc);
    this.anchors = grow(this.anchors, 8 * nb);
    this.closingCount = 0;
    this.femImpact = false;
    let acceleration: Float64Array | null = null;
    let elastic: Float64Array | null = null;
    for (let k = 0; k < nb + fc; k++) {
      const src = k < nb ? buffer : (faces as FemFaceContacts).buffer;
      const j = k < nb ? k : k - nb;
      const i = set.push(src.bodyA[j], src.bodyB[j], src.key, src.normal, src.point, src.gap, j);
      if (k >= nb) {
        const f = faces as FemFaceContacts;
        set.setTriangle(i, f.nodes, f.weights, j);
      } else this.detection.anchor(j, this.anchors, 8 * i);
      set.normalVelocities(this.uMinus, i, i + 1);
      const gap = set.gap[i];
      const u = this.uMinus[i];
      this.closing[i] = 0;
      const fem = this.touchesFem(i);
      if (this.deferredCount > 0 && this.isDeferred(set.key[i]) && gap > 0) set.count--;
      else if (
        gap + (closing && this.closes(i, fem, h) ? 1 : gamma) * h * u >
        ACTIVATION_TOLERANCE + reach
      ) {
        // A fem node's inelastic contact that closes within the step (g + h u_n⁻ ≤ ε_act,
        // the free motion's end gap to first order) is active with the law
        // g + h u_n⁺ ≥ 0 ⊥ P_n ≥ 0 (u_n⁺ ≥ −g/h: it may close, not pass): left out, the
        // step carried the node or the body striking it up to h |u_n⁻|/2 past the
        // surface, and the projection (kinetic metric) pushed the node alone back, into
        // its own elements: a 2 kg box landing at 1.96 m/s on a 0.2 m stvk block
        // (E = 1e7 Pa, h = 10 ms) gained 20.6 J of elastic energy so, booked as the
        // contacts' work. Rigid contacts keep Siconos' γ (the projection lifts a rigid body
        // whole: m g times the lift).
        // The free end gap takes the loads' share too, g + h u_n⁻ + h² a_n (backward
        // Euler's end x_t + h (v_t + h a), the end an impact step takes: moreau-jean.ts):
        // a block at rest 1e-6 m above the floor under gravity (h = 20 ms) was carried
        // g h²/2 = 2 mm into it by the smooth step, the projection pushed its bottom nodes
        // alone back into its elements: 3.9 J → 13.6 J in that step, up to 19.8 J more a
        // step after (fem-landing-rest.test.ts).
        // A second band, for the contacts that neither the velocity nor those loads close:
        // closed by the elastic forces too, g + h u_n⁻ + h² a_n ≤ ε_act with a_n of every
        // force (the start's, taken twice as far as the smooth step's ½ h² a_n carries), the
        // same law without the impact step. A face ringing up to a ball resting 8.6 μm
        // above it (their relative a_n under gravity 0) went through it within the step and
        // the projection pushed them apart: +2.4 mJ of E, booked as the contact's work (a
        // 2 kg ball on a one-cell 0.6 m stvk block, h = 5 ms: fem-rigid-faces.test.ts). At
        // θ = ½ the law keeps the end gap g + h (u_n⁻ + u_n⁺)/2 ≥ (g + h u_n⁻)/2 > 0 where
        // the velocity alone does not close it, and takes no impulse unless the free motion
        // closes it.
        let end = gap + h * u;
        let impact = true;
        if (fem && gap > 0 && end > ACTIVATION_TOLERANCE && this.startAcceleration !== null) {
          acceleration ??= this.startAcceleration(false);
          const free = end;
          end = free + h * h * set.rowTimes(i, 0, acceleration);
          // (not separating faster than g/h: the law's impulse then does no positive work at
          // θ = ½, P (u_n⁻ + u_n⁺)/2 = P (u_n⁻ − g/h)/2 ≤ 0; a node swinging away from the
          // floor and back within the step was held at −g/h, its start's speed away counted
          // as the impulse's work: stvk-compression 100/s made 220 J → 6502 J)
          if (end > ACTIVATION_TOLERANCE && u <= gap / h && this.touchesRigid(i)) {
            elastic ??= this.startAcceleration(true);
            end = free + h * h * set.rowTimes(i, 0, elastic);
            impact = false;
          }
        }
        if (fem && gap > 0 && end <= ACTIVATION_TOLERANCE) {
          this.closing[i] = gap / h;
          this.closingCount++;
          if (impact) this.femImpact = true;
        } else set.count--;
      } else if (fem && u < -ACTIVATION_TOLERANCE / h) this.femImpact = true;
    }
    const m = set.count;
    for (let i = 0; i < m; i++) {
      // A fem node's contacts (its vertices', a rigid shape's on its faces) take
      // restitution 0 whatever contact.restitution says (schemas/model.ts refuses a pair
      // naming a fem body with e > 0): Newton's law node by node sends the struck nodes
      // back at e |u_n⁻| while the body above still moves in, and the end positions squeeze
      // the layer between by h (1 + e) |u_n⁻|: a 4 kg stvk block landing at 3.13 m/s with
      // e = 0.5 went from 23.5 J to 36.6 J in its landing step, then diverged. The body's
      // rebound comes from its elasticity (README, Deformable bodies).
      set.restitution[i] = this.touchesFem(i)
        ? 0
        : this.params.restitutionOf(set.bodyA[i], set.bodyB[i]);
      set.friction[i] = this.params.frictionOf(set.bodyA[i], set.bodyB[i]);
    }
    let friction = false;
    for (let i = 0; i < m; i++) if (set.friction[i] > 0) friction = true;
    this.dim = friction ? 3 : 1;
    this.stats.active = m;
    if (this.dim === 3) {
      this.startQuat.set(sys.quat);
      this.startPos.set(sys.pos);
      this.startVel.set(sys.vel);
      this.startOmega.set(sys.omega);
    }
    this.warmStart(h);
    return m;
  }

  /**
   * Keys of the open contacts the next step must not activate (integrators/impact-events.ts:
   * a piece of a step that ends at their impact, which the piece would otherwise take
   * within itself, first order, when their gap is within the activation tolerance), and
   * their count; the caller clears them after that step.
   */
  private deferred: Float64Array = new Float64Array(0);
  private deferredCount = 0;

  /** The open contact with this key is not activated until clearDeferred (above). */
  defer(key: number): void {
    this.deferred = grow(this.deferred, this.deferredCount + 1);
    this.deferred[this.deferredCount++] = key;
  }

  clearDeferred(): void {
    this.deferredCount = 0;
  }

  private isDeferred(key: number): boolean {
    for (let j = 0; j < this.deferredCount; j++) if (this.deferred[j] === key) return true;
    return false;
  }

  /**
   * r ← the remembered impulses of contacts with known keys, in the new local frames; with
   * friction, the drift of those remembered as sticking (driftAt).
   */
  private warmStart(h: number): void {
    const { set, dim } = this;
    const nc = set.count;
    this.shiftedCount = 0;
    if (dim === 3) {
      this.drift = grow(this.drift, 3 * nc);
      this.shift = grow(this.shift, 2 * nc);
      this.uStart = grow(this.uStart, 2 * nc);
    }
    this.r = grow(this.r, 3 * nc);
    this.q = grow(this.q, 3 * nc);
    this.mu = grow(this.mu, nc);
    this.impulse = grow(this.impulse, 3 * nc);
    this.uPlus = grow(this.uPlus, nc);
    const f = set.frame;
    for (let i = 0; i < nc; i++) {
      this.mu[i] = set.friction[i];
      const slot = this.memory.find(set.key[i], set.bodyA[i], set.bodyB[i], set.point, i);
      if (dim === 3) this.driftAt(i, slot, h);
      for (let k = 0; k < dim; k++) this.r[dim * i + k] = 0;
      if (slot < 0) continue;
      const remembered = this.memory.impulse;
      const px = remembered[3 * slot];
      const py = remembered[3 * slot + 1];
      const pz = remembered[3 * slot + 2];
      for (let k = 0; k < dim; k++) {
        const o = 9 * i + 3 * k;
        this.r[dim * i + k] = f[o] * px + f[o + 1] * py + f[o + 2] * pz;
      }
      if (this.r[dim * i] < 0) {
        for (let k = 0; k < dim; k++) this.r[dim * i + k] = 0;
      } else if (dim === 3) {
        // Keep the warm start inside the (possibly changed) friction cone.
        const rt1 = this.r[3 * i + 1];
        const rt2 = this.r[3 * i + 2];
        const t = Math.sqrt(rt1 * rt1 + rt2 * rt2);
        const lim = this.mu[i] * this.r[3 * i];
        if (t > lim) {
          const s = t > 0 ? lim / t : 0;
          this.r[3 * i + 1] *= s;
          this.r[3 * i + 2] *= s;
        }
      }
    }
  }

  /**
   * Contact i's drift at the step's start (file comment, "Sticking drift"): the slip
   * remembered in `slot` (none: D = 0), D ← its tangential part + (h_k/2) u_t(x_k, v_k)
   * (the local tangential velocity at the new detection's lever arms, kept as uStart),
   * and shift ← (t1·D, t2·D)/max(h, takeBackTime) when |D| > DRIFT_TOLERANCE.
   */
  private driftAt(i: number, slot: number, h: number): void {
    const { set } = this;
    const f = set.frame;
    const o = 9 * i;
    let dx = 0;
    let dy = 0;
    let dz = 0;
    const memory = this.memory;
    if (slot >= 0 && set.triangle[i] === 0 && memory.stuck(slot)) {
      const m = memory.slip;
      const s = 4 * slot;
      const dn = m[s] * f[o] + m[s + 1] * f[o + 1] + m[s + 2] * f[o + 2];
      set.velocityRows(this.uStart, 2 * i, i, 1, 2);
      const w1 = m[s + 3] * this.uStart[2 * i];
      const w2 = m[s + 3] * this.uStart[2 * i + 1];
      dx = m[s] - dn * f[o] + w1 * f[o + 3] + w2 * f[o + 6];
      dy = m[s + 1] - dn * f[o + 1] + w1 * f[o + 4] + w2 * f[o + 7];
      dz = m[s + 2] - dn * f[o + 2] + w1 * f[o + 5] + w2 * f[o + 8];
    } else {
      this.uStart[2 * i] = 0;
      this.uStart[2 * i + 1] = 0;
    }
    this.drift[3 * i] = dx;
    this.drift[3 * i + 1] = dy;
    this.drift[3 * i + 2] = dz;
    const acted = dx * dx + dy * dy + dz * dz > DRIFT_TOLERANCE * DRIFT_TOLERANCE;
    if (acted) this.shiftedCount++;
    const w = acted ? 1 / Math.max(h, this.takeBackTime) : 0;
    this.shift[2 * i] = w * (dx * f[o + 3] + dy * f[o + 4] + dz * f[o + 5]);
    this.shift[2 * i + 1] = w * (dx * f[o + 6] + dy * f[o + 7] + dz * f[o + 8]);
  }

  /** True when the fast block-diagonal path applies (see the file comment). */
  private blockDiagonal(stepper: NewtonStepper): boolean {
    return !this.hasJoints && stepper.matrix.isBlockDiagonal() && !this.set.hasTriangles();
  }

  /**
   * Siconos prepareNewtonIteration / OneStepNSProblem::preCompute: the Delassus operator
   * W_c = (c_v/h) H W⁻¹ Hᵀ for the stepper's iteration matrix at its current state.
   */
  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void {
    const t0 = performance.now();
    const { set, dim } = this;
    this.scale = c.cv / h;
    this.redundantCount = 0;
    if (this.blockDiagonal(stepper)) {
      const massOnly = stepper.usesMassOnly(c);
      if (massOnly) inverseMassBlocks(this.sys, this.Y, this.yOff, 1 / (1 + c.cv * c.rayleighMass));
      else {
        stepper.assembleIterationMatrix(c);
        const M = stepper.matrix;
        for (let k = 0; k < this.sys.blockSizes.length; k++) {
          const w = this.sys.blockSizes[k];
          if (!invertSmall(this.Y, this.yOff[k], M.values, M.offsetOf(k, k), w, this.work))
            throw new Error("contact: singular diagonal block of the iteration matrix");
        }
      }
      set.computeResponse(this.Y, this.yOff, dim, massOnly);
      this.factored = set.delassus(dim, this.scale);
      this.W = this.factored;
    } else {
      this.factored = null;
      const m = set.count * dim;
      const n = this.n;
      this.Wd = grow(this.Wd, m * m);
      this.W = this.Wd;
      // W factored (fem bodies, no joints): H W⁻¹ Hᵀ from the factors, sparse rows
      this.ldlt = stepper.exactFactorization?.(c, m) ?? null;
      if (this.ldlt !== null) {
        this.ldltDelassus.build(this.ldlt.factors(), set, dim, this.scale, this.rhs, this.Wd);
        // W indefinite (a fem body's exact tangent under strong compression: a 0.2 m soft
        // block hitting a floor at 10 m/s, h = 5 ms, had a Delassus eigenvalue of −398
        // against +1.3 a step before): the contact problem is then not monotone, and every
        // solver diverged on it or "converged" to an energy gain of 1e4 (pjacobi); refused,
        // so that the step is redone in halves
        if (!this.ldlt.positiveDefinite) {
          this.definiteWork = grow(this.definiteWork, m * m);
          if (!positiveSemidefinite(this.Wd, m, this.definiteWork)) {
            this.stats.assemblyMs += performance.now() - t0;
            throw new ContactSolveError(
              "contact: the Delassus operator H W⁻¹ Hᵀ is indefinite (the step's iteration matrix W is not positive definite)",
            );
          }
        }
      } else {
        this.cols = grow(this.cols, m * n);
        const col = this.cols;
        // with joints, each normal row's norm with the joints free, for REDUNDANT_FRACTION:
        // s n_iᵀ M⁻¹ n_i/(1 + c_v r_M), the mass damping's share of W as in the fast path
        this.freeNorm = grow(this.freeNorm, set.count);
        const free = this.freeNorm;
        const massScale = this.scale / (1 + c.cv * c.rayleighMass);
        for (let p = 0; p < m; p++) {
          const i = Math.floor(p / dim);
          const k = p - i * dim;
          this.rhs.fill(0);
          set.addRowTranspose(i, k, 1, this.rhs);
          const out = col.subarray(p * n, p * n + n);
          if (this.hasJoints && k === 0) {
            massSolve(this.sys, this.rhs, this.response);
            free[i] = massScale * set.rowTimes(i, 0, this.response);
          }
          stepper.solveConstrained(c, this.rhs, out);
        }
        for (let p = 0; p < m; p++) {
          const i = Math.floor(p / dim);
          const k = p - i * dim;
          for (let qq = 0; qq < m; qq++) {
            const out = col.subarray(qq * n, qq * n + n);
            this.Wd[p * m + qq] = this.scale * set.rowTimes(i, k, out);
          }
        }
        if (this.hasJoints) this.dropRedundant(m);
      }
    }
    this.stats.assemblyMs += performance.now() - t0;
  }

  /**
   * Marks the contacts redundant with the joints (REDUNDANT_FRACTION) and takes them out of
   * the problem: their rows and columns of the dense W_c are zeroed (W_c stays positive
   * semidefinite) and solve sets their impulses and q to 0, so that no solver moves them
   * (their u = W r + q is 0 whatever the other impulses), and the joints carry the load.
   * Their friction goes with their normal impulse (Coulomb: no normal force, no friction).
   */
  private dropRedundant(m: number): void {
    const { dim, Wd } = this;
    const nc = this.set.count;
    this.redundant = grow(this.redundant, nc);
    for (let i = 0; i < nc; i++) {
      const p = dim * i;
      const isRedundant = Wd[p * m + p] <= REDUNDANT_FRACTION * this.freeNorm[i];
      this.redundant[i] = isRedundant ? 1 : 0;
      if (!isRedundant) continue;
      this.redundantCount++;
      for (let k = 0; k < dim; k++)
        for (let j = 0; j < m; j++) {
          Wd[(p + k) * m + j] = 0;
          Wd[j * m + p + k] = 0;
        }
    }
  }

  /**
   * Siconos computeOneStepNSProblem: q from the free generalized velocity vFree, solve in
   * place on the warm-started impulses. Throws when the solver diverged (NaN).
   * continued = R > 0 (OneStepProblem.solve): what R calls on this same problem would do,
   * without their q and the integrator's work between them: up to R solves of the budget,
   * each from the last one's impulses, until one meets the tolerance (after j); the R − j
   * calls left would each be one sweep (a warm start that meets the tolerance passes the
   * first check), and run as one solve of R − j sweeps past the tolerance (polish: what
   * the cylinder-on-its-rim tests' Σ f_n = m g to 1e-6 needs), kept only if it still
   * meets the tolerance. continued = 0 at the default budget (maxIterations null): a solve
   * that met the tolerance above REST_FRACTION of it goes on toward that for restSweeps
   * more sweeps (budget.ts: what settles a column of boxes), kept on the same condition.
   */
  solve(vFree: Float64Array, continued = 0): NonsmoothResult {
    const t0 = performance.now();
    const { set, dim } = this;
    const nc = set.count;
    set.localVelocity(vFree, dim, this.q);
    for (let i = 0; i < nc; i++) this.q[dim * i] += set.restitution[i] * this.uMinus[i];
    if (this.closingCount > 0) for (let i = 0; i < nc; i++) this.q[dim * i] += this.closing[i];
    // the touched groups' midpoint law, asked of the end pose's velocity (lawAtStart)
    if (this.shiftNormals)
      for (let i = 0; i < nc; i++) if (this.turned[i] === 1) this.q[dim * i] += this.normalShift[i];
    // the sticking contacts' drift back over the step, u_t⁺ = −D_t/h (file comment)
    if (this.shiftedCount > 0)
      for (let i = 0; i < nc; i++) {
        this.q[3 * i + 1] += this.shift[2 * i];
        this.q[3 * i + 2] += this.shift[2 * i + 1];
      }
    if (this.redundantCount > 0)
      for (let i = 0; i < nc; i++) {
        if (this.redundant[i] === 0) continue;
        // out of the problem (dropRedundant): no impulse, whatever the warm start carried,
        // and q = 0, so that its local velocity u = W r + q stays 0 whatever the others'
        // impulses: no solver's step or projection onto its cone moves r off 0 (with q_t ≠ 0
        // a projected gradient step would put it on the cone's rim, an impulse the zeroed
        // W does not see), and no residual counts it
        for (let k = 0; k < dim; k++) {
          this.r[dim * i + k] = 0;
          this.q[dim * i + k] = 0;
        }
      }
    const problem: NonsmoothProblem = {
      contacts: nc,
      contactDim: dim,
      W: this.W,
      q: this.q,
      mu: dim === 3 ? this.mu : undefined,
    };
    const options = {
      maxIterations: iterationBudget(this.settings.maxIterations, this.solverName, nc),
      tolerance: this.settings.tolerance,
      warmStart: true,
    };
    let res = this.solver.solve(problem, this.r, options);
    let calls = 1;
    let swept = res.iterations;
    for (; calls < continued && !res.converged; calls++) {
      res = this.solver.solve(problem, this.r, options);
      swept += res.iterations;
    }
    if (calls < continued) {
      // The polishing sweeps are plain PGS (no momentum): where NNCG met the tolerance on
      // nearly parallel contacts (a hull vertex on several terrain triangles), they resume
      // PGS's slow transfer of load between them and can end a little above it (H-100 at
      // the defaults, 600 steps: 3 of 567 polishing solves, at 1.00–1.10 × the tolerance
      // after 19–22 sweeps). Then the iterate that met it is returned: never a worse one.
      res = this.solvePast(problem, res, continued - calls, 0, true);
      swept += res.iterations;
    } else if (continued === 0 && res.converged && this.settings.maxIterations === null) {
      // the default budget's sweeps past the tolerance (budget.ts, restSweeps)
      const target = REST_FRACTION * options.tolerance;
      const sweeps = restSweeps(this.solverName, nc);
      if (sweeps > 0 && res.residual > target) {
        res = this.solvePast(problem, res, sweeps, target, false);
        swept += res.iterations;
      }
    }
    res.iterations = swept;
    this.stats.solverMs += performance.now() - t0;
    this.stats.iterations = res.iterations;
    this.stats.residual = res.residual;
    this.stats.converged = res.converged;
    // Siconos CheckSolverOutput: a non-converged solve keeps its last iterate (reported in
    // the step's residual); a NaN is an error.
    if (res.status === "diverged" || !Number.isFinite(res.residual))
      throw new ContactSolveError(
        `contact solver ${this.solverName} diverged: ${res.message ?? "NaN"}`,
      );
    return res;
  }

  /**
   * Continues a solve that met settings.tolerance (`met`) for at most `sweeps` sweeps
   * toward `target` (polish: plain PGS sweeps, NonsmoothOptions.polish), keeping the
   * result only if it still meets settings.tolerance, else the iterate that met it with
   * the residual that solve measured. Reported as converged, with the sweeps it made.
   */
  private solvePast(
    problem: NonsmoothProblem,
    met: NonsmoothResult,
    sweeps: number,
    target: number,
    polish: boolean,
  ): NonsmoothResult {
    const m = this.set.count * this.dim;
    this.rMet = grow(this.rMet, m);
    this.rMet.set(this.r.subarray(0, m));
    const res = this.solver.solve(problem, this.r, {
      maxIterations: sweeps,
      tolerance: target,
      warmStart: true,
      polish,
    });
    if (!(res.residual <= this.settings.tolerance)) {
      this.r.set(this.rMet.subarray(0, m));
      res.residual = met.residual;
    }
    res.converged = true;
    res.status = "converged";
    delete res.message;
    return res;
  }

  /** out += sign·Δa with Δa = (1/h) W⁻¹ Hᵀ P for the current impulses. */
  addAcceleration(h: number, sign: number, out: Float64Array): void {
    const { set, dim } = this;
    if (this.factored !== null) {
      this.factored.addResponse(this.r, sign / h, out);
      return;
    }
    const n = this.n;
    if (this.ldlt !== null) {
      // Δa = W⁻¹ Hᵀ P·sign/h with the factors the Delassus matrix came from
      const { response } = this;
      response.fill(0);
      this.addGeneralizedForce(sign / h, response);
      this.ldlt.solve(response, response);
      for (let j = 0; j < n; j++) out[j] += response[j];
      return;
    }
    const m = set.count * dim;
    for (let p = 0; p < m; p++) {
      const s = (sign * this.r[p]) / h;
      if (s === 0) continue;
      const o = p * n;
      for (let j = 0; j < n; j++) out[j] += s * this.cols[o + j];
    }
  }

  /** out += scale·Hᵀ P: the generalized contact force (scale 1/h) or impulse (scale 1). */
  addGeneralizedForce(scale: number, out: Float64Array): void {
    const { set, dim } = this;
    for (let i = 0; i < set.count; i++)
      for (let k = 0; k < dim; k++) {
        const v = this.r[dim * i + k];
        if (v !== 0) set.addRowTranspose(i, k, scale * v, out);
      }
  }

  /** Σ r · (A v) over the active contacts (local impulses on local velocities). */
  impulseWork(v: Float64Array): number {
    const { set, dim } = this;
    const nc = set.count;
    this.uWork = grow(this.uWork, dim * nc);
    set.localVelocity(v, dim, this.uWork);
    let work = 0;
    for (let i = 0; i < dim * nc; i++) work += this.r[i] * this.uWork[i];
    return work;
  }

  /**
   * The impulses' work (J) on a step whose positions move at its end velocity,
   * x_{t+h} = x_t + h v⁺ (θ = 1: backward and symplectic Euler, and Moreau–Jean's fem impact
   * steps, moreau-jean.ts stepOnce), for the energy balance; v_t the step's start velocities,
   * v⁺ the bodies' current ones. On the mean velocity, Pᵀ H v̄, the work of every load f the
   * impulse opposes came out too large: the kinetic energy's change credits f with h fᵀ v̄,
   * the potential energy's with h fᵀ v⁺, so E + energy.dissipated rose by −½ h fᵀ M⁻¹ Hᵀ P
   * (a 2 kg ball landing at 1.37 m/s on a coarse stvk block's face, h = 5 ms: +23 and +33 mJ
   * in its two impact steps). The step is split exactly instead, each normal impulse into
   * its impact and the rest, P_n = P_I + P_F:
   *  - the impact P_I = min(P_n, (1 + e) m_n max(0, −u_n⁻)), what stops the contact's own
   *    approach and rebounds it by Newton's law (m_n = 1/(A_n M⁻¹ A_nᵀ), its effective mass),
   *    acts at the step's start, taking v_t to v* = v_t + δ, δ = M⁻¹ Hᵀ P_I, its work the
   *    kinetic energy's change, P_Iᵀ H (v_t + ½ δ) (−½ m_n u_n⁻² (1 − e²) alone; the rebound
   *    e m_n |u_n⁻| counted in the rest instead, as a force on v⁺, booked a ball's impact
   *    at e = 1 as ½ m u_n⁻² gained: test/engine/integrators/leapfrog-bounce.test.ts);
   *  - the rest (P_F and the friction impulses) is a force over the step, its work that
   *    force times the displacement, Pᵀ H v⁺ (a resting contact: ≈ 0);
   * the step is then backward Euler's smooth step from v*, M (v⁺ − v*) = h f̄ + Hᵀ P_F,
   * x_{t+h} = x_t + h v⁺, whose energy change beyond its forces' work is
   * −½ (v⁺ − v*)ᵀ M (v⁺ − v*) and what a convex potential's chord leaves (both ≤ 0): E +
   * energy.dissipated never rises through the step beyond the nonlinear forces' own error
   * (any split of P would do; this one books as the contact's the struck particles' own
   * loss, the rest being the scheme's: a fem block landing flat loses at its impact step
   * its struck nodes' kinetic energy to the floor, and what backward Euler damps of the
   * wave that stops the nodes above them to energy.error). M⁻¹ takes the rigid bodies'
   * inverse inertia at the step's end (O(h) off the start's for a turning body; exact for
   * particles and translation). Allocates nothing once grown.
   */
  endVelocityImpulseWork(vt: Float64Array): number {
    const { set, dim, sys } = this;
    const nc = set.count;
    const { impulse, delta } = this.workScratch;
    this.impact = grow(this.impact, nc);
    this.uWork = grow(this.uWork, dim * nc);
    this.uWorkEnd = grow(this.uWorkEnd, dim * nc);
    const { impact, uWork, uWorkEnd } = this;
    impulse.fill(0);
    for (let i = 0; i < nc; i++) {
      const pn = this.r[dim * i];
      const approach = -this.uMinus[i];
      impact[i] =
        pn > 0 && approach > 0
          ? Math.min(pn, ((1 + set.restitution[i]) * approach) / set.rowInverseMass(i, 0))
          : 0;
      if (impact[i] > 0) set.addRowTranspose(i, 0, impact[i], impulse);
    }
    massSolve(sys, impulse, delta);
    for (let j = 0; j < delta.length; j++) delta[j] = vt[j] + 0.5 * delta[j];
    set.localVelocity(delta, dim, uWork);
    getVelocity(sys, impulse);
    set.localVelocity(impulse, dim, uWorkEnd);
    let work = 0;
    for (let i = 0; i < nc; i++) {
      work += impact[i] * (uWork[dim * i] - uWorkEnd[dim * i]);
      for (let k = 0; k < dim; k++) work += this.r[dim * i + k] * uWorkEnd[dim * i + k];
    }
    return work;
  }

  /**
   * Whether an active contact of the bodies of `bodies` (1) strikes within the step of h:
   * its normal velocity at the step's start u_n⁻ < −ACTIVATION_TOLERANCE/h (not a
   * persistent one, turnRows) and its normal impulse of the last solve positive.
   */
  strikes(bodies: Uint8Array, h: number): boolean {
    const { set, dim } = this;
    for (let i = 0; i < set.count; i++) {
      if (!(this.r[dim * i] > 0) || this.uMinus[i] >= -ACTIVATION_TOLERANCE / h) continue;
      const a = set.bodyA[i];
      const b = set.bodyB[i];
      if ((a >= 0 && bodies[a] === 1) || (b >= 0 && bodies[b] === 1)) return true;
    }
    return false;
  }

  /**
   * Moreau–Jean's free bodies that take the touched groups' midpoint law (integrators/
   * moreau-jean.ts, "Free bodies turning on a contact"): out[b] ← 1 for each dynamic body b
   * that `skip` does not mark (1 by body index) with a persistent contact
   * (u_n⁻ ≥ −ACTIVATION_TOLERANCE/h) with restitution, pushing after the last solve
   * (P_n > 0), whose chord's normal part ½ h² |ω_b × (ω_b × r) · n| (m; r from b's centre
   * to the contact point, ω_b its end rate, n the normal) reaches TURN_CHORD: the start
   * rows' law lets such a contact's end gap drift by about that a step (a box rocking on an
   * edge: ½ (h ω)² c; spinning flat about the normal: 0, its corners' chords in the
   * floor's plane). Returns how many bodies it marked (out is cleared first).
   */
  turningBodies(h: number, skip: Uint8Array, out: Uint8Array): number {
    const { set, dim, sys } = this;
    out.fill(0);
    let n = 0;
    for (let i = 0; i < set.count; i++) {
      if (
        !(this.r[dim * i] > 0) ||
        !(set.restitution[i] > 0) ||
        this.uMinus[i] < -ACTIVATION_TOLERANCE / h
      )
        continue;
      for (let side = 0; side < 2; side++) {
        const b = side === 0 ? set.bodyA[i] : set.bodyB[i];
        if (b < 0 || sys.dofOffset[b] < 0 || out[b] === 1 || skip[b] === 1) continue;
        // the centripetal term's normal part, ω × (ω × r) · n = (ω·r)(ω·n) − |ω|² (r·n)
        let w2 = 0;
        let wr = 0;
        let wn = 0;
        let rn = 0;
        for (let k = 0; k < 3; k++) {
          const w = sys.omega[3 * b + k];
          const r = set.point[3 * i + k] - sys.pos[3 * b + k];
          const nk = set.frame[9 * i + k];
          w2 += w * w;
          wr += w * r;
          wn += w * nk;
          rn += r * nk;
        }
        if (0.5 * h * h * Math.abs(wr * wn - w2 * rn) < TURN_CHORD) continue;
        out[b] = 1;
        n++;
      }
    }
    return n;
  }

  /**
   * Siconos saveYandLambdaInMemory: the world impulse of every active contact (on body b)
   * by key, for the next step's warm start, and the end-of-step local velocities u⁺ (from
   * the bodies' current velocities); a fem–fem contact's reported gap linearized from them
   * to the end of the step as Moreau–Jean's position update moves it,
   *   g_{t+h} ≈ g_t + h((1−θ) u_n⁻ + θ u_n⁺)
   * (the detector's contacts report theirs at the pose reported: poseGap).
   * The impulses reported (report, totalNormalForce) are the same but within each manifold
   * whose contacts all rest, where they are the least-norm share of the manifold's
   * resultant (manifold-impulses.ts), and for the contacts whose impact the step then
   * locates (addLocated).
   */
  saveMemory(h: number, theta: number): void {
    const { set, dim } = this;
    const nc = set.count;
    this.lastH = h;
    const { memory } = this;
    set.normalVelocities(this.uPlus, 0, nc);
    // the contacts whose rows endTurn left at the step's middle: u_n⁺ at the end pose,
    // where the law held it (H_m v⁺ is O(h) of the curve's off it: the turntable rod's tip,
    // read there, passed the separation rate, was not held, and was let go at 1/60 s)
    if (this.ratesKept) {
      for (let i = 0; i < nc; i++) if (this.turned[i] === 1) this.uPlus[i] = this.endRate[i];
      this.ratesKept = false;
    }
    this.endGap = grow(this.endGap, nc);
    for (let i = 0; i < nc; i++)
      this.endGap[i] = set.gap[i] + h * ((1 - theta) * this.uMinus[i] + theta * this.uPlus[i]);
    // the reported impulses: the least-norm share of each resting manifold's resultant
    // (manifold-impulses.ts); the memory keeps the solver's own share
    const m = dim * nc;
    this.reported = grow(this.reported, m);
    this.reported.set(this.r.subarray(0, m));
    this.manifolds.spread(set, this.reported, dim, this.mu, this.settings.tolerance);
    memory.begin(nc);
    const f = set.frame;
    for (let i = 0; i < nc; i++) {
      let px = 0;
      let py = 0;
      let pz = 0;
      let qx = 0;
      let qy = 0;
      let qz = 0;
      for (let k = 0; k < dim; k++) {
        const o = 9 * i + 3 * k;
        const v = this.r[dim * i + k];
        px += v * f[o];
        py += v * f[o + 1];
        pz += v * f[o + 2];
        const w = this.reported[dim * i + k];
        qx += w * f[o];
        qy += w * f[o + 1];
        qz += w * f[o + 2];
      }
      this.impulse[3 * i] = qx;
      this.impulse[3 * i + 1] = qy;
      this.impulse[3 * i + 2] = qz;
      const slot = memory.add(set.key[i], set.bodyA[i], set.bodyB[i], set.point, i);
      memory.impulse[3 * slot] = px;
      memory.impulse[3 * slot + 1] = py;
      memory.impulse[3 * slot + 2] = pz;
      // a contact that stuck carries its drift D + (h/2) u_t(x_k, v_{k+1}) (file comment,
      // "Sticking drift")
      if (dim === 3 && set.triangle[i] === 0) {
        // (squares, not Math.hypot, and the velocities into an array: no heap number per
        // contact, step-allocation.test.ts)
        const pn = this.r[3 * i];
        const pt2 = this.r[3 * i + 1] ** 2 + this.r[3 * i + 2] ** 2;
        const uEnd = this.uEnd;
        set.velocityRows(uEnd, 0, i, 1, 2);
        const u1 = uEnd[0];
        const u2 = uEnd[1];
        // the slip the solver saw, u_t + D_t/h, over the step
        const slip2 = h * h * ((u1 + this.shift[2 * i]) ** 2 + (u2 + this.shift[2 * i + 1]) ** 2);
        const cap = STICK_FRACTION * this.mu[i] * pn;
        if (pn > 0 && (pt2 < cap * cap || slip2 <= DRIFT_TOLERANCE * DRIFT_TOLERANCE)) {
          const o = 9 * i;
          const a = h * (1 - theta);
          const b = h * (theta - 0.5);
          let w1 = a * this.uStart[2 * i] + b * u1;
          let w2 = a * this.uStart[2 * i + 1] + b * u2;
          // The solve meets u_t + D_t/h = 0 only to its tolerance: its error e, weighed into
          // D by b here and h/2 at the next start (u_t(x_{k+1}, v_{k+1}) holds it), is left
          // out when within the tolerance, so that D sums the chord, not the solves' error.
          // Summed, that error reached 1 µm at one corner of a face every ~10 steps in the
          // resting box stack (examples/box-stack: PGS to g h/1000 = 4.9e-5 m/s), each
          // take-back a kick that rocked the stack: over steps 100–12000 speeds to 3.0e-3
          // m/s, the active set changing 256 times, 841 take-backs; with e left out 3.0e-4
          // m/s, 29 changes (none after 4.4 s), no take-back (without any drift 2.1e-4
          // m/s, once). The turntable's e is far below its chord velocity ω² r h.
          const e1 = u1 + this.shift[2 * i];
          const e2 = u2 + this.shift[2 * i + 1];
          const tol = this.settings.tolerance;
          if (e1 * e1 + e2 * e2 <= tol * tol) {
            w1 -= (b + h / 2) * e1;
            w2 -= (b + h / 2) * e2;
          }
          const d = this.carried;
          for (let k = 0; k < 3; k++)
            d[k] = this.drift[3 * i + k] + w1 * f[o + 3 + k] + w2 * f[o + 6 + k];
          // turned with side a over the step, R_a(t+h) R_a(t)ᵀ (the ground: not turned):
          // the drift lies in the surfaces, which turn (a turntable's by ωh a step)
          const ba = set.bodyA[i];
          if (ba >= 0) {
            quatRotateInverse(d, 0, this.startQuat, 4 * ba, d, 0);
            quatRotate(d, 0, this.sys.quat, 4 * ba, d, 0);
          }
          if (ba >= 0 && set.bodyB[i] >= 0) this.chordSlip(i, h, theta, d);
          for (let k = 0; k < 3; k++) memory.slip[4 * slot + k] = d[k];
          memory.slip[4 * slot + 3] = h / 2;
        }
      }
    }
  }

  /** Scratch of chordSlip: x_b − x_a at the start then the end, and T (r + e) then δ (m). */
  private readonly chordScratch = new Float64Array(6);

  /**
   * Adds to `d` (contact i's drift at the step's end, world, m) what the trapezoid of the
   * relative velocity of b's centre in a's frame misses of that centre's move in a's frame
   * (file comment, "Sticking drift"): with y = R_aᵀ(x_b − x_a), ẏ = R_aᵀ c,
   * c(x, v) = v_b − v_a − ω_a × (x_b − x_a), the drift takes the θ-scheme's shares
   * h((1−θ) ẏ(x_k, v_k) + (θ − ½) ẏ(x_k, v_{k+1})) + (h/2) ẏ(x_{k+1}, v_{k+1}) where the
   * centre moved by Δy, in world at the end
   *   δ = (x_b − x_a)⁺ − T (x_b − x_a)_k − T h((1−θ) c(x_k, v_k) + (θ − ½) c(x_k, v_{k+1}))
   *       − (h/2) c(x_{k+1}, v_{k+1}),   T = R_a(t+h) R_a(t)ᵀ.
   * On a turntable (a turning at ω, b riding it) the positions follow the chord, the
   * velocities the arc: the trapezoid reads 0 where b fell behind by r (ωh)³/12 a step.
   * The relative turn's share (ω_b − ω_a) × the lever arm stays the trapezoid's (a rolling
   * sphere's: its material point's cycloid is no slip), and δ is taken only while the
   * bodies turn together, h |ω_b − ω_a| ≤ CHORD_TURN at the end: turning apart (rolling),
   * b's centre goes round in a's frame and δ would read that arc's own O(h³), ψ³ |y|/12 for
   * a relative turn ψ a step. Both sides bodies (saveMemory: with the ground b's point
   * would be the origin, metres off; a body on the ground turns with none of it, and its
   * positions follow the velocities). The sys holds (x_{k+1}, v_{k+1}).
   */
  private chordSlip(i: number, h: number, theta: number, d: Float64Array): void {
    const { set, sys } = this;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    const s = this.chordScratch;
    const p0 = this.startPos;
    const w0 = this.startOmega;
    const v0 = this.startVel;
    const { pos, vel, omega } = sys;
    let turn = 0;
    for (let k = 0; k < 3; k++) turn += (omega[3 * b + k] - omega[3 * a + k]) ** 2;
    if (h * h * turn > CHORD_TURN * CHORD_TURN) return;
    // start: r = x_b − x_a, e = h((1−θ) c(x_k, v_k) + (θ − ½) c(x_k, v_{k+1}))
    const wa = 3 * a;
    const wb = 3 * b;
    for (let k = 0; k < 3; k++) s[k] = p0[wb + k] - p0[wa + k];
    const c0 = h * (1 - theta);
    const c1 = h * (theta - 0.5);
    for (let k = 0; k < 3; k++) {
      const k1 = (k + 1) % 3;
      const k2 = (k + 2) % 3;
      const x0 = w0[wa + k1] * s[k2] - w0[wa + k2] * s[k1];
      const x1 = omega[wa + k1] * s[k2] - omega[wa + k2] * s[k1];
      s[3 + k] = s[k] + c0 * (v0[wb + k] - v0[wa + k] - x0) + c1 * (vel[wb + k] - vel[wa + k] - x1);
    }
    // turned with a: T (r + e)
    quatRotateInverse(s, 3, this.startQuat, 4 * a, s, 3);
    quatRotate(s, 3, sys.quat, 4 * a, s, 3);
    // end: r⁺ and c(x_{k+1}, v_{k+1})
    for (let k = 0; k < 3; k++) s[k] = pos[wb + k] - pos[wa + k];
    for (let k = 0; k < 3; k++) {
      const k1 = (k + 1) % 3;
      const k2 = (k + 2) % 3;
      const c = vel[wb + k] - vel[wa + k] - (omega[wa + k1] * s[k2] - omega[wa + k2] * s[k1]);
      // (δ into s[3..], which only its own k reads; s[0..2] the cross products')
      s[3 + k] = s[k] - s[3 + k] - 0.5 * h * c;
    }
    if (s[3] * s[3] + s[4] * s[4] + s[5] * s[5] > CHORD_ROUNDOFF * CHORD_ROUNDOFF)
      for (let k = 0; k < 3; k++) d[k] += s[3 + k];
  }

  /**
   * The located impact of active contact i (integrators/impact-location.ts, after
   * saveMemory): its normal impulse ν (N·s, on body b along the normal) is the step's
   * beside the contact solve's, M (v⁺ − v_t) = h f̄ + Hᵀ P + n_i ν, and is added to the
   * impulse reported for it (and ν/h to its normal force). The warm start keeps the
   * solver's own impulse.
   */
  addLocated(i: number, impulse: number): void {
    const f = this.set.frame;
    for (let k = 0; k < 3; k++) this.impulse[3 * i + k] += impulse * f[9 * i + k];
  }

  /**
   * Contact i's gap at the current pose (m): the detector's contacts' anchors at the step's
   * start carried with their bodies (anchoredGap), so after the position projection and
   * the located impacts' moves, the penetration the state is left with; a fem–fem
   * contact's, the step's linearized end gap (saveMemory).
   */
  private poseGap(i: number): number {
    const { set } = this;
    if (set.triangle[i] !== 0) return this.endGap[i];
    return anchoredGap(this.sys, set.bodyA[i], set.bodyB[i], this.anchors, 8 * i, set.frame, 9 * i);
  }

  /**
   * A step split at its impacts (integrators/impact-events.ts) reports its totals: each
   * contact's impulse summed over the step's sub-steps (keepSubstep) and its impacts
   * (addImpact), contacts matched by key, so that with the other forces it gives the
   * step's momentum change, M (v_{t+h} − v_t) = h f̄ + Gᵀ Λ + Σ_c H_cᵀ P_c, and a force
   * the impulse over the whole step (a contact resting through every piece: m g, not m g h
   * over the last piece's length). Per kept contact: its key, bodies (2), and 10 values:
   * point and normal at its last sub-step's start (or its impact), world impulse (N·s, on
   * body b) and gap (at the last sub-step's end pose, poseGap, or the gap at the impact).
   */
  private keptCount = 0;
  private keptKey: Float64Array = new Float64Array(0);
  private keptBodies: Int32Array = new Int32Array(0);
  private kept: Float64Array = new Float64Array(0);
  /** The split step's h (s); 0: the step is not split, its contacts are the set's. */
  private splitStep = 0;

  /** At the start of a step split at its impacts, of h: nothing kept yet. */
  beginSplit(h: number): void {
    this.keptCount = 0;
    this.splitStep = h;
  }

  /** At the start of a step not split: the set's contacts are the step's. */
  endSplit(): void {
    this.keptCount = 0;
    this.splitStep = 0;
  }

  /**
   * The accepted sub-step's contacts (after saveMemory and addLocated) into the split
   * step's totals (beginSplit), their impulses added to the same contacts' earlier ones.
   */
  keepSubstep(): void {
    if (this.lastH === 0) return;
    for (let i = 0; i < this.set.count; i++) {
      const o = this.keep(i);
      for (let k = 0; k < 3; k++) this.kept[o + 6 + k] += this.impulse[3 * i + k];
      this.kept[o + 9] = this.poseGap(i);
    }
  }

  /**
   * Contact i of the current set met its impact with the normal impulse `impulse` (N·s,
   * on body b along the normal) and the tangential t1, t2 (N·s, along its frame's tangents:
   * friction's): into the split step's totals (keepSubstep), its gap the one at the impact.
   */
  addImpact(i: number, impulse: number, t1 = 0, t2 = 0): void {
    const o = this.keep(i);
    const f = this.set.frame;
    for (let k = 0; k < 3; k++)
      this.kept[o + 6 + k] +=
        impulse * f[9 * i + k] + t1 * f[9 * i + 3 + k] + t2 * f[9 * i + 6 + k];
    this.kept[o + 9] = this.set.gap[i];
  }

  /**
   * The kept entry of contact i of the current set (a new one, impulse 0, when its key is
   * not kept yet), its bodies, point and normal set to the set's; returns its offset in
   * `kept`.
   */
  private keep(i: number): number {
    const { set } = this;
    const key = set.key[i];
    let j = 0;
    while (j < this.keptCount && this.keptKey[j] !== key) j++;
    if (j === this.keptCount) {
      this.keptCount++;
      this.keptKey = extend(this.keptKey, j + 1);
      this.keptBodies = extend(this.keptBodies, 2 * (j + 1));
      this.kept = extend(this.kept, 10 * (j + 1));
      this.keptKey[j] = key;
      for (let k = 6; k < 9; k++) this.kept[10 * j + k] = 0;
    }
    this.keptBodies[2 * j] = set.bodyA[i];
    this.keptBodies[2 * j + 1] = set.bodyB[i];
    const o = 10 * j;
    for (let k = 0; k < 3; k++) {
      this.kept[o + k] = set.point[3 * i + k];
      this.kept[o + 3 + k] = set.frame[9 * i + k];
    }
    return o;
  }

  /**
   * The warm-start memory (copies, for simulation snapshots): per remembered contact its
   * key, bodies, world impulse and point, and the projection's multipliers.
   */
  exportMemory(): ContactMemory {
    return { ...this.memory.export(), projection: this.projection.exportMemory() };
  }

  /**
   * Restores what exportMemory gave (same model): the next step warm-starts exactly as the
   * exporting simulation's would. The last step's contacts are not restored (the State
   * lists none until the next step). Throws SnapshotError for a body this model lacks.
   */
  importMemory(memory: ContactMemory): void {
    this.clear();
    this.memory.import(memory);
    this.lastH = 0;
    if (memory.projection !== undefined) this.projection.importMemory(memory.projection);
  }

  /**
   * Holds the warm-start memory (impulses and the projection's) of the state at a
   * Simulation step's start, in place, which restoreHeldMemory puts back when the step
   * fails: as importMemory does, so that the undone step leaves the memory a snapshot of
   * that state carries.
   */
  holdMemory(): void {
    this.heldMemory.copyFrom(this.memory);
    this.projection.holdMemory();
  }

  /** The memory holdMemory held, back; the last step's contacts are not (see importMemory). */
  restoreHeldMemory(): void {
    this.clear();
    this.memory.copyFrom(this.heldMemory);
    this.lastH = 0;
    this.projection.restoreHeldMemory();
  }

  /** The contacts turnRows took at another pose: 1 by index in the set. */
  private turned: Uint8Array = new Uint8Array(0);
  private turnedCount = 0;
  /** Their rows at the step's start (ContactSet.takeRows, 15 each), for lawAtStart. */
  private startRowsOf: Float64Array = new Float64Array(0);
  /** Added to their normal rows of q (m/s; lawAtStart), while shifting. */
  private normalShift: Float64Array = new Float64Array(0);
  private shiftNormals = false;
  /** Their normal velocities at the end pose (m/s, turnRows with `v`): u_e = H_e v⁺. */
  private endRate: Float64Array = new Float64Array(0);
  /** endTurn kept the rows turned: saveMemory takes endRate for their u_n⁺. */
  private ratesKept = false;
  private readonly turnKeys = new KeyTable();
  private readonly turnPoint = new Float64Array(3);

  /**
   * Moreau–Jean's touched groups (integrators/moreau-jean.ts, "Jointed groups touched"):
   * the rows of the persistent contacts (not striking: u_n⁻ ≥ −ACTIVATION_TOLERANCE/h;
   * with friction or restitution too: their impulses act along these rows, the normal law
   * asked of u_e, the tangential rows' law and the cone the start's with the same P) of
   * the bodies of `bodies` taken again at the pose the bodies are at (their normal and
   * carried contact point, CarriedDetection.contactPoint), their normal velocities for `v`
   * kept (endRate) when `v` is given. Returns how many.
   */
  turnRows(bodies: Uint8Array, h: number, v: Float64Array | null): number {
    const { set, detection } = this;
    const nc = set.count;
    if (this.turnedCount === 0) {
      this.turned = grow(this.turned, nc);
      this.startRowsOf = grow(this.startRowsOf, 15 * nc);
      this.turned.fill(0, 0, nc);
    }
    this.normalShift = grow(this.normalShift, nc);
    this.endRate = grow(this.endRate, nc);
    this.shiftNormals = false;
    this.ratesKept = false;
    // the bodies' turns since the detection, which transport and contactPoint read (the
    // set's own contacts are carried whether or not the detection still covers the pose:
    // at 1/60 s the crank's link left it by the chord's 1 % at one step's second symmetric
    // step, its tip then judged at a stale rate and let go)
    detection.covers();
    detection.transport();
    const b = detection.buffer;
    const keys = this.turnKeys;
    keys.clear();
    keys.reserve(b.count);
    for (let k = 0; k < b.count; k++) keys.set(b.key[k], k);
    let count = 0;
    for (let i = 0; i < nc; i++) {
      const a = set.bodyA[i];
      const c = set.bodyB[i];
      if (
        set.triangle[i] !== 0 ||
        this.uMinus[i] < -ACTIVATION_TOLERANCE / h ||
        !((a >= 0 && bodies[a] === 1) || (c >= 0 && bodies[c] === 1))
      )
        continue;
      const k = keys.get(set.key[i]);
      if (k < 0) continue;
      if (this.turned[i] === 0) {
        this.turned[i] = 1;
        this.turnedCount++;
        set.takeRows(i, this.startRowsOf, 15 * i);
      }
      detection.contactPoint(k, this.turnPoint, 0);
      set.moveRows(i, b.normal, 3 * k, this.turnPoint, 0);
      if (v !== null) this.endRate[i] = set.rowTimes(i, 0, v);
      count++;
    }
    return count;
  }

  /**
   * The turned contacts' rows back at the step's start (H_s, those of the Delassus
   * operator W_c and of addAcceleration's response), their law asked of the end pose's
   * normal velocity u_e (turnRows' endRate for v): q_n += u_e − H_s v. With v = v⁺(P_k)
   * and the free velocity v⁺(P_k) − W⁻¹ H_sᵀ P_k, q_n = u_e − W_c P_k, so that the fixed
   * point of positionJointsTouched's iteration meets u_e = H_e v⁺ ≥ 0 ⊥ P_n ≥ 0.
   */
  lawAtStart(v: Float64Array): void {
    const { set } = this;
    for (let i = 0; i < set.count; i++)
      if (this.turned[i] === 1) {
        set.putRows(i, this.startRowsOf, 15 * i);
        this.normalShift[i] = this.endRate[i] - set.rowTimes(i, 0, v);
      }
    this.shiftNormals = this.turnedCount > 0;
  }

  /** The rows turnRows took back at the step's start, no shift. */
  startRows(): void {
    const { set } = this;
    this.shiftNormals = false;
    if (this.turnedCount === 0) return;
    for (let i = 0; i < set.count; i++)
      if (this.turned[i] === 1) set.putRows(i, this.startRowsOf, 15 * i);
    this.turnedCount = 0;
  }

  /**
   * Ends the turn, the rows kept where they were last taken (the step's middle), their
   * u_n⁺ the end pose's (endRate: markHeld judges by it whether they leave).
   */
  endTurn(): void {
    this.shiftNormals = false;
    this.ratesKept = this.turnedCount > 0;
    this.turnedCount = 0;
  }

  /**
   * The position projection after the step (projection.ts) on this step's detection (and
   * the fem–fem contacts), with the joints' own projection after each pass; with `hold`,
   * the step's pushing contacts of its bodies held on their surface first (markHeld,
   * ContactProjection.hold), `projectJointVelocities` after each change of velocity; with
   * `joints`, each pass moves the bodies along them (ContactProjection.jointPass).
   */
  project(
    projectJoints?: () => void,
    hold: Uint8Array | null = null,
    projectJointVelocities: (() => void) | null = null,
    joints: ProjectedJoints | null = null,
  ): ProjectionResult {
    const held = this.held;
    held.count = hold === null ? 0 : this.markHeld(hold);
    held.rateTolerance = HOLD_TOLERANCE / this.lastH;
    held.projectJointVelocities = projectJointVelocities;
    const result = this.projection.project(
      this.detection,
      this.margin,
      this.stats,
      projectJoints,
      this.faces,
      held,
      joints,
    );
    // the hold's impulses, the step's with P (M (v⁺ − v_t) = h f̄ + Hᵀ P + H_nᵀ ν + Gᵀ Λ,
    // H_n at the end pose): reported with them, and ν/h with the normal force
    const f = this.set.frame;
    for (let k = 0; k < held.count; k++) {
      const i = this.heldIndex[k];
      for (let j = 0; j < 3; j++) this.impulse[3 * i + j] += held.impulse[k] * f[9 * i + j];
    }
    return result;
  }

  /** The held contacts' indices in the set (markHeld). */
  private heldIndex: Int32Array = new Int32Array(0);

  /** The contacts the projection holds on their surface (markHeld). */
  private readonly held: HeldContacts = {
    keys: new Float64Array(0),
    persistent: new Uint8Array(0),
    impulse: new Float64Array(0),
    count: 0,
    rateTolerance: 0,
    projectJointVelocities: null,
  };

  /**
   * held.keys ← the keys of the step's contacts held on their surface by project's
   * `hold` (ContactProjection.hold): those that push (P_n > 0) at the end of the step
   * without separating (u_n⁺ ≤ ACTIVATION_TOLERANCE/h: a rebound's gap is its own) and
   * touch a body of `bodies` (1 by body index), persistent those that did not strike
   * (u_n⁻ ≥ −ACTIVATION_TOLERANCE/h). Returns how many.
   */
  private markHeld(bodies: Uint8Array): number {
    const { set, dim } = this;
    const nc = set.count;
    const held = this.held;
    held.keys = grow(held.keys, nc);
    if (held.persistent.length < nc) {
      held.persistent = new Uint8Array(held.keys.length);
      held.impulse = new Float64Array(held.keys.length);
      this.heldIndex = new Int32Array(held.keys.length);
    }
    const separating = ACTIVATION_TOLERANCE / this.lastH;
    let n = 0;
    for (let i = 0; i < nc; i++) {
      if (!(this.r[dim * i] > 0) || this.uPlus[i] > separating) continue;
      const a = set.bodyA[i];
      const b = set.bodyB[i];
      if (!((a >= 0 && bodies[a] === 1) || (b >= 0 && bodies[b] === 1))) continue;
      held.persistent[n] = this.uMinus[i] >= -separating ? 1 : 0;
      this.heldIndex[n] = i;
      held.keys[n++] = set.key[i];
    }
    return n;
  }

  /**
   * The active contacts of the last step for the State: the contact point and normal of
   * the step (geometry at t), the gap at the current pose (poseGap: after the step's
   * position projection, not the step's linearized end gap: the 7-axis arm's first step,
   * which the projection left 2e-5 m deep, reported −5.5 cm), the
   * normal force P_n/h, the tangential force (P_t1 t1 + P_t2 t2)/h and the impulse F P
   * (world, on body b, N·s; a located impact's share included); a step split at its
   * impacts, its totals over its sub-steps and impacts (beginSplit), each contact once.
   * None before the first step and after a restore.
   */
  report(out: ContactReport): void {
    if (this.splitStep > 0) {
      this.reportSplit(out);
      return;
    }
    const { set } = this;
    const h = this.lastH;
    const n = h === 0 ? 0 : set.count;
    out.begin(n);
    const f = set.frame;
    for (let i = 0; i < n; i++) {
      const px = this.impulse[3 * i];
      const py = this.impulse[3 * i + 1];
      const pz = this.impulse[3 * i + 2];
      const pn = px * f[9 * i] + py * f[9 * i + 1] + pz * f[9 * i + 2];
      const j = out.add(set.bodyA[i], set.bodyB[i]);
      for (let k = 0; k < 3; k++) {
        out.point[3 * j + k] = set.point[3 * i + k];
        out.normal[3 * j + k] = f[9 * i + k];
      }
      out.gap[j] = this.poseGap(i);
      out.normalForce[j] = pn / h;
      out.tangentForce[3 * j] = (px - pn * f[9 * i]) / h;
      out.tangentForce[3 * j + 1] = (py - pn * f[9 * i + 1]) / h;
      out.tangentForce[3 * j + 2] = (pz - pn * f[9 * i + 2]) / h;
      out.impulse[3 * j] = px;
      out.impulse[3 * j + 1] = py;
      out.impulse[3 * j + 2] = pz;
    }
  }

  /** report's contacts of a split step: its totals (beginSplit), forces over its whole h. */
  private reportSplit(out: ContactReport): void {
    const h = this.splitStep;
    const g = this.kept;
    out.begin(this.keptCount);
    for (let i = 0; i < this.keptCount; i++) {
      const j = out.add(this.keptBodies[2 * i], this.keptBodies[2 * i + 1]);
      const o = 10 * i;
      const pn = this.keptNormal(i);
      for (let k = 0; k < 3; k++) {
        out.point[3 * j + k] = g[o + k];
        out.normal[3 * j + k] = g[o + 3 + k];
        out.impulse[3 * j + k] = g[o + 6 + k];
        out.tangentForce[3 * j + k] = (g[o + 6 + k] - pn * g[o + 3 + k]) / h;
      }
      out.gap[j] = g[o + 9];
      out.normalForce[j] = pn / h;
    }
  }
}
