/**
 * The impacts of a Moreau–Jean step located within it (moreau-jean.ts, step 7b).
 *
 * Moreau–Jean applies Newton's law u_n⁺ = −e u_n⁻ between the step's start and end
 * velocities and moves the positions by h((1 − θ) v_t + θ v⁺), as if the impulse acted over
 * the whole step. For a contact that rebounds (e > 0) both are first-order wrong in the
 * impact's time τ within the step: the end velocity keeps the smooth forces' share of the
 * impulse m a h (the contact held the body against its free acceleration a for the whole
 * step, where it rebounds at τ and flies the rest), and the position puts the rebound at
 * the step's middle. A ball dropped on a floor (normal coordinate g, free acceleration
 * a = −g_0, reaching the floor at speed |u_c|):
 *  - at e = 1 its apex stays but every bounce lags by h − 2τ ∈ [0, h] (the bounce period
 *    rounded up to whole steps, +1.5 % at h = 1/60 s);
 *  - at e < 1 its energy after the step differs from e² times the energy before by
 *    m g_0 (1 − e)((1 + e) g_t − h|u⁻|/2) (g_t the gap at the step's start): up to
 *    m g_0 e (1 − e) h |u⁻|/2 above it, and the position projection's lift of the step's
 *    penetration (at most h|u⁻|(1 − e)/2, its velocity kept) put m g_0 × the lift back at
 *    every impact, so that a ball at e = 0.8, h = 1/60 s bounced on every third step for
 *    ever (1.1e-3 m high after 60 s, where it rests from 4.06 s).
 *
 * The location: for each contact i with e_i > 0 that approached (u_n⁻ < −tol), was held
 * to Newton's law (u_n⁺ ≤ −e u_n⁻ + tol: it got an impulse) and is no fem–fem contact, the
 * exact motion of its normal coordinate under its free normal acceleration, constant over
 * the step, a = (H v_free − u_n⁻)/h − H M⁻¹ f_gyro (v_free the free velocity of the step's
 * first Newton iteration, before any contact force; the gyroscopic torques' share
 * −ω × I ω at (x_t, v_t) left out: it does no work, and in a a normal motion on its own
 * would turn it into energy, a box spinning at 50 rad/s had a from −6 to −33 m/s² at its
 * corners where gravity gives −9.81):
 *     g(t + s) = g₀ + u_n⁻ s + ½ a s²  until  g = 0  at  s = τ,
 *     τ = 2 g₀ / (−u_n⁻ + √D),  u_c = −√D,  D = u_n⁻² − 2 a g₀,
 * then the rebound −e u_c, so that at the step's end (σ = h − τ after the impact)
 *     u* = −e u_c + a σ,   g* = −e u_c σ + ½ a σ².
 * Symplectic Euler's velocities are the leapfrog's, lagging the positions by half a step
 * (theta-scheme.ts restagger; its positions exact under a constant force), and so are
 * backward Euler's, the same scheme under a constant force (ThetaScheme.velocityLag; read
 * in time, its ball lost 57 % of its apex over 20 bounces at e = 1): there u_n⁻ above
 * is u_n⁻ + s₀ a, the normal velocity at the step's start (s₀ the lag, lagStart: half the
 * step before), and the velocity left at the end is u* − s₁ a (s₁ = h/2, lagEnd), where the
 * next step, kicking a whole step, takes it from (a rebound ending at rest rests, 0). Read
 * as the velocities in time, a ball dropped at e = 1, 5 ms, met the floor g s₀ = 0.025 m/s
 * slow and left g s₁ slow again, its apex 3.4 % lower each bounce, 55 % after 20
 * (test/engine/integrators/leapfrog-bounce.test.ts).
 * Energy: the energy balance reads the kinetic energy off the lagging velocities, whose
 * share ½ m_n (u_lag² − u²) (m_n the contact's effective mass) changes sign with the normal
 * velocity at the rebound: ≈ m_n |a| h |u_c| at e = 1, booked as the floor's work it left
 * energy.dissipated at −0.136 J a bounce for a 1 kg ball at 5 ms (2.72 J of 3.9 J after 20
 * bounces). That change (lagEnergy) is the scheme's, not the contact's: moreau-jean.ts
 * books the located step's energy change less it, so that dissipated is the impacts' own
 * ½ m_n u_c² (1 − e²) and energy.error keeps the lag's bounded offset ±m_n |a| (h/2) |u_c|.
 * g₀ is the gap at the step's start minus what the last position projection lifted that
 * contact by (ContactProjection.liftOf): a ball the previous step carried into the floor
 * before its contact was active hit the floor within that step, τ ∈ [−h, 0) here, and its
 * lift is undone instead of kept (the lift alone, its velocity unchanged, adds m g₀ × the
 * lift: at e = 1 an apex that rose bounce by bounce). (The contacts this takes are active
 * once they close within the step, γ = 1: NonsmoothContact.locatedBodies; such a late one
 * is a contact the previous step left to the impact events, its body turning faster then,
 * or with Siconos' γ = ½ in the step's second half before 2026-12-07.)
 * A rebound that would be back on the surface by the step's end (g* ≤ 0) ends at rest:
 * u* = 0, g* = 0 (the rest of its Zeno sequence within the step). A contact with D ≤ 0
 * below the surface (g₀ < 0) and pulled into it (a < 0) was never above it within the step,
 * as far back as its motion reaches: it rests within the penetration the position
 * projection tolerates, and its u_n⁻ is what the pull gave it since, not an impact's. It ends
 * at rest at its start's gap, u* = 0, g* = g_t: Newton's law on that u_n⁻ (at e = 1 the
 * rebound of a resting contact's −a h) made a box rocking on its edges on a rough floor
 * chatter, every step a hop of its edge within the tolerance (long-run/tumbling-box.test.ts).
 * Other contacts with D ≤ 0 or |τ| > h are left as the step made them.
 *
 * The located contacts L get u* and g* as equalities: the velocities and positions move by
 * the smallest change in the kinetic metric, δv = M⁻¹ H_Lᵀ ν and δq = M⁻¹ H_Lᵀ μ with
 *     (H_L M⁻¹ H_Lᵀ) ν = u*_L − u_L⁺,   (H_L M⁻¹ H_Lᵀ) μ = g*_L − g_L,
 * g_L = g_t + h((1 − θ) u⁻ + θ u⁺) the step's linearized end gaps (Gauss–Seidel on the
 * factored operator, to round-off: a consistent singular system, four corners of a box
 * landing flat, converges in its range). Rows and M at (x_t), as the step's own. The
 * velocities are then scaled along the located contacts' normals so that the energy the
 * location changes is the model's (locate). For a
 * single contact on a fixed body under constant forces (a ball on a floor) this is the
 * exact event-driven step: its free flight is the exact parabola under θ = ½ and every
 * impact step now ends on the exact trajectory, apex e^{2k} H and period 2 e^k V/g to
 * round-off at any step. It stays event-capturing (one contact solve a step, no step split)
 * and costs a few passes over the located contacts, on steps with impacts only.
 * The located normal impulses ν + c ν̂ (N·s, the velocity moves below) are the step's
 * impulse beside the contact solve's P: M (v⁺ − v_t) = h f̄ + Hᵀ P + H_Lᵀ (ν + c ν̂), and
 * the contact report adds them to P (report: a ball's reported impulse on an impact step is
 * m (v⁺ − v⁻) − m g⃗ h, the contact solve's alone missed m g (h − (1 + e)τ) of it), with
 * the end gap g* in place of the linearized g_L.
 * Not located: the contacts of a body in a jointed group (a body that a joint, motor or
 * joint limit holds, directly or through other such bodies: the move, in the free metric
 * M⁻¹, would leave the joints and their velocity constraints; a ball beside a pendulum is
 * located, one hitting it is not: its impact is met at its instant, the step split there,
 * impact-events.ts) and fem–fem contacts (no factored operator). A turning body's
 * impacts, frictional or not, however slowly it turns (its contact point moving about its
 * centre faster than 1e-6 m/s: the lever arm this closed form holds turns within the step,
 * and Newton's law on the start's misses the end velocities by about the turn to the impact
 * × (1 + e)|u_n⁻|; a box turning 3.8e-4 rad a step struck at 3 m/s: 1.6e-3 m/s, and two of
 * its corners struck within one step, taken together here: 0.29 m/s,
 * test/engine/contact/tumbling-box.test.ts; but a round body's turning by at most TURN a
 * step, whose lever arm lies along the normal at any turn: impact-events.ts slowRound),
 * and every impact of a pair with friction (this move is along the normals alone: the
 * tangential impulse would keep the step's normal impulse) are met at their instants too
 * (impact-events.ts), before this step sees them.
 * Where a located contact shares a body with a resting one (a ball bouncing on a box that
 * rests on the floor), a uses the free acceleration, without the resting contact's force:
 * the correction is then first order, as the step itself.
 */
