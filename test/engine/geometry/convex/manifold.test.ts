/**
 * Contact manifolds of the generic convex pair (convex/manifold.ts, through collideCores)
 * against closed forms, for cores whose features are polygons: a small box given as a hull
 * resting on a larger one, turned about the normal, penetrating by δ — four contacts at the
 * small box's bottom corners, each with gap −δ and normal +z; a cylinder's cap flush on a
 * box face — its RIM_SAMPLES rim points at radius r, gap −δ; a small cube tilted past the
 * flush angle onto an edge — the edge's two ends; a box hull tipped 0.01 rad over a larger
 * box's edge — the two ends of that edge under its face, gap −d, normal its face's.
 */
import { describe, expect, it } from "vitest";
import { ContactBuffer } from "../../../../src/engine/geometry/contact-buffer";
import { BoxCore } from "../../../../src/engine/geometry/convex/box-core";
import { CylinderCore } from "../../../../src/engine/geometry/convex/cylinder-core";
import type { ConvexShape } from "../../../../src/engine/geometry/convex/features";
import { HullCore } from "../../../../src/engine/geometry/convex/hull-core";
import { collideCores } from "../../../../src/engine/geometry/convex/pair";
import { RIM_SAMPLES } from "../../../../src/engine/geometry/cylinder";
import { MARGIN } from "../../../../src/engine/geometry/helpers";
import { convexHull } from "../../../../src/engine/geometry/hull";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { axisAngle, rotate, type V3 } from "../../../support/quat";

function contacts(a: ConvexShape, b: ConvexShape) {
  const out = new ContactBuffer(2);
  out.setPair(0, 1, 0, 1);
  MARGIN[0] = 0.001;
  collideCores(a, b, out);
  return Array.from({ length: out.count }, (_, i) => ({
    point: [out.point[3 * i], out.point[3 * i + 1], out.point[3 * i + 2]] as V3,
    normal: [out.normal[3 * i], out.normal[3 * i + 1], out.normal[3 * i + 2]] as V3,
    gap: out.gap[i],
  }));
}

/** The hull of the box |x_i| ≤ h_i's corners. */
const boxHull = (h: V3) =>
  convexHull(
    Float64Array.from(
      { length: 24 },
      (_, k) => ((Math.floor(k / 3) >> (k % 3)) & 1 ? 1 : -1) * h[k % 3],
    ),
  );

describe("convex manifolds", () => {
  const delta = 0.004;

  it("a box hull on a larger one, turned 30° about the normal: its 4 bottom corners, gap −δ", () => {
    const big = new HullCore().place(new WorldPose(), boxHull([0.5, 0.5, 0.5]));
    const q = axisAngle([0, 0, 1], Math.PI / 6);
    const c: V3 = [0.05, -0.02, 0.5 + 0.2 - delta];
    const small = new HullCore().place(
      new WorldPose().set(c, Float64Array.from(q)),
      boxHull([0.3, 0.2, 0.2]),
    );
    const cs = contacts(big, small);
    expect(cs).toHaveLength(4);
    const corners = [
      [0.3, 0.2],
      [-0.3, 0.2],
      [-0.3, -0.2],
      [0.3, -0.2],
    ].map(([x, y]) => rotate(q, [x, y, -0.2]).map((v, i) => v + c[i]));
    for (const k of cs) {
      expect(k.gap).toBeCloseTo(-delta, 12);
      expect(k.normal[2]).toBeCloseTo(1, 12);
      // The midpoint between the corner and its foot on the big box's top face.
      const near = corners.find((w) => Math.hypot(w[0] - k.point[0], w[1] - k.point[1]) < 1e-9);
      expect(near).toBeDefined();
      expect(k.point[2]).toBeCloseTo(0.5 - delta / 2, 12);
    }
  });

  it("a cylinder's cap flush on a box face: the rim samples at radius r, gap −δ", () => {
    const box = new BoxCore().place(new WorldPose(), [0.5, 0.5, 0.5]);
    const r = 0.2;
    const L = 0.1;
    const c: V3 = [0.1, 0.05, 0.5 + L - delta];
    const cyl = new CylinderCore().place(new WorldPose().set(c, Float64Array.of(1, 0, 0, 0)), {
      type: "cylinder",
      radius: r,
      halfLength: L,
    });
    const cs = contacts(box, cyl);
    expect(cs).toHaveLength(RIM_SAMPLES);
    for (const k of cs) {
      expect(k.gap).toBeCloseTo(-delta, 12);
      expect(k.normal[2]).toBeCloseTo(1, 12);
      expect(Math.hypot(k.point[0] - c[0], k.point[1] - c[1])).toBeCloseTo(r, 12);
    }
  });

  it("a cube on an edge (tilted 45° about x): the edge's two ends, gap −δ", () => {
    const floor = new BoxCore().place(new WorldPose(), [1, 1, 0.5]);
    const h = 0.1;
    const c: V3 = [0, 0, 0.5 + h * Math.SQRT2 - delta];
    const cube = new HullCore().place(
      new WorldPose().set(c, Float64Array.from(axisAngle([1, 0, 0], Math.PI / 4))),
      boxHull([h, h, h]),
    );
    const cs = contacts(floor, cube);
    expect(cs).toHaveLength(2);
    const xs = cs.map((k) => k.point[0]).sort((a, b) => a - b);
    expect(xs[0]).toBeCloseTo(-h, 12);
    expect(xs[1]).toBeCloseTo(h, 12);
    for (const k of cs) {
      expect(k.gap).toBeCloseTo(-delta, 12);
      expect(k.point[1]).toBeCloseTo(0, 12);
      expect(k.normal[2]).toBeCloseTo(1, 12);
    }
  });

  it("a box hull tipped 0.01 rad over a larger box's edge: that edge's two ends, gap −d", () => {
    // The table's top z = 0.5, edge x = 0.5. The small box turned by φ about +y (its bottom
    // face's outward normal −n, n = (sin φ, 0, cos φ)), centre above the edge at height
    // (h − d)/cos φ over the top: the edge's points lie d inside the face's plane. The
    // faces are within 1.8°, so the larger one would be the reference, but it does not
    // separate (the box hangs 0.3 sin φ below it beyond the edge); the box's face does.
    const table = new BoxCore().place(new WorldPose(), [0.5, 0.5, 0.5]);
    const phi = 0.01;
    const h = 0.2;
    const d = 1e-4;
    const c: V3 = [0.5, 0, 0.5 + (h - d) / Math.cos(phi)];
    const box = new HullCore().place(
      new WorldPose().set(c, Float64Array.from(axisAngle([0, 1, 0], phi))),
      boxHull([0.3, 0.2, h]),
    );
    // the face's far side rises 0.3 sin φ − d ≈ 2.9 mm above the top, beyond the margin
    const cs = contacts(table, box).sort((p, q) => p.point[1] - q.point[1]);
    expect(cs).toHaveLength(2);
    cs.forEach((k, e) => {
      expect(k.gap).toBeCloseTo(-d, 12);
      expect(k.normal[0]).toBeCloseTo(Math.sin(phi), 12);
      expect(k.normal[2]).toBeCloseTo(Math.cos(phi), 12);
      // the midpoint between the edge's point (0.5, ±0.2, 0.5) and the face: that point − (d/2) n
      expect(k.point[0]).toBeCloseTo(0.5 - (d / 2) * Math.sin(phi), 12);
      expect(k.point[1]).toBeCloseTo(e === 0 ? -0.2 : 0.2, 12);
      expect(k.point[2]).toBeCloseTo(0.5 - (d / 2) * Math.cos(phi), 12);
    });
  });
});
