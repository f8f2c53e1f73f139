/**
 * Checkpoint coalescing (issue 26, item 11): a fast client stepping a session with a small
 * CHECKPOINT_EVERY_STEPS used to fsync a checkpoint after nearly every request (38 a
 * second in the probe). Now a session is checkpointed at most once per
 * CHECKPOINT_MIN_INTERVAL_MS (1 s by default; creation, end of a run, pause and shutdown
 * at once), one write in flight per session, the latest state winning; a pause and the
 * shutdown flush a deferred checkpoint at once, a delete drops it. No bound here depends on
 * the machine's speed (the write count is bounded by the time the loop actually took).
 * Bounded: ~6 s, loopback only.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import { Model } from "../../schemas/model";
import { CheckpointStore } from "../../src/server/persistence";
import type { InputLogAt } from "../../src/server/protocol";
import { createSession } from "../api/helpers";
import { startOneWorkerManager } from "../support/manager";
import { sample } from "../support/metrics";
import { springParticle } from "../support/models";
import { startApp } from "../support/server";
import { sleep, waitFor } from "../support/wait";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "moreau-coalesce-"));
  dirs.push(d);
  return d;
};
const log = pino({ level: "silent" });
/** At most one checkpoint a minute: longer than a test, so one not flushed stays deferred. */
const MINUTE_MS = 60_000;

/** A store that counts its writes, how many ran at once, and slows each down a little. */
class CountingStore extends CheckpointStore {
  writes: { id: string; step: number; at: number }[] = [];
  running = 0;
  maxRunning = 0;
  protected override async persist(
    target: string,
    owner: string | null,
    snapshot: Uint8Array,
    log?: InputLogAt | null,
  ) {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    try {
      await sleep(20);
      await super.persist(target, owner, snapshot, log);
      const doc = JSON.parse(Buffer.from(snapshot).toString("utf8"));
      this.writes.push({ id: doc.session.id, step: doc.session.step, at: performance.now() });
    } finally {
      this.running--;
    }
  }
}

