/**
 * The position projection of nonsmooth contact (Siconos TimeSteppingProjectOnConstraints,
 * NewtonEulerDS, kinetic metric): after the step the positions are moved by the smallest
 * correction in the kinetic-energy metric that cancels the penetrations to first order:
 *     minimize ½ δqᵀ M δq  subject to  g + H_n δq ≥ 0,
 * whose optimality conditions are the LCP
 *     w = (H_n M⁻¹ H_nᵀ) μ + g ≥ 0 ⊥ μ ≥ 0,   δq = M⁻¹ H_nᵀ μ
 * (μ a position-level multiplier, kg·m). Separated contacts enter as inequalities, so the
 * correction does not push a body into another. Velocities are not changed but for the
 * turn of each body's angular velocity with the body (movePositions: the kinetic energy
 * stays; held in the world, a box spinning at 20 rad/s lost 2.9e-3 J of 1.7 J to the lift
 * of one edge 2 mm deep, and the bench's 100 hulls dropped on a mesh changed their kinetic
 * energy by 0.017 J in all over 2.5 s).
 * The fem face contacts (fem-faces.ts: side a three weighted particles, no factored form)
 * take their own pass after the others' in each round, on a dense H_n M⁻¹ H_nᵀ of their
 * rows (block Gauss–Seidel between the two sets, as with the joints).
 * Each contact the projection lifts out of penetration is remembered with its lift (the
 * gap after the projection minus the gap before, by contact key) for the next step's
 * impact location (integrators/impact-location.ts): a ball that a step carried into the
 * floor before its contact was active had its impact within that step, and the lift alone,
 * its velocity kept, would add m g × the lift to its energy at every such bounce.
 */
import type { ConstraintSet } from "../constraints/constraint-set";
import { projectionWorkspace } from "../constraints/project";
import { grow } from "../math/grow";
import {
  addPositionIncrement,
  type BodySystem,
  getVelocity,
  markStateChanged,
  massSolve,
  movePositions,
  PositionSnapshot,
  restorePositions,
  savePositions,
  setVelocity,
} from "../model/body-system";
import type { ContactMemory } from "../model/state-codec";
import { PgsSolver } from "../solvers/nonsmooth";
import type { FactoredDelassus } from "../solvers/nonsmooth/factored";
import type { NonsmoothProblem } from "../solvers/nonsmooth/types";
import { iterationBudget } from "./budget";
import type { CarriedDetection } from "./carried-detection";
import { blockOffsets, ContactSet, inverseMassBlocks } from "./contact-set";
import type { FemFaceContacts } from "./fem-faces";
import { KeyTable } from "./key-table";

/**
 * A one-step contact problem that cannot be solved as posed: its solver diverged (NaN), or
 * its Delassus operator H W⁻¹ Hᵀ is indefinite (W, the step's iteration matrix, is not
 * positive definite: a fem body's exact tangent under strong compression). The θ-schemes
 * redo such a step in halves (moreau-jean.ts); also the position projection's diverged solve, where h² K weighs less against M.
 */
export class ContactSolveError extends Error {}

export interface ProjectionSettings {
  /**
   * Largest penetration (m) left after the projection (the model's
   * solver.projectionTolerance): the passes stop once every gap is ≥ −tolerance, and each
   * pass's LCP is solved to the "lcp-local" residual ≤ tolerance (see project()).
   */
  tolerance: number;
  /**
   * Gauss–Seidel sweeps per step at most, over all passes (solver.projectionIterations);
   * null: the default budget for the first pass's contacts (budget.ts).
   */
  maxIterations: number | null;
}

/** Settings before the simulation configures them (tight, for a projection used alone). */
export const DEFAULT_PROJECTION: ProjectionSettings = { tolerance: 1e-9, maxIterations: 200 };

/** What one projection did. */
export interface ProjectionResult {
  /** Passes (LCP solve and move). */
  iterations: number;
  /** Gauss–Seidel sweeps over all passes. */
  sweeps: number;
  /** Deepest penetration left (m, ≥ 0). */
  penetration: number;
  /** penetration ≤ settings.tolerance: the step met its projection tolerance. */
  converged: boolean;
}

/** The projection's warm start: position multipliers (kg·m) by contact key. */
export type ProjectionMemory = NonNullable<ContactMemory["projection"]>;

/** Projection passes (gaps, LCP, move) per step at most. */
export const PROJECTION_PASSES = 10;

/**
 * The lift (m) of a held contact (project's `held`) the projection leaves: a tenth of the
 * activation gap past which the next step lets the contact go (ACTIVATION_TOLERANCE).
 */
export const HOLD_TOLERANCE = 1e-7;

/**
 * The contacts a projection holds on their surface before its passes (ContactProjection
 * .hold), by key: Moreau–Jean's pushing contacts of the jointed groups it redid.
 */
