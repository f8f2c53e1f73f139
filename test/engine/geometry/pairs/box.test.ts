/**
 * Box pairs in closed form (src/engine/geometry/pairs/box.ts) against hand-computed
 * contacts: box–sphere (face, edge and vertex regions, inside), plane–box (resting on a
 * face, an edge, a vertex) and box–capsule (crossing, lying on a face: two points).
 */
import { describe, expect, it } from "vitest";
import { axisAngle, rotate, type V3 } from "../../../support/quat";
import {
  ALONG_X,
  box,
  capsule,
  collide,
  expectOne,
  expectVec,
  floor,
  nearest,
  pose,
  sphere,
} from "../helpers";

const S2 = Math.SQRT2;

describe("sphere–box", () => {
  // Box h = (1, 2, 3) turned +90° about z: local x → world y, local y → world −x, so in
  // the world it spans |x| ≤ 2, |y| ≤ 1, |z| ≤ 3.
  const b = box(1, 2, 3);
  const pb = pose([0, 0, 0], axisAngle([0, 0, 1], Math.PI / 2));

  it("face region: the world face y = 1 (local +x face, region code 2 + 3 + 9 = 14)", () => {
    // Sphere r = 0.5 at (0, 1.3, 0): gap 0.3 − 0.5, p_a = (0,1,0), point (0, 0.9, 0).
    const c = expectOne(collide(b, pb, sphere(0.5), pose([0, 1.3, 0])));
    expect(c.gap).toBeCloseTo(-0.2, 13);
    expectVec(c.normal, [0, 1, 0], 1e-12);
    expectVec(c.point, [0, 0.9, 0], 1e-12);
    expect(c.feature).toBe(14);
    // Sphere first: the normal flips, the rest is unchanged.
    const r = expectOne(collide(sphere(0.5), pose([0, 1.3, 0]), b, pb));
    expectVec(r.normal, [0, -1, 0], 1e-12);
    expect(r.gap).toBeCloseTo(-0.2, 13);
  });

  it("edge region: closest point on the edge x = 2, y = 1", () => {
    // c = (2.3, 1.4, 0): c − (2, 1, 0) = (0.3, 0.4, 0), distance 0.5; r = 0.6 → gap −0.1,
    // n = (0.6, 0.8, 0), point = (2,1,0) − 0.05 n.
    const c = expectOne(collide(b, pb, sphere(0.6), pose([2.3, 1.4, 0])));
    expect(c.gap).toBeCloseTo(-0.1, 13);
    expectVec(c.normal, [0.6, 0.8, 0], 1e-12);
    expectVec(c.point, [2 - 0.03, 1 - 0.04, 0], 1e-12);
  });

  it("vertex region: separated by 0.05, reported with margin 0.1", () => {
    // c − (2,1,3) = (0.2, 0.2, 0.1), distance 0.3; r = 0.25 → gap 0.05, n = (2,2,1)/3.
    expect(collide(b, pb, sphere(0.25), pose([2.2, 1.2, 3.1]), 0.05)).toHaveLength(0);
    const c = expectOne(collide(b, pb, sphere(0.25), pose([2.2, 1.2, 3.1]), 0.1));
    expect(c.gap).toBeCloseTo(0.05, 13);
    expectVec(c.normal, [2 / 3, 2 / 3, 1 / 3], 1e-12);
    expectVec(c.point, [2 + 0.025 * (2 / 3), 1 + 0.025 * (2 / 3), 3 + 0.025 / 3], 1e-12);
  });

  it("centre inside the box: nearest face, same feature as from outside", () => {
    // c = (0, 0.8, 0.5): depths to the faces y=1: 0.2, x=±2: 2, z=3: 2.5 → face y = 1;
    // gap = −0.2 − 0.1, p_a = (0, 1, 0.5), point = p_a − 0.15 n.
    const c = expectOne(collide(b, pb, sphere(0.1), pose([0, 0.8, 0.5])));
    expect(c.gap).toBeCloseTo(-0.3, 13);
    expectVec(c.normal, [0, 1, 0], 1e-12);
    expectVec(c.point, [0, 0.85, 0.5], 1e-12);
    expect(c.feature).toBe(14);
  });
});

