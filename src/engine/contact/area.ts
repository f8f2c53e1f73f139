/**
 * Contact areas for compliant contact (the `contactArea` argument of
 * ContactBehavior.computeResponse), as ArtiSynth defines them, plus documented
 * equivalents for the analytic shapes of the collision layer.
 *
 * ArtiSynth (ContactForceBehavior.computeResponse): for a vertex penetration contact the
 * area is one third of the area of each face around the penetrating vertex, projected on
 * the plane perpendicular to the normal; for two-way contact (vertex penetrations computed
 * for both collidables) it is halved, since both vertex sets then cover the same patch;
 * for a contour region it is the region's area divided by its number of contact points.
 *
 * Analytic equivalents (the collision layer has no meshes):
 *  - box vertex (plane–box, and box–box pairs with one or two points): the box surface is
 *    a mesh of six quads; a vertex's share of a quad is one quarter (the average of the
 *    one-third shares over the quad's two triangulations), so the area is
 *    Σ_j (1/4)(4 h_k h_l)|b_j·n| = Σ_j h_k h_l |b_j·n| over the three faces at the vertex
 *    (b_j the box axes; {j, k, l} a permutation of the axes). A box lying flat on a face
 *    gets a quarter of that face per corner: its four corners cover the face exactly.
 *  - box–box manifolds of three or more points (face on face): a contour region, the
 *    convex hull of the pair's points projected on the normal plane, divided by the count;
 *    the same for any pair with a cylinder (against a plane, box or cylinder) with three
 *    or more points (a cap flush on a face or cap: its rim points, or the clipped cap).
 *  - cylinder rim points otherwise (one or two points: a rim point, a side line's two
 *    ends): the cylinder as the mesh of its narrow-phase rim samples (RIM_SAMPLES per cap,
 *    the cap an RIM_SAMPLES-gon, the side RIM_SAMPLES quads), a rim vertex's share as for
 *    the box: 1/RIM_SAMPLES of the cap and a quarter of its two side quads,
 *    (π r² |z·n| + 2π r L √(1 − (z·n)²))/RIM_SAMPLES (z the axis; the radial direction of
 *    the vertex taken along n's). A cylinder lying on a face: π r L/4 at each end of its
 *    line contact; against a box the smaller of the two shapes' rules, as box–box.
 *  - convex hulls: a contact with three or more points (a face on a face or on a terrain's
 *    triangles) is a contour region, as box–box above; with one or two, the hull vertex
 *    nearest the contact point, whose share of each face around it is the face's area
 *    divided by its number of vertices (one third of a triangle as ArtiSynth's rule, a
 *    quarter of a quad as the box's), projected on the normal plane:
 *    Σ_f (A_f / m_f)|n̂_f·n|. A box given as its eight corners gets the box's rule exactly.
 *  - triangle meshes: the contour region as above with three or more points; with fewer,
 *    the other shape's rule (a box, cylinder or hull vertex on the mesh's faces: the vertex
 *    of the bounded shape is what penetrates a terrain).
 *  Cylinders count as flat for the curvature radius (surfaceRadius: the cap is flat and
 *  the side straight along the axis), so Hertz uses the flat-punch law with these areas.
 *  - round contacts (a sphere, or a capsule end or side, against anything): the circle in
 *    which the two surfaces overlap, π a² with a² = 2 R δ − δ² (R = 1/(1/r₀ + 1/r₁) the
 *    effective radius, δ = −dist the penetration): exact for a sphere cutting a plane, the
 *    first-order (Hertz) circle for two spheres. Zero when not penetrating.
 *  - a capsule's axis samples on a fem body's faces (fem-faces.ts): the strip its side
 *    cuts over each sample's length of axis and the end discs (capsuleSampleArea); a box's
 *    edge samples there: each face's area shared among its rim's samples (boxSampleArea).
 * All areas in m². Nothing here allocates.
 */

import type { ContactBuffer } from "../geometry/contact-buffer";
import { RIM_SAMPLES } from "../geometry/cylinder";
import { type ConvexHull, supportVertex } from "../geometry/hull";
import type { WorldPose } from "../geometry/pose";
import type { ShapeInstance } from "../geometry/shapes";
import { length3 } from "../math/vec3";

