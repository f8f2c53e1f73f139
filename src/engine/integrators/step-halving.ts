/**
 * A step whose Newton iterations do not converge is never accepted: it is redone as two
 * steps of half the size, recursively up to MAX_HALVINGS times, and then fails (the
 * simulation ends `diverged` with its last good state). Halving brings a hard step (a
 * whipping stiff cloth, a contact switching inside the step) back into Newton's reach, and
 * the result is still a solution of the scheme (with the smaller h) rather than an
 * unconverged iterate. Shared by every implicit integrator.
 */
import type { NewtonSettings } from "./acceleration-step";
import type { SubstepObserver } from "./integrator";

/** Step halvings tried when Newton does not converge. */
export const MAX_HALVINGS = 4;

export interface HalvingStep {
  /**
   * One step from t of size h; false when Newton did not converge or the step's error
   * control rejects it (nothing committed). `last`: no further halving follows, so an
   * error control must accept a converged step.
   */
  trySingle(t: number, h: number, last: boolean): boolean;
  /** Puts the state back at the start of the failed step. */
  restoreStart(): void;
  /** Told of each accepted sub-step of a split step (the energy balance). */
  readonly substepObserver?: SubstepObserver | null;
  /**
   * Set by a failed trySingle that asks its step split at this fraction τ ∈ (0, 1) instead
   * of halved (a compliant limit's switch located within it: limit-switch.ts); 0: halve.
   */
  readonly splitAt?: number;
}

/**
 * Covers [t, t + h] with steps of h, or of h/2^k when a step does not converge (or its
 * integrator's error control rejects it: generalized-alpha.ts, stepTolerance; the
 * θ-schemes' symmetric joint steps, theta-scheme.ts). `firstDepth` > 0 starts with the
 * 2^firstDepth steps of h/2^firstDepth, each still halved when it fails (an integrator that
 * predicts its sub-steps: substep-depth.ts); the halvings count from h, so a step is never smaller than
 * h/2^MAX_HALVINGS. Each accepted sub-step of a split step is told to the step's
 * substepObserver. A failed step that sets `splitAt` is split there instead of halved (the
 * pieces count as halvings). Returns the number of sub-steps accepted (1: the step was not
 * split).
 */
export function advanceWithHalving(
  step: HalvingStep,
  t: number,
  h: number,
  newton: NewtonSettings,
  scheme: string,
  depth = 0,
  firstDepth = 0,
): number {
  let first = 0.5 * h;
  if (depth >= firstDepth) {
    // Newton may give up early only where a halving follows (NewtonSettings.halvingFollows)
    newton.halvingFollows = depth < MAX_HALVINGS;
    if (step.trySingle(t, h, depth >= MAX_HALVINGS)) {
      if (depth > 0) step.substepObserver?.substepDone(t, h);
      return 1;
    }
    if (depth >= MAX_HALVINGS) throw halvingFailure(scheme, newton, h);
    if (step.splitAt) first = step.splitAt * h;
    step.restoreStart();
  }
  return (
    advanceWithHalving(step, t, first, newton, scheme, depth + 1, firstDepth) +
    advanceWithHalving(step, t + first, h - first, newton, scheme, depth + 1, firstDepth)
  );
}

/** The error of a step that failed at its last halving, a sub-step of h (s). */
export function halvingFailure(scheme: string, newton: NewtonSettings, h: number): Error {
  return new Error(
    `${scheme}: Newton did not converge to ${newton.tolerance} in ${newton.maxIterations} iterations, even with the step halved ${MAX_HALVINGS} times (h = ${h} s)`,
  );
}
