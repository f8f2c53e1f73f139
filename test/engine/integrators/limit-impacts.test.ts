/**
 * Joint limits with restitution under moreau-jean, their impacts met at their instants
 * (impact-events.ts: the step split where a bound closes, Newton's law there). A rod hinged
 * at its end, released level onto its bound at θ_b = 0.5 rad, reaches it at ½ I ω₁² =
 * m g (L/2) sin θ_b; Newton's law sends it back at e ω, and the swing conserves its energy
 * between impacts, so after the k-th impact its energy above the bound,
 *   E = ½ I θ̇² + m g (L/2)(sin θ_b − sin θ),
 * is e^{2k} m g (L/2) sin θ_b (the bounce heights in geometric progression) until the
 * bounces accumulate and the rod rests on its bound with the limit effort of the gravity
 * moment m g (L/2) cos θ_b. Left to the step's end, the impacts' timing error fed hopping
 * cycles of about 2/(1 − e) steps at e ≥ 0.9 that never came to rest (e = 0.95 at 1/60 s:
 * 0.8 rad/s after 60 s), and each rebound's energy was up to 85 % off e^{2k}.
 */
import { describe, expect, it, vi } from "vitest";
import type { ModelInput } from "../../../schemas/model";
import { loadModel } from "../../../src/engine/index";
import { AccelerationStepper } from "../../../src/engine/integrators/acceleration-step";
import { passageBeforeProjection } from "../../support/limit-passage";
import { positionServos, rodPendulum, servoChainLinks } from "../../support/models";

const M = 1;
const L = 1;
const G = 9.81;
const I = (M * L * L) / 3;
const BOUND = 0.5;
const DROP = M * G * (L / 2) * Math.sin(BOUND);

function bouncingRod(restitution: number, dt: number) {
  return loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, -G],
      limits: { lower: -3, upper: BOUND, restitution },
      solver: { integrator: "moreau-jean", dt },
    }),
  );
}

describe("joint-limit impacts at their instants (moreau-jean)", () => {
  it("rebounds keep e^(2k) of the drop, and the rod comes to rest on its bound at e = 0.9 and 0.95", () => {
    for (const e of [0.9, 0.95])
      for (const dt of [1 / 60, 0.005]) {
        const tag = `e = ${e}, h = ${dt}`;
        const sim = bouncingRod(e, dt);
        let k = 0;
        let previous = 0;
        let worst = 0;
        let highest = Number.NEGATIVE_INFINITY;
        let moving = 0;
        for (let i = 0; i < Math.round(60 / dt); i++) {
          sim.step(1);
          const s = sim.state();
          const q = s.joints[0].coordinates[0];
          const rate = s.joints[0].rates[0];
          highest = Math.max(highest, s.energy.total as number);
          // a rebound: the rate turned from towards the bound (+) to away from it
          if (previous > 0 && rate < 0) {
            k++;
            const energy =
              0.5 * I * rate * rate + M * G * (L / 2) * (Math.sin(BOUND) - Math.sin(q));
            // (the bounces the steps resolve: e^{2k} > 5 %, 29 and 58 of them)
            if (e ** (2 * k) > 0.05)
              worst = Math.max(worst, Math.abs(energy / (DROP * e ** (2 * k)) - 1));
          }
          if (s.time > 30 && Math.abs(rate) > 1e-12) moving++;
          previous = rate;
        }
        // the swing's own O(h²) error: 6.6e-4 at 1/60 s, 6e-5 at 5 ms (up to 0.85 and 0.17
        // before)
        expect(worst, tag).toBeLessThan(dt > 0.01 ? 1e-3 : 1e-4);
        // never above the energy it was released with (the total is 0 at the start)
        expect(highest, tag).toBeLessThan(1e-6);
        // at rest on the bound from 30 s, with the gravity moment's effort
        expect(moving, tag).toBe(0);
        const s = sim.state();
        expect(s.joints[0].coordinates[0], tag).toBeCloseTo(BOUND, 9);
        expect(s.joints[0].limitEffort, tag).toBeCloseTo(-M * G * (L / 2) * Math.cos(BOUND), 9);
      }
  });

  it("at e = 1 the rod keeps bouncing to level for 60 s, its energy kept to the swing's error", () => {
    for (const dt of [1 / 60, 0.005]) {
      const sim = bouncingRod(1, dt);
      let highest = Number.NEGATIVE_INFINITY;
      let lowest = Number.POSITIVE_INFINITY;
      for (let i = 0; i < Math.round(60 / dt); i++) {
        sim.step(1);
        const total = sim.state().energy.total as number;
        highest = Math.max(highest, total);
        lowest = Math.min(lowest, total);
      }
      // (+0.106 J at 1/60 s before, booked as the limit's negative dissipation)
      expect(highest, `h = ${dt}`).toBeLessThan(1e-4 * DROP);
      expect(lowest, `h = ${dt}`).toBeGreaterThan(-1e-3 * DROP);
    }
  });
});

