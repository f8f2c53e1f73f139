/**
 * The sub-step controller (src/engine/integrators/substep-depth.ts), its rules written out:
 * most sub-steps at the start depth failing send the next step one level deeper (at most
 * MAX_HALVINGS − 1) for a wait that doubles with each such failure up to
 * SUBSTEP_RETRY_STEPS; a step at depth 0 resets the wait to 1; after the wait, one level
 * shallower when the accepted sub-steps' error estimates, × 2³ for a doubled sub-step, stay
 * within the tolerance. Only the sub-steps of the start depth count.
 */
import { describe, expect, it } from "vitest";
import { IntegratorMemory } from "../../../src/engine/integrators/integrator";
import { MAX_HALVINGS } from "../../../src/engine/integrators/step-halving";
import { SUBSTEP_RETRY_STEPS, SubstepDepth } from "../../../src/engine/integrators/substep-depth";

const h = 0.01;

/** One step: its sub-steps at the start depth d, `fail` of `n` failing, errors `error`. */
function step(c: SubstepDepth, n: number, fail: number, error: number): number {
  const d = c.begin(h);
  for (let k = 0; k < n; k++) c.record(h * 0.5 ** d, k >= fail, error);
  // a deeper sub-step (a failed one halved) does not count
  c.record(h * 0.5 ** (d + 1), false, 0);
  c.end();
  return d;
}

describe("SubstepDepth", () => {
  it("goes one level deeper when most sub-steps fail, never past MAX_HALVINGS − 1", () => {
    const memory = new IntegratorMemory(1);
    const c = new SubstepDepth(memory);
    expect(step(c, 1, 1, 0)).toBe(0);
    expect(memory.substepDepth).toBe(1);
    for (let k = 0; k < 10; k++) step(c, 2 ** memory.substepDepth, 2 ** memory.substepDepth, 0);
    expect(memory.substepDepth).toBe(MAX_HALVINGS - 1);
    // half failing is not most
    const half = new IntegratorMemory(1);
    const d = new SubstepDepth(half);
    half.substepDepth = 1;
    step(d, 2, 1, 0.01);
    expect(half.substepDepth).toBe(0);
  });

  it("waits substepBackoff steps, doubling to SUBSTEP_RETRY_STEPS, before trying one level shallower; 1 again after depth 0", () => {
    const memory = new IntegratorMemory(1);
    const c = new SubstepDepth(memory);
    const waits: number[] = [];
    for (let failures = 0; failures < 6; failures++) {
      // a failure at depth 0 or at the depth tried, then steps at the finer depth that
      // pass with small errors until it comes back up
      step(c, 2 ** memory.substepDepth, 2 ** memory.substepDepth, 0);
      let steps = 0;
      while (memory.substepDepth > 0 && steps < 100) {
        step(c, 2 ** memory.substepDepth, 0, 0.1);
        steps++;
      }
      waits.push(steps);
    }
    // from depth 1: the wait, then the step that moves up
    expect(waits).toEqual([1, 2, 4, 8, 8, 8].map((w) => Math.min(w, SUBSTEP_RETRY_STEPS)));
    // a step at depth 0 resets the backoff
    step(c, 1, 0, 0);
    expect(memory.substepBackoff).toBe(1);
  });

  it("stays deeper while the doubled sub-step's error would pass the tolerance (8 × error > 1)", () => {
    const memory = new IntegratorMemory(1);
    const c = new SubstepDepth(memory);
    step(c, 1, 1, 0);
    expect(memory.substepDepth).toBe(1);
    for (let k = 0; k < 20; k++) step(c, 2, 0, 0.2);
    expect(memory.substepDepth).toBe(1);
    step(c, 2, 0, 1 / 8);
    expect(memory.substepDepth).toBe(0);
  });

  it("starts at the floor its integrator asks (symplectic Euler's bound), counting the sub-steps there", () => {
    // before, begin ignored the floor: the sub-steps tried at the bound's depth 1 were not of
    // the controller's depth 0, none counted, and it never went deeper
    const memory = new IntegratorMemory(1);
    const c = new SubstepDepth(memory);
    const floored = (n: number, fail: number, error: number) => {
      const d = c.begin(h, 1);
      for (let k = 0; k < n; k++) c.record(h * 0.5 ** d, k >= fail, error);
      c.end();
      return d;
    };
    expect(floored(1, 1, 0)).toBe(1);
    expect(memory.substepDepth).toBe(2);
    expect(floored(4, 0, 0.01)).toBe(2);
    expect(memory.substepDepth).toBe(1);
    // at the floor, as at depth 0: the backoff reset, nothing shallower tried
    expect(floored(2, 0, 0)).toBe(1);
    expect(memory.substepBackoff).toBe(1);
    expect(memory.substepDepth).toBe(1);
  });
});
