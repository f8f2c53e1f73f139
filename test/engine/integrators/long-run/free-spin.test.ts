/**
 * The turn of a FREE rigid body (no joint; AccelerationStepper.cayleyTurn) under symplectic
 * Euler and Moreau–Jean's θ = w = ½: its rate is the implicit midpoint rule on Euler's
 * equations (midpointRotation; at θ = ½ AccelerationStepper.meanRateResidual, its other
 * forces on the trapezoid), which keeps its energy and |L|, and it turns by the Cayley map
 * of its mean rate, with which that rule keeps the world angular momentum L = R I Rᵀ ω
 * itself. Before, symplectic Euler turned it by exp(h ω₂) with the end rate ω₂: L's
 * direction was off by a bounded first-order amount (0.16 % at 5 ms, 0.082 % at 2.5 ms for
 * the body below), and so was its orientation; Moreau–Jean took the trapezoidal rule, the
 * gyroscopic torque at both ends and the turn exp(h ω̄), whose energy and L strayed by
 * O((h ω)²).
 *
 * References from the physics alone: a torque-free body's world angular momentum and
 * kinetic energy are constant, I ω₀ and ½ ω₀ᵀ I ω₀ for a body started at the identity; its
 * motion is RK4 of Euler's equations I Ω̇ = (I Ω) × Ω with q̇ = ½ q ⊗ (0, Ω) (helpers.ts
 * eulerRigidBody); under gravity alone its centre falls on z₀ − ½ g t² and its
 * rotation is the torque-free one.
 */
import { describe, expect, it } from "vitest";
import type { ModelInput } from "../../../../schemas/model";
import { loadModel } from "../../../../src/engine/index";
import { spunBody, tumblingBody } from "../../../support/models";
import {
  bodyRates,
  eulerRigidBody,
  norm,
  Rk4,
  report,
  sub,
  turnBetween,
  type Vec3,
} from "./helpers";

/** A torque-free body's closed-form constants from its start at the identity: L = I ω₀, ½ ω₀ᵀ I ω₀. */
const constants = (I: Vec3, w0: Vec3) => ({
  momentum: [I[0] * w0[0], I[1] * w0[1], I[2] * w0[2]] as Vec3,
  energy: 0.5 * (I[0] * w0[0] ** 2 + I[1] * w0[1] ** 2 + I[2] * w0[2] ** 2),
});

/**
 * Steps `sim` (its body 0 the torque-free body of principal inertias I spun at w0 from the
 * identity) `steps` times: the largest |ΔE|/E of its spin and |ΔL|/|L| against the
 * closed-form constants, and the steps where `counted` holds of the State.
 */
function spinDrift(
  sim: ReturnType<typeof loadModel>,
  I: Vec3,
  w0: Vec3,
  steps: number,
  counted: (st: ReturnType<ReturnType<typeof loadModel>["state"]>) => boolean,
) {
  const exact = constants(I, w0);
  let spin = 0;
  let momentum = 0;
  let count = 0;
  for (let k = 1; k <= steps; k++) {
    sim.step(1);
    const st = sim.state();
    const r = bodyRates(st.bodies[0], I);
    spin = Math.max(spin, Math.abs(r.energy - exact.energy) / exact.energy);
    momentum = Math.max(momentum, norm(sub(r.momentum, exact.momentum)) / norm(exact.momentum));
    if (counted(st)) count++;
  }
  return { spin, momentum, count };
}

/**
 * The torque-free body of principal inertias I spun at w0 from the identity, stepped at dt
 * for `seconds`: the largest |ΔL|/|L| and |ΔE|/E against the closed-form constants, and the
 * largest turn between its orientation and RK4's of Euler's equations (at dt/10: its O(H⁴)
 * error far below the engine's O(h²) one). `floor`: an nsc floor below it that it never
 * reaches (tumblingBody).
 */
