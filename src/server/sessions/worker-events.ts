/**
 * Events the workers send unasked (protocol.ts WorkerEvent): a session's encoded frames go
 * to its stream subscribers (and the step they reached to its record), a progress event's
 * session snapshot refreshes the record (a run's steps, its end), a run's checkpoint at a
 * multiple of CHECKPOINT_EVERY_STEPS goes to be written (checkpoints.ts), and a worker's
 * stats feed the metrics (steps, step durations, its heap). Events of a session from a
 * worker that is no longer its own (it was lost and rebuilt elsewhere) are dropped. In a
 * cluster (REDIS_URL) frames go to the cluster's logs (cluster/relay.ts), which feed the
 * streams of every node, this one's included.
 */
import type { ClusterHooks } from "../cluster/hooks";
import type { ServerMetrics, WorkerMemory } from "../metrics";
import type { WorkerEvent } from "../protocol";
import type { StreamHub } from "../stream";
import type { WorkerPool } from "../worker-pool";
import type { SessionRecord, SessionTable, WorkerCheckpoint } from "./records";
import type { WorkerCalls } from "./worker-calls";

export class WorkerEvents {
  /** memory of each worker, from its stats messages (bytes) */
  readonly memory: WorkerMemory[] = [];

  constructor(
    private readonly metrics: ServerMetrics,
    private readonly pool: WorkerPool,
    private readonly streams: StreamHub,
    private readonly table: SessionTable,
    private readonly calls: WorkerCalls,
    private readonly cluster: () => ClusterHooks | null,
    /** a run's checkpoint at a multiple of CHECKPOINT_EVERY_STEPS, to write (checkpoints.ts) */
    private readonly checkpointTaken: (rec: SessionRecord, cp: WorkerCheckpoint) => void,
  ) {}

  handle(worker: number, ev: WorkerEvent): void {
    switch (ev.kind) {
      case "frame": {
        try {
          const rec = this.table.find(ev.sessionId);
          if (rec && rec.worker === worker && !rec.lost) {
            if (ev.step > rec.step || ev.forced) rec.step = ev.step;
            const cluster = this.cluster();
            if (cluster) cluster.frames(rec, ev.step, ev.forced, ev.frames);
            else this.streams.dispatch(ev.sessionId, ev.step, ev.forced, ev.frames);
          }
        } finally {
          // the frame bytes a worker has in flight are bounded (worker-pool.ts): these are done
          this.pool.framesDone(worker, ev.bytes);
        }
        return;
      }
      case "progress": {
        const rec = this.table.find(ev.sessionId);
        if (rec && rec.worker === worker) this.calls.apply(rec, ev.session);
        return;
      }
      case "checkpoint": {
        const rec = this.table.find(ev.sessionId);
        if (rec && rec.worker === worker && !rec.lost) {
          this.calls.apply(rec, ev.session);
          this.checkpointTaken(rec, { engine: ev.engine, session: ev.session, log: ev.log });
        }
        return;
      }
      case "stats":
        this.metrics.recordWorkerStats(ev.steps, ev.buckets, ev.sum, ev.short);
        this.memory[worker] = {
          heapUsed: ev.heapUsed,
          external: ev.external,
          liveHeap: ev.liveHeap,
        };
        return;
      case "ready":
        return;
    }
  }
}
