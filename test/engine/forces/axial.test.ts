/**
 * The axial spring-damper law (src/engine/forces/axial.ts) as functions of d and ḋ:
 * f_b = −(k (l − l0) + c l̇) û against the closed form, A = ∂f_b/∂d and B = ∂f_b/∂ḋ
 * against central differences of f_b, the symmetric approximation A⁺ = −k ûûᵀ − (s⁺/l) P
 * written out (with −A⁺ ⪰ 0), the linear law of zero rest length, the undefined
 * direction (zero, never NaN), and the vectorized axialForces: gathering through
 * AxialEnds (still ends, offsets), the accumulated force, and the rank-one combination
 * û gᵀ + p I = s_x A + s_v B of an AxialProduct.
 */
import { describe, expect, it } from "vitest";
import {
  AXIAL_COMBINATION,
  AXIAL_FACTORS,
  AXIAL_LENGTH,
  AXIAL_RATE,
  AXIAL_TENSION,
  AxialEnds,
  AxialProduct,
  axialBlocks,
  axialForces,
  axialSpring,
} from "../../../src/engine/forces/axial";
import { mulberry32 } from "../../support/random";

const K = 40;
const C = 1.5;

/** f_b of the law written out: −(k (l − l0) + c l̇) û, or −k d − c ḋ for l0 = 0. */
function lawForce(d: number[], dd: number[], l0: number): number[] {
  const l = Math.hypot(d[0], d[1], d[2]);
  if (l0 === 0) return d.map((x, i) => -K * x - C * dd[i]);
  const u = d.map((x) => x / l);
  const ldot = u[0] * dd[0] + u[1] * dd[1] + u[2] * dd[2];
  return u.map((x) => -(K * (l - l0) + C * ldot) * x);
}

/** A and B (row-major 3×3 each) by central differences of lawForce. */
function jacobiansByDifferences(d: number[], dd: number[], l0: number) {
  const h = 1e-6;
  const A = new Array<number>(9);
  const B = new Array<number>(9);
  for (let j = 0; j < 3; j++) {
    const dp = d.slice();
    const dm = d.slice();
    dp[j] += h;
    dm[j] -= h;
    const vp = dd.slice();
    const vm = dd.slice();
    vp[j] += h;
    vm[j] -= h;
    const fa = lawForce(dp, dd, l0);
    const fb = lawForce(dm, dd, l0);
    const ga = lawForce(d, vp, l0);
    const gb = lawForce(d, vm, l0);
    for (let i = 0; i < 3; i++) {
      A[3 * i + j] = (fa[i] - fb[i]) / (2 * h);
      B[3 * i + j] = (ga[i] - gb[i]) / (2 * h);
    }
  }
  return { A, B };
}

function run(d: number[], dd: number[], l0: number, symmetric = false) {
  const f = new Float64Array(3);
  const scalars = new Float64Array(3);
  const jac = new Float64Array(18);
  axialSpring(Float64Array.from(d), Float64Array.from(dd), K, C, l0, f, scalars, jac, symmetric);
  return { f, scalars, A: jac.subarray(0, 9), B: jac.subarray(9, 18) };
}

const randomVector = (rng: () => number) => [0, 1, 2].map(() => 2 * rng() - 1);

describe("axialSpring", () => {
  it("the force, its scalars and the exact A, B against the closed form and finite differences", () => {
    const rng = mulberry32(4);
    for (const l0 of [0.8, 0]) {
      for (let c = 0; c < 5; c++) {
        const d = randomVector(rng);
        const dd = randomVector(rng);
        const { f, scalars, A, B } = run(d, dd, l0);
        const expected = lawForce(d, dd, l0);
        for (let i = 0; i < 3; i++) expect(f[i]).toBeCloseTo(expected[i], 13);
        const l = Math.hypot(d[0], d[1], d[2]);
        const ldot = (d[0] * dd[0] + d[1] * dd[1] + d[2] * dd[2]) / l;
        expect(scalars[AXIAL_LENGTH]).toBeCloseTo(l, 14);
        expect(scalars[AXIAL_RATE]).toBeCloseTo(ldot, 13);
        // tension s = k (l − l0) + c l̇; for l0 = 0 the law reports k l
        expect(scalars[AXIAL_TENSION]).toBeCloseTo(l0 === 0 ? K * l : K * (l - l0) + C * ldot, 12);
        const fd = jacobiansByDifferences(d, dd, l0);
        for (let k = 0; k < 9; k++) {
          expect(Math.abs(A[k] - fd.A[k])).toBeLessThan(1e-6 * K);
          expect(Math.abs(B[k] - fd.B[k])).toBeLessThan(1e-7 * K);
        }
      }
    }
  });

  it("symmetric: A⁺ = −k ûûᵀ − (max(s, 0)/l)(I − ûûᵀ), B unchanged, the same force; −A⁺ ⪰ 0", () => {
    const rng = mulberry32(8);
    let compressed = 0;
    for (let c = 0; c < 10; c++) {
      const d = randomVector(rng);
      const dd = randomVector(rng);
      const exact = run(d, dd, 1);
      const sym = run(d, dd, 1, true);
      const l = Math.hypot(d[0], d[1], d[2]);
      const u = d.map((x) => x / l);
      const s = exact.scalars[AXIAL_TENSION];
      if (s < 0) compressed++;
      const sp = Math.max(s, 0) / l;
      for (let i = 0; i < 3; i++) {
        expect(sym.f[i]).toBe(exact.f[i]);
        for (let j = 0; j < 3; j++) {
          const P = (i === j ? 1 : 0) - u[i] * u[j];
          expect(sym.A[3 * i + j]).toBeCloseTo(-K * u[i] * u[j] - sp * P, 12);
          expect(sym.A[3 * i + j]).toBeCloseTo(sym.A[3 * j + i], 14);
          expect(sym.B[3 * i + j]).toBe(exact.B[3 * i + j]);
        }
      }
      // −A⁺ has eigenvalues k (along û) and s⁺/l ≥ 0: xᵀ(−A⁺)x ≥ 0
      for (let t = 0; t < 5; t++) {
        const x = randomVector(rng);
        let q = 0;
        for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) q -= x[i] * sym.A[3 * i + j] * x[j];
        expect(q).toBeGreaterThanOrEqual(-1e-12);
      }
    }
    expect(compressed).toBeGreaterThan(0); // both signs of s were seen
  });

  it("an undefined direction (l ≤ 1e-12 l0): zero force, scalars and Jacobians", () => {
    const { f, scalars, A, B } = run([1e-14, 0, 0], [1, 2, 3], 0.5);
    for (const v of [...f, ...A, ...B]) expect(v).toBe(0);
    expect([scalars[AXIAL_RATE], scalars[AXIAL_TENSION]]).toEqual([0, 0]);
    // with zero rest length the same d is fine: f = −k d − c ḋ, A = −k I, B = −c I
    const lin = run([0, 0, 0], [1, 2, 3], 0);
    expect(Array.from(lin.f)).toEqual([-C, -2 * C, -3 * C]);
    expect(Array.from(lin.A)).toEqual([-K, 0, 0, 0, -K, 0, 0, 0, -K]);
    expect(Array.from(lin.B)).toEqual([-C, 0, 0, 0, -C, 0, 0, 0, -C]);
    expect(lin.scalars[AXIAL_RATE]).toBe(0);
  });
});

