/**
 * Contacts of two convex shapes given as cores (ConvexShape: support function and
 * features) swept by balls of radii r_a, r_b (a capsule: its segment and radius; solids:
 * radius 0). Conventions of narrowphase.ts: normal from a to b, gap = (p_b − p_a)·n
 * negative when penetrating, point the midpoint of the surface points.
 *
 *  1. The signed distance of the cores (distance): GJK gives the distance and witness
 *     points when they are separated. Its result is kept only if its normal separates by
 *     its distance: where curved surfaces touch GJK converges slowly and may stop on
 *     rounding with a tiny v of meaningless direction. Otherwise, and when the cores
 *     overlap or touch, EPA gives the depth, signed (the origin may lie just outside its
 *     polytope), converged to 1e-10 of the size of the pair. A polytope broken by rounding
 *     (its closest face moving the wrong way) or no convergence: b is dilated by a ball of
 *     1e-3 of the size and GJK/EPA rerun (the origin then strictly inside a − b for nearly
 *     touching shapes; a dilation by a ball does not move the normal), the better normal
 *     kept (dilatedRetry).
 *  2. The normal is polished (polish.ts) to the direction of least overlap; the reported
 *     core gap is −overlap(n), the exact separation along the reported normal (so never
 *     less penetration than the truth); the witnesses are moved onto the support sets
 *     along n (witness.ts). The radii are added exactly: dilating a shape by a ball moves
 *     the boundary of the Minkowski difference by that radius.
 *  3. With that normal each core's feature facing the other gives a manifold
 *     (manifold.ts); a manifold whose deepest gap misses the GJK/EPA gap by more than
 *     1e-7 of the size, or no manifold, gets the single contact instead.
 *
 * Nothing allocates: scratch storage is module-level (single-threaded), and doubles cross
 * calls in it rather than as arguments (support.ts QUERY).
 */

import type { ContactBuffer } from "../contact-buffer";
import { MARGIN } from "../helpers";
import { EPA_FAILED, EPA_OK, EPA_ROUGH, epa } from "./epa";
import type { ConvexShape } from "./features";
import { GJK_FAR, GJK_OVERLAP, GJK_SEPARATED, gjk, RES } from "./gjk";
import { buildManifold, RADII, singleContact } from "./manifold";
import { PN, polishNormal } from "./polish";
import { ALONG, type ConvexSupport, overlapAlong, QUERY } from "./support";
import { placeWitnesses } from "./witness";

/**
 * 1 when the last collideCores found the cores at least the reach apart by GJK (no
 * contact), the unit normal a→b of that separation in gjk.ts RES[0..2]; else 0.
 */
export const CORES_FAR = new Int32Array(1);

/** A saved RES (dilatedRetry). */
const SAVE = new Float64Array(10);

/**
 * Contacts between the convex cores a and b (placed), swept by balls of their radii
 * (ConvexCore.sweep), below the margin in helpers.ts MARGIN[0] (written by the caller: a
 * double argument of this call, never inlined, would be boxed at every call, once per
 * candidate triangle of a mesh pair), appended to `out` (see the file comment).
 */
export function collideCores(a: ConvexShape, b: ConvexShape, out: ContactBuffer): void {
  const margin = MARGIN[0];
  CORES_FAR[0] = 0;
  // The radii where manifold.ts reads them.
  const ra = a.sweep[0];
  const rb = b.sweep[0];
  RADII[0] = ra;
  RADII[1] = rb;
  const Ra = a.boundingRadius();
  const Rb = b.boundingRadius();
  const reach = margin + ra + rb;
  const dx = b.p[0] - a.p[0];
  const dy = b.p[1] - a.p[1];
  const dz = b.p[2] - a.p[2];
  if (Math.sqrt(dx * dx + dy * dy + dz * dz) - Ra - Rb >= reach) return;
  const scale = Ra + Rb;
  QUERY[0] = scale;
  QUERY[1] = margin;
  QUERY[2] = reach;
  if (!distance(a, b)) return;
  polishNormal(a, b);
  placeWitnesses(a, b, PN);
  RES[9] = -PN[3];
  const gap0 = RES[9] - ra - rb;
  if (!(gap0 < margin)) return;
  const start = out.count;
  buildManifold(a, b, out);
  if (out.count > start) {
    let deepest = Number.POSITIVE_INFINITY;
    for (let i = start; i < out.count; i++) if (out.gap[i] < deepest) deepest = out.gap[i];
    if (!(gap0 < deepest - 1e-7 * scale)) return;
  }
  // The single GJK/EPA contact (alone, or where the manifold misses the deepest point).
  singleContact(a, b, out);
}

