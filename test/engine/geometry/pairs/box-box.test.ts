/**
 * Box–box (src/engine/geometry/pairs/box-box.ts) against hand-computed contacts: face
 * manifolds from the clipping, the reference-face choice, edge–edge contacts.
 */
import { describe, expect, it } from "vitest";
import { axisAngle, qmul, rotate, type V3 } from "../../../support/quat";
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

  it("cube yawed 45° and tilted by up to 0.01 rad on an equal cube: the face manifold", () => {
    // a: cube h = 0.1 at (0, 0, 0.1), top face z = 0.2. b: the same cube yawed 45° about z,
    // then tilted by θ about the horizontal axis (cos ψ, sin ψ, 0), its bottom face's centre
    // f 1e-6 m below a's top face. b's bottom face clipped to a's top face is a near-regular
    // octagon, whose 4 kept vertices are the contacts: normal a's +z, gap the height of b's
    // bottom plane n·(x − f) = 0 above z = 0.2 at the point, the point midway. The edge
    // axes a_i × b_j of the two faces' edges are within θ of vertical and separate the
    // boxes better than the faces by up to about θ·h (√2 − 1): they gave one edge–edge
    // point at θ = 1e-3 and 1e-2 for every ψ but a's axes and diagonals (at 1e-4 in the
    // next test's poses).
    const h = 0.1;
    for (const theta of [1e-4, 1e-3, 1e-2]) {
      for (let deg = 0; deg < 360; deg += 15) {
        const psi = (deg * Math.PI) / 180;
        const q = qmul(
          axisAngle([Math.cos(psi), Math.sin(psi), 0], theta),
          axisAngle([0, 0, 1], Math.PI / 4),
        );
        const n = rotate(q, [0, 0, 1]);
        const f: V3 = [0, 0, 2 * h - 1e-6];
        const cs = collide(
          box(h, h, h),
          pose([0, 0, h]),
          box(h, h, h),
          pose([f[0] + h * n[0], f[1] + h * n[1], f[2] + h * n[2]], q),
          0.01,
        );
        expect(cs, `θ ${theta}, ψ ${deg}°`).toHaveLength(4);
        for (const c of cs) {
          const [x, y, z] = c.point;
          expectVec(c.normal, [0, 0, 1], 1e-15);
          expect(Math.max(Math.abs(x), Math.abs(y))).toBeLessThanOrEqual(h + 1e-12);
          const zb = f[2] - (n[0] * x + n[1] * y) / n[2];
          expect(c.gap).toBeCloseTo(zb - 2 * h, 14);
          expect(z).toBeCloseTo(2 * h + c.gap / 2, 14);
        }
      }
    }
  });

  it("the poses of a yawed column's boxes 1e-4 rad apart: the face manifold", () => {
    // Two boxes of an 8-box column (h = 0.1, the upper yawed 45°) after 8.8 s at rest, as
    // the simulation left them (relative tilt 1.0e-4 rad): one edge–edge point before, with
    // which the column collapsed. Now 4 points of b's bottom face over a's top face,
    // normal a's z (within 1.4e-5 rad of vertical): each point midway between a's top
    // plane and b's bottom plane along a's z, gap their distance along it.
    const pa = pose(
      [-2.54008150477919e-6, -1.568729297793717e-7, 0.0999989314359668],
      [
        0.9999999999741485, 0.0000011269213654485553, -0.0000070446942694834906,
        -8.973874647533655e-7,
      ],
    );
    const pb = pose(
      [-0.000022114787410512016, -0.0000031501304978686853, 0.29998809010148736],
      [0.9238772316192471, -0.0000011801033557406758, -0.00005773238365603514, 0.3826889828060583],
    );
    const cs = collide(box(0.1, 0.1, 0.1), pa, box(0.1, 0.1, 0.1), pb, 0.01);
    expect(cs).toHaveLength(4);
    const az: V3 = [pa.R[2], pa.R[5], pa.R[8]];
    const bz: V3 = [pb.R[2], pb.R[5], pb.R[8]];
    const dot = (u: ArrayLike<number>, v: ArrayLike<number>) =>
      u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
    const topA = dot(az, pa.p) + 0.1; // a's top plane az·x = topA
    const bottomB = dot(bz, pb.p) - 0.1; // b's bottom plane bz·x = bottomB
    for (const c of cs) {
      expectVec(c.normal, az, 1e-15);
      expect(dot(az, c.point) - topA).toBeCloseTo(c.gap / 2, 14);
      const onB = c.point.map((x, k) => x + (c.gap / 2) * az[k]);
      expect(dot(bz, onB) - bottomB).toBeCloseTo(0, 14);
      expect(c.gap).toBeLessThan(0.01);
    }
  });

  it("an edge lying across a's rim: within 1.8° of a's face normal a face segment, beyond it an edge pair", () => {
    // a: cube h = 0.5 at the origin (top face z = 0.5, rim edge along y at x = 0.5). b: cube
    // h = 0.5 turned 45° about x (its lowest edge along its x axis), then by α about y, so
    // that the edge b_x = (cos α, 0, −sin α) descends outwards across a's rim, its centre
    // E = X0 − 0.01 n below the rim point X0 = (0.5, 0, 0.5), n = (sin α, 0, cos α) the
    // normal of both edges. Inside the rim the edge runs under a's top face from its end
    // (x = 0.5 − 0.5 cos α − 0.01 sin α, depth 0.01 cos α − 0.5 sin α) to the rim (depth
    // 0.01 / cos α).
    for (const alpha of [(1 * Math.PI) / 180, (5 * Math.PI) / 180]) {
      const n: V3 = [Math.sin(alpha), 0, Math.cos(alpha)];
      const c0 = S2 / 2 - 0.01; // b's centre from the rim point along n
      const cs = collide(
        box(0.5, 0.5, 0.5),
        pose([0, 0, 0]),
        box(0.5, 0.5, 0.5),
        pose(
          [0.5 + c0 * n[0], 0, 0.5 + c0 * n[2]],
          qmul(axisAngle([0, 1, 0], alpha), axisAngle([1, 0, 0], Math.PI / 4)),
        ),
      );
      if (alpha < (1.8 * Math.PI) / 180) {
        // The edge on a's top face: both ends of its part inside, normal +z.
        expect(cs).toHaveLength(2);
        const end = 0.5 - 0.5 * Math.cos(alpha) - 0.01 * Math.sin(alpha);
        const dEnd = 0.01 * Math.cos(alpha) - 0.5 * Math.sin(alpha);
        const dRim = 0.01 / Math.cos(alpha);
        const atEnd = nearest(cs, [end, 0, 0.5]);
        const atRim = nearest(cs, [0.5, 0, 0.5]);
        expectVec(atEnd.point, [end, 0, 0.5 - dEnd / 2], 1e-12);
        expect(atEnd.gap).toBeCloseTo(-dEnd, 12);
        expectVec(atRim.point, [0.5, 0, 0.5 - dRim / 2], 1e-12);
        expect(atRim.gap).toBeCloseTo(-dRim, 12);
        for (const c of cs) expectVec(c.normal, [0, 0, 1], 1e-12);
      } else {
        // 5°: the edge pair, one contact at the rim point, normal n.
        const c = expectOne(cs);
        expect(c.gap).toBeCloseTo(-0.01, 12);
        expectVec(c.normal, n, 1e-12);
        expectVec(c.point, [0.5 - 0.005 * n[0], 0, 0.5 - 0.005 * n[2]], 1e-12);
        expect(c.feature).toBeGreaterThanOrEqual(2592);
      }
    }
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
