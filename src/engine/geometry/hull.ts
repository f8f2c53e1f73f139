/**
 * Convex hull of a 3-D point set (quickhull, Barber, Dobkin & Huhdanpaa 1996, with the
 * ordered horizon of J. Lloyd's quickhull3d), its polygon faces, adjacency and mass
 * properties: the data of the `convex` shape.
 *
 * Robustness: a point joins the hull only when it lies more than `tolerance` (1e-11 of
 * the points' extent, plus 3 ε of the largest coordinate sums, Barber's bound on rounding)
 * above a face; duplicates and points on faces or edges are dropped. The triangles
 * quickhull leaves are merged into polygons where neighbours are coplanar within 10
 * tolerances (a box's 8 corners give its 6 squares, not 12 triangles), and vertices in
 * the middle of a polygon's straight side are dropped. A set whose points do not span 3-D
 * (fewer than 4 distinct points, all on a line or a plane) has no solid hull: HullError.
 *
 * Frames: everything is in the shape frame the points were given in. Faces are ordered
 * counter-clockwise seen from outside, so the normal (outward, unit) follows the right
 * hand rule; the hull's vertices keep the order of the input points (vertex k of the hull
 * is the hull point of lowest input index first), so a hull of a box's corners lists
 * them in the order given.
 */

import { checkDeadline } from "../solvers/deadline";
import type { BoxShape } from "./shapes";

/** A point set without a solid hull (flat, or too few points), or non-finite points. */
export class HullError extends Error {}

/** Hull data, all in the shape frame (metres). */
export interface ConvexHull {
  /** Vertices, 3 each (x, y, z). */
  readonly vertices: Float64Array;
  /** Input index of each vertex. */
  readonly source: Int32Array;
  /** Faces as polygons: vertex indices counter-clockwise from outside, face f from faceStart[f] to faceStart[f+1]. */
  readonly faceStart: Int32Array;
  readonly faceVertices: Int32Array;
  /** Outward unit normal (3 each) and offset of face f: n·x = offset on it, n·x ≤ offset inside. */
  readonly faceNormals: Float64Array;
  readonly faceOffsets: Float64Array;
  /** Area of face f, m². */
  readonly faceAreas: Float64Array;
  /** Edges (u < w, 2 each) and their two faces (2 each: the face where u→w runs counter-clockwise first). */
  readonly edges: Int32Array;
  readonly edgeFaces: Int32Array;
  /** Vertex adjacency (CSR): neighbours of v at adjStart[v]..adjStart[v+1] in adjacent, the edge to each in adjEdge. */
  readonly adjStart: Int32Array;
  readonly adjacent: Int32Array;
  readonly adjEdge: Int32Array;
  /** Faces around each vertex (CSR). */
  readonly vertexFaceStart: Int32Array;
  readonly vertexFaces: Int32Array;
  /** Triangulation of the faces (fans), 3 vertex indices each: for drawing and mass properties. */
  readonly triangles: Int32Array;
  /** Largest distance of a vertex from the frame origin, m. */
  readonly radius: number;
  /** Axis-aligned box of the vertices in the shape frame: centre and half-widths (3 each), m. */
  readonly boxCenter: Float64Array;
  readonly boxHalf: Float64Array;
  /** Volume (m³), centroid (shape frame) and inertia about the centroid for unit density (kg m², row-major 3×3). */
  readonly volume: number;
  readonly centroid: readonly [number, number, number];
  readonly unitInertia: Float64Array;
  /**
   * When the hull is an axis-aligned box of the shape frame (8 vertices, each coordinate
   * taking two values): its centre and half-extents, so that the pairs collide it as that
   * box (the same contacts, bit for bit, as the box primitive), else null.
   */
  readonly box: {
    readonly center: Float64Array;
    readonly centered: boolean;
    readonly shape: BoxShape;
  } | null;
  /** The tolerance the hull was built with, m. */
  readonly tolerance: number;
  /** Start vertex of hill-climbing support queries: the last answer (a hint: supportVertex). */
  readonly hint: Int32Array;
}

