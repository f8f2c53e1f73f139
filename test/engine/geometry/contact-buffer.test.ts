/**
 * The contact buffer (contact-buffer.ts): pushes recorded for the pair set by setPair
 * with keys contactKey(shapeA, shapeB, feature) = the pair's base + feature; growth keeps
 * every earlier contact; removeAt moves the last contact into the hole; negateNormals
 * flips only the normals from an index on; mixFeatures keeps ids below 65536, the same
 * for the same inputs, and spreads distinct inputs (no two of 2000 hull features alike
 * more often than the 2⁻¹⁶ collision rate allows).
 */
import { describe, expect, it } from "vitest";
import {
  ContactBuffer,
  contactKey,
  FEATURE_RANGE,
} from "../../../src/engine/geometry/contact-buffer";

function fill(out: ContactBuffer, n: number, from = 0): void {
  for (let k = from; k < from + n; k++) out.push(k, 2 * k, 3 * k, 1, 0, 0, -k / 100, k % 7);
}

describe("contact buffer", () => {
  it("push, growth and keys", () => {
    const out = new ContactBuffer(2);
    out.setPair(4, 5, 7, 9);
    fill(out, 50);
    expect(out.count).toBe(50);
    expect(out.capacity).toBeGreaterThanOrEqual(50);
    for (let k = 0; k < 50; k++) {
      expect([out.bodyA[k], out.bodyB[k], out.shapeA[k], out.shapeB[k]]).toEqual([4, 5, 7, 9]);
      expect([out.point[3 * k], out.point[3 * k + 1], out.point[3 * k + 2]]).toEqual([
        k,
        2 * k,
        3 * k,
      ]);
      expect(out.gap[k]).toBe(-k / 100);
      expect(out.key[k]).toBe(contactKey(7, 9, k % 7));
      expect(out.key[k]).toBe(contactKey(7, 9, 0) + (k % 7));
    }
    out.clear();
    expect(out.count).toBe(0);
  });

  it("removeAt moves the last contact into the hole; negateNormals from an index on", () => {
    const out = new ContactBuffer();
    out.setPair(0, 1, 0, 1);
    fill(out, 5);
    out.removeAt(1);
    expect(out.count).toBe(4);
    expect(Array.from(out.point.subarray(3, 6))).toEqual([4, 8, 12]);
    expect(out.gap[1]).toBe(-0.04);
    out.removeAt(3);
    expect(out.count).toBe(3);
    out.negateNormals(1);
    expect(out.normal[0]).toBe(1);
    expect(out.normal[3]).toBe(-1);
    expect(out.normal[6]).toBe(-1);
  });

  it("mixFeatures: ids below 65536, deterministic, spread like a hash", () => {
    const a = new ContactBuffer();
    const b = new ContactBuffer();
    for (const out of [a, b]) {
      out.setPair(0, 1, 2, 3);
      for (let f = 0; f < 2000; f++) {
        out.push(0, 0, 0, 0, 0, 1, 0, f % 4);
        out.mixFeatures(f, 1000 + f, f % 3);
      }
    }
    expect(Array.from(a.feature)).toEqual(Array.from(b.feature));
    const ids = new Set<number>();
    for (let k = 0; k < a.count; k++) {
      expect(a.feature[k]).toBeGreaterThanOrEqual(0);
      expect(a.feature[k]).toBeLessThan(FEATURE_RANGE);
      expect(a.key[k]).toBe(contactKey(2, 3, a.feature[k]));
      ids.add(a.feature[k]);
    }
    // 2000 draws of 65536 ids: about 2000²/(2·65536) ≈ 31 collisions expected; far fewer
    // distinct ids than 1900 would mean a poor mix.
    expect(ids.size).toBeGreaterThan(1900);
  });
});
