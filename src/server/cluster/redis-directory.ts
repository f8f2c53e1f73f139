/**
 * The Redis adapter of the SessionDirectory port (ports.ts) and the connections (redis.ts
 * describes the keys): apart from the bus and the snapshot store, whose modules the lease
 * renewal thread (lease-worker.ts) need not load.
 */
import { Redis, type RedisOptions } from "ioredis";
import type { Admission, Lease, NodeInfo, Quotas, SessionDirectory, SessionEntry } from "./ports";

/** A connection that fails fast while Redis is down and reconnects on its own. */
export function connect(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    enableAutoPipelining: true,
    ...extra,
  });
}

/** Resolves once the connection is ready (false after `timeoutMs`: Redis unreachable for now). */
export function ready(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((res) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      res(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    redis.on("ready", onReady);
  });
}

// KEYS: lease, epoch; ARGV: node, ttlMs, the epoch its holder claims it again from (0: none)
const CLAIM = `
local c = tonumber(redis.call('GET', KEYS[2]) or '0')
local held = tonumber(ARGV[3])
if held > 0 and c > held then return false end
local e = math.max(c, held) + 1
if not redis.call('SET', KEYS[1], ARGV[1] .. ':' .. e, 'PX', ARGV[2], 'NX') then return false end
redis.call('SET', KEYS[2], e)
return e`;
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
// KEYS: sessions, keys:<owner>; ARGV: id, owner ("" none), maxSessions, maxPerKey
const ADMIT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 1 end
if ARGV[2] ~= '' and redis.call('SCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 2 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if ARGV[2] ~= '' then redis.call('SADD', KEYS[2], ARGV[1]) end
return 0`;
/** The key names under a prefix. */
export class Keys {
  constructor(readonly p: string) {}
  node = (id: string) => `${this.p}node:${id}`;
  nodes = () => `${this.p}nodes`;
  lease = (s: string) => `${this.p}lease:${s}`;
  epoch = (s: string) => `${this.p}epoch:${s}`;
  sessions = () => `${this.p}sessions`;
  owned = (owner: string | null) => `${this.p}keys:${owner ?? ""}`;
  scene = (s: string) => `${this.p}scene:${s}`;
  want = (s: string) => `${this.p}want:${s}`;
  log = (s: string, c: string) => `${this.p}log:${s}:${c}`;
  seq = (s: string, c: string) => `${this.p}seq:${s}:${c}`;
  logs = (s: string) => `${this.p}logs:${s}`;
  snap = (s: string) => `${this.p}snap:${s}`;
  inputs = (s: string) => `${this.p}inputs:${s}`;
  control = () => `${this.p}control`;
  secret = () => `${this.p}secret`;
}

export class RedisDirectory implements SessionDirectory {
  private readonly k: Keys;

  constructor(
    private readonly redis: Redis,
    prefix = "moreau:",
  ) {
    this.k = new Keys(prefix);
  }

  async announce(node: NodeInfo, ttlMs: number): Promise<void> {
    await this.redis
      .multi()
      .set(this.k.node(node.id), JSON.stringify(node), "PX", ttlMs)
      .sadd(this.k.nodes(), node.id)
      .exec();
  }

  async withdraw(nodeId: string): Promise<void> {
    await this.redis.multi().del(this.k.node(nodeId)).srem(this.k.nodes(), nodeId).exec();
  }

  async nodes(): Promise<NodeInfo[]> {
    const ids = (await this.redis.smembers(this.k.nodes())).sort();
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map((id) => this.k.node(id)));
    const out: NodeInfo[] = [];
    const gone: string[] = [];
    values.forEach((v, i) => {
      if (v === null) gone.push(ids[i]);
      else out.push(JSON.parse(v) as NodeInfo);
    });
    if (gone.length > 0) await this.redis.srem(this.k.nodes(), ...gone);
    return out;
  }

  async claim(session: string, node: string, ttlMs: number, held = 0): Promise<Lease | null> {
    const e = await this.redis.eval(
      CLAIM,
      2,
      this.k.lease(session),
      this.k.epoch(session),
      node,
      ttlMs,
      held,
    );
    return e === null ? null : { session, node, epoch: Number(e) };
  }

  async renew(lease: Lease, ttlMs: number): Promise<boolean> {
    const r = await this.redis.eval(
      RENEW,
      1,
      this.k.lease(lease.session),
      `${lease.node}:${lease.epoch}`,
      ttlMs,
    );
    return Number(r) === 1;
  }

  async release(lease: Lease): Promise<void> {
    await this.redis.eval(RELEASE, 1, this.k.lease(lease.session), `${lease.node}:${lease.epoch}`);
  }

  async holder(session: string): Promise<Lease | null> {
    const v = await this.redis.get(this.k.lease(session));
    if (v === null) return null;
    const i = v.lastIndexOf(":");
    return { session, node: v.slice(0, i), epoch: Number(v.slice(i + 1)) };
  }

  async admit(entry: SessionEntry, quotas: Quotas): Promise<Admission> {
    const r = Number(
      await this.redis.eval(
        ADMIT,
        2,
        this.k.sessions(),
        this.k.owned(entry.owner),
        entry.id,
        entry.owner ?? "",
        quotas.maxSessions,
        quotas.maxPerKey,
      ),
    );
    return r === 0 ? "ok" : r === 1 ? "max_sessions" : "max_per_key";
  }

  async entry(session: string): Promise<SessionEntry | null> {
    const owner = await this.redis.hget(this.k.sessions(), session);
    return owner === null ? null : { id: session, owner: owner === "" ? null : owner };
  }

  async sessions(): Promise<SessionEntry[]> {
    const all = await this.redis.hgetall(this.k.sessions());
    return Object.entries(all).map(([id, owner]) => ({ id, owner: owner === "" ? null : owner }));
  }

  async forget(session: string): Promise<void> {
    const e = await this.entry(session);
    const m = this.redis
      .multi()
      .hdel(this.k.sessions(), session)
      .del(this.k.lease(session), this.k.epoch(session), this.k.scene(session));
    if (e?.owner) m.srem(this.k.owned(e.owner), session);
    await m.exec();
  }

  async secret(candidate: string): Promise<string> {
    await this.redis.set(this.k.secret(), candidate, "NX");
    return (await this.redis.get(this.k.secret())) ?? candidate;
  }

  async putScene(session: string, scene: Uint8Array): Promise<void> {
    await this.redis.set(this.k.scene(session), Buffer.from(scene));
  }

  async scene(session: string): Promise<Uint8Array | null> {
    return this.redis.getBuffer(this.k.scene(session));
  }
}
