/**
 * PairConstraint, the common part of every joint and motor:
 * - its kinematics are cached per pose (the system's poseVersion): the residual and G of
 *   a set evaluated before a pose change equal those of a copy evaluated only after it;
 * - its reaction (force F on b at p_b and torque τ about p_b, from the Jacobian) has the
 *   virtual power of the generalized force Cq_bᵀλ: F·ṗ_b + τ·ω_b = λᵀ Cq_b [v_b; ω_b],
 *   ṗ_b = v_b + ω_b × r_b, for every joint and motor and every kind of end;
 * - hasOrientation: ground and rigid bodies have one, particles do not.
 */
import { describe, expect, it } from "vitest";
import { hasOrientation } from "../../../src/engine/constraints/pair-constraint";
import { csrToDense } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  PositionSnapshot,
  setPositionsFrom,
} from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { randomBody, system } from "./helpers";
import {
  assembledPair,
  caseLabel,
  DERIVATIVE_CASES,
  derivativeCase,
  type JointType,
} from "./joint-checks";

describe("pair kinematics cache", () => {
  it("residual and G follow every pose change (kinematics cached per poseVersion)", () => {
    for (const type of ["spherical", "revolute", "prismatic", "fixed", "distance"] as JointType[]) {
      // two copies of one model: the first evaluated (cached) before the move, the other not
      const a = assembledPair(type, 21);
      const b = assembledPair(type, 21);
      const start = new PositionSnapshot(a.sys);
      const c = new Float64Array(a.set.numRows);
      a.set.residual(0, c);
      a.set.updateJacobian(0);
      const du = Float64Array.from({ length: 12 }, () => 0.2 * (2 * a.r() - 1));
      addPositionIncrement(a.sys, du, 1);
      addPositionIncrement(b.sys, du, 1);
      a.set.residual(0, c);
      const cb = new Float64Array(b.set.numRows);
      b.set.residual(0, cb);
      expect(Array.from(c)).toEqual(Array.from(cb));
      expect(Math.max(...Array.from(c, Math.abs))).toBeGreaterThan(1e-3);
      expect(Array.from(csrToDense(a.set.updateJacobian(0)))).toEqual(
        Array.from(csrToDense(b.set.updateJacobian(0))),
      );
      // back to the model pose through the snapshot path: C = 0 again
      setPositionsFrom(a.sys, start, new Float64Array(12), 1);
      a.set.residual(0, c);
      for (const x of c) expect(Math.abs(x)).toBeLessThan(1e-14);
    }
  });
});

describe("reactions equal the virtual power of Cq_bᵀλ", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.b === "ground") return;
    it(caseLabel(c), () => {
      const { sys, constraints, joint } = derivativeCase(c, 777 + ci);
      const r = mulberry32(99 + ci);
      for (const con of constraints) {
        const jA = new Float64Array(6 * con.rows);
        const jB = new Float64Array(6 * con.rows);
        con.jacobian(0.37, jA, jB);
        const lambda = Float64Array.from({ length: con.rows }, () => 2 * r() - 1);
        const F = new Float64Array(3);
        const T = new Float64Array(3);
        con.reaction(lambda, 0, F, T);
        const b = con.bodyB;
        const v = sys.vel.subarray(3 * b, 3 * b + 3);
        const w = sys.omega.subarray(3 * b, 3 * b + 3);
        // λᵀ Cq_b [v_b; ω_b]
        let power = 0;
        for (let i = 0; i < con.rows; i++)
          for (let k = 0; k < 6; k++)
            power += lambda[i] * jB[6 * i + k] * (k < 3 ? v[k] : w[k - 3]);
        // F·ṗ_b + τ·ω_b with ṗ_b = v_b + ω_b × r_b, r_b = p_b − x_b
        const s = joint.b.point;
        const R = sys.rotation.subarray(9 * b, 9 * b + 9);
        const pt = [0, 1, 2].map(
          (i) => R[3 * i] * s[0] + R[3 * i + 1] * s[1] + R[3 * i + 2] * s[2],
        );
        const pv = [
          v[0] + w[1] * pt[2] - w[2] * pt[1],
          v[1] + w[2] * pt[0] - w[0] * pt[2],
          v[2] + w[0] * pt[1] - w[1] * pt[0],
        ];
        const p2 =
          F[0] * pv[0] + F[1] * pv[1] + F[2] * pv[2] + T[0] * w[0] + T[1] * w[1] + T[2] * w[2];
        expect(Math.abs(p2 - power)).toBeLessThan(1e-12 * (1 + Math.abs(power)));
      }
    });
  });
});

describe("hasOrientation", () => {
  it("ground and rigid bodies (moving or fixed) have one, a particle has none", () => {
    const r = mulberry32(3);
    const sys = system([
      randomBody(r, "R", "rigid"),
      randomBody(r, "P", "particle"),
      randomBody(r, "F", "fixed"),
    ]);
    expect(hasOrientation(sys, -1)).toBe(true);
    expect(hasOrientation(sys, 0)).toBe(true);
    expect(hasOrientation(sys, 1)).toBe(false);
    expect(hasOrientation(sys, 2)).toBe(true);
  });
});
