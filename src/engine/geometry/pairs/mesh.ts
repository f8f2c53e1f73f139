/**
 * Mesh pairs: a triangle mesh (a, mesh.ts) against a sphere, capsule, box, cylinder or
 * convex hull (b). The other shape's world box, taken into the mesh frame (centre Rᵀ(c −
 * p), half-widths |Rᵀ| e) and padded by the margin, selects the candidate triangles
 * from the mesh's BVH; each candidate is then met as one triangle, and the contacts of
 * the pair are made consistent across triangles:
 *
 *  - sphere, closed form: the closest point of the triangle to the centre q and its
 *    Voronoi region (Ericson §5.1.5). Interior: normal the face normal n_t, gap
 *    n_t·(q − a) − r, kept while the centre has not passed the face by more than r. Edge
 *    or corner: normal (q − closest)/|…| (the centre must be in front of the face),
 *    kept only when no triangle around that edge or corner is strictly closer to q (its
 *    face or edge owns the contact: the Voronoi test across internal edges, so a
 *    sphere rolling over a shared edge gets the face normals, never a spurious edge
 *    normal) and reported once, by the lowest-indexed triangle around it.
 *    Features: the face, edge or vertex index mixed with its kind.
 *  - capsule, box, cylinder, convex: a triangle that the shape's own box separates by the
 *    margin (a few separating axes, boxSeparates) has no contact and is skipped, as is
 *    one still separated along the axis by which GJK found it far at the last detection
 *    (FarAxes); any other, the triangle as a convex core (TriangleCore) through
 *    collideCores; a contact whose normal leaves the face normal is checked against the
 *    Voronoi region of the triangle feature it sits on (an edge: normals between the two
 *    faces' outward in-plane directions, n·t_f ≤ 0 for both faces; a corner:
 *    n·(w − v) ≤ 0 for every edge v → w); outside it (an internal edge of a flat or
 *    concave region) the contact is turned to the face normal about the other shape's
 *    surface point, its gap measured from the plane of the triangle (faceNormal).
 *    Features mixed with the triangle index.
 *    Contacts of the pair at one point (within 1e-3 of the shape's size) with normals
 *    within 2° (a hull vertex on a mesh vertex or edge touches every triangle around it)
 *    are merged into one, of the deepest gap (merged).
 *
 * Nothing allocates in steady state (the BVH's result list grows to the largest query).
 */

import { FOUND, overlapping, QUERY_BOX } from "../bvh";
import type { ContactBuffer } from "../contact-buffer";
import { type CoreShape, placeCore, TRIANGLE as TRI } from "../convex/cores";
import type { ConvexShape } from "../convex/features";
import { RES } from "../convex/gjk";
import { CORES_FAR, collideCores } from "../convex/pair";
import { ALONG, separationAlong } from "../convex/support";
import { CLOSEST, closestOnTriangle, REGION } from "../convex/triangle-core";
import { CONTACT, inFrameOf, MARGIN, pushContactFromA } from "../helpers";
import type { TriangleMesh } from "../mesh";
import type { WorldPose } from "../pose";
import {
  aabbHalfWidths,
  type MeshShape,
  readRadius,
  readRadiusLength,
  type Shape,
  SIZES,
  type SphereShape,
} from "../shapes";

/** World half-widths of the other shape's box (aabbHalfWidths). */
const EXT = new Float64Array(3);
/** Local point scratch, triangle corners scratch (9), normal scratch. */
const Q = new Float64Array(3);
const CORNERS = new Float64Array(9);
const NW = new Float64Array(3);

/**
 * The other shape's box in its own frame (meshCore): centre (0..2) and half-widths
 * (3..5), m; the world centre of that box (6..8).
 */
const BOX = new Float64Array(9);
/** World corners of the triangle boxSeparates tests (3 each). */
const WORLD_CORNERS = new Float64Array(9);

/**
 * BOX for shape b at pose pb: a convex hull's box of its vertices, a box's own, a
 * capsule's or cylinder's about its axis (local z). False for a shape without one.
 */