/** Vertex count from which supportVertex hill-climbs instead of scanning. */
export const HILL_CLIMB_MIN = 32;

/**
 * Index of a vertex v of `hull` maximizing d·v for the direction d[0..2] (shape frame, any
 * length): a scan below HILL_CLIMB_MIN vertices (ties: the lowest index), else hill
 * climbing over the vertex adjacency from hint[0] (on a convex polytope a vertex no
 * neighbour of which is higher is a global maximum), the answer written back to hint[0]
 * as the next query's start. The hint defaults to the hull's own (ConvexHull.hint):
 * consecutive queries in nearby directions then take a step or two.
 *
 * Ties in the climb: a neighbour as high as v and of lower index counts as higher, so the
 * climb ends at a maximizer no tied neighbour of which has a lower index. Where the tied
 * maximizers are mutually adjacent (the two ends of an edge ⟂ d, as GJK's directions are
 * ⟂ its simplex's edges; a triangular face) that is the lowest-indexed one, the scan's
 * answer, whatever the hint: the result does not depend on the queries before it. (A climb
 * that moves to the first higher neighbour ends on whichever tied end its path meets
 * first: on H-100, 57 of the 3817 climbs a step ended off the scan's answer.)
 */
export function supportVertex(
  hull: ConvexHull,
  d: ArrayLike<number>,
  hint: Int32Array = hull.hint,
): number {
  const x = hull.vertices;
  const dx = d[0];
  const dy = d[1];
  const dz = d[2];
  const n = hull.source.length;
  if (n < HILL_CLIMB_MIN) {
    let best = 0;
    let bv = dx * x[0] + dy * x[1] + dz * x[2];
    for (let v = 1; v < n; v++) {
      const s = dx * x[3 * v] + dy * x[3 * v + 1] + dz * x[3 * v + 2];
      if (s > bv) {
        bv = s;
        best = v;
      }
    }
    return best;
  }
  const start = hull.adjStart;
  const adj = hull.adjacent;
  let v = hint[0];
  let bv = dx * x[3 * v] + dy * x[3 * v + 1] + dz * x[3 * v + 2];
  // Each pass scans the neighbours of v (the range of the v the pass started from) and
  // moves to the highest, an equal one of lower index counting as higher; until no move.
  for (let from = -1; from !== v; ) {
    from = v;
    const end = start[from + 1];
    for (let k = start[from]; k < end; k++) {
      const w = adj[k];
      const s = dx * x[3 * w] + dy * x[3 * w + 1] + dz * x[3 * w + 2];
      if (s > bv || (s === bv && w < v)) {
        bv = s;
        v = w;
      }
    }
  }
  hint[0] = v;
  return v;
}

interface Face {
  v: [number, number, number];
  n: [number, number, number];
  d: number;
  nb: [Face | null, Face | null, Face | null];
  outside: number[];
  alive: boolean;
  visible: boolean;
  id: number;
}

/** Hulls already built, by their points array (a model's shape spec is immutable once parsed). */
const CACHE = new WeakMap<object, ConvexHull>();

/**
 * The hull of points given as [x, y, z] triples (cached per array: the model build and
 * the collision setup ask for the same shape's hull).
 */
export function hullOfPoints(points: readonly (readonly number[])[]): ConvexHull {
  const hit = CACHE.get(points);
  if (hit) return hit;
  const flat = new Float64Array(3 * points.length);
  points.forEach((p, i) => {
    flat[3 * i] = p[0];
    flat[3 * i + 1] = p[1];
    flat[3 * i + 2] = p[2];
  });
  const hull = convexHull(flat);
  CACHE.set(points, hull);
  return hull;
}

