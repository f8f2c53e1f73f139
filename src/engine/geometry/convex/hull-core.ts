/**
 * A convex hull (geometry/hull.ts) as a convex core: support function
 * h(d) = max_v d·v over its vertices (piecewise linear: zero Hessian; its kinks lie on
 * the arcs normal to its edges, too many to list, so it reports none and the polish
 * relies on EPA, exact for polytopes), its polygon faces and edges as features, and the
 * code of a surface point.
 *
 * Support queries: hull.ts supportVertex (a scan of a small hull, else hill climbing over
 * the vertex adjacency from the hull's last answer).
 *
 * Feature codes: polygon = face index, segment = edge index, point = vertex index v, a
 * face f's interior V + f, an edge e's interior V + F + e (V vertices, F faces). They may
 * exceed the primitive ranges of manifold.ts (polygons below 6, segments below 12, points
 * below 27): the manifold then mixes the codes into the feature ids
 * (ContactBuffer.mixFeatures).
 */

import { FLUSH_COS } from "../cylinder";
import { type ConvexHull, supportVertex } from "../hull";
import type { WorldPose } from "../pose";
import {
  ConvexCore,
  type ConvexShape,
  F_POINT,
  F_POLY,
  F_SEG,
  FC,
  FCOUNT,
  FLAB,
  FNRM,
  FPOLY,
  FT,
  LINE_SIN,
  POLY_CAP,
} from "./features";
import { localToWorld } from "./support";

/** Local point scratch. */
const TMP = new Float64Array(3);

export class HullCore extends ConvexCore implements ConvexShape {
  /** The hull (set by place). */
  hull: ConvexHull = EMPTY;
  /** Bounding radius (0) and the support-set tolerance, 1e-9 of it (1), metres. */
  readonly size = new Float64Array(2);

  /** Places the core: the hull of `shape` at `pose` (referenced, not copied). */
  place(pose: WorldPose, hull: ConvexHull): this {
    this.p = pose.p;
    this.R = pose.R;
    this.hull = hull;
    this.size[0] = hull.radius;
    this.size[1] = 1e-9 * hull.radius;
    return this;
  }

  boundingRadius(): number {
    return this.size[0];
  }

  /** Index of a vertex maximizing d·v (local d): hull.ts supportVertex from the hull's hint. */
  supportIndex(d: Float64Array): number {
    return supportVertex(this.hull, d);
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    const v = this.supportIndex(d);
    const x = this.hull.vertices;
    s[0] = x[3 * v];
    s[1] = x[3 * v + 1];
    s[2] = x[3 * v + 2];
  }

  /**
   * The support set of d: a face around the support vertex all of whose vertices are
   * within size[1] of the maximum (q onto its plane, clamped into the polygon), else an
   * edge from it whose other end is (q onto the segment), else the vertex.
   */
  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number {
    const h = this.hull;
    const x = h.vertices;
    const tol = this.size[1];
    const v0 = this.supportIndex(d);
    const top = d[0] * x[3 * v0] + d[1] * x[3 * v0 + 1] + d[2] * x[3 * v0 + 2];
    for (let k = h.vertexFaceStart[v0]; k < h.vertexFaceStart[v0 + 1]; k++) {
      const f = h.vertexFaces[k];
      let flat = true;
      for (let j = h.faceStart[f]; j < h.faceStart[f + 1] && flat; j++) {
        const w = h.faceVertices[j];
        if (d[0] * x[3 * w] + d[1] * x[3 * w + 1] + d[2] * x[3 * w + 2] < top - tol) flat = false;
      }
      if (!flat) continue;
      this.clampToFace(q, f);
      return 2;
    }
    for (let k = h.adjStart[v0]; k < h.adjStart[v0 + 1]; k++) {
      const w = h.adjacent[k];
      if (d[0] * x[3 * w] + d[1] * x[3 * w + 1] + d[2] * x[3 * w + 2] < top - tol) continue;
      const e = h.adjEdge[k];
      const u0 = h.edges[2 * e];
      const u1 = h.edges[2 * e + 1];
      for (let c = 0; c < 3; c++) {
        ends[c] = x[3 * u0 + c];
        ends[3 + c] = x[3 * u1 + c];
      }
      closestOnSegment(q, ends);
      return 1;
    }
    q[0] = x[3 * v0];
    q[1] = x[3 * v0 + 1];
    q[2] = x[3 * v0 + 2];
    return 0;
  }

