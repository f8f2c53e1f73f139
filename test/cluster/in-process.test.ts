/**
 * Nodes of one cluster in this process, over the in-process adapters (a MemoryCluster
 * shared by their ports: src/server/cluster/memory.ts), to check what needs no Redis:
 * CLUSTER_REDIRECT answers 307 to the owner's NODE_PUBLIC_URL, the redirect followed
 * reaches the session (each redirect counted in /metrics), and a session nobody registered
 * is 404 on any node; a session whose worker is lost on a node where no worker can start
 * again is taken over by the other node from its checkpoint, with its acknowledged work
 * (until 2026-12-07 it waited on its node, 503, while the other node's workers ran).
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
