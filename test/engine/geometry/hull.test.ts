/**
 * The 3-D quickhull (geometry/hull.ts) and the hull as a convex core (convex/hull-core.ts),
 * against independent facts: a box's corners with interior, duplicate, edge and face
 * points give exactly its 8 corners, 6 squares and 12 edges; random points on a sphere
 * give a hull containing every point, made of input points, with Euler's V − E + F = 2;
 * volumes, centroids and inertias match the closed forms of a box (offset and rotated)
 * and a right tetrahedron; support queries by hill climbing equal brute-force maxima; flat
 * sets are refused.
 */
import { describe, expect, it } from "vitest";
import { HullCore } from "../../../src/engine/geometry/convex/hull-core";
import {
  boundingBox,
  convexHull,
  HILL_CLIMB_MIN,
  HullError,
  supportVertex,
} from "../../../src/engine/geometry/hull";
import { WorldPose } from "../../../src/engine/geometry/pose";
import { minstd } from "../../support/random";

function spherePoints(n: number, seed: number): Float64Array {
  const r = minstd(seed);
  const out = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {
    const u = 2 * r() - 1;
    const t = 2 * Math.PI * r();
    const s = Math.sqrt(1 - u * u);
    out.set([s * Math.cos(t), s * Math.sin(t), u], 3 * i);
  }
  return out;
}

