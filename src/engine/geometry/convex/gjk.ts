/**
 * GJK (Gilbert, Johnson and Keerthi, "A fast procedure for computing the distance between
 * complex objects in three-dimensional space", IEEE J. Robotics and Automation 4(2), 1988)
 * on the support functions of two convex cores: the distance between them and its witness
 * points when they are separated, or a simplex of the Minkowski difference a − b around
 * (or touching) the origin for EPA when they overlap.
 *
 * Each iteration adds the support point w = s_a(−v) − s_b(v) of a − b against the current
 * closest point v of the simplex to the origin, then replaces the simplex by the smallest
 * sub-simplex carrying its new closest point (by Voronoi regions, Ericson, Real-Time
 * Collision Detection §5.1; a flat tetrahedron never counts as containing the origin).
 * It stops when v·w shows |v| to be the distance to within 1e-10 of the size of the
 * pair (|v|² − v·w ≤ 1e-10 scale |v|), when w repeats or |v| stops decreasing (rounding),
 * or as soon as v·w ≥ reach |v| proves the cores farther apart than `reach`.
 */

import { type ConvexSupport, minkowski, QUERY } from "./support";

/**
 * Result of the distance query (GJK, or EPA when the cores overlap), in the narrow
 * phase's convention: unit normal n from a to b (0..2), witness point on a's core (3..5)
 * and on b's (6..8), core gap (9) = (p_b − p_a)·n, the signed distance of the cores
 * (negative: −depth, when they overlap).
 */
export const RES = new Float64Array(10);

/** Simplex: Minkowski points w = a − b (3 each), their a and b supports, count. */
export const SW = new Float64Array(12);
export const SA = new Float64Array(12);
export const SB = new Float64Array(12);
export let simplexCount = 0;
/** Barycentric coordinates of the closest point (per simplex vertex). */
const LAM = new Float64Array(4);
/** Closest point of the simplex to the origin. */
const V = new Float64Array(3);
/** Triangle routine result: barycentrics (0..2) and squared distance (3). */
export const TRI = new Float64Array(4);
/** Search direction −v of the next support point. */
const DIR = new Float64Array(3);

/** Tetrahedron faces (i, j, k) with the opposite vertex l. */
export const TET_I = [0, 0, 0, 1];
export const TET_J = [1, 2, 3, 3];
export const TET_K = [2, 3, 1, 2];
export const TET_L = [3, 1, 2, 0];

/** gjk() outcomes. */
export const GJK_SEPARATED = 0;
export const GJK_FAR = 1;
export const GJK_OVERLAP = 2;

/**
 * GJK on the cores a and b, of size `scale` = QUERY[0] (sum of bounding radii).
 * GJK_SEPARATED: RES holds the closest points and the core distance; GJK_FAR: the core
 * distance is at least `reach` = QUERY[2] (no contact), the cores that far apart along the
 * unit normal RES[0..2] (a→b; the rest of RES untouched); GJK_OVERLAP: the cores overlap
 * or touch (the simplex is left for EPA).
 */
