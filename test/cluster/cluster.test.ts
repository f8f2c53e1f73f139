/**
 * Three Moreau node processes on 127.0.0.1 and one redis-server of this test's own
 * (test/support/redis.ts), no mocks: sessions made on any node are driven through any
 * other, bit-identical to a single server; quotas hold under concurrent creation across
 * nodes; a Redis restart leaves every node serving its own sessions (/ready degraded) and
 * the cluster heals; a node killed with SIGKILL has its sessions taken over from their last
 * checkpoint within the lease TTL plus a few seconds, no more than CHECKPOINT_EVERY_STEPS
 * steps behind what it had acknowledged, its subscribers resuming on another node without a
 * frame missing or twice; a frozen owner that comes back cannot write. Each node's /metrics
 * counts its forwards, takeovers, leases, fenced writes, frames and Redis's state.
 *
 * One cluster for the file (the tests run in order on what the previous ones left), short
 * leases and polls rather than fixed waits keep it short. Nothing here depends on the
 * machine's speed: every wait is on a condition, bounded generously (WAIT_MS, TAKEOVER_MS),
 * and the leases outlast the stalls a loaded machine gives a node's event loop (below).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { clothModel } from "../../bench/scenes";
import { EXAMPLES_DIR } from "../support/examples";
import { sample } from "../support/metrics";
import { callNode as call } from "../support/node-call";
import { type ServerProcess, spawnServer } from "../support/process";
import { type RedisServer, startRedis } from "../support/redis";
import { startServer, type TestServer } from "../support/server";
import { stateHash } from "../support/snapshot";
import { sleep, waitFor } from "../support/wait";

/**
 * The nodes' LEASE_TTL_MS (renewed every third of it). At 1500 ms a node under load (about
 * 17 on the 2 cores here) let the lease of the 10 000-particle cloth it was creating lapse:
 * its event loop, busy with the cloth's scene and checkpoint, went about 2 s without
 * renewing (Redis's PTTL polled: 1375 ms left, then none, then 1500 again), the orphan test
 * saw the session without a lease, and the 5 tests after it failed on what it left. 5 s
 * leaves the renewals 3 s of stall beyond their period.
 */
const LEASE_TTL_MS = 5000;
/**
 * How long a condition may take to come true here (frames arriving, a node noticing): far
 * more than it takes on an idle machine (well under a second), bounded.
 */
const WAIT_MS = 20_000;
/**
 * A dead node's sessions are running again elsewhere within this of its kill: its lease
 * expires LEASE_TTL_MS after its last renewal (before the kill), the survivors' scans run
 * every LEASE_TTL_MS / 2 and take an orphan at the second that sees it (node.ts), plus the
 * restore and the timers' lateness on a loaded machine.
 */
const TAKEOVER_MS = 2 * LEASE_TTL_MS + 5000;
const CHECKPOINT_EVERY = 100;
const MAX_SESSIONS = 12;
const model = JSON.parse(readFileSync(join(EXAMPLES_DIR, "double-pendulum.json"), "utf8"));

let redis: RedisServer;
let nodes: ServerProcess[] = [];
/**
 * The sessions the kill -9 test had taken over after their node's death: taken over again
 * within 60 s (their holder dead or frozen) they come back paused, by design
 * (takeover-resume-guard.test), so the frozen owner's test, which reads its takeover
 * running, takes none of them
 */
const diedWith = new Set<string>();
let single: TestServer;

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

/** A node's /metrics sample (labels as written, e.g. `name{a="b"}`); 0 when absent. */
async function metric(base: string, name: string): Promise<number> {
  const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(WAIT_MS) });
  const v = sample(await r.text(), name);
  return Number.isNaN(v) ? 0 : v;
}

/** A sample summed over nodes. */
async function sumOf(of: ServerProcess[], name: string): Promise<number> {
  let n = 0;
  for (const p of of) n += await metric(p.base, name);
  return n;
}

