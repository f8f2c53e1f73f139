/**
 * A free chain of jointed rigid links flailing in free flight under Moreau–Jean's smooth
 * step (θ = w = ½ at the defaults, no contact: theta-scheme.ts, "Joints": the trapezoidal
 * rule with RATTLE's joints, the jointed bodies' rotational rows in angular momentum), the
 * links spinning up to ~100 rad/s. Asked for by the bench chain's landing (bench/impacts.ts,
 * e = ½, 1/240 s): in the contact-free steps after it T + V rose 1.07e-4, 1.08e-4,
 * 2.30e-4, 1.18e-4, 6.2e-5 J … (6.8e-4 J in all) as the links' spin fell from 26 to
 * 14 rad/s. Measured there against the same steps at h/64, the error estimate is not blind
 * to it: its stepError at those steps (6.9e-6 … 2.65e-5 m) was 0.8–1.3 times the true local
 * error (the largest 3.2e-5 m, against the 3.1e-5 m tolerance), the energy change of the
 * h/64 steps 4100 times smaller (h²: the scheme's order), and links of isotropic inertia
 * (no gyroscopic torque) stray as much. The rise is the trapezoid's O(h²) energy error,
 * which at a symmetric step follows the motion (a modified energy's h² term, large while
 * the links spin fast): these tests pin its order and its size against the tolerance.
 *
 * The chain: six of S2's links (0.1 m, 0.1 kg, principal inertias 6.667e-6, 8.667e-5,
 * 8.667e-5 kg·m², test/support/models.ts s2Chain) on spherical joints end to end, no
 * gravity, no ground: bent in 3-D and set turning as one rigid body at ω₀ = (6, 4, 20)
 * rad/s about its centre of mass (v = ω₀ × (x − c), consistent with every joint), which
 * is no relative equilibrium, so the links whip about one another. References from the
 * physics alone: with no external force the linear momentum (zero) and the angular
 * momentum L = Σ R I Rᵀ ω + m x × v about the origin are constant, and so is the energy
 * Σ ½ m v² + ½ ωᵀ R I Rᵀ ω (the joints do no work), all evaluated on the model as written.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../../schemas/model";
import { loadModel } from "../../../../src/engine/index";
import {
  add,
  axisAngle,
  bodyRates,
  cross,
  dot,
  norm,
  report,
  scale,
  sub,
  type Vec3,
} from "./helpers";

const LINKS = 6;
const LENGTH = 0.1;
const MASS = 0.1;
const INERTIA: Vec3 = [6.667e-6, 8.667e-5, 8.667e-5];
const OMEGA: Vec3 = [6, 4, 20];

/** Link k's direction (unit, the link's body x axis in the world): a fixed 3-D zigzag. */
function direction(k: number): Vec3 {
  const a = 0.9 * Math.sin(1.7 * k);
  const b = 0.5 * Math.cos(2.3 * k);
  return [Math.cos(a) * Math.cos(b), Math.sin(a) * Math.cos(b), Math.sin(b)];
}

/** The turn taking the body x axis onto unit d (about x̂ × d by acos(d_x)). */
function alongX(d: Vec3): number[] {
  const axis = cross([1, 0, 0], d);
  const s = norm(axis);
  return s === 0 ? [1, 0, 0, 0] : axisAngle(scale(1 / s, axis), Math.acos(d[0]));
}

function chain(dt: number): ModelInput {
  const ends: Vec3[] = [[0, 0, 0]];
  for (let k = 0; k < LINKS; k++) ends.push(add(ends[k], scale(LENGTH, direction(k))));
  const centres = Array.from({ length: LINKS }, (_, k) => scale(0.5, add(ends[k], ends[k + 1])));
  const c = scale(1 / LINKS, centres.reduce(add, [0, 0, 0]));
  return {
    gravity: [0, 0, 0],
    bodies: centres.map((x, k) => ({
      id: `l${k}`,
      mass: MASS,
      inertia: [...INERTIA],
      position: x,
      orientation: alongX(direction(k)),
      velocity: cross(OMEGA, sub(x, c)),
      angularVelocity: [...OMEGA],
    })),
    joints: Array.from({ length: LINKS - 1 }, (_, k) => ({
      id: `j${k}`,
      type: "spherical",
      a: { body: `l${k}`, point: [LENGTH / 2, 0, 0] },
      b: { body: `l${k + 1}`, point: [-LENGTH / 2, 0, 0] },
    })),
    solver: { integrator: "moreau-jean", dt },
  } as ModelInput;
}

interface Motion {
  position: number[];
  orientation: number[];
  velocity: number[];
  angularVelocity: number[];
}

/** The chain's energy (J), linear momentum and angular momentum about the origin. */
function constants(bodies: readonly Motion[]) {
  let energy = 0;
  let p: Vec3 = [0, 0, 0];
  let L: Vec3 = [0, 0, 0];
  for (const b of bodies) {
    const v = b.velocity as Vec3;
    const spin = bodyRates(b, INERTIA);
    energy += 0.5 * MASS * dot(v, v) + spin.energy;
    p = add(p, scale(MASS, v));
    L = add(L, add(spin.momentum, scale(MASS, cross(b.position as Vec3, v))));
  }
  return { energy, p, L };
}

