/**
 * A 6-dof linear spring-damper between frame A (origin at point p_a of body a, axes of
 * body a) and frame B (origin at p_b of body b, axes of body b), after ArtiSynth's
 * FrameSpring with a linear material. Either body may be ground (−1); a particle end has
 * fixed world-aligned axes (it has no orientation dofs), like ground.
 *
 * Translation (world frame), at the two frame origins, equal and opposite:
 *   f_b = −k (x_B − x_A) − c (ẋ_B − ẋ_A),   f_a = −f_b
 * (the origins should coincide in the model configuration for the spring to be relaxed
 * there; the damping part, like any isotropic damper between distinct points, is not
 * along x_B − x_A and exerts the net moment (x_B − x_A) × f_b on the pair).
 *
 * Rotation: the model's configuration is the rotational rest state. With q_a0, q_b0 the
 * orientations at construction, C = q_b0⁻¹ q_a0, the world-frame relative rotation is
 *   Δ = (q_b q_b0⁻¹)(q_a q_a0⁻¹)⁻¹ = q_b C q_a⁻¹,   θ = log(Δ) ∈ R³, |θ| ≤ π (short way)
 * (Δ is invariant under a common motion of both bodies, Q q_a, Q q_b). Torques:
 *   τ_b = −k_r θ − c_r (ω_b − ω_a),   τ_a = −τ_b.
 * Perturbing q_b ← exp(δθ_b) q_b gives Δ ← exp(δθ_b) Δ, and q_a ← exp(δθ_a) q_a gives
 * Δ ← Δ exp(−δθ_a). With the left and right Jacobians of SO(3),
 * exp(θ + δ) = exp(J_l(θ) δ) exp(θ) = exp(θ) exp(J_r(θ) δ), so
 *   ∂θ/∂θ_b = J_l⁻¹(θ),   ∂θ/∂θ_a = −J_r⁻¹(θ)
 *   J_l⁻¹(θ) = I − ½[θ]× + β [θ]×²,   J_r⁻¹(θ) = I + ½[θ]× + β [θ]×²,
 *   β(φ) = 1/φ² − cot(φ/2)/(2φ) = 1/12 + φ²/720 + φ⁴/30240 + …,   φ = |θ|
 * (β is finite up to φ = π: β(π) = 1/π²). Because J_l⁻ᵀθ = J_r⁻¹θ = θ, the torques −k_r θ
 * on b and +k_r θ on a are exactly −∂V/∂θ_b and −∂V/∂θ_a of V = ½ k_r |θ|²: the rotary
 * spring is conservative. Rotational position blocks (torque rows, δθ columns):
 *   (b,b) −k_r J_l⁻¹   (b,a) +k_r J_r⁻¹   (a,b) +k_r J_l⁻¹   (a,a) −k_r J_r⁻¹
 * velocity blocks ∓c_r I, and the translational part's chain rule through the rotating
 * offsets is TwoPointCoupling's with A = −k I, B = −c I (two-point.ts). At φ = π the
 * log map jumps (θ → −θ): the potential has a ridge there and the torque is discontinuous.
 *
 * jacobianType GENERAL when an end is a dynamic rigid body (J_l⁻¹ and [f]×[r]× are
 * nonsymmetric), SPD otherwise (−kI, −cI only).
 * potentialEnergy ½ k |x_B − x_A|² + ½ k_r |θ|² (J); the dampers dissipate c |ẋ_B − ẋ_A|² +
 * c_r |ω_b − ω_a|² (W).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { quatDifference, quatMul } from "../math/quat";
import { expInverseBeta } from "../math/so3";
import { type BodySystem, inverseInertiaBound } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import type { ForceEffector } from "./effector";
import { setScaledIdentity } from "./jacobian-util";
import { TwoPointCoupling } from "./two-point";

export interface FrameSpringOptions {
  id: string;
  bodyA: number;
  pointA?: ArrayLike<number>;
  bodyB: number;
  pointB?: ArrayLike<number>;
  /** k (N/m) */
  stiffness: number;
  /** k_r (N·m/rad) */
  rotaryStiffness: number;
  /** c (N·s/m) */
  damping?: number;
  /** c_r (N·m·s/rad) */
  rotaryDamping?: number;
}

