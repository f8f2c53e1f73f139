/**
 * The three ports through which the service reaches shared infrastructure (issue 32);
 * nothing else in the service touches Redis. Each has two adapters: in-process (memory.ts:
 * Maps and an EventEmitter, plus persistence.ts's DATA_DIR store for snapshots) and Redis
 * (redis.ts, REDIS_URL). test/cluster/ports.conformance.test.ts runs the same tests on both.
 *
 * SessionDirectory: which node owns a session. Ownership is a lease (`SET lease NX PX ttl`
 * whose value is `<node>:<epoch>`), renewed by its holder every third of the TTL; a claim
 * bumps the session's epoch (a counter that only grows while the session exists), which is
 * the fencing token every write of the owner carries: a node whose lease expired (killed,
 * frozen, cut off) and was claimed by another holds an older epoch, and every write it tries
 * (a checkpoint, a frame) is refused. The directory also holds the cluster's registry of
 * sessions (for failover scans and the quotas: MAX_SESSIONS and MAX_SESSIONS_PER_KEY are
 * admitted atomically against it), the nodes' heartbeats (address and load, with a TTL) and
 * each session's scene (the first frame of a stream on any node).
 *
 * Bus: a session's frames and control messages. Frames go per subscription class (`every`
 * and the encoding key) into an append-only log whose entries carry a sequence number `seq`
 * (1, 2, 3, … per class, continuing across failovers: the log is shared), so a subscriber on
 * any node reads from any position: the latest frame, or every frame after the `seq` it last
 * saw (a reconnect, `?from=`). Appending is fenced by the epoch like checkpoints. Subscriber
 * nodes declare the classes they want (with a TTL, refreshed); the owner reads them and asks
 * its worker to encode those. Control messages (a class wanted, a session released) are
 * broadcast to every node.
 *
 * SnapshotStore: the latest checkpoint of each session (the binary session document,
 * schemas/api.ts Snapshot), with its owner key, and — in a cluster — the run it was in
 * (so the node that takes a session over resumes it) and the epoch that wrote it (fenced).
 */
import type { SnapshotOut } from "../../../schemas/api";
import type { InputLogAt, InputLogPart, Subscription } from "../protocol";

/** A node's ownership of a session: the lease value is `${node}:${epoch}`. */
export interface Lease {
  session: string;
  node: string;
  epoch: number;
}

/** What a node publishes with its heartbeat. */
export interface NodeInfo {
  id: string;
  /** where the other nodes forward requests (http://host:port) */
  url: string;
  /** where a client is redirected (307) with CLUSTER_REDIRECT; `url` when not set */
  publicUrl: string;
  /** sessions it owns */
  sessions: number;
  /** solver workers it runs (load = sessions / workers) */
  workers: number;
  /** false while it drains (SIGTERM): no new session goes to it */
  accepting: boolean;
}

/** A session in the cluster's registry: its id and the API key id that owns it. */
export interface SessionEntry {
  id: string;
  owner: string | null;
}

export interface Quotas {
  /** MAX_SESSIONS, for the whole cluster */
  maxSessions: number;
  /** MAX_SESSIONS_PER_KEY, for the whole cluster */
  maxPerKey: number;
}

/** The answer of an admission: admitted, or the quota that refused it. */
export type Admission = "ok" | "max_sessions" | "max_per_key";

export interface SessionDirectory {
  /** Publishes this node's heartbeat, alive for `ttlMs`. */
  announce(node: NodeInfo, ttlMs: number): Promise<void>;
  /** Removes a node's heartbeat (a graceful drain). */
  withdraw(nodeId: string): Promise<void>;
  /** The nodes whose heartbeat is alive. */
  nodes(): Promise<NodeInfo[]>;
  /**
   * Takes the lease of a session if nobody holds it: the new epoch (the counter + 1), or
   * null. `held`: a holder claims again the lease it held at that epoch (lost: expired, or
   * gone with Redis's data) — only if no claim came since (the counter at most `held`, or
   * lost too), at `held` + 1: the counter is put back, and no epoch an older holder's writes
   * carry is handed out again.
   */
  claim(session: string, node: string, ttlMs: number, held?: number): Promise<Lease | null>;
  /** Extends a lease still held (same node and epoch); false when it was lost. */
  renew(lease: Lease, ttlMs: number): Promise<boolean>;
  /** Gives a lease up (only the holder's; another's is left alone). */
  release(lease: Lease): Promise<void>;
  /** The current holder of a session's lease, or null (none alive). */
  holder(session: string): Promise<Lease | null>;
  /** Enters a session in the registry if the quotas allow it (atomic across nodes). */
  admit(entry: SessionEntry, quotas: Quotas): Promise<Admission>;
  /** The registry entry of a session, or null. */
  entry(session: string): Promise<SessionEntry | null>;
  /** Every registered session. */
  sessions(): Promise<SessionEntry[]>;
  /** Removes a session from the registry with its lease, epoch and scene. */
  forget(session: string): Promise<void>;
  /**
   * The cluster's shared secret, which marks a request forwarded by a node (so that it
   * is not counted twice by the rate limit, nor forwarded again): the first node's
   * `candidate`, kept.
   */
  secret(candidate: string): Promise<string>;
  /** The scene frame of a session (JSON bytes without time and step). */
  putScene(session: string, scene: Uint8Array): Promise<void>;
  scene(session: string): Promise<Uint8Array | null>;
}

