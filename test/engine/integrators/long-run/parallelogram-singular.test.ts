/**
 * backward-euler and newmark through the flat passes of the three-cell parallelogram
 * (models.ts): three equal cranks on one coupler, a redundant loop whose in-plane
 * self-stress (1, −2, 1) along the cranks has a vertical dependent row (the last of its
 * rows in order, the coupler's third pin) whose share is sin θ. Within ~1e-3 rad of the
 * cranks lying flat that row's pivot in the joints' Schur complement is the elimination's
 * round-off over sin² θ, above the semidefinite LDLᵀ's drop test, so the row was kept and
 * its multiplier, round-off over the pivot, reached 1e3 to 1e11 N within a Newton solve;
 * on the joint rows at the end configuration (G̃ = G + s ∂(G v)/∂x of these schemes'
 * velocity level, whose forces and geometric stiffness follow that λ) Newton then failed
 * even at h/16: backward-euler ended `diverged` at 0.51 s (h = 1 ms) and 1.8 s (5 ms),
 * newmark at 24.1 s (1 ms). The factorization now drops a kept row whose pivot is round-off
 * for the unit vector of its combination (semidefinite-ldlt.ts screenRoundOff).
 *
 * Asserted, against the mechanism's own laws (no reference run):
 * - the run goes through (no `diverged`) and passes the flat configurations (θ ≡ 0 mod π)
 *   as many times as its energy allows;
 * - the joints stay closed: every pivot at its ground point and every crank tip on its
 *   coupler point to 1e-9 m;
 * - energy as the scheme implies: backward Euler's step, with gravity constant, changes
 *   E = T + V by −½ |v⁺ − v|²_M (its joint force does no work, G(x⁺) v⁺ = 0) and the
 *   velocity projection takes energy out; only the position projection of the step's
 *   O(h² ω² L) drift moves V either way, so a step may raise E by at most m g times that
 *   (measured 1.0e-5 J at 1 ms, 3.2e-4 J at 5 ms: h²), and E falls (2.15 J in 4 s at 1 ms,
 *   8.9 J in 10 s at 5 ms, where it stops turning over); newmark at γ = ½ (the
 *   trapezoidal rule) keeps it to 1e-4 of the energy scale 3 g S, the largest kinetic
 *   energy (measured 4.5e-5);
 * - the reactions (both report the multipliers consistent with the end state, their
 *   smallest member: ProjectionWorkspace.minimumNorm) against Newton–Euler's equal share
 *   from the one-dof motion (models.ts, parallelogramShares), at every step, the flat
 *   passes included: measured 3.3e-3 N (backward-euler, 1 ms; its step's own λ, reported
 *   before, were 417 N off) and 1.8e-3 N (newmark; at the flat passes the loop's second
 *   self-stress to within sin θ, minimumNorm, carried up to 26 N before).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { norm, report, rotate, sub, unwrap, type Vec3 } from "./helpers";
import {
  G,
  parallelogram,
  parallelogramModel,
  parallelogramReduced,
  parallelogramShares,
} from "./models";

function run(integrator: string, h: number, duration: number) {
  const sim = loadModel(parallelogramModel({ integrator, dt: h }));
  const { n, L, d } = parallelogram;
  const { S } = parallelogramReduced();
  const mid = ((n - 1) * d) / 2;
  const scale = 3 * G * S;
  const E0 = sim.state().energy.total;
  let previous = E0;
  let rise = 0; // largest rise of E in one step (J)
  let spread = 0; // max |E − E0| (J)
  let gap = 0; // largest joint opening (m)
  let force = 0; // largest reaction error (N)
  let theta = -Math.PI / 2;
  let passes = 0;
  const steps = Math.round(duration / h);
  for (let k = 1; k <= steps; k++) {
    try {
      sim.step(1);
    } catch (err) {
      throw new Error(`${(err as Error).message} [θ = ${theta.toFixed(4)}, ${passes} passes]`);
    }
    const st = sim.state();
    const E = st.energy.total;
    rise = Math.max(rise, E - previous);
    spread = Math.max(spread, Math.abs(E - E0));
    previous = E;
    const coupler = st.bodies[n];
    for (let i = 0; i < n; i++) {
      const crank = st.bodies[i];
      const half = rotate(crank.orientation, [L / 2, 0, 0]);
      const pivot = sub(crank.position as Vec3, half);
      const tip: Vec3 = [
        crank.position[0] + half[0],
        crank.position[1] + half[1],
        crank.position[2] + half[2],
      ];
      const on = rotate(coupler.orientation, [i * d - mid, 0, 0]);
      const pin: Vec3 = [
        coupler.position[0] + on[0],
        coupler.position[1] + on[1],
        coupler.position[2] + on[2],
      ];
      gap = Math.max(gap, norm(sub(pivot, [i * d, 0, 0])), norm(sub(tip, pin)));
    }
    const e = rotate(st.bodies[0].orientation, [1, 0, 0]);
    const next = unwrap(theta, Math.atan2(e[2], e[0]));
    if (Math.floor(next / Math.PI) !== Math.floor(theta / Math.PI)) passes++;
    theta = next;
    // Newton–Euler's equal share (models.ts), at every step, the flat passes included
    const { pin: pinForce, pivot: pivotForce } = parallelogramShares(
      theta,
      -st.bodies[0].angularVelocity[1],
    );
    for (const j of st.joints)
      force = Math.max(
        force,
        norm(sub(j.force as Vec3, j.id.startsWith("pin") ? pinForce : pivotForce)),
      );
  }
  const r = { passes, gap, rise, loss: E0 - previous, spread: spread / scale, force };
  report(`parallelogram flat passes ${integrator} h=${h}`, r);
  return r;
}

describe("parallelogram linkage through its flat passes under backward-euler and newmark", () => {
  for (const [h, duration, passes] of [
    [1e-3, 4, 10],
    [5e-3, 10, 10],
  ] as const)
    it(`backward-euler, h = ${h * 1e3} ms, ${duration} s: joints closed, energy falling, equal shares`, () => {
      const r = run("backward-euler", h, duration);
      expect(r.passes).toBeGreaterThanOrEqual(passes);
      expect(r.gap).toBeLessThan(1e-9);
      expect(r.rise).toBeLessThan(3e-5 * (h / 1e-3) ** 2);
      expect(r.loss).toBeGreaterThan(1);
      expect(r.force).toBeLessThan(0.05);
    });

  it("newmark, h = 1 ms, 25 s (75 flat passes): joints closed, energy kept, equal shares", () => {
    const r = run("newmark", 1e-3, 25);
    expect(r.passes).toBeGreaterThanOrEqual(75);
    expect(r.gap).toBeLessThan(1e-9);
    expect(r.spread).toBeLessThan(1e-4);
    expect(r.force).toBeLessThan(0.05);
  });
});
