/**
 * Box–box (src/engine/geometry/pairs/box-box.ts) against hand-computed contacts: face
 * manifolds from the clipping, the reference-face choice, edge–edge contacts.
 */
import { describe, expect, it } from "vitest";
import { axisAngle, type V3 } from "../../../support/quat";
import { box, collide, expectOne, expectVec, nearest, pose } from "../helpers";

const S2 = Math.SQRT2;

describe("box–box", () => {
  it("small box resting on a larger box: 4 points at the small box's bottom corners", () => {
    // a: h = (2, 2, 0.5) at the origin (top z = 0.5); b: cube h = 0.5 at (0.3, −0.2, 0.99):
    // bottom face z = 0.49, 0.01 deep; contact points at z = 0.495.
    const cs = collide(
      box(2, 2, 0.5),
      pose([0, 0, 0]),
      box(0.5, 0.5, 0.5),
      pose([0.3, -0.2, 0.99]),
    );
    expect(cs).toHaveLength(4);
    for (const [x, y] of [
      [-0.2, -0.7],
      [0.8, -0.7],
      [-0.2, 0.3],
      [0.8, 0.3],
    ]) {
      const c = nearest(cs, [x, y, 0.5]);
      expectVec(c.point, [x, y, 0.495], 1e-12);
      expect(c.gap).toBeCloseTo(-0.01, 13);
      expectVec(c.normal, [0, 0, 1], 1e-14);
    }
    // The same pair with the small box first: normal −z (from the small box to the big
    // one), same points and gaps (the larger face stays the reference face).
    const rs = collide(
      box(0.5, 0.5, 0.5),
      pose([0.3, -0.2, 0.99]),
      box(2, 2, 0.5),
      pose([0, 0, 0]),
    );
    expect(rs).toHaveLength(4);
    for (const c of rs) {
      expectVec(c.normal, [0, 0, -1], 1e-14);
      expect(c.gap).toBeCloseTo(-0.01, 13);
      expect(c.point[2]).toBeCloseTo(0.495, 13);
      expect(Math.abs(Math.abs(c.point[0] - 0.3) - 0.5)).toBeLessThan(1e-12);
      expect(Math.abs(Math.abs(c.point[1] + 0.2) - 0.5)).toBeLessThan(1e-12);
    }
  });

  it("cube tilted 45° about x, standing on its edge: 2 points", () => {
    // Lowest edge at c_z − √2/2 = 0.49 (0.01 deep), along x at y = 0, x = ±0.5.
    const cs = collide(
      box(2, 2, 0.5),
      pose([0, 0, 0]),
      box(0.5, 0.5, 0.5),
      pose([0, 0, 0.5 + S2 / 2 - 0.01], axisAngle([1, 0, 0], Math.PI / 4)),
      0.001,
    );
    expect(cs).toHaveLength(2);
    expectVec(nearest(cs, [0.5, 0, 0.5]).point, [0.5, 0, 0.495], 1e-12);
    expectVec(nearest(cs, [-0.5, 0, 0.5]).point, [-0.5, 0, 0.495], 1e-12);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.01, 13);
      expectVec(c.normal, [0, 0, 1], 1e-12);
    }
  });

  it("overhanging box: incident vertices, edge cuts and a reference corner", () => {
    // a, b: h = (1, 1, 0.5); b at (1.5, 0.4, 0.99). b's bottom face spans x ∈ [0.5, 2.5],
    // y ∈ [−0.6, 1.4]; clipped to a's top face (|x|, |y| ≤ 1): the rectangle
    // x ∈ [0.5, 1], y ∈ [−0.6, 1], whose corners are one vertex of b, two points where
    // b's edges cross a's sides, and a's corner (1, 1).
    const cs = collide(box(1, 1, 0.5), pose([0, 0, 0]), box(1, 1, 0.5), pose([1.5, 0.4, 0.99]));
    expect(cs).toHaveLength(4);
    for (const [x, y] of [
      [0.5, -0.6],
      [0.5, 1],
      [1, 1],
      [1, -0.6],
    ]) {
      expectVec(nearest(cs, [x, y, 0.5]).point, [x, y, 0.495], 1e-12);
    }
    for (const c of cs) expect(c.gap).toBeCloseTo(-0.01, 13);
    expect(new Set(cs.map((c) => c.feature)).size).toBe(4);
    // Point labels (feature mod 36): 0..3 incident vertex, 4..19 incident edge × side
    // plane, 20..35 corner of two side planes.
    const label = (p: V3) => nearest(cs, p).feature % 36;
    expect(label([0.5, -0.6, 0.5])).toBeLessThan(4);
    expect(label([0.5, 1, 0.5])).toBeGreaterThanOrEqual(4);
    expect(label([0.5, 1, 0.5])).toBeLessThan(20);
    expect(label([1, -0.6, 0.5])).toBeGreaterThanOrEqual(4);
    expect(label([1, -0.6, 0.5])).toBeLessThan(20);
    expect(label([1, 1, 0.5])).toBeGreaterThanOrEqual(20);
  });

  it("equal box turned 45° about z: 4 of the 8 octagon vertices of the clipped polygon", () => {
    // b's bottom face is the square |x| + |y| ≤ √2 (h = 1); clipped to |x|, |y| ≤ 1 it is
    // the regular octagon with vertices (±1, ±(√2 − 1)), (±(√2 − 1), ±1); 4 are kept.
    const cs = collide(
      box(1, 1, 0.5),
      pose([0, 0, 0]),
      box(1, 1, 0.5),
      pose([0, 0, 0.99], axisAngle([0, 0, 1], Math.PI / 4)),
    );
    expect(cs).toHaveLength(4);
    const t = S2 - 1;
    const octagon: V3[] = [];
    for (const s of [1, -1]) {
      for (const u of [t, -t]) {
        octagon.push([s, u, 0.495], [u, s, 0.495]);
      }
    }
    for (const c of cs) {
      const p = c.point;
      const hit = octagon.some((o) => Math.hypot(o[0] - p[0], o[1] - p[1], o[2] - p[2]) < 1e-12);
      expect(hit).toBe(true);
      expect(c.gap).toBeCloseTo(-0.01, 13);
      expectVec(c.normal, [0, 0, 1], 1e-12);
    }
    // The reduction spreads the points: the area of their convex hull is the largest
    // possible, the square of alternate octagon vertices, 2 R² with R² = 1 + t².
    const pts = cs.map((c) => [c.point[0], c.point[1]]);
    pts.sort((p, q) => Math.atan2(p[1], p[0]) - Math.atan2(q[1], q[0]));
    let area = 0;
    for (let i = 0; i < 4; i++) {
      const [x0, y0] = pts[i];
      const [x1, y1] = pts[(i + 1) % 4];
      area += 0.5 * (x0 * y1 - x1 * y0);
    }
    expect(area).toBeCloseTo(2 * (1 + t * t), 12);
  });

  it("crossed edges: one edge–edge contact", () => {
    // a: cube h = 0.5 turned 45° about x: top edge along x at z = √2/2.
    // b: cube turned 45° about y, centre z = √2 − 0.01: bottom edge along y at z = √2/2 − 0.01.
    const cs = collide(
      box(0.5, 0.5, 0.5),
      pose([0, 0, 0], axisAngle([1, 0, 0], Math.PI / 4)),
      box(0.5, 0.5, 0.5),
      pose([0, 0, S2 - 0.01], axisAngle([0, 1, 0], Math.PI / 4)),
    );
    const c = expectOne(cs);
    expect(c.gap).toBeCloseTo(-0.01, 12);
    expectVec(c.normal, [0, 0, 1], 1e-12);
    expectVec(c.point, [0, 0, S2 / 2 - 0.005], 1e-12);
    expect(c.feature).toBeGreaterThanOrEqual(2592); // edge–edge feature range
  });

  it("separated boxes: nothing beyond the margin, face points within it", () => {
    const pa = pose([0, 0, 0]);
    const pb = pose([0.2, 0.1, 1.05]); // 0.05 above a's top face
    expect(collide(box(1, 1, 0.5), pa, box(0.5, 0.5, 0.5), pb, 0.05)).toHaveLength(0);
    const cs = collide(box(1, 1, 0.5), pa, box(0.5, 0.5, 0.5), pb, 0.06);
    expect(cs).toHaveLength(4);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(0.05, 13);
      expect(c.point[2]).toBeCloseTo(0.525, 13);
    }
  });
});
