/**
 * A `limits` input: a joint's bounds moved at run time (simulation/inputs.ts JointBounds).
 *
 * A 1 kg, 1 m rod hinged at its end (I = m L²/3 about the pin), without gravity, driven by
 * a constant torque τ onto its upper bound 0.5 rad, where it rests (limitEffort −τ under the
 * velocity-level integrators; τ/k past the bound under the compliant law, k = I (2π/0.02
 * s)², I the coordinate's inertia its pin leaves). Then:
 * - the bound moved away to 0.8 rad: the rod turns again from rest, q − q₀ = ½ (τ/I) t²,
 *   until it meets the new bound;
 * - the bound moved into it, to 0.3 rad: a start for the joint, as at t = 0 (onto a rigid
 *   bound at once, positions alone), then resting on it, pressed by τ;
 * the bounds kept by a snapshot (continued bit-identically) and a recording's replay, the
 * model's back after a reset; refusals name the path.
 */
import { describe, expect, it } from "vitest";
import { Input, type InputIn } from "../../../schemas/input";
import { SolverSettings } from "../../../schemas/model";
import { State } from "../../../schemas/state";
import {
  InputError,
  loadModel,
  loadSnapshot,
  recordingOf,
  replayRecording,
} from "../../../src/engine/index";
import { rodPendulum } from "../../support/models";

const M = 1;
const L = 1;
const I = (M * L * L) / 3;
const TAU = 1;
const H = 0.001;
/** The default compliant stiffness: I (2π/0.02 s)². */
const K = I * ((2 * Math.PI) / 0.02) ** 2;
const INTEGRATORS = SolverSettings.shape.integrator.unwrap().options;
const COMPLIANT = new Set(["newmark", "generalized-alpha", "articulated"]);

const inputs = (list: InputIn[]) => list.map((i) => Input.parse(i));

/** The rod pressed onto its upper bound 0.5 rad by τ, at rest there after 1.5 s. */
function pressed(integrator: string) {
  const sim = loadModel(
    rodPendulum({
      mass: M,
      length: L,
      axis: [0, 1, 0],
      gravity: [0, 0, 0],
      limits: { lower: -1, upper: 0.5 },
      servo: { type: "torque", effort: TAU },
      solver: { integrator, dt: H },
    }),
  );
  sim.step(1500);
  return sim;
}

const q = (sim: ReturnType<typeof loadModel>) => sim.state().joints[0].coordinates[0];
const rate = (sim: ReturnType<typeof loadModel>) => sim.state().joints[0].rates[0];