  /** Moves q onto face f's plane, then into the polygon (its nearest boundary point if outside). */
  private clampToFace(q: Float64Array, f: number): void {
    const h = this.hull;
    const x = h.vertices;
    const nx = h.faceNormals[3 * f];
    const ny = h.faceNormals[3 * f + 1];
    const nz = h.faceNormals[3 * f + 2];
    const s = h.faceOffsets[f] - (nx * q[0] + ny * q[1] + nz * q[2]);
    q[0] += s * nx;
    q[1] += s * ny;
    q[2] += s * nz;
    const a = h.faceStart[f];
    const m = h.faceStart[f + 1] - a;
    let inside = true;
    for (let k = 0; k < m && inside; k++) {
      const i = h.faceVertices[a + k];
      const j = h.faceVertices[a + ((k + 1) % m)];
      // (b − a) × n points out of a counter-clockwise polygon.
      const ex = x[3 * j] - x[3 * i];
      const ey = x[3 * j + 1] - x[3 * i + 1];
      const ez = x[3 * j + 2] - x[3 * i + 2];
      const ox = ey * nz - ez * ny;
      const oy = ez * nx - ex * nz;
      const oz = ex * ny - ey * nx;
      if ((q[0] - x[3 * i]) * ox + (q[1] - x[3 * i + 1]) * oy + (q[2] - x[3 * i + 2]) * oz > 0)
        inside = false;
    }
    if (inside) return;
    let best = Number.POSITIVE_INFINITY;
    const qx = q[0];
    const qy = q[1];
    const qz = q[2];
    for (let k = 0; k < m; k++) {
      const i = h.faceVertices[a + k];
      const j = h.faceVertices[a + ((k + 1) % m)];
      for (let c = 0; c < 3; c++) {
        SEG[c] = x[3 * i + c];
        SEG[3 + c] = x[3 * j + c];
      }
      TMP[0] = qx;
      TMP[1] = qy;
      TMP[2] = qz;
      closestOnSegment(TMP, SEG);
      const d2 = (TMP[0] - qx) ** 2 + (TMP[1] - qy) ** 2 + (TMP[2] - qz) ** 2;
      if (d2 < best) {
        best = d2;
        q[0] = TMP[0];
        q[1] = TMP[1];
        q[2] = TMP[2];
      }
    }
  }

  /**
   * From the support vertex v of d: the face around v most aligned with d when within
   * the flush tilt (FLUSH_COS), else the edge from v closest to ⟂ d when within LINE_SIN,
   * else the vertex.
   */
  classify(d: Float64Array, s: number): void {
    const h = this.hull;
    const x = h.vertices;
    const v = this.supportIndex(d);
    // Running extrema from literals, the thresholds applied after the loops: a loop
    // variable merged with a module binding (FLUSH_COS, LINE_SIN: any value to V8) is kept
    // boxed, and each update would allocate a heap number. The last of equal ones wins.
    let bestFace = -1;
    let bestCos = Number.NEGATIVE_INFINITY;
    for (let k = h.vertexFaceStart[v]; k < h.vertexFaceStart[v + 1]; k++) {
      const f = h.vertexFaces[k];
      const c =
        d[0] * h.faceNormals[3 * f] +
        d[1] * h.faceNormals[3 * f + 1] +
        d[2] * h.faceNormals[3 * f + 2];
      if (c >= bestCos) {
        bestCos = c;
        bestFace = f;
      }
    }
    if (bestCos >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = bestFace;
      return;
    }
    let bestEdge = -1;
    let bestSin = Number.POSITIVE_INFINITY;
    for (let k = h.adjStart[v]; k < h.adjStart[v + 1]; k++) {
      const w = h.adjacent[k];
      const ex = x[3 * w] - x[3 * v];
      const ey = x[3 * w + 1] - x[3 * v + 1];
      const ez = x[3 * w + 2] - x[3 * v + 2];
      const c =
        Math.abs(d[0] * ex + d[1] * ey + d[2] * ez) / Math.sqrt(ex * ex + ey * ey + ez * ez);
      if (c <= bestSin) {
        bestSin = c;
        bestEdge = h.adjEdge[k];
      }
    }
    if (bestSin <= LINE_SIN) {
      FT[s] = F_SEG;
      FC[s] = bestEdge;
      return;
    }
    FT[s] = F_POINT;
    FC[s] = v;
  }

  /**
   * The face FC[s]: its vertices counter-clockwise from outside starting at its lowest
   * vertex index (labels: their positions 0, 1, …); a face of more than POLY_CAP vertices
   * by POLY_CAP of them evenly spaced around it (a polygon inside the face).
   */
  override polygon(s: number): void {
    const h = this.hull;
    const f = FC[s];
    const a = h.faceStart[f];
    const m = h.faceStart[f + 1] - a;
    const count = Math.min(m, POLY_CAP);
    for (let k = 0; k < count; k++) {
      const j = m <= POLY_CAP ? k : Math.floor((k * m) / POLY_CAP);
      const v = h.faceVertices[a + j];
      localToWorld(this, h.vertices, 3 * v, FPOLY, 3 * (s * POLY_CAP + k));
      FLAB[s * POLY_CAP + k] = k;
    }
    FCOUNT[s] = count;
    TMP[0] = h.faceNormals[3 * f];
    TMP[1] = h.faceNormals[3 * f + 1];
    TMP[2] = h.faceNormals[3 * f + 2];
    const R = this.R;
    FNRM[3 * s] = R[0] * TMP[0] + R[1] * TMP[1] + R[2] * TMP[2];
    FNRM[3 * s + 1] = R[3] * TMP[0] + R[4] * TMP[1] + R[5] * TMP[2];
    FNRM[3 * s + 2] = R[6] * TMP[0] + R[7] * TMP[1] + R[8] * TMP[2];
  }

