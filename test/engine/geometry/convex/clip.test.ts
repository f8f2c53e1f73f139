/**
 * The shared Sutherland–Hodgman clipper (convex/clip.ts, used by box–box and the convex
 * manifolds): a square turned 45° clipped by an axis-aligned square is the regular
 * octagon, every vertex an edge cut, exactly on the sides; a cut vertex's label names the
 * input edge and the side.
 */
import { describe, expect, it } from "vitest";
import {
  CLIP_IN,
  CLIP_IN_LABELS,
  clipPolygon,
  clipped,
  SIDE_AXIS,
  SIDES,
} from "../../../../src/engine/geometry/convex/clip";

describe("reference-polygon clipping", () => {
  it("a square turned 45° clipped by an axis-aligned square is the regular octagon", () => {
    // Reference: the square |x|, |y| ≤ 1 (sides along the frame axes, as a box face's).
    for (let k = 0; k < 4; k++) {
      SIDES[3 * k] = k < 2 ? 1 : -1;
      SIDES[3 * k + 1] = 0;
      SIDES[3 * k + 2] = 1;
      SIDE_AXIS[k] = k & 1;
    }
    // Incident: the square of half-diagonal √2 turned 45°, at height 0.1 (labels 0..3).
    const s2 = Math.SQRT2;
    const verts = [
      [s2, 0],
      [0, s2],
      [-s2, 0],
      [0, -s2],
    ];
    verts.forEach(([x, y], q) => {
      CLIP_IN.set([x, y, 0.1], 3 * q);
      CLIP_IN_LABELS[q] = q;
    });
    const n = clipPolygon(4, 4, 4);
    expect(n).toBe(8);
    const pts = clipped.points;
    for (let i = 0; i < n; i++) {
      const x = pts[3 * i];
      const y = pts[3 * i + 1];
      expect(pts[3 * i + 2]).toBeCloseTo(0.1, 15);
      // On a side, exactly (the cut coordinate is snapped), and within the square.
      expect(Math.abs(x) === 1 || Math.abs(y) === 1).toBe(true);
      expect(Math.max(Math.abs(x), Math.abs(y))).toBe(1);
      // Every vertex is an edge cut: label 4 + 4e + k (stride 4).
      const label = clipped.labels[i];
      expect(label).toBeGreaterThanOrEqual(4);
      expect(label).toBeLessThan(20);
      const e = ((label - 4) / 4) | 0;
      const k = (label - 4) % 4;
      // The cut lies on side k (x = 1, y = 1, x = −1, y = −1 for k = 0..3) ...
      expect(k & 1 ? y : x).toBe(k < 2 ? 1 : -1);
      // ... and on the input edge e, from vertex e to e + 1: on the line |x| + |y| = √2
      // through them, in the quadrant between them.
      const [ex0, ey0] = verts[e];
      const [ex1, ey1] = verts[(e + 1) % 4];
      expect(Math.abs(x) + Math.abs(y)).toBeCloseTo(s2, 14);
      expect(x * (ex0 + ex1)).toBeGreaterThanOrEqual(0);
      expect(y * (ey0 + ey1)).toBeGreaterThanOrEqual(0);
    }
  });
});
