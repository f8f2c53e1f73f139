/**
 * What the articulated integrator (solver.integrator "articulated") accepts and refuses,
 * and how it lives in a simulation (schemas/articulation.ts, src/engine/simulation):
 * - refused at load, each with the path of the part and a message naming it and the
 *   integrator: contact, fem bodies, mimics, distance joints, joints
 *   on particles, a joint that closes a loop (through ground or fixed bodies too), the
 *   solver damping (rayleighMass, rayleighStiffness, velocityDamping); a chain hung from a
 *   fixed body is a tree and moves as the same chain hung from the ground;
 * - PATCH: a chain running under generalized-α switched to it continues with its joints
 *   exact and its energy kept; a switch refused (a loop, contact) changes nothing, the next
 *   steps bit-identical to an untouched twin's; stepTolerance is its setting, the other
 *   integrators' own settings are refused with it;
 * - a snapshot taken while the sub-step controller is active continues bit-identically;
 * - a run that blows up ends with SolverError or DivergenceError from step(), the state the
 *   last good one.
 */
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import type { ModelInput } from "../../../schemas/model";
import {
  DivergenceError,
  loadModel,
  loadSnapshot,
  ModelError,
  ParameterError,
  type Simulation,
  SolverError,
} from "../../../src/engine/index";
import { HINGED_ROD_INERTIA, hingedRods } from "../../support/models";
import { add, norm, report, rotate, sub, type Vec3 } from "./long-run/helpers";

type ModelTimeFunction = number | { type: "table"; points: [number, number][] };
type Issue = { path: (string | number)[]; message: string };

function loadIssues(model: unknown): Issue[] {
  try {
    loadModel(model);
  } catch (err) {
    expect(err).toBeInstanceOf(ModelError);
    return (err as ModelError).issues;
  }
  throw new Error("the model was accepted");
}

function patchIssues(sim: Simulation, patch: Parameters<Simulation["update"]>[0]): Issue[] {
  try {
    sim.update(patch);
  } catch (err) {
    expect(err).toBeInstanceOf(ParameterError);
    return (err as ParameterError).issues;
  }
  throw new Error("the patch was accepted");
}

/** The issue at `path` (exactly one), its message naming each of `names` and "articulated". */
function expectIssue(issues: Issue[], path: (string | number)[], ...names: string[]) {
  const at = issues.filter((i) => JSON.stringify(i.path) === JSON.stringify(path));
  expect(at, JSON.stringify(issues)).toHaveLength(1);
  for (const name of [...names, "articulated"]) expect(at[0].message).toContain(name);
}

const ROD_INERTIA = HINGED_ROD_INERTIA;
/** Two rods r1, r2 on revolute joints p1, p2 about y (test/support/models.ts). */
const doublePendulum = hingedRods;

type Model = ReturnType<typeof doublePendulum>;
/** The double pendulum under the articulated integrator, changed by `edit`. */
function variant(edit: (m: Record<string, unknown> & Model) => void): unknown {
  const m = structuredClone(doublePendulum({ integrator: "articulated", dt: 0.01 }));
  edit(m as Record<string, unknown> & Model);
  return m;
}

/**
 * A four-bar linkage in the x–z plane, revolute joints about y: ground pivots at (0, 0, 0)
 * and (2, 0, 0), crank c (0 → (0, 0, 1)), coupler k ((0, 0, 1) → (2, 0, 1)), rocker r
 * ((2, 0, 1) → (2, 0, 0)); j3 (rocker to ground) closes the loop.
 */
function fourBar(solver: Record<string, unknown>) {
  const rod = (id: string, position: Vec3, inertia: Vec3) => ({ id, mass: 1, position, inertia });
  const pin = (id: string, a: object, b: object) => ({
    id,
    type: "revolute" as const,
    a,
    b,
    axis: [0, 1, 0] as Vec3,
  });
  return {
    bodies: [
      rod("c", [0, 0, 0.5], [1 / 12, 1 / 12, 1e-3]),
      rod("k", [1, 0, 1], [1e-3, 4 / 12, 4 / 12]),
      rod("r", [2, 0, 0.5], [1 / 12, 1 / 12, 1e-3]),
    ],
    joints: [
      pin("j0", { body: "ground" }, { body: "c", point: [0, 0, -0.5] }),
      pin("j1", { body: "c", point: [0, 0, 0.5] }, { body: "k", point: [-1, 0, 0] }),
      pin("j2", { body: "k", point: [1, 0, 0] }, { body: "r", point: [0, 0, 0.5] }),
      pin("j3", { body: "r", point: [0, 0, -0.5] }, { body: "ground", point: [2, 0, 0] }),
    ],
    solver,
  } satisfies ModelInput;
}

