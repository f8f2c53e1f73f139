/**
 * Prometheus metrics (prom-client), one registry per app so several apps can live in one
 * process (tests). Exposed at GET /metrics.
 *
 *   moreau_sessions{status}                 gauge     sessions by status
 *   moreau_steps_total                      counter   simulation steps taken by all workers
 *   moreau_steps_per_second                 gauge     steps/s over the last scrape interval
 *   moreau_step_duration_seconds            histogram wall time of single steps (counted in
 *                                                     the workers, merged here)
 *   moreau_ws_clients                       gauge     open stream subscribers
 *   moreau_stream_frames_sent_total         counter   state frames written to subscribers
 *   moreau_stream_dropped_frames_total      counter   state frames subscribers missed
 *   moreau_worker_utilization{worker}       gauge     fraction of time the worker's loop was
 *                                                     busy since the previous scrape
 *   moreau_workers_alive                    gauge
 *   moreau_worker_restarts_total            counter   crashed or stuck workers replaced
 *   moreau_http_request_duration_seconds{method,route,status_code}  histogram
 *   plus prom-client's default process metrics (CPU, memory, event-loop lag).
 */
import {
  Counter,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type Metric,
  Registry,
} from "prom-client";
import type { SessionStatusName } from "../../schemas/api";
import { STEP_BUCKETS } from "./protocol";

const STATUSES: SessionStatusName[] = ["ready", "running", "paused", "diverged", "error"];

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

export interface MetricsSources {
  sessionsByStatus(): Record<SessionStatusName, number>;
  wsClients(): number;
  workerUtilization(): number[];
  workersAlive(): number;
}

export class ServerMetrics {
  readonly registry = new Registry();
  readonly stepsTotal: Counter;
  readonly stepDuration: MergedHistogram;
  readonly framesSent: Counter;
  readonly droppedFrames: Counter;
  readonly workerRestarts: Counter;
  readonly checkpoints: Counter;
  readonly checkpointFailures: Counter;
  readonly httpDuration: Histogram<"method" | "route" | "status_code">;
  private stepsAtLastScrape = 0;
  private lastScrape = performance.now();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "moreau_" });
    new Gauge({
      name: "moreau_sessions",
      help: "sessions by status",
      labelNames: ["status"],
      registers,
      collect() {
        const by = sources.sessionsByStatus();
        for (const s of STATUSES) this.set({ status: s }, by[s] ?? 0);
      },
    });
    this.stepsTotal = new Counter({
      name: "moreau_steps_total",
      help: "simulation steps taken",
      registers,
    });
    const self = this;
    new Gauge({
      name: "moreau_steps_per_second",
      help: "steps per second since the previous scrape",
      registers,
      async collect() {
        const total = (await self.stepsTotal.get()).values[0]?.value ?? 0;
        const now = performance.now();
        const dt = (now - self.lastScrape) / 1000;
        this.set(dt > 0 ? (total - self.stepsAtLastScrape) / dt : 0);
        self.stepsAtLastScrape = total;
        self.lastScrape = now;
      },
    });
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
    new Gauge({
      name: "moreau_worker_utilization",
      help: "fraction of time each solver worker was busy since the previous scrape",
      labelNames: ["worker"],
      registers,
      collect() {
        sources.workerUtilization().forEach((u, i) => {
          this.set({ worker: String(i) }, u);
        });
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
    this.httpDuration = new Histogram({
      name: "moreau_http_request_duration_seconds",
      help: "HTTP request duration",
      labelNames: ["method", "route", "status_code"],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }

  recordWorkerStats(steps: number, buckets: readonly number[], sum: number): void {
    this.stepsTotal.inc(steps);
    this.stepDuration.merge(buckets, sum);
  }
}
