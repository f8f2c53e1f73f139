/**
 * Recordings (src/engine/simulation/recording.ts) of the spring particle of
 * test/support/models.ts (symplectic Euler, the recurrence v ← v − h (k/m) x, x ← x + h v
 * written out here) kicked by an impulse J at step 20 (v ← v + J/m at that boundary):
 * the document recordingOf writes, its replay reproducing the recurrence's numbers and the
 * end hash, the sampled states of replayStates, a recording that starts from a snapshot,
 * and the errors with their paths (parseRecording, replayRecording).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Input } from "../../../schemas/input";
import { Model } from "../../../schemas/model";
import { RECORDING_FORMAT, RECORDING_VERSION } from "../../../schemas/recording";
import { loadModel, loadSnapshot } from "../../../src/engine/index";
import {
  parseRecording,
  RecordingError,
  recordingOf,
  replayRecording,
  replayStates,
} from "../../../src/engine/simulation/recording";
import { SPRING_PARTICLE, springParticle } from "../../support/models";

const KICK = 0.5; // N·s along x

/** x and v after n steps with the kick at step 20 (when n > 20), by the recurrence. */
function expected(n: number): { x: number; v: number } {
  const { stiffness: k, mass: m, dt: h, x0 } = SPRING_PARTICLE;
  let x = x0;
  let v = 0;
  for (let i = 0; i < n; i++) {
    if (i === 20) v += KICK / m;
    v -= h * (k / m) * x;
    x += h * v;
  }
  return { x, v };
}

function kicked() {
  const sim = loadModel(springParticle());
  sim.schedule([Input.parse({ type: "impulse", id: "p", impulse: [KICK, 0, 0] })], 20);
  sim.step(50);
  return sim;
}

/** The issues of a RecordingError thrown by f. */
function issues(f: () => unknown) {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(RecordingError);
    return (err as RecordingError).issues;
  }
  throw new Error("no RecordingError");
}

