/**
 * The 3×3 polar decomposition of the corotational material (src/engine/forces/fem/polar.ts)
 * against an independent one: ml-matrix's SVD F = U Σ Vᵀ gives the nearest rotation
 * R* = U diag(1, 1, det(U Vᵀ)) Vᵀ. Random, nearly isotropic, inverted, flattened and
 * collapsed F; R must be a rotation, S = RᵀF symmetric, and R = R* wherever R* is unique.
 * nearestRotation (Newton's iteration, det F > 0 only) against the same R*.
 */
import { Matrix, SingularValueDecomposition } from "ml-matrix";
import { describe, expect, it } from "vitest";
import {
  nearestRotation as newtonRotation,
  polarDecomposition,
  symmetricEigen3,
} from "../../../../src/engine/forces/fem/polar";
import { gaussian, mulberry32 } from "../../../support/random";
import { randomRotation } from "./helpers";

const mul = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Float64Array.from({ length: 9 }, (_, k) => {
    const i = Math.floor(k / 3);
    const j = k % 3;
    return a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
  });
const transpose = (a: ArrayLike<number>) =>
  Float64Array.from({ length: 9 }, (_, k) => a[3 * (k % 3) + Math.floor(k / 3)]);
const det = (a: ArrayLike<number>) =>
  a[0] * (a[4] * a[8] - a[5] * a[7]) -
  a[1] * (a[3] * a[8] - a[5] * a[6]) +
  a[2] * (a[3] * a[7] - a[4] * a[6]);
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let e = 0;
  for (let k = 0; k < 9; k++) e = Math.max(e, Math.abs(a[k] - b[k]));
  return e;
};
/** F = Q₁ diag(s) Q₂ with random rotations Q₁, Q₂. */
const withSingularValues = (rng: () => number, s: number[]) =>
  mul(
    mul(randomRotation(rng), Float64Array.of(s[0], 0, 0, 0, s[1], 0, 0, 0, s[2])),
    randomRotation(rng),
  );

/** The nearest rotation by ml-matrix's SVD (independent of polar.ts). */
function nearestRotation(f: Float64Array): Float64Array {
  const m = new Matrix([
    Array.from(f.subarray(0, 3)),
    Array.from(f.subarray(3, 6)),
    Array.from(f.subarray(6, 9)),
  ]);
  const svd = new SingularValueDecomposition(m);
  const u = svd.leftSingularVectors;
  const v = svd.rightSingularVectors;
  const uv = u.mmul(v.transpose());
  const d = Matrix.diag([1, 1, Math.sign(det(uv.to1DArray()))]);
  return Float64Array.from(u.mmul(d).mmul(v.transpose()).to1DArray());
}

function decompose(f: Float64Array) {
  const r = new Float64Array(9);
  const sigma = new Float64Array(3);
  const v = new Float64Array(9);
  polarDecomposition(f, r, sigma, v);
  return { r, sigma, v, s: mul(transpose(r), f) };
}

function expectRotation(r: Float64Array) {
  const rtr = mul(transpose(r), r);
  expect(maxDiff(rtr, Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1))).toBeLessThan(1e-14);
  expect(det(r)).toBeCloseTo(1, 14);
}

function expectSymmetric(s: Float64Array, scale: number) {
  expect(maxDiff(s, transpose(s))).toBeLessThan(1e-14 * scale);
}

