/**
 * The `gains` input: a servo's k_p, k_d (k_v) and an actuator's effortLimit changed at a
 * step boundary. The rod hinged at its end (2 kg, 0.6 m, I = m L²/3 = 0.24 kg·m², no
 * gravity) on a PD servo to q* = 1 rad: after the change the motion is the closed form of
 * the new PD from the state at the change,
 *   e(t) = exp(−ζ ω_n t) (e₀ cos ω_d t + (ė₀ + ζ ω_n e₀)/ω_d sin ω_d t),  e = q − q*,
 *   ω_n = √(k_p/I), ζ = k_d/(2 √(k_p I)), ω_d = ω_n √(1 − ζ²);
 * energy.error does not jump at the change (the servo's effort is booked as work from each
 * step's start: step-work.ts) and stays at round-off where the scheme books it exactly.
 * Refusals name the field and the id; reset, snapshots and recordings keep the gains.
 */
import { describe, expect, it } from "vitest";
import type { InputIn } from "../../../schemas/input";
import { Input } from "../../../schemas/input";
import { State } from "../../../schemas/state";
import {
  InputError,
  loadModel,
  loadSnapshot,
  recordingOf,
  replayRecording,
} from "../../../src/engine/index";
import { servoRod } from "../../support/models";

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));
const m = 2;
const L = 0.6;
const I = (m * L * L) / 3;
const rod = (servo: Record<string, unknown>, integrator: string, dt: number) =>
  loadModel(servoRod(m, L, servo, { integrator, dt }));
const refusal = (sim: ReturnType<typeof loadModel>, list: InputIn[]) => {
  try {
    sim.schedule(inputs(list));
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as InputError).issues;
  }
};

/** e(t) of the PD k_p, k_d on I from e₀, ė₀ (underdamped). */
function pdError(kp: number, kd: number, e0: number, r0: number, t: number): number {
  const wn = Math.sqrt(kp / I);
  const z = kd / (2 * Math.sqrt(kp * I));
  const wd = wn * Math.sqrt(1 - z * z);
  return (
    Math.exp(-z * wn * t) * (e0 * Math.cos(wd * t) + ((r0 + z * wn * e0) / wd) * Math.sin(wd * t))
  );
}

