/** Small helpers shared by the collision-geometry tests (independent of the code under test). */
import { expect } from "vitest";
import { ContactBuffer } from "../../../src/engine/geometry/contact-buffer";
import { collideShapes } from "../../../src/engine/geometry/narrowphase";
import { WorldPose } from "../../../src/engine/geometry/pose";
import type {
  BoxShape,
  CapsuleShape,
  PlaneShape,
  Shape,
  SphereShape,
} from "../../../src/engine/geometry/shapes";
import { axisAngle, type Q4, type V3 } from "../../support/quat";

export function pose(p: V3, q: Q4 = [1, 0, 0, 0]): WorldPose {
  return new WorldPose().set(p, Float64Array.from(q));
}

export interface C {
  point: V3;
  normal: V3;
  gap: number;
  feature: number;
}

/** Runs collideShapes for (a, b) and returns the contacts as plain objects. */
export function collide(a: Shape, pa: WorldPose, b: Shape, pb: WorldPose, margin = 0): C[] {
  const out = new ContactBuffer(2);
  out.setPair(0, 1, 0, 1);
  collideShapes(a, pa, b, pb, margin, out);
  const res: C[] = [];
  for (let i = 0; i < out.count; i++) {
    res.push({
      point: [out.point[3 * i], out.point[3 * i + 1], out.point[3 * i + 2]],
      normal: [out.normal[3 * i], out.normal[3 * i + 1], out.normal[3 * i + 2]],
      gap: out.gap[i],
      feature: out.feature[i],
    });
  }
  return res;
}

export function expectVec(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol = 1e-9,
): void {
  for (let i = 0; i < 3; i++) {
    if (!(Math.abs(actual[i] - expected[i]) <= tol)) {
      throw new Error(
        `vector mismatch: got [${Array.from(actual).join(", ")}], expected [${Array.from(expected).join(", ")}] (tol ${tol})`,
      );
    }
  }
}

/** Finds the contact whose point is nearest to p. */
export function nearest(cs: C[], p: V3): C {
  let best = cs[0];
  let bd = Number.POSITIVE_INFINITY;
  for (const c of cs) {
    const d = Math.hypot(c.point[0] - p[0], c.point[1] - p[1], c.point[2] - p[2]);
    if (d < bd) {
      bd = d;
      best = c;
    }
  }
  return best;
}

export const sphere = (radius: number): SphereShape => ({ type: "sphere", radius });
export const box = (hx: number, hy: number, hz: number): BoxShape => ({
  type: "box",
  halfExtents: [hx, hy, hz],
});
export const capsule = (radius: number, halfLength: number): CapsuleShape => ({
  type: "capsule",
  radius,
  halfLength,
});
/** The plane z = 0, solid below. */
export const floor: PlaneShape = { type: "plane", normal: [0, 0, 1], offset: 0 };

/** Capsule axis (local z) turned onto world x: a rotation of +90° about y maps e_z to e_x. */
export const ALONG_X = axisAngle([0, 1, 0], Math.PI / 2);
/** +90° about x maps e_z to −e_y. */
export const ALONG_Y = axisAngle([1, 0, 0], Math.PI / 2);

/** The one contact of cs (asserting that there is exactly one). */
export function expectOne(cs: C[]): C {
  expect(cs.length).toBe(1);
  return cs[0];
}

/** The key "i,j" of an unordered pair (i < j first). */
export function pairKey(i: number, j: number): string {
  return i < j ? `${i},${j}` : `${j},${i}`;
}

/** All pairs i < j whose closed boxes overlap on every axis. */
export function bruteAabbPairs(n: number, min: Float64Array, max: Float64Array): Set<string> {
  const s = new Set<string>();
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      let ok = true;
      for (let k = 0; k < 3 && ok; k++) {
        if (min[3 * i + k] > max[3 * j + k] || min[3 * j + k] > max[3 * i + k]) ok = false;
      }
      if (ok) s.add(pairKey(i, j));
    }
  }
  return s;
}
