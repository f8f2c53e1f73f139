/**
 * Randomized checks of the narrow phase against brute-force references:
 *  - box–capsule and capsule–capsule: the smallest reported gap equals the minimum over a
 *    fine sampling of the capsule axis of (box signed distance − r), resp. the sampled
 *    segment–segment distance − r_a − r_b, within the sampling error (both distance
 *    functions are 1-Lipschitz, so sampling with step Δ overestimates by at most Δ/2);
 *  - box–box: every contact's surface points p_a = point − (gap/2) n and
 *    p_b = point + (gap/2) n lie on the surfaces of box a and box b, normals are unit and
 *    point from a to b, and the feature ids of one pair are distinct.
 */
import { describe, expect, it } from "vitest";
import type { BoxShape, CapsuleShape } from "../../../src/engine/geometry/shapes";
import { axisAngle, type Q4, qmul, randomQuat, rotate, type V3 } from "../../support/quat";
import { mulberry32 } from "../../support/random";
import { collide, pose } from "./helpers";

function boxSd(q: V3, h: readonly number[]): number {
  const e = [Math.abs(q[0]) - h[0], Math.abs(q[1]) - h[1], Math.abs(q[2]) - h[2]];
  const out = Math.hypot(Math.max(e[0], 0), Math.max(e[1], 0), Math.max(e[2], 0));
  return out + Math.min(Math.max(e[0], e[1], e[2]), 0);
}

/** Signed distance of a world point to a box at centre c with orientation q. */
function boxSdWorld(p: V3, c: V3, q: Q4, h: readonly number[]): number {
  const qi: Q4 = [q[0], -q[1], -q[2], -q[3]];
  return boxSd(rotate(qi, [p[0] - c[0], p[1] - c[1], p[2] - c[2]]), h);
}