/** The convex hull of the points pts[3i..3i+2] (see the file comment). */
export function convexHull(pts: Float64Array): ConvexHull {
  const n = Math.floor(pts.length / 3);
  for (let i = 0; i < 3 * n; i++)
    if (!Number.isFinite(pts[i])) throw new HullError(`point ${Math.floor(i / 3)} is not finite`);
  if (n < 4) throw new HullError(`a convex hull needs at least 4 points (got ${n})`);
  const lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  const loIdx = [0, 0, 0];
  const hiIdx = [0, 0, 0];
  let absMax = 0;
  for (let i = 0; i < n; i++)
    for (let k = 0; k < 3; k++) {
      const x = pts[3 * i + k];
      if (x < lo[k]) {
        lo[k] = x;
        loIdx[k] = i;
      }
      if (x > hi[k]) {
        hi[k] = x;
        hiIdx[k] = i;
      }
      absMax = Math.max(absMax, Math.abs(x));
    }
  const extent = Math.max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  const tol = 1e-11 * extent + 3 * Number.EPSILON * 3 * absMax;
  if (!(extent > 0)) throw new HullError("all points coincide: the hull is degenerate");

  const P = (i: number, k: number) => pts[3 * i + k];
  // Initial simplex: the widest axis pair, the farthest point from their line, the
  // farthest from their plane.
  let axis = 0;
  for (let k = 1; k < 3; k++) if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  const i0 = loIdx[axis];
  const i1 = hiIdx[axis];
  const ex = P(i1, 0) - P(i0, 0);
  const ey = P(i1, 1) - P(i0, 1);
  const ez = P(i1, 2) - P(i0, 2);
  const el = Math.hypot(ex, ey, ez);
  let i2 = -1;
  let best = 0;
  for (let i = 0; i < n; i++) {
    const rx = P(i, 0) - P(i0, 0);
    const ry = P(i, 1) - P(i0, 1);
    const rz = P(i, 2) - P(i0, 2);
    const d = Math.hypot(ry * ez - rz * ey, rz * ex - rx * ez, rx * ey - ry * ex) / el;
    if (d > best) {
      best = d;
      i2 = i;
    }
  }
  if (!(best > tol)) throw new HullError("the points lie on a line: the hull is degenerate (flat)");
  let nx = ey * (P(i2, 2) - P(i0, 2)) - ez * (P(i2, 1) - P(i0, 1));
  let ny = ez * (P(i2, 0) - P(i0, 0)) - ex * (P(i2, 2) - P(i0, 2));
  let nz = ex * (P(i2, 1) - P(i0, 1)) - ey * (P(i2, 0) - P(i0, 0));
  const nl = Math.hypot(nx, ny, nz);
  nx /= nl;
  ny /= nl;
  nz /= nl;
  let i3 = -1;
  best = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.abs(
      nx * (P(i, 0) - P(i0, 0)) + ny * (P(i, 1) - P(i0, 1)) + nz * (P(i, 2) - P(i0, 2)),
    );
    if (d > best) {
      best = d;
      i3 = i;
    }
  }
  if (!(best > tol))
    throw new HullError("the points lie in a plane: the hull is degenerate (flat)");

  let faceCount = 0;
  const makeFace = (a: number, b: number, c: number): Face => {
    const ux = P(b, 0) - P(a, 0);
    const uy = P(b, 1) - P(a, 1);
    const uz = P(b, 2) - P(a, 2);
    const vx = P(c, 0) - P(a, 0);
    const vy = P(c, 1) - P(a, 1);
    const vz = P(c, 2) - P(a, 2);
    let fx = uy * vz - uz * vy;
    let fy = uz * vx - ux * vz;
    let fz = ux * vy - uy * vx;
    const l = Math.hypot(fx, fy, fz);
    fx /= l;
    fy /= l;
    fz /= l;
    // Offset from the face's centroid (less rounding than from one corner).
    const cx = (P(a, 0) + P(b, 0) + P(c, 0)) / 3;
    const cy = (P(a, 1) + P(b, 1) + P(c, 1)) / 3;
    const cz = (P(a, 2) + P(b, 2) + P(c, 2)) / 3;
    return {
      v: [a, b, c],
      n: [fx, fy, fz],
      d: fx * cx + fy * cy + fz * cz,
      nb: [null, null, null],
      outside: [],
      alive: true,
      visible: false,
      id: faceCount++,
    };
  };
  const dist = (f: Face, i: number) => f.n[0] * P(i, 0) + f.n[1] * P(i, 1) + f.n[2] * P(i, 2) - f.d;

  // The simplex, oriented so that every face's normal points away from i3 (or to it).
  const above =
    nx * (P(i3, 0) - P(i0, 0)) + ny * (P(i3, 1) - P(i0, 1)) + nz * (P(i3, 2) - P(i0, 2));
  const faces: Face[] = [];
  if (above < 0) {
    // i3 below the plane (i0, i1, i2) counter-clockwise: that face looks away from it.
    faces.push(
      makeFace(i0, i1, i2),
      makeFace(i0, i3, i1),
      makeFace(i1, i3, i2),
      makeFace(i2, i3, i0),
    );
  } else {
    faces.push(
      makeFace(i0, i2, i1),
      makeFace(i0, i1, i3),
      makeFace(i1, i2, i3),
      makeFace(i2, i0, i3),
    );
  }
  linkAll(faces);

  const used = new Uint8Array(n);
  used[i0] = used[i1] = used[i2] = used[i3] = 1;
  for (let i = 0; i < n; i++) {
    if (used[i]) continue;
    assign(faces, i, dist, tol);
  }

  const pending = faces.slice();
  // the host's deadline (solvers/deadline.ts) every 64 faces: a hull of 150 000 points
  // took seconds of a server worker's build
  let examined = 0;
  while (pending.length > 0) {
    if ((++examined & 63) === 0) checkDeadline();
    const f = pending.pop() as Face;
    if (!f.alive || f.outside.length === 0) continue;
    // The eye: the farthest outside point of f.
    let eye = f.outside[0];
    let far = dist(f, eye);
    for (const i of f.outside) {
      const d = dist(f, i);
      if (d > far) {
        far = d;
        eye = i;
      }
    }
    const horizon: Array<{ a: number; b: number; g: Face }> = [];
    const visible: Face[] = [];
    visit(f, -1);
    function visit(face: Face, entered: number): void {
      face.visible = true;
      visible.push(face);
      // Entered through edge `entered`: the other two edges, in order (the horizon then
      // comes out as a counter-clockwise loop); the first face: all three.
      const count = entered < 0 ? 3 : 2;
      for (let t = 0; t < count; t++) {
        const k = entered < 0 ? t : (entered + 1 + t) % 3;
        const g = face.nb[k] as Face;
        if (g.visible) continue;
        const a = face.v[k];
        const b = face.v[(k + 1) % 3];
        if (dist(g, eye) > tol) visit(g, edgeOf(g, b, a));
        else horizon.push({ a, b, g });
      }
    }
    const orphans: number[] = [];
    for (const v of visible) {
      v.alive = false;
      for (const i of v.outside) if (i !== eye) orphans.push(i);
      v.outside = [];
    }
    const created: Face[] = [];
    for (const h of horizon) {
      const nf = makeFace(h.a, h.b, eye);
      nf.nb[0] = h.g;
      h.g.nb[edgeOf(h.g, h.b, h.a)] = nf;
      created.push(nf);
    }
    const m = created.length;
    for (let k = 0; k < m; k++) {
      created[k].nb[1] = created[(k + 1) % m];
      created[k].nb[2] = created[(k + m - 1) % m];
    }
    used[eye] = 1;
    for (const i of orphans) assign(created, i, dist, tol);
    for (const c of created) {
      faces.push(c);
      pending.push(c);
    }
  }
  return finish(
    pts,
    faces.filter((f) => f.alive),
    tol,
  );
}

