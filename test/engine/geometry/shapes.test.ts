/**
 * Shape bounds and planes (shapes.ts) against brute force: a shape's world box half-widths
 * against the largest |x_i − p_i| over its corners, rims and end spheres placed in the
 * world (sampled densely where the surface is curved), the world plane against images of
 * points of the local plane, and the canonical pair order.
 */
import { describe, expect, it } from "vitest";
import { convexHull } from "../../../src/engine/geometry/hull";
import { buildMesh } from "../../../src/engine/geometry/mesh";
import {
  aabbHalfWidths,
  readRadius,
  readRadiusLength,
  type Shape,
  SIZES,
  shapeRank,
  worldAabb,
  worldPlane,
} from "../../../src/engine/geometry/shapes";
import { axisAngle, type Q4, rotate, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { pose } from "./helpers";

/** Local points of the shape's surface whose world images reach its box (dense on curves). */
function extremePoints(shape: Shape): V3[] {
  const pts: V3[] = [];
  const N = 2000;
  switch (shape.type) {
    case "sphere":
    case "capsule": {
      const r = shape.radius;
      const L = shape.type === "capsule" ? shape.halfLength : 0;
      // Fibonacci sphere points about each end of the core segment.
      for (let k = 0; k < N; k++) {
        const z = 1 - (2 * (k + 0.5)) / N;
        const rho = Math.sqrt(1 - z * z);
        const ph = k * Math.PI * (3 - Math.sqrt(5));
        for (const e of [-L, L])
          pts.push([r * rho * Math.cos(ph), r * rho * Math.sin(ph), e + r * z]);
      }
      return pts;
    }
    case "cylinder":
      for (let k = 0; k < N; k++) {
        const th = (2 * Math.PI * k) / N;
        for (const e of [-1, 1])
          pts.push([
            shape.radius * Math.cos(th),
            shape.radius * Math.sin(th),
            e * shape.halfLength,
          ]);
      }
      return pts;
    case "box": {
      const h = shape.halfExtents;
      for (let v = 0; v < 8; v++)
        pts.push([v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]]);
      return pts;
    }
    case "convex":
    case "mesh": {
      // The corners of the local box (the convex and mesh boxes are about the frame origin:
      // the local box of the vertices, rotated, widened to be centred at the origin).
      const g = shape.type === "convex" ? shape.hull : shape.mesh;
      for (let v = 0; v < 8; v++)
        pts.push(
          [0, 1, 2].map((i) => g.boxCenter[i] + ((v >> i) & 1 ? 1 : -1) * g.boxHalf[i]) as V3,
        );
      return pts;
    }
    case "plane":
      return pts;
  }
}

