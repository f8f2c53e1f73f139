/**
 * A Moreau server as a node of a cluster (REDIS_URL): many servers acting as one service.
 * It talks to the infrastructure only through the three ports (ports.ts).
 *
 * Ownership: a session lives on one node, its owner, which holds its lease (LEASE_TTL_MS,
 * renewed every third of it, with the epoch as fencing token: rec.epoch). The renewals run
 * on a timer of their own, on a Redis connection of their own (ClusterPorts.leases), and
 * wait for nothing else: not the heartbeat or the directory reads (a tick renewed only
 * after announcing and reading the nodes, three round trips on the connection that carries
 * the frames), not a frame or a checkpoint on the wire. With Redis they run in a thread of
 * their own (ClusterPorts.renewer, renewer.ts), which renews while the event loop's
 * heartbeat is recent: a stall of the event loop keeps the leases, a hung one loses them;
 * the event loop hands it the leases it holds and takes its answers. Their times are monotonic
 * (performance.now(): a wall clock set back or forth moves no lease). A request on a
 * session this node holds is served here once the lease is known valid: a lease renewed at
 * time t (the time the renewal was sent) cannot be claimed by another node before
 * t + LEASE_TTL_MS, so until t + 0.8·LEASE_TTL_MS no check is needed; past that (a node
 * frozen, its timers late) the lease is renewed first, and a node that lost it lets the
 * session go (evicts it) and forwards the request to the new owner. Its checkpoints and
 * frames carry its epoch and are refused once another node claimed the session.
 *
 * Any node answers any request (`route`, an onRequest hook): a session held elsewhere is
 * forwarded to its owner over HTTP (the body streamed as is, the answer streamed back,
 * `x-moreau-node` naming the node that served it), or answered 307 to the owner's
 * NODE_PUBLIC_URL with CLUSTER_REDIRECT; a registered session nobody holds (its node died
 * and its lease just expired) is taken over on the spot, and a request for a session whose
 * node refuses the connection (killed, its heartbeat not yet expired) waits for that. POST /v1/sessions goes to the
 * least loaded live node (heartbeats carry sessions and workers; load = sessions /
 * workers); GET /v1/sessions gathers every node's list. Streams are served on any node
 * from the Redis logs (relay.ts).
 *
 * Failover: every LEASE_TTL_MS / 2 a node looks for registered sessions whose lease is
 * gone and takes over those that a deterministic spread assigns to it (the orphans dealt
 * out, one at a time, to the least loaded live node: every node computes the same deal
 * from the same heartbeats; an orphan left over two scans goes to whoever sees it): it
 * claims the lease (epoch + 1), restores the last checkpoint from the SnapshotStore, and
 * resumes its run. A graceful drain (SIGTERM) pauses, checkpoints and releases every
 * session, and announces it, so that the others take them over at once, without a step lost.
 * While no node can take an orphan (none accepts: their workers lost, their starts failing)
 * it waits in the store, as a single server's checkpoint no worker could open yet: any node
 * answers its GET with its checkpoint's Session body (`restoring`), lists it in GET
 * /v1/sessions, deletes it on DELETE and answers the rest 503 worker_unavailable, as a
 * single server does; the first node whose worker starts again takes it over, at once (a
 * scan on its worker's start: `workers`). The live node with the lowest id counts such
 * sessions in moreau_sessions{status="restoring"} (unheldReported), the others not.
 *
 * Redis unreachable: the node keeps serving the sessions it holds (nobody can claim them
 * meanwhile), refuses what needs the directory (503 cluster_unavailable), and reports it
 * in /ready (`cluster.redis: "down"`, `degraded`); once Redis is back it renews its leases
 * — or, if Redis lost them (restarted without its data), claims them again, re-enters
 * them in the registry and checkpoints them.
 *
 * Metrics (metrics.ts ClusterMetrics, on /metrics): forwards by route and outcome with
 * their round trip, takeovers by cause, lease renewals by outcome, fenced writes, frames
 * published and relayed, and the Redis connection's state; moreau_sessions as above.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { Agent, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { hostname } from "node:os";
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from "fastify";
import type { SessionOut } from "../../../schemas/api";
import type { Config } from "../config";
import { ApiError, notFound } from "../errors";
import type { ClusterMetrics, ServerMetrics } from "../metrics";
import type { Subscription } from "../protocol";
import type { SessionManager } from "../session-manager";
import { restoringViewOf, type SessionRecord } from "../sessions/records";
import type { StreamHub } from "../stream";
import type { ClusterHooks } from "./hooks";
import {
  type Bus,
  type ControlMessage,
  classId,
  type Lease,
  type NodeInfo,
  type SessionDirectory,
  type SessionEntry,
  type SnapshotStore,
} from "./ports";
import { REFRESH_MS, Relay } from "./relay";
import type { LeaseRenewer } from "./renewer";

/** A lease is used without a check until this fraction of its TTL after its renewal was sent. */
const TRUSTED_FRACTION = 0.8;
/** A heartbeat lives this fraction of the lease TTL (a dead node leaves the list first). */
const HEARTBEAT_FRACTION = 0.67;
/**
 * The header of a request forwarded by a node: `<node id> <cluster secret>` (the secret,
 * shared through the directory, keeps a client from passing for a node).
 */
export const FORWARDED = "x-moreau-forwarded";
/** Why no node takes over a session waiting in the store (`worker_unavailable`'s cause). */
const NO_WORKER = "no node of the cluster has a solver worker running (their starts failing)";
/** The header naming the node that served an answer. */
export const SERVED_BY = "x-moreau-node";

export interface ClusterPorts {
  directory: SessionDirectory;
  /**
   * The directory on a connection of its own, for the leases (claim, renew, release) and
   * the heartbeat: a renewal is never answered after a frame or a directory read sent
   * before it (setup.ts). Without it, `directory`.
   */
  leases?: SessionDirectory;
  /**
   * The periodic renewals in a thread of their own (renewer.ts, the Redis adapters);
   * without it, or while it is not running, on the event loop (`leases`).
   */
  renewer?: LeaseRenewer;
  bus: Bus;
  snapshots: SnapshotStore;
  /** whether the infrastructure answers now (the Redis connection is ready) */
  healthy(): boolean;
  /**
   * performance.now() when the connection to the directory last came back after it was
   * lost (-Infinity: never lost); without it, never
   */
  reconnectedAt?(): number;
  close(): Promise<void>;
}

export interface ClusterStatus {
  node: string;
  redis: "up" | "down";
  nodes: number;
  degraded: boolean;
}

interface Held {
  lease: Lease;
  /** performance.now() until which the lease is used without a check */
  trustedUntil: number;
}