/** Puts point i in the outside set of the face it lies farthest above (beyond tol), if any. */
function assign(faces: Face[], i: number, dist: (f: Face, i: number) => number, tol: number): void {
  let bestFace: Face | null = null;
  let best = tol;
  for (const f of faces) {
    if (!f.alive) continue;
    const d = dist(f, i);
    if (d > best) {
      best = d;
      bestFace = f;
    }
  }
  bestFace?.outside.push(i);
}

/** Index k of face f's edge v[k] → v[k+1] running from a to b. */
function edgeOf(f: Face, a: number, b: number): number {
  for (let k = 0; k < 3; k++) if (f.v[k] === a && f.v[(k + 1) % 3] === b) return k;
  throw new HullError("hull adjacency broken (rounding): an edge without its twin");
}

/** Neighbour links of the initial simplex (edge k of a face runs v[k] → v[k+1]). */
function linkAll(faces: Face[]): void {
  for (const f of faces)
    for (let k = 0; k < 3; k++) {
      const a = f.v[k];
      const b = f.v[(k + 1) % 3];
      for (const g of faces) {
        if (g === f) continue;
        for (let j = 0; j < 3; j++) if (g.v[j] === b && g.v[(j + 1) % 3] === a) f.nb[k] = g;
      }
    }
}

