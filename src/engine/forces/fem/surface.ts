/**
 * The boundary surface of a tetrahedral mesh: the triangles that belong to exactly one
 * element (an inner face is shared by two), each oriented with its normal pointing out of
 * the body, and for every surface vertex the triangles around it. Vertex contact
 * (contact/fem-vertices.ts) takes its vertices and their areas from it; the stream's
 * scene frame sends its triangles once and the dashboard draws them at the node positions
 * of each frame.
 *
 * Orientation: an element (n₀, n₁, n₂, n₃) with det[X₁ − X₀, X₂ − X₀, X₃ − X₀] > 0 (as
 * the mesh builders leave them) has the outward faces (0, 2, 1), (0, 1, 3), (0, 3, 2),
 * (1, 2, 3): each is an odd permutation of the element with the opposite node last, so
 * its right-hand normal points away from that node.
 */

export interface FemSurface {
  /** Node indices (of the fem body), 3 per outward-oriented surface triangle. */
  triangles: Int32Array;
  /** The surface's nodes, ascending. */
  vertices: Int32Array;
  /** Triangles around vertex v (v indexes `vertices`): tri[start[v] .. start[v+1]−1]. */
  start: Int32Array;
  tri: Int32Array;
}

const FACES = [
  [0, 2, 1],
  [0, 1, 3],
  [0, 3, 2],
  [1, 2, 3],
];

/** The surface of the mesh of `nodeCount` nodes and `elements` (4 per tetrahedron). */
export function meshSurface(elements: ArrayLike<number>, nodeCount: number): FemSurface {
  const n = nodeCount;
  // key of a face: its sorted nodes a < b < c as (a n + b) n + c < n³ ≤ 8e15 < 2⁵³
  const seen = new Map<number, number>();
  const faces: number[] = [];
  for (let e = 0; e < elements.length / 4; e++)
    for (const f of FACES) {
      const p = elements[4 * e + f[0]];
      const q = elements[4 * e + f[1]];
      const r = elements[4 * e + f[2]];
      const lo = Math.min(p, q, r);
      const hi = Math.max(p, q, r);
      const key = (lo * n + (p + q + r - lo - hi)) * n + hi;
      const at = seen.get(key);
      if (at === undefined) {
        seen.set(key, faces.length);
        faces.push(p, q, r);
      } else faces[at] = -1; // shared: an inner face
    }
  const kept: number[] = [];
  for (let f = 0; f < faces.length; f += 3)
    if (faces[f] >= 0) kept.push(faces[f], faces[f + 1], faces[f + 2]);
  const triangles = Int32Array.from(kept);
  const slot = new Int32Array(n).fill(-1);
  for (const k of triangles) slot[k] = 0;
  const vertices: number[] = [];
  for (let k = 0; k < n; k++)
    if (slot[k] === 0) {
      slot[k] = vertices.length;
      vertices.push(k);
    }
  const m = vertices.length;
  const start = new Int32Array(m + 1);
  for (const k of triangles) start[slot[k] + 1]++;
  for (let v = 0; v < m; v++) start[v + 1] += start[v];
  const fill = start.slice(0, m);
  const tri = new Int32Array(triangles.length);
  for (let t = 0; t < triangles.length / 3; t++)
    for (let c = 0; c < 3; c++) tri[fill[slot[triangles[3 * t + c]]]++] = t;
  return { triangles, vertices: Int32Array.from(vertices), start, tri };
}
