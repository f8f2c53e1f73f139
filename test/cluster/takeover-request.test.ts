/**
 * A request on a session that reaches a node before that node's scan begins to take the
 * session over, and looks for its holder while the takeover opens it: the holder is this
 * node, the record is in its table, restored paused by its worker, and its run is resumed
 * only once the takeover's opening is done (SessionManager.adopt). The request waits for the
 * takeover and reads the session running (ClusterNode.route). Until 5cf3bd5 it was served
 * at once and read `paused`: the path found by which cluster.test's "a frozen owner that
 * comes back cannot write" could read `paused`, as it did once in CI on d0b45c8 (before
 * 5cf3bd5), b's probe (every 50 ms while the owner is frozen) being in b's holder lookup
 * when b's scan claims the session. That commit came without a test of the path.
 *
 * Two nodes in process over a MemoryCluster; the test holds their directory calls instead of
 * timing them: the owner's renewals and claims (frozen, as under SIGSTOP, to the end), the
 * registry the other node's scans read (empty until let), the request's holder lookup, and
 * the scene the takeover writes as it opens the session (ClusterNode.opened).
 */
import request from "supertest";
import { afterAll, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { MemoryCluster, MemoryDirectory } from "../../src/server/cluster/memory";
import { FORWARDED } from "../../src/server/cluster/node";
import type { Lease } from "../../src/server/cluster/ports";
import { memoryNodes } from "../support/memory-cluster";
import { springParticle } from "../support/models";
import { sleep } from "../support/wait";

const apps: MoreauApp[] = [];
/** every gate made: opened before the nodes close (a failed test leaves calls held) */
const gates: (() => void)[] = [];

afterAll(async () => {
  for (const open of gates) open();
  for (const app of apps) await app.close();
});

/** Shut until `open`; `reached` resolves once a call waits at it. */
function gate() {
  let open = () => {};
  let arrive = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const reached = new Promise<void>((r) => {
    arrive = r;
  });
  gates.push(() => open());
  return {
    open,
    reached,
    pass: async () => {
      arrive();
      await opened;
    },
  };
}

/** A node's directory whose calls the test holds (each gate, while set). */
class HeldDirectory extends MemoryDirectory {
  /** renew and claim: the node frozen */
  leases: ReturnType<typeof gate> | null = null;
  /** the registry the scans read is empty while true */
  hidden = false;
  /** the next holder lookup (taken by it) */
  nextHolder: ReturnType<typeof gate> | null = null;
  /** the scene written as a session is opened */
  scenes: ReturnType<typeof gate> | null = null;

  override async renew(lease: Lease, ttlMs: number): Promise<boolean> {
    await this.leases?.pass();
    return super.renew(lease, ttlMs);
  }

  override async claim(s: string, node: string, ttlMs: number, held = 0) {
    await this.leases?.pass();
    return super.claim(s, node, ttlMs, held);
  }

  override async sessions() {
    return this.hidden ? [] : super.sessions();
  }

  override async holder(session: string) {
    const g = this.nextHolder;
    this.nextHolder = null;
    await g?.pass();
    return super.holder(session);
  }

  override async putScene(session: string, scene: Uint8Array): Promise<void> {
    await this.scenes?.pass();
    return super.putScene(session, scene);
  }
}

it("a request that finds its node holding a session it is taking over is served once the session's run is resumed", async () => {
  const c = new MemoryCluster();
  const dirs = { a: new HeldDirectory(c), b: new HeldDirectory(c) };
  dirs.b.hidden = true;
  const [a, b] = await memoryNodes(c, apps, {}, (id) => ({ directory: dirs[id] }));
  // made and run on a (forwarded by b: made where it is asked, not placed)
  const made = await request(a.app.server)
    .post("/v1/sessions")
    .set(FORWARDED, `b ${c.secret}`)
    .send({ model: springParticle() })
    .expect(201);
  expect(made.headers["x-moreau-node"]).toBe("a");
  const id = made.body.id as string;
  // answered once the store holds a checkpoint with the run (the one b takes it over from)
  await request(a.app.server)
    .post(`/v1/sessions/${id}/run`)
    .send({ realtimeFactor: 1 })
    .expect(202);
  expect(c.snapshots.get(id)?.run).toEqual({ realtimeFactor: 1, until: null });

  // a frozen: it renews nothing; the request reaches b and waits in its holder lookup
  dirs.a.leases = gate();
  const looking = gate();
  dirs.b.nextHolder = looking;
  const asked = request(b.app.server)
    .get(`/v1/sessions/${id}`)
    .then((r) => r);
  await looking.reached;
  // a's lease lapses; b's scan sees the orphan and takes it over, up to its scene's write:
  // the record open on b, paused, its run not resumed yet
  c.leases.delete(id);
  const opening = gate();
  dirs.b.scenes = opening;
  dirs.b.hidden = false;
  await opening.reached;
  expect((await new MemoryDirectory(c).holder(id))?.node).toBe("b");
  // the request finds b holding it: not served while the takeover is under way (something
  // that must not happen: no condition to wait for)
  looking.open();
  let early: string | null = null;
  void asked.then((r) => {
    early ??= `answered ${r.status} ${r.body.status} before the run was resumed`;
  });
  await sleep(500);
  expect(early).toBeNull();
  dirs.b.scenes = null;
  opening.open();
  const r = await asked;
  expect([r.status, r.headers["x-moreau-node"], r.body.status]).toEqual([200, "b", "running"]);
}, 60_000);
