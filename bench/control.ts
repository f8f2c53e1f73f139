/**
 * Control-loop benchmark (issue 25), bounded in time, on 127.0.0.1, against a server
 * process as `npm start` runs it (bench/server-load.ts startServer).
 *
 * The server runs with STREAM_MAX_FPS=2000 so the clients may ask for twice their frame
 * rate (maxFps = 2000/every; at exactly the rate, jitter would hold frames back).
 *
 * The scene: the cart-pole of test/support/models.ts (2 bodies, a prismatic and a revolute
 * joint, an effort actuator on the cart; sensors x, θ and the actuator's effort, so the
 * effort is observation[2]) stepped at 1 kHz (h = 1 ms, real time), streamed as msgpack
 * with `fields=observation`.
 *
 * 1. Round-trip latency: one session, a client subscribed to every frame sends an input
 *    (an actuator effort) on the socket and waits for the first frame whose observation
 *    shows it (the actuator-effort sensor equals the value sent): the wall time from the
 *    send to that frame's arrival, p50 / p99 over `rounds` inputs, one every 10 ms.
 * 2. Sessions at 100 Hz: n sessions each run at real time with a client closing a 100 Hz
 *    loop (every = 10: a frame each 10 ms, answered at once with an input, as a controller
 *    would). A level passes when no run fell behind real time (no lag reset) and at least
 *    99 % of the inputs show in the very next frame (they arrived within their control
 *    period; the round trip is then about one period, 10 ms, by construction).
 *    n doubles from 1 until a level fails; the table reports every level.
 */
import { pack, unpack } from "msgpackr";
import { WebSocket } from "ws";
import { cartPoleModel } from "../test/support/models";
import { call, quantile, startServer } from "./server-load";

const model = cartPoleModel({ dt: 0.001, sensors: ["x", "theta", "effort"] });

interface Loop {
  latencies: number[];
  /** Inputs shown by the very next frame after the one they answered (in time for it). */
  onTime: number;
  done: Promise<void>;
}

/**
 * A client on session `id` that, on every `every`-th frame, sends a new effort and times
 * the wait for the frame showing it, `rounds` times (a frame arriving while waiting only
 * ends the wait when it shows the value).
 */
async function controlClient(
  port: number,
  id: string,
  every: number,
  rounds: number,
): Promise<Loop> {
  // twice the loop's frame rate (the default cap is STREAM_FPS = 60 frames/s)
  const ws = new WebSocket(
    `ws://127.0.0.1:${port}/v1/sessions/${id}/stream?format=msgpack&fields=observation&every=${every}&maxFps=${2000 / every}`,
  );
  await new Promise((r, j) => {
    ws.once("open", r);
    ws.once("error", j);
  });
  const latencies: number[] = [];
  const loop = { latencies, onTime: 0, done: Promise.resolve() };
  let waiting: { value: number; t0: number; frames: number } | null = null;
  let k = 0;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    finish = r;
  });
  ws.on("message", (data: Buffer) => {
    const m = unpack(data) as { type: string; observation?: number[] };
    if (m.type !== "state" || !m.observation) return;
    const now = performance.now();
    if (waiting) {
      waiting.frames++;
      if (m.observation[2] === waiting.value) {
        latencies.push(now - waiting.t0);
        if (waiting.frames === 1) loop.onTime++;
        waiting = null;
      }
    }
    if (waiting === null) {
      if (latencies.length >= rounds) {
        ws.close();
        finish();
        return;
      }
      // a new value each time (alternating sign keeps the cart near the middle)
      const value = (k++ % 2 === 0 ? 1 : -1) * (1 + (k % 7) / 8);
      waiting = { value, t0: performance.now(), frames: 0 };
      ws.send(pack({ type: "inputs", inputs: [{ type: "actuator", id: "push", value }] }));
    }
  });
  loop.done = done;
  return loop;
}

async function createRunning(port: number): Promise<string> {
  const r = await call(port, "POST", "/v1/sessions", { model });
  const id = JSON.parse(r.text).id as string;
  await call(port, "POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 });
  return id;
}

async function lagResets(port: number, ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) {
    const s = JSON.parse((await call(port, "GET", `/v1/sessions/${id}`)).text);
    n += s.run?.lagResets ?? 0;
  }
  return n;
}

export async function runControlBench(
  opts: { rounds?: number; maxSessions?: number; workers?: number } = {},
) {
  const rounds = opts.rounds ?? 300;
  const workers = opts.workers ?? 2;
  // a 1 kHz client asking for 2000 frames/s needs STREAM_MAX_FPS ≥ 2000 (default 240)
  const { child, port } = await startServer(workers, 1000, { STREAM_MAX_FPS: "2000" });
  try {
    // 1. one session, every frame
    const id = await createRunning(port);
    await new Promise((r) => setTimeout(r, 500));
    const one = await controlClient(port, id, 1, rounds);
    await one.done;
    const lat = [...one.latencies].sort((a, b) => a - b);
    console.log(
      "\n## Control round trip: input → first frame showing it (1 session, 1 kHz stepping)",
    );
    console.table([
      {
        rounds: lat.length,
        "p50 ms": quantile(lat, 0.5).toPrecision(3),
        "p99 ms": quantile(lat, 0.99).toPrecision(3),
        "max ms": lat[lat.length - 1].toPrecision(3),
      },
    ]);
    await call(port, "DELETE", `/v1/sessions/${id}`);
    // 2. n sessions with a 100 Hz loop each
    const rows: Record<string, string | number>[] = [];
    for (let n = 1; n <= (opts.maxSessions ?? 64); n *= 2) {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(await createRunning(port));
      await new Promise((r) => setTimeout(r, 500));
      const before = await lagResets(port, ids);
      const loops = await Promise.all(ids.map((s) => controlClient(port, s, 10, 100)));
      await Promise.race([
        Promise.all(loops.map((l) => l.done)),
        new Promise((r) => setTimeout(r, 20_000)),
      ]);
      const behind = (await lagResets(port, ids)) - before;
      const all = loops.flatMap((l) => l.latencies).sort((a, b) => a - b);
      const onTime = loops.reduce((k, l) => k + l.onTime, 0) / Math.max(1, all.length);
      const pass = behind === 0 && onTime >= 0.99 && all.length === 100 * n;
      rows.push({
        sessions: n,
        "steps/s (total)": 1000 * n,
        "round trips": all.length,
        "in the next frame": `${(100 * onTime).toFixed(1)} %`,
        "p50 ms": quantile(all, 0.5).toPrecision(3),
        "p99 ms": quantile(all, 0.99).toPrecision(3),
        "runs fallen behind": behind,
        "100 Hz loops held": pass ? "yes" : "no",
      });
      for (const s of ids) await call(port, "DELETE", `/v1/sessions/${s}`);
      if (!pass) break;
    }
    console.log(
      `\n## Sessions each closing a 100 Hz control loop (${workers} workers, 1 kHz stepping each)`,
    );
    console.table(rows);
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => {
      if (child.exitCode !== null) r(null);
      else child.once("exit", r);
      setTimeout(() => {
        child.kill("SIGKILL");
        r(null);
      }, 10_000).unref();
    });
  }
}