export function gjk(a: ConvexSupport, b: ConvexSupport): number {
  const scale = QUERY[0];
  const reach = QUERY[2];
  let dx = a.p[0] - b.p[0];
  let dy = a.p[1] - b.p[1];
  let dz = a.p[2] - b.p[2];
  if (dx === 0 && dy === 0 && dz === 0) dx = 1;
  simplexCount = 0;
  const touch = 1e-10 * scale;
  let vv = Number.POSITIVE_INFINITY;
  for (let it = 0; it < 96; it++) {
    const n = simplexCount;
    DIR[0] = -dx;
    DIR[1] = -dy;
    DIR[2] = -dz;
    minkowski(a, b, DIR, 0, SW, SA, SB, n);
    const wx = SW[3 * n];
    const wy = SW[3 * n + 1];
    const wz = SW[3 * n + 2];
    if (n > 0) {
      const vw = dx * wx + dy * wy + dz * wz;
      const vl = Math.sqrt(vv);
      if (vw >= reach * vl) {
        // Every point of a − b lies at least `reach` beyond the origin along v̂: the unit
        // normal a→b of that separation, −v̂, for the caller (pairs/mesh.ts far axes).
        RES[0] = -dx / vl;
        RES[1] = -dy / vl;
        RES[2] = -dz / vl;
        return GJK_FAR;
      }
      if (vv - vw <= touch * vl) break; // converged: |v| is the distance to within 1e-10
      let dup = false;
      for (let i = 0; i < n; i++)
        if (SW[3 * i] === wx && SW[3 * i + 1] === wy && SW[3 * i + 2] === wz) dup = true;
      if (dup) break;
    }
    simplexCount = n + 1;
    if (closestOnSimplex()) return GJK_OVERLAP;
    const nvv = V[0] * V[0] + V[1] * V[1] + V[2] * V[2];
    if (nvv <= touch * touch) return GJK_OVERLAP;
    if (nvv >= vv) break; // no progress (rounding)
    vv = nvv;
    dx = V[0];
    dy = V[1];
    dz = V[2];
  }
  if (simplexCount === 0) return GJK_OVERLAP;
  // Witnesses from the barycentrics of the current simplex.
  let ax = 0;
  let ay = 0;
  let az = 0;
  let bx = 0;
  let by = 0;
  let bz = 0;
  for (let i = 0; i < simplexCount; i++) {
    const l = LAM[i];
    ax += l * SA[3 * i];
    ay += l * SA[3 * i + 1];
    az += l * SA[3 * i + 2];
    bx += l * SB[3 * i];
    by += l * SB[3 * i + 1];
    bz += l * SB[3 * i + 2];
  }
  const d = Math.sqrt(V[0] * V[0] + V[1] * V[1] + V[2] * V[2]);
  if (!(d > touch)) return GJK_OVERLAP;
  RES[0] = -V[0] / d;
  RES[1] = -V[1] / d;
  RES[2] = -V[2] / d;
  RES[3] = ax;
  RES[4] = ay;
  RES[5] = az;
  RES[6] = bx;
  RES[7] = by;
  RES[8] = bz;
  RES[9] = d;
  return GJK_SEPARATED;
}

/**
 * Closest point of the simplex to the origin into V and LAM, the simplex reduced to the
 * vertices that carry it. Returns true when a tetrahedron contains the origin.
 */
function closestOnSimplex(): boolean {
  const n = simplexCount;
  // Zeroed by hand, here and below: LAM.fill(0) is a builtin call each GJK iteration.
  LAM[0] = 0;
  LAM[1] = 0;
  LAM[2] = 0;
  LAM[3] = 0;
  if (n === 1) {
    LAM[0] = 1;
  } else if (n === 2) {
    closestOnSegment();
  } else if (n === 3) {
    triangleClosest(SW, 0, 1, 2);
    LAM[0] = TRI[0];
    LAM[1] = TRI[1];
    LAM[2] = TRI[2];
  } else if (closestOnTetrahedron()) {
    V[0] = V[1] = V[2] = 0;
    return true;
  }
  reduceSimplex();
  return false;
}

/** Barycentrics (LAM) of the closest point to the origin of the segment SW[0]–SW[1]. */
function closestOnSegment(): void {
  const ax = SW[0];
  const ay = SW[1];
  const az = SW[2];
  const ex = SW[3] - ax;
  const ey = SW[4] - ay;
  const ez = SW[5] - az;
  const ee = ex * ex + ey * ey + ez * ez;
  const t = ee > 0 ? -(ax * ex + ay * ey + az * ez) / ee : 0;
  if (t <= 0) LAM[0] = 1;
  else if (t >= 1) LAM[1] = 1;
  else {
    LAM[0] = 1 - t;
    LAM[1] = t;
  }
}

