/**
 * The exact mass properties of the convex hull of a small point set, for the H scenes'
 * descriptions (scene.ts): computed once there, so that every engine gets the same mass,
 * centre of mass and principal inertia (Bullet's btConvexHullShape would otherwise take
 * the inertia of its bounding box, and Moreau's and Rapier's their own hull's).
 *
 *  - hull: incremental (Clarkson–Shor order: the points in turn), each point that sees
 *    faces replaces them by a fan from the horizon; O(n F), meant for tens of points in
 *    general position (the bench's points carry random noise), not as a robust quickhull.
 *  - mass properties: divergence theorem over the hull's triangles, each with the
 *    reference point r (the points' mean, inside the hull) as the tetrahedron's apex:
 *    V = Σ det/6, ∫x dV = Σ det/24 (a + b + c), ∫x xᵀ dV = Σ det/120 (a aᵀ + b bᵀ + c cᵀ +
 *    s sᵀ) with s = a + b + c, det = a·(b × c), the vertices taken relative to r.
 *  - principal axes: cyclic Jacobi rotations of the 3 × 3 inertia tensor.
 */
import type { Vec3 } from "./scene";

/** A convex hull as triangles counter-clockwise seen from outside (indices into the points). */
export type Triangle = [number, number, number];

const sub = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const cross = (a: Vec3, b: Vec3): Vec3 => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];

interface Face {
  v: Triangle;
  /** Unnormalized outward normal and its plane offset: n·x = d on the face. */
  n: Vec3;
  d: number;
}

function face(p: Vec3[], a: number, b: number, c: number): Face {
  const n = cross(sub(p[b], p[a]), sub(p[c], p[a]));
  return { v: [a, b, c], n, d: dot(n, p[a]) };
}

/** Signed height of x above the face's plane (m; > 0 outside). */
const height = (f: Face, x: Vec3): number => (dot(f.n, x) - f.d) / Math.hypot(...f.n);

/**
 * Triangles of the convex hull of `p` (at least 4 points spanning a volume), outward
 * counter-clockwise. Points within 1e-12 of the extent of a face count as inside it.
 */
export function convexHullTriangles(p: Vec3[]): Triangle[] {
  const n = p.length;
  let extent = 0;
  for (const q of p) extent = Math.max(extent, Math.abs(q[0]), Math.abs(q[1]), Math.abs(q[2]));
  const eps = 1e-12 * extent;
  // Initial tetrahedron: 0, the farthest from it, the farthest from their line, the
  // farthest from their plane.
  const far = (score: (q: Vec3) => number): number => {
    let best = 0;
    for (let i = 1; i < n; i++) if (score(p[i]) > score(p[best])) best = i;
    return best;
  };
  const i0 = 0;
  const i1 = far((q) => Math.hypot(...sub(q, p[i0])));
  const e = sub(p[i1], p[i0]);
  const i2 = far((q) => Math.hypot(...cross(e, sub(q, p[i0]))));
  const m = cross(e, sub(p[i2], p[i0]));
  const i3 = far((q) => Math.abs(dot(m, sub(q, p[i0]))));
  if (Math.abs(dot(m, sub(p[i3], p[i0]))) <= eps * Math.hypot(...m))
    throw new Error("convexHullTriangles: the points do not span a volume");
  // Orient the first face so that i3 is below it (inside).
  let faces: Face[] =
    dot(m, sub(p[i3], p[i0])) < 0
      ? [face(p, i0, i1, i2), face(p, i0, i3, i1), face(p, i1, i3, i2), face(p, i2, i3, i0)]
      : [face(p, i0, i2, i1), face(p, i0, i1, i3), face(p, i1, i2, i3), face(p, i2, i0, i3)];
  for (let k = 0; k < n; k++) {
    if (k === i0 || k === i1 || k === i2 || k === i3) continue;
    const visible = faces.filter((f) => height(f, p[k]) > eps);
    if (visible.length === 0) continue; // inside the hull so far
    // Horizon: the directed edges u→w of visible faces whose reverse w→u is not one.
    const edges = new Set<number>();
    for (const f of visible) for (let j = 0; j < 3; j++) edges.add(f.v[j] * n + f.v[(j + 1) % 3]);
    faces = faces.filter((f) => height(f, p[k]) <= eps);
    for (const f of visible)
      for (let j = 0; j < 3; j++) {
        const u = f.v[j];
        const w = f.v[(j + 1) % 3];
        if (!edges.has(w * n + u)) faces.push(face(p, u, w, k));
      }
  }
  return faces.map((f) => f.v);
}

