/**
 * Checkpoints in DATA_DIR (in-process apps sharing a temporary folder): a session is
 * written when created, paused, at the CHECKPOINT_EVERY_STEPS interval and on close; a
 * new app on the same folder restores every session at its last checkpoint (same id,
 * step and state hash) and it continues bit-identically; files are whole JSON, temporary
 * files of a killed writer are removed and unreadable files are set aside, not fatal.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, it } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { CheckpointStore } from "../../src/server/persistence";
import { springParticle } from "../support/models";
import { startApp } from "../support/server";
import { sleep, waitFor } from "../support/wait";
import { createSession, step } from "./helpers";

const dirs: string[] = [];
const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "moreau-data-"));
  dirs.push(d);
  return d;
}

async function open(dataDir: string, checkpointEverySteps = 0): Promise<MoreauApp> {
  const a = await startApp({ dataDir, checkpointEverySteps });
  apps.push(a);
  return a;
}

const fileOf = (dir: string, id: string) => join(dir, "sessions", `${id}.json`);
const readCheckpoint = (dir: string, id: string) =>
  JSON.parse(readFileSync(fileOf(dir, id), "utf8")) as {
    owner: string | null;
    snapshot: { session: { status: string }; simulation: { step: number; hash: string } };
  };

async function docOf(a: MoreauApp, id: string) {
  return (await request(a.server).get(`/v1/sessions/${id}/snapshot`).expect(200)).body as {
    simulation: { step: number; hash: string };
  };
}

describe("checkpoints", () => {
  it("on create, on pause and on close; restored by the next app on the folder", async () => {
    const dir = tempDir();
    const a = await open(dir);
    const id = await createSession(a, springParticle());
    await waitFor(async () => {
      try {
        return readCheckpoint(dir, id).snapshot.simulation.step === 0;
      } catch {
        return false;
      }
    });
    // a run that pauses itself at `until` is checkpointed there
    await request(a.server)
      .post(`/v1/sessions/${id}/run`)
      .send({ realtimeFactor: null, until: 0.1 })
      .expect(202);
    await waitFor(async () => readCheckpoint(dir, id).snapshot.session.status === "paused");
    const paused = readCheckpoint(dir, id).snapshot.simulation;
    expect(paused.step).toBe(100);
    expect(paused.hash).toBe((await docOf(a, id)).simulation.hash);
    // steps without a checkpoint (interval off), then close: the close checkpoints
    await step(a, id, 37);
    expect(readCheckpoint(dir, id).snapshot.simulation.step).toBe(100);
    const atClose = (await docOf(a, id)).simulation.hash;
    const other = await createSession(
      a,
      springParticle({ stiffness: 50, mass: 2, x0: 0.5, name: "other" }),
    );
    await step(a, other, 10);
    await a.close();
    expect(readCheckpoint(dir, id).snapshot.simulation).toMatchObject({ step: 137, hash: atClose });
    expect(readdirSync(join(dir, "sessions")).sort()).toEqual(
      [`${id}.json`, `${other}.json`].sort(),
    );

    const b = await open(dir);
    const list = (await request(b.server).get("/v1/sessions").expect(200)).body.sessions as {
      id: string;
      step: number;
      status: string;
    }[];
    expect(list.map((s) => s.id).sort()).toEqual([id, other].sort());
    expect(list.find((s) => s.id === id)).toMatchObject({ step: 137, status: "paused" });
    expect((await docOf(b, id)).simulation.hash).toBe(atClose);
    // and it continues as the uninterrupted run would: a fresh session stepped 137 + 63
    const ref = await createSession(b, springParticle());
    await step(b, ref, 200);
    await step(b, id, 63);
    expect((await docOf(b, id)).simulation.hash).toBe((await docOf(b, ref)).simulation.hash);
    // delete removes the file
    await request(b.server).delete(`/v1/sessions/${other}`).expect(204);
    await waitFor(async () => !readdirSync(join(dir, "sessions")).includes(`${other}.json`));
  });

  it("every CHECKPOINT_EVERY_STEPS steps, during step requests and runs", async () => {
    const dir = tempDir();
    const a = await open(dir, 100);
    const id = await createSession(a, springParticle());
    await step(a, id, 250);
    // written after the answer: wait for the file, then for the step
    await waitFor(
      async () =>
        existsSync(fileOf(dir, id)) && readCheckpoint(dir, id).snapshot.simulation.step === 250,
    );
    await step(a, id, 50); // 300 − 250 < 100: not yet
    await sleep(100);
    expect(readCheckpoint(dir, id).snapshot.simulation.step).toBe(250);
    await request(a.server).post(`/v1/sessions/${id}/run`).send({ realtimeFactor: 2 }).expect(202);
    // a running session is checkpointed as it goes (progress reports every 100 ms)
    await waitFor(async () => {
      const c = readCheckpoint(dir, id).snapshot;
      return c.simulation.step >= 400 && c.session.status === "running";
    }, 5000);
    await request(a.server).post(`/v1/sessions/${id}/pause`).expect(200);
    await a.close();
  });
});

describe("a checkpoint folder that cannot be written", () => {
  it("shows in /ready (503, with the error), the session (persisted false) and the metrics, until a write succeeds", async () => {
    const dir = tempDir();
    const a = await open(dir);
    const api = () => request(a.server);
    const id = await createSession(a, springParticle());
    const fresh = (await api().get(`/v1/sessions/${id}`).expect(200)).body;
    await waitFor(async () => (await api().get(`/v1/sessions/${id}`)).body.checkpointStep === 0);
    expect(fresh.persisted).toBe(true);
    expect((await api().get("/ready").expect(200)).body.persistence).toEqual({
      ok: true,
      error: null,
    });

    // the folder becomes a file: every write fails (ENOTDIR), also for a root process
    rmSync(join(dir, "sessions"), { recursive: true, force: true });
    writeFileSync(join(dir, "sessions"), "not a folder");
    await step(a, id, 5);
    await api().post(`/v1/sessions/${id}/pause`).expect(200); // a checkpoint on pause
    await waitFor(async () => (await api().get("/ready")).status === 503);
    const ready = (await api().get("/ready").expect(503)).body;
    expect(ready.ready).toBe(false);
    expect(ready.persistence.ok).toBe(false);
    expect(ready.persistence.error).toMatch(new RegExp(`checkpoint of session ${id} failed`));
    const s = (await api().get(`/v1/sessions/${id}`).expect(200)).body;
    expect(s.persisted).toBe(false);
    expect(s.checkpointStep).toBe(0);
    expect((await api().get("/metrics").expect(200)).text).toMatch(
      /moreau_checkpoint_failures_total [1-9]/,
    );

    // the folder back: the next checkpoint succeeds and readiness returns
    rmSync(join(dir, "sessions"), { force: true });
    mkdirSync(join(dir, "sessions"));
    await step(a, id, 5);
    await api().post(`/v1/sessions/${id}/pause`).expect(200);
    await waitFor(async () => (await api().get("/ready")).status === 200);
    const back = (await api().get(`/v1/sessions/${id}`).expect(200)).body;
    expect(back.persisted).toBe(true);
    expect(back.checkpointStep).toBe(10);
  });
});

describe("the checkpoint folder", () => {
  it("removes temporary files, sets unreadable files aside and restores the rest", async () => {
    const dir = tempDir();
    const a = await open(dir);
    const good = await createSession(a, springParticle());
    await step(a, good, 5);
    await a.close();
    const sessions = join(dir, "sessions");
    // what a writer killed mid-write leaves, a truncated file, and a wrong one
    writeFileSync(join(sessions, `${good}.json.1234.1.tmp`), '{"owner":null,"snap');
    const whole = readFileSync(join(sessions, `${good}.json`), "utf8");
    writeFileSync(join(sessions, "truncated-1.json"), whole.slice(0, whole.length / 2));
    writeFileSync(
      join(sessions, "wrong-2.json"),
      JSON.stringify({ owner: null, snapshot: { format: "x" } }),
    );
    const b = await open(dir);
    const ids = (
      (await request(b.server).get("/v1/sessions").expect(200)).body.sessions as { id: string }[]
    ).map((s) => s.id);
    expect(ids).toEqual([good]);
    const names = readdirSync(sessions);
    expect(names.filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(names.filter((n) => n.startsWith("truncated-1.rejected-")).length).toBe(1);
    expect(names.filter((n) => n.startsWith("wrong-2.rejected-")).length).toBe(1);
    await b.close();
  });

  it("writes through a temporary file and a rename: the target is always whole", async () => {
    const dir = tempDir();
    const log = { error() {}, warn() {}, info() {} } as never;
    const store = new CheckpointStore(dir, log);
    await store.init();
    const big = Buffer.from(JSON.stringify({ x: "y".repeat(4_000_000) }));
    const small = Buffer.from(JSON.stringify({ x: "z" }));
    // interleaved writes of one id land in order; readers never see a partial file: read
    // for as long as the writes are under way (a read after they all landed shows nothing)
    let settled = false;
    const writes = Promise.all([
      store.write("s1", null, big),
      store.write("s1", "k", small),
      store.write("s1", null, big),
    ]).finally(() => {
      settled = true;
    });
    let reads = 0;
    while (!settled || reads === 0) {
      try {
        const text = readFileSync(fileOf(dir, "s1"), "utf8");
        JSON.parse(text);
        reads++;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
      await new Promise((r) => setImmediate(r));
    }
    await writes;
    const last = JSON.parse(readFileSync(fileOf(dir, "s1"), "utf8"));
    expect(last.owner).toBe(null);
    expect(last.snapshot.x.length).toBe(4_000_000);
    expect(readdirSync(join(dir, "sessions"))).toEqual(["s1.json"]);
    await store.remove("s1");
    expect(readdirSync(join(dir, "sessions"))).toEqual([]);
  });
});
