/**
 * Triangle meshes: the data of the `mesh` shape (a terrain on a fixed body, or a closed
 * surface on a moving one), built once from vertices and triangles, in the shape frame.
 *
 * Triangles are counter-clockwise seen from outside (for a terrain: from above), so the
 * face normal n = (b − a) × (c − a)/|…| points out of the solid. Kept per mesh: face
 * normals and areas, the unique edges with their faces (an edge of a terrain's border has
 * one; a non-manifold edge more, allowed for terrain), each triangle's three edges, the
 * triangles and neighbours around each vertex, whether the surface is closed (every edge
 * shared by exactly two triangles running it in opposite directions: then it bounds a
 * solid, with volume, centroid and inertia by hull.ts massProperties), and a BVH.
 *
 * Validation (MeshError): finite vertices, indices in range, no degenerate triangle
 * (area below 1e-12 of the squared extent, or a repeated index).
 */

import { type Bvh, buildBvh } from "./bvh";
import { boundingBox, massProperties, triangleNormal } from "./hull";

export class MeshError extends Error {}

export interface TriangleMesh {
  readonly vertices: Float64Array;
  readonly triangles: Int32Array;
  /** Unit outward normal (3 each) and area of each triangle. */
  readonly normals: Float64Array;
  readonly areas: Float64Array;
  /** Unique edges (u < w, 2 each); their faces at edgeFaceStart[e]..edgeFaceStart[e+1] in edgeFaces. */
  readonly edges: Int32Array;
  readonly edgeFaceStart: Int32Array;
  readonly edgeFaces: Int32Array;
  /** Edge k of triangle t (corner k → corner k + 1): its index, triEdges[3t + k]. */
  readonly triEdges: Int32Array;
  /** Triangles around each vertex (CSR). */
  readonly vertexTriStart: Int32Array;
  readonly vertexTris: Int32Array;
  /** Vertices adjacent to each vertex (CSR). */
  readonly vertexAdjStart: Int32Array;
  readonly vertexAdj: Int32Array;
  readonly closed: boolean;
  /** Volume, centroid, unit-density inertia about the centroid (closed meshes; else 0). */
  readonly volume: number;
  readonly centroid: readonly [number, number, number];
  readonly unitInertia: Float64Array;
  /** Local box (centre, half-widths), largest vertex distance from the origin, m. */
  readonly boxCenter: Float64Array;
  readonly boxHalf: Float64Array;
  readonly radius: number;
  readonly bvh: Bvh;
}

/** Meshes already built, by their vertex array (the model's spec is immutable once parsed). */
const CACHE = new WeakMap<object, TriangleMesh>();

/** The mesh of a model shape's `vertices` and `triangles` (cached per vertices array). */
export function meshOf(
  vertices: readonly (readonly number[])[],
  triangles: readonly (readonly number[])[],
): TriangleMesh {
  const hit = CACHE.get(vertices);
  if (hit) return hit;
  const m = buildMesh(Float64Array.from(vertices.flat()), Int32Array.from(triangles.flat()));
  CACHE.set(vertices, m);
  return m;
}