/** The nodes' log lines that name session `id`, for a failure's message. */
function logsAbout(of: ServerProcess[], id: string): string {
  return of
    .flatMap((p, i) =>
      p.lines.filter((l) => l.session === id).map((l) => `node ${i}: ${JSON.stringify(l)}`),
    )
    .join("\n");
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
    // a loaded machine's Redis may take over 2 s to confirm a write: then the run went on
    // (480 steps at 240 Hz) and a kill lost more than K acknowledged steps
    CHECKPOINT_WAIT_MS: "30000",
    MAX_SESSIONS: String(MAX_SESSIONS),
    STREAM_MAX_FPS: "1000",
  });
  // the nodes run the server bundled from the sources under test, as `npm run build` does
  // (test/support/global-setup.ts): a process starts in half the time it takes through
  // tsx's loader, the longest part of this file; through tsx when the bundle did not build
  const bundle = process.env.MOREAU_SERVER_BUNDLE;
  const command = bundle ? [process.execPath, bundle] : undefined;
  // one after the other: three starting together on a loaded 2-core machine can pass
  // Fastify's start-up timeout
  for (const i of [0, 1, 2]) nodes.push(await spawnServer(env(i), { command }));
  single = await startServer({});
  // every node sees the others' heartbeats
  await waitFor(
    async () => {
      const r = await Promise.all(nodes.map((n) => call(n.base, "GET", "/ready")));
      return r.every((a) => a.body.cluster?.nodes === 3);
    },
    WAIT_MS,
    50,
  );
}, 180_000);

afterAll(async () => {
  for (const n of nodes) n.kill();
  await Promise.all(nodes.map((n) => n.exited));
  await single?.app.close();
  await redis?.stop();
});

