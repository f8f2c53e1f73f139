/**
 * The compliant joint limit (src/engine/actuators/joint-limit.ts) on a pinned rod at known
 * angles and rates (hinge.ts): the defaults k = m̃ (2π/T)², c = 2 m̃ (2π/T) with
 * m̃ = 1/(gᵀ M⁻¹ g) the rod's inertia about its centre; the Kelvin–Voigt law
 * τ = ±(k δ + c q̇_in min(1, δ/δ_r)) at each bound, pushing only; its Jacobians
 * (−(k + c q̇_in/δ_r) on the ramp, −c ramp) against the closed form and central
 * differences of the effort; off when disabled. coordinateInertia of a coordinate
 * between two bodies: 1/(1/I_a + 1/I_b).
 */
import { describe, expect, it } from "vitest";
import { createActuation } from "../../../src/engine/actuators/build";
import {
  coordinateInertia,
  DAMPING_RAMP,
  DEFAULT_PERIOD,
} from "../../../src/engine/actuators/joint-limit";
import { clearForces } from "../../../src/engine/model/body-system";
import { denseJacobian } from "../forces/jacobian-check";
import { hinge, I_CENTRE, setHinge, twoLinkHinges } from "./hinge";

const K = 100;
const C = 4;
const limited = () => hinge({ limits: { lower: -0.2, upper: 0.3, stiffness: K, damping: C } });

describe("CompliantJointLimit", () => {
  it("defaults: k = m̃ (2π/T)², c = 2 m̃ (2π/T), m̃ the rod's inertia about its centre", () => {
    const { actuation } = hinge({ limits: { lower: -1, upper: 1 } });
    const [limit] = actuation.limits;
    const w = (2 * Math.PI) / DEFAULT_PERIOD;
    expect(limit.id).toBe("pin:limits");
    expect(limit.stiffness).toBeCloseTo(I_CENTRE * w * w, 9);
    expect(limit.damping).toBeCloseTo(2 * I_CENTRE * w, 11);
  });

  it("past either bound: τ = ±(k δ + c q̇_in), pushing only; nothing inside or disabled", () => {
    const { system, actuation } = limited();
    const [limit] = actuation.limits;
    const effortAt = (theta: number, rate: number) => {
      setHinge(system, theta, rate);
      clearForces(system);
      limit.applyForces(0);
      return limit.effort;
    };
    expect(effortAt(0.35, 0.5)).toBeCloseTo(-(K * 0.05 + C * 0.5), 12);
    expect(system.torque[1]).toBeCloseTo(-(K * 0.05 + C * 0.5), 12);
    expect(limit.coordinate.limitEffort).toBe(limit.effort);
    expect(effortAt(-0.25, -1)).toBeCloseTo(K * 0.05 + C * 1, 12);
    // leaving fast: k δ + c q̇_in < 0 would pull, so nothing (no adhesion)
    expect(effortAt(0.35, -10)).toBe(0);
    expect(effortAt(0.1, 3)).toBe(0);
    expect(Array.from(system.torque)).toEqual([0, 0, 0]);
    limit.enabled = false;
    expect(effortAt(0.35, 0.5)).toBe(0);
  });

  it("on the damping ramp: τ = −(k δ + c (δ/δ_r) q̇_in), Jacobians −(k + c q̇_in/δ_r) and −c δ/δ_r", () => {
    const { system, actuation } = limited();
    const [limit] = actuation.limits;
    const delta = DAMPING_RAMP / 2;
    const effortAt = (theta: number, rate: number) => {
      setHinge(system, theta, rate);
      limit.applyForces(0);
      return limit.effort;
    };
    // (the angle's roundoff, ~1e-16, enters through c/δ_r = 4e4: 10 digits)
    expect(effortAt(0.3 + delta, 1)).toBeCloseTo(-(K * delta + C * 0.5 * 1), 10);
    const stiffness = K + C / DAMPING_RAMP;
    const pos = denseJacobian(system, limit, "position");
    const vel = denseJacobian(system, limit, "velocity");
    for (let k = 0; k < 36; k++) {
      expect(pos[k]).toBeCloseTo(k === 28 ? -stiffness : 0, 8);
      expect(vel[k]).toBeCloseTo(k === 28 ? -C * 0.5 : 0, 10);
    }
    // the same slopes by central differences of the effort (inside the ramp)
    const h = 1e-7;
    const dTheta = (effortAt(0.3 + delta + h, 1) - effortAt(0.3 + delta - h, 1)) / (2 * h);
    const dRate = (effortAt(0.3 + delta, 1 + h) - effortAt(0.3 + delta, 1 - h)) / (2 * h);
    expect(dTheta / -stiffness).toBeCloseTo(1, 6);
    expect(dRate).toBeCloseTo(-C * 0.5, 6);
    // inside the range: no Jacobian
    effortAt(0, 1);
    expect(Array.from(denseJacobian(system, limit, "position"))).toEqual(new Array(36).fill(0));
  });
});

describe("coordinateInertia", () => {
  it("a hinge between two links about y: 1/(1/I_a + 1/I_b) with the links' I_yy", () => {
    const { system, spec } = twoLinkHinges(0.6);
    const { coordinates } = createActuation(spec.joints, [], system);
    const q1 = coordinates.get("j1");
    const q0 = coordinates.get("j0");
    if (!q0 || !q1) throw new Error("no coordinates");
    q0.evaluate();
    q1.evaluate();
    expect(coordinateInertia(system, q1)).toBeCloseTo(1 / (1 / 0.2 + 1 / 0.6), 13);
    expect(coordinateInertia(system, q0)).toBeCloseTo(0.2, 13);
  });
});
