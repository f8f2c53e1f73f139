/**
 * Convex hull pairs (pairs/convex.ts) against independent computations:
 *  - convex–convex on random hulls: the penetration depth is min over unit n of the
 *    overlap h_a(n) + h_b(−n) (support functions by brute force over the vertices),
 *    sampled on 40 000 directions; the reported normal must overlap no more than every
 *    sampled direction, its deepest gap must be minus its overlap, and it must lie near
 *    the sampled minimizer;
 *  - a rotated box given as a hull (its corners rotated: not an axis box, so the GJK/EPA
 *    path) against a sphere, capsule and box: the box primitive's closed-form pairs give
 *    the same deepest gap and normal;
 *  - a box given by its corners against a plane and a box: exactly the box primitive's
 *    contacts (bit for bit);
 *  - feature ids repeat when the pose repeats or barely moves (warm starts).
 */
import { describe, expect, it } from "vitest";
import { ContactBuffer } from "../../../../src/engine/geometry/contact-buffer";
import { convexHull } from "../../../../src/engine/geometry/hull";
import { collideShapes } from "../../../../src/engine/geometry/narrowphase";
import type { Shape } from "../../../../src/engine/geometry/shapes";
import { axisAngle, type Q4, type V3 } from "../../../support/quat";
import { minstd } from "../../../support/random";
import { type C, collide, pose } from "../helpers";

/** n points on an ellipsoid of semi-axes ax (a random "rock"). */
function rock(r: () => number, n: number, ax: V3): Float64Array {
  const out = new Float64Array(3 * n);
  for (let i = 0; i < n; i++) {
    const u = 2 * r() - 1;
    const t = 2 * Math.PI * r();
    const s = Math.sqrt(1 - u * u);
    out.set([ax[0] * s * Math.cos(t), ax[1] * s * Math.sin(t), ax[2] * u], 3 * i);
  }
  return out;
}

function randomQuat(r: () => number): Q4 {
  const axis: V3 = [2 * r() - 1, 2 * r() - 1, 2 * r() - 1];
  return axisAngle(axis, 2 * Math.PI * r());
}

/** World vertices of hull points x at (p, R). */
function world(x: Float64Array, p: V3, R: Float64Array): number[][] {
  const out: number[][] = [];
  for (let k = 0; k < x.length / 3; k++) {
    const [a, b, c] = [x[3 * k], x[3 * k + 1], x[3 * k + 2]];
    out.push([0, 1, 2].map((i) => p[i] + R[3 * i] * a + R[3 * i + 1] * b + R[3 * i + 2] * c));
  }
  return out;
}

/** Overlap h_a(n) + h_b(−n) = max_a n·a − min_b n·b by brute force. */
function overlap(A: number[][], B: number[][], n: readonly number[]): number {
  let ha = Number.NEGATIVE_INFINITY;
  for (const a of A) ha = Math.max(ha, n[0] * a[0] + n[1] * a[1] + n[2] * a[2]);
  let lb = Number.POSITIVE_INFINITY;
  for (const b of B) lb = Math.min(lb, n[0] * b[0] + n[1] * b[1] + n[2] * b[2]);
  return ha - lb;
}

function deepest(cs: C[]): C {
  return cs.reduce((m, c) => (c.gap < m.gap ? c : m));
}

