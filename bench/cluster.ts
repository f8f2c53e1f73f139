/**
 * `npm run bench -- --only cluster` (issue 32): one server against three nodes and a Redis
 * on this machine. On 2 cores three nodes cannot scale anything: the point is the
 * overhead of being a cluster.
 * - sessions per second created, stepped (100 steps of the pendulum) and deleted, 6 at a
 *   time, through one server, then round robin through the three nodes (2 of every 3
 *   requests forwarded to their owner);
 * - the per-request overhead of forwarding: GET /v1/sessions/:id/state 400 times on the
 *   owner and 400 times through another node, p50 and p99 of each;
 * - frame latency: a session run at real time, one subscriber; a frame's latency is its
 *   arrival time minus the wall time its simulated time was due at (the run's pacing
 *   reference wallStart + (t − simStart) / r, read from GET /v1/sessions/:id), for one
 *   server (frames from the worker straight to the socket) and for the cluster (frames
 *   through a Redis Stream, to a subscriber on the owner and on another node);
 * - Redis commands per second (INFO stats, total_commands_processed, Lua scripts' own
 *   commands included): the three nodes with no session, then per idle session (30
 *   sessions paused, no stream), then per session run at real time with one subscriber
 *   (every = 10: 100 frames/s).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { connect, ready } from "../src/server/cluster/redis";
import { ROOT, type ServerProcess, spawnServer } from "../test/support/process";
import { type RedisServer, startRedis } from "../test/support/redis";
import { call, quantile } from "./server-load";

const model = JSON.parse(readFileSync(join(ROOT, "examples/pendulum.json"), "utf8"));
const f = (x: number, d = 3) => x.toPrecision(d);

/** Sessions created, stepped and deleted per second, `concurrency` at a time over `ports`. */
async function churn(ports: number[], total: number, concurrency: number): Promise<number> {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  const lane = async (k: number) => {
    for (let i = next++; i < total; i = next++) {
      const port = ports[(i + k) % ports.length];
      const c = await call(port, "POST", "/v1/sessions", { model });
      if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
      const id = (JSON.parse(c.text) as { id: string }).id;
      const s = await call(ports[(i + k + 1) % ports.length], "POST", `/v1/sessions/${id}/step`, {
        steps: 100,
      });
      if (s.status !== 200) throw new Error(`step: ${s.status} ${s.text}`);
      await call(ports[(i + k + 2) % ports.length], "DELETE", `/v1/sessions/${id}`);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, k) => lane(k)));
  return (done * 1000) / (performance.now() - t0);
}