/** The S2 chain of bench/scenes.ts (10 links, 0.1 m, 0.1 kg) with these solver settings. */
function chain(solver: ModelInput["solver"]): ModelInput {
  const m = chainModel({ links: 10 });
  m.solver = solver;
  return m;
}

/** The largest distance between a joint's two points over the model's joints (m). */
function largestJointGap(model: ModelInput, sim: Simulation): number {
  const bodies = sim.state().bodies;
  const index = new Map(model.bodies.map((b, i) => [b.id, i]));
  const at = (end: { body?: string; point?: number[] }): Vec3 => {
    const i = index.get(end.body ?? "ground");
    const p = (end.point ?? [0, 0, 0]) as Vec3;
    return i === undefined ? p : add(bodies[i].position as Vec3, rotate(bodies[i].orientation, p));
  };
  let gap = 0;
  for (const j of model.joints ?? []) gap = Math.max(gap, norm(sub(at(j.a), at(j.b))));
  return gap;
}

/** Σ ½ m v² + ½ ωᵀ I ω + m g z of the chain's links (J). */
function chainEnergy(model: ModelInput, sim: Simulation): number {
  return sim.state().bodies.reduce((sum, b, i) => {
    const { mass, inertia } = model.bodies[i] as { mass: number; inertia: Vec3 };
    const w = rotate(
      [b.orientation[0], -b.orientation[1], -b.orientation[2], -b.orientation[3]],
      b.angularVelocity as Vec3,
    );
    const v = b.velocity;
    return (
      sum +
      0.5 * mass * (v[0] ** 2 + v[1] ** 2 + v[2] ** 2) +
      0.5 * (inertia[0] * w[0] ** 2 + inertia[1] * w[1] ** 2 + inertia[2] * w[2] ** 2) +
      mass * 9.81 * b.position[2]
    );
  }, 0);
}

