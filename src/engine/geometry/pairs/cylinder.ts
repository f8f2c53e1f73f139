/**
 * Cylinder pairs (radius r, half-length L, axis the shape frame's local z, flat caps at
 * z = ±L). In canonical order the cylinder is b except against a sphere.
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
 * The other cylinder pairs (box–cylinder, capsule–cylinder, cylinder–cylinder, and against
 * a hull or a mesh) go through the shapes' convex cores (convex.ts coreCore, mesh.ts
 * meshCores; convex/pair.ts collideCores, the radii the cores' sweeps): the box, the
 * cylinder, the capsule's segment with the capsule's radius added. Their feature ids: the
 * single contact 27·code_a + code_b (box: the region code of the witness Σ c_i 3^i as
 * boxSphere; cylinder: 0/1 the −z/+z cap, 2 the side, 3/4 the −z/+z rim; capsule: 0/1 its
 * ends, 2 its side), then the manifold ranges of convex/manifold.ts.
 *
 * Nothing allocates. No double crosses a call as an argument (V8 boxes those of a call it
 * does not inline): contacts are written to helpers.ts arrays and pushed, the radii are the
 * cores' sweeps. The cylinder's and capsule's sizes are read by the cores' place(),
 * through shapes.ts readRadiusLength (a double field read where a switch on the shape's
 * type, as convex/cores.ts placeCore's, has left its possible hidden classes as the union
 * of all shapes' is boxed).
 */

import type { ContactBuffer } from "../contact-buffer";
import { CYLINDER } from "../convex/cores";
import type { CylinderCore } from "../convex/cylinder-core";
import { FLUSH_COS, RIM_COS, RIM_SAMPLES, RIM_SIN } from "../cylinder";
import { HIT, inFrameOf, MARGIN, PLANE, pushLocalFromA, pushPlaneContact } from "../helpers";
import type { WorldPose } from "../pose";
import { type CylinderShape, type PlaneShape, type SphereShape, worldPlane } from "../shapes";

// ---------------------------------------------------------------------------------------
// Closed forms
// ---------------------------------------------------------------------------------------

/**
 * Plane–cylinder (see the file comment): exact deepest rim point of each cap, features 0
 * (−z cap) and 1 (+z cap), plus the rim samples of a flush cap, features
 * 2 + RIM_SAMPLES·cap + k. Normal: the plane's (towards the cylinder). The cylinder's
 * sizes are read through its core, placed first (shapes.ts branchOn: why).
 */
export function planeCylinder(
  a: PlaneShape,
  pa: WorldPose,
  b: CylinderShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  CYLINDER[1].place(pb, b);
  worldPlane(a, pa, PLANE);
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const R = pb.R;
  const c = pb.p;
  const r = CYLINDER[1].size[0];
  const L = CYLINDER[1].size[1];
  const zx = R[2];
  const zy = R[5];
  const zz = R[8];
  const cz = nx * zx + ny * zy + nz * zz;
  const dc = nx * c[0] + ny * c[1] + nz * c[2] - PLANE[3];
  // û: the part of n perpendicular to the axis.
  let ux = nx - cz * zx;
  let uy = ny - cz * zy;
  let uz = nz - cz * zz;
  const su = Math.sqrt(ux * ux + uy * uy + uz * uz);
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
      const g = dc + s * cz + r * (RIM_COS[k] * xd + RIM_SIN[k] * yd);
      if (g < sampleMin) sampleMin = g;
    }
  }
  for (let e = 0; e < 2; e++) {
    if (su === 0) break;
    const s = e === 0 ? -L : L;
    const g = dc + s * cz - r * su;
    if (!(g < margin)) continue;
    if (flush && e === low && !(g < sampleMin - tol)) continue;
    HIT[0] = c[0] + s * zx - r * ux;
    HIT[1] = c[1] + s * zy - r * uy;
    HIT[2] = c[2] + s * zz - r * uz;
    HIT[3] = g;
    HIT[4] = g;
    pushPlaneContact(out, e);
  }
  if (!flush) return;
  MARGIN[0] = margin;
  pushRimSamples(CYLINDER[1], low, out);
}

/**
 * The rim samples of the cap `cap` (0: −z, 1: +z) of the cylinder core b against the
 * world plane in PLANE: each sample's gap n·x − d, pushed when below the margin MARGIN[0]
 * with feature 2 + RIM_SAMPLES·cap + k.
 */
