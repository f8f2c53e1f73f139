/**
 * The linear damper f = −c v, τ = −c ω: hand values, its velocity Jacobian, and its damping
 * rate (addExplicitRows) against the highest of M^{-1/2} D M^{-1/2}.
 */
import { describe, expect, it } from "vitest";
import { DamperEffector } from "../../../src/engine/forces/damper";
import { clearForces } from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import {
  checkExplicitBound,
  checkJacobians,
  denseJacobian,
  explicitBound,
  highestMode,
  particle,
  rigid,
  rigidPair,
  system,
} from "./jacobian-check";

describe("damper", () => {
  it("f = −c v, τ = −c ω on listed (or all dynamic) bodies; Jacobian −c I", () => {
    const sys = system(
      particle("p", 1, [0, 0, 0]),
      rigid("r", 1, [0, 0, 0]),
      rigid("f", 1, [0, 0, 0], { fixed: true }),
    );
    sys.vel.set([1, 2, 3, -1, 0, 2]);
    sys.omega.set([0, 0, 0, 0.5, -2, 1]);
    const all = new DamperEffector(sys, { id: "d", linear: 2, angular: 3 });
    clearForces(sys);
    all.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([-2, -4, -6, 2, 0, -4]);
    expect(Array.from(sys.torque.subarray(3, 6))).toEqual([-1.5, 6, -3]);
    expect(Array.from(all.bodies)).toEqual([0, 1]);
    const d = denseJacobian(sys, all, "velocity");
    const n = sys.numDofs; // 9
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) expect(d[i * n + j]).toBe(i !== j ? 0 : i < 6 ? -2 : -3);
    const listed = new DamperEffector(sys, { id: "d2", bodies: [1, -1, 2], linear: 1, angular: 0 });
    clearForces(sys);
    listed.applyForces(0);
    expect(Array.from(sys.force.subarray(0, 6))).toEqual([0, 0, 0, 1, 0, -2]);
    expect(Array.from(listed.bodies)).toEqual([1]);
  });
});

describe("damper Jacobians (FD check)", () => {
  it("damper on every dynamic body", () => {
    const res = checkJacobians(
      () =>
        system(
          particle("p", 1, [0, 0, 0]),
          rigid("r", 1, [1, 0, 0]),
          rigid("f", 1, [0, 0, 0], { fixed: true }),
        ),
      (s) => new DamperEffector(s, { id: "d", linear: 0.7, angular: 0.3 }),
    );
    for (const e of res.velocity) expect(e).toBeLessThan(1e-9);
    expect(Math.min(...res.velocityNorm)).toBeCloseTo(0.7, 12);
    expect(res.types.every((t) => t === MatrixType.SPD)).toBe(true);
  });

  it("damper on listed bodies", () => {
    const res = checkJacobians(
      rigidPair,
      (s) => new DamperEffector(s, { id: "d", bodies: [1], linear: 2, angular: 0.5 }),
    );
    for (const e of res.velocity) expect(e).toBeLessThan(1e-9);
  });
});

describe("damper addExplicitRows (symplectic Euler's stability bound)", () => {
  it("is max(c_lin/m, c_ang/I_min) on a body with principal axes along the world's, and bounds turned ones", () => {
    const sys = system(
      rigid("r", 2, [0, 0, 0], { inertia: [0.5, 0, 0, 0, 0.2, 0, 0, 0, 0.4] }),
      particle("p", 0.5, [1, 0, 0]),
    );
    const eff = new DamperEffector(sys, { id: "d", linear: 3, angular: 0.3 });
    const [omega2, gamma] = explicitBound(sys, eff);
    expect(omega2).toBe(0);
    // the particle's 3/0.5 = 6 against the body's max(1.5, 0.3/0.2 = 1.5)
    expect(gamma).toBeCloseTo(6, 12);
    expect(highestMode(sys, eff, "velocity")).toBeCloseTo(6, 12);
    const turned = new DamperEffector(sys, { id: "d", linear: 0.1, angular: 0.3, bodies: [0] });
    expect(explicitBound(sys, turned)[1]).toBeCloseTo(1.5, 12);
    const [, ratio] = checkExplicitBound(
      rigidPair,
      (s) => new DamperEffector(s, { id: "d", linear: 0.1, angular: 2 }),
    );
    // turned full inertias: Gershgorin's ι, measured 1.18 times the highest rate
    expect(ratio).toBeLessThan(1.3);
  });
});
