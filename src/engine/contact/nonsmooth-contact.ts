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
 *                  at impacts (up to γ h |u_n|). The detection margin is raised to
 *                  γ h·2 max|v_point| for the step so no contact that the prediction would
 *                  activate is missed.
 *  assemble        the contact Jacobian H (local frames (n, t1, t2), see contact-set.ts)
 *                  and the Delassus matrix
 *                      W_c = (c_v/h)·H W⁻¹ Hᵀ
 *                  with W the integrator's iteration matrix (joints held): for Moreau–Jean
 *                  c_v = h, so an impulse P changes the end velocity by Δv = W⁻¹ Hᵀ P and
 *                  the local velocity by W_c P. Fast path (no joints, W block-diagonal, i.e.
 *                  no coupling springs): W_c is kept factored (FactoredDelassus: per
 *                  contact side the rows of H and W_X⁻¹ H_Xᵀ from each body's w×w block
 *                  W_X⁻¹, M⁻¹/(1 + h r_M) when W is the mass matrix), so the PGS runs in
 *                  velocity form at O(contacts) per sweep. Otherwise one
 *                  column W⁻¹ H_kᵀ per contact row through stepper.solveConstrained (W⁻¹
 *                  with the joints held), and W_c dense.
 *  solve           q = H v_free + e·u_n⁻ on the normal rows (the Newton impact law
 *                  u_n⁺ + e u_n⁻ ≥ 0 ⊥ P_n ≥ 0 folded into q), q_t = H_t v_free, and with
 *                  Coulomb friction the 3-D friction-contact problem (De Saxcé), without
 *                  friction the LCP on the normal rows; any of the nonsmooth solvers
 *                  (solvers/nonsmooth), warm-started from the previous step's impulses of
 *                  the contacts with the same key (world impulse re-expressed in the new
 *                  frame).
 *  addAcceleration Δa = (1/h) W⁻¹ Hᵀ P (the impulse as a force P/h over the step).
 *  saveMemory      Siconos saveYandLambdaInMemory: impulses by key for the warm start,
 *                  the end-of-step local velocities for the reported gaps.
 *  project         TimeSteppingProjectOnConstraints: positions onto g ≥ 0 in the kinetic
 *                  metric (see the method).
 * Units: impulses N·s, local velocities m/s, gaps m.
 */
import type { ContactStateOut } from "../../../schemas/state";
import {
  ACTIVATION_GAMMA,
  ACTIVATION_TOLERANCE,
  type OneStepProblem,
} from "../dynamics/one-step-problem";
import type { NewtonStepper, SchemeCoefficients } from "../dynamics/stepper";
import type { CollisionDetector } from "../geometry/collide";
import { ContactBuffer } from "../geometry/contact-buffer";
import { invertSmall } from "../math/small-dense";
import { addPositionIncrement, type BodySystem } from "../model/body-system";
import { decodeFloat64, encodeFloat64, SnapshotError } from "../model/state-codec";
import { createNonsmoothSolver, PgsSolver } from "../solvers/nonsmooth";
import type { FactoredDelassus } from "../solvers/nonsmooth/factored";
import type {
  ContactDim,
  NonsmoothResult,
  NonsmoothSolver,
  NonsmoothSolverName,
} from "../solvers/nonsmooth/types";
import { blockOffsets, ContactSet, inverseMassBlocks } from "./contact-set";
import { KeyTable } from "./key-table";
import { boundingRadii, type PairParameters } from "./setup";

/**
 * Warm start by proximity (m): a contact whose key is new takes the remembered impulse of
 * the nearest previous contact of the same body pair within this distance. Needed because
 * feature labels are not unique where features coincide exactly (two equal boxes stacked
 * flush: an incident vertex on a reference edge is labelled by the sign of round-off).
 */
export const WARM_START_RADIUS = 1e-3;

export interface NonsmoothContactSettings {
  solver: NonsmoothSolverName;
  maxIterations: number;
  tolerance: number;
}

export interface ProjectionSettings {
  /**
   * Largest penetration (m) left after the projection (the model's
   * solver.projectionTolerance): the passes stop once every gap is ≥ −tolerance, and each
   * pass's LCP is solved to the "lcp-local" residual ≤ tolerance (see project()).
   */
  tolerance: number;
  /** Gauss–Seidel sweeps per step at most, over all passes (solver.projectionIterations). */
  maxIterations: number;
}

/** The schema's defaults (solver.projectionTolerance, projectionIterations). */
export const DEFAULT_PROJECTION: ProjectionSettings = { tolerance: 1e-9, maxIterations: 200 };
/** What one projection did. */
export interface ProjectionResult {
  /** Passes (LCP solve and move). */
  iterations: number;
  /** Gauss–Seidel sweeps over all passes. */
  sweeps: number;
  /** Deepest penetration left (m, ≥ 0). */
  penetration: number;
}

