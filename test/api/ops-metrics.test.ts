/**
 * Metrics as Prometheus intends (issue 26, item 12): nothing computed "since the previous
 * scrape" (two scrapers used to corrupt each other: each scrape reset the other's window
 * of moreau_steps_per_second and moreau_worker_utilization); worker busy time is a counter
 * that never goes down, not even across a worker restart; process metrics are there with
 * the moreau_ prefix.
 */
import request from "supertest";
import { describe, expect, it } from "vitest";
import { sample } from "../support/metrics";
import { springParticle } from "../support/models";
import { useServer } from "../support/server";
import { waitFor } from "../support/wait";
import { createSession, step } from "./helpers";

const server = useServer({ workers: 2, testHooks: true });

const scrape = async () => (await request(server.app.server).get("/metrics").expect(200)).text;

const busy = (text: string) =>
  [0, 1].map((w) => sample(text, `moreau_worker_busy_seconds_total{worker="${w}"}`));

describe("metrics", () => {
  it("has no series that depends on when it was last scraped", async () => {
    const text = await scrape();
    expect(text).not.toMatch(/previous scrape/i);
    expect(text).not.toMatch(/^moreau_steps_per_second/m);
    expect(text).not.toMatch(/^moreau_worker_utilization/m);
    expect(text).toMatch(/^# TYPE moreau_worker_busy_seconds_total counter$/m);
    expect(text).toMatch(/^# TYPE moreau_steps_total counter$/m);
  });

  it("two scrapers read the same counters: busy seconds only grow, across a worker restart too", async () => {
    const id = await createSession(server.app, springParticle({ dt: 1e-5, name: "busy" }));
    const worker = server.app.moreau.sessions.workerOf(id);
    await step(server.app, id, 20_000);
    // scraper A, then B right after it, then A again: neither resets anything for the other
    const a1 = busy(await scrape());
    const b1 = busy(await scrape());
    await step(server.app, id, 20_000);
    const a2 = busy(await scrape());
    for (let w = 0; w < 2; w++) {
      expect(b1[w]).toBeGreaterThanOrEqual(a1[w]);
      expect(a2[w]).toBeGreaterThanOrEqual(b1[w]);
    }
    expect(a2[worker]).toBeGreaterThan(a1[worker]);
    expect(a1[worker]).toBeGreaterThan(0);

    // the worker dies and is replaced: its index's counter does not go back to 0
    await server.app.moreau.sessions.pool.killForTest(worker);
    await waitFor(async () => (await request(server.app.server).get("/ready")).status === 200);
    await server.app.moreau.sessions.rebuilt();
    const after = busy(await scrape());
    expect(after[worker]).toBeGreaterThanOrEqual(a2[worker]);
    expect(sample(await scrape(), "moreau_worker_restarts_total")).toBe(1);
  });

  it("has the process metrics, with the moreau_ prefix", async () => {
    const text = await scrape();
    for (const name of [
      "moreau_process_cpu_user_seconds_total",
      "moreau_process_cpu_system_seconds_total",
      "moreau_process_resident_memory_bytes",
      "moreau_process_open_fds",
      "moreau_process_start_time_seconds",
      "moreau_nodejs_heap_size_used_bytes",
      "moreau_nodejs_eventloop_lag_p99_seconds",
    ])
      expect(sample(text, name), name).toBeGreaterThan(0);
    // registered (its samples appear once a collection has happened since the registry was
    // made, which a short-lived test process cannot count on)
    expect(text).toMatch(/^# TYPE moreau_nodejs_gc_duration_seconds histogram$/m);
    expect(text).toMatch(/^moreau_checkpoint_memory_bytes \d+$/m);
  });
});
