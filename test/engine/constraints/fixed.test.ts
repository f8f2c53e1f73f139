/**
 * FixedJoint (6 rows): C = 0 in the model pose, rank 6, rigid motions of the pair allowed
 * and every relative rotation or slide of b forbidden (joint-checks.ts); its Jacobian and
 * Qc against finite differences for every kind of end.
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

describe("fixed joint kinematics", () => {
  it("C = 0 in the model pose, rigid motions allowed, rank 6; no relative motion", () => {
    for (let seed = 1; seed <= 5; seed++) {
      const pair = assembledPair("fixed", seed);
      expectAssembled(pair, 6);
      const someW = randVec(pair.r);
      expect(gu(pair.set, pair.rot(someW))).toBeGreaterThan(1e-3);
      expect(gu(pair.set, pair.slide(someW))).toBeGreaterThan(1e-3);
    }
  });
});

describe("fixed Jacobian, Ct and Qc vs finite differences along random motions", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.type === "fixed" && c.drive === undefined)
      it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
  });
});
