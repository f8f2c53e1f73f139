/**
 * One contract, two adapters: the same tests run against the in-process adapters
 * (src/server/cluster/memory.ts) and the Redis ones (redis.ts, on a redis-server of this
 * test's own: test/support/redis.ts). No mocks: the Redis adapters talk to a real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_SNAPSHOT_FORMAT, SESSION_SNAPSHOT_VERSION } from "../../schemas/api";
import { loadModel } from "../../src/engine/index";
import {
  MemoryBus,
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import {
  type Bus,
  FencedError,
  type SessionDirectory,
  type SnapshotStore,
} from "../../src/server/cluster/ports";
import {
  connect,
  RedisBus,
  RedisDirectory,
  RedisSnapshotStore,
  ready,
} from "../../src/server/cluster/redis";
import { springParticle } from "../support/models";
import { type RedisServer, startRedis } from "../support/redis";
import { sleep } from "../support/wait";

interface Adapters {
  ready(): Promise<void>;
  directory: SessionDirectory;
  bus: Bus;
  /** a second node's view of the same bus (its own connections) */
  otherBus: Bus;
  snapshots: SnapshotStore;
  close(): Promise<void>;
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

let prefixes = 0;
const adapters: Record<string, () => Adapters> = {
  memory: () => {
    const c = new MemoryCluster();
    return {
      directory: new MemoryDirectory(c),
      bus: new MemoryBus(c),
      otherBus: new MemoryBus(c),
      snapshots: new MemorySnapshotStore(c),
      ready: async () => undefined,
      close: async () => undefined,
    };
  },
  redis: () => {
    const a = connect(redis.url);
    const b = connect(redis.url);
    // each test its own key space
    const p = `t${++prefixes}:`;
    const bus = new RedisBus(a, p);
    const otherBus = new RedisBus(b, p);
    return {
      directory: new RedisDirectory(a, p),
      bus,
      otherBus,
      snapshots: new RedisSnapshotStore(a, p),
      ready: async () => {
        expect(await ready(a, 5000)).toBe(true);
        expect(await ready(b, 5000)).toBe(true);
      },
      close: async () => {
        await bus.close();
        await otherBus.close();
        a.disconnect();
        b.disconnect();
      },
    };
  },
};

/** A session document (schemas/api.ts Snapshot) as the store receives it: bytes. */
function documentOf(id: string, step: number): Uint8Array {
  const sim = loadModel(springParticle());
  sim.step(step);
  return Buffer.from(
    JSON.stringify({
      format: SESSION_SNAPSHOT_FORMAT,
      version: SESSION_SNAPSHOT_VERSION,
      session: { id, name: "m", status: "paused", message: null, time: sim.time, step },
      simulation: sim.snapshot(),
    }),
  );
}

/** A recorded input (schemas/input.ts TimedInput): an impulse of k N·s on the particle at step k. */
const entry = (k: number) => ({ step: k, input: { type: "impulse", id: "p", impulse: [k, 0, 0] } });

/** The input log lines (protocol.ts InputLogPart) of entries from..to-1. */
const lines = (from: number, to: number) =>
  Buffer.from(
    Array.from({ length: to - from }, (_, i) => `${JSON.stringify(entry(from + i))}\n`).join(""),
  );

/** documentOf with a recording whose document holds `pending` (the inputs not in the log). */
function documentWith(id: string, step: number, pending: number[]): Uint8Array {
  const doc = JSON.parse(Buffer.from(documentOf(id, step)).toString("utf8"));
  doc.simulation.recording = {
    start: null,
    inputs: pending.map(entry),
    since: { cause: "created", at: "2026-12-07T00:00:00.000Z" },
  };
  return Buffer.from(JSON.stringify(doc));
}

