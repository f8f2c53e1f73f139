/**
 * Axial spring-damper between a point on body a and a point on body b (ArtiSynth's
 * AxialSpring). Either body may be ground (−1), a particle or a rigid body; the points are
 * in the body frames.
 *
 * With d = x_B − x_A, l = |d|, û = d / l, ḋ = v_B − v_A, l̇ = ûᵀ ḋ:
 *   f_b = −(k (l − l0) + c l̇) û = −s û,   f_a = −f_b        (N)
 * applied at the two points (so rigid bodies also get r × f about their centres of mass).
 * A spring with rest length l0 = 0 is linear instead: f_b = −k d − c ḋ (no direction is
 * needed, so it is smooth through l = 0). Its damping is isotropic, so unlike the axial
 * damper its force is not along d: it conserves linear momentum but exerts the net moment
 * d × f_b = −c d × ḋ on the pair (zero when d ∥ ḋ or c = 0).
 *
 * Jacobians of f_b with respect to d and ḋ (P = I − ûûᵀ, ∂û/∂d = P / l,
 * ∂l̇/∂d = ḋᵀ P / l):
 *   A = ∂f/∂d = −k ûûᵀ − (s / l) P − (c / l) û (P ḋ)ᵀ        B = ∂f/∂ḋ = −c ûûᵀ
 *   (zero-length: A = −k I, B = −c I)
 * and the chain rule through the attachment points (rotating offsets r = R p, moment arms,
 * point velocities v + ω × r) is TwoPointCoupling's (two-point.ts). If l collapses to 0
 * with l0 > 0 the direction is undefined: the force and its Jacobian are taken as 0
 * (as ArtiSynth does), never NaN.
 *
 * jacobianType (what adding s·J with the integrator's s < 0 preserves; it depends on the
 * state, so read it when the solve matrix is assembled):
 *   - SPD when no end is a dynamic rigid body with a moment arm and either l0 = 0
 *     (A = −kI, B = −cI) or c = 0 and l ≥ l0 (in tension: −A = k ûûᵀ + (s/l) P ⪰ 0);
 *   - SYMMETRIC for such a spring in compression with c = 0 ((s/l) P < 0: indefinite);
 *   - GENERAL when c > 0 and l0 > 0 (the term (c/l) û (P ḋ)ᵀ is nonsymmetric) or when an
 *     end is an offset point of a dynamic rigid body: the (θ, θ) block carries
 *     σ [f]×[r]× = σ (r fᵀ − (f·r) I), symmetric only when f ∥ r (e.g. at equilibrium
 *     f = 0). It is the asymmetric part of a potential's second derivative taken in
 *     world-frame rotation vectors, which are not coordinates away from δθ = 0.
 * potentialEnergy: ½ k (l − l0)² (J); the dissipative force −c l̇ û (−c ḋ with l0 = 0),
 * power c l̇² (W).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { norm3 } from "../math/vec3";
import type { BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { AXIAL_LENGTH, AXIAL_RATE, AXIAL_TENSION, axialDampingForce, axialSpring } from "./axial";
import type { ForceEffector } from "./effector";
import { TwoPointCoupling } from "./two-point";

export interface SpringOptions {
  id: string;
  /** Body index of end a (−1 for ground) and the point in its frame (m). */
  bodyA: number;
  pointA?: ArrayLike<number>;
  bodyB: number;
  pointB?: ArrayLike<number>;
  /** k (N/m), ≥ 0. */
  stiffness: number;
  /** c (N·s/m), ≥ 0. */
  damping?: number;
  /** l0 (m), ≥ 0; default: the distance between the points in the current configuration. */
  restLength?: number;
}

export class SpringEffector implements ForceEffector {
  readonly id: string;
  readonly stiffness: number;
  readonly damping: number;
  readonly restLength: number;
  /** The dashpot's force −c l̇ û is linear in the velocities at a given pose (axial.ts). */
  readonly affineInVelocity = true;
  /** The two ends and their current geometry. */
  readonly ends: TwoPointCoupling;
  /** f_b of the last evaluation (N). */
  readonly f = new Float64Array(3);
  /** Current length l (m) and rate l̇ (m/s) of the last evaluation. */
  length = 0;
  lengthRate = 0;

