/**
 * One triangle of a mesh as a convex core (a flat one: the mesh pairs against boxes,
 * capsules, cylinders and hulls run each triangle through collideCores). Its frame is
 * the mesh's rotation placed at the triangle's centroid (so the pair's size, which the
 * tolerances scale with, is the triangle's, not the mesh's). Support function
 * h(d) = max_k d·v_k (piecewise linear); features: its two sides as polygons (code 0 the
 * front, normal n = (v1 − v0) × (v2 − v0)/|…|; 1 the back, corners reversed), its edges
 * k: v_k → v_{k+1} (codes 0..2) and corners; point codes: corner k (k), edge k (3 + k),
 * interior (6).
 */

import { FLUSH_COS } from "../cylinder";
import type { TriangleMesh } from "../mesh";
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

export class TriangleCore extends ConvexCore implements ConvexShape {
  /** Corners relative to the centroid (mesh axes, 3 each), unit normal (9..11), area (12), radius (13), tolerance (14). */
  readonly v = new Float64Array(15);
  /** Triangle index (0). */
  readonly index = new Int32Array(1);

  /** Places triangle t of `mesh`, the mesh at `pose`. */
  place(pose: WorldPose, mesh: TriangleMesh, t: number): this {
    this.R = pose.R;
    const x = mesh.vertices;
    const tri = mesh.triangles;
    const v = this.v;
    for (let c = 0; c < 3; c++) {
      const m = (x[3 * tri[3 * t] + c] + x[3 * tri[3 * t + 1] + c] + x[3 * tri[3 * t + 2] + c]) / 3;
      for (let k = 0; k < 3; k++) v[3 * k + c] = x[3 * tri[3 * t + k] + c] - m;
      TMP[c] = m;
    }
    localToWorldOf(pose, TMP, this.p);
    let r = 0;
    for (let k = 0; k < 3; k++)
      r = Math.max(r, Math.sqrt(v[3 * k] ** 2 + v[3 * k + 1] ** 2 + v[3 * k + 2] ** 2));
    v[9] = mesh.normals[3 * t];
    v[10] = mesh.normals[3 * t + 1];
    v[11] = mesh.normals[3 * t + 2];
    v[12] = mesh.areas[t];
    v[13] = r;
    v[14] = 1e-9 * r;
    this.index[0] = t;
    return this;
  }

  boundingRadius(): number {
    return this.v[13];
  }

  /** Corner maximizing d·v (ties: the lower corner). */
  supportCorner(d: Float64Array): number {
    const v = this.v;
    let best = 0;
    let bv = d[0] * v[0] + d[1] * v[1] + d[2] * v[2];
    for (let k = 1; k < 3; k++) {
      const s = d[0] * v[3 * k] + d[1] * v[3 * k + 1] + d[2] * v[3 * k + 2];
      if (s > bv) {
        bv = s;
        best = k;
      }
    }
    return best;
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    const k = this.supportCorner(d);
    s[0] = this.v[3 * k];
    s[1] = this.v[3 * k + 1];
    s[2] = this.v[3 * k + 2];
  }