describe("narrow phase against brute force", () => {
  it("box–capsule: minimum gap equals the sampled minimum of sd − r", () => {
    const r = mulberry32(7);
    let checked = 0;
    for (let trial = 0; trial < 200; trial++) {
      const h = [0.3 + r(), 0.3 + r(), 0.3 + r()];
      const bq = randomQuat(r);
      const cap: CapsuleShape = {
        type: "capsule",
        radius: 0.05 + 0.3 * r(),
        halfLength: 0.1 + r(),
      };
      const cq = randomQuat(r);
      const cc: V3 = [3 * (r() - 0.5), 3 * (r() - 0.5), 3 * (r() - 0.5)];
      const b: BoxShape = { type: "box", halfExtents: [h[0], h[1], h[2]] };
      const cs = collide(b, pose([0, 0, 0], bq), cap, pose(cc, cq), 10);
      const axis = rotate(cq, [0, 0, 1]);
      const N = 4000;
      let best = Number.POSITIVE_INFINITY;
      for (let k = 0; k <= N; k++) {
        const s = -cap.halfLength + (2 * cap.halfLength * k) / N;
        const p: V3 = [cc[0] + s * axis[0], cc[1] + s * axis[1], cc[2] + s * axis[2]];
        best = Math.min(best, boxSdWorld(p, [0, 0, 0], bq, h) - cap.radius);
      }
      const step = (2 * cap.halfLength) / N;
      expect(cs.length).toBeGreaterThan(0);
      const minGap = Math.min(...cs.map((c) => c.gap));
      expect(minGap).toBeLessThanOrEqual(best + 1e-9);
      expect(minGap).toBeGreaterThanOrEqual(best - step / 2 - 1e-9);
      for (const c of cs) {
        expect(Math.hypot(...c.normal)).toBeCloseTo(1, 12);
        // p_a on the box surface.
        const pa: V3 = [
          c.point[0] - (c.gap / 2) * c.normal[0],
          c.point[1] - (c.gap / 2) * c.normal[1],
          c.point[2] - (c.gap / 2) * c.normal[2],
        ];
        expect(Math.abs(boxSdWorld(pa, [0, 0, 0], bq, h))).toBeLessThan(1e-9);
      }
      checked++;
    }
    expect(checked).toBe(200);
  });

  it("capsule–capsule: minimum gap equals the sampled segment distance − r_a − r_b", () => {
    const r = mulberry32(11);
    for (let trial = 0; trial < 60; trial++) {
      const A: CapsuleShape = { type: "capsule", radius: 0.1 + 0.2 * r(), halfLength: 0.2 + r() };
      const B: CapsuleShape = { type: "capsule", radius: 0.1 + 0.2 * r(), halfLength: 0.2 + r() };
      const qa = randomQuat(r);
      const qb = randomQuat(r);
      const ca: V3 = [0, 0, 0];
      const cb: V3 = [2 * (r() - 0.5), 2 * (r() - 0.5), 2 * (r() - 0.5)];
      const cs = collide(A, pose(ca, qa), B, pose(cb, qb), 10);
      const za = rotate(qa, [0, 0, 1]);
      const zb = rotate(qb, [0, 0, 1]);
      const N = 300;
      let best = Number.POSITIVE_INFINITY;
      for (let i = 0; i <= N; i++) {
        const s = -A.halfLength + (2 * A.halfLength * i) / N;
        for (let j = 0; j <= N; j++) {
          const t = -B.halfLength + (2 * B.halfLength * j) / N;
          const d = Math.hypot(
            cb[0] + t * zb[0] - s * za[0],
            cb[1] + t * zb[1] - s * za[1],
            cb[2] + t * zb[2] - s * za[2],
          );
          if (d < best) best = d;
        }
      }
      best -= A.radius + B.radius;
      const err = (A.halfLength + B.halfLength) / N; // Δ_a/2 + Δ_b/2
      expect(cs.length).toBeGreaterThan(0);
      const minGap = Math.min(...cs.map((c) => c.gap));
      expect(minGap).toBeLessThanOrEqual(best + 1e-9);
      expect(minGap).toBeGreaterThanOrEqual(best - err - 1e-9);
    }
  });

  it("box–box: contact surface points lie on both boxes, normals from a to b", () => {
    const r = mulberry32(3);
    let contacts = 0;
    for (let trial = 0; trial < 300; trial++) {
      const ha = [0.2 + r(), 0.2 + r(), 0.2 + r()];
      const hb = [0.2 + r(), 0.2 + r(), 0.2 + r()];
      const qa = randomQuat(r);
      // Mostly generic orientations, sometimes b close to a's orientation (face contacts).
      const qb = r() < 0.3 ? qmul(qa, axisAngle([r(), r(), r() + 0.1], 0.05 * r())) : randomQuat(r);
      const ca: V3 = [0, 0, 0];
      const dir = rotate(randomQuat(r), [0, 0, 1]);
      // Place b along a random direction, at a distance where the boxes just touch or
      // overlap slightly: bisection on the brute-force separation along the line.
      const cb: V3 = [0, 0, 0];
      const A: BoxShape = { type: "box", halfExtents: [ha[0], ha[1], ha[2]] };
      const B: BoxShape = { type: "box", halfExtents: [hb[0], hb[1], hb[2]] };
      const dist = 0.7 * (Math.hypot(...ha) + Math.hypot(...hb)) * (0.6 + 0.5 * r());
      for (let k = 0; k < 3; k++) cb[k] = dist * dir[k];
      const cs = collide(A, pose(ca, qa), B, pose(cb, qb), 0.02);
      const features = new Set<number>();
      for (const c of cs) {
        contacts++;
        expect(Math.hypot(...c.normal)).toBeCloseTo(1, 12);
        const pa: V3 = [0, 0, 0];
        const pb: V3 = [0, 0, 0];
        for (let k = 0; k < 3; k++) {
          pa[k] = c.point[k] - (c.gap / 2) * c.normal[k];
          pb[k] = c.point[k] + (c.gap / 2) * c.normal[k];
        }
        expect(Math.abs(boxSdWorld(pa, ca, qa, ha))).toBeLessThan(1e-9);
        expect(Math.abs(boxSdWorld(pb, cb, qb, hb))).toBeLessThan(1e-9);
        // p_b + ε n is outside a (the normal leaves a towards b).
        const eps = 1e-3;
        const outA: V3 = [
          pa[0] + eps * c.normal[0],
          pa[1] + eps * c.normal[1],
          pa[2] + eps * c.normal[2],
        ];
        expect(boxSdWorld(outA, ca, qa, ha)).toBeGreaterThan(0);
        expect(c.gap).toBeLessThan(0.02);
        features.add(c.feature);
      }
      expect(features.size).toBe(cs.length);
      expect(cs.length).toBeLessThanOrEqual(4);
    }
    expect(contacts).toBeGreaterThan(100);
  });
});
