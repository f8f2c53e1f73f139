/**
 * The convex cores' shared base and feature buffers (src/engine/geometry/convex/
 * features.ts): a core without polygon or segment features (the point core) keeps the
 * defaults — zero support Hessian, no kink or cone axes, polygon() and segment() writing
 * nothing, polygon area 0 — and the per-slot buffers hold two slots of POLY_CAP vertices.
 * LINE_SIN is the sine of the ≈11.5° line-contact band the header states.
 */
import { describe, expect, it } from "vitest";
import { MAX_SIDES } from "../../../../src/engine/geometry/convex/clip";
import {
  ConvexCore,
  FC,
  FCOUNT,
  FLAB,
  FNRM,
  FPOLY,
  FT,
  LINE,
  LINE_SIN,
  PARALLEL_SIN,
  POINT,
  POLY_CAP,
  RAY,
  TOWARD,
} from "../../../../src/engine/geometry/convex/features";
import { PointCore } from "../../../../src/engine/geometry/convex/point-core";

describe("ConvexCore defaults", () => {
  it("a featureless polytope core: zero Hessian, no axes, no polygon or segment, area 0", () => {
    const core = new PointCore();
    expect(core).toBeInstanceOf(ConvexCore);
    const H = Float64Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9);
    core.addSupportHessian(Float64Array.of(0, 0, 1), 0, H);
    expect(Array.from(H)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const axes = new Float64Array(9).fill(7);
    expect(core.kinkAxes(axes, 0)).toBe(0);
    expect(core.coneAxes(axes, 3)).toBe(0);
    expect(Array.from(axes)).toEqual(new Array(9).fill(7));
    // the module's scratch buffers (shared with other test files of the worker): marked,
    // checked untouched, restored
    const saved = [FPOLY.slice(), FCOUNT.slice()] as const;
    FPOLY.fill(5);
    FCOUNT.fill(3);
    core.polygon(0, true, TOWARD);
    core.segment(1, TOWARD);
    const untouched = FPOLY.every((v) => v === 5) && FCOUNT[0] === 3 && FCOUNT[1] === 3;
    FPOLY.set(saved[0]);
    FCOUNT.set(saved[1]);
    expect(untouched).toBe(true);
    const area = Float64Array.of(9, 9);
    core.polygonArea(0, area, 1);
    expect(Array.from(area)).toEqual([9, 0]);
    expect(core.sweep.length).toBe(1);
    expect([core.p.length, core.R.length]).toEqual([3, 9]);
  });
});

describe("feature buffers and tolerances", () => {
  it("two slots of POLY_CAP = MAX_SIDES vertices, labels and normals; the query arrays' sizes", () => {
    expect(POLY_CAP).toBe(MAX_SIDES);
    expect(FPOLY.length).toBe(2 * 3 * POLY_CAP);
    expect(FLAB.length).toBe(2 * POLY_CAP);
    expect([FT.length, FC.length, FCOUNT.length, FNRM.length]).toEqual([2, 2, 2, 6]);
    expect([TOWARD.length, POINT.length, LINE.length, RAY.length]).toEqual([4, 4, 6, 1]);
    expect((Math.asin(LINE_SIN) * 180) / Math.PI).toBeCloseTo(11.54, 2);
    expect(PARALLEL_SIN).toBeLessThan(LINE_SIN);
  });
});
