/**
 * Session checkpoints in DATA_DIR/sessions/<id>.json, each file
 *   { "owner": <key id> | null, "run"?: { realtimeFactor, until, resumedAt? },
 *     "snapshot": <session document, schemas/api.ts Snapshot> }
 * — `run`: the run the session was in (a restart resumes it: sessions/lifecycle.ts), with
 * when a restart resumed it (ms since the epoch; a restart within a minute of that leaves it
 * paused: sessions/recovery.ts resumeRestored).
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
 * checkpoint is renamed <id>.rejected-<time> (kept for inspection, not retried) and logged,
 * the session's input logs kept beside it (readAll).
 *
 * Recorded inputs are an append-only log beside the checkpoint, <id>.<log id>.inputs: one
 * JSON line per input, in the recording's order (protocol.ts InputLogPart). A session
 * document leaves out the inputs its log holds and the checkpoint file names the log and
 * how many of its lines are the session's, `"log":{"id":…,"count":n}`; reading puts the
 * first n lines back before the document's own (the pending ones). A checkpoint appends the
 * inputs since the previous one (fsync) before its file is renamed into place: the file on
 * disk never counts lines the log does not hold, and lines past its count (a write whose
 * rename a crash prevented) are cut off by the next append. A recording started anew
 * (reset, an applied assembly) starts a new log file, the old one removed once a checkpoint
 * names the new. Until 2026-12-07 each checkpoint rewrote every input (a controller's
 * 10 000 were 1.5 MB written and fsynced by every change).
 */
