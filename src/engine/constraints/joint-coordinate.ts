/**
 * The free coordinate q of a revolute joint (the angle of b relative to a about the axis,
 * rad) or of a prismatic joint (the offset of b along the axis, m), both zero in the
 * model pose, with its rate q̇ and its Jacobian g: q̇ = g_a·[v_a; ω_a] + g_b·[v_b; ω_b]
 * (world frame, ω about the centres of mass). Actuators and joint limits act along g: a
 * generalized effort τ (N·m or N, positive drives q up) is the force gᵀτ on the bodies.
 *
 * The measure is the driving row of a motor on the joint (motor.ts) with the drive held
 * at zero, so a coordinate, a motor and the joint agree on the angle's origin and sign.
 *
 * Revolute angles are unwrapped: the measure gives φ ∈ (−π, π]; q = φ + 2πk with the
 * turn count k taken at the last step boundary (track()) and, inside a step, the branch
 * nearest to the angle then: a step must turn the joint by less than π, the integrators
 * that step the bodies' positions (a step turning it further reads q 2π off, and a servo
 * on it runs away). An integrator that steps the joint's angle itself, unbounded
 * (articulated.ts), lifts the limit: it gives the coordinate its unwrapped value at each
 * configuration it places (guide()), and the branch nearest that is taken, inside the
 * step and by track() at its end, however far the step turned it. q is computed from φ
 * and the integer k only, so a continuation from a snapshot (which saves k and the last
 * φ) evaluates the same numbers.
 */

import { BodyKind, type BodySystem } from "../model/body-system";
import { PrismaticMotor, RevoluteMotor } from "./motor";
import { type Attachment, hasOrientation } from "./pair-constraint";

const ZERO_DRIVE = { value: () => 0, rate: () => 0, accel: () => 0, constant: true };
const TWO_PI = 2 * Math.PI;

export class JointCoordinate {
  /** q (rad or m) and q̇ (rad/s or m/s) at the last evaluate(). */
  value = 0;
  rate = 0;
  /** g_a and g_b (6 each: [linear, angular]; a particle's angular part is zero). */
  readonly jacA = new Float64Array(6);
  readonly jacB = new Float64Array(6);
  /** The joint limit's effort at the last evaluation (N·m or N; 0 inside the range or without limits). */
  limitEffort = 0;
  /** Turn count k and φ at the last step boundary (revolute only). */
  turns = 0;
  lastAngle = 0;
  /**
   * The unwrapped q (rad) of the current configuration as an integrator knows it, which
   * guide() takes (set here first: a double passed as an argument to a call V8 does not
   * inline is an allocation, as articulated.ts's stageTime).
   */
  guided = 0;
  /** The system's poseVersion at the last guide() (−1: none). */
  private guideVersion = -1;
  private readonly scratch = new Float64Array(1);
  /** q and g at the start of the running step (holdStart), for guideFrom. */
  private startValue = 0;
  private readonly startJacA = new Float64Array(6);
  private readonly startJacB = new Float64Array(6);

  constructor(
    /** The joint's model id. */
    readonly joint: string,
    /** "angle" (revolute, rad) or "offset" (prismatic, m). */
    readonly kind: "angle" | "offset",
    private readonly sys: BodySystem,
    private readonly measure: RevoluteMotor | PrismaticMotor,
  ) {}

  get bodyA(): number {
    return this.measure.bodyA;
  }

  get bodyB(): number {
    return this.measure.bodyB;
  }

  /** q, q̇ and g at the system's current positions and velocities. */
  evaluate(): void {
    this.evaluateValue();
    this.evaluateJacobian();
    this.rate = this.side(this.jacA, this.measure.bodyA) + this.side(this.jacB, this.measure.bodyB);
  }

  /**
   * q alone at the current positions (rate and g left as they were): what a joint limit
   * inside its range reads, at a third of evaluate's cost.
   */
  evaluateValue(): void {
    this.measure.residual(0, this.scratch, 0);
    const raw = this.scratch[0];
    this.value = this.kind === "angle" ? raw + TWO_PI * this.turnCount() : raw;
  }

