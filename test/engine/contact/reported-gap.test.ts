/**
 * The State's contact gap is the gap at the state's pose, after the step's position
 * projection (NonsmoothContact.poseGap), not the step's linearized end gap
 * g_t + h((1−θ) u_n⁻ + θ u_n⁺), which the projection then corrects: a body started 1 cm
 * into the floor read about −1 cm after its first step though the projection had lifted
 * it out. Checked against the signed distance to the floor z = 0 recomputed here from
 * the bodies' final poses: a sphere's centre height less its radius, a box vertex's height.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

const g = 9.81;
type Vec3 = [number, number, number];
type Quat = [number, number, number, number];

/** v rotated by the unit quaternion q = [w, x, y, z]. */
function rotate(q: Quat, v: Vec3): Vec3 {
  const [w, x, y, z] = q;
  // t = 2 q_v × v, v' = v + w t + q_v × t
  const t: Vec3 = [2 * (y * v[2] - z * v[1]), 2 * (z * v[0] - x * v[2]), 2 * (x * v[1] - y * v[0])];
  return [
    v[0] + w * t[0] + (y * t[2] - z * t[1]),
    v[1] + w * t[1] + (z * t[0] - x * t[2]),
    v[2] + w * t[2] + (x * t[1] - y * t[0]),
  ];
}

const R = 0.05; // sphere radius (m)
const HALF: Vec3 = [0.1, 0.15, 0.05]; // box half extents (m)
const TILT = 0.05; // the box's start tilt about x (rad)
const L = 0.6; // the bob's distance from its pivot (m)
const TOLERANCE = 1e-6; // the projection's (m)

/**
 * A free sphere 1 cm into the floor, sliding and spinning; a box tilted by TILT with its
 * lowest edge 1 cm into it; a bob on a rod of L about a horizontal axis, 60° from the
 * vertical, 1 cm into it (the projection lifts it along the joint).
 */
function model() {
  const box = (m: number): Vec3 => [
    (m * (HALF[1] ** 2 + HALF[2] ** 2)) / 3,
    (m * (HALF[0] ** 2 + HALF[2] ** 2)) / 3,
    (m * (HALF[0] ** 2 + HALF[1] ** 2)) / 3,
  ];
  // the tilted box's lowest point: HALF[1] sin φ + HALF[2] cos φ below its centre
  const zBox = HALF[1] * Math.sin(TILT) + HALF[2] * Math.cos(TILT) - 0.01;
  const I = 0.4 * R * R;
  return {
    gravity: [0, 0, -g] as Vec3,
    bodies: [
      {
        id: "floor",
        fixed: true,
        shapes: [{ type: "plane" as const, normal: [0, 0, 1] as Vec3, offset: 0 }],
      },
      {
        id: "ball",
        mass: 1,
        position: [0, 0, R - 0.01] as Vec3,
        velocity: [0.5, 0, 0] as Vec3,
        angularVelocity: [0, 3, 1] as Vec3,
        inertia: [I, I, I] as Vec3,
        shapes: [{ type: "sphere" as const, radius: R }],
      },
      {
        id: "box",
        mass: 2,
        position: [1, 0, zBox] as Vec3,
        orientation: [Math.cos(TILT / 2), Math.sin(TILT / 2), 0, 0] as Quat,
        inertia: box(2),
        shapes: [{ type: "box" as const, halfExtents: HALF }],
      },
      {
        id: "bob",
        mass: 1,
        position: [-1 + L * Math.sin(Math.PI / 3), 0, R - 0.01] as Vec3,
        inertia: [I, I, I] as Vec3,
        shapes: [{ type: "sphere" as const, radius: R }],
      },
    ],
    joints: [
      {
        id: "pivot",
        type: "revolute" as const,
        a: { body: "ground", point: [-1, 0, R - 0.01 + L / 2] as Vec3 },
        b: { body: "bob", point: [-L * Math.sin(Math.PI / 3), 0, L / 2] as Vec3 },
        axis: [0, 1, 0] as Vec3,
      },
    ],
    contact: { method: "nsc" as const },
    solver: { integrator: "moreau-jean" as const, dt: 1 / 60, projectionTolerance: TOLERANCE },
  };
}

describe("the State's contact gap: the signed distance at the state's pose", () => {
  it("a sphere, a tilted box and a hinged bob started 1 cm into the floor, 60 steps", () => {
    const sim = loadModel(model());
    let checked = 0;
    for (let step = 0; step < 60; step++) {
      sim.step(1);
      const st = sim.state();
      const byId = new Map(st.bodies.map((b) => [b.id, b]));
      for (const c of st.contacts) {
        const id = c.bodies[0] === "floor" ? c.bodies[1] : c.bodies[0];
        const b = byId.get(id);
        if (b === undefined) throw new Error(`no body ${id}`);
        let exact: number;
        if (id === "box") {
          // the box vertex nearest the reported point (the step's start) at the final pose
          let best = Number.POSITIVE_INFINITY;
          exact = Number.NaN;
          for (let k = 0; k < 8; k++) {
            const local: Vec3 = [
              k & 1 ? HALF[0] : -HALF[0],
              k & 2 ? HALF[1] : -HALF[1],
              k & 4 ? HALF[2] : -HALF[2],
            ];
            const r = rotate(b.orientation as Quat, local);
            const p = [0, 1, 2].map((i) => b.position[i] + r[i]);
            const d = Math.hypot(p[0] - c.point[0], p[1] - c.point[1], p[2] - c.point[2]);
            if (d < best) {
              best = d;
              exact = p[2];
            }
          }
          expect(best).toBeLessThan(0.02);
        } else exact = b.position[2] - R;
        expect(Math.abs(c.gap - exact)).toBeLessThan(1e-12);
        checked++;
      }
      // the projection lifted all three out, to its tolerance, in the first step
      for (const c of st.contacts) expect(c.gap).toBeGreaterThan(-TOLERANCE);
      if (step === 0) expect(st.contacts.length).toBeGreaterThanOrEqual(4);
    }
    expect(checked).toBeGreaterThan(200);
  });
});
