/**
 * The gyroscopic term τ = −ω × (I_w ω): hand values, no work, its Jacobians, and the
 * midpoint rate step symplectic Euler takes it with (midpointRotation).
 */
import { describe, expect, it } from "vitest";
import { GyroscopicEffector, midpointRotation } from "../../../src/engine/forces/gyroscopic";
import {
  addPositionIncrement,
  clearForces,
  getVelocity,
  setVelocity,
} from "../../../src/engine/model/body-system";
import { MatrixType } from "../../../src/engine/solvers/linear/linear-solver";
import { mulberry32 } from "../../support/random";
import {
  checkJacobians,
  denseJacobian,
  expectExactJacobians,
  particle,
  randomizeState,
  rigid,
  system,
} from "./jacobian-check";

const S = Math.SQRT1_2;
const close = (v: number[], digits = 12) => v.map((x) => expect.closeTo(x, digits));

describe("gyroscopic term", () => {
  it("τ = −ω × (I_w ω) with I_w = R I Rᵀ", () => {
    const sys = system(
      rigid("a", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
      rigid("b", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3], orientation: [S, 0, 0, S] }),
      particle("p", 1, [0, 0, 0]),
    );
    sys.omega.set([1, 1, 0, 1, 1, 0, 0, 0, 0]);
    const gy = new GyroscopicEffector(sys);
    clearForces(sys);
    gy.applyForces(0);
    // a: Iω = (1,2,0), ω × Iω = (0,0,1) → τ = (0,0,−1)
    // b: turned 90° about z, I_w = diag(2,1,3): Iω = (2,1,0), ω × Iω = (0,0,−1) → τ = (0,0,1)
    expect(Array.from(sys.torque)).toEqual(close([0, 0, -1, 0, 0, 1, 0, 0, 0]));
    expect(Array.from(sys.force)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(gy.bodies.length).toBe(2);
    expect(gy.potentialEnergy()).toBe(0);
  });

  it("does no work: ω·τ = 0 for random states", () => {
    const rng = mulberry32(5);
    const sys = system(rigid("a", 1, [0, 0, 0]));
    const gy = new GyroscopicEffector(sys);
    for (let k = 0; k < 10; k++) {
      randomizeState(sys, rng);
      clearForces(sys);
      gy.applyForces(0);
      const w = sys.omega;
      const t = sys.torque;
      expect(Math.abs(w[0] * t[0] + w[1] * t[1] + w[2] * t[2])).toBeLessThan(1e-14);
    }
  });
});

describe("gyroscopic Jacobians (FD check)", () => {
  it("gyroscopic term (full inertia, rotated bodies)", () => {
    const res = checkJacobians(
      () =>
        system(
          rigid("r1", 1, [0, 0, 0]),
          particle("p", 1, [1, 0, 0]),
          rigid("r2", 3, [0, 1, 0], { inertia: [1, 0, 0, 0, 2, 0, 0, 0, 3] }),
        ),
      (s) => new GyroscopicEffector(s),
      { configurations: 6 },
    );
    expectExactJacobians(res, true);
    expect(res.types.every((t) => t === MatrixType.GENERAL)).toBe(true);
  });

  it("gyroscopic Jacobians follow the state: after setVelocity and a pose change they equal a fresh effector's", () => {
    // the effector keeps I_w ω and [ω]× I_w between its two Jacobians under stateVersion
    const make = () =>
      system(rigid("r", 3, [0, 1, 0], { inertia: [1, 0.2, 0, 0.2, 2, 0.1, 0, 0.1, 3] }));
    const sys = make();
    const rng = mulberry32(5);
    randomizeState(sys, rng);
    const eff = new GyroscopicEffector(sys);
    const before = [denseJacobian(sys, eff, "position"), denseJacobian(sys, eff, "velocity")];
    const u = new Float64Array(sys.numDofs);
    getVelocity(sys, u);
    for (let i = 3; i < 6; i++) u[i] = 2 * rng() - 1;
    setVelocity(sys, u);
    addPositionIncrement(sys, Float64Array.of(0, 0, 0, 0.3, -0.2, 0.1), 1);
    const fresh = new GyroscopicEffector(sys);
    for (const which of ["position", "velocity"] as const) {
      const a = denseJacobian(sys, eff, which);
      const b = denseJacobian(sys, fresh, which);
      expect(Array.from(a)).toEqual(Array.from(b));
    }
    // the state did change the Jacobians
    expect(denseJacobian(sys, eff, "velocity")).not.toEqual(before[1]);
  });
});

