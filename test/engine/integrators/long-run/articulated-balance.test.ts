/**
 * The articulated integrator at its defaults (stepTolerance 1e-6 m a sub-step) on hinged
 * chains with joint springs, joint dampers and in separate pieces, for 120 to 150 s, their
 * energy computed here from the body states (not read from the engine) against its law:
 *
 * - Two chains hanging from the ground side by side (20 and 14 links of 5 cm, 0.05 kg,
 *   1 m apart), both falling from horizontal: nothing joins them, so each keeps its own
 *   T + V = Σ ½ m v² + ½ ωᵀ I ω + m g z.
 * - A chain of 10 links of 0.1 m, 0.1 kg with a torsion spring at each hinge (a frame
 *   spring of k_r = 0.5 N·m/rad at the hinge's point, its rest the straight chain): T + V
 *   with V = Σ m g z + Σ ½ k_r φ_i², φ_i the turn of link i against link i − 1 (the first
 *   against its start).
 * - The same with viscous damping at each hinge (c_r = 1e-6 N·m·s/rad, the frame spring's
 *   rotaryDamping): T + V + D = E₀, D the work the dampers took out, ∫ Σ c_r |ω_i −
 *   ω_{i−1}|² dt by Simpson's rule over pairs of steps of 1 ms (at 5 ms the rule itself
 *   erred by 1.4e-3 J over 150 s on the chain's whip-like bursts; at 1 ms by ~1e-5 J).
 *
 * Before the steps kept each piece's balance (articulated-energy.ts: the projection had
 * been for one conservative piece alone) the Runge–Kutta pair's errors added up: the two
 * chains +0.063 J and +0.022 J at 150 s; the spring chain 3.7e-3 J off over 150 s (its
 * 20-link version +2.6 J); the damped chain 8.6e-3 J at 120 s (its 20-link version at 5 ms
 * +0.29 J by 150 s). Now the pieces stay within 4e-13 J; the spring and damped chains
 * within 5.0e-5 and 6.1e-5 J, what the steps keepEnergy leaves as they are let through
 * (their velocity change beyond their own error estimate, their estimate too small for a
 * tighter retry: one such step of the spring chain put in 3.3e-5 J at once).
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import {
  type MassProperties,
  mechanicalEnergy,
  report,
  sub,
  turnBetween,
  type Vec3,
} from "./helpers";
import { G, hingedChainModel } from "./models";

type Chain = ReturnType<typeof hingedChainModel>;
type State = ReturnType<ReturnType<typeof loadModel>["state"]>;

function massProperties(model: Chain): Record<string, MassProperties> {
  const props: Record<string, MassProperties> = {};
  for (const b of model.bodies) props[b.id] = { mass: b.mass, inertia: b.inertia };
  return props;
}

/** A frame spring at each hinge of the chain (`hingedChainModel`), rest the model pose. */
function hingeSprings(n: number, L: number, kr: number, cr: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    type: "frameSpring",
    a: i === 0 ? { body: "ground", point: [0, 0, 0] } : { body: `l${i - 1}`, point: [0, 0, L / 2] },
    b: { body: `l${i}`, point: [0, 0, -L / 2] },
    stiffness: 0,
    rotaryStiffness: kr,
    rotaryDamping: cr,
  }));
}

/** Σ ½ k_r φ_i² of the hinge springs (J), φ_i link i's turn against link i − 1. */
function springEnergy(s: State, n: number, kr: number, start: readonly number[]): number {
  let e = 0;
  for (let i = 0; i < n; i++) {
    const phi = turnBetween(i === 0 ? start : s.bodies[i - 1].orientation, s.bodies[i].orientation);
    e += 0.5 * kr * phi * phi;
  }
  return e;
}

/** Σ c_r |ω_i − ω_{i−1}|² (W), the hinge dampers' power. */
function damperPower(s: State, n: number, cr: number): number {
  let p = 0;
  for (let i = 0; i < n; i++) {
    const w = s.bodies[i].angularVelocity as Vec3;
    const d = i === 0 ? w : sub(w, s.bodies[i - 1].angularVelocity as Vec3);
    p += cr * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  }
  return p;
}

