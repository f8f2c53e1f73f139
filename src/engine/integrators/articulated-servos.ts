/**
 * The joint servos of an articulated tree taken implicitly (integrators/articulated.ts):
 * the stiff part of an implicit–explicit (IMEX) Runge–Kutta step, the servos' linear laws
 *   τ_r = k_p (q*_r − q_r) + k_d (q̇*_r − q̇_r)   (clamped at the effort limit)
 * with the joint-space mass matrix, as MuJoCo's implicit integrators and the "stable PD"
 * controllers of Tan, Liu & Turk (IEEE Comput. Graph. Appl. 31, 2011) take a PD actuator's
 * stiffness and damping: (M + γh k_d + (γh)² k_p) in the servo rows. The integrator takes
 * each implicit stage Y = Ŷ + γh f_I(Y) of Ascher, Ruuth & Spiteri's
 * ARS(2,2,2) pair, f_I the servos' share of the motion with the kinematics (the
 * coordinates' rates ẏ(u) and the efforts' accelerations M⁻¹ S τ), f_E the rest of the
 * forces' accelerations. The kinematics are implicit for every joint, not only the
 * servos': the stiff mode moves the joints the mass matrix couples to a servo's, and a
 * passive link on a stiffly held one, its angle stepped explicitly at the stiff mode's
 * rates, blew up within 3 steps (k_p = 1e12 N·m/rad, 0.5 ms).
 *
 * In joint space, with W = M⁻¹ S (the accelerations a unit effort on each servo's joint
 * gives: an articulated-body pass at Ŷ per servo, against one without forces, the
 * algorithm being linear in the applied forces) and G = Sᵀ W (the servos' joint-space
 * inverse inertia, symmetric positive definite), the stage's rates are
 * u = û + γh W τ and its coordinates y = ŷ + γh ẏ(u), the servos' q_r = q̂_r + γh u_r, so
 * each law reads
 *   τ_r = b_r − c_r u_r,  b_r = k_p (q*_r − q̂_r) + k_d q̇*_r,  c_r = γh k_p + k_d,
 * and (C⁻¹ + γh G) τ = C⁻¹ b − û_S, an s × s system (s servos): readLaws at Ŷ, then
 * readInertia and `stage` with M at Ŷ, and again with M at that solution
 * (articulated.ts implicitStage; exact at once for a joint whose inertia does not change
 * with the configuration, a hinge to the ground). A servo at its effort limit holds τ = ±limit
 * and leaves the system (an active set, a pass per change: the law is monotone in the
 * servo's own coordinate). The law then holds at the stage's point Y, so the effort the
 * forces apply there (JointActuator.effortAt) is the one solved for, to rounding: the
 * integrator takes it out of the explicit forces (`removeForces`).
 *
 * The compliant joint limits on those joints (joint-limit.ts) are rows of the same stage:
 * past a bound, τ = σ max(0, k δ + c min(1, δ/δ_r) q̇_in), with δ = σ (bound − q̂ − γh u_r)
 * the same τ = clamp(b − c u, lo, hi) with b = k (bound − q̂), c = γh k + c min(1, δ/δ_r)
 * (the ramp taken at Ŷ, then at the first solution: `relinearize`) and [lo, hi] = [0, ∞)
 * at the lower bound, (−∞, 0] at the upper; a servo's is [−limit, limit]. A limit and a
 * servo on one joint share W's column. Stepped explicitly beside implicit servos, a limit
 * had no error control: the 7-axis arm of test/formats/urdf, its fourth joint starting on
 * its limit, blew up within 7 steps. Their work is booked as the servos' (below), their
 * elastic ½ k δ² (energy.potential) taken out of it (articulated.ts `step`).
 *
 * The energy balance books the work the step applies (`beginSubstep`, `addImpulse`,
 * `substepWork`): each servo's impulse over the sub-step, J_r = hh Σ_k b_k τ_r(Y_k) with the
 * implicit part's weights b = (0, 1 − γ, γ), on its joint's mean rate ½ (q̇_r(start) +
 * q̇_r(end)), as the other integrators book a servo's effort on the step's mean velocity
 * (step-work.ts). On a joint whose inertia I does not change with the configuration and
 * that no other force moves (a hinge to the ground), I Δq̇ = J and ½ I Δ(q̇²) = J q̇̄ exactly,
 * whatever the scheme does to the motion; the servo's −ΔΦ (the explicit steps' booking) also
 * counted the numerical damping of its unresolved mode as error: the end-hinged rod at
 * k_p = 1e8, k_d = 100, 1/60 s read −½ k_p e₀² (−1.53e6 J at its gains input). The
 * stages' power quadrature Σ b_k τ_k q̇_k would miss ½ I Δ(q̇²) as well: backward Euler's
 * I q̇₁ = h τ₁ from rest does ½ h τ₁ q̇₁, not h τ₁ q̇₁.
 */
