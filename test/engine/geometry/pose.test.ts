/**
 * World poses (pose.ts) against closed forms: quatToMatrix against Rodrigues' formula
 * R = I + sin θ [k]× + (1 − cos θ) [k]×² for the unit quaternion (cos θ/2, sin θ/2 k), also
 * for a quaternion off unit length (its normalized rotation); composePose against the
 * composition of the two placements applied to points.
 */
import { describe, expect, it } from "vitest";
import { composePose, quatToMatrix, WorldPose } from "../../../src/engine/geometry/pose";
import { axisAngle, rotate, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";

describe("poses", () => {
  it("quatToMatrix is Rodrigues' rotation, for unit and scaled quaternions", () => {
    const r = mulberry32(1);
    const R = new Float64Array(9);
    for (let trial = 0; trial < 100; trial++) {
      const k: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const l = Math.hypot(...k);
      for (let i = 0; i < 3; i++) k[i] /= l;
      const th = 6 * r() - 3;
      const scale = trial % 2 === 0 ? 1 : 0.5 + r();
      const c = Math.cos(th / 2) * scale;
      const s = Math.sin(th / 2) * scale;
      quatToMatrix(c, s * k[0], s * k[1], s * k[2], R);
      const K = [
        [0, -k[2], k[1]],
        [k[2], 0, -k[0]],
        [-k[1], k[0], 0],
      ];
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          let K2 = 0;
          for (let m = 0; m < 3; m++) K2 += K[i][m] * K[m][j];
          const want = (i === j ? 1 : 0) + Math.sin(th) * K[i][j] + (1 - Math.cos(th)) * K2;
          expect(R[3 * i + j]).toBeCloseTo(want, 14);
        }
    }
  });

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
      quatToMatrix(ql[0], ql[1], ql[2], ql[3], localR);
      composePose(pos, quat, 1, lp, localR, out, scratch);
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
