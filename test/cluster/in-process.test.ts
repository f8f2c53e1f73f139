import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { MemoryCluster, MemorySnapshotStore } from "../../src/server/cluster/memory";
import { FORWARDED } from "../../src/server/cluster/node";
import type { ConfigInput } from "../../src/server/config";
import { memoryNodes } from "../support/memory-cluster";
import { sample } from "../support/metrics";
import { hingedRods, springParticle } from "../support/models";
import { driveWithImpulse, expectDrivenWithoutLoss } from "../support/recordings";
import { waitFor } from "../support/wait";

const shared = new MemoryCluster();
const apps: MoreauApp[] = [];
const urls: string[] = [];

/** Nodes a and b of cluster `c` (kept in `apps`, closed after all). */
const nodesOf = (c: MemoryCluster, more: ConfigInput = {}) => memoryNodes(c, apps, more);

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

describe("a running session handed over by a drain", () => {
  it("is served only once its run is resumed on the node taking it, whose first checkpoint of it keeps the run", async () => {
    const c = new MemoryCluster();
    // no checkpoint of the run's own (every 10⁹ steps): the one the taking node writes at once
    // is the store's, and the run a node taking it over next resumes
    const [a, b] = await nodesOf(c, { checkpointEverySteps: 1e9 });
    const made = await request(a.app.server)
      .post("/v1/sessions")
      .send({ model: springParticle() })
      .expect(201);
    const id = made.body.id as string;
    const [owner, other] = made.headers["x-moreau-node"] === "a" ? [a, b] : [b, a];
    const otherId = other === a ? "a" : "b";
    await request(owner.app.server)
      .post(`/v1/sessions/${id}/run`)
      .send({ realtimeFactor: 1 })
      .expect(202);
    // the session asked for from the other node every 2 ms while the drain hands it over, as
    // the owner forwards requests (FORWARDED: the other node answers at once, 503, while the
    // owner holds the session, rather than forwarding it back), each not waiting for the one
    // before: every answer the other node served says `running` (before: `paused`, read
    // between the session's opening there and its run's resumption)
    const forwardedBy = `${owner === a ? "a" : "b"} ${c.secret}`;
    const served: string[] = [];
    const answers: Promise<void>[] = [];
    const asking = setInterval(() => {
      answers.push(
        request(other.app.server)
          .get(`/v1/sessions/${id}`)
          .set(FORWARDED, forwardedBy)
          .then((r) => {
            if (r.status === 200 && r.headers["x-moreau-node"] === otherId)
              served.push(r.body.status);
          }),
      );
    }, 2);
    const drainedAt = Date.now();
    await owner.app.moreau.cluster?.drain();
    await waitFor(() => served.length >= 50, 30_000);
    clearInterval(asking);
    await Promise.all(answers);
    expect(served.filter((s) => s !== "running")).toEqual([]);
    // the other node's first checkpoint of it (under its epoch) holds the run: before, taken
    // while the session was still paused, it held none, and a node taking it over from that
    // checkpoint restored it paused (the acknowledged run lost); with the time the takeover
    // resumed it (a guard against a run that kills its nodes: takeover-resume-guard.test)
    const written = async () =>
      sample((await request(other.app.server).get("/metrics")).text, "moreau_checkpoints_total");
    await waitFor(async () => (await written()) >= 1, 30_000);
    const run = (await new MemorySnapshotStore(c).read(id))?.run;
    expect(run).toEqual({ realtimeFactor: 1, until: null, resumedAt: expect.any(Number) });
    expect(run?.resumedAt).toBeGreaterThanOrEqual(drainedAt);
    expect(run?.resumedAt).toBeLessThanOrEqual(Date.now());
  }, 60_000);
});

describe("placing a new session", () => {
  // heartbeats every 200 s (a third of the TTL): none within a test but the first ones
  const slow = { leaseTtlMs: 600_000, testHooks: true };

  it("places nothing on the node asked when its workers stopped since its heartbeat", async () => {
    const [a] = await nodesOf(new MemoryCluster(), slow);
    const pool = a.app.moreau.sessions.pool;
    pool.breakStartsForTest(0, true);
    try {
      await pool.killForTest(0);
      await waitFor(() => pool.alive === 0, 10_000);
      // a's heartbeat still says it accepts, and ties go to the node asked: before, a placed
      // the session on itself and answered 503 worker_unavailable
      const made = await request(a.app.server)
        .post("/v1/sessions")
        .send({ model: springParticle() });
      expect([made.status, made.headers["x-moreau-node"]]).toEqual([201, "b"]);
    } finally {
      pool.breakStartsForTest(0, false);
    }
  }, 60_000);

  it("counts every live node after a placement, the ones not accepting too", async () => {
    const [a, b] = await nodesOf(new MemoryCluster(), slow);
    await a.app.moreau.cluster?.drain();
    const made = await request(b.app.server).post("/v1/sessions").send({ model: springParticle() });
    expect([made.status, made.headers["x-moreau-node"]]).toEqual([201, "b"]);
    // before: 1, the placement's list of accepting nodes, until b's next heartbeat
    const text = (await request(b.app.server).get("/metrics")).text;
    expect(sample(text, "moreau_cluster_nodes")).toBe(2);
  }, 60_000);
});
