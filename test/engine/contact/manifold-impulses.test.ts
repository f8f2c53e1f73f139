/**
 * ManifoldImpulses: the contact forces reported for a manifold whose points rest are the
 * least-norm distribution of the same wrench (manifold-impulses.ts), seen in the State of a
 * box on the floor at the defaults (moreau-jean, nsc, h = 5 ms).
 *
 * A 0.2 m cube of 1 kg on the floor, its four corner contacts at x, y = ±a:
 *  - slid and stopped: at rest the contacts carry its weight and no tangential load, so
 *    the least-norm forces are f_n = m g/4 at each corner and f_t = 0 (the rigid problem
 *    fixes only their sum and moments: before, the sliding's impulses left Σ|f_t| = 22 %
 *    of m g in forces that cancel, and normal forces 2.72 / 2.18 N on the diagonals);
 *  - held by static friction against a horizontal force F at its centre of mass (height
 *    a): the floor's moment balance about the face's centre gives the corners at x = ±a
 *    f_n = m g/4 ± F/4 (F a = 2a (f₊ − f₋)), and the load-weighted least-norm friction is
 *    f_t = −F f_n/(m g) at each corner (a rigid slip's direction field, here a translation).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const g = 9.81;
const a = 0.1;
const floor = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as [number, number, number], offset: 0 }],
};

function cube(extra: Record<string, unknown>, forces: unknown[] = []) {
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [
      floor,
      {
        id: "box",
        mass: 1,
        position: [0, 0, a],
        shapes: [{ type: "box", halfExtents: [a, a, a] }],
        ...extra,
      },
    ],
    forces,
    contact: { method: "nsc", friction: 0.3 },
  } as never);
}

describe("a box's four corner contacts", () => {
  it("slid, spun and stopped: no tangential force at any corner, m g/4 on each", () => {
    const sim = cube({ velocity: [2, 0.5, 0], angularVelocity: [0, 0, 3] });
    // stops after about v0²/(2 μ g) / (v0/2) ≈ 0.7 s; then 2 s at rest, every step checked
    sim.step(200);
    let ft = 0;
    let fn = 0;
    for (let k = 0; k < 400; k++) {
      sim.step(1);
      const s = sim.state();
      expect(s.contacts).toHaveLength(4);
      for (const c of s.contacts) {
        ft = Math.max(ft, Math.hypot(...c.tangentForce));
        fn = Math.max(fn, Math.abs(c.normalForce - g / 4));
      }
    }
    expect(Math.hypot(...sim.state().bodies[1].velocity)).toBeLessThan(1e-9);
    expect(ft).toBeLessThan(1e-9 * g);
    expect(fn).toBeLessThan(1e-6 * g);
  });

  it("held by friction against a push at its centre: f_n = m g/4 ± F/4, f_t = −F f_n/(m g)", () => {
    const F = 1; // below μ m g = 2.94 N
    const sim = cube({}, [
      { id: "push", type: "pointForce", at: { body: "box" }, force: [F, 0, 0] },
    ]);
    sim.step(400);
    const s = sim.state();
    expect(Math.hypot(...s.bodies[1].velocity)).toBeLessThan(1e-6);
    expect(s.contacts).toHaveLength(4);
    for (const c of s.contacts) {
      const side = Math.sign(c.point[0]);
      const expected = g / 4 + (side * F) / 4;
      expect(Math.abs(c.normalForce - expected)).toBeLessThan(1e-4 * g);
      expect(Math.abs(c.tangentForce[0] + (F * c.normalForce) / g)).toBeLessThan(1e-4 * g);
      expect(Math.abs(c.tangentForce[1])).toBeLessThan(1e-4 * g);
    }
  });
});