/**
 * A rod hinged at its end (I = m L²/3 = 1/3 kg·m², no gravity) swinging into its bound
 * θ_b = 0.5 rad under a stiff position servo (k_p = 3000 N·m/rad, k_d = 0, ω = √(k_p/I) =
 * 94.9 rad/s, h ω = 0.19 at h = 2 ms) whose command a controller switches through 1, 3
 * and 0 rad every 17 steps: between the bounces and the switches the motion is the servo's
 * harmonic one about the command q*, θ = q* + A cos(ω t + φ), and its invariant
 * E = ½ I θ̇² + ½ k_p (q* − θ)² gives the arrival rate u_a at the bound from the state at
 * a step's start and the rebound rate u_r from the state at its end, ½ I u² = E − ½ k_p
 * (q* − θ_b)², whatever the instants: Newton's law gives u_r = e u_a, the bounce keeping
 * e² of the arrival's kinetic energy. The step's end is the closed form's from its start,
 * the arrival instant found from it, within the θ-scheme's own error on a step without a
 * bound. Before, an approached bound with e > 0 was predicted from the last step's mean
 * acceleration, which knows nothing of a command switched since: the piece ran past the
 * bound (by 5.3e-3 rad at e = ½, 1.1e-2 at e = 1) and the limits' projection set it back.
 * (The closed form stands for an RK4 integration: the servo's force is linear.)
 */
