/**
 * The point core (point-core.ts), a sphere's centre: h(d) = 0 for every direction, its
 * support sets the point, its bounding radius 0 and the sphere's radius as its sweep.
 */
import { describe, expect, it } from "vitest";
import { PointCore } from "../../../../src/engine/geometry/convex/point-core";
import { WorldPose } from "../../../../src/engine/geometry/pose";
import { checkSupport, type V3 } from "./core-checks";

describe("point core", () => {
  it("support function 0, support set the point, sweep the sphere's radius", () => {
    const core = new PointCore().place(new WorldPose(), { type: "sphere", radius: 0.4 });
    checkSupport(core, [[0, 0, 0]], (x: V3) => x.every((c) => c === 0), 0);
    expect(core.sweep[0]).toBe(0.4);
  });
});
