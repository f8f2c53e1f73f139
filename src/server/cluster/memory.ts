/**
 * In-process adapters of the ports (ports.ts): Maps and an EventEmitter, with the same
 * semantics as the Redis adapters (redis.ts) — leases expire by time, claims bump the
 * epoch, fenced writes compare it — so test/cluster/ports.conformance.test.ts holds both to
 * one contract. Several in-process nodes share one `MemoryCluster` (the state Redis holds
 * in a cluster). A single server needs none of this: without REDIS_URL the service keeps
 * its sessions in its own table, frames in its StreamHub and checkpoints in DATA_DIR and in
 * memory (persistence.ts's CheckpointStore is the in-process SnapshotStore on disk;
 * MemorySnapshotStore below is the one without a disk).
 */
import { EventEmitter } from "node:events";
import { checkpointBytes, parseCheckpoint } from "../persistence";
import {
  type InputLogAt,
  type InputLogPart,
  loggedPart,
  type Subscription,
  splitLogLines,
} from "../protocol";
import {
  type Admission,
  type Bus,
  type BusFrame,
  type Checkpoint,
  type ControlMessage,
  type Cursor,
  type Fence,
  FencedError,
  type Lease,
  type NodeInfo,
  type Quotas,
  readCheckpoints,
  type SessionDirectory,
  type SessionEntry,
  type SnapshotStore,
} from "./ports";

/** Frames kept per class log (the Redis adapter trims to about as many). */
export const LOG_LENGTH = 10_000;

/** What the nodes of an in-process cluster share. */
export class MemoryCluster {
  readonly now: () => number;
  readonly nodes = new Map<string, { info: NodeInfo; until: number }>();
  readonly leases = new Map<string, { node: string; epoch: number; until: number }>();
  readonly epochs = new Map<string, number>();
  readonly registry = new Map<string, SessionEntry>();
  readonly scenes = new Map<string, Uint8Array>();
  readonly wants = new Map<string, Map<string, { sub: Subscription; until: number }>>();
  readonly logs = new Map<string, { seq: number; frames: BusFrame[] }>();
  /** per session: its checkpoint file's bytes, its run, its input log's id and lines */
  readonly snapshots = new Map<
    string,
    { bytes: Uint8Array; run: Fence["run"]; log: string | null; lines: Uint8Array[] }
  >();
  readonly events = new EventEmitter();
  secret: string | null = null;

  constructor(now: () => number = Date.now) {
    this.now = now;
    this.events.setMaxListeners(0);
  }

  /** The lease of a session if alive (an expired one is removed). */
  live(session: string): { node: string; epoch: number; until: number } | null {
    const l = this.leases.get(session);
    if (!l) return null;
    if (l.until <= this.now()) {
      this.leases.delete(session);
      return null;
    }
    return l;
  }
}

const logKey = (session: string, cls: string) => `${session}\n${cls}`;

export class MemoryDirectory implements SessionDirectory {
  constructor(private readonly c: MemoryCluster) {}

  async announce(node: NodeInfo, ttlMs: number): Promise<void> {
    this.c.nodes.set(node.id, { info: { ...node }, until: this.c.now() + ttlMs });
  }

  async withdraw(nodeId: string): Promise<void> {
    this.c.nodes.delete(nodeId);
  }

