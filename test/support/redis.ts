/**
 * A redis-server of the test's own (Debian's package, /usr/bin/redis-server; .ci/run
 * installs it): on a free 127.0.0.1 port, with a temporary directory, no persistence
 * (`--save "" --appendonly no`), stopped (and its directory removed) by `stop`. `restart`
 * kills it and starts a new, empty one on the same port (a Redis that lost its data).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./net";
import { waitFor } from "./wait";

export interface RedisServer {
  port: number;
  /** redis://127.0.0.1:<port> */
  url: string;
  /** SIGKILL: Redis gone at once (its data with it) */
  kill(): Promise<void>;
  /** a fresh, empty server on the same port */
  start(): Promise<void>;
  stop(): Promise<void>;
}

function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const s = netConnect(port, "127.0.0.1");
    s.once("connect", () => {
      s.end();
      res(true);
    });
    s.once("error", () => res(false));
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "moreau-redis-"));
  let child: ChildProcess | null = null;
  const start = async () => {
    const c = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      { stdio: "ignore" },
    );
    child = c;
    await waitFor(
      async () => {
        if (c.exitCode !== null) throw new Error(`redis-server exited (${c.exitCode})`);
        return listening(port);
      },
      10_000,
      20,
    );
  };
  const kill = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((res) => c.once("exit", res));
    c.kill("SIGKILL");
    await exited;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
