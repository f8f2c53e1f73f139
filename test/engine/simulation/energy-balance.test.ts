/**
 * The energy balance of a damped model (src/engine/simulation/monitor.ts): energy.dissipated
 * is the damping's work, ½ h (P_t + P_{t+h}) summed over the steps, plus what the velocity
 * decay and the impulses of nonsmooth contact and joint limits took out, and energy.error
 * the total plus it minus the reference, the integrator's own error. Checked against the
 * Newmark recurrence of a damped oscillator written out here, against the order of the
 * schemes (halving h divides the error of a damped double pendulum by four), over a long
 * damped run that loses nearly all its energy, across a snapshot, with
 * solver.energyDriftLimit, and against the closed-form losses of impacts and friction.
 */
import { describe, expect, it } from "vitest";
import { InputsBody } from "../../../schemas/input";
import { DivergenceError, loadModel, loadSnapshot } from "../../../src/engine/index";
import { readExample } from "../../support/examples";
import { ballOnFloor, rodPendulum } from "../../support/models";
import { axisAngle, rotate } from "../../support/quat";

/**
 * A 2 kg slider on a prismatic joint along x from the origin at 1.5 m/s, its coordinate
 * limited to [−0.2, 0.2] m (limits as given), gravity across the axis.
 */
function limitedSlider(limits: Record<string, unknown>, solver: Record<string, unknown>) {
  return {
    gravity: [0, 0, -9.81],
    bodies: [
      {
        id: "s",
        kind: "rigid",
        mass: 2,
        inertia: [0.01, 0.02, 0.03],
        position: [0, 0, 0],
        velocity: [1.5, 0, 0],
      },
    ],
    joints: [
      {
        id: "g",
        type: "prismatic",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "s", point: [0, 0, 0] },
        axis: [1, 0, 0],
        limits: { lower: -0.2, upper: 0.2, ...limits },
      },
    ],
    solver,
  };
}

/** A particle of mass m on a zero-length spring (k, c) to the origin, moving along x. */
function dampedOscillator(solver: Record<string, unknown>, c: number) {
  return {
    gravity: [0, 0, 0],
    bodies: [{ id: "p", kind: "particle", mass: 2, position: [0.3, 0, 0], velocity: [0, 0, 0] }],
    forces: [
      {
        id: "s",
        type: "spring",
        a: { body: "p" },
        b: { body: "ground" },
        stiffness: 50,
        damping: c,
        restLength: 0,
      },
    ],
    // the trapezoidal rule under newmark (its β, γ given only to it)
    solver: {
      integrator: "newmark",
      ...(solver.integrator === undefined || solver.integrator === "newmark"
        ? { beta: 0.25, gamma: 0.5 }
        : {}),
      newtonTolerance: 1e-14,
      ...solver,
    },
  };
}

/**
 * The trapezoidal rule on m ẍ + c_eff ẋ + k x = 0 written out: a_{n+1} from the equation at
 * t_{n+1} with x_{n+1} = x_n + h v_n + h²/4 (a_n + a_{n+1}), v_{n+1} = v_n + h/2 (a_n +
 * a_{n+1}); the energy ½ m v² + ½ k x², the dissipation a step as the balance counts it:
 * a dashpot's force (or the solver's Rayleigh damping) with the scheme's weights,
 * h v̄ · c_eff v̄ with v̄ = ½ (v_n + v_{n+1}). Returns [energy error, dissipated] after each
 * step.
 */
function oscillatorBalance(m: number, k: number, cEff: number, h: number, steps: number) {
  let x = 0.3;
  let v = 0;
  let a = -(k * x + cEff * v) / m;
  const e0 = 0.5 * k * x * x;
  let dissipated = 0;
  const out: [number, number][] = [];
  for (let n = 0; n < steps; n++) {
    const next =
      -(cEff * (v + 0.5 * h * a) + k * (x + h * v + 0.25 * h * h * a)) /
      (m + 0.5 * h * cEff + 0.25 * h * h * k);
    const v1 = v + 0.5 * h * (a + next);
    x += h * v + 0.25 * h * h * (a + next);
    const mean = 0.5 * (v + v1);
    dissipated += h * cEff * mean * mean;
    v = v1;
    a = next;
    const energy = 0.5 * m * v * v + 0.5 * k * x * x;
    out.push([energy + dissipated - e0, dissipated]);
  }
  return out;
}

/**
 * A wheel (1 kg, isotropic inertia) on a vertical revolute axle "axle" at the origin, with
 * the drive given (an actuator or a motor on the axle).
 */
function drivenWheel(
  inertia: number,
  drive: Record<string, unknown>,
  solver: Record<string, unknown>,
) {
  return {
    gravity: [0, 0, -9.81],
    bodies: [
      {
        id: "w",
        kind: "rigid",
        mass: 1,
        inertia: [inertia, inertia, inertia],
        position: [0, 0, 0],
      },
    ],
    joints: [
      {
        id: "axle",
        type: "revolute",
        a: { body: "ground", point: [0, 0, 0] },
        b: { body: "w", point: [0, 0, 0] },
        axis: [0, 0, 1],
      },
    ],
    ...drive,
    solver,
  };
}

