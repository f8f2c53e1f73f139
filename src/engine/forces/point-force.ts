/**
 * A prescribed force f(t) (and optional pure torque τ(t)) on a point of a body, each
 * component a TimeFunction of t (ArtiSynth's PointForce), given in the world frame or in
 * the body's frame (a follower load: f = R f_b, τ = R τ_b turn with the body). An input
 * may set constant values at run time (setLoad); they replace the functions until reset.
 *
 * Generalized force: particle [f]; rigid body [f; r × f + τ] with r = R p the point's
 * offset from the centre of mass (the torque τ is a free vector, independent of the point).
 * Ground and fixed bodies receive nothing.
 *
 * Position Jacobian (rigid bodies only), with δr = δθ × r = −[r]× δθ:
 *  world frame: f and τ are fixed, only r moves:
 *   δ(r × f) = δr × f = −f × δr = −[f]× (−[r]× δθ) = [f]×[r]× δθ
 *  so ∂τ_total/∂θ = [f]×[r]× = r fᵀ − (f·r) I, nonsymmetric unless f ∥ r;
 *  body frame: f, r and τ all turn with the body, δf = δθ × f, so
 *   ∂f/∂θ = −[f]×,   ∂τ_total/∂θ = −[r × f + τ]×   ([a]×[b]× − [b]×[a]× = [a × b]×).
 * jacobianType is GENERAL when there is a Jacobian, SPD (none) otherwise. No velocity
 * Jacobian. The Jacobian uses f at the time of the last applyForces(t) (ArtiSynth's
 * order: forces are applied, then the Jacobians of that state are added).
 *
 * potentialEnergy: when f is the model's and constant in time and in the world frame the
 * force is conservative with potential V = −f·x_p (−∂V/∂x = f, −∂V/∂θ = r × f), reported so
 * that total energy is conserved; otherwise (time-varying, follower, set at run time) its
 * work is not a potential's and it contributes 0. applyDissipativeForces: what the
 * potential does not account for, power −(f·v_p + τ·ω) (the torque is never a potential's).
 */
import type { TimeFunctionSpec } from "../../../schemas/model";
import type { SparseBlockMatrix } from "../math/block-matrix";
import { sameValues } from "../math/vec3";
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
  /** Optional torque components (N·m), functions of t. */
  torque?: readonly TimeFunctionSpec[];
  /** Frame of force and torque (default world). */
  frame?: "world" | "body";
}