/** Projection passes (gaps, LCP, move) per step at most. */
export const PROJECTION_PASSES = 10;

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
}

/** Warm-start memory of NonsmoothContact in a snapshot (Float64 data as base64 bytes). */
export interface NonsmoothMemory {
  count: number;
  key: string;
  bodyA: number[];
  bodyB: number[];
  impulse: string;
  point: string;
  /** The projection's warm start: position multipliers (kg·m) by contact key. */
  projection?: { count: number; key: string; mu: string };
}

function growF(a: Float64Array, n: number): Float64Array {
  return a.length >= n ? a : new Float64Array(Math.max(n, 2 * a.length));
}

/** a[i..i+2]·b[j..j+2]. */
function rowDot(a: Float64Array, i: number, b: Float64Array, j: number): number {
  return a[i] * b[j] + a[i + 1] * b[j + 1] + a[i + 2] * b[j + 2];
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
  };
  /** Rows per contact of the current problem (3 with friction, else 1). */
  dim: ContactDim = 1;
  projection: ProjectionSettings = { ...DEFAULT_PROJECTION };

  private readonly buffer = new ContactBuffer(64);
  private readonly projSet: ContactSet;
  private solver: NonsmoothSolver;
  /** The projection's LCP solver: PGS measured in gap units (see project()). */
  private readonly projSolver = new PgsSolver({ residual: "lcp-local" });
  /**
   * Pose at which `buffer` was detected (centres, rotation matrices) and the margin used:
   * the projection transports the detected contacts from it (see project()). A negative
   * margin: no detection to reuse (before the first step, after clear()).
   */
  private readonly refPos: Float64Array;
  private readonly refRot: Float64Array;
  private refMargin = -1;
  /** Per body: the rotation T = R Rᵣₑ𝒻ᵀ since the detection pose (9 per body). */
  private readonly turn: Float64Array;
  /** Per shape: the radius about its core (sphere, capsule, cylinder), 0 for boxes and planes. */
  private readonly shapeRadius: Float64Array;
  /** Transported gaps and midpoints of the detected contacts (projection). */
  private tGap: Float64Array = new Float64Array(0);
  private tPoint: Float64Array = new Float64Array(0);
  /** Projection warm start: key → slot of projMemMu (first pass of the last projection). */
  private readonly projMemory = new KeyTable();
  private projMemMu: Float64Array = new Float64Array(0);
  private projMemKey: Float64Array = new Float64Array(0);
  private projMemCount = 0;
  private readonly rho: Float64Array;
  private readonly yOff: Int32Array;
  private readonly Y: Float64Array;
  private readonly n: number;
  /** Scratch of the diagonal-block inversions. */
  private readonly work = new Float64Array(36);
  // Per-contact work (grown on demand).
  private r: Float64Array = new Float64Array(0);
  private q: Float64Array = new Float64Array(0);
  private mu: Float64Array = new Float64Array(0);
  /** Normal relative velocities u_n⁻ at t and u_n⁺ at the end of the step (one per contact). */
  private uMinus: Float64Array = new Float64Array(0);
  private uPlus: Float64Array = new Float64Array(0);
  private impulse: Float64Array = new Float64Array(0);
  private projMu: Float64Array = new Float64Array(0);
  // Dense path.
  private cols: Float64Array = new Float64Array(0);
  private Wd: Float64Array = new Float64Array(0);
  private readonly rhs: Float64Array;
  // Operator of the current step: the factored one (fast path) or the dense Wd.
  private W: Float64Array | FactoredDelassus = new Float64Array(0);
  private factored: FactoredDelassus | null = null;
  private scale = 1;
  // Warm-start memory: key → slot in memImpulse (world impulse on body b, 3 per slot).
  private readonly memory = new KeyTable();
  private memImpulse: Float64Array = new Float64Array(0);
  /** Same memory by body pair: first slot of each pair, then a linked list (memNext). */
  private readonly memPair = new KeyTable();
  private memNext: Int32Array = new Int32Array(0);
  private memPoint: Float64Array = new Float64Array(0);
  private solverName: NonsmoothSolverName;
  private lastH = 0;
  private lastTheta = 0.5;

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
    this.projSet = new ContactSet(sys);
    this.solverName = settings.solver;
    this.solver = createNonsmoothSolver(settings.solver);
    this.rho = boundingRadii(detector.shapes, sys.numBodies);
    this.refPos = new Float64Array(3 * sys.numBodies);
    this.refRot = new Float64Array(9 * sys.numBodies);
    this.turn = new Float64Array(9 * sys.numBodies);
    this.shapeRadius = Float64Array.from(detector.shapes, ({ shape: sh }) =>
      sh.type === "sphere" || sh.type === "capsule" || sh.type === "cylinder" ? sh.radius : 0,
    );
    const { yOff, size } = blockOffsets(sys);
    this.yOff = yOff;
    this.Y = new Float64Array(size);
    this.n = sys.numDofs;
    this.rhs = new Float64Array(sys.numDofs);
    this.checkSolver();
  }

  /** Lemke solves the frictionless LCP only (solvers/nonsmooth/lemke.ts). */
  private checkSolver(solver = this.settings.solver): void {
    if (solver === "lemke" && this.params.anyFriction())
      throw new Error(
        'contact solver "lemke" solves frictionless contact only; with friction use pgs, pjacobi, apgd or barzilai-borwein',
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
    this.memory.clear();
    this.memPair.clear();
    this.memCount = 0;
    this.projMemory.clear();
    this.projMemCount = 0;
    this.set.reset(0);
    this.buffer.clear();
    this.refMargin = -1;
  }

  get activeCount(): number {
    return this.set.count;
  }

  /**
   * The total normal force of the last step (N): Σ P_n / h over its contacts, the sum of
   * the normalForce values states() reports; 0 before the first step. Allocates nothing.
   */
  get totalNormalForce(): number {
    if (this.lastH === 0) return 0;
    const p = this.impulse;
    const f = this.set.frame;
    let pn = 0;
    for (let i = 0; i < this.set.count; i++)
      pn += p[3 * i] * f[9 * i] + p[3 * i + 1] * f[9 * i + 1] + p[3 * i + 2] * f[9 * i + 2];
    return pn / this.lastH;
  }

  /**
   * Siconos updateIndexSets at (x_t, v_t): detection, then the active contacts (predicted
   * gap ≤ ε_act) into `set` with their restitution, friction, u⁻ and warm-start impulses.
   * Returns the number of active contacts.
   */
  updateIndexSet(h: number, gamma = ACTIVATION_GAMMA): number {
    const { sys, buffer, set } = this;
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
      vmax = Math.max(vmax, v + w * this.rho[b]);
    }
    this.detector.margin = Math.max(
      this.margin,
      2 * gamma * h * vmax * 1.01 + ACTIVATION_TOLERANCE,
    );
    this.detectAtCurrentPose();
    const ds = this.detector.stats;
    this.stats.broadMs += ds.broadMs;
    this.stats.narrowMs += ds.narrowMs;
    this.stats.detected = buffer.count;

    // Active index set: each detected contact is pushed (frame, Jacobian rows) and kept
    // when its predicted gap g + γ h u_n⁻ is within the activation tolerance.
    set.reset(buffer.count);
    this.uMinus = growF(this.uMinus, buffer.count);
    for (let k = 0; k < buffer.count; k++) {
      const i = set.push(
        buffer.bodyA[k],
        buffer.bodyB[k],
        buffer.key,
        buffer.normal,
        buffer.point,
        buffer.gap,
        k,
      );
      set.normalVelocities(this.uMinus, i, i + 1);
      if (set.gap[i] + gamma * h * this.uMinus[i] > ACTIVATION_TOLERANCE) set.count--;
    }
    const m = set.count;
    for (let i = 0; i < m; i++) {
      set.restitution[i] = this.params.restitutionOf(set.bodyA[i], set.bodyB[i]);
      set.friction[i] = this.params.frictionOf(set.bodyA[i], set.bodyB[i]);
    }
    let friction = false;
    for (let i = 0; i < m; i++) if (set.friction[i] > 0) friction = true;
    this.dim = friction ? 3 : 1;
    this.stats.active = m;
    this.warmStart();
    return m;
  }

  /** r ← the remembered impulses of contacts with known keys, in the new local frames. */
  private warmStart(): void {
    const { set, dim } = this;
    const nc = set.count;
    this.r = growF(this.r, 3 * nc);
    this.q = growF(this.q, 3 * nc);
    this.mu = growF(this.mu, nc);
    this.impulse = growF(this.impulse, 3 * nc);
    this.uPlus = growF(this.uPlus, nc);
    const f = set.frame;
    for (let i = 0; i < nc; i++) {
      this.mu[i] = set.friction[i];
      let slot = this.memory.get(set.key[i]);
      for (let k = 0; k < dim; k++) this.r[dim * i + k] = 0;
      if (slot < 0) slot = this.nearestRemembered(i);
      if (slot < 0) continue;
      const px = this.memImpulse[3 * slot];
      const py = this.memImpulse[3 * slot + 1];
      const pz = this.memImpulse[3 * slot + 2];
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

  private pairKey(a: number, b: number): number {
    return (a + 1) * (this.sys.numBodies + 2) + (b + 1);
  }

  /** The remembered contact of contact i's body pair nearest to its point within the radius, or −1. */
  private nearestRemembered(i: number): number {
    const { set } = this;
    let slot = this.memPair.get(this.pairKey(set.bodyA[i], set.bodyB[i]));
    let best = -1;
    let bestD = WARM_START_RADIUS * WARM_START_RADIUS;
    while (slot >= 0) {
      const dx = this.memPoint[3 * slot] - set.point[3 * i];
      const dy = this.memPoint[3 * slot + 1] - set.point[3 * i + 1];
      const dz = this.memPoint[3 * slot + 2] - set.point[3 * i + 2];
      const d = dx * dx + dy * dy + dz * dz;
      if (d <= bestD) {
        bestD = d;
        best = slot;
      }
      slot = this.memNext[slot];
    }
    return best;
  }

  /** True when the fast block-diagonal path applies (see the file comment). */
  private blockDiagonal(stepper: NewtonStepper): boolean {
    return !this.hasJoints && stepper.matrix.isBlockDiagonal();
  }

  /**
   * Siconos prepareNewtonIteration / OneStepNSProblem::preCompute: the Delassus operator
   * W_c = (c_v/h) H W⁻¹ Hᵀ for the stepper's iteration matrix at its current state.
   */
  assemble(stepper: NewtonStepper, c: SchemeCoefficients, h: number): void {
    const t0 = performance.now();
    const { set, dim } = this;
    this.scale = c.cv / h;
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
      this.cols = growF(this.cols, m * n);
      this.Wd = growF(this.Wd, m * m);
      const col = this.cols;
      for (let p = 0; p < m; p++) {
        const i = Math.floor(p / dim);
        const k = p - i * dim;
        this.rhs.fill(0);
        set.addRowTranspose(i, k, 1, this.rhs);
        const out = col.subarray(p * n, p * n + n);
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
      this.W = this.Wd;
    }
    this.stats.assemblyMs += performance.now() - t0;
  }

  /**
   * Siconos computeOneStepNSProblem: q from the free generalized velocity vFree, solve in
   * place on the warm-started impulses. Throws when the solver diverged (NaN).
   */
  solve(vFree: Float64Array): NonsmoothResult {
    const t0 = performance.now();
    const { set, dim } = this;
    const nc = set.count;
    set.localVelocity(vFree, dim, this.q);
    for (let i = 0; i < nc; i++) this.q[dim * i] += set.restitution[i] * this.uMinus[i];
    const res = this.solver.solve(
      { contacts: nc, contactDim: dim, W: this.W, q: this.q, mu: dim === 3 ? this.mu : undefined },
      this.r,
      {
        maxIterations: this.settings.maxIterations,
        tolerance: this.settings.tolerance,
        warmStart: true,
      },
    );
    this.stats.solverMs += performance.now() - t0;
    this.stats.iterations = res.iterations;
    this.stats.residual = res.residual;
    // Siconos CheckSolverOutput: a non-converged solve keeps its last iterate (reported in
    // the step's residual); a NaN is an error.
    if (res.status === "diverged" || !Number.isFinite(res.residual))
      throw new Error(`contact solver ${this.solverName} diverged: ${res.message ?? "NaN"}`);
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

  /**
   * Siconos saveYandLambdaInMemory: the world impulse of every active contact (on body b)
   * by key, for the next step's warm start, and the end-of-step local velocities u⁺ (from
   * the bodies' current velocities) for the reported gaps.
   */
  saveMemory(h: number, theta: number): void {
    const { set, dim } = this;
    const nc = set.count;
    this.lastH = h;
    this.lastTheta = theta;
    this.memory.clear();
    this.memPair.clear();
    this.memory.reserve(nc);
    this.memPair.reserve(nc);
    this.memImpulse = growF(this.memImpulse, 3 * nc);
    this.memPoint = growF(this.memPoint, 3 * nc);
    if (this.memNext.length < nc)
      this.memNext = new Int32Array(Math.max(nc, 2 * this.memNext.length));
    const f = set.frame;
    for (let i = 0; i < nc; i++) {
      let px = 0;
      let py = 0;
      let pz = 0;
      for (let k = 0; k < dim; k++) {
        const v = this.r[dim * i + k];
        px += v * f[9 * i + 3 * k];
        py += v * f[9 * i + 3 * k + 1];
        pz += v * f[9 * i + 3 * k + 2];
      }
      this.impulse[3 * i] = px;
      this.impulse[3 * i + 1] = py;
      this.impulse[3 * i + 2] = pz;
      this.memImpulse[3 * i] = px;
      this.memImpulse[3 * i + 1] = py;
      this.memImpulse[3 * i + 2] = pz;
      this.memory.set(set.key[i], i);
      this.memPoint[3 * i] = set.point[3 * i];
      this.memPoint[3 * i + 1] = set.point[3 * i + 1];
      this.memPoint[3 * i + 2] = set.point[3 * i + 2];
      const pk = this.pairKey(set.bodyA[i], set.bodyB[i]);
      this.memNext[i] = this.memPair.get(pk);
      this.memPair.set(pk, i);
    }
    this.memCount = nc;
    set.normalVelocities(this.uPlus, 0, nc);
  }

  /** Number of remembered contacts (the last step's active set). */
  private memCount = 0;

  /**
   * The warm-start memory as JSON-safe data (for simulation snapshots): per remembered
   * contact its key, bodies, world impulse and point, exact (float64 bytes).
   */
  exportMemory(): NonsmoothMemory {
    const n = this.memCount;
    const { set } = this;
    return {
      count: n,
      key: encodeFloat64(set.key.slice(0, n)),
      bodyA: Array.from(set.bodyA.subarray(0, n)),
      bodyB: Array.from(set.bodyB.subarray(0, n)),
      impulse: encodeFloat64(this.memImpulse.slice(0, 3 * n)),
      point: encodeFloat64(this.memPoint.slice(0, 3 * n)),
      projection: {
        count: this.projMemCount,
        key: encodeFloat64(this.projMemKey.slice(0, this.projMemCount)),
        mu: encodeFloat64(this.projMemMu.slice(0, this.projMemCount)),
      },
    };
  }

  /**
   * Restores what exportMemory gave (same model): the next step warm-starts exactly as the
   * exporting simulation's would. The last step's contacts are not restored (the State
   * lists none until the next step). Throws SnapshotError on malformed data.
   */
  importMemory(memory: unknown): void {
    const m = memory as Partial<NonsmoothMemory> | null;
    const n = m?.count;
    if (
      !m ||
      typeof n !== "number" ||
      !Number.isInteger(n) ||
      n < 0 ||
      !Array.isArray(m.bodyA) ||
      !Array.isArray(m.bodyB) ||
      m.bodyA.length !== n ||
      m.bodyB.length !== n ||
      typeof m.key !== "string" ||
      typeof m.impulse !== "string" ||
      typeof m.point !== "string"
    )
      throw new SnapshotError([
        { path: ["memory", "contact"], message: "malformed contact memory" },
      ]);
    const nb = this.sys.numBodies;
    for (const b of [...m.bodyA, ...m.bodyB])
      if (!Number.isInteger(b) || b < -1 || b >= nb)
        throw new SnapshotError([
          { path: ["memory", "contact"], message: `body index ${b} out of range` },
        ]);
    const key = decodeFloat64(m.key, n, ["memory", "contact", "key"]);
    const impulse = decodeFloat64(m.impulse, 3 * n, ["memory", "contact", "impulse"]);
    const point = decodeFloat64(m.point, 3 * n, ["memory", "contact", "point"]);
    this.clear();
    this.memImpulse = growF(this.memImpulse, 3 * n);
    this.memPoint = growF(this.memPoint, 3 * n);
    if (this.memNext.length < n) this.memNext = new Int32Array(n);
    this.memImpulse.set(impulse);
    this.memPoint.set(point);
    for (let i = 0; i < n; i++) {
      this.memory.set(key[i], i);
      const pk = this.pairKey(m.bodyA[i], m.bodyB[i]);
      this.memNext[i] = this.memPair.get(pk);
      this.memPair.set(pk, i);
    }
    this.memCount = n;
    this.lastH = 0;
    this.importProjectionMemory(m.projection);
  }

  /** The projection's part of importMemory (absent in snapshots from before it existed). */
  private importProjectionMemory(p: NonsmoothMemory["projection"] | undefined): void {
    if (p === undefined) return;
    const n = p?.count;
    if (
      p === null ||
      typeof n !== "number" ||
      !Number.isInteger(n) ||
      n < 0 ||
      typeof p.key !== "string" ||
      typeof p.mu !== "string"
    )
      throw new SnapshotError([
        { path: ["memory", "contact", "projection"], message: "malformed projection memory" },
      ]);
    const key = decodeFloat64(p.key, n, ["memory", "contact", "projection", "key"]);
    const mu = decodeFloat64(p.mu, n, ["memory", "contact", "projection", "mu"]);
    this.projMemKey = growF(this.projMemKey, n);
    this.projMemMu = growF(this.projMemMu, n);
    this.projMemKey.set(key);
    this.projMemMu.set(mu);
    this.projMemory.reserve(n);
    for (let i = 0; i < n; i++) this.projMemory.set(key[i], i);
    this.projMemCount = n;
  }

  /**
   * Detection at the current pose into `buffer` with the detector's current margin,
   * remembering the pose and the margin for the projection's transport.
   */
  private detectAtCurrentPose(): void {
    const { sys } = this;
    this.detector.detect(sys.pos, sys.quat, this.buffer);
    this.refPos.set(sys.pos);
    this.refRot.set(sys.rotation);
    this.refMargin = this.detector.margin;
  }

  /**
   * Whether `buffer` still lists every contact that can penetrate at the current pose: a
   * pair it lacks had gap ≥ refMargin at the detection pose, and its gap has since dropped
   * by at most δ_a + δ_b, δ_X = |x_X − x_X,ref| + ρ_X ‖R_X − R_X,ref‖_F bounding how far a
   * point of body X's shapes moved (ρ_X its bounding radius; a rotation by φ moves a point
   * at distance ρ by 2ρ sin(φ/2) = ρ ‖R − R_ref‖_F / √2). So the two largest δ summing to
   * at most refMargin suffice (a pair with a fixed body needs δ ≤ refMargin only).
   * Also fills turn (the rotations since the detection pose) for transportGaps.
   */
  private detectionCovers(): boolean {
    const { sys, refPos, refRot, turn, rho } = this;
    const R = sys.rotation;
    let d1 = 0;
    let d2 = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      const o = 9 * b;
      let f = 0;
      for (let k = 0; k < 9; k++) {
        const e = R[o + k] - refRot[o + k];
        f += e * e;
      }
      // T_ij = (row i of R)·(row j of Rᵣₑ𝒻).
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) turn[o + 3 * i + j] = rowDot(R, o + 3 * i, refRot, o + 3 * j);
      const dx = sys.pos[3 * b] - refPos[3 * b];
      const dy = sys.pos[3 * b + 1] - refPos[3 * b + 1];
      const dz = sys.pos[3 * b + 2] - refPos[3 * b + 2];
      const d = Math.sqrt(dx * dx + dy * dy + dz * dz) + rho[b] * Math.sqrt(f);
      if (d > d1) {
        d2 = d1;
        d1 = d;
      } else if (d > d2) d2 = d;
    }
    return d1 + d2 <= this.refMargin;
  }

  /**
   * The detected contacts carried to the current pose (turn from detectionCovers), into
   * tGap and tPoint. The normal n is kept and each side's core point moves rigidly with
   * its body: the surface point p_a = point − (gap/2) n, p_b = point + (gap/2) n, moved
   * inwards by the shape's radius ρ (sphere centre, capsule axis point; a cylinder's
   * radius too, exact for a rolling side contact and conservative by ρ(1 − cos φ) for a
   * rim point; ρ = 0 and the surface point itself for boxes and planes),
   * k_a = p_a − ρ_a n, k_b = p_b + ρ_b n, then
   * k_X' = x_X + T_X (k_X − x_X,ref), and
   *     g' = n·(k_b' − k_a') − ρ_a − ρ_b,   midpoint (k_a' + ρ_a n + k_b' − ρ_b n)/2.
   * Why the core and not the surface point: a sphere's contact point is no material point
   * (the sphere rolls under it); carried with the body's rotation φ it would raise the gap
   * by ρ(1 − cos φ) (4e-5 m for a 5 cm sphere turning 0.04 rad in a step). So: exact for a
   * box vertex or a sphere on a fixed plane, and for two spheres g' = n·(c_b' − c_a') −
   * ρ_a − ρ_b ≤ |c_b' − c_a'| − ρ_a − ρ_b, the true gap — the carried penetration is then
   * never less than the true one. Elsewhere (edge and face contacts of boxes) it is exact
   * to first order, like the Jacobian H_n. Returns the deepest carried penetration
   * max(0, −min g') (m).
   */
  /** Scratch of transportGaps: the two carried core points. */
  private readonly carried = new Float64Array(6);

  private transportGaps(): number {
    const { sys, buffer, refPos, turn, shapeRadius } = this;
    const nc = buffer.count;
    this.tGap = growF(this.tGap, nc);
    this.tPoint = growF(this.tPoint, 3 * nc);
    const { normal, point, gap } = buffer;
    const tp = this.tPoint;
    let gmin = 0;
    for (let k = 0; k < nc; k++) {
      const nx = normal[3 * k];
      const ny = normal[3 * k + 1];
      const nz = normal[3 * k + 2];
      const ra = shapeRadius[buffer.shapeA[k]];
      const rb = shapeRadius[buffer.shapeB[k]];
      const ha = 0.5 * gap[k] + ra;
      const hb = 0.5 * gap[k] + rb;
      const kp = this.carried;
      carryPoint(
        sys.pos,
        refPos,
        turn,
        buffer.bodyA[k],
        point[3 * k] - ha * nx,
        point[3 * k + 1] - ha * ny,
        point[3 * k + 2] - ha * nz,
        kp,
        0,
      );
      carryPoint(
        sys.pos,
        refPos,
        turn,
        buffer.bodyB[k],
        point[3 * k] + hb * nx,
        point[3 * k + 1] + hb * ny,
        point[3 * k + 2] + hb * nz,
        kp,
        3,
      );
      const ax = kp[0];
      const ay = kp[1];
      const az = kp[2];
      const bx = kp[3];
      const by = kp[4];
      const bz = kp[5];
      const g = nx * (bx - ax) + ny * (by - ay) + nz * (bz - az) - ra - rb;
      this.tGap[k] = g;
      // Midpoint of the surface points k_a' + ρ_a n and k_b' − ρ_b n.
      const c = 0.5 * (ra - rb);
      tp[3 * k] = 0.5 * (ax + bx) + c * nx;
      tp[3 * k + 1] = 0.5 * (ay + by) + c * ny;
      tp[3 * k + 2] = 0.5 * (az + bz) + c * nz;
      if (g < gmin) gmin = g;
    }
    return -gmin;
  }

  /**
   * TimeSteppingProjectOnConstraints (NewtonEulerDS, kinetic metric): after the step the
   * positions are moved by the smallest correction in the kinetic-energy metric that
   * cancels the penetrations to first order:
   *     minimize ½ δqᵀ M δq  subject to  g + H_n δq ≥ 0,
   * whose optimality conditions are the LCP
   *     w = (H_n M⁻¹ H_nᵀ) μ + g ≥ 0 ⊥ μ ≥ 0,   δq = M⁻¹ H_nᵀ μ
   * (μ a position-level multiplier, kg·m). Separated contacts enter as inequalities, so
   * the correction does not push a body into another. Velocities are not changed.
   *
   * Cost per step, O(contacts) (bench/README.md, "Contact position projection"):
   *  - Contacts: the step's own detection (at x_t, margin ≥ the model's) is carried to
   *    x_{t+h} (transportGaps) instead of detecting again, as long as it provably still
   *    lists every contact that can penetrate (detectionCovers: bodies moved less than the
   *    margin); otherwise, e.g. during a fast fall, contacts are detected afresh.
   *  - The target is g + H_n δq ≥ −τ/2 (τ = projection.tolerance), solved on the factored
   *    operator H_n M⁻¹ H_nᵀ (never assembled) by the velocity-form PGS
   *    (solvers/nonsmooth/pgs.ts) measured in gap units: it stops when
   *    ‖min(W_ii μ_i, w_i)‖∞ ≤ τ/2 with w = g + τ/2 + H_n δq, so every linearized gap is
   *    ≥ −τ and a contact with a multiplier is left at a gap in [−τ, 0] (or its own
   *    multiplier moved it by at most τ/2). Not separated: a contact pushed apart by more
   *    than ACTIVATION_TOLERANCE would leave the next step's active set, its body fall
   *    freely for a step and hit again, which spoils the contact solve's convergence
   *    (bench/README.md, "Contact position projection"). A warm start that
   *    pushes too far is thereby undone too. projection.maxIterations bounds the sweeps
   *    per step.
   *  - Warm start of the first pass by contact key from the previous step's first pass
   *    when that converged (saveProjectionMemory), else from zero: where a drift repeats
   *    step after step (the contact solve's unconverged velocity error times h), so do
   *    the multipliers. A step without a pass leaves zero multipliers to the next.
   * δq is applied on the manifold (quaternions through the exponential map) and the pass
   * repeats on the gaps carried to the new pose (Siconos' computeh/computeJach loop) until
   * the deepest penetration is ≤ projection.tolerance, the sweeps are spent or after
   * PROJECTION_PASSES passes. `projectJoints` (the joints' own position projection) runs
   * after each contact pass, so both constraint sets are satisfied together (block
   * Gauss–Seidel between the two). Returns the passes and sweeps made and the deepest
   * penetration left (m, ≥ 0) among the carried gaps — the geometry is detected exactly
   * again at the next step's start, so their second-order error does not accumulate.
   */
  project(projectJoints?: () => void): ProjectionResult {
    const t0 = performance.now();
    const { sys, projSet } = this;
    const { tolerance, maxIterations } = this.projection;
    let sweeps = maxIterations;
    let it = 0;
    let pen = 0;
    for (;;) {
      if (!this.detectionCovers()) {
        this.detector.margin = this.margin;
        this.detectAtCurrentPose();
        this.stats.broadMs += this.detector.stats.broadMs;
        this.stats.narrowMs += this.detector.stats.narrowMs;
        this.detectionCovers();
      }
      pen = this.transportGaps();
      if (pen <= tolerance || it >= PROJECTION_PASSES || sweeps <= 0) break;
      const b = this.buffer;
      projSet.reset(b.count);
      for (let k = 0; k < b.count; k++)
        projSet.push(b.bodyA[k], b.bodyB[k], b.key, b.normal, this.tPoint, this.tGap, k);
      inverseMassBlocks(sys, this.Y, this.yOff, 1);
      projSet.computeResponse(this.Y, this.yOff, 1, true);
      const W = projSet.delassus(1, 1);
      const nc = projSet.count;
      this.q = growF(this.q, nc);
      this.projMu = growF(this.projMu, nc);
      const mu = this.projMu;
      // Target g + H δq ≥ −tolerance/2, solved to the residual tolerance/2 (see above).
      const half = 0.5 * tolerance;
      for (let k = 0; k < nc; k++) this.q[k] = projSet.gap[k] + half;
      if (it === 0) this.projectionWarmStart();
      else mu.fill(0, 0, nc);
      const res = this.projSolver.solve({ contacts: nc, contactDim: 1, W, q: this.q }, mu, {
        maxIterations: sweeps,
        tolerance: half,
        warmStart: true,
      });
      if (!Number.isFinite(res.residual))
        throw new Error(`contact projection diverged: ${res.message ?? "NaN"}`);
      sweeps -= res.iterations;
      if (it === 0) this.saveProjectionMemory(res.converged);
      this.rhs.fill(0);
      W.addResponse(mu, 1, this.rhs);
      addPositionIncrement(sys, this.rhs, 1);
      projectJoints?.();
      it++;
    }
    // No pass: this step's multipliers are all zero, and so is the next one's warm start.
    if (it === 0) {
      this.projMemory.clear();
      this.projMemCount = 0;
    }
    this.stats.projectionMs += performance.now() - t0;
    return { iterations: it, sweeps: maxIterations - sweeps, penetration: pen };
  }

  /** projMu ← the last projection's first-pass multipliers of the contacts with known keys. */
  private projectionWarmStart(): void {
    const { projSet, projMu } = this;
    for (let i = 0; i < projSet.count; i++) {
      const slot = this.projMemory.get(projSet.key[i]);
      projMu[i] = slot < 0 ? 0 : this.projMemMu[slot];
    }
  }

  /**
   * Remembers the positive multipliers of the pass just solved by contact key, or nothing
   * when the solve stopped at the sweep limit: an unconverged iterate may push contacts
   * apart that the next step does not need pushed, and with the sweeps spent before that
   * is undone they leave the active set, and more steps then need a projection
   * (bench/README.md, "Contact position projection").
   */
  private saveProjectionMemory(converged: boolean): void {
    const { projSet, projMu } = this;
    const nc = converged ? projSet.count : 0;
    this.projMemory.clear();
    this.projMemory.reserve(nc);
    this.projMemMu = growF(this.projMemMu, nc);
    this.projMemKey = growF(this.projMemKey, nc);
    let n = 0;
    for (let i = 0; i < nc; i++) {
      if (!(projMu[i] > 0)) continue;
      this.projMemory.set(projSet.key[i], n);
      this.projMemMu[n] = projMu[i];
      this.projMemKey[n] = projSet.key[i];
      n++;
    }
    this.projMemCount = n;
  }

  /**
   * The active contacts of the last step for the State: bodies (ids), the contact point
   * and normal of the step (geometry at t), the gap linearized to the end of the step,
   *   g_{t+h} ≈ g_t + h((1−θ) u_n⁻ + θ u_n⁺)   (Moreau–Jean's position update),
   * the normal force P_n/h, the tangential force (P_t1 t1 + P_t2 t2)/h (world, on body b)
   * and the impulse F P (world, on body b, N·s).
   */
  states(ids: readonly string[]): ContactStateOut[] {
    const { set } = this;
    const out: ContactStateOut[] = [];
    const h = this.lastH;
    if (h === 0) return out;
    const th = this.lastTheta;
    for (let i = 0; i < set.count; i++) {
      const f = set.frame;
      const px = this.impulse[3 * i];
      const py = this.impulse[3 * i + 1];
      const pz = this.impulse[3 * i + 2];
      const pn = px * f[9 * i] + py * f[9 * i + 1] + pz * f[9 * i + 2];
      const name = (b: number) => (b < 0 ? "ground" : ids[b]);
      out.push({
        bodies: [name(set.bodyA[i]), name(set.bodyB[i])],
        point: [set.point[3 * i], set.point[3 * i + 1], set.point[3 * i + 2]],
        normal: [f[9 * i], f[9 * i + 1], f[9 * i + 2]],
        gap: set.gap[i] + h * ((1 - th) * this.uMinus[i] + th * this.uPlus[i]),
        normalForce: pn / h,
        tangentForce: [
          (px - pn * f[9 * i]) / h,
          (py - pn * f[9 * i + 1]) / h,
          (pz - pn * f[9 * i + 2]) / h,
        ],
        impulse: [px, py, pz],
      });
    }
    return out;
  }
}

/**
 * out[o..o+2] = the point (x, y, z) carried rigidly with body b since the reference pose:
 * x_b + T_b (p − x_b,ref) (T_b: row-major 3×3 at 9b); the point itself for ground (b < 0).
 */
function carryPoint(
  pos: Float64Array,
  refPos: Float64Array,
  turn: Float64Array,
  b: number,
  x: number,
  y: number,
  z: number,
  out: Float64Array,
  o: number,
): void {
  if (b < 0) {
    out[o] = x;
    out[o + 1] = y;
    out[o + 2] = z;
    return;
  }
  const t = 9 * b;
  const lx = x - refPos[3 * b];
  const ly = y - refPos[3 * b + 1];
  const lz = z - refPos[3 * b + 2];
  out[o] = pos[3 * b] + turn[t] * lx + turn[t + 1] * ly + turn[t + 2] * lz;
  out[o + 1] = pos[3 * b + 1] + turn[t + 3] * lx + turn[t + 4] * ly + turn[t + 5] * lz;
  out[o + 2] = pos[3 * b + 2] + turn[t + 6] * lx + turn[t + 7] * ly + turn[t + 8] * lz;
}
