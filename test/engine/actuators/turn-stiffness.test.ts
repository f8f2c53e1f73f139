/**
 * JointActuator.addTurnStiffness (actuator.ts): what the turning of a servo's direction g
 * with the bodies adds to ∂f/∂x, f = g τ, τ = k_p (q* − q) + k (q̇* − q̇) with q̇ = g·u at
 * held velocities u. With addPosJacobian's −k_p g gᵀ it must be the whole ∂f/∂x: checked
 * against central differences of the generalized force over the integrator's increment
 * (x += δx, q ← exp(δθ) ⊗ q: addPositionIncrement), velocities held, at random
 * configurations and velocities (the joint need not hold: f is a function of the state).
 * A hinge's g has rotational rows alone, ±t; a prismatic joint's g = [−e, −ρ × e] on a and
 * [e, r_b × e] on b (e the axis, turning with a; r_b b's lever to its anchor; ρ = p_b − x_a),
 * which turns with both bodies and moves with their positions: before, nothing was added
 * for it, and the Newton matrix of a prismatic servo between turning bodies missed terms of
 * the size |τ| (|q* − q| times k_p).
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { createActuation } from "../../../src/engine/actuators/build";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrToDense } from "../../../src/engine/math/csr";
import {
  addPositionIncrement,
  PositionSnapshot,
  restorePositions,
  savePositions,
} from "../../../src/engine/model/body-system";
import { mulberry32 } from "../../support/random";
import { generalizedForce, randomizeState } from "../forces/jacobian-check";
import { systemOf } from "./hinge";

/** Two 1 kg bodies (a at the origin unless a is the ground) joined by `type` along/about x. */
function pair(type: "revolute" | "prismatic", grounded: boolean, kd: number): ModelInput {
  return {
    gravity: [0, 0, 0],
    bodies: [
      ...(grounded ? [] : [{ id: "a", mass: 2, position: [0, 0, 0], inertia: [0.02, 0.05, 0.06] }]),
      { id: "b", mass: 1, position: [0.6, 0.1, -0.2], inertia: [0.01, 0.03, 0.035] },
    ],
    joints: [
      {
        id: "j",
        type,
        a: { body: grounded ? "ground" : "a", point: [0.3, 0.2, 0.1] },
        b: { body: "b", point: [-0.3, 0.1, 0.3] },
        axis: [1, 0.5, -0.3],
      },
    ],
    actuators: [{ id: "s", joint: "j", type: "position", target: 0.7, kp: 300, kd }],
  } as ModelInput;
}

/** max |J − J_FD| / max |J_FD| over `configurations` random states. */
function turnError(model: ModelInput, configurations = 4): number {
  const { system: sys, spec } = systemOf(model);
  const [servo] = createActuation(spec.joints, spec.actuators, sys).actuators;
  const n = sys.numDofs;
  const rng = mulberry32(7);
  const saved = new PositionSnapshot(sys);
  const step = 1e-6;
  let worst = 0;
  for (let c = 0; c < configurations; c++) {
    randomizeState(sys, rng, 0.5, 1.5);
    // the analytic ∂f/∂x: −k_p g gᵀ and the turning, at the law just evaluated
    generalizedForce(sys, servo, 0);
    const m = new SparseBlockMatrix(sys.blockSizes);
    servo.addSolveBlocks(m);
    m.finalize();
    m.clear();
    servo.addPosJacobian(m, 1);
    servo.addTurnStiffness(m, 1);
    const J = csrToDense(m.toCsr());
    savePositions(sys, saved);
    const du = new Float64Array(n);
    let error = 0;
    let scale = 0;
    for (let k = 0; k < n; k++) {
      du.fill(0);
      du[k] = step;
      addPositionIncrement(sys, du, 1);
      const plus = generalizedForce(sys, servo, 0);
      restorePositions(sys, saved);
      addPositionIncrement(sys, du, -1);
      const minus = generalizedForce(sys, servo, 0);
      restorePositions(sys, saved);
      for (let i = 0; i < n; i++) {
        const fd = (plus[i] - minus[i]) / (2 * step);
        error = Math.max(error, Math.abs(J[i * n + k] - fd));
        scale = Math.max(scale, Math.abs(fd));
      }
    }
    worst = Math.max(worst, error / scale);
  }
  return worst;
}

describe("a servo's ∂f/∂x with its direction's turning (addPosJacobian + addTurnStiffness) against central differences", () => {
  for (const type of ["revolute", "prismatic"] as const)
    for (const grounded of [false, true])
      for (const kd of [0, 40])
        it(`${type}, a ${grounded ? "the ground" : "a rigid body"}, k_d = ${kd}`, () => {
          // central differences at 1e-6: truncation ~1e-12, rounding ~1e-16 |f|/1e-6 ~ 1e-10
          // relative; measured 2e-10 to 5e-10 (both types), and before the prismatic joint's
          // term 0.91 to 1.04 (its turning as large as −k_p g gᵀ at these ±0.5 m offsets)
          expect(turnError(pair(type, grounded, kd))).toBeLessThan(1e-7);
        });
});