function tumble(
  integrator: "symplectic-euler" | "moreau-jean",
  I: Vec3,
  w0: Vec3,
  seconds: number,
  dt: number,
  floor = false,
) {
  const sim = loadModel(tumblingBody(I, w0, { integrator, dt }, false, floor));
  const substeps = 10;
  const reference = new Rk4(eulerRigidBody(I), [...w0, 1, 0, 0, 0]);
  const exact = constants(I, w0);
  const steps = Math.round(seconds / dt);
  let turn = 0;
  let momentum = 0;
  let energy = 0;
  for (let k = 1; k <= steps; k++) {
    sim.step(1);
    reference.advance(dt / substeps, substeps);
    const b = sim.state().bodies[0];
    const r = bodyRates(b, I);
    const y = reference.y;
    turn = Math.max(turn, turnBetween([y[3], y[4], y[5], y[6]], b.orientation));
    momentum = Math.max(momentum, norm(sub(r.momentum, exact.momentum)) / norm(exact.momentum));
    energy = Math.max(energy, Math.abs(r.energy - exact.energy) / exact.energy);
  }
  return { turn, momentum, energy };
}

describe("a free asymmetric body (Dzhanibekov): world L and energy to rounding, orientation second order", () => {
  // moments 1, 2, 3 kg·m² spun at 1 rad/s about the intermediate axis with a 0.1 rad/s
  // share on the others: it flips over every 11.4 s, 35 times in 400 s
  const I: Vec3 = [1, 2, 3];
  const w0: Vec3 = [0.1, 1, 0.1];
  // measured, symplectic Euler: |ΔL|/|L| 3.1e-14 at 5 ms, 6.0e-14 at 2.5 ms; |ΔE|/E
  // 2.5e-14; the pose within 1.1e-3 rad of RK4's at 5 ms, 2.8e-4 at 2.5 ms. Before: |ΔL|/|L|
  // 1.6e-3 and 8.2e-4, the pose 1.6e-3 and 8.2e-4 rad off (first order), the energy to
  // rounding. Moreau–Jean, the same free step: |ΔL|/|L| 4.1e-14 and 8.1e-14, |ΔE|/E 3.7e-14
  // and 5.4e-14, the pose as symplectic Euler's; before (the trapezoid), |ΔL|/|L| 1.0e-5 and
  // 2.6e-6, |ΔE|/E 2.1e-6 and 5.2e-7, the pose 1.5e-3 and 3.7e-4 rad off
  for (const integrator of ["symplectic-euler", "moreau-jean"] as const)
    it(`${integrator}: 400 s at 5 and 2.5 ms`, () => {
      const coarse = tumble(integrator, I, w0, 400, 0.005);
      const fine = tumble(integrator, I, w0, 400, 0.0025);
      report(`${integrator} free Dzhanibekov body, 400 s`, {
        turn: coarse.turn,
        turnHalf: fine.turn,
        momentum: coarse.momentum,
        momentumHalf: fine.momentum,
        energy: coarse.energy,
        energyHalf: fine.energy,
      });
      for (const run of [coarse, fine]) {
        expect(run.momentum).toBeLessThan(1e-12);
        expect(run.energy).toBeLessThan(1e-12);
      }
      const ratio = coarse.turn / fine.turn;
      expect(ratio).toBeGreaterThan(3.5);
      expect(ratio).toBeLessThan(4.5);
    });
});

