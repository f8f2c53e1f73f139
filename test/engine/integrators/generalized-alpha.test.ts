/**
 * Generalized-α (Chung–Hulbert) against closed forms and references built here:
 * - AlphaCoefficients: α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1), γ = ½ + α_f − α_m,
 *   β = ¼(γ + ½)²: (½, ½, ½, ¼) at ρ∞ = 1, (−1, 0, 3/2, 1) at ρ∞ = 0;
 * - the oscillator x'' = −ω² x (no joints) follows the generalized-α recurrence written out
 *   in test/support/oscillator.ts step by step, at ρ∞ = 1 and 0.6;
 *
 * and its error control (solver.stepTolerance): a step whose local error estimate
 * (h²/12 times the change over the step of the acceleration consistent with the joints,
 * ü_{n+1} − ü_n: a function of the step's two ends, the same for the step taken back; measured as
 * the largest root-mean-square displacement of a body's mass, largestDisplacement: checked
 * against √(δx² + Σ_k I_k δθ_k²/m) for a turned box, a particle and a fixed body) exceeds
 * the tolerance is redone as two half steps. On the rigid pendulum of the long-run tests
 * (θ0 = 1 rad) at a coarse h = 50 ms, against RK4 on its one-dof equation: with the
 * control the angle at t = 2 s is at least ten times closer than without, the simulation
 * still advances by whole steps of h, and a snapshot taken mid-run continues
 * bit-identically (the last step's end acceleration is part of the memory). Its default
 * (defaultStepTolerance): 3e-4 m with ρ∞ = 1, off with ρ∞ < 1 or null; on the benchmark's
 * whipping 10-link chain at h = 1/240 s the defaults run 2000 steps through with the
 * energy within [−0.04, 0.02] m g L of its start (the estimate from the mean
 * accelerations, D − D_prev, a backward difference, lost 0.051 of it), where without the
 * control it rises (by 5 % of m g L; by 162 m g L before the run failed when every step
 * was first tried whole). A stiff hinged rod at h ω = 0.5 and small amplitude (the linear
 * oscillator's closed form θ0 sin ω t): with the control its error stays within the sum of
 * the accepted sub-steps' tolerances, without it the trapezoidal rule's phase error
 * ((hω)³/12 a step) takes it past that sum.
 * Its solver figures: on the oscillator stepError is h²/12 ω² |x_{n+1} − x_n| of the
 * recurrence (ü = −ω² x; none at the first step; no step halved under a loose tolerance); steps over a tighter one
 * report their sub-steps and estimates within it; one four halvings cannot meet reports 16
 * sub-steps and stepToleranceMet false (in snapshots too), and the run goes on.
 * The sub-step controller (the steps after a failed one start with half steps) is part of
 * the memory: a snapshot taken while it holds half steps continues bit-identically.
 */
import { describe, expect, it } from "vitest";
import { toMoreauModel } from "../../../bench/compare/engines/moreau";
import { chainScene } from "../../../bench/compare/scene";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import {
  AlphaCoefficients,
  bodyLengths,
  DEFAULT_STEP_TOLERANCE,
  defaultStepTolerance,
  largestDisplacement,
  stepControl,
} from "../../../src/engine/integrators/generalized-alpha";
import { BodySystem } from "../../../src/engine/model/body-system";
import { springParticle, stiffHingedRod } from "../../support/models";
import { type AlphaState, generalizedAlphaStep } from "../../support/oscillator";
import { OneDofReference, rotate } from "./long-run/helpers";
import { pendulum, pendulumModel, pendulumReduced } from "./long-run/models";

