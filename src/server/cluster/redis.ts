/**
 * Redis adapters of the ports (ports.ts), through ioredis, for REDIS_URL. Keys (prefix
 * `moreau:`, CLUSTER_PREFIX):
 *   node:<id>            a node's heartbeat (JSON NodeInfo, PX = heartbeat TTL); `nodes` the set of ids
 *   lease:<sid>          `<node>:<epoch>`, SET NX PX (the lease); epoch:<sid> its counter
 *   sessions             hash id → owner key id ("" without keys): the registry; keys:<owner> a set per key
 *   scene:<sid>          the scene frame's JSON bytes
 *   want:<sid>           hash `<every>|<encoding>` → JSON { sub, until }: classes nodes want
 *   log:<sid>:<class>    a Redis Stream of frames, entry ids `0-<seq>`, fields step, f, b (bytes);
 *                        MAXLEN ~ LOG_LENGTH; seq:<sid>:<class> the seq counter; logs:<sid> the set of both
 *   snap:<sid>           hash doc (checkpoint file bytes), run (JSON), log (its input log's id)
 *   inputs:<sid>         list: the input log's lines, one JSON input an element (RedisSnapshotStore)
 *   secret               the shared secret of forwarded requests (node.ts)
 *   channel control      control messages (pub/sub)
 * Every check-and-write is one Lua script (atomic on the server): claim (SET NX PX and the
 * epoch bump), renew and release (only the holder's value), admit (the quotas against the
 * registry), fenced publish and fenced checkpoint (the epoch compared first). The directory
 * and the connections are in redis-directory.ts (re-exported here), which the lease
 * renewal thread loads alone.
 *
 * Failures: commands fail at once while Redis is unreachable (no offline queue, one retry),
 * so a node keeps serving its own sessions and reports the outage (/ready `cluster.redis`);
 * ioredis reconnects by itself (every 0.1–1 s) and the node re-establishes its leases
 * (node.ts).
 */
import type { Writable } from "node:stream";
import { Command, type Redis } from "ioredis";
import { checkpointParts, parseCheckpoint } from "../persistence";
import {
  type InputLogAt,
  type InputLogPart,
  loggedPart,
  type Subscription,
  splitLogLines,
} from "../protocol";
import { LOG_LENGTH } from "./memory";
import {
  type Bus,
  type BusFrame,
  type Checkpoint,
  type ControlMessage,
  type Cursor,
  type Fence,
  FencedError,
  readCheckpoints,
  type SnapshotStore,
} from "./ports";
import { Keys } from "./redis-directory";

export { connect, RedisDirectory, ready } from "./redis-directory";

// KEYS: epoch, seq, log, logs; ARGV: epoch, step, forced, bytes, maxlen
const PUBLISH = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local seq = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[5], '0-' .. seq, 'step', ARGV[2], 'f', ARGV[3], 'b', ARGV[4])
if seq == 1 then redis.call('SADD', KEYS[4], KEYS[2], KEYS[3]) end
return seq`;
// KEYS: epoch, snap, inputs; ARGV: epoch ('': not fenced), doc, run, log id ('': none), from,
// then the log's lines from..count-1. The list holds the log's lines (one an element), its
// id in snap's `log`: a log of another id starts the list anew (from 0); else its lines from
// `from` on are replaced (the same inputs: an applied input never changes) by those given.
// -1: the part continues none the store holds (from > 0 of another log, or past its end).
// The lines go in RPUSHes of PUSH_BATCH values each: one a line made a whole log's rewrite
// (a checkpoint after a failed write resends it from 0) 100 000 calls for 100 000 inputs;
// a batch is bounded because unpack puts its values on the Lua C stack (LUAI_MAXCSTACK,
// 8000 slots in Redis 7.0.15's Lua 5.1: 7990 values unpack, 8000 fail the script with "too
// many results to unpack").
const CHECKPOINT = `
local PUSH_BATCH = 1000
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[4] == '' then
  redis.call('DEL', KEYS[3])
  redis.call('HDEL', KEYS[2], 'log')
