/**
 * Sphere pairs (src/engine/geometry/pairs/sphere.ts) against hand-computed contacts:
 * sphere–sphere and plane–sphere. Conventions checked everywhere: the normal points from
 * the first shape (a) to the second (b), gap = (p_b − p_a)·n is negative when
 * penetrating, and the point is the midpoint of the two surface points.
 */
import { describe, expect, it } from "vitest";
import type { PlaneShape } from "../../../../src/engine/geometry/shapes";
import { axisAngle } from "../../../support/quat";
import { collide, expectOne, expectVec, floor, pose, sphere } from "../helpers";

describe("sphere–sphere", () => {
  it("separated spheres: gap, normal, midpoint; reported only within the margin", () => {
    // |c_b − c_a| = 2, gap = 2 − 1 − 0.5 = 0.5; p_a = (1,0,0), p_b = (1.5,0,0).
    const pa = pose([0, 0, 0]);
    const pb = pose([2, 0, 0]);
    expect(collide(sphere(1), pa, sphere(0.5), pb, 0)).toHaveLength(0);
    expect(collide(sphere(1), pa, sphere(0.5), pb, 0.5)).toHaveLength(0); // gap < margin is strict
    const c = expectOne(collide(sphere(1), pa, sphere(0.5), pb, 0.6));
    expect(c.gap).toBeCloseTo(0.5, 14);
    expectVec(c.normal, [1, 0, 0]);
    expectVec(c.point, [1.25, 0, 0]);
  });

  it("penetrating spheres in an oblique direction, and the swapped order", () => {
    // d = (1.2, 0.5, 0), |d| = 1.3: gap = 1.3 − 1.5 = −0.2, n = (12, 5, 0)/13,
    // midpoint = c_a + n (r_a + gap/2) = 0.9 n.
    const pa = pose([0, 0, 0]);
    const pb = pose([1.2, 0.5, 0]);
    const c = expectOne(collide(sphere(1), pa, sphere(0.5), pb));
    expect(c.gap).toBeCloseTo(-0.2, 14);
    expectVec(c.normal, [12 / 13, 5 / 13, 0]);
    expectVec(c.point, [(0.9 * 12) / 13, (0.9 * 5) / 13, 0]);
    const r = expectOne(collide(sphere(0.5), pb, sphere(1), pa));
    expect(r.gap).toBeCloseTo(-0.2, 14);
    expectVec(r.normal, [-12 / 13, -5 / 13, 0]);
    expectVec(r.point, c.point);
  });
});

describe("sphere–plane", () => {
  it("sphere sinking into the floor", () => {
    // n·c − 0 − r = 0.4 − 0.5; p_a = (1,2,0), p_b = (1,2,−0.1).
    const c = expectOne(collide(floor, pose([0, 0, 0]), sphere(0.5), pose([1, 2, 0.4])));
    expect(c.gap).toBeCloseTo(-0.1, 14);
    expectVec(c.normal, [0, 0, 1]);
    expectVec(c.point, [1, 2, -0.05]);
  });

  it("plane on a rotated, translated body; sphere given first", () => {
    // Body at (0,0,1) turned +90° about x: the local normal e_z becomes (0,−1,0); the
    // world offset is n_w·p + 0.5 = 0.5, i.e. the surface y = −0.5 with solid y ≥ −0.5.
    // Sphere r = 1 at (0,−2,3): signed distance −(−2) − 0.5 = 1.5, gap 0.5.
    const plane: PlaneShape = { type: "plane", normal: [0, 0, 1], offset: 0.5 };
    const pp = pose([0, 0, 1], axisAngle([1, 0, 0], Math.PI / 2));
    const ps = pose([0, -2, 3]);
    expect(collide(plane, pp, sphere(1), ps, 0.5)).toHaveLength(0);
    const c = expectOne(collide(plane, pp, sphere(1), ps, 0.6));
    expect(c.gap).toBeCloseTo(0.5, 14);
    expectVec(c.normal, [0, -1, 0]);
    expectVec(c.point, [0, -2 + 1.25, 3]); // c − n (r + gap/2)
    const r = expectOne(collide(sphere(1), ps, plane, pp, 0.6));
    expectVec(r.normal, [0, 1, 0]);
    expectVec(r.point, c.point);
    expect(r.gap).toBeCloseTo(0.5, 14);
  });

  it("a non-unit normal describes the same surface (normal (0,0,2), offset 1 is z = 0.5)", () => {
    const plane: PlaneShape = { type: "plane", normal: [0, 0, 2], offset: 1 };
    const c = expectOne(collide(plane, pose([0, 0, 0]), sphere(0.25), pose([0, 0, 0.7])));
    expect(c.gap).toBeCloseTo(0.7 - 0.5 - 0.25, 14);
    expectVec(c.normal, [0, 0, 1]);
  });
});
