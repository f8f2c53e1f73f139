/**
 * The chain rule shared by every force that acts between two body points: a force f on
 * point B (of body b) and −f on point A (of body a), where f depends on the separation
 * d = x_B − x_A and its rate ḋ = v_B − v_A (axial springs, the translational part of
 * frame springs).
 *
 * Given A = ∂f/∂d and B = ∂f/∂ḋ (3×3 each, evaluated by the caller at the current state),
 * with σ_a = −1, σ_b = +1 and, per attachment j, S_j = [r_j]× and W_j = [ω_j]×[r_j]×
 * (see attachment.ts for δx_p and δv_p):
 *   ∂f/∂q_j   = σ_j [A,  −A S_j − B W_j]        (position dofs [δx_j, δθ_j])
 *   ∂f/∂u_j   = σ_j [B,  −B S_j]                (velocity dofs [δv_j, δω_j])
 * The generalized force on body i is F_i = σ_i [f; r_i × f] (rigid) or σ_i f (particle),
 * so, with the product rule on r_i × f (δ(r_i × f) = δr_i × f = [f]×[r_i]× δθ_i):
 *   ∂F_i/∂q_j = σ_i [I; S_i] ∂f/∂q_j  +  δ_ij σ_i [[0, 0], [0, [f]×[r_i]×]]
 *   ∂F_i/∂u_j = σ_i [I; S_i] ∂f/∂u_j
 * (δ_ij: the same attachment, not merely the same body: when a and b are one body the four
 * (i, j) terms all land in its diagonal block, which is the chain rule's sum.) Only the
 * first 3 rows/columns exist for particles. The last term is why any force applied at an
 * offset point of a rigid body has a nonsymmetric stiffness away from equilibrium:
 * [f]×[r]× = r fᵀ − (f·r) I is symmetric only when f ∥ r.
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { mat3Mul, mat3MulVec, mat3Skew } from "../math/mat3";
import { type BodySystem, inverseInertiaBound } from "../model/body-system";
import { PointAttachment } from "./attachment";
import { addScaledBlock, skewSkew } from "./jacobian-util";

export class TwoPointCoupling {
  readonly a: PointAttachment;
  readonly b: PointAttachment;
  /** d = x_B − x_A (m), refreshed by update(). */
  readonly d = new Float64Array(3);
  /** ḋ = v_B − v_A (m/s), refreshed by update(). */
  readonly dd = new Float64Array(3);

  private readonly ends: readonly PointAttachment[];
  private readonly g = new Float64Array(18); // ∂f/∂q_j, 3×6 stride 6
  private readonly blk = new Float64Array(36);
  private readonly sk = new Float64Array(9);
  private readonly ww = new Float64Array(9);
  private readonly t1 = new Float64Array(9);
  private readonly t2 = new Float64Array(9);
  /** Per end a, b and row t, θ (addExplicitRows): α, ν; per end, the turning term. */
  private readonly along = new Float64Array(4);
  private readonly across = new Float64Array(4);
  private readonly turning = new Float64Array(2);
  private readonly lever = new Float64Array(3);

  constructor(
    private readonly sys: BodySystem,
    bodyA: number,
    pointA: ArrayLike<number>,
    bodyB: number,
    pointB: ArrayLike<number>,
  ) {
    this.a = new PointAttachment(sys, bodyA, pointA);
    this.b = new PointAttachment(sys, bodyB, pointB);
    this.ends = [this.a, this.b];
    this.update();
  }

  /** True when either end has rotational dofs with a non-zero moment arm. */
  get hasMomentArm(): boolean {
    return this.a.hasMomentArm || this.b.hasMomentArm;
  }

  update(): void {
    const { a, b, d, dd } = this;
    a.update();
    b.update();
    for (let k = 0; k < 3; k++) {
      d[k] = b.x[k] - a.x[k];
      dd[k] = b.v[k] - a.v[k];
    }
  }

  /** Adds f (world, N) on B and −f on A, with their moments. */
  applyForce(f: Float64Array): void {
    this.b.addForce(f, 0, 1);
    this.a.addForce(f, 0, -1);
  }

  /** Reserves every block (i, j) between the dynamic ends. */
  reserve(m: SparseBlockMatrix): void {
    for (const pi of this.ends)
      for (const pj of this.ends)
        if (pi.block >= 0 && pj.block >= 0) m.addBlock(pi.block, pj.block);
  }

  /** Adds s·∂F/∂q. A, B: 3×3 row-major ∂f/∂d, ∂f/∂ḋ; f: the force on B (current state). */
  addPosJacobian(
    m: SparseBlockMatrix,
    s: number,
    A: Float64Array,
    B: Float64Array,
    f: Float64Array,
  ): void {
    const { g, sk, ww, t1, t2, ends } = this;
    for (let jj = 0; jj < 2; jj++) {
      const pj = ends[jj];
      if (pj.block < 0) continue;
      const sj = jj === 0 ? -1 : 1;
      for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) g[6 * r + c] = sj * A[3 * r + c];
      if (pj.rotational) {
        mat3Skew(sk, 0, pj.r, 0); // S_j
        mat3Mul(t1, 0, A, 0, sk, 0); // A S_j
        skewSkew(ww, 0, pj.omega, 0, pj.r, 0); // W_j = [ω_j]×[r_j]×
        mat3Mul(t2, 0, B, 0, ww, 0); // B W_j
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++) g[6 * r + 3 + c] = -sj * (t1[3 * r + c] + t2[3 * r + c]);
      }
      for (let ii = 0; ii < 2; ii++) {
        const pi = ends[ii];
        if (pi.block < 0) continue;
        const si = ii === 0 ? -1 : 1;
        this.rowsFromG(pi, si, pj.rotational ? 6 : 3);
        if (ii === jj && pi.rotational) {
          // σ_i [f]×[r_i]× = σ_i (r_i fᵀ − (f·r_i) I) in the (θ, θ) sub-block
          const r = pi.r;
          const fr = f[0] * r[0] + f[1] * r[1] + f[2] * r[2];
          const blk = this.blk;
          for (let rr = 0; rr < 3; rr++)
            for (let c = 0; c < 3; c++)
              blk[6 * (3 + rr) + 3 + c] += si * (r[rr] * f[c] - (rr === c ? fr : 0));
        }
        addScaledBlock(
          m,
          pi.block,
          pj.block,
          pi.rotational ? 6 : 3,
          pj.rotational ? 6 : 3,
          this.blk,
          s,
        );
      }
    }
  }

  /** Adds s·∂F/∂u. B: 3×3 row-major ∂f/∂ḋ. */
  addVelJacobian(m: SparseBlockMatrix, s: number, B: Float64Array): void {
    const { g, sk, t1, ends } = this;
    for (let jj = 0; jj < 2; jj++) {
      const pj = ends[jj];
      if (pj.block < 0) continue;
      const sj = jj === 0 ? -1 : 1;
      for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) g[6 * r + c] = sj * B[3 * r + c];
      if (pj.rotational) {
        mat3Skew(sk, 0, pj.r, 0);
        mat3Mul(t1, 0, B, 0, sk, 0); // B S_j
        for (let r = 0; r < 3; r++)
          for (let c = 0; c < 3; c++) g[6 * r + 3 + c] = -sj * t1[3 * r + c];
      }
      for (let ii = 0; ii < 2; ii++) {
        const pi = ends[ii];
        if (pi.block < 0) continue;
        this.rowsFromG(pi, ii === 0 ? -1 : 1, pj.rotational ? 6 : 3);
        addScaledBlock(
          m,
          pi.block,
          pj.block,
          pi.rotational ? 6 : 3,
          pj.rotational ? 6 : 3,
          this.blk,
          s,
        );
      }
    }
  }

  /**
   * Adds to stiff[r] and damp[r] (1/s², 1/s; r = 2b a body's translation, 2b + 1 a rigid
   * body's rotation: ForceEffector.addExplicitRows) the Gershgorin row sums, over 3 × 3
   * blocks, of the symmetric parts of M^{-1/2} K M^{-1/2} and M^{-1/2} D M^{-1/2} of a
   * force f on B (−f on A; the caller's, at the state of the last update) whose Jacobians
   * are
   *   −A = −∂f/∂d = kAxis ûûᵀ + R, ‖R‖ ≤ kAny,     −B = −∂f/∂ḋ = cAxis ûûᵀ + Q, ‖Q‖ ≤ cAny
   * (û = `axis`, a unit vector; null with kAxis = cAxis = 0). By the chain rule (file
   * comment), with J_X = [I, −[r_X]×] the point's velocity map and σ_X = ∓1, K's blocks
   * (X, Y) are σ_X σ_Y J_Xᵀ (−A) J_Y, plus σ_X σ_Y J_Xᵀ (−B) W_Y in Y's rotation columns
   * and, in X's (θ, θ) block, −[F_X]×[r_X]× = (F_X·r_X) I − r_X F_Xᵀ (F_X = σ_X f, the
   * force on X), whose symmetric part has λ_max ½ (F_X·r_X + |F_X| |r_X|); D's are σ_X σ_Y
   * J_Xᵀ (−B) J_Y. Scaled by M_X^{-1/2}, X's translation and rotation rows of J_Xᵀ û have
   * norms a_X = 1/√m_X and β_X = |I_X^{-1/2} (r_X × û)| (a_X² + β_X² = 1/m_eff, the
   * point's inverse effective mass along û), those of J_Xᵀ at most a_X and b_X = √ι_X |r_X|
   * (ι_X ≥ λ_max(I_X⁻¹), inverseInertiaBound; a particle has the translation row alone),
   * and ‖W_Y I_Y^{-1/2}‖ ≤ |ω_Y| b_Y. So row p ∈ {t, θ} of end X sums
   *   K: kAxis α_Xp Σ_Y (a_Y + β_Y) + (kAny + (cAxis + cAny) max_Y |ω_Y|) ν_Xp Σ_Y (a_Y + b_Y)
   *      (+ ι_X ½ (F_X·r_X + |F_X| |r_X|) on θ)
   *   D: cAxis α_Xp Σ_Y (a_Y + β_Y) + cAny ν_Xp Σ_Y (a_Y + b_Y)
   * over the moving ends Y (α = a, β and ν = a, b on rows t, θ). One end of a spring to the
   * ground on a body at rest: max(a, β) (a + β) k against the exact k (a² + β²) = k/m_eff,
   * at most 1.21 times it, exact on a particle or with the spring through the centre of
   * mass.
   */
  addExplicitRows(
    stiff: Float64Array,
    damp: Float64Array,
    axis: Float64Array | null,
    kAxis: number,
    kAny: number,
    cAxis: number,
    cAny: number,
    f: Float64Array,
  ): void {
    const { sys, ends, along, across, turning, lever, sk: c } = this;
    let spin = 0;
    let alongSum = 0;
    let acrossSum = 0;
    for (let x = 0; x < 2; x++) {
      const p = ends[x];
      // along[2x + p], across[2x + p]: α and ν on X's rows p = 0 (t), 1 (θ)
      along.fill(0, 2 * x, 2 * x + 2);
      across.fill(0, 2 * x, 2 * x + 2);
      turning[x] = 0;
      if (p.block < 0) continue;
      const a = 1 / Math.sqrt(sys.mass[p.body]);
      along[2 * x] = axis !== null ? a : 0;
      across[2 * x] = a;
      if (p.rotational) {
        const { r, omega } = p;
        const iota = inverseInertiaBound(sys, p.body);
        const arm = Math.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        across[2 * x + 1] = Math.sqrt(iota) * arm;
        // F_X = σ_X f: ι ½ (F·r + |F| |r|)
        const sign = x === 0 ? -1 : 1;
        const fr = sign * (f[0] * r[0] + f[1] * r[1] + f[2] * r[2]);
        const fn = Math.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        turning[x] = 0.5 * iota * Math.max(fr + fn * arm, 0);
        spin = Math.max(spin, Math.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2));
        if (axis !== null) {
          // β² = (r × û)ᵀ I⁻¹ (r × û)
          c[0] = r[1] * axis[2] - r[2] * axis[1];
          c[1] = r[2] * axis[0] - r[0] * axis[2];
          c[2] = r[0] * axis[1] - r[1] * axis[0];
          mat3MulVec(lever, 0, sys.inertiaWorldInv, 9 * p.body, c, 0);
          along[2 * x + 1] = Math.sqrt(
            Math.max(c[0] * lever[0] + c[1] * lever[1] + c[2] * lever[2], 0),
          );
        }
      }
      alongSum += along[2 * x] + along[2 * x + 1];
      acrossSum += across[2 * x] + across[2 * x + 1];
    }
    const kIso = kAny + (cAxis + cAny) * spin;
    for (let x = 0; x < 2; x++) {
      const p = ends[x];
      if (p.block < 0) continue;
      for (let q = 0; q < (p.rotational ? 2 : 1); q++) {
        const row = 2 * p.body + q;
        const i = 2 * x + q;
        stiff[row] += kAxis * along[i] * alongSum + kIso * across[i] * acrossSum;
        damp[row] += cAxis * along[i] * alongSum + cAny * across[i] * acrossSum;
      }
      if (p.rotational) stiff[2 * p.body + 1] += turning[x];
    }
  }

  /** blk = σ_i [I; S_i] g  (top 3 rows, plus r_i × column for rotational i). */
  private rowsFromG(pi: PointAttachment, si: number, cols: number): void {
    const { g, blk } = this;
    for (let r = 0; r < 3; r++) for (let c = 0; c < cols; c++) blk[6 * r + c] = si * g[6 * r + c];
    if (!pi.rotational) return;
    const rx = pi.r[0];
    const ry = pi.r[1];
    const rz = pi.r[2];
    for (let c = 0; c < cols; c++) {
      const gx = g[c];
      const gy = g[6 + c];
      const gz = g[12 + c];
      blk[18 + c] = si * (ry * gz - rz * gy);
      blk[24 + c] = si * (rz * gx - rx * gz);
      blk[30 + c] = si * (rx * gy - ry * gx);
    }
  }
}