/**
 * Barycentrics (LAM) of the closest point to the origin of the tetrahedron SW[0..3]: the
 * best of the faces whose outer side holds the origin. Returns true (LAM untouched) when
 * the origin is inside. A flat tetrahedron (volume below 1e-9 of its size cubed: supports
 * nearly coplanar, where a − b is flat) contains nothing: the origin's side of its faces
 * is then decided by rounding, so its closest point is the best of all its faces'.
 */
function closestOnTetrahedron(): boolean {
  let size = 0;
  for (let i = 1; i < 4; i++) {
    const x = SW[3 * i] - SW[0];
    const y = SW[3 * i + 1] - SW[1];
    const z = SW[3 * i + 2] - SW[2];
    size = Math.max(size, Math.sqrt(x * x + y * y + z * z));
  }
  const e1x = SW[3] - SW[0];
  const e1y = SW[4] - SW[1];
  const e1z = SW[5] - SW[2];
  const e2x = SW[6] - SW[0];
  const e2y = SW[7] - SW[1];
  const e2z = SW[8] - SW[2];
  const e3x = SW[9] - SW[0];
  const e3y = SW[10] - SW[1];
  const e3z = SW[11] - SW[2];
  const vol =
    e1x * (e2y * e3z - e2z * e3y) + e1y * (e2z * e3x - e2x * e3z) + e1z * (e2x * e3y - e2y * e3x);
  const flat = !(Math.abs(vol) > 1e-9 * size * size * size);
  // Faces (i, j, k) with opposite vertex l.
  let best = Number.POSITIVE_INFINITY;
  let any = false;
  for (let f = 0; f < 4; f++) {
    const i = TET_I[f];
    const j = TET_J[f];
    const k = TET_K[f];
    const l = TET_L[f];
    triangleNormal(SW, i, j, k);
    const nx = TRI_NORMAL[0];
    const ny = TRI_NORMAL[1];
    const nz = TRI_NORMAL[2];
    const ax = SW[3 * i];
    const ay = SW[3 * i + 1];
    const az = SW[3 * i + 2];
    const sO = -(nx * ax + ny * ay + nz * az);
    const sD = nx * (SW[3 * l] - ax) + ny * (SW[3 * l + 1] - ay) + nz * (SW[3 * l + 2] - az);
    if (!flat && sO * sD >= 0) continue; // origin on the inner side of this face
    any = true;
    triangleClosest(SW, i, j, k);
    if (TRI[3] < best) {
      best = TRI[3];
      LAM[0] = 0;
      LAM[1] = 0;
      LAM[2] = 0;
      LAM[3] = 0;
      LAM[i] = TRI[0];
      LAM[j] = TRI[1];
      LAM[k] = TRI[2];
    }
  }
  return !any;
}

const KEEP = new Int32Array(4);

/** V = Σ LAM_i SW_i, and the simplex reduced to its vertices of positive LAM. */
function reduceSimplex(): void {
  const n = simplexCount;
  let m = 0;
  let vx = 0;
  let vy = 0;
  let vz = 0;
  for (let i = 0; i < n; i++) {
    const l = LAM[i];
    if (l > 0) {
      vx += l * SW[3 * i];
      vy += l * SW[3 * i + 1];
      vz += l * SW[3 * i + 2];
      KEEP[m++] = i;
    }
  }
  V[0] = vx;
  V[1] = vy;
  V[2] = vz;
  for (let q = 0; q < m; q++) {
    const i = KEEP[q];
    if (i !== q) {
      for (let c = 0; c < 3; c++) {
        SW[3 * q + c] = SW[3 * i + c];
        SA[3 * q + c] = SA[3 * i + c];
        SB[3 * q + c] = SB[3 * i + c];
      }
    }
    LAM[q] = LAM[i];
  }
  simplexCount = m;
}

/** triangleNormal's result. */
export const TRI_NORMAL = new Float64Array(3);