/**
 * ArtiSynth's vertex area: (1/3) Σ_f A_f |n̂_f·n| over the triangles f around the vertex,
 * given as 9 numbers each (three corners, world).
 * |n̂_f·n| A_f = |((p1 − p0) × (p2 − p0))·n| / 2, the triangle's area projected on the
 * plane ⊥ n (n unit).
 */
export function vertexContactArea(
  triangles: ArrayLike<number>,
  count: number,
  normal: ArrayLike<number>,
): number {
  let s = 0;
  for (let f = 0; f < count; f++) {
    const o = 9 * f;
    const ux = triangles[o + 3] - triangles[o];
    const uy = triangles[o + 4] - triangles[o + 1];
    const uz = triangles[o + 5] - triangles[o + 2];
    const vx = triangles[o + 6] - triangles[o];
    const vy = triangles[o + 7] - triangles[o + 1];
    const vz = triangles[o + 8] - triangles[o + 2];
    const cx = uy * vz - uz * vy;
    const cy = uz * vx - ux * vz;
    const cz = ux * vy - uy * vx;
    s += 0.5 * Math.abs(cx * normal[0] + cy * normal[1] + cz * normal[2]);
  }
  return s / 3;
}

/**
 * Box vertex area Σ_j h_k h_l |b_j·n| (see the file comment): h the half extents, R the
 * box's row-major world rotation (column j = axis b_j), n = normal[no..no+2] unit. The same for all eight
 * vertices (each touches one face per axis).
 */
export function boxVertexArea(
  halfExtents: ArrayLike<number>,
  R: ArrayLike<number>,
  normal: ArrayLike<number>,
  no = 0,
): number {
  const hx = halfExtents[0];
  const hy = halfExtents[1];
  const hz = halfExtents[2];
  const x = normal[no];
  const y = normal[no + 1];
  const z = normal[no + 2];
  const d0 = Math.abs(R[0] * x + R[3] * y + R[6] * z);
  const d1 = Math.abs(R[1] * x + R[4] * y + R[7] * z);
  const d2 = Math.abs(R[2] * x + R[5] * y + R[8] * z);
  return hy * hz * d0 + hx * hz * d1 + hx * hy * d2;
}

/**
 * Cylinder rim vertex area (π r² |z·n| + 2π r L √(1 − (z·n)²))/RIM_SAMPLES (see the file
 * comment): r, L the radius and half-length, R the cylinder's row-major world rotation
 * (column 2 = axis z), n = normal[no..no+2] unit.
 */
export function cylinderRimArea(
  radius: number,
  halfLength: number,
  R: ArrayLike<number>,
  normal: ArrayLike<number>,
  no = 0,
): number {
  const c = Math.abs(R[2] * normal[no] + R[5] * normal[no + 1] + R[8] * normal[no + 2]);
  const s = Math.sqrt(Math.max(0, 1 - c * c));
  return (Math.PI * radius * (radius * c + 2 * halfLength * s)) / RIM_SAMPLES;
}

/**
 * Local direction of hullVertexArea's support query, and its own hill-climbing start (the
 * hull's hint is the narrow phase's: among tied vertices the start decides which is found).
 */
const DIR = new Float64Array(3);
const HINT = new Int32Array(1);

/**
 * Hull vertex area Σ_f (A_f / m_f)|n̂_f·n| over the faces f (m_f vertices each) around the
 * hull vertex nearest the world point point[po..po+2] (see the file comment); the hull in
 * its shape frame at pose (p, R row-major), n = normal[no..no+2] unit, world, pointing out
 * of the hull for side = 1 (the hull is the pair's a), into it for side = −1 (its b).
 */
