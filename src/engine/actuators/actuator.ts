/**
 * Joint actuators (MuJoCo's actuators, PyBullet's motor control): a generalized effort τ
 * along a joint's coordinate q (joint-coordinate.ts), applied as the force gᵀτ on the
 * joint's two bodies (N·m about the axis for a revolute joint, N along it for a
 * prismatic one; positive drives q up, b relative to a).
 *
 *   torque     τ = u(t)                                   (u: the commanded effort)
 *   velocity   τ = k_v (q̇* − q̇)                           (q̇*: the target rate)
 *   position   τ = k_p (q* − q) + k_d (q̇*(t) − q̇)         (q*: the target, q̇* its rate)
 *
 * each clamped to |τ| ≤ effortLimit. The target (or effort) is a time function of the
 * model or a constant set at run time (setCommand, an input), which then holds: its rate
 * is 0. An actuator is a force effector like a spring: the servos are implicit, their
 * Jacobians ∂f/∂x = −k_p g gᵀ and ∂f/∂v = −k_d g gᵀ (k_v for the velocity servo) enter
 * the Newton matrix, so a stiff servo stays stable at ordinary steps (the variation of
 * g with the configuration, of order τ, is left out of them: the iteration converges to
 * the same step; a solve that contracts slowly adds it, addTurnStiffness, a hinge's and a
 * prismatic joint's). Saturated (|τ| at the limit), the effort does not depend on the state: no
 * Jacobian. −∂f is symmetric positive semidefinite: jacobianType SPD. Not conservative.
 * Symplectic Euler takes the servos explicitly: their gains bound its step
 * (addExplicitRows), and a step they would not keep stable is taken in sub-steps
 * (theta-scheme.ts).
 *
 * Newton across the limit (stepFraction): saturated, the servo's Jacobian vanishes and a
 * Newton correction ignores it; on a light link the law's value can then jump from one
 * limit far past the other and back, forever (a robot arm's wrist servos commanded a
 * 0.2 rad step: −564 N·m, +778 N·m, −564 N·m… of a law clamped at 28 N·m; no convergence
 * even at h/16, the session ended diverged). The law is monotone in the servo's own
 * coordinate, so a correction that would carry it from one limit past the other crosses
 * its whole range: the iteration takes only the part that brings the linearized law to 0,
 * inside the range, where the next iteration has the servo's Jacobian again.
 *
 * A position servo a step does not resolve (unresolvedBy) whose damping is below its lead's,
 * k_d < δ k_p (δ the step's lead, leadStiffness), has its error measured at q + δ q̇
 * against q* + δ q̇*: k_p (q* − q) + (k_d + δ k_p)(q̇* − q̇), the same force at rest and
 * while tracking, and Jacobians ∂f/∂v = −(k_d + δ k_p) g gᵀ. A stronger damping settles
 * the servo at the weight 1 alone and keeps the trapezoid's position (at θ = ½): the
 * scheme's slow root at k_d = δ k_p = h k_p/2 is 0.06 at w = h √(k_p/I) = 17 and 3e-4
 * at w = 3400 (0.33 with the lead), at k_d = 10 h k_p 0.905, the overdamped mode's own
 * exp(−h k_p/k_d) (backward Euler's 0.909); at k_d = 0.1 h k_p 0.64 to 0.67 (0.06 to 0.09
 * with the lead), and as k_d → 0 the trapezoid's position rings, −(1 − 8/w²).
 */

import type { JointCoordinate } from "../constraints/joint-coordinate";
import type { ForceEffector } from "../forces/effector";
import { addScaledBlock, skewSkew } from "../forces/jacobian-util";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { type BodySystem, clearForces, getForces } from "../model/body-system";
import type { CompiledTimeFunction } from "../model/time-function";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";

export type ActuatorType = "torque" | "velocity" | "position";

export interface ActuatorOptions {
  id: string;
  type: ActuatorType;
  /** torque: the effort u(t); velocity: the target rate; position: the target q*(t). */
  command: CompiledTimeFunction;
  /** Position gain k_p (N·m/rad or N/m), position servo only. */
  kp: number;
  /** Rate gain: k_d of the position servo, k_v of the velocity servo (N·m·s/rad, N·s/m). */
  kd: number;
  /** |τ| at most (N·m or N); Infinity: none. */
  effortLimit: number;
}

/**
 * g as a generalized force vector of a system's dofs (unresolvedBy), one per body system:
 * unresolvedBy fills it and hands it on at once, so the actuators of a system share it.
 * One per actuator was actuators × dofs doubles, quadratic in a chain's length: 9 000
 * actuators on a 9 000-link chain (a URDF import gives every joint one) were 3.9 GB
 * allocated and zeroed at the build, which held its worker for minutes.
 */
const directions = new WeakMap<BodySystem, Float64Array>();

