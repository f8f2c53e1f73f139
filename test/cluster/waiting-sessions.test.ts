/**
 * A cluster none of whose nodes has a worker that can start (two nodes a and b in this
 * process over a MemoryCluster, their workers killed with their starts broken): a session
 * lost with its worker waits in the directory without a holder, as a single server's
 * checkpoint no worker could open yet. GET answers it (200, `restoring`, its checkpoint's
 * step) on every node and GET /v1/sessions lists it so, DELETE deletes it (before: GET 503
 * `cluster_unavailable` after a lease's TTL, not listed); its other requests are 503
 * `worker_unavailable` naming the session and the cause; the live node with the lowest id
 * counts it in moreau_sessions{status="restoring"} and the other does not (before: neither);
 * and the first node whose worker starts again takes it over with its acknowledged work, at
 * once on its worker's start (before: at its next periodic scan, here minutes away).
 */
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import {
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import { memoryNodes } from "../support/memory-cluster";
import { sample } from "../support/metrics";
import { hingedRods } from "../support/models";
import { driveWithImpulse, expectDrivenWithoutLoss } from "../support/recordings";
import { waitFor } from "../support/wait";

const apps: MoreauApp[] = [];

afterAll(async () => {
  for (const app of apps) await app.close();
});

describe("a cluster none of whose nodes has a worker that can start", () => {
  it("keeps a session lost with its worker visible (restoring, listed, counted once) until the first node whose worker starts takes it over", async () => {
    const c = new MemoryCluster();
    // a lease of 10 min: the periodic scans (every 5 min) and heartbeats (every 200 s) come
    // after the test's end, so only what a worker's loss or start does at once explains the
    // nodes' `accepting` and the takeover below (released leases: none has to expire)
    const [a, b] = await memoryNodes(c, apps, { testHooks: true, leaseTtlMs: 600_000 });
    const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };
    const made = await request(a.app.server).post("/v1/sessions").send({ model }).expect(201);
    const id = made.body.id as string;
    const [owner, other] = made.headers["x-moreau-node"] === "a" ? [a, b] : [b, a];
    const otherId = other === a ? "a" : "b";
    /** each node's moreau_sessions{status}, [a, b] */
    const counted = async (status: string) => {
      const out: number[] = [];
      for (const n of [a, b]) {
        const text = (await request(n.app.server).get("/metrics").expect(200)).text;
        out.push(sample(text, `moreau_sessions{status="${status}"}`));
      }
      return out;
    };
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
      // the other node's worker goes first (it holds nothing), then the owner's: its
      // heartbeat says so at once (the next one is 200 s away)
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
        // what needs its simulation waits for a node to hold it: 503 worker_unavailable as a
        // single server's waiting session, the session and the cause named
        const r = await request(n.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 1 });
        expect(r.status).toBe(503);
        expect(r.body.error).toBe("worker_unavailable");
        expect(r.body.message).toContain(`session "${id}" is waiting`);
        expect(r.body.details.session).toBe(id);
        expect(r.body.details.cause).toContain(
          "no node of the cluster has a solver worker running",
        );
        expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      }
      // counted once, `restoring`, by the live node with the lowest id, a; no node holds one
      expect(await counted("restoring")).toEqual([2, 0]);
      expect(await counted("ready")).toEqual([0, 0]);
      // deleted while it waits: its checkpoint and registry entry gone
      await request(other.app.server).delete(`/v1/sessions/${gone}`).expect(204);
      expect(await new MemorySnapshotStore(c).read(gone)).toBeNull();
      expect(await directory.entry(gone)).toBeNull();
      const left = (await request(owner.app.server).get("/v1/sessions").expect(200)).body.sessions;
      expect(left.map((x: { id: string }) => x.id)).toEqual([id]);
      expect(await counted("restoring")).toEqual([1, 0]);
      // the other node's worker starts again: that node takes it over from its checkpoint,
      // on its worker's start (no request asks for it; its next periodic scan is minutes away)
      otherPool.breakStartsForTest(0, false);
      await waitFor(() => other.app.moreau.sessions.local(id)?.rebuilding === null, 60_000);
      // counted by its holder, in its own status; no longer as waiting
      expect(await counted("restoring")).toEqual([0, 0]);
      const status = (await request(other.app.server).get(`/v1/sessions/${id}`).expect(200)).body
        .status as string;
      expect(await counted(status)).toEqual(other === a ? [1, 0] : [0, 1]);
      const api = () => request(owner.app.server);
      const s = await api().get(`/v1/sessions/${id}`).expect(200);
      expect(s.headers["x-moreau-node"]).toBe(otherId);
      expect(s.body.status).not.toBe("restoring");
      expect(s.body.step).toBe(10);
      // the one deleted is not: 404 everywhere
      for (const n of [a, b]) await request(n.app.server).get(`/v1/sessions/${gone}`).expect(404);
      // its checkpoint at step 10 holds the impulse: stepped on to 15 it is exactly a
      // session driven the same way with no loss
      await expectDrivenWithoutLoss(api, id, model, 15);
    } finally {
      otherPool.breakStartsForTest(0, false);
      ownPool.breakStartsForTest(0, false);
    }
  }, 90_000);
});