/**
 * The signed distance query of the cores (step 1 of the file comment): RES = normal a→b,
 * witnesses and core gap. Returns false when the cores are at least `reach` (QUERY[2])
 * apart.
 */
function distance(a: ConvexSupport, b: ConvexSupport): boolean {
  let status = gjk(a, b);
  if (status === GJK_FAR) {
    CORES_FAR[0] = 1;
    return false;
  }
  const scale = QUERY[0];
  // GJK converges slowly where curved surfaces (nearly) touch, and may stop on rounding
  // with a tiny v of meaningless direction: its normal must separate by its distance,
  // else EPA (which also handles the origin just outside its polytope: a signed result).
  let separation = 1e-10 * scale;
  if (status === GJK_SEPARATED) {
    overlapAlong(a, b, RES, 0);
    if (-ALONG[0] < RES[9] - 1e-7 * scale) {
      status = GJK_OVERLAP;
      separation = RES[9];
    }
  }
  let outcome = EPA_OK;
  if (status === GJK_OVERLAP) {
    QUERY[4] = separation;
    outcome = epa(a, b);
  }
  if (outcome !== EPA_OK) dilatedRetry(a, b, outcome);
  return true;
}

/**
 * Fallback of an EPA that failed or did not converge (`outcome`): b dilated by a small
 * ball puts the origin strictly inside a − b when the shapes nearly touch, where EPA is
 * reliable; the dilation does not move the normal. The better of the two normals (least
 * overlap of the true shapes) is kept in RES; if neither exists (a flat Minkowski
 * difference, impossible with a cylinder of positive size), contact along the centre
 * line.
 */
function dilatedRetry(a: ConvexSupport, b: ConvexSupport, outcome: number): void {
  const scale = QUERY[0];
  const reach = QUERY[2];
  let keep = Number.POSITIVE_INFINITY;
  if (outcome === EPA_ROUGH) {
    overlapAlong(a, b, RES, 0);
    keep = ALONG[0];
    for (let k = 0; k < 10; k++) SAVE[k] = RES[k];
  }
  const dilation = 1e-3 * scale;
  QUERY[3] = dilation;
  QUERY[2] = reach + dilation;
  const status = gjk(a, b);
  let retried = EPA_FAILED;
  if (status === GJK_OVERLAP) {
    QUERY[4] = 1e-10 * scale;
    retried = epa(a, b);
  } else if (status === GJK_SEPARATED) retried = EPA_OK;
  QUERY[3] = 0;
  QUERY[2] = reach;
  let got = Number.POSITIVE_INFINITY;
  if (retried !== EPA_FAILED) {
    overlapAlong(a, b, RES, 0);
    got = ALONG[0];
  }
  if (keep < got) for (let k = 0; k < 10; k++) RES[k] = SAVE[k];
  else if (!(got < Number.POSITIVE_INFINITY)) {
    const dcx = b.p[0] - a.p[0];
    const dcy = b.p[1] - a.p[1];
    const dcz = b.p[2] - a.p[2];
    const l = Math.sqrt(dcx * dcx + dcy * dcy + dcz * dcz);
    RES[0] = l > 0 ? dcx / l : 0;
    RES[1] = l > 0 ? dcy / l : 0;
    RES[2] = l > 0 ? dcz / l : 1;
    for (let k = 0; k < 3; k++) RES[3 + k] = RES[6 + k] = a.p[k] + 0.5 * (b.p[k] - a.p[k]);
  }
}
