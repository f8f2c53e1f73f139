/**
 * The pair functions' helpers (helpers.ts) against brute force and closed forms: the
 * closest points of two segments (dense sampling of both parameters), the same through
 * centres and axes, a polytope's vertices against a plane (every vertex's gap written
 * out, sorted), b's origin in a's frame (Rᵀ (p_b − p_a) with the rotation of the
 * quaternion), the perpendiculars, and the contact pushes' midpoint rule.
 */
import { describe, expect, it } from "vitest";
import { ContactBuffer } from "../../../src/engine/geometry/contact-buffer";
import {
  AXES,
  CONTACT,
  closestOnAxes,
  crossLeastAxis,
  HIT,
  inFrameOf,
  MARGIN,
  NF,
  PERP,
  PERP_IN,
  PLANE,
  perpendicular,
  planeVertices,
  pushContactFromA,
  pushPlaneContact,
  SEGMENTS,
  ST,
  segmentSegment,
} from "../../../src/engine/geometry/helpers";
import { axisAngle, rotate, rotationMatrix, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { pose } from "./helpers";

const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const at = (p: V3, d: V3, s: number): V3 => [p[0] + s * d[0], p[1] + s * d[1], p[2] + s * d[2]];
const dist = (a: V3, b: V3) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);

/** min over s, t ∈ [0, 1] (a grid of n + 1 values each) of |P1 + s d1 − P2 − t d2|. */
function sampledSegmentDistance(p1: V3, d1: V3, p2: V3, d2: V3, n: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i <= n; i++)
    for (let j = 0; j <= n; j++) best = Math.min(best, dist(at(p1, d1, i / n), at(p2, d2, j / n)));
  return best;
}

describe("closest points of two segments", () => {
  it("segmentSegment: s, t in [0, 1] reach the sampled minimum distance (random, parallel, degenerate)", () => {
    const r = mulberry32(4);
    const v = (k: number): V3 => [k * (2 * r() - 1), k * (2 * r() - 1), k * (2 * r() - 1)];
    for (let trial = 0; trial < 140; trial++) {
      const p1 = v(1);
      const d1 = v(1);
      const p2 = v(1);
      // Every 5th pair parallel, every 7th with a point for its second segment.
      let d2 = v(1);
      if (trial % 5 === 0) d2 = [0.7 * d1[0], 0.7 * d1[1], 0.7 * d1[2]];
      if (trial % 7 === 0) d2 = [0, 0, 0];
      SEGMENTS.set([...p1, ...d1, ...p2, ...d2]);
      segmentSegment();
      const [s, t] = ST;
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(1);
      expect(t).toBeGreaterThanOrEqual(0);
      expect(t).toBeLessThanOrEqual(1);
      const got = dist(at(p1, d1, s), at(p2, d2, t));
      // The grid's minimum is at most (|d1| + |d2|)/(2n) above the true one.
      const n = 250;
      const sampled = sampledSegmentDistance(p1, d1, p2, d2, n);
      expect(got).toBeLessThanOrEqual(sampled + 1e-12);
      expect(got).toBeGreaterThanOrEqual(
        sampled - (Math.hypot(...d1) + Math.hypot(...d2)) / (2 * n) - 1e-12,
      );
    }
  });

  it("closestOnAxes: the segments c ± L u, their closest points where segmentSegment puts them", () => {
    const r = mulberry32(9);
    for (let trial = 0; trial < 100; trial++) {
      const ca: V3 = [r(), r(), r()];
      const cb: V3 = [r(), r(), r()];
      const ua = rotate(axisAngle([r(), r(), r() - 0.5], 6 * r()), [0, 0, 1]);
      const ub = rotate(axisAngle([r() - 0.5, r(), r()], 6 * r()), [1, 0, 0]);
      const La = 0.5 * r();
      const Lb = 0.5 * r();
      AXES.set([...ca, ...ua, La, ...cb, ...ub, Lb]);
      closestOnAxes();
      const qa: V3 = [AXES[14], AXES[15], AXES[16]];
      const qb: V3 = [AXES[17], AXES[18], AXES[19]];
      // On their segments: |(q − c)·u| ≤ L and no part off the axis.
      for (const [q, c, u, L] of [
        [qa, ca, ua, La],
        [qb, cb, ub, Lb],
      ] as [V3, V3, V3, number][]) {
        const off: V3 = [q[0] - c[0], q[1] - c[1], q[2] - c[2]];
        const along = dot(off, u);
        expect(Math.abs(along)).toBeLessThanOrEqual(L + 1e-12);
        expect(dist(q, at(c, u, along))).toBeLessThan(1e-12);
      }
      const sampled = sampledSegmentDistance(
        at(ca, ua, -La),
        [2 * La * ua[0], 2 * La * ua[1], 2 * La * ua[2]],
        at(cb, ub, -Lb),
        [2 * Lb * ub[0], 2 * Lb * ub[1], 2 * Lb * ub[2]],
        200,
      );
      expect(dist(qa, qb)).toBeLessThanOrEqual(sampled + 1e-12);
      expect(dist(qa, qb)).toBeGreaterThanOrEqual(sampled - (La + Lb) / 200 - 1e-12);
    }
  });
});

