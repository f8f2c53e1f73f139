import { crossLeastAxis } from "../helpers";
/**
 * Polish of the contact normal of two convex cores by minimizing their overlap
 * F(n) = h_a(n) + h_b(−n) over unit n (h the support functions): the separating direction
 * of largest separation, −F(n) being the separation along n.
 *
 * EPA's depth converges much faster than its face normals, which on a curved contact are
 * only good to ~1e-5 rad; F's gradient in space is exact and cheap (the support point
 * w = s_a(n) − s_b(−n) of a − b), and so, where a core's support function is smooth, is
 * its Hessian (ConvexSupport.addSupportHessian). Candidates, the best kept:
 *  - 2-D Newton steps on the sphere (newton2D), before the others and again from the best
 *    of them;
 *  - a cone point ±k of a core's support function (a cylinder's cap) near n;
 *  - along a nearby kink circle n ⟂ k (k an axis where a support function is not
 *    differentiable: a box, cylinder or capsule axis), 1-D Newton steps (finite
 *    differences of the gradient), and the crossings of two such circles.
 */

import { PERP } from "../helpers";
import { RES } from "./gjk";
import { ALONG, type ConvexSupport, overlapAlong, WAB } from "./support";

/** Polished normal (0..2) and its overlap F (3); trial direction (4..6). */
export const PN = new Float64Array(7);

/**
 * The normal n0 the cone points and kink circles are tried near (0..2); tryNormal's unit
 * direction (3..5); slope's unit direction n (6..8), tangent t (9..11) and result (12);
 * newton2D's −n (13..15).
 */
const NS = new Float64Array(16);

/** Kink axes of the two cores (at most 3 each). */
const KAX = new Float64Array(18);
/** Cone axes of the two cores (at most 1 each). */
const CAX = new Float64Array(6);
/** Tangent basis e1 (0..2), e2 (3..5). */
const TB = new Float64Array(6);
/** Hessian of the overlap in space (row-major 3×3). */
const HS = new Float64Array(9);

/** Angular distance (rad, about) within which cone points and kink circles are tried. */
const NEAR = 0.02;

/**
 * Refines the GJK/EPA normal (RES[0..2]) of the cores a and b (see the file comment).
 * Writes PN (normal, overlap).
 */
export function polishNormal(a: ConvexSupport, b: ConvexSupport): void {
  PN[0] = RES[0];
  PN[1] = RES[1];
  PN[2] = RES[2];
  overlapAlong(a, b, PN, 0);
  PN[3] = ALONG[0];
  newton2D(a, b);
  const n0x = PN[0];
  const n0y = PN[1];
  const n0z = PN[2];
  NS[0] = n0x;
  NS[1] = n0y;
  NS[2] = n0z;
  // A cylinder's support L |n·z| + r |n − (n·z) z| has a cone point at n = ±z (its cap
  // face): near one, try it.
  let nc = a.coneAxes(CAX, 0);
  nc += b.coneAxes(CAX, nc);
  for (let i = 0; i < nc; i++) {
    const zx = CAX[3 * i];
    const zy = CAX[3 * i + 1];
    const zz = CAX[3 * i + 2];
    const c = n0x * zx + n0y * zy + n0z * zz;
    if (1 - Math.abs(c) > 0.5 * NEAR * NEAR) continue;
    const sg = c > 0 ? 1 : -1;
    PN[4] = sg * zx;
    PN[5] = sg * zy;
    PN[6] = sg * zz;
    tryNormal(a, b);
  }
  // Kink circles near the normal, and their crossings.
  let nk = a.kinkAxes(KAX, 0);
  nk += b.kinkAxes(KAX, nk);
  for (let i = 0; i < nk; i++) {
    const kx = KAX[3 * i];
    const ky = KAX[3 * i + 1];
    const kz = KAX[3 * i + 2];
    const c = n0x * kx + n0y * ky + n0z * kz;
    if (Math.abs(c) > NEAR) continue;
    for (let j = i + 1; j < nk; j++) tryCrossing(a, b, i, j);
    alongCircle(a, b, i);
  }
  // From the best candidate (a point near a cone or a circle may still improve).
  newton2D(a, b);
}

/**
 * Tries the crossing of the kink circles of axes KAX[i] and KAX[j] nearest to n0 (NS[0..2]),
 * ±k_i × k_j, when the second circle is near n0 too.
 */
function tryCrossing(a: ConvexSupport, b: ConvexSupport, i: number, j: number): void {
  const n0x = NS[0];
  const n0y = NS[1];
  const n0z = NS[2];
  const kx = KAX[3 * i];
  const ky = KAX[3 * i + 1];
  const kz = KAX[3 * i + 2];
  const qx = KAX[3 * j];
  const qy = KAX[3 * j + 1];
  const qz = KAX[3 * j + 2];
  if (Math.abs(n0x * qx + n0y * qy + n0z * qz) > NEAR) return;
  let x = ky * qz - kz * qy;
  let y = kz * qx - kx * qz;
  let z = kx * qy - ky * qx;
  if (Math.sqrt(x * x + y * y + z * z) < 1e-9) return;
  if (x * n0x + y * n0y + z * n0z < 0) {
    x = -x;
    y = -y;
    z = -z;
  }
  PN[4] = x;
  PN[5] = y;
  PN[6] = z;
  tryNormal(a, b);
}

