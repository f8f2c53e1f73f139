/**
 * ContactClearance (src/engine/contact/clearance.ts): whether no contact of some bodies can
 * enter the events' index set over a time r, g + r u_n ≤ ε_act + reach (ε_act = 1e-6 m),
 * from bounding spheres alone. Checked against the gaps and normal velocities of spheres
 * (radius R = 0.1 m) over a plane and each other, written out here: never clear where a
 * contact activates (sound), clear beyond twice the bound's reach, and not asked about
 * pairs that cannot collide or have no restitution.
 */
import { describe, expect, it } from "vitest";
import { ContactClearance, MAX_SHAPES } from "../../../src/engine/contact/clearance";
import { CollisionDetector } from "../../../src/engine/geometry/collide";
import type { ShapeInstance } from "../../../src/engine/geometry/shapes";
import { BodySystem } from "../../../src/engine/model/body-system";

const R = 0.1;
const EPS = 1e-6;

function spheres(
  bodies: { position: number[]; velocity?: number[]; angularVelocity?: number[] }[],
  extra: ShapeInstance[] = [],
  excludedPairs: [number, number][] = [],
) {
  const sys = new BodySystem(
    bodies.map((b, i) => ({
      id: `s${i}`,
      kind: "rigid" as const,
      fixed: false,
      mass: 1,
      inertia: [0.004, 0, 0, 0, 0.004, 0, 0, 0, 0.004],
      position: b.position,
      orientation: [1, 0, 0, 0],
      velocity: b.velocity ?? [0, 0, 0],
      angularVelocity: b.angularVelocity ?? [0, 0, 0],
    })),
  );
  const detector = new CollisionDetector(
    [
      { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
      ...bodies.map((_, i) => ({ shape: { type: "sphere" as const, radius: R }, body: i })),
      ...extra,
    ],
    { excludedPairs },
  );
  return { sys, clearance: new ContactClearance(sys, detector) };
}

const all = new Uint8Array([1, 1, 1]);
const elastic = () => true;

describe("ContactClearance", () => {
  it("a sphere falling onto the plane: clear while g > 2 (ε + reach + r |v|), never where g + r u_n ≤ ε + reach", () => {
    const g0 = 0.1;
    const v = 2;
    const { clearance } = spheres([{ position: [0, 0, R + g0], velocity: [0, 0, -v] }]);
    expect(clearance.available).toBe(true);
    for (const reach of [0, 1e-3])
      for (let k = 1; k <= 200; k++) {
        const r = k * 2.5e-4;
        const clear = clearance.clear(all, r, reach, elastic);
        // the sphere's only contact: gap g0, u_n = −v (no spin)
        if (g0 - r * v <= EPS + reach) expect(clear).toBe(false);
        expect(clear).toBe(g0 > 2 * (EPS + reach + r * v));
      }
  });

  it("spinning, its contact point's normal speed |n × ω| (R + g) joins the bound (not its sliding |v| along the plane): clear only while g (1 − r|ω|) > 2 (ε + r |ω| R)", () => {
    const g0 = 0.05;
    const w = 20;
    const { clearance } = spheres([
      { position: [0, 0, R + g0], velocity: [1, 0, 0], angularVelocity: [0, w, 0] },
    ]);
    for (let k = 1; k <= 100; k++) {
      const r = k * 1e-4;
      const bound = r * w < 0.5 && g0 * (1 - r * w) > 2 * (EPS + r * w * R);
      expect(clearance.clear(all, r, 0, elastic)).toBe(bound);
    }
  });

  it("two spheres approaching: L = |x_b − x_c| − 2R against both speeds; a pair without restitution or excluded never asked", () => {
    // 0.3 m apart (gap 0.1 m), closing at 1 + 1 m/s, both above the plane by 1 m
    const bodies = [
      { position: [0, 0, 1], velocity: [1, 0, 0] },
      { position: [0.3, 0, 1], velocity: [-1, 0, 0] },
    ];
    const free = spheres(bodies);
    const only0 = new Uint8Array([1, 0]);
    for (let k = 1; k <= 100; k++) {
      const r = k * 5e-4;
      // (the plane 0.9 m below, reached at 1 m/s later than the pair)
      expect(free.clearance.clear(only0, r, 0, elastic)).toBe(0.1 > 2 * (EPS + 2 * r));
      if (0.1 - 2 * r <= EPS) expect(free.clearance.clear(only0, r, 0, elastic)).toBe(false);
    }
    // e = 0 between the spheres: their contact is no event, the plane alone is asked
    const inelastic = (a: number, b: number) => !(a >= 0 && b >= 0);
    expect(free.clearance.clear(only0, 0.04, 0, inelastic)).toBe(true);
    // the pair excluded from collision (a joint between them): the same
    const excluded = spheres(bodies, [], [[0, 1]]);
    expect(excluded.clearance.clear(only0, 0.04, 0, elastic)).toBe(true);
    // a body not asked about is not tested against the others
    expect(free.clearance.clear(new Uint8Array([0, 0]), 0.04, 0, elastic)).toBe(true);
  });

  it("a world box: its support along the line of centres (its half-extent along x); not available with a plane on a body", () => {
    const box: ShapeInstance = {
      shape: { type: "box", halfExtents: [0.1, 0.2, 0.2] },
      body: -1,
      localPosition: [1, 0, 0.5],
    };
    const { clearance } = spheres([{ position: [0, 0, 0.5], velocity: [1, 0, 0] }], [box]);
    // L = 1 − R − 0.1 = 0.8 m (the box's half-diagonal 0.3 m gave 0.6 m), the plane 0.4 m
    // away at no normal speed (S = 0 there): clear while 0.8 > 2 (ε + r), r < 0.4 s
    expect(clearance.clear(all, 0.39, 0, elastic)).toBe(true);
    expect(clearance.clear(all, 0.41, 0, elastic)).toBe(false);
    const onBody = spheres(
      [{ position: [0, 0, 1] }, { position: [0, 0, 3] }],
      [{ shape: { type: "plane", normal: [0, 0, -1], offset: 0 }, body: 1 }],
    );
    expect(onBody.clearance.available).toBe(false);
    expect(onBody.clearance.clear(all, 1e-3, 0, elastic)).toBe(false);
  });

  it("a model of 3 MAX_SHAPES spheres: tested for a few bodies asked about (the far one clear, the one near another not), never for more than MAX_SHAPES shapes", () => {
    // 192 spheres 10 m above the plane, 3 m apart along x at rest, but sphere 1, 0.25 m
    // from sphere 0 (gap 0.05 m)
    const n = 3 * MAX_SHAPES;
    const bodies = Array.from({ length: n }, (_, i) => ({ position: [3 * i, 0, 10] }));
    bodies[1] = { position: [0.25, 0, 10] };
    const { clearance } = spheres(bodies);
    expect(clearance.available).toBe(true);
    const of = new Uint8Array(n);
    // the last sphere: 3 m from its neighbour, 9.9 m over the plane, at rest: clear for
    // r = 1 s while 2 (ε + r S) < the gaps (S = 0)
    of[n - 1] = 1;
    expect(clearance.clear(of, 1, 0, elastic)).toBe(true);
    // sphere 0: sphere 1's gap 0.05 m is beyond the bound 2 (ε + reach) at reach 0.02 m,
    // within it at reach 0.03 m
    of[0] = 1;
    expect(clearance.clear(of, 1, 0.02, elastic)).toBe(true);
    expect(clearance.clear(of, 1, 0.03, elastic)).toBe(false);
    // MAX_SHAPES shapes asked about, all far apart: clear; one more: not tested
    of.fill(0);
    for (let i = 2; i < 2 + MAX_SHAPES; i++) of[i] = 1;
    expect(clearance.clear(of, 1, 0, elastic)).toBe(true);
    of[2 + MAX_SHAPES] = 1;
    expect(clearance.clear(of, 1, 0, elastic)).toBe(false);
  });

  it("a box over the plane: its exact distance n·c − Σ h_k |n·a_k| (clear 0.02 m above at rest); resting on it, a slow pair (clear when asked, touching) unless it moves along the normal", () => {
    // a 0.1 × 0.02 × 0.02 m box (a chain's link), flat, its centre h above the plane
    const link = (h: number, velocity: number[], angularVelocity: number[]) => {
      const sys = new BodySystem([
        {
          id: "link",
          kind: "rigid" as const,
          fixed: false,
          mass: 0.1,
          inertia: [6.667e-6, 0, 0, 0, 8.667e-5, 0, 0, 0, 8.667e-5],
          position: [0, 0, h],
          orientation: [1, 0, 0, 0],
          velocity,
          angularVelocity,
        },
      ]);
      const detector = new CollisionDetector([
        { shape: { type: "plane", normal: [0, 0, 1], offset: 0 }, body: -1 },
        { shape: { type: "box", halfExtents: [0.05, 0.01, 0.01] }, body: 0 },
      ]);
      return new ContactClearance(sys, detector);
    };
    const one = new Uint8Array([1]);
    // the caller's test of the slow pairs: passes all, noting the open gap and `touched`
    const seen: [number, boolean][] = [];
    const slow = {
      rate: 1e-6,
      pass: (_b: number, _c: number, _G: number, open: number, tb: boolean) => {
        seen.push([open, tb]);
        return true;
      },
    };
    // 0.02 m up: L = 0.01 m (its bounding sphere, ρ = 0.052 m, gave −0.032 m)
    expect(link(0.02, [0, 0, 0], [0, 0, 0]).clear(one, 0.01, 0, elastic)).toBe(true);
    // falling at 0.3 m/s: clear while 0.01 > 2 (ε + 0.3 r)
    expect(link(0.02, [0, 0, -0.3], [0, 0, 0]).clear(one, 0.0166, 0, elastic)).toBe(true);
    expect(link(0.02, [0, 0, -0.3], [0, 0, 0]).clear(one, 0.0167, 0, elastic)).toBe(false);
    // resting on it, sliding at 0.3 m/s and turning about the normal at 2 rad/s: no point
    // of it moves along the normal, so no contact approaches faster than 1e-6 m/s
    const sliding = link(0.01, [0.3, 0, 0], [0, 0, 2]);
    expect(sliding.clear(one, 0.01, 1e-4, elastic, slow)).toBe(true);
    expect(sliding.touching).toBe(true);
    // without the slow test, or moving along the normal (2e-6 m/s), or tipping about x
    // (|n × ω| ρ = 1e-4 × 0.052 m/s), not clear
    expect(sliding.clear(one, 0.01, 1e-4, elastic)).toBe(false);
    expect(link(0.01, [0, 0, 2e-6], [0, 0, 0]).clear(one, 0.01, 0, elastic, slow)).toBe(false);
    expect(link(0.01, [0, 0, 0], [1e-4, 0, 0]).clear(one, 0.01, 0, elastic, slow)).toBe(false);
    // resting still to 4e-7 m/s: slow (S < 5e-7)
    expect(link(0.01, [0, 0, 4e-7], [0, 0, 0]).clear(one, 0.01, 0, elastic, slow)).toBe(true);
    // touched (L + r S ≤ ε_act/2 = 5e-7 m: its lowest corner's contact in the index set with
    // gap ≤ ε_act): resting (L = 0, S = 4e-7 × 0.01), not 6e-7 m up; the open gap: its top
    // corners' 2 h_2 = 0.02 m resting, its bottom corners' 6e-7 m above ε_act/2
    seen.length = 0;
    expect(link(0.01, [0, 0, 4e-7], [0, 0, 0]).clear(one, 0.01, 0, elastic, slow)).toBe(true);
    expect(link(0.01 + 6e-7, [0, 0, 0], [0, 0, 0]).clear(one, 0.01, 0, elastic, slow)).toBe(true);
    expect(seen.map(([, tb]) => tb)).toEqual([true, false]);
    expect(seen[0][0]).toBeCloseTo(0.02, 15);
    expect(seen[1][0]).toBeCloseTo(6e-7, 15);
    // a pair the caller does not pass is not clear
    expect(sliding.clear(one, 0.01, 1e-4, elastic, { rate: 1e-6, pass: () => false })).toBe(false);
  });
});