describe("articulated at its defaults keeps each piece's energy balance", () => {
  it("two chains side by side, 20 and 14 links of 5 cm, 30 000 steps of 5 ms: each its own T + V", () => {
    const L = 0.05;
    const m = 0.05;
    const solver = { integrator: "articulated", dt: 0.005 };
    const a = hingedChainModel(20, L, m, solver, { prefix: "a", y: 0 });
    const b = hingedChainModel(14, L, m, solver, { prefix: "b", y: 1 });
    const model = { ...a, bodies: [...a.bodies, ...b.bodies], joints: [...a.joints, ...b.joints] };
    const sim = loadModel(model);
    const pa = massProperties(a);
    const pb = massProperties(b);
    const energies = () => {
      const bodies = sim.state().bodies;
      return [mechanicalEnergy(bodies, pa, G).total, mechanicalEnergy(bodies, pb, G).total];
    };
    const [A0, B0] = energies();
    let worstA = 0;
    let worstB = 0;
    for (let k = 1; k <= 30_000; k++) {
      sim.step(1);
      if (k % 20 === 0) {
        const [A, B] = energies();
        worstA = Math.max(worstA, Math.abs(A - A0));
        worstB = Math.max(worstB, Math.abs(B - B0));
      }
    }
    // the most kinetic energy each fall can give: n m g n L / 2
    const reachA = (20 * m * G * 20 * L) / 2;
    const reachB = (14 * m * G * 14 * L) / 2;
    report("two chains 150 s articulated", { worstA, worstB, reachA, reachB });
    expect(worstA).toBeLessThan(1e-6 * reachA);
    expect(worstB).toBeLessThan(1e-6 * reachB);
  }, 600_000);

  it("10 links of 0.1 m with a torsion spring at each hinge, 30 000 steps of 5 ms: T + V with the springs'", () => {
    const n = 10;
    const L = 0.1;
    const m = 0.1;
    const kr = 0.5;
    const chain = hingedChainModel(n, L, m, { integrator: "articulated", dt: 0.005 });
    const sim = loadModel({ ...chain, forces: hingeSprings(n, L, kr, 0) });
    const props = massProperties(chain);
    const start = chain.bodies[0].orientation;
    const energy = () => {
      const s = sim.state();
      return mechanicalEnergy(s.bodies, props, G).total + springEnergy(s, n, kr, start);
    };
    const E0 = energy();
    let worst = 0;
    for (let k = 1; k <= 30_000; k++) {
      sim.step(1);
      if (k % 20 === 0) worst = Math.max(worst, Math.abs(energy() - E0));
    }
    // the springs start relaxed (V_spring ≥ 0 from 0): the kinetic energy within the fall's
    const reach = (n * m * G * n * L) / 2;
    report("spring chain 150 s articulated", { worst, relative: worst / reach });
    expect(worst).toBeLessThan(2e-5 * reach);
  }, 600_000);

  it("the spring chain with a damper at each hinge, 120 000 steps of 1 ms: T + V + D", () => {
    const n = 10;
    const L = 0.1;
    const m = 0.1;
    const kr = 0.5;
    const cr = 1e-6;
    const h = 0.001;
    const chain = hingedChainModel(n, L, m, { integrator: "articulated", dt: h });
    const sim = loadModel({ ...chain, forces: hingeSprings(n, L, kr, cr) });
    const props = massProperties(chain);
    const start = chain.bodies[0].orientation;
    const energy = (s: State) =>
      mechanicalEnergy(s.bodies, props, G).total + springEnergy(s, n, kr, start);
    const first = sim.state();
    const E0 = energy(first);
    // Simpson's rule over each pair of steps: D += (2h/6) (P₀ + 4 P₁ + P₂)
    let D = 0;
    let p0 = damperPower(first, n, cr);
    let p1 = 0;
    let worst = 0;
    for (let k = 1; k <= 120_000; k++) {
      sim.step(1);
      const s = sim.state();
      const p = damperPower(s, n, cr);
      if (k % 2 === 1) p1 = p;
      else {
        D += (h / 3) * (p0 + 4 * p1 + p);
        p0 = p;
        if (k % 100 === 0) worst = Math.max(worst, Math.abs(energy(s) + D - E0));
      }
    }
    const reach = (n * m * G * n * L) / 2;
    report("damped spring chain 120 s articulated", { worst, relative: worst / reach, D });
    // the motion keeps going: the dampers took out a good part of the energy, not all
    expect(D).toBeGreaterThan(0.3 * reach);
    expect(D).toBeLessThan(0.9 * reach);
    expect(worst).toBeLessThan(4e-5 * reach);
  }, 900_000);
});
