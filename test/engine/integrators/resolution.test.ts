/**
 * Newmark's defaults follow the springs the step resolves (src/engine/integrators/
 * resolution.ts): the trapezoidal rule (β = ¼, γ = ½) when h √(k/m) ≤ 1 for every spring,
 * the damped member (0.3025, 0.6) otherwise, and whatever the user sets; a spring network
 * the step resolves well takes the central difference (0, ½), whose step is one force
 * evaluation and one solve. The stiff cloth of issue 29, run at the defaults, must not end
 * overstretched without a word.
 */
import { EigenvalueDecomposition, Matrix } from "ml-matrix";
import { describe, expect, it } from "vitest";
import { toMoreauModel } from "../../../bench/compare/engines/moreau";
import { createBodyStates } from "../../../bench/compare/engines/types";
import { probeCloth } from "../../../bench/compare/probes";
import { clothScene } from "../../../bench/compare/scene";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import {
  CENTRAL_DIFFERENCE,
  CENTRAL_DIFFERENCE_H_OMEGA,
  DAMPED_NEWMARK,
  newmarkParameters,
  springNetworkFrequencyBound,
  stiffestSpringFrequency,
  TRAPEZOIDAL,
} from "../../../src/engine/integrators/resolution";
import { newmarkStep } from "../../support/oscillator";

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

/**
 * A chain of particles joined end to end by springs along x, the first spring to ground:
 * masses and stiffnesses as given (kg, N/m), at rest length 0.1 m.
 */
function particleChain(masses: number[], stiffness: number[]): ModelInput {
  return {
    gravity: [0, 0, 0],
    bodies: masses.map((mass, i) => ({
      id: `p${i}`,
      kind: "particle" as const,
      mass,
      position: [0.1 * (i + 1), 0, 0] as [number, number, number],
    })),
    forces: stiffness.map((k, i) => ({
      id: `s${i}`,
      type: "spring" as const,
      a: { body: i === 0 ? "ground" : `p${i - 1}` },
      b: { body: `p${i}` },
      stiffness: k,
    })),
    solver: { integrator: "newmark", dt: 0.001 },
  };
}

describe("springNetworkFrequencyBound", () => {
  const masses = [0.5, 0.1, 2, 0.3, 0.05];
  const stiffness = [200, 50, 800, 120, 30];
  const massOf = (id: string) => (id.startsWith("p") ? masses[Number(id.slice(1))] : 0);
  const model = (m: ModelInput) => loadModel(m).model;

  it("bounds the highest frequency from above (the exact ω_max of a chain, by its eigenvalues)", () => {
    // K of the chain along x (tridiagonal), ω² the eigenvalues of M^{-1/2} K M^{-1/2}; the
    // transverse directions carry the tension alone, 0 at rest
    const n = masses.length;
    const K = Matrix.zeros(n, n);
    stiffness.forEach((k, i) => {
      K.set(i, i, K.get(i, i) + k);
      if (i > 0) {
        K.set(i - 1, i - 1, K.get(i - 1, i - 1) + k);
        K.set(i - 1, i, K.get(i - 1, i) - k);
        K.set(i, i - 1, K.get(i, i - 1) - k);
      }
    });
    const S = new Matrix(n, n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) S.set(i, j, K.get(i, j) / Math.sqrt(masses[i] * masses[j]));
    const omegaMax = Math.sqrt(Math.max(...new EigenvalueDecomposition(S).realEigenvalues));
    const bound = springNetworkFrequencyBound(model(particleChain(masses, stiffness)), massOf);
    expect(bound).not.toBeNull();
    expect(bound as number).toBeGreaterThanOrEqual(omegaMax);
    // Gershgorin's, by hand: largest at p1 (0.1 kg, between s1 of 50 N/m to p0 and s2 of
    // 800 N/m to p2)
    const p1 = 50 * (1 + Math.sqrt(0.1 / 0.5)) + 800 * (1 + Math.sqrt(0.1 / 2));
    expect(bound).toBeCloseTo(Math.sqrt(p1 / 0.1), 10);
    expect(bound as number).toBeLessThan(2 * omegaMax);
  });

  it("is null for anything but particles and springs", () => {
    const chain = particleChain([1, 1], [10, 10]);
    const moving = {
      ...chain,
      bodies: [{ ...chain.bodies[0], kind: "rigid" as const, inertia: [1, 1, 1] }, chain.bodies[1]],
    };
    const joint = {
      ...chain,
      joints: [{ id: "j", type: "spherical" as const, a: { body: "p0" }, b: { body: "p1" } }],
    };
    const contact = { ...chain, contact: { method: "smc" as const } };
    expect(springNetworkFrequencyBound(model(chain), () => 1)).not.toBeNull();
    for (const m of [moving, joint, contact])
      expect(springNetworkFrequencyBound(model(m as ModelInput), () => 1)).toBeNull();
  });
});

