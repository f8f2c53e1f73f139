/**
 * A session's recording across restores (schemas/snapshot.ts RecordingHistory). The engine
 * starts a new recording whenever a simulation is restored from a snapshot (Simulation
 * .applyState), its start that snapshot's state: a session rebuilt from its checkpoint after
 * a worker loss, a restart or a takeover lost the inputs before it from its recording. The
 * worker therefore writes the recording so far into every snapshot it exports (`recording`,
 * outside the engine's checksum) and, restoring one, keeps it as the session's `history`:
 * its recording is then that history's start and inputs followed by the engine's own
 * recording since the restore, which replays to the same state bit for bit — the replay
 * reaches the snapshot's state by the history's inputs (the engine's recording guarantee)
 * and goes on from there as the restored session did (a snapshot continues bit-identically).
 *
 * The merge, checked against the engine's rules: the history's inputs still pending at the
 * restore are in the restored simulation's queue, and the engine records neither them nor
 * (since they come with its start) its `scheduled` list: the history holds them, at their
 * steps, once. Inputs a request applies at the restore's own step after the history's last
 * go there are a later go at that boundary: marked `separate` as the engine marks its own
 * (Simulation.applyDue), so the replay settles the history's go first, as the session did.
 */
import type { TimedInputSpec } from "../../schemas/input";
import type { RecordingSpec } from "../../schemas/recording";
import type {
  RecordingHistorySpec,
  RecordingSinceOut,
  SimulationSnapshotSpec,
} from "../../schemas/snapshot";
import { RecordingError, recordingOf, type Simulation } from "../engine/index";
import type { InputLogAt, InputLogPart } from "./protocol";

/** Inputs a recording holds at most (schemas/recording.ts; the engine's MAX_RECORDED_INPUTS). */
const MAX_INPUTS = 100_000;

/**
 * The recording of `sim`, whose recording restarted at a restore from a snapshot carrying
 * `history` (null: none, the engine's recording alone); `since` what started it. Throws
 * RecordingError when it holds more than MAX_INPUTS (recordingOf's refusal).
 */
export function sessionRecording(
  sim: Simulation,
  history: RecordingHistorySpec | null,
  since: RecordingSinceOut,
): RecordingSpec & { since: RecordingSinceOut } {
  const own = recordingOf(sim);
  if (history === null) return { ...own, since };
  // the engine's recording starts at the restore: its start's step
  const restoredAt = own.start?.step ?? 0;
  const inputs = [...history.inputs];
  const wentAtRestore = inputs.some((e) => e.step === restoredAt);
  own.inputs.forEach((e, i) => {
    const later = i === 0 && wentAtRestore && e.step === restoredAt && e.separate !== true;
    inputs.push(later ? { ...e, separate: true } : e);
  });
  if (inputs.length > MAX_INPUTS)
    throw new RecordingError([
      {
        path: ["inputs"],
        message: `the recording holds ${inputs.length} inputs since its start (across its restores), more than the ${MAX_INPUTS} a recording keeps; reset to start a new one`,
      },
    ]);
  return { ...own, start: history.start, inputs, since: history.since };
}

/** The recording so far as a snapshot carries it, or null when none can be written (too long). */
export function historyOf(
  sim: Simulation,
  history: RecordingHistorySpec | null,
  since: RecordingSinceOut,
): RecordingHistorySpec | null {
  try {
    const rec = sessionRecording(sim, history, since);
    return { start: rec.start, inputs: rec.inputs, since: rec.since };
  } catch (err) {
    if (err instanceof RecordingError) return null;
    throw err;
  }
}

/** `sim`'s snapshot with the recording so far (SimulationSnapshot.recording). */
export function snapshotWithHistory(
  sim: Simulation,
  history: RecordingHistorySpec | null,
  since: RecordingSinceOut,
): SimulationSnapshotSpec {
  const snap = sim.snapshot();
  const recording = historyOf(sim, history, since);
  return recording === null ? snap : { ...snap, recording };
}

