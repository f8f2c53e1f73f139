/**
 * Narrow phase of the cylinder (radius r, half-length L, axis the shape frame's local z,
 * flat caps at z = ±L) against every shape. Same conventions as narrowphase.ts: normals
 * from a to b, gap = (p_b − p_a)·n (negative when penetrating), point = the midpoint of
 * the two surface points, a stable feature id per contact, canonical order
 * plane < box < capsule < cylinder < sphere (so the cylinder is b except against a
 * sphere), nothing allocated.
 *
 * Closed forms:
 *  - plane–cylinder: the deepest point of each cap's rim, c ± L z − r û with û the unit
 *    part of the plane normal n perpendicular to the axis, gap = n·c − d ± L (n·z) − r|û|
 *    (features 0: −z cap, 1: +z cap), so a cylinder lying on the plane gets its line
 *    contact as two points at the ends of the side; when the cap facing the plane is
 *    within CYLINDER_FLUSH_SIN of flush, its RIM_SAMPLES rim points at fixed angles
 *    (material points: their gaps are exact and steady) are added, features
 *    2 + RIM_SAMPLES·cap + k. A cap lying flat thus gets an 8-point manifold; the exact
 *    deepest point is then kept only where the samples miss it by more than 1e-7 (r + L)
 *    (a tilted cap), so that at rest no contact wanders with the rounding noise of û.
 *  - cylinder–sphere: the sphere centre against the solid cylinder (closest point,
 *    or the nearest of side and caps from inside), feature the region code
 *    c_z + 3 c_ρ (c_z: 0 below −L, 1 within, 2 above +L; c_ρ: 0 within r, 1 outside;
 *    an inside centre takes its nearest feature's code: side 4, caps 0 and 2).
 *
 * General convex pairs (box–cylinder, capsule–cylinder, cylinder–cylinder), on the
 * support functions of the cores (box, cylinder, the capsule's segment; the capsule's
 * radius is added afterwards, exactly, since dilating a shape by a ball moves the
 * boundary of the Minkowski difference by that radius):
 *  1. GJK (closest points of the simplex by Voronoi regions, Ericson §5.1; a flat
 *     tetrahedron never counts as containing the origin) gives the distance and witness
 *     points when the cores are separated. Its result is kept only if its normal
 *     separates by its distance: where curved surfaces touch it converges slowly and may
 *     stop on rounding with a tiny v of meaningless direction. Otherwise, and when the
 *     cores overlap or touch, EPA (expanding polytope from the GJK simplex, completed to a
 *     tetrahedron; the faces seen from a new support removed as a connected region) gives
 *     the depth, signed (the origin may lie just outside its polytope), converged to
 *     1e-10 of the size of the pair. A polytope broken by rounding (its closest face
 *     moving the wrong way) or no convergence: b is dilated by a ball of 1e-3 of the size
 *     and GJK/EPA rerun (the origin then strictly inside a − b for nearly touching shapes;
 *     a dilation by a ball does not move the normal), the better normal kept.
 *     EPA's depth converges much faster than its face normals (≈1e-5 rad on a curved
 *     contact), so the normal is then polished: the overlap h_a(n) + h_b(−n) is
 *     minimized over unit n from there, with its exact gradient (the support point of
 *     a − b) and exact Hessian — 2-D Newton steps, a cylinder's axis ±z (its cap face, a
 *     cone point of its support), 1-D Newton steps along a nearby kink circle n ⟂ k (k a
 *     box, cylinder or capsule axis, where the overlap is not differentiable) and the
 *     crossings of two such circles. The reported core gap is −overlap(n), the exact separation along the
 *     reported normal (so never less penetration than the truth); the witnesses are moved
 *     onto the support sets along n, and the contact placed from the lower-dimensional
 *     one (a vertex or rim point, else an edge or side line, or the closest points of two
 *     such segments).
 *  2. With that normal n each shape's feature facing the other is found: a polygon (a
 *     box face, or a cylinder cap as its RIM_SAMPLES rim points) when within
 *     CYLINDER_FLUSH_SIN of flush, a segment (a box edge, a cylinder's side line, a
 *     capsule's axis) when within LINE_SIN of perpendicular to n, else a point.
 *     - polygon–polygon: the reference is the polygon whose normal separates the shapes
 *       best (ties, e.g. parallel faces: the larger one); the incident polygon (a cap
 *       gets its exact deepest rim point inserted where the samples miss it) is clipped
 *       (Sutherland–Hodgman) against the reference's sides, gaps = heights above the
 *       reference plane, at most MAX_MANIFOLD points (deepest, then spread);
 *     - polygon–segment: the segment (for a cylinder side: the exact deepest point of
 *       each rim, joined) clipped to the polygon, two points;
 *     - segment–segment, parallel within PARALLEL_SIN: at each end of their overlap, the
 *       point of a's support line (on a's surface) and where the line from it along n
 *       enters b (on b's surface), gap = that parameter;
 *     - otherwise the single GJK/EPA contact. A reference polygon must separate the
 *       shapes nearly as well as the optimal normal (within 5 % and 1e-5 of the size, as
 *       box–box prefers faces to edges), else the contact is at its boundary (a rim or an
 *       edge) and the single contact is used; a manifold whose deepest gap misses the
 *       GJK/EPA gap by more than 1e-7 of the size also gets the single contact.
 *     Normals: the reference polygon's normal for clipped manifolds, else the polished one.
 *  Feature ids (below 65536): single contact 27·code_a + code_b (box: the region code
 *  of the witness Σ c_i 3^i as boxSphere; cylinder: 0/1 the −z/+z cap, 2 the side, 3/4
 *  the −z/+z rim; capsule: 0/1 its ends, 2 its side), then ranges for polygon–polygon
 *  (reference side, a's face/cap, b's face/cap, clip label), polygon–segment,
 *  segment–polygon and segment–segment (see the *_BASE constants).
 */

import { length3 } from "../math/vec3";
import type { ContactBuffer } from "./contact-buffer";
import type { WorldPose } from "./pose";
import {
  type BoxShape,
  type CapsuleShape,
  type CylinderShape,
  type PlaneShape,
  type SphereShape,
  worldPlane,
} from "./shapes";

/** Rim points per cap in flush contacts (fixed angles 2πk/RIM_SAMPLES from local x). */
export const RIM_SAMPLES = 8;
/** sin of the tilt below which a cap (or box face) is treated as flush: a polygon feature. */
export const CYLINDER_FLUSH_SIN = 0.1;
const FLUSH_COS = Math.sqrt(1 - CYLINDER_FLUSH_SIN * CYLINDER_FLUSH_SIN);
/** |n·d| below which a segment (box edge, cylinder side, capsule axis) faces the normal. */
const LINE_SIN = 0.2;
/** sin of the angle below which two segment features are parallel (two-point contact). */
const PARALLEL_SIN = 0.02;
/** Most points of a clipped manifold. */
const MAX_MANIFOLD = 8;

const COS_K = Float64Array.from({ length: RIM_SAMPLES }, (_, k) =>
  Math.cos((2 * Math.PI * k) / RIM_SAMPLES),
);
const SIN_K = Float64Array.from({ length: RIM_SAMPLES }, (_, k) =>
  Math.sin((2 * Math.PI * k) / RIM_SAMPLES),
);

// ---------------------------------------------------------------------------------------
// Contact output
// ---------------------------------------------------------------------------------------

/** p_a (0..2), normal (3..5), gap (6); pushed with point = p_a + (gap/2) n. */
const CONTACT = new Float64Array(7);

function pushFromA(
  out: ContactBuffer,
  ax: number,
  ay: number,
  az: number,
  nx: number,
  ny: number,
  nz: number,
  gap: number,
  feature: number,
): void {
  const h = 0.5 * gap;
  CONTACT[0] = ax + h * nx;
  CONTACT[1] = ay + h * ny;
  CONTACT[2] = az + h * nz;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  out.pushFrom(CONTACT, feature);
}

// ---------------------------------------------------------------------------------------
// Plane–cylinder and cylinder–sphere (closed forms)
// ---------------------------------------------------------------------------------------

/**
 * Plane–cylinder (see the file comment): exact deepest rim point of each cap, features 0
 * (−z cap) and 1 (+z cap), plus the rim samples of a flush cap, features
 * 2 + RIM_SAMPLES·cap + k. Normal: the plane's (towards the cylinder).
 */
export function planeCylinder(
  a: PlaneShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const PL = PLANE;
  worldPlane(a, pa, PL);
  const nx = PL[0];
  const ny = PL[1];
  const nz = PL[2];
  const R = pb.R;
  const c = pb.p;
  const r = b.radius;
  const L = b.halfLength;
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  const cz = nx * zx + ny * zy + nz * zz;
  const dc = nx * c[0] + ny * c[1] + nz * c[2] - PL[3];
  // û: the part of n perpendicular to the axis.
  let ux = nx - cz * zx;
  let uy = ny - cz * zy;
  let uz = nz - cz * zz;
  const su = length3(ux, uy, uz);
  if (su > 0) {
    ux /= su;
    uy /= su;
    uz /= su;
  }
  const flush = Math.abs(cz) >= FLUSH_COS;
  // The cap facing the plane: outward normal s z along −n.
  const low = cz > 0 ? 0 : 1;
  const tol = 1e-7 * (r + L);
  // Deepest rim sample of the flush cap (for the exact point's test).
  let sampleMin = Number.POSITIVE_INFINITY;
  if (flush) {
    const s = low === 0 ? -L : L;
    const xd = nx * R[0] + ny * R[3] + nz * R[6];
    const yd = nx * R[1] + ny * R[4] + nz * R[7];
    for (let k = 0; k < RIM_SAMPLES; k++) {
      const g = dc + s * cz + r * (COS_K[k] * xd + SIN_K[k] * yd);
      if (g < sampleMin) sampleMin = g;
    }
  }
  for (let e = 0; e < 2; e++) {
    if (su === 0) break;
    const s = e === 0 ? -L : L;
    const g = dc + s * cz - r * su;
    if (!(g < margin)) continue;
    if (flush && e === low && !(g < sampleMin - tol)) continue;
    const px = c[0] + s * zx - r * ux;
    const py = c[1] + s * zy - r * uy;
    const pz = c[2] + s * zz - r * uz;
    pushFromA(out, px - g * nx, py - g * ny, pz - g * nz, nx, ny, nz, g, e);
  }
  if (!flush) return;
  const s = low === 0 ? -L : L;
  for (let k = 0; k < RIM_SAMPLES; k++) {
    const lx = r * COS_K[k];
    const ly = r * SIN_K[k];
    const px = c[0] + R[0] * lx + R[1] * ly + s * zx;
    const py = c[1] + R[3] * lx + R[4] * ly + s * zy;
    const pz = c[2] + R[6] * lx + R[7] * ly + s * zz;
    const g = nx * px + ny * py + nz * pz - PL[3];
    if (g < margin)
      pushFromA(
        out,
        px - g * nx,
        py - g * ny,
        pz - g * nz,
        nx,
        ny,
        nz,
        g,
        2 + RIM_SAMPLES * low + k,
      );
  }
}

