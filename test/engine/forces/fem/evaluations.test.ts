/**
 * How often a step evaluates the fem bodies' stresses. `newmark` at its defaults
 * (β = ¼, γ = ½) steps with fem bodies as `generalized-alpha` at ρ∞ = 1 without its error
 * control (README, Deformable bodies, "Spinning"): the same Newton iterations on the same
 * energy–momentum force, and one end pass a step (FemEffector.endMeanStep, which keeps
 * P(F_{n+1}) for the next step's start). Generalized-alpha's error control takes the end's
 * acceleration M⁻¹ f(x_{n+1}) too, and evaluated every element's P(F_{n+1}) once more for
 * it: 2 of the 7 passes a step over the elements on this block. It now takes the stresses
 * the end pass kept at the same positions (FemEffector keptVersion), bit for bit (the
 * trajectories, energies and solver figures of the block on the swinging link, every
 * material and tangent, with and without the error control's halvings, hashed the same
 * before and after).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  CorotationalMaterial,
  StVenantKirchhoffMaterial,
} from "../../../../src/engine/forces/fem/materials";
import { loadModel } from "../../../../src/engine/index";

const CELLS = [3, 2, 2];
const STEPS = 10;

/** A free block spinning (no gravity), spin.test.ts's. */
function block(integrator: string, material: "stvk" | "corotational") {
  const centre = [0, 0, 1];
  const sim = loadModel({
    gravity: [0, 0, 0],
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "box",
        box: { size: [0.3, 0.2, 0.1], resolution: [...CELLS], center: centre },
        density: 700,
        youngModulus: 1e8,
        material,
      },
    ],
    solver: { dt: 0.005, integrator },
  });
  const s = sim.system;
  for (let b = 1; b < s.numBodies; b++) {
    const r = [0, 1, 2].map((k) => s.pos[3 * b + k] - centre[k]);
    // ω × r, ω = (3, 2, 10) rad/s (spin.test.ts)
    const v = [2 * r[2] - 10 * r[1], 10 * r[0] - 3 * r[2], 3 * r[1] - 2 * r[0]];
    for (let k = 0; k < 3; k++) s.vel[3 * b + k] = v[k];
  }
  return sim;
}

/** Stress evaluations P(F) (the material's `evaluate`) and Newton iterations a step. */
function perStep(integrator: string, material: "stvk" | "corotational") {
  const sim = block(integrator, material);
  // the first step builds the memories (generalized-alpha's start acceleration)
  sim.step(1);
  const prototype =
    material === "stvk" ? StVenantKirchhoffMaterial.prototype : CorotationalMaterial.prototype;
  const evaluate = vi.spyOn(prototype, "evaluate");
  let newton = 0;
  let substeps = 0;
  for (let k = 0; k < STEPS; k++) {
    sim.step(1);
    newton += sim.state().solver.newtonIterations;
    substeps += sim.state().solver.substeps;
  }
  const evaluations = evaluate.mock.calls.length / STEPS;
  evaluate.mockRestore();
  return { evaluations, newton: newton / STEPS, substeps };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("generalized-alpha at ρ∞ = 1 evaluates the fem stresses as newmark's same scheme", () => {
  for (const material of ["stvk", "corotational"] as const)
    it(`${material}: as many P(F) a step as newmark, one end pass`, () => {
      const newmark = perStep("newmark", material);
      const alpha = perStep("generalized-alpha", material);
      // the same scheme, no step halved: the same iterations
      expect(alpha.substeps).toBe(STEPS);
      expect(newmark.substeps).toBe(STEPS);
      expect(alpha.newton).toBe(newmark.newton);
      // (576 a step stvk, 696 corotational, measured); before, generalized-alpha took one
      // more an element (60) a step: its error control's end forces
      expect(alpha.evaluations).toBe(newmark.evaluations);
    });
});
