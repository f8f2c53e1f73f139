/**
 * Mass properties from shapes, for rigid bodies whose inertia the model omits.
 * The body's mass is shared among its solid shapes (convex hulls and closed meshes
 * included) in proportion to their volumes
 * (uniform density); each shape's inertia about its own centre (closed forms below) is
 * rotated into the body frame and moved to the body origin, which is the centre of mass
 * by convention, with the parallel-axis theorem I += m (|d|² E − d dᵀ).
 */
import type { ShapeSpec } from "../../../schemas/model";
import { hullOfPoints } from "../geometry/hull";
import { meshOf } from "../geometry/mesh";
import { mat3Congruence } from "../math/mat3";
import { quatToMat3 } from "../math/quat";

/**
 * The solid of a convex or mesh shape (hull.ts, mesh.ts: volume, centroid and unit-density
 * inertia about it, shape frame, by the divergence theorem); an open mesh has none (volume 0).
 */
function polyhedron(s: ShapeSpec) {
  if (s.type === "convex") {
    const h = hullOfPoints(s.points);
    // A box-shaped hull's mass properties are the box's closed forms (inertiaFromShapes).
    return h.box === null ? h : null;
  }
  if (s.type === "mesh") return meshOf(s.vertices, s.triangles);
  return null;
}

/** Volume (m³) of a solid shape; planes and open meshes have none. */
export function shapeVolume(s: ShapeSpec): number {
  const box = boxOfHull(s);
  if (box !== null) return shapeVolume(box);
  switch (s.type) {
    case "convex":
    case "mesh":
      return (polyhedron(s) as { volume: number }).volume;
    case "sphere":
      return (4 / 3) * Math.PI * s.radius ** 3;
    case "box":
      return 8 * s.halfExtents[0] * s.halfExtents[1] * s.halfExtents[2];
    case "capsule":
      return Math.PI * s.radius ** 2 * (2 * s.halfLength) + (4 / 3) * Math.PI * s.radius ** 3;
    case "cylinder":
      return Math.PI * s.radius ** 2 * (2 * s.halfLength);
    case "plane":
      return 0;
  }
}

/**
 * Principal inertia (about the shape's centre, in its own frame) of a solid of mass m:
 * sphere 2/5 m r²; box m/3 (b² + c²) etc. with half extents; capsule (axis z, cylinder of
 * length 2h plus two hemispherical caps) by the standard composite formula; solid cylinder
 * (axis z, radius r, length 2h): m r²/2 about the axis, m (3r² + (2h)²)/12 transversally.
 */
export function shapePrincipalInertia(s: ShapeSpec, m: number): [number, number, number] {
  const box = boxOfHull(s);
  if (box !== null) return shapePrincipalInertia(box, m);
  switch (s.type) {
    case "sphere": {
      const i = 0.4 * m * s.radius ** 2;
      return [i, i, i];
    }
    case "box": {
      const [a, b, c] = s.halfExtents;
      return [(m / 3) * (b * b + c * c), (m / 3) * (a * a + c * c), (m / 3) * (a * a + b * b)];
    }
    case "capsule": {
      const r = s.radius;
      const h = s.halfLength;
      const vc = Math.PI * r * r * 2 * h;
      const vs = (4 / 3) * Math.PI * r ** 3;
      const mc = (m * vc) / (vc + vs);
      const ms = m - mc;
      // cylinder about its centre; hemispheres: each 2/5 ms/2 r² about the axis, and about a
      // transverse axis through the capsule centre 83/320·(ms/2) r² + (ms/2)(h + 3r/8)² with
      // the hemisphere's centroid offset 3r/8 (the 83/320 is about the hemisphere's centroid).
      const axial = 0.5 * mc * r * r + 0.4 * ms * r * r;
      const half = ms / 2;
      const transverse =
        mc * ((r * r) / 4 + (4 * h * h) / 12) +
        2 * (half * ((83 / 320) * r * r) + half * (h + (3 * r) / 8) ** 2);
      return [transverse, transverse, axial];
    }
    case "cylinder": {
      const r = s.radius;
      const len = 2 * s.halfLength;
      const transverse = (m * (3 * r * r + len * len)) / 12;
      return [transverse, transverse, 0.5 * m * r * r];
    }
    case "plane":
    case "convex":
    case "mesh":
      // Planes have none; polyhedra have a full tensor (inertiaFromShapes).
      return [0, 0, 0];
  }
}

/**
 * The box primitive a convex shape is when its hull is an axis-aligned box of the shape
 * frame (hull.ts ConvexHull.box), placed where that box is: its closed forms then give
 * the same numbers as for the box primitive.
 */
function boxOfHull(s: ShapeSpec): ShapeSpec | null {
  if (s.type !== "convex") return null;
  const b = hullOfPoints(s.points).box;
  if (b === null) return null;
  const q = s.orientation;
  const c = b.center;
  let position = s.position;
  if (!b.centered) {
    const r = new Float64Array(9);
    quatToMat3(r, 0, normalized(q), 0);
    position = [0, 1, 2].map(
      (i) => s.position[i] + r[3 * i] * c[0] + r[3 * i + 1] * c[1] + r[3 * i + 2] * c[2],
    ) as [number, number, number];
  }
  const [hx, hy, hz] = b.shape.halfExtents;
  return { type: "box", halfExtents: [hx, hy, hz], position, orientation: q };
}

/** Body-frame inertia (row-major 3×3) of mass m spread over the shapes by volume. */
export function inertiaFromShapes(shapes: readonly ShapeSpec[], m: number): Float64Array {
  const solids = shapes.filter((s) => s.type !== "plane" && shapeVolume(s) > 0);
  const total = solids.reduce((v, s) => v + shapeVolume(s), 0);
  const out = new Float64Array(9);
  const r = new Float64Array(9);
  const d = new Float64Array(9);
  const rotated = new Float64Array(9);
  for (const shape of solids) {
    const s = boxOfHull(shape) ?? shape;
    const vs = shapeVolume(s);
    if (!(vs > 0)) continue;
    const ms = (m * vs) / total;
    const poly = polyhedron(s);
    quatToMat3(r, 0, normalized(s.orientation), 0);
    let [x, y, z] = s.position;
    if (poly === null) {
      const p = shapePrincipalInertia(s, ms);
      d.fill(0);
      d[0] = p[0];
      d[4] = p[1];
      d[8] = p[2];
    } else {
      // A polyhedron's inertia about its centroid c (shape frame), which sits at
      // position + R c in the body frame.
      for (let k = 0; k < 9; k++) d[k] = (ms / poly.volume) * poly.unitInertia[k];
      const [cx, cy, cz] = poly.centroid;
      x += r[0] * cx + r[1] * cy + r[2] * cz;
      y += r[3] * cx + r[4] * cy + r[5] * cz;
      z += r[6] * cx + r[7] * cy + r[8] * cz;
    }
    mat3Congruence(rotated, 0, r, 0, d, 0);
    const dd = x * x + y * y + z * z;
    const off = [x, y, z];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        out[3 * i + j] += rotated[3 * i + j] + ms * ((i === j ? dd : 0) - off[i] * off[j]);
  }
  return out;
}

function normalized(q: readonly number[]): Float64Array {
  const n = Math.hypot(...q);
  return Float64Array.from(q, (x) => x / n);
}
