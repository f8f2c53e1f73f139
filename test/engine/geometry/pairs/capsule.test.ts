/**
 * Capsule pairs (src/engine/geometry/pairs/capsule.ts) against hand-computed contacts:
 * capsule–sphere, plane–capsule and capsule–capsule (crossing, parallel: two points).
 */
import { describe, expect, it } from "vitest";
import { axisAngle } from "../../../support/quat";
import {
  ALONG_X,
  ALONG_Y,
  capsule,
  collide,
  expectOne,
  expectVec,
  floor,
  nearest,
  pose,
  sphere,
} from "../helpers";

describe("sphere–capsule", () => {
  // Capsule r = 0.5, half-length 1, axis along world x, centred at the origin.
  const cap = capsule(0.5, 1);
  const pc = pose([0, 0, 0], ALONG_X);

  it("sphere over the cylindrical part", () => {
    // Closest axis point (0.5, 0, 0), distance 0.7 → gap 0.7 − 0.8 = −0.1, n = e_z.
    const c = expectOne(collide(cap, pc, sphere(0.3), pose([0.5, 0, 0.7])));
    expect(c.gap).toBeCloseTo(-0.1, 13);
    expectVec(c.normal, [0, 0, 1], 1e-12);
    expectVec(c.point, [0.5, 0, 0.45], 1e-12);
  });

  it("sphere near the end cap, sphere given first", () => {
    // Axis end (1,0,0); d = (0.6, 0, 0.8), |d| = 1 → gap 1 − 0.8 = 0.2; n = (0.6, 0, 0.8);
    // point = (1,0,0) + (0.5 + 0.1) n.
    const c = expectOne(collide(cap, pc, sphere(0.3), pose([1.6, 0, 0.8]), 0.3));
    expect(c.gap).toBeCloseTo(0.2, 13);
    expectVec(c.normal, [0.6, 0, 0.8], 1e-12);
    expectVec(c.point, [1.36, 0, 0.48], 1e-12);
    const r = expectOne(collide(sphere(0.3), pose([1.6, 0, 0.8]), cap, pc, 0.3));
    expectVec(r.normal, [-0.6, 0, -0.8], 1e-12);
    expectVec(r.point, [1.36, 0, 0.48], 1e-12);
  });
});

describe("capsule–plane", () => {
  it("lying capsule: two contacts at the ends of its axis", () => {
    // r = 0.2, L = 0.5, axis along x at height 0.19: both ends 0.01 deep at x = ∓0.5.
    const cs = collide(floor, pose([0, 0, 0]), capsule(0.2, 0.5), pose([0, 0, 0.19], ALONG_X));
    expect(cs).toHaveLength(2);
    const lo = nearest(cs, [-0.5, 0, 0]);
    const hi = nearest(cs, [0.5, 0, 0]);
    for (const c of [lo, hi]) {
      expect(c.gap).toBeCloseTo(-0.01, 13);
      expectVec(c.normal, [0, 0, 1]);
    }
    expectVec(lo.point, [-0.5, 0, -0.005], 1e-12);
    expectVec(hi.point, [0.5, 0, -0.005], 1e-12);
    expect(lo.feature).toBe(0); // the −z end (local −z maps to world −x)
    expect(hi.feature).toBe(1);
  });

  it("standing capsule: only its lower end, touching", () => {
    // Centre z = 0.7, L = 0.5, r = 0.2: lower end sphere touches (gap 0), upper gap 1.
    const cs = collide(floor, pose([0, 0, 0]), capsule(0.2, 0.5), pose([0.3, 0.1, 0.7]), 0.01);
    const c = expectOne(cs);
    expect(c.gap).toBeCloseTo(0, 14);
    expectVec(c.point, [0.3, 0.1, 0], 1e-14);
    expect(c.feature).toBe(0);
  });

  it("tilted capsule: end heights follow c ± L (sin θ, 0, cos θ)", () => {
    // 30° about y: axis (1/2, 0, √3/2). Centre (0,0,1), L = 0.5, r = 0.2.
    const cs = collide(
      floor,
      pose([0, 0, 0]),
      capsule(0.2, 0.5),
      pose([0, 0, 1], axisAngle([0, 1, 0], Math.PI / 6)),
      2,
    );
    expect(cs).toHaveLength(2);
    const end0 = cs.find((c) => c.feature === 0)!;
    const end1 = cs.find((c) => c.feature === 1)!;
    expect(end0.gap).toBeCloseTo(1 - 0.25 * Math.sqrt(3) - 0.2, 13);
    expect(end1.gap).toBeCloseTo(1 + 0.25 * Math.sqrt(3) - 0.2, 13);
    expectVec(end0.point, [-0.25, 0, end0.gap / 2], 1e-12);
  });
});

describe("capsule–capsule", () => {
  it("crossing capsules: one contact between the axes' closest points", () => {
    // a along x at the origin, b along y at height 0.9; radii 0.5: gap −0.1.
    const c = expectOne(
      collide(
        capsule(0.5, 1),
        pose([0, 0, 0], ALONG_X),
        capsule(0.5, 1),
        pose([0, 0, 0.9], ALONG_Y),
      ),
    );
    expect(c.gap).toBeCloseTo(-0.1, 13);
    expectVec(c.normal, [0, 0, 1], 1e-12);
    expectVec(c.point, [0, 0, 0.45], 1e-12);
    expect(c.feature).toBe(0);
  });

  it("parallel capsules: two contacts at the ends of the overlap of the axes", () => {
    // a spans x ∈ [−1, 1], b (centre (0.5, 0, 0.9)) spans x ∈ [−0.5, 1.5]: overlap [−0.5, 1].
    const cs = collide(
      capsule(0.5, 1),
      pose([0, 0, 0], ALONG_X),
      capsule(0.5, 1),
      pose([0.5, 0, 0.9], ALONG_X),
    );
    expect(cs).toHaveLength(2);
    const p = nearest(cs, [-0.5, 0, 0.45]);
    const q = nearest(cs, [1, 0, 0.45]);
    expectVec(p.point, [-0.5, 0, 0.45], 1e-12);
    expectVec(q.point, [1, 0, 0.45], 1e-12);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.1, 13);
      expectVec(c.normal, [0, 0, 1], 1e-12);
    }
    expect(new Set(cs.map((c) => c.feature))).toEqual(new Set([1, 2]));
  });

  it("end to end: closest points are the two axis end points", () => {
    // a along x (end (1,0,0)); b vertical, centre (1.3, 0, 1.6), L = 1: lower end (1.3, 0, 0.6).
    // d = (0.3, 0, 0.6), |d| = √0.45; radii 0.3 → gap √0.45 − 0.6.
    const c = expectOne(
      collide(capsule(0.3, 1), pose([0, 0, 0], ALONG_X), capsule(0.3, 1), pose([1.3, 0, 1.6]), 0.1),
    );
    const dist = Math.sqrt(0.45);
    expect(c.gap).toBeCloseTo(dist - 0.6, 13);
    expectVec(c.normal, [0.3 / dist, 0, 0.6 / dist], 1e-12);
    const m = 0.3 + (dist - 0.6) / 2;
    expectVec(c.point, [1 + (m * 0.3) / dist, 0, (m * 0.6) / dist], 1e-12);
  });
});