  /** The whole triangle (q onto it), an edge (q onto it) or the corner supporting d. */
  projectOnSupport(q: Float64Array, d: Float64Array, ends: Float64Array): number {
    const v = this.v;
    const tol = v[14];
    let top = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < 3; k++)
      top = Math.max(top, d[0] * v[3 * k] + d[1] * v[3 * k + 1] + d[2] * v[3 * k + 2]);
    let n = 0;
    let miss = -1;
    for (let k = 0; k < 3; k++)
      if (d[0] * v[3 * k] + d[1] * v[3 * k + 1] + d[2] * v[3 * k + 2] >= top - tol) n++;
      else miss = k;
    if (n === 3) {
      closestOnTriangle(v, q);
      q[0] = CLOSEST[0];
      q[1] = CLOSEST[1];
      q[2] = CLOSEST[2];
      return 2;
    }
    if (n === 2) {
      const a = (miss + 1) % 3;
      const b = (miss + 2) % 3;
      for (let c = 0; c < 3; c++) {
        ends[c] = v[3 * a + c];
        ends[3 + c] = v[3 * b + c];
      }
      const ex = ends[3] - ends[0];
      const ey = ends[4] - ends[1];
      const ez = ends[5] - ends[2];
      let t =
        ((q[0] - ends[0]) * ex + (q[1] - ends[1]) * ey + (q[2] - ends[2]) * ez) /
        (ex * ex + ey * ey + ez * ez);
      t = t < 0 ? 0 : Math.min(t, 1);
      q[0] = ends[0] + t * ex;
      q[1] = ends[1] + t * ey;
      q[2] = ends[2] + t * ez;
      return 1;
    }
    const k = this.supportCorner(d);
    q[0] = v[3 * k];
    q[1] = v[3 * k + 1];
    q[2] = v[3 * k + 2];
    return 0;
  }

  classify(d: Float64Array, s: number): void {
    const v = this.v;
    const c = d[0] * v[9] + d[1] * v[10] + d[2] * v[11];
    if (c >= FLUSH_COS || -c >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = c > 0 ? 0 : 1;
      return;
    }
    const k = this.supportCorner(d);
    // The edge of smallest sine (the last of equal ones), a segment when within LINE_SIN.
    // The running minimum starts from a literal, not from LINE_SIN: V8 types a module
    // binding as any value, so a loop variable merged with one is kept boxed and every
    // update would allocate a heap number (~40 B a mesh pair call).
    let best = -1;
    let bestSin = Number.POSITIVE_INFINITY;
    // The two edges at corner k: k → k+1 (edge k) and k−1 → k (edge k−1).
    for (let j = 0; j < 2; j++) {
      const e = j === 0 ? k : (k + 2) % 3;
      const a = e;
      const b = (e + 1) % 3;
      const ex = v[3 * b] - v[3 * a];
      const ey = v[3 * b + 1] - v[3 * a + 1];
      const ez = v[3 * b + 2] - v[3 * a + 2];
      const sn =
        Math.abs(d[0] * ex + d[1] * ey + d[2] * ez) / Math.sqrt(ex * ex + ey * ey + ez * ez);
      if (sn <= bestSin) {
        bestSin = sn;
        best = e;
      }
    }
    const segment = bestSin <= LINE_SIN;
    FT[s] = segment ? F_SEG : F_POINT;
    FC[s] = segment ? best : k;
  }

  override polygon(s: number): void {
    const back = FC[s] === 1;
    const R = this.R;
    for (let k = 0; k < 3; k++) {
      const j = back ? 2 - k : k;
      localToWorld(this, this.v, 3 * j, FPOLY, 3 * (s * POLY_CAP + k));
      FLAB[s * POLY_CAP + k] = j;
    }
    FCOUNT[s] = 3;
    const sg = back ? -1 : 1;
    const v = this.v;
    FNRM[3 * s] = sg * (R[0] * v[9] + R[1] * v[10] + R[2] * v[11]);
    FNRM[3 * s + 1] = sg * (R[3] * v[9] + R[4] * v[10] + R[5] * v[11]);
    FNRM[3 * s + 2] = sg * (R[6] * v[9] + R[7] * v[10] + R[8] * v[11]);
  }

  override segment(s: number): void {
    const e = FC[s];
    localToWorld(this, this.v, 3 * e, FPOLY, 3 * (s * POLY_CAP));
    localToWorld(this, this.v, 3 * ((e + 1) % 3), FPOLY, 3 * (s * POLY_CAP + 1));
    FLAB[s * POLY_CAP] = 0;
    FLAB[s * POLY_CAP + 1] = 1;
    FCOUNT[s] = 2;
  }

  pointCode(q: Float64Array): number {
    const R = this.R;
    const dx = q[0] - this.p[0];
    const dy = q[1] - this.p[1];
    const dz = q[2] - this.p[2];
    LOCAL[0] = R[0] * dx + R[3] * dy + R[6] * dz;
    LOCAL[1] = R[1] * dx + R[4] * dy + R[7] * dz;
    LOCAL[2] = R[2] * dx + R[5] * dy + R[8] * dz;
    closestOnTriangle(this.v, LOCAL);
    return REGION[0] === 0 ? 6 : REGION[0] <= 3 ? 2 + REGION[0] : REGION[0] - 4;
  }

  override polygonArea(_code: number, out: Float64Array, o: number): void {
    out[o] = this.v[12];
  }
}

