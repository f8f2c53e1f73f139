/**
 * advanceWithHalving on a scripted step (a HalvingStep that records its calls): a step
 * that converges is taken once; one that fails is restored and redone as two halves,
 * recursively, covering [t, t + h] in order; Newton may give up early only where a halving
 * follows (halvingFollows), the deepest level (MAX_HALVINGS = 4, h/16) must accept; and
 * when even that fails the error names the scheme, the tolerance and the budget. With
 * firstDepth d the 2^d steps of h/2^d are tried first, each still halved, down to h/16.
 */
import { describe, expect, it } from "vitest";
import type { NewtonSettings } from "../../../src/engine/integrators/acceleration-step";
import {
  advanceWithHalving,
  type HalvingStep,
  MAX_HALVINGS,
} from "../../../src/engine/integrators/step-halving";

/** A step that converges when `accepts(t, h)`; records every try and restore. */
function scripted(accepts: (t: number, h: number) => boolean) {
  const log: string[] = [];
  const follows: boolean[] = [];
  const newton: NewtonSettings = { maxIterations: 8, tolerance: 1e-9 };
  const step: HalvingStep = {
    trySingle(t, h, last) {
      follows.push(newton.halvingFollows === true);
      log.push(`${t}+${h}${last ? "!" : ""}`);
      return accepts(t, h);
    },
    restoreStart() {
      log.push("restore");
    },
  };
  return { step, log, follows, newton };
}

describe("advanceWithHalving", () => {
  it("a converged step is taken once", () => {
    const { step, log, follows, newton } = scripted(() => true);
    advanceWithHalving(step, 1, 0.5, newton, "test");
    expect(log).toEqual(["1+0.5"]);
    expect(follows).toEqual([true]);
  });

  it("a failed step is redone in halves, in order, only where it fails", () => {
    // the full step and the first half fail; the quarters and the second half converge
    const { step, log } = scripted((t, h) => h <= 0.25 || t >= 0.5);
    advanceWithHalving(step, 0, 1, scripted(() => true).newton, "test");
    expect(log).toEqual(["0+1", "restore", "0+0.5", "restore", "0+0.25", "0.25+0.25", "0.5+0.5"]);
  });

  it(`at most ${MAX_HALVINGS} halvings: the deepest step must accept, then the run fails`, () => {
    expect(MAX_HALVINGS).toBe(4);
    const { step, log, follows, newton } = scripted((_t, h) => h < 1 / 16);
    expect(() => advanceWithHalving(step, 0, 1, newton, "newmark")).toThrow(
      "newmark: Newton did not converge to 1e-9 in 8 iterations, even with the step halved 4 times (h = 0.0625 s)",
    );
    // tries at h = 1, 1/2, 1/4, 1/8, 1/16 (the last one flagged as last, no halving follows)
    expect(log.filter((e) => e !== "restore")).toEqual([
      "0+1",
      "0+0.5",
      "0+0.25",
      "0+0.125",
      "0+0.0625!",
    ]);
    expect(follows).toEqual([true, true, true, true, false]);
  });

  it("firstDepth 2: four quarter steps in order, each halved where it fails, the halvings counted from h", () => {
    // in the second quarter every step longer than 1/16 fails; everything else converges
    const { step, log, follows, newton } = scripted(
      (t, h) => !(t >= 0.25 && t < 0.5 && h > 1 / 16),
    );
    advanceWithHalving(step, 0, 1, newton, "test", 0, 2);
    expect(log).toEqual([
      "0+0.25",
      "0.25+0.25",
      "restore",
      "0.25+0.125",
      "restore",
      "0.25+0.0625!",
      "0.3125+0.0625!",
      "0.375+0.125",
      "restore",
      "0.375+0.0625!",
      "0.4375+0.0625!",
      "0.5+0.25",
      "0.75+0.25",
    ]);
    expect(follows).toEqual([true, true, true, false, false, true, false, false, true, true]);
  });
});