/**
 * `sim`'s snapshot with its recording so far, split for a store that keeps the recorded
 * inputs as an append-only log (persistence.ts): the recording's first n inputs can no
 * longer change — its history's (fixed at the restore) and the engine's applied ones
 * (Simulation.recordedInputs().entries: it only appends to them) — while those after
 * (scheduled, still pending) may yet be applied in another order. The inputs from what the
 * log holds (`logged`, when it is this recording's log `logId`; else from 0) up to n go
 * apart as JSON lines; the snapshot's recording keeps only the pending ones. So a
 * checkpoint writes the inputs since the previous one, not the whole list (a controller's
 * 10 000 inputs were 1.5 MB rewritten by each change) — and reads only those: the merge of
 * sessionRecording is done for inputs from..n and the pending ones, the engine asked for its
 * entries from the log's end on (Simulation.recording(from)). Until 2026-12-07 each
 * checkpoint merged the whole recording (O(n): 23 ms at 20 000 inputs, 39 ms at 96 000).
 * No recording (too long): no part.
 */
export function snapshotForLog(
  sim: Simulation,
  history: RecordingHistorySpec | null,
  since: RecordingSinceOut,
  logId: string,
  logged: InputLogAt | null,
): { snapshot: SimulationSnapshotSpec; log: InputLogPart | null } {
  const snap = sim.snapshot();
  const h = history?.inputs.length ?? 0;
  const fixed = h + sim.recordedInputs().entries;
  const from = logged !== null && logged.id === logId && logged.count <= fixed ? logged.count : 0;
  // the engine's entries from the log's end on: input k of the recording is the history's
  // k-th below h, the engine's (k - h)-th from there
  const skipped = Math.max(0, from - h);
  const own = sim.recording(skipped);
  // as sessionRecording refuses it (recordingOf's truncation, MAX_INPUTS across restores)
  if (own.truncated || fixed + own.scheduled.length > MAX_INPUTS)
    return { snapshot: snap, log: null };
  // sessionRecording's mark: the engine's first input, at the restore's step after the
  // history's go there, is a later go (`i`: its index in the engine's recording)
  const restoredAt = own.start?.step ?? 0;
  const mark = (e: TimedInputSpec, i: number): TimedInputSpec =>
    history !== null &&
    i === 0 &&
    e.step === restoredAt &&
    e.separate !== true &&
    wentAt(history, restoredAt)
      ? { ...e, separate: true }
      : e;
  let text = "";
  for (let k = from; k < h; k++) text += `${JSON.stringify(history?.inputs[k])}\n`;
  own.entries.forEach((e, j) => {
    text += `${JSON.stringify(mark(e, skipped + j))}\n`;
  });
  const entries = fixed - h;
  const pending = own.scheduled.map((e, j) => mark(e, entries + j));
  const recording: RecordingHistorySpec =
    history === null
      ? { start: own.start, inputs: pending, since }
      : { start: history.start, inputs: pending, since: history.since };
  return {
    snapshot: { ...snap, recording },
    log: { id: logId, from, count: fixed, lines: new TextEncoder().encode(text) },
  };
}

/** Per history: whether it has inputs at the restore's step (`at`), computed once (O(its inputs)). */
const wentAtRestore = new WeakMap<RecordingHistorySpec, boolean>();
function wentAt(history: RecordingHistorySpec, at: number): boolean {
  let went = wentAtRestore.get(history);
  if (went === undefined) {
    went = history.inputs.some((e) => e.step === at);
    wentAtRestore.set(history, went);
  }
  return went;
}

/**
 * A snapshot document split into what the engine restores (its checksum covers it) and the
 * recording it carries (null: none, a snapshot written before 2026-12-07 or by a client that
 * left it out).
 */
export function splitHistory(snapshot: unknown): {
  engine: unknown;
  history: RecordingHistorySpec | null;
} {
  if (snapshot === null || typeof snapshot !== "object" || !("recording" in snapshot))
    return { engine: snapshot, history: null };
  const { recording, ...engine } = snapshot as { recording?: RecordingHistorySpec };
  return { engine, history: recording ?? null };
}