import { mkdir, open, readdir, readFile, rename, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import { z } from "zod";
import { Snapshot } from "../../schemas/api";
import { issuesOf, issuesSummary } from "../../schemas/issues";
import type { Checkpoint, Fence, RunAt, SnapshotStore } from "./cluster/ports";
import { type InputLogAt, type InputLogPart, loggedPart, logLineStart, logLines } from "./protocol";

const ID = /^[A-Za-z0-9_-]{1,128}$/;
const LOG_ID = /^[A-Za-z0-9-]{1,64}$/;
const TOMBSTONE = ".tombstone";
const DELETING = ".json.deleting-";
const LOG = ".inputs";
/** <id>.rejected-<time>: a checkpoint file set aside as not valid (readAll) */
const REJECTED = ".rejected-";

/** The session id a file of DATA_DIR/sessions belongs to (its name up to the first "."). */
const idOf = (name: string) => name.slice(0, name.indexOf("."));

const CheckpointFile = z.strictObject({
  owner: z.string().max(64).nullable(),
  log: z.strictObject({ id: z.string().regex(LOG_ID), count: z.number().int().min(0) }).optional(),
  run: z
    .strictObject({
      realtimeFactor: z.number().positive().nullable(),
      until: z.number().nullable(),
      resumedAt: z.number().int().nonnegative().optional(),
    })
    .optional(),
  snapshot: Snapshot,
});

/** What the store has made durable of a session's input log: its lines, and their bytes. */
interface LogKept extends InputLogAt {
  bytes: number;
}

export type { Checkpoint } from "./cluster/ports";

/**
 * A checkpoint file's text ({ owner, log?, snapshot }) validated: the checkpoint, or an
 * Error naming the first issues. The cluster stores (cluster/redis.ts, memory.ts) keep the
 * same bytes. `logBytes`: the lines of the input log it names (at least its count; null:
 * none kept), put back before the document's own inputs.
 */
export function parseCheckpoint(id: string, text: string, logBytes: Uint8Array | null): Checkpoint {
  return checkpointOf(id, JSON.parse(text), () => logBytes).cp;
}

/**
 * A parsed checkpoint file `raw` validated, the first `count` inputs of the log it names
 * (`lines(log id)`: its bytes, or null when there is none) put back before its document's
 * own; with the bytes those lines take. Throws an Error saying what is wrong.
 */
function checkpointOf(
  id: string,
  raw: unknown,
  lines: (log: string) => Uint8Array | null,
): { cp: Checkpoint; logBytes: number } {
  let log: InputLogAt | null = null;
  let logBytes = 0;
  const named = (raw as { log?: unknown } | null)?.log;
  if (named !== undefined) {
    const at = CheckpointFile.shape.log.safeParse(named);
    if (!at.success || !at.data) throw new Error("its input log is not { id, count }");
    const { id: logId, count } = at.data;
    const bytes = lines(logId);
    const read = bytes === null ? null : logLines(bytes, count);
    if (read === null) throw new Error(`its input log ${logId} holds fewer than ${count} inputs`);
    const recording = (raw as { snapshot?: { simulation?: { recording?: { inputs?: unknown } } } })
      .snapshot?.simulation?.recording;
    if (!recording || !Array.isArray(recording.inputs))
      throw new Error("it names an input log but its snapshot holds no recording");
    recording.inputs = [...read.inputs, ...recording.inputs];
    log = { id: logId, count };
    logBytes = read.bytes;
  }
  const parsed = CheckpointFile.safeParse(raw);
  if (!parsed.success) throw new Error(issuesSummary(issuesOf(parsed.error), 3));
  const { owner, snapshot, run } = parsed.data;
  return { cp: { id, owner, snapshot, log, run: run ?? null }, logBytes };
}

/** The bytes of a checkpoint file, `{"owner":…,"snapshot":<session document>}` (as persist writes them). */
export function checkpointBytes(
  owner: string | null,
  snapshot: Uint8Array,
  log: InputLogAt | null = null,
): Buffer {
  return Buffer.concat(checkpointParts(owner, snapshot, log));
}

/**
 * checkpointBytes in three parts, the document itself the second (not copied); `log`: the
 * input log the checkpoint names (`"log":{id,count}` before the snapshot); `run`: the run
 * the session was in (`"run":{realtimeFactor,until,resumedAt?}`; the cluster stores keep it
 * apart).
 */
export function checkpointParts(
  owner: string | null,
  snapshot: Uint8Array,
  log: InputLogAt | null = null,
  run: RunAt | null = null,
): Uint8Array[] {
  const named = log ? `"log":${JSON.stringify({ id: log.id, count: log.count })},` : "";
  const { realtimeFactor, until, resumedAt } = run ?? {};
  const running = run ? `"run":${JSON.stringify({ realtimeFactor, until, resumedAt })},` : "";
  return [
    Buffer.from(`{"owner":${JSON.stringify(owner)},${named}${running}"snapshot":`),
    snapshot,
    Buffer.from("}\n"),
  ];
}

/** A write asked for and not started yet: later writes of the same session replace its bytes. */
interface QueuedWrite {
  owner: string | null;
  bytes: Uint8Array;
  log: InputLogPart | undefined;
  run: RunAt | null;
  done: Promise<void>;
}

/**
 * Whether a write with input log part `next` may replace a queued one with `queued`: it
 * holds every input the queued one appends — the same log from no later an input, or a new
 * log — or neither has one.
 */
function covers(queued: InputLogPart | undefined, next: InputLogPart | undefined): boolean {
  if (!queued || !next) return queued === next;
  return next.from === 0 || (next.id === queued.id && next.from <= queued.from);
}

let tmpCounter = 0;

/** The in-process SnapshotStore on DATA_DIR (the default; a cluster uses redis.ts's). */
export class CheckpointStore implements SnapshotStore {
  readonly dir: string;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, QueuedWrite>();
  /** ids whose tombstone is on disk (their .json, if any, must never be restored) */
  private readonly tombstones = new Set<string>();
  /** per session: its input log as its last checkpoint on disk names it */
  private readonly logs = new Map<string, LogKept>();
  /** bytes written: checkpoint files, input log appends and tombstones */
  private written = 0;
  readonly logsInputs = true;

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

  /** The input log `log` of session `id`. */
  logFileOf(id: string, log: string): string {
    if (!LOG_ID.test(log)) throw new Error(`bad input log id: ${log}`);
    return `${this.fileOf(id).slice(0, -5)}.${log}${LOG}`;
  }

  /** Bytes written so far: checkpoint files, the inputs appended to their logs and tombstones. */
  get bytesWritten(): number {
    return this.written;
  }

  /**
   * Every valid checkpoint (but those of deleted sessions); invalid files are set aside and
   * logged. Input logs no checkpoint names (a deleted session's, a recording's before its
   * reset) are removed — but a session's whose checkpoint was set aside (<id>.rejected-*,
   * this start's or an earlier's): its acknowledged inputs are in them, and a checkpoint
   * put back (the file set aside renamed <id>.json again once readable, or a copy) is
   * restored with them. Until 2026-12-07 they were removed with the file set aside, so a
   * checkpoint rejected once (a read failing at one start, a damaged copy) lost its inputs
   * for good. They go once no file of the session is left aside.
   */
  async readAll(): Promise<Checkpoint[]> {
    const out: Checkpoint[] = [];
    const names = (await readdir(this.dir)).sort();
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      const id = name.slice(0, -5);
      if (!ID.test(id) || this.tombstones.has(id)) continue;
      const cp = await this.readFile(id, true);
      if (cp) out.push(cp);
    }
    const named = new Set(out.flatMap((cp) => (cp.log ? [this.logFileOf(cp.id, cp.log.id)] : [])));
    // (ids hold no "."; a session's files all begin "<id>.")
    const setAside = new Set(
      (await readdir(this.dir)).flatMap((n) => (n.includes(REJECTED) ? [idOf(n)] : [])),
    );
    for (const name of names)
      if (name.endsWith(LOG) && !named.has(join(this.dir, name)) && !setAside.has(idOf(name)))
        await rm(join(this.dir, name), { force: true }).catch(() => undefined);
    return out;
  }

  /** The first `log.count` lines of session `id`'s input log `log.id` (a checkpoint held in memory's), or null. */
  async readLog(id: string, log: InputLogAt): Promise<Uint8Array | null> {
    const bytes = await readFile(this.logFileOf(id, log.id)).catch(() => null);
    if (bytes === null) return null;
    const end = logLineStart(bytes, log.count);
    const lines = bytes.subarray(0, end);
    return lines.reduce((n, b) => (b === 0x0a ? n + 1 : n), 0) === log.count ? lines : null;
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
      const raw = JSON.parse(text) as { log?: { id?: unknown } } | null;
      // the log it names, read whole (its lines past the count are a crashed write's)
      const logId = raw?.log?.id;
      const bytes =
        typeof logId === "string" && LOG_ID.test(logId)
          ? await readFile(this.logFileOf(id, logId)).catch(() => null)
          : null;
      const { cp, logBytes } = checkpointOf(id, raw, () => bytes);
      // a write under way knows better (it set it after its rename)
      if (cp.log && !this.logs.has(id)) this.logs.set(id, { ...cp.log, bytes: logBytes });
      return cp;
    } catch (err) {
      return this.reject(id, file, err, setAside);
    }
  }

  private async reject(id: string, file: string, err: unknown, setAside: boolean): Promise<null> {
    if (!setAside) {
      this.log.error({ file, err: (err as Error)?.message }, "unreadable session checkpoint");
      return null;
    }
    const aside = join(this.dir, `${id}${REJECTED}${Date.now()}`);
    this.log.error(
      { file, err: (err as Error)?.message, movedTo: aside },
      "unreadable session checkpoint set aside",
    );
    await rename(file, aside).catch(() => undefined);
    return null;
  }

  /**
   * Writes the checkpoint of session `id` atomically: `snapshot` is the session document's
   * JSON bytes (not parsed here), with the run of `fence` (its epoch: a single server has
   * none). Coalesced with the writes of the same session not yet started (the latest bytes
   * win).
   */
  write(
    id: string,
    owner: string | null,
    snapshot: Uint8Array,
    fence?: Fence,
    log?: InputLogPart,
  ): Promise<void> {
    const run = fence?.run ?? null;
    const target = this.fileOf(id);
    const waiting = this.queued.get(id);
    // not when the later one leaves out inputs the queued one appends: both are written
    if (waiting && covers(waiting.log, log)) {
      waiting.owner = owner;
      waiting.bytes = snapshot;
      waiting.log = log;
      waiting.run = run;
      return waiting.done;
    }
    const entry = { owner, bytes: snapshot, log, run } as QueuedWrite;
    this.queued.set(id, entry);
    entry.done = this.enqueue(id, async () => {
      // from here on a new write queues behind this one
      if (this.queued.get(id) === entry) this.queued.delete(id);
      const was = this.logs.get(id) ?? null;
      const part = loggedPart(entry.log);
      let kept: LogKept | null = null;
      try {
        kept = part ? await this.appendLog(id, part) : null;
      } catch (err) {
        // what the store thought the log held is in doubt (a folder wiped, a file lost):
        // the next write, from input 0 (checkpoints.ts), writes it whole again
        this.logs.delete(id);
        throw err;
      }
      await this.persist(target, entry.owner, entry.bytes, kept, entry.run);
      if (kept) this.logs.set(id, kept);
      else this.logs.delete(id);
      // the log of a recording before this one: no checkpoint names it any more
      if (was && was.id !== kept?.id)
        await rm(this.logFileOf(id, was.id), { force: true }).catch(() => undefined);
    });
    return entry.done;
  }

  /**
   * Appends a checkpoint's inputs to its session's log, durably (fsync) — after cutting off
   * lines past those its last checkpoint counts (a write whose rename a crash prevented) —
   * or starts a new log file (a new recording). Lines the log holds already (a part from
   * before the last write) are skipped. The log as it is now; a part that continues none it
   * holds (from > 0 of another log, or past its end) is refused.
   */
  protected async appendLog(id: string, part: InputLogPart): Promise<LogKept> {
    const kept = this.logs.get(id);
    const file = this.logFileOf(id, part.id);
    if (kept && kept.id === part.id && part.from <= kept.count) {
      // a checkpoint older than the last written (its document's pending inputs follow its
      // own count): it counts fewer lines, the next append cuts off those past them
      if (part.count < kept.count)
        return {
          id: part.id,
          count: part.count,
          bytes: logLineStart(await readFile(file), part.count),
        };
      const lines = part.lines.subarray(logLineStart(part.lines, kept.count - part.from));
      const fh = await open(file, "r+");
      try {
        await fh.truncate(kept.bytes);
        if (lines.length > 0) await fh.write(lines, 0, lines.length, kept.bytes);
        await fh.sync();
      } finally {
        await fh.close().catch(() => undefined);
      }
      this.written += lines.length;
      return {
        id: part.id,
        count: part.count,
        bytes: kept.bytes + lines.length,
      };
    }
    if (part.from !== 0)
      throw new Error(
        `the input log of session ${id}: the checkpoint appends inputs ${part.from}.. of log ${part.id}, the store holds ${kept ? `${kept.count} of log ${kept.id}` : "none"}`,
      );
    await this.writeAtomically(file, [part.lines]);
    return { id: part.id, count: part.count, bytes: part.lines.length };
  }

  /**
   * One atomic write of a checkpoint file (temporary file, fsync, rename); `log`: the input
   * log it names (its lines on disk already).
   */
  protected async persist(
    target: string,
    owner: string | null,
    snapshot: Uint8Array,
    log: InputLogAt | null = null,
    run: RunAt | null = null,
  ) {
    await this.writeAtomically(target, checkpointParts(owner, snapshot, log, run));
  }

  /**
   * Writes `parts` as the file `target` atomically: a temporary file in the same folder,
   * fsync, rename over the target, then the folder synced, so that the rename itself is
   * durable (a new session's first file must survive a power cut once its creation is
   * answered). A failed write leaves the target as it was and no temporary file. Counts the
   * bytes in `written`.
   */
  private async writeAtomically(target: string, parts: (string | Uint8Array)[]): Promise<void> {
    const tmp = `${target}.${process.pid}.${++tmpCounter}.tmp`;
    const fh = await open(tmp, "w", 0o600);
    try {
      for (const part of parts) await fh.writeFile(part);
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => undefined);
      await rm(tmp, { force: true });
      throw err;
    }
    await fh.close();
    await rename(tmp, target);
    await this.syncDir();
    for (const part of parts)
      this.written += typeof part === "string" ? Buffer.byteLength(part) : part.byteLength;
  }

  /**
   * Deletes the checkpoint of session `id` (after its pending writes), durably: see the
   * head of this file. Rejects only when the delete could not be made durable.
   */
  remove(id: string): Promise<void> {
    const target = this.fileOf(id);
    // a write asked for and not started is dropped: the file is going away
    this.queued.delete(id);
    const removed = this.enqueue(id, () => this.removeCheckpoint(id, target));
    // its input log once no checkpoint names it (one left behind, a failed delete's or a
    // crash's, is removed by the next start's readAll)
    return removed.then(async () => {
      const log = this.logs.get(id);
      this.logs.delete(id);
      if (log) await rm(this.logFileOf(id, log.id), { force: true }).catch(() => undefined);
    });
  }

  /** `remove`'s delete of the checkpoint file (unlink, else set aside, else a tombstone). */
  private async removeCheckpoint(id: string, target: string): Promise<void> {
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
  }

  /** A tombstone: <id>.tombstone, written like a checkpoint (temporary file, fsync, rename). */
  protected async persistTombstone(id: string): Promise<void> {
    await this.writeAtomically(join(this.dir, `${id}${TOMBSTONE}`), [
      `${JSON.stringify({ deleted: new Date().toISOString() })}\n`,
    ]);
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
