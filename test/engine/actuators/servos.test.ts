/**
 * Actuators against closed forms.
 *
 * Position servo (PD) on a revolute joint, no gravity: a rod of mass m, length L pivoting
 * about one end (inertia about the pivot I = m L²/3, held by the joint: the servo sees
 * that inertia, not the centre's): I θ̈ = k_p (θ* − θ) − k_d θ̇, so with ω_n = √(k_p/I),
 * ζ = k_d / (2 √(k_p I)) < 1, ω_d = ω_n √(1 − ζ²), from rest at 0:
 *   θ(t) = θ* [1 − e^{−ζω_n t} (cos ω_d t + ζω_n/ω_d sin ω_d t)].
 * Velocity servo on a wheel (I about its axis) under a load torque τ_L opposing it:
 *   I ω̇ = k_v (ω* − ω) − τ_L  →  ω(t) = ω_ss + (ω₀ − ω_ss) e^{−k_v t / I},
 *   ω_ss = ω* − τ_L/k_v, while k_v (ω* − ω) ≤ τ_max; beyond the limit the servo gives
 *   τ_max and the wheel decelerates at (τ_L − τ_max)/I.
 * A stiff servo (h ω_n = 50) stays stable and reaches its target: its Jacobians are in
 * the Newton matrix.
 */
import { describe, expect, it } from "vitest";
import { Input } from "../../../schemas/input";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { hangingChain, positionServos, rodPendulum, servoChainLinks } from "../../support/models";

const m = 2;
const L = 0.6;
const Ipivot = (m * L * L) / 3;

/** The rod of length L, mass m pinned at one end about z, no gravity, with a servo on the pin. */
function rodModel(actuator: Record<string, unknown>, solver: Record<string, unknown> = {}) {
  return rodPendulum({
    mass: m,
    length: L,
    axis: [0, 0, 1],
    gravity: [0, 0, 0],
    servo: actuator,
    solver: { integrator: "generalized-alpha", dt: 1e-3, ...solver },
  });
}

const angleOf = (sim: ReturnType<typeof loadModel>) => sim.state().joints[0].coordinates[0];

describe("position servo (PD)", () => {
  it("follows the closed-form second-order response (ζ, ω_n from gains and the pivot inertia) to 1e-3 rad over 4 s", () => {
    const kp = 20;
    const kd = 0.8;
    const target = 1.2;
    const sim = loadModel(rodModel({ type: "position", target, kp, kd }));
    const wn = Math.sqrt(kp / Ipivot);
    const zeta = kd / (2 * Math.sqrt(kp * Ipivot));
    expect(zeta).toBeLessThan(1);
    const wd = wn * Math.sqrt(1 - zeta * zeta);
    const exact = (t: number) =>
      target *
      (1 - Math.exp(-zeta * wn * t) * (Math.cos(wd * t) + ((zeta * wn) / wd) * Math.sin(wd * t)));
    let worst = 0;
    for (let n = 1; n <= 4000; n++) {
      sim.step(1);
      worst = Math.max(worst, Math.abs(angleOf(sim) - exact(n * 1e-3)));
    }
    expect(worst).toBeLessThan(1e-3);
    // the effort reported is the PD law at the end state
    const s = sim.state();
    const j = s.joints[0];
    expect(s.actuators[0].effort).toBeCloseTo(
      kp * (target - j.coordinates[0]) - kd * j.rates[0],
      10,
    );
  });

  it("a target beyond π is reached on the unwrapped angle (no branch jump), 3 turns", () => {
    const target = 6 * Math.PI;
    const sim = loadModel(rodModel({ type: "position", target, kp: 5, kd: 2 }));
    sim.step(20_000);
    expect(angleOf(sim)).toBeCloseTo(target, 6);
  });

  it("a stiff servo (h ω_n = 50) is stable and settles on its target with the default generalized-α and with backward Euler", () => {
    const kp = 2500 * Ipivot * 1e4; // ω_n = 1e4 rad/s
    for (const solver of [
      { integrator: "generalized-alpha", dt: 0.005, rhoInfinity: 0.5 },
      { integrator: "backward-euler", dt: 0.005 },
    ]) {
      const sim = loadModel(rodModel({ type: "position", target: 0.5, kp, kd: 0.05 * kp }, solver));
      sim.step(400);
      expect(Math.abs(angleOf(sim) - 0.5)).toBeLessThan(1e-8);
      expect(Math.abs(sim.state().joints[0].rates[0])).toBeLessThan(1e-6);
    }
  });

  it("an effort limit caps the torque: constant acceleration τ_max / I until the PD law takes over", () => {
    const tmax = 0.3;
    const sim = loadModel(
      rodModel({ type: "position", target: 100, kp: 1e4, kd: 0, effortLimit: tmax }),
    );
    sim.step(500);
    const t = 0.5;
    expect(sim.state().actuators[0].effort).toBe(tmax);
    expect(angleOf(sim)).toBeCloseTo((0.5 * tmax * t * t) / Ipivot, 6);
  });
});