function directionOf(sys: BodySystem): Float64Array {
  let d = directions.get(sys);
  if (d === undefined || d.length !== sys.numDofs) {
    d = new Float64Array(sys.numDofs);
    directions.set(sys, d);
  }
  return d;
}

/**
 * A servo's gains as they act: k_p (N·m/rad or N/m; 0 but for a position servo), the rate
 * gain k_d or k_v (N·m·s/rad or N·s/m; 0 for a torque actuator) and |τ| at most (N·m or
 * N; Infinity: none).
 */
export interface ServoGains {
  kp: number;
  kd: number;
  limit: number;
}

export class JointActuator implements ForceEffector {
  readonly id: string;
  readonly type: ActuatorType;
  readonly jacobianType: MatrixTypeFlags = MatrixType.SPD;
  /** The effort τ of the last applyForces (N·m or N). */
  effort = 0;
  /** Whether applyForces leaves `effort` as it is (holdEffort). */
  private effortHeld = false;
  /** The run-time command (set by an input), or null: the model's time function. */
  override: number | null = null;
  /** ForceEffector.timeDependent: the model's command, a time function not constant. */
  get timeDependent(): boolean {
    return this.override === null && !this.command.constant;
  }
  private saturated = false;
  /** The law's value before the clamp at the last evaluation (N·m or N). */
  private law = 0;
  /** The gains in effect (a `gains` input changes them: setGains) and the model's. */
  private gainP: number;
  private gainD: number;
  private effortLimit: number;
  readonly modelGains: Readonly<ServoGains>;
  /** The step's lead δ (s) while unresolved (leadStiffness), else 0. */
  private lead = 0;
  private readonly command: CompiledTimeFunction;
  /** |M^{-1/2} g| by block, [a_t, a_θ, b_t, b_θ] (addExplicitRows). */
  private readonly norms = new Float64Array(4);
  /**
   * The magnitudes of the last servo law's terms, k_p (|q*| + |q|) + k (|q̇*| + |q̇|) (N·m or
   * N; effortAt): the scale of its rounding (lawScale).
   */
  private scale = 0;
  /** addTurnStiffness' scratch: ∂t/∂θ_a, ∂t/∂θ_b, k (ω_a − ω_b), a 6 × 6 block. */
  private readonly turnA = new Float64Array(9);
  private readonly turnB = new Float64Array(9);
  private readonly turnRate = new Float64Array(3);
  private readonly turnBlock = new Float64Array(36);
  /**
   * addSlideTurn's scratch: ∂g/∂x (12 × 12 row-major over [a; b] × [a; b], 6 each), the
   * bodies' velocities u, g, Dgᵀ u, and 3 × 3 products of skew matrices.
   */
  private readonly slideDg = new Float64Array(144);
  private readonly slideU = new Float64Array(12);
  private readonly slideG = new Float64Array(12);
  private readonly slideRate = new Float64Array(12);
  private readonly slide3 = new Float64Array(9);

  constructor(
    private readonly sys: BodySystem,
    readonly coordinate: JointCoordinate,
    o: ActuatorOptions,
  ) {
    this.id = o.id;
    this.type = o.type;
    this.command = o.command;
    this.gainP = o.type === "position" ? o.kp : 0;
    this.gainD = o.type === "torque" ? 0 : o.kd;
    this.effortLimit = o.effortLimit;
    this.modelGains = { kp: this.kp, kd: this.kd, limit: this.effortLimit };
  }

  /** k_p in effect (N·m/rad or N/m; 0 but for a position servo). */
  get kp(): number {
    return this.gainP;
  }

  /** k_d, a velocity servo's k_v, in effect (N·m·s/rad or N·s/m; 0 for a torque actuator). */
  get kd(): number {
    return this.gainD;
  }

  /** |τ| at most (N·m or N); Infinity: none. */
  get limit(): number {
    return this.effortLimit;
  }

  /** Whether the law has Jacobians: a servo with a gain (ForceEffector.hasJacobians). */
  get hasJacobians(): boolean {
    return this.kp > 0 || this.kd > 0;
  }

  /** The gains in effect (a copy). */
  get gains(): ServoGains {
    return { kp: this.kp, kd: this.kd, limit: this.effortLimit };
  }

  /** Whether the gains in effect are not the model's. */
  get gainsMoved(): boolean {
    const m = this.modelGains;
    return this.kp !== m.kp || this.kd !== m.kd || this.effortLimit !== m.limit;
  }

