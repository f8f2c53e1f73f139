/**
 * PrismaticJoint (5 rows): C = 0 in the model pose, rank 5, rigid motions of the pair and
 * b's slide along the axis allowed, slides across it and rotation about it forbidden
 * (joint-checks.ts); its Jacobian and Qc against finite differences for every kind of end.
 */
import { expect } from "vitest";
import { randVec } from "./helpers";
import { cross, gu, testJoint } from "./joint-checks";

testJoint(
  "prismatic",
  5,
  "C = 0 in the model pose, rigid motions allowed, rank 5; b slides along the axis only",
  (pair) => {
    const { set, axis, rot, slide } = pair;
    const someW = randVec(pair.r);
    expect(gu(set, slide(axis.map((x) => -1.7 * x)))).toBeLessThan(1e-13);
    expect(gu(set, slide(cross(axis, someW)))).toBeGreaterThan(1e-3);
    expect(gu(set, rot(axis))).toBeGreaterThan(1e-3);
  },
);
