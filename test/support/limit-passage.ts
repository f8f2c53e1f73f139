/**
 * The joint-limit tests' probe of what a step leaves to the limits' position projection.
 */
import { vi } from "vitest";
import { JointLimitProblem } from "../../src/engine/actuators/limit-problem";

/**
 * Runs `run` with JointLimitProblem.project watched, and returns the largest passage of a
 * coordinate past either of its bounds (rad or m) that a step or piece left to the
 * projection, read before the projection moves it back (0 when none).
 */
export function passageBeforeProjection(run: () => void): number {
  let passed = 0;
  const project = JointLimitProblem.prototype.project;
  const spy = vi.spyOn(JointLimitProblem.prototype, "project").mockImplementation(function (
    this: JointLimitProblem,
    ...args
  ) {
    for (const l of this.limits) {
      l.coordinate.evaluate();
      const q = l.coordinate.value;
      passed = Math.max(passed, q - l.upper, l.lower - q);
    }
    return project.apply(this, args);
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return passed;
}