describe("joint-limit impacts under a stiff servo whose command switches (moreau-jean)", () => {
  const kp = 3000;
  const h = 0.002;
  const w = Math.sqrt(kp / I);
  /** The commands (rad), each held 17 steps in turn. */
  const COMMANDS = [1, 3, 0];
  /**
   * The exact motion from (θ, θ̇) over s about the command q* with bounces at e on θ_b:
   * the state at s, the bounces, and the first's instant and arrival rate.
   */
  function exact(q: number, u: number, s: number, target: number, e: number) {
    let bounces = 0;
    let first = Number.NaN;
    let arriving = Number.NaN;
    let t = 0;
    for (;;) {
      // θ − q* = A cos(ω τ + φ)
      const A = Math.hypot(q - target, u / w);
      const phi = Math.atan2(-u / w, q - target);
      // the first τ > 0 at which θ = θ_b moving up (sin(ω τ + φ) < 0)
      let tb = Number.POSITIVE_INFINITY;
      if (A >= Math.abs(BOUND - target)) {
        const c = Math.acos((BOUND - target) / A);
        for (let k = -1; k <= 2; k++) {
          const tk = (-c - phi + 2 * Math.PI * k) / w;
          if (tk > 1e-12 && tk < tb) tb = tk;
        }
      }
      if (t + tb > s) {
        const r = s - t;
        return {
          q: target + A * Math.cos(w * r + phi),
          u: -A * w * Math.sin(w * r + phi),
          bounces,
          first,
          arriving,
        };
      }
      const ub = -A * w * Math.sin(w * tb + phi);
      if (bounces === 0) {
        first = t + tb;
        arriving = ub;
      }
      bounces++;
      t += tb;
      q = BOUND;
      u = -e * ub;
    }
  }
  /** The rate at the bound of the harmonic motion through (θ, θ̇) about q*. */
  const atBound = (q: number, u: number, target: number) =>
    Math.sqrt(u * u + w * w * ((target - q) ** 2 - (target - BOUND) ** 2));

  for (const e of [0.5, 1])
    it(`e = ${e}: each bounce at its instant, rebounding at e u_a, and never past the bound`, () => {
      const sim = loadModel(
        rodPendulum({
          mass: M,
          length: L,
          axis: [0, 0, 1],
          gravity: [0, 0, 0],
          limits: { lower: -3, upper: BOUND, restitution: e },
          servo: { type: "position", kp, kd: 0, target: 0 },
          solver: { integrator: "moreau-jean", dt: h },
        }),
      );
      let target = 0;
      let q = 0;
      let u = 0;
      let bounces = 0;
      let worstRatio = 0;
      let worstQ = 0;
      let worstU = 0;
      let smoothQ = 0;
      let worstT = 0;
      const passed = passageBeforeProjection(() => {
        for (let n = 0; n < 1000; n++) {
          const command = COMMANDS[Math.floor(n / 17) % 3];
          if (command !== target) sim.schedule([{ type: "actuator", id: "servo", value: command }]);
          target = command;
          sim.step(1);
          const s = sim.state();
          const q1 = s.joints[0].coordinates[0];
          const u1 = s.joints[0].rates[0];
          // (resting on the bound: no bounce)
          const resting = q >= BOUND - 1e-9 && Math.abs(u) < 1e-6;
          const ex = exact(q, u, h, target, e);
          if (ex.bounces === 0 || resting) {
            if (!resting) smoothQ = Math.max(smoothQ, Math.abs(q1 - ex.q));
          } else if (ex.bounces === 1 && e * ex.arriving > 3 * w * w * (target - BOUND) * h) {
            // one bounce the steps resolve (its flight more than six steps: not
            // unresolvedRebound's), its rebound rate from the step's end
            bounces++;
            const ua = atBound(q, u, target);
            const ur = atBound(q1, u1, target);
            worstRatio = Math.max(worstRatio, Math.abs(ur / ua - e));
            worstQ = Math.max(worstQ, Math.abs(q1 - ex.q));
            worstU = Math.max(worstU, Math.abs(u1 - ex.u) / ua);
            // the rebound's instant: the end's motion followed back to the bound
            const back = exact(q1, -u1, h, target, 0).first;
            worstT = Math.max(worstT, Math.abs(h - back - ex.first));
          }
          q = q1;
          u = u1;
        }
      });
      // never past the bound before the projection: measured 2.2e-16 rad (5.3e-3 at e = ½,
      // 1.1e-2 at e = 1 before)
      expect(passed).toBeLessThan(1e-13);
      // the bounces resolved (rates up to 130 and 320 rad/s): 39 at e = ½, 71 at e = 1
      expect(bounces).toBeGreaterThan(e === 1 ? 60 : 30);
      // u_r = e u_a, the kinetic energy e² of the arrival's: measured within 1.7e-5 (e = ½)
      // and 3.1e-4 (e = 1; 3.8e-3 before)
      expect(worstRatio).toBeLessThan(1e-3);
      // the rebound at the arrival's instant: measured 1.1e-6 s and 4.7e-6 s (3.5e-5 s
      // before at e = 1), of h = 2e-3 s
      expect(worstT).toBeLessThan(1e-5);
      // the step's end the exact bounce's from its start, within the θ-scheme's own error
      // on the steps without one (2.9e-4 rad at e = ½, 1.3e-3 rad at e = 1): measured
      // 3.0e-5 and 1.3e-3 rad (8.2e-3 before), rates within 7.7e-5 and 5.4e-4 of u_a
      // (7.8e-3 before)
      expect(worstQ).toBeLessThan(2 * smoothQ);
      expect(worstU).toBeLessThan(2e-3);
    });
});

