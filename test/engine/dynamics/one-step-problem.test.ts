import { describe, expect, it } from "vitest";
import { SolverSettings } from "../../../schemas/model";
import { isVelocityLevel } from "../../../src/engine/dynamics/one-step-problem";
import { loadModel } from "../../../src/engine/index";
import { type ExampleModel, readExample } from "../../support/examples";

const VELOCITY_LEVEL: Record<string, boolean> = {
  "moreau-jean": true,
  "backward-euler": true,
  "symplectic-euler": true,
  newmark: false,
  "generalized-alpha": false,
  articulated: false,
};

const names = SolverSettings.shape.integrator.unwrap().options as readonly string[];

describe("isVelocityLevel", () => {
  it("classifies every integrator of the model format", () => {
    expect([...names].sort()).toEqual(Object.keys(VELOCITY_LEVEL).sort());
    for (const name of names) expect(isVelocityLevel(name), name).toBe(VELOCITY_LEVEL[name]);
  });

  it("decides which integrators take nonsmooth contact", () => {
    const model = readExample<ExampleModel & { contact: { method: string } }>("bouncing-ball");
    expect(model.contact.method).toBe("nsc");
    for (const integrator of names) {
      // the example's theta is moreau-jean's own setting
      const solver: Record<string, unknown> = { ...model.solver };
      delete solver.theta;
      const load = () => loadModel({ ...model, solver: { ...solver, integrator } });
      if (VELOCITY_LEVEL[integrator]) expect(load, integrator).not.toThrow();
      else
        expect(load, integrator).toThrow(
          integrator === "articulated"
            ? /nonsmooth contact \(impulses\) is not stepped by it/
            : /velocity-level integrator/,
        );
    }
  });
});
