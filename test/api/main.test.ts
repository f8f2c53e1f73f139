/**
 * The server from source (node on src/server/main.ts) as a real process: configuration
 * from the environment, the start-up log saying HOST defaults to 127.0.0.1, request-id'd
 * pino logs, and graceful SIGTERM (streams closed with 1001, exit code 0). Its worker
 * threads load worker.ts through the tsx bootstrap, as a developer's server does (the rest
 * of the suite starts them from the run's bundle: test/support/global-setup.ts).
 */
import { afterEach, expect, it } from "vitest";
import { FrameClient } from "../support/frames";
import { fallingBody } from "../support/models";
import { type ServerProcess, spawnServer } from "../support/process";
import { waitFor } from "../support/wait";

let server: ServerProcess | null = null;
afterEach(() => {
  server?.kill();
});

it("starts from the environment and shuts down gracefully on SIGTERM", async () => {
  // HOST not set
  server = await spawnServer(
    { LOG_LEVEL: "info", MAX_SESSIONS: "3", MOREAU_WORKER_BUNDLE: "" },
    { startLine: true },
  );
  const { base, port, lines, started } = server;
  expect(started?.msg).toContain("HOST not set");
  expect(started?.host).toBe("127.0.0.1");
  expect(started?.port).toBe(port);
  expect(started?.workers).toBe(1);
  expect(started?.maxSessions).toBe(3);

  expect((await fetch(`${base}/health`)).status).toBe(200);
  const created = await fetch(`${base}/v1/sessions`, {
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

  server.child.kill("SIGTERM");
  expect(await c.waitClosed(10_000)).toEqual({ code: 1001, reason: "server shutting down" });
  expect(await server.exited).toBe(0);
  expect(lines.some((l) => l.msg === "shutting down" && l.signal === "SIGTERM")).toBe(true);
}, 30_000);