  /** The edge FC[s]: its lower-index end (label 0), then the other (1). */
  override segment(s: number): void {
    const h = this.hull;
    const e = FC[s];
    localToWorld(this, h.vertices, 3 * h.edges[2 * e], FPOLY, 3 * (s * POLY_CAP));
    localToWorld(this, h.vertices, 3 * h.edges[2 * e + 1], FPOLY, 3 * (s * POLY_CAP + 1));
    FLAB[s * POLY_CAP] = 0;
    FLAB[s * POLY_CAP + 1] = 1;
    FCOUNT[s] = 2;
  }

  /** Vertex within 1e-7 of the pair's size q[3], else the face or edge the point lies on. */
  pointCode(q: Float64Array): number {
    const h = this.hull;
    const x = h.vertices;
    const R = this.R;
    const dx = q[0] - this.p[0];
    const dy = q[1] - this.p[1];
    const dz = q[2] - this.p[2];
    const lx = R[0] * dx + R[3] * dy + R[6] * dz;
    const ly = R[1] * dx + R[4] * dy + R[7] * dz;
    const lz = R[2] * dx + R[5] * dy + R[8] * dz;
    const tol = 1e-7 * q[3];
    const V = h.source.length;
    for (let v = 0; v < V; v++) {
      const ex = x[3 * v] - lx;
      const ey = x[3 * v + 1] - ly;
      const ez = x[3 * v + 2] - lz;
      if (ex * ex + ey * ey + ez * ez <= tol * tol) return v;
    }
    const F = h.faceOffsets.length;
    let f1 = -1;
    let f2 = -1;
    let best = Number.NEGATIVE_INFINITY;
    for (let f = 0; f < F; f++) {
      const s =
        h.faceNormals[3 * f] * lx +
        h.faceNormals[3 * f + 1] * ly +
        h.faceNormals[3 * f + 2] * lz -
        h.faceOffsets[f];
      if (s > best) best = s;
      if (s >= -tol) {
        if (f1 < 0) f1 = f;
        else if (f2 < 0) f2 = f;
      }
    }
    if (f1 >= 0 && f2 >= 0) {
      // The edge of f1 and f2 (two faces of a convex polytope share at most one): among
      // f1's sides u → w, found through u's adjacency.
      const a = h.faceStart[f1];
      const m = h.faceStart[f1 + 1] - a;
      for (let k = 0; k < m; k++) {
        const u = h.faceVertices[a + k];
        const w = h.faceVertices[a + (k + 1 === m ? 0 : k + 1)];
        for (let j = h.adjStart[u]; j < h.adjStart[u + 1]; j++) {
          if (h.adjacent[j] !== w) continue;
          const e = h.adjEdge[j];
          const g1 = h.edgeFaces[2 * e];
          const g2 = h.edgeFaces[2 * e + 1];
          if ((g1 === f1 && g2 === f2) || (g1 === f2 && g2 === f1)) return V + F + e;
        }
      }
    }
    return V + Math.max(f1, 0);
  }

  override polygonArea(code: number, out: Float64Array, o: number): void {
    out[o] = this.hull.faceAreas[code];
  }
}

/** Segment ends scratch of clampToFace. */
const SEG = new Float64Array(6);

/** Moves q to the closest point of the segment ends[0..2]–ends[3..5]. */
function closestOnSegment(q: Float64Array, ends: Float64Array): void {
  const ex = ends[3] - ends[0];
  const ey = ends[4] - ends[1];
  const ez = ends[5] - ends[2];
  const l2 = ex * ex + ey * ey + ez * ez;
  let t = l2 > 0 ? ((q[0] - ends[0]) * ex + (q[1] - ends[1]) * ey + (q[2] - ends[2]) * ez) / l2 : 0;
  t = t < 0 ? 0 : Math.min(t, 1);
  q[0] = ends[0] + t * ex;
  q[1] = ends[1] + t * ey;
  q[2] = ends[2] + t * ez;
}

/** Placeholder hull of a core not yet placed (one vertex at the origin, nothing else). */
const EMPTY: ConvexHull = {
  vertices: new Float64Array(3),
  source: new Int32Array(1),
  faceStart: new Int32Array(1),
  faceVertices: new Int32Array(0),
  faceNormals: new Float64Array(0),
  faceOffsets: new Float64Array(0),
  faceAreas: new Float64Array(0),
  edges: new Int32Array(0),
  edgeFaces: new Int32Array(0),
  adjStart: new Int32Array(2),
  adjacent: new Int32Array(0),
  adjEdge: new Int32Array(0),
  vertexFaceStart: new Int32Array(2),
  vertexFaces: new Int32Array(0),
  triangles: new Int32Array(0),
  radius: 0,
  boxCenter: new Float64Array(3),
  boxHalf: new Float64Array(3),
  volume: 0,
  centroid: [0, 0, 0],
  unitInertia: new Float64Array(9),
  box: null,
  tolerance: 0,
  hint: new Int32Array(1),
};
