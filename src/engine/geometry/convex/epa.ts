import { crossLeastAxis } from "../helpers";
/**
 * EPA, the expanding polytope algorithm (van den Bergen, "Proximity queries and
 * penetration depth computation on 3D game objects", GDC 2001; Collision Detection in
 * Interactive 3D Environments, 2004, §4.3.2): the penetration depth of two overlapping
 * convex cores, from the GJK simplex.
 *
 * The simplex is completed to a tetrahedron of support points of a − b around the origin;
 * then repeatedly the face of the polytope closest to the origin (distance d along its
 * outward unit normal n) is pushed out by the support point w of a − b along n, until
 * n·w − d ≤ 1e-10 of the size of the pair: the depth is then d, with normal n (from a to
 * b, since w = a − b lies along n) and witnesses from the barycentrics of the origin's
 * projection on that face. The faces seen from w are removed as one connected region
 * grown from the closest face, so that its boundary (the horizon) is one loop; new faces
 * join the horizon to w. The result is signed: with the origin just outside the polytope
 * (cores touching or a hair apart) the closest face has d < 0, and RES's gap is −d.
 */

import { PERP } from "../helpers";
import {
  RES,
  SA,
  SB,
  SW,
  simplexCount,
  TET_I,
  TET_J,
  TET_K,
  TET_L,
  TRI,
  TRI_NORMAL,
  triangleClosest,
  triangleNormal,
} from "./gjk";
import { ALONG, type ConvexSupport, minkowski, overlapAlong, QUERY, WAB } from "./support";

/** Most polytope vertices (and iterations), and faces. */
const EPA_MAX_V = 160;
const EPA_MAX_F = 4 * EPA_MAX_V;
/** Polytope vertices: points w of a − b, their a and b supports (3 each). */
const PW = new Float64Array(3 * EPA_MAX_V);
const PA = new Float64Array(3 * EPA_MAX_V);
const PBv = new Float64Array(3 * EPA_MAX_V);
let vertexCount = 0;
/** Faces: vertex indices (3 each, counter-clockwise seen from outside), unit outward normal, distance of the plane from the origin, alive flag. */
const FI = new Int32Array(3 * EPA_MAX_F);
const FN = new Float64Array(3 * EPA_MAX_F);
const FD = new Float64Array(EPA_MAX_F);
const FALIVE = new Uint8Array(EPA_MAX_F);
let faceCount = 0;
/** Horizon edges (directed vertex pairs) while the polytope is expanded. */
const EDGES = new Int32Array(2 * 3 * EPA_MAX_F);

/** epa() outcomes: converged; a rough result (the best normal queried); no polytope. */
export const EPA_OK = 0;
export const EPA_ROUGH = 1;
export const EPA_FAILED = 2;

/** Best normal queried by EPA (least overlap). */
const BESTN = new Float64Array(3);

/**
 * EPA on the cores a and b of size `scale` = QUERY[0] from the GJK simplex: RES = normal
 * a→b, witnesses, and gap = −depth of the cores (positive when the origin is just
 * outside: `separation` = QUERY[4] bounds that distance from above). Returns EPA_OK,
 * EPA_ROUGH (not converged, or the polytope broken by rounding: RES from the best normal
 * queried) or EPA_FAILED (no polytope: a flat difference).
 */
