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
import { mat3Mul, mat3Skew } from "../math/mat3";
import type { BodySystem } from "../model/body-system";
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

  constructor(
    sys: BodySystem,
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