const IDENTITY_QUAT = new Float64Array([1, 0, 0, 0]);

export class FrameSpringEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags;
  readonly stiffness: number;
  readonly rotaryStiffness: number;
  readonly damping: number;
  readonly rotaryDamping: number;
  readonly ends: TwoPointCoupling;
  /** Translational force f_b and rotation vector θ of the last evaluation. */
  readonly f = new Float64Array(3);
  readonly theta = new Float64Array(3);
  /** Torque τ_b of the last evaluation (N·m). */
  readonly tau = new Float64Array(3);
  /** The dampers' force and torque of applyDissipativeForces (N, N·m on b). */
  private readonly dampedForce = new Float64Array(3);
  private readonly dampedTorque = new Float64Array(3);

  /** C = q_b0⁻¹ q_a0. */
  private readonly rest = new Float64Array(4);
  private readonly qtmp = new Float64Array(4);
  private readonly A = new Float64Array(9);
  private readonly B = new Float64Array(9);
  private readonly jl = new Float64Array(9);
  private readonly jr = new Float64Array(9);
  private readonly eye = new Float64Array(9);

  constructor(
    private readonly sys: BodySystem,
    o: FrameSpringOptions,
  ) {
    this.id = o.id;
    this.stiffness = o.stiffness;
    this.rotaryStiffness = o.rotaryStiffness;
    this.damping = o.damping ?? 0;
    this.rotaryDamping = o.rotaryDamping ?? 0;
    for (const v of [this.stiffness, this.rotaryStiffness, this.damping, this.rotaryDamping])
      if (!(v >= 0)) throw new Error(`frame spring "${o.id}": coefficients must be ≥ 0`);
    this.ends = new TwoPointCoupling(
      sys,
      o.bodyA,
      o.pointA ?? [0, 0, 0],
      o.bodyB,
      o.pointB ?? [0, 0, 0],
    );
    setScaledIdentity(this.A, -this.stiffness);
    setScaledIdentity(this.B, -this.damping);
    setScaledIdentity(this.eye, 1);
    // C = conj(q_b0) ⊗ q_a0
    const [qa, ia] = this.orientation(o.bodyA);
    const [qb, ib] = this.orientation(o.bodyB);
    const cb = this.qtmp;
    cb[0] = qb[ib];
    cb[1] = -qb[ib + 1];
    cb[2] = -qb[ib + 2];
    cb[3] = -qb[ib + 3];
    quatMul(this.rest, 0, cb, 0, qa, ia);
    const rotA = this.ends.a.rotational;
    const rotB = this.ends.b.rotational;
    this.jacobianType = rotA || rotB ? MatrixType.GENERAL : MatrixType.SPD;
  }

  applyForces(_t: number): void {
    this.evaluate();
    this.apply(this.f, this.tau);
  }

  /** f at the frame origins (on b, −f on a) and τ on b (−τ on a). */
  private apply(f: Float64Array, tau: Float64Array): void {
    const ends = this.ends;
    ends.applyForce(f);
    const t = this.sys.torque;
    if (ends.b.rotational) {
      const i = 3 * ends.b.body;
      t[i] += tau[0];
      t[i + 1] += tau[1];
      t[i + 2] += tau[2];
    }
    if (ends.a.rotational) {
      const i = 3 * ends.a.body;
      t[i] -= tau[0];
      t[i + 1] -= tau[1];
      t[i + 2] -= tau[2];
    }
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    this.ends.reserve(m);
  }

  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.evaluate();
    const { ends, jl, jr } = this;
    ends.addPosJacobian(m, s, this.A, this.B, this.f);
    const kr = this.rotaryStiffness;
    if (kr === 0) return;
    this.inverseJacobians();
    const a = ends.a;
    const b = ends.b;
    // block (i, j) = −σ_i k_r ∂θ/∂θ_j with ∂θ/∂θ_b = J_l⁻¹, ∂θ/∂θ_a = −J_r⁻¹
    if (b.rotational) m.add3x3(b.block, b.block, 3, 3, jl, 0, -s * kr);
    if (b.rotational && a.rotational) {
      m.add3x3(b.block, a.block, 3, 3, jr, 0, s * kr);
      m.add3x3(a.block, b.block, 3, 3, jl, 0, s * kr);
    }
    if (a.rotational) m.add3x3(a.block, a.block, 3, 3, jr, 0, -s * kr);
  }

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    const { ends, eye } = this;
    if (this.damping > 0) {
      ends.update();
      ends.addVelJacobian(m, s, this.B);
    }
    const cr = this.rotaryDamping;
    if (cr === 0) return;
    // block (i, j) = −σ_i σ_j c_r I
    const a = ends.a;
    const b = ends.b;
    if (b.rotational) m.add3x3(b.block, b.block, 3, 3, eye, 0, -s * cr);
    if (b.rotational && a.rotational) {
      m.add3x3(b.block, a.block, 3, 3, eye, 0, s * cr);
      m.add3x3(a.block, b.block, 3, 3, eye, 0, s * cr);
    }
    if (a.rotational) m.add3x3(a.block, a.block, 3, 3, eye, 0, -s * cr);
  }

  /**
   * Symplectic Euler's stability bound by rows (ForceEffector.addExplicitRows): the
   * translational part's, −A = k I and −B = c I at the frame origins (two-point.ts
   * addExplicitRows), and the rotational part's on the rigid ends' rotation rows, whose
   * blocks (X, Y) are k_r J⁻¹ and c_r I (J_l⁻¹ or J_r⁻¹, of norm (φ/2)/sin(φ/2): 1 along θ,
   * the magnitude of (φ/2) cot(φ/2) ± i φ/2 across it), scaled by I_X^{-1/2} and
   * I_Y^{-1/2}: row X adds k_r (φ/2)/sin(φ/2) √ι_X Σ_Y √ι_Y and c_r √ι_X Σ_Y √ι_Y over
   * the rigid ends Y (ι ≥ λ_max(I⁻¹), inverseInertiaBound). A body at its centre of mass
   * on one to the ground, at rest: max(k/m, k_r ι), exact.
   */
  addExplicitRows(stiff: Float64Array, damp: Float64Array): void {
    this.evaluate();
    const { ends, sys, theta: th } = this;
    ends.addExplicitRows(stiff, damp, null, 0, this.stiffness, 0, this.damping, this.f);
    const kr = this.rotaryStiffness;
    const cr = this.rotaryDamping;
    if (kr === 0 && cr === 0) return;
    const rootA = ends.a.rotational ? Math.sqrt(inverseInertiaBound(sys, ends.a.body)) : 0;
    const rootB = ends.b.rotational ? Math.sqrt(inverseInertiaBound(sys, ends.b.body)) : 0;
    const half = 0.5 * Math.sqrt(th[0] * th[0] + th[1] * th[1] + th[2] * th[2]);
    const norm = half < 1e-4 ? 1 + (half * half) / 6 : half / Math.sin(half);
    const sum = rootA + rootB;
    if (ends.a.rotational) {
      stiff[2 * ends.a.body + 1] += kr * norm * rootA * sum;
      damp[2 * ends.a.body + 1] += cr * rootA * sum;
    }
    if (ends.b.rotational) {
      stiff[2 * ends.b.body + 1] += kr * norm * rootB * sum;
      damp[2 * ends.b.body + 1] += cr * rootB * sum;
    }
  }

  potentialEnergy(): number {
    this.evaluate();
    const d = this.ends.d;
    const th = this.theta;
    return (
      0.5 * this.stiffness * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) +
      0.5 * this.rotaryStiffness * (th[0] * th[0] + th[1] * th[1] + th[2] * th[2])
    );
  }

  /**
   * The dampers: −c ḋ at the frame origins and τ_b = −c_r (ω_b − ω_a) on b (−τ_b on a);
   * power c |ḋ|² + c_r |ω_b − ω_a|² (W).
   */
  applyDissipativeForces(_t: number): void {
    const { ends, damping: c, rotaryDamping: cr, dampedForce: f, dampedTorque: tau } = this;
    if (c === 0 && cr === 0) return;
    ends.update();
    const dd = ends.dd;
    const wa = ends.a.omega;
    const wb = ends.b.omega;
    for (let i = 0; i < 3; i++) {
      f[i] = -c * dd[i];
      tau[i] = -cr * (wb[i] - wa[i]);
    }
    this.apply(f, tau);
  }

  /** The quaternion array and offset of a body (identity for ground). */
  private orientation(body: number): [Float64Array, number] {
    return body < 0 ? [IDENTITY_QUAT, 0] : [this.sys.quat, 4 * body];
  }

  /** d, ḋ, f_b, θ and τ_b for the current state. */
  private evaluate(): void {
    const { ends, f, theta, tau, qtmp, sys } = this;
    ends.update();
    const d = ends.d;
    const dd = ends.dd;
    const k = this.stiffness;
    const c = this.damping;
    for (let i = 0; i < 3; i++) f[i] = -k * d[i] - c * dd[i];
    // θ = log(q_b C q_a⁻¹); particles' quaternions stay the identity in the BodySystem.
    const bb = ends.b.body;
    const ba = ends.a.body;
    if (bb < 0) quatMul(qtmp, 0, IDENTITY_QUAT, 0, this.rest, 0);
    else quatMul(qtmp, 0, sys.quat, 4 * bb, this.rest, 0);
    if (ba < 0) quatDifference(theta, 0, qtmp, 0, IDENTITY_QUAT, 0);
    else quatDifference(theta, 0, qtmp, 0, sys.quat, 4 * ba);
    const kr = this.rotaryStiffness;
    const cr = this.rotaryDamping;
    const wa = ends.a.omega;
    const wb = ends.b.omega;
    for (let i = 0; i < 3; i++) tau[i] = -kr * theta[i] - cr * (wb[i] - wa[i]);
  }

  /** jl = J_l⁻¹(θ), jr = J_r⁻¹(θ) for the θ of the last evaluation. */
  private inverseJacobians(): void {
    const { jl, jr, theta: th } = this;
    const x = th[0];
    const y = th[1];
    const z = th[2];
    const p2 = x * x + y * y + z * z;
    // β = 1/φ² − cot(φ/2)/(2φ)
    const beta = expInverseBeta(p2);
    // I + β [θ]×² with [θ]×² = θθᵀ − φ² I, then ∓ ½ [θ]×
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        const v = (i === j ? 1 - beta * p2 : 0) + beta * th[i] * th[j];
        jl[3 * i + j] = v;
        jr[3 * i + j] = v;
      }
    // [θ]× = [[0, −z, y], [z, 0, −x], [−y, x, 0]]
    jl[1] += 0.5 * z;
    jl[2] -= 0.5 * y;
    jl[3] -= 0.5 * z;
    jl[5] += 0.5 * x;
    jl[6] += 0.5 * y;
    jl[7] -= 0.5 * x;
    jr[1] -= 0.5 * z;
    jr[2] += 0.5 * y;
    jr[3] += 0.5 * z;
    jr[5] -= 0.5 * x;
    jr[6] -= 0.5 * y;
    jr[7] += 0.5 * x;
  }
}
