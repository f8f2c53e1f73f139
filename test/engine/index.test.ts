/**
 * The engine's public entry (src/engine/index.ts): loadSnapshot returns a Simulation at the
 * snapshot's step and time with its state (the hash) that continues as the original
 * does, and reports a refused model as a SnapshotError under ["model"]; the entry exports what the service and the CLI use.
 */
import { describe, expect, it } from "vitest";
import * as engine from "../../src/engine/index";
import { loadModel, loadSnapshot, SnapshotError } from "../../src/engine/index";
import { unitTetFem } from "../support/fem";
import { springParticle } from "../support/models";

describe("loadSnapshot", () => {
  it("a simulation at the snapshot's step, time and state, continuing as the original", () => {
    const a = loadModel(springParticle());
    a.step(12);
    const b = loadSnapshot(JSON.parse(JSON.stringify(a.snapshot())));
    expect([b.stepCount, b.time, b.stateHash()]).toEqual([12, a.time, a.stateHash()]);
    a.step(8);
    b.step(8);
    expect(b.stateHash()).toBe(a.stateHash());
  });

  it("a snapshot whose model is refused is a SnapshotError under [model]", () => {
    const sim = loadModel({ bodies: [{ id: "plate", fixed: true }], fem: [unitTetFem()] });
    const { checksum: _dropped, ...snap } = JSON.parse(JSON.stringify(sim.snapshot()));
    // its fourth node moved into the plane of the others: a flat element (the model schema
    // checks the volume the build needs, so the error comes with its path)
    snap.model.fem[0].nodes[3] = [1, 1, 0];
    let caught: unknown;
    try {
      loadSnapshot(snap);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SnapshotError);
    const [issue] = (caught as SnapshotError).issues;
    expect(issue.path).toEqual(["model", "fem", 0, "elements", 0]);
  });
});

describe("the entry's exports", () => {
  it("loading, snapshots, recordings, errors and the step deadline", () => {
    for (const f of [
      engine.loadModel,
      engine.buildSimulation,
      engine.loadSnapshot,
      engine.recordingOf,
      engine.replayRecording,
      engine.replayStates,
      engine.parseRecording,
      engine.setDeadline,
      engine.clearDeadline,
    ])
      expect(typeof f).toBe("function");
    for (const error of [
      engine.ModelError,
      engine.SnapshotError,
      engine.RecordingError,
      engine.DivergenceError,
      engine.SolverError,
      engine.ParameterError,
      engine.InputError,
      engine.DeadlineExceeded,
    ])
      expect(error.prototype).toBeInstanceOf(Error);
  });
});
