/**
 * A solver worker that cannot start at the server's start does not fail the start, whether
 * its thread starts and dies (its script missing, as a broken deployment leaves it:
 * MOREAU_WORKER_BUNDLE pointed at a file that does not exist) or the Worker constructor
 * itself throws (as it does with ERR_WORKER_INIT_FAILED when no thread can be had: injected
 * here by a vi.mock of node:worker_threads that is the real module unless `ctor.throwing`).
 * The server starts degraded — /health 200, /ready 503 naming the cause in workers.failing,
 * a new session and the checkpointed sessions' requests 503 `worker_unavailable` with
 * Retry-After, GET /v1/sessions listing the checkpointed sessions as `restoring` — and once a
 * worker can start (the pool retries with back-off) the checkpointed session is restored with
 * its acknowledged work; one deleted while it waits (DELETE 204: until 2026-12-07 it answered
 * 503) has its files gone from DATA_DIR and is opened neither then nor after a restart.
 * Until 2026-12-07 the start rejected (buildApp threw: the process exited). Real worker threads.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import request from "supertest";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import type { Checkpoint } from "../../src/server/cluster/ports";
import { ApiError } from "../../src/server/errors";
import { CheckpointStore } from "../../src/server/persistence";
import { startOneWorkerManager } from "../support/manager";
import { sample } from "../support/metrics";
import { hingedRods } from "../support/models";
import { driveWithImpulse, expectDrivenWithoutLoss } from "../support/recordings";
import { startApp } from "../support/server";
import { waitFor } from "../support/wait";

const ctor = vi.hoisted(() => ({ throwing: false, thrown: 0 }));
vi.mock("node:worker_threads", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:worker_threads")>();
  /** The real Worker, whose construction throws while `ctor.throwing`, as Node's does. */
  class Worker extends real.Worker {
    constructor(...args: ConstructorParameters<typeof real.Worker>) {
      if (ctor.throwing) {
        ctor.thrown++;
        throw Object.assign(new Error("injected-at-boot: ERR_WORKER_INIT_FAILED EAGAIN"), {
          code: "ERR_WORKER_INIT_FAILED",
        });
      }
      super(...args);
    }
  }
  return { ...real, default: { ...real, Worker }, Worker };
});

const model = { name: "rods", ...hingedRods({ integrator: "generalized-alpha", dt: 0.005 }) };

