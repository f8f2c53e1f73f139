/**
 * Cylinders in the dynamics (public API: loadModel, step, state), against closed forms:
 *  - standing on its cap on a plane (nonsmooth contact, Moreau–Jean): the eight rim points
 *    of the cap carry the weight, Σ normal forces = m g, and the cylinder does not move
 *    (drift < 1e-6 m and 1e-6 rad over 3 s), with and without friction;
 *  - lying on its side on an incline of angle α with enough friction to roll: the centre
 *    moves along the slope as s = ½ a t² with a = g sin α / (1 + I/(m r²)) = (2/3) g sin α
 *    (the inertia derived from the shape, I = m r²/2), without slipping (v = r ω) and
 *    without leaving the slope;
 *  - dropped on a fixed box (standing, lying, and tilted so that it lands on its rim and
 *    falls flat) and on a fixed capsule (a short cylinder across the capsule's top, stable
 *    since its centre of mass is less than the capsule's radius above the contact): it
 *    comes to rest where the geometry says (with the post-step position projection, which
 *    removes the impact's penetration);
 *  - compliant contact (linear law): standing on its cap, k δ per rim point sums to m g,
 *    δ = m g/(8 k); per unit area, the eight rim points share the octagon of the cap
 *    (area 2√2 r²) and lying, the two ends of the line contact get π r L/4 each (area.ts).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { axisAngle, type Q4, rotate, type V3 } from "../../support/quat";
import { ROUND_OFF_CONTACT, settleOnFloor } from "./helpers";

const g = 9.81;

function rotationAngle(q: number[]): number {
  return 2 * Math.acos(Math.min(1, Math.abs(q[0])));
}

const floor = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as V3, offset: 0 }],
};

describe("cylinder standing on a plane (NSC)", () => {
  for (const friction of [0, 0.5])
    it(`rests on its eight rim points, Σ f_n = m g, drift < 1e-6 over 3 s (μ = ${friction})`, () => {
      const m = 2;
      const r = 0.1;
      const L = 0.15;
      const sim = loadModel({
        gravity: [0, 0, -g],
        bodies: [
          {
            id: "cyl",
            mass: m,
            position: [0.3, -0.2, L],
            orientation: axisAngle([0, 0, 1], 0.3),
            shapes: [{ type: "cylinder", radius: r, halfLength: L }],
          },
          floor,
        ],
        contact: { method: "nsc", friction },
        solver: { integrator: "moreau-jean", dt: 0.005 },
      });
      let worstSum = 0;
      for (let k = 0; k < 600; k++) {
        sim.step(1);
        const st = sim.state();
        if (k >= 1) {
          const sum = st.contacts.reduce((s, c) => s + c.normalForce, 0);
          worstSum = Math.max(worstSum, Math.abs(sum - m * g));
        }
      }
      const st = sim.state();
      const b = st.bodies[0];
      expect(st.time).toBeCloseTo(3, 9);
      expect(Math.hypot(b.position[0] - 0.3, b.position[1] + 0.2, b.position[2] - L)).toBeLessThan(
        1e-6,
      );
      const q0 = axisAngle([0, 0, 1], 0.3);
      // Relative rotation angle from the initial orientation.
      const dq =
        q0[0] * b.orientation[0] +
        q0[1] * b.orientation[1] +
        q0[2] * b.orientation[2] +
        q0[3] * b.orientation[3];
      expect(2 * Math.acos(Math.min(1, Math.abs(dq)))).toBeLessThan(1e-6);
      expect(st.contacts).toHaveLength(8);
      for (const c of st.contacts) {
        // Every contact is a rim point of the lower cap.
        expect(Math.hypot(c.point[0] - 0.3, c.point[1] + 0.2)).toBeCloseTo(r, 6);
        expect(Math.abs(c.point[2])).toBeLessThan(1e-6);
      }
      expect(worstSum).toBeLessThan(1e-6 * m * g);
    });
});

describe("cylinder rolling down an incline (NSC)", () => {
  it("s = ½ (2/3) g sin α t² to 1 % over 1 s, rolling without slipping", () => {
    const alpha = (20 * Math.PI) / 180;
    const m = 1.5;
    const r = 0.1;
    const L = 0.2;
    const n: V3 = [Math.sin(alpha), 0, Math.cos(alpha)];
    const down: V3 = [Math.cos(alpha), 0, -Math.sin(alpha)];
    // The plane passes through the origin; the cylinder touches it there.
    const p0: V3 = [r * n[0], 0, r * n[2]];
    const dt = 0.002;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        {
          id: "cyl",
          mass: m,
          position: p0,
          // Axis (local z) along world y, perpendicular to the slope direction.
          orientation: axisAngle([1, 0, 0], Math.PI / 2),
          shapes: [{ type: "cylinder", radius: r, halfLength: L }],
        },
        {
          id: "slope",
          fixed: true,
          shapes: [{ type: "plane", normal: n, offset: 0 }],
        },
      ],
      contact: { method: "nsc", friction: 0.6 },
      solver: { integrator: "moreau-jean", dt },
    });
    const a = (2 / 3) * g * Math.sin(alpha);
    let worstLift = 0;
    let worstRel = 0;
    let contactsSeen = Number.POSITIVE_INFINITY;
    const steps = Math.round(1 / dt);
    for (let k = 1; k <= steps; k++) {
      sim.step(1);
      const st = sim.state();
      const b = st.bodies[0];
      const d: V3 = [b.position[0] - p0[0], b.position[1] - p0[1], b.position[2] - p0[2]];
      worstLift = Math.max(worstLift, Math.abs(b.position[0] * n[0] + b.position[2] * n[2] - r));
      contactsSeen = Math.min(contactsSeen, st.contacts.length);
      const t = st.time;
      if (t >= 0.2) {
        const s = d[0] * down[0] + d[2] * down[2];
        worstRel = Math.max(worstRel, Math.abs(s / (0.5 * a * t * t) - 1));
      }
    }
    const b = sim.state().bodies[0];
    const t = sim.state().time;
    expect(t).toBeCloseTo(1, 9);
    expect(worstRel).toBeLessThan(0.01);
    const v = b.velocity[0] * down[0] + b.velocity[2] * down[2];
    expect(Math.abs(v / (a * t) - 1)).toBeLessThan(0.01);
    // Rolling: the axis is world y (ω along +y for motion down the slope in +x).
    expect(Math.abs(r * b.angularVelocity[1] - v)).toBeLessThan(1e-3 * v);
    expect(Math.abs(b.position[1])).toBeLessThan(1e-9);
    expect(worstLift).toBeLessThan(1e-4);
    // Line contact: both ends of the side line carry the cylinder.
    expect(contactsSeen).toBe(2);
  });
});

describe("cylinder dropped on a box and on a capsule comes to rest (NSC)", () => {
  const m = 1;
  const r = 0.1;
  const L = 0.15;
  const table = {
    id: "table",
    fixed: true,
    position: [0, 0, 0.1] as V3,
    shapes: [{ type: "box" as const, halfExtents: [0.6, 0.6, 0.1] as V3 }],
  };
  function run(bodies: Record<string, unknown>[], seconds: number) {
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies,
      contact: { method: "nsc", friction: 0.6 },
      // The post-step projection removes the impact's penetration (v h/2 ≈ 2 mm here),
      // which Moreau–Jean's velocity-level steps keep; solved to round-off, since the rest
      // poses are checked to 1e-6 m and 1e-9 in cos (the defaults leave up to 2e-3 r).
      solver: {
        integrator: "moreau-jean",
        dt: 0.005,
        projectOnConstraints: true,
        ...ROUND_OFF_CONTACT,
      },
    });
    sim.step(Math.round(seconds / 0.005));
    return sim;
  }
  /** The cylinder (r, L, mass m) dropped from `pose` onto the table, after `seconds`. */
  const onTable = (pose: { position: V3; orientation?: number[] }, seconds: number) =>
    run(
      [
        { id: "cyl", mass: m, ...pose, shapes: [{ type: "cylinder", radius: r, halfLength: L }] },
        table,
      ],
      seconds,
    );
  type State = ReturnType<ReturnType<typeof run>["state"]>;
  /** The cylinder at rest (|v|, |ω| < 1e-6) with its centre at height z (to 1e-4 m). */
  function expectRestingAt(st: State, z: number) {
    const b = st.bodies[0];
    expect(Math.hypot(...b.velocity)).toBeLessThan(1e-6);
    expect(Math.hypot(...b.angularVelocity)).toBeLessThan(1e-6);
    expect(Math.abs(b.position[2] - z)).toBeLessThan(1e-4);
    return b;
  }
  /** The contacts' normal forces carry the weight m g. */
  const expectWeightCarried = (st: State) =>
    expect(st.contacts.reduce((s, c) => s + c.normalForce, 0)).toBeCloseTo(m * g, 5);

  it("standing, dropped 5 cm onto a box face: rests on its cap", () => {
    const st = onTable({ position: [0.1, 0.05, 0.2 + L + 0.05] }, 2).state();
    const b = expectRestingAt(st, 0.2 + L);
    expect(Math.hypot(b.position[0] - 0.1, b.position[1] - 0.05)).toBeLessThan(1e-6);
    expect(st.contacts.length).toBeGreaterThanOrEqual(8);
    expectWeightCarried(st);
  });

  it("lying, dropped onto a box face: rests on its side line", () => {
    const st = onTable(
      { position: [0, 0, 0.2 + r + 0.03], orientation: axisAngle([1, 0, 0], Math.PI / 2) },
      2,
    ).state();
    expectRestingAt(st, 0.2 + r);
    expect(st.contacts).toHaveLength(2);
    expectWeightCarried(st);
  });

  it("tilted 20°, dropped onto a box face: lands on its rim, falls flat on its cap and rests", () => {
    const tilt = (20 * Math.PI) / 180;
    const q = axisAngle([1, 0, 0], tilt);
    const low = r * Math.sin(tilt) + L * Math.cos(tilt);
    const st = onTable({ position: [0, 0, 0.2 + low + 0.02], orientation: q }, 3).state();
    const b = expectRestingAt(st, 0.2 + L);
    const axis = rotate(b.orientation, [0, 0, 1]);
    expect(Math.abs(axis[2])).toBeGreaterThan(1 - 1e-9);
  });

  it("a short cylinder dropped across a capsule's top rests there", () => {
    const R = 0.2;
    const disc = { r: 0.15, L: 0.05 };
    const sim = run(
      [
        {
          id: "cyl",
          mass: m,
          position: [0.1, 0, R + disc.L + 0.03],
          shapes: [{ type: "cylinder", radius: disc.r, halfLength: disc.L }],
        },
        {
          id: "log",
          fixed: true,
          orientation: axisAngle([0, 1, 0], Math.PI / 2),
          shapes: [{ type: "capsule", radius: R, halfLength: 0.5 }],
        },
      ],
      2,
    );
    const st = sim.state();
    const b = expectRestingAt(st, R + disc.L);
    expect(Math.abs(b.position[1])).toBeLessThan(1e-6);
    expect(rotationAngle(b.orientation)).toBeLessThan(1e-6);
    // The line contact across the cap: two points on the capsule's top line.
    expect(st.contacts).toHaveLength(2);
    expectWeightCarried(st);
  });
});