export function hullVertexArea(
  hull: ConvexHull,
  p: ArrayLike<number>,
  R: ArrayLike<number>,
  point: ArrayLike<number>,
  po: number,
  normal: ArrayLike<number>,
  no: number,
  side = 1,
): number {
  // the point and the normal in the shape frame: Rᵀ (x − p), Rᵀ n
  const dx = point[po] - p[0];
  const dy = point[po + 1] - p[1];
  const dz = point[po + 2] - p[2];
  const x = R[0] * dx + R[3] * dy + R[6] * dz;
  const y = R[1] * dx + R[4] * dy + R[7] * dz;
  const z = R[2] * dx + R[5] * dy + R[8] * dz;
  const nx = R[0] * normal[no] + R[3] * normal[no + 1] + R[6] * normal[no + 2];
  const ny = R[1] * normal[no] + R[4] * normal[no + 1] + R[7] * normal[no + 2];
  const nz = R[2] * normal[no] + R[5] * normal[no + 1] + R[8] * normal[no + 2];
  // The vertex nearest the point: from the hull's support vertex along the normal out of
  // the hull (side·n: the contact lies on that support set), a descent of |v − x|² over the
  // vertex adjacency (to the contact's own end of a supporting edge or face).
  DIR[0] = side * nx;
  DIR[1] = side * ny;
  DIR[2] = side * nz;
  const v = hull.vertices;
  HINT[0] = Math.min(HINT[0], hull.source.length - 1);
  let nearest = supportVertex(hull, DIR, HINT);
  let best =
    (v[3 * nearest] - x) ** 2 + (v[3 * nearest + 1] - y) ** 2 + (v[3 * nearest + 2] - z) ** 2;
  for (let moved = true; moved; ) {
    moved = false;
    for (let k = hull.adjStart[nearest]; k < hull.adjStart[nearest + 1]; k++) {
      const w = hull.adjacent[k];
      const d = (v[3 * w] - x) ** 2 + (v[3 * w + 1] - y) ** 2 + (v[3 * w + 2] - z) ** 2;
      if (d < best) {
        best = d;
        nearest = w;
        moved = true;
      }
    }
  }
  let a = 0;
  for (let s = hull.vertexFaceStart[nearest]; s < hull.vertexFaceStart[nearest + 1]; s++) {
    const f = hull.vertexFaces[s];
    const m = hull.faceStart[f + 1] - hull.faceStart[f];
    const fn = hull.faceNormals;
    const c = Math.abs(fn[3 * f] * nx + fn[3 * f + 1] * ny + fn[3 * f + 2] * nz);
    a += (hull.faceAreas[f] / m) * c;
  }
  return a;
}

/**
 * The intervals m_j along box axis j of a box's edge samples on fem faces (fem-faces.ts,
 * "Rigid shapes"): ⌈h_j / h_mid⌉ (h the half extents, h_mid the middle one), so that the
 * samples along every edge are at most the box's middle side 2 h_mid apart: a beam's long
 * edges are sampled at its width, a cube's or a plate's (two sides alike) not at all (its
 * corners alone; the smallest side would put thousands of samples on a thin plate's rim).
 * Written into out[0..2].
 */
export function boxSampleIntervals(halfExtents: ArrayLike<number>, out: Int32Array): void {
  const [x, y, z] = [halfExtents[0], halfExtents[1], halfExtents[2]];
  const middle = x + y + z - Math.max(x, y, z) - Math.min(x, y, z);
  // less a part in 10¹²: a whole ratio up to round-off takes that many intervals
  for (let j = 0; j < 3; j++) out[j] = Math.ceil((halfExtents[j] / middle) * (1 - 1e-12));
}

/**
 * The area of a box's edge sample at local point[po..po+2] (a corner or a point of an edge;
 * m = boxSampleIntervals): each face j it lies on (|p_j| = h_j), of area 4 h_k h_l, shared
 * among the 2(m_k + m_l) samples of its rim and projected on the plane ⊥ n:
 *   Σ_j [|p_j| = h_j] 4 h_k h_l / (2(m_k + m_l)) |b_j·n|,
 * R the box's row-major world rotation (column j = axis b_j), n = normal[no..no+2] unit. A
 * cube (m = 1) gets boxVertexArea at each corner; a face lying on a face gets its area
 * exactly over its rim's samples.
 */