  /**
   * Sets the gains from the next evaluation on (a `gains` input, checked by inputs.ts: a
   * torque actuator's k_p and k_d stay 0, a velocity servo's k_p). Returns whether
   * hasJacobians changed, which the solver's structure reads (effectorsChanged). The law
   * reads the gains at each evaluation, the servo's potential Φ (storedEnergy) too, and the
   * energy balance books the servo's whole effort as work (step-work.ts) from each step's
   * start, so a change at a step boundary books no jump.
   */
  setGains(g: Readonly<ServoGains>): boolean {
    const had = this.hasJacobians;
    this.gainP = this.type === "position" ? g.kp : 0;
    this.gainD = this.type === "torque" ? 0 : g.kd;
    this.effortLimit = g.limit;
    return had !== this.hasJacobians;
  }

  /**
   * Sets the run-time command (an `actuator` input; null: the model's function again).
   * Returns whether the law reads another command from now on: not when one constant holds
   * before and after (the run-time command in effect given again, the model's constant
   * command given as a value, or dropped for it), nor when the model's function stays; then
   * the caller re-takes nothing (inputs.ts, "none"). A time function's value at the
   * boundary given as a value is a change: it holds from then on, its rate 0.
   */
  setCommand(value: number | null): boolean {
    const before = this.heldCommand();
    const model = this.override === null && value === null;
    this.override = value;
    return !model && (before === null || this.heldCommand() !== before);
  }

  /** The command while it is constant in time (run-time, or the model's constant), else null. */
  private heldCommand(): number | null {
    return this.override ?? (this.command.constant ? this.command.value(0) : null);
  }

  /** The command at t: the run-time value when one is set, else the model's function. */
  commandAt(t: number): number {
    return this.override ?? this.command.value(t);
  }

  /**
   * The law's target rate q̇* at t: a velocity servo's command, a position servo's target's
   * rate (0 while a run-time target holds).
   */
  targetRate(t: number): number {
    if (this.type === "velocity") return this.commandAt(t);
    return this.override === null ? this.command.rate(t) : 0;
  }

  applyForces(t: number): void {
    const tau = this.effortAt(t);
    if (!this.effortHeld) this.effort = tau;
    if (tau !== 0) addGeneralizedEffort(this.sys, this.coordinate, tau);
  }

  /** Its whole effort at t (no potential): power −τ q̇ (W), negative while it drives. */
  applyDissipativeForces(t: number): void {
    const tau = this.effortAt(t);
    if (tau !== 0) addGeneralizedEffort(this.sys, this.coordinate, tau);
  }

  /**
   * ForceEffector.storedEnergy: a position servo's Φ (J) = ∫₀^e clamp(k_p s) ds, e = q − q*,
   * the clamp at effortLimit: ½ k_p e² within the law's linear band, limit |e| − limit²/2k_p
   * beyond (C¹: Φ'(e) = clamp(k_p e)). Its rate Φ'(e) (q̇ − q̇*) is the whole power
   * −τ q̇ = k_p e q̇ of an undamped servo on a fixed target; the rest, k_p e q̇* (a moving
   * target) and the damping's, is what a quadrature is left with. 0 for the other types.
   */
  storedEnergy(t: number): number {
    if (this.kp === 0) return 0;
    const q = this.coordinate;
    q.evaluateValue();
    return this.storedEnergyAt(q.value, t);
  }

  /** Φ (J) at the coordinate's value `value` (rad or m) and t (storedEnergy). */
  storedEnergyAt(value: number, t: number): number {
    return servoPotential(value - this.commandAt(t), this.kp, this.effortLimit);
  }

  /**
   * The largest |q̇| (rad/s or m/s) a position servo's law drives its coordinate to, alone
   * on an inertia I along it (kg·m² or kg), from the error e = q − q* and the rate q̇₀
   * toward a constant target (an input's; inputs.ts refuses a target whose motion is a
   * blow-up). The least of two bounds:
   *   energy   q̇² ≤ q̇₀² + 2 Φ(e)/I   (Φ storedEnergy's, with the clamp at effortLimit:
   *            the damping only takes energy out)
   *   linear   |q̇₀| + |e| ω_n exp(−ζ A),  ω_n = √(k_p/I),  ζ = k_d/(2 √(k_p I)),
   *            A = acos ζ/√(1 − ζ²) (ζ < 1), 1 (ζ = 1), acosh ζ/√(ζ² − 1) (ζ > 1)
   * The linear law's step response from rest, q̇ = |e| (ω_n²/ω_d) e^{−ζ ω_n t} sin ω_d t,
   * peaks at ω_d t = acos ζ (and its continuation through ζ = 1: |e| ω_n/e there, |e| k_p/k_d
   * as ζ → ∞, where the energy bound's |e| ω_n overstates an overdamped servo by 2ζ); the
   * motion from q̇₀ alone never gains energy. It bounds the unclamped law; the clamp only
   * lowers |τ| on the way to the same rest. 0 for the other types. `g`: the gains (those
   * in effect unless given: a `gains` input is checked with its own).
   */
  peakRate(error: number, rate: number, inertia: number, g: ServoGains = this.gains): number {
    if (this.type !== "position") return 0;
    const energy = Math.sqrt(rate * rate + (2 * servoPotential(error, g.kp, g.limit)) / inertia);
    const wn = Math.sqrt(g.kp / inertia);
    const zeta = g.kd / (2 * Math.sqrt(g.kp * inertia));
    const d = Math.abs(zeta - 1);
    const A =
      d < 1e-6
        ? 1
        : zeta < 1
          ? Math.acos(zeta) / Math.sqrt(1 - zeta * zeta)
          : Math.acosh(zeta) / Math.sqrt((zeta - 1) * (zeta + 1));
    const linear = Math.abs(rate) + Math.abs(error) * wn * Math.exp(-zeta * A);
    // (an overflowing ζ reads NaN: the energy bound alone)
    return Number.isNaN(linear) ? energy : Math.min(energy, linear);
  }

