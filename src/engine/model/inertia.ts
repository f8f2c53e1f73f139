/**
 * Mass properties from shapes, for rigid bodies whose inertia the model omits.
 * The body's mass is shared among its solid shapes in proportion to their volumes
 * (uniform density); each shape's inertia about its own centre (closed forms below) is
 * rotated into the body frame and moved to the body origin, which is the centre of mass
 * by convention, with the parallel-axis theorem I += m (|d|² E − d dᵀ).
 */
import type { ShapeSpec } from "../../../schemas/model";
import { mat3Congruence } from "../math/mat3";
import { quatToMat3 } from "../math/quat";

/** Volume (m³) of a solid shape; planes have none. */
export function shapeVolume(s: ShapeSpec): number {
  switch (s.type) {
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
      return [0, 0, 0];
  }
}

/** Body-frame inertia (row-major 3×3) of mass m spread over the shapes by volume. */
export function inertiaFromShapes(shapes: readonly ShapeSpec[], m: number): Float64Array {
  const solids = shapes.filter((s) => s.type !== "plane");
  const total = solids.reduce((v, s) => v + shapeVolume(s), 0);
  const out = new Float64Array(9);
  const r = new Float64Array(9);
  const d = new Float64Array(9);
  const rotated = new Float64Array(9);
  for (const s of solids) {
    const ms = (m * shapeVolume(s)) / total;
    const p = shapePrincipalInertia(s, ms);
    d.fill(0);
    d[0] = p[0];
    d[4] = p[1];
    d[8] = p[2];
    quatToMat3(r, 0, normalized(s.orientation), 0);
    mat3Congruence(rotated, 0, r, 0, d, 0);
    const [x, y, z] = s.position;
    const dd = x * x + y * y + z * z;
    const off = [x, y, z];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++)
        out[3 * i + j] += rotated[3 * i + j] + ms * ((i === j ? dd : 0) - off[i] * off[j]);
  }
  return out;
}

function normalized(q: readonly number[]): number[] {
  const n = Math.hypot(...q);
  return q.map((x) => x / n);
}
