/**
 * Joint limits at the model's start and with mimic joints (Simulation.ontoBounds,
 * JointLimitProblem.project's solveSemidefinite).
 *
 * A 1 kg, 1 m rod hinged at its end (I = m L²/3) started δ = 0.07 rad past its lower bound
 * without gravity: a rigid bound (the default law) moves it back onto the bound at the
 * start, positions only, so it rests there with no kinetic energy ever; before, the
 * default compliant law released its ½ k δ² (k = I (2π/0.02 s)², 80 J) and threw the rod
 * at 6.3 rad/s across its range onto the other bound. A spring the model gives (k, no
 * damping) releases ½ k δ²: the rod leaves the bound at ω = δ √(k/I), its total energy
 * that of the spring's at the start, kept.
 *
 * Two sliders falling along z under gravity, the second mimicking the first (q₂ = q₁),
 * both with the upper bound 0.04 m: they land on their bounds together (dependent rows of
 * the limits' projection) and rest on them, the limits' efforts together the weight. The
 * singular projection failed and no bound was projected: they rested past the bound by
 * the landing step's overshoot (0.875 mm at 1/60 s, 1.94 mm at 5 ms).
 */
import { describe, expect, it } from "vitest";
import { type ModelInput, SolverSettings } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const M = 1;
const L = 1;
const I = (M * L * L) / 3;
const DELTA = 0.07;

function rodPastItsBound(integrator: string, dt: number, stiffness?: number) {
  return loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      // the model pose (q = 0) δ below the lower bound
      limits: {
        lower: DELTA,
        upper: 1,
        ...(stiffness === undefined ? {} : { stiffness, damping: 0 }),
      },
      solver: { integrator, dt },
    }),
  );
}

/** Every integrator, as the solver settings name them. */
const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;

/** 600 steps: the joint's largest rate (rad/s) and the largest kinetic energy (J) met. */
function stepRecording(sim: ReturnType<typeof loadModel>) {
  let fastest = 0;
  let kinetic = 0;
  for (let i = 0; i < 600; i++) {
    sim.step(1);
    const s = sim.state();
    fastest = Math.max(fastest, Math.abs(s.joints[0].rates[0]));
    kinetic = Math.max(kinetic, s.energy.kinetic);
  }
  return { fastest, kinetic };
}

describe("a joint started past its bound", () => {
  it("is moved onto a rigid bound without gaining kinetic energy, and rests there (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const sim = rodPastItsBound(integrator, 0.005);
      const { fastest, kinetic } = stepRecording(sim);
      const s = sim.state();
      // before: 6.3 rad/s (newmark, generalized-alpha), 6.0 (articulated)
      expect(fastest, integrator).toBeLessThan(1e-9);
      expect(kinetic, integrator).toBeLessThan(1e-15);
      expect(s.joints[0].coordinates[0], integrator).toBeCloseTo(DELTA, 6);
      expect(s.joints[0].limitEffort, integrator).toBe(0);
      expect(Math.abs(s.energy.error), integrator).toBeLessThan(1e-12);
    }
  });

  it("is released by a spring the model gives: ½ I ω² = ½ k δ², the energy kept", () => {
    const k = 10;
    const spring = 0.5 * k * DELTA * DELTA;
    // ω = δ √(k/I) as it leaves the bound
    const omega = DELTA * Math.sqrt(k / I);
    for (const integrator of ["newmark", "generalized-alpha", "articulated"]) {
      const sim = rodPastItsBound(integrator, 0.001, k);
      expect(sim.state().energy.total, integrator).toBeCloseTo(spring, 12);
      let fastest = 0;
      let worst = 0;
      // 10 s: it crosses its 0.93 rad range in 2.4 s and bounces off the far bound's spring
      for (let i = 0; i < 10000; i++) {
        sim.step(1);
        const s = sim.state();
        fastest = Math.max(fastest, Math.abs(s.joints[0].rates[0]));
        worst = Math.max(worst, Math.abs(s.energy.error));
        expect(s.energy.total + s.energy.dissipated - spring).toBeCloseTo(s.energy.error, 12);
      }
      expect(Math.abs(fastest / omega - 1), integrator).toBeLessThan(1e-4);
      expect(worst / spring, integrator).toBeLessThan(1e-4);
    }
  });
});