/** A lease claimed for a creation or a takeover under way, and when it was last renewed. */
interface Claimed {
  lease: Lease;
  /** performance.now() when its claim or last renewal was sent */
  sent: number;
  /**
   * claimed again after Redis lost it (claimRenewed): its registry entry is entered again
   * once the session is open (opened), as a held lease's is (renewed)
   */
  reclaimed?: boolean;
}

export class ClusterNode implements ClusterHooks {
  id: string;
  url: string;
  publicUrl: string;
  readonly relay: Relay;
  private readonly held = new Map<string, Held>();
  /** leases claimed for a creation or a takeover under way (opened() picks them up) */
  private readonly claimed = new Map<string, Claimed>();
  /** takeovers under way */
  private readonly adopting = new Map<string, Promise<boolean>>();
  /** the classes each session held here must publish */
  private readonly wantedBy = new Map<string, Subscription[]>();
  /** orphans seen by the previous scans (id → scans) */
  private readonly orphans = new Map<string, number>();
  /**
   * registered sessions this node found without a holder while answering for them (id →
   * Date.now() when first found so): what a `restoring` answer says it has waited since
   */
  private readonly unheld = new Map<string, number>();
  private nodes: NodeInfo[] = [];
  private timers: ReturnType<typeof setInterval>[] = [];
  /** renewals under way (renew) */
  private readonly renewing = new Map<string, Promise<boolean>>();
  private accepting = true;
  /** joined the cluster (start): its id and address known, its heartbeat published */
  private joined = false;
  /** the cluster's shared secret (FORWARDED), once read from the directory */
  private secret: string | null = null;
  private stopped = false;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  private readonly ttl: number;
  /** sessions a drain released (id → Date.now()): a takeover of one is a hand-over */
  private readonly released = new Map<string, number>();
  private readonly metrics: ClusterMetrics;

  constructor(
    private readonly config: Config,
    private readonly log: FastifyBaseLogger,
    private readonly sessions: SessionManager,
    private readonly streams: StreamHub,
    private readonly ports: ClusterPorts,
    metrics: ServerMetrics,
  ) {
    this.ttl = config.leaseTtlMs;
    this.id = config.nodeId;
    this.url = config.nodeUrl;
    this.publicUrl = config.nodePublicUrl;
    this.metrics = metrics.cluster({
      redisUp: () => ports.healthy(),
      nodes: () => this.nodes.length,
      unheldSessions: () => this.unheldReported(),
    });
    const relayed = this.metrics.framesRelayed;
    this.relay = new Relay(ports.bus, ports.directory, streams, () => relayed.inc());
    ports.bus.onControl((m) => this.onControl(m));
    ports.renewer?.onRenewed((lease, ok, sent) => this.renewedElsewhere(lease, ok, sent));
  }

