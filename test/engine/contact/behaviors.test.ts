/**
 * Contact behaviors (ArtiSynth ContactForceBehavior) and contact areas against closed forms
 * written out here:
 * - linear: f = k dist (k A dist per unit area), compliance 1/k, ½ k dist² stored;
 * - Hertz: F = (4/3) E* √R δ^{3/2}, 1/E* = 2(1 − ν²)/E, R = 1/(1/r₀ + 1/r₁), compliance
 *   1/F′ = 1/(2E*√R δ^{1/2}), energy (8/15) E* √R δ^{5/2}; flat contacts fall back to
 *   Sneddon's punch F = 2 E* a δ with a = √(A/π);
 * - table: linear interpolation, last-slope extrapolation, trapezoid energy;
 * - d = max(damping, stepDamping·h/compliance), only when compliance > 0;
 * - f′ and f″ (compliance, stiffnessRate) against central differences of f;
 * - areas: ArtiSynth's vertex rule on explicit triangles, the box-vertex rule, the
 *   spherical cap circle, and the contour (hull / count) rule for a box on a box; hull
 *   vertices: a box's eight corners give the box rule, a tetrahedron's corner ArtiSynth's.
 */
import { describe, expect, it } from "vitest";
import {
  boxVertexArea,
  computeContactAreas,
  convexHullArea2D,
  hullVertexArea,
  roundContactArea,
  vertexContactArea,
} from "../../../src/engine/contact/area";
import {
  type ContactPoint,
  createContactBehavior,
  effectiveDamping,
  HertzContactBehavior,
  LinearContactBehavior,
  TableContactBehavior,
} from "../../../src/engine/contact/behaviors";
import { hullOfPoints } from "../../../src/engine/geometry/hull";
import { CollisionDetector, ContactBuffer } from "../../../src/engine/geometry/index";
import { loadModel } from "../../../src/engine/index";
import { rotationMatrix } from "../../support/quat";
import { mulberry32 } from "../../support/random";

const n = [0, 0, 1];
const flat: ContactPoint = { position: [0, 0, 0], body: -1, radius: Number.POSITIVE_INFINITY };
const ball = (r: number): ContactPoint => ({ position: [0, 0, 0], body: 0, radius: r });

describe("linear behavior", () => {
  it("force k·dist, compliance 1/k, energy ½k dist², nothing when separated", () => {
    const b = new LinearContactBehavior(2e4, 3, 0.5);
    const r = b.computeResponse(-0.002, flat, ball(0.1), n, 0);
    expect(r.force).toBeCloseTo(-40, 12);
    expect(r.compliance).toBeCloseTo(5e-5, 18);
    expect(r.damping).toBe(3);
    expect(r.stepDamping).toBe(0.5);
    expect(b.potential(-0.002, flat, ball(0.1), n, 0)).toBeCloseTo(0.04, 14);
    const s = b.computeResponse(0.001, flat, ball(0.1), n, 0);
    expect(s.force).toBe(0);
    expect(s.compliance).toBe(0);
  });

  it("per unit area scales force and stiffness by the area", () => {
    const b = new LinearContactBehavior(1e7, 0, 0, true);
    const r = b.computeResponse(-1e-3, flat, flat, n, 0.01);
    expect(r.force).toBeCloseTo(-1e7 * 0.01 * 1e-3, 10);
    expect(r.compliance).toBeCloseTo(1 / (1e7 * 0.01), 15);
    expect(b.computeResponse(-1e-3, flat, flat, n, 0).compliance).toBe(0);
  });
});

describe("effective damping", () => {
  it("is max(damping, stepDamping·h/compliance) and zero without compliance", () => {
    const r = { force: -1, compliance: 1e-4, damping: 2, stepDamping: 0.5, stiffnessRate: 0 };
    expect(effectiveDamping(r, 0.01)).toBeCloseTo((0.5 * 0.01) / 1e-4, 10); // 50 > 2
    expect(effectiveDamping({ ...r, damping: 80 }, 0.01)).toBe(80);
    expect(effectiveDamping({ ...r, compliance: 0 }, 0.01)).toBe(0);
  });
});

