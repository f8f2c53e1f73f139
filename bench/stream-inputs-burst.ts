/**
 * A remote controller's inputs over one stream socket, bounded in time, on 127.0.0.1: the
 * server as its own process (node on src/server/main.ts through tsx), with DATA_DIR (a
 * temporary folder) and without. A rod with a torque actuator runs at real time (1 ms
 * steps); over one socket the client sends
 * - one-at-a-time: `{type:"inputs"}` messages, each after the previous answer (`serial`
 *   of them): the median time from a send to its answer;
 * - a burst: `rate` messages per second for `seconds` s, whatever the answers: how many were
 *   accepted (answered `inputs`) or refused (`too_many_commands`: MAX_PENDING_COMMANDS), the
 *   median and 90th percentile of the accepted ones' answer times, and accepted answers per
 *   second over the burst.
 * Each message holds one actuator command. Run: `npx tsx bench/stream-inputs-burst.ts`
 * (`--rate 500 --seconds 5 --serial 200`; `--cwd <checkout>` serves another checkout's
 * server, e.g. the code before a change).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import { servoRod } from "../test/support/models";
import { spawnServer } from "../test/support/process";

interface Answer {
  type: string;
  ref?: number;
  error?: string;
  step?: number;
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const quantile = (xs: number[], q: number) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function measure(dataDir: string | null, rate: number, seconds: number, serial: number) {
  const server = await spawnServer(dataDir ? { DATA_DIR: dataDir } : {}, { cwd });
  try {
    const model = servoRod(1, 1, { type: "torque" }, { dt: 0.001 });
    const created = await server.call("POST", "/v1/sessions", { model });
    if (created.status !== 201) throw new Error(created.text);
    const id = created.body.id as string;
    const ran = await server.call("POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 });
    if (ran.status !== 202) throw new Error(ran.text);
    const ws = new WebSocket(
      `${server.base.replace("http", "ws")}/v1/sessions/${id}/stream?every=1000000`,
    );
    const sentAt = new Map<number, number>();
    const took: number[] = [];
    let refused = 0;
    let other = 0;
    let last = -1;
    let outOfOrder = 0;
    let waiter: (() => void) | null = null;
    ws.on("message", (data) => {
      const m = JSON.parse(data.toString()) as Answer;
      if (m.type === "scene" || m.type === "state") return;
      if (m.type === "inputs" && m.ref !== undefined) {
        took.push(performance.now() - (sentAt.get(m.ref) ?? Number.NaN));
        if (m.ref < last) outOfOrder++;
        last = m.ref;
      } else if (m.error === "too_many_commands") refused++;
      else other++;
      waiter?.();
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    let ref = 0;
    const send = () => {
      const r = ref++;
      sentAt.set(r, performance.now());
      ws.send(
        JSON.stringify({
          type: "inputs",
          ref: r,
          inputs: [{ type: "actuator", id: "servo", value: Math.sin(r / 50) * 1e-3 }],
        }),
      );
    };
    // one at a time
    for (let i = 0; i < serial; i++) {
      const answered = new Promise<void>((resolve) => {
        waiter = resolve;
      });
      send();
      await answered;
    }
    waiter = null;
    const serialMedian = quantile(took, 0.5);
    took.length = 0;
    last = -1;
    // the burst: `rate` per second, on a 1 ms timer's ticks (sending what is due)
    const n = Math.round(rate * seconds);
    const first = ref;
    const start = performance.now();
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const due = Math.min(n, Math.floor(((performance.now() - start) * rate) / 1000));
        while (ref - first < due) send();
        if (ref - first >= n) {
          clearInterval(tick);
          resolve();
        }
      }, 1);
    });
    const sentFor = performance.now() - start;
    // every message answered
    const deadline = performance.now() + 30_000;
    while (took.length + refused + other < n && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const elapsed = performance.now() - start;
    ws.close();
    return {
      store: dataDir ? "DATA_DIR" : "none",
      serialMedianMs: +serialMedian.toFixed(2),
      sent: n,
      sentOverS: +(sentFor / 1000).toFixed(2),
      accepted: took.length,
      refused,
      other,
      outOfOrder,
      ackMedianMs: +quantile(took, 0.5).toFixed(1),
      ackP90Ms: +quantile(took, 0.9).toFixed(1),
      acksPerS: +(took.length / (elapsed / 1000)).toFixed(0),
    };
  } finally {
    await server.stop("SIGTERM", 5000);
  }
}

const cwdAt = process.argv.indexOf("--cwd");
const cwd = cwdAt >= 0 ? process.argv[cwdAt + 1] : undefined;
const rate = arg("rate", 500);
const seconds = arg("seconds", 5);
const serial = arg("serial", 200);
const dir = mkdtempSync(join(tmpdir(), "moreau-burst-"));
try {
  console.log(JSON.stringify(await measure(dir, rate, seconds, serial)));
  console.log(JSON.stringify(await measure(null, rate, seconds, serial)));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