describe("polar decomposition F = R S", () => {
  it("random F (either sign of det F): R is the SVD's nearest rotation, S = RᵀF symmetric", () => {
    const rng = mulberry32(3);
    let worst = 0;
    let inverted = 0;
    for (let n = 0; n < 500; n++) {
      const f = Float64Array.from({ length: 9 }, () => gaussian(rng));
      const { r, s, sigma } = decompose(f);
      expectRotation(r);
      expectSymmetric(s, 10);
      worst = Math.max(worst, maxDiff(r, nearestRotation(f)));
      // σ̂₃ carries det F's sign; the rest are the singular values, descending
      expect(Math.sign(sigma[2])).toBe(Math.sign(det(f)));
      expect(sigma[0]).toBeGreaterThanOrEqual(sigma[1]);
      expect(sigma[1]).toBeGreaterThanOrEqual(Math.abs(sigma[2]));
      if (det(f) < 0) inverted++;
    }
    expect(inverted).toBeGreaterThan(100);
    expect(worst).toBeLessThan(1e-12);
  });

  it("nearly isotropic F = Q (I + 1e-6 G), a rotation, a tiny strain: R and S − I accurate", () => {
    const rng = mulberry32(5);
    for (let n = 0; n < 100; n++) {
      const q = Float64Array.from(randomRotation(rng));
      const g = Float64Array.from(
        { length: 9 },
        (_, k) => (k % 4 === 0 ? 1 : 0) + 1e-6 * gaussian(rng),
      );
      const f = mul(q, g);
      const { r, s } = decompose(f);
      expectRotation(r);
      // independent: R ≈ Q skew-corrected; compare with the SVD's
      expect(maxDiff(r, nearestRotation(f))).toBeLessThan(1e-13);
      // S − I = sym(G − I) to first order
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          const e = 0.5 * (g[3 * i + j] + g[3 * j + i]) - (i === j ? 1 : 0);
          expect(Math.abs(s[3 * i + j] - (i === j ? 1 : 0) - e)).toBeLessThan(1e-11);
        }
      // a pure rotation: R = Q exactly to rounding, S = I
      const pure = decompose(q);
      expect(maxDiff(pure.r, q)).toBeLessThan(4e-15);
      expect(maxDiff(pure.s, Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1))).toBeLessThan(4e-15);
    }
  });

  it("repeated singular values, an inverted element, a flattened and a collapsed one", () => {
    const rng = mulberry32(9);
    const cases: number[][] = [
      [2, 2, 2],
      [3, 1, 1],
      [2, 2, -0.5], // inverted
      [1.5, 0.7, -0.7], // inverted, σ₂ + σ̂₃ = 0
      [1, 0.5, 0], // flattened
      [1, 0, 0], // collapsed to a line
    ];
    for (const sv of cases)
      for (let n = 0; n < 20; n++) {
        const f = withSingularValues(rng, [Math.abs(sv[0]), Math.abs(sv[1]), Math.abs(sv[2])]);
        if (sv[2] < 0) for (let k = 0; k < 9; k += 3) f[k] = -f[k]; // reflect: det F < 0
        const { r, s, sigma } = decompose(f);
        expectRotation(r);
        expectSymmetric(s, 10);
        // tr(RᵀF) = σ₁ + σ₂ + σ̂₃ is the largest over rotations
        const tr = s[0] + s[4] + s[8];
        expect(tr).toBeCloseTo(sigma[0] + sigma[1] + sigma[2], 12);
        const best = nearestRotation(f);
        const trBest = mul(transpose(best), f);
        expect(tr).toBeGreaterThanOrEqual(trBest[0] + trBest[4] + trBest[8] - 1e-12);
        expect(Math.abs(sigma[2])).toBeCloseTo(Math.abs(sv[2]), 12);
      }
    // F = 0: any rotation, S = 0
    const { r, s } = decompose(new Float64Array(9));
    expectRotation(r);
    expect(maxDiff(s, new Float64Array(9))).toBe(0);
  });

  it("symmetricEigen3: A = V diag(w) Vᵀ, V a rotation, w descending", () => {
    const rng = mulberry32(11);
    for (let n = 0; n < 200; n++) {
      const b = Float64Array.from({ length: 9 }, () => gaussian(rng));
      const a = Float64Array.from(
        { length: 9 },
        (_, k) => b[k] + b[3 * (k % 3) + Math.floor(k / 3)],
      );
      const w = new Float64Array(3);
      const v = new Float64Array(9);
      symmetricEigen3(a, 0, w, 0, v, 0);
      expectRotation(v);
      expect(w[0]).toBeGreaterThanOrEqual(w[1]);
      expect(w[1]).toBeGreaterThanOrEqual(w[2]);
      const back = mul(mul(v, Float64Array.of(w[0], 0, 0, 0, w[1], 0, 0, 0, w[2])), transpose(v));
      expect(maxDiff(back, a)).toBeLessThan(1e-13);
    }
  });
});

describe("nearestRotation (Newton's iteration for the polar factor)", () => {
  it("is the SVD's nearest rotation for det F > 0, from tiny strains to σ₁/σ₃ = 1e4, and refuses det F ≤ 0", () => {
    const rng = mulberry32(11);
    const r = new Float64Array(9);
    let worst = 0;
    const spectra = [
      [1 + 1e-9, 1, 1 - 1e-9],
      [1.001, 0.999, 1],
      [1.5, 0.7, 1.1],
      [3, 1, 0.2],
      [10, 1, 1e-3],
    ];
    for (const sv of spectra)
      for (let n = 0; n < 200; n++) {
        const f = withSingularValues(rng, sv);
        expect(newtonRotation(f, r)).toBe(true);
        expectRotation(r);
        worst = Math.max(worst, maxDiff(r, nearestRotation(f)));
      }
    expect(worst).toBeLessThan(1e-12);
    // det F < 0 (inverted) and det F = 0 (flattened): refused, r untouched
    r.fill(7);
    expect(newtonRotation(withSingularValues(rng, [1, 1, -0.5]), r)).toBe(false);
    expect(newtonRotation(Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 0), r)).toBe(false);
    expect(r.every((x) => x === 7)).toBe(true);
  });
});
