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
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { springParticle, waitFor } from "../api/helpers";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const children: ChildProcess[] = [];
const dataDir = mkdtempSync(join(tmpdir(), "moreau-shutdown-"));

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  url: string;
  pid: number;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, PORT: "0", WORKERS: "1", LOG_LEVEL: "info" };
  for (const k of ["HOST", "API_KEY", "API_KEYS", "DATA_DIR", "NODE_OPTIONS"]) delete e[k];
  return { ...e, ...extra };
}

/** Starts `cmd args` in the repository and waits for the server's start-up line. */
async function start(cmd: string, args: string[], env: Record<string, string>): Promise<Server> {
  const child = spawn(cmd, args, {
    cwd: ROOT,
    env: baseEnv(env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  let buf = "";
  let text = "";
  child.stdout?.on("data", (d: Buffer) => {
    text += d.toString();
    buf += d.toString();
    const parts = buf.split("\n");
    buf = parts.pop() ?? "";
    for (const p of parts) if (p.startsWith("{")) lines.push(JSON.parse(p)); // npm prints its own lines too
  });
  child.stderr?.on("data", (d: Buffer) => {
    text += d.toString();
  });
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const started = await waitFor(
    async () => lines.find((l) => String(l.msg).startsWith("moreau listening")),
    30_000,
    25,
  ).catch(() => {
    throw new Error(`no start-up line:\n${text.slice(-3000)}`);
  });
  return {
    child,
    url: `http://127.0.0.1:${started.port}`,
    pid: started.pid as number,
    lines,
    exited,
  };
}

async function call(s: Server, method: string, path: string, body?: unknown) {
  const r = await fetch(`${s.url}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
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
  const s = await start("npm", ["start"], {});
  expect(s.pid).not.toBe(s.child.pid); // npm's child, not npm
  expect((await call(s, "GET", "/health")).status).toBe(200);
  // a session stepped by a worker thread running compiled JavaScript
  const id = (await call(s, "POST", "/v1/sessions", { model: springParticle() })).body.id;
  expect((await call(s, "POST", `/v1/sessions/${id}/step`, { steps: 10 })).body.step).toBe(10);
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
  const s = await start(process.execPath, ["--enable-source-maps", "dist/main.js"], env);
  const id = (
    await call(s, "POST", "/v1/sessions", { model: springParticle(100, 1, 1, 1e-6, "long") })
  ).body.id as string;
  const acked = await call(s, "POST", `/v1/sessions/${id}/step`, { steps: 500 });
  expect(acked.status).toBe(200);
  expect(acked.body.step).toBe(500);

  // a step request that would run for hours
  const t0 = performance.now();
  const long = call(s, "POST", `/v1/sessions/${id}/step`, { steps: 1e11 });
  await new Promise((r) => setTimeout(r, 300));
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
  const s2 = await start(process.execPath, ["dist/main.js"], env);
  const back = await call(s2, "GET", `/v1/sessions/${id}`);
  expect(back.status).toBe(200);
  expect(back.body.step).toBe(saved);
  s2.child.kill("SIGTERM");
  expect(await s2.exited).toBe(0);
}, 60_000);
