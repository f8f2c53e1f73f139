/**
 * SphericalJoint (C = p_b − p_a, 3 rows): what it allows and forbids, checked on the
 * motions themselves (joint-checks.ts): C = 0 in the model pose, rank 3, rigid motions of
 * the pair and any rotation of b about the joint point allowed; its Jacobian and Qc
 * against finite differences for every kind of end. Its reaction (force λ on b at p_b, no
 * torque, written directly) is bit for bit the generic one from Cq_b = [I, −[r_b]×].
 */
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../support/random";
import { randVec } from "./helpers";
import { caseLabel, DERIVATIVE_CASES, derivativeCase, gu, testJoint } from "./joint-checks";

testJoint(
  "spherical",
  3,
  "C = 0 in the model pose, rigid motions allowed, rank 3; b turns freely about the point",
  (pair) => {
    expect(gu(pair.set, pair.rot(randVec(pair.r)))).toBeLessThan(1e-13);
  },
);

describe("spherical reaction equals PairConstraint's Jacobian formula bit for bit", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.type !== "spherical") return;
    it(caseLabel(c), () => {
      const { sys, constraints, joint } = derivativeCase(c, 555 + ci);
      const con = constraints[0];
      const r = mulberry32(31 + ci);
      // the lever r_b = R_b s_b (world; ground: s_b itself); the torque cancels for any lever
      const s = joint.b.point;
      const b = con.bodyB;
      const R = b < 0 ? [1, 0, 0, 0, 1, 0, 0, 0, 1] : sys.rotation.subarray(9 * b, 9 * b + 9);
      const lever = [0, 1, 2].map(
        (i) => R[3 * i] * s[0] + R[3 * i + 1] * s[1] + R[3 * i + 2] * s[2],
      );
      // Cq_b = [I, −[r]×]: rows [1 0 0 0 z −y], [0 1 0 −z 0 x], [0 0 1 y −x 0]
      const [x, y, z] = lever;
      const J = [1, 0, 0, 0, z, -y, 0, 1, 0, -z, 0, x, 0, 0, 1, y, -x, 0];
      const F = new Float64Array(3);
      const T = new Float64Array(3);
      for (let trial = 0; trial < 200; trial++) {
        // magnitudes 1e-6 .. 1e6 N, signed zeros among them
        const lambda = Float64Array.from({ length: 3 }, () => {
          const u = r();
          if (u < 0.1) return u < 0.05 ? 0 : -0;
          return (2 * r() - 1) * 10 ** (12 * r() - 6);
        });
        con.reaction(lambda, 0, F, T);
        // F = Σ_r J_r[0..2] λ_r, τ_c = Σ_r J_r[3..5] λ_r, both summed onto 0 in row order
        const sum = (col: number) => {
          let acc = 0;
          for (let row = 0; row < 3; row++) acc += J[6 * row + col] * lambda[row];
          return acc;
        };
        const f = [sum(0), sum(1), sum(2)];
        // τ about p_b = τ_c − r × F
        const t = [
          sum(3) - (lever[1] * f[2] - lever[2] * f[1]),
          sum(4) - (lever[2] * f[0] - lever[0] * f[2]),
          sum(5) - (lever[0] * f[1] - lever[1] * f[0]),
        ];
        for (let i = 0; i < 3; i++) {
          expect(Object.is(F[i], f[i])).toBe(true);
          expect(Object.is(T[i], t[i])).toBe(true);
          expect(Object.is(T[i], 0)).toBe(true);
        }
      }
    });
  });
});
