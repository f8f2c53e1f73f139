/**
 * Two conservative trees under the articulated integrator at its defaults (stepTolerance
 * 1e-6 m a sub-step) for 150 s, their energy computed here from the body states (not read
 * from the engine) against the conservation law: gravity alone does work, so
 * E = Σ ½ m v² + ½ ωᵀ I ω + m g z must keep its start's value.
 *
 * - A chain of 20 hinged links of 0.05 m and 0.05 kg (1 m, 1 kg) falling from horizontal
 *   at 5 ms: its swing's period is ~1.7 s, ~90 periods, 30 000 steps.
 * - The whip example (examples/whip.json: the same 20 links on spherical joints) at its
 *   1/240 s: 36 000 steps, cracking at the tip.
 *
 * Before the steps kept their start's energy (articulated.ts keepEnergy) the Runge–Kutta
 * pair's sub-step errors, each within the tolerance, added up in proportion to the time:
 * +3.7e-4 J/s on the chain (+0.054 J at 150 s, +0.22 J by 600 s), +2.2e-4 J/s on the whip
 * (+0.027 J at 150 s, +0.133 J by 600 s). Now within 2e-13 J over 150 s on both, at the same
 * evaluations a step. The bound, 1e-6 of the energy the motion can reach, is
 * far above that rounding and far below any drift.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { readExample } from "../../../support/examples";
import { type MassProperties, mechanicalEnergy, report } from "./helpers";
import { G, hingedChainModel } from "./models";

const SECONDS = 150;

/**
 * The largest |E − E₀| (J) over `seconds` of the model under its solver settings, E from
 * the body states every 0.1 s, and the mean sub-steps a step.
 */
function energyError(
  model: { bodies: { id: string; mass?: number; inertia?: number[] }[] },
  g: number,
  seconds: number,
): { worst: number; substeps: number } {
  const sim = loadModel(model);
  const props: Record<string, MassProperties> = {};
  for (const b of model.bodies)
    props[b.id] = { mass: b.mass ?? 0, inertia: b.inertia as [number, number, number] };
  const energy = () => mechanicalEnergy(sim.state().bodies, props, g).total;
  const E0 = energy();
  const dt = sim.solver.dt;
  const batch = Math.round(0.1 / dt);
  const steps = Math.round(seconds / dt);
  let worst = 0;
  let substeps = 0;
  for (let k = 0; k < steps; k++) {
    sim.step(1);
    substeps += sim.lastStepStats.substeps;
    if ((k + 1) % batch === 0) worst = Math.max(worst, Math.abs(energy() - E0));
  }
  return { worst, substeps: substeps / steps };
}

describe("articulated at its defaults keeps a conservative tree's energy over 150 s", () => {
  it("20 hinged links of 5 cm falling from horizontal, 30 000 steps of 5 ms", () => {
    const n = 20;
    const L = 0.05;
    const m = 0.05;
    const model = hingedChainModel(n, L, m, { integrator: "articulated", dt: 0.005 });
    const { worst, substeps } = energyError(model, G, SECONDS);
    // the most kinetic energy the fall can give: the centre of mass drops at most n L/2
    const reach = (n * m * G * n * L) / 2;
    report("20-link hinged chain 150 s articulated", { worst, relative: worst / reach, substeps });
    expect(worst).toBeLessThan(1e-6 * reach);
  }, 300_000);

  it("the whip example, 36 000 steps of 1/240 s", () => {
    const whip = readExample("whip");
    const g = -(whip.gravity?.[2] ?? 0);
    const { worst, substeps } = energyError(whip, g, SECONDS);
    // m g L: 20 links of 0.05 kg, 1 m in all, released horizontal from the pivot's height
    const reach = whip.bodies.reduce((s, b) => s + (b.mass ?? 0), 0) * g * 1;
    report("whip 150 s articulated", { worst, relative: worst / reach, substeps });
    expect(worst).toBeLessThan(1e-6 * reach);
  }, 300_000);
});
