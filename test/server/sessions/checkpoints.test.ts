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
 *
 * And the hold of a run at its checkpoint (issue 32's "at most K steps lost"): the run that
 * took a checkpoint goes on only once the store has it — not while the write is under way
 * (a node killed then had answered and streamed K steps past it, losing up to 2K) — and
 * at once when the write fails or is deferred by CHECKPOINT_MIN_INTERVAL_MS, so no run is
 * ever left waiting.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ClusterHooks } from "../../../src/server/cluster/hooks";
import type { SnapshotStore } from "../../../src/server/cluster/ports";
import type { Config } from "../../../src/server/config";
import type { ServerMetrics } from "../../../src/server/metrics";
import {
  Checkpoints,
  engineSnapshotBytes,
  sessionDocument,
} from "../../../src/server/sessions/checkpoints";
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
    runResumedAt: null,
    savedStep: null,
    persisted: false,
    memory: null,
    lastCheckpointStep: 0,
    lastCheckpointStatus: "paused",
    lastCheckpointAt: 0,
    checkpointing: null,
    checkpointWanted: false,
    checkpointUrgent: false,
    checkpointWaiters: [],
    checkpointTimer: null,
    workerCheckpoint: null,
    runHeldAt: null,
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
  /** the steps the session's worker was told the store holds (`kept` notices) */
  kept: (number | null)[] = [];
  tellKept(rec: SessionRecord): void {
    this.kept.push(rec.savedStep);
  }
}

/** The runs let go on, as (session, step) of the `checkpointed` notices. */
type Released = { session: string; step: number }[];

function checkpoints(
  calls: HeldExports,
  store: SnapshotStore | null,
  released: Released = [],
  checkpointMinIntervalMs = 0,
  checkpointMemoryBytes = 1 << 20,
): Checkpoints {
  const counter = { inc: () => undefined };
  return new Checkpoints(
    {
      checkpointMinIntervalMs,
      checkpointEverySteps: 10,
      checkpointMemoryBytes,
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
    (rec, step) => released.push({ session: rec.id, step }),
  );
}

/** A store whose writes wait until the test settles them (ok or failed); it keeps the last. */
class HeldStore implements Partial<SnapshotStore> {
  private waiting: ((ok: boolean) => void)[] = [];
  written: string[] = [];
  write(_id: string, _owner: string | null, document: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push((ok) => {
        if (!ok) return reject(new Error("disk full"));
        this.written.push(Buffer.from(document).toString("utf8"));
        resolve();
      });
    });
  }
  get pending(): number {
    return this.waiting.length;
  }
  settle(ok: boolean): void {
    for (const done of this.waiting.splice(0)) done(ok);
  }
}

