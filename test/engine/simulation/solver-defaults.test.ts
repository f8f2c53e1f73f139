/**
 * The solver settings a model leaves out (issue 29; src/engine/simulation/solver-defaults.ts,
 * src/engine/contact/budget.ts; README, "Solver settings"), against the tolerances they
 * state, measured independently of the solver's own figures:
 *  - the resolved values are the stated formulas: contact tolerance 10⁻³·|g|·h (m/s),
 *    10⁻⁶·ℓ/h without gravity, projection tolerance 2·10⁻³·ℓ with ℓ the smallest colliding
 *    shape's size per shape kind; an explicit setting wins, null restores the default, and a
 *    PATCH of dt or gravity moves them;
 *  - a pile of 27 spheres dropped into a box, at the defaults: once it has landed every
 *    step meets both tolerances, checked by brute force from the State (every sphere–sphere
 *    and sphere–wall gap from the positions; every pushing contact's normal velocity from
 *    the bodies' velocities);
 *  - a chain of ten jointed capsules dropped on the floor (contacts and joints projected
 *    together): penetration within the projection tolerance and the joints closed to
 *    solver.jointTolerance at every step;
 *  - a budget that runs out says so: contactConverged / projectionConverged false with the
 *    residual and the penetration (the latter equal to the brute-force one).
 */
import { describe, expect, it } from "vitest";
import { Model } from "../../../schemas/model";
import type { StateOut } from "../../../schemas/state";
import { loadModel } from "../../../src/engine/index";
import { contactSize, resolveSolver } from "../../../src/engine/simulation/solver-defaults";
import { rotate, type V3 } from "../../support/quat";

const g = 9.81;
const R = 0.05;
const BOX = 0.15;

const walls = {
  id: "box",
  fixed: true,
  shapes: [
    { type: "plane", normal: [0, 0, 1], offset: 0 },
    { type: "plane", normal: [1, 0, 0], offset: -BOX },
    { type: "plane", normal: [-1, 0, 0], offset: -BOX },
    { type: "plane", normal: [0, 1, 0], offset: -BOX },
    { type: "plane", normal: [0, -1, 0], offset: -BOX },
  ],
};

/** 27 spheres of radius R (0.1 kg) in three offset layers above the floor of a 0.3 m box. */
function pile(solver: Record<string, unknown> = {}) {
  const bodies: Record<string, unknown>[] = [];
  for (let k = 0; k < 3; k++)
    for (let j = 0; j < 3; j++)
      for (let i = 0; i < 3; i++)
        bodies.push({
          id: `s${i}${j}${k}`,
          mass: 0.1,
          position: [
            -0.1 + 0.1 * i + 0.004 * (k % 2),
            -0.1 + 0.1 * j - 0.003 * (k % 2),
            0.08 + 0.13 * k,
          ],
          shapes: [{ type: "sphere", radius: R }],
        });
  return loadModel({
    gravity: [0, 0, -g],
    bodies: [...bodies, walls],
    contact: { method: "nsc", friction: 0.5 },
    solver: { integrator: "moreau-jean", dt: 1 / 240, ...solver },
  });
}

/** Deepest penetration (m, ≥ 0) among the spheres and the box's five walls, from positions. */
function pilePenetration(st: StateOut): number {
  const spheres = st.bodies.filter((b) => b.id !== "box").map((b) => b.position);
  let pen = 0;
  for (let a = 0; a < spheres.length; a++) {
    const [x, y, z] = spheres[a];
    pen = Math.max(pen, R - z, R - (BOX - x), R - (BOX + x), R - (BOX - y), R - (BOX + y));
    for (let b = a + 1; b < spheres.length; b++) {
      const d = Math.hypot(x - spheres[b][0], y - spheres[b][1], z - spheres[b][2]);
      pen = Math.max(pen, 2 * R - d);
    }
  }
  return pen;
}

