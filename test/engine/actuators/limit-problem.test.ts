/**
 * Joint limits as a one-step LCP (src/engine/actuators/limit-problem.ts) on the pinned rod
 * (hinge.ts), with a stepper whose constrained solve is the rod's free mass matrix M⁻¹
 * (the hinge's own rows are not the object here): for the upper bound the row is
 * H = −gᵀ = −ŷ on ω, so W = (c_v/h) H M⁻¹ Hᵀ = (c_v/h)/I_yy, and with one row the LCP
 * W P + q ≥ 0 ⊥ P ≥ 0, q = H v_free + e u⁻, has P = max(0, −q/W). Checked: the
 * activation g + h u⁻/2 ≤ ε, W, P for an approaching and a separating free velocity, the
 * acceleration (1/h) M⁻¹ Hᵀ P and the force Hᵀ P it adds, the reported effort σ P/h, and
 * the position projection of a bound passed (a rotation back onto it about the centre).
 */
import { describe, expect, it } from "vitest";
import { JointLimitProblem } from "../../../src/engine/actuators/limit-problem";
import { type NewtonStepper, SchemeCoefficients } from "../../../src/engine/dynamics/stepper";
import { SparseBlockMatrix } from "../../../src/engine/math/block-matrix";
import type { BodySystem } from "../../../src/engine/model/body-system";
import { hinge, I_CENTRE, M, setHinge } from "./hinge";

/** A stepper for one free rigid body whose world inertia is diag(1e-3, I, I) at the pose used. */
function freeBodyStepper(sys: BodySystem): NewtonStepper {
  const inertia = [1e-3, I_CENTRE, I_CENTRE];
  return {
    matrix: new SparseBlockMatrix(sys.blockSizes),
    assembleIterationMatrix: () => {},
    usesMassOnly: () => true,
    solveConstrained: (_c, rhs, out) => {
      for (let j = 0; j < 3; j++) out[j] = rhs[j] / M;
      for (let j = 0; j < 3; j++) out[3 + j] = rhs[3 + j] / inertia[j];
    },
  };
}

function problem(restitution: number) {
  const { system, actuation } = hinge({});
  const coordinate = actuation.coordinates.get("pin");
  if (!coordinate) throw new Error("no coordinate");
  const p = new JointLimitProblem(system, [{ coordinate, lower: -0.2, upper: 0.3, restitution }]);
  return { system, coordinate, p };
}

