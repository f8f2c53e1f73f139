/**
 * Box meshes (src/engine/forces/fem/mesh.ts): node positions from the header's formula
 * (rotated with the tests' own quaternion algebra), element counts, positive volumes
 * summing to a b c, a conforming mesh (every inner triangle shared by exactly two
 * elements, the unshared ones covering the box's surface area), the face node lists, the
 * orientation fix and the lumped masses (total ρV and the centre of mass kept).
 */
import { describe, expect, it } from "vitest";
import {
  type BoxMeshSpec,
  boxFaceNodes,
  boxMesh,
  boxNodeCount,
  lumpedMasses,
  orientElements,
} from "../../../../src/engine/forces/fem/mesh";
import { axisAngle, rotate } from "../../../support/quat";

const SPEC: BoxMeshSpec = {
  size: [2, 0.6, 0.9],
  resolution: [3, 2, 2],
  center: [1, -0.5, 0.25],
  orientation: axisAngle([1, 2, -0.5], 0.7),
};

/** 6 V of tetrahedron e, written out as a triple product (u × v)·w. */
function sixVolume(nodes: Float64Array, el: Int32Array, e: number): number {
  const p = (a: number) => [0, 1, 2].map((i) => nodes[3 * el[4 * e + a] + i]);
  const [x0, x1, x2, x3] = [p(0), p(1), p(2), p(3)];
  const u = x1.map((v, i) => v - x0[i]);
  const v = x2.map((q, i) => q - x0[i]);
  const w = x3.map((q, i) => q - x0[i]);
  return (
    (u[1] * v[2] - u[2] * v[1]) * w[0] +
    (u[2] * v[0] - u[0] * v[2]) * w[1] +
    (u[0] * v[1] - u[1] * v[0]) * w[2]
  );
}

/** The triangles of the elements' faces with how many elements hold each. */
function faceCounts(el: Int32Array): Map<string, number> {
  const count = new Map<string, number>();
  for (let e = 0; e < el.length / 4; e++)
    for (const skip of [0, 1, 2, 3]) {
      const key = [0, 1, 2, 3]
        .filter((a) => a !== skip)
        .map((a) => el[4 * e + a])
        .sort((a, b) => a - b)
        .join(",");
      count.set(key, (count.get(key) ?? 0) + 1);
    }
  return count;
}

function triangleArea(nodes: Float64Array, t: number[]): number {
  const p = (k: number) => [0, 1, 2].map((i) => nodes[3 * k + i]);
  const [a, b, c] = [p(t[0]), p(t[1]), p(t[2])];
  const u = b.map((v, i) => v - a[i]);
  const v = c.map((q, i) => q - a[i]);
  return (
    0.5 *
    Math.hypot(u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
  );
}

describe("boxMesh", () => {
  for (const perCell of [5, 6] as const)
    it(`${perCell} tets per cell: nodes where the header puts them, a conforming mesh of volume a b c`, () => {
      const { nodes, elements } = boxMesh(SPEC, perCell);
      const [nx, ny, nz] = SPEC.resolution;
      const [a, b, c] = SPEC.size;
      expect(boxNodeCount(SPEC.resolution)).toBe(4 * 3 * 3);
      expect(nodes.length).toBe(3 * 36);
      expect(elements.length).toBe(4 * perCell * nx * ny * nz);
      for (let k = 0; k <= nz; k++)
        for (let j = 0; j <= ny; j++)
          for (let i = 0; i <= nx; i++) {
            const n = i + (nx + 1) * (j + (ny + 1) * k);
            const r = rotate(SPEC.orientation, [
              (i / nx - 0.5) * a,
              (j / ny - 0.5) * b,
              (k / nz - 0.5) * c,
            ]);
            for (let q = 0; q < 3; q++)
              expect(nodes[3 * n + q]).toBeCloseTo(SPEC.center[q] + r[q], 13);
          }
      let volume = 0;
      for (let e = 0; e < elements.length / 4; e++) {
        const v6 = sixVolume(nodes, elements, e);
        expect(v6).toBeGreaterThan(0);
        volume += v6 / 6;
      }
      expect(volume).toBeCloseTo(a * b * c, 12);
      let boundaryArea = 0;
      for (const [key, n] of faceCounts(elements)) {
        expect(n).toBeLessThanOrEqual(2);
        if (n === 1) boundaryArea += triangleArea(nodes, key.split(",").map(Number));
      }
      expect(boundaryArea).toBeCloseTo(2 * (a * b + b * c + a * c), 12);
    });
});

describe("orientElements", () => {
  it("swaps the last two nodes of exactly the negative elements", () => {
    const { nodes, elements } = boxMesh(SPEC);
    const turned = elements.slice();
    const flipped = [0, 3, 7, 20];
    for (const e of flipped)
      [turned[4 * e + 2], turned[4 * e + 3]] = [turned[4 * e + 3], turned[4 * e + 2]];
    expect(orientElements(nodes, turned)).toBe(flipped.length);
    expect(Array.from(turned)).toEqual(Array.from(elements));
    expect(orientElements(nodes, turned)).toBe(0);
  });
});

describe("boxFaceNodes", () => {
  it("lists the (n+1)(m+1) nodes of each face, on its plane; refuses an unknown face", () => {
    const res = [3, 2, 2] as const;
    const unturned = boxMesh({ ...SPEC, orientation: [1, 0, 0, 0] });
    for (const [axis, sign] of [0, 1, 2].flatMap((ax) => [
      [ax, -1],
      [ax, 1],
    ])) {
      const face = `${sign < 0 ? "-" : "+"}${"xyz"[axis]}`;
      const list = boxFaceNodes(res, face);
      const others = [0, 1, 2].filter((q) => q !== axis);
      expect(list.length).toBe((res[others[0]] + 1) * (res[others[1]] + 1));
      expect(new Set(list).size).toBe(list.length);
      const plane = SPEC.center[axis] + (sign * SPEC.size[axis]) / 2;
      for (const n of list) expect(unturned.nodes[3 * n + axis]).toBeCloseTo(plane, 14);
    }
    expect(() => boxFaceNodes(res, "x+")).toThrow(/unknown box face/);
    expect(() => boxFaceNodes(res, "+w")).toThrow(/unknown box face/);
  });
});

describe("lumpedMasses", () => {
  it("gives ρV/4 per element node: the total ρ a b c and the box's centre of mass", () => {
    const mesh = boxMesh(SPEC);
    const rho = 800;
    const m = lumpedMasses(mesh, rho);
    const [a, b, c] = SPEC.size;
    expect(m.reduce((s, x) => s + x, 0)).toBeCloseTo(rho * a * b * c, 10);
    for (let q = 0; q < 3; q++) {
      let moment = 0;
      for (let n = 0; n < m.length; n++) moment += m[n] * mesh.nodes[3 * n + q];
      expect(moment / (rho * a * b * c)).toBeCloseTo(SPEC.center[q], 12);
    }
    // one unit corner tet: V = 1/6, each node ρ/24
    const one = lumpedMasses(
      {
        nodes: Float64Array.of(0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1),
        elements: Int32Array.of(0, 1, 2, 3),
      },
      24,
    );
    expect(Array.from(one)).toEqual([1, 1, 1, 1].map((v) => expect.closeTo(v, 14)));
  });
});