function placeBox(b: Shape, pb: WorldPose): boolean {
  switch (b.type) {
    case "convex":
      BOX.set(b.hull.boxCenter, 0);
      BOX.set(b.hull.boxHalf, 3);
      break;
    case "box":
      BOX.fill(0, 0, 3);
      BOX.set(b.halfExtents, 3);
      break;
    case "capsule":
    case "cylinder":
      readRadiusLength(b, 0);
      BOX.fill(0, 0, 3);
      BOX[3] = SIZES[0];
      BOX[4] = SIZES[0];
      BOX[5] = SIZES[1] + (b.type === "capsule" ? SIZES[0] : 0);
      break;
    default:
      return false;
  }
  const R = pb.R;
  for (let i = 0; i < 3; i++)
    BOX[6 + i] = pb.p[i] + R[3 * i] * BOX[0] + R[3 * i + 1] * BOX[1] + R[3 * i + 2] * BOX[2];
  return true;
}

/**
 * The direction boxSeparates tests (world, unit: 0..2) and the box's centre value (3) and
 * half-width (4) along it: doubles cross the calls here, not as arguments (convex/support.ts
 * QUERY: V8 boxes a double argument of a call it does not inline).
 */
const AXIS = new Float64Array(5);

/**
 * Whether the box BOX of the other shape (at pb) and triangle t of the mesh (at pm) are
 * at least the margin MARGIN[0] apart along one of: the box's three axes, the triangle's
 * normal, the triangle's three in-plane edge normals (a separating-axis test, Gottschalk,
 * Lin & Manocha 1996, on a subset of the axes: true proves the shapes' distance ≥ the
 * margin, so that collideCores would find no contact; false proves nothing). Along a unit
 * m the box spans m·c ± Σ_k h_k |m·a_k| (c its world centre, a_k its axes, h_k its
 * half-widths) and the triangle its corners' range. No support function of the shape
 * itself: cheaper than GJK, and most candidate triangles of a shape resting on a mesh lie
 * beside it (bench/README.md, "Convex hulls on a mesh").
 */
function boxSeparates(mesh: TriangleMesh, pm: WorldPose, t: number, pb: WorldPose): boolean {
  const Rm = pm.R;
  const Rb = pb.R;
  loadCorners(mesh, t);
  for (let k = 0; k < 3; k++) {
    const x = CORNERS[3 * k];
    const y = CORNERS[3 * k + 1];
    const z = CORNERS[3 * k + 2];
    for (let i = 0; i < 3; i++)
      WORLD_CORNERS[3 * k + i] = pm.p[i] + Rm[3 * i] * x + Rm[3 * i + 1] * y + Rm[3 * i + 2] * z;
  }
  // the box's axes: c_k ± h_k
  for (let k = 0; k < 3; k++) {
    AXIS[0] = Rb[k];
    AXIS[1] = Rb[3 + k];
    AXIS[2] = Rb[6 + k];
    AXIS[3] = AXIS[0] * BOX[6] + AXIS[1] * BOX[7] + AXIS[2] * BOX[8];
    AXIS[4] = BOX[3 + k];
    if (rangeSeparates()) return true;
  }
  // the triangle's normal n and in-plane edge normals n × e/|e|
  const fx = mesh.normals[3 * t];
  const fy = mesh.normals[3 * t + 1];
  const fz = mesh.normals[3 * t + 2];
  const nx = Rm[0] * fx + Rm[1] * fy + Rm[2] * fz;
  const ny = Rm[3] * fx + Rm[4] * fy + Rm[5] * fz;
  const nz = Rm[6] * fx + Rm[7] * fy + Rm[8] * fz;
  AXIS[0] = nx;
  AXIS[1] = ny;
  AXIS[2] = nz;
  if (boxSeparatesAlong(Rb)) return true;
  for (let k = 0; k < 3; k++) {
    const j = k === 2 ? 0 : k + 1;
    const ex = WORLD_CORNERS[3 * j] - WORLD_CORNERS[3 * k];
    const ey = WORLD_CORNERS[3 * j + 1] - WORLD_CORNERS[3 * k + 1];
    const ez = WORLD_CORNERS[3 * j + 2] - WORLD_CORNERS[3 * k + 2];
    const l = Math.sqrt(ex * ex + ey * ey + ez * ez);
    if (!(l > 0)) continue;
    AXIS[0] = (ny * ez - nz * ey) / l;
    AXIS[1] = (nz * ex - nx * ez) / l;
    AXIS[2] = (nx * ey - ny * ex) / l;
    if (boxSeparatesAlong(Rb)) return true;
  }
  return false;
}

