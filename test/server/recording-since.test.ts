/**
 * A session's recording says what started it (schemas/recording.ts `since`): each creation
 * (model, snapshot, recording), fork, reset, applied assembly and restore from the session's
 * own checkpoint starts a new one (the engine's log), and a recording restarted by a reset
 * under the model's parameters (start null, as a creation's) read exactly like one
 * covering the session's whole life: 5 steps and an impulse were gone without a trace.
 * Driven in process (a worker's runtime without its thread).
 */
import { afterEach, describe, expect, it } from "vitest";
import { SESSION_SNAPSHOT_FORMAT, SESSION_SNAPSHOT_VERSION } from "../../schemas/api";
import { Recording } from "../../schemas/recording";
import type { WorkerRequestBody } from "../../src/server/protocol";
import { fallingBody } from "../support/models";
import { InProcessWorker, type Reply } from "../support/worker-runtime";

let worker: InProcessWorker | null = null;

afterEach(() => {
  worker?.shutdown();
  worker = null;
});

const G = 9.81;
const DT = 0.005;
const json = (x: unknown) => Buffer.from(JSON.stringify(x));
const decode = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

async function call(body: WorkerRequestBody): Promise<Extract<Reply, { ok: true }>> {
  const r = await (worker as InProcessWorker).call(body);
  if (!r.ok) throw new Error(`${body.kind}: ${r.error.message}`);
  return r;
}

async function recording(sessionId: string) {
  const r = await call({ kind: "recording", sessionId, every: null, maxSteps: 1000 });
  if (r.result.kind !== "exported") throw new Error("no recording");
  return Recording.parse(decode(r.result.bytes));
}

async function exported(sessionId: string): Promise<Uint8Array> {
  const r = await call({ kind: "export", sessionId });
  if (r.result.kind !== "exported") throw new Error("no export");
  return r.result.bytes;
}

const impulse = (sessionId: string, vz: number) =>
  call({
    kind: "inputs",
    sessionId,
    inputs: [
      {
        type: "impulse",
        id: "ball",
        impulse: [0, 0, vz],
        point: [0, 0, 0],
        angularImpulse: [0, 0, 0],
      },
    ],
    step: null,
  });

const step = (sessionId: string, steps: number) =>
  call({ kind: "step", sessionId, steps, limitMs: 30_000 });

describe("a recording says what started it", () => {
  it("created, then reset: the reset's recording says so (its start null, as a creation's)", async () => {
    worker = new InProcessWorker();
    const t0 = Date.now();
    await call({
      kind: "open",
      sessionId: "s",
      body: json({ model: fallingBody() }),
      maxBodies: 10,
    });
    await impulse("s", 2);
    await step("s", 5);
    const first = await recording("s");
    expect(first.since?.cause).toBe("created");
    expect(Date.parse(first.since?.at ?? "")).toBeGreaterThanOrEqual(t0 - 1000);
    expect(first.inputs).toHaveLength(1);
    // v_z after 5 steps: 2 m/s up, less g·5·dt
    const s5 = await call({ kind: "state", sessionId: "s" });
    if (s5.result.kind !== "state") throw new Error("no state");
    expect(decode(s5.result.state).bodies[0].velocity[2]).toBeCloseTo(2 - G * 5 * DT, 12);
    await call({ kind: "reset", sessionId: "s" });
    const after = await recording("s");
    // before: the same document as a fresh creation's, nothing to tell them apart
    expect(after).toMatchObject({ start: null, inputs: [], end: { step: 0, time: 0 } });
    expect(after.since?.cause).toBe("reset");
  });

  it("a fork, the session's own checkpoint restored, a snapshot, a recording, an applied assembly", async () => {
    worker = new InProcessWorker();
    await call({
      kind: "open",
      sessionId: "s",
      body: json({ model: fallingBody() }),
      maxBodies: 10,
    });
    await impulse("s", 2);
    await step("s", 5);
    const engine = await exported("s");
    const restore = (sessionId: string, admit?: false) =>
      call({
        kind: "restore",
        sessionId,
        name: "fall",
        snapshot: engine,
        status: "ready",
        message: null,
        ...(admit === false ? { admit } : {}),
      });
    // a fork (a new session: admitted) and a restore of its own checkpoint (admit false:
    // a worker loss's rebuild, a restart, a takeover) both start at step 5 without the
    // impulse given at step 0
    await restore("f");
    await restore("r", false);
    for (const [id, cause] of [
      ["f", "fork"],
      ["r", "restored"],
    ] as const) {
      const rec = await recording(id);
      expect(rec.since?.cause).toBe(cause);
      expect(rec.start?.step).toBe(5);
      expect(rec.inputs).toEqual([]);
    }
    const document = {
      format: SESSION_SNAPSHOT_FORMAT,
      version: SESSION_SNAPSHOT_VERSION,
      session: { name: "fall", status: "ready", message: null },
      simulation: decode(engine),
    };
    await call({ kind: "open", sessionId: "d", body: json({ snapshot: document }), maxBodies: 10 });
    expect((await recording("d")).since?.cause).toBe("snapshot");
    const original = await recording("s");
    await call({
      kind: "open",
      sessionId: "p",
      body: json({ recording: original }),
      maxBodies: 10,
    });
    expect((await recording("p")).since?.cause).toBe("recording");
    await call({ kind: "assemble", sessionId: "s", options: {}, apply: true });
    expect((await recording("s")).since?.cause).toBe("assembly");
  });
});
