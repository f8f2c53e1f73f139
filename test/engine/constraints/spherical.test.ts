/**
 * SphericalJoint (C = p_b − p_a, 3 rows): what it allows and forbids, checked on the
 * motions themselves (joint-checks.ts): C = 0 in the model pose, rank 3, rigid motions of
 * the pair and any rotation of b about the joint point allowed; its Jacobian and Qc
 * against finite differences for every kind of end.
 */
import { describe, expect, it } from "vitest";
import { randVec } from "./helpers";
import {
  assembledPair,
  caseLabel,
  DERIVATIVE_CASES,
  expectAssembled,
  expectDerivativesMatchDifferences,
  gu,
} from "./joint-checks";

describe("spherical joint kinematics", () => {
  it("C = 0 in the model pose, rigid motions allowed, rank 3; b turns freely about the point", () => {
    for (let seed = 1; seed <= 5; seed++) {
      const pair = assembledPair("spherical", seed);
      expectAssembled(pair, 3);
      expect(gu(pair.set, pair.rot(randVec(pair.r)))).toBeLessThan(1e-13);
    }
  });
});

describe("spherical Jacobian, Ct and Qc vs finite differences along random motions", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.type === "spherical" && c.drive === undefined)
      it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
  });
});
