/**
 * Sweep and prune (broadphase.ts): its pair set against the brute-force O(n²) box overlap
 * test, through moves, a change of sweep axis, jammed piles and a pair filter; its memory
 * (the axis and the updates since its choice) restored into a copy.
 */
import { describe, expect, it } from "vitest";
import { SweepAndPrune } from "../../../src/engine/geometry/broadphase";
import { mulberry32 } from "../../support/random";
import { bruteAabbPairs, pairKey } from "./helpers";

function sapPairs(sap: SweepAndPrune): Set<string> {
  const s = new Set<string>();
  for (let k = 0; k < sap.pairCount; k++) {
    const i = sap.pairs[2 * k];
    const j = sap.pairs[2 * k + 1];
    expect(i).toBeLessThan(j);
    s.add(pairKey(i, j));
  }
  expect(s.size).toBe(sap.pairCount); // no duplicates
  return s;
}

describe("sweep and prune", () => {
  it("1000 random spheres: same pairs as brute force, through moves and an axis switch", () => {
    const n = 1000;
    const r = mulberry32(42);
    const c = new Float64Array(3 * n);
    const rad = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      c[3 * i] = 10 * r();
      c[3 * i + 1] = 5 * r();
      c[3 * i + 2] = 2 * r();
      rad[i] = 0.1 + 0.3 * r();
    }
    const min = new Float64Array(3 * n);
    const max = new Float64Array(3 * n);
    const fill = () => {
      for (let i = 0; i < 3 * n; i++) {
        min[i] = c[i] - rad[(i / 3) | 0];
        max[i] = c[i] + rad[(i / 3) | 0];
      }
    };
    const sap = new SweepAndPrune();
    const axes: number[] = [];
    for (let step = 0; step < 8; step++) {
      fill();
      sap.update(n, min, max);
      axes.push(sap.axis);
      const ref = bruteAabbPairs(n, min, max);
      expect(ref.size).toBeGreaterThan(500);
      expect(sapPairs(sap)).toEqual(ref);
      // Small random moves; from step 4 on, stretch the cloud along z so that z becomes
      // the axis of largest variance.
      for (let i = 0; i < n; i++) {
        for (let k = 0; k < 3; k++) c[3 * i + k] += 0.05 * (r() - 0.5);
        if (step === 3) c[3 * i + 2] *= 8;
      }
    }
    expect(axes[0]).toBe(0); // x has the largest spread at first
    expect(axes[7]).toBe(2);
  });

  it("a jammed lattice pile (layers on every axis): strips find the brute-force pairs", () => {
    // 10 × 10 × 10 spheres of radius 0.05 at spacing 0.1 with ±2 mm jitter, boxes padded
    // by 5 mm: every layer overlaps in projection on every axis (S1-1000's settled pile),
    // mixed box sizes (one sphere in ten is three times larger) and moves between updates.
    const n = 1000;
    const r = mulberry32(12345);
    const c = new Float64Array(3 * n);
    const rad = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      c[3 * i] = -0.45 + 0.1 * (i % 10) + 0.004 * (r() - 0.5);
      c[3 * i + 1] = -0.45 + 0.1 * (Math.floor(i / 10) % 10) + 0.004 * (r() - 0.5);
      c[3 * i + 2] = 0.05 + 0.1 * Math.floor(i / 100) + 0.004 * (r() - 0.5);
      rad[i] = (i % 10 === 3 ? 0.15 : 0.05) + 0.005;
    }
    const min = new Float64Array(3 * n);
    const max = new Float64Array(3 * n);
    const sap = new SweepAndPrune();
    for (let step = 0; step < 5; step++) {
      for (let i = 0; i < 3 * n; i++) {
        min[i] = c[i] - rad[(i / 3) | 0];
        max[i] = c[i] + rad[(i / 3) | 0];
      }
      sap.update(n, min, max);
      expect(sapPairs(sap)).toEqual(bruteAabbPairs(n, min, max));
      for (let i = 0; i < 3 * n; i++) c[i] += 0.01 * (r() - 0.5);
    }
  });

  it("the filter excludes pairs", () => {
    const r = mulberry32(5);
    const n = 300;
    const min = new Float64Array(3 * n);
    const max = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < 3; k++) {
        const x = 3 * r();
        min[3 * i + k] = x - 0.2;
        max[3 * i + k] = x + 0.2;
      }
    }
    const ref = bruteAabbPairs(n, min, max);
    const sap = new SweepAndPrune((i, j) => (i + j) % 3 !== 0);
    sap.update(n, min, max);
    const got = sapPairs(sap);
    const expected = new Set(
      [...ref].filter((p) => {
        const [i, j] = p.split(",").map(Number);
        return (i + j) % 3 !== 0;
      }),
    );
    expect(got).toEqual(expected);
    expect(expected.size).toBeLessThan(ref.size);
  });

  it("balls: box overlaps of two balls are kept only when the balls reach each other", () => {
    // The jammed lattice pile again, one sphere in four flagged as a ball: a pair of two
    // balls is kept iff |c_i − c_j| ≤ e_i + e_j (centres and half-widths of the cubes, the
    // sphere grown by the padding), any other pair iff the boxes overlap. Plus two balls
    // touching exactly (|c_i − c_j| = e_i + e_j along x) and two a hair beyond along a
    // diagonal (2.5e-10 of the reach: inside BALL_SLACK, kept for the narrow phase to reject).
    const n = 1000;
    const r = mulberry32(2024);
    const c = new Float64Array(3 * n);
    const rad = new Float64Array(n);
    const ball = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      c[3 * i] = -0.45 + 0.1 * (i % 10) + 0.004 * (r() - 0.5);
      c[3 * i + 1] = -0.45 + 0.1 * (Math.floor(i / 10) % 10) + 0.004 * (r() - 0.5);
      c[3 * i + 2] = 0.05 + 0.1 * Math.floor(i / 100) + 0.004 * (r() - 0.5);
      rad[i] = 0.055;
      ball[i] = i % 4 === 0 ? 0 : 1;
    }
    // bodies 0 and 1 (balls 1, 2 are flagged; 0 is not): set 1 and 2 exactly touching
    c.set([3, 3, 3], 3);
    c.set([3.11, 3, 3], 6);
    c.set([5, 5, 5], 9);
    const s = (0.11 * (1 + 0.25e-9)) / Math.SQRT2;
    c.set([5 + s, 5 + s, 5], 15);
    const min = new Float64Array(3 * n);
    const max = new Float64Array(3 * n);
    for (let i = 0; i < 3 * n; i++) {
      min[i] = c[i] - rad[(i / 3) | 0];
      max[i] = c[i] + rad[(i / 3) | 0];
    }
    const sap = new SweepAndPrune();
    sap.update(n, min, max, ball);
    const boxes = bruteAabbPairs(n, min, max);
    const expected = new Set(
      [...boxes].filter((p) => {
        const [i, j] = p.split(",").map(Number);
        if (ball[i] === 0 || ball[j] === 0) return true;
        const d = Math.hypot(
          c[3 * j] - c[3 * i],
          c[3 * j + 1] - c[3 * i + 1],
          c[3 * j + 2] - c[3 * i + 2],
        );
        return d <= rad[i] + rad[j] + 1e-12;
      }),
    );
    const got = sapPairs(sap);
    expect(got.has("1,2")).toBe(true);
    expect(got.has("3,5")).toBe(true);
    got.delete("3,5"); // in the slack, beyond the exact reach
    expect(got).toEqual(expected);
    expect(boxes.size - expected.size).toBeGreaterThan(2000); // diagonal neighbours dropped
    // without flags: every box overlap
    sap.update(n, min, max);
    expect(sapPairs(sap)).toEqual(boxes);
  });

  it("memory and restore: a copy given the axis and count of updates reports the same pairs in the same order; reset chooses afresh; none before the first update", () => {
    // a cloud spread along x, then stretched along z: the axis follows with hysteresis and
    // at every AXIS_CHOICE_INTERVAL-th update, so it depends on the boxes' history
    const n = 300;
    const r = mulberry32(7);
    const c = new Float64Array(3 * n);
    for (let i = 0; i < n; i++) c.set([10 * r(), 3 * r(), 3 * r()], 3 * i);
    const min = new Float64Array(3 * n);
    const max = new Float64Array(3 * n);
    const fill = () => {
      for (let i = 0; i < 3 * n; i++) {
        min[i] = c[i] - 0.3;
        max[i] = c[i] + 0.3;
      }
    };
    const sap = new SweepAndPrune();
    const order = (s: SweepAndPrune) => Array.from(s.pairs.subarray(0, 2 * s.pairCount));
    // nothing chosen yet: no memory, so a restored copy's first update chooses as this one's
    expect(sap.memory()).toBeNull();
    fill();
    sap.update(n, min, max);
    expect(sap.axis).toBe(0);
    for (let i = 0; i < n; i++) c[3 * i + 2] *= 12; // z now the sparsest axis
    fill();
    sap.update(n, min, max);
    const memory = sap.memory();
    expect(memory).toEqual({ axis: 0, sinceChoice: 1 }); // the choice is 3 updates away
    const copy = new SweepAndPrune();
    if (memory === null) throw new Error("a broad phase after updates has a memory");
    copy.restore(memory);
    const fresh = new SweepAndPrune();
    fresh.update(n, min, max);
    expect(fresh.axis).toBe(2); // a new one chooses at once
    for (let step = 0; step < 4; step++) {
      for (let i = 0; i < 3 * n; i++) c[i] += 0.01 * (r() - 0.5);
      fill();
      sap.update(n, min, max);
      copy.update(n, min, max);
      expect(copy.axis).toBe(sap.axis);
      expect(order(copy)).toEqual(order(sap));
    }
    expect(sap.axis).toBe(2); // switched at the interval
    sap.reset();
    sap.update(n, min, max);
    fresh.reset();
    expect(fresh.memory()).toBeNull();
    fresh.update(n, min, max);
    expect(order(sap)).toEqual(order(fresh));
  });
});
