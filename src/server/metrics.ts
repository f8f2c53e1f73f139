/**
 * Prometheus metrics (prom-client), one registry per app so several apps can live in one
 * process (tests). Exposed at GET /metrics. Nothing depends on when or how often it is
 * scraped (several scrapers see the same series): rates are the scraper's business, e.g.
 * steps/s = rate(moreau_steps_total[1m]), worker utilization =
 * rate(moreau_worker_busy_seconds_total[1m]).
 *
 *   moreau_sessions{status}                 gauge     sessions by status (a cluster node: those
 *                                                     it holds, and on the live node with the
 *                                                     lowest id those no node holds, restoring)
 *   moreau_steps_total                      counter   simulation steps taken by all workers
 *   moreau_step_duration_seconds            histogram wall time of single steps (counted in
 *                                                     the workers, merged here)
 *   moreau_ws_clients                       gauge     open stream subscribers
 *   moreau_stream_frames_sent_total         counter   state frames written to subscribers
 *   moreau_stream_dropped_frames_total      counter   state frames subscribers missed
 *   moreau_worker_busy_seconds_total{worker} counter  time the worker's event loop was busy
 *                                                     (over the successive workers at that
 *                                                     index)
 *   moreau_workers_alive                    gauge
 *   moreau_worker_heap_used_bytes{worker}   gauge     V8 heap in use of each worker (last reported)
 *   moreau_worker_external_memory_bytes{worker} gauge  memory outside it (ArrayBuffers)
 *   moreau_worker_heap_live_bytes{worker}   gauge     both, right after the worker's latest
 *                                                     major collection (its live set: a leak
 *                                                     climbs here without the collector's
 *                                                     sawtooth; absent before the first)
 *   moreau_heap_live_bytes                  gauge     the same for the event loop's thread (0
 *                                                     before its first major collection)
 *   moreau_worker_session_memory_bytes{worker} gauge  the estimated memory of the sessions each
 *                                                     worker holds, their recordings' inputs
 *                                                     included (sessions/memory.ts), what
 *                                                     WORKER_SESSION_MEMORY_MB bounds
 *   moreau_worker_session_memory_budget_bytes gauge   that bound, per worker
 *   moreau_worker_restarts_total            counter   crashed or stuck workers replaced
 *   moreau_session_rebuilds_total{from}     counter   sessions lost with their worker and
 *                                                     rebuilt from their checkpoint (from:
 *                                                     memory | disk), from the request that
 *                                                     created them or their model before a
 *                                                     first checkpoint (creation | model), or
 *                                                     not (none; failed)
 *   moreau_checkpoints_total                counter   checkpoints written to DATA_DIR
 *   moreau_checkpoint_failures_total        counter   checkpoints that could not be written
 *   moreau_checkpoint_memory_bytes          gauge     checkpoints held in memory
 *   moreau_http_request_duration_seconds{method,route,status_code}  histogram
 * and on a cluster node (REDIS_URL; ClusterMetrics, registered by the node):
 *   moreau_cluster_redis_up                 gauge     1 while the command and checkpoint connections are ready, else 0
 *   moreau_cluster_nodes                    gauge     live nodes in the last heartbeat read
 *   moreau_cluster_forwarded_requests_total{route,outcome} counter  requests on a session of
 *                                                     another node: answered (relayed from
 *                                                     the owner, whatever its status),
 *                                                     redirected (307), unreachable (503)
 *   moreau_cluster_forward_duration_seconds{route} histogram  a forwarded request's round trip
 *                                                     (sent to the owner → its answer relayed)
 *   moreau_cluster_takeovers_total{cause}   counter   sessions this node claimed and restored
 *                                                     from their checkpoint: expired (their
 *                                                     node's lease ran out) or handover (drain)
 *   moreau_cluster_leases_total{event}      counter   lease renewals: renewed, reestablished
 *                                                     (Redis had lost it), lost (another node
 *                                                     holds it: the session let go)
 *   moreau_cluster_fenced_writes_total{kind} counter  checkpoints and frames Redis refused
 *                                                     (a stale epoch: another node owns it)
 *   moreau_cluster_frames_published_total   counter   frames this node appended to the logs
 *   moreau_cluster_frames_relayed_total     counter   frames read from the logs and sent to
 *                                                     this node's subscribers
 *   plus prom-client's default process metrics with the moreau_ prefix (CPU, resident
 *   memory, heap, event-loop lag, open file descriptors, GC).
 */
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type Metric,
  Registry,
} from "prom-client";
import { SessionListedStatus, type SessionOut } from "../../schemas/api";
import { trackLiveHeap } from "./live-heap";
import { SHORTFALLS, STEP_BUCKETS } from "./protocol";