  /**
   * Takes `guided` (set just before) as the unwrapped angle q (rad) of the current
   * configuration, as an integrator that steps the joint's angle itself knows it (within
   * π of it suffices): until the pose changes (the system's poseVersion), evaluate,
   * evaluateValue and track read q on the branch of φ nearest it, instead of the one
   * nearest the last step boundary's angle.
   */
  guide(): void {
    this.guideVersion = this.sys.poseVersion;
  }

  /**
   * At a step's start (the current configuration): keeps q and g, from which guideFrom
   * guides the configurations the step places and guideStart the start again.
   */
  holdStart(): void {
    this.evaluate();
    this.startValue = this.value;
    this.startJacA.set(this.jacA);
    this.startJacB.set(this.jacB);
  }

  /**
   * Guides the current configuration, placed from the held start by the increment x (a
   * generalized vector: a rotation vector per rigid body), with q_start + g_start · x: exact
   * for a rotation about the joint's axis, within π of the truth for any step Newton
   * resolves (AccelerationStepper.applyUnknown).
   */
  guideFrom(x: Float64Array): void {
    this.guided =
      this.startValue +
      this.sideOf(this.startJacA, this.measure.bodyA, x) +
      this.sideOf(this.startJacB, this.measure.bodyB, x);
    this.guide();
  }

  /** Guides the held start's configuration, put back (a halved step's restore). */
  guideStart(): void {
    this.guided = this.startValue;
    this.guide();
  }

  /** The turn count k of the reading φ in scratch[0] (see the file comment). */
  private turnCount(): number {
    const raw = this.scratch[0];
    // (+ 0: a count of −0 reads as 0 in a snapshot)
    if (this.guideVersion === this.sys.poseVersion)
      return Math.round((this.guided - raw) / TWO_PI) + 0;
    const d = raw - this.lastAngle;
    return this.turns + (d > Math.PI ? -1 : d < -Math.PI ? 1 : 0);
  }

  /** g alone at the current positions (value and rate left as they were): what an effort needs. */
  evaluateJacobian(): void {
    this.measure.jacobian(0, this.jacA, this.jacB);
  }

  /**
   * A revolute coordinate's ∂g_a/∂θ_a and ∂g_a/∂θ_b (3×3 row-major: the rotational rows of
   * g_a = −g_b as the bodies turn, RevoluteMotor.curvature) at the current configuration;
   * false (nothing written) for a prismatic one.
   */
  curvature(ta: Float64Array, tb: Float64Array): boolean {
    if (!(this.measure instanceof RevoluteMotor)) return false;
    this.measure.curvature(ta, tb);
    return true;
  }

  /**
   * The lever r = R s (m, world) from body a's (`side` 0) or b's (1) centre of mass to the
   * joint's anchor on it, as of the last evaluate or evaluateJacobian (read in place).
   */
  lever(side: 0 | 1): Float64Array {
    return side === 0 ? this.measure.k.ra : this.measure.k.rb;
  }

  /**
   * The lever ρ = p_b − x_a (m, world) from body a's centre of mass (the origin for the
   * ground) to the joint's anchor on b, as of the last evaluate or evaluateJacobian (read in
   * place): a prismatic coordinate's g_a = [−e, −ρ × e] (JointActuator.addSlideTurn).
   */
  anchorFromA(): Float64Array {
    return this.measure.k.pbxa;
  }

  /**
   * Qc of the coordinate: −(d/dt g)·u at the current positions and velocities, so that
   * q̈ = g·u̇ − Qc (rad/s² or m/s²; the measure's acceleration term with its drive at zero).
   */
  quadraticTerm(): number {
    this.measure.quadraticTerm(0, this.scratch, 0);
    return this.scratch[0];
  }

