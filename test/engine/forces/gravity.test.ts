/** Gravity: m g on the dynamic bodies, its potential −Σ m g·x, and no Jacobian. */
import { describe, expect, it } from "vitest";
import { GravityEffector } from "../../../src/engine/forces/gravity";
import { clearForces } from "../../../src/engine/model/body-system";
import {
  checkJacobians,
  energyGradientErrors,
  particle,
  rigid,
  rigidPair,
  system,
} from "./jacobian-check";

const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

describe("gravity", () => {
  it("m g on dynamic bodies, nothing on fixed ones; V = −Σ m g·x; setGravity", () => {
    const sys = system(
      particle("p", 2, [1, 2, 3]),
      rigid("r", 3, [0, 0, -1]),
      rigid("base", 5, [0, 0, 10], { fixed: true }),
    );
    const g = new GravityEffector(sys, [0, 0, -9.81]);
    clearForces(sys);
    g.applyForces(0);
    expect(Array.from(sys.force)).toEqual(close([0, 0, -19.62, 0, 0, -29.43, 0, 0, 0]));
    expect(Array.from(sys.torque)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // V = −(2·(−9.81)·3 + 3·(−9.81)·(−1)) = 9.81·(6 − 3)
    expect(g.potentialEnergy()).toBeCloseTo(9.81 * 3, 12);
    g.setGravity([1, 0, 0]);
    clearForces(sys);
    g.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([2, 0, 0, 3, 0, 0]);
    expect(g.potentialEnergy()).toBeCloseTo(-2, 14);
    expect(() => g.setGravity([0, Number.NaN, 0])).toThrow();
    expect(
      energyGradientErrors(
        () => sys,
        (s) => new GravityEffector(s, [0.3, -1, -9]),
      )[0],
    ).toBeLessThan(1e-8);
  });
});

describe("gravity Jacobians (FD check)", () => {
  it("gravity: no Jacobian, none needed", () => {
    const res = checkJacobians(rigidPair, (s) => new GravityEffector(s, [0, 0, -9.81]));
    for (const e of [...res.position, ...res.velocity]) expect(e).toBe(0);
    for (const n of [...res.positionNorm, ...res.velocityNorm]) expect(n).toBe(0);
  });
});