describe("quickhull", () => {
  it("a box's corners among interior, duplicate, edge and face points: 8 vertices, 6 squares, 12 edges", () => {
    const pts: number[] = [];
    for (let v = 0; v < 8; v++) pts.push(v & 1 ? 1 : -1, v & 2 ? 2 : -2, v & 4 ? 3 : -3);
    pts.push(0, 0, 0, 1, 2, 3, 1, 0, 0, 0.5, 2, 1, 1, 2, 0, -1, -2, -3, 0.3, -0.2, 3);
    const h = convexHull(new Float64Array(pts));
    expect(h.source.length).toBe(8);
    expect(Array.from(h.source)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(h.faceStart.length - 1).toBe(6);
    for (let f = 0; f < 6; f++) expect(h.faceStart[f + 1] - h.faceStart[f]).toBe(4);
    expect(h.edges.length / 2).toBe(12);
    expect(h.box?.shape.halfExtents).toEqual([1, 2, 3]);
    // 2a × 2b × 2c box: V = 48, I_xx = m (b² + c²)/3 with m = V (unit density).
    expect(h.volume).toBeCloseTo(48, 12);
    expect(h.unitInertia[0]).toBeCloseTo((48 * (4 + 9)) / 3, 10);
    expect(h.unitInertia[4]).toBeCloseTo((48 * (1 + 9)) / 3, 10);
    expect(h.unitInertia[8]).toBeCloseTo((48 * (1 + 4)) / 3, 10);
  });

  it("2000 random points on a sphere: a closed hull of input points containing them all", () => {
    const pts = spherePoints(2000, 7);
    const h = convexHull(pts);
    const V = h.source.length;
    const E = h.edges.length / 2;
    const F = h.faceStart.length - 1;
    expect(V - E + F).toBe(2);
    let moved = 0;
    for (let k = 0; k < V; k++)
      for (let c = 0; c < 3; c++)
        moved = Math.max(moved, Math.abs(h.vertices[3 * k + c] - pts[3 * h.source[k] + c]));
    expect(moved).toBe(0);
    let outside = Number.NEGATIVE_INFINITY;
    for (let f = 0; f < F; f++)
      for (let i = 0; i < 2000; i++) {
        const s =
          h.faceNormals[3 * f] * pts[3 * i] +
          h.faceNormals[3 * f + 1] * pts[3 * i + 1] +
          h.faceNormals[3 * f + 2] * pts[3 * i + 2] -
          h.faceOffsets[f];
        outside = Math.max(outside, s);
      }
    expect(outside).toBeLessThan(1e-9);
    // Every edge has two faces.
    expect(
      Math.min(...Array.from({ length: E }, (_, e) => h.edgeFaces[2 * e + 1])),
    ).toBeGreaterThanOrEqual(0);
    // The volume approaches the ball's from below.
    expect(h.volume).toBeLessThan((4 / 3) * Math.PI);
    expect(h.volume).toBeGreaterThan(0.99 * (4 / 3) * Math.PI);
  });

  it("mass properties of a right tetrahedron, offset: V = abc/6, centroid at the corner mean, inertia by sampling", () => {
    const [a, b, c] = [1, 2, 3];
    const o = [5, -3, 2];
    const pts = new Float64Array([0, 0, 0, a, 0, 0, 0, b, 0, 0, 0, c].map((x, i) => x + o[i % 3]));
    const h = convexHull(pts);
    expect(h.volume).toBeCloseTo((a * b * c) / 6, 12);
    expect(h.centroid[0]).toBeCloseTo(o[0] + a / 4, 12);
    expect(h.centroid[1]).toBeCloseTo(o[1] + b / 4, 12);
    expect(h.centroid[2]).toBeCloseTo(o[2] + c / 4, 12);
    // Closed form about the corner (Tonon 2004): ∫x² dV = V a²/10, ∫xy dV = V ab/20; then
    // about the centroid by the parallel-axis theorem.
    const V = (a * b * c) / 6;
    const m2 = [a, b, c].map((s) => (V * s * s) / 10);
    const cm = [a / 4, b / 4, c / 4];
    const Cxx = m2[0] - V * cm[0] * cm[0];
    const Cyy = m2[1] - V * cm[1] * cm[1];
    const Czz = m2[2] - V * cm[2] * cm[2];
    const Cxy = (V * a * b) / 20 - V * cm[0] * cm[1];
    expect(h.unitInertia[0]).toBeCloseTo(Cyy + Czz, 12);
    expect(h.unitInertia[4]).toBeCloseTo(Cxx + Czz, 12);
    expect(h.unitInertia[8]).toBeCloseTo(Cxx + Cyy, 12);
    expect(h.unitInertia[1]).toBeCloseTo(-Cxy, 12);
  });

  it("flat, collinear, coincident or too few points are refused (HullError)", () => {
    const plane = new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0.3, 0.4, 0]);
    expect(() => convexHull(plane)).toThrow(HullError);
    expect(() => convexHull(plane)).toThrow(/plane/);
    expect(() => convexHull(new Float64Array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]))).toThrow(
      /line/,
    );
    expect(() => convexHull(new Float64Array(12).fill(1))).toThrow(/coincide/);
    expect(() => convexHull(new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0]))).toThrow(/at least 4/);
    expect(() =>
      convexHull(new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, Number.NaN])),
    ).toThrow(/not finite/);
  });

  it("support by hill climbing (500-vertex hull) equals the brute-force maximum over the vertices", () => {
    const h = convexHull(spherePoints(500, 3).map((x, i) => x * [1, 0.6, 0.3][i % 3]));
    const core = new HullCore().place(new WorldPose(), h);
    const r = minstd(11);
    const d = new Float64Array(3);
    const s = new Float64Array(3);
    let worst = 0;
    for (let k = 0; k < 2000; k++) {
      d.set([2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
      core.localSupport(d, s);
      let best = Number.NEGATIVE_INFINITY;
      for (let v = 0; v < h.source.length; v++)
        best = Math.max(
          best,
          d[0] * h.vertices[3 * v] + d[1] * h.vertices[3 * v + 1] + d[2] * h.vertices[3 * v + 2],
        );
      worst = Math.max(worst, Math.abs(d[0] * s[0] + d[1] * s[1] + d[2] * s[2] - best));
    }
    expect(worst).toBe(0);
  });

  it("supportVertex from any hint: a brute-force maximizer, the answer left in the hint", () => {
    const h = convexHull(spherePoints(400, 5).map((x, i) => x * [0.5, 1, 0.7][i % 3]));
    const V = h.source.length;
    expect(V).toBeGreaterThanOrEqual(HILL_CLIMB_MIN);
    const r = minstd(23);
    const d = new Float64Array(3);
    const hint = new Int32Array(1);
    for (let k = 0; k < 1000; k++) {
      d.set([2 * r() - 1, 2 * r() - 1, 2 * r() - 1]);
      hint[0] = Math.floor(r() * V);
      const v = supportVertex(h, d, hint);
      let best = Number.NEGATIVE_INFINITY;
      for (let w = 0; w < V; w++)
        best = Math.max(
          best,
          d[0] * h.vertices[3 * w] + d[1] * h.vertices[3 * w + 1] + d[2] * h.vertices[3 * w + 2],
        );
      expect(
        d[0] * h.vertices[3 * v] + d[1] * h.vertices[3 * v + 1] + d[2] * h.vertices[3 * v + 2],
      ).toBe(best);
      expect(hint[0]).toBe(v);
    }
  });

  it("supportVertex along directions ⟂ an edge tied at its two ends: the lower index from every hint", () => {
    // Integer coordinates and directions d = e × r (e an edge, r an integer vector): every
    // d·x is exact, so the two ends of a maximizing edge tie exactly, as where GJK searches
    // ⟂ its simplex's edge. The scan's answer (the lower index) must come out whatever the
    // climb's start.
    const unit = spherePoints(300, 7);
    const pts = unit.map((x, i) => Math.round(x * [1000, 700, 500][i % 3]));
    const h = convexHull(pts);
    const V = h.source.length;
    const x = h.vertices;
    expect(V).toBeGreaterThanOrEqual(HILL_CLIMB_MIN);
    const r = minstd(11);
    const d = new Float64Array(3);
    const hint = new Int32Array(1);
    let ties = 0;
    for (let e = 0; e < h.edges.length / 2; e++)
      for (let k = 0; k < 5; k++) {
        const u = h.edges[2 * e];
        const w = h.edges[2 * e + 1];
        const ex = x[3 * w] - x[3 * u];
        const ey = x[3 * w + 1] - x[3 * u + 1];
        const ez = x[3 * w + 2] - x[3 * u + 2];
        const rx = Math.round(20 * r() - 10);
        const ry = Math.round(20 * r() - 10);
        const rz = Math.round(20 * r() - 10);
        d.set([ey * rz - ez * ry, ez * rx - ex * rz, ex * ry - ey * rx]);
        const top = (v: number) => d[0] * x[3 * v] + d[1] * x[3 * v + 1] + d[2] * x[3 * v + 2];
        let best = Number.NEGATIVE_INFINITY;
        for (let v = 0; v < V; v++) best = Math.max(best, top(v));
        const tied: number[] = [];
        for (let v = 0; v < V; v++) if (top(v) === best) tied.push(v);
        if (tied.length !== 2) continue;
        ties++;
        for (let s = 0; s < V; s++) {
          hint[0] = s;
          expect(supportVertex(h, d, hint)).toBe(tied[0]);
        }
      }
    expect(ties).toBeGreaterThan(50);
  });

  it("supportVertex of a small hull scans: ties give the lowest vertex index", () => {
    // A box's corners: along +x four corners tie, along +x+y two, along a generic direction one.
    const h = convexHull(
      new Float64Array([
        -1, -2, -3, 1, -2, -3, -1, 2, -3, 1, 2, -3, -1, -2, 3, 1, -2, 3, -1, 2, 3, 1, 2, 3,
      ]),
    );
    const x = h.vertices;
    for (const dir of [
      [1, 0, 0],
      [0, -1, 0],
      [1, 1, 0],
      [0.3, -0.2, 0.9],
    ]) {
      const v = supportVertex(h, dir);
      const top = (w: number) => dir[0] * x[3 * w] + dir[1] * x[3 * w + 1] + dir[2] * x[3 * w + 2];
      let first = 0;
      for (let w = 1; w < h.source.length; w++) if (top(w) > top(first)) first = w;
      expect(v).toBe(first);
    }
  });

  it("boundingBox: centre and half-widths of the coordinates' ranges", () => {
    const r = minstd(3);
    const pts = Float64Array.from({ length: 300 }, () => 4 * r() - 1);
    const { center, half } = boundingBox(pts);
    for (let c = 0; c < 3; c++) {
      const xs = Array.from({ length: 100 }, (_, k) => pts[3 * k + c]);
      const lo = Math.min(...xs);
      const hi = Math.max(...xs);
      expect(center[c]).toBe((lo + hi) / 2);
      expect(half[c]).toBe((hi - lo) / 2);
    }
  });
});
