/** compileTimeFunction against hand-computed values and derivatives. */
import { describe, expect, it } from "vitest";
import { compileTimeFunction } from "../../../src/engine/model/time-function";

describe("time functions", () => {
  it("constant", () => {
    const f = compileTimeFunction(2.5);
    expect([f.value(-3), f.value(7), f.rate(1), f.accel(1)]).toEqual([2.5, 2.5, 0, 0]);
    expect(f.constant).toBe(true);
  });

  it("linear offset + rate t", () => {
    const f = compileTimeFunction({ offset: 1, rate: -2 });
    expect(f.value(0)).toBe(1);
    expect(f.value(1.5)).toBe(-2);
    expect(f.rate(10)).toBe(-2);
    expect(f.accel(10)).toBe(0);
    expect(f.constant).toBe(false);
    expect(compileTimeFunction({ type: "linear", offset: 3, rate: 0 }).constant).toBe(true);
  });

  it("sine: offset + A sin(2π f t + φ) and its derivatives", () => {
    const f = compileTimeFunction({
      type: "sine",
      amplitude: 2,
      frequency: 0.5,
      phase: 0.25,
      offset: 1,
    });
    const t = 0.7;
    const w = Math.PI; // 2π·0.5
    expect(f.value(t)).toBeCloseTo(1 + 2 * Math.sin(w * t + 0.25), 14);
    expect(f.rate(t)).toBeCloseTo(2 * w * Math.cos(w * t + 0.25), 14);
    expect(f.accel(t)).toBeCloseTo(-2 * w * w * Math.sin(w * t + 0.25), 13);
    // quarter period: sin = 1 with φ = 0
    const g = compileTimeFunction({
      type: "sine",
      amplitude: 3,
      frequency: 2,
      phase: 0,
      offset: 0,
    });
    expect(g.value(0.125)).toBeCloseTo(3, 14);
    expect(g.rate(0.125)).toBeCloseTo(0, 12);
    expect(g.accel(0.125)).toBeCloseTo(-3 * (4 * Math.PI) ** 2, 10);
    const still = compileTimeFunction({
      type: "sine",
      amplitude: 3,
      frequency: 0,
      phase: Math.PI / 2,
      offset: 1,
    });
    expect(still.constant).toBe(true);
    expect(still.value(5)).toBeCloseTo(4, 14);
  });

  it("table: linear interpolation, held outside, piecewise slope", () => {
    const f = compileTimeFunction({
      type: "table",
      points: [
        [0, 1],
        [1, 3],
        [3, 2],
      ],
    });
    expect(f.value(-1)).toBe(1);
    expect(f.value(0)).toBe(1);
    expect(f.value(0.25)).toBeCloseTo(1.5, 15);
    expect(f.value(1)).toBe(3);
    expect(f.value(2)).toBeCloseTo(2.5, 15);
    expect(f.value(3)).toBe(2);
    expect(f.value(10)).toBe(2);
    expect(f.rate(-1)).toBe(0);
    expect(f.rate(0)).toBe(2);
    expect(f.rate(0.5)).toBe(2);
    expect(f.rate(1)).toBe(-0.5); // segments are [t_k, t_{k+1}): right-continuous slope
    expect(f.rate(2.9)).toBe(-0.5);
    expect(f.rate(3)).toBe(0);
    expect(f.rate(4)).toBe(0);
    expect(f.accel(0.5)).toBe(0);
    // out-of-order queries (the segment hint must not go stale)
    expect(f.value(2.5)).toBeCloseTo(2.25, 15);
    expect(f.value(0.5)).toBeCloseTo(2, 15);
    expect(f.value(2.5)).toBeCloseTo(2.25, 15);
    expect(f.constant).toBe(false);
  });

  it("table with one point or equal values is constant", () => {
    const one = compileTimeFunction({ type: "table", points: [[2, 7]] });
    expect([one.value(0), one.value(5), one.rate(2), one.accel(2)]).toEqual([7, 7, 0, 0]);
    expect(
      compileTimeFunction({
        type: "table",
        points: [
          [0, 1],
          [1, 1],
        ],
      }).constant,
    ).toBe(true);
  });

  it("a long table evaluated monotonically matches the brute-force interpolation", () => {
    const pts: [number, number][] = Array.from({ length: 200 }, (_, k) => [
      k * 0.1 + (k % 3) * 0.01,
      Math.cos(k),
    ]);
    const f = compileTimeFunction({ type: "table", points: pts });
    for (let t = -0.05; t < 20.5; t += 0.037) {
      let v: number;
      let r: number;
      if (t <= pts[0][0]) [v, r] = [pts[0][1], 0];
      else if (t >= pts[199][0]) [v, r] = [pts[199][1], 0];
      else {
        let k = 0;
        while (!(pts[k][0] <= t && t < pts[k + 1][0])) k++;
        const s = (pts[k + 1][1] - pts[k][1]) / (pts[k + 1][0] - pts[k][0]);
        [v, r] = [pts[k][1] + s * (t - pts[k][0]), s];
      }
      expect(f.value(t)).toBeCloseTo(v, 12);
      expect(f.rate(t)).toBeCloseTo(r, 9);
    }
  });
});
