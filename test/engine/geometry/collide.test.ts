/**
 * CollisionDetector: contact and pair sets against brute-force O(n²) references,
 * exclusion / fixed-body / same-body filters, local shape poses, and stable contact keys
 * (the sweep and prune alone: broadphase.test.ts).
 */
import { describe, expect, it } from "vitest";
import { CollisionDetector } from "../../../src/engine/geometry/collide";
import { ContactBuffer, contactKey } from "../../../src/engine/geometry/contact-buffer";
import { convexHull } from "../../../src/engine/geometry/hull";
import { buildMesh } from "../../../src/engine/geometry/mesh";
import type { ShapeInstance } from "../../../src/engine/geometry/shapes";
import { axisAngle, type Q4, qmul, rotate, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { bruteAabbPairs, pairKey } from "./helpers";

/** Brute-force sphere contacts: pairs with |c_i − c_j| − r_i − r_j < margin. */
function bruteSphereGaps(
  n: number,
  pos: Float64Array,
  rad: Float64Array,
  margin: number,
  keep: (i: number, j: number) => boolean,
): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!keep(i, j)) continue;
      const d = Math.hypot(
        pos[3 * j] - pos[3 * i],
        pos[3 * j + 1] - pos[3 * i + 1],
        pos[3 * j + 2] - pos[3 * i + 2],
      );
      const g = d - rad[i] - rad[j];
      if (g < margin) m.set(pairKey(i, j), g);
    }
  }
  return m;
}

function randomSpheres(n: number, seed: number, size: number) {
  const r = mulberry32(seed);
  const pos = new Float64Array(3 * n);
  const quat = new Float64Array(4 * n);
  const rad = new Float64Array(n);
  const shapes: ShapeInstance[] = [];
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < 3; k++) pos[3 * i + k] = size * r();
    quat[4 * i] = 1;
    rad[i] = 0.05 + 0.15 * r();
    shapes.push({ shape: { type: "sphere", radius: rad[i] }, body: i });
  }
  return { pos, quat, rad, shapes };
}