const TMP = new Float64Array(3);
const LOCAL = new Float64Array(3);

/** p + R x of pose for x = src[0..2], into out[0..2]. */
function localToWorldOf(pose: WorldPose, src: Float64Array, out: Float64Array): void {
  const R = pose.R;
  const p = pose.p;
  out[0] = p[0] + R[0] * src[0] + R[1] * src[1] + R[2] * src[2];
  out[1] = p[1] + R[3] * src[0] + R[4] * src[1] + R[5] * src[2];
  out[2] = p[2] + R[6] * src[0] + R[7] * src[1] + R[8] * src[2];
}

/** closestOnTriangle's result: the point (0..2). */
export const CLOSEST = new Float64Array(3);
/**
 * closestOnTriangle's region: 0 the interior, 1 + k edge k (corner k → k + 1), 4 + k
 * corner k.
 */
export const REGION = new Int32Array(1);

/**
 * Closest point of the triangle t[0..8] (corners, 3 each) to the point q[0..2], into
 * CLOSEST, and its Voronoi region into REGION (Ericson, Real-Time Collision Detection
 * §5.1.5, by the barycentric tests of the corner, edge and face regions).
 */
export function closestOnTriangle(t: Float64Array, q: Float64Array): void {
  const ax = t[0];
  const ay = t[1];
  const az = t[2];
  const abx = t[3] - ax;
  const aby = t[4] - ay;
  const abz = t[5] - az;
  const acx = t[6] - ax;
  const acy = t[7] - ay;
  const acz = t[8] - az;
  const apx = q[0] - ax;
  const apy = q[1] - ay;
  const apz = q[2] - az;
  const d1 = abx * apx + aby * apy + abz * apz;
  const d2 = acx * apx + acy * apy + acz * apz;
  if (d1 <= 0 && d2 <= 0) {
    corner(t, 0);
    return;
  }
  const bpx = q[0] - t[3];
  const bpy = q[1] - t[4];
  const bpz = q[2] - t[5];
  const d3 = abx * bpx + aby * bpy + abz * bpz;
  const d4 = acx * bpx + acy * bpy + acz * bpz;
  if (d3 >= 0 && d4 <= d3) {
    corner(t, 1);
    return;
  }
  const vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const s = d1 / (d1 - d3);
    CLOSEST[0] = ax + s * abx;
    CLOSEST[1] = ay + s * aby;
    CLOSEST[2] = az + s * abz;
    REGION[0] = 1;
    return;
  }
  const cpx = q[0] - t[6];
  const cpy = q[1] - t[7];
  const cpz = q[2] - t[8];
  const d5 = abx * cpx + aby * cpy + abz * cpz;
  const d6 = acx * cpx + acy * cpy + acz * cpz;
  if (d6 >= 0 && d5 <= d6) {
    corner(t, 2);
    return;
  }
  const vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const s = d2 / (d2 - d6);
    CLOSEST[0] = ax + s * acx;
    CLOSEST[1] = ay + s * acy;
    CLOSEST[2] = az + s * acz;
    REGION[0] = 3; // edge 2: corner 2 → corner 0
    return;
  }
  const va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    const s = (d4 - d3) / (d4 - d3 + (d5 - d6));
    CLOSEST[0] = t[3] + s * (t[6] - t[3]);
    CLOSEST[1] = t[4] + s * (t[7] - t[4]);
    CLOSEST[2] = t[5] + s * (t[8] - t[5]);
    REGION[0] = 2;
    return;
  }
  const den = 1 / (va + vb + vc);
  const v = vb * den;
  const w = vc * den;
  CLOSEST[0] = ax + abx * v + acx * w;
  CLOSEST[1] = ay + aby * v + acy * w;
  CLOSEST[2] = az + abz * v + acz * w;
  REGION[0] = 0;
}

function corner(t: Float64Array, k: number): void {
  CLOSEST[0] = t[3 * k];
  CLOSEST[1] = t[3 * k + 1];
  CLOSEST[2] = t[3 * k + 2];
  REGION[0] = 4 + k;
}