describe("midpointRotation: I (ω₂ − ω₁) = h (τ − ω̄ × I ω̄), ω̄ = ½ (ω₁ + ω₂)", () => {
  /** A random symmetric positive definite inertia R diag(d) Rᵀ, principal moments 1 : 10. */
  function randomInertia(rng: () => number): Float64Array {
    const sys = system(
      rigid("r", 1, [0, 0, 0], { inertia: [1, 0, 0, 0, 1 + 4 * rng(), 0, 0, 0, 10] }),
    );
    randomizeState(sys, rng);
    return Float64Array.from(sys.inertiaWorld.subarray(0, 9));
  }
  const mul = (I: Float64Array, x: ArrayLike<number>) =>
    [0, 1, 2].map((r) => I[3 * r] * x[0] + I[3 * r + 1] * x[1] + I[3 * r + 2] * x[2]);
  const dot = (a: ArrayLike<number>, b: ArrayLike<number>) =>
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  const cross = (a: ArrayLike<number>, b: ArrayLike<number>) => [
    a[1] * b[2] - a[2] * b[1],
    a[2] * b[0] - a[0] * b[2],
    a[0] * b[1] - a[1] * b[0],
  ];

  it("solves its equation to rounding, with and without a torque: always up to h |ω| = 1.25, mostly up to 3", () => {
    const rng = mulberry32(11);
    const out = new Float64Array(3);
    const h = 0.01;
    let failures = 0;
    for (let k = 0; k < 400; k++) {
      const I = randomInertia(rng);
      const hw = k < 200 ? (1.25 * (k + 1)) / 200 : 1.25 + (1.75 * (k - 199)) / 200;
      const w1 = Float64Array.from([rng() - 0.5, rng() - 0.5, rng() - 0.5]);
      const scale = hw / h / Math.hypot(...w1);
      for (let i = 0; i < 3; i++) w1[i] *= scale;
      const tau = Float64Array.from(k % 2 === 0 ? [0, 0, 0] : [3 * rng(), -5 * rng(), rng()]);
      const solved = midpointRotation(out, 0, I, 0, w1, 0, tau, 0, h);
      if (k < 200) expect(solved).toBe(true);
      if (!solved) {
        failures++;
        continue;
      }
      // the residual, written out: I (ω₂ − ω₁) + h (ω̄ × I ω̄ − τ)
      const mean = [0, 1, 2].map((i) => 0.5 * (w1[i] + out[i]));
      const jump = mul(
        I,
        [0, 1, 2].map((i) => out[i] - w1[i]),
      );
      const gyro = cross(mean, mul(I, mean));
      const terms = Math.hypot(...mul(I, w1)) * (1 + hw) + h * Math.hypot(...tau);
      for (let i = 0; i < 3; i++)
        expect(Math.abs(jump[i] + h * (gyro[i] - tau[i]))).toBeLessThan(1e-13 * terms);
      if (k % 2 === 0) {
        // torque-free: kinetic energy ½ ωᵀ I ω and |I ω| unchanged (to rounding)
        const e1 = dot(w1, mul(I, w1));
        expect(Math.abs(dot(out, mul(I, out)) - e1)).toBeLessThan(1e-13 * e1);
        const l1 = Math.hypot(...mul(I, w1));
        expect(Math.abs(Math.hypot(...mul(I, out)) - l1)).toBeLessThan(1e-13 * l1);
      }
    }
    // beyond h |ω| = 1.25 Newton may fail (the integrator then halves the step): rarely
    expect(failures).toBeLessThan(20);
  });

  it("an isotropic body (no gyroscopic torque) takes the torque's rate change h I⁻¹ τ exactly", () => {
    const I = Float64Array.of(2, 0, 0, 0, 2, 0, 0, 0, 2);
    const out = new Float64Array(3);
    expect(
      midpointRotation(
        out,
        0,
        I,
        0,
        Float64Array.of(1, -2, 3),
        0,
        Float64Array.of(4, 0, -2),
        0,
        0.5,
      ),
    ).toBe(true);
    expect(Array.from(out)).toEqual([2, -2, 2.5]);
  });
});
