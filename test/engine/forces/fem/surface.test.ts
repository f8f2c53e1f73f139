/**
 * The boundary surface of a tetrahedral mesh (src/engine/forces/fem/surface.ts): the
 * unshared faces only, oriented outward (the divergence theorem: Σ A n = 0 over a closed
 * surface, and ⅓ Σ (x_c · n) A is the enclosed volume, positive), the vertex list (no
 * interior node) and the triangles around each vertex.
 */
import { describe, expect, it } from "vitest";
import { boxMesh } from "../../../../src/engine/forces/fem/mesh";
import { meshSurface } from "../../../../src/engine/forces/fem/surface";

/** Area vector ½ (b − a) × (c − a) and centroid of triangle t of `tris`. */
function areaVector(nodes: ArrayLike<number>, tris: Int32Array, t: number) {
  const p = (k: number) => [0, 1, 2].map((i) => nodes[3 * tris[3 * t + k] + i]);
  const [a, b, c] = [p(0), p(1), p(2)];
  const u = b.map((v, i) => v - a[i]);
  const v = c.map((q, i) => q - a[i]);
  const n = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]].map(
    (x) => x / 2,
  );
  return { n, centroid: [0, 1, 2].map((i) => (a[i] + b[i] + c[i]) / 3) };
}

describe("meshSurface", () => {
  it("one tetrahedron: its four faces, each normal pointing away from the opposite node", () => {
    const nodes = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
    const s = meshSurface([0, 1, 2, 3], 4);
    expect(s.triangles.length).toBe(12);
    expect(Array.from(s.vertices)).toEqual([0, 1, 2, 3]);
    for (let t = 0; t < 4; t++) {
      const tri = Array.from(s.triangles.subarray(3 * t, 3 * t + 3));
      const opposite = [0, 1, 2, 3].find((k) => !tri.includes(k)) as number;
      const { n, centroid } = areaVector(nodes, s.triangles, t);
      const out = [0, 1, 2].map((i) => centroid[i] - nodes[3 * opposite + i]);
      expect(n[0] * out[0] + n[1] * out[1] + n[2] * out[2]).toBeGreaterThan(0);
    }
    // every vertex of a tetrahedron is in three of its faces
    expect(Array.from(s.start)).toEqual([0, 3, 6, 9, 12]);
  });

  it("a 2×2×2 box: 48 outward triangles enclosing a b c, the centre node left out, the fans right", () => {
    const size = [2, 1, 1.5] as const;
    const { nodes, elements } = boxMesh({
      size,
      resolution: [2, 2, 2],
      center: [0.3, 0, -1],
      orientation: [0.9, 0.1, -0.3, 0.2],
    });
    const nodeCount = nodes.length / 3;
    const s = meshSurface(elements, nodeCount);
    const T = s.triangles.length / 3;
    // 6 faces of 2×2 squares, two triangles each
    expect(T).toBe(48);
    const total = [0, 0, 0];
    let volume = 0;
    for (let t = 0; t < T; t++) {
      const { n, centroid } = areaVector(nodes, s.triangles, t);
      for (let i = 0; i < 3; i++) total[i] += n[i];
      volume += (centroid[0] * n[0] + centroid[1] * n[1] + centroid[2] * n[2]) / 3;
    }
    for (const x of total) expect(Math.abs(x)).toBeLessThan(1e-13);
    expect(volume).toBeCloseTo(size[0] * size[1] * size[2], 12);
    // node (1, 1, 1), index 1 + 3 (1 + 3·1) = 13, is the only interior one
    expect(Array.from(s.vertices)).toEqual(
      Array.from({ length: nodeCount }, (_, k) => k).filter((k) => k !== 13),
    );
    expect(s.start[s.vertices.length]).toBe(3 * T);
    for (let v = 0; v < s.vertices.length; v++) {
      const around = Array.from(s.tri.subarray(s.start[v], s.start[v + 1]));
      const expected: number[] = [];
      for (let t = 0; t < T; t++)
        if (Array.from(s.triangles.subarray(3 * t, 3 * t + 3)).includes(s.vertices[v]))
          expected.push(t);
      expect(around.sort((a, b) => a - b)).toEqual(expected);
    }
  });
});
