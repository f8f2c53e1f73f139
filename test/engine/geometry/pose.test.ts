/**
 * World poses (pose.ts) against closed forms: composePose against the composition of the two
 * placements applied to points (the rotation of a quaternion is math/quat.ts's,
 * test/engine/math/quat.test.ts).
 */
import { describe, expect, it } from "vitest";
import { composePose, WorldPose } from "../../../src/engine/geometry/pose";
import { quatToMat3Normalized } from "../../../src/engine/math/quat";
import { axisAngle, rotate, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";

describe("poses", () => {
  it("composePose: x_world = p_body + R_body (p_local + R_local x)", () => {
    const r = mulberry32(2);
    const out = new WorldPose();
    const scratch = new Float64Array(9);
    const localR = new Float64Array(9);
    for (let trial = 0; trial < 50; trial++) {
      const qb = axisAngle([r(), r() - 0.5, r()], 6 * r());
      const ql = axisAngle([r() - 0.5, r(), r()], 6 * r());
      const pos = [9, 9, 9, r(), r(), r()]; // body 1's position at 3..5
      const quat = [1, 0, 0, 0, ...qb];
      const lp = new Float64Array([r() - 0.5, r() - 0.5, r() - 0.5]);
      quatToMat3Normalized(localR, 0, Float64Array.from(ql), 0);
      composePose(pos, Float64Array.from(quat), 1, lp, localR, out, scratch);
      const x: V3 = [r(), r(), r()];
      const inLocal = rotate(ql, x).map((v, i) => v + lp[i]);
      const want = rotate(qb, inLocal).map((v, i) => v + pos[3 + i]);
      for (let i = 0; i < 3; i++) {
        const got =
          out.p[i] + out.R[3 * i] * x[0] + out.R[3 * i + 1] * x[1] + out.R[3 * i + 2] * x[2];
        expect(got).toBeCloseTo(want[i], 14);
      }
    }
  });
});