describe("JointLimitProblem", () => {
  const h = 0.01;
  const c = new SchemeCoefficients();
  c.cv = 0.5 * h;

  it("activates a bound when g + h u⁻/2 ≤ ε, only that one", () => {
    const { system, p } = problem(0);
    setHinge(system, 0.299, 0); // g = 0.001 > ε
    expect(p.updateIndexSet(h)).toBe(0);
    setHinge(system, 0.299, 1); // 0.001 − 0.005 < ε
    expect(p.updateIndexSet(h)).toBe(1);
    setHinge(system, 0.299, 0.19); // 0.001 − 0.00095 = 5e-5 > ε
    expect(p.updateIndexSet(h)).toBe(0);
    setHinge(system, -0.2, 0.5); // on the lower bound, leaving: g + h u/2 > 0
    expect(p.updateIndexSet(h)).toBe(0);
    setHinge(system, -0.2, -0.5);
    expect(p.updateIndexSet(h)).toBe(1);
  });

  it("deferApart leaves out the bounds farther than ε, whatever the rate; clearDeferred opens them", () => {
    const { system, p } = problem(0);
    setHinge(system, 0.299, 1); // g = 0.001 > ε, closing at 1 rad/s: g + h u/2 < ε
    p.deferApart();
    expect(p.updateIndexSet(h)).toBe(0);
    p.clearDeferred();
    expect(p.updateIndexSet(h)).toBe(1);
    setHinge(system, 0.3 - 5e-7, 1); // touching (g = 5e-7 ≤ ε): kept
    p.deferApart();
    expect(p.updateIndexSet(h)).toBe(1);
    expect(p.rowSide(0)).toBe(-1);
    p.clearDeferred();
  });

  it("an approaching free velocity: P = −q/W, its acceleration, force and effort", () => {
    const e = 0.5;
    const { system, coordinate, p } = problem(e);
    setHinge(system, 0.3, 1); // u⁻ = −q̇ = −1 at the upper bound
    expect(p.updateIndexSet(h)).toBe(1);
    const stepper = freeBodyStepper(system);
    p.assemble(stepper, c, h);
    const W = c.cv / h / I_CENTRE;
    const vFree = Float64Array.of(0, 0, 0, 0, 0.8, 0); // ω_y: H v = −0.8
    const q = -0.8 + e * -1;
    const res = p.solve(vFree);
    expect(res.converged).toBe(true);
    const P = -q / W;
    // P through its generalized force Hᵀ P = (0, 0, 0, 0, −P, 0)
    const force = new Float64Array(6);
    p.addGeneralizedForce(2, force);
    expect(Array.from(force)).toEqual([0, 0, 0, 0, -2 * P, 0].map((v) => expect.closeTo(v, 12)));
    // the post-impact velocity v_free + c_v Δa satisfies u⁺ = −ω_y = −e u⁻ (Newton's law)
    const accel = new Float64Array(6);
    p.addAcceleration(h, 1, accel);
    expect(accel[4]).toBeCloseTo(-P / h / I_CENTRE, 10);
    expect(-(vFree[4] + c.cv * accel[4])).toBeCloseTo(-e * -1, 12);
    p.saveMemory(h, 1);
    expect(coordinate.limitEffort).toBeCloseTo(-P / h, 10);
  });

  it("a separating free velocity: P = 0, nothing added; clear forgets", () => {
    const { system, coordinate, p } = problem(0.5);
    setHinge(system, 0.3, 1);
    p.updateIndexSet(h);
    p.assemble(freeBodyStepper(system), c, h);
    p.solve(Float64Array.of(0, 0, 0, 0, -3, 0)); // q = 3 − 0.5 > 0
    const force = new Float64Array(6);
    p.addGeneralizedForce(1, force);
    expect(Array.from(force)).toEqual([0, 0, 0, 0, 0, 0]);
    p.saveMemory(h, 1);
    expect(coordinate.limitEffort).toBe(0);
    p.clear();
    const accel = new Float64Array(6);
    p.addAcceleration(h, 1, accel);
    expect(Array.from(accel)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("project: a bound passed is moved back onto it by the smallest move in the kinetic metric, velocities kept", () => {
    // no joints held (set null): Y = M⁻¹ and the row H = −ŷ on ω (upper bound), so the move
    // is a rotation about ŷ through the centre by the passage, the centre and the
    // velocities unchanged
    const { system, coordinate, p } = problem(0);
    setHinge(system, 0.35, 2);
    const centre = Array.from(system.pos.subarray(0, 3));
    const velocity = Array.from(system.vel.subarray(0, 3));
    expect(p.project(null, 0, 1e-12)).toBeLessThan(1e-12);
    coordinate.evaluate();
    expect(coordinate.value).toBeCloseTo(0.3, 12);
    expect(Array.from(system.pos.subarray(0, 3))).toEqual(centre);
    expect(Array.from(system.vel.subarray(0, 3))).toEqual(velocity);
    expect(Array.from(system.omega.subarray(0, 3))).toEqual([0, 2, 0]);
    // inside the bounds: nothing moves
    setHinge(system, 0.1, 0);
    const before = Array.from(system.quat.subarray(0, 4));
    expect(p.project(null, 0, 1e-12)).toBe(0);
    expect(Array.from(system.quat.subarray(0, 4))).toEqual(before);
  });
});
