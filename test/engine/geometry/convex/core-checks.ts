/**
 * Checks shared by the core tests (box-core, cylinder-core, segment-core, point-core,
 * triangle-core, hull-core .test.ts), independent of the code under test: a core's
 * support function and support sets against brute force over points of the shape
 * (written out by each test: its corners, or dense samples of its curved rims) and a
 * membership test of the solid, written from the shape's definition.
 */
import { expect } from "vitest";
import type { ConvexShape } from "../../../../src/engine/geometry/convex/features";
import { mulberry32 } from "../../../support/random";

export type V3 = [number, number, number];

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

/**
 * For 400 random local directions d (every 4th along a local axis or in a coordinate
 * plane, where support sets are faces and edges): localSupport(d) lies in the solid
 * (`inside`, within tol) and reaches d·s ≥ max over `points` of d·x − tol (so it is a
 * maximizer: the points lie on the shape, and nothing of the solid is higher); points on
 * the shape are within boundingRadius() of the origin, the farthest at it within tol.
 * projectOnSupport(q, d̂) moves a point onto the support set: d̂·q = h(d̂) and q inside;
 * a segment's ends too.
 */
export function checkSupport(
  core: ConvexShape,
  points: readonly V3[],
  inside: (x: V3) => boolean,
  tol: number,
): void {
  const r = mulberry32(99);
  const d = new Float64Array(3);
  const s = new Float64Array(3);
  const q = new Float64Array(3);
  const ends = new Float64Array(6);
  const R = Math.max(...points.map((x) => Math.hypot(...x)));
  expect(core.boundingRadius()).toBeGreaterThanOrEqual(R - tol);
  expect(core.boundingRadius()).toBeLessThanOrEqual(R + tol);
  for (let k = 0; k < 400; k++) {
    d.set([2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
    if (k % 4 === 0) d[k % 3] = 0;
    if (k % 8 === 0) d[(k + 1) % 3] = 0;
    const l = Math.hypot(d[0], d[1], d[2]);
    for (let i = 0; i < 3; i++) d[i] /= l;
    core.localSupport(d, s);
    const h = dot(d, s);
    expect(inside([s[0], s[1], s[2]])).toBe(true);
    const best = Math.max(...points.map((x) => dot(d, x)));
    expect(h).toBeGreaterThanOrEqual(best - tol);
    // A point of the shape moved onto the support set of d.
    const p = points[Math.floor(r() * points.length)];
    q.set(p);
    const dim = core.projectOnSupport(q, d, ends);
    expect(dim).toBeGreaterThanOrEqual(0);
    expect(dim).toBeLessThanOrEqual(2);
    expect(Math.abs(dot(d, q) - h)).toBeLessThanOrEqual(tol);
    expect(inside([q[0], q[1], q[2]])).toBe(true);
    if (dim === 1)
      for (const o of [0, 3]) {
        expect(
          Math.abs(d[0] * ends[o] + d[1] * ends[o + 1] + d[2] * ends[o + 2] - h),
        ).toBeLessThanOrEqual(tol);
        expect(inside([ends[o], ends[o + 1], ends[o + 2]])).toBe(true);
      }
  }
}