export function epa(a: ConvexSupport, b: ConvexSupport): number {
  const scale = QUERY[0];
  const separation = QUERY[4];
  if (!initialTetrahedron(a, b)) return EPA_FAILED;
  const tol = 1e-10 * scale;
  let best = -1;
  let converged = false;
  let lastBd = Number.NEGATIVE_INFINITY;
  // The best normal queried: least overlap n·w (w the support of a − b along n).
  let minOverlap = Number.POSITIVE_INFINITY;
  for (let it = 0; it < EPA_MAX_V; it++) {
    best = closestFace();
    if (best < 0) break;
    const bd = FD[best];
    // With the origin inside, the closest face's distance never decreases as the polytope
    // grows; and it is never below −(the separation), which GJK bounds from above. A face
    // beyond that means that rounding broke the polytope (supports coplanar with faces,
    // where a − b is flat).
    if (bd < -separation - 1e-9 * scale || (lastBd >= 0 && bd < lastBd - 1e-9 * scale)) break;
    lastBd = bd;
    if (faceCount + 64 >= EPA_MAX_F) {
      compactFaces();
      it--;
      if (faceCount + 64 >= EPA_MAX_F) break;
      continue;
    }
    if (vertexCount >= EPA_MAX_V) break;
    const nx = FN[3 * best];
    const ny = FN[3 * best + 1];
    const nz = FN[3 * best + 2];
    const w = vertexCount;
    minkowski(a, b, FN, 3 * best, PW, PA, PBv, w);
    const ov = nx * PW[3 * w] + ny * PW[3 * w + 1] + nz * PW[3 * w + 2];
    if (ov < minOverlap) {
      minOverlap = ov;
      BESTN[0] = nx;
      BESTN[1] = ny;
      BESTN[2] = nz;
    }
    if (ov - bd <= tol) {
      converged = true;
      break;
    }
    vertexCount++;
    expand(best, w);
  }
  if (!converged) {
    // Not converged (or a broken polytope): the best normal queried, the support points
    // along it as witnesses (the polish refines the normal).
    if (!(minOverlap < Number.POSITIVE_INFINITY)) return EPA_FAILED;
    overlapAlong(a, b, BESTN, 0);
    const f = ALONG[0];
    RES[0] = BESTN[0];
    RES[1] = BESTN[1];
    RES[2] = BESTN[2];
    for (let c = 0; c < 6; c++) RES[3 + c] = WAB[c];
    RES[9] = -f;
    return EPA_ROUGH;
  }
  if (best < 0) return EPA_FAILED;
  faceResult(best);
  return EPA_OK;
}

/** The live face closest to the origin (least FD; the first on ties), −1 if none. */
function closestFace(): number {
  let best = -1;
  let bd = Number.POSITIVE_INFINITY;
  for (let f = 0; f < faceCount; f++) {
    if (FALIVE[f] && FD[f] < bd) {
      bd = FD[f];
      best = f;
    }
  }
  return best;
}

/**
 * Adds vertex w to the polytope: removes the faces that see it (w beyond their plane by
 * more than 1e-14 of the size QUERY[0]), as a connected region grown from the face `best`,
 * and joins the region's boundary (the horizon) to w.
 */
function expand(best: number, w: number): void {
  const scale = QUERY[0];
  const wx = PW[3 * w];
  const wy = PW[3 * w + 1];
  const wz = PW[3 * w + 2];
  let ne = 0;
  FALIVE[best] = 0;
  ne = addEdges(best, ne);
  for (let grown = true; grown; ) {
    grown = false;
    for (let f = 0; f < faceCount; f++) {
      if (!FALIVE[f]) continue;
      const i0 = FI[3 * f];
      const s =
        FN[3 * f] * (wx - PW[3 * i0]) +
        FN[3 * f + 1] * (wy - PW[3 * i0 + 1]) +
        FN[3 * f + 2] * (wz - PW[3 * i0 + 2]);
      if (!(s > 1e-14 * scale)) continue;
      // Adjacent to the removed region: one of its edges is a horizon edge reversed.
      let adjacent = false;
      for (let e = 0; e < 3 && !adjacent; e++) {
        const p = FI[3 * f + e];
        const q = FI[3 * f + ((e + 1) % 3)];
        for (let x = 0; x < ne; x++)
          if (EDGES[2 * x] === q && EDGES[2 * x + 1] === p) {
            adjacent = true;
            break;
          }
      }
      if (!adjacent) continue;
      FALIVE[f] = 0;
      ne = addEdges(f, ne);
      grown = true;
    }
  }
  for (let x = 0; x < ne; x++) addFace(EDGES[2 * x], EDGES[2 * x + 1], w);
}

/**
 * Adds the directed edges of face f to the horizon list EDGES[0..ne): an edge shared with
 * a face removed before appears reversed there and cancels. Returns the new count.
 */
function addEdges(f: number, ne: number): number {
  for (let e = 0; e < 3; e++) {
    const p = FI[3 * f + e];
    const q = FI[3 * f + ((e + 1) % 3)];
    let found = -1;
    for (let x = 0; x < ne; x++)
      if (EDGES[2 * x] === q && EDGES[2 * x + 1] === p) {
        found = x;
        break;
      }
    if (found >= 0) {
      ne--;
      EDGES[2 * found] = EDGES[2 * ne];
      EDGES[2 * found + 1] = EDGES[2 * ne + 1];
    } else {
      EDGES[2 * ne] = p;
      EDGES[2 * ne + 1] = q;
      ne++;
    }
  }
  return ne;
}

/**
 * Adds the face (i, j, k): its unit normal (i→j) × (i→k) and its plane's distance from
 * the origin along it (+∞ for a degenerate face, never the closest).
 */
