/**
 * generalized-α's error control (solver.stepTolerance): a step whose local error estimate
 * (h²/12 times the change of the mean acceleration from the previous step) exceeds the
 * tolerance is redone as two half steps. On the rigid pendulum of the long-run tests
 * (θ0 = 1 rad) at a coarse h = 50 ms, against RK4 on its one-dof equation: with the
 * control the angle at t = 2 s is at least ten times closer than without, the simulation
 * still advances by whole steps of h, and a snapshot taken mid-run continues
 * bit-identically (the last mean acceleration is part of the memory).
 */
import { describe, expect, it } from "vitest";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import { OneDofReference, rotate } from "./long-run/helpers";
import { pendulum, pendulumModel, pendulumReduced } from "./long-run/models";

const T = 2;
const h = 0.05;

function angle(sim: ReturnType<typeof loadModel>): number {
  const e = rotate(sim.state().bodies[0].orientation, [1, 0, 0]);
  return Math.atan2(e[0], -e[2]);
}

describe("generalized-α with stepTolerance", () => {
  const { accel } = pendulumReduced();
  const ref = new OneDofReference(accel, pendulum.theta0, 0, T, 200_000);
  ref.step();

  it("at h = 50 ms the angle at 2 s is ten times closer with the control (1e-6 rad per step)", () => {
    const plain = loadModel(pendulumModel({ integrator: "generalized-alpha", dt: h }));
    const controlled = loadModel(
      pendulumModel({ integrator: "generalized-alpha", dt: h, stepTolerance: 1e-6 }),
    );
    plain.step(Math.round(T / h));
    controlled.step(Math.round(T / h));
    expect(controlled.time).toBeCloseTo(T, 12);
    expect(controlled.stepCount).toBe(Math.round(T / h));
    const e0 = Math.abs(angle(plain) - ref.theta);
    const e1 = Math.abs(angle(controlled) - ref.theta);
    expect(e0).toBeGreaterThan(1e-3);
    expect(e1).toBeLessThan(e0 / 10);
  });

  it("a snapshot mid-run continues bit-identically", () => {
    const model = pendulumModel({ integrator: "generalized-alpha", dt: h, stepTolerance: 1e-6 });
    const a = loadModel(model);
    const b = loadModel(model);
    a.step(40);
    b.step(17);
    const c = loadSnapshot(JSON.parse(JSON.stringify(b.snapshot())));
    c.step(23);
    expect(c.stateHash()).toBe(a.stateHash());
  });
});
