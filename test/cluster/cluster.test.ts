/**
 * Three Moreau node processes on 127.0.0.1 and one redis-server of this test's own
 * (test/support/redis.ts), no mocks: sessions made on any node are driven through any
 * other, bit-identical to a single server; quotas hold under concurrent creation across
 * nodes; a Redis restart leaves every node serving its own sessions (/ready degraded) and
 * the cluster heals; a node killed with SIGKILL has its sessions taken over from their last
 * checkpoint within the lease TTL plus a few seconds, its subscribers resuming on another
 * node without a frame missing or twice; a frozen owner that comes back cannot write.
 *
 * Short leases (LEASE_TTL_MS 1500) keep the file within about half a minute.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { PROGRESS_MS } from "../../src/server/protocol";
import { EXAMPLES_DIR } from "../support/examples";
import { type ServerProcess, spawnServer } from "../support/process";
import { type RedisServer, startRedis } from "../support/redis";
import { startServer, type TestServer } from "../support/server";
import { stateHash } from "../support/snapshot";
import { sleep, waitFor } from "../support/wait";

const LEASE_TTL_MS = 1500;
const CHECKPOINT_EVERY = 100;
const MAX_SESSIONS = 12;
const model = JSON.parse(readFileSync(join(EXAMPLES_DIR, "double-pendulum.json"), "utf8"));
/** the model's step (s) */
const DT: number = model.solver.dt;

let redis: RedisServer;
let nodes: ServerProcess[] = [];
let single: TestServer;

interface Answer {
  status: number;
  node: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: answers of any shape, read by the test
  body: any;
}

async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 30_000,
): Promise<Answer> {
  const r = await fetch(`${base}${path}`, {
    signal: AbortSignal.timeout(timeoutMs),
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return {
    status: r.status,
    node: r.headers.get("x-moreau-node"),
    body: text && r.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null,
  };
}

/** `call` with a short time limit, null when it passes or fails (a node frozen meanwhile). */
const probe = (base: string, path: string) =>
  call(base, "GET", path, undefined, 1000).catch(() => null);

const create = (base: string) => call(base, "POST", "/v1/sessions", { model });

/** A stream's frames, with the scene frame apart. */
function subscribe(base: string, id: string, query: string) {
  const frames: { seq: number; step: number; bodies?: { position: number[] }[] }[] = [];
  let closed = false;
  const ws = new WebSocket(`${base.replace("http", "ws")}/v1/sessions/${id}/stream?${query}`);
  ws.on("message", (d) => {
    const f = JSON.parse(String(d));
    if (f.type === "state") frames.push(f);
  });
  ws.on("close", () => {
    closed = true;
  });
  ws.on("error", () => undefined);
  const open = new Promise((res, rej) => {
    ws.once("open", res);
    ws.once("error", rej);
  });
  return { ws, frames, open, closed: () => closed };
}

/** Seqs 1…n each once, in order. */
function expectContiguous(seqs: number[], first = 1): void {
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first + i));
}

beforeAll(async () => {
  redis = await startRedis();
  const env = (i: number) => ({
    REDIS_URL: redis.url,
    NODE_ID: `n${i}`,
    LEASE_TTL_MS: String(LEASE_TTL_MS),
    CHECKPOINT_EVERY_STEPS: String(CHECKPOINT_EVERY),
    CHECKPOINT_MIN_INTERVAL_MS: "0",
    MAX_SESSIONS: String(MAX_SESSIONS),
    STREAM_MAX_FPS: "1000",
  });
  // one after the other: three starting together on a loaded 2-core machine can pass
  // Fastify's start-up timeout
  for (const i of [0, 1, 2]) nodes.push(await spawnServer(env(i)));
  single = await startServer({});
  // every node sees the others' heartbeats
  await waitFor(
    async () => {
      const r = await Promise.all(nodes.map((n) => call(n.base, "GET", "/ready")));
      return r.every((a) => a.body.cluster?.nodes === 3);
    },
    10_000,
    50,
  );
}, 60_000);

afterAll(async () => {
  for (const n of nodes) n.kill();
  await Promise.all(nodes.map((n) => n.exited));
  await single?.app.close();
  await redis?.stop();
});