  async nodes(): Promise<NodeInfo[]> {
    const now = this.c.now();
    const out: NodeInfo[] = [];
    for (const [id, n] of this.c.nodes)
      if (n.until > now) out.push({ ...n.info });
      else this.c.nodes.delete(id);
    return out.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async claim(session: string, node: string, ttlMs: number, held = 0): Promise<Lease | null> {
    if (this.c.live(session)) return null;
    const counter = this.c.epochs.get(session) ?? 0;
    if (held > 0 && counter > held) return null;
    const epoch = Math.max(counter, held) + 1;
    this.c.epochs.set(session, epoch);
    this.c.leases.set(session, { node, epoch, until: this.c.now() + ttlMs });
    return { session, node, epoch };
  }

  async renew(lease: Lease, ttlMs: number): Promise<boolean> {
    const l = this.c.live(lease.session);
    if (!l || l.node !== lease.node || l.epoch !== lease.epoch) return false;
    l.until = this.c.now() + ttlMs;
    return true;
  }

  async release(lease: Lease): Promise<void> {
    const l = this.c.live(lease.session);
    if (l && l.node === lease.node && l.epoch === lease.epoch) this.c.leases.delete(lease.session);
  }

  async holder(session: string): Promise<Lease | null> {
    const l = this.c.live(session);
    return l ? { session, node: l.node, epoch: l.epoch } : null;
  }

  async admit(entry: SessionEntry, quotas: Quotas): Promise<Admission> {
    if (this.c.registry.has(entry.id)) return "ok";
    if (this.c.registry.size >= quotas.maxSessions) return "max_sessions";
    if (entry.owner !== null) {
      let mine = 0;
      for (const e of this.c.registry.values()) if (e.owner === entry.owner) mine++;
      if (mine >= quotas.maxPerKey) return "max_per_key";
    }
    this.c.registry.set(entry.id, { ...entry });
    return "ok";
  }

  async entry(session: string): Promise<SessionEntry | null> {
    const e = this.c.registry.get(session);
    return e ? { ...e } : null;
  }

  async sessions(): Promise<SessionEntry[]> {
    return [...this.c.registry.values()].map((e) => ({ ...e }));
  }

  async forget(session: string): Promise<void> {
    this.c.registry.delete(session);
    this.c.leases.delete(session);
    this.c.epochs.delete(session);
    this.c.scenes.delete(session);
  }

  async secret(candidate: string): Promise<string> {
    this.c.secret ??= candidate;
    return this.c.secret;
  }

  async putScene(session: string, scene: Uint8Array): Promise<void> {
    this.c.scenes.set(session, scene);
  }

  async scene(session: string): Promise<Uint8Array | null> {
    return this.c.scenes.get(session) ?? null;
  }
}

export class MemoryBus implements Bus {
  private readonly handlers: ((m: ControlMessage) => void)[] = [];
  private readonly onMessage = (m: ControlMessage) => {
    for (const h of this.handlers) h(m);
  };

  constructor(private readonly c: MemoryCluster) {
    c.events.on("control", this.onMessage);
  }

  async want(session: string, sub: Subscription, ttlMs: number): Promise<void> {
    let m = this.c.wants.get(session);
    if (!m) {
      m = new Map();
      this.c.wants.set(session, m);
    }
    m.set(`${sub.every}|${sub.key}`, { sub: { ...sub }, until: this.c.now() + ttlMs });
  }

  async wanted(session: string): Promise<Subscription[]> {
    const now = this.c.now();
    const out: Subscription[] = [];
    for (const [k, w] of this.c.wants.get(session) ?? [])
      if (w.until > now) out.push({ ...w.sub });
      else this.c.wants.get(session)?.delete(k);
    return out;
  }

  async publish(
    session: string,
    cls: string,
    epoch: number,
    frame: Omit<BusFrame, "seq">,
  ): Promise<number | null> {
    if (this.c.epochs.get(session) !== epoch) return null;
    const k = logKey(session, cls);
    let log = this.c.logs.get(k);
    if (!log) {
      log = { seq: 0, frames: [] };
      this.c.logs.set(k, log);
    }
    const seq = ++log.seq;
    log.frames.push({ seq, ...frame });
    if (log.frames.length > LOG_LENGTH) log.frames.splice(0, log.frames.length - LOG_LENGTH);
    this.c.events.emit("frame");
    return seq;
  }

  async range(session: string, cls: string, after: number, count: number): Promise<BusFrame[]> {
    const frames = this.c.logs.get(logKey(session, cls))?.frames ?? [];
    return frames.filter((f) => f.seq > after).slice(0, count);
  }

