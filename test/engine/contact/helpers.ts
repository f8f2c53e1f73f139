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
