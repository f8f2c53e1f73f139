/**
 * grow.ts: buffers are kept while large enough and otherwise replaced by one of the same
 * type at least twice as long (amortized growth); extend keeps the contents, grow does not.
 */
import { describe, expect, it } from "vitest";
import { extend, grow } from "../../../src/engine/math/grow";

describe("grow", () => {
  it("returns the same buffer while it holds n entries", () => {
    const a = Float64Array.of(1, 2, 3);
    expect(grow(a, 3)).toBe(a);
    expect(grow(a, 0)).toBe(a);
  });

  it("else a zeroed buffer of the same type, of length max(n, 2·length)", () => {
    const a = Int32Array.of(5, 6, 7);
    const b = grow(a, 4);
    expect(b).toBeInstanceOf(Int32Array);
    expect(b.length).toBe(6);
    expect(Array.from(b)).toEqual([0, 0, 0, 0, 0, 0]);
    const c = grow(new Uint8Array(2), 100);
    expect(c).toBeInstanceOf(Uint8Array);
    expect(c.length).toBe(100);
    expect(grow(new Float64Array(0), 1).length).toBe(1);
  });

  it("a sequence of growing requests allocates O(log n) times", () => {
    let a = new Float64Array(1);
    let allocations = 0;
    for (let n = 1; n <= 1024; n++) {
      const b = grow(a, n);
      if (b !== a) allocations++;
      a = b;
    }
    expect(allocations).toBe(10); // 2, 4, …, 1024
  });
});

describe("extend", () => {
  it("keeps the contents when it grows, and the buffer itself when large enough", () => {
    const a = Float64Array.of(1.5, -0, 3);
    expect(extend(a, 2)).toBe(a);
    const b = extend(a, 5);
    expect(b).toBeInstanceOf(Float64Array);
    expect(b.length).toBe(6);
    expect(Array.from(b)).toEqual([1.5, -0, 3, 0, 0, 0]);
    expect(Object.is(b[1], -0)).toBe(true);
  });
});
