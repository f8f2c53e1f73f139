/**
 * Solver settings that only some choices read (schemas/model.ts unreadSolverSettings): theta
 * (moreau-jean), beta and gamma (newmark), rhoInfinity and stepTolerance (generalized-alpha;
 * stepTolerance newmark, moreau-jean and symplectic-euler too, not backward-euler),
 * linearTolerance and linearIterations (the Krylov solvers and auto), linearPreconditioner
 * (cg), contactSolver, maxIterations, tolerance and the projection's (nonsmooth contact). A
 * model that sets one where it is not read is refused naming it; a PATCH that changes
 * the integrator drops the previous one's settings (the steps then follow the new scheme's
 * defaults, checked against the oscillator's recurrences of test/support/oscillator.ts), and
 * one that names an unread setting is refused and changes nothing. Snapshots and recordings
 * written before the check (theta and rhoInfinity filled into every model) still restore.
 * newtonIterations and gyroscopicJacobian (the Newton integrators) and jointTolerance (the
 * integrators whose joints the post-step projection holds: not generalized-alpha, not
 * articulated) were schema defaults, so set and defaulted could not be told apart: now
 * unset, their defaults are resolveSolver's (solver-defaults.ts), the same steps as the
 * old explicit values, and snapshots that carry them with articulated still restore.
 */
import { describe, expect, it } from "vitest";
import { clothModel } from "../../../bench/scenes";
import { SolverSettings } from "../../../schemas/model";
import {
  loadModel,
  loadSnapshot,
  ModelError,
  ParameterError,
  parseRecording,
  recordingOf,
  replayRecording,
} from "../../../src/engine/index";
import {
  DEFAULT_GYROSCOPIC_JACOBIAN,
  DEFAULT_JOINT_TOLERANCE,
  DEFAULT_NEWTON_ITERATIONS,
  resolveSolver,
} from "../../../src/engine/simulation/solver-defaults";
import { ballOnFloor, hingedRods, sphericalChain, springParticle } from "../../support/models";
import { newmarkStep, type OscillatorState, thetaMethodStep } from "../../support/oscillator";

const k = 50;
const m = 2;
const h = 0.03;
const w2 = k / m;

function oscillator(solver: Record<string, unknown>) {
  return springParticle({ stiffness: k, mass: m, x0: 0.4, v0: -0.7, dt: h, name: null, solver });
}

type Sim = ReturnType<typeof loadModel>;

function stateOf(sim: Sim): OscillatorState {
  const b = sim.state().bodies[0];
  return { x: b.position[0], v: b.velocity[0] };
}

/** Steps `sim` n times, each against `step` of the state before it (12 digits). */
function expectSteps(sim: Sim, n: number, step: (s: OscillatorState) => OscillatorState): void {
  for (let i = 0; i < n; i++) {
    const want = step(stateOf(sim));
    sim.step(1);
    const got = stateOf(sim);
    expect(got.x).toBeCloseTo(want.x, 12);
    expect(got.v).toBeCloseTo(want.v, 12);
  }
}

function modelIssues(solver: Record<string, unknown>): { path: string; message: string }[] {
  try {
    loadModel(oscillator(solver));
  } catch (err) {
    if (err instanceof ModelError)
      return err.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
    throw err;
  }
  return [];
}

const INTEGRATORS = [
  "moreau-jean",
  "newmark",
  "generalized-alpha",
  "backward-euler",
  "symplectic-euler",
] as const;

