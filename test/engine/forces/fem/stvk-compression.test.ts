/**
 * St Venant–Kirchhoff under compression at coarse steps (materials.ts leastStretch,
 * FemEffector.strainFault). A free block, 0.2 m of 2 × 2 × 2 cells, ρ = 500 kg/m³,
 * E = 1e7 Pa, ν = 0.3, no gravity, given the uniform compression v = −A (x − c): its
 * kinetic energy ½ Σ m_i A² |x_i − c|² (computed here) is far below the energy that could
 * crush it (ψ(F = 0) V = (3μ/4 + 9λ/8) V = 7.5e4 J), so the true motion is a small
 * vibration (|det F − 1| < 0.15) that keeps it. Newton at h = 10 ms lands on StVK's inverted
 * branch (ψ has a rest state at F = −I and no barrier at det F = 0): under newmark at
 * A = 100/s the first step ended with det F = −0.997 and 1.7e4 J of energy for 300, at
 * A = 40/s the second with det F = −1.2, and the runs went on inverted, silently, until
 * Newton failed at step 118. Now the step ends the run `diverged` at its last good state
 * with a message naming the body, the element, the material and the cures; at h = 1 ms the
 * same runs keep the energy and the block.
 */
import { describe, expect, it } from "vitest";
import { DivergenceError, loadModel } from "../../../../src/engine/index";

const CENTRE = [0, 0, 1];

function crushedBlock(integrator: string, dt: number, rate: number) {
  const sim = loadModel({
    gravity: [0, 0, 0],
    bodies: [{ id: "wall", fixed: true }],
    fem: [
      {
        id: "box",
        box: { size: [0.2, 0.2, 0.2], resolution: [2, 2, 2], center: CENTRE },
        density: 500,
        youngModulus: 1e7,
        poissonRatio: 0.3,
        material: "stvk",
      },
    ],
    solver: { dt, integrator },
  });
  const s = sim.system;
  let kinetic = 0;
  // bodies 1… are the nodes (0 is the fixed wall)
  for (let b = 1; b < s.numBodies; b++)
    for (let k = 0; k < 3; k++) {
      const v = -rate * (s.pos[3 * b + k] - CENTRE[k]);
      s.vel[3 * b + k] = v;
      kinetic += 0.5 * s.mass[b] * v * v;
    }
  return { sim, kinetic };
}

describe("St Venant–Kirchhoff crushed by a coarse step ends diverged, never inverted", () => {
  for (const [integrator, rate] of [
    ["newmark", 40],
    ["newmark", 100],
    ["moreau-jean", 100],
  ] as const)
    it(`${integrator}, ${rate}/s: h = 10 ms diverges naming the element and the cure; h = 1 ms keeps it`, () => {
      const coarse = crushedBlock(integrator, 0.01, rate).sim;
      const start = Float64Array.from(coarse.system.pos);
      let error: unknown = null;
      let steps = 0;
      try {
        for (; steps < 20; steps++) coarse.step(1);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DivergenceError);
      const message = (error as Error).message;
      for (const part of ['fem body "box"', "element", "stvk", "smaller step", "neo-hookean"])
        expect(message).toContain(part);
      // within the first two steps, at the last good state (the start's, after one step)
      expect(steps).toBeLessThan(2);
      expect(coarse.time).toBeCloseTo(0.01 * steps, 12);
      if (steps === 0) expect(Array.from(coarse.system.pos)).toEqual(Array.from(start));
      // the fine step: no fault, the energy kept (no damping: energy–momentum step)
      const { sim: fine, kinetic } = crushedBlock(integrator, 0.001, rate);
      for (let k = 0; k < 200; k++) fine.step(1);
      expect(Math.abs(fine.state().energy.total / kinetic - 1)).toBeLessThan(1e-8);
    }, 120_000);

  it("moreau-jean, 40/s: Newton stays on the block's branch at h = 10 ms, and the run goes on", () => {
    const { sim, kinetic } = crushedBlock("moreau-jean", 0.01, 40);
    for (let k = 0; k < 100; k++) sim.step(1);
    expect(Math.abs(sim.state().energy.total / kinetic - 1)).toBeLessThan(1e-8);
  }, 120_000);
});
