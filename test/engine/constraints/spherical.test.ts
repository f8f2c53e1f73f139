/**
 * SphericalJoint (C = p_b − p_a, 3 rows): what it allows and forbids, checked on the
 * motions themselves (joint-checks.ts): C = 0 in the model pose, rank 3, rigid motions of
 * the pair and any rotation of b about the joint point allowed; its Jacobian and Qc
 * against finite differences for every kind of end.
 */
import { expect } from "vitest";
import { randVec } from "./helpers";
import { gu, testJoint } from "./joint-checks";

testJoint(
  "spherical",
  3,
  "C = 0 in the model pose, rigid motions allowed, rank 3; b turns freely about the point",
  (pair) => {
    expect(gu(pair.set, pair.rot(randVec(pair.r)))).toBeLessThan(1e-13);
  },
);
