/**
 * Mesh pairs (pairs/mesh.ts) against independent facts (the mesh data: ../mesh.test.ts,
 * its BVH: ../bvh.test.ts):
 *  - on a flat grid (a terrain), a sphere over a face, a shared edge or a shared vertex
 *    gets one contact with the face normal and the exact gap z − r; a box and a hull
 *    resting across internal edges get only +z normals and gap z − h;
 *  - a hull vertex over a 1° crease gets one contact, the deeper face's, of the closed-form
 *    gap (z − δ tan θ) cos θ; in a 60° valley both faces' contacts; a box 1 mm over a 1°
 *    ridge no contact deeper than its own gap (G along +z, G cos θ along a face normal);
 *    a box set 1 cm off that ridge tips onto the face and rests turned by θ, its contacts'
 *    forces summing to m g; a box flat across two coplanar triangles carries m g;
 *  - a box face on a mesh edge (level on a 1° ridge; tipped 0.01 rad over a table's edge):
 *    two contacts at the ends of the segment of contact, of the closed-form gap; balanced
 *    there, the box stays at its pose (turned < 1e-6 rad, within the projection's 0.1 mm),
 *    each end carrying m g/2;
 *  - a box, a hull, a capsule and a cylinder beside a lone triangle, their nearest point d
 *    from its edge: contacts (gap d, normal −x) iff d < margin, on both sides of the
 *    margin (the box test that skips a triangle before GJK never skips a contact);
 *  - a hull moving over a bumpy terrain gets at every pose the contacts of a copy of its
 *    shape without far axes (the triangles GJK found beyond the margin are skipped only
 *    where GJK would find no contact);
 *  - a ball rolling without slipping in a spherical bowl given as a mesh oscillates with
 *    the period of the closed form for small oscillations,
 *    ω² = g / ((R − r)(1 + I/(m r²))) = 5g / (7(R − r)) for a solid ball;
 *  - once warm, a mesh pair allocates (next to) nothing (mesh-allocation-probe.ts, in a
 *    process of its own): under 1 B a call is measured; the bound is two heap numbers
 *    (32 B) a call, since in about one run of six V8's first optimized code for the
 *    sphere pair still boxes one number a call (16 B) until it is optimized again. A
 *    heap number in a loop of the triangle or hull core (40–80 B a call) fails it.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../../schemas/model";
import { convexHull } from "../../../../src/engine/geometry/hull";
import { buildMesh } from "../../../../src/engine/geometry/mesh";
import type { Shape } from "../../../../src/engine/geometry/shapes";
import { loadModel } from "../../../../src/engine/index";
import { bowlMesh } from "../../../support/bowl";
import { runBundledProbe } from "../../../support/bundled-probe";
import { axisAngle } from "../../../support/quat";
import { mulberry32 } from "../../../support/random";
import { collide, pose } from "../helpers";

/** An n × n grid of unit squares on z = 0 centred on the origin, two triangles each. */
function grid(n: number): Shape {
  const V: number[] = [];
  const T: number[] = [];
  for (let j = 0; j <= n; j++) for (let i = 0; i <= n; i++) V.push(i - n / 2, j - n / 2, 0);
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      const a = j * (n + 1) + i;
      T.push(a, a + 1, a + n + 2, a, a + n + 2, a + n + 1);
    }
  return { type: "mesh", mesh: buildMesh(new Float64Array(V), new Int32Array(T)) };
}