  /** Joins the cluster once the server listens on `port`. */
  start(port: number): void {
    const host = ["0.0.0.0", "::"].includes(this.config.host) ? hostname() : this.config.host;
    this.id ||= `${hostname()}-${port}`;
    this.url ||= `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
    this.publicUrl ||= this.url;
    this.joined = true;
    this.relay.start();
    const every = (ms: number, fn: () => Promise<void>) => {
      const t = setInterval(() => void fn().catch(() => undefined), ms);
      t.unref();
      this.timers.push(t);
    };
    every(Math.max(50, Math.floor(this.ttl / 3)), () => this.tick());
    this.renewals();
    every(Math.max(50, Math.floor(this.ttl / 2)), () => this.scan());
    every(REFRESH_MS, () => this.refreshAllWanted());
    void this.tick()
      .then(() => this.scan())
      .catch(() => undefined);
    this.log.info({ node: this.id, url: this.url, leaseTtlMs: this.ttl }, "cluster node started");
  }

  /**
   * Whether a request was forwarded by a node of this cluster (its FORWARDED header
   * carries the cluster's secret): served here as it is, not counted again by the rate
   * limit.
   */
  isForwarded(req: FastifyRequest): boolean {
    const h = req.headers[FORWARDED];
    if (typeof h !== "string" || this.secret === null) return false;
    const given = Buffer.from(h.slice(h.indexOf(" ") + 1));
    const known = Buffer.from(this.secret);
    return given.length === known.length && timingSafeEqual(given, known);
  }

  private forwardedBy(): string {
    return `${this.id} ${this.secret ?? ""}`;
  }

  status(): ClusterStatus {
    const up = this.ports.healthy();
    return {
      node: this.id,
      redis: up ? "up" : "down",
      nodes: this.nodes.length,
      degraded: !up || this.relay.failing,
    };
  }

  // ------------------------------------------------------------ hooks (sessions/)

  async admit(id: string, owner: string | null): Promise<void> {
    // the lease before the registration: a session registered without a holder is an orphan
    // to the other nodes' scans, which took over sessions still being created here (and,
    // finding no checkpoint, let them go: the creation then answered 503, held by another
    // node); the heartbeat renews the lease until opened() holds it
    const sent = performance.now();
    const lease = await this.directoryCall(() => this.leases.claim(id, this.id, this.ttl));
    if (!lease) throw new ApiError("cluster_unavailable", `session ${id} is held by another node`);
    let answer: Awaited<ReturnType<SessionDirectory["admit"]>>;
    try {
      answer = await this.directoryCall(() =>
        this.ports.directory.admit(
          { id, owner },
          { maxSessions: this.config.maxSessions, maxPerKey: this.config.maxSessionsPerKey },
        ),
      );
    } catch (err) {
      await this.ports.directory.forget(id).catch(() => undefined);
      throw err;
    }
    if (answer === "ok") {
      this.claimed.set(id, { lease, sent });
      this.handOver();
      return;
    }
    await this.ports.directory.forget(id).catch(() => undefined);
    if (answer === "max_sessions")
      throw new ApiError(
        "too_many_sessions",
        `the cluster holds its limit of ${this.config.maxSessions} sessions (MAX_SESSIONS); delete one first`,
        { limit: this.config.maxSessions },
      );
    if (answer === "max_per_key")
      throw new ApiError(
        "too_many_sessions",
        `this API key holds its limit of ${this.config.maxSessionsPerKey} sessions (MAX_SESSIONS_PER_KEY); delete one first`,
        { limit: this.config.maxSessionsPerKey, scope: "key" },
      );
  }

  async opened(rec: SessionRecord): Promise<void> {
    // a re-claim of its lease under way (claimRenewed) first: opened with the lease it ends
    // with, not the one Redis lost
    await this.renewing.get(rec.id)?.catch(() => undefined);
    const claimed = this.claimed.get(rec.id);
    this.claimed.delete(rec.id);
    // trusted from its last renewal (a large model's build may have taken seconds since)
    const sent = claimed?.sent ?? performance.now();
    let lease = claimed?.lease ?? null;
    lease ??= await this.directoryCall(() => this.leases.claim(rec.id, this.id, this.ttl));
    if (!lease)
      throw new ApiError("cluster_unavailable", `session ${rec.id} is held by another node`);
    rec.epoch = lease.epoch;
    this.held.set(rec.id, { lease, trustedUntil: sent + this.ttl * TRUSTED_FRACTION });
    this.handOver();
    if (claimed?.reclaimed)
      await this.directoryCall(() =>
        this.ports.directory.admit(
          { id: rec.id, owner: rec.owner },
          { maxSessions: Number.MAX_SAFE_INTEGER, maxPerKey: Number.MAX_SAFE_INTEGER },
        ),
      );
    const scene = this.sessions.sceneFrame(rec, "json", false);
    await this.directoryCall(() => this.ports.directory.putScene(rec.id, scene));
  }

  async deleted(id: string): Promise<void> {
    this.held.delete(id);
    this.claimed.delete(id);
    this.wantedBy.delete(id);
    await this.ports.directory.forget(id);
    await this.ports.bus.drop(id);
    await this.ports.bus.control({ type: "deleted", session: id });
  }

  frames(
    rec: SessionRecord,
    step: number,
    forced: boolean,
    frames: readonly { key: string; bytes: Uint8Array }[],
  ): void {
    for (const c of this.wantedBy.get(rec.id) ?? []) {
      if (!forced && step % c.every !== 0) continue;
      const f = frames.find((x) => x.key === c.key);
      if (f) this.publish(rec, classId(c), step, forced, f.bytes);
    }
  }

  subscriptions(id: string, subs: Subscription[]): void {
    void this.relay.want(id, subs).catch(() => undefined);
  }

  wanted(id: string): Subscription[] {
    return this.wantedBy.get(id) ?? [];
  }

  fenced(rec: SessionRecord): void {
    this.metrics.fencedWrites.inc({ kind: "checkpoint" });
    this.refused(rec.id, "its checkpoint was refused by the fencing token");
  }

  unavailable(rec: SessionRecord): void {
    // as a drain hands a session over (its checkpoint in the store is its acknowledged
    // state: an answer waits for its fenced write), and this node takes none meanwhile
    // (announce, scan: no live worker)
    void (async () => {
      const held = this.held.get(rec.id);
      await this.announce().catch(() => undefined);
      await this.sessions.evict(rec.id);
      this.held.delete(rec.id);
      this.wantedBy.delete(rec.id);
      if (held) await this.leases.release(held.lease).catch(() => undefined);
      await this.ports.bus.control({ type: "released", session: rec.id }).catch(() => undefined);
      this.log.warn(
        { session: rec.id, node: this.id },
        "session lost with its worker let go: no worker here can start",
      );
    })();
  }

  workers(ready: boolean): void {
    if (!this.joined || this.stopped) return;
    // the heartbeat's `accepting` follows the pool now, not at the next tick (a third of the
    // TTL): no orphan or new session is dealt to a node left without a worker, and one whose
    // worker started takes the orphans at once, not at its next scan (half the TTL; until
    // 2026-12-07 the sessions waiting for a node with a worker running waited for that scan)
    void this.announce()
      .then(() => (ready ? this.scan() : undefined))
      .catch(() => undefined);
  }

  // ------------------------------------------------------------ requests

  /** Whether a session exists in the cluster for `owner` (a stream's upgrade). */
  async exists(id: string, owner: string | null): Promise<boolean> {
    const rec = this.sessions.local(id);
    const auth = this.config.apiKeys.length > 0;
    if (rec) return !auth || rec.owner === owner;
    const entry = () => this.directoryCall(() => this.ports.directory.entry(id));
    let e = await entry();
    while (e === null && (await this.reentering())) e = await entry();
    return e !== null && (!auth || e.owner === owner);
  }

  /**
   * The onRequest hook: serves here what this node holds (or may take over), forwards or
   * redirects the rest to its owner, gathers GET /v1/sessions from every node.
   */
  async route(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const url = req.raw.url ?? req.url;
    const m = /^\/v1\/sessions(?:\/([^/?]+))?(\/[^?]*)?(?:\?.*)?$/.exec(url);
    if (!m || this.stopped) return;
    const forwarded = this.isForwarded(req);
    reply.header(SERVED_BY, this.id);
    const [, id, rest] = m;
    if (id === undefined) {
      // the takeovers under way here first, for a node's own list as for the one it gives
      // another (forwarded): a session taken over is open before its run is resumed
      // (SessionManager.adopt), and was listed `paused` meanwhile, a state no request on it
      // can read (they wait for the takeover: below)
      if (req.method === "GET") await Promise.all(this.adopting.values());
      if (forwarded) return;
      if (req.method === "POST") {
        const target = await this.place();
        // a node gone before its heartbeat expired: the session is made here instead
        if (target && target.id !== this.id) await this.forward(req, reply, target);
        return;
      }
      if (req.method === "GET") {
        const list = await this.listAll(req);
        const all = list ?? this.sessions.list(req.owner);
        // and those no node holds (their nodes' workers lost, none that can start anywhere)
        const listed = new Set(all.map((x) => x.id));
        const orphans = this.stillUnheld(await this.orphaned((sid) => listed.has(sid)));
        const shown = orphans.filter((e) => this.visible(e, req));
        const waiting =
          shown.length === 0 ? [] : await this.waitingViews(shown, !(await this.anyAccepting()));
        if (list || waiting.length > 0)
          await reply.code(200).send({ sessions: [...all, ...waiting] });
      }
      return;
    }
    // a stream is served here from the logs, whoever owns the session
    if (rest === "/stream") return;
    // a takeover under way here first: its session is open before its run is resumed
    // (SessionManager.adopt), and a request served meanwhile read it paused, or had its
    // pause undone by the resume
    const pending = this.adopting.get(id);
    if (pending && (await pending)) return;
    if (this.sessions.local(id) && (await this.stillOwned(id))) return;
    // a holder whose node is gone (its heartbeat expired first): the request waits for its
    // lease to expire (LEASE_TTL_MS at most) and takes the session over
    const until = Date.now() + this.ttl + 500;
    /** the registry entry of a session no node can hold now (none has a worker running) */
    let waiting: SessionEntry | null = null;
    /** holders that refused the connection: gone, their leases about to expire */
    const gone = new Set<string>();
    for (let attempt = 0; Date.now() < until || attempt < 2; attempt++) {
      const holder = await this.directoryCall(() => this.ports.directory.holder(id));
      if (holder && holder.node !== this.id) {
        const node = await this.nodeInfo(holder.node);
        // one hop at most: a request forwarded here on a view that has moved on is
        // refused (to retry) rather than sent on around the nodes
        if (node && forwarded)
          throw new ApiError("cluster_unavailable", `session ${id} moved meanwhile; retry`, {
            session: id,
            retryAfterMs: 100,
          });
        if (node && !gone.has(node.id)) {
          if ((await this.forward(req, reply, node)) === "sent") return;
          gone.add(node.id);
        }
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      if (holder && holder.node === this.id && this.sessions.local(id)) {
        // taken over here meanwhile (a scan, another request): served once its run is
        // resumed, as above
        const adopting = this.adopting.get(id);
        if (!adopting || (await adopting)) return;
        continue;
      }
      const entry = await this.directoryCall(() => this.ports.directory.entry(id));
      if (!entry) {
        if (await this.reentering()) continue;
        return; // unknown: answered 404 here
      }
      // a draining node takes nothing over: a request forwarded to it while it let a session
      // go took the session back, run and all, from the checkpoint it had just handed over;
      // nor does one with no worker running (its starts failing)
      if (this.acceptingNow()) {
        if (await this.takeOver(id)) return;
        continue;
      }
      // another node takes it over (its scan), if one can
      if (!(await this.anyAccepting())) {
        waiting = entry;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!waiting) {
      this.unheld.delete(id);
      throw new ApiError(
        "cluster_unavailable",
        `session ${id} is being taken over by another node; retry`,
        { session: id, retryAfterMs: 1000 },
      );
    }
    // no node can hold it now: it waits in the store, answered as a single server answers
    // a checkpoint no worker could open yet (GET: `restoring`; the rest 503
    // `worker_unavailable`, the session and the cause named)
    if (!this.visible(waiting, req)) throw notFound(id);
    if (req.method === "DELETE" && rest === undefined) {
      await this.removeWaiting(id);
      await reply.code(204).send();
      return;
    }
    const [view] = await this.waitingViews([waiting], true);
    if (view && req.method === "GET" && rest === undefined) {
      await reply.code(200).send(view);
      return;
    }
    // the code a single server answers for a session waiting for a worker (until 2026-12-07
    // `cluster_unavailable`, which says the cluster's directory or a takeover is the cause)
    throw new ApiError(
      "worker_unavailable",
      `session "${id}" is ${view?.message ?? `held by no node: ${NO_WORKER}`}; every node retries starting its workers with back-off, and the first whose worker starts takes it over`,
      { session: id, cause: NO_WORKER, retryAfterMs: 1000 },
    );
  }

  /**
   * Deletes a registered session no node holds: its lease claimed first (no node takes it
   * over meanwhile), its checkpoint durably gone (else 500, kept: retry), then out of the
   * registry with its logs, its streams closed on every node (deleted).
   */
  private async removeWaiting(id: string): Promise<void> {
    const lease = await this.directoryCall(() => this.leases.claim(id, this.id, this.ttl));
    if (!lease)
      throw new ApiError("cluster_unavailable", `session ${id} was taken over meanwhile; retry`, {
        session: id,
        retryAfterMs: 100,
      });
    try {
      await this.ports.snapshots.remove(id);
    } catch (err) {
      await this.leases.release(lease).catch(() => undefined);
      this.log.error({ err, session: id }, "session not deleted: its checkpoint remains");
      throw new ApiError(
        "internal",
        `session "${id}" was not deleted: ${(err as Error).message}; it is kept, retry the delete`,
        { session: id },
      );
    }
    this.unheld.delete(id);
    await this.deleted(id);
    this.log.info({ session: id }, "session waiting for a node deleted");
  }

  /** Whether some node takes sessions now (its heartbeat's `accepting`; this one's acceptingNow). */
  private async anyAccepting(): Promise<boolean> {
    if (this.acceptingNow()) return true;
    const nodes = await this.directoryCall(() => this.ports.directory.nodes());
    return nodes.some((n) => n.accepting && n.id !== this.id);
  }

  /** Whether a session is held here, or being taken over here (its lease claimed). */
  private heldHere(id: string): boolean {
    return this.sessions.local(id) !== undefined || this.adopting.has(id);
  }

  /** Whether the request's API key sees a registered session (without keys: every one). */
  private visible(e: SessionEntry, req: FastifyRequest): boolean {
    return this.config.apiKeys.length === 0 || e.owner === req.owner;
  }

  /**
   * The registered sessions no node holds now, but those `skip` leaves out (held here,
   * listed, being taken over): their lease expired or was released, and no node took them
   * over yet.
   */
  private async orphaned(skip: (id: string) => boolean): Promise<SessionEntry[]> {
    const out: SessionEntry[] = [];
    for (const e of await this.directoryCall(() => this.ports.directory.sessions())) {
      if (skip(e.id)) continue;
      if ((await this.directoryCall(() => this.ports.directory.holder(e.id))) === null) out.push(e);
    }
    return out;
  }

  /**
   * `orphans`, every registered session no node holds now (orphaned): those found so
   * before and not among them are held again, or gone, and wait no more (`unheld`).
   */
  private stillUnheld(orphans: SessionEntry[]): SessionEntry[] {
    const ids = new Set(orphans.map((e) => e.id));
    for (const id of this.unheld.keys()) if (!ids.has(id)) this.unheld.delete(id);
    return orphans;
  }

  /**
   * moreau_sessions{status="restoring"}'s count of the registered sessions no node holds
   * (waiting for a node with a worker running, or between a lease's end and a takeover):
   * reported by one node only, the live node (its heartbeat in the directory) with the
   * lowest id, so that summing every node's scrape counts each once; 0 on the others, and
   * while the directory is unreachable. Every node's view of the live nodes is the same
   * directory read, so they agree but for a node joining or leaving between two scrapes.
   */
  private async unheldReported(): Promise<number> {
    if (!this.joined || this.stopped) return 0;
    try {
      const ids = (await this.ports.directory.nodes()).map((n) => n.id).sort();
      if (ids[0] !== this.id) return 0;
      return (await this.orphaned((id) => this.heldHere(id))).length;
    } catch {
      return 0;
    }
  }

  /**
   * The Session bodies of registered sessions no node holds (`restoring`), from their
   * checkpoints (one without a checkpoint is left out: nothing of it to show); their wait
   * counted from when this node first found them so (`unheld`); `stuck`: no node can take
   * them over now (anyAccepting), else one is about to.
   */
  private async waitingViews(entries: SessionEntry[], stuck: boolean): Promise<SessionOut[]> {
    const out: SessionOut[] = [];
    for (const e of entries) {
      const cp = await this.directoryCall(() => this.ports.snapshots.read(e.id));
      if (!cp) continue;
      const since = this.unheld.get(e.id) ?? Date.now();
      this.unheld.set(e.id, since);
      const view = restoringViewOf(cp, since);
      out.push({
        ...view,
        message: `waiting (found so by node ${this.id} since ${new Date(since).toISOString()}) for a node to take it over from its checkpoint at step ${view.step}: ${stuck ? NO_WORKER : "its lease expired or was released"}`,
      });
    }
    return out;
  }

  /** A JSON request to a session wherever it lives (the stream's commands), as `headers`. */
  async request(
    id: string,
    method: string,
    path: string,
    body: unknown,
    headers: IncomingHttpHeaders,
  ): Promise<{ status: number; body: unknown }> {
    let node: NodeInfo | null;
    do {
      const holder = await this.directoryCall(() => this.ports.directory.holder(id));
      node = holder ? await this.nodeInfo(holder.node) : null;
    } while (node === null && (await this.reentering()));
    if (!node)
      throw new ApiError("cluster_unavailable", `no node holds session ${id} now; retry`, {
        session: id,
      });
    const done = this.forwarding(path.replace(/^\/v1\/sessions\/[^/]+/, "/v1/sessions/:id"));
    try {
      const r = await fetch(`${node.url}${path}`, {
        method,
        headers: {
          "content-type": "application/json",
          ...(headers.authorization ? { authorization: headers.authorization } : {}),
          [FORWARDED]: this.forwardedBy(),
        },
        body: JSON.stringify(body),
      });
      const answer = { status: r.status, body: await r.json() };
      done("answered");
      return answer;
    } catch (err) {
      done("unreachable");
      throw err;
    }
  }

  /**
   * Counts a request forwarded on `route` once it ends (moreau_cluster_forwarded_requests_total)
   * and its round trip when answered (moreau_cluster_forward_duration_seconds).
   */
  private forwarding(route: string): (outcome: "answered" | "unreachable") => void {
    const started = performance.now();
    let counted = false;
    return (outcome) => {
      if (counted) return; // the request and its answer may both fail
      counted = true;
      this.metrics.forwarded.inc({ route, outcome });
      if (outcome === "answered")
        this.metrics.forwardDuration.observe({ route }, (performance.now() - started) / 1000);
    };
  }

  // ------------------------------------------------------------ drain

  /**
   * Graceful drain (SIGTERM, before the local shutdown): no new session comes here, every
   * session held here is paused, checkpointed with the run it was in, let go and announced,
   * so that the other nodes take them over at once and resume their runs.
   */
  async drain(): Promise<void> {
    if (this.stopped) return;
    this.accepting = false;
    await this.announce().catch(() => undefined);
    const recs = this.sessions.locals();
    await Promise.all(
      recs.map(async (rec) => {
        const held = this.held.get(rec.id);
        try {
          await this.sessions.handOver(rec.id);
          this.held.delete(rec.id);
          if (held) await this.leases.release(held.lease);
          await this.ports.bus.control({ type: "released", session: rec.id });
        } catch (err) {
          this.log.warn({ err, session: rec.id }, "session not handed over");
        }
      }),
    );
    this.log.info({ sessions: recs.length }, "sessions handed over to the cluster");
  }

  /** Leaves the cluster (after the drain). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    await this.relay.stop();
    await this.ports.directory.withdraw(this.id).catch(() => undefined);
    this.agent.destroy();
    await this.ports.close();
  }

  // ------------------------------------------------------------ internals

  /** A directory call; Redis unreachable becomes 503 cluster_unavailable. */
  private async directoryCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(
        "cluster_unavailable",
        `the cluster's directory (Redis) is unreachable: ${(err as Error).message}`,
        { retryAfterMs: 1000 },
      );
    }
  }

  private publish(
    rec: SessionRecord,
    cls: string,
    step: number,
    forced: boolean,
    bytes: Uint8Array,
  ) {
    this.ports.bus.publish(rec.id, cls, rec.epoch, { step, forced, bytes }).then(
      (seq) => {
        if (seq !== null) this.metrics.framesPublished.inc();
        else {
          this.metrics.fencedWrites.inc({ kind: "frame" });
          if (this.sessions.local(rec.id) === rec)
            this.refused(rec.id, "its frames were refused by the fencing token");
        }
      },
      () => undefined, // Redis unreachable: remote subscribers miss these frames
    );
  }

  /** The leases' directory (ClusterPorts.leases), the heartbeat's too. */
  private get leases(): SessionDirectory {
    return this.ports.leases ?? this.ports.directory;
  }

  /** Heartbeat and the live nodes (every third of the TTL). */
  private async tick(): Promise<void> {
    if (this.stopped) return;
    await this.announce();
    this.nodes = await this.leases.nodes();
  }

  /**
   * The renewal passes: every third of the TTL (a timer on the monotonic clock; one that
   * comes late, its event loop busy, runs at once: the lease renewed at t is anyone's from
   * t + TTL, so a stall of up to 2/3 TTL after a renewal is covered), each renewing every
   * lease held here or being opened here, all sent at once, whether the previous pass was
   * answered or not (one renewal of a session at a time: `renewing`). With a renewal
   * thread (ClusterPorts.renewer) running, a pass only hands it the leases: it renews them
   * on its own clock, whatever this loop is doing (renewer.ts).
   */
  private renewals(): void {
    const period = Math.max(50, Math.floor(this.ttl / 3));
    const pass = () => {
      if (this.handOver()) return;
      void this.renewAll().catch(() => undefined);
    };
    const t = setInterval(pass, period);
    t.unref();
    this.timers.push(t);
    pass();
  }

  /**
   * Hands the renewal thread every lease held or being opened here (the whole set, at each
   * pass and once a lease is added): false when there is no thread running (the renewals
   * are this loop's).
   */
  private handOver(): boolean {
    const renewer = this.ports.renewer;
    if (!renewer?.alive() || this.stopped) return false;
    const leases: Lease[] = [];
    for (const r of this.sessions.locals()) {
      const held = this.held.get(r.id);
      if (held) leases.push(held.lease);
    }
    for (const c of this.claimed.values()) leases.push(c.lease);
    renewer.hold(leases);
    return true;
  }

  /**
   * A renewal thread's answer (`sent`: performance.now() when it was sent): the lease's
   * trust window or its claim's time moves on; a lease refused is handled as one of this
   * loop's renewals would be (renewed), unless a renewal of the session is under way here.
   * Answers on a lease no longer held (let go, re-claimed under a new epoch) are dropped.
   */
  private renewedElsewhere(lease: Lease, ok: boolean, sent: number): void {
    const same = (l: Lease) => l.node === lease.node && l.epoch === lease.epoch;
    const id = lease.session;
    const claimed = this.claimed.get(id);
    if (claimed && same(claimed.lease)) {
      if (!this.stopped) this.claimRenewed(id, claimed, sent, ok);
      return;
    }
    const held = this.held.get(id);
    if (!held || !same(held.lease) || this.stopped) return;
    if (ok) {
      void this.renewed(id, held, sent, true);
      return;
    }
    if (this.renewing.has(id)) return;
    const p = this.renewed(id, held, sent, false).finally(() => this.renewing.delete(id));
    this.renewing.set(id, p);
    p.catch(() => undefined);
  }

  private async renewAll(): Promise<void> {
    if (this.stopped) return;
    await Promise.all([
      ...this.sessions.locals().map((r) => this.renew(r.id)),
      // the leases of sessions being opened here (created or taken over)
      ...[...this.claimed].map(async ([id, c]) => {
        const sent = performance.now();
        this.claimRenewed(id, c, sent, await this.leases.renew(c.lease, this.ttl));
      }),
    ]);
  }

  /**
   * A renewal of `c`, the lease claimed for a creation or a takeover under way here, sent
   * at `sent` (performance.now()), answered `ok`: its claim's time moves on. Refused — Redis
   * lost it (restarted without its data), or it expired — it is claimed again at once as
   * the holder of its epoch, as a held lease is (renewed): only if no other node claimed it
   * since, at the next epoch, the counter put back above the epoch held. Until 2026-12-07
   * it was left lost until the session was open and its lease held, and meanwhile an older
   * holder claiming it again as the holder of its own, lower, epoch got this one's epoch
   * from the lost counter (both writing under it: the fences compare equality). Refused
   * again (another node claimed it since): dropped, and opened() claims afresh (503, held by
   * another node, while that claim lives).
   */
  private claimRenewed(id: string, c: Claimed, sent: number, ok: boolean): void {
    if (ok) {
      c.sent = Math.max(c.sent, sent);
      return;
    }
    if (this.renewing.has(id) || this.claimed.get(id) !== c) return;
    const p = (async () => {
      const at = performance.now();
      const lease = await this.leases.claim(id, this.id, this.ttl, c.lease.epoch);
      if (this.claimed.get(id) !== c) {
        // the creation or takeover ended meanwhile (failed, deleted)
        if (lease) await this.leases.release(lease);
        return false;
      }
      if (!lease) {
        this.claimed.delete(id);
        this.log.warn({ session: id }, "lease claimed for an opening lost to another node");
        return false;
      }
      this.log.warn({ session: id, epoch: lease.epoch }, "lease re-established");
      this.metrics.leases.inc({ event: "reestablished" });
      this.claimed.set(id, { lease, sent: at, reclaimed: true });
      this.handOver();
      return true;
    })().finally(() => this.renewing.delete(id));
    this.renewing.set(id, p);
    p.catch(() => undefined);
  }

  private async announce(): Promise<void> {
    this.secret ??= await this.leases.secret(randomBytes(24).toString("base64url"));
    // on the leases' connection too: a heartbeat behind the frames expired as a renewal did,
    // and the other nodes took a live node for gone (no forward to it)
    await this.leases.announce(
      {
        id: this.id,
        url: this.url,
        publicUrl: this.publicUrl,
        sessions: this.sessions.size,
        workers: this.config.workers,
        accepting: this.acceptingNow(),
      },
      Math.max(100, Math.floor(this.ttl * HEARTBEAT_FRACTION)),
    );
  }

  /**
   * Renews a session's lease: false when another node holds it now (the session is let
   * go). A lease Redis lost (a restart without its data) is claimed again. Throws while
   * Redis is unreachable.
   */
  private renew(id: string): Promise<boolean> {
    const running = this.renewing.get(id);
    if (running) return running;
    const p = this.renewOnce(id).finally(() => this.renewing.delete(id));
    this.renewing.set(id, p);
    return p;
  }

  private async renewOnce(id: string): Promise<boolean> {
    const held = this.held.get(id);
    if (!this.sessions.local(id) || !held) return false;
    const sent = performance.now();
    return this.renewed(id, held, sent, await this.leases.renew(held.lease, this.ttl));
  }

  /**
   * A renewal of `held`'s lease, sent at `sent` (performance.now()), answered `ok` (this
   * loop's or the renewal thread's): its trust window moves on; refused, the session is
   * re-claimed (Redis lost it) or let go (another node holds it).
   */
  private async renewed(id: string, held: Held, sent: number, ok: boolean): Promise<boolean> {
    const rec = this.sessions.local(id);
    if (!rec) return false;
    if (ok) {
      // a later renewal may have been answered first
      held.trustedUntil = Math.max(held.trustedUntil, sent + this.ttl * TRUSTED_FRACTION);
      this.metrics.leases.inc({ event: "renewed" });
      return true;
    }
    // not ours any more: no request is served on it from here on, whatever comes next
    held.trustedUntil = Number.NEGATIVE_INFINITY;
    // again as the holder of its epoch: only if no other node claimed it since, and at the
    // next epoch — if Redis lost the session's epoch counter (restarted without its data),
    // it is put back past the epoch held, and neither this claim nor a later one hands out
    // an epoch an older holder's writes carry (the fences compare equality; until
    // 2026-12-07 the counter restarted at 1, the first holder's epoch)
    const lease = await this.leases.claim(id, this.id, this.ttl, held.lease.epoch);
    if (!lease) {
      await this.lose(id, "its lease is held by another node");
      return false;
    }
    // Redis lost the session (restarted empty): it is this node's again, under a new epoch
    this.log.warn({ session: id, epoch: lease.epoch }, "lease re-established");
    this.metrics.leases.inc({ event: "reestablished" });
    rec.epoch = lease.epoch;
    this.held.set(id, { lease, trustedUntil: sent + this.ttl * TRUSTED_FRACTION });
    this.handOver();
    // the registry, scene and checkpoint on the command connection, not waited for: the
    // renewals go on meanwhile (that connection may be slow, behind the frames)
    void (async () => {
      await this.ports.directory.admit(
        { id, owner: rec.owner },
        { maxSessions: Number.MAX_SAFE_INTEGER, maxPerKey: Number.MAX_SAFE_INTEGER },
      );
      await this.ports.directory.putScene(id, this.sessions.sceneFrame(rec, "json", false));
      await this.sessions.checkpointNow(id);
    })().catch((err) =>
      this.log.warn({ err, session: id }, "session not re-entered in the registry"),
    );
    return true;
  }

  /**
   * Whether a session the directory does not know (no entry, no holder) may only not be
   * entered again yet — then waits 100 ms to look again: Redis came back less than
   * LEASE_TTL_MS ago (restarted, perhaps without its data), and each node enters its
   * sessions' leases and registry again at its next renewal (every third of the TTL). The
   * route, a stream's opening (exists) and its forwarded commands (request) wait so: until
   * 2026-12-07 the latter two answered a session held by another node unknown (404 to the
   * upgrade) or held by none (503) just after such a restart.
   */
  private async reentering(): Promise<boolean> {
    const back = this.ports.reconnectedAt?.() ?? Number.NEGATIVE_INFINITY;
    if (performance.now() - back >= this.ttl) return false;
    await new Promise((r) => setTimeout(r, 100));
    return true;
  }

  /**
   * A write of a session held here refused by its fencing token: another node claimed the
   * session (it is let go, as a refused renewal's), or Redis lost its epoch with its data
   * (restarted without it) and no claim came since (it is claimed again, as a refused
   * renewal's: `renewed`). Until 2026-12-07 the session was let go either way, and a
   * checkpoint or a frame written between such a restart and the holder's next renewal
   * lost the session: nobody held it, nor entered it in the registry again.
   */
  private refused(id: string, why: string): void {
    const held = this.held.get(id);
    if (!held) {
      void this.lose(id, why);
      return;
    }
    if (this.renewing.has(id)) return;
    const p = this.renewed(id, held, performance.now(), false).finally(() =>
      this.renewing.delete(id),
    );
    this.renewing.set(id, p);
    p.catch(() => undefined);
  }

  /** Whether this node may serve a request on a session it holds (see the file's head). */
  private async stillOwned(id: string): Promise<boolean> {
    const held = this.held.get(id);
    if (!held) return false;
    if (performance.now() < held.trustedUntil) return true;
    try {
      return await this.renew(id);
    } catch {
      // Redis unreachable: nobody can take the session meanwhile; keep serving it
      return true;
    }
  }

  /** Lets a session go that another node owns now. */
  private async lose(id: string, why: string): Promise<void> {
    if (!this.held.has(id) && !this.sessions.local(id)) return;
    this.log.warn({ session: id, node: this.id }, `session let go: ${why}`);
    this.metrics.leases.inc({ event: "lost" });
    this.held.delete(id);
    this.wantedBy.delete(id);
    await this.sessions.evict(id);
  }

  /** Whether new sessions and takeovers may come here: not draining, a worker running. */
  private acceptingNow(): boolean {
    // no worker running (their starts failing): no new session nor takeover dealt here
    return this.accepting && this.sessions.pool.alive > 0;
  }

  /** The live node to place a new session on: the least loaded accepting one. */
  private async place(): Promise<NodeInfo | null> {
    // every live node kept (moreau_cluster_nodes, the forwards' addresses): the list of the
    // accepting ones kept in its place under-counted the cluster until the next heartbeat
    this.nodes = await this.directoryCall(() => this.ports.directory.nodes());
    // this node as it is now, not as its heartbeat (up to a third of the TTL old) said: one
    // whose workers had all stopped since placed a session on itself, answered 503
    const nodes = this.nodes.filter((n) => (n.id === this.id ? this.acceptingNow() : n.accepting));
    let best: NodeInfo | null = null;
    for (const n of nodes) {
      const load = (n.id === this.id ? this.sessions.size : n.sessions) / Math.max(1, n.workers);
      const bestLoad = best
        ? (best.id === this.id ? this.sessions.size : best.sessions) / Math.max(1, best.workers)
        : Number.POSITIVE_INFINITY;
      if (load < bestLoad || (load === bestLoad && n.id === this.id)) best = n;
    }
    return best;
  }

  private async nodeInfo(id: string): Promise<NodeInfo | null> {
    let n = this.nodes.find((x) => x.id === id);
    if (!n) {
      this.nodes = await this.directoryCall(() => this.ports.directory.nodes());
      n = this.nodes.find((x) => x.id === id);
    }
    return n ?? null;
  }

  /**
   * Forwards a request to `node` (or redirects it there with CLUSTER_REDIRECT): "sent". Or
   * "refused": the node refused the connection — it is gone (killed, before its heartbeat
   * expired) and nothing of the request was read or sent, so the caller may wait for the
   * takeover and serve it here.
   */
  private async forward(
    req: FastifyRequest,
    reply: FastifyReply,
    node: NodeInfo,
  ): Promise<"sent" | "refused"> {
    const path = req.raw.url ?? req.url;
    const route = req.routeOptions.url ?? "unknown";
    if (this.config.clusterRedirect) {
      this.metrics.forwarded.inc({ route, outcome: "redirected" });
      await reply.code(307).header("location", `${node.publicUrl}${path}`).send();
      return "sent";
    }
    const done = this.forwarding(route);
    const headers: IncomingHttpHeaders = { ...req.headers };
    delete headers.connection;
    delete headers["keep-alive"];
    headers[FORWARDED] = this.forwardedBy();
    const target = new URL(path, node.url);
    const res = reply.raw;
    let answered: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => {
      answered = resolve;
    });
    const up = httpRequest(target, { method: req.method, headers, agent: this.agent }, (answer) => {
      const out = { ...answer.headers };
      delete out.connection;
      delete out["keep-alive"];
      delete out["transfer-encoding"];
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res);
      answer.once("end", () => {
        done("answered");
        answered();
      });
      answer.once("error", () => {
        done("unreachable");
        res.destroy();
        answered();
      });
    });
    // a node that neither answers nor fails (frozen): no answer after the longest a
    // request may take there
    up.setTimeout(this.config.requestTimeoutMs + 5000, () =>
      up.destroy(new Error("no answer in time")),
    );
    // connected before the body is read: a node that is gone refuses the connection, and
    // the request, untouched, waits for the takeover instead of failing
    const failed = await new Promise<Error | null>((resolve) => {
      const early = (err: Error) => resolve(err);
      up.once("error", early);
      up.once("socket", (socket) => {
        const go = () => {
          up.off("error", early);
          resolve(null);
        };
        if (socket.connecting) socket.once("connect", go);
        else go();
      });
    });
    if ((failed as NodeJS.ErrnoException | null)?.code === "ECONNREFUSED") {
      done("unreachable");
      return "refused";
    }
    reply.hijack();
    const unanswered = (err: Error) => {
      done("unreachable");
      if (!res.headersSent) {
        const e = new ApiError(
          "cluster_unavailable",
          `node ${node.id}, which holds the session, did not answer (${err.message}); retry`,
          { node: node.id, retryAfterMs: 1000 },
        );
        res.writeHead(e.statusCode, { "content-type": "application/json", "retry-after": "1" });
        res.end(JSON.stringify(e.toJSON()));
      } else res.destroy();
      answered();
    };
    if (failed) unanswered(failed);
    else {
      up.once("error", unanswered);
      req.raw.pipe(up);
    }
    await ended;
    return "sent";
  }

  /** Every node's sessions (for GET /v1/sessions); null: this node's alone will do. */
  private async listAll(req: FastifyRequest): Promise<SessionOut[] | null> {
    const nodes = await this.directoryCall(() => this.ports.directory.nodes());
    const others = nodes.filter((n) => n.id !== this.id);
    if (others.length === 0) return null;
    const local = this.sessions.list(req.owner);
    // a node that cannot answer (gone, before its sessions are taken over) is left out of
    // the list; a failed connection is tried once more (a kept-alive socket closed meanwhile)
    const listOf = async (n: NodeInfo, retry: boolean): Promise<SessionOut[]> => {
      try {
        const r = await fetch(`${n.url}/v1/sessions`, {
          headers: {
            [FORWARDED]: this.forwardedBy(),
            ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          },
        });
        if (r.ok) return ((await r.json()) as { sessions: SessionOut[] }).sessions;
        this.log.warn({ node: n.id, status: r.status }, "a node's sessions could not be listed");
        return [];
      } catch (err) {
        if (retry) return listOf(n, false);
        this.log.warn({ err, node: n.id }, "a node's sessions could not be listed");
        return [];
      }
    };
    const lists = await Promise.all(others.map((n) => listOf(n, true)));
    const seen = new Set(local.map((s) => s.id));
    const all = [...local];
    for (const l of lists)
      for (const s of l)
        if (!seen.has(s.id)) {
          seen.add(s.id);
          all.push(s);
        }
    return all;
  }

  /**
   * Claims a registered session nobody holds, restores its last checkpoint here and
   * resumes its run; false when another node claimed it first (or it cannot be restored).
   */
  private takeOver(id: string): Promise<boolean> {
    const running = this.adopting.get(id);
    if (running) return running;
    const p = (async () => {
      const sent = performance.now();
      const lease = await this.leases.claim(id, this.id, this.ttl);
      if (!lease) return false;
      // renewed from its claim on, the checkpoint's read too (until 2026-12-07 from after it)
      this.claimed.set(id, { lease, sent });
      this.handOver();
      /** the lease claimed now (claimRenewed may have claimed it again meanwhile) */
      const current = () => this.claimed.get(id)?.lease ?? lease;
      try {
        const cp = await this.ports.snapshots.read(id);
        if (!cp) {
          this.log.error({ session: id }, "no checkpoint of the session to take it over from");
          const now = current();
          this.claimed.delete(id);
          await this.leases.release(now);
          return false;
        }
        await this.sessions.adopt(cp);
        this.metrics.takeovers.inc({ cause: this.released.delete(id) ? "handover" : "expired" });
        this.log.warn(
          {
            session: id,
            epoch: this.held.get(id)?.lease.epoch ?? lease.epoch,
            step: cp.snapshot.session.step,
            run: cp.run ?? null,
          },
          "session taken over from its last checkpoint",
        );
        await this.refreshWanted(id, true);
        return true;
      } catch (err) {
        const now = this.held.get(id)?.lease ?? current();
        this.claimed.delete(id);
        this.log.error({ err, session: id }, "session could not be taken over");
        await this.leases.release(now).catch(() => undefined);
        return false;
      }
    })().finally(() => this.adopting.delete(id));
    this.adopting.set(id, p);
    return p;
  }

  /** Takes over the orphans dealt to this node (see the file's head). */
  private async scan(): Promise<void> {
    if (this.stopped || !this.acceptingNow()) return;
    // a released session is taken over at once, by some node: forget the old ones
    for (const [id, at] of this.released)
      if (at < Date.now() - 2 * this.ttl) this.released.delete(id);
    const orphans = this.stillUnheld(await this.orphaned((id) => this.heldHere(id))).map(
      (e) => e.id,
    );
    const seen = new Map<string, number>();
    for (const id of orphans) seen.set(id, (this.orphans.get(id) ?? 0) + 1);
    this.orphans.clear();
    for (const [id, n] of seen) this.orphans.set(id, n);
    if (orphans.length === 0) return;
    const nodes = (await this.ports.directory.nodes()).filter((n) => n.accepting);
    const load = new Map(nodes.map((n) => [n.id, n.sessions / Math.max(1, n.workers)]));
    const mine: string[] = [];
    for (const id of orphans.sort()) {
      let best: string | null = null;
      for (const [n, l] of load) if (best === null || l < (load.get(best) ?? 0)) best = n;
      if (best !== null) {
        const node = nodes.find((n) => n.id === best);
        load.set(best, (load.get(best) ?? 0) + 1 / Math.max(1, node?.workers ?? 1));
      }
      if (best === this.id || best === null || (seen.get(id) ?? 0) > 2) mine.push(id);
    }
    await Promise.all(mine.map((id) => this.takeOver(id)));
  }

  private onControl(m: ControlMessage): void {
    if (this.stopped) return;
    if (m.type === "want" && this.sessions.local(m.session))
      void this.refreshWanted(m.session, false).catch(() => undefined);
    else if (m.type === "released") {
      this.released.set(m.session, Date.now());
      void this.scan().catch(() => undefined);
    }
    // its streams on every node close as on a single server's delete
    else if (m.type === "deleted") this.streams.closeSession(m.session, 1000, "session deleted");
  }

  private async refreshAllWanted(): Promise<void> {
    for (const r of this.sessions.locals()) await this.refreshWanted(r.id, false);
  }

  /**
   * Reads the classes wanted of a session held here, has its worker encode them, and
   * publishes the current state as the first frame of each new class (of every class
   * after a takeover: `all`).
   */
  private async refreshWanted(id: string, all: boolean): Promise<void> {
    const subs = await this.ports.bus.wanted(id);
    const rec = this.sessions.local(id);
    if (!rec) return;
    const before = new Set((this.wantedBy.get(id) ?? []).map((s) => classId(s)));
    this.wantedBy.set(id, subs);
    // a stream on any node counts as activity (SESSION_IDLE_TTL), as one here does
    if (subs.length > 0) rec.lastActivity = Date.now();
    this.sessions.refreshSubscriptions(id);
    for (const s of subs) {
      if (!all && before.has(classId(s))) continue;
      const f = await this.sessions.currentFrame(id, s).catch(() => null);
      if (f && this.sessions.local(id) === rec)
        this.publish(rec, classId(s), f.step, true, f.bytes);
    }
  }
}
