/**
 * The pool's watchdog times the worker's own time on a request, from when the worker says
 * it starts on it, never the time it waited behind other messages: legal requests queued
 * on one worker (each well within REQUEST_TIMEOUT_MS + grace, together well past it) are
 * all answered and the worker is kept — it had been restarted, its sessions lost, because
 * the timer ran from the moment the request was posted. A worker whose loop stays blocked
 * past the limit is still replaced, and its requests answer `timeout`.
 */
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/server/config";
import { ApiError } from "../../src/server/errors";
import { WorkerPool } from "../../src/server/worker-pool";
import { fallingBody } from "../support/models";

let pool: WorkerPool | null = null;

afterEach(async () => {
  await pool?.close();
  pool = null;
});

async function start(requestTimeoutMs: number, lost: string[]): Promise<WorkerPool> {
  pool = new WorkerPool(
    resolveConfig({ workers: 1, requestTimeoutMs, testHooks: true }),
    { onEvent: () => {}, onWorkerLost: (_w, reason) => lost.push(reason) },
    pino({ level: "silent" }),
  );
  await pool.start();
  return pool;
}

describe("the watchdog", () => {
  it("does not count the time a request waits behind others: three 800 ms computations queued on one worker (limit 500 + 1000 ms) are all answered", async () => {
    const lost: string[] = [];
    const p = await start(500, lost);
    const block = () => p.request(0, { kind: "test", hook: { action: "block", ms: 800 } });
    const open = p.request(0, {
      kind: "open",
      sessionId: "s",
      body: Buffer.from(JSON.stringify({ model: fallingBody() })),
      maxBodies: 100,
    });
    // posted at once: the third waits 1.6 s, the open 2.4 s, before the worker starts on them
    const answers = await Promise.allSettled([block(), block(), block(), open]);
    expect(answers.map((a) => a.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "fulfilled",
    ]);
    expect(lost).toEqual([]);
    expect(p.alive).toBe(1);
    // the same worker still holds the session
    const state = await p.request(0, { kind: "state", sessionId: "s" });
    expect(state.result.kind).toBe("state");
  });

  it("replaces a worker whose loop stays blocked past the limit; its requests answer timeout", async () => {
    const lost: string[] = [];
    const p = await start(200, lost);
    const t0 = performance.now();
    // its own request may take a minute: what counts is the worker's loop, blocked 5 s
    const blocked = p
      .request(0, { kind: "test", hook: { action: "block", ms: 5000 } }, 60_000)
      .then(
        () => null,
        (e: unknown) => e,
      );
    const queued = p.request(0, { kind: "state", sessionId: "none" }).then(
      () => null,
      (e: unknown) => e,
    );
    const [b, q] = await Promise.all([blocked, queued]);
    const ms = performance.now() - t0;
    for (const e of [b, q]) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).code).toBe("timeout");
      expect((e as ApiError).message).toMatch(/has not returned to its event loop .*restarted/);
    }
    expect((b as ApiError).message).toMatch(/did not answer a test request/);
    expect((q as ApiError).message).toMatch(
      /did not answer a state request \(before starting on it\)/,
    );
    // 200 ms + grace max(1 s, 100 ms): replaced before the block ended by itself
    expect(ms).toBeGreaterThan(1150);
    expect(ms).toBeLessThan(4900);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatch(/working on a test request/);
  });
});
