/**
 * Two box cores at random poses and the closed forms of their support functions, for the
 * GJK, EPA and support tests: h(n) = n·c + Σ_i h_i |n·e_i| (e_i the box axes), the overlap
 * along n, h_a(n) + h_b(−n), and its minimum over the 15 separating-axis directions (the
 * face normals of the Minkowski difference of two boxes: the depth of overlapping boxes).
 */
import { BoxCore } from "../../../../src/engine/geometry/convex/box-core";
import { QUERY } from "../../../../src/engine/geometry/convex/support";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { axisAngle } from "../../../support/quat";

export type V3 = [number, number, number];

export interface BoxPair {
  a: BoxCore;
  b: BoxCore;
  ha: V3;
  hb: V3;
}

/** Two boxes, b's centre at `offset` from a's, both rotated at random (r in [0, 1)). */
export function boxPair(r: () => number, offset: V3): BoxPair {
  const ha: V3 = [0.2 + 0.3 * r(), 0.2 + 0.3 * r(), 0.2 + 0.3 * r()];
  const hb: V3 = [0.2 + 0.3 * r(), 0.2 + 0.3 * r(), 0.2 + 0.3 * r()];
  const pa = new WorldPose().set(
    [0, 0, 0],
    Float64Array.from(axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], 6 * r())),
  );
  const pb = new WorldPose().set(
    offset,
    Float64Array.from(axisAngle([r() - 0.5, r() - 0.5, r() - 0.5], 6 * r())),
  );
  return { a: new BoxCore().place(pa, ha), b: new BoxCore().place(pb, hb), ha, hb };
}

/** The support function of box core c (half-extents h) in the world direction n. */
export function boxSupport(c: BoxCore, h: V3, n: ArrayLike<number>): number {
  let s = n[0] * c.p[0] + n[1] * c.p[1] + n[2] * c.p[2];
  for (let i = 0; i < 3; i++)
    s += h[i] * Math.abs(n[0] * c.R[i] + n[1] * c.R[3 + i] + n[2] * c.R[6 + i]);
  return s;
}

/** h_a(n) + h_b(−n) for a unit n: the depth along n (negative: the separation). */
export function overlap(p: BoxPair, n: ArrayLike<number>): number {
  return boxSupport(p.a, p.ha, n) + boxSupport(p.b, p.hb, [-n[0], -n[1], -n[2]]);
}

/** The least overlap over the 15 axes (3 + 3 face normals, 9 edge cross products). */
export function satDepth(p: BoxPair): number {
  return satAxis(p).depth;
}

/** satDepth and the (unit) axis direction, from a to b, where it is attained. */
export function satAxis(p: BoxPair): { depth: number; axis: V3 } {
  const axisOf = (c: BoxCore, i: number): V3 => [c.R[i], c.R[3 + i], c.R[6 + i]];
  const axes: V3[] = [];
  for (let i = 0; i < 3; i++) axes.push(axisOf(p.a, i), axisOf(p.b, i));
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) {
      const u = axisOf(p.a, i);
      const v = axisOf(p.b, j);
      const w: V3 = [
        u[1] * v[2] - u[2] * v[1],
        u[2] * v[0] - u[0] * v[2],
        u[0] * v[1] - u[1] * v[0],
      ];
      const l = Math.hypot(...w);
      if (l > 1e-9) axes.push([w[0] / l, w[1] / l, w[2] / l]);
    }
  let depth = Number.POSITIVE_INFINITY;
  let axis: V3 = [0, 0, 1];
  for (const u of axes)
    for (const n of [u, [-u[0], -u[1], -u[2]] as V3]) {
      const f = overlap(p, n);
      if (f < depth) {
        depth = f;
        axis = n;
      }
    }
  return { depth, axis };
}

/**
 * The distance query's parameters for the pair, as convex/pair.ts sets them: its size (the
 * sum of the bounding radii), margin 0, the reach, no dilation, EPA's bound 1e-10 of the size.
 */
export function setQuery(p: BoxPair, reach: number): void {
  const scale = p.a.boundingRadius() + p.b.boundingRadius();
  QUERY[0] = scale;
  QUERY[1] = 0;
  QUERY[2] = reach;
  QUERY[3] = 0;
  QUERY[4] = 1e-10 * scale;
}
