/**
 * Contact areas (area.ts) against closed forms written out here: ArtiSynth's vertex rule
 * on explicit triangles (one third of each adjacent face projected on the plane ⊥ n,
 * halved for two-way contact), the box-vertex rule (Σ_j h_k h_l |b_j·n|), the spherical
 * cap circle π(2Rδ − δ²), the planar hull area, and the contour (hull / count) rule for
 * detected contacts of a box on a box; hull vertices: a box's eight corners give the box
 * rule, a tetrahedron's corner ArtiSynth's; the cylinder's rim samples share its cap π r²
 * (n along the axis) or its side 2π r L (n across it, L the half-length); a capsule's axis
 * samples, lying on a face at depth δ, sum to its section 2L·2√(2rδ − δ²) + π(2rδ − δ²)
 * and standing, the lower end alone, to the disc π(2rδ − δ²); a box's edge samples: a
 * cube's corners get the box rule, a long box's bottom rim shares its face exactly; the radius of
 * curvature is the sphere's or capsule's, infinite for flat shapes.
 */
import { describe, expect, it } from "vitest";
import {
  boxSampleArea,
  boxSampleIntervals,
  boxVertexArea,
  capsuleSampleArea,
  capsuleSampleIntervals,
  computeContactAreas,
  convexHullArea2D,
  cylinderRimArea,
  hullVertexArea,
  roundContactArea,
  surfaceRadius,
  vertexContactArea,
} from "../../../src/engine/contact/area";
import { RIM_SAMPLES } from "../../../src/engine/geometry/cylinder";
import { hullOfPoints } from "../../../src/engine/geometry/hull";
import { CollisionDetector, ContactBuffer } from "../../../src/engine/geometry/index";
import { rotationMatrix } from "../../support/quat";
import { mulberry32 } from "../../support/random";