describe("box–plane", () => {
  it("axis-aligned box 0.1 deep: its 4 bottom vertices", () => {
    const cs = collide(floor, pose([0, 0, 0]), box(1, 2, 3), pose([0, 0, 2.9]));
    expect(cs).toHaveLength(4);
    for (const [x, y] of [
      [-1, -2],
      [1, -2],
      [-1, 2],
      [1, 2],
    ]) {
      const c = nearest(cs, [x, y, 0]);
      expectVec(c.point, [x, y, -0.05], 1e-12);
      expect(c.gap).toBeCloseTo(-0.1, 13);
      expectVec(c.normal, [0, 0, 1]);
    }
    expect(new Set(cs.map((c) => c.feature))).toEqual(new Set([0, 1, 2, 3])); // bit 2 clear: −z
  });

  it("box turned 45° about z resting on the floor: the rotated bottom square", () => {
    // h = (1, 1, 0.5) at height 0.5: bottom vertices (±1, ±1) turned 45° → (±√2, 0), (0, ±√2).
    const cs = collide(
      floor,
      pose([0, 0, 0]),
      box(1, 1, 0.5),
      pose([0, 0, 0.5], axisAngle([0, 0, 1], Math.PI / 4)),
      1e-9,
    );
    expect(cs).toHaveLength(4);
    for (const p of [
      [S2, 0, 0],
      [-S2, 0, 0],
      [0, S2, 0],
      [0, -S2, 0],
    ] as V3[]) {
      const c = nearest(cs, p);
      expectVec(c.point, p, 1e-12);
      expect(Math.abs(c.gap)).toBeLessThan(1e-14);
    }
  });

  it("box turned 45° about x stands on an edge: 2 contacts", () => {
    // Cube h = 1 turned 45° about x: vertex height c_z + (y_l + z_l)/√2, lowest for
    // y_l = z_l = −1: c_z − √2; world y of those vertices: (−1 + 1)/√2 = 0.
    const cs = collide(
      floor,
      pose([0, 0, 0]),
      box(1, 1, 1),
      pose([0, 0, S2 - 0.05], axisAngle([1, 0, 0], Math.PI / 4)),
      0.01,
    );
    expect(cs).toHaveLength(2);
    expectVec(nearest(cs, [1, 0, 0]).point, [1, 0, -0.025], 1e-12);
    expectVec(nearest(cs, [-1, 0, 0]).point, [-1, 0, -0.025], 1e-12);
    for (const c of cs) expect(c.gap).toBeCloseTo(-0.05, 13);
  });

  it("box on a vertex: 1 contact", () => {
    // Rotate the diagonal (−1,−1,−1)/√3 onto −e_z: angle acos(1/√3) about (−1,−1,−1) × (0,0,−1).
    const u: V3 = [-1 / Math.sqrt(3), -1 / Math.sqrt(3), -1 / Math.sqrt(3)];
    const axis: V3 = [u[1] * -1 - 0, 0 - u[0] * -1, 0];
    const q = axisAngle(axis, Math.acos(1 / Math.sqrt(3)));
    expectVec(rotate(q, u), [0, 0, -1], 1e-12);
    const c = expectOne(
      collide(floor, pose([0, 0, 0]), box(1, 1, 1), pose([0.2, 0.3, Math.sqrt(3) - 0.02], q), 0.1),
    );
    expect(c.gap).toBeCloseTo(-0.02, 12);
    expectVec(c.point, [0.2, 0.3, -0.01], 1e-12);
    expect(c.feature).toBe(0); // the (−,−,−) vertex
  });

  it("more than 4 vertices within the margin: the 4 deepest are kept", () => {
    const cs = collide(floor, pose([0, 0, 0]), box(1, 1, 1), pose([0, 0, 0.5]), 10);
    expect(cs).toHaveLength(4);
    for (const c of cs) expect(c.gap).toBeCloseTo(-0.5, 14);
  });

  it("plane given second: normal from the box to the plane", () => {
    const cs = collide(box(1, 1, 1), pose([0, 0, 0.9]), floor, pose([0, 0, 0]));
    expect(cs).toHaveLength(4);
    for (const c of cs) {
      expectVec(c.normal, [0, 0, -1]);
      expect(c.gap).toBeCloseTo(-0.1, 14);
    }
  });
});

