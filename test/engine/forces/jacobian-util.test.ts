/**
 * The Jacobian helpers (src/engine/forces/jacobian-util.ts): addScaledBlock against the
 * dense matrix it should add to (stride-6 scratch, rows × cols corner), its refusal of an
 * unreserved block; skewSkew against the product [a]×[b]× of two skew matrices written
 * out; setScaledIdentity.
 */
import { describe, expect, it } from "vitest";
import {
  addScaledBlock,
  setScaledIdentity,
  skewSkew,
} from "../../../src/engine/forces/jacobian-util";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrToDense } from "../../../src/engine/math/csr";
import { mulberry32 } from "../../support/random";

describe("addScaledBlock", () => {
  it("adds s·a's rows × cols corner (stride 6) to block (bi, bj), twice is twice", () => {
    // blocks of sizes 6, 3, 6: dense offsets 0, 6, 9 (15 × 15)
    const m = new SparseBlockMatrix([6, 3, 6]);
    m.addBlock(0, 2);
    m.addBlock(1, 0);
    m.finalize();
    m.clear();
    const a = Float64Array.from({ length: 36 }, (_, k) => k + 1);
    addScaledBlock(m, 0, 2, 6, 6, a, 0.5);
    addScaledBlock(m, 1, 0, 3, 6, a, -2);
    addScaledBlock(m, 1, 0, 3, 6, a, -2);
    const dense = csrToDense(m.toCsr());
    const n = 15;
    for (let r = 0; r < n; r++)
      for (let c = 0; c < n; c++) {
        let expected = 0;
        if (r < 6 && c >= 9) expected = 0.5 * a[6 * r + (c - 9)];
        if (r >= 6 && r < 9 && c < 6) expected = -4 * a[6 * (r - 6) + c];
        expect(dense[r * n + c]).toBe(expected);
      }
    expect(() => addScaledBlock(m, 2, 1, 6, 3, a, 1)).toThrow(/block \(2, 1\) was not reserved/);
  });
});

describe("skewSkew and setScaledIdentity", () => {
  it("[a]×[b]× as the product of the two skew matrices; c I", () => {
    const skew = (v: number[]) => [0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0];
    const rng = mulberry32(6);
    for (let t = 0; t < 5; t++) {
      const a = [0, 1, 2].map(() => 2 * rng() - 1);
      const b = [0, 1, 2].map(() => 2 * rng() - 1);
      const sa = skew(a);
      const sb = skew(b);
      const out = new Float64Array(12).fill(Number.NaN);
      // read a and b at offsets, write at offset 3
      skewSkew(out, 3, Float64Array.of(9, ...a), 1, Float64Array.of(8, 8, ...b), 2);
      for (let i = 0; i < 3; i++)
        for (let j = 0; j < 3; j++) {
          const product = sa[3 * i] * sb[j] + sa[3 * i + 1] * sb[3 + j] + sa[3 * i + 2] * sb[6 + j];
          expect(out[3 + 3 * i + j]).toBeCloseTo(product, 15);
        }
      expect(Number.isNaN(out[0]) && Number.isNaN(out[2])).toBe(true);
    }
    const id = new Float64Array(9).fill(7);
    setScaledIdentity(id, -2.5);
    expect(Array.from(id)).toEqual([-2.5, 0, 0, 0, -2.5, 0, 0, 0, -2.5]);
  });
});