/** boxSeparates along AXIS[0..2]: the box spans m·c ± Σ_k h_k |m·a_k| (a_k: Rb's columns). */
function boxSeparatesAlong(Rb: Float64Array): boolean {
  const mx = AXIS[0];
  const my = AXIS[1];
  const mz = AXIS[2];
  AXIS[3] = mx * BOX[6] + my * BOX[7] + mz * BOX[8];
  let e = 0;
  for (let k = 0; k < 3; k++)
    e += BOX[3 + k] * Math.abs(mx * Rb[k] + my * Rb[3 + k] + mz * Rb[6 + k]);
  AXIS[4] = e;
  return rangeSeparates();
}

/**
 * Whether the range of WORLD_CORNERS along AXIS[0..2] and the interval AXIS[3] ± AXIS[4]
 * are at least MARGIN[0] apart.
 */
function rangeSeparates(): boolean {
  const v = WORLD_CORNERS;
  const mx = AXIS[0];
  const my = AXIS[1];
  const mz = AXIS[2];
  const d0 = mx * v[0] + my * v[1] + mz * v[2];
  const d1 = mx * v[3] + my * v[4] + mz * v[5];
  const d2 = mx * v[6] + my * v[7] + mz * v[8];
  const lo = Math.min(d0, d1, d2);
  const hi = Math.max(d0, d1, d2);
  const reach = MARGIN[0];
  return lo - (AXIS[3] + AXIS[4]) >= reach || AXIS[3] - AXIS[4] - hi >= reach;
}

/**
 * Candidate triangles (into FOUND) of the mesh at pm against shape b at pb: b's world box
 * in the mesh frame, padded by the margin.
 */
function candidates(mesh: TriangleMesh, pm: WorldPose, b: Shape, pb: WorldPose): void {
  aabbHalfWidths(b, pb, EXT, 0);
  const R = pm.R;
  const dx = pb.p[0] - pm.p[0];
  const dy = pb.p[1] - pm.p[1];
  const dz = pb.p[2] - pm.p[2];
  const pad = MARGIN[0];
  for (let i = 0; i < 3; i++) {
    // Column i of R is the mesh's local axis i in the world.
    const r0 = R[i];
    const r1 = R[3 + i];
    const r2 = R[6 + i];
    const c = r0 * dx + r1 * dy + r2 * dz;
    const e = Math.abs(r0) * EXT[0] + Math.abs(r1) * EXT[1] + Math.abs(r2) * EXT[2] + pad;
    QUERY_BOX[i] = c - e;
    QUERY_BOX[3 + i] = c + e;
  }
  overlapping(mesh.bvh);
}

/** Corners of triangle t (mesh frame) into CORNERS. */
function loadCorners(mesh: TriangleMesh, t: number): void {
  const x = mesh.vertices;
  const tri = mesh.triangles;
  for (let k = 0; k < 3; k++) {
    const v = tri[3 * t + k];
    CORNERS[3 * k] = x[3 * v];
    CORNERS[3 * k + 1] = x[3 * v + 1];
    CORNERS[3 * k + 2] = x[3 * v + 2];
  }
}

/** Squared distance from Q to triangle t (mesh frame). */
function distance2(mesh: TriangleMesh, t: number): number {
  loadCorners(mesh, t);
  closestOnTriangle(CORNERS, Q);
  return (Q[0] - CLOSEST[0]) ** 2 + (Q[1] - CLOSEST[1]) ** 2 + (Q[2] - CLOSEST[2]) ** 2;
}

/** ownsFeature's bound on the squared distance (0): a double argument would be boxed. */
const D2 = new Float64Array(1);

/**
 * Whether triangle t owns meshSphere's contact at an edge or corner that the triangles
 * list[from..to) share (t among them): none of the others strictly closer to Q (squared
 * distance below D2[0]), and none of lower index.
 */
function ownsFeature(
  mesh: TriangleMesh,
  list: Int32Array,
  from: number,
  to: number,
  t: number,
): boolean {
  let owner = t;
  for (let j = from; j < to; j++) {
    const g = list[j];
    if (g === t) continue;
    if (distance2(mesh, g) < D2[0]) return false;
    if (g < owner) owner = g;
  }
  return owner === t;
}