describe("axialForces (vectorized)", () => {
  it("gathers d, ḋ through AxialEnds, accumulates ±f_b, and forms s_x A + s_v B in rank-one form", () => {
    const rng = mulberry32(15);
    // 3 points (9 coordinates); springs 0–1, still–2 (ia = −1), 1–still (ib = −1)
    const x = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);
    const v = Float64Array.from({ length: 9 }, () => 2 * rng() - 1);
    const ia = Int32Array.of(0, -1, 3);
    const ib = Int32Array.of(3, 6, -1);
    const pa = Float64Array.of(0.1, 0, 0, 0.5, 0.5, 0.5, 0, 0, 0);
    const pb = Float64Array.of(0, 0.2, 0, 0, 0, 0, 1, 0, -1);
    const k = Float64Array.of(K, 2 * K, 0.5 * K);
    const c = Float64Array.of(C, 0, 2 * C);
    const l0 = Float64Array.of(0.7, 0, 1.2);
    const f = new Float64Array(9);
    const scalars = new Float64Array(9);
    const factors = new Float64Array(3 * AXIAL_FACTORS);
    const force = new Float64Array(9).fill(1); // added to, not set
    const product = new AxialProduct(new Float64Array(3 * AXIAL_COMBINATION));
    product.sx = -0.3;
    product.sv = 0.2;
    const ends = new AxialEnds(x, v, ia, ib, pa, pb);
    axialForces(3, ends, k, c, l0, f, scalars, factors, false, force, product);
    const expectedForce = new Array<number>(9).fill(1);
    const blocks = new Float64Array(18);
    for (let s = 0; s < 3; s++) {
      const end = (i: number, p: Float64Array) =>
        [0, 1, 2].map((q) => (i >= 0 ? x[i + q] : 0) + p[3 * s + q]);
      const xb = end(ib[s], pb);
      const xa = end(ia[s], pa);
      const d = [0, 1, 2].map((q) => xb[q] - xa[q]);
      const dd = [0, 1, 2].map(
        (q) => (ib[s] >= 0 ? v[ib[s] + q] : 0) - (ia[s] >= 0 ? v[ia[s] + q] : 0),
      );
      // the single-spring law with this spring's parameters, written out
      const l = Math.hypot(d[0], d[1], d[2]);
      const u = d.map((q) => q / l);
      const ldot = u[0] * dd[0] + u[1] * dd[1] + u[2] * dd[2];
      const fb =
        l0[s] === 0
          ? d.map((q, i) => -k[s] * q - c[s] * dd[i])
          : u.map((q) => -(k[s] * (l - l0[s]) + c[s] * ldot) * q);
      for (let q = 0; q < 3; q++) {
        expect(f[3 * s + q]).toBeCloseTo(fb[q], 13);
        if (ib[s] >= 0) expectedForce[ib[s] + q] += fb[q];
        if (ia[s] >= 0) expectedForce[ia[s] + q] -= fb[q];
      }
      expect(scalars[3 * s + AXIAL_LENGTH]).toBeCloseTo(l, 14);
      // the rank-one form against the blocks expanded from the factors
      axialBlocks(factors, AXIAL_FACTORS * s, blocks, 0);
      const o = AXIAL_COMBINATION * s;
      const uu = product.out.subarray(o, o + 3);
      const g = product.out.subarray(o + 3, o + 6);
      const p = product.out[o + 6];
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++)
          expect(uu[i] * g[j] + (i === j ? p : 0)).toBeCloseTo(
            product.sx * blocks[3 * i + j] + product.sv * blocks[9 + 3 * i + j],
            12,
          );
    }
    for (let q = 0; q < 9; q++) expect(force[q]).toBeCloseTo(expectedForce[q], 13);
    // with f, factors and force null only the scalars are written
    const scalarsOnly = new Float64Array(9);
    axialForces(3, ends, k, c, l0, null, scalarsOnly, null, false);
    expect(Array.from(scalarsOnly)).toEqual(Array.from(scalars));
  });
});
