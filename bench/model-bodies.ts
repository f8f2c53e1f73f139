/**
 * Large model bodies (issue 26, item 5), bounded, on 127.0.0.1: a 100×100 cloth (10 000
 * particles, 39 402 springs; 5 MB of JSON, the size of a model at MAX_BODIES) is created
 * `creates` times in turn (each deleted after) while a client asks GET /health back to
 * back. The create bodies are parsed and validated in a worker, so /health's latency shows
 * what the event loop still pays for a large body (reading it, handing it over).
 */
import { clothModel } from "./scenes";
import { call, quantile, startServer } from "./server-load";

export async function runModelBodiesBench(creates = 5): Promise<void> {
  const { child, port } = await startServer(2, 8);
  try {
    const model = clothModel({ n: 100, pin: "row" });
    const bytes = JSON.stringify({ model }).length;
    let polling = true;
    const health: number[] = [];
    const poller = (async () => {
      while (polling) {
        const t0 = performance.now();
        await call(port, "GET", "/health");
        health.push(performance.now() - t0);
      }
    })();
    const createMs: number[] = [];
    for (let i = 0; i < creates; i++) {
      const t0 = performance.now();
      const r = await call(port, "POST", "/v1/sessions", { model });
      createMs.push(performance.now() - t0);
      if (r.status !== 201) throw new Error(`create answered ${r.status}: ${r.text.slice(0, 200)}`);
      await call(port, "DELETE", `/v1/sessions/${JSON.parse(r.text).id}`);
    }
    polling = false;
    await poller;
    health.sort((a, b) => a - b);
    createMs.sort((a, b) => a - b);
    console.log("\n## Large model bodies: GET /health while 5 MB models are created (issue 26)");
    console.table([
      {
        "model bytes": bytes,
        creates,
        "create ms p50": createMs[Math.floor(creates / 2)].toFixed(0),
        "/health requests": health.length,
        "/health ms p50": quantile(health, 0.5).toFixed(2),
        "/health ms p99": quantile(health, 0.99).toFixed(2),
        "/health ms max": health[health.length - 1].toFixed(1),
      },
    ]);
  } finally {
    child.kill("SIGTERM");
  }
}