  /** ForceEffector.storedPower: Φ̇ = clamp(k_p e) (q̇ − q̇*) (W), see storedEnergy. */
  storedPower(t: number): number {
    if (this.kp === 0) return 0;
    const q = this.coordinate;
    q.evaluate();
    const e = q.value - this.commandAt(t);
    const rate = this.targetRate(t);
    const slope = Math.max(-this.effortLimit, Math.min(this.effortLimit, this.kp * e));
    return slope * (q.rate - rate);
  }

  /**
   * The effort τ at t and the current state, saturated at effortLimit (sets `saturated`),
   * with the coordinate's Jacobian evaluated where τ ≠ 0 (a torque actuator reads neither q
   * nor q̇, and one at zero effort, URDF import's default until an input, nothing).
   */
  private effortAt(t: number): number {
    const q = this.coordinate;
    const u = this.commandAt(t);
    if (this.type === "torque") {
      const tau = this.saturate(u);
      if (tau !== 0) q.evaluateJacobian();
      return tau;
    }
    q.evaluate();
    let tau: number;
    switch (this.type) {
      case "velocity":
        tau = this.kd * (u - q.rate);
        this.scale = this.kd * (Math.abs(u) + Math.abs(q.rate));
        break;
      case "position": {
        const rate = this.targetRate(t);
        const k = this.rateGain();
        tau = this.kp * (u - q.value) + k * (rate - q.rate);
        this.scale =
          this.kp * (Math.abs(u) + Math.abs(q.value)) + k * (Math.abs(rate) + Math.abs(q.rate));
        break;
      }
    }
    return this.saturate(tau);
  }

  /** See the class comment: the part of `da` that stops the law inside its range. */
  stepFraction(da: Float64Array, cx: number, cv: number): number {
    if (!this.saturated || !this.hasJacobians) return 1;
    const law = this.law;
    const after = law - (this.kp * cx + this.rateGain() * cv) * this.coordinate.along(da);
    if (Math.sign(after) === Math.sign(law) || Math.abs(after) <= this.effortLimit) return 1;
    return law / (law - after);
  }

  /** ForceEffector.holdEffort: `effort` kept while held. */
  holdEffort(hold: boolean): void {
    this.effortHeld = hold;
  }

  /** ForceEffector.leadStiffness: δ where k_d < δ k_p, see the class comment. */
  leadStiffness(delta: number): void {
    this.lead = this.kd < delta * this.kp ? delta : 0;
  }

  /** ForceEffector.rateGainAlong: k_d + δ k_p (k_v) along g, 0 saturated or without. */
  rateGainAlong(out: Float64Array): number {
    out.fill(0);
    const gain = this.rateGain();
    if (this.saturated || gain === 0) return 0;
    this.coordinate.evaluateJacobian();
    this.coordinate.spread(1, out);
    return gain;
  }

  /** ForceEffector.lawRate: q̇ at the current state. */
  lawRate(): number {
    this.coordinate.evaluate();
    return this.coordinate.rate;
  }

  /** The rate gain the law applies: k_d (k_v) and the lead's δ k_p (leadStiffness). */
  private rateGain(): number {
    return this.kd + this.lead * this.kp;
  }

  private saturate(tau: number): number {
    this.law = tau;
    this.saturated = Math.abs(tau) > this.effortLimit;
    return this.saturated ? Math.sign(tau) * this.effortLimit : tau;
  }

