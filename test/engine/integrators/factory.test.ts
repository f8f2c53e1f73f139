/**
 * createIntegrator chooses the scheme from solver.integrator and its parameters; checked
 * through the simulation on the oscillator x'' = −ω² x (a particle on a zero-length
 * spring), whose step each scheme gives in closed form (test/support/oscillator.ts):
 * moreau-jean is the θ-method with (θ, w) = (θ, θ), backward Euler (1, 1), symplectic
 * Euler (1, 0); newmark takes β and γ (its defaults: the central difference (0, ½) for a
 * spring network the step resolves, h ω_max ≤ 1.8, the trapezoidal rule (¼, ½) for a
 * resolved spring on a rigid body, hω ≤ 1). With nonsmooth contact the velocity-level schemes step the
 * one-step problem (a ball resting on the floor stays), and newmark is refused.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../schemas/model";

type Vec3 = [number, number, number];

import { loadModel } from "../../../src/engine/index";
import { springParticle } from "../../support/models";
import { newmarkStep, type OscillatorState, thetaMethodStep } from "../../support/oscillator";

const k = 50;
const m = 2;
const h = 0.03;
const start: OscillatorState = { x: 0.4, v: -0.7 };

/**
 * The particle's (x, v) after each of 5 steps of `solver`; with `rigid`, a rigid body in
 * its place (the spring at its centre: the same oscillator, but no longer a spring network).
 */
function run(solver: Record<string, unknown>, rigid = false): OscillatorState[] {
  const model = springParticle({
    stiffness: k,
    mass: m,
    x0: start.x,
    v0: start.v,
    dt: h,
    name: null,
  });
  const bodies = rigid
    ? model.bodies.map((b) => ({ ...b, kind: "rigid" as const, inertia: [1, 1, 1] as Vec3 }))
    : model.bodies;
  const sim = loadModel({
    ...model,
    bodies,
    solver: { ...model.solver, ...solver },
  } as ModelInput);
  const out: OscillatorState[] = [];
  for (let n = 0; n < 5; n++) {
    sim.step(1);
    const b = sim.state().bodies[0];
    out.push({ x: b.position[0], v: b.velocity[0] });
  }
  return out;
}

function expectSteps(got: OscillatorState[], step: (s: OscillatorState) => OscillatorState) {
  let s = start;
  for (const g of got) {
    s = step(s);
    expect(g.x).toBeCloseTo(s.x, 12);
    expect(g.v).toBeCloseTo(s.v, 12);
  }
}

describe("createIntegrator", () => {
  const w2 = k / m;
  it("the θ-schemes: moreau-jean (θ, θ), backward-euler (1, 1), symplectic-euler (1, 0)", () => {
    expectSteps(run({ integrator: "moreau-jean", theta: 0.7 }), (s) =>
      thetaMethodStep(s, h, w2, 0.7, 0.7),
    );
    expectSteps(run({ integrator: "moreau-jean" }), (s) => thetaMethodStep(s, h, w2, 0.5, 0.5));
    expectSteps(run({ integrator: "backward-euler" }), (s) => thetaMethodStep(s, h, w2, 1, 1));
    expectSteps(run({ integrator: "symplectic-euler" }), (s) => thetaMethodStep(s, h, w2, 1, 0));
  });

  it("newmark with its β and γ; by default the central difference for a spring network, the trapezoidal rule for a resolved spring", () => {
    expect(h * Math.sqrt(w2)).toBeLessThan(1);
    expectSteps(run({ integrator: "newmark", beta: 0.3, gamma: 0.7 }), (s) =>
      newmarkStep(s, h, w2, 0.3, 0.7),
    );
    // a particle on a spring is a spring network, h ω = 0.15 ≤ 1.8 (resolution.ts)
    expectSteps(run({ integrator: "newmark" }), (s) => newmarkStep(s, h, w2, 0, 0.5));
    expectSteps(run({ integrator: "newmark" }, true), (s) => newmarkStep(s, h, w2, 0.25, 0.5));
  });

  it("nonsmooth contact: a velocity-level scheme steps it (a resting ball stays), newmark is refused", () => {
    const ball = (integrator: string): ModelInput =>
      ({
        gravity: [0, 0, -9.81],
        bodies: [
          { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
          { id: "ball", mass: 1, position: [0, 0, 0.1], shapes: [{ type: "sphere", radius: 0.1 }] },
        ],
        contact: { method: "nsc" },
        solver: { integrator, dt: 0.01 },
      }) as ModelInput;
    for (const integrator of ["moreau-jean", "backward-euler", "symplectic-euler"]) {
      const sim = loadModel(ball(integrator));
      sim.step(20);
      expect(Math.abs(sim.state().bodies[1].position[2] - 0.1)).toBeLessThan(1e-6);
    }
    expect(() => loadModel(ball("newmark"))).toThrow(/"nsc" needs a velocity-level integrator/);
  });
});