/** Mesh–sphere (see the file comment). */
export function meshSphere(
  a: MeshShape,
  pa: WorldPose,
  b: SphereShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  const mesh = a.mesh;
  MARGIN[0] = margin;
  candidates(mesh, pa, b, pb);
  readRadius(b, 0);
  const r = SIZES[0];
  const R = pa.R;
  inFrameOf(pa, pb, NW, 0);
  const qx = NW[0];
  const qy = NW[1];
  const qz = NW[2];
  const tol = 1e-12 * (mesh.radius + r);
  const found = FOUND.tris;
  const nFound = FOUND.count;
  for (let i = 0; i < nFound; i++) {
    const t = found[i];
    Q[0] = qx;
    Q[1] = qy;
    Q[2] = qz;
    loadCorners(mesh, t);
    closestOnTriangle(CORNERS, Q);
    const region = REGION[0];
    const cx = CLOSEST[0];
    const cy = CLOSEST[1];
    const cz = CLOSEST[2];
    const fnx = mesh.normals[3 * t];
    const fny = mesh.normals[3 * t + 1];
    const fnz = mesh.normals[3 * t + 2];
    const h = fnx * (qx - cx) + fny * (qy - cy) + fnz * (qz - cz);
    let nx = fnx;
    let ny = fny;
    let nz = fnz;
    let gap: number;
    let kind = 0;
    let index = t;
    if (region === 0) {
      if (!(h > -r)) continue;
      gap = h - r;
    } else {
      if (!(h > 0)) continue;
      const ex = qx - cx;
      const ey = qy - cy;
      const ez = qz - cz;
      const d = Math.sqrt(ex * ex + ey * ey + ez * ez);
      gap = d - r;
      if (!(gap < margin)) continue;
      nx = ex / d;
      ny = ey / d;
      nz = ez / d;
      D2[0] = d * d - tol;
      // The edge (region 1..3) or corner (4..6) and the triangles around it (CSR lists).
      const edge = region <= 3;
      kind = edge ? 1 : 2;
      index = edge ? mesh.triEdges[3 * t + region - 1] : mesh.triangles[3 * t + region - 4];
      const start = edge ? mesh.edgeFaceStart : mesh.vertexTriStart;
      const list = edge ? mesh.edgeFaces : mesh.vertexTris;
      if (!ownsFeature(mesh, list, start[index], start[index + 1], t)) continue;
    }
    if (!(gap < margin)) continue;
    // World normal and the mesh's surface point (the closest point).
    const wx = R[0] * nx + R[1] * ny + R[2] * nz;
    const wy = R[3] * nx + R[4] * ny + R[5] * nz;
    const wz = R[6] * nx + R[7] * ny + R[8] * nz;
    // Mesh surface point on the normal line through the centre: q − (gap + r) n.
    const s = gap + r;
    CONTACT[0] = pb.p[0] - s * wx;
    CONTACT[1] = pb.p[1] - s * wy;
    CONTACT[2] = pb.p[2] - s * wz;
    CONTACT[3] = wx;
    CONTACT[4] = wy;
    CONTACT[5] = wz;
    CONTACT[6] = gap;
    const start = out.count;
    pushContactFromA(out, kind);
    out.mixFeatures(start, index, kind);
  }
}

/**
 * Slots of a shape's FarAxes: triangle t in slot farSlot(t), the top 6 bits of t times
 * 2^32/φ mod 2^32 (Fibonacci hashing: in t mod 64, the neighbouring triangles of a grid
 * terrain of 32 cells a row, 64 triangles apart, would share a slot).
 */
const FAR_SLOTS = 64;

function farSlot(t: number): number {
  return Math.imul(t, 0x9e3779b1) >>> 26;
}

/**
 * The separating axes of the triangles that the last detection's GJK found at least the
 * reach apart from a shape (pair.ts CORES_FAR, the unit normal mesh → shape in the world):
 * a direct-mapped cache per shape (a slot holds one triangle, −1 none; farSlot). A shape
 * that moved a little is usually still separated along the same axis, which one support
 * query per side proves (stillFar) instead of GJK's three or so. The cache only decides
 * whether GJK runs, and only skips it where GJK would find no contact: the contacts do
 * not depend on it (a restored simulation starts without it and gets the same ones).
 * On H-100 (steps 101–600) it halves the GJK runs, 677 → 353 a step (324 skipped, 3 of
 * them found far again after a failed stillFar), their support points 3990 → 2749.
 */
class FarAxes {
  readonly tri = new Int32Array(FAR_SLOTS).fill(-1);
  readonly axis = new Float64Array(3 * FAR_SLOTS);
}

/**
 * Far axes by the shape they separate from a mesh's triangles (shape objects are the
 * model's; a shape against two meshes shares one: a slot of the other mesh's triangle of
 * the same index then fails stillFar, or holds, both proofs on the current poses).
 */
const FAR_AXES = new WeakMap<Shape, FarAxes>();