describe("mesh pairs on a flat terrain", () => {
  const terrain = grid(4);
  const at = pose([0, 0, 0]);
  const r = 0.3;
  for (const [name, xy] of [
    ["face", [0.3, 0.6]],
    ["shared diagonal edge", [0.5, 0.5]],
    ["shared axis edge", [0, 0.4]],
    ["shared vertex", [0, 0]],
  ] as const) {
    it(`a sphere over a ${name}: one contact, normal +z, gap z − r`, () => {
      const z = 0.29;
      const cs = collide(terrain, at, { type: "sphere", radius: r }, pose([xy[0], xy[1], z]), 0.01);
      expect(cs.length).toBe(1);
      expect(cs[0].normal).toEqual([0, 0, 1]);
      expect(cs[0].gap).toBeCloseTo(z - r, 15);
      expect(cs[0].point[0]).toBeCloseTo(xy[0], 15);
      expect(cs[0].point[1]).toBeCloseTo(xy[1], 15);
    });
  }

  it("a sphere off the terrain's border edge gets the edge normal", () => {
    const cs = collide(terrain, at, { type: "sphere", radius: r }, pose([2.1, 0.2, 0.1]), 0);
    expect(cs.length).toBe(1);
    const d = Math.hypot(0.1, 0.1);
    expect(cs[0].gap).toBeCloseTo(d - r, 14);
    expect(cs[0].normal[0]).toBeCloseTo(0.1 / d, 14);
    expect(cs[0].normal[2]).toBeCloseTo(0.1 / d, 14);
  });

  it("a box and a hull resting across internal edges: +z normals, gap z − h", () => {
    const h = 0.25;
    const z = 0.24;
    const q = axisAngle([0, 0, 1], 0.3);
    const box: Shape = { type: "box", halfExtents: [0.6, 0.4, h] };
    const pts = new Float64Array(3 * 12);
    for (let k = 0; k < 6; k++) {
      const a = (2 * Math.PI * k) / 6;
      pts.set(
        [0.5 * Math.cos(a), 0.5 * Math.sin(a), -h, 0.5 * Math.cos(a), 0.5 * Math.sin(a), h],
        6 * k,
      );
    }
    const prism: Shape = { type: "convex", hull: convexHull(pts) };
    for (const s of [box, prism]) {
      const cs = collide(terrain, at, s, pose([0.1, -0.05, z], q), 0.01);
      expect(cs.length).toBeGreaterThanOrEqual(3);
      for (const c of cs) {
        expect(c.normal[2]).toBeCloseTo(1, 12);
        expect(c.gap).toBeCloseTo(z - h, 12);
      }
    }
  });
});

/**
 * A valley along y: two faces z = |x| tan θ meeting at the crease x = 0, y ∈ [−1, 1],
 * normals n_∓ = (±sin θ, 0, cos θ) for x ≶ 0, 2θ apart (each face two triangles); a ridge
 * for θ < 0.
 */
function valley(theta: number): Shape {
  const t = Math.tan(theta);
  const V = new Float64Array([-1, -1, t, 0, -1, 0, -1, 1, t, 0, 1, 0, 1, -1, t, 1, 1, t]);
  const T = new Int32Array([0, 1, 3, 0, 3, 2, 1, 4, 5, 1, 5, 3]);
  return { type: "mesh", mesh: buildMesh(V, T) };
}

const triples = (x: ArrayLike<number>): [number, number, number][] =>
  Array.from({ length: x.length / 3 }, (_, k) => [x[3 * k], x[3 * k + 1], x[3 * k + 2]]);

/** A 0.6 × 0.4 × 0.2 m box of mass m at a pose on a fixed mesh (Moreau–Jean, μ = 0.5, e = 0). */
const boxOnMesh = (
  vertices: [number, number, number][],
  triangles: [number, number, number][],
  m: number,
  position: [number, number, number],
  orientation: [number, number, number, number],
): ModelInput => ({
  gravity: [0, 0, -9.81],
  bodies: [
    { id: "floor", fixed: true, shapes: [{ type: "mesh", vertices, triangles }] },
    {
      id: "box",
      mass: m,
      position,
      orientation,
      shapes: [{ type: "box", halfExtents: [0.3, 0.2, 0.1] }],
    },
  ],
  contact: { method: "nsc", friction: 0.5, restitution: 0 },
  solver: { integrator: "moreau-jean", dt: 1 / 240 },
});

