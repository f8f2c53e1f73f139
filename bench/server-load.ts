/**
 * Server load benchmark (issue 5), bounded in time, on 127.0.0.1.
 *
 * The server runs as its own process (node on src/server/main.ts through tsx), so its CPU
 * and memory are its own: they are read from its /metrics (prom-client's process
 * metrics cover the worker threads, which live in the same process). This process hosts
 * the clients.
 *
 * Phase 1, streaming: `sessions` sessions (a chain of `bodies` particles joined by springs,
 * h = 1/240 s) run at real time; `subscribers` WebSocket clients per session subscribe
 * with every = 240 / fps, i.e. `fps` frames/s each. Frame latency is the time from the
 * instant a frame's simulated time t was due on the wall clock (the run's pacing reference
 * wallStart + (t − simStart) / r read from GET /v1/sessions/:id after a warm-up; same
 * machine, same clock) to its arrival at the client: pacing delay + stepping + encoding +
 * fan-out + transit. Runs that fall behind during the measurement are counted (lag
 * resets); their later frames then look later still. Dropped frames: the sum of the frames' `dropped` counts and the server's
 * moreau_stream_dropped_frames_total.
 * Phase 2, REST: GET /v1/sessions/:id/state with `concurrency` keep-alive connections,
 * round-robin over the sessions, for `stateSeconds` while the sessions keep running, then
 * again with them paused.
 */
import http from "node:http";
import { pathToFileURL } from "node:url";
import { WebSocket } from "ws";
import { sample } from "../test/support/metrics";
import { springChain } from "../test/support/models";
import { type ServerProcess, spawnServer } from "../test/support/process";

export interface ServerLoadOptions {
  sessions?: number;
  subscribers?: number;
  fps?: number;
  bodies?: number;
  /** seconds of streaming measured (after a 1 s warm-up) */
  streamSeconds?: number;
  /** seconds of each GET /state phase */
  stateSeconds?: number;
  concurrency?: number;
  workers?: number;
  format?: "json" | "msgpack";
  /** print the table (default true) */
  print?: boolean;
}

export interface ServerLoadResult {
  sessions: number;
  subscribers: number;
  fps: number;
  workers: number;
  streamSeconds: number;
  framesExpected: number;
  framesReceived: number;
  framesDropped: number;
  serverDroppedFrames: number;
  /** times a run fell 0.25 s behind real time during the measurement (its latencies then
   *  count from the moved reference) */
  lagResets: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  serverCpuPercent: number;
  /** busy fraction of each worker's loop over the measured streaming */
  workerUtilization: number[];
  /** event-loop delay p99 of the server's main thread (ms) */
  eventLoopLagP99Ms: number;
  serverRssMiB: number;
  serverHeapMiB: number;
  clientCpuPercent: number;
  stateWhileRunning: { requestsPerSecond: number; p50Ms: number; p99Ms: number; errors: number };
  stateWhilePaused: { requestsPerSecond: number; p50Ms: number; p99Ms: number; errors: number };
}

const DT = 1 / 240;

interface RunInfo {
  wallStart: number;
  simStart: number;
  lagResets: number;
}

/** n particles 0.1 m apart along x, the first one fixed, joined by n − 1 springs. */
function chain(n: number, name: string) {
  const { bodies, forces } = springChain({
    particles: n,
    prefix: "p",
    mass: 0.1,
    fixed: (i) => i === 0,
    position: (i) => [0.1 * i, 0, 0],
    stiffness: 200,
    damping: 0.05,
    grounded: false,
  });
  return { name, bodies, forces, solver: { integrator: "newmark", dt: DT } };
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i];
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export function call(
  port: number,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent,
        headers: data
          ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) }
          : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    req.on("error", reject);
    if (data) req.write(data);
    req.end();
  });
}

/**
 * Starts the server from source as its own process (test/support/process.ts), request
 * logging off (LOG_LEVEL warn), its output on this process's; resolves once it is ready.
 */
export async function startServer(
  workers: number,
  maxSessions: number,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  return spawnServer(
    { WORKERS: String(workers), MAX_SESSIONS: String(maxSessions), ...env },
    { inherit: true },
  );
}