export class PointForceEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags;
  readonly at: PointAttachment;
  /** Functions of time and, a follower load, of the pose: constant in the velocities. */
  readonly affineInVelocity = true;
  /** f and τ of the last applyForces (world frame). */
  readonly f = new Float64Array(3);
  readonly tau = new Float64Array(3);
  /** True for a follower load (force and torque in the body frame). */
  readonly follower: boolean;
  /** Force and torque set at run time (in the load's frame), or null: the model's functions. */
  override: { force: number[]; torque: number[] } | null = null;
  /** ForceEffector.timeDependent: the model's functions, one not constant. */
  get timeDependent(): boolean {
    return this.override === null && this.timedFunctions;
  }
  /** Whether one of the model's functions is not constant. */
  private readonly timedFunctions: boolean;

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
    this.follower = o.frame === "body";
    if (this.follower && !this.at.rotational && o.body >= 0 && sys.block[o.body] >= 0)
      throw new Error(`point force "${o.id}": a body-frame load needs a rigid body`);
    this.constantForce = !this.follower && this.fx.constant && this.fy.constant && this.fz.constant;
    this.timedFunctions = [this.fx, this.fy, this.fz, this.tx, this.ty, this.tz].some(
      (f) => f !== null && !f.constant,
    );
    this.jacobianType =
      this.at.hasMomentArm || (this.follower && this.at.rotational)
        ? MatrixType.GENERAL
        : MatrixType.SPD;
    this.evaluate(0);
  }

  /**
   * Sets constant force and torque (in the load's frame) until reset (null: the model's),
   * f and τ evaluated at once at t (potentialEnergy reads them before the next applyForces).
   */
  setLoad(load: { force: number[]; torque: number[] } | null, t: number): void {
    this.override = load;
    this.evaluate(t);
  }

  /**
   * Whether `load` (null: the model's) is the load in effect, which an input then leaves
   * as it is (inputs.ts, "none"): the run-time load given again, the model's functions
   * kept, or their values given while every one is constant and no run-time load holds (the
   * model's then stay, with their potential; a reset to the model's from a run-time load,
   * even of the same values, puts the potential back: a change of the energy's books).
   */
  inEffect(load: { force: number[]; torque: number[] } | null): boolean {
    const o = this.override;
    if (load === null) return o === null;
    return o !== null ? sameLoad(load, o) : this.isModelLoad(load);
  }

  /** Whether the model's functions are all constant and give `load` (no torque: 0). */
  private isModelLoad(load: { force: number[]; torque: number[] }): boolean {
    if (this.timedFunctions) return false;
    const torque = this.tx && this.ty && this.tz ? [this.tx, this.ty, this.tz] : null;
    return (
      sameValues(load.force, [this.fx.value(0), this.fy.value(0), this.fz.value(0)]) &&
      sameValues(load.torque, torque ? torque.map((f) => f.value(0)) : ZERO3)
    );
  }

  applyForces(t: number): void {
    this.apply(t, true);
  }

  /** The load at t: f at the point (with `force`) and τ on the body. */
  private apply(t: number, force: boolean): void {
    this.evaluate(t);
    const at = this.at;
    if (at.block < 0) return;
    at.update();
    if (force) at.addForce(this.f, 0, 1);
    if (!at.rotational || !this.hasTorque) return;
    const i = 3 * at.body;
    const torque = this.sys.torque;
    torque[i] += this.tau[0];
    torque[i + 1] += this.tau[1];
    torque[i + 2] += this.tau[2];
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    if (this.at.block >= 0) m.addBlock(this.at.block, this.at.block);
  }

  /**
   * World frame: s [f]×[r]× into the (θ, θ) sub-block of the body's diagonal block.
   * Body frame: s (−[f]×) into (x, θ) and s (−[r × f + τ]×) into (θ, θ).
   */
  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    const at = this.at;
    if (at.block < 0 || !at.rotational) return;
    if (!this.follower && !at.hasMomentArm) return;
    at.update();
    const { f, blk } = this;
    const r = at.r;
    if (!this.follower) {
      const fr = f[0] * r[0] + f[1] * r[1] + f[2] * r[2];
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) blk[3 * i + j] = r[i] * f[j] - (i === j ? fr : 0);
      m.add3x3(at.block, at.block, 3, 3, blk, 0, s);
      return;
    }
    skewInto(blk, f[0], f[1], f[2]);
    m.add3x3(at.block, at.block, 0, 3, blk, 0, -s);
    const t = this.hasTorque ? this.tau : ZERO3;
    skewInto(
      blk,
      r[1] * f[2] - r[2] * f[1] + t[0],
      r[2] * f[0] - r[0] * f[2] + t[1],
      r[0] * f[1] - r[1] * f[0] + t[2],
    );
    m.add3x3(at.block, at.block, 3, 3, blk, 0, -s);
  }

  addVelJacobian(_m: SparseBlockMatrix, _s: number): void {}

  potentialEnergy(): number {
    if (!this.potential || this.at.block < 0) return 0;
    this.at.update();
    const x = this.at.x;
    const f = this.f;
    return -(f[0] * x[0] + f[1] * x[1] + f[2] * x[2]);
  }

  /**
   * The load less the part the potential −f·x_p accounts for (a constant world force of
   * the model's, its moment included): f at the point unless it is that one, and τ; power
   * −(f · v_p + τ · ω) (W), negative while the load drives.
   */
  applyDissipativeForces(t: number): void {
    this.apply(t, !this.potential);
  }

  /** Whether the force's work is the potential's: a constant world force, not overridden. */
  private get potential(): boolean {
    return this.constantForce && this.override === null;
  }

  /** Whether there is a torque (in the model or set at run time). */
  private get hasTorque(): boolean {
    return this.tx !== null || this.override !== null;
  }

  /** f and τ at t in the world frame. */
  private evaluate(t: number): void {
    const { f, tau } = this;
    const o = this.override;
    if (o !== null) {
      f.set(o.force);
      tau.set(o.torque);
    } else {
      f[0] = this.fx.value(t);
      f[1] = this.fy.value(t);
      f[2] = this.fz.value(t);
      if (this.tx && this.ty && this.tz) {
        tau[0] = this.tx.value(t);
        tau[1] = this.ty.value(t);
        tau[2] = this.tz.value(t);
      } else tau.fill(0);
    }
    if (!this.follower || !this.at.rotational) return;
    const R = this.sys.rotation;
    const k = 9 * this.at.body;
    rotateInPlace(R, k, f);
    rotateInPlace(R, k, tau);
  }
}

const ZERO3 = new Float64Array(3);

/** Whether two run-time loads are the same values. */
function sameLoad(
  a: { force: number[]; torque: number[] },
  b: { force: number[]; torque: number[] },
): boolean {
  return sameValues(a.force, b.force) && sameValues(a.torque, b.torque);
}

/** out (3×3 row-major) = [a]×. */
function skewInto(out: Float64Array, ax: number, ay: number, az: number): void {
  out[0] = 0;
  out[1] = -az;
  out[2] = ay;
  out[3] = az;
  out[4] = 0;
  out[5] = -ax;
  out[6] = -ay;
  out[7] = ax;
  out[8] = 0;
}

/** v ← R v with R the row-major 3×3 at R[k..k+9). */
function rotateInPlace(R: Float64Array, k: number, v: Float64Array): void {
  const x = v[0];
  const y = v[1];
  const z = v[2];
  v[0] = R[k] * x + R[k + 1] * y + R[k + 2] * z;
  v[1] = R[k + 3] * x + R[k + 4] * y + R[k + 5] * z;
  v[2] = R[k + 6] * x + R[k + 7] * y + R[k + 8] * z;
}