import { coordinateMassNorms, type JointActuator } from "../actuators/actuator";
import { type CompliantJointLimit, DAMPING_RAMP } from "../actuators/joint-limit";
import type { JointCoordinate } from "../constraints/joint-coordinate";
import { type ArticulatedTree, SlotKind } from "../dynamics/articulated-body";
import { invertSmall } from "../math/small-dense";
import { BodyKind, type BodySystem } from "../model/body-system";

/**
 * Sub-steps an explicit step takes per unit of h ω, ω = √(k_p/Ĩ) an undamped servo's rate:
 * the error control follows its ringing (the 2 kg, 0.6 m end-hinged rod at 1/60 s and the
 * default tolerance: 147, 336, 583, 1108 sub-steps a step at h ω = 34, 68, 108, 186).
 */
const SUBSTEPS_PER_RING = 5.5;

/** Projected Gauss–Seidel's sweeps at most, and its relative tolerance (ImplicitServos.stage). */
const PGS_SWEEPS = 1000;
const PGS_TOLERANCE = 1e-12;

export class ImplicitServos {
  /** The servos on a revolute or prismatic slot, with gains. */
  readonly servos: readonly JointActuator[];
  /** The compliant limits on such slots (rows after the servos'). */
  readonly limits: readonly CompliantJointLimit[];
  /** Each row's slot and its column of W (one per slot: a servo and a limit share it). */
  private readonly slot: Int32Array;
  private readonly col: Int32Array;
  /** W = M⁻¹ S by columns (uSize each); the accelerations without forces. */
  private readonly W: Float64Array[];
  private readonly a0: Float64Array;
  private readonly zero: Float64Array;
  private readonly unit: Float64Array;
  /** G by rows (s × s), and the free rows' system and its inverse. */
  private readonly G: Float64Array;
  private readonly sys: Float64Array;
  private readonly inv: Float64Array;
  private readonly work: Float64Array;
  /** Each row's law τ = clamp(b − c u, lo, hi) (file comment). */
  private readonly b: Float64Array;
  private readonly c: Float64Array;
  private readonly lo: Float64Array;
  private readonly hi: Float64Array;
  /** A limit row's q̂ (at readLaws) and side σ (+1 lower bound, −1 upper). */
  private readonly qHat: Float64Array;
  private readonly sigma: Float64Array;
  private readonly tau: Float64Array;
  /** filterError's δτ. */
  private readonly dtau: Float64Array;
  private readonly rhs: Float64Array;
  private readonly free: Int32Array;
  /** Each row's clamp: 0 free, +1 at hi, −1 at lo; and as `keepActiveSet` kept it. */
  private readonly clamped: Int8Array;
  private readonly kept: Int8Array;
  private readonly norms = new Float64Array(4);
  /**
   * Each row's law b − c u at the point the stage `stage` last solved (lawEnd), and at the
   * running sub-step's start (lawStart, with its side clampedStart: `readStart`,
   * `acceptSubstep`), for `switchError`.
   */
  private readonly lawEnd: Float64Array;
  private readonly lawStart: Float64Array;
  private readonly clampedStart: Int8Array;
  /** switchError's σ (−1: none). */
  switchAt = -1;
  /** switchError's shortest ε_r (s) of a damped servo switching (transitRate; −1: none). */
  transit = -1;
  /** The running sub-step's impulses J_r (N·m·s or N·s) and start rates (`beginSubstep`). */
  private readonly impulse: Float64Array;
  private readonly rateStart: Float64Array;

  constructor(
    private readonly tree: ArticulatedTree,
    actuators: readonly JointActuator[],
    limits: readonly CompliantJointLimit[],
    /** The slot of each joint's model id (revolute and prismatic slots). */
    slotOf: ReadonlyMap<string, number>,
    /** The length of the body system's force vectors (AccelerationStepper.n). */
    n: number,
  ) {
    const servos: JointActuator[] = [];
    const bounded: CompliantJointLimit[] = [];
    const slots: number[] = [];
    for (const a of actuators) {
      const i = slotOf.get(a.coordinate.joint);
      if (a.hasJacobians && i !== undefined) {
        servos.push(a);
        slots.push(i);
      }
    }
    for (const l of limits) {
      const i = slotOf.get(l.coordinate.joint);
      if (i !== undefined) {
        bounded.push(l);
        slots.push(i);
      }
    }
    this.servos = servos;
    this.limits = bounded;
    this.slot = Int32Array.from(slots);
    const columns = [...new Set(slots)];
    this.col = Int32Array.from(slots, (i) => columns.indexOf(i));
    const s = slots.length;
    this.W = columns.map(() => new Float64Array(tree.uSize));
    this.a0 = new Float64Array(tree.uSize);
    this.zero = new Float64Array(n);
    this.unit = new Float64Array(n);
    this.G = new Float64Array(s * s);
    this.sys = new Float64Array(s * s);
    this.inv = new Float64Array(s * s);
    this.work = new Float64Array(s * s);
    this.b = new Float64Array(s);
    this.c = new Float64Array(s);
    this.lo = new Float64Array(s);
    this.hi = new Float64Array(s);
    this.qHat = new Float64Array(s);
    this.sigma = new Float64Array(s);
    this.tau = new Float64Array(s);
    this.dtau = new Float64Array(s);
    this.rhs = new Float64Array(s);
    this.free = new Int32Array(s);
    this.clamped = new Int8Array(s);
    this.kept = new Int8Array(s);
    this.impulse = new Float64Array(s);
    this.rateStart = new Float64Array(s);
    this.lawEnd = new Float64Array(s);
    this.lawStart = new Float64Array(s);
    this.clampedStart = new Int8Array(s);
  }