async function stateLoad(port: number, ids: string[], seconds: number, concurrency: number) {
  const lat: number[] = [];
  let errors = 0;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      let k = w;
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await call(port, "GET", `/v1/sessions/${ids[k++ % ids.length]}/state`);
        lat.push(performance.now() - t0);
        if (r.status !== 200) errors++;
        n++;
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return {
    requestsPerSecond: n / seconds,
    p50Ms: quantile(lat, 0.5),
    p99Ms: quantile(lat, 0.99),
    errors,
  };
}

export async function runServerLoad(opts: ServerLoadOptions = {}): Promise<ServerLoadResult> {
  const sessions = opts.sessions ?? 20;
  const subscribers = opts.subscribers ?? 5;
  const fps = opts.fps ?? 60;
  const bodies = opts.bodies ?? 10;
  const streamSeconds = opts.streamSeconds ?? 10;
  const stateSeconds = opts.stateSeconds ?? 3;
  const concurrency = opts.concurrency ?? 16;
  const workers = opts.workers ?? 2;
  const format = opts.format ?? "json";
  const every = Math.max(1, Math.round(1 / (fps * DT)));

  const server = await startServer(workers, sessions + 4);
  const { port } = server;
  const clients: WebSocket[] = [];
  try {
    const ids: string[] = [];
    for (let i = 0; i < sessions; i++) {
      const r = await call(port, "POST", "/v1/sessions", { model: chain(bodies, `load-${i}`) });
      if (r.status !== 201) throw new Error(`create: ${r.status} ${r.text}`);
      ids.push((JSON.parse(r.text) as { id: string }).id);
    }

    // subscribers
    const runStart = new Map<string, number>();
    const latencies: number[] = [];
    let received = 0;
    let dropped = 0;
    let measuring = false;
    const decode =
      format === "json"
        ? (d: Buffer) => JSON.parse(d.toString("utf8"))
        : (await import("msgpackr")).unpack;
    for (const id of ids)
      for (let s = 0; s < subscribers; s++) {
        const ws = new WebSocket(
          `ws://127.0.0.1:${port}/v1/sessions/${id}/stream?every=${every}&fields=bodies,energy&format=${format}`,
        );
        clients.push(ws);
        ws.on("message", (data: Buffer) => {
          if (!measuring) return;
          const now = performance.timeOrigin + performance.now();
          const f = decode(data) as { type: string; time: number; dropped: number };
          if (f.type !== "state") return;
          const start = runStart.get(id);
          if (start === undefined) return;
          received++;
          dropped += f.dropped;
          latencies.push(now - (start + f.time * 1000));
        });
        await new Promise<void>((res, rej) => {
          ws.once("open", () => res());
          ws.once("error", rej);
        });
      }

    for (const id of ids) {
      const r = await call(port, "POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 });
      if (r.status !== 202) throw new Error(`run: ${r.status} ${r.text}`);
    }
    await new Promise((r) => setTimeout(r, 1500)); // warm-up (JIT, start-up transients)
    // each run's pacing reference (moved if it fell behind during the warm-up)
    const runs = async () =>
      Promise.all(
        ids.map(async (id) => {
          const r = await call(port, "GET", `/v1/sessions/${id}`);
          return (JSON.parse(r.text) as { run: RunInfo }).run;
        }),
      );
    const before = await runs();
    ids.forEach((id, i) => {
      runStart.set(id, before[i].wallStart - 1000 * before[i].simStart);
    });
    const m0 = (await call(port, "GET", "/metrics")).text;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    measuring = true;
    let rssMax = 0;
    const sampler = setInterval(() => {
      void call(port, "GET", "/metrics").then((r) => {
        rssMax = Math.max(rssMax, sample(r.text, "moreau_process_resident_memory_bytes"));
      });
    }, 1000);
    await new Promise((r) => setTimeout(r, streamSeconds * 1000));
    measuring = false;
    clearInterval(sampler);
    const wall = (performance.now() - t0) / 1000;
    const cpu1 = process.cpuUsage(cpu0);
    const m1 = (await call(port, "GET", "/metrics")).text;

    const after = await runs();
    const lagResets = after.reduce((n, r, i) => n + r.lagResets - before[i].lagResets, 0);
    const stateRunning = await stateLoad(port, ids, stateSeconds, concurrency);
    for (const id of ids) await call(port, "POST", `/v1/sessions/${id}/pause`);
    const statePaused = await stateLoad(port, ids, stateSeconds, concurrency);

    latencies.sort((a, b) => a - b);
    const cpuServer =
      sample(m1, "moreau_process_cpu_seconds_total") -
      sample(m0, "moreau_process_cpu_seconds_total");
    const result: ServerLoadResult = {
      sessions,
      subscribers,
      fps: 1 / (every * DT),
      workers,
      streamSeconds: wall,
      framesExpected: Math.round(sessions * subscribers * wall * (1 / (every * DT))),
      framesReceived: received,
      framesDropped: dropped,
      lagResets,
      serverDroppedFrames:
        sample(m1, "moreau_stream_dropped_frames_total") -
        sample(m0, "moreau_stream_dropped_frames_total"),
      latencyMs: {
        p50: quantile(latencies, 0.5),
        p90: quantile(latencies, 0.9),
        p99: quantile(latencies, 0.99),
        max: latencies.at(-1) ?? Number.NaN,
      },
      serverCpuPercent: (100 * cpuServer) / wall,
      workerUtilization: Array.from({ length: workers }, (_, i) => {
        const busy = `moreau_worker_busy_seconds_total{worker="${i}"}`;
        return (sample(m1, busy) - sample(m0, busy)) / wall;
      }),
      eventLoopLagP99Ms: 1000 * sample(m1, "moreau_nodejs_eventloop_lag_p99_seconds"),
      serverRssMiB: Math.max(rssMax, sample(m1, "moreau_process_resident_memory_bytes")) / 2 ** 20,
      serverHeapMiB: sample(m1, "moreau_nodejs_heap_size_used_bytes") / 2 ** 20,
      clientCpuPercent: (100 * (cpu1.user + cpu1.system)) / 1e6 / wall,
      stateWhileRunning: stateRunning,
      stateWhilePaused: statePaused,
    };
    if (opts.print !== false) printTable(result);
    return result;
  } finally {
    for (const ws of clients) ws.terminate();
    await server.stop();
    agent.destroy();
  }
}

function printTable(r: ServerLoadResult): void {
  const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toPrecision(d) : String(x));
  console.log(
    `\n## Server load: ${r.sessions} sessions at real time, ${r.subscribers} subscribers each, ${f(r.fps)} frames/s, ${r.workers} workers, ${f(r.streamSeconds)} s`,
  );
  console.table([
    { figure: "frames expected", value: r.framesExpected },
    { figure: "frames received", value: r.framesReceived },
    { figure: "frames dropped (sum of `dropped`)", value: r.framesDropped },
    { figure: "frames dropped (server counter)", value: r.serverDroppedFrames },
    { figure: "runs that fell 0.25 s behind (lag resets)", value: r.lagResets },
    { figure: "frame latency p50 (ms)", value: f(r.latencyMs.p50) },
    { figure: "frame latency p90 (ms)", value: f(r.latencyMs.p90) },
    { figure: "frame latency p99 (ms)", value: f(r.latencyMs.p99) },
    { figure: "frame latency max (ms)", value: f(r.latencyMs.max) },
    { figure: "server CPU (% of one core)", value: f(r.serverCpuPercent) },
    {
      figure: "worker utilization (last s)",
      value: r.workerUtilization.map((u) => f(u, 2)).join(", "),
    },
    { figure: "main-thread event-loop lag p99 (ms)", value: f(r.eventLoopLagP99Ms) },
    { figure: "server RSS max (MiB)", value: f(r.serverRssMiB) },
    { figure: "server heap used (MiB)", value: f(r.serverHeapMiB) },
    { figure: "client process CPU (% of one core)", value: f(r.clientCpuPercent) },
  ]);
  console.log("\n## GET /v1/sessions/:id/state throughput");
  console.table([
    { sessions: "running", ...fmtState(r.stateWhileRunning) },
    { sessions: "paused", ...fmtState(r.stateWhilePaused) },
  ]);
}

function fmtState(s: ServerLoadResult["stateWhileRunning"]) {
  return {
    "requests/s": s.requestsPerSecond.toPrecision(4),
    "p50 ms": s.p50Ms.toPrecision(3),
    "p99 ms": s.p99Ms.toPrecision(3),
    errors: s.errors,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i >= 0 ? Number(process.argv[i + 1]) : undefined;
  };
  runServerLoad({
    sessions: arg("sessions"),
    subscribers: arg("subscribers"),
    streamSeconds: arg("seconds"),
    workers: arg("workers"),
  }).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