describe("a bound a time function's command drives the joint onto within a step (moreau-jean)", () => {
  // The 1 kg, 1 m rod (no gravity, I = m L²/3) coasting at u₀ = 5 rad/s towards its bound
  // b = u₀ t₁ + 0.026 rad (e = 0.9), its motor's torque a table, 0 until t₁ = 20 ms, then
  // c (t − t₁), c = 3e4 N·m/s: from t₁ the coordinate's pull c (t − t₁)/I grows from 0 to
  // 450 rad/s² within the step, whose coasting (0.025 rad) would stop short of the bound;
  // the torque's share takes it there at t_b, u₀ s + c s³/(6 I) = b − u₀ t₁ (s = t_b − t₁),
  // at u_b = u₀ + c s²/(2 I) = 6.06 rad/s, and it leaves at −e u_b, q̈ = c (t − t₁)/I, a
  // flight the steps resolve (e u_b > 2 a h). Before, the pull the step before showed (0),
  // and the memory's mean acceleration (0), put the bound beyond the step's reach
  // (impact-events.ts `far`): the step ran 1.1e-3 rad past it, was set back on it still
  // moving towards it at 6.13 rad/s, and met its impact at the next step's start (the
  // rate after that step 2.2 % of e u_b off the closed form, 4.1e-4 rad).
  it("the arrival met at its instant, never past the bound, the rebound at −e u_b", () => {
    const e = 0.9;
    const h = 0.005;
    const u0 = 5;
    const t1 = 0.02;
    const c = 3e4;
    const bound = u0 * t1 + 0.026;
    const model = rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      limits: { lower: -3, upper: bound, restitution: e },
      solver: { integrator: "moreau-jean", dt: h },
    });
    const sim = loadModel({
      ...model,
      actuators: [
        {
          id: "motor",
          joint: "pin",
          type: "torque",
          effort: {
            type: "table",
            points: [
              [0, 0],
              [t1, 0],
              [t1 + 1, c],
            ],
          },
        },
      ],
    } as ModelInput);
    sim.schedule([{ type: "jointState", id: "pin", position: 0, velocity: u0 }]);
    // the arrival s after t₁ by Newton's iteration on u₀ s + c s³/(6 I) = b − u₀ t₁
    let s = h;
    for (let k = 0; k < 50; k++)
      s -= (u0 * s + (c * s ** 3) / (6 * I) - (bound - u0 * t1)) / (u0 + (c * s * s) / (2 * I));
    const tb = t1 + s;
    const ub = u0 + (c * s * s) / (2 * I);
    expect(tb).toBeGreaterThan(t1 + 0.9 * h);
    expect(tb).toBeLessThan(t1 + h);
    expect(e * ub).toBeGreaterThan(2 * ((c * s) / I) * h);
    const passed = passageBeforeProjection(() => sim.step(5));
    // the flight from t_b at t = 5 h: q = b − e u_b T + c ((t − t₁)³ − s³)/(6 I) − c s² T/(2 I)
    const t = 5 * h;
    const T = t - tb;
    const q =
      bound - e * ub * T + (c * ((t - t1) ** 3 - s ** 3)) / (6 * I) - (c * s * s * T) / (2 * I);
    const u = -e * ub + (c * ((t - t1) ** 2 - s * s)) / (2 * I);
    const st = sim.state();
    expect(st.solver.impacts).toBe(1);
    // measured 0 (1.1e-3 rad before)
    expect(passed).toBeLessThan(1e-12);
    // measured 4.1e-3 of e u_b and 1.4e-4 rad (the θ-scheme's error on the approach's
    // pieces; 2.1 e u_b before: still moving towards the bound)
    expect(Math.abs(st.joints[0].rates[0] - u)).toBeLessThan(0.01 * e * ub);
    expect(Math.abs(st.joints[0].coordinates[0] - q)).toBeLessThan(3e-4);
  });
});