describe("articulated: refused at load, naming the part", () => {
  it("the double pendulum itself is accepted", () => {
    expect(() => loadModel(variant(() => {}))).not.toThrow();
  });

  it("nonsmooth contact (compliant contact is a force it steps)", () => {
    const nsc = loadIssues(variant((m) => Object.assign(m, { contact: { method: "nsc" } })));
    expectIssue(nsc, ["contact", "method"], "nonsmooth contact", '"smc"');
    expect(() =>
      loadModel(variant((m) => Object.assign(m, { contact: { method: "smc" } }))),
    ).not.toThrow();
  });

  it("fem bodies", () => {
    const fem = [
      {
        id: "beam",
        box: { size: [0.2, 0.1, 0.1], resolution: [2, 1, 1], center: [0, 0, -2] },
        density: 1000,
        youngModulus: 1e6,
      },
    ];
    expectIssue(loadIssues(variant((m) => Object.assign(m, { fem }))), ["fem"], "fem");
  });

  it("motors are accepted (the joint's coordinate prescribed, articulated.test.ts)", () => {
    const motors = [{ id: "drive", joint: "p1", angle: { rate: 1 } }];
    expect(() => loadModel(variant((m) => Object.assign(m, { motors })))).not.toThrow();
  });

  it("mimics (joint limits are accepted: the compliant law, articulated.test.ts)", () => {
    const limited = variant((m) => Object.assign(m.joints[0], { limits: { lower: -1, upper: 1 } }));
    expect(() => loadModel(limited)).not.toThrow();
    const mimic = variant((m) => Object.assign(m.joints[1], { mimic: { joint: "p1" } }));
    expectIssue(loadIssues(mimic), ["joints", 1, "mimic"], '"p2"', "mimic");
  });

  it("distance joints (even where they close no loop)", () => {
    const issues = loadIssues(
      variant((m) => {
        m.bodies.push({ id: "free", mass: 1, position: [0, 0, -2], inertia: [0.1, 0.1, 0.1] });
        (m.joints as object[]).push({
          id: "tether",
          type: "distance",
          a: { body: "ground" },
          b: { body: "free" },
        });
      }),
    );
    expectIssue(issues, ["joints", 2, "type"], '"tether"', "distance");
    expect(issues).toHaveLength(1);
  });

  it("joints on particles", () => {
    const issues = loadIssues(
      variant((m) => {
        (m.bodies as object[]).push({
          id: "bead",
          kind: "particle",
          mass: 0.1,
          position: [0, 0, -1],
        });
        (m.joints as object[]).push({
          id: "string",
          type: "spherical",
          a: { body: "ground" },
          b: { body: "bead" },
        });
      }),
    );
    expectIssue(issues, ["joints", 2, "b", "body"], '"string"', '"bead"', "particle");
  });

  it("a particle or a rigid body in no joint is accepted (it moves freely)", () => {
    const sim = loadModel(
      variant((m) => {
        (m.bodies as object[]).push(
          { id: "bead", kind: "particle", mass: 0.1, position: [0, 0, -1], velocity: [1, 0, 2] },
          { id: "free", mass: 1, position: [3, 0, 0], inertia: [0.1, 0.2, 0.3] },
        );
      }),
    );
    sim.step(100);
    // a free fall from rest and a projectile: exact for the Runge–Kutta steps, to rounding
    const [bead, free] = sim.state().bodies.slice(2);
    const t = 1;
    expect(norm(sub(bead.position as Vec3, [t, 0, -1 + 2 * t - 0.5 * 9.81 * t * t]))).toBeLessThan(
      1e-13,
    );
    expect(norm(sub(free.position as Vec3, [3, 0, -0.5 * 9.81 * t * t]))).toBeLessThan(1e-13);
  });

  it("solver damping: rayleighMass, rayleighStiffness, velocityDamping", () => {
    for (const key of ["rayleighMass", "rayleighStiffness", "velocityDamping"]) {
      const issues = loadIssues(variant((m) => Object.assign(m.solver, { [key]: 0.1 })));
      expectIssue(issues, ["solver", key], key);
      // zero is no damping: accepted
      expect(() => loadModel(variant((m) => Object.assign(m.solver, { [key]: 0 })))).not.toThrow();
    }
  });

  it("a four-bar linkage (closed loop), at the joint that closes it", () => {
    const issues = loadIssues(fourBar({ integrator: "articulated", dt: 0.01 }));
    expectIssue(issues, ["joints", 3], '"j3"', "loop");
    expect(issues).toHaveLength(1);
    // the same linkage is accepted by generalized-α
    expect(() => loadModel(fourBar({ integrator: "generalized-alpha", dt: 0.01 }))).not.toThrow();
  });

  it("a loop through two fixed bodies (ground and fixed bodies are one node)", () => {
    const issues = loadIssues({
      bodies: [
        { id: "left", fixed: true, position: [0, 0, 0] },
        { id: "right", fixed: true, position: [2, 0, 0] },
        { id: "beam", mass: 1, position: [1, 0, 0], inertia: [1e-3, 1 / 3, 1 / 3] },
      ],
      joints: [
        { id: "l", type: "spherical", a: { body: "left" }, b: { body: "beam", point: [-1, 0, 0] } },
        { id: "r", type: "spherical", a: { body: "beam", point: [1, 0, 0] }, b: { body: "right" } },
      ],
      solver: { integrator: "articulated", dt: 0.01 },
    });
    expectIssue(issues, ["joints", 1], '"r"', "loop");
  });

  it("several parts at once: each is named", () => {
    const issues = loadIssues(
      variant((m) => {
        Object.assign(m, {
          contact: { method: "nsc" },
        });
        Object.assign(m.joints[1], { mimic: { joint: "p1" } });
        Object.assign(m.solver, { rayleighMass: 0.5 });
      }),
    );
    expectIssue(issues, ["contact", "method"], "contact");
    expectIssue(issues, ["joints", 1, "mimic"], '"p2"');
    expectIssue(issues, ["solver", "rayleighMass"], "rayleighMass");
  });
});

