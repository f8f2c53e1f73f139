/**
 * Sessions in parallel (issue 29): the aggregate steps/s of N identical sessions on a
 * server with WORKERS = 1 and WORKERS = 2 (this machine's cores), on 127.0.0.1.
 *
 * Each server runs as its own process (node on src/server/main.ts through tsx). N sessions
 * of one model are created (placement spreads them over the workers, least loaded first),
 * each is stepped once to warm its worker's compiled code, then all N are sent one
 * `POST /v1/sessions/:id/step` of `steps` steps at the same instant; the aggregate is
 * N · steps / (wall time until the last answer). With the sessions spread over w workers
 * (threads, one core each) the aggregate should grow with min(N, w, cores) while one
 * session's own speed stays that of a single session. The model: a 24 × 24 cloth
 * (Newmark, matrix-free CG, h = 0.01 s), a step of ~1 ms — enough work per request that
 * HTTP is negligible.
 */
import { pathToFileURL } from "node:url";
import { type ServerProcess, spawnServer } from "../test/support/process";
import { clothModel } from "./scenes";

export interface ParallelOptions {
  workers?: number[];
  sessions?: number[];
  steps?: number;
  print?: boolean;
}

export interface ParallelRow {
  workers: number;
  sessions: number;
  stepsPerSecond: number;
  /** aggregate over the same number of sessions on one worker */
  scaling: number;
}

async function startServer(workers: number): Promise<ServerProcess> {
  return spawnServer({ WORKERS: String(workers), MAX_SESSIONS: "64", LOG_LEVEL: "warn" });
}

async function checked(server: ServerProcess, method: string, path: string, body?: unknown) {
  const r = await server.call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  return r.body as Record<string, unknown>;
}

/** Aggregate steps/s of `sessions` sessions stepped at once on a server of `workers`. */
async function aggregate(server: ServerProcess, sessions: number, steps: number) {
  const model = clothModel({ n: 24, pin: "corners", dt: 0.01, stiffness: 100, damping: 0.1 });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++)
    ids.push((await checked(server, "POST", "/v1/sessions", { model })).id as string);
  await Promise.all(
    ids.map((id) => checked(server, "POST", `/v1/sessions/${id}/step`, { steps: 50 })),
  );
  const t0 = performance.now();
  await Promise.all(ids.map((id) => checked(server, "POST", `/v1/sessions/${id}/step`, { steps })));
  const seconds = (performance.now() - t0) / 1000;
  await Promise.all(ids.map((id) => checked(server, "DELETE", `/v1/sessions/${id}`)));
  return (sessions * steps) / seconds;
}

export async function runParallelBench(o: ParallelOptions = {}): Promise<ParallelRow[]> {
  const workerCounts = o.workers ?? [1, 2];
  const sessionCounts = o.sessions ?? [1, 2, 4];
  const steps = o.steps ?? 400;
  const rows: ParallelRow[] = [];
  const single = new Map<number, number>();
  for (const workers of workerCounts) {
    const server = await startServer(workers);
    try {
      for (const sessions of sessionCounts) {
        const rate = await aggregate(server, sessions, steps);
        if (workers === workerCounts[0]) single.set(sessions, rate);
        rows.push({
          workers,
          sessions,
          stepsPerSecond: rate,
          scaling: rate / (single.get(sessions) ?? rate),
        });
      }
    } finally {
      await server.stop();
    }
  }
  if (o.print !== false) {
    console.log(
      `\n## Sessions in parallel: aggregate steps/s of N cloth sessions (24 × 24, h = 0.01 s), ${steps} steps each, sent at once`,
    );
    console.table(
      rows.map((r) => ({
        WORKERS: r.workers,
        sessions: r.sessions,
        "aggregate steps/s": r.stepsPerSecond.toFixed(0),
        [`vs WORKERS=${workerCounts[0]}`]: `${r.scaling.toFixed(2)}×`,
      })),
    );
  }
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runParallelBench();
