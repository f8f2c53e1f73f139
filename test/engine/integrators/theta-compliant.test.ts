/**
 * The θ-schemes with compliant contact (theta-scheme.ts, `impacts`): at θ = ½ (Moreau–Jean's
 * default) a step in which a compliant contact starts or stops pushing, or whose Newton
 * iterations did not converge, is redone with backward Euler from the same start, as
 * Newmark's (newmark.ts), and such a backward-Euler step that still does not converge is
 * halved rather than kept.
 *
 *  - Two soft fem blocks dropped 2 mm onto each other on a floor, stiff linear contact per
 *    unit area (k = 1e7 N/m³, stepDamping ½), h = 5 ms, 2 s: energy.error never exceeds
 *    the energy the drop can release (m g · 2 mm = 9.81 mJ), no step is kept unconverged,
 *    and the blocks come to rest (every node slower than 5 cm/s at the end, the top block
 *    still on the bottom one). Before, the trapezoidal step integrated each switching
 *    contact force as if it acted over the whole step: +2.9 J at 0.5 s, 1.8e3 J at 1 s,
 *    diverged at step 376, with unconverged steps kept.
 *  - The energy balance of such a redone step weighs the forces with backward Euler's
 *    weight: Integrator.forceWeight reads 1 after it, θ after a step without a switch.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { SOFT_STACK_DROP, softStack } from "../../support/fem";

const SMC = {
  method: "smc",
  behavior: { type: "linear", stiffness: 1e7, perUnitArea: true, stepDamping: 0.5 },
};

function maxSpeed(state: { bodies: { velocity?: number[] }[] }): number {
  let v = 0;
  for (const b of state.bodies) if (b.velocity) v = Math.max(v, Math.hypot(...b.velocity));
  return v;
}

describe("moreau-jean with compliant contact between fem bodies", () => {
  it("does not gain energy at the contacts' switches, keeps no unconverged step, and rests", () => {
    const sim = loadModel(softStack(SMC, { integrator: "moreau-jean", dt: 0.005 }));
    let worst = Number.NEGATIVE_INFINITY;
    let unconverged = 0;
    for (let i = 0; i < 400; i++) {
      sim.step(1);
      const s = sim.state();
      worst = Math.max(worst, s.energy.error);
      if (!s.solver.newtonConverged) unconverged++;
    }
    const s = sim.state();
    expect(worst).toBeLessThanOrEqual(SOFT_STACK_DROP);
    expect(unconverged).toBe(0);
    expect(maxSpeed(s)).toBeLessThan(0.05);
    const top = s.fem?.find((f) => f.id === "top")?.positions ?? [];
    let zmin = Number.POSITIVE_INFINITY;
    for (let k = 2; k < top.length; k += 3) zmin = Math.min(zmin, top[k]);
    expect(zmin).toBeGreaterThan(0.099);
  });

  it("weighs a redone step's forces as backward Euler's", () => {
    const sim = loadModel(softStack(SMC, { integrator: "moreau-jean", dt: 0.005 }));
    // the top block falls 2 mm: its first contacts switch on within the first 30 steps
    const integrator = (sim as unknown as { integrator: { forceWeight: number } }).integrator;
    const weights = new Set<number>();
    for (let i = 0; i < 40; i++) {
      sim.step(1);
      weights.add(integrator.forceWeight);
    }
    expect([...weights].sort()).toEqual([0.5, 1]);
  });
});
