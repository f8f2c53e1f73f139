/**
 * Start-up has no time limit of Fastify's: the onReady hook starts the solver workers and
 * restores every session from DATA_DIR, which a loaded machine or many checkpoints make
 * longer than Fastify's default 10 s plugin timeout — a cluster node started at load 18 on
 * 2 cores exited "A callback for 'onReady' hook timed out" (test/cluster/cluster.test.ts).
 * Here the checkpoint folder takes 10.5 s to open (CheckpointStore.init delayed): the
 * server still becomes ready and answers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it, vi } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { CheckpointStore } from "../../src/server/persistence";
import { startApp } from "../support/server";
import { sleep } from "../support/wait";

const dataDir = mkdtempSync(join(tmpdir(), "moreau-start-"));
let app: MoreauApp | undefined;
afterAll(async () => {
  vi.restoreAllMocks();
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it("a start-up longer than Fastify's 10 s plugin timeout still ends ready", async () => {
  const init = CheckpointStore.prototype.init;
  vi.spyOn(CheckpointStore.prototype, "init").mockImplementation(async function (
    this: CheckpointStore,
  ) {
    await sleep(10_500);
    return init.call(this);
  });
  app = await startApp({ dataDir });
  const r = await app.inject({ method: "GET", url: "/ready" });
  expect(r.statusCode).toBe(200);
}, 30_000);