/** Polygons from coplanar triangles, vertex order, edges, adjacency, mass properties. */
function finish(pts: Float64Array, tris: Face[], tol: number): ConvexHull {
  const mergeTol = 10 * tol;
  const P = (i: number, k: number) => pts[3 * i + k];
  const cluster = new Map<Face, number>();
  const polygons: number[][] = [];
  const normals: number[][] = [];
  for (const seed of tris) {
    if (cluster.has(seed)) continue;
    const id = polygons.length;
    const members: Face[] = [seed];
    cluster.set(seed, id);
    for (let q = 0; q < members.length; q++)
      for (const g of members[q].nb) {
        if (g === null || cluster.has(g)) continue;
        if (seed.n[0] * g.n[0] + seed.n[1] * g.n[1] + seed.n[2] * g.n[2] <= 0) continue;
        let flat = true;
        for (const v of g.v)
          if (
            Math.abs(seed.n[0] * P(v, 0) + seed.n[1] * P(v, 1) + seed.n[2] * P(v, 2) - seed.d) >
            mergeTol
          )
            flat = false;
        if (!flat) continue;
        cluster.set(g, id);
        members.push(g);
      }
    // Boundary loop: the member edges whose neighbour is outside the cluster.
    const next = new Map<number, number>();
    for (const f of members)
      for (let k = 0; k < 3; k++)
        if (cluster.get(f.nb[k] as Face) !== id) next.set(f.v[k], f.v[(k + 1) % 3]);
    const start = next.keys().next().value as number;
    const loop: number[] = [start];
    for (let v = next.get(start) as number; v !== start; v = next.get(v) as number) {
      loop.push(v);
      if (loop.length > next.size) throw new HullError("hull face boundary is not a simple loop");
    }
    // Area-weighted normal of the polygon (Newell), then drop vertices on straight sides.
    polygons.push(loop);
    normals.push([0, 0, 0]);
  }
  for (let f = 0; f < polygons.length; f++) {
    let loop = polygons[f];
    let changed = true;
    while (changed && loop.length > 3) {
      changed = false;
      for (let k = 0; k < loop.length; k++) {
        const a = loop[(k + loop.length - 1) % loop.length];
        const b = loop[k];
        const c = loop[(k + 1) % loop.length];
        const ux = P(c, 0) - P(a, 0);
        const uy = P(c, 1) - P(a, 1);
        const uz = P(c, 2) - P(a, 2);
        const rx = P(b, 0) - P(a, 0);
        const ry = P(b, 1) - P(a, 1);
        const rz = P(b, 2) - P(a, 2);
        const off =
          Math.hypot(ry * uz - rz * uy, rz * ux - rx * uz, rx * uy - ry * ux) /
          Math.hypot(ux, uy, uz);
        if (off <= mergeTol) {
          loop = loop.filter((_, j) => j !== k);
          changed = true;
          break;
        }
      }
    }
    polygons[f] = loop;
    let sx = 0;
    let sy = 0;
    let sz = 0;
    for (let k = 0; k < loop.length; k++) {
      const a = loop[k];
      const b = loop[(k + 1) % loop.length];
      sx += (P(a, 1) - P(b, 1)) * (P(a, 2) + P(b, 2));
      sy += (P(a, 2) - P(b, 2)) * (P(a, 0) + P(b, 0));
      sz += (P(a, 0) - P(b, 0)) * (P(a, 1) + P(b, 1));
    }
    const l = Math.hypot(sx, sy, sz);
    normals[f] = [sx / l, sy / l, sz / l];
  }
  // Vertices: those the polygons use, in input order.
  const usedSet = new Set<number>();
  for (const loop of polygons) for (const v of loop) usedSet.add(v);
  const src = Int32Array.from([...usedSet].sort((x, y) => x - y));
  const index = new Map<number, number>();
  src.forEach((s, k) => {
    index.set(s, k);
  });
  const V = src.length;
  const vertices = new Float64Array(3 * V);
  let radius = 0;
  for (let k = 0; k < V; k++) {
    for (let c = 0; c < 3; c++) vertices[3 * k + c] = P(src[k], c);
    radius = Math.max(
      radius,
      Math.hypot(vertices[3 * k], vertices[3 * k + 1], vertices[3 * k + 2]),
    );
  }
  const F = polygons.length;
  const faceStart = new Int32Array(F + 1);
  const faceVerts: number[] = [];
  const faceNormals = new Float64Array(3 * F);
  const faceOffsets = new Float64Array(F);
  const faceAreas = new Float64Array(F);
  const triangles: number[] = [];
  const edgeIndex = new Map<number, number>();
  const edges: number[] = [];
  const edgeFaces: number[] = [];
  for (let f = 0; f < F; f++) {
    faceStart[f] = faceVerts.length;
    const loop = polygons[f].map((v) => index.get(v) as number);
    // Start each polygon at its lowest vertex index (a canonical order for feature labels).
    let first = 0;
    for (let k = 1; k < loop.length; k++) if (loop[k] < loop[first]) first = k;
    const ordered = loop.map((_, k) => loop[(first + k) % loop.length]);
    faceVerts.push(...ordered);
    const [fx, fy, fz] = normals[f];
    faceNormals.set(normals[f], 3 * f);
    let off = 0;
    for (const v of ordered)
      off += fx * vertices[3 * v] + fy * vertices[3 * v + 1] + fz * vertices[3 * v + 2];
    faceOffsets[f] = off / ordered.length;
    let area = 0;
    for (let k = 1; k + 1 < ordered.length; k++) {
      const a = ordered[0];
      const b = ordered[k];
      const c = ordered[k + 1];
      triangles.push(a, b, c);
      area += 0.5 * triangleCross(vertices, a, b, c, fx, fy, fz);
    }
    faceAreas[f] = area;
    for (let k = 0; k < ordered.length; k++) {
      const u = ordered[k];
      const w = ordered[(k + 1) % ordered.length];
      const key = Math.min(u, w) * V + Math.max(u, w);
      const e = edgeIndex.get(key);
      if (e === undefined) {
        edgeIndex.set(key, edges.length / 2);
        edges.push(Math.min(u, w), Math.max(u, w));
        edgeFaces.push(f, -1);
      } else edgeFaces[2 * e + 1] = f;
    }
  }
  faceStart[F] = faceVerts.length;
  const E = edges.length / 2;
  for (let e = 0; e < E; e++)
    if (edgeFaces[2 * e + 1] < 0) throw new HullError("hull is not closed (an edge with one face)");
  const deg = new Int32Array(V);
  for (let e = 0; e < E; e++) {
    deg[edges[2 * e]]++;
    deg[edges[2 * e + 1]]++;
  }
  const adjStart = new Int32Array(V + 1);
  for (let v = 0; v < V; v++) adjStart[v + 1] = adjStart[v] + deg[v];
  const adjacent = new Int32Array(2 * E);
  const adjEdge = new Int32Array(2 * E);
  const fill = new Int32Array(V);
  for (let e = 0; e < E; e++)
    for (let s = 0; s < 2; s++) {
      const v = edges[2 * e + s];
      const o = adjStart[v] + fill[v]++;
      adjacent[o] = edges[2 * e + 1 - s];
      adjEdge[o] = e;
    }
  const vf: number[][] = Array.from({ length: V }, () => []);
  for (let f = 0; f < F; f++)
    for (let k = faceStart[f]; k < faceStart[f + 1]; k++) vf[faceVerts[k]].push(f);
  const vertexFaceStart = new Int32Array(V + 1);
  for (let v = 0; v < V; v++) vertexFaceStart[v + 1] = vertexFaceStart[v] + vf[v].length;
  const vertexFaces = Int32Array.from(vf.flat());
  const tri = Int32Array.from(triangles);
  const { center: boxCenter, half: boxHalf } = boundingBox(vertices);
  const mp = massProperties(vertices, tri);
  if (!(mp.volume > 0)) throw new HullError("the hull has no volume (flat)");
  return {
    vertices,
    source: src,
    faceStart,
    faceVertices: Int32Array.from(faceVerts),
    faceNormals,
    faceOffsets,
    faceAreas,
    edges: Int32Array.from(edges),
    edgeFaces: Int32Array.from(edgeFaces),
    adjStart,
    adjacent,
    adjEdge,
    vertexFaceStart,
    vertexFaces,
    triangles: tri,
    radius,
    boxCenter,
    boxHalf,
    volume: mp.volume,
    centroid: mp.centroid,
    unitInertia: mp.inertia,
    box: axisBox(vertices),
    tolerance: tol,
    hint: new Int32Array(1),
  };
}

