/**
 * Session checkpoints in DATA_DIR/sessions/<id>.json, each file
 *   { "owner": <key id> | null, "snapshot": <session document, schemas/api.ts Snapshot> }.
 *
 * Nothing is ever written half: a checkpoint is written to a temporary file beside its
 * target (<id>.json.<pid>.<n>.tmp), flushed to disk (fsync) and renamed over the target,
 * which POSIX makes atomic — a reader, or a server restarted after a kill -9 or a power
 * cut, sees the previous whole file or the new whole file. Temporary files left by a killed
 * process are removed on start.
 *
 * Writes of one session are serialized and coalesced: at most one write of a session is
 * in flight, and a write asked for while another is in flight waits for it; several asked
 * for meanwhile become one, with the latest bytes (each caller's promise resolves when
 * bytes at least as new as its own are on disk). How often a session is checkpointed at
 * all (CHECKPOINT_MIN_INTERVAL_MS) is the business of sessions/checkpoints.ts.
 *
 * Deletes are durable: `remove` unlinks the file (and fsyncs the folder); when the unlink
 * fails it renames the file aside (<id>.json.deleting-<time>, never restored, removed on
 * the next start); when that fails too it writes a tombstone <id>.tombstone, which the next
 * start honours (the checkpoint is not restored, and removed when it can be). Only when
 * none of the three works does `remove` fail — the caller then keeps the session, since a
 * delete answered 204 must not come back after a restart.
 *
 * Reading on start: every <id>.json is parsed and validated; a file that is not a valid
 * checkpoint is renamed <id>.rejected-<time> (kept for inspection, not retried) and logged.
 */