describe("generalized-α scheme", () => {
  it("coefficients of ρ∞ (Chung–Hulbert)", () => {
    const one = new AlphaCoefficients().set(1);
    expect([one.alphaM, one.alphaF, one.gamma, one.beta]).toEqual([0.5, 0.5, 0.5, 0.25]);
    const zero = new AlphaCoefficients().set(0);
    expect([zero.alphaM, zero.alphaF, zero.gamma, zero.beta]).toEqual([-1, 0, 1.5, 1]);
    const c = new AlphaCoefficients().set(0.6);
    expect(c.alphaM).toBeCloseTo(0.2 / 1.6, 15);
    expect(c.alphaF).toBeCloseTo(0.6 / 1.6, 15);
    expect(c.gamma).toBeCloseTo(0.5 + 0.4 / 1.6, 15);
    expect(c.beta).toBeCloseTo(0.25 * (c.gamma + 0.5) ** 2, 15);
  });

  for (const rhoInfinity of [1, 0.6])
    it(`ρ∞ = ${rhoInfinity}: the oscillator follows the generalized-α recurrence`, () => {
      const k = 40;
      const m = 2;
      const dt = 0.05; // hω ≈ 0.22
      const model = springParticle({ stiffness: k, mass: m, x0: 0.3, v0: 0.8, dt, name: null });
      const sim = loadModel({
        ...model,
        // the bare recurrence: at hω ≈ 0.22 the default error control (3e-4 m) would halve
        // some of these steps (estimate ≈ (hω)²/12 · hωx ≈ 2.8e-4 m at x = 0.3 m)
        solver: {
          ...model.solver,
          integrator: "generalized-alpha",
          rhoInfinity,
          stepTolerance: null,
        },
      });
      const c = new AlphaCoefficients().set(rhoInfinity);
      const w2 = k / m;
      let s: AlphaState = { x: 0.3, v: 0.8, A: -w2 * 0.3, a: -w2 * 0.3 };
      for (let n = 0; n < 100; n++) {
        sim.step(1);
        s = generalizedAlphaStep(s, dt, w2, c);
        const b = sim.state().bodies[0];
        expect(b.position[0]).toBeCloseTo(s.x, 12);
        expect(b.velocity[0]).toBeCloseTo(s.v, 12);
      }
    });
});

const T = 2;
const h = 0.05;

function angle(sim: ReturnType<typeof loadModel>): number {
  const e = rotate(sim.state().bodies[0].orientation, [1, 0, 0]);
  return Math.atan2(e[0], -e[2]);
}

describe("the error control's measure (largestDisplacement)", () => {
  it("the largest √(δx² + δθᵀ I δθ / m) over bodies: a rotation counts by the radius of gyration", () => {
    const still = { velocity: [0, 0, 0], angularVelocity: [0, 0, 0] };
    // a 2 kg box 0.4 × 0.2 × 0.1 m turned 90° about z (body x along world y)
    const [a, b, c] = [0.4, 0.2, 0.1];
    const m = 2;
    const Ib = [(m * (b * b + c * c)) / 12, (m * (a * a + c * c)) / 12, (m * (a * a + b * b)) / 12];
    const box = {
      ...still,
      id: "box",
      kind: "rigid" as const,
      fixed: false,
      mass: m,
      inertia: [Ib[0], 0, 0, 0, Ib[1], 0, 0, 0, Ib[2]],
      position: [0, 0, 0],
      orientation: [Math.SQRT1_2, 0, 0, Math.SQRT1_2],
    };
    const particle = { ...box, id: "p", kind: "particle" as const, mass: 0.5 };
    const ground = { ...box, id: "g", fixed: true };
    const sys = new BodySystem([ground, box, particle]);
    const u = new Float64Array(sys.numDofs);
    const d = sys.dofOffset[1];
    const e = sys.dofOffset[2];
    u.set([1e-3, -2e-3, 0, 0.01, 0.02, -0.03], d);
    // world x is the body's −y, world y its x
    const boxOnly = Math.sqrt(
      5e-6 + (Ib[1] * 0.01 ** 2 + Ib[0] * 0.02 ** 2 + Ib[2] * 0.03 ** 2) / m,
    );
    expect(largestDisplacement(sys, u)).toBeCloseTo(boxOnly, 15);
    u.set([0, 3e-3, 4e-3], e);
    expect(largestDisplacement(sys, u)).toBeCloseTo(5e-3, 15);
  });
});