describe("position servo at its effort limit, commanded across its range within one step", () => {
  // A light rod: a 0.5 rad step makes the law k_p Δθ ≫ τ_max, and within one step of the
  // default generalized-α the rod covers the range, so Newton's iterates saw the law jump
  // from one limit far past the other and back (no Jacobian when saturated): it failed even
  // at h/16 and the session ended diverged. The reference: I θ̈ = clamp(k_p (θ* − θ) −
  // k_d θ̇, ±τ_max) by RK4 at 1 µs, written out here.
  const [mr, Lr, kp, kd, tmax] = [0.05, 0.1, 500, 20, 28];
  const Ir = (mr * Lr * Lr) / 3;
  it.each([
    { h: 0.005, tol: 0.05 },
    { h: 0.001, tol: 0.01 },
  ])(
    "h = $h s (h ω_n up to 8.7): converges, within $tol rad of the reference over 0.3 s, |τ| ≤ τ_max",
    ({ h, tol }) => {
      const sim = loadModel(
        rodPendulum({
          mass: mr,
          length: Lr,
          axis: [0, 0, 1],
          gravity: [0, 0, 0],
          servo: { type: "position", target: 0, kp, kd, effortLimit: tmax },
          solver: { integrator: "generalized-alpha", dt: h },
        }),
      );
      sim.step(2);
      sim.schedule([{ type: "actuator", id: "servo", value: 0.5 }]);
      const accel = (th: number, w: number) =>
        Math.max(-tmax, Math.min(tmax, kp * (0.5 - th) - kd * w)) / Ir;
      let th = 0;
      let w = 0;
      const dt = 1e-6;
      let worst = 0;
      for (let n = 1; n <= Math.round(0.3 / h); n++) {
        sim.step(1);
        for (let k = 0; k < Math.round(h / dt); k++) {
          const a1 = accel(th, w);
          const a2 = accel(th + 0.5 * dt * w, w + 0.5 * dt * a1);
          const a3 = accel(th + 0.5 * dt * (w + 0.5 * dt * a1), w + 0.5 * dt * a2);
          const a4 = accel(th + dt * (w + 0.5 * dt * a2), w + dt * a3);
          th += dt * w + (dt * dt * (a1 + a2 + a3)) / 6;
          w += (dt * (a1 + 2 * a2 + 2 * a3 + a4)) / 6;
        }
        const s = sim.state();
        expect(s.solver.newtonConverged).toBe(true);
        expect(Math.abs(s.actuators[0].effort)).toBeLessThanOrEqual(tmax);
        worst = Math.max(worst, Math.abs(s.joints[0].coordinates[0] - th));
      }
      expect(worst).toBeLessThan(tol);
      expect(angleOf(sim)).toBeCloseTo(0.5, 3);
    },
  );
});

describe("velocity servo", () => {
  const I = 0.05; // wheel inertia about z (kg m²)
  const kv = 0.4;
  const target = 10;
  const wheel = (load: number, limit: number, omega0: number) =>
    loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "wheel", mass: 1, inertia: [0.03, 0.03, I], angularVelocity: [0, 0, omega0] }],
      joints: [
        {
          id: "axle",
          type: "revolute",
          a: { body: "ground" },
          b: { body: "wheel" },
          axis: [0, 0, 1],
        },
      ],
      forces: [{ id: "brake", type: "pointForce", at: { body: "wheel" }, torque: [0, 0, -load] }],
      actuators: [{ id: "drive", joint: "axle", type: "velocity", target, kv, effortLimit: limit }],
      solver: { integrator: "generalized-alpha", dt: 1e-3 },
    } as ModelInput);

  it("holds its rate under a load below its limit: ω(t) = ω_ss + (ω₀ − ω_ss) e^{−k_v t/I}", () => {
    const load = 1.5;
    const sim = wheel(load, 5, 0);
    const wss = target - load / kv;
    let worst = 0;
    for (let n = 1; n <= 3000; n++) {
      sim.step(1);
      const exact = wss + (0 - wss) * Math.exp((-kv * n * 1e-3) / I);
      worst = Math.max(worst, Math.abs(sim.state().joints[0].rates[0] - exact));
    }
    expect(worst).toBeLessThan(1e-4 * target);
    expect(sim.state().actuators[0].effort).toBeCloseTo(load, 6);
  });

  it("saturates beyond its limit: effort = τ_max and ω decreases at (τ_L − τ_max)/I", () => {
    const load = 2;
    const limit = 0.5;
    // from ω₀ = ω* − 2: k_v (ω* − ω) ≥ 0.8 > τ_max throughout
    const omega0 = target - 2;
    const sim = wheel(load, limit, omega0);
    for (let n = 1; n <= 1000; n++) {
      sim.step(1);
      const s = sim.state();
      expect(s.actuators[0].effort).toBe(limit);
      expect(s.joints[0].rates[0]).toBeCloseTo(omega0 - ((load - limit) / I) * n * 1e-3, 8);
    }
  });
});

