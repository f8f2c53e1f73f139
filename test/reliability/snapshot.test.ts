/**
 * Engine snapshots: an uninterrupted run and snapshot → JSON text → loadSnapshot → continue
 * give bit-identical states (sha256 of the concatenated Float64Array bytes of positions,
 * quaternions, velocities and angular velocities, hashed here from the body arrays), for a
 * Newmark model with Newton iterations, a jointed model with a motor, an imported robot arm
 * with servos (a saddle point factored by sparse LU), a box stack (the broad phase's axis),
 * compliant contact
 * (whose solve-matrix pattern grows with the contacts), nonsmooth contact (warm-start
 * impulses by contact key), and after PATCHes. Also: the format is JSON-safe, versioned, and a
 * corrupted or mismatched snapshot is refused with a path.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../schemas/model";
import { loadModel, loadSnapshot, type Simulation, SnapshotError } from "../../src/engine/index";
import { importUrdf } from "../../src/formats/urdf/index";
import { armUrdf } from "../formats/urdf/arm";
import { hangingChain, rodPendulum, slidingBoxNsc, springPairNewmark } from "../support/models";

function hashOf(sim: Simulation): string {
  const h = createHash("sha256");
  const s = sim.system;
  for (const a of [s.pos, s.quat, s.vel, s.omega])
    h.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return h.digest("hex");
}

/** Hashes after each of `steps` single steps. */
function trace(sim: Simulation, steps: number): string[] {
  const out: string[] = [];
  for (let k = 0; k < steps; k++) {
    sim.step(1);
    out.push(hashOf(sim));
  }
  return out;
}

/** Snapshots sim through JSON text and returns the restored copy. */
function roundTrip(sim: Simulation): Simulation {
  const text = JSON.stringify(sim.snapshot());
  return loadSnapshot(JSON.parse(text));
}

/**
 * The copy restored from original (roundTrip) has exactly the State `before` read from the
 * original, and after `steps` more steps of each, the original's State again.
 */
function expectRestoredContinues(
  original: Simulation,
  before: ReturnType<Simulation["state"]>,
  steps: number,
): void {
  const restored = roundTrip(original);
  expect(restored.state()).toEqual(before);
  original.step(steps);
  restored.step(steps);
  expect(restored.state()).toEqual(original.state());
}

/** A three-link chain on revolute joints, the first driven by a motor. */
const jointModel = {
  name: "chain",
  ...hangingChain({
    joints: [
      { type: "revolute", axis: [0, 1, 0] },
      { type: "revolute", axis: [0, 1, 0] },
      { type: "spherical" },
    ],
    mass: 1,
    inertia: [0.01, 0.01, 0.002],
  }),
  motors: [{ id: "m0", joint: "j0", angle: { type: "sine", amplitude: 0.8, frequency: 1.5 } }],
  forces: [{ id: "kick", type: "pointForce", at: { body: "l2" }, force: [0.3, 0.2, 0] }],
  solver: { integrator: "moreau-jean", dt: 0.002 },
};

