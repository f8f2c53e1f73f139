/**
 * Session checkpoints in DATA_DIR/sessions/<id>.json, each file
 *   { "owner": <key id> | null, "snapshot": <session document, schemas/api.ts Snapshot> }.
 *
 * Nothing is ever written half: a checkpoint is written to a temporary file beside its
 * target (<id>.json.<pid>.<n>.tmp), flushed to disk (fsync) and renamed over the target,
 * which POSIX makes atomic — a reader, or a server restarted after a kill -9 or a power
 * cut, sees the previous whole file or the new whole file. Temporary files left by a killed
 * process are removed on start. Writes of one session are serialized (a later checkpoint
 * never lands before an earlier one) and a delete waits for the writes before it.
 *
 * Reading on start: every <id>.json is parsed and validated; a file that is not a valid
 * checkpoint is renamed <id>.rejected-<time> (kept for inspection, not retried) and logged.
 */
import { mkdir, open, readdir, readFile, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { z } from "zod";
import { Snapshot, type SnapshotOut } from "../../schemas/api";

const ID = /^[A-Za-z0-9_-]{1,128}$/;

const CheckpointFile = z.strictObject({
  owner: z.string().max(64).nullable(),
  snapshot: Snapshot,
});

export interface Checkpoint {
  id: string;
  owner: string | null;
  snapshot: SnapshotOut;
}

let tmpCounter = 0;

export class CheckpointStore {
  readonly dir: string;
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    dataDir: string,
    private readonly log: FastifyBaseLogger,
  ) {
    this.dir = join(dataDir, "sessions");
  }

  /** Creates the folder and removes temporary files a killed process left. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir))
      if (name.endsWith(".tmp")) await rm(join(this.dir, name), { force: true });
  }

  fileOf(id: string): string {
    if (!ID.test(id)) throw new Error(`bad session id for a checkpoint: ${id}`);
    return join(this.dir, `${id}.json`);
  }

  /** Every valid checkpoint; invalid files are set aside and logged. */
  async readAll(): Promise<Checkpoint[]> {
    const out: Checkpoint[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!ID.test(id)) continue;
      const file = join(this.dir, name);
      try {
        const parsed = CheckpointFile.safeParse(JSON.parse(await readFile(file, "utf8")));
        if (!parsed.success)
          throw new Error(
            parsed.error.issues
              .slice(0, 3)
              .map((i) => `${i.path.join(".")}: ${i.message}`)
              .join("; "),
          );
        out.push({ id, owner: parsed.data.owner, snapshot: parsed.data.snapshot });
      } catch (err) {
        const aside = join(this.dir, `${id}.rejected-${Date.now()}`);
        this.log.error(
          { file, err: (err as Error)?.message, movedTo: aside },
          "unreadable session checkpoint set aside",
        );
        await rename(file, aside).catch(() => undefined);
      }
    }
    return out;
  }

  /**
   * Writes the checkpoint of session `id` atomically: `snapshot` is the session document's
   * JSON bytes (not parsed here).
   */
  write(id: string, owner: string | null, snapshot: Uint8Array): Promise<void> {
    const target = this.fileOf(id);
    return this.enqueue(id, async () => {
      const tmp = `${target}.${process.pid}.${++tmpCounter}.tmp`;
      const fh = await open(tmp, "w", 0o600);
      try {
        await fh.writeFile(`{"owner":${JSON.stringify(owner)},"snapshot":`);
        await fh.writeFile(snapshot);
        await fh.writeFile("}\n");
        await fh.sync();
      } catch (err) {
        await fh.close().catch(() => undefined);
        await rm(tmp, { force: true });
        throw err;
      }
      await fh.close();
      await rename(tmp, target);
    });
  }

  /** Deletes the checkpoint of session `id` (after its pending writes). */
  remove(id: string): Promise<void> {
    const target = this.fileOf(id);
    return this.enqueue(id, async () => {
      await unlink(target).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    });
  }

  /** Waits for every pending write and delete. */
  async flush(): Promise<void> {
    await Promise.all([...this.chains.values()]);
  }

  private enqueue(id: string, fn: () => Promise<void>): Promise<void> {
    const prev = this.chains.get(id) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.chains.set(id, settled);
    void settled.then(() => {
      if (this.chains.get(id) === settled) this.chains.delete(id);
    });
    return next;
  }
}
