/**
 * Compliant joint limits (actuators/joint-limit.ts) switching within a step of newmark or
 * generalized-alpha: the step is split where the law switches, so that no piece integrates
 * a switch.
 *
 * The trapezoidal family weighs a force at the step's ends, as if it acted linearly in
 * between. A limit's push s = k δ + c q̇_in min(1, δ/δ_r) (CompliantJointLimit.push) is
 * continuous but kinked where it switches (δ = 0 on the way in, s = 0 on the way out), and a
 * step over the kink misses the work of the free part of its motion: a limit met after a
 * free travel Δq_f of the step's Δq, δ₁ deep at its end, does ½ s₁ Δq of work in the step
 * where the potential rose by ½ k δ₁² (a loss of ½ s₁ Δq_f), and a limit left gives back
 * ½ s₀ Δq where it held ½ k δ₀² (a gain of ½ s₀ Δq_f). At a step that does not resolve the
 * limit's period (h ω > 1, ω = √(k/m̃)) the gains win: a 2 kg slider pushed by 3 N onto its
 * bound at 0.55 m/s (default stiffness, h ω = 5.2 at 1/60 s) was thrown back at 2.0 m/s
 * under newmark, energy.error +7 J of 0.3 J, and an undamped rod dropped onto its limit
 * gained 3.9 J over 60 s.
 *
 * So after each solved step (or piece) the limits' switch functions at its ends are
 * compared (`splitFraction`); where one changed sign its zero τ ∈ (0, 1) is located by
 * bisection on the cubic Hermite interpolant of q through the ends' values and rates, and
 * where a bound is met also on the free motion q0 + q̇0 t + ½ q̈_f t² (q̈_f the start's,
 * from the integrator's acceleration there), the earlier taken; the step is redone as the
 * pieces [0, τ h] and [τ h, h] (step-halving.ts, `splitAt`), each checked again. Every
 * switch is located, the end of the damping's ramp (δ = δ_r, `locateRamp`) too where the
 * step resolves the limit, except one within MIN_PIECE of a piece's end or whose flight
 * the steps cannot resolve (UNRESOLVED_FLIGHT); the pieces count as halvings (at most
 * MAX_HALVINGS deep, the last one kept whatever its switch). The pieces between switches
 * see the law smooth, which the scheme integrates to its order: the undamped limit's
 * elastic force is linear in δ, which the trapezoidal rule conserves whatever h ω. A rod
 * dropped from level onto an undamped limit, 60 s at 1/60 s and 5 ms, h ω from 0.3 to 2.6:
 * energy.error never above +1.5e-4 J of the 2.35 J it falls (+3.9 J and +0.08 J under
 * newmark before; generalized-alpha +0.05 J at 5 ms, and at 1/60 s it lost the whole
 * bounce, −2.3 J), at most −0.13 J after 60 s, the scheme's own error of the swing
 * (test/engine/integrators/limit-switch.test.ts); Newton iterations +6 to +20 % a step on
 * that run, where every 0.55 s a bounce is located (and up to 9 % more since every switch
 * is: 1.03 to 3.64 a step over the runs of that test).
 *
 * Located so, the pieces keep the scheme's second order at every h: a rod dropped onto a
 * damped limit at ζ = ½ (test/engine/integrators/limit-order.test.ts, HALF_DAMPED). Two
 * things had made it first order (the angle's error over the stop 6.5e-6, 1.7e-6, 4.7e-7,
 * 1.5e-7 rad at h = 1e-4 … 1.25e-5 s now; before, located at every h, 3.9e-4, 1.7e-4,
 * 5.9e-5 rad, successive differences 2.2e-4, 1.1e-4, 5.5e-5): the ramp's end, which lasts
 * δ_r/|q̇| (33 µs at the rod's 3 rad/s), shorter than the step, so that a step over it saw
 * the damping jump by c q̇_in; and a tolerance on the work a switch left in its piece
 * misses (1e-4 of the energy at stake), crossed as h fell, so that a switch was located at
 * one step and left at the next, its error then the unlocated kink's (the ramp's end at
 * 1.25e-5 s: 4.1e-6 rad, where 2.5e-5 s had 6.9e-7).
 */
import { type CompliantJointLimit, DAMPING_RAMP } from "../actuators/joint-limit";
import { UNRESOLVED_H_OMEGA } from "./resolution";