describe("convex–convex against sampled brute force", () => {
  it("20 random overlapping hull pairs (20–50 points): depth and normal", () => {
    const r = minstd(2024);
    // Fibonacci sphere directions.
    const N = 40000;
    const dirs: V3[] = [];
    for (let i = 0; i < N; i++) {
      const z = 1 - (2 * (i + 0.5)) / N;
      const s = Math.sqrt(1 - z * z);
      const t = i * Math.PI * (3 - Math.sqrt(5));
      dirs.push([s * Math.cos(t), s * Math.sin(t), z]);
    }
    let tested = 0;
    let faceless = 0;
    for (let trial = 0; trial < 20; trial++) {
      const xa = rock(r, 20 + Math.floor(30 * r()), [
        0.5 + 0.5 * r(),
        0.5 + 0.5 * r(),
        0.5 + 0.5 * r(),
      ]);
      const xb = rock(r, 20 + Math.floor(30 * r()), [
        0.5 + 0.5 * r(),
        0.5 + 0.5 * r(),
        0.5 + 0.5 * r(),
      ]);
      const a: Shape = { type: "convex", hull: convexHull(xa) };
      const b: Shape = { type: "convex", hull: convexHull(xb) };
      const pa = pose([0, 0, 0], randomQuat(r));
      const dir: V3 = [2 * r() - 1, 2 * r() - 1, 2 * r() - 1];
      const l = Math.hypot(...dir);
      const dist = 0.9 + 0.4 * r();
      const pbv: V3 = [(dist * dir[0]) / l, (dist * dir[1]) / l, (dist * dir[2]) / l];
      const pb = pose(pbv, randomQuat(r));
      const A = world(a.hull.vertices, [0, 0, 0], pa.R);
      const B = world(b.hull.vertices, pbv, pb.R);
      let best = Number.POSITIVE_INFINITY;
      let arg: V3 = [0, 0, 1];
      for (const n of dirs) {
        const o = overlap(A, B, n);
        if (o < best) {
          best = o;
          arg = n;
        }
      }
      // Refined around the coarse minimizer: random directions within 0.03, then 0.003
      // and 0.0003 rad of the best so far (the overlap of polytopes is piecewise linear).
      for (const spread of [0.03, 0.003, 3e-4])
        for (let k = 0; k < 4000; k++) {
          const n: V3 = [
            arg[0] + spread * (2 * r() - 1),
            arg[1] + spread * (2 * r() - 1),
            arg[2] + spread * (2 * r() - 1),
          ];
          const nl = Math.hypot(...n);
          const u: V3 = [n[0] / nl, n[1] / nl, n[2] / nl];
          const o = overlap(A, B, u);
          if (o < best) {
            best = o;
            arg = u;
          }
        }
      if (!(best > 1e-3)) continue; // separated or grazing: not a penetration case
      tested++;
      const cs = collide(a, pa, b, pb);
      expect(cs.length).toBeGreaterThan(0);
      const d = deepest(cs);
      const on = overlap(A, B, d.normal);
      // The depth is at most the overlap along the reported normal (a clipped manifold's
      // deepest point may lie inside the deepest feature), never below the true depth
      // (the sampled minimum, refined to 3e-4 rad), and that overlap at most the
      // manifold's documented face bias above it (a face normal within 5 % + 1e-5 of the
      // size of the optimum is preferred: manifold.ts).
      expect(-d.gap).toBeLessThanOrEqual(on + 1e-9);
      expect(-d.gap).toBeGreaterThan(best - 1e-4);
      expect(on).toBeLessThanOrEqual(1.05 * best + 1e-5 * 4);
      if (on < best + 1e-9) faceless++;
      const cos = d.normal[0] * arg[0] + d.normal[1] * arg[1] + d.normal[2] * arg[2];
      expect(cos).toBeGreaterThan(Math.cos(0.25));
    }
    expect(tested).toBeGreaterThanOrEqual(12);
    // Most pairs get the optimal normal itself (at least as good as every sample).
    expect(faceless).toBeGreaterThanOrEqual(tested / 2);
  });
});

describe("a rotated box as a hull against the box primitive's closed forms", () => {
  const h: V3 = [0.3, 0.2, 0.1];
  const q = axisAngle([1, 2, 3], 0.7);
  const corners = new Float64Array(24);
  // The corners rotated by q in the shape frame: the hull is that rotated box.
  const R = pose([0, 0, 0], q).R;
  for (let v = 0; v < 8; v++) {
    const c = [v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]];
    for (let i = 0; i < 3; i++)
      corners[3 * v + i] = R[3 * i] * c[0] + R[3 * i + 1] * c[1] + R[3 * i + 2] * c[2];
  }
  const hull: Shape = { type: "convex", hull: convexHull(corners) };
  const box: Shape = { type: "box", halfExtents: h };

  it("is not taken for an axis box (so these cases run GJK/EPA and the manifolds)", () => {
    expect(hull.type === "convex" && hull.hull.box).toBeNull();
  });

  const others: Array<[string, Shape, V3]> = [
    ["sphere, face", { type: "sphere", radius: 0.15 }, [0.05, 0.02, 0.22]],
    ["sphere, edge", { type: "sphere", radius: 0.15 }, [0.35, 0.02, 0.2]],
    ["capsule", { type: "capsule", radius: 0.05, halfLength: 0.2 }, [0.1, -0.05, 0.19]],
    ["box", { type: "box", halfExtents: [0.1, 0.15, 0.05] }, [0.05, 0.1, 0.12]],
  ];
  for (const [name, other, offset] of others) {
    it(`${name}: same deepest gap and normal`, () => {
      // Offsets given in the box's frame, placed in the world by q.
      const w: V3 = [0, 1, 2].map(
        (i) => R[3 * i] * offset[0] + R[3 * i + 1] * offset[1] + R[3 * i + 2] * offset[2],
      ) as V3;
      const qo = axisAngle([0.3, -1, 0.2], 0.4);
      const ref = collide(box, pose([0, 0, 0], q), other, pose(w, qo));
      const got = collide(hull, pose([0, 0, 0]), other, pose(w, qo));
      expect(ref.length).toBeGreaterThan(0);
      expect(got.length).toBeGreaterThan(0);
      const dr = deepest(ref);
      const dg = deepest(got);
      expect(Math.abs(dg.gap - dr.gap)).toBeLessThan(1e-9);
      for (let k = 0; k < 3; k++) expect(Math.abs(dg.normal[k] - dr.normal[k])).toBeLessThan(1e-7);
    });
  }
});