/** Largest |u_n| (m/s) of the contacts that push: n·(velocity of b − velocity of a) at the point. */
function pushingNormalVelocity(st: StateOut): number {
  const body = new Map(st.bodies.map((b) => [b.id, b]));
  const pointVelocity = (id: string, p: number[]): number[] => {
    const b = body.get(id);
    if (b === undefined || id === "box") return [0, 0, 0];
    const r = [p[0] - b.position[0], p[1] - b.position[1], p[2] - b.position[2]];
    const w = b.angularVelocity;
    return [
      b.velocity[0] + w[1] * r[2] - w[2] * r[1],
      b.velocity[1] + w[2] * r[0] - w[0] * r[2],
      b.velocity[2] + w[0] * r[1] - w[1] * r[0],
    ];
  };
  let worst = 0;
  for (const c of st.contacts) {
    if (!(c.normalForce > 0)) continue;
    const va = pointVelocity(c.bodies[0], c.point);
    const vb = pointVelocity(c.bodies[1], c.point);
    const un = c.normal.reduce((s, n, k) => s + n * (vb[k] - va[k]), 0);
    worst = Math.max(worst, Math.abs(un));
  }
  return worst;
}

describe("the defaults' formulas", () => {
  const model = (shapes: unknown[], extra: Record<string, unknown> = {}) =>
    Model.parse({
      bodies: [
        { id: "a", mass: 1, shapes },
        { id: "floor", fixed: true, shapes: [{ type: "box", halfExtents: [5, 5, 0.001] }] },
      ],
      contact: { method: "nsc" },
      ...extra,
    });

  it("ℓ per shape kind: radius, smallest half extent, half the smallest bounding side, fem cells", () => {
    expect(contactSize(model([{ type: "sphere", radius: 0.07 }]))).toBe(0.07);
    expect(contactSize(model([{ type: "capsule", radius: 0.03, halfLength: 0.2 }]))).toBe(0.03);
    expect(contactSize(model([{ type: "box", halfExtents: [0.2, 0.04, 0.1] }]))).toBe(0.04);
    expect(contactSize(model([{ type: "cylinder", radius: 0.2, halfLength: 0.05 }]))).toBe(0.05);
    const tetra = [
      [0, 0, 0],
      [0.3, 0, 0],
      [0, 0.1, 0],
      [0, 0, 0.2],
    ];
    expect(contactSize(model([{ type: "convex", points: tetra }]))).toBeCloseTo(0.05, 15);
    // the smallest of several shapes; fixed bodies (the 1 mm thick floor) and planes not
    expect(
      contactSize(
        model([
          { type: "sphere", radius: 0.07 },
          { type: "box", halfExtents: [0.2, 0.04, 0.1], position: [0, 0, 0.3] },
        ]),
      ),
    ).toBe(0.04);
    const fem = Model.parse({
      bodies: [{ id: "floor", fixed: true, shapes: [{ type: "plane" }] }],
      fem: [
        {
          id: "beam",
          box: { size: [0.4, 0.1, 0.1], resolution: [4, 2, 2] },
          density: 1000,
          youngModulus: 1e5,
        },
      ],
      contact: { method: "nsc" },
    });
    expect(contactSize(fem)).toBeCloseTo(0.025, 15);
  });

  it("tolerance 1e-3 |g| h (1e-6 ℓ/h without gravity), projection 2e-3 ℓ; explicit settings win", () => {
    const spec = model([{ type: "sphere", radius: 0.05 }]).solver;
    const h = spec.dt;
    const r = resolveSolver(spec, 0.05, [0, 3, -4]);
    expect(r.tolerance).toBeCloseTo(1e-3 * 5 * h, 18);
    expect(r.projectionTolerance).toBeCloseTo(1e-4, 18);
    expect(r.maxIterations).toBeNull();
    expect(r.projectionIterations).toBeNull();
    expect(resolveSolver(spec, 0.05, [0, 0, 0]).tolerance).toBeCloseTo((1e-6 * 0.05) / h, 18);
    const explicit = resolveSolver(
      { ...spec, tolerance: 1e-9, projectionTolerance: 1e-7, maxIterations: 7 },
      0.05,
      [0, 0, -g],
    );
    expect([explicit.tolerance, explicit.projectionTolerance, explicit.maxIterations]).toEqual([
      1e-9, 1e-7, 7,
    ]);
  });

  it("reach the simulation and follow a PATCH of dt and gravity; null restores them", () => {
    const sim = pile();
    const h = 1 / 240;
    expect(sim.solver.tolerance).toBeCloseTo(1e-3 * g * h, 18);
    expect(sim.solver.projectionTolerance).toBeCloseTo(2e-3 * R, 18);
    expect(sim.solver.projectOnConstraints).toBe(true);
    const nsc = sim.contactModel?.nonsmooth;
    expect(nsc?.settings.tolerance).toBe(sim.solver.tolerance);
    expect(nsc?.projection.settings).toEqual({ tolerance: 2e-3 * R, maxIterations: null });
    sim.update({ solver: { dt: 0.002 } });
    expect(nsc?.settings.tolerance).toBeCloseTo(1e-3 * g * 0.002, 18);
    sim.update({ gravity: [0, 0, -1.62] });
    expect(nsc?.settings.tolerance).toBeCloseTo(1e-3 * 1.62 * 0.002, 18);
    sim.update({ solver: { tolerance: 1e-8, projectionTolerance: 1e-6 } });
    expect(nsc?.settings.tolerance).toBe(1e-8);
    expect(nsc?.projection.settings.tolerance).toBe(1e-6);
    sim.update({ solver: { tolerance: null, projectionTolerance: null } });
    expect(nsc?.settings.tolerance).toBeCloseTo(1e-3 * 1.62 * 0.002, 18);
    expect(nsc?.projection.settings.tolerance).toBeCloseTo(2e-3 * R, 18);
  });
});

