import { describe, expect, it } from "vitest";
import { loadModel } from "../../../src/engine/index";
import { type ExampleModel, readExample } from "../../support/examples";

const example = (name: string) => readExample<ExampleModel & { contact: { method: string } }>(name);

describe("assembly with nonsmooth contacts", () => {
  it("a resting stack (nsc): UNSUPPORTED_CONTACTS naming the active contacts, state untouched", () => {
    const model = example("box-stack");
    expect(model.contact.method).toBe("nsc");
    const sim = loadModel(model);
    sim.step(50);
    const active = sim.contactModel?.nonsmooth?.activeCount ?? 0;
    expect(active).toBeGreaterThan(0);
    const twin = loadModel(model);
    twin.step(50);
    const r = sim.assemble({}, true);
    expect(r.exitFlag).toBe("UNSUPPORTED_CONTACTS");
    expect(r.warnings[0]).toContain(`${active} active nonsmooth contacts`);
    expect(r.reactions).toEqual([]);
    // nothing was applied: the run continues exactly as one never asked
    sim.step(50);
    twin.step(50);
    expect(sim.stateHash()).toBe(twin.stateHash());
  });

  it("before the first step no contact is active: the analysis runs", () => {
    const r = loadModel(example("box-stack")).assemble();
    expect(r.exitFlag).toBe("SUCCESS");
  });
});