import { blockOffsets, ContactSet, inverseMassBlocks } from "../contact/contact-set";
import type { ContactProjection } from "../contact/projection";
import type { ForceEffector } from "../forces/effector";
import { potentialEnergy } from "../forces/energy";
import { grow } from "../math/grow";
import { type BodySystem, getVelocity, movePositions, setVelocity } from "../model/body-system";
import type { FactoredDelassus } from "../solvers/nonsmooth/factored";

/** Where the located impacts' shares go in the contact report (NonsmoothContact). */
export interface LocatedReport {
  /**
   * Contact i of the step's set was located: `impulse` (N·s, along its normal, on body b)
   * is added to the impulse reported for it.
   */
  addLocated(i: number, impulse: number): void;
}

/** Gauss–Seidel sweeps of each solve at most (one suffices for contacts on different bodies). */
const MAX_SWEEPS = 100;
/** Relative residual at which a solve stops: round-off. */
const SOLVE_TOLERANCE = 1e-12;

export class ImpactLocation {
  /** The step's contacts with restitution, their rows at (x_t). */
  private readonly set: ContactSet;
  private readonly Y: Float64Array;
  private readonly yOff: Int32Array;
  /** Index in the step's contact set of each contact of `set`. */
  private src: Int32Array = new Int32Array(0);
  /** The step's contact normals, 3 per contact (ContactSet.push's layout). */
  private normals: Float64Array = new Float64Array(0);
  private uMinus: Float64Array = new Float64Array(0);
  /** The gyroscopic torques' share of each contact's free normal acceleration (m/s²). */
  private aGyro: Float64Array = new Float64Array(0);
  private uFree: Float64Array = new Float64Array(0);
  private uPlus: Float64Array = new Float64Array(0);
  /** Right-hand sides u* − u⁺ and g* − g (NaN: not located). */
  private du: Float64Array = new Float64Array(0);
  private dg: Float64Array = new Float64Array(0);
  /** The free normal accelerations a (m/s²); the pull's and the push's multipliers. */
  private accel: Float64Array = new Float64Array(0);
  private x: Float64Array = new Float64Array(0);
  private mu: Float64Array = new Float64Array(0);
  /** The located normal impulses ν + c ν̂ (N·s) of the last locate. */
  private nu: Float64Array = new Float64Array(0);
  private readonly dv: Float64Array;
  private readonly v: Float64Array;
  private readonly block = new Float64Array(9);
  private op: FactoredDelassus | null = null;
  /**
   * The last locate's change over the step (J) of what the velocities' lags add to the
   * located contacts' kinetic energy, ½ m_n (u_lag² − u²) at the end less at the start
   * (m_n = 1/W_jj, u the normal velocity at the positions' time: file comment, "Energy");
   * 0 without lags.
   */
  lagEnergy = 0;