  /**
   * Force and torque on the joint's body b (world; torque about its attachment point on b)
   * of the effort lambda[off] along g (N·m or N), as a motor on the joint reports it.
   */
  reaction(lambda: Float64Array, off: number, force: Float64Array, torque: Float64Array): void {
    this.measure.reaction(lambda, off, force, torque);
  }

  /**
   * Takes the turn count at a step boundary (after a step, a reset or a teleport): the
   * branch nearest the guide given at this configuration, else the one nearest the last
   * boundary's angle.
   */
  track(): void {
    if (this.kind !== "angle") return;
    const raw = this.raw();
    this.turns = this.turnCount();
    this.lastAngle = raw;
  }

  /** Back to the model pose's branch (k = 0) at the current state. */
  resetTurns(): void {
    this.turns = 0;
    this.lastAngle = 0;
    this.guideVersion = -1;
    this.track();
  }

  /** φ ∈ (−π, π] of the current configuration. */
  private raw(): number {
    this.measure.residual(0, this.scratch, 0);
    return this.scratch[0];
  }

  /**
   * g · x for a generalized vector x (the body system's layout: [v, ω] of a rigid body, v of
   * a particle, from dofOffset): the coordinate's rate along a velocity-like x, as of the
   * last evaluate.
   */
  along(x: Float64Array): number {
    return (
      this.sideOf(this.jacA, this.measure.bodyA, x) + this.sideOf(this.jacB, this.measure.bodyB, x)
    );
  }

  /** out += s g in the same layout (`along`'s transpose), as of the last evaluate. */
  spread(s: number, out: Float64Array): void {
    this.spreadSide(this.jacA, this.measure.bodyA, s, out);
    this.spreadSide(this.jacB, this.measure.bodyB, s, out);
  }

  private spreadSide(g: Float64Array, b: number, s: number, out: Float64Array): void {
    if (b < 0) return;
    const o = this.sys.dofOffset[b];
    if (o < 0) return; // fixed
    const w = this.sys.kind[b] === BodyKind.RIGID ? 6 : 3;
    for (let j = 0; j < w; j++) out[o + j] += s * g[j];
  }

  private sideOf(g: Float64Array, b: number, x: Float64Array): number {
    if (b < 0) return 0;
    const o = this.sys.dofOffset[b];
    if (o < 0) return 0; // fixed
    let s = g[0] * x[o] + g[1] * x[o + 1] + g[2] * x[o + 2];
    if (this.sys.kind[b] === BodyKind.RIGID)
      s += g[3] * x[o + 3] + g[4] * x[o + 4] + g[5] * x[o + 5];
    return s;
  }

  /** g_X · [v_X; ω_X] (0 for ground and fixed bodies). */
  private side(g: Float64Array, b: number): number {
    if (b < 0) return 0;
    const { vel, omega } = this.sys;
    const i = 3 * b;
    return (
      g[0] * vel[i] +
      g[1] * vel[i + 1] +
      g[2] * vel[i + 2] +
      g[3] * omega[i] +
      g[4] * omega[i + 1] +
      g[5] * omega[i + 2]
    );
  }
}

/**
 * The coordinate of a revolute joint between two oriented ends (ground or rigid bodies),
 * or of a prismatic joint; null for a revolute joint with a particle end (no angle).
 */
export function createJointCoordinate(
  sys: BodySystem,
  joint: { id: string; type: "revolute" | "prismatic"; axis: ArrayLike<number> },
  a: Attachment,
  b: Attachment,
): JointCoordinate | null {
  if (joint.type === "revolute") {
    if (!hasOrientation(sys, a.body) || !hasOrientation(sys, b.body)) return null;
    const m = new RevoluteMotor(`${joint.id}#q`, joint.id, sys, a, b, joint.axis, ZERO_DRIVE);
    return new JointCoordinate(joint.id, "angle", sys, m);
  }
  const m = new PrismaticMotor(`${joint.id}#q`, joint.id, sys, a, b, joint.axis, ZERO_DRIVE);
  return new JointCoordinate(joint.id, "offset", sys, m);
}
