import { describe, expect, it } from "vitest";
import {
  quatDifference,
  quatMul,
  quatRotate,
  quatRotateByVector,
  quatRotateInverse,
  quatToMat3,
  quatToMat3Normalized,
} from "../../../src/engine/math/quat";
import type { V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";

describe("quaternions [w, x, y, z]", () => {
  it("rotate by the closed-form axis–angle rotation", () => {
    const angle = 0.7;
    const axis = [1 / Math.sqrt(3), 1 / Math.sqrt(3), 1 / Math.sqrt(3)];
    const q = [Math.cos(angle / 2), ...axis.map((a) => a * Math.sin(angle / 2))];
    const v = [0.3, -1.2, 2];
    const out = [0, 0, 0];
    quatRotate(out, 0, q, 0, v, 0);
    // Rodrigues: v cos + (k × v) sin + k (k·v)(1 − cos)
    const kv = axis[0] * v[0] + axis[1] * v[1] + axis[2] * v[2];
    const cross = [
      axis[1] * v[2] - axis[2] * v[1],
      axis[2] * v[0] - axis[0] * v[2],
      axis[0] * v[1] - axis[1] * v[0],
    ];
    for (let i = 0; i < 3; i++)
      expect(out[i]).toBeCloseTo(
        v[i] * Math.cos(angle) + cross[i] * Math.sin(angle) + axis[i] * kv * (1 - Math.cos(angle)),
        14,
      );
    const R = new Float64Array(9);
    quatToMat3(R, 0, Float64Array.from(q), 0);
    for (let i = 0; i < 3; i++)
      expect(R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2]).toBeCloseTo(out[i], 14);
    const back = [0, 0, 0];
    quatRotateInverse(back, 0, q, 0, out, 0);
    for (let i = 0; i < 3; i++) expect(back[i]).toBeCloseTo(v[i], 14);
  });

  it("rotateByVector is the exponential map and quatDifference its inverse", () => {
    const q = [0.9, 0.1, -0.3, 0.2];
    const n = Math.hypot(...q);
    const q0 = q.map((c) => c / n);
    const theta = [0.2, -0.5, 0.9];
    const q1 = [...q0];
    quatRotateByVector(q1, 0, theta, 0, 1);
    const angle = Math.hypot(...theta);
    const dq = [Math.cos(angle / 2), ...theta.map((t) => (t / angle) * Math.sin(angle / 2))];
    const expected = [0, 0, 0, 0];
    quatMul(expected, 0, dq, 0, q0, 0);
    for (let i = 0; i < 4; i++) expect(q1[i]).toBeCloseTo(expected[i], 14);
    const d = [0, 0, 0];
    quatDifference(d, 0, q1, 0, q0, 0);
    for (let i = 0; i < 3; i++) expect(d[i]).toBeCloseTo(theta[i], 12);
  });
  it("quatToMat3Normalized is Rodrigues' rotation of q/|q|, for unit and scaled quaternions", () => {
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
      quatToMat3Normalized(R, 0, Float64Array.of(c, s * k[0], s * k[1], s * k[2]), 0);
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

  it("quatToMat3 of a unit quaternion is 1 − 2(y² + z²), 2(xy − wz), … to the bit (the written-out form)", () => {
    // the scaled form x·(y s) with s = 2 doubles each product and sum exactly, so it is
    // the textbook form bit for bit (the dynamics' rotations did not change with it)
    const r = mulberry32(7);
    const R = new Float64Array(9);
    for (let trial = 0; trial < 1000; trial++) {
      const q = [r() - 0.5, r() - 0.5, r() - 0.5, r() - 0.5];
      const n = Math.hypot(...q);
      const [w, x, y, z] = q.map((v) => v / n);
      quatToMat3(R, 0, Float64Array.of(w, x, y, z), 0);
      const want = [
        1 - 2 * (y * y + z * z),
        2 * (x * y - w * z),
        2 * (x * z + w * y),
        2 * (x * y + w * z),
        1 - 2 * (x * x + z * z),
        2 * (y * z - w * x),
        2 * (x * z - w * y),
        2 * (y * z + w * x),
        1 - 2 * (x * x + y * y),
      ];
      for (let i = 0; i < 9; i++) expect(Object.is(R[i], want[i])).toBe(true);
    }
    // the zero quaternion normalized: the identity (s = 0)
    quatToMat3Normalized(R, 0, new Float64Array(4), 0);
    expect(Array.from(R)).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1]);
  });
});
