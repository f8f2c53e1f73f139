/**
 * The Newton step of acceleration-step.ts:
 * - a nonlinear step (backward Euler on a particle held by two springs of rest length
 *   L₀ = 0.5 m, k = 2000 N/m, to the anchors p₁ = 0 and p₂ = (1.2, 0.3, 0), h = 20 ms:
 *   f(x) = −Σ k(|x − p| − L₀)(x − p)/|x − p| is far from linear over the step; with one
 *   spring the step would stay on the predictor's ray, where Newton is exact at once) is
 *   iterated to convergence: the end state satisfies the scheme's equations
 *   m (v₁ − v₀)/h = f(x₁), x₁ = x₀ + h v₁, with f evaluated here, to the Newton tolerance
 *   (1e-10 (1 + ‖a‖∞) in m/s², up to the last correction's contraction), in more than one
 *   iteration; one iteration (newtonIterations = 1) is the linearized step, which does not;
 * - `auto` on a block-diagonal iteration matrix (rigid bodies without joints: each body's
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

describe("Newton iterations on a nonlinear spring (backward Euler)", () => {
  const k = 2000;
  const m = 0.5;
  const L0 = 0.5;
  const h = 0.02;
  const x0 = [0.8, 0.1, -0.2];
  const v0 = [0.5, 3, 1];
  const anchors = [
    [0, 0, 0],
    [1.2, 0.3, 0],
  ];
  const force = (x: number[]) => {
    const f = [0, 0, 0];
    for (const p of anchors) {
      const d = x.map((c, i) => c - p[i]);
      const l = Math.hypot(...d);
      for (let i = 0; i < 3; i++) f[i] -= (k * (l - L0) * d[i]) / l;
    }
    return f;
  };
  /** max over components of |m (v₁ − v₀)/h − f(x₁)|/m (m/s²) after one step. */
  function residual(newtonIterations: number) {
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "p", kind: "particle", mass: m, position: x0, velocity: v0 }],
      forces: anchors.map((point, i) => ({
        id: `s${i}`,
        type: "spring" as const,
        a: { body: "p" },
        b: { body: "ground", point: point as [number, number, number] },
        stiffness: k,
        restLength: L0,
      })),
      solver: { integrator: "backward-euler", dt: h, newtonIterations, newtonTolerance: 1e-10 },
    });
    sim.step(1);
    const st = sim.state();
    const x1 = st.bodies[0].position;
    const v1 = st.bodies[0].velocity;
    const f = force(x1);
    let r = 0;
    let a = 0;
    for (let i = 0; i < 3; i++) {
      expect(x1[i]).toBeCloseTo(x0[i] + h * v1[i], 14);
      const ai = (v1[i] - v0[i]) / h;
      a = Math.max(a, Math.abs(ai));
      r = Math.max(r, Math.abs(ai - f[i] / m));
    }
    return { r, a, stats: st.solver };
  }

  it("converges to the scheme's nonlinear equations; the linearized step does not", () => {
    const newton = residual(25);
    expect(newton.stats.newtonIterations).toBeGreaterThan(1);
    expect(newton.stats.newtonConverged).toBe(true);
    expect(newton.r).toBeLessThan(1e-9 * (1 + newton.a));
    const linearized = residual(1);
    expect(linearized.stats.newtonIterations).toBe(1);
    expect(linearized.r).toBeGreaterThan(1e3 * newton.r);
  });
});

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
