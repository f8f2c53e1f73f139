/**
 * PrismaticJoint (5 rows): C = 0 in the model pose, rank 5, rigid motions of the pair and
 * b's slide along the axis allowed, slides across it and rotation about it forbidden
 * (joint-checks.ts); its Jacobian and Qc against finite differences for every kind of end.
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

describe("prismatic joint kinematics", () => {
  it("C = 0 in the model pose, rigid motions allowed, rank 5; b slides along the axis only", () => {
    for (let seed = 1; seed <= 5; seed++) {
      const pair = assembledPair("prismatic", seed);
      const { set, axis, rot, slide } = pair;
      expectAssembled(pair, 5);
      const someW = randVec(pair.r);
      expect(gu(set, slide(axis.map((x) => -1.7 * x)))).toBeLessThan(1e-13);
      expect(gu(set, slide(cross(axis, someW)))).toBeGreaterThan(1e-3);
      expect(gu(set, rot(axis))).toBeGreaterThan(1e-3);
    }
  });
});

describe("prismatic Jacobian, Ct and Qc vs finite differences along random motions", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.type === "prismatic" && c.drive === undefined)
      it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
  });
});
