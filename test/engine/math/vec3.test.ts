/**
 * vec3.ts: 3-vector operations at offsets in Float64Array and number[] storage, against
 * the formulas written out, and identities: a × b ⊥ a, b; b × a = −(a × b);
 * |a × b|² + (a·b)² = |a|²|b|² (Lagrange).
 */
import { describe, expect, it } from "vitest";
import {
  addScaled3,
  copy3,
  cross3,
  dot3,
  length2,
  length3,
  norm3,
  sameValues,
  sub3,
} from "../../../src/engine/math/vec3";
import { mulberry32 } from "../../support/random";

describe("vec3", () => {
  it("dot3, norm3, length3 and length2 at offsets", () => {
    const a = Float64Array.of(9, 1, 2, 3);
    const b = [4, -5, 6, 9, 9];
    expect(dot3(a, 1, b, 0)).toBe(4 - 10 + 18);
    expect(norm3(a, 1)).toBe(Math.sqrt(14));
    expect(norm3([2, 3, 6])).toBe(7);
    expect(length3(2, 3, 6)).toBe(7);
    expect(length2(3, 4)).toBe(5);
    expect(length3(0, 0, 0)).toBe(0);
  });

  it("cross3: the basis, offsets, and the identities on random vectors", () => {
    const e = new Float64Array(3);
    cross3(e, 0, [1, 0, 0], 0, [0, 1, 0], 0);
    expect(Array.from(e)).toEqual([0, 0, 1]);
    const r = mulberry32(12);
    for (let k = 0; k < 50; k++) {
      const store = Float64Array.from({ length: 12 }, () => 4 * r() - 2);
      // a at 1, b at 5, a × b into offset 8 of the same array (no aliasing of the inputs)
      cross3(store, 8, store, 1, store, 5);
      const c = store.subarray(8, 11);
      expect(Math.abs(dot3(c, 0, store, 1))).toBeLessThan(1e-14);
      expect(Math.abs(dot3(c, 0, store, 5))).toBeLessThan(1e-14);
      const ba = new Float64Array(3);
      cross3(ba, 0, store, 5, store, 1);
      for (let i = 0; i < 3; i++) expect(ba[i]).toBe(-c[i]);
      const ab = dot3(store, 1, store, 5);
      const lagrange = norm3(c) ** 2 + ab ** 2 - norm3(store, 1) ** 2 * norm3(store, 5) ** 2;
      expect(Math.abs(lagrange)).toBeLessThan(1e-12);
    }
  });

  it("addScaled3, sub3 and copy3 write only their three entries", () => {
    const out = [7, 7, 7, 7, 7];
    addScaled3(out, 1, [1, 2, 3], 0, Float64Array.of(0, 10, 20, 30), 1, 0.5);
    expect(out).toEqual([7, 6, 12, 18, 7]);
    sub3(out, 2, [5, 5, 5], 0, [1, 2, 3], 0);
    expect(out).toEqual([7, 6, 4, 3, 2]);
    const f = new Float64Array(4);
    copy3(f, 1, out, 2);
    expect(Array.from(f)).toEqual([0, 4, 3, 2]);
    // out = a + s·b in place (out aliasing a at the same offset)
    const v = Float64Array.of(1, 1, 1);
    addScaled3(v, 0, v, 0, [1, 2, 3], 0, -2);
    expect(Array.from(v)).toEqual([-1, -3, -5]);
  });

  it("sameValues: each given value against the held one at its offset, exactly", () => {
    const held = Float64Array.of(9, 1, 2, 3, 0.1 + 0.2);
    expect(sameValues([1, 2, 3], held, 1)).toBe(true);
    expect(sameValues([1, 2], held, 1)).toBe(true);
    expect(sameValues([1, 2, 4], held, 1)).toBe(false);
    // an ulp off is a change
    expect(sameValues([0.3], held, 4)).toBe(false);
    expect(sameValues([0.1 + 0.2], held, 4)).toBe(true);
    expect(sameValues([], held)).toBe(true);
  });
});
