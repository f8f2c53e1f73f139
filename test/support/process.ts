/**
 * The server as its own process, for the tests of what only a process has (its
 * environment, its start-up log, signals, a crash, its memory) and for the benchmarks
 * (bench/server-load.ts), whose server must not share this process's CPU: spawned on a
 * free 127.0.0.1 port and polled until it answers /ready. By default node runs
 * src/server/main.ts with tsx as a loader (not the tsx command, whose child would outlive
 * a SIGKILL of it); a test of `npm start` or of the compiled server gives its command.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { ENV_VARS } from "../../src/server/config";
import { freePort } from "./net";
import { waitFor } from "./wait";

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, "../..");

export interface SpawnServerOptions {
  /** The command and its arguments; node on src/server/main.ts through tsx when left out. */
  command?: string[];
  /** Node's own options before the default command's (e.g. `--inspect=…`). */
  nodeArgs?: string[];
  /** The working directory; the repository's root when left out. */
  cwd?: string;
  /**
   * Only PATH and HOME of this process's environment (a newcomer's shell, a container),
   * instead of all of it but the server's settings.
   */
  bareEnv?: boolean;
  /** The path polled until it answers 200; /ready when left out. */
  readyPath?: string;
  /** Wait for the start-up line (`moreau listening …`, LOG_LEVEL info) too: `started`. */
  startLine?: boolean;
  /** How long it may take to become ready (ms); 60 s when left out (a loaded machine starts tsx slowly). */
  timeoutMs?: number;
  /** In a process group of its own (npm and its child): a SIGKILL reaches the group. */
  detached?: boolean;
  /** Its output goes to this process's (a benchmark's), and is not kept. */
  inherit?: boolean;
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:<port>, no trailing slash. */
  base: string;
  /** The JSON lines of its standard output (its log; npm's own lines left out). */
  lines: Record<string, unknown>[];
  /** The start-up line, with `startLine`. */
  started?: Record<string, unknown>;
  /** Its exit code (null after a signal). */
  exited: Promise<number | null>;
  /** All it wrote on standard output and error so far. */
  output(): string;
  /** A request to it, with `body` as JSON; its status, text and JSON answer (else null). */
  call(method: string, path: string, body?: unknown): Promise<CallResult>;
  /** SIGKILL (to its group when detached) unless it has exited. */
  kill(): void;
  /** `signal` (SIGTERM), then SIGKILL after `graceMs`; resolves its exit code. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | null>;
}

export interface CallResult {
  status: number;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: an answer of any shape, read by the test
  body: any;
}

/**
 * The environment a server process starts from: this process's without any of the
 * server's settings (nor NODE_OPTIONS), or only PATH and HOME.
 */
function startingEnv(bare: boolean): NodeJS.ProcessEnv {
  if (bare) return { PATH: process.env.PATH, HOME: process.env.HOME };
  const e: NodeJS.ProcessEnv = { ...process.env };
  for (const k of [...Object.values(ENV_VARS), "API_KEY", "API_KEYS", "NODE_OPTIONS"]) delete e[k];
  return e;
}

/**
 * Starts a server process with `env` over one worker and LOG_LEVEL warn, on a free port
 * (PORT), and waits until it is ready: it answers `readyPath` with 200 (and has written its
 * start-up line, with `startLine`). Throws, the process killed, if it exits or times out
 * first, with its output.
 */
export async function spawnServer(
  env: Record<string, string> = {},
  o: SpawnServerOptions = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const [cmd, ...args] = o.command ?? [
    process.execPath,
    ...(o.nodeArgs ?? []),
    "--import",
    "tsx",
    "src/server/main.ts",
  ];
  const child = spawn(cmd, args, {
    cwd: o.cwd ?? ROOT,
    env: {
      ...startingEnv(o.bareEnv ?? false),
      WORKERS: "1",
      LOG_LEVEL: "warn",
      ...env,
      PORT: String(port),
    },
    stdio: ["ignore", o.inherit ? "inherit" : "pipe", o.inherit ? "inherit" : "pipe"],
    detached: o.detached ?? false,
  });
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  // a SIGKILL reaches the whole group of a detached server (npm's child too); other signals
  // go to the process started, which forwards them as it does in production
  const signal = (s: NodeJS.Signals) => {
    if (!running()) return;
    if (s === "SIGKILL" && o.detached && child.pid !== undefined) process.kill(-child.pid, s);
    else child.kill(s);
  };

  let text = "";
  let partial = "";
  const lines: Record<string, unknown>[] = [];
  child.stdout?.on("data", (d: Buffer) => {
    text += d.toString();
    partial += d.toString();
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    for (const p of parts) {
      if (!p.startsWith("{")) continue; // npm's own lines
      try {
        lines.push(JSON.parse(p));
      } catch {
        // not a log line
      }
    }
  });
  child.stderr?.on("data", (d: Buffer) => {
    text += d.toString();
  });

  const server: ServerProcess = {
    child,
    port,
    base,
    lines,
    exited,
    output: () => text,
    async call(method, path, body) {
      const r = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = await r.text();
      const json = answer.length > 0 && r.headers.get("content-type")?.includes("json");
      return { status: r.status, text: answer, body: json ? JSON.parse(answer) : null };
    },
    kill: () => signal("SIGKILL"),
    async stop(sig = "SIGTERM", graceMs = 10_000) {
      signal(sig);
      const timer = setTimeout(() => signal("SIGKILL"), graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  const readyPath = o.readyPath ?? "/ready";
  const failed = (why: string) =>
    new Error(`the server ${why}:\n${text.slice(-3000) || "(no output)"}`);
  let phase = `did not answer ${readyPath} with 200`;
  try {
    await waitFor(
      async () => {
        if (!running()) throw failed(`exited (${child.exitCode ?? child.signalCode})`);
        return fetch(`${base}${readyPath}`).then(
          (r) => r.status === 200,
          () => false,
        );
      },
      o.timeoutMs ?? 60_000,
      100,
    );
    phase = "wrote no start-up line";
    if (o.startLine)
      server.started = await waitFor(
        () => lines.find((l) => String(l.msg).startsWith("moreau listening")),
        10_000,
      );
  } catch (e) {
    server.kill();
    throw (e as Error).message.startsWith("the server") ? e : failed(phase);
  }
  return server;
}
