/**
 * Nodes of one cluster in this process, over the in-process adapters (a MemoryCluster
 * shared by their ports: src/server/cluster/memory.ts), to check what needs no Redis:
 * CLUSTER_REDIRECT answers 307 to the owner's NODE_PUBLIC_URL, the redirect followed
 * reaches the session (each redirect counted in /metrics), and a session nobody registered
 * is 404 on any node; a session whose worker is lost on a node where no worker can start
 * again is taken over by the other node from its checkpoint, with its acknowledged work
 * (until 2026-12-07 it waited on its node, 503, while the other node's workers ran). When
 * no node has a worker that can start, such a session waits in the directory without a
 * holder: GET answers it (200, `restoring`, its checkpoint's step) on every node and GET
 * /v1/sessions lists it so, DELETE deletes it (until 2026-12-07: 503 `cluster_unavailable`,
 * and not listed), and the first node whose worker starts again takes it over with its
 * acknowledged work.
 */
import type { AddressInfo } from "node:net";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import {
  MemoryBus,
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import type { ConfigInput } from "../../src/server/config";
import { sample } from "../support/metrics";
import { hingedRods, springParticle } from "../support/models";
import { driveWithImpulse, expectDrivenWithoutLoss } from "../support/recordings";
import { waitFor } from "../support/wait";

const shared = new MemoryCluster();
const apps: MoreauApp[] = [];
const urls: string[] = [];

/** Nodes a and b of cluster `c`, listening on 127.0.0.1 (kept in `apps`, closed after all). */
async function nodesOf(c: MemoryCluster, more: ConfigInput = {}) {
  const made: { app: MoreauApp; url: string }[] = [];
  for (const id of ["a", "b"]) {
    const app = await buildApp(
      { workers: 1, logLevel: "silent", nodeId: id, leaseTtlMs: 3000, ...more },
      {
        cluster: {
          directory: new MemoryDirectory(c),
          bus: new MemoryBus(c),
          snapshots: new MemorySnapshotStore(c),
          healthy: () => true,
          close: async () => undefined,
        },
      },
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    apps.push(app);
    made.push({ app, url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` });
  }
  // both heartbeats published
  await waitFor(async () => (await new MemoryDirectory(c).nodes()).length === 2, 5000);
  return made;
}

beforeAll(async () => {
  for (const { url } of await nodesOf(shared, { clusterRedirect: true })) urls.push(url);
}, 60_000);

afterAll(async () => {
  for (const app of apps) await app.close();
});

describe("CLUSTER_REDIRECT", () => {
  it("answers 307 to the owner's public address; following it reaches the session", async () => {
    const made = await fetch(`${urls[0]}/v1/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: springParticle() }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const owner = made.headers.get("x-moreau-node");
    const [ownerUrl, otherUrl] = owner === "a" ? urls : [urls[1], urls[0]];
    const r = await fetch(`${otherUrl}/v1/sessions/${id}/state`, { redirect: "manual" });
    expect(r.status).toBe(307);
    expect(r.headers.get("location")).toBe(`${ownerUrl}/v1/sessions/${id}/state`);
    const followed = await fetch(`${otherUrl}/v1/sessions/${id}/step`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ steps: 3 }),
    });
    // fetch follows a 307 with the same method and body
    expect(followed.status).toBe(200);
    expect(((await followed.json()) as { step: number }).step).toBe(3);
    // the redirecting node counts both, by route; the owner none
    const redirected = (route: string) =>
      `moreau_cluster_forwarded_requests_total{route="${route}",outcome="redirected"}`;
    const metrics = async (u: string) => (await fetch(`${u}/metrics`)).text();
    const [other, own] = [await metrics(otherUrl), await metrics(ownerUrl)];
    expect(sample(other, redirected("/v1/sessions/:id/state"))).toBe(1);
    expect(sample(other, redirected("/v1/sessions/:id/step"))).toBe(1);
    expect(sample(own, redirected("/v1/sessions/:id/state"))).toBeNaN();
    // a session nobody registered is 404 on either node
    for (const u of urls) expect((await fetch(`${u}/v1/sessions/nope`)).status).toBe(404);
  });
});

describe("a node none of whose workers can start", () => {
  it("lets a session lost with its worker go: the other node takes it over from its checkpoint with its acknowledged work", async () => {
    const [a, b] = await nodesOf(new MemoryCluster(), { testHooks: true });
    const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };
    const made = await request(a.app.server).post("/v1/sessions").send({ model }).expect(201);
    const id = made.body.id as string;
    const [owner, other] = made.headers["x-moreau-node"] === "a" ? [a, b] : [b, a];
    const api = () => request(other.app.server);
    // stepped to 10, an impulse (acknowledged: checkpointed before its answer), to 15
    await driveWithImpulse(() => request(owner.app.server), id);
    const pool = owner.app.moreau.sessions.pool;
    pool.breakStartsForTest(0, true);
    try {
      await pool.killForTest(0);
      // before: it waited on its node (503 worker_unavailable through either node)
      await waitFor(() => other.app.moreau.sessions.local(id)?.rebuilding === null, 30_000);
      const s = await api().get(`/v1/sessions/${id}`).expect(200);
      expect(s.headers["x-moreau-node"]).toBe(other === a ? "a" : "b");
      // its checkpoint at step 10 holds the impulse: stepped on to 15 it is exactly a
      // session driven the same way with no loss
      expect(s.body.step).toBe(10);
      await expectDrivenWithoutLoss(api, id, model, 15);
    } finally {
      pool.breakStartsForTest(0, false);
    }
  }, 60_000);
});