describe("Moreau–Jean (θ = w = ½) on a fast free body", () => {
  it("moments 0.1, 0.2, 0.3 kg·m² at (3, 50, 2) rad/s (h |ω| = 0.25), 100 s at 5 ms: L and energy to rounding", () => {
    // measured |ΔL|/|L| 1.4e-13, |ΔE|/E 2.8e-14; before (the trapezoid), 0.56 and 5.2e-3
    // (its 251.05 J up by as much as 1.3 J)
    const run = tumble("moreau-jean", [0.1, 0.2, 0.3], [3, 50, 2], 100, 0.005);
    report("moreau-jean fast free body, 100 s", { momentum: run.momentum, energy: run.energy });
    expect(run.momentum).toBeLessThan(1e-12);
    expect(run.energy).toBeLessThan(1e-12);
  });

  it("the same body above an nsc floor it never reaches, 100 s at 5 ms: L and energy to rounding", () => {
    // no contact of the step touches it, so it takes the smooth step's turn; measured
    // |ΔL|/|L| 1.4e-13, |ΔE|/E 2.8e-14 as without the floor. Before (every body of a model
    // with nsc contacts on the trapezoid, moreau-jean.ts holdTrapezoidTurns), 0.56 and
    // 5.2e-3, the trapezoid's
    const run = tumble("moreau-jean", [0.1, 0.2, 0.3], [3, 50, 2], 100, 0.005, true);
    report("moreau-jean fast free body above an nsc floor, 100 s", {
      momentum: run.momentum,
      energy: run.energy,
    });
    expect(run.momentum).toBeLessThan(1e-12);
    expect(run.energy).toBeLessThan(1e-12);
  });

  it("a body tumbling beside a box resting on an nsc floor, 4 s at 5 ms: its spin's energy and L to rounding", () => {
    // every step is a contact step (the box's), the tumbling body touched by none of its
    // contacts: it falls freely 5 m beside the floor, its rotation torque-free
    const I: Vec3 = [0.1, 0.2, 0.3];
    const w0: Vec3 = [10, 177, 5];
    const g = 9.81;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [
        spunBody(I, w0, [5, 0, 1], [{ type: "sphere", radius: 0.1 }]),
        {
          id: "floor",
          fixed: true,
          position: [0, 0, -0.5],
          shapes: [{ type: "box", halfExtents: [1, 1, 0.5] }],
        },
        {
          id: "box",
          mass: 1,
          position: [0, 0, 0.1],
          shapes: [{ type: "box", halfExtents: [0.1, 0.1, 0.1] }],
        },
      ],
      contact: { method: "nsc" },
      solver: { integrator: "moreau-jean", dt: 0.005 },
    } as ModelInput);
    const {
      spin,
      momentum,
      count: resting,
    } = spinDrift(sim, I, w0, 800, (st) => st.contacts.length > 0);
    report("moreau-jean tumbling body beside a resting box, 4 s", { spin, momentum, resting });
    // measured: the spin's energy 7.1e-15 and L 1.3e-14 off; before (the trapezoid on every
    // body of a model with nsc contacts), its 3334 J off by 7.0 % and L by 27 %
    expect(resting).toBe(800);
    expect(spin).toBeLessThan(1e-12);
    expect(momentum).toBeLessThan(1e-12);
  });

  it("a box tumbling beside a ball bouncing on a rough floor at e = 1, its bounces splitting the steps, 4 s at 5 ms: its spin's energy and L to rounding", () => {
    // the ball's frictional impacts are met at their instants (impact-events.ts), each
    // step that holds one split there; the box, far from every contact, falls freely 5 m
    // beside the floor. A split step's pieces turn a body near a contact by exp(h ω̄), on
    // which their impacts are predicted, and the others by the Cayley map (moreau-jean.ts,
    // holdTrapezoidTurns)
    const I: Vec3 = [0.1, 0.2, 0.3];
    const w0: Vec3 = [3, 50, 2];
    const sim = loadModel({
      gravity: [0, 0, -9.81],
      bodies: [
        spunBody(I, w0, [5, 0, 1], [{ type: "box", halfExtents: [0.3, 0.2, 0.1] }]),
        {
          id: "floor",
          fixed: true,
          position: [0, 0, -0.5],
          shapes: [{ type: "box", halfExtents: [1, 1, 0.5] }],
        },
        { id: "ball", mass: 1, position: [0, 0, 0.5], shapes: [{ type: "sphere", radius: 0.1 }] },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0.3 },
      solver: { integrator: "moreau-jean", dt: 0.005 },
    } as ModelInput);
    const {
      spin,
      momentum,
      count: split,
    } = spinDrift(sim, I, w0, 800, (st) => st.solver.impacts > 0);
    report("moreau-jean box tumbling beside a bouncing ball, 4 s", { spin, momentum, split });
    // measured: 3.7e-15 and 4.9e-15 over 7 split steps; before (the trapezoid on every body
    // but the round ones in a split step) 1.6e-4 and 3.6e-4
    expect(split).toBeGreaterThanOrEqual(6);
    expect(spin).toBeLessThan(1e-12);
    expect(momentum).toBeLessThan(1e-12);
  });

  it("a body tumbling as it falls under gravity, 20 s at 5 ms: its centre on z₀ − ½ g t², T + V to rounding", () => {
    // the centre's trapezoid is exact under a constant force; the rotation is torque-free
    const I: Vec3 = [0.1, 0.2, 0.3];
    const w0: Vec3 = [10, 177, 5];
    const g = 9.81;
    const z0 = 20;
    const dt = 0.005;
    const sim = loadModel({
      gravity: [0, 0, -g],
      bodies: [spunBody(I, w0, [0, 0, z0])],
      solver: { integrator: "moreau-jean", dt },
    } as ModelInput);
    const exact = constants(I, w0);
    const E0 = exact.energy + g * z0;
    let energy = 0;
    let height = 0;
    let spin = 0;
    let momentum = 0;
    for (let k = 1; k <= 4000; k++) {
      sim.step(1);
      const t = k * dt;
      const b = sim.state().bodies[0];
      const r = bodyRates(b, I);
      const v = b.velocity;
      const z = b.position[2];
      // T + V, each term's own size the scale of its rounding
      const T = 0.5 * (v[0] ** 2 + v[1] ** 2 + v[2] ** 2) + r.energy;
      const scale = Math.abs(T) + Math.abs(g * z) + E0;
      energy = Math.max(energy, Math.abs(T + g * z - E0) / scale);
      height = Math.max(height, Math.abs(z - (z0 - 0.5 * g * t * t)) / (z0 + 0.5 * g * t * t));
      spin = Math.max(spin, Math.abs(r.energy - exact.energy) / exact.energy);
      momentum = Math.max(momentum, norm(sub(r.momentum, exact.momentum)) / norm(exact.momentum));
    }
    report("moreau-jean tumbling fall, 20 s", { energy, height, spin, momentum });
    // measured: T + V 4.6e-14, z 4.7e-14, the spin's energy 1.8e-14 and L 5.4e-14 off;
    // before (the trapezoid), T + V 3.2e-2 off (the spin's 3334 J by 7.0 %, L by 28 %), z
    // as now
    expect(energy).toBeLessThan(1e-13);
    expect(height).toBeLessThan(1e-13);
    expect(spin).toBeLessThan(1e-12);
    expect(momentum).toBeLessThan(1e-12);
  });

  it("a sphere of moments 0.1, 0.2, 0.3 kg·m² spun near its middle axis, bouncing on a frictionless floor at e = 1 for 20 s at 5 ms: L and its spin's energy to rounding", () => {
    // The floor's impulses act along the normal through the sphere's centre (frictionless):
    // no moment, so its rotation is torque-free throughout, L = I ω₀ and ½ ω₀ᵀ I ω₀ constants,
    // while its centre bounces (period 2√(2 · 0.9 m/g) = 0.86 s: 23 bounces). Spinning, its
    // bounces are met at their instants (impact-events.ts), each bounce step split there.
    const I: Vec3 = [0.1, 0.2, 0.3];
    const w0: Vec3 = [0.3, 15, 0.2];
    const dt = 0.005;
    const sim = loadModel({
      gravity: [0, 0, -9.81],
      bodies: [
        spunBody(I, w0, [0, 0, 1], [{ type: "sphere", radius: 0.1 }]),
        { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
      ],
      contact: { method: "nsc", restitution: 1, friction: 0 },
      solver: { integrator: "moreau-jean", dt },
    } as ModelInput);
    const exact = constants(I, w0);
    let spin = 0;
    let momentum = 0;
    let bounces = 0;
    let falling = false;
    for (let k = 1; k <= 20 / dt; k++) {
      sim.step(1);
      const b = sim.state().bodies[0];
      const r = bodyRates(b, I);
      if (falling && b.velocity[2] > 0) bounces++;
      falling = b.velocity[2] < 0;
      spin = Math.max(spin, Math.abs(r.energy - exact.energy) / exact.energy);
      momentum = Math.max(momentum, norm(sub(r.momentum, exact.momentum)) / norm(exact.momentum));
    }
    report("moreau-jean bouncing spinner, 20 s", { spin, momentum, bounces });
    // measured: the spin's energy 9.9e-15 and L 9.1e-15 off; before (every body on the
    // trapezoid in a step split at its impacts), 7.8e-6 and 4.7e-5
    expect(bounces).toBeGreaterThanOrEqual(20);
    expect(spin).toBeLessThan(1e-12);
    expect(momentum).toBeLessThan(1e-12);
  });
});
