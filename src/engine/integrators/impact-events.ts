/**
 * The impacts of jointed bodies at their instants (moreau-jean.ts, `step`).
 *
 * Moreau–Jean applies Newton's law between a step's ends, to the contacts its index set
 * activates at the start. Where the impacts cascade within a step (Newton's cradle at
 * 5 ms: its 1 mm gaps close in about 1.1 ms each at 0.89 m/s), the contacts that close
 * later in the step are met at the next step's start with their gaps already gone and
 * their balls' velocities not yet exchanged, and the step's impulses, with the joints held
 * at the velocity level over the whole step, do not pass the momentum on ball by ball: the
 * cradle example lost 56 % of its swing in 60 s at 5 ms (35 % of its energy). The contacts
 * of unjointed bodies are located in closed form within the step (impact-location.ts); a
 * jointed body's normal motion is the mechanism's, which no closed form gives. So the step
 * is split at its impacts (the event-driven scheme within the time-stepping one):
 *
 *  1. At the current time t_k (the step's start, then each impact) the contacts are
 *     detected as for a step of the time left r = t + h − t_k with γ = 1 (the contacts
 *     whose linear prediction g + r u_n⁻ closes within it: NonsmoothContact
 *     .updateIndexSet). Each event contact (restitution e > 0, no friction, no fem–fem
 *     contact, a jointed body at one end at least: the others are impact-location.ts's)
 *     that approaches (u_n < −V_EPS) closes at the first root τ of
 *         g + u_n s + ½ a_n s² = 0,   τ = 2 g / (−u_n + √(u_n² − 2 a_n g)),
 *     with a_n = H_n D_prev the normal component of the last smooth step's mean
 *     acceleration (0 where the memory holds none; then τ = g/|u_n|).
 *  2. A contact with g ≤ NOW_GAP (1e-12 m) or τ ≤ NOW·h (1e-9 of the step; g ≤ 0
 *     included: a piece that overshot) meets its impact now: with the contacts touching
 *     it (g ≤ 2 ACTIVATION_TOLERANCE, through the bodies they share) it takes Newton's law
 *     at once, zero duration, with the joints:
 *         M Δv = Hᵀ P + Gᵀ λ,   G Δv = 0,
 *         w = H (v⁻ + Δv) + e min(H v⁻, 0) ≥ 0 ⊥ P ≥ 0,
 *     Δv = Σ_j P_j x_j with x_j = M⁻¹H_jᵀ projected onto G x = 0 in the kinetic metric
 *     (x − M⁻¹Gᵀ S⁻¹ G x, S = G M⁻¹ Gᵀ: the joints' projection workspace,
 *     constraints/project.ts), the LCP with the Delassus matrix D_ij = H_i x_j solved by
 *     Lemke (exact). At e = 1 it keeps the kinetic energy: ΔT = Σ P_i (u_i⁺ + u_i⁻)/2 = 0
 *     on the contacts with P_i > 0 (u_i⁺ = −u_i⁻), and the momentum about any hinge axis
 *     (a hinge's reaction has no moment about it). The kinetic energy it changes (e < 1)
 *     is the contacts' work (removedEnergy); its impulses are reported with the step's
 *     contacts (NonsmoothContact.addImpact: normal force P/h over the whole step).
 *  3. Otherwise the integrator takes its own step (its halvings, error control and
 *     projections included) to the earliest τ, the approaching event contacts deferred
 *     (NonsmoothContact.defer: not activated in that piece, whose index set would take a
 *     contact within ε_act of closing, Newton's law at the piece's start, first order in
 *     its gap: a 6e-8 m gap turned the normal enough to miss the bob's closed form below
 *     by 2.6e-7 m/s), and the loop goes on from 1. τ misses the gap's curvature (a_n
 *     holds no (dH/dt) v term, sphere on sphere), so the first piece typically ends 1e-8
 *     to 1e-7 m short and a second, shorter piece closes it (Newton's iteration on the
 *     gap): two pieces an impact. The piece to the step's end, no impact due within it,
 *     is the integrator's step as without events (nothing deferred).
 * At most MAX_EVENTS impacts and MAX_PIECES pieces a step: the rest of the step is then
 * the integrator's step whole (Newton's law on its active contacts together, as without
 * events), and the step's stats say so (impactsResolved false; impacts: those met). A step in which no event contact closes is the
 * integrator's step, unchanged (its detection runs twice; none without a pair with e > 0).
 * Newton's cradle at 5 ms: its swing energy within 2.4e-4 over 60 s (35 % lost before),
 * ball 5's first swing 29.997° of ball 1's 30° (19.8° before); its cascade step (4 impacts)
 * takes 9 pieces, 177 of the 12000 steps split, Newton iterations 2.83 a step (2.62).
 * Left as without events: contacts with friction (the impact's Coulomb law) and impacts
 * that touch one; fem–fem contacts; the joint limits (not in the impact's rows).
 * The energy balance weighs a split step's dissipative forces piece by piece, each impact
 * a piece of length 0 (SubstepObserver.substepDone(t, 0)), so that the piece after it
 * starts from its velocities (from the velocities before it, a bob on a 0.5 N s/m damper
 * bouncing at e = 1 put −0.15 J into energy.error in 5 s at 1/60 s; now 8.4e-6 J). The
 * State's joint forces on a split step are its last piece's (the impact's joint impulse
 * not in them). A piece that ends at an impact changes the step size the smooth scheme's O(h²)
 * energy error goes with: a hinged bar bouncing on the floor at e = 1 loses 5e-5 of its
 * energy in 10 s at 1/60 s (to rounding before: the velocity-level step is reversible on a
 * single hinge), where a pendulum bob at e = 0.6 now keeps e^{2k} of its swing energy to
 * 7e-5 (2.8e-2 before).
 */
