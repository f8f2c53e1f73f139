/** The gyroscopic term τ = −ω × (I_w ω): hand values, no work, and its Jacobians. */
import { describe, expect, it } from "vitest";
import { GyroscopicEffector } from "../../../src/engine/forces/gyroscopic";
import {
  addPositionIncrement,
  clearForces,
  getVelocity,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkJacobians,
  denseJacobian,
  expectExactJacobians,
  particle,
  randomizeState,
  rigid,
  system,
} from "./jacobian-check";

const S = Math.SQRT1_2;
const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

describe("gyroscopic term", () => {
  it("τ = −ω × (I_w ω) with I_w = R I Rᵀ", () => {
    const sys = system(
      rigid("a", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
      rigid("b", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3], orientation: [S, 0, 0, S] }),
      particle("p", 1, [0, 0, 0]),
    );
    sys.omega.set([1, 1, 0, 1, 1, 0, 0, 0, 0]);
    const gy = new GyroscopicEffector(sys);
    clearForces(sys);
    gy.applyForces(0);
    // a: Iω = (1,2,0), ω × Iω = (0,0,1) → τ = (0,0,−1)
    // b: turned 90° about z, I_w = diag(2,1,3): Iω = (2,1,0), ω × Iω = (0,0,−1) → τ = (0,0,1)
    expect(Array.from(sys.torque)).toEqual(close([0, 0, -1, 0, 0, 1, 0, 0, 0]));
    expect(Array.from(sys.force)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(gy.bodies.length).toBe(2);
    expect(gy.potentialEnergy()).toBe(0);
  });

  it("does no work: ω·τ = 0 for random states", () => {
    const rng = mulberry32(5);
    const sys = system(rigid("a", 1, [0, 0, 0]));
    const gy = new GyroscopicEffector(sys);
    for (let k = 0; k < 10; k++) {
      randomizeState(sys, rng);
      clearForces(sys);
      gy.applyForces(0);
      const w = sys.omega;
      const t = sys.torque;
      expect(Math.abs(w[0] * t[0] + w[1] * t[1] + w[2] * t[2])).toBeLessThan(1e-14);
    }
  });
});

describe("gyroscopic Jacobians (FD check)", () => {
  it("gyroscopic term (full inertia, rotated bodies)", () => {
    const res = checkJacobians(
      () =>
        system(
          rigid("r1", 1, [0, 0, 0]),
          particle("p", 1, [1, 0, 0]),
          rigid("r2", 3, [0, 1, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
        ),
      (s) => new GyroscopicEffector(s),
      { configurations: 6 },
    );
    expectExactJacobians(res, true);
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("gyroscopic Jacobians follow the state: after setVelocity and a pose change they equal a fresh effector's", () => {
    // the effector keeps I_w ω and [ω]× I_w between its two Jacobians under stateVersion
    const make = () =>
      system(rigid("r", 3, [0, 1, 0], { inertia: [1, 0.2, 0, 0.2, 2, 0.1, 0, 0.1, 3] }));
    const sys = make();
    const rng = mulberry32(5);
    randomizeState(sys, rng);
    const eff = new GyroscopicEffector(sys);
    const before = [denseJacobian(sys, eff, "position"), denseJacobian(sys, eff, "velocity")];
    const u = new Float64Array(sys.numDofs);
    getVelocity(sys, u);
    for (let i = 3; i < 6; i++) u[i] = 2 * rng() - 1;
    setVelocity(sys, u);
    addPositionIncrement(sys, Float64Array.of(0, 0, 0, 0.3, -0.2, 0.1), 1);
    const fresh = new GyroscopicEffector(sys);
    for (const which of ["position", "velocity"] as const) {
      const a = denseJacobian(sys, eff, which);
      const b = denseJacobian(sys, fresh, which);
      expect(Array.from(a)).toEqual(Array.from(b));
    }
    // the state did change the Jacobians
    expect(denseJacobian(sys, eff, "velocity")).not.toEqual(before[1]);
  });
});