describe("contacts of one hull point on several triangles merge (pairs/mesh.ts merged)", () => {
  // An octahedron of radius a, its lowest vertex P = centre − a z.
  const a = 0.1;
  const octa = new Float64Array(18);
  for (let k = 0; k < 3; k++) {
    octa[6 * k + k] = a;
    octa[6 * k + 3 + k] = -a;
  }
  const hull: Shape = { type: "convex", hull: convexHull(octa) };
  const at = pose([0, 0, 0]);

  it("a vertex over a 1° crease: one contact, the deeper face's normal and gap", () => {
    const theta = Math.PI / 360;
    // P = (δ, 0.2, z) over the right face: its distance (z − δ tan θ) cos θ along n_+ is
    // the smaller one (the left face's plane: (z + δ tan θ) cos θ).
    const d = 1e-3;
    const z = 2e-3;
    const cs = collide(valley(theta), at, hull, pose([d, 0.2, z + a]), 0.01);
    expect(cs.length).toBe(1);
    const gap = (z - d * Math.tan(theta)) * Math.cos(theta);
    expect(cs[0].gap).toBeCloseTo(gap, 12);
    expect(cs[0].normal[0]).toBeCloseTo(-Math.sin(theta), 12);
    expect(cs[0].normal[1]).toBeCloseTo(0, 12);
    expect(cs[0].normal[2]).toBeCloseTo(Math.cos(theta), 12);
    // the midpoint between P and its foot on the right face: P − (gap/2) n_+
    expect(cs[0].point[0]).toBeCloseTo(d + 0.5 * gap * Math.sin(theta), 12);
    expect(cs[0].point[2]).toBeCloseTo(z - 0.5 * gap * Math.cos(theta), 12);
  });

  it("a vertex in a 60° valley keeps both faces' contacts (normals too far apart to merge)", () => {
    const theta = Math.PI / 6;
    const z = 2e-3;
    const cs = collide(valley(theta), at, hull, pose([0, 0.2, z + a]), 0.01);
    expect(cs.length).toBe(2);
    const sides = cs.map((c) => Math.sign(c.normal[0])).sort();
    expect(sides).toEqual([-1, 1]);
    for (const c of cs) {
      expect(c.gap).toBeCloseTo(z * Math.cos(theta), 12);
      expect(Math.abs(c.normal[0])).toBeCloseTo(Math.sin(theta), 12);
    }
  });

  it("a box over a 1° ridge: contacts at the ridge, no deeper than the box's own gap", () => {
    // valley(−θ) is a ridge along y at z = 0; the box's bottom face at height G spans
    // x ∈ [−0.3, 0.3], so it touches the ridge only and is G above it. A contact turned to
    // a face normal measured over the whole box would have the far corner's depth below
    // that face's plane, G − 0.3 tan θ ≈ −4.2 mm for G = 1 mm.
    const theta = Math.PI / 180;
    const box: Shape = { type: "box", halfExtents: [0.3, 0.2, 0.1] };
    for (const G of [1e-3, -1e-3]) {
      const cs = collide(valley(-theta), at, box, pose([0, 0.2, 0.1 + G]), 0.01);
      // the ridge's contact: gap G along +z, G cos θ along a face normal; others (the
      // bottom's far edges, G + 0.3 tan θ above the faces, within the margin) no deeper
      const lo = Math.min(G, G * Math.cos(theta)) - 1e-12;
      const deepest = cs.reduce((a, b) => (b.gap < a.gap ? b : a));
      expect(deepest.gap).toBeGreaterThanOrEqual(lo);
      expect(deepest.gap).toBeLessThanOrEqual(Math.max(G, G * Math.cos(theta)) + 1e-12);
      expect(Math.abs(deepest.point[0])).toBeLessThan(1e-3);
      for (const c of cs) expect(c.normal[2]).toBeGreaterThanOrEqual(Math.cos(theta) - 1e-12);
    }
  });

  it("a box set 1 cm off a 1° ridge tips onto the face and rests on it, carrying m g", () => {
    const theta = Math.PI / 180;
    const ridge = valley(-theta);
    if (ridge.type !== "mesh") throw new Error("mesh expected");
    const m = 2;
    const g = 9.81;
    const h = 0.1;
    const sim = loadModel(
      boxOnMesh(
        triples(ridge.mesh.vertices),
        triples(ridge.mesh.triangles),
        m,
        [0.01, 0.2, h],
        [1, 0, 0, 0],
      ),
    );
    for (let k = 0; k < 480; k++) sim.step(1);
    const st = sim.state();
    const box = st.bodies[1];
    // turned by θ about +y onto the face x > 0 (normal (sin θ, 0, cos θ)), within the
    // projection's 0.1 mm over the box's 0.3 m half-width
    const q = box.orientation;
    expect(Math.abs(2 * Math.asin(q[2]) - theta)).toBeLessThan(1e-4 / 0.3 + 1e-6);
    expect(Math.hypot(q[1], q[3])).toBeLessThan(1e-3);
    expect(Math.hypot(...box.velocity)).toBeLessThan(1e-6);
    // at rest: the contact forces (normal and friction) sum to m g upwards
    const f = [0, 0, 0];
    for (const c of st.contacts)
      for (let i = 0; i < 3; i++) f[i] += c.normalForce * c.normal[i] + c.tangentForce[i];
    expect(Math.abs(f[2] / (m * g) - 1)).toBeLessThan(1e-6);
    expect(Math.hypot(f[0], f[1]) / (m * g)).toBeLessThan(1e-6);
  });

  it("a box resting flat across the shared edge of two coplanar triangles carries m g", () => {
    // One square, two triangles split by the diagonal x = y, under a box turned 0.3 rad.
    const V = new Float64Array([-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0]);
    const T = new Int32Array([0, 1, 2, 0, 2, 3]);
    const m = 2;
    const g = 9.81;
    const h = 0.1;
    const sim = loadModel(
      boxOnMesh(triples(V), triples(T), m, [0.05, -0.02, h], axisAngle([0, 0, 1], 0.3)),
    );
    for (let k = 0; k < 240; k++) sim.step(1);
    const contacts = sim.state().contacts;
    // the four corners; the face's crossings of the diagonal are each one contact
    let fz = 0;
    for (const c of contacts) {
      expect(c.normal[2]).toBeCloseTo(1, 12);
      fz += c.normalForce * c.normal[2];
    }
    expect(fz).toBeCloseTo(m * g, 6);
    for (let i = 0; i < contacts.length; i++)
      for (let j = 0; j < i; j++) {
        const p = contacts[i].point;
        const q = contacts[j].point;
        expect(Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2])).toBeGreaterThan(1e-3);
      }
  });
});

