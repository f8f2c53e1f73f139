/**
 * Newmark's defaults follow the springs the step resolves (src/engine/integrators/
 * resolution.ts): the trapezoidal rule (β = ¼, γ = ½) when h √(k/m) ≤ 1 for every spring,
 * the damped member (0.3025, 0.6) otherwise, and whatever the user sets. The stiff cloth
 * of issue 29, run at the defaults, must not end overstretched without a word.
 */
import { describe, expect, it } from "vitest";
import { toMoreauModel } from "../../../bench/compare/engines/moreau";
import { createBodyStates } from "../../../bench/compare/engines/types";
import { probeCloth } from "../../../bench/compare/probes";
import { clothScene } from "../../../bench/compare/scene";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import {
  DAMPED_NEWMARK,
  newmarkParameters,
  stiffestSpringFrequency,
  TRAPEZOIDAL,
} from "../../../src/engine/integrators/resolution";

describe("stiffestSpringFrequency", () => {
  it("is √(k/m) of the stiffest spring over its lighter moving end; fixed ends do not count", () => {
    const masses: Record<string, number> = { a: 2, b: 0.5, wall: 0 };
    const spring = (id: string, a: string, b: string, stiffness: number) => ({
      id,
      type: "spring" as const,
      a: { body: a, point: [0, 0, 0] as [number, number, number] },
      b: { body: b, point: [0, 0, 0] as [number, number, number] },
      stiffness,
      damping: 0,
    });
    const forces = [
      spring("s1", "a", "wall", 800), // √(800 / 2) = 20
      spring("s2", "a", "b", 50), // √(50 / 0.5) = 10
      spring("s3", "wall", "ground", 1e9), // no moving end
    ] as Parameters<typeof stiffestSpringFrequency>[0];
    expect(stiffestSpringFrequency(forces, (id) => masses[id] ?? 0)).toBe(20);
    expect(stiffestSpringFrequency([], () => 1)).toBe(0);
  });
});

describe("newmarkParameters", () => {
  it("keeps the trapezoidal rule while h ω ≤ 1, damps beyond, and never overrides a set value", () => {
    expect(newmarkParameters({}, 0.01, 100)).toEqual(TRAPEZOIDAL); // h ω = 1
    expect(newmarkParameters({}, 0.01, 101)).toEqual(DAMPED_NEWMARK);
    expect(newmarkParameters({ gamma: 0.5 }, 0.01, 1e4)).toEqual({ beta: 0.25, gamma: 0.5 });
    expect(newmarkParameters({ beta: 0.3 }, 0.01, 1e4)).toEqual({ beta: 0.3, gamma: 0.5 });
    // the damped member is the one with the largest high-frequency dissipation for its γ
    expect(DAMPED_NEWMARK.beta).toBeCloseTo((DAMPED_NEWMARK.gamma + 0.5) ** 2 / 4, 15);
  });
});

/**
 * The stiff cloth (k = 1e4 N/m, 1 kg, its first row pinned, falling from horizontal) at
 * h = 1/240 s with `solver` (integrator newmark and dt, plus `extra`): the strain every 50
 * steps over 1100 steps (the benchmark's warm-up and timed steps).
 */
function stiffCloth(n: number, extra: Partial<NonNullable<ModelInput["solver"]>>): number[] {
  const scene = clothScene(n, 1e4);
  const sim = loadModel({
    ...toMoreauModel(scene),
    solver: { integrator: "newmark", dt: scene.h, ...extra },
  });
  // the benchmark's strain probe, from the positions (largest |l − l0| / l0 over the
  // structural springs)
  const states = createBodyStates(scene.bodies.length);
  const strains: number[] = [];
  for (let k = 0; k < 22; k++) {
    sim.step(50);
    states.pos.set(sim.system.pos.subarray(0, states.pos.length));
    strains.push(probeCloth(scene, states).maxStrain);
  }
  return strains;
}

const rms = (xs: number[]) => Math.sqrt(xs.reduce((s, x) => s + x * x, 0) / xs.length);

describe("the stiff cloth at Newmark's defaults (issue 29)", () => {
  // 8 × 8 particles of 1/64 kg on springs of 1e4 N/m: h ω = √(1e4 · 64) / 240 = 3.3
  it("ends within 1 % strain, where the trapezoidal rule the defaults used to be rings to 1.5 %", () => {
    const defaults = stiffCloth(8, {});
    const trapezoidal = stiffCloth(8, { beta: 0.25, gamma: 0.5 });
    // the static strain of the pinned row is m_total g / (n k) / spacing ≈ 0.01 %; the swing
    // adds a few tenths of a per cent
    expect(defaults.at(-1)).toBeLessThan(0.01);
    expect(rms(defaults.slice(6))).toBeLessThan(0.007);
    // what the defaults were: the unresolved modes keep their energy and the springs ring
    expect(rms(trapezoidal.slice(6))).toBeGreaterThan(0.01);
  }, 60_000);
});
