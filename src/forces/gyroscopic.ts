/**
 * The gyroscopic (inertial) torque of rigid bodies in world-frame Euler equations:
 *   I_w ω̇ = τ − ω × (I_w ω),   I_w = R I_body Rᵀ
 * so the term is applied as a torque τ_g = −ω × (I_w ω) on every dynamic rigid body (the
 * integrators then solve M u̇ = f with a constant-in-step mass matrix).
 *
 * Velocity Jacobian (h = I_w ω; δτ = −δω × h − ω × I_w δω):
 *   ∂τ_g/∂ω = [h]× − [ω]× I_w
 * Position Jacobian (q ← exp(δθ) ⊗ q gives δI_w = [δθ]× I_w − I_w [δθ]×, ω held fixed):
 *   δ(I_w ω) = δθ × h − I_w (δθ × ω) = (−[h]× + I_w [ω]×) δθ
 *   ∂τ_g/∂θ = −[ω]× (−[h]× + I_w [ω]×) = [ω]×[h]× − [ω]× I_w [ω]×
 * Neither is symmetric in general: jacobianType GENERAL. No potential energy (it does no
 * work: ω·(ω × h) = 0).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { mat3Mul, mat3Skew } from "../math/mat3";
import { BodyKind, type BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import type { ForceEffector } from "./effector";
import { skewSkew } from "./jacobian-util";

export class GyroscopicEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags = MatrixType.GENERAL;
  /** The dynamic rigid bodies it acts on. */
  readonly bodies: Int32Array;

  private readonly h = new Float64Array(3);
  private readonly w = new Float64Array(9);
  private readonly t1 = new Float64Array(9);
  private readonly t2 = new Float64Array(9);

  constructor(
    private readonly sys: BodySystem,
    id = "gyroscopic",
  ) {
    this.id = id;
    // Bodies with an isotropic inertia c·I have ω × (c ω) = 0 and zero Jacobians at every
    // state: leaving them out keeps a sphere's iteration matrix the plain mass matrix.
    const list: number[] = [];
    for (let b = 0; b < sys.numBodies; b++)
      if (sys.kind[b] === BodyKind.RIGID && sys.isotropic[b] === 0) list.push(b);
    this.bodies = Int32Array.from(list);
  }

  /** h = I_w ω of body b into this.h. */
  private momentum(b: number): void {
    const I = this.sys.inertiaWorld;
    const w = this.sys.omega;
    const o = 9 * b;
    const x = w[3 * b];
    const y = w[3 * b + 1];
    const z = w[3 * b + 2];
    this.h[0] = I[o] * x + I[o + 1] * y + I[o + 2] * z;
    this.h[1] = I[o + 3] * x + I[o + 4] * y + I[o + 5] * z;
    this.h[2] = I[o + 6] * x + I[o + 7] * y + I[o + 8] * z;
  }

  applyForces(_t: number): void {
    const { sys, h } = this;
    const w = sys.omega;
    const tq = sys.torque;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      this.momentum(b);
      const i = 3 * b;
      tq[i] -= w[i + 1] * h[2] - w[i + 2] * h[1];
      tq[i + 1] -= w[i + 2] * h[0] - w[i] * h[2];
      tq[i + 2] -= w[i] * h[1] - w[i + 1] * h[0];
    }
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    for (const b of this.bodies) m.addBlock(this.sys.block[b], this.sys.block[b]);
  }

  /** s ([ω]×[h]× − [ω]× I_w [ω]×) into each body's (θ, θ) sub-block. */
  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    const { sys, h, w, t1, t2 } = this;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      this.momentum(b);
      mat3Skew(w, 0, sys.omega, 3 * b);
      mat3Mul(t1, 0, w, 0, sys.inertiaWorld, 9 * b); // [ω]× I_w
      mat3Mul(t2, 0, t1, 0, w, 0); // [ω]× I_w [ω]×
      skewSkew(t1, 0, sys.omega, 3 * b, h, 0); // [ω]×[h]×
      for (let k = 0; k < 9; k++) t1[k] -= t2[k];
      m.add3x3(sys.block[b], sys.block[b], 3, 3, t1, 0, s);
    }
  }

  /** s ([h]× − [ω]× I_w) into each body's (ω, ω) sub-block. */
  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    const { sys, h, w, t1, t2 } = this;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      this.momentum(b);
      mat3Skew(w, 0, sys.omega, 3 * b);
      mat3Mul(t1, 0, w, 0, sys.inertiaWorld, 9 * b); // [ω]× I_w
      mat3Skew(t2, 0, h, 0); // [h]×
      for (let k = 0; k < 9; k++) t2[k] -= t1[k];
      m.add3x3(sys.block[b], sys.block[b], 3, 3, t2, 0, s);
    }
  }

  potentialEnergy(): number {
    return 0;
  }
}