  /**
   * Symplectic Euler's stability bound by rows (ForceEffector.addExplicitRows): the servo's
   * K = k_p g gᵀ and D = k_d g gᵀ (k_v for the velocity servo) scaled by M^{-1/2} are
   * k u uᵀ, u = M^{-1/2} g, whose block (X, Y) is k u_X u_Yᵀ, of norm k |u_X| |u_Y|, over
   * the blocks X, Y of the coordinate's moving bodies' translations and rotations
   * (coordinateMassNorms: |g_t|/√m, √(g_θᵀ I⁻¹ g_θ)); row X sums k |u_X| Σ_Y |u_Y|
   * against the exact λ_max = k Σ_Y |u_Y|² = k gᵀ M⁻¹ g: equal for a hinge to the ground
   * or a fixed body (g has the one rotation block), at most (1 + √n)/2 times it over n
   * blocks, the worst u being (√n, 1, …, 1): 1.21 for a hinge between two bodies (n = 2),
   * 1.5 for a prismatic joint between two rigid bodies with its frames off their centres
   * (n = 4). M⁻¹ is the bodies' own: the joints' constraints only lower the modes (a
   * uniform rod hinged at its end, I = I_c + m (L/2)² = 4 I_c, is bounded by k_p/I_c, 4
   * times its k_p/I). The gains count
   * saturated too (a servo at its effort limit has no stiffness, but one step of the
   * explicit law can carry it into its linear band, where it has k_p), and so the bound
   * does not depend on the command. Left out, as from the Jacobians: the variation of g
   * with the configuration (of order |τ|, for a hinge |τ|/k_p = |q* − q| rad relative to
   * k_p).
   */
  addExplicitRows(stiff: Float64Array, damp: Float64Array): void {
    if (!this.hasJacobians) return;
    const { sys, coordinate: q, norms: u } = this;
    q.evaluateJacobian();
    coordinateMassNorms(sys, q, u);
    const sum = u[0] + u[1] + u[2] + u[3];
    for (let x = 0; x < 2; x++) {
      const b = x === 0 ? q.bodyA : q.bodyB;
      if (b < 0 || sys.block[b] < 0) continue;
      for (let p = 0; p < 2; p++) {
        stiff[2 * b + p] += this.kp * u[2 * x + p] * sum;
        damp[2 * b + p] += this.kd * u[2 * x + p] * sum;
      }
    }
  }

  /**
   * ForceEffector.unresolvedBy: h λ > 1 with λ = max(k_d/Ĩ, √(k_p/Ĩ)). 1/Ĩ = gᵀ M⁻¹ g, the
   * coordinate's inverse inertia with the joints free (coordinateMassNorms), bounds the
   * rates the joints leave from above (a rod hinged at its end: 4 times its k_d/I; the
   * middle joint of a hanging 3-link chain: 2.4 times), so where it finds the servo
   * unresolved the inertia the joints leave decides (`jointInverseInertia`, gᵀ P M⁻¹ g):
   * with the bound alone a servo within that factor was taken at the weight 1 (first order)
   * where the step resolves it, and under generalized-alpha and moreau-jean the chain's
   * middle servo (k_p = 45 to 80 N·m/rad, k_d = 0.5, following a 0.5 rad, 0.5 Hz sine at
   * 1/60 s) tracked twice as far from the run at h/64 (5.9e-3 to 6.7e-3 rad against
   * 3.0e-3 to 4.0e-3; newmark's the same). The servo's fast mode decays by 1/(1 + h k_d/Ĩ)
   * a step under backward Euler's weight where the trapezoid's (1 − h k_d/2Ĩ)/(1 + h k_d/2Ĩ)
   * rings near −1 (a wheel on a velocity servo at h k_v/I = 333: −0.994 a step). The gains
   * count saturated too (as addExplicitRows), so the choice does not depend on the command.
   */
  unresolvedBy(h: number, jointInverseInertia?: (g: Float64Array) => number): boolean {
    if (!this.hasJacobians || h * this.fastestRate() <= 1) return false;
    if (jointInverseInertia === undefined) return true;
    return h * this.rateAt(this.inverseInertiaAlong(jointInverseInertia)) > 1;
  }

  /**
   * ForceEffector.inverseInertiaAlong: 1/Ĩ along q (1/(kg·m²) or 1/kg), the joints held
   * (`jointInverseInertia` of g) where given, else the bodies' own gᵀ M⁻¹ g (fastestRate's).
   */
  inverseInertiaAlong(jointInverseInertia?: (g: Float64Array) => number): number {
    const u = this.norms;
    if (jointInverseInertia === undefined) {
      this.coordinate.evaluateJacobian();
      coordinateMassNorms(this.sys, this.coordinate, u);
      return u[0] * u[0] + u[1] * u[1] + u[2] * u[2] + u[3] * u[3];
    }
    // g as a generalized force (the effort τ = 1 along q)
    const { sys } = this;
    const direction = directionOf(sys);
    clearForces(sys);
    addGeneralizedEffort(sys, this.coordinate, 1);
    getForces(sys, direction);
    return jointInverseInertia(direction);
  }

  /**
   * ForceEffector.lawGain: ∂τ/∂(g·a) = c_x k_p + c_v (k_d + δ k_p) (the lead's δ k_p
   * included, as stepFraction's), 0 saturated or without a gain.
   */
  lawGain(cx: number, cv: number): number {
    if (this.saturated || !this.hasJacobians) return 0;
    return this.kp * cx + this.rateGain() * cv;
  }

