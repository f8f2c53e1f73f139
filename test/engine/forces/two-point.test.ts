/**
 * The two-point chain rule (src/engine/forces/two-point.ts): a test effector applies
 * f = A d + B ḋ on point B and −f on point A with constant random (nonsymmetric) A and B,
 * so ∂f/∂d = A and ∂f/∂ḋ = B exactly, and the coupling's generalized Jacobians must match
 * central differences of the forces (the project's Jacobian check) for every kind of end:
 * rigid–rigid, particle–rigid, to ground, to a fixed body, and both ends on one body.
 */
import { describe, expect, it } from "vitest";
import type { ForceEffector } from "../../../src/engine/forces/effector";
import { TwoPointCoupling } from "../../../src/engine/forces/two-point";
import type { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import type { BodySystem } from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkJacobians,
  expectExactJacobians,
  particleRigid,
  rigidAlone,
  rigidAndFixed,
  rigidPair,
} from "./jacobian-check";

const rng = mulberry32(31);
const A = Float64Array.from({ length: 9 }, () => 4 * rng() - 2);
const B = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);

/** The linear law f = A d + B ḋ through a TwoPointCoupling. */
class LinearCoupling implements ForceEffector {
  readonly id = "linear";
  readonly jacobianType = MatrixType.GENERAL;
  readonly coupling: TwoPointCoupling;
  private readonly f = new Float64Array(3);

  constructor(sys: BodySystem, a: number, pa: number[], b: number, pb: number[]) {
    this.coupling = new TwoPointCoupling(sys, a, pa, b, pb);
  }

  /** f = A d + B ḋ at the current state, into this.f. */
  private evaluate(): void {
    const { coupling, f } = this;
    coupling.update();
    const { d, dd } = coupling;
    for (let i = 0; i < 3; i++)
      f[i] =
        A[3 * i] * d[0] +
        A[3 * i + 1] * d[1] +
        A[3 * i + 2] * d[2] +
        B[3 * i] * dd[0] +
        B[3 * i + 1] * dd[1] +
        B[3 * i + 2] * dd[2];
  }
  applyForces(): void {
    this.evaluate();
    this.coupling.applyForce(this.f);
  }
  addSolveBlocks(m: SparseBlockMatrix): void {
    this.coupling.reserve(m);
  }
  addPosJacobian(m: SparseBlockMatrix, s: number): void {
    this.evaluate();
    this.coupling.addPosJacobian(m, s, A, B, this.f);
  }
  addVelJacobian(m: SparseBlockMatrix, s: number): void {
    this.coupling.addVelJacobian(m, s, B);
  }
  potentialEnergy(): number {
    return 0;
  }
}

const effector = (a: number, pa: number[], b: number, pb: number[]) => (sys: BodySystem) =>
  new LinearCoupling(sys, a, pa, b, pb);

describe("TwoPointCoupling Jacobians (FD check of a linear law)", () => {
  it("rigid–rigid with offset points", () => {
    expectExactJacobians(
      checkJacobians(rigidPair, effector(0, [0.2, 0.1, -0.3], 1, [-0.4, 0.3, 0.2])),
      true,
    );
  });
  it("particle–rigid and rigid–particle", () => {
    expectExactJacobians(
      checkJacobians(particleRigid, effector(0, [0, 0, 0], 1, [0.1, 0.2, 0])),
      true,
    );
    expectExactJacobians(
      checkJacobians(particleRigid, effector(1, [0.3, 0, 0.1], 0, [0, 0, 0])),
      true,
    );
  });
  it("ground–rigid and fixed–rigid", () => {
    expectExactJacobians(
      checkJacobians(rigidAlone, effector(-1, [1, 2, 0], 0, [0.2, 0.5, -0.1])),
      true,
    );
    expectExactJacobians(
      checkJacobians(rigidAndFixed, effector(1, [0.5, 0, 0.3], 0, [0.2, 0.5, -0.1])),
      true,
    );
  });
  it("both ends on one rigid body: the four terms land in its diagonal block", () => {
    const res = checkJacobians(rigidAlone, effector(0, [0.5, 0, 0], 0, [0, 0.4, 0.1]));
    for (const e of [...res.position, ...res.velocity]) expect(e).toBeLessThan(1e-6);
  });
  it("d, ḋ and the moment arm", () => {
    const sys = rigidPair();
    const c = new TwoPointCoupling(sys, 0, [0, 0, 0], 1, [0, 0, 0]);
    expect(Array.from(c.d)).toEqual([1, 0.5, 0]);
    expect(c.hasMomentArm).toBe(false);
    expect(new TwoPointCoupling(sys, -1, [0, 0, 0], 1, [0, 0, 1]).hasMomentArm).toBe(true);
  });
});