  private readonly zeroLength: boolean;
  /** A = ∂f_b/∂d and B = ∂f_b/∂ḋ of the last evaluation, views of one 18-entry array. */
  private readonly jac = new Float64Array(18);
  private readonly A = this.jac.subarray(0, 9);
  private readonly B = this.jac.subarray(9, 18);
  private readonly scalars = new Float64Array(3);
  /** û of the last addExplicitRows. */
  private readonly axis = new Float64Array(3);
  /** The dashpot's force of applyDissipativeForces (N, on b). */
  private readonly damped = new Float64Array(3);

  constructor(sys: BodySystem, o: SpringOptions) {
    this.id = o.id;
    this.stiffness = o.stiffness;
    this.damping = o.damping ?? 0;
    if (!(this.stiffness >= 0) || !(this.damping >= 0))
      throw new Error(`spring "${o.id}": stiffness and damping must be ≥ 0`);
    this.ends = new TwoPointCoupling(
      sys,
      o.bodyA,
      o.pointA ?? [0, 0, 0],
      o.bodyB,
      o.pointB ?? [0, 0, 0],
    );
    const d = this.ends.d;
    this.restLength = o.restLength ?? norm3(d);
    if (!(this.restLength >= 0)) throw new Error(`spring "${o.id}": restLength must be ≥ 0`);
    this.zeroLength = this.restLength === 0;
  }

  get jacobianType(): MatrixTypeFlags {
    if (this.ends.hasMomentArm) return MatrixType.GENERAL;
    if (this.zeroLength) return MatrixType.SPD;
    if (this.damping > 0) return MatrixType.GENERAL;
    const d = this.currentSeparation();
    return norm3(d) >= this.restLength ? MatrixType.SPD : MatrixType.SYMMETRIC;
  }

  applyForces(_t: number): void {
    this.evaluate();
    this.ends.applyForce(this.f);
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    this.ends.reserve(m);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.evaluate();
    this.ends.addPosJacobian(m, s, this.A, this.B, this.f);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    if (this.damping === 0) return;
    this.evaluate();
    this.ends.addVelJacobian(m, s, this.B);
  }

  /**
   * Symplectic Euler's stability bound by rows (ForceEffector.addExplicitRows; two-point.ts
   * addExplicitRows): −A = k ûûᵀ + (s/l) P + (c/l) û wᵀ (w = P ḋ, ‖(s/l) P + (c/l) û wᵀ‖ ≤
   * (|s| + c |w|)/l) and −B = c ûûᵀ; a zero-length spring's −A = k I, −B = c I; none
   * where the direction is undefined (force and Jacobians 0).
   */
  addExplicitRows(stiff: Float64Array, damp: Float64Array): void {
    this.evaluate();
    const { ends, axis, f } = this;
    const k = this.stiffness;
    const c = this.damping;
    if (this.zeroLength) {
      ends.addExplicitRows(stiff, damp, null, 0, k, 0, c, f);
      return;
    }
    const l = this.length;
    if (!(l > 1e-12 * this.restLength)) return;
    const d = ends.d;
    const dd = ends.dd;
    for (let j = 0; j < 3; j++) axis[j] = d[j] / l;
    const rate = this.lengthRate;
    const w = Math.sqrt(Math.max(dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2] - rate * rate, 0));
    const tension = this.scalars[AXIAL_TENSION];
    ends.addExplicitRows(stiff, damp, axis, k, (Math.abs(tension) + c * w) / l, c, 0, f);
  }

  potentialEnergy(): number {
    const d = this.currentSeparation();
    const e = norm3(d) - this.restLength;
    return 0.5 * this.stiffness * e * e;
  }

  /** The dashpot's force at the attachment points (axial.ts axialDampingForce; power c l̇²). */
  applyDissipativeForces(_t: number): void {
    if (this.damping === 0) return;
    this.ends.update();
    axialDampingForce(this.ends.d, this.ends.dd, this.damping, this.restLength, this.damped);
    this.ends.applyForce(this.damped);
  }

  private currentSeparation(): Float64Array {
    this.ends.update();
    return this.ends.d;
  }

  /** Geometry, length, rate and f_b (and A, B) for the current state (axial.ts). */
  private evaluate(): void {
    const { ends, f, scalars } = this;
    ends.update();
    axialSpring(
      ends.d,
      ends.dd,
      this.stiffness,
      this.damping,
      this.restLength,
      f,
      scalars,
      this.jac,
    );
    this.length = scalars[AXIAL_LENGTH];
    this.lengthRate = scalars[AXIAL_RATE];
  }
}