describe("gains input", () => {
  it.each([
    ["generalized-alpha", 2.5e-4, 5e-7],
    ["articulated", 1e-3, 1e-10],
  ])(
    "k_p 20 → 80, k_d 0.8 → 4 mid-run (%s, h = %s): the new PD's closed form from that state",
    (integrator, dt, tol) => {
      const sim = rod({ type: "position", target: 1, kp: 20, kd: 0.8 }, integrator, dt);
      const n0 = Math.round(0.5 / dt);
      sim.step(n0);
      const at = sim.state();
      const e0 = at.joints[0].coordinates[0] - 1;
      const r0 = at.joints[0].rates[0];
      expect(Math.abs(e0)).toBeGreaterThan(0.05);
      sim.schedule(inputs([{ type: "gains", id: "servo", kp: 80, kd: 4 }]));
      let worst = 0;
      const n = Math.round(2 / dt); // 2 s: 3.6 periods of ω_d = 11.3 rad/s
      for (let k = 1; k <= n; k++) {
        sim.step(1);
        const q = sim.state().joints[0].coordinates[0];
        worst = Math.max(worst, Math.abs(q - 1 - pdError(80, 4, e0, r0, k * dt)));
      }
      expect(worst).toBeLessThan(tol);
      // the old gains' motion is far from it (the test sees the change)
      expect(Math.abs(pdError(20, 0.8, e0, r0, 0.3) - pdError(80, 4, e0, r0, 0.3))).toBeGreaterThan(
        0.01,
      );
    },
  );

  it.each([
    // articulated and symplectic-euler book the servo's work exactly (round-off over 2000
    // steps); the others' error is their own on the motion (7e-9, 4e-10 J, as without a
    // change)
    ["articulated", 2e-11],
    ["symplectic-euler", 2e-11],
    ["generalized-alpha", 1e-8],
    ["moreau-jean", 3e-9],
  ])(
    "energy.error across changes of k_p (½ k_p e² jumps by 0.1 J): no jump, and %s keeps it within %s J",
    (integrator, tol) => {
      const sim = rod({ type: "position", target: 1, kp: 20, kd: 0.8 }, integrator, 1e-3);
      sim.step(300);
      const before = sim.state();
      const e = before.joints[0].coordinates[0] - 1;
      // the servo potential's jump ½ Δk_p e²
      expect(0.5 * 60 * e * e).toBeGreaterThan(0.1);
      sim.schedule(inputs([{ type: "gains", id: "servo", kp: 80, kd: 4 }]));
      expect(sim.state().energy.error).toBe(before.energy.error);
      let worst = 0;
      for (let k = 0; k < 2000; k++) {
        sim.step(1);
        worst = Math.max(worst, Math.abs(sim.state().energy.error));
        if (k === 1000)
          sim.schedule(inputs([{ type: "gains", id: "servo", kp: 5, kd: 0, effortLimit: 2 }]));
      }
      expect(worst).toBeLessThan(tol);
    },
  );

  it("an effort limit set at run time clamps the law: the rod spins up at τ_max/I, then null lifts it", () => {
    const sim = rod({ type: "position", target: 0, kp: 20, kd: 0.8 }, "articulated", 1e-3);
    sim.schedule(inputs([{ type: "gains", id: "servo", effortLimit: 0.5 }]));
    sim.schedule(inputs([{ type: "actuator", id: "servo", value: 100 }]));
    sim.step(1000);
    const s = sim.state();
    expect(s.actuators[0].effort).toBe(0.5);
    expect(s.joints[0].rates[0]).toBeCloseTo((0.5 / I) * 1, 9);
    sim.schedule(inputs([{ type: "gains", id: "servo", effortLimit: null }]));
    sim.step(1);
    expect(sim.state().actuators[0].effort).toBeGreaterThan(100);
  });

  it("a servo with no gain in the model (no Jacobians) given gains holds as the PD does", () => {
    const sim = rod({ type: "position", target: 0.5, kp: 0, kd: 0 }, "generalized-alpha", 1e-3);
    sim.step(10);
    expect(sim.state().joints[0].coordinates[0]).toBe(0);
    sim.schedule(inputs([{ type: "gains", id: "servo", kp: 1e4, kd: 2 * Math.sqrt(1e4 * I) }]));
    sim.step(500);
    expect(sim.state().joints[0].coordinates[0]).toBeCloseTo(0.5, 6);
  });

  it("refuses what the actuator has not, an empty change, an unknown id and a blow-up, naming the field and the id", () => {
    const pos = rod({ type: "position", target: 1, kp: 20, kd: 0.8 }, "generalized-alpha", 1e-3);
    expect(refusal(pos, [{ type: "gains", id: "servo", kv: 3 }])).toEqual([
      {
        path: ["inputs", 0, "kv"],
        message:
          'actuator "servo" is a position servo: it has no kv (its gains: kp, kd, effortLimit)',
      },
    ]);
    expect(refusal(pos, [{ type: "gains", id: "servo" }])).toEqual([
      {
        path: ["inputs", 0],
        message:
          'a gains input for actuator "servo" sets none of kp, kd, effortLimit (or reset: true)',
      },
    ]);
    expect(refusal(pos, [{ type: "gains", id: "pin", kp: 1 }])?.[0]).toEqual({
      path: ["inputs", 0, "id"],
      message: 'unknown actuator "pin": it is a joint, driven by "servo"',
    });
    // k_p 1e22 on the 1 rad error, undamped: ω_n |e| = 2e11 rad/s and one step's 1e3 rad/s
    // → taken (an implicit step holds it); with the target 1e6 rad away both pass 1e8
    pos.schedule(inputs([{ type: "actuator", id: "servo", value: 1e6 }]));
    expect(refusal(pos, [{ type: "gains", id: "servo", kp: 1e22, kd: 0 }])).toEqual([
      {
        path: ["inputs", 0, "kp"],
        message: expect.stringMatching(
          /^with these gains the command in effect \(1000000\): .*beyond 1e\+8/,
        ),
      },
    ]);
    expect(() => Input.parse({ type: "gains", id: "servo", kp: -1 })).toThrow();
    expect(() => Input.parse({ type: "gains", id: "servo", effortLimit: 0 })).toThrow();
    const vel = rod({ type: "velocity", target: 1, kv: 2 }, "generalized-alpha", 1e-3);
    expect(refusal(vel, [{ type: "gains", id: "servo", kp: 3, kd: 1 }])).toEqual([
      {
        path: ["inputs", 0, "kp"],
        message: 'actuator "servo" is a velocity servo: it has no kp (its gains: kv, effortLimit)',
      },
      {
        path: ["inputs", 0, "kd"],
        message: 'actuator "servo" is a velocity servo: it has no kd (its gains: kv, effortLimit)',
      },
    ]);
    const torque = rod({ type: "torque", effort: 1 }, "generalized-alpha", 1e-3);
    expect(refusal(torque, [{ type: "gains", id: "servo", kd: 1 }])?.[0].message).toBe(
      'actuator "servo" is a torque actuator: it has no kd (effortLimit)',
    );
    expect(refusal(torque, [{ type: "gains", id: "servo", effortLimit: 0.1 }])).toBeNull();
  });

  it("a snapshot keeps the gains, a recording replays them, reset and `reset: true` go back to the model's", () => {
    const model = servoRod(
      m,
      L,
      { type: "position", target: 1, kp: 20, kd: 0.8 },
      {
        integrator: "generalized-alpha",
        dt: 1e-3,
      },
    );
    const a = loadModel(model);
    a.step(100);
    a.schedule(inputs([{ type: "gains", id: "servo", kp: 80, effortLimit: 3 }]));
    a.schedule(inputs([{ type: "gains", id: "servo", kd: 4 }]), 200);
    a.step(50);
    const snap = JSON.parse(JSON.stringify(a.snapshot()));
    expect(snap.controls.gains).toEqual([["servo", 80, 0.8, 3]]);
    expect(snap.controls.pending).toHaveLength(1);
    const b = loadSnapshot(snap);
    a.step(300);
    b.step(300);
    expect(b.stateHash()).toBe(a.stateHash());
    const rec = recordingOf(a);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(replay.stateHash()).toBe(rec.end.hash);
    // back to the model's: the run from here is the untouched model's from the same state
    a.schedule(inputs([{ type: "gains", id: "servo", reset: true }]));
    expect(JSON.parse(JSON.stringify(a.snapshot())).controls?.gains).toBeUndefined();
    a.reset();
    a.step(500);
    const fresh = loadModel(model);
    fresh.step(500);
    expect(a.stateHash()).toBe(fresh.stateHash());
  });
  it("the State reports the gains in effect where they differ from the model's, as the input's fields (until 2026-12-06 only snapshots did)", () => {
    const sim = rod({ type: "position", target: 1, kp: 20, kd: 0.8 }, "generalized-alpha", 1e-3);
    const gains = () => State.parse(JSON.parse(JSON.stringify(sim.state()))).actuators[0].gains;
    expect(gains()).toBeUndefined();
    sim.schedule(inputs([{ type: "gains", id: "servo", kp: 80, effortLimit: 3 }]));
    expect(gains()).toEqual({ kp: 80, kd: 0.8, effortLimit: 3 });
    sim.step(10);
    sim.schedule(inputs([{ type: "gains", id: "servo", kp: 0, kd: 0, effortLimit: null }]));
    expect(gains()).toEqual({ kp: 0, kd: 0, effortLimit: null });
    // the model's values sent back: nothing differs, nothing reported
    sim.schedule(inputs([{ type: "gains", id: "servo", kp: 20, kd: 0.8 }]));
    expect(gains()).toBeUndefined();
    sim.schedule(inputs([{ type: "gains", id: "servo", kd: 2 }]));
    expect(gains()).toEqual({ kp: 20, kd: 2, effortLimit: null });
    sim.schedule(inputs([{ type: "gains", id: "servo", reset: true }]));
    expect(gains()).toBeUndefined();
    // a velocity servo's rate gain is its kv
    const wheel = rod({ type: "velocity", target: 1, kv: 5, effortLimit: 2 }, "articulated", 1e-3);
    wheel.schedule(inputs([{ type: "gains", id: "servo", kv: 7 }]));
    expect(wheel.state().actuators[0].gains).toEqual({ kv: 7, effortLimit: 2 });
  });
});
