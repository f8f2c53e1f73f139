/**
 * The effector interface's run-time guards (src/engine/forces/effector.ts):
 * isSymmetrizable and hasJacobianProduct recognise the optional capabilities by their
 * members' types, on the engine's effectors and on bare objects.
 */
import { describe, expect, it } from "vitest";
import {
  type ForceEffector,
  hasJacobianProduct,
  isSymmetrizable,
} from "../../../src/engine/forces/effector";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { ParticleSpringSet } from "../../../src/engine/forces/particle-springs";
import { SpringEffector } from "../../../src/engine/forces/spring";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { particle, system } from "./jacobian-check";

/** An effector with no optional member, extended per case. */
const bare = (extra: Record<string, unknown> = {}): ForceEffector =>
  ({
    id: "bare",
    jacobianType: MatrixType.SPD,
    applyForces: () => {},
    addSolveBlocks: () => {},
    addPosJacobian: () => {},
    addVelJacobian: () => {},
    potentialEnergy: () => 0,
    ...extra,
  }) as ForceEffector;

describe("isSymmetrizable and hasJacobianProduct", () => {
  it("the particle spring set has both capabilities; gravity, a single spring and a bare effector neither", () => {
    const sys = system(particle("p", 1, [0, 0, 0]), particle("q", 1, [1, 0, 0]));
    const spring = {
      bodyA: 0,
      pointA: [0, 0, 0],
      bodyB: 1,
      pointB: [0, 0, 0],
      stiffness: 1,
      damping: 0,
      restLength: 1,
    };
    const set = new ParticleSpringSet(sys, "springs", [spring]);
    expect([isSymmetrizable(set), hasJacobianProduct(set)]).toEqual([true, true]);
    const gravity = new GravityEffector(sys, [0, 0, -9.81]);
    expect([isSymmetrizable(gravity), hasJacobianProduct(gravity)]).toEqual([false, false]);
    const single = new SpringEffector(sys, { id: "s", ...spring });
    expect([isSymmetrizable(single), hasJacobianProduct(single)]).toEqual([false, false]);
    expect([isSymmetrizable(bare()), hasJacobianProduct(bare())]).toEqual([false, false]);
  });

  it("look at the members' types, not their presence", () => {
    expect(isSymmetrizable(bare({ symmetricJacobian: false }))).toBe(true);
    expect(isSymmetrizable(bare({ symmetricJacobian: "yes" }))).toBe(false);
    expect(hasJacobianProduct(bare({ addJacobianProduct: () => {} }))).toBe(true);
    expect(hasJacobianProduct(bare({ addJacobianProduct: 1 }))).toBe(false);
  });
});