  /** ForceEffector.lawScale: the last law's terms' magnitudes (effortAt). */
  lawScale(): number {
    return this.scale;
  }

  /** ForceEffector.lawAt: the effort τ at t and the current state, not applied. */
  lawAt(t: number): number {
    return this.effortAt(t);
  }

  /** ForceEffector.coordinateAlong: g·x, the coordinate's change along x (a change of the unknown). */
  coordinateAlong(x: Float64Array): number {
    return this.coordinate.along(x);
  }

  /**
   * λ = max(k_d/Ĩ, √(k_p/Ĩ)) (1/s), the servo's fastest rate along its coordinate where the
   * inverse inertia there is `inverseInertia` = 1/Ĩ (1/(kg·m²) or 1/kg): its damping's decay
   * or its stiffness's angular frequency, whichever is faster.
   */
  rateAt(inverseInertia: number): number {
    return Math.max(this.kd * inverseInertia, Math.sqrt(this.kp * inverseInertia));
  }

  /**
   * λ = max(k_d/Ĩ, √(k_p/Ĩ)) (1/s) at the current configuration, 1/Ĩ = gᵀ M⁻¹ g (see
   * unresolvedBy); 0 for a torque actuator.
   */
  fastestRate(): number {
    if (!this.hasJacobians) return 0;
    return this.rateAt(this.inverseInertiaAlong());
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    reserveCoordinateBlocks(this.sys, this.coordinate, m);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    if (!this.saturated && this.kp > 0)
      addCoordinateOuter(this.sys, this.coordinate, m, -s * this.kp);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    const kd = this.rateGain();
    if (!this.saturated && kd > 0) addCoordinateOuter(this.sys, this.coordinate, m, -s * kd);
  }