for (const [name, make] of Object.entries(adapters))
  describe(`ports: ${name} adapter`, () => {
    const use = async (fn: (a: Adapters) => Promise<void>) => {
      const a = make();
      try {
        await a.ready();
        await fn(a);
      } finally {
        await a.close();
      }
    };

    it("leases: one holder at a time, renewed by its holder only, expiring, every claim a larger epoch", () =>
      use(async ({ directory: d }) => {
        // every check at least 1.3 s from the expiry it tests: a loaded machine's late
        // timers only delay the checks (with 0.3 s leases a 0.1 s lateness let the renewed
        // lease expire before the check that it is held)
        const ttl = 1500;
        const a = await d.claim("s1", "A", ttl);
        expect(a).toEqual({ session: "s1", node: "A", epoch: 1 });
        expect(await d.claim("s1", "B", ttl)).toBeNull();
        expect(await d.holder("s1")).toEqual(a);
        // another node's lease value cannot renew or release it
        expect(await d.renew({ session: "s1", node: "B", epoch: 1 }, ttl)).toBe(false);
        await d.release({ session: "s1", node: "B", epoch: 1 });
        expect(await d.holder("s1")).toEqual(a);
        // renewed at 0.2 s for 3 s: held past its first expiry (1.5 s), until 3.2 s
        await sleep(200);
        expect(await d.renew(a as NonNullable<typeof a>, 2 * ttl)).toBe(true);
        await sleep(1600);
        expect(await d.holder("s1")).toEqual(a);
        // expires without renewal: B claims, with the next epoch; A's renewal is refused
        await sleep(1600);
        expect(await d.holder("s1")).toBeNull();
        const b = await d.claim("s1", "B", ttl);
        expect(b?.epoch).toBe(2);
        expect(await d.renew(a as NonNullable<typeof a>, ttl)).toBe(false);
        // a release frees it for the next claim at once
        await d.release(b as NonNullable<typeof b>);
        expect((await d.claim("s1", "C", 300))?.epoch).toBe(3);
      }));

    it("a holder's claim again (Redis lost its counter): its epoch + 1, the later claims above it; none once another claimed since", () =>
      use(async ({ directory: d }) => {
        // the counter gone (a fresh session here, as after a restart without data): put back
        const a = await d.claim("s2", "A", 5000, 7);
        expect(a?.epoch).toBe(8);
        await d.release(a as NonNullable<typeof a>);
        const b = await d.claim("s2", "B", 5000);
        expect(b?.epoch).toBe(9);
        await d.release(b as NonNullable<typeof b>);
        // A again from its epoch 8: B claimed since (9), refused
        expect(await d.claim("s2", "A", 5000, 8)).toBeNull();
        // B again from its epoch 9: nobody since, 10
        expect((await d.claim("s2", "B", 5000, 9))?.epoch).toBe(10);
      }));

    it("claims race: of 20 concurrent claims exactly one wins", () =>
      use(async ({ directory: d }) => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => d.claim("race", `N${i}`, 5000)),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
      }));

    it("quotas: concurrent admissions never pass MAX_SESSIONS nor MAX_SESSIONS_PER_KEY", () =>
      use(async ({ directory: d }) => {
        const quotas = { maxSessions: 7, maxPerKey: 3 };
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            d.admit({ id: `s${i}`, owner: i % 2 === 0 ? "k1" : null }, quotas),
          ),
        );
        const ok = answers.filter((a) => a === "ok").length;
        expect(ok).toBe(7);
        const entries = await d.sessions();
        expect(entries).toHaveLength(7);
        expect(entries.filter((e) => e.owner === "k1")).toHaveLength(3);
        expect(answers).toContain("max_per_key");
        expect(answers).toContain("max_sessions");
        // admitting a registered session again is no new session
        expect(await d.admit(entries[0], quotas)).toBe("ok");
        // forgetting one frees its place (and its key's)
        const k1 = entries.find((e) => e.owner === "k1");
        await d.forget(k1?.id ?? "");
        expect(await d.admit({ id: "new", owner: "k1" }, quotas)).toBe("ok");
        expect(await d.entry("new")).toEqual({ id: "new", owner: "k1" });
      }));

    it("the shared secret is the first node's candidate, whoever asks later", () =>
      use(async ({ directory: d }) => {
        const got = await Promise.all(["s1", "s2", "s3"].map((c) => d.secret(c)));
        expect(new Set(got).size).toBe(1);
        expect(await d.secret("late")).toBe(got[0]);
      }));

    it("heartbeats: a node is listed while its heartbeat lives", () =>
      use(async ({ directory: d }) => {
        const info = (id: string) => ({
          id,
          url: `http://${id}`,
          publicUrl: `http://${id}`,
          sessions: 1,
          workers: 2,
          accepting: true,
        });
        // A's heartbeat lives 1.5 s: listed at once, with slack for a loaded machine
        await d.announce(info("A"), 1500);
        await d.announce(info("B"), 60_000);
        expect((await d.nodes()).map((n) => n.id)).toEqual(["A", "B"]);
        await sleep(1700);
        expect((await d.nodes()).map((n) => n.id)).toEqual(["B"]);
        await d.withdraw("B");
        expect(await d.nodes()).toEqual([]);
      }));

    it("frame logs: seq 1, 2, 3… per class, fenced by the epoch, read from any position on another connection", () =>
      use(async ({ directory: d, bus, otherBus }) => {
        const lease = await d.claim("s", "A", 5000);
        const epoch = lease?.epoch ?? 0;
        const bytes = (n: number) => Uint8Array.from([n, 0, 255, n]);
        const seqs: (number | null)[] = [];
        for (let i = 1; i <= 5; i++)
          seqs.push(
            await bus.publish("s", "1|k", epoch, { step: i, forced: false, bytes: bytes(i) }),
          );
        expect(seqs).toEqual([1, 2, 3, 4, 5]);
        // a stale epoch cannot append
        expect(
          await bus.publish("s", "1|k", epoch + 1, { step: 9, forced: false, bytes: bytes(9) }),
        ).toBeNull();
        const after2 = await otherBus.range("s", "1|k", 2, 100);
        expect(after2.map((f) => [f.seq, f.step])).toEqual([
          [3, 3],
          [4, 4],
          [5, 5],
        ]);
        expect([...after2[0].bytes]).toEqual([3, 0, 255, 3]);
        expect((await otherBus.latest("s", "1|k"))?.seq).toBe(5);
        // a blocking read wakes up on the next append
        const reading = otherBus.read([{ session: "s", cls: "1|k", after: 5 }], 3000);
        await sleep(50);
        await bus.publish("s", "1|k", epoch, { step: 6, forced: true, bytes: bytes(6) });
        const got = await reading;
        expect(got.map((g) => g.frames.map((f) => [f.seq, f.step, f.forced]))).toEqual([
          [[6, 6, true]],
        ]);
        // after a takeover the log goes on from the last seq
        await d.release(lease as NonNullable<typeof lease>);
        const b = await d.claim("s", "B", 5000);
        expect(
          await otherBus.publish("s", "1|k", b?.epoch ?? 0, {
            step: 4,
            forced: false,
            bytes: bytes(4),
          }),
        ).toBe(7);
        await bus.drop("s");
        expect(await bus.latest("s", "1|k")).toBeNull();
      }));

    it("wanted classes and control messages reach the other nodes", () =>
      use(async ({ bus, otherBus }) => {
        const sub = {
          every: 10,
          key: "bodies|json",
          fields: ["bodies" as const],
          format: "json" as const,
        };
        await bus.want("s", sub, 300);
        expect(await otherBus.wanted("s")).toEqual([sub]);
        await sleep(400);
        expect(await otherBus.wanted("s")).toEqual([]);
        const seen: unknown[] = [];
        otherBus.onControl((m) => seen.push(m));
        await sleep(100); // the subscription is in place
        await bus.control({ type: "released", session: "s" });
        await expect
          .poll(() => seen, { timeout: 5000 })
          .toEqual([{ type: "released", session: "s" }]);
      }));

    it("snapshots keep the recorded inputs as an append-only log: a write sends those since the last, a read puts them back", () =>
      use(async ({ directory: d, snapshots: st }) => {
        await st.init();
        expect(st.logsInputs).toBe(true);
        const a = await d.claim("s", "A", 5000);
        const fence = { epoch: a?.epoch ?? 0, run: null };
        const steps = async () =>
          ((await st.read("s"))?.snapshot.simulation.recording?.inputs ?? []).map((e) => e.step);
        // inputs 0..2 fixed, 9 pending
        await st.write("s", "k1", documentWith("s", 3, [9]), fence, {
          id: "L1",
          from: 0,
          count: 3,
          lines: lines(0, 3),
        });
        expect(await steps()).toEqual([0, 1, 2, 9]);
        expect((await st.read("s"))?.log).toEqual({ id: "L1", count: 3 });
        // the next write appends 3 and 4 only
        await st.write("s", "k1", documentWith("s", 5, []), fence, {
          id: "L1",
          from: 3,
          count: 5,
          lines: lines(3, 5),
        });
        expect(await steps()).toEqual([0, 1, 2, 3, 4]);
        expect(Buffer.from((await st.readLog?.("s", { id: "L1", count: 4 })) ?? [])).toEqual(
          lines(0, 4),
        );
        expect(await st.readLog?.("s", { id: "L2", count: 1 })).toBeNull();
        // a part that continues none the store holds is refused, the checkpoint kept
        await expect(
          st.write("s", "k1", documentWith("s", 8, []), fence, {
            id: "L1",
            from: 7,
            count: 8,
            lines: lines(7, 8),
          }),
        ).rejects.toThrow(/input log/);
        expect(await steps()).toEqual([0, 1, 2, 3, 4]);
        // a new log (a reset) replaces the old one
        await st.write("s", "k1", documentWith("s", 1, []), fence, {
          id: "L2",
          from: 0,
          count: 1,
          lines: lines(0, 1),
        });
        expect(await steps()).toEqual([0]);
        expect(await st.readLog?.("s", { id: "L1", count: 1 })).toBeNull();
        await st.remove("s");
        expect(await st.read("s")).toBeNull();
        expect(await st.readLog?.("s", { id: "L2", count: 1 })).toBeNull();
      }));

    it("snapshots: the latest document per session, fenced writes refused once another node claimed", () =>
      use(async ({ directory: d, snapshots: st }) => {
        await st.init();
        const a = await d.claim("s", "A", 5000);
        const run = { realtimeFactor: 2, until: null };
        await st.write("s", "k1", documentOf("s", 10), { epoch: a?.epoch ?? 0, run });
        await st.write("s", "k1", documentOf("s", 20), { epoch: a?.epoch ?? 0, run: null });
        const cp = await st.read("s");
        expect(cp?.owner).toBe("k1");
        expect(cp?.snapshot.session.step).toBe(20);
        expect(cp?.run).toBeNull();
        await d.release(a as NonNullable<typeof a>);
        const b = await d.claim("s", "B", 5000);
        await expect(
          st.write("s", "k1", documentOf("s", 15), { epoch: a?.epoch ?? 0, run: null }),
        ).rejects.toBeInstanceOf(FencedError);
        expect((await st.read("s"))?.snapshot.session.step).toBe(20);
        await st.write("s", "k1", documentOf("s", 30), { epoch: b?.epoch ?? 0, run });
        expect((await st.read("s"))?.run).toEqual(run);
        await st.remove("s");
        expect(await st.read("s")).toBeNull();
      }));
  });
