/**
 * Capsule pairs in closed form: plane–capsule, capsule–sphere and capsule–capsule. A
 * capsule is the ball of radius r swept along its core segment, from (0, 0, −L) to
 * (0, 0, +L) in its frame (axis z): against a sphere or another capsule the contact is
 * that of two balls at the closest points of the cores (roundCores).
 */

import { copy3 } from "../../math/vec3";
import type { ContactBuffer } from "../contact-buffer";
import { PARALLEL_SIN } from "../convex/features";
import {
  AXES,
  closestOnAxes,
  HIT,
  NF,
  PERP_IN,
  PLANE,
  perpendicular,
  pushPlaneContact,
} from "../helpers";
import type { WorldPose } from "../pose";
import {
  type CapsuleShape,
  type PlaneShape,
  readRadius,
  readRadiusLength,
  SIZES,
  type SphereShape,
  worldPlane,
} from "../shapes";
import { CORES, roundCores } from "./sphere";

/**
 * Plane–capsule: the two end spheres (centres c ∓ L z, z the capsule's world axis)
 * against the plane, gap = n·x − d − r each. Feature 0 for the −z end, 1 for the +z end,
 * so a lying capsule gets two contacts and a standing one gets its lower end.
 */
export function planeCapsule(
  a: PlaneShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pb.R;
  readRadiusLength(b, 0);
  const L = SIZES[1];
  const r = SIZES[0];
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  for (let end = 0; end < 2; end++) {
    const sgn = end === 0 ? -L : L;
    const x = pb.p[0] + sgn * zx;
    const y = pb.p[1] + sgn * zy;
    const z = pb.p[2] + sgn * zz;
    const dist = nx * x + ny * y + nz * z - PLANE[3];
    const gap = dist - r;
    if (gap < margin) {
      HIT[0] = x;
      HIT[1] = y;
      HIT[2] = z;
      HIT[3] = dist;
      HIT[4] = gap;
      pushPlaneContact(out, end);
    }
    if (L === 0) break;
  }
}

/**
 * Capsule–sphere: the sphere centre against the closest point of the capsule's segment,
 * x = c_a + clamp((c_b − c_a)·z, −L, L) z, then as two spheres. Feature 0.
 */
export function capsuleSphere(
  a: CapsuleShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const R = pa.R;
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  readRadiusLength(a, 0);
  readRadius(b, 2);
  const L = SIZES[1];
  const u = (pb.p[0] - pa.p[0]) * zx + (pb.p[1] - pa.p[1]) * zy + (pb.p[2] - pa.p[2]) * zz;
  const t = u < -L ? -L : Math.min(u, L); // clamp(u, −L, L), written out
  const ax = pa.p[0] + t * zx;
  const ay = pa.p[1] + t * zy;
  const az = pa.p[2] + t * zz;
  PERP_IN[0] = zx;
  PERP_IN[1] = zy;
  PERP_IN[2] = zz;
  PERP_IN[3] = pb.p[0] - pa.p[0];
  PERP_IN[4] = pb.p[1] - pa.p[1];
  PERP_IN[5] = pb.p[2] - pa.p[2];
  perpendicular();
  CORES[0] = ax;
  CORES[1] = ay;
  CORES[2] = az;
  CORES[3] = SIZES[0];
  copy3(CORES, 4, pb.p, 0);
  CORES[7] = SIZES[2];
  copy3(CORES, 8, NF, 0);
  roundCores(margin, out, 0);
}

/**
 * Capsule–capsule. In general one contact from the closest points of the two segments
 * (Ericson §5.1.9), feature 0. When the axes are parallel within PARALLEL_SIN and their
 * projections overlap, the closest set is a segment: two contacts at the ends of the
 * overlap (each end point of a's segment against its closest point on b's), features 1
 * and 2, so that one capsule lying along another is supported.
 */
