/**
 * DistanceJoint (C = |p_b − p_a| − L, 1 row): C = 0 in the model pose (L defaults to the
 * current distance), rank 1, rigid motions of the pair and b's point moving perpendicular
 * to the link allowed, along it forbidden (joint-checks.ts); its Jacobian and Qc against
 * finite differences for every kind of end.
 */
import { describe, expect, it } from "vitest";
import { createConstraints } from "../../../src/engine/constraints/build";
import { DistanceJoint } from "../../../src/engine/constraints/distance";
import { mulberry32 } from "../../support/random";
import { randomBody, randVec, system } from "./helpers";
import { cross, gu, testJoint, worldPoint } from "./joint-checks";

testJoint(
  "distance",
  1,
  "C = 0 in the model pose, rigid motions allowed, rank 1; b's point keeps the distance",
  (pair) => {
    const { sys, set, p, slide } = pair;
    const someW = randVec(pair.r);
    // b's point moving perpendicular to the link (b translating) keeps the distance
    const pb = worldPoint(sys, 1, [0.2, -0.1, 0.3]);
    const d = pb.map((x, i) => x - p[i]);
    expect(gu(set, slide(cross(d, someW)))).toBeLessThan(1e-13);
    expect(gu(set, slide(d))).toBeGreaterThan(1e-3);
  },
);

describe("distance joint with an explicit length", () => {
  it("an explicit length L: C = |p_b − p_a| − L; coincident points without a length are refused", () => {
    const r = mulberry32(5);
    const sys = system([randomBody(r, "A", "rigid")]);
    const pa = Array.from(sys.pos.subarray(0, 3)) as [number, number, number];
    const [link] = createConstraints(
      [
        {
          id: "d",
          type: "distance",
          a: { body: "ground", point: [1, 2, 3] },
          b: { body: "A", point: [0, 0, 0] },
          length: 0.25,
        },
      ],
      [],
      sys,
    );
    expect(link).toBeInstanceOf(DistanceJoint);
    const c = new Float64Array(1);
    link.residual(0, c, 0);
    expect(c[0]).toBeCloseTo(Math.hypot(pa[0] - 1, pa[1] - 2, pa[2] - 3) - 0.25, 14);
    expect(() =>
      createConstraints(
        [
          {
            id: "d",
            type: "distance",
            a: { body: "ground", point: pa },
            b: { body: "A", point: [0, 0, 0] },
          },
        ],
        [],
        sys,
      ),
    ).toThrow(/joint "d": distance needs a positive length/);
  });
});
