/**
 * The worker pool's request path: a request that cannot be posted to a worker (its body
 * does not survive the structured clone) is answered 400 at once and leaves nothing
 * behind: no pending entry, no watchdog timer that would later restart the worker and
 * lose its sessions. The same worker then serves the next request.
 */
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/server/config";
import { ApiError } from "../../src/server/errors";
import { WorkerPool } from "../../src/server/worker-pool";
import { fallingBody } from "../support/models";
import { sleep } from "../support/wait";

let pool: WorkerPool;
const lost: string[] = [];

beforeAll(async () => {
  pool = new WorkerPool(
    resolveConfig({ workers: 1 }),
    { onEvent: () => {}, onWorkerLost: (_w, reason) => lost.push(reason) },
    pino({ level: "silent" }),
  );
  await pool.start();
});

afterAll(async () => {
  await pool.close();
});

describe("WorkerPool.request", () => {
  it("a body the structured clone refuses: 400 invalid_request, nothing pending, the worker kept", async () => {
    const snapshot = { note: () => "functions do not clone" };
    const failure = await pool
      .request(
        0,
        {
          kind: "restore",
          sessionId: "unclonable",
          name: "unclonable",
          snapshot,
          status: "ready",
          message: null,
        },
        200,
      )
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(ApiError);
    expect((failure as ApiError).code).toBe("invalid_request");
    expect((failure as ApiError).message).toMatch(/could not be sent to a solver worker/);
    // past the request's timeout and the watchdog grace (200 + 1000 ms) nothing fires
    await sleep(1300);
    expect(lost).toEqual([]);
    expect(pool.alive).toBe(1);
    const answer = await pool.request(0, {
      kind: "open",
      sessionId: "ok",
      body: Buffer.from(JSON.stringify({ model: fallingBody() })),
      maxBodies: 100,
    });
    expect(answer).toBeDefined();
  });
});