  constructor(
    private readonly sys: BodySystem,
    /** The model's force effectors, for the potential energy. */
    private readonly effectors: readonly ForceEffector[],
    /**
     * 1 for a body of a jointed group (file comment), by body index: its contacts are not
     * located. Empty: no joints.
     */
    private readonly jointed: Uint8Array = new Uint8Array(0),
  ) {
    this.set = new ContactSet(sys);
    const { yOff, size } = blockOffsets(sys);
    this.yOff = yOff;
    this.Y = new Float64Array(size);
    this.dv = new Float64Array(sys.numDofs);
    this.v = new Float64Array(sys.numDofs);
  }

  /**
   * Contact i of `step` may be located: it has restitution, is no fem–fem contact and
   * touches no jointed body (file comment).
   */
  private takes(step: ContactSet, i: number): boolean {
    if (!(step.restitution[i] > 0 && step.triangle[i] === 0)) return false;
    const { jointed } = this;
    if (jointed.length === 0) return true;
    const a = step.bodyA[i];
    const b = step.bodyB[i];
    return !((a >= 0 && jointed[a] === 1) || (b >= 0 && jointed[b] === 1));
  }

  /**
   * At the start of a step, after the active set is chosen (x_t, v_t): takes the active
   * contacts of `step` with restitution (no fem–fem ones, none of a jointed body), their
   * rows, M⁻¹ and u_n⁻. Returns their number (0: nothing to locate in this step).
   */
  begin(step: ContactSet): number {
    const { set } = this;
    const nc = step.count;
    let m = 0;
    for (let i = 0; i < nc; i++) if (this.takes(step, i)) m++;
    set.reset(m);
    this.op = null;
    if (m === 0) return 0;
    this.src = grow(this.src, m);
    this.normals = grow(this.normals, 3 * nc);
    const f = step.frame;
    for (let i = 0; i < nc; i++) {
      if (!this.takes(step, i)) continue;
      for (let k = 0; k < 3; k++) this.normals[3 * i + k] = f[9 * i + k];
      this.src[
        set.push(step.bodyA[i], step.bodyB[i], step.key, this.normals, step.point, step.gap, i)
      ] = i;
    }
    inverseMassBlocks(this.sys, this.Y, this.yOff, 1);
    set.computeResponse(this.Y, this.yOff, 1, true);
    this.op = set.delassus(1, 1);
    this.uMinus = grow(this.uMinus, m);
    set.normalVelocities(this.uMinus, 0, m);
    this.aGyro = grow(this.aGyro, m);
    for (let j = 0; j < m; j++) this.aGyro[j] = this.gyroscopicAcceleration(j);
    return m;
  }