describe("a closed mesh (a robot link's collision mesh) resting on a box", () => {
  // The mesh is the box of half extents (a, b, c) as 12 outward triangles; the contacts at
  // its bottom corners, where a side triangle meets the bottom face, belong to the bottom
  // face whatever the rounding of the corner's position on the side triangle.
  const [a, b, c] = [0.06, 0.06, 0.08];
  const corner = (i: number): [number, number, number] => [
    i & 1 ? a : -a,
    i & 2 ? b : -b,
    i & 4 ? c : -c,
  ];
  const quads = [
    [0, 2, 3, 1],
    [4, 5, 7, 6],
    [0, 1, 5, 4],
    [2, 6, 7, 3],
    [0, 4, 6, 2],
    [1, 3, 7, 5],
  ];
  const vertices = Array.from({ length: 8 }, (_, i) => corner(i));
  const triangles = quads.flatMap(([p, q, r, s]): [number, number, number][] => [
    [p, q, r],
    [p, r, s],
  ]);
  const linkMesh: Shape = {
    type: "mesh",
    mesh: buildMesh(new Float64Array(vertices.flat()), new Int32Array(triangles.flat())),
  };
  const floor: Shape = { type: "box", halfExtents: [2, 2, 0.5] };

  for (const eps of [1e-10, 1e-6, 1e-4, 1e-2]) {
    it(`tilted ${eps} rad about x, its low edge 1e-5 m into the box: four contacts at its bottom corners, normals ±z within ${eps} rad, gaps their heights`, () => {
      // turned by ε about x, a corner (x, y, −c) is at height z0 + y sin ε − c cos ε; the
      // centre z0 = c cos ε + b sin ε − 1e-5 puts the y = −b corners at −1e-5
      const z0 = c * Math.cos(eps) + b * Math.sin(eps) - 1e-5;
      const cs = collide(
        linkMesh,
        pose([0, 0, z0], axisAngle([1, 0, 0], eps)),
        floor,
        pose([0, 0, -0.5]),
        0.01,
      );
      // before: 6, 4 with a side face's normal (±x, ±y) of gap 0 at the corners
      expect(cs.length).toBe(4);
      for (const k of cs) {
        expect(Math.abs(k.normal[2])).toBeGreaterThan(Math.cos(eps) - 1e-12);
        const y = k.point[1] > 0 ? b : -b;
        const height = z0 + y * Math.sin(eps) - c * Math.cos(eps);
        expect(Math.abs(k.gap - height)).toBeLessThan(1e-9 + 2 * eps * Math.abs(height));
        expect(Math.abs(Math.abs(k.point[0]) - a)).toBeLessThan(1e-5);
      }
    });
  }

  it("dropped tumbling (3 kg) rests within 1 s on the box's face, its contacts' force m g up, every normal the floor's (no sideways squeeze)", () => {
    const m = 3;
    const g = 9.81;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "floor",
          fixed: true,
          position: [0, 0, -0.5],
          shapes: [{ type: "box", halfExtents: [2, 2, 0.5] }],
        },
        {
          id: "link",
          mass: m,
          inertia: [
            (m * (b * b + c * c)) / 3,
            (m * (a * a + c * c)) / 3,
            (m * (a * a + b * b)) / 3,
          ],
          position: [0, 0, 0.3],
          orientation: axisAngle(
            [1, 2, 0.5].map((x) => x / Math.hypot(1, 2, 0.5)) as [number, number, number],
            0.7,
          ),
          angularVelocity: [1, -2, 0.5],
          shapes: [{ type: "mesh", vertices, triangles }],
        },
      ],
      contact: { method: "nsc", friction: 0.5, restitution: 0 },
      solver: { integrator: "moreau-jean", dt: 0.005 },
    });
    sim.step(200);
    let speed = 0;
    for (let k = 0; k < 200; k++) {
      sim.step(1);
      const body = sim.state().bodies[1];
      speed = Math.max(speed, Math.hypot(...body.velocity), Math.hypot(...body.angularVelocity));
    }
    expect(speed).toBeLessThan(1e-9);
    const st = sim.state();
    // the contacts' force on the link (normal from bodies[0] to bodies[1], the friction
    // force on bodies[1]) balances its weight; every normal is the floor's (before, at
    // rest 1.8 mm above the floor: Σ F_n = 12.4 m g, side contacts of normals ±x, ±y
    // squeezing the mesh and their friction holding it up)
    const force = [0, 0, 0];
    let sum = 0;
    for (const k of st.contacts) {
      const sign = k.bodies[1] === "link" ? 1 : -1;
      for (let i = 0; i < 3; i++)
        force[i] += sign * (k.normalForce * k.normal[i] + k.tangentForce[i]);
      sum += k.normalForce;
      expect(Math.abs(k.normal[2])).toBeGreaterThan(0.999);
      expect(k.gap).toBeGreaterThan(-2e-4);
    }
    expect(Math.abs(force[0]) + Math.abs(force[1])).toBeLessThan(1e-6 * m * g);
    expect(Math.abs(force[2] / (m * g) - 1)).toBeLessThan(1e-6);
    // the friction locked in at the landing tilts by the floor's ε the normal share only
    expect(Math.abs(sum / (m * g) - 1)).toBeLessThan(1e-3);
    expect(Math.abs(st.bodies[1].position[2] - c)).toBeLessThan(2e-4);
  });
});