describe("torque actuator", () => {
  it("a time-function effort on a prismatic joint: x(t) = ∫∫ u/m (u = 3 t: x = t³/(2m))", () => {
    const mass = 1.5;
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "cart", mass, inertia: [1, 1, 1] }],
      joints: [
        {
          id: "rail",
          type: "prismatic",
          a: { body: "ground" },
          b: { body: "cart" },
          axis: [1, 0, 0],
        },
      ],
      actuators: [{ id: "push", joint: "rail", type: "torque", effort: { rate: 3 } }],
      solver: { integrator: "generalized-alpha", dt: 1e-3 },
    } as ModelInput);
    sim.step(2000);
    const t = 2;
    expect(sim.state().joints[0].coordinates[0]).toBeCloseTo(t ** 3 / (2 * mass), 5);
    expect(sim.state().bodies[0].position[0]).toBeCloseTo(t ** 3 / (2 * mass), 5);
  });
});

describe("commands stepped by a live input mid-run (an actuator input at a step boundary)", () => {
  // The input acts from its step on: the motion from there is the closed form started at
  // that time, as from a model's start. Newmark and generalized-α carried the last step's
  // acceleration, under the old command, into the first step after it (h²(½ − β) a_t,
  // h(1 − γ) a_t): a torque stepped 0 → τ left the joint ½ h τ/I short of rate for ever,
  // and the PD step below was 4.2e-3 rad off at 1 ms (3.6e-2 at 1/60 s) where the same
  // response from the model's start is 1.2e-5.
  const t0 = 0.1;
  const h = 1e-3;
  const n0 = Math.round(t0 / h);
  for (const integrator of ["newmark", "generalized-alpha", "moreau-jean", "articulated"]) {
    it(`${integrator}: a PD target stepped 0 → 1.2 rad at t = 0.1 s follows θ*(1 − e^{−ζω_n τ}(cos ω_d τ + …)), τ = t − 0.1 s, as from the start`, () => {
      const kp = 20;
      const kd = 0.8;
      const target = 1.2;
      const sim = loadModel(
        rodModel({ type: "position", target: 0, kp, kd }, { integrator, dt: h }),
      );
      const wn = Math.sqrt(kp / Ipivot);
      const zeta = kd / (2 * Math.sqrt(kp * Ipivot));
      const wd = wn * Math.sqrt(1 - zeta * zeta);
      const exact = (t: number) =>
        target *
        (1 - Math.exp(-zeta * wn * t) * (Math.cos(wd * t) + ((zeta * wn) / wd) * Math.sin(wd * t)));
      sim.step(n0);
      sim.schedule([Input.parse({ type: "actuator", id: "servo", value: target })]);
      let worst = 0;
      for (let n = 1; n <= 1000; n++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(angleOf(sim) - exact(n * h)));
      }
      // the trapezoidal schemes' O(h²) phase error of this response from rest: 1.2e-5, 2.6e-5
      expect(worst).toBeLessThan(3e-5);
      // and the energy balance holds across the input (it read −3.0e-4 J)
      expect(Math.abs(sim.state().energy.error ?? Number.NaN)).toBeLessThan(2e-6);
    });

    it(`${integrator}: a torque stepped 0 → 1 N·m at t = 0.1 s turns the rod at q̇ = τ (t − 0.1 s)/I exactly`, () => {
      const sim = loadModel(rodModel({ type: "torque", effort: 0 }, { integrator, dt: h }));
      sim.step(n0);
      sim.schedule([Input.parse({ type: "actuator", id: "servo", value: 1 })]);
      sim.step(100);
      const rate = sim.state().joints[0].rates[0];
      // (Newmark's velocity-level joints: 2.2e-8 of it; it was 5e-3 short, ½ h τ/I)
      expect(Math.abs(rate / (0.1 / Ipivot) - 1)).toBeLessThan(1e-7);
    });
  }
});

