/**
 * A DELETE must be durable (issue 26, item 8): when the checkpoint's unlink fails (EIO,
 * EBUSY, a file that cannot be removed), the session used to be answered 204 and come back
 * after a restart. Now the file is renamed aside, or a tombstone is written, and the next
 * start honours it; when none of these can be done the DELETE answers 500 and the session
 * is kept (a retry succeeds once the folder behaves). The failing file operations are
 * injected (the tests run as root: permissions would not stop it).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { MoreauApp } from "../../src/server/app";
import { createSession, step } from "../api/helpers";
import { springParticle } from "../support/models";
import { startApp } from "../support/server";
import { waitFor } from "../support/wait";

/** Which operations on a checkpoint file (path ending in `.json`) fail, with EIO (unlink: rm too). */
const failing = { unlink: false, rename: false, tombstone: false };

vi.mock("node:fs/promises", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs/promises")>();
  const eio = (op: string, path: string) =>
    Object.assign(new Error(`EIO: i/o error, ${op} '${path}'`), { code: "EIO" });
  return {
    ...fs,
    unlink: async (path: string) => {
      if (failing.unlink && String(path).endsWith(".json")) throw eio("unlink", String(path));
      return fs.unlink(path);
    },
    rm: async (path: string, options?: Parameters<typeof fs.rm>[1]) => {
      if (failing.unlink && String(path).endsWith(".json")) throw eio("rm", String(path));
      return fs.rm(path, options);
    },
    rename: async (from: string, to: string) => {
      if (failing.rename && String(from).endsWith(".json")) throw eio("rename", String(from));
      if (failing.tombstone && String(to).endsWith(".tombstone")) throw eio("rename", String(to));
      return fs.rename(from, to);
    },
  };
});

const dirs: string[] = [];
const apps: MoreauApp[] = [];
afterAll(async () => {
  for (const a of apps) await a.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function open(dataDir: string): Promise<MoreauApp> {
  const a = await startApp({ dataDir });
  apps.push(a);
  return a;
}

async function ids(a: MoreauApp): Promise<string[]> {
  const list = (await request(a.server).get("/v1/sessions").expect(200)).body.sessions;
  return (list as { id: string }[]).map((s) => s.id).sort();
}

/** Two sessions checkpointed; returns the folder, the app and their ids. */
async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "moreau-delete-"));
  dirs.push(dir);
  const a = await open(dir);
  const gone = await createSession(a, springParticle());
  const kept = await createSession(a, springParticle({ stiffness: 50, name: "kept" }));
  await step(a, gone, 5);
  await request(a.server).post(`/v1/sessions/${gone}/pause`).expect(200);
  await waitFor(async () =>
    [gone, kept].every((id) => existsSync(join(dir, "sessions", `${id}.json`))),
  );
  return { dir, a, gone, kept };
}

describe("a DELETE whose unlink fails", () => {
  it("is made durable by renaming the file aside: the session does not come back", async () => {
    const { dir, a, gone, kept } = await setup();
    failing.unlink = true;
    try {
      await request(a.server).delete(`/v1/sessions/${gone}`).expect(204);
    } finally {
      failing.unlink = false;
    }
    expect(readdirSync(join(dir, "sessions"))).not.toContain(`${gone}.json`);
    await a.close();
    const b = await open(dir);
    expect(await ids(b)).toEqual([kept]);
    await b.close();
  });

  it("is made durable by a tombstone when the file cannot be renamed either", async () => {
    const { dir, a, gone, kept } = await setup();
    failing.unlink = true;
    failing.rename = true;
    try {
      await request(a.server).delete(`/v1/sessions/${gone}`).expect(204);
      // the checkpoint is still there, marked deleted
      const names = readdirSync(join(dir, "sessions"));
      expect(names).toContain(`${gone}.json`);
      expect(names).toContain(`${gone}.tombstone`);
      await a.close();
      // a restart while the file still cannot be removed: not restored, tombstone kept
      const b = await open(dir);
      expect(await ids(b)).toEqual([kept]);
      expect(readdirSync(join(dir, "sessions"))).toContain(`${gone}.tombstone`);
      await b.close();
    } finally {
      failing.unlink = false;
      failing.rename = false;
    }
    // once it can be removed, the next start removes the file and its tombstone
    const c = await open(dir);
    expect(await ids(c)).toEqual([kept]);
    expect(readdirSync(join(dir, "sessions")).sort()).toEqual([`${kept}.json`]);
    await c.close();
  });

  it("answers 500 and keeps the session when no delete can be made durable; a retry succeeds", async () => {
    const { dir, a, gone, kept } = await setup();
    failing.unlink = true;
    failing.rename = true;
    failing.tombstone = true;
    try {
      const r = await request(a.server).delete(`/v1/sessions/${gone}`);
      expect(r.status).toBe(500);
      expect(r.body.error).toBe("internal");
      expect(r.body.message).toMatch(/was not deleted.*retry the delete/);
      // still there, still usable
      await request(a.server).get(`/v1/sessions/${gone}`).expect(200);
      await step(a, gone, 1);
    } finally {
      failing.unlink = false;
      failing.rename = false;
      failing.tombstone = false;
    }
    await request(a.server).delete(`/v1/sessions/${gone}`).expect(204);
    await a.close();
    const b = await open(dir);
    expect(await ids(b)).toEqual([kept]);
    await b.close();
  });
});