describe("a box face on a mesh edge: the segment of contact by its two end points", () => {
  // The box's bottom face (0.6 × 0.4, half-height h = 0.1) across an edge along y, the
  // segment of contact y ∈ [0, 0.4] on it. The convex cores' polygon–polygon manifold takes
  // the larger polygon, the triangle, as reference when the normals are within 1.8°
  // (clip.ts referenceIsB), but the triangle's plane does not separate a box that hangs
  // over its edge; the box's face does (manifold.ts polygonPolygon), and clipping the
  // triangle to it gives the segment's ends, where one contact point would leave the box
  // free to tip about it.
  const theta = Math.PI / 180;
  const h = 0.1;
  const at = pose([0, 0, 0]);
  const box: Shape = { type: "box", halfExtents: [0.3, 0.2, h] };
  /** The contacts of gap below `below`, sorted by y. */
  const deepest = (cs: ReturnType<typeof collide>, below: number) =>
    cs.filter((c) => c.gap < below).sort((p, q) => p.point[1] - q.point[1]);

  it("a box level on a 1° ridge, its face G above it: contacts of gap G, normal +z, at both ends", () => {
    for (const G of [1e-3, 0, -1e-3]) {
      const cs = collide(valley(-theta), at, box, pose([0, 0.2, h + G]), 0.01);
      // the face's other points are G + |x| tan θ above the ridge's faces (|x| ≤ 0.3)
      const ends = deepest(cs, G + 1e-9);
      expect(ends.length).toBe(2);
      ends.forEach((c, e) => {
        expect(c.gap).toBeCloseTo(G, 12);
        expect(c.normal[2]).toBeCloseTo(1, 12);
        // the midpoint between the ridge point (0, 0.4 e, 0) and the face above it
        expect(c.point[0]).toBeCloseTo(0, 12);
        expect(c.point[1]).toBeCloseTo(0.4 * e, 12);
        expect(c.point[2]).toBeCloseTo(G / 2, 12);
      });
    }
  });

  it("a box tipped 0.01 rad over a table's edge, its face G from it: contacts of gap G at both ends", () => {
    // The table z = 0, x ≤ 1; the box turned by φ about +y (outward face normal −n,
    // n = (sin φ, 0, cos φ)), its centre above the edge x = 1: the edge's points lie at
    // (E − c)·n + h = h − z_c cos φ inside the face's plane, gap G for z_c = (h + G)/cos φ.
    const table: Shape = {
      type: "mesh",
      mesh: buildMesh(
        new Float64Array([-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0]),
        new Int32Array([0, 1, 2, 0, 2, 3]),
      ),
    };
    const phi = 0.01;
    for (const G of [1e-3, 0, -1e-3]) {
      const q = axisAngle([0, 1, 0], phi);
      const cs = collide(table, at, box, pose([1, 0.2, (h + G) / Math.cos(phi)], q), 0.01);
      const ends = deepest(cs, G + 1e-9);
      expect(ends.length).toBe(2);
      ends.forEach((c, e) => {
        expect(c.gap).toBeCloseTo(G, 12);
        expect(c.normal[0]).toBeCloseTo(Math.sin(phi), 12);
        expect(c.normal[2]).toBeCloseTo(Math.cos(phi), 12);
        expect(c.point[0] - (G / 2) * Math.sin(phi)).toBeCloseTo(1, 12);
        expect(c.point[1]).toBeCloseTo(0.4 * e, 12);
      });
    }
  });

  /**
   * The box after `steps` steps from the pose (position, orientation) on the mesh (V, T): it
   * must stay at that pose (an equilibrium, unstable to a tilt about the edge at
   * √(m g h / I) ≈ 4.8 /s: a seed of 1e-16 stays below 1e-12 over 2 s) within the
   * position projection's 0.1 mm, turned by less than 1e-6 rad, at rest; and the forces
   * (normal and friction) of the contacts that carry any load must be two, at the
   * segment's ends `ends`, each m g/2 upwards (symmetric placement).
   */
  function restsOnEnds(
    V: Float64Array,
    T: Int32Array,
    position: [number, number, number],
    orientation: [number, number, number, number],
    ends: [number, number, number][],
  ): void {
    const m = 2;
    const g = 9.81;
    const sim = loadModel(boxOnMesh(triples(V), triples(T), m, position, orientation));
    sim.step(480);
    const st = sim.state();
    const b = st.bodies[1];
    for (let i = 0; i < 3; i++) expect(Math.abs(b.position[i] - position[i])).toBeLessThan(1e-4);
    // the turn q q0⁻¹ from the starting orientation: its vector part is sin(angle/2) times the axis
    const q = b.orientation;
    const [w0, x0, y0, z0] = orientation;
    const turn = [
      w0 * q[1] - x0 * q[0] - y0 * q[3] + z0 * q[2],
      w0 * q[2] + x0 * q[3] - y0 * q[0] - z0 * q[1],
      w0 * q[3] - x0 * q[2] + y0 * q[1] - z0 * q[0],
    ];
    expect(2 * Math.hypot(...turn)).toBeLessThan(1e-6);
    expect(Math.hypot(...b.velocity)).toBeLessThan(1e-6);
    expect(Math.hypot(...b.angularVelocity)).toBeLessThan(1e-6);
    const carrying = st.contacts
      .filter((c) => c.normalForce > 1e-9 * m * g)
      .sort((p, q) => p.point[1] - q.point[1]);
    expect(carrying.length).toBe(2);
    const total = [0, 0, 0];
    carrying.forEach((c, e) => {
      for (let i = 0; i < 3; i++) expect(Math.abs(c.point[i] - ends[e][i])).toBeLessThan(1e-4);
      const f = [0, 1, 2].map((i) => c.normalForce * c.normal[i] + c.tangentForce[i]);
      expect(Math.abs(f[2] / (m * g) - 0.5)).toBeLessThan(1e-6);
      for (let i = 0; i < 3; i++) total[i] += f[i];
    });
    expect(Math.abs(total[2] / (m * g) - 1)).toBeLessThan(1e-6);
    expect(Math.hypot(total[0], total[1]) / (m * g)).toBeLessThan(1e-6);
  }

  it("a box balanced level on a 1° ridge stays level, m g/2 at each end of the ridge under it", () => {
    const ridge = valley(-theta);
    if (ridge.type !== "mesh") throw new Error("mesh expected");
    restsOnEnds(
      ridge.mesh.vertices,
      ridge.mesh.triangles,
      [0, 0.2, h],
      [1, 0, 0, 0],
      [
        [0, 0, 0],
        [0, 0.4, 0],
      ],
    );
  });

  it("a box tipped 0.01 rad, balanced on a table's edge, stays so, m g/2 at each end of the edge", () => {
    // the centre above the edge, the face touching it: z_c = h / cos φ (as above, G = 0)
    const phi = 0.01;
    restsOnEnds(
      new Float64Array([-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, 1, 0]),
      new Int32Array([0, 1, 2, 0, 2, 3]),
      [1, 0.2, h / Math.cos(phi)],
      axisAngle([0, 1, 0], phi),
      [
        [1, 0, 0],
        [1, 0.4, 0],
      ],
    );
  });
});