describe("servos the step does not resolve under the trapezoidal schemes settle (weight 1 at the step's end)", () => {
  // I ω̇ = k_v (ω* − ω): backward Euler's weight gives ω_{n+1} − ω* = (ω_n − ω*)/(1 + h k_v/I),
  // the trapezoid's (1 − h k_v/2I)/(1 + h k_v/2I) → −1 rang (1.7e-3 of ω* off after 2 s under
  // moreau-jean, 24 % under newmark at h k_v/I = 333)
  const I = 0.05;
  const kv = 1000;
  const target = 10;
  const schemes: Record<string, unknown>[] = [
    { integrator: "moreau-jean" },
    { integrator: "newmark", gamma: 0.5, beta: 0.25 },
    { integrator: "generalized-alpha", rhoInfinity: 1 },
  ];
  for (const solver of schemes)
    for (const h of [1e-3, 1 / 60]) {
      it(`${solver.integrator} at h = ${h.toPrecision(3)} s: ω within 1e-8 of ω* after 0.5 s (h k_v/I = ${((h * kv) / I).toFixed(0)}), the servo's work booked as applied`, () => {
        const sim = loadModel({
          gravity: [0, 0, 0],
          bodies: [{ id: "wheel", mass: 1, inertia: [0.03, 0.03, I] }],
          joints: [
            {
              id: "axle",
              type: "revolute",
              a: { body: "ground" },
              b: { body: "wheel" },
              axis: [0, 0, 1],
            },
          ],
          actuators: [{ id: "drive", joint: "axle", type: "velocity", target, kv }],
          solver: { ...solver, dt: h },
        } as ModelInput);
        const n = Math.round(0.5 / h);
        let worst = 0;
        for (let k = 1; k <= n; k++) {
          sim.step(1);
          if (k * h > 0.1)
            worst = Math.max(worst, Math.abs(sim.state().joints[0].rates[0] - target));
        }
        expect(worst).toBeLessThan(1e-8 * target);
        const s = sim.state();
        expect(Math.abs(s.actuators[0].effort)).toBeLessThan(1e-6);
        // ½ I ω*² = 2.5 J all from the servo's work
        expect(Math.abs(s.energy.error ?? Number.NaN)).toBeLessThan(1e-9 * 2.5);
      });
    }

  // PD on the 2 kg, 0.6 m rod hinged at its end under gravity (I = m L²/3 = 0.24 kg·m²):
  // at rest at q with k_p (q* − q) = m g (L/2) cos q, the static torque the gravity moment
  const kp = 2e5;
  const kd = 200;
  for (const solver of schemes)
    for (const h of [1e-3, 1 / 60]) {
      it(`${solver.integrator} at h = ${h.toPrecision(3)} s: a stiff PD servo (h k_d/I = ${((h * kd) / Ipivot).toFixed(1)}) at rest with the static torque m g (L/2) cos q`, () => {
        const g = 9.81;
        const sim = loadModel(
          rodPendulum({
            mass: m,
            length: L,
            axis: [0, 0, 1],
            gravity: [0, -g, 0],
            servo: { type: "position", target: 0.3, kp, kd },
            solver: { ...solver, dt: h },
          }),
        );
        sim.step(Math.round(2 / h));
        let worst = 0;
        for (let k = 0; k < 20; k++) {
          sim.step(1);
          worst = Math.max(worst, Math.abs(sim.state().joints[0].rates[0]));
        }
        const s = sim.state();
        const q = s.joints[0].coordinates[0];
        expect(worst).toBeLessThan(1e-8);
        expect(s.actuators[0].effort).toBeCloseTo(m * g * (L / 2) * Math.cos(q), 6);
        expect(s.actuators[0].effort).toBeCloseTo(kp * (0.3 - q), 6);
      });
    }
});

