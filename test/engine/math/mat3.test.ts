/**
 * 3×3 matrix kernels (src/engine/math/mat3.ts) against ml-matrix on random matrices at
 * offsets inside larger arrays (the engine stores one matrix per body in one array):
 * products, the congruence R D Rᵀ, the skew matrix's action a × x, the inverse and its
 * singularity tests.
 */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  mat3Congruence,
  mat3Invert,
  mat3InvertChecked,
  mat3Mul,
  mat3MulVec,
  mat3Skew,
} from "../../../src/engine/math/mat3";
import { mulberry32 } from "../../support/random";

const rng = mulberry32(2026);
const rand = (n: number) => Float64Array.from({ length: n }, () => 2 * rng() - 1);
const toMatrix = (a: Float64Array, o = 0) =>
  new Matrix([0, 1, 2].map((i) => [0, 1, 2].map((j) => a[o + 3 * i + j])));
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let e = 0;
  for (let k = 0; k < a.length; k++) e = Math.max(e, Math.abs(a[k] - b[k]));
  return e;
};

describe("mat3", () => {
  it("A x and A B at offsets equal ml-matrix's products", () => {
    for (let n = 0; n < 100; n++) {
      const a = rand(14); // the matrix at offset 5
      const b = rand(12); // at offset 3
      const x = rand(7); // the vector at offset 4
      const out = new Float64Array(12).fill(Number.NaN);
      mat3MulVec(out, 2, a, 5, x, 4);
      const ax = toMatrix(a, 5).mmul(Matrix.columnVector([x[4], x[5], x[6]]));
      expect(maxDiff(out.subarray(2, 5), ax.to1DArray())).toBeLessThan(1e-15);
      mat3Mul(out, 1, a, 5, b, 3);
      expect(
        maxDiff(out.subarray(1, 10), toMatrix(a, 5).mmul(toMatrix(b, 3)).to1DArray()),
      ).toBeLessThan(1e-15);
    }
  });

  it("R D Rᵀ equals ml-matrix's product and is symmetric to rounding for symmetric D", () => {
    for (let n = 0; n < 100; n++) {
      const r = rand(9);
      const d0 = rand(9);
      const d = Float64Array.from(
        { length: 9 },
        (_, k) => d0[k] + d0[3 * (k % 3) + Math.floor(k / 3)],
      );
      const out = new Float64Array(11);
      mat3Congruence(out, 2, r, 0, d, 0);
      const want = toMatrix(r).mmul(toMatrix(d)).mmul(toMatrix(r).transpose());
      expect(maxDiff(out.subarray(2), want.to1DArray())).toBeLessThan(1e-14);
      expect(Math.abs(out[3] - out[5])).toBeLessThan(1e-15 * (1 + Math.abs(out[3])));
    }
  });

  it("[a]× x = a × x", () => {
    for (let n = 0; n < 100; n++) {
      const a = rand(3);
      const x = rand(3);
      const s = new Float64Array(9);
      mat3Skew(s, 0, a, 0);
      const sx = new Float64Array(3);
      mat3MulVec(sx, 0, s, 0, x, 0);
      const cross = [
        a[1] * x[2] - a[2] * x[1],
        a[2] * x[0] - a[0] * x[2],
        a[0] * x[1] - a[1] * x[0],
      ];
      expect(maxDiff(sx, cross)).toBeLessThan(1e-15);
    }
  });

  it("A⁻¹ equals ml-matrix's inverse; singular matrices are refused, nearly singular ones by the checked form", () => {
    for (let n = 0; n < 100; n++) {
      const a = rand(9);
      const out = new Float64Array(9);
      expect(mat3Invert(out, 0, a, 0)).toBe(true);
      const want = inverse(toMatrix(a)).to1DArray();
      const scale = Math.max(...want.map(Math.abs));
      expect(maxDiff(out, want)).toBeLessThan(1e-12 * scale);
    }
    const out = new Float64Array(9);
    // rank 2: the third row is the sum of the first two (det exactly 0 in binary for these)
    const singular = Float64Array.of(1, 2, 3, 4, 5, 6, 5, 7, 9);
    expect(mat3Invert(out, 0, singular, 0)).toBe(false);
    // det = 1e-14 against ‖A‖³ = 1: invertible in exact arithmetic, singular to 1e-12
    const nearly = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1e-14);
    expect(mat3Invert(out, 0, nearly, 0)).toBe(true);
    expect(out[8]).toBeCloseTo(1e14, -2);
    expect(mat3InvertChecked(out, 0, nearly, 0)).toBe(false);
    expect(mat3InvertChecked(out, 0, Float64Array.of(2, 0, 0, 0, 3, 0, 0, 0, 4), 0)).toBe(true);
    expect(maxDiff(out, [0.5, 0, 0, 0, 1 / 3, 0, 0, 0, 0.25])).toBe(0);
  });
});