describe("generalized-α with stepTolerance", () => {
  const { accel } = pendulumReduced();
  const ref = new OneDofReference(accel, pendulum.theta0, 0, T, 200_000);
  ref.step();

  it("at h = 50 ms the angle at 2 s is ten times closer with the control (1e-6 m per step)", () => {
    const plain = loadModel(pendulumModel({ integrator: "generalized-alpha", dt: h }));
    const controlled = loadModel(
      pendulumModel({ integrator: "generalized-alpha", dt: h, stepTolerance: 1e-6 }),
    );
    plain.step(Math.round(T / h));
    controlled.step(Math.round(T / h));
    expect(controlled.time).toBeCloseTo(T, 12);
    expect(controlled.stepCount).toBe(Math.round(T / h));
    const e0 = Math.abs(angle(plain) - ref.theta);
    const e1 = Math.abs(angle(controlled) - ref.theta);
    expect(e0).toBeGreaterThan(1e-3);
    expect(e1).toBeLessThan(e0 / 10);
  });

  it("a stiff hinged rod at h ω = 0.5, θ0 = 1e-3 rad: within the accepted sub-steps' sum of tolerances of θ0 sin ω t", () => {
    // a 1 m, 1 kg rod hung from one end, started at θ = 0 with θ' = θ0 ω: small oscillation
    // θ0 sin ω t, ω² = m g d / I_p (d = ½ m, I_p = m/12 + m d² = ⅓ kg·m², the linearization's
    // relative error θ0²/16 in ω); g set for ω = 100 /s at h = 5 ms. A rotation δθ about the
    // pivot moves the rod's material by √(I_p/m) δθ (largestDisplacement), so θ0 is 5.8e-4 m.
    const step = 0.005;
    const omega = 100;
    const theta0 = 1e-3;
    const rod = (stepTolerance: number | null) =>
      stiffHingedRod(omega, theta0, { integrator: "generalized-alpha", dt: step, stepTolerance });
    const { gyration } = rod(null);
    // ten periods (126 steps): the largest error of the material against the closed form,
    // and the sum of the tolerances of the sub-steps taken (each one's local error within
    // it; the oscillator neither damps nor amplifies an error, it only turns it)
    const run = (stepTolerance: number | null) => {
      const sim = loadModel(rod(stepTolerance).model);
      let worst = 0;
      let substeps = 0;
      for (let n = 1; n <= 126; n++) {
        sim.step(1);
        const { solver, joints } = sim.state();
        expect(solver.stepToleranceMet).toBe(true);
        substeps += solver.substeps;
        const theta = joints[0].coordinates[0];
        worst = Math.max(worst, gyration * Math.abs(theta - theta0 * Math.sin(omega * n * step)));
      }
      return { worst, substeps };
    };
    const tol = 1e-7;
    const controlled = run(tol);
    const plain = run(null);
    // measured 1.5e-5 m after 475 sub-steps (4.75e-5 m; the first step, which has no
    // estimate, whole: its phase error 6e-6 m); without the control 3.9e-4 m, the phase
    // error (hω)³/12 = 0.010 rad a step
    expect(controlled.worst).toBeLessThan(controlled.substeps * tol);
    expect(plain.worst).toBeGreaterThan(5 * controlled.substeps * tol);
    // (hω)³/12 θ0 √(I_p/m) = 6e-6 m a whole step at the fastest: halved twice there
    expect(controlled.substeps).toBeGreaterThan(2 * 126);
  });

  it("a snapshot mid-run continues bit-identically", () => {
    const model = pendulumModel({ integrator: "generalized-alpha", dt: h, stepTolerance: 1e-6 });
    const a = loadModel(model);
    const b = loadModel(model);
    a.step(40);
    b.step(17);
    const c = loadSnapshot(JSON.parse(JSON.stringify(b.snapshot())));
    c.step(23);
    expect(c.stateHash()).toBe(a.stateHash());
  });
});

