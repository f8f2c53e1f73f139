import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { type RawData, WebSocket } from "ws";
import type { MoreauApp } from "../../src/server/app";
import {
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import { FORWARDED } from "../../src/server/cluster/node";
import { memoryNodes } from "../support/memory-cluster";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;

/** A directory whose putScene (a takeover's last Redis call before its run resumes) can be held. */
class HeldScenes extends MemoryDirectory {
  holding = false;
  private held: (() => void)[] = [];
  override async putScene(session: string, scene: Uint8Array): Promise<void> {
    if (this.holding) await new Promise<void>((r) => this.held.push(r));
    return super.putScene(session, scene);
  }
  resume(): void {
    this.holding = false;
    for (const r of this.held.splice(0)) r();
  }
}

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

interface Node {
  app: MoreauApp;
  url: string;
  directory: HeldScenes;
  store: HeldWrites;
}

const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

async function nodes(): Promise<[Node, Node]> {
  const c = new MemoryCluster();
  const held = {
    a: { directory: new HeldScenes(c), store: new HeldWrites(c) },
    b: { directory: new HeldScenes(c), store: new HeldWrites(c) },
  };
  const [a, b] = await memoryNodes(c, apps, {}, (id) => ({
    directory: held[id].directory,
    snapshots: held[id].store,
  }));
  return [
    { ...a, ...held.a },
    { ...b, ...held.b },
  ];
}

/** A running falling ball on one node: its id, the node holding it and the other. */
async function running(a: Node, b: Node) {
  const made = await request(a.app.server)
    .post("/v1/sessions")
    .send({ model: fallingBody() })
    .expect(201);
  const id = made.body.id as string;
  const [owner, other] = made.headers["x-moreau-node"] === "a" ? [a, b] : [b, a];
  await request(owner.app.server)
    .post(`/v1/sessions/${id}/run`)
    .send({ realtimeFactor: 1 })
    .expect(202);
  // some way down before it moves (40 steps: 0.2 s of fall)
  await waitFor(
    async () => (await request(owner.app.server).get(`/v1/sessions/${id}`)).body.step >= 40,
    30_000,
  );
  return { id, owner, other };
}

/** Pauses through `node`, retrying a 503 (moved meanwhile): the answer's status and step. */
async function pause(node: Node, id: string): Promise<{ status: string; step: number }> {
  for (let i = 0; ; i++) {
    const r = await request(node.app.server).post(`/v1/sessions/${id}/pause`);
    if (r.status === 503 && i < 50) {
      await new Promise((res) => setTimeout(res, 100));
      continue;
    }
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return { status: r.body.status, step: r.body.step };
  }
}

/** The ball paused at step n: v_z = −g n h, z = z0 − ½ g (n h)². */
async function expectFallen(node: Node, id: string, n: number) {
  const r = await request(node.app.server).get(`/v1/sessions/${id}/state`).expect(200);
  const ball = r.body.bodies.find((x: { id: string }) => x.id === "ball");
  expect(r.body.step).toBe(n);
  expect(ball.velocity[2]).toBeCloseTo(-G * n * H, 9);
  expect(ball.position[2]).toBeCloseTo(Z0 - 0.5 * G * (n * H) ** 2, 9);
}

describe("a takeover resumes the run in the session's first turn", () => {
  it("a stream's step received while the takeover is under way takes effect after the resumption", async () => {
    const [a, b] = await nodes();
    const { id, owner, other } = await running(a, b);
    // a stream on the node about to take the session over
    const ws = new WebSocket(`${other.url.replace("http", "ws")}/v1/sessions/${id}/stream`);
    const answers: { type: string; error?: string; step?: number }[] = [];
    ws.on("message", (data: RawData) => {
      const m = JSON.parse(data.toString());
      if (m.type !== "scene" && m.type !== "state") answers.push(m);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    try {
      other.directory.holding = true;
      await owner.app.moreau.cluster?.drain();
      // open on the taking node, its run not resumed yet (its scene's write held)
      await waitFor(() => other.app.moreau.sessions.local(id) !== undefined, 30_000);
      const rec = other.app.moreau.sessions.local(id);
      ws.send(JSON.stringify({ type: "step", steps: 5, ref: 1 }));
      // served (before) or waiting for its turn behind the takeover's (now)
      await waitFor(() => answers.length > 0 || (rec?.commandsQueued ?? 0) >= 2, 30_000);
      other.directory.resume();
      await waitFor(() => answers.length > 0, 30_000);
      // before: { type: "stepped", step: <the checkpoint's + 5> }, the session then running
      expect([answers[0].type, answers[0].error]).toEqual(["error", "conflict"]);
      const s = await request(other.app.server).get(`/v1/sessions/${id}`).expect(200);
      expect([s.body.status, s.headers["x-moreau-node"]]).toEqual([
        "running",
        other === a ? "a" : "b",
      ]);
      const paused = await pause(other, id);
      expect(paused.status).toBe("paused");
      await expectFallen(other, id, paused.step);
    } finally {
      other.directory.resume();
      ws.close();
    }
  }, 60_000);
});

describe("a drain's hand-over takes the session's turn", () => {
  it("a pause received while the hand-over's checkpoint is written pauses the session where it runs next", async () => {
    const [a, b] = await nodes();
    const { id, owner, other } = await running(a, b);
    const rec = owner.app.moreau.sessions.local(id);
    if (!rec) throw new Error("no record");
    owner.store.holding = true;
    const drained = owner.app.moreau.cluster?.drain();
    // the hand-over's checkpoint (the run paused, kept in it) being written
    await waitFor(() => owner.store.waiting > 0, 30_000);
    const paused = pause(owner, id);
    // the pause served (before: its checkpoint queued behind the hand-over's) or waiting
    // for its turn behind the hand-over (now)
    await waitFor(() => rec.commandsQueued >= 2 || rec.checkpointWaiters.length >= 2, 30_000);
    owner.store.resume();
    await drained;
    const answer = await paused;
    expect(answer.status).toBe("paused");
    await waitFor(async () => {
      const r = await request(other.app.server).get(`/v1/sessions/${id}`);
      return r.status === 200 && r.headers["x-moreau-node"] === (other === a ? "a" : "b");
    }, 30_000);
    // before: 'running' (the run the hand-over's checkpoint held, resumed by the other node)
    const s = await request(other.app.server).get(`/v1/sessions/${id}`).expect(200);
    expect([s.body.status, s.body.step]).toEqual(["paused", answer.step]);
    await expectFallen(other, id, answer.step);
  }, 60_000);
});

describe("GET /v1/sessions during a takeover", () => {
  it("lists the session taken over as it is restored (running), on the taking node and through the other", async () => {
    const [a, b] = await nodes();
    const { id, owner, other } = await running(a, b);
    other.directory.holding = true;
    try {
      await owner.app.moreau.cluster?.drain();
      await waitFor(() => other.app.moreau.sessions.local(id) !== undefined, 30_000);
      const statusIn = (r: { body: { sessions: { id: string; status: string }[] } }) =>
        r.body.sessions.find((x) => x.id === id)?.status;
      // the taking node's own list, and the one it gives another node (forwarded)
      const own = request(other.app.server).get("/v1/sessions");
      const given = request(other.app.server)
        .get("/v1/sessions")
        .set(FORWARDED, `${owner === a ? "a" : "b"} ${await other.directory.secret("")}`);
      // before, both were answered at once, the session listed `paused`; the takeover is
      // let go on after 0.5 s either way (answered or not by then)
      let answered = 0;
      const both = Promise.all(
        [own, given].map((p) =>
          p.then((r) => {
            answered++;
            return r;
          }),
        ),
      );
      await waitFor(() => answered === 2, 500).catch(() => undefined);
      other.directory.resume();
      const [mine, forwarded] = await both;
      expect([statusIn(mine), statusIn(forwarded)]).toEqual(["running", "running"]);
    } finally {
      other.directory.resume();
    }
  }, 60_000);
});