/** Builds and checks a mesh (see the file comment). */
export function buildMesh(x: Float64Array, tri: Int32Array): TriangleMesh {
  const V = x.length / 3;
  const T = tri.length / 3;
  if (T < 1) throw new MeshError("a mesh needs at least one triangle");
  for (let i = 0; i < x.length; i++)
    if (!Number.isFinite(x[i])) throw new MeshError(`vertex ${Math.floor(i / 3)} is not finite`);
  const { center: boxCenter, half: boxHalf } = boundingBox(x);
  // The largest extent hi − lo (twice a half-width, exactly).
  const ext = 2 * Math.max(boxHalf[0], boxHalf[1], boxHalf[2]);
  const normals = new Float64Array(3 * T);
  const areas = new Float64Array(T);
  const n = new Float64Array(3);
  for (let t = 0; t < T; t++) {
    const a = tri[3 * t];
    const b = tri[3 * t + 1];
    const c = tri[3 * t + 2];
    for (const v of [a, b, c])
      if (!(Number.isInteger(v) && v >= 0 && v < V))
        throw new MeshError(`triangle ${t}: vertex index ${v} out of range (${V} vertices)`);
    if (a === b || b === c || a === c)
      throw new MeshError(`triangle ${t}: degenerate (repeated vertex ${a === b ? a : c})`);
    triangleNormal(x, a, b, c, n);
    const nx = n[0];
    const ny = n[1];
    const nz = n[2];
    const l = Math.sqrt(nx * nx + ny * ny + nz * nz);
    if (!(l > 2e-12 * ext * ext))
      throw new MeshError(`triangle ${t}: degenerate (zero area: its corners are collinear)`);
    normals[3 * t] = nx / l;
    normals[3 * t + 1] = ny / l;
    normals[3 * t + 2] = nz / l;
    areas[t] = 0.5 * l;
  }
  // Edges: unique by (min, max); directed use counts decide closedness.
  const edgeIndex = new Map<number, number>();
  const edges: number[] = [];
  const faceLists: number[][] = [];
  const balance: number[] = [];
  const triEdges = new Int32Array(3 * T);
  for (let t = 0; t < T; t++)
    for (let k = 0; k < 3; k++) {
      const u = tri[3 * t + k];
      const w = tri[3 * t + ((k + 1) % 3)];
      const key = Math.min(u, w) * V + Math.max(u, w);
      let e = edgeIndex.get(key);
      if (e === undefined) {
        e = edges.length / 2;
        edgeIndex.set(key, e);
        edges.push(Math.min(u, w), Math.max(u, w));
        faceLists.push([]);
        balance.push(0);
      }
      faceLists[e].push(t);
      balance[e] += u < w ? 1 : -1;
      triEdges[3 * t + k] = e;
    }
  const E = edges.length / 2;
  let closed = true;
  for (let e = 0; e < E; e++) if (faceLists[e].length !== 2 || balance[e] !== 0) closed = false;
  const edgeFaceStart = new Int32Array(E + 1);
  for (let e = 0; e < E; e++) edgeFaceStart[e + 1] = edgeFaceStart[e] + faceLists[e].length;
  const edgeFaces = Int32Array.from(faceLists.flat());
  const vt: number[][] = Array.from({ length: V }, () => []);
  for (let t = 0; t < T; t++) for (let k = 0; k < 3; k++) vt[tri[3 * t + k]].push(t);
  const vertexTriStart = new Int32Array(V + 1);
  for (let v = 0; v < V; v++) vertexTriStart[v + 1] = vertexTriStart[v] + vt[v].length;
  const va: number[][] = Array.from({ length: V }, () => []);
  for (let e = 0; e < E; e++) {
    va[edges[2 * e]].push(edges[2 * e + 1]);
    va[edges[2 * e + 1]].push(edges[2 * e]);
  }
  const vertexAdjStart = new Int32Array(V + 1);
  for (let v = 0; v < V; v++) vertexAdjStart[v + 1] = vertexAdjStart[v] + va[v].length;
  let radius = 0;
  for (let v = 0; v < V; v++)
    radius = Math.max(radius, Math.hypot(x[3 * v], x[3 * v + 1], x[3 * v + 2]));
  let volume = 0;
  let centroid: [number, number, number] = [0, 0, 0];
  let unitInertia: Float64Array = new Float64Array(9);
  if (closed) {
    const mp = massProperties(x, tri);
    if (!(mp.volume > 0))
      throw new MeshError(
        "closed mesh with non-positive volume: its triangles must be counter-clockwise seen from outside",
      );
    volume = mp.volume;
    centroid = mp.centroid;
    unitInertia = mp.inertia;
  }
  return {
    vertices: x,
    triangles: tri,
    normals,
    areas,
    edges: Int32Array.from(edges),
    edgeFaceStart,
    edgeFaces,
    triEdges,
    vertexTriStart,
    vertexTris: Int32Array.from(vt.flat()),
    vertexAdjStart,
    vertexAdj: Int32Array.from(va.flat()),
    closed,
    volume,
    centroid,
    unitInertia,
    boxCenter,
    boxHalf,
    radius,
    bvh: buildBvh(x, tri),
  };
}