const PLANE = new Float64Array(4);

/**
 * Cylinder–sphere: the sphere centre q (cylinder frame) against the solid cylinder.
 * Outside: p_a the closest point, n = (q − p_a)/|q − p_a|; inside: the nearest of the side
 * (radial normal) and the caps (±z). gap = signed distance − radius; feature: the region
 * code of the file comment.
 */
export function cylinderSphere(
  a: CylinderShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const R = pa.R;
  const r = a.radius;
  const L = a.halfLength;
  const dx = pb.p[0] - pa.p[0];
  const dy = pb.p[1] - pa.p[1];
  const dz = pb.p[2] - pa.p[2];
  const x = R[0] * dx + R[3] * dy + R[6] * dz;
  const y = R[1] * dx + R[4] * dy + R[7] * dz;
  const z = R[2] * dx + R[5] * dy + R[8] * dz;
  const rho = Math.hypot(x, y);
  const outR = rho > r;
  const outZ = z > L || z < -L;
  let kx: number;
  let ky: number;
  let kz: number;
  let mx: number;
  let my: number;
  let mz: number;
  let dist: number;
  let code: number;
  if (outR || outZ) {
    kx = outR ? (x * r) / rho : x;
    ky = outR ? (y * r) / rho : y;
    kz = Math.max(-L, Math.min(L, z));
    mx = x - kx;
    my = y - ky;
    mz = z - kz;
    dist = length3(mx, my, mz);
    mx /= dist;
    my /= dist;
    mz /= dist;
    code = (z > L ? 2 : z < -L ? 0 : 1) + (outR ? 3 : 0);
  } else {
    const dSide = r - rho;
    const dCap = L - Math.abs(z);
    if (dSide < dCap) {
      if (rho > 0) {
        mx = x / rho;
        my = y / rho;
      } else {
        mx = 1;
        my = 0;
      }
      mz = 0;
      kx = r * mx;
      ky = r * my;
      kz = z;
      dist = -dSide;
      code = 4;
    } else {
      const s = z >= 0 ? 1 : -1;
      mx = 0;
      my = 0;
      mz = s;
      kx = x;
      ky = y;
      kz = s * L;
      dist = -dCap;
      code = s > 0 ? 2 : 0;
    }
  }
  const gap = dist - b.radius;
  if (!(gap < margin)) return;
  pushFromA(
    out,
    pa.p[0] + R[0] * kx + R[1] * ky + R[2] * kz,
    pa.p[1] + R[3] * kx + R[4] * ky + R[5] * kz,
    pa.p[2] + R[6] * kx + R[7] * ky + R[8] * kz,
    R[0] * mx + R[1] * my + R[2] * mz,
    R[3] * mx + R[4] * my + R[5] * mz,
    R[6] * mx + R[7] * my + R[8] * mz,
    gap,
    code,
  );
}

// ---------------------------------------------------------------------------------------
// Support functions of the two cores (slot 0 = a, slot 1 = b)
// ---------------------------------------------------------------------------------------

const K_BOX = 0;
const K_CYL = 1;
const K_SEG = 2;

const SK = new Int32Array(2);
/** Centre (3 per slot). */
const SP = new Float64Array(6);
/** Rotation, row-major (9 per slot). */
const SR = new Float64Array(18);
/** Dimensions: box h0, h1, h2; cylinder r, L; segment L (3 per slot). */
const SD = new Float64Array(6);
/** Radius added to the core (capsule), per slot. */
const SRAD = new Float64Array(2);
/** Support point written by support(). */
const SUP = new Float64Array(3);

function setSlot(s: number, kind: number, pose: WorldPose, d0: number, d1: number, d2: number) {
  SK[s] = kind;
  SP[3 * s] = pose.p[0];
  SP[3 * s + 1] = pose.p[1];
  SP[3 * s + 2] = pose.p[2];
  for (let k = 0; k < 9; k++) SR[9 * s + k] = pose.R[k];
  SD[3 * s] = d0;
  SD[3 * s + 1] = d1;
  SD[3 * s + 2] = d2;
}

/** Support point of slot s's core in direction (dx, dy, dz) (any length), into SUP. */
function support(s: number, dx: number, dy: number, dz: number): void {
  const o = 9 * s;
  const c0 = 3 * s;
  const l0 = SR[o] * dx + SR[o + 3] * dy + SR[o + 6] * dz;
  const l1 = SR[o + 1] * dx + SR[o + 4] * dy + SR[o + 7] * dz;
  const l2 = SR[o + 2] * dx + SR[o + 5] * dy + SR[o + 8] * dz;
  let a0 = 0;
  let a1 = 0;
  let a2 = 0;
  const kind = SK[s];
  if (kind === K_BOX) {
    a0 = l0 >= 0 ? SD[c0] : -SD[c0];
    a1 = l1 >= 0 ? SD[c0 + 1] : -SD[c0 + 1];
    a2 = l2 >= 0 ? SD[c0 + 2] : -SD[c0 + 2];
  } else if (kind === K_CYL) {
    const r = SD[c0];
    const rho = Math.hypot(l0, l1);
    if (rho > 0) {
      a0 = (r * l0) / rho;
      a1 = (r * l1) / rho;
    }
    a2 = l2 >= 0 ? SD[c0 + 1] : -SD[c0 + 1];
  } else {
    a2 = l2 >= 0 ? SD[c0] : -SD[c0];
  }
  SUP[0] = SP[c0] + SR[o] * a0 + SR[o + 1] * a1 + SR[o + 2] * a2;
  SUP[1] = SP[c0 + 1] + SR[o + 3] * a0 + SR[o + 4] * a1 + SR[o + 5] * a2;
  SUP[2] = SP[c0 + 2] + SR[o + 6] * a0 + SR[o + 7] * a1 + SR[o + 8] * a2;
}

/** Bounding radius of slot s's core about its centre. */
function coreRadius(s: number): number {
  const o = 3 * s;
  if (SK[s] === K_BOX) return length3(SD[o], SD[o + 1], SD[o + 2]);
  if (SK[s] === K_CYL) return Math.hypot(SD[o], SD[o + 1]);
  return SD[o];
}

// ---------------------------------------------------------------------------------------
// GJK
// ---------------------------------------------------------------------------------------

/** Simplex: Minkowski points w = a − b (3 each), their a and b supports, count. */
const SW = new Float64Array(12);
const SA = new Float64Array(12);
const SB = new Float64Array(12);
let simplexCount = 0;
/** Barycentric coordinates of the closest point (per simplex vertex). */
const LAM = new Float64Array(4);
/** Closest point of the simplex to the origin. */
const V = new Float64Array(3);
/** Triangle routine result: barycentrics (0..2) and squared distance (3). */
const TRI = new Float64Array(4);

/** Minkowski support in direction d: w = s_a(d) − s_b(−d), written at simplex/polytope slot. */
function minkowski(
  dx: number,
  dy: number,
  dz: number,
  W: Float64Array,
  A: Float64Array,
  B: Float64Array,
  i: number,
): void {
  support(0, dx, dy, dz);
  A[3 * i] = SUP[0];
  A[3 * i + 1] = SUP[1];
  A[3 * i + 2] = SUP[2];
  support(1, -dx, -dy, -dz);
  B[3 * i] = SUP[0];
  B[3 * i + 1] = SUP[1];
  B[3 * i + 2] = SUP[2];
  W[3 * i] = A[3 * i] - SUP[0];
  W[3 * i + 1] = A[3 * i + 1] - SUP[1];
  W[3 * i + 2] = A[3 * i + 2] - SUP[2];
  if (inflate > 0) {
    // b dilated by a ball of radius `inflate`: its support moves by inflate·(−d̂).
    const s = inflate / length3(dx, dy, dz);
    W[3 * i] += s * dx;
    W[3 * i + 1] += s * dy;
    W[3 * i + 2] += s * dz;
  }
}

/** Radius of the ball b is dilated by in minkowski() (the fallback of convexPair). */
let inflate = 0;

/**
 * Closest point to the origin of the triangle (W_i, W_j, W_k) of array W (Ericson,
 * ClosestPtPointTriangle): barycentrics into TRI[0..2], squared distance TRI[3].
 */
function triangleClosest(W: Float64Array, i: number, j: number, k: number): void {
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

const KEEP = new Int32Array(4);

/**
 * Closest point of the simplex to the origin into V and LAM, the simplex reduced to the
 * vertices that carry it. Returns true when a tetrahedron contains the origin.
 */
function closestOnSimplex(): boolean {
  const n = simplexCount;
  LAM.fill(0);
  if (n === 1) {
    LAM[0] = 1;
  } else if (n === 2) {
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
  } else if (n === 3) {
    triangleClosest(SW, 0, 1, 2);
    LAM[0] = TRI[0];
    LAM[1] = TRI[1];
    LAM[2] = TRI[2];
  } else {
    // A flat tetrahedron (volume below 1e-9 of its size cubed: supports nearly coplanar,
    // where a − b is flat) contains nothing: the origin's side of its faces is then
    // decided by rounding. Its closest point is the best of its faces'.
    let size = 0;
    for (let i = 1; i < 4; i++)
      size = Math.max(
        size,
        length3(SW[3 * i] - SW[0], SW[3 * i + 1] - SW[1], SW[3 * i + 2] - SW[2]),
      );
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
      const ax = SW[3 * i];
      const ay = SW[3 * i + 1];
      const az = SW[3 * i + 2];
      const ux = SW[3 * j] - ax;
      const uy = SW[3 * j + 1] - ay;
      const uz = SW[3 * j + 2] - az;
      const vx = SW[3 * k] - ax;
      const vy = SW[3 * k + 1] - ay;
      const vz = SW[3 * k + 2] - az;
      const nx = uy * vz - uz * vy;
      const ny = uz * vx - ux * vz;
      const nz = ux * vy - uy * vx;
      const sO = -(nx * ax + ny * ay + nz * az);
      const sD = nx * (SW[3 * l] - ax) + ny * (SW[3 * l + 1] - ay) + nz * (SW[3 * l + 2] - az);
      if (!flat && sO * sD >= 0) continue; // origin on the inner side of this face
      any = true;
      triangleClosest(SW, i, j, k);
      if (TRI[3] < best) {
        best = TRI[3];
        LAM.fill(0);
        LAM[i] = TRI[0];
        LAM[j] = TRI[1];
        LAM[k] = TRI[2];
      }
    }
    if (!any) {
      V[0] = V[1] = V[2] = 0;
      return true;
    }
  }
  // V and reduction.
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
  return false;
}

/** Result of the GJK/EPA query: normal a→b (0..2), witness on a (3..5), on b (6..8), gap (9). */
const RES = new Float64Array(10);
/** A saved RES (convexPair's fallback). */
const SAVE = new Float64Array(10);

const GJK_SEPARATED = 0;
const GJK_FAR = 1;
const GJK_OVERLAP = 2;

