/**
 * Triangle mesh data (mesh.ts) against closed forms: a cube of side 2a has 12 triangles of
 * area 2a², the axis normals, 18 unique edges (12 cube edges and 6 face diagonals, each
 * between two triangles), every vertex in 4–6 triangles, volume 8a³ and inertia
 * (2/3)·8a³·a² = 16a⁵/3 about each axis (unit density: m (2a)²/6); malformed meshes are
 * refused naming the problem.
 */
import { describe, expect, it } from "vitest";
import { buildMesh, MeshError } from "../../../src/engine/geometry/mesh";

describe("mesh data", () => {
  it("a cube of side 2a: areas, normals, edges, closed, volume 8a³ and inertia 16a⁵/3", () => {
    const a = 0.7;
    const c = [0.3, -0.2, 1.1];
    const x = Float64Array.from({ length: 24 }, (_, k) => {
      const v = Math.floor(k / 3);
      const i = k % 3;
      return c[i] + ((v >> i) & 1 ? a : -a);
    });
    // Two triangles per face, counter-clockwise from outside (vertex bit i: +a along i).
    const tri = new Int32Array([
      0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1,
      3, 7, 1, 7, 5,
    ]);
    const m = buildMesh(x, tri);
    expect(m.closed).toBe(true);
    for (let t = 0; t < 12; t++) {
      expect(m.areas[t]).toBeCloseTo(2 * a * a, 14);
      const n = [m.normals[3 * t], m.normals[3 * t + 1], m.normals[3 * t + 2]];
      // An axis normal pointing away from the centre, through the triangle's centroid.
      const g = [0, 1, 2].map(
        (i) => (x[3 * tri[3 * t] + i] + x[3 * tri[3 * t + 1] + i] + x[3 * tri[3 * t + 2] + i]) / 3,
      );
      expect(n.map(Math.abs).sort()).toEqual([0, 0, 1]);
      expect(n[0] * (g[0] - c[0]) + n[1] * (g[1] - c[1]) + n[2] * (g[2] - c[2])).toBeCloseTo(a, 14);
    }
    expect(m.edges.length / 2).toBe(18);
    for (let e = 0; e < 18; e++) expect(m.edgeFaceStart[e + 1] - m.edgeFaceStart[e]).toBe(2);
    // Each triangle's edge k joins its corners k and k + 1.
    for (let t = 0; t < 12; t++)
      for (let k = 0; k < 3; k++) {
        const e = m.triEdges[3 * t + k];
        const ends = [tri[3 * t + k], tri[3 * t + ((k + 1) % 3)]].sort();
        expect([m.edges[2 * e], m.edges[2 * e + 1]]).toEqual(ends);
      }
    let triangleCorners = 0;
    for (let v = 0; v < 8; v++) {
      const n = m.vertexTriStart[v + 1] - m.vertexTriStart[v];
      expect(n === 4 || n === 5 || n === 6).toBe(true);
      triangleCorners += n;
      // Neighbours: 3 cube edges plus the diagonals at this corner.
      expect(m.vertexAdjStart[v + 1] - m.vertexAdjStart[v]).toBe(n);
    }
    expect(triangleCorners).toBe(36);
    expect(m.volume).toBeCloseTo(8 * a ** 3, 13);
    for (let i = 0; i < 3; i++) expect(m.centroid[i]).toBeCloseTo(c[i], 13);
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        expect(m.unitInertia[3 * i + j]).toBeCloseTo(i === j ? (16 * a ** 5) / 3 : 0, 13);
    for (let i = 0; i < 3; i++) {
      expect(m.boxCenter[i]).toBeCloseTo(c[i], 15);
      expect(m.boxHalf[i]).toBeCloseTo(a, 15);
    }
    expect(m.radius).toBeCloseTo(Math.hypot(0.3 + a, 0.2 + a, 1.1 + a), 14);
  });

  it("a cube with one face reversed is not closed (edge directions unbalanced)", () => {
    const x = Float64Array.from({ length: 24 }, (_, k) =>
      (Math.floor(k / 3) >> (k % 3)) & 1 ? 1 : -1,
    );
    const tri = new Int32Array([
      0, 3, 2, 0, 1, 3, 4, 5, 7, 4, 7, 6, 0, 1, 5, 0, 5, 4, 2, 6, 7, 2, 7, 3, 0, 4, 6, 0, 6, 2, 1,
      3, 7, 1, 7, 5,
    ]);
    const m = buildMesh(x, tri);
    expect(m.closed).toBe(false);
    expect(m.volume).toBe(0);
  });
});

describe("mesh validation", () => {
  const x = new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 2, 0, 0]);
  it("names out-of-range indices, degenerate triangles and non-finite vertices", () => {
    expect(() => buildMesh(x, new Int32Array([0, 1, 7]))).toThrow(
      /triangle 0: vertex index 7 out of range/,
    );
    expect(() => buildMesh(x, new Int32Array([0, 1, 2, 0, 1, 1]))).toThrow(
      /triangle 1: degenerate/,
    );
    expect(() => buildMesh(x, new Int32Array([0, 1, 2, 0, 1, 3]))).toThrow(
      /triangle 1: degenerate \(zero area/,
    );
    expect(() =>
      buildMesh(new Float64Array([0, 0, 0, 1, 0, 0, 0, Number.NaN, 0]), new Int32Array([0, 1, 2])),
    ).toThrow(/vertex 2 is not finite/);
    expect(() => buildMesh(x, new Int32Array([0, 1, 7]))).toThrow(MeshError);
  });

  it("a closed mesh (tetrahedron) has the solid's volume; an open one none", () => {
    const tet = buildMesh(
      new Float64Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]),
      new Int32Array([0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3]),
    );
    expect(tet.closed).toBe(true);
    expect(tet.volume).toBeCloseTo(1 / 6, 15);
    const open = buildMesh(x, new Int32Array([0, 1, 2]));
    expect(open.closed).toBe(false);
    expect(open.volume).toBe(0);
  });
});
