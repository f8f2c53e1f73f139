/**
 * Linear viscous damping of absolute (world-frame) velocities, per body:
 *   f = −c_lin v,   τ = −c_ang ω        (c_lin in N·s/m, c_ang in N·m·s/rad)
 * on a listed set of bodies or on every dynamic body (particles get only the linear part).
 * Velocity Jacobian −c_lin I₃ and −c_ang I₃ on each body's diagonal block; no position
 * dependence (world velocities are the state). −∂f/∂v = c I ⪰ 0 is symmetric, so adding
 * it with the integrator's s < 0 keeps the solve matrix SPD: jacobianType SPD.
 * Non-conservative: potentialEnergy 0, its whole force dissipative (power Σ c_lin |v|² +
 * c_ang |ω|², W).
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import { BodyKind, type BodySystem, inverseInertiaBound } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import type { ForceEffector } from "./effector";

export interface DamperOptions {
  id: string;
  /** Body indices to damp; ground and fixed bodies are skipped. Default: every dynamic body. */
  bodies?: readonly number[];
  linear: number;
  angular: number;
}

export class DamperEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags = MatrixType.SPD;
  /** −c v and −c ω: linear in the velocities. */
  readonly affineInVelocity = true;
  readonly linear: number;
  readonly angular: number;
  /** The dynamic bodies damped. */
  readonly bodies: Int32Array;

  constructor(
    private readonly sys: BodySystem,
    o: DamperOptions,
  ) {
    this.id = o.id;
    this.linear = o.linear;
    this.angular = o.angular;
    if (!(this.linear >= 0) || !(this.angular >= 0))
      throw new Error(`damper "${o.id}": coefficients must be ≥ 0`);
    const list: number[] = [];
    const seen = new Set<number>();
    const candidates = o.bodies ?? Array.from({ length: sys.numBodies }, (_, b) => b);
    for (const b of candidates) {
      if (!Number.isInteger(b) || b < -1 || b >= sys.numBodies)
        throw new Error(`damper "${o.id}": body index ${b} out of range`);
      if (b < 0 || sys.block[b] < 0 || seen.has(b)) continue;
      seen.add(b);
      list.push(b);
    }
    this.bodies = Int32Array.from(list);
  }

  applyForces(_t: number): void {
    const { sys, linear: cl, angular: ca } = this;
    const { force, torque, vel, omega } = sys;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      const i = 3 * b;
      force[i] -= cl * vel[i];
      force[i + 1] -= cl * vel[i + 1];
      force[i + 2] -= cl * vel[i + 2];
      if (sys.kind[b] !== BodyKind.RIGID) continue;
      torque[i] -= ca * omega[i];
      torque[i + 1] -= ca * omega[i + 1];
      torque[i + 2] -= ca * omega[i + 2];
    }
  }

  addSolveBlocks(m: SparseBlockMatrix): void {
    for (const b of this.bodies) m.addBlock(this.sys.block[b], this.sys.block[b]);
  }

  addPosJacobian(_m: SparseBlockMatrix, _s: number): void {}

  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    const sys = this.sys;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      const k = sys.block[b];
      m.addDiagonal3(k, 0, -s * this.linear);
      if (sys.kind[b] === BodyKind.RIGID) m.addDiagonal3(k, 3, -s * this.angular);
    }
  }

  /**
   * Symplectic Euler's stability bound by rows (ForceEffector.addExplicitRows): body b's
   * blocks of M^{-1/2} D M^{-1/2} are c_lin/m I (translation, row 2b) and c_ang I_b⁻¹
   * (rotation, row 2b + 1), of λ_max c_lin/m and c_ang λ_max(I_b⁻¹) ≤ c_ang ι_b
   * (inverseInertiaBound): the damping rates, exact with I_b's principal axes the world's.
   * No stiffness.
   */
  addExplicitRows(_stiff: Float64Array, damp: Float64Array): void {
    const sys = this.sys;
    for (let n = 0; n < this.bodies.length; n++) {
      const b = this.bodies[n];
      damp[2 * b] += this.linear / sys.mass[b];
      damp[2 * b + 1] += this.angular * inverseInertiaBound(sys, b);
    }
  }

  potentialEnergy(): number {
    return 0;
  }

  /** Its whole force: a damper has no potential (power Σ c_lin |v|² + c_ang |ω|², W). */
  applyDissipativeForces(t: number): void {
    this.applyForces(t);
  }
}
