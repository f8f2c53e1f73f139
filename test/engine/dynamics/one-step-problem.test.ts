/**
 * Which schemes take one-step nonsmooth problems (dynamics/one-step-problem.ts
 * isVelocityLevel): every integrator name of the model format is classified here by its
 * definition (velocity-level schemes step impulses; Newmark and generalized-α step
 * accelerations whose memory would carry P/h), and the classification decides whether a
 * model with nonsmooth contact loads.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SolverSettings } from "../../../schemas/model";
import { isVelocityLevel } from "../../../src/engine/dynamics/one-step-problem";
import { loadModel } from "../../../src/engine/index";

const VELOCITY_LEVEL: Record<string, boolean> = {
  "moreau-jean": true,
  "backward-euler": true,
  "symplectic-euler": true,
  newmark: false,
  "generalized-alpha": false,
};

const names = SolverSettings.shape.integrator.unwrap().options as readonly string[];

describe("isVelocityLevel", () => {
  it("classifies every integrator of the model format", () => {
    expect([...names].sort()).toEqual(Object.keys(VELOCITY_LEVEL).sort());
    for (const name of names) expect(isVelocityLevel(name), name).toBe(VELOCITY_LEVEL[name]);
  });

  it("decides which integrators take nonsmooth contact", () => {
    const model = JSON.parse(
      readFileSync(resolve(import.meta.dirname, "../../../examples/bouncing-ball.json"), "utf8"),
    );
    expect(model.contact.method).toBe("nsc");
    for (const integrator of names) {
      const load = () => loadModel({ ...model, solver: { ...model.solver, integrator } });
      if (VELOCITY_LEVEL[integrator]) expect(load, integrator).not.toThrow();
      else expect(load, integrator).toThrow(/velocity-level integrator/);
    }
  });
});