describe("newmarkParameters", () => {
  it("keeps the trapezoidal rule while h ω ≤ 1, damps beyond, and never overrides a set value", () => {
    expect(newmarkParameters({}, 0.01, 100)).toEqual(TRAPEZOIDAL); // h ω = 1
    expect(newmarkParameters({}, 0.01, 101)).toEqual(DAMPED_NEWMARK);
    expect(newmarkParameters({ gamma: 0.5 }, 0.01, 1e4)).toEqual({ beta: 0.25, gamma: 0.5 });
    expect(newmarkParameters({ beta: 0.3 }, 0.01, 1e4)).toEqual({ beta: 0.3, gamma: 0.5 });
    // a spring network: the central difference while h ω_max ≤ 1.8
    expect(newmarkParameters({}, 0.01, 50, 180)).toEqual(CENTRAL_DIFFERENCE);
    expect(newmarkParameters({}, 0.01, 50, 181)).toEqual(TRAPEZOIDAL);
    expect(newmarkParameters({ beta: 0.25 }, 0.01, 50, 100)).toEqual(TRAPEZOIDAL);
    expect(CENTRAL_DIFFERENCE_H_OMEGA).toBeLessThan(2); // the central difference's limit
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

describe("the central difference of a damped spring network (Newmark β = 0)", () => {
  // a particle on a zero-length spring with a dashpot, x'' = −ω² x − ζ x' (ζ = c/m): the
  // central difference with the dashpot implicit, a_{n+1} (1 + ζ h/2) = −ω² x_{n+1}
  // − ζ (v_n + h/2 a_n), the step's equation solved exactly
  const k = 40;
  const c = 0.3;
  const m = 0.2;
  const h = 0.01;
  const model = (): ModelInput => ({
    gravity: [0, 0, 0],
    bodies: [{ id: "p", kind: "particle", mass: m, position: [0.3, 0, 0], velocity: [-0.5, 0, 0] }],
    forces: [
      {
        id: "s",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: k,
        damping: c,
        restLength: 0,
      },
    ],
    solver: { integrator: "newmark", dt: h },
  });

  it("is the default, one Newton iteration a step, and follows the recurrence", () => {
    const sim = loadModel(model());
    const w2 = k / m;
    const zeta = c / m;
    let x = 0.3;
    let v = -0.5;
    let a = -w2 * x - zeta * v;
    let newton = 0;
    for (let n = 0; n < 300; n++) {
      sim.step(1);
      newton += sim.state().solver.newtonIterations;
      const x1 = x + h * v + 0.5 * h * h * a;
      const a1 = (-w2 * x1 - zeta * (v + 0.5 * h * a)) / (1 + 0.5 * zeta * h);
      v += 0.5 * h * (a + a1);
      x = x1;
      a = a1;
      const b = sim.state().bodies[0];
      expect(b.position[0]).toBeCloseTo(x, 12);
      expect(b.velocity[0]).toBeCloseTo(v, 12);
    }
    // the undamped recurrence of the test support agrees at c = 0 (one step)
    const s1 = newmarkStep({ x: 0.3, v: -0.5 }, h, w2, 0, 0.5);
    expect(s1.x).toBeCloseTo(0.3 - 0.5 * h - 0.5 * h * h * w2 * 0.3, 15);
    // one force evaluation and one solve: the residual is affine in the acceleration
    expect(newton).toBe(300);
  });
});

describe("the central difference on a soft cloth (the default of a resolved spring network)", () => {
  /** The cloth of clothScene (n × n, 1 kg, its first row pinned) at h = 1/240 s, `solver` extra. */
  const cloth = (n: number, k: number, extra: Record<string, unknown> = {}, sub = 1) => {
    const scene = clothScene(n, k);
    return loadModel({
      ...toMoreauModel(scene),
      solver: { integrator: "newmark", dt: scene.h / sub, ...extra },
    });
  };
  const gap = (a: Float64Array, b: Float64Array) => {
    let d = 0;
    for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
    return d;
  };

  it("is second order with about half the trapezoidal rule's error (against h/16, 40 steps)", () => {
    const positions = (extra: Record<string, unknown>, sub: number) => {
      const sim = cloth(10, 10, extra, sub);
      sim.step(40 * sub);
      return Float64Array.from(sim.system.pos);
    };
    const reference = positions({ beta: 0.25, gamma: 0.5, newtonTolerance: 1e-12 }, 16);
    const central = gap(positions({}, 1), reference);
    const trapezoidal = gap(positions({ beta: 0.25, gamma: 0.5 }, 1), reference);
    const centralHalf = gap(positions({}, 2), reference);
    expect(central).toBeLessThan(0.75 * trapezoidal);
    // second order: the error at h/2 is a quarter of that at h (within the reference's own)
    expect(centralHalf / central).toBeGreaterThan(0.2);
    expect(centralHalf / central).toBeLessThan(0.3);
  }, 60_000);

  it("runs CG on the operator at any size (W = M + γ h D), stopped within Newton's target", () => {
    // 10 × 10: 270 unknowns, below the size from which `auto` takes CG for other schemes
    const run = (extra: Record<string, unknown>, sub = 1) => {
      const sim = cloth(10, 10, extra, sub);
      const krylov: number[] = [];
      for (let s = 0; s < 40; s++) {
        sim.step(sub);
        krylov.push(sim.state().solver.linearIterations);
      }
      return { pos: Float64Array.from(sim.system.pos), krylov };
    };
    const auto = run({});
    const exact = run({ linearSolver: "sparse-lu", newtonTolerance: 1e-12 });
    const fine = run({ linearSolver: "sparse-lu", newtonTolerance: 1e-12 }, 4);
    expect(Math.min(...auto.krylov)).toBeGreaterThan(0);
    expect(Math.max(...exact.krylov)).toBe(0);
    // Newton's target is 5 % of each step's estimated error (newmark.ts NEWMARK_STEP_ERROR,
    // the same acceleration tolerance as the trapezoidal rule's test); what the accepted
    // solves leave in the velocities accumulates in the positions, and after 40 steps it is
    // a small share of the scheme's own error (h against h/4; 14 % here), the solve exact
    // to 1e-9 of it
    const scheme = gap(exact.pos, fine.pos);
    expect(gap(auto.pos, exact.pos)).toBeLessThan(0.25 * scheme);
    expect(gap(run({ linearSolver: "sparse-lu" }).pos, exact.pos)).toBeLessThan(1e-9 * scheme);
  });

  it("a PATCH of dt past its reach takes the trapezoidal rule, and back the central difference", () => {
    // 10 × 10 at k = 10 N/m, 1/100 kg a particle: the bound √(2 · 8 k/m) = 126.5 rad/s,
    // h ω_max ≤ 0.53 at h = 1/240 s and 2.1 at 4 h (the springs still resolved there:
    // 4 h √(k/m) = 0.53), so the default turns trapezoidal and back
    const h = 1 / 240;
    const run = (patches: Record<string, unknown>[]) => {
      const sim = cloth(10, 10);
      for (const patch of patches) {
        sim.update({ solver: patch });
        sim.step(15);
      }
      return Float64Array.from(sim.system.pos);
    };
    const defaults = run([{}, { dt: 4 * h }, { dt: h }]);
    const explicit = run([
      {},
      { dt: 4 * h, beta: 0.25, gamma: 0.5 },
      { dt: h, beta: 0, gamma: 0.5 },
    ]);
    expect(gap(defaults, explicit)).toBe(0);
    // and not the other way round: the central difference kept at 4 h differs
    const kept = run([{}, { dt: 4 * h, beta: 0, gamma: 0.5 }, { dt: h }]);
    expect(gap(defaults, kept)).toBeGreaterThan(1e-6);
  });

  it("stays stable near its limit (h ω_max bound 1.7) over 2000 steps: the balance settles", () => {
    // 10 × 10 particles of 1/100 kg, spacing 1/9 m: the bound √(2 · 8 k / m) h = 1.7 at k
    const n = 10;
    const m = 1 / (n * n);
    const k = ((1.7 * 240) ** 2 * m) / 16;
    const sim = cloth(n, k);
    const errors: number[] = [];
    for (let s = 0; s < 20; s++) {
      sim.step(100);
      errors.push(sim.state().energy.error);
    }
    const { dissipated } = sim.state().energy;
    // a cloth 1 m wide hung from its first row: nowhere below 1.2 m. The balance's error
    // (the central difference's own energy error on the springs through the fall's snap
    // at h ω ≈ 1.7, where its shadow energy departs from the energy by O((h ω)²): about
    // 10 % of the 2.6 J the dashpots take out) stops moving once the cloth has settled: no
    // mode grows
    expect(Math.min(...sim.state().bodies.map((b) => b.position[2]))).toBeGreaterThan(-1.2);
    expect(Math.abs(errors[19])).toBeLessThan(0.15 * dissipated);
    expect(Math.abs(errors[19] - errors[14])).toBeLessThan(0.01 * dissipated);
  }, 60_000);
});