describe("box–capsule", () => {
  const b = box(2, 2, 1); // top face z = 1

  it("capsule lying on the top face: two contacts at its axis ends", () => {
    // r = 0.25, L = 1, axis along x, centre (0.3, 0.4, 1.2): 0.05 deep at x = −0.7 and 1.3.
    const cs = collide(b, pose([0, 0, 0]), capsule(0.25, 1), pose([0.3, 0.4, 1.2], ALONG_X));
    expect(cs).toHaveLength(2);
    const p = nearest(cs, [-0.7, 0.4, 1]);
    const q = nearest(cs, [1.3, 0.4, 1]);
    expectVec(p.point, [-0.7, 0.4, 0.975], 1e-9);
    expectVec(q.point, [1.3, 0.4, 0.975], 1e-9);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(-0.05, 9);
      expectVec(c.normal, [0, 0, 1], 1e-12);
    }
    // Face +z is face index 4: features 27 + 2·4 + end.
    expect(p.feature).toBe(35);
    expect(q.feature).toBe(36);
  });

  it("capsule overhanging the edge: the lying segment is clipped to the face", () => {
    // Centre (1.5, 0, 1.2), axis spans x ∈ [0.5, 2.5]; the face ends at x = 2.
    const cs = collide(b, pose([0, 0, 0]), capsule(0.25, 1), pose([1.5, 0, 1.2], ALONG_X));
    expect(cs).toHaveLength(2);
    expectVec(nearest(cs, [0.5, 0, 1]).point, [0.5, 0, 0.975], 1e-9);
    expectVec(nearest(cs, [2, 0, 1]).point, [2, 0, 0.975], 1e-9);
  });

  it("capsule standing on the face: its lower end only", () => {
    // Bottom end centre at z = 1 + 0.25 − 0.02 → gap −0.02; face region code 1 + 3 + 18 = 22.
    const c = expectOne(
      collide(b, pose([0, 0, 0]), capsule(0.25, 1), pose([0.5, 0.5, 1 + 0.25 - 0.02 + 1])),
    );
    expect(c.gap).toBeCloseTo(-0.02, 9);
    expectVec(c.point, [0.5, 0.5, 0.99], 1e-9);
    expectVec(c.normal, [0, 0, 1], 1e-12);
    expect(c.feature).toBe(22);
  });

  it("capsule leaning over an edge: closest point of the axis to the edge", () => {
    // Box edge along x at (y, z) = (2, 1). Capsule axis (0, 1, −1)/√2 (perpendicular to
    // the edge), centre = (0.5, 2, 1) + 0.3 (0, 1, 1)/√2: the axis passes at distance 0.3
    // from the edge, closest at the centre; r = 0.25 → gap 0.05, n = (0, 1, 1)/√2.
    const q = axisAngle([1, 0, 0], Math.PI / 4); // e_z → (0, −1, 1)/√2: same axis line
    const centre: V3 = [0.5, 2 + 0.3 / S2, 1 + 0.3 / S2];
    const c = expectOne(collide(b, pose([0, 0, 0]), capsule(0.25, 1), pose(centre, q), 0.1));
    expect(c.gap).toBeCloseTo(0.05, 12);
    expectVec(c.normal, [0, 1 / S2, 1 / S2], 1e-12);
    expectVec(c.point, [0.5, 2 + 0.025 / S2, 1 + 0.025 / S2], 1e-12);
    expect(c.feature).toBe(1 + 6 + 18); // edge region (x within, y > h, z > h)
  });

  it("rotated box, capsule given first: normal from the capsule to the box", () => {
    // Box turned 90° about z (h = (2, 2, 1) is symmetric in x, y, so the top is unchanged).
    const cs = collide(
      capsule(0.25, 1),
      pose([0.3, 0.4, 1.2], ALONG_X),
      b,
      pose([0, 0, 0], axisAngle([0, 0, 1], Math.PI / 2)),
    );
    expect(cs).toHaveLength(2);
    for (const c of cs) {
      expectVec(c.normal, [0, 0, -1], 1e-12);
      expect(c.gap).toBeCloseTo(-0.05, 9);
    }
  });
});