  /** The row's joint coordinate (a servo's, then a limit's). */
  private coordinate(r: number): JointCoordinate {
    const ns = this.servos.length;
    return r < ns ? this.servos[r].coordinate : this.limits[r - ns].coordinate;
  }

  /**
   * The sub-steps an explicit step of h would take for the stiffest servo or active limit
   * at the current state and t: SUBSTEPS_PER_RING h √(k/Ĩ) for its ringing (k_p, a
   * limit's k), h d/Ĩ / 3 for its damping (k_d, a limit's c; the stability bound,
   * articulated.ts STABLE_STEP), with 1/Ĩ = gᵀ M⁻¹ g the bodies' own
   * (coordinateMassNorms: the joints free, an upper bound, 4/I for a rod hinged at its end).
   * A servo at its effort limit counts its damping alone: its force does not depend on the
   * state, and the explicit pair follows an undamped one's crossings of the law's band
   * where an implicit sub-step would step over them (the end-hinged rod at k_p = 1e8,
   * limit 1000 N·m, k_d = 0, ringing between the limits at 1/60 s: explicit, 11.4
   * sub-steps a step and 2.5 J of 300 J lost in 2 s; implicit, 4 and 69 J); but a damped
   * one is caught in the band (the law's sliding surface k_p e + k_d ė = 0, Filippov),
   * whose creep at k_p/k_d the explicit sub-steps chattered across, flipping the effort
   * from limit to limit (the 7-axis arm held at its zero pose, k_p = 1e8, k_d = 1e4,
   * efforts 87 and 12 N·m: 69 sub-steps a step, 19 J of energy gained and 29 J of
   * kinetic energy in 1 s where it stays at rest).
   */
  explicitSubsteps(t: number, h: number): number {
    let worst = 0;
    const ns = this.servos.length;
    for (let r = 0; r < this.slot.length; r++) {
      let kp: number;
      let kd: number;
      const q = this.coordinate(r);
      if (r < ns) {
        const a = this.servos[r];
        q.evaluate();
        const law = a.kp * (a.commandAt(t) - q.value) + a.kd * (a.targetRate(t) - q.rate);
        kp = Math.abs(law) > a.limit ? 0 : a.kp;
        kd = a.kd;
      } else {
        const l = this.limits[r - ns];
        q.evaluateValue();
        if (!l.enabled || (q.value >= l.lower && q.value <= l.upper)) continue;
        kp = l.stiffness;
        kd = l.damping;
      }
      coordinateMassNorms(this.tree.sys, q, this.norms);
      const u = this.norms;
      const inverse = u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3];
      worst = Math.max(
        worst,
        SUBSTEPS_PER_RING * h * Math.sqrt(kp * inverse),
        (h * kd * inverse) / 3,
      );
    }
    return worst;
  }

  /**
   * The laws' b_r, c_r and bounds (file comment) of the implicit stage Y = Ŷ + gh f_I(Y) at
   * t, at Ŷ as the caller placed it (setState, the hinges guided).
   */
  readLaws(t: number, gh: number): void {
    const { servos, limits, b, c, lo, hi, qHat, sigma } = this;
    const ns = servos.length;
    for (let r = 0; r < ns; r++) {
      const a = servos[r];
      const q = a.coordinate;
      q.evaluate();
      b[r] = a.kp * (a.commandAt(t) - q.value) + a.kd * a.targetRate(t);
      c[r] = gh * a.kp + a.kd;
      lo[r] = -a.limit;
      hi[r] = a.limit;
    }
    for (let r = ns; r < this.slot.length; r++) {
      const l = limits[r - ns];
      const q = l.coordinate;
      q.evaluateValue();
      qHat[r] = q.value;
      // the nearer bound's law
      sigma[r] = q.value < 0.5 * (l.lower + l.upper) ? 1 : -1;
      if (!l.enabled) {
        b[r] = 0;
        c[r] = 1;
        lo[r] = 0;
        hi[r] = 0;
        continue;
      }
      b[r] = l.stiffness * ((sigma[r] > 0 ? l.lower : l.upper) - q.value);
      lo[r] = sigma[r] > 0 ? 0 : Number.NEGATIVE_INFINITY;
      hi[r] = sigma[r] > 0 ? Number.POSITIVE_INFINITY : 0;
      this.dampLimit(r, gh, q.value);
    }
  }

  /**
   * A limit row's c = gh k + c_l min(1, δ/δ_r) with δ its depth at the coordinate's value q
   * (joint-limit.ts: the damping ramps in over DAMPING_RAMP).
   */
  private dampLimit(r: number, gh: number, q: number): void {
    const l = this.limits[r - this.servos.length];
    if (!l.enabled) return;
    const depth = this.sigma[r] > 0 ? l.lower - q : q - l.upper;
    this.c[r] = gh * l.stiffness + l.damping * Math.min(1, Math.max(0, depth) / DAMPING_RAMP);
  }

  /**
   * The limits' damping ramps at the stage `stage` last solved (its u; each q_r =
   * q̂_r + gh u_r), for the stage's next pass (articulated.ts implicitStage).
   */
  relinearize(gh: number, u: Float64Array): void {
    const { tree, slot, qHat } = this;
    for (let r = this.servos.length; r < slot.length; r++)
      this.dampLimit(r, gh, qHat[r] + gh * u[tree.uOffset[slot[r]]]);
  }

  /**
   * W and G at the configuration the caller placed, by differences of the algorithm's
   * passes (linear in the applied forces) at the velocities u. False when a joint's
   * inertia is singular.
   */
  readInertia(u: Float64Array): boolean {
    const { tree, slot, col, W, a0, G } = this;
    const s = slot.length;
    if (!tree.accelerations(u, this.zero, a0)) return false;
    const sys = tree.sys;
    for (let k = 0; k < W.length; k++) {
      // the first row on the column's slot gives its coordinate
      let r = 0;
      while (col[r] !== k) r++;
      const q = this.coordinate(r);
      q.evaluateJacobian();
      this.unit.fill(0);
      addEffort(sys, q.bodyA, q.jacA, 1, this.unit);
      addEffort(sys, q.bodyB, q.jacB, 1, this.unit);
      const w = W[k];
      if (!tree.accelerations(u, this.unit, w)) return false;
      for (let i = 0; i < w.length; i++) w[i] -= a0[i];
    }
    for (let r = 0; r < s; r++)
      for (let k = 0; k < s; k++) G[s * r + k] = W[col[k]][tree.uOffset[slot[r]]];
    return true;
  }

  /**
   * The implicit stage from Ŷ in (y, u), which receive Y, with the laws of readLaws and
   * the inertia of readInertia; ky, ku receive f_I(Y) (the coordinates' rates, W τ).
   * False when the rows' system is singular.
   */
  stage(gh: number, y: Float64Array, u: Float64Array, ky: Float64Array, ku: Float64Array): boolean {
    const { tree, slot, col, W, G, b, c, lo, hi, tau, clamped } = this;
    const s = slot.length;
    // the active set, started from each law at û alone (a limit is mostly inside its
    // range, its row clamped at 0): solve the free rows; a free row whose τ leaves its
    // bounds is clamped there, a clamped one whose law at the solution comes back inside
    // them is freed (not clamped at the other bound: a law crossing its band within the
    // stage, a saturated servo caught by its damping, has its solution inside it); until
    // no row changes (the laws are monotone in their own coordinates, G positive definite)
    for (let r = 0; r < s; r++) {
      const law = b[r] - c[r] * u[tree.uOffset[slot[r]]];
      clamped[r] = law > hi[r] ? 1 : law < lo[r] ? -1 : 0;
      if (clamped[r] !== 0) tau[r] = clamped[r] > 0 ? hi[r] : lo[r];
    }
    let settled = false;
    for (let pass = 0; pass <= 2 * s && !settled; pass++) {
      if (!this.solveFree(gh, u)) return false;
      let changed = false;
      for (let r = 0; r < s; r++) {
        // the law at the stage's rate u_r = û_r + gh (G τ)_r (a free row's: its τ)
        let v = u[tree.uOffset[slot[r]]];
        for (let k = 0; k < s; k++) v += gh * G[s * r + k] * tau[k];
        const law = b[r] - c[r] * v;
        const was = clamped[r];
        const side =
          was === 0
            ? law > hi[r]
              ? 1
              : law < lo[r]
                ? -1
                : 0
            : (was > 0 && law < hi[r]) || (was < 0 && law > lo[r])
              ? 0
              : was;
        if (side !== was) changed = true;
        clamped[r] = side;
        if (side !== 0) tau[r] = side > 0 ? hi[r] : lo[r];
      }
      settled = !changed;
    }
    // rows coupled through G can cycle between active sets (the 7-axis arm's servos at
    // k_p = 1e8, saturating together: its energy then grew by tens of J a step); the
    // stage is the box-constrained QP min ½ τᵀ A τ − rᵀ τ, lo ≤ τ ≤ hi, A = C⁻¹ + gh G
    // symmetric positive definite, r = C⁻¹ b − û, whose projected Gauss–Seidel sweeps
    // converge (Cottle, Pang & Stone, "The Linear Complementarity Problem", §5.2)
    if (!settled) this.projectedSweeps(gh, u);
    // Y = Ŷ + gh f_I(Y)
    ku.fill(0);
    for (let k = 0; k < s; k++) {
      const w = W[col[k]];
      const f = tau[k];
      if (f !== 0) for (let i = 0; i < ku.length; i++) ku[i] += w[i] * f;
    }
    for (let i = 0; i < u.length; i++) u[i] += gh * ku[i];
    // each law at the stage's point (a free row's: its τ; a clamped one's beyond its bound)
    for (let r = 0; r < s; r++) this.lawEnd[r] = b[r] - c[r] * u[tree.uOffset[slot[r]]];
    // every coordinate's rate at the stage's velocities, the rotations' at Ŷ's (a
    // linearization of order gh u, as M's)
    tree.positionRates(y, u, ky);
    for (let i = 0; i < y.length; i++) y[i] += gh * ky[i];
    return true;
  }

  /**
   * τ by projected Gauss–Seidel on the stage's box QP (`stage`), from the τ it holds,
   * until a sweep changes no τ by more than PGS_TOLERANCE of the largest (or PGS_SWEEPS).
   */
  private projectedSweeps(gh: number, u: Float64Array): void {
    const { tree, slot, G, b, c, lo, hi, tau } = this;
    const s = slot.length;
    for (let sweep = 0; sweep < PGS_SWEEPS; sweep++) {
      let change = 0;
      let size = 0;
      for (let r = 0; r < s; r++) {
        // (A τ)_r without its own term, and A_rr
        let x = b[r] / c[r] - u[tree.uOffset[slot[r]]];
        for (let k = 0; k < s; k++) if (k !== r) x -= gh * G[s * r + k] * tau[k];
        const next = Math.min(hi[r], Math.max(lo[r], x / (1 / c[r] + gh * G[s * r + r])));
        change = Math.max(change, Math.abs(next - tau[r]));
        size = Math.max(size, Math.abs(next));
        tau[r] = next;
      }
      if (change <= PGS_TOLERANCE * size) break;
    }
  }

  /**
   * τ of the free (unclamped) rows from (C⁻¹ + gh G)_FF τ_F = C⁻¹ b_F − û_F − gh G_FA τ_A,
   * the clamped ones' τ as set.
   */
  private solveFree(gh: number, u: Float64Array): boolean {
    const { tree, slot, G, b, c, tau, clamped, free, rhs } = this;
    const s = slot.length;
    let m = 0;
    for (let r = 0; r < s; r++) if (clamped[r] === 0) free[m++] = r;
    if (m === 0) return true;
    for (let p = 0; p < m; p++) {
      const r = free[p];
      let x = b[r] / c[r] - u[tree.uOffset[slot[r]]];
      for (let k = 0; k < s; k++) if (clamped[k] !== 0) x -= gh * G[s * r + k] * tau[k];
      rhs[p] = x;
    }
    if (!this.invertFree(gh, m)) return false;
    this.applyFree(m, tau);
    return true;
  }

  /** inv = (C⁻¹ + gh G)_FF⁻¹ over the m rows in `free`. */
  private invertFree(gh: number, m: number): boolean {
    const { G, c, free, sys } = this;
    const s = this.slot.length;
    for (let p = 0; p < m; p++) {
      const r = free[p];
      for (let q = 0; q < m; q++) sys[m * p + q] = gh * G[s * r + free[q]];
      sys[m * p + p] += 1 / c[r];
    }
    return invertSmall(this.inv, 0, sys, 0, m, this.work);
  }

  /** out_F = inv rhs over the m rows in `free`. */
  private applyFree(m: number, out: Float64Array): void {
    const { free, rhs, inv } = this;
    for (let p = 0; p < m; p++) {
      let x = 0;
      for (let q = 0; q < m; q++) x += inv[m * p + q] * rhs[q];
      out[free[p]] = x;
    }
  }

  /**
   * (ey, eu) ← the last implicit stage's linearization applied to them,
   * (I − gh ∂f_I/∂Y)⁻¹ (ey, eu): the error estimate's filter of Shampine and of Hairer &
   * Wanner ("Solving ODEs II", §IV.8, (8.20)), with which an embedded estimate of a stiff
   * mode the L-stable stages damp (h λ → −∞) goes to 0 as 1/(h λ) instead of staying
   * at the mode's size (unfiltered, a servo's transient the step does not follow would
   * shrink the sub-steps until they resolved it). The stage's laws and inertia as it last
   * solved them (`stage`: c, W, G, its active set, gh its length): a free row's
   * δτ = (C⁻¹ + gh G)_FF⁻¹ (C⁻¹ δb − δu)_F, δb_r = −k δq_r (k_p, a limit's k), the clamped
   * rows' δτ = 0; then eu += gh W δτ, and the caller adds gh ẏ(eu) to ey (positionRates,
   * linear in the rates). False when the rows' system is singular.
   */
  filterError(gh: number, ey: Float64Array, eu: Float64Array): boolean {
    const { tree, slot, col, W, c, lo, hi, clamped, free, rhs, dtau } = this;
    const s = slot.length;
    const ns = this.servos.length;
    let m = 0;
    for (let r = 0; r < s; r++) if (clamped[r] === 0 && lo[r] < hi[r]) free[m++] = r;
    if (m === 0) return true;
    for (let p = 0; p < m; p++) {
      const r = free[p];
      const k = r < ns ? this.servos[r].kp : this.limits[r - ns].stiffness;
      const o = slot[r];
      rhs[p] = (-k * ey[tree.yOffset[o]]) / c[r] - eu[tree.uOffset[o]];
    }
    if (!this.invertFree(gh, m)) return false;
    this.applyFree(m, dtau);
    for (let p = 0; p < m; p++) {
      const r = free[p];
      const w = W[col[r]];
      const f = gh * dtau[r];
      for (let i = 0; i < eu.length; i++) eu[i] += w[i] * f;
    }
    return true;
  }

  /**
   * The laws at the current state and t (the caller placed it, the hinges guided) as the
   * running sub-step's start: a step's first (the later ones start where the last accepted
   * one's stage ended, `acceptSubstep`). Overwrites readLaws' laws (the next stage reads
   * its own).
   */
  readStart(t: number, u: Float64Array): void {
    const { tree, slot, b, c, lo, hi, lawStart, clampedStart } = this;
    this.readLaws(t, 0);
    for (let r = 0; r < slot.length; r++) {
      const law = b[r] - c[r] * u[tree.uOffset[slot[r]]];
      lawStart[r] = law;
      clampedStart[r] = law > hi[r] ? 1 : law < lo[r] ? -1 : 0;
    }
  }

  /** The sub-step `stage` last ended was accepted: its end starts the next. */
  acceptSubstep(): void {
    this.lawStart.set(this.lawEnd);
    this.clampedStart.set(this.clamped);
  }

  /**
   * A row's side switching within the running sub-step of hh (s) (its start's, readStart
   * or acceptSubstep, against the last stage's): the earliest crossing's fraction σ of hh,
   * its law's bound met where the law, linear between the ends, crosses it, into
   * `switchAt` (−1: no row switched), and into eu the rates' error of the sub-step having taken each
   * switched row's end effort from its start, σ hh W (τ(start) − τ(end)) over the rows
   * that switched (τ = clamp(law)): an impulse the stages never weigh against the other
   * side's, as the error estimate does not see a switch between the sub-step's start and
   * its second stage (both stages on one side). A disabled limit's row (lo = hi) never
   * switches. A damped servo's row counts instead its law's relaxation through its band
   * (transitModel), `transit` its relaxation time.
   */
  switchError(hh: number, eu: Float64Array): void {
    const { tree, slot, col, W, c, lo, hi, tau, clamped, clampedStart, lawStart, lawEnd } = this;
    const impulse = this.impulse;
    // δu = hh W (τ(start) − τ(end)) over the rows that switched but the servos' transits
    eu.fill(0);
    let any = false;
    for (let r = 0; r < slot.length; r++) {
      if (clampedStart[r] === clamped[r] || !(lo[r] < hi[r])) continue;
      any = true;
      if (this.transitRate(r) > 0) continue;
      const w = W[col[r]];
      const f = hh * (Math.max(lo[r], Math.min(hi[r], lawStart[r])) - tau[r]);
      for (let i = 0; i < eu.length; i++) eu[i] += w[i] * f;
    }
    this.switchAt = -1;
    this.transit = -1;
    if (!any) return;
    // each switched row's law at the end as its start side would have left it, b − c (u + δu)
    // (the end's law is the end side's, a whole sub-step of the other effort away), and
    // where, linear from the start's, it meets the bound it left (or entered)
    let first = 1;
    for (let r = 0; r < slot.length; r++) {
      const was = clampedStart[r];
      if (was === clamped[r] || !(lo[r] < hi[r]) || this.transitRate(r) > 0) continue;
      const bound = was > 0 || (was === 0 && clamped[r] > 0) ? hi[r] : lo[r];
      const end = lawEnd[r] - c[r] * eu[tree.uOffset[slot[r]]];
      const d = lawStart[r] - end;
      const f = d !== 0 ? (lawStart[r] - bound) / d : 0;
      first = Math.min(first, Math.max(0, f));
    }
    for (let i = 0; i < eu.length; i++) eu[i] *= first;
    // a damped servo switching (transitModel): its impulse over the sub-step as the law's
    // relaxation has it, less the stages' (`impulse`), and its entry into the band at t₁
    // as the switch's instant (the linear crossing above misses the relaxation)
    for (let r = 0; r < slot.length; r++) {
      const rate = this.transitRate(r);
      if (!(rate > 0) || clampedStart[r] === clamped[r]) continue;
      // the law's quasi-static value, constant over the sub-step: the law's change over it
      // is rate (s_qs hh − J)
      // (the side it starts at, or for one starting in its band, the other than its end's)
      const side = clampedStart[r] !== 0 ? clampedStart[r] : -clamped[r];
      const quasi = (impulse[r] + (lawEnd[r] - lawStart[r]) / rate) / hh;
      // (in the side's sign: the limit it starts at is the upper one)
      this.transitModel(
        side * lawStart[r],
        side * quasi,
        side > 0 ? hi[r] : -lo[r],
        side > 0 ? lo[r] : -hi[r],
        1 / rate,
        hh,
      );
      const f = side * this.modelImpulse - impulse[r];
      const w = W[col[r]];
      for (let i = 0; i < eu.length; i++) eu[i] += w[i] * f;
      first = Math.min(first, this.modelEntry / hh);
      if (this.transit < 0 || 1 / rate < this.transit) this.transit = 1 / rate;
    }
    this.switchAt = first;
  }

  /**
   * The relaxation rate 1/ε_r (1/s) of row r's law in its band, k_d G_rr (a servo with
   * damping; 0 for the others): the law's rate there is d(law)/dt = k_d G_rr (s_qs − τ)
   * with s_qs = (k_p ė + k_d (q̈* − q̈_other))/(k_d G_rr) its quasi-static value, q̈_other
   * the joint's acceleration from everything but the row's effort.
   */
  private transitRate(r: number): number {
    if (r >= this.servos.length) return 0;
    return this.servos[r].kd * this.G[(this.slot.length + 1) * r];
  }

  /** transitModel's results: the impulse (N·m·s or N·s) and the band's entry t₁ (s). */
  private modelImpulse = 0;
  private modelEntry = 0;

  /**
   * A servo's law s leaving its effort limit U within a sub-step of hh (s), from s₀ ≥ U,
   * under d(s)/dt = (s_qs − clamp(s, L, U))/ε with its quasi-static value s_qs constant
   * (transitRate; signs flipped by the caller for a servo leaving −limit): at the limit
   * until t₁ = ε (s₀ − U)/(U − s_qs), then relaxing in the band,
   * s = s_qs + (U − s_qs) e^{−(t − t₁)/ε}, until it meets L where s_qs < L (at
   * t₂ = t₁ + ε ln((U − s_qs)/(L − s_qs))), then at L. Its effort's impulse ∫ clamp(s) dt
   * into modelImpulse, t₁ into modelEntry (hh when it stays at U).
   *
   * The L-stable implicit stage collapses that relaxation, over ε = 1/(k_d G_rr), into the
   * instant of the switch (the end-hinged rod of articulated-error.test.ts: k_d/I = 4.2e4
   * /s, ε = 2.4e-5 s against 1e-3 s sub-steps), an impulse of ε (U − s_qs) short into the
   * band, ε (U − L)(1 − x ln(1 + 1/x)) across it, x = (L − s_qs)/(U − L), that neither the
   * embedded estimate (both stages past the switch) nor the switch's location sees: 2.38e-4
   * rad/s of local rate error at that rod's first passage (x = 0.51; this model 2.4e-4),
   * 20 passages in 10 s, 3.5e-4 rad off its exact motion at 1e-6, still 2.0e-4 at 1e-7.
   * A law entering its limit from the band (s₀ < U, t₁ = 0) relaxes likewise from s₀.
   */
  private transitModel(
    s0: number,
    quasi: number,
    upper: number,
    lower: number,
    eps: number,
    hh: number,
  ): void {
    if (!(quasi < upper)) {
      this.modelImpulse = upper * hh;
      this.modelEntry = hh;
      return;
    }
    const t1 = Math.min(hh, (eps * Math.max(0, s0 - upper)) / (upper - quasi));
    this.modelEntry = t1;
    let j = upper * t1;
    const d = hh - t1;
    // (from U, or from s₀ for a law starting in its band)
    const from = Math.min(s0, upper);
    const t2 =
      quasi < lower ? eps * Math.log((from - quasi) / (lower - quasi)) : Number.POSITIVE_INFINITY;
    if (d <= t2) j += quasi * d - eps * (from - quasi) * Math.expm1(-d / eps);
    else j += quasi * t2 + eps * (from - lower) + lower * (d - t2);
    this.modelImpulse = j;
  }
  /** Keeps the active set of the stage `stage` last solved (`activeSetKept`). */
  keepActiveSet(): void {
    this.kept.set(this.clamped);
  }

  /** Whether the stage `stage` last solved has the active set keepActiveSet kept. */
  activeSetKept(): boolean {
    for (let r = 0; r < this.kept.length; r++) if (this.kept[r] !== this.clamped[r]) return false;
    return true;
  }

  /** An ARS(2,2,2) sub-step starts from the velocities u: no impulse yet (file comment). */
  beginSubstep(u: Float64Array): void {
    const { tree, slot, rateStart } = this;
    this.impulse.fill(0);
    for (let r = 0; r < rateStart.length; r++) rateStart[r] = u[tree.uOffset[slot[r]]];
  }

  /** J_r += weight τ_r of the stage `stage` last solved (weight: b_k hh, s). */
  addImpulse(weight: number): void {
    for (let r = 0; r < this.impulse.length; r++) this.impulse[r] += weight * this.tau[r];
  }

  /** The rows' work (J) over the sub-step ending at the velocities u: Σ_r J_r q̇̄_r. */
  substepWork(u: Float64Array): number {
    const { tree, slot, impulse, rateStart } = this;
    let w = 0;
    for (let r = 0; r < impulse.length; r++)
      w += impulse[r] * 0.5 * (rateStart[r] + u[tree.uOffset[slot[r]]]);
    return w;
  }

  /**
   * The rows' share of StepWork.forcePower at t and the state the forces were last
   * evaluated at: a servo's −τ q̇ − Φ̇ (its `effort`), a limit's −q̇ (τ − σ k δ) (W), which
   * an implicit step books as substepWork instead.
   */
  power(t: number): number {
    const { servos, limits } = this;
    let p = 0;
    for (let r = 0; r < servos.length; r++) {
      const a = servos[r];
      a.coordinate.evaluate();
      p -= a.storedPower(t) + a.effort * a.coordinate.rate;
    }
    for (let r = 0; r < limits.length; r++) {
      const d = limits[r].dissipativeEffort();
      if (d !== 0) p -= d * limits[r].coordinate.rate;
    }
    return p;
  }

  /** Σ Φ (J) of the servos' potentials at t and the current state (storedEnergy). */
  storedEnergy(t: number): number {
    const { servos } = this;
    let phi = 0;
    for (let r = 0; r < servos.length; r++) phi += servos[r].storedEnergy(t);
    return phi;
  }

  /** Σ ½ k δ² (J) of the limits at the current state (their share of energy.potential). */
  limitEnergy(): number {
    let e = 0;
    for (let r = 0; r < this.limits.length; r++) e += this.limits[r].potentialEnergy();
    return e;
  }

  /**
   * forces (the body system's layout) −= each row's effort as last applied (a servo's
   * JointActuator.effort, a limit's CompliantJointLimit.effort, along g, evaluated there):
   * the explicit forces without them.
   */
  removeForces(forces: Float64Array): void {
    const sys = this.tree.sys;
    const ns = this.servos.length;
    for (let r = 0; r < this.slot.length; r++) {
      const f = r < ns ? this.servos[r].effort : this.limits[r - ns].effort;
      if (f === 0) continue;
      const q = this.coordinate(r);
      addEffort(sys, q.bodyA, q.jacA, -f, forces);
      addEffort(sys, q.bodyB, q.jacB, -f, forces);
    }
  }
}

/**
 * f += τ g of one body (the body system's force layout: force, then torque for a rigid
 * body, at its dofOffset); nothing for ground or a fixed body (actuator.ts addSide).
 */
function addEffort(
  sys: BodySystem,
  body: number,
  g: Float64Array,
  tau: number,
  f: Float64Array,
): void {
  if (body < 0 || sys.block[body] < 0) return;
  const d = sys.dofOffset[body];
  for (let k = 0; k < 3; k++) f[d + k] += g[k] * tau;
  if (sys.kind[body] === BodyKind.RIGID) for (let k = 0; k < 3; k++) f[d + 3 + k] += g[3 + k] * tau;
}

/** The slot of each revolute or prismatic joint, by the joint's model id. */
export function hingeSlots(tree: ArticulatedTree, ids: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i < tree.numSlots; i++) {
    const kind = tree.kind[i];
    if (kind === SlotKind.REVOLUTE || kind === SlotKind.PRISMATIC) out.set(ids[tree.joint[i]], i);
  }
  return out;
}
