/**
 * The narrow phase's dispatch (src/engine/geometry/narrowphase.ts collideShapes): the pair
 * functions are written for the canonical order plane < box < capsule < cylinder < sphere,
 * and any order is accepted: swapping two shapes of different types gives the same
 * contacts (points, gaps, features) with the normals negated, so that they still point from the first shape to
 * the second. Two half-spaces make no point contact. The pair functions themselves are
 * tested per family in pairs/.
 */
import { describe, expect, it } from "vitest";
import type { CylinderShape, Shape } from "../../../src/engine/geometry/shapes";
import { axisAngle } from "../../support/quat";
import { box, capsule, collide, floor, pose, sphere } from "./helpers";

const cylinder: CylinderShape = { type: "cylinder", radius: 0.4, halfLength: 0.5 };

describe("collideShapes", () => {
  it("any order: the same contacts with the normals negated", () => {
    const shapes: Shape[] = [floor, box(0.5, 0.4, 0.3), capsule(0.2, 0.4), cylinder, sphere(0.45)];
    const qa = axisAngle([1, 2, 3], 0.3);
    const qb = axisAngle([-2, 1, 0.5], 0.7);
    let pairs = 0;
    for (const a of shapes) {
      for (const b of shapes) {
        // (Two shapes of one type run the same pair function either way round.)
        if (a.type === b.type) continue;
        // Overlapping placements: b's centre 0.27 from a's (and from a plane's surface).
        const pa = pose([0, 0, 0], qa);
        const pb = pose([0.1, -0.05, 0.25], qb);
        const ab = collide(a, pa, b, pb, 0.01);
        const ba = collide(b, pb, a, pa, 0.01);
        expect(ab.length).toBeGreaterThan(0);
        expect(ba).toHaveLength(ab.length);
        for (let i = 0; i < ab.length; i++) {
          expect(ba[i].point).toEqual(ab[i].point);
          expect(ba[i].gap).toBe(ab[i].gap);
          expect(ba[i].feature).toBe(ab[i].feature);
          for (let k = 0; k < 3; k++) expect(ba[i].normal[k] + ab[i].normal[k]).toBe(0);
        }
        pairs++;
      }
    }
    expect(pairs).toBe(20);
  });

  it("plane–plane produces no contact", () => {
    expect(collide(floor, pose([0, 0, 0]), floor, pose([0, 0, -1]), 10)).toHaveLength(0);
  });
});
