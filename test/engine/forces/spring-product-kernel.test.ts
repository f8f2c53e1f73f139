/**
 * The springs' matrix-free product (src/engine/forces/spring-product-kernel.ts) against the
 * product written out here spring by spring: δ = x_b − x_a (a still end, offset −1,
 * contributes nothing), y = C δ with C = û gᵀ + p I in its rank-one form [û, g, p], then
 * out_b += y and out_a −= y; over runs whose ends all move and runs with still ends.
 */
import { describe, expect, it } from "vitest";
import { springProductKernel } from "../../../src/engine/forces/spring-product-kernel";

function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647 - 0.5;
  };
}

describe("springProductKernel", () => {
  it("y = C (x_b − x_a) added to b and taken from a, with still ends skipped", () => {
    const rand = random(7);
    const nodes = 6;
    const n = 3 * nodes;
    // springs 0–3 join moving nodes (one run), 4–6 have a still end (a second run), 7–8
    // move again (a third)
    const ends: [number, number][] = [
      [0, 1],
      [1, 2],
      [2, 5],
      [3, 4],
      [-1, 0],
      [4, -1],
      [-1, 5],
      [5, 3],
      [2, 0],
    ];
    const dofA = Int32Array.from(ends, ([a]) => (a < 0 ? -1 : 3 * a));
    const dofB = Int32Array.from(ends, ([, b]) => (b < 0 ? -1 : 3 * b));
    const runStart = Int32Array.from([0, 4, 7, 9]);
    const runMoving = Uint8Array.from([1, 0, 1]);
    const C = Float64Array.from({ length: 7 * ends.length }, rand);
    const x = Float64Array.from({ length: n }, rand);
    const out = Float64Array.from({ length: n }, rand);
    const expected = Float64Array.from(out);
    ends.forEach(([a, b], i) => {
      const d = [0, 1, 2].map((k) => (b >= 0 ? x[3 * b + k] : 0) - (a >= 0 ? x[3 * a + k] : 0));
      const c = C.subarray(7 * i, 7 * i + 7);
      const gd = c[3] * d[0] + c[4] * d[1] + c[5] * d[2];
      for (let k = 0; k < 3; k++) {
        const y = c[k] * gd + c[6] * d[k];
        if (b >= 0) expected[3 * b + k] += y;
        if (a >= 0) expected[3 * a + k] -= y;
      }
    });
    springProductKernel(dofA, dofB, runStart, runMoving, C)(x, out);
    for (let i = 0; i < n; i++) expect(out[i]).toBeCloseTo(expected[i], 14);
  });

  it("reads C as it is at each call (the set fills it in place)", () => {
    const dofA = Int32Array.from([0]);
    const dofB = Int32Array.from([3]);
    const C = new Float64Array(7);
    const product = springProductKernel(
      dofA,
      dofB,
      Int32Array.from([0, 1]),
      Uint8Array.from([1]),
      C,
    );
    const x = Float64Array.from([0, 0, 0, 1, 2, 3]);
    const out = new Float64Array(6);
    product(x, out);
    expect(Array.from(out)).toEqual([0, 0, 0, 0, 0, 0]);
    C[6] = 2; // p = 2: y = 2 δ
    product(x, out);
    expect(Array.from(out)).toEqual([-2, -4, -6, 2, 4, 6]);
  });
});