describe("joint limits far from the joint cost no prediction (moreau-jean)", () => {
  // ImpactEvents.next predicts a bound's arrival from the applied forces' pull (a force
  // evaluation a step and a column a limit); a bound beyond the reach of the step under
  // PULL_SAFETY times the pull last seen is left unevaluated (impact-events.ts `far`). The
  // 3-link servo chain (joints about x, y, x; k_p = 1000, k_d = 52, its middle servo
  // commanded 0.5 rad, then −0.3 rad at 1 s) with bounds at ±2 rad on every joint, which
  // it never nears: its force evaluations are the chain's without limits (moreau-jean's
  // step with limits evaluated them at its start twice, one more a step, before; two before
  // that: the pull of each limit each step, 3.0 columns a step), and its motion is the same
  // to the bit.
  function chain(limits: boolean) {
    const { bodies, joints } = servoChainLinks();
    if (limits)
      for (const j of joints)
        Object.assign(j, { limits: { lower: -2, upper: 2, restitution: 0.5 } });
    const sim = loadModel({
      gravity: [0, 0, -G],
      bodies,
      joints,
      actuators: positionServos(joints, 0, 1000, 52),
      solver: { integrator: "moreau-jean", dt: 0.005 },
    } as ModelInput);
    sim.schedule([{ type: "actuator", id: "sj1", value: 0.5 }]);
    let evaluations = 0;
    const computeForces = AccelerationStepper.prototype.computeForces;
    const spy = vi
      .spyOn(AccelerationStepper.prototype, "computeForces")
      .mockImplementation(function (this: AccelerationStepper, ...args) {
        evaluations++;
        return computeForces.apply(this, args);
      });
    try {
      sim.step(200);
      sim.schedule([{ type: "actuator", id: "sj1", value: -0.3 }]);
      sim.step(200);
    } finally {
      spy.mockRestore();
    }
    return { evaluations, state: sim.state() };
  }

  it("the chain's force evaluations those without limits, its motion the same", () => {
    const free = chain(false);
    const limited = chain(true);
    // measured 4.11 a step without limits and with (5.11 before, 6.11 before that), but for
    // the pull's evaluation after each command (its last value forgotten: forget)
    expect(limited.evaluations - free.evaluations).toBeLessThanOrEqual(2);
    for (let j = 0; j < 3; j++) {
      expect(limited.state.joints[j].coordinates[0]).toBe(free.state.joints[j].coordinates[0]);
      expect(limited.state.joints[j].rates[0]).toBe(free.state.joints[j].rates[0]);
    }
  });
});

