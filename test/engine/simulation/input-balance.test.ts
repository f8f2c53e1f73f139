/**
 * Which inputs re-take the energy balance's reference (energy.error and energy.dissipated
 * to 0: Simulation.stateChanged) and which leave it running: only those that change the
 * state (simulation/inputs.ts applyInput).
 *
 * A 1 kg, 1 m rod hinged at its end (I = m L²/3 about the pin), without gravity, limits
 * [−1, 1] rad, driven by a position servo k_p = 20 N·m/rad, k_d = 0.5 N·m·s/rad from rest
 * at q = 0 to q* = 0.3: I q̈ + k_d q̇ + k_p (q − q*) = 0, ω_n = √(k_p/I) = 7.75 rad/s,
 * ζ = k_d/(2 √(k_p I)) = 0.097, so q swings within [0, 0.3 (1 + e^{−ζπ/√(1−ζ²)})] =
 * [0, 0.55] rad, 12 periods in 10 s. The energy balance books the servo's whole effort
 * as work (step-work.ts) and the total energy is the rod's ½ I q̇² alone, so
 * energy.dissipated = −½ I q̇(t)² (energy.error the scheme's own): checked against the
 * closed form of q̇(t).
 * - limits inputs that keep the joint inside ([−0.8, 0.9], then the model's [−1, 1] back)
 *   and a zero impulse change nothing: the run is bit for bit the run without them, its
 *   energy.error and energy.dissipated included (until 2026-12-07 each re-took the
 *   reference: dissipated and error back to 0 there, the rod's whole record lost);
 * - a limits input whose bound passes the joint is a start for it (onto the bound, the
 *   reference re-taken: energy.error and dissipated 0 right after), as documented.
 */
import { describe, expect, it } from "vitest";
import { Input, type InputIn } from "../../../schemas/input";
import { SolverSettings } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const M = 1;
const L = 1;
const I = (M * L * L) / 3;
const KP = 20;
const KD = 0.5;
const TARGET = 0.3;
const H = 2e-3;
const STEPS = 5000;
const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));

function servoRod(integrator: string) {
  return loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      limits: { lower: -1, upper: 1 },
      servo: { type: "position", target: TARGET, kp: KP, kd: KD },
      solver: { integrator, dt: H },
    }),
  );
}

/** The closed-form rate q̇(t) (rad/s) of the damped servo from rest at 0 (file comment). */
function exactRate(t: number): number {
  const wn = Math.sqrt(KP / I);
  const zeta = KD / (2 * Math.sqrt(KP * I));
  const wd = wn * Math.sqrt(1 - zeta * zeta);
  // q = q* (1 − e^{−ζω t} (cos ω_d t + ζω/ω_d sin ω_d t)), q̇ = q* (ω_n²/ω_d) e^{−ζω t} sin ω_d t
  return ((TARGET * wn * wn) / wd) * Math.exp(-zeta * wn * t) * Math.sin(wd * t);
}

/** Per step: q, q̇, energy.error, energy.dissipated. */
function run(integrator: string, scheduled: [number, InputIn[]][]): Float64Array {
  const sim = servoRod(integrator);
  for (const [step, list] of scheduled) sim.schedule(inputs(list), step);
  const out = new Float64Array(4 * STEPS);
  for (let i = 0; i < STEPS; i++) {
    sim.step(1);
    const s = sim.state();
    out[4 * i] = s.joints[0].coordinates[0];
    out[4 * i + 1] = s.joints[0].rates[0];
    out[4 * i + 2] = s.energy.error as number;
    out[4 * i + 3] = s.energy.dissipated as number;
  }
  return out;
}

/** The first step (and figure) where two runs differ, or null. */
function firstDifference(a: Float64Array, b: Float64Array): string | null {
  const names = ["q", "q̇", "energy.error", "energy.dissipated"];
  for (let i = 0; i < a.length; i += 4) {
    const differ = names.flatMap((name, k) =>
      Object.is(a[i + k], b[i + k]) ? [] : [`${name} ${a[i + k]} (without) vs ${b[i + k]}`],
    );
    if (differ.length > 0) return `step ${i / 4 + 1}: ${differ.join(", ")}`;
  }
  return null;
}

describe("inputs that change no state leave the energy balance running", () => {
  it("limits keeping the joint inside, and the model's back: bit for bit the run without them (every integrator), dissipated = −½ I q̇² of the closed form", () => {
    for (const integrator of INTEGRATORS) {
      const plain = run(integrator, []);
      const moved = run(integrator, [
        [1000, [{ type: "limits", id: "pin", lower: -0.8, upper: 0.9 }]],
        [2500, [{ type: "limits", id: "pin", lower: -1, upper: 1 }]],
      ]);
      expect(firstDifference(plain, moved), integrator).toBeNull();
      // the joint never near the bounds: within [0, 0.55] rad
      for (let i = 0; i < STEPS; i++) {
        expect(moved[4 * i], integrator).toBeGreaterThan(-0.01);
        expect(moved[4 * i], integrator).toBeLessThan(0.56);
      }
      if (integrator !== "newmark" && integrator !== "generalized-alpha") continue;
      // the balance against the closed form: dissipated = KE(0) − KE(t) − error, KE(0) = 0
      // (the schemes' phase error over 12 periods, (ω h)²/12 a period; measured 4.3e-5 J
      // of the energy at stake, ½ k_p q*² = 0.9 J)
      let worst = 0;
      for (let i = 0; i < STEPS; i++) {
        const w = exactRate((i + 1) * H);
        worst = Math.max(worst, Math.abs(moved[4 * i + 3] + 0.5 * I * w * w));
      }
      expect(worst, integrator).toBeLessThan(2e-4);
    }
  });

  it("a zero impulse: bit for bit the run without it (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const plain = run(integrator, []);
      const kicked = run(integrator, [
        [1500, [{ type: "impulse", id: "rod", impulse: [0, 0, 0], point: [0.5, 0, 0] }]],
      ]);
      expect(firstDifference(plain, kicked), integrator).toBeNull();
    }
  });

  it("a bound moved past the joint: onto it at once, the reference re-taken (energy.error and dissipated 0)", () => {
    for (const integrator of ["moreau-jean", "generalized-alpha", "newmark"]) {
      const sim = servoRod(integrator);
      // at 0.2 s the rod swings up through q ≈ 0.2 rad at ≈ 1.6 rad/s
      sim.step(100);
      const before = sim.state();
      const q0 = before.joints[0].coordinates[0];
      expect(q0, integrator).toBeGreaterThan(0.1);
      expect(before.energy.dissipated as number, integrator).toBeLessThan(-0.1);
      sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: q0 - 0.05 }]));
      const after = sim.state();
      expect(after.joints[0].coordinates[0], integrator).toBeCloseTo(q0 - 0.05, 6);
      expect(after.energy.error, integrator).toBe(0);
      expect(after.energy.dissipated, integrator).toBe(0);
    }
  });
});
