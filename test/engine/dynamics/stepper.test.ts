/**
 * dynamics/stepper.ts's runtime pieces: SchemeCoefficients starts with every number field
 * at −0 (doubles from the start, one shared hidden class; see the class comment) and both
 * joint switches off, and hasDynamicStructure recognises a DynamicStructureEffector only
 * by its `dynamicStructure: true` mark.
 */
import { describe, expect, it } from "vitest";
import {
  type DynamicStructureEffector,
  hasDynamicStructure,
  SchemeCoefficients,
} from "../../../src/engine/dynamics/stepper";
import type { ForceEffector } from "../../../src/engine/forces/effector";

describe("SchemeCoefficients", () => {
  it("numbers start at −0, joints at the velocity level, not symmetric", () => {
    const c = new SchemeCoefficients();
    for (const key of [
      "cx",
      "cv",
      "w",
      "rayleighMass",
      "rayleighStiffness",
      "startForceWeight",
      "startVelocityWeight",
    ] as const)
      expect(Object.is(c[key], -0), key).toBe(true);
    expect(c.positionLevel).toBe(false);
    expect(c.symmetricJoints).toBe(false);
  });
});

describe("hasDynamicStructure", () => {
  it("is true only for an effector marked dynamicStructure: true", () => {
    const plain = {} as ForceEffector;
    expect(hasDynamicStructure(plain)).toBe(false);
    const dynamic = {
      dynamicStructure: true,
      beginStep: () => undefined,
    } as unknown as DynamicStructureEffector;
    expect(hasDynamicStructure(dynamic)).toBe(true);
    const notTrue = { dynamicStructure: 1 } as unknown as ForceEffector;
    expect(hasDynamicStructure(notTrue)).toBe(false);
  });
});