export function boxSampleArea(
  halfExtents: ArrayLike<number>,
  m: Int32Array,
  point: ArrayLike<number>,
  po: number,
  R: ArrayLike<number>,
  normal: ArrayLike<number>,
  no = 0,
): number {
  let a = 0;
  for (let j = 0; j < 3; j++) {
    const h = halfExtents[j];
    // on face ±j: the samples are set at exactly ±h_j there (fem-faces.ts contactPoints)
    if (Math.abs(point[po + j]) !== h) continue;
    const k = (j + 1) % 3;
    const l = (j + 2) % 3;
    const bn = R[j] * normal[no] + R[3 + j] * normal[no + 1] + R[6 + j] * normal[no + 2];
    a += ((4 * halfExtents[k] * halfExtents[l]) / (2 * (m[k] + m[l]))) * Math.abs(bn);
  }
  return a;
}

/**
 * The most intervals of a capsule's axis samples (capsuleSampleIntervals): 65 points at most.
 */
export const CAPSULE_MAX_INTERVALS = 64;

/**
 * The intervals m of a capsule's axis samples on fem faces (fem-faces.ts, "Rigid shapes"):
 * the m + 1 points z_j = −L + 2 L j/m of the segment, m = min(⌈2L/r⌉, CAPSULE_MAX_INTERVALS),
 * i.e. the spacing s = 2L/m is max(r, 2L/64) (m = 0, the centre alone, for L = 0). Without
 * the cap the count grew with L/r (a 4 m capsule of r = 1 cm: 401 points, each a BVH query
 * every detection). The spacing bounds the force's error: a face patch of length W under
 * the capsule holds N samples with |N s − W| ≤ s, so under a law per unit area the sampled
 * strip N s · 2√(2rδ − δ²) errs from the patch's by at most s/W (1/64 of the capsule's
 * length over W, once 2L > 64 r); under a law per contact the N samples share m g whatever
 * N. A patch shorter than s may hold no sample: there the fem vertices alone meet the
 * capsule (fem-vertices.ts), as before for a patch shorter than r.
 */
export function capsuleSampleIntervals(radius: number, halfLength: number): number {
  // less a part in 10¹²: 2L/r a whole number up to round-off (1.05/0.05 = 21.000000000000004)
  // takes that many intervals, not one more
  if (!(halfLength > 0)) return 0;
  return Math.min(CAPSULE_MAX_INTERVALS, Math.ceil(((2 * halfLength) / radius) * (1 - 1e-12)));
}

/**
 * The area of axis sample j of m (capsuleSampleIntervals) of a capsule of radius r and
 * half-length L at penetration δ = −dist into a flat face of unit normal n =
 * normal[no..no+2], c = |z·n| (z the axis: R's column 2, R row-major):
 *   ℓ_j √(1 − c²) 2√(2 r δ − δ²)  +  [j an end] ½(1 + c) π (2 r δ − δ²),
 * ℓ_j = 2L/m (half that at the two ends) the length of axis the sample stands for. The
 * side lying on the face (c = 0) cuts it in a strip: the cross-section ⊥ the axis, a circle
 * of radius r whose lowest point is δ under the face, meets it in a chord of half-width
 * √(r² − (r − δ)²) = √(2 r δ − δ²); along the axis the strip's length projects on the face
 * with √(1 − c²). The two hemispherical ends cut it in two half discs of radius
 * √(2 r δ − δ²) (½ each lying flat), one whole disc standing (c = 1, the lower end alone
 * in contact). Lying flat at one depth the samples sum to the capsule's exact section,
 *   2 L · 2√(2 r δ − δ²) + π (2 r δ − δ²);
 * a sample that does not penetrate has none. For m = 0 (a sphere): the disc.
 */
