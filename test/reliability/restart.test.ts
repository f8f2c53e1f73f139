/**
 * Persistence across a crash: the server process (`tsx src/server/main.ts`, DATA_DIR in a
 * temporary folder, a free port) is killed with SIGKILL and started again; it finds its
 * sessions at their last checkpoint (pause, CHECKPOINT_EVERY_STEPS) — same ids, steps and
 * state hashes — with no partial file, and they continue bit-identically. A SIGTERM
 * shutdown checkpoints every session at its current step.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { springParticle, waitFor } from "../api/helpers";

const dataDir = mkdtempSync(join(tmpdir(), "moreau-restart-"));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

interface Server {
  child: ChildProcess;
  url: string;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const e: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    WORKERS: "1",
    LOG_LEVEL: "info",
    ...env,
  };
  delete e.HOST;
  delete e.API_KEY;
  delete e.API_KEYS;
  // node itself runs the server (tsx as a loader, not the tsx CLI, whose child would
  // outlive a SIGKILL of the CLI): kill -9 then really kills the server
  const child = spawn(process.execPath, ["--import", "tsx", "src/server/main.ts"], {
    env: e,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  let buf = "";
  child.stdout?.on("data", (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split("\n");
    buf = parts.pop() ?? "";
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p));
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const started = await waitFor(
    async () => lines.find((l) => String(l.msg).startsWith("moreau listening")),
    20_000,
  ).catch(() => {
    throw new Error(`no start-up line; stderr: ${stderr}`);
  });
  return { child, url: `http://127.0.0.1:${started.port}`, lines, exited };
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

/** sha256 of the decoded state arrays of a session document. */
async function hashOf(s: Server, id: string): Promise<{ step: number; hash: string }> {
  const r = await call(s, "GET", `/v1/sessions/${id}/snapshot`);
  expect(r.status).toBe(200);
  const st = r.body.simulation.state;
  const h = createHash("sha256");
  for (const k of ["position", "orientation", "velocity", "angularVelocity"])
    h.update(Buffer.from(st[k], "base64"));
  return { step: r.body.simulation.step, hash: h.digest("hex") };
}

const model = springParticle(100, 1, 1, 0.001, "restart");

it("kill -9 and restart: sessions come back at their last checkpoint, whole and exact", async () => {
  const env = { DATA_DIR: dataDir, CHECKPOINT_EVERY_STEPS: "500" };
  const s1 = await startServer(env);
  expect(s1.lines.find((l) => String(l.msg).startsWith("moreau listening"))?.msg).toMatch(
    /HOST not set: this machine only, since no API_KEY is set and access control is off/,
  );
  // a: stepped, paused (checkpoint at 120), then stepped more without a checkpoint
  const a = (await call(s1, "POST", "/v1/sessions", { model })).body.id as string;
  expect((await call(s1, "POST", `/v1/sessions/${a}/step`, { steps: 120 })).status).toBe(200);
  expect((await call(s1, "POST", `/v1/sessions/${a}/pause`)).status).toBe(200);
  const atPause = await hashOf(s1, a);
  expect(atPause.step).toBe(120);
  expect((await call(s1, "POST", `/v1/sessions/${a}/step`, { steps: 80 })).status).toBe(200);
  const at200 = await hashOf(s1, a);
  // b: interval checkpoint at 600 (≥ 500 steps since its creation checkpoint), then 50 more
  const b = (await call(s1, "POST", "/v1/sessions", { model: { ...model, name: "b" } })).body
    .id as string;
  expect((await call(s1, "POST", `/v1/sessions/${b}/step`, { steps: 600 })).status).toBe(200);
  const b600 = await hashOf(s1, b);
  const file = join(dataDir, "sessions", `${b}.json`);
  await waitFor(async () => {
    try {
      return JSON.parse(readFileSync(file, "utf8")).snapshot.simulation.step === 600;
    } catch {
      return false;
    }
  });
  expect((await call(s1, "POST", `/v1/sessions/${b}/step`, { steps: 50 })).status).toBe(200);
  // a third session made and deleted leaves nothing behind
  const c = (await call(s1, "POST", "/v1/sessions", { model })).body.id as string;
  expect((await call(s1, "DELETE", `/v1/sessions/${c}`)).status).toBe(204);

  s1.child.kill("SIGKILL");
  expect(await s1.exited).toBe(null);
  const files = readdirSync(join(dataDir, "sessions")).sort();
  expect(files).toEqual([`${a}.json`, `${b}.json`].sort());
  for (const f of files) JSON.parse(readFileSync(join(dataDir, "sessions", f), "utf8"));

  const s2 = await startServer(env);
  expect(s2.lines.some((l) => String(l.msg).startsWith("restored 2 session(s)"))).toBe(true);
  const list = (await call(s2, "GET", "/v1/sessions")).body.sessions as {
    id: string;
    step: number;
  }[];
  expect(list.map((x) => [x.id, x.step]).sort()).toEqual(
    [
      [a, 120],
      [b, 600],
    ].sort(),
  );
  expect(await hashOf(s2, a)).toEqual(atPause);
  expect(await hashOf(s2, b)).toEqual(b600);
  // continuing from the checkpoint reproduces the lost steps bit for bit
  expect((await call(s2, "POST", `/v1/sessions/${a}/step`, { steps: 80 })).status).toBe(200);
  expect(await hashOf(s2, a)).toEqual(at200);

  // graceful shutdown checkpoints the current step (a at 200, not yet due by the interval)
  s2.child.kill("SIGTERM");
  expect(await s2.exited).toBe(0);
  const s3 = await startServer(env);
  expect(await hashOf(s3, a)).toEqual(at200);
  s3.child.kill("SIGKILL");
  await s3.exited;
}, 90_000);