/**
 * The shortest piece (of the integrator's h) a switch is split off into: a switch within
 * it of a piece's end stays there. A piece ended at a located switch is off the
 * interpolant's zero by the interpolant's error, so the next piece finds the switch again
 * within ~1e-10 of its start; split there, the pieces went down to 1e-17 s, where Newton
 * failed. A kink left that close to a step's end misses ~1e-6 of the work an unlocated
 * one does.
 */
export const MIN_PIECE = 1e-6;

/**
 * Steps (of the integrator's h) within which a flight off the bound and back, 2 |q̇|/|q̈_f|
 * at the rate q̇ of the piece's free end under the free acceleration q̈_f there, is left
 * unresolved: its switches stay in their pieces. q̈_f is g · a of the acceleration the
 * integrator gives (newmark: a_t and a_{t+h}; generalized-alpha: A_n + Y λ̃ at the start, none
 * at the end, whose Y λ̃ is the start's joint force: its exits are always located), so that
 * a run restored from a snapshot splits its steps as the run it was taken from. A joint brought to rest on its bound by a damped limit bounces ever
 * shorter (a Zeno sequence): located, each bounce kept its piece's energy and the pieces
 * never settled (a 2 kg slider pushed by 3 N onto the default limit at 1/60 s hopped 5e-5 m
 * for ever, 2 pieces and 8.8 Newton iterations a step); left in its piece, a switch at such
 * a rate misses at most the work of a flight of four steps, ½ m̃ (2 q̈_f h)² (the joint limits'
 * nonsmooth law ends such rebounds at rest likewise: limit-problem.ts).
 */
export const UNRESOLVED_FLIGHT = 4;

/**
 * q̈ = g · a of limit l's coordinate along the generalized acceleration a where neither of
 * its bounds pushes at the current state, else (or a null) NaN.
 */
function freeAlong(l: CompliantJointLimit, a: Float64Array | null): number {
  const q = l.coordinate;
  if (a === null || l.push(1, q.value, q.rate) > 0 || l.push(-1, q.value, q.rate) > 0)
    return Number.NaN;
  return q.along(a);
}

/** The switch functions of a bound (`switchValue`). */
const PUSH = 0;
const ELASTIC = 1;
const RAMP = 2;
type SwitchKind = typeof PUSH | typeof ELASTIC | typeof RAMP;

/** Bisection steps on τ ∈ [0, 1] (2⁻⁵⁰ of the piece: to rounding). */
const BISECTIONS = 50;

export class LimitSwitches {
  /** q and q̇ of each limit at the piece's start (`begin`). */
  private readonly start: Float64Array;
  /**
   * ω = √(k/m̃) of each limit (rad/s; m̃ its coordinate's inertia with the joints,
   * CompliantJointLimit.inertia: 2π/0.02 s at the default k): `locateRamp`.
   */
  private readonly omega: Float64Array;
  /**
   * Each limit's q̈ (rad/s², m/s²) at the piece's start and end, g · a of the accelerations
   * the integrator gives (`begin`, splitFraction: functions of the state and the memory,
   * which snapshots keep), where neither bound pushes there (the free motion's, a bound met
   * is located on and a flight is measured with), else NaN.
   */
  private readonly free: Float64Array;
  private readonly freeEnd: Float64Array;
  /** The cubic q(τ) = Σ cubic[j] τʲ through the piece's ends (splitFraction). */
  private readonly cubic = new Float64Array(4);
  /** The integrator's step h (s) whose pieces are checked (UNRESOLVED_FLIGHT). */
  stepSize = 0;
  /** The rate of the limit splitFraction checks at the piece's end. */
  private endRate = 0;

  constructor(private readonly limits: readonly CompliantJointLimit[]) {
    this.start = new Float64Array(2 * limits.length);
    this.free = new Float64Array(limits.length);
    this.freeEnd = new Float64Array(limits.length);
    this.omega = new Float64Array(limits.length);
    limits.forEach((l, i) => {
      this.omega[i] = Math.sqrt(l.stiffness / l.inertia);
    });
  }

