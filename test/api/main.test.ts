/**
 * `npm start` (tsx src/server/main.ts) as a real process: configuration from the
 * environment, the start-up log saying HOST defaults to 127.0.0.1, request-id'd pino logs,
 * and graceful SIGTERM (streams closed with 1001, exit code 0).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, expect, it } from "vitest";
import { FrameClient, fallingBody, waitFor } from "./helpers";

let child: ChildProcess | null = null;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
});

it("starts from the environment and shuts down gracefully on SIGTERM", async () => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: "0",
    WORKERS: "1",
    LOG_LEVEL: "info",
    MAX_SESSIONS: "3",
  };
  delete env.HOST;
  // node itself runs the server (tsx as a loader), as `npm start` does through the tsx CLI
  child = spawn(process.execPath, ["--import", "tsx", "src/server/main.ts"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
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
  const exited = new Promise<number | null>((res) => child?.once("exit", (code) => res(code)));

  const started = await waitFor(
    async () => lines.find((l) => String(l.msg).startsWith("moreau listening")),
    20_000,
  ).catch(() => {
    throw new Error(`no start-up line; stderr: ${stderr}`);
  });
  expect(started.msg).toContain("HOST not set");
  expect(started.host).toBe("127.0.0.1");
  expect(started.workers).toBe(1);
  expect(started.maxSessions).toBe(3);
  const port = started.port as number;
  const url = `http://127.0.0.1:${port}`;

  expect((await fetch(`${url}/health`)).status).toBe(200);
  const created = await fetch(`${url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-request-id": "req-main-1" },
    body: JSON.stringify({ model: fallingBody() }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const c = new FrameClient(`ws://127.0.0.1:${port}/v1/sessions/${id}/stream`);
  await c.open();
  await c.waitForMessages(2);
  // pino lines carry the request id
  await waitFor(async () => lines.some((l) => l.reqId === "req-main-1"));

  child.kill("SIGTERM");
  expect(await c.waitClosed(10_000)).toEqual({ code: 1001, reason: "server shutting down" });
  expect(await exited).toBe(0);
  expect(lines.some((l) => l.msg === "shutting down" && l.signal === "SIGTERM")).toBe(true);
}, 30_000);
