/**
 * A drain's hand-over waits for the one command taking effect when it began, not for the
 * commands queued behind that one: those never took effect on the draining node and are
 * answered 503 `cluster_unavailable` (retry) at their turn, then retried take effect on the
 * node taking the session over (until 2026-12-07 the hand-over waited for every command
 * queued before it, one after the other, without a bound, and the draining node served them).
 *
 * Two in-process nodes over a MemoryCluster, the owner's checkpoint writes held so that a
 * POST /run (whose checkpoint holding the run is part of its effect) is taking effect; a
 * pause and a step queued behind it, then the drain. The ball falls under moreau-jean's
 * default θ = 1/2, exact for a constant acceleration: paused at step n, v_z = −g n h and
 * z = z0 − ½ g (n h)².
 */
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { MemoryCluster, MemorySnapshotStore } from "../../src/server/cluster/memory";
import { memoryNodes } from "../support/memory-cluster";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;

/** A snapshot store whose writes can be held. */
class HeldWrites extends MemorySnapshotStore {
  holding = false;
  private held: (() => void)[] = [];
  override async write(...args: Parameters<MemorySnapshotStore["write"]>): Promise<void> {
    if (this.holding) await new Promise<void>((r) => this.held.push(r));
    return super.write(...args);
  }
  get waiting(): number {
    return this.held.length;
  }
  resume(): void {
    this.holding = false;
    for (const r of this.held.splice(0)) r();
  }
}

const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

describe("a drain with commands queued on a session", () => {
  it("waits for the command taking effect; the ones queued behind it are answered 503 and take effect on the other node", async () => {
    const c = new MemoryCluster();
    const stores = { a: new HeldWrites(c), b: new HeldWrites(c) };
    const [a, b] = await memoryNodes(c, apps, {}, (id) => ({ snapshots: stores[id] }));
    const made = await request(a.app.server)
      .post("/v1/sessions")
      .send({ model: fallingBody({ z0: Z0 }) })
      .expect(201);
    const id = made.body.id as string;
    const ownerId = made.headers["x-moreau-node"] as "a" | "b";
    const [owner, other] = ownerId === "a" ? [a, b] : [b, a];
    const rec = owner.app.moreau.sessions.local(id);
    if (!rec) throw new Error("no record");
    const api = () => request(owner.app.server);

    // the run taking effect: its checkpoint's write held
    stores[ownerId].holding = true;
    const run = api().post(`/v1/sessions/${id}/run`).send({ realtimeFactor: 1 }).then();
    await waitFor(() => stores[ownerId].waiting === 1, 10_000);
    // a pause and a step queued behind it, then the drain
    const paused = api().post(`/v1/sessions/${id}/pause`).then();
    await waitFor(() => rec.commandsQueued === 2, 10_000);
    const stepped = api().post(`/v1/sessions/${id}/step`).send({ steps: 5 }).then();
    await waitFor(() => rec.commandsQueued === 3, 10_000);
    const drained = owner.app.moreau.cluster?.drain();
    await waitFor(() => rec.commandsQueued === 4, 10_000);
    stores[ownerId].resume();
    await drained;

    // the run took effect here (202); the two behind it did not: 503, to retry (before: 200
    // and 200, served by the draining node, the hand-over waiting for them)
    const answers = [await run, await paused, await stepped];
    expect(answers.map((r) => r.status)).toEqual([202, 503, 503]);
    for (const r of answers.slice(1)) {
      expect(r.body.error).toBe("cluster_unavailable");
      expect(r.body.message).toContain("being handed over");
    }
    // the other node resumes the run, and the retried pause and step take effect there
    await waitFor(() => other.app.moreau.sessions.local(id)?.status === "running", 30_000);
    const p = await request(other.app.server).post(`/v1/sessions/${id}/pause`).expect(200);
    expect(p.body.status).toBe("paused");
    const s = await request(other.app.server)
      .post(`/v1/sessions/${id}/step`)
      .send({ steps: 5 })
      .expect(200);
    const n = p.body.step + 5;
    expect(s.body.step).toBe(n);
    const state = await request(other.app.server).get(`/v1/sessions/${id}/state`).expect(200);
    const ball = state.body.bodies.find((x: { id: string }) => x.id === "ball");
    expect(ball.velocity[2]).toBeCloseTo(-G * n * H, 9);
    expect(ball.position[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
  }, 60_000);
});