  /**
   * At a piece's start: records each limit's coordinate, rate and free acceleration along
   * `accel`, the state's generalized acceleration with the joints' forces (null: none known).
   */
  begin(accel: Float64Array | null): void {
    const { limits, start } = this;
    for (let i = 0; i < limits.length; i++) {
      if (!limits[i].enabled) continue;
      const q = limits[i].coordinate;
      q.evaluate();
      start[2 * i] = q.value;
      start[2 * i + 1] = q.rate;
      this.free[i] = freeAlong(limits[i], accel);
    }
  }

  /**
   * At the end of the piece of h (s) `begin` started: the fraction τ ∈ (0, 1) of it at which
   * the earliest switch the piece may not keep lies (the file comment), or 0: none.
   */
  splitFraction(h: number, accel: Float64Array | null): number {
    const { limits, start, cubic } = this;
    let earliest = 1;
    for (let i = 0; i < limits.length; i++) {
      const l = limits[i];
      if (!l.enabled) continue;
      const q = l.coordinate;
      q.evaluate();
      const q0 = start[2 * i];
      const r0 = start[2 * i + 1];
      cubic[0] = q0;
      cubic[1] = h * r0;
      const dq = q.value - q0;
      this.endRate = q.rate;
      this.freeEnd[i] = freeAlong(l, accel);
      cubic[2] = 3 * dq - 2 * cubic[1] - h * q.rate;
      cubic[3] = cubic[1] + h * q.rate - 2 * dq;
      for (let sigma = 1; sigma >= -1; sigma -= 2) {
        earliest = Math.min(
          earliest,
          this.locate(i, sigma, false, h),
          this.locate(i, sigma, true, h),
          this.locateRamp(i, sigma, h),
        );
      }
    }
    return earliest < 1 && earliest > 0 ? earliest : 0;
  }

  /**
   * The switch of limit i's bound σ within the piece of h: τ where its push
   * (`elastic` false) or its elastic part k δ (true: where a clamped push lets the elastic
   * energy go, which the energy balance books as the limit's dissipation at the same
   * weights; file comment) changes sign on the cubic, or 1 where it does not or the piece
   * keeps it (MIN_PIECE, UNRESOLVED_FLIGHT). A bound met is located on the free motion
   * q0 + q̇0 t + ½ q̈_f t² too (q̈_f the start's, `free`), and the earlier of the two taken:
   * the cubic's end rate holds the end's push, which at h ω ≫ 1 moved its zero by half the
   * distance left (the pieces ended 50 % of the way closer each, four halvings short of the
   * bound at the default stiffness and 1/60 s); once a piece ends near the bound that push
   * is small and the cubic exact.
   */
  private locate(i: number, sigma: number, elastic: boolean, h: number): number {
    const l = this.limits[i];
    const kind = elastic ? ELASTIC : PUSH;
    const s0 = this.switchValue(l, sigma, kind, 0, h);
    const s1 = this.switchValue(l, sigma, kind, 1, h);
    // (k δ where the bound is met: the push's own switch, at δ = 0 too)
    if (s0 > 0 === s1 > 0 || (elastic && s0 <= 0)) return 1;
    let tau = this.bisect(l, sigma, kind, h, s0 > 0);
    if (s0 <= 0) tau = Math.min(tau, this.freeArrival(i, sigma, h));
    if (this.tooShort(tau, h)) return 1;
    // a switch at a rate the steps cannot resolve (UNRESOLVED_FLIGHT) stays in its piece:
    // the rate at the piece's free end (the approach's at its start where the bound is met,
    // the rebound's at its end where it is left; the cubic across a stiff limit's turn
    // does not give the rate at the switch)
    const freeRate = s0 > 0 ? this.endRate : this.start[2 * i + 1];
    const pull = s0 > 0 ? this.freeEnd[i] : this.free[i];
    return Math.abs(freeRate) <= 0.5 * UNRESOLVED_FLIGHT * Math.abs(pull) * this.stepSize ? 1 : tau;
  }