describe("recordingOf and replayRecording", () => {
  it("the document: format, model, no start, the input at its step, the end; a replay reproduces the run", () => {
    const sim = kicked();
    const end = expected(50);
    expect(sim.system.pos[0]).toBeCloseTo(end.x, 12);
    const rec = recordingOf(sim);
    expect([rec.format, rec.version, rec.start]).toEqual([
      RECORDING_FORMAT,
      RECORDING_VERSION,
      null,
    ]);
    expect(rec.model).toEqual(sim.model);
    expect(rec.inputs.map((e) => e.step)).toEqual([20]);
    expect(rec.end).toEqual({ step: 50, time: sim.time, hash: sim.stateHash() });
    const replay = replayRecording(parseRecording(JSON.parse(JSON.stringify(rec))));
    expect(replay.stepCount).toBe(0);
    replay.step(50);
    expect(replay.stateHash()).toBe(rec.end.hash);
    expect(replay.system.vel[0]).toBeCloseTo(end.v, 12);
  });

  it("replayStates samples every k steps and the end, and checks the end hash", () => {
    const rec = recordingOf(kicked());
    const { states, matches } = replayStates(rec, 20);
    expect(matches).toBe(true);
    expect(states.map((s) => s.step)).toEqual([20, 40, 50]);
    for (const s of states) expect(s.bodies[0].position[0]).toBeCloseTo(expected(s.step).x, 12);
    expect(replayStates({ ...rec, end: { ...rec.end, hash: "0".repeat(64) } }, 25).matches).toBe(
      false,
    );
  });

  it("from a snapshot: the start is the snapshot, and the replay continues from it", () => {
    const a = kicked();
    const b = loadSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    b.step(30);
    const rec = recordingOf(b);
    expect(rec.start?.step).toBe(50);
    expect(rec.inputs).toEqual([]);
    const replay = replayRecording(rec);
    expect(replay.stepCount).toBe(50);
    replay.step(30);
    expect(replay.stateHash()).toBe(rec.end.hash);
    expect(replay.system.pos[0]).toBeCloseTo(expected(80).x, 12);
  });

  it("from a snapshot with an input pending: the start holds it, the inputs do not repeat it, and the replay applies it once", () => {
    const a = loadModel(springParticle());
    a.schedule([Input.parse({ type: "impulse", id: "p", impulse: [KICK, 0, 0] })], 20);
    a.step(5);
    const b = loadSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    b.step(45);
    expect(b.system.pos[0]).toBeCloseTo(expected(50).x, 12);
    const rec = recordingOf(b);
    expect(rec.start?.controls?.pending.map((p) => p.step)).toEqual([20]);
    expect(rec.inputs).toEqual([]); // (it was listed again, and the replay kicked twice)
    const replay = replayRecording(rec);
    replay.step(45);
    expect(replay.system.pos[0]).toBeCloseTo(expected(50).x, 12);
    expect(replay.stateHash()).toBe(rec.end.hash);
    expect(replayStates(rec, 10).matches).toBe(true);
  });

  it("inputs scheduled for a step after the end: listed at their step, and a session from the recording goes on past the end as the original (until 2026-12-06 they were left out)", () => {
    const a = loadModel(springParticle());
    a.schedule([Input.parse({ type: "impulse", id: "p", impulse: [KICK, 0, 0] })], 20);
    a.step(10);
    const rec = JSON.parse(JSON.stringify(recordingOf(a)));
    expect(rec.inputs).toEqual([
      {
        step: 20,
        input: {
          type: "impulse",
          id: "p",
          impulse: [KICK, 0, 0],
          point: [0, 0, 0],
          angularImpulse: [0, 0, 0],
        },
      },
    ]);
    expect(replayStates(rec, 5).matches).toBe(true);
    const replay = replayRecording(rec);
    replay.step(50);
    // the kick at step 20 in the recurrence (the copy without it: x of the unkicked spring)
    expect(replay.system.pos[0]).toBeCloseTo(expected(50).x, 12);
    a.step(40);
    expect(replay.stateHash()).toBe(a.stateHash());
    // from a snapshot holding step 20's kick pending, one more scheduled for step 30: the
    // recording lists the second alone (the start holds the first), each applied once
    const b = loadSnapshot(JSON.parse(JSON.stringify(loadModel(springParticle()).snapshot())));
    b.schedule([Input.parse({ type: "impulse", id: "p", impulse: [KICK, 0, 0] })], 20);
    const c = loadSnapshot(JSON.parse(JSON.stringify(b.snapshot())));
    c.schedule([Input.parse({ type: "impulse", id: "p", impulse: [0, KICK, 0] })], 30);
    c.step(10);
    const rec2 = JSON.parse(JSON.stringify(recordingOf(c)));
    expect(rec2.start.controls.pending.map((p: { step: number }) => p.step)).toEqual([20]);
    expect(rec2.inputs.map((e: { step: number }) => e.step)).toEqual([30]);
    const replay2 = replayRecording(rec2);
    replay2.step(40);
    c.step(30);
    expect(replay2.stateHash()).toBe(c.stateHash());
    expect(replay2.system.pos[0]).toBeCloseTo(expected(40).x, 12);
  });

  it("two requests' inputs at one step boundary: the second recorded `separate`, and the replay applies them in the same two goes (articulated puts the bodies back on their joints after each)", () => {
    const model = JSON.parse(
      readFileSync(new URL("../../../examples/whip.json", import.meta.url), "utf8"),
    );
    expect(model.solver.integrator).toBe("articulated");
    const sim = loadModel(model);
    sim.step(120);
    sim.schedule([Input.parse({ type: "bodyState", id: "link6", velocity: [0, 0, 0.2] })]);
    sim.schedule([Input.parse({ type: "impulse", id: "link12", impulse: [0.01, 0, 0] })]);
    sim.step(7);
    const rec = recordingOf(sim);
    expect(rec.inputs.map((e) => e.separate ?? false)).toEqual([false, true]);
    // (applied in one go, the second projection onto the joints was missing: another end)
    expect(replayStates(rec, 1).matches).toBe(true);
    const replay = replayRecording(rec);
    replay.step(127 - replay.stepCount);
    expect(replay.stateHash()).toBe(rec.end.hash);
    expect(recordingOf(replay).inputs).toEqual(rec.inputs);
  });

  it("after a reset: from the model's start, or from the reset state's snapshot when a PATCH changed the parameters (they stay patched)", () => {
    const { stiffness: k, mass: m, dt: h, x0 } = SPRING_PARTICLE;
    const plain = kicked();
    plain.reset();
    plain.step(10);
    expect(recordingOf(plain).start).toBeNull();
    // h/2 from step 10 on, then back to t = 0: the run goes on at h/2 without the kick
    const sim = kicked();
    sim.update({ solver: { dt: h / 2 } });
    sim.step(5);
    sim.reset();
    sim.step(40);
    let x = x0;
    let v = 0;
    for (let i = 0; i < 40; i++) {
      v -= (h / 2) * (k / m) * x;
      x += (h / 2) * v;
    }
    expect(sim.system.pos[0]).toBeCloseTo(x, 12);
    expect(sim.time).toBeCloseTo(40 * (h / 2), 14);
    const rec = recordingOf(sim);
    expect(rec.start?.step).toBe(0);
    expect(rec.start?.parameters.solver.dt).toBe(h / 2);
    // the replay runs the patched step (from the model's start it would run h: another end)
    expect(replayStates(rec, 10).matches).toBe(true);
    const replay = replayRecording(rec);
    replay.step(40);
    expect(replay.stateHash()).toBe(rec.end.hash);
  });
});

describe("errors", () => {
  it("parseRecording names the fields of an invalid document", () => {
    const rec = JSON.parse(JSON.stringify(recordingOf(kicked())));
    expect(issues(() => parseRecording({ ...rec, version: 2 }))[0].path).toEqual(["version"]);
    expect(
      issues(() => parseRecording({ ...rec, end: { ...rec.end, hash: "x" } }))[0].path,
    ).toEqual(["end", "hash"]);
  });

  it("replayRecording: an input that does not fit, a start of another model, an end before the start", () => {
    const rec = recordingOf(kicked());
    const ghost = {
      ...rec,
      inputs: [{ step: 5, input: Input.parse({ type: "impulse", id: "ghost" }) }],
    };
    expect(issues(() => replayRecording(ghost))[0].path[0]).toBe("inputs");
    const b = loadSnapshot(kicked().snapshot());
    b.step(5);
    const started = recordingOf(b);
    const other = Model.parse(springParticle({ stiffness: 7 }));
    expect(issues(() => replayRecording({ ...started, model: other }))[0].path).toEqual([
      "start",
      "model",
    ]);
    expect(
      issues(() => replayRecording({ ...started, end: { ...started.end, step: 10 } }))[0].path,
    ).toEqual(["end", "step"]);
  });
});
