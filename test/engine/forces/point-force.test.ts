/** Point force and torque on a body: hand values, its potential and its Jacobians. */
import { describe, expect, it } from "vitest";
import { PointForceEffector } from "../../../src/engine/forces/point-force";
import { clearForces } from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import {
  checkJacobians,
  energyGradientErrors,
  expectExactJacobians,
  particle,
  particlePair,
  rigid,
  rigidPair,
  system,
} from "./jacobian-check";

const S = Math.SQRT1_2;
const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

describe("point force", () => {
  it("rigid body: f at the rotated point gives r × f, plus the torque; time functions", () => {
    const sys = system(rigid("r", 1, [0, 0, 5], { orientation: [S, 0, 0, S] }));
    const pf = new PointForceEffector(sys, {
      id: "pf",
      body: 0,
      point: [1, 0, 0],
      force: [0, 0, { type: "sine", amplitude: 2, frequency: 0.25, phase: 0, offset: 0 }],
      torque: [0, { offset: 1, rate: 2 }, 0],
    });
    clearForces(sys);
    pf.applyForces(1); // f_z = 2 sin(π/2) = 2; τ_y = 1 + 2 = 3
    expect(Array.from(sys.force)).toEqual(close([0, 0, 2]));
    // r = (0,1,0): r × f = (2,0,0); plus (0,3,0)
    expect(Array.from(sys.torque)).toEqual(close([2, 3, 0]));
    expect(pf.potentialEnergy()).toBe(0); // time-varying: not conservative
  });

  it("particles get the force only; ground nothing; constant force has V = −f·x_p", () => {
    const sys = system(particle("p", 1, [1, 2, 3]));
    const pf = new PointForceEffector(sys, {
      id: "pf",
      body: 0,
      point: [0, 0, 1],
      force: [1, -2, 0.5],
    });
    clearForces(sys);
    pf.applyForces(0);
    expect(Array.from(sys.force)).toEqual([1, -2, 0.5]);
    expect(Array.from(sys.torque)).toEqual([0, 0, 0]);
    // x_p = (1,2,4): −(1 − 4 + 2) = 1
    expect(pf.potentialEnergy()).toBeCloseTo(1, 14);
    const onGround = new PointForceEffector(sys, { id: "g", body: -1, force: [1, 1, 1] });
    clearForces(sys);
    onGround.applyForces(0);
    expect(Array.from(sys.force)).toEqual([0, 0, 0]);
    expect(onGround.potentialEnergy()).toBe(0);
  });

  it("constant force on a rigid offset point is −∇(−f·x_p)", () => {
    const errs = energyGradientErrors(
      () => system(rigid("r", 1, [0, 0, 0])),
      (s) =>
        new PointForceEffector(s, {
          id: "pf",
          body: 0,
          point: [0.4, -0.3, 0.8],
          force: [1, 2, -3],
        }),
    );
    for (const e of errs) expect(e).toBeLessThan(1e-8);
  });
});

describe("point force Jacobians (FD check)", () => {
  it("rigid body, offset point, force and torque as time functions", () => {
    const res = checkJacobians(
      rigidPair,
      (s) =>
        new PointForceEffector(s, {
          id: "pf",
          body: 1,
          point: [0.3, -0.5, 0.2],
          force: [
            3,
            { offset: 1, rate: 2 },
            { type: "sine", amplitude: 2, frequency: 1, phase: 0.3, offset: 0 },
          ],
          torque: [0.5, -1, 0.2],
        }),
    );
    expectExactJacobians(res, false);
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("particle: no Jacobian", () => {
    const res = checkJacobians(
      particlePair,
      (s) => new PointForceEffector(s, { id: "pf", body: 0, point: [1, 0, 0], force: [1, 2, 3] }),
    );
    for (const e of [...res.position, ...res.velocity]) expect(e).toBe(0);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });
});
