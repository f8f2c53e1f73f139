/**
 * The live set of one thread's V8 isolate: the heap in use (bytes, V8 heap plus memory it
 * tracks outside, such as ArrayBuffers) measured right after the thread's latest major
 * (mark-compact) collection. The heap in use at an arbitrary moment rises and falls with the
 * collector's schedule (a sawtooth of tens of MiB); right after a full collection it is
 * what the thread actually holds, so a leak shows as a steady climb of this figure.
 *
 * Read from a PerformanceObserver on 'gc' entries (delivered shortly after the collection,
 * so a few kB allocated in between are counted). NaN until the first major collection.
 */
import { constants, PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";

export interface LiveHeap {
  /** bytes in use after the latest major collection, NaN before the first */
  readonly bytes: number;
  /** major collections seen since the tracker started */
  readonly collections: number;
  stop(): void;
}

/** Starts tracking this thread's live heap. */
export function trackLiveHeap(): LiveHeap {
  const live = { bytes: Number.NaN, collections: 0, stop: () => observer.disconnect() };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      if (kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      const heap = getHeapStatistics();
      live.bytes = heap.used_heap_size + heap.external_memory;
      live.collections++;
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return live;
}