/** The axis-aligned box the 8 vertices are the corners of, if they are (ConvexHull.box). */
function axisBox(x: Float64Array): ConvexHull["box"] {
  if (x.length !== 24) return null;
  const center = new Float64Array(3);
  const half: [number, number, number] = [0, 0, 0];
  const seen = new Set<number>();
  for (let c = 0; c < 3; c++) {
    const values = [...new Set(Array.from({ length: 8 }, (_, v) => x[3 * v + c]))].sort(
      (a, b) => a - b,
    );
    if (values.length !== 2) return null;
    center[c] = 0.5 * (values[0] + values[1]);
    half[c] = 0.5 * (values[1] - values[0]);
  }
  for (let v = 0; v < 8; v++)
    seen.add(
      (x[3 * v] > center[0] ? 1 : 0) +
        (x[3 * v + 1] > center[1] ? 2 : 0) +
        (x[3 * v + 2] > center[2] ? 4 : 0),
    );
  if (seen.size !== 8) return null;
  const centered = center[0] === 0 && center[1] === 0 && center[2] === 0;
  return { center, centered, shape: { type: "box", halfExtents: half } };
}

/**
 * (b − a) × (c − a) for the points a, b, c of x (3 each), into out[0..2]: the normal of the
 * triangle (a, b, c), counter-clockwise seen from its side, of length twice its area.
 */