  /**
   * ForceEffector.addTurnStiffness: s times what the turning of g with the bodies adds to
   * ∂f/∂x. A revolute coordinate's g has the rotational rows t on a and −t on b
   * (kinematics.ts angleJacobian), and q̇ = t·(ω_a − ω_b): f_a = τ t and f_b = −τ t with
   * τ = k_p (q* − q) + k (q̇* − q̇) give, besides −k_p g gᵀ, ∂f_a/∂θ_X = (τ I − k t Δωᵀ) T_X,
   * ∂f_b/∂θ_X = −∂f_a/∂θ_X, T_X = ∂t/∂θ_X (JointCoordinate.curvature), Δω = ω_a − ω_b, k the
   * rate gain with the lead (0 saturated, τ the limit then). A prismatic joint's: addSlideTurn.
   */
  addTurnStiffness(m: SparseBlockMatrix, s: number): void {
    const { sys, coordinate: q, turnA: ta, turnB: tb, turnBlock: k, turnRate: d } = this;
    if (!q.curvature(ta, tb)) {
      this.addSlideTurn(m, s);
      return;
    }
    const tau = this.saturated ? Math.sign(this.law) * this.effortLimit : this.law;
    const gain = this.saturated ? 0 : this.rateGain();
    const t = q.jacA;
    const { omega } = sys;
    for (let i = 0; i < 3; i++) {
      const wa = q.bodyA < 0 ? 0 : omega[3 * q.bodyA + i];
      const wb = q.bodyB < 0 ? 0 : omega[3 * q.bodyB + i];
      d[i] = gain * (wa - wb);
    }
    for (let x = 0; x < 2; x++) {
      const col = x === 0 ? q.bodyA : q.bodyB;
      if (col < 0 || sys.block[col] < 0) continue;
      const T = x === 0 ? ta : tb;
      // the rotation block (rows and columns 3..5 of a 6 × 6, stride 6) of (τ I − t dᵀ) T
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          let v = tau * T[3 * i + j];
          for (let l = 0; l < 3; l++) v -= t[3 + i] * d[l] * T[3 * l + j];
          k[6 * (3 + i) + 3 + j] = v;
        }
      if (q.bodyA >= 0 && sys.block[q.bodyA] >= 0)
        addScaledBlock(m, sys.block[q.bodyA], sys.block[col], 6, 6, k, s);
      if (q.bodyB >= 0 && sys.block[q.bodyB] >= 0)
        addScaledBlock(m, sys.block[q.bodyB], sys.block[col], 6, 6, k, -s);
    }
  }

  /**
   * addTurnStiffness of a prismatic coordinate, whose g = [−e, −ρ × e] on a and
   * [e, r_b × e] on b (kinematics.ts alongJacobian: e the axis, turning with a; r_b b's
   * lever to its anchor, turning with b; ρ = p_b − x_a from a's centre to that anchor)
   * turns with both bodies and moves with their positions. With u ← u + δθ × u and
   * δρ = δx_b + δθ_b × r_b − δx_a, E = [e]×, R = [r_b]×, P = [ρ]×:
   *   δg_a = [E δθ_a;  −E δx_a + P E δθ_a + E δx_b − E R δθ_b]
   *   δg_b = [−E δθ_a;  −R E δθ_a + E R δθ_b]
   * so that ∂f/∂x gains τ Dg − k g (Dgᵀ u)ᵀ beyond −k_p g gᵀ (Dg = ∂g/∂x; the rate
   * q̇ = g·u turns with g at held velocities u; k the rate gain with the lead, 0 saturated).
   * Left out, the Newton matrix missed terms of the size |τ| = k_p |q* − q| (a whole ∂f/∂x at
   * |q* − q| ~ the levers: test/engine/actuators/turn-stiffness.test.ts), as a hinge's did.
   * A particle end has no rotation: its rows and columns are cut to its 3 dofs.
   */
  private addSlideTurn(m: SparseBlockMatrix, s: number): void {
    const { sys, coordinate: q, slideDg: D, slideU: u, slideG: g, slideRate: r } = this;
    const p3 = this.slide3;
    const k = this.turnBlock;
    q.evaluateJacobian();
    const tau = this.saturated ? Math.sign(this.law) * this.effortLimit : this.law;
    const gain = this.saturated ? 0 : this.rateGain();
    const e = q.jacB; // its linear rows: e
    const rb = q.lever(1);
    const rho = q.anchorFromA();
    D.fill(0);
    // E into (0, θ_a) and (a_rot, x_b), −E into (b_lin, θ_a) and (a_rot, x_a)
    p3[0] = 0;
    p3[1] = -e[2];
    p3[2] = e[1];
    p3[3] = e[2];
    p3[4] = 0;
    p3[5] = -e[0];
    p3[6] = -e[1];
    p3[7] = e[0];
    p3[8] = 0;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        const x = p3[3 * i + j];
        D[12 * i + 3 + j] = x;
        D[12 * (3 + i) + 6 + j] = x;
        D[12 * (6 + i) + 3 + j] = -x;
        D[12 * (3 + i) + j] = -x;
      }
    // P E into (a_rot, θ_a); −E R into (a_rot, θ_b); E R into (b_rot, θ_b); −R E into (b_rot, θ_a)
    skewSkew(p3, 0, rho, 0, e, 0);
    for (let i = 0; i < 9; i++) D[12 * (3 + ((i / 3) | 0)) + 3 + (i % 3)] = p3[i];
    skewSkew(p3, 0, e, 0, rb, 0);
    for (let i = 0; i < 9; i++) {
      D[12 * (3 + ((i / 3) | 0)) + 9 + (i % 3)] = -p3[i];
      D[12 * (9 + ((i / 3) | 0)) + 9 + (i % 3)] = p3[i];
    }
    skewSkew(p3, 0, rb, 0, e, 0);
    for (let i = 0; i < 9; i++) D[12 * (9 + ((i / 3) | 0)) + 3 + (i % 3)] = -p3[i];
    // u, g and r = Dgᵀ u
    for (let x = 0; x < 2; x++) {
      const b = x === 0 ? q.bodyA : q.bodyB;
      const jac = x === 0 ? q.jacA : q.jacB;
      for (let i = 0; i < 3; i++) {
        u[6 * x + i] = b < 0 ? 0 : sys.vel[3 * b + i];
        u[6 * x + 3 + i] = b < 0 ? 0 : sys.omega[3 * b + i];
      }
      for (let i = 0; i < 6; i++) g[6 * x + i] = jac[i];
    }
    for (let j = 0; j < 12; j++) {
      let v = 0;
      for (let i = 0; i < 12; i++) v += D[12 * i + j] * u[i];
      r[j] = gain * v;
    }
    for (let x = 0; x < 2; x++) {
      const row = x === 0 ? q.bodyA : q.bodyB;
      if (row < 0 || sys.block[row] < 0) continue;
      for (let y = 0; y < 2; y++) {
        const col = y === 0 ? q.bodyA : q.bodyB;
        if (col < 0 || sys.block[col] < 0) continue;
        for (let i = 0; i < 6; i++)
          for (let j = 0; j < 6; j++)
            k[6 * i + j] = tau * D[12 * (6 * x + i) + 6 * y + j] - g[6 * x + i] * r[6 * y + j];
        const bi = sys.block[row];
        const bj = sys.block[col];
        addScaledBlock(m, bi, bj, m.blockSize[bi], m.blockSize[bj], k, s);
      }
    }
  }

  potentialEnergy(): number {
    return 0;
  }
}

/**
 * A position servo's Φ(e) (J) at the error e = q − q* (rad or m), k_p and |τ| at most
 * (storedEnergy): ½ k_p e² within the law's linear band |e| ≤ limit/k_p, beyond it
 * limit |e| − limit²/2k_p.
 */
