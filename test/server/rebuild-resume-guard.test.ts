/**
 * A run resumed by a worker-loss rebuild has the time of that resume written with it in its
 * checkpoint before it goes on (RunAt.resumedAt, as a restart's resume writes it:
 * restart-resume-guard.test), so a process that dies within 60 s of it — a run that kills
 * its worker and then the process — comes back paused at the next start, its message
 * saying why, instead of being resumed at every start (until 2026-12-07 the rebuild's
 * resume left no time, the count of losses died with the process, and every start resumed
 * the run: a crash loop).
 *
 * In process: a server on a DATA_DIR of its own (checkpoints every K = 50 steps), its run
 * past step 50, its worker killed (testHooks); once the run is resumed, the directory is
 * copied as the process's death would leave it, and a second server started on the copy.
 * The ball restored paused is where moreau-jean θ = 1/2 (exact for a constant acceleration)
 * puts it at the restored step n: v_z = −g n h, z = z0 − ½ g (n h)².
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, expect, it } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;

const dirs: string[] = [];
const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "moreau-rebuild-guard-"));
  dirs.push(d);
  return d;
};

async function server(dataDir: string): Promise<MoreauApp> {
  const app = await buildApp({
    workers: 1,
    logLevel: "silent",
    testHooks: true,
    dataDir,
    checkpointEverySteps: 50,
    checkpointMinIntervalMs: 0,
  });
  await app.ready();
  apps.push(app);
  return app;
}

/** The session's checkpoint file: its status and step, and the run it holds (if any). */
function fileOf(dataDir: string, id: string) {
  const f = JSON.parse(readFileSync(join(dataDir, "sessions", `${id}.json`), "utf8"));
  return {
    status: f.snapshot.session.status as string,
    step: f.snapshot.simulation.step as number,
    run: f.run as { realtimeFactor: number; until: null; resumedAt?: number } | undefined,
  };
}

it("a run resumed by a worker-loss rebuild whose process then dies within 60 s comes back paused", async () => {
  const first = dir();
  const s1 = await server(first);
  const made = await request(s1.server)
    .post("/v1/sessions")
    .send({ model: fallingBody({ z0: Z0 }) })
    .expect(201);
  const id = made.body.id as string;
  await request(s1.server).post(`/v1/sessions/${id}/run`).send({ realtimeFactor: 0.5 }).expect(202);
  // past its first K-step checkpoint: the file holds it running, resumed by no one yet
  await waitFor(() => fileOf(first, id).step >= 50, 60_000);
  expect(fileOf(first, id).run).toEqual({ realtimeFactor: 0.5, until: null });

  const lostAt = Date.now();
  await s1.moreau.sessions.pool.killForTest(0);
  // rebuilt from its checkpoint, its run resumed
  await waitFor(() => {
    const rec = s1.moreau.sessions.local(id);
    return rec !== undefined && !rec.lost && rec.rebuilding === null && rec.status === "running";
  }, 60_000);
  // the resume's time with the run in the file (before: no resumedAt)
  const resumedAt = fileOf(first, id).run?.resumedAt;
  expect(resumedAt).toBeGreaterThanOrEqual(lostAt);
  expect(resumedAt).toBeLessThanOrEqual(Date.now());

  // the process dies now: its directory as it is, a server started on it
  const second = dir();
  cpSync(first, second, { recursive: true });
  const kept = fileOf(second, id);
  const s2 = await server(second);
  const s = await waitFor(async () => {
    const r = await request(s2.server).get(`/v1/sessions/${id}`);
    return r.status === 200 && r.body.status !== "restoring" && r.body;
  }, 60_000);
  // before: 'running', resumed again (as at every start)
  expect(s.status).toBe("paused");
  expect(s.message).toContain("its run was not resumed");
  expect(s.step).toBe(kept.step);
  // its checkpoint without the run: the start after does not resume it either
  expect(fileOf(second, id).run).toBeUndefined();
  const state = (await request(s2.server).get(`/v1/sessions/${id}/state`).expect(200)).body as {
    step: number;
    bodies: { id: string; velocity: number[]; position: number[] }[];
  };
  const ball = state.bodies.find((b) => b.id === "ball");
  const n = state.step;
  expect(n).toBe(kept.step);
  expect(ball?.velocity[2]).toBeCloseTo(-G * n * H, 9);
  expect(ball?.position[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
}, 120_000);