export interface HeldContacts {
  /** Their keys (the first `count`). */
  keys: Float64Array;
  /**
   * 1 for a contact that did not strike in the step (u_n⁻ ≥ −ACTIVATION_TOLERANCE/h): held
   * at g = 0 from either side. 0: an impact's, only its lift undone (its penetration, the
   * step's overshoot, is the passes' and their counted work's: the impulses' work on the
   * mean velocity counted the potential energy it lost as taken out).
   */
  persistent: Uint8Array;
  /**
   * Out: each one's normal impulse (N·s, along its row's normal as the step's P) of the
   * hold's velocity changes, M δv = H_nᵀ ν: a share of the step's contact force (hold).
   */
  impulse: Float64Array;
  count: number;
  /**
   * The normal velocity (m/s) the hold leaves: HOLD_TOLERANCE/h, whose share of the next
   * step's predicted gap g + h u_n/2 is a twentieth of ACTIVATION_TOLERANCE.
   */
  rateTolerance: number;
  /** The joints' velocities projected onto G v = −Ct at the current pose (null: none). */
  projectJointVelocities: (() => void) | null;
}

/**
 * The joints a projection moves the contacts' bodies along (project's `joints`): their set
 * and the time their Jacobian is taken at (the step's end).
 */
export interface ProjectedJoints {
  set: ConstraintSet;
  t: number;
  /**
   * 1 by body index for the bodies the joints hold: a pass none of whose contacts touches
   * one takes the factored operator (Y H_nᵀ = M⁻¹ H_nᵀ there, G M⁻¹ H_nᵀ = 0).
   */
  bodies: Uint8Array;
}

/**
 * Contacts a pass takes on the joints' constrained metric at most (jointPass: a dense
 * operator, a column of numDofs each); more take the factored operator M⁻¹ alone.
 */
const JOINT_PASS_CONTACTS = 64;

/**
 * A pass overshot by about its move when a contact ends separated beyond its first-order
 * gap by more than this fraction of the deepest penetration (plus the tolerance): its
 * linearization missed the gap's change by about half the move (ContactProjection
 * .overshot); the line search halves such moves.
 */
const OVERSHOOT = 0.5;

/** Halvings, and then regula falsi steps, of a pass's line search at most (searchLine). */
const SEARCH_STEPS = 40;

/** Gauss–Seidel sweeps of a hold pass at most (a few held contacts). */
const HOLD_SWEEPS = 100;

/** Wall time (ms) the projection spends, added to its owner's figures. */
export interface ProjectionTimes {
  broadMs: number;
  narrowMs: number;
  projectionMs: number;
}

export class ContactProjection {
  settings: ProjectionSettings = { ...DEFAULT_PROJECTION };
  /**
   * Called once in a projection, before its passes' first move (not in one whose passes
   * move nothing; after the hold's): the integrator's energy balance takes the potential
   * energy there.
   */
  beforeMove: (() => void) | null = null;
  private readonly set: ContactSet;
  /** The LCP solver: PGS measured in gap units (see project()). */
  private readonly solver = new PgsSolver({ residual: "lcp-local" });
  private readonly yOff: Int32Array;
  private readonly Y: Float64Array;
  private readonly rhs: Float64Array;
  private q: Float64Array = new Float64Array(0);
  private mu: Float64Array = new Float64Array(0);
  /** Warm start: key → slot of memMu (first pass of the last projection). */
  private readonly memory = new KeyTable();
  private memMu: Float64Array = new Float64Array(0);
  private memKey: Float64Array = new Float64Array(0);
  private memCount = 0;
  /**
   * The fem–fem pass: its contacts; its columns M⁻¹ H_kᵀ (numDofs each) and dense W, also
   * jointPass's Y H_kᵀ and W (each pass builds its own before using them).
   */
  private readonly faceSet: ContactSet;
  private faceCols: Float64Array = new Float64Array(0);
  private faceW: Float64Array = new Float64Array(0);
  /**
   * The last projection's lifts (m, ≥ 0) by contact key (liftOf): slot ← key, the carried
   * gap before the first pass (liftGap) and the lift (liftValue) of each contact that
   * penetrated before it.
   */
  private readonly lifted = new KeyTable();
  private liftKey: Float64Array = new Float64Array(0);
  private liftGap: Float64Array = new Float64Array(0);
  private liftValue: Float64Array = new Float64Array(0);
  private liftCount = 0;
  /**
   * The warm start and lifts held at a Simulation step's start (holdMemory), in
   * importMemory's form, its arrays reused (their length a capacity beyond the counts).
   */
  private readonly held = {
    count: 0,
    key: new Float64Array(0),
    mu: new Float64Array(0),
    lifted: { count: 0, key: new Float64Array(0), lift: new Float64Array(0) },
  };

  constructor(private readonly sys: BodySystem) {
    this.set = new ContactSet(sys);
    this.faceSet = new ContactSet(sys);
    const { yOff, size } = blockOffsets(sys);
    this.yOff = yOff;
    this.Y = new Float64Array(size);
    this.rhs = new Float64Array(sys.numDofs);
    this.velocity = new Float64Array(sys.numDofs);
    this.passPose = new PositionSnapshot(sys);
    this.passVelocity = new Float64Array(sys.numDofs);
  }

  /** Forgets the warm start and the lifts. */
  clear(): void {
    this.memory.clear();
    this.memCount = 0;
    this.forgetLifts();
  }

  private forgetLifts(): void {
    this.lifted.clear();
    this.liftCount = 0;
  }

  /**
   * How far (m, ≥ 0) the last projection lifted the contact of `key` out of penetration:
   * its carried gap after the projection minus before; 0 for a contact it found separated
   * or did not see, and after a step without a pass.
   */
  liftOf(key: number): number {
    const slot = this.lifted.get(key);
    return slot < 0 ? 0 : this.liftValue[slot];
  }

