/**
 * Joint actuators (src/engine/actuators/actuator.ts) on a pinned rod turned to a known
 * angle θ and rate θ̇ (hinge.ts): the torque, velocity and position laws in closed form
 * (τ = u(t), k_v (q̇* − q̇), k_p (q* − q) + k_d (q̇*(t) − q̇)), the run-time override, the
 * effort limit, the generalized force gᵀτ = τ ŷ on the rod, and the Jacobians −k_p g gᵀ,
 * −k_d g gᵀ (zero when saturated) against the closed form and central differences of
 * the effort. addCoordinateOuter between two bodies against c g gᵀ written out. The
 * servos' explicit bound (addExplicitRows, symplectic Euler's stability) against the
 * highest mode of k M^{-1/2} g gᵀ M^{-1/2} (jacobian-check.ts highestMode).
 * The servos' responses over time are in servos.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  addCoordinateOuter,
  addGeneralizedEffort,
  reserveCoordinateBlocks,
} from "../../../src/engine/actuators/actuator";
import { createActuation } from "../../../src/engine/actuators/build";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import { csrToDense } from "../../../src/engine/math/csr";
import { clearForces } from "../../../src/engine/model/body-system";
import { hangingChain } from "../../support/models";
import { checkExplicitBound, denseJacobian, explicitBound } from "../forces/jacobian-check";
import { hinge, I_CENTRE, setHinge, systemOf, twoLinkHinges } from "./hinge";

/** The dense 6×6 Jacobian of the rod, with only (ω_y, ω_y) expected non-zero. */
function onlyYawEntry(d: Float64Array, value: number) {
  for (let k = 0; k < 36; k++) expect(d[k]).toBeCloseTo(k === 4 * 6 + 4 ? value : 0, 12);
}

describe("JointActuator laws", () => {
  it("position servo: τ = k_p (q* − q) + k_d (q̇*(t) − q̇) on a moving target; torque τ ŷ on the rod", () => {
    const { system, actuation } = hinge({
      servo: { type: "position", kp: 5, kd: 0.7, target: { offset: 0.4, rate: 2 } },
    });
    const [a] = actuation.actuators;
    setHinge(system, 0.1, 0.3);
    clearForces(system);
    a.applyForces(0.05); // q* = 0.5, q̇* = 2
    const tau = 5 * (0.5 - 0.1) + 0.7 * (2 - 0.3);
    expect(a.effort).toBeCloseTo(tau, 12);
    expect(Array.from(system.torque)).toEqual([0, tau, 0].map((v) => expect.closeTo(v, 12)));
    expect(Array.from(system.force)).toEqual([0, 0, 0].map((v) => expect.closeTo(v, 14)));
    // a run-time command holds: its rate is 0
    a.override = -0.2;
    a.applyForces(0.05);
    expect(a.effort).toBeCloseTo(5 * (-0.2 - 0.1) + 0.7 * (0 - 0.3), 12);
    expect(a.commandAt(7)).toBe(-0.2);
    expect([a.hasJacobians, a.potentialEnergy()]).toEqual([true, 0]);
  });

  it("velocity servo τ = k_v (q̇* − q̇); torque actuator τ = u(t) with no Jacobian", () => {
    const velocity = hinge({ servo: { type: "velocity", kv: 2, target: 1 } });
    const [v] = velocity.actuation.actuators;
    setHinge(velocity.system, 0.2, -0.5);
    v.applyForces(0);
    expect(v.effort).toBeCloseTo(2 * (1 + 0.5), 12);
    const { system, actuation } = hinge({
      servo: {
        type: "torque",
        effort: { type: "sine", amplitude: 3, frequency: 0.25, phase: 0, offset: 0 },
      },
    });
    const [t] = actuation.actuators;
    setHinge(system, 0.7, 4);
    clearForces(system);
    t.applyForces(1); // 3 sin(π/2)
    expect(t.effort).toBeCloseTo(3, 12);
    expect(Array.from(system.torque)).toEqual([0, 3, 0].map((v) => expect.closeTo(v, 12)));
    // at zero effort (sin 0) nothing is added
    clearForces(system);
    t.applyForces(0);
    expect(t.effort).toBe(0);
    expect(Array.from(system.torque)).toEqual([0, 0, 0]);
    expect(t.hasJacobians).toBe(false);
    expect(Array.from(denseJacobian(system, t, "position"))).toEqual(new Array(36).fill(0));
  });

  it("the effort limit clamps |τ|, and a saturated servo has no Jacobian", () => {
    const { system, actuation } = hinge({
      servo: { type: "position", kp: 5, kd: 0.7, target: 0, effortLimit: 0.25 },
    });
    const [a] = actuation.actuators;
    setHinge(system, 0.4, 0);
    a.applyForces(0);
    expect(a.effort).toBe(-0.25);
    expect(Array.from(denseJacobian(system, a, "position"))).toEqual(new Array(36).fill(0));
    setHinge(system, 0.01, 0);
    a.applyForces(0);
    expect(a.effort).toBeCloseTo(-0.05, 12);
    onlyYawEntry(denseJacobian(system, a, "position"), -5);
  });
});

describe("JointActuator Jacobians", () => {
  it("∂τ/∂θ = −k_p and ∂τ/∂θ̇ = −k_d: the closed form and central differences of the effort", () => {
    const { system, actuation } = hinge({
      servo: { type: "position", kp: 5, kd: 0.7, target: 0.3 },
    });
    const [a] = actuation.actuators;
    const effortAt = (theta: number, rate: number) => {
      setHinge(system, theta, rate);
      a.applyForces(0);
      return a.effort;
    };
    const h = 1e-6;
    expect((effortAt(0.2 + h, 0.1) - effortAt(0.2 - h, 0.1)) / (2 * h)).toBeCloseTo(-5, 6);
    expect((effortAt(0.2, 0.1 + h) - effortAt(0.2, 0.1 - h)) / (2 * h)).toBeCloseTo(-0.7, 6);
    effortAt(0.2, 0.1);
    onlyYawEntry(denseJacobian(system, a, "position"), -5);
    onlyYawEntry(denseJacobian(system, a, "velocity", 2), -1.4);
  });
});