/** A running session's checkpoint its worker took at `step` (its engine snapshot `engine`). */
function workerCheckpoint(
  step: number,
  seq: number,
  engine: WorkerCheckpoint["engine"] = Buffer.from(`{"step":${step}}`),
): WorkerCheckpoint {
  return {
    engine,
    session: {
      seq,
      status: "running",
      message: null,
      time: step * 1e-3,
      step,
      dt: 1e-3,
      run: null,
      recordedInputs: 0,
    },
  };
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
        recordedInputs: 0,
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

describe("the answers a checkpoint acknowledges (group commit)", () => {
  /** The steps of the session documents the store has written, in order. */
  const steps = (store: HeldStore) => store.written.map((d) => JSON.parse(d).session.step);

  it("each settles once the pass exported after it is written, not when the loop ends", async () => {
    const calls = new HeldExports();
    const store = new HeldStore();
    const cps = checkpoints(calls, store as Partial<SnapshotStore> as SnapshotStore);
    const rec = record();
    const done: string[] = [];
    rec.step = 1;
    void cps.acknowledge(rec).then(() => done.push("a"));
    await settle();
    calls.release(); // pass 1 exports step 1 and writes it
    await settle();
    expect(store.pending).toBe(1);
    // two changes while that write is under way: the next pass keeps both
    rec.step = 2;
    void cps.acknowledge(rec).then(() => done.push("b"));
    rec.step = 3;
    void cps.acknowledge(rec).then(() => done.push("c"));
    await settle();
    expect(done).toEqual([]);
    store.settle(true);
    await settle();
    // a's change is kept; b's and c's are not yet (before: a waited for the loop's end, the
    // writes for b and c too — a controller's answers waited as long as it kept sending)
    expect(done).toEqual(["a"]);
    expect(calls.count).toBe(2);
    calls.release();
    await settle();
    expect(store.pending).toBe(1);
    expect(done).toEqual(["a"]);
    store.settle(true);
    await settle();
    expect(done).toEqual(["a", "b", "c"]);
    // one write for a, one for b and c
    expect(steps(store)).toEqual([1, 3]);
    expect(rec.checkpointing).toBeNull();
  });

  it("a failed write settles its callers (the change in effect, the failure reported)", async () => {
    const calls = new HeldExports();
    const store = new HeldStore();
    const cps = checkpoints(calls, store as Partial<SnapshotStore> as SnapshotStore);
    const rec = record();
    rec.step = 4;
    let answered = false;
    void cps.acknowledge(rec).then(() => {
      answered = true;
    });
    await settle();
    calls.release();
    await settle();
    store.settle(false);
    await settle();
    expect(answered).toBe(true);
    expect(rec.persisted).toBe(false);
    expect(cps.persistence?.ok).toBe(false);
    expect(rec.checkpointing).toBeNull();
  });
});

describe("checkpoints held in memory", () => {
  // a large engine snapshot is a view into an ArrayBuffer with 4096 bytes of room before it
  // and 1 after (engineSnapshotBytes): the checkpoint keeps the whole buffer alive
  const engine = engineSnapshotBytes({ bodies: "x".repeat(100_000) });
  const length = engine.byteLength; // 100 013 bytes of JSON
  const taken = (step: number) => workerCheckpoint(step, 2, engine);

  it("count the snapshot's whole buffer, its room included, against CHECKPOINT_MEMORY_BYTES", async () => {
    expect(engine.buffer.byteLength).toBe(length + 4096 + 1);
    const cps = checkpoints(new HeldExports(), null);
    const rec = record();
    rec.status = "running";
    rec.step = 10;
    cps.taken(rec, taken(10));
    await settle();
    expect(rec.memory?.step).toBe(10);
    expect(cps.bytesInMemory).toBe(length + 4097);
    cps.forget(rec);
    expect(cps.bytesInMemory).toBe(0);
  });

  it("a budget of the snapshot's JSON length alone does not hold it (4097 bytes short)", async () => {
    const cps = checkpoints(new HeldExports(), null, [], 0, length);
    const rec = record();
    rec.status = "running";
    rec.step = 10;
    cps.taken(rec, taken(10));
    await settle();
    expect(rec.memory).toBeNull();
    expect(cps.bytesInMemory).toBe(0);
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

describe("a run held at its checkpoint", () => {
  it.each([
    { ok: true, persisted: true },
    { ok: false, persisted: false },
  ])(
    "goes on once the store's write is done (write ok: $ok), not while it is under way",
    async ({ ok, persisted }) => {
      const store = new HeldStore();
      const released: Released = [];
      const calls = new HeldExports();
      const cps = checkpoints(calls, store as unknown as SnapshotStore, released);
      const rec = record();
      rec.status = "running";
      rec.step = 10;
      cps.taken(rec, workerCheckpoint(10, 2));
      await settle();
      expect(store.pending).toBe(1);
      expect(rec.memory?.step).toBe(10); // kept in memory before the write
      await settle();
      expect(released).toEqual([]);
      expect(calls.kept).toEqual([]);
      store.settle(ok);
      await settle();
      expect(released).toEqual([{ session: "s", step: 10 }]);
      // the worker's frames carry the step once the store has it, not before nor after a failure
      expect(calls.kept).toEqual(ok ? [10] : []);
      expect(rec.persisted).toBe(persisted);
      expect(store.written.length).toBe(ok ? 1 : 0);
      expect(rec.checkpointing).toBeNull();
      expect(rec.runHeldAt).toBeNull();
    },
  );

  it("without a store, goes on once the checkpoint is kept in memory", async () => {
    const released: Released = [];
    const cps = checkpoints(new HeldExports(), null, released);
    const rec = record();
    rec.status = "running";
    rec.step = 20;
    cps.taken(rec, workerCheckpoint(20, 2));
    await settle();
    expect(rec.memory?.step).toBe(20);
    expect(released).toEqual([{ session: "s", step: 20 }]);
  });

  it("goes on at once when CHECKPOINT_MIN_INTERVAL_MS defers the write (the latest k·K is written later)", async () => {
    const store = new HeldStore();
    const released: Released = [];
    const cps = checkpoints(new HeldExports(), store as unknown as SnapshotStore, released, 60_000);
    const rec = record();
    rec.status = "running";
    rec.step = 30;
    rec.lastCheckpointAt = Date.now(); // a checkpoint just now: the next waits a minute
    cps.taken(rec, workerCheckpoint(30, 2));
    expect(released).toEqual([{ session: "s", step: 30 }]);
    await settle();
    expect(store.pending).toBe(0);
    expect(rec.workerCheckpoint?.session.step).toBe(30); // still to be written, deferred
    cps.clearTimer(rec);
  });

  it("an export that supersedes the held checkpoint lets the run go on once the export is written", async () => {
    const calls = new HeldExports();
    const store = new HeldStore();
    const released: Released = [];
    const cps = checkpoints(calls, store as unknown as SnapshotStore, released);
    const rec = record();
    rec.status = "running";
    rec.step = 40;
    // a request's checkpoint is under way (its export) when the worker's of step 40 arrives
    const asked = cps.checkpoint(rec, true);
    await settle();
    expect(calls.count).toBe(1);
    cps.taken(rec, workerCheckpoint(40, 2));
    rec.seq = 3; // the export is answered after it: it supersedes the worker's
    calls.release();
    await settle();
    expect(store.pending).toBe(1);
    expect(released).toEqual([]);
    store.settle(true);
    await asked;
    await settle();
    expect(released).toEqual([{ session: "s", step: 40 }]);
    expect(store.written.length).toBe(1);
  });
});

describe("sessionDocument", () => {
  const simulation = { step: 7, bodies: Array.from({ length: 3000 }, (_, i) => [i, -i / 3, "é"]) };
  const at = { status: "paused" as const, message: null, time: 0.5, step: 7 };
  const parse = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

  it("writes a large snapshot's head and tail in its room; copies when there is none or the head does not fit", () => {
    const big = engineSnapshotBytes(simulation);
    expect(big.byteLength).toBeGreaterThan(64 * 1024);
    const small = engineSnapshotBytes({ step: 7 });
    const cases = [
      { engine: big, name: "cloth", inPlace: true },
      // a name longer than the room (4096 bytes): a new buffer, the snapshot untouched
      { engine: big, name: "ü".repeat(3000), inPlace: false },
      { engine: small, name: "cloth", inPlace: false },
    ];
    for (const c of cases) {
      const before = Uint8Array.from(c.engine);
      const rec = { ...record(), name: c.name, ...at };
      const doc = sessionDocument(rec, c.engine, at);
      expect(doc.buffer === c.engine.buffer).toBe(c.inPlace);
      expect(c.engine).toEqual(before);
      const parsed = parse(doc);
      expect(parsed.simulation).toEqual(parse(c.engine));
      expect(parsed.session).toMatchObject({ id: "s", name: c.name, status: "paused", step: 7 });
    }
  });
});