  /**
   * Projects the positions out of penetration. Cost per step, O(contacts)
   * (bench/README.md, "Contact position projection"):
   *  - Contacts: the step's own detection (at x_t, margin ≥ the model's) is carried to
   *    x_{t+h} (CarriedDetection) instead of detecting again, as long as it provably still
   *    lists every contact that can penetrate; otherwise, e.g. during a fast fall, contacts
   *    are detected afresh with the model's `margin` (m).
   *  - The target is g + H_n δq ≥ −τ/2 (τ = settings.tolerance), solved on the factored
   *    operator H_n M⁻¹ H_nᵀ (never assembled) by the velocity-form PGS
   *    (solvers/nonsmooth/pgs.ts) measured in gap units: it stops when
   *    ‖min(W_ii μ_i, w_i)‖∞ ≤ τ/2 with w = g + τ/2 + H_n δq, so every linearized gap is
   *    ≥ −τ and a contact with a multiplier is left at a gap in [−τ, 0] (or its own
   *    multiplier moved it by at most τ/2). Not separated: a contact pushed apart by more
   *    than ACTIVATION_TOLERANCE would leave the next step's active set, its body fall
   *    freely for a step and hit again, which spoils the contact solve's convergence. A
   *    warm start that pushes too far is thereby undone too. settings.maxIterations bounds
   *    the sweeps per step.
   *  - Warm start of the first pass by contact key from the previous step's first pass
   *    when that converged (remember), else from zero: where a drift repeats step after
   *    step (the contact solve's unconverged velocity error times h), so do the
   *    multipliers. A step without a pass leaves zero multipliers to the next.
   * δq is applied on the manifold (quaternions through the exponential map) and the pass
   * repeats on the gaps carried to the new pose (Siconos' computeh/computeJach loop) until
   * the deepest penetration is ≤ settings.tolerance, the sweeps are spent or after
   * PROJECTION_PASSES passes; a pass whose move its gaps' linearization overshoots (a
   * contact whose normal motion is nearly tangent to the move: overshot) is cut back along
   * the move to the surface's first crossing (searchLine). `projectJoints` (the joints' own position projection) runs
   * after each contact pass, so both constraint sets are satisfied together (block
   * Gauss–Seidel between the two); with `joints` (at most JOINT_PASS_CONTACTS contacts)
   * each pass moves along them to first order (jointPass), and the joints' projection
   * closes only the second order. Returns the passes and sweeps made and the deepest
   * penetration left (m, ≥ 0) among the carried gaps — the geometry is detected exactly
   * again at the next step's start, so their second-order error does not accumulate.
   * With `faces`, the fem–fem contacts are detected afresh (margin) in every round and,
   * when one penetrates beyond the tolerance, projected by their own pass (file comment).
   */
  project(
    detection: CarriedDetection,
    margin: number,
    times: ProjectionTimes,
    projectJoints?: () => void,
    faces: FemFaceContacts | null = null,
    held: HeldContacts | null = null,
    joints: ProjectedJoints | null = null,
  ): ProjectionResult {
    const t0 = performance.now();
    this.joints = joints;
    this.carriedDepth = null;
    if (held !== null && held.count > 0) this.hold(detection, margin, times, projectJoints, held);
    const { tolerance } = this.settings;
    // the budget follows the first pass's contacts when the model sets none
    let budget = this.settings.maxIterations ?? -1;
    let sweeps = budget;
    let it = 0;
    let pen = 0;
    let facePen = 0;
    for (;;) {
      pen = this.carry(detection, margin, times);
      const b = detection.buffer;
      if (faces !== null) {
        faces.detect(margin);
        facePen = 0;
        for (let k = 0; k < faces.buffer.count; k++)
          facePen = Math.max(facePen, -faces.buffer.gap[k]);
      }
      if (budget < 0) {
        budget = iterationBudget(null, "pgs", b.count + (faces?.buffer.count ?? 0));
        sweeps = budget;
      }
      if (Math.max(pen, facePen) <= tolerance || it >= PROJECTION_PASSES || sweeps <= 0) break;
      if (it === 0) {
        this.startLifts(detection);
        this.beforeMove?.();
      }
      // (the fem faces' pass moves after the other's: no line search there)
      const searched = faces === null && pen > tolerance;
      if (searched) {
        savePositions(this.sys, this.passPose);
        getVelocity(this.sys, this.passVelocity);
      }
      if (pen > tolerance) sweeps = this.pass(detection, it, sweeps);
      if (searched) this.keepPrediction();
      if (facePen > tolerance && sweeps > 0)
        sweeps -= this.facePass(faces as FemFaceContacts, sweeps);
      projectJoints?.();
      // a move its linearization overshot, searched along (searchLine; the next round
      // carries the detection to the pose reached, detected afresh where it no longer
      // covers it); the warm start kept is the multipliers of the move made
      if (searched) {
        this.passDepth = this.transportGaps(detection);
        if (this.overshot(pen, 1, true)) {
          const s = this.searchLine(detection, projectJoints, pen);
          if (it === 0) for (let i = 0; i < this.memCount; i++) this.memMu[i] *= s;
        }
      }
      it++;
    }
    // No pass: this step's multipliers are all zero, and so is the next one's warm start.
    if (it === 0) this.clear();
    else this.endLifts(detection);
    times.projectionMs += performance.now() - t0;
    const penetration = Math.max(pen, facePen);
    return {
      iterations: it,
      sweeps: budget - sweeps,
      penetration,
      converged: penetration <= tolerance,
    };
  }