describe("articulated: a chain hung from a fixed body", () => {
  it("is a tree: accepted, and moves as the same chain hung from the ground", () => {
    // a fixed base turned 0.5 rad about z at (0.3, −0.2, 1): the pendulum's pivot is its
    // point p (base frame), in the world x_b + R p; the same double pendulum pinned to the
    // ground there, both shifted by the pivot
    const base: Vec3 = [0.3, -0.2, 1];
    const q = [Math.cos(0.25), 0, 0, Math.sin(0.25)];
    const p: Vec3 = [0.1, 0.2, -0.05];
    const pivot = add(base, rotate(q, p));
    const hung = (onBase: boolean) => {
      const m = structuredClone(doublePendulum({ integrator: "articulated", dt: 0.01 }));
      for (const b of m.bodies) b.position = add(b.position as Vec3, pivot);
      if (onBase) {
        (m.bodies as object[]).unshift({ id: "base", fixed: true, position: base, orientation: q });
        m.joints[0].a = { body: "base", point: p } as never;
      } else m.joints[0].a = { body: "ground", point: pivot } as never;
      m.joints[0].axis = [1, 1, 0];
      m.joints[1].axis = [1, 1, 0];
      return m;
    };
    const a = loadModel(hung(true));
    const b = loadModel(hung(false));
    a.step(500);
    b.step(500);
    const sa = a.state();
    const sb = b.state();
    report("articulated fixed base", {
      position: Math.max(
        ...[0, 1].map((i) =>
          norm(sub(sa.bodies[i + 1].position as Vec3, sb.bodies[i].position as Vec3)),
        ),
      ),
      velocity: Math.max(
        ...[0, 1].map((i) =>
          norm(sub(sa.bodies[i + 1].velocity as Vec3, sb.bodies[i].velocity as Vec3)),
        ),
      ),
      spin: Math.max(...sb.bodies.map((x) => norm(x.angularVelocity as Vec3))),
    });
    // the base stays put; the two pendulums agree to rounding: the pivot computed through
    // the base's pose differs from the ground's by ~1e-16 m, which the chaotic motion (up
    // to 7 rad/s) amplifies over 5 s to the measured 1.3e-13 m and 7e-13 m/s; a base
    // frame misapplied (its rotation to the joint point or to the axis) would move the
    // pendulum by centimetres
    expect(sa.bodies[0].position).toEqual(base);
    for (let i = 0; i < 2; i++) {
      expect(
        norm(sub(sa.bodies[i + 1].position as Vec3, sb.bodies[i].position as Vec3)),
      ).toBeLessThan(1e-11);
      expect(
        norm(sub(sa.bodies[i + 1].velocity as Vec3, sb.bodies[i].velocity as Vec3)),
      ).toBeLessThan(1e-10);
    }
    // and it has swung: the motion is not trivial
    expect(norm(sub(sb.bodies[1].position as Vec3, add([1.5, 0, 0], pivot)))).toBeGreaterThan(0.1);
  });
});

