/**
 * A prescribed force f(t) (and optional pure torque τ(t)) on a point of a body, world
 * frame, each component a TimeFunction of t (ArtiSynth's PointForce).
 *
 * Generalized force: particle [f]; rigid body [f; r × f + τ] with r = R p the point's
 * offset from the centre of mass (the torque τ is a free vector, independent of the point).
 * Ground and fixed bodies receive nothing.
 *
 * Position Jacobian (rigid bodies only; f and τ are world-fixed so only r moves): with
 * δr = δθ × r = −[r]× δθ,
 *   δ(r × f) = δr × f = −f × δr = −[f]× (−[r]× δθ) = [f]×[r]× δθ
 * so ∂τ_total/∂θ = [f]×[r]× = r fᵀ − (f·r) I, nonsymmetric unless f ∥ r: jacobianType is
 * GENERAL for an offset point on a dynamic rigid body, SPD (no Jacobian) otherwise. No
 * velocity Jacobian. The Jacobian uses f at the time of the last applyForces(t) (ArtiSynth's
 * order: forces are applied, then the Jacobians of that state are added).
 *
 * potentialEnergy: when f is constant in time the force is conservative with potential
 * V = −f·x_p (−∂V/∂x = f, −∂V/∂θ = r × f), reported so that total energy is conserved; a
 * time-varying force or any torque is non-conservative work and contributes 0.
 */
import type { TimeFunctionSpec } from "../../schemas/model";
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { BodySystem } from "../model/body-system";
import { type CompiledTimeFunction, compileTimeFunction } from "../model/time-function";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import { PointAttachment } from "./attachment";
import type { ForceEffector } from "./effector";

export interface PointForceOptions {
  id: string;
  /** Body index (−1 for ground) and the point in its frame (m). */
  body: number;
  point?: ArrayLike<number>;
  /** World-frame force components (N), functions of t. */
  force: readonly TimeFunctionSpec[];
  /** Optional world-frame torque components (N·m), functions of t. */
  torque?: readonly TimeFunctionSpec[];
}

export class PointForceEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags;
  readonly at: PointAttachment;
  /** f and τ of the last applyForces (world frame). */
  readonly f = new Float64Array(3);
  readonly tau = new Float64Array(3);

  private readonly fx: CompiledTimeFunction;
  private readonly fy: CompiledTimeFunction;
  private readonly fz: CompiledTimeFunction;
  private readonly tx: CompiledTimeFunction | null;
  private readonly ty: CompiledTimeFunction | null;
  private readonly tz: CompiledTimeFunction | null;
  private readonly constantForce: boolean;
  private readonly blk = new Float64Array(9);

  constructor(
    private readonly sys: BodySystem,
    o: PointForceOptions,
  ) {
    this.id = o.id;
    if (o.force.length !== 3 || (o.torque !== undefined && o.torque.length !== 3))
      throw new Error(`point force "${o.id}": force and torque have 3 components`);
    this.at = new PointAttachment(sys, o.body, o.point ?? [0, 0, 0]);
    [this.fx, this.fy, this.fz] = o.force.map(compileTimeFunction);
    if (o.torque) [this.tx, this.ty, this.tz] = o.torque.map(compileTimeFunction);
    else this.tx = this.ty = this.tz = null;
    this.constantForce = this.fx.constant && this.fy.constant && this.fz.constant;
    this.jacobianType = this.at.hasMomentArm ? MatrixType.GENERAL : MatrixType.SPD;
    this.evaluate(0);
  }

  applyForces(t: number): void {
    this.evaluate(t);
    const at = this.at;
    if (at.block < 0) return;
    at.update();
    at.addForce(this.f, 0, 1);
    if (!at.rotational || this.tx === null) return;
    const i = 3 * at.body;
    const torque = this.sys.torque;
    torque[i] += this.tau[0];
    torque[i + 1] += this.tau[1];
    torque[i + 2] += this.tau[2];
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    if (this.at.block >= 0) m.addBlock(this.at.block, this.at.block);
  }

  /** s [f]×[r]× into the (θ, θ) sub-block of the body's diagonal block. */
  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    const at = this.at;
    if (!at.hasMomentArm) return;
    at.update();
    const { f, blk } = this;
    const r = at.r;
    const fr = f[0] * r[0] + f[1] * r[1] + f[2] * r[2];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) blk[3 * i + j] = r[i] * f[j] - (i === j ? fr : 0);
    m.add3x3(at.block, at.block, 3, 3, blk, 0, s);
  }

  addVelJacobian(_m: SparseBlockMatrix, _s: number): void {}

  potentialEnergy(): number {
    if (!this.constantForce || this.at.block < 0) return 0;
    this.at.update();
    const x = this.at.x;
    const f = this.f;
    return -(f[0] * x[0] + f[1] * x[1] + f[2] * x[2]);
  }

  private evaluate(t: number): void {
    const { f, tau } = this;
    f[0] = this.fx.value(t);
    f[1] = this.fy.value(t);
    f[2] = this.fz.value(t);
    if (this.tx && this.ty && this.tz) {
      tau[0] = this.tx.value(t);
      tau[1] = this.ty.value(t);
      tau[2] = this.tz.value(t);
    }
  }
}
