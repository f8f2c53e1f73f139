/**
 * The live heap (src/server/live-heap.ts): the heap in use right after a major collection,
 * so it follows what a thread holds, not the collector's schedule. The collections are run
 * here with V8's gc() (exposed to a fresh context, since vitest does not pass --expose-gc).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { type LiveHeap, trackLiveHeap } from "../../src/server/live-heap";
import { noSessionsByStatus, ServerMetrics } from "../../src/server/metrics";
import { waitFor } from "../support/wait";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * A full collection, then the wait until `live`'s gc observer has reported it (the
 * entries arrive on a later turn, later still on a loaded machine).
 */
async function collect(live: LiveHeap): Promise<void> {
  const before = live.collections;
  gc();
  await waitFor(() => live.collections > before, 10_000);
}

describe("live heap", () => {
  it("reads the memory a thread holds after each major collection", async () => {
    const live = trackLiveHeap();
    try {
      expect(live.bytes).toBeNaN();
      // two collections before the base: ArrayBuffers that earlier files of this process
      // left dead are freed by a task after the collection that finds them (see below), so
      // one collection can read tens of MiB that the next frees
      await collect(live);
      await collect(live);
      const base = live.bytes;
      expect(live.collections).toBeGreaterThanOrEqual(1);
      expect(base).toBeGreaterThan(0);
      // 64 MiB held in Float64Arrays (external memory) and 8 MiB of heap objects; the other
      // test files of this process may hold or free up to ~12 MiB meanwhile
      let held: unknown[] | null = Array.from({ length: 64 }, () => new Float64Array(2 ** 17));
      held.push(Array.from({ length: 2 ** 18 }, (_, i) => ({ i, x: i * 0.5 })));
      await collect(live);
      const holding = live.bytes;
      expect(holding - base).toBeGreaterThan(48 * 2 ** 20);
      held = null;
      // ArrayBuffers are freed by a task after the collection that found them dead: the
      // next collection reads them gone
      await collect(live);
      await collect(live);
      expect(held).toBeNull();
      expect(holding - live.bytes).toBeGreaterThan(48 * 2 ** 20);
      expect(live.collections).toBeGreaterThanOrEqual(5);
    } finally {
      live.stop();
    }
  });

  it("is exported per worker once reported, and for the event loop's thread", async () => {
    const metrics = new ServerMetrics({
      sessionsByStatus: noSessionsByStatus,
      wsClients: () => 0,
      workersAlive: () => 2,
    });
    metrics.attach({
      workerBusySeconds: () => [0, 0],
      workerMemory: () => [
        { heapUsed: 3e7, external: 1e6, liveHeap: 2.5e7 },
        { heapUsed: 2e7, external: 1e6, liveHeap: Number.NaN },
      ],
      workerSessionMemory: () => [0, 0],
      workerSessionBudget: () => 0,
      checkpointMemoryBytes: () => 0,
    });
    // the metrics' own tracker reports a collection run here
    const live = trackLiveHeap();
    await collect(live);
    live.stop();
    const text = await waitFor(async () => {
      const t = await metrics.registry.metrics();
      return /^moreau_heap_live_bytes [1-9]/m.test(t) && t;
    }, 10_000);
    metrics.close();
    expect(text).toMatch(/^moreau_worker_heap_live_bytes\{worker="0"\} 25000000$/m);
    // no major collection reported yet: no sample rather than a made-up 0
    expect(text).not.toMatch(/^moreau_worker_heap_live_bytes\{worker="1"\}/m);
    const main = Number(/^moreau_heap_live_bytes (\S+)$/m.exec(text)?.[1]);
    expect(main).toBeGreaterThan(1e6);
  });
});
