/**
 * A cluster node's checkpoints (REDIS_URL, cluster/redis.ts RedisSnapshotStore) keep a
 * session's recorded inputs as DATA_DIR's do (persistence.ts): an append-only list
 * (inputs:<sid>, one JSON line an element) to which each checkpoint adds the inputs
 * applied since the previous one, its document holding only the pending ones. Until
 * 2026-12-07 every checkpoint sent and stored the whole recording (about 90 bytes more per
 * input here). The recording read back — after a worker loss's rebuild and after the node's
 * restart, another node taking the session over from its checkpoint — replays to the live
 * state bit for bit. A node in this process on a redis-server of the test's own; real
 * worker threads; a double pendulum (chaotic: an input missed, doubled or reordered shows).
 * A whole log rewritten at once (100 000 inputs from line 0: a checkpoint after a failed
 * write resends the log) lands whole and in order, pushed by the script in batches of 1000
 * (Redis's own count of RPUSH calls: 100; until 2026-12-07 one RPUSH a line, 100 000).
 */
import { Redis } from "ioredis";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisSnapshotStore } from "../../src/server/cluster/redis";
import { hingedRods } from "../support/models";
import { motion, postInputs, replayed, rodImpulse, stepBy } from "../support/recordings";
import { type RedisServer, startRedis } from "../support/redis";
import { startServer, type TestServer } from "../support/server";
import { waitFor } from "../support/wait";

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };

let redis: RedisServer;
let direct: Redis;
beforeAll(async () => {
  redis = await startRedis();
  direct = new Redis(redis.url);
});
afterAll(async () => {
  direct?.disconnect();
  await redis?.stop();
});

/** A node of the cluster on the test's Redis (its own worker, short leases). */
const node = (nodeId: string) =>
  startServer({ workers: 1, redisUrl: redis.url, nodeId, testHooks: true, leaseTtlMs: 3000 });

describe("a cluster node's checkpoints", () => {
  it("send the inputs since the previous checkpoint only; the recording replays after a worker loss and a node restart", async () => {
    let server: TestServer = await node("a");
    let api = () => request(server.app.server);
    try {
      const store = server.app.moreau.sessions.store as RedisSnapshotStore;
      const id = (await api().post("/v1/sessions").send({ model }).expect(201)).body.id;
      const N = 60;
      // per input: the bytes its acknowledged checkpoint sent (the store's count) and the
      // stored document's length (Redis's own: HSTRLEN)
      const sent: number[] = [];
      const stored: number[] = [];
      for (let k = 0; k < N; k++) {
        const before = store.bytesWritten;
        await postInputs(api, id, [rodImpulse(0.01 * (k + 1))]);
        sent.push(store.bytesWritten - before);
        stored.push(await direct.hstrlen(`moreau:snap:${id}`, "doc"));
        await stepBy(api, id, 1);
      }
      const rec = (await api().get(`/v1/sessions/${id}/recording`).expect(200)).body;
      expect(rec.inputs).toHaveLength(N);
      const line = (k: number) => Buffer.byteLength(`${JSON.stringify(rec.inputs[k])}\n`);
      // the document of the 60th input's checkpoint is the 10th's (but the digits of its
      // time, step and dates): before, it held every input so far, ~50 × 90 bytes more
      expect(Math.abs(stored[N - 1] - stored[9])).toBeLessThan(64);
      expect(sent[N - 1] - sent[9]).toBeLessThan(64 + line(N - 1) - line(9));
      // the list holds each applied input once, in order
      const list = await direct.lrange(`moreau:inputs:${id}`, 0, -1);
      expect(list.map((l) => JSON.parse(l))).toEqual(rec.inputs);

      // a worker loss: rebuilt from the checkpoint (its inputs read back from the list)
      const m = server.app.moreau.sessions;
      await postInputs(api, id, [rodImpulse(-1.5)], 80);
      await m.pool.killForTest(0);
      await waitFor(
        async () =>
          ((await api().get(`/v1/sessions/${id}`)).body.message ?? "").startsWith("restored"),
        20_000,
      );
      await m.rebuilt();
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(N);
      await stepBy(api, id, 25);
      await postInputs(api, id, [rodImpulse(0.7)]);
      await stepBy(api, id, 10);
      await server.app.close();

      // the node restarted: it takes the session over from its checkpoint
      server = await node("b");
      api = () => request(server.app.server);
      await waitFor(async () => (await api().get(`/v1/sessions/${id}`)).status === 200, 30_000);
      expect((await api().get(`/v1/sessions/${id}`).expect(200)).body.step).toBe(N + 35);
      await postInputs(api, id, [rodImpulse(-0.4)]);
      const live = await stepBy(api, id, 20);
      const { rec: all, state, hash } = await replayed(api, id);
      expect(all.inputs.map((e: { step: number }) => e.step)).toEqual([
        ...Array.from({ length: N }, (_, k) => k),
        80,
        N + 25,
        N + 35,
      ]);
      expect(hash).toBe(all.end.hash);
      expect(motion(state)).toEqual(motion(live));
      expect(await direct.llen(`moreau:inputs:${id}`)).toBe(N + 3);
    } finally {
      await server.app.close();
    }
  }, 120_000);
});

/** Redis's count of RPUSH calls since its start (INFO commandstats; a script's calls count). */
async function rpushCalls(): Promise<number> {
  const info = await direct.info("commandstats");
  return Number(/cmdstat_rpush:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

describe("a checkpoint that rewrites its session's whole input log", () => {
  it("lands 100 000 lines whole and in order, in RPUSH batches of 1000", async () => {
    const store = new RedisSnapshotStore(direct, "big:");
    const N = 100_000;
    const line = (k: number) =>
      `${JSON.stringify({ step: k, input: { type: "impulse", id: "p", impulse: [k, 0, 0] } })}\n`;
    const lines = (from: number, to: number) =>
      Buffer.from(Array.from({ length: to - from }, (_, i) => line(from + i)).join(""));
    const doc = Buffer.from("{}");
    // a log of 3 lines kept, then the whole log (its lines 0.. on) sent again
    await store.write("s", null, doc, undefined, {
      id: "L",
      from: 0,
      count: 3,
      lines: lines(0, 3),
    });
    const before = await rpushCalls();
    await store.write("s", null, doc, undefined, {
      id: "L",
      from: 0,
      count: N,
      lines: lines(0, N),
    });
    // ceil(N / 1000) calls (before: N)
    expect((await rpushCalls()) - before).toBe(Math.ceil(N / 1000));
    expect(await direct.llen("big:inputs:s")).toBe(N);
    const back = Buffer.from((await store.readLog("s", { id: "L", count: N })) ?? []);
    expect(back.equals(lines(0, N))).toBe(true);
    // and a part appended after it goes on from line N
    await store.write("s", null, doc, undefined, {
      id: "L",
      from: N,
      count: N + 1,
      lines: lines(N, N + 1),
    });
    expect(await direct.lindex("big:inputs:s", N)).toBe(line(N));
  }, 60_000);
});