const dirs: string[] = [];
const bundle = process.env.MOREAU_WORKER_BUNDLE;
const apps: MoreauApp[] = [];
/** The workers start again (the script back, the constructor real). */
function mend() {
  if (bundle === undefined) delete process.env.MOREAU_WORKER_BUNDLE;
  else process.env.MOREAU_WORKER_BUNDLE = bundle;
  ctor.throwing = false;
}
// a failed test leaves no broken start to the next
afterEach(mend);
afterAll(async () => {
  for (const app of apps) await app.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const drive = (app: MoreauApp, id: string) => driveWithImpulse(() => request(app.server), id);

/**
 * A first server's DATA_DIR (a new folder) with the checkpoint of a session driven to step
 * 15 (and of `others` more driven the same way); the folder, the session's id, its last
 * answer and the others' ids.
 */
async function checkpointed(others = 0) {
  const dir = mkdtempSync(join(tmpdir(), "moreau-boot-"));
  dirs.push(dir);
  const first = await startApp({ workers: 1, dataDir: dir });
  apps.push(first);
  const ids: string[] = [];
  for (let i = 0; i <= others; i++)
    ids.push(
      (await request(first.server).post("/v1/sessions").send({ model }).expect(201)).body.id,
    );
  let before: { bodies: unknown } = { bodies: null };
  for (const id of ids) before = await drive(first, id);
  await first.close();
  const [id, ...rest] = ids;
  return { dir, id, before, others: rest };
}

/** The files DATA_DIR keeps of session `id`: its checkpoint <id>.json, its input log <id>.<log>.inputs. */
function filesOf(dir: string, id: string): string[] {
  return readdirSync(join(dir, "sessions"))
    .filter((f) => f.startsWith(`${id}.`))
    .sort();
}

/** moreau_sessions{status} of `app`'s /metrics, for each status named. */
async function sessionGauge(app: MoreauApp, statuses: string[]) {
  const text = (await request(app.server).get("/metrics").expect(200)).text;
  return Object.fromEntries(
    statuses.map((s) => [s, sample(text, `moreau_sessions{status="${s}"}`)]),
  );
}

/**
 * `app` started with no worker that could start: /health 200, /ready 503 with the cause
 * (containing `cause`), a new session and the checkpointed session `id` 503
 * worker_unavailable with Retry-After, and GET /v1/sessions listing `id` as `restoring` at
 * its checkpoint's step 15 (t = 15 dt) with the model's counts (2 rods, 2 hinges).
 */
async function expectDegraded(app: MoreauApp, id: string, cause: string) {
  const api = () => request(app.server);
  await api().get("/health").expect(200);
  const ready = await api().get("/ready");
  expect(ready.status).toBe(503);
  expect(ready.body.workers.alive).toBe(0);
  expect(ready.body.workers.failing).toHaveLength(1);
  expect(ready.body.workers.failing[0]).toContain(cause);
  // a new session: no worker can take it
  const c = await api().post("/v1/sessions").send({ model });
  expect(c.status).toBe(503);
  expect(c.body.error).toBe("worker_unavailable");
  expect(Number(c.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  // the checkpointed session waits for one: what needs its simulation 503 naming the cause
  // and the session, not 404
  for (const r of [
    await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 }),
    await api().get(`/v1/sessions/${id}/state`),
  ]) {
    expect(r.status).toBe(503);
    expect(r.body.error).toBe("worker_unavailable");
    expect(r.body.message).toContain(cause);
    expect(r.body.message).toContain(`session "${id}"`);
    expect(r.body.details.session).toBe(id);
    expect(Number(r.headers["retry-after"])).toBeGreaterThanOrEqual(1);
  }
  // and is listed, saying what it waits for; its own record the same (before: GET 503)
  const { sessions } = (await api().get("/v1/sessions").expect(200)).body;
  expect(sessions).toHaveLength(1);
  const listed = sessions[0];
  const own = (await api().get(`/v1/sessions/${id}`).expect(200)).body;
  expect(own).toEqual(listed);
  expect(listed).toMatchObject({
    id,
    name: "rods",
    status: "restoring",
    step: 15,
    checkpointStep: 15,
    dt: 0.005,
    counts: { bodies: model.bodies.length, joints: model.joints.length },
    rebuilding: false,
    run: null,
  });
  expect(listed.time).toBeCloseTo(15 * 0.005, 12);
  expect(listed.message).toContain("for a solver worker");
  expect(listed.message).toContain(`waiting since ${listed.lastActivityAt}`);
  expect(listed.message).toContain(cause);
  // and counted by the metrics as what it is listed as
  expect(await sessionGauge(app, ["restoring", "ready", "error"])).toEqual({
    restoring: 1,
    ready: 0,
    error: 0,
  });
}

/**
 * Once a worker starts: the session is back at step 15 as it was, and stepped on to 20 it is
 * exactly a session driven the same way with no restart.
 */
async function expectRestored(app: MoreauApp, id: string, before: { bodies: unknown }) {
  const api = () => request(app.server);
  await waitFor(async () => (await api().get("/ready")).status === 200, 60_000);
  await waitFor(
    async () => (await api().get(`/v1/sessions/${id}`)).body.status !== "restoring",
    20_000,
  );
  const restored = (await api().get(`/v1/sessions/${id}/state`).expect(200)).body;
  expect(restored.step).toBe(15);
  expect(restored.bodies).toEqual(before.bodies);
  // listed as itself again (stepped, never run: ready), no longer restoring
  const listed = (await api().get("/v1/sessions").expect(200)).body.sessions;
  expect(listed.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
    [id, "ready"],
  ]);
  await expectDrivenWithoutLoss(api, id, model, 20);
  // the restored session and the reference, both ready; none restoring any more
  expect(await sessionGauge(app, ["restoring", "ready"])).toEqual({ restoring: 0, ready: 2 });
}

describe("a worker that cannot start at the server's start", () => {
  it("starts degraded (/health 200, /ready 503 naming it, 503 worker_unavailable, listed restoring), then restores the checkpointed session", async () => {
    const { dir, id, before } = await checkpointed();
    // the worker's script is missing at the restart: before, startApp rejected here
    process.env.MOREAU_WORKER_BUNDLE = join(dir, "no-such-worker-at-boot.mjs");
    const app = await startApp({ workers: 1, dataDir: dir });
    apps.push(app);
    await expectDegraded(app, id, "no-such-worker-at-boot");
    // the script is back: the pool's next try starts the worker and the session comes back
    mend();
    await expectRestored(app, id, before);
  }, 120_000);

  it("starts degraded the same way when the Worker constructor throws, then restores the session", async () => {
    const { dir, id, before } = await checkpointed();
    ctor.throwing = true;
    // before: startApp rejected with the constructor's error
    const app = await startApp({ workers: 1, dataDir: dir });
    apps.push(app);
    expect(ctor.thrown).toBe(1);
    await expectDegraded(app, id, "injected-at-boot");
    // the pool retries with back-off: each try a throw, each still degraded
    await waitFor(() => ctor.thrown >= 2, 10_000);
    expect((await request(app.server).get("/ready")).status).toBe(503);
    mend();
    await expectRestored(app, id, before);
  }, 120_000);

  it("deletes a session waiting for a worker: 204, its files gone, never reopened, not after a restart either", async () => {
    const { dir, id, others } = await checkpointed(1);
    const [kept] = others;
    // both on disk: a checkpoint and the input log holding the impulse
    for (const s of [id, kept]) {
      const files = filesOf(dir, s);
      expect(files).toContain(`${s}.json`);
      expect(files.filter((f) => f.endsWith(".inputs"))).toHaveLength(1);
    }
    process.env.MOREAU_WORKER_BUNDLE = join(dir, "no-such-worker-at-delete.mjs");
    const app = await startApp({ workers: 1, dataDir: dir });
    apps.push(app);
    const api = () => request(app.server);
    expect((await api().get("/ready")).status).toBe(503);
    expect(await sessionGauge(app, ["restoring", "ready"])).toEqual({ restoring: 2, ready: 0 });
    // before: 503 worker_unavailable (the delete looked only in the open sessions)
    const del = await api().delete(`/v1/sessions/${id}`);
    expect(del.status).toBe(204);
    // gone: its files, its requests (404, no longer 503), the list, the metrics
    expect(filesOf(dir, id)).toEqual([]);
    expect((await api().delete(`/v1/sessions/${id}`)).status).toBe(404);
    expect((await api().get(`/v1/sessions/${id}`)).status).toBe(404);
    expect((await api().post(`/v1/sessions/${id}/step`).send({ steps: 1 })).status).toBe(404);
    const listed = (await api().get("/v1/sessions").expect(200)).body.sessions;
    expect(listed.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      [kept, "restoring"],
    ]);
    expect(await sessionGauge(app, ["restoring", "ready"])).toEqual({ restoring: 1, ready: 0 });
    // the other session untouched, still waiting
    expect(filesOf(dir, kept)).toHaveLength(2);
    const s = await api().post(`/v1/sessions/${kept}/step`).send({ steps: 1 });
    expect(s.status).toBe(503);
    // a worker starts: only the other one is opened
    mend();
    await waitFor(async () => (await api().get("/ready")).status === 200, 60_000);
    await waitFor(
      async () => (await api().get(`/v1/sessions/${kept}`)).body.status !== "restoring",
      20_000,
    );
    expect((await api().get(`/v1/sessions/${kept}/state`).expect(200)).body.step).toBe(15);
    expect((await api().get(`/v1/sessions/${id}`)).status).toBe(404);
    const after = (await api().get("/v1/sessions").expect(200)).body.sessions;
    expect(after.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [kept, "ready"],
    ]);
    expect(await sessionGauge(app, ["restoring", "ready"])).toEqual({ restoring: 0, ready: 1 });
    expect(filesOf(dir, id)).toEqual([]);
    await app.close();
    // a restart: the deleted session does not come back, the other one does
    const again = await startApp({ workers: 1, dataDir: dir });
    apps.push(again);
    const back = (await request(again.server).get("/v1/sessions").expect(200)).body.sessions;
    expect(back.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [kept, "ready"],
    ]);
    expect((await request(again.server).get(`/v1/sessions/${id}`)).status).toBe(404);
    expect(
      (await request(again.server).get(`/v1/sessions/${kept}/state`).expect(200)).body.step,
    ).toBe(15);
    expect(filesOf(dir, id)).toEqual([]);
  }, 120_000);
});

