/**
 * A free rigid body with three distinct inertias, integrated with Newmark (1/4, 1/2) and
 * Newton iterations at h = 1e-3: energy and world angular momentum drift, and the
 * tennis-racket flip time against the closed-form Jacobi elliptic solution.
 *
 * Closed form (Landau & Lifshitz §37), I1 < I2 < I3, energy E, momentum L with
 * L² > 2 E I2:  ω2 = A2 sn(τ, k), τ = λ t + τ0,  λ = √((I3 − I2)(L² − 2 E I1)/(I1 I2 I3)),
 * k² = (I2 − I1)(2 E I3 − L²) / ((I3 − I2)(L² − 2 E I1)). Starting with ω1 = 0 (τ0 = K(k),
 * where ω2 is at its maximum), ω2 first changes sign at τ = 2K: after t = K(k)/λ.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { ellipticK } from "../../support/closed-forms";
import { rotationMatrix } from "../../support/quat";

const I = [2, 3, 5];
const w0 = [0, 7, 0.5];

function bodyOmega(st: ReturnType<ReturnType<typeof loadModel>["state"]>) {
  const v = st.bodies[0].angularVelocity;
  // ω_body = Rᵀ ω_world
  const R = rotationMatrix(st.bodies[0].orientation);
  return [0, 1, 2].map((j) => R[0][j] * v[0] + R[1][j] * v[1] + R[2][j] * v[2]);
}

function worldMomentum(st: ReturnType<ReturnType<typeof loadModel>["state"]>) {
  const wb = bodyOmega(st);
  const R = rotationMatrix(st.bodies[0].orientation);
  const lb = wb.map((c, i) => I[i] * c);
  return [0, 1, 2].map((i) => R[i][0] * lb[0] + R[i][1] * lb[1] + R[i][2] * lb[2]);
}

describe("free rigid body, Newmark (1/4, 1/2) with Newton iterations, h = 1e-3", () => {
  const model = {
    gravity: [0, 0, 0],
    bodies: [
      {
        id: "racket",
        mass: 1,
        inertia: I,
        // a rotated body frame, so world and body axes differ
        orientation: [Math.cos(0.35), Math.sin(0.35) * 0.6, Math.sin(0.35) * 0.8, 0],
        angularVelocity: [0, 0, 0],
      },
    ],
    solver: {
      integrator: "newmark",
      dt: 1e-3,
      beta: 0.25,
      gamma: 0.5,
      newtonIterations: 20,
      newtonTolerance: 1e-13,
    },
  };
  // world ω from the body-frame ω0
  const [qw, qx, qy, qz] = model.bodies[0].orientation.map((c, _i, q) => c / Math.hypot(...q));
  const R = [
    [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)],
    [2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)],
    [2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy)],
  ];
  model.bodies[0].angularVelocity = [0, 1, 2].map(
    (i) => R[i][0] * w0[0] + R[i][1] * w0[1] + R[i][2] * w0[2],
  );

  it("conserves energy and world angular momentum to 1e-5 and flips when Jacobi's solution says", () => {
    const sim = loadModel(model);
    const s0 = sim.state();
    const e0 = s0.energy.kinetic;
    const L0 = worldMomentum(s0);
    const l0 = Math.hypot(...L0);

    const E = 0.5 * (I[0] * w0[0] ** 2 + I[1] * w0[1] ** 2 + I[2] * w0[2] ** 2);
    const L2 = (I[0] * w0[0]) ** 2 + (I[1] * w0[1]) ** 2 + (I[2] * w0[2]) ** 2;
    expect(Math.abs(e0 - E) / E).toBeLessThan(1e-12);
    const lambda = Math.sqrt(((I[2] - I[1]) * (L2 - 2 * E * I[0])) / (I[0] * I[1] * I[2]));
    const k2 = ((I[1] - I[0]) * (2 * E * I[2] - L2)) / ((I[2] - I[1]) * (L2 - 2 * E * I[0]));
    const tFlip = ellipticK(Math.sqrt(k2)) / lambda;

    let flipAt = Number.NaN;
    let prev = bodyOmega(s0)[1];
    for (let n = 1; n <= 1200; n++) {
      sim.step(1);
      const st = sim.state();
      expect(Math.abs(st.energy.kinetic - e0) / e0).toBeLessThan(1e-5);
      const L = worldMomentum(st);
      expect(Math.hypot(L[0] - L0[0], L[1] - L0[1], L[2] - L0[2]) / l0).toBeLessThan(1e-5);
      const w2 = bodyOmega(st)[1];
      if (Number.isNaN(flipAt) && prev > 0 && w2 <= 0) flipAt = st.time - (1e-3 * w2) / (w2 - prev);
      prev = w2;
    }
    expect(tFlip).toBeLessThan(1.2);
    expect(Math.abs(flipAt - tFlip) / tFlip).toBeLessThan(0.02);
  });
});