/**
 * Whether TRI and the core `other` are still separated along the cached unit axis
 * axis[o..o+2] (mesh → other) by at least reach + 1e-6 size (reach = MARGIN[0] + other's
 * sweep, size = the sum of the bounding radii). Their distance is then at least that, and
 * collideCores would give no contact: its gap is within 1e-7 size of the distance once GJK
 * has converged (pair.ts distance), so the 1e-6 keeps the skip away from the margin.
 */
function stillFar(axis: Float64Array, o: number, other: ConvexShape): boolean {
  separationAlong(TRI, other, axis, o, 1);
  const size = TRI.boundingRadius() + other.boundingRadius();
  return ALONG[0] >= MARGIN[0] + other.sweep[0] + 1e-6 * size;
}

/**
 * Mesh against a capsule (its segment, the radius added), a box, a cylinder or a hull:
 * each candidate triangle against the shape's core (convex/cores.ts placeCore).
 */
export function meshCores(
  a: MeshShape,
  pa: WorldPose,
  b: CoreShape,
  pb: WorldPose,
  margin: number,
  out: ContactBuffer,
): void {
  MARGIN[0] = margin;
  meshCore(a, pa, b, pb, placeCore(b, pb, 1), out);
}

/**
 * The candidate triangles of the mesh against the placed core `other` (see the file
 * comment), below the margin in helpers.ts MARGIN[0] (written by the caller: a double
 * argument would be boxed, and collideCores takes it from there too).
 */
function meshCore(
  a: MeshShape,
  pa: WorldPose,
  b: Shape,
  pb: WorldPose,
  other: ConvexShape,
  out: ContactBuffer,
): void {
  const mesh = a.mesh;
  candidates(mesh, pa, b, pb);
  const boxed = placeBox(b, pb);
  let far = FAR_AXES.get(b);
  if (far === undefined) {
    far = new FarAxes();
    FAR_AXES.set(b, far);
  }
  const pairStart = out.count;
  const nFound = FOUND.count;
  for (let i = 0; i < nFound; i++) {
    const t = FOUND.tris[i];
    // A triangle far at the last detection passed the box test then: its axis first.
    const slot = farSlot(t);
    const cached = far.tri[slot] === t;
    if (!cached && boxed && boxSeparates(mesh, pa, t, pb)) continue;
    TRI.place(pa, mesh, t);
    if (cached && (stillFar(far.axis, 3 * slot, other) || (boxed && boxSeparates(mesh, pa, t, pb))))
      continue;
    const start = out.count;
    collideCores(TRI, other, out);
    if (CORES_FAR[0] === 1) {
      far.tri[slot] = t;
      far.axis[3 * slot] = RES[0];
      far.axis[3 * slot + 1] = RES[1];
      far.axis[3 * slot + 2] = RES[2];
    } else if (far.tri[slot] === t) far.tri[slot] = -1;
    for (let c = start; c < out.count; c++)
      if (!voronoiNormal(mesh, pa, t, out, c)) faceNormal(mesh, pa, OWNER[0], out, c);
    // Drop the contacts below the margin no more, and merge those at an earlier one's point.
    for (let c = start; c < out.count; ) {
      if (!(out.gap[c] < MARGIN[0]) || merged(out, pairStart, c, other)) {
        out.removeAt(c);
        continue;
      }
      c++;
    }
    out.mixFeatures(start, t, 7);
  }
}

/**
 * voronoiNormal's answer when false: the triangle whose face the contact is turned to
 * (faceNormal), t itself for a point inside t, else of the triangles around the edge or
 * corner the one whose face normal is nearest the contact's (t on a tie).
 */
const OWNER = new Int32Array(1);

/**
 * Whether contact c's normal (mesh → other) is valid for triangle t: the face normal, or
 * within the Voronoi region of the edge or corner of t that the contact's mesh-side point
 * lies on (see the file comment). Border edges (one face) accept any normal. When not,
 * OWNER[0] is the face it belongs to: t's, or at an edge or corner the face around it
 * nearest in normal. A closed mesh (a link's collision mesh) resting tilted by ε on a box
 * meets it at a bottom corner with the box's normal ε outside that corner's region: the
 * bottom face's, not the side triangle's, which had turned the contact onto its own
 * horizontal normal, a sideways contact of gap 0 at every bottom corner (an arm's link,
 * 3 kg, at rest with Σ F_n = 8.5 m g: the side contacts squeezing it, their friction
 * holding it up).
 */