describe("a cluster of three nodes over Redis", () => {
  it("sessions made through any node are stepped, streamed and snapshotted through any other, bit-identical to a single server", async () => {
    // the reference: the same model and steps on one server without Redis
    const ref = await create(single.url);
    await call(single.url, "POST", `/v1/sessions/${ref.body.id}/step`, { steps: 400 });
    const refDoc = (await call(single.url, "GET", `/v1/sessions/${ref.body.id}/snapshot`)).body;
    const refState = (await call(single.url, "GET", `/v1/sessions/${ref.body.id}/state`)).body;

    const owners = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const [a, b, c] = [nodes[i], nodes[(i + 1) % 3], nodes[(i + 2) % 3]];
      const made = await create(a.base);
      expect(made.status).toBe(201);
      const id = made.body.id;
      const owner = (await call(a.base, "GET", `/v1/sessions/${id}`)).node as string;
      owners.add(owner);
      // streamed through c, stepped through b in two requests
      const s = subscribe(c.base, id, "every=50&fields=bodies");
      await s.open;
      // the current state (step 0) comes first
      await waitFor(() => s.frames.length >= 1, 5000);
      const st1 = await call(b.base, "POST", `/v1/sessions/${id}/step`, { steps: 150 });
      const st2 = await call(b.base, "POST", `/v1/sessions/${id}/step`, { steps: 250 });
      expect([st1.status, st2.status]).toEqual([200, 200]);
      expect(st2.node).toBe(owner);
      // the State answered through b, the snapshot through c: the single server's, bit for bit
      expect(st2.body.bodies).toEqual(refState.bodies);
      const doc = (await call(c.base, "GET", `/v1/sessions/${id}/snapshot`)).body;
      expect(stateHash(doc)).toBe(stateHash(refDoc));
      expect(doc.simulation.state).toEqual(refDoc.simulation.state);
      // every frame once, in order: steps 0, 50, …, 400 with seqs 1…9
      await waitFor(() => s.frames.length >= 9, 5000);
      expect(s.frames.map((f) => f.step)).toEqual([0, 50, 100, 150, 200, 250, 300, 350, 400]);
      expectContiguous(s.frames.map((f) => f.seq));
      expect(s.frames[8].bodies?.map((x) => x.position)).toEqual(
        refState.bodies.map((x: { position: number[] }) => x.position),
      );
      s.ws.close();
      // a late subscriber resumes after seq 4 (step 150): the frames since, none twice
      const late = subscribe(a.base, id, "every=50&fields=bodies&from=4");
      await waitFor(() => late.frames.length >= 5, 5000);
      await sleep(100);
      expect(late.frames.map((f) => f.seq)).toEqual([5, 6, 7, 8, 9]);
      late.ws.close();
    }
    // placed on more than one node (the least loaded each time)
    expect(owners.size).toBeGreaterThan(1);
    // every node lists the three
    for (const n of nodes) {
      const list = await call(n.base, "GET", "/v1/sessions");
      expect(list.body.sessions).toHaveLength(3);
    }
  });

  it("quotas hold under concurrent creation across nodes (MAX_SESSIONS for the cluster)", async () => {
    const before = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions.length;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => create(nodes[i % 3].base)),
    );
    const created = answers.filter((a) => a.status === 201).length;
    expect(created).toBe(MAX_SESSIONS - before);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(30 - created);
    for (const a of answers.filter((x) => x.status === 429))
      expect(a.body.error).toBe("too_many_sessions");
    const list = await call(nodes[1].base, "GET", "/v1/sessions");
    expect(list.body.sessions).toHaveLength(MAX_SESSIONS);
    // delete all but 3, through any node
    const extra = list.body.sessions.slice(3) as { id: string }[];
    const deleted = await Promise.all(
      extra.map((s, i) => call(nodes[i % 3].base, "DELETE", `/v1/sessions/${s.id}`)),
    );
    expect(deleted.every((d) => d.status === 204)).toBe(true);
    expect((await call(nodes[2].base, "GET", "/v1/sessions")).body.sessions).toHaveLength(3);
  });

  it("Redis killed and restarted: each node serves its own sessions, /ready says degraded, the cluster heals", async () => {
    const list = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions as {
      id: string;
    }[];
    const where = await Promise.all(
      list.map(async (s) => ({
        id: s.id,
        node: (await call(nodes[0].base, "GET", `/v1/sessions/${s.id}`)).node,
      })),
    );
    const mine = where.find((w) => w.node !== null) as { id: string; node: string };
    const owner = nodes[Number(mine.node.slice(1))];
    const other = nodes.find((n) => n !== owner) as ServerProcess;
    await redis.kill();
    await waitFor(
      async () => (await call(owner.base, "GET", "/ready")).body.cluster.redis === "down",
      5000,
      50,
    );
    const ready = await call(owner.base, "GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.cluster.degraded).toBe(true);
    // the owner goes on serving the session, past its lease's TTL
    for (let i = 0; i < 4; i++) {
      const r = await call(owner.base, "POST", `/v1/sessions/${mine.id}/step`, { steps: 10 });
      expect(r.status).toBe(200);
      await sleep(LEASE_TTL_MS / 2);
    }
    // another node cannot tell where it lives
    const lost = await call(other.base, "GET", `/v1/sessions/${mine.id}`);
    expect(lost.status).toBe(503);
    expect(lost.body.error).toBe("cluster_unavailable");
    // Redis back, empty: leases, registry and checkpoints are re-established
    await redis.start();
    await waitFor(
      async () => {
        const r = await call(other.base, "GET", `/v1/sessions/${mine.id}`);
        return r.status === 200 && r.node === mine.node;
      },
      10_000,
      100,
    );
    for (const n of nodes) {
      const r = await call(n.base, "GET", "/ready");
      expect(r.body.cluster).toMatchObject({ redis: "up", degraded: false });
      expect((await call(n.base, "GET", "/v1/sessions")).body.sessions).toHaveLength(3);
    }
  });

  it("kill -9 of a node during runs: its sessions resume on the others from their last checkpoint, subscribers go on without a frame missing or twice", async () => {
    const list = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions as {
      id: string;
    }[];
    for (const s of list)
      expect(
        (await call(nodes[2].base, "POST", `/v1/sessions/${s.id}/run`, { realtimeFactor: 1 }))
          .status,
      ).toBe(202);
    const where = await Promise.all(
      list.map(async (s) => ({
        id: s.id,
        node: (await call(nodes[0].base, "GET", `/v1/sessions/${s.id}`)).node as string,
      })),
    );
    const victim = nodes[Number(where[0].node.slice(1))];
    const survivor = nodes.find((n) => n !== victim) as ServerProcess;
    const theirs = where.filter((w) => w.node === where[0].node).map((w) => w.id);
    const watched = theirs[0];
    // one subscriber on a survivor, one on the victim (it reconnects elsewhere with ?from=)
    const q = "every=10&fields=energy&maxFps=1000";
    const steady = subscribe(survivor.base, watched, q);
    let moved = subscribe(victim.base, watched, q);
    const movedFrames = moved.frames;
    await Promise.all([steady.open, moved.open]);
    await sleep(700);
    // the exact step of each of the victim's sessions just before the kill
    const before = new Map<string, number>();
    for (const id of theirs)
      before.set(id, (await call(victim.base, "GET", `/v1/sessions/${id}/state`)).body.step);
    const killedAt = Date.now();
    victim.kill();
    await victim.exited;
    nodes = nodes.filter((n) => n !== victim);
    await waitFor(() => moved.closed(), 5000);
    const last = movedFrames[movedFrames.length - 1].seq;
    moved = subscribe(survivor.base, watched, `${q}&from=${last}`);
    // every session of the victim runs again on a survivor
    for (const id of theirs) {
      const back = await waitFor(
        async () => {
          const r = await call(survivor.base, "GET", `/v1/sessions/${id}`);
          return r.status === 200 && r.body.status === "running" ? r : null;
        },
        LEASE_TTL_MS + 5000,
        50,
      );
      expect(Date.now() - killedAt).toBeLessThan(LEASE_TTL_MS + 3000);
      expect(back.node).not.toBe(where[0].node);
      // resumed from its last checkpoint. The event loop learns a run's step from the
      // worker's progress events (every PROGRESS_MS of wall time) and checkpoints once
      // CHECKPOINT_EVERY_STEPS have passed: checkpoints are at most the interval plus one
      // progress period apart (at real time, PROGRESS_MS / dt steps), plus the steps run
      // while one is exported and written (20 ms here)
      const restored = back.body.checkpointStep as number;
      const lost = (before.get(id) ?? 0) - restored;
      const perProgress = Math.ceil(PROGRESS_MS / 1000 / DT);
      expect(lost).toBeLessThanOrEqual(CHECKPOINT_EVERY + perProgress + Math.ceil(0.02 / DT));
    }
    // the subscribers see the run go on: every seq once, in order, across the takeover
    await waitFor(() => steady.frames.length > 0 && moved.frames.length > 0, 5000);
    const seen = steady.frames[steady.frames.length - 1].seq;
    await waitFor(() => steady.frames[steady.frames.length - 1].seq >= seen + 30, 10_000);
    await waitFor(() => moved.frames[moved.frames.length - 1].seq >= seen + 30, 10_000);
    const steadySeqs = steady.frames.map((f) => f.seq);
    expectContiguous(steadySeqs, steadySeqs[0]);
    const movedSeqs = [...movedFrames, ...moved.frames].map((f) => f.seq);
    expectContiguous(movedSeqs, movedSeqs[0]);
    steady.ws.close();
    moved.ws.close();
  });

  it("a frozen owner that comes back cannot write: its lease was taken, its frames and checkpoints are fenced off", async () => {
    const [a, b] = nodes;
    const list = (await call(a.base, "GET", "/v1/sessions")).body.sessions as { id: string }[];
    const where = await Promise.all(
      list.map(async (s) => ({
        id: s.id,
        node: (await call(a.base, "GET", `/v1/sessions/${s.id}`)).node,
      })),
    );
    const aId = (await call(a.base, "GET", "/ready")).body.cluster.node as string;
    const bId = (await call(b.base, "GET", "/ready")).body.cluster.node as string;
    const target =
      where.find((w) => w.node === aId) ??
      (await (async () => {
        // a session of a's own
        const made = await call(a.base, "POST", "/v1/sessions", { model });
        await call(a.base, "POST", `/v1/sessions/${made.body.id}/run`, { realtimeFactor: 1 });
        return { id: made.body.id as string, node: aId };
      })());
    const sub = subscribe(b.base, target.id, "every=10&fields=energy&maxFps=1000");
    await sub.open;
    await sleep(500);
    const pid = a.child.pid as number;
    process.kill(pid, "SIGSTOP");
    try {
      // b takes the session over once a's lease expires
      const taken = await waitFor(
        async () => {
          const r = await probe(b.base, `/v1/sessions/${target.id}`);
          return r?.status === 200 && r.node === bId ? r : null;
        },
        LEASE_TTL_MS + 5000,
        50,
      );
      expect(taken.body.status).toBe("running");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // a, awake, finds its lease gone: it lets the session go and forwards to b
    await waitFor(
      async () => (await probe(a.base, `/v1/sessions/${target.id}`))?.node === bId,
      10_000,
      50,
    );
    await waitFor(() => a.output().includes("session let go"), 5000);
    await sleep(500);
    // no frame of a's after b's first: the steps go back at most once (b restoring a's
    // last checkpoint) and then only on; a's frames mixed in would go back and forth
    const frames = sub.frames;
    const back = frames.filter((f, i) => i > 0 && f.step < frames[i - 1].step);
    expect(back.length).toBeLessThanOrEqual(1);
    expectContiguous(
      frames.map((f) => f.seq),
      frames[0].seq,
    );
    sub.ws.close();
  });

  it("SIGTERM drains a node: its sessions are handed over and run on elsewhere, no step lost", async () => {
    const [a, b] = nodes;
    const aId = (await call(a.base, "GET", "/ready")).body.cluster.node as string;
    const bId = (await call(b.base, "GET", "/ready")).body.cluster.node as string;
    // a running session; the node that owns it leaves, the other stays and watches
    const made = await call(a.base, "POST", "/v1/sessions", { model });
    const id = made.body.id as string;
    const owner = (await call(a.base, "GET", `/v1/sessions/${id}`)).node;
    const [leaving, staying] = owner === aId ? [a, b] : [b, a];
    const stayingId = owner === aId ? bId : aId;
    expect(
      (await call(staying.base, "POST", `/v1/sessions/${id}/run`, { realtimeFactor: 1 })).status,
    ).toBe(202);
    const sub = subscribe(staying.base, id, "every=10&fields=energy&maxFps=1000");
    await sub.open;
    await sleep(500);
    const code = await leaving.stop("SIGTERM");
    expect(code).toBe(0);
    const back = await waitFor(
      async () => {
        const r = await probe(staying.base, `/v1/sessions/${id}`);
        return r?.status === 200 && r.body.status === "running" ? r : null;
      },
      5000,
      50,
    );
    expect(back.node).toBe(stayingId);
    const at = sub.frames.length;
    await waitFor(() => sub.frames.length >= at + 20, 5000);
    // not a step back: the run goes on from where the drained node paused it
    const steps = sub.frames.map((f) => f.step);
    for (let i = 1; i < steps.length; i++) expect(steps[i]).toBeGreaterThanOrEqual(steps[i - 1]);
    expectContiguous(
      sub.frames.map((f) => f.seq),
      sub.frames[0].seq,
    );
    sub.ws.close();
    nodes = [staying];
  });
});