export function capsuleSampleArea(
  radius: number,
  halfLength: number,
  j: number,
  R: ArrayLike<number>,
  normal: ArrayLike<number>,
  no: number,
  dist: number,
): number {
  const d = -dist;
  if (!(d > 0)) return 0;
  const a2 = Math.max(0, 2 * radius * d - d * d);
  const m = capsuleSampleIntervals(radius, halfLength);
  if (m === 0) return Math.PI * a2;
  const c = Math.min(
    1,
    Math.abs(R[2] * normal[no] + R[5] * normal[no + 1] + R[8] * normal[no + 2]),
  );
  const end = j === 0 || j === m;
  const length = ((end ? 1 : 2) * halfLength) / m;
  const strip = length * Math.sqrt(1 - c * c) * 2 * Math.sqrt(a2);
  return end ? strip + 0.5 * (1 + c) * Math.PI * a2 : strip;
}

/** π a² with a² = max(0, 2 R δ − δ²), δ = −dist; R may be Infinity only with δ = 0. */
export function roundContactArea(effectiveRadius: number, dist: number): number {
  const d = -dist;
  if (!(d > 0)) return 0;
  if (effectiveRadius === Number.POSITIVE_INFINITY) return 0;
  return Math.PI * Math.max(0, 2 * effectiveRadius * d - d * d);
}

const HX = new Float64Array(16);
const HY = new Float64Array(16);
const HULL = new Int32Array(33);

/**
 * Area of the convex hull of k ≤ 16 points (x, y) (Andrew's monotone chain on the
 * points sorted by x then y, sorted here by insertion).
 */
export function convexHullArea2D(xs: Float64Array, ys: Float64Array, k: number): number {
  if (k < 3) return 0;
  // Insertion sort of the indices by (x, y).
  const idx = HULL;
  const ox = HX;
  const oy = HY;
  for (let i = 0; i < k; i++) {
    let j = i;
    const x = xs[i];
    const y = ys[i];
    while (j > 0 && (ox[j - 1] > x || (ox[j - 1] === x && oy[j - 1] > y))) {
      ox[j] = ox[j - 1];
      oy[j] = oy[j - 1];
      j--;
    }
    ox[j] = x;
    oy[j] = y;
  }
  const cross = (o: number, a: number, b: number) =>
    (ox[a] - ox[o]) * (oy[b] - oy[o]) - (oy[a] - oy[o]) * (ox[b] - ox[o]);
  let m = 0;
  for (let i = 0; i < k; i++) {
    while (m >= 2 && cross(idx[m - 2], idx[m - 1], i) <= 0) m--;
    idx[m++] = i;
  }
  const lower = m + 1;
  for (let i = k - 2; i >= 0; i--) {
    while (m >= lower && cross(idx[m - 2], idx[m - 1], i) <= 0) m--;
    idx[m++] = i;
  }
  // idx[0..m-1] is closed (last = first).
  let a = 0;
  for (let i = 0; i + 1 < m; i++) {
    const p = idx[i];
    const q = idx[i + 1];
    a += ox[p] * oy[q] - ox[q] * oy[p];
  }
  return 0.5 * Math.abs(a);
}

/**
 * Radius of curvature of a shape's surface at a contact (Infinity for flat ones: planes,
 * boxes and cylinders, whose caps are flat and side straight along the axis, and the
 * radius-0 points of fem surfaces, vertices of a flat-faced mesh: fem-vertices.ts).
 */
export function surfaceRadius(inst: ShapeInstance | undefined): number {
  if (!inst) return Number.POSITIVE_INFINITY;
  const s = inst.shape;
  return (s.type === "sphere" || s.type === "capsule") && s.radius > 0
    ? s.radius
    : Number.POSITIVE_INFINITY;
}

const PX = new Float64Array(16);
const PY = new Float64Array(16);

/**
 * Fills area[i] for the contacts 0..buf.count−1 of a detection, from the shapes and world
 * poses of the detector (see the file comment for the rules). Contacts of one shape pair
 * are contiguous in the buffer (the detector runs each pair's narrow phase at once).
 */