/**
 * DATA_DIR's store, whose reads of a checkpoint can be held once read (`hold`: a restore
 * pass under way with the checkpoint in hand) and whose deletes can fail (`failRemove`: the
 * unlink, the rename aside and the tombstone all failing).
 */
class HeldStore extends CheckpointStore {
  reads = 0;
  hold: Promise<void> | null = null;
  failRemove: Error | null = null;
  override async read(id: string): Promise<Checkpoint | null> {
    const cp = await super.read(id);
    this.reads++;
    if (this.hold) await this.hold;
    return cp;
  }
  override remove(id: string): Promise<void> {
    return this.failRemove ? Promise.reject(this.failRemove) : super.remove(id);
  }
}

describe("deleting a session that waits for a worker, with the store in the way", () => {
  const log = pino({ level: "silent" });
  /** A manager on `dir` started with no worker that can start, its session waiting. */
  async function degraded(dir: string, store: CheckpointStore) {
    process.env.MOREAU_WORKER_BUNDLE = join(dir, "no-such-worker-in-the-way.mjs");
    const m = await startOneWorkerManager(dir, store, log, 1000, 0);
    expect(m.pool.alive).toBe(0);
    return m;
  }
  const listed = (m: { list(): { id: string; status: string }[] }) =>
    m.list().map((s) => [s.id, s.status]);

  it("keeps it (500, still listed, its files on disk) when its checkpoint cannot be removed; a retry deletes it", async () => {
    const { dir, id } = await checkpointed();
    const store = new HeldStore(dir, log);
    const m = await degraded(dir, store);
    try {
      store.failRemove = new Error("injected-remove-failure");
      const err = await m.delete(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).statusCode).toBe(500);
      expect((err as ApiError).message).toContain("injected-remove-failure");
      expect(listed(m)).toEqual([[id, "restoring"]]);
      expect(filesOf(dir, id)).toHaveLength(2);
      store.failRemove = null;
      await m.delete(id);
      expect(listed(m)).toEqual([]);
      expect(m.byStatus().restoring).toBe(0);
      expect(filesOf(dir, id)).toEqual([]);
    } finally {
      mend();
      await m.close();
    }
  }, 60_000);

  it("counts its wait from when it began: a worker that starts and is lost before opening it leaves the wait's start as it was", async () => {
    const { dir, id, before } = await checkpointed();
    // the manager's log lines: a restore pass's end is logged
    const lines: string[] = [];
    const logged = pino({ level: "info" }, { write: (l: string) => lines.push(l) });
    const passes = () => lines.filter((l) => l.includes("a solver worker started")).length;
    const store = new HeldStore(dir, logged);
    process.env.MOREAU_WORKER_BUNDLE = join(dir, "no-such-worker-retried.mjs");
    const m = await startOneWorkerManager(dir, store, logged, 1000, 0, { testHooks: true });
    let release = () => {};
    try {
      expect(m.pool.alive).toBe(0);
      const first = m.get(id);
      expect(first.status).toBe("restoring");
      const since = first.lastActivityAt;
      // a later try's clock would read later than `since` (ISO strings: ms)
      await new Promise((r) => setTimeout(r, 20));
      store.hold = new Promise<void>((r) => {
        release = r;
      });
      const readsBefore = store.reads;
      // a worker starts: its restore pass reads the checkpoint and is held with it in hand,
      // while the worker is lost and its replacement cannot start
      mend();
      await waitFor(() => store.reads > readsBefore, 60_000);
      m.pool.breakStartsForTest(0, true);
      await m.pool.killForTest(0);
      await waitFor(() => m.pool.startErrors()[0] !== null, 20_000);
      store.hold = null;
      release();
      // the pass's open is refused (503): the session waits again
      await waitFor(() => passes() === 1, 20_000);
      expect(m.exists(id)).toBe(false);
      const again = m.get(id);
      expect(again.status).toBe("restoring");
      // before: lastActivityAt (and the message) the failed try's time
      expect(again.lastActivityAt).toBe(since);
      expect(again.message).toContain(`waiting since ${since}`);
      expect(again.message).toContain("no-such-worker-for-test");
      expect(m.list()).toEqual([again]);
      // and once a worker starts it is opened with its acknowledged work
      m.pool.breakStartsForTest(0, false);
      await waitFor(() => m.exists(id), 60_000);
      const state = JSON.parse(Buffer.from(await m.state(id)).toString());
      expect(state.step).toBe(15);
      expect(state.bodies).toEqual(before.bodies);
    } finally {
      release();
      mend();
      await m.close();
    }
  }, 60_000);

  it("deletes it when the delete comes while a worker's start is opening it: not opened after, nor after a restart", async () => {
    const { dir, id } = await checkpointed();
    const store = new HeldStore(dir, log);
    const m = await degraded(dir, store);
    let release = () => {};
    store.hold = new Promise<void>((r) => {
      release = r;
    });
    const readsBefore = store.reads;
    try {
      // a worker starts: its restore pass reads the checkpoint and is held with it in hand
      mend();
      await waitFor(() => store.reads > readsBefore, 60_000);
      let answered = false;
      const del = m.delete(id).then(() => {
        answered = true;
      });
      await new Promise((r) => setTimeout(r, 50));
      // the delete waits for the pass
      expect(answered).toBe(false);
      store.hold = null;
      release();
      await del;
      // a new session on the one worker, answered after any open the pass asked of it
      const other = (await m.create({ model })).id;
      // before: the pass opened the session after its files were removed (listed "ready")
      expect(listed(m)).toEqual([[other, "ready"]]);
      expect(m.exists(id)).toBe(false);
      expect(m.byStatus()).toMatchObject({ ready: 1, restoring: 0 });
      expect(filesOf(dir, id)).toEqual([]);
      await expect(m.delete(id)).rejects.toMatchObject({ statusCode: 404 });
    } finally {
      release();
      await m.close();
    }
    // a restart: only the new session to open
    const again = await startOneWorkerManager(dir, new CheckpointStore(dir, log), log, 1000, 0);
    try {
      expect(listed(again).map(([x]) => x)).not.toContain(id);
      expect(listed(again)).toHaveLength(1);
      expect(filesOf(dir, id)).toEqual([]);
    } finally {
      await again.close();
    }
  }, 60_000);
});