describe("CollisionDetector", () => {
  it("1000 spheres with a margin: exactly the brute-force contacts, gaps and normals", () => {
    const n = 1000;
    const margin = 0.02;
    const { pos, quat, rad, shapes } = randomSpheres(n, 9, 4);
    const det = new CollisionDetector(shapes, { margin });
    const out = new ContactBuffer(4); // forces growth
    det.detect(pos, quat, out);
    const ref = bruteSphereGaps(n, pos, rad, margin, () => true);
    expect(ref.size).toBeGreaterThan(300);
    expect(out.count).toBe(ref.size);
    for (let k = 0; k < out.count; k++) {
      const a = out.bodyA[k];
      const b = out.bodyB[k];
      expect(a).toBeLessThan(b); // a is the lower shape index (here shape i = body i)
      expect(out.gap[k]).toBeCloseTo(ref.get(pairKey(a, b))!, 12);
      const d = Math.hypot(
        pos[3 * b] - pos[3 * a],
        pos[3 * b + 1] - pos[3 * a + 1],
        pos[3 * b + 2] - pos[3 * a + 2],
      );
      for (let q = 0; q < 3; q++) {
        expect(out.normal[3 * k + q]).toBeCloseTo((pos[3 * b + q] - pos[3 * a + q]) / d, 12);
      }
      expect(out.key[k]).toBe(contactKey(a, b, 0));
    }
    const st = det.stats;
    expect(st.contacts).toBe(out.count);
    expect(st.boundedShapes).toBe(n);
    expect(st.broadPairs).toBeGreaterThanOrEqual(out.count);
    expect(st.broadPairs).toBeLessThan(20 * out.count); // far from n²/2 ≈ 500 000
    expect(st.broadMs).toBeGreaterThanOrEqual(0);
    expect(st.narrowMs).toBeGreaterThanOrEqual(0);
    expect(st.totalMs).toBeGreaterThanOrEqual(st.broadMs);
  });

  it("excluded pairs, fixed–fixed pairs and shapes of one body are skipped", () => {
    const n = 400;
    const margin = 0.01;
    const { pos, quat, rad, shapes } = randomSpheres(n, 21, 3);
    const all = bruteSphereGaps(n, pos, rad, margin, () => true);
    // Exclude every third contacting pair, fix bodies 0..99.
    const excluded: Array<[number, number]> = [];
    let k = 0;
    for (const p of all.keys()) {
      if (k++ % 3 === 0) {
        const [i, j] = p.split(",").map(Number);
        excluded.push(k % 2 ? [i, j] : [j, i]);
      }
    }
    const fixedBodies = Array.from({ length: 100 }, (_, i) => i);
    const excludedSet = new Set(excluded.map(([i, j]) => pairKey(i, j)));
    const keep = (i: number, j: number) => !excludedSet.has(pairKey(i, j)) && !(i < 100 && j < 100);
    const det = new CollisionDetector(shapes, { margin, excludedPairs: excluded, fixedBodies });
    const out = new ContactBuffer();
    det.detect(pos, quat, out);
    const ref = bruteSphereGaps(n, pos, rad, margin, keep);
    expect(ref.size).toBeLessThan(all.size);
    const got = new Set<string>();
    for (let c = 0; c < out.count; c++) got.add(pairKey(out.bodyA[c], out.bodyB[c]));
    expect(got).toEqual(new Set(ref.keys()));
    // Same body: two overlapping spheres on one body never collide.
    const same = new CollisionDetector([
      { shape: { type: "sphere", radius: 1 }, body: 0 },
      { shape: { type: "sphere", radius: 1 }, body: 0, localPosition: [0.5, 0, 0] },
    ]);
    same.detect(new Float64Array(3), new Float64Array([1, 0, 0, 0]), out);
    expect(out.count).toBe(0);
  });

  it("planes are tested against every shape; world-frame (body −1) shapes; local poses", () => {
    // Floor on the world frame; 200 spheres over it; one box body carrying a sphere offset
    // by a local pose.
    const n = 200;
    const margin = 0.005;
    const { pos, quat, rad, shapes } = randomSpheres(n, 33, 4);
    for (let i = 0; i < n; i++) pos[3 * i + 2] = 0.4 * (i / n) - 0.1; // heights −0.1 .. 0.3
    const floorShape: ShapeInstance = {
      shape: { type: "plane", normal: [0, 0, 1], offset: 0 },
      body: -1,
      localPosition: [0, 0, -0.05], // surface at z = −0.05
    };
    const det = new CollisionDetector([floorShape, ...shapes], { margin });
    const out = new ContactBuffer();
    det.detect(pos, quat, out);
    const expectedFloor = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const g = pos[3 * i + 2] + 0.05 - rad[i];
      if (g < margin) expectedFloor.set(i, g);
    }
    const spheres = bruteSphereGaps(n, pos, rad, margin, () => true);
    let floorCount = 0;
    for (let c = 0; c < out.count; c++) {
      if (out.shapeA[c] === 0) {
        floorCount++;
        expect(out.bodyA[c]).toBe(-1);
        const b = out.bodyB[c];
        expect(out.gap[c]).toBeCloseTo(expectedFloor.get(b)!, 13);
        expect(out.normal[3 * c + 2]).toBe(1);
        expect(out.point[3 * c + 2]).toBeCloseTo(-0.05 + expectedFloor.get(b)! / 2, 13);
      }
    }
    expect(floorCount).toBe(expectedFloor.size);
    expect(out.count - floorCount).toBe(spheres.size);
    expect(det.stats.planes).toBe(1);
    expect(det.stats.planePairs).toBeGreaterThanOrEqual(expectedFloor.size);
    expect(det.stats.planePairs).toBeLessThan(n);

    // A body at p with orientation q carries a cube (h = 0.5) at local position l with
    // local orientation ql: its world pose is (p + q l, q ⊗ ql). Compared with the same
    // cube placed directly on a body at that pose.
    const q: Q4 = axisAngle([0.3, -0.5, 1], 0.7);
    const ql: Q4 = axisAngle([1, 1, 0], 0.4);
    const p: V3 = [0.2, -0.1, 1.0];
    const l: V3 = [0.1, 0.3, -0.2];
    const ql2 = qmul(q, ql);
    const ro = rotate(q, l);
    const world: V3 = [p[0] + ro[0], p[1] + ro[1], p[2] + ro[2]];
    const boxShape = {
      type: "box" as const,
      halfExtents: [0.5, 0.5, 0.5] as [number, number, number],
    };
    const floor0: ShapeInstance = {
      shape: { type: "plane", normal: [0, 0, 1], offset: 0 },
      body: -1,
    };
    const local = new CollisionDetector(
      [floor0, { shape: boxShape, body: 0, localPosition: l, localOrientation: ql }],
      { margin: 2 },
    );
    const direct = new CollisionDetector([floor0, { shape: boxShape, body: 0 }], { margin: 2 });
    const o1 = new ContactBuffer();
    const o2 = new ContactBuffer();
    local.detect(new Float64Array(p), new Float64Array(q), o1);
    direct.detect(new Float64Array(world), new Float64Array(ql2), o2);
    expect(o1.count).toBe(4);
    expect(o2.count).toBe(4);
    for (let c = 0; c < 4; c++) {
      expect(o1.gap[c]).toBeCloseTo(o2.gap[c], 12);
      expect(o1.feature[c]).toBe(o2.feature[c]);
      for (let k = 0; k < 3; k++) expect(o1.point[3 * c + k]).toBeCloseTo(o2.point[3 * c + k], 12);
    }
  });

  for (const cubeFirst of [false, true]) {
    it(`feature keys of resting boxes stay the same when they move slightly${cubeFirst ? " (cube listed first)" : ""}`, () => {
      // Big box (h = (2, 2, 0.5)) on fixed body 0; cube (h = 0.5) on body 1 resting on it;
      // the floor on the world frame; box h = (0.4, 0.3, 0.2) on body 2 resting on the floor.
      const big: ShapeInstance = { shape: { type: "box", halfExtents: [2, 2, 0.5] }, body: 0 };
      const cube: ShapeInstance = { shape: { type: "box", halfExtents: [0.5, 0.5, 0.5] }, body: 1 };
      const shapes: ShapeInstance[] = [
        cubeFirst ? cube : big,
        cubeFirst ? big : cube,
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: [0.4, 0.3, 0.2] }, body: 2 },
      ];
      const det = new CollisionDetector(shapes, { margin: 0.01, fixedBodies: [0] });
      const pos = new Float64Array([0, 0, 0.5, 0.3, -0.2, 1.499, 5, 5, 0.199]);
      const quat = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
      const out = new ContactBuffer();
      det.detect(pos, quat, out);
      const keys0 = Array.from(out.key.subarray(0, out.count)).sort();
      const pairs0 = new Set<string>();
      for (let c = 0; c < out.count; c++) pairs0.add(pairKey(out.shapeA[c], out.shapeB[c]));
      // Cube on the big box (4) and the small box on the floor (4); the big box touches the
      // floor too, but both are fixed (body 0 is fixed, body −1 is the world): skipped.
      expect(out.count).toBe(8);
      expect(pairs0).toEqual(new Set(["0,1", "2,3"]));
      expect(new Set(keys0).size).toBe(8);
      const r = mulberry32(1);
      for (let trial = 0; trial < 20; trial++) {
        const p2 = Float64Array.from(pos);
        const q2 = Float64Array.from(quat);
        for (const b of [1, 2]) {
          p2[3 * b] += 2e-3 * (r() - 0.5);
          p2[3 * b + 1] += 2e-3 * (r() - 0.5);
          p2[3 * b + 2] += 1e-3 * (r() - 0.5);
          const dq = axisAngle([0.2 * (r() - 0.5), 0.2 * (r() - 0.5), 1], 2e-3 * (r() - 0.5));
          q2.set(dq, 4 * b);
        }
        det.detect(p2, q2, out);
        expect(out.count).toBe(8);
        const keys = Array.from(out.key.subarray(0, out.count)).sort();
        expect(keys).toEqual(keys0);
      }
    });
  }

  it("a 1000-body mixed scene stays fast and matches brute force pair candidates", () => {
    // Boxes, capsules and spheres in a 10 m cube: the broad-phase candidates equal the
    // brute-force AABB overlaps of the padded world boxes, less the pairs of two spheres
    // whose centres are farther apart than the radii and the margin (the ball test).
    const n = 1000;
    const r = mulberry32(77);
    const shapes: ShapeInstance[] = [];
    const pos = new Float64Array(3 * n);
    const quat = new Float64Array(4 * n);
    for (let i = 0; i < n; i++) {
      for (let k = 0; k < 3; k++) pos[3 * i + k] = 10 * r();
      const u = Math.sqrt(r());
      const a = 2 * Math.PI * r();
      quat.set([Math.sqrt(1 - u * u), u * Math.cos(a), u * Math.sin(a), 0], 4 * i);
      const t = i % 3;
      shapes.push({
        shape:
          t === 0
            ? { type: "box", halfExtents: [0.1 + 0.1 * r(), 0.1 + 0.1 * r(), 0.1 + 0.1 * r()] }
            : t === 1
              ? { type: "capsule", radius: 0.05 + 0.1 * r(), halfLength: 0.1 + 0.2 * r() }
              : { type: "sphere", radius: 0.1 + 0.1 * r() },
        body: i,
      });
    }
    const det = new CollisionDetector(shapes, { margin: 0.01 });
    const out = new ContactBuffer();
    det.detect(pos, quat, out);
    const ref = bruteAabbPairs(n, det.aabbMin, det.aabbMax);
    let apart = 0;
    for (const key of [...ref]) {
      const [i, j] = key.split(",").map(Number);
      const si = shapes[i].shape;
      const sj = shapes[j].shape;
      if (si.type !== "sphere" || sj.type !== "sphere") continue;
      const d = Math.hypot(
        pos[3 * j] - pos[3 * i],
        pos[3 * j + 1] - pos[3 * i + 1],
        pos[3 * j + 2] - pos[3 * i + 2],
      );
      if (d > si.radius + sj.radius + 0.01) {
        ref.delete(key);
        apart++;
      }
    }
    expect(apart).toBeGreaterThan(0);
    const got = new Set(det.candidatePairs().map(([i, j]) => pairKey(i, j)));
    expect(got).toEqual(ref);
    let best = Number.POSITIVE_INFINITY;
    for (let rep = 0; rep < 5; rep++) {
      det.detect(pos, quat, out);
      best = Math.min(best, det.stats.totalMs);
    }
    expect(best).toBeLessThan(50);
    for (let c = 0; c < out.count; c++) expect(out.gap[c]).toBeLessThan(0.01);
  });

  it("pairs of bodies that have not moved get the previous detection's contacts, exactly", () => {
    // Hulls and boxes dropped into a 4 × 4 grid of unit cells (a fixed mesh, body 0) and
    // onto each other: after moving two bodies, a detector that reuses the still pairs
    // must give what a fresh detector computes, pair for pair.
    const V: number[] = [];
    const T: number[] = [];
    const cells = 4;
    for (let j = 0; j <= cells; j++)
      for (let i = 0; i <= cells; i++) V.push(i - 2, j - 2, 0.1 * Math.sin(i + 2 * j));
    for (let j = 0; j < cells; j++)
      for (let i = 0; i < cells; i++) {
        const a = j * (cells + 1) + i;
        T.push(a, a + 1, a + cells + 2, a, a + cells + 2, a + cells + 1);
      }
    const r = mulberry32(5);
    const shapes: ShapeInstance[] = [
      { shape: { type: "mesh", mesh: buildMesh(new Float64Array(V), new Int32Array(T)) }, body: 0 },
      { shape: { type: "plane", normal: [0, 0, 1], offset: -0.05 }, body: -1 },
    ];
    const n = 13;
    const pos = new Float64Array(3 * n);
    const quat = new Float64Array(4 * n);
    quat[0] = 1;
    for (let b = 1; b < n; b++) {
      const pts = new Float64Array(3 * 12);
      for (let k = 0; k < pts.length; k++) pts[k] = 0.3 * (r() - 0.5);
      shapes.push({
        shape:
          b % 3 === 0
            ? { type: "box", halfExtents: [0.15, 0.1, 0.12] }
            : { type: "convex", hull: convexHull(pts) },
        body: b,
      });
      // a 3 × 4 layout of 0.4 m spacing, 0.05–0.2 m up: touching the terrain and neighbours
      pos.set([-0.6 + 0.4 * (b % 4), -0.4 + 0.4 * Math.floor(b / 4), 0.05 + 0.15 * r()], 3 * b);
      const q = axisAngle([r(), r(), 1], 2 * r());
      quat.set(q, 4 * b);
    }
    const options = { margin: 0.02, fixedBodies: [0] };
    const fresh = (margin: number) => {
      const det = new CollisionDetector(shapes, { ...options, margin });
      const out = new ContactBuffer();
      det.detect(pos, quat, out);
      return { det, out };
    };
    const contents = (b: ContactBuffer) => {
      const c = b.count;
      return [b.bodyA, b.bodyB, b.shapeA, b.shapeB, b.key, b.gap]
        .map((a) => Array.from(a.subarray(0, c)))
        .concat([Array.from(b.point.subarray(0, 3 * c)), Array.from(b.normal.subarray(0, 3 * c))]);
    };
    const det = new CollisionDetector(shapes, options);
    const out = new ContactBuffer();
    det.detect(pos, quat, out);
    expect(det.stats.reusedPairs).toBe(0);
    const before = contents(out);
    expect(before).toEqual(contents(fresh(0.02).out));
    expect(out.count).toBeGreaterThan(20);

    // the same poses: every pair reused
    det.detect(pos, quat, out);
    expect(contents(out)).toEqual(before);
    expect(det.stats.reusedPairs).toBe(det.candidatePairs().length);

    // bodies 2 and 6 moved by 1 mm and 0.01 rad: their pairs detected again
    const moved = [2, 6];
    for (const b of moved) {
      pos[3 * b] += 1e-3;
      const q = qmul(axisAngle([0, 1, 0], 0.01), Array.from(quat.subarray(4 * b, 4 * b + 4)) as Q4);
      quat.set(q, 4 * b);
    }
    det.detect(pos, quat, out);
    const ref = fresh(0.02);
    expect(contents(out)).toEqual(contents(ref.out));
    const stillPairs = ref.det
      .candidatePairs()
      .filter(([i, j]) => !moved.includes(shapes[i].body) && !moved.includes(shapes[j].body));
    expect(det.stats.reusedPairs).toBe(stillPairs.length);
    expect(stillPairs.length).toBeLessThan(ref.det.candidatePairs().length);
    // contents(): bodyA, bodyB, …, gap (5): the moved bodies' gaps changed
    const movedGaps = (c: number[][]) =>
      c[5].filter((_, k) => moved.includes(c[0][k]) || moved.includes(c[1][k]));
    expect(movedGaps(contents(out)).length).toBeGreaterThan(0);
    expect(movedGaps(contents(out))).not.toEqual(movedGaps(before));

    // another margin: nothing reused
    det.margin = 0.03;
    det.detect(pos, quat, out);
    expect(det.stats.reusedPairs).toBe(0);
    expect(contents(out)).toEqual(contents(fresh(0.03).out));
  });
});