  /**
   * The step's free velocity before any contact force (its first Newton iteration's):
   * the contacts' normal components, for their free accelerations.
   */
  takeFree(vFree: Float64Array): void {
    const m = this.set.count;
    if (m === 0) return;
    this.uFree = grow(this.uFree, m);
    this.set.localVelocity(vFree, 1, this.uFree);
  }

  /**
   * After the step's update (v⁺, x_{t+h}): locates the impacts of the contacts begin took
   * (file comment) and moves the velocities and positions onto their exact normal motion.
   * θ is the step's position weight, `tolerance` (m/s) the contact solve's velocity
   * residual; `lifts` gives the last projection's lift by key (takeFree first).
   * `lagStart` and `lagEnd` (s): how far the velocities lag the positions at the step's
   * start, and are to at its end (symplectic Euler's, the leapfrog's, file comment; 0, 0
   * for the schemes whose velocities are at the positions' time).
   * Returns the number of contacts located (0: nothing moved); lagEnergy is then set.
   */
  locate(
    step: ContactSet,
    h: number,
    theta: number,
    tolerance: number,
    lifts: ContactProjection,
    lagStart: number,
    lagEnd: number,
  ): number {
    const { set } = this;
    const m = set.count;
    if (m === 0) return 0;
    this.uPlus = grow(this.uPlus, m);
    this.du = grow(this.du, m);
    this.dg = grow(this.dg, m);
    this.x = grow(this.x, m);
    this.mu = grow(this.mu, m);
    this.accel = grow(this.accel, m);
    this.nu = grow(this.nu, m);
    set.normalVelocities(this.uPlus, 0, m);
    this.lagEnergy = 0;
    let located = 0;
    for (let j = 0; j < m; j++) {
      this.du[j] = Number.NaN;
      this.dg[j] = Number.NaN;
      const i = this.src[j];
      const e = step.restitution[i];
      const um = this.uMinus[j];
      const up = this.uPlus[j];
      // approached, and held to Newton's law (no impulse: separated beyond it)
      if (!(um < -tolerance) || up > -e * um + tolerance) continue;
      const a = (this.uFree[j] - um) / h - this.aGyro[j];
      this.accel[j] = a;
      const g0 = step.gap[i] - lifts.liftOf(step.key[i]);
      // the normal velocity at the positions' time (lagStart: file comment)
      const u0 = um + lagStart * a;
      const D = u0 * u0 - 2 * a * g0;
      let gStar: number;
      let uStar: number;
      // u* at the positions' time (uStar less the end's lag: 0 where it ends at rest)
      let uTime = 0;
      if (!(D > 0)) {
        // below the surface for as long back as the step reaches, pulled into it: resting
        // (file comment), held at its start's gap
        if (!(g0 < 0 && a < 0)) continue;
        gStar = step.gap[i];
        uStar = 0;
      } else {
        const root = Math.sqrt(D);
        const tau = (2 * g0) / (root - u0);
        if (!(Math.abs(tau) <= h)) continue;
        const sigma = h - tau;
        gStar = e * root * sigma + 0.5 * a * sigma * sigma;
        // (in flight at the end: its velocity lagEnd behind, the next step's start)
        uTime = e * root + a * sigma;
        uStar = uTime - lagEnd * a;
        if (!(gStar > 0)) {
          gStar = 0;
          uStar = 0;
          uTime = 0;
        }
      }
      // the lags' share of the kinetic energy read off the lagging velocities, its change
      // over the step (lagEnergy), along the normal at its effective mass 1/W_jj
      (this.op as FactoredDelassus).diagonalBlock(j, this.block);
      this.lagEnergy +=
        (0.5 * (uStar * uStar - uTime * uTime - (um * um - u0 * u0))) / this.block[0];
      this.du[j] = uStar - up;
      this.dg[j] = gStar - (step.gap[i] + h * ((1 - theta) * um + theta * up));
      located++;
    }
    if (located === 0) return 0;
    // the velocities onto u*, then the positions onto g*
    const pull = this.x;
    this.solve(this.du, pull);
    this.move(pull, true);
    this.nu.set(pull.subarray(0, m));
    const pe0 = potentialEnergy(this.effectors);
    this.solve(this.dg, this.mu);
    this.move(this.mu, false);
    // The push's change of potential energy against the model's, −Σ a_j μ_j (the work of
    // the constant normal accelerations a over the push): they differ by what a still owes
    // to forces without a potential (the gyroscopic torques' change over the step,
    // dampers) and by the move's second-order terms, which the model's rebound velocity
    // would turn into energy. The located normal velocities are scaled by 1 + c so that
    // the kinetic energy takes that difference ε back: with A ν̂ = u_L (their normal
    // velocities now) and Q = u_Lᵀ ν̂ (twice their kinetic energy), ½ Q ((1 + c)² − 1) = −ε.
    // (Six boxes tumbling onto their corners at e = 1 for 10 s at 1 ms: what the location
    // booked as taken out, nothing in the model at e = 1 but undone lifts, was up to 0.5 J
    // with the gyroscopic share in a and without this scaling, now at most 1.3e-2 J.)
    let model = 0;
    for (let j = 0; j < m; j++) if (!Number.isNaN(this.du[j])) model -= this.accel[j] * this.mu[j];
    const excess = potentialEnergy(this.effectors) - pe0 - model;
    set.normalVelocities(this.uPlus, 0, m);
    for (let j = 0; j < m; j++) this.du[j] = Number.isNaN(this.du[j]) ? Number.NaN : this.uPlus[j];
    this.solve(this.du, pull);
    let Q = 0;
    for (let j = 0; j < m; j++) if (!Number.isNaN(this.du[j])) Q += this.du[j] * pull[j];
    if (Q > 0 && excess !== 0) {
      const c = Math.sqrt(Math.max(0, 1 - (2 * excess) / Q)) - 1;
      for (let j = 0; j < m; j++) {
        pull[j] *= c;
        this.nu[j] += pull[j];
      }
      this.move(pull, true);
    }
    return located;
  }