/**
 * 1-D Newton steps along the kink circle n ⟂ k (k = KAX[i], unit; c = n0·k, n0 = NS[0..2]):
 * n(t) = cos t u + sin t v with u the projection of n0 on the circle and v = k × u; F'(t)
 * from the gradient (slope), F''(t) by a forward difference of it (step 1e-6), at most 4
 * steps each below 0.1 rad. Every point visited is tried.
 */
function alongCircle(a: ConvexSupport, b: ConvexSupport, i: number): void {
  const n0x = NS[0];
  const n0y = NS[1];
  const n0z = NS[2];
  const kx = KAX[3 * i];
  const ky = KAX[3 * i + 1];
  const kz = KAX[3 * i + 2];
  const c = n0x * kx + n0y * ky + n0z * kz;
  const h = 1e-6;
  let ux = n0x - c * kx;
  let uy = n0y - c * ky;
  let uz = n0z - c * kz;
  const ul = Math.sqrt(ux * ux + uy * uy + uz * uz);
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
    tryNormal(a, b);
    NS[6] = x;
    NS[7] = y;
    NS[8] = z;
    NS[9] = -st * ux + ct * vx;
    NS[10] = -st * uy + ct * vy;
    NS[11] = -st * uz + ct * vz;
    slope(a, b);
    const g = NS[12];
    const c2 = Math.cos(t + h);
    const s2 = Math.sin(t + h);
    NS[6] = c2 * ux + s2 * vx;
    NS[7] = c2 * uy + s2 * vy;
    NS[8] = c2 * uz + s2 * vz;
    NS[9] = -s2 * ux + c2 * vx;
    NS[10] = -s2 * uy + c2 * vy;
    NS[11] = -s2 * uz + c2 * vz;
    slope(a, b);
    const g2 = NS[12];
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
  tryNormal(a, b);
}

/** Tries the (not necessarily unit) direction PN[4..6]; keeps it when it lowers the overlap. */
function tryNormal(a: ConvexSupport, b: ConvexSupport): void {
  const l = Math.sqrt(PN[4] * PN[4] + PN[5] * PN[5] + PN[6] * PN[6]);
  const x = PN[4] / l;
  const y = PN[5] / l;
  const z = PN[6] / l;
  NS[3] = x;
  NS[4] = y;
  NS[5] = z;
  overlapAlong(a, b, NS, 3);
  const f = ALONG[0];
  if (f < PN[3]) {
    PN[0] = x;
    PN[1] = y;
    PN[2] = z;
    PN[3] = f;
  }
}

/**
 * Component along t = NS[9..11] of the overlap's gradient on the unit sphere at the unit
 * n = NS[6..8]: w − (w·n) n with w = the support point of a − b (the gradient of h_a(n) +
 * h_b(−n) in space); into NS[12].
 */
function slope(a: ConvexSupport, b: ConvexSupport): void {
  const x = NS[6];
  const y = NS[7];
  const z = NS[8];
  const tx = NS[9];
  const ty = NS[10];
  const tz = NS[11];
  overlapAlong(a, b, NS, 6);
  const f = ALONG[0];
  const wt = tx * (WAB[0] - WAB[3]) + ty * (WAB[1] - WAB[4]) + tz * (WAB[2] - WAB[5]);
  NS[12] = wt - f * (x * tx + y * ty + z * tz);
}

/**
 * Newton steps on the overlap F(n) = h_a(n) + h_b(−n) in the tangent plane of PN's normal:
 * gradient from the support points, exact Hessian P (H_a(n) + H_b(−n)) P − F P on the
 * sphere; a step is halved up to 6 times until it lowers the overlap. Where that Hessian
 * is not positive definite (near a cone point its curvature vanishes radially), steepest
 * descent scaled by the largest curvature.
 */
function newton2D(a: ConvexSupport, b: ConvexSupport): void {
  for (let it = 0; it < 16; it++) {
    const nx = PN[0];
    const ny = PN[1];
    const nz = PN[2];
    tangentBasis();
    overlapAlong(a, b, PN, 0);
    const f = ALONG[0];
    const wx = WAB[0] - WAB[3];
    const wy = WAB[1] - WAB[4];
    const wz = WAB[2] - WAB[5];
    const g1 = wx * TB[0] + wy * TB[1] + wz * TB[2];
    const g2 = wx * TB[3] + wy * TB[4] + wz * TB[5];
    HS.fill(0);
    NS[13] = -nx;
    NS[14] = -ny;
    NS[15] = -nz;
    a.addSupportHessian(PN, 0, HS);
    b.addSupportHessian(NS, 13, HS);
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
      tryNormal(a, b);
      d1 *= 0.5;
      d2 *= 0.5;
    }
    if (!(PN[3] < before)) return;
  }
}

/** Unit tangents e1 = normalize(n × e_k), e2 = n × e1 of the unit n = PN[0..2] into TB. */
function tangentBasis(): void {
  const x = PN[0];
  const y = PN[1];
  const z = PN[2];
  crossLeastAxis(PN, 0);
  let ex = PERP[0];
  let ey = PERP[1];
  let ez = PERP[2];
  const l = Math.sqrt(ex * ex + ey * ey + ez * ez);
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
