/**
 * RevoluteJoint (5 rows): C = 0 in the model pose, rank 5, rigid motions of the pair and
 * b's rotation about the axis through the joint point allowed, rotation about a
 * perpendicular axis and sliding along the axis forbidden (joint-checks.ts); its
 * Jacobian and Qc against finite differences for every kind of end (a particle end
 * leaves the 3 point rows).
 */
import { describe, expect, it } from "vitest";
import { randVec } from "./helpers";
import {
  assembledPair,
  caseLabel,
  cross,
  DERIVATIVE_CASES,
  expectAssembled,
  expectDerivativesMatchDifferences,
  gu,
} from "./joint-checks";

describe("revolute joint kinematics", () => {
  it("C = 0 in the model pose, rigid motions allowed, rank 5; b turns about the axis only", () => {
    for (let seed = 1; seed <= 5; seed++) {
      const pair = assembledPair("revolute", seed);
      const { set, axis, rot, slide } = pair;
      expectAssembled(pair, 5);
      const someW = randVec(pair.r);
      expect(gu(set, rot(axis.map((x) => 2.3 * x)))).toBeLessThan(1e-13);
      expect(gu(set, rot(cross(axis, someW)))).toBeGreaterThan(1e-3);
      expect(gu(set, slide(axis))).toBeGreaterThan(1e-3);
    }
  });
});

describe("revolute Jacobian, Ct and Qc vs finite differences along random motions", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.type === "revolute" && c.drive === undefined)
      it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
  });
});
