/**
 * RevoluteMotor (C = φ − θ(t), φ the relative angle of b about the axis, wrapped to
 * (−π, π]) and PrismaticMotor (C = d·n_a − s₀ − s(t)), against motions built here: zero in
 * the model pose, φ after turning b about the joint axis through the joint point by a
 * known angle (Rodrigues' formula written out), the offset after sliding b along the axis;
 * and every drive's Jacobian, Ct and Qc against finite differences (joint-checks.ts).
 */
import { describe, expect, it } from "vitest";
import type { MotorSpec } from "../../../schemas/model";
import { createConstraints } from "../../../src/engine/constraints/build";
import { PrismaticMotor } from "../../../src/engine/constraints/motor";
import { updateDerived } from "../../../src/engine/model/body-system";
import {
  assembledPair,
  caseLabel,
  cross,
  DERIVATIVE_CASES,
  expectDerivativesMatchDifferences,
  worldPoint,
} from "./joint-checks";

describe("motor measures", () => {
  it("revolute motor angle: zero in the model pose, measures the relative rotation about the axis", () => {
    const { sys, joint, axis } = assembledPair("revolute", 11);
    const motors: MotorSpec[] = [{ id: "m", joint: "j", angle: 0 }];
    const [, motor] = createConstraints([joint], motors, sys);
    // the same turn seen by a motor driven to θ = 0.7 + 2π (a whole turn more): C = 0,
    // the residual is wrapped
    const [, turned] = createConstraints(
      [joint],
      [{ id: "m", joint: "j", angle: 0.7 + 2 * Math.PI }],
      sys,
    );
    const c = new Float64Array(1);
    motor.residual(0, c, 0);
    expect(Math.abs(c[0])).toBeLessThan(1e-14);
    // Turn b about the joint axis through the joint point by 0.7 rad: C = 0.7.
    const p = worldPoint(sys, 0, joint.a.point);
    const q = [Math.cos(0.35), ...axis.map((x) => Math.sin(0.35) * x)];
    const qb = Array.from(sys.quat.subarray(4, 8));
    const qn = [
      q[0] * qb[0] - q[1] * qb[1] - q[2] * qb[2] - q[3] * qb[3],
      q[0] * qb[1] + q[1] * qb[0] + q[2] * qb[3] - q[3] * qb[2],
      q[0] * qb[2] - q[1] * qb[3] + q[2] * qb[0] + q[3] * qb[1],
      q[0] * qb[3] + q[1] * qb[2] - q[2] * qb[1] + q[3] * qb[0],
    ];
    // x_b' = p + Rot (x_b − p)
    const xb = [0, 1, 2].map((i) => sys.pos[3 + i] - p[i]);
    const k = axis;
    const cth = Math.cos(0.7);
    const sth = Math.sin(0.7);
    const kx = cross(k, xb);
    const kd = k[0] * xb[0] + k[1] * xb[1] + k[2] * xb[2];
    for (let i = 0; i < 3; i++)
      sys.pos[3 + i] = p[i] + xb[i] * cth + kx[i] * sth + k[i] * kd * (1 - cth);
    sys.quat.set(qn, 4);
    updateDerived(sys);
    motor.residual(0, c, 0);
    expect(c[0]).toBeCloseTo(0.7, 12);
    turned.residual(0, c, 0);
    expect(Math.abs(c[0])).toBeLessThan(1e-12);
  });

  it("prismatic motor offset: b slid by s along the axis gives C = s − s(t), Ct = −ṡ(t)", () => {
    const { sys, joint, axis } = assembledPair("prismatic", 12);
    const [, motor] = createConstraints(
      [joint],
      [{ id: "m", joint: "j", offset: { offset: 0.3, rate: 2.5 } }],
      sys,
    );
    expect(motor).toBeInstanceOf(PrismaticMotor);
    expect((motor as PrismaticMotor).displacement()).toBeCloseTo(0, 14);
    for (let i = 0; i < 3; i++) sys.pos[3 + i] += 0.45 * axis[i];
    updateDerived(sys);
    const c = new Float64Array(1);
    motor.residual(0.1, c, 0);
    // s(t) = 0.3 + 2.5 t
    expect(c[0]).toBeCloseTo(0.45 - (0.3 + 2.5 * 0.1), 13);
    motor.velocityTerm(0.1, c, 0);
    expect(c[0]).toBe(-2.5);
    expect(motor.timeDependent).toBe(true);
  });
});

describe("motor Jacobian, Ct and Qc vs finite differences along random motions", () => {
  DERIVATIVE_CASES.forEach((c, ci) => {
    if (c.drive !== undefined) it(caseLabel(c), () => expectDerivativesMatchDifferences(ci));
  });
});