export function triangleNormal(
  x: Float64Array,
  a: number,
  b: number,
  c: number,
  out: Float64Array,
): void {
  const ux = x[3 * b] - x[3 * a];
  const uy = x[3 * b + 1] - x[3 * a + 1];
  const uz = x[3 * b + 2] - x[3 * a + 2];
  const vx = x[3 * c] - x[3 * a];
  const vy = x[3 * c + 1] - x[3 * a + 1];
  const vz = x[3 * c + 2] - x[3 * a + 2];
  out[0] = uy * vz - uz * vy;
  out[1] = uz * vx - ux * vz;
  out[2] = ux * vy - uy * vx;
}

/** triangleCross's normal scratch. */
const CROSS = new Float64Array(3);

/** ((b − a) × (c − a))·n: twice the triangle's area projected along n. */
function triangleCross(
  x: Float64Array,
  a: number,
  b: number,
  c: number,
  nx: number,
  ny: number,
  nz: number,
): number {
  triangleNormal(x, a, b, c, CROSS);
  return nx * CROSS[0] + ny * CROSS[1] + nz * CROSS[2];
}

/**
 * The axis-aligned box of the points x (3 each) in their own frame: its centre
 * (lo + hi)/2 and half-widths (hi − lo)/2 per axis, metres.
 */
