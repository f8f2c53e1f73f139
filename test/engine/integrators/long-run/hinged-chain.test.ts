/**
 * A chain of 5 hinged links of 0.05 m and 0.05 kg (0.25 m, 0.25 kg in all; hinge axes along
 * y, straight out along +x, released at rest) under generalized-alpha at its defaults
 * (dt 5 ms, ρ∞ = 1, stepTolerance left out) for 40 s. Conservative: its energy, computed
 * here from the body states (not read from the engine), must stay at its start within
 * 2 % of m g L/2, the largest kinetic energy it can reach (its centre of mass falls from
 * 0 to at most −L/2). The links are small: the default's former absolute 3e-4 m let its
 * energy stray by 0.064 J = 21 % of m g L/2 = 0.307 J, every step within that tolerance
 * (8 such links over 60 s: 49 %; 20: 53 %); now 3e-4 m per metre of the model's body
 * length, 1.5e-5 m, 0.0040 J = 1.3 % (generalized-alpha.ts, DEFAULT_RELATIVE_STEP_TOLERANCE),
 * at 2.3 sub-steps and 10.7 Newton iterations a step (1.07 and 4.2 before).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { type MassProperties, mechanicalEnergy, report } from "./helpers";
import { G, hingedChainModel } from "./models";

const N = 5;
const L = 0.05;
const MASS = 0.05;

describe("a 5-link hinged chain of 5 cm links for 40 s under generalized-alpha's defaults", () => {
  it("keeps its energy within 2 % of m g L/2", () => {
    const model = hingedChainModel(N, L, MASS, { integrator: "generalized-alpha", dt: 0.005 });
    const sim = loadModel(model);
    const props: Record<string, MassProperties> = {};
    for (const b of model.bodies) props[b.id] = { mass: b.mass, inertia: b.inertia };
    const energy = () => mechanicalEnergy(sim.state().bodies, props, G).total;
    const E0 = energy();
    const scale = (N * MASS * G * N * L) / 2;
    let worst = 0;
    for (let k = 0; k < 40 / sim.solver.dt; k += 10) {
      sim.step(10);
      worst = Math.max(worst, Math.abs(energy() - E0));
    }
    report("5-link hinged chain 40 s generalized-alpha", { worst, relative: worst / scale });
    expect(worst / scale).toBeLessThan(0.02);
  }, 180_000);
});
