/**
 * ContactReport: begin(n) empties it with room for n contacts (3 values per contact for
 * points, normals, tangent forces and impulses), add appends a body pair at the next index,
 * and a later begin keeps what is already large enough.
 */
import { describe, expect, it } from "vitest";
import { ContactReport } from "../../../src/engine/contact/report";

describe("ContactReport", () => {
  it("begin sizes the arrays, add appends pairs in order, begin again empties", () => {
    const report = new ContactReport();
    report.begin(3);
    expect(report.count).toBe(0);
    expect(report.bodyA.length).toBeGreaterThanOrEqual(3);
    for (const a of [report.point, report.normal, report.tangentForce, report.impulse])
      expect(a.length).toBeGreaterThanOrEqual(9);
    for (const a of [report.gap, report.normalForce, report.bodyB])
      expect(a.length).toBeGreaterThanOrEqual(3);
    expect(report.add(-1, 0)).toBe(0);
    expect(report.add(2, 1)).toBe(1);
    expect(report.count).toBe(2);
    expect([report.bodyA[0], report.bodyB[0], report.bodyA[1], report.bodyB[1]]).toEqual([
      -1, 0, 2, 1,
    ]);
    const points = report.point;
    report.begin(2);
    expect(report.count).toBe(0);
    expect(report.point).toBe(points); // large enough: kept, no allocation
    report.begin(40);
    expect(report.point.length).toBeGreaterThanOrEqual(120);
  });
});
