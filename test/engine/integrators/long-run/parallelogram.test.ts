/**
 * A planar parallelogram linkage of three cells turning over and over through its flat
 * configurations, against the exact one-dof motion.
 *
 * Three equal cranks (length L = 0.4 m) pinned to the ground at x = 0, d, 2d and at their
 * tips to one rigid coupler bar, all axes along y, gravity −z (models.ts). The coupler
 * translates without rotating, so the mechanism reduces to the cranks' angle θ with
 * constant inertia (models.ts, parallelogramReduced):
 *   T = ½ J θ̇²,  J = n m_c L²/3 + m_k L²,   V = g S sin θ,  S = n m_c L/2 + m_k L,
 *   J θ̈ = −g S cos θ.
 * Started hanging (θ = −π/2) with ½ J θ̇² = 3 g S, the cranks turn over (E = 2 g S > g S,
 * the top's potential), passing θ ≡ 0 and θ ≡ π, where cranks, pivots and coupler are
 * collinear: there the constraint Jacobian loses rank (the coupler could also turn about
 * y to first order: the velocity constraints admit a second direction), twice per turn.
 * The run covers 22 such passes (≥ 20 asserted) in 7 s.
 *
 * The reference θ(t) is RK4 on J θ̈ = −g S cos θ with a step 100 times smaller than the
 * engine's (its error, ~1e-13 rad here, is nothing against 1e-3 rad). The crank angle
 * comes from crank 0's orientation (its body x axis is the crank). Asserted at every step:
 * |θ − θ_ref| ≤ 1e-3 rad and |E − E_0| ≤ 1e-4 of the energy scale, taken as the largest
 * kinetic energy of the motion, E − V_min = 3 g S (10.6 J): the energy the mechanism
 * exchanges between kinetic and potential (the total itself depends on where the
 * potential's zero is).
 * A yardstick, not asserted: generalized-α run on the one-dof equation itself (helpers.ts,
 * ScalarGeneralizedAlpha) stays within 4.1e-4 rad and 6e-6 of the energy scale at h = 1 ms,
 * ρ∞ = 0.9 or 1 (the length and duration are chosen for that margin; with L = 0.2 m and 25
 * passes it was 9e-4 rad); the test reports it beside the engine's error.
 * In maximal coordinates the crank's phase error is about 6 times the 1-dof scheme's (each
 * link's rotation is integrated in the world frame, and the joints' start-direction forces
 * add a phase error of the order of (hω)²/8 per step): 2.5e-3 rad at h = 1 ms, so the angle
 * is asserted at h = 0.5 ms, and at 1 ms that it is four times larger (second order).
 * Engine cost: 4 bodies and 6 revolute joints, 14000 + 14000 + 7000 steps.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { OneDofReference, report, rotate, ScalarGeneralizedAlpha, unwrap } from "./helpers";
import { G, parallelogramModel, parallelogramReduced, parallelogramStart } from "./models";

const DURATION = 7;

function run(solver: Record<string, unknown>) {
  const h = solver.dt as number;
  const sim = loadModel(parallelogramModel(solver));
  const { J, S, accel } = parallelogramReduced();
  const { theta0, rate0 } = parallelogramStart();
  const reference = new OneDofReference(accel, theta0, rate0, h, 100);
  const rhoInfinity = (solver.rhoInfinity as number | undefined) ?? 0.9;
  const scheme = new ScalarGeneralizedAlpha(accel, theta0, rate0, rhoInfinity, h);
  let schemeAngle = 0; // max |θ − θ_ref| of the scalar scheme, reported
  const E0 = sim.state().energy.total;
  const scale = 3 * G * S; // the largest kinetic energy, ½ J θ̇² at θ = −π/2
  let theta = theta0;
  let angle = 0; // max |θ − θ_ref| (rad)
  let energy = 0; // max |E − E0| / scale
  let passes = 0; // flat configurations passed (θ crossing a multiple of π)
  let coupler = 0; // max rotation of the coupler (rad), reported
  const steps = Math.round(DURATION / h);
  for (let n = 1; n <= steps; n++) {
    try {
      sim.step(1);
    } catch (err) {
      // say where the mechanism was: the flat configurations are θ ≡ 0 (mod π)
      throw new Error(
        `${(err as Error).message} [θ = ${theta.toFixed(4)} rad at step ${n - 1}, ${passes} flat configurations passed]`,
      );
    }
    reference.step();
    const st = sim.state();
    const e = rotate(st.bodies[0].orientation, [1, 0, 0]);
    const next = unwrap(theta, Math.atan2(e[2], e[0]));
    if (Math.floor(next / Math.PI) !== Math.floor(theta / Math.PI)) passes++;
    theta = next;
    angle = Math.max(angle, Math.abs(theta - reference.theta));
    scheme.step();
    schemeAngle = Math.max(schemeAngle, Math.abs(scheme.theta - reference.theta));
    energy = Math.max(energy, Math.abs(st.energy.total - E0) / scale);
    const q = st.bodies[st.bodies.length - 1].orientation;
    coupler = Math.max(coupler, 2 * Math.asin(Math.min(1, Math.hypot(q[1], q[2], q[3]))));
  }
  // the engine starts where the closed form does
  const closed = 0.5 * J * rate0 * rate0 + G * S * Math.sin(theta0);
  return { angle, energy, passes, coupler, schemeAngle, E0error: Math.abs(E0 - closed) / scale };
}

describe("parallelogram linkage of three cells through its flat configurations", () => {
  const results = new Map<string, ReturnType<typeof run>>();
  const cases = [
    ["generalized-α defaults (ρ∞ = 1), h = 0.5 ms", { integrator: "generalized-alpha", dt: 5e-4 }],
    [
      "generalized-α ρ∞ = 0.5, h = 0.5 ms",
      { integrator: "generalized-alpha", dt: 5e-4, rhoInfinity: 0.5 },
    ],
  ] as const;
  for (const [label, solver] of cases)
    it(`${label}: crank angle to 1e-3 rad of the one-dof motion, energy to 1e-4`, () => {
      const r = run(solver);
      results.set(label, r);
      report(`parallelogram ${label}`, r);
      expect(r.E0error).toBeLessThan(1e-12);
      expect(r.passes).toBeGreaterThanOrEqual(20);
      expect(r.angle).toBeLessThanOrEqual(1e-3);
      expect(r.energy).toBeLessThanOrEqual(1e-4);
    });

  it("at h = 1 ms the energy holds as well and the angle error is four times larger (second order)", () => {
    const coarse = run({ integrator: "generalized-alpha", dt: 0.001 });
    report("parallelogram h = 1 ms", coarse);
    expect(coarse.passes).toBeGreaterThanOrEqual(20);
    expect(coarse.energy).toBeLessThanOrEqual(1e-4);
    const fine = results.get(cases[0][0]) ?? run(cases[0][1]);
    const ratio = coarse.angle / fine.angle;
    expect(ratio).toBeGreaterThan(3.5);
    expect(ratio).toBeLessThan(4.5);
  });
});
