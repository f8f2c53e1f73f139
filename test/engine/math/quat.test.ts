import { describe, expect, it } from "vitest";
import {
  quatDifference,
  quatMul,
  quatRotate,
  quatRotateByVector,
  quatRotateInverse,
  quatToMat3,
} from "../../../src/engine/math/quat";

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
    quatToMat3(R, 0, q, 0);
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
});