export function boundingBox(x: Float64Array): { center: Float64Array; half: Float64Array } {
  const center = new Float64Array(3);
  const half = new Float64Array(3);
  for (let c = 0; c < 3; c++) {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    for (let k = c; k < x.length; k += 3) {
      lo = Math.min(lo, x[k]);
      hi = Math.max(hi, x[k]);
    }
    center[c] = 0.5 * (lo + hi);
    half[c] = 0.5 * (hi - lo);
  }
  return { center, half };
}

/**
 * Volume, centroid and inertia about the centroid (unit density) of the solid bounded by
 * the closed, outward-oriented triangles `tri` over `x`, by the divergence theorem: the
 * solid is the signed sum of the tetrahedra (0, a, b, c), of volume V = a·(b × c)/6,
 * first moment V (a + b + c)/4 and second moment ∫ x xᵀ dV = V/20 (a aᵀ + b bᵀ + c cᵀ +
 * s sᵀ) with s = a + b + c. Then C_c = C − V c cᵀ about the centroid c and
 * I = tr(C_c) E − C_c.
 */
export function massProperties(
  x: Float64Array,
  tri: Int32Array,
): { volume: number; centroid: [number, number, number]; inertia: Float64Array } {
  let vol = 0;
  const m1 = [0, 0, 0];
  const C = new Float64Array(9);
  // Shift to the vertex mean first: tetrahedra from a far origin cancel with rounding.
  const o = [0, 0, 0];
  const nv = x.length / 3;
  for (let v = 0; v < nv; v++) for (let k = 0; k < 3; k++) o[k] += x[3 * v + k] / nv;
  const a = [0, 0, 0];
  const b = [0, 0, 0];
  const c = [0, 0, 0];
  for (let t = 0; t < tri.length; t += 3) {
    for (let k = 0; k < 3; k++) {
      a[k] = x[3 * tri[t] + k] - o[k];
      b[k] = x[3 * tri[t + 1] + k] - o[k];
      c[k] = x[3 * tri[t + 2] + k] - o[k];
    }
    const V =
      (a[0] * (b[1] * c[2] - b[2] * c[1]) +
        a[1] * (b[2] * c[0] - b[0] * c[2]) +
        a[2] * (b[0] * c[1] - b[1] * c[0])) /
      6;
    vol += V;
    for (let k = 0; k < 3; k++) m1[k] += (V * (a[k] + b[k] + c[k])) / 4;
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        const s = (a[i] + b[i] + c[i]) * (a[j] + b[j] + c[j]);
        C[3 * i + j] += (V / 20) * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s);
      }
  }
  const cl = [m1[0] / vol, m1[1] / vol, m1[2] / vol];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) C[3 * i + j] -= vol * cl[i] * cl[j];
  const tr = C[0] + C[4] + C[8];
  const inertia = new Float64Array(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) inertia[3 * i + j] = (i === j ? tr : 0) - C[3 * i + j];
  return { volume: vol, centroid: [cl[0] + o[0], cl[1] + o[1], cl[2] + o[2]], inertia };
}
