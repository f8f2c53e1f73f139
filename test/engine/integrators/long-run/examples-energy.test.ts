/**
 * examples/double-pendulum.json keeps its energy for 100 s at its own solver settings
 * (loaded as it is; energy.ts runs it). Its twin for examples/four-bar.json is
 * examples-energy-four-bar.test.ts: one model per file, so that each file stays well
 * under 30 s on a loaded machine at the examples' h = 0.5 ms (2e5 steps each).
 *
 * Energy scale: the largest kinetic energy reached over the run (energy.ts). Released at
 * rest with both links horizontal, the double pendulum reaches nearly the most it can,
 * V_0 − V_min = m g (l1/2) + m g (l1 + l2/2) = 9.81 J, its m g L; that closed form is
 * asserted as a bound on the scale, so the scale cannot come out small by a wrong run.
 * Asserted: |E − E_0| ≤ 1e-4 of that scale at every sample (every 10 steps).
 */
import { describe, expect, it } from "vitest";
import { energyRun, example } from "./energy";
import { report } from "./helpers";
import { G } from "./models";

describe("examples/double-pendulum.json keeps its energy over 100 s", () => {
  it("|E − E0| ≤ 1e-4 of the largest kinetic energy, every 10 steps", () => {
    const json = example("double-pendulum");
    // conservative: nothing drives or damps it
    expect(json.motors ?? []).toEqual([]);
    expect(json.forces ?? []).toEqual([]);
    expect(json.contact).toBeUndefined();
    const r = energyRun(json);
    report("examples double-pendulum", { ...r, relative: r.drift / r.kineticMax });
    // two 1 kg links of 0.5 m released horizontal: at most 1·g·0.25 + 1·g·0.75 = 9.81 J
    const bound = 1 * G * 0.25 + 1 * G * 0.75;
    expect(r.kineticMax).toBeLessThanOrEqual(bound * (1 + 1e-4));
    expect(r.kineticMax).toBeGreaterThan(0.5 * bound);
    expect(r.drift / r.kineticMax).toBeLessThanOrEqual(1e-4);
  });
});