/**
 * moreau_sessions' statuses: those GET /v1/sessions lists, `restoring` (a checkpoint no
 * worker could open yet) with the simulations' own
 */
const STATUSES = SessionListedStatus.options;

/** No session in any status (what a server without sessions yet counts). */
export function noSessionsByStatus(): Record<SessionOut["status"], number> {
  return Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<SessionOut["status"], number>;
}

/**
 * A histogram whose observations are counted elsewhere (in the worker threads, one per
 * step, far too many to send one by one) and merged here as bucket counts. It speaks
 * prom-client's metric protocol (name, help, type, get) so a Registry exposes it like its
 * own histograms.
 */
class MergedHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly counts: number[];
  private total = 0;
  private sum = 0;
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    this.counts = new Array(bounds.length + 1).fill(0);
    registry.registerMetric(this as unknown as Metric);
  }

  /** Adds per-bucket counts (last entry: above the largest bound) and their sum (s). */
  merge(buckets: readonly number[], sum: number): void {
    for (let i = 0; i < this.counts.length; i++) {
      const c = buckets[i] ?? 0;
      this.counts[i] += c;
      this.total += c;
    }
    this.sum += sum;
  }

  get count(): number {
    return this.total;
  }

  async get() {
    let acc = 0;
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] =
      this.bounds.map((le, i) => {
        acc += this.counts[i];
        return { labels: { le }, value: acc, metricName: `${this.name}_bucket` };
      });
    values.push(
      { labels: { le: "+Inf" }, value: this.total, metricName: `${this.name}_bucket` },
      { labels: {}, value: this.sum, metricName: `${this.name}_sum` },
      { labels: {}, value: this.total, metricName: `${this.name}_count` },
    );
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    };
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.sum = 0;
  }
}

/**
 * A counter whose value is read from elsewhere when scraped (monotonic by construction of
 * its source), one series per label value index.
 */
class CollectedCounter {
  readonly type = "counter";
  readonly aggregator = "sum";
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly label: string,
    private readonly read: () => number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Metric);
  }

  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: this.read().map((value, i) => ({ labels: { [this.label]: String(i) }, value })),
    };
  }

  reset(): void {}
}

/** What a cluster node reports through its gauges. */
export interface ClusterSources {
  redisUp(): boolean;
  nodes(): number;
  /**
   * The registered sessions no node holds (waiting for a node to take them over), when this
   * node is the one of the cluster that counts them in moreau_sessions{status="restoring"}:
   * else 0, so that a sum over every node's scrape counts each once (node.ts unheldReported)
   */
  unheldSessions(): Promise<number>;
}

/** The cluster's series (see the head of this file), on the server's registry. */
export class ClusterMetrics {
  readonly forwarded: Counter<"route" | "outcome">;
  readonly forwardDuration: Histogram<"route">;
  readonly takeovers: Counter<"cause">;
  readonly leases: Counter<"event">;
  readonly fencedWrites: Counter<"kind">;
  readonly framesPublished: Counter;
  readonly framesRelayed: Counter;