  /**
   * The detection carried to the current pose (detected afresh with `margin` where it no
   * longer covers the motion: project()); returns the deepest penetration (m, ≥ 0).
   */
  private carry(detection: CarriedDetection, margin: number, times: ProjectionTimes): number {
    const carried = this.carriedDepth;
    this.carriedDepth = null;
    if (carried !== null) return carried;
    if (!detection.covers()) {
      detection.detector.margin = margin;
      detection.detect();
      times.broadMs += detection.detector.stats.broadMs;
      times.narrowMs += detection.detector.stats.narrowMs;
      detection.covers();
    }
    return detection.transport();
  }

  /**
   * The pose and velocities before the pass running, which its line search moves from
   * (searchLine); its contacts' gaps g, first-order changes H_n δq (m) (keepPrediction)
   * and transported gaps (transportGaps), by index: pass() takes the detection's contacts
   * in its order, each at its index.
   */
  private readonly passPose: PositionSnapshot;
  private readonly passVelocity: Float64Array;
  private passGap: Float64Array = new Float64Array(0);
  private passChange: Float64Array = new Float64Array(0);
  private passNow: Float64Array = new Float64Array(0);
  private passCount = 0;
  /** The deepest signed penetration of the pass's contacts transported to its end (m). */
  private passDepth = 0;
  /**
   * The detection's deepest penetration (m, ≥ 0) at the current pose, when transportGaps
   * carried it there and it covered the pose: the next round's carry() takes it instead of
   * transporting again (the pose does not change in between); null otherwise.
   */
  private carriedDepth: number | null = null;

  /** The pass's contacts' gaps and their first-order changes H_n δq (this.rhs). */
  private keepPrediction(): void {
    const { set } = this;
    const nc = set.count;
    this.passCount = nc;
    this.passGap = grow(this.passGap, nc);
    this.passChange = grow(this.passChange, nc);
    this.passNow = grow(this.passNow, nc);
    for (let i = 0; i < nc; i++) {
      this.passGap[i] = set.gap[i];
      this.passChange[i] = set.rowTimes(i, 0, this.rhs);
    }
  }

  /**
   * Whether the fraction s of the pass's move overshot, read on the pass's contacts
   * transported to the pose reached (transportGaps): one separated beyond its first-order
   * gap g + s H_n δq (keepPrediction) by more than OVERSHOOT times the deepest penetration
   * the pass started from (`deepest`, m) plus the tolerance, the linearization having
   * missed the gap's change by about the move itself; with `surface`, also one whose
   * first-order gap is ≤ 0 (a contact the move takes onto the surface, or not out)
   * separated beyond it by more than the tolerance: pushed apart by the second order, the
   * contact would leave the next step's active set (project()).
   */
  private overshot(deepest: number, s: number, surface: boolean): boolean {
    const { passGap, passChange } = this;
    const { tolerance } = this.settings;
    const bound = OVERSHOOT * deepest + tolerance;
    for (let i = 0; i < this.passCount; i++) {
      const predicted = passGap[i] + s * passChange[i];
      const over = this.passNow[i] - predicted;
      if (over > bound || (surface && predicted <= 0 && over > tolerance)) return true;
    }
    return false;
  }