describe("world boxes", () => {
  it("aabbHalfWidths: max |R x|_i over the shape's extreme points (exact for corners, sampled on curves)", () => {
    const r = mulberry32(8);
    const hullPts = Float64Array.from({ length: 60 }, () => r() - 0.3);
    const shapes: Shape[] = [
      { type: "sphere", radius: 0.3 },
      { type: "capsule", radius: 0.1, halfLength: 0.4 },
      { type: "cylinder", radius: 0.25, halfLength: 0.1 },
      { type: "box", halfExtents: [0.3, 0.2, 0.05] },
      { type: "convex", hull: convexHull(hullPts) },
      {
        type: "mesh",
        mesh: buildMesh(
          new Float64Array([0, 0, 0, 1, 0.2, 0, 0.3, 1, 0.1]),
          new Int32Array([0, 1, 2]),
        ),
      },
    ];
    const ext = new Float64Array(4);
    for (let trial = 0; trial < 20; trial++) {
      const q: Q4 = axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], 6 * r());
      const p = pose([r(), r(), r()], q);
      for (const s of shapes) {
        aabbHalfWidths(s, p, ext, 1);
        const curved = s.type === "sphere" || s.type === "capsule" || s.type === "cylinder";
        const ref = [0, 0, 0];
        for (const x of extremePoints(s)) {
          const w = rotate(q, x);
          for (let i = 0; i < 3; i++) ref[i] = Math.max(ref[i], Math.abs(w[i]));
        }
        // Sampling 2000 points of a circle of radius ρ misses its extreme by at most
        // ρ (1 − cos(π/2000)) < 1.3e-6 ρ; on the sphere the spacing is ~√(4π/2000) r.
        for (let i = 0; i < 3; i++) {
          expect(ext[1 + i]).toBeGreaterThanOrEqual(ref[i] - 1e-14);
          expect(ext[1 + i] - ref[i]).toBeLessThanOrEqual(curved ? 1e-3 : 1e-14);
        }
      }
    }
    aabbHalfWidths({ type: "plane", normal: [0, 0, 1], offset: 0 }, pose([0, 0, 0]), ext, 0);
    expect(ext[0]).toBe(Number.POSITIVE_INFINITY);
  });

  it("worldAabb: p ∓ the half-widths", () => {
    const p = pose([1, -2, 3], axisAngle([0, 0, 1], Math.PI / 2));
    const min = new Float64Array(3);
    const max = new Float64Array(3);
    worldAabb({ type: "box", halfExtents: [0.3, 0.1, 0.2] }, p, min, max);
    // A quarter turn about z swaps the x and y widths.
    const e = [0.1, 0.3, 0.2];
    const c = [1, -2, 3];
    for (let i = 0; i < 3; i++) {
      expect(min[i]).toBeCloseTo(c[i] - e[i], 15);
      expect(max[i]).toBeCloseTo(c[i] + e[i], 15);
    }
  });
});

describe("planes, sizes and the pair order", () => {
  it("worldPlane: the world images of the local plane's points satisfy n_w·x = d_w, n_w unit", () => {
    const r = mulberry32(12);
    const out = new Float64Array(5);
    for (let trial = 0; trial < 50; trial++) {
      const n: V3 = [r() - 0.5, r() - 0.5, r() + 0.1];
      const offset = r() - 0.5;
      const q = axisAngle([r(), r() - 0.5, r()], 6 * r());
      const c: V3 = [r(), r(), r()];
      worldPlane({ type: "plane", normal: n, offset }, pose(c, q), out, 1);
      const nw = [out[1], out[2], out[3]];
      expect(Math.hypot(...nw)).toBeCloseTo(1, 15);
      const ln = Math.hypot(...n);
      // The local plane n·x = offset: its point offset n/|n|² plus any tangent t ⟂ n.
      for (let k = 0; k < 4; k++) {
        const t: V3 = [r() - 0.5, r() - 0.5, 0];
        t[2] = -(n[0] * t[0] + n[1] * t[1]) / n[2];
        const x: V3 = [0, 1, 2].map((i) => (offset * n[i]) / (ln * ln) + t[i]) as V3;
        const w = rotate(q, x).map((v, i) => v + c[i]);
        expect(nw[0] * w[0] + nw[1] * w[1] + nw[2] * w[2]).toBeCloseTo(out[4], 13);
      }
      // The solid side is below: n_w·(image of a point under the plane) < d_w.
      const below = rotate(q, [-n[0], -n[1], -n[2]]).map(
        (v, i) => v + c[i] + (offset * rotate(q, n)[i]) / (ln * ln),
      );
      expect(nw[0] * below[0] + nw[1] * below[1] + nw[2] * below[2]).toBeLessThan(out[4]);
    }
  });

  it("readRadius and readRadiusLength write the sizes at the given slot", () => {
    readRadius({ type: "sphere", radius: 0.7 }, 2);
    expect(SIZES[2]).toBe(0.7);
    readRadiusLength({ type: "capsule", radius: 0.1, halfLength: 0.4 }, 0);
    expect([SIZES[0], SIZES[1]]).toEqual([0.1, 0.4]);
  });

  it("shapeRank: plane < mesh < convex < box < capsule < cylinder < sphere", () => {
    const order = ["plane", "mesh", "convex", "box", "capsule", "cylinder", "sphere"] as const;
    expect(order.map(shapeRank)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });
});