describe("a pile at the defaults meets the stated tolerances", () => {
  it("27 spheres dropped into a box: after landing, penetration ≤ 2e-3 R and |u_n| ≤ 1e-3 g h at every step", () => {
    const sim = pile();
    const h = 1 / 240;
    const tolerance = 1e-3 * g * h;
    const penetrationTolerance = 2e-3 * R;
    let unmet = 0;
    let worstPen = 0;
    let worstUn = 0;
    let landed = 0;
    for (let k = 1; k <= 720; k++) {
      sim.step(1);
      const st = sim.state();
      const pen = pilePenetration(st);
      // what the stats claim holds by brute force, at every step, landing included
      expect(Math.abs(st.solver.penetration - pen)).toBeLessThan(1e-9);
      expect(st.solver.projectionConverged).toBe(pen <= penetrationTolerance + 1e-12);
      expect(st.solver.contactConverged).toBe(st.solver.contactResidual <= tolerance);
      if (!st.solver.contactConverged || !st.solver.projectionConverged) unmet++;
      if (k <= 240) continue;
      // from 1 s on (the pile has landed): both tolerances, every step
      landed++;
      worstPen = Math.max(worstPen, pen);
      worstUn = Math.max(worstUn, pushingNormalVelocity(st));
      expect(st.solver.contactConverged).toBe(true);
    }
    expect(landed).toBe(480);
    expect(worstPen).toBeLessThanOrEqual(penetrationTolerance);
    expect(worstUn).toBeLessThanOrEqual(tolerance);
    // the landing met them too but for a step or two of its impacts
    expect(unmet).toBeLessThan(10);
    // and they bind: without the position projection the landed pile keeps its impacts'
    // penetrations (up to h|u_n|/2), many times the tolerance
    const unprojected = pile({ projectOnConstraints: false });
    unprojected.step(720);
    expect(pilePenetration(unprojected.state())).toBeGreaterThan(10 * penetrationTolerance);
    // the pile rests: three layers, nothing moving
    const top = Math.max(...sim.state().bodies.map((b) => b.position[2]));
    expect(top).toBeGreaterThan(0.2);
    for (const b of sim.state().bodies) expect(Math.hypot(...b.velocity)).toBeLessThan(1e-3);
  });
});

