/** The matched-accuracy comparison's pieces (bench/compare/matched.ts). */
import { describe, expect, it } from "vitest";
import { moreauEngine } from "../../bench/compare/engines/moreau";
import { createBodyStates, type EngineAdapter } from "../../bench/compare/engines/types";
import {
  configName,
  fastestWithin,
  MATCHED_CONFIGS,
  type MatchedRow,
  parseConfigName,
  substepped,
} from "../../bench/compare/matched";
import { chainScene, type SceneDesc } from "../../bench/compare/scene";

describe("matched comparison", () => {
  it("names every configuration so that it parses back", () => {
    for (const configs of Object.values(MATCHED_CONFIGS))
      for (const c of configs) expect(parseConfigName(configName(c))).toEqual(c);
    expect(parseConfigName("moreau-defaults/tol1e-6")).toEqual({
      engine: "moreau-defaults",
      substeps: 1,
      stepTolerance: 1e-6,
    });
    expect(() => parseConfigName("rapier")).toThrow(/engine\/kN/);
  });

  it("substepped(k) builds the engine on h/k and takes k of its steps a step", () => {
    const built: number[] = [];
    let steps = 0;
    const fake: EngineAdapter = {
      key: "fake",
      version: "0",
      init: async () => {},
      method: () => "fake",
      create(scene: SceneDesc) {
        built.push(scene.h);
        return {
          step: () => {
            steps++;
          },
          read: () => {},
          engineContacts: () => null,
          dispose: () => {},
        };
      },
    };
    const scene = chainScene(2);
    const inst = substepped(fake, 4).create(scene);
    for (let i = 0; i < 3; i++) inst.step();
    expect(built).toEqual([scene.h / 4]);
    expect(steps).toBe(12);
    expect(substepped(fake, 1)).toBe(fake);
  });

  it("Moreau substepped twice is Moreau at h/2 with twice the steps, to the bit", () => {
    const scene = chainScene(3);
    const a = substepped(moreauEngine, 2).create(scene);
    const b = moreauEngine.create({ ...scene, h: scene.h / 2 });
    for (let i = 0; i < 20; i++) a.step();
    for (let i = 0; i < 40; i++) b.step();
    const sa = createBodyStates(scene.bodies.length);
    const sb = createBodyStates(scene.bodies.length);
    a.read(sa);
    b.read(sb);
    expect(Array.from(sa.pos)).toEqual(Array.from(sb.pos));
    expect(Array.from(sa.omega)).toEqual(Array.from(sb.omega));
    // and it moved: the chain falls from the horizontal
    expect(sa.pos[5]).toBeLessThan(-1e-3);
  });

  it("picks each engine's fastest valid setting within each energy bound", () => {
    const row = (config: string, stepsPerSecond: number, energyDrift: number, status = "ok") =>
      ({
        config,
        scene: "S2-100",
        status,
        stepsPerSecond,
        energyDrift,
        jointDrift: 0,
      }) as MatchedRow;
    const rows = [
      row("rapier/k1", 4000, 0.18),
      row("rapier/k8", 600, 0.05),
      row("ammo/k1", 5000, 0.4, "invalid"),
      row("moreau-defaults/tol1e-4", 3400, 0.03),
      row("moreau-defaults/tol1e-6", 2000, 4e-4),
    ];
    const pick = fastestWithin(rows, [1e-3, 0.1, 0.2]);
    const at = (bound: number, engine: string) =>
      pick.find((p) => p.bound === bound && p.engine === engine)?.row?.config ?? null;
    expect(at(1e-3, "rapier")).toBeNull();
    expect(at(1e-3, "moreau-defaults")).toBe("moreau-defaults/tol1e-6");
    expect(at(0.1, "rapier")).toBe("rapier/k8");
    expect(at(0.1, "moreau-defaults")).toBe("moreau-defaults/tol1e-4");
    expect(at(0.2, "rapier")).toBe("rapier/k1");
    expect(at(0.2, "ammo")).toBeNull();
  });
});