export function computeContactAreas(
  buf: ContactBuffer,
  shapes: readonly ShapeInstance[],
  poses: readonly WorldPose[],
  area: Float64Array,
): void {
  const n = buf.count;
  let i = 0;
  while (i < n) {
    const sa = buf.shapeA[i];
    const sb = buf.shapeB[i];
    let j = i + 1;
    while (j < n && buf.shapeA[j] === sa && buf.shapeB[j] === sb) j++;
    const A = shapes[sa]?.shape;
    const B = shapes[sb]?.shape;
    const round =
      A?.type === "sphere" ||
      A?.type === "capsule" ||
      B?.type === "sphere" ||
      B?.type === "capsule";
    if (round) {
      const R = 1 / (1 / surfaceRadius(shapes[sa]) + 1 / surfaceRadius(shapes[sb]));
      for (let k = i; k < j; k++) area[k] = roundContactArea(R, buf.gap[k]);
    } else if (
      ((A?.type === "box" && B?.type === "box") ||
        A?.type === "cylinder" ||
        B?.type === "cylinder" ||
        A?.type === "convex" ||
        B?.type === "convex" ||
        A?.type === "mesh" ||
        B?.type === "mesh") &&
      j - i >= 3 &&
      j - i <= 16
    ) {
      // Contour region: hull of the points in the normal plane of the first contact.
      const nx = buf.normal[3 * i];
      const ny = buf.normal[3 * i + 1];
      const nz = buf.normal[3 * i + 2];
      // Tangent basis t1 = n × e (e the axis least aligned with n), t2 = n × t1.
      let ex = 0;
      let ey = 0;
      let ez = 0;
      const ax = Math.abs(nx);
      const ay = Math.abs(ny);
      const az = Math.abs(nz);
      if (ax <= ay && ax <= az) ex = 1;
      else if (ay <= az) ey = 1;
      else ez = 1;
      let t1x = ny * ez - nz * ey;
      let t1y = nz * ex - nx * ez;
      let t1z = nx * ey - ny * ex;
      const l = length3(t1x, t1y, t1z);
      t1x /= l;
      t1y /= l;
      t1z /= l;
      const t2x = ny * t1z - nz * t1y;
      const t2y = nz * t1x - nx * t1z;
      const t2z = nx * t1y - ny * t1x;
      for (let k = i; k < j; k++) {
        const p = 3 * k;
        PX[k - i] = buf.point[p] * t1x + buf.point[p + 1] * t1y + buf.point[p + 2] * t1z;
        PY[k - i] = buf.point[p] * t2x + buf.point[p + 1] * t2y + buf.point[p + 2] * t2z;
      }
      const each = convexHullArea2D(PX, PY, j - i) / (j - i);
      for (let k = i; k < j; k++) area[k] = each;
    } else {
      // Box vertices (plane–box; box–box with one or two points: the smaller box's rule),
      // cylinder rim points, hull vertices; a mesh has no rule of its own.
      for (let k = i; k < j; k++) {
        let a = Number.POSITIVE_INFINITY;
        if (A?.type === "convex")
          a = hullVertexArea(
            A.hull,
            poses[sa].p,
            poses[sa].R,
            buf.point,
            3 * k,
            buf.normal,
            3 * k,
            1,
          );
        else if (A?.type === "box")
          a = Math.min(a, boxVertexArea(A.halfExtents, poses[sa].R, buf.normal, 3 * k));
        else if (A?.type === "cylinder")
          a = Math.min(a, cylinderRimArea(A.radius, A.halfLength, poses[sa].R, buf.normal, 3 * k));
        if (B?.type === "convex")
          a = Math.min(
            a,
            hullVertexArea(
              B.hull,
              poses[sb].p,
              poses[sb].R,
              buf.point,
              3 * k,
              buf.normal,
              3 * k,
              -1,
            ),
          );
        else if (B?.type === "box")
          a = Math.min(a, boxVertexArea(B.halfExtents, poses[sb].R, buf.normal, 3 * k));
        else if (B?.type === "cylinder")
          a = Math.min(a, cylinderRimArea(B.radius, B.halfLength, poses[sb].R, buf.normal, 3 * k));
        area[k] = a === Number.POSITIVE_INFINITY ? 0 : a;
      }
    }
    i = j;
  }
}