/** p50 and p99 (ms) of `n` GETs of a session's state through `port`. */
async function stateTimes(port: number, id: string, n: number) {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await call(port, "GET", `/v1/sessions/${id}/state`);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

/** Frame latencies (ms) of a session run at real time, its stream read through `port`. */
async function frameLatency(ownerPort: number, port: number, seconds: number) {
  const c = await call(ownerPort, "POST", "/v1/sessions", { model });
  const id = (JSON.parse(c.text) as { id: string }).id;
  const lat: number[] = [];
  let ref: { wallStart: number; simStart: number } | null = null;
  const ws = new WebSocket(
    `ws://127.0.0.1:${port}/v1/sessions/${id}/stream?every=10&fields=energy&maxFps=240`,
  );
  ws.on("message", (d) => {
    const now = performance.timeOrigin + performance.now();
    const fr = JSON.parse(String(d)) as { type: string; time: number };
    if (fr.type === "state" && ref)
      lat.push(now - (ref.wallStart + 1000 * (fr.time - ref.simStart)));
  });
  await new Promise((r) => ws.once("open", r));
  await call(ownerPort, "POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 });
  await new Promise((r) => setTimeout(r, 1000)); // warm-up
  ref = (
    JSON.parse((await call(ownerPort, "GET", `/v1/sessions/${id}`)).text) as {
      run: { wallStart: number; simStart: number };
    }
  ).run;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  ws.close();
  await call(ownerPort, "DELETE", `/v1/sessions/${id}`);
  // frames of the warm-up, before the reference was read, are left out
  const kept = lat.slice(2).sort((a, b) => a - b);
  return { p50: quantile(kept, 0.5), p99: quantile(kept, 0.99), frames: kept.length };
}

/** Redis commands per second over `ms` (INFO stats). */
async function commandRate(url: string, ms: number): Promise<number> {
  const r = connect(url);
  await ready(r, 5000);
  const count = async () =>
    Number(/total_commands_processed:(\d+)/.exec(await r.info("stats"))?.[1] ?? Number.NaN);
  const c0 = await count();
  const t0 = performance.now();
  await new Promise((res) => setTimeout(res, ms));
  const c1 = await count();
  const rate = ((c1 - c0 - 1) * 1000) / (performance.now() - t0);
  r.disconnect();
  return rate;
}

/** Redis commands/s of the nodes alone, per idle session, per streamed running session. */
async function redisOps(url: string, ownerPort: number, otherPort: number) {
  const base = await commandRate(url, 6000);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const c = await call(ownerPort, "POST", "/v1/sessions", { model });
    ids.push((JSON.parse(c.text) as { id: string }).id);
  }
  const idle = ((await commandRate(url, 6000)) - base) / ids.length;
  for (const id of ids) await call(ownerPort, "DELETE", `/v1/sessions/${id}`);
  const c = await call(ownerPort, "POST", "/v1/sessions", { model });
  const id = (JSON.parse(c.text) as { id: string }).id;
  const ws = new WebSocket(
    `ws://127.0.0.1:${otherPort}/v1/sessions/${id}/stream?every=10&fields=energy&maxFps=240`,
  );
  await new Promise((r) => ws.once("open", r));
  await call(ownerPort, "POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 });
  await new Promise((r) => setTimeout(r, 1000));
  const streamed = (await commandRate(url, 6000)) - base;
  ws.close();
  await call(ownerPort, "DELETE", `/v1/sessions/${id}`);
  return { base, idle, streamed };
}

export async function runClusterBench(): Promise<void> {
  const env = {
    WORKERS: "1",
    MAX_SESSIONS: "1000",
    LOG_LEVEL: "warn",
    CHECKPOINT_EVERY_STEPS: "1000",
  };
  let single: ServerProcess | null = null;
  let redis: RedisServer | null = null;
  const nodes: ServerProcess[] = [];
  try {
    single = await spawnServer(env);
    const oneRate = await churn([single.port], 60, 6);
    const lone = await call(single.port, "POST", "/v1/sessions", { model });
    const loneId = (JSON.parse(lone.text) as { id: string }).id;
    const oneState = await stateTimes(single.port, loneId, 400);
    const oneFrames = await frameLatency(single.port, single.port, 5);
    single.kill();
    await single.exited;
    single = null;

    redis = await startRedis();
    for (let i = 0; i < 3; i++)
      nodes.push(await spawnServer({ ...env, REDIS_URL: redis.url, NODE_ID: `n${i}` }));
    await new Promise((r) => setTimeout(r, 1500)); // every node sees the others' heartbeats
    const threeRate = await churn(
      nodes.map((n) => n.port),
      60,
      6,
    );
    const made = await call(nodes[0].port, "POST", "/v1/sessions", { model });
    const id = (JSON.parse(made.text) as { id: string }).id;
    // the owner: the node that answers without forwarding
    const ownerIndex = await (async () => {
      for (let i = 0; i < nodes.length; i++) {
        const r = await fetch(`${nodes[i].base}/v1/sessions/${id}`);
        if (r.headers.get("x-moreau-node") === `n${i}`) return i;
      }
      return 0;
    })();
    const ownerPort = nodes[ownerIndex].port;
    const otherPort = nodes[(ownerIndex + 1) % 3].port;
    const direct = await stateTimes(ownerPort, id, 400);
    const forwarded = await stateTimes(otherPort, id, 400);
    const sameNode = await frameLatency(ownerPort, ownerPort, 5);
    const otherNode = await frameLatency(ownerPort, otherPort, 5);

    const ops = await redisOps(redis.url, ownerPort, otherPort);

    console.log("\n## Cluster over Redis (issue 32): one server vs three nodes on this machine");
    console.table([
      {
        figure: "sessions/s created, stepped (100 steps) and deleted, 6 at a time",
        "one server": f(oneRate),
        "three nodes + Redis": f(threeRate),
      },
      {
        figure: "GET state p50 / p99 (ms), on the owner",
        "one server": `${f(oneState.p50)} / ${f(oneState.p99)}`,
        "three nodes + Redis": `${f(direct.p50)} / ${f(direct.p99)}`,
      },
      {
        figure: "GET state p50 / p99 (ms), through another node (forwarded)",
        "one server": "",
        "three nodes + Redis": `${f(forwarded.p50)} / ${f(forwarded.p99)}`,
      },
      {
        figure: "forwarding overhead p50 (ms)",
        "one server": "",
        "three nodes + Redis": f(forwarded.p50 - direct.p50),
      },
      {
        figure: "frame latency p50 / p99 (ms), subscriber on the owner",
        "one server": `${f(oneFrames.p50)} / ${f(oneFrames.p99)}`,
        "three nodes + Redis": `${f(sameNode.p50)} / ${f(sameNode.p99)}`,
      },
      {
        figure: "frame latency p50 / p99 (ms), subscriber on another node",
        "one server": "",
        "three nodes + Redis": `${f(otherNode.p50)} / ${f(otherNode.p99)}`,
      },
    ]);
    console.table([
      { figure: "Redis commands/s, three nodes, no session", value: f(ops.base) },
      { figure: "Redis commands/s per idle session", value: f(ops.idle) },
      {
        figure: "Redis commands/s per session run at real time, streamed at 100 frames/s",
        value: f(ops.streamed),
      },
    ]);
  } finally {
    single?.kill();
    for (const n of nodes) n.kill();
    await Promise.all(nodes.map((n) => n.exited));
    await redis?.stop();
  }
}
