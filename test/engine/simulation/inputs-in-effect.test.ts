/**
 * `actuator` and `load` inputs giving the values already in effect change nothing the
 * dynamics read, so the run goes on bit for bit as without them (simulation/inputs.ts
 * applyInput: "none"), as bodyState, jointState, gains and limits inputs of the values in
 * place do (input-balance.test.ts).
 *
 * A 1 kg, 1 m rod hinged about y at its end (I = m L²/3 = 1/3 kg·m² about the pin), no
 * gravity, limits [−1, 1] rad, a position servo k_p = 20 N·m/rad, k_d = 0.5 N·m·s/rad to
 * q* = 0.3 rad from rest (ω_n = 7.75 rad/s, ζ = 0.097: 12 periods in 10 s), and two loads:
 * "push", a constant world force (0.3, 0, 0.4) N at the free end x_p = (cos q, 0, −sin q)
 * (a potential, V = −f·x_p = 0.4 sin q − 0.3 cos q: its moment −∂V/∂q, −0.4 N·m at q = 0,
 * shifts the servo's rest by ≈ −0.02 rad), and "twist", a follower
 * torque (0, 0.1 sin 2π·0.5 t, 0) N·m in the rod's frame (about the pin's axis). At 1 s (step
 * 500) the servo's target goes to 0.25 rad and twist to a constant 0.05 N·m, real changes,
 * in both runs.
 * The redundant inputs: before 1 s the model's own values (the servo's constant target 0.3,
 * push's constant force, a reset of twist and of the servo's command while both are the
 * model's), after it the overrides in effect given again, and the State's
 * actuators[].command written back. Until 2026-12-08 each answered "forces": the step's
 * work re-taken and the integrators' carried forces restarted (articulated's energy.error
 * 2.2e-16 J off the run without them at the first), and push's own force given again took
 * its potential away into energy.error (0.19 J at 0.2 s).
 * A load input that does change push (a run-time load has no potential) books the change
 * of V as the input's work, as a spring limit's moved bound (until 2026-12-08 energy.error
 * took it, 0.17 J), and a reset takes the energy reference under the model's loads (until
 * then under the run-time one, potential −0.6 J where a fresh run reads −0.3 J).
 */
import { describe, expect, it } from "vitest";
import { Input, type InputIn } from "../../../schemas/input";
import { type ModelInput, SolverSettings } from "../../../schemas/model";
import { loadModel, type Simulation } from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const H = 2e-3;
const STEPS = 5000;
const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;
const PUSH: [number, number, number] = [0.3, 0, 0.4];

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));

function loadedRod(integrator: string): Simulation {
  const model = rodPendulum({
    mass: 1,
    length: 1,
    axis: [0, 1, 0],
    gravity: [0, 0, 0],
    limits: { lower: -1, upper: 1 },
    servo: { type: "position", target: 0.3, kp: 20, kd: 0.5 },
    solver: { integrator, dt: H },
  });
  return loadModel({
    ...model,
    forces: [
      { id: "push", type: "pointForce", at: { body: "rod", point: [0.5, 0, 0] }, force: PUSH },
      {
        id: "twist",
        type: "pointForce",
        at: { body: "rod" },
        torque: [0, { type: "sine", amplitude: 0.1, frequency: 0.5 }, 0],
        frame: "body",
      },
    ],
  } as ModelInput);
}

/** The real changes at 1 s, in every run. */
const CHANGES: [number, InputIn[]][] = [
  [
    500,
    [
      { type: "actuator", id: "servo", value: 0.25 },
      { type: "load", id: "twist", torque: [0, 0.05, 0] },
    ],
  ],
];

/**
 * Per step: q, q̇, energy.error, energy.dissipated, energy.total; `before(sim, i)` at each
 * boundary i before its step.
 */
function run(
  integrator: string,
  scheduled: [number, InputIn[]][],
  before?: (sim: Simulation, i: number) => void,
): Float64Array {
  const sim = loadedRod(integrator);
  for (const [step, list] of [...CHANGES, ...scheduled]) sim.schedule(inputs(list), step);
  const out = new Float64Array(5 * STEPS);
  for (let i = 0; i < STEPS; i++) {
    before?.(sim, i);
    sim.step(1);
    const s = sim.state();
    out.set(
      [
        s.joints[0].coordinates[0],
        s.joints[0].rates[0],
        s.energy.error as number,
        s.energy.dissipated as number,
        s.energy.total as number,
      ],
      5 * i,
    );
  }
  return out;
}

/** The first step (and figure) where two runs differ, or null. */
function firstDifference(a: Float64Array, b: Float64Array): string | null {
  const names = ["q", "q̇", "energy.error", "energy.dissipated", "energy.total"];
  for (let i = 0; i < a.length; i += 5) {
    const differ = names.flatMap((name, k) =>
      Object.is(a[i + k], b[i + k]) ? [] : [`${name} ${a[i + k]} (without) vs ${b[i + k]}`],
    );
    if (differ.length > 0) return `step ${i / 5 + 1}: ${differ.join(", ")}`;
  }
  return null;
}