describe("contact areas", () => {
  it("ArtiSynth's vertex rule: one third of the adjacent faces projected, halved two-way", () => {
    // A vertex at the origin with a fan of 4 triangles (0,0,0)-(c_k, h)-(c_k+1, h) over the
    // square corners c = (1,0), (0,1), (−1,0), (0,−1) lifted to height h.
    const h = 0.3;
    const corners = [
      [1, 0],
      [0, 1],
      [-1, 0],
      [0, -1],
    ];
    const tri: number[] = [];
    let shadowX = 0;
    for (let k = 0; k < 4; k++) {
      const [x1, y1] = corners[k];
      const [x2, y2] = corners[(k + 1) % 4];
      tri.push(0, 0, 0, x1, y1, h, x2, y2, h);
      // x-component of u × v with u = (x1, y1, h), v = (x2, y2, h): y1 h − h y2.
      shadowX += 0.5 * Math.abs(y1 * h - h * y2);
    }
    // On the plane ⊥ z each triangle projects to a right triangle of legs 1, 1 (area ½).
    expect(vertexContactArea(tri, 4, [0, 0, 1])).toBeCloseTo(2 / 3, 14);
    expect(vertexContactArea(tri, 4, [1, 0, 0])).toBeCloseTo(shadowX / 3, 14);
  });

  it("box vertex: a quarter of each adjacent face, projected (flat box: a quarter of the face)", () => {
    const R = [1, 0, 0, 0, 1, 0, 0, 0, 1];
    expect(boxVertexArea([0.1, 0.2, 0.3], R, [0, 0, 1])).toBeCloseTo(0.1 * 0.2, 15);
    // Tilted normal: Σ_j h_k h_l |b_j·n|
    const s = Math.SQRT1_2;
    expect(boxVertexArea([0.1, 0.2, 0.3], R, [s, 0, s])).toBeCloseTo(
      0.2 * 0.3 * s + 0.1 * 0.2 * s,
      15,
    );
  });

  it("hull vertices: a box's corners give the box rule, a tetrahedron's ArtiSynth's", () => {
    const rand = mulberry32(7);
    const h = [0.1, 0.2, 0.3];
    const corners: number[][] = [];
    for (const sx of [-1, 1])
      for (const sy of [-1, 1])
        for (const sz of [-1, 1]) corners.push([sx * h[0], sy * h[1], sz * h[2]]);
    const box = hullOfPoints(corners);
    const tet = [
      [0, 0, 0],
      [0.3, 0, 0],
      [0, 0.2, 0],
      [0.05, 0.04, 0.25],
    ];
    const tetHull = hullOfPoints(tet);
    for (let trial = 0; trial < 20; trial++) {
      const q = [rand() - 0.5, rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const l = Math.hypot(...q);
      const R = rotationMatrix(q.map((x) => x / l)).flat();
      const p = [rand(), rand(), rand()];
      const m = [rand() - 0.5, rand() - 0.5, rand() - 0.5];
      const ml = Math.hypot(...m);
      const nrm = m.map((x) => x / ml);
      const world = (c: number[]) =>
        [0, 1, 2].map((r) => p[r] + R[3 * r] * c[0] + R[3 * r + 1] * c[1] + R[3 * r + 2] * c[2]);
      // the box: every corner Σ_j h_k h_l |b_j·n|, also from a point near the corner
      for (const c of corners) {
        const at = world(c.map((x) => 0.98 * x));
        expect(hullVertexArea(box, p, R, at, 0, nrm, 0)).toBeCloseTo(boxVertexArea(h, R, nrm), 14);
      }
      // the tetrahedron's corner 0: a third of each of its three faces, projected — the
      // faces written out as world triangles for vertexContactArea
      const w = tet.map(world);
      const faces = [
        [w[0], w[2], w[1]],
        [w[0], w[1], w[3]],
        [w[0], w[3], w[2]],
      ].flat(2);
      expect(hullVertexArea(tetHull, p, R, w[0], 0, nrm, 0)).toBeCloseTo(
        vertexContactArea(faces, 3, nrm),
        14,
      );
    }
  });

  it("round contacts: the cap circle π(2Rδ − δ²); zero when separated", () => {
    expect(roundContactArea(0.1, -0.01)).toBeCloseTo(Math.PI * (0.002 - 0.0001), 15);
    expect(roundContactArea(0.1, 0.001)).toBe(0);
  });

  it("hull area of points in the plane", () => {
    const xs = new Float64Array([0, 1, 1, 0, 0.5]);
    const ys = new Float64Array([0, 0, 2, 2, 1]);
    expect(convexHullArea2D(xs, ys, 5)).toBeCloseTo(2, 15);
  });

  it("detected contacts: plane–box corners cover the face, box on box shares the overlap", () => {
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: [0.2, 0.1, 0.05] }, body: 0 },
        { shape: { type: "box", halfExtents: [0.1, 0.1, 0.05] }, body: 1 },
      ],
      { margin: 0.01 },
    );
    const buf = new ContactBuffer();
    const pos = new Float64Array([0, 0, 0.049, 0.05, 0, 0.147]);
    const quat = new Float64Array([1, 0, 0, 0, 1, 0, 0, 0]);
    det.detect(pos, quat, buf);
    const area = new Float64Array(buf.count);
    computeContactAreas(buf, det.shapes, det.poses, area);
    let floor = 0;
    let top = 0;
    let nTop = 0;
    for (let i = 0; i < buf.count; i++) {
      if (buf.bodyA[i] === -1) floor += area[i];
      else {
        top += area[i];
        nTop++;
      }
    }
    expect(floor).toBeCloseTo(0.4 * 0.2, 14);
    // The upper box (0.2 × 0.2) lies entirely on the lower one: overlap 0.04 m².
    expect(nTop).toBeGreaterThanOrEqual(3);
    expect(top).toBeCloseTo(0.2 * 0.2, 12);
  });

  it("detected contacts of hulls: a flat hull's points cover its face, a tilted one gets its corner's share", () => {
    const corners: number[][] = [];
    for (const x of [-0.2, 0.2])
      for (const y of [-0.1, 0.1]) for (const z of [-0.05, 0.05]) corners.push([x, y, z]);
    const det = new CollisionDetector(
      [
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "convex", hull: hullOfPoints(corners) }, body: 0 },
      ],
      { margin: 0.01 },
    );
    const buf = new ContactBuffer();
    const area = new Float64Array(8);
    det.detect(new Float64Array([0, 0, 0.049]), new Float64Array([1, 0, 0, 0]), buf);
    computeContactAreas(buf, det.shapes, det.poses, area);
    expect(buf.count).toBeGreaterThanOrEqual(3);
    let sum = 0;
    for (let i = 0; i < buf.count; i++) sum += area[i];
    expect(sum).toBeCloseTo(0.4 * 0.2, 12);
    // balanced on one corner (rotated so the diagonal (−h) points down): the box rule
    const d = [0.2, 0.1, 0.05];
    const len = Math.hypot(...d);
    // rotation taking the body diagonal (0.2, 0.1, 0.05)/|d| to +z: axis d × z, angle acos(d_z)
    const ax = [d[1] / len, -d[0] / len, 0];
    const al = Math.hypot(...ax);
    const ang = Math.acos(d[2] / len);
    const q = [Math.cos(ang / 2), ...ax.map((x) => (Math.sin(ang / 2) * x) / al)];
    det.detect(new Float64Array([0, 0, len - 0.001]), new Float64Array(q), buf);
    computeContactAreas(buf, det.shapes, det.poses, area);
    expect(buf.count).toBe(1);
    const R = rotationMatrix(q).flat();
    expect(area[0]).toBeCloseTo(boxVertexArea(d, R, buf.normal), 14);
    expect(area[0]).toBeGreaterThan(0);
  });

  it("cylinder rim: the samples of a cap share π r² along the axis, 2π r L across it", () => {
    const R = [0, 0, 1, 1, 0, 0, 0, 1, 0]; // axis (column 2) = world x
    const r = 0.2;
    const L = 0.5;
    expect(RIM_SAMPLES * cylinderRimArea(r, L, R, [1, 0, 0])).toBeCloseTo(Math.PI * r * r, 14);
    expect(RIM_SAMPLES * cylinderRimArea(r, L, R, [0, 0, -1])).toBeCloseTo(2 * Math.PI * r * L, 14);
    const c = Math.cos(0.3);
    const s = Math.sin(0.3);
    expect(RIM_SAMPLES * cylinderRimArea(r, L, R, [0, 9, c, s, 0], 2)).toBeCloseTo(
      Math.PI * r * (r * c + 2 * L * s),
      14,
    );
  });

  it("capsule axis samples: lying flat they sum to the section 4L√(2rδ − δ²) + π(2rδ − δ²)", () => {
    const r = 0.05;
    const L = 0.525;
    const delta = 1e-3;
    const m = capsuleSampleIntervals(r, L);
    // at most r apart: 2L/r = 21 up to round-off (1.05/0.05 = 21.000000000000004)
    expect(m).toBe(21);
    expect(capsuleSampleIntervals(r, 0)).toBe(0);
    const a2 = 2 * r * delta - delta * delta;
    const lying = [0, 0, 1, 1, 0, 0, 0, 1, 0]; // axis (column 2) = world x
    let sum = 0;
    for (let j = 0; j <= m; j++) sum += capsuleSampleArea(r, L, j, lying, [0, 0, -1], 0, -delta);
    // the plane z = −δ below the lowest line cuts a rectangle 2L × 2a and two half discs
    expect(sum).toBeCloseTo(2 * L * 2 * Math.sqrt(a2) + Math.PI * a2, 15);
    // an interior sample: its ℓ = 2L/m of the strip
    expect(capsuleSampleArea(r, L, 5, lying, [0, 0, -1], 0, -delta)).toBeCloseTo(
      ((2 * L) / m) * 2 * Math.sqrt(a2),
      15,
    );
    // standing on its lower end (axis = world z, n along it): the end's disc, no strip
    const standing = [1, 0, 0, 0, 1, 0, 0, 0, 1];
    expect(capsuleSampleArea(r, L, 0, standing, [0, 0, 1], 0, -delta)).toBeCloseTo(
      Math.PI * a2,
      15,
    );
    // not penetrating: none; L = 0, a sphere: the disc
    expect(capsuleSampleArea(r, L, 3, lying, [0, 0, -1], 0, 1e-4)).toBe(0);
    expect(capsuleSampleArea(r, 0, 0, lying, [0, 0, -1], 0, -delta)).toBeCloseTo(Math.PI * a2, 15);
  });

  it("capsule axis samples: ⌈2L/r⌉ intervals up to 64, then 64 (spacing max(r, 2L/64)) whatever L/r", () => {
    const r = 0.01;
    // 2L/r = 64 exactly: r apart still
    expect(capsuleSampleIntervals(r, 0.32)).toBe(64);
    expect(capsuleSampleIntervals(r, 0.2)).toBe(40);
    // L/r = 200 and 10⁴: before, 400 and 20 000 intervals (a BVH query each per detection)
    for (const L of [0.33, 2, 100]) expect(capsuleSampleIntervals(r, L)).toBe(64);
    // lying flat the 65 samples still sum to the exact section: the strip's ℓ = 2L/64 each
    const L = 2;
    const delta = 1e-3;
    const a2 = 2 * r * delta - delta * delta;
    const lying = [0, 0, 1, 1, 0, 0, 0, 1, 0];
    let sum = 0;
    for (let j = 0; j <= 64; j++) sum += capsuleSampleArea(r, L, j, lying, [0, 0, -1], 0, -delta);
    expect(sum).toBeCloseTo(2 * L * 2 * Math.sqrt(a2) + Math.PI * a2, 14);
  });

  it("box edge samples: a cube's corners take the box rule, a beam's rim shares its face", () => {
    // intervals ⌈h_j/h_mid⌉, h_mid the middle half extent
    const m = new Int32Array(3);
    const cube = [0.05, 0.05, 0.05];
    boxSampleIntervals(cube, m);
    expect(Array.from(m)).toEqual([1, 1, 1]);
    const rng = mulberry32(3);
    const q = [rng() - 0.5, rng() - 0.5, rng() - 0.5, rng() - 0.5];
    const l = Math.hypot(...q);
    const R = rotationMatrix(q.map((v) => v / l) as [number, number, number, number]).flat();
    const n = [0.36, 0.48, 0.8];
    expect(boxSampleArea(cube, m, [0.05, -0.05, 0.05], 0, R, n)).toBeCloseTo(
      boxVertexArea(cube, R, n),
      15,
    );
    // half extents 0.05, 0.05, 0.55: 11 intervals along z, 0.1 m apart
    const beam = [0.05, 0.05, 0.55];
    boxSampleIntervals(beam, m);
    expect(Array.from(m)).toEqual([1, 1, 11]);
    // a plate: its corners alone (the middle side, not the 2 mm one, sets the spacing)
    const plate = new Int32Array(3);
    boxSampleIntervals([0.5, 0.4, 0.001], plate);
    expect(Array.from(plate)).toEqual([2, 1, 1]);
    // lying on its −x face (n = −x, the box unrotated): the 24 samples of that face's rim
    // (x = −h_x, y = ±h_y, z = 0.1 j − 0.55) share its 0.1 × 1.1 m²
    const I = [1, 0, 0, 0, 1, 0, 0, 0, 1];
    let sum = 0;
    let count = 0;
    for (const y of [-0.05, 0.05])
      for (let j = 0; j <= 11; j++) {
        sum += boxSampleArea(beam, m, [-0.05, y, 0.1 * j - 0.55], 0, I, [-1, 0, 0]);
        count++;
      }
    expect(count).toBe(24);
    expect(sum).toBeCloseTo(0.1 * 1.1, 15);
    // an end's corner: its x face's share and its end face's (edge-on to n: none)
    expect(boxSampleArea(beam, m, [-0.05, 0.05, 0.55], 0, I, [-1, 0, 0])).toBeCloseTo(
      0.11 / 24,
      15,
    );
  });

  it("surface radius: a sphere's or capsule's radius, infinite for flat shapes", () => {
    expect(surfaceRadius({ shape: { type: "sphere", radius: 0.3 }, body: 0 })).toBe(0.3);
    expect(surfaceRadius({ shape: { type: "capsule", radius: 0.1, halfLength: 1 }, body: 0 })).toBe(
      0.1,
    );
    expect(surfaceRadius({ shape: { type: "box", halfExtents: [1, 1, 1] }, body: 0 })).toBe(
      Infinity,
    );
    expect(surfaceRadius(undefined)).toBe(Infinity);
  });
});