  /**
   * The end of limit i's damping ramp at bound σ within the piece of h: τ where the depth δ
   * crosses δ_r = DAMPING_RAMP on the cubic while the bound pushes there, or 1 where it
   * does not or the piece keeps it (MIN_PIECE). The push k δ + c q̇_in min(1, δ/δ_r) is
   * kinked there, and the ramp lasts δ_r/|q̇|, shorter than the step at ordinary rates (33 µs
   * for the rod of the file comment at 3 rad/s): a step over it sees the damping jump by
   * c q̇_in, a first-order error. Located only where the step resolves the limit
   * (h ω ≤ UNRESOLVED_H_OMEGA), where the order is the scheme's to keep: at h ω = 5.2 the
   * README's slider (limit-switch.test.ts) then left its bound at 0.089 m/s where the law
   * gives 0.074 (0.137 unlocated), and its shorter hops, which the steps cannot resolve
   * (UNRESOLVED_FLIGHT), gained 3.5e-3 J in all where they had gained 1.7e-3 J.
   */
  private locateRamp(i: number, sigma: number, h: number): number {
    const l = this.limits[i];
    if (!(l.damping > 0) || this.stepSize * this.omega[i] > UNRESOLVED_H_OMEGA) return 1;
    const d0 = this.switchValue(l, sigma, RAMP, 0, h);
    const d1 = this.switchValue(l, sigma, RAMP, 1, h);
    if (d0 > 0 === d1 > 0) return 1;
    const tau = this.bisect(l, sigma, RAMP, h, d0 > 0);
    return this.tooShort(tau, h) || !(this.switchValue(l, sigma, PUSH, tau, h) > 0) ? 1 : tau;
  }

  /** Whether a split at τ of the piece of h leaves a piece shorter than MIN_PIECE. */
  private tooShort(tau: number, h: number): boolean {
    const shortest = MIN_PIECE * this.stepSize;
    return tau * h < shortest || (1 - tau) * h < shortest;
  }

  /**
   * τ ∈ (0, 1) where switch function `kind` of bound σ changes sign on the cubic, by
   * bisection (`positive`: its sign at τ = 0).
   */
  private bisect(
    l: CompliantJointLimit,
    sigma: number,
    kind: SwitchKind,
    h: number,
    positive: boolean,
  ): number {
    let lo = 0;
    let hi = 1;
    for (let k = 0; k < BISECTIONS; k++) {
      const tau = 0.5 * (lo + hi);
      if (this.switchValue(l, sigma, kind, tau, h) > 0 === positive) lo = tau;
      else hi = tau;
    }
    return 0.5 * (lo + hi);
  }

  /**
   * The fraction of the piece of h at which limit i's free motion q0 + q̇0 t + ½ q̈_f t²
   * reaches bound σ (the first root in (0, 1]), or 1: none, or no free q̈ known.
   */
  private freeArrival(i: number, sigma: number, h: number): number {
    const l = this.limits[i];
    const a = this.free[i];
    if (!Number.isFinite(a)) return 1;
    // the depth σ (bound − q) at t: d0 − σ (q̇0 t + ½ a t²), zero at the first positive root
    const d0 = sigma > 0 ? l.lower - this.start[2 * i] : this.start[2 * i] - l.upper;
    const u = -sigma * this.start[2 * i + 1];
    const c = -0.5 * sigma * a;
    // c t² + u t + d0 = 0 with d0 < 0 (outside): t = 2 |d0| / (u + √(u² − 4 c d0))
    const disc = u * u - 4 * c * d0;
    if (!(disc >= 0)) return 1;
    const root = (-2 * d0) / (u + Math.sqrt(disc));
    return root > 0 && root < h ? root / h : 1;
  }

  /**
   * Switch function `kind` of bound σ at τ on the cubic: the push, k δ (`locate`), or
   * δ − δ_r (`locateRamp`).
   */
  private switchValue(
    l: CompliantJointLimit,
    sigma: number,
    kind: SwitchKind,
    tau: number,
    h: number,
  ): number {
    const cubic = this.cubic;
    const value = this.valueAt(tau);
    const depth = sigma > 0 ? l.lower - value : value - l.upper;
    if (kind === ELASTIC) return l.stiffness * depth;
    if (kind === RAMP) return depth - DAMPING_RAMP;
    const rate = (cubic[1] + tau * (2 * cubic[2] + 3 * tau * cubic[3])) / h;
    return l.push(sigma, value, rate);
  }

  /** q(τ) on the cubic. */
  private valueAt(tau: number): number {
    const cubic = this.cubic;
    return cubic[0] + tau * (cubic[1] + tau * (cubic[2] + tau * cubic[3]));
  }
}