/** A frame in a class's log. */
export interface BusFrame {
  seq: number;
  step: number;
  forced: boolean;
  bytes: Uint8Array;
}

/** A subscription class's log: `${every}|${encoding key}`. */
export function classId(c: Pick<Subscription, "every" | "key">): string {
  return `${c.every}|${c.key}`;
}

/** A broadcast control message. */
export type ControlMessage =
  /** a node wants frames of a new class of the session */
  | { type: "want"; session: string }
  /** the session's owner let it go (drain): claim it now rather than at the lease's expiry */
  | { type: "released"; session: string }
  /** the session was deleted */
  | { type: "deleted"; session: string };

/** A position to read a class's log from: frames with seq > after. */
export interface Cursor {
  session: string;
  cls: string;
  after: number;
}

export interface Bus {
  /** Declares that this node's subscribers want a class of the session, for `ttlMs`. */
  want(session: string, sub: Subscription, ttlMs: number): Promise<void>;
  /** The classes of the session some node wants now. */
  wanted(session: string): Promise<Subscription[]>;
  /**
   * Appends a frame to a class's log, fenced: the seq given to it, or null when `epoch` is
   * no longer the session's (the writer lost the session).
   */
  publish(
    session: string,
    cls: string,
    epoch: number,
    frame: Omit<BusFrame, "seq">,
  ): Promise<number | null>;
  /** Up to `count` frames with seq > after, in order. */
  range(session: string, cls: string, after: number, count: number): Promise<BusFrame[]>;
  /** The last frame of a class's log, or null. */
  latest(session: string, cls: string): Promise<BusFrame | null>;
  /**
   * The frames after each cursor, waiting up to `blockMs` for the first one when there is
   * none yet (an empty array after the wait).
   */
  read(cursors: Cursor[], blockMs: number): Promise<{ cursor: Cursor; frames: BusFrame[] }[]>;
  /** Broadcasts a control message to every node (this one included). */
  control(message: ControlMessage): Promise<void>;
  onControl(handler: (message: ControlMessage) => void): void;
  /** Removes a session's logs and wanted classes. */
  drop(session: string): Promise<void>;
  close(): Promise<void>;
}

/** A checkpoint as read back. */
export interface Checkpoint {
  id: string;
  owner: string | null;
  snapshot: SnapshotOut;
  /** the run the session was in when checkpointed (a cluster store keeps it), else null */
  run?: RunAt | null;
  /**
   * A store that keeps the recorded inputs as a log (persistence.ts): what the log holds
   * (already put back in the snapshot's recording), null when the snapshot has none.
   */
  log?: InputLogAt | null;
}

/** A run to resume after a takeover. */
export interface RunAt {
  realtimeFactor: number | null;
  until: number | null;
  /**
   * Date.now() when a restart, a worker-loss rebuild or a cluster takeover resumed this run
   * (sessions/recovery.ts resumeNoted), absent otherwise (a client's run, a shutdown's or a
   * drain's checkpoint): a restart or takeover within LOSS_WINDOW_MS of it leaves it paused
   */
  resumedAt?: number;
}

/** Fencing of a cluster checkpoint: the writer's epoch, and its run. */
export interface Fence {
  epoch: number;
  run: RunAt | null;
}

/**
 * The checkpoints of sessions `ids` in the order of their ids, read one after the other
 * by `read`; those it does not find left out (SnapshotStore.readAll of the cluster stores).
 */
export async function readCheckpoints(
  ids: Iterable<string>,
  read: (id: string) => Promise<Checkpoint | null>,
): Promise<Checkpoint[]> {
  const out: Checkpoint[] = [];
  for (const id of [...ids].sort()) {
    const cp = await read(id);
    if (cp) out.push(cp);
  }
  return out;
}

/** A checkpoint write refused by the fencing token: the writer no longer owns the session. */
export class FencedError extends Error {
  constructor(
    readonly session: string,
    readonly epoch: number,
  ) {
    super(`session ${session}: epoch ${epoch} is no longer the session's (another node owns it)`);
    this.name = "FencedError";
  }
}

export interface SnapshotStore {
  /** Where checkpoints go (logs): a folder, or redis. */
  readonly where: string;
  init(): Promise<void>;
  /**
   * Keeps a session's recorded inputs as an append-only log (persistence.ts): a write then
   * takes the inputs appended since the last (`write`'s `log`), and reads put them back.
   */
  readonly logsInputs?: boolean;
  /**
   * Writes the latest checkpoint of a session (the session document's bytes). With `fence`,
   * refused (FencedError) unless the epoch is still the session's. `log` (a store that
   * `logsInputs`): the recorded inputs the document leaves out, appended to the session's log.
   */
  write(
    id: string,
    owner: string | null,
    document: Uint8Array,
    fence?: Fence,
    log?: InputLogPart,
  ): Promise<void>;
  /** A store that `logsInputs`: the first `log.count` lines of a session's log `log.id`, or null. */
  readLog?(id: string, log: InputLogAt): Promise<Uint8Array | null>;
  /** The latest checkpoint of a session, or null. */
  read(id: string): Promise<Checkpoint | null>;
  /** Every checkpoint (a single server's start). */
  readAll(): Promise<Checkpoint[]>;
  /** Deletes a session's checkpoint durably (after its pending writes). */
  remove(id: string): Promise<void>;
  /** Waits for every pending write. */
  flush(): Promise<void>;
}
