/**
 * FixedJoint (6 rows): C = 0 in the model pose, rank 6, rigid motions of the pair allowed
 * and every relative rotation or slide of b forbidden (joint-checks.ts); its Jacobian and
 * Qc against finite differences for every kind of end.
 */
import { expect } from "vitest";
import { randVec } from "./helpers";
import { gu, testJoint } from "./joint-checks";

testJoint(
  "fixed",
  6,
  "C = 0 in the model pose, rigid motions allowed, rank 6; no relative motion",
  (pair) => {
    const someW = randVec(pair.r);
    expect(gu(pair.set, pair.rot(someW))).toBeGreaterThan(1e-3);
    expect(gu(pair.set, pair.slide(someW))).toBeGreaterThan(1e-3);
  },
);