export function capsuleCapsule(
  a: CapsuleShape,
  pa: WorldPose,
  b: CapsuleShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const RA = pa.R;
  const RB = pb.R;
  const ax = RA[2];
  const ay = RA[5];
  const az = RA[8];
  const bx = RB[2];
  const by = RB[5];
  const bz = RB[8];
  readRadiusLength(a, 0);
  readRadiusLength(b, 2);
  const LA = SIZES[1];
  const LB = SIZES[3];
  const dcx = pb.p[0] - pa.p[0];
  const dcy = pb.p[1] - pa.p[1];
  const dcz = pb.p[2] - pa.p[2];
  // Fallback normal (for core points that coincide): perpendicular to both axes, or to
  // a's axis when they are parallel, towards b.
  const xx = ay * bz - az * by;
  const xy = az * bx - ax * bz;
  const xz = ax * by - ay * bx;
  const sinAngle = Math.sqrt(xx * xx + xy * xy + xz * xz); // length3, written out
  if (sinAngle > 1e-9) {
    const s = (xx * dcx + xy * dcy + xz * dcz >= 0 ? 1 : -1) / sinAngle;
    CORES[8] = xx * s;
    CORES[9] = xy * s;
    CORES[10] = xz * s;
  } else {
    PERP_IN[0] = ax;
    PERP_IN[1] = ay;
    PERP_IN[2] = az;
    PERP_IN[3] = dcx;
    PERP_IN[4] = dcy;
    PERP_IN[5] = dcz;
    perpendicular();
    copy3(CORES, 8, NF, 0);
  }
  if (sinAngle < PARALLEL_SIN && LA > 0 && LB > 0 && parallelCapsules(pa, pb, margin, out)) return;
  copy3(AXES, 0, pa.p, 0);
  AXES[3] = ax;
  AXES[4] = ay;
  AXES[5] = az;
  AXES[6] = LA;
  copy3(AXES, 7, pb.p, 0);
  AXES[10] = bx;
  AXES[11] = by;
  AXES[12] = bz;
  AXES[13] = LB;
  closestOnAxes();
  copy3(CORES, 0, AXES, 14);
  CORES[3] = SIZES[0];
  copy3(CORES, 4, AXES, 17);
  CORES[7] = SIZES[2];
  roundCores(margin, out, 0);
}

/**
 * Two parallel capsules (within PARALLEL_SIN, the fallback normal in CORES[8..10]; radius
 * and half-length of a in SIZES[0..1], of b in SIZES[2..3], from capsuleCapsule): when
 * the projection of b's segment on a's axis, [t_m − t_b, t_m + t_b] with t_m = d·a and
 * t_b = L_b (b·a), overlaps a's [−L_a, L_a] by more than 1e-9 (L_a + L_b), pushes the two
 * contacts at the ends of the overlap (features 1, 2) and returns true.
 */
function parallelCapsules(
  pa: WorldPose,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): boolean {
  const ax = pa.R[2];
  const ay = pa.R[5];
  const az = pa.R[8];
  const bx = pb.R[2];
  const by = pb.R[5];
  const bz = pb.R[8];
  const LA = SIZES[1];
  const LB = SIZES[3];
  const cax = pa.p[0];
  const cay = pa.p[1];
  const caz = pa.p[2];
  const cbx = pb.p[0];
  const cby = pb.p[1];
  const cbz = pb.p[2];
  const tm = (cbx - cax) * ax + (cby - cay) * ay + (cbz - caz) * az;
  const tb = LB * (bx * ax + by * ay + bz * az);
  const t0 = Math.max(-LA, Math.min(tm - tb, tm + tb));
  const t1 = Math.min(LA, Math.max(tm - tb, tm + tb));
  if (!(t1 - t0 > 1e-9 * (LA + LB))) return false;
  for (let end = 0; end < 2; end++) {
    const t = end === 0 ? t0 : t1;
    const qax = cax + t * ax;
    const qay = cay + t * ay;
    const qaz = caz + t * az;
    const v = (qax - cbx) * bx + (qay - cby) * by + (qaz - cbz) * bz;
    const u = v < -LB ? -LB : Math.min(v, LB); // clamp(v, −L_b, L_b), written out
    CORES[0] = qax;
    CORES[1] = qay;
    CORES[2] = qaz;
    CORES[3] = SIZES[0];
    CORES[4] = cbx + u * bx;
    CORES[5] = cby + u * by;
    CORES[6] = cbz + u * bz;
    CORES[7] = SIZES[2];
    roundCores(margin, out, 1 + end);
  }
  return true;
}