describe("articulated: PATCH", () => {
  it("switched to from generalized-α, its steps report no Newton iterations or linear solves of before, as a restored copy's", () => {
    const sim = loadModel(hingedRods({ integrator: "generalized-alpha", dt: 0.002 }));
    sim.step(20);
    expect(sim.state().solver.newtonIterations).toBeGreaterThan(0);
    sim.update({ solver: { integrator: "articulated" } });
    sim.step(5);
    const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
    sim.step(5);
    copy.step(5);
    expect(sim.state().solver).toMatchObject({ newtonIterations: 0, linearIterations: 0 });
    expect(copy.state()).toEqual(sim.state());
  });

  it("a hinge on a swinging body, switched to it mid-swing, keeps its axis (given at the model pose)", () => {
    // a rod A on a spherical joint at the origin (along x, tossed so it swings out of its
    // plane), and a paddle B hinged to A's end about A's long axis (world x at the model
    // pose). After 0.7 s under generalized-α, the switch: B must keep turning about A's
    // long axis, ω_B − ω_A parallel to R_A x̂. A tree that took the axis from the state at
    // the switch (R_Aᵀ x̂ with A turned) would tilt it
    const model = {
      bodies: [
        {
          id: "A",
          mass: 1,
          position: [0.5, 0, 0],
          inertia: ROD_INERTIA,
          angularVelocity: [0, 1, 2],
          velocity: [0, 1, -0.5],
        },
        { id: "B", mass: 0.5, position: [1, 0, -0.2], inertia: [0.01, 0.01, 0.002] },
      ],
      joints: [
        {
          id: "ball",
          type: "spherical",
          a: { body: "ground" },
          b: { body: "A", point: [-0.5, 0, 0] },
        },
        {
          id: "hinge",
          type: "revolute",
          a: { body: "A", point: [0.5, 0, 0] },
          b: { body: "B", point: [0, 0, 0.2] },
          axis: [1, 0, 0],
        },
      ],
      solver: { integrator: "generalized-alpha", dt: 1 / 240 },
    } satisfies ModelInput;
    const sim = loadModel(model);
    sim.step(168);
    sim.update({ solver: { integrator: "articulated" } });
    let tilt = 0;
    for (let k = 0; k < 480; k++) {
      sim.step(1);
      const [a, b] = sim.state().bodies;
      const axis = rotate(a.orientation as [number, number, number, number], [1, 0, 0]);
      const rel = sub(b.angularVelocity as Vec3, a.angularVelocity as Vec3);
      const c = [
        rel[1] * axis[2] - rel[2] * axis[1],
        rel[2] * axis[0] - rel[0] * axis[2],
        rel[0] * axis[1] - rel[1] * axis[0],
      ];
      tilt = Math.max(tilt, Math.hypot(c[0], c[1], c[2]) / (1 + norm(rel)));
    }
    report("articulated PATCH axis", { tilt });
    // exact to rounding (generalized-α leaves the joints at ~1e-12 at the switch)
    expect(tilt).toBeLessThan(1e-9);
  });

  it("a chain running under generalized-α switched to articulated continues: joints exact, energy kept", () => {
    const model = chain({ integrator: "generalized-alpha", dt: 1 / 240 });
    const sim = loadModel(model);
    sim.step(240);
    const before = chainEnergy(model, sim);
    sim.update({ solver: { integrator: "articulated" } });
    expect(sim.solver.integrator).toBe("articulated");
    let gap = 0;
    let energy = 0;
    for (let k = 0; k < 960; k++) {
      sim.step(1);
      gap = Math.max(gap, largestJointGap(model, sim));
      energy = Math.max(energy, Math.abs(chainEnergy(model, sim) - before));
    }
    report("articulated PATCH from generalized-α", { gap, energy: energy / 9.81 });
    // the links' positions in joint coordinates: anchors agree to rounding from the
    // first articulated step on (generalized-α leaves ~1e-12 m, projected)
    expect(gap).toBeLessThan(1e-13);
    // the energy at the switch kept over the 4 s after it (m = 1 kg, L = 1 m): measured
    // 1e-4 m g L at the default tolerance (the physics file: 5e-4 over 2000 steps from the
    // start); a switch that lost the velocities would change it by ~m g L
    expect(energy / 9.81).toBeLessThan(1e-3);
  });

  it("a switch refused (a loop, contact) changes nothing: the next steps equal an untouched twin's", () => {
    const cases: [ModelInput, (string | number)[]][] = [
      [fourBar({ integrator: "generalized-alpha", dt: 0.01 }), ["joints", 3]],
      [ballOnFloor(), ["contact", "method"]],
    ];
    for (const [model, path] of cases) {
      const sim = loadModel(model);
      const twin = loadModel(model);
      sim.step(10);
      twin.step(10);
      const issues = patchIssues(sim, {
        solver: { integrator: "articulated", stepTolerance: 1e-7 },
      });
      expectIssue(issues, path);
      expect(sim.solver.integrator).toBe(model.solver?.integrator);
      sim.step(50);
      twin.step(50);
      expect(sim.stateHash()).toBe(twin.stateHash());
    }
  });

  it("stepTolerance is read by articulated; the other integrators' settings are refused", () => {
    for (const stepTolerance of [1e-8, null])
      expect(() =>
        loadModel(variant((m) => Object.assign(m.solver, { stepTolerance }))),
      ).not.toThrow();
    for (const [key, value] of [
      ["beta", 0.25],
      ["gamma", 0.5],
      ["rhoInfinity", 0.8],
      ["theta", 0.5],
    ] as const) {
      const issues = loadIssues(variant((m) => Object.assign(m.solver, { [key]: value })));
      expect(issues.map((i) => i.path)).toContainEqual(["solver", key]);
      // on a PATCH of a running articulated simulation, likewise
      const sim = loadModel(variant(() => {}));
      const patched = patchIssues(sim, { solver: { [key]: value } });
      expect(patched.map((i) => i.path)).toContainEqual(["solver", key]);
    }
    // a PATCH of the tolerance alone is taken
    const sim = loadModel(variant(() => {}));
    sim.update({ solver: { stepTolerance: 1e-9 } });
    sim.step(1);
    expect(sim.lastStepStats.stepError).toBeLessThanOrEqual(1e-9);
  });

  it("a PATCH to articulated adding its damping is refused, naming it", () => {
    const sim = loadModel(doublePendulum({ integrator: "newmark", dt: 0.01 }));
    const issues = patchIssues(sim, { solver: { integrator: "articulated", rayleighMass: 0.1 } });
    expectIssue(issues, ["solver", "rayleighMass"], "rayleighMass");
  });

  it("the Newton iterations' and linear solves' settings: refused with it, dropped by a switch to it", () => {
    // articulated steps explicitly: no Newton iterations, no linear solves
    for (const [key, value] of [
      ["newtonTolerance", 1e-8],
      ["linearTolerance", 1e-6],
      ["linearIterations", 50],
    ] as const) {
      let issues: Issue[] = [];
      try {
        loadModel(doublePendulum({ integrator: "articulated", dt: 0.01, [key]: value }));
      } catch (err) {
        if (!(err instanceof ModelError)) throw err;
        issues = err.issues;
      }
      const at = issues.filter((i) => JSON.stringify(i.path) === JSON.stringify(["solver", key]));
      expect(at, key).toHaveLength(1);
      expect(at[0].message).toContain('"articulated" has none');
    }
    const cg = { linearSolver: "cg" as const, linearPreconditioner: "jacobi" as const };
    expect(() => loadModel(doublePendulum({ integrator: "articulated", dt: 0.01, ...cg }))).toThrow(
      /linearPreconditioner/,
    );
    // a generalized-α run with them switched to articulated: they are dropped, the switch taken
    const sim = loadModel(
      doublePendulum({ integrator: "generalized-alpha", dt: 0.01, newtonTolerance: 1e-8, ...cg }),
    );
    sim.update({ solver: { integrator: "articulated" } });
    expect(sim.solver.integrator).toBe("articulated");
    expect(sim.solver).not.toHaveProperty("newtonTolerance");
    expect(sim.solver).not.toHaveProperty("linearPreconditioner");
    // naming one in the switch is refused
    const again = loadModel(doublePendulum({ integrator: "generalized-alpha", dt: 0.01 }));
    const issues = patchIssues(again, {
      solver: { integrator: "articulated", newtonTolerance: 1e-8 },
    });
    expect(issues.map((i) => i.path)).toEqual([["solver", "newtonTolerance"]]);
  });
});