function pushRimSamples(b: CylinderCore, cap: number, out: ContactBuffer): void {
  const nx = PLANE[0];
  const ny = PLANE[1];
  const nz = PLANE[2];
  const margin = MARGIN[0];
  const R = b.R;
  const c = b.p;
  const r = b.size[0];
  const s = cap === 0 ? -b.size[1] : b.size[1];
  for (let k = 0; k < RIM_SAMPLES; k++) {
    const lx = r * RIM_COS[k];
    const ly = r * RIM_SIN[k];
    const px = c[0] + R[0] * lx + R[1] * ly + s * R[2];
    const py = c[1] + R[3] * lx + R[4] * ly + s * R[5];
    const pz = c[2] + R[6] * lx + R[7] * ly + s * R[8];
    const g = nx * px + ny * py + nz * pz - PLANE[3];
    if (!(g < margin)) continue;
    HIT[0] = px;
    HIT[1] = py;
    HIT[2] = pz;
    HIT[3] = g;
    HIT[4] = g;
    pushPlaneContact(out, 2 + RIM_SAMPLES * cap + k);
  }
}

/**
 * pointCylinderLocal input: the point q (0..2, cylinder frame); result: closest/deepest
 * surface point k (3..5), unit normal (6..8), signed distance (9), region code (10).
 */
const PC = new Float64Array(11);

/**
 * Point q = PC[0..2] (cylinder frame) against the solid cylinder of core c. Outside: k the
 * closest point, n = (q − k)/|q − k|, distance |q − k|; inside: the nearest of the side
 * (radial normal, +x on the axis) and the caps (±z), distance minus its depth. Code: the
 * region code of the file comment.
 */
function pointCylinderLocal(c: CylinderCore): void {
  const x = PC[0];
  const y = PC[1];
  const z = PC[2];
  const r = c.size[0];
  const L = c.size[1];
  const rho = Math.sqrt(x * x + y * y);
  const outR = rho > r;
  const outZ = z > L || z < -L;
  if (outR || outZ) {
    const kx = outR ? (x * r) / rho : x;
    const ky = outR ? (y * r) / rho : y;
    const kz = z < -L ? -L : Math.min(z, L);
    let mx = x - kx;
    let my = y - ky;
    let mz = z - kz;
    const dist = Math.sqrt(mx * mx + my * my + mz * mz);
    mx /= dist;
    my /= dist;
    mz /= dist;
    PC[3] = kx;
    PC[4] = ky;
    PC[5] = kz;
    PC[6] = mx;
    PC[7] = my;
    PC[8] = mz;
    PC[9] = dist;
    PC[10] = (z > L ? 2 : z < -L ? 0 : 1) + (outR ? 3 : 0);
    return;
  }
  const dSide = r - rho;
  const dCap = L - Math.abs(z);
  if (dSide < dCap) {
    let mx: number;
    let my: number;
    if (rho > 0) {
      mx = x / rho;
      my = y / rho;
    } else {
      mx = 1;
      my = 0;
    }
    PC[3] = r * mx;
    PC[4] = r * my;
    PC[5] = z;
    PC[6] = mx;
    PC[7] = my;
    PC[8] = 0;
    PC[9] = -dSide;
    PC[10] = 4;
  } else {
    const s = z >= 0 ? 1 : -1;
    PC[3] = x;
    PC[4] = y;
    PC[5] = s * L;
    PC[6] = 0;
    PC[7] = 0;
    PC[8] = s;
    PC[9] = -dCap;
    PC[10] = s > 0 ? 2 : 0;
  }
}

/**
 * Cylinder–sphere: the sphere centre q (cylinder frame) against the solid cylinder
 * (pointCylinderLocal, the cylinder's sizes read through its core, placed first:
 * CylinderCore.place). gap = signed distance − radius; feature: the region code of the
 * file comment.
 */
export function cylinderSphere(
  a: CylinderShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  CYLINDER[0].place(pa, a);
  const rs = b.radius;
  inFrameOf(pa, pb, PC, 0);
  pointCylinderLocal(CYLINDER[0]);
  const gap = PC[9] - rs;
  if (!(gap < margin)) return;
  PC[9] = gap;
  pushLocalFromA(out, pa, PC, 3);
}