describe("a polytope's vertices against a plane", () => {
  it("planeVertices: the 4 smallest gaps n·(c + R v) − d below the margin, ties by index", () => {
    const r = mulberry32(17);
    for (let trial = 0; trial < 200; trial++) {
      const V = 3 + Math.floor(20 * r());
      // Every 4th polytope has all its vertices at one height (ties everywhere).
      const flat = trial % 4 === 0;
      const x = Float64Array.from({ length: 3 * V }, (_, k) =>
        flat && k % 3 === 2 ? 0 : r() - 0.5,
      );
      const q = flat ? ([1, 0, 0, 0] as const) : axisAngle([r(), r() - 0.5, r()], 6 * r());
      const c: V3 = [r(), r(), 0.2 * r()];
      const pb = pose(c, [...q]);
      const n = rotate(axisAngle([1, 0, 0], flat ? 0 : 0.3 * r()), [0, 0, 1]);
      const d = 0.05 * r();
      PLANE.set([...n, d]);
      const margin = 0.02;
      MARGIN[0] = margin;
      const out = new ContactBuffer(2);
      out.setPair(0, 1, 0, 1);
      planeVertices(x, V, pb, out);
      // Reference: every vertex's world position and gap, the ones below the margin sorted
      // by gap (a stable sort keeps the lower index first among ties), the first four.
      const Rm = rotationMatrix([...q]);
      const world = (v: number): V3 => {
        const l = [x[3 * v], x[3 * v + 1], x[3 * v + 2]];
        return [0, 1, 2].map((i) => c[i] + dot(Rm[i], l)) as V3;
      };
      const ref = Array.from({ length: V }, (_, v) => ({ v, g: dot(n, world(v)) - d }))
        .filter((e) => e.g < margin)
        .sort((a, b) => a.g - b.g)
        .slice(0, 4);
      expect(out.count).toBe(ref.length);
      for (let k = 0; k < out.count; k++) {
        expect(out.feature[k]).toBe(ref[k].v);
        expect(out.gap[k]).toBeCloseTo(ref[k].g, 12);
        // The midpoint between the vertex and its foot on the plane; normal n.
        const w = world(ref[k].v);
        for (let i = 0; i < 3; i++) {
          expect(out.point[3 * k + i]).toBeCloseTo(w[i] - 0.5 * ref[k].g * n[i], 12);
          expect(out.normal[3 * k + i]).toBeCloseTo(n[i], 15);
        }
      }
    }
  });

  it("pushPlaneContact: p_a = x − s n on the plane, reported at the midpoint p_a + (gap/2) n", () => {
    const n: V3 = [0, 0.6, 0.8];
    PLANE.set([...n, 0.1]);
    // A sphere of radius 0.05 whose centre is 0.07 above the plane: s = 0.07, gap = 0.02.
    const x: V3 = [0.3, 0.1 * 0.6 + 0.07 * 0.6, 0.1 * 0.8 + 0.07 * 0.8];
    HIT.set([...x, 0.07, 0.02]);
    const out = new ContactBuffer(1);
    out.setPair(0, 1, 0, 1);
    pushPlaneContact(out, 5);
    expect(out.count).toBe(1);
    expect(out.feature[0]).toBe(5);
    expect(out.gap[0]).toBe(0.02);
    for (let i = 0; i < 3; i++) {
      expect(out.point[i]).toBeCloseTo(x[i] - 0.07 * n[i] + 0.01 * n[i], 15);
      expect(out.normal[i]).toBe(n[i]);
    }
    // The foot is on the plane n·p = 0.1.
    const foot = [0, 1, 2].map((i) => out.point[i] - 0.01 * n[i]);
    expect(dot(foot, n)).toBeCloseTo(0.1, 15);
    // pushContactFromA: the same rule from a's surface point.
    CONTACT.set([1, 2, 3, 1, 0, 0, -0.4]);
    pushContactFromA(out, 0);
    expect([out.point[3], out.point[4], out.point[5]]).toEqual([0.8, 2, 3]);
  });
});

describe("frames and perpendiculars", () => {
  it("inFrameOf: Rᵀ (p_b − p_a), the inverse of x = p_a + R x_local", () => {
    const r = mulberry32(2);
    const out = new Float64Array(4);
    for (let trial = 0; trial < 50; trial++) {
      const q = axisAngle([r() - 0.5, r(), r()], 6 * r());
      const pa = pose([r(), r(), r()], q);
      const local: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      const pb = pose([0, 1, 2].map((i) => pa.p[i] + rotate(q, local)[i]) as V3, [1, 0, 0, 0]);
      inFrameOf(pa, pb, out, 1);
      for (let i = 0; i < 3; i++) expect(out[1 + i]).toBeCloseTo(local[i], 14);
    }
  });

  it("crossLeastAxis and perpendicular: ⟂ v, |v × e_k| ≥ |v|√(2/3), oriented along g, +z for 0", () => {
    const r = mulberry32(6);
    for (let trial = 0; trial < 200; trial++) {
      const v: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      crossLeastAxis(Float64Array.from(v), 0);
      expect(Math.abs(dot(PERP, v))).toBeLessThan(1e-15);
      expect(Math.hypot(...PERP)).toBeGreaterThanOrEqual(
        Math.hypot(...v) * Math.sqrt(2 / 3) - 1e-15,
      );
      const u = v.map((c) => c / Math.hypot(...v));
      const g: V3 = [r() - 0.5, r() - 0.5, r() - 0.5];
      PERP_IN.set([...u, ...g]);
      perpendicular();
      expect(Math.hypot(...NF)).toBeCloseTo(1, 15);
      expect(Math.abs(dot(NF, u))).toBeLessThan(1e-15);
      expect(dot(NF, g)).toBeGreaterThanOrEqual(0);
    }
    PERP_IN.fill(0);
    perpendicular();
    expect(Array.from(NF)).toEqual([0, 0, 1]);
  });
});