import { mkdir, open, readdir, readFile, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { z } from "zod";
import { Snapshot } from "../../schemas/api";
import { issuesOf, issuesSummary } from "../../schemas/issues";
import type { Checkpoint, SnapshotStore } from "./cluster/ports";

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const TOMBSTONE = ".tombstone";
const DELETING = ".json.deleting-";

const CheckpointFile = z.strictObject({
  owner: z.string().max(64).nullable(),
  snapshot: Snapshot,
});

export type { Checkpoint } from "./cluster/ports";

/**
 * A checkpoint file's text ({ owner, snapshot }) validated: the checkpoint, or an Error
 * naming the first issues. The Redis store (cluster/redis.ts) keeps the same bytes.
 */
export function parseCheckpoint(id: string, text: string): Checkpoint {
  const parsed = CheckpointFile.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(issuesSummary(issuesOf(parsed.error), 3));
  return { id, owner: parsed.data.owner, snapshot: parsed.data.snapshot };
}

/** The bytes of a checkpoint file, `{"owner":…,"snapshot":<session document>}` (as persist writes them). */
export function checkpointBytes(owner: string | null, snapshot: Uint8Array): Buffer {
  return Buffer.concat(checkpointParts(owner, snapshot));
}

/** checkpointBytes in three parts, the document itself the second (not copied). */
export function checkpointParts(owner: string | null, snapshot: Uint8Array): Uint8Array[] {
  return [
    Buffer.from(`{"owner":${JSON.stringify(owner)},"snapshot":`),
    snapshot,
    Buffer.from("}\n"),
  ];
}

/** A write asked for and not started yet: later writes of the same session replace its bytes. */
interface QueuedWrite {
  owner: string | null;
  bytes: Uint8Array;
  done: Promise<void>;
}

let tmpCounter = 0;

/** The in-process SnapshotStore on DATA_DIR (the default; a cluster uses redis.ts's). */
export class CheckpointStore implements SnapshotStore {
  readonly dir: string;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, QueuedWrite>();
  /** ids whose tombstone is on disk (their .json, if any, must never be restored) */
  private readonly tombstones = new Set<string>();

  constructor(
    dataDir: string,
    protected readonly log: FastifyBaseLogger,
  ) {
    this.dir = join(dataDir, "sessions");
  }

  /**
   * Creates the folder, removes temporary files and files set aside by a delete that a
   * killed process left, and carries out the deletes that tombstones record.
   */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    for (const name of await readdir(this.dir)) {
      if (name.endsWith(".tmp") || name.includes(DELETING))
        await rm(join(this.dir, name), { recursive: true, force: true }).catch(() => undefined);
      else if (name.endsWith(TOMBSTONE)) {
        const id = name.slice(0, -TOMBSTONE.length);
        if (!ID.test(id)) continue;
        this.tombstones.add(id);
        try {
          await rm(join(this.dir, `${id}.json`), { recursive: true, force: true });
          await unlink(join(this.dir, name));
          this.tombstones.delete(id);
        } catch (err) {
          this.log.warn(
            { session: id, err: (err as Error)?.message },
            "a deleted session's checkpoint still cannot be removed; its tombstone keeps it deleted",
          );
        }
      }
    }
  }

  get where(): string {
    return this.dir;
  }

  fileOf(id: string): string {
    if (!ID.test(id)) throw new Error(`bad session id for a checkpoint: ${id}`);
    return join(this.dir, `${id}.json`);
  }

  /** Every valid checkpoint (but those of deleted sessions); invalid files are set aside and logged. */
  async readAll(): Promise<Checkpoint[]> {
    const out: Checkpoint[] = [];
    for (const name of (await readdir(this.dir)).sort()) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!ID.test(id) || this.tombstones.has(id)) continue;
      const cp = await this.readFile(id, true);
      if (cp) out.push(cp);
    }
    return out;
  }

  /** The checkpoint of session `id` on disk, or null (none, or not valid: logged). */
  async read(id: string): Promise<Checkpoint | null> {
    if (this.tombstones.has(id)) return null;
    return this.readFile(id, false);
  }

  private async readFile(id: string, setAside: boolean): Promise<Checkpoint | null> {
    const file = this.fileOf(id);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && !setAside) return null;
      return this.reject(id, file, err, setAside);
    }
    try {
      return parseCheckpoint(id, text);
    } catch (err) {
      return this.reject(id, file, err, setAside);
    }
  }

  private async reject(id: string, file: string, err: unknown, setAside: boolean): Promise<null> {
    if (!setAside) {
      this.log.error({ file, err: (err as Error)?.message }, "unreadable session checkpoint");
      return null;
    }
    const aside = join(this.dir, `${id}.rejected-${Date.now()}`);
    this.log.error(
      { file, err: (err as Error)?.message, movedTo: aside },
      "unreadable session checkpoint set aside",
    );
    await rename(file, aside).catch(() => undefined);
    return null;
  }

  /**
   * Writes the checkpoint of session `id` atomically: `snapshot` is the session document's
   * JSON bytes (not parsed here). Coalesced with the writes of the same session not yet
   * started (the latest bytes win).
   */
  write(id: string, owner: string | null, snapshot: Uint8Array): Promise<void> {
    const target = this.fileOf(id);
    const waiting = this.queued.get(id);
    if (waiting) {
      waiting.owner = owner;
      waiting.bytes = snapshot;
      return waiting.done;
    }
    const entry = { owner, bytes: snapshot } as QueuedWrite;
    this.queued.set(id, entry);
    entry.done = this.enqueue(id, async () => {
      // from here on a new write queues behind this one
      if (this.queued.get(id) === entry) this.queued.delete(id);
      await this.persist(target, entry.owner, entry.bytes);
    });
    return entry.done;
  }

  /** One atomic write of a checkpoint file (temporary file, fsync, rename). */
  protected async persist(target: string, owner: string | null, snapshot: Uint8Array) {
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
    // the rename itself made durable: a new session's first file must survive a power cut
    // once its creation is answered
    await this.syncDir();
  }

  /**
   * Deletes the checkpoint of session `id` (after its pending writes), durably: see the
   * head of this file. Rejects only when the delete could not be made durable.
   */
  remove(id: string): Promise<void> {
    const target = this.fileOf(id);
    // a write asked for and not started is dropped: the file is going away
    this.queued.delete(id);
    return this.enqueue(id, async () => {
      let first: NodeJS.ErrnoException;
      try {
        await unlink(target);
        await this.syncDir();
        return;
      } catch (err) {
        first = err as NodeJS.ErrnoException;
        if (first.code === "ENOENT") return;
      }
      this.log.warn(
        { session: id, err: first.message },
        "checkpoint unlink failed; setting it aside",
      );
      try {
        const aside = `${target.slice(0, -5)}${DELETING}${Date.now()}`;
        await rename(target, aside);
        await this.syncDir();
        await rm(aside, { recursive: true, force: true }).catch(() => undefined);
        return;
      } catch (err) {
        this.log.warn(
          { session: id, err: (err as Error).message },
          "checkpoint rename failed; writing a tombstone",
        );
      }
      try {
        await this.persistTombstone(id);
        this.tombstones.add(id);
        return;
      } catch (err) {
        this.log.error(
          { session: id, err: (err as Error).message },
          "checkpoint tombstone failed: the delete cannot be made durable",
        );
      }
      throw new Error(
        `the checkpoint of session ${id} could not be deleted (${first.message}), set aside or marked deleted`,
      );
    });
  }

  /** A tombstone: <id>.tombstone, written like a checkpoint (temporary file, fsync, rename). */
  protected async persistTombstone(id: string): Promise<void> {
    const target = join(this.dir, `${id}${TOMBSTONE}`);
    const tmp = `${target}.${process.pid}.${++tmpCounter}.tmp`;
    const fh = await open(tmp, "w", 0o600);
    try {
      await fh.writeFile(`${JSON.stringify({ deleted: new Date().toISOString() })}\n`);
      await fh.sync();
    } finally {
      await fh.close().catch(() => undefined);
    }
    await rename(tmp, target);
    await this.syncDir();
  }

  /** Makes renames and unlinks in the folder durable (best effort where unsupported). */
  private async syncDir(): Promise<void> {
    let fh: Awaited<ReturnType<typeof open>> | null = null;
    try {
      fh = await open(this.dir, "r");
      await fh.sync();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM") throw err;
    } finally {
      await fh?.close().catch(() => undefined);
    }
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