else
  local from = tonumber(ARGV[5])
  if redis.call('HGET', KEYS[2], 'log') ~= ARGV[4] then
    if from ~= 0 then return -1 end
    redis.call('DEL', KEYS[3])
  elseif from == 0 then
    redis.call('DEL', KEYS[3])
  elseif redis.call('LLEN', KEYS[3]) < from then
    return -1
  else
    redis.call('LTRIM', KEYS[3], 0, from - 1)
  end
  for i = 6, #ARGV, PUSH_BATCH do
    redis.call('RPUSH', KEYS[3], unpack(ARGV, i, math.min(i + PUSH_BATCH - 1, #ARGV)))
  end
  redis.call('HSET', KEYS[2], 'log', ARGV[4])
end
redis.call('HSET', KEYS[2], 'doc', ARGV[2], 'run', ARGV[3])
return 1`;

type StreamEntry = [Buffer, Buffer[]];

function frameOf(e: StreamEntry): BusFrame {
  const id = e[0].toString();
  const f: Record<string, Buffer> = {};
  for (let i = 0; i + 1 < e[1].length; i += 2) f[e[1][i].toString()] = e[1][i + 1];
  return {
    seq: Number(id.slice(id.indexOf("-") + 1)),
    step: Number(f.step.toString()),
    forced: f.f.toString() === "1",
    bytes: new Uint8Array(f.b.buffer, f.b.byteOffset, f.b.byteLength),
  };
}

export class RedisBus implements Bus {
  private readonly k: Keys;
  /** blocking reads have a connection of their own */
  private readonly reader: Redis;
  /** pub/sub too */
  private readonly subscriber: Redis;
  private readonly handlers: ((m: ControlMessage) => void)[] = [];

  constructor(
    private readonly redis: Redis,
    prefix = "moreau:",
  ) {
    this.k = new Keys(prefix);
    this.reader = redis.duplicate({ enableAutoPipelining: false });
    // the subscription waits for the connection (and ioredis renews it after a reconnect)
    this.subscriber = redis.duplicate({ enableAutoPipelining: false, enableOfflineQueue: true });
    // a subscription is re-established by ioredis after a reconnect
    this.subscriber.subscribe(this.k.control()).catch(() => undefined);
    this.subscriber.on("message", (_channel: string, text: string) => {
      let m: ControlMessage;
      try {
        m = JSON.parse(text) as ControlMessage;
      } catch {
        return;
      }
      for (const h of this.handlers) h(m);
    });
    // errors are reported through the main connection's state (node.ts); these reconnect
    this.reader.on("error", () => undefined);
    this.subscriber.on("error", () => undefined);
  }

  async want(session: string, sub: Subscription, ttlMs: number): Promise<void> {
    await this.redis.hset(
      this.k.want(session),
      `${sub.every}|${sub.key}`,
      JSON.stringify({ sub, until: Date.now() + ttlMs }),
    );
  }

  async wanted(session: string): Promise<Subscription[]> {
    const all = await this.redis.hgetall(this.k.want(session));
    const now = Date.now();
    const out: Subscription[] = [];
    const stale: string[] = [];
    for (const [field, v] of Object.entries(all)) {
      const w = JSON.parse(v) as { sub: Subscription; until: number };
      if (w.until > now) out.push(w.sub);
      else stale.push(field);
    }
    if (stale.length > 0) await this.redis.hdel(this.k.want(session), ...stale);
    return out;
  }

  async publish(
    session: string,
    cls: string,
    epoch: number,
    frame: Omit<BusFrame, "seq">,
  ): Promise<number | null> {
    const r = await this.redis.eval(
      PUBLISH,
      4,
      this.k.epoch(session),
      this.k.seq(session, cls),
      this.k.log(session, cls),
      this.k.logs(session),
      epoch,
      frame.step,
      frame.forced ? 1 : 0,
      Buffer.from(frame.bytes.buffer, frame.bytes.byteOffset, frame.bytes.byteLength),
      LOG_LENGTH,
    );
    return r === null ? null : Number(r);
  }

  async range(session: string, cls: string, after: number, count: number): Promise<BusFrame[]> {
    const entries = (await this.redis.xrangeBuffer(
      this.k.log(session, cls),
      `(0-${after}`,
      "+",
      "COUNT",
      count,
    )) as unknown as StreamEntry[];
    return entries.map(frameOf);
  }

  async latest(session: string, cls: string): Promise<BusFrame | null> {
    const entries = (await this.redis.xrevrangeBuffer(
      this.k.log(session, cls),
      "+",
      "-",
      "COUNT",
      1,
    )) as unknown as StreamEntry[];
    return entries.length > 0 ? frameOf(entries[0]) : null;
  }

  async read(
    cursors: Cursor[],
    blockMs: number,
  ): Promise<{ cursor: Cursor; frames: BusFrame[] }[]> {
    if (cursors.length === 0) return [];
    const keys = cursors.map((c) => this.k.log(c.session, c.cls));
    const ids = cursors.map((c) => `0-${c.after}`);
    const r = (await this.reader.xreadBuffer(
      "COUNT",
      1000,
      "BLOCK",
      blockMs,
      "STREAMS",
      ...keys,
      ...ids,
    )) as unknown as [Buffer, StreamEntry[]][] | null;
    if (!r) return [];
    return r.map(([key, entries]) => ({
      cursor: cursors[keys.indexOf(key.toString())],
      frames: entries.map(frameOf),
    }));
  }

  async control(message: ControlMessage): Promise<void> {
    await this.redis.publish(this.k.control(), JSON.stringify(message));
  }

  onControl(handler: (message: ControlMessage) => void): void {
    this.handlers.push(handler);
  }

  async drop(session: string): Promise<void> {
    const logs = await this.redis.smembers(this.k.logs(session));
    await this.redis.del(this.k.want(session), this.k.logs(session), ...logs);
  }

  async close(): Promise<void> {
    this.reader.disconnect();
    this.subscriber.disconnect();
  }
}

/** One argument of a command sent as its parts, in order (a Redis bulk string of their sum). */
class Parts {
  constructor(readonly parts: readonly Uint8Array[]) {}
  get byteLength(): number {
    return this.parts.reduce((n, p) => n + p.byteLength, 0);
  }
}

/**
 * A command whose Parts arguments are written to the socket piece by piece, never joined:
 * ioredis encodes a command with a Buffer argument into one new Buffer (Command.toWritable's
 * MixedBuffers) and its auto-pipelining concatenates that again, so a 10 MB checkpoint
 * cost 30 MB more in the main process while it was sent (measured: 30.0 MiB above the
 * document, with checkpointBytes' own copy). toWritable(socket) is the hook ioredis gives a
 * command (its Script uses it); the RESP framing — `*<n>\r\n`, then `$<len>\r\n<bytes>\r\n`
 * per argument — is written here, the last piece returned for ioredis to write. Sent with
 * redis.sendCommand, which writes at once (never through auto-pipelining, whose pipeline
 * would join its commands' writes), and queues the reply in the order written.
 */
class PartsCommand extends Command {
  constructor(
    name: string,
    private readonly parts: readonly (string | number | Parts)[],
  ) {
    // the plain arguments (keys, numbers) for ioredis's logs; the parts are sent by toWritable
    super(
      name,
      parts.map((a) => (a instanceof Parts ? "[bytes]" : String(a))),
    );
  }

  override toWritable(socket: object): string {
    const out = socket as Writable;
    out.cork();
    let text = `*${this.parts.length + 1}\r\n$${Buffer.byteLength(this.name)}\r\n${this.name}\r\n`;
    for (const a of this.parts) {
      if (a instanceof Parts) {
        out.write(`${text}$${a.byteLength}\r\n`);
        for (const p of a.parts) out.write(p);
        text = "\r\n";
      } else {
        const v = String(a);
        text += `$${Buffer.byteLength(v)}\r\n${v}\r\n`;
      }
    }
    // written as one batch (writev) once ioredis has written the last piece
    process.nextTick(() => out.uncork());
    return text;
  }
}

/**
 * Checkpoints in Redis (binary), fenced by the session's epoch; the recorded inputs an
 * append-only list per session (inputs:<sid>, one JSON line an element), as DATA_DIR's log
 * (persistence.ts): a checkpoint sends the inputs applied since the previous one, its
 * document the pending ones only, and names the log ({id, count}) as the file does. Until
 * 2026-12-07 each checkpoint sent the whole recording.
 */
export class RedisSnapshotStore implements SnapshotStore {
  readonly where = "redis";
  readonly logsInputs = true;
  private readonly k: Keys;
  private written = 0;

  constructor(
    private readonly redis: Redis,
    prefix = "moreau:",
  ) {
    this.k = new Keys(prefix);
  }

  async init(): Promise<void> {}

  /** Bytes of the checkpoints' documents and input lines sent so far. */
  get bytesWritten(): number {
    return this.written;
  }

  async write(
    id: string,
    owner: string | null,
    document: Uint8Array,
    fence?: Fence,
    log?: InputLogPart,
  ) {
    const part = loggedPart(log);
    // the checkpoint file's bytes (persistence.ts), its document not copied
    const doc = new Parts(checkpointParts(owner, document, part));
    const lines = part ? splitLogLines(part.lines).map((l) => new Parts([l])) : [];
    const ok = await this.redis.sendCommand(
      new PartsCommand("eval", [
        CHECKPOINT,
        3,
        this.k.epoch(id),
        this.k.snap(id),
        this.k.inputs(id),
        fence ? fence.epoch : "",
        doc,
        JSON.stringify(fence?.run ?? null),
        part?.id ?? "",
        part?.from ?? 0,
        ...lines,
      ]),
    );
    if (Number(ok) === 0) throw new FencedError(id, fence?.epoch ?? 0);
    if (Number(ok) !== 1)
      throw new Error(
        `the input log of session ${id}: the checkpoint appends inputs ${part?.from}.. of log ${part?.id}, which the store does not hold up to there`,
      );
    this.written += doc.byteLength + (part?.lines.byteLength ?? 0);
  }

  async readLog(id: string, log: InputLogAt): Promise<Uint8Array | null> {
    // (LRANGE 0 -1 would be the whole list)
    if (log.count === 0) return new Uint8Array(0);
    const r = await this.redis
      .multi()
      .hget(this.k.snap(id), "log")
      .lrangeBuffer(this.k.inputs(id), 0, log.count - 1)
      .exec();
    const named = r?.[0]?.[1] as string | null;
    const lines = (r?.[1]?.[1] ?? []) as Buffer[];
    return named === log.id && lines.length === log.count ? Buffer.concat(lines) : null;
  }

  async read(id: string): Promise<Checkpoint | null> {
    // the document and the list as one write left them
    const r = await this.redis
      .multi()
      .hmgetBuffer(this.k.snap(id), "doc", "run")
      .lrangeBuffer(this.k.inputs(id), 0, -1)
      .exec();
    const [doc, run] = (r?.[0]?.[1] ?? [null, null]) as (Buffer | null)[];
    if (!doc) return null;
    const lines = (r?.[1]?.[1] ?? []) as Buffer[];
    return {
      ...parseCheckpoint(id, doc.toString("utf8"), Buffer.concat(lines)),
      run: run ? (JSON.parse(run.toString()) as Checkpoint["run"]) : null,
    };
  }

  async readAll(): Promise<Checkpoint[]> {
    const ids = Object.keys(await this.redis.hgetall(this.k.sessions()));
    return readCheckpoints(ids, (id) => this.read(id));
  }

  async remove(id: string): Promise<void> {
    await this.redis.del(this.k.snap(id), this.k.inputs(id));
  }

  async flush(): Promise<void> {}
}