  async latest(session: string, cls: string): Promise<BusFrame | null> {
    const frames = this.c.logs.get(logKey(session, cls))?.frames ?? [];
    return frames[frames.length - 1] ?? null;
  }

  async read(
    cursors: Cursor[],
    blockMs: number,
  ): Promise<{ cursor: Cursor; frames: BusFrame[] }[]> {
    const collect = () =>
      cursors.flatMap((cursor) => {
        const frames = (this.c.logs.get(logKey(cursor.session, cursor.cls))?.frames ?? []).filter(
          (f) => f.seq > cursor.after,
        );
        return frames.length > 0 ? [{ cursor, frames }] : [];
      });
    const now = collect();
    if (now.length > 0 || blockMs <= 0) return now;
    await new Promise<void>((res) => {
      const done = () => {
        clearTimeout(timer);
        this.c.events.off("frame", done);
        res();
      };
      const timer = setTimeout(done, blockMs);
      this.c.events.on("frame", done);
    });
    return collect();
  }

  async control(message: ControlMessage): Promise<void> {
    // asynchronously, like a pub/sub message
    setImmediate(() => this.c.events.emit("control", message));
  }

  onControl(handler: (message: ControlMessage) => void): void {
    this.handlers.push(handler);
  }

  async drop(session: string): Promise<void> {
    this.c.wants.delete(session);
    for (const k of [...this.c.logs.keys()])
      if (k.startsWith(`${session}\n`)) this.c.logs.delete(k);
  }

  async close(): Promise<void> {
    this.c.events.off("control", this.onMessage);
  }
}

/**
 * Checkpoints in a Map, fenced like the Redis store (a cluster of in-process nodes), the
 * recorded inputs in a list per session appended to as the Redis store's (redis.ts).
 */
export class MemorySnapshotStore implements SnapshotStore {
  readonly where = "memory";
  readonly logsInputs = true;

  constructor(private readonly c: MemoryCluster) {}

  async init(): Promise<void> {}

  async write(
    id: string,
    owner: string | null,
    document: Uint8Array,
    fence?: Fence,
    log?: InputLogPart,
  ) {
    if (fence && this.c.epochs.get(id) !== fence.epoch) throw new FencedError(id, fence.epoch);
    const was = this.c.snapshots.get(id);
    const part = loggedPart(log);
    let lines: Uint8Array[] = [];
    if (part) {
      lines = was?.log === part.id ? was.lines : [];
      if (part.from > lines.length)
        throw new Error(
          `the input log of session ${id}: the checkpoint appends inputs ${part.from}.. of log ${part.id}, the store holds ${lines.length}`,
        );
      // its lines past `from` are the same inputs (an input applied is never changed)
      lines.length = part.from;
      for (const line of splitLogLines(part.lines)) lines.push(line.slice());
    }
    this.c.snapshots.set(id, {
      bytes: checkpointBytes(owner, document, part),
      run: fence?.run ?? null,
      log: part?.id ?? null,
      lines,
    });
  }

  async readLog(id: string, log: InputLogAt): Promise<Uint8Array | null> {
    const s = this.c.snapshots.get(id);
    if (!s || s.log !== log.id || s.lines.length < log.count) return null;
    return Buffer.concat(s.lines.slice(0, log.count));
  }

  async read(id: string): Promise<Checkpoint | null> {
    const s = this.c.snapshots.get(id);
    if (!s) return null;
    const text = Buffer.from(s.bytes).toString("utf8");
    return { ...parseCheckpoint(id, text, Buffer.concat(s.lines)), run: s.run };
  }

  readAll(): Promise<Checkpoint[]> {
    return readCheckpoints(this.c.snapshots.keys(), (id) => this.read(id));
  }

  async remove(id: string): Promise<void> {
    this.c.snapshots.delete(id);
  }

  async flush(): Promise<void> {}
}