describe("servos at extreme gains under newmark and generalized-alpha converge every step", () => {
  // A PD servo k_p = 1e10 N·m/rad, k_d = 5e8 N·m·s/rad on the rod (I = 0.24 kg·m², no
  // gravity) at 1/60 s: h k_d/I = 3.5e7, h √(k_p/I) = 3.4e3, unresolved, so its force is
  // taken with the weight 1 at the step's end in the velocity and the trapezoid's in the
  // position (AccelerationStepper.holdStiffForces; its damping k_d > (h/2) k_p, no lead),
  // which for this one coordinate is
  //   I (v₁ − v₀) = h (k_p (θ* − θ₁) − k_d v₁),   θ₁ = θ₀ + h (v₀ + v₁)/2,
  // written out below. Its start force (3e9 N·m for a 0.3 rad command) threw Newton's first
  // iterate 8.7e5 rad off: generalized-alpha failed the first step even at h/16, and newmark
  // (under gravity) the second; now every step converges whole.
  const h = 1 / 60;
  const kp = 1e10;
  const kd = 5e8;
  const target = 0.3;
  /** The recurrence's (θ, v) after n steps from rest at 0. */
  function recurrence(n: number): [number, number] {
    let [th, v] = [0, 0];
    for (let k = 0; k < n; k++) {
      const v1 =
        (Ipivot * v + h * kp * (target - th - 0.5 * h * v)) / (Ipivot + h * kd + 0.5 * h * h * kp);
      th += 0.5 * h * (v + v1);
      v = v1;
    }
    return [th, v];
  }
  for (const integrator of ["newmark", "generalized-alpha"])
    for (const stepped of [false, true])
      it(`${integrator}, ${stepped ? "the target stepped 0 → 0.3 rad by an input after 6 steps" : "commanded 0.3 rad from the start"}: within 1e-3 rad of the recurrence over 2 s, at rest on the target`, () => {
        const sim = loadModel(
          // (the error control off: it halves the transient's steps, whose recurrence is
          // then another; newmark's defaults take generalized-alpha's symmetric step on this
          // hinge, newmark.ts `alphaForm`)
          rodModel(
            { type: "position", target: stepped ? 0 : target, kp, kd },
            { integrator, dt: h, stepTolerance: null },
          ),
        );
        if (stepped) {
          sim.step(6);
          sim.schedule([Input.parse({ type: "actuator", id: "servo", value: target })]);
        }
        let worst = 0;
        for (let n = 1; n <= 120; n++) {
          sim.step(1);
          const s = sim.state();
          expect(s.solver.newtonConverged).toBe(true);
          // whole steps through the transient (generalized-alpha halves a few steps at rest,
          // where q is within 1e-9 rad of the target and its Newton meets rounding: 5 of 120
          // here, as on main at k_p = 1e7 to 1e9, 33 to 67 of 240 steps)
          if (integrator === "newmark" || n <= 30) expect(s.solver.substeps).toBe(1);
          worst = Math.max(worst, Math.abs(angleOf(sim) - recurrence(n)[0]));
        }
        // (newmark 5.7e-5 rad with its velocity-level joints before, now generalized-alpha's
        // position-level joints' 6.5e-4)
        expect(worst).toBeLessThan(1e-3);
        expect(Math.abs(angleOf(sim) - target)).toBeLessThan(1e-9);
        expect(Math.abs(sim.state().joints[0].rates[0])).toBeLessThan(1e-7);
      });

  it("a step no halving brings into Newton's reach ends the run naming the servos the step does not resolve", () => {
    // k_p = 1e26 N·m/rad, no k_d, under gravity: h √(k_p/Ĩ) with 1/Ĩ = gᵀM⁻¹g = 1/I_c, the
    // rod's inertia about its centre (the joints free), 6.8e11 (1e18 runs since newmark's
    // carried a_t loses the servos' constrained start share, P M⁻¹ f_s, and 1e22 since its
    // κ a_t, κ = h² (½ − β/γ), is taken out along the servo's force: shiftStiffStart)
    const kpx = 1e26;
    const sim = loadModel(
      rodPendulum({
        mass: m,
        length: L,
        axis: [0, 0, 1],
        gravity: [0, -9.81, 0],
        servo: { type: "position", target: 0, kp: kpx, kd: 0 },
        // the velocity-level joints (β ≠ ¼; newmark.ts), which fail the command's first step;
        // the defaults' symmetric step (`alphaForm`) runs all 15 steps, the rod on 0.3 rad
        // to 1e-16 by the end
        solver: { integrator: "newmark", dt: h, beta: 0.3, gamma: 0.5 },
      }),
    );
    let message = "";
    try {
      sim.step(5);
      sim.schedule([Input.parse({ type: "actuator", id: "servo", value: target })]);
      sim.step(10);
    } catch (err) {
      message = (err as Error).message;
    }
    const rate = (h * Math.sqrt(kpx / ((m * L * L) / 12))).toPrecision(3);
    expect(message).toContain(
      `; servos stiffer than the step resolves: "servo" (h·max(kd/I, √(kp/I)) = ${rate})`,
    );
    // the last good state is kept
    expect(message).toMatch(new RegExp(`^step ${sim.stepCount + 1} failed: newmark: `));
  });

  it("the message names the stiffest five, a velocity servo by its k_v, and counts the rest", () => {
    // 8 hinged links (servoChainLinks: 1 kg, I = 0.021 kg·m² about the hinges' axes), seven
    // position servos at k_p = 1e26 and a velocity servo at k_v = 1e26 on the last hinge,
    // which turns two links: 1/Ĩ = gᵀM⁻¹g = 2/0.021 with the joints free, h k_v/Ĩ = 1.59e26
    // (a 160-link chain's message named all 160)
    const { bodies, joints } = servoChainLinks(8);
    const h = 1 / 60;
    const sim = loadModel({
      bodies,
      joints,
      actuators: [
        ...positionServos(joints.slice(0, 7), 0.3, 1e26, 0),
        { id: "v", joint: joints[7].id, type: "velocity", target: 1, kv: 1e26 },
      ],
      solver: { integrator: "newmark", dt: h, beta: 0.3, gamma: 0.5 },
    });
    let message = "";
    try {
      sim.step(5);
    } catch (err) {
      message = (err as Error).message;
    }
    const named = message.slice(message.indexOf("servos stiffer than the step resolves: "));
    expect(named).toContain(`"v" (h·kv/I = ${((h * 1e26 * 2) / 0.021).toPrecision(3)}), "s`);
    expect(named.match(/"[^"]+" \(h·/g)).toHaveLength(5);
    expect(named).toContain(", and 3 more (");
  });
});

describe("a stiffness-only servo the step does not resolve: backward Euler of z = θ + δ ω", () => {
  // I θ̈ = k_p (θ* − θ), k_d = 0, w = h √(k_p/I) > 1 (I = m L²/3, the rod about its pivot).
  // The step takes the servo's end force with the weight 1 in the velocity, keeps the
  // trapezoid's position θ₁ = θ₀ + h (ω₀ + ω₁)/2, and measures the servo's error at
  // z = θ + δ ω, δ = h − c_x/c_v = h/2 (AccelerationStepper.holdStiffForces): so
  // z₁ = z₀ + h ω₁ and ω₁ = ω₀ − h (k_p/I)(z₁ − θ*), backward Euler of (z, ω) written out
  // below, whose roots 1/(1 ± i w) decay by 1/√(1 + w²) a step; θ = z − (h/2) ω. (Before, its
  // error was measured at θ₁: the slow root −(1 − 8/w²) flipped the error's sign every step
  // and shrank it by 2.8 % a step at w = 17, 7e-7 at k_p = 1e10.)
  const h = 1 / 60;
  /** The rod from rest at 0 under the servo k_p, k_d = 0, commanded `target` at 1/60 s. */
  const servoRod = (target: number, kp: number, solver: Record<string, unknown>) =>
    loadModel(rodModel({ type: "position", target, kp, kd: 0 }, { ...solver, dt: h }));
  const cases = [
    // a small command: the joint's geometry (the centre's chord against its arc) stays
    // below 1e-10 rad, and moreau-jean's step-error control (h²/12 ‖D − D_prev‖ against
    // 3e-4 m, which a user cannot turn off) does not split its steps, as it does for a
    // larger one (the first step of 0.1 rad at w = 17 in 13 sub-steps) or a stiffer servo
    { integrator: "newmark", target: 1e-3, ws: [17, 100, 3.4e3] },
    { integrator: "generalized-alpha", rhoInfinity: 1, target: 1e-3, ws: [17, 100, 3.4e3] },
    { integrator: "moreau-jean", target: 1e-5, ws: [17] },
  ];
  for (const { target, ws, ...solver } of cases)
    for (const w of ws)
      it(`${solver.integrator} at w = ${w}: θ = z − (h/2) ω and ω of backward Euler's recurrence to 1e-6 of the command over 100 steps`, () => {
        const kp = (w / h) ** 2 * Ipivot;
        const sim = servoRod(target, kp, solver);
        let [z, v] = [0, 0];
        let [worstAngle, worstRate] = [0, 0];
        for (let n = 1; n <= 100; n++) {
          // z₁ = z₀ + h ω₁, ω₁ = ω₀ − h (k_p/I)(z₁ − θ*)
          v = (v - h * (kp / Ipivot) * (z - target)) / (1 + w * w);
          z += h * v;
          sim.step(1);
          worstAngle = Math.max(worstAngle, Math.abs(angleOf(sim) - (z - 0.5 * h * v)));
          worstRate = Math.max(worstRate, h * Math.abs(sim.state().joints[0].rates[0] - v));
        }
        // (newmark 5e-8, generalized-alpha 1.5e-8 and moreau-jean 3.7e-7 of the command; the
        // rate's error over a step, h Δω, 3e-9, 3e-9 and 1.2e-6 of it)
        expect(worstAngle).toBeLessThan(1e-6 * target);
        expect(worstRate).toBeLessThan(2e-6 * target);
      });

  for (const solver of [
    { integrator: "moreau-jean" },
    { integrator: "newmark" },
    { integrator: "generalized-alpha", rhoInfinity: 1 },
  ])
    for (const kp of [(17 / h) ** 2 * Ipivot, 1e10])
      it(`${solver.integrator} at k_p = ${kp.toPrecision(3)}: a 0.3 rad command settles within 10 steps to 1e-9 rad, 1e-6 rad/s, and stays there for 5 s`, () => {
        const target = 0.3;
        const sim = servoRod(target, kp, solver);
        let settled = 0;
        let substeps = 0;
        for (let n = 1; n <= 300; n++) {
          sim.step(1);
          const s = sim.state();
          expect(s.solver.newtonConverged).toBe(true);
          substeps += s.solver.substeps;
          const still =
            Math.abs(angleOf(sim) - target) < 1e-9 && Math.abs(s.joints[0].rates[0]) < 1e-6;
          if (settled === 0 && still) settled = n;
          if (n > 10) expect(still).toBe(true);
        }
        // (4 to 10 steps: moreau-jean 8 and 10, its sub-steps keeping the step's lead δ = h/2,
        // AccelerationStepper.keepStepLead, so that they integrate the law ω = (θ* − θ)/δ and
        // the error shrinks by e⁻² a step while the error control splits; before, the error
        // after 300 steps was 2e-5 rad at w = 17 and the rate swung ±35 rad/s at k_p = 1e10)
        expect(settled).toBeGreaterThan(0);
        expect(settled).toBeLessThanOrEqual(10);
        // moreau-jean's and generalized-alpha's error controls split the first steps (up to
        // 16 sub-steps; 300 (newmark), 308 (generalized-alpha), 338 and 417 (moreau-jean,
        // whose control splits for as long as that law's e⁻² a step is not resolved: 314
        // with the sub-steps' own lead, which snapped the servo 16 times faster) in all),
        // where before they split steps for as long as the servo rang; at rest none (below:
        // before, 379)
        expect(substeps).toBeLessThan(1.5 * 300);
      });

  for (const solver of [{ integrator: "moreau-jean" }, { integrator: "generalized-alpha" }])
    for (const kp of [(17 / h) ** 2 * Ipivot, 1e10])
      it(`${solver.integrator} at k_p = ${kp.toPrecision(3)}: at rest on a 0.3 rad command Newton converges in at most 3 iterations a step, no step halved`, () => {
        // Steps 21 to 300, the rod within 1e-9 rad of its command. The end's velocity
        // projection (AccelerationStepper.applyUnknown) left a residual below 1e-9 m/s as it
        // was, so that near the root the residual map switched between iterates: κ Y λ̃ (the
        // start directions' share of v, which the projection takes out) stayed in v, and the
        // servo's lead δ k_p q̇ read it, a term λ̃'s Newton column does not have. Its
        // corrections then shrank by 0.75 each (generalized-alpha) and the steps were halved
        // every 5 to 40: before, at k_p = 2.5e5 (w = 17), 1421 iterations, 18 at most, and
        // 345 sub-steps (moreau-jean 1132, 12, 302); at 1e10, 861, 11, 282 (560, 2, 280).
        // Now 749 / 840 (generalized-alpha) and 284 / 280 (moreau-jean), 3 at most, 280
        const sim = servoRod(0.3, kp, solver);
        sim.step(20);
        let [iterations, worst, substeps] = [0, 0, 0];
        for (let n = 21; n <= 300; n++) {
          sim.step(1);
          const s = sim.state();
          expect(Math.abs(angleOf(sim) - 0.3)).toBeLessThan(1e-9);
          iterations += s.solver.newtonIterations;
          worst = Math.max(worst, s.solver.newtonIterations);
          substeps += s.solver.substeps;
        }
        expect(substeps).toBe(280);
        expect(worst).toBeLessThanOrEqual(3);
        expect(iterations).toBeLessThanOrEqual(3.1 * 280);
      });
});

describe("a servo's unresolved test takes the inertia the joints leave", () => {
  // The middle joint j1 of a 3-link chain hanging from a hinge (links 1 kg, 0.5 m, 0.02
  // kg·m² about their centres, all hinges about y): its free bound 1/Ĩ = gᵀM⁻¹g = 2/I_c =
  // 100 kg⁻¹m⁻², the inverse inertia the joints leave (M_q⁻¹)₁₁ = 41.6, M_q the chain's
  // joint-space mass matrix hanging straight (written out below). A PD servo k_p = 60 at
  // 1/60 s has h √(k_p/Ĩ) = 1.29 by the bound and 0.83 by the joints: resolved, it keeps
  // the trapezoid's weights; taken as unresolved (weight 1, first order) it tracked a
  // 0.5 rad, 0.5 Hz sine twice as far from the run at h/16 (6.3e-3 rad against 3.0e-3).
  const [mass, len, Ic, h, kp] = [1, 0.5, 0.02, 1 / 60, 60];
  it("generalized-alpha: k_p between the two bounds tracks as resolved, within 3.5e-3 rad of h/16 over 3 s", () => {
    // M_φ = m JᵀJ + I_c 1 (J: the centres' horizontal speeds by the links' angles φ),
    // φ = T q (T lower triangular ones), M_q = Tᵀ M_φ T
    const J = [
      [len / 2, 0, 0],
      [len, len / 2, 0],
      [len, len, len / 2],
    ];
    const Mphi = [0, 1, 2].map((i) =>
      [0, 1, 2].map(
        (j) => mass * [0, 1, 2].reduce((a, k) => a + J[k][i] * J[k][j], 0) + (i === j ? Ic : 0),
      ),
    );
    const T = [0, 1, 2].map((i) => [0, 1, 2].map((j) => (j <= i ? 1 : 0)));
    const Mq = [0, 1, 2].map((i) =>
      [0, 1, 2].map((j) =>
        [0, 1, 2].reduce(
          (a, k) => a + [0, 1, 2].reduce((b, l) => b + T[k][i] * Mphi[k][l] * T[l][j], 0),
          0,
        ),
      ),
    );
    const det =
      Mq[0][0] * (Mq[1][1] * Mq[2][2] - Mq[1][2] * Mq[2][1]) -
      Mq[0][1] * (Mq[1][0] * Mq[2][2] - Mq[1][2] * Mq[2][0]) +
      Mq[0][2] * (Mq[1][0] * Mq[2][1] - Mq[1][1] * Mq[2][0]);
    const inverseInertia = (Mq[0][0] * Mq[2][2] - Mq[0][2] * Mq[2][0]) / det;
    expect(inverseInertia).toBeCloseTo(41.613, 3);
    expect(h * Math.sqrt(kp * (2 / Ic))).toBeGreaterThan(1);
    expect(h * Math.sqrt(kp * inverseInertia)).toBeLessThan(1);
    const chain = hangingChain({
      joints: [0, 1, 2].map(() => ({
        type: "revolute" as const,
        axis: [0, 1, 0] as [number, number, number],
      })),
      mass,
      inertia: [Ic, Ic, 0.002],
    });
    const model = (dt: number) =>
      loadModel({
        gravity: [0, 0, -9.81],
        ...chain,
        actuators: [
          {
            id: "s",
            joint: "j1",
            type: "position",
            target: { type: "sine", amplitude: 0.5, frequency: 0.5 },
            kp,
            kd: 0.5,
          },
        ],
        solver: { integrator: "generalized-alpha", dt },
      } as ModelInput);
    const sim = model(h);
    const fine = model(h / 16);
    let worst = 0;
    for (let k = 0; k < 180; k++) {
      sim.step(1);
      fine.step(16);
      const [a, b] = [sim.state().joints, fine.state().joints];
      for (let j = 0; j < 3; j++)
        worst = Math.max(worst, Math.abs(a[j].coordinates[0] - b[j].coordinates[0]));
    }
    expect(worst).toBeLessThan(3.5e-3);
  });
});