/** A sphere (1 kg, r = 0.1 m) resting on a floor plane, nonsmooth contact, Moreau–Jean. */
function ballOnFloor(): ModelInput {
  return {
    bodies: [
      {
        id: "ball",
        mass: 1,
        inertia: [0.004, 0.004, 0.004],
        position: [0, 0, 0.1],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1] }] },
    ],
    contact: { method: "nsc" },
    solver: { integrator: "moreau-jean", dt: 0.01 },
  };
}

describe("articulated: snapshots", () => {
  const STATE = ["position", "orientation", "velocity", "angularVelocity"] as const;
  type Snapshot = ReturnType<Simulation["snapshot"]>;
  const copy = (snap: Snapshot): Snapshot => JSON.parse(JSON.stringify(snap));

  it("a snapshot taken while the sub-step controller works continues bit-identically", () => {
    // the S2 chain at h = 1/240 s: some of its steps are taken in several sub-steps
    // (measured: step 107, then from step 327 on, none between 151 and 300).
    // Snapshots at step 150 (the controller's next sub-step then longer than h) and at
    // the first step after it whose next sub-step is shorter than h (the memory decides
    // the next step there), each restored into fresh simulations and continued to 450
    const h = 1 / 240;
    const model = chain({ integrator: "articulated", dt: h });
    const whole = loadModel(model);
    const substeps: number[] = [];
    const snaps: Snapshot[] = [];
    for (let k = 1; k <= 450; k++) {
      whole.step(1);
      substeps.push(whole.lastStepStats.substeps);
      const snap = k === 150 || (snaps.length === 1 && k > 150) ? whole.snapshot() : undefined;
      if (snap && (k === 150 || (snap.memory.integrator.substepSize ?? h) < h))
        snaps.push(copy(snap));
    }
    expect(snaps).toHaveLength(2);
    const [early, late] = snaps;
    expect(early.step).toBe(150);
    expect(early.memory.integrator.substepSize).toBeGreaterThan(0);
    expect(late.memory.integrator.substepSize).toBeLessThan(h);
    // the controller is at work after each snapshot
    expect(Math.max(...substeps.slice(150))).toBeGreaterThan(1);
    expect(Math.max(...substeps.slice(late.step))).toBeGreaterThan(1);
    const final = whole.snapshot().state;
    for (const snap of snaps) {
      // into fresh simulations: by loadSnapshot, and by restoreSnapshot on a loaded model
      const restored = loadSnapshot(copy(snap));
      const fresh = loadModel(model);
      fresh.restoreSnapshot(copy(snap));
      for (const sim of [restored, fresh]) {
        expect(sim.state().step).toBe(snap.step);
        sim.step(450 - snap.step);
        const state = sim.snapshot().state;
        for (const k of STATE) expect(state[k]).toBe(final[k]);
        expect(sim.stateHash()).toBe(whole.stateHash());
      }
    }
    // the sub-step length is restored with the state: the restored simulation's own
    // snapshot carries it (a step's sub-steps are the equal parts of h no longer than it,
    // so a run that lost it may still reach the same parts after a rejected attempt:
    // the trajectory alone does not show it)
    for (const snap of snaps)
      expect(loadSnapshot(copy(snap)).snapshot().memory.integrator.substepSize).toBe(
        snap.memory.integrator.substepSize,
      );
  });

  it("a snapshot of a stiff servo, its sub-steps held by the stability bound, continues bit-identically", () => {
    // a rod held by a servo of kd/I = 8000 /s at h = 2 ms (articulated.test.ts, "a stiff
    // servo holding a rod"), creeping onto its rest angle after 1 s: its sub-steps are
    // bounded by 3/ρ, ρ the stiffness its stages showed while it moved, which the snapshot
    // carries. The creep's stages no longer show it (its error is below 1e-12 m), so a
    // run restored without it took the whole step at once, past the stability boundary:
    // 2991 sub-steps over the next 500 steps instead of 2500, rates 6e-7 rad/s apart
    const model = {
      gravity: [0, 0, -9.81],
      bodies: [{ id: "rod", mass: 0.1, inertia: [1e-3, 1e-3, 1e-3], position: [0.05, 0, 0] }],
      joints: [
        {
          id: "axle",
          type: "revolute",
          a: { point: [0, 0, 0] },
          b: { body: "rod", point: [-0.05, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      actuators: [{ id: "servo", type: "position", joint: "axle", kp: 100, kd: 10, target: 0.3 }],
      solver: { integrator: "articulated", dt: 0.002 },
    } as ModelInput;
    const whole = loadModel(model);
    whole.step(500);
    const snap = copy(whole.snapshot());
    // the stiff root −7990 /s, read from the stages (to within the mixture of the modes)
    const rho = snap.memory.integrator.stiffness ?? 0;
    expect(rho).toBeGreaterThan(4000);
    expect(rho).toBeLessThan(16000);
    whole.step(450);
    const final = whole.snapshot().state;
    for (const sim of [loadSnapshot(copy(snap)), loadModel(model)]) {
      if (sim.state().step === 0) sim.restoreSnapshot(copy(snap));
      expect(sim.snapshot().memory.integrator.stiffness).toBe(rho);
      sim.step(450);
      const state = sim.snapshot().state;
      for (const k of STATE) expect(state[k]).toBe(final[k]);
      expect(sim.stateHash()).toBe(whole.stateHash());
    }
  });
});

describe("articulated: inputs between steps", () => {
  it("a command takes effect at once: the accelerations carried from the last step are dropped", () => {
    // a wheel (I = 0.5 kg·m² about its axle) at rest, its torque actuator at 0; at step 20
    // the command becomes τ = 1.5 N·m: from then θ = ½ (τ/I) (t − t₀)², which the step
    // takes exactly (a quadratic). Carrying the last step's accelerations (zero) into the
    // first step after the command would put it ~h² τ/I behind
    const h = 0.01;
    const I = 0.5;
    const tau = 1.5;
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "wheel", mass: 2, inertia: [0.25, 0.25, I], position: [0, 0, 0] }],
      joints: [
        {
          id: "axle",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "wheel" },
          axis: [0, 0, 1],
        },
      ],
      actuators: [{ id: "drive", joint: "axle", type: "torque", effort: 0 }],
      solver: { integrator: "articulated", dt: h },
    } satisfies ModelInput);
    sim.step(20);
    sim.schedule([{ type: "actuator", id: "drive", value: tau }]);
    let worst = 0;
    for (let k = 1; k <= 50; k++) {
      sim.step(1);
      const t = k * h;
      const st = sim.state();
      worst = Math.max(worst, Math.abs(st.joints[0].coordinates[0] - 0.5 * (tau / I) * t * t));
    }
    // exact to rounding (a missed command would be 1.5e-4 rad off)
    expect(worst).toBeLessThan(1e-12);
  });
});