  /**
   * passNow ← the pass's contacts' gaps (m) carried to the current pose (the detection's
   * transport, not detected afresh: the same contacts as the pass's, in its order; the
   * next round detects afresh where the pose left the detection's cover); returns the
   * deepest signed penetration among them (m, negative when all are open).
   */
  private transportGaps(detection: CarriedDetection): number {
    const covered = detection.covers();
    const deepest = detection.transport();
    this.carriedDepth = covered ? deepest : null;
    let d = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.passCount; i++) {
      const g = detection.gap[i];
      this.passNow[i] = g;
      d = Math.max(d, -g);
    }
    return d;
  }

  /**
   * The pose at the fraction s of the pass's move from its start, the joints projected;
   * returns the deepest signed penetration of the pass's contacts there (transportGaps).
   */
  private moveAlong(
    s: number,
    detection: CarriedDetection,
    projectJoints: (() => void) | undefined,
  ): number {
    restorePositions(this.sys, this.passPose);
    setVelocity(this.sys, this.passVelocity);
    movePositions(this.sys, this.rhs, s);
    projectJoints?.();
    return this.transportGaps(detection);
  }

  /**
   * A line search along a pass's move δq (this.rhs) that overshot (overshot, `surface`):
   * the gap's first-order model g + H_n δq fails where the contact's normal motion is
   * nearly tangent to the move's. A rod hinged at the floor's height over its tip, the tip
   * a sphere of r = 5 cm 5 cm into the floor at a = 0.018 rad (dg/da = L sin a): the pass's
   * Newton step g / (L sin a) turned it 4.7 rad, past the floor's other side, where a
   * position servo then pressed it into the floor from there; the smallest turn out is to
   * a = acos((L − r)/L). And from a deep overshoot of the step near there, the pass's
   * convex second order left the tip 0.16 to 0.45 mm above the floor, out of the next
   * step's active set, where the servo (k_p = 1e6, commanded inside the floor) pulled it
   * 4 cm in within the step, for the next projection to set it back against the servo,
   * whose work it does not count: a cycle each step, 5.9e3 J of energy.error a step.
   * The move is halved while a contact overshoots by about the move or every gap is open,
   * then, between that fraction (still penetrating) and the last halving's (every gap
   * open), the fraction whose deepest penetration is within [0, tolerance] is found by
   * regula falsi (Illinois): the first crossing of the surface along the move. Leaves the
   * pose there (at the open side when SEARCH_STEPS do not find it; at the halving when
   * there is no crossing: a contact still in where another overshoots) and returns the
   * fraction s.
   */
  private searchLine(
    detection: CarriedDetection,
    projectJoints: (() => void) | undefined,
    deepest: number,
  ): number {
    const half = 0.5 * this.settings.tolerance;
    let open = 1;
    // (the pass's contacts transported to its end: overshot read them)
    let openDepth = this.passDepth - half;
    let s = 1;
    let depth = 0;
    for (let k = 0; k < SEARCH_STEPS; k++) {
      s *= 0.5;
      depth = this.moveAlong(s, detection, projectJoints) - half;
      const gross = this.overshot(deepest, s, false);
      if (!gross && Math.abs(depth) <= half) return s;
      // still in (the bracket's closed end), or a contact that no longer overshoots by
      // the move's size though another still does (no crossing to find: s kept)
      if (!gross && (depth > half || !(openDepth < -half))) break;
      open = s;
      openDepth = depth;
    }
    // no bracket (a contact still in at the open side, or none left to cross): s kept
    if (!(depth > half && openDepth < -half)) return s;
    let closed = s;
    let closedDepth = depth;
    // Illinois: the end kept twice in a row has its value halved
    let side = 0;
    for (let k = 0; k < SEARCH_STEPS; k++) {
      const x =
        Number.isFinite(openDepth) && Number.isFinite(closedDepth)
          ? (closed * openDepth - open * closedDepth) / (openDepth - closedDepth)
          : 0.5 * (closed + open);
      const d = this.moveAlong(x, detection, projectJoints) - half;
      if (Math.abs(d) <= half) return x;
      if (d > 0) {
        closed = x;
        closedDepth = d;
        if (side === 1) openDepth *= 0.5;
        side = 1;
      } else {
        open = x;
        openDepth = d;
        if (side === -1) closedDepth *= 0.5;
        side = -1;
      }
    }
    this.moveAlong(open, detection, projectJoints);
    return open;
  }

  /** The joints of the projection running (project's `joints`; jointPass). */
  private joints: ProjectedJoints | null = null;

  /** The held contacts' keys (hold). */
  private readonly heldKeys = new KeyTable();

  /**
   * The contacts of `held` kept on their surface at both levels, as bilateral constraints
   * beside the joints (RATTLE's position and velocity constraints, by block Gauss–Seidel
   * with theirs): the gaps moved onto g = 0 (g + H_n δq = 0, δq = M⁻¹ H_nᵀ μ, μ of either
   * sign, Gauss–Seidel on W = H_n M⁻¹ H_nᵀ; of a persistent contact from either side, of an
   * impact's only a lift) and the normal velocities u_n = H_n v at the pose reached set to 0
   * (u_n + W ν = 0, M δv = H_nᵀ ν, ν summed into held.impulse), `projectJoints` after a move
   * and held.projectJointVelocities after a velocity change, until the largest drift is
   * ≤ HOLD_TOLERANCE and the largest |u_n| ≤ held.rateTolerance, or PROJECTION_PASSES.
   * H_n is taken at CarriedDetection.contactPoint (transport's midpoint is half a slide off).
   * Moreau–Jean's pushing contacts of the jointed groups its step redid at the position
   * level (moreau-jean.ts, "Jointed groups touched"): their velocity-level law, its normal
   * rows at the step's start, lets the gap drift by what the exact motion has not (a point
   * moving on a curve, O(h²) a step; the joints' end velocity projection, which moves no
   * position) and leaves the end velocity a normal component at the end pose, O(h) of the
   * curve's: in the next step's predicted gap g + h u_n/2 it passed the activation gap, and
   * the contact was let go, its body to fall and land with an impulse (a crank's tip 82
   * times in 30 s at 1/60 s, a motor crank's 63 times at 5 ms). The moves are the drift
   * correction of the contacts' constraint, as the joints' projection is of theirs: their
   * potential energy change is not counted as work (counted, the steady turntable rod of
   * moreau-jean.ts, whose joints' projection raised its tip with no kinetic energy, read
   * energy.error 0.05 J in 30 s at 5 ms with its energy kept to 5e-8 J); the kinetic energy
   * the velocity changes make is the impulses' work (the owner's: moreau-jean.ts).
   */
  private hold(
    detection: CarriedDetection,
    margin: number,
    times: ProjectionTimes,
    projectJoints: (() => void) | undefined,
    held: HeldContacts,
  ): void {
    const { sys, set, heldKeys } = this;
    heldKeys.clear();
    heldKeys.reserve(held.count);
    for (let k = 0; k < held.count; k++) heldKeys.set(held.keys[k], k);
    held.impulse.fill(0, 0, held.count);
    for (let it = 0; it < PROJECTION_PASSES; it++) {
      this.carry(detection, margin, times);
      const b = detection.buffer;
      const { gap } = detection;
      set.reset(b.count);
      this.heldPoint = grow(this.heldPoint, 3 * b.count);
      const point = this.heldPoint;
      this.heldDrift = grow(this.heldDrift, b.count);
      const drift = this.heldDrift;
      for (let k = 0; k < b.count; k++) {
        const slot = heldKeys.get(b.key[k]);
        if (slot < 0) continue;
        // (the lever arms of the normal velocity at the true contact point)
        detection.contactPoint(k, point, 3 * k);
        const i = set.push(b.bodyA[k], b.bodyB[k], b.key, b.normal, point, gap, k);
        drift[i] = held.persistent[slot] === 1 ? gap[k] : Math.max(gap[k], 0);
      }
      const nc = set.count;
      if (nc === 0) return;
      this.q = grow(this.q, nc);
      const un = this.q;
      set.normalVelocities(un, 0, nc);
      let lift = 0;
      let rate = 0;
      for (let i = 0; i < nc; i++) {
        lift = Math.max(lift, Math.abs(drift[i]));
        rate = Math.max(rate, Math.abs(un[i]));
      }
      const move = lift > HOLD_TOLERANCE;
      const turn = rate > held.rateTolerance;
      if (!move && !turn) return;
      inverseMassBlocks(sys, this.Y, this.yOff, 1);
      set.computeResponse(this.Y, this.yOff, 1, true);
      const W = set.delassus(1, 1);
      if (move) {
        this.bilateral(W, drift, nc, 1e-3 * HOLD_TOLERANCE);
        // the angular velocities kept in the world (movePositions turns them with the
        // bodies: a rod turning at 3 rad/s about the vertical, its pitch corrected by
        // 1e-4 rad, was given a pitch rate of 1.2e-3 rad/s and its tip left the floor)
        markStateChanged(sys);
        addPositionIncrement(sys, this.rhs, 1);
        projectJoints?.();
      }
      if (turn) {
        // (u_n measured before the move: the next pass measures it again; after the move and
        // its joints' projection, whose velocity projection would otherwise take the
        // motors' share of ν unreported)
        this.bilateral(W, un, nc, 1e-3 * held.rateTolerance);
        for (let i = 0; i < nc; i++) held.impulse[heldKeys.get(set.key[i])] += this.mu[i];
        const u = this.velocity;
        getVelocity(sys, u);
        for (let i = 0; i < u.length; i++) u[i] += this.rhs[i];
        setVelocity(sys, u);
        held.projectJointVelocities?.();
      }
    }
  }

  /**
   * rhs ← M⁻¹ H_nᵀ μ with W μ = −r (r of the first nc rows, W = H_n M⁻¹ H_nᵀ; μ of either
   * sign), by Gauss–Seidel until |r + W μ| ≤ tolerance (hold).
   */
  private bilateral(W: FactoredDelassus, r: Float64Array, nc: number, tolerance: number): void {
    const { diagonal, row } = this;
    this.mu = grow(this.mu, nc);
    const mu = this.mu;
    mu.fill(0, 0, nc);
    for (let sweep = 0; sweep < HOLD_SWEEPS; sweep++) {
      let residual = 0;
      for (let i = 0; i < nc; i++) {
        W.rowBlockTimes(i, mu, row);
        W.diagonalBlock(i, diagonal);
        const w = r[i] + row[0];
        residual = Math.max(residual, Math.abs(w));
        mu[i] -= w / diagonal[0];
      }
      if (residual <= tolerance) break;
    }
    this.rhs.fill(0);
    W.addResponse(mu, 1, this.rhs);
  }
  private readonly diagonal = new Float64Array(1);
  private readonly row = new Float64Array(1);
  /** The held contacts' gaps to undo (hold). */
  private heldDrift: Float64Array = new Float64Array(0);
  /** The held contacts' points (3 per detected contact: CarriedDetection.contactPoint). */
  private heldPoint: Float64Array = new Float64Array(0);
  /** The generalized velocity the hold changes (numDofs). */
  private readonly velocity: Float64Array;

  /**
   * One pass on the detection's contacts (round `it`): the LCP on the factored operator,
   * the move. Returns the sweeps left.
   */
  private pass(detection: CarriedDetection, it: number, sweeps: number): number {
    const { sys, set } = this;
    const b = detection.buffer;
    set.reset(b.count);
    for (let k = 0; k < b.count; k++)
      set.push(b.bodyA[k], b.bodyB[k], b.key, b.normal, detection.point, detection.gap, k);
    const joints = this.joints;
    if (joints !== null && set.count <= JOINT_PASS_CONTACTS)
      for (let i = 0; i < set.count; i++) {
        const a = set.bodyA[i];
        const c = set.bodyB[i];
        if ((a >= 0 && joints.bodies[a] === 1) || (c >= 0 && joints.bodies[c] === 1))
          return this.jointPass(joints, it, sweeps);
      }
    inverseMassBlocks(sys, this.Y, this.yOff, 1);
    set.computeResponse(this.Y, this.yOff, 1, true);
    const W = set.delassus(1, 1);
    const iterations = this.solveGaps(W, it, sweeps);
    this.rhs.fill(0);
    W.addResponse(this.mu, 1, this.rhs);
    movePositions(sys, this.rhs, 1);
    return sweeps - iterations;
  }

  /**
   * The pass's LCP on the set's contacts, into this.mu: the target g + H δq ≥ −tolerance/2,
   * solved to the residual tolerance/2 (see above), warm-started on round 0 (whose outcome
   * is remembered), cold after. Returns the sweeps made.
   */
  private solveGaps(W: NonsmoothProblem["W"], it: number, sweeps: number): number {
    const set = this.set;
    const nc = set.count;
    const half = 0.5 * this.settings.tolerance;
    this.q = grow(this.q, nc);
    this.mu = grow(this.mu, nc);
    for (let k = 0; k < nc; k++) this.q[k] = set.gap[k] + half;
    if (it === 0) this.warmStart();
    else this.mu.fill(0, 0, nc);
    const res = this.solver.solve({ contacts: nc, contactDim: 1, W, q: this.q }, this.mu, {
      maxIterations: sweeps,
      tolerance: half,
      warmStart: true,
    });
    if (!Number.isFinite(res.residual))
      throw new ContactSolveError(`contact projection diverged: ${res.message ?? "NaN"}`);
    if (it === 0) this.remember(res.converged);
    return res.iterations;
  }

  /**
   * pass on the joints' constrained metric: the smallest move in the kinetic metric that
   * keeps the joints closed to first order, δq = Y H_nᵀ μ with
   *   Y = M⁻¹ − M⁻¹ Gᵀ S⁻¹ G M⁻¹,  S = G M⁻¹ Gᵀ  (G the joints' Jacobian at joints.t),
   * the LCP on the dense W = H_n Y H_nᵀ (column p = H_n Y H_pᵀ), as the joint limits'
   * projection (actuators/limit-problem.ts). On M⁻¹ alone, the joints' projection after
   * each pass (block Gauss–Seidel) undid most of each move of a light body on a heavy
   * chain: a 50 g finger on a 20 kg arm's hand, landed 1 cm into the floor, gained 4 % of
   * it a pass, and its penetration stayed for 8 steps (PROJECTION_PASSES a step).
   */
  private jointPass(joints: ProjectedJoints, it: number, sweeps: number): number {
    const { sys, set } = this;
    const m = set.count;
    const n = sys.numDofs;
    this.faceCols = grow(this.faceCols, m * n);
    this.faceW = grow(this.faceW, m * m);
    const cols = this.faceCols;
    const ws = projectionWorkspace(joints.set);
    ws.factorAt(joints.t);
    for (let p = 0; p < m; p++) {
      const col = cols.subarray(p * n, p * n + n);
      this.rhs.fill(0);
      set.addRowTranspose(p, 0, 1, this.rhs);
      massSolve(sys, this.rhs, col);
      joints.set.multiply(col, ws.c);
      ws.correction(ws.c, ws.du);
      for (let j = 0; j < n; j++) col[j] += ws.du[j];
    }
    for (let p = 0; p < m; p++) {
      const col = cols.subarray(p * n, p * n + n);
      for (let r = 0; r < m; r++) this.faceW[r * m + p] = set.rowTimes(r, 0, col);
    }
    const iterations = this.solveGaps(this.faceW, it, sweeps);
    const mu = this.mu;
    this.rhs.fill(0);
    for (let p = 0; p < m; p++) {
      const f = mu[p];
      if (f === 0) continue;
      for (let j = 0; j < n; j++) this.rhs[j] += f * cols[p * n + j];
    }
    movePositions(sys, this.rhs, 1);
    return sweeps - iterations;
  }

  /**
   * One pass on the fem face contacts of `faces` (detected at the current positions): the
   * LCP w = W μ + g + τ/2 ≥ 0 ⊥ μ ≥ 0 with W = H_n M⁻¹ H_nᵀ dense, column k = H_n
   * (M⁻¹ H_kᵀ) (M⁻¹ = 1/m per node, a rigid body's inverse inertia on its rotation: a
   * rigid point on a face), solved to τ/2 as the other pass,
   * then δq = Σ_k μ_k M⁻¹ H_kᵀ. No warm start; at most `sweeps`. Returns the sweeps made.
   */
  private facePass(faces: FemFaceContacts, sweeps: number): number {
    const { sys, faceSet: set } = this;
    const half = 0.5 * this.settings.tolerance;
    const b = faces.buffer;
    set.reset(b.count);
    for (let k = 0; k < b.count; k++) {
      const i = set.push(b.bodyA[k], b.bodyB[k], b.key, b.normal, b.point, b.gap, k);
      set.setTriangle(i, faces.nodes, faces.weights, k);
    }
    const m = set.count;
    const n = sys.numDofs;
    this.faceCols = grow(this.faceCols, m * n);
    this.faceW = grow(this.faceW, m * m);
    this.q = grow(this.q, m);
    this.mu = grow(this.mu, m);
    const cols = this.faceCols;
    for (let p = 0; p < m; p++) {
      const col = cols.subarray(p * n, p * n + n);
      col.fill(0);
      set.addRowTranspose(p, 0, 1, col);
      massSolve(sys, col, col);
    }
    for (let p = 0; p < m; p++) {
      const col = cols.subarray(p * n, p * n + n);
      for (let r = 0; r < m; r++) this.faceW[r * m + p] = set.rowTimes(r, 0, col);
    }
    for (let k = 0; k < m; k++) {
      this.q[k] = set.gap[k] + half;
      this.mu[k] = 0;
    }
    const res = this.solver.solve(
      { contacts: m, contactDim: 1, W: this.faceW, q: this.q },
      this.mu,
      {
        maxIterations: sweeps,
        tolerance: half,
        warmStart: true,
      },
    );
    if (!Number.isFinite(res.residual))
      throw new ContactSolveError(`contact projection diverged: ${res.message ?? "NaN"}`);
    this.rhs.fill(0);
    for (let p = 0; p < m; p++) {
      const f = this.mu[p];
      if (f === 0) continue;
      for (let j = 0; j < n; j++) this.rhs[j] += f * cols[p * n + j];
    }
    movePositions(sys, this.rhs, 1);
    return res.iterations;
  }

  /** The penetrating contacts' carried gaps before the first pass, by key (liftOf). */
  private startLifts(detection: CarriedDetection): void {
    const b = detection.buffer;
    const { gap } = detection;
    this.forgetLifts();
    let n = 0;
    for (let k = 0; k < b.count; k++) if (gap[k] < 0) n++;
    this.lifted.reserve(n);
    this.liftKey = grow(this.liftKey, n);
    this.liftGap = grow(this.liftGap, n);
    this.liftValue = grow(this.liftValue, n);
    for (let k = 0; k < b.count; k++) {
      if (!(gap[k] < 0)) continue;
      const slot = this.liftCount++;
      this.lifted.set(b.key[k], slot);
      this.liftKey[slot] = b.key[k];
      this.liftGap[slot] = gap[k];
      this.liftValue[slot] = 0;
    }
  }

  /** The lifts: the carried gaps after the last pass minus those startLifts kept. */
  private endLifts(detection: CarriedDetection): void {
    const b = detection.buffer;
    const { gap } = detection;
    for (let k = 0; k < b.count; k++) {
      const slot = this.lifted.get(b.key[k]);
      if (slot >= 0) this.liftValue[slot] = Math.max(0, gap[k] - this.liftGap[slot]);
    }
  }

  /** mu ← the last projection's first-pass multipliers of the contacts with known keys. */
  private warmStart(): void {
    const { set, mu } = this;
    for (let i = 0; i < set.count; i++) {
      const slot = this.memory.get(set.key[i]);
      mu[i] = slot < 0 ? 0 : this.memMu[slot];
    }
  }

  /**
   * Remembers the positive multipliers of the pass just solved by contact key, or nothing
   * when the solve stopped at the sweep limit: an unconverged iterate may push contacts
   * apart that the next step does not need pushed, and with the sweeps spent before that
   * is undone they leave the active set, and more steps then need a projection
   * (bench/README.md, "Contact position projection").
   */
  private remember(converged: boolean): void {
    const { set, mu } = this;
    const nc = converged ? set.count : 0;
    this.memory.clear();
    this.memory.reserve(nc);
    this.memMu = grow(this.memMu, nc);
    this.memKey = grow(this.memKey, nc);
    let n = 0;
    for (let i = 0; i < nc; i++) {
      if (!(mu[i] > 0)) continue;
      this.memory.set(set.key[i], n);
      this.memMu[n] = mu[i];
      this.memKey[n] = set.key[i];
      n++;
    }
    this.memCount = n;
  }

  /** Copies of the warm start and the lifts, for simulation snapshots. */
  exportMemory(): ProjectionMemory {
    const n = this.liftCount;
    return {
      count: this.memCount,
      key: this.memKey.slice(0, this.memCount),
      mu: this.memMu.slice(0, this.memCount),
      lifted: { count: n, key: this.liftKey.slice(0, n), lift: this.liftValue.slice(0, n) },
    };
  }

  /** Holds the warm start and the lifts (a Simulation step's start); allocates nothing once warm. */
  holdMemory(): void {
    const h = this.held;
    const n = this.memCount;
    h.key = grow(h.key, n);
    h.mu = grow(h.mu, n);
    // loops, not set(subarray): a view is an allocation, and this runs every step
    for (let i = 0; i < n; i++) {
      h.key[i] = this.memKey[i];
      h.mu[i] = this.memMu[i];
    }
    h.count = n;
    const l = h.lifted;
    const m = this.liftCount;
    l.key = grow(l.key, m);
    l.lift = grow(l.lift, m);
    for (let i = 0; i < m; i++) {
      l.key[i] = this.liftKey[i];
      l.lift[i] = this.liftValue[i];
    }
    l.count = m;
  }

  /** The memory holdMemory held, back (a failed step undone). */
  restoreHeldMemory(): void {
    this.importMemory(this.held);
  }

  /** Restores what exportMemory gave (its lengths checked by the decoder). */
  importMemory(p: ProjectionMemory): void {
    const n = p.count;
    const key = p.key.subarray(0, n);
    const mu = p.mu.subarray(0, n);
    this.memKey = grow(this.memKey, n);
    this.memMu = grow(this.memMu, n);
    this.memKey.set(key);
    this.memMu.set(mu);
    this.memory.reserve(n);
    for (let i = 0; i < n; i++) this.memory.set(key[i], i);
    this.memCount = n;
    this.forgetLifts();
    const lifted = p.lifted;
    if (lifted === undefined) return;
    const m = lifted.count;
    this.liftKey = grow(this.liftKey, m);
    this.liftGap = grow(this.liftGap, m);
    this.liftValue = grow(this.liftValue, m);
    this.lifted.reserve(m);
    for (let i = 0; i < m; i++) {
      this.lifted.set(lifted.key[i], i);
      this.liftKey[i] = lifted.key[i];
      this.liftValue[i] = lifted.lift[i];
    }
    this.liftCount = m;
  }
}