export interface MassProperties {
  /** kg */
  mass: number;
  /** Centre of mass, in the points' frame (m). */
  centre: Vec3;
  /** Principal moments about the centre (kg m²), ascending. */
  inertia: Vec3;
  /**
   * Principal axes: axes[k] is the unit axis of inertia[k] in the points' frame; they form
   * a right-handed frame (the rotation from the principal frame to the points' frame has
   * the axes as its columns).
   */
  axes: [Vec3, Vec3, Vec3];
}

/** Mass properties of the solid hull of `p` at uniform `density` (kg/m³). */
export function hullMassProperties(p: Vec3[], density: number): MassProperties {
  const tris = convexHullTriangles(p);
  const r: Vec3 = [0, 0, 0];
  for (const q of p) for (let k = 0; k < 3; k++) r[k] += q[k] / p.length;
  let vol = 0;
  const first: Vec3 = [0, 0, 0];
  const second = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (const [ia, ib, ic] of tris) {
    const a = sub(p[ia], r);
    const b = sub(p[ib], r);
    const c = sub(p[ic], r);
    const det = dot(a, cross(b, c));
    vol += det / 6;
    const s: Vec3 = [a[0] + b[0] + c[0], a[1] + b[1] + c[1], a[2] + b[2] + c[2]];
    for (let i = 0; i < 3; i++) {
      first[i] += (det / 24) * s[i];
      for (let j = 0; j < 3; j++)
        second[3 * i + j] += (det / 120) * (a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + s[i] * s[j]);
    }
  }
  const cr: Vec3 = [first[0] / vol, first[1] / vol, first[2] / vol];
  // Second moment about the centre: ∫(x − c)(x − c)ᵀ dV = ∫x xᵀ dV − V c cᵀ (x from r).
  const C = second.map((v, ij) => v - vol * cr[Math.floor(ij / 3)] * cr[ij % 3]);
  const tr = C[0] + C[4] + C[8];
  // Inertia tensor ρ (tr(C) 1 − C).
  const J = C.map((v, ij) => density * ((ij % 4 === 0 ? tr : 0) - v));
  const { values, vectors } = symmetricEigen3(J);
  return {
    mass: density * vol,
    centre: [cr[0] + r[0], cr[1] + r[1], cr[2] + r[2]],
    inertia: values,
    axes: vectors,
  };
}

/**
 * Eigenvalues (ascending) and unit eigenvectors (a right-handed frame) of a symmetric 3 × 3
 * matrix (row-major), by cyclic Jacobi rotations to round-off.
 */
export function symmetricEigen3(m: number[]): { values: Vec3; vectors: [Vec3, Vec3, Vec3] } {
  const a = [...m];
  // V accumulates the rotations: A = V diag(λ) Vᵀ, eigenvector k = column k of V.
  const v = [1, 0, 0, 0, 1, 0, 0, 0, 1];
  for (let sweep = 0; sweep < 50; sweep++) {
    const off = Math.hypot(a[1], a[2], a[5]);
    if (off <= 1e-15 * Math.hypot(a[0], a[4], a[8])) break;
    for (const [p, q] of [
      [0, 1],
      [0, 2],
      [1, 2],
    ]) {
      const apq = a[3 * p + q];
      if (apq === 0) continue;
      // Rotation angle zeroing a_pq: tan 2φ = 2 a_pq / (a_qq − a_pp).
      const theta = (a[3 * q + q] - a[3 * p + p]) / (2 * apq);
      const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
      const c = 1 / Math.sqrt(t * t + 1);
      const s = t * c;
      for (let k = 0; k < 3; k++) {
        // A ← A G on columns p, q, then Gᵀ A on rows p, q.
        const akp = a[3 * k + p];
        const akq = a[3 * k + q];
        a[3 * k + p] = c * akp - s * akq;
        a[3 * k + q] = s * akp + c * akq;
      }
      for (let k = 0; k < 3; k++) {
        const apk = a[3 * p + k];
        const aqk = a[3 * q + k];
        a[3 * p + k] = c * apk - s * aqk;
        a[3 * q + k] = s * apk + c * aqk;
      }
      for (let k = 0; k < 3; k++) {
        const vkp = v[3 * k + p];
        const vkq = v[3 * k + q];
        v[3 * k + p] = c * vkp - s * vkq;
        v[3 * k + q] = s * vkp + c * vkq;
      }
    }
  }
  const order = [0, 1, 2].sort((i, j) => a[4 * i] - a[4 * j]);
  const col = (k: number): Vec3 => [v[k], v[3 + k], v[6 + k]];
  const vectors: [Vec3, Vec3, Vec3] = [col(order[0]), col(order[1]), col(order[2])];
  // A product of rotations has det +1, but the reordering may flip it.
  if (dot(cross(vectors[0], vectors[1]), vectors[2]) < 0)
    vectors[2] = [-vectors[2][0], -vectors[2][1], -vectors[2][2]];
  return { values: [a[4 * order[0]], a[4 * order[1]], a[4 * order[2]]], vectors };
}