/**
 * GJK on the cores of the slots. GJK_SEPARATED: RES holds the closest points and the core
 * distance; GJK_FAR: the core distance is at least `reach` (no contact); GJK_OVERLAP: the
 * cores overlap or touch (the simplex is left for EPA).
 */
function gjk(scale: number, reach: number): number {
  let dx = SP[0] - SP[3];
  let dy = SP[1] - SP[4];
  let dz = SP[2] - SP[5];
  if (dx === 0 && dy === 0 && dz === 0) dx = 1;
  simplexCount = 0;
  const touch = 1e-10 * scale;
  let vv = Number.POSITIVE_INFINITY;
  for (let it = 0; it < 96; it++) {
    const n = simplexCount;
    minkowski(-dx, -dy, -dz, SW, SA, SB, n);
    const wx = SW[3 * n];
    const wy = SW[3 * n + 1];
    const wz = SW[3 * n + 2];
    if (n > 0) {
      const vw = dx * wx + dy * wy + dz * wz;
      const vl = Math.sqrt(vv);
      if (vw >= reach * vl) return GJK_FAR;
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
  const d = length3(V[0], V[1], V[2]);
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

// ---------------------------------------------------------------------------------------
// EPA
// ---------------------------------------------------------------------------------------

const EPA_MAX_V = 160;
const EPA_MAX_F = 4 * EPA_MAX_V;
const PW = new Float64Array(3 * EPA_MAX_V);
const PA = new Float64Array(3 * EPA_MAX_V);
const PBv = new Float64Array(3 * EPA_MAX_V);
const FI = new Int32Array(3 * EPA_MAX_F);
const FN = new Float64Array(3 * EPA_MAX_F);
const FD = new Float64Array(EPA_MAX_F);
const FALIVE = new Uint8Array(EPA_MAX_F);
const EDGES = new Int32Array(2 * 3 * EPA_MAX_F);
let faceCount = 0;

function addFace(i: number, j: number, k: number): void {
  if (faceCount >= EPA_MAX_F) return;
  const f = faceCount++;
  FI[3 * f] = i;
  FI[3 * f + 1] = j;
  FI[3 * f + 2] = k;
  const ax = PW[3 * i];
  const ay = PW[3 * i + 1];
  const az = PW[3 * i + 2];
  const ux = PW[3 * j] - ax;
  const uy = PW[3 * j + 1] - ay;
  const uz = PW[3 * j + 2] - az;
  const vx = PW[3 * k] - ax;
  const vy = PW[3 * k + 1] - ay;
  const vz = PW[3 * k + 2] - az;
  const nx = uy * vz - uz * vy;
  const ny = uz * vx - ux * vz;
  const nz = ux * vy - uy * vx;
  const l = length3(nx, ny, nz);
  FALIVE[f] = 1;
  if (l > 1e-300) {
    FN[3 * f] = nx / l;
    FN[3 * f + 1] = ny / l;
    FN[3 * f + 2] = nz / l;
    FD[f] = (nx * ax + ny * ay + nz * az) / l;
  } else {
    FN[3 * f] = FN[3 * f + 1] = FN[3 * f + 2] = 0;
    FD[f] = Number.POSITIVE_INFINITY;
  }
}

/** Tetrahedron faces (i, j, k) with the opposite vertex l. */
const TET_I = [0, 0, 0, 1];
const TET_J = [1, 2, 3, 3];
const TET_K = [2, 3, 1, 2];
const TET_L = [3, 1, 2, 0];

/** Best candidate of tryDirection: distance from the hull, direction. */
const TRY = new Float64Array(4);

/** Tries ±(x, y, z) as the support direction of the next vertex n (keeps the farthest). */
function tryDirection(n: number, x: number, y: number, z: number): void {
  for (let sgn = -1; sgn <= 1; sgn += 2) {
    minkowski(sgn * x, sgn * y, sgn * z, PW, PA, PBv, n);
    const d = distanceToHull(n);
    if (d > TRY[0]) {
      TRY[0] = d;
      TRY[1] = sgn * x;
      TRY[2] = sgn * y;
      TRY[3] = sgn * z;
    }
  }
}

/**
 * Completes the GJK simplex to a tetrahedron of support points (PW...), by supports in
 * directions perpendicular to its affine hull; false when the Minkowski difference is flat.
 */
function initialTetrahedron(scale: number): boolean {
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
      tryDirection(n, 1, 0, 0);
      tryDirection(n, 0, 1, 0);
      tryDirection(n, 0, 0, 1);
    } else if (n === 2) {
      const ex = PW[3] - PW[0];
      const ey = PW[4] - PW[1];
      const ez = PW[5] - PW[2];
      // Two perpendiculars of e.
      const ax = Math.abs(ex);
      const ay = Math.abs(ey);
      const az = Math.abs(ez);
      let px: number;
      let py: number;
      let pz: number;
      if (ax <= ay && ax <= az) {
        px = 0;
        py = ez;
        pz = -ey;
      } else if (ay <= az) {
        px = -ez;
        py = 0;
        pz = ex;
      } else {
        px = ey;
        py = -ex;
        pz = 0;
      }
      tryDirection(n, px, py, pz);
      tryDirection(n, ey * pz - ez * py, ez * px - ex * pz, ex * py - ey * px);
    } else {
      const ux = PW[3] - PW[0];
      const uy = PW[4] - PW[1];
      const uz = PW[5] - PW[2];
      const vx = PW[6] - PW[0];
      const vy = PW[7] - PW[1];
      const vz = PW[8] - PW[2];
      tryDirection(n, uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx);
    }
    if (!(TRY[0] > eps)) return false;
    minkowski(TRY[1], TRY[2], TRY[3], PW, PA, PBv, n);
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

let vertexCount = 0;

/** Distance of the candidate point PW[n] from the affine hull of PW[0..n−1] (n = 1..3). */
function distanceToHull(n: number): number {
  const qx = PW[3 * n] - PW[0];
  const qy = PW[3 * n + 1] - PW[1];
  const qz = PW[3 * n + 2] - PW[2];
  if (n === 1) return length3(qx, qy, qz);
  const ux = PW[3] - PW[0];
  const uy = PW[4] - PW[1];
  const uz = PW[5] - PW[2];
  if (n === 2) {
    const cx = qy * uz - qz * uy;
    const cy = qz * ux - qx * uz;
    const cz = qx * uy - qy * ux;
    return length3(cx, cy, cz) / length3(ux, uy, uz);
  }
  const vx = PW[6] - PW[0];
  const vy = PW[7] - PW[1];
  const vz = PW[8] - PW[2];
  const nx = uy * vz - uz * vy;
  const ny = uz * vx - ux * vz;
  const nz = ux * vy - uy * vx;
  return Math.abs(nx * qx + ny * qy + nz * qz) / length3(nx, ny, nz);
}

/** EPA outcomes: converged; a rough result (the best normal queried); no polytope. */
const EPA_OK = 0;
const EPA_ROUGH = 1;
const EPA_FAILED = 2;

/** Best normal queried by EPA. */
const BESTN = new Float64Array(3);

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
 * EPA from the GJK simplex: RES = normal a→b, witnesses, and gap = −depth of the cores
 * (positive when the origin is just outside: `separation` bounds that distance from
 * above). Returns EPA_OK, EPA_ROUGH (not converged, or the polytope broken by rounding:
 * RES from the best normal queried) or EPA_FAILED (no polytope: a flat difference).
 */
function epa(scale: number, separation: number): number {
  if (!initialTetrahedron(scale)) return EPA_FAILED;
  const tol = 1e-10 * scale;
  let best = -1;
  let converged = false;
  let lastBd = Number.NEGATIVE_INFINITY;
  // The best normal queried: least overlap n·w (w the support of a − b along n).
  let minOverlap = Number.POSITIVE_INFINITY;
  for (let it = 0; it < EPA_MAX_V; it++) {
    best = -1;
    let bd = Number.POSITIVE_INFINITY;
    for (let f = 0; f < faceCount; f++) {
      if (FALIVE[f] && FD[f] < bd) {
        bd = FD[f];
        best = f;
      }
    }
    if (best < 0) break;
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
    minkowski(nx, ny, nz, PW, PA, PBv, w);
    const wx = PW[3 * w];
    const wy = PW[3 * w + 1];
    const wz = PW[3 * w + 2];
    const ov = nx * wx + ny * wy + nz * wz;
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
    // Remove the faces seen from w, as a connected region grown from the closest face (so
    // that its boundary, the horizon, is one loop); the horizon gets new faces to w.
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
  if (!converged) {
    // Not converged (or a broken polytope): the best normal queried, the support points
    // along it as witnesses (the polish refines the normal).
    if (!(minOverlap < Number.POSITIVE_INFINITY)) return EPA_FAILED;
    const f = overlapAlong(BESTN[0], BESTN[1], BESTN[2]);
    RES[0] = BESTN[0];
    RES[1] = BESTN[1];
    RES[2] = BESTN[2];
    for (let c = 0; c < 6; c++) RES[3 + c] = WAB[c];
    RES[9] = -f;
    return EPA_ROUGH;
  }
  if (best < 0) return EPA_FAILED;
  // Projection of the origin on the closest face, barycentrics clamped to the triangle.
  const f = best;
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
  return EPA_OK;
}

const TW = new Float64Array(9);

// ---------------------------------------------------------------------------------------
// Normal polish
// ---------------------------------------------------------------------------------------

/** Support points of the last overlapAlong: a's (0..2), b's (3..5). */
const WAB = new Float64Array(6);

/** Overlap of the cores along the unit n: h_a(n) + h_b(−n) (supports kept in WAB). */
function overlapAlong(nx: number, ny: number, nz: number): number {
  support(0, nx, ny, nz);
  WAB[0] = SUP[0];
  WAB[1] = SUP[1];
  WAB[2] = SUP[2];
  support(1, -nx, -ny, -nz);
  WAB[3] = SUP[0];
  WAB[4] = SUP[1];
  WAB[5] = SUP[2];
  return nx * (WAB[0] - WAB[3]) + ny * (WAB[1] - WAB[4]) + nz * (WAB[2] - WAB[5]);
}

/** Kink axes of the two cores (box axes, cylinder and segment axes), 3 each. */
const KAX = new Float64Array(18);
/** Best normal (0..2) and its overlap (3); trial point (4..6). */
const PN = new Float64Array(7);
/** Tangent basis e1 (0..2), e2 (3..5). */
const TB = new Float64Array(6);

/** Tries the (not necessarily unit) direction PN[4..6]; keeps it when it lowers the overlap. */
function tryNormal(): number {
  const l = length3(PN[4], PN[5], PN[6]);
  const x = PN[4] / l;
  const y = PN[5] / l;
  const z = PN[6] / l;
  const f = overlapAlong(x, y, z);
  if (f < PN[3]) {
    PN[0] = x;
    PN[1] = y;
    PN[2] = z;
    PN[3] = f;
  }
  return f;
}

/**
 * Component along (tx, ty, tz) of the overlap's gradient on the unit sphere at the unit
 * (x, y, z): w − (w·n) n with w = the support point of a − b (the gradient of h_a(n) +
 * h_b(−n) in space).
 */
function slope(x: number, y: number, z: number, tx: number, ty: number, tz: number): number {
  const f = overlapAlong(x, y, z);
  const wt = tx * (WAB[0] - WAB[3]) + ty * (WAB[1] - WAB[4]) + tz * (WAB[2] - WAB[5]);
  return wt - f * (x * tx + y * ty + z * tz);
}

/**
 * Refines the GJK/EPA normal (RES[0..2]) by minimizing the overlap h_a(n) + h_b(−n) over
 * unit n, whose gradient is the support point of a − b (exact): EPA's depth converges
 * quadratically faster than its face normals, which on a curved contact are only good to
 * ~1e-5 rad. Candidates, the best kept: 2-D Newton steps with the exact Hessian
 * (newton2D; before the others and again from the best of them); a cylinder's axis ±z (its
 * cap face: a cone point of its support) when n is near it; where n is near a kink circle
 * n ⟂ k (k an axis of a core: the overlap is not differentiable across it), 1-D Newton
 * steps along that circle (finite differences of the gradient); and the crossings of two
 * such circles. Writes PN (normal, overlap).
 */
function polishNormal(): void {
  PN[0] = RES[0];
  PN[1] = RES[1];
  PN[2] = RES[2];
  PN[3] = overlapAlong(PN[0], PN[1], PN[2]);
  const h = 1e-6;
  newton2D();
  // Kink circles near the normal, and their crossings.
  let nk = 0;
  for (let s = 0; s < 2; s++) {
    const o = 9 * s;
    const first = SK[s] === K_BOX ? 0 : 2;
    for (let j = first; j < 3; j++) {
      KAX[3 * nk] = SR[o + j];
      KAX[3 * nk + 1] = SR[o + 3 + j];
      KAX[3 * nk + 2] = SR[o + 6 + j];
      nk++;
    }
  }
  const near = 0.02;
  const n0x = PN[0];
  const n0y = PN[1];
  const n0z = PN[2];
  // A cylinder's support L |n·z| + r |n − (n·z) z| has a cone point at n = ±z (its cap
  // face): near one, try it.
  for (let s = 0; s < 2; s++) {
    if (SK[s] !== K_CYL) continue;
    const o = 9 * s;
    const c = n0x * SR[o + 2] + n0y * SR[o + 5] + n0z * SR[o + 8];
    if (1 - Math.abs(c) > 0.5 * near * near) continue;
    const sg = c > 0 ? 1 : -1;
    PN[4] = sg * SR[o + 2];
    PN[5] = sg * SR[o + 5];
    PN[6] = sg * SR[o + 8];
    tryNormal();
  }
  for (let i = 0; i < nk; i++) {
    const kx = KAX[3 * i];
    const ky = KAX[3 * i + 1];
    const kz = KAX[3 * i + 2];
    const c = n0x * kx + n0y * ky + n0z * kz;
    if (Math.abs(c) > near) continue;
    // Crossings with the other near circles.
    for (let j = i + 1; j < nk; j++) {
      const qx = KAX[3 * j];
      const qy = KAX[3 * j + 1];
      const qz = KAX[3 * j + 2];
      if (Math.abs(n0x * qx + n0y * qy + n0z * qz) > near) continue;
      let x = ky * qz - kz * qy;
      let y = kz * qx - kx * qz;
      let z = kx * qy - ky * qx;
      if (length3(x, y, z) < 1e-9) continue;
      if (x * n0x + y * n0y + z * n0z < 0) {
        x = -x;
        y = -y;
        z = -z;
      }
      PN[4] = x;
      PN[5] = y;
      PN[6] = z;
      tryNormal();
    }
    // Along the circle: u = the normal projected on it, v = k × u.
    let ux = n0x - c * kx;
    let uy = n0y - c * ky;
    let uz = n0z - c * kz;
    const ul = length3(ux, uy, uz);
    ux /= ul;
    uy /= ul;
    uz /= ul;
    const vx = ky * uz - kz * uy;
    const vy = kz * ux - kx * uz;
    const vz = kx * uy - ky * ux;
    let t = 0;
    for (let it = 0; it < 4; it++) {
      const ct = Math.cos(t);
      const st = Math.sin(t);
      const x = ct * ux + st * vx;
      const y = ct * uy + st * vy;
      const z = ct * uz + st * vz;
      PN[4] = x;
      PN[5] = y;
      PN[6] = z;
      tryNormal();
      const tx = -st * ux + ct * vx;
      const ty = -st * uy + ct * vy;
      const tz = -st * uz + ct * vz;
      const g = slope(x, y, z, tx, ty, tz);
      const c2 = Math.cos(t + h);
      const s2 = Math.sin(t + h);
      const g2 = slope(
        c2 * ux + s2 * vx,
        c2 * uy + s2 * vy,
        c2 * uz + s2 * vz,
        -s2 * ux + c2 * vx,
        -s2 * uy + c2 * vy,
        -s2 * uz + c2 * vz,
      );
      const curv = (g2 - g) / h;
      if (!(curv > 0)) break;
      const dt = -g / curv;
      if (!(Math.abs(dt) < 0.1)) break;
      t += dt;
      if (Math.abs(dt) < 1e-13) break;
    }
    const ct = Math.cos(t);
    const st = Math.sin(t);
    PN[4] = ct * ux + st * vx;
    PN[5] = ct * uy + st * vy;
    PN[6] = ct * uz + st * vz;
    tryNormal();
  }
  // From the best candidate (a point near a cone or a circle may still improve).
  newton2D();
}

/** Support segments of projectOnSupport: slot s's ends at SSEG[6s..6s+5]. */
const SSEG = new Float64Array(12);

/**
 * Moves the witness RES[o..o+2] of slot s onto the core's support set in direction d
 * (unit): in the core's frame, a coordinate along which d has a component is set to the
 * supporting side, the others are clamped to the core (for the cylinder: the radial part
 * set to the rim point of d's radial direction, or clamped to the disc). Returns the
 * dimension of the support set (0 point, 1 segment: its ends into SSEG, 2 face).
 */
function projectOnSupport(s: number, dx: number, dy: number, dz: number, o: number): number {
  const r = 9 * s;
  const c = 3 * s;
  const px = RES[o] - SP[c];
  const py = RES[o + 1] - SP[c + 1];
  const pz = RES[o + 2] - SP[c + 2];
  const l = TMP;
  l[0] = SR[r] * px + SR[r + 3] * py + SR[r + 6] * pz;
  l[1] = SR[r + 1] * px + SR[r + 4] * py + SR[r + 7] * pz;
  l[2] = SR[r + 2] * px + SR[r + 5] * py + SR[r + 8] * pz;
  const d0 = SR[r] * dx + SR[r + 3] * dy + SR[r + 6] * dz;
  const d1 = SR[r + 1] * dx + SR[r + 4] * dy + SR[r + 7] * dz;
  const d2 = SR[r + 2] * dx + SR[r + 5] * dy + SR[r + 8] * dz;
  const eps = 1e-9;
  let free = -1;
  let dim = 0;
  if (SK[s] === K_BOX) {
    for (let j = 0; j < 3; j++) {
      const d = j === 0 ? d0 : j === 1 ? d1 : d2;
      const h = SD[c + j];
      if (d > eps) l[j] = h;
      else if (d < -eps) l[j] = -h;
      else {
        l[j] = Math.max(-h, Math.min(h, l[j]));
        free = j;
        dim++;
      }
    }
  } else {
    const axial = SK[s] === K_CYL ? SD[c + 1] : SD[c];
    if (SK[s] === K_CYL) {
      const rad = SD[c];
      const rho = Math.hypot(d0, d1);
      if (rho > eps) {
        l[0] = (rad * d0) / rho;
        l[1] = (rad * d1) / rho;
      } else {
        const q = Math.hypot(l[0], l[1]);
        if (q > rad) {
          l[0] *= rad / q;
          l[1] *= rad / q;
        }
        dim = 2;
      }
    } else {
      l[0] = 0;
      l[1] = 0;
    }
    if (d2 > eps) l[2] = axial;
    else if (d2 < -eps) l[2] = -axial;
    else {
      l[2] = Math.max(-axial, Math.min(axial, l[2]));
      if (dim === 0) {
        dim = 1;
        free = 2;
      } else dim = 2;
    }
  }
  if (dim === 1) {
    const h = free === 2 && SK[s] !== K_BOX ? (SK[s] === K_CYL ? SD[c + 1] : SD[c]) : SD[c + free];
    const keep = l[free];
    l[free] = -h;
    localToWorld(s, l[0], l[1], l[2], SSEG, 6 * s);
    l[free] = h;
    localToWorld(s, l[0], l[1], l[2], SSEG, 6 * s + 3);
    l[free] = keep;
  }
  localToWorld(s, l[0], l[1], l[2], RES, o);
  return dim;
}

/**
 * Places the single contact's witnesses (RES[3..8]) on the support sets along the unit
 * n (a→b) with p_b − p_a = g n: from the side whose support set has the lower dimension
 * (a vertex or rim point over an edge or side line over a face or cap), or, for two
 * segments, at their closest points.
 */
function placeWitnesses(nx: number, ny: number, nz: number): void {
  const da = projectOnSupport(0, nx, ny, nz, 3);
  const db = projectOnSupport(1, -nx, -ny, -nz, 6);
  const g = nx * (RES[6] - RES[3]) + ny * (RES[7] - RES[4]) + nz * (RES[8] - RES[5]);
  if (da === 1 && db === 1) {
    const p1x = SSEG[0];
    const p1y = SSEG[1];
    const p1z = SSEG[2];
    const d1x = SSEG[3] - p1x;
    const d1y = SSEG[4] - p1y;
    const d1z = SSEG[5] - p1z;
    const p2x = SSEG[6];
    const p2y = SSEG[7];
    const p2z = SSEG[8];
    const d2x = SSEG[9] - p2x;
    const d2y = SSEG[10] - p2y;
    const d2z = SSEG[11] - p2z;
    // Closest points of the two segments' projections on the plane ⊥ n (equivalently of
    // the segments, which lie in two parallel planes ⊥ n).
    const a = d1x * d1x + d1y * d1y + d1z * d1z;
    const e = d2x * d2x + d2y * d2y + d2z * d2z;
    const b = d1x * d2x + d1y * d2y + d1z * d2z;
    const rx = p1x - p2x;
    const ry = p1y - p2y;
    const rz = p1z - p2z;
    const c = d1x * rx + d1y * ry + d1z * rz;
    const f = d2x * rx + d2y * ry + d2z * rz;
    const den = a * e - b * b;
    if (den > 1e-12 * a * e) {
      let sp = (b * f - c * e) / den;
      sp = sp < 0 ? 0 : Math.min(sp, 1);
      let tp = (b * sp + f) / e;
      tp = tp < 0 ? 0 : Math.min(tp, 1);
      sp = (b * tp - c) / a;
      sp = sp < 0 ? 0 : Math.min(sp, 1);
      RES[3] = p1x + sp * d1x;
      RES[4] = p1y + sp * d1y;
      RES[5] = p1z + sp * d1z;
      RES[6] = RES[3] + g * nx;
      RES[7] = RES[4] + g * ny;
      RES[8] = RES[5] + g * nz;
      return;
    }
  }
  if (db < da) {
    RES[3] = RES[6] - g * nx;
    RES[4] = RES[7] - g * ny;
    RES[5] = RES[8] - g * nz;
  } else {
    RES[6] = RES[3] + g * nx;
    RES[7] = RES[4] + g * ny;
    RES[8] = RES[5] + g * nz;
  }
}

/** Hessian of the overlap in space (row-major 3×3), summed by addSupportHessian. */
const HS = new Float64Array(9);
/** addSupportHessian's axis z (0..2) and unit radial direction û (3..5). */
const ZU = new Float64Array(6);

/**
 * Adds the Hessian of slot s's support function h(d) at the unit d to HS: 0 for a box or
 * a segment (piecewise linear), and for a cylinder h = L |d·z| + r |d_⊥| (d_⊥ = d −
 * (d·z) z), whose Hessian away from its kinks is (r/|d_⊥|)(I − z zᵀ − û ûᵀ), û = d_⊥/|d_⊥|.
 */
function addSupportHessian(s: number, dx: number, dy: number, dz: number): void {
  if (SK[s] !== K_CYL) return;
  const o = 9 * s;
  const zx = SR[o + 2];
  const zy = SR[o + 5];
  const zz = SR[o + 8];
  const c = dx * zx + dy * zy + dz * zz;
  const px = dx - c * zx;
  const py = dy - c * zy;
  const pz = dz - c * zz;
  const l = length3(px, py, pz);
  if (!(l > 1e-12)) return;
  const k = SD[3 * s] / l;
  ZU[0] = zx;
  ZU[1] = zy;
  ZU[2] = zz;
  ZU[3] = px / l;
  ZU[4] = py / l;
  ZU[5] = pz / l;
  for (let a = 0; a < 3; a++)
    for (let b = 0; b < 3; b++)
      HS[3 * a + b] += k * ((a === b ? 1 : 0) - ZU[a] * ZU[b] - ZU[3 + a] * ZU[3 + b]);
}

/**
 * Newton steps on the overlap F(n) = h_a(n) + h_b(−n) in the tangent plane of PN's normal:
 * gradient from the support points, exact Hessian P (H_a(n) + H_b(−n)) P − F P on the
 * sphere; a step is halved up to 6 times until it lowers the overlap. Where that Hessian
 * is not positive definite (near a cone point its curvature vanishes radially), steepest
 * descent scaled by the largest curvature.
 */
function newton2D(): void {
  for (let it = 0; it < 16; it++) {
    const nx = PN[0];
    const ny = PN[1];
    const nz = PN[2];
    tangentBasis(nx, ny, nz);
    const f = overlapAlong(nx, ny, nz);
    const wx = WAB[0] - WAB[3];
    const wy = WAB[1] - WAB[4];
    const wz = WAB[2] - WAB[5];
    const g1 = wx * TB[0] + wy * TB[1] + wz * TB[2];
    const g2 = wx * TB[3] + wy * TB[4] + wz * TB[5];
    HS.fill(0);
    addSupportHessian(0, nx, ny, nz);
    addSupportHessian(1, -nx, -ny, -nz);
    // e_iᵀ HS e_j − F δ_ij.
    let a11 = -f;
    let a22 = -f;
    let off = 0;
    for (let p = 0; p < 3; p++)
      for (let q = 0; q < 3; q++) {
        const h = HS[3 * p + q];
        a11 += TB[p] * h * TB[q];
        a22 += TB[3 + p] * h * TB[3 + q];
        off += TB[p] * h * TB[3 + q];
      }
    const det = a11 * a22 - off * off;
    let d1: number;
    let d2: number;
    if (a11 > 0 && det > 0) {
      d1 = -(a22 * g1 - off * g2) / det;
      d2 = -(a11 * g2 - off * g1) / det;
    } else {
      const k = Math.max(Math.abs(a11), Math.abs(a22), Math.abs(off), 1e-12);
      d1 = -g1 / k;
      d2 = -g2 / k;
    }
    if (!(Math.abs(d1) + Math.abs(d2) < 0.1)) return;
    if (Math.abs(d1) + Math.abs(d2) < 1e-15) return;
    const before = PN[3];
    for (let half = 0; half < 7 && !(PN[3] < before); half++) {
      PN[4] = nx + d1 * TB[0] + d2 * TB[3];
      PN[5] = ny + d1 * TB[1] + d2 * TB[4];
      PN[6] = nz + d1 * TB[2] + d2 * TB[5];
      tryNormal();
      d1 *= 0.5;
      d2 *= 0.5;
    }
    if (!(PN[3] < before)) return;
  }
}

/** Unit tangents of the unit (x, y, z) into TB. */
function tangentBasis(x: number, y: number, z: number): void {
  let ex: number;
  let ey: number;
  let ez: number;
  if (Math.abs(x) <= Math.abs(y) && Math.abs(x) <= Math.abs(z)) {
    ex = 0;
    ey = z;
    ez = -y;
  } else if (Math.abs(y) <= Math.abs(z)) {
    ex = -z;
    ey = 0;
    ez = x;
  } else {
    ex = y;
    ey = -x;
    ez = 0;
  }
  const l = length3(ex, ey, ez);
  ex /= l;
  ey /= l;
  ez /= l;
  TB[0] = ex;
  TB[1] = ey;
  TB[2] = ez;
  TB[3] = y * ez - z * ey;
  TB[4] = z * ex - x * ez;
  TB[5] = x * ey - y * ex;
}

// ---------------------------------------------------------------------------------------
// Features and manifolds
// ---------------------------------------------------------------------------------------

const F_POINT = 0;
const F_SEG = 1;
const F_POLY = 2;

/** Feature type and code per slot (classify). */
const FT = new Int32Array(2);
const FC = new Int32Array(2);

/**
 * Feature of slot s facing direction d (unit, pointing from s towards the other shape):
 * box face (code 2·axis + (0: +, 1: −)), box edge (code 4·axis + sign bits of the other
 * two axes), cylinder cap (0: −z, 1: +z), cylinder side (0), capsule axis (0), or a point.
 */
function classify(s: number, dx: number, dy: number, dz: number): void {
  const o = 9 * s;
  const c0 = SR[o] * dx + SR[o + 3] * dy + SR[o + 6] * dz;
  const c1 = SR[o + 1] * dx + SR[o + 4] * dy + SR[o + 7] * dz;
  const c2 = SR[o + 2] * dx + SR[o + 5] * dy + SR[o + 8] * dz;
  FT[s] = F_POINT;
  FC[s] = 0;
  const kind = SK[s];
  if (kind === K_BOX) {
    const a0 = Math.abs(c0);
    const a1 = Math.abs(c1);
    const a2 = Math.abs(c2);
    const j = a0 >= a1 && a0 >= a2 ? 0 : a1 >= a2 ? 1 : 2;
    const cj = j === 0 ? c0 : j === 1 ? c1 : c2;
    if (Math.abs(cj) >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = 2 * j + (cj > 0 ? 0 : 1);
      return;
    }
    const m = a0 <= a1 && a0 <= a2 ? 0 : a1 <= a2 ? 1 : 2;
    const am = m === 0 ? a0 : m === 1 ? a1 : a2;
    if (am <= LINE_SIN) {
      const p = (m + 1) % 3;
      const q = (m + 2) % 3;
      const cp = p === 0 ? c0 : p === 1 ? c1 : c2;
      const cq = q === 0 ? c0 : q === 1 ? c1 : c2;
      FT[s] = F_SEG;
      FC[s] = 4 * m + (cp >= 0 ? 1 : 0) + (cq >= 0 ? 2 : 0);
    }
  } else if (kind === K_CYL) {
    if (Math.abs(c2) >= FLUSH_COS) {
      FT[s] = F_POLY;
      FC[s] = c2 > 0 ? 1 : 0;
    } else if (Math.abs(c2) <= LINE_SIN) FT[s] = F_SEG;
  } else if (Math.abs(c2) <= LINE_SIN) FT[s] = F_SEG;
}

/** Polygon of a feature: up to 16 vertices (world), labels, count; normal (outward). */
const POLY_CAP = 16;
const FPOLY = new Float64Array(2 * 3 * POLY_CAP);
const FLAB = new Int32Array(2 * POLY_CAP);
const FCOUNT = new Int32Array(2);
const FNRM = new Float64Array(6);

/** World point of slot s from local coordinates. */
function localToWorld(s: number, x: number, y: number, z: number, out: Float64Array, o: number) {
  const r = 9 * s;
  out[o] = SP[3 * s] + SR[r] * x + SR[r + 1] * y + SR[r + 2] * z;
  out[o + 1] = SP[3 * s + 1] + SR[r + 3] * x + SR[r + 4] * y + SR[r + 5] * z;
  out[o + 2] = SP[3 * s + 2] + SR[r + 6] * x + SR[r + 7] * y + SR[r + 8] * z;
}

const TMP = new Float64Array(3);

/**
 * Builds slot s's polygon feature FC[s] (box face or cylinder cap). For an incident cap,
 * with (tx, ty, tz) the unit direction towards the reference, the rim point furthest
 * along it (the deepest) is inserted (label RIM_SAMPLES) where the samples miss it by more
 * than `tol`.
 */
function buildPolygon(
  s: number,
  incident: boolean,
  tx: number,
  ty: number,
  tz: number,
  tol: number,
) {
  const o = 9 * s;
  const d = 3 * s;
  if (SK[s] === K_BOX) {
    const face = FC[s];
    const j = face >> 1;
    const sg = face & 1 ? -1 : 1;
    const k = (j + 1) % 3;
    const l = (j + 2) % 3;
    for (let q = 0; q < 4; q++) {
      const sk = q === 0 || q === 3 ? 1 : -1;
      const sl = q < 2 ? 1 : -1;
      TMP[j] = sg * SD[d + j];
      TMP[k] = sk * SD[d + k];
      TMP[l] = sl * SD[d + l];
      localToWorld(s, TMP[0], TMP[1], TMP[2], FPOLY, 3 * (s * POLY_CAP + q));
      FLAB[s * POLY_CAP + q] = q;
    }
    FCOUNT[s] = 4;
    FNRM[3 * s] = sg * SR[o + j];
    FNRM[3 * s + 1] = sg * SR[o + 3 + j];
    FNRM[3 * s + 2] = sg * SR[o + 6 + j];
    return;
  }
  const r = SD[d];
  const L = SD[d + 1];
  const zc = FC[s] === 1 ? L : -L;
  const sg = FC[s] === 1 ? 1 : -1;
  FNRM[3 * s] = sg * SR[o + 2];
  FNRM[3 * s + 1] = sg * SR[o + 5];
  FNRM[3 * s + 2] = sg * SR[o + 8];
  // Exact deepest rim point along t (local radial direction of t).
  let insertAt = -1;
  let ex = 0;
  let ey = 0;
  if (incident) {
    const lx = SR[o] * tx + SR[o + 3] * ty + SR[o + 6] * tz;
    const ly = SR[o + 1] * tx + SR[o + 4] * ty + SR[o + 7] * tz;
    const rho = Math.hypot(lx, ly);
    if (rho > 0) {
      ex = lx / rho;
      ey = ly / rho;
      let bestS = Number.NEGATIVE_INFINITY;
      for (let k = 0; k < RIM_SAMPLES; k++)
        bestS = Math.max(bestS, r * rho * (COS_K[k] * ex + SIN_K[k] * ey));
      if (r * rho - bestS > tol) {
        let ang = Math.atan2(ey, ex);
        if (ang < 0) ang += 2 * Math.PI;
        insertAt = Math.min(RIM_SAMPLES - 1, Math.floor((ang * RIM_SAMPLES) / (2 * Math.PI)));
      }
    }
  }
  let n = 0;
  for (let k = 0; k < RIM_SAMPLES; k++) {
    localToWorld(s, r * COS_K[k], r * SIN_K[k], zc, FPOLY, 3 * (s * POLY_CAP + n));
    FLAB[s * POLY_CAP + n] = k;
    n++;
    if (k === insertAt) {
      localToWorld(s, r * ex, r * ey, zc, FPOLY, 3 * (s * POLY_CAP + n));
      FLAB[s * POLY_CAP + n] = RIM_SAMPLES;
      n++;
    }
  }
  FCOUNT[s] = n;
}

/**
 * Builds slot s's segment feature (2 vertices, labels 0: − end, 1: + end) facing the unit
 * direction t (from s towards the other shape).
 */
function buildSegment(s: number, tx: number, ty: number, tz: number): void {
  const o = 9 * s;
  const d = 3 * s;
  const lx = SR[o] * tx + SR[o + 3] * ty + SR[o + 6] * tz;
  const ly = SR[o + 1] * tx + SR[o + 4] * ty + SR[o + 7] * tz;
  if (SK[s] === K_BOX) {
    const m = FC[s] >> 2;
    // The edge of FC (signs of the other two axes from classify).
    const p = (m + 1) % 3;
    const q = (m + 2) % 3;
    TMP[p] = FC[s] & 1 ? SD[d + p] : -SD[d + p];
    TMP[q] = FC[s] & 2 ? SD[d + q] : -SD[d + q];
    for (let e = 0; e < 2; e++) {
      TMP[m] = e === 0 ? -SD[d + m] : SD[d + m];
      localToWorld(s, TMP[0], TMP[1], TMP[2], FPOLY, 3 * (s * POLY_CAP + e));
      FLAB[s * POLY_CAP + e] = e;
    }
  } else if (SK[s] === K_CYL) {
    const r = SD[d];
    const L = SD[d + 1];
    const rho = Math.hypot(lx, ly);
    const ux = rho > 0 ? (r * lx) / rho : r;
    const uy = rho > 0 ? (r * ly) / rho : 0;
    localToWorld(s, ux, uy, -L, FPOLY, 3 * (s * POLY_CAP));
    localToWorld(s, ux, uy, L, FPOLY, 3 * (s * POLY_CAP + 1));
    FLAB[s * POLY_CAP] = 0;
    FLAB[s * POLY_CAP + 1] = 1;
  } else {
    const L = SD[d];
    localToWorld(s, 0, 0, -L, FPOLY, 3 * (s * POLY_CAP));
    localToWorld(s, 0, 0, L, FPOLY, 3 * (s * POLY_CAP + 1));
    FLAB[s * POLY_CAP] = 0;
    FLAB[s * POLY_CAP + 1] = 1;
  }
  FCOUNT[s] = 2;
}

/** Code of a witness point (world) on slot s's core for single contacts (see file comment). */
function pointCode(s: number, x: number, y: number, z: number, scale: number): number {
  const o = 9 * s;
  const dx = x - SP[3 * s];
  const dy = y - SP[3 * s + 1];
  const dz = z - SP[3 * s + 2];
  const l0 = SR[o] * dx + SR[o + 3] * dy + SR[o + 6] * dz;
  const l1 = SR[o + 1] * dx + SR[o + 4] * dy + SR[o + 7] * dz;
  const l2 = SR[o + 2] * dx + SR[o + 5] * dy + SR[o + 8] * dz;
  const tol = 1e-7 * scale;
  const d = 3 * s;
  if (SK[s] === K_BOX) {
    const c0 = l0 > SD[d] - tol ? 2 : l0 < -SD[d] + tol ? 0 : 1;
    const c1 = l1 > SD[d + 1] - tol ? 2 : l1 < -SD[d + 1] + tol ? 0 : 1;
    const c2 = l2 > SD[d + 2] - tol ? 2 : l2 < -SD[d + 2] + tol ? 0 : 1;
    return c0 + 3 * c1 + 9 * c2;
  }
  if (SK[s] === K_CYL) {
    const onSide = Math.hypot(l0, l1) > SD[d] - tol;
    const L = SD[d + 1];
    const cap = l2 > L - tol ? 1 : l2 < -L + tol ? 0 : -1;
    if (cap >= 0) return onSide ? 3 + cap : cap;
    return 2;
  }
  const L = SD[d];
  return l2 > L - tol ? 1 : l2 < -L + tol ? 0 : 2;
}

/** Feature id ranges of the general pairs (all below FEATURE_RANGE = 65536). */
const POINT_RANGE = 27 * 27;
/** Clip labels of polygon–polygon: vertex q (16), edge e ∩ side k (256), side corners (256). */
const CLIP_LABELS = 16 + 256 + 256;
const PP_BASE = POINT_RANGE;
const PS_BASE = PP_BASE + 2 * 6 * 6 * CLIP_LABELS;
/** Labels of a clipped segment: end e kept (0, 1) or cut by side k (2 + 2k + e). */
const SEG_LABELS = 2 + 2 * 16;
const SP_BASE = PS_BASE + 6 * 12 * SEG_LABELS;
const SS_BASE = SP_BASE + 12 * 6 * SEG_LABELS;

/** Clipping scratch: polygons (x, y, z) in the reference frame, vertex and edge labels. */
const CLIP_MAX = 48;
const cpA = new Float64Array(3 * CLIP_MAX);
const cpB = new Float64Array(3 * CLIP_MAX);
const cvA = new Int32Array(CLIP_MAX);
const cvB = new Int32Array(CLIP_MAX);
const ceA = new Int32Array(CLIP_MAX);
const ceB = new Int32Array(CLIP_MAX);
/** Reference side half-planes o·x − off ≤ 0: (ox, oy, off) per side. */
const SIDES = new Float64Array(3 * POLY_CAP);
let sideCount = 0;
/** Reference frame: origin (0..2), u (3..5), v (6..8), m (9..11). */
const FRAME = new Float64Array(12);
const PICK = new Int32Array(CLIP_MAX);

/** Sets FRAME and SIDES from slot s's polygon (normal FNRM[s], towards the incident side). */
function referenceFrame(s: number): void {
  const n = FCOUNT[s];
  const base = 3 * s * POLY_CAP;
  let fx = 0;
  let fy = 0;
  let fz = 0;
  for (let k = 0; k < n; k++) {
    fx += FPOLY[base + 3 * k];
    fy += FPOLY[base + 3 * k + 1];
    fz += FPOLY[base + 3 * k + 2];
  }
  fx /= n;
  fy /= n;
  fz /= n;
  const mx = FNRM[3 * s];
  const my = FNRM[3 * s + 1];
  const mz = FNRM[3 * s + 2];
  let ux = FPOLY[base] - fx;
  let uy = FPOLY[base + 1] - fy;
  let uz = FPOLY[base + 2] - fz;
  const um = ux * mx + uy * my + uz * mz;
  ux -= um * mx;
  uy -= um * my;
  uz -= um * mz;
  const ul = length3(ux, uy, uz);
  ux /= ul;
  uy /= ul;
  uz /= ul;
  FRAME[0] = fx;
  FRAME[1] = fy;
  FRAME[2] = fz;
  FRAME[3] = ux;
  FRAME[4] = uy;
  FRAME[5] = uz;
  FRAME[6] = my * uz - mz * uy;
  FRAME[7] = mz * ux - mx * uz;
  FRAME[8] = mx * uy - my * ux;
  FRAME[9] = mx;
  FRAME[10] = my;
  FRAME[11] = mz;
  sideCount = n;
  for (let k = 0; k < n; k++) {
    const p = base + 3 * k;
    const q = base + 3 * ((k + 1) % n);
    const px = (FPOLY[p] - fx) * ux + (FPOLY[p + 1] - fy) * uy + (FPOLY[p + 2] - fz) * uz;
    const py =
      (FPOLY[p] - fx) * FRAME[6] + (FPOLY[p + 1] - fy) * FRAME[7] + (FPOLY[p + 2] - fz) * FRAME[8];
    const qx = (FPOLY[q] - fx) * ux + (FPOLY[q + 1] - fy) * uy + (FPOLY[q + 2] - fz) * uz;
    const qy =
      (FPOLY[q] - fx) * FRAME[6] + (FPOLY[q + 1] - fy) * FRAME[7] + (FPOLY[q + 2] - fz) * FRAME[8];
    let ox = qy - py;
    let oy = px - qx;
    const ol = Math.hypot(ox, oy);
    ox /= ol;
    oy /= ol;
    if (ox * px + oy * py < 0) {
      ox = -ox;
      oy = -oy;
    }
    SIDES[3 * k] = ox;
    SIDES[3 * k + 1] = oy;
    SIDES[3 * k + 2] = ox * px + oy * py;
  }
}

/** Coordinates of a world point in FRAME into TMP. */
function toFrame(x: number, y: number, z: number): void {
  const dx = x - FRAME[0];
  const dy = y - FRAME[1];
  const dz = z - FRAME[2];
  TMP[0] = dx * FRAME[3] + dy * FRAME[4] + dz * FRAME[5];
  TMP[1] = dx * FRAME[6] + dy * FRAME[7] + dz * FRAME[8];
  TMP[2] = dx * FRAME[9] + dy * FRAME[10] + dz * FRAME[11];
}

/** Running minimum gap of the manifold being pushed. */
let manifoldMin = Number.POSITIVE_INFINITY;

/**
 * Pushes a manifold point given in FRAME coordinates (x, y, core height z of the incident
 * feature above the reference plane): gap = z − rad, point midway. `cn` = +1 when the
 * reference belongs to a (normal = m), −1 when to b (normal = −m).
 */
function pushFramePoint(
  out: ContactBuffer,
  x: number,
  y: number,
  z: number,
  rad: number,
  cn: number,
  feature: number,
): void {
  const gap = z - rad;
  const hz = 0.5 * gap;
  CONTACT[0] = FRAME[0] + x * FRAME[3] + y * FRAME[6] + hz * FRAME[9];
  CONTACT[1] = FRAME[1] + x * FRAME[4] + y * FRAME[7] + hz * FRAME[10];
  CONTACT[2] = FRAME[2] + x * FRAME[5] + y * FRAME[8] + hz * FRAME[11];
  CONTACT[3] = cn * FRAME[9];
  CONTACT[4] = cn * FRAME[10];
  CONTACT[5] = cn * FRAME[11];
  CONTACT[6] = gap;
  out.pushFrom(CONTACT, feature);
  if (gap < manifoldMin) manifoldMin = gap;
}

/**
 * Polygon–polygon: the incident polygon of slot `inc` clipped against the reference
 * polygon of slot `ref` (FRAME, SIDES set). Pushes the points below the margin.
 */
function clipPolygons(inc: number, margin: number, cn: number, base: number, out: ContactBuffer) {
  let n = FCOUNT[inc];
  const ib = 3 * inc * POLY_CAP;
  for (let q = 0; q < n; q++) {
    toFrame(FPOLY[ib + 3 * q], FPOLY[ib + 3 * q + 1], FPOLY[ib + 3 * q + 2]);
    cpA[3 * q] = TMP[0];
    cpA[3 * q + 1] = TMP[1];
    cpA[3 * q + 2] = TMP[2];
    cvA[q] = FLAB[inc * POLY_CAP + q];
    ceA[q] = FLAB[inc * POLY_CAP + q];
  }
  let src = cpA;
  let dst = cpB;
  let srcV = cvA;
  let dstV = cvB;
  let srcE = ceA;
  let dstE = ceB;
  for (let k = 0; k < sideCount && n > 0; k++) {
    const ox = SIDES[3 * k];
    const oy = SIDES[3 * k + 1];
    const off = SIDES[3 * k + 2];
    let m = 0;
    for (let p = 0; p < n; p++) {
      const q = p + 1 === n ? 0 : p + 1;
      const fp = ox * src[3 * p] + oy * src[3 * p + 1] - off;
      const fq = ox * src[3 * q] + oy * src[3 * q + 1] - off;
      const inP = fp <= 0;
      const inQ = fq <= 0;
      if (inP && m < CLIP_MAX) {
        dst[3 * m] = src[3 * p];
        dst[3 * m + 1] = src[3 * p + 1];
        dst[3 * m + 2] = src[3 * p + 2];
        dstV[m] = srcV[p];
        dstE[m] = srcE[p];
        m++;
      }
      if (inP !== inQ && m < CLIP_MAX) {
        const t = fp / (fp - fq);
        dst[3 * m] = src[3 * p] + t * (src[3 * q] - src[3 * p]);
        dst[3 * m + 1] = src[3 * p + 1] + t * (src[3 * q + 1] - src[3 * p + 1]);
        dst[3 * m + 2] = src[3 * p + 2] + t * (src[3 * q + 2] - src[3 * p + 2]);
        const e = srcE[p];
        dstV[m] = e < 16 ? 16 + 16 * e + k : 272 + 16 * (e - 16) + k;
        dstE[m] = inP ? 16 + k : e;
        m++;
      }
    }
    n = m;
    const t0 = src;
    src = dst;
    dst = t0;
    const t1 = srcV;
    srcV = dstV;
    dstV = t1;
    const t2 = srcE;
    srcE = dstE;
    dstE = t2;
  }
  let m = 0;
  for (let p = 0; p < n; p++) if (src[3 * p + 2] < margin) PICK[m++] = p;
  if (m > MAX_MANIFOLD) m = spread(src, m);
  for (let r = 0; r < m; r++) {
    const p = PICK[r];
    pushFramePoint(out, src[3 * p], src[3 * p + 1], src[3 * p + 2], 0, cn, base + srcV[p]);
  }
}

/**
 * Keeps MAX_MANIFOLD of the m points PICK[0..m−1]: the deepest, then repeatedly the one
 * farthest (in the plane) from those kept. Returns MAX_MANIFOLD.
 */
function spread(poly: Float64Array, m: number): number {
  let best = 0;
  for (let r = 1; r < m; r++) if (poly[3 * PICK[r] + 2] < poly[3 * PICK[best] + 2]) best = r;
  swapPick(0, best);
  for (let c = 1; c < MAX_MANIFOLD; c++) {
    let bi = c;
    let bd = -1;
    for (let r = c; r < m; r++) {
      const p = PICK[r];
      let dmin = Number.POSITIVE_INFINITY;
      for (let q = 0; q < c; q++) {
        const o = PICK[q];
        const d = (poly[3 * p] - poly[3 * o]) ** 2 + (poly[3 * p + 1] - poly[3 * o + 1]) ** 2;
        if (d < dmin) dmin = d;
      }
      if (dmin > bd) {
        bd = dmin;
        bi = r;
      }
    }
    swapPick(c, bi);
  }
  return MAX_MANIFOLD;
}

function swapPick(i: number, j: number): void {
  const t = PICK[i];
  PICK[i] = PICK[j];
  PICK[j] = t;
}

/** Polygon–segment: the segment of slot `seg` (radius rad) clipped to the reference polygon. */
function clipSegment(
  seg: number,
  rad: number,
  margin: number,
  cn: number,
  base: number,
  out: ContactBuffer,
): void {
  const b = 3 * seg * POLY_CAP;
  toFrame(FPOLY[b], FPOLY[b + 1], FPOLY[b + 2]);
  const x0 = TMP[0];
  const y0 = TMP[1];
  const z0 = TMP[2];
  toFrame(FPOLY[b + 3], FPOLY[b + 4], FPOLY[b + 5]);
  const x1 = TMP[0];
  const y1 = TMP[1];
  const z1 = TMP[2];
  let t0 = 0;
  let t1 = 1;
  let cut0 = -1;
  let cut1 = -1;
  for (let k = 0; k < sideCount; k++) {
    const ox = SIDES[3 * k];
    const oy = SIDES[3 * k + 1];
    const off = SIDES[3 * k + 2];
    const f0 = ox * x0 + oy * y0 - off;
    const f1 = ox * x1 + oy * y1 - off;
    if (f0 > 0 && f1 > 0) return;
    if (f0 > 0) {
      const t = f0 / (f0 - f1);
      if (t > t0) {
        t0 = t;
        cut0 = k;
      }
    } else if (f1 > 0) {
      const t = f0 / (f0 - f1);
      if (t < t1) {
        t1 = t;
        cut1 = k;
      }
    }
  }
  if (!(t1 >= t0)) return;
  const single = t1 - t0 <= 1e-9;
  for (let e = 0; e < (single ? 1 : 2); e++) {
    const t = e === 0 ? t0 : t1;
    const z = z0 + t * (z1 - z0);
    if (!(z - rad < margin)) continue;
    const cut = e === 0 ? cut0 : cut1;
    const label = cut < 0 ? e : 2 + 2 * cut + e;
    pushFramePoint(out, x0 + t * (x1 - x0), y0 + t * (y1 - y0), z, rad, cn, base + label);
  }
}

/** Entry parameter of rayIntoCylinder. */
let rayEntry = 0;

/**
 * Where the line p + s n (n unit) enters slot s's solid cylinder: the largest of the entry
 * parameters into the infinite side and into the slab between the caps, if below the
 * smallest exit; into rayEntry. Returns false when the line misses the cylinder.
 */
function rayIntoCylinder(
  s: number,
  px: number,
  py: number,
  pz: number,
  nx: number,
  ny: number,
  nz: number,
): boolean {
  const o = 9 * s;
  const dx = px - SP[3 * s];
  const dy = py - SP[3 * s + 1];
  const dz = pz - SP[3 * s + 2];
  const l0 = SR[o] * dx + SR[o + 3] * dy + SR[o + 6] * dz;
  const l1 = SR[o + 1] * dx + SR[o + 4] * dy + SR[o + 7] * dz;
  const l2 = SR[o + 2] * dx + SR[o + 5] * dy + SR[o + 8] * dz;
  const m0 = SR[o] * nx + SR[o + 3] * ny + SR[o + 6] * nz;
  const m1 = SR[o + 1] * nx + SR[o + 4] * ny + SR[o + 7] * nz;
  const m2 = SR[o + 2] * nx + SR[o + 5] * ny + SR[o + 8] * nz;
  const r = SD[3 * s];
  // The caps a hair outwards: an overlap end lies on b's cap plane when a's support
  // segment reaches past b's (the line then runs in that plane).
  const L = SD[3 * s + 1] * (1 + 1e-9);
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  // Side: |(l0, l1) + s (m0, m1)|² ≤ r².
  const A = m0 * m0 + m1 * m1;
  const B = l0 * m0 + l1 * m1;
  const C = l0 * l0 + l1 * l1 - r * r;
  if (A > 0) {
    const disc = B * B - A * C;
    if (!(disc >= 0)) return false;
    const q = Math.sqrt(disc);
    lo = (-B - q) / A;
    hi = (-B + q) / A;
  } else if (C > 0) return false;
  // Slab: |l2 + s m2| ≤ L.
  if (m2 !== 0) {
    const a = (-L - l2) / m2;
    const b = (L - l2) / m2;
    lo = Math.max(lo, Math.min(a, b));
    hi = Math.min(hi, Math.max(a, b));
  } else if (Math.abs(l2) > L) return false;
  if (!(lo <= hi)) return false;
  rayEntry = lo;
  return true;
}

/**
 * Segment–segment (normal (nx, ny, nz) a→b; b the cylinder), when parallel within
 * PARALLEL_SIN and overlapping: at each end of the overlap of a's support segment (on a's
 * surface: a box edge, or the side line of a capsule or cylinder along n) with b's, the
 * point p_a there and where the line p_a + s n enters b (on b's surface): gap = s, so that
 * p_b − p_a = gap n exactly; the exact line distance for parallel axes, the height of b's
 * surface along n at that station for slightly skewed ones. Returns false otherwise.
 */
function parallelSegments(
  nx: number,
  ny: number,
  nz: number,
  margin: number,
  base: number,
  scale: number,
  out: ContactBuffer,
): boolean {
  const A = 0;
  const B = 3 * POLY_CAP;
  const ra = SRAD[0];
  // a's support segment on its surface (a capsule's axis moved out by its radius).
  const a0x = FPOLY[A] + ra * nx;
  const a0y = FPOLY[A + 1] + ra * ny;
  const a0z = FPOLY[A + 2] + ra * nz;
  let dax = FPOLY[A + 3] - FPOLY[A];
  let day = FPOLY[A + 4] - FPOLY[A + 1];
  let daz = FPOLY[A + 5] - FPOLY[A + 2];
  const la = length3(dax, day, daz);
  const b0x = FPOLY[B];
  const b0y = FPOLY[B + 1];
  const b0z = FPOLY[B + 2];
  let dbx = FPOLY[B + 3] - b0x;
  let dby = FPOLY[B + 4] - b0y;
  let dbz = FPOLY[B + 5] - b0z;
  const lb = length3(dbx, dby, dbz);
  if (!(la > 0 && lb > 0) || SK[1] !== K_CYL) return false;
  dax /= la;
  day /= la;
  daz /= la;
  dbx /= lb;
  dby /= lb;
  dbz /= lb;
  const sx = day * dbz - daz * dby;
  const sy = daz * dbx - dax * dbz;
  const sz = dax * dby - day * dbx;
  if (length3(sx, sy, sz) > PARALLEL_SIN) return false;
  const tb0 = (b0x - a0x) * dax + (b0y - a0y) * day + (b0z - a0z) * daz;
  const tb1 = tb0 + lb * (dbx * dax + dby * day + dbz * daz);
  const lo = Math.max(0, Math.min(tb0, tb1));
  const hi = Math.min(la, Math.max(tb0, tb1));
  if (!(hi - lo > 1e-9 * scale)) return false;
  for (let e = 0; e < 2; e++) {
    const t = e === 0 ? lo : hi;
    const px = a0x + t * dax;
    const py = a0y + t * day;
    const pz = a0z + t * daz;
    if (!rayIntoCylinder(1, px, py, pz, nx, ny, nz)) continue;
    const gap = rayEntry;
    if (!(gap < margin)) continue;
    pushFromA(out, px, py, pz, nx, ny, nz, gap, base + e);
    if (gap < manifoldMin) manifoldMin = gap;
  }
  return true;
}

/** Separation of the cores along the unit direction m (a→b): min_b m·b − max_a m·a. */
function separationAlong(mx: number, my: number, mz: number): number {
  support(0, mx, my, mz);
  const ha = mx * SUP[0] + my * SUP[1] + mz * SUP[2];
  support(1, -mx, -my, -mz);
  return mx * SUP[0] + my * SUP[1] + mz * SUP[2] - ha;
}

/** Area of slot s's polygon feature (for the reference choice between parallel faces). */
function polygonArea(s: number): number {
  const d = 3 * s;
  if (SK[s] === K_CYL) return Math.PI * SD[d] * SD[d];
  const j = FC[s] >> 1;
  return 4 * SD[d + ((j + 1) % 3)] * SD[d + ((j + 2) % 3)];
}

/**
 * Contacts of the cores in slots 0 (a) and 1 (b), radii SRAD added (see the file comment).
 */
function convexPair(margin: number, out: ContactBuffer): void {
  const ra = SRAD[0];
  const rb = SRAD[1];
  const Ra = coreRadius(0);
  const Rb = coreRadius(1);
  const dcx = SP[3] - SP[0];
  const dcy = SP[4] - SP[1];
  const dcz = SP[5] - SP[2];
  const reach = margin + ra + rb;
  if (length3(dcx, dcy, dcz) - Ra - Rb >= reach) return;
  const scale = Ra + Rb;
  let status = gjk(scale, reach);
  if (status === GJK_FAR) return;
  // GJK converges slowly where curved surfaces (nearly) touch, and may stop on rounding
  // with a tiny v of meaningless direction: its normal must separate by its distance,
  // else EPA (which also handles the origin just outside its polytope: a signed result).
  let separation = 1e-10 * scale;
  if (status === GJK_SEPARATED && -overlapAlong(RES[0], RES[1], RES[2]) < RES[9] - 1e-7 * scale) {
    status = GJK_OVERLAP;
    separation = RES[9];
  }
  let outcome = status === GJK_OVERLAP ? epa(scale, separation) : EPA_OK;
  if (outcome !== EPA_OK) {
    // Fallback: b dilated by a small ball puts the origin strictly inside a − b when the
    // shapes nearly touch, where EPA is reliable; the dilation does not move the normal.
    // The better of the two normals (least overlap of the true shapes) is kept.
    let keep = Number.POSITIVE_INFINITY;
    if (outcome === EPA_ROUGH) {
      keep = overlapAlong(RES[0], RES[1], RES[2]);
      for (let k = 0; k < 10; k++) SAVE[k] = RES[k];
    }
    inflate = 1e-3 * scale;
    const st2 = gjk(scale, reach + inflate);
    outcome =
      st2 === GJK_OVERLAP ? epa(scale, 1e-10 * scale) : st2 === GJK_SEPARATED ? EPA_OK : EPA_FAILED;
    inflate = 0;
    const got =
      outcome === EPA_FAILED ? Number.POSITIVE_INFINITY : overlapAlong(RES[0], RES[1], RES[2]);
    if (keep < got) for (let k = 0; k < 10; k++) RES[k] = SAVE[k];
    else if (!(got < Number.POSITIVE_INFINITY)) {
      // Flat Minkowski difference (cannot happen with a cylinder of positive size): touch
      // along the centre line.
      const l = length3(dcx, dcy, dcz);
      RES[0] = l > 0 ? dcx / l : 0;
      RES[1] = l > 0 ? dcy / l : 0;
      RES[2] = l > 0 ? dcz / l : 1;
      for (let k = 0; k < 3; k++) RES[3 + k] = RES[6 + k] = SP[k] + 0.5 * (SP[3 + k] - SP[k]);
    }
  }
  // The polished normal; the witnesses moved onto the support sets along it (on the
  // surfaces and their supporting planes), so that the core gap is exactly the
  // separation along the reported normal.
  polishNormal();
  const nx = PN[0];
  const ny = PN[1];
  const nz = PN[2];
  placeWitnesses(nx, ny, nz);
  RES[9] = -PN[3];
  const gap0 = RES[9] - ra - rb;
  if (!(gap0 < margin)) return;
  const start = out.count;
  manifoldMin = Number.POSITIVE_INFINITY;
  classify(0, nx, ny, nz);
  classify(1, -nx, -ny, -nz);
  const ta = FT[0];
  const tb = FT[1];
  const tolNet = 1e-7 * scale;
  if (ta !== F_POINT && tb !== F_POINT) {
    if (ta === F_POLY && tb === F_POLY) {
      buildPolygon(0, false, 0, 0, 0, 0);
      buildPolygon(1, false, 0, 0, 0, 0);
      const sepA = separationAlong(FNRM[0], FNRM[1], FNRM[2]);
      const sepB = separationAlong(-FNRM[3], -FNRM[4], -FNRM[5]);
      const par = -(FNRM[0] * FNRM[3] + FNRM[1] * FNRM[4] + FNRM[2] * FNRM[5]);
      let useB: boolean;
      if (par > 0.9995) useB = polygonArea(1) > polygonArea(0) * (1 + 1e-9);
      else useB = sepB > sepA + 0.02 * Math.abs(sepA) + 1e-5 * scale;
      const ref = useB ? 1 : 0;
      const inc = 1 - ref;
      if (!goodReference(useB ? sepB : sepA, scale)) {
        single(margin, out, scale);
        return;
      }
      // The incident polygon rebuilt with its exact deepest rim point towards the reference.
      const m = 3 * ref;
      buildPolygon(inc, true, -FNRM[m], -FNRM[m + 1], -FNRM[m + 2], tolNet);
      referenceFrame(ref);
      const base = PP_BASE + ((ref * 6 + FC[0]) * 6 + FC[1]) * CLIP_LABELS;
      clipPolygons(inc, margin, ref === 0 ? 1 : -1, base, out);
    } else if (ta === F_POLY) {
      buildPolygon(0, false, 0, 0, 0, 0);
      if (!goodReference(separationAlong(FNRM[0], FNRM[1], FNRM[2]), scale)) {
        single(margin, out, scale);
        return;
      }
      buildSegment(1, -FNRM[0], -FNRM[1], -FNRM[2]);
      referenceFrame(0);
      clipSegment(1, rb, margin, 1, PS_BASE + (FC[0] * 12 + FC[1]) * SEG_LABELS, out);
    } else if (tb === F_POLY) {
      buildPolygon(1, false, 0, 0, 0, 0);
      if (!goodReference(separationAlong(-FNRM[3], -FNRM[4], -FNRM[5]), scale)) {
        single(margin, out, scale);
        return;
      }
      buildSegment(0, -FNRM[3], -FNRM[4], -FNRM[5]);
      referenceFrame(1);
      clipSegment(0, ra, margin, -1, SP_BASE + (FC[0] * 6 + FC[1]) * SEG_LABELS, out);
    } else {
      buildSegment(0, nx, ny, nz);
      buildSegment(1, -nx, -ny, -nz);
      parallelSegments(nx, ny, nz, margin, SS_BASE + (FC[0] * 12 + FC[1]) * 2, scale, out);
    }
  }
  if (out.count > start && !(gap0 < manifoldMin - tolNet)) return;
  // The single GJK/EPA contact (alone, or where the manifold misses the deepest point).
  single(margin, out, scale);
}

/**
 * Whether a polygon's normal, separating the cores by `sep` (the separation along it),
 * may carry a clipped manifold: it must separate nearly as well as the optimum −PN[3]
 * (within 5 % and 1e-5 of the size, as box–box prefers faces over edges); otherwise the
 * contact is really at the polygon's boundary (a rim or an edge) and the single contact
 * is kept.
 */
function goodReference(sep: number, scale: number): boolean {
  const best = -PN[3];
  return sep >= best - 0.05 * Math.abs(best) - 1e-5 * scale;
}

/** Pushes the single GJK/EPA contact (RES, PN) when below the margin. */
function single(margin: number, out: ContactBuffer, scale: number): void {
  const ra = SRAD[0];
  const gap = RES[9] - ra - SRAD[1];
  if (!(gap < margin)) return;
  const nx = PN[0];
  const ny = PN[1];
  const nz = PN[2];
  const code =
    27 * pointCode(0, RES[3], RES[4], RES[5], scale) + pointCode(1, RES[6], RES[7], RES[8], scale);
  pushFromA(out, RES[3] + ra * nx, RES[4] + ra * ny, RES[5] + ra * nz, nx, ny, nz, gap, code);
}

// ---------------------------------------------------------------------------------------
// Pair functions
// ---------------------------------------------------------------------------------------

/** Box–cylinder (general method of the file comment). */
export function boxCylinder(
  a: BoxShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const h = a.halfExtents;
  setSlot(0, K_BOX, pa, h[0], h[1], h[2]);
  setSlot(1, K_CYL, pb, b.radius, b.halfLength, 0);
  SRAD[0] = 0;
  SRAD[1] = 0;
  convexPair(margin, out);
}

/** Capsule–cylinder: the capsule's axis segment as core, its radius added. */
export function capsuleCylinder(
  a: CapsuleShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  setSlot(0, K_SEG, pa, a.halfLength, 0, 0);
  setSlot(1, K_CYL, pb, b.radius, b.halfLength, 0);
  SRAD[0] = a.radius;
  SRAD[1] = 0;
  convexPair(margin, out);
}

/** Cylinder–cylinder (general method of the file comment). */
export function cylinderCylinder(
  a: CylinderShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  setSlot(0, K_CYL, pa, a.radius, a.halfLength, 0);
  setSlot(1, K_CYL, pb, b.radius, b.halfLength, 0);
  SRAD[0] = 0;
  SRAD[1] = 0;
  convexPair(margin, out);
}
