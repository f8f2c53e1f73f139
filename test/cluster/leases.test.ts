/**
 * Lease renewals (src/server/cluster/node.ts) wait for nothing else the node does: two nodes
 * of one in-process cluster (MemoryCluster), leases of LEASE_TTL_MS = 3 s renewed every
 * third of it.
 *
 * Found at load ~26: every node of the cluster test went more than 5 s without renewing a
 * lease. A node renewed only in its heartbeat tick, after announcing itself and reading the
 * nodes — round trips on the connection that also carries the frames published and the
 * directory's reads — so a slow or busy command connection held every renewal back, and past
 * LEASE_TTL_MS another node took the sessions over. Here node a's command connection is
 * stalled (every directory call waits until the test lets it go, as behind a large write)
 * for 2.5 TTL: its leases, on a connection of their own, are renewed on their own timer and
 * it keeps its session, its heartbeat goes on (b forwards to it); b takes nothing over; a
 * lease lost meanwhile is claimed again and renewed on. Then a's event loop is blocked for
 * TTL − 1 s right after a renewal (the whole process, b's too): the overdue renewal is sent
 * at once and a keeps the session, under the same epoch, its acknowledged steps with it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import {
  MemoryBus,
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import type { Lease, SessionDirectory } from "../../src/server/cluster/ports";
import { springParticle } from "../support/models";
import { sleep, waitFor } from "../support/wait";

const TTL = 3000;
const shared = new MemoryCluster();
const apps: MoreauApp[] = [];

/** Node a's command connection: every call waits while `stalled` (released by `resume`). */
let stalled: Promise<void> | null = null;
let resume: () => void = () => undefined;
function stalling(d: SessionDirectory): SessionDirectory {
  return new Proxy(d, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof v !== "function") return v;
      return async (...args: unknown[]) => {
        if (stalled) await stalled;
        return v.apply(target, args);
      };
    },
  });
}

/** Node a's lease connection: each renewal answered, with the time it was answered. */
const renewed: { at: number; ok: boolean }[] = [];
function counting(d: SessionDirectory): SessionDirectory {
  return new Proxy(d, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (key !== "renew") return typeof v === "function" ? v.bind(target) : v;
      return async (lease: Lease, ttl: number) => {
        const ok = await target.renew(lease, ttl);
        renewed.push({ at: performance.now(), ok });
        return ok;
      };
    },
  });
}

beforeAll(async () => {
  for (const id of ["a", "b"]) {
    const app = await buildApp(
      { workers: 1, logLevel: "silent", nodeId: id, leaseTtlMs: TTL },
      {
        cluster: {
          directory:
            id === "a" ? stalling(new MemoryDirectory(shared)) : new MemoryDirectory(shared),
          leases: id === "a" ? counting(new MemoryDirectory(shared)) : new MemoryDirectory(shared),
          bus: new MemoryBus(shared),
          snapshots: new MemorySnapshotStore(shared),
          healthy: () => true,
          close: async () => undefined,
        },
      },
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    apps.push(app);
  }
  await waitFor(async () => (await new MemoryDirectory(shared).nodes()).length === 2, 10_000);
}, 60_000);

afterAll(async () => {
  resume();
  for (const app of apps) await app.close();
});

it("a node keeps its leases while its command connection is stalled and after its event loop is blocked for TTL − 1 s", {
  timeout: 60_000,
}, async () => {
  const [a] = apps;
  const made = await a.inject({
    method: "POST",
    url: "/v1/sessions",
    payload: { model: springParticle() },
  });
  expect(made.statusCode).toBe(201);
  expect(made.headers["x-moreau-node"]).toBe("a");
  const id = made.json().id as string;
  const stepped = await a.inject({
    method: "POST",
    url: `/v1/sessions/${id}/step`,
    payload: { steps: 5 },
  });
  expect(stepped.statusCode).toBe(200);
  const directory = new MemoryDirectory(shared);
  const first = (await directory.holder(id)) as Lease;
  expect(first.node).toBe("a");

  // a's command connection stalled for 2.5 TTL: no heartbeat, no directory read
  stalled = new Promise((res) => {
    resume = res;
  });
  const before = renewed.length;
  await sleep(2.5 * TTL);
  // still a's, under its epoch: b took nothing over
  expect(await directory.holder(id)).toEqual(first);
  const held = await a.inject({ method: "GET", url: `/v1/sessions/${id}` });
  expect(held.statusCode).toBe(200);
  expect(held.headers["x-moreau-node"]).toBe("a");
  expect(held.json().step).toBe(5);
  // its heartbeat went on too (the other nodes forward to it)
  expect((await directory.nodes()).map((n) => n.id).sort()).toEqual(["a", "b"]);
  const viaB = await apps[1].inject({ method: "GET", url: `/v1/sessions/${id}` });
  expect(viaB.statusCode).toBe(200);
  expect(viaB.headers["x-moreau-node"]).toBe("a");
  // renewed on their own all along (every TTL / 3: 7 passes in 2.5 TTL, on an idle loop)
  expect(renewed.length - before).toBeGreaterThanOrEqual(2);
  expect(renewed.slice(before).every((r) => r.ok)).toBe(true);

  // its lease lost meanwhile (as by a Redis restarted empty): a claims it again, under a new
  // epoch, and its renewals go on while the registry's re-entry waits on the stalled
  // connection (before, the renewal pass waited for it, and renewed nothing more)
  shared.leases.delete(id);
  const lostAt = renewed.length;
  await sleep(2.5 * TTL);
  const again = (await directory.holder(id)) as Lease;
  expect(again).toEqual({ ...first, epoch: first.epoch + 1 });
  expect(renewed.length - lostAt).toBeGreaterThanOrEqual(3);
  resume();
  stalled = null;

  // the event loop blocked for TTL − 1 s right after a renewal was answered
  const count = renewed.length;
  await waitFor(() => renewed.length > count, 2 * TTL, 5);
  const end = performance.now() + TTL - 1000;
  while (performance.now() < end) {
    // busy: no timer, no I/O callback runs meanwhile
  }
  // the overdue renewal goes out at once; b's overdue scan finds the lease held
  await waitFor(() => renewed.length > count + 1, 2 * TTL, 5);
  await sleep(TTL);
  expect(await directory.holder(id)).toEqual(again);
  const after = await a.inject({ method: "GET", url: `/v1/sessions/${id}` });
  expect(after.headers["x-moreau-node"]).toBe("a");
  expect(after.json().step).toBe(5);
  const lost = (await a.inject({ method: "GET", url: "/metrics" })).body;
  expect(lost).not.toMatch(/moreau_cluster_leases_total\{event="lost"\} [1-9]/);
});