/** Two spheres falling on a plane and onto each other, compliant contact, Newmark. */
const smcModel = {
  name: "smc",
  bodies: [
    { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
    {
      id: "s1",
      kind: "rigid",
      mass: 1,
      position: [0, 0, 0.11],
      velocity: [0.2, 0, 0],
      shapes: [{ type: "sphere", radius: 0.1 }],
    },
    {
      id: "s2",
      kind: "rigid",
      mass: 0.5,
      position: [0.05, 0.01, 0.35],
      shapes: [{ type: "sphere", radius: 0.1 }],
    },
  ],
  contact: {
    method: "smc",
    behavior: { type: "linear", stiffness: 2e4, damping: 5, stepDamping: 0 },
  },
  solver: { integrator: "newmark", dt: 0.001, newtonIterations: 4, newtonTolerance: 1e-12 },
};

/** Three spheres falling into a pile on a plane: several bounded shapes in the broad phase. */
const nscPile = {
  name: "nsc-pile",
  bodies: [
    { id: "floor", kind: "rigid", fixed: true, shapes: [{ type: "plane" }] },
    ...[0, 1, 2].map((i) => ({
      id: `s${i}`,
      kind: "rigid",
      mass: 1 + i,
      position: [0.04 * i, -0.02 * i, 0.12 + 0.22 * i],
      shapes: [{ type: "sphere", radius: 0.1 }],
    })),
  ],
  contact: { method: "nsc", friction: 0.2, restitution: 0.3 },
  solver: { dt: 0.004, maxIterations: 50 },
};

function continuation(model: unknown, before: number, after: number) {
  const a = loadModel(model);
  const b = loadModel(model);
  const ref = trace(a, before + after);
  expect(trace(b, before)).toEqual(ref.slice(0, before));
  const c = roundTrip(b);
  expect(hashOf(c)).toBe(ref[before - 1]);
  expect(c.stepCount).toBe(before);
  expect(c.time).toBe(b.time);
  expect(trace(c, after)).toEqual(ref.slice(before));
  return { a, b, c, ref };
}

describe("snapshot → restore → continue is bit-identical", () => {
  it("generalized-α with joints and a motor (A_n, a_n and the start multipliers kept)", () => {
    const crank = JSON.parse(
      readFileSync(new URL("../../examples/slider-crank.json", import.meta.url), "utf8"),
    );
    crank.solver = { ...crank.solver, rhoInfinity: 0.7 };
    const { a, c } = continuation(crank, 137, 150);
    expect(c.state()).toEqual(a.state());
    const snap = a.snapshot();
    expect(snap.memory.integrator.pseudoAcceleration).toBeTypeOf("string");
  });

  it("the imported 6-axis arm with position servos (generalized-α on the saddle point's sparse LU, whose refactorizations keep pivots only where a fresh factorization would choose them)", async () => {
    const { model } = await importUrdf({
      urdf: armUrdf(),
      options: { actuators: { type: "position", kp: 500, kd: 20 } },
    });
    expect(model.solver?.integrator).toBe("generalized-alpha");
    // before the pivots' rule, the continuation departed at its first step (by an ulp)
    const { a, c } = continuation(model, 120, 120);
    expect(c.state()).toEqual(a.state());
  });

  it("a falling box stack (nonsmooth contact): the broad phase's sweep axis kept, so the contacts come in the same order", () => {
    const stack = JSON.parse(
      readFileSync(new URL("../../examples/box-stack.json", import.meta.url), "utf8"),
    );
    stack.bodies[1].shapes[0].halfExtents[2] = Math.PI / 2; // a tall box: the stack falls
    const { a, c } = continuation(stack, 60, 120);
    expect(c.state()).toEqual(a.state());
    // before the axis was saved, the restored copy chose x at its first detection where the
    // run it was taken from swept z, and departed at its first step
    expect(a.snapshot().memory.broadPhase?.axis).toBe(2);
  });

  it("a box stack snapshotted before its first step (frictionless): the copy's broad phase chooses its axis at its first detection, as the new one's does", () => {
    const stack = JSON.parse(
      readFileSync(new URL("../../examples/box-stack.json", import.meta.url), "utf8"),
    );
    stack.contact.friction = 0;
    const ref = trace(loadModel(stack), 40);
    const fresh = loadModel(stack);
    expect(fresh.snapshot().memory.broadPhase).toBeUndefined(); // nothing chosen yet
    // when such a snapshot held the new broad phase's x axis, the copy kept it at its first
    // detection where the new one chose another, and departed at its second step
    expect(trace(roundTrip(fresh), 40)).toEqual(ref);
  });

  it("Newmark with Newton iterations and Rayleigh damping (a_t kept)", () => {
    const { a, c } = continuation(springPairNewmark, 150, 150);
    expect(c.state()).toEqual(a.state());
    // the Newton iterations really iterate on this model
    expect(a.state().solver.newtonIterations).toBeGreaterThan(1);
  });

  it("a_t matters: restoring without it departs from the uninterrupted run", () => {
    // With converged Newton iterations a_{t+h} is the consistent acceleration of the new
    // state, which a recomputation reproduces; a linearized step's a_{t+h} is not.
    const linearized = {
      ...springPairNewmark,
      solver: { ...springPairNewmark.solver, newtonIterations: 1 },
    };
    const a = loadModel(linearized);
    const b = loadModel(linearized);
    const ref = trace(a, 120);
    trace(b, 60);
    // changed memory, as an older snapshot without the whole-document checksum
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    delete snap.checksum;
    expect(snap.memory.integrator.accelerationValid).toBe(true);
    snap.memory.integrator.accelerationValid = false;
    const c = loadSnapshot(snap);
    expect(trace(c, 60)[59]).not.toBe(ref[119]);
  });

  it("a jointed chain with a motor (joint reactions restored too)", () => {
    const { a, b, c } = continuation(jointModel, 100, 100);
    expect(b.state().joints.map((j) => j.id)).toEqual(["j0", "j1", "j2", "m0"]);
    expect(c.state()).toEqual(a.state());
  });

  it("Newmark γ > ½ on the jointed chain (a_t and a_{t−h}, the Newton guess, kept)", () => {
    // Newton iterated: generalized-alpha's form (newmark.ts `alphaForm`), its memory
    const iterated = {
      ...jointModel,
      solver: { integrator: "newmark", dt: 0.002, beta: 0.3025, gamma: 0.6 },
    };
    const run = continuation(iterated, 100, 100);
    expect(run.c.state()).toEqual(run.a.state());
    // the linearized step: the joints at the position level, Newton's guess from both
    const damped = { ...iterated, solver: { ...iterated.solver, newtonIterations: 1 } };
    const { a, c } = continuation(damped, 100, 100);
    expect(c.state()).toEqual(a.state());
    // a_{t−h} matters: the linearized step starts from the mean of the two
    const b = loadModel(damped);
    const ref = trace(loadModel(damped), 120);
    trace(b, 60);
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    delete snap.checksum;
    expect(snap.memory.integrator.previousAcceleration).toBeTypeOf("string");
    delete snap.memory.integrator.previousAcceleration;
    expect(trace(loadSnapshot(snap), 60)[59]).not.toBe(ref[119]);
  });

  it("the restored jointed chain reports the same reactions before its next step", () => {
    const b = loadModel(jointModel);
    b.step(37);
    const c = roundTrip(b);
    expect(c.state()).toEqual(b.state());
  });

  it("compliant contact (dynamic solve-matrix pattern)", () => {
    const { a, b, c, ref } = continuation(smcModel, 250, 250);
    // the sphere–sphere contact has reserved its off-diagonal blocks (block rows of the
    // two dynamic bodies) by then
    expect(b.snapshot().memory.matrixBlocks).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(c.state().energy).toEqual(a.state().energy);
    expect(new Set(ref).size).toBe(ref.length);
  });

  it("compliant contact with friction (the tangential springs' history by contact key)", () => {
    // a cube held on a slope by its loaded springs and a sphere rolling down beside it
    const th = Math.atan(0.3);
    const model = {
      gravity: [9.81 * Math.sin(th), 0, -9.81 * Math.cos(th)],
      bodies: [
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
        {
          id: "box",
          mass: 1,
          position: [0, 0, 0.1],
          shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
        },
        { id: "ball", mass: 1, position: [0, 1, 0.1], shapes: [{ type: "sphere", radius: 0.1 }] },
      ],
      contact: { method: "smc", friction: 0.5 },
      solver: { dt: 0.005, integrator: "newmark" },
    };
    const { b, ref } = continuation(model, 60, 60);
    expect(b.snapshot().memory.contact).toMatchObject({ count: 5 });
    // the history matters: restored without it, the springs start unloaded and the run departs
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    delete snap.memory.contact;
    delete snap.checksum;
    expect(trace(loadSnapshot(snap), 60)[59]).not.toBe(ref[119]);
  });

  it("nonsmooth contact with friction (warm-start impulses by contact key)", () => {
    const { b } = continuation(slidingBoxNsc, 40, 60);
    expect(b.state().contacts.length).toBeGreaterThan(0);
    expect(b.snapshot().memory.contact).toMatchObject({ count: 4 });
  });

  it("a pile of spheres with nonsmooth contact", () => {
    // at step 170 two spheres touch (the top one still bounces at e = 0.3 at step 150; its
    // impacts located within their steps since 2026-12-07, it was down by step 150 before)
    const { b } = continuation(nscPile, 170, 80);
    expect(b.state().contacts.length).toBeGreaterThanOrEqual(2);
  });

  it("a snapshot taken right after a restore saves the restored memory (a rebuilt session's checkpoint)", () => {
    const a = loadModel(nscPile);
    const ref = trace(a, 200);
    const b = loadModel(nscPile);
    trace(b, 120);
    const first = b.snapshot();
    const restored = roundTrip(b);
    const again = restored.snapshot();
    expect((again.memory.contact as { count: number }).count).toBeGreaterThan(0);
    expect(again.memory.contact).toEqual(first.memory.contact);
    expect(trace(roundTrip(restored), 80)).toEqual(ref.slice(120));
  });

  it("warm starts matter: without the contact memory the continuation departs", () => {
    const a = loadModel(slidingBoxNsc);
    const b = loadModel(slidingBoxNsc);
    const ref = trace(a, 100);
    trace(b, 40);
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    delete snap.checksum;
    delete snap.memory.contact;
    expect(trace(loadSnapshot(snap), 60)).not.toEqual(ref.slice(40));
  });

  it("after PATCHes of solver, gravity and contact (parameters as patched)", () => {
    const a = loadModel(smcModel);
    const b = loadModel(smcModel);
    const patch = {
      solver: { dt: 0.0007, rayleighMass: 0.1 },
      gravity: [0.5, 0, -9] as [number, number, number],
      contact: { margin: 0.02 },
    };
    trace(a, 20);
    trace(b, 20);
    a.update(patch);
    b.update(patch);
    // snapshot right after the PATCH (Newmark a_t invalid), then again after some steps
    const c = roundTrip(b);
    const snap = c.snapshot();
    expect(snap.parameters.solver.dt).toBe(0.0007);
    expect(snap.parameters.gravity).toEqual([0.5, 0, -9]);
    expect(snap.parameters.contact?.margin).toBe(0.02);
    expect(snap.memory.integrator.accelerationValid).toBe(false);
    const ref = trace(a, 80);
    const head = trace(c, 40);
    expect(head).toEqual(ref.slice(0, 40));
    expect(trace(roundTrip(c), 40)).toEqual(ref.slice(40));
  });

  it("after a PATCH of gyroscopicJacobian (the restored simulation steps without it too)", () => {
    const a = loadModel(jointModel);
    const b = loadModel(jointModel);
    const patch = { solver: { gyroscopicJacobian: false } };
    trace(a, 10);
    trace(b, 10);
    a.update(patch);
    b.update(patch);
    const ref = trace(a, 60);
    expect(trace(b, 20)).toEqual(ref.slice(0, 20));
    const c = roundTrip(b);
    expect(c.snapshot().parameters.solver.gyroscopicJacobian).toBe(false);
    expect(trace(c, 40)).toEqual(ref.slice(20));
    // and the setting changes the trajectory, so the equality above says something
    const d = loadModel(jointModel);
    expect(trace(d, 70).slice(10)).not.toEqual(ref);
  });

  it("a fresh model's snapshot restores to t = 0 and reset still goes back to the model", () => {
    const b = loadModel(jointModel);
    const h0 = hashOf(b);
    b.step(10);
    const c = roundTrip(b);
    c.reset();
    expect(hashOf(c)).toBe(h0);
    expect(c.time).toBe(0);
  });

  it("reset repeats a fresh run bit for bit (generalized-α: its first guess of the joint force is the last multipliers, which reset zeroes)", () => {
    const model = { ...jointModel, solver: { integrator: "generalized-alpha", dt: 0.002 } };
    const fresh = loadModel(model);
    const atStart = fresh.state();
    const ref = trace(fresh, 30);
    const b = loadModel(model);
    b.step(40);
    b.reset();
    // no step since t = 0: no reactions, as in the fresh model
    expect(b.state().joints).toEqual(atStart.joints);
    expect(trace(b, 30)).toEqual(ref);
  });
});

describe("a restored simulation reports what the original reports", () => {
  // The State of a restored simulation equals the original's before any further step:
  // the reported efforts of the last step (actuators' effort, joints' limitEffort) travel
  // in memory.efforts (they read 0 until the next step before they did).
  const cases = [
    ["moreau-jean, a nonsmooth limit", "moreau-jean", { limits: { lower: -0.5, upper: 0.3 } }],
    [
      "newmark, a compliant limit and a position servo",
      "newmark",
      {
        limits: { lower: -0.5, upper: 0.3 },
        servo: { type: "position", target: 0.6, kp: 50, kd: 2 },
      },
    ],
    [
      "generalized-alpha, a position servo",
      "generalized-alpha",
      { servo: { type: "position", target: 0.6, kp: 50, kd: 2 } },
    ],
  ] as const;
  for (const [name, integrator, extra] of cases)
    it(`${name}: the whole State, then 50 more steps bit for bit`, () => {
      const model = rodPendulum({
        mass: 1.2,
        length: 0.8,
        axis: [0, 1, 0],
        gravity: [0, 0, -9.81],
        solver: { integrator, dt: 0.005 },
        ...extra,
      });
      const original = loadModel(model);
      original.step(150);
      const before = original.state();
      expect(before.joints.some((j) => j.limitEffort !== 0) || before.actuators.length > 0).toBe(
        true,
      );
      expectRestoredContinues(original, before, 50);
    });

  it("a bodyAcceleration sensor reads the same right after a restore (the last step's velocities travel)", () => {
    const model = {
      ...rodPendulum({
        mass: 1.2,
        length: 0.8,
        axis: [0, 1, 0],
        gravity: [0, 0, -9.81],
        solver: { integrator: "generalized-alpha", dt: 0.005 },
      }),
      sensors: [{ id: "acc", type: "bodyAcceleration", body: "rod" }],
    } as ModelInput;
    const original = loadModel(model);
    original.step(60);
    const before = original.state();
    // the rod swings: its centre accelerates
    expect(Math.hypot(...(before.observation ?? []))).toBeGreaterThan(1);
    const snap = JSON.parse(JSON.stringify(original.snapshot()));
    expect(snap.memory.previousVelocity.h).toBe(0.005);
    const restored = loadSnapshot(snap);
    expect(restored.state()).toEqual(before);
    original.step(20);
    restored.step(20);
    expect(restored.state()).toEqual(original.state());
    // without such a sensor nothing is saved
    const plain = loadModel({ ...model, sensors: [] });
    plain.step(3);
    expect(JSON.parse(JSON.stringify(plain.snapshot())).memory.previousVelocity).toBeUndefined();
  });

  it("the last step's contacts are reported right after a restore (nsc and smc)", () => {
    const ball = (method: "nsc" | "smc", integrator: "moreau-jean" | "newmark"): ModelInput => ({
      gravity: [0, 0, -9.81],
      bodies: [
        {
          id: "ball",
          mass: 1,
          position: [0, 0, 0.1],
          velocity: [0.3, 0, 0],
          inertia: [0.004, 0.004, 0.004],
          shapes: [{ type: "sphere", radius: 0.1 }],
        },
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      contact: method === "nsc" ? { method, friction: 0.3, restitution: 0 } : { method },
      solver: { integrator, dt: 0.002 },
    });
    for (const model of [slidingBoxNsc, ball("nsc", "moreau-jean"), ball("smc", "newmark")]) {
      const original = loadModel(model);
      original.step(100);
      const before = original.state();
      expect(before.contacts.length).toBeGreaterThan(0);
      expectRestoredContinues(original, before, 20);
    }
  });

  it("efforts naming what the model lacks are refused at their path", () => {
    const sim = loadModel(
      rodPendulum({
        mass: 1,
        length: 1,
        axis: [0, 1, 0],
        solver: { dt: 0.005 },
        limits: { lower: -0.1, upper: 0.1 },
      }),
    );
    sim.step(5);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    snap.memory.efforts = { actuators: [["nope", 1]], limits: [] };
    // as an older snapshot without the whole-document checksum, to reach the check
    delete snap.checksum;
    expect(() => loadSnapshot(snap)).toThrow(SnapshotError);
    try {
      loadSnapshot(snap);
    } catch (err) {
      expect((err as SnapshotError).issues[0].path).toEqual([
        "memory",
        "efforts",
        "actuators",
        0,
        0,
      ]);
    }
  });
});

describe("the snapshot format", () => {
  it("is plain JSON with a format name, a version and base64 float64 arrays", () => {
    const b = loadModel(springPairNewmark);
    b.step(3);
    const snap = b.snapshot();
    const text = JSON.stringify(snap);
    const back = JSON.parse(text);
    expect(back.format).toBe("moreau.simulation");
    expect(back.version).toBe(1);
    expect(back.step).toBe(3);
    // base64 of the bytes: 2 bodies × 3 positions = 48 bytes
    const pos = Buffer.from(back.state.position, "base64");
    expect(pos.byteLength).toBe(48);
    expect(new Float64Array(pos.buffer, pos.byteOffset, 6)[0]).toBe(b.system.pos[0]);
    expect(back.hash).toBe(hashOf(b));
  });

  it("keeps a −0 of the state exactly (a JSON number would not)", () => {
    // (a model's own −0 is taken as +0, json-values.ts; the state's arithmetic may make one)
    const b = loadModel({
      name: "z",
      gravity: [0, 0, 0],
      bodies: [{ id: "p", kind: "particle", mass: 1, position: [-0, 1, 0] }],
    });
    expect(Object.is(b.system.pos[0], 0)).toBe(true);
    b.system.pos[0] = -0;
    const c = roundTrip(b);
    expect(Object.is(c.system.pos[0], -0)).toBe(true);
    expect(JSON.parse(JSON.stringify(-0))).toBe(0);
  });

  /** A snapshot without its whole-document checksum (as an older one), to reach the other checks. */
  const base = () => {
    const b = loadModel(jointModel);
    b.step(5);
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    delete snap.checksum;
    return snap;
  };
  const issuesOf = (snap: unknown) => {
    try {
      loadSnapshot(snap);
    } catch (err) {
      expect(err).toBeInstanceOf(SnapshotError);
      return (err as SnapshotError).issues;
    }
    throw new Error("accepted");
  };

  it("refuses a document changed after it was written (a heavier body) by its checksum", () => {
    const b = loadModel(jointModel);
    b.step(5);
    const snap = JSON.parse(JSON.stringify(b.snapshot()));
    expect(snap.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(() => loadSnapshot(JSON.parse(JSON.stringify(snap)))).not.toThrow();
    snap.model.bodies[0].mass *= 2;
    expect(issuesOf(snap)[0].path).toEqual(["checksum"]);
  });

  it("refuses another version, a changed state, wrong lengths and a bad model, with paths", () => {
    const v = base();
    v.version = 2;
    expect(issuesOf(v)[0].path).toEqual(["version"]);

    const tampered = base();
    const pos = Buffer.from(tampered.state.position, "base64");
    pos[3] ^= 1;
    tampered.state.position = pos.toString("base64");
    expect(issuesOf(tampered)[0]).toMatchObject({ path: ["hash"] });

    const short = base();
    short.memory.lambda = Buffer.alloc(8).toString("base64");
    expect(issuesOf(short)[0].path).toEqual(["memory", "lambda"]);

    const badModel = base();
    badModel.model.bodies[0].mass = -1;
    expect(issuesOf(badModel)[0].path).toEqual(["model", "bodies", 0, "mass"]);

    const extra = base();
    extra.surprise = 1;
    expect(issuesOf(extra)[0].message).toMatch(/surprise/);

    const blocks = base();
    blocks.memory.matrixBlocks = [[0, 99]];
    expect(issuesOf(blocks)[0].path).toEqual(["memory", "matrixBlocks", 0]);
  });
});
