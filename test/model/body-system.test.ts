/** World inertias R I Rᵀ and their inverses after updateDerived, isotropic bodies included. */
import { describe, expect, it } from "vitest";
import { addPositionIncrement, createBodySystem } from "../../src/model/body-system";

describe("body system world inertias", () => {
  it("R I Rᵀ for an anisotropic body, c·I for an isotropic one, at every orientation", () => {
    const c = Math.SQRT1_2;
    const sys = createBodySystem([
      {
        id: "box",
        kind: "rigid",
        fixed: false,
        mass: 1,
        inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3],
        position: [0, 0, 0],
        orientation: [c, 0, 0, c], // 90° about z: Ixx and Iyy swap
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, 0],
      },
      {
        id: "ball",
        kind: "rigid",
        fixed: false,
        mass: 1,
        inertia: [0.4, 0, 0, 0, 0.4, 0, 0, 0, 0.4],
        position: [1, 0, 0],
        orientation: [c, c, 0, 0],
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, 0],
      },
    ]);
    expect(Array.from(sys.isotropic)).toEqual([0, 1]);
    const box = Array.from(sys.inertiaWorld.subarray(0, 9));
    [2, 0, 0, 0, 1, 0, 0, 0, 3].forEach((v, k) => {
      expect(box[k]).toBeCloseTo(v, 14);
    });
    const boxInv = Array.from(sys.inertiaWorldInv.subarray(0, 9));
    [0.5, 0, 0, 0, 1, 0, 0, 0, 1 / 3].forEach((v, k) => {
      expect(boxInv[k]).toBeCloseTo(v, 14);
    });
    // turn both by a rotation vector (0.3, −0.2, 0.7) rad: the ball's stays 0.4 I
    const du = Float64Array.from([0, 0, 0, 0.3, -0.2, 0.7, 0, 0, 0, 0.3, -0.2, 0.7]);
    addPositionIncrement(sys, du, 1);
    const R = sys.rotation;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        let rir = 0;
        for (let k = 0; k < 3; k++) rir += R[3 * i + k] * [1, 2, 3][k] * R[3 * j + k];
        expect(sys.inertiaWorld[3 * i + j]).toBeCloseTo(rir, 13);
        expect(sys.inertiaWorld[9 + 3 * i + j]).toBe(i === j ? 0.4 : 0);
        expect(sys.inertiaWorldInv[9 + 3 * i + j]).toBe(i === j ? 1 / 0.4 : 0);
      }
  });
});
