/**
 * A restart (DATA_DIR) resumes the runs its checkpoints hold, with the worker-loss rebuild's
 * guard (sessions/recovery.ts resumeRestored): a run resumed by a restart whose process then
 * dies within 60 s comes back paused, its message saying why — a run that takes the process
 * down must not do it at every start. Until 2026-12-07 every restart resumed it: a crash loop.
 *
 * Server processes (test/support/process.ts) on one DATA_DIR, killed with SIGKILL (nothing of
 * them runs after it) as a run that crashes the process would be:
 * - killed while running (its file at the run's checkpoint of step K = 50): the next start
 *   resumes the run, and its checkpoint file records when (`run.resumedAt`) before the run
 *   goes on;
 * - killed again at once: the next start restores it paused, the file without the run, its
 *   message naming the cause; the ball where moreau-jean θ = 1/2 (exact for a constant
 *   acceleration) puts it at the restored step n: v_z = −g n h, z = z0 − ½ g (n h)²;
 * - a client's POST /run is a new run: killed, it is resumed by the next start;
 * - a graceful stop (SIGTERM) within the window is no death: the next start resumes it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { dataDirServers } from "../support/data-dir";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const { dataDir, spawn, crash } = dataDirServers("moreau-resume-guard-");

const H = 0.005;
const G = 9.81;
const Z0 = 10;
/** A run's body, and the run its checkpoint file holds. */
const RUN = { realtimeFactor: 0.5 };
const HELD = { realtimeFactor: 0.5, until: null };

const start = () =>
  spawn({ CHECKPOINT_EVERY_STEPS: "50", CHECKPOINT_MIN_INTERVAL_MS: "0" }, { timeoutMs: 120_000 });

/** The session's checkpoint file: its status and step, and the run it holds (if any). */
function fileOf(id: string) {
  const f = JSON.parse(readFileSync(join(dataDir, "sessions", `${id}.json`), "utf8"));
  return {
    status: f.snapshot.session.status as string,
    step: f.snapshot.simulation.step as number,
    run: f.run as { realtimeFactor: number; until: null; resumedAt?: number } | undefined,
  };
}

it("a run resumed by a restart whose process dies within 60 s comes back paused; a client's run and a graceful stop start the count again", async () => {
  const s1 = await start();
  let r = await s1.call("POST", "/v1/sessions", { model: fallingBody({ z0: Z0 }) });
  expect(r.status, r.text).toBe(201);
  const id = r.body.id as string;
  r = await s1.call("POST", `/v1/sessions/${id}/run`, RUN);
  expect(r.status, r.text).toBe(202);
  expect(fileOf(id).run).toEqual(HELD);
  // past its first K-step checkpoint: the file holds it running
  const held = await waitFor(() => {
    const f = fileOf(id);
    return f.step >= 50 && f;
  }, 60_000);
  expect([held.status, held.step % 50, held.run]).toEqual(["running", 0, HELD]);
  await crash(s1);

  // first death: resumed, and when is in the file before the run goes on
  const before = Date.now();
  const s2 = await start();
  let q = (await s2.call("GET", `/v1/sessions/${id}`)).body;
  expect([q.status, q.run?.realtimeFactor, q.message]).toEqual(["running", 0.5, null]);
  const resumedAt = fileOf(id).run?.resumedAt as number;
  expect(resumedAt).toBeGreaterThanOrEqual(before);
  expect(resumedAt).toBeLessThanOrEqual(Date.now());
  await crash(s2);

  // second death within 60 s of that resume: paused, said, and the file holds no run
  const s3 = await start();
  q = (await s3.call("GET", `/v1/sessions/${id}`)).body;
  expect([q.status, q.run]).toEqual(["paused", null]);
  expect(q.message).toMatch(
    /its run was not resumed, the server having stopped without a shutdown within 60 s of the restart that resumed it \(.+\) \(POST \/run resumes it\)/,
  );
  expect(fileOf(id)).toEqual({ status: "paused", step: q.step });
  const s = (await s3.call("GET", `/v1/sessions/${id}/state`)).body;
  const ball = s.bodies.find((b: { id: string }) => b.id === "ball");
  const n = s.step as number;
  expect(n).toBe(q.step);
  expect(ball.velocity[2]).toBeCloseTo(-G * n * H, 9);
  expect(ball.position[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
  // it stays paused
  expect((await s3.call("GET", `/v1/sessions/${id}`)).body.step).toBe(n);

  // a client's run is a new run: its first death is resumed
  r = await s3.call("POST", `/v1/sessions/${id}/run`, RUN);
  expect(r.status, r.text).toBe(202);
  expect(fileOf(id).run).toEqual(HELD);
  await crash(s3);
  const s4 = await start();
  q = (await s4.call("GET", `/v1/sessions/${id}`)).body;
  expect([q.status, q.run?.realtimeFactor]).toEqual(["running", 0.5]);
  expect(fileOf(id).run?.resumedAt).toBeGreaterThan(resumedAt);

  // a graceful stop within the window is not a death: the next start resumes the run
  expect(await s4.stop()).toBe(0);
  expect(fileOf(id).run).toEqual(HELD);
  const s5 = await start();
  q = (await s5.call("GET", `/v1/sessions/${id}`)).body;
  expect([q.status, q.run?.realtimeFactor, q.message]).toEqual(["running", 0.5, null]);
  await crash(s5);
}, 600_000);