describe("checkpoint coalescing", () => {
  it("a client stepping as fast as it can: about one checkpoint a second, not one per request", async () => {
    const dir = tempDir();
    const app = await startApp({ dataDir: dir, checkpointEverySteps: 10 });
    try {
      const id = await createSession(app, springParticle());
      const metrics = async () =>
        sample((await request(app.server).get("/metrics")).text, "moreau_checkpoints_total");
      await waitFor(async () => (await metrics()) >= 1, 5000); // the creation checkpoint
      const before = await metrics();
      const t0 = performance.now();
      let requests = 0;
      while (performance.now() - t0 < 2000 && requests < 2000) {
        await request(app.server).post(`/v1/sessions/${id}/step`).send({ steps: 20 }).expect(200);
        requests++;
      }
      const seconds = (performance.now() - t0) / 1000;
      const written = (await metrics()) - before;
      // every request was due (20 ≥ 10 steps): uncoalesced, one write per request
      expect(requests).toBeGreaterThan(20);
      expect(written).toBeGreaterThanOrEqual(1);
      expect(written).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      // a pause flushes the deferred one at once: the file holds the last step
      const last = requests * 20;
      await request(app.server).post(`/v1/sessions/${id}/pause`).expect(200);
      const file = join(dir, "sessions", `${id}.json`);
      await waitFor(
        async () => JSON.parse(readFileSync(file, "utf8")).snapshot.simulation.step === last,
        5000,
      );
      console.log(
        `coalescing: ${requests} step requests in ${seconds.toFixed(2)} s, ${written} checkpoints written`,
      );
    } finally {
      await app.close();
    }
  }, 20_000);

  it("with a counting store: deferred within the interval, pause and close flush, delete drops", async () => {
    const dir = tempDir();
    const store = new CountingStore(dir, log);
    const m = await startOneWorkerManager(dir, store, log, 5, MINUTE_MS);
    let closed = false;
    try {
      const model = Model.parse(springParticle());
      const id = (await m.create({ model })).id;
      await waitFor(async () => store.writes.length === 1, 5000);
      expect(store.writes[0]).toMatchObject({ id, step: 0 });
      // 100 requests, each due (10 ≥ 5 steps): all deferred, none written
      for (let i = 0; i < 100; i++) await m.step(id, { steps: 10 });
      await sleep(50);
      expect(store.writes.length).toBe(1);
      // a pause flushes at once, with the latest state
      await m.pause(id);
      await waitFor(async () => store.writes.length === 2, 5000);
      expect(store.writes[1]).toMatchObject({ id, step: 1000 });

      // a deferred checkpoint dropped by a delete: nothing written, the file gone
      await m.step(id, { steps: 10 });
      await m.delete(id);
      // another session's deferred checkpoint is flushed by the shutdown
      const other = (await m.create({ model })).id;
      await waitFor(async () => store.writes.length === 3, 5000);
      await m.step(other, { steps: 10 });
      await sleep(50);
      expect(store.writes.length).toBe(3);
      closed = true;
      await m.close();
      expect(store.writes.slice(2)).toEqual([
        expect.objectContaining({ id: other, step: 0 }),
        expect.objectContaining({ id: other, step: 10 }),
      ]);
      expect(store.writes.filter((w) => w.id === id).length).toBe(2);
      expect(() => readFileSync(join(dir, "sessions", `${id}.json`))).toThrow(/ENOENT/);
      expect(store.maxRunning).toBe(1);
    } finally {
      if (!closed) await m.close();
    }
  }, 20_000);

  it("the store: writes asked for during one in flight become one, with the latest bytes", async () => {
    const dir = tempDir();
    const store = new CountingStore(dir, log);
    await store.init();
    const doc = (step: number) =>
      Buffer.from(JSON.stringify({ session: { id: "s1", step } }), "utf8");
    const first = store.write("s1", null, doc(0));
    await sleep(5); // the first write is under way
    const later = Array.from({ length: 10 }, (_, i) => store.write("s1", null, doc(i + 1)));
    await Promise.all([first, ...later]);
    expect(store.writes.map((w) => w.step)).toEqual([0, 10]);
    expect(store.maxRunning).toBe(1);
    const onDisk = JSON.parse(readFileSync(join(dir, "sessions", "s1.json"), "utf8"));
    expect(onDisk.snapshot.session.step).toBe(10);
  });

  it("a pause while another checkpoint is still being written is checkpointed after it, and answered then", async () => {
    const dir = tempDir();
    // the second write (a PATCH's) waits until released: it stays in flight
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let entered = 0;
    class GatedStore extends CountingStore {
      protected override async persist(
        target: string,
        owner: string | null,
        bytes: Uint8Array,
        log?: InputLogAt | null,
      ) {
        if (++entered === 2) await gate;
        await super.persist(target, owner, bytes, log);
      }
    }
    const store = new GatedStore(dir, log);
    const m = await startOneWorkerManager(dir, store, log, 0, MINUTE_MS);
    try {
      const id = (await m.create({ model: springParticle() })).id;
      let patched = false;
      const patch = m.patch(id, { gravity: [0, 0, -1] }).then(() => {
        patched = true;
      });
      await waitFor(async () => entered === 2, 5000);
      await m.step(id, { steps: 120 });
      let paused = false;
      const pause = m.pause(id).then(() => {
        paused = true;
      });
      await sleep(50);
      // neither answer leaves before its checkpoint is written
      expect([patched, paused]).toEqual([false, false]);
      release();
      await Promise.all([patch, pause]);
      // before the fix the pause saw a checkpoint in flight and asked for none
      expect(store.writes.map((w) => w.step)).toEqual([0, 0, 120]);
    } finally {
      await m.close();
    }
  });
});
