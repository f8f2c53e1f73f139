/**
 * Constrained time integration in every integrator: a 10-link pendulum chain of rigid
 * links on spherical joints swings for 10 s; the joint drift (distance between the two
 * anchor points of each joint, computed here from the body states) stays below 1e-6 m.
 */
import { describe, expect, it } from "vitest";
import { chainModel } from "../../../bench/scenes";
import { loadModel } from "../../../src/engine/index";
import { bodyPoint } from "../../support/quat";

type St = ReturnType<ReturnType<typeof loadModel>["state"]>;

function worldPoint(st: St, body: number, p: [number, number, number]): number[] {
  return body < 0 ? p : bodyPoint(st.bodies[body], p);
}

function maxDrift(st: St, links: number): number {
  let d = 0;
  for (let k = 0; k < links; k++) {
    const a = k === 0 ? [0, 0, 0] : worldPoint(st, k - 1, [0.05, 0, 0]);
    const b = worldPoint(st, k, [-0.05, 0, 0]);
    d = Math.max(d, Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]));
  }
  return d;
}

describe("10-link pendulum chain, 10 s", () => {
  for (const integrator of [
    "newmark",
    "backward-euler",
    "symplectic-euler",
    "moreau-jean",
  ] as const)
    it(`${integrator}: joint drift stays below 1e-6 m and the chain swings`, () => {
      const h = 0.005;
      const sim = loadModel(chainModel({ links: 10, dt: h, integrator }));
      let drift = 0;
      let lowest = 0;
      for (let n = 0; n < 10 / h; n++) {
        sim.step(1);
        const st = sim.state();
        drift = Math.max(drift, maxDrift(st, 10));
        lowest = Math.min(lowest, ...st.bodies.map((b) => b.position[2]));
      }
      expect(drift).toBeLessThan(1e-6);
      // it really swung down: the tip link went well below the pivot
      expect(lowest).toBeLessThan(-0.5);
      // the reactions are reported per joint
      expect(sim.state().joints.map((j) => j.id)).toEqual(
        Array.from({ length: 10 }, (_, k) => `j${k}`),
      );
    });
});

describe("100-link chain through its whip (the benchmark's S2-100, 1000 steps of 1/240 s)", () => {
  // The velocities-first projection of the θ-schemes and the positions-first one of
  // Newmark (integrator.ts, ProjectionOrder) both hold the joints to the projection's
  // 1e-12 m while the chain's free end whips (joint speeds of ~10 m/s).
  // Newmark also without the gyroscopic Jacobian (the benchmark's setting: the step's
  // Schur complement is then G M⁻¹ Gᵀ, the projection's matrix).
  for (const [integrator, gyroscopicJacobian] of [
    ["moreau-jean", true],
    ["newmark", true],
    ["newmark", false],
  ] as const)
    it(`${integrator}${gyroscopicJacobian ? "" : " without the gyroscopic Jacobian"}: joint drift below 1e-10 m`, () => {
      const model = chainModel({ links: 100, dt: 1 / 240, integrator });
      const sim = loadModel({ ...model, solver: { ...model.solver, gyroscopicJacobian } });
      let drift = 0;
      let fastest = 0;
      for (let n = 0; n < 1000; n++) {
        sim.step(1);
        const st = sim.state();
        drift = Math.max(drift, maxDrift(st, 100));
        for (const b of st.bodies) fastest = Math.max(fastest, Math.hypot(...b.velocity));
      }
      expect(drift).toBeLessThan(1e-10);
      expect(fastest).toBeGreaterThan(10);
    });
});

describe("solver.jointTolerance", () => {
  // The post-step projection stops once the joints are within the tolerance asked for:
  // the drift, measured here from the body states, never exceeds it, and a loose
  // tolerance is really used (the drift rises above what the default 1e-12 m leaves).
  for (const integrator of ["newmark", "moreau-jean"] as const)
    it(`${integrator}: drift stays within jointTolerance = 1e-7 m`, () => {
      const tolerance = 1e-7;
      const model = chainModel({ links: 10, dt: 0.005, integrator });
      const sim = loadModel({ ...model, solver: { ...model.solver, jointTolerance: tolerance } });
      let drift = 0;
      for (let n = 0; n < 400; n++) {
        sim.step(1);
        drift = Math.max(drift, maxDrift(sim.state(), 10));
      }
      // ‖C‖∞ ≤ τ per component: the distance of the two anchors is at most √3 τ
      expect(drift).toBeLessThanOrEqual(Math.sqrt(3) * tolerance);
      expect(drift).toBeGreaterThan(1e-10);
    });

  it("is validated: a tolerance of 0 names its path", () => {
    const model = chainModel({ links: 2 });
    expect(() => loadModel({ ...model, solver: { ...model.solver, jointTolerance: 0 } })).toThrow(
      /solver\.jointTolerance/,
    );
  });
});