describe("a chain on the floor at the defaults", () => {
  it("ten jointed capsules dropped flat: penetration ≤ 2e-3 r, joints closed to jointTolerance", () => {
    const r = 0.02;
    const half = 0.05;
    const links = 10;
    const bodies: Record<string, unknown>[] = [
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
    ];
    const joints: Record<string, unknown>[] = [];
    // capsules along x (axis local z turned onto x: a quarter turn about y), end to end,
    // dropped flat from 5 cm; jointed neighbours do not collide (collideJointed false)
    const q = [Math.SQRT1_2, 0, Math.SQRT1_2, 0];
    for (let i = 0; i < links; i++) {
      bodies.push({
        id: `l${i}`,
        mass: 0.1,
        position: [2 * half * i, 0, r + 0.05],
        orientation: q,
        shapes: [{ type: "capsule", radius: r, halfLength: half }],
      });
      if (i > 0)
        joints.push({
          id: `j${i}`,
          type: "spherical",
          a: { body: `l${i - 1}`, point: [0, 0, half] },
          b: { body: `l${i}`, point: [0, 0, -half] },
        });
    }
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies,
      joints,
      contact: { method: "nsc", friction: 0.4 },
      solver: { integrator: "moreau-jean", dt: 1 / 240 },
    });
    const jointTolerance = sim.solver.jointTolerance;
    const penetrationTolerance = 2e-3 * r;
    expect(sim.solver.projectionTolerance).toBeCloseTo(penetrationTolerance, 18);
    let worstPen = 0;
    let worstGap = 0;
    let landedContacts = 0;
    for (let k = 0; k < 480; k++) {
      sim.step(1);
      const st = sim.state();
      const pos = new Map(st.bodies.map((b) => [b.id, b]));
      // each capsule's deepest point: its axis end nearest the floor, minus r
      for (let i = 0; i < links; i++) {
        const b = pos.get(`l${i}`) as StateOut["bodies"][number];
        const axis = rotate(b.orientation as [number, number, number, number], [0, 0, half]);
        worstPen = Math.max(worstPen, r + Math.abs(axis[2]) - b.position[2]);
      }
      for (let i = 1; i < links; i++) {
        const a = pos.get(`l${i - 1}`) as StateOut["bodies"][number];
        const b = pos.get(`l${i}`) as StateOut["bodies"][number];
        const pa = rotate(a.orientation as [number, number, number, number], [0, 0, half]);
        const pb = rotate(b.orientation as [number, number, number, number], [0, 0, -half]);
        const d: V3 = [0, 1, 2].map((c) => a.position[c] + pa[c] - b.position[c] - pb[c]) as V3;
        worstGap = Math.max(worstGap, Math.hypot(...d));
      }
      landedContacts = st.contacts.length;
      expect(st.solver.projectionConverged).toBe(true);
    }
    expect(landedContacts).toBeGreaterThanOrEqual(links);
    expect(worstPen).toBeLessThanOrEqual(penetrationTolerance);
    // ‖C‖∞ ≤ jointTolerance per coordinate, so the anchors are within √3 of it (and round-off)
    expect(worstGap).toBeLessThanOrEqual(Math.sqrt(3) * jointTolerance + 1e-15);
  });
});

describe("a budget that runs out says so", () => {
  it("one sweep each: contactConverged and projectionConverged false, with the residual and the penetration", () => {
    const sim = pile({ maxIterations: 1, projectionIterations: 1 });
    const tolerance = 1e-3 * g * (1 / 240);
    let contactUnmet = 0;
    let projectionUnmet = 0;
    for (let k = 0; k < 240; k++) {
      sim.step(1);
      const st = sim.state();
      const pen = pilePenetration(st);
      expect(Math.abs(st.solver.penetration - pen)).toBeLessThan(1e-9);
      expect(st.solver.projectionConverged).toBe(pen <= 2e-3 * R + 1e-12);
      expect(st.solver.contactConverged).toBe(st.solver.contactResidual <= tolerance);
      if (!st.solver.contactConverged) {
        contactUnmet++;
        expect(st.solver.contactIterations).toBe(1);
      }
      if (!st.solver.projectionConverged) projectionUnmet++;
    }
    expect(contactUnmet).toBeGreaterThan(10);
    expect(projectionUnmet).toBeGreaterThan(0);
  });
});
