/**
 * The step statistics of integrator.ts: a step not yet taken counts nothing (one
 * sub-step, no error) and is converged; resetStepStats brings any counts back to exactly that.
 */
import { describe, expect, it } from "vitest";
import { emptyStepStats, resetStepStats } from "../../../src/engine/integrators/integrator";

describe("step stats", () => {
  it("empty: zero counts, converged; reset restores that in place", () => {
    const empty = {
      newtonIterations: 0,
      newtonConverged: true,
      linearIterations: 0,
      contactIterations: 0,
      contactResidual: 0,
      contactConverged: true,
      penetration: 0,
      projectionConverged: true,
      substeps: 1,
      stepError: 0,
      stepToleranceMet: true,
      jointToleranceMet: true,
      impacts: 0,
      impactsResolved: true,
    };
    expect(emptyStepStats()).toEqual(empty);
    expect(emptyStepStats()).not.toBe(emptyStepStats()); // a new record each time
    const stats = {
      newtonIterations: 7,
      newtonConverged: false,
      linearIterations: 40,
      contactIterations: 12,
      contactResidual: 3e-4,
      contactConverged: false,
      penetration: 1e-3,
      projectionConverged: false,
      substeps: 4,
      stepError: 5e-4,
      stepToleranceMet: false,
      jointToleranceMet: false,
      impacts: 3,
      impactsResolved: false,
    };
    resetStepStats(stats);
    expect(stats).toEqual(empty);
  });
});