describe("a limits input moves a joint's bounds at its step boundary", () => {
  it("moved away: the joint turns again from rest, q − q₀ = ½ (τ/I) t² (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const sim = pressed(integrator);
      const q0 = q(sim);
      const rest = COMPLIANT.has(integrator) ? 0.5 + TAU / K : 0.5;
      expect(q0, integrator).toBeCloseTo(rest, 6);
      expect(Math.abs(rate(sim)), integrator).toBeLessThan(1e-6);
      const ack = sim.schedule(
        inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.8 }]),
        1600,
      );
      expect(ack.step).toBe(1600);
      sim.step(100);
      // at the boundary, before any step under the new bound: still at rest
      expect(q(sim) - q0, integrator).toBeLessThan(1e-6);
      sim.step(300);
      const t = 0.3;
      // the first-order schemes' O(h) errors: ½ α h t = 4.5e-4 rad, and backward Euler's
      // damping of the rod's turning (2e-5 rad/s here)
      const firstOrder = integrator === "backward-euler" || integrator === "symplectic-euler";
      const tol = firstOrder ? 1e-3 : 1e-6;
      expect(Math.abs(q(sim) - q0 - 0.5 * (TAU / I) * t * t), integrator).toBeLessThan(tol);
      expect(Math.abs(rate(sim) - (TAU / I) * t), integrator).toBeLessThan(tol / 10);
      // and rests on the new bound
      sim.step(1500);
      expect(q(sim), integrator).toBeCloseTo(COMPLIANT.has(integrator) ? 0.8 + TAU / K : 0.8, 6);
    }
  });

  it("moved into the joint: onto the new bound at once, then resting on it pressed by τ (every integrator)", () => {
    for (const integrator of INTEGRATORS) {
      const sim = pressed(integrator);
      sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.3 }]));
      // the State right after the input: the joint on its new bound, no velocity from it
      expect(q(sim), integrator).toBeCloseTo(0.3, 6);
      expect(Math.abs(rate(sim)), integrator).toBeLessThan(1e-6);
      let fastest = 0;
      for (let i = 0; i < 1000; i++) {
        sim.step(1);
        fastest = Math.max(fastest, Math.abs(rate(sim)));
      }
      // the default law's ½ k δ² (δ = 0.2 rad: 164 J) is not released
      expect(fastest, integrator).toBeLessThan(0.05);
      const s = sim.state();
      if (COMPLIANT.has(integrator)) {
        expect(q(sim), integrator).toBeCloseTo(0.3 + TAU / K, 6);
      } else {
        expect(q(sim), integrator).toBeCloseTo(0.3, 6);
        expect(s.joints[0].limitEffort, integrator).toBeCloseTo(-TAU, 6);
      }
    }
  });

  it("a snapshot keeps the moved bounds (continued bit-identically), a replay too; reset brings the model's back", () => {
    const sim = pressed("generalized-alpha");
    sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.3 }]));
    sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.4 }]), 2000);
    sim.step(200);
    const snap = JSON.parse(JSON.stringify(sim.snapshot()));
    expect(snap.controls.limits).toEqual([["pin", -1, 0.3]]);
    const copy = loadSnapshot(snap);
    sim.step(800);
    copy.step(800);
    expect(copy.stateHash()).toBe(sim.stateHash());
    // met at 0.27 s after the bound moved (step 2000), rebounding and settled 0.5 s later
    sim.step(1000);
    expect(q(sim)).toBeCloseTo(0.4 + TAU / K, 6);
    const rec = recordingOf(sim);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(replay.stateHash()).toBe(rec.end.hash);
    sim.reset();
    sim.step(1500);
    expect(q(sim)).toBeCloseTo(0.5 + TAU / K, 6);
    expect(sim.snapshot().controls).toBeUndefined();
  });

  it("the State reports the bounds in effect while they differ from the model's, a snapshot's, a replay's and a reset's too (until 2026-12-06 only snapshots did)", () => {
    const sim = pressed("moreau-jean");
    const bounds = (s: ReturnType<typeof loadModel>) =>
      State.parse(JSON.parse(JSON.stringify(s.state()))).joints[0].limits;
    expect(bounds(sim)).toBeUndefined();
    sim.schedule(inputs([{ type: "limits", id: "pin", lower: -0.25, upper: 0.3 }]));
    expect(bounds(sim)).toEqual({ lower: -0.25, upper: 0.3 });
    sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.4 }]), 1600);
    sim.step(50);
    // the pending one not yet in effect
    expect(bounds(sim)).toEqual({ lower: -0.25, upper: 0.3 });
    const copy = loadSnapshot(JSON.parse(JSON.stringify(sim.snapshot())));
    expect(bounds(copy)).toEqual({ lower: -0.25, upper: 0.3 });
    sim.step(100);
    copy.step(100);
    expect(bounds(sim)).toEqual({ lower: -1, upper: 0.4 });
    expect(bounds(copy)).toEqual({ lower: -1, upper: 0.4 });
    const rec = recordingOf(sim);
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step);
    expect(bounds(replay)).toEqual({ lower: -1, upper: 0.4 });
    // the model's bounds sent back: nothing differs, nothing reported
    sim.schedule(inputs([{ type: "limits", id: "pin", lower: -1, upper: 0.5 }]));
    expect(bounds(sim)).toBeUndefined();
    copy.reset();
    expect(bounds(copy)).toBeUndefined();
  });

  it("refuses an unknown joint, a joint without limits and lower ≥ upper, naming the path; nothing changes", () => {
    const sim = loadModel({
      ...rodPendulum({
        mass: M,
        length: L,
        axis: [0, 1, 0],
        limits: { lower: -1, upper: 0.5 },
        solver: { integrator: "moreau-jean", dt: H },
      }),
    });
    const refused = (list: InputIn[]) => {
      try {
        sim.schedule(inputs(list));
      } catch (e) {
        if (e instanceof InputError) return e.issues;
        throw e;
      }
      return [];
    };
    expect(refused([{ type: "limits", id: "nope", lower: 0, upper: 1 }])).toEqual([
      {
        path: ["inputs", 0, "id"],
        message: `unknown joint "nope" (the model's joints with limits: "pin")`,
      },
    ]);
    expect(
      refused([
        { type: "limits", id: "pin", lower: -0.2, upper: 0.2 },
        { type: "limits", id: "pin", lower: 0.4, upper: 0.4 },
      ]),
    ).toEqual([{ path: ["inputs", 1, "upper"], message: "upper (0.4) must be above lower (0.4)" }]);
    expect(sim.snapshot().controls).toBeUndefined();
    const free = loadModel(
      rodPendulum({
        mass: M,
        length: L,
        axis: [0, 1, 0],
        solver: { integrator: "moreau-jean", dt: H },
      }),
    );
    expect(() =>
      free.schedule(inputs([{ type: "limits", id: "pin", lower: 0, upper: 1 }])),
    ).toThrow(/joint "pin" has no limits in the model/);
  });
});