describe("a box given by its corners is the box primitive", () => {
  const h: V3 = [0.2, 0.1, 0.15];
  const pts = new Float64Array(24);
  for (let v = 0; v < 8; v++)
    pts.set([v & 1 ? h[0] : -h[0], v & 2 ? h[1] : -h[1], v & 4 ? h[2] : -h[2]], 3 * v);
  const hull: Shape = { type: "convex", hull: convexHull(pts) };
  const box: Shape = { type: "box", halfExtents: h };
  const plane: Shape = { type: "plane", normal: [0, 0, 1], offset: 0 };
  it("plane and box contacts bit for bit, over random poses", () => {
    const r = minstd(5);
    for (let k = 0; k < 200; k++) {
      const qa = randomQuat(r);
      const pa: V3 = [0.2 * r(), 0.2 * r(), 0.1 + 0.2 * r()];
      expect(collide(plane, pose([0, 0, 0]), hull, pose(pa, qa))).toEqual(
        collide(plane, pose([0, 0, 0]), box, pose(pa, qa)),
      );
      const pb: V3 = [pa[0] + 0.3 * r(), pa[1] + 0.3 * r(), pa[2] + 0.3 * r()];
      const qb = randomQuat(r);
      expect(collide(hull, pose(pa, qa), hull, pose(pb, qb), 0.01)).toEqual(
        collide(box, pose(pa, qa), box, pose(pb, qb), 0.01),
      );
    }
  });
});

describe("feature ids of hull contacts", () => {
  it("repeat for the same pose and survive a 1e-6 m move", () => {
    const r = minstd(9);
    const a: Shape = { type: "convex", hull: convexHull(rock(r, 40, [1, 0.7, 0.5])) };
    const b: Shape = { type: "convex", hull: convexHull(rock(r, 40, [0.6, 0.6, 0.6])) };
    const qa = randomQuat(r);
    const qb = randomQuat(r);
    const feats = (dz: number) =>
      collide(a, pose([0, 0, 0], qa), b, pose([0.2, 0.1, 1.0 + dz], qb))
        .map((c) => c.feature)
        .sort((x, y) => x - y);
    const f0 = feats(0);
    expect(f0.length).toBeGreaterThan(0);
    expect(feats(0)).toEqual(f0);
    expect(feats(1e-6)).toEqual(f0);
    for (const f of f0) expect(f).toBeLessThan(65536);
  });

  it("keys stay within the pair's 65536 ids (ContactBuffer.mixFeatures)", () => {
    const r = minstd(4);
    const a: Shape = { type: "convex", hull: convexHull(rock(r, 200, [1, 1, 1])) };
    const out = new ContactBuffer(4);
    out.setPair(0, 1, 3, 7);
    collideShapes(a, pose([0, 0, 0]), a, pose([0.3, 0.2, 1.9]), 0, out);
    expect(out.count).toBeGreaterThan(0);
    for (let i = 0; i < out.count; i++) {
      expect(out.feature[i]).toBeGreaterThanOrEqual(0);
      expect(out.feature[i]).toBeLessThan(65536);
    }
  });
});
