/**
 * The split of a session's recording for a store's input log (recording-history.ts
 * snapshotForLog): the lines from what the log holds up to the inputs fixed, then the
 * pending ones in the snapshot, are the recording's inputs in order — across a restore
 * whose history has an input at the restore's step, after which the engine's first input
 * at that step is a later go (`separate: true`, the engine's rule) — and the split reads
 * only the engine's inputs past the log's end, not the whole recording (until 2026-12-07
 * every checkpoint merged the whole of it: O(n) per checkpoint). In process, no worker.
 */
import { describe, expect, it, vi } from "vitest";
import type { TimedInputSpec } from "../../schemas/input";
import { Input } from "../../schemas/input";
import { loadModel, loadSnapshot, type Simulation } from "../../src/engine/index";
import {
  sessionRecording,
  snapshotForLog,
  snapshotWithHistory,
  splitHistory,
} from "../../src/server/recording-history";
import { hingedRods } from "../support/models";
import { rodImpulse } from "../support/recordings";

const since = { cause: "created" as const, at: "2026-12-07T00:00:00.000Z" };
const impulse = (vz: number) => Input.parse(rodImpulse(vz));
const at = (sim: Simulation, step: number, vz: number) =>
  sim.scheduleTimed([{ step, input: impulse(vz) }]);

/**
 * A session restored at step 10 from a snapshot whose recording (its history) holds inputs
 * at steps 0, 0, 5 and 10 (pending at the restore), driven on: an input at the restore's
 * step 10 (a later go there), 15, 15, 22, and one pending at 40.
 */
function restored() {
  const a = loadModel(hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) as never);
  at(a, 0, 1);
  at(a, 0, -0.5);
  at(a, 5, 0.3);
  at(a, 10, 0.2);
  a.step(10);
  const { engine, history } = splitHistory(snapshotWithHistory(a, null, since));
  const sim = loadSnapshot(engine);
  at(sim, 10, -0.7);
  sim.step(5);
  at(sim, 15, 0.4);
  at(sim, 15, 0.1);
  sim.step(7);
  at(sim, 22, -0.2);
  at(sim, 40, 0.6);
  sim.step(3);
  if (!history) throw new Error("no history");
  return { sim, history };
}

/** The JSON lines of a log part, parsed. */
const parsed = (lines: Uint8Array) =>
  new TextDecoder()
    .decode(lines)
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as TimedInputSpec);

describe("a recording split for an input log", () => {
  it("is the recording's inputs in order, from any count the log holds, the later go at the restore's step marked", () => {
    const { sim, history } = restored();
    const whole = sessionRecording(sim, history, since).inputs;
    // history 0, 0, 5, 10; the engine's 10 (a later go), 15, 15, 22; pending 40
    expect(whole.map((e) => e.step)).toEqual([0, 0, 5, 10, 10, 15, 15, 22, 40]);
    // each later request at a step is a later go there (the engine's marks), and the
    // engine's first input, at the restore's step after the history's, one too (the merge's)
    expect(sim.recording().entries[0].separate).toBeUndefined();
    expect(whole.map((e) => e.separate === true)).toEqual([
      false,
      true,
      false,
      false,
      true,
      false,
      true,
      false,
      false,
    ]);
    const fixed = 8;
    for (let count = 0; count <= fixed; count++) {
      const { snapshot, log } = snapshotForLog(sim, history, since, "L", { id: "L", count });
      expect(log).toMatchObject({ id: "L", from: count, count: fixed });
      expect(parsed(log?.lines ?? new Uint8Array())).toEqual(whole.slice(count, fixed));
      expect(snapshot.recording?.inputs).toEqual(whole.slice(fixed));
      expect(snapshot.recording?.start).toEqual(history.start);
      expect(snapshot.recording?.since).toEqual(history.since);
    }
    // another log (a new recording's): from 0
    const other = snapshotForLog(sim, history, since, "L2", { id: "L", count: 6 }).log;
    expect(other?.from).toBe(0);
    expect(parsed(other?.lines ?? new Uint8Array())).toEqual(whole.slice(0, fixed));
  });

  it("reads only the engine's inputs past what the log holds", () => {
    const { sim, history } = restored();
    const read = vi.spyOn(sim, "recording");
    // the log holds 7 of the 8 fixed: the engine's last entry (step 22) is new
    const { log } = snapshotForLog(sim, history, since, "L", { id: "L", count: 7 });
    expect(parsed(log?.lines ?? new Uint8Array()).map((e) => e.step)).toEqual([22]);
    expect(read).toHaveBeenCalledTimes(1);
    // before: recording() whole, its 4 entries read for 1 line
    expect(read.mock.results[0].value.entries.map((e: TimedInputSpec) => e.step)).toEqual([22]);
  });
});