/**
 * (W_j − W_i) × (W_k − W_i) into TRI_NORMAL, for the points i, j, k of the packed xyz array
 * W: the triangle's normal by the right hand round i → j → k, of length twice its area.
 */
export function triangleNormal(W: Float64Array, i: number, j: number, k: number): void {
  const ax = W[3 * i];
  const ay = W[3 * i + 1];
  const az = W[3 * i + 2];
  const ux = W[3 * j] - ax;
  const uy = W[3 * j + 1] - ay;
  const uz = W[3 * j + 2] - az;
  const vx = W[3 * k] - ax;
  const vy = W[3 * k + 1] - ay;
  const vz = W[3 * k + 2] - az;
  TRI_NORMAL[0] = uy * vz - uz * vy;
  TRI_NORMAL[1] = uz * vx - ux * vz;
  TRI_NORMAL[2] = ux * vy - uy * vx;
}

/**
 * Closest point to the origin of the triangle (W_i, W_j, W_k) of array W (Ericson,
 * ClosestPtPointTriangle): barycentrics into TRI[0..2], squared distance TRI[3].
 */
export function triangleClosest(W: Float64Array, i: number, j: number, k: number): void {
  const ax = W[3 * i];
  const ay = W[3 * i + 1];
  const az = W[3 * i + 2];
  const abx = W[3 * j] - ax;
  const aby = W[3 * j + 1] - ay;
  const abz = W[3 * j + 2] - az;
  const acx = W[3 * k] - ax;
  const acy = W[3 * k + 1] - ay;
  const acz = W[3 * k + 2] - az;
  let l0 = 0;
  let l1 = 0;
  let l2 = 0;
  const d1 = -(abx * ax + aby * ay + abz * az);
  const d2 = -(acx * ax + acy * ay + acz * az);
  const bx = W[3 * j];
  const by = W[3 * j + 1];
  const bz = W[3 * j + 2];
  const d3 = -(abx * bx + aby * by + abz * bz);
  const d4 = -(acx * bx + acy * by + acz * bz);
  const cx = W[3 * k];
  const cy = W[3 * k + 1];
  const cz = W[3 * k + 2];
  const d5 = -(abx * cx + aby * cy + abz * cz);
  const d6 = -(acx * cx + acy * cy + acz * cz);
  const vc = d1 * d4 - d3 * d2;
  const vb = d5 * d2 - d1 * d6;
  const va = d3 * d6 - d5 * d4;
  if (d1 <= 0 && d2 <= 0) l0 = 1;
  else if (d3 >= 0 && d4 <= d3) l1 = 1;
  else if (d6 >= 0 && d5 <= d6) l2 = 1;
  else if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const t = d1 / (d1 - d3);
    l0 = 1 - t;
    l1 = t;
  } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const t = d2 / (d2 - d6);
    l0 = 1 - t;
    l2 = t;
  } else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    const t = (d4 - d3) / (d4 - d3 + (d5 - d6));
    l1 = 1 - t;
    l2 = t;
  } else {
    const den = va + vb + vc;
    if (den > 0) {
      l1 = vb / den;
      l2 = vc / den;
      l0 = 1 - l1 - l2;
    } else {
      // Degenerate (collinear) triangle: the best of its edges' end points.
      const da = ax * ax + ay * ay + az * az;
      const db = bx * bx + by * by + bz * bz;
      const dc = cx * cx + cy * cy + cz * cz;
      if (da <= db && da <= dc) l0 = 1;
      else if (db <= dc) l1 = 1;
      else l2 = 1;
    }
  }
  TRI[0] = l0;
  TRI[1] = l1;
  TRI[2] = l2;
  const px = l0 * ax + l1 * bx + l2 * cx;
  const py = l0 * ay + l1 * by + l2 * cy;
  const pz = l0 * az + l1 * bz + l2 * cz;
  TRI[3] = px * px + py * py + pz * pz;
}