describe("a stiff servo ringing short of its bound, then driven against it (moreau-jean)", () => {
  // A 2 kg, 0.6 m rod (no gravity, I = m L²/3 = 0.24 kg·m²) on a servo at k_p = 1e8 N·m/rad,
  // k_d = 0 (ω = √(k_p/I) = 2.0e4 rad/s, 16 periods a 5 ms step; 1e10: 2.0e5 rad/s, 31 µs a
  // period), started at rest at q₀ = 0 and commanded to q* = −0.5 rad: the exact motion rings
  // q* + (q₀ − q*) cos ω t between 0 and −1 rad, its energy ½ I q̇² + ½ k_p (q − q*)² = E₀ =
  // ½ k_p q*² = 1.25e7 J (1.25e9 J), short of its bound at 0.1 rad (or grazing the one at 0
  // at rest). The step's pieces, which chase each approach, run out within the first step
  // (impact-events.ts, MAX_PIECES), and the rest of it was taken whole with the bound
  // activated at the rest's start, where the rod ran at 8124 rad/s towards it (g + h u/2 <
  // 0), which the servo turns back 0.26 rad on: the contact step ended 0.47 rad past the
  // bound at 0.1 rad (0.055 past the one at 0), and the projection set the rod on it,
  // ½ k_p (0.6² − 0.5²) = 5.5e6 J more in the servo than the ring held; energy.error
  // −2.85e7 J (−3.0e5 J). The rest then left the bounds not touching to the projection
  // (JointLimitProblem.deferApart), but it still started from the ring the pieces had
  // followed: at 1e10, from 8.1e4 rad/s, its sub-steps (at the halving limit, h/16 turning
  // the rod 23 rad) ended 0.83 rad past the bound at 0.1 rad (0.36 past the one at 0) and
  // booked energy.error −6.4e8 J (−6.5e9 J). The ring then ended, once the pieces ran out,
  // in a piece short of every bound that took the step's lead (impact-events.ts, the ring's
  // end), so that the rest started from the step's law. Now the pieces chase no bound: the
  // one at −3 rad, whose pull the pieces took, lies out of the ring's reach by its energy, as
  // does the one at 0.1 (impact-events.ts, a servo's reach), and the ring is the step's
  // law's from the start, as without the bound. Then commanded to 0.5 rad, against the
  // bound b: it meets it and rests on it, the limit's effort the servo's, −k_p (0.5 − b),
  // for the 9 s left of a 10 s run.
  const m = 2;
  const length = 0.6;
  const inertia = (m * length * length) / 3;
  const ring = -0.5;
  const against = 0.5;
  for (const kp of [1e8, 1e10])
    for (const bound of [0.1, 0])
      it(`k_p = ${kp.toExponential(0)}, bound at ${bound} rad: never past it nor above the ring's energy, E + dissipated never rising, then at rest on it for 9 s`, () => {
        const e0 = 0.5 * kp * ring * ring;
        const sim = loadModel(
          rodPendulum({
            mass: m,
            length,
            axis: [0, 1, 0],
            gravity: [0, 0, 0],
            limits: { lower: -3, upper: bound },
            servo: { type: "position", kp, kd: 0, target: ring },
            solver: { integrator: "moreau-jean", dt: 0.005 },
          }),
        );
        let reach = Number.NEGATIVE_INFINITY;
        let gain = Number.NEGATIVE_INFINITY;
        let worstError = 0;
        let rise = Number.NEGATIVE_INFINITY;
        let booked = Number.NaN;
        // sub-steps of the first step and of the ring's 200 steps
        let first = 0;
        let substeps = 0;
        const passed = passageBeforeProjection(() => {
          for (let n = 0; n < 2000; n++) {
            if (n === 200) sim.schedule([{ type: "actuator", id: "servo", value: against }]);
            sim.step(1);
            const s = sim.state();
            const q = s.joints[0].coordinates[0];
            const u = s.joints[0].rates[0];
            if (n === 0) first = s.solver.substeps;
            if (n < 200) {
              substeps += s.solver.substeps;
              reach = Math.max(reach, q);
              gain = Math.max(gain, 0.5 * inertia * u * u + 0.5 * kp * (q - ring) ** 2 - e0);
            }
            worstError = Math.max(worstError, Math.abs(s.energy.error));
            // the servo's work is booked as dissipated (negative where it drives): the
            // kinetic energy plus it never rises, the scheme's lead and the limit taking
            // energy, never giving it
            const total = s.energy.total + s.energy.dissipated;
            if (!Number.isNaN(booked)) rise = Math.max(rise, total - booked);
            booked = total;
          }
        });
        const s = sim.state();
        // never past the bound before the projection: measured 8.3e-15, 2.8e-15, 4.5e-14,
        // 4.5e-14 rad (k_p = 1e8 at 0.1 and 0 rad, 1e10 at 0.1 and 0; at 1e10 0.83 and 0.36
        // rad before the ring's end)
        expect(passed).toBeLessThan(1e-12);
        // within the exact ring's reach, q₀ = 0, and never above its energy: measured −0.43
        // rad, the energy at most 0.021 of E₀ after the first step (at 1e10 before the ring's
        // end: on the bound, +0.44 E₀)
        expect(reach).toBeLessThan(1e-12);
        expect(gain).toBeLessThan(1e-9 * e0);
        // the bound at −3 rad out of the ring's reach (impact-events.ts, a servo's reach):
        // the first step's sub-steps measured 16, 57, 16, 65 (k_p = 1e8 at 0.1 and 0 rad,
        // 1e10 at 0.1 and 0; 377, 201, 377, 201 before, its 64 pieces chasing that bound),
        // the ring's 200 steps' 269, 310, 303, 352 (968, 13572, 688, 982 before)
        expect(first).toBeLessThan(100);
        expect(substeps).toBeLessThan(400);
        // energy.error within 1e-9 of E₀ over the 10 s: measured 9.1e-5, 4.9e-5, 0.11 and
        // 0.22 J (at 1e10 6.4e8 and 6.5e9 J before the ring's end), and E + dissipated rising
        // by at most 9.3e-5, 4.9e-5 J a step (7e-12 and 4e-12 of E₀), 1.8e-8 and 4.5e-8 J
        // (before the ring's end, 9.6e8 and 1.2e9 J) at a fixed 3e-4 m step tolerance; at the
        // rod's body-length one (1.8e-4 m) 1.3e-4 J (1e8, bound at 0: 1.0e-11 of E₀) and
        // 5.4e-2 J (1e10, bound at 0.1: 4.3e-11 of E₀), both at step 200, where the command
        // jumps to 0.5 rad and the servo drives the rod into its bound with k_p (0.5 − q)
        // of the order of E₀: within Newton's tolerance (1e-10 of the step's terms)
        expect(worstError).toBeLessThan(1e-9 * e0);
        expect(rise).toBeLessThan(1e-10 * e0);
        // at rest on the bound, the limit holding the servo's effort k_p (0.5 − b): measured
        // to 7e-16 rad, 1.4e-14 rad/s and 1.8e-15 of it
        const q = s.joints[0].coordinates[0];
        expect(Math.abs(q - bound)).toBeLessThan(1e-12);
        expect(Math.abs(s.joints[0].rates[0])).toBeLessThan(1e-9);
        expect(Math.abs(s.joints[0].limitEffort / (-kp * (against - bound)) - 1)).toBeLessThan(
          1e-9,
        );
      });
});