function voronoiNormal(
  mesh: TriangleMesh,
  pa: WorldPose,
  t: number,
  out: ContactBuffer,
  c: number,
): boolean {
  const R = pa.R;
  const wx = out.normal[3 * c];
  const wy = out.normal[3 * c + 1];
  const wz = out.normal[3 * c + 2];
  // Normal and mesh-side point in the mesh frame.
  const nx = R[0] * wx + R[3] * wy + R[6] * wz;
  const ny = R[1] * wx + R[4] * wy + R[7] * wz;
  const nz = R[2] * wx + R[5] * wy + R[8] * wz;
  const fnx = mesh.normals[3 * t];
  const fny = mesh.normals[3 * t + 1];
  const fnz = mesh.normals[3 * t + 2];
  if (nx * fnx + ny * fny + nz * fnz >= 1 - 1e-9) return true;
  OWNER[0] = t;
  const hg = 0.5 * out.gap[c];
  const px = out.point[3 * c] - hg * wx - pa.p[0];
  const py = out.point[3 * c + 1] - hg * wy - pa.p[1];
  const pz = out.point[3 * c + 2] - hg * wz - pa.p[2];
  Q[0] = R[0] * px + R[3] * py + R[6] * pz;
  Q[1] = R[1] * px + R[4] * py + R[7] * pz;
  Q[2] = R[2] * px + R[5] * py + R[8] * pz;
  loadCorners(mesh, t);
  closestOnTriangle(CORNERS, Q);
  const region = borderRegion();
  if (region === 0) return false;
  const x = mesh.vertices;
  const tol = 1e-9;
  if (region <= 3) {
    const e = mesh.triEdges[3 * t + region - 1];
    const f0 = mesh.edgeFaceStart[e];
    const f1 = mesh.edgeFaceStart[e + 1];
    if (f1 - f0 === 1) return true;
    const u = mesh.edges[2 * e];
    const w = mesh.edges[2 * e + 1];
    const ex = x[3 * w] - x[3 * u];
    const ey = x[3 * w + 1] - x[3 * u + 1];
    const ez = x[3 * w + 2] - x[3 * u + 2];
    for (let j = f0; j < f1; j++) {
      const g = mesh.edgeFaces[j];
      // t_g: in g's plane, ⟂ the edge, pointing into g (towards its third corner).
      const gx = mesh.normals[3 * g];
      const gy = mesh.normals[3 * g + 1];
      const gz = mesh.normals[3 * g + 2];
      let tx = gy * ez - gz * ey;
      let ty = gz * ex - gx * ez;
      let tz = gx * ey - gy * ex;
      let third = mesh.triangles[3 * g];
      if (third === u || third === w) third = mesh.triangles[3 * g + 1];
      if (third === u || third === w) third = mesh.triangles[3 * g + 2];
      if (
        tx * (x[3 * third] - x[3 * u]) +
          ty * (x[3 * third + 1] - x[3 * u + 1]) +
          tz * (x[3 * third + 2] - x[3 * u + 2]) <
        0
      ) {
        tx = -tx;
        ty = -ty;
        tz = -tz;
      }
      const tl = Math.sqrt(tx * tx + ty * ty + tz * tz);
      if ((nx * tx + ny * ty + nz * tz) / tl > tol) {
        nearestFace(mesh, mesh.edgeFaces, f0, f1, t, nx, ny, nz);
        return false;
      }
    }
    return true;
  }
  const v = mesh.triangles[3 * t + region - 4];
  for (let j = mesh.vertexAdjStart[v]; j < mesh.vertexAdjStart[v + 1]; j++) {
    const w = mesh.vertexAdj[j];
    const ex = x[3 * w] - x[3 * v];
    const ey = x[3 * w + 1] - x[3 * v + 1];
    const ez = x[3 * w + 2] - x[3 * v + 2];
    const el = Math.sqrt(ex * ex + ey * ey + ez * ez);
    if ((nx * ex + ny * ey + nz * ez) / el > tol) {
      nearestFace(
        mesh,
        mesh.vertexTris,
        mesh.vertexTriStart[v],
        mesh.vertexTriStart[v + 1],
        t,
        nx,
        ny,
        nz,
      );
      return false;
    }
  }
  return true;
}

