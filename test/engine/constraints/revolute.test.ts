/**
 * RevoluteJoint (5 rows): C = 0 in the model pose, rank 5, rigid motions of the pair and
 * b's rotation about the axis through the joint point allowed, rotation about a
 * perpendicular axis and sliding along the axis forbidden (joint-checks.ts); its
 * Jacobian and Qc against finite differences for every kind of end (a particle end
 * leaves the 3 point rows).
 */
import { expect } from "vitest";
import { randVec } from "./helpers";
import { cross, gu, testJoint } from "./joint-checks";

testJoint(
  "revolute",
  5,
  "C = 0 in the model pose, rigid motions allowed, rank 5; b turns about the axis only",
  (pair) => {
    const { set, axis, rot, slide } = pair;
    const someW = randVec(pair.r);
    expect(gu(set, rot(axis.map((x) => 2.3 * x)))).toBeLessThan(1e-13);
    expect(gu(set, rot(cross(axis, someW)))).toBeGreaterThan(1e-3);
    expect(gu(set, slide(axis))).toBeGreaterThan(1e-3);
  },
);
