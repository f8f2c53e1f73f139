/**
 * `auto` on a block-diagonal iteration matrix (rigid bodies without joints: each body's
 * mass and gyroscopic Jacobian, 6×6 and nonsymmetric for an anisotropic spinning body):
 * every block inverted on its own instead of a sparse LU (acceleration-step.ts,
 * diagonalInverse). Checked against sparse LU on the same Newton system (the sparse LU
 * path is checked against the physics in gyroscopic-jacobian.test.ts and
 * rigid-body.test.ts).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";

/**
 * Twelve free boxes (72 dofs, above the dense limit of 60) with three different half
 * extents, spinning fast about axes off their principal ones (h |ω| up to 0.15 at
 * h = 5 ms), no gravity: torque-free tumbling (Euler's equations).
 */
function tumbling(linearSolver: string) {
  const bodies = Array.from({ length: 12 }, (_, k) => ({
    id: `b${k}`,
    mass: 1 + 0.1 * k,
    position: [k, 0, 0],
    angularVelocity: [10 + k, 20 - k, 5 + 0.5 * k],
    shapes: [{ type: "box", halfExtents: [0.3, 0.15 + 0.01 * k, 0.05] }],
  }));
  return loadModel({
    gravity: [0, 0, 0],
    bodies,
    solver: { integrator: "moreau-jean", dt: 0.005, linearSolver },
  });
}

describe("`auto` on a block-diagonal W (free anisotropic rigid bodies)", () => {
  it("takes the sparse LU's steps to the Newton tolerance", () => {
    const auto = tumbling("auto");
    const lu = tumbling("sparse-lu");
    const steps = 200;
    auto.step(steps);
    lu.step(steps);
    const a = auto.state().bodies;
    const b = lu.state().bodies;
    let dq = 0;
    let dw = 0;
    for (let k = 0; k < a.length; k++)
      for (let i = 0; i < 3; i++) {
        dq = Math.max(dq, Math.abs(a[k].orientation[i] - b[k].orientation[i]));
        dw = Math.max(dw, Math.abs(a[k].angularVelocity[i] - b[k].angularVelocity[i]));
      }
    // both converge Newton to 1e-10 (1 + ‖a‖∞) in rad/s² on the same equations
    expect(dq).toBeLessThan(1e-9);
    expect(dw).toBeLessThan(1e-7);
    // the path was taken, and the bodies tumbled (their orientations far from the start)
    const stepper = (auto as unknown as { stepper: { diagonalFactored: boolean } }).stepper;
    expect(stepper.diagonalFactored).toBe(true);
    expect(Math.min(...a.map((x) => Math.abs(x.orientation[0])))).toBeLessThan(0.9);
  });
});