function addFace(i: number, j: number, k: number): void {
  if (faceCount >= EPA_MAX_F) return;
  const f = faceCount++;
  FI[3 * f] = i;
  FI[3 * f + 1] = j;
  FI[3 * f + 2] = k;
  triangleNormal(PW, i, j, k);
  const nx = TRI_NORMAL[0];
  const ny = TRI_NORMAL[1];
  const nz = TRI_NORMAL[2];
  const l = Math.sqrt(nx * nx + ny * ny + nz * nz);
  FALIVE[f] = 1;
  if (l > 1e-300) {
    FN[3 * f] = nx / l;
    FN[3 * f + 1] = ny / l;
    FN[3 * f + 2] = nz / l;
    FD[f] = (nx * PW[3 * i] + ny * PW[3 * i + 1] + nz * PW[3 * i + 2]) / l;
  } else {
    FN[3 * f] = FN[3 * f + 1] = FN[3 * f + 2] = 0;
    FD[f] = Number.POSITIVE_INFINITY;
  }
}

/** Drops the removed faces from the face arrays. */
function compactFaces(): void {
  let m = 0;
  for (let f = 0; f < faceCount; f++) {
    if (!FALIVE[f]) continue;
    if (m !== f) {
      for (let c = 0; c < 3; c++) {
        FI[3 * m + c] = FI[3 * f + c];
        FN[3 * m + c] = FN[3 * f + c];
      }
      FD[m] = FD[f];
      FALIVE[m] = 1;
    }
    m++;
  }
  faceCount = m;
}

/** The origin's projection on face f (barycentrics clamped to the triangle) → RES. */
function faceResult(f: number): void {
  const i = FI[3 * f];
  const j = FI[3 * f + 1];
  const k = FI[3 * f + 2];
  const d = FD[f];
  const nx = FN[3 * f];
  const ny = FN[3 * f + 1];
  const nz = FN[3 * f + 2];
  // Shift so that the projection is the origin, reuse triangleClosest on (W − d n).
  for (let q = 0; q < 3; q++) {
    const v = q === 0 ? i : q === 1 ? j : k;
    TW[3 * q] = PW[3 * v] - d * nx;
    TW[3 * q + 1] = PW[3 * v + 1] - d * ny;
    TW[3 * q + 2] = PW[3 * v + 2] - d * nz;
  }
  triangleClosest(TW, 0, 1, 2);
  const l0 = TRI[0];
  const l1 = TRI[1];
  const l2 = TRI[2];
  for (let c = 0; c < 3; c++) {
    RES[3 + c] = l0 * PA[3 * i + c] + l1 * PA[3 * j + c] + l2 * PA[3 * k + c];
    RES[6 + c] = l0 * PBv[3 * i + c] + l1 * PBv[3 * j + c] + l2 * PBv[3 * k + c];
  }
  RES[0] = nx;
  RES[1] = ny;
  RES[2] = nz;
  RES[9] = -d;
}

/** faceResult's shifted triangle. */
const TW = new Float64Array(9);

// ---------------------------------------------------------------------------------------
// Initial tetrahedron
// ---------------------------------------------------------------------------------------

/**
 * Candidates of tryDirection: the best one's distance from the hull (0) and direction
 * (1..3); the direction to try (4..6), its edge (7..9) for crossLeastAxis, the signed
 * direction probed (10..12) and its distance from the hull (13).
 */
const TRY = new Float64Array(14);

/**
 * Completes the GJK simplex to a tetrahedron of support points (PW...), by supports in
 * directions perpendicular to its affine hull; false when the Minkowski difference is flat
 * (within 1e-12 of the size QUERY[0]).
 */