  constructor(registry: Registry, sources: ClusterSources) {
    const registers = [registry];
    new Gauge({
      name: "moreau_cluster_redis_up",
      help: "1 while this node's Redis connection is ready, 0 while Redis is unreachable",
      registers,
      collect() {
        this.set(sources.redisUp() ? 1 : 0);
      },
    });
    new Gauge({
      name: "moreau_cluster_nodes",
      help: "live nodes of the cluster in this node's last heartbeat read",
      registers,
      collect() {
        this.set(sources.nodes());
      },
    });
    this.forwarded = new Counter({
      name: "moreau_cluster_forwarded_requests_total",
      help: "requests on a session of another node, by route and outcome (answered, redirected, unreachable)",
      labelNames: ["route", "outcome"],
      registers,
    });
    this.forwardDuration = new Histogram({
      name: "moreau_cluster_forward_duration_seconds",
      help: "round trip of a forwarded request: sent to the owner until its answer is relayed",
      labelNames: ["route"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers,
    });
    this.takeovers = new Counter({
      name: "moreau_cluster_takeovers_total",
      help: "sessions this node claimed and restored from their last checkpoint (expired: their node's lease ran out; handover: a drain)",
      labelNames: ["cause"],
      registers,
    });
    this.leases = new Counter({
      name: "moreau_cluster_leases_total",
      help: "session lease renewals by outcome (renewed; reestablished: Redis had lost it; lost: another node holds it)",
      labelNames: ["event"],
      registers,
    });
    this.fencedWrites = new Counter({
      name: "moreau_cluster_fenced_writes_total",
      help: "checkpoints and frames of this node refused by the fencing token (another node owns the session)",
      labelNames: ["kind"],
      registers,
    });
    this.framesPublished = new Counter({
      name: "moreau_cluster_frames_published_total",
      help: "stream frames this node appended to the cluster's logs (as the sessions' owner)",
      registers,
    });
    this.framesRelayed = new Counter({
      name: "moreau_cluster_frames_relayed_total",
      help: "stream frames read from the cluster's logs and sent to this node's subscribers",
      registers,
    });
  }
}

/** A worker's memory as last reported (bytes); see src/server/live-heap.ts for liveHeap. */
export interface WorkerMemory {
  /** V8 heap in use */
  heapUsed: number;
  /** memory outside the V8 heap (ArrayBuffers) */
  external: number;
  /** heap and external memory right after the latest major collection; NaN before the first */
  liveHeap: number;
}

export interface MetricsSources {
  sessionsByStatus(): Record<SessionOut["status"], number>;
  wsClients(): number;
  workersAlive(): number;
}

/** Sources the session manager attaches once it exists. */
export interface ManagerSources {
  /** busy seconds of each worker index (monotonic) */
  workerBusySeconds(): number[];
  /** memory of each worker index, as last reported */
  workerMemory(): readonly WorkerMemory[];
  /** the estimated bytes (heap, ArrayBuffers) of the sessions admitted on each worker (memory.ts) */
  workerSessionMemory(): readonly number[];
  /** WORKER_SESSION_MEMORY_MB in bytes */
  workerSessionBudget(): number;
  checkpointMemoryBytes(): number;
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly stepsTotal: Counter;
  readonly stepsShort: Counter<"tolerance">;
  readonly stepDuration: MergedHistogram;
  readonly framesSent: Counter;
  readonly droppedFrames: Counter;
  readonly workerRestarts: Counter;
  readonly checkpoints: Counter;
  readonly checkpointFailures: Counter;
  readonly sessionRebuilds: Counter<"from">;
  readonly httpDuration: Histogram<"method" | "route" | "status_code">;
  private manager: ManagerSources | null = null;
  /** a cluster node's sources (cluster()), which add the sessions no node holds */
  private clustered: ClusterSources | null = null;
  private readonly liveHeap = trackLiveHeap();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    const self = this;
    collectDefaultMetrics({ register: this.registry, prefix: "moreau_" });
    new Gauge({
      name: "moreau_heap_live_bytes",
      help: "heap and external memory of the event loop's thread right after its latest major collection",
      registers,
      collect() {
        this.reset();
        if (!Number.isNaN(self.liveHeap.bytes)) this.set(self.liveHeap.bytes);
      },
    });
    new Gauge({
      name: "moreau_sessions",
      help: "sessions by status",
      labelNames: ["status"],
      registers,
      async collect() {
        const by = sources.sessionsByStatus();
        // in a cluster, with the sessions no node holds: `restoring` as a single server's
        // waiting ones, on one node only (until 2026-12-07 on none)
        const unheld = (await self.clustered?.unheldSessions()) ?? 0;
        for (const s of STATUSES)
          this.set({ status: s }, (by[s] ?? 0) + (s === "restoring" ? unheld : 0));
      },
    });
    this.stepsTotal = new Counter({
      name: "moreau_steps_total",
      help: "simulation steps taken",
      registers,
    });
    this.stepsShort = new Counter({
      name: "moreau_steps_short_total",
      help: "simulation steps that ended short of a stated tolerance, by which (newton, contact, projection, step, joint: the step's solver figures newtonConverged, contactConverged, projectionConverged, stepToleranceMet, jointToleranceMet false; README, Solver settings)",
      labelNames: ["tolerance"],
      registers,
    });
    for (const [tolerance] of SHORTFALLS) this.stepsShort.inc({ tolerance }, 0);
    this.stepDuration = new MergedHistogram(
      "moreau_step_duration_seconds",
      "wall time of one simulation step",
      STEP_BUCKETS,
      this.registry,
    );
    new Gauge({
      name: "moreau_ws_clients",
      help: "open WebSocket stream subscribers",
      registers,
      collect() {
        this.set(sources.wsClients());
      },
    });
    this.framesSent = new Counter({
      name: "moreau_stream_frames_sent_total",
      help: "state frames written to stream subscribers",
      registers,
    });
    this.droppedFrames = new Counter({
      name: "moreau_stream_dropped_frames_total",
      help: "state frames stream subscribers missed (slow reader or saturated server)",
      registers,
    });
    new CollectedCounter(
      "moreau_worker_busy_seconds_total",
      "time each solver worker's event loop was busy (its rate is the worker's utilization)",
      "worker",
      () => self.manager?.workerBusySeconds() ?? [],
      this.registry,
    );
    for (const [key, name, help] of [
      [
        "heapUsed",
        "moreau_worker_heap_used_bytes",
        "V8 heap in use of each solver worker (WORKER_MEMORY_MB bounds it), as last reported",
      ],
      [
        "external",
        "moreau_worker_external_memory_bytes",
        "memory each solver worker holds outside its V8 heap (ArrayBuffers), as last reported",
      ],
      [
        "liveHeap",
        "moreau_worker_heap_live_bytes",
        "heap and external memory of each solver worker right after its latest major collection",
      ],
    ] as const)
      new Gauge({
        name,
        help,
        labelNames: ["worker"],
        registers,
        collect() {
          this.reset();
          (self.manager?.workerMemory() ?? []).forEach((m, w) => {
            if (!Number.isNaN(m[key])) this.set({ worker: String(w) }, m[key]);
          });
        },
      });
    new Gauge({
      name: "moreau_worker_session_memory_bytes",
      help: "estimated memory (heap and ArrayBuffers) of the sessions admitted on each solver worker, their recordings' inputs included (sessions/memory.ts), what WORKER_SESSION_MEMORY_MB bounds; compare with moreau_worker_heap_live_bytes",
      labelNames: ["worker"],
      registers,
      collect() {
        this.reset();
        (self.manager?.workerSessionMemory() ?? []).forEach((bytes, w) => {
          this.set({ worker: String(w) }, bytes);
        });
      },
    });
    new Gauge({
      name: "moreau_worker_session_memory_budget_bytes",
      help: "WORKER_SESSION_MEMORY_MB in bytes: the estimated memory (heap and ArrayBuffers) of sessions one solver worker may hold (a new session past it on every worker, or an input its recording would keep past it: 507)",
      registers,
      collect() {
        this.reset();
        if (self.manager) this.set(self.manager.workerSessionBudget());
      },
    });
    new Gauge({
      name: "moreau_workers_alive",
      help: "solver workers alive",
      registers,
      collect() {
        this.set(sources.workersAlive());
      },
    });
    this.workerRestarts = new Counter({
      name: "moreau_worker_restarts_total",
      help: "solver workers replaced after a crash or a stuck request",
      registers,
    });
    this.checkpoints = new Counter({
      name: "moreau_checkpoints_total",
      help: "session checkpoints written to DATA_DIR",
      registers,
    });
    this.checkpointFailures = new Counter({
      name: "moreau_checkpoint_failures_total",
      help: "session checkpoints that could not be written to DATA_DIR",
      registers,
    });
    new Gauge({
      name: "moreau_checkpoint_memory_bytes",
      help: "bytes of session checkpoints held in memory (CHECKPOINT_MEMORY_BYTES at most)",
      registers,
      collect() {
        this.set(self.manager?.checkpointMemoryBytes() ?? 0);
      },
    });
    this.sessionRebuilds = new Counter({
      name: "moreau_session_rebuilds_total",
      help: "sessions lost with their worker, by where they were rebuilt from (memory, disk; creation, model: before a first checkpoint; none; failed)",
      labelNames: ["from"],
      registers,
    });
    this.httpDuration = new Histogram({
      name: "moreau_http_request_duration_seconds",
      help: "HTTP request duration",
      labelNames: ["method", "route", "status_code"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }

  /** Stops observing the collector (the registry stays readable). */
  close(): void {
    this.liveHeap.stop();
  }

  /** Registers the cluster's series (a node of a cluster, REDIS_URL). */
  cluster(sources: ClusterSources): ClusterMetrics {
    this.clustered = sources;
    return new ClusterMetrics(this.registry, sources);
  }

  /** The session manager's sources (it is made after the metrics). */
  attach(sources: ManagerSources): void {
    this.manager = sources;
  }

  recordWorkerStats(
    steps: number,
    buckets: readonly number[],
    sum: number,
    short: readonly number[],
  ): void {
    this.stepsTotal.inc(steps);
    this.stepDuration.merge(buckets, sum);
    SHORTFALLS.forEach(([tolerance], k) => {
      if (short[k] > 0) this.stepsShort.inc({ tolerance }, short[k]);
    });
  }
}
