/**
 * The energy run of an example model (examples-energy*.test.ts): the example file as it is,
 * stepped for 100 s at its own solver settings, the total energy sampled every 10 steps.
 *
 * The examples checked are conservative: rigid links, frictionless revolute and spherical
 * joints, gravity, no damping, no motor, no contact (the tests check that the files still
 * say so). So the total energy, state().energy.total, is constant in the exact motion.
 *
 * Energy scale. The total's value depends on where gravity's potential is zero, so the
 * error is taken relative to the energy the mechanism moves around: the largest kinetic
 * energy it reaches over the run (sampled every 10 steps).
 */
import { readFileSync } from "node:fs";
import { loadModel } from "../../../../src/engine/index";

export interface ExampleModel {
  solver: { integrator?: string; dt?: number };
  forces?: unknown[];
  motors?: unknown[];
  contact?: unknown;
}

export function example(name: string): ExampleModel {
  return JSON.parse(
    readFileSync(new URL(`../../../../examples/${name}.json`, import.meta.url), "utf8"),
  ) as ExampleModel;
}

const DURATION = 100;
const SAMPLE_EVERY = 10;

/** Runs the model 100 s; the largest |E − E0| over the samples, and the energy scale. */
export function energyRun(json: ExampleModel) {
  const sim = loadModel(json);
  const h = sim.solver.dt;
  const first = sim.state();
  const E0 = first.energy.total;
  let kineticMax = first.energy.kinetic;
  let drift = 0; // max |E − E0| (J)
  let at = 0; // time (s) of that sample
  const samples = Math.round(DURATION / h / SAMPLE_EVERY);
  for (let k = 1; k <= samples; k++) {
    sim.step(SAMPLE_EVERY);
    const e = sim.state().energy;
    kineticMax = Math.max(kineticMax, e.kinetic);
    const d = Math.abs(e.total - E0);
    if (d > drift) {
      drift = d;
      at = k * SAMPLE_EVERY * h;
    }
  }
  return {
    integrator: sim.solver.integrator,
    h,
    kineticMax,
    drift,
    at,
    final: Math.abs(sim.state().energy.total - E0),
  };
}
