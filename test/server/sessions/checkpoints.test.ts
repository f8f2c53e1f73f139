/**
 * The checkpoint loop of a session (src/server/sessions/checkpoints.ts), driven directly with
 * a worker whose exports the test releases by hand and an optional store that records its
 * writes: no worker thread, no disk.
 *
 * Two defects it guards against:
 * - a delete (or a loss) that begins while an export is under way, with another checkpoint
 *   asked for meanwhile: the loop ended, its `finally` saw the checkpoint still wanted and
 *   started the loop again, which ended at once (the session being deleted), whose `finally`
 *   started it again… synchronously, until the stack overflowed (the determinism test printed
 *   "Exception in PromiseRejectCallback … RangeError: Maximum call stack size exceeded").
 * - a pass that waits for nothing (a worker's checkpoint kept in memory, no store) ended
 *   before `schedule` marked it under way, so the mark stayed: every later checkpoint of the
 *   session returned that settled promise and was never taken.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ClusterHooks } from "../../../src/server/cluster/hooks";
import type { SnapshotStore } from "../../../src/server/cluster/ports";
import type { Config } from "../../../src/server/config";
import type { ServerMetrics } from "../../../src/server/metrics";
import { Checkpoints } from "../../../src/server/sessions/checkpoints";
import type {
  SessionRecord,
  SessionTable,
  WorkerCheckpoint,
} from "../../../src/server/sessions/records";
import type { WorkerCalls } from "../../../src/server/sessions/worker-calls";

/** A session record with only what checkpoints.ts reads and writes. */
function record(): SessionRecord {
  return {
    id: "s",
    name: "s",
    seq: 1,
    status: "paused",
    time: 0,
    step: 0,
    message: null,
    run: null,
    createdAt: new Date(0),
    lost: false,
    owner: null,
    epoch: 0,
    resumeRun: null,
    savedStep: null,
    persisted: false,
    memory: null,
    lastCheckpointStep: 0,
    lastCheckpointStatus: "paused",
    lastCheckpointAt: 0,
    checkpointing: null,
    checkpointWanted: false,
    checkpointUrgent: false,
    checkpointTimer: null,
    workerCheckpoint: null,
    deleting: false,
    removing: null,
    deleted: false,
  } as Partial<SessionRecord> as SessionRecord;
}

/** A worker whose exports wait until the test releases them; each export is the step's bytes. */
class HeldExports {
  private waiting: (() => void)[] = [];
  count = 0;
  exportAt(rec: SessionRecord): Promise<{ bytes: Uint8Array; seq: number }> {
    this.count++;
    return new Promise((resolve) => {
      this.waiting.push(() =>
        resolve({ bytes: Buffer.from(`{"step":${rec.step}}`), seq: rec.seq }),
      );
    });
  }
  release(): void {
    for (const go of this.waiting.splice(0)) go();
  }
}

function checkpoints(calls: HeldExports, store: SnapshotStore | null): Checkpoints {
  const counter = { inc: () => undefined };
  return new Checkpoints(
    {
      checkpointMinIntervalMs: 0,
      checkpointEverySteps: 10,
      checkpointMemoryBytes: 1 << 20,
    } as Partial<Config> as Config,
    {
      checkpoints: counter,
      checkpointFailures: counter,
    } as Partial<ServerMetrics> as ServerMetrics,
    pino({ level: "silent" }),
    store,
    { has: () => true, all: () => [] } as Partial<SessionTable> as SessionTable,
    calls as Partial<WorkerCalls> as WorkerCalls,
    () => false,
    () => null as ClusterHooks | null,
  );
}

/** Lets every pending promise callback run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("checkpoint loop", () => {
  it.each(["deleting", "lost"] as const)(
    "a session %s during an export, with a checkpoint asked for meanwhile: the loop ends once",
    async (flag) => {
      const calls = new HeldExports();
      const cps = checkpoints(calls, null);
      const rec = record();
      const loops = countLoops(cps);
      const first = cps.checkpoint(rec, true);
      await settle();
      expect(calls.count).toBe(1);
      rec.step = 5;
      void cps.checkpoint(rec, true); // taken by the loop under way, after its export
      rec[flag] = true; // lifecycle.ts remove(), recovery.ts: no checkpoint starts from here on
      calls.release();
      await first;
      await settle();
      expect(loops.count).toBe(1);
      expect(calls.count).toBe(1);
      expect(rec.checkpointing).toBeNull();
    },
  );

  it("without a store, a worker's checkpoint kept in memory does not block the next ones", async () => {
    const calls = new HeldExports();
    const cps = checkpoints(calls, null);
    const rec = record();
    rec.status = "running";
    rec.step = 10;
    const taken: WorkerCheckpoint = {
      engine: Buffer.from('{"step":10}'),
      session: {
        seq: 2,
        status: "running",
        message: null,
        time: 0.01,
        step: 10,
        dt: 1e-3,
        run: null,
      },
    };
    cps.taken(rec, taken);
    await settle();
    expect(rec.memory?.step).toBe(10);
    expect(rec.checkpointing).toBeNull();
    // the run stops at step 13: its checkpoint is exported and kept
    rec.status = "paused";
    rec.step = 13;
    const urgent = cps.checkpoint(rec, true);
    await settle();
    expect(calls.count).toBe(1);
    calls.release();
    await urgent;
    expect(rec.memory?.step).toBe(13);
    expect(rec.memory?.status).toBe("paused");
    expect(rec.checkpointing).toBeNull();
  });
});

/** Counts the checkpoint loop's passes (the private `loop`, wrapped). */
function countLoops(cps: Checkpoints): { count: number } {
  const counted = { count: 0 };
  const target = cps as unknown as { loop: (rec: SessionRecord, due: boolean) => Promise<void> };
  const loop = target.loop.bind(cps);
  target.loop = (rec, due) => {
    counted.count++;
    return loop(rec, due);
  };
  return counted;
}