describe("articulated: a run that blows up", () => {
  // a free box (1 kg) on a spring to the ground, at rest at its rest length (no force),
  // pushed along x by `push`
  const springBox = (stiffness: number, push: ModelTimeFunction) =>
    ({
      gravity: [0, 0, 0],
      bodies: [{ id: "box", mass: 1, inertia: [0.1, 0.1, 0.1], position: [0, 0, -1] }],
      forces: [
        {
          id: "s",
          type: "spring",
          a: { body: "ground" },
          b: { body: "box", point: [0.1, 0, 0] },
          stiffness,
          restLength: Math.hypot(0.1, 1),
        },
        {
          id: "push",
          type: "pointForce",
          at: { body: "box" },
          force: [push, 0, 0],
        },
      ],
      solver: { integrator: "articulated", dt: 0.01 },
    }) satisfies ModelInput;

  /** Steps until step() throws; returns the error and the steps done before it. */
  function runToFailure(sim: Simulation, twin: Simulation) {
    for (let n = 0; n < 200; n++) {
      const hash = sim.stateHash();
      const time = sim.state().time;
      try {
        sim.step(1);
      } catch (err) {
        // the state is the last good one: that of the step before, bit for bit, as the
        // twin's after as many steps
        expect(sim.stateHash()).toBe(hash);
        expect(sim.state().time).toBe(time);
        expect(sim.state().step).toBe(n);
        twin.step(n);
        expect(sim.stateHash()).toBe(twin.stateHash());
        return { err, steps: n };
      }
    }
    throw new Error("no failure in 200 steps");
  }

  it("a spring of absurd stiffness: the sub-steps collapse, SolverError", () => {
    // k = 1e20 N/m: ω ≈ 1e10 rad/s, so the explicit sub-steps would need ~1e-10 s, below
    // h · 2⁻²⁴ = 6e-10 s, where the integrator gives up
    const model = springBox(1e20, {
      type: "table",
      points: [
        [0, 0],
        [0.05, 0],
        [0.06, 1],
      ],
    });
    const { err, steps } = runToFailure(loadModel(model), loadModel(model));
    expect(err).toBeInstanceOf(SolverError);
    expect((err as Error).message).toContain("sub-steps");
    // the push starts at t = 0.05 s: the first five steps are good
    expect(steps).toBeGreaterThanOrEqual(5);
  });

  it("a spring too stiff for an explicit step: the sub-steps run out, SolverError", () => {
    // k = 1e12 N/m on 1 kg: ω = 1e6 rad/s, so a 1/240 s step would need ~1e4–1e5
    // sub-steps; past 2000 attempts the step fails instead of holding the worker
    const model = springBox(1e12, {
      type: "table",
      points: [
        [0, 0],
        [0.05, 0],
        [0.06, 1],
      ],
    });
    const { err } = runToFailure(loadModel(model), loadModel(model));
    expect(err).toBeInstanceOf(SolverError);
    expect((err as Error).message).toMatch(/more than 2000 sub-steps.*too stiff/);
  });

  it("a runaway force: the velocity passes 1e8 m/s, DivergenceError", () => {
    // a constant push of 1.5e9 N on 1 kg (no spring): v = 1.5e7 n m/s after n steps, past
    // the blow-up bound of 1e8 m/s at the seventh (the motion is a quadratic, which the
    // Runge–Kutta steps take exactly, without sub-steps)
    const model = springBox(0, 1.5e9);
    const { err, steps } = runToFailure(loadModel(model), loadModel(model));
    expect(err).toBeInstanceOf(DivergenceError);
    expect((err as Error).message).toContain("blew up");
    expect(steps).toBe(6);
  });
});