import type { ConstraintSet } from "../constraints/constraint-set";
import { projectionWorkspace } from "../constraints/project";
import type { NonsmoothContact } from "../contact/nonsmooth-contact";
import { ACTIVATION_TOLERANCE } from "../dynamics/one-step-problem";
import { grow } from "../math/grow";
import {
  type BodySystem,
  getVelocity,
  kineticEnergy,
  massSolve,
  setVelocity,
} from "../model/body-system";
import { LemkeSolver } from "../solvers/nonsmooth/lemke";
import type { NonsmoothProblem } from "../solvers/nonsmooth/types";
import type { AccelerationStepper } from "./acceleration-step";
import {
  type IntegratorMemory,
  resetStepStats,
  type StepStats,
  type SubstepObserver,
} from "./integrator";

/** Impacts a step resolves at their instants at most (file comment). */
export const MAX_EVENTS = 16;
/** Pieces a step is split into at most (file comment, 3). */
const MAX_PIECES = 4 * MAX_EVENTS;
/** Gap (m) and fraction of the step within which an impact is met now (file comment, 2). */
const NOW_GAP = 1e-12;
const NOW = 1e-9;
/** Normal speed (m/s) below which a contact does not approach. */
const V_EPS = 1e-6;

/** The integrator's step from t of h, its figures into (or summed into) stats; its sub-steps. */
export type StepFrom = (t: number, h: number, stats: StepStats) => number;

export class ImpactEvents {
  /** The impacts resolved in the running step (stats.impacts). */
  private impacts = 0;
  /** Whether the running step met more than it resolves (file comment; stats.impactsResolved). */
  private exhausted = false;
  /** The contacts' normal velocities, times to impact, and the impact's selection. */
  private u: Float64Array = new Float64Array(0);
  private take: Uint8Array = new Uint8Array(0);
  /** The taken contacts' indices, Delassus matrix, q, impulses and responses x_j. */
  private rows: Int32Array = new Int32Array(0);
  private D: Float64Array = new Float64Array(0);
  private q: Float64Array = new Float64Array(0);
  private P: Float64Array = new Float64Array(0);
  private X: Float64Array = new Float64Array(0);
  private readonly f: Float64Array;
  private readonly v: Float64Array;
  private readonly col: Float64Array;
  /** The impact's LCP (its arrays set at each impact). */
  private readonly lcp: NonsmoothProblem = {
    contacts: 0,
    contactDim: 1,
    W: new Float64Array(0),
    q: new Float64Array(0),
  };
  private readonly rowRates: Float64Array;
  private readonly lemke = new LemkeSolver();
  /** 1 for the bodies the impact reaches (the touching contacts' closure). */
  private readonly reached: Uint8Array;

  private readonly sys: BodySystem;
  /** The joints and motors (null: none). */
  private readonly constraints: ConstraintSet | null;