describe("addGeneralizedEffort, reserveCoordinateBlocks, addCoordinateOuter between two bodies", () => {
  it("τ ŷ on b, −τ ŷ on a; c g gᵀ with g = (0, −ŷ; 0, ŷ) over both blocks", () => {
    const { system, spec } = twoLinkHinges();
    const q = createActuation(spec.joints, [], system).coordinates.get("j1");
    if (q === undefined) throw new Error("no coordinate for j1");
    q.evaluate(); // its Jacobian g at the current configuration
    clearForces(system);
    addGeneralizedEffort(system, q, 1.5);
    expect(Array.from(system.torque)).toEqual(
      [0, -1.5, 0, 0, 1.5, 0].map((v) => expect.closeTo(v, 14)),
    );
    expect(Array.from(system.force)).toEqual([0, 0, 0, 0, 0, 0].map((v) => expect.closeTo(v, 14)));
    const m = new SparseBlockMatrix(system.blockSizes);
    reserveCoordinateBlocks(system, q, m);
    m.finalize();
    m.clear();
    addCoordinateOuter(system, q, m, -3);
    const d = csrToDense(m.toCsr());
    const g = [0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0];
    for (let i = 0; i < 12; i++)
      for (let j = 0; j < 12; j++) expect(d[12 * i + j]).toBeCloseTo(-3 * g[i] * g[j], 14);
  });
});

describe("JointActuator.addExplicitRows (symplectic Euler's bound)", () => {
  const servo = { type: "position", kp: 5, kd: 0.7, target: 0.3 } as const;
  /** The bound's ratios [ω², γ] to the highest modes over 8 states (checkExplicitBound). */
  const ratios = (model: Parameters<typeof systemOf>[0]) => {
    const { spec } = systemOf(model);
    return checkExplicitBound(
      () => systemOf(model).system,
      (sys) => {
        const a = createActuation(spec.joints, spec.actuators, sys).actuators[0];
        a.coordinate.evaluate(); // g at this state, for highestMode's Jacobian
        return a;
      },
    );
  };

  it("a hinge to the ground: k_p/I and k_d/I about the rod's centre, exact (g has one block)", () => {
    const { system, actuation } = hinge({ servo });
    const [a] = actuation.actuators;
    setHinge(system, 0.2, 0.1);
    const [w2, gamma] = explicitBound(system, a);
    expect(w2 / (5 / I_CENTRE)).toBeCloseTo(1, 12);
    expect(gamma / (0.7 / I_CENTRE)).toBeCloseTo(1, 12);
    // and the first link of a chain, hinged to the ground about a turned axis, at random
    // states (its world inertia full): exact still
    const chain = hangingChain({
      joints: [
        { type: "revolute", axis: [0, 1, 0] },
        { type: "revolute", axis: [0.6, 0, 0.8] },
      ],
      mass: 1,
      inertia: [0.1, 0.2, 0.3],
    });
    const [onGround] = ratios({
      gravity: [0, 0, 0],
      ...chain,
      actuators: [{ id: "s", joint: "j0", ...servo }],
    } as never);
    expect(onGround).toBeCloseTo(1, 12);
  });

  it("between two bodies and on a prismatic joint with lever arms: at most (1 + √n)/2 times the highest mode, n blocks", () => {
    // a hinge between two links (g = (0, −n; 0, n): two rotation blocks) and a prismatic
    // joint between two rigid bodies whose frames are off their centres (g on both bodies'
    // translation and rotation blocks), turned and moving at random: each bound at least
    // the highest mode of k_p g gᵀ and k_d g gᵀ (checkExplicitBound), and at most
    // max_X u_X Σ u_Y / Σ u_Y² ≤ (1 + √n)/2 times it over n blocks of norms u_X = |M^{-1/2}
    // g|_X (the worst u = (√n, 1, …, 1) with n − 1 ones): 1.207 for the hinge's two
    // rotation blocks, 1.5 for the slider's four (measured: 1.14 and 1.47)
    const chain = hangingChain({
      joints: [
        { type: "revolute", axis: [0, 1, 0] },
        { type: "revolute", axis: [0.6, 0, 0.8] },
      ],
      mass: (i) => 1 + i,
      inertia: [0.1, 0.2, 0.3],
    });
    const hinged = ratios({
      gravity: [0, 0, 0],
      ...chain,
      actuators: [{ id: "s", joint: "j1", ...servo }],
    } as never);
    const slider = ratios({
      gravity: [0, 0, 0],
      bodies: [
        { id: "a", mass: 2, inertia: [0.02, 0.03, 0.05] },
        { id: "b", mass: 1, inertia: [0.015, 0.025, 0.04], position: [0.3, 0.1, 0] },
      ],
      joints: [
        {
          id: "rail",
          type: "prismatic",
          a: { body: "a", point: [0.1, 0.05, -0.1] },
          b: { body: "b", point: [-0.2, -0.05, -0.1] },
          axis: [1, 0, 0],
        },
      ],
      actuators: [{ id: "s", joint: "rail", ...servo }],
    } as never);
    for (const [r, n] of [...hinged.map((r) => [r, 2]), ...slider.map((r) => [r, 4])])
      expect(r).toBeLessThanOrEqual((1 + Math.sqrt(n)) / 2 + 1e-12);
  });
});
