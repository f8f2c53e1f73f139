/**
 * The directory (Redis) restarted without its data, on two in-process nodes: the
 * MemoryCluster's maps cleared as such a restart leaves Redis (no heartbeat, lease, epoch
 * counter, registry entry or scene), and each node's ports saying the connection came back
 * now (ClusterPorts.reconnectedAt). The session's holder enters it again at its next
 * renewal (every third of LEASE_TTL_MS); until then the other node:
 * - opens a stream on it (ClusterNode.exists) and forwards a stream's command to it
 *   (ClusterNode.request) once it is entered again, as the route waits (until 2026-12-07
 *   they answered at once: unknown, 404 to the upgrade; "no node holds", 503);
 * and the holder claims it again above the epoch it held (until 2026-12-07 the counter
 * restarted at 1, the epoch of the session's first holder, whose late writes the fences,
 * which compare equality, then let through): a checkpoint fenced by the old epoch is
 * refused. A checkpoint the holder writes before its renewal, refused by its fence (the
 * counter gone), has it claim the session again too (until 2026-12-07 it let the session
 * go, and no node held or registered it any more). The step forwarded is checked against free fall under moreau-jean's default
 * θ = 1/2, exact for a constant acceleration: after n steps of h, v_z = −g n h and
 * z = z0 − ½ g (n h)².
 */
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { MemoryCluster, MemorySnapshotStore } from "../../src/server/cluster/memory";
import { FencedError } from "../../src/server/cluster/ports";
import { memoryNodes } from "../support/memory-cluster";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;

const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe("the directory restarted without its data", () => {
  it("the other node waits for the holder to enter the session again; the holder's new epoch is above the one it held", async () => {
    const c = new MemoryCluster();
    /** performance.now() when the directory's connection came back (-∞: never lost) */
    let back = Number.NEGATIVE_INFINITY;
    const nodes = (await memoryNodes(c, apps, {}, () => ({ reconnectedAt: () => back }))).map(
      (n) => n.app,
    );
    const made = await request(nodes[0].server)
      .post("/v1/sessions")
      .send({ model: fallingBody() })
      .expect(201);
    const id = made.body.id as string;
    const [holder, other] = made.headers["x-moreau-node"] === "a" ? nodes : [nodes[1], nodes[0]];
    await request(holder.server).post(`/v1/sessions/${id}/step`).send({ steps: 10 }).expect(200);
    const rec = holder.moreau.sessions.local(id);
    if (!rec) throw new Error("no record");
    expect(rec.epoch).toBe(1);
    // the session moved on once (epoch 2): its first holder, were it still alive, would carry 1
    await holder.moreau.cluster?.drain();
    await waitFor(() => other.moreau.sessions.local(id)?.epoch === 2, 30_000);
    const ownerRec = other.moreau.sessions.local(id);
    if (!ownerRec) throw new Error("no record");

    // the restart: Redis empty, the connection back now
    for (const m of [c.nodes, c.leases, c.epochs, c.registry, c.scenes]) m.clear();
    back = performance.now();
    // asked of the drained node (the one not holding it), before the owner's next renewal
    const cluster = holder.moreau.cluster;
    if (!cluster) throw new Error("no cluster");
    const exists = cluster.exists(id, null);
    const stepped = cluster.request(id, "POST", `/v1/sessions/${id}/step`, { steps: 3 }, {});
    // a checkpoint of the holder before its next renewal: refused by its fencing token (the
    // epoch counter gone), it claims the session again (before: let it go — the session lost,
    // held and registered by no node)
    await other.moreau.sessions.checkpointNow(id);
    // before: false, and 503 cluster_unavailable "no node holds session … now"
    expect(await exists).toBe(true);
    const answer = await stepped;
    expect(answer.status).toBe(200);
    const state = answer.body as {
      step: number;
      bodies: { id: string; velocity: number[]; position: number[] }[];
    };
    const ball = state.bodies.find((b) => b.id === "ball");
    expect(state.step).toBe(13);
    expect(ball?.velocity[2]).toBeCloseTo(-G * 13 * H, 9);
    expect(ball?.position[2]).toBeCloseTo(Z0 - 0.5 * G * (13 * H) ** 2, 9);

    // still held, claimed again above the epoch it held (2): before, 1 — the first holder's
    expect(other.moreau.sessions.local(id)).toBe(ownerRec);
    expect(ownerRec.epoch).toBe(3);
    expect(c.epochs.get(id)).toBe(3);
    // a late checkpoint of a holder of epoch 1 or 2 is refused (before: epoch 1's was written)
    const store = new MemorySnapshotStore(c);
    for (const epoch of [1, 2])
      await expect(
        store.write(id, null, Buffer.from("{}"), { epoch, run: null }),
      ).rejects.toBeInstanceOf(FencedError);
  }, 60_000);
});