  constructor(
    /** The integrator's stepper: the system, the joints, removedEnergy. */
    private readonly stepper: AccelerationStepper,
    private readonly contact: NonsmoothContact,
    /** 1 for a body a joint, motor or joint limit holds (moreau-jean.ts jointedBodies). */
    private readonly jointed: Uint8Array,
    /** The integrator's memory: the last step's mean acceleration (file comment, 1). */
    private readonly memory: IntegratorMemory,
  ) {
    const sys = stepper.sys;
    this.sys = sys;
    this.constraints = stepper.constraints;
    this.f = new Float64Array(sys.numDofs);
    this.v = new Float64Array(sys.numDofs);
    this.col = new Float64Array(sys.numDofs);
    this.rowRates = new Float64Array(stepper.constraints?.numRows ?? 0);
    this.reached = new Uint8Array(sys.numBodies);
  }

  /**
   * The step from t of h: `whole` when no event contact closes within it, else split at
   * each impact (file comment), `part` taking the pieces between and summing their
   * figures into `stats` (zeroed first). Returns the sub-steps.
   */
  advance(
    t: number,
    h: number,
    stats: StepStats,
    whole: StepFrom,
    part: StepFrom,
    observer: SubstepObserver | null,
  ): number {
    this.impacts = 0;
    this.exhausted = false;
    this.contact.beginImpacts(h);
    // (no pair with restitution: no impact to resolve, and no detection of its own)
    if (!this.contact.params.anyRestitution()) return whole(t, h, stats);
    const nsc = this.contact;
    let tau = this.next(h, h);
    if (tau >= h) {
      nsc.clearDeferred();
      return whole(t, h, stats);
    }
    resetStepStats(stats);
    let done = 0;
    let substeps = 0;
    let pieces = 0;
    while (done < h) {
      const rest = h - done;
      if (tau <= 0) {
        this.impact(t + done);
        this.impacts++;
        // the energy balance's next piece starts from the impact's velocities: a sub-step of
        // length 0 (its forces' work 0), as a sub-step's end becomes the next one's start
        observer?.substepDone(t + done, 0);
      } else {
        // (the last piece ends on the step's end exactly, as without events)
        const piece = Math.min(tau, rest);
        if (piece === rest) nsc.clearDeferred();
        substeps += part(t + done, piece, stats);
        nsc.clearDeferred();
        pieces++;
        done = piece === rest ? h : done + piece;
        if (done >= h) break;
      }
      if (this.impacts >= MAX_EVENTS || pieces >= MAX_PIECES) {
        // more impacts than a step resolves: the rest whole (file comment)
        this.exhausted = this.next(h - done, h) < h - done;
        nsc.clearDeferred();
        substeps += part(t + done, h - done, stats);
        break;
      }
      tau = this.next(h - done, h);
    }
    stats.impacts = this.impacts;
    stats.impactsResolved = !this.exhausted;
    return substeps;
  }

  /**
   * At t, with r of the step of h left: 0 when an event contact meets its impact now (the
   * impact's contacts marked in `take`), the earliest τ < r of one closing later, or
   * Infinity when none closes within r or the impact touches a contact with friction.
   */
  private next(r: number, h: number): number {
    const nsc = this.contact;
    const set = nsc.set;
    nsc.clearDeferred();
    nsc.updateIndexSet(r, 1);
    const m = set.count;
    if (m === 0) return Number.POSITIVE_INFINITY;
    this.u = grow(this.u, m);
    this.take = grow(this.take, m);
    set.normalVelocities(this.u, 0, m);
    const prev = this.memory.previousValid ? this.memory.previousAcceleration : null;
    let earliest = Number.POSITIVE_INFINITY;
    let now = false;
    this.take.fill(0);
    for (let i = 0; i < m; i++) {
      const un = this.u[i];
      if (!this.isEvent(i) || !(un < -V_EPS)) continue;
      const g = set.gap[i];
      const an = prev === null ? 0 : set.rowTimes(i, 0, prev);
      const D = un * un - 2 * an * g;
      // (pushed away before it closes)
      if (!(D >= 0)) continue;
      const tau = (2 * g) / (Math.sqrt(D) - un);
      if (g <= NOW_GAP || tau <= NOW * h) {
        this.take[i] = 1;
        now = true;
      } else {
        earliest = Math.min(earliest, tau);
        // open until τ: not active in the piece before it (file comment, 3)
        nsc.defer(set.key[i]);
      }
    }
    if (now) nsc.clearDeferred();
    if (!now) return earliest < r ? earliest : Number.POSITIVE_INFINITY;
    return this.closeTouching(m) ? 0 : Number.POSITIVE_INFINITY;
  }