  /**
   * The last locate's located contacts into the contact report: each one's normal impulse
   * ν + c ν̂ (N·s) and end gap g* (m), by its index in the step's contact set (file
   * comment). Call after a locate that located some.
   */
  report(out: LocatedReport): void {
    for (let j = 0; j < this.set.count; j++)
      if (!Number.isNaN(this.du[j])) out.addLocated(this.src[j], this.nu[j]);
  }

  /**
   * A_j,n M⁻¹ f_gyro at (x_t, v_t): the normal acceleration of contact j of `set` that the
   * gyroscopic torques −ω × I ω of its rigid bodies give (m/s²).
   */
  private gyroscopicAcceleration(j: number): number {
    const { sys } = this;
    const { jac } = this.set;
    const w = sys.omega;
    const I = sys.inertiaWorld;
    const Y = sys.inertiaWorldInv;
    let a = 0;
    for (let side = 0; side < 2; side++) {
      const b = side === 0 ? this.set.bodyA[j] : this.set.bodyB[j];
      if (b < 0 || this.set.width(b) !== 6) continue;
      const wx = w[3 * b];
      const wy = w[3 * b + 1];
      const wz = w[3 * b + 2];
      const i = 9 * b;
      const lx = I[i] * wx + I[i + 1] * wy + I[i + 2] * wz;
      const ly = I[i + 3] * wx + I[i + 4] * wy + I[i + 5] * wz;
      const lz = I[i + 6] * wx + I[i + 7] * wy + I[i + 8] * wz;
      // τ = −ω × L
      const tx = -(wy * lz - wz * ly);
      const ty = -(wz * lx - wx * lz);
      const tz = -(wx * ly - wy * lx);
      const o = 36 * j + 18 * side;
      a +=
        jac[o + 3] * (Y[i] * tx + Y[i + 1] * ty + Y[i + 2] * tz) +
        jac[o + 4] * (Y[i + 3] * tx + Y[i + 4] * ty + Y[i + 5] * tz) +
        jac[o + 5] * (Y[i + 6] * tx + Y[i + 7] * ty + Y[i + 8] * tz);
    }
    return a;
  }