/** The double-pendulum example with a damper on both rods. */
function dampedPendulum(solver: Record<string, unknown>) {
  return {
    ...readExample("double-pendulum"),
    forces: [{ id: "d", type: "damper", linear: 0.05, angular: 0.02 }],
    solver,
  };
}

describe("energy balance", () => {
  it("a damped oscillator: dissipated and error as the trapezoidal recurrence gives them (the balance closes)", () => {
    const h = 0.01;
    const expected = oscillatorBalance(2, 50, 0.8, h, 600);
    const sim = loadModel(dampedOscillator({ dt: h }, 0.8));
    for (const [error, dissipated] of expected) {
      sim.step(1);
      const e = sim.state().energy;
      expect(e.dissipated).toBeCloseTo(dissipated, 11);
      expect(e.error).toBeCloseTo(error, 11);
    }
    // six periods (T = 2π √(m/k) ≈ 1.26 s) lose most of the 2.25 J; the trapezoidal rule
    // keeps a linear spring's energy exactly (x_{n+1} − x_n = h v̄) and the dashpot's work
    // with the scheme's weights is exactly what it took: the balance closes to rounding
    const last = sim.state().energy;
    expect(last.dissipated).toBeGreaterThan(2);
    expect(Math.abs(last.error as number)).toBeLessThan(1e-12);
  });

  // the oscillator's m = 2 kg, k = 50 N/m; K = k I for its zero-length linear spring, so
  // −(r_M M + r_K K) v is the damper's −c v with c = r_M m + r_K k, booked as the scheme
  // weighs it (step-work.ts): the balance closes to rounding (the trapezoid of its power,
  // booked before, left Σ h/4 c Δv² in energy.error)
  it.each([
    ["rayleighMass", 0.3, 0.3 * 2],
    ["rayleighStiffness", 0.02, 0.02 * 50],
  ])("solver.%s r is the dissipation of a damper c = r m or r k", (setting, r, c) => {
    const h = 0.01;
    const expected = oscillatorBalance(2, 50, c, h, 300);
    const sim = loadModel(dampedOscillator({ dt: h, [setting]: r }, 0));
    for (const [error, dissipated] of expected) {
      sim.step(1);
      const e = sim.state().energy;
      expect(e.dissipated).toBeCloseTo(dissipated, 11);
      expect(e.error).toBeCloseTo(error, 11);
    }
    expect(Math.abs(sim.state().energy.error as number)).toBeLessThan(1e-12);
  });

  it("solver.velocityDamping: dissipated counts the kinetic energy each decay took out", () => {
    // backward Euler written out: m a = −k x_{n+1}, then v ← v e^(−h rate)
    const h = 0.01;
    const [m, k, rate] = [2, 50, 0.5];
    const decay = Math.exp(-h * rate);
    let x = 0.3;
    let v = 0;
    let dissipated = 0;
    const sim = loadModel({
      ...dampedOscillator({ integrator: "backward-euler", dt: h, velocityDamping: rate }, 0),
    });
    for (let n = 0; n < 300; n++) {
      const a = -(k * (x + h * v)) / (m + h * h * k);
      v += h * a;
      x += h * v;
      dissipated += 0.5 * m * v * v * (1 - decay * decay);
      v *= decay;
      sim.step(1);
      const e = sim.state().energy;
      expect(e.dissipated).toBeCloseTo(dissipated, 12);
      expect(e.error).toBeCloseTo(
        0.5 * m * v * v + 0.5 * k * x * x + dissipated - 0.5 * k * 0.3 * 0.3,
        11,
      );
    }
    // backward Euler's own loss is the error: negative, and of the order of what it damps
    expect(sim.state().energy.error as number).toBeLessThan(-0.1);
  });

  it("a damped double pendulum: the error is second order in h, far below what is dissipated", () => {
    const largest = (dt: number) => {
      const sim = loadModel(dampedPendulum({ integrator: "newmark", dt }));
      let worst = 0;
      for (let i = 0; i < Math.round(10 / dt); i++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().energy.error as number));
      }
      return { worst, dissipated: sim.state().energy.dissipated as number };
    };
    const coarse = largest(0.005);
    const fine = largest(0.0025);
    expect(coarse.worst / fine.worst).toBeGreaterThan(3.5);
    expect(coarse.worst / fine.worst).toBeLessThan(4.5);
    expect(fine.worst).toBeLessThan(1e-3 * fine.dissipated);
  });

  it("over 30 s at the defaults (generalized-α) the damper takes nearly all the energy and the balance holds", () => {
    const sim = loadModel(dampedPendulum({ integrator: "generalized-alpha", dt: 0.005 }));
    const s0 = sim.state().energy;
    let previous = 0;
    let worst = 0;
    for (let i = 0; i < 6000; i++) {
      sim.step(1);
      const e = sim.state().energy;
      // the damper's power c|v|² is never negative
      expect(e.dissipated as number).toBeGreaterThanOrEqual(previous);
      previous = e.dissipated as number;
      worst = Math.max(worst, Math.abs(e.error as number));
    }
    const e = sim.state().energy;
    // the pendulum has come to rest near the bottom: what it lost is what was dissipated
    const lost = s0.total - e.total;
    expect(lost).toBeGreaterThan(9);
    expect(Math.abs((e.dissipated as number) - lost)).toBeLessThan(1e-3 * lost);
    expect(worst).toBeLessThan(1e-3 * lost);
  });

  it("continues bit for bit from a snapshot; an older one without energyDissipated starts at 0", () => {
    const sim = loadModel(dampedPendulum({ integrator: "newmark", dt: 0.005 }));
    sim.step(150);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    expect(snap.memory.energyDissipated).toBeGreaterThan(0);
    const copy = loadSnapshot(snap);
    expect(copy.state()).toEqual(sim.state());
    for (let k = 0; k < 100; k++) {
      sim.step(1);
      copy.step(1);
    }
    expect(copy.state().energy).toEqual(sim.state().energy);

    const older = JSON.parse(JSON.stringify(sim.snapshot()));
    delete older.checksum;
    delete older.memory.energyDissipated;
    delete older.memory.energyReference;
    const restored = loadSnapshot(older);
    expect(restored.state().energy.dissipated).toBe(0);
    expect(restored.state().energy.error).toBe(0);
  });

  it("energyDriftLimit on a damped model ends an unstable run diverged at its last good step", () => {
    // the central difference (Newmark β = 0, γ = ½, as set) is stable for h ω < 2: ω = 5
    // rad/s, h = 0.5 s is not (symplectic Euler would take the sub-steps the spring's bound
    // asks, theta-scheme.ts)
    const model = dampedOscillator({ beta: 0, gamma: 0.5, dt: 0.5 }, 0.1);
    const free = loadModel(model);
    let good = free.state();
    let blown = false;
    for (let n = 0; n < 1000 && !blown; n++) {
      free.step(1);
      const s = free.state();
      blown = Math.abs(s.energy.error as number) > 10;
      if (!blown) good = s;
    }
    expect(blown).toBe(true);
    const sim = loadModel({ ...model, solver: { ...model.solver, energyDriftLimit: 10 } });
    expect(() => sim.step(1000)).toThrow(DivergenceError);
    expect(sim.state().step).toBe(good.step);
    expect(sim.state().bodies).toEqual(good.bodies);
    expect(sim.state().energy).toEqual(good.energy);
  });

  it("friction: a sphere launched sliding loses 2/7 of its kinetic energy until it rolls", () => {
    // solid sphere, I = 2/5 m r²: sliding stops at v = 5/7 v0 (angular momentum about the
    // contact point is conserved), T = ½ m v² + ½ I ω² = (5/7) ½ m v0², whatever μ
    const v0 = 2;
    const sim = loadModel(
      ballOnFloor({ friction: 0.5, restitution: 0 }, { z: 0.1, vx: v0 }, { dt: 0.002 }),
    );
    const t0 = sim.state().energy.total;
    sim.step(750);
    const s = sim.state();
    expect(s.bodies[0].velocity[0]).toBeCloseTo((5 / 7) * v0, 6);
    expect(s.energy.dissipated).toBeCloseTo((2 / 7) * 0.5 * v0 * v0, 6);
    expect(Math.abs(s.energy.error as number)).toBeLessThan(1e-9 * t0);
  });

  it("impacts: a limit with restitution e takes (1 − e²) of the slider's kinetic energy a hit", () => {
    for (const [e, integrator] of [
      [0.5, "moreau-jean"],
      [0, "backward-euler"],
      [1, "symplectic-euler"],
    ] as const) {
      const sim = loadModel(limitedSlider({ restitution: e }, { integrator, dt: 0.002 }));
      // 2 s: three hits at 1.5 m/s (and slower after), none with e = 0 after the first
      sim.step(1000);
      const s = sim.state();
      const v = s.bodies[0].velocity[0];
      const hits = e === 0 ? 1 : 3;
      expect(Math.abs(v)).toBeCloseTo(1.5 * e ** hits, 9);
      expect(s.energy.dissipated).toBeCloseTo(0.5 * 2 * (1.5 * 1.5 - v * v), 9);
      expect(Math.abs(s.energy.error as number)).toBeLessThan(1e-9);
    }
  });

  it("a compliant limit (newmark, generalized-alpha): the critically damped stop leaves e^(−2) of the speed", () => {
    // the default law is k = m̃ ω², c = 2 m̃ ω (ω = 2π/0.02 s; m̃ = m for a slider): past the
    // bound δ = v0 t e^(−ωt), its push k δ + c δ̇ = m ω v0 e^(−ωt) (2 − ωt) falls to 0 at
    // ωt = 2 with δ̇ = −v0 e^(−2); clamped from there (no adhesion), the slider leaves at
    // v0 e^(−2) and (1 − e^(−4)) of its kinetic energy is dissipated
    const run = (integrator: string, dt: number) => {
      const sim = loadModel(limitedSlider({}, { integrator, dt }));
      sim.step(Math.round(0.4 / dt));
      const s = sim.state();
      return { v: s.bodies[0].velocity[0], energy: s.energy };
    };
    const lost = (1 - Math.exp(-4)) * 0.5 * 2 * 1.5 * 1.5;
    for (const integrator of ["newmark", "generalized-alpha"]) {
      const fine = run(integrator, 0.0005);
      expect(fine.v).toBeLessThan(-0.9 * 1.5 * Math.exp(-2));
      expect(fine.v).toBeGreaterThan(-1.1 * 1.5 * Math.exp(-2));
      expect(Math.abs((fine.energy.dissipated as number) - lost)).toBeLessThan(0.01 * lost);
      // the law's switches are located within the steps (integrators/limit-switch.ts): a
      // switch integrated inside a step missed ½ k v s (h − s), up to ⅛ k v0² h² (1.4e-2 J
      // at h = 0.5 ms: −9.7e-3 J read before); located, every one (the ramp's end too), the
      // pieces leave rounding (1.5e-13 J measured; 2.2e-4 J allowed while a switch whose
      // missed work was below 1e-4 of the energy at stake stayed in its step)
      const bound = 1e-10 * 0.5 * 2 * 1.5 * 1.5;
      expect(Math.abs(fine.energy.error as number)).toBeLessThan(bound);
      expect(Math.abs(run(integrator, 0.001).energy.error as number)).toBeLessThan(bound);
    }
  });

  it("a position servo along a ramp (its target's rate jumps at both ends): the balance closes to rounding under newmark and generalized-alpha", () => {
    // a rod on a vertical axle without gravity: nothing conservative acts, so the kinetic
    // energy is the servo's work alone. kd/I = 400/s is not resolved by h = 5 ms: at the
    // ramp's start the effort falls from kd q̇* = 120 N·m to about 1 N·m within the first
    // step, and the trapezoid of the power at the step's ends (0 and 0.9 W) missed nearly
    // all of the ½ I q̇*² = 0.09 J the rod took; the servo's effort weighted as the scheme
    // weighs it is exactly that work
    for (const integrator of ["newmark", "generalized-alpha"]) {
      const sim = loadModel({
        gravity: [0, 0, 0],
        bodies: [{ id: "rod", kind: "rigid", mass: 1, inertia: [0.25, 0.25, 0.5] }],
        joints: [
          {
            id: "axle",
            type: "revolute",
            a: { body: "ground", point: [0, 0, 0] },
            b: { body: "rod", point: [0, 0, 0] },
            axis: [0, 0, 1],
          },
        ],
        actuators: [
          {
            id: "servo",
            type: "position",
            joint: "axle",
            kp: 2000,
            kd: 200,
            target: {
              type: "table",
              points: [
                [0, 0],
                [0.5, 0.3],
              ],
            },
          },
        ],
        solver: { integrator, dt: 0.005 },
      });
      for (let n = 0; n < 200; n++) {
        sim.step(1);
        const e = sim.state().energy;
        expect(Math.abs(e.error as number)).toBeLessThan(1e-12);
        // during the ramp the rod turns at about q̇* = 0.6 rad/s: ½ I q̇² ≈ 0.09 J put in
        if (n === 50) expect(-(e.dissipated as number)).toBeGreaterThan(0.08);
      }
    }
  });

  it("a step split in sub-steps (a stiff servo, generalized-α's error control): each sub-step's work is weighed, the balance closes", () => {
    // a light rod (1 g·m² about its centre, 0.1 kg, its centre 5 cm from the axle) pulled
    // to 0.3 rad by a servo of kp = 2000, kd = 200: k_d/I ≈ 1.6e5 /s, unresolved by the
    // step, taken at the (sub-)step's end (weight 1), and the error control at a tight
    // stepTolerance (1e-7 m) splits 18 of the 48 steps (none at the default 3e-4, since the
    // servo no longer rings). No gravity: the kinetic energy ½ I_axle q̇² is the servo's whole
    // work. Weighed over the whole step, the work was off by 27 J after three steps.
    const Ic = 1e-3;
    const sim = loadModel({
      gravity: [0, 0, 0],
      bodies: [
        { id: "rod", kind: "rigid", mass: 0.1, inertia: [Ic, Ic, Ic], position: [0.05, 0, 0] },
      ],
      joints: [
        {
          id: "axle",
          type: "revolute",
          a: { body: "ground", point: [0, 0, 0] },
          b: { body: "rod", point: [-0.05, 0, 0] },
          axis: [0, 1, 0],
        },
      ],
      actuators: [{ id: "servo", type: "position", joint: "axle", kp: 2000, kd: 200, target: 0.3 }],
      solver: { integrator: "generalized-alpha", dt: 1 / 240, stepTolerance: 1e-7 },
    });
    const Iaxle = Ic + 0.1 * 0.05 ** 2;
    let split = 0;
    for (let n = 0; n < 48; n++) {
      sim.step(1);
      const st = sim.state();
      if ((st.solver.substeps ?? 1) > 1) split++;
      const rate = st.joints[0].rates?.[0] as number;
      const kinetic = 0.5 * Iaxle * rate * rate;
      // to Newton's tolerance (measured: 6e-11 J, against 0.02 J of kinetic energy)
      expect(Math.abs(kinetic + (st.energy.dissipated as number))).toBeLessThan(1e-6);
      expect(Math.abs(st.energy.error as number)).toBeLessThan(1e-6);
    }
    expect(split).toBeGreaterThan(10);
  });

  it("loads and actuators put energy in: dissipated is minus their work", () => {
    // a free particle pushed by f = F sin(ω t) along x: v = F/(m ω) (1 − cos ω t), the
    // load's work ½ m v² (no gravity, nothing else acting)
    const [m, F, w, h] = [2, 3, 4, 0.002];
    const pushed = loadModel({
      gravity: [0, 0, 0],
      bodies: [{ id: "p", kind: "particle", mass: m, position: [0, 0, 0] }],
      forces: [
        {
          id: "f",
          type: "pointForce",
          at: { body: "p" },
          force: [{ type: "sine", amplitude: F, frequency: w / (2 * Math.PI) }, 0, 0],
        },
      ],
      solver: { integrator: "newmark", dt: h },
    });
    let worst = 0;
    for (let n = 1; n <= 1000; n++) {
      pushed.step(1);
      const v = (F / (m * w)) * (1 - Math.cos(w * n * h));
      const e = pushed.state().energy;
      expect(e.dissipated as number).toBeCloseTo(-0.5 * m * v * v, 4);
      worst = Math.max(worst, Math.abs(e.error as number));
    }
    expect(worst).toBeLessThan(1e-5);

    // a wheel on a revolute joint spun by a constant torque τ: ω = τ t / I, the work ½ I ω²
    const [inertia, tau] = [0.5, 0.8];
    const wheel = loadModel(
      drivenWheel(
        inertia,
        { actuators: [{ id: "drive", joint: "axle", type: "torque", effort: tau }] },
        { integrator: "generalized-alpha", dt: h },
      ),
    );
    wheel.step(1000);
    const s = wheel.state();
    const spin = (tau * 1000 * h) / inertia;
    expect(s.bodies[0].angularVelocity[2]).toBeCloseTo(spin, 8);
    expect(s.energy.dissipated as number).toBeCloseTo(-0.5 * inertia * spin * spin, 6);
    expect(Math.abs(s.energy.error as number)).toBeLessThan(1e-6);

    // a command reversed by an input at a step boundary brakes the wheel: the step after it
    // starts with the new torque's power (with the last step's, backward Euler, whose step
    // applies the end-of-step torque whole, would be off by ½ h τ ω ≈ 1.3 mJ)
    const euler = loadModel(
      drivenWheel(
        inertia,
        { actuators: [{ id: "drive", joint: "axle", type: "torque", effort: tau }] },
        { integrator: "backward-euler", dt: h },
      ),
    );
    euler.step(1000);
    euler.schedule([{ type: "actuator", id: "drive", value: -tau }]);
    euler.step(500);
    const braked = euler.state();
    const slower = spin - (tau * 500 * h) / inertia;
    expect(braked.bodies[0].angularVelocity[2]).toBeCloseTo(slower, 9);
    expect(braked.energy.dissipated as number).toBeCloseTo(-0.5 * inertia * slower * slower, 9);
    expect(Math.abs(braked.energy.error as number)).toBeLessThan(1e-9);
  });

  it("motors: a driven wheel's work is ½ I q̇_d² (exactly under backward Euler), a driven pendulum's balance second order", () => {
    // q_d = A (1 − cos ω t) (a sine of phase −π/2 and offset A): at rest at t = 0
    const angle = { type: "sine", amplitude: 0.7, frequency: 1, phase: -Math.PI / 2, offset: 0.7 };
    const w = 2 * Math.PI;
    const inertia = 0.5;
    /** The largest |dissipated + ½ I q̇_d²| over 2.5 s: what the motor put in is what it gave. */
    const wheelMiss = (integrator: string) => {
      const wheel = loadModel(
        drivenWheel(
          inertia,
          { motors: [{ id: "m", joint: "axle", angle }] },
          { integrator, dt: 0.002 },
        ),
      );
      let miss = 0;
      for (let n = 1; n <= 1250; n++) {
        wheel.step(1);
        const rate = 0.7 * w * Math.sin(w * n * 0.002);
        const given = 0.5 * inertia * rate * rate;
        miss = Math.max(miss, Math.abs((wheel.state().energy.dissipated as number) + given));
      }
      return miss;
    };
    // of up to 4.8 J: the trapezoid of the motor's power at the steps' consistent multipliers
    // (moreau-jean at θ = ½ and symplectic Euler hold the joints and motors at the position
    // level as generalized-alpha), and backward Euler's identity (its velocity-level step's
    // impulse over the step is the kinetic energy's change)
    for (const integrator of ["newmark", "generalized-alpha", "moreau-jean", "symplectic-euler"])
      expect(wheelMiss(integrator)).toBeLessThan(1e-3);
    expect(wheelMiss("backward-euler")).toBeLessThan(1e-9);
    // the double pendulum's shoulder driven so: what it puts in and takes out (9.4 J at most)
    // balances the pendulum's energy to the scheme's O(h²)
    for (const integrator of ["newmark", "generalized-alpha", "moreau-jean"]) {
      const worst = (dt: number) => {
        const pendulum = readExample("double-pendulum");
        const sim = loadModel({
          ...pendulum,
          motors: [{ id: "m", joint: "shoulder", angle }],
          solver: { integrator, dt },
        });
        let e = 0;
        for (let i = 0; i < Math.round(5 / dt); i++) {
          sim.step(1);
          e = Math.max(e, Math.abs(sim.state().energy.error as number));
        }
        return e;
      };
      const coarse = worst(0.002);
      const fine = worst(0.001);
      expect(coarse).toBeLessThan(5e-3);
      expect(coarse / fine).toBeGreaterThan(3.5);
      expect(coarse / fine).toBeLessThan(4.5);
    }
  });

  it("a motor that sets its joint turning from rest: its impulsive work at the start is counted (newmark, generalized-alpha)", () => {
    // the wheel at rest, its axle's motor at ω0 from t = 0: the start is made consistent
    // with the motor (the velocities projected in the mass metric), and the kinetic energy
    // that puts in, ½ I ω0², is the motor's work; the balance then holds. Before, the two
    // integrators missed it (the trapezoid of the motor's power at the step's ends)
    const [inertia, w0] = [0.5, 3];
    for (const integrator of ["newmark", "generalized-alpha"]) {
      const wheel = loadModel(
        drivenWheel(
          inertia,
          { motors: [{ id: "m", joint: "axle", angle: { offset: 0, rate: w0 } }] },
          { integrator, dt: 0.002 },
        ),
      );
      wheel.step(1);
      expect(wheel.state().energy.dissipated as number).toBeCloseTo(-0.5 * inertia * w0 * w0, 9);
      wheel.step(500);
      expect(Math.abs(wheel.state().energy.error as number)).toBeLessThan(1e-9);
    }
    // the slider-crank example (a crank driven at 1 rev/s from rest): 0.626 J of its ~1.4 J
    // was the uncounted start; the first step's own error is left (first order in h)
    const crank = loadModel(readExample("slider-crank"));
    crank.step(5000);
    expect(Math.abs(crank.state().energy.error as number)).toBeLessThan(2e-3);
  });

  it("a motor loaded at the start: its first step's power is taken at the start's own multipliers (newmark, generalized-alpha)", () => {
    // a 1 kg, 1 m rod hinged at one end, turned at 50 rad/s against gravity from t = 0: the
    // motor's torque is −m g (L/2) cos(ω t) and its work the potential energy's change, so the
    // balance is the trapezoid's error on the motor's power, second order in h. The first
    // step took the start's power at the State's multipliers, zero before any step: ½ h τ₀ ω
    // stayed in energy.error for good (0.62 J at 5 ms, 0.31 at 2.5 ms: first order)
    const worst = (integrator: string, dt: number) => {
      const sim = loadModel({
        ...rodPendulum({
          mass: 1,
          length: 1,
          axis: [0, 1, 0],
          gravity: [0, 0, -9.81],
          solver: { integrator, dt },
        }),
        motors: [{ id: "m", joint: "pin", angle: { rate: 50 } }],
      } as never);
      let e = 0;
      for (let n = 0; n < Math.round(5 / dt); n++) {
        sim.step(1);
        e = Math.max(e, Math.abs(sim.state().energy.error as number));
      }
      return e;
    };
    for (const integrator of ["newmark", "generalized-alpha"]) {
      // measured 6.4e-3 and 1.6e-3 J (0.31 and 0.15 before)
      const coarse = worst(integrator, 0.0025);
      const fine = worst(integrator, 0.00125);
      expect(coarse, integrator).toBeLessThan(1e-2);
      expect(coarse / fine, integrator).toBeGreaterThan(3.5);
      expect(coarse / fine, integrator).toBeLessThan(4.5);
    }
  });

  it("a new start is made consistent under every Newton integrator: a motor from rest, an impulse off the pivot", () => {
    // a 1 kg, 1 m rod hinged at one end, no gravity: I_pivot = m L²/3. A motor turning the
    // hinge at ω0 from rest puts in ½ I_pivot ω0²; an impulse J at the free end, normal to
    // the rod, sets it turning at J L/I_pivot, ½ (J L)²/I_pivot, where the free body it
    // strikes would take ½ J²/m + ½ (J L/2)²/I_c: the joint's impulse takes the rest out at
    // once, so the State right after the input shows the rod turning (it showed the free
    // body's velocities until the next step) and the energy is measured from there.
    // Under the θ-schemes both were left to the first step's joint projection, uncounted:
    // energy.error −16.6 J for a motor at 10 rad/s, −0.5 J for the impulse below
    const [m, L] = [1, 1];
    const Ip = (m * L * L) / 3;
    const rod = (solver: Record<string, unknown>, motors: unknown[] = []) =>
      loadModel({
        ...rodPendulum({ mass: m, length: L, axis: [0, 1, 0], gravity: [0, 0, 0], solver }),
        motors,
      } as never);
    const w0 = 3;
    const J = 1;
    for (const integrator of [
      "moreau-jean",
      "symplectic-euler",
      "backward-euler",
      "newmark",
      "generalized-alpha",
    ]) {
      // backward Euler's velocity-level joints dissipate by design: its steps' own losses
      // (and a motor's work against them) come on top of the start's; the start alone here
      const dissipative = integrator === "backward-euler";
      const driven = rod({ integrator, dt: 0.005 }, [
        { id: "m", joint: "pin", angle: { rate: w0 } },
      ]);
      driven.step(1);
      expect(driven.state().energy.dissipated as number, integrator).toBeCloseTo(
        -0.5 * Ip * w0 * w0,
        dissipative ? 3 : 7,
      );
      driven.step(2000);
      // measured 1e-14 J (Newmark 2.8e-9: its first step's trapezoid of the motor's power)
      if (!dissipative)
        expect(Math.abs(driven.state().energy.error as number), integrator).toBeLessThan(1e-8);

      const struck = rod({ integrator, dt: 0.005 });
      struck.step(10);
      struck.schedule(
        InputsBody.parse({
          inputs: [{ type: "impulse", id: "rod", impulse: [0, 0, -J], point: [L / 2, 0, 0] }],
        }).inputs,
      );
      const kept = (0.5 * (J * L) ** 2) / Ip;
      const now = struck.state();
      expect(now.energy.kinetic, integrator).toBeCloseTo(kept, 12);
      expect(now.joints[0].rates[0], integrator).toBeCloseTo((J * L) / Ip, 12);
      struck.step(1);
      expect(struck.state().energy.dissipated as number, integrator).toBe(0);
      if (dissipative) continue;
      expect(struck.state().energy.kinetic, integrator).toBeCloseTo(kept, 7);
      // the step's own error on the spinning rod (Newmark's 4.7e-9 J, first order)
      expect(Math.abs(struck.state().energy.error as number), integrator).toBeLessThan(1e-8);
    }
  });

  it("compliant contact: a ball dropped on a spring-dashpot floor dissipates what the contact's ODE does", () => {
    // m z̈ = −m g + max(0, k δ − d ż) while δ = R − z > 0 (the linear law, the no-pull clamp),
    // from z0 at rest, by RK4 at 1e-6 s: the energy lost by t = 0.5 s (after the first bounce,
    // the ball in flight again)
    const [m, g, R, z0, k, d, end] = [1, 9.81, 0.1, 0.6, 1e4, 20, 0.5];
    const acc = (z: number, v: number) => -g + (z < R ? Math.max(0, k * (R - z) - d * v) / m : 0);
    let z = z0;
    let v = 0;
    const H = 1e-6;
    for (let i = 0; i < Math.round(end / H); i++) {
      const [z1, v1] = [v, acc(z, v)];
      const [z2, v2] = [v + 0.5 * H * v1, acc(z + 0.5 * H * z1, v + 0.5 * H * v1)];
      const [z3, v3] = [v + 0.5 * H * v2, acc(z + 0.5 * H * z2, v + 0.5 * H * v2)];
      const [z4, v4] = [v + H * v3, acc(z + H * z3, v + H * v3)];
      z += (H / 6) * (z1 + 2 * z2 + 2 * z3 + z4);
      v += (H / 6) * (v1 + 2 * v2 + 2 * v3 + v4);
    }
    expect(z).toBeGreaterThan(R); // in flight
    const lost = m * g * z0 - (0.5 * m * v * v + m * g * z);
    const smc = {
      method: "smc",
      behavior: { type: "linear", stiffness: k, damping: d, stepDamping: 0 },
    };
    const worstError = (integrator: string, dt: number) => {
      const sim = loadModel(ballOnFloor(smc, { z: z0, vx: 0 }, { integrator, dt }));
      let worst = 0;
      for (let i = 0; i < Math.round(end / dt); i++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().energy.error));
      }
      const dissipated = sim.state().energy.dissipated;
      return { dissipated, worst };
    };
    for (const integrator of ["moreau-jean", "newmark", "generalized-alpha", "articulated"]) {
      const fine = worstError(integrator, 1e-4);
      expect(Math.abs(fine.dissipated / lost - 1), integrator).toBeLessThan(2e-3);
      // the θ-scheme's balance closes to 1e-4 J, articulated's (its stages' quadrature of
      // the contact's power) likewise; newmark and generalized-alpha leave a little at each
      // contact's start and end (their trapezoidal step over a force switching within it,
      // the switch resolved here, h ω = 0.01; 9.1e-5 J, newmark 4.8e-4 J when it redid those
      // steps with backward Euler): their energy.error, first order in dt
      expect(fine.worst, integrator).toBeLessThan(
        integrator === "moreau-jean" || integrator === "articulated" ? 1e-4 : 1.2e-2,
      );
      const coarse = worstError(integrator, 2.5e-4);
      expect(coarse.worst / fine.worst, integrator).toBeGreaterThan(2);
    }
  });

  it("compliant contact let go by the no-pull clamp: the elastic energy it held is dissipated, energy.error 0 (a ball, a spinning cube's corner)", () => {
    // No gravity; a body pressed δ0 = 1 mm into a linear floor (k = 1e5 N/m, stepDamping ½:
    // d = ½ h k = 250 N·s/m at h = 5 ms) and leaving it at u = 1 m/s: k δ0 − d u < 0, the
    // clamp holds its force at 0 from the start, and the step ends with it 4 mm above the
    // floor. No force acts at either end of the step, so no scheme changes the velocities;
    // the total energy E = ½ m v² + ½ I ω² + ½ k δ² (written out here) loses ½ k δ0², which
    // the clamp let go: energy.dissipated must be that and energy.error 0. The balance
    // weighed the contact's dissipative force −k δ0 n at the ends instead, ½ h k δ0 u =
    // ½ k δ0 Δdist = 0.25 J for the 0.05 J released (energy.error +0.2 J under the
    // trapezoidal schemes, −0.05 J under backward Euler, which weighs the end alone).
    const [m, k, delta0, u, w] = [1, 1e5, 1e-3, 1, 3];
    const released = 0.5 * k * delta0 * delta0;
    // the cube (edge 0.2 m) on its corner −(a, a, a): turned so that it points down, spinning
    // about the vertical through it (the corner's normal velocity u alone)
    const a = 0.1;
    const I = (m * (2 * a) ** 2) / 6;
    const corner = axisAngle([1, -1, 0], Math.acos(1 / Math.sqrt(3)));
    expect(rotate(corner, [-a, -a, -a])[2]).toBeCloseTo(-a * Math.sqrt(3), 15);
    const bodies = [
      {
        id: "ball",
        mass: m,
        inertia: [I, I, I],
        position: [0, 0, 0.1 - delta0],
        shapes: [{ type: "sphere", radius: 0.1 }],
      },
      {
        id: "cube",
        mass: m,
        inertia: [I, I, I],
        position: [0, 0, a * Math.sqrt(3) - delta0],
        orientation: corner,
        angularVelocity: [0, 0, w],
        shapes: [{ type: "box", halfExtents: [a, a, a] }],
      },
    ];
    for (const integrator of ["newmark", "generalized-alpha", "moreau-jean", "backward-euler"])
      for (const body of bodies) {
        const sim = loadModel({
          gravity: [0, 0, 0],
          bodies: [
            { id: "floor", fixed: true, shapes: [{ type: "plane", normal: [0, 0, 1], offset: 0 }] },
            { ...body, velocity: [0, 0, u] },
          ],
          contact: { method: "smc", behavior: { type: "linear", stiffness: k, stepDamping: 0.5 } },
          solver: { dt: 0.005, integrator },
        });
        const w0 = body.angularVelocity?.[2] ?? 0;
        const E0 = 0.5 * m * u * u + 0.5 * I * w0 * w0 + released;
        expect(sim.state().energy.total).toBeCloseTo(E0, 12);
        sim.step(3);
        const s = sim.state();
        const b = s.bodies[1];
        const label = `${integrator}, ${body.id}`;
        expect(b.position[2] - body.position[2], label).toBeCloseTo(3 * 0.005 * u, 12);
        const E =
          0.5 * m * (b.velocity[0] ** 2 + b.velocity[1] ** 2 + b.velocity[2] ** 2) +
          0.5 *
            I *
            (b.angularVelocity[0] ** 2 + b.angularVelocity[1] ** 2 + b.angularVelocity[2] ** 2);
        expect(Math.abs(s.energy.total - E), label).toBeLessThan(1e-12);
        expect(Math.abs(E0 - E - released), label).toBeLessThan(1e-12);
        expect(Math.abs(s.energy.dissipated - released), label).toBeLessThan(1e-12);
        expect(Math.abs(s.energy.error), label).toBeLessThan(1e-12);
      }
  });

  it("compliant contact at the defaults: the balance's error falls with dt over 3 s of bounces", () => {
    // the default law's step damping d = s h k follows dt, so the runs differ in physics;
    // the stiff contact (few steps an impact) leaves the trapezoid of d u² and the scheme's
    // own impact error in energy.error, which falls by more than 2.5 a halving of dt
    const worst = [0.002, 0.001, 0.0005].map((dt) => {
      const sim = loadModel(ballOnFloor({ method: "smc" }, { z: 0.6, vx: 0 }, { dt }));
      let w = 0;
      for (let i = 0; i < Math.round(3 / dt); i++) {
        sim.step(1);
        w = Math.max(w, Math.abs(sim.state().energy.error));
      }
      // at rest on the floor: the fall's energy taken out by the contact
      expect(sim.state().energy.dissipated).toBeGreaterThan(0.75 * 9.81 * 0.5);
      return w;
    });
    expect(worst[0] / worst[1]).toBeGreaterThan(2.5);
    expect(worst[1] / worst[2]).toBeGreaterThan(2.5);
    expect(worst[2]).toBeLessThan(0.01 * 9.81 * 0.5);
  });

  it("a bouncing ball: the first impact takes (1 − e²) m g Δz, the balance holds over the bounces", () => {
    const e = 0.5;
    const sim = loadModel(
      ballOnFloor({ friction: 0, restitution: e }, { z: 0.6, vx: 0 }, { dt: 0.002 }),
    );
    let previous = 0;
    let firstBounce = -1;
    let worst = 0;
    for (let i = 0; i < 1500; i++) {
      sim.step(1);
      const s = sim.state();
      const vz = s.bodies[0].velocity[2];
      if (firstBounce < 0 && previous < 0 && vz > 0) firstBounce = s.energy.dissipated as number;
      previous = vz;
      worst = Math.max(worst, Math.abs(s.energy.error as number));
    }
    // falling 0.5 m to the impact: T = m g 0.5; the impact resolved within one step of 2 ms
    const impact = 9.81 * 0.5;
    expect(firstBounce).toBeGreaterThan(0.99 * (1 - e * e) * impact);
    expect(firstBounce).toBeLessThan(1.02 * (1 - e * e) * impact);
    const s = sim.state().energy;
    expect(s.dissipated as number).toBeGreaterThan(0.8 * impact);
    expect(worst).toBeLessThan(0.015 * (s.dissipated as number));
  });
});