function initialTetrahedron(a: ConvexSupport, b: ConvexSupport): boolean {
  const scale = QUERY[0];
  let n = simplexCount;
  for (let i = 0; i < 3 * n; i++) {
    PW[i] = SW[i];
    PA[i] = SA[i];
    PBv[i] = SB[i];
  }
  const eps = 1e-12 * scale;
  while (n < 4) {
    TRY[0] = -1;
    if (n === 1) {
      for (let k = 0; k < 3; k++) {
        TRY[4] = k === 0 ? 1 : 0;
        TRY[5] = k === 1 ? 1 : 0;
        TRY[6] = k === 2 ? 1 : 0;
        tryDirection(a, b, n);
      }
    } else if (n === 2) {
      const ex = PW[3] - PW[0];
      const ey = PW[4] - PW[1];
      const ez = PW[5] - PW[2];
      // Two perpendiculars of e: p, and e × p.
      TRY[7] = ex;
      TRY[8] = ey;
      TRY[9] = ez;
      crossLeastAxis(TRY, 7);
      const px = PERP[0];
      const py = PERP[1];
      const pz = PERP[2];
      TRY[4] = px;
      TRY[5] = py;
      TRY[6] = pz;
      tryDirection(a, b, n);
      TRY[4] = ey * pz - ez * py;
      TRY[5] = ez * px - ex * pz;
      TRY[6] = ex * py - ey * px;
      tryDirection(a, b, n);
    } else {
      const ux = PW[3] - PW[0];
      const uy = PW[4] - PW[1];
      const uz = PW[5] - PW[2];
      const vx = PW[6] - PW[0];
      const vy = PW[7] - PW[1];
      const vz = PW[8] - PW[2];
      TRY[4] = uy * vz - uz * vy;
      TRY[5] = uz * vx - ux * vz;
      TRY[6] = ux * vy - uy * vx;
      tryDirection(a, b, n);
    }
    if (!(TRY[0] > eps)) return false;
    minkowski(a, b, TRY, 1, PW, PA, PBv, n);
    n++;
  }
  // Outward faces of the tetrahedron.
  faceCount = 0;
  for (let f = 0; f < 4; f++) {
    const i = TET_I[f];
    let j = TET_J[f];
    let k = TET_K[f];
    const l = TET_L[f];
    const ux = PW[3 * j] - PW[3 * i];
    const uy = PW[3 * j + 1] - PW[3 * i + 1];
    const uz = PW[3 * j + 2] - PW[3 * i + 2];
    const vx = PW[3 * k] - PW[3 * i];
    const vy = PW[3 * k + 1] - PW[3 * i + 1];
    const vz = PW[3 * k + 2] - PW[3 * i + 2];
    const nx = uy * vz - uz * vy;
    const ny = uz * vx - ux * vz;
    const nz = ux * vy - uy * vx;
    const s =
      nx * (PW[3 * l] - PW[3 * i]) +
      ny * (PW[3 * l + 1] - PW[3 * i + 1]) +
      nz * (PW[3 * l + 2] - PW[3 * i + 2]);
    if (s > 0) {
      const t = j;
      j = k;
      k = t;
    }
    addFace(i, j, k);
  }
  vertexCount = 4;
  return true;
}

/**
 * Tries ±TRY[4..6] as the support direction of the next vertex n (keeps the farthest in
 * TRY[0..3]).
 */
function tryDirection(a: ConvexSupport, b: ConvexSupport, n: number): void {
  const x = TRY[4];
  const y = TRY[5];
  const z = TRY[6];
  for (let sgn = -1; sgn <= 1; sgn += 2) {
    TRY[10] = sgn * x;
    TRY[11] = sgn * y;
    TRY[12] = sgn * z;
    minkowski(a, b, TRY, 10, PW, PA, PBv, n);
    distanceToHull(n);
    const d = TRY[13];
    if (d > TRY[0]) {
      TRY[0] = d;
      TRY[1] = TRY[10];
      TRY[2] = TRY[11];
      TRY[3] = TRY[12];
    }
  }
}

/**
 * Distance of the candidate point PW[n] from the affine hull of PW[0..n−1] (n = 1..3),
 * into TRY[13].
 */
function distanceToHull(n: number): void {
  const qx = PW[3 * n] - PW[0];
  const qy = PW[3 * n + 1] - PW[1];
  const qz = PW[3 * n + 2] - PW[2];
  if (n === 1) {
    TRY[13] = Math.sqrt(qx * qx + qy * qy + qz * qz);
    return;
  }
  const ux = PW[3] - PW[0];
  const uy = PW[4] - PW[1];
  const uz = PW[5] - PW[2];
  if (n === 2) {
    const cx = qy * uz - qz * uy;
    const cy = qz * ux - qx * uz;
    const cz = qx * uy - qy * ux;
    TRY[13] = Math.sqrt(cx * cx + cy * cy + cz * cz) / Math.sqrt(ux * ux + uy * uy + uz * uz);
    return;
  }
  const vx = PW[6] - PW[0];
  const vy = PW[7] - PW[1];
  const vz = PW[8] - PW[2];
  const nx = uy * vz - uz * vy;
  const ny = uz * vx - ux * vz;
  const nz = ux * vy - uy * vx;
  TRY[13] = Math.abs(nx * qx + ny * qy + nz * qz) / Math.sqrt(nx * nx + ny * ny + nz * nz);
}
