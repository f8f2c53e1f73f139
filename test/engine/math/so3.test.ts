import { describe, expect, it } from "vitest";
import { expInverseBeta, expInverseBetaSlope } from "../../../src/engine/math/so3";

/** 3 × 3 row-major 1 + a [φ]× + b [φ]×² ([φ]×² = φ φᵀ − |φ|² 1). */
function series(phi: number[], a: number, b: number): number[] {
  const [x, y, z] = phi;
  const t2 = x * x + y * y + z * z;
  const m = [x * x, x * y, x * z, y * x, y * y, y * z, z * x, z * y, z * z].map((v) => b * v);
  for (let i = 0; i < 3; i++) m[4 * i] += 1 - b * t2;
  m[1] -= a * z;
  m[2] += a * y;
  m[3] += a * z;
  m[5] -= a * x;
  m[6] -= a * y;
  m[7] += a * x;
  return m;
}

describe("SO(3) exponential map's inverse Jacobian coefficients", () => {
  const axis = [0.48, -0.6, 0.64];
  const angles = [1e-6, 1e-3, 0.0099, 0.0101, 0.05, 0.0999, 0.1001, 0.5, 2, 3, 5, 6];

  it("β makes 1 − ½ [φ]× + β [φ]×² the inverse of the left Jacobian, across the series' switch", () => {
    for (const t of angles) {
      const phi = axis.map((v) => t * v);
      // J_l = 1 + (1 − cos t)/t² [φ]× + (t − sin t)/t³ [φ]×² (its own series below 1e-3)
      const a = t < 1e-3 ? 0.5 - (t * t) / 24 : (1 - Math.cos(t)) / (t * t);
      const b = t < 1e-3 ? 1 / 6 - (t * t) / 120 : (t - Math.sin(t)) / (t * t * t);
      const jl = series(phi, a, b);
      const inv = series(phi, -0.5, expInverseBeta(t * t));
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          let p = 0;
          for (let k = 0; k < 3; k++) p += jl[3 * i + k] * inv[3 * k + j];
          // the inverse's entries grow as 1/sin(t/2) toward 2π
          expect(Math.abs(p - (i === j ? 1 : 0))).toBeLessThan(1e-13 / Math.sin(0.5 * t) ** 2);
        }
    }
  });

  it("β′/θ is the derivative of β over θ (central differences of its closed form)", () => {
    const closed = (t: number) => 1 / (t * t) - Math.cos(0.5 * t) / (2 * t * Math.sin(0.5 * t));
    for (const t of angles.filter((v) => v >= 0.5)) {
      const e = 1e-5 * t;
      const fd = (closed(t + e) - closed(t - e)) / (2 * e) / t;
      expect(Math.abs(expInverseBetaSlope(t * t) - fd)).toBeLessThan(1e-6 * fd);
    }
    // the series (θ < 0.1) and the closed form meet: the slope changes by ≈ 2θ δθ/7560
    const below = expInverseBetaSlope(0.0999 ** 2);
    const above = expInverseBetaSlope(0.1001 ** 2);
    expect(Math.abs(above - below - (2 * 0.1 * 2e-4) / 7560)).toBeLessThan(1e-10);
    expect(Math.abs(expInverseBeta(0.1001 ** 2) - expInverseBeta(0.0999 ** 2))).toBeLessThan(1e-7);
    // θ → 0: 1/360
    expect(expInverseBetaSlope(0)).toBe(1 / 360);
    expect(expInverseBeta(0)).toBe(1 / 12);
  });
});
