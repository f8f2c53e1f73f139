/**
 * Narrow phase against hand-computed contacts. Conventions checked everywhere: the
 * normal points from the first shape (a) to the second (b), gap = (p_b − p_a)·n is
 * negative when penetrating, and the point is the midpoint of the two surface points.
 */
import { describe, expect, it } from "vitest";
import type {
  BoxShape,
  CapsuleShape,
  PlaneShape,
  SphereShape,
} from "../../../src/engine/geometry/shapes";
import { axisAngle, type C, collide, expectVec, nearest, pose, rotate, type V3 } from "./helpers";

const S2 = Math.SQRT2;
const sphere = (radius: number): SphereShape => ({ type: "sphere", radius });
const box = (hx: number, hy: number, hz: number): BoxShape => ({
  type: "box",
  halfExtents: [hx, hy, hz],
});
const capsule = (radius: number, halfLength: number): CapsuleShape => ({
  type: "capsule",
  radius,
  halfLength,
});
const floor: PlaneShape = { type: "plane", normal: [0, 0, 1], offset: 0 };

/** Capsule axis (local z) turned onto world x: a rotation of +90° about y maps e_z to e_x. */
const ALONG_X = axisAngle([0, 1, 0], Math.PI / 2);
/** +90° about x maps e_z to −e_y. */
const ALONG_Y = axisAngle([1, 0, 0], Math.PI / 2);

function expectOne(cs: C[]): C {
  expect(cs.length).toBe(1);
  return cs[0];
}

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

describe("plane–plane", () => {
  it("produces no contact", () => {
    expect(collide(floor, pose([0, 0, 0]), floor, pose([0, 0, -1]), 10)).toHaveLength(0);
  });
});
