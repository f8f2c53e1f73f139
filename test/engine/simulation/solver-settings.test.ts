/**
 * Solver settings that only some choices read (schemas/model.ts unreadSolverSettings): theta
 * (moreau-jean), beta and gamma (newmark), rhoInfinity and stepTolerance (generalized-alpha),
 * linearTolerance and linearIterations (the Krylov solvers and auto), linearPreconditioner
 * (cg), contactSolver, maxIterations, tolerance and the projection's (nonsmooth contact). A
 * model that sets one where it is not read is refused naming it; a PATCH that changes
 * the integrator drops the previous one's settings (the steps then follow the new scheme's
 * defaults, checked against the oscillator's recurrences of test/support/oscillator.ts), and
 * one that names an unread setting is refused and changes nothing. Snapshots and recordings
 * written before the check (theta and rhoInfinity filled into every model) still restore.
 */
import { describe, expect, it } from "vitest";
import { clothModel } from "../../../bench/scenes";
import {
  loadModel,
  loadSnapshot,
  ModelError,
  ParameterError,
  parseRecording,
  recordingOf,
  replayRecording,
} from "../../../src/engine/index";
import { ballOnFloor, springParticle } from "../../support/models";
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
    for (const [key, reader] of Object.entries(own))
      for (const integrator of INTEGRATORS) {
        const issues = modelIssues({ integrator, [key]: value[key] });
        if (integrator === reader) expect(issues, `${key} with ${integrator}`).toEqual([]);
        else {
          expect(issues, `${key} with ${integrator}`).toHaveLength(1);
          expect(issues[0].path).toBe(`solver.${key}`);
          expect(issues[0].message).toContain(`"${reader}"`);
          expect(issues[0].message).toContain(`"${integrator}"`);
        }
      }
    // null is the default of the nullable ones, accepted anywhere
    expect(modelIssues({ integrator: "newmark", stepTolerance: null })).toEqual([]);
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

  it("contact settings of one method: friction, restitution, pairs (nsc) and behavior (smc) refused under the other, at load and on PATCH", () => {
    const behavior = { type: "linear", stiffness: 1e4 };
    const pairs = [{ bodies: ["ball", "floor"], friction: 0.2 }];
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
      "contact.friction",
      "contact.pairs",
    ]);
    expect(refused({ method: "smc", behavior })).toEqual([]);
    expect(refused({ method: "nsc", behavior })).toEqual(["contact.behavior"]);
    expect(refused({ method: "nsc", friction: 0.5, restitution: 0.3, pairs })).toEqual([]);
    const smc = loadModel(ballOnFloor({ method: "smc" }, { z: 0.1, vx: 0 }, {}));
    const nsc = loadModel(ballOnFloor({ method: "nsc" }, { z: 0.1, vx: 0 }, {}));
    for (const [sim, patch, key] of [
      [smc, { friction: 0.5 }, "friction"],
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
    // a snapshot written before the check (restitution, friction and behavior in every
    // contact block) restores
    const snap = JSON.parse(JSON.stringify(smc.snapshot()));
    for (const c of [snap.model.contact, snap.parameters.contact])
      Object.assign(c, { restitution: 0, friction: 0, pairs: [] });
    delete snap.checksum;
    expect(loadSnapshot(snap).snapshot().model).toEqual(smc.snapshot().model);
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
    // back to newmark without β, γ: its defaults (the trapezoidal rule), not the dropped 0.3, 0.7
    sim.update({ solver: { integrator: "newmark" } });
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0.25, 0.5));
    // and moreau-jean without θ: ½, not the dropped 0.8
    sim.update({ solver: { integrator: "moreau-jean" } });
    expectSteps(sim, 3, (s) => thetaMethodStep(s, h, w2, 0.5, 0.5));
    // generalized-alpha's error control turned off (null) does not outlast a switch away and
    // back; a direct solver drops the Krylov settings
    sim.update({ solver: { integrator: "generalized-alpha", stepTolerance: null } });
    sim.update({ solver: { integrator: "newmark", linearSolver: "cg", linearTolerance: 1e-9 } });
    expect(sim.solver).not.toHaveProperty("stepTolerance");
    sim.update({ solver: { linearSolver: "sparse-ldlt" } });
    expect(sim.solver).not.toHaveProperty("linearTolerance");
    expectSteps(sim, 3, (s) => newmarkStep(s, h, w2, 0.25, 0.5));
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
});
