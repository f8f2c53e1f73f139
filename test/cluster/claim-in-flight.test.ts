/**
 * The directory (Redis) restarted without its data while a takeover is under way: two
 * in-process nodes over a MemoryCluster, the session handed over by a drain, the taking
 * node's read of its checkpoint held (its lease claimed at epoch 2, the session not open
 * yet), then the MemoryCluster's maps cleared as such a restart leaves Redis (no heartbeat,
 * lease, epoch counter, registry entry or scene; the checkpoints kept, as
 * directory-restart.test does). The lease claimed for the takeover is claimed again at the
 * next renewal pass (every third of LEASE_TTL_MS) as the holder of its epoch, at epoch 3,
 * before the session is open: a late claim by its first holder, as the holder of epoch 1,
 * is refused. Until 2026-12-07 it was left lost until the session was open and held (here:
 * never, the read held), and that late claim got epoch 2 from the lost counter, the
 * takeover's own epoch: two holders writing under one epoch, which the fences (equality)
 * let through. Once open it is registered again and served through the other node; the
 * step forwarded is checked against free fall under moreau-jean's default θ = 1/2, exact for
 * a constant acceleration: after n steps of h, v_z = −g n h and z = z0 − ½ g (n h)².
 */
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import {
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import { FencedError } from "../../src/server/cluster/ports";
import { memoryNodes } from "../support/memory-cluster";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;
const TTL = 3000;

const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

/** A MemorySnapshotStore whose reads wait while `held` is set. */
class HeldReads extends MemorySnapshotStore {
  held: Promise<void> | null = null;
  override async read(id: string) {
    if (this.held) await this.held;
    return super.read(id);
  }
}

describe("the directory restarted without its data during a takeover", () => {
  it("claims the takeover's lease again above its epoch before the session is open", async () => {
    const c = new MemoryCluster();
    /** performance.now() when the directory's connection came back (-∞: never lost) */
    let back = Number.NEGATIVE_INFINITY;
    const stores = { a: new HeldReads(c), b: new HeldReads(c) };
    const [a, b] = await memoryNodes(c, apps, { leaseTtlMs: TTL }, (id) => ({
      snapshots: stores[id],
      reconnectedAt: () => back,
    }));
    const made = await request(a.app.server)
      .post("/v1/sessions")
      .send({ model: fallingBody() })
      .expect(201);
    const id = made.body.id as string;
    const ownerId = made.headers["x-moreau-node"] as "a" | "b";
    const takerId = ownerId === "a" ? "b" : "a";
    const [owner, taker] = ownerId === "a" ? [a, b] : [b, a];
    await request(owner.app.server).post(`/v1/sessions/${id}/step`).send({ steps: 10 }).expect(200);
    expect(owner.app.moreau.sessions.local(id)?.epoch).toBe(1);

    // the taking node's read of the checkpoint held: the takeover stays under way
    let open: () => void = () => undefined;
    stores[takerId].held = new Promise<void>((r) => {
      open = r;
    });
    await owner.app.moreau.cluster?.drain();
    await waitFor(
      () => c.leases.get(id)?.node === takerId && c.leases.get(id)?.epoch === 2,
      10_000,
    );
    expect(taker.app.moreau.sessions.local(id)).toBeUndefined();

    // the restart: Redis empty, the connection back now
    for (const m of [c.nodes, c.leases, c.epochs, c.registry, c.scenes]) m.clear();
    back = performance.now();
    // claimed again as the holder of epoch 2 at the next renewal pass, the session not open
    // (before: no lease until it was open — never, here)
    await waitFor(() => c.leases.get(id) !== undefined, 10_000);
    expect(c.leases.get(id)).toMatchObject({ node: takerId, epoch: 3 });
    expect(taker.app.moreau.sessions.local(id)).toBeUndefined();
    // its first holder, late, claiming it again as the holder of epoch 1: refused (before:
    // epoch 2, the takeover's own)
    expect(await new MemoryDirectory(c).claim(id, ownerId, TTL, 1)).toBeNull();

    // the read goes on: open under epoch 3, registered again, served through the other node
    open();
    await waitFor(() => taker.app.moreau.sessions.local(id)?.epoch === 3, 30_000);
    await waitFor(() => c.registry.has(id), 10_000);
    const r = await request(owner.app.server)
      .post(`/v1/sessions/${id}/step`)
      .send({ steps: 5 })
      .expect(200);
    expect(r.headers["x-moreau-node"]).toBe(takerId);
    const ball = (r.body.bodies as { id: string; velocity: number[]; position: number[] }[]).find(
      (x) => x.id === "ball",
    );
    expect(r.body.step).toBe(15);
    expect(ball?.velocity[2]).toBeCloseTo(-G * 15 * H, 9);
    expect(ball?.position[2]).toBeCloseTo(Z0 - 0.5 * G * (15 * H) ** 2, 9);
    // a late checkpoint of a holder of epoch 1 or 2 is refused
    for (const epoch of [1, 2])
      await expect(
        new MemorySnapshotStore(c).write(id, null, Buffer.from("{}"), { epoch, run: null }),
      ).rejects.toBeInstanceOf(FencedError);
  }, 60_000);
});
