/**
 * A session's commands take effect in the order they were received (records.ts inTurn).
 * A run's 202 waits for a checkpoint holding the run, taken before the run starts; a pause
 * received meanwhile was answered before the run started (a no-op on a session not running
 * yet), and the run then started: the session ran on although its pause was answered after
 * the run. So did a reset received after a run (the run then started from t = 0).
 *
 * Each repetition calls the session manager's run and, without awaiting it, its pause (or
 * reset) — the order the routes call them in as the requests are received — then reads the
 * session: paused at the step the pause answered (ready at step 0 after a reset), and the
 * state there the falling ball's under moreau-jean's default θ = 1/2, exact for a constant
 * acceleration: after n steps of h, v_z = −g n h and z = z0 − ½ g (n h)². With DATA_DIR the
 * checkpoint file says the same, and holds no run. Without it the window was the export of
 * the run's checkpoint (held in memory), with it that export and the write.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/server/config";
import { noSessionsByStatus, ServerMetrics } from "../../src/server/metrics";
import { CheckpointStore } from "../../src/server/persistence";
import { SessionManager } from "../../src/server/session-manager";
import { fallingBody } from "../support/models";

const H = 0.005;
const G = 9.81;
const Z0 = 10;
/** Repetitions of each pair: before the fix the first already failed. */
const ROUNDS = 25;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function manager(dataDir: string | null): Promise<SessionManager> {
  const log = pino({ level: "silent" });
  const config = resolveConfig({
    workers: 1,
    ...(dataDir ? { dataDir } : {}),
    checkpointEverySteps: 50,
    checkpointMinIntervalMs: 0,
  });
  const metrics = new ServerMetrics({
    sessionsByStatus: noSessionsByStatus,
    wsClients: () => 0,
    workersAlive: () => 1,
  });
  const store = dataDir ? new CheckpointStore(dataDir, log) : null;
  const m = new SessionManager(config, metrics, log, { store });
  await m.start();
  return m;
}

interface Ball {
  step: number;
  v: number[];
  x: number[];
}

async function ball(m: SessionManager, id: string): Promise<Ball> {
  const s = JSON.parse(Buffer.from(await m.state(id)).toString("utf8"));
  const b = s.bodies.find((x: { id: string }) => x.id === "ball");
  return { step: s.step, v: b.velocity, x: b.position };
}

/** The falling ball at step n: v_z = −g n h, z = z0 − ½ g (n h)². */
function expectFallen(b: Ball, n: number) {
  expect(b.step).toBe(n);
  expect(b.v[2]).toBeCloseTo(-G * n * H, 9);
  expect(b.x[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
}

/** The checkpoint file of session `id`: its status, its step, and whether it holds a run. */
function fileOf(dir: string, id: string) {
  const f = JSON.parse(readFileSync(join(dir, "sessions", `${id}.json`), "utf8"));
  return { status: f.snapshot.session.status, step: f.snapshot.simulation.step, run: f.run };
}

describe.each([
  ["with DATA_DIR", true],
  ["without DATA_DIR", false],
])("commands in the order received, %s", (_, persisted) => {
  it(`a pause received after a run (not awaited): paused at its answer's step, ${ROUNDS} times`, async () => {
    const dir = persisted ? mkdtempSync(join(tmpdir(), "moreau-order-")) : null;
    if (dir) dirs.push(dir);
    const m = await manager(dir);
    try {
      const { id } = await m.create({ model: fallingBody() });
      for (let i = 0; i < ROUNDS; i++) {
        const run = m.run(id, null, null);
        const pause = m.pause(id);
        const [ran, paused] = await Promise.all([run, pause]);
        expect(ran.status, `round ${i}: the run's answer`).toBe("running");
        expect(paused.status, `round ${i}: the pause's answer`).toBe("paused");
        const now = m.get(id);
        expect([now.status, now.step], `round ${i}`).toEqual(["paused", paused.step]);
        expectFallen(await ball(m, id), paused.step);
        if (dir) expect(fileOf(dir, id)).toEqual({ status: "paused", step: paused.step });
      }
    } finally {
      await m.close();
    }
  }, 120_000);

  it(`a reset received after a run (not awaited): ready at step 0, ${ROUNDS} times`, async () => {
    const dir = persisted ? mkdtempSync(join(tmpdir(), "moreau-order-")) : null;
    if (dir) dirs.push(dir);
    const m = await manager(dir);
    try {
      const { id } = await m.create({ model: fallingBody() });
      for (let i = 0; i < ROUNDS; i++) {
        // from a step past 0, so that the reset's effect shows
        await m.step(id, { steps: 7 });
        const run = m.run(id, null, null);
        const reset = m.reset(id);
        const [ran] = await Promise.all([run, reset]);
        expect(ran.status, `round ${i}: the run's answer`).toBe("running");
        const now = m.get(id);
        expect([now.status, now.step, now.run], `round ${i}`).toEqual(["ready", 0, null]);
        expectFallen(await ball(m, id), 0);
        if (dir) expect(fileOf(dir, id)).toEqual({ status: "ready", step: 0 });
      }
    } finally {
      await m.close();
    }
  }, 120_000);
});