describe("the error control's solver figures (substeps, stepError, stepToleranceMet)", () => {
  // the oscillator of the recurrence test above: every step's estimate is known in closed
  // form, h²/12 |ü_{n+1} − ü_n| = h²/12 ω² |x_{n+1} − x_n| of the trapezoidal recurrence
  const k = 40;
  const m = 2;
  const dt = 0.05;
  const w2 = k / m;
  const oscillator = (stepTolerance: number) => {
    const model = springParticle({ stiffness: k, mass: m, x0: 0.3, v0: 0.8, dt, name: null });
    return loadModel({
      ...model,
      solver: { ...model.solver, integrator: "generalized-alpha", stepTolerance },
    });
  };
  /** The estimates of the first n whole steps by the recurrence (0 for the first). */
  const estimates = (n: number): number[] => {
    const c = new AlphaCoefficients().set(1);
    let s: AlphaState = { x: 0.3, v: 0.8, A: -w2 * 0.3, a: -w2 * 0.3 };
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const next = generalizedAlphaStep(s, dt, w2, c);
      out.push(i === 0 ? 0 : ((dt * dt) / 12) * w2 * Math.abs(next.x - s.x));
      s = next;
    }
    return out;
  };

  it("a tolerance no step exceeds: one sub-step, stepError the recurrence's estimate", () => {
    const sim = oscillator(1);
    const expected = estimates(60);
    for (const e of expected) {
      sim.step(1);
      const { solver } = sim.state();
      expect(solver.substeps).toBe(1);
      expect(solver.stepToleranceMet).toBe(true);
      expect(solver.stepError).toBeCloseTo(e, 13);
    }
    // hω ≈ 0.22, 0.3 m: the estimates reach ~2.8e-4 m (the comment of the test above)
    expect(Math.max(...expected)).toBeGreaterThan(2e-4);
  });

  it("a tolerance some steps exceed: those are halved, and report their sub-steps' estimates within it", () => {
    const tol = 1.5e-4;
    const sim = oscillator(tol);
    let halved = 0;
    for (let i = 0; i < 60; i++) {
      sim.step(1);
      const { solver } = sim.state();
      expect(solver.stepToleranceMet).toBe(true);
      expect(solver.stepError).toBeLessThanOrEqual(tol);
      if (solver.substeps > 1) halved++;
    }
    expect(halved).toBeGreaterThan(5);
  });

  it("a tolerance four halvings cannot meet: 16 sub-steps, stepToleranceMet false, the run goes on", () => {
    const tol = 1e-12;
    const sim = oscillator(tol);
    sim.step(1); // no estimate yet at the first step
    expect(sim.state().solver.stepToleranceMet).toBe(true);
    for (let i = 0; i < 5; i++) {
      sim.step(1);
      const { solver } = sim.state();
      expect(solver.substeps).toBe(16);
      expect(solver.stepToleranceMet).toBe(false);
      // a sub-step of h/16 still errs by about (1/16)³ of a whole step's estimate
      expect(solver.stepError).toBeGreaterThan(tol);
    }
    expect(sim.time).toBeCloseTo(6 * dt, 12);
    // the figures travel in snapshots
    const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
    expect(copy.state().solver).toEqual(sim.state().solver);
  });
});