/**
 * The edge (1 + k: corner k → k + 1) or corner (4 + k) of the triangle CORNERS that the
 * point CLOSEST (on it) lies on within the triangle core's tolerance (TRI.v[14], 1e-9 of
 * its radius; TRI is the triangle at hand), else 0 (the interior). Not closestOnTriangle's
 * exact REGION: a contact's mesh-side point at a corner comes out of the contact's point
 * and gap with rounding, as often just inside the triangle or on one of the corner's
 * edges as on the corner (1e-17 m off, for the corners of a mesh box resting tilted by
 * 1e-6 rad on a box), and the feature it sits on decides its normal. The distance to the
 * edge opposite corner k is ((c_{k+1} − P) × (c_{k+2} − P))·n / |c_{k+2} − c_{k+1}| (twice
 * the area of that sub-triangle over its base; n the unit normal TRI.v[9..11], of the
 * corners' winding).
 */
function borderRegion(): number {
  const v = TRI.v;
  let count = 0;
  let near = 0;
  let far = 0;
  for (let k = 0; k < 3; k++) {
    const i = 3 * ((k + 1) % 3);
    const j = 3 * ((k + 2) % 3);
    const ax = CORNERS[i] - CLOSEST[0];
    const ay = CORNERS[i + 1] - CLOSEST[1];
    const az = CORNERS[i + 2] - CLOSEST[2];
    const bx = CORNERS[j] - CLOSEST[0];
    const by = CORNERS[j + 1] - CLOSEST[1];
    const bz = CORNERS[j + 2] - CLOSEST[2];
    const twice =
      (ay * bz - az * by) * v[9] + (az * bx - ax * bz) * v[10] + (ax * by - ay * bx) * v[11];
    const ex = CORNERS[j] - CORNERS[i];
    const ey = CORNERS[j + 1] - CORNERS[i + 1];
    const ez = CORNERS[j + 2] - CORNERS[i + 2];
    if (twice <= v[14] * Math.sqrt(ex * ex + ey * ey + ez * ez)) {
      count++;
      near = k;
    } else far = k;
  }
  // near one edge: the one opposite corner `near` (corner near + 1 → near + 2); near two:
  // the corner between them, the one opposite the far edge
  if (count === 0) return 0;
  return count === 1 ? 1 + ((near + 1) % 3) : 4 + far;
}

/**
 * OWNER[0]: of the triangles list[from..to) (t among them), the one whose face normal is
 * nearest n (mesh frame, largest n·n_g; t unless another is strictly nearer).
 */
function nearestFace(
  mesh: TriangleMesh,
  list: Int32Array,
  from: number,
  to: number,
  t: number,
  nx: number,
  ny: number,
  nz: number,
): void {
  const fn = mesh.normals;
  let best = t;
  let bestDot = nx * fn[3 * t] + ny * fn[3 * t + 1] + nz * fn[3 * t + 2];
  for (let j = from; j < to; j++) {
    const g = list[j];
    const d = nx * fn[3 * g] + ny * fn[3 * g + 1] + nz * fn[3 * g + 2];
    if (d > bestDot) {
      bestDot = d;
      best = g;
    }
  }
  OWNER[0] = best;
}

/**
 * Moves contact c onto the face normal n_t (world) of triangle f (the current triangle, or
 * at its edge or corner the neighbour that owns the contact: voronoiNormal), keeping the
 * other shape's surface point b = p + (g/2) n and measuring the gap from the plane of f
 * through the mesh's point a = p − (g/2) n (on the current triangle, at a feature it
 * shares with f, so on f's plane too): g' = (b − a)·n_t = g n·n_t, the point
 * b − (g'/2) n_t. Bullet's btAdjustInternalEdgeContacts turns the normal the same way,
 * keeping the point on the shape. Measured at the contact, not over the whole shapes: the
 * separation of the shapes along n_t is negative for a shape over a ridge whose far side
 * hangs below the plane of t (a box 1 mm over a 1° ridge got a contact of gap −4 mm).
 */
function faceNormal(
  mesh: TriangleMesh,
  pa: WorldPose,
  f: number,
  out: ContactBuffer,
  c: number,
): void {
  const R = pa.R;
  const fn = mesh.normals;
  const fx = fn[3 * f];
  const fy = fn[3 * f + 1];
  const fz = fn[3 * f + 2];
  const nx = R[0] * fx + R[1] * fy + R[2] * fz;
  const ny = R[3] * fx + R[4] * fy + R[5] * fz;
  const nz = R[6] * fx + R[7] * fy + R[8] * fz;
  const n = out.normal;
  const p = out.point;
  const g = out.gap[c];
  const h = 0.5 * g;
  const gt = g * (n[3 * c] * nx + n[3 * c + 1] * ny + n[3 * c + 2] * nz);
  const ht = 0.5 * gt;
  p[3 * c] += h * n[3 * c] - ht * nx;
  p[3 * c + 1] += h * n[3 * c + 1] - ht * ny;
  p[3 * c + 2] += h * n[3 * c + 2] - ht * nz;
  n[3 * c] = nx;
  n[3 * c + 1] = ny;
  n[3 * c + 2] = nz;
  out.gap[c] = gt;
}

