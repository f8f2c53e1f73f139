/**
 * The triangle core (triangle-core.ts): a mesh triangle's support function and support
 * sets against its corners (core-checks.ts, the corners relative to the centroid written
 * out here), its area, and closestOnTriangle against a dense barycentric grid of the
 * triangle (distance, and the Voronoi region: interior, edge k: corner k → k + 1, corner k).
 */
import { describe, expect, it } from "vitest";
import {
  CLOSEST,
  closestOnTriangle,
  REGION,
  TriangleCore,
} from "../../../../src/engine/geometry/convex/triangle-core";
import { buildMesh } from "../../../../src/engine/geometry/mesh";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { mulberry32 } from "../../../support/random";
import { checkSupport, type V3 } from "./core-checks";

const A: V3 = [0.1, 0.2, 0.05];
const B: V3 = [0.9, 0.1, -0.1];
const C: V3 = [0.3, 0.7, 0.2];

const sub = (a: V3, b: V3): V3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const cross = (a: V3, b: V3): V3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/** Barycentric coordinates (u, v, w) of x's projection on the plane of the triangle (p, q, s). */
function barycentric(x: V3, p: V3, q: V3, s: V3): V3 {
  const n = cross(sub(q, p), sub(s, p));
  const n2 = dot(n, n);
  const u = dot(cross(sub(q, x), sub(s, x)), n) / n2;
  const v = dot(cross(sub(s, x), sub(p, x)), n) / n2;
  return [u, v, 1 - u - v];
}

describe("triangle core", () => {
  it("support function and sets against its corners (about the centroid); its area", () => {
    const mesh = buildMesh(new Float64Array([...A, ...B, ...C]), new Int32Array([0, 1, 2]));
    const core = new TriangleCore().place(new WorldPose(), mesh, 0);
    const g = [0, 1, 2].map((i) => (A[i] + B[i] + C[i]) / 3);
    const corners = [A, B, C].map((x) => sub(x, g as V3));
    const [p, q, s] = corners;
    const n = cross(sub(q, p), sub(s, p));
    const ln = Math.hypot(...n);
    const inside = (x: V3) =>
      Math.abs(dot(sub(x, p), n)) / ln <= 1e-12 &&
      barycentric(x, p, q, s).every((c) => c >= -1e-12);
    checkSupport(core, corners, inside, 1e-12);
    const out = new Float64Array(1);
    core.polygonArea(0, out, 0);
    expect(out[0]).toBeCloseTo(ln / 2, 15);
  });

  it("closestOnTriangle: the grid's nearest point, and the Voronoi region it lies in", () => {
    const t = new Float64Array([...A, ...B, ...C]);
    const corners = [A, B, C];
    const r = mulberry32(41);
    const n = 120;
    const grid: V3[] = [];
    for (let i = 0; i <= n; i++)
      for (let j = 0; i + j <= n; j++) {
        const u = i / n;
        const v = j / n;
        grid.push([0, 1, 2].map((k) => A[k] + u * (B[k] - A[k]) + v * (C[k] - A[k])) as V3);
      }
    const regions = new Set<number>();
    for (let trial = 0; trial < 150; trial++) {
      const x: V3 = [2 * r() - 0.5, 2 * r() - 0.5, r() - 0.5];
      closestOnTriangle(t, Float64Array.from(x));
      const c: V3 = [CLOSEST[0], CLOSEST[1], CLOSEST[2]];
      const got = Math.hypot(...sub(x, c));
      let sampled = Number.POSITIVE_INFINITY;
      for (const y of grid)
        sampled = Math.min(sampled, Math.hypot(x[0] - y[0], x[1] - y[1], x[2] - y[2]));
      // The grid's spacing is at most |longest edge|/n: its minimum is that close.
      expect(got).toBeLessThanOrEqual(sampled + 1e-12);
      expect(got).toBeGreaterThanOrEqual(sampled - 1 / n);
      const bc = barycentric(c, A, B, C);
      const region = REGION[0];
      regions.add(region);
      if (region === 0) expect(Math.min(...bc)).toBeGreaterThan(-1e-12);
      else if (region <= 3) {
        // Edge k = region − 1 (corner k → k + 1): the third corner's coordinate is 0.
        const k = region - 1;
        expect(Math.abs(bc[(k + 2) % 3])).toBeLessThan(1e-12);
      } else {
        const k = region - 4;
        expect(Math.hypot(...sub(c, corners[k]))).toBeLessThan(1e-15);
      }
    }
    // The samples reach the interior, edges and corners.
    expect(regions.size).toBeGreaterThanOrEqual(5);
  });
});