  /**
   * Velocities (or positions) += M⁻¹ H_Lᵀ x, the response of the located contacts' x (a
   * body the positions turn turns its angular velocity with it: movePositions).
   */
  private move(x: Float64Array, velocities: boolean): void {
    const { sys, dv, v } = this;
    dv.fill(0);
    (this.op as FactoredDelassus).addResponse(x, 1, dv);
    if (!velocities) {
      movePositions(sys, dv, 1);
      return;
    }
    getVelocity(sys, v);
    for (let k = 0; k < v.length; k++) v[k] += dv[k];
    setVelocity(sys, v);
  }

  /**
   * x ← the solution of (H_L M⁻¹ H_Lᵀ) x_L = b_L over the located contacts (b not NaN),
   * 0 elsewhere: Gauss–Seidel until every residual is below SOLVE_TOLERANCE·‖b‖∞.
   */
  private solve(b: Float64Array, x: Float64Array): void {
    const op = this.op as FactoredDelassus;
    const { block } = this;
    const m = this.set.count;
    let scale = 0;
    for (let j = 0; j < m; j++) {
      x[j] = 0;
      if (!Number.isNaN(b[j])) scale = Math.max(scale, Math.abs(b[j]));
    }
    const stop = SOLVE_TOLERANCE * scale;
    for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
      let worst = 0;
      for (let j = 0; j < m; j++) {
        if (Number.isNaN(b[j])) continue;
        op.rowBlockTimes(j, x, block);
        const r = b[j] - block[0];
        op.diagonalBlock(j, block);
        x[j] += r / block[0];
        worst = Math.max(worst, Math.abs(r));
      }
      if (worst <= stop) return;
    }
  }
}