describe("a joint teleported past its bound (a bodyState input)", () => {
  // the rod, resting on its lower bound δ after the start, written back to the model pose
  // (q = 0, δ past the bound) at rest: as at a start, onto the bound at once and resting
  // there (before: q = 0 read in the State after the input under every integrator, and the
  // compliant law's default stiffness, k = I_c (2π/0.02 s)², released its ½ k δ² = 20.15 J:
  // the rod thrown off at 6.27 rad/s under newmark, 6.24 generalized-alpha, 6.05 articulated)
  const teleport = (integrator: string, stiffness?: number) => {
    const sim = rodPastItsBound(integrator, 0.005, stiffness);
    sim.step(20);
    sim.schedule([
      {
        type: "bodyState",
        id: "rod",
        position: [L / 2, 0, 0],
        orientation: [1, 0, 0, 0],
        velocity: [0, 0, 0],
        angularVelocity: [0, 0, 0],
      },
    ]);
    return sim;
  };

  it("is set on a rigid bound at once, and rests there without kinetic energy (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const sim = teleport(integrator);
      expect(sim.state().joints[0].coordinates[0], integrator).toBeCloseTo(DELTA, 6);
      const { fastest, kinetic } = stepRecording(sim);
      const s = sim.state();
      expect(fastest, integrator).toBeLessThan(1e-9);
      expect(kinetic, integrator).toBeLessThan(1e-15);
      expect(s.joints[0].coordinates[0], integrator).toBeCloseTo(DELTA, 6);
      expect(Math.abs(s.energy.error), integrator).toBeLessThan(1e-12);
    }
  });

  it("is left where it is by a spring the model gives, which releases ½ k δ²", () => {
    const k = 10;
    const spring = 0.5 * k * DELTA * DELTA;
    for (const integrator of ["newmark", "generalized-alpha", "articulated"]) {
      const sim = teleport(integrator, k);
      const s = sim.state();
      expect(s.joints[0].coordinates[0], integrator).toBeCloseTo(0, 12);
      expect(s.energy.total, integrator).toBeCloseTo(spring, 12);
    }
  });
});

describe("a bound touching without load (moreau-jean, backward-euler, symplectic-euler)", () => {
  it("reports no effort: the gravity along the hinge, the rod started past its bound rests on it", () => {
    for (const integrator of ["moreau-jean", "backward-euler", "symplectic-euler"]) {
      const sim = loadModel(
        rodPendulum({
          mass: M,
          length: L,
          // the rod turns in the horizontal plane: the gravity has no moment about the hinge
          axis: [0, 0, 1],
          gravity: [0, 0, -9.81],
          limits: { lower: DELTA, upper: 1 },
          solver: { integrator, dt: 0.005 },
        }),
      );
      for (let i = 0; i < 400; i++) {
        sim.step(1);
        const s = sim.state();
        // before: 3.5e-63 N·m under moreau-jean (the LCP's round-off reported)
        if (i > 10) expect(s.joints[0].limitEffort, integrator).toBe(0);
      }
      const s = sim.state();
      expect(s.joints[0].coordinates[0], integrator).toBeCloseTo(DELTA, 9);
      expect(Math.abs(s.joints[0].rates[0]), integrator).toBeLessThan(1e-12);
    }
  });
});

describe("limits on joints a mimic couples (moreau-jean)", () => {
  it("two sliders, the second mimicking the first, rest on their upper bounds with the weight's effort", () => {
    const G = 9.81;
    const m1 = 0.3;
    const m2 = 0.2;
    const UPPER = 0.04;
    const slider = (id: string, body: string, x: number) => ({
      id,
      type: "prismatic" as const,
      a: { body: "ground", point: [x, 0, 0] as [number, number, number] },
      b: { body },
      // q grows downwards, with the fall
      axis: [0, 0, -1] as [number, number, number],
      limits: { lower: 0, upper: UPPER },
    });
    for (const dt of [1 / 60, 0.005]) {
      const sim = loadModel({
        gravity: [0, 0, -G],
        bodies: [
          { id: "f1", mass: m1, inertia: [1e-3, 1e-3, 1e-3], position: [0, 0, 0] },
          { id: "f2", mass: m2, inertia: [1e-3, 1e-3, 1e-3], position: [0.1, 0, 0] },
        ],
        joints: [slider("s1", "f1", 0), { ...slider("s2", "f2", 0.1), mimic: { joint: "s1" } }],
        solver: { integrator: "moreau-jean", dt },
      } as ModelInput);
      sim.step(Math.round(2 / dt));
      const s = sim.state();
      const [q1, q2] = [s.joints[0].coordinates[0], s.joints[1].coordinates[0]];
      // before: 0.875 mm (1/60 s) and 1.94 mm (5 ms) past the bound
      expect(Math.abs(q1 - UPPER), `h = ${dt}`).toBeLessThan(1e-7);
      expect(Math.abs(q2 - UPPER), `h = ${dt}`).toBeLessThan(1e-7);
      expect(Math.abs(s.joints[0].rates[0]), `h = ${dt}`).toBeLessThan(1e-9);
      // the limits hold the weight of both (split between them as the LCP's vertex gives)
      const held = -(s.joints[0].limitEffort + s.joints[1].limitEffort);
      expect(held / ((m1 + m2) * G) - 1, `h = ${dt}`).toBeCloseTo(0, 9);
    }
  });
});
