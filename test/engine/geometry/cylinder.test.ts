/**
 * The cylinder's rim sampling (cylinder.ts): RIM_SAMPLES unit directions at the angles
 * 2πk/RIM_SAMPLES from local x, and the flush threshold cos = √(1 − sin²).
 */
import { describe, expect, it } from "vitest";
import {
  CYLINDER_FLUSH_SIN,
  FLUSH_COS,
  RIM_COS,
  RIM_SAMPLES,
  RIM_SIN,
} from "../../../src/engine/geometry/cylinder";

describe("rim samples", () => {
  it("the angles 2πk/RIM_SAMPLES, unit, the first along local x; the flush cosine", () => {
    expect(RIM_COS.length).toBe(RIM_SAMPLES);
    expect([RIM_COS[0], RIM_SIN[0]]).toEqual([1, 0]);
    for (let k = 0; k < RIM_SAMPLES; k++) {
      expect(Math.hypot(RIM_COS[k], RIM_SIN[k])).toBeCloseTo(1, 15);
      let a = Math.atan2(RIM_SIN[k], RIM_COS[k]);
      if (a < -1e-12) a += 2 * Math.PI;
      expect(a).toBeCloseTo((2 * Math.PI * k) / RIM_SAMPLES, 14);
    }
    expect(FLUSH_COS ** 2 + CYLINDER_FLUSH_SIN ** 2).toBeCloseTo(1, 15);
  });
});
