/**
 * "No request may lose acknowledged work", for run and pause in a cluster: two node
 * processes over a redis-server of the test's own; the owner of a session is killed with
 * SIGKILL right after its answer to POST /run (202), and the other node takes the session
 * over from its checkpoint in Redis, running with the run's parameters — not from the
 * checkpoint before the run (paused), which a run answered before any checkpoint held it
 * left (until 2026-12-07: the run came back paused when the node died before the run's first
 * CHECKPOINT_EVERY_STEPS checkpoint). A pause answered 200 comes back paused at its step.
 *
 * Read through the physics: a falling body under moreau-jean θ = 1/2 integrates a constant
 * acceleration exactly, so at step n its velocity is v_z = −g n h whichever node stepped it.
 * CHECKPOINT_EVERY_STEPS is far beyond the steps taken here and CHECKPOINT_MIN_INTERVAL_MS
 * a minute: only the checkpoints that acknowledge a change are written.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { fallingBody } from "../support/models";
import { callNode as call } from "../support/node-call";
import { type ServerProcess, spawnServer } from "../support/process";
import { type RedisServer, startRedis } from "../support/redis";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
/** leases short enough for a takeover within seconds, long enough for a loaded machine */
const LEASE_TTL_MS = 4000;
const TAKEOVER_MS = 60_000;

let redis: RedisServer;
const nodes: ServerProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  const bundle = process.env.MOREAU_SERVER_BUNDLE;
  const command = bundle ? [process.execPath, bundle] : undefined;
  for (const i of [0, 1])
    nodes.push(
      await spawnServer(
        {
          REDIS_URL: redis.url,
          NODE_ID: `n${i}`,
          LEASE_TTL_MS: String(LEASE_TTL_MS),
          CHECKPOINT_EVERY_STEPS: "1000000",
          CHECKPOINT_MIN_INTERVAL_MS: "60000",
        },
        { command },
      ),
    );
  await waitFor(
    async () => (await call(nodes[0].base, "GET", "/ready")).body?.cluster?.nodes === 2,
    30_000,
    50,
  );
}, 120_000);

afterAll(async () => {
  for (const n of nodes) n.kill();
  await Promise.all(nodes.map((n) => n.exited));
  await redis?.stop();
});

it("a run answered 202 and a pause answered 200 survive a kill -9 of their node right after the answer", async () => {
  // two sessions owned by one node, a (placement spreads them: created until two are on one)
  const byNode = new Map<string, string[]>();
  let owner = "";
  for (let i = 0; !owner && i < 20; i++) {
    const r = await call(nodes[0].base, "POST", "/v1/sessions", {
      model: fallingBody({ name: `s${i}` }),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.id as string;
    const node = (await call(nodes[0].base, "GET", `/v1/sessions/${id}`)).node as string;
    byNode.set(node, [...(byNode.get(node) ?? []), id]);
    if (byNode.get(node)?.length === 2) owner = node;
  }
  const a = nodes[Number(owner.slice(1))];
  const b = nodes.find((n) => n !== a) as ServerProcess;
  const other = owner === "n0" ? "n1" : "n0";
  const mine = byNode.get(owner) as string[];
  const [running, paused] = mine;

  // paused: stepped 40 steps by a run, paused (200) at its answer's step
  let r = await call(a.base, "POST", `/v1/sessions/${paused}/run`, { realtimeFactor: null });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await waitFor(async () => (await call(a.base, "GET", `/v1/sessions/${paused}`)).body.step > 40);
  r = await call(a.base, "POST", `/v1/sessions/${paused}/pause`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const pausedAt = r.body.step as number;

  // running: a slow run (a tenth of real time, to t = 1000 s), the node killed at its 202
  r = await call(a.base, "POST", `/v1/sessions/${running}/run`, {
    realtimeFactor: 0.1,
    until: 1000,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const runAt = r.body.session.step as number;
  a.kill();
  expect(await a.exited).toBe(null);

  // node b takes both over from Redis (the lease of a expires)
  const seen = await waitFor(
    async () => {
      const q = await call(b.base, "GET", `/v1/sessions/${running}`).catch(() => null);
      return q?.status === 200 && q.node === other && !q.body.rebuilding ? q.body : null;
    },
    TAKEOVER_MS,
    100,
  );
  expect(seen.status).toBe("running");
  expect(seen.run).toMatchObject({ realtimeFactor: 0.1, until: 1000 });
  expect(seen.step).toBeGreaterThanOrEqual(runAt);

  const p = await waitFor(
    async () => {
      const q = await call(b.base, "GET", `/v1/sessions/${paused}`).catch(() => null);
      return q?.status === 200 && q.node === other ? q.body : null;
    },
    TAKEOVER_MS,
    100,
  );
  expect([p.status, p.step]).toEqual(["paused", pausedAt]);

  // the physics of both at the steps they hold: v_z = −g n h
  r = await call(b.base, "POST", `/v1/sessions/${running}/pause`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  for (const id of [running, paused]) {
    const s = await call(b.base, "POST", `/v1/sessions/${id}/step`, { steps: 1 });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    const ball = s.body.bodies.find((x: { id: string }) => x.id === "ball");
    expect(ball.velocity[2]).toBeCloseTo(-G * s.body.step * H, 9);
  }
}, 180_000);
