/**
 * The generic convex pair (convex/pair.ts collideCores: GJK, EPA, polish, witnesses and
 * manifolds) on its own, against closed forms:
 *  - a shape given only by its support function (a point-set hull written here, all of
 *    whose features are points: the path a new convex shape takes) against a box core:
 *    separated, penetrating and touching along a face normal, gap = the signed distance,
 *    normal from a to b, the point midway, one contact;
 *  - two box cores corner to corner: GJK's distance √3·a along the diagonal, the single
 *    contact's feature 27·code_a + code_b from the corners' region codes.
 * (The clipper: clip.test.ts; the cores' support functions: <core>.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { ContactBuffer } from "../../../../src/engine/geometry/contact-buffer";
import { BoxCore } from "../../../../src/engine/geometry/convex/box-core";
import {
  ConvexCore,
  type ConvexShape,
  F_POINT,
  FC,
  FT,
} from "../../../../src/engine/geometry/convex/features";
import { collideCores } from "../../../../src/engine/geometry/convex/pair";
import { MARGIN } from "../../../../src/engine/geometry/helpers";
import { WorldPose } from "../../../../src/engine/geometry/pose";

/** The convex hull of points (local frame), described by its support function only. */
class PointHull extends ConvexCore implements ConvexShape {
  constructor(private readonly points: number[][]) {
    super();
  }

  place(pose: WorldPose): this {
    this.p = pose.p;
    this.R = pose.R;
    return this;
  }

  boundingRadius(): number {
    return Math.max(...this.points.map((v) => Math.hypot(v[0], v[1], v[2])));
  }

  private best(d: ArrayLike<number>): number[] {
    let best = this.points[0];
    for (const v of this.points)
      if (
        v[0] * d[0] + v[1] * d[1] + v[2] * d[2] >
        best[0] * d[0] + best[1] * d[1] + best[2] * d[2]
      )
        best = v;
    return best;
  }

  localSupport(d: Float64Array, s: Float64Array): void {
    s.set(this.best(d));
  }

  projectOnSupport(q: Float64Array, d: Float64Array): number {
    q.set(this.best(d));
    return 0;
  }

  classify(_d: Float64Array, s: number): void {
    FT[s] = F_POINT;
    FC[s] = 0;
  }

  pointCode(): number {
    return 0;
  }
}

const r = 0.3;
const octahedron = new PointHull([
  [r, 0, 0],
  [-r, 0, 0],
  [0, r, 0],
  [0, -r, 0],
  [0, 0, r],
  [0, 0, -r],
]);

function contacts(a: ConvexShape, b: ConvexShape, margin: number) {
  const out = new ContactBuffer(2);
  out.setPair(0, 1, 0, 1);
  MARGIN[0] = margin;
  collideCores(a, b, out);
  return Array.from({ length: out.count }, (_, i) => ({
    point: Array.from(out.point.subarray(3 * i, 3 * i + 3)),
    normal: Array.from(out.normal.subarray(3 * i, 3 * i + 3)),
    gap: out.gap[i],
    feature: out.feature[i],
  }));
}

describe("a shape given by its support function", () => {
  const box = new BoxCore().place(new WorldPose(), [0.5, 0.5, 0.5]);

  for (const d of [0.02, 1e-9, 0, -0.01, -0.1]) {
    it(`octahedron vertex against a box face at signed distance ${d}`, () => {
      // The vertex (−r, 0, 0) of the octahedron at x = 0.5 + d, facing the box's +x face.
      const hull = octahedron.place(
        new WorldPose().set([0.5 + r + d, 0.1, -0.05], Float64Array.of(1, 0, 0, 0)),
      );
      const cs = contacts(box, hull, 0.05);
      expect(cs).toHaveLength(1);
      const c = cs[0];
      expect(c.gap).toBeCloseTo(d, 12);
      expect(c.normal[0]).toBeCloseTo(1, 12);
      expect(Math.hypot(c.normal[1], c.normal[2])).toBeLessThan(1e-9);
      // Midway between the vertex (0.5 + d, 0.1, −0.05) and its projection on the face.
      expect(c.point[0]).toBeCloseTo(0.5 + d / 2, 12);
      expect(c.point[1]).toBeCloseTo(0.1, 12);
      expect(c.point[2]).toBeCloseTo(-0.05, 12);
    });
  }

  it("beyond the margin: no contact", () => {
    const hull = octahedron.place(
      new WorldPose().set([0.5 + r + 0.06, 0, 0], Float64Array.of(1, 0, 0, 0)),
    );
    expect(contacts(box, hull, 0.05)).toHaveLength(0);
  });
});

describe("GJK between box cores", () => {
  it("corner to corner: distance √3·a along the diagonal, corner codes in the feature", () => {
    const a = 0.01;
    const boxA = new BoxCore().place(new WorldPose(), [0.5, 0.5, 0.5]);
    const boxB = new BoxCore().place(
      new WorldPose().set([1 + a, 1 + a, 1 + a], Float64Array.of(1, 0, 0, 0)),
      [0.5, 0.5, 0.5],
    );
    const cs = contacts(boxA, boxB, 0.1);
    expect(cs).toHaveLength(1);
    expect(cs[0].gap).toBeCloseTo(Math.sqrt(3) * a, 12);
    for (let k = 0; k < 3; k++) {
      expect(cs[0].normal[k]).toBeCloseTo(1 / Math.sqrt(3), 9);
      expect(cs[0].point[k]).toBeCloseTo(0.5 + a / 2, 9);
    }
    // a's corner (+, +, +): region code 2 + 3·2 + 9·2 = 26; b's (−, −, −): 0.
    expect(cs[0].feature).toBe(27 * 26 + 0);
  });
});