// each test waits on leases of LEASE_TTL_MS and on processes sharing a loaded machine
describe("a cluster of three nodes over Redis", { timeout: 180_000 }, () => {
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
      await waitFor(() => s.frames.length >= 1, WAIT_MS);
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
      await waitFor(() => s.frames.length >= 9, WAIT_MS);
      expect(s.frames.map((f) => f.step)).toEqual([0, 50, 100, 150, 200, 250, 300, 350, 400]);
      expectContiguous(s.frames.map((f) => f.seq));
      expect(s.frames[8].bodies?.map((x) => x.position)).toEqual(
        refState.bodies.map((x: { position: number[] }) => x.position),
      );
      s.ws.close();
      // a late subscriber resumes after seq 4 (step 150): the frames since, none twice
      const late = subscribe(a.base, id, "every=50&fields=bodies&from=4");
      await waitFor(() => late.frames.length >= 5, WAIT_MS);
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
    // every answer is a creation or a refusal by quota; anything else is shown whole (one
    // run in about ten on a loaded 2-core machine had an answer that was neither)
    const odd = answers
      .filter((a) => a.status !== 201 && a.status !== 429)
      .map((a) => ({ status: a.status, node: a.node, body: a.body }));
    expect(odd).toEqual([]);
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

  it("a session being created is never registered without a lease, which made it an orphan to the scans", async () => {
    // a 10 000-particle cloth (MAX_BODIES), about a second to parse and build: while it is
    // made, Redis is polled for registered sessions without a lease (the other nodes' scans
    // took those over, found no checkpoint and let them go: the creation answered 503)
    const before = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions.length;
    const db = new Redis(redis.url);
    // the sessions registered before are not the one being created: a lease of theirs that
    // lapsed meanwhile (seen at load 26 on the 2 cores here, every node starved past
    // LEASE_TTL_MS) is a node too slow to hold it, which a scan rightly takes over, not this bug
    const existing = new Set(Object.keys(await db.hgetall("moreau:sessions")));
    const orphans = new Set<string>();
    let polls = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const ids = Object.keys(await db.hgetall("moreau:sessions"));
        for (const id of ids)
          if (!existing.has(id) && !(await db.exists(`moreau:lease:${id}`))) orphans.add(id);
        polls++;
        await sleep(5);
      }
    })();
    const made = await call(
      nodes[2].base,
      "POST",
      "/v1/sessions",
      { model: clothModel({ n: 100 }) },
      60_000,
    );
    done = true;
    await poll;
    await db.quit();
    expect(made.status).toBe(201);
    expect(polls).toBeGreaterThan(10); // the creation lasted; the poll saw it through
    expect([...orphans]).toEqual([]);
    expect((await call(nodes[1].base, "DELETE", `/v1/sessions/${made.body.id}`)).status).toBe(204);
    // gone from every node's list before the next test
    await waitFor(
      async () =>
        (await Promise.all(nodes.map((n) => call(n.base, "GET", "/v1/sessions")))).every(
          (a) => a.status === 200 && a.body.sessions.length === before,
        ),
      WAIT_MS,
      50,
    );
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
      // bounded generously: on a loaded 2-core machine (the whole suite in parallel) the
      // nodes' timers and Redis's restart lag; the test is fast when they do not
      WAIT_MS,
      50,
    );
    const ready = await call(owner.base, "GET", "/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.cluster.degraded).toBe(true);
    expect(await metric(owner.base, "moreau_cluster_redis_up")).toBe(0);
    // the owner goes on serving the session, past its lease's TTL
    const down = Date.now();
    for (let i = 0; i < 4; i++) {
      // at 0, 600, 1200 and 1800 ms: the last one past the lease's TTL
      await sleep(Math.max(0, down + (i * (LEASE_TTL_MS + 300)) / 3 - Date.now()));
      const r = await call(owner.base, "POST", `/v1/sessions/${mine.id}/step`, { steps: 10 });
      expect(r.status).toBe(200);
    }
    // another node cannot tell where it lives
    const lost = await call(other.base, "GET", `/v1/sessions/${mine.id}`);
    expect(lost.status).toBe(503);
    expect(lost.body.error).toBe("cluster_unavailable");
    // Redis back, empty: leases, registry and checkpoints are re-established; meanwhile the
    // other node answers for the session 503 or, once back, waits for its owner's lease: never
    // 404 (it answered 404 until the owner's next renewal, and a POST /run right after this
    // test was refused so)
    await redis.start();
    const meanwhile = new Set<number>();
    await waitFor(
      async () => {
        const r = await call(other.base, "GET", `/v1/sessions/${mine.id}`);
        meanwhile.add(r.status);
        return r.status === 200 && r.node === mine.node;
      },
      30_000,
      100,
    );
    expect([...meanwhile].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    // each node re-registers its own sessions at its next lease renewal (every third of
    // LEASE_TTL_MS, on its own timer): the owner's is back, the others' follow within one;
    // a node that has not reconnected yet answers the list 503 (on a loaded machine the
    // probe read that answer's missing list and threw), and says so in /ready and /metrics
    // until it has, each on its own timer
    await waitFor(
      async () => {
        for (const n of nodes) {
          const list = await call(n.base, "GET", "/v1/sessions");
          if (list.status !== 200 || list.body.sessions.length !== 3) return false;
          const ready = await call(n.base, "GET", "/ready");
          if (ready.body.cluster?.redis !== "up" || ready.body.cluster?.degraded !== false)
            return false;
          if ((await metric(n.base, "moreau_cluster_redis_up")) !== 1) return false;
        }
        return true;
      },
      30_000 + WAIT_MS,
      100,
    );
    for (const n of nodes) {
      const r = await call(n.base, "GET", "/ready");
      expect(r.body.cluster).toMatchObject({ redis: "up", degraded: false });
      expect(await metric(n.base, "moreau_cluster_redis_up")).toBe(1);
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
    const survivors = nodes.filter((n) => n !== victim);
    const survivor = survivors[0];
    const theirs = where.filter((w) => w.node === where[0].node).map((w) => w.id);
    const watched = theirs[0];
    // one subscriber on a survivor, one on the victim (it reconnects elsewhere with ?from=)
    const q = "every=10&fields=energy&maxFps=1000";
    const steady = subscribe(survivor.base, watched, q);
    let moved = subscribe(victim.base, watched, q);
    const movedFrames = moved.frames;
    await Promise.all([steady.open, moved.open]);
    // the runs go on over a few checkpoint intervals (frames every 10 steps)
    await waitFor(
      () =>
        movedFrames.length > 0 &&
        movedFrames[movedFrames.length - 1].step - movedFrames[0].step >= 3 * CHECKPOINT_EVERY,
      WAIT_MS,
    );
    const expired = 'moreau_cluster_takeovers_total{cause="expired"}';
    const takeoversBefore = await sumOf(survivors, expired);
    // the step each of the victim's sessions had acknowledged just before the kill
    const acked = new Map<string, number>();
    for (const id of theirs)
      acked.set(id, (await call(victim.base, "GET", `/v1/sessions/${id}/state`)).body.step);
    const killedAt = Date.now();
    for (const id of theirs) diedWith.add(id);
    victim.kill();
    await victim.exited;
    nodes = survivors;
    // a request for one of its sessions right away, before the victim's heartbeat and lease
    // expire: the survivor's connection is refused, so it waits for the takeover and answers
    // (it had answered 503 "did not answer; retry")
    const first = await call(
      survivor.base,
      "GET",
      `/v1/sessions/${theirs[theirs.length - 1]}/state`,
    );
    expect(first.status).toBe(200);
    expect(first.node).not.toBe(where[0].node);
    expect(Date.now() - killedAt).toBeLessThan(TAKEOVER_MS);
    // and the frames of the watched one it had published (before any takeover: ≥ the TTL)
    const streamed = [...steady.frames, ...movedFrames].map((f) => f.step);
    acked.set(watched, Math.max(acked.get(watched) ?? 0, ...streamed));
    await waitFor(() => moved.closed(), WAIT_MS);
    const last = movedFrames[movedFrames.length - 1].seq;
    moved = subscribe(survivor.base, watched, `${q}&from=${last}`);
    // every session of the victim runs again on a survivor
    for (const id of theirs) {
      const back = await waitFor(
        async () => {
          const r = await call(survivor.base, "GET", `/v1/sessions/${id}`);
          return r.status === 200 && r.body.status === "running" ? r : null;
        },
        TAKEOVER_MS,
        50,
      );
      expect(Date.now() - killedAt).toBeLessThan(TAKEOVER_MS);
      expect(back.node).not.toBe(where[0].node);
      // resumed from its last checkpoint: a run's checkpoints are taken at the steps k·K
      // exactly (K = CHECKPOINT_EVERY_STEPS), so the step it resumes at (the taking node's
      // log says which) is a multiple of K; the run waits at k·K until Redis has that
      // checkpoint, so it is at most K steps behind what the victim had acknowledged (a
      // state answered, a frame published) — when the run had not waited, a kill during a
      // write lost the K steps before it too (once in a full-suite run: 110 behind)
      const line = await waitFor(
        () =>
          survivors
            .flatMap((n) => n.lines)
            .find(
              (l) => l.session === id && l.msg === "session taken over from its last checkpoint",
            ),
        WAIT_MS,
      );
      const resumed = line.step as number;
      expect(resumed % CHECKPOINT_EVERY).toBe(0);
      expect(resumed).toBeGreaterThan(0);
      expect((acked.get(id) ?? 0) - resumed).toBeLessThanOrEqual(CHECKPOINT_EVERY);
    }
    // the survivors' /metrics count these takeovers, each on the node that made it
    expect((await sumOf(survivors, expired)) - takeoversBefore).toBe(theirs.length);
    // the subscribers see the run go on: every seq once, in order, across the takeover
    await waitFor(() => steady.frames.length > 0 && moved.frames.length > 0, WAIT_MS);
    const seen = steady.frames[steady.frames.length - 1].seq;
    await waitFor(() => steady.frames[steady.frames.length - 1].seq >= seen + 30, WAIT_MS);
    await waitFor(() => moved.frames[moved.frames.length - 1].seq >= seen + 30, WAIT_MS);
    const steadySeqs = steady.frames.map((f) => f.seq);
    expectContiguous(steadySeqs, steadySeqs[0]);
    const movedSeqs = [...movedFrames, ...moved.frames].map((f) => f.seq);
    expectContiguous(movedSeqs, movedSeqs[0]);
    steady.ws.close();
    moved.ws.close();
  });

  it("a node's /metrics counts the requests it forwarded (by route and outcome), their round trips, leases and frames", async () => {
    const list = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions as {
      id: string;
    }[];
    const id = list[0].id;
    const ownerId = (await call(nodes[0].base, "GET", `/v1/sessions/${id}`)).node as string;
    const nodeId = async (n: ServerProcess) =>
      (await call(n.base, "GET", "/ready")).body.cluster.node as string;
    const ids = await Promise.all(nodes.map(nodeId));
    const owner = nodes[ids.indexOf(ownerId)];
    const other = nodes[ids.findIndex((x) => x !== ownerId)];
    const route = "/v1/sessions/:id/state";
    const forwarded = `moreau_cluster_forwarded_requests_total{route="${route}",outcome="answered"}`;
    const trips = `moreau_cluster_forward_duration_seconds_count{route="${route}"}`;
    const [f0, t0, o0] = [
      await metric(other.base, forwarded),
      await metric(other.base, trips),
      await metric(owner.base, forwarded),
    ];
    for (let i = 0; i < 5; i++) {
      const r = await call(other.base, "GET", `/v1/sessions/${id}/state`);
      expect([r.status, r.node]).toEqual([200, ownerId]);
    }
    expect((await metric(other.base, forwarded)) - f0).toBe(5);
    expect((await metric(other.base, trips)) - t0).toBe(5);
    // the owner served them: it forwarded none
    expect((await metric(owner.base, forwarded)) - o0).toBe(0);
    // both nodes alive, Redis up, leases renewed, frames through the logs. The node count is
    // that of a node's last heartbeat read, where the node killed by the test before stays
    // listed until its heartbeat expires: on a loaded machine that can outlast the
    // takeover that test waited for (seen once: 3 nodes counted), so it is awaited
    for (const n of nodes) {
      await waitFor(
        async () => (await metric(n.base, "moreau_cluster_nodes")) === 2,
        LEASE_TTL_MS + WAIT_MS,
        50,
      );
      expect(await metric(n.base, "moreau_cluster_redis_up")).toBe(1);
    }
    expect(
      await metric(owner.base, 'moreau_cluster_leases_total{event="renewed"}'),
    ).toBeGreaterThan(0);
    expect(await sumOf(nodes, "moreau_cluster_frames_published_total")).toBeGreaterThan(0);
    expect(await sumOf(nodes, "moreau_cluster_frames_relayed_total")).toBeGreaterThan(0);
  });

  it("a frozen owner that comes back cannot write: its lease was taken, its frames and checkpoints are fenced off", async () => {
    const list = (await call(nodes[0].base, "GET", "/v1/sessions")).body.sessions as {
      id: string;
    }[];
    const where = await Promise.all(
      list.map(async (s) => ({
        id: s.id,
        node: (await call(nodes[0].base, "GET", `/v1/sessions/${s.id}`)).node as string,
      })),
    );
    // a running session not taken over after a death within the last minute (diedWith),
    // or a new one, wherever it is placed; its owner a is frozen, b takes it over
    const target =
      where.find((w) => !diedWith.has(w.id)) ??
      (await (async () => {
        const made = await call(nodes[0].base, "POST", "/v1/sessions", { model });
        await call(nodes[0].base, "POST", `/v1/sessions/${made.body.id}/run`, {
          realtimeFactor: 1,
        });
        return { id: made.body.id as string, node: made.node as string };
      })());
    const ids = await Promise.all(
      nodes.map(async (n) => (await call(n.base, "GET", "/ready")).body.cluster.node as string),
    );
    const a = nodes[ids.indexOf(target.node)];
    const b = nodes.find((n) => n !== a) as ServerProcess;
    const bId = ids[nodes.indexOf(b)];
    const sub = subscribe(b.base, target.id, "every=10&fields=energy&maxFps=1000");
    await sub.open;
    await waitFor(() => sub.frames.length >= 5, WAIT_MS);
    // b takes it over from its last checkpoint in Redis, which must be one of the run's (a
    // run's checkpoint at each k·K holds the run, and the run waits there until Redis has
    // it): a session made just above has only its creation's, without the run, and on a
    // loaded machine a was frozen before its run reached the first k·K (b restored it
    // paused). Past the step it is at now, the checkpoint is the run's
    const session = () => call(a.base, "GET", `/v1/sessions/${target.id}`);
    const since = (await session()).body.step as number;
    await waitFor(async () => (await session()).body.checkpointStep > since, WAIT_MS, 20);
    const pid = a.child.pid as number;
    process.kill(pid, "SIGSTOP");
    try {
      // b takes the session over once a's lease expires
      const taken = await waitFor(
        async () => {
          const r = await probe(b.base, `/v1/sessions/${target.id}`);
          return r?.status === 200 && r.node === bId ? r : null;
        },
        TAKEOVER_MS,
        50,
      );
      // read `paused` once in CI, on d0b45c8: before 5cf3bd5 a probe that was in b's holder
      // lookup when b's scan claimed the session was served before its run was resumed
      // (takeover-request.test holds that path in process)
      expect(taken.body.status, logsAbout([a, b], target.id)).toBe("running");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // a, awake, finds its lease gone: it lets the session go and forwards to b
    await waitFor(
      async () => (await probe(a.base, `/v1/sessions/${target.id}`))?.node === bId,
      WAIT_MS,
      50,
    );
    await waitFor(() => a.output().includes("session let go"), WAIT_MS);
    // a counts the lease it lost (at its renewal, or when Redis refused a write of its)
    expect(
      await metric(a.base, 'moreau_cluster_leases_total{event="lost"}'),
    ).toBeGreaterThanOrEqual(1);
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

  it("an owner frozen past its lease loses the session to another node with every step it acknowledged", async () => {
    // the session, wherever placement put it, paused and stepped K + 7 steps: a step answer
    // waits for the checkpoint once K or more steps passed since the last (README,
    // Persistence), so the node taking it over has every step answered
    const made = await create(nodes[0].base);
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const where = await call(nodes[0].base, "GET", `/v1/sessions/${id}`);
    const ids = await Promise.all(
      nodes.map(async (n) => (await call(n.base, "GET", "/ready")).body.cluster.node as string),
    );
    const frozen = nodes[ids.indexOf(where.node as string)];
    const other = nodes.find((n) => n !== frozen) as ServerProcess;
    const steps = CHECKPOINT_EVERY + 7;
    const stepped = await call(other.base, "POST", `/v1/sessions/${id}/step`, { steps });
    expect(stepped.status).toBe(200);
    expect(stepped.body.step).toBe(steps);
    const status = (await call(other.base, "GET", `/v1/sessions/${id}`)).body.status as string;
    const pid = frozen.child.pid as number;
    process.kill(pid, "SIGSTOP");
    try {
      const taken = await waitFor(
        async () => {
          const r = await probe(other.base, `/v1/sessions/${id}`);
          return r?.status === 200 && r.node !== where.node ? r : null;
        },
        TAKEOVER_MS,
        50,
      );
      expect(taken.body.step).toBe(steps);
      expect(taken.body.status).toBe(status);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // the frozen node, awake, serves it no more: its requests go to the new owner
    const asked = await waitFor(
      async () => {
        const r = await probe(frozen.base, `/v1/sessions/${id}`);
        return r?.status === 200 && r.node !== where.node ? r : null;
      },
      WAIT_MS,
      50,
    );
    expect(asked.body.step).toBe(steps);
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
    await waitFor(() => sub.frames.length >= 5, WAIT_MS);
    // every session the leaving node holds is handed over to the one staying
    const all = (await call(staying.base, "GET", "/v1/sessions")).body.sessions as { id: string }[];
    const held = (
      await Promise.all(all.map((x) => call(staying.base, "GET", `/v1/sessions/${x.id}`)))
    ).filter((r) => r.node === owner).length;
    const handover = 'moreau_cluster_takeovers_total{cause="handover"}';
    const handedBefore = await metric(staying.base, handover);
    const code = await leaving.stop("SIGTERM", WAIT_MS);
    expect(code).toBe(0);
    const back = await waitFor(
      async () => {
        const r = await probe(staying.base, `/v1/sessions/${id}`);
        return r?.status === 200 && r.body.status === "running" ? r : null;
      },
      WAIT_MS,
      50,
    );
    expect(back.node).toBe(stayingId);
    await expect
      .poll(async () => (await metric(staying.base, handover)) - handedBefore, { timeout: WAIT_MS })
      .toBe(held);
    const at = sub.frames.length;
    await waitFor(() => sub.frames.length >= at + 20, WAIT_MS);
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
