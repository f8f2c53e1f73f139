/**
 * A session manager in the test's own process, for the tests of checkpoint scheduling:
 * one worker, checkpoints to `store` (a CheckpointStore subclass that records its writes)
 * in `dir`, every `checkpointEverySteps` steps and at most once per
 * `checkpointMinIntervalMs`; metrics that report nothing. The caller stops it (stop()).
 */
import type { Logger } from "pino";
import { type ConfigInput, resolveConfig } from "../../src/server/config";
import { noSessionsByStatus, ServerMetrics } from "../../src/server/metrics";
import type { CheckpointStore } from "../../src/server/persistence";
import { SessionManager } from "../../src/server/session-manager";

export async function startOneWorkerManager(
  dir: string,
  store: CheckpointStore,
  log: Logger,
  checkpointEverySteps: number,
  checkpointMinIntervalMs: number,
  /** more settings (testHooks: to kill its worker) */
  more: ConfigInput = {},
): Promise<SessionManager> {
  const config = resolveConfig({
    workers: 1,
    dataDir: dir,
    checkpointEverySteps,
    checkpointMinIntervalMs,
    ...more,
  });
  const metrics = new ServerMetrics({
    sessionsByStatus: noSessionsByStatus,
    wsClients: () => 0,
    workersAlive: () => 1,
  });
  const m = new SessionManager(config, metrics, log, { store });
  await m.start();
  return m;
}