describe("shapes beside a lone triangle (the box test before GJK)", () => {
  // The triangle (0,0,0), (1,0,0), (0,1,0); each shape's nearest point is d from its edge
  // x = 0 (on the side x < 0, straddling the plane z = 0). The separating-axis test on the
  // shape's box (pairs/mesh.ts boxSeparates) may skip the triangle only when d ≥ margin.
  const lone: Shape = {
    type: "mesh",
    mesh: buildMesh(new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0]), new Int32Array([0, 1, 2])),
  };
  const at = pose([0, 0, 0]);
  const margin = 0.01;
  const octahedron = new Float64Array(18);
  for (let k = 0; k < 3; k++) {
    octahedron[6 * k + k] = 0.1;
    octahedron[6 * k + 3 + k] = -0.1;
  }
  // shape, the distance from its centre to its nearest point along −x, its orientation
  const cases: Array<[string, Shape, number, [number, number, number, number]]> = [
    ["box", { type: "box", halfExtents: [0.1, 0.2, 0.1] }, 0.1, [1, 0, 0, 0]],
    [
      "hull (octahedron, a vertex towards the edge)",
      { type: "convex", hull: convexHull(octahedron) },
      0.1,
      [1, 0, 0, 0],
    ],
    [
      "capsule along y",
      { type: "capsule", radius: 0.05, halfLength: 0.1 },
      0.05,
      axisAngle([1, 0, 0], Math.PI / 2),
    ],
    ["cylinder along z", { type: "cylinder", radius: 0.1, halfLength: 0.1 }, 0.1, [1, 0, 0, 0]],
  ];
  for (const [name, shape, reach, q] of cases)
    it(`${name}: contact with gap d and normal −x iff d < margin`, () => {
      for (const d of [0.6 * margin, 0.99 * margin, 1.01 * margin, 2 * margin]) {
        const cs = collide(lone, at, shape, pose([-reach - d, 0.4, 0], q), margin);
        if (d >= margin) {
          expect(cs.length).toBe(0);
          continue;
        }
        expect(cs.length).toBeGreaterThanOrEqual(1);
        expect(Math.min(...cs.map((c) => c.gap))).toBeCloseTo(d, 12);
        for (const c of cs) expect(c.normal[0]).toBeCloseTo(-1, 9);
      }
    });
});

