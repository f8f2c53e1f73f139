/** Small dense inverses against ml-matrix, the decoupled rigid-body block included. */
import { inverse, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { invertDecoupled6, invertSmall, mat6MulVec } from "../../../src/engine/math/small-dense";

/** A row-major 6×6 with the given 3×3 diagonal blocks and coupling blocks. */
function block6(vv: number[], ww: number[], coupling = 0): Float64Array {
  const a = new Float64Array(36);
  for (let r = 0; r < 3; r++)
    for (let c = 0; c < 3; c++) {
      a[6 * r + c] = vv[3 * r + c];
      a[6 * (r + 3) + 3 + c] = ww[3 * r + c];
      a[6 * r + 3 + c] = coupling * (r + 1);
      a[6 * (r + 3) + c] = coupling * (c + 1);
    }
  return a;
}

function expectInverse(out: Float64Array, a: Float64Array): void {
  const ref = inverse(
    new Matrix(Array.from({ length: 6 }, (_, r) => Array.from(a.subarray(6 * r, 6 * r + 6)))),
  );
  for (let r = 0; r < 6; r++)
    for (let c = 0; c < 6; c++) expect(out[6 * r + c]).toBeCloseTo(ref.get(r, c), 12);
}

describe("small dense inverses", () => {
  // a mass block and a nonsymmetric rotational block (inertia plus a gyroscopic term)
  const vv = [2, 0, 0, 0, 2, 0, 0, 0, 2];
  const ww = [0.3, 0.05, -0.02, -0.04, 0.5, 0.01, 0.03, -0.01, 0.7];

  it("inverts a block without translation–rotation coupling as two 3×3 blocks", () => {
    const a = block6(vv, ww);
    const out = new Float64Array(36);
    expect(invertDecoupled6(out, 0, a, 0)).toBe(true);
    expectInverse(out, a);
  });

  it("declines a coupled or singular block, which invertSmall then inverts or rejects", () => {
    const out = new Float64Array(36);
    const coupled = block6(vv, ww, 0.01);
    expect(invertDecoupled6(out, 0, coupled, 0)).toBe(false);
    expect(invertSmall(out, 0, coupled, 0, 6, new Float64Array(36))).toBe(true);
    expectInverse(out, coupled);
    const singular = block6(vv, [1, 2, 3, 2, 4, 6, 0, 0, 1]);
    expect(invertDecoupled6(out, 0, singular, 0)).toBe(false);
    expect(invertSmall(out, 0, singular, 0, 6, new Float64Array(36))).toBe(false);
  });
});

describe("mat6MulVec", () => {
  it("is the 6×6 matrix–vector product at offsets", () => {
    const a = Float64Array.from({ length: 40 }, (_, k) => Math.sin(k + 1));
    const x = Float64Array.from({ length: 9 }, (_, k) => Math.cos(k));
    const out = new Float64Array(8);
    mat6MulVec(out, 1, a, 4, x, 2);
    for (let r = 0; r < 6; r++) {
      let ref = 0;
      for (let c = 0; c < 6; c++) ref += a[4 + 6 * r + c] * x[2 + c];
      expect(out[1 + r]).toBeCloseTo(ref, 14);
    }
  });

  it("decoupled: the same product when the translation–rotation blocks are zero", () => {
    const a = Float64Array.from({ length: 40 }, (_, k) => Math.sin(k + 1));
    for (let r = 0; r < 6; r++)
      for (let c = 0; c < 6; c++) if (r < 3 !== c < 3) a[4 + 6 * r + c] = 0;
    const x = Float64Array.from({ length: 9 }, (_, k) => Math.cos(k));
    const full = new Float64Array(8);
    const half = new Float64Array(8);
    mat6MulVec(full, 1, a, 4, x, 2);
    mat6MulVec(half, 1, a, 4, x, 2, true);
    expect(Array.from(half)).toEqual(Array.from(full));
  });
});
