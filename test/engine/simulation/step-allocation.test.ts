/**
 * Stepping allocates nothing per body: the hot loops work in place on typed arrays. What a
 * step still allocates is a fixed few hundred bytes to ~2 KB (heap numbers: doubles V8
 * boxes where it passes them between calls it does not inline, and the step's records),
 * whatever the number of bodies. The bound catches the per-body kind: a hot kernel whose
 * feedback one set-up call with a plain array made polymorphic boxed every entry it read
 * from then on (the collision detector's shape rotations: 18 KB a step for the pile below,
 * 22 KB for the whip), or Math.hypot in a per-joint loop (a heap number per argument), or a
 * dense factorization through ml-matrix (its Matrix of row arrays, a clone and the two
 * triangular factors at each call: 71 KB a step for the 60-unknown chain).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBundledProbe } from "../../support/bundled-probe";

/** Bytes a step at most (see the file comment). */
const LIMIT = 4096;

describe("stepping allocates nothing per body once warm", () => {
  it("a sphere pile (moreau-jean), the whip (articulated), the cloth (newmark, sparse-ldlt), a spring chain (dense LU)", async () => {
    const report = await runBundledProbe<Record<string, { bodies: number; bytesPerStep: number }>>(
      join(import.meta.dirname, "step-allocation-probe.ts"),
    );
    expect(Object.keys(report)).toEqual(["pile", "whip", "cloth", "chain"]);
    for (const { bodies, bytesPerStep } of Object.values(report)) {
      expect(bodies).toBeGreaterThanOrEqual(20);
      expect(bytesPerStep).toBeLessThan(LIMIT);
    }
  }, 120_000);
});