describe("a cluster none of whose nodes has a worker that can start", () => {
  it("keeps a session lost with its worker visible (restoring, listed) until the first node that can takes it over", async () => {
    const c = new MemoryCluster();
    const [a, b] = await nodesOf(c, { testHooks: true });
    const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };
    const made = await request(a.app.server).post("/v1/sessions").send({ model }).expect(201);
    const id = made.body.id as string;
    const [owner, other] = made.headers["x-moreau-node"] === "a" ? [a, b] : [b, a];
    const otherId = other === a ? "a" : "b";
    // stepped to 10, an impulse (acknowledged: checkpointed before its answer), to 15
    await driveWithImpulse(() => request(owner.app.server), id);
    // and one on the same node to be deleted while it waits
    const gone = (await request(owner.app.server).post("/v1/sessions").send({ model }).expect(201))
      .body.id as string;
    const directory = new MemoryDirectory(c);
    const accepting = async (node: string) =>
      (await directory.nodes()).find((n) => n.id === node)?.accepting;
    const [ownPool, otherPool] = [owner, other].map((n) => n.app.moreau.sessions.pool);
    otherPool.breakStartsForTest(0, true);
    ownPool.breakStartsForTest(0, true);
    try {
      // the other node's worker goes first (it holds nothing), then the owner's
      await otherPool.killForTest(0);
      await waitFor(async () => (await accepting(otherId)) === false, 10_000);
      await ownPool.killForTest(0);
      await waitFor(
        async () =>
          owner.app.moreau.sessions.local(id) === undefined &&
          owner.app.moreau.sessions.local(gone) === undefined &&
          (await directory.holder(id)) === null &&
          (await directory.holder(gone)) === null,
        20_000,
      );
      for (const n of [a, b]) {
        // before: 503 cluster_unavailable, after a wait of the lease's TTL
        const s = await request(n.app.server).get(`/v1/sessions/${id}`).expect(200);
        expect(s.body.status).toBe("restoring");
        // its checkpoint's: step 10, the impulse's
        expect(s.body.step).toBe(10);
        expect(s.body.message).toContain("no node of the cluster has a solver worker running");
        // before: not listed
        const list = (await request(n.app.server).get("/v1/sessions").expect(200)).body.sessions;
        expect(list.map((x: { id: string; status: string }) => [x.id, x.status]).sort()).toEqual(
          [
            [id, "restoring"],
            [gone, "restoring"],
          ].sort(),
        );
        // what needs its simulation waits for a node to hold it: 503, the session named
        const r = await request(n.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 1 });
        expect(r.status).toBe(503);
        expect(r.body.message).toContain(id);
      }
      // deleted while it waits (before: 503): its checkpoint and registry entry gone
      await request(other.app.server).delete(`/v1/sessions/${gone}`).expect(204);
      expect(await new MemorySnapshotStore(c).read(gone)).toBeNull();
      expect(await directory.entry(gone)).toBeNull();
      const left = (await request(owner.app.server).get("/v1/sessions").expect(200)).body.sessions;
      expect(left.map((x: { id: string }) => x.id)).toEqual([id]);
      // the other node's worker starts again: that node takes it over from its checkpoint
      otherPool.breakStartsForTest(0, false);
      await waitFor(() => other.app.moreau.sessions.local(id)?.rebuilding === null, 60_000);
      const api = () => request(owner.app.server);
      const s = await api().get(`/v1/sessions/${id}`).expect(200);
      expect(s.headers["x-moreau-node"]).toBe(otherId);
      expect(s.body.status).not.toBe("restoring");
      expect(s.body.step).toBe(10);
      // stepped on to 15 it is exactly a session driven the same way with no loss
      // the one deleted is not: 404 everywhere
      for (const n of [a, b]) await request(n.app.server).get(`/v1/sessions/${gone}`).expect(404);
      // (through the node holding it: the owner's workers still cannot start, and a creation
      // there, the reference's, is placed by its view of the accepting nodes, up to a
      // heartbeat old: under load it answered 503)
      await expectDrivenWithoutLoss(() => request(other.app.server), id, model, 15);
    } finally {
      otherPool.breakStartsForTest(0, false);
      ownPool.breakStartsForTest(0, false);
    }
  }, 90_000);
});
