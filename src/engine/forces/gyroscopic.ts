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
 *
 * `jacobians = false` (solver.gyroscopicJacobian) leaves both Jacobians out: the torque is
 * still applied, but a linearized step then takes it at the predicted state, and the
 * iteration matrix of a model whose other forces have no Jacobians is the mass matrix
 * alone (with joints, one symmetric G M⁻¹ Gᵀ to factor as L D Lᵀ instead of G W⁻¹ Gᵀ as
 * L D U with W's nonsymmetric blocks inverted: cheaper per step; bench/README.md,
 * "Gyroscopic Jacobian"). That is exact where the torque vanishes along the motion, e.g.
 * axisymmetric links whose joints sit on their axis (no torque about it, so no spin
 * about it), and
 * unstable for a fast-spinning asymmetric body: a free body with inertias 2, 3, 6 spun at
 * 7 rad/s near its middle axis diverges at h ω = 0.35 (Newmark, one iteration), where the
 * implicit torque keeps it bounded (test/engine/integrators/gyroscopic-jacobian.test.ts).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { mat3Invert, mat3MulVec, mat3Skew } from "../math/mat3";
import { cross3 } from "../math/vec3";
import { BodyKind, type BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import type { ForceEffector } from "./effector";
import { skewSkew } from "./jacobian-util";

export class GyroscopicEffector implements ForceEffector {
  readonly id: string;
  /** The dynamic rigid bodies it acts on. */
  readonly bodies: Int32Array;

  /** Each body's entry in `bodies`, or −1 (addBodyJacobians). */
  private readonly listIndex: Int32Array;

  private readonly h = new Float64Array(3);
  private readonly t1 = new Float64Array(9);
  /** h = I_w ω and C = [ω]× I_w per listed body, at stateVersion factorsVersion. */
  private readonly hs: Float64Array;
  private readonly cs: Float64Array;
  private factorsVersion = -1;

  constructor(
    private readonly sys: BodySystem,
    id = "gyroscopic",
    /** Whether the Jacobians enter the iteration matrix (see the header). */
    public jacobians = true,
  ) {
    this.id = id;
    // Bodies with an isotropic inertia c·I have ω × (c ω) = 0 and zero Jacobians at every
    // state: leaving them out keeps a sphere's iteration matrix the plain mass matrix.
    const list: number[] = [];
    for (let b = 0; b < sys.numBodies; b++)
      if (sys.kind[b] === BodyKind.RIGID && sys.isotropic[b] === 0) list.push(b);
    this.bodies = Int32Array.from(list);
    this.listIndex = new Int32Array(sys.numBodies).fill(-1);
    list.forEach((b, n) => {
      this.listIndex[b] = n;
    });
    this.hs = new Float64Array(3 * list.length);
    this.cs = new Float64Array(9 * list.length);
  }

  get hasJacobians(): boolean {
    return this.jacobians;
  }

  get jacobianType(): MatrixTypeFlags {
    return this.jacobians ? MatrixType.GENERAL : MatrixType.SPD;
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
    const sys = this.sys;
    const I = sys.inertiaWorld;
    const w = sys.omega;
    const tq = sys.torque;
    const bodies = this.bodies;
    for (let n = 0; n < bodies.length; n++) {
      const b = bodies[n];
      // h = I_w ω in locals (momentum's sums): stored into this.h and read back, the
      // 100-link chain's torques took 1.0 µs an evaluation instead of 0.6 (bench/README.md,
      // "Articulated (joint coordinates)")
      const o = 9 * b;
      const i = 3 * b;
      const x = w[i];
      const y = w[i + 1];
      const z = w[i + 2];
      const h0 = I[o] * x + I[o + 1] * y + I[o + 2] * z;
      const h1 = I[o + 3] * x + I[o + 4] * y + I[o + 5] * z;
      const h2 = I[o + 6] * x + I[o + 7] * y + I[o + 8] * z;
      tq[i] -= y * h2 - z * h1;
      tq[i + 1] -= z * h0 - x * h2;
      tq[i + 2] -= x * h1 - y * h0;
    }
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    for (const b of this.bodies) m.addBlock(this.sys.block[b], this.sys.block[b]);
  }

  /**
   * h = I_w ω and C = [ω]× I_w of every listed body at the current state (into hs, cs, 3
   * and 9 per list entry), shared by addPosJacobian and addVelJacobian, which assemble
   * at one state (cached under the system's stateVersion, as the springs' factors).
   * C's column j is ω × (I_w's column j).
   */
  private refreshJacobianFactors(): void {
    const sys = this.sys;
    if (this.factorsVersion === sys.stateVersion) return;
    this.factorsVersion = sys.stateVersion;
    const { h, hs, cs } = this;
    const I = sys.inertiaWorld;
    const om = sys.omega;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      this.momentum(b);
      hs[3 * n] = h[0];
      hs[3 * n + 1] = h[1];
      hs[3 * n + 2] = h[2];
      const o = 9 * b;
      const x = om[3 * b];
      const y = om[3 * b + 1];
      const z = om[3 * b + 2];
      const c = 9 * n;
      for (let j = 0; j < 3; j++) {
        const i0 = I[o + j];
        const i1 = I[o + 3 + j];
        const i2 = I[o + 6 + j];
        cs[c + j] = y * i2 - z * i1;
        cs[c + 3 + j] = z * i0 - x * i2;
        cs[c + 6 + j] = x * i1 - y * i0;
      }
    }
  }

  /** s ([ω]×[h]× − [ω]× I_w [ω]×) into each body's (θ, θ) sub-block. */
  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    if (!this.jacobians) return;
    this.refreshJacobianFactors();
    for (let n = 0; n < this.bodies.length; n++) {
      this.posBlock(n);
      m.add3x3(this.sys.block[this.bodies[n]], this.sys.block[this.bodies[n]], 3, 3, this.t1, 0, s);
    }
  }

  /** s ([h]× − [ω]× I_w) into each body's (ω, ω) sub-block. */
  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    if (!this.jacobians) return;
    this.refreshJacobianFactors();
    for (let n = 0; n < this.bodies.length; n++) {
      this.velBlock(n);
      m.add3x3(this.sys.block[this.bodies[n]], this.sys.block[this.bodies[n]], 3, 3, this.t1, 0, s);
    }
  }

  /**
   * Body b's share alone of addPosJacobian (weight sPos), addVelJacobian (sVel) and
   * addMomentumJacobian (sMomentum), nothing for a body it does not act on or without its
   * Jacobians: the stepper takes back what W's assembly put there for a body whose rows
   * are not the torque's (AccelerationStepper.meanRateJacobians).
   */
  addBodyJacobians(
    m: SparseBlockMatrix,
    b: number,
    sPos: number,
    sVel: number,
    sMomentum: number,
  ): void {
    const n = this.listIndex[b];
    if (!this.jacobians || n < 0) return;
    const block = this.sys.block[b];
    this.refreshJacobianFactors();
    if (sPos !== 0) {
      this.posBlock(n);
      m.add3x3(block, block, 3, 3, this.t1, 0, sPos);
    }
    if (sVel !== 0) {
      this.velBlock(n);
      m.add3x3(block, block, 3, 3, this.t1, 0, sVel);
    }
    if (sMomentum !== 0) {
      this.momentumBlock(b);
      m.add3x3(block, block, 3, 3, this.t1, 0, sMomentum);
    }
  }

  /** t1 ← [ω]×[h]× − [ω]× I_w [ω]× of list entry n (refreshJacobianFactors first). */
  private posBlock(n: number): void {
    const { sys, hs, cs, t1 } = this;
    const om = sys.omega;
    const b = this.bodies[n];
    const x = om[3 * b];
    const y = om[3 * b + 1];
    const z = om[3 * b + 2];
    skewSkew(t1, 0, om, 3 * b, hs, 3 * n); // [ω]×[h]×
    // − C [ω]×, row by row: (C [ω]×)_r = (C_r1 ω_z − C_r2 ω_y, C_r2 ω_x − C_r0 ω_z, C_r0 ω_y − C_r1 ω_x)
    for (let r = 0; r < 3; r++) {
      const c0 = cs[9 * n + 3 * r];
      const c1 = cs[9 * n + 3 * r + 1];
      const c2 = cs[9 * n + 3 * r + 2];
      t1[3 * r] -= c1 * z - c2 * y;
      t1[3 * r + 1] -= c2 * x - c0 * z;
      t1[3 * r + 2] -= c0 * y - c1 * x;
    }
  }

  /** t1 ← [h]× − [ω]× I_w of list entry n (refreshJacobianFactors first). */
  private velBlock(n: number): void {
    const { hs, cs, t1 } = this;
    mat3Skew(t1, 0, hs, 3 * n); // [h]×
    for (let k = 0; k < 9; k++) t1[k] -= cs[9 * n + k];
  }

  /**
   * s (I_w [ω]× − [h]×) into each body's (θ, θ) sub-block: ∂(I_w ω)/∂θ at ω held, the
   * Jacobian of the angular momentum rows (AccelerationStepper.momentumRows, with
   * s = c_x/c_v), which replaces the torque's two Jacobians there (that form has no
   * gyroscopic torque: it is dL/dt's).
   */
  addMomentumJacobian(m: SparseBlockMatrix, s: number): void {
    if (!this.jacobians) return;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      this.momentumBlock(b);
      m.add3x3(this.sys.block[b], this.sys.block[b], 3, 3, this.t1, 0, s);
    }
  }

  /** t1 ← I_w [ω]× − [h]× of body b (h = I_w ω). */
  private momentumBlock(b: number): void {
    const { sys, h, t1 } = this;
    const I = sys.inertiaWorld;
    const om = sys.omega;
    this.momentum(b);
    mat3Skew(t1, 0, h, 0);
    const x = om[3 * b];
    const y = om[3 * b + 1];
    const z = om[3 * b + 2];
    const o = 9 * b;
    for (let r = 0; r < 3; r++) {
      const i0 = I[o + 3 * r];
      const i1 = I[o + 3 * r + 1];
      const i2 = I[o + 3 * r + 2];
      t1[3 * r] = i1 * z - i2 * y - t1[3 * r];
      t1[3 * r + 1] = i2 * x - i0 * z - t1[3 * r + 1];
      t1[3 * r + 2] = i0 * y - i1 * x - t1[3 * r + 2];
    }
  }

  potentialEnergy(): number {
    return 0;
  }
}