/** The constants of the model as written (the start state, before the engine). */
function startConstants(model: ModelInput) {
  return constants(
    (model.bodies as unknown as Motion[]).map((b) => ({ ...b, orientation: [...b.orientation] })),
  );
}

describe("a free jointed chain flailing at up to ~100 rad/s under Moreau–Jean", () => {
  it("strays in energy by the trapezoid's second order: 4 times less per halving of h", () => {
    // 0.25 s (the links whip up to 78 rad/s), one sub-step each step at every h here: the
    // scheme's own error, the error control not acting
    const errors: number[] = [];
    let momentum = 0;
    for (const rate of [960, 1920, 3840, 7680]) {
      const model = chain(1 / rate);
      const start = startConstants(model);
      const sim = loadModel(model);
      let largest = 0;
      for (let k = 0; k < rate / 4; k++) {
        sim.step(1);
        const st = sim.state();
        expect(st.solver.substeps).toBe(1);
        const now = constants(st.bodies);
        largest = Math.max(largest, Math.abs(now.energy - start.energy));
        momentum = Math.max(momentum, norm(sub(now.L, start.L)) / norm(start.L));
      }
      errors.push(largest);
    }
    const ratios = errors.slice(1).map((e, i) => errors[i] / e);
    report("flailing chain order", {
      errors: errors.map((e) => e.toExponential(3)).join(" "),
      ratios: ratios.map((r) => r.toFixed(3)).join(" "),
      momentum,
    });
    // measured: 2.94e-3, 7.27e-4, 1.81e-4, 4.53e-5 J (ratios 4.04, 4.01, 4.00), |ΔL|/|L| 2e-12
    for (const r of ratios) {
      expect(r).toBeGreaterThan(3.5);
      expect(r).toBeLessThan(4.5);
    }
    expect(momentum).toBeLessThan(1e-10);
  });

  it("keeps L and p to rounding for 60 s at the defaults, each step's energy change within its tolerance's", () => {
    // 1/240 s, the default error control: stepTolerance 3e-4 m per metre of body length
    // (generalized-alpha.ts bodyLength: max(√(6 tr I / m), 2 × 0.05 m) = 0.104 m: 3.1e-5 m).
    // DEFAULT_RELATIVE_STEP_TOLERANCE's accounting: a step whose displacement error is
    // within τ leaves a velocity error of at most ≈ τ/h, which costs Σ m |v| τ/h of energy
    const tolerance =
      3e-4 * Math.max(Math.sqrt((6 * (INERTIA[0] + 2 * INERTIA[1])) / MASS), LENGTH);
    const h = 1 / 240;
    const model = chain(h);
    const start = startConstants(model);
    const sim = loadModel(model);
    const steps = 60 / h;
    let before = start.energy;
    let allowance = 0;
    for (const b of model.bodies as unknown as Motion[])
      allowance += (MASS * norm(b.velocity as Vec3) * tolerance) / h;
    let worstShare = 0;
    let energy = 0;
    let momentum = 0;
    let linear = 0;
    let substeps = 0;
    let unmet = 0;
    for (let k = 0; k < steps; k++) {
      sim.step(1);
      const st = sim.state();
      substeps += st.solver.substeps;
      if (!st.solver.stepToleranceMet) unmet++;
      const now = constants(st.bodies);
      worstShare = Math.max(worstShare, Math.abs(now.energy - before) / allowance);
      energy = Math.max(energy, Math.abs(now.energy - start.energy) / start.energy);
      momentum = Math.max(momentum, norm(sub(now.L, start.L)) / norm(start.L));
      linear = Math.max(linear, norm(now.p));
      before = now.energy;
      allowance = 0;
      for (const b of st.bodies) allowance += (MASS * norm(b.velocity as Vec3) * tolerance) / h;
    }
    report("flailing chain 60 s", {
      start: start.energy,
      worstShare,
      energy,
      momentum,
      linear,
      substepsPerStep: substeps / steps,
      unmet,
    });
    // measured: the worst step 0.35 of its allowance, |E − E₀| ≤ 0.58 % of E₀ (the same
    // chain bent a little otherwise: 1.08 %), |ΔL|/|L| 2.5e-12,
    // |p| 1.4e-14 kg·m/s, 1.85 sub-steps a step, every step within its tolerance. With the
    // error control off (the factory's stepTolerance times 1e6): 1.00 sub-steps a step, the
    // worst step 5.2 times its allowance, |E − E₀| up to 3.4 %
    expect(unmet).toBe(0);
    expect(worstShare).toBeLessThan(1);
    expect(energy).toBeLessThan(0.02);
    expect(momentum).toBeLessThan(1e-10);
    expect(linear).toBeLessThan(1e-12);
  }, 120_000);
});