describe("generalized-α's default error control", () => {
  it("3e-4 m with ρ∞ = 1, off with ρ∞ < 1 or null, a set value as set", () => {
    expect(DEFAULT_STEP_TOLERANCE).toBe(3e-4);
    expect(defaultStepTolerance(undefined, 1)).toBe(3e-4);
    expect(defaultStepTolerance(undefined, 0.9)).toBeNull();
    expect(defaultStepTolerance(null, 1)).toBeNull();
    expect(defaultStepTolerance(1e-3, 0.5)).toBe(1e-3);
  });

  it("3e-4 m per metre of the model's body length below 1 m; a set value stays absolute", () => {
    expect(defaultStepTolerance(undefined, 1, 0.05)).toBeCloseTo(1.5e-5, 18);
    expect(defaultStepTolerance(undefined, 1, 0.2)).toBeCloseTo(6e-5, 18);
    expect(defaultStepTolerance(undefined, 1, 3)).toBe(3e-4);
    expect(defaultStepTolerance(undefined, 0.9, 0.05)).toBeNull();
    expect(defaultStepTolerance(1e-3, 1, 0.05)).toBe(1e-3);
    expect(defaultStepTolerance(null, 1, 0.05)).toBeNull();
  });

  it("the body length: the mass-weighted mean of √(6 tr I/m) (a box's diagonal, a rod's length) or twice the joints' reach", () => {
    const still = { velocity: [0, 0, 0], angularVelocity: [0, 0, 0], position: [0, 0, 0] };
    const body = (id: string, m: number, d: number[]) => ({
      ...still,
      id,
      kind: "rigid" as const,
      fixed: false,
      mass: m,
      // a box of sides d (kg·m²): m (d_j² + d_k²)/12 about axis i
      inertia: [
        (m * (d[1] ** 2 + d[2] ** 2)) / 12,
        0,
        0,
        0,
        (m * (d[0] ** 2 + d[2] ** 2)) / 12,
        0,
        0,
        0,
        (m * (d[0] ** 2 + d[1] ** 2)) / 12,
      ],
      orientation: [Math.cos(0.3), Math.sin(0.3), 0, 0],
    });
    const box = body("box", 2, [0.4, 0.2, 0.1]);
    // a thin rod 0.05 m long (no inertia about its axis)
    const rod = body("rod", 0.5, [0, 0, 0.05]);
    const particle = { ...box, id: "p", kind: "particle" as const, mass: 7 };
    const ground = { ...box, id: "g", fixed: true, mass: 100 };
    const diagonal = Math.sqrt(0.4 ** 2 + 0.2 ** 2 + 0.1 ** 2);
    const none = new Float64Array(4);
    const inf = Number.POSITIVE_INFINITY;
    const lengths = (
      bodies: ConstructorParameters<typeof BodySystem>[0],
      reach: Float64Array,
      links: [number, number][],
    ) => [...bodyLengths(new BodySystem(bodies), reach, links)];
    const within = (got: number[], want: number[]) => {
      for (const [b, l] of got.entries()) expect(l, `body ${b}`).toBeCloseTo(want[b], 14);
    };
    // box, rod and particle jointed (box–rod, rod–particle): one group, the particle not
    // counted but given the group's length; the ground (no dofs) none (NaN)
    const joined = (2 * diagonal + 0.5 * 0.05) / 2.5;
    const all = [ground, box, rod, particle];
    expect(
      lengths(all, none, [
        [1, 2],
        [2, 3],
      ])[0],
    ).toBeNaN();
    within(
      lengths(all, none, [
        [1, 2],
        [2, 3],
      ]).slice(1),
      [joined, joined, joined],
    );
    within(lengths([ground, box, particle], none, [[1, 2]]).slice(1), [diagonal, diagonal]);
    // the rod hinged 0.3 m from its centre: a 0.6 m lever; the box's 0.1 m anchor is inside it
    const reach = Float64Array.of(5, 0.1, 0.3, 9);
    within(
      lengths(all, reach, [
        [1, 2],
        [2, 3],
      ]).slice(1),
      Array(3).fill((2 * diagonal + 0.5 * 0.6) / 2.5),
    );
    // each hinged to the ground (a fixed body does not join them), the particle free: three
    // groups, each its own length
    within(
      lengths(all, reach, [
        [0, 1],
        [0, 2],
      ]).slice(1),
      [diagonal, 0.6, inf],
    );
    within(lengths(all, none, []).slice(1), [diagonal, 0.05, inf]);
    expect(lengths([ground, particle], none, [[0, 1]])).toEqual([Number.NaN, inf]);
  });

  it("per jointed group: the tightest group's tolerance, the others' estimates weighted down to theirs", () => {
    const diagonal = 0.46;
    // a 5 cm chain (1.5e-5 m), a box (1.38e-4 m), a body without a length (3e-4 m), a 3 m arm (3e-4 m)
    const lengths = Float64Array.of(0.05, diagonal, Number.POSITIVE_INFINITY, 3);
    const { stepTolerance, errorWeights } = stepControl(undefined, 1, lengths);
    expect(stepTolerance).toBeCloseTo(1.5e-5, 18);
    const weights = [...(errorWeights as Float64Array)];
    const want = [1, 1.5e-5 / (3e-4 * diagonal), 0.05, 0.05];
    for (const [b, w] of weights.entries()) expect(w, `body ${b}`).toBeCloseTo(want[b], 14);
    // one group (all alike, a fixed body's NaN apart, lengths alike but for rounding): the uniform default, no weights
    expect(stepControl(undefined, 1, Float64Array.of(Number.NaN, 0.2, 0.2 * (1 + 1e-12)))).toEqual({
      stepTolerance: defaultStepTolerance(undefined, 1, 0.2),
      errorWeights: null,
    });
    // set, or off: the same for every body
    expect(stepControl(1e-3, 1, lengths)).toEqual({ stepTolerance: 1e-3, errorWeights: null });
    expect(stepControl(null, 1, lengths)).toEqual({ stepTolerance: null, errorWeights: null });
    expect(stepControl(undefined, 0.9, lengths)).toEqual({
      stepTolerance: null,
      errorWeights: null,
    });
  });

  // the chain's energy scale m g L: total mass 1 kg, total length 1 m
  const scale = 1 * 9.81 * 1;
  function run(stepTolerance?: null): { steps: number; highest: number; lowest: number } {
    const scene = chainScene(10);
    const sim = loadModel({
      ...toMoreauModel(scene),
      solver: {
        integrator: "generalized-alpha",
        dt: scene.h,
        ...(stepTolerance === null ? { stepTolerance } : {}),
      },
    });
    const e0 = sim.state().energy.total as number;
    let highest = Number.NEGATIVE_INFINITY;
    let lowest = Number.POSITIVE_INFINITY;
    let steps = 0;
    try {
      for (; steps < 2000; steps++) {
        sim.step(1);
        const e = ((sim.state().energy.total as number) - e0) / scale;
        highest = Math.max(highest, e);
        lowest = Math.min(lowest, e);
      }
    } catch {
      // the run ended diverged: `steps` says where
    }
    return { steps, highest, lowest };
  }

  it("the whipping 10-link chain at h = 1/240 s: 2000 steps, the energy within [−0.04, 0.02] m g L of its start", () => {
    const { steps, highest, lowest } = run();
    expect(steps).toBe(2000);
    // measured +0.0091 and −0.021 (with g × (1 + 1e-3 k), k = 1..3: to +0.0008, −0.028);
    // the former estimate (h²/12)(D − D_prev), a backward difference, never rose but lost
    // 0.051 (k = 1..3: 0.057, 0.058, 0.10), its halvings later entering the whip than
    // leaving it
    expect(highest).toBeLessThan(0.02);
    expect(lowest).toBeGreaterThan(-0.04);
  });

  it("without it (stepTolerance: null) the same chain gains energy", () => {
    const { highest } = run(null);
    expect(highest).toBeGreaterThan(0.01);
  });

  it("a snapshot taken while the sub-step controller holds half steps continues bit-identically", () => {
    const scene = chainScene(10);
    const model = {
      ...toMoreauModel(scene),
      solver: { integrator: "generalized-alpha", dt: scene.h },
    };
    const a = loadModel(model);
    let snapshot: ReturnType<typeof a.snapshot> | undefined;
    for (let k = 0; k < 2000 && snapshot === undefined; k++) {
      a.step(1);
      const s = a.snapshot();
      if ((s.memory.integrator.substeps?.depth ?? 0) > 0) snapshot = s;
    }
    expect(snapshot).toBeDefined();
    const b = loadSnapshot(JSON.parse(JSON.stringify(snapshot)));
    a.step(40);
    b.step(40);
    expect(b.stateHash()).toBe(a.stateHash());
  });
});

