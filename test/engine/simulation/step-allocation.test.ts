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
 *
 * The last three models are the benchmark's scenes at the defaults (the probe's comment),
 * whose kernels passed doubles between calls: the contact sweep's per-contact updates and
 * residuals, quatNormalize's unread norm per body (S1-100: 5.0 KB a step, 1.75 KB since),
 * CG's scalars between its loop and the two-level preconditioner, once an iteration (the
 * stiff cloth at 32 × 32, S3-32-stiff: 5.5 KB a step over steps 300–750, 2.3 KB since).
 * Whether V8 inlines such a call depends on the order it compiles things in, so a model
 * measured after the others here can show little of it (S1-100 measured 1.8 KB a step in
 * this process before those fixes, 3.4 KB or 1.8 KB alone): the kernels now pass vectors
 * and scalars through typed arrays, which allocates nothing either way.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runBundledProbe } from "../../support/bundled-probe";

/** Bytes a step at most (see the file comment). */
const LIMIT = 4096;

interface Measure {
  bodies: number;
  bytesPerStep: number;
  newtonPerStep: number;
}

describe("stepping allocates nothing per body once warm", () => {
  it("a sphere pile (moreau-jean), the whip (articulated), the cloth (newmark, sparse-ldlt), a spring chain (dense LU), and S1-100, the stiff cloth and S2-100 at the defaults", async () => {
    const report = await runBundledProbe<Record<string, Measure>>(
      join(import.meta.dirname, "step-allocation-probe.ts"),
    );
    expect(Object.keys(report)).toEqual([
      "pile",
      "whip",
      "cloth",
      "chain",
      "S1-100 defaults",
      "stiff cloth 16 defaults",
      "S2-100 defaults",
    ]);
    for (const { bodies, bytesPerStep } of Object.values(report)) {
      expect(bodies).toBeGreaterThanOrEqual(20);
      expect(bytesPerStep).toBeLessThan(LIMIT);
    }
    // the stiff regime: Newton iterates (with its line search), not the linearized step
    expect(report["stiff cloth 16 defaults"].newtonPerStep).toBeGreaterThan(1.5);
  }, 120_000);
});