describe("actuator and load inputs giving the values in effect", () => {
  it("the model's own values, the overrides in effect and the State's command written back: bit for bit the run without them (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const plain = run(integrator, []);
      // the servo settles about q = 0.25 − (0.4 cos q + 0.3 sin q)/20 + 0.05/20 ≈ 0.23 rad after 1 s
      const last = 5 * (STEPS - 1);
      expect(plain[last], integrator).toBeGreaterThan(0.2);
      expect(plain[last], integrator).toBeLessThan(0.3);
      const echoed = run(
        integrator,
        [
          [
            100,
            [
              { type: "actuator", id: "servo", value: null },
              { type: "actuator", id: "servo", value: 0.3 },
              { type: "load", id: "push", force: PUSH },
              { type: "load", id: "twist", reset: true },
            ],
          ],
          [
            1500,
            [
              { type: "actuator", id: "servo", value: 0.25 },
              { type: "load", id: "twist", torque: [0, 0.05, 0] },
              { type: "load", id: "push", force: PUSH },
            ],
          ],
        ],
        (sim, i) => {
          if (i !== 333 && i !== 3000) return;
          const { id, command } = sim.state().actuators[0];
          sim.schedule(inputs([{ type: "actuator", id, value: command }]));
        },
      );
      expect(firstDifference(plain, echoed), integrator).toBeNull();
    }
  });

  it("a load taking a model's constant world force's potential away, and a reset putting it back: booked as the input's work, energy.error the scheme's (every integrator)", () => {
    // push, V = −f·x_p = 0.4 sin q − 0.3 cos q (file comment), is set to (0.6, 0, 0.8) at
    // 2 s, then reset at 6 s: at each the potential goes from V to 0 and back, the change
    // (−V, then +V, |V| ≈ 0.17 J at q ≈ 0.24) the input's work: energy.dissipated −= it,
    // energy.error left the scheme's, within 10 times the run without these inputs' over the 10 s.
    for (const integrator of INTEGRATORS) {
      const plain = run(integrator, []);
      const pushed = run(integrator, [
        [1000, [{ type: "load", id: "push", force: [0.6, 0, 0.8] }]],
        [3000, [{ type: "load", id: "push", reset: true }]],
      ]);
      let worstPlain = 0;
      let worst = 0;
      let booked = 0;
      for (let i = 0; i < STEPS; i++) {
        worstPlain = Math.max(worstPlain, Math.abs(plain[5 * i + 2]));
        worst = Math.max(worst, Math.abs(pushed[5 * i + 2]));
        // the input's work at 2 s, −V: the dissipated's rise over the step that
        // reaches boundary 1000 (the State read there includes the inputs due at it)
        if (i === 999) booked = pushed[5 * i + 3] - pushed[5 * (i - 1) + 3];
      }
      // (the step's own, the servo's k_d q̇² h and the drive's, ≲ 1e-4 J, besides)
      const q = pushed[5 * 999];
      expect(booked, integrator).toBeCloseTo(0.4 * Math.sin(q) - 0.3 * Math.cos(q), 3);
      expect(worst, integrator).toBeLessThan(10 * worstPlain + 1e-9);
    }
  });

  it("a reset with a run-time load in effect: the reference taken under the model's load, energy.error the scheme's after it", () => {
    for (const integrator of INTEGRATORS) {
      const sim = loadedRod(integrator);
      sim.schedule(inputs([{ type: "load", id: "push", force: [0.6, 0, 0.8] }]));
      sim.step(500);
      sim.reset();
      const fresh = loadedRod(integrator);
      expect(sim.state().energy, integrator).toEqual(fresh.state().energy);
      sim.step(500);
      fresh.step(500);
      expect(sim.state().energy.error, integrator).toBe(fresh.state().energy.error);
    }
  });

  it("a time function's value at the boundary is not the command in effect: it holds from then on, a change", () => {
    // twist's sine at 0.5 s (step 250) is 0.1 sin(π/2) = 0.1 N·m, its rate 0 there: set as
    // a constant it then holds, while the model's falls back to 0 at 1 s
    const sim = loadedRod("newmark");
    sim.step(250);
    sim.schedule(inputs([{ type: "load", id: "twist", torque: [0, 0.1, 0] }]));
    const free = loadedRod("newmark");
    sim.step(400);
    free.step(650);
    expect(
      Math.abs(sim.state().joints[0].coordinates[0] - free.state().joints[0].coordinates[0]),
    ).toBeGreaterThan(1e-3);
  });
});