describe("generalized-α's first step from a new memory: Newton starts from the consistent multipliers", () => {
  // A torque τ = 1 N·m on a point mass (2 kg, 1e-12 kg·m²) 0.5 m from a hinge: the free
  // acceleration M⁻¹ f turns it at 1e12 rad/s², the joints allow τ/(m d²) = 2 rad/s². The
  // first step started Newton with λ̃ = 0, its first iterate turned the mass by ½ h² 1e12 =
  // 5e5 rad, and Newton converged on the far side of the pivot: the joint read 5.0e5 rad
  // after one step. Closed form: q = τ t²/(2 I_J), q̇ = τ t / I_J, I_J = 1e-12 + m d².
  const m = 2;
  const d = 0.5;
  const IJ = 1e-12 + m * d * d;
  const h = 1e-3;
  const pointMass = (effort: number) =>
    loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "bob", mass: m, position: [d, 0, 0], inertia: [1e-12, 1e-12, 1e-12] }],
      joints: [
        {
          id: "pin",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "bob", point: [-d, 0, 0] },
          axis: [0, 0, 1],
        },
      ],
      actuators: [{ id: "motor", joint: "pin", type: "torque", effort }],
      solver: { integrator: "generalized-alpha", dt: h },
    });

  it("a torque on a hinged point mass: q = τ t²/(2 m d²) from the first step on, the mass on its side of the pivot", () => {
    const sim = pointMass(1);
    for (let n = 1; n <= 100; n++) {
      sim.step(1);
      const t = n * h;
      expect(Math.abs(sim.state().joints[0].coordinates[0] - (t * t) / (2 * IJ))).toBeLessThan(
        1e-10,
      );
    }
    expect(sim.state().bodies[0].position[0]).toBeGreaterThan(0.49);
    // (7e-8 rad/s off: the velocity projection's conditioning at a mass 2e12 times the moment)
    expect(sim.state().joints[0].rates[0]).toBeCloseTo(0.1 / IJ, 6);
  });

  it("the same after an input sets the torque mid-run (a new memory there too)", () => {
    const sim = pointMass(0);
    sim.step(10);
    sim.schedule([{ type: "actuator", id: "motor", value: 1 }]);
    sim.step(50);
    const t = 50 * h;
    expect(Math.abs(sim.state().joints[0].coordinates[0] - (t * t) / (2 * IJ))).toBeLessThan(1e-10);
  });
});