  /** Contact i of the detected set is an event contact (file comment, 1). */
  private isEvent(i: number): boolean {
    const set = this.contact.set;
    if (!(set.restitution[i] > 0) || set.friction[i] !== 0 || set.triangle[i] !== 0) return false;
    const a = set.bodyA[i];
    const b = set.bodyB[i];
    return (a >= 0 && this.jointed[a] === 1) || (b >= 0 && this.jointed[b] === 1);
  }

  /**
   * Adds to `take` the contacts touching the taken ones' bodies, through the bodies they
   * share (file comment, 2); false when one of them has friction or a fem–fem side.
   */
  private closeTouching(m: number): boolean {
    const set = this.contact.set;
    const { take, reached } = this;
    reached.fill(0);
    for (let i = 0; i < m; i++)
      if (take[i] === 1) {
        this.reach(set.bodyA[i]);
        this.reach(set.bodyB[i]);
      }
    for (let grew = true; grew; ) {
      grew = false;
      for (let i = 0; i < m; i++) {
        if (take[i] === 1) continue;
        const a = set.bodyA[i];
        const b = set.bodyB[i];
        const near = (a >= 0 && reached[a] === 1) || (b >= 0 && reached[b] === 1);
        if (!near || set.gap[i] > 2 * ACTIVATION_TOLERANCE) continue;
        take[i] = 1;
        if (this.reach(a)) grew = true;
        if (this.reach(b)) grew = true;
      }
    }
    for (let i = 0; i < m; i++)
      if (take[i] === 1 && (set.friction[i] !== 0 || set.triangle[i] !== 0)) return false;
    return true;
  }

  /** Marks dynamic body b reached (closeTouching); whether it was not yet. */
  private reach(b: number): boolean {
    if (b < 0 || this.sys.dofOffset[b] < 0 || this.reached[b] === 1) return false;
    this.reached[b] = 1;
    return true;
  }

  /**
   * Newton's law at once on the taken contacts at t, with the joints (file comment, 2).
   */
  private impact(t: number): void {
    const set = this.contact.set;
    const { sys, f, v } = this;
    const n = sys.numDofs;
    let k = 0;
    this.rows = grow(this.rows, set.count);
    for (let i = 0; i < set.count; i++) if (this.take[i] === 1) this.rows[k++] = i;
    this.D = grow(this.D, k * k);
    this.q = grow(this.q, k);
    this.P = grow(this.P, k);
    this.X = grow(this.X, k * n);
    const joints = this.constraints !== null && this.constraints.numRows > 0;
    const ws = joints ? projectionWorkspace(this.constraints as ConstraintSet) : null;
    if (ws !== null) ws.factorAt(t);
    // x_j = M⁻¹H_jᵀ on the joints' tangent in the kinetic metric, D_ij = H_i x_j
    const x = this.col;
    for (let j = 0; j < k; j++) {
      f.fill(0);
      set.addRowTranspose(this.rows[j], 0, 1, f);
      massSolve(sys, f, x);
      if (ws !== null) {
        const rates = this.rowRates;
        (this.constraints as ConstraintSet).multiply(x, rates, ws.factoredG);
        ws.correction(rates, ws.du);
        for (let d = 0; d < n; d++) x[d] += ws.du[d];
      }
      this.X.set(x, j * n);
      for (let i = 0; i < k; i++) this.D[i * k + j] = set.rowTimes(this.rows[i], 0, x);
    }
    for (let i = 0; i < k; i++) {
      const un = this.u[this.rows[i]];
      this.q[i] = un + set.restitution[this.rows[i]] * Math.min(un, 0);
      this.P[i] = 0;
    }
    // (W dense with row stride k, its first k² entries; q's first k)
    const lcp = this.lcp;
    lcp.contacts = k;
    lcp.W = this.D;
    lcp.q = this.q;
    this.lemke.solve(lcp, this.P);
    const before = kineticEnergy(sys);
    getVelocity(sys, v);
    for (let j = 0; j < k; j++) {
      const p = this.P[j];
      if (p === 0) continue;
      const o = j * n;
      for (let d = 0; d < n; d++) v[d] += p * this.X[o + d];
    }
    setVelocity(sys, v);
    for (let j = 0; j < k; j++) if (this.P[j] > 0) this.contact.addImpact(this.rows[j], this.P[j]);
    // the contacts' work (the energy balance, simulation/monitor.ts)
    this.stepper.removedEnergy += before - kineticEnergy(sys);
  }
}