function servoPotential(error: number, kp: number, limit: number): number {
  const e = Math.abs(error);
  const band = limit / kp;
  return e <= band ? 0.5 * kp * e * e : limit * (e - 0.5 * band);
}

/** Adds the generalized force gᵀτ of an effort τ along q to sys.force / sys.torque. */
export function addGeneralizedEffort(sys: BodySystem, q: JointCoordinate, tau: number): void {
  addSide(sys, q.bodyA, q.jacA, tau);
  addSide(sys, q.bodyB, q.jacB, tau);
}

function addSide(sys: BodySystem, b: number, g: Float64Array, tau: number): void {
  if (b < 0 || sys.block[b] < 0) return;
  const i = 3 * b;
  sys.force[i] += g[0] * tau;
  sys.force[i + 1] += g[1] * tau;
  sys.force[i + 2] += g[2] * tau;
  sys.torque[i] += g[3] * tau;
  sys.torque[i + 1] += g[4] * tau;
  sys.torque[i + 2] += g[5] * tau;
}

/**
 * out ← the norms of M^{-1/2} g over the coordinate's blocks, [a_t, a_θ, b_t, b_θ]: a moving
 * body's translation |g_t|/√m (1/√kg times g's unit, 1 for a prismatic joint's axis) and
 * rigid body's rotation √(g_θᵀ I⁻¹ g_θ) (I its world inertia); 0 for ground, a fixed body
 * and a particle's rotation. Their squares sum to gᵀ M⁻¹ g, the inverse of the inertia
 * along q with the joints free (joint-limit.ts coordinateInertia); the norms themselves
 * bound a servo's explicit rates (JointActuator.addExplicitRows). Reads g as last evaluated.
 */
export function coordinateMassNorms(sys: BodySystem, q: JointCoordinate, out: Float64Array): void {
  out.fill(0);
  for (let x = 0; x < 2; x++) {
    const b = x === 0 ? q.bodyA : q.bodyB;
    if (b < 0 || sys.block[b] < 0) continue;
    const g = x === 0 ? q.jacA : q.jacB;
    out[2 * x] = Math.sqrt((g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / sys.mass[b]);
    if (sys.hasOrientation[b] !== 1) continue;
    const J = sys.inertiaWorldInv;
    const o = 9 * b;
    let s = 0;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) s += g[3 + i] * J[o + 3 * i + j] * g[3 + j];
    out[2 * x + 1] = Math.sqrt(Math.max(s, 0));
  }
}

/** Reserves the blocks (a,a), (a,b), (b,a), (b,b) of the coordinate's dynamic bodies. */
export function reserveCoordinateBlocks(
  sys: BodySystem,
  q: JointCoordinate,
  m: SparseBlockMatrix,
): void {
  const ka = q.bodyA < 0 ? -1 : sys.block[q.bodyA];
  const kb = q.bodyB < 0 ? -1 : sys.block[q.bodyB];
  for (const i of [ka, kb]) for (const j of [ka, kb]) if (i >= 0 && j >= 0) m.addBlock(i, j);
}

/** Adds c g gᵀ to the solve matrix (c = −s k for a stiffness or damping k along q, s the integrator's negative factor). */
export function addCoordinateOuter(
  sys: BodySystem,
  q: JointCoordinate,
  m: SparseBlockMatrix,
  c: number,
): void {
  const ka = q.bodyA < 0 ? -1 : sys.block[q.bodyA];
  const kb = q.bodyB < 0 ? -1 : sys.block[q.bodyB];
  if (ka >= 0) addOuterBlock(m, ka, q.jacA, ka, q.jacA, c);
  if (kb >= 0) addOuterBlock(m, kb, q.jacB, kb, q.jacB, c);
  if (ka >= 0 && kb >= 0) {
    addOuterBlock(m, ka, q.jacA, kb, q.jacB, c);
    addOuterBlock(m, kb, q.jacB, ka, q.jacA, c);
  }
}

/** Block (bi, bj) += c gi gjᵀ over the blocks' widths (3 or 6). */
function addOuterBlock(
  m: SparseBlockMatrix,
  bi: number,
  gi: Float64Array,
  bj: number,
  gj: Float64Array,
  c: number,
): void {
  const off = m.offsetOf(bi, bj);
  if (off < 0) throw new Error(`block (${bi}, ${bj}) was not reserved (call addSolveBlocks)`);
  const wi = m.blockSize[bi];
  const wj = m.blockSize[bj];
  const v = m.values;
  for (let r = 0; r < wi; r++) {
    const x = c * gi[r];
    if (x === 0) continue;
    for (let k = 0; k < wj; k++) v[off + r * wj + k] += x * gj[k];
  }
}
