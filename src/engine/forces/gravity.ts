/**
 * Uniform gravity: f = m g on the centre of mass of every dynamic body (world frame, N).
 * Acting at the centre of mass it exerts no torque, and it does not depend on the state,
 * so it has no Jacobian (jacobianType SPD: adding nothing preserves everything).
 * potentialEnergy: V = −Σ m g·x over bodies with mass (fixed bodies have none in the
 * BodySystem and contribute nothing), the zero at the world origin.
 */
import type { SparseBlockMatrix } from "../math/block-matrix";
import type { BodySystem } from "../model/body-system";
import { MatrixType, type MatrixTypeFlags } from "../solvers/linear/linear-solver";
import type { ForceEffector } from "./effector";

export class GravityEffector implements ForceEffector {
  readonly id: string;
  readonly jacobianType: MatrixTypeFlags = MatrixType.SPD;
  /** Constant forces: no Jacobian, so with gravity alone W is the mass matrix. */
  readonly hasJacobians = false;
  /** Constant in the velocities. */
  readonly affineInVelocity = true;
  /** The gravitational acceleration g (m/s², world frame). */
  readonly g = new Float64Array(3);

  constructor(
    private readonly sys: BodySystem,
    g: ArrayLike<number>,
    id = "gravity",
  ) {
    this.id = id;
    this.setGravity(g);
  }

  /** Changes g (the service may PATCH gravity while a session runs). */
  setGravity(g: ArrayLike<number>): void {
    if (
      g.length !== 3 ||
      !Number.isFinite(g[0]) ||
      !Number.isFinite(g[1]) ||
      !Number.isFinite(g[2])
    )
      throw new Error("gravity must be three finite numbers");
    this.g[0] = g[0];
    this.g[1] = g[1];
    this.g[2] = g[2];
  }

  applyForces(_t: number): void {
    const { sys, g } = this;
    const f = sys.force;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0) continue;
      const m = sys.mass[b];
      f[3 * b] += m * g[0];
      f[3 * b + 1] += m * g[1];
      f[3 * b + 2] += m * g[2];
    }
  }

  addSolveBlocks(_m: SparseBlockMatrix): void {}
  addPosJacobian(_m: SparseBlockMatrix, _s: number): void {}
  addVelJacobian(_m: SparseBlockMatrix, _s: number): void {}

  potentialEnergy(): number {
    const { sys, g } = this;
    const x = sys.pos;
    let e = 0;
    for (let b = 0; b < sys.numBodies; b++) {
      if (sys.dofOffset[b] < 0) continue;
      e -= sys.mass[b] * (g[0] * x[3 * b] + g[1] * x[3 * b + 1] + g[2] * x[3 * b + 2]);
    }
    return e;
  }
}