describe("far axes (the triangles GJK found beyond the margin, skipped while still separated)", () => {
  it("a hull moving over a bumpy terrain: at every pose the contacts of a shape without any, bit for bit", () => {
    // A 10 × 10 grid of 0.1 m squares, z = 0.02 sin(7x) cos(5y); a hull of 30 points on an
    // ellipsoid sliding, turning and sinking over it from 3 cm above to 1 cm into it: the
    // shape object keeps its far axes from pose to pose, a copy of it (same hull) starts
    // without. The far axes may only skip GJK where it would find no contact.
    const n = 10;
    const V: number[] = [];
    const T: number[] = [];
    for (let j = 0; j <= n; j++)
      for (let i = 0; i <= n; i++) {
        const x = 0.1 * i - 0.5;
        const y = 0.1 * j - 0.5;
        V.push(x, y, 0.02 * Math.sin(7 * x) * Math.cos(5 * y));
      }
    for (let j = 0; j < n; j++)
      for (let i = 0; i < n; i++) {
        const a = j * (n + 1) + i;
        T.push(a, a + 1, a + n + 2, a, a + n + 2, a + n + 1);
      }
    const terrain: Shape = {
      type: "mesh",
      mesh: buildMesh(new Float64Array(V), new Int32Array(T)),
    };
    const r = mulberry32(17);
    const pts = new Float64Array(90);
    for (let k = 0; k < 30; k++) {
      const u = 2 * r() - 1;
      const t = 2 * Math.PI * r();
      const s = Math.sqrt(1 - u * u);
      pts.set([0.08 * s * Math.cos(t), 0.05 * s * Math.sin(t), 0.04 * u], 3 * k);
    }
    const hull = convexHull(pts);
    const moving: Shape = { type: "convex", hull };
    const at = pose([0, 0, 0]);
    const margin = 0.01;
    let contacts = 0;
    for (let k = 0; k <= 400; k++) {
      const s = k / 400;
      const q = axisAngle([0.3, -0.2, 1], 2 * s);
      const p = pose([-0.3 + 0.6 * s, 0.2 * Math.sin(3 * s), 0.07 - 0.08 * s], q);
      const got = collide(terrain, at, moving, p, margin);
      const fresh = collide(terrain, at, { type: "convex", hull }, p, margin);
      expect(got).toEqual(fresh);
      contacts += got.length;
    }
    expect(contacts).toBeGreaterThan(400);
  });
});

