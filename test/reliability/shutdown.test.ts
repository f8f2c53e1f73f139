/**
 * SIGTERM (issue 26, item 4), on the compiled server as production runs it:
 * - `npm start` builds dist/ and runs node on it directly: a SIGTERM to npm reaches the
 *   server, which shuts down gracefully (exit 0) — no server left orphaned;
 * - `node dist/main.js` with DATA_DIR, a long step request in flight: SIGTERM checkpoints
 *   every session first (the acknowledged steps are on disk), the request still running at
 *   SHUTDOWN_TIMEOUT_MS is answered 503 `shutting_down`, and the process exits 0 soon after;
 *   a restart finds the session at (or past) its acknowledged step.
 * Bounded: ~20 s, loopback only.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { springParticle } from "../support/models";
import { ROOT, type ServerProcess, spawnServer } from "../support/process";
import { sleep, waitFor } from "../support/wait";

const run = promisify(execFile);
const servers: ServerProcess[] = [];
const dataDir = mkdtempSync(join(tmpdir(), "moreau-shutdown-"));

afterAll(() => {
  for (const s of servers) s.kill();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts `command` in the repository (LOG_LEVEL info) and waits for its start-up line. */
async function start(command: string[], env: Record<string, string>) {
  const s = await spawnServer({ LOG_LEVEL: "info", ...env }, { command, startLine: true });
  servers.push(s);
  return { ...s, pid: s.started?.pid as number };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  // the test below runs dist/ directly; `npm start` (first test) builds it too
  await run("npm", ["run", "build", "--silent"], { cwd: ROOT, timeout: 60_000 });
}, 60_000);

it("`npm start` runs node on the compiled server and forwards SIGTERM: exit 0, nothing orphaned", async () => {
  const s = await start(["npm", "start"], {});
  expect(s.pid).not.toBe(s.child.pid); // npm's child, not npm
  expect((await s.call("GET", "/health")).status).toBe(200);
  // a session stepped by a worker thread running compiled JavaScript
  const id = (await s.call("POST", "/v1/sessions", { model: springParticle() })).body.id;
  expect((await s.call("POST", `/v1/sessions/${id}/step`, { steps: 10 })).body.step).toBe(10);
  s.child.kill("SIGTERM");
  expect(await s.exited).toBe(0);
  expect(s.lines.some((l) => l.msg === "shut down")).toBe(true);
  await waitFor(async () => !alive(s.pid), 5000);
}, 60_000);

it("SIGTERM during a long step: checkpoint first, 503 shutting_down at SHUTDOWN_TIMEOUT_MS, exit 0", async () => {
  const env = {
    DATA_DIR: dataDir,
    CHECKPOINT_EVERY_STEPS: "0", // checkpoints only at creation, pause and shutdown
    SHUTDOWN_TIMEOUT_MS: "3000",
    REQUEST_TIMEOUT_MS: "60000",
    MAX_STEPS_PER_REQUEST: "1000000000000",
  };
  const s = await start([process.execPath, "--enable-source-maps", "dist/main.js"], env);
  const id = (
    await s.call("POST", "/v1/sessions", { model: springParticle({ dt: 1e-6, name: "long" }) })
  ).body.id as string;
  const acked = await s.call("POST", `/v1/sessions/${id}/step`, { steps: 500 });
  expect(acked.status).toBe(200);
  expect(acked.body.step).toBe(500);

  // a step request that would run for hours
  const t0 = performance.now();
  const long = s.call("POST", `/v1/sessions/${id}/step`, { steps: 1e11 });
  await sleep(300);
  const termAt = performance.now();
  s.child.kill("SIGTERM");
  let answered = false;
  void long.then(() => {
    answered = true;
  });
  // checkpointed first: the acknowledged steps reach the disk while the request still runs
  const file = join(dataDir, "sessions", `${id}.json`);
  const onDisk = () => {
    try {
      return JSON.parse(readFileSync(file, "utf8")).snapshot.simulation.step as number;
    } catch {
      return -1;
    }
  };
  await waitFor(async () => answered || onDisk() >= 500, 20_000, 5);
  const first = onDisk();
  expect(first).toBeGreaterThanOrEqual(500);
  expect(answered).toBe(false);
  const answer = await long;
  const answeredMs = performance.now() - termAt;
  expect(answer.status).toBe(503);
  expect(answer.body.error).toBe("shutting_down");
  expect(answer.body.message).toMatch(/SHUTDOWN_TIMEOUT_MS \(3000 ms\)/);
  // answered at the shutdown timeout, not at the request's own deadline (60 s)
  expect(answeredMs).toBeGreaterThan(2900);
  expect(answeredMs).toBeLessThan(30_000);
  expect(await s.exited).toBe(0);
  expect(performance.now() - t0).toBeLessThan(45_000);

  // the checkpoint holds every acknowledged step (and the steps done since)
  const saved = JSON.parse(readFileSync(file, "utf8")).snapshot.simulation.step as number;
  expect(saved).toBeGreaterThanOrEqual(first);

  // and a restart finds the session there
  const s2 = await start([process.execPath, "dist/main.js"], env);
  const back = await s2.call("GET", `/v1/sessions/${id}`);
  expect(back.status).toBe(200);
  expect(back.body.step).toBe(saved);
  s2.child.kill("SIGTERM");
  expect(await s2.exited).toBe(0);
}, 60_000);
