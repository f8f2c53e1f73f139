/**
 * json-values.ts: deepFreeze freezes every level; withoutNegativeZeros returns its argument
 * itself when no −0 is in it, else a copy (frozen when the argument was) with +0 in their
 * place; and a model, a PATCH and an input holding −0 run as their recording replays them
 * (JSON writes −0 as 0).
 */
import { describe, expect, it } from "vitest";
import { toDefaultsModel } from "../../../bench/compare/engines/moreau";
import { clothScene } from "../../../bench/compare/scene";
import { loadModel, recordingOf, replayRecording } from "../../../src/engine/index";
import { deepFreeze, withoutNegativeZeros } from "../../../src/engine/simulation/json-values";

describe("json-values", () => {
  it("deepFreeze freezes every level; withoutNegativeZeros copies only where a −0 is", () => {
    const v = deepFreeze({ a: [1, { b: 2 }], c: "x" });
    expect(Object.isFrozen(v.a[1])).toBe(true);
    expect(withoutNegativeZeros(v)).toBe(v);
    const w = deepFreeze({ a: [1, { b: -0 }], c: -0, d: [0, -1] });
    const x = withoutNegativeZeros(w);
    expect(x).not.toBe(w);
    expect(Object.is((x.a[1] as { b: number }).b, 0)).toBe(true);
    expect(Object.is(x.c, 0)).toBe(true);
    expect(x.d).toEqual([0, -1]);
    expect(Object.isFrozen(x.a)).toBe(true);
    const loose = { p: [-0] };
    expect(Object.isFrozen(withoutNegativeZeros(loose))).toBe(false);
  });

  it("a model, a PATCH and an input with −0 run as their recording replays them", () => {
    // the 8 × 8 cloth of the benchmark, its pinned corner p7_0 at z = −0: with the −0 kept,
    // the run departed from the same model at +0 (its recording's, its snapshot's) at once
    const cloth = toDefaultsModel(clothScene(8));
    const negative = structuredClone(cloth);
    const corner = negative.bodies[7];
    expect([corner.id, corner.fixed]).toEqual(["p7_0", true]);
    (corner.position as number[])[2] = -0;
    const sim = loadModel(negative);
    const positive = loadModel(cloth);
    sim.step(30);
    positive.step(30);
    expect(sim.stateHash()).toBe(positive.stateHash());
    // a PATCH and an input with −0 are applied, and recorded, as +0
    sim.update({ gravity: [0, -0, -9.81] });
    sim.schedule([{ type: "bodyState", id: "p3_5", velocity: [-0, 0.2, -0] }]);
    sim.step(30);
    const rec = recordingOf(sim);
    const patch = rec.inputs.find((e) => "parameters" in e);
    expect(Object.is(patch && "parameters" in patch ? patch.parameters.gravity?.[1] : 1, 0)).toBe(
      true,
    );
    const replay = replayRecording(JSON.parse(JSON.stringify(rec)));
    replay.step(rec.end.step - replay.stepCount);
    expect(replay.stateHash()).toBe(rec.end.hash);
  });
});