describe("solver settings read only by some choices", () => {
  it("a model setting an integrator's own parameter under another integrator is refused, naming it", () => {
    const own: Record<string, (typeof INTEGRATORS)[number]> = {
      theta: "moreau-jean",
      beta: "newmark",
      gamma: "newmark",
      rhoInfinity: "generalized-alpha",
      stepTolerance: "generalized-alpha",
    };
    const value: Record<string, number> = {
      theta: 0.7,
      beta: 0.3,
      gamma: 0.6,
      rhoInfinity: 0.8,
      stepTolerance: 1e-3,
    };
    // stepTolerance: newmark's too (its steps at the defaults on jointed models are
    // generalized-alpha's, newmark.ts `alphaForm`), and the θ-schemes' with an error
    // control (their symmetric joint steps, theta-scheme.ts tooCoarse): all but
    // backward-euler's
    const alsoRead: Record<string, readonly string[]> = {
      stepTolerance: ["newmark", "moreau-jean", "symplectic-euler"],
    };
    for (const [key, reader] of Object.entries(own))
      for (const integrator of INTEGRATORS) {
        const issues = modelIssues({ integrator, [key]: value[key] });
        if (integrator === reader || alsoRead[key]?.includes(integrator))
          expect(issues, `${key} with ${integrator}`).toEqual([]);
        else {
          expect(issues, `${key} with ${integrator}`).toHaveLength(1);
          expect(issues[0].path).toBe(`solver.${key}`);
          expect(issues[0].message).toContain(`"${reader}"`);
          expect(issues[0].message).toContain(`"${integrator}"`);
        }
      }
    // null is the default of the nullable ones, accepted anywhere
    expect(modelIssues({ integrator: "newmark", stepTolerance: null })).toEqual([]);
    // moreau-jean at θ = 1 weighs its forces as backward Euler (w = θ): no error control
    // reads the tolerance there; below 1 it is read
    const atOne = modelIssues({ integrator: "moreau-jean", theta: 1, stepTolerance: 1e-3 });
    expect(atOne).toHaveLength(1);
    expect(atOne[0].path).toBe("solver.stepTolerance");
    expect(atOne[0].message).toContain("theta 1");
    expect(modelIssues({ integrator: "moreau-jean", theta: 0.9, stepTolerance: 1e-3 })).toEqual([]);
    expect(modelIssues({ integrator: "moreau-jean", theta: 1, stepTolerance: null })).toEqual([]);
  });

  it("the Krylov solvers' settings: refused with a direct solver, the preconditioner with cg only", () => {
    for (const linearSolver of ["dense-lu", "sparse-ldlt", "sparse-lu", "sparse-qr"])
      for (const [key, v] of [
        ["linearTolerance", 1e-6],
        ["linearIterations", 50],
        ["linearPreconditioner", "jacobi"],
      ] as const) {
        const issues = modelIssues({ integrator: "newmark", linearSolver, [key]: v });
        expect(issues.map((i) => i.path)).toEqual([`solver.${key}`]);
      }
    for (const linearSolver of ["auto", "cg", "minres", "gmres"])
      expect(modelIssues({ integrator: "newmark", linearSolver, linearTolerance: 1e-6 })).toEqual(
        [],
      );
    expect(modelIssues({ linearSolver: "auto", linearPreconditioner: "jacobi" })[0].path).toBe(
      "solver.linearPreconditioner",
    );
    expect(modelIssues({ linearSolver: "gmres", linearPreconditioner: "jacobi" })).toHaveLength(1);
    expect(modelIssues({ linearSolver: "cg", linearPreconditioner: "jacobi" })).toEqual([]);
  });

  it("the nonsmooth contact solver's settings: refused without contact and with compliant contact", () => {
    const settings = {
      contactSolver: "pgs",
      projectOnConstraints: false,
      maxIterations: 50,
      tolerance: 1e-8,
      projectionTolerance: 1e-5,
      projectionIterations: 30,
    };
    const ball = (contact: Record<string, unknown> | null) => {
      const m = ballOnFloor(contact ?? {}, { z: 0.1, vx: 0 }, settings);
      if (contact === null) delete (m as { contact?: unknown }).contact;
      return m;
    };
    expect(() => loadModel(ball({ method: "nsc" }))).not.toThrow();
    for (const [contact, what] of [
      [{ method: "smc" }, "compliant contact"],
      [null, "no contact"],
    ] as const) {
      let issues: { path: string; message: string }[] = [];
      try {
        loadModel(ball(contact));
      } catch (err) {
        issues = (err as ModelError).issues.map((i) => ({
          path: i.path.join("."),
          message: i.message,
        }));
      }
      expect(issues.map((i) => i.path).sort()).toEqual(
        Object.keys(settings)
          .map((k) => `solver.${k}`)
          .sort(),
      );
      expect(issues[0].message).toContain(what);
    }
  });

  it("joint-limit settings of one law: restitution (velocity-level integrators) and stiffness, damping (the compliant ones) refused under the other, naming the joint; a PATCH switches the law", () => {
    const limited = (integrator: string, limits: Record<string, number>) => {
      const model = hingedRods({ integrator } as never);
      (model.joints[1] as Record<string, unknown>).limits = { lower: -1, upper: 1, ...limits };
      return model;
    };
    const refused = (integrator: string, limits: Record<string, number>) => {
      try {
        loadModel(limited(integrator, limits));
      } catch (err) {
        return (err as ModelError).issues.map((i) => `${i.path.join(".")}: ${i.message}`);
      }
      return [];
    };
    const both = { restitution: 0.5, stiffness: 100, damping: 1 };
    for (const integrator of ["moreau-jean", "backward-euler", "symplectic-euler"]) {
      const issues = refused(integrator, both);
      expect(issues.map((i) => i.split(":")[0])).toEqual([
        "joints.1.limits.stiffness",
        "joints.1.limits.damping",
      ]);
      expect(issues[0]).toContain('joint "p2"');
      expect(issues[0]).toContain(integrator);
      expect(refused(integrator, { restitution: 0.5 })).toEqual([]);
    }
    for (const integrator of ["newmark", "generalized-alpha", "articulated"]) {
      const issues = refused(integrator, both);
      expect(issues.map((i) => i.split(":")[0])).toEqual(["joints.1.limits.restitution"]);
      expect(issues[0]).toContain('joint "p2"');
      expect(refused(integrator, { stiffness: 100, damping: 1 })).toEqual([]);
    }
    // the session's model is kept; a PATCH to the other family runs the other law
    const sim = loadModel(limited("moreau-jean", { restitution: 0.5 }));
    sim.step(10);
    sim.update({ solver: { integrator: "generalized-alpha" } });
    sim.step(10);
    // and its snapshot (the model as posted) restores: the stored model is taken as it was
    expect(() => loadSnapshot(sim.snapshot())).not.toThrow();
  });

  it("contact settings of one method: restitution, a pair's too (nsc) and behavior (smc) refused under the other, at load and on PATCH; friction read by both", () => {
    const behavior = { type: "linear", stiffness: 1e4 };
    const pairs = [{ bodies: ["ball", "floor"] as [string, string], friction: 0.2 }];
    const bouncy = [{ bodies: ["ball", "floor"], friction: 0.2, restitution: 0.5 }];
    const refused = (contact: Record<string, unknown>) => {
      try {
        loadModel(ballOnFloor(contact, { z: 0.1, vx: 0 }, {}));
      } catch (err) {
        return (err as ModelError).issues.map((i) => i.path.join("."));
      }
      return [];
    };
    expect(refused({ method: "smc", friction: 0.5, restitution: 0.3, pairs })).toEqual([
      "contact.restitution",
    ]);
    expect(refused({ method: "smc", friction: 0.5, pairs })).toEqual([]);
    expect(refused({ method: "smc", pairs: bouncy })).toEqual(["contact.pairs"]);
    // still strict: an unknown key is an error under either method
    expect(refused({ method: "smc", friction: 0.5, frictoin: 0.5 })).toEqual(["contact"]);
    expect(refused({ method: "smc", behavior })).toEqual([]);
    expect(refused({ method: "nsc", behavior })).toEqual(["contact.behavior"]);
    expect(refused({ method: "nsc", friction: 0.5, restitution: 0.3, pairs })).toEqual([]);
    const smc = loadModel(ballOnFloor({ method: "smc" }, { z: 0.1, vx: 0 }, {}));
    const nsc = loadModel(ballOnFloor({ method: "nsc" }, { z: 0.1, vx: 0 }, {}));
    for (const [sim, patch, key] of [
      [smc, { restitution: 0.5 }, "restitution"],
      [nsc, { behavior: { type: "linear", stiffness: 1e4 } }, "behavior"],
    ] as const) {
      let thrown: unknown = null;
      try {
        sim.update({ contact: patch as never });
      } catch (err) {
        thrown = err;
      }
      expect((thrown as ParameterError).issues.map((i) => i.path.join("."))).toEqual([
        `contact.${key}`,
      ]);
    }
    nsc.update({ contact: { friction: 0.4 } });
    // a model without a contact block has no contact parameters: refused, not ignored
    const { contact: _, ...loose } = ballOnFloor({ method: "nsc" }, { z: 0.1, vx: 0 }, {});
    const none = loadModel(loose);
    let noContact: unknown = null;
    try {
      none.update({ contact: { friction: 0.4 } });
    } catch (err) {
      noContact = err;
    }
    expect(noContact).toBeInstanceOf(ParameterError);
    expect((noContact as ParameterError).issues.map((i) => i.path.join("."))).toEqual(["contact"]);
    expect(none.recording().entries).toEqual([]);
    // a snapshot written before the check (restitution, friction and behavior in every
    // contact block) restores, its friction 0 now read
    const snap = JSON.parse(JSON.stringify(smc.snapshot()));
    for (const c of [snap.model.contact, snap.parameters.contact])
      Object.assign(c, { restitution: 0, friction: 0, pairs: [] });
    delete snap.checksum;
    const model = smc.snapshot().model;
    expect(loadSnapshot(snap).snapshot().model).toEqual({
      ...model,
      contact: { ...model.contact, friction: 0 },
    });
    // a PATCH of friction under smc
    smc.update({ contact: { friction: 0.4, pairs } });
  });

  it("linearPreconditioner runs CG on the assembled matrix with it, also where the springs offer the matrix-free product", () => {
    const run = (linearPreconditioner?: "none" | "jacobi" | "ic0") => {
      const model = clothModel({ n: 8, stiffness: 2000 });
      const sim = loadModel({
        ...model,
        solver: {
          ...model.solver,
          linearSolver: "cg",
          linearTolerance: 1e-10,
          ...(linearPreconditioner ? { linearPreconditioner } : {}),
        },
      });
      let iterations = 0;
      for (let i = 0; i < 20; i++) {
        sim.step(1);
        iterations += sim.state().solver.linearIterations;
      }
      const z = sim.state().bodies.map((b) => b.position[2]);
      return { iterations, z };
    };
    const free = run();
    const runs = { none: run("none"), jacobi: run("jacobi"), ic0: run("ic0") };
    // the same Newton steps to the solves' tolerance
    for (const r of Object.values(runs))
      for (let i = 0; i < free.z.length; i++) expect(r.z[i]).toBeCloseTo(free.z[i], 8);
    // each preconditioner is the one used: unpreconditioned CG takes the most iterations,
    // IC(0) the fewest
    expect(runs.none.iterations).toBeGreaterThan(runs.jacobi.iterations);
    expect(runs.jacobi.iterations).toBeGreaterThan(runs.ic0.iterations);
  });

  it("a PATCH to another integrator drops the previous one's settings: the steps follow the new scheme", () => {
    const sim = loadModel(oscillator({ integrator: "newmark", beta: 0.3, gamma: 0.7 }));
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0.3, 0.7));
    sim.update({ solver: { integrator: "moreau-jean", theta: 0.8 } });
    expectSteps(sim, 3, (s) => thetaMethodStep(s, h, w2, 0.8, 0.8));
    // back to newmark without β, γ: its defaults (for this spring network the central
    // difference, integrators/resolution.ts), not the dropped 0.3, 0.7
    sim.update({ solver: { integrator: "newmark" } });
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0, 0.5));
    // and moreau-jean without θ: ½, not the dropped 0.8
    sim.update({ solver: { integrator: "moreau-jean" } });
    expectSteps(sim, 3, (s) => thetaMethodStep(s, h, w2, 0.5, 0.5));
    // generalized-alpha's error control turned off (null) stays off through moreau-jean,
    // which reads it too, and does not outlast a switch to backward-euler, which does not
    // (nor then back to newmark); a direct solver drops the Krylov settings
    sim.update({ solver: { integrator: "generalized-alpha", stepTolerance: null } });
    sim.update({ solver: { integrator: "moreau-jean" } });
    expect(sim.solver.stepTolerance).toBeNull();
    sim.update({ solver: { integrator: "backward-euler" } });
    expect(sim.solver).not.toHaveProperty("stepTolerance");
    sim.update({ solver: { integrator: "newmark", linearSolver: "cg", linearTolerance: 1e-9 } });
    expect(sim.solver).not.toHaveProperty("stepTolerance");
    sim.update({ solver: { linearSolver: "sparse-ldlt" } });
    expect(sim.solver).not.toHaveProperty("linearTolerance");
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0, 0.5));
  });

  it("a PATCH naming a setting its integrator does not read is refused and changes nothing", () => {
    const sim = loadModel(oscillator({ integrator: "newmark", beta: 0.3, gamma: 0.7 }));
    for (const patch of [
      { theta: 0.9 },
      { integrator: "backward-euler" as const, beta: 0.3 },
      { rhoInfinity: 0.5 },
    ]) {
      let thrown: unknown = null;
      try {
        sim.update({ solver: patch });
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ParameterError);
      const key = Object.keys(patch).find((k) => k !== "integrator");
      expect((thrown as ParameterError).issues.map((i) => i.path.join("."))).toEqual([
        `solver.${key}`,
      ]);
    }
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0.3, 0.7));
  });

  it("a snapshot written before the check (theta and rhoInfinity in every solver) restores and continues", () => {
    const sim = loadModel(oscillator({ integrator: "newmark", beta: 0.3, gamma: 0.7 }));
    sim.step(4);
    // a copy, as it travels (JSON): snapshot() shares the simulation's model object
    const snap = JSON.parse(JSON.stringify(sim.snapshot())) as {
      model: { solver: Record<string, unknown> };
      parameters: { solver: Record<string, unknown> };
      checksum?: string;
    };
    // as earlier versions wrote it: the defaults filled in whatever the integrator
    for (const solver of [snap.model.solver, snap.parameters.solver])
      Object.assign(solver, { theta: 0.5, rhoInfinity: 1 });
    delete snap.checksum;
    const restored = loadSnapshot(snap);
    expect(restored.snapshot().model).toEqual(sim.snapshot().model);
    expectSteps(restored, 3, (s) => newmarkStep(s, h, w2, 0.3, 0.7));
    // and it is patched like a new model
    restored.update({ solver: { integrator: "moreau-jean" } });
    expectSteps(restored, 2, (s) => thetaMethodStep(s, h, w2, 0.5, 0.5));
  });

  it("so does a recording: its replay ends at the recorded state's hash", () => {
    const sim = loadModel(oscillator({ integrator: "generalized-alpha", rhoInfinity: 0.8 }));
    sim.step(3);
    sim.update({ solver: { integrator: "newmark", gamma: 0.6 } });
    sim.step(3);
    const rec = JSON.parse(JSON.stringify(recordingOf(sim)));
    rec.model.solver.theta = 0.5;
    const replay = replayRecording(parseRecording(rec));
    replay.step(rec.end.step - replay.stepCount);
    expect(replay.stateHash()).toBe(rec.end.hash);
  });

  describe("newtonIterations, gyroscopicJacobian and jointTolerance (no schema default)", () => {
    const SETTINGS = { newtonIterations: 3, gyroscopicJacobian: false, jointTolerance: 1e-8 };
    /** The integrators that read each (schemas/model.ts SETTING_READERS). */
    const READERS: Record<keyof typeof SETTINGS, readonly string[]> = {
      newtonIterations: INTEGRATORS,
      gyroscopicJacobian: INTEGRATORS,
      jointTolerance: ["moreau-jean", "newmark", "backward-euler", "symplectic-euler"],
    };
    const rods = (solver: Record<string, unknown>) =>
      hingedRods({ dt: 0.01, ...solver } as Parameters<typeof hingedRods>[0]);
    const issuesOf = (model: unknown) => {
      try {
        loadModel(model);
      } catch (err) {
        if (err instanceof ModelError)
          return err.issues.map((i) => ({ path: i.path, message: i.message }));
        throw err;
      }
      return [];
    };
    const refusal = (sim: Sim, patch: Record<string, unknown>) => {
      try {
        sim.update({ solver: patch });
      } catch (err) {
        expect(err).toBeInstanceOf(ParameterError);
        return (err as ParameterError).issues.map((i) => i.path.join("."));
      }
      return [];
    };
    /**
     * Four spinning links of an asymmetric inertia on spherical joints, whose steps all
     * three settings change with the Newton integrators that read them.
     */
    const spinning = (solver: Record<string, unknown>) => ({
      ...sphericalChain({
        links: 4,
        prefix: "l",
        length: 0.5,
        mass: 1,
        inertia: [0.02, 0.03, 0.05],
        angularVelocity: (k) => [3 + k, 5, 1 - k],
        velocity: (k) => [0, 0.3 * k, 0.2],
      }),
      solver: { dt: 0.01, ...solver },
    });
    const hashAfter = (model: unknown, n: number) => {
      const sim = loadModel(model);
      sim.step(n);
      return sim.stateHash();
    };

    it("a model setting one where its integrator does not read it is refused at [solver, key], naming it; the readers take it", () => {
      for (const [key, value] of Object.entries(SETTINGS) as [keyof typeof SETTINGS, unknown][])
        for (const integrator of [...INTEGRATORS, "articulated"]) {
          const issues = issuesOf(rods({ integrator, [key]: value }));
          const what = `${key} with ${integrator}`;
          if (READERS[key].includes(integrator)) expect(issues, what).toEqual([]);
          else {
            expect(
              issues.map((i) => i.path),
              what,
            ).toEqual([["solver", key]]);
            expect(issues[0].message, what).toContain(key);
            expect(issues[0].message, what).toContain(`"${integrator}"`);
          }
        }
      // all three at once with articulated: one issue each
      expect(issuesOf(rods({ integrator: "articulated", ...SETTINGS })).map((i) => i.path)).toEqual(
        [
          ["solver", "newtonIterations"],
          ["solver", "gyroscopicJacobian"],
          ["solver", "jointTolerance"],
        ],
      );
      expect(
        issuesOf(rods({ integrator: "articulated", jointTolerance: 1e-8 }))[0].message,
      ).toMatch(/post-step projection.*"articulated" runs none \(its joints are its coordinates\)/);
      expect(
        issuesOf(rods({ integrator: "generalized-alpha", jointTolerance: 1e-8 }))[0].message,
      ).toMatch(/"generalized-alpha" runs none \(its Newton iterations close the joints/);
      // null (the nullable ones' default) is accepted anywhere, as the other settings' null
      expect(
        issuesOf(rods({ integrator: "articulated", newtonIterations: null, jointTolerance: null })),
      ).toEqual([]);
    });

    it("left out, they resolve to solver-defaults.ts's constants, and a run is the run with them set to those values", () => {
      expect([
        DEFAULT_NEWTON_ITERATIONS,
        DEFAULT_GYROSCOPIC_JACOBIAN,
        DEFAULT_JOINT_TOLERANCE,
      ]).toEqual([25, true, 1e-12]);
      const spec = SolverSettings.parse({});
      for (const key of Object.keys(SETTINGS)) expect(spec).not.toHaveProperty(key);
      const resolved = resolveSolver(spec, 0.1, [0, 0, -9.81]);
      expect(resolved.newtonIterations).toBe(DEFAULT_NEWTON_ITERATIONS);
      expect(resolved.gyroscopicJacobian).toBe(DEFAULT_GYROSCOPIC_JACOBIAN);
      expect(resolved.jointTolerance).toBe(DEFAULT_JOINT_TOLERANCE);
      // an explicit value wins, null is the default
      const set = resolveSolver({ ...spec, ...SETTINGS }, 0.1, [0, 0, -9.81]);
      expect(set).toMatchObject(SETTINGS);
      expect(
        resolveSolver(
          { ...spec, newtonIterations: null, jointTolerance: null },
          0.1,
          [0, 0, -9.81],
        ),
      ).toMatchObject({ newtonIterations: 25, jointTolerance: 1e-12 });
      const defaults = { newtonIterations: 25, gyroscopicJacobian: true, jointTolerance: 1e-12 };
      for (const integrator of ["moreau-jean", "newmark", "generalized-alpha"] as const) {
        const sim = loadModel(spinning({ integrator }));
        expect(sim.solver, integrator).toMatchObject(defaults);
        sim.step(40);
        const { jointTolerance, ...newton } = defaults;
        const set = integrator === "generalized-alpha" ? newton : { ...newton, jointTolerance };
        const explicit = loadModel(spinning({ integrator, ...set }));
        explicit.step(40);
        expect(sim.stateHash(), integrator).toBe(explicit.stateHash());
        expect(sim.state().bodies, integrator).toEqual(explicit.state().bodies);
        // and the settings are really read there: another value changes the steps
        const others: [string, unknown][] = [
          ["newtonIterations", 1],
          ["gyroscopicJacobian", false],
        ];
        for (const [key, value] of others)
          expect(
            hashAfter(spinning({ integrator, [key]: value }), 40),
            `${integrator} ${key}`,
          ).not.toBe(sim.stateHash());
      }
      // moreau-jean reads jointTolerance on its velocity-level joint steps: θ ≠ ½ here (at
      // ½ its smooth steps close these joints by their Newton iterations)
      const velocityLevel = { integrator: "moreau-jean", theta: 0.6 };
      expect(hashAfter(spinning({ ...velocityLevel, jointTolerance: 1e-5 }), 40)).not.toBe(
        hashAfter(spinning(velocityLevel), 40),
      );
      // and newmark on its velocity-level joint steps: the linearized step here (with Newton
      // iterated, β > 0, it closes these joints by its Newton iterations as generalized-alpha:
      // newmark.ts)
      const newmarkVelocityLevel = { integrator: "newmark", newtonIterations: 1 };
      expect(hashAfter(spinning({ ...newmarkVelocityLevel, jointTolerance: 1e-5 }), 40)).not.toBe(
        hashAfter(spinning(newmarkVelocityLevel), 40),
      );
    });

    it("a PATCH to articulated drops them (back: the defaults); one naming them on articulated is refused and changes nothing", () => {
      const sim = loadModel(rods({ integrator: "moreau-jean", ...SETTINGS }));
      sim.step(2);
      sim.update({ solver: { integrator: "articulated" } });
      const parameters = sim.snapshot().parameters.solver;
      for (const key of Object.keys(SETTINGS)) expect(parameters).not.toHaveProperty(key);
      sim.step(3);
      const before = sim.stateHash();
      for (const [key, value] of Object.entries(SETTINGS)) {
        expect(refusal(sim, { [key]: value })).toEqual([`solver.${key}`]);
        expect(refusal(sim, { integrator: "articulated", [key]: value })).toEqual([
          `solver.${key}`,
        ]);
      }
      expect(sim.stateHash()).toBe(before);
      expect(sim.snapshot().parameters.solver).toEqual(parameters);
      // switching back gives the defaults, not the dropped values
      sim.update({ solver: { integrator: "moreau-jean" } });
      expect(sim.solver).toMatchObject({
        newtonIterations: 25,
        gyroscopicJacobian: true,
        jointTolerance: 1e-12,
      });
      sim.step(2);
      // generalized-alpha drops jointTolerance alone
      const galpha = loadModel(rods({ integrator: "newmark", ...SETTINGS }));
      galpha.update({ solver: { integrator: "generalized-alpha" } });
      const kept = galpha.snapshot().parameters.solver;
      expect(kept).toMatchObject({ newtonIterations: 3, gyroscopicJacobian: false });
      expect(kept).not.toHaveProperty("jointTolerance");
      expect(refusal(galpha, { jointTolerance: 1e-6 })).toEqual(["solver.jointTolerance"]);
    });

    it("a snapshot and a recording written when they were schema defaults (with articulated and generalized-alpha) restore and step as before", () => {
      for (const integrator of ["articulated", "generalized-alpha"] as const) {
        const sim = loadModel(rods({ integrator }));
        sim.step(4);
        const snap = JSON.parse(JSON.stringify(sim.snapshot()));
        // as earlier versions wrote it: the schema's defaults filled in whatever the integrator
        const old = { newtonIterations: 25, gyroscopicJacobian: true, jointTolerance: 1e-12 };
        for (const solver of [snap.model.solver, snap.parameters.solver])
          Object.assign(solver, old);
        delete snap.checksum;
        const restored = loadSnapshot(snap);
        // dropped where unread; generalized-alpha reads the Newton ones, now as set values
        const read =
          integrator === "articulated" ? {} : { newtonIterations: 25, gyroscopicJacobian: true };
        const now = sim.snapshot();
        expect(restored.snapshot().model, integrator).toEqual({
          ...now.model,
          solver: { ...now.model.solver, ...read },
        });
        expect(restored.snapshot().parameters.solver, integrator).toEqual({
          ...now.parameters.solver,
          ...read,
        });
        sim.step(5);
        restored.step(5);
        expect(restored.stateHash(), integrator).toBe(sim.stateHash());
        const rec = JSON.parse(JSON.stringify(recordingOf(sim)));
        Object.assign(rec.model.solver, old);
        const replay = replayRecording(parseRecording(rec));
        replay.step(rec.end.step - replay.stepCount);
        expect(replay.stateHash(), integrator).toBe(rec.end.hash);
      }
    });

    it("a snapshot restores the defaults that ran, not the model's values a PATCH dropped since", () => {
      // newmark's linearized step set by the model, dropped by a switch to articulated and
      // back: 25 iterations run, and the restored simulation must not take the model's 1
      const sim = loadModel(rods({ integrator: "newmark", newtonIterations: 1 }));
      sim.update({ solver: { integrator: "articulated" } });
      sim.update({ solver: { integrator: "newmark" } });
      sim.step(3);
      const restored = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
      expect(restored.solver.newtonIterations).toBe(25);
      sim.step(5);
      restored.step(5);
      expect(restored.stateHash()).toBe(sim.stateHash());
    });
  });
});

describe("Simulation.update checks a PATCH as the wire format does", () => {
  it("a dt beyond 1 s or an unknown key is a ParameterError at its path, and nothing changes", () => {
    const sim = loadModel(springParticle({ stiffness: 50, mass: 2, x0: 0.4, dt: 0.01 }));
    sim.step(3);
    const hash = sim.stateHash();
    const issuesOf = (patch: unknown) => {
      try {
        sim.update(patch as Parameters<typeof sim.update>[0]);
      } catch (err) {
        expect(err).toBeInstanceOf(ParameterError);
        return (err as ParameterError).issues;
      }
      throw new Error("the PATCH was taken");
    };
    expect(issuesOf({ solver: { dt: 2 } }).map((i) => i.path)).toEqual([["solver", "dt"]]);
    const unknown = issuesOf({ solver: { dtt: 0.01 } });
    expect(unknown[0].message).toContain("dtt");
    expect(sim.solver.dt).toBe(0.01);
    expect(sim.stateHash()).toBe(hash);
    // and a snapshot of it restores
    sim.step(2);
    expect(loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot()))).stateHash()).toBe(
      sim.stateHash(),
    );
  });
});
