/**
 * The point–triangle plane query (point-triangle.ts), against numbers computed here:
 *  - a right triangle in the plane z = 0 and points above and below it: d = p_z, the
 *    weights (1 − p_x − p_y, p_x, p_y) of the unit right triangle, normal +z (−z for the
 *    corners in the other order), 2A = 1;
 *  - random triangles: the weights rebuild the projection p − d n, and the gradient of d
 *    over the 12 coordinates is (n, −w₀ n, −w₁ n, −w₂ n) by central differences of d
 *    written out with its own cross product (the contact Jacobian of fem-faces.ts);
 *  - withinReach: a projection 0.1 m beyond the hypotenuse is within reach 0.1 m, not
 *    within 0.09 m; clampWeights moves it onto the edge.
 */
import { describe, expect, it } from "vitest";
import {
  clampWeights,
  POINT_TRIANGLE,
  pointTriangle,
  withinReach,
} from "../../../src/engine/geometry/point-triangle";
import { mulberry32 } from "../../support/random";
import { signedDistance, signedDistanceGradient } from "../../support/triangle-plane";

describe("pointTriangle", () => {
  it("the unit right triangle: d = p_z, w = (1 − p_x − p_y, p_x, p_y), n = ±z", () => {
    for (const [px, py, pz] of [
      [0.25, 0.25, 0.5],
      [0.1, 0.7, -0.3],
      [1.5, -0.2, 2],
    ]) {
      const x = Float64Array.from([px, py, pz, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
      expect(pointTriangle(x, 0, 3, 6, 9)).toBe(true);
      const q = Array.from(POINT_TRIANGLE);
      const want = [1 - px - py, px, py, pz, 0, 0, 1, 1];
      for (let k = 0; k < 8; k++) expect(Math.abs(q[k] - want[k]), `${k}`).toBeLessThan(1e-15);
      // the other orientation: normal −z, d = −p_z, weights of corners 1 and 2 swapped
      expect(pointTriangle(x, 0, 3, 9, 6)).toBe(true);
      expect(POINT_TRIANGLE[3]).toBeCloseTo(-pz, 15);
      expect(POINT_TRIANGLE[6]).toBe(-1);
      expect(POINT_TRIANGLE[1]).toBeCloseTo(py, 15);
    }
    // a degenerate triangle (collinear corners)
    const flat = Float64Array.from([0, 0, 1, 0, 0, 0, 1, 0, 0, 2, 0, 0]);
    expect(pointTriangle(flat, 0, 3, 6, 9)).toBe(false);
  });

  it("random triangles: the weights rebuild p − d n; ∂d/∂x = (n, −w_i n) by central differences", () => {
    const rand = mulberry32(1031);
    for (let trial = 0; trial < 20; trial++) {
      const x = Array.from({ length: 12 }, () => 0.2 * (rand() - 0.5));
      expect(pointTriangle(Float64Array.from(x), 0, 3, 6, 9)).toBe(true);
      const q = Array.from(POINT_TRIANGLE);
      const d = q[3];
      // round-off: coordinates of 0.1 m, a few ulps
      expect(Math.abs(d - signedDistance(x))).toBeLessThan(1e-15);
      expect(Math.abs(q[0] + q[1] + q[2] - 1)).toBeLessThan(1e-14);
      for (let c = 0; c < 3; c++) {
        const proj = q[0] * x[3 + c] + q[1] * x[6 + c] + q[2] * x[9 + c];
        expect(Math.abs(proj - (x[c] - d * q[4 + c]))).toBeLessThan(1e-15);
      }
      // central differences err by O(ε²) times d's third derivatives, large on a skinny
      // triangle (trial 15: 2A = 1e-3 m², weights ±20): 2e-7 at ε = 1e-6, 3e-9 at 1e-7
      const eps = 1e-7;
      const fdGrad = signedDistanceGradient(x, eps);
      for (let k = 0; k < 12; k++) {
        const fd = fdGrad[k];
        const corner = Math.floor(k / 3);
        const grad = (corner === 0 ? 1 : -q[corner - 1]) * q[4 + (k % 3)];
        expect(Math.abs(grad - fd), `trial ${trial} coordinate ${k}`).toBeLessThan(1e-7);
      }
    }
  });
});

describe("withinReach and clampWeights", () => {
  it("a projection 0.1 m beyond the hypotenuse of the unit right triangle", () => {
    // the hypotenuse x + y = 1 (opposite corner 0); (0.5 + s, 0.5 + s) is s√2 beyond it
    const s = 0.1 / Math.SQRT2;
    const x = Float64Array.from([0.5 + s, 0.5 + s, -0.2, 0, 0, 0, 1, 0, 0, 0, 1, 0]);
    pointTriangle(x, 0, 3, 6, 9);
    const q = POINT_TRIANGLE.slice();
    // w₀ = −2s, the altitude onto the hypotenuse 2A/|edge| = 1/√2: 2s/√2 = 0.1 m beyond
    expect(q[0]).toBeCloseTo(-2 * s, 15);
    expect(withinReach(q, x, 3, 6, 9, 0.1)).toBe(true);
    expect(withinReach(q, x, 3, 6, 9, 0.09)).toBe(false);
    expect(withinReach(q, x, 3, 6, 9, 0)).toBe(false);
    clampWeights(q);
    // onto the edge: w₀ = 0, w₁ = w₂ = ½ (the midpoint of the hypotenuse), d kept
    expect(Array.from(q.subarray(0, 4))).toEqual([0, 0.5, 0.5, -0.2]);
  });
});
