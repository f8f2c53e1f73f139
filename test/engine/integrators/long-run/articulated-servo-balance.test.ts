/**
 * The articulated integrator at its defaults (stepTolerance 1e-6 m a sub-step) on a hinged
 * chain of 10 links of 0.1 m, 0.1 kg (`hingedChainModel`, falling from horizontal) under
 * joint servos and a constant load, for 120 to 150 s, its energy
 * computed here from the body and joint states (not read from the engine) against its law:
 *
 * - A position servo at each hinge (k_p = 0.5 N·m/rad, k_d = 0, its target the model
 *   pose): conservative, T + V with V = Σ m g z + Σ ½ k_p q_i², q_i hinge i's angle.
 * - A constant world load f = (0.4, 0, 0.2) N on the tip: conservative, T + V with
 *   V = Σ m g z − f·x_tip.
 * - A velocity servo at the first hinge (k_v = 2e-3 N·m·s/rad toward 1 rad/s) and position
 *   servos with damping at the others (k_p = 0.5, k_d = 1e-4): T + V + D = E₀, D the work
 *   the servos took out, ∫ (Σ k_d q̇_i² − k_v (ω* − q̇_0) q̇_0) dt by Simpson's rule over
 *   pairs of steps of 1 ms (the velocity servo's work at its target not 0: it puts in
 *   what the chain's swing takes from the first hinge).
 *
 * Before the groups took servos and loads (articulated-energy.ts) none of these models'
 * steps kept its balance: the servo chain drifted 7.8e-3 J by 150 s, the loaded chain
 * 1.7e-3 J, the servo-driven chain 2.6e-6 J off its balance by 120 s. Now 6.7e-6 J, 4.7e-5 J
 * and 8.9e-7 J: what the steps keepEnergy leaves as they are let through (their velocity
 * change beyond their own error estimate), and for the last the reference's quadrature.
 */
import { describe, expect, it } from "vitest";
import { loadModel } from "../../../../src/engine/index";
import { type MassProperties, mechanicalEnergy, report, rotate, type Vec3 } from "./helpers";
import { G, hingedChainModel } from "./models";

const N = 10;
const L = 0.1;
const M = 0.1;
/** The most kinetic energy the chain's fall can give (J): its centre drops N L/2 at most. */
const REACH = (N * M * G * N * L) / 2;

type State = ReturnType<ReturnType<typeof loadModel>["state"]>;

function chain(dt: number) {
  const model = hingedChainModel(N, L, M, { integrator: "articulated", dt });
  const props: Record<string, MassProperties> = {};
  for (const b of model.bodies) props[b.id] = { mass: b.mass, inertia: b.inertia as Vec3 };
  return { model, props };
}

const angle = (s: State, i: number) => s.joints[i].coordinates[0];
const rate = (s: State, i: number) => s.joints[i].rates[0];

/** The largest |E − E₀| (J) over `steps`, E read every `every` steps. */
function worstDrift(
  sim: ReturnType<typeof loadModel>,
  energy: (s: State) => number,
  steps: number,
  every: number,
) {
  const E0 = energy(sim.state());
  let worst = 0;
  for (let k = 1; k <= steps; k++) {
    sim.step(1);
    if (k % every === 0) worst = Math.max(worst, Math.abs(energy(sim.state()) - E0));
  }
  return worst;
}

describe("articulated at its defaults keeps the balance of a chain under servos and loads", () => {
  it("a position servo at each hinge (k_d = 0), 30 000 steps of 5 ms: T + V with Σ ½ k_p q²", () => {
    const kp = 0.5;
    const { model, props } = chain(0.005);
    const actuators = model.joints.map((j) => ({
      id: `p${j.id}`,
      type: "position",
      joint: j.id,
      kp,
      kd: 0,
    }));
    const sim = loadModel({ ...model, actuators });
    const energy = (s: State) => {
      let e = mechanicalEnergy(s.bodies, props, G).total;
      for (let i = 0; i < N; i++) e += 0.5 * kp * angle(s, i) ** 2;
      return e;
    };
    const worst = worstDrift(sim, energy, 30_000, 20);
    report("servo chain 150 s articulated", { worst, relative: worst / REACH });
    // (1.4e-6 of REACH; 1.6e-3 before)
    expect(worst).toBeLessThan(3e-6 * REACH);
  }, 600_000);

  it("a constant world load on the tip, 30 000 steps of 5 ms: T + V with the load's −f·x", () => {
    const f: Vec3 = [0.4, 0, 0.2];
    const { model, props } = chain(0.005);
    const tip = `l${N - 1}`;
    const forces = [
      { id: "pull", type: "pointForce", at: { body: tip, point: [0, 0, L / 2] }, force: f },
    ];
    const sim = loadModel({ ...model, forces });
    const energy = (s: State) => {
      let e = mechanicalEnergy(s.bodies, props, G).total;
      const b = s.bodies[N - 1];
      const x = rotate(b.orientation, [0, 0, L / 2]);
      for (let d = 0; d < 3; d++) e -= f[d] * (b.position[d] + x[d]);
      return e;
    };
    const worst = worstDrift(sim, energy, 30_000, 20);
    report("loaded chain 150 s articulated", { worst, relative: worst / REACH });
    // (9.6e-6 of REACH; 3.5e-4 before)
    expect(worst).toBeLessThan(2e-5 * REACH);
  }, 600_000);

  it("a velocity servo at the first hinge, damped position servos at the others, 120 000 steps of 1 ms: T + V + D", () => {
    const kp = 0.5;
    const kd = 1e-4;
    const kv = 2e-3;
    const target = 1;
    const h = 0.001;
    const { model, props } = chain(h);
    const actuators = model.joints.map((j, i) =>
      i === 0
        ? { id: "v", type: "velocity", joint: j.id, kv, target }
        : { id: `p${j.id}`, type: "position", joint: j.id, kp, kd },
    );
    const sim = loadModel({ ...model, actuators });
    const energy = (s: State) => {
      let e = mechanicalEnergy(s.bodies, props, G).total;
      for (let i = 1; i < N; i++) e += 0.5 * kp * angle(s, i) ** 2;
      return e;
    };
    // the power the servos take out (W): their dampings', and the velocity servo's −τ q̇
    const power = (s: State) => {
      let p = -kv * (target - rate(s, 0)) * rate(s, 0);
      for (let i = 1; i < N; i++) p += kd * rate(s, i) ** 2;
      return p;
    };
    const first = sim.state();
    const E0 = energy(first);
    // Simpson's rule over each pair of steps: D += (2h/6) (P₀ + 4 P₁ + P₂)
    let D = 0;
    let p0 = power(first);
    let p1 = 0;
    let worst = 0;
    let inputs = 0;
    for (let k = 1; k <= 120_000; k++) {
      sim.step(1);
      const s = sim.state();
      const p = power(s);
      if (k % 2 === 1) p1 = p;
      else {
        const dD = (h / 3) * (p0 + 4 * p1 + p);
        D += dD;
        if (dD < 0) inputs -= dD;
        p0 = p;
        if (k % 100 === 0) worst = Math.max(worst, Math.abs(energy(s) + D - E0));
      }
    }
    report("servo-driven chain 120 s articulated", { worst, relative: worst / REACH, D, inputs });
    // the servos took out a good part of the energy, and the velocity servo put some in
    expect(D).toBeGreaterThan(0.3 * REACH);
    expect(inputs).toBeGreaterThan(1e-3);
    // (1.8e-7 of REACH; 5.4e-7 before)
    expect(worst).toBeLessThan(3e-7 * REACH);
  }, 900_000);
});
