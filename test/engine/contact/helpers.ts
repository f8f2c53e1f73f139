/** Shared pieces of the contact tests. */
import { loadModel } from "../../../src/engine/index";

/**
 * `body` (a body of the model format) dropped on `floor` under gravity (0, 0, −g) with
 * compliant contact (SMC) of the law `behavior`, backward Euler at h = 0.01 s with Newton
 * to 1e-12: the state after 3 s, when it has come to rest.
 */
export function settleOnFloor(
  body: Record<string, unknown>,
  floor: Record<string, unknown>,
  behavior: Record<string, unknown>,
  g: number,
) {
  const sim = loadModel({
    gravity: [0, 0, -g],
    bodies: [body, floor],
    contact: { method: "smc", behavior },
    solver: {
      integrator: "backward-euler",
      dt: 0.01,
      newtonIterations: 20,
      newtonTolerance: 1e-12,
    },
  });
  sim.step(300);
  return sim.state();
}

/**
 * Nonsmooth contact solved to round-off: the contact solver to a residual of 1e-10 in at
 * most 200 sweeps, the position projection to 1e-9 m in at most 200 sweeps (the schema's
 * fixed defaults before issue 29). For tests that compare a contact state with a closed form
 * to 1e-6 or tighter; the defaults stop at 10⁻³·|g|·h (m/s) and 2·10⁻³·ℓ (m), ℓ the smallest
 * colliding shape's size (README, "Solver settings").
 */
export const ROUND_OFF_CONTACT = {
  tolerance: 1e-10,
  maxIterations: 200,
  projectionTolerance: 1e-9,
  projectionIterations: 200,
} as const;