/** Newton iterations of midpointRotation before it gives up. */
const MIDPOINT_ITERATIONS = 30;

/** Work arrays of midpointRotation (3-vectors and 3×3 matrices). */
const mid = {
  mean: new Float64Array(3),
  momentum: new Float64Array(3),
  residual: new Float64Array(3),
  step: new Float64Array(3),
  jacobian: new Float64Array(9),
  inverse: new Float64Array(9),
};

/**
 * A rigid body's rate after a step of h (s) under a torque τ (N·m) held over the step and
 * its gyroscopic torque taken at the mean rate with the start's world inertia I (kg·m²):
 *   I (ω₂ − ω₁) = h (τ − ω̄ × I ω̄),   ω̄ = ½ (ω₁ + ω₂)
 * (rad/s, world frame): the implicit midpoint rule on Euler's equations written in the
 * body frame of the step's start. Without τ, dotting with ω̄ and with I ω̄ gives
 * ω₂ᵀ I ω₂ = ω₁ᵀ I ω₁ and |I ω₂| = |I ω₁|; symplectic Euler turns a free body by Q =
 * cay(½ h ω̄) with its end rate Q ω₂ (acceleration-step.ts cayleyTurn), so the end state's
 * kinetic energy ½ ωᵀ I_w ω is exactly the start's and its angular momentum I_w ω = Q I ω₂
 * is the start's I ω₁ itself. Taken explicitly, at (ω₁, I),
 * the term gains energy at every step: a disc spun at 200 rad/s with a slight wobble blew
 * up within 0.26 s at h = 5 ms, a body tumbling about its middle axis within a minute.
 * Newton's method from the rate without the gyroscopic term, ω₁ + h I⁻¹ τ, with the
 * Jacobian I + ½ h ([ω̄]× I − [I ω̄]×): on random bodies of principal inertias up to
 * 1 : 10 it converges in a few iterations wherever h |ω| ≤ 1.25, and fails on about 1 %
 * of them at h |ω| = 2, 5 % at 3 (test/engine/forces/gyroscopic.test.ts; a backtracking
 * line search on the residual did no better), where the integrator halves the step.
 * Writes ω₂ to out[oo..oo+2]; false (out then the last iterate) when Newton did not reach
 * ‖Δω‖∞ ≤ 1e-12 ‖ω₂‖∞ (then, converging quadratically, ω₂ is exact to rounding) within
 * MIDPOINT_ITERATIONS.
 */