describe("Hertz behavior", () => {
  const E = 2e8;
  const nu = 0.3;
  const Es = E / (2 * (1 - nu * nu));
  const b = new HertzContactBehavior(E, nu, 0, 0.4);

  it("sphere on plane: F, compliance, energy and f″ of the closed forms", () => {
    const R = 0.05;
    const d = 1e-4;
    const r = b.computeResponse(-d, flat, ball(R), n, 0);
    expect(r.force).toBeCloseTo(-(4 / 3) * Es * Math.sqrt(R) * d ** 1.5, 8);
    expect(r.compliance).toBeCloseTo(1 / (2 * Es * Math.sqrt(R) * Math.sqrt(d)), 16);
    expect(b.potential(-d, flat, ball(R), n, 0)).toBeCloseTo(
      (8 / 15) * Es * Math.sqrt(R) * d ** 2.5,
      12,
    );
    // f′ = 1/compliance and f″ = stiffnessRate against central differences of f(dist).
    const f = (x: number) => b.computeResponse(x, flat, ball(R), n, 0).force;
    const e = 1e-8;
    const fp = (f(-d + e) - f(-d - e)) / (2 * e);
    const fpp = (f(-d + e) - 2 * f(-d) + f(-d - e)) / (e * e);
    expect(Math.abs(fp * b.computeResponse(-d, flat, ball(R), n, 0).compliance - 1)).toBeLessThan(
      1e-7,
    );
    expect(
      Math.abs(fpp / b.computeResponse(-d, flat, ball(R), n, 0).stiffnessRate - 1),
    ).toBeLessThan(1e-3);
  });

  it("two spheres use the effective radius; flat pairs use Sneddon's punch", () => {
    const d = 2e-5;
    const r2 = b.computeResponse(-d, ball(0.1), ball(0.05), n, 0).force;
    const R = 1 / (1 / 0.1 + 1 / 0.05);
    expect(r2).toBeCloseTo(-(4 / 3) * Es * Math.sqrt(R) * d ** 1.5, 8);
    const A = 0.0025;
    const punch = b.computeResponse(-d, flat, flat, n, A);
    expect(punch.force).toBeCloseTo(-2 * Es * Math.sqrt(A / Math.PI) * d, 6);
    expect(punch.compliance).toBeCloseTo(1 / (2 * Es * Math.sqrt(A / Math.PI)), 18);
  });
});

describe("table behavior", () => {
  const pts: [number, number][] = [
    [0, 0],
    [0.001, 10],
    [0.002, 40],
  ];
  const b = new TableContactBehavior(pts, 1, 0.2);

  it("interpolates, extrapolates with the last slope and integrates by trapezoids", () => {
    const at = (d: number) => b.computeResponse(-d, flat, flat, n, 0);
    expect(at(0.0005).force).toBeCloseTo(-5, 12);
    expect(at(0.0005).compliance).toBeCloseTo(1e-4, 16);
    expect(at(0.0015).force).toBeCloseTo(-25, 12);
    expect(at(0.0015).compliance).toBeCloseTo(0.001 / 30, 16);
    expect(at(0.003).force).toBeCloseTo(-70, 12);
    // ∫₀^0.0015 F = ½·0.001·10 + (10 + 25)/2·0.0005
    expect(b.potential(-0.0015, flat, flat, n, 0)).toBeCloseTo(0.005 + 0.00875, 14);
  });

  it("rejects tables that do not start at [0, 0] or do not ascend", () => {
    expect(
      () =>
        new TableContactBehavior([
          [0.001, 0],
          [0.002, 1],
        ]),
    ).toThrow();
    expect(
      () =>
        new TableContactBehavior([
          [0, 0],
          [0.002, 1],
          [0.001, 2],
        ]),
    ).toThrow();
  });

  it("the factory builds each behavior from its schema spec", () => {
    expect(
      createContactBehavior({
        type: "linear",
        stiffness: 1,
        damping: 0,
        stepDamping: 0,
        perUnitArea: false,
      }).type,
    ).toBe("linear");
    expect(
      createContactBehavior({
        type: "hertz",
        youngModulus: 1e6,
        poissonRatio: 0.3,
        damping: 0,
        stepDamping: 0,
      }).type,
    ).toBe("hertz");
    expect(
      createContactBehavior({ type: "table", points: pts, damping: 0, stepDamping: 0 }).type,
    ).toBe("table");
  });
});

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
    expect(vertexContactArea(tri, 4, [0, 0, 1], true)).toBeCloseTo(1 / 3, 14);
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
});

describe("compliant contact of a convex hull", () => {
  it("a box given as a hull rests on a plane under per-unit-area springs: Σ f_n = m g", () => {
    const corners: [number, number, number][] = [];
    for (const x of [-0.2, 0.2])
      for (const y of [-0.1, 0.1]) for (const z of [-0.05, 0.05]) corners.push([x, y, z]);
    const sim = loadModel({
      gravity: [0, 0, -9.81],
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
        {
          id: "hull",
          mass: 2,
          position: [0, 0, 0.05],
          shapes: [{ type: "convex", points: corners }],
        },
      ],
      contact: {
        method: "smc",
        behavior: { type: "linear", stiffness: 1e7, perUnitArea: true, damping: 2e4 },
      },
      solver: { integrator: "backward-euler", dt: 0.002 },
    });
    sim.step(1500);
    const s = sim.state();
    const total = s.contacts.reduce((acc, c) => acc + c.normalForce, 0);
    expect(total).toBeCloseTo(2 * 9.81, 6);
    // the penetration of the springs k A δ = m g over the whole face A = 0.08 m²
    const z = s.bodies.find((b) => b.id === "hull")?.position[2] ?? 0;
    expect(0.05 - z).toBeCloseTo((2 * 9.81) / (1e7 * 0.08), 8);
  });
});
