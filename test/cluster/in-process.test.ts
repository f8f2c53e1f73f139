/**
 * Nodes of one cluster in this process, over the in-process adapters (a MemoryCluster
 * shared by their ports: src/server/cluster/memory.ts), to check what needs no Redis:
 * CLUSTER_REDIRECT answers 307 to the owner's NODE_PUBLIC_URL, the redirect followed
 * reaches the session (each redirect counted in /metrics), and a session nobody registered
 * is 404 on any node.
 */
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, type MoreauApp } from "../../src/server/app";
import {
  MemoryBus,
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import { sample } from "../support/metrics";
import { springParticle } from "../support/models";
import { waitFor } from "../support/wait";

const shared = new MemoryCluster();
const apps: MoreauApp[] = [];
const urls: string[] = [];

beforeAll(async () => {
  for (const id of ["a", "b"]) {
    const app = await buildApp(
      { workers: 1, logLevel: "silent", nodeId: id, clusterRedirect: true, leaseTtlMs: 3000 },
      {
        cluster: {
          directory: new MemoryDirectory(shared),
          bus: new MemoryBus(shared),
          snapshots: new MemorySnapshotStore(shared),
          healthy: () => true,
          close: async () => undefined,
        },
      },
    );
    await app.listen({ port: 0, host: "127.0.0.1" });
    apps.push(app);
    urls.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
  // both heartbeats published
  await waitFor(async () => (await new MemoryDirectory(shared).nodes()).length === 2, 5000);
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