describe("a servo's ring and a bound just within or just beyond its amplitude (moreau-jean)", () => {
  // The 2 kg, 0.6 m rod (no gravity, I = m L²/3 = 0.24 kg·m²) on an undamped servo, k_p =
  // 24 N·m/rad (ω = √(k_p/I) = 10 rad/s, h ω = 0.05 at 5 ms), to q* = −0.5 rad, started at
  // q₀ = 0 turning at u₀ = 5 rad/s: the closed form θ(t) = q* + A cos(ω t + φ), A =
  // √((q₀ − q*)² + u₀²/ω²) = 0.5 √2 rad, φ = −atan(u₀/(ω (q₀ − q*))) = −π/4, its energy
  // E₀ = ½ I u₀² + ½ k_p (q₀ − q*)² = ½ k_p A² = 6 J. A bound b beyond q* + A is out of the
  // ring's reach (impact-events.ts, a servo's reach: Φ(b − q*) = ½ k_p (b − q*)² > E₀), one
  // within it is met at the closed form's first arrival, cos(ω t₁ + φ) = (b − q*)/A. (The
  // servo's potential alone at the start, ½ k_p (q₀ − q*)² = 3 J, is short of both: the
  // kinetic energy is the budget's too.) 20 s, 32 periods.
  const m = 2;
  const length = 0.6;
  const inertia = (m * length * length) / 3;
  const kp = 24;
  const target = -0.5;
  const omega = Math.sqrt(kp / inertia);
  const u0 = 5;
  const amplitude = Math.hypot(0 - target, u0 / omega);
  const phi = -Math.atan2(u0 / omega, 0 - target);
  const dt = 0.005;
  const steps = 4000;
  function ring(upper: number | null) {
    const model = rodPendulum({
      mass: m,
      length,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      ...(upper === null ? {} : { limits: { lower: -3, upper } }),
      servo: { type: "position", kp, kd: 0, target },
      solver: { integrator: "moreau-jean", dt },
    }) as ModelInput & { bodies: Record<string, unknown>[] };
    // turning at u₀ about the hinge's axis (y) through the rod's end at the origin
    model.bodies[0].angularVelocity = [0, u0, 0];
    model.bodies[0].velocity = [0, 0, (-u0 * length) / 2];
    return loadModel(model);
  }

  it("a bound 1e-3 of the amplitude beyond it: the ring is the model's without the bound, bit for bit", () => {
    const bound = target + amplitude * (1 + 1e-3);
    const sim = ring(bound);
    const free = ring(null);
    let differing = 0;
    let substeps = 0;
    let freeSubsteps = 0;
    let reach = Number.NEGATIVE_INFINITY;
    // (the start the closed form's: q₀ = 0 turning at u₀)
    expect(sim.state().joints[0].coordinates[0]).toBe(0);
    expect(Math.abs(sim.state().joints[0].rates[0] / u0 - 1)).toBeLessThan(1e-12);
    for (let n = 0; n < steps; n++) {
      sim.step(1);
      free.step(1);
      const s = sim.state();
      const f = free.state();
      const q = s.joints[0].coordinates[0];
      if (q !== f.joints[0].coordinates[0] || s.joints[0].rates[0] !== f.joints[0].rates[0])
        differing++;
      substeps += s.solver.substeps;
      freeSubsteps += f.solver.substeps;
      reach = Math.max(reach, q);
    }
    // the same motion to the bit and the same sub-steps (4000): before, `next` chased the
    // bound at each of the ring's approaches (17 more sub-steps in pieces, every step from
    // the first approach on differing)
    expect(differing).toBe(0);
    expect(substeps).toBe(freeSubsteps);
    // the scheme's ring reaches the closed form's amplitude to its error: measured 6.9e-6 rad
    // past q* + A, 7.0e-4 short of the bound
    expect(Math.abs(reach - (target + amplitude))).toBeLessThan(1e-5);
  });

  it("a bound 1e-3 of the amplitude within it: met at the closed form's first arrival, the ring then Φ(b − q*)'s", () => {
    const bound = target + amplitude * (1 - 1e-3);
    const arrival = (-Math.acos((bound - target) / amplitude) - phi) / omega;
    const sim = ring(bound);
    const energyAfter = 0.5 * kp * (bound - target) ** 2;
    let beforeArrival = 0;
    let impactSteps = "";
    let worstAfter = 0;
    let reach = Number.NEGATIVE_INFINITY;
    const passed = passageBeforeProjection(() => {
      for (let n = 0; n < steps; n++) {
        sim.step(1);
        const s = sim.state();
        const q = s.joints[0].coordinates[0];
        const u = s.joints[0].rates[0];
        if (s.solver.impacts > 0) impactSteps += `${n}:${s.solver.impacts} `;
        reach = Math.max(reach, q);
        if (s.time < arrival)
          beforeArrival = Math.max(
            beforeArrival,
            Math.abs(q - (target + amplitude * Math.cos(omega * s.time + phi))),
          );
        else {
          const energy = 0.5 * inertia * u * u + 0.5 * kp * (q - target) ** 2;
          worstAfter = Math.max(worstAfter, Math.abs(energy / energyAfter - 1));
        }
      }
    });
    // one impact, in the step holding t₁ = 0.0741 s (its 15th), none after: the inelastic
    // bound stops the rod there, and its ring, ½ k_p (b − q*)², touches it thereafter
    expect(impactSteps).toBe(`${Math.floor(arrival / dt)}:1 `);
    // the closed form up to the arrival to the scheme's error: measured 1.4e-5 rad
    expect(beforeArrival).toBeLessThan(1e-4);
    // never past the bound (measured 2.8e-17 rad), and on it: 2.8e-9 rad short at most (the
    // touches after the stop)
    expect(passed).toBeLessThan(1e-12);
    expect(bound - reach).toBeLessThan(1e-8);
    // the ring's energy after the stop Φ(b − q*) = 5.988 J to the scheme's error over the
    // 32 periods (measured 7.8e-5 of it), where the unbounded ring's E₀ is 2.0e-3 above it
    expect(worstAfter).toBeLessThan(3e-4);
  });
});