/**
 * merged's thresholds: the shape's surface points within MERGE_DISTANCE times its size
 * (its core's bounding radius plus its sweep radius: 0.04–0.1 mm for H-100's hulls, the
 * order of the position projection's 0.1 mm), normals within 2° (cos ≥ MERGE_COS).
 */
const MERGE_DISTANCE = 1e-3;
const MERGE_COS = Math.cos((2 * Math.PI) / 180);

/**
 * Whether contact c merges into an earlier contact k of the pair (from pairStart: of an
 * earlier triangle, or of this one): the shape's surface points p + (g/2) n within
 * MERGE_DISTANCE of its size (one point of it on several triangles), normals within 2°.
 * k takes c's point, normal and gap if c is the deeper, and keeps its feature and key:
 * the first triangle in the BVH's order names the merged contact whichever is deepest,
 * so its warm start carries over while the deepest changes.
 *
 * Why. A hull vertex at a mesh vertex or edge between nearly coplanar triangles touches
 * each of them, and each gives a contact at its face normal (voronoiNormal, faceNormal)
 * at the same point of the hull: on H-100's terrain a third of the contacts, normals
 * 0.02–3° apart. Two such rows of W, J_i = [n_iᵀ, (r × n_i)ᵀ] with |n_1 × n_2| = sin θ,
 * differ by O(θ): the pair's 2 × 2 block has eigenvalues about w(1 ± cos θ), a condition
 * 4/θ², along which the contact solver moves load between the two with no change of
 * velocity (its slowest case). One contact of the deeper gap g_1 = min(g_1, g_2) along its
 * own normal n_1 replaces them: moving the point by −g_1 n_1 closes g_1 and leaves the
 * other gap g_2 − g_1 cos θ ≥ g_1 (1 − cos θ) ≈ −|g_1| θ²/2, second order in θ. What it
 * gives up: in a concave crease the tangential velocities along face 1 that enter face 2,
 * at |v_t| sin θ ≤ 0.035 |v_t| (hence the 2° bound), until the next detection, where
 * face 2 is the deeper and its contact the one kept. On a flat region (a box flat across
 * a shared edge) the triangles' contacts coincide in point, normal and gap and one is
 * kept; over a ridge each triangle's contact is turned about the same point of the shape.
 * A shape sliding across internal edges keeps face normals only (voronoiNormal), so a
 * merge drops a contact and never tilts one: no snagging. Bullet's persistent manifold
 * does the like (btPersistentManifold::getCacheEntry: a new point within the breaking
 * threshold of a cached one replaces it), without the bound on the normals.
 */
function merged(out: ContactBuffer, pairStart: number, c: number, other: ConvexShape): boolean {
  const p = out.point;
  const n = out.normal;
  const tol = MERGE_DISTANCE * (other.boundingRadius() + other.sweep[0]);
  // The shape's surface points p + (g/2) n: one vertex of it on several triangles.
  const gc = 0.5 * out.gap[c];
  const bx = p[3 * c] + gc * n[3 * c];
  const by = p[3 * c + 1] + gc * n[3 * c + 1];
  const bz = p[3 * c + 2] + gc * n[3 * c + 2];
  for (let k = pairStart; k < c; k++) {
    const gk = 0.5 * out.gap[k];
    const dx = p[3 * k] + gk * n[3 * k] - bx;
    const dy = p[3 * k + 1] + gk * n[3 * k + 1] - by;
    const dz = p[3 * k + 2] + gk * n[3 * k + 2] - bz;
    if (dx * dx + dy * dy + dz * dz > tol * tol) continue;
    if (n[3 * k] * n[3 * c] + n[3 * k + 1] * n[3 * c + 1] + n[3 * k + 2] * n[3 * c + 2] < MERGE_COS)
      continue;
    if (out.gap[c] < out.gap[k]) {
      out.gap[k] = out.gap[c];
      for (let i = 0; i < 3; i++) {
        p[3 * k + i] = p[3 * c + i];
        n[3 * k + i] = n[3 * c + i];
      }
    }
    return true;
  }
  return false;
}
