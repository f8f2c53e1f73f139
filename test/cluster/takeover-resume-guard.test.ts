/**
 * A cluster takeover resumes a run with a restart's guard (recovery.ts resumeTakenOver): the
 * time it resumes the run is written with it in the store's checkpoint (RunAt.resumedAt),
 * and a node taking the session over after its holder died within 60 s of a resume after a
 * loss (a takeover's, a worker-loss rebuild's) takes it over paused, its message saying why.
 * A drain's hand-over (the holder alive) writes its checkpoint without that time, so the
 * node taking it over resumes the run. Until 2026-12-07 a takeover neither wrote nor read
 * it: a run that took down each node taking it over went round the cluster forever.
 *
 * In process over a MemoryCluster, checkpoints every K = 50 steps. A holder "dies" as under
 * SIGSTOP: its lease calls (renew, claim) held, its lease dropped from the directory as its
 * expiry would; let go again, its renewal is refused and it lets the session go, as a node
 * started anew holds nothing. The ball falls under moreau-jean's default θ = 1/2, exact for a
 * constant acceleration: at step n, v_z = −g n h and z = z0 − ½ g (n h)².
 */
import request from "supertest";
import { afterAll, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import {
  MemoryCluster,
  MemoryDirectory,
  MemorySnapshotStore,
} from "../../src/server/cluster/memory";
import type { Lease } from "../../src/server/cluster/ports";
import { type MemoryNode, memoryNode, memoryNodes } from "../support/memory-cluster";
import { fallingBody } from "../support/models";
import { waitFor } from "../support/wait";

const H = 0.005;
const G = 9.81;
const Z0 = 10;
/** checkpoints every K steps, as soon as due */
const CONFIG = { checkpointEverySteps: 50, checkpointMinIntervalMs: 0 };

const apps: MoreauApp[] = [];
/** the directories made: let go before the nodes close (a failed test leaves them frozen) */
const frozen: FreezableDirectory[] = [];
afterAll(async () => {
  for (const d of frozen) d.thaw();
  for (const app of apps) await app.close();
});

/** A node's directory whose lease calls (renew, claim) wait while it is frozen. */
class FreezableDirectory extends MemoryDirectory {
  private frozen: Promise<void> | null = null;
  private unfreeze = () => {};

  freeze(): void {
    this.frozen = new Promise((r) => {
      this.unfreeze = r;
    });
  }

  thaw(): void {
    this.frozen = null;
    this.unfreeze();
  }

  override async renew(lease: Lease, ttlMs: number): Promise<boolean> {
    await this.frozen;
    return super.renew(lease, ttlMs);
  }

  override async claim(s: string, node: string, ttlMs: number, held = 0) {
    await this.frozen;
    return super.claim(s, node, ttlMs, held);
  }
}

/** Nodes a, b and `more` of a new cluster, each with a freezable directory. */
async function cluster(more: string[] = []) {
  const c = new MemoryCluster();
  const dirs = new Map<string, FreezableDirectory>();
  const dir = (id: string) => {
    const d = new FreezableDirectory(c);
    frozen.push(d);
    dirs.set(id, d);
    return d;
  };
  const cfg = { ...CONFIG, testHooks: true };
  const [a, b] = await memoryNodes(c, apps, cfg, (id) => ({ directory: dir(id) }));
  const nodes = new Map<string, MemoryNode>([
    ["a", a],
    ["b", b],
  ]);
  for (const id of more) nodes.set(id, await memoryNode(c, apps, id, cfg, { directory: dir(id) }));
  await waitFor(async () => (await new MemoryDirectory(c).nodes()).length === nodes.size, 5000);
  const store = new MemorySnapshotStore(c);
  return {
    c,
    dirs,
    nodes,
    node: (id: string) => nodes.get(id) as MemoryNode,
    /** the store's checkpoint of a session: its status, step and run */
    stored: async (id: string) => {
      const cp = await store.read(id);
      if (!cp) throw new Error(`no checkpoint of ${id}`);
      return { status: cp.snapshot.session.status, step: cp.snapshot.simulation.step, run: cp.run };
    },
  };
}

type Cluster = Awaited<ReturnType<typeof cluster>>;

/** A falling ball's session made on `at` and run at half speed; its id. */
async function runningBall(at: MemoryNode): Promise<string> {
  const made = await request(at.app.server)
    .post("/v1/sessions")
    .send({ model: fallingBody({ z0: Z0 }) })
    .expect(201);
  const id = made.body.id as string;
  await request(at.app.server)
    .post(`/v1/sessions/${id}/run`)
    .send({ realtimeFactor: 0.5 })
    .expect(202);
  return id;
}

/** The node holding session `id` (its record open there, not lost nor being rebuilt). */
function holderOf(k: Cluster, id: string, other = ""): string | undefined {
  return [...k.nodes.keys()].find((n) => {
    const rec = k.node(n).app.moreau.sessions.local(id);
    return n !== other && rec !== undefined && !rec.lost && rec.rebuilding === null;
  });
}

/** Session `id` as node `at` answers it (a GET waits for a takeover under way there). */
async function sessionOn(k: Cluster, at: string, id: string) {
  const s = await request(k.node(at).app.server).get(`/v1/sessions/${id}`).expect(200);
  return s.body as { status: string; step: number; message: string | null };
}

/**
 * Holder `dead` of session `id` dies (frozen, its lease dropped as its expiry would); once
 * another node has taken the session over, `dead` comes back holding nothing. The node
 * that took it over, and the session as it answers it.
 */
async function die(k: Cluster, id: string, dead: string) {
  k.dirs.get(dead)?.freeze();
  k.c.leases.delete(id);
  const taker = await waitFor(() => holderOf(k, id, dead) ?? false, 30_000);
  const s = await sessionOn(k, taker, id);
  k.dirs.get(dead)?.thaw();
  await waitFor(() => k.node(dead).app.moreau.sessions.local(id) === undefined, 30_000);
  return { taker, s };
}

/** The ball's state on node `at`, at `step`: on the closed form to 1e-9. */
async function expectOnFall(k: Cluster, at: string, id: string, step: number): Promise<void> {
  const state = await request(k.node(at).app.server).get(`/v1/sessions/${id}/state`).expect(200);
  expect(state.body.step).toBe(step);
  const ball = state.body.bodies.find((x: { id: string }) => x.id === "ball");
  expect(ball.velocity[2]).toBeCloseTo(-G * step * H, 9);
  expect(ball.position[2]).toBeCloseTo(Z0 - 0.5 * G * (step * H) ** 2, 9);
}

/** A takeover after a second loss within the window: paused at its checkpoint, no run kept. */
async function expectTakenOverPaused(
  k: Cluster,
  id: string,
  taken: Awaited<ReturnType<typeof die>>,
): Promise<void> {
  // before: 'running', message null (resumed again, as at every takeover)
  expect(taken.s.status).toBe("paused");
  expect(taken.s.message).toContain(
    `taken over from its checkpoint at step ${taken.s.step}; its run was not resumed, the node holding it having lost it without a hand-over (died, or lost its worker) within 60 s`,
  );
  // its checkpoint, at that step, without the run: a later takeover does not resume it either
  await waitFor(async () => (await k.stored(id)).run === null, 10_000);
  expect(await k.stored(id)).toMatchObject({ status: "paused", step: taken.s.step });
  await expectOnFall(k, taken.taker, id, taken.s.step);
}

/** Waits for a checkpoint of session `id` K steps past the one stored now. */
async function checkpointOnward(k: Cluster, id: string): Promise<void> {
  const from = (await k.stored(id)).step;
  await waitFor(async () => (await k.stored(id)).step >= from + 50, 30_000);
}

it("a session whose holder dies twice within 60 s is taken over paused the second time", async () => {
  const k = await cluster();
  const id = await runningBall(k.node("a"));
  const first = holderOf(k, id) as string;
  // the client's run: no resume after a loss recorded
  expect((await k.stored(id)).run).toEqual({ realtimeFactor: 0.5, until: null });

  const diedAt = Date.now();
  const once = await die(k, id, first);
  expect(once.s.status).toBe("running");
  // the takeover's resume written with the run (before: no resumedAt)
  const resumedAt = (await k.stored(id)).run?.resumedAt;
  expect(resumedAt).toBeGreaterThanOrEqual(diedAt);
  expect(resumedAt).toBeLessThanOrEqual(Date.now());

  // run on past a checkpoint on the new holder, which dies in turn
  await checkpointOnward(k, id);
  const twice = await die(k, id, once.taker);
  expect(twice.taker).toBe(first);
  await expectTakenOverPaused(k, id, twice);
}, 120_000);

it("a session whose worker is lost, then whose holder dies, within 60 s is taken over paused", async () => {
  const k = await cluster();
  const id = await runningBall(k.node("a"));
  const holder = holderOf(k, id) as string;
  await checkpointOnward(k, id);
  // its worker lost: rebuilt on its node, its run resumed (the rebuild writes resumedAt)
  const lostAt = Date.now();
  await k.node(holder).app.moreau.sessions.pool.killForTest(0);
  await waitFor(async () => ((await k.stored(id)).run?.resumedAt ?? 0) >= lostAt, 30_000);
  await waitFor(() => holderOf(k, id) === holder, 30_000);
  expect((await sessionOn(k, holder, id)).status).toBe("running");

  await checkpointOnward(k, id);
  const taken = await die(k, id, holder);
  await expectTakenOverPaused(k, id, taken);
}, 120_000);

it("a session handed over by a drain twice in a row within 60 s of its holder's death runs on", async () => {
  const k = await cluster(["c"]);
  const id = await runningBall(k.node("a"));
  // its holder dies: taken over, its resume's time written with the run
  const once = await die(k, id, holderOf(k, id) as string);
  expect(once.s.status).toBe("running");
  const resumedAt = (await k.stored(id)).run?.resumedAt ?? 0;

  // drained twice in a row within the window: the node taking it over resumes the run, as
  // a first resume (its time written), each time
  let holder = once.taker;
  for (const drain of [1, 2]) {
    await checkpointOnward(k, id);
    const drainedAt = Date.now();
    await k.node(holder).app.moreau.cluster?.drain();
    const taker = await waitFor(() => holderOf(k, id, holder) ?? false, 30_000);
    const s = await sessionOn(k, taker, id);
    // a drain counted as a death: 'paused' at the second takeover within the window
    expect([drain, s.status, s.message]).toEqual([drain, "running", null]);
    const noted = (await k.stored(id)).run?.resumedAt;
    // before: no resumedAt (a takeover noted none)
    expect(noted).toBeGreaterThanOrEqual(drainedAt);
    expect(noted).toBeLessThan(resumedAt + 60_000);
    holder = taker;
  }
  // on the fall, not a step lost: paused where it is
  const p = await request(k.node(holder).app.server).post(`/v1/sessions/${id}/pause`).expect(200);
  await expectOnFall(k, holder, id, p.body.step);
}, 120_000);
