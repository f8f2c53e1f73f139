/**
 * The mesh BVH (bvh.ts): a query returns exactly the triangles whose boxes overlap the
 * query box, against the brute-force test of every triangle; after refitBvh to moved
 * vertices, the same against the moved triangles, and every node's box is the tight box
 * of the triangles below it.
 */
import { describe, expect, it } from "vitest";
import {
  buildBvh,
  FOUND,
  LEAF_SIZE,
  overlapping,
  QUERY_BOX,
  refitBvh,
} from "../../../src/engine/geometry/bvh";
import { mulberry32 } from "../../support/random";

/**
 * The query of QUERY_BOX on bvh returns exactly the triangles (of vertices x, corners tri)
 * whose bounding boxes overlap it, by the brute-force test of every triangle.
 */
function expectQueryFindsOverlaps(
  bvh: ReturnType<typeof buildBvh>,
  x: Float64Array,
  tri: Int32Array,
): void {
  overlapping(bvh);
  const got = Array.from(FOUND.tris.subarray(0, FOUND.count)).sort((a, b) => a - b);
  const want: number[] = [];
  for (let t = 0; t < tri.length / 3; t++) {
    let hit = true;
    for (let i = 0; i < 3; i++) {
      const vs = [0, 1, 2].map((m) => x[3 * tri[3 * t + m] + i]);
      if (Math.min(...vs) > QUERY_BOX[3 + i] || Math.max(...vs) < QUERY_BOX[i]) hit = false;
    }
    if (hit) want.push(t);
  }
  expect(got).toEqual(want);
}

describe("BVH", () => {
  it("finds exactly the triangles whose boxes overlap the query (500 random boxes)", () => {
    const r = mulberry32(3);
    const T = 700;
    const x = new Float64Array(9 * T);
    const tri = new Int32Array(3 * T);
    for (let t = 0; t < T; t++) {
      const c = [10 * r(), 10 * r(), 2 * r()];
      for (let k = 0; k < 3; k++) {
        for (let i = 0; i < 3; i++) x[9 * t + 3 * k + i] = c[i] + 0.5 * (r() - 0.5);
        tri[3 * t + k] = 3 * t + k;
      }
    }
    const bvh = buildBvh(x, tri);
    for (let q = 0; q < 500; q++) {
      const lo = [10 * r() - 1, 10 * r() - 1, 2 * r() - 0.5];
      const w = [2 * r(), 2 * r(), r()];
      QUERY_BOX.set([lo[0], lo[1], lo[2], lo[0] + w[0], lo[1] + w[1], lo[2] + w[2]]);
      expectQueryFindsOverlaps(bvh, x, tri);
    }
  });
});

describe("BVH structure", () => {
  it("every triangle in exactly one leaf of at most LEAF_SIZE, inside its node's box", () => {
    const r = mulberry32(5);
    const T = 333;
    const x = Float64Array.from({ length: 9 * T }, () => 5 * r());
    const tri = Int32Array.from({ length: 3 * T }, (_, k) => k);
    const bvh = buildBvh(x, tri);
    const seen = new Int32Array(T);
    for (let k = 0; k < bvh.nodes; k++) {
      const n = bvh.count[k];
      expect(n).toBeLessThanOrEqual(LEAF_SIZE);
      for (let i = bvh.first[k]; i < bvh.first[k] + n; i++) {
        const t = bvh.order[i];
        seen[t]++;
        for (let c = 0; c < 3; c++)
          for (let v = 0; v < 3; v++) {
            const xv = x[3 * tri[3 * t + v] + c];
            expect(xv).toBeGreaterThanOrEqual(bvh.box[6 * k + c]);
            expect(xv).toBeLessThanOrEqual(bvh.box[6 * k + 3 + c]);
          }
      }
    }
    expect(Array.from(seen).every((c) => c === 1)).toBe(true);
  });
});

describe("BVH refit", () => {
  it("after the vertices move: tight boxes, and queries exact against brute force", () => {
    const r = mulberry32(7);
    // a 12 × 12 grid of vertices, two triangles per cell, then moved by a shear and noise
    const N = 12;
    const x = new Float64Array(3 * N * N);
    for (let j = 0; j < N; j++)
      for (let i = 0; i < N; i++) x.set([i, j, 0.1 * r()], 3 * (i + N * j));
    const tris: number[] = [];
    for (let j = 0; j < N - 1; j++)
      for (let i = 0; i < N - 1; i++) {
        const v = i + N * j;
        tris.push(v, v + 1, v + N + 1, v, v + N + 1, v + N);
      }
    const tri = Int32Array.from(tris);
    const bvh = buildBvh(x, tri);
    for (let v = 0; v < N * N; v++) {
      x[3 * v] += 0.5 * x[3 * v + 1] + 0.3 * (r() - 0.5);
      x[3 * v + 2] += Math.sin(x[3 * v]) + 0.3 * (r() - 0.5);
    }
    refitBvh(bvh, x, tri);
    // each node's box: min and max over the corners of the triangles of its subtree
    const below = (k: number): number[] => {
      if (bvh.count[k] > 0)
        return Array.from(bvh.order.subarray(bvh.first[k], bvh.first[k] + bvh.count[k]));
      return [...below(k + 1), ...below(bvh.right[k])];
    };
    for (let k = 0; k < bvh.nodes; k++)
      for (let c = 0; c < 3; c++) {
        const coords = below(k).flatMap((t) => [0, 1, 2].map((m) => x[3 * tri[3 * t + m] + c]));
        expect(bvh.box[6 * k + c]).toBe(Math.min(...coords));
        expect(bvh.box[6 * k + 3 + c]).toBe(Math.max(...coords));
      }
    for (let q = 0; q < 200; q++) {
      const lo = [16 * r() - 1, 12 * r() - 1, 3 * r() - 1.5];
      QUERY_BOX.set([lo[0], lo[1], lo[2], lo[0] + 2 * r(), lo[1] + 2 * r(), lo[2] + r()]);
      expectQueryFindsOverlaps(bvh, x, tri);
    }
  });
});
