/**
 * Resting contact with Moreau–Jean: a box on a plane and a stack of ten boxes.
 *
 * A box resting on a face (gap 0 at its four corners, at rest) must stay where it is: each
 * step the free velocity is −g h, the four active corner contacts (0 + h·0/2 ≤ 0) take the
 * impulse m g h (shared among them; the LCP's solution set is a face), and v⁺ = 0, so
 * positions do not change (asserted: < 1e-6 m and 1e-6 rad over 10 s, with and without
 * friction).
 * A stack of ten unit boxes stands for 5 s: with PGS at its default budget (which converges
 * slowly on a tall frictional stack, so the stack settles by a fraction of a millimetre and
 * stays) and with Barzilai–Borwein, whose converged impulses hold every box in place to
 * 1e-6 m.
 * Columns of 6 and 10 cubes rest at the defaults; a column of eight cubes, alternate ones
 * yawed 45°, rests with every contact pair carrying the weight above it.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { ROUND_OFF_CONTACT } from "./helpers";

const g = 9.81;
const floor = {
  id: "floor",
  fixed: true,
  shapes: [{ type: "plane" as const, normal: [0, 0, 1] as [number, number, number], offset: 0 }],
};

function rotationAngle(q: number[]): number {
  return 2 * Math.acos(Math.min(1, Math.abs(q[0])));
}

describe("box resting on a plane", () => {
  for (const friction of [0, 0.5])
    it(`drifts less than 1e-6 m in 10 s (μ = ${friction})`, () => {
      const half: [number, number, number] = [0.1, 0.05, 0.07];
      const sim = loadModel({
        gravity: [0, 0, -g],
        bodies: [
          {
            id: "box",
            mass: 2,
            position: [0.3, -0.2, half[2]],
            shapes: [{ type: "box", halfExtents: half }],
          },
          floor,
        ],
        contact: { method: "nsc", friction },
        solver: { integrator: "moreau-jean", dt: 0.005 },
      });
      sim.step(2000);
      const st = sim.state();
      const b = st.bodies[0];
      expect(st.time).toBeCloseTo(10, 9);
      expect(
        Math.hypot(b.position[0] - 0.3, b.position[1] + 0.2, b.position[2] - half[2]),
      ).toBeLessThan(1e-6);
      expect(rotationAngle(b.orientation)).toBeLessThan(1e-6);
      expect(st.contacts).toHaveLength(4);
      expect(st.contacts.reduce((s, c) => s + c.normalForce, 0)).toBeCloseTo(2 * g, 6);
    });
});

function stack(contactSolver: string, settings: Record<string, unknown>) {
  const a = 0.1;
  const bodies: Record<string, unknown>[] = [floor];
  for (let i = 0; i < 10; i++)
    bodies.push({
      id: `b${i}`,
      mass: 1,
      position: [0, 0, a + 2 * a * i],
      shapes: [{ type: "box", halfExtents: [a, a, a] }],
    });
  return loadModel({
    gravity: [0, 0, -g],
    bodies,
    contact: { method: "nsc", friction: 0.5 },
    solver: { integrator: "moreau-jean", dt: 0.005, contactSolver, ...settings },
  });
}

describe("a box resting on a platform a joint holds on the floor", () => {
  // the platform (10 kg, 2 × 2 × 0.1 m) lies on the floor; a 1 kg box of 0.2 m stands on
  // it. The joint (welded to the ground, a hinge along its edge, a rail along x) blocks the
  // platform–floor contacts' normal direction, whose Delassus entry the joints' solve gave
  // as round-off (±8e-102): its inverse made the contact solver's updates NaN at the first
  // step. Closed form: everything stays, the box's contacts carry m g
  const joints = {
    welded: {
      id: "j",
      type: "fixed",
      a: { body: "ground", point: [0, 0, 0.05] },
      b: { body: "p" },
    },
    hinged: {
      id: "j",
      type: "revolute",
      a: { body: "ground", point: [-1, 0, 0.05] },
      b: { body: "p", point: [-1, 0, 0] },
      axis: [0, 1, 0],
    },
    "on a rail": {
      id: "j",
      type: "prismatic",
      a: { body: "ground", point: [0, 0, 0.05] },
      b: { body: "p" },
      axis: [1, 0, 0],
    },
  };
  for (const [how, joint] of Object.entries(joints))
    for (const contactSolver of ["nncg", "pgs"])
      it(`${how}, ${contactSolver}: stays 10 s, the box's contact force m g`, () => {
        const sim = loadModel({
          gravity: [0, 0, -g],
          bodies: [
            {
              id: "p",
              mass: 10,
              position: [0, 0, 0.05],
              shapes: [{ type: "box", halfExtents: [1, 1, 0.05] }],
            },
            {
              id: "box",
              mass: 1,
              position: [0.5, 0, 0.2],
              shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
            },
            floor,
          ],
          joints: [joint],
          contact: { method: "nsc", friction: 0.5 },
          solver: { contactSolver },
        } as never);
        sim.step(2000);
        const s = sim.state();
        const box = s.bodies.find((b) => b.id === "box");
        expect(box?.position[2]).toBeCloseTo(0.2, 9);
        expect(Math.hypot(...(box?.velocity ?? [1]))).toBeLessThan(1e-9);
        const onBox = (s.contacts ?? []).filter((c) => c.bodies.includes("box"));
        const up = onBox.reduce((sum, c) => sum + c.normalForce * Math.abs(c.normal[2]), 0);
        expect(up).toBeCloseTo(g, 6);
      });
});

describe("stack of ten boxes", () => {
  // pgs at the defaults; barzilai-borwein solved to round-off without the position
  // projection, to show that its solution holds the stack to 1e-6 m (the defaults allow
  // each contact 2e-3·a of penetration). pgs does not converge on this stack within its
  // 200 sweeps in 386 of the 1000 steps (522 before the sweeps past the tolerance of
  // budget.ts, which follow the steps that do), and its boxes sway at up to ~1e-3 m/s
  // (the top one at 1.0e-3 m/s after 5 s; 8.8e-4 m/s before): the nncg default rests such
  // a column (columns of cubes, below)
  for (const [solver, tolerance, speed, settings] of [
    ["pgs", 1e-3, 2e-3, {}],
    ["barzilai-borwein", 1e-6, 1e-3, { ...ROUND_OFF_CONTACT, projectOnConstraints: false }],
  ] as const)
    it(`stands for 5 s (${solver}: every box within ${tolerance} m of its place)`, () => {
      const sim = stack(solver, settings);
      sim.step(1000);
      const st = sim.state();
      st.bodies.slice(1).forEach((b, i) => {
        const z0 = 0.1 + 0.2 * i;
        expect(Math.hypot(b.position[0], b.position[1], b.position[2] - z0)).toBeLessThan(
          tolerance,
        );
        expect(rotationAngle(b.orientation)).toBeLessThan(10 * tolerance);
        expect(Math.hypot(...b.velocity)).toBeLessThan(speed);
      });
    });
});

describe("columns of cubes at the defaults", () => {
  // 0.2 m cubes of 1 kg stacked touching on the floor, μ = 0.5, every setting at its
  // default (nsc, moreau-jean, h = 5 ms: contact tolerance ε = 10⁻³·|g|·h = 4.9e-5 m/s,
  // projection tolerance 2·10⁻³·a = 0.2 mm). Closed form: the column rests, cube i (0 the
  // lowest) at height a + 2 a i less at most the penetration the projection allows at the
  // i + 1 contacts below it, and the floor carries the column's weight n m g. Asserted from
  // 2 s on: no step ends above ε (contactConverged), every cube slower than 1e-4 m/s
  // (measured 5.6e-6 m/s with 6 cubes, 1.6e-5 with 10), the heights, and the floor's
  // reaction to 1e-4 of n m g (measured 1.7e-6 and 2.7e-5). Before the sweeps past the
  // tolerance (budget.ts, REST_UPDATES), the sway the contact tolerance left reached
  // 8.3e-4 m/s (6 cubes) and 4.9e-3 m/s (10), the heights 2.4e-4 m off (now 9e-8 and
  // 7e-6 m),
  // 12 and 39 of the 2600 steps from 2 s ended above ε, the floor's reaction off by 6.5e-4
  // and 5.0e-4 of n m g.
  for (const n of [6, 10])
    it(`${n} cubes rest for 15 s, none short, every cube below 1e-4 m/s`, () => {
      const a = 0.1;
      const bodies: Record<string, unknown>[] = [floor];
      for (let i = 0; i < n; i++)
        bodies.push({
          id: `b${i}`,
          mass: 1,
          position: [0, 0, a + 2 * a * i],
          shapes: [{ type: "box", halfExtents: [a, a, a] }],
        });
      const sim = loadModel({
        gravity: [0, 0, -g],
        bodies,
        contact: { method: "nsc", friction: 0.5 },
      });
      const penetration = 2e-3 * a;
      let short = 0;
      let speed = 0;
      let sink = 0;
      let reaction = 0;
      for (let k = 1; k <= 3000; k++) {
        sim.step(1);
        if (k < 400) continue;
        if (!sim.lastStepStats.contactConverged) short++;
        if (k % 10 !== 0) continue;
        const s = sim.state();
        s.bodies.slice(1).forEach((b, i) => {
          speed = Math.max(speed, Math.hypot(...b.velocity));
          sink = Math.max(
            sink,
            Math.abs(b.position[2] - (a + 2 * a * i)) / ((i + 1) * penetration),
          );
        });
        const up = (s.contacts ?? [])
          .filter((c) => c.bodies.includes("floor"))
          .reduce((sum, c) => sum + c.normalForce, 0);
        reaction = Math.max(reaction, Math.abs(up / (n * g) - 1));
      }
      expect(short).toBe(0);
      expect(speed).toBeLessThan(1e-4);
      expect(sink).toBeLessThan(1);
      expect(reaction).toBeLessThan(1e-4);
    });
});

describe("a column of eight cubes, alternate ones yawed 45°", () => {
  // 0.2 m cubes of 1 kg stacked touching, every other one turned 45° about z, μ = 0.6, the
  // defaults (nsc, moreau-jean, h = 5 ms). Closed form: the column rests; the contacts
  // under cube i (0 the lowest) carry the weight above, (8 − i) m g. Asserted at every step
  // after the first second: each pair's normal forces sum to it within 1 % (measured
  // 0.006 % over 60 s), and each cube's height
  // stays within (i + 1) projection tolerances (2·10⁻³ of the half extent per contact
  // below it). Between a yawed cube and a straight one the faces' edge axes are within
  // their relative tilt (~1e-4 rad) of vertical, and the box–box pair chose one of them:
  // one contact under a resting cube, and from 9.47 s the forces were off by up to 130 %
  // (with a yaw of 0.7853981634 the column collapsed at 8.81 s, 1.4 cm). 21 s: the run
  // covers the two transients of two steps that remained after that fix (13 % at 14.1 s,
  // 7.7 % at 20.4 s, and 148 of 12 000 steps above the tolerance over 60 s), where the
  // contact solve tipped a cube standing on two diagonal points of its four onto a third:
  // the column's sway, which the contact tolerance left (3.6e-3 m/s), now taken out by the
  // sweeps past the tolerance (budget.ts, REST_UPDATES; 1.8e-6 m/s). From 3 s on no step
  // ends above the contact tolerance (12 did as the column settled, all within 0.85 s).
  const steps = 4200;
  it(`rests for ${steps * 0.005} s, each contact pair carrying the weight above it`, () => {
    const a = 0.1;
    const n = 8;
    const yaw = Math.PI / 4;
    const bodies: Record<string, unknown>[] = [floor];
    for (let i = 0; i < n; i++)
      bodies.push({
        id: `b${i}`,
        mass: 1,
        position: [0, 0, a + 2 * a * i],
        orientation: [Math.cos(((i % 2) * yaw) / 2), 0, 0, Math.sin(((i % 2) * yaw) / 2)],
        shapes: [{ type: "box", halfExtents: [a, a, a] }],
      });
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies,
      contact: { method: "nsc", friction: 0.6 },
    });
    const index = (id: string) => (id === "floor" ? -1 : Number(id.slice(1)));
    let forceError = 0;
    let sink = 0;
    let short = 0;
    for (let k = 1; k <= steps; k++) {
      sim.step(1);
      if (k >= 600 && !sim.lastStepStats.contactConverged) short++;
      const s = sim.state();
      const load = new Array<number>(n).fill(0);
      for (const c of s.contacts ?? []) {
        load[Math.max(index(c.bodies[0]), index(c.bodies[1]))] += c.normalForce;
      }
      for (let i = 0; i < n; i++) {
        const weight = (n - i) * g;
        if (k >= 200) forceError = Math.max(forceError, Math.abs(load[i] - weight) / weight);
        const z = s.bodies[i + 1].position[2];
        sink = Math.max(sink, Math.abs(z - (a + 2 * a * i)) / (i + 1));
      }
    }
    expect(forceError).toBeLessThan(0.01);
    expect(short).toBe(0);
    expect(sink).toBeLessThan(2e-3 * a);
  });
});
