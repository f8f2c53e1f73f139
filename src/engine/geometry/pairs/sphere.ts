/**
 * Sphere pairs in closed form: sphere–sphere and plane–sphere, and roundCores, the
 * contact of two balls around core points that the capsule pairs share (a capsule is the
 * ball swept along its segment: against a sphere or another capsule, the contact is that
 * of two balls centred at the closest points of the cores).
 */

import { copy3 } from "../../math/vec3";
import type { ContactBuffer } from "../contact-buffer";
import { CONTACT, HIT, PLANE, pushContactFromA, pushPlaneContact } from "../helpers";
import type { WorldPose } from "../pose";
import { type PlaneShape, readRadius, SIZES, type SphereShape, worldPlane } from "../shapes";

/**
 * Input of roundCores, written by its callers: core point A (0..2), radius r_a (3), core
 * point B (4..6), radius r_b (7), unit fallback normal (8..10). Passed through this array
 * rather than as arguments (or a setter's): V8 does not inline every such call, and boxes
 * each double argument of a call it does not inline (an allocation per contact).
 */
export const CORES = new Float64Array(11);

/**
 * Contact between two balls of radii r_a, r_b around core points A and B (spheres, or
 * the closest points of capsule segments), read from CORES: n = (B − A)/|B − A| (the
 * fallback normal when the core points coincide), gap = |B − A| − r_a − r_b,
 * p_a = A + r_a n.
 */
export function roundCores(margin: number, out: ContactBuffer, feature: number): void {
  const ax = CORES[0];
  const ay = CORES[1];
  const az = CORES[2];
  const ra = CORES[3];
  const rb = CORES[7];
  const dx = CORES[4] - ax;
  const dy = CORES[5] - ay;
  const dz = CORES[6] - az;
  const dist = Math.sqrt(dx * dx + dy * dy + dz * dz); // length3, written out
  const gap = dist - ra - rb;
  if (!(gap < margin)) return;
  let nx = CORES[8];
  let ny = CORES[9];
  let nz = CORES[10];
  if (dist > 1e-12 * (ra + rb) && dist > 0) {
    nx = dx / dist;
    ny = dy / dist;
    nz = dz / dist;
  }
  CONTACT[0] = ax + ra * nx;
  CONTACT[1] = ay + ra * ny;
  CONTACT[2] = az + ra * nz;
  CONTACT[3] = nx;
  CONTACT[4] = ny;
  CONTACT[5] = nz;
  CONTACT[6] = gap;
  pushContactFromA(out, feature);
}

/**
 * Sphere–sphere. n = (c_b − c_a)/|c_b − c_a|, gap = |c_b − c_a| − r_a − r_b,
 * p_a = c_a + r_a n. Concentric spheres get n = +z. Feature 0.
 */
export function sphereSphere(
  a: SphereShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  readRadius(a, 0);
  readRadius(b, 2);
  copy3(CORES, 0, pa.p, 0);
  CORES[3] = SIZES[0];
  copy3(CORES, 4, pb.p, 0);
  CORES[7] = SIZES[2];
  CORES[8] = 0;
  CORES[9] = 0;
  CORES[10] = 1;
  roundCores(margin, out, 0);
}

/**
 * Plane–sphere. With the world plane n·x = d (solid below): gap = n·c − d − r,
 * p_b = c − r n, normal n (out of the plane's solid, towards the sphere). Feature 0.
 */
export function planeSphere(
  a: PlaneShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const c = pb.p;
  readRadius(b, 0);
  const r = SIZES[0];
  const gap = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3] - r;
  if (!(gap < margin)) return;
  // p_a = c − (gap + r) n on the plane.
  copy3(HIT, 0, c, 0);
  HIT[3] = gap + r;
  HIT[4] = gap;
  pushPlaneContact(out, 0);
}