describe("ball in a spherical bowl (mesh)", () => {
  it("rolls with the small-oscillation period 2π √(7(R − r)/(5g))", () => {
    const R = 1;
    const r = 0.1;
    const g = 9.81;
    const a0 = 0.08;
    const { vertices, triangles } = bowlMesh(R, 0.7, 40, 128);
    const h = 0.002;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        { id: "bowl", fixed: true, shapes: [{ type: "mesh", vertices, triangles }] },
        {
          id: "ball",
          mass: 1,
          position: [(R - r) * Math.sin(a0), 0, R - (R - r) * Math.cos(a0)],
          shapes: [{ type: "sphere", radius: r }],
        },
      ],
      contact: { method: "nsc", friction: 1, restitution: 0 },
      solver: { integrator: "moreau-jean", dt: h, theta: 0.5 },
    });
    const crossings: number[] = [];
    let prev = (R - r) * Math.sin(a0);
    for (let k = 0; k < 4000; k++) {
      sim.step(1);
      const st = sim.state();
      const x = st.bodies[1].position[0];
      if (prev > 0 && x <= 0) crossings.push(st.time - (h * x) / (x - prev));
      prev = x;
    }
    expect(crossings.length).toBeGreaterThanOrEqual(3);
    const T = (crossings[crossings.length - 1] - crossings[0]) / (crossings.length - 1);
    // Closed form, plus the finite-amplitude correction of a pendulum, T(1 + a0²/16). The
    // facets move the period by a few 1e-3 (−0.67 % here, +0.28 % with 80 × 256 quads).
    const T0 = 2 * Math.PI * Math.sqrt((7 * (R - r)) / (5 * g)) * (1 + (a0 * a0) / 16);
    expect(Math.abs(T / T0 - 1)).toBeLessThan(1e-2);
  }, 60_000);
});

describe("mesh pairs allocate nothing once warm", () => {
  it("each shape against a terrain: less than two heap numbers (32 B) a call", async () => {
    const report = await runBundledProbe<
      Record<string, { contacts: number; bytesPerCall: number }>
    >(join(import.meta.dirname, "mesh-allocation-probe.ts"));
    expect(Object.keys(report)).toEqual(["sphere", "capsule", "box", "cylinder", "convex"]);
    for (const { contacts, bytesPerCall } of Object.values(report)) {
      expect(contacts).toBeGreaterThanOrEqual(4); // the poses do touch the terrain
      expect(bytesPerCall).toBeLessThan(32);
    }
  }, 60_000);
});