export function midpointRotation(
  out: Float64Array,
  oo: number,
  inertia: Float64Array,
  io: number,
  omega: Float64Array,
  wo: number,
  torque: Float64Array,
  to: number,
  h: number,
): boolean {
  const { mean, momentum: L, residual: r, step: d, jacobian: J, inverse } = mid;
  for (let k = 0; k < 3; k++) r[k] = h * torque[to + k];
  if (!mat3Invert(inverse, 0, inertia, io)) return false;
  mat3MulVec(d, 0, inverse, 0, r, 0);
  for (let k = 0; k < 3; k++) out[oo + k] = omega[wo + k] + d[k];
  for (let it = 0; it < MIDPOINT_ITERATIONS; it++) {
    // r = I (ω₂ − ω₁) + h (ω̄ × I ω̄ − τ)
    for (let k = 0; k < 3; k++) {
      mean[k] = 0.5 * (omega[wo + k] + out[oo + k]);
      d[k] = out[oo + k] - omega[wo + k];
    }
    mat3MulVec(L, 0, inertia, io, mean, 0);
    mat3MulVec(r, 0, inertia, io, d, 0);
    cross3(d, 0, mean, 0, L, 0);
    for (let k = 0; k < 3; k++) r[k] += h * (d[k] - torque[to + k]);
    // J = I + ½ h ([ω̄]× I − [I ω̄]×): column j is I e_j + ½ h (ω̄ × I e_j − L × e_j)
    for (let j = 0; j < 3; j++) {
      const c0 = inertia[io + j];
      const c1 = inertia[io + 3 + j];
      const c2 = inertia[io + 6 + j];
      J[j] = c0 + 0.5 * h * (mean[1] * c2 - mean[2] * c1);
      J[3 + j] = c1 + 0.5 * h * (mean[2] * c0 - mean[0] * c2);
      J[6 + j] = c2 + 0.5 * h * (mean[0] * c1 - mean[1] * c0);
    }
    J[1] += 0.5 * h * L[2];
    J[2] -= 0.5 * h * L[1];
    J[3] -= 0.5 * h * L[2];
    J[5] += 0.5 * h * L[0];
    J[6] += 0.5 * h * L[1];
    J[7] -= 0.5 * h * L[0];
    if (!mat3Invert(inverse, 0, J, 0)) return false;
    mat3MulVec(d, 0, inverse, 0, r, 0);
    let change = 0;
    let size = 0;
    for (let k = 0; k < 3; k++) {
      out[oo + k] -= d[k];
      change = Math.max(change, Math.abs(d[k]));
      size = Math.max(size, Math.abs(out[oo + k]));
    }
    if (change <= 1e-12 * size) return true;
  }
  return false;
}