describe("cylinder on a plane with compliant contact (SMC)", () => {
  const m = 1;
  const r = 0.1;
  const L = 0.05;
  const drop = (behavior: Record<string, unknown>, orientation: Q4, z0: number) =>
    settleOnFloor(
      {
        id: "cyl",
        mass: m,
        position: [0, 0, z0],
        orientation,
        shapes: [{ type: "cylinder", radius: r, halfLength: L }],
      },
      floor,
      behavior,
      g,
    );

  it("linear, standing: 8 k δ = m g", () => {
    const k = 1e6;
    const st = drop({ type: "linear", stiffness: k, stepDamping: 0.5 }, [1, 0, 0, 0], L + 0.002);
    expect(st.contacts).toHaveLength(8);
    expect(Math.abs(L - st.bodies[0].position[2] - (m * g) / (8 * k))).toBeLessThan(1e-12);
  });

  it("linear per unit area, standing: k (2√2 r²) δ = m g (the rim octagon)", () => {
    const kA = 1e8;
    const st = drop(
      { type: "linear", stiffness: kA, stepDamping: 0.5, perUnitArea: true },
      [1, 0, 0, 0],
      L + 0.002,
    );
    const A = 2 * Math.SQRT2 * r * r;
    expect(Math.abs(L - st.bodies[0].position[2] - (m * g) / (kA * A))).toBeLessThan(1e-12);
  });

  it("linear per unit area, lying: k (π r L/2) δ = m g (two ends of the line contact)", () => {
    const kA = 1e8;
    const st = drop(
      { type: "linear", stiffness: kA, stepDamping: 0.5, perUnitArea: true },
      axisAngle([1, 0, 0], Math.PI / 2),
      r + 0.002,
    );
    expect(st.contacts).toHaveLength(2);
    const A = (Math.PI * r * L) / 2;
    expect(Math.abs(r - st.bodies[0].position[2] - (m * g) / (kA * A))).toBeLessThan(1e-12);
  });
});
